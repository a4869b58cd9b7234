// Max and average pooling on the cudnn backend's storages (format.h): NHWC and/or bf16 elements.
// The semantics are those of src/cuda/pool.cu, in the storage's layout and element type: padded
// taps take no part (max ignores them, average leaves them out of the divisor), ties go to the
// first maximum in window order (kh outer, kw inner), a window wholly in the padding gives 0 and
// no maximum. The max forward saves, per output element and in y's layout, the window offset
// kh * s + kw of its maximum: one byte when the window has at most 255 taps (255 = none), else
// int32 (-1 = none). The backward gathers per input element over the windows that cover it (no
// atomics, each dx written once), except the max backward on fp32 NHWC storage where pf_scatters
// says (below), which scatters by atomic adds unless cb_fmt_pool_scatter(0). With relu_mask (the
// input a ReLU's output, its gradient applied here) a window whose maximum is <= 0 keeps no maximum
// either. Elements are read into fp32 and rounded to nearest even when stored as bf16; a max
// compares the converted values, so it is exact.
//
// NHWC runs one thread per (n, row, column, group of V channels), consecutive threads on
// consecutive groups: V = 8 bf16 or 4 fp32 (16-byte accesses) when C is a multiple of V and the
// buffers are aligned for it, else V = 1. The max backward gathers per input element over the
// windows that cover it, except on fp32 storage at V = 1 and where a ReLU's mask leaves windows
// without a maximum at stride 2 or more (pf_scatters): there it scatters each output's gradient by
// an atomic add (pf_nhwc_scatter_kernel). Three other forms were timed on the H200 and lost
// (docs/results/2026-11-29-pools.md): a block's tile staged in shared memory, blocks of several
// pixels per chunk of channels, and the backward's covering windows known at compile time. NCHW
// bf16 runs pool.cu's kernels (cuda/pool_nchw.cuh) on bf16 elements; fp32 NCHW (fmt 0) is pool.cu
// itself. Index math is 32-bit with divisions by multiply and shift (fast_div.h); a tensor of 2^31
// elements or more runs as several launches, each over whole images (NHWC) or planes (NCHW).
#include "cuda/common.cuh"
#include "cuda/fast_div.h"
#include "cuda/launch.h"
#include "cuda/pool_nchw.cuh"
#include "storage/format.h"

#include <cuda_bf16.h>
#include <stdint.h>

typedef __nv_bfloat16 bf16;

enum { PF_THREADS = 256 };

// dev/pool_fmt_emu.cpp defines it to see which vector width each launch takes
#ifndef PF_NOTE_V
#define PF_NOTE_V(v) ((void)0)
#endif
#ifndef PF_NOTE_SCATTER // (and where the backward takes the scatter)
#define PF_NOTE_SCATTER() ((void)0)
#endif


// V contiguous items of E from src to dst as one access of V * sizeof(E) bytes (16-byte pieces
// beyond 16); the caller has checked the alignment. Local arrays on either side are __align__(16).
template <int B> struct pf_word;
template <> struct pf_word<4> { typedef uint32_t t; };
template <> struct pf_word<8> { typedef uint2 t; };
template <> struct pf_word<16> { typedef uint4 t; };

template <int V, class E> __device__ static __forceinline__ void pf_copy(E *__restrict__ dst, const E *__restrict__ src) {
    constexpr int B = V * (int)sizeof(E);
    if constexpr (V == 1) {
        dst[0] = src[0];
    } else if constexpr (B <= 16) {
        typedef typename pf_word<B>::t W;
        *reinterpret_cast<W *>(dst) = *reinterpret_cast<const W *>(src);
    } else {
#pragma unroll
        for (int k = 0; k < B / 16; k++) reinterpret_cast<uint4 *>(dst)[k] = reinterpret_cast<const uint4 *>(src)[k];
    }
}

// V elements at src -> f (fp32), and back
template <int V, class T> __device__ static __forceinline__ void pf_load(const T *src, float *f) {
    __align__(16) T e[V];
    pf_copy<V>(e, src);
#pragma unroll
    for (int j = 0; j < V; j++) f[j] = pool_ld(e[j]);
}
template <int V, class T> __device__ static __forceinline__ void pf_store(T *dst, const float *f) {
    __align__(16) T e[V];
#pragma unroll
    for (int j = 0; j < V; j++) pool_st(&e[j], f[j]);
    pf_copy<V>(dst, e);
}

typedef struct pf_geom {
    cb_pool_params p;
    uint32_t c, groups;                         // channels, channel groups of V (NHWC)
    uint32_t hw, pq;                            // plane sizes: input H*W, output P*Q
    cb_fast_div by_g, by_q, by_p, by_w, by_h;   // flat index -> (image or plane, row, column, group)
    cb_fast_div by_sh, by_sw;                   // input position -> the windows that cover it
} pf_geom;

static pf_geom pf_geom_of(const cb_pool_params *p, int v) {
    pf_geom g;
    g.p = *p;
    g.c = (uint32_t)p->c;
    g.groups = (uint32_t)(p->c / v);
    g.hw = (uint32_t)p->h * (uint32_t)p->w;
    g.pq = (uint32_t)p->p * (uint32_t)p->q;
    g.by_g = cb_fast_div_make(g.groups);
    g.by_q = cb_fast_div_make((uint32_t)p->q);
    g.by_p = cb_fast_div_make((uint32_t)p->p);
    g.by_w = cb_fast_div_make((uint32_t)p->w);
    g.by_h = cb_fast_div_make((uint32_t)p->h);
    g.by_sh = cb_fast_div_make((uint32_t)p->stride_h);
    g.by_sw = cb_fast_div_make((uint32_t)p->stride_w);
    return g;
}

// ---- NHWC -------------------------------------------------------------------------------------

// Output o's V values of a max and, where argmax is not NULL, their window offsets: bi[j] = -1 (no
// tap) casts to the none mark (255 or -1), and with relu_mask a maximum <= 0 keeps none
template <class T, class A, int V>
__device__ static __forceinline__ void pf_put_max(const cb_pool_params &p, T *__restrict__ y, A *__restrict__ argmax, uint32_t o,
                                                  const float *acc, const int *bi) {
    pf_store<V>(y + o * V, acc);
    if (argmax) {
        __align__(16) A at[V];
#pragma unroll
        for (int j = 0; j < V; j++) at[j] = p.relu_mask && !(acc[j] > 0.f) ? (A)-1 : (A)bi[j];
        pf_copy<V>(argmax + o * V, at);
    }
}
// output o of a window wholly in the padding: 0, and no maximum
template <class T, class A, int V, bool AVG>
__device__ static __forceinline__ void pf_put_empty(T *__restrict__ y, A *__restrict__ argmax, uint32_t o) {
    float zero[V];
#pragma unroll
    for (int j = 0; j < V; j++) zero[j] = 0.f;
    pf_store<V>(y + o * V, zero);
    if (!AVG && argmax) {
        __align__(16) A none[V];
#pragma unroll
        for (int j = 0; j < V; j++) none[j] = (A)-1;
        pf_copy<V>(argmax + o * V, none);
    }
}

// R x S known at compile time (R > 0: 2x2 and 3x3, nearly every pool; pf_rs says where): every
// tap's load issued first, predicated on the tap lying in the image, then the compares in the order
// of the runtime loops below, so the same results bit for bit (dev/pool_fmt_emu.sh and test_gpu run
// both against the reference loops). The loops await each tap's load before the next compare: on
// the H200 (2026-11-28-plans) an Inception-like random network's 3x3 stride-1 max pools on fp32
// NHWC with odd C (V = 1) ran forward at about a quarter of DRAM bandwidth (0.59 ms for 276 MB in,
// 276 MB out). Thread o's output element at y + o * V; img: element (n, 0, 0, grp * V) of x.
template <class T, class A, int V, bool AVG, int R, int S>
__device__ static __forceinline__ void pf_nhwc_fwd_rs(const pf_geom &g, uint32_t o, int h0, int w0, const T *__restrict__ img,
                                                      T *__restrict__ y, A *__restrict__ argmax) {
    const cb_pool_params &p = g.p;
    float v[R * S][V];
    bool in[R * S];
#pragma unroll
    for (int kh = 0; kh < R; kh++)
#pragma unroll
        for (int kw = 0; kw < S; kw++) {
            int h = h0 + kh, w = w0 + kw, k = kh * S + kw;
            in[k] = (unsigned)h < (unsigned)p.h && (unsigned)w < (unsigned)p.w;
            if (in[k]) pf_load<V>(img + ((uint32_t)h * (uint32_t)p.w + (uint32_t)w) * g.c, v[k]);
        }
    float acc[V];
#pragma unroll
    for (int j = 0; j < V; j++) acc[j] = 0.f;
    if constexpr (AVG) {
        int count = 0;
#pragma unroll
        for (int k = 0; k < R * S; k++)
            if (in[k]) {
                count++;
#pragma unroll
                for (int j = 0; j < V; j++) acc[j] += v[k][j];
            }
        if (count) // (else a window wholly in the padding: 0)
#pragma unroll
            for (int j = 0; j < V; j++) acc[j] = acc[j] / (float)count;
        pf_store<V>(y + o * V, acc);
    } else {
        int bi[V]; // -1: no tap yet (a window wholly in the padding keeps y 0 and no maximum)
#pragma unroll
        for (int j = 0; j < V; j++) bi[j] = -1;
#pragma unroll
        for (int k = 0; k < R * S; k++)
            if (in[k])
#pragma unroll
                for (int j = 0; j < V; j++)
                    if (bi[j] < 0 || v[k][j] > acc[j]) acc[j] = v[k][j], bi[j] = k; // strict: the first maximum stays
        pf_put_max<T, A, V>(p, y, argmax, o, acc, bi);
    }
}

// Any window, in runtime loops over the taps inside the image: thread o's output (image n,
// channel group grp) whose window starts at (h0, w0)
template <class T, class A, int V, bool AVG>
__device__ static __forceinline__ void pf_nhwc_fwd_loops(const pf_geom &g, uint32_t o, uint32_t n, uint32_t grp, int h0, int w0,
                                                         const T *__restrict__ x, T *__restrict__ y, A *__restrict__ argmax) {
    const cb_pool_params &p = g.p;
    // the taps inside the image, so that the loops below test nothing
    int kh0 = max(0, -h0), kh1 = min(p.r, p.h - h0), kw0 = max(0, -w0), kw1 = min(p.s, p.w - w0);
    if (kh0 >= kh1 || kw0 >= kw1) return pf_put_empty<T, A, V, AVG>(y, argmax, o); // a window wholly in the padding
    float acc[V];
    // element (n, h0 + kh0, w0 + kw0, grp * V); the launch holds whole images under 2^31 elements
    uint32_t first = ((n * (uint32_t)p.h + (uint32_t)(h0 + kh0)) * (uint32_t)p.w + (uint32_t)(w0 + kw0)) * g.c + grp * V;
    uint32_t row_step = (uint32_t)p.w * g.c;
    if (AVG) {
#pragma unroll
        for (int j = 0; j < V; j++) acc[j] = 0.f;
        uint32_t row = first;
        for (int kh = kh0; kh < kh1; kh++, row += row_step) {
            uint32_t e = row;
            for (int kw = kw0; kw < kw1; kw++, e += g.c) {
                float v[V];
                pf_load<V>(x + e, v);
#pragma unroll
                for (int j = 0; j < V; j++) acc[j] += v[j];
            }
        }
        float count = (float)((kh1 - kh0) * (kw1 - kw0));
#pragma unroll
        for (int j = 0; j < V; j++) acc[j] = acc[j] / count; // as pool.cu: the same fp32 result
        pf_store<V>(y + o * V, acc);
    } else {
        int bi[V];
        pf_load<V>(x + first, acc);
#pragma unroll
        for (int j = 0; j < V; j++) bi[j] = kh0 * p.s + kw0;
        uint32_t row = first;
        for (int kh = kh0; kh < kh1; kh++, row += row_step) {
            uint32_t e = row;
            for (int kw = kw0; kw < kw1; kw++, e += g.c) {
                float v[V];
                pf_load<V>(x + e, v);
#pragma unroll
                for (int j = 0; j < V; j++)
                    if (v[j] > acc[j]) acc[j] = v[j], bi[j] = kh * p.s + kw; // strict: the first maximum stays
            }
        }
        pf_put_max<T, A, V>(p, y, argmax, o, acc, bi);
    }
}

// x (images, H, W, C) -> y (images, P, Q, C), argmax (images, P, Q, C) window offsets (max only;
// may be NULL). One thread per (image, oh, ow, group); thread o's V outputs start at y + o * V.
// RS > 0: an RS x RS window, through pf_nhwc_fwd_rs; 0: any window, in runtime loops.
template <class T, class A, int V, bool AVG, int RS>
__global__ void __launch_bounds__(PF_THREADS)
pf_nhwc_fwd_kernel(pf_geom g, uint32_t total, const T *__restrict__ x, T *__restrict__ y, A *__restrict__ argmax) {
    uint32_t o = blockIdx.x * PF_THREADS + threadIdx.x;
    if (o >= total) return;
    const cb_pool_params &p = g.p;
    uint32_t t = cb_fast_div_q(g.by_g, o), grp = o - t * g.groups; // t: the output pixel
    uint32_t u = cb_fast_div_q(g.by_q, t), ow = t - u * (uint32_t)p.q;
    uint32_t n = cb_fast_div_q(g.by_p, u), oh = u - n * (uint32_t)p.p;
    int h0 = (int)oh * p.stride_h - p.pad_top, w0 = (int)ow * p.stride_w - p.pad_left;
    // (the launch holds whole images under 2^31 elements)
    if constexpr (RS > 0) pf_nhwc_fwd_rs<T, A, V, AVG, RS, RS>(g, o, h0, w0, x + n * g.hw * g.c + grp * V, y, argmax);
    else pf_nhwc_fwd_loops<T, A, V, AVG>(g, o, n, grp, h0, w0, x, y, argmax);
}

// dy (images, P, Q, C), argmax (images, P, Q, C) -> dx (images, H, W, C), overwritten. One thread
// per (image, ih, iw, group); thread i's V elements start at dx + i * V.
template <class T, class A, int V, bool AVG>
__global__ void __launch_bounds__(PF_THREADS)
pf_nhwc_bwd_kernel(pf_geom g, uint32_t total, const T *__restrict__ dy, const A *__restrict__ argmax, T *__restrict__ dx) {
    uint32_t i = blockIdx.x * PF_THREADS + threadIdx.x;
    if (i >= total) return;
    const cb_pool_params &p = g.p;
    uint32_t t = cb_fast_div_q(g.by_g, i), grp = i - t * g.groups; // t: the input pixel
    uint32_t u = cb_fast_div_q(g.by_w, t), iw = t - u * (uint32_t)p.w;
    uint32_t n = cb_fast_div_q(g.by_h, u), ih = u - n * (uint32_t)p.h;
    // the pixel in padded coordinates; window oh covers it when oh*sh <= a <= oh*sh + r - 1
    int a = (int)ih + p.pad_top, b = (int)iw + p.pad_left;
    int oh1 = a < 0 ? -1 : min(p.p - 1, (int)cb_fast_div_q(g.by_sh, (uint32_t)a));
    int ow1 = b < 0 ? -1 : min(p.q - 1, (int)cb_fast_div_q(g.by_sw, (uint32_t)b));
    int bh = a - p.r + 1, bw = b - p.s + 1; // the first window: ceil(bh / stride), at least 0
    int oh0 = bh <= 0 ? 0 : (int)cb_fast_div_q(g.by_sh, (uint32_t)(bh + p.stride_h - 1));
    int ow0 = bw <= 0 ? 0 : (int)cb_fast_div_q(g.by_sw, (uint32_t)(bw + p.stride_w - 1));
    uint32_t img = n * g.pq * g.c + grp * V; // element (n, 0, 0, grp * V) of dy and argmax
    float acc[V];
#pragma unroll
    for (int j = 0; j < V; j++) acc[j] = 0.f;
    for (int oh = oh0; oh <= oh1; oh++) {
        int hs = oh * p.stride_h, kh = a - hs; // this pixel's row in window oh
        int rows = min(hs - p.pad_top + p.r, p.h) - max(hs - p.pad_top, 0);
        uint32_t e = img + ((uint32_t)oh * (uint32_t)p.q + (uint32_t)ow0) * g.c;
        for (int ow = ow0; ow <= ow1; ow++, e += g.c) {
            int ws = ow * p.stride_w;
            if (AVG) {
                int cols = min(ws - p.pad_left + p.s, p.w) - max(ws - p.pad_left, 0);
                float inv = 1.f / (float)(rows * cols), d[V]; // one division per window, not per channel
                pf_load<V>(dy + e, d);
#pragma unroll
                for (int j = 0; j < V; j++) acc[j] += d[j] * inv;
            } else {
                __align__(16) A am[V];
                pf_copy<V>(am, argmax + e);
                int mine = kh * p.s + (b - ws); // this pixel's offset in window (oh, ow)
                bool any = false;
#pragma unroll
                for (int j = 0; j < V; j++) any |= (int)am[j] == mine;
                if (any) { // dy is read only where some channel's maximum is this pixel
                    float d[V];
                    pf_load<V>(dy + e, d);
#pragma unroll
                    for (int j = 0; j < V; j++)
                        if ((int)am[j] == mine) acc[j] += d[j];
                }
            }
        }
    }
    pf_store<V>(dx + i * V, acc);
}

// The max backward as a scatter, fp32 storage, one channel a thread (where pf_scatters says): dx
// zeroed, then thread o adds output o's gradient to the input of its maximum (an atomic add: the
// adds to one input come in any order, so dx is not bit for bit the same from run to run, nor the
// gather's; within fp32 rounding of the same sum). The gather above reads, for each input element, each
// covering window's offset one byte a thread; on the H200 (docs/results/2026-11-29-pools.md,
// dev/pool_bench.cu) it ran 3x3 pools with C 49-322 at V = 1 at 6-8x the DRAM floor, where this ran
// 1.7-1.8x faster (2-3.6x in a network, where the ReLU mask leaves windows without a maximum); at
// V = 4 (C 64-480) on random data the gather was 1.25-1.35x faster (pf_scatters: where each wins).
__global__ void __launch_bounds__(PF_THREADS)
pf_nhwc_scatter_kernel(pf_geom g, uint32_t total, const float *__restrict__ dy, const uint8_t *__restrict__ argmax, float *__restrict__ dx) {
    uint32_t o = blockIdx.x * PF_THREADS + threadIdx.x;
    if (o >= total) return;
    int off = argmax[o];
    if (off == 255) return; // no maximum
    const cb_pool_params &p = g.p;
    uint32_t t = cb_fast_div_q(g.by_g, o), c = o - t * g.groups; // (V = 1: a group is a channel)
    uint32_t u = cb_fast_div_q(g.by_q, t), ow = t - u * (uint32_t)p.q;
    uint32_t n = cb_fast_div_q(g.by_p, u), oh = u - n * (uint32_t)p.p;
    int kh = off / p.s, ih = (int)oh * p.stride_h - p.pad_top + kh, iw = (int)ow * p.stride_w - p.pad_left + (off - kh * p.s);
    atomicAdd(dx + ((n * (uint32_t)p.h + (uint32_t)ih) * (uint32_t)p.w + (uint32_t)iw) * g.c + c, dy[o]);
}

// ---- launches -----------------------------------------------------------------------------------

// whole images (NHWC) or planes (NCHW) per launch, so that every flat index of a launch stays
// under 2^31 (dev/pool_fmt_emu.sh sets a small cap to run several launches)
#ifndef POOL_FMT_LAUNCH_CAP
#define POOL_FMT_LAUNCH_CAP INT32_MAX
#endif
static int64_t pf_units_per_launch(int64_t in, int64_t out) {
    int64_t unit = in > out ? in : out, k = (int64_t)(POOL_FMT_LAUNCH_CAP) / unit;
    return k > 0 ? k : 1;
}

static bool pf_aligned(const void *ptr, size_t a) { return ((uintptr_t)ptr & (a - 1)) == 0; }

// The launches of one pass over `units` units (images NHWC, planes NCHW) of `in` input and `out`
// output elements each, with threads_per_unit threads per unit: launch(first unit, threads, blocks).
template <class F> static void pf_each_launch(int64_t units, int64_t in, int64_t out, int64_t threads_per_unit, F launch) {
    int64_t step = pf_units_per_launch(in, out);
    for (int64_t u0 = 0; u0 < units; u0 += step) {
        int64_t count = units - u0 < step ? units - u0 : step;
        uint32_t total = (uint32_t)(count * threads_per_unit);
        if (total) launch(u0, total, (total + PF_THREADS - 1) / PF_THREADS);
    }
}

// The compile-time window (pf_nhwc_fwd_rs) where it is faster, else 0 (the runtime loops). Measured
// on the H200 (docs/results/2026-11-28-plans.md, call 4: auto tf32 / bf16 NHWC, ms per pool layer,
// runtime loops -> compile-time): forward with one channel a thread (V = 1, C not a multiple of 4)
// faster, an Inception-like random network's four 0.144 -> 0.097, 0.216 -> 0.178, 0.590 -> 0.480,
// 0.684 -> 0.557; with 16-byte groups even (GoogLeNet fp32 V = 4, 15 pools within 0.011) or slower
// (ResNet-50 b256 bf16 V = 8 pool1 0.206 -> 0.260: R x S x V values held a thread). The same form of
// the backward was slower nearly everywhere (GoogLeNet pool1 0.217 -> 0.502, ResNet-50 pool1 0.292
// -> 0.757: it walked R x S windows where at most 4 cover a pixel) and is not kept. pf_rs_mode
// (cb_fmt_pool_rs): -1 where V = 1, 1 at every V, 0 never.
static int pf_rs_mode = -1;
extern "C" void cb_fmt_pool_rs(int mode) { pf_rs_mode = mode < 0 ? -1 : mode > 0; }
static int pf_rs(const cb_pool_params *p, int v) {
    bool on = pf_rs_mode > 0 || (pf_rs_mode < 0 && v == 1);
    return on && p->r == p->s && (p->r == 2 || p->r == 3) ? p->r : 0;
}

// The scatter backward (pf_nhwc_scatter_kernel) for max pools on fp32 NHWC storage with byte
// offsets: pf_scatter_mode (cb_fmt_pool_scatter) -1 (the default) where pf_scatters says, 1 at every
// width (pf_backward takes the V = 1 path for it), 0 never (the gather, deterministic).
static int pf_scatter_mode = -1;
extern "C" void cb_fmt_pool_scatter(int mode) { pf_scatter_mode = mode < 0 ? -1 : mode > 0; }
// By default: at V = 1 (the gather then reads each covering window's offset a byte a thread), and at
// 16-byte widths where a ReLU's mask leaves windows without a maximum (skipped: no add) and windows
// overlap with at most 2 x 2 of them covering an input. Measured on the H200 (2026-11-29-pools,
// calls 4 and 6, in networks, backward ms gather -> scatter): V = 1 3x3 stride 1 and 2, 2-3.6x faster; V = 4 with the mask,
// 3x3 stride 2 (GoogLeNet b128 pool1-4, ResNet-50 b64 pool1) 0.215 -> 0.158, 0.162 -> 0.120,
// 0.119 -> 0.108, 0.053 -> 0.051, 0.114 -> 0.083, but 3x3 stride 1 (GoogLeNet's nine inception
// pools) 1.1-1.25x slower; without the mask on random data (dev/pool_bench.cu) 3x3 stride 2 at V = 4
// was 1.3x slower, since every window then adds.
static bool pf_scatters(const cb_pool_params *p, int v) {
    if (pf_scatter_mode >= 0) return pf_scatter_mode > 0;
    int covering = ((p->r + p->stride_h - 1) / p->stride_h) * ((p->s + p->stride_w - 1) / p->stride_w);
    bool overlap = p->r > p->stride_h || p->s > p->stride_w; // (windows apart, as VGG's 2x2 stride 2: not timed, so they gather)
    return v == 1 || (p->relu_mask && overlap && covering <= 4);
}

template <class T, class A, int V, bool AVG>
static void pf_nhwc_forward(const cb_pool_params *p, const T *x, T *y, A *argmax) {
    PF_NOTE_V(V);
    pf_geom g = pf_geom_of(p, V);
    int64_t in = (int64_t)g.hw * p->c, out = (int64_t)g.pq * p->c; // elements per image
    int rs = pf_rs(p, V);
    pf_each_launch(p->n, in, out, (int64_t)g.pq * g.groups, [&](int64_t n0, uint32_t total, uint32_t blocks) {
        const T *xl = x + n0 * in;
        T *yl = y + n0 * out;
        A *am = argmax ? argmax + n0 * out : argmax;
        if constexpr (sizeof(A) == 1) { // (2x2 and 3x3 keep byte offsets)
            if (rs == 3) return (void)pf_nhwc_fwd_kernel<T, A, V, AVG, 3><<<blocks, PF_THREADS>>>(g, total, xl, yl, am);
            if (rs == 2) return (void)pf_nhwc_fwd_kernel<T, A, V, AVG, 2><<<blocks, PF_THREADS>>>(g, total, xl, yl, am);
        }
        pf_nhwc_fwd_kernel<T, A, V, AVG, 0><<<blocks, PF_THREADS>>>(g, total, xl, yl, am);
    });
}

template <class T, class A, int V, bool AVG>
static void pf_nhwc_backward(const cb_pool_params *p, const T *dy, const A *argmax, T *dx) {
    PF_NOTE_V(V);
    pf_geom g = pf_geom_of(p, V);
    int64_t in = (int64_t)g.hw * p->c, out = (int64_t)g.pq * p->c;
    if constexpr (V == 1 && !AVG && sizeof(T) == 4 && sizeof(A) == 1)
        if (pf_scatter_mode != 0) { // (V = 1 by default; a wider tensor comes here only to scatter: pf_backward)
            PF_NOTE_SCATTER();
            cudaMemsetAsync(dx, 0, (size_t)p->n * (size_t)in * sizeof(T), 0);
            return pf_each_launch(p->n, in, out, out, [&](int64_t n0, uint32_t total, uint32_t blocks) {
                pf_nhwc_scatter_kernel<<<blocks, PF_THREADS>>>(g, total, (const float *)dy + n0 * out, (const uint8_t *)argmax + n0 * out,
                                                              (float *)dx + n0 * in);
            });
        }
    pf_each_launch(p->n, in, out, (int64_t)g.hw * g.groups, [&](int64_t n0, uint32_t total, uint32_t blocks) {
        pf_nhwc_bwd_kernel<T, A, V, AVG><<<blocks, PF_THREADS>>>(g, total, dy + n0 * out, AVG ? argmax : argmax + n0 * out,
                                                                 dx + n0 * in);
    });
}

// bf16 NCHW: pool.cu's kernels (cuda/pool_nchw.cuh) on bf16 elements
template <class T, class A, bool AVG> static void pf_nchw_forward(const cb_pool_params *p, const T *x, T *y, A *argmax) {
    pool_geom g = geom_of(p);
    pf_each_launch((int64_t)p->n * p->c, g.hw, g.pq, g.pq, [&](int64_t nc0, uint32_t total, uint32_t blocks) {
        pool_fwd_kernel<T, A, AVG><<<blocks, POOL_THREADS>>>(g, total, x + nc0 * g.hw, y + nc0 * g.pq,
                                                             argmax ? argmax + nc0 * g.pq : argmax);
    });
}

template <class T, class A, bool AVG> static void pf_nchw_backward(const cb_pool_params *p, const T *dy, const A *argmax, T *dx) {
    pool_geom g = geom_of(p);
    pf_each_launch((int64_t)p->n * p->c, g.hw, g.pq, g.hw, [&](int64_t nc0, uint32_t total, uint32_t blocks) {
        pool_bwd_kernel<T, A, AVG><<<blocks, POOL_THREADS>>>(g, total, dy + nc0 * g.pq, AVG ? argmax : argmax + nc0 * g.pq,
                                                             dx + nc0 * g.hw);
    });
}

// V for NHWC: 16 bytes of elements when C is a multiple of it and every buffer is aligned for
// accesses of V elements (and V argmax items), else 1
template <class T, class A> static int pf_vec(const cb_pool_params *p, const void *a, const void *b, const void *argmax) {
    const int v = 16 / (int)sizeof(T);
    size_t am_bytes = v * sizeof(A) < 16 ? v * sizeof(A) : 16;
    bool ok = p->c % v == 0 && pf_aligned(a, 16) && pf_aligned(b, 16) && (!argmax || pf_aligned(argmax, am_bytes));
    return ok ? v : 1;
}

template <class T, class A, bool AVG> static void pf_forward(const cb_pool_params *p, bool nhwc, const void *x, void *y, void *argmax) {
    const T *xt = (const T *)x;
    T *yt = (T *)y;
    A *am = (A *)argmax;
    if (!nhwc) pf_nchw_forward<T, A, AVG>(p, xt, yt, am);
    else if (pf_vec<T, A>(p, x, y, argmax) == 1) pf_nhwc_forward<T, A, 1, AVG>(p, xt, yt, am);
    else pf_nhwc_forward<T, A, 16 / sizeof(T), AVG>(p, xt, yt, am);
}

template <class T, class A, bool AVG>
static void pf_backward(const cb_pool_params *p, bool nhwc, const void *dy, const void *argmax, void *dx) {
    const T *dyt = (const T *)dy;
    T *dxt = (T *)dx;
    const A *am = (const A *)argmax;
    if (!nhwc) pf_nchw_backward<T, A, AVG>(p, dyt, am, dxt);
    else if (pf_vec<T, A>(p, dy, dx, AVG ? NULL : argmax) == 1) pf_nhwc_backward<T, A, 1, AVG>(p, dyt, am, dxt);
    else if (!AVG && sizeof(T) == 4 && sizeof(A) == 1 && pf_scatters(p, 16 / sizeof(T)))
        pf_nhwc_backward<T, A, 1, AVG>(p, dyt, am, dxt); // (the scatter, on the V = 1 path)
    else pf_nhwc_backward<T, A, 16 / sizeof(T), AVG>(p, dyt, am, dxt);
}

// the argmax item and the pass for one element type: one byte when 255 (the "none" mark) is not
// an offset, as pool.cu
template <class T> static void pf_forward_of(const cb_pool_params *p, bool nhwc, const void *x, void *y, void *argmax) {
    if (p->is_avg) pf_forward<T, uint8_t, true>(p, nhwc, x, y, NULL);
    else if ((int64_t)p->r * p->s <= 255) pf_forward<T, uint8_t, false>(p, nhwc, x, y, argmax);
    else pf_forward<T, int32_t, false>(p, nhwc, x, y, argmax);
}
template <class T> static void pf_backward_of(const cb_pool_params *p, bool nhwc, const void *dy, const void *argmax, void *dx) {
    if (p->is_avg) pf_backward<T, uint8_t, true>(p, nhwc, dy, NULL, dx);
    else if ((int64_t)p->r * p->s <= 255) pf_backward<T, uint8_t, false>(p, nhwc, dy, argmax, dx);
    else pf_backward<T, int32_t, false>(p, nhwc, dy, argmax, dx);
}

static bool pf_empty(const cb_pool_params *p) { return p->n <= 0 || p->c <= 0 || p->h <= 0 || p->w <= 0 || p->p <= 0 || p->q <= 0; }

extern "C" void cb_fmt_pool_forward(const cb_pool_params *p, int fmt, const void *x, void *y, void *argmax) {
    if (pf_empty(p)) return;
    bool nhwc = fmt & CB_FMT_NHWC;
    if (cb_cuda_pool_is_global_avg(p)) cb_cuda_global_avg_forward(p, nhwc, (fmt & CB_FMT_BF16) != 0, x, y);
    else if (fmt & CB_FMT_BF16) pf_forward_of<bf16>(p, nhwc, x, y, argmax);
    else if (nhwc) pf_forward_of<float>(p, true, x, y, argmax);
    else cb_cuda_pool_forward(p, (const float *)x, (float *)y, argmax);
}

extern "C" void cb_fmt_pool_backward(const cb_pool_params *p, int fmt, const void *dy, const void *argmax, void *dx) {
    if (pf_empty(p)) return;
    bool nhwc = fmt & CB_FMT_NHWC;
    if (cb_cuda_pool_is_global_avg(p)) cb_cuda_global_avg_backward(p, nhwc, (fmt & CB_FMT_BF16) != 0, dy, dx);
    else if (fmt & CB_FMT_BF16) pf_backward_of<bf16>(p, nhwc, dy, argmax, dx);
    else if (nhwc) pf_backward_of<float>(p, true, dy, argmax, dx);
    else cb_cuda_pool_backward(p, (const float *)dy, argmax, (float *)dx);
}
