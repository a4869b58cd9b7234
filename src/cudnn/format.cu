// The cudnn backend's kernels for NHWC and bf16 storage (src/cudnn/format.h): conversions between
// layouts and types, and the few layers it computes itself (bias, relu gradient, dropout, sum,
// concatenation) on whatever storage it uses.
#include "cuda/common.cuh"
#include "cudnn/format.h"

#include <cuda_bf16.h>

typedef __nv_bfloat16 bf16;

__device__ static inline float ld(const float *p, size_t i) { return p[i]; }
__device__ static inline float ld(const bf16 *p, size_t i) { return __bfloat162float(p[i]); }
__device__ static inline void st(float *p, size_t i, float v) { p[i] = v; }
__device__ static inline void st(bf16 *p, size_t i, float v) { p[i] = __float2bfloat16_rn(v); }

// element i of dst (in dst's layout) from its (n, c, s = y*w + x) in src's layout
template <class S, class D>
__global__ void convert_kernel(size_t total, int64_t c, int64_t hw, const S *src, bool src_nhwc, D *dst, bool dst_nhwc) {
    CB_FOR(i, total) {
        size_t n_, c_, s_;
        if (dst_nhwc) c_ = i % c, s_ = (i / c) % hw, n_ = i / c / hw;
        else s_ = i % hw, c_ = (i / hw) % c, n_ = i / hw / c;
        size_t j = src_nhwc ? (n_ * hw + s_) * c + c_ : (n_ * c + c_) * hw + s_;
        st(dst, i, ld(src, j));
    }
}

template <class S>
static void convert_to(size_t t, int64_t c, int64_t hw, const S *src, bool sn, void *dst, int dst_fmt) {
    bool dn = dst_fmt & CB_FMT_NHWC;
    if (dst_fmt & CB_FMT_BF16) convert_kernel<<<cb_blocks(t, 256), 256>>>(t, c, hw, src, sn, (bf16 *)dst, dn);
    else convert_kernel<<<cb_blocks(t, 256), 256>>>(t, c, hw, src, sn, (float *)dst, dn);
}

extern "C" void cb_fmt_convert(int64_t n, int64_t c, int64_t h, int64_t w, const void *src, int src_fmt, void *dst,
                               int dst_fmt) {
    size_t t = (size_t)(n * c * h * w);
    if (!t) return;
    bool sn = src_fmt & CB_FMT_NHWC;
    if (src_fmt & CB_FMT_BF16) convert_to(t, c, h * w, (const bf16 *)src, sn, dst, dst_fmt);
    else convert_to(t, c, h * w, (const float *)src, sn, dst, dst_fmt);
}

template <class T> __global__ void add_kernel(size_t n, T *dst, const T *src) { CB_FOR(i, n) st(dst, i, ld(dst, i) + ld(src, i)); }
template <class T> __global__ void fill_kernel(size_t n, T *dst, float v) { CB_FOR(i, n) st(dst, i, v); }
template <class T> __global__ void relu_bwd_kernel(size_t n, const T *y, const T *dy, T *dx) {
    CB_FOR(i, n) st(dx, i, ld(y, i) > 0.f ? ld(dy, i) : 0.f);
}
template <class T> __global__ void dropout_fwd_kernel(size_t n, float keep, uint64_t seed, const T *x, float *mask, T *y) {
    CB_FOR(i, n) {
        float m = cb_hash_uniform(seed, i) < keep ? 1.f / keep : 0.f;
        mask[i] = m;
        st(y, i, ld(x, i) * m);
    }
}
template <class T> __global__ void dropout_bwd_kernel(size_t n, const float *mask, const T *dy, T *dx) {
    CB_FOR(i, n) st(dx, i, ld(dy, i) * mask[i]);
}

// kernel<T> over n elements (nothing when n is 0)
#define LAUNCH(kernel, T, n, ...)                                                                                      \
    do {                                                                                                               \
        if (n) kernel<T><<<cb_blocks(n, 256), 256>>>(__VA_ARGS__);                                                     \
    } while (0)

extern "C" void cb_fmt_add(size_t n, void *dst, const void *src, int b) {
    if (b) LAUNCH(add_kernel, bf16, n, n, (bf16 *)dst, (const bf16 *)src);
    else LAUNCH(add_kernel, float, n, n, (float *)dst, (const float *)src);
}
extern "C" void cb_fmt_fill(size_t n, void *dst, float v, int b) {
    if (b) LAUNCH(fill_kernel, bf16, n, n, (bf16 *)dst, v);
    else LAUNCH(fill_kernel, float, n, n, (float *)dst, v);
}
extern "C" void cb_fmt_relu_backward(size_t n, const void *y, const void *dy, void *dx, int b) {
    if (b) LAUNCH(relu_bwd_kernel, bf16, n, n, (const bf16 *)y, (const bf16 *)dy, (bf16 *)dx);
    else LAUNCH(relu_bwd_kernel, float, n, n, (const float *)y, (const float *)dy, (float *)dx);
}
extern "C" void cb_fmt_dropout_forward(size_t n, float keep, uint64_t seed, const void *x, float *mask, void *y, int b) {
    if (b) LAUNCH(dropout_fwd_kernel, bf16, n, n, keep, seed, (const bf16 *)x, mask, (bf16 *)y);
    else LAUNCH(dropout_fwd_kernel, float, n, n, keep, seed, (const float *)x, mask, (float *)y);
}
extern "C" void cb_fmt_dropout_backward(size_t n, const float *mask, const void *dy, void *dx, int b) {
    if (b) LAUNCH(dropout_bwd_kernel, bf16, n, n, mask, (const bf16 *)dy, (bf16 *)dx);
    else LAUNCH(dropout_bwd_kernel, float, n, n, mask, (const float *)dy, (float *)dx);
}

template <class T> __global__ void bias_add_kernel(size_t total, int k, int64_t inner, const float *b, T *y) {
    CB_FOR(i, total) st(y, i, ld(y, i) + b[(i / inner) % k]);
}

extern "C" void cb_fmt_bias_add(int64_t rows, int k, int64_t inner, const float *b, void *y, int bf) {
    size_t t = (size_t)(rows * k * inner);
    if (bf) LAUNCH(bias_add_kernel, bf16, t, t, k, inner, b, (bf16 *)y);
    else LAUNCH(bias_add_kernel, float, t, t, k, inner, b, (float *)y);
}

// inner > 1 (NCHW): one block per channel, contiguous runs of `inner`; sums in double
template <class T> __global__ void bias_grad_inner_kernel(int64_t rows, int k, int64_t inner, const T *dy, float *db) {
    int c = blockIdx.x;
    double s = 0;
    for (int64_t i = threadIdx.x; i < rows * inner; i += blockDim.x) {
        int64_t r = i / inner, o = i - r * inner;
        s += ld(dy, ((size_t)r * k + c) * inner + o);
    }
    s = cb_block_sum(s);
    if (threadIdx.x == 0) db[c] = (float)s;
}

// inner == 1 (NHWC, FC): block (32, 8) covers 32 adjacent channels (coalesced reads along a row);
// blockIdx.y takes every gridDim.y-th group of 8 rows; part[blockIdx.y][c] gets the block's sum
template <class T> __global__ void bias_grad_rows_kernel(int64_t rows, int k, const T *dy, float *part) {
    __shared__ float red[8][33];
    int c = blockIdx.x * 32 + threadIdx.x;
    float s = 0.f;
    if (c < k)
        for (int64_t r = (int64_t)blockIdx.y * 8 + threadIdx.y; r < rows; r += (int64_t)gridDim.y * 8) s += ld(dy, (size_t)r * k + c);
    red[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < k) {
        for (int j = 1; j < 8; j++) s += red[j][threadIdx.x];
        part[(size_t)blockIdx.y * k + c] = s;
    }
}
__global__ void bias_grad_parts_kernel(int parts, int k, const float *part, float *db) {
    CB_FOR(c, (size_t)k) {
        double s = 0;
        for (int j = 0; j < parts; j++) s += part[(size_t)j * k + c];
        db[c] = (float)s;
    }
}

extern "C" void cb_fmt_bias_grad(int64_t rows, int k, int64_t inner, const void *dy, int bf, float *db, float *part) {
    if (inner > 1) {
        if (bf) bias_grad_inner_kernel<<<k, 256>>>(rows, k, inner, (const bf16 *)dy, db);
        else bias_grad_inner_kernel<<<k, 256>>>(rows, k, inner, (const float *)dy, db);
        return;
    }
    int64_t groups = (rows + 7) / 8;
    int parts = (int)(groups < CB_FMT_BIAS_PARTS ? (groups ? groups : 1) : CB_FMT_BIAS_PARTS);
    dim3 grid((unsigned)((k + 31) / 32), (unsigned)parts), block(32, 8);
    if (bf) bias_grad_rows_kernel<<<grid, block>>>(rows, k, (const bf16 *)dy, part);
    else bias_grad_rows_kernel<<<grid, block>>>(rows, k, (const float *)dy, part);
    bias_grad_parts_kernel<<<cb_blocks((size_t)k, 256), 256>>>(parts, k, part, db);
}

extern "C" void cb_fmt_concat_copy(int64_t n, int64_t c_dst, int64_t c_src, int64_t c_off, int64_t inner, size_t bytes,
                                   void *dst, const void *src, int to_slice) {
    size_t blk = (size_t)(c_src * inner) * bytes, pitch = (size_t)(c_dst * inner) * bytes, off = (size_t)(c_off * inner) * bytes;
    if (!to_slice) cudaMemcpy2DAsync((char *)dst + off, pitch, src, blk, blk, (size_t)n, cudaMemcpyDeviceToDevice);
    else cudaMemcpy2DAsync(dst, blk, (const char *)src + off, pitch, blk, (size_t)n, cudaMemcpyDeviceToDevice);
}
