// Runs src/cuda/conv_depthwise.cu's kernels (forward, data and filter gradients) on the CPU through
// dev/emu/cuda_runtime.h and cuda_bf16.h, in the four storages, against the float64 reference
// convolution (src/cpu/ref.c) on the same values (bf16-rounded for the bf16 storages): odd channel
// counts (every vector width), stride 2, asymmetric padding, non-square and dilated filters, batch
// 1, several channel slices. Outputs start as NaN so an element left unwritten fails. Built and
// run by dev/dw_emu.sh; exits 1 when a check fails.
extern "C" {
#include "cpu/kernels.h"
}
#include DW_SRC
#include "emu_check.h"
#include "emu_storage.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

enum { NHWC = CB_FMT_NHWC, BF16 = CB_FMT_BF16 };
static int failed, passed, pairs; // pairs: the calls' (the two-channel stride-1 NHWC kernel)
static void check(const char *what, double err, double tol) {
    if (err <= tol) passed++;
    else failed++, printf("FAIL %s: err %.3g tol %.3g\n", what, err, tol);
}

static std::vector<float> rand_vec(int fmt, size_t n) {
    std::vector<float> v(n);
    for (auto &x : v) x = rnd(fmt, urand());
    return v;
}
static std::vector<double> to64(const std::vector<float> &a) { return std::vector<double>(a.begin(), a.end()); }
static std::vector<float> to32(const std::vector<double> &a) { return std::vector<float>(a.begin(), a.end()); }

// c channels, h x w input, r x s filter, stride, leading pads and trailing pads, dilation
struct shape {
    int n, c, h, w, r, s, sh, sw, pt, pb, pl, pr, dh, dw;
};

static void run(int fmt, const shape &z) {
    static const char *fmts[] = {"fp32 NCHW", "fp32 NHWC", "bf16 NCHW", "bf16 NHWC"};
    cb_conv_params p = {};
    p.n = z.n, p.c = z.c, p.h = z.h, p.w = z.w, p.k = z.c, p.r = z.r, p.s = z.s, p.stride_h = z.sh, p.stride_w = z.sw;
    p.pad_top = z.pt, p.pad_left = z.pl, p.groups = z.c, p.dil_h = z.dh, p.dil_w = z.dw;
    p.p = (z.h + z.pt + z.pb - z.dh * (z.r - 1) - 1) / z.sh + 1;
    p.q = (z.w + z.pl + z.pr - z.dw * (z.s - 1) - 1) / z.sw + 1;
    char name[160], what[220];
    snprintf(name, sizeof name, "%s n%d c%d %dx%d f%dx%d s%d,%d pad %d,%d,%d,%d dil %d,%d", fmts[fmt], z.n, z.c, z.h, z.w, z.r,
             z.s, z.sh, z.sw, z.pt, z.pb, z.pl, z.pr, z.dh, z.dw);
    if (!cb_cuda_dw_supports(&p)) {
        failed++, printf("FAIL %s: not supported\n", name);
        return;
    }
    dims dx = {z.n, z.c, z.h, z.w}, dy = {z.n, z.c, p.p, p.q}, dwd = {z.c, 1, z.r, z.s};
    int nhwc = fmt & NHWC, bf = fmt & BF16;
    size_t es = bf ? 2 : 4;
    std::vector<float> x = rand_vec(fmt, dx.count()), g = rand_vec(fmt, dy.count()), w = rand_vec(fmt, dwd.count());
    std::vector<float> b(z.c);
    for (auto &v : b) v = urand();
    buffer bx(dx.count() * es), by(dy.count() * es), bg(dy.count() * es), bdx(dx.count() * es), bw(dwd.count() * es),
        bdw(dwd.count() * es), ws(cb_cuda_dw_workspace(&p, nhwc));
    to_storage(fmt, dx, x, bx.p), to_storage(fmt, dy, g, bg.p), to_storage(fmt, dwd, w, bw.p); // (filters: C,1,R,S either way)
    std::vector<double> y64(dy.count()), dx64(dx.count()), dw64(dwd.count()), db64(z.c), b64 = to64(b);
    double tol = bf ? 8e-3 : 2e-6;
    for (int relu = 0; relu < 2; relu++) {
        cb_ref64_conv_forward(&p, to64(x).data(), to64(w).data(), relu ? b64.data() : nullptr, y64.data());
        if (relu)
            for (auto &v : y64) v = v > 0 ? v : 0;
        memset(by.p, 0xff, dy.count() * es);
        cb_cuda_dw_forward(&p, nhwc, bf, bx.p, bw.p, relu ? b.data() : nullptr, by.p, relu, pairs);
        snprintf(what, sizeof what, "%s forward%s", name, relu ? " +bias+relu" : "");
        check(what, nerr(from_storage(fmt, dy, by.p), to32(y64)), tol);
    }
    cb_ref64_conv_backward_data(&p, to64(g).data(), to64(w).data(), dx64.data());
    cb_cuda_dw_backward_data(&p, nhwc, bf, bg.p, bw.p, bdx.p, pairs);
    snprintf(what, sizeof what, "%s backward data", name);
    check(what, nerr(from_storage(fmt, dx, bdx.p), to32(dx64)), tol);
    cb_ref64_conv_backward_filter(&p, to64(x).data(), to64(g).data(), dw64.data(), db64.data());
    cb_cuda_dw_backward_filter(&p, nhwc, bf, bx.p, bg.p, bdw.p, (float *)ws.p);
    snprintf(what, sizeof what, "%s backward filter", name);
    check(what, nerr(from_storage(fmt, dwd, bdw.p), to32(dw64)), bf ? 8e-3 : 1e-5);
}

int main() {
    const char *pair = getenv("CONVBENCH_DW_PAIR"); // (on: the two-channel kernels where they apply)
    pairs = pair && !strcmp(pair, "on");
    const shape shapes[] = {
        {2, 3, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},     // C 3: vector width 1
        {1, 6, 9, 9, 3, 3, 2, 2, 0, 1, 0, 1, 1, 1},     // stride 2, TF SAME (trailing pad only), batch 1, width 2
        {2, 12, 8, 10, 5, 3, 1, 2, 2, 2, 1, 1, 1, 1},   // non-square filter, mixed strides, width 4
        {2, 16, 11, 9, 3, 5, 2, 1, 1, 2, 2, 2, 1, 1},   // width 8, asymmetric both ways
        {1, 40, 6, 7, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},    // dilation 2
        {2, 24, 14, 14, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1},  // ConvNeXt's 7x7
        {1, 600, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   // several channel slices
        {1, 8, 5, 5, 5, 5, 2, 2, 1, 2, 1, 2, 1, 1},     // EfficientNet's 5x5 stride 2
        {2, 32, 9, 13, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1},   // 5x5 stride 1 (the fast kernel), rows not a multiple of its strip
        {1, 20, 6, 9, 3, 3, 1, 1, 0, 2, 2, 0, 1, 1},    // stride 1, lopsided pads both ways
        {1, 256, 7, 7, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1},   // 7x7, the fast kernel's channel slices
        {2, 18, 5, 31, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1},   // 7x7 rows wide enough for strips wholly inside
        {1, 24, 4, 29, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   // 3x3 the same
    };
    for (int fmt = 0; fmt < 4; fmt++)
        for (const auto &z : shapes) run(fmt, z);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
