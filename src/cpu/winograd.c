// Own Winograd convolution F(4x4, 3x3) on the CPU, forward, for 3x3 stride-1 undilated dense
// convolutions (Lavin & Gray 2015): each 4x4 output tile comes from a 6x6 input tile with 36
// products per input channel instead of 144.
//
// With T = N * ceil(P/4) * ceil(Q/4) tiles (of the whole batch) and xi = 0..35 the 6x6 positions:
//   U[xi] (K, C)     = G g G^T          per filter g (3x3)                 the filter transform
//   V[xi] (C, T)     = B^T d B          per input tile d (6x6, zeros outside the image)
//   M[xi] (K, T)     = U[xi] V[xi]      36 products
//   y tile (4x4)     = A^T m A + bias   per m (6x6) gathered from M
// The 36 products are 1x1 convolutions of K filters over C channels, run as one batch of 36
// "images" with a weight set each on the own blocked kernels (src/cpu/blocked.h): U and V are
// written straight into their packed layouts, the T tiles as ROWS rows of T/ROWS "pixels" (rows to
// share between threads, pixels enough for full 14-wide microkernel tiles; the last row's spare
// pixels are zero and never read back). Each transform works on WL = 16 channels (U: output, V:
// input) or tiles (M) at once, in loops over those lanes that the compiler vectorises.
// fp32 error: the transforms' constants (1/4, 1/6, 1/24, 8, ...) amplify rounding; measured against
// float64 the normalised error is about 1e-6 on the tests' shapes (direct: about 1e-7), and the
// tests allow 1e-4 (tests/test_kernels.c TOL_WINOGRAD), ten times the direct kernels' 1e-5.
// The transforms run inside the call (the filter's too), so they count in the layer's time.
#include "cpu/blocked.h"

#include <string.h>

enum { WG_ROW = 112 }; // tile columns per row of the products: 8 microkernel tiles of 14

typedef struct wg_geom {
    int th, tw;     // tiles down and across one image
    int t, rows, tp; // tiles of the batch; the products' rows and padded columns (rows * cols)
} wg_geom;

static wg_geom geom_of(const cb_conv_params *p) {
    wg_geom g;
    g.th = (p->p + 3) / 4, g.tw = (p->q + 3) / 4;
    g.t = p->n * g.th * g.tw;
    g.rows = (g.t + WG_ROW - 1) / WG_ROW;
    g.tp = g.rows * ((g.t + g.rows - 1) / g.rows);
    return g;
}

// the 36 products as 1x1 convolutions: (36, C, ROWS, Tp/ROWS) -> (36, K, ROWS, Tp/ROWS)
static cb_conv_params product_of(const cb_conv_params *p, const wg_geom *g) {
    cb_conv_params q = {0};
    q.n = 36, q.c = p->c, q.k = p->k, q.h = q.p = g->rows, q.w = q.q = g->tp / g->rows;
    q.r = q.s = 1, q.stride_h = q.stride_w = 1, q.groups = 1;
    return q;
}

bool cb_cpu_winograd_supports(const cb_conv_params *p) {
    return p->groups == 1 && p->r == 3 && p->s == 3 && p->stride_h == 1 && p->stride_w == 1 && p->dil_h <= 1 && p->dil_w <= 1;
}

size_t cb_cpu_winograd_workspace(const cb_conv_params *p) {
    const wg_geom g = geom_of(p);
    const cb_conv_params q = product_of(p, &g);
    size_t most = 0;
    for (int isa = 0; isa < 3; isa++) { // whichever path runs (tests switch): packed inputs, weights, products of all 36
        const bk_geom bg = cb_cpu_blocked_geom_isa(&q, isa);
        size_t n = 36 * (cb_cpu_blocked_image_floats(&bg) + cb_cpu_blocked_weight_floats(&q, &bg) + (size_t)p->k * g.tp);
        most = n > most ? n : most;
    }
    return most * sizeof(float);
}

// The transforms take WL filters or tiles at once, one per lane: every step below is a loop over
// the lanes that the compiler vectorises, and U, V and M are read and written WL contiguous floats
// at a time.
enum { WL = 16 };

// G (rows 1/4 0 0 / -1/6 -1/6 -1/6 / -1/6 1/6 -1/6 / 1/24 1/12 1/6 / 1/24 -1/12 1/6 / 0 0 1)
// applied to 3 lane vectors g[k * sg + l], into o[k * so + l] (products by constants, no divisions)
static inline void g6(const float *restrict g, size_t sg, float *restrict o, size_t so) {
    const float s6 = 1.0f / 6, s12 = 1.0f / 12, s24 = 1.0f / 24;
    for (int l = 0; l < WL; l++) {
        const float g0 = g[l], g1 = g[sg + l], g2 = g[2 * sg + l];
        o[l] = 0.25f * g0;
        o[so + l] = -s6 * (g0 + g1 + g2);
        o[2 * so + l] = -s6 * (g0 - g1 + g2);
        o[3 * so + l] = s24 * g0 + s12 * g1 + s6 * g2;
        o[4 * so + l] = s24 * g0 - s12 * g1 + s6 * g2;
        o[5 * so + l] = g2;
    }
}

// U[xi] for w (K, C, 3, 3), WL output channels k0.. at once, into the packed weights of product
// xi (K2, NCB, 1, 1, CB, 2, V) at wb + xi * wset: the lanes are WL contiguous floats of one pair
// (2V = 16 or 32, k0 a multiple of 16); zeros past K and C
static void filter_transform(const cb_conv_params *p, const bk_geom *g, size_t wset, const float *w, float *wb) {
    const int v2 = 2 * g->v, kgroups = g->k2 * v2 / WL, cpad = g->ncb * g->cb;
#pragma omp parallel for schedule(static)
    for (int kg = 0; kg < kgroups; kg++) {
        const int k0 = kg * WL, k2 = k0 / v2;
        for (int c = 0; c < cpad; c++) {
            float gg[3][3][WL], t[6][3][WL], o[6][6][WL];
            for (int l = 0; l < WL; l++)
                for (int r = 0; r < 9; r++) gg[r / 3][r % 3][l] = k0 + l < p->k && c < p->c ? w[((size_t)(k0 + l) * p->c + c) * 9 + r] : 0.0f;
            for (int j = 0; j < 3; j++) g6(gg[0][j], 3 * WL, t[0][j], 3 * WL); // G g, by columns
            for (int i = 0; i < 6; i++) g6(t[i][0], WL, o[i][0], WL);          // (G g) G^T, by rows
            float *d = wb + (((size_t)k2 * g->ncb + c / g->cb) * g->cb + c % g->cb) * v2 + k0 % v2;
            for (int xi = 0; xi < 36; xi++) memcpy(d + xi * wset, o[xi / 6][xi % 6], sizeof(float) * WL);
        }
    }
}

// B^T (rows 4 0 -5 0 1 0 / 0 -4 -4 1 1 0 / 0 4 -4 -1 1 0 / 0 -2 -1 2 1 0 / 0 2 -1 -2 1 0 /
// 0 4 0 -5 0 1) applied to 6 lane vectors x[k * sx + l], into o[k * so + l]
static inline void bt6(const float *restrict x, size_t sx, float *restrict o, size_t so) {
    for (int l = 0; l < WL; l++) {
        const float x0 = x[l], x1 = x[sx + l], x2 = x[2 * sx + l], x3 = x[3 * sx + l], x4 = x[4 * sx + l], x5 = x[5 * sx + l];
        o[l] = 4 * x0 - 5 * x2 + x4;
        o[so + l] = -4 * x1 - 4 * x2 + x3 + x4;
        o[2 * so + l] = 4 * x1 - 4 * x2 - x3 + x4;
        o[3 * so + l] = -2 * x1 - x2 + 2 * x3 + x4;
        o[4 * so + l] = 2 * x1 - x2 - 2 * x3 + x4;
        o[5 * so + l] = 4 * x1 - 5 * x3 + x5;
    }
}

// A^T (rows 1 1 1 1 1 0 / 0 1 -1 2 -2 0 / 0 1 1 4 4 0 / 0 1 -1 8 -8 1) applied the same way
static inline void at6(const float *restrict m, size_t sm, float *restrict o, size_t so) {
    for (int l = 0; l < WL; l++) {
        const float m0 = m[l], m1 = m[sm + l], m2 = m[2 * sm + l], m3 = m[3 * sm + l], m4 = m[4 * sm + l], m5 = m[5 * sm + l];
        const float a = m1 + m2, b = m1 - m2, c = m3 + m4, d = m3 - m4;
        o[l] = m0 + a + c;
        o[so + l] = b + 2 * d;
        o[2 * so + l] = a + 4 * c;
        o[3 * so + l] = b + 8 * d + m5;
    }
}

// tile t's image, and its top-left output pixel (4 ty, 4 tx)
static void tile_at(const wg_geom *g, int t, int *n, int *oy, int *ox) {
    *n = t / (g->th * g->tw);
    *oy = t / g->tw % g->th * 4;
    *ox = t % g->tw * 4;
}

// V[xi] for every tile of x (N, C, H, W), WL input channels at once, into the packed input of
// product xi (NCB, ROWS, Wp, CB) at xb + xi * image; every position of it written (zeros where
// no tile is: the last row's spare pixels, the columns past T/ROWS, the channels past C)
static void input_transform(const cb_conv_params *p, const wg_geom *g, const bk_geom *bg, const float *x, float *xb) {
    const size_t image = cb_cpu_blocked_image_floats(bg), plane = (size_t)bg->hp * bg->wp * bg->cb;
    const int cols = g->tp / g->rows, pos = g->rows * bg->wp;
#pragma omp parallel for schedule(static)
    for (int it = 0; it < bg->ncb * pos; it++) {
        const int cb = it / pos, row = it % pos / bg->wp, col = it % bg->wp, t = row * cols + col;
        float d[6][6][WL] = {{{0}}}, e[6][6][WL], o[6][6][WL];
        if (col < cols && t < g->t) {
            int n, oy, ox;
            tile_at(g, t, &n, &oy, &ox);
            const int ih0 = oy - p->pad_top, iw0 = ox - p->pad_left;
            const bool inside = ih0 >= 0 && ih0 + 6 <= p->h && iw0 >= 0 && iw0 + 6 <= p->w; // no bounds to check
            for (int l = 0; l < bg->cb && cb * bg->cb + l < p->c; l++) {
                const float *xc = x + ((size_t)n * p->c + cb * bg->cb + l) * p->h * p->w;
                for (int i = 0; i < 6; i++)
                    for (int j = 0; j < 6; j++) {
                        const int ih = ih0 + i, iw = iw0 + j;
                        if (inside || (ih >= 0 && ih < p->h && iw >= 0 && iw < p->w)) d[i][j][l] = xc[(size_t)ih * p->w + iw];
                    }
            }
        }
        for (int j = 0; j < 6; j++) bt6(d[0][j], 6 * WL, e[0][j], 6 * WL); // B^T d, by columns
        for (int i = 0; i < 6; i++) bt6(e[i][0], WL, o[i][0], WL);         // (B^T d) B, by rows
        float *dst = xb + cb * plane + ((size_t)row * bg->wp + col) * bg->cb;
        if (bg->cb == WL) // a constant size: one vector store each, not a call
            for (int xi = 0; xi < 36; xi++) memcpy(dst + xi * image, o[xi / 6][xi % 6], sizeof(float) * WL);
        else
            for (int xi = 0; xi < 36; xi++) memcpy(dst + xi * image, o[xi / 6][xi % 6], sizeof(float) * (size_t)bg->cb);
    }
}

// y (N, K, P, Q) = A^T m A + bias for every tile, m gathered from M[xi][k][t]
static void output_transform(const cb_conv_params *p, const wg_geom *g, const float *m, const float *b, float *y) {
    const size_t kt = (size_t)p->k * g->tp;
    const int groups = (g->t + WL - 1) / WL;
#pragma omp parallel for schedule(static)
    for (int it = 0; it < p->k * groups; it++) {
        const int k = it / groups, t0 = it % groups * WL, nl = g->t - t0 < WL ? g->t - t0 : WL;
        const float bk = b ? b[k] : 0.0f;
        float mm[6][6][WL], e[4][6][WL], o[4][4][WL];
        for (int xi = 0; xi < 36; xi++) { // lanes past Tp read as zero
            const int nv = g->tp - t0 < WL ? g->tp - t0 : WL;
            memcpy(mm[xi / 6][xi % 6], m + xi * kt + (size_t)k * g->tp + t0, sizeof(float) * (size_t)nv);
            for (int l = nv; l < WL; l++) mm[xi / 6][xi % 6][l] = 0.0f;
        }
        for (int j = 0; j < 6; j++) at6(mm[0][j], 6 * WL, e[0][j], 6 * WL); // A^T m, by columns
        for (int i = 0; i < 4; i++) at6(e[i][0], WL, o[i][0], WL);          // (A^T m) A, by rows
        for (int l = 0; l < nl; l++) {
            int n, oy, ox;
            tile_at(g, t0 + l, &n, &oy, &ox);
            float *yk = y + ((size_t)n * p->k + k) * p->p * p->q;
            for (int i = 0; i < 4 && oy + i < p->p; i++)
                for (int j = 0; j < 4 && ox + j < p->q; j++) yk[(size_t)(oy + i) * p->q + ox + j] = o[i][j][l] + bk;
        }
    }
}

void cb_cpu_winograd_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, void *ws) {
    const wg_geom g = geom_of(p);
    const cb_conv_params q = product_of(p, &g);
    const bk_geom bg = cb_cpu_blocked_geom(&q);
    const size_t image = cb_cpu_blocked_image_floats(&bg), wset = cb_cpu_blocked_weight_floats(&q, &bg);
    float *xb = ws, *wb = xb + 36 * image, *m = wb + 36 * wset;
    filter_transform(p, &bg, wset, w, wb);
    input_transform(p, &g, &bg, x, xb);
    cb_cpu_blocked_run(&q, &bg, xb, wb, wset, NULL, m);
    output_transform(p, &g, m, b, y);
}
