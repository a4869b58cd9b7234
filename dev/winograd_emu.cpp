// Runs src/cuda/conv_winograd.cu's kernels on the CPU through dev/emu/cuda_runtime.h and checks all
// three phases against the reference loops (src/cpu/ref.c) on odd shapes: partial tiles, asymmetric
// and negative pads, groups, chunks of images (a small WINO_CAP) and split reductions. With
// AddressSanitizer, every read and write outside x, w, dy, y, dx, dw and the declared workspace
// aborts. Built and run by dev/winograd_emu.sh; exits 1 when a check fails.
extern "C" {
#include "cpu/kernels.h" // the reference loops, C linkage
}
#include WINO_SRC
#include "emu_check.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

static int failed;

static void run_case(const char *label, int n, int c, int h, int w, int k, int p, int q, int pt, int pl, int groups) {
    cb_conv_params cp = {n, c, h, w, k, 3, 3, p, q, 1, 1, pt, pl, groups};
    const double tol = 1e-5;
    size_t nx = (size_t)n * c * h * w, ny = (size_t)n * k * p * q, nw = (size_t)k * (c / groups) * 9;
    std::vector<float> x(nx), wt(nw), b(k), dy(ny);
    for (auto *v : {&x, &wt, &b, &dy})
        for (auto &e : *v) e = urand();
    for (int ph = 0; ph < 3; ph++)
        if (!supports(&cp, (cb_phase)ph)) {
            printf("FAIL %-44s phase %d not supported\n", label, ph);
            failed++;
            return;
        }
    for (int relu = 0; relu < 2; relu++) { // forward, with and without the fused ReLU
        std::vector<float> yr(ny), yg(ny, NAN);
        cb_ref_conv_forward(&cp, x.data(), wt.data(), b.data(), yr.data());
        if (relu)
            for (auto &e : yr) e = e > 0 ? e : 0;
        std::vector<char> ws(workspace(&cp, CB_PHASE_FORWARD));
        forward(&cp, x.data(), wt.data(), b.data(), yg.data(), relu, ws.data());
        double e = nerr(yg, yr);
        printf("%s %-44s forward%s  err %.2e  ws %.2f MB\n", e <= tol ? "ok  " : "FAIL", label, relu ? " relu" : "     ", e,
               ws.size() / 1e6);
        failed += !(e <= tol);
    }
    {
        std::vector<float> dxr(nx), dxg(nx, NAN);
        cb_ref_conv_backward_data(&cp, dy.data(), wt.data(), dxr.data());
        std::vector<char> ws(workspace(&cp, CB_PHASE_BWD_DATA));
        backward_data(&cp, dy.data(), wt.data(), dxg.data(), ws.data());
        double e = nerr(dxg, dxr);
        printf("%s %-44s bwd data      err %.2e  ws %.2f MB\n", e <= tol ? "ok  " : "FAIL", label, e, ws.size() / 1e6);
        failed += !(e <= tol);
    }
    {
        std::vector<float> dwr(nw), dwg(nw, NAN), dbr(k), dbg(k, NAN);
        cb_ref_conv_backward_filter(&cp, x.data(), dy.data(), dwr.data(), dbr.data());
        std::vector<char> ws(workspace(&cp, CB_PHASE_BWD_FILTER));
        wino_plan wp;
        wino_plan_of(&cp, CB_PHASE_BWD_FILTER, &wp);
        backward_filter(&cp, x.data(), dy.data(), dwg.data(), dbg.data(), ws.data());
        double e = nerr(dwg, dwr), eb = nerr(dbg, dbr);
        printf("%s %-44s bwd filter    err %.2e  db %.2e  ws %.2f MB (%d chunks of %d images, %d splits)\n",
               e <= tol && eb <= tol ? "ok  " : "FAIL", label, e, eb, ws.size() / 1e6, (n + wp.nb - 1) / wp.nb, wp.nb,
               wp.splits);
        failed += !(e <= tol && eb <= tol);
    }
}

int main() {
    // label, N, C, H, W, K, P, Q, pad_top, pad_left, groups (P, Q as TF's padding makes them)
    run_case("3x3 s1 SAME C3->5 b2 13x11", 2, 3, 13, 11, 5, 13, 11, 1, 1, 1);
    run_case("3x3 s1 pad 1 C16->32 b3 12x10", 3, 16, 12, 10, 32, 12, 10, 1, 1, 1);
    run_case("3x3 s1 VALID C7->9 b1 11x9", 1, 7, 11, 9, 9, 9, 7, 0, 0, 1);
    run_case("groups 2 C6->10 pad 1 9x9", 2, 6, 9, 9, 10, 9, 9, 1, 1, 2);
    run_case("asymmetric pads 0/2 C5->6 7x8", 2, 5, 7, 8, 6, 7, 8, 0, 2, 1);
    run_case("negative pads -1/-1 C4->3 9x10", 1, 4, 9, 10, 3, 5, 6, -1, -1, 1);
    run_case("full pads 2/2 C2->3 b3 5x6", 3, 2, 5, 6, 3, 7, 8, 2, 2, 1);
    run_case("1x1 image pad 1 C3->2 b2", 2, 3, 1, 1, 2, 1, 1, 1, 1, 1);
    run_case("C70->130 b2 9x7 (two row tiles)", 2, 70, 9, 7, 130, 9, 7, 1, 1, 1);
    run_case("C5->6 b2 32x47 (split reduction)", 2, 5, 32, 47, 6, 32, 47, 1, 1, 1);
    run_case("C24->136 b3 20x21 (128x128 tiles)", 3, 24, 20, 21, 136, 20, 21, 1, 0, 1);
    run_case("C12->8 b5 64x61 (chunks)", 5, 12, 64, 61, 8, 64, 61, 1, 1, 1);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
