// Runs src/cuda/pool.cu's kernels on the CPU through dev/emu/cuda_runtime.h and checks them against
// the reference loops (src/cpu/ref.c): outputs, the saved maximum's position (the window offset,
// turned back into the reference's plane index), and the input gradient, on random inputs and on
// inputs of five values (ties everywhere: the first maximum in window order must win, in the
// forward and in where the backward routes dy). Odd shapes, asymmetric pads, windows wholly in the
// padding, a window of more than 255 taps (int32 offsets), and several launches per tensor (a
// small POOL_LAUNCH_CAP). Outputs start as NaN so an element left unwritten fails. Built and run by
// dev/pool_emu.sh; exits 1 when a check fails.
extern "C" {
#include "cpu/kernels.h" // the reference loops, C linkage
}
#include POOL_SRC
#include "emu_check.h"

#include <cstdio>
#include <cstring>
#include <vector>

static int failed;

static void report(bool ok, const char *label, const char *what, double err) {
    printf("%s %-52s %-12s err %.2e\n", ok ? "ok  " : "FAIL", label, what, err);
    failed += !ok;
}

// pads: top, bottom, left, right (bottom and right only shape P and Q, as in the engine)
static void run_case(const char *label, int n, int c, int h, int w, int r, int s, int sh, int sw, int pt, int pb, int pl,
                     int pr, int avg) {
    cb_pool_params p = {n, c, h, w, r, s, (h + pt + pb - r) / sh + 1, (w + pl + pr - s) / sw + 1, sh, sw, pt, pl, avg, 0};
    size_t nx = (size_t)n * c * h * w, ny = (size_t)n * c * p.p * p.q;
    for (int ties = 0; ties < 2; ties++) {
        char lab[160];
        snprintf(lab, sizeof lab, "%s%s", label, ties ? " (ties)" : "");
        std::vector<float> x(nx), dy(ny);
        for (auto &v : x) v = ties ? (float)((int)((urand() + 1.f) * 2.5f) - 2) * 0.5f : urand();
        for (auto &v : dy) v = urand();
        std::vector<float> yr(ny), dxr(nx), yg(ny, NAN), yg2(ny, NAN), dxg(nx, NAN);
        std::vector<int32_t> amr(ny);
        cb_ref_pool_forward(&p, x.data(), yr.data(), amr.data());
        cb_ref_pool_backward(&p, x.data(), dy.data(), avg ? NULL : amr.data(), dxr.data());
        bool byte = r * s <= 255;
        // the argmax as the engine reserves it (cb_cuda_pool_argmax_item): a byte an output where
        // the window has at most 255 taps, else 4; exactly that, so that ASan sees a write past it
        std::vector<int32_t> am32(byte ? 0 : ny, 0x7f7f7f7f);
        std::vector<uint8_t> am8(byte ? ny : 0, 0x7f);
        void *amp = byte ? (void *)am8.data() : (void *)am32.data();
        cb_cuda_pool_forward(&p, x.data(), yg.data(), avg ? NULL : amp);
        cb_cuda_pool_forward(&p, x.data(), yg2.data(), NULL);
        double e = nerr(yg, yr);
        if (!avg) { // a max is one of the inputs: exact
            e = 0;
            for (size_t i = 0; i < ny; i++) e += !(yg[i] == yr[i]);
        }
        report(e <= (avg ? 1e-6 : 0), lab, "forward", e);
        report(memcmp(yg.data(), yg2.data(), ny * 4) == 0, lab, "fwd no argmax", 0);
        if (!avg) { // the saved window offset names the reference's maximum
            double bad = 0;
            for (size_t o = 0; o < ny; o++) {
                int off = byte ? am8[o] : am32[o];
                if (byte && off == 255) off = -1;
                int oh = (int)(o / p.q % p.p), ow = (int)(o % p.q);
                int want = amr[o], got = -1;
                if (off >= 0) got = (oh * sh - pt + off / s) * w + (ow * sw - pl + off % s);
                bad += got != want;
            }
            report(bad == 0, lab, byte ? "argmax u8" : "argmax i32", bad);
        }
        cb_cuda_pool_backward(&p, dy.data(), avg ? NULL : amp, dxg.data());
        e = nerr(dxg, dxr);
        report(e <= 1e-6, lab, "backward", e);
    }
}

int main() {
    // label, N, C, H, W, R, S, stride h, w, pads top, bottom, left, right, avg
    run_case("max 3x3 s2 VALID 13x15 b2 c5", 2, 5, 13, 15, 3, 3, 2, 2, 0, 0, 0, 0, 0);
    run_case("max 3x3 s2 SAME 12x12 (pads 0/1)", 2, 3, 12, 12, 3, 3, 2, 2, 0, 1, 0, 1, 0);
    run_case("max 3x3 s1 pad 1 7x9 b1 c13", 1, 13, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 0);
    run_case("max 2x2 s2 9x11 (trailing pad 1)", 2, 3, 9, 11, 2, 2, 2, 2, 0, 1, 0, 1, 0);
    run_case("max 3x2 s(1,3) pads 2/0 1/1 8x10", 2, 2, 8, 10, 3, 2, 1, 3, 2, 0, 1, 1, 0);
    run_case("max 2x2 s2 pad top 2 (window all pad)", 1, 2, 5, 6, 2, 2, 2, 2, 2, 0, 0, 0, 0);
    run_case("max 1x1 s2 5x7 (subsample)", 1, 3, 5, 7, 1, 1, 2, 2, 0, 0, 0, 0, 0);
    run_case("max 17x17 s3 20x21 (int32 offsets)", 1, 2, 20, 21, 17, 17, 3, 3, 0, 0, 0, 0, 0);
    run_case("max 4x5 s3 pads 1/2 2/1 b3 c7 (launches)", 3, 7, 19, 23, 4, 5, 3, 3, 1, 2, 2, 1, 0);
    run_case("avg 3x3 s1 pad 1 8x7", 2, 5, 8, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1);
    run_case("avg 2x2 s2 9x9 (trailing pad 1)", 2, 3, 9, 9, 2, 2, 2, 2, 0, 1, 0, 1, 1);
    run_case("avg 3x3 s2 pads 0/1 8x8", 2, 5, 8, 8, 3, 3, 2, 2, 0, 1, 0, 1, 1);
    run_case("avg 5x5 s1 VALID 5x5 (global)", 3, 4, 5, 5, 5, 5, 1, 1, 0, 0, 0, 0, 1);
    run_case("avg 6x9 global b2 c40 (channel slices)", 2, 40, 6, 9, 6, 9, 1, 1, 0, 0, 0, 0, 1);
    run_case("avg 2x2 s2 pad top 2 (window all pad)", 1, 2, 5, 6, 2, 2, 2, 2, 2, 0, 0, 0, 1);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
