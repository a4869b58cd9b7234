// Own blocked convolution on the CPU, forward: a channel-blocked layout and a register-blocked
// microkernel in which every broadcast input value feeds two fused multiply-adds.
//
// Layouts, V the vector width (16 on AVX-512, 8 on AVX2 and the plain C path), CB = min(C, V)
// input channels per block, NCB = ceil(C / CB) blocks, K2 = ceil(K / 2V) pairs of output blocks:
//   xb  (N, NCB, Hp, Wp, CB)           every image, padded (zeros around and past C): no bounds reads
//   wb  (K2, NCB, R, S, CB, 2, V)      the weights of two output blocks for one input channel are
//                                      2V contiguous floats (zeros past K)
// The microkernel keeps T pixels of one output row times 2V output channels in 2T vector registers
// (T <= 14 on AVX-512: 28 of its 32 registers; T <= 6 on AVX2's 16) and, for every (c, r, s),
// loads two weight vectors and broadcasts T input values, each into two FMAs. The reduction runs
// over all of C*R*S in registers; the input block of a pixel is one cache line (CB = 16), and a
// pair's weights (C*R*S*2V floats, 295 KB for C = 256, 3x3) stay in the 1 MB L2 while the pair
// runs over a row. The tile is then stored into the engine's NCHW output with the bias. The
// conversion of the input into xb runs inside the call, so it counts in the layer's time (as
// oneDNN's reorders do); the weights are packed on every call too (a training step changes them).
// Threads (OpenMP): over (image, input channel block) for the conversion, then over (image, pair,
// output row) items for the products, the whole batch in one loop (a loop per image left a
// thread idle at its end: 81 items on 2 threads for AlexNet conv2, 3-5% of the time).
// Timed alone on the 2-core EPYC (AlexNet conv2/conv4, VGG-16 conv3 shapes) a call ran at 84-88%
// of the measured FMA peak on 2 threads, 87-90% on 1 (docs/results/2026-11-25-cpu-own.md).
// The ISA is the one src/cpu/direct.c detects (cb_cpu_direct_isa: CONVBENCH_CPU_ISA forces one
// the CPU has). Raced by cpu-auto (src/onednn/backend.c) as "own-blocked".
#include "cpu/blocked.h"

#include <immintrin.h>
#include <string.h>

enum { ISA_SCALAR, ISA_AVX2, ISA_AVX512 }; // as cb_cpu_direct_isa numbers them
enum { TMAX512 = 14, TMAX2 = 6, TMAX = 14 };

static int isa_width(int isa) { return isa == ISA_AVX512 ? 16 : 8; }
static int isa_tmax(int isa) { return isa == ISA_AVX512 ? TMAX512 : TMAX2; }

static bk_geom geom_of(const cb_conv_params *p, int isa) {
    bk_geom g;
    const int v = isa_width(isa), tmax = isa_tmax(isa);
    g.isa = isa;
    g.v = v;
    g.cb = p->c < v ? p->c : v;
    g.ncb = (p->c + g.cb - 1) / g.cb;
    g.k2 = (p->k + 2 * v - 1) / (2 * v);
    g.dh = p->dil_h > 1 ? p->dil_h : 1;
    g.dw = p->dil_w > 1 ? p->dil_w : 1;
    g.tiles = (p->q + tmax - 1) / tmax;
    g.tw = (p->q + g.tiles - 1) / g.tiles; // equal tiles of at most tmax pixels
    g.hp = (p->p - 1) * p->stride_h + (p->r - 1) * g.dh + 1;
    // the last tile computes tw pixels even where fewer are stored: room for them
    g.wp = (g.tiles * g.tw - 1) * p->stride_w + (p->s - 1) * g.dw + 1;
    return g;
}

bk_geom cb_cpu_blocked_geom(const cb_conv_params *p) { return geom_of(p, cb_cpu_direct_isa()); }
bk_geom cb_cpu_blocked_geom_isa(const cb_conv_params *p, int isa) { return geom_of(p, isa); }

size_t cb_cpu_blocked_image_floats(const bk_geom *g) { return (size_t)g->ncb * g->hp * g->wp * g->cb; }

size_t cb_cpu_blocked_weight_floats(const cb_conv_params *p, const bk_geom *g) {
    return (size_t)g->k2 * g->ncb * p->r * p->s * g->cb * 2 * g->v;
}

bool cb_cpu_blocked_supports(const cb_conv_params *p) { return p->groups == 1; }

// the packed input of every image, then the packed weights
static size_t ws_floats(const cb_conv_params *p, const bk_geom *g) {
    return (size_t)p->n * cb_cpu_blocked_image_floats(g) + cb_cpu_blocked_weight_floats(p, g);
}

size_t cb_cpu_blocked_workspace(const cb_conv_params *p) {
    size_t most = 0;
    for (int isa = ISA_SCALAR; isa <= ISA_AVX512; isa++) { // whichever path runs (tests switch)
        bk_geom g = geom_of(p, isa);
        size_t n = ws_floats(p, &g);
        if (n > most) most = n;
    }
    return most * sizeof(float);
}

// input channel block cb of one image x (C, H, W) -> xb's block (Hp, Wp, CB), zero outside x
static void pack_input_block(const cb_conv_params *p, const bk_geom *g, const float *x, int cb, float *xb) {
    float *d = xb + (size_t)cb * g->hp * g->wp * g->cb;
    memset(d, 0, sizeof(float) * (size_t)g->hp * g->wp * g->cb);
    // a row at a time, every channel of it: the row's Wp * CB floats stay in L1 while CB strided
    // passes fill them (channel by channel over the whole plane the lines left the cache between
    // passes: 5.4 ms for VGG-16 conv1_2's input at b4, 4.2 after)
    for (int ih = 0; ih < p->h; ih++) {
        const int i = ih + p->pad_top;
        if (i < 0 || i >= g->hp) continue;
        for (int ci = 0; ci < g->cb; ci++) {
            const int c = cb * g->cb + ci;
            if (c >= p->c) break;
            const float *s = x + ((size_t)c * p->h + ih) * p->w;
            float *row = d + (size_t)i * g->wp * g->cb + ci;
            for (int iw = 0; iw < p->w; iw++) {
                const int j = iw + p->pad_left;
                if (j >= 0 && j < g->wp) row[(size_t)j * g->cb] = s[iw];
            }
        }
    }
}

// weights (K, C, R, S) -> wb (K2, NCB, R, S, CB, 2, V)
static void pack_weights(const cb_conv_params *p, const bk_geom *g, const float *w, float *wb) {
    const int v2 = 2 * g->v, rs = p->r * p->s;
#pragma omp parallel for schedule(static)
    for (int k2 = 0; k2 < g->k2; k2++)
        for (int cb = 0; cb < g->ncb; cb++)
            for (int t = 0; t < rs; t++)
                for (int ci = 0; ci < g->cb; ci++) {
                    float *d = wb + ((((size_t)k2 * g->ncb + cb) * rs + t) * g->cb + ci) * v2;
                    const int c = cb * g->cb + ci;
                    for (int j = 0; j < v2; j++) {
                        const int k = k2 * v2 + j;
                        d[j] = k < p->k && c < p->c ? w[((size_t)k * p->c + c) * rs + t] : 0.0f;
                    }
                }
}

// the microkernels: out (2, T, V) = the sums over (c, r, s) for T pixels of output row oh from
// column ow0 and the pair's 2V channels. xr: xb at the row oh * stride_h, column ow0 * stride_w.
#define BK_ARGS const cb_conv_params *p, const bk_geom *g, const float *xr, const float *wk, float *out

// CBW and SW: the channel block and the column stride, g->cb and p->stride_w in general, or the
// constants 16 and 1 (AVX-512's "full" kernels): then every address in the inner loop is a
// register plus an immediate, and the loop is loads and FMAs alone (no spilled pixel offsets)
#define BK_MICRO(ISA, TARGET, VEC, V, ZERO, LOAD, BCAST, FMA, STORE, T, CBW, SW)                                       \
    __attribute__((target(TARGET))) static void bk_##ISA##_##T(BK_ARGS) {                                              \
        VEC a0[T], a1[T];                                                                                              \
        for (int t = 0; t < T; t++) a0[t] = ZERO(), a1[t] = ZERO();                                                   \
        const int cbw = CBW;                                                                                           \
        const size_t px = (size_t)(SW) * cbw, plane = (size_t)g->hp * g->wp * cbw;                                    \
        const float *w = wk;                                                                                           \
        for (int cb = 0; cb < g->ncb; cb++)                                                                            \
            for (int r = 0; r < p->r; r++) {                                                                           \
                const float *xrow = xr + cb * plane + (size_t)r * g->dh * g->wp * cbw;                                 \
                for (int s = 0; s < p->s; s++) {                                                                       \
                    const float *xs = xrow + (size_t)s * g->dw * cbw;                                                  \
                    _Pragma("GCC unroll 16") for (int ci = 0; ci < cbw; ci++, w += 2 * V) {                            \
                        const VEC w0 = LOAD(w), w1 = LOAD(w + V);                                                      \
                        _Pragma("GCC unroll 14") for (int t = 0; t < T; t++) {                                         \
                            const VEC xv = BCAST(xs + t * px + ci);                                                    \
                            a0[t] = FMA(xv, w0, a0[t]);                                                                \
                            a1[t] = FMA(xv, w1, a1[t]);                                                                \
                        }                                                                                              \
                    }                                                                                                  \
                }                                                                                                      \
            }                                                                                                          \
        for (int t = 0; t < T; t++) STORE(out + (size_t)t * V, a0[t]), STORE(out + (size_t)(T + t) * V, a1[t]);        \
    }
#define BCAST512(p) _mm512_set1_ps(*(p))
#define BK512(T) BK_MICRO(avx512, "avx512f", __m512, 16, _mm512_setzero_ps, _mm512_loadu_ps, BCAST512, _mm512_fmadd_ps, _mm512_storeu_ps, T, g->cb, p->stride_w)
#define BK512F(T) BK_MICRO(avx512f16, "avx512f", __m512, 16, _mm512_setzero_ps, _mm512_loadu_ps, BCAST512, _mm512_fmadd_ps, _mm512_storeu_ps, T, 16, 1)
#define BK2(T) BK_MICRO(avx2, "avx2,fma", __m256, 8, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_broadcast_ss, _mm256_fmadd_ps, _mm256_storeu_ps, T, g->cb, p->stride_w)
#define TS6(M) M(1) M(2) M(3) M(4) M(5) M(6)
#define TS14(M) TS6(M) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14)
TS14(BK512)
TS14(BK512F)
TS6(BK2)
typedef void (*bk_fn)(BK_ARGS);
#define L512(T) bk_avx512_##T,
#define L512F(T) bk_avx512f16_##T,
#define L2(T) bk_avx2_##T,
static const bk_fn BK_512[TMAX512] = {TS14(L512)};
static const bk_fn BK_512F[TMAX512] = {TS14(L512F)}; // full 16-channel blocks, stride 1
static const bk_fn BK_2[TMAX2] = {TS6(L2)};

// the plain C path (V = 8): the same sums, g->tw pixels
static void bk_scalar(BK_ARGS) {
    enum { V = 8 };
    const int T = g->tw, cbw = g->cb;
    const size_t px = (size_t)p->stride_w * cbw, plane = (size_t)g->hp * g->wp * cbw;
    for (int i = 0; i < 2 * T * V; i++) out[i] = 0.0f;
    const float *w = wk;
    for (int cb = 0; cb < g->ncb; cb++)
        for (int r = 0; r < p->r; r++)
            for (int s = 0; s < p->s; s++) {
                const float *xs = xr + cb * plane + ((size_t)r * g->dh * g->wp + (size_t)s * g->dw) * cbw;
                for (int ci = 0; ci < cbw; ci++, w += 2 * V)
                    for (int t = 0; t < T; t++) {
                        const float xv = xs[t * px + ci];
                        for (int j = 0; j < V; j++) out[t * V + j] += xv * w[j], out[(T + t) * V + j] += xv * w[V + j];
                    }
            }
}

void cb_cpu_blocked_run(const cb_conv_params *p, const bk_geom *g, const float *xb, const float *wb, size_t wstride,
                        const float *b, float *y) {
    const int v = g->v;
    const size_t pq = (size_t)p->p * p->q, wpair = cb_cpu_blocked_weight_floats(p, g) / g->k2, image = cb_cpu_blocked_image_floats(g);
    const bool full = g->cb == 16 && p->stride_w == 1;
    bk_fn micro = bk_scalar;
    if (g->isa == ISA_AVX512) micro = full ? BK_512F[g->tw - 1] : BK_512[g->tw - 1];
    else if (g->isa == ISA_AVX2) micro = BK_2[g->tw - 1];
    const int items = p->n * g->k2 * p->p;
#pragma omp parallel for schedule(static)
    for (int it = 0; it < items; it++) { // (image, pair, row): a thread keeps one pair's weights in L2 for a row's tiles
        const int n = it / (g->k2 * p->p), k2 = it / p->p % g->k2, oh = it % p->p;
        const float *xn = xb + (size_t)n * image, *wk = wb + (size_t)n * wstride + (size_t)k2 * wpair;
        float *yn = y + (size_t)n * p->k * pq;
        float tile[2 * TMAX * 16];
        for (int tl = 0; tl < g->tiles; tl++) {
            const int ow0 = tl * g->tw, tn = p->q - ow0 < g->tw ? p->q - ow0 : g->tw; // pixels stored
            const float *xr = xn + ((size_t)oh * p->stride_h * g->wp + (size_t)ow0 * p->stride_w) * g->cb;
            micro(p, g, xr, wk, tile);
            for (int o = 0; o < 2; o++) // (2, T, V) -> 2V output planes' row
                for (int j = 0; j < v; j++) {
                    const int k = (k2 * 2 + o) * v + j;
                    if (k >= p->k) break;
                    float *yr = yn + (size_t)k * pq + (size_t)oh * p->q + ow0;
                    const float bk = b ? b[k] : 0.0f, *tv = tile + (size_t)o * g->tw * v + j;
                    for (int t = 0; t < tn; t++) yr[t] = tv[(size_t)t * v] + bk;
                }
        }
    }
}

void cb_cpu_blocked_pack_input(const cb_conv_params *p, const bk_geom *g, const float *x, float *xb) {
    const size_t image = cb_cpu_blocked_image_floats(g);
#pragma omp parallel for schedule(static)
    for (int it = 0; it < p->n * g->ncb; it++)
        pack_input_block(p, g, x + (size_t)(it / g->ncb) * p->c * p->h * p->w, it % g->ncb, xb + (size_t)(it / g->ncb) * image);
}

void cb_cpu_blocked_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, void *ws) {
    const bk_geom g = cb_cpu_blocked_geom(p);
    float *xb = ws, *wb = xb + (size_t)p->n * cb_cpu_blocked_image_floats(&g);
    pack_weights(p, &g, w, wb);
    cb_cpu_blocked_pack_input(p, &g, x, xb);
    cb_cpu_blocked_run(p, &g, xb, wb, 0, b, y);
}
