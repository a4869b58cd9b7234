// Training-mode batch normalisation on every storage (format.h): fp32 or bf16 elements, NCHW or
// NHWC. cuDNN's legacy batch-norm routines run NHWC tensors at a fraction of memory speed
// (ResNet-50 b64 bf16 NHWC: 75 ms of forward pass where the layers' own work is 8 ms), so the
// storages run these: two memory passes forward (statistics, then normalise with the layer's
// activation fused) and two backward (the two channel sums, then the input gradient, with the
// activation's gradient fused). The backward passes read x and dy alone: the activation's input
// z = x scale + shift is recomputed from the forward's per-channel coefficients, so no copy of z
// (or of y) is kept or read.
//
// A pass that reduces writes fp32 partial sums per (row chunk, channel) into `part`; one thread
// per channel adds a channel's partials in double, in a fixed order (deterministic), and turns
// them into per-channel coefficients that the elementwise pass reads. Statistics are sums of
// x - s and (x - s)^2 with s the channel's first value, so that a large mean does not cancel
// the variance away in fp32.
//
// Layouts, for an (n, c, h, w) tensor: NHWC is (rows = n*h*w, c) with channels contiguous: a
// block covers a tile of channel vectors (V = 16 bytes of channels) and a chunk of rows; where V
// does not divide c, a row is lcm(c, V) elements (bn_run's periodic view: each element's channel
// is fixed within it, so a thread keeps its V channels; a block adds its positions per channel, so
// the partial sums are per channel as elsewhere; on the H200, 2026-11-29, an odd-channel
// MobileNet-like network's bf16 batch norms went 8.09 -> 4.75 ms a step). NCHW is (n, c, h*w): a
// block covers one channel and a chunk of its n*h*w elements
// (V = 16 bytes of pixels when h*w allows).
#include "core/act.h"
#include "cuda/common.cuh"
#include "cuda/fast_div.h"
#include "storage/elem.cuh"
#include "storage/format.h"

#include <stdint.h>
#include <type_traits>

#define BN_THREADS 256
#ifndef BN_MIN_BLOCKS
#define BN_MIN_BLOCKS 3 // resident blocks an SM must fit (registers): 768 threads, each with its loads in flight
#endif
#ifndef BN_GRAD_U
#define BN_GRAD_U 1 // rows a thread of a gradient pass loads before it uses any (see bn_depth)
#endif
#define BN_CHUNKS_MAX CB_FMT_BN_CHUNKS // row chunks per channel: the partial sums' first dimension
// bn_chunks' policy (dev/cuda/bn_lab.cu builds variants): blocks wanted per SM, the fewest rows
// (NHWC) or elements (NCHW) a chunk takes
#ifndef BN_BLOCKS_PER_SM
#define BN_BLOCKS_PER_SM 8
#endif
#ifndef BN_CHUNK_MIN_NHWC
#define BN_CHUNK_MIN_NHWC 64
#endif
#ifndef BN_CHUNK_MIN_NCHW
#define BN_CHUNK_MIN_NCHW 1024
#endif

// what a reduction sums: the statistics, or the gradient's two sums (BN_GRAD_STORE: also writing
// the activation's gradient dz over dy, so that the input gradient's pass need not compute it again)
// BN_STATS_RES: no reduction, the forward's output pass with a residual r (read through the dy
// stream): y = f(x scale + shift + r), a sum after the batch norm in the same pass
// BN_GRAD_MASK: the gradient's sums of dz = (m > 0 ? dy : 0), written over dy, where m is the
// output of a ReLU after the batch norm and a residual sum (a third stream): that ReLU's gradient
// in the pass that reads dy anyway, not in a pass of its own
enum { BN_STATS, BN_GRAD, BN_GRAD_STORE, BN_STATS_RES, BN_GRAD_MASK };
// the fused activation A (a cb_act) is a template argument: each kernel is compiled for each
// activation, so the switch of cb_act_*_f32 folds away and an element costs only its own
// arithmetic (a run-time switch per element, tried first, made EfficientNet-B0's batch norms
// 30% slower than a separate activation pass)
// BN_FAST_ACT: the sigmoid in SiLU and sigmoid by the hardware's exponential and division
// (__expf, __fdividef: a few units in the last place of fp32) where cb_act_*_f32 takes expf and an
// IEEE division, some 40 instructions an element (dev/cuda/bn_lab.cu BN_LAB_ACT=silu times both)
#ifndef BN_FAST_ACT
#define BN_FAST_ACT 1
#endif
__device__ static __forceinline__ float bn_sigmoid_fast(float z) { return CB_FAST_DIV(1.f, 1.f + CB_FAST_EXPF(-z)); }
template <int A> __device__ static __forceinline__ float bn_act_fwd(float z) {
    if (A == CB_ACT_NONE) return z;
    if (BN_FAST_ACT && A == CB_ACT_SILU) return CB_FAST_DIV(z, 1.f + CB_FAST_EXPF(-z));
    if (BN_FAST_ACT && A == CB_ACT_SIGMOID) return bn_sigmoid_fast(z);
    return cb_act_fwd_f32((cb_act)A, z);
}
// dL/dz from dL/dy at the activation's input z (the gradients that read y get y = f(z))
template <int A> __device__ static __forceinline__ float bn_act_grad(float z, float dy) {
    if (A == CB_ACT_NONE) return dy;
    if (BN_FAST_ACT && (A == CB_ACT_SILU || A == CB_ACT_SIGMOID)) {
        float s = bn_sigmoid_fast(z);
        return A == CB_ACT_SILU ? dy * s * (1.f + z * (1.f - s)) : dy * s * (1.f - s);
    }
    constexpr cb_act a = (cb_act)A;
    return cb_act_bwd_f32(a, z, cb_act_needs_input(a) ? z : cb_act_fwd_f32(a, z), dy);
}

// calls f(std::integral_constant<int, act>) : a kernel template instantiated per activation
template <class F> static void bn_with_act(cb_act act, F f) {
    switch (act) {
    case CB_ACT_RELU: f(std::integral_constant<int, CB_ACT_RELU>()); break;
    case CB_ACT_SIGMOID: f(std::integral_constant<int, CB_ACT_SIGMOID>()); break;
    case CB_ACT_SILU: f(std::integral_constant<int, CB_ACT_SILU>()); break;
    case CB_ACT_HARDSWISH: f(std::integral_constant<int, CB_ACT_HARDSWISH>()); break;
    case CB_ACT_HARDSIGMOID: f(std::integral_constant<int, CB_ACT_HARDSIGMOID>()); break;
    case CB_ACT_RELU6: f(std::integral_constant<int, CB_ACT_RELU6>()); break;
    case CB_ACT_GELU: f(std::integral_constant<int, CB_ACT_GELU>()); break;
    case CB_ACT_NONE:
    case CB_ACT_COUNT: f(std::integral_constant<int, CB_ACT_NONE>()); break;
    }
}

// rows (NHWC) or vectors (NCHW) a thread loads before it uses any: the passes are memory-bound,
// and a pass with one input stream (the statistics, the forward output) needs several loads in
// flight per thread to reach the memory's bandwidth; the gradient passes load two or three streams
// (one row each is enough, and more would spill their registers)
#ifndef BN_STATS_U
#define BN_STATS_U 4
#endif
template <int MODE> struct bn_depth { static constexpr int U = MODE == BN_STATS ? BN_STATS_U : MODE == BN_STATS_RES ? 2 : BN_GRAD_U; };

// the two sums of one element: statistics (x - s, (x - s)^2), or the gradient's (dz, dz (x - mean))
// with dz the activation's gradient at z = x f0 + f1 (the forward's scale and shift); returns dz
template <int MODE, int A>
__device__ static __forceinline__ float bn_acc(float x, float dy, float s, float f0, float f1, float &a1, float &a2) {
    if (MODE == BN_STATS) {
        float d = x - s;
        a1 += d;
        a2 += d * d;
        return 0.f;
    }
    float g = bn_act_grad<A>(x * f0 + f1, dy);
    a1 += g;
    a2 += g * (x - s);
    return g;
}

// the loaded vectors of one element vector: x, dy in the gradient's passes, m in BN_GRAD_MASK's
template <class T, int V, int MODE> struct bn_in {
    vec_t<T, V> x, dy, m;
    __device__ __forceinline__ void load(size_t o, const T *__restrict__ xp, const T *dyp, const T *__restrict__ mp) {
        x = *reinterpret_cast<const vec_t<T, V> *>(xp + o);
        if (MODE != BN_STATS) dy = *reinterpret_cast<const vec_t<T, V> *>(dyp + o);
        if (MODE == BN_GRAD_MASK) m = *reinterpret_cast<const vec_t<T, V> *>(mp + o);
    }
    // the vector at o where the tensor ends (elems) within it: the elements past the end are
    // neutral, adding nothing to any sum (x the channel's shift s, dy and m 0)
    __device__ __forceinline__ void load_end(size_t o, size_t elems, const float *s, const T *__restrict__ xp, const T *dyp,
                                             const T *__restrict__ mp) {
#pragma unroll
        for (int v = 0; v < V; v++) {
            bool in = o + v < elems;
            st(x.v, v, in ? ld(xp, o + v) : s[v]);
            if (MODE != BN_STATS) st(dy.v, v, in ? ld(dyp, o + v) : 0.f);
            if (MODE == BN_GRAD_MASK) st(m.v, v, in ? ld(mp, o + v) : 0.f);
        }
    }
    // element v's dy, with BN_GRAD_MASK's ReLU gradient applied (y > 0 ? dy : 0, as the separate pass)
    __device__ __forceinline__ float grad(int v) const {
        if (MODE == BN_STATS) return 0.f;
        float d = ld(dy.v, v);
        return MODE == BN_GRAD_MASK && !(ld(m.v, v) > 0.f) ? 0.f : d;
    }
};
// the mode whose sums an element adds, and whether its pass writes dz over dy
template <int MODE> struct bn_sums { static constexpr int M = MODE == BN_GRAD_MASK ? BN_GRAD : MODE; };
template <int MODE> __device__ static __forceinline__ constexpr bool bn_stores() { return MODE == BN_GRAD_STORE || MODE == BN_GRAD_MASK; }

// NCHW: a thread's U vectors of channel ch from vector jb on (BN_THREADS apart, below j1; of n *
// hwv vectors of V pixels), every load issued before any is used: their offsets o and contents
template <class T, int V, int MODE, int U>
__device__ static __forceinline__ void bn_load_nchw(cb_fast_div by_hwv, int c, int ch, uint32_t jb, uint32_t j1, const T *__restrict__ x,
                                                    const T *dy, const T *__restrict__ m, size_t (&o)[U], bn_in<T, V, MODE> (&in)[U]) {
#pragma unroll
    for (int u = 0; u < U; u++) {
        uint32_t j = jb + u * BN_THREADS;
        if (j >= j1) break;
        uint32_t n = cb_fast_div_q(by_hwv, j), sv = j - n * by_hwv.d;
        o[u] = (((size_t)n * c + ch) * by_hwv.d + sv) * V;
        in[u].load(o[u], x, dy, m);
    }
}

// NHWC: gridDim.y tiles of tx channel vectors, gridDim.x chunks of rows. s: the channel's shift
// (statistics: x's first row; gradient: the mean). part (chunks, c, 2).
// A row is c elements. Where the channels (cc) are not a multiple of V, a row is a period of
// lcm(cc, V) elements, lcm / cc pixels (bn_run's periodic view): its element j is channel j % cc
// whatever the row, so a thread's V channels stay its own, in 16-byte vectors; the tensor's
// elems end within the last row (past them: nothing loaded or stored); PER compiles that form.
// Otherwise (PER false) every row is whole and c == cc.
template <class T, int V, int MODE, int A, bool PER>
__global__ void __launch_bounds__(BN_THREADS, BN_MIN_BLOCKS) bn_reduce_nhwc(int64_t rows, int c, int cc, size_t elems, int tx, int64_t rows_per_chunk,
                                                             const T *__restrict__ x, T *__restrict__ dy, const T *__restrict__ m,
                                                             const float *__restrict__ mean, const float *__restrict__ fcoef,
                                                             float *__restrict__ part) {
    __shared__ float sh[2][BN_THREADS * V];
    int ty = BN_THREADS / tx, t = threadIdx.x, cv = t % tx, ry = t / tx;
    int c0 = (blockIdx.y * tx + cv) * V;
    bool live = ry < ty && c0 < c;
    float a1[V], a2[V], s[V], f0[V], f1[V];
#pragma unroll
    for (int v = 0; v < V; v++) {
        int ch = PER ? (c0 + v) % cc : c0 + v;
        a1[v] = a2[v] = 0.f;
        s[v] = live ? (MODE == BN_STATS ? ld(x, ch) : mean[ch]) : 0.f;
        f0[v] = live && A != CB_ACT_NONE ? fcoef[ch] : 0.f, f1[v] = live && A != CB_ACT_NONE ? fcoef[cc + ch] : 0.f;
    }
    int64_t r0 = blockIdx.x * rows_per_chunk, r1 = min(rows, r0 + rows_per_chunk);
    constexpr int U = bn_depth<MODE>::U;
    if (live)
        for (int64_t rb = r0 + ry; rb < r1; rb += (int64_t)U * ty) {
            bn_in<T, V, MODE> in[U];
#pragma unroll
            for (int u = 0; u < U; u++) { // every load first, then the sums
                int64_t r = rb + (int64_t)u * ty;
                if (r >= r1) break;
                size_t o = (size_t)r * c + c0;
                if (!PER || o + V <= elems) in[u].load(o, x, dy, m);
                else in[u].load_end(o, elems, s, x, dy, m);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (rb + (int64_t)u * ty >= r1) break;
                vec_t<T, V> dz;
#pragma unroll
                for (int v = 0; v < V; v++) {
                    float g = bn_acc<bn_sums<MODE>::M, A>(ld(in[u].x.v, v), in[u].grad(v), s[v], f0[v], f1[v], a1[v], a2[v]);
                    if (bn_stores<MODE>()) st(dz.v, v, g);
                }
                if (bn_stores<MODE>()) {
                    size_t o = (size_t)(rb + (int64_t)u * ty) * c + c0;
                    if (!PER || o + V <= elems) *reinterpret_cast<vec_t<T, V> *>(dy + o) = dz;
                    else // (v unrolled: an index known at compile time keeps dz in registers)
#pragma unroll
                        for (int v = 0; v < V; v++)
                            if (o + v < elems) st(dy, o + v, ld(dz.v, v));
                }
            }
        }
#pragma unroll
    for (int v = 0; v < V; v++) sh[0][t * V + v] = a1[v], sh[1][t * V + v] = a2[v];
    __syncthreads();
    if (!PER) { // a thread a position of the tile (tx * V of them) adds its ty rows' sums
        int p0 = blockIdx.y * tx * V, np = min(tx * V, c - p0);
        for (int q = t; q < np; q += BN_THREADS) {
            float b1 = 0.f, b2 = 0.f;
            for (int j = 0; j < ty; j++) b1 += sh[0][j * tx * V + q], b2 += sh[1][j * tx * V + q];
            float *p = part + ((size_t)blockIdx.x * c + p0 + q) * 2;
            p[0] = b1, p[1] = b2;
        }
        return;
    }
    // periodic: the sums of the tile's positions (its share of a row of c = lcm(cc, V) elements),
    // then per channel the sum of its positions in the tile, in a fixed order (deterministic): the
    // partial sums are (chunk, tile, cc) whatever the row's width, so a periodic pass may have as
    // many chunks as any other (a row of lcm(33, 8) elements, 8 pixels, held the chunks to 1024 / 8
    // when each position kept its own partial sums: a block per SM, the forward at a third of memory
    // speed on the H200, 2026-11-29)
    int p0 = blockIdx.y * tx * V, np = min(tx * V, c - p0);
    float b1[V], b2[V]; // (positions t, t + BN_THREADS, ...: at most V of them)
#pragma unroll
    for (int k = 0; k < V; k++) {
        int q = t + k * BN_THREADS;
        b1[k] = b2[k] = 0.f;
        if (q < np)
            for (int j = 0; j < ty; j++) b1[k] += sh[0][j * tx * V + q], b2[k] += sh[1][j * tx * V + q];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < V; k++)
        if (t + k * BN_THREADS < np) sh[0][t + k * BN_THREADS] = b1[k], sh[1][t + k * BN_THREADS] = b2[k];
    __syncthreads();
    for (int ch = t; ch < cc; ch += BN_THREADS) {
        float s1 = 0.f, s2 = 0.f;
        for (int q = p0 + ((ch - p0 % cc) % cc + cc) % cc; q < p0 + np; q += cc) s1 += sh[0][q - p0], s2 += sh[1][q - p0];
        float *p = part + (((size_t)blockIdx.x * gridDim.y + blockIdx.y) * cc + ch) * 2;
        p[0] = s1, p[1] = s2;
    }
}

// NCHW: blockIdx.y is the channel, gridDim.x chunks of its n*hw elements (in vectors of V pixels)
template <class T, int V, int MODE, int A>
__global__ void __launch_bounds__(BN_THREADS, BN_MIN_BLOCKS) bn_reduce_nchw(int c, cb_fast_div by_hwv, uint32_t nvec, uint32_t vec_per_chunk, const T *__restrict__ x,
                                                             T *__restrict__ dy, const T *__restrict__ m, const float *__restrict__ mean,
                                                             const float *__restrict__ fcoef, float *__restrict__ part) {
    int ch = blockIdx.y;
    uint32_t hwv = by_hwv.d;
    float s = MODE == BN_STATS ? ld(x, (size_t)ch * hwv * V) : mean[ch], a1 = 0.f, a2 = 0.f;
    float f0 = A != CB_ACT_NONE ? fcoef[ch] : 0.f, f1 = A != CB_ACT_NONE ? fcoef[c + ch] : 0.f;
    uint32_t j0 = blockIdx.x * vec_per_chunk, j1 = min(nvec, j0 + vec_per_chunk);
    constexpr int U = bn_depth<MODE>::U;
    for (uint32_t jb = j0 + threadIdx.x; jb < j1; jb += U * BN_THREADS) {
        bn_in<T, V, MODE> in[U];
        size_t o[U];
        bn_load_nchw(by_hwv, c, ch, jb, j1, x, dy, m, o, in); // every load first, then the sums
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (jb + u * BN_THREADS >= j1) break;
            vec_t<T, V> dz;
#pragma unroll
            for (int v = 0; v < V; v++) {
                float g = bn_acc<bn_sums<MODE>::M, A>(ld(in[u].x.v, v), in[u].grad(v), s, f0, f1, a1, a2);
                if (bn_stores<MODE>()) st(dz.v, v, g);
            }
            if (bn_stores<MODE>()) *reinterpret_cast<vec_t<T, V> *>(dy + o[u]) = dz;
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
// coefficients in registers: forward y = f(x scale + shift), backward dx = a (dz - b - (x - mean) k)
// with dz = f'(z) dy at z = x f0 + f1. k: (k0, k1, k2, k3, f0, f1), the coefficient planes of one
// channel. One output element of V from the loaded vectors:
enum { BN_K = 6 };
template <int MODE, int A> __device__ static __forceinline__ float bn_out(float x, float dy, const float *k) {
    if (MODE == BN_STATS) return bn_act_fwd<A>(x * k[0] + k[1]);
    if (MODE == BN_STATS_RES) return bn_act_fwd<A>(x * k[0] + k[1] + dy);
    float g = bn_act_grad<A>(x * k[4] + k[5], dy);
    return k[0] * (g - k[1] - (x - k[3]) * k[2]);
}

// the coefficient planes a pass reads (forward: scale, shift; backward: all six, the forward's
// two only with an activation)
template <int MODE, int A> __device__ static __forceinline__ bool bn_plane(int j) {
    return MODE == BN_STATS || MODE == BN_STATS_RES ? j < 2 : j < 4 || A != CB_ACT_NONE;
}

// the chunk an elementwise pass's block takes: the last chunks first (BN_APPLY_REVERSE), where the
// reduction that ran just before ended, so that what of its input the L2 still holds is read there
#ifndef BN_APPLY_REVERSE
#define BN_APPLY_REVERSE 1
#endif
__device__ static __forceinline__ unsigned bn_apply_chunk() { return BN_APPLY_REVERSE ? gridDim.x - 1 - blockIdx.x : blockIdx.x; }
// and its tile of channels (NHWC) or channel (NCHW): the grid's second dimension, reversed likewise
__device__ static __forceinline__ unsigned bn_apply_y() { return BN_APPLY_REVERSE ? gridDim.y - 1 - blockIdx.y : blockIdx.y; }

// CH_LAST: the V elements are V channels (coefficients k[v]), else V pixels of one channel (k[0])
template <class T, int V, bool CH_LAST, int MODE, int A>
__device__ static __forceinline__ void bn_out_vec(size_t o, const float (*k)[BN_K], const bn_in<T, V, MODE> &in, T *out) {
    vec_t<T, V> r;
#pragma unroll
    for (int v = 0; v < V; v++) st(r.v, v, bn_out<MODE, A>(ld(in.x.v, v), MODE != BN_STATS ? ld(in.dy.v, v) : 0.f, k[CH_LAST ? v : 0]));
    *reinterpret_cast<vec_t<T, V> *>(out + o) = r;
}

// NHWC: as bn_reduce_nhwc, each thread one channel vector over its rows
template <class T, int V, int MODE, int A, bool PER>
__global__ void __launch_bounds__(BN_THREADS, BN_MIN_BLOCKS) bn_apply_nhwc(int64_t rows, int c, int cc, size_t elems, int tx, int64_t rows_per_chunk,
                                                            const float *__restrict__ coef, const T *__restrict__ x, const T *dy, T *out) {
    int ty = BN_THREADS / tx, t = threadIdx.x, cv = t % tx, ry = t / tx;
    int c0 = ((int)bn_apply_y() * tx + cv) * V;
    if (ry >= ty || c0 >= c) return;
    float k[V][BN_K], s0[V];
#pragma unroll
    for (int v = 0; v < V; v++) {
        int ch = PER ? (c0 + v) % cc : c0 + v;
        s0[v] = 0.f;
#pragma unroll
        for (int j = 0; j < BN_K; j++) k[v][j] = bn_plane<MODE, A>(j) ? coef[(size_t)j * cc + ch] : 0.f;
    }
    int64_t r0 = bn_apply_chunk() * rows_per_chunk, r1 = min(rows, r0 + rows_per_chunk);
    constexpr int U = bn_depth<MODE>::U;
    for (int64_t rb = r0 + ry; rb < r1; rb += (int64_t)U * ty) {
        bn_in<T, V, MODE> in[U];
#pragma unroll
        for (int u = 0; u < U; u++) { // every load first, then the outputs
            if (rb + (int64_t)u * ty >= r1) break;
            size_t o = (size_t)(rb + (int64_t)u * ty) * c + c0;
            if (!PER || o + V <= elems) in[u].load(o, x, dy, nullptr);
            else in[u].load_end(o, elems, s0, x, dy, nullptr);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (rb + (int64_t)u * ty >= r1) break;
            size_t o = (size_t)(rb + (int64_t)u * ty) * c + c0;
            if (!PER || o + V <= elems) bn_out_vec<T, V, true, MODE, A>(o, k, in[u], out);
            else // (v unrolled: k[v] at an index known at compile time stays in registers)
#pragma unroll
                for (int v = 0; v < V; v++)
                    if (o + v < elems) st(out, o + v, bn_out<MODE, A>(ld(in[u].x.v, v), MODE != BN_STATS ? ld(in[u].dy.v, v) : 0.f, k[v]));
        }
    }
}

// NCHW: as bn_reduce_nchw, a block one channel (blockIdx.y) over a chunk of its vectors
template <class T, int V, int MODE, int A>
__global__ void __launch_bounds__(BN_THREADS, BN_MIN_BLOCKS) bn_apply_nchw(int c, cb_fast_div by_hwv, uint32_t nvec, uint32_t vec_per_chunk, const float *__restrict__ coef,
                                                            const T *__restrict__ x, const T *dy, T *out) {
    int ch = (int)bn_apply_y();
    float k[1][BN_K];
#pragma unroll
    for (int j = 0; j < BN_K; j++) k[0][j] = bn_plane<MODE, A>(j) ? coef[(size_t)j * c + ch] : 0.f;
    uint32_t j0 = bn_apply_chunk() * vec_per_chunk, j1 = min(nvec, j0 + vec_per_chunk);
    constexpr int U = bn_depth<MODE>::U;
    for (uint32_t jb = j0 + threadIdx.x; jb < j1; jb += U * BN_THREADS) {
        bn_in<T, V, MODE> in[U];
        size_t o[U];
        bn_load_nchw(by_hwv, c, ch, jb, j1, x, dy, (const T *)nullptr, o, in); // every load first, then the outputs
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (jb + u * BN_THREADS >= j1) break;
            bn_out_vec<T, V, false, MODE, A>(o[u], k, in[u], out);
        }
    }
}

// an NHWC row as the kernels see it: lcm(c, v) elements (c itself where v divides it; c >= 1)
static inline int bn_row_width(int c, int v) {
    int g = c;
    while (g % v) g += c;
    return g;
}

// the whole of one direction for element type T and vector width V
template <class T, int V> struct bn_run {
    const cb_bn_params *p;
    bool nhwc;
    int chunks;
    int64_t hw, rows; // rows: NHWC n*h*w
    // NHWC as the kernels see it: rows of width elements (lcm(C, V): periodic where C is not a
    // multiple of V), in tiles of at most BN_THREADS vectors; a periodic pass's partial sums are
    // chunks * tiles rows of C channels (bn_finish adds them), another's chunks rows
    int64_t vrows = 0;
    int width = 0, tiles = 1;
    size_t elems = 0;

    void init() {
        if (!nhwc) return;
        int g = bn_row_width(p->c, V), cv = g / V, tx = cv < BN_THREADS ? cv : BN_THREADS;
        width = g, tiles = (cv + tx - 1) / tx;
        elems = (size_t)rows * p->c;
        vrows = (int64_t)((elems + g - 1) / g);
        int most = periodic() ? BN_CHUNKS_MAX / tiles : BN_CHUNKS_MAX;
        if (chunks > most) chunks = most;
        int64_t few = vrows < 1 ? 1 : vrows;
        if (chunks > few) chunks = (int)few;
    }
    int part_chunks() const { return nhwc && periodic() ? chunks * tiles : chunks; } // (bn_finish's chunks of C channels)
    // the kernels' periodic form (PER): a channel index modulo C, and the tensor's end within a row
    bool periodic() const { return width != p->c; }

    template <int MODE, int A> void reduce(const T *x, T *dy, const float *mean, const float *fcoef, float *part, const T *m = nullptr) {
        if (nhwc) {
            int cv = width / V, tx = cv < BN_THREADS ? cv : BN_THREADS;
            int64_t per = (vrows + chunks - 1) / chunks;
            dim3 grid((unsigned)chunks, (unsigned)((cv + tx - 1) / tx));
            if (periodic()) bn_reduce_nhwc<T, V, MODE, A, true><<<grid, BN_THREADS>>>(vrows, width, p->c, elems, tx, per, x, dy, m, mean, fcoef, part);
            else bn_reduce_nhwc<T, V, MODE, A, false><<<grid, BN_THREADS>>>(vrows, width, p->c, elems, tx, per, x, dy, m, mean, fcoef, part);
        } else {
            uint32_t hwv = (uint32_t)(hw / V), nvec = (uint32_t)p->n * hwv, per = (nvec + chunks - 1) / chunks;
            dim3 grid((unsigned)chunks, (unsigned)p->c);
            bn_reduce_nchw<T, V, MODE, A><<<grid, BN_THREADS>>>(p->c, cb_fast_div_make(hwv), nvec, per, x, dy, m, mean, fcoef, part);
        }
    }
    template <int MODE, int A> void apply(const float *coef, const T *x, const T *dy, T *out) {
        if (nhwc) {
            int cv = width / V, tx = cv < BN_THREADS ? cv : BN_THREADS;
            int64_t per = (vrows + chunks - 1) / chunks;
            dim3 grid((unsigned)chunks, (unsigned)((cv + tx - 1) / tx));
            if (periodic()) bn_apply_nhwc<T, V, MODE, A, true><<<grid, BN_THREADS>>>(vrows, width, p->c, elems, tx, per, coef, x, dy, out);
            else bn_apply_nhwc<T, V, MODE, A, false><<<grid, BN_THREADS>>>(vrows, width, p->c, elems, tx, per, coef, x, dy, out);
        } else {
            uint32_t hwv = (uint32_t)(hw / V), nvec = (uint32_t)p->n * hwv, per = (nvec + chunks - 1) / chunks;
            dim3 grid((unsigned)chunks, (unsigned)p->c);
            bn_apply_nchw<T, V, MODE, A><<<grid, BN_THREADS>>>(p->c, cb_fast_div_make(hwv), nvec, per, coef, x, dy, out);
        }
    }
    // the same with the activation from its value
    template <int MODE> void apply_act(const float *coef, cb_act act, const T *x, const T *dy, T *out) {
        bn_with_act(act, [&](auto a) { this->template apply<MODE, decltype(a)::value>(coef, x, dy, out); });
    }
    template <int MODE> void reduce_grad(const T *x, T *dy, const float *mean, const float *fcoef, cb_act act, float *part) {
        bn_with_act(act, [&](auto a) { this->template reduce<MODE, decltype(a)::value>(x, dy, mean, fcoef, part); });
    }
};

// chunks per channel: enough blocks to fill the GPU a few times over, each with at least a few
// hundred elements per thread row
static int bn_chunks(const cb_bn_params *p, bool nhwc, int v) {
    // (NHWC: the tiles of a row of lcm(C, v) elements, bn_run's periodic view; at least one)
    int64_t m = (int64_t)p->n * p->h * p->w, tiles = nhwc ? ((bn_row_width(p->c, v) / v) + BN_THREADS - 1) / BN_THREADS : p->c;
    static int sms;
    if (!sms) {
        int dev = 0;
        cudaGetDevice(&dev);
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1) sms = 132;
    }
    int64_t want = (BN_BLOCKS_PER_SM * (int64_t)sms + tiles - 1) / tiles, most = m / (nhwc ? BN_CHUNK_MIN_NHWC : BN_CHUNK_MIN_NCHW);
    if (want > most) want = most;
    if (want > BN_CHUNKS_MAX) want = BN_CHUNKS_MAX;
    return want < 1 ? 1 : (int)want;
}

// 16-byte vectors where the pointers allow: NHWC with any C (a C that is not a multiple of them
// runs bn_run's periodic view, unless cb_fmt_bn_periodic(0)), NCHW where h*w is a multiple of them
static bool bn_periodic_on = true;
extern "C" void cb_fmt_bn_periodic(int on) { bn_periodic_on = on != 0; }
static int bn_width(const cb_bn_params *p, bool nhwc, size_t es, const void *a, const void *b, const void *c) {
    int v = (int)(16 / es);
    bool aligned = (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0 && (uintptr_t)c % 16 == 0;
    int64_t along = nhwc ? p->c : (int64_t)p->h * p->w;
    return aligned && (along % v == 0 || (nhwc && bn_periodic_on)) ? v : 1;
}

// the coefficient planes (BN_K, c) after the partial sums, 16-byte aligned
static unsigned warps_grid(int c) { return (unsigned)(c + 7) / 8; } // bn_finish: a warp per channel, 8 a block

#define BN_COEF(part, chunks, c) ((part) + ((size_t)(chunks) * (c) * 2 + 3) / 4 * 4)

// the forward's scale and shift (the activation's input z = x f0 + f1), as bn_finish made them,
// from the saved statistics: planes 4 and 5 of coef
__global__ void bn_fwd_coef(int c, const float *gamma, const float *beta, const float *mean, const float *invstd, float *coef) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= c) return;
    double sc = (double)gamma[ch] * invstd[ch];
    coef[4 * (size_t)c + ch] = (float)sc, coef[5 * (size_t)c + ch] = (float)(beta[ch] - (double)mean[ch] * sc);
}

template <class T, int V>
static void bn_train_tv(const cb_bn_params *p, bool nhwc, const T *x, const float *gamma, const float *beta, T *y, float *mean, float *invstd,
                        float *rmean, float *rvar, float momentum, cb_act act, float *part, const T *res) {
    bn_run<T, V> r = {p, nhwc, bn_chunks(p, nhwc, V), (int64_t)p->h * p->w, (int64_t)p->n * p->h * p->w};
    r.init();
    float *coef = BN_COEF(part, r.part_chunks(), p->c);
    r.template reduce<BN_STATS, CB_ACT_NONE>(x, nullptr, nullptr, nullptr, part);
    bn_finish<T, BN_STATS><<<warps_grid(p[0].c), 256>>>(p->c, r.part_chunks(), (double)r.rows, nhwc, r.hw, x, part, gamma, beta, p->eps, momentum, mean,
                                                        invstd, rmean, rvar, nullptr, nullptr, coef);
    if (res) r.template apply_act<BN_STATS_RES>(coef, act, x, res, y);
    else r.template apply_act<BN_STATS>(coef, act, x, nullptr, y);
}

template <class T, int V>
static void bn_infer_tv(const cb_bn_params *p, bool nhwc, const T *x, const float *gamma, const float *beta, const float *rmean,
                        const float *rvar, T *y, cb_act act, float *part, const T *res) {
    bn_run<T, V> r = {p, nhwc, bn_chunks(p, nhwc, V), (int64_t)p->h * p->w, (int64_t)p->n * p->h * p->w};
    r.init();
    bn_finish_infer<<<warps_grid(p[0].c), 256>>>(p->c, gamma, beta, rmean, rvar, p->eps, part);
    if (res) r.template apply_act<BN_STATS_RES>(part, act, x, res, y);
    else r.template apply_act<BN_STATS>(part, act, x, nullptr, y);
}

// the training forward's output again from its input and the saved statistics (cb_recompute): the
// scale and shift from (gamma, beta, mean, invstd), as the backward's activation gradient takes
// them, then the forward's elementwise pass
template <class T, int V>
static void bn_again_tv(const cb_bn_params *p, bool nhwc, const T *x, const float *gamma, const float *beta, const float *mean,
                        const float *invstd, T *y, cb_act act, float *part) {
    bn_run<T, V> r = {p, nhwc, bn_chunks(p, nhwc, V), (int64_t)p->h * p->w, (int64_t)p->n * p->h * p->w};
    r.init();
    float *coef = BN_COEF(part, r.part_chunks(), p->c);
    bn_fwd_coef<<<(unsigned)(p[0].c + 255) / 256, 256>>>(p->c, gamma, beta, mean, invstd, coef);
    r.template apply_act<BN_STATS>(coef + 4 * (size_t)p->c, act, x, nullptr, y);
}

template <class T, int V>
static void bn_backward_tv(const cb_bn_params *p, bool nhwc, const T *x, const float *gamma, const float *beta, const float *mean,
                           const float *invstd, cb_act act, T *dy, T *dx, float *dgamma, float *dbeta, float *part) {
    bn_run<T, V> r = {p, nhwc, bn_chunks(p, nhwc, V), (int64_t)p->h * p->w, (int64_t)p->n * p->h * p->w};
    r.init();
    float *coef = BN_COEF(part, r.part_chunks(), p->c);
    // an activation whose gradient costs an exp or an erf is taken once: the sums' pass writes dz
    // over dy, and the input gradient's pass reads it (one more write, no second evaluation)
    bool store = dx && (act == CB_ACT_SIGMOID || act == CB_ACT_SILU || act == CB_ACT_GELU);
    if (act != CB_ACT_NONE) bn_fwd_coef<<<(unsigned)(p[0].c + 255) / 256, 256>>>(p->c, gamma, beta, mean, invstd, coef);
    if (store) r.template reduce_grad<BN_GRAD_STORE>(x, dy, mean, coef + 4 * (size_t)p->c, act, part);
    else r.template reduce_grad<BN_GRAD>(x, dy, mean, coef + 4 * (size_t)p->c, act, part);
    bn_finish<T, BN_GRAD><<<warps_grid(p[0].c), 256>>>(p->c, r.part_chunks(), (double)r.rows, nhwc, r.hw, x, part, gamma, nullptr, p->eps, 0.f,
                                                       (float *)mean, (float *)invstd, nullptr, nullptr, dgamma, dbeta, coef);
    if (dx) r.template apply_act<BN_GRAD>(coef, store ? CB_ACT_NONE : act, x, dy, dx);
}

// the same for a batch norm without activation whose output a residual sum and a ReLU (output m)
// follow: the ReLU's gradient is applied to dy in place in the sums' pass
template <class T, int V>
static void bn_backward_mask_tv(const cb_bn_params *p, bool nhwc, const T *x, const float *gamma, const float *mean, const float *invstd,
                                const T *m, T *dy, T *dx, float *dgamma, float *dbeta, float *part) {
    bn_run<T, V> r = {p, nhwc, bn_chunks(p, nhwc, V), (int64_t)p->h * p->w, (int64_t)p->n * p->h * p->w};
    r.init();
    float *coef = BN_COEF(part, r.part_chunks(), p->c);
    r.template reduce<BN_GRAD_MASK, CB_ACT_NONE>(x, dy, mean, nullptr, part, m);
    bn_finish<T, BN_GRAD><<<warps_grid(p[0].c), 256>>>(p->c, r.part_chunks(), (double)r.rows, nhwc, r.hw, x, part, gamma, nullptr, p->eps, 0.f,
                                                       (float *)mean, (float *)invstd, nullptr, nullptr, dgamma, dbeta, coef);
    if (dx) r.template apply<BN_GRAD, CB_ACT_NONE>(coef, x, dy, dx);
}

extern "C" size_t cb_fmt_bn_scratch(int64_t c) { return (size_t)(CB_FMT_BN_CHUNKS * 2 + BN_K) * (size_t)c + 4; }

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

extern "C" void cb_fmt_bn_forward_train_res(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta, void *y,
                                            float *mean, float *invstd, float *rmean, float *rvar, float momentum, cb_act act, float *part,
                                            const void *res) {
#define CALL(T, V) bn_train_tv<T, V>(p, nhwc_, (const T *)x, gamma, beta, (T *)y, mean, invstd, rmean, rvar, momentum, act, part, (const T *)res)
    BN_DISPATCH(fmt, x, y, res ? res : y, CALL);
#undef CALL
}
extern "C" void cb_fmt_bn_forward_train(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta, void *y,
                                        float *mean, float *invstd, float *rmean, float *rvar, float momentum, cb_act act, float *part) {
    cb_fmt_bn_forward_train_res(p, fmt, x, gamma, beta, y, mean, invstd, rmean, rvar, momentum, act, part, NULL);
}

extern "C" void cb_fmt_bn_forward_infer_res(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta,
                                            const float *rmean, const float *rvar, void *y, cb_act act, float *part, const void *res) {
#define CALL(T, V) bn_infer_tv<T, V>(p, nhwc_, (const T *)x, gamma, beta, rmean, rvar, (T *)y, act, part, (const T *)res)
    BN_DISPATCH(fmt, x, y, res ? res : y, CALL);
#undef CALL
}
extern "C" void cb_fmt_bn_forward_infer(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta,
                                        const float *rmean, const float *rvar, void *y, cb_act act, float *part) {
    cb_fmt_bn_forward_infer_res(p, fmt, x, gamma, beta, rmean, rvar, y, act, part, NULL);
}

extern "C" void cb_fmt_bn_again(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta, const float *mean,
                                const float *invstd, void *y, cb_act act, float *part) {
#define CALL(T, V) bn_again_tv<T, V>(p, nhwc_, (const T *)x, gamma, beta, mean, invstd, (T *)y, act, part)
    BN_DISPATCH(fmt, x, y, y, CALL);
#undef CALL
}

extern "C" void cb_fmt_bn_backward(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta, const float *mean,
                                   const float *invstd, cb_act act, void *dy, void *dx, float *dgamma, float *dbeta, float *part) {
#define CALL(T, V) bn_backward_tv<T, V>(p, nhwc_, (const T *)x, gamma, beta, mean, invstd, act, (T *)dy, (T *)dx, dgamma, dbeta, part)
    BN_DISPATCH(fmt, x, dy, dx ? dx : dy, CALL);
#undef CALL
}

extern "C" void cb_fmt_bn_backward_relu_mask(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *mean,
                                             const float *invstd, const void *m, void *dy, void *dx, float *dgamma, float *dbeta, float *part) {
    // the vector width is chosen on three pointers: the third one's low bits are those of m or dx
    // (their OR: misaligned where either is)
    const void *m_dx = (const void *)((uintptr_t)m | (uintptr_t)(dx ? dx : dy));
#define CALL(T, V) bn_backward_mask_tv<T, V>(p, nhwc_, (const T *)x, gamma, mean, invstd, (const T *)m, (T *)dy, (T *)dx, dgamma, dbeta, part)
    BN_DISPATCH(fmt, x, dy, m_dx, CALL);
#undef CALL
}
