// Own direct convolution on the CPU, forward: AVX-512 and AVX2+FMA microkernels chosen at run
// time from what this CPU has (never assumed from the build machine), and a plain C fallback.
//
// For one image the input is copied with its padding into ws (C, Hp, Wp), so the kernel reads
// no bounds. Output channels go in blocks of V (16 on AVX-512, 8 on AVX2) with the weights
// reordered to (K/V, C, R, S, V); a microkernel keeps T output pixels of one row times V channels
// in T vector registers, and for every (c, r, s) broadcasts T input values into fused
// multiply-adds with one weight vector. Threads (OpenMP) take (image, channel block, row) items.
// Used by the cpu backend where it times faster than im2col + OpenBLAS for the layer
// (cb_cpu_direct_faster); CONVBENCH_CPU_ISA=scalar|avx2|avx512 forces a path (tests run each).
#include "cpu/kernels.h"

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

enum { ISA_SCALAR, ISA_AVX2, ISA_AVX512 };

static int isa_cached = -1;

// the path named (scalar, avx2, avx512; NULL or anything else: the best), capped at what the CPU has
static int isa_pick(const char *f) {
    int have = ISA_SCALAR;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) have = ISA_AVX2;
    if (__builtin_cpu_supports("avx512f")) have = ISA_AVX512;
#endif
    int want = have;
    if (f && !strcmp(f, "scalar")) want = ISA_SCALAR;
    else if (f && !strcmp(f, "avx2")) want = ISA_AVX2;
    else if (f && !strcmp(f, "avx512")) want = ISA_AVX512;
    return want <= have ? want : have; // never a path this CPU lacks
}

int cb_cpu_direct_isa(void) {
    if (isa_cached < 0) isa_cached = isa_pick(getenv("CONVBENCH_CPU_ISA"));
    return isa_cached;
}

const char *cb_cpu_direct_set_isa(const char *name) {
    isa_cached = isa_pick(name);
    return cb_cpu_direct_isa_name();
}

const char *cb_cpu_direct_isa_name(void) {
    static const char *names[] = {"scalar", "AVX2", "AVX-512"};
    return names[cb_cpu_direct_isa()];
}

static int vec_width(void) { return cb_cpu_direct_isa() == ISA_AVX512 ? 16 : cb_cpu_direct_isa() == ISA_AVX2 ? 8 : 1; }

static int dh_of(const cb_conv_params *p) { return p->dil_h > 1 ? p->dil_h : 1; }
static int dw_of(const cb_conv_params *p) { return p->dil_w > 1 ? p->dil_w : 1; }
static int hp_of(const cb_conv_params *p) { return (p->p - 1) * p->stride_h + (p->r - 1) * dh_of(p) + 1; }
#define TMAX 12
// the padded row's width: what the last output column reads, plus room for a whole last tile of
// TMAX pixels, so that every tile runs the unrolled microkernel (the extra pixels are not stored)
static int wp_of(const cb_conv_params *p) { return (p->q - 1 + TMAX - 1) * p->stride_w + (p->s - 1) * dw_of(p) + 1; }

bool cb_cpu_direct_supports(const cb_conv_params *p) { return p->groups == 1 && p->k >= 8; }

size_t cb_cpu_direct_workspace(const cb_conv_params *p) {
    int v = 16; // the widest block, whatever runs
    size_t kb = ((size_t)p->k + v - 1) / v;
    return ((size_t)p->c * hp_of(p) * wp_of(p) + kb * v * (size_t)p->c * p->r * p->s) * sizeof(float);
}

// the padded copy of one image: xp (C, Hp, Wp), zero outside x
static void pad_image(const cb_conv_params *p, const float *x, float *xp) {
    const int hp = hp_of(p), wp = wp_of(p);
    for (int c = 0; c < p->c; c++)
        for (int i = 0; i < hp; i++) {
            float *d = xp + ((size_t)c * hp + i) * wp;
            int ih = i - p->pad_top;
            if (ih < 0 || ih >= p->h) {
                memset(d, 0, sizeof(float) * (size_t)wp);
                continue;
            }
            const float *s = x + ((size_t)c * p->h + ih) * p->w;
            for (int j = 0; j < wp; j++) {
                int iw = j - p->pad_left;
                d[j] = iw >= 0 && iw < p->w ? s[iw] : 0.0f;
            }
        }
}

// weights (K, C, R, S) -> (K/V, C, R, S, V), channels past K zero
static void pack_weights(const cb_conv_params *p, const float *w, int v, float *wp) {
    const size_t crs = (size_t)p->c * p->r * p->s;
    const int kb = (p->k + v - 1) / v;
    for (int b = 0; b < kb; b++)
        for (size_t i = 0; i < crs; i++)
            for (int j = 0; j < v; j++) {
                int k = b * v + j;
                wp[((size_t)b * crs + i) * v + j] = k < p->k ? w[(size_t)k * crs + i] : 0.0f;
            }
}

// the microkernels: out[t][0..V) = sum over (c, r, s) of x(row, col0 + t) * w, T pixels
#define DIRECT_ARGS                                                                                                    \
    const cb_conv_params *p, const float *xp, int hp, int wp, const float *wb, int oh, int ow0, int t_n, float *out

// one microkernel per tile width T (1..TMAX), so that every one keeps its T accumulators in
// registers with the loop unrolled; a row of Q pixels runs ceil(Q / TMAX) tiles of equal width
// ISA: avx512 or avx2; VEC its vector type, V its width, then its intrinsics
#define MICRO_ISA(ISA, TARGET, VEC, V, ZERO, LOAD, BCAST, FMA, STORE, T)                                               \
    __attribute__((target(TARGET))) static void micro_##ISA##_##T(DIRECT_ARGS) {                                      \
        VEC acc[T];                                                                                                    \
        for (int t = 0; t < T; t++) acc[t] = ZERO();                                                                   \
        const int sh = p->stride_h, sw = p->stride_w, dh = dh_of(p), dw = dw_of(p);                                     \
        for (int c = 0; c < p->c; c++)                                                                                 \
            for (int r = 0; r < p->r; r++) {                                                                           \
                const float *row = xp + ((size_t)c * hp + (size_t)oh * sh + (size_t)r * dh) * wp + (size_t)ow0 * sw;   \
                const float *wr = wb + (((size_t)c * p->r + r) * p->s) * V;                                            \
                for (int s = 0; s < p->s; s++) {                                                                       \
                    VEC wv = LOAD(wr + (size_t)s * V);                                                                 \
                    const float *xs = row + (size_t)s * dw;                                                            \
                    _Pragma("GCC unroll 12") for (int t = 0; t < T; t++) acc[t] = FMA(BCAST(xs + (size_t)t * sw), wv, acc[t]); \
                }                                                                                                      \
            }                                                                                                          \
        for (int t = 0; t < T; t++) STORE(out + (size_t)t * V, acc[t]);                                                \
    }
#define BCAST512(p) _mm512_set1_ps(*(p))
#define MICRO_AVX512(T) MICRO_ISA(avx512, "avx512f", __m512, 16, _mm512_setzero_ps, _mm512_loadu_ps, BCAST512, _mm512_fmadd_ps, _mm512_storeu_ps, T)
#define MICRO_AVX2(T) MICRO_ISA(avx2, "avx2,fma", __m256, 8, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_broadcast_ss, _mm256_fmadd_ps, _mm256_storeu_ps, T)
#define MICROS(M) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12)
MICROS(MICRO_AVX512)
MICROS(MICRO_AVX2)
typedef void (*micro_fn)(DIRECT_ARGS);
#define LIST512(T) micro_avx512_##T,
#define LIST2(T) micro_avx2_##T,
static const micro_fn MICRO512[TMAX] = {MICROS(LIST512)};
static const micro_fn MICRO2[TMAX] = {MICROS(LIST2)};

static void micro_scalar(DIRECT_ARGS) {
    const int sh = p->stride_h, sw = p->stride_w, dh = dh_of(p), dw = dw_of(p);
    for (int t = 0; t < t_n; t++) {
        float a = 0;
        for (int c = 0; c < p->c; c++)
            for (int r = 0; r < p->r; r++)
                for (int s = 0; s < p->s; s++)
                    a += xp[((size_t)c * hp + (size_t)oh * sh + (size_t)r * dh) * wp + (size_t)(ow0 + t) * sw + (size_t)s * dw] *
                         wb[((size_t)c * p->r + r) * p->s + s];
        out[t] = a;
    }
}

void cb_cpu_direct_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, void *ws) {
    const int isa = cb_cpu_direct_isa(), v = vec_width(), hp = hp_of(p), wp = wp_of(p);
    const int kb = (p->k + v - 1) / v;
    const size_t crs = (size_t)p->c * p->r * p->s, pq = (size_t)p->p * p->q;
    float *xp = ws, *wpk = xp + (size_t)p->c * hp * wp;
    const int tiles = (p->q + TMAX - 1) / TMAX, tw = (p->q + tiles - 1) / tiles; // equal tiles of at most TMAX
    micro_fn micro = isa == ISA_AVX512 ? MICRO512[tw - 1] : isa == ISA_AVX2 ? MICRO2[tw - 1] : micro_scalar;
    pack_weights(p, w, v, wpk);
    for (int n = 0; n < p->n; n++) {
        pad_image(p, x + (size_t)n * p->c * p->h * p->w, xp);
        float *yn = y + (size_t)n * p->k * pq;
        const int items = kb * p->p;
#pragma omp parallel for schedule(static)
        for (int it = 0; it < items; it++) {
            const int blk = it / p->p, oh = it % p->p;
            const float *wb = wpk + (size_t)blk * crs * v;
            float tile[TMAX * 16];
            for (int ow0 = 0; ow0 < p->q; ow0 += tw) {
                const int tn = p->q - ow0 < tw ? p->q - ow0 : tw; // the pixels to store (the kernel computes tw)
                micro(p, xp, hp, wp, wb, oh, ow0, tw, tile);
                for (int j = 0; j < v; j++) { // (T, V) -> the V output planes' row
                    const int k = blk * v + j;
                    if (k >= p->k) break;
                    float *yr = yn + (size_t)k * pq + (size_t)oh * p->q + ow0;
                    const float bk = b ? b[k] : 0.0f;
                    for (int t = 0; t < tn; t++) yr[t] = tile[t * v + j] + bk;
                }
            }
        }
    }
}
