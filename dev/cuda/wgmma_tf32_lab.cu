// Lab for the own wgmma kernels' tf32 form (src/cuda/igemm_wgmma.cuh, cb_wgmma_tma_kernel with F32:
// fp32 NHWC operands and output, tf32 products, TMA-fed; cb_wgmma_wgrad_tf32_kernel for the backward
// filter): checks every TMA tile (6-10, and the picked one) of the forward (bias; ReLU on the odd
// shapes) and the stride-1 backward data, and the backward filter's two tiles (KRSC, and KCRS by way of
// the KRSC workspace) against a float64 direct convolution on the GPU, on odd shapes (C a multiple of
// 32, stride 2, TF SAME, non-square filters, batch 1) and on real layers at batch 2, each also with 3
// blocks running every tile; then times the picked tile and every tile on ResNet-50, VGG-A and GoogLeNet layers against
// cuDNN's legacy best on fp32 NHWC with tensor-op math (tf32; cudnnFind*Ex: not the graph-API engines
// the engine also races; the engine's forced race, dev/gpu-wgstore.sh PREC=tf32, is the fair one).
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/wgmma_tf32_lab.cu -lcudnn -o wgmma_tf32_lab
//   ./wgmma_tf32_lab [check] [time] [only=NAME,NAME] [csv=FILE]
// The inputs are drawn on the bf16 grid (8 significant bits), so tf32 holds them exactly and every
// product is exact: what is left is fp32 summation. Tolerance (||own - ref|| / ||ref||): 1e-5.
// LAB_X3=1: the 3xTF32 form (cb_wg_args_x3: fp32-accurate products; tiles 6 and 9, the backward
// filter 10) on inputs at fp32's full 24 bits, the same tolerance (fp32's, as the tests' own
// kernels'), timed against cuDNN's legacy best under CUDNN_FMA_MATH (strict fp32).
#include "cuda/igemm_wgmma.cuh"

#include "conv_ref.cuh"
#include "lab.cuh"

#include <math.h>
#include <string>

struct layer {
    const char *name;
    int n, c, h, w, k, r, s, stride, pad; // pad -1: TF SAME (asymmetric where odd)
    bool big;                              // timed (and checked at batch 2)
};

static const layer layers[] = {
    {"odd-3x5-s2-same-c32-k40", 1, 32, 15, 12, 40, 3, 5, 2, -1, false},
    {"odd-1x1-s2-c96-k72", 3, 96, 9, 9, 72, 1, 1, 2, 0, false},
    {"odd-2x2-same-c64-k32", 2, 64, 7, 7, 32, 2, 2, 1, -1, false},
    {"odd-3x3-c160-k200", 2, 160, 10, 11, 200, 3, 3, 1, 1, false},
    {"odd-7x1-same-b1-c32-k96", 1, 32, 17, 9, 96, 7, 1, 1, -1, false},
    {"odd-5x5-valid-c64-k136", 1, 64, 12, 13, 136, 5, 5, 1, 0, false},
    {"odd-tiny-m25-c32-k64", 1, 32, 5, 5, 64, 3, 3, 1, 1, false},
    {"odd-1x1-c256-k1000", 5, 256, 1, 1, 1000, 1, 1, 1, 0, false},
    {"r50-l1-1x1-64-64", 64, 64, 56, 56, 64, 1, 1, 1, 0, true},
    {"r50-l1-3x3-64", 64, 64, 56, 56, 64, 3, 3, 1, 1, true},
    {"r50-l1-1x1-64-256", 64, 64, 56, 56, 256, 1, 1, 1, 0, true},
    {"r50-l1-1x1-256-64", 64, 256, 56, 56, 64, 1, 1, 1, 0, true},
    {"r50-l2-3x3-128-s2", 64, 128, 56, 56, 128, 3, 3, 2, 1, true},
    {"r50-l2-1x1-128-512", 64, 128, 28, 28, 512, 1, 1, 1, 0, true},
    {"r50-l2-1x1-512-128", 64, 512, 28, 28, 128, 1, 1, 1, 0, true},
    {"r50-l2-3x3-128", 64, 128, 28, 28, 128, 3, 3, 1, 1, true},
    {"r50-l3-3x3-256", 64, 256, 14, 14, 256, 3, 3, 1, 1, true},
    {"r50-l3-1x1-1024-256", 64, 1024, 14, 14, 256, 1, 1, 1, 0, true},
    {"r50-l4-3x3-512", 64, 512, 7, 7, 512, 3, 3, 1, 1, true},
    {"r50-l4-1x1-512-2048", 64, 512, 7, 7, 2048, 1, 1, 1, 0, true},
    {"vgga-conv2-64-128", 64, 64, 112, 112, 128, 3, 3, 1, 1, true},
    {"vgga-conv3-128-256", 64, 128, 56, 56, 256, 3, 3, 1, 1, true},
    {"vgga-conv4-256-256", 64, 256, 56, 56, 256, 3, 3, 1, 1, true},
    {"vgga-conv6-512-512", 64, 512, 28, 28, 512, 3, 3, 1, 1, true},
    {"vgga-conv7-512-14", 64, 512, 14, 14, 512, 3, 3, 1, 1, true},
    {"gnet-3a-1x1-192-64", 128, 192, 28, 28, 64, 1, 1, 1, 0, true},
    {"gnet-3a-3x3-96-128", 128, 96, 28, 28, 128, 3, 3, 1, 1, true},
    {"gnet-4b-3x3-reduce-512-112", 128, 512, 14, 14, 112, 1, 1, 1, 0, true},
};

static cb_conv_params params_of(const layer &L, int n) { return lab_conv_params(n, L.c, L.h, L.w, L.k, L.r, L.s, L.stride, L.pad, 1); }
static double flops(const cb_conv_params &p) { return 2.0 * p.n * p.k * p.p * p.q * (double)p.c * p.r * p.s; }
static bool bwd_ok(const cb_conv_params &p) { return p.stride_h == 1 && p.stride_w == 1 && p.k % 32 == 0 && p.c % 8 == 0; }
static const bool x3 = getenv("LAB_X3") && atoi(getenv("LAB_X3")) == 1;
static std::vector<float> draw(size_t n, unsigned long long seed) { return x3 ? lab_random_f32(n, seed) : lab_random_grid(n, seed); }
static bool plain_tf32 = false; // with x3: the tf32 form on the same inputs (the check's contrast: it must fail fp32's tolerance)

// ---- buffers ----------------------------------------------------------------------------------

static float *to_dev(const std::vector<float> &h) {
    float *d;
    CK(cudaMalloc(&d, h.size() * 4 + 16));
    CK(cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    return d;
}

struct bufs {
    float *x, *w, *b, *y, *dy, *dx, *wt; // NHWC / KRSC fp32; wt (C, R, S, K) the flipped filter
    float *dw, *dwk, *dws;               // KRSC dw; KCRS dw and its KRSC workspace
};
static bufs alloc_bufs(const cb_conv_params &p, unsigned long long seed) {
    bufs B = {};
    size_t nx = (size_t)p.n * p.c * p.h * p.w, ny = (size_t)p.n * p.k * p.p * p.q, nw = (size_t)p.k * p.c * p.r * p.s;
    B.x = to_dev(draw(nx, seed)), B.w = to_dev(draw(nw, seed * 5 + 2)), B.dy = to_dev(draw(ny, seed * 3 + 1));
    B.b = to_dev(draw(p.k, seed * 7 + 3));
    CK(cudaMalloc(&B.y, ny * 4)), CK(cudaMalloc(&B.dx, nx * 4)), CK(cudaMalloc(&B.wt, nw * 4));
    CK(cudaMalloc(&B.dw, nw * 4)), CK(cudaMalloc(&B.dwk, nw * 4)), CK(cudaMalloc(&B.dws, nw * 4));
    cb_wg_flip_f32(&p, B.w, B.wt, true);
    CK(cudaDeviceSynchronize());
    return B;
}
static void free_bufs(bufs &B) {
    void *all[] = {B.x, B.w, B.b, B.y, B.dy, B.dx, B.wt, B.dw, B.dwk, B.dws};
    for (void *q : all) cudaFree(q);
}


// phase 0 forward (bias, relu), 1 backward data, 2 backward filter (KRSC), 3 the same into KCRS;
// tile 0 = picked, else 6-10 (the backward filter: 6 = 128 filters a tile, 10 = 64)
static void run_wg(int ph, const cb_conv_params &p, const bufs &B, int tile, bool relu) {
    if (ph >= 2) {
        cb_wg_wgrad_args g = cb_wg_wgrad_args_make(&p);
        g.x = B.x, g.dy = B.dy, g.f32 = 1, g.x3 = x3 && !plain_tf32, g.dw = ph == 2 ? B.dw : B.dwk;
        if (ph == 2) cb_wg_wgrad_launch<false>(g, tile);
        else cb_wg_wgrad_kcrs(g, B.dws, tile);
        return;
    }
    cb_wg_args a = ph == 0 ? cb_wg_args_fwd(&p) : cb_wg_args_bwd_data(&p);
    a = x3 && !plain_tf32 ? cb_wg_args_x3(a) : cb_wg_args_tf32(a);
    if (ph == 0) a.x = B.x, a.w = B.w, a.bias = B.b, a.y = B.y, a.relu = relu;
    else a.x = B.dy, a.w = B.wt, a.y = B.dx;
    cb_wg_launch<false>(a, tile);
}

static const char *phase_name[4] = {"fwd", "bwd-data", "bwd-filt", "bwd-filt-kcrs"};
static const int tiles[] = {0, 6, 7, 8, 9, 10};
static bool tile_runs(int ph, int t) { return x3 ? (ph < 2 ? t == 0 || t == 6 || t == 9 : t == 0 || t == 10) : ph < 2 || t == 0 || t == 6 || t == 10; }
// $LAB_PH=N: phase N alone (2: the backward filter, with its KCRS form)
static bool phase_runs(int ph) {
    const char *e = getenv("LAB_PH");
    return !e || atoi(e) == ph || (atoi(e) == 2 && ph == 3);
}
static const double TOL = 1e-5;

static int check_all(const char *only) {
    int fails = 0, runs = 0;
    cudnnHandle_t h = NULL;
    void *dws = NULL;
    const size_t dwsz = 256ull << 20;
    if (x3) { // the contrast's cuDNN under strict fp32 (FMA)
        DNN(cudnnCreate(&h));
        CK(cudaMalloc(&dws, dwsz));
        lab_dnn_math = CUDNN_FMA_MATH;
    }
    for (const layer &L : layers) {
        if (only && !strstr(only, L.name)) continue;
        cb_conv_params p = params_of(L, L.big ? 2 : L.n);
        if (!cb_wg_shape_ok(&p, true)) {
            printf("check %-26s declined by cb_wg_shape_ok\n", L.name);
            continue;
        }
        bufs B = alloc_bufs(p, 4242 + runs);
        size_t nx = (size_t)p.n * p.c * p.h * p.w, ny = (size_t)p.n * p.k * p.p * p.q, nw = (size_t)p.k * p.c * p.r * p.s;
        double *ry, *rdx, *rdw;
        CK(cudaMalloc(&ry, ny * 8)), CK(cudaMalloc(&rdx, nx * 8)), CK(cudaMalloc(&rdw, nw * 8));
        ref_fwd<<<1024, 256>>>(p, B.x, B.w, B.b, ry);
        double *ry0 = NULL; // x3: without the bias, for cuDNN's
        if (x3) CK(cudaMalloc(&ry0, ny * 8)), ref_fwd<<<1024, 256>>>(p, B.x, B.w, (const float *)NULL, ry0);
        ref_bwd_data<<<1024, 256>>>(p, B.dy, B.w, rdx);
        ref_bwd_filter<<<(unsigned)nw, 256>>>(p, B.x, B.dy, rdw);
        CK(cudaDeviceSynchronize());
        bool relu = !L.big;
        printf("check %-26s n%d c%d %dx%d k%d %dx%d s%d pad %d,%d -> %dx%d\n", L.name, p.n, p.c, p.h, p.w, p.k, p.r, p.s, p.stride_h,
               p.pad_top, p.pad_left, p.p, p.q);
        for (int ph = 0; ph < 4; ph++) {
            if ((ph == 1 && !bwd_ok(p)) || !phase_runs(ph)) continue;
            for (int t : tiles)
                for (int few = 0; few < 2; few++) { // few: 3 blocks run every tile (each crosses tile boundaries)
                    if (!tile_runs(ph, t) || (ph == 3 && t)) continue;
                    cb_wg_max_blocks = few ? 3 : 0;
                    CK(cudaMemset(B.y, 0xff, ny * 4)), CK(cudaMemset(B.dx, 0xff, nx * 4)); // NaN: every element must be written
                    CK(cudaMemset(B.dw, 0xff, nw * 4)), CK(cudaMemset(B.dwk, 0xff, nw * 4)), CK(cudaMemset(B.dws, 0xff, nw * 4));
                    run_wg(ph, p, B, t, relu);
                    CK(cudaGetLastError());
                    CK(cudaDeviceSynchronize());
                    double e = ph == 0 ? lab_nerr(B.y, ry, ny, relu) : ph == 1 ? lab_nerr(B.dx, rdx, nx, false) : ph == 2 ? lab_nerr(B.dw, rdw, nw, false)
                                                                                                                   : lab_nerr_kcrs(B.dwk, rdw, p);
                    bool ok = e <= TOL;
                    runs++, fails += !ok;
                    printf("  %s tile %2d %-13s%s err %.2e\n", ok ? "ok  " : "FAIL", t, phase_name[ph], few ? " 3 blocks" : "", e);
                    if (x3 && t == 0 && !few && ph < 3) { // the contrast: tf32 products on the same inputs
                        plain_tf32 = true;
                        run_wg(ph, p, B, t, relu);
                        CK(cudaDeviceSynchronize());
                        plain_tf32 = false;
                        double e2 = ph == 0 ? lab_nerr(B.y, ry, ny, relu) : ph == 1 ? lab_nerr(B.dx, rdx, nx, false) : lab_nerr(B.dw, rdw, nw, false);
                        // (a failure where tf32 products pass too: the check could not tell them from fp32's)
                        printf("  %s tf32 products on the same inputs: err %.2e, %s fp32's tolerance\n", e2 > TOL ? "ok  " : "FAIL", e2,
                               e2 > TOL ? "outside" : "WITHIN");
                        runs++, fails += e2 <= TOL;
                        int algo;
                        if (lab_dnn_best(h, p, ph, CUDNN_DATA_FLOAT, B.x, B.w, B.y, B.dy, B.dx, B.dws, dws, dwsz, &algo) > 0) {
                            double e3 = ph == 0 ? lab_nerr(B.y, ry0, ny, false) : ph == 1 ? lab_nerr(B.dx, rdx, nx, false) : lab_nerr(B.dws, rdw, nw, false); // (no bias, no ReLU)
                            printf("       (cuDNN strict fp32, algo %d, on the same inputs without bias: err %.2e)\n", algo, e3);
                        }
                    }
                }
            cb_wg_max_blocks = 0;
        }
        cudaFree(ry), cudaFree(rdx), cudaFree(rdw), cudaFree(ry0);
        free_bufs(B);
    }
    printf("check: %d runs, %d failed\n", runs, fails);
    if (h) cudnnDestroy(h), cudaFree(dws);
    return fails;
}

static void time_all(const char *only, const char *csv_path) {
    cudnnHandle_t h;
    DNN(cudnnCreate(&h));
    size_t wsz = 1024ull << 20;
    void *ws = NULL;
    CK(cudaMalloc(&ws, wsz));
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (x3) lab_dnn_math = CUDNN_FMA_MATH;
    const char *form = x3 ? "wgmma-3xtf32" : "wgmma-tf32";
    if (csv) fprintf(csv, "layer,phase,gflop,version,ms,tflops\n");
    double lg[4] = {0}, lr[4] = {0};
    int cnt[4] = {0};
    for (const layer &L : layers) {
        if (!L.big || (only && !strstr(only, L.name))) continue;
        cb_conv_params p = params_of(L, L.n);
        if (!cb_wg_shape_ok(&p, true)) continue;
        bufs B = alloc_bufs(p, 777);
        double gf = flops(p) / 1e9;
        for (int ph = 0; ph < 4; ph++) {
            if ((ph == 1 && !bwd_ok(p)) || !phase_runs(ph)) continue;
            if (ph == 3) { // into KCRS (the engine's master gradient), against cuDNN's KRSC (fp32 NHWC filter) best
                double tk = time_ms([&] { run_wg(3, p, B, 0, false); }, 10, 2);
                printf("%-28s %-8s %7.1f GF | kcrs %.3f\n", L.name, phase_name[ph], gf, tk);
                if (csv) fprintf(csv, "%s,%s,%.3f,wgmma-tf32-kcrs,%.4f,%.2f\n", L.name, phase_name[2], gf, tk, gf / tk);
                continue;
            }
            printf("%-28s %-8s %7.1f GF |", L.name, phase_name[ph], gf);
            double t0 = -1, best = 1e30;
            for (int t : tiles) {
                if (!tile_runs(ph, t)) continue;
                double ms = time_ms([&] { run_wg(ph, p, B, t, false); }, 10, 2);
                printf(" %d:%.3f", t, ms);
                if (csv) fprintf(csv, "%s,%s,%.3f,%s-t%d,%.4f,%.2f\n", L.name, phase_name[ph], gf, form, t, ms, gf / ms);
                if (t == 0) t0 = ms;
                else if (ms > 0 && ms < best) best = ms;
            }
            if (ph == 2) { // the K-major ring of 2 buffers (as at first) against the picked 3
                cb_wg_tf32_s2 = 2;
                double t2 = time_ms([&] { run_wg(ph, p, B, 0, false); }, 10, 2);
                cb_wg_tf32_s2 = 3;
                printf(" s2=2:%.3f", t2);
                if (csv) fprintf(csv, "%s,%s,%.3f,wgmma-tf32-s2-2,%.4f,%.2f\n", L.name, phase_name[ph], gf, t2, gf / t2);
            }
            int algo;
            double dnn = lab_dnn_best(h, p, ph, CUDNN_DATA_FLOAT, B.x, B.w, B.y, B.dy, B.dx, B.dws, ws, wsz, &algo); // (tf32: tensor-op math on fp32)
            if (csv && dnn > 0) fprintf(csv, "%s,%s,%.3f,cudnn-%d,%.4f,%.2f\n", L.name, phase_name[ph], gf, algo, dnn, gf / dnn);
            printf(" | cudnn %.3f (algo %d) | picked %.0f TF/s, own/cudnn %.3f, picked/best %.3f\n", dnn, algo, gf / t0, t0 / dnn, t0 / best);
            if (t0 > 0 && dnn > 0) lg[ph] += log(t0 / dnn), lr[ph] += log(t0 / best), cnt[ph]++;
        }
        free_bufs(B);
    }
    for (int ph = 0; ph < 3; ph++)
        printf("geomean %-8s over %2d layers: own %s (picked tile) / cuDNN legacy best %.3f; picked / best tile %.3f\n", phase_name[ph], cnt[ph], x3 ? "3xtf32" : "tf32",
               cnt[ph] ? exp(lg[ph] / cnt[ph]) : 0, cnt[ph] ? exp(lr[ph] / cnt[ph]) : 0);
    if (csv) fclose(csv);
    cudaFree(ws);
    cudnnDestroy(h);
}

int main(int argc, char **argv) { return lab_main(argc, argv, check_all, time_all, true); }
