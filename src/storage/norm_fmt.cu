// Training-mode batch normalisation on every storage (format.h): fp32 or bf16 elements, NCHW or
// NHWC. cuDNN's legacy batch-norm routines run NHWC tensors at a fraction of memory speed
// (ResNet-50 b64 bf16 NHWC: 75 ms of forward pass where the layers' own work is 8 ms), so the
// storages run these: two memory passes forward (statistics, then normalise with the ReLU fused)
// and two backward (the two channel sums, then the input gradient, with the ReLU's mask fused).
//
// A pass that reduces writes fp32 partial sums per (row chunk, channel) into `part`; one thread
// per channel adds a channel's partials in double, in a fixed order (deterministic), and turns
// them into per-channel coefficients that the elementwise pass reads. Statistics are sums of
// x - s and (x - s)^2 with s the channel's first value, so that a large mean does not cancel
// the variance away in fp32.
//
// Layouts, for an (n, c, h, w) tensor: NHWC is (rows = n*h*w, c) with channels contiguous: a
// block covers a tile of channel vectors (V = 16 bytes of channels when c allows) and a chunk of
// rows. NCHW is (n, c, h*w): a block covers one channel and a chunk of its n*h*w elements
// (V = 16 bytes of pixels when h*w allows).
#include "cuda/common.cuh"
#include "cuda/fast_div.h"
#include "storage/elem.cuh"
#include "storage/format.h"

#include <stdint.h>

#define BN_THREADS 256
#define BN_MIN_BLOCKS 3 // resident blocks an SM must fit (registers): 768 threads, each with its loads in flight
#define BN_CHUNKS_MAX CB_FMT_BN_CHUNKS // row chunks per channel: the partial sums' first dimension

enum { BN_STATS, BN_GRAD, BN_GRAD_RELU }; // what a reduction sums

// rows (NHWC) or vectors (NCHW) a thread loads before it uses any: the passes are memory-bound,
// and a pass with one input stream (the statistics, the forward output) needs several loads in
// flight per thread to reach the memory's bandwidth; the gradient passes load two or three streams
// (one row each is enough, and more would spill their registers)
template <int MODE> struct bn_depth { static constexpr int U = MODE == BN_STATS ? 4 : 1; };

// the two sums of one element: statistics (x - s, (x - s)^2), or the gradient's (dy', dy' (x - mean))
template <int MODE> __device__ static __forceinline__ void bn_acc(float x, float y, float dy, float s, float &a1, float &a2) {
    if (MODE == BN_STATS) {
        float d = x - s;
        a1 += d;
        a2 += d * d;
    } else {
        float g = MODE == BN_GRAD_RELU && !(y > 0.f) ? 0.f : dy;
        a1 += g;
        a2 += g * (x - s);
    }
}

// NHWC: gridDim.y tiles of tx channel vectors, gridDim.x chunks of rows. s: the channel's shift
// (statistics: x's first row; gradient: the mean). part (chunks, c, 2).
template <class T, int V, int MODE>
__global__ void __launch_bounds__(BN_THREADS, BN_MIN_BLOCKS) bn_reduce_nhwc(int64_t rows, int c, int tx, int64_t rows_per_chunk, const T *__restrict__ x,
                                                             const T *__restrict__ y, const T *__restrict__ dy, const float *__restrict__ mean,
                                                             float *__restrict__ part) {
    __shared__ float sh[2][BN_THREADS * V];
    int ty = BN_THREADS / tx, t = threadIdx.x, cv = t % tx, ry = t / tx;
    int c0 = (blockIdx.y * tx + cv) * V;
    bool live = ry < ty && c0 < c;
    float a1[V], a2[V], s[V];
#pragma unroll
    for (int v = 0; v < V; v++) {
        a1[v] = a2[v] = 0.f;
        s[v] = live ? (MODE == BN_STATS ? ld(x, c0 + v) : mean[c0 + v]) : 0.f;
    }
    int64_t r0 = blockIdx.x * rows_per_chunk, r1 = min(rows, r0 + rows_per_chunk);
    constexpr int U = bn_depth<MODE>::U;
    if (live)
        for (int64_t rb = r0 + ry; rb < r1; rb += (int64_t)U * ty) {
            vec_t<T, V> xv[U], yv[U], gv[U];
#pragma unroll
            for (int u = 0; u < U; u++) { // every load first, then the sums
                int64_t r = rb + (int64_t)u * ty;
                if (r >= r1) break;
                size_t o = (size_t)r * c + c0;
                xv[u] = *reinterpret_cast<const vec_t<T, V> *>(x + o);
                if (MODE != BN_STATS) gv[u] = *reinterpret_cast<const vec_t<T, V> *>(dy + o);
                if (MODE == BN_GRAD_RELU) yv[u] = *reinterpret_cast<const vec_t<T, V> *>(y + o);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (rb + (int64_t)u * ty >= r1) break;
#pragma unroll
                for (int v = 0; v < V; v++)
                    bn_acc<MODE>(ld(xv[u].v, v), MODE == BN_GRAD_RELU ? ld(yv[u].v, v) : 0.f, MODE != BN_STATS ? ld(gv[u].v, v) : 0.f, s[v],
                                 a1[v], a2[v]);
            }
        }
#pragma unroll
    for (int v = 0; v < V; v++) sh[0][t * V + v] = a1[v], sh[1][t * V + v] = a2[v];
    __syncthreads();
    if (ry != 0 || !live) return;
    for (int v = 0; v < V; v++) {
        float b1 = 0.f, b2 = 0.f;
        for (int j = 0; j < ty; j++) b1 += sh[0][(j * tx + cv) * V + v], b2 += sh[1][(j * tx + cv) * V + v];
        float *p = part + ((size_t)blockIdx.x * c + c0 + v) * 2;
        p[0] = b1, p[1] = b2;
    }
}

// NCHW: blockIdx.y is the channel, gridDim.x chunks of its n*hw elements (in vectors of V pixels)
template <class T, int V, int MODE>
__global__ void __launch_bounds__(BN_THREADS, BN_MIN_BLOCKS) bn_reduce_nchw(int c, cb_fast_div by_hwv, uint32_t nvec, uint32_t vec_per_chunk, const T *__restrict__ x,
                                                             const T *__restrict__ y, const T *__restrict__ dy, const float *__restrict__ mean,
                                                             float *__restrict__ part) {
    int ch = blockIdx.y;
    uint32_t hwv = by_hwv.d;
    float s = MODE == BN_STATS ? ld(x, (size_t)ch * hwv * V) : mean[ch], a1 = 0.f, a2 = 0.f;
    uint32_t j0 = blockIdx.x * vec_per_chunk, j1 = min(nvec, j0 + vec_per_chunk);
    constexpr int U = bn_depth<MODE>::U;
    for (uint32_t jb = j0 + threadIdx.x; jb < j1; jb += U * BN_THREADS) {
        vec_t<T, V> xv[U], yv[U], gv[U];
#pragma unroll
        for (int u = 0; u < U; u++) { // every load first, then the sums
            uint32_t j = jb + u * BN_THREADS;
            if (j >= j1) break;
            uint32_t n = cb_fast_div_q(by_hwv, j), sv = j - n * hwv;
            size_t o = (((size_t)n * c + ch) * hwv + sv) * V;
            xv[u] = *reinterpret_cast<const vec_t<T, V> *>(x + o);
            if (MODE != BN_STATS) gv[u] = *reinterpret_cast<const vec_t<T, V> *>(dy + o);
            if (MODE == BN_GRAD_RELU) yv[u] = *reinterpret_cast<const vec_t<T, V> *>(y + o);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (jb + u * BN_THREADS >= j1) break;
#pragma unroll
            for (int v = 0; v < V; v++)
                bn_acc<MODE>(ld(xv[u].v, v), MODE == BN_GRAD_RELU ? ld(yv[u].v, v) : 0.f, MODE != BN_STATS ? ld(gv[u].v, v) : 0.f, s, a1, a2);
        }
    }
    a1 = cb_block_sum(a1);
    a2 = cb_block_sum(a2);
    if (threadIdx.x == 0) {
        float *p = part + ((size_t)blockIdx.x * c + ch) * 2;
        p[0] = a1, p[1] = a2;
    }
}

// one warp per channel: the lanes add the chunks' partials in double (lane l: chunks l, l + 32,
// ...), a fixed shuffle tree adds the lanes, lane 0 writes the coefficients
// coef (4, c), four planes: statistics -> (scale, shift) with y = x * scale + shift; gradient ->
// (a, b, k, mean) with dx = a (dy' - b - (x - mean) k)
template <class T, int MODE>
__global__ void bn_finish(int c, int chunks, double m, bool nhwc, int64_t hw, const T *__restrict__ x, const float *__restrict__ part,
                          const float *__restrict__ gamma, const float *__restrict__ beta, float eps, float momentum, float *mean,
                          float *invstd, float *rmean, float *rvar, float *dgamma, float *dbeta, float *__restrict__ coef) {
    int ch = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (ch >= c) return;
    double s1 = 0, s2 = 0;
    for (int g = lane; g < chunks; g += 32) s1 += part[((size_t)g * c + ch) * 2], s2 += part[((size_t)g * c + ch) * 2 + 1];
    for (int o = 16; o > 0; o >>= 1) s1 += __shfl_xor_sync(0xffffffffu, s1, o), s2 += __shfl_xor_sync(0xffffffffu, s2, o);
    if (lane) return;
    float *k0 = coef + ch, *k1 = k0 + c, *k2 = k1 + c, *k3 = k2 + c;
    if (MODE == BN_STATS) {
        double s = ld(x, nhwc ? (size_t)ch : (size_t)ch * hw), d = s1 / m, var = s2 / m - d * d;
        if (var < 0) var = 0;
        double mu = s + d, is = 1.0 / sqrt(var + (double)eps);
        mean[ch] = (float)mu;
        invstd[ch] = (float)is;
        if (rmean && rvar) {
            double unb = m > 1 ? var * m / (m - 1) : var;
            rmean[ch] = (float)((1.0 - momentum) * rmean[ch] + momentum * mu);
            rvar[ch] = (float)((1.0 - momentum) * rvar[ch] + momentum * unb);
        }
        double sc = gamma[ch] * is;
        *k0 = (float)sc, *k1 = (float)(beta[ch] - mu * sc);
    } else {
        double is = invstd[ch];
        if (dbeta) dbeta[ch] = (float)s1;
        if (dgamma) dgamma[ch] = (float)(s2 * is);
        *k0 = (float)(gamma[ch] * is), *k1 = (float)(s1 / m), *k2 = (float)(is * is * s2 / m), *k3 = mean[ch];
    }
}

// inference: (scale, shift) from the running statistics
__global__ void bn_finish_infer(int c, const float *gamma, const float *beta, const float *rmean, const float *rvar, float eps, float *coef) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= c) return;
    float sc = gamma[ch] * rsqrtf(rvar[ch] + eps);
    coef[ch] = sc, coef[c + ch] = beta[ch] - rmean[ch] * sc;
}

// the elementwise pass, tiled as the reductions so that a thread keeps its channels'
// coefficients in registers: forward y = x scale + shift (ReLU), backward dx = a (dy' - b - (x -
// mean) k). One output element of V from the loaded vectors:
template <int MODE, bool RELU>
__device__ static __forceinline__ float bn_out(float x, float y, float dy, float k0, float k1, float k2, float k3) {
    if (MODE == BN_STATS) {
        float f = x * k0 + k1;
        return RELU ? fmaxf(f, 0.f) : f;
    }
    float g = MODE == BN_GRAD_RELU && !(y > 0.f) ? 0.f : dy;
    return k0 * (g - k1 - (x - k3) * k2);
}

// the loaded vectors of one output vector
template <class T, int V, int MODE> struct bn_in {
    vec_t<T, V> x, y, dy;
    __device__ __forceinline__ void load(size_t o, const T *__restrict__ xp, const T *__restrict__ yp, const T *dyp) {
        x = *reinterpret_cast<const vec_t<T, V> *>(xp + o);
        if (MODE != BN_STATS) dy = *reinterpret_cast<const vec_t<T, V> *>(dyp + o);
        if (MODE == BN_GRAD_RELU) y = *reinterpret_cast<const vec_t<T, V> *>(yp + o);
    }
};

// CH_LAST: the V elements are V channels (coefficients k[v]), else V pixels of one channel (k[0])
template <class T, int V, bool CH_LAST, int MODE, bool RELU>
__device__ static __forceinline__ void bn_out_vec(size_t o, const float *k0, const float *k1, const float *k2, const float *k3,
                                                  const bn_in<T, V, MODE> &in, T *out) {
    vec_t<T, V> r;
#pragma unroll
    for (int v = 0; v < V; v++)
        st(r.v, v, bn_out<MODE, RELU>(ld(in.x.v, v), MODE == BN_GRAD_RELU ? ld(in.y.v, v) : 0.f, MODE != BN_STATS ? ld(in.dy.v, v) : 0.f,
                                      k0[CH_LAST ? v : 0], k1[CH_LAST ? v : 0], k2[CH_LAST ? v : 0], k3[CH_LAST ? v : 0]));
    *reinterpret_cast<vec_t<T, V> *>(out + o) = r;
}

// NHWC: as bn_reduce_nhwc, each thread one channel vector over its rows
template <class T, int V, int MODE, bool RELU>
__global__ void __launch_bounds__(BN_THREADS, BN_MIN_BLOCKS) bn_apply_nhwc(int64_t rows, int c, int tx, int64_t rows_per_chunk, const float *__restrict__ coef,
                                                            const T *__restrict__ x, const T *__restrict__ y, const T *dy, T *out) {
    int ty = BN_THREADS / tx, t = threadIdx.x, cv = t % tx, ry = t / tx;
    int c0 = (blockIdx.y * tx + cv) * V;
    if (ry >= ty || c0 >= c) return;
    float k0[V], k1[V], k2[V], k3[V];
#pragma unroll
    for (int v = 0; v < V; v++) {
        k0[v] = coef[c0 + v], k1[v] = coef[c + c0 + v];
        k2[v] = MODE != BN_STATS ? coef[2 * c + c0 + v] : 0.f, k3[v] = MODE != BN_STATS ? coef[3 * c + c0 + v] : 0.f;
    }
    int64_t r0 = blockIdx.x * rows_per_chunk, r1 = min(rows, r0 + rows_per_chunk);
    constexpr int U = bn_depth<MODE>::U;
    for (int64_t rb = r0 + ry; rb < r1; rb += (int64_t)U * ty) {
        bn_in<T, V, MODE> in[U];
#pragma unroll
        for (int u = 0; u < U; u++) { // every load first, then the outputs
            if (rb + (int64_t)u * ty >= r1) break;
            in[u].load((size_t)(rb + (int64_t)u * ty) * c + c0, x, y, dy);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (rb + (int64_t)u * ty >= r1) break;
            bn_out_vec<T, V, true, MODE, RELU>((size_t)(rb + (int64_t)u * ty) * c + c0, k0, k1, k2, k3, in[u], out);
        }
    }
}

// NCHW: as bn_reduce_nchw, a block one channel (blockIdx.y) over a chunk of its vectors
template <class T, int V, int MODE, bool RELU>
__global__ void __launch_bounds__(BN_THREADS, BN_MIN_BLOCKS) bn_apply_nchw(int c, cb_fast_div by_hwv, uint32_t nvec, uint32_t vec_per_chunk, const float *__restrict__ coef,
                                                            const T *__restrict__ x, const T *__restrict__ y, const T *dy, T *out) {
    int ch = blockIdx.y;
    uint32_t hwv = by_hwv.d;
    float k0 = coef[ch], k1 = coef[c + ch], k2 = MODE != BN_STATS ? coef[2 * c + ch] : 0.f, k3 = MODE != BN_STATS ? coef[3 * c + ch] : 0.f;
    uint32_t j0 = blockIdx.x * vec_per_chunk, j1 = min(nvec, j0 + vec_per_chunk);
    constexpr int U = bn_depth<MODE>::U;
    for (uint32_t jb = j0 + threadIdx.x; jb < j1; jb += U * BN_THREADS) {
        bn_in<T, V, MODE> in[U];
        size_t o[U];
#pragma unroll
        for (int u = 0; u < U; u++) { // every load first, then the outputs
            uint32_t j = jb + u * BN_THREADS;
            if (j >= j1) break;
            uint32_t n = cb_fast_div_q(by_hwv, j), sv = j - n * hwv;
            o[u] = (((size_t)n * c + ch) * hwv + sv) * V;
            in[u].load(o[u], x, y, dy);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (jb + u * BN_THREADS >= j1) break;
            bn_out_vec<T, V, false, MODE, RELU>(o[u], &k0, &k1, &k2, &k3, in[u], out);
        }
    }
}

// the whole of one direction for element type T and vector width V
template <class T, int V> struct bn_run {
    const cb_bn_params *p;
    bool nhwc;
    int chunks;
    int64_t hw, rows; // rows: NHWC n*h*w

    template <int MODE> void reduce(const T *x, const T *y, const T *dy, const float *mean, float *part) {
        if (nhwc) {
            int cv = p->c / V, tx = cv < BN_THREADS ? cv : BN_THREADS;
            int64_t per = (rows + chunks - 1) / chunks;
            dim3 grid((unsigned)chunks, (unsigned)((cv + tx - 1) / tx));
            bn_reduce_nhwc<T, V, MODE><<<grid, BN_THREADS>>>(rows, p->c, tx, per, x, y, dy, mean, part);
        } else {
            uint32_t hwv = (uint32_t)(hw / V), nvec = (uint32_t)p->n * hwv, per = (nvec + chunks - 1) / chunks;
            dim3 grid((unsigned)chunks, (unsigned)p->c);
            bn_reduce_nchw<T, V, MODE><<<grid, BN_THREADS>>>(p->c, cb_fast_div_make(hwv), nvec, per, x, y, dy, mean, part);
        }
    }
    template <int MODE, bool RELU> void apply(const float *coef, const T *x, const T *y, const T *dy, T *out) {
        if (nhwc) {
            int cv = p->c / V, tx = cv < BN_THREADS ? cv : BN_THREADS;
            int64_t per = (rows + chunks - 1) / chunks;
            dim3 grid((unsigned)chunks, (unsigned)((cv + tx - 1) / tx));
            bn_apply_nhwc<T, V, MODE, RELU><<<grid, BN_THREADS>>>(rows, p->c, tx, per, coef, x, y, dy, out);
        } else {
            uint32_t hwv = (uint32_t)(hw / V), nvec = (uint32_t)p->n * hwv, per = (nvec + chunks - 1) / chunks;
            dim3 grid((unsigned)chunks, (unsigned)p->c);
            bn_apply_nchw<T, V, MODE, RELU><<<grid, BN_THREADS>>>(p->c, cb_fast_div_make(hwv), nvec, per, coef, x, y, dy, out);
        }
    }
};

// chunks per channel: enough blocks to fill the GPU a few times over, each with at least a few
// hundred elements per thread row
static int bn_chunks(const cb_bn_params *p, bool nhwc, int v) {
    int64_t m = (int64_t)p->n * p->h * p->w, tiles = nhwc ? ((p->c / v) + BN_THREADS - 1) / BN_THREADS : p->c;
    static int sms;
    if (!sms) {
        int dev = 0;
        cudaGetDevice(&dev);
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1) sms = 132;
    }
    int64_t want = (8 * (int64_t)sms + tiles - 1) / tiles, most = m / (nhwc ? 64 : 1024);
    if (want > most) want = most;
    if (want > BN_CHUNKS_MAX) want = BN_CHUNKS_MAX;
    return want < 1 ? 1 : (int)want;
}

static int bn_width(const cb_bn_params *p, bool nhwc, size_t es, const void *a, const void *b, const void *c) {
    int v = (int)(16 / es);
    int64_t along = nhwc ? p->c : (int64_t)p->h * p->w;
    bool aligned = (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0 && (uintptr_t)c % 16 == 0;
    return aligned && along % v == 0 ? v : 1;
}

// the coefficients (4, c) after the partial sums, 16-byte aligned
static unsigned warps_grid(int c) { return (unsigned)(c + 7) / 8; } // bn_finish: a warp per channel, 8 a block

#define BN_COEF(part, chunks, c) ((part) + ((size_t)(chunks) * (c) * 2 + 3) / 4 * 4)

template <class T, int V>
static void bn_train_tv(const cb_bn_params *p, bool nhwc, const T *x, const float *gamma, const float *beta, T *y, float *mean, float *invstd,
                        float *rmean, float *rvar, float momentum, bool relu, float *part) {
    bn_run<T, V> r = {p, nhwc, bn_chunks(p, nhwc, V), (int64_t)p->h * p->w, (int64_t)p->n * p->h * p->w};
    float *coef = BN_COEF(part, r.chunks, p->c);
    r.template reduce<BN_STATS>(x, nullptr, nullptr, nullptr, part);
    bn_finish<T, BN_STATS><<<warps_grid(p[0].c), 256>>>(p->c, r.chunks, (double)r.rows, nhwc, r.hw, x, part, gamma, beta, p->eps, momentum, mean,
                                                        invstd, rmean, rvar, nullptr, nullptr, coef);
    if (relu) r.template apply<BN_STATS, true>(coef, x, nullptr, nullptr, y);
    else r.template apply<BN_STATS, false>(coef, x, nullptr, nullptr, y);
}

template <class T, int V>
static void bn_infer_tv(const cb_bn_params *p, bool nhwc, const T *x, const float *gamma, const float *beta, const float *rmean,
                        const float *rvar, T *y, bool relu, float *part) {
    bn_run<T, V> r = {p, nhwc, bn_chunks(p, nhwc, V), (int64_t)p->h * p->w, (int64_t)p->n * p->h * p->w};
    bn_finish_infer<<<warps_grid(p[0].c), 256>>>(p->c, gamma, beta, rmean, rvar, p->eps, part);
    if (relu) r.template apply<BN_STATS, true>(part, x, nullptr, nullptr, y);
    else r.template apply<BN_STATS, false>(part, x, nullptr, nullptr, y);
}

template <class T, int V>
static void bn_backward_tv(const cb_bn_params *p, bool nhwc, const T *x, const T *y, const float *gamma, const float *mean, const float *invstd,
                           const T *dy, T *dx, float *dgamma, float *dbeta, float *part) {
    bn_run<T, V> r = {p, nhwc, bn_chunks(p, nhwc, V), (int64_t)p->h * p->w, (int64_t)p->n * p->h * p->w};
    float *coef = BN_COEF(part, r.chunks, p->c);
    if (y) r.template reduce<BN_GRAD_RELU>(x, y, dy, mean, part);
    else r.template reduce<BN_GRAD>(x, nullptr, dy, mean, part);
    bn_finish<T, BN_GRAD><<<warps_grid(p[0].c), 256>>>(p->c, r.chunks, (double)r.rows, nhwc, r.hw, x, part, gamma, nullptr, p->eps, 0.f,
                                                       (float *)mean, (float *)invstd, nullptr, nullptr, dgamma, dbeta, coef);
    if (!dx) return;
    if (y) r.template apply<BN_GRAD_RELU, false>(coef, x, y, dy, dx);
    else r.template apply<BN_GRAD, false>(coef, x, nullptr, dy, dx);
}

extern "C" size_t cb_fmt_bn_scratch(int64_t c) { return (size_t)(CB_FMT_BN_CHUNKS * 2 + 4) * (size_t)c + 4; }

extern "C" int cb_fmt_bn_supported(const cb_bn_params *p) {
    size_t t = (size_t)p->n * p->c * p->h * p->w;
    return p->n > 0 && p->c > 0 && p->h > 0 && p->w > 0 && t < 0x7fffffffu && p->c < 65536;
}

// dispatch on the element type and the vector width; `b`, `c` are other buffers the kernels
// access as vectors (their alignment counts)
#define BN_DISPATCH(fmt, x, b, c, CALL_T_V)                                                                                      \
    do {                                                                                                                         \
        bool nhwc_ = (fmt) & CB_FMT_NHWC;                                                                                        \
        if ((fmt) & CB_FMT_BF16) {                                                                                               \
            if (bn_width(p, nhwc_, 2, x, b, c) == 8) CALL_T_V(bf16, 8);                                                          \
            else CALL_T_V(bf16, 1);                                                                                              \
        } else {                                                                                                                 \
            if (bn_width(p, nhwc_, 4, x, b, c) == 4) CALL_T_V(float, 4);                                                         \
            else CALL_T_V(float, 1);                                                                                             \
        }                                                                                                                        \
    } while (0)

extern "C" void cb_fmt_bn_forward_train(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta, void *y,
                                        float *mean, float *invstd, float *rmean, float *rvar, float momentum, int relu, float *part) {
#define CALL(T, V) bn_train_tv<T, V>(p, nhwc_, (const T *)x, gamma, beta, (T *)y, mean, invstd, rmean, rvar, momentum, relu, part)
    BN_DISPATCH(fmt, x, y, y, CALL);
#undef CALL
}

extern "C" void cb_fmt_bn_forward_infer(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta,
                                        const float *rmean, const float *rvar, void *y, int relu, float *part) {
#define CALL(T, V) bn_infer_tv<T, V>(p, nhwc_, (const T *)x, gamma, beta, rmean, rvar, (T *)y, relu, part)
    BN_DISPATCH(fmt, x, y, y, CALL);
#undef CALL
}

extern "C" void cb_fmt_bn_backward(const cb_bn_params *p, int fmt, const void *x, const void *y, const float *gamma, const float *mean,
                                   const float *invstd, const void *dy, void *dx, float *dgamma, float *dbeta, float *part) {
#define CALL(T, V) bn_backward_tv<T, V>(p, nhwc_, (const T *)x, (const T *)y, gamma, mean, invstd, (const T *)dy, (T *)dx, dgamma, dbeta, part)
    BN_DISPATCH(fmt, x, y ? y : x, dx ? dx : dy, CALL);
#undef CALL
}
