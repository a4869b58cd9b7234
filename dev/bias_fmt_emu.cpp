// Runs src/storage/bias_fmt.cu's kernels (the bias gradient of a conv or FC layer, alone and with
// the activation's gradient in the same pass) on the CPU through dev/emu/cuda_runtime.h and
// cuda_bf16.h, fp32 and bf16, NCHW (planes per block, planes split, the flat walk) and rows (NHWC,
// FC), with the scratch and without, against float64: dy = act'(dy) as stored, db its per-channel
// sums within 1e-6 of the sum of |dy|. Outputs start as NaN. Built and run by dev/bias_fmt_emu.sh;
// exits 1 when a check fails.
extern "C" {
#include "core/act.h"
}
#include BIAS_FMT_SRC
#include "emu_check.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

static int failed, passed;
static void check(const char *what, double err, double tol) {
    if (err <= tol) passed++;
    else failed++, printf("FAIL %s: err %.3g tol %.3g\n", what, err, tol);
}
static float rnd(bool bf, float v) { return bf ? __bfloat162float(__float2bfloat16_rn(v)) : v; }
static void put(bool bf, const std::vector<float> &v, void *d) {
    for (size_t i = 0; i < v.size(); i++)
        if (bf) ((__nv_bfloat16 *)d)[i] = __float2bfloat16_rn(v[i]);
        else ((float *)d)[i] = v[i];
}
static float get(bool bf, const void *d, size_t i) { return bf ? __bfloat162float(((const __nv_bfloat16 *)d)[i]) : ((const float *)d)[i]; }

struct shape {
    const char *label;
    int64_t rows;
    int k;
    int64_t inner;
};

static void run(const shape &s, bool bf, cb_act act, bool scratch) {
    size_t n = (size_t)s.rows * s.k * s.inner, es = bf ? 2 : 4;
    std::vector<float> dy(n), x(n), y(n);
    for (size_t i = 0; i < n; i++) {
        dy[i] = rnd(bf, urand());
        x[i] = rnd(bf, urand() + 0.3f);
        y[i] = rnd(bf, (float)cb_act_fwd_f64(act, x[i]));
    }
    void *bdy = operator new(n * es, std::align_val_t(16)), *bx = operator new(n * es, std::align_val_t(16)),
         *by = operator new(n * es, std::align_val_t(16));
    put(bf, dy, bdy), put(bf, x, bx), put(bf, y, by);
    std::vector<float> db(s.k, NAN), part(scratch ? cb_fmt_bias_part_floats(s.k) : 0, NAN);
    bool none = act == CB_ACT_NONE;
    if (none) cb_fmt_bias_grad(s.rows, s.k, s.inner, bdy, bf, db.data(), scratch ? part.data() : nullptr);
    else cb_fmt_act_bias_grad(s.rows, s.k, s.inner, act, act == CB_ACT_RELU ? nullptr : bx, by, bdy, bf, db.data(), scratch ? part.data() : nullptr);
    std::vector<double> ref(s.k, 0), mag(s.k, 0);
    double gerr = 0;
    for (size_t i = 0; i < n; i++) {
        double g = none ? dy[i] : cb_act_bwd_f64(act, x[i], y[i], dy[i]);
        double want = rnd(bf, (float)g), got = get(bf, bdy, i);
        double e = std::fabs(got - want) / (std::fabs(want) > 1e-3 ? std::fabs(want) : 1e-3);
        if (!(e <= gerr)) gerr = std::isnan(e) ? INFINITY : e;
        int c = (int)(i / (size_t)s.inner % (size_t)s.k);
        ref[c] += got, mag[c] += std::fabs(got);
    }
    double derr = 0;
    for (int c = 0; c < s.k; c++) {
        double e = std::fabs(db[c] - ref[c]) / (mag[c] > 0 ? mag[c] : 1);
        if (!(e <= derr)) derr = std::isnan(e) ? INFINITY : e;
    }
    static const char *names[] = {"none", "relu", "sigmoid", "silu", "hardswish", "hardsigmoid", "relu6", "gelu"};
    char what[200];
    snprintf(what, sizeof what, "%s %s act %s%s: dy", s.label, bf ? "bf16" : "fp32", names[act], scratch ? "" : ", no scratch");
    check(what, gerr, act == CB_ACT_RELU || none ? 0 : bf ? 8e-3 : 1e-5); // (the act's fp32 formula against float64)
    snprintf(what, sizeof what, "%s %s act %s%s: db", s.label, bf ? "bf16" : "fp32", names[act], scratch ? "" : ", no scratch");
    check(what, derr, 1e-6);
    operator delete(bdy, std::align_val_t(16)), operator delete(bx, std::align_val_t(16)), operator delete(by, std::align_val_t(16));
}

int main() {
    static const shape shapes[] = {
        {"NCHW b9 K5 40x40 (planes per block)", 9, 5, 1600},
        {"NCHW b1 K3 64x64 (a plane split)", 1, 3, 4096},
        {"NCHW b33 K6 13x13 (flat walk)", 33, 6, 169},
        {"NCHW b1 K5 3x3 (one block per channel)", 1, 5, 9},
        {"rows 3001 K33 (NHWC)", 3001, 33, 1},
        {"FC b17 K70", 17, 70, 1},
        {"rows 700 K384 (NHWC: bf16 vectors of 4, fp32 of 4)", 700, 384, 1},
        {"rows 333 K256 (NHWC: bf16 vectors of 8)", 333, 256, 1},
        {"rows 129 K96 (NHWC: bf16 vectors of 8, lanes idle; fp32 one a thread)", 129, 96, 1},
        {"rows 515 K64 (NHWC: fp32 vectors of 2)", 515, 64, 1},
    };
    const cb_act acts[] = {CB_ACT_NONE, CB_ACT_RELU, CB_ACT_GELU, CB_ACT_SILU, CB_ACT_RELU6};
    for (const shape &s : shapes)
        for (int bf = 0; bf < 2; bf++)
            for (cb_act a : acts)
                for (int scratch = 0; scratch < 2; scratch++) run(s, bf, a, scratch);
    printf("bias_fmt emulation: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
