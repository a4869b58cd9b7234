// The machine's fused multiply-add peak, measured: a loop of independent FMAs on registers (no
// memory traffic), on one thread and then on every OpenMP thread at once, so that a kernel's
// GFLOP/s can be stated as a share of what this CPU reaches (docs/results/2026-11-25-cpu-own.md).
//
//   build/fma_peak [seconds per measurement, default 1]
//
// Prints one line per ISA this CPU has (AVX-512, AVX2+FMA) and thread count: GFLOP/s, the best of
// 5 runs (one FMA = 2 FLOP per lane). 24 accumulators: more than latency (4 cycles) times the
// FMA pipes, so that the loop is bound by throughput alone.
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ACC 24

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// iters times ACC FMAs on 16-lane vectors; returns a sum so that nothing is optimised away
__attribute__((target("avx512f"))) static float fma_loop_512(long iters) {
    __m512 acc[ACC], a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (int k = 0; k < ACC; k++) acc[k] = _mm512_set1_ps((float)k);
    for (long i = 0; i < iters; i++) {
        _Pragma("GCC unroll 24") for (int k = 0; k < ACC; k++) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
    }
    __m512 s = acc[0];
    for (int k = 1; k < ACC; k++) s = _mm512_add_ps(s, acc[k]);
    return _mm512_reduce_add_ps(s);
}

// the same on 8-lane vectors (AVX2 has 16 registers: 12 accumulators, the loop twice)
__attribute__((target("avx2,fma"))) static float fma_loop_256(long iters) {
    __m256 acc[12], a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (int k = 0; k < 12; k++) acc[k] = _mm256_set1_ps((float)k);
    for (long i = 0; i < 2 * iters; i++) {
        _Pragma("GCC unroll 12") for (int k = 0; k < 12; k++) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
    }
    __m256 s = acc[0];
    for (int k = 1; k < 12; k++) s = _mm256_add_ps(s, acc[k]);
    float v[8], r = 0;
    _mm256_storeu_ps(v, s);
    for (int k = 0; k < 8; k++) r += v[k];
    return r;
}

// GFLOP/s of `threads` threads each running the loop for about `secs` seconds; best of 5
static double measure(int avx512, int threads, double secs) {
    const int lanes = avx512 ? 16 : 8;
    long iters = 1000000;
    volatile float sink = 0; // the loops' results are kept: a pure call whose result is unused is removed
    double t0 = now_s();
    sink += avx512 ? fma_loop_512(iters) : fma_loop_256(iters);
    double once = now_s() - t0;
    iters = (long)(iters * secs / (once > 1e-6 ? once : 1e-6));
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double start = now_s();
        float s = 0;
#pragma omp parallel num_threads(threads) reduction(+ : s)
        s += avx512 ? fma_loop_512(iters) : fma_loop_256(iters);
        double t = now_s() - start, gf = 2.0 * lanes * ACC * (double)iters * threads / t * 1e-9;
        sink += s;
        if (gf > best) best = gf;
    }
    (void)sink;
    return best;
}

int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    if (secs <= 0) {
        fprintf(stderr, "usage: fma_peak [seconds per measurement > 0]\n");
        return 2;
    }
    __builtin_cpu_init();
    const int all = omp_get_max_threads();
    int have[2] = {__builtin_cpu_supports("avx512f"), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")};
    if (!have[0] && !have[1]) {
        fprintf(stderr, "fma_peak: this CPU has neither AVX-512 nor AVX2+FMA\n");
        return 1;
    }
    for (int k = 0; k < 2; k++) {
        if (!have[k]) continue;
        const char *isa = k == 0 ? "AVX-512" : "AVX2";
        printf("%-8s 1 thread   %8.1f GFLOP/s\n", isa, measure(k == 0, 1, secs));
        if (all > 1) printf("%-8s %d threads  %8.1f GFLOP/s\n", isa, all, measure(k == 0, all, secs));
    }
    return 0;
}
