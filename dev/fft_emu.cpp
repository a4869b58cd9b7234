// Runs src/cuda/conv_fft.cu on the CPU: its kernels through dev/emu/cuda_runtime.h, cuFFT through
// dev/fft_emu/cufft.h (double-precision DFTs with cuFFT's advanced layout), and checks all three
// phases against the reference loops (src/cpu/ref.c) on odd shapes: asymmetric and negative
// trailing pads, non-square filters, batch 1, channel counts that leave partial 16 x 16 tiles and
// partial chunks of 4, several frequency groups. With AddressSanitizer, every read or write
// outside x, w, dy, y, dx, dw and the declared workspace aborts. Built and run by dev/fft_emu.sh;
// exits 1 when a check fails.
#include "cuda_runtime.h"
struct alignas(8) float2 { float x, y; };
static inline float2 make_float2(float x, float y) { return float2{x, y}; }
#include "cufft.h"
extern "C" {
#include "cpu/kernels.h" // the reference loops, C linkage
}
#include FFT_SRC
#include "emu_check.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

static int failed;

static void report(const char *label, const char *what, double e, size_t ws) {
    const double tol = 1e-5; // test_gpu's for own fp32 kernels
    printf("%s %-52s %-13s err %.2e  ws %.2f MB\n", e <= tol ? "ok  " : "FAIL", label, what, e, ws / 1e6);
    failed += !(e <= tol);
}

// TF-style: P, Q given with the leading pads; the trailing pads follow (and may be negative)
static void run_case(const char *label, int n, int c, int h, int w, int k, int r, int s, int pt, int pl, int p, int q) {
    cb_conv_params cp = {n, c, h, w, k, r, s, p, q, 1, 1, pt, pl, 1};
    size_t nx = (size_t)n * c * h * w, ny = (size_t)n * k * p * q, nw = (size_t)k * c * r * s;
    std::vector<float> x(nx), wt(nw), b(k), dy(ny);
    for (auto *v : {&x, &wt, &b, &dy})
        for (auto &e : *v) e = urand();
    for (int ph = 0; ph < 3; ph++)
        if (!supports(&cp, (cb_phase)ph)) {
            printf("FAIL %-52s phase %d not supported\n", label, ph);
            failed++;
            return;
        }
    for (int relu = 0; relu < 2; relu++) {
        std::vector<float> yr(ny), yg(ny, NAN);
        cb_ref_conv_forward(&cp, x.data(), wt.data(), b.data(), yr.data());
        if (relu)
            for (auto &e : yr) e = e > 0 ? e : 0;
        std::vector<char> ws(workspace(&cp, CB_PHASE_FORWARD));
        memset(ws.data(), 0xff, ws.size()); // NaN everywhere: a read of an unwritten region shows
        forward(&cp, x.data(), wt.data(), relu ? b.data() : nullptr, yg.data(), relu, ws.data());
        if (!relu) { // no bias: compare with the reference minus its bias
            for (size_t i = 0; i < ny; i++) yr[i] -= b[i / ((size_t)p * q) % k];
        }
        report(label, relu ? "forward+b+relu" : "forward", nerr(yg, yr), ws.size());
    }
    {
        std::vector<float> dxr(nx), dxg(nx, NAN);
        cb_ref_conv_backward_data(&cp, dy.data(), wt.data(), dxr.data());
        std::vector<char> ws(workspace(&cp, CB_PHASE_BWD_DATA));
        memset(ws.data(), 0xff, ws.size());
        backward_data(&cp, dy.data(), wt.data(), dxg.data(), ws.data());
        report(label, "bwd data", nerr(dxg, dxr), ws.size());
    }
    {
        std::vector<float> dwr(nw), dwg(nw, NAN), dbr(k), dbg(k, NAN);
        cb_ref_conv_backward_filter(&cp, x.data(), dy.data(), dwr.data(), dbr.data());
        std::vector<char> ws(workspace(&cp, CB_PHASE_BWD_FILTER));
        memset(ws.data(), 0xff, ws.size());
        backward_filter(&cp, x.data(), dy.data(), dwg.data(), dbg.data(), ws.data());
        report(label, "bwd filter dw", nerr(dwg, dwr), ws.size());
        report(label, "bwd filter db", nerr(dbg, dbr), 0);
    }
}

static void expect_unsupported(const char *label, cb_conv_params cp) {
    bool any = false;
    for (int ph = 0; ph < 3; ph++) any |= supports(&cp, (cb_phase)ph);
    printf("%s %-52s not supported\n", any ? "FAIL" : "ok  ", label);
    failed += any;
}

int main() {
    //        label                                             n   c   h   w   k   r   s  pt pl   p   q
    run_case("9x9 VALID C5->12 b2 (test_gpu)", /*           */ 2, 5, 24, 20, 12, 9, 9, 0, 0, 16, 12);
    run_case("3x3 SAME C3->5 b2 on 13x11", /*               */ 2, 3, 13, 11, 5, 3, 3, 1, 1, 13, 11);
    run_case("6x5 SAME (pads 2,2 | 3,2) C7->10 b3", /*      */ 3, 7, 17, 14, 10, 6, 5, 2, 2, 17, 14);
    run_case("4x7 pads (1,3 | 2,3) C4->3 b1", /*            */ 1, 4, 12, 9, 3, 4, 7, 1, 3, 12, 9);
    run_case("5x5 negative trailing pads (2,1 | -3,-1)", /* */ 2, 3, 15, 13, 6, 5, 5, 2, 1, 10, 9);
    run_case("11x11 as large as the image, C9->11", /*      */ 2, 9, 10, 10, 11, 11, 11, 5, 5, 10, 10);
    run_case("1x9 C2->3 on 7x30", /*                        */ 1, 2, 7, 30, 3, 1, 9, 0, 4, 7, 30);
    // partial 16 x 16 tiles on both sides and chunks of 4 with a remainder: N 17, C 18, K 33
    run_case("5x5 pad 2 N17 C18 K33 on 6x5", /*             */ 17, 18, 6, 5, 33, 5, 5, 2, 2, 6, 5);
    run_case("7x7 VALID N1 C1 K4 on 30x26 (ECE408-like)", /**/ 1, 1, 30, 26, 4, 7, 7, 0, 0, 24, 20);
    cb_conv_params s2 = {2, 3, 16, 16, 4, 5, 5, 8, 8, 2, 2, 2, 2, 1};
    expect_unsupported("stride 2", s2);
    cb_conv_params g2 = {2, 4, 16, 16, 4, 5, 5, 16, 16, 1, 1, 2, 2, 2};
    expect_unsupported("groups 2", g2);
    cb_conv_params k1 = {2, 4, 16, 16, 4, 1, 1, 16, 16, 1, 1, 0, 0, 1};
    expect_unsupported("1x1", k1);
    cb_conv_params big = {1024, 1024, 256, 256, 1024, 9, 9, 248, 248, 1, 1, 0, 0, 1};
    expect_unsupported("workspace over 4 GiB", big);
    // plans are cached: at most FFT_PLANS alive, and the shape just run makes none anew
    int before = emu_fft_created;
    run_case("7x7 VALID N1 C1 K4 on 30x26 again (cached plans)", 1, 1, 30, 26, 4, 7, 7, 0, 0, 24, 20);
    printf("%s cuFFT plans alive %d (cache %d), made anew for a repeated shape %d\n",
           emu_fft_live <= FFT_PLANS && emu_fft_created == before ? "ok  " : "FAIL", emu_fft_live, FFT_PLANS,
           emu_fft_created - before);
    failed += !(emu_fft_live <= FFT_PLANS && emu_fft_created == before);
    // the layouts of convnet-benchmarks' L1-L5 at batch 128 (VALID): tile, frequencies, and the
    // workspace without cuFFT's work area (which only cuFFT on the GPU reports)
    const int suite[5][4] = {{3, 128, 96, 11}, {64, 64, 128, 9}, {128, 32, 128, 9}, {128, 16, 128, 7}, {384, 13, 384, 3}};
    for (int i = 0; i < 5; i++) {
        int c = suite[i][0], h = suite[i][1], k = suite[i][2], r = suite[i][3];
        cb_conv_params cp = {128, c, h, h, k, r, r, h - r + 1, h - r + 1, 1, 1, 0, 0, 1};
        fft_layout L;
        if (fft_layout_of(&cp, &L))
            printf("L%d: tile %dx%d, %zu frequencies (stride %zu), workspace %.1f MB + cuFFT's work area\n", i + 1, L.hf,
                   L.wf, L.f, L.fp, L.spec_bytes / 1e6);
    }
    printf("%s\n", failed ? "FAILED" : "all ok");
    return failed ? 1 : 0;
}
