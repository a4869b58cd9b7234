// Own backward filter (weight gradient) of a dense convolution on the blocked layouts:
//   dw[k][c][r][s] = sum over (n, p, q) of dy[n][k][p][q] * xpad[n][c][p*stride_h + r*dil_h][q*stride_w + s*dil_w]
//   db[k] = sum over (n, p, q) of dy[n][k][p][q]
// Layouts, V the vector width (16 on AVX-512, 8 on AVX2 and the plain C path), K2 = ceil(K / 2V):
//   xb  (N, NCB, Hp, Wp, CB)      the blocked forward's packed input (src/cpu/blocked.c), zeros around
//   dyb (N, K2, P, Q, 2V)         dy with the 2V output channels of a pair contiguous, zeros past K
//   acc (K2, NCB, R*S, CBP, 2V)   the sums, CBP = CB (or, dilated across, the channel tiles' span
//                                 >= CB); then scattered to dw
// The microkernel keeps 2 output channel vectors x T input channels (T <= 14 on AVX-512: 28 of its 32
// registers; T <= 6 on AVX2's 16) in registers for one tap (r, s) and, for every output pixel, loads
// the pair's two dy vectors and broadcasts T input values, each into two FMAs: the reduction over the
// pixels runs in registers. Undilated across (dil_w 1), the inputs of a row of taps (s, c) lie at
// s * CB + c from a pixel's: the T "channels" are tiled over that run of S * CB floats, and the acc's
// (s, c) index is the same run; so a layer of 3 input channels (CB = 3) still keeps 2 x 11
// accumulators busy (AlexNet conv1: 11 x 3 = 33, 3 tiles of 11: 20 -> 8.5 ms at b16; T <= 14 rather
// than 8 took its conv3 from 8.5 to 8.0 ms). Items (pair, channel block, group of taps) go to the threads, each item
// computing its own part of dw from start to end (no partial sums between threads): the order of every
// sum is (n, p, q), whatever the thread count or tap grouping, so the result is deterministic. Within
// an item the pixels run in chunks of rows (about 128 KB of dyb) and every tap and channel tile of the
// item runs over a chunk while it is in L2. With fewer items than 4 per thread and not a multiple
// of the threads (few channels: a network's first layer) the taps are split into groups so that
// both cores have work.
// The ISA is the one src/cpu/direct.c detects (cb_cpu_direct_isa: CONVBENCH_CPU_ISA forces one the
// CPU has). Raced by cpu-auto (src/onednn/backend.c) as "own-blocked" for the backward filter phase.
#include "cpu/blocked.h"

#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

enum { ISA_SCALAR, ISA_AVX2, ISA_AVX512 }; // as cb_cpu_direct_isa numbers them
enum { TMAX512 = 14, TMAX2 = 6, TMAXC = 8, CHUNK_FLOATS = 32768 };

typedef struct wg_geom {
    bk_geom g;             // xb's layout, the forward's
    int v, k2;             // vector width, pairs of output channel vectors
    bool wide;             // undilated across: a row of taps' inputs (S * CB floats) tiled as one run
    int span;              // floats a tile walks: S * CB when wide, else CB
    int ct, ctiles, cbp;   // tile (T), tiles per span, the acc's channel stride
    int rows;              // output rows per chunk
    int rsg, rsn;          // taps per group, groups
} wg_geom;

static wg_geom wg_geom_of(const cb_conv_params *p, int isa, int threads) {
    wg_geom w;
    w.g = cb_cpu_blocked_geom_isa(p, isa);
    w.v = w.g.v;
    w.k2 = (p->k + 2 * w.v - 1) / (2 * w.v);
    const int tmax = isa == ISA_AVX512 ? TMAX512 : isa == ISA_AVX2 ? TMAX2 : TMAXC;
    w.wide = w.g.dw == 1;
    w.span = w.wide ? p->s * w.g.cb : w.g.cb;
    w.ctiles = (w.span + tmax - 1) / tmax;
    w.ct = (w.span + w.ctiles - 1) / w.ctiles; // equal tiles; the last may be narrower
    w.cbp = w.wide ? w.g.cb : w.ctiles * w.ct;
    w.rows = CHUNK_FLOATS / (p->q * 2 * w.v);
    w.rows = w.rows < 1 ? 1 : w.rows > p->p ? p->p : w.rows;
    // wide: groups of whole rows of taps
    const int unit = w.wide ? p->s : 1, units = p->r * p->s / unit, base = w.k2 * w.g.ncb;
    // every group streams the pair's whole dy again (from memory on a large image): split only
    // where the items leave a core idle
    int groups = base % threads == 0 || base >= 4 * threads ? 1 : (4 * threads + base - 1) / base;
    groups = groups > units ? units : groups;
    w.rsg = (units + groups - 1) / groups * unit;
    w.rsn = (p->r * p->s + w.rsg - 1) / w.rsg;
    return w;
}

static size_t dyb_floats(const cb_conv_params *p, const wg_geom *w) { return (size_t)p->n * w->k2 * p->p * p->q * 2 * w->v; }
static size_t acc_floats(const cb_conv_params *p, const wg_geom *w) {
    return (size_t)w->k2 * w->g.ncb * p->r * p->s * w->cbp * 2 * w->v;
}

bool cb_cpu_wgrad_supports(const cb_conv_params *p) { return p->groups == 1; }

size_t cb_cpu_wgrad_workspace(const cb_conv_params *p) {
    size_t most = 0;
    for (int isa = ISA_SCALAR; isa <= ISA_AVX512; isa++) { // whichever path runs (tests switch)
        wg_geom w = wg_geom_of(p, isa, 1);
        size_t n = (size_t)p->n * cb_cpu_blocked_image_floats(&w.g) + dyb_floats(p, &w) + acc_floats(p, &w) +
                   2 * (size_t)p->n * w.k2 * 2 * w.v + 2; // + the doubles of dbn, aligned
        if (n > most) most = n;
    }
    return most * sizeof(float);
}

// dy (N, K, P, Q) -> dyb (N, K2, P, Q, 2V), and dbn (N, K2 * 2V) the sums of every plane (the db
// pass on its own read dy again: 2-3 ms of VGG-16 conv1_1's 8 at b4); pixels in runs of 64 so that
// the strided writes stay in L1, each run summed in 8 float lanes, the runs in float64
static void pack_dy(const cb_conv_params *p, const wg_geom *w, const float *dy, float *dyb, double *dbn) {
    const int v2 = 2 * w->v;
    const size_t pq = (size_t)p->p * p->q;
#pragma omp parallel for schedule(static)
    for (int it = 0; it < p->n * w->k2; it++) {
        const int n = it / w->k2, k2 = it % w->k2;
        float *d = dyb + (size_t)it * pq * v2;
        double *sum = dbn + (size_t)it * v2;
        for (int j = 0; j < v2; j++) sum[j] = 0;
        for (size_t i0 = 0; i0 < pq; i0 += 64) {
            const size_t i1 = i0 + 64 < pq ? i0 + 64 : pq;
            for (int j = 0; j < v2; j++) {
                const int k = k2 * v2 + j;
                if (k >= p->k) {
                    for (size_t i = i0; i < i1; i++) d[i * v2 + j] = 0.0f;
                    continue;
                }
                const float *s = dy + ((size_t)n * p->k + k) * pq;
                float part[8] = {0};
                for (size_t i = i0; i < i1; i++) d[i * v2 + j] = s[i], part[i % 8] += s[i];
                sum[j] += ((double)part[0] + part[1] + part[2] + part[3]) + ((double)part[4] + part[5] + part[6] + part[7]);
            }
        }
    }
}

// the microkernels: acc (T, 2V) += the sums over `rows` output rows of q pixels of dy (2V channels,
// dyr: dyb at the chunk's first pixel; rows contiguous) times x (T channels from xr; xrow floats from
// one output row's inputs to the next, xpx from one pixel's to the next)
#define WG_ARGS const float *dyr, const float *xr, int rows, int q, size_t xrow, size_t xpx, float *acc, int tn

#define WG_MICRO(ISA, TARGET, VEC, V, LOAD, BCAST, FMA, STORE, T)                                                      \
    __attribute__((target(TARGET))) static void wg_##ISA##_##T(WG_ARGS) {                                              \
        VEC a0[T], a1[T];                                                                                              \
        for (int t = 0; t < T; t++) a0[t] = LOAD(acc + t * 2 * V), a1[t] = LOAD(acc + t * 2 * V + V);                 \
        const float *d = dyr;                                                                                          \
        for (int i = 0; i < rows; i++) {                                                                               \
            const float *xs = xr + i * xrow;                                                                           \
            for (int j = 0; j < q; j++, d += 2 * V, xs += xpx) {                                                       \
                const VEC d0 = LOAD(d), d1 = LOAD(d + V);                                                              \
                _Pragma("GCC unroll 14") for (int t = 0; t < T; t++) {                                                  \
                    const VEC xv = BCAST(xs + t);                                                                      \
                    a0[t] = FMA(xv, d0, a0[t]);                                                                        \
                    a1[t] = FMA(xv, d1, a1[t]);                                                                        \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
        for (int t = 0; t < T; t++) STORE(acc + t * 2 * V, a0[t]), STORE(acc + t * 2 * V + V, a1[t]);                 \
    }
#define BCAST512(p) _mm512_set1_ps(*(p))
#define WG512(T) WG_MICRO(avx512, "avx512f", __m512, 16, _mm512_loadu_ps, BCAST512, _mm512_fmadd_ps, _mm512_storeu_ps, T)
#define WG2(T) WG_MICRO(avx2, "avx2,fma", __m256, 8, _mm256_loadu_ps, _mm256_broadcast_ss, _mm256_fmadd_ps, _mm256_storeu_ps, T)
#define TS6(M) M(1) M(2) M(3) M(4) M(5) M(6)
#define TS14(M) TS6(M) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14)
TS14(WG512)
TS6(WG2)
typedef void (*wg_fn)(WG_ARGS);
#define L512(T) wg_avx512_##T,
#define L2(T) wg_avx2_##T,
static const wg_fn WG_512[TMAX512] = {TS14(L512)};
static const wg_fn WG_2[TMAX2] = {TS6(L2)};

// the plain C path (V = 8): the same sums, tn channels
static void wg_scalar(WG_ARGS) {
    enum { V = 8 };
    const float *d = dyr;
    for (int i = 0; i < rows; i++) {
        const float *xs = xr + i * xrow;
        for (int j = 0; j < q; j++, d += 2 * V, xs += xpx)
            for (int t = 0; t < tn; t++)
                for (int l = 0; l < 2 * V; l++) acc[t * 2 * V + l] += xs[t] * d[l];
    }
}

void cb_cpu_wgrad(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws) {
    const int isa = cb_cpu_direct_isa();
    const wg_geom w = wg_geom_of(p, isa, omp_get_max_threads());
    const bk_geom *g = &w.g;
    const int v2 = 2 * w.v, rs = p->r * p->s;
    const size_t image = cb_cpu_blocked_image_floats(g), plane = (size_t)g->hp * g->wp * g->cb;
    float *xb = ws, *dyb = xb + (size_t)p->n * image, *acc = dyb + dyb_floats(p, &w);
    double *dbn = (double *)(((uintptr_t)(acc + acc_floats(p, &w)) + 7) / 8 * 8); // (N, K2 * 2V)
    cb_cpu_blocked_pack_input(p, g, x, xb);
    pack_dy(p, &w, dy, dyb, dbn);
    const size_t xrow = (size_t)p->stride_h * g->wp * g->cb, xpx = (size_t)p->stride_w * g->cb;
    const int items = w.k2 * g->ncb * w.rsn;
#pragma omp parallel for schedule(dynamic, 1)
    for (int it = 0; it < items; it++) { // (pair, channel block, tap group)
        const int k2 = it / (g->ncb * w.rsn), cb = it / w.rsn % g->ncb, gi = it % w.rsn;
        const int rs0 = gi * w.rsg, rs1 = rs0 + w.rsg < rs ? rs0 + w.rsg : rs;
        float *a = acc + (((size_t)k2 * g->ncb + cb) * rs + rs0) * w.cbp * v2; // (rs1 - rs0, CBP, 2V)
        memset(a, 0, sizeof(float) * (size_t)(rs1 - rs0) * w.cbp * v2);
        for (int n = 0; n < p->n; n++)
            for (int p0 = 0; p0 < p->p; p0 += w.rows) {
                const int rows = p->p - p0 < w.rows ? p->p - p0 : w.rows;
                const float *dyr = dyb + (((size_t)n * w.k2 + k2) * p->p + p0) * p->q * v2;
                const float *xn = xb + (size_t)n * image + cb * plane;
                for (int t = rs0; t < rs1; t += w.wide ? p->s : 1) { // a tap, or a row of them (wide)
                    const int r = t / p->s, s = t % p->s;
                    const float *xt = xn + ((size_t)(p0 * p->stride_h + r * g->dh) * g->wp + (size_t)s * g->dw) * g->cb;
                    for (int tl = 0; tl < w.ctiles; tl++) {
                        const int ct0 = tl * w.ct, tn = w.span - ct0 < w.ct ? w.span - ct0 : w.ct;
                        float *at = a + ((size_t)(t - rs0) * w.cbp + ct0) * v2;
                        if (isa == ISA_AVX512) WG_512[tn - 1](dyr, xt + ct0, rows, p->q, xrow, xpx, at, tn);
                        else if (isa == ISA_AVX2) WG_2[tn - 1](dyr, xt + ct0, rows, p->q, xrow, xpx, at, tn);
                        else wg_scalar(dyr, xt + ct0, rows, p->q, xrow, xpx, at, tn);
                    }
                }
            }
    }
    // acc (K2, NCB, R*S, CBP, 2V) -> dw (K, C, R, S)
#pragma omp parallel for schedule(static)
    for (int k = 0; k < p->k; k++)
        for (int c = 0; c < p->c; c++) {
            const int cb = c / g->cb, ci = c % g->cb;
            const float *src = acc + (((size_t)(k / v2) * g->ncb + cb) * rs * w.cbp + ci) * v2 + k % v2;
            float *d = dw + ((size_t)k * p->c + c) * rs;
            for (int t = 0; t < rs; t++) d[t] = src[(size_t)t * w.cbp * v2];
        }
    if (!db) return;
    for (int k = 0; k < p->k; k++) {
        double sum = 0;
        for (int n = 0; n < p->n; n++) sum += dbn[(size_t)n * w.k2 * v2 + k];
        db[k] = (float)sum;
    }
}
