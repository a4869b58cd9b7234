// Depthwise convolution (one R x S filter per channel: groups == C == K), the layer MobileNet,
// EfficientNet and ConvNeXt are built on. It does a few multiply-adds per byte moved, so it is
// memory-bound, and a GEMM formulation (one 1 x RS by RS x NPQ product per channel) wastes the
// tensor cores; these kernels read each input once from DRAM and reuse it from L1 across the taps.
//
// Every phase, fp32 or bf16 elements, NCHW or NHWC, any stride, padding (leading pads given, the
// trailing ones implied by P and Q, so asymmetric SAME padding too) and dilation. Filters are
// (C, R, S) in the elements' type (KCRS and KRSC agree when C per group is 1). Arithmetic is fp32
// FMA; bf16 results are rounded to nearest even once, at the store.
//
// NHWC: a block is TX channel groups of V channels (V = 8 bf16 or 4 fp32, 16-byte accesses, when
// C and the pointers allow; else 2 or 1) by TY pixels, the slice's filters in shared memory in
// (tap, channel) order so a thread reads its V weights of a tap as one access; consecutive threads
// take consecutive channel groups of one pixel, so each warp access is one contiguous run.
// NCHW: one thread per output (input, for the data gradient) element, consecutive threads along a
// row; the filter taps come through L1 (a warp shares one channel's filter).
// The filter gradient sums over N*P*Q pixels: blocks over chunks of pixels write per-chunk partial
// sums (workspace: cb_cuda_dw_workspace), added in chunk order by a second kernel, so the result
// is deterministic.
#include "cuda/common.cuh"
#include "cuda/conv_algo.h"
#include "cuda/launch.h"

#include <cuda_bf16.h>
#include <stdint.h>

typedef __nv_bfloat16 bf16;

enum { DW_THREADS = 256, DW_SMEM = 24576, DW_MT = 8, DW_BLOCKS = 2048, DW_MAX_PART = 8 << 20 };

__device__ static __forceinline__ float dw_ld(const float *p) { return *p; }
__device__ static __forceinline__ float dw_ld(const bf16 *p) { return __bfloat162float(*p); }
__device__ static __forceinline__ void dw_st(float *p, float v) { *p = v; }
__device__ static __forceinline__ void dw_st(bf16 *p, float v) { *p = __float2bfloat16_rn(v); }

// V elements of T as one access of V * sizeof(T) bytes (the caller has checked the alignment)
template <class T, int V> struct alignas(sizeof(T) * V) dw_vec { T v[V]; };
template <class T, int V> __device__ static __forceinline__ void dw_load(const T *src, float *f) {
    dw_vec<T, V> e = *reinterpret_cast<const dw_vec<T, V> *>(src);
#pragma unroll
    for (int j = 0; j < V; j++) f[j] = dw_ld(&e.v[j]);
}
template <class T, int V> __device__ static __forceinline__ void dw_store(T *dst, const float *f) {
    dw_vec<T, V> e;
#pragma unroll
    for (int j = 0; j < V; j++) dw_st(&e.v[j], f[j]);
    *reinterpret_cast<dw_vec<T, V> *>(dst) = e;
}

typedef struct dw_geom {
    int n, c, h, w, p, q, r, s, sh, sw, pt, pl, dh, dw, rs;
} dw_geom;

static dw_geom geom_of(const cb_conv_params *p) {
    dw_geom g = {p->n, p->c, p->h, p->w, p->p, p->q, p->r, p->s, p->stride_h, p->stride_w, p->pad_top, p->pad_left,
                 p->dil_h > 1 ? p->dil_h : 1, p->dil_w > 1 ? p->dil_w : 1, p->r * p->s};
    return g;
}

// ---- NHWC ---------------------------------------------------------------------------------------

// The slice's filters to shared memory, (tap, channel) order: wsh[t * CS + cl] = w[(c0 + cl) * rs + t],
// 0 past C. Every thread of the block takes part.
template <class T>
__device__ static void dw_stage_filters(const dw_geom &g, const T *__restrict__ w, int c0, int cs, T *wsh) {
    int tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
    for (int i = tid; i < g.rs * cs; i += nt) {
        int t = i / cs, cl = i - t * cs, c = c0 + cl;
        if (c < g.c) wsh[i] = w[(size_t)c * g.rs + t];
        else dw_st(&wsh[i], 0.f);
    }
    __syncthreads();
}

// y (N, P, Q, C) = x (N, H, W, C) * w (+ b, then ReLU when relu). Block (TX, TY): TX channel
// groups of slice blockIdx.y, TY pixels per round, `rounds` rounds of consecutive pixels.
template <class T, int V>
__global__ void __launch_bounds__(DW_THREADS)
dw_nhwc_fwd_kernel(dw_geom g, int rounds, const T *__restrict__ x, const T *__restrict__ w, const float *__restrict__ b,
                   T *__restrict__ y, int relu) {
    __shared__ __align__(16) unsigned char smem[DW_SMEM];
    T *wsh = reinterpret_cast<T *>(smem);
    const int cs = blockDim.x * V, c = blockIdx.y * cs + threadIdx.x * V;
    dw_stage_filters(g, w, blockIdx.y * cs, cs, wsh);
    if (c >= g.c) return;
    float bias[V];
#pragma unroll
    for (int j = 0; j < V; j++) bias[j] = b ? b[c + j] : 0.f;
    const int64_t npq = (int64_t)g.n * g.p * g.q;
    for (int rd = 0; rd < rounds; rd++) {
        int64_t pix = ((int64_t)blockIdx.x * rounds + rd) * blockDim.y + threadIdx.y;
        if (pix >= npq) break;
        int ow = (int)(pix % g.q), oh = (int)(pix / g.q % g.p), n = (int)(pix / ((int64_t)g.q * g.p));
        int ih0 = oh * g.sh - g.pt, iw0 = ow * g.sw - g.pl;
        float acc[V];
#pragma unroll
        for (int j = 0; j < V; j++) acc[j] = bias[j];
        for (int kh = 0; kh < g.r; kh++) {
            int ih = ih0 + kh * g.dh;
            if ((unsigned)ih >= (unsigned)g.h) continue;
            const T *xrow = x + ((int64_t)n * g.h + ih) * g.w * g.c + c;
            const T *wrow = wsh + kh * g.s * cs + threadIdx.x * V;
            for (int kw = 0; kw < g.s; kw++) {
                int iw = iw0 + kw * g.dw;
                if ((unsigned)iw >= (unsigned)g.w) continue;
                float xv[V], wv[V];
                dw_load<T, V>(xrow + (int64_t)iw * g.c, xv);
                dw_load<T, V>(wrow + kw * cs, wv);
#pragma unroll
                for (int j = 0; j < V; j++) acc[j] = fmaf(xv[j], wv[j], acc[j]);
            }
        }
        if (relu)
#pragma unroll
            for (int j = 0; j < V; j++) acc[j] = fmaxf(acc[j], 0.f);
        dw_store<T, V>(y + pix * g.c + c, acc);
    }
}

// The common case at speed: stride 1, no dilation, a filter SK columns wide (3, 5, 7). A thread
// computes QT consecutive outputs of a row for its V channels: per filter row it loads the row's
// SK weight vectors (fp32, staged once per block) into registers and slides over the QT + SK - 1
// input columns, each loaded and converted once for up to SK taps. The data gradient at stride 1 is
// this correlation of dy with the filter rotated by 180 degrees (flip) and the pads mirrored
// (dw_fast_geom), so it runs the same kernel. Block (TX, TY): TX channel groups, TY strips.
enum { DW_QT = 4, DW_FAST_SMEM = 49152 };
// The sliding window of the stride-1 fast kernels: each of the QT + SK - 1 input columns of a row
// that lie inside the image (from column iw0; `step` elements apart: C under NHWC, 1 under NCHW)
// is loaded once as V floats, then f(q, kw, xv) runs for every output q of the strip whose tap kw
// reads it. Unrolled whole, so q and kw are constants in f.
template <class T, int V> __device__ static __forceinline__ dw_vec<T, V> dw_zero() {
    dw_vec<T, V> e;
#pragma unroll
    for (int j = 0; j < V; j++) dw_st(&e.v[j], 0.f);
    return e;
}
// HOIST (the forward and data-gradient kernels): every column's load is issued before the first
// FMA. With a load and its FMAs under one branch per column, the compiler kept that order, so each
// of a row's QT + SK - 1 loads waited out its latency in turn (stop 61: the SASS of both NHWC
// kernels; on the H200 per 20M bf16 elements, the pairs at 7x7 on planes of 14 and more 0.20-0.30 ->
// 0.18-0.21 ms, the 16-byte kernel at 3x3 0.082-0.101 -> 0.063-0.077: docs/results/2026-11-30-dwloads.md).
// A column outside the image holds zeros, its products added as zeros. The filter-gradient kernels
// keep the branch per column: their SK x V accumulators leave no registers for the loads in flight,
// and the hoisted form timed slower there (stage 0 of ConvNeXt-Tiny: 0.42 -> 0.60 ms).
template <class T, int V, int SK, bool HOIST = true, class F>
__device__ static __forceinline__ void dw_slide(const T *row, int iw0, int w, int64_t step, F f) {
    constexpr int COLS = DW_QT + SK - 1;
    if constexpr (HOIST) {
        dw_vec<T, V> raw[COLS];
#pragma unroll
        for (int col = 0; col < COLS; col++) {
            int iw = iw0 + col;
            raw[col] = (unsigned)iw < (unsigned)w ? *reinterpret_cast<const dw_vec<T, V> *>(row + (int64_t)iw * step) : dw_zero<T, V>();
        }
#pragma unroll
        for (int col = 0; col < COLS; col++) {
            float xv[V];
#pragma unroll
            for (int j = 0; j < V; j++) xv[j] = dw_ld(&raw[col].v[j]);
#pragma unroll
            for (int q = 0; q < DW_QT; q++) {
                const int kw = col - q;
                if (kw >= 0 && kw < SK) f(q, kw, xv);
            }
        }
    } else {
#pragma unroll
        for (int col = 0; col < COLS; col++) {
            int iw = iw0 + col;
            if ((unsigned)iw >= (unsigned)w) continue;
            float xv[V];
            dw_load<T, V>(row + (int64_t)iw * step, xv);
#pragma unroll
            for (int q = 0; q < DW_QT; q++) {
                const int kw = col - q;
                if (kw >= 0 && kw < SK) f(q, kw, xv);
            }
        }
    }
}

template <class T, int V, int SK>
__global__ void __launch_bounds__(DW_THREADS)
dw_nhwc_fast_kernel(dw_geom g, int rounds, int flip, const T *__restrict__ x, const T *__restrict__ w, const float *__restrict__ b,
                    T *__restrict__ y, int relu) {
    __shared__ __align__(16) float wsh[DW_FAST_SMEM / 4];
    const int cs = blockDim.x * V, c0 = blockIdx.y * cs, c = c0 + threadIdx.x * V;
    {
        int tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
        for (int i = tid; i < g.rs * cs; i += nt) {
            int t = i / cs, cc = c0 + (i - t * cs);
            wsh[i] = cc < g.c ? dw_ld(&w[(size_t)cc * g.rs + (flip ? g.rs - 1 - t : t)]) : 0.f;
        }
        __syncthreads();
    }
    if (c >= g.c) return;
    float bias[V];
#pragma unroll
    for (int j = 0; j < V; j++) bias[j] = b ? b[c + j] : 0.f;
    const int strips = (g.q + DW_QT - 1) / DW_QT;
    const int64_t total = (int64_t)g.n * g.p * strips;
    for (int rd = 0; rd < rounds; rd++) {
        int64_t sidx = ((int64_t)blockIdx.x * rounds + rd) * blockDim.y + threadIdx.y;
        if (sidx >= total) break;
        int sx = (int)(sidx % strips), oh = (int)(sidx / strips % g.p), n = (int)(sidx / ((int64_t)strips * g.p));
        int ow0 = sx * DW_QT, iw0 = ow0 - g.pl;
        float acc[DW_QT][V];
#pragma unroll
        for (int q = 0; q < DW_QT; q++)
#pragma unroll
            for (int j = 0; j < V; j++) acc[q][j] = bias[j];
        for (int kh = 0; kh < g.r; kh++) {
            int ih = oh - g.pt + kh;
            if ((unsigned)ih >= (unsigned)g.h) continue;
            float wr[SK][V];
#pragma unroll
            for (int kw = 0; kw < SK; kw++) {
                const float *ws = wsh + (kh * SK + kw) * cs + threadIdx.x * V;
#pragma unroll
                for (int j = 0; j < V; j++) wr[kw][j] = ws[j];
            }
            const T *xrow = x + ((int64_t)n * g.h + ih) * g.w * g.c + c;
            dw_slide<T, V, SK>(xrow, iw0, g.w, g.c, [&](int q, int kw, const float *xv) {
#pragma unroll
                for (int j = 0; j < V; j++) acc[q][j] = fmaf(xv[j], wr[kw][j], acc[q][j]);
            });
        }
        T *yrow = y + (((int64_t)n * g.p + oh) * g.q + ow0) * g.c + c;
#pragma unroll
        for (int q = 0; q < DW_QT; q++) {
            if (ow0 + q >= g.q) break;
            if (relu)
#pragma unroll
                for (int j = 0; j < V; j++) acc[q][j] = fmaxf(acc[q][j], 0.f);
            dw_store<T, V>(yrow + (int64_t)q * g.c, acc[q]);
        }
    }
}

// dx (N, H, W, C) = the gradient of the forward w.r.t. x, from dy (N, P, Q, C): a gather per input
// pixel over the outputs whose windows cover it (no atomics, dx written once). (Loading a filter
// row's taps of one phase together, as dw_slide does, timed slower here on the H200: EfficientNet-B0's
// stride-2 layers at b128 bf16, 0.31 -> 0.37 ms and 0.45 -> 0.48; stop 61, b788e32.)
template <class T, int V>
__global__ void __launch_bounds__(DW_THREADS)
dw_nhwc_bwd_data_kernel(dw_geom g, int rounds, const T *__restrict__ dy, const T *__restrict__ w, T *__restrict__ dx) {
    __shared__ __align__(16) unsigned char smem[DW_SMEM];
    T *wsh = reinterpret_cast<T *>(smem);
    const int cs = blockDim.x * V, c = blockIdx.y * cs + threadIdx.x * V;
    dw_stage_filters(g, w, blockIdx.y * cs, cs, wsh);
    if (c >= g.c) return;
    const int64_t nhw = (int64_t)g.n * g.h * g.w;
    for (int rd = 0; rd < rounds; rd++) {
        int64_t pix = ((int64_t)blockIdx.x * rounds + rd) * blockDim.y + threadIdx.y;
        if (pix >= nhw) break;
        int iw = (int)(pix % g.w), ih = (int)(pix / g.w % g.h), n = (int)(pix / ((int64_t)g.w * g.h));
        float acc[V];
#pragma unroll
        for (int j = 0; j < V; j++) acc[j] = 0.f;
        // without dilation only every sh-th tap can land on an output row (and sw-th column): start
        // at the first one of the right phase and step by the stride
        const int kh0 = g.dh == 1 ? ((ih + g.pt) % g.sh + g.sh) % g.sh : 0, khs = g.dh == 1 ? g.sh : 1;
        const int kw0 = g.dw == 1 ? ((iw + g.pl) % g.sw + g.sw) % g.sw : 0, kws = g.dw == 1 ? g.sw : 1;
        for (int kh = kh0; kh < g.r; kh += khs) {
            int th = ih + g.pt - kh * g.dh; // = oh * sh
            if (th < 0) break;              // (th falls as kh grows)
            int oh = th / g.sh;
            if (oh * g.sh != th || oh >= g.p) continue;
            const T *dyrow = dy + ((int64_t)n * g.p + oh) * g.q * g.c + c;
            const T *wrow = wsh + kh * g.s * cs + threadIdx.x * V;
            for (int kw = kw0; kw < g.s; kw += kws) {
                int tw = iw + g.pl - kw * g.dw;
                if (tw < 0) break;
                int ow = tw / g.sw;
                if (ow * g.sw != tw || ow >= g.q) continue;
                float dv[V], wv[V];
                dw_load<T, V>(dyrow + (int64_t)ow * g.c, dv);
                dw_load<T, V>(wrow + kw * cs, wv);
#pragma unroll
                for (int j = 0; j < V; j++) acc[j] = fmaf(dv[j], wv[j], acc[j]);
            }
        }
        dw_store<T, V>(dx + pix * g.c + c, acc);
    }
}

// part (chunks, rs, C): chunk blockIdx.x's sum over its pixels [pix0, pix0 + chunk) of
// dy (N, P, Q, C) * x at each tap. Block (TX, TT): thread (tx, ty) takes the channel group tx of
// slice blockIdx.y and the taps ty, ty + TT, ... (at most DW_MT of them).
template <class T, int V>
__global__ void __launch_bounds__(DW_THREADS)
dw_nhwc_bwd_filter_kernel(dw_geom g, int chunk, const T *__restrict__ x, const T *__restrict__ dy, float *__restrict__ part) {
    const int cs = blockDim.x * V, c = blockIdx.y * cs + threadIdx.x * V, tt = blockDim.y;
    if (c >= g.c) return;
    int kh[DW_MT], kw[DW_MT], taps = 0;
#pragma unroll
    for (int j = 0; j < DW_MT; j++) {
        int t = threadIdx.y + j * tt;
        if (t < g.rs) taps = j + 1;
        kh[j] = t / g.s, kw[j] = t - kh[j] * g.s;
    }
    float acc[DW_MT][V];
#pragma unroll
    for (int j = 0; j < DW_MT; j++)
#pragma unroll
        for (int v = 0; v < V; v++) acc[j][v] = 0.f;
    const int64_t npq = (int64_t)g.n * g.p * g.q, pix0 = (int64_t)blockIdx.x * chunk;
    const int64_t pix1 = pix0 + chunk < npq ? pix0 + chunk : npq;
    int ow = (int)(pix0 % g.q), oh = (int)(pix0 / g.q % g.p), n = (int)(pix0 / ((int64_t)g.q * g.p));
    for (int64_t pix = pix0; pix < pix1; pix++) {
        float dv[V];
        dw_load<T, V>(dy + pix * g.c + c, dv);
        const int ih0 = oh * g.sh - g.pt, iw0 = ow * g.sw - g.pl;
        const T *ximg = x + (int64_t)n * g.h * g.w * g.c + c;
#pragma unroll
        for (int j = 0; j < DW_MT; j++) {
            if (j >= taps) break;
            int ih = ih0 + kh[j] * g.dh, iw = iw0 + kw[j] * g.dw;
            if ((unsigned)ih >= (unsigned)g.h || (unsigned)iw >= (unsigned)g.w) continue;
            float xv[V];
            dw_load<T, V>(ximg + ((int64_t)ih * g.w + iw) * g.c, xv);
#pragma unroll
            for (int v = 0; v < V; v++) acc[j][v] = fmaf(dv[v], xv[v], acc[j][v]);
        }
        if (++ow == g.q) {
            ow = 0;
            if (++oh == g.p) oh = 0, n++;
        }
    }
#pragma unroll
    for (int j = 0; j < DW_MT; j++) {
        if (j >= taps) break;
        float *dst = part + ((int64_t)blockIdx.x * g.rs + threadIdx.y + j * tt) * g.c + c;
#pragma unroll
        for (int v = 0; v < V; v++) dst[v] = acc[j][v];
    }
}

// The filter gradient's common case at speed: stride 1, no dilation, SK columns (3, 5, 7). Thread
// (tx, ty) takes channel group tx, filter row kh = ty % R and lane ty / R; each (block, lane) is one
// partial-sum slot of part (slots, rs, C) over a contiguous range of strips (QT outputs of a row).
// Per strip it loads the QT output gradients once and slides over the QT + SK - 1 input columns of
// row oh + kh - pt, each loaded once for up to SK taps: SK accumulators of V channels.
template <class T, int V, int SK>
__global__ void __launch_bounds__(DW_THREADS)
dw_nhwc_fast_wgrad_kernel(dw_geom g, int64_t per, const T *__restrict__ x, const T *__restrict__ dy, float *__restrict__ part) {
    const int cs = blockDim.x * V, c = blockIdx.y * cs + threadIdx.x * V;
    const int kh = threadIdx.y % g.r, lane = threadIdx.y / g.r, lanes = blockDim.y / g.r;
    if (c >= g.c || lane >= lanes) return;
    const int64_t slot = (int64_t)blockIdx.x * lanes + lane;
    const int strips = (g.q + DW_QT - 1) / DW_QT;
    const int64_t total = (int64_t)g.n * g.p * strips, s0 = slot * per, s1 = s0 + per < total ? s0 + per : total;
    float acc[SK][V];
#pragma unroll
    for (int k = 0; k < SK; k++)
#pragma unroll
        for (int j = 0; j < V; j++) acc[k][j] = 0.f;
    int sx = (int)(s0 % strips), oh = (int)(s0 / strips % g.p), n = (int)(s0 / ((int64_t)strips * g.p));
    for (int64_t sidx = s0; sidx < s1; sidx++) {
        const int ih = oh - g.pt + kh, ow0 = sx * DW_QT;
        if ((unsigned)ih < (unsigned)g.h) {
            float dv[DW_QT][V];
            const T *dyrow = dy + (((int64_t)n * g.p + oh) * g.q + ow0) * g.c + c;
#pragma unroll
            for (int q = 0; q < DW_QT; q++) {
                if (ow0 + q < g.q) dw_load<T, V>(dyrow + (int64_t)q * g.c, dv[q]);
                else
#pragma unroll
                    for (int j = 0; j < V; j++) dv[q][j] = 0.f;
            }
            const T *xrow = x + ((int64_t)n * g.h + ih) * g.w * g.c + c;
            dw_slide<T, V, SK, false>(xrow, ow0 - g.pl, g.w, g.c, [&](int q, int kw, const float *xv) {
#pragma unroll
                for (int j = 0; j < V; j++) acc[kw][j] = fmaf(dv[q][j], xv[j], acc[kw][j]);
            });
        }
        if (++sx == strips) {
            sx = 0;
            if (++oh == g.p) oh = 0, n++;
        }
    }
#pragma unroll
    for (int kw = 0; kw < SK; kw++) {
        float *dst = part + (slot * g.rs + kh * SK + kw) * g.c + c;
#pragma unroll
        for (int j = 0; j < V; j++) dst[j] = acc[kw][j];
    }
}

// ---- NCHW ---------------------------------------------------------------------------------------

// y (N, C, P, Q) = x (N, C, H, W) * w (+ b, ReLU): one thread per output element
template <class T>
__global__ void __launch_bounds__(DW_THREADS)
dw_nchw_fwd_kernel(dw_geom g, int64_t total, const T *__restrict__ x, const T *__restrict__ w, const float *__restrict__ b,
                   T *__restrict__ y, int relu) {
    CB_FOR(o, (size_t)total) {
        int ow = (int)(o % g.q), oh = (int)(o / g.q % g.p);
        int64_t plane = (int64_t)(o / ((size_t)g.q * g.p));
        int c = (int)(plane % g.c);
        const T *xp = x + plane * g.h * g.w, *wc = w + (int64_t)c * g.rs;
        float acc = b ? b[c] : 0.f;
        const int ih0 = oh * g.sh - g.pt, iw0 = ow * g.sw - g.pl;
        for (int kh = 0; kh < g.r; kh++) {
            int ih = ih0 + kh * g.dh;
            if ((unsigned)ih >= (unsigned)g.h) continue;
            for (int kw = 0; kw < g.s; kw++) {
                int iw = iw0 + kw * g.dw;
                if ((unsigned)iw >= (unsigned)g.w) continue;
                acc = fmaf(dw_ld(&xp[(int64_t)ih * g.w + iw]), dw_ld(&wc[kh * g.s + kw]), acc);
            }
        }
        dw_st(&y[o], relu ? fmaxf(acc, 0.f) : acc);
    }
}

// dx (N, C, H, W) from dy (N, C, P, Q): one thread per input element, a gather
template <class T>
__global__ void __launch_bounds__(DW_THREADS)
dw_nchw_bwd_data_kernel(dw_geom g, int64_t total, const T *__restrict__ dy, const T *__restrict__ w, T *__restrict__ dx) {
    CB_FOR(o, (size_t)total) {
        int iw = (int)(o % g.w), ih = (int)(o / g.w % g.h);
        int64_t plane = (int64_t)(o / ((size_t)g.w * g.h));
        int c = (int)(plane % g.c);
        const T *dyp = dy + plane * g.p * g.q, *wc = w + (int64_t)c * g.rs;
        float acc = 0.f;
        const int kh0 = g.dh == 1 ? ((ih + g.pt) % g.sh + g.sh) % g.sh : 0, khs = g.dh == 1 ? g.sh : 1; // (as the NHWC kernel)
        const int kw0 = g.dw == 1 ? ((iw + g.pl) % g.sw + g.sw) % g.sw : 0, kws = g.dw == 1 ? g.sw : 1;
        for (int kh = kh0; kh < g.r; kh += khs) {
            int th = ih + g.pt - kh * g.dh;
            if (th < 0) break;
            int oh = th / g.sh;
            if (oh * g.sh != th || oh >= g.p) continue;
            for (int kw = kw0; kw < g.s; kw += kws) {
                int tw = iw + g.pl - kw * g.dw;
                if (tw < 0) break;
                int ow = tw / g.sw;
                if (ow * g.sw != tw || ow >= g.q) continue;
                acc = fmaf(dw_ld(&dyp[(int64_t)oh * g.q + ow]), dw_ld(&wc[kh * g.s + kw]), acc);
            }
        }
        dw_st(&dx[o], acc);
    }
}

// NCHW at stride 1, no dilation, SK columns (3, 5, 7): a thread per strip of QT outputs of a row,
// the row's SK taps in registers (one channel per warp, mostly: broadcast loads) and QT + SK - 1
// input loads per filter row. flip: the data gradient (dw_fast_geom's mirrored geometry).
template <class T, int SK>
__global__ void __launch_bounds__(DW_THREADS)
dw_nchw_fast_kernel(dw_geom g, int64_t total, int flip, const T *__restrict__ x, const T *__restrict__ w, const float *__restrict__ b,
                    T *__restrict__ y, int relu) {
    const int strips = (g.q + DW_QT - 1) / DW_QT;
    CB_FOR(o, (size_t)total) {
        int sx = (int)(o % strips), oh = (int)(o / strips % g.p);
        int64_t plane = (int64_t)(o / ((size_t)strips * g.p));
        int c = (int)(plane % g.c), ow0 = sx * DW_QT, iw0 = ow0 - g.pl;
        const T *xp = x + plane * g.h * g.w, *wc = w + (int64_t)c * g.rs;
        float acc[DW_QT];
#pragma unroll
        for (int q = 0; q < DW_QT; q++) acc[q] = b ? b[c] : 0.f;
        for (int kh = 0; kh < g.r; kh++) {
            int ih = oh - g.pt + kh;
            if ((unsigned)ih >= (unsigned)g.h) continue;
            float wr[SK];
#pragma unroll
            for (int kw = 0; kw < SK; kw++) {
                int t = kh * SK + kw;
                wr[kw] = dw_ld(&wc[flip ? g.rs - 1 - t : t]);
            }
            dw_slide<T, 1, SK>(xp + (int64_t)ih * g.w, iw0, g.w, 1,
                               [&](int q, int kw, const float *xv) { acc[q] = fmaf(xv[0], wr[kw], acc[q]); });
        }
        T *yrow = y + (plane * g.p + oh) * g.q + ow0;
#pragma unroll
        for (int q = 0; q < DW_QT; q++)
            if (ow0 + q < g.q) dw_st(&yrow[q], relu ? fmaxf(acc[q], 0.f) : acc[q]);
    }
}

// NCHW filter gradient at stride 1, no dilation, SK columns: block (channel blockIdx.y, chunk
// blockIdx.x of `imgs` images), thread (kh = tid % R, lane = tid / R) over strips of its images,
// SK sums in registers, then the lanes added in a fixed order through shared memory
template <class T, int SK>
__global__ void __launch_bounds__(DW_THREADS)
dw_nchw_fast_wgrad_kernel(dw_geom g, int imgs, const T *__restrict__ x, const T *__restrict__ dy, float *__restrict__ part) {
    __shared__ float red[DW_THREADS][SK];
    const int c = blockIdx.y, n0 = blockIdx.x * imgs, n1 = n0 + imgs < g.n ? n0 + imgs : g.n;
    const int kh = threadIdx.x % g.r, lane = threadIdx.x / g.r, lanes = blockDim.x / g.r;
    const int strips = (g.q + DW_QT - 1) / DW_QT;
    const int64_t count = (int64_t)(n1 - n0) * g.p * strips;
    float acc[SK];
#pragma unroll
    for (int k = 0; k < SK; k++) acc[k] = 0.f;
    if (lane < lanes)
        for (int64_t i = lane; i < count; i += lanes) {
            int sx = (int)(i % strips), oh = (int)(i / strips % g.p), n = n0 + (int)(i / ((int64_t)strips * g.p));
            int ih = oh - g.pt + kh, ow0 = sx * DW_QT, iw0 = ow0 - g.pl;
            if ((unsigned)ih >= (unsigned)g.h) continue;
            int64_t plane = (int64_t)n * g.c + c;
            const T *dyrow = dy + (plane * g.p + oh) * g.q + ow0, *xrow = x + (plane * g.h + ih) * g.w;
            float dv[DW_QT];
#pragma unroll
            for (int q = 0; q < DW_QT; q++) dv[q] = ow0 + q < g.q ? dw_ld(&dyrow[q]) : 0.f;
            dw_slide<T, 1, SK, false>(xrow, iw0, g.w, 1, [&](int q, int kw, const float *xv) { acc[kw] = fmaf(dv[q], xv[0], acc[kw]); });
        }
#pragma unroll
    for (int k = 0; k < SK; k++) red[threadIdx.x][k] = acc[k];
    __syncthreads();
    if ((int)threadIdx.x < g.rs) { // thread t: tap (t / SK, t % SK), the lanes of row t / SK in order
        int r = threadIdx.x / SK, k = threadIdx.x % SK;
        float s = 0.f;
        for (int l = 0; l < lanes; l++) s += red[l * g.r + r][k];
        part[((int64_t)blockIdx.x * g.rs + threadIdx.x) * g.c + c] = s;
    }
}

// part (chunks, rs, C): block (channel blockIdx.y, chunk blockIdx.x of `imgs` images) sums
// dy * x at each tap over its images' planes, one block reduction per tap
template <class T>
__global__ void __launch_bounds__(DW_THREADS)
dw_nchw_bwd_filter_kernel(dw_geom g, int imgs, const T *__restrict__ x, const T *__restrict__ dy, float *__restrict__ part) {
    const int c = blockIdx.y, n0 = blockIdx.x * imgs, n1 = n0 + imgs < g.n ? n0 + imgs : g.n;
    const int pq = g.p * g.q;
    const int64_t count = (int64_t)(n1 - n0) * pq;
    for (int t = 0; t < g.rs; t++) {
        const int kh = t / g.s, kw = t - kh * g.s;
        float s = 0.f;
        for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
            int n = n0 + (int)(i / pq), o = (int)(i % pq), oh = o / g.q, ow = o - oh * g.q;
            int ih = oh * g.sh - g.pt + kh * g.dh, iw = ow * g.sw - g.pl + kw * g.dw;
            if ((unsigned)ih >= (unsigned)g.h || (unsigned)iw >= (unsigned)g.w) continue;
            int64_t plane = (int64_t)n * g.c + c;
            s = fmaf(dw_ld(&dy[plane * pq + o]), dw_ld(&x[(plane * g.h + ih) * g.w + iw]), s);
        }
        s = cb_block_sum(s);
        if (threadIdx.x == 0) part[((int64_t)blockIdx.x * g.rs + t) * g.c + c] = s;
    }
}

// dw (C, rs) = the sum over chunks of part (chunks, rs, C), in chunk order
template <class T>
__global__ void __launch_bounds__(DW_THREADS) dw_reduce_kernel(dw_geom g, int chunks, const float *__restrict__ part, T *__restrict__ dw) {
    CB_FOR(i, (size_t)g.rs * g.c) {
        int t = (int)(i / g.c), c = (int)(i % g.c);
        float s = 0.f;
        for (int k = 0; k < chunks; k++) s += part[((int64_t)k * g.rs + t) * g.c + c];
        dw_st(&dw[(int64_t)c * g.rs + t], s);
    }
}

// ---- launch geometry ----------------------------------------------------------------------------

// the stride-1 fast kernels take 3, 5 or 7 columns without dilation
static bool fast_shape(const cb_conv_params *p) {
    return p->stride_h == 1 && p->stride_w == 1 && p->dil_h <= 1 && p->dil_w <= 1 && (p->s == 3 || p->s == 5 || p->s == 7);
}


// the widest V (16 bytes down to one element) that divides C and keeps the pointers aligned
static int vec_of(const cb_conv_params *p, int bf16, const void *a, const void *b) {
    int v = bf16 ? 8 : 4;
    size_t es = bf16 ? 2 : 4;
    while (v > 1 && (p->c % v || (uintptr_t)a % (v * es) || (uintptr_t)b % (v * es))) v /= 2;
    return v;
}

// NHWC blocks: tx channel groups (balanced over the slices, the slice's filters within DW_SMEM)
typedef struct nhwc_grid {
    int tx, ty, slices;
} nhwc_grid;
static nhwc_grid nhwc_grid_of(const cb_conv_params *p, int v, size_t es) {
    int groups = p->c / v, cap = (int)(DW_SMEM / ((size_t)p->r * p->s * v * es));
    if (cap > 32) cap = 32;
    if (cap < 1) cap = 1;
    nhwc_grid g;
    g.slices = (groups + cap - 1) / cap;
    g.tx = (groups + g.slices - 1) / g.slices;
    g.ty = DW_THREADS / g.tx;
    return g;
}

// rounds of ty pixels per block: enough blocks to fill the GPU, fewer filter loads per pixel
static int rounds_of(int64_t pixels, int ty, int slices) {
    int64_t blocks = (pixels + ty - 1) / ty * slices, r = blocks / DW_BLOCKS;
    return (int)(r < 1 ? 1 : r > 16 ? 16 : r);
}

// the filter gradient's chunks, from p alone (the workspace is sized before the pointers are
// known): about DW_BLOCKS blocks with the widest vectors (NHWC: 256 channels a slice; NCHW: one
// channel a block), the partial sums within DW_MAX_PART floats. Pixels (NHWC) or images (NCHW)
// per chunk; *chunks their count.
static int64_t chunk_of(const cb_conv_params *p, int nhwc, int64_t *chunks) {
    int64_t npq = (int64_t)p->n * p->p * p->q, per = (int64_t)p->r * p->s * p->c, items = nhwc ? npq : p->n;
    int64_t k = nhwc ? DW_BLOCKS / ((p->c + 255) / 256) : DW_BLOCKS / p->c;
    if (nhwc && k > (npq + 15) / 16) k = (npq + 15) / 16; // 16 pixels a chunk at least
    if (k > items) k = items;
    if (k > DW_MAX_PART / per) k = DW_MAX_PART / per;
    if (k < 1) k = 1;
    int64_t chunk = (items + k - 1) / k;
    *chunks = (items + chunk - 1) / chunk;
    return chunk;
}
// the NHWC filter-gradient block: taps over ty, at most DW_MT per thread
static bool wgrad_block(const cb_conv_params *p, int v, int *tx, int *tt, int *slices) {
    int groups = p->c / v, rs = p->r * p->s;
    for (int cap = 32; cap >= 1; cap /= 2) {
        int sl = (groups + cap - 1) / cap, x = (groups + sl - 1) / sl, t = DW_THREADS / x;
        if (t > rs) t = rs;
        if ((rs + t - 1) / t <= DW_MT) {
            *tx = x, *tt = t, *slices = sl;
            return true;
        }
    }
    return false;
}

// ---- entry points -------------------------------------------------------------------------------

extern "C" bool cb_cuda_dw_supports(const cb_conv_params *p) {
    if (p->groups != p->c || p->k != p->c || p->c < 1 || p->n < 1 || p->p < 1 || p->q < 1) return false;
    if (p->stride_h < 1 || p->stride_w < 1 || p->r < 1 || p->s < 1) return false;
    int64_t rs = (int64_t)p->r * p->s;
    if (rs * 16 > DW_SMEM || p->c > 65535) return false; // the filter slice in shared memory; grid.y
    int64_t in = (int64_t)p->n * p->c * p->h * p->w, out = (int64_t)p->n * p->c * p->p * p->q;
    return in < ((int64_t)1 << 31) && out < ((int64_t)1 << 31);
}

extern "C" size_t cb_cuda_dw_workspace(const cb_conv_params *p, int nhwc) {
    int64_t chunks;
    chunk_of(p, nhwc, &chunks);
    return (size_t)chunks * p->r * p->s * p->c * sizeof(float);
}

// a vector width of at most 16 bytes (the fp32 instances of the bf16 widths)
static constexpr int vcap(size_t es, int v) { return v * es <= 16 ? v : (int)(16 / es); }

// the fast kernels' filter widths: CALL(A, 3), CALL(A, 5) or CALL(A, 7) by S_ (A: passed through)
#define DW_SK_CASES(S_, CALL, A)                                                                                       \
    do {                                                                                                               \
        if ((S_) == 3) CALL(A, 3);                                                                                     \
        else if ((S_) == 5) CALL(A, 5);                                                                                \
        else CALL(A, 7);                                                                                               \
    } while (0)

#define DW_VEC_CASES(V_, CALL)                                                                                         \
    switch (V_) {                                                                                                      \
    case 8: CALL(8); break;                                                                                            \
    case 4: CALL(4); break;                                                                                            \
    case 2: CALL(2); break;                                                                                            \
    default: CALL(1); break;                                                                                           \
    }

// the fast kernel's geometry and block for p (forward) or its data gradient (bwd: the correlation
// of dy with the rotated filter, dy's pads mirrored); false where it does not apply
static bool dw_fast_geom(const cb_conv_params *p, bool bwd, int v, dw_geom *g, nhwc_grid *ng) {
    if (!fast_shape(p)) return false;
    *g = geom_of(p);
    if (bwd) { // dx (H, W) from dy (P, Q): leading pads r - 1 - pt, s - 1 - pl
        g->h = p->p, g->w = p->q, g->p = p->h, g->q = p->w;
        g->pt = p->r - 1 - p->pad_top, g->pl = p->s - 1 - p->pad_left;
    }
    int groups = p->c / v, cap = (int)(DW_FAST_SMEM / ((size_t)p->r * p->s * v * 4));
    if (cap > 32) cap = 32;
    if (cap < 1) return false;
    ng->slices = (groups + cap - 1) / cap;
    ng->tx = (groups + ng->slices - 1) / ng->slices;
    ng->ty = DW_THREADS / ng->tx;
    return true;
}

// The fast kernels' widest vector (elements): 8 bf16 with every column's load in flight costs the
// forward 190 registers at 7 columns (-Xptxas -v), and timed 2x slower than 4 on the H200 (stop 61,
// dev/cuda/dw_lab.sh: 0.42-0.58 against 0.21-0.25 ms per 20M elements at 7x7).
#ifndef DW_FAST_VMAX
#define DW_FAST_VMAX 4
#endif
#ifndef DW_WGRAD_VMAX // (the filter gradient's, which keeps its loads under a branch each: dw_slide)
#define DW_WGRAD_VMAX 8
#endif
template <class T>
static void launch_fast(const cb_conv_params *p, bool bwd, int v, const T *x, const T *w, const float *b, T *y, int relu, bool *done) {
    if (v > DW_FAST_VMAX) v = DW_FAST_VMAX;
    dw_geom g;
    nhwc_grid ng;
    *done = dw_fast_geom(p, bwd, v, &g, &ng);
    if (!*done) return;
    int64_t strips = (int64_t)g.n * g.p * ((g.q + DW_QT - 1) / DW_QT);
    int rounds = rounds_of(strips, ng.ty, ng.slices);
    dim3 grid((unsigned)((strips + (int64_t)ng.ty * rounds - 1) / ((int64_t)ng.ty * rounds)), (unsigned)ng.slices), blk(ng.tx, ng.ty);
    int flip = bwd;
#define FAST(V, S) dw_nhwc_fast_kernel<T, vcap(sizeof(T), V), S><<<grid, blk>>>(g, rounds, flip, x, w, b, y, relu)
#define FAST_S(V) DW_SK_CASES(p->s, FAST, V)
    DW_VEC_CASES(v, FAST_S)
#undef FAST_S
#undef FAST
}

// NHWC at stride 1 (3, 5 or 7 columns), two channels a thread: the fast kernel above moves 16 bytes
// of up to 8 channels an access and holds their filter row in registers, read again from shared
// memory for every strip (stop 60 guessed its data path bound it; stop 61 found its loads waiting
// in turn, and this kernel's instructions three to one against its FMAs). Here a warp's 32 lanes take 32 adjacent channel
// pairs of one pixel (one 128-byte line of bf16), a thread holds its pair's filter row (SK pairs)
// while it slides over QT + SK - 1 input columns for QT outputs, and a block is RL output rows of
// one image (the input rows they share stay in L1) by CPB channel pairs, walking the rows' strips
// (every gridDim.z-th), its filter slice staged once. Same sums in the same order as the kernels
// above (fp32 FMA over the taps, row by row), so the same results bit for bit.
struct alignas(8) dw_wpair { float a, b; };
enum { DW_PAIR_SMEM = 49152 };
#ifndef DW_PAIR_CPB_MAX
#define DW_PAIR_CPB_MAX 64 // the most channel pairs a block (dev/cuda/dw_lab.sh builds others)
#endif
// a pair of channels as one access, and its two values as floats (bf16: the bits moved, no rounding)
__device__ static __forceinline__ void dw_pair_f(const dw_vec<float, 2> &e, float &lo, float &hi) { lo = e.v[0], hi = e.v[1]; }
__device__ static __forceinline__ void dw_pair_f(const dw_vec<bf16, 2> &e, float &lo, float &hi) {
    uint32_t u = *reinterpret_cast<const uint32_t *>(&e);
    lo = __uint_as_float(u << 16), hi = __uint_as_float(u & 0xffff0000u);
}
// A thread's filter taps (SK x R pairs) lie together in shared memory (wsh[cl * rs + t]), so a row's
// SK reads take immediate offsets; a strip whose columns all lie inside the row runs without a
// bounds test per column. Stop 61: the loop over a filter row (7x7, QT 8) had 433 instructions for
// its 112 FMAs (SASS: addresses, bounds tests and bf16 conversions the rest), now 215 on a strip
// inside the row; on the H200 ConvNeXt-Tiny b64's stage-0 forward 0.19 -> 0.13 ms, ahead of cuDNN's.
template <class T, int SK, int QT>
__global__ void __launch_bounds__(DW_THREADS)
dw_nhwc_pair_kernel(dw_geom g, int cpb, int rl, int flip, const T *__restrict__ x, const T *__restrict__ w, const float *__restrict__ b,
                    T *__restrict__ y, int relu) {
    __shared__ dw_wpair wsh[DW_PAIR_SMEM / sizeof(dw_wpair)];
    const int tid = threadIdx.x, cl = tid % cpb, r = tid / cpb, cp0 = blockIdx.y * cpb, pairs = g.c / 2;
    for (int i = tid; i < g.rs * cpb; i += blockDim.x) {
        int l = i / g.rs, t = i - l * g.rs, cp = cp0 + l, tt = flip ? g.rs - 1 - t : t;
        dw_wpair v = {0.f, 0.f};
        if (cp < pairs) v.a = dw_ld(&w[(size_t)(2 * cp) * g.rs + tt]), v.b = dw_ld(&w[(size_t)(2 * cp + 1) * g.rs + tt]);
        wsh[i] = v;
    }
    __syncthreads();
    const int rgroups = (g.p + rl - 1) / rl, n = blockIdx.x / rgroups, oh = (blockIdx.x - n * rgroups) * rl + r, c = 2 * (cp0 + cl);
    if (r >= rl || cp0 + cl >= pairs || oh >= g.p) return;
    const float b0 = b ? b[c] : 0.f, b1 = b ? b[c + 1] : 0.f;
    const dw_wpair *wt = wsh + cl * g.rs;
    const int64_t cstep = g.c;
    const T *img = x + (int64_t)n * g.h * g.w * cstep + c;
    constexpr int COLS = QT + SK - 1;
    for (int ow0 = blockIdx.z * QT; ow0 < g.q; ow0 += QT * gridDim.z) {
        float a0[QT], a1[QT];
#pragma unroll
        for (int q = 0; q < QT; q++) a0[q] = b0, a1[q] = b1;
        const int iw0 = ow0 - g.pl;
        const bool edge = iw0 < 0 || iw0 + COLS > g.w;
        for (int kh = 0; kh < g.r; kh++) {
            int ih = oh - g.pt + kh;
            if ((unsigned)ih >= (unsigned)g.h) continue;
            const T *row = img + ((int64_t)ih * g.w + iw0) * cstep;
            dw_vec<T, 2> raw[COLS]; // (every load before the first FMA, as dw_slide)
            if (edge) {
#pragma unroll
                for (int col = 0; col < COLS; col++)
                    raw[col] = (unsigned)(iw0 + col) < (unsigned)g.w ? *reinterpret_cast<const dw_vec<T, 2> *>(row + col * cstep) : dw_zero<T, 2>();
            } else {
#pragma unroll
                for (int col = 0; col < COLS; col++) raw[col] = *reinterpret_cast<const dw_vec<T, 2> *>(row + col * cstep);
            }
            dw_wpair wr[SK];
#pragma unroll
            for (int kw = 0; kw < SK; kw++) wr[kw] = wt[kh * SK + kw];
#pragma unroll
            for (int col = 0; col < COLS; col++) {
                float x0, x1;
                dw_pair_f(raw[col], x0, x1);
#pragma unroll
                for (int q = 0; q < QT; q++) {
                    const int kw = col - q;
                    if (kw >= 0 && kw < SK) a0[q] = fmaf(x0, wr[kw].a, a0[q]), a1[q] = fmaf(x1, wr[kw].b, a1[q]);
                }
            }
        }
        T *yrow = y + (((int64_t)n * g.p + oh) * g.q + ow0) * cstep + c;
#pragma unroll
        for (int q = 0; q < QT; q++) {
            if (ow0 + q >= g.q) break;
            float o[2] = {relu ? fmaxf(a0[q], 0.f) : a0[q], relu ? fmaxf(a1[q], 0.f) : a1[q]};
            dw_store<T, 2>(yrow + q * cstep, o);
        }
    }
}

// Which of the two stride-1 NHWC kernels runs: cb_cuda_dw_pair's mode ($CONVBENCH_DW_PAIR: 1 on,
// 0 off), else (-1, unset) the caller's `pairs` (the cudnn backend's race, per layer and phase; 0
// elsewhere). Timed on the H200 (stop 60, docs/results/2026-11-29-actgrad.md), same call, b64/b128
// bf16: the pairs 5-20% faster on 28x28 planes and smaller (ConvNeXt-Tiny stages 1-3,
// EfficientNet-B0's 28x28 and 14x14 blocks), 13-24% slower on 56x56 and 112x112 (ConvNeXt's stage 0:
// 0.276 ms against 0.237). Both kernels then held each column's load latency in turn (dw_slide).
// Stop 61 (dev/cuda/dw_lab.sh, 20M bf16 elements, the H200), with the loads in flight together and
// the pair kernel's addressing and bf16 unpacking cut down: the pairs 0.123-0.141 ms at 7x7 on planes
// of 56 and 112, 0.151-0.167 at 28, 0.177-0.202 at 14 (the 16-byte kernel 0.20-0.25 on each), but
// 0.231-0.257 on 7x7 planes against 0.214-0.234 (every strip there tests its columns); at 3x3 the
// pairs lead on planes of 14 and more, trail on 7x7 ones: so neither is taken everywhere.
static int dw_pair_mode = -1;
extern "C" void cb_cuda_dw_pair(int mode) { dw_pair_mode = mode; }
static bool dw_pair_on(bool take) { return dw_pair_mode >= 0 ? dw_pair_mode == 1 : take; }

// the pairs' channel pairs a block (cap; 0: they do not apply to p, NHWC: C odd, not stride 1 with
// 3, 5 or 7 columns, or fewer than 8 pairs' filters fit in shared memory)
static int pair_cap(const cb_conv_params *p) {
    dw_geom g;
    nhwc_grid ng;
    if (p->c % 2 || !dw_fast_geom(p, false, 1, &g, &ng)) return 0;
    int cap = (int)(DW_PAIR_SMEM / ((size_t)g.rs * sizeof(dw_wpair)));
    return cap < 8 ? 0 : cap > DW_PAIR_CPB_MAX ? DW_PAIR_CPB_MAX : cap;
}
extern "C" bool cb_cuda_dw_pair_applies(const cb_conv_params *p) { return pair_cap(p) > 0; }

// the pair kernel for p (forward) or its data gradient (bwd), where it applies (pair_cap) and is on
// (dw_pair_on), every pointer aligned to a pair
template <class T>
static bool launch_pairs(const cb_conv_params *p, bool bwd, bool take, const T *x, const T *w, const float *b, T *y, int relu) {
    dw_geom g;
    nhwc_grid ng;
    int cap = pair_cap(p);
    if (!dw_pair_on(take) || !cap || ((uintptr_t)x | (uintptr_t)y) % (2 * sizeof(T)) || !dw_fast_geom(p, bwd, 1, &g, &ng)) return false;
    int pairs = p->c / 2;
    int slices = (pairs + cap - 1) / cap, cpb = (pairs + slices - 1) / slices, rl = DW_THREADS / cpb;
    int64_t rowblocks = (int64_t)g.n * ((g.p + rl - 1) / rl);
    if (rowblocks > 0x7fffffff || slices > 65535) return false;
    const bool wide = g.q >= 8;
    int strips = (g.q + (wide ? 8 : 4) - 1) / (wide ? 8 : 4);
    int64_t blocks = rowblocks * slices, z = blocks >= 512 ? 1 : (512 + blocks - 1) / blocks; // (few blocks: the strips split too)
    if (z > strips) z = strips;
    dim3 grid((unsigned)rowblocks, (unsigned)slices, (unsigned)z), blk((unsigned)(cpb * rl));
    int flip = bwd;
#define PAIR(QT_, S) dw_nhwc_pair_kernel<T, S, QT_><<<grid, blk>>>(g, cpb, rl, flip, x, w, b, y, relu)
    if (wide) DW_SK_CASES(p->s, PAIR, 8);
    else DW_SK_CASES(p->s, PAIR, 4);
#undef PAIR
    return true;
}

// the NCHW fast kernel where it applies (forward, or the data gradient when bwd); false: not taken
template <class T>
static bool nchw_fast(const cb_conv_params *p, bool bwd, const T *x, const T *w, const float *b, T *y, int relu) {
    dw_geom g;
    nhwc_grid ng;
    if (!dw_fast_geom(p, bwd, 1, &g, &ng)) return false;
    int64_t total = (int64_t)g.n * g.c * g.p * ((g.q + DW_QT - 1) / DW_QT);
    int flip = bwd;
    unsigned blocks = cb_blocks((size_t)total, DW_THREADS);
#define NF(T_, S) dw_nchw_fast_kernel<T_, S><<<blocks, DW_THREADS>>>(g, total, flip, x, w, b, y, relu)
    DW_SK_CASES(p->s, NF, T);
#undef NF
    return true;
}

template <class T>
static void forward_t(const cb_conv_params *p, int nhwc, const T *x, const T *w, const float *b, T *y, int relu, bool pairs) {
    dw_geom g = geom_of(p);
    if (!nhwc && nchw_fast(p, false, x, w, b, y, relu)) return;
    if (!nhwc) {
        int64_t total = (int64_t)p->n * p->c * p->p * p->q;
        dw_nchw_fwd_kernel<T><<<cb_blocks((size_t)total, DW_THREADS), DW_THREADS>>>(g, total, x, w, b, y, relu);
        return;
    }
    int v = vec_of(p, sizeof(T) == 2, x, y);
    if (sizeof(T) == 4 && v > 4) v = 4;
    if (launch_pairs(p, false, pairs, x, w, b, y, relu)) return;
    bool done;
    launch_fast(p, false, v, x, w, b, y, relu, &done);
    if (done) return;
    nhwc_grid ng = nhwc_grid_of(p, v, sizeof(T));
    int64_t pixels = (int64_t)p->n * p->p * p->q;
    int rounds = rounds_of(pixels, ng.ty, ng.slices);
    dim3 grid((unsigned)((pixels + (int64_t)ng.ty * rounds - 1) / ((int64_t)ng.ty * rounds)), (unsigned)ng.slices);
#define FWD(V) dw_nhwc_fwd_kernel<T, vcap(sizeof(T), V)><<<grid, dim3(ng.tx, ng.ty)>>>(g, rounds, x, w, b, y, relu)
    DW_VEC_CASES(v, FWD)
#undef FWD
}

template <class T> static void backward_data_t(const cb_conv_params *p, int nhwc, const T *dy, const T *w, T *dx, bool pairs) {
    dw_geom g = geom_of(p);
    if (!nhwc && nchw_fast(p, true, dy, w, (const float *)NULL, dx, 0)) return;
    if (!nhwc) {
        int64_t total = (int64_t)p->n * p->c * p->h * p->w;
        dw_nchw_bwd_data_kernel<T><<<cb_blocks((size_t)total, DW_THREADS), DW_THREADS>>>(g, total, dy, w, dx);
        return;
    }
    int v = vec_of(p, sizeof(T) == 2, dy, dx);
    if (sizeof(T) == 4 && v > 4) v = 4;
    if (launch_pairs(p, true, pairs, dy, w, (const float *)NULL, dx, 0)) return;
    bool done;
    launch_fast(p, true, v, dy, w, (const float *)NULL, dx, 0, &done);
    if (done) return;
    nhwc_grid ng = nhwc_grid_of(p, v, sizeof(T));
    int64_t pixels = (int64_t)p->n * p->h * p->w;
    int rounds = rounds_of(pixels, ng.ty, ng.slices);
    dim3 grid((unsigned)((pixels + (int64_t)ng.ty * rounds - 1) / ((int64_t)ng.ty * rounds)), (unsigned)ng.slices);
#define BWD(V) dw_nhwc_bwd_data_kernel<T, vcap(sizeof(T), V)><<<grid, dim3(ng.tx, ng.ty)>>>(g, rounds, dy, w, dx)
    DW_VEC_CASES(v, BWD)
#undef BWD
}

// the fast filter-gradient kernel where it applies (stride 1, no dilation, 3, 5 or 7 columns):
// its slots (at most chunk_of's count, which sized the workspace) in *slots; false: not taken
template <class T> static bool fast_wgrad(const cb_conv_params *p, int v, const T *x, const T *dy, float *ws, int64_t *slots) {
    if (!fast_shape(p)) return false;
    if (v > DW_WGRAD_VMAX) v = DW_WGRAD_VMAX;
    int groups = p->c / v, cap = DW_THREADS / p->r;
    if (cap > 32) cap = 32;
    if (cap < 1) return false;
    int slices = (groups + cap - 1) / cap, tx = (groups + slices - 1) / slices, lanes = DW_THREADS / (tx * p->r);
    int64_t chunks, strips = (int64_t)p->n * p->p * ((p->q + DW_QT - 1) / DW_QT);
    chunk_of(p, 1, &chunks);
    int64_t blocks = chunks / lanes;
    if (blocks < 1) blocks = 1, lanes = (int)chunks; // (chunks < lanes: fewer lanes, one block)
    int64_t nslots = blocks * lanes, per = (strips + nslots - 1) / nslots;
    dim3 grid((unsigned)blocks, (unsigned)slices), blk(tx, p->r * lanes);
    dw_geom g = geom_of(p);
#define FW(V, S) dw_nhwc_fast_wgrad_kernel<T, vcap(sizeof(T), V), S><<<grid, blk>>>(g, per, x, dy, ws)
#define FW_S(V) DW_SK_CASES(p->s, FW, V)
    DW_VEC_CASES(v, FW_S)
#undef FW_S
#undef FW
    *slots = nslots;
    return true;
}

// the per-chunk partial sums into ws (their count in *chunks), then dw, their sum in chunk order
template <class T> static void backward_filter_t(const cb_conv_params *p, int nhwc, const T *x, const T *dy, T *dw, float *ws) {
    dw_geom g = geom_of(p);
    int64_t chunks;
    if (!nhwc) {
        int64_t imgs = chunk_of(p, 0, &chunks);
        dim3 grid((unsigned)chunks, (unsigned)g.c);
        if (fast_shape(p) && p->r <= DW_THREADS) {
#define NW(T_, S) dw_nchw_fast_wgrad_kernel<T_, S><<<grid, DW_THREADS>>>(g, (int)imgs, x, dy, ws)
            DW_SK_CASES(p->s, NW, T);
#undef NW
        } else dw_nchw_bwd_filter_kernel<T><<<grid, DW_THREADS>>>(g, (int)imgs, x, dy, ws);
    } else {
        int v = vec_of(p, sizeof(T) == 2, x, dy), tx = 1, tt = 1, slices = 1;
        if (!fast_wgrad(p, v, x, dy, ws, &chunks)) {
            while (v > 1 && !wgrad_block(p, v, &tx, &tt, &slices)) v /= 2;
            wgrad_block(p, v, &tx, &tt, &slices);
            int64_t chunk = chunk_of(p, 1, &chunks);
            dim3 grid((unsigned)chunks, (unsigned)slices);
#define WG(V) dw_nhwc_bwd_filter_kernel<T, vcap(sizeof(T), V)><<<grid, dim3(tx, tt)>>>(g, (int)chunk, x, dy, ws)
            DW_VEC_CASES(v, WG)
#undef WG
        }
    }
    dw_reduce_kernel<T><<<cb_blocks((size_t)g.rs * g.c, DW_THREADS), DW_THREADS>>>(g, (int)chunks, ws, dw);
}

extern "C" void cb_cuda_dw_forward(const cb_conv_params *p, int nhwc, int bf16_, const void *x, const void *w, const float *b,
                                   void *y, int relu, int pairs) {
    if (bf16_) forward_t(p, nhwc, (const bf16 *)x, (const bf16 *)w, b, (bf16 *)y, relu, pairs != 0);
    else forward_t(p, nhwc, (const float *)x, (const float *)w, b, (float *)y, relu, pairs != 0);
}

extern "C" void cb_cuda_dw_backward_data(const cb_conv_params *p, int nhwc, int bf16_, const void *dy, const void *w, void *dx, int pairs) {
    if (bf16_) backward_data_t(p, nhwc, (const bf16 *)dy, (const bf16 *)w, (bf16 *)dx, pairs != 0);
    else backward_data_t(p, nhwc, (const float *)dy, (const float *)w, (float *)dx, pairs != 0);
}

extern "C" void cb_cuda_dw_backward_filter(const cb_conv_params *p, int nhwc, int bf16_, const void *x, const void *dy, void *dw,
                                           float *ws) {
    if (bf16_) backward_filter_t(p, nhwc, (const bf16 *)x, (const bf16 *)dy, (bf16 *)dw, ws);
    else backward_filter_t(p, nhwc, (const float *)x, (const float *)dy, (float *)dw, ws);
}

// ---- the own-algorithm table's entry (fp32 NCHW) ------------------------------------------------

static bool supports(const cb_conv_params *p, cb_phase ph) {
    (void)ph;
    return cb_cuda_dw_supports(p);
}
static size_t workspace(const cb_conv_params *p, cb_phase ph) { return ph == CB_PHASE_BWD_FILTER ? cb_cuda_dw_workspace(p, 0) : 0; }
static void forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    (void)ws;
    cb_cuda_dw_forward(p, 0, 0, x, w, b, y, relu, 0);
}
static void backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws) {
    (void)ws;
    cb_cuda_dw_backward_data(p, 0, 0, dy, w, dx, 0);
}
static void backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws) {
    cb_cuda_dw_backward_filter(p, 0, 0, x, dy, dw, (float *)ws);
    if (db) cb_cuda_bias_grad(p->n, p->k, p->p * p->q, dy, db);
}

extern "C" const cb_cuda_conv_algo cb_conv_algo_depthwise = {
    "depthwise", CB_PREC_FP32, "depthwise (groups = C = K), direct, fp32 FMA, every phase, any stride, padding and dilation",
    supports, workspace, forward, backward_data, backward_filter,
};
