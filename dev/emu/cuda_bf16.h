// A CPU stand-in for cuda_bf16.h (dev/pool_fmt_emu.sh): the storage type and the two conversions
// the kernels use. bf16 is the high half of an fp32; rounding is to nearest, ties to even.
#ifndef EMU_CUDA_BF16_H
#define EMU_CUDA_BF16_H

#include <cstdint>
#include <cstring>

struct alignas(2) __nv_bfloat16 {
    uint16_t x;
};

static inline __nv_bfloat16 __float2bfloat16_rn(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{(uint16_t)((u >> 16) | 0x40)}; // NaN stays NaN
    u += 0x7fffu + ((u >> 16) & 1);
    return __nv_bfloat16{(uint16_t)(u >> 16)};
}

static inline float __bfloat162float(__nv_bfloat16 b) {
    uint32_t u = (uint32_t)b.x << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
#endif
