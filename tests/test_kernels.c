// CPU kernel tests: every cb_ref_* (float) and cb_cpu_* kernel against the float64 reference
// cb_ref64_*, and every backward pass against central finite differences.
//
// Inputs are fresh uniform values in [-1, 1] (never 0) from a seeded xorshift; the float and the
// double copies hold the very same values. Outputs are poisoned with NaN before each call, so an
// element a kernel forgets to write makes the error NaN and the check fail.
//
// Error measure: normalised, ||out - ref||_2 / ||ref||_2. Tolerances:
//   TOL_F32 = 1e-5  float32 kernel against the float64 reference (float rounding of sums up to
//                   a few thousand terms stays near 1e-6)
//   TOL_GRAD = 1e-4 float32 backward against finite differences of L = sum(y * g), g random,
//                   computed in double through the cb_ref64_* forward with eps = 1e-6
//                   (truncation ~eps^2, rounding ~1e-16/eps: the FD gradient is good to ~1e-9)
//   TOL_GRAD64 = 1e-7 float64 backward against the same finite differences
// The conv workspace is allocated at exactly cb_cpu_conv_workspace bytes, so an overrun shows
// under AddressSanitizer (make test runs this binary under ASan+UBSan too).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "core/act.h"
#include "cuda/fast_div.h" // plain C: the GPU pooling kernels' index math, checked here

#define TOL_F32 1e-5
// Winograd F(4x4, 3x3) in float32: its transforms' constants (1/6, 1/24, 8, ...) amplify the
// rounding; measured about 1e-6 on these shapes, allowed ten times the direct kernels' bound
#define TOL_WINOGRAD 1e-4
#define TOL_GRAD 1e-4
#define TOL_GRAD64 1e-7
#define FD_EPS 1e-6

static int n_pass, n_fail;

// ---- helpers ------------------------------------------------------------------------------

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static double urand(void) // uniform in [-1, 1], never exactly 0
{
    for (;;) {
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        const uint64_t r = rng_state * 0x2545F4914F6CDD1Dull;
        const double u = (double)(r >> 11) * (2.0 / 9007199254740992.0) - 1.0;
        if (u != 0.0) return u;
    }
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p) {
        fprintf(stderr, "%s:%d: out of memory (%zu x %zu bytes)\n", __FILE__, __LINE__, n, sz);
        exit(2);
    }
    return p;
}
#define FALLOC(n) ((float *)xcalloc((n), sizeof(float)))
#define DALLOC(n) ((double *)xcalloc((n), sizeof(double)))

// the same random values into a float and a double buffer (the double holds the rounded float)
static void fill_pair(size_t n, float *f, double *d)
{
    for (size_t i = 0; i < n; i++) {
        f[i] = (float)urand();
        d[i] = f[i];
    }
}

static void poison(float *f, size_t n)
{
    for (size_t i = 0; i < n; i++) f[i] = NAN;
}

static double nerr(const float *a, const double *ref, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double)a[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static double nerr64(const double *a, const double *ref, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = a[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static void check(const char *name, const char *what, double err, double tol)
{
    const int ok = err <= tol; // NaN fails
    printf("%-4s %-28s %-26s err %.2e (tol %.0e)\n", ok ? "ok" : "FAIL", name, what, err, tol);
    if (ok) n_pass++;
    else n_fail++;
}

static double dot64(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

// central differences of loss() with respect to each of param[0..n)
static void fd_grad(double (*loss)(void *), void *ctx, double *param, size_t n, double *grad)
{
    for (size_t i = 0; i < n; i++) {
        const double save = param[i];
        param[i] = save + FD_EPS;
        const double lp = loss(ctx);
        param[i] = save - FD_EPS;
        const double lm = loss(ctx);
        param[i] = save;
        grad[i] = (lp - lm) / (2.0 * FD_EPS);
    }
}

// compare a float64 and two float32 gradients (reference and fast) with the FD gradient
static void check_grad(const char *name, const char *what, const double *fd, const double *g64, const float *gref,
                       const float *gcpu, size_t n)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s fd ref64", what);
    check(name, buf, nerr64(g64, fd, n), TOL_GRAD64);
    snprintf(buf, sizeof buf, "%s fd ref", what);
    if (gref) check(name, buf, nerr(gref, fd, n), TOL_GRAD);
    snprintf(buf, sizeof buf, "%s fd cpu", what);
    if (gcpu) check(name, buf, nerr(gcpu, fd, n), TOL_GRAD);
}

// ---- convolution --------------------------------------------------------------------------

typedef struct {
    const char *name;
    int n, c, h, w, k, r, s, stride_h, stride_w;
    int pad_h, pad_w; // -1: TensorFlow SAME (output ceil(h/stride), leading pad = total/2)
    int groups;
    int fd;           // also check the gradients by finite differences (small cases only)
    int skip_ref32;   // large cases: leave out the (slow) float reference
    int dil;          // dilation (both axes); 0: none
} conv_case;

static cb_conv_params conv_make(const conv_case *cc)
{
    cb_conv_params p = {.n = cc->n, .c = cc->c, .h = cc->h, .w = cc->w, .k = cc->k, .r = cc->r, .s = cc->s,
                        .stride_h = cc->stride_h, .stride_w = cc->stride_w, .groups = cc->groups,
                        .dil_h = cc->dil, .dil_w = cc->dil};
    const int d = cc->dil > 1 ? cc->dil : 1, er = (p.r - 1) * d + 1, es = (p.s - 1) * d + 1; // the taps' span
    if (cc->pad_h < 0) {
        p.p = (p.h + p.stride_h - 1) / p.stride_h;
        const int t = (p.p - 1) * p.stride_h + er - p.h;
        p.pad_top = t > 0 ? t / 2 : 0;
    } else {
        p.p = (p.h + 2 * cc->pad_h - er) / p.stride_h + 1;
        p.pad_top = cc->pad_h;
    }
    if (cc->pad_w < 0) {
        p.q = (p.w + p.stride_w - 1) / p.stride_w;
        const int t = (p.q - 1) * p.stride_w + es - p.w;
        p.pad_left = t > 0 ? t / 2 : 0;
    } else {
        p.q = (p.w + 2 * cc->pad_w - es) / p.stride_w + 1;
        p.pad_left = cc->pad_w;
    }
    return p;
}

typedef struct {
    const cb_conv_params *p;
    double *x, *w, *b, *g, *y;
} conv_ctx;

static double conv_loss(void *v)
{
    conv_ctx *c = v;
    cb_ref64_conv_forward(c->p, c->x, c->w, c->b, c->y);
    return dot64(c->y, c->g, (size_t)c->p->n * c->p->k * c->p->p * c->p->q);
}

typedef void (*conv_forward_fn)(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, void *ws);

// an own forward kernel against the float64 y64, on the scalar, AVX2 and AVX-512 paths (each capped at
// what this CPU has), with a workspace of exactly the size it asks for (ASan sees any overrun)
static void conv_forward_every_isa(const char *name, const char *kernel, const cb_conv_params *p, conv_forward_fn fn,
                                   size_t ws_bytes, const float *x, const float *w, const float *b, float *y,
                                   const double *y64, size_t ys, double tol)
{
    void *ws = malloc(ws_bytes);
    const char *isas[] = {"scalar", "avx2", "avx512"};
    for (int k = 0; k < 3; k++) {
        const char *got = cb_cpu_direct_set_isa(isas[k]);
        char what[64];
        snprintf(what, sizeof what, "forward %s %s", kernel, got);
        poison(y, ys);
        fn(p, x, w, b, y, ws);
        check(name, what, nerr(y, y64, ys), tol);
    }
    cb_cpu_direct_set_isa(getenv("CONVBENCH_CPU_ISA"));
    free(ws);
}

static void test_conv(const conv_case *cc)
{
    const cb_conv_params p = conv_make(cc);
    const size_t xs = (size_t)p.n * p.c * p.h * p.w, wsz = (size_t)p.k * (p.c / p.groups) * p.r * p.s;
    const size_t ys = (size_t)p.n * p.k * p.p * p.q;
    float *x = FALLOC(xs), *w = FALLOC(wsz), *b = FALLOC(p.k), *dy = FALLOC(ys);
    double *x64 = DALLOC(xs), *w64 = DALLOC(wsz), *b64 = DALLOC(p.k), *dy64 = DALLOC(ys);
    fill_pair(xs, x, x64);
    fill_pair(wsz, w, w64);
    fill_pair(p.k, b, b64);
    fill_pair(ys, dy, dy64);
    float *y = FALLOC(ys), *dx = FALLOC(xs), *dw = FALLOC(wsz), *db = FALLOC(p.k);
    double *y64 = DALLOC(ys), *dx64 = DALLOC(xs), *dw64 = DALLOC(wsz), *db64 = DALLOC(p.k);
    const size_t wsb = cb_cpu_conv_workspace(&p);
    void *ws = wsb ? malloc(wsb) : NULL; // exactly the size asked for: ASan sees any overrun

    cb_ref64_conv_forward(&p, x64, w64, b64, y64);
    cb_ref64_conv_backward_data(&p, dy64, w64, dx64);
    cb_ref64_conv_backward_filter(&p, x64, dy64, dw64, db64);

    if (!cc->skip_ref32) {
        poison(y, ys);
        cb_ref_conv_forward(&p, x, w, b, y);
        check(cc->name, "forward ref", nerr(y, y64, ys), TOL_F32);
        poison(dx, xs);
        cb_ref_conv_backward_data(&p, dy, w, dx);
        check(cc->name, "backward_data ref", nerr(dx, dx64, xs), TOL_F32);
        poison(dw, wsz);
        poison(db, p.k);
        cb_ref_conv_backward_filter(&p, x, dy, dw, db);
        check(cc->name, "backward_filter dw ref", nerr(dw, dw64, wsz), TOL_F32);
        check(cc->name, "backward_filter db ref", nerr(db, db64, p.k), TOL_F32);
    }
    poison(y, ys);
    cb_cpu_conv_forward(&p, x, w, b, y, ws);
    check(cc->name, "forward cpu", nerr(y, y64, ys), TOL_F32);
    // the own direct forward (K < 8 and groups it leaves to GEMM), the own blocked forward (groups
    // it leaves) and Winograd (3x3 stride 1 alone), on every ISA path this CPU has
    if (cb_cpu_direct_supports(&p))
        conv_forward_every_isa(cc->name, "direct", &p, cb_cpu_direct_forward, cb_cpu_direct_workspace(&p), x, w, b, y, y64, ys, TOL_F32);
    if (cb_cpu_blocked_supports(&p))
        conv_forward_every_isa(cc->name, "blocked", &p, cb_cpu_blocked_forward, cb_cpu_blocked_workspace(&p), x, w, b, y, y64, ys, TOL_F32);
    if (cb_cpu_winograd_supports(&p))
        conv_forward_every_isa(cc->name, "winograd", &p, cb_cpu_winograd_forward, cb_cpu_winograd_workspace(&p), x, w, b, y, y64, ys,
                               TOL_WINOGRAD);
    // backward data as a forward convolution (stride 1) on the blocked and Winograd kernels
    for (int wino = 0; wino < 2; wino++) {
        if (!cb_cpu_dgrad_applies(&p, wino)) continue;
        void *gws = malloc(cb_cpu_dgrad_workspace(&p, wino));
        const char *isas[] = {"scalar", "avx2", "avx512"};
        for (int k = 0; k < 3; k++) {
            char what[64];
            snprintf(what, sizeof what, "backward_data %s %s", wino ? "winograd" : "blocked", cb_cpu_direct_set_isa(isas[k]));
            poison(dx, xs);
            cb_cpu_dgrad(&p, dy, w, dx, gws, wino);
            check(cc->name, what, nerr(dx, dx64, xs), wino ? TOL_WINOGRAD : TOL_F32);
        }
        cb_cpu_direct_set_isa(getenv("CONVBENCH_CPU_ISA"));
        free(gws);
    }
    // the own backward filter on the blocked layouts, dw and db
    if (cb_cpu_wgrad_supports(&p)) {
        void *gws = malloc(cb_cpu_wgrad_workspace(&p)); // exactly the size asked for
        const char *isas[] = {"scalar", "avx2", "avx512"};
        for (int k = 0; k < 3; k++) {
            char what[64];
            const char *got = cb_cpu_direct_set_isa(isas[k]);
            poison(dw, wsz);
            poison(db, p.k);
            cb_cpu_wgrad(&p, x, dy, dw, db, gws);
            snprintf(what, sizeof what, "backward_filter dw blocked %s", got);
            check(cc->name, what, nerr(dw, dw64, wsz), TOL_F32);
            snprintf(what, sizeof what, "backward_filter db blocked %s", got);
            check(cc->name, what, nerr(db, db64, p.k), TOL_F32);
        }
        cb_cpu_direct_set_isa(getenv("CONVBENCH_CPU_ISA"));
        free(gws);
    }
    poison(y, ys);
    cb_cpu_conv_forward(&p, x, w, NULL, y, ws); // no bias: compare with y64 - b
    for (size_t i = 0; i < ys; i++) y64[i] -= b64[i / (p.p * p.q) % p.k];
    check(cc->name, "forward cpu no bias", nerr(y, y64, ys), TOL_F32);
    poison(dx, xs);
    cb_cpu_conv_backward_data(&p, dy, w, dx, ws);
    check(cc->name, "backward_data cpu", nerr(dx, dx64, xs), TOL_F32);
    poison(dw, wsz);
    poison(db, p.k);
    cb_cpu_conv_backward_filter(&p, x, dy, dw, db, ws);
    check(cc->name, "backward_filter dw cpu", nerr(dw, dw64, wsz), TOL_F32);
    check(cc->name, "backward_filter db cpu", nerr(db, db64, p.k), TOL_F32);

    if (cc->fd) {
        // gradients of L = sum(y * dy): dL/dx = backward_data(dy), dL/dw, dL/db = backward_filter(x, dy)
        float *dx_ref = FALLOC(xs), *dw_ref = FALLOC(wsz), *db_ref = FALLOC(p.k);
        double *fd = DALLOC(xs > wsz ? xs : wsz);
        conv_ctx ctx = {&p, x64, w64, b64, dy64, y64};
        cb_ref_conv_backward_data(&p, dy, w, dx_ref);
        cb_ref_conv_backward_filter(&p, x, dy, dw_ref, db_ref);
        fd_grad(conv_loss, &ctx, x64, xs, fd);
        check_grad(cc->name, "dx", fd, dx64, dx_ref, dx, xs);
        fd_grad(conv_loss, &ctx, w64, wsz, fd);
        check_grad(cc->name, "dw", fd, dw64, dw_ref, dw, wsz);
        fd_grad(conv_loss, &ctx, b64, p.k, fd);
        check_grad(cc->name, "db", fd, db64, db_ref, db, p.k);
        free(dx_ref), free(dw_ref), free(db_ref), free(fd);
    }
    free(x), free(w), free(b), free(dy), free(y), free(dx), free(dw), free(db), free(ws);
    free(x64), free(w64), free(b64), free(dy64), free(y64), free(dx64), free(dw64), free(db64);
}

static void test_conv_cases(void)
{
    static const conv_case cases[] = {
        // name                 n   c   h   w    k   r   s  sh sw  ph  pw  g  fd skip dil
        {"conv stride2 same 8x8", 2, 3, 8, 8, 5, 3, 3, 2, 2, -1, -1, 1, 1, 0, 0},     // pads 0 / 1
        {"conv 4x4 same 7x7", 2, 5, 7, 7, 4, 4, 4, 1, 1, -1, -1, 1, 1, 0, 0},         // pads 1 / 2
        {"conv 5x3 nonsquare", 2, 3, 11, 9, 6, 5, 3, 1, 1, -1, -1, 1, 1, 0, 0},
        {"conv 20x5 on 24x9", 2, 2, 24, 9, 3, 20, 5, 1, 1, 0, 0, 1, 1, 0, 0},
        {"conv stride 3x2 same", 2, 5, 10, 9, 7, 3, 4, 3, 2, -1, -1, 1, 1, 0, 0},
        {"conv 1x1 direct", 3, 13, 6, 5, 8, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0},
        {"conv 1x1 stride2", 2, 5, 7, 6, 3, 1, 1, 2, 2, 0, 0, 1, 1, 0, 0},
        {"conv 1x1 direct groups2", 2, 6, 4, 5, 4, 1, 1, 1, 1, 0, 0, 2, 1, 0, 0},
        {"conv batch1 c13 pad1", 1, 13, 9, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0},
        {"conv groups2", 2, 6, 7, 7, 4, 3, 3, 1, 1, 1, 1, 2, 1, 0, 0},
        {"conv groups2 stride2", 2, 10, 9, 7, 6, 3, 2, 2, 2, -1, -1, 2, 1, 0, 0},
        {"conv 11x11 stride4", 1, 3, 23, 23, 4, 11, 11, 4, 4, 2, 2, 1, 1, 0, 0},
        {"conv pad > filter/2", 1, 3, 5, 5, 2, 3, 3, 2, 2, 2, 2, 1, 1, 0, 0},
        {"conv alexnet2 groups2", 2, 48, 27, 27, 64, 5, 5, 1, 1, 2, 2, 2, 0, 0, 0},
        {"conv alexnet conv2 b2", 2, 64, 27, 27, 192, 5, 5, 1, 1, 2, 2, 1, 0, 1, 0},
        {"conv vgg 3x3 c13", 2, 13, 32, 32, 64, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0},
        {"conv dilated 2 pad 2", 2, 4, 9, 9, 5, 3, 3, 1, 1, 2, 2, 1, 1, 0, 2},
        {"conv dilated 3 5x3 stride2 same", 2, 3, 13, 11, 4, 5, 3, 2, 2, -1, -1, 1, 1, 0, 3},
        {"conv depthwise dilated 2", 2, 6, 8, 7, 6, 3, 3, 1, 1, 2, 1, 6, 1, 0, 2},
        // depthwise (the direct loops of src/cpu/depthwise.c): SAME, stride 2 asymmetric, 7x7, non-square strides
        {"conv depthwise 3x3 same c12", 2, 12, 9, 8, 12, 3, 3, 1, 1, -1, -1, 12, 1, 0, 0},
        {"conv depthwise 5x5 stride2 same", 1, 7, 12, 11, 7, 5, 5, 2, 2, -1, -1, 7, 1, 0, 0},
        {"conv depthwise 7x7 pad3 c40", 2, 40, 10, 9, 40, 7, 7, 1, 1, 3, 3, 40, 0, 0, 0},
        {"conv depthwise 3x5 stride 2x1 pad 1,2", 3, 3, 9, 10, 3, 3, 5, 2, 1, 1, 2, 3, 1, 0, 0},
        {"conv dilated 2 pad 0 groups 2", 1, 4, 10, 10, 6, 3, 3, 1, 1, 0, 0, 2, 1, 0, 2},
        // K >= 8 (the own direct path too): K not a multiple of 8 or 16, rows longer than a tile
        {"conv k13 5x3 stride 2x1 same", 2, 3, 17, 29, 13, 5, 3, 2, 1, -1, -1, 1, 0, 0, 0},
        {"conv k24 batch1 3x3 pad1 q31", 1, 7, 6, 31, 24, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0},
        {"conv k17 dilated 2 stride 2", 2, 5, 15, 14, 17, 3, 3, 2, 2, 2, 2, 1, 0, 0, 2},
        {"conv k8 1x7 asym same", 1, 9, 5, 26, 8, 1, 7, 1, 1, -1, -1, 1, 0, 0, 0},
        // the blocked path's channel blocks: C past one block and not a multiple of 8 or 16, K an odd
        // number of output blocks, rows of more than one tile, a 2x2 image under a 3x3 filter
        {"conv c20 k40 3x2 same stride 2x1", 2, 20, 9, 33, 40, 3, 2, 2, 1, -1, -1, 1, 0, 0, 0},
        {"conv c33 k16 batch1 1x1 q17", 1, 33, 4, 17, 16, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0},
        {"conv c32 k48 3x3 on 2x2", 1, 32, 2, 2, 48, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0},
        // Winograd's tiles: sizes not a multiple of 4, no padding, padding 2 down and 0 across,
        // a batch whose tiles fill more than one row of the products (N * 3 * 3 > 112)
        {"conv 3x3 valid c20 k40 11x10", 2, 20, 11, 10, 40, 3, 3, 1, 1, 0, 0, 1, 0, 0, 0},
        {"conv 3x3 pad 2,0 c17 k24", 1, 17, 6, 9, 24, 3, 3, 1, 1, 2, 0, 1, 0, 0, 0},
        {"conv 3x3 same c16 k32 b15 12x11", 15, 16, 12, 11, 32, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0},
        // the own backward filter's chunks of output rows: more than one chunk of dy on every path
        {"conv c19 k35 3x2 stride 2x1 same 121x40", 2, 19, 121, 40, 35, 3, 2, 2, 1, -1, -1, 1, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_conv(&cases[i]);
}

// ---- fully connected ----------------------------------------------------------------------

typedef struct {
    int n, c, k;
    double *x, *w, *b, *g, *y;
} fc_ctx;

static double fc_loss(void *v)
{
    fc_ctx *f = v;
    cb_ref64_fc_forward(f->n, f->c, f->k, f->x, f->w, f->b, f->y);
    return dot64(f->y, f->g, (size_t)f->n * f->k);
}

static void test_fc(const char *name, int n, int c, int k, int fdcheck)
{
    const size_t xs = (size_t)n * c, wsz = (size_t)k * c, ys = (size_t)n * k;
    float *x = FALLOC(xs), *w = FALLOC(wsz), *b = FALLOC(k), *dy = FALLOC(ys);
    double *x64 = DALLOC(xs), *w64 = DALLOC(wsz), *b64 = DALLOC(k), *dy64 = DALLOC(ys);
    fill_pair(xs, x, x64), fill_pair(wsz, w, w64), fill_pair(k, b, b64), fill_pair(ys, dy, dy64);
    float *y = FALLOC(ys), *dx = FALLOC(xs), *dw = FALLOC(wsz), *db = FALLOC(k);
    float *dx_ref = FALLOC(xs), *dw_ref = FALLOC(wsz), *db_ref = FALLOC(k);
    double *y64 = DALLOC(ys), *dx64 = DALLOC(xs), *dw64 = DALLOC(wsz), *db64 = DALLOC(k);

    cb_ref64_fc_forward(n, c, k, x64, w64, b64, y64);
    cb_ref64_fc_backward_data(n, c, k, dy64, w64, dx64);
    cb_ref64_fc_backward_filter(n, c, k, x64, dy64, dw64, db64);
    poison(y, ys);
    cb_ref_fc_forward(n, c, k, x, w, b, y);
    check(name, "forward ref", nerr(y, y64, ys), TOL_F32);
    poison(y, ys);
    cb_cpu_fc_forward(n, c, k, x, w, b, y);
    check(name, "forward cpu", nerr(y, y64, ys), TOL_F32);
    poison(dx_ref, xs);
    cb_ref_fc_backward_data(n, c, k, dy, w, dx_ref);
    check(name, "backward_data ref", nerr(dx_ref, dx64, xs), TOL_F32);
    poison(dx, xs);
    cb_cpu_fc_backward_data(n, c, k, dy, w, dx);
    check(name, "backward_data cpu", nerr(dx, dx64, xs), TOL_F32);
    poison(dw_ref, wsz), poison(db_ref, k);
    cb_ref_fc_backward_filter(n, c, k, x, dy, dw_ref, db_ref);
    check(name, "backward_filter dw ref", nerr(dw_ref, dw64, wsz), TOL_F32);
    check(name, "backward_filter db ref", nerr(db_ref, db64, k), TOL_F32);
    poison(dw, wsz), poison(db, k);
    cb_cpu_fc_backward_filter(n, c, k, x, dy, dw, db);
    check(name, "backward_filter dw cpu", nerr(dw, dw64, wsz), TOL_F32);
    check(name, "backward_filter db cpu", nerr(db, db64, k), TOL_F32);
    if (fdcheck) {
        double *fd = DALLOC(xs > wsz ? xs : wsz);
        fc_ctx ctx = {n, c, k, x64, w64, b64, dy64, y64};
        fd_grad(fc_loss, &ctx, x64, xs, fd);
        check_grad(name, "dx", fd, dx64, dx_ref, dx, xs);
        fd_grad(fc_loss, &ctx, w64, wsz, fd);
        check_grad(name, "dw", fd, dw64, dw_ref, dw, wsz);
        fd_grad(fc_loss, &ctx, b64, k, fd);
        check_grad(name, "db", fd, db64, db_ref, db, k);
        free(fd);
    }
    free(x), free(w), free(b), free(dy), free(y), free(dx), free(dw), free(db), free(dx_ref), free(dw_ref);
    free(db_ref), free(x64), free(w64), free(b64), free(dy64), free(y64), free(dx64), free(dw64), free(db64);
}

// ---- pooling ------------------------------------------------------------------------------

typedef struct {
    const cb_pool_params *p;
    double *x, *g, *y;
} pool_ctx;

static double pool_loss(void *v)
{
    pool_ctx *c = v;
    cb_ref64_pool_forward(c->p, c->x, c->y, NULL);
    return dot64(c->y, c->g, (size_t)c->p->n * c->p->c * c->p->p * c->p->q);
}

// same = 1: TensorFlow SAME (output ceil(h/stride)); otherwise VALID
static void test_pool(const char *name, int n, int c, int h, int w, int r, int s, int stride, int same, int is_avg)
{
    cb_pool_params p = {.n = n, .c = c, .h = h, .w = w, .r = r, .s = s, .stride_h = stride, .stride_w = stride,
                        .is_avg = is_avg};
    if (same) {
        p.p = (h + stride - 1) / stride, p.q = (w + stride - 1) / stride;
        const int th = (p.p - 1) * stride + r - h, tw = (p.q - 1) * stride + s - w;
        p.pad_top = th > 0 ? th / 2 : 0, p.pad_left = tw > 0 ? tw / 2 : 0;
    } else {
        p.p = (h - r) / stride + 1, p.q = (w - s) / stride + 1;
    }
    const size_t xs = (size_t)n * c * h * w, ys = (size_t)n * c * p.p * p.q;
    float *x = FALLOC(xs), *dy = FALLOC(ys), *y = FALLOC(ys), *dx = FALLOC(xs), *dx_ref = FALLOC(xs);
    double *x64 = DALLOC(xs), *dy64 = DALLOC(ys), *y64 = DALLOC(ys), *dx64 = DALLOC(xs), *fd = DALLOC(xs);
    int32_t *am64 = xcalloc(ys, sizeof(int32_t)), *am = xcalloc(ys, sizeof(int32_t));
    fill_pair(xs, x, x64), fill_pair(ys, dy, dy64);

    int32_t *amarg = is_avg ? NULL : am, *am64arg = is_avg ? NULL : am64;
    cb_ref64_pool_forward(&p, x64, y64, am64arg);
    cb_ref64_pool_backward(&p, x64, dy64, am64arg, dx64);
    poison(y, ys);
    memset(am, 0xff, ys * sizeof(int32_t));
    cb_ref_pool_forward(&p, x, y, amarg);
    check(name, "forward ref", nerr(y, y64, ys), TOL_F32);
    if (!is_avg) check(name, "argmax ref", memcmp(am, am64, ys * sizeof(int32_t)) ? 1.0 : 0.0, 0.0);
    poison(dx_ref, xs);
    cb_ref_pool_backward(&p, x, dy, amarg, dx_ref);
    check(name, "backward ref", nerr(dx_ref, dx64, xs), TOL_F32);
    poison(y, ys);
    memset(am, 0xff, ys * sizeof(int32_t));
    cb_cpu_pool_forward(&p, x, y, amarg);
    check(name, "forward cpu", nerr(y, y64, ys), TOL_F32);
    if (!is_avg) check(name, "argmax cpu", memcmp(am, am64, ys * sizeof(int32_t)) ? 1.0 : 0.0, 0.0);
    poison(dx, xs);
    cb_cpu_pool_backward(&p, x, dy, amarg, dx);
    check(name, "backward cpu", nerr(dx, dx64, xs), TOL_F32);
    if (!is_avg) { // argmax recomputed from x
        float *dx2 = FALLOC(xs);
        poison(dx2, xs);
        cb_ref_pool_backward(&p, x, dy, NULL, dx2);
        check(name, "backward ref no argmax", nerr(dx2, dx64, xs), TOL_F32);
        poison(dx2, xs);
        cb_cpu_pool_backward(&p, x, dy, NULL, dx2);
        check(name, "backward cpu no argmax", nerr(dx2, dx64, xs), TOL_F32);
        free(dx2);
    }
    pool_ctx ctx = {&p, x64, dy64, y64};
    fd_grad(pool_loss, &ctx, x64, xs, fd);
    check_grad(name, "dx", fd, dx64, dx_ref, dx, xs);
    free(x), free(dy), free(y), free(dx), free(dx_ref), free(x64), free(dy64), free(y64), free(dx64), free(fd);
    free(am64), free(am);
}

// max pool ties: the first maximum in window order (kh outer, kw inner) wins
static void test_pool_ties(void)
{
    cb_pool_params p = {.n = 1, .c = 1, .h = 4, .w = 4, .r = 2, .s = 2, .p = 2, .q = 2, .stride_h = 2, .stride_w = 2};
    float x[16];
    for (int i = 0; i < 16; i++) x[i] = 1.0f; // every window is all ties
    const int32_t want[4] = {0, 2, 8, 10};
    int32_t am[4];
    float y[4], dy[4] = {1, 2, 3, 4}, dx[16];
    int bad = 0;
    cb_ref_pool_forward(&p, x, y, am);
    bad += memcmp(am, want, sizeof want) != 0;
    cb_cpu_pool_forward(&p, x, y, am);
    bad += memcmp(am, want, sizeof want) != 0;
    cb_cpu_pool_backward(&p, x, dy, NULL, dx);
    bad += dx[0] != 1 || dx[1] != 0 || dx[2] != 2 || dx[10] != 4 || dx[15] != 0;
    check("pool max ties", "first max in window", bad, 0);
}

// cb_fast_div (src/cuda/fast_div.h), the GPU kernels' division by multiply and shift, against
// the / operator: every divisor kind (1, powers of two and their neighbours, random ones up to
// 2^31 - 1) at the edges of each quotient and at random dividends below 2^31
static void test_fast_div(void)
{
    long bad = 0, tried = 0;
    for (int j = 0; j < 3000; j++) {
        uint32_t d;
        if (j < 31 * 3) d = (uint32_t)((1u << (j / 3)) + (uint32_t)(j % 3) - 1u); // 2^k - 1, 2^k, 2^k + 1
        else {
            rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
            uint64_t r = rng_state * 0x2545F4914F6CDD1Dull;
            d = (uint32_t)((r >> 33) >> (r & 31)); // spread over magnitudes, below 2^31
        }
        if (d == 0 || d > 0x7fffffffu) continue;
        cb_fast_div f = cb_fast_div_make(d);
        uint32_t ns[8] = {0, d - 1, d, d + 1, 0x7fffffffu, 0x7fffffffu - 0x7fffffffu % d, 0x7fffffffu - 0x7fffffffu % d - 1,
                          (uint32_t)(urand() * 0.5 * 2147483647.0 + 1073741823.0)};
        for (int k = 0; k < 8; k++) {
            uint32_t n = ns[k];
            if (n > 0x7fffffffu) continue;
            bad += cb_fast_div_q(f, n) != n / d;
            tried++;
        }
        for (uint32_t q = 1; q < 1000 && (uint64_t)q * d < 0x7fffffffu; q = q * 3 + 1) {
            uint32_t n = q * d;
            bad += cb_fast_div_q(f, n) != q || cb_fast_div_q(f, n - 1) != q - 1;
            tried += 2;
        }
    }
    char what[64];
    snprintf(what, sizeof what, "%ld quotients", tried);
    check("fast_div", what, (double)bad, 0);
}

// ---- LRN ----------------------------------------------------------------------------------

typedef struct {
    const cb_lrn_params *p;
    double *x, *g, *y, *scale;
} lrn_ctx;

static double lrn_loss(void *v)
{
    lrn_ctx *c = v;
    cb_ref64_lrn_forward(c->p, c->x, c->y, c->scale);
    return dot64(c->y, c->g, (size_t)c->p->n * c->p->c * c->p->h * c->p->w);
}

static void test_lrn(const char *name, int n, int c, int h, int w, int size, float alpha, float beta, float k,
                     int fdcheck)
{
    const cb_lrn_params p = {n, c, h, w, size, alpha, beta, k};
    const size_t xs = (size_t)n * c * h * w;
    float *x = FALLOC(xs), *dy = FALLOC(xs), *y = FALLOC(xs), *sc = FALLOC(xs), *dx = FALLOC(xs), *dx_ref = FALLOC(xs);
    double *x64 = DALLOC(xs), *dy64 = DALLOC(xs), *y64 = DALLOC(xs), *sc64 = DALLOC(xs), *dx64 = DALLOC(xs);
    double *fd = DALLOC(xs);
    fill_pair(xs, x, x64), fill_pair(xs, dy, dy64);
    cb_ref64_lrn_forward(&p, x64, y64, sc64);
    cb_ref64_lrn_backward(&p, x64, y64, sc64, dy64, dx64);
    poison(y, xs), poison(sc, xs);
    cb_ref_lrn_forward(&p, x, y, sc);
    check(name, "forward y ref", nerr(y, y64, xs), TOL_F32);
    check(name, "forward scale ref", nerr(sc, sc64, xs), TOL_F32);
    poison(dx_ref, xs);
    cb_ref_lrn_backward(&p, x, y, sc, dy, dx_ref);
    check(name, "backward ref", nerr(dx_ref, dx64, xs), TOL_F32);
    poison(y, xs), poison(sc, xs);
    cb_cpu_lrn_forward(&p, x, y, sc);
    check(name, "forward y cpu", nerr(y, y64, xs), TOL_F32);
    check(name, "forward scale cpu", nerr(sc, sc64, xs), TOL_F32);
    poison(dx, xs);
    cb_cpu_lrn_backward(&p, x, y, sc, dy, dx);
    check(name, "backward cpu", nerr(dx, dx64, xs), TOL_F32);
    if (fdcheck) {
        lrn_ctx ctx = {&p, x64, dy64, DALLOC(xs), DALLOC(xs)};
        fd_grad(lrn_loss, &ctx, x64, xs, fd);
        check_grad(name, "dx", fd, dx64, dx_ref, dx, xs);
        free(ctx.y), free(ctx.scale);
    }
    free(x), free(dy), free(y), free(sc), free(dx), free(dx_ref), free(x64), free(dy64), free(y64), free(sc64);
    free(dx64), free(fd);
}

// ---- batch normalisation ------------------------------------------------------------------

typedef struct {
    const cb_bn_params *p;
    double *x, *gamma, *beta, *g, *y;
} bn_ctx;

static double bn_loss(void *v)
{
    bn_ctx *c = v;
    cb_ref64_bn_forward_train(c->p, c->x, c->gamma, c->beta, c->y, NULL, NULL, NULL, NULL, 0.0);
    return dot64(c->y, c->g, (size_t)c->p->n * c->p->c * c->p->h * c->p->w);
}

static void test_bn(const char *name, int n, int c, int h, int w, double shift, int fdcheck)
{
    const cb_bn_params p = {n, c, h, w, 1e-5f};
    const size_t xs = (size_t)n * c * h * w;
    const float mom = 0.1f;
    float *x = FALLOC(xs), *dy = FALLOC(xs), *y = FALLOC(xs), *dx = FALLOC(xs), *dx_ref = FALLOC(xs);
    double *x64 = DALLOC(xs), *dy64 = DALLOC(xs), *y64 = DALLOC(xs), *yi64 = DALLOC(xs), *dx64 = DALLOC(xs);
    float *ga = FALLOC(c), *be = FALLOC(c), *mean = FALLOC(c), *is = FALLOC(c), *rm = FALLOC(c), *rv = FALLOC(c);
    float *dga = FALLOC(c), *dbe = FALLOC(c), *dga_ref = FALLOC(c), *dbe_ref = FALLOC(c);
    double *ga64 = DALLOC(c), *be64 = DALLOC(c), *mean64 = DALLOC(c), *is64 = DALLOC(c), *rm64 = DALLOC(c);
    double *rv64 = DALLOC(c), *dga64 = DALLOC(c), *dbe64 = DALLOC(c), *rm0 = DALLOC(c), *rv0 = DALLOC(c);
    float *rmf0 = FALLOC(c), *rvf0 = FALLOC(c);
    fill_pair(xs, x, x64), fill_pair(xs, dy, dy64), fill_pair(c, ga, ga64), fill_pair(c, be, be64);
    fill_pair(c, rmf0, rm0), fill_pair(c, rvf0, rv0);
    for (size_t i = 0; i < xs; i++) x[i] += (float)shift, x64[i] = x[i]; // a mean far from 0
    for (int i = 0; i < c; i++) rvf0[i] = fabsf(rvf0[i]), rv0[i] = rvf0[i];

    memcpy(rm64, rm0, c * sizeof(double)), memcpy(rv64, rv0, c * sizeof(double));
    cb_ref64_bn_forward_train(&p, x64, ga64, be64, y64, mean64, is64, rm64, rv64, mom);
    cb_ref64_bn_backward(&p, x64, ga64, mean64, is64, dy64, dx64, dga64, dbe64);
    for (int impl = 0; impl < 2; impl++) {
        const char *tag = impl ? "cpu" : "ref";
        char what[64];
        float *dxo = impl ? dx : dx_ref, *dgo = impl ? dga : dga_ref, *dbo = impl ? dbe : dbe_ref;
        memcpy(rm, rmf0, c * sizeof(float)), memcpy(rv, rvf0, c * sizeof(float));
        poison(y, xs), poison(mean, c), poison(is, c);
        (impl ? cb_cpu_bn_forward_train : cb_ref_bn_forward_train)(&p, x, ga, be, y, mean, is, rm, rv, mom);
        snprintf(what, sizeof what, "train y %s", tag);
        check(name, what, nerr(y, y64, xs), TOL_F32);
        snprintf(what, sizeof what, "train mean,invstd %s", tag);
        check(name, what, nerr(mean, mean64, c) + nerr(is, is64, c), TOL_F32);
        snprintf(what, sizeof what, "running mean,var %s", tag);
        check(name, what, nerr(rm, rm64, c) + nerr(rv, rv64, c), TOL_F32);
        poison(dxo, xs), poison(dgo, c), poison(dbo, c);
        (impl ? cb_cpu_bn_backward : cb_ref_bn_backward)(&p, x, ga, mean, is, dy, dxo, dgo, dbo);
        snprintf(what, sizeof what, "backward dx %s", tag);
        check(name, what, nerr(dxo, dx64, xs), TOL_F32);
        snprintf(what, sizeof what, "backward dgamma,dbeta %s", tag);
        check(name, what, nerr(dgo, dga64, c) + nerr(dbo, dbe64, c), TOL_F32);
        // inference with the updated running statistics
        cb_ref64_bn_forward_infer(&p, x64, ga64, be64, yi64, rm64, rv64);
        poison(y, xs);
        (impl ? cb_cpu_bn_forward_infer : cb_ref_bn_forward_infer)(&p, x, ga, be, y, rm, rv);
        snprintf(what, sizeof what, "infer y %s", tag);
        check(name, what, nerr(y, yi64, xs), TOL_F32);
    }
    if (fdcheck) {
        double *fd = DALLOC(xs);
        bn_ctx ctx = {&p, x64, ga64, be64, dy64, y64};
        fd_grad(bn_loss, &ctx, x64, xs, fd);
        check_grad(name, "dx", fd, dx64, dx_ref, dx, xs);
        fd_grad(bn_loss, &ctx, ga64, c, fd);
        check_grad(name, "dgamma", fd, dga64, dga_ref, dga, c);
        fd_grad(bn_loss, &ctx, be64, c, fd);
        check_grad(name, "dbeta", fd, dbe64, dbe_ref, dbe, c);
        free(fd);
    }
    free(x), free(dy), free(y), free(dx), free(dx_ref), free(x64), free(dy64), free(y64), free(yi64), free(dx64);
    free(ga), free(be), free(mean), free(is), free(rm), free(rv), free(dga), free(dbe), free(dga_ref), free(dbe_ref);
    free(ga64), free(be64), free(mean64), free(is64), free(rm64), free(rv64), free(dga64), free(dbe64);
    free(rm0), free(rv0), free(rmf0), free(rvf0);
}

// ---- per channel: SE product, layer scale, LayerNorm over channels ---------------------------

typedef struct {
    int n, c, hw, bhw;
    double *a, *b, *w, *g, *beta, *dy, *y;
} ch_ctx;

static double mul_loss(void *v)
{
    ch_ctx *t = v;
    cb_ref64_mul_forward(t->n, t->c, t->hw, t->bhw, t->a, t->b, t->y);
    return dot64(t->y, t->dy, (size_t)t->n * t->c * t->hw);
}

static double scale_loss(void *v)
{
    ch_ctx *t = v;
    cb_ref64_scale_forward(t->n, t->c, t->hw, t->a, t->w, t->y);
    return dot64(t->y, t->dy, (size_t)t->n * t->c * t->hw);
}

static double ln_loss(void *v)
{
    ch_ctx *t = v;
    cb_ref64_layernorm_forward(t->n, t->c, t->hw, 1e-5, t->a, t->g, t->beta, t->y);
    return dot64(t->y, t->dy, (size_t)t->n * t->c * t->hw);
}

// the float kernels (which both CPU backends run) against the float64 ones, and those against
// central differences of sum(y * dy); bhw 1 broadcasts the product's second operand
static void test_channel(const char *name, int n, int c, int hw, int bhw, double shift)
{
    const size_t xs = (size_t)n * c * hw, bs = (size_t)n * c * bhw;
    float *a = FALLOC(xs), *b = FALLOC(bs), *w = FALLOC(c), *g = FALLOC(c), *be = FALLOC(c), *dy = FALLOC(xs);
    float *y = FALLOC(xs), *da = FALLOC(xs), *db = FALLOC(bs), *dw = FALLOC(c), *dg = FALLOC(c), *dbe = FALLOC(c);
    double *a64 = DALLOC(xs), *b64 = DALLOC(bs), *w64 = DALLOC(c), *g64 = DALLOC(c), *be64 = DALLOC(c);
    double *dy64 = DALLOC(xs), *y64 = DALLOC(xs), *da64 = DALLOC(xs), *db64 = DALLOC(bs), *dw64 = DALLOC(c);
    double *dg64 = DALLOC(c), *dbe64 = DALLOC(c), *fd = DALLOC(xs > bs ? xs : bs);
    fill_pair(xs, a, a64), fill_pair(bs, b, b64), fill_pair(c, w, w64), fill_pair(c, g, g64), fill_pair(c, be, be64);
    fill_pair(xs, dy, dy64);
    for (size_t i = 0; i < xs; i++) a[i] += (float)shift, a64[i] = a[i]; // LayerNorm: a mean far from 0
    ch_ctx t = {n, c, hw, bhw, a64, b64, w64, g64, be64, dy64, y64};

    // product: forward, d/da = dy * b (the forward kernel), d/db = dy * a or its pixel sums
    cb_ref64_mul_forward(n, c, hw, bhw, a64, b64, y64);
    poison(y, xs);
    cb_ref_mul_forward(n, c, hw, bhw, a, b, y);
    check(name, "mul forward", nerr(y, y64, xs), TOL_F32);
    cb_ref64_mul_forward(n, c, hw, bhw, dy64, b64, da64);
    cb_ref_mul_forward(n, c, hw, bhw, dy, b, da);
    if (bhw == 1) cb_ref64_mul_backward_bcast(n, c, hw, dy64, a64, db64), cb_ref_mul_backward_bcast(n, c, hw, dy, a, db);
    else cb_ref64_mul_forward(n, c, hw, hw, dy64, a64, db64), cb_ref_mul_forward(n, c, hw, hw, dy, a, db);
    fd_grad(mul_loss, &t, a64, xs, fd);
    check_grad(name, "mul da", fd, da64, da, NULL, xs);
    fd_grad(mul_loss, &t, b64, bs, fd);
    check_grad(name, "mul db", fd, db64, db, NULL, bs);

    // layer scale
    cb_ref64_scale_forward(n, c, hw, a64, w64, y64);
    poison(y, xs);
    cb_ref_scale_forward(n, c, hw, a, w, y);
    check(name, "scale forward", nerr(y, y64, xs), TOL_F32);
    cb_ref64_scale_forward(n, c, hw, dy64, w64, da64);
    cb_ref_scale_forward(n, c, hw, dy, w, da);
    cb_ref64_scale_backward_filter(n, c, hw, a64, dy64, dw64);
    poison(dw, c);
    cb_ref_scale_backward_filter(n, c, hw, a, dy, dw);
    fd_grad(scale_loss, &t, a64, xs, fd);
    check_grad(name, "scale dx", fd, da64, da, NULL, xs);
    fd_grad(scale_loss, &t, w64, c, fd);
    check_grad(name, "scale dw", fd, dw64, dw, NULL, c);

    // LayerNorm over channels
    cb_ref64_layernorm_forward(n, c, hw, 1e-5, a64, g64, be64, y64);
    poison(y, xs);
    cb_ref_layernorm_forward(n, c, hw, 1e-5, a, g, be, y);
    check(name, "layernorm forward", nerr(y, y64, xs), TOL_F32);
    cb_ref64_layernorm_backward(n, c, hw, 1e-5, a64, g64, dy64, da64, dg64, dbe64);
    poison(da, xs), poison(dg, c), poison(dbe, c);
    cb_ref_layernorm_backward(n, c, hw, 1e-5, a, g, dy, da, dg, dbe);
    check(name, "layernorm backward dx", nerr(da, da64, xs), TOL_F32);
    fd_grad(ln_loss, &t, a64, xs, fd);
    check_grad(name, "layernorm dx", fd, da64, da, NULL, xs);
    fd_grad(ln_loss, &t, g64, c, fd);
    check_grad(name, "layernorm dgamma", fd, dg64, dg, NULL, c);
    fd_grad(ln_loss, &t, be64, c, fd);
    check_grad(name, "layernorm dbeta", fd, dbe64, dbe, NULL, c);

    free(a), free(b), free(w), free(g), free(be), free(dy), free(y), free(da), free(db), free(dw), free(dg), free(dbe);
    free(a64), free(b64), free(w64), free(g64), free(be64), free(dy64), free(y64), free(da64), free(db64), free(dw64);
    free(dg64), free(dbe64), free(fd);
}

// ---- elementwise --------------------------------------------------------------------------

typedef struct {
    size_t n;
    double *x, *g;
    const float *mask; // dropout only
} ew_ctx;

static cb_act loss_act; // the activation act_loss differentiates
static double act_loss(void *v)
{
    ew_ctx *c = v;
    double s = 0.0;
    for (size_t i = 0; i < c->n; i++) s += cb_act_fwd_f64(loss_act, c->x[i]) * c->g[i];
    return s;
}

static double dropout_loss(void *v)
{
    ew_ctx *c = v;
    double s = 0.0;
    for (size_t i = 0; i < c->n; i++) s += c->x[i] * (double)c->mask[i] * c->g[i];
    return s;
}

// Every activation function (src/core/act.h): the CPU kernels against the float64 reference,
// and the reference's gradient against finite differences of its forward. Inputs in [-4, 4], off
// the kinks (0, +-3, 6) by more than the difference step, so every piece of every function is met.
#define TOL_ACT 2e-6 // fp32 evaluation of exp / erf against float64
static void test_activations(void)
{
    const size_t n = 1000;
    float *x = FALLOC(n), *dy = FALLOC(n), *y = FALLOC(n), *dx = FALLOC(n), *buf = FALLOC(n), *xs = FALLOC(n);
    double *x64 = DALLOC(n), *dy64 = DALLOC(n), *y64 = DALLOC(n), *dx64 = DALLOC(n), *fd = DALLOC(n);
    fill_pair(n, x, x64), fill_pair(n, dy, dy64);
    for (size_t i = 0; i < n; i++) {
        x[i] *= 4.0f;
        static const float kinks[] = {-3.0f, 0.0f, 3.0f, 6.0f};
        for (int k = 0; k < 4; k++)
            if (fabsf(x[i] - kinks[k]) < 1e-3f) x[i] += 0.01f;
        x64[i] = x[i];
    }
    for (int ai = CB_ACT_NONE + 1; ai < CB_ACT_COUNT; ai++) {
        cb_act a = (cb_act)ai;
        char name[32];
        snprintf(name, sizeof name, "act %s", cb_act_name(a));
        for (size_t i = 0; i < n; i++) {
            y64[i] = cb_act_fwd_f64(a, x64[i]);
            dx64[i] = cb_act_bwd_f64(a, x64[i], y64[i], dy64[i]);
        }
        poison(y, n), poison(xs, n);
        cb_cpu_act_forward(n, a, x, xs, y);
        check(name, "forward cpu", nerr(y, y64, n), TOL_ACT);
        check(name, "input saved", memcmp(xs, x, n * sizeof(float)) ? 1.0 : 0.0, 0.0);
        memcpy(buf, x, n * sizeof(float));
        cb_cpu_act_forward(n, a, buf, NULL, buf);
        check(name, "forward cpu in place", nerr(buf, y64, n), TOL_ACT);
        const float *xin = cb_act_needs_input(a) ? x : NULL; // what the engine keeps
        poison(dx, n);
        cb_cpu_act_backward(n, a, xin, y, dy, dx);
        check(name, "backward cpu", nerr(dx, dx64, n), TOL_ACT);
        memcpy(buf, dy, n * sizeof(float));
        cb_cpu_act_backward(n, a, xin, y, buf, buf);
        check(name, "backward cpu in place", nerr(buf, dx64, n), TOL_ACT);
        ew_ctx ctx = {n, x64, dy64, NULL};
        loss_act = a;
        fd_grad(act_loss, &ctx, x64, n, fd);
        check(name, "dx fd float64 reference", nerr64(dx64, fd, n), TOL_GRAD64);
        check(name, "dx fd cpu", nerr(dx, fd, n), TOL_GRAD);
    }
    free(x), free(dy), free(y), free(dx), free(buf), free(xs), free(x64), free(dy64), free(y64), free(dx64), free(fd);
}

static void test_dropout(void)
{
    const char *name = "dropout";
    const size_t n = 20000;
    const float keep = 0.7f;
    float *x = FALLOC(n), *dy = FALLOC(n), *y = FALLOC(n), *dx = FALLOC(n), *mask = FALLOC(n), *mask2 = FALLOC(n);
    double *x64 = DALLOC(n), *dy64 = DALLOC(n), *fd = DALLOC(n);
    fill_pair(n, x, x64), fill_pair(n, dy, dy64);
    uint64_t s1 = 42, s2 = 42;
    poison(mask, n), poison(y, n);
    cb_cpu_dropout_forward(n, keep, &s1, x, mask, y);
    size_t kept = 0, badval = 0, bady = 0;
    for (size_t i = 0; i < n; i++) {
        kept += mask[i] != 0.0f;
        badval += !(mask[i] == 0.0f || mask[i] == 1.0f / keep);
        bady += y[i] != x[i] * mask[i];
    }
    check(name, "mask values 0 or 1/keep", (double)badval, 0.0);
    check(name, "forward y = x*mask", (double)bady, 0.0);
    // 20000 draws: the kept fraction has std 0.0032; 0.02 is over 6 sigma
    check(name, "kept fraction", fabs((double)kept / n - keep), 0.02);
    cb_cpu_dropout_forward(n, keep, &s2, x, mask2, y);
    check(name, "same seed same mask", memcmp(mask, mask2, n * sizeof(float)) ? 1.0 : 0.0, 0.0);
    check(name, "rng state advanced", s1 == 42 ? 1.0 : 0.0, 0.0);
    poison(dx, n);
    cb_cpu_dropout_backward(n, mask, dy, dx);
    ew_ctx ctx = {1000, x64, dy64, mask}; // FD over the first 1000 elements: the loss is separable
    fd_grad(dropout_loss, &ctx, x64, ctx.n, fd);
    check(name, "dx fd cpu (fixed mask)", nerr(dx, fd, ctx.n), TOL_GRAD);
    free(x), free(dy), free(y), free(dx), free(mask), free(mask2), free(x64), free(dy64), free(fd);
}

// ---- softmax and cross-entropy ------------------------------------------------------------

typedef struct {
    int n, k;
    double *x, *prob;
    const int32_t *labels;
} xent_ctx;

static double xent_loss(void *v)
{
    xent_ctx *c = v;
    cb_ref64_softmax_forward(c->n, c->k, c->x, c->prob);
    return cb_ref64_xent_forward(c->n, c->k, c->prob, c->labels);
}

static void test_softmax_xent(const char *name, int n, int k, double xscale)
{
    const size_t xs = (size_t)n * k;
    float *x = FALLOC(xs), *pr = FALLOC(xs), *dx = FALLOC(xs), *dx_ref = FALLOC(xs);
    double *x64 = DALLOC(xs), *pr64 = DALLOC(xs), *dx64 = DALLOC(xs), *fd = DALLOC(xs);
    int32_t *labels = xcalloc(n, sizeof(int32_t));
    fill_pair(xs, x, x64);
    for (size_t i = 0; i < xs; i++) x[i] = (float)(x[i] * xscale), x64[i] = x[i]; // large logits: stability
    for (int i = 0; i < n; i++) labels[i] = (int32_t)((urand() + 1.0) * 0.5 * k) % k;
    cb_ref64_softmax_forward(n, k, x64, pr64);
    const double loss64 = cb_ref64_xent_forward(n, k, pr64, labels);
    cb_ref64_xent_backward(n, k, pr64, labels, dx64);
    poison(pr, xs);
    cb_ref_softmax_forward(n, k, x, pr);
    check(name, "softmax ref", nerr(pr, pr64, xs), TOL_F32);
    const double loss = cb_ref_xent_forward(n, k, pr, labels);
    check(name, "xent loss ref", fabs(loss - loss64) / fabs(loss64), TOL_F32);
    poison(dx_ref, xs);
    cb_ref_xent_backward(n, k, pr, labels, dx_ref);
    check(name, "xent backward ref", nerr(dx_ref, dx64, xs), TOL_F32);
    poison(pr, xs);
    cb_cpu_softmax_forward(n, k, x, pr);
    check(name, "softmax cpu", nerr(pr, pr64, xs), TOL_F32);
    poison(dx, xs);
    cb_ref_xent_backward(n, k, pr, labels, dx); // the fast path reuses the reference criterion
    xent_ctx ctx = {n, k, x64, DALLOC(xs), labels};
    fd_grad(xent_loss, &ctx, x64, xs, fd);
    check_grad(name, "dlogits", fd, dx64, dx_ref, dx, xs);
    free(ctx.prob);
    free(x), free(pr), free(dx), free(dx_ref), free(x64), free(pr64), free(dx64), free(fd), free(labels);
}

// ---- SGD ----------------------------------------------------------------------------------

static void test_sgd(void)
{
    const size_t n = 777;
    const float lr = 0.01f, mom = 0.9f, wd = 5e-4f;
    float *w = FALLOC(n), *g = FALLOC(n), *v = FALLOC(n), *w2 = FALLOC(n);
    double *w64 = DALLOC(n), *g64 = DALLOC(n), *v64 = DALLOC(n), *w264 = DALLOC(n);
    fill_pair(n, w, w64), fill_pair(n, g, g64);
    memcpy(w2, w, n * sizeof(float)), memcpy(w264, w64, n * sizeof(double));
    for (int step = 0; step < 3; step++) { // v starts at 0: PyTorch's first step sets v = g'
        cb_cpu_sgd_update(n, lr, mom, wd, w, g, v);
        cb_cpu_sgd_update(n, lr, 0.0f, wd, w2, g, NULL);
        for (size_t i = 0; i < n; i++) {
            const double gp = g64[i] + (double)wd * w64[i];
            v64[i] = (double)mom * v64[i] + gp;
            w64[i] -= (double)lr * v64[i];
            w264[i] -= (double)lr * (g64[i] + (double)wd * w264[i]);
        }
    }
    check("sgd", "momentum w", nerr(w, w64, n), TOL_F32);
    check("sgd", "momentum v", nerr(v, v64, n), TOL_F32);
    check("sgd", "no momentum w", nerr(w2, w264, n), TOL_F32);
    free(w), free(g), free(v), free(w2), free(w64), free(g64), free(v64), free(w264);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); // one line at a time, also into a pipe
    test_conv_cases();

    test_fc("fc n1 c7 k5", 1, 7, 5, 1);
    test_fc("fc n4 c37 k13", 4, 37, 13, 1);
    test_fc("fc n16 c1000 k300", 16, 1000, 300, 0);

    test_pool("pool max 3x3 s2 valid", 2, 3, 13, 13, 3, 3, 2, 0, 0);       // AlexNet's overlapping pool
    test_pool("pool max 2x2 s2 same 7x9", 2, 5, 7, 9, 2, 2, 2, 1, 0);      // trailing pad 1
    test_pool("pool max 3x3 s1 same", 1, 3, 6, 5, 3, 3, 1, 1, 0);          // pads both sides
    test_pool("pool avg 3x3 s1 same", 2, 3, 6, 7, 3, 3, 1, 1, 1);          // padding out of the divisor
    test_pool("pool avg 3x3 s2 same 8x8", 2, 5, 8, 8, 3, 3, 2, 1, 1);      // pads 0 / 1
    test_pool("pool avg 2x3 s2 valid", 1, 13, 9, 10, 2, 3, 2, 0, 1);
    test_pool_ties();
    test_fast_div();

    test_lrn("lrn c5 size5 clipped", 2, 5, 3, 4, 5, 1.0f, 0.75f, 2.0f, 1);
    test_lrn("lrn c13 size3 beta0.6", 2, 13, 4, 3, 3, 0.5f, 0.6f, 1.0f, 1);
    test_lrn("lrn alexnet params", 2, 16, 5, 5, 5, 1e-4f, 0.75f, 2.0f, 1);
    test_lrn("lrn big", 2, 96, 27, 27, 5, 1e-4f, 0.75f, 2.0f, 0);

    test_bn("bn n2 c3 5x4", 2, 3, 5, 4, 0.0, 1);
    test_bn("bn n4 c5 3x3 shift3", 4, 5, 3, 3, 3.0, 1);
    test_bn("bn n1 c13 1x1 fc-like", 7, 13, 1, 1, 0.5, 1);
    test_bn("bn n8 c64 28x28", 8, 64, 28, 28, 1.0, 0);

    test_channel("channel n2 c5 4x3 se", 2, 5, 12, 1, 0.0);
    test_channel("channel n3 c8 3x3 same", 3, 8, 9, 9, 2.0);
    test_channel("channel n1 c13 1x1", 1, 13, 1, 1, 0.5); // ConvNeXt's head LayerNorm on a pooled tensor
    test_activations();
    test_dropout();
    test_softmax_xent("softmax xent n4 k10", 4, 10, 1.0);
    test_softmax_xent("softmax xent n3 k1000 big", 3, 1000, 30.0);
    test_sgd();

    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
