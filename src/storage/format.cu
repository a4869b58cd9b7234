// The cudnn backend's kernels for NHWC and bf16 storage (src/storage/format.h): conversions between
// layouts and types, and the few layers it computes itself (bias, relu gradient, dropout, sum,
// concatenation) on whatever storage it uses.
#include "cuda/common.cuh"
#include "storage/format.h"
#include "core/act.h"
#include "cuda/fast_div.h"
#include "storage/elem.cuh"

// element i of dst (n, cd, s = y*w + x in dst's layout) from src (n, cs, s in src's layout): the
// channels both have; a dst channel at or past cs is 0 (padding), a src channel past cd is dropped
template <class S, class D>
__global__ void convert_kernel(size_t total, int64_t cs, int64_t cd, int64_t hw, const S *src, bool src_nhwc, D *dst, bool dst_nhwc) {
    CB_FOR(i, total) {
        size_t n_, c_, s_;
        if (dst_nhwc) c_ = i % cd, s_ = (i / cd) % hw, n_ = i / cd / hw;
        else s_ = i % hw, c_ = (i / hw) % cd, n_ = i / hw / cd;
        if (c_ >= (size_t)cs) {
            st(dst, i, 0.f);
            continue;
        }
        size_t j = src_nhwc ? (n_ * hw + s_) * cs + c_ : (n_ * cs + c_) * hw + s_;
        st(dst, i, ld(src, j));
    }
}

// the same with 32-bit indexes (total < 2^31) and divisions by multiply and shift
template <class S, class D>
__global__ void __launch_bounds__(256) convert32_kernel(uint32_t total, cb_fast_div by_c, cb_fast_div by_hw, uint32_t cs, const S *__restrict__ src,
                                                        bool src_nhwc, D *__restrict__ dst, bool dst_nhwc) {
    uint32_t i = blockIdx.x * 256u + threadIdx.x;
    if (i >= total) return;
    uint32_t n_, c_, s_, t;
    if (dst_nhwc) t = cb_fast_div_q(by_c, i), c_ = i - t * by_c.d, n_ = cb_fast_div_q(by_hw, t), s_ = t - n_ * by_hw.d;
    else t = cb_fast_div_q(by_hw, i), s_ = i - t * by_hw.d, n_ = cb_fast_div_q(by_c, t), c_ = t - n_ * by_c.d;
    if (c_ >= cs) {
        st(dst, i, 0.f);
        return;
    }
    size_t hw = by_hw.d, j = src_nhwc ? ((size_t)n_ * hw + s_) * cs + c_ : ((size_t)n_ * cs + c_) * hw + s_;
    st(dst, i, ld(src, j));
}

template <class S>
static void convert_to(size_t t, int64_t cs, int64_t cd, int64_t hw, const S *src, bool sn, void *dst, int dst_fmt) {
    bool dn = dst_fmt & CB_FMT_NHWC;
    if (t < 0x7fffffff) {
        cb_fast_div bc = cb_fast_div_make((uint32_t)cd), bh = cb_fast_div_make((uint32_t)hw);
        unsigned grid = (unsigned)((t + 255) / 256);
        if (dst_fmt & CB_FMT_BF16) convert32_kernel<S, bf16><<<grid, 256>>>((uint32_t)t, bc, bh, (uint32_t)cs, src, sn, (bf16 *)dst, dn);
        else convert32_kernel<S, float><<<grid, 256>>>((uint32_t)t, bc, bh, (uint32_t)cs, src, sn, (float *)dst, dn);
        return;
    }
    if (dst_fmt & CB_FMT_BF16) convert_kernel<S, bf16><<<cb_blocks(t, 256), 256>>>(t, cs, cd, hw, src, sn, (bf16 *)dst, dn);
    else convert_kernel<S, float><<<cb_blocks(t, 256), 256>>>(t, cs, cd, hw, src, sn, (float *)dst, dn);
}

// dst (n, hd, wd, cd) <- src (n, hs, ws, cs), both NHWC of one type, cd a multiple of V: one thread
// per V consecutive dst channels of a pixel (adjacent threads, adjacent bytes: the loads and stores
// coalesce; V-wide stores), zeros where src has no such pixel or channel. (One thread per pixel
// looping over its channels, as before 2026-11-27, strode cd elements between a warp's lanes:
// channel-padded layers of networks with odd channel counts took 2-30x their convolution's time.)
template <class T, int V>
__global__ void __launch_bounds__(256) window_cvec_kernel(uint32_t nvec, cb_fast_div by_cv, cb_fast_div by_wd, cb_fast_div by_hd, int hs,
                                                          int ws, int cs, const T *__restrict__ src, T *__restrict__ dst) {
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    uint32_t r = cb_fast_div_q(by_cv, j), c0 = (j - r * by_cv.d) * V;
    uint32_t t = cb_fast_div_q(by_wd, r), x = r - t * by_wd.d;
    uint32_t n = cb_fast_div_q(by_hd, t), y = t - n * by_hd.d;
    bool in = (int)y < hs && (int)x < ws;
    const T *a = src + (((size_t)n * hs + (in ? y : 0)) * ws + (in ? x : 0)) * cs;
    vec_t<T, V> o;
#pragma unroll
    for (int v = 0; v < V; v++) st(o.v, v, in && (int)c0 + v < cs ? ld(a, c0 + v) : 0.f);
    reinterpret_cast<vec_t<T, V> *>(dst)[j] = o;
}
template <class T, int V>
static void window_cvec_v(int64_t nvec, int64_t hs, int64_t ws, int64_t cs, const T *src, int64_t hd, int64_t wd, int64_t cd, T *dst) {
    cb_fast_div cv = cb_fast_div_make((uint32_t)(cd / V)), a = cb_fast_div_make((uint32_t)wd), b = cb_fast_div_make((uint32_t)hd);
    window_cvec_kernel<T, V><<<(unsigned)((nvec + 255) / 256), 256>>>((uint32_t)nvec, cv, a, b, (int)hs, (int)ws, (int)cs, src, dst);
}

// vector j of dst (its elements j*V on) where the tensor ends (total elements) within it or past it:
// V-wide where it is whole, else element by element up to the end
template <class T, int V> __device__ static __forceinline__ void store_end(T *__restrict__ dst, uint32_t j, uint32_t total, const vec_t<T, V> &out) {
    uint32_t o = j * V;
    if (o + V <= total) reinterpret_cast<vec_t<T, V> *>(dst)[j] = out;
    else
#pragma unroll
        for (int v = 0; v < V; v++)
            if (o + v < total) st(dst, o + v, ld(out.v, v));
}

// The same where cd is not a multiple of V (the gradient cut back from 56 channels to 49: one
// element a thread above, 0.25 ms where the layer's backward data took 0.18 on the H200,
// 2026-11-29; 0.13 this way, 1295893): a thread takes V consecutive dst elements whatever cd and loads each
// (adjacent threads, adjacent elements), stepping channel, column, row and image from the first, its
// source pixel found again only where a pixel ends. The last vector may be partial (total elements).
template <class T, int V>
__global__ void __launch_bounds__(256) window_nhwc_kernel(uint32_t nvec, uint32_t total, cb_fast_div by_cd, cb_fast_div by_wd, cb_fast_div by_hd,
                                                          uint32_t hs, uint32_t ws, uint32_t cs, const T *__restrict__ src, T *__restrict__ dst) {
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    uint32_t o = j * V, r = cb_fast_div_q(by_cd, o), ch = o - r * by_cd.d;
    uint32_t t = cb_fast_div_q(by_wd, r), x = r - t * by_wd.d;
    uint32_t n = cb_fast_div_q(by_hd, t), y = t - n * by_hd.d;
    bool in = y < hs && x < ws;
    const T *a = src + (((size_t)n * hs + (in ? y : 0)) * ws + (in ? x : 0)) * cs;
    vec_t<T, V> out;
#pragma unroll
    for (int v = 0; v < V; v++) {
        if (ch == by_cd.d) { // the next pixel
            ch = 0;
            if (++x == by_wd.d) {
                x = 0;
                if (++y == by_hd.d) y = 0, n++;
            }
            in = y < hs && x < ws;
            a = src + (((size_t)n * hs + (in ? y : 0)) * ws + (in ? x : 0)) * cs;
        }
        st(out.v, v, in && ch < cs && o + v < total ? ld(a, ch) : 0.f);
        ch++;
    }
    store_end(dst, j, total, out);
}
template <class T, int V>
static void window_nhwc_v(int64_t total, int64_t hs, int64_t ws, int64_t cs, const T *src, int64_t hd, int64_t wd, int64_t cd, T *dst) {
    int64_t nvec = (total + V - 1) / V;
    cb_fast_div c_ = cb_fast_div_make((uint32_t)cd), w_ = cb_fast_div_make((uint32_t)wd), h_ = cb_fast_div_make((uint32_t)hd);
    window_nhwc_kernel<T, V><<<(unsigned)((nvec + 255) / 256), 256>>>((uint32_t)nvec, (uint32_t)total, c_, w_, h_, (uint32_t)hs, (uint32_t)ws,
                                                                      (uint32_t)cs, src, dst);
}

// dst (n, hd, wd, c) <- src (n, hs, ws, c), NHWC of one type with the same channels: image rows
// added at the end or dropped (a TF SAME input's zero-padded copy, its gradient cut back). Seen as
// rows of whole image rows (wd*c elements in dst, ws*c in src), an element's source is at the same
// offset in its source row: window_nhwc_kernel's way with one step less an element (no channel
// or column to count). (At C 65 in bf16, one element a thread, the copy of a stride-2 depthwise
// layer's input ran at a third of memory speed before: 0.33 ms for 202 MB on the H200; 0.14 ms
// this way, 2026-11-29.)
template <class T, int V>
__global__ void __launch_bounds__(256) window_rows_kernel(uint32_t nvec, uint32_t total, cb_fast_div by_ld, cb_fast_div by_hd, uint32_t hs,
                                                          uint32_t ls, const T *__restrict__ src, T *__restrict__ dst) {
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    uint32_t o = j * V, r = cb_fast_div_q(by_ld, o), k = o - r * by_ld.d;
    uint32_t n = cb_fast_div_q(by_hd, r), y = r - n * by_hd.d;
    const T *a = src + ((size_t)n * hs + (y < hs ? y : 0)) * ls;
    vec_t<T, V> out;
#pragma unroll
    for (int v = 0; v < V; v++) {
        if (k == by_ld.d) { // the next dst row (at most once an element: k < its row's width before)
            k = 0;
            if (++y == by_hd.d) y = 0, n++;
            a = src + ((size_t)n * hs + (y < hs ? y : 0)) * ls;
        }
        st(out.v, v, y < hs && k < ls && o + v < total ? ld(a, k) : 0.f);
        k++;
    }
    store_end(dst, j, total, out);
}
template <class T, int V>
static void window_rows_v(int64_t total, int64_t hs, int64_t ws, int64_t c, const T *src, int64_t hd, int64_t wd, T *dst) {
    int64_t nvec = (total + V - 1) / V;
    cb_fast_div ld_ = cb_fast_div_make((uint32_t)(wd * c)), hd_ = cb_fast_div_make((uint32_t)hd);
    window_rows_kernel<T, V><<<(unsigned)((nvec + 255) / 256), 256>>>((uint32_t)nvec, (uint32_t)total, ld_, hd_, (uint32_t)hs, (uint32_t)(ws * c), src, dst);
}

// dst (n, hd, wd, cd) <- src (n, hs, ws, cs): t dst elements by one of the three kernels above
enum { WIN_CVEC, WIN_ROWS, WIN_ELEMS };
template <class T, int V>
static void window_v(int kind, int64_t t, int64_t hs, int64_t ws, int64_t cs, const T *src, int64_t hd, int64_t wd, int64_t cd, T *dst) {
    if (kind == WIN_CVEC) window_cvec_v<T, V>(t / V, hs, ws, cs, src, hd, wd, cd, dst);
    else if (kind == WIN_ROWS) window_rows_v<T, V>(t, hs, ws, cs, src, hd, wd, dst);
    else window_nhwc_v<T, V>(t, hs, ws, cs, src, hd, wd, cd, dst);
}

// the same with 64-bit indexes, one element a thread (a single row past 2^31 elements)
template <class T>
__global__ void window_nhwc64_kernel(size_t total, int64_t hs, int64_t ws, int64_t cs, const T *src, int64_t hd, int64_t wd, int64_t cd, T *dst) {
    CB_FOR(i, total) {
        size_t c = i % cd, r = i / cd, x = r % wd, t = r / wd, y = t % hd, n = t / hd;
        bool in = (int64_t)y < hs && (int64_t)x < ws && (int64_t)c < cs;
        st(dst, i, in ? ld(src, ((n * hs + y) * ws + x) * cs + c) : 0.f);
    }
}

// dst (planes, hd, wd) <- src (planes, hs, ws), NCHW planes of one type: one thread per dst
// element, zeros where src has no such pixel (rows and columns added at the end)
template <class T>
__global__ void __launch_bounds__(256) window_nchw_kernel(uint32_t total, cb_fast_div by_wd, cb_fast_div by_hd, uint32_t hs, uint32_t ws,
                                                          const T *__restrict__ src, T *__restrict__ dst) {
    uint32_t i = blockIdx.x * 256u + threadIdx.x;
    if (i >= total) return;
    uint32_t t = cb_fast_div_q(by_wd, i), x = i - t * by_wd.d, p = cb_fast_div_q(by_hd, t), y = t - p * by_hd.d;
    st(dst, i, y < hs && x < ws ? ld(src, ((size_t)p * hs + y) * ws + x) : 0.f);
}

extern "C" void cb_fmt_window_nchw(int64_t planes, int64_t hs, int64_t ws, const void *src, int64_t hd, int64_t wd, void *dst, int bf) {
    int64_t per = hd * wd, chunk = 0x7fffffff / (per ? per : 1); // planes per launch: 32-bit indexes
    for (int64_t p0 = 0; p0 < planes && per; p0 += chunk) {
        int64_t np = planes - p0 < chunk ? planes - p0 : chunk;
        uint32_t total = (uint32_t)(np * per);
        cb_fast_div a = cb_fast_div_make((uint32_t)wd), b = cb_fast_div_make((uint32_t)hd);
        unsigned grid = (total + 255) / 256;
        size_t es = bf ? 2 : 4, so = (size_t)(p0 * hs * ws) * es, d0 = (size_t)(p0 * per) * es;
        if (bf) window_nchw_kernel<bf16><<<grid, 256>>>(total, a, b, (uint32_t)hs, (uint32_t)ws, (const bf16 *)((const char *)src + so), (bf16 *)((char *)dst + d0));
        else window_nchw_kernel<float><<<grid, 256>>>(total, a, b, (uint32_t)hs, (uint32_t)ws, (const float *)((const char *)src + so), (float *)((char *)dst + d0));
    }
}

extern "C" void cb_fmt_window_nhwc(int64_t n, int64_t hs, int64_t ws, int64_t cs, const void *src, int64_t hd, int64_t wd, int64_t cd,
                                   void *dst, int bf) {
    int64_t rows = n * hd * wd, es = bf ? 2 : 4;
    if (!rows || !cd) return;
    if (wd * cd >= 0x7fffffff) { // a row beyond 32-bit indexes
        size_t t = (size_t)(rows * cd);
        if (bf) window_nhwc64_kernel<bf16><<<cb_blocks(t, 256), 256>>>(t, hs, ws, cs, (const bf16 *)src, hd, wd, cd, (bf16 *)dst);
        else window_nhwc64_kernel<float><<<cb_blocks(t, 256), 256>>>(t, hs, ws, cs, (const float *)src, hd, wd, cd, (float *)dst);
        return;
    }
    if (rows * cd >= 0x7fffffff && n == 1) { // one image beyond 32-bit indexes: bands of its rows
        int64_t band = 0x7fffffff / (wd * cd) > 0 ? 0x7fffffff / (wd * cd) : 1;
        for (int64_t y0 = 0; y0 < hd; y0 += band) {
            int64_t h = hd - y0 < band ? hd - y0 : band, left = hs > y0 ? hs - y0 : 0;
            cb_fmt_window_nhwc(1, left < h ? left : h, ws, cs, (const char *)src + (size_t)((left ? y0 : 0) * ws * cs) * es, h, wd, cd,
                               (char *)dst + (size_t)(y0 * wd * cd) * es, bf);
        }
        return;
    }
    if (rows * cd >= 0x7fffffff) { // beyond 32-bit indexes: one image at a time
        for (int64_t i = 0; i < n; i++)
            cb_fmt_window_nhwc(1, hs, ws, cs, (const char *)src + (size_t)(i * hs * ws * cs) * es, hd, wd, cd,
                               (char *)dst + (size_t)(i * hd * wd * cd) * es, bf);
        return;
    }
    int v = 16 / (int)es; // 16-byte stores where dst's alignment allows, else 8, else one element
    while (v > 1 && (uintptr_t)dst % (size_t)(v * es)) v /= 2;
    // channels a multiple of V: vectors of a pixel's channels; else the same channels: whole image
    // rows; else consecutive elements a thread
    int kind = cd % v == 0 ? WIN_CVEC : cs == cd && ws * cs < 0x7fffffff ? WIN_ROWS : WIN_ELEMS;
    int64_t t = rows * cd;
    if (bf) {
        const bf16 *s = (const bf16 *)src;
        bf16 *d = (bf16 *)dst;
        if (v == 8) window_v<bf16, 8>(kind, t, hs, ws, cs, s, hd, wd, cd, d);
        else if (v == 4) window_v<bf16, 4>(kind, t, hs, ws, cs, s, hd, wd, cd, d);
        else if (v == 2) window_v<bf16, 2>(kind, t, hs, ws, cs, s, hd, wd, cd, d);
        else window_v<bf16, 1>(kind, t, hs, ws, cs, s, hd, wd, cd, d);
    } else {
        const float *s = (const float *)src;
        float *d = (float *)dst;
        if (v == 4) window_v<float, 4>(kind, t, hs, ws, cs, s, hd, wd, cd, d);
        else if (v == 2) window_v<float, 2>(kind, t, hs, ws, cs, s, hd, wd, cd, d);
        else window_v<float, 1>(kind, t, hs, ws, cs, s, hd, wd, cd, d);
    }
}

// dst = src elementwise between types, V elements per thread (a layout change that moves nothing)
template <class S, class D, int V> __global__ void __launch_bounds__(256) cast_kernel(uint32_t nvec, const S *__restrict__ src, D *__restrict__ dst) {
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    vec_t<S, V> a = reinterpret_cast<const vec_t<S, V> *>(src)[j];
    vec_t<D, V> b;
#pragma unroll
    for (int v = 0; v < V; v++) st(b.v, v, ld(a.v, v));
    reinterpret_cast<vec_t<D, V> *>(dst)[j] = b;
}
template <class S, class D> static bool cast_t(size_t t, const S *src, D *dst, cudaStream_t s = 0) {
    if (t % 4 || (uintptr_t)src % (4 * sizeof(S)) || (uintptr_t)dst % (4 * sizeof(D)) || t / 4 >= 0x7fffffffu) return false;
    uint32_t nvec = (uint32_t)(t / 4);
    cast_kernel<S, D, 4><<<(nvec + 255) / 256, 256, 0, s>>>(nvec, src, dst);
    return true;
}
// the same for any count and alignment, one element per thread
template <class S, class D> __global__ void cast_any_kernel(size_t n, const S *__restrict__ src, D *__restrict__ dst) {
    CB_FOR(i, n) st(dst, i, ld(src, i));
}

extern "C" void cb_fmt_cast(size_t n, const void *src, int src_fmt, void *dst, int dst_fmt, cudaStream_t s) {
    bool sb = src_fmt & CB_FMT_BF16, db = dst_fmt & CB_FMT_BF16;
    if (!n) return;
    if (sb == db) {
        cudaMemcpyAsync(dst, src, n * cb_fmt_bytes(src_fmt), cudaMemcpyDeviceToDevice, s);
    } else if (sb) {
        if (!cast_t(n, (const bf16 *)src, (float *)dst, s)) cast_any_kernel<bf16, float><<<cb_blocks(n, 256), 256, 0, s>>>(n, (const bf16 *)src, (float *)dst);
    } else {
        if (!cast_t(n, (const float *)src, (bf16 *)dst, s)) cast_any_kernel<float, bf16><<<cb_blocks(n, 256), 256, 0, s>>>(n, (const float *)src, (bf16 *)dst);
    }
}

extern "C" void cb_fmt_convert_pad(int64_t n, int64_t c_src, int64_t c_dst, int64_t h, int64_t w, const void *src, int src_fmt,
                                   void *dst, int dst_fmt) {
    size_t t = (size_t)(n * c_dst * h * w);
    if (!t) return;
    bool sn = src_fmt & CB_FMT_NHWC;
    if (c_src == c_dst && (h * w == 1 || sn == (bool)(dst_fmt & CB_FMT_NHWC))) { // the same order: a cast or a copy
        bool sb = src_fmt & CB_FMT_BF16, db = dst_fmt & CB_FMT_BF16, done;
        if (sb == db) {
            cudaMemcpyAsync(dst, src, t * (sb ? 2 : 4), cudaMemcpyDeviceToDevice, 0);
            return;
        }
        if (sb) done = cast_t(t, (const bf16 *)src, (float *)dst);
        else done = cast_t(t, (const float *)src, (bf16 *)dst);
        if (done) return;
    }
    if (src_fmt == dst_fmt && sn && c_src != c_dst) {
        cb_fmt_window_nhwc(n, h, w, c_src, src, h, w, c_dst, dst, src_fmt & CB_FMT_BF16);
        return;
    }
    if (src_fmt & CB_FMT_BF16) convert_to(t, c_src, c_dst, h * w, (const bf16 *)src, sn, dst, dst_fmt);
    else convert_to(t, c_src, c_dst, h * w, (const float *)src, sn, dst, dst_fmt);
}

extern "C" void cb_fmt_convert(int64_t n, int64_t c, int64_t h, int64_t w, const void *src, int src_fmt, void *dst,
                               int dst_fmt) {
    cb_fmt_convert_pad(n, c, c, h, w, src, src_fmt, dst, dst_fmt);
}

template <class T> __global__ void add_kernel(size_t n, T *dst, const T *a, const T *b, bool relu) {
    CB_FOR(i, n) {
        float f = ld(a, i) + ld(b, i);
        st(dst, i, relu && f < 0.f ? 0.f : f);
    }
}
template <class T> __global__ void fill_kernel(size_t n, T *dst, float v) { CB_FOR(i, n) st(dst, i, v); }
template <class T> __global__ void relu_bwd_kernel(size_t n, const T *y, const T *dy, T *dx) {
    CB_FOR(i, n) st(dx, i, ld(y, i) > 0.f ? ld(dy, i) : 0.f);
}
template <class T>
__global__ void dropout_fwd_kernel(size_t n, float keep, uint64_t seed, const unsigned long long *step, const T *x, float *mask, T *y) {
    seed = cb_dropout_seed(seed, step);
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

extern "C" void cb_fmt_fill(size_t n, void *dst, float v, int b) {
    if (b) LAUNCH(fill_kernel, bf16, n, n, (bf16 *)dst, v);
    else LAUNCH(fill_kernel, float, n, n, (float *)dst, v);
}
extern "C" void cb_fmt_dropout_forward(size_t n, float keep, uint64_t seed, const unsigned long long *step, const void *x, float *mask,
                                       void *y, int b) {
    if (b) LAUNCH(dropout_fwd_kernel, bf16, n, n, keep, seed, step, (const bf16 *)x, mask, (bf16 *)y);
    else LAUNCH(dropout_fwd_kernel, float, n, n, keep, seed, step, (const float *)x, mask, (float *)y);
}
extern "C" void cb_fmt_dropout_backward(size_t n, const float *mask, const void *dy, void *dx, int b) {
    if (b) LAUNCH(dropout_bwd_kernel, bf16, n, n, mask, (const bf16 *)dy, (bf16 *)dx);
    else LAUNCH(dropout_bwd_kernel, float, n, n, mask, (const float *)dy, (float *)dx);
}

// ---- bias, ReLU: one pass, V elements (16 bytes) per thread, 32-bit indexes ------------------------


// the widest V (16 bytes of T, or 1) whose vectors tile n elements from 16-byte aligned pointers
template <class T> static int vec_width(size_t n, const void *a, const void *b) {
    int v = (int)(16 / sizeof(T));
    bool aligned = ((uintptr_t)a % 16 == 0) && ((uintptr_t)b % 16 == 0);
    return aligned && n % (size_t)v == 0 ? v : 1;
}

// y = act(y + b[channel]) (b may be NULL: the activation alone), over nvec vectors of V elements;
// xsave (or NULL) gets y + b, the activation's input (its gradient reads it). RELU: act is ReLU
// (the common case compiled apart), else the activation a.
// CH_LAST (NHWC, FC: inner 1): a vector is V consecutive channels, channel0 = (j mod k/V) * V.
// Else (NCHW): a vector is V consecutive pixels of one channel, channel = (j / (inner/V)) mod k.
template <class T, int V, bool CH_LAST, bool RELU>
__global__ void __launch_bounds__(256) bias_act_kernel(uint32_t nvec, cb_fast_div by_a, cb_fast_div by_k, const float *__restrict__ b,
                                                       T *__restrict__ y, cb_act act, T *__restrict__ xsave) {
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    vec_t<T, V> a = reinterpret_cast<vec_t<T, V> *>(y)[j], sv;
    uint32_t c0;
    if (CH_LAST) c0 = (j - cb_fast_div_q(by_a, j) * by_a.d) * V;
    else {
        uint32_t t = cb_fast_div_q(by_a, j);
        c0 = t - cb_fast_div_q(by_k, t) * by_k.d;
    }
#pragma unroll
    for (int v = 0; v < V; v++) {
        float f = ld(a.v, v) + (b ? b[CH_LAST ? c0 + v : c0] : 0.f);
        if (!RELU) st(sv.v, v, f);
        st(a.v, v, RELU ? fmaxf(f, 0.f) : cb_act_fwd_f32(act, f));
    }
    if (!RELU && xsave) reinterpret_cast<vec_t<T, V> *>(xsave)[j] = sv;
    reinterpret_cast<vec_t<T, V> *>(y)[j] = a;
}

template <class T>
__global__ void bias_act_wide_kernel(size_t total, int k, int64_t inner, const float *b, T *y, cb_act act, T *xsave) {
    CB_FOR(i, total) {
        float f = ld(y, i) + (b ? b[(i / inner) % k] : 0.f);
        if (xsave) st(xsave, i, f);
        st(y, i, cb_act_fwd_f32(act, f));
    }
}

template <class T, int V, bool CH_LAST>
static void bias_act_v(uint32_t nvec, cb_fast_div a, cb_fast_div kd, const float *b, T *y, cb_act act, T *xsave) {
    unsigned grid = (nvec + 255) / 256;
    if (act == CB_ACT_RELU) bias_act_kernel<T, V, CH_LAST, true><<<grid, 256>>>(nvec, a, kd, b, y, act, xsave);
    else bias_act_kernel<T, V, CH_LAST, false><<<grid, 256>>>(nvec, a, kd, b, y, act, xsave);
}

template <class T> static void bias_act_t(int64_t rows, int k, int64_t inner, const float *b, T *y, cb_act act, T *xsave) {
    size_t t = (size_t)(rows * k * inner);
    if (!t) return;
    const int VW = (int)(16 / sizeof(T));
    bool ch_last = inner == 1;
    int v = vec_width<T>(ch_last ? (size_t)k : (size_t)inner, y, xsave ? (const void *)xsave : (const void *)y);
    if (t / (size_t)v >= 0x7fffffffu) { // beyond 32-bit indexes: the plain grid-stride loop
        bias_act_wide_kernel<T><<<cb_blocks(t, 256), 256>>>(t, k, inner, b, y, act, xsave);
        return;
    }
    uint32_t nvec = (uint32_t)(t / (size_t)v);
    cb_fast_div kd = cb_fast_div_make((uint32_t)k);
    cb_fast_div a = cb_fast_div_make((uint32_t)(ch_last ? k / v : inner / v));
    if (v == VW && ch_last) bias_act_v<T, VW, true>(nvec, a, kd, b, y, act, xsave);
    else if (v == VW) bias_act_v<T, VW, false>(nvec, a, kd, b, y, act, xsave);
    else if (ch_last) bias_act_v<T, 1, true>(nvec, a, kd, b, y, act, xsave);
    else bias_act_v<T, 1, false>(nvec, a, kd, b, y, act, xsave);
}

extern "C" void cb_fmt_bias_act_fn(int64_t rows, int k, int64_t inner, const float *b, void *y, cb_act act, void *xsave, int bf) {
    if (bf) bias_act_t(rows, k, inner, b, (bf16 *)y, act, (bf16 *)xsave);
    else bias_act_t(rows, k, inner, b, (float *)y, act, (float *)xsave);
}

extern "C" void cb_fmt_bias_act(int64_t rows, int k, int64_t inner, const float *b, void *y, int relu, int bf) {
    cb_fmt_bias_act_fn(rows, k, inner, b, y, relu ? CB_ACT_RELU : CB_ACT_NONE, NULL, bf);
}

// dx = y > 0 ? dy : 0, V elements per thread
template <class T, int V>
__global__ void __launch_bounds__(256) relu_bwd_vec_kernel(uint32_t nvec, const T *__restrict__ y, const T *dy, T *dx) {
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    vec_t<T, V> a = reinterpret_cast<const vec_t<T, V> *>(y)[j], g = reinterpret_cast<const vec_t<T, V> *>(dy)[j];
#pragma unroll
    for (int v = 0; v < V; v++) st(g.v, v, ld(a.v, v) > 0.f ? ld(g.v, v) : 0.f);
    reinterpret_cast<vec_t<T, V> *>(dx)[j] = g;
}

template <class T> static void relu_bwd_t(size_t n, const T *y, const T *dy, T *dx) {
    const int VW = (int)(16 / sizeof(T));
    bool vec = vec_width<T>(n, y, dy) == VW && (uintptr_t)dx % 16 == 0;
    if (!n) return;
    if (!vec || n / VW >= 0x7fffffffu) {
        relu_bwd_kernel<T><<<cb_blocks(n, 256), 256>>>(n, y, dy, dx);
        return;
    }
    uint32_t nvec = (uint32_t)(n / VW);
    relu_bwd_vec_kernel<T, VW><<<(nvec + 255) / 256, 256>>>(nvec, y, dy, dx);
}

// dst = act(a + b), V elements per thread; a may be dst (a gradient summed over a tensor's
// consumers; a residual sum with its ReLU in one pass)
template <class T, int V, bool RELU>
__global__ void __launch_bounds__(256) add_vec_kernel(uint32_t nvec, T *dst, const T *a, const T *__restrict__ b) {
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    vec_t<T, V> x = reinterpret_cast<const vec_t<T, V> *>(a)[j], y = reinterpret_cast<const vec_t<T, V> *>(b)[j];
#pragma unroll
    for (int v = 0; v < V; v++) {
        float f = ld(x.v, v) + ld(y.v, v);
        st(x.v, v, RELU ? fmaxf(f, 0.f) : f);
    }
    reinterpret_cast<vec_t<T, V> *>(dst)[j] = x;
}

template <class T> static void add_t(size_t n, T *dst, const T *a, const T *b, bool relu) {
    const int VW = (int)(16 / sizeof(T));
    if (!n) return;
    if (vec_width<T>(n, dst, a) != VW || vec_width<T>(n, b, b) != VW || n / VW >= 0x7fffffffu) {
        add_kernel<T><<<cb_blocks(n, 256), 256>>>(n, dst, a, b, relu);
        return;
    }
    uint32_t nvec = (uint32_t)(n / VW);
    if (relu) add_vec_kernel<T, VW, true><<<(nvec + 255) / 256, 256>>>(nvec, dst, a, b);
    else add_vec_kernel<T, VW, false><<<(nvec + 255) / 256, 256>>>(nvec, dst, a, b);
}

extern "C" void cb_fmt_add(size_t n, void *dst, const void *src, int b) {
    if (b) add_t(n, (bf16 *)dst, (const bf16 *)dst, (const bf16 *)src, false);
    else add_t(n, (float *)dst, (const float *)dst, (const float *)src, false);
}

extern "C" void cb_fmt_add_act(size_t n, void *dst, const void *a, const void *b, int relu, int bf) {
    if (bf) add_t(n, (bf16 *)dst, (const bf16 *)a, (const bf16 *)b, relu);
    else add_t(n, (float *)dst, (const float *)a, (const float *)b, relu);
}

// any activation function: src/core/act.h's one definition, computed in fp32 on the storage's type
template <class T> __global__ void act_fwd_kernel(size_t n, cb_act a, const T *x, T *xsave, T *y) {
    CB_FOR(i, n) {
        float v = ld(x, i);
        if (xsave) st(xsave, i, v);
        st(y, i, cb_act_fwd_f32(a, v));
    }
}
template <class T> __global__ void act_bwd_kernel(size_t n, cb_act a, const T *x, const T *y, const T *dy, T *dx) {
    CB_FOR(i, n) st(dx, i, cb_act_bwd_f32(a, x ? ld(x, i) : 0.f, ld(y, i), ld(dy, i)));
}
// the same, V elements (16 bytes) per thread; pointers 16-byte aligned (x and xsave may be NULL)
template <class T, int V> __global__ void __launch_bounds__(256) act_fwd_vec_kernel(uint32_t nvec, cb_act a, const T *x, T *xsave, T *y) {
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    vec_t<T, V> u = reinterpret_cast<const vec_t<T, V> *>(x)[j];
    if (xsave) reinterpret_cast<vec_t<T, V> *>(xsave)[j] = u;
#pragma unroll
    for (int v = 0; v < V; v++) st(u.v, v, cb_act_fwd_f32(a, ld(u.v, v)));
    reinterpret_cast<vec_t<T, V> *>(y)[j] = u;
}
template <class T, int V>
__global__ void __launch_bounds__(256) act_bwd_vec_kernel(uint32_t nvec, cb_act a, const T *x, const T *y, const T *dy, T *dx) {
    uint32_t j = blockIdx.x * 256u + threadIdx.x;
    if (j >= nvec) return;
    vec_t<T, V> g = reinterpret_cast<const vec_t<T, V> *>(dy)[j], u = reinterpret_cast<const vec_t<T, V> *>(y)[j], w;
    if (x) w = reinterpret_cast<const vec_t<T, V> *>(x)[j];
#pragma unroll
    for (int v = 0; v < V; v++) st(g.v, v, cb_act_bwd_f32(a, x ? ld(w.v, v) : 0.f, ld(u.v, v), ld(g.v, v)));
    reinterpret_cast<vec_t<T, V> *>(dx)[j] = g;
}
// 16-byte vectors where n and every pointer allow it
template <class T> static bool act_vec_ok(size_t n, const void *a, const void *b, const void *c, const void *d) {
    const size_t VW = 16 / sizeof(T);
    uintptr_t m = (uintptr_t)a | (uintptr_t)b | (uintptr_t)c | (uintptr_t)d; // (NULL adds nothing)
    return n % VW == 0 && m % 16 == 0 && n / VW < 0x7fffffffu;
}

template <class T> static void act_forward_t(size_t n, cb_act a, const T *x, T *xsave, T *y) {
    const int VW = (int)(16 / sizeof(T));
    if (act_vec_ok<T>(n, x, xsave, y, NULL)) {
        uint32_t nvec = (uint32_t)(n / VW);
        act_fwd_vec_kernel<T, VW><<<(nvec + 255) / 256, 256>>>(nvec, a, x, xsave, y);
    } else act_fwd_kernel<T><<<cb_blocks(n, 256), 256>>>(n, a, x, xsave, y);
}
template <class T> static void act_backward_t(size_t n, cb_act a, const T *x, const T *y, const T *dy, T *dx) {
    const int VW = (int)(16 / sizeof(T));
    if (act_vec_ok<T>(n, x, y, dy, dx)) {
        uint32_t nvec = (uint32_t)(n / VW);
        act_bwd_vec_kernel<T, VW><<<(nvec + 255) / 256, 256>>>(nvec, a, x, y, dy, dx);
    } else act_bwd_kernel<T><<<cb_blocks(n, 256), 256>>>(n, a, x, y, dy, dx);
}

extern "C" void cb_fmt_act_forward(size_t n, cb_act a, const void *x, void *xsave, void *y, int b) {
    if (!n) return;
    if (b) act_forward_t<bf16>(n, a, (const bf16 *)x, (bf16 *)xsave, (bf16 *)y);
    else act_forward_t<float>(n, a, (const float *)x, (float *)xsave, (float *)y);
}
extern "C" void cb_fmt_act_backward(size_t n, cb_act a, const void *x, const void *y, const void *dy, void *dx, int b) {
    if (a == CB_ACT_RELU && b) relu_bwd_t(n, (const bf16 *)y, (const bf16 *)dy, (bf16 *)dx); // dx = y > 0 ? dy : 0
    else if (a == CB_ACT_RELU) relu_bwd_t(n, (const float *)y, (const float *)dy, (float *)dx);
    else if (!n) return;
    else if (b) act_backward_t<bf16>(n, a, (const bf16 *)x, (const bf16 *)y, (const bf16 *)dy, (bf16 *)dx);
    else act_backward_t<float>(n, a, (const float *)x, (const float *)y, (const float *)dy, (float *)dx);
}

// n rows of w units U: dst row r at dst + r * dp + c <- src row r at src + r * sp + c (pitches and
// offsets in units). A warp per row, its lanes along the row (coalesced on both sides), rows
// grid-strided. The 16-byte path; $CONVBENCH_CONCAT=rows takes it for every unit (to compare).
template <class U> __global__ void rows_copy_kernel(int64_t n, int64_t w, int64_t dp, int64_t sp, U *__restrict__ dst, const U *__restrict__ src) {
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    for (int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < n; r += warps)
        for (int64_t c = threadIdx.x % 32; c < w; c += 32) dst[r * dp + c] = src[r * sp + c];
}
template <class U> static void rows_copy(int64_t n, int64_t w, int64_t dp, int64_t sp, void *dst, const void *src) {
    int64_t blocks = (n + 7) / 8; // 8 warps of 256 threads
    rows_copy_kernel<U><<<(unsigned)(blocks < 65535 ? blocks : 65535), 256>>>(n, w, dp, sp, (U *)dst, (const U *)src);
}

// The same copy over the flat index j in [0, n w) of the contiguous side (src into the slice, dst
// out of it; its pitch is w), the strided side at (j / w) * pitch + j % w; for units of 2, 4 and 8
// bytes. Rows of 2- and 4-byte units (channel counts not a multiple of 8, or an odd offset: random
// networks) left the warp per row with one 2-byte access in flight per thread and lanes idle past
// the row's end: a bf16 concatenation that the copy-bandwidth model prices at 0.06-0.07 ms took
// 0.20-0.22 ms (about 1.1 of 4.5 TB/s; H200, 2026-11-28). Here a block's tile is FLAT_K * 256
// consecutive units, thread t's the k-th at tile + k * 256 + t: every load and store of the
// contiguous side coalesces whatever w is, and each thread issues its FLAT_K loads (16 to 64
// bytes) before its stores. The strided side's offset o and column c (c = j % w) are divided out
// once per thread (64-bit) and then advanced by steps fixed on the host: a step of s units adds
// (s / w) * pitch + s % w to o and s % w to c, then pitch - w to o where c wrapped past w.
#define FLAT_K 8
#define FLAT_THREADS 256
struct flat_step {
    int64_t o; // (s / w) * pitch + s % w
    uint32_t c; // s % w
};
static flat_step flat_step_of(int64_t s, int64_t w, int64_t pitch) {
    flat_step f = {(s / w) * pitch + s % w, (uint32_t)(s % w)};
    return f;
}
__device__ __forceinline__ void flat_advance(int64_t &o, uint32_t &c, flat_step s, uint32_t w, int64_t wrap) {
    o += s.o, c += s.c; // (c + s.c < 2w <= 2^32: w < 2^31, the host's condition)
    if (c >= w) c -= w, o += wrap;
}
// one tile's FLAT_K units of this thread (the k-th at d or s + k * FLAT_THREADS on the contiguous
// side, at o, o + lane, ... on the strided one), all loads before the stores; ALL: every unit in
// range (left: how many units from this thread's first to the end), else only k * 256 < left
template <class U, bool TO_SLICE, bool ALL>
__device__ __forceinline__ void flat_tile(int64_t left, int64_t o, uint32_t c, uint32_t w, int64_t wrap, flat_step lane,
                                          U *__restrict__ d, const U *__restrict__ s, U *__restrict__ dst, const U *__restrict__ src) {
    U v[FLAT_K];
    if (TO_SLICE) {
#pragma unroll
        for (int k = 0; k < FLAT_K; k++) {
            if (ALL || k * FLAT_THREADS < left) v[k] = src[o];
            flat_advance(o, c, lane, w, wrap);
        }
#pragma unroll
        for (int k = 0; k < FLAT_K; k++)
            if (ALL || k * FLAT_THREADS < left) d[k * FLAT_THREADS] = v[k];
    } else {
#pragma unroll
        for (int k = 0; k < FLAT_K; k++)
            if (ALL || k * FLAT_THREADS < left) v[k] = s[k * FLAT_THREADS];
#pragma unroll
        for (int k = 0; k < FLAT_K; k++) {
            if (ALL || k * FLAT_THREADS < left) dst[o] = v[k];
            flat_advance(o, c, lane, w, wrap);
        }
    }
}
// TO_SLICE: src is the strided side (pitch sp), dst contiguous; else src contiguous, dst strided (dp)
template <class U, bool TO_SLICE>
__global__ void __launch_bounds__(FLAT_THREADS) flat_copy_kernel(int64_t total, uint32_t w, int64_t pitch, flat_step lane, flat_step grid,
                                                                 U *__restrict__ dst, const U *__restrict__ src) {
    const int64_t tile = (int64_t)FLAT_K * FLAT_THREADS, wrap = pitch - w;
    int64_t base = (int64_t)blockIdx.x * tile, j0 = base + threadIdx.x;
    int64_t r = j0 / w, o = r * pitch + (j0 - r * w); // (past the end where the grid is wider than the rows: not read)
    uint32_t c = (uint32_t)(j0 - r * w);
    for (; base < total; base += (int64_t)gridDim.x * tile) {
        const int64_t left = total - base - threadIdx.x;
        U *d = dst + base + threadIdx.x;
        const U *s = src + base + threadIdx.x;
        if (left > (FLAT_K - 1) * FLAT_THREADS) flat_tile<U, TO_SLICE, true>(left, o, c, w, wrap, lane, d, s, dst, src);
        else flat_tile<U, TO_SLICE, false>(left, o, c, w, wrap, lane, d, s, dst, src);
        flat_advance(o, c, grid, w, wrap);
    }
}
// blocks: enough for two waves of 2048 threads on every SM, grid-strided beyond
template <class U> static void flat_copy(int64_t n, int64_t w, int64_t dp, int64_t sp, void *dst, const void *src, int to_slice) {
    static int sms;
    if (!sms) {
        int dev = 0;
        cudaGetDevice(&dev);
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1) sms = 132;
    }
    const int64_t total = n * w, tile = (int64_t)FLAT_K * FLAT_THREADS, most = 2 * (int64_t)sms * (2048 / FLAT_THREADS);
    int64_t blocks = (total + tile - 1) / tile;
    if (blocks > most) blocks = most;
    const int64_t pitch = to_slice ? sp : dp;
    flat_step lane = flat_step_of(FLAT_THREADS, w, pitch), grid = flat_step_of(blocks * tile, w, pitch);
    if (to_slice) flat_copy_kernel<U, true><<<(unsigned)blocks, FLAT_THREADS>>>(total, (uint32_t)w, pitch, lane, grid, (U *)dst, (const U *)src);
    else flat_copy_kernel<U, false><<<(unsigned)blocks, FLAT_THREADS>>>(total, (uint32_t)w, pitch, lane, grid, (U *)dst, (const U *)src);
}

// The gradient of a concatenation's input whose ReLU the concatenation takes over (relu_by_concat,
// src/core/backend.h): dst (rows of w units, contiguous) <- the rows of src (pitch units apart)
// where mask, the concatenation's output in src's layout, is above 0, else 0. V elements a unit (16
// bytes where the row, the pitch, the slice's offset and the pointers allow it). Units < 2^31.
template <class T, int V>
__global__ void concat_masked_kernel(uint32_t total, cb_fast_div w, uint32_t pitch, vec_t<T, V> *__restrict__ dst,
                                     const vec_t<T, V> *__restrict__ src, const vec_t<T, V> *__restrict__ mask) {
    for (uint32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < total; u += gridDim.x * blockDim.x) {
        uint32_t r = cb_fast_div_q(w, u);
        size_t at = (size_t)r * pitch + (u - r * w.d);
        vec_t<T, V> g = src[at], m = mask[at], o;
#pragma unroll
        for (int k = 0; k < V; k++) // (a copy of the gradient's bits, or +0)
            if (ld(m.v, k) > 0.f) o.v[k] = g.v[k];
            else st(o.v, k, 0.f);
        dst[u] = o;
    }
}
// rows of w units: launches of whole rows, each below 2^31 units; a row of 2^30 units or more (the
// pitch then beyond 32 bits too), one launch a row a piece
template <class T, int V>
static void concat_masked(int64_t rows, int64_t w, int64_t pitch, void *dst, const void *src, const void *mask) {
    typedef vec_t<T, V> U;
    U *d = (U *)dst;
    const U *s = (const U *)src, *m = (const U *)mask;
    const int64_t big = (int64_t)1 << 30;
    if (w >= big || pitch > UINT32_MAX) {
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < w; c += big) {
                uint32_t part = (uint32_t)(w - c < big ? w - c : big);
                concat_masked_kernel<T, V><<<cb_blocks(part, 256), 256>>>(part, cb_fast_div_make(part), part, d + r * w + c,
                                                                          s + r * pitch + c, m + r * pitch + c);
            }
        return;
    }
    const int64_t most = (INT32_MAX - 1) / w;
    for (int64_t r0 = 0; r0 < rows; r0 += most) {
        int64_t nr = rows - r0 < most ? rows - r0 : most;
        uint32_t total = (uint32_t)(nr * w);
        concat_masked_kernel<T, V><<<cb_blocks(total, 256), 256>>>(total, cb_fast_div_make((uint32_t)w), (uint32_t)pitch, d + r0 * w,
                                                                  s + r0 * pitch, m + r0 * pitch);
    }
}
extern "C" void cb_fmt_concat_slice_masked(int64_t n, int64_t c_dst, int64_t c_src, int64_t c_off, int64_t inner, int bf16_elems,
                                           void *dst, const void *src, const void *mask) {
    const size_t es = bf16_elems ? 2 : 4, blk = (size_t)(c_src * inner) * es, pitch = (size_t)(c_dst * inner) * es,
                 off = (size_t)(c_off * inner) * es;
    if (!n || !blk) return;
    const char *s = (const char *)src + off, *m = (const char *)mask + off;
    uintptr_t all = (uintptr_t)dst | (uintptr_t)s | (uintptr_t)m | blk | pitch;
    size_t u = all % 16 == 0 ? 16 : all % 8 == 0 ? 8 : all % 4 == 0 ? 4 : es;
    int64_t w = (int64_t)(blk / u), p = (int64_t)(pitch / u);
    if (!bf16_elems) {
        if (u == 16) concat_masked<float, 4>(n, w, p, dst, s, m);
        else if (u == 8) concat_masked<float, 2>(n, w, p, dst, s, m);
        else concat_masked<float, 1>(n, w, p, dst, s, m);
    } else if (u == 16) concat_masked<bf16, 8>(n, w, p, dst, s, m);
    else if (u == 8) concat_masked<bf16, 4>(n, w, p, dst, s, m);
    else if (u == 4) concat_masked<bf16, 2>(n, w, p, dst, s, m);
    else concat_masked<bf16, 1>(n, w, p, dst, s, m);
}

// The forward of an NHWC concatenation in one pass (cb_fmt_concat_gather): each thread writes one
// element of the output, read from the input whose channels hold it. The output is written in whole
// rows, where one copy per input writes a narrow run of each row (at an offset of odd channels, 2-
// or 4-byte units: partial 32-byte sectors at both ends, from separate kernels), which ran the
// copies at a third of the memory's bandwidth (an Inception-like random network's 277 channels,
// 2026-11-29: 276 MB in 0.337 ms, where the masked backward copy moved 1.5 times the bytes in 0.298).
// Measured on the H200 (2026-11-29, gen-inception-s2 b192 fp32 storage): its three concatenations
// 0.880 -> 0.782 ms forward (0.338 -> 0.258, 0.330 -> 0.299, but 0.212 -> 0.225); still about half
// the memory's bandwidth, one element a thread. Several a thread is the next step, not built.
#define CB_GATHER_MAX 8
struct gather_srcs {
    const void *p[CB_GATHER_MAX];
    uint32_t end[CB_GATHER_MAX]; // each input's last channel + 1 in the output
    uint32_t c[CB_GATHER_MAX];   // each input's channels
    int k;
};
template <class T> __global__ void concat_gather_kernel(uint32_t total, cb_fast_div cd, gather_srcs s, T *__restrict__ dst) {
    for (uint32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < total; u += gridDim.x * blockDim.x) {
        uint32_t r = cb_fast_div_q(cd, u), c = u - r * cd.d;
        int j = 0;
#pragma unroll
        for (int q = 0; q < CB_GATHER_MAX - 1; q++) j += q < s.k - 1 && c >= s.end[q];
        uint32_t start = j ? s.end[j - 1] : 0;
        dst[u] = ((const T *)s.p[j])[(size_t)r * s.c[j] + (c - start)];
    }
}
template <class T> static void concat_gather(int64_t rows, int64_t c_dst, gather_srcs s, void *dst) {
    const int64_t most = (INT32_MAX - 1) / c_dst; // rows a launch: units below 2^31 (cb_fast_div)
    for (int64_t r0 = 0; r0 < rows; r0 += most) {
        int64_t nr = rows - r0 < most ? rows - r0 : most;
        uint32_t total = (uint32_t)(nr * c_dst);
        gather_srcs t = s;
        for (int q = 0; q < s.k; q++) t.p[q] = (const T *)s.p[q] + r0 * s.c[q];
        concat_gather_kernel<T><<<cb_blocks(total, 256), 256>>>(total, cb_fast_div_make((uint32_t)c_dst), t, (T *)dst + r0 * c_dst);
    }
}
// the copy unit cb_fmt_concat_copy takes for one input's rows (16, 8, 4 bytes, else the element)
static size_t concat_unit(int64_t c_dst, int64_t c_src, int64_t c_off, size_t bytes, const void *dst, const void *src) {
    uintptr_t all = ((uintptr_t)dst + (uintptr_t)(c_off * (int64_t)bytes)) | (uintptr_t)src | (size_t)(c_src * (int64_t)bytes) |
                    (size_t)(c_dst * (int64_t)bytes);
    return all % 16 == 0 ? 16 : all % 8 == 0 ? 8 : all % 4 == 0 ? 4 : bytes;
}
static int concat_mode(void); // (below: $CONVBENCH_CONCAT)
extern "C" int cb_fmt_concat_gather(int64_t rows, int64_t c_dst, int k, const int64_t *c_src, const void *const *src, size_t bytes,
                                    void *dst) {
    if (k < 1 || k > CB_GATHER_MAX || c_dst < 1 || c_dst >= INT32_MAX || (bytes != 2 && bytes != 4)) return 0;
    int mode = concat_mode();
    if (mode != 0 && mode != 3) return 0; // (copy2d, rows, each: one copy per input)
    gather_srcs s = {};
    int64_t end = 0;
    bool narrow = false;
    for (int q = 0; q < k; q++) {
        if (c_src[q] < 1) return 0;
        narrow |= concat_unit(c_dst, c_src[q], end, bytes, dst, src[q]) < 16;
        s.p[q] = src[q], s.c[q] = (uint32_t)c_src[q];
        end += c_src[q];
        s.end[q] = (uint32_t)end;
    }
    if (end != c_dst || (!narrow && mode != 3)) return 0; // (16-byte rows: the warp per row, as fast as the memory)
    // 2-byte elements (bf16) keep the copies unless asked: one element a thread is too little work
    // there (an Inception-like network's bf16 concatenations took 0.175 ms forward against the
    // copies' 0.160, 2026-11-29, where fp32's took 0.782 against 0.880)
    if (bytes == 2 && mode != 3) return 0;
    s.k = k;
    if (rows > 0) {
        if (bytes == 2) concat_gather<uint16_t>(rows, c_dst, s, dst);
        else concat_gather<uint32_t>(rows, c_dst, s, dst);
    }
    return 1;
}

// NHWC (inner 1): each row is a pixel's channels, too narrow for cudaMemcpy2DAsync, which copied
// them at a third to a seventh of the memory's bandwidth on the H200 (GoogLeNet b128 bf16: 1.39 ms
// of its 14.8 ms step in the concatenations; 17 M elements of 275 channels in 0.163 ms): own
// kernels, in the widest unit (16, 8, 4 bytes, else the element) that the row, both pitches, the
// offset and both pointers allow; 16-byte units a warp per row (fast as it is), narrower ones over
// the flat index (flat_copy). NCHW rows (a channel block of an image) stay with the copy engine.
// $CONVBENCH_CONCAT (read once a process): copy2d, the copy engine for NHWC rows too, as before
// 2026-11-27 late; rows, the warp per row for every unit, as before 2026-11-28 (both to compare);
// each, these copies for the forward too, where cb_fmt_concat_gather takes narrow rows since
// 2026-11-29; gather, that pass for 16-byte rows as well.
// $CONVBENCH_CONCAT, read once a process: 0 the default, 1 copy2d, 2 rows, 3 gather (the one-pass
// forward wherever it can, 16-byte rows too), 4 each (one copy per input always)
static int concat_mode(void) {
    static int mode = -1;
    if (mode < 0) {
        const char *v = getenv("CONVBENCH_CONCAT");
        mode = !v ? 0 : !strcmp(v, "copy2d") ? 1 : !strcmp(v, "rows") ? 2 : !strcmp(v, "gather") ? 3 : !strcmp(v, "each") ? 4 : 0;
    }
    return mode;
}
extern "C" void cb_fmt_concat_copy(int64_t n, int64_t c_dst, int64_t c_src, int64_t c_off, int64_t inner, size_t bytes,
                                   void *dst, const void *src, int to_slice) {
    size_t blk = (size_t)(c_src * inner) * bytes, pitch = (size_t)(c_dst * inner) * bytes, off = (size_t)(c_off * inner) * bytes;
    char *d = to_slice ? (char *)dst : (char *)dst + off;
    const char *s = to_slice ? (const char *)src + off : (const char *)src;
    size_t dpitch = to_slice ? blk : pitch, spitch = to_slice ? pitch : blk;
    if (!n || !blk) return;
    int mode = concat_mode();
    if (inner != 1 || mode == 1) {
        cudaMemcpy2DAsync(d, dpitch, s, spitch, blk, (size_t)n, cudaMemcpyDeviceToDevice);
        return;
    }
    uintptr_t all = (uintptr_t)d | (uintptr_t)s | blk | dpitch | spitch;
    size_t u = all % 16 == 0 ? 16 : all % 8 == 0 ? 8 : all % 4 == 0 ? 4 : bytes;
    int64_t w = (int64_t)(blk / u), dp = (int64_t)(dpitch / u), sp = (int64_t)(spitch / u);
    bool flat = mode != 1 && mode != 2 && w < INT32_MAX; // (flat_advance's column stays within 32 bits)
    if (u == 16) rows_copy<uint4>(n, w, dp, sp, d, s);
    else if (u == 8 && flat) flat_copy<uint2>(n, w, dp, sp, d, s, to_slice);
    else if (u == 4 && flat) flat_copy<uint32_t>(n, w, dp, sp, d, s, to_slice);
    else if (u == 2 && flat) flat_copy<uint16_t>(n, w, dp, sp, d, s, to_slice); // (bf16 elements at an offset of an odd count)
    else if (u == 8) rows_copy<uint2>(n, w, dp, sp, d, s);
    else if (u == 4) rows_copy<uint32_t>(n, w, dp, sp, d, s);
    else if (u == 2) rows_copy<uint16_t>(n, w, dp, sp, d, s);
    else cudaMemcpy2DAsync(d, dpitch, s, spitch, blk, (size_t)n, cudaMemcpyDeviceToDevice);
}
