// n / d for 0 <= n < 2^31 and a runtime divisor 1 <= d < 2^31, by a multiply-high, an add and a
// shift instead of a division (Granlund and Montgomery 1994, fig. 4.1, in the form of CUTLASS's
// FastDivmod): with l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1 (m < 2^32),
// n / d = (umulhi(n, m) + n) >> l; n < 2^31 keeps the sum within 32 bits. Kernels that map a flat
// index to (plane, row, column) use it in place of 32- or 64-bit division, which the GPU runs as
// a long instruction sequence. Plain C as well, so that tests/test_kernels.c checks it on the CPU.
#ifndef CB_CUDA_FAST_DIV_H
#define CB_CUDA_FAST_DIV_H

#include <stdint.h>

#if defined(__CUDACC__)
#define CB_FAST_DIV_FN static inline __host__ __device__
#else
#define CB_FAST_DIV_FN static inline
#endif

typedef struct cb_fast_div {
    uint32_t d, m, l;
} cb_fast_div;

CB_FAST_DIV_FN cb_fast_div cb_fast_div_make(uint32_t d) {
    uint32_t l = 0;
    while (((uint64_t)1 << l) < d) l++;
    // 2^l - d < d <= 2^31, so the product stays under 2^63 and m under 2^32
    uint64_t m = (((uint64_t)1 << 32) * (((uint64_t)1 << l) - d)) / d + 1;
    cb_fast_div f = {d, (uint32_t)m, l};
    return f;
}

CB_FAST_DIV_FN uint32_t cb_fast_div_q(cb_fast_div f, uint32_t n) {
#ifdef __CUDA_ARCH__
    uint32_t hi = __umulhi(n, f.m);
#else
    uint32_t hi = (uint32_t)(((uint64_t)n * f.m) >> 32);
#endif
    return (hi + n) >> f.l;
}

#endif
