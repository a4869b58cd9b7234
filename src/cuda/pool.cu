// Max and average pooling, forward and backward, NCHW. Padded taps take no part (max ignores
// them, average leaves them out of the divisor); ties go to the first maximum in window order
// (kh outer, kw inner), as the CPU reference.
//
// The max forward saves where each output's maximum lies as its offset in the window, kh * s + kw:
// one byte when the window has at most 255 taps (255 marks a window wholly in the padding), else
// int32 (-1 for that). The backward runs one thread per input pixel over the at most
// ceil(r/stride_h) x ceil(s/stride_w) windows that cover it and adds the dy of those whose saved
// offset is the pixel's own: no atomics, and each dx written once. Index math is 32-bit, divisions
// by multiply and shift (fast_div.h); a tensor of 2^31 elements or more runs as several launches,
// each over whole (n, c) planes.
#include "cuda/common.cuh"
#include "cuda/fast_div.h"
#include "cuda/launch.h"

#include <stdint.h>

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
template <class A, bool AVG>
__global__ void __launch_bounds__(POOL_THREADS)
pool_fwd_kernel(pool_geom g, uint32_t total, const float *__restrict__ x, float *__restrict__ y, A *__restrict__ argmax) {
    uint32_t o = blockIdx.x * POOL_THREADS + threadIdx.x;
    if (o >= total) return;
    const cb_pool_params &p = g.p;
    uint32_t t = cb_fast_div_q(g.by_q, o), ow = o - t * (uint32_t)p.q;
    uint32_t nc = cb_fast_div_q(g.by_p, t), oh = t - nc * (uint32_t)p.p;
    int h0 = (int)oh * p.stride_h - p.pad_top, w0 = (int)ow * p.stride_w - p.pad_left;
    // the taps inside the image, so that the loops below test nothing
    int kh0 = max(0, -h0), kh1 = min(p.r, p.h - h0), kw0 = max(0, -w0), kw1 = min(p.s, p.w - w0);
    if (kh0 >= kh1 || kw0 >= kw1) { // a window wholly in the padding
        y[o] = 0.f;
        if (!AVG && argmax) argmax[o] = (A)-1;
        return;
    }
    const float *xp = x + nc * g.hw; // nc * hw < 2^31: the launch holds whole planes under that
    if (AVG) {
        float sum = 0.f;
        for (int kh = kh0; kh < kh1; kh++) {
            const float *row = xp + (h0 + kh) * p.w;
            for (int kw = kw0; kw < kw1; kw++) sum += row[w0 + kw];
        }
        y[o] = sum / (float)((kh1 - kh0) * (kw1 - kw0));
    } else {
        float best = xp[(h0 + kh0) * p.w + w0 + kw0];
        int bi = kh0 * p.s + kw0;
        for (int kh = kh0; kh < kh1; kh++) {
            const float *row = xp + (h0 + kh) * p.w;
            for (int kw = kw0; kw < kw1; kw++) {
                float v = row[w0 + kw];
                if (v > best) best = v, bi = kh * p.s + kw; // strict: the first maximum stays
            }
        }
        y[o] = best;
        if (argmax) argmax[o] = (A)bi;
    }
}

// dy (planes, P, Q), argmax (planes, P, Q) -> dx (planes, H, W), overwritten. One thread per input
// pixel; total = planes * H * W < 2^31.
template <class A, bool AVG>
__global__ void __launch_bounds__(POOL_THREADS)
pool_bwd_kernel(pool_geom g, uint32_t total, const float *__restrict__ dy, const A *__restrict__ argmax, float *__restrict__ dx) {
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
    const float *dyp = dy + nc * g.pq;
    const A *amp = argmax + (AVG ? 0 : nc * g.pq);
    float acc = 0.f;
    for (int oh = oh0; oh <= oh1; oh++) {
        int hs = oh * p.stride_h, kh = a - hs; // this pixel's row in window oh
        int rows = min(hs - p.pad_top + p.r, p.h) - max(hs - p.pad_top, 0);
        for (int ow = ow0; ow <= ow1; ow++) {
            int ws = ow * p.stride_w, o = oh * p.q + ow;
            if (AVG) {
                int cols = min(ws - p.pad_left + p.s, p.w) - max(ws - p.pad_left, 0);
                acc += dyp[o] / (float)(rows * cols);
            } else if ((int)amp[o] == kh * p.s + (c - ws)) {
                acc += dyp[o];
            }
        }
    }
    dx[i] = acc;
}

// whole (n, c) planes per launch, so that every flat index of a launch stays under 2^31
// (dev/pool_emu.sh sets a small cap to run several launches)
#ifndef POOL_LAUNCH_CAP
#define POOL_LAUNCH_CAP INT32_MAX
#endif
static int64_t planes_per_launch(const cb_pool_params *p) {
    int64_t in = (int64_t)p->h * p->w, out = (int64_t)p->p * p->q, plane = in > out ? in : out;
    int64_t k = plane > 0 ? (int64_t)(POOL_LAUNCH_CAP) / plane : 1;
    return k > 0 ? k : 1;
}

template <class A, bool AVG> static void pool_forward_t(const cb_pool_params *p, const float *x, float *y, A *argmax) {
    pool_geom g = geom_of(p);
    int64_t planes = (int64_t)p->n * p->c, step = planes_per_launch(p);
    for (int64_t nc0 = 0; nc0 < planes; nc0 += step) {
        int64_t count = planes - nc0 < step ? planes - nc0 : step;
        uint32_t total = (uint32_t)(count * g.pq);
        if (!total) continue;
        pool_fwd_kernel<A, AVG><<<(total + POOL_THREADS - 1) / POOL_THREADS, POOL_THREADS>>>(
            g, total, x + nc0 * g.hw, y + nc0 * g.pq, argmax ? argmax + nc0 * g.pq : NULL);
    }
}

template <class A, bool AVG> static void pool_backward_t(const cb_pool_params *p, const float *dy, const A *argmax, float *dx) {
    pool_geom g = geom_of(p);
    int64_t planes = (int64_t)p->n * p->c, step = planes_per_launch(p);
    for (int64_t nc0 = 0; nc0 < planes; nc0 += step) {
        int64_t count = planes - nc0 < step ? planes - nc0 : step;
        uint32_t total = (uint32_t)(count * g.hw);
        if (!total) continue;
        pool_bwd_kernel<A, AVG><<<(total + POOL_THREADS - 1) / POOL_THREADS, POOL_THREADS>>>(
            g, total, dy + nc0 * g.pq, AVG ? argmax : argmax + nc0 * g.pq, dx + nc0 * g.hw);
    }
}

// one byte per window offset when 255 (the "none" mark) is not an offset
static bool argmax_is_byte(const cb_pool_params *p) { return (int64_t)p->r * p->s <= 255; }

extern "C" void cb_cuda_pool_forward(const cb_pool_params *p, const float *x, float *y, void *argmax) {
    if (p->is_avg) pool_forward_t<uint8_t, true>(p, x, y, (uint8_t *)NULL);
    else if (argmax_is_byte(p)) pool_forward_t<uint8_t, false>(p, x, y, (uint8_t *)argmax);
    else pool_forward_t<int32_t, false>(p, x, y, (int32_t *)argmax);
}

extern "C" void cb_cuda_pool_backward(const cb_pool_params *p, const float *dy, const void *argmax, float *dx) {
    if (p->is_avg) pool_backward_t<uint8_t, true>(p, dy, (const uint8_t *)NULL, dx);
    else if (argmax_is_byte(p)) pool_backward_t<uint8_t, false>(p, dy, (const uint8_t *)argmax, dx);
    else pool_backward_t<int32_t, false>(p, dy, (const int32_t *)argmax, dx);
}
