// Runs src/storage/chan_fmt.cu's kernels (SE product, layer scale, LayerNorm over channels) on the
// CPU through dev/emu/cuda_runtime.h and cuda_bf16.h, in the four storages, against the reference
// loops (src/cpu/ref.c) on the same values (bf16-rounded for the bf16 storages). Outputs start as
// NaN so an element left unwritten fails. Built and run by dev/chan_fmt_emu.sh; exits 1 when a
// check fails.
extern "C" {
#include "cpu/kernels.h"
}
#include CHAN_FMT_SRC
#include "emu_check.h"
#include "emu_storage.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

static int failed, passed;
static void check(const char *what, double err, double tol) {
    if (err <= tol) passed++;
    else failed++, printf("FAIL %s: err %.3g tol %.3g\n", what, err, tol);
}

static std::vector<float> rand_vec(int fmt, size_t n, float off) {
    std::vector<float> v(n);
    for (auto &x : v) x = rnd(fmt, off + urand());
    return v;
}

static void run(int fmt, dims d) {
    static const char *fmts[] = {"fp32 NCHW", "fp32 NHWC", "bf16 NCHW", "bf16 NHWC"};
    char name[128], what[200];
    snprintf(name, sizeof name, "%s n%d c%d %dx%d", fmts[fmt], d.n, d.c, d.h, d.w);
    size_t t = d.count(), es = fmt & CB_FMT_BF16 ? 2 : 4, hw = d.hw();
    dims s1 = {d.n, d.c, 1, 1};
    double tol = fmt & CB_FMT_BF16 ? 8e-3 : 1e-6;
    std::vector<float> a = rand_vec(fmt, t, 0.f), b = rand_vec(fmt, t, 0.f), sb = rand_vec(fmt, (size_t)d.n * d.c, 0.f), dy = rand_vec(fmt, t, 0.f);
    std::vector<float> w(d.c), bias(d.c);
    for (int k = 0; k < d.c; k++) w[k] = 1.f + 0.5f * urand(), bias[k] = urand();
    buffer ba(t * es), bb(t * es), bs(d.n * d.c * es), by(t * es), bdy(t * es), bdb(d.n * d.c * es);
    buffer part(cb_fmt_layernorm_scratch(d.c) * 4), stats((size_t)d.n * hw * 8);
    to_storage(fmt, d, a, ba.p), to_storage(fmt, d, b, bb.p), to_storage(fmt, s1, sb, bs.p), to_storage(fmt, d, dy, bdy.p);
    std::vector<float> ref(t), ref_c(d.c), ref_c2(d.c), got_c(d.c, NAN), got_c2(d.c, NAN);

    cb_fmt_mul_forward(fmt, d.n, d.c, hw, 0, ba.p, bb.p, by.p);
    cb_ref_mul_forward(d.n, d.c, (int)hw, (int)hw, a.data(), b.data(), ref.data());
    snprintf(what, sizeof what, "%s mul", name);
    check(what, nerr(from_storage(fmt, d, by.p), ref), tol);
    memset(by.p, 0xff, t * es);
    cb_fmt_mul_forward(fmt, d.n, d.c, hw, 1, ba.p, bs.p, by.p);
    cb_ref_mul_forward(d.n, d.c, (int)hw, 1, a.data(), sb.data(), ref.data());
    snprintf(what, sizeof what, "%s mul (broadcast)", name);
    check(what, nerr(from_storage(fmt, d, by.p), ref), tol);
    std::vector<float> ref_s((size_t)d.n * d.c);
    cb_fmt_mul_backward_bcast(fmt, d.n, d.c, hw, bdy.p, ba.p, bdb.p);
    cb_ref_mul_backward_bcast(d.n, d.c, (int)hw, dy.data(), a.data(), ref_s.data());
    snprintf(what, sizeof what, "%s mul broadcast gradient", name);
    check(what, nerr(from_storage(fmt, s1, bdb.p), ref_s), fmt & CB_FMT_BF16 ? 8e-3 : 1e-6);

    memset(by.p, 0xff, t * es);
    cb_fmt_scale_forward(fmt, d.n, d.c, hw, ba.p, w.data(), by.p);
    cb_ref_scale_forward(d.n, d.c, (int)hw, a.data(), w.data(), ref.data());
    snprintf(what, sizeof what, "%s scale", name);
    check(what, nerr(from_storage(fmt, d, by.p), ref), tol);
    cb_fmt_scale_backward_filter(fmt, d.n, d.c, hw, ba.p, bdy.p, got_c.data(), (float *)part.p);
    cb_ref_scale_backward_filter(d.n, d.c, (int)hw, a.data(), dy.data(), ref_c.data());
    snprintf(what, sizeof what, "%s scale dw", name);
    check(what, nerr(got_c, ref_c), 1e-5);

    std::vector<float> x = rand_vec(fmt, t, 2.f);
    to_storage(fmt, d, x, ba.p);
    memset(by.p, 0xff, t * es);
    cb_fmt_layernorm_forward(fmt, d.n, d.c, hw, 1e-6f, ba.p, w.data(), bias.data(), by.p, (float *)stats.p);
    cb_ref_layernorm_forward(d.n, d.c, (int)hw, 1e-6, x.data(), w.data(), bias.data(), ref.data());
    snprintf(what, sizeof what, "%s layernorm", name);
    check(what, nerr(from_storage(fmt, d, by.p), ref), fmt & CB_FMT_BF16 ? 8e-3 : 2e-6);
    memset(by.p, 0xff, t * es);
    std::fill(got_c.begin(), got_c.end(), NAN), std::fill(got_c2.begin(), got_c2.end(), NAN);
    cb_fmt_layernorm_backward(fmt, d.n, d.c, hw, ba.p, w.data(), bdy.p, (const float *)stats.p, by.p, got_c.data(), got_c2.data(),
                              (float *)part.p);
    cb_ref_layernorm_backward(d.n, d.c, (int)hw, 1e-6, x.data(), w.data(), dy.data(), ref.data(), ref_c.data(), ref_c2.data());
    snprintf(what, sizeof what, "%s layernorm dx", name);
    check(what, nerr(from_storage(fmt, d, by.p), ref), fmt & CB_FMT_BF16 ? 1e-2 : 1e-5);
    snprintf(what, sizeof what, "%s layernorm dweight", name);
    check(what, nerr(got_c, ref_c), 1e-5);
    snprintf(what, sizeof what, "%s layernorm dbias", name);
    check(what, nerr(got_c2, ref_c2), 1e-5);
}

int main() {
    // (NHWC parameter sums: {3, 8, 17, 19} in 30 chunks of 33 rows, a partial LN_PARAM_U group
    // each; {2, 40, 13, 17} in 13 of 35, C 40 in a block of two warps; {1, 1, 182, 182} in the most
    // chunks, CB_FMT_BN_CHUNKS, of 33 rows, C 1). NHWC LayerNorm in vectors (ln_rows), lanes a row and
    // vectors a lane: C 8 1 x 1 (bf16) and 1 x 2 (fp32), C 40 2 x 3 and 4 x 3 (bf16 C 40: the last
    // lane holds 2), C 96 4 x 3 and 8 x 3, C 300 in fp32 32 x 3 (bf16: not a multiple of 8, the
    // warp-per-row kernels), C 768 32 x 3 and 32 x 6 (twice LN_ROWS_NV), C 1536 32 x 6 (bf16; fp32
    // past the widest: warp per row); C 13 and 1 neither
    const dims shapes[] = {{2, 13, 5, 6}, {1, 40, 7, 7}, {3, 8, 17, 19}, {2, 300, 2, 3}, {2, 40, 13, 17}, {1, 1, 182, 182},
                           {2, 96, 3, 5}, {1, 768, 2, 3}, {1, 1536, 1, 3}};
    for (int fmt = 0; fmt < 4; fmt++)
        for (const auto &d : shapes) run(fmt, d);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
