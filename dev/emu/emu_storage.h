// What the CPU emulations of the storage kernels share (dev/chan_fmt_emu.cpp, dev/dw_emu.cpp):
// 16-byte aligned host buffers filled with 0xff (an element left unwritten reads as NaN), and the
// conversions between an NCHW float vector and a tensor in a storage (fmt: CB_FMT_NHWC and/or
// CB_FMT_BF16 of src/storage/format.h), bf16 rounded to nearest even as the kernels store it.
#pragma once
#include "storage/format.h"

#include <cstring>
#include <new>
#include <vector>

struct buffer {
    void *p;
    explicit buffer(size_t bytes) : p(operator new(bytes ? bytes : 1, std::align_val_t(16))) { memset(p, 0xff, bytes); }
    ~buffer() { operator delete(p, std::align_val_t(16)); }
    buffer(const buffer &) = delete;
    buffer &operator=(const buffer &) = delete;
};

struct dims {
    int n, c, h, w;
    size_t hw() const { return (size_t)h * w; }
    size_t count() const { return (size_t)n * c * hw(); }
    size_t at(int fmt, size_t i) const { // storage index of NCHW flat index i
        size_t p = i % hw(), ch = i / hw() % c, img = i / hw() / c;
        return fmt & CB_FMT_NHWC ? (img * hw() + p) * c + ch : i;
    }
};
static inline float rnd(int fmt, float v) { return fmt & CB_FMT_BF16 ? __bfloat162float(__float2bfloat16_rn(v)) : v; }
static inline void to_storage(int fmt, dims d, const std::vector<float> &a, void *dst) {
    for (size_t i = 0; i < a.size(); i++) {
        size_t j = d.at(fmt, i);
        if (fmt & CB_FMT_BF16) ((__nv_bfloat16 *)dst)[j] = __float2bfloat16_rn(a[i]);
        else ((float *)dst)[j] = a[i];
    }
}
static inline std::vector<float> from_storage(int fmt, dims d, const void *src) {
    std::vector<float> a(d.count());
    for (size_t i = 0; i < a.size(); i++) {
        size_t j = d.at(fmt, i);
        a[i] = fmt & CB_FMT_BF16 ? __bfloat162float(((const __nv_bfloat16 *)src)[j]) : ((const float *)src)[j];
    }
    return a;
}
