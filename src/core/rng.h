// The one random number module: xorshift64* for values (weights, inputs, labels, dropout masks on
// the CPU), and a 64-bit LCG step for the seeds handed to the GPU kernels' own generators.
#ifndef CB_CORE_RNG_H
#define CB_CORE_RNG_H

#include <stdint.h>

// xorshift64*: the next 64 random bits (*s must not be 0: the generator stays at 0)
static inline uint64_t cb_rng_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}
// uniform in [0, 1), 24 bits
static inline float cb_rng_unit(uint64_t *s) { return (float)(cb_rng_next(s) >> 40) * (1.0f / 16777216.0f); }
// uniform in [-1, 1)
static inline float cb_rng_uniform(uint64_t *s) { return (float)((cb_rng_next(s) >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f; }
// Knuth's MMIX LCG: the next seed of a sequence (GPU dropout, calibration inputs)
static inline uint64_t cb_rng_lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s;
}

#endif
