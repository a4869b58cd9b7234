// Runs src/storage/norm_fmt.cu's batch-norm kernels on the CPU through dev/emu/cuda_runtime.h and
// cuda_bf16.h, in the four storages (fp32 NCHW, fp32 NHWC, bf16 NCHW, bf16 NHWC), against a
// float64 reference on the same values (bf16-rounded for the bf16 storages): training forward
// with every activation fused (none, ReLU and the others: output, batch mean, inverse deviation,
// running statistics), inference forward, backward with the activation's gradient fused (input
// gradient, dgamma, dbeta) and without the input gradient. Shapes take every path: NHWC with 16-byte channel vectors and
// without, more than 256 channel vectors (two tiles), several row chunks; NCHW with pixel vectors
// and without (7x7), several chunks per channel. Inputs have a mean of 3 (the shifted sums must
// not lose the variance). Outputs start as NaN so an element left unwritten fails. Built and run
// by dev/norm_fmt_emu.sh; exits 1 when a check fails.
extern "C" {
#include "cpu/kernels.h"
}
#include NORM_FMT_SRC
#include "emu_check.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

static int failed, passed;

struct buffer { // 16-byte aligned, exactly `bytes` long (AddressSanitizer sees overruns), 0xff (NaN) filled
    void *p;
    explicit buffer(size_t bytes) : p(operator new(bytes ? bytes : 1, std::align_val_t(16))) { memset(p, 0xff, bytes); }
    ~buffer() { operator delete(p, std::align_val_t(16)); }
};

static size_t at(int fmt, const cb_bn_params &d, int n, int c, int i) { // i = y*w + x
    size_t hw = (size_t)d.h * d.w;
    return fmt & CB_FMT_NHWC ? ((size_t)n * hw + i) * d.c + c : ((size_t)n * d.c + c) * hw + i;
}
static float rnd(int fmt, float v) { return fmt & CB_FMT_BF16 ? __bfloat162float(__float2bfloat16_rn(v)) : v; }
static void put(int fmt, void *dst, size_t j, float v) {
    if (fmt & CB_FMT_BF16) ((__nv_bfloat16 *)dst)[j] = __float2bfloat16_rn(v);
    else ((float *)dst)[j] = v;
}
static float get(int fmt, const void *src, size_t j) {
    return fmt & CB_FMT_BF16 ? __bfloat162float(((const __nv_bfloat16 *)src)[j]) : ((const float *)src)[j];
}

static void check(const char *what, double err, double tol) {
    if (err <= tol) passed++;
    else failed++, printf("FAIL %s: err %.3g tol %.3g\n", what, err, tol);
}

static void run_case(int fmt, cb_bn_params d, cb_act act) {
    static const char *fmts[] = {"fp32 NCHW", "fp32 NHWC", "bf16 NCHW", "bf16 NHWC"};
    char name[160];
    snprintf(name, sizeof name, "%s n%d c%d %dx%d %s", fmts[fmt], d.n, d.c, d.h, d.w, cb_act_name(act));
    size_t hw = (size_t)d.h * d.w, m = (size_t)d.n * hw, t = m * d.c, es = fmt & CB_FMT_BF16 ? 2 : 4;
    // x and dy in the storage's flat order, as the storage holds them (rounded)
    std::vector<float> x(t), dy(t), gamma(d.c), beta(d.c);
    for (auto &v : x) v = rnd(fmt, 3.f + urand());
    for (auto &v : dy) v = rnd(fmt, urand());
    for (int c = 0; c < d.c; c++) gamma[c] = 1.f + 0.5f * urand(), beta[c] = urand();
    buffer bx(t * es), by(t * es), bdy(t * es), bdx(t * es), part(cb_fmt_bn_scratch(d.c) * 4);
    std::vector<float> mean(d.c, NAN), invstd(d.c, NAN), rmean(d.c, 0.f), rvar(d.c, 1.f), dgamma(d.c, NAN), dbeta(d.c, NAN);
    for (size_t j = 0; j < t; j++) put(fmt, bx.p, j, x[j]), put(fmt, bdy.p, j, dy[j]);
    cb_fmt_bn_forward_train(&d, fmt, bx.p, gamma.data(), beta.data(), by.p, mean.data(), invstd.data(), rmean.data(), rvar.data(), 0.1f,
                            act, (float *)part.p);
    // the float64 reference
    std::vector<double> mu(d.c, 0), var(d.c, 0);
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (size_t i = 0; i < hw; i++) mu[c] += x[at(fmt, d, n, c, (int)i)];
    for (int c = 0; c < d.c; c++) mu[c] /= (double)m;
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (size_t i = 0; i < hw; i++) {
                double e = x[at(fmt, d, n, c, (int)i)] - mu[c];
                var[c] += e * e;
            }
    std::vector<float> ref_y(t), got_y(t), ref_s(d.c), got_s(d.c);
    for (int c = 0; c < d.c; c++) var[c] /= (double)m;
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (size_t i = 0; i < hw; i++) {
                size_t j = at(fmt, d, n, c, (int)i);
                double v = (x[j] - mu[c]) / std::sqrt(var[c] + d.eps) * gamma[c] + beta[c];
                ref_y[j] = (float)cb_act_fwd_f64(act, v);
                got_y[j] = get(fmt, by.p, j);
            }
    double tol = fmt & CB_FMT_BF16 ? 4e-3 : 2e-6, stol = 2e-6;
    char what[256];
    snprintf(what, sizeof what, "%s forward", name);
    check(what, nerr(got_y, ref_y), tol);
    { // the output made again from x and the saved statistics (cb_fmt_bn_again, --recompute): the forward's
        // within a rounding of its coefficients
        buffer ba(t * es);
        memset(ba.p, 0xff, t * es);
        cb_fmt_bn_again(&d, fmt, bx.p, gamma.data(), beta.data(), mean.data(), invstd.data(), ba.p, act, (float *)part.p);
        std::vector<float> got_a(t);
        for (size_t j = 0; j < t; j++) got_a[j] = get(fmt, ba.p, j);
        snprintf(what, sizeof what, "%s made again", name);
        check(what, nerr(got_a, ref_y), tol);
        snprintf(what, sizeof what, "%s made again, against the forward's", name);
        check(what, nerr(got_a, got_y), fmt & CB_FMT_BF16 ? 4e-3 : 1e-6);
    }
    { // with a residual added before the activation (CB_FUSION_BN_ADD), training and inference
        std::vector<float> r(t), ref_r(t), got_r(t), rm2(d.c, 0.f), rv2(d.c, 1.f), mean2(d.c), inv2(d.c);
        buffer bres(t * es), by2(t * es);
        for (auto &v : r) v = rnd(fmt, urand());
        for (size_t j = 0; j < t; j++) put(fmt, bres.p, j, r[j]);
        cb_fmt_bn_forward_train_res(&d, fmt, bx.p, gamma.data(), beta.data(), by2.p, mean2.data(), inv2.data(), rm2.data(), rv2.data(),
                                    0.1f, act, (float *)part.p, bres.p);
        for (int n = 0; n < d.n; n++)
            for (int c = 0; c < d.c; c++)
                for (size_t i = 0; i < hw; i++) {
                    size_t j = at(fmt, d, n, c, (int)i);
                    double v = (x[j] - mu[c]) / std::sqrt(var[c] + d.eps) * gamma[c] + beta[c] + r[j];
                    ref_r[j] = (float)cb_act_fwd_f64(act, v), got_r[j] = get(fmt, by2.p, j);
                }
        snprintf(what, sizeof what, "%s forward + residual", name);
        check(what, nerr(got_r, ref_r), tol);
        // inference on running statistics (rm2, rv2 as just updated): y = act((x - rm) / sqrt(rv + eps) g + b + r)
        memset(by2.p, 0xff, t * es);
        cb_fmt_bn_forward_infer_res(&d, fmt, bx.p, gamma.data(), beta.data(), rm2.data(), rv2.data(), by2.p, act, (float *)part.p, bres.p);
        for (int n = 0; n < d.n; n++)
            for (int c = 0; c < d.c; c++)
                for (size_t i = 0; i < hw; i++) {
                    size_t j = at(fmt, d, n, c, (int)i);
                    double v = (x[j] - rm2[c]) / std::sqrt((double)rv2[c] + d.eps) * gamma[c] + beta[c] + r[j];
                    ref_r[j] = (float)cb_act_fwd_f64(act, v), got_r[j] = get(fmt, by2.p, j);
                }
        snprintf(what, sizeof what, "%s inference + residual", name);
        check(what, nerr(got_r, ref_r), tol);
    }
    for (int c = 0; c < d.c; c++) ref_s[c] = (float)mu[c], got_s[c] = mean[c];
    snprintf(what, sizeof what, "%s batch mean", name);
    check(what, nerr(got_s, ref_s), stol);
    for (int c = 0; c < d.c; c++) ref_s[c] = (float)(1 / std::sqrt(var[c] + d.eps)), got_s[c] = invstd[c];
    snprintf(what, sizeof what, "%s inverse deviation", name);
    check(what, nerr(got_s, ref_s), 1e-5);
    for (int c = 0; c < d.c; c++) ref_s[c] = (float)(0.1 * mu[c]), got_s[c] = rmean[c];
    snprintf(what, sizeof what, "%s running mean", name);
    check(what, nerr(got_s, ref_s), stol);
    for (int c = 0; c < d.c; c++) ref_s[c] = (float)(0.9 + 0.1 * var[c] * m / (m - 1)), got_s[c] = rvar[c];
    snprintf(what, sizeof what, "%s running variance", name);
    check(what, nerr(got_s, ref_s), 1e-5);

    // backward with the kernel's mean and invstd: the activation's gradient at its input z
    std::vector<double> s1(d.c, 0), s2(d.c, 0);
    auto g_of = [&](size_t j) {
        int c = (int)(fmt & CB_FMT_NHWC ? j % d.c : j / hw % d.c);
        double z = (x[j] - mean[c]) * invstd[c] * gamma[c] + beta[c];
        return cb_act_bwd_f64(act, z, cb_act_fwd_f64(act, z), (double)dy[j]);
    };
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (size_t i = 0; i < hw; i++) {
                size_t j = at(fmt, d, n, c, (int)i);
                s1[c] += g_of(j), s2[c] += g_of(j) * (x[j] - mean[c]) * invstd[c];
            }
    std::vector<float> ref_dx(t), got_dx(t), ref_dg(d.c), ref_db(d.c);
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (size_t i = 0; i < hw; i++) {
                size_t j = at(fmt, d, n, c, (int)i);
                double xh = (x[j] - mean[c]) * invstd[c];
                ref_dx[j] = (float)(gamma[c] * invstd[c] * (g_of(j) - s1[c] / m - xh * s2[c] / m));
            }
    for (int c = 0; c < d.c; c++) ref_dg[c] = (float)s2[c], ref_db[c] = (float)s1[c];
    // a backward call's dx (with_dx), dgamma and dbeta against ref_dx, ref_dg, ref_db
    auto check_grads = [&](const char *kind, bool with_dx) {
        if (with_dx) {
            for (size_t j = 0; j < t; j++) got_dx[j] = get(fmt, bdx.p, j);
            snprintf(what, sizeof what, "%s %s dx", name, kind);
            check(what, nerr(got_dx, ref_dx), fmt & CB_FMT_BF16 ? 1e-2 : 1e-5);
        }
        snprintf(what, sizeof what, "%s %s dgamma%s", name, kind, with_dx ? "" : " (no dx)");
        check(what, nerr(dgamma, ref_dg), 1e-5);
        snprintf(what, sizeof what, "%s %s dbeta%s", name, kind, with_dx ? "" : " (no dx)");
        check(what, nerr(dbeta, ref_db), 1e-5);
    };
    for (int with_dx = 1; with_dx >= 0; with_dx--) {
        std::fill(dgamma.begin(), dgamma.end(), NAN), std::fill(dbeta.begin(), dbeta.end(), NAN);
        memset(bdx.p, 0xff, t * es);
        for (size_t j = 0; j < t; j++) put(fmt, bdy.p, j, dy[j]); // a run with dx may leave dz in dy
        cb_fmt_bn_backward(&d, fmt, bx.p, gamma.data(), beta.data(), mean.data(), invstd.data(), act, bdy.p, with_dx ? bdx.p : nullptr,
                           dgamma.data(), dbeta.data(), (float *)part.p);
        check_grads("backward", with_dx);
        if (with_dx && (act == CB_ACT_SIGMOID || act == CB_ACT_SILU || act == CB_ACT_GELU)) { // dz left in dy
            std::vector<float> ref_dz(t), got_dz(t);
            for (size_t j = 0; j < t; j++) ref_dz[j] = (float)g_of(j), got_dz[j] = get(fmt, bdy.p, j);
            snprintf(what, sizeof what, "%s backward dz over dy", name);
            check(what, nerr(got_dz, ref_dz), fmt & CB_FMT_BF16 ? 1e-2 : 1e-5);
        }
    }

    if (act == CB_ACT_NONE) { // a residual block's last batch norm with the sum's ReLU (output mk) taken in its first pass
        std::vector<float> mk(t), g(t), ref_g(t), got_g(t);
        std::vector<double> q1(d.c, 0), q2(d.c, 0);
        buffer bm(t * es);
        for (size_t j = 0; j < t; j++) {
            float v = rnd(fmt, 1.5f * urand() - 0.5f);
            mk[j] = v > 0 ? v : 0.f;
            put(fmt, bm.p, j, mk[j]);
            g[j] = mk[j] > 0 ? dy[j] : 0.f;
        }
        for (int n = 0; n < d.n; n++)
            for (int c = 0; c < d.c; c++)
                for (size_t i = 0; i < hw; i++) {
                    size_t j = at(fmt, d, n, c, (int)i);
                    q1[c] += g[j], q2[c] += g[j] * (x[j] - mean[c]) * invstd[c];
                }
        for (int n = 0; n < d.n; n++)
            for (int c = 0; c < d.c; c++)
                for (size_t i = 0; i < hw; i++) {
                    size_t j = at(fmt, d, n, c, (int)i);
                    double xh = (x[j] - mean[c]) * invstd[c];
                    ref_dx[j] = (float)(gamma[c] * invstd[c] * (g[j] - q1[c] / m - xh * q2[c] / m));
                }
        for (int c = 0; c < d.c; c++) ref_dg[c] = (float)q2[c], ref_db[c] = (float)q1[c];
        for (int with_dx = 1; with_dx >= 0; with_dx--) {
            std::fill(dgamma.begin(), dgamma.end(), NAN), std::fill(dbeta.begin(), dbeta.end(), NAN);
            memset(bdx.p, 0xff, t * es);
            for (size_t j = 0; j < t; j++) put(fmt, bdy.p, j, dy[j]);
            cb_fmt_bn_backward_relu_mask(&d, fmt, bx.p, gamma.data(), mean.data(), invstd.data(), bm.p, bdy.p, with_dx ? bdx.p : nullptr,
                                         dgamma.data(), dbeta.data(), (float *)part.p);
            for (size_t j = 0; j < t; j++) got_g[j] = get(fmt, bdy.p, j);
            snprintf(what, sizeof what, "%s relu-mask backward: the ReLU's gradient over dy%s", name, with_dx ? "" : " (no dx)");
            check(what, got_g == g ? 0 : 1, 0); // (exact: dy or 0)
            check_grads("relu-mask backward", with_dx);
        }
    }

    // inference with the running statistics
    memset(by.p, 0xff, t * es);
    cb_fmt_bn_forward_infer(&d, fmt, bx.p, gamma.data(), beta.data(), rmean.data(), rvar.data(), by.p, act, (float *)part.p);
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (size_t i = 0; i < hw; i++) {
                size_t j = at(fmt, d, n, c, (int)i);
                double v = (x[j] - rmean[c]) / std::sqrt((double)rvar[c] + d.eps) * gamma[c] + beta[c];
                ref_y[j] = (float)cb_act_fwd_f64(act, v);
                got_y[j] = get(fmt, by.p, j);
            }
    snprintf(what, sizeof what, "%s inference", name);
    check(what, nerr(got_y, ref_y), tol);
}

int main() {
    setvbuf(stdout, nullptr, _IOLBF, 0); // a line a case as it ends (the run takes many minutes)
    const cb_bn_params shapes[] = {
        {2, 13, 5, 6, 1e-3f},  // C odd: NHWC rows of 8 (bf16) or 4 (fp32) pixels, NCHW h*w 30
        {4, 24, 8, 8, 1e-5f},  // bf16 NHWC vectors of 8, fp32 of 4; NCHW vectors; several NHWC chunks
        {1, 300, 3, 5, 1e-5f}, // fp32 NHWC 75 vectors of 4; bf16 rows of 2 pixels, 75 vectors
        {2, 3, 32, 32, 1e-5f}, // NCHW: two chunks per channel
        {3, 16, 7, 7, 1e-7f},  // NCHW 7x7: scalar; eps under cuDNN's minimum
        // NHWC channels not a multiple of the vector (bn_run's periodic view): rows of lcm(C, V)
        // elements, the tensor ending within the last one
        {3, 33, 5, 7, 1e-5f},  // bf16 rows of 8 pixels, 105 pixels: the last row partial; fp32 rows of 4
        {1, 10, 3, 3, 1e-5f},  // fp32 rows of 2 pixels (C 2 mod 4), 9 pixels; bf16 4 pixels
        {2, 323, 3, 3, 1e-5f}, // bf16 rows of 323 vectors (two tiles), 18 pixels
        // the periodic view in several row chunks: the partial sums (chunk, tile, C) of each block
        {2, 33, 16, 16, 1e-5f}, // 512 pixels: bf16 64 rows of 8 pixels, 8 chunks
        {2, 323, 8, 8, 1e-5f},  // 128 pixels: bf16 16 rows in two tiles, 2 chunks
    };
    // every activation on the first shape; on the others none, ReLU (its own kernel path) and one
    // of the rest (the runtime switch), in turn: the emulator takes about a minute a case.
    // CB_EMU_ALL_ACTS=1: every activation on every shape.
    // CB_EMU_SHAPES=1-2,5-9: those shapes alone (ranges of indices into shapes[], or single ones)
    bool all = getenv("CB_EMU_ALL_ACTS") && !strcmp(getenv("CB_EMU_ALL_ACTS"), "1");
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    bool take[sizeof shapes / sizeof shapes[0]];
    for (int k = 0; k < nshapes; k++) take[k] = !getenv("CB_EMU_SHAPES");
    for (const char *e = getenv("CB_EMU_SHAPES"); e && *e;) {
        int k0, k1, used = 0;
        if (sscanf(e, "%d-%d%n", &k0, &k1, &used) != 2) {
            if (sscanf(e, "%d%n", &k0, &used) != 1) {
                fprintf(stderr, "CB_EMU_SHAPES: bad list '%s' (ranges a-b or indices, comma-separated)\n", getenv("CB_EMU_SHAPES"));
                return 2;
            }
            k1 = k0;
        }
        for (int k = k0 < 0 ? 0 : k0; k <= k1 && k < nshapes; k++) take[k] = true;
        e += used;
        if (*e == ',') e++;
    }
    // CB_EMU_FMTS=13: those formats alone (digits: 0 fp32 NCHW, 1 fp32 NHWC, 2 bf16 NCHW, 3 bf16 NHWC)
    const char *fl = getenv("CB_EMU_FMTS");
    for (int fmt = 0; fmt < 4; fmt++)
        for (int k = 0; k < nshapes && (!fl || strchr(fl, '0' + fmt)); k++)
            for (int a = 0; take[k] && a < CB_ACT_COUNT; a++) {
                int other = CB_ACT_RELU + 1 + (fmt * 5 + k) % (CB_ACT_COUNT - 2);
                if (all || k == 0 || a == CB_ACT_NONE || a == CB_ACT_RELU || a == other) run_case(fmt, shapes[k], (cb_act)a);
            }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
