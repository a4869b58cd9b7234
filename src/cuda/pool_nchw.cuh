// The NCHW pooling kernels, on fp32 (src/cuda/pool.cu, the own backends' tensors) or bf16
// elements (src/storage/pool_fmt.cu, the cudnn backend's bf16 NCHW storage); what they compute is
// described in pool.cu. Elements are read into fp32 and rounded to nearest even when stored as
// bf16, so a max compares exact values. Launches stay in the .cu files (dev/emu rewrites them there).
#ifndef CB_CUDA_POOL_NCHW_CUH
#define CB_CUDA_POOL_NCHW_CUH

#include "cuda/fast_div.h"
#include "core/ops.h"

#include <cuda_bf16.h>
#include <stdint.h>

__device__ static __forceinline__ float pool_ld(float v) { return v; }
__device__ static __forceinline__ float pool_ld(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ static __forceinline__ void pool_st(float *d, float v) { *d = v; }
__device__ static __forceinline__ void pool_st(__nv_bfloat16 *d, float v) { *d = __float2bfloat16_rn(v); }

enum { POOL_THREADS = 256 };

typedef struct pool_geom {
    cb_pool_params p;
    uint32_t hw, pq;                      // plane sizes: input H*W, output P*Q
    cb_fast_div by_q, by_p, by_w, by_h;   // for flat index -> (plane, row, column)
    cb_fast_div by_sh, by_sw;             // for input position -> the windows that cover it
} pool_geom;

static pool_geom geom_of(const cb_pool_params *p) {
    pool_geom g;
    g.p = *p;
    g.hw = (uint32_t)p->h * (uint32_t)p->w;
    g.pq = (uint32_t)p->p * (uint32_t)p->q;
    g.by_q = cb_fast_div_make((uint32_t)p->q);
    g.by_p = cb_fast_div_make((uint32_t)p->p);
    g.by_w = cb_fast_div_make((uint32_t)p->w);
    g.by_h = cb_fast_div_make((uint32_t)p->h);
    g.by_sh = cb_fast_div_make((uint32_t)p->stride_h);
    g.by_sw = cb_fast_div_make((uint32_t)p->stride_w);
    return g;
}

// x (planes, H, W) -> y (planes, P, Q), argmax (planes, P, Q) window offsets (max only; may be NULL).
// One thread per output; total = planes * P * Q < 2^31.
template <class T, class A, bool AVG>
__global__ void __launch_bounds__(POOL_THREADS)
pool_fwd_kernel(pool_geom g, uint32_t total, const T *__restrict__ x, T *__restrict__ y, A *__restrict__ argmax) {
    uint32_t o = blockIdx.x * POOL_THREADS + threadIdx.x;
    if (o >= total) return;
    const cb_pool_params &p = g.p;
    uint32_t t = cb_fast_div_q(g.by_q, o), ow = o - t * (uint32_t)p.q;
    uint32_t nc = cb_fast_div_q(g.by_p, t), oh = t - nc * (uint32_t)p.p;
    int h0 = (int)oh * p.stride_h - p.pad_top, w0 = (int)ow * p.stride_w - p.pad_left;
    // the taps inside the image, so that the loops below test nothing
    int kh0 = max(0, -h0), kh1 = min(p.r, p.h - h0), kw0 = max(0, -w0), kw1 = min(p.s, p.w - w0);
    if (kh0 >= kh1 || kw0 >= kw1) { // a window wholly in the padding
        pool_st(y + o, 0.f);
        if (!AVG && argmax) argmax[o] = (A)-1;
        return;
    }
    const T *xp = x + nc * g.hw; // nc * hw < 2^31: the launch holds whole planes under that
    if (AVG) {
        float sum = 0.f;
        for (int kh = kh0; kh < kh1; kh++) {
            const T *row = xp + (h0 + kh) * p.w;
            for (int kw = kw0; kw < kw1; kw++) sum += pool_ld(row[w0 + kw]);
        }
        pool_st(y + o, sum / (float)((kh1 - kh0) * (kw1 - kw0)));
    } else {
        float best = pool_ld(xp[(h0 + kh0) * p.w + w0 + kw0]);
        int bi = kh0 * p.s + kw0;
        for (int kh = kh0; kh < kh1; kh++) {
            const T *row = xp + (h0 + kh) * p.w;
            for (int kw = kw0; kw < kw1; kw++) {
                float v = pool_ld(row[w0 + kw]);
                if (v > best) best = v, bi = kh * p.s + kw; // strict: the first maximum stays
            }
        }
        pool_st(y + o, best);
        if (argmax) argmax[o] = p.relu_mask && !(best > 0.f) ? (A)-1 : (A)bi;
    }
}

// dy (planes, P, Q), argmax (planes, P, Q) -> dx (planes, H, W), overwritten. One thread per input
// pixel; total = planes * H * W < 2^31.
template <class T, class A, bool AVG>
__global__ void __launch_bounds__(POOL_THREADS)
pool_bwd_kernel(pool_geom g, uint32_t total, const T *__restrict__ dy, const A *__restrict__ argmax, T *__restrict__ dx) {
    uint32_t i = blockIdx.x * POOL_THREADS + threadIdx.x;
    if (i >= total) return;
    const cb_pool_params &p = g.p;
    uint32_t t = cb_fast_div_q(g.by_w, i), iw = i - t * (uint32_t)p.w;
    uint32_t nc = cb_fast_div_q(g.by_h, t), ih = t - nc * (uint32_t)p.h;
    // the pixel in padded coordinates; window oh covers it when oh*sh <= a <= oh*sh + r - 1
    int a = (int)ih + p.pad_top, c = (int)iw + p.pad_left;
    int oh1 = a < 0 ? -1 : min(p.p - 1, (int)cb_fast_div_q(g.by_sh, (uint32_t)a));
    int ow1 = c < 0 ? -1 : min(p.q - 1, (int)cb_fast_div_q(g.by_sw, (uint32_t)c));
    int bh = a - p.r + 1, bw = c - p.s + 1; // the first window: ceil(b / stride), at least 0
    int oh0 = bh <= 0 ? 0 : (int)cb_fast_div_q(g.by_sh, (uint32_t)(bh + p.stride_h - 1));
    int ow0 = bw <= 0 ? 0 : (int)cb_fast_div_q(g.by_sw, (uint32_t)(bw + p.stride_w - 1));
    const T *dyp = dy + nc * g.pq;
    const A *amp = argmax + (AVG ? 0 : nc * g.pq);
    float acc = 0.f;
    for (int oh = oh0; oh <= oh1; oh++) {
        int hs = oh * p.stride_h, kh = a - hs; // this pixel's row in window oh
        int rows = min(hs - p.pad_top + p.r, p.h) - max(hs - p.pad_top, 0);
        for (int ow = ow0; ow <= ow1; ow++) {
            int ws = ow * p.stride_w, o = oh * p.q + ow;
            if (AVG) {
                int cols = min(ws - p.pad_left + p.s, p.w) - max(ws - p.pad_left, 0);
                acc += pool_ld(dyp[o]) / (float)(rows * cols);
            } else if ((int)amp[o] == kh * p.s + (c - ws)) {
                acc += pool_ld(dyp[o]);
            }
        }
    }
    pool_st(dx + i, acc);
}

#endif
