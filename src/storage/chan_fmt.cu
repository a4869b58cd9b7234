// Per-channel layers of today's convnets on the cudnn backend's storages (format.h), every fmt (0,
// fp32 NCHW, too): the squeeze-excitation product (an (N, C, 1, 1) operand broadcast over the
// pixels), ConvNeXt's layer scale, and its LayerNorm over the channels of each pixel. The
// semantics are the reference loops' (src/cpu/channel_impl.h). Elements are fp32 or bf16, math in
// fp32, sums over more than one pixel added in double at the end (fixed order: deterministic).
//
// Index maps of an (n, c, hw) tensor, flat index i: NHWC row r = i / c (r = image * hw + pixel),
// channel i % c; NCHW channel (i / hw) % c, image i / (c * hw), pixel i % hw.
#include "cuda/common.cuh"
#include "cuda/fast_div.h"
#include "storage/elem.cuh"
#include "storage/nhwc_sums.cuh"
#include "storage/format.h"

#include <stdint.h>

#define CH_THREADS 256

struct chan_ix {
    bool nhwc;
    int c;
    size_t hw;
    __device__ int channel(size_t i) const { return nhwc ? (int)(i % c) : (int)(i / hw % c); }
    __device__ size_t image(size_t i) const { return nhwc ? i / c / hw : i / hw / c; }
    __device__ size_t row(size_t i) const { return nhwc ? i / c : i / hw / c * hw + i % hw; } // image * hw + pixel
};

// y = a * b, b of a's shape or (n, c, 1, 1) (bcast); also the gradient w.r.t. the full-size operand
template <class T> __global__ void mul_kernel(size_t t, chan_ix ix, bool bcast, const T *a, const T *b, T *y) {
    CB_FOR(i, t) st(y, i, ld(a, i) * ld(b, bcast ? ix.image(i) * ix.c + ix.channel(i) : i));
}

// db (n, c) = sum over the pixels of dy * a. NHWC: a block per (image, slice of 32 channels), 32
// channel lanes by 32 pixel lanes (each warp reads along the channels of one pixel), the lanes'
// sums added in a fixed order; NCHW: a block per plane, reading along pixels.
template <class T> __global__ void mul_bcast_grad_nhwc(int n, int c, size_t hw, const T *dy, const T *a, T *db) {
    __shared__ double part[32][33];
    int ch = blockIdx.y * 32 + threadIdx.x;
    size_t img = blockIdx.x;
    double s = 0;
    if (ch < c)
        for (size_t p = threadIdx.y; p < hw; p += blockDim.y) {
            size_t o = (img * hw + p) * c + ch;
            s += (double)ld(dy, o) * ld(a, o);
        }
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && ch < c) {
        double t = 0;
        for (unsigned k = 0; k < blockDim.y; k++) t += part[k][threadIdx.x];
        st(db, img * c + ch, (float)t);
    }
}
template <class T> __global__ void mul_bcast_grad_nchw(size_t hw, const T *dy, const T *a, T *db) {
    size_t plane = blockIdx.x;
    double s = 0;
    for (size_t p = threadIdx.x; p < hw; p += blockDim.x) s += (double)ld(dy, plane * hw + p) * ld(a, plane * hw + p);
    s = cb_block_sum(s);
    if (threadIdx.x == 0) st(db, plane, (float)s);
}

// y = x * w[channel] (layer scale; also its input gradient)
template <class T> __global__ void scale_kernel(size_t t, chan_ix ix, const T *x, const float *w, T *y) {
    CB_FOR(i, t) st(y, i, ld(x, i) * w[ix.channel(i)]);
}

// ---- NHWC in 16-byte vectors ------------------------------------------------------------------
// c a multiple of V, every tensor 16-byte aligned, fewer than 2^31 vectors (chan_vec_of): V
// adjacent channels a thread, vector j's channel vector j mod c/V and image j / (hw c/V) by
// multiply-high divisions. (The kernels above divide a 64-bit index per element: EfficientNet-B0's
// first SE product at b128 bf16 took 0.24 ms forward and 0.43 backward, 2026-11-29, where the
// DRAM floor is 0.06 and 0.12.)
template <class T, int V>
__global__ void __launch_bounds__(256) mul_vec_kernel(uint32_t nvec, cb_fast_div by_cv, cb_fast_div by_img, bool bcast, const T *a, const T *b, T *y) {
    typedef vec_t<T, V> vec;
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    vec x = reinterpret_cast<const vec *>(a)[j], w, o;
    if (bcast) w = reinterpret_cast<const vec *>(b)[cb_fast_div_q(by_img, j) * by_cv.d + (j - cb_fast_div_q(by_cv, j) * by_cv.d)];
    else w = reinterpret_cast<const vec *>(b)[j];
#pragma unroll
    for (int e = 0; e < V; e++) st(o.v, e, ld(x.v, e) * ld(w.v, e));
    reinterpret_cast<vec *>(y)[j] = o;
}
template <class T, int V>
__global__ void __launch_bounds__(256) scale_vec_kernel(uint32_t nvec, cb_fast_div by_cv, const T *x, const float *w, T *y) {
    typedef vec_t<T, V> vec;
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    vec a = reinterpret_cast<const vec *>(x)[j], o;
    uint32_t c0 = (j - cb_fast_div_q(by_cv, j) * by_cv.d) * V;
#pragma unroll
    for (int e = 0; e < V; e++) st(o.v, e, ld(a.v, e) * w[c0 + e]);
    reinterpret_cast<vec *>(y)[j] = o;
}
// ---- LayerNorm over the channels of each row (pixel) ----------------------------------------
// stats (rows, 2): mean and 1 / sqrt(var + eps), biased variance. NHWC: a warp per row, lanes
// along the channels; NCHW: a thread per row, its channels hw apart (neighbouring threads read
// neighbouring pixels).
template <class T> __device__ static void ln_row_stats(const T *x, size_t base, size_t step, int c, int lane, int lanes, float eps, float &mu, float &is) {
    float s = 0;
    for (int k = lane; k < c; k += lanes) s += ld(x, base + k * step);
    if (lanes == 32)
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    mu = s / c;
    float v = 0;
    for (int k = lane; k < c; k += lanes) {
        float d = ld(x, base + k * step) - mu;
        v += d * d;
    }
    if (lanes == 32)
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    is = rsqrtf(v / c + eps);
}

// the row's base offset and channel step, and which lane of how many this thread is
struct ln_row {
    size_t base, step;
    int lane, lanes;
    bool live;
};
__device__ static ln_row ln_row_of(bool nhwc, size_t rows, int c, size_t hw) {
    ln_row q;
    size_t r;
    if (nhwc) {
        r = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
        q.lane = threadIdx.x % 32, q.lanes = 32, q.base = r * c, q.step = 1;
    } else {
        r = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
        q.lane = 0, q.lanes = 1, q.base = (r / hw * c) * hw + r % hw, q.step = hw;
    }
    q.live = r < rows;
    if (!q.live) q.base = 0;
    return q;
}

template <class T>
__global__ void ln_forward_kernel(bool nhwc, size_t rows, int c, size_t hw, float eps, const T *x, const float *g, const float *b, T *y,
                                  float *stats) {
    ln_row q = ln_row_of(nhwc, rows, c, hw);
    if (!q.live) return; // whole warps: rows * 32 threads exactly cover NHWC's warps
    float mu, is;
    ln_row_stats(x, q.base, q.step, c, q.lane, q.lanes, eps, mu, is);
    size_t r = nhwc ? q.base / c : (blockIdx.x * (size_t)blockDim.x + threadIdx.x);
    if (stats && q.lane == 0) stats[2 * r] = mu, stats[2 * r + 1] = is;
    for (int k = q.lane; k < c; k += q.lanes) {
        size_t o = q.base + k * q.step;
        st(y, o, (ld(x, o) - mu) * is * g[k] + b[k]);
    }
}

// dx = is (e - mean_c(e) - xhat mean_c(e xhat)), e = dy g, from the forward's stats
template <class T>
__global__ void ln_backward_kernel(bool nhwc, size_t rows, int c, size_t hw, const T *x, const float *g, const T *dy, const float *stats, T *dx) {
    ln_row q = ln_row_of(nhwc, rows, c, hw);
    if (!q.live) return;
    size_t r = nhwc ? q.base / c : (blockIdx.x * (size_t)blockDim.x + threadIdx.x);
    float mu = stats[2 * r], is = stats[2 * r + 1], se = 0, sex = 0;
    for (int k = q.lane; k < c; k += q.lanes) {
        size_t o = q.base + k * q.step;
        float e = ld(dy, o) * g[k];
        se += e, sex += e * (ld(x, o) - mu) * is;
    }
    if (q.lanes == 32)
        for (int o = 16; o > 0; o >>= 1) se += __shfl_xor_sync(0xffffffffu, se, o), sex += __shfl_xor_sync(0xffffffffu, sex, o);
    se /= c, sex /= c;
    for (int k = q.lane; k < c; k += q.lanes) {
        size_t o = q.base + k * q.step;
        float xh = (ld(x, o) - mu) * is;
        st(dx, o, is * (ld(dy, o) * g[k] - se - xh * sex));
    }
}

// NHWC rows as vectors (ln_rows): a group of G lanes (a power of 2, within a warp) per row, each
// lane holding up to NV vectors of V channels in registers, so that the forward reads x once and
// the backward x and dy once, in 16-byte loads. (The warp-per-row kernels above read x three times
// in 2-byte loads: 0.11 ms each way on ConvNeXt-Tiny's first stage at b64 bf16, about 0.7 TB/s;
// these 0.031 forward and 0.039 backward, 2026-11-29-chanvec call 1.) c a multiple of V, every
// tensor 16-byte aligned, c / V at most 32 lanes of 2 LN_ROWS_NV (ln_rows_of); else those kernels.
// Every lane of a warp takes part in the shuffles: a lane past the last row computes on nothing.
#ifndef LN_ROWS_NV
#define LN_ROWS_NV 4 // (vectors a lane holds before the group widens; a second instance holds 2x)
#endif
__device__ static __forceinline__ float group_sum(float s, int G) {
    for (int o = G / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    return s;
}
// out[k] for the lane's vectors k = lane + j G < nvec: element e of vector j is f(j, e, its channel)
template <class T, int V, int NV, class F> __device__ static __forceinline__ void ln_store_row(vec_t<T, V> *out, int lane, int G, int nvec, F f) {
#pragma unroll
    for (int j = 0; j < NV; j++) {
        int k = lane + j * G;
        if (k >= nvec) continue;
        vec_t<T, V> o;
#pragma unroll
        for (int e = 0; e < V; e++) st(o.v, e, f(j, e, k * V + e));
        out[k] = o;
    }
}
template <class T, int V, int NV>
__global__ void __launch_bounds__(CH_THREADS) ln_forward_rows(size_t rows, int c, int G, float eps, const T *x, const float *g, const float *b,
                                                              T *y, float *stats) {
    typedef vec_t<T, V> vec;
    size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, r = tid / G;
    int lane = (int)(tid % G), nvec = c / V;
    bool live = r < rows;
    const vec *xr = reinterpret_cast<const vec *>(x + (live ? r : 0) * c);
    vec v[NV];
    float s = 0;
#pragma unroll
    for (int j = 0; j < NV; j++)
        if (live && lane + j * G < nvec) {
            v[j] = xr[lane + j * G];
#pragma unroll
            for (int e = 0; e < V; e++) s += ld(v[j].v, e);
        }
    float mu = group_sum(s, G) / c, q = 0;
#pragma unroll
    for (int j = 0; j < NV; j++)
        if (live && lane + j * G < nvec)
#pragma unroll
            for (int e = 0; e < V; e++) {
                float d = ld(v[j].v, e) - mu;
                q += d * d;
            }
    float is = rsqrtf(group_sum(q, G) / c + eps);
    if (!live) return;
    if (stats && lane == 0) stats[2 * r] = mu, stats[2 * r + 1] = is;
    ln_store_row<T, V, NV>(reinterpret_cast<vec *>(y + r * c), lane, G, nvec,
                           [&](int j, int e, int ch) { return (ld(v[j].v, e) - mu) * is * g[ch] + b[ch]; });
}
template <class T, int V, int NV>
__global__ void __launch_bounds__(CH_THREADS) ln_backward_rows(size_t rows, int c, int G, const T *x, const float *g, const T *dy, const float *stats,
                                                               T *dx) {
    typedef vec_t<T, V> vec;
    size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, r = tid / G;
    int lane = (int)(tid % G), nvec = c / V;
    bool live = r < rows;
    size_t base = (live ? r : 0) * c;
    const vec *xr = reinterpret_cast<const vec *>(x + base), *dr = reinterpret_cast<const vec *>(dy + base);
    float mu = live ? stats[2 * r] : 0, is = live ? stats[2 * r + 1] : 0, se = 0, sex = 0;
    vec xv[NV], dv[NV];
#pragma unroll
    for (int j = 0; j < NV; j++)
        if (live && lane + j * G < nvec) xv[j] = xr[lane + j * G], dv[j] = dr[lane + j * G];
#pragma unroll
    for (int j = 0; j < NV; j++) {
        int k = lane + j * G;
        if (!live || k >= nvec) continue;
#pragma unroll
        for (int e = 0; e < V; e++) {
            float ge = ld(dv[j].v, e) * g[k * V + e];
            se += ge, sex += ge * (ld(xv[j].v, e) - mu) * is;
        }
    }
    se = group_sum(se, G) / c, sex = group_sum(sex, G) / c;
    if (!live) return;
    ln_store_row<T, V, NV>(reinterpret_cast<vec *>(dx + base), lane, G, nvec, [&](int j, int e, int ch) {
        return is * (ld(dv[j].v, e) * g[ch] - se - (ld(xv[j].v, e) - mu) * is * sex);
    });
}

// dg (c) = sum over rows of dy xhat, db (c) = sum of dy (LN; else xhat is x: layer scale's dw):
// partial sums per (chunk, channel) into part (chunks, c, 2), then a warp per channel adds a
// channel's chunks in double. NHWC: a thread per channel over the chunk's rows, LN_PARAM_U rows'
// loads in flight at a time (one row at a time, each thread's loop waited on every load: about 65 us
// a call on an H200 whatever the size, ConvNeXt-Tiny b64, 2026-11-29); NCHW: a block per (chunk,
// channel) over its pixels.
#ifndef LN_PARAM_U
#define LN_PARAM_U 8
#endif
__device__ static __forceinline__ float xhat_of(bool ln, float x, const float *stats, size_t r) {
    return ln ? (x - stats[2 * r]) * stats[2 * r + 1] : x;
}
template <class T, bool LN>
__global__ void ln_param_part_nhwc(size_t rows, int c, size_t rows_per_chunk, const T *x, const T *dy, const float *stats, float *part) {
    int ch = blockIdx.y * blockDim.x + threadIdx.x;
    if (ch >= c) return;
    size_t r0 = blockIdx.x * rows_per_chunk, r1 = min(rows, r0 + rows_per_chunk), r = r0;
    float s1[LN_PARAM_U], s2[LN_PARAM_U];
#pragma unroll
    for (int u = 0; u < LN_PARAM_U; u++) s1[u] = s2[u] = 0;
    for (; r + LN_PARAM_U <= r1; r += LN_PARAM_U) {
        float g[LN_PARAM_U], v[LN_PARAM_U];
#pragma unroll
        for (int u = 0; u < LN_PARAM_U; u++) g[u] = ld(dy, (r + u) * c + ch), v[u] = ld(x, (r + u) * c + ch);
#pragma unroll
        for (int u = 0; u < LN_PARAM_U; u++) s1[u] += g[u], s2[u] += g[u] * xhat_of(LN, v[u], stats, r + u);
    }
    for (int u = 0; r < r1; r++, u++) { // (the last rows, fewer than LN_PARAM_U)
        float g = ld(dy, r * c + ch);
        s1[u] += g, s2[u] += g * xhat_of(LN, ld(x, r * c + ch), stats, r);
    }
    float t1 = 0, t2 = 0;
#pragma unroll
    for (int u = 0; u < LN_PARAM_U; u++) t1 += s1[u], t2 += s2[u];
    part[((size_t)blockIdx.x * c + ch) * 2] = t1, part[((size_t)blockIdx.x * c + ch) * 2 + 1] = t2;
}
// the same on NHWC in 16-byte vectors (chan_vec_of): a block of 256 threads per (chunk, LX channel
// vectors), LX lanes along the vectors (a power of 2 up to 32: the largest that divides them), 256 /
// LX along the chunk's rows with four rows' loads in flight; the threads' sums added over a warp's row lanes by shuffles and
// over the warps in shared memory, in a fixed order. (A thread per channel took 64 us on
// ConvNeXt-Tiny's first stage at b64 bf16, three times the DRAM floor; this form with the lanes a
// power of 2 at or above the vectors, chunks of 4 rows a lane, 45 us, but up to 1.5x slower at
// C 384 (a slice of idle lanes) and on small tensors (blocks of little work), 2026-11-29 call 2.)
#define LN_PARAM_VEC_THREADS 256
template <class T, int V, bool LN>
__global__ void __launch_bounds__(LN_PARAM_VEC_THREADS) ln_param_part_nhwc_vec(size_t rows, int cv, int lx_n, size_t rows_per_chunk, const T *x,
                                                                               const T *dy, const float *stats, float *part) {
    typedef vec_t<T, V> vec;
    __shared__ float sh[LN_PARAM_VEC_THREADS / 32][32][2 * V];
    int lx = threadIdx.x % lx_n, ly = threadIdx.x / lx_n, ly_n = LN_PARAM_VEC_THREADS / lx_n, cj = blockIdx.y * lx_n + lx;
    size_t r0 = blockIdx.x * rows_per_chunk, r1 = min(rows, r0 + rows_per_chunk);
    const vec *xv = reinterpret_cast<const vec *>(x), *dv = reinterpret_cast<const vec *>(dy);
    float s1[V], s2[V];
#pragma unroll
    for (int e = 0; e < V; e++) s1[e] = s2[e] = 0;
    if (cj < cv) {
#pragma unroll 4
        for (size_t r = r0 + ly; r < r1; r += ly_n) {
            vec g = dv[r * cv + cj], a = xv[r * cv + cj];
#pragma unroll
            for (int e = 0; e < V; e++) s1[e] += ld(g.v, e), s2[e] += ld(g.v, e) * xhat_of(LN, ld(a.v, e), stats, r);
        }
    }
#pragma unroll
    for (int e = 0; e < V; e++)
        for (int o = 16; o >= lx_n; o >>= 1) s1[e] += __shfl_xor_sync(0xffffffffu, s1[e], o), s2[e] += __shfl_xor_sync(0xffffffffu, s2[e], o);
    if (threadIdx.x % 32 < lx_n)
#pragma unroll
        for (int e = 0; e < V; e++) sh[threadIdx.x / 32][lx][e] = s1[e], sh[threadIdx.x / 32][lx][V + e] = s2[e];
    __syncthreads();
    if (ly || cj >= cv) return;
    int c = cv * V;
#pragma unroll
    for (int e = 0; e < V; e++) {
        float t1 = 0, t2 = 0;
        for (int w = 0; w < LN_PARAM_VEC_THREADS / 32; w++) t1 += sh[w][lx][e], t2 += sh[w][lx][V + e];
        size_t o = ((size_t)blockIdx.x * c + (size_t)cj * V + e) * 2;
        part[o] = t1, part[o + 1] = t2;
    }
}
template <class T, bool LN>
__global__ void ln_param_part_nchw(size_t rows, int c, size_t hw, size_t rows_per_chunk, const T *x, const T *dy, const float *stats, float *part) {
    int ch = blockIdx.y;
    size_t r0 = blockIdx.x * rows_per_chunk, r1 = min(rows, r0 + rows_per_chunk);
    float s1 = 0, s2 = 0;
    for (size_t r = r0 + threadIdx.x; r < r1; r += blockDim.x) {
        size_t o = (r / hw * c + ch) * hw + r % hw;
        float g = ld(dy, o);
        s1 += g, s2 += g * xhat_of(LN, ld(x, o), stats, r);
    }
    s1 = cb_block_sum(s1);
    s2 = cb_block_sum(s2);
    if (threadIdx.x == 0) part[((size_t)blockIdx.x * c + ch) * 2] = s1, part[((size_t)blockIdx.x * c + ch) * 2 + 1] = s2;
}
__global__ void ln_param_finish(int c, int chunks, const float *part, float *db, float *dg) {
    int ch = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (ch >= c) return;
    double s1 = 0, s2 = 0;
    for (int k = lane; k < chunks; k += 32) s1 += part[((size_t)k * c + ch) * 2], s2 += part[((size_t)k * c + ch) * 2 + 1];
    for (int o = 16; o > 0; o >>= 1) s1 += __shfl_xor_sync(0xffffffffu, s1, o), s2 += __shfl_xor_sync(0xffffffffu, s2, o);
    if (lane) return;
    if (db) db[ch] = (float)s1;
    if (dg) dg[ch] = (float)s2;
}

// ---- entry points --------------------------------------------------------------------------
// the vector width of the NHWC vector kernels for these tensors (0: they do not apply, or
// cb_fmt_chan_vec(0)); $CONVBENCH_CHAN_VEC=on|off through cb_dnn_init
static int chan_vec_mode = -1;
extern "C" void cb_fmt_chan_vec(int mode) { chan_vec_mode = mode; }
static int chan_vec_of(int fmt, int c, size_t t, const void *a, const void *b, const void *d) {
    int v = fmt & CB_FMT_BF16 ? 8 : 4;
    bool aligned = ((uintptr_t)a | (uintptr_t)b | (uintptr_t)d) % 16 == 0;
    return t && (fmt & CB_FMT_NHWC) && chan_vec_mode != 0 && c % v == 0 && aligned && t / v < 0x7fffffffu ? v : 0;
}
template <class T, int V> static void mul_vec(size_t t, int c, int64_t hw, bool bcast, const void *a, const void *b, void *y) {
    uint32_t nvec = (uint32_t)(t / V), cv = (uint32_t)(c / V);
    uint64_t per_img = (uint64_t)hw * cv; // (divides nvec < 2^31)
    mul_vec_kernel<T, V><<<(nvec + 255) / 256, 256>>>(nvec, cb_fast_div_make(cv), cb_fast_div_make((uint32_t)per_img), bcast, (const T *)a,
                                                      (const T *)b, (T *)y);
}
template <class T, int V> static void scale_vec(size_t t, int c, const void *x, const float *w, void *y) {
    uint32_t nvec = (uint32_t)(t / V);
    scale_vec_kernel<T, V><<<(nvec + 255) / 256, 256>>>(nvec, cb_fast_div_make((uint32_t)(c / V)), (const T *)x, w, (T *)y);
}

static chan_ix ix_of(int fmt, int c, int64_t hw) { return chan_ix{(fmt & CB_FMT_NHWC) != 0, c, (size_t)hw}; }
static unsigned grid_of(size_t t) { return cb_blocks(t, CH_THREADS); }

extern "C" void cb_fmt_mul_forward(int fmt, int n, int c, int64_t hw, int bcast, const void *a, const void *b, void *y) {
    size_t t = (size_t)n * c * hw;
    if (chan_vec_of(fmt, c, t, a, b, y)) {
        if (fmt & CB_FMT_BF16) mul_vec<bf16, 8>(t, c, hw, bcast != 0, a, b, y);
        else mul_vec<float, 4>(t, c, hw, bcast != 0, a, b, y);
        return;
    }
    if (fmt & CB_FMT_BF16) mul_kernel<bf16><<<grid_of(t), CH_THREADS>>>(t, ix_of(fmt, c, hw), bcast != 0, (const bf16 *)a, (const bf16 *)b, (bf16 *)y);
    else mul_kernel<float><<<grid_of(t), CH_THREADS>>>(t, ix_of(fmt, c, hw), bcast != 0, (const float *)a, (const float *)b, (float *)y);
}

extern "C" void cb_fmt_mul_backward_bcast(int fmt, int n, int c, int64_t hw, const void *dy, const void *a, void *db) {
    bool bf = fmt & CB_FMT_BF16;
    if (chan_vec_of(fmt, c, (size_t)n * c * hw, dy, a, db)) {
        nhwc_sums_grid q = nhwc_image_sums_grid(n, c, bf ? 8 : 4);
        if (bf) nhwc_image_sums<bf16, 8, double, true><<<q.grid, NHWC_SUM_THREADS>>>(q.cv, q.lx, (size_t)hw, (const bf16 *)dy, (const bf16 *)a, 1.f, (bf16 *)db);
        else nhwc_image_sums<float, 4, double, true><<<q.grid, NHWC_SUM_THREADS>>>(q.cv, q.lx, (size_t)hw, (const float *)dy, (const float *)a, 1.f, (float *)db);
    } else if (fmt & CB_FMT_NHWC) {
        dim3 g((unsigned)n, (unsigned)((c + 31) / 32)), blk(32, 32);
        if (bf) mul_bcast_grad_nhwc<bf16><<<g, blk>>>(n, c, (size_t)hw, (const bf16 *)dy, (const bf16 *)a, (bf16 *)db);
        else mul_bcast_grad_nhwc<float><<<g, blk>>>(n, c, (size_t)hw, (const float *)dy, (const float *)a, (float *)db);
    } else {
        unsigned g = (unsigned)n * (unsigned)c;
        if (bf) mul_bcast_grad_nchw<bf16><<<g, CH_THREADS>>>((size_t)hw, (const bf16 *)dy, (const bf16 *)a, (bf16 *)db);
        else mul_bcast_grad_nchw<float><<<g, CH_THREADS>>>((size_t)hw, (const float *)dy, (const float *)a, (float *)db);
    }
}

extern "C" void cb_fmt_scale_forward(int fmt, int n, int c, int64_t hw, const void *x, const float *w, void *y) {
    size_t t = (size_t)n * c * hw;
    if (chan_vec_of(fmt, c, t, x, y, y)) {
        if (fmt & CB_FMT_BF16) scale_vec<bf16, 8>(t, c, x, w, y);
        else scale_vec<float, 4>(t, c, x, w, y);
        return;
    }
    if (fmt & CB_FMT_BF16) scale_kernel<bf16><<<grid_of(t), CH_THREADS>>>(t, ix_of(fmt, c, hw), (const bf16 *)x, w, (bf16 *)y);
    else scale_kernel<float><<<grid_of(t), CH_THREADS>>>(t, ix_of(fmt, c, hw), (const float *)x, w, (float *)y);
}

// the NHWC LayerNorm vector kernels' group and grid (G 0: they do not apply, or cb_fmt_chan_vec(0)): the
// fewest lanes a row that hold its vectors LN_ROWS_NV a lane, else 32 lanes of twice as many (wide)
struct ln_rows {
    int G;
    bool wide;
    unsigned grid;
};
static ln_rows ln_rows_of(int fmt, int c, size_t rows, const void *a, const void *b, const void *d) {
    ln_rows q = {0, false, 0};
    int v = fmt & CB_FMT_BF16 ? 8 : 4;
    bool aligned = ((uintptr_t)a | (uintptr_t)b | (uintptr_t)d) % 16 == 0;
    if (!(fmt & CB_FMT_NHWC) || chan_vec_mode == 0 || c % v || !aligned || c / v > 64 * LN_ROWS_NV) return q;
    int nvec = c / v;
    q.G = 1;
    while (q.G < 32 && (nvec + q.G - 1) / q.G > LN_ROWS_NV) q.G *= 2;
    q.wide = (nvec + q.G - 1) / q.G > LN_ROWS_NV;
    q.grid = (unsigned)((rows * q.G + CH_THREADS - 1) / CH_THREADS);
    return q;
}

// one row per warp (NHWC) or per thread (NCHW)
static unsigned ln_grid(int fmt, size_t rows) {
    size_t threads = fmt & CB_FMT_NHWC ? rows * 32 : rows;
    return (unsigned)((threads + CH_THREADS - 1) / CH_THREADS);
}

extern "C" void cb_fmt_layernorm_forward(int fmt, int n, int c, int64_t hw, float eps, const void *x, const float *g, const float *b, void *y,
                                         float *stats) {
    size_t rows = (size_t)n * hw;
    bool nhwc = fmt & CB_FMT_NHWC;
    ln_rows q = ln_rows_of(fmt, c, rows, x, y, NULL);
    if (q.G) {
        if (fmt & CB_FMT_BF16) {
            if (q.wide) ln_forward_rows<bf16, 8, 2 * LN_ROWS_NV><<<q.grid, CH_THREADS>>>(rows, c, q.G, eps, (const bf16 *)x, g, b, (bf16 *)y, stats);
            else ln_forward_rows<bf16, 8, LN_ROWS_NV><<<q.grid, CH_THREADS>>>(rows, c, q.G, eps, (const bf16 *)x, g, b, (bf16 *)y, stats);
        } else {
            if (q.wide) ln_forward_rows<float, 4, 2 * LN_ROWS_NV><<<q.grid, CH_THREADS>>>(rows, c, q.G, eps, (const float *)x, g, b, (float *)y, stats);
            else ln_forward_rows<float, 4, LN_ROWS_NV><<<q.grid, CH_THREADS>>>(rows, c, q.G, eps, (const float *)x, g, b, (float *)y, stats);
        }
        return;
    }
    if (fmt & CB_FMT_BF16) ln_forward_kernel<bf16><<<ln_grid(fmt, rows), CH_THREADS>>>(nhwc, rows, c, (size_t)hw, eps, (const bf16 *)x, g, b, (bf16 *)y, stats);
    else ln_forward_kernel<float><<<ln_grid(fmt, rows), CH_THREADS>>>(nhwc, rows, c, (size_t)hw, eps, (const float *)x, g, b, (float *)y, stats);
}

// per channel: s2 = sum of dy xhat (LN) or dy x, s1 = sum of dy, into dg and db (either NULL)
template <bool LN>
static void param_sums(int fmt, int n, int c, int64_t hw, const void *x, const void *dy, const float *stats, float *dg, float *db, float *part) {
    size_t rows = (size_t)n * hw;
    bool bf = fmt & CB_FMT_BF16, nhwc = fmt & CB_FMT_NHWC;
    // NHWC: chunks of 32 rows or more (a thread's loop over them), enough blocks for every SM on
    // small tensors too; NCHW: of 256 rows or more (a block's threads along them)
    size_t min_rows = nhwc ? 32 : 256, chunks = rows / min_rows ? rows / min_rows : 1;
    if (chunks > CB_FMT_BN_CHUNKS) chunks = CB_FMT_BN_CHUNKS;
    size_t per = (rows + chunks - 1) / chunks;
    int v = chan_vec_of(fmt, c, rows * c, x, dy, dy);
    if (v) { // (vectors: lanes along them that divide them, no lane idle, up to 32; chunks of 8 rows a row lane or more)
        int cv = c / v, lx = 1;
        while (lx < 32 && cv % (2 * lx) == 0) lx *= 2;
        size_t min_per = 8 * (size_t)(LN_PARAM_VEC_THREADS / lx);
        if (per < min_per) per = min_per, chunks = (rows + per - 1) / per;
        dim3 grid((unsigned)chunks, (unsigned)((cv + lx - 1) / lx));
        if (bf) ln_param_part_nhwc_vec<bf16, 8, LN><<<grid, LN_PARAM_VEC_THREADS>>>(rows, cv, lx, per, (const bf16 *)x, (const bf16 *)dy, stats, part);
        else ln_param_part_nhwc_vec<float, 4, LN><<<grid, LN_PARAM_VEC_THREADS>>>(rows, cv, lx, per, (const float *)x, (const float *)dy, stats, part);
    } else if (nhwc) { // (a block as wide as the channels, in warps, up to CH_THREADS)
        unsigned threads = c < CH_THREADS ? (unsigned)(c + 31) / 32 * 32 : CH_THREADS;
        dim3 grid((unsigned)chunks, (unsigned)((c + threads - 1) / threads));
        if (bf) ln_param_part_nhwc<bf16, LN><<<grid, threads>>>(rows, c, per, (const bf16 *)x, (const bf16 *)dy, stats, part);
        else ln_param_part_nhwc<float, LN><<<grid, threads>>>(rows, c, per, (const float *)x, (const float *)dy, stats, part);
    } else {
        dim3 grid((unsigned)chunks, (unsigned)c);
        if (bf) ln_param_part_nchw<bf16, LN><<<grid, CH_THREADS>>>(rows, c, (size_t)hw, per, (const bf16 *)x, (const bf16 *)dy, stats, part);
        else ln_param_part_nchw<float, LN><<<grid, CH_THREADS>>>(rows, c, (size_t)hw, per, (const float *)x, (const float *)dy, stats, part);
    }
    ln_param_finish<<<(unsigned)(c + 7) / 8, 256>>>(c, (int)chunks, part, db, dg);
}

extern "C" size_t cb_fmt_layernorm_scratch(int64_t c) { return (size_t)CB_FMT_BN_CHUNKS * 2 * (size_t)c; }

extern "C" void cb_fmt_layernorm_backward(int fmt, int n, int c, int64_t hw, const void *x, const float *g, const void *dy, const float *stats,
                                          void *dx, float *dg, float *db, float *part) {
    size_t rows = (size_t)n * hw;
    bool nhwc = fmt & CB_FMT_NHWC, bf = fmt & CB_FMT_BF16;
    ln_rows q = dx ? ln_rows_of(fmt, c, rows, x, dy, dx) : ln_rows{};
    if (q.G) {
        if (bf) {
            if (q.wide) ln_backward_rows<bf16, 8, 2 * LN_ROWS_NV><<<q.grid, CH_THREADS>>>(rows, c, q.G, (const bf16 *)x, g, (const bf16 *)dy, stats, (bf16 *)dx);
            else ln_backward_rows<bf16, 8, LN_ROWS_NV><<<q.grid, CH_THREADS>>>(rows, c, q.G, (const bf16 *)x, g, (const bf16 *)dy, stats, (bf16 *)dx);
        } else {
            if (q.wide) ln_backward_rows<float, 4, 2 * LN_ROWS_NV><<<q.grid, CH_THREADS>>>(rows, c, q.G, (const float *)x, g, (const float *)dy, stats, (float *)dx);
            else ln_backward_rows<float, 4, LN_ROWS_NV><<<q.grid, CH_THREADS>>>(rows, c, q.G, (const float *)x, g, (const float *)dy, stats, (float *)dx);
        }
    } else if (dx) {
        if (bf) ln_backward_kernel<bf16><<<ln_grid(fmt, rows), CH_THREADS>>>(nhwc, rows, c, (size_t)hw, (const bf16 *)x, g, (const bf16 *)dy, stats, (bf16 *)dx);
        else ln_backward_kernel<float><<<ln_grid(fmt, rows), CH_THREADS>>>(nhwc, rows, c, (size_t)hw, (const float *)x, g, (const float *)dy, stats, (float *)dx);
    }
    if (dg || db) param_sums<true>(fmt, n, c, hw, x, dy, stats, dg, db, part);
}

extern "C" void cb_fmt_scale_backward_filter(int fmt, int n, int c, int64_t hw, const void *x, const void *dy, float *dw, float *part) {
    param_sums<false>(fmt, n, c, hw, x, dy, nullptr, dw, nullptr, part);
}
