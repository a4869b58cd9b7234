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
#include "cuda/pool_nchw.cuh"
#include "storage/nhwc_sums.cuh"

#include <stdint.h>

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
        pool_fwd_kernel<float, A, AVG><<<(total + POOL_THREADS - 1) / POOL_THREADS, POOL_THREADS>>>(
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
        pool_bwd_kernel<float, A, AVG><<<(total + POOL_THREADS - 1) / POOL_THREADS, POOL_THREADS>>>(
            g, total, dy + nc0 * g.pq, AVG ? argmax : argmax + nc0 * g.pq, dx + nc0 * g.hw);
    }
}

// ---- global average pooling (one output pixel whose window is the whole, unpadded input) -------
// The general kernels give each output one thread, which would sum a whole plane serially; here a
// block per (image, 32 channels) under NHWC (32 channel lanes by 32 pixel lanes) or a warp per
// plane under NCHW sums in fp32 per lane, the lanes added in a fixed order.
bool cb_cuda_pool_is_global_avg(const cb_pool_params *p) {
    return p->is_avg && p->p == 1 && p->q == 1 && p->r == p->h && p->s == p->w && p->pad_top == 0 && p->pad_left == 0;
}

template <class T> __global__ void gap_nhwc_kernel(int c, int64_t hw, const T *__restrict__ x, T *__restrict__ y) {
    __shared__ float part[32][33];
    int ch = blockIdx.y * 32 + threadIdx.x;
    int64_t img = blockIdx.x;
    float s = 0.f;
    if (ch < c)
        for (int64_t i = threadIdx.y; i < hw; i += blockDim.y) s += pool_ld(x[(img * hw + i) * c + ch]);
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && ch < c) {
        float t = 0.f;
        for (unsigned k = 0; k < blockDim.y; k++) t += part[k][threadIdx.x];
        pool_st(&y[img * c + ch], t / (float)hw);
    }
}

// NCHW: a warp per plane (8 planes a block), lanes along the plane, the lanes' sums added by
// shuffles in a fixed order (late planes of 7x7 are 49 elements: a block each would idle)
template <class T> __global__ void gap_nchw_kernel(int64_t planes, int64_t hw, const T *__restrict__ x, T *__restrict__ y) {
    int64_t plane = blockIdx.x * (int64_t)(POOL_THREADS / 32) + threadIdx.x / 32;
    if (plane >= planes) return; // (a whole warp: the shuffles below see all 32 lanes)
    int lane = threadIdx.x & 31;
    float s = 0.f;
    for (int64_t i = lane; i < hw; i += 32) s += pool_ld(x[plane * hw + i]);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) pool_st(&y[plane], s / (float)hw);
}

// 16-byte vectors (nhwc_image_sums, gap_bwd_vec) where c is a multiple of them, the tensors are
// 16-byte aligned and fewer than 2^31 vectors (32-bit indexes)
static int gap_vec(const cb_pool_params *p, int bf16, const void *a, const void *b) {
    int v = bf16 ? 8 : 4;
    int64_t total = (int64_t)p->n * p->c * p->h * p->w;
    return p->c % v == 0 && ((uintptr_t)a | (uintptr_t)b) % 16 == 0 && total / v < INT32_MAX ? v : 0;
}

extern "C" void cb_cuda_global_avg_forward(const cb_pool_params *p, int nhwc, int bf16, const void *x, void *y) {
    int64_t hw = (int64_t)p->h * p->w;
    if (nhwc && gap_vec(p, bf16, x, y)) {
        typedef __nv_bfloat16 bf;
        nhwc_sums_grid q = nhwc_image_sums_grid(p->n, p->c, bf16 ? 8 : 4);
        if (bf16) nhwc_image_sums<bf, 8, float, false><<<q.grid, NHWC_SUM_THREADS>>>(q.cv, q.lx, (size_t)hw, (const bf *)x, (const bf *)NULL, 1.f / (float)hw, (bf *)y);
        else nhwc_image_sums<float, 4, float, false><<<q.grid, NHWC_SUM_THREADS>>>(q.cv, q.lx, (size_t)hw, (const float *)x, (const float *)NULL, 1.f / (float)hw, (float *)y);
    } else if (nhwc) {
        dim3 grid((unsigned)p->n, (unsigned)((p->c + 31) / 32)), blk(32, 32);
        if (bf16) gap_nhwc_kernel<__nv_bfloat16><<<grid, blk>>>(p->c, hw, (const __nv_bfloat16 *)x, (__nv_bfloat16 *)y);
        else gap_nhwc_kernel<float><<<grid, blk>>>(p->c, hw, (const float *)x, (float *)y);
    } else {
        int64_t planes = (int64_t)p->n * p->c;
        unsigned blocks = (unsigned)((planes + POOL_THREADS / 32 - 1) / (POOL_THREADS / 32));
        if (bf16) gap_nchw_kernel<__nv_bfloat16><<<blocks, POOL_THREADS>>>(planes, hw, (const __nv_bfloat16 *)x, (__nv_bfloat16 *)y);
        else gap_nchw_kernel<float><<<blocks, POOL_THREADS>>>(planes, hw, (const float *)x, (float *)y);
    }
}

// its backward: dx = dy / (H*W) spread over the plane (ADD: dx += it, one rounding to T, where the
// input has a gradient already from another consumer, as an SE block's pool input has from the SE
// product), V elements of a pixel's channels (NHWC) or of a plane's pixels (NCHW) per thread
template <class T, int V> __device__ __forceinline__ void gap_put(T *dx, int64_t e, const float *g, bool add) {
    vec_t<T, V> o;
    if (add) o = *reinterpret_cast<const vec_t<T, V> *>(dx + e);
#pragma unroll
    for (int v = 0; v < V; v++) st(o.v, v, add ? ld(o.v, v) + g[v] : g[v]);
    *reinterpret_cast<vec_t<T, V> *>(dx + e) = o;
}
template <class T, int V, bool NHWC, bool ADD>
__global__ void __launch_bounds__(POOL_THREADS) gap_bwd_kernel(int64_t nvec, int c, int64_t hw, const T *__restrict__ dy, T *__restrict__ dx) {
    int64_t j = blockIdx.x * (int64_t)POOL_THREADS + threadIdx.x;
    if (j >= nvec) return;
    int64_t e = j * V; // first element
    const float inv = 1.f / (float)hw;
    float g[V];
    if (NHWC) {
        int64_t img = e / (hw * c);
        int ch = (int)(e % c);
#pragma unroll
        for (int v = 0; v < V; v++) g[v] = pool_ld(dy[img * c + ch + v]) * inv;
    } else {
#pragma unroll
        for (int v = 0; v < V; v++) g[v] = pool_ld(dy[e / hw]) * inv;
    }
    gap_put<T, V>(dx, e, g, ADD);
}

// NHWC in vectors by multiply-high divisions (gap_vec): vector j's channel vector j mod c/V, its
// image j / (hw c/V) (the kernel above divides 64-bit indexes: 0.11 ms on EfficientNet-B0's first
// SE block at b128 bf16, 2026-11-29, where writing dx takes 0.03)
template <class T, int V, bool ADD>
__global__ void __launch_bounds__(POOL_THREADS) gap_bwd_vec(uint32_t nvec, cb_fast_div by_cv, cb_fast_div by_img, float inv, const T *dy, T *dx) {
    uint32_t j = blockIdx.x * POOL_THREADS + threadIdx.x;
    if (j >= nvec) return;
    vec_t<T, V> g = reinterpret_cast<const vec_t<T, V> *>(dy)[cb_fast_div_q(by_img, j) * by_cv.d + (j - cb_fast_div_q(by_cv, j) * by_cv.d)];
    float f[V];
#pragma unroll
    for (int e = 0; e < V; e++) f[e] = ld(g.v, e) * inv;
    gap_put<T, V>(dx, (int64_t)j * V, f, ADD);
}

template <class T, bool ADD> static void gap_bwd_t(const cb_pool_params *p, int nhwc, const T *dy, T *dx) {
    const int VW = (int)(16 / sizeof(T));
    int64_t hw = (int64_t)p->h * p->w, total = (int64_t)p->n * p->c * hw;
    if (nhwc && gap_vec(p, sizeof(T) == 2, dy, dx)) {
        uint32_t nvec = (uint32_t)(total / VW), cv = (uint32_t)(p->c / VW);
        gap_bwd_vec<T, 16 / sizeof(T), ADD><<<(nvec + POOL_THREADS - 1) / POOL_THREADS, POOL_THREADS>>>(
            nvec, cb_fast_div_make(cv), cb_fast_div_make((uint32_t)(hw * cv)), 1.f / (float)hw, dy, dx);
        return;
    }
    bool vec = (nhwc ? p->c % VW == 0 : hw % VW == 0) && (uintptr_t)dx % 16 == 0;
    int v = vec ? VW : 1;
    int64_t nvec = total / v;
    unsigned blocks = (unsigned)((nvec + POOL_THREADS - 1) / POOL_THREADS);
    if (nhwc && vec) gap_bwd_kernel<T, 16 / sizeof(T), true, ADD><<<blocks, POOL_THREADS>>>(nvec, p->c, hw, dy, dx);
    else if (nhwc) gap_bwd_kernel<T, 1, true, ADD><<<blocks, POOL_THREADS>>>(nvec, p->c, hw, dy, dx);
    else if (vec) gap_bwd_kernel<T, 16 / sizeof(T), false, ADD><<<blocks, POOL_THREADS>>>(nvec, p->c, hw, dy, dx);
    else gap_bwd_kernel<T, 1, false, ADD><<<blocks, POOL_THREADS>>>(nvec, p->c, hw, dy, dx);
}

extern "C" void cb_cuda_global_avg_backward(const cb_pool_params *p, int nhwc, int bf16, const void *dy, void *dx) {
    if ((int64_t)p->n * p->c * p->h * p->w == 0) return;
    if (bf16) gap_bwd_t<__nv_bfloat16, false>(p, nhwc, (const __nv_bfloat16 *)dy, (__nv_bfloat16 *)dx);
    else gap_bwd_t<float, false>(p, nhwc, (const float *)dy, (float *)dx);
}

extern "C" void cb_cuda_global_avg_backward_add(const cb_pool_params *p, int nhwc, int bf16, const void *dy, void *dx) {
    if ((int64_t)p->n * p->c * p->h * p->w == 0) return;
    if (bf16) gap_bwd_t<__nv_bfloat16, true>(p, nhwc, (const __nv_bfloat16 *)dy, (__nv_bfloat16 *)dx);
    else gap_bwd_t<float, true>(p, nhwc, (const float *)dy, (float *)dx);
}

// one byte per window offset when 255 (the "none" mark) is not an offset
static bool argmax_is_byte(const cb_pool_params *p) { return (int64_t)p->r * p->s <= 255; }

extern "C" void cb_cuda_pool_forward(const cb_pool_params *p, const float *x, float *y, void *argmax) {
    if (cb_cuda_pool_is_global_avg(p) && (int64_t)p->n * p->c > 0) cb_cuda_global_avg_forward(p, 0, 0, x, y);
    else if (p->is_avg) pool_forward_t<uint8_t, true>(p, x, y, (uint8_t *)NULL);
    else if (argmax_is_byte(p)) pool_forward_t<uint8_t, false>(p, x, y, (uint8_t *)argmax);
    else pool_forward_t<int32_t, false>(p, x, y, (int32_t *)argmax);
}

extern "C" void cb_cuda_pool_backward(const cb_pool_params *p, const float *dy, const void *argmax, float *dx) {
    if (cb_cuda_pool_is_global_avg(p)) cb_cuda_global_avg_backward(p, 0, 0, dy, dx);
    else if (p->is_avg) pool_backward_t<uint8_t, true>(p, dy, (const uint8_t *)NULL, dx);
    else if (argmax_is_byte(p)) pool_backward_t<uint8_t, false>(p, dy, (const uint8_t *)argmax, dx);
    else pool_backward_t<int32_t, false>(p, dy, (const int32_t *)argmax, dx);
}
