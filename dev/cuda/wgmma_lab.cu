// Lab for the Hopper wgmma implicit-GEMM convolution (src/cuda/igemm_wgmma.cuh) on bf16 NHWC:
// checks every tile against a float64 direct convolution on the GPU computed from the same bf16
// values (odd shapes with C a multiple of 64, then the real layers at batch 2): forward with bias
// (and ReLU on the odd shapes), the stride-1 backward data and the backward filter (KRSC fp32);
// then times the three phases of ResNet-50 and VGG-A at batch 64 against today's own igemm-bf16
// (mma.sync, fp32 NCHW buffers: cb_tc_conv_*) and cuDNN's legacy best (cudnnFind*Ex, bf16 NHWC, tensor-op math:
// not the graph-API engines the engine also races, 2-10x faster on ResNet-50's layers; the engine's
// forced race, dev/gpu-wgstore.sh, is the fair comparison),
// printing ms, TFLOP/s and the ratios, with their geometric means.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/wgmma_lab.cu -lcudnn -o wgmma_lab
//   ./wgmma_lab [check] [time] [only=NAME,NAME] [csv=FILE]     (LAB_OWN_ONLY=1: time the wgmma variants alone)
// Tolerance (||own - ref|| / ||ref||): 1.5e-2, the bf16 tolerance of tests/test_gpu.c (the
// operands are exact here, so what is left is fp32 summation and the bf16 rounding of the output).
#include "cuda/igemm_tc.cuh"
#include "cuda/igemm_wgmma.cuh"

#include "conv_ref.cuh"
#include "lab.cuh"

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

typedef __nv_bfloat16 bf16;


struct layer {
    const char *name;
    int n, c, h, w, k, r, s, stride, pad; // pad -1: TF SAME (asymmetric where odd)
    bool big;                              // timed (and checked at batch 2)
};

static const layer layers[] = {
    // odd shapes (checked only)
    {"odd-3x5-s2-same-k40", 1, 64, 15, 12, 40, 3, 5, 2, -1, false},
    {"odd-1x1-s2-k72", 3, 128, 9, 9, 72, 1, 1, 2, 0, false},
    {"odd-2x2-same", 2, 64, 7, 7, 64, 2, 2, 1, -1, false},
    {"odd-3x3-c192-k200", 2, 192, 10, 11, 200, 3, 3, 1, 1, false},
    {"odd-7x1-same-b1", 1, 64, 17, 9, 128, 7, 1, 1, -1, false},
    {"odd-5x5-valid-k136", 1, 64, 12, 13, 136, 5, 5, 1, 0, false},
    {"odd-tiny-m25", 1, 64, 5, 5, 64, 3, 3, 1, 1, false},
    {"odd-3x3-pad2", 2, 128, 9, 9, 64, 3, 3, 1, 2, false},
    {"odd-1x1-k1000", 5, 256, 1, 1, 1000, 1, 1, 1, 0, false},
    // ResNet-50 v1.5 b64 (stride on the 3x3), every distinct convolution but conv1 (C = 3)
    {"r50-l1-1x1-64-64", 64, 64, 56, 56, 64, 1, 1, 1, 0, true},
    {"r50-l1-3x3-64", 64, 64, 56, 56, 64, 3, 3, 1, 1, true},
    {"r50-l1-1x1-64-256", 64, 64, 56, 56, 256, 1, 1, 1, 0, true},
    {"r50-l1-1x1-256-64", 64, 256, 56, 56, 64, 1, 1, 1, 0, true},
    {"r50-l2-1x1-256-128", 64, 256, 56, 56, 128, 1, 1, 1, 0, true},
    {"r50-l2-3x3-128-s2", 64, 128, 56, 56, 128, 3, 3, 2, 1, true},
    {"r50-l2-1x1-128-512", 64, 128, 28, 28, 512, 1, 1, 1, 0, true},
    {"r50-l2-ds-256-512-s2", 64, 256, 56, 56, 512, 1, 1, 2, 0, true},
    {"r50-l2-1x1-512-128", 64, 512, 28, 28, 128, 1, 1, 1, 0, true},
    {"r50-l2-3x3-128", 64, 128, 28, 28, 128, 3, 3, 1, 1, true},
    {"r50-l3-1x1-512-256", 64, 512, 28, 28, 256, 1, 1, 1, 0, true},
    {"r50-l3-3x3-256-s2", 64, 256, 28, 28, 256, 3, 3, 2, 1, true},
    {"r50-l3-1x1-256-1024", 64, 256, 14, 14, 1024, 1, 1, 1, 0, true},
    {"r50-l3-ds-512-1024-s2", 64, 512, 28, 28, 1024, 1, 1, 2, 0, true},
    {"r50-l3-1x1-1024-256", 64, 1024, 14, 14, 256, 1, 1, 1, 0, true},
    {"r50-l3-3x3-256", 64, 256, 14, 14, 256, 3, 3, 1, 1, true},
    {"r50-l4-1x1-1024-512", 64, 1024, 14, 14, 512, 1, 1, 1, 0, true},
    {"r50-l4-3x3-512-s2", 64, 512, 14, 14, 512, 3, 3, 2, 1, true},
    {"r50-l4-1x1-512-2048", 64, 512, 7, 7, 2048, 1, 1, 1, 0, true},
    {"r50-l4-ds-1024-2048-s2", 64, 1024, 14, 14, 2048, 1, 1, 2, 0, true},
    {"r50-l4-1x1-2048-512", 64, 2048, 7, 7, 512, 1, 1, 1, 0, true},
    {"r50-l4-3x3-512", 64, 512, 7, 7, 512, 3, 3, 1, 1, true},
    // VGG-A b64, every convolution but conv1 (C = 3)
    {"vgga-conv2-64-128", 64, 64, 112, 112, 128, 3, 3, 1, 1, true},
    {"vgga-conv3-128-256", 64, 128, 56, 56, 256, 3, 3, 1, 1, true},
    {"vgga-conv4-256-256", 64, 256, 56, 56, 256, 3, 3, 1, 1, true},
    {"vgga-conv5-256-512", 64, 256, 28, 28, 512, 3, 3, 1, 1, true},
    {"vgga-conv6-512-512", 64, 512, 28, 28, 512, 3, 3, 1, 1, true},
    {"vgga-conv7-512-14", 64, 512, 14, 14, 512, 3, 3, 1, 1, true},
    // GoogLeNet b128's narrow layers (K of 16-64: the backward filter's 64-row tiles)
    {"gnet-conv2-reduce-64-64", 128, 64, 56, 56, 64, 1, 1, 1, 0, true},
    {"gnet-3a-1x1-192-64", 128, 192, 28, 28, 64, 1, 1, 1, 0, true},
    {"gnet-3a-pool-proj-192-32", 128, 192, 28, 28, 32, 1, 1, 1, 0, true},
    {"gnet-3a-5x5-reduce-192-16", 128, 192, 28, 28, 16, 1, 1, 1, 0, true},
    {"gnet-4b-3x3-reduce-512-112", 128, 512, 14, 14, 112, 1, 1, 1, 0, true},
};

static cb_conv_params params_of(const layer &L, int n) { return lab_conv_params(n, L.c, L.h, L.w, L.k, L.r, L.s, L.stride, L.pad, 1); }
static double flops(const cb_conv_params &p) { return 2.0 * p.n * p.k * p.p * p.q * (double)p.c * p.r * p.s; }

// ---- buffers ----------------------------------------------------------------------------------

static bf16 *to_dev_bf16(const std::vector<float> &h) {
    std::vector<bf16> b(h.size());
    for (size_t i = 0; i < h.size(); i++) b[i] = __float2bfloat16_rn(h[i]);
    bf16 *d;
    CK(cudaMalloc(&d, b.size() * 2 + 16));
    CK(cudaMemcpy(d, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
    return d;
}
static float *to_dev_f32(const std::vector<float> &h) {
    float *d;
    CK(cudaMalloc(&d, h.size() * 4 + 16));
    CK(cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    return d;
}
// (n, a, b, c) -> (n, c, a, b): NHWC to NCHW, KRSC to KCRS
static std::vector<float> to_nchw(const std::vector<float> &v, int n, int a, int b, int c) {
    std::vector<float> o(v.size());
    for (long i = 0; i < n; i++)
        for (long y = 0; y < a; y++)
            for (long x = 0; x < b; x++)
                for (long z = 0; z < c; z++) o[((i * c + z) * a + y) * b + x] = v[((i * a + y) * b + x) * c + z];
    return o;
}

struct bufs {
    bf16 *x, *w, *y, *dy, *dx, *wt, *dwb; // NHWC / KRSC bf16; wt (C, R, S, K) the flipped filter; dwb cuDNN's dw
    float *dw;                           // (K, R, S, C) fp32, the wgmma backward filter's (KCRS for igemm-bf16)
    float *dwk, *dws;                    // (K, C, R, S) fp32 by way of the KRSC workspace dws (cb_wg_wgrad_kcrs)
    float *b, *xf, *wf, *yf, *dyf, *dxf; // bias; fp32 NCHW / KCRS copies for igemm-bf16
};
static bufs alloc_bufs(const cb_conv_params &p, unsigned long long seed, bool f32) {
    bufs B = {};
    size_t nx = (size_t)p.n * p.c * p.h * p.w, ny = (size_t)p.n * p.k * p.p * p.q, nw = (size_t)p.k * p.c * p.r * p.s;
    std::vector<float> x = lab_random_grid(nx, seed), w = lab_random_grid(nw, seed * 5 + 2), dy = lab_random_grid(ny, seed * 3 + 1);
    std::vector<float> b = lab_random_grid(p.k, seed * 7 + 3);
    B.x = to_dev_bf16(x), B.w = to_dev_bf16(w), B.dy = to_dev_bf16(dy), B.b = to_dev_f32(b);
    CK(cudaMalloc(&B.y, ny * 2)), CK(cudaMalloc(&B.dx, nx * 2)), CK(cudaMalloc(&B.wt, nw * 2));
    CK(cudaMalloc(&B.dwb, nw * 2)), CK(cudaMalloc(&B.dw, nw * 4)), CK(cudaMalloc(&B.dwk, nw * 4)), CK(cudaMalloc(&B.dws, nw * 4));
    cb_wg_flip(&p, B.w, B.wt);
    if (f32) {
        B.xf = to_dev_f32(to_nchw(x, p.n, p.h, p.w, p.c)), B.wf = to_dev_f32(to_nchw(w, p.k, p.r, p.s, p.c));
        B.dyf = to_dev_f32(to_nchw(dy, p.n, p.p, p.q, p.k));
        CK(cudaMalloc(&B.yf, ny * 4)), CK(cudaMalloc(&B.dxf, nx * 4));
    }
    CK(cudaDeviceSynchronize());
    return B;
}
static void free_bufs(bufs &B) {
    void *all[] = {B.x, B.w, B.y, B.dy, B.dx, B.wt, B.dwb, B.dw, B.dwk, B.dws, B.b, B.xf, B.wf, B.yf, B.dyf, B.dxf};
    for (void *q : all) cudaFree(q);
}

static bool bwd_ok(const cb_conv_params &p) { return p.stride_h == 1 && p.stride_w == 1 && p.k % 64 == 0 && p.c % 8 == 0; }

// the backward filter's tiles: 0 (picked), 1, 2, 4 (cp.async), 6-10 (TMA: 128x128, 128x256, 256x128, 64x256, 64x128)
// LAB_SKIP=6,7,8: tiles left out of the check and the timing
static bool skipped(int t) {
    const char *e = getenv("LAB_SKIP");
    if (!e) return false;
    char key[8];
    snprintf(key, sizeof key, ",%d,", t);
    std::string list = std::string(",") + e + ",";
    return list.find(key) != std::string::npos;
}
static bool tile_runs(int ph, int t) { return !skipped(t) && (ph < 2 || t == 0 || t == 1 || t == 2 || t == 4 || t >= 6); }

static void run_wg(int ph, const cb_conv_params &p, const bufs &B, int tile, bool relu) {
    if (ph == 3) { // the backward filter into KCRS (the engine's master gradient)
        cb_wg_wgrad_args g = cb_wg_wgrad_args_make(&p);
        g.x = B.x, g.dy = B.dy, g.dw = B.dwk;
        cb_wg_wgrad_kcrs(g, B.dws, tile);
        return;
    }
    if (ph == 2) {
        cb_wg_wgrad_args g = cb_wg_wgrad_args_make(&p);
        g.x = B.x, g.dy = B.dy, g.dw = B.dw;
        cb_wg_wgrad_launch<false>(g, tile);
        return;
    }
    cb_wg_args a = ph == 0 ? cb_wg_args_fwd(&p) : cb_wg_args_bwd_data(&p);
    if (ph == 0) a.x = B.x, a.w = B.w, a.bias = B.b, a.y = B.y, a.relu = relu;
    else a.x = B.dy, a.w = B.wt, a.y = B.dx;
    cb_wg_launch<false>(a, tile);
}

// the library's tiles (0 the picked one; 6-10 TMA-fed)
enum { LAB_TILES = CB_WG_TILES, WS_TILES = CB_WG_TILES - CB_WG_TMA0 };

static const char *phase_name[3] = {"fwd", "bwd-data", "bwd-filt"};
static const double TOL = 1.5e-2;

static int check_all(const char *only) {
    int fails = 0, runs = 0;
    for (const layer &L : layers) {
        if (only && !strstr(only, L.name)) continue;
        cb_conv_params p = params_of(L, L.big ? 2 : L.n);
        if (!cb_wg_shape_ok(&p)) {
            printf("check %-22s declined by cb_wg_shape_ok\n", L.name);
            continue;
        }
        bufs B = alloc_bufs(p, 12345 + runs, false);
        size_t nx = (size_t)p.n * p.c * p.h * p.w, ny = (size_t)p.n * p.k * p.p * p.q, nw = (size_t)p.k * p.c * p.r * p.s;
        double *ry, *rdx, *rdw;
        CK(cudaMalloc(&ry, ny * 8)), CK(cudaMalloc(&rdx, nx * 8)), CK(cudaMalloc(&rdw, nw * 8));
        ref_fwd<<<1024, 256>>>(p, B.x, B.w, B.b, ry);
        ref_bwd_data<<<1024, 256>>>(p, B.dy, B.w, rdx);
        ref_bwd_filter<<<(unsigned)nw, 256>>>(p, B.x, B.dy, rdw);
        CK(cudaDeviceSynchronize());
        bool relu = !L.big;
        printf("check %-22s n%d c%d %dx%d k%d %dx%d s%d pad %d,%d -> %dx%d\n", L.name, p.n, p.c, p.h, p.w, p.k, p.r, p.s, p.stride_h,
               p.pad_top, p.pad_left, p.p, p.q);
        for (int ph = 0; ph < 3; ph++) {
            if (ph == 1 && !bwd_ok(p)) continue;
            for (int t = 0; t < LAB_TILES; t++)
                for (int few = 0; few < 2; few++) { // few: 3 blocks run every tile (each crosses tile boundaries)
                    if (!tile_runs(ph, t)) continue;
                    cb_wg_max_blocks = few ? 3 : 0;
                    CK(cudaMemset(B.y, 0xff, ny * 2)), CK(cudaMemset(B.dx, 0xff, nx * 2)); // NaN: every element must be written
                    CK(cudaMemset(B.dw, 0xff, nw * 4));                                     // (the backward filter zeroes it)
                    run_wg(ph, p, B, t, relu);
                    CK(cudaGetLastError());
                    CK(cudaDeviceSynchronize());
                    double e = ph == 0 ? lab_nerr(B.y, ry, ny, relu) : ph == 1 ? lab_nerr(B.dx, rdx, nx, false) : lab_nerr(B.dw, rdw, nw, false);
                    bool ok = e <= TOL;
                    runs++, fails += !ok;
                    printf("  %s tile %d %-8s%s err %.2e\n", ok ? "ok  " : "FAIL", t, phase_name[ph], few ? " 3 blocks" : "", e);
                    if (ph == 2 && t == 0) { // and into KCRS, by way of the KRSC workspace
                        CK(cudaMemset(B.dwk, 0xff, nw * 4)), CK(cudaMemset(B.dws, 0xff, nw * 4));
                        run_wg(3, p, B, 0, false);
                        CK(cudaGetLastError());
                        CK(cudaDeviceSynchronize());
                        e = lab_nerr_kcrs(B.dwk, rdw, p), ok = e <= TOL, runs++, fails += !ok;
                        printf("  %s tile 0 bwd-filt KCRS%s err %.2e\n", ok ? "ok  " : "FAIL", few ? " 3 blocks" : "", e);
                        cb_wg_red_scalar = 1; // the atomics one float each (before stop 44, 2026-11-28)
                        CK(cudaMemset(B.dw, 0xff, nw * 4));
                        run_wg(2, p, B, 0, false);
                        CK(cudaGetLastError());
                        CK(cudaDeviceSynchronize());
                        cb_wg_red_scalar = 0;
                        e = lab_nerr(B.dw, rdw, nw, false), ok = e <= TOL, runs++, fails += !ok;
                        printf("  %s tile 0 bwd-filt scalar atomics%s err %.2e\n", ok ? "ok  " : "FAIL", few ? " 3 blocks" : "", e);
                    }
                }
            cb_wg_max_blocks = 0;
        }
        cudaFree(ry), cudaFree(rdx), cudaFree(rdw);
        free_bufs(B);
    }
    printf("check: %d runs, %d failed\n", runs, fails);
    return fails;
}

// ---- timing -----------------------------------------------------------------------------------


static void time_all(const char *only, const char *csv_path) {
    cudnnHandle_t h;
    DNN(cudnnCreate(&h));
    size_t wsz = 1024ull << 20;
    void *ws = NULL;
    CK(cudaMalloc(&ws, wsz));
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv) fprintf(csv, "layer,phase,gflop,version,ms,tflops\n");
    double lg_dnn[3] = {0}, lg_own[3] = {0}, lg_pl[3] = {0}, lg_st[3] = {0}, lg_ws[WS_TILES][2] = {{0}};
    int cnt[3] = {0}, cpl[3] = {0}, cst[3] = {0}, cws[WS_TILES][2] = {{0}};
    std::vector<std::string> summary;
    for (const layer &L : layers) {
        if (!L.big || (only && !strstr(only, L.name))) continue;
        cb_conv_params p = params_of(L, L.n);
        if (!cb_wg_shape_ok(&p)) continue;
        bufs B = alloc_bufs(p, 777, true);
        double gf = flops(p) / 1e9;
        const bool quick = getenv("LAB_QUICK") != NULL; // the tiles of the forward and backward data alone
        for (int ph = 0; ph < 3; ph++) {
            if (ph == 1 && !bwd_ok(p)) continue;
            double tms[LAB_TILES];
            printf("%-24s %-8s %7.1f GF | tiles", L.name, phase_name[ph], gf);
            for (int t = 0; t < LAB_TILES; t++) {
                tms[t] = -1;
                if (!tile_runs(ph, t)) continue;
                tms[t] = time_ms([&] { run_wg(ph, p, B, t, false); }, 10, 2);
                printf(" %d:%.3f", t, tms[t]);
                if (csv) fprintf(csv, "%s,%s,%.3f,wgmma-t%d,%.4f,%.2f\n", L.name, phase_name[ph], gf, t, tms[t], gf / tms[t]);
            }
            if (quick) { // and the pick among cb_wgmma_conv_kernel's tiles (as before TMA)
                cb_wg_tma = 0;
                double tc = time_ms([&] { run_wg(ph, p, B, 0, false); }, 10, 2);
                cb_wg_tma = 1;
                printf(" cp.async-picked:%.3f", tc);
                if (csv && tc > 0) fprintf(csv, "%s,%s,%.3f,wgmma-cpasync,%.4f,%.2f\n", L.name, phase_name[ph], gf, tc, gf / tc);
                if (ph == 2) { // into KCRS as the engine's master gradient (by way of the KRSC workspace)
                    double tk = time_ms([&] { run_wg(3, p, B, 0, false); }, 10, 2);
                    printf(" kcrs:%.3f", tk);
                    if (csv && tk > 0) fprintf(csv, "%s,%s,%.3f,wgmma-kcrs,%.4f,%.2f\n", L.name, phase_name[ph], gf, tk, gf / tk);
                }
                printf("\n");
                for (int t = CB_WG_TMA0; t < LAB_TILES; t++)
                    if (tms[t] > 0 && tms[0] > 0) lg_ws[t - CB_WG_TMA0][ph] += log(tms[t] / tms[0]), cws[t - CB_WG_TMA0][ph]++;
                continue;
            }
            if (ph == 2) { // the atomics one float each (before stop 44, 2026-11-28), and the split's epilogue weight swept
                cb_wg_red_scalar = 1;
                double ts = time_ms([&] { run_wg(ph, p, B, 0, false); }, 10, 2);
                cb_wg_red_scalar = 0;
                printf(" scalar:%.3f", ts);
                if (csv) fprintf(csv, "%s,%s,%.3f,wgmma-red-scalar,%.4f,%.2f\n", L.name, phase_name[ph], gf, ts, gf / ts);
                for (double ep : {1.0, 2.0, 3.0, 8.0}) {
                    cb_wg_wgrad_epi = ep;
                    double te = time_ms([&] { run_wg(ph, p, B, 0, false); }, 10, 2);
                    cb_wg_wgrad_epi = 5;
                    printf(" epi%g:%.3f", ep, te);
                    if (csv) fprintf(csv, "%s,%s,%.3f,wgmma-epi%g,%.4f,%.2f\n", L.name, phase_name[ph], gf, ep, te, gf / te);
                }
            }
            if (ph == 2) // the backward filter's pixel split: about 1, 2 (the rule before 2026-11-28's wave model) or 4 units per SM
                for (int u : {1, 2, 4}) {
                    cb_wg_wgrad_units = u;
                    double tu = time_ms([&] { run_wg(ph, p, B, 0, false); }, 10, 2);
                    cb_wg_wgrad_units = 0;
                    printf(" units%d:%.3f", u, tu);
                    if (csv) fprintf(csv, "%s,%s,%.3f,wgmma-units%d,%.4f,%.2f\n", L.name, phase_name[ph], gf, u, tu, gf / tu);
                }
            // the store as before 2026-11-28 (late): fragments straight to global memory, resp. the
            // backward filter's atomics straight into KCRS, against the staged epilogue resp. the KRSC workspace
            double tnew = -1, told = -1;
            if (ph < 2) {
                cb_wg_direct = 1;
                told = time_ms([&] { run_wg(ph, p, B, 0, false); }, 10, 2);
                cb_wg_direct = 0;
                tnew = tms[0];
                printf(" direct:%.3f", told);
            } else {
                tnew = time_ms([&] { run_wg(3, p, B, 0, false); }, 10, 2);
                cb_wg_kcrs_direct = 1;
                told = time_ms([&] { run_wg(3, p, B, 0, false); }, 10, 2);
                cb_wg_kcrs_direct = 0;
                printf(" kcrs:%.3f kcrs-direct:%.3f", tnew, told);
            }
            if (csv) fprintf(csv, "%s,%s,%.3f,%s,%.4f,%.2f\n%s,%s,%.3f,%s,%.4f,%.2f\n", L.name, phase_name[ph], gf, ph < 2 ? "wgmma-staged" : "wgmma-kcrs",
                             tnew, gf / tnew, L.name, phase_name[ph], gf, ph < 2 ? "wgmma-direct" : "wgmma-kcrs-direct", told, gf / told);
            if (tnew > 0 && told > 0) lg_st[ph] += log(tnew / told), cst[ph]++;
            for (int t = CB_WG_TMA0; ph < 2 && t < LAB_TILES; t++)
                if (tms[t] > 0 && tms[0] > 0) lg_ws[t - CB_WG_TMA0][ph] += log(tms[t] / tms[0]), cws[t - CB_WG_TMA0][ph]++;
            cb_wg_persist = 0; // every tile its own block: the kernel before 2026-11-28
            double plain = time_ms([&] { run_wg(ph, p, B, 0, false); }, 10, 2);
            cb_wg_persist = 1;
            printf(" plain:%.3f", plain);
            if (csv) fprintf(csv, "%s,%s,%.3f,wgmma-plain,%.4f,%.2f\n", L.name, phase_name[ph], gf, plain, gf / plain);
            if (getenv("LAB_OWN_ONLY")) { // the wgmma variants alone (no igemm-bf16, no cuDNN Find)
                printf("\n");
                if (tms[0] > 0 && plain > 0) lg_pl[ph] += log(tms[0] / plain), cpl[ph]++;
                char line[200];
                snprintf(line, sizeof line, "%-24s %-8s %7.1f GF  wgmma %7.3f ms %5.0f TF  plain %7.3f ms %5.0f TF  wgmma/plain %.3f", L.name,
                         phase_name[ph], gf, tms[0], gf / tms[0], plain, gf / plain, tms[0] / plain);
                summary.push_back(line);
                continue;
            }
            cb_tc_cfg c = {CB_TC_BF16, 0, 0};
            double old = time_ms([&] {
                if (ph == 0) cb_tc_conv_forward(c, &p, B.xf, B.wf, NULL, B.yf, false);
                else if (ph == 1) cb_tc_conv_backward_data(c, &p, B.dyf, B.wf, B.dxf);
                else cb_tc_conv_backward_filter(c, &p, B.xf, B.dyf, B.dw);
            }, 10, 2);
            int algo;
            double dnn = lab_dnn_best(h, p, ph, CUDNN_DATA_BFLOAT16, B.x, B.w, B.y, B.dy, B.dx, B.dwb, ws, wsz, &algo);
            printf(" | igemm-bf16 %.3f cudnn %.3f (algo %d)\n", old, dnn, algo);
            if (csv) {
                fprintf(csv, "%s,%s,%.3f,igemm-bf16,%.4f,%.2f\n", L.name, phase_name[ph], gf, old, gf / old);
                fprintf(csv, "%s,%s,%.3f,cudnn-%d,%.4f,%.2f\n", L.name, phase_name[ph], gf, algo, dnn, gf / dnn);
            }
            double best = 1e30;
            int bt = 0;
            for (int t = 1; t < LAB_TILES; t++)
                if (tms[t] > 0 && tms[t] < best) best = tms[t], bt = t;
            char line[400];
            snprintf(line, sizeof line, "%-24s %-8s %7.1f GF  wgmma %7.3f ms %5.0f TF (tile %d; best %d %.3f; plain %.3f)  igemm-bf16 %7.3f %5.0f TF  cudnn %7.3f %5.0f TF  wg/old %.2f  wg/cudnn %.2f",
                     L.name, phase_name[ph], gf, tms[0], gf / tms[0], ph == 2 ? -1 : cb_wg_pick_tile(ph == 0 ? cb_wg_args_fwd(&p) : cb_wg_args_bwd_data(&p)), bt, best, plain,
                     old, gf / old, dnn, gf / dnn, tms[0] / old, dnn > 0 ? tms[0] / dnn : 0);
            summary.push_back(line);
            if (tms[0] > 0 && old > 0 && dnn > 0) lg_own[ph] += log(tms[0] / old), lg_dnn[ph] += log(tms[0] / dnn), cnt[ph]++;
            if (tms[0] > 0 && plain > 0) lg_pl[ph] += log(tms[0] / plain), cpl[ph]++;
        }
        free_bufs(B);
    }
    printf("\n== summary: wgmma (engine tile) vs igemm-bf16 (mma.sync, fp32 NCHW) and cuDNN best (bf16 NHWC); ratios are time / time\n");
    for (auto &s : summary) printf("%s\n", s.c_str());
    for (int ph = 0; ph < 3; ph++)
        printf("geomean %-8s over %2d layers: wgmma/igemm-bf16 %.3f  wgmma/cudnn %.3f  wgmma/plain (one block per tile) %.3f\n", phase_name[ph],
               cnt[ph], cnt[ph] ? exp(lg_own[ph] / cnt[ph]) : 0, cnt[ph] ? exp(lg_dnn[ph] / cnt[ph]) : 0, cpl[ph] ? exp(lg_pl[ph] / cpl[ph]) : 0);
    for (int ph = 0; ph < 3; ph++)
        printf("geomean %-8s over %2d layers: %s %.3f\n", phase_name[ph], cst[ph], ph < 2 ? "staged epilogue / direct stores" : "KCRS by way of KRSC / atomics into KCRS",
               cst[ph] ? exp(lg_st[ph] / cst[ph]) : 0);
    for (int t = CB_WG_TMA0; t < LAB_TILES; t++)
        for (int ph = 0; ph < 2; ph++)
            printf("geomean %-8s over %2d layers: TMA tile %d / the picked tile %.3f\n", phase_name[ph], cws[t - CB_WG_TMA0][ph], t,
                   cws[t - CB_WG_TMA0][ph] ? exp(lg_ws[t - CB_WG_TMA0][ph] / cws[t - CB_WG_TMA0][ph]) : 0);
    if (csv) fclose(csv);
    cudaFree(ws);
    cudnnDestroy(h);
}

int main(int argc, char **argv) { return lab_main(argc, argv, check_all, time_all, true); }
