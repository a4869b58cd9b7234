// Lab for the 128x128 implicit-GEMM convolution kernels (src/cuda/igemm_tc.cuh): checks every
// version against a float64 direct convolution on the GPU (odd shapes, and the real layers at
// batch 2), then times each version and cuDNN's best (cudnnFind*Ex; FMA math for fp32, tensor-op
// math for tf32, BFLOAT16 tensors for bf16) on the layers of VGG-16 b16, AlexNet b128 and
// convnet-benchmarks L1-L5 b128, printing TFLOP/s and own/cuDNN per layer and phase.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/igemm_lab.cu -lcudnn -o igemm_lab
//   ./igemm_lab [check] [time] [only=NAME,NAME] [csv=FILE]
// Tolerances (normalised error ||own - ref|| / ||ref||): fp32 1e-5, tf32 5e-3, bf16 1.5e-2.
#include "cuda/conv_bwd_direct.cuh"
#include "cuda/igemm_tc.cuh"

#include "lab.cuh"

#include <algorithm>
#include <math.h>
#include <string>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>


// ---- shapes -----------------------------------------------------------------------------------

struct layer {
    const char *name;
    int n, c, h, w, k, r, s, stride, pad, groups;
    bool big;         // timed (and checked at batch 2)
};

static const layer layers[] = {
    // odd shapes (checked only)
    {"odd-3x3-c3k5", 2, 3, 13, 11, 5, 3, 3, 1, 1, 1, false},
    {"odd-20x5-s2", 1, 5, 37, 23, 13, 20, 5, 2, -1, 1, false}, // pad -1: TF SAME (asymmetric)
    {"odd-4x4-s2-same", 2, 13, 16, 16, 5, 4, 4, 2, -1, 1, false},
    {"odd-5x5-s2-valid", 3, 5, 19, 17, 13, 5, 5, 2, 0, 1, false},
    {"odd-groups2", 2, 6, 9, 9, 10, 3, 3, 1, 1, 2, false},
    {"odd-1x1", 4, 64, 14, 14, 96, 1, 1, 1, 0, 1, false},
    {"odd-9x9-c5", 2, 5, 24, 20, 12, 9, 9, 1, 0, 1, false},
    {"odd-7x7-c1", 3, 1, 86, 86, 4, 7, 7, 1, 0, 1, false},
    {"odd-groups4-s2", 3, 8, 21, 19, 12, 3, 3, 2, 1, 4, false},
    {"odd-1x1-s2-c300", 2, 300, 9, 9, 140, 1, 1, 2, 0, 1, false},
    // timed layers
    {"vgg-64-224", 16, 64, 224, 224, 64, 3, 3, 1, 1, 1, true},
    {"vgg-256-56", 16, 256, 56, 56, 256, 3, 3, 1, 1, 1, true},
    {"vgg-512-14", 16, 512, 14, 14, 512, 3, 3, 1, 1, 1, true},
    {"alex-conv1", 128, 3, 224, 224, 64, 11, 11, 4, 2, 1, true},
    {"alex-conv2", 128, 64, 27, 27, 192, 5, 5, 1, 2, 1, true},
    {"alex-conv3", 128, 192, 13, 13, 384, 3, 3, 1, 1, 1, true},
    {"alex-conv4", 128, 384, 13, 13, 256, 3, 3, 1, 1, 1, true},
    {"alex-conv5", 128, 256, 13, 13, 256, 3, 3, 1, 1, 1, true},
    {"L1", 128, 3, 128, 128, 96, 11, 11, 1, 0, 1, true},
    {"L2", 128, 64, 64, 64, 128, 9, 9, 1, 0, 1, true},
    {"L3", 128, 128, 32, 32, 128, 9, 9, 1, 0, 1, true},
    {"L4", 128, 128, 16, 16, 128, 7, 7, 1, 0, 1, true},
    {"L5", 128, 384, 13, 13, 384, 3, 3, 1, 1, 1, true},
};

static cb_conv_params params_of(const layer &L, int n) { return lab_conv_params(n, L.c, L.h, L.w, L.k, L.r, L.s, L.stride, L.pad, L.groups); }

static double flops(const cb_conv_params &p) { return 2.0 * p.n * p.k * p.p * p.q * (double)(p.c / p.groups) * p.r * p.s; }

// ---- float64 reference (direct, one output per thread; backward filter one block per output) ----

__global__ void ref_fwd(cb_conv_params p, const float *x, const float *w, const float *b, double *y) {
    long total = (long)p.n * p.k * p.p * p.q;
    int cg = p.c / p.groups, kg = p.k / p.groups;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        int oq = i % p.q, op = (i / p.q) % p.p, k = (i / ((long)p.p * p.q)) % p.k, n = i / ((long)p.p * p.q * p.k);
        int g = k / kg;
        double acc = b ? b[k] : 0.0;
        for (int c = 0; c < cg; c++)
            for (int r = 0; r < p.r; r++) {
                int ih = op * p.stride_h - p.pad_top + r;
                if (ih < 0 || ih >= p.h) continue;
                for (int s = 0; s < p.s; s++) {
                    int iw = oq * p.stride_w - p.pad_left + s;
                    if (iw < 0 || iw >= p.w) continue;
                    acc += (double)w[(((long)k * cg + c) * p.r + r) * p.s + s] * x[(((long)n * p.c + g * cg + c) * p.h + ih) * p.w + iw];
                }
            }
        y[i] = acc;
    }
}

__global__ void ref_bwd_data(cb_conv_params p, const float *dy, const float *w, double *dx) {
    long total = (long)p.n * p.c * p.h * p.w;
    int cg = p.c / p.groups, kg = p.k / p.groups;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        int iw = i % p.w, ih = (i / p.w) % p.h, c = (i / ((long)p.h * p.w)) % p.c, n = i / ((long)p.h * p.w * p.c);
        int g = c / cg, cl = c - g * cg;
        double acc = 0;
        for (int kk = 0; kk < kg; kk++)
            for (int r = 0; r < p.r; r++) {
                int th = ih + p.pad_top - r;
                if (th < 0 || th % p.stride_h) continue;
                int oh = th / p.stride_h;
                if (oh >= p.p) continue;
                for (int s = 0; s < p.s; s++) {
                    int tw = iw + p.pad_left - s;
                    if (tw < 0 || tw % p.stride_w) continue;
                    int ow = tw / p.stride_w;
                    if (ow >= p.q) continue;
                    int k = g * kg + kk;
                    acc += (double)w[(((long)k * cg + cl) * p.r + r) * p.s + s] * dy[(((long)n * p.k + k) * p.p + oh) * p.q + ow];
                }
            }
        dx[i] = acc;
    }
}

__global__ void ref_bwd_filter(cb_conv_params p, const float *x, const float *dy, double *dw) {
    int cg = p.c / p.groups, kg = p.k / p.groups;
    long i = blockIdx.x; // (k, c, r, s)
    int s = i % p.s, r = (i / p.s) % p.r, c = (i / ((long)p.s * p.r)) % cg, k = i / ((long)p.s * p.r * cg);
    int g = k / kg;
    long npq = (long)p.n * p.p * p.q;
    double acc = 0;
    for (long j = threadIdx.x; j < npq; j += blockDim.x) {
        int oq = j % p.q, op = (j / p.q) % p.p, n = j / ((long)p.p * p.q);
        int ih = op * p.stride_h - p.pad_top + r, iw = oq * p.stride_w - p.pad_left + s;
        if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
        acc += (double)dy[(((long)n * p.k + k) * p.p + op) * p.q + oq] * x[(((long)n * p.c + g * cg + c) * p.h + ih) * p.w + iw];
    }
    acc = lab_block_sum256(acc);
    if (threadIdx.x == 0) dw[i] = acc;
}

// ---- helpers ----------------------------------------------------------------------------------

static void fill_random(float *d, size_t n, unsigned long long seed) {
    std::vector<float> h(n);
    for (size_t i = 0; i < n; i++) {
        seed ^= seed >> 12, seed ^= seed << 25, seed ^= seed >> 27;
        h[i] = (float)((seed * 2685821657736338717ULL) >> 40) / 16777216.0f * 2.f - 1.f;
    }
    CK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
}

static double nerr(const float *own_d, const double *ref_d, size_t n, bool relu) { return lab_nerr(own_d, ref_d, n, relu); }

struct version {
    const char *name;
    cb_tc_kind kind;
    int version, tile; // igemm_tc.cuh's cb_tc_cfg (version 0: the engine's choice); -1: the direct backward data
    bool engine;       // what an engine algorithm runs (conv_igemm_tc.cu); the rest are for comparison
};
static const version versions[] = {
    {"simt", CB_TC_SIMT, 0, 0, true},        {"direct", CB_TC_SIMT, -1, 0, true},   {"tf32", CB_TC_TF32, 0, 0, true},
    {"bf16", CB_TC_BF16, 0, 0, true},        {"simt-v2-128", CB_TC_SIMT, 2, 1, false}, {"tf32-v1", CB_TC_TF32, 1, 1, false},
    {"tf32-v2", CB_TC_TF32, 2, 0, false},    {"tf32-v2-128", CB_TC_TF32, 2, 1, false}, {"bf16-v1", CB_TC_BF16, 1, 1, false},
    {"bf16-v2", CB_TC_BF16, 2, 0, false},    {"bf16-v2-128", CB_TC_BF16, 2, 1, false},
};
enum { NV = sizeof versions / sizeof versions[0] };
static const char *kind_name(cb_tc_kind k) { return k == CB_TC_SIMT ? "fp32" : k == CB_TC_TF32 ? "tf32" : "bf16"; }
static bool version_runs(const version &v, int ph, const cb_conv_params &p) { return v.version >= 0 || (ph == 1 && cb_conv_bwd_data_direct_supports(&p)); }
static double tol_of(cb_tc_kind k) { return k == CB_TC_SIMT ? 1e-5 : k == CB_TC_TF32 ? 5e-3 : 1.5e-2; }

struct bufs {
    float *x, *w, *b, *y, *dy, *dx, *dw;
};

static void run_own(const version &v, int ph, const cb_conv_params &p, const bufs &B, bool relu) {
    cb_tc_cfg c = {v.kind, v.version, v.tile};
    if (v.version < 0) cb_conv_bwd_data_direct(&p, B.dy, B.w, B.dx);
    else if (ph == 0) cb_tc_conv_forward(c, &p, B.x, B.w, B.b, B.y, relu);
    else if (ph == 1) cb_tc_conv_backward_data(c, &p, B.dy, B.w, B.dx);
    else cb_tc_conv_backward_filter(c, &p, B.x, B.dy, B.dw);
}

static bufs alloc_bufs(const cb_conv_params &p, unsigned long long seed) {
    bufs B;
    size_t nx = (size_t)p.n * p.c * p.h * p.w, ny = (size_t)p.n * p.k * p.p * p.q, nw = (size_t)p.k * (p.c / p.groups) * p.r * p.s;
    CK(cudaMalloc(&B.x, nx * 4)), CK(cudaMalloc(&B.dx, nx * 4));
    CK(cudaMalloc(&B.y, ny * 4)), CK(cudaMalloc(&B.dy, ny * 4));
    CK(cudaMalloc(&B.w, nw * 4)), CK(cudaMalloc(&B.dw, nw * 4)), CK(cudaMalloc(&B.b, p.k * 4));
    fill_random(B.x, nx, seed), fill_random(B.dy, ny, seed * 3 + 1), fill_random(B.w, nw, seed * 5 + 2);
    fill_random(B.b, p.k, seed * 7 + 3);
    return B;
}
static void free_bufs(bufs &B) {
    cudaFree(B.x), cudaFree(B.dx), cudaFree(B.y), cudaFree(B.dy), cudaFree(B.w), cudaFree(B.dw), cudaFree(B.b);
}

static const char *phase_name[3] = {"fwd", "bwd-data", "bwd-filter"};

// ---- check ------------------------------------------------------------------------------------

static int check_all(const char *only) {
    int fails = 0, runs = 0;
    for (const layer &L : layers) {
        if (only && !strstr(only, L.name)) continue;
        cb_conv_params p = params_of(L, L.big ? 2 : L.n);
        bufs B = alloc_bufs(p, 12345 + runs);
        size_t nx = (size_t)p.n * p.c * p.h * p.w, ny = (size_t)p.n * p.k * p.p * p.q, nw = (size_t)p.k * (p.c / p.groups) * p.r * p.s;
        double *ry, *rdx, *rdw;
        CK(cudaMalloc(&ry, ny * 8)), CK(cudaMalloc(&rdx, nx * 8)), CK(cudaMalloc(&rdw, nw * 8));
        ref_fwd<<<1024, 256>>>(p, B.x, B.w, B.b, ry);
        ref_bwd_data<<<1024, 256>>>(p, B.dy, B.w, rdx);
        ref_bwd_filter<<<(unsigned)nw, 256>>>(p, B.x, B.dy, rdw);
        CK(cudaDeviceSynchronize());
        bool relu = !L.big; // fused relu on the odd shapes
        printf("check %-16s n%d c%d %dx%d k%d %dx%d s%d pad %d,%d g%d -> %dx%d\n", L.name, p.n, p.c, p.h, p.w, p.k, p.r, p.s,
               p.stride_h, p.pad_top, p.pad_left, p.groups, p.p, p.q);
        for (int v = 0; v < NV; v++)
            for (int ph = 0; ph < 3; ph++) {
                if (!version_runs(versions[v], ph, p)) continue;
                CK(cudaMemset(B.y, 0xff, ny * 4)), CK(cudaMemset(B.dx, 0xff, nx * 4)), CK(cudaMemset(B.dw, 0xff, nw * 4));
                run_own(versions[v], ph, p, B, relu);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                double e = ph == 0 ? nerr(B.y, ry, ny, relu) : ph == 1 ? nerr(B.dx, rdx, nx, false) : nerr(B.dw, rdw, nw, false);
                bool ok = e <= tol_of(versions[v].kind);
                runs++;
                fails += !ok;
                if (!ok || L.big) printf("  %s %-13s %-10s err %.2e tol %.0e\n", ok ? "ok  " : "FAIL", versions[v].name, phase_name[ph], e, tol_of(versions[v].kind));
            }
        cudaFree(ry), cudaFree(rdx), cudaFree(rdw);
        free_bufs(B);
    }
    printf("check: %d runs, %d failed\n", runs, fails);
    return fails;
}

// ---- timing -----------------------------------------------------------------------------------


__global__ void to_bf16(const float *a, __nv_bfloat16 *b, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) b[i] = __float2bfloat16_rn(a[i]);
}

struct dnn_result {
    double ms;
    int algo;
};

// cuDNN's best for one phase at precision prec (0 fp32 FMA, 1 tf32, 2 bf16): Find, then our own timing
static dnn_result dnn_best(cudnnHandle_t h, const cb_conv_params &p, int ph, int prec, const bufs &B, void *ws, size_t wsz) {
    dnn_result res = {-1, -1};
    cudnnDataType_t dt = prec == 2 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    size_t nx = (size_t)p.n * p.c * p.h * p.w, ny = (size_t)p.n * p.k * p.p * p.q, nw = (size_t)p.k * (p.c / p.groups) * p.r * p.s;
    void *x = B.x, *w = B.w, *y = B.y, *dy = B.dy, *dx = B.dx, *dw = B.dw;
    void *hb[6] = {0};
    if (prec == 2) {
        size_t sz[6] = {nx, nw, ny, ny, nx, nw};
        const float *src[6] = {B.x, B.w, B.y, B.dy, B.dx, B.dw};
        for (int i = 0; i < 6; i++) {
            CK(cudaMalloc(&hb[i], sz[i] * 2));
            to_bf16<<<1024, 256>>>(src[i], (__nv_bfloat16 *)hb[i], sz[i]);
        }
        x = hb[0], w = hb[1], y = hb[2], dy = hb[3], dx = hb[4], dw = hb[5];
    }
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnCreateTensorDescriptor(&xd), cudnnCreateTensorDescriptor(&yd), cudnnCreateFilterDescriptor(&wd);
    cudnnCreateConvolutionDescriptor(&cd);
    DNN(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, dt, p.n, p.c, p.h, p.w));
    DNN(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, dt, p.n, p.k, p.p, p.q));
    DNN(cudnnSetFilter4dDescriptor(wd, dt, CUDNN_TENSOR_NCHW, p.k, p.c / p.groups, p.r, p.s));
    DNN(cudnnSetConvolution2dDescriptor(cd, p.pad_top, p.pad_left, p.stride_h, p.stride_w, 1, 1, CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT));
    DNN(cudnnSetConvolutionGroupCount(cd, p.groups));
    DNN(cudnnSetConvolutionMathType(cd, prec == 0 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
    float one = 1.f, zero = 0.f;
    int ret = 0;
    bool ok = false;
    if (ph == 0) {
        cudnnConvolutionFwdAlgoPerf_t pf[10];
        if (DNN(cudnnFindConvolutionForwardAlgorithmEx(h, xd, x, wd, w, cd, yd, y, 10, &ret, pf, ws, wsz)))
            for (int j = 0; j < ret && !ok; j++)
                if (pf[j].status == CUDNN_STATUS_SUCCESS) {
                    cudnnSetConvolutionMathType(cd, pf[j].mathType);
                    cudnnConvolutionFwdAlgo_t a = pf[j].algo;
                    res.algo = a, ok = true;
                    res.ms = time_ms([&] { cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, a, ws, wsz, &zero, yd, y); }, 5);
                }
    } else if (ph == 1) {
        cudnnConvolutionBwdDataAlgoPerf_t pf[10];
        if (DNN(cudnnFindConvolutionBackwardDataAlgorithmEx(h, wd, w, yd, dy, cd, xd, dx, 10, &ret, pf, ws, wsz)))
            for (int j = 0; j < ret && !ok; j++)
                if (pf[j].status == CUDNN_STATUS_SUCCESS) {
                    cudnnSetConvolutionMathType(cd, pf[j].mathType);
                    cudnnConvolutionBwdDataAlgo_t a = pf[j].algo;
                    res.algo = a, ok = true;
                    res.ms = time_ms([&] { cudnnConvolutionBackwardData(h, &one, wd, w, yd, dy, cd, a, ws, wsz, &zero, xd, dx); }, 5);
                }
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t pf[10];
        if (DNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, xd, x, yd, dy, cd, wd, dw, 10, &ret, pf, ws, wsz)))
            for (int j = 0; j < ret && !ok; j++)
                if (pf[j].status == CUDNN_STATUS_SUCCESS) {
                    cudnnSetConvolutionMathType(cd, pf[j].mathType);
                    cudnnConvolutionBwdFilterAlgo_t a = pf[j].algo;
                    res.algo = a, ok = true;
                    res.ms = time_ms([&] { cudnnConvolutionBackwardFilter(h, &one, xd, x, yd, dy, cd, a, ws, wsz, &zero, wd, dw); }, 5);
                }
    }
    cudaGetLastError();
    cudnnDestroyTensorDescriptor(xd), cudnnDestroyTensorDescriptor(yd), cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    for (int i = 0; i < 6; i++) cudaFree(hb[i]);
    return res;
}

static const char *dnn_algo_name(int ph, int a) {
    static const char *f[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char *d[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char *w[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
    if (a < 0) return "-";
    return ph == 0 ? (a < 8 ? f[a] : "?") : ph == 1 ? (a < 6 ? d[a] : "?") : (a < 7 ? w[a] : "?");
}

static void time_all(const char *only, const char *csv_path) {
    cudnnHandle_t h;
    DNN(cudnnCreate(&h));
    size_t wsz = 4096ull << 20;
    void *ws = NULL;
    CK(cudaMalloc(&ws, wsz));
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv) fprintf(csv, "layer,phase,gflop,version,ms,tflops\n");
    double logsum[3] = {0}; // log(own / cuDNN) per precision
    int cnt[3] = {0};
    std::vector<std::string> summary;
    for (const layer &L : layers) {
        if (!L.big || (only && !strstr(only, L.name))) continue;
        cb_conv_params p = params_of(L, L.n);
        bufs B = alloc_bufs(p, 777);
        double gf = flops(p) / 1e9;
        for (int ph = 0; ph < 3; ph++) {
            double vms[NV];
            printf("%-11s %-10s %7.1f GF |", L.name, phase_name[ph], gf);
            for (int v = 0; v < NV; v++) {
                vms[v] = version_runs(versions[v], ph, p) ? time_ms([&] { run_own(versions[v], ph, p, B, false); }, 5) : -1;
                printf(" %s %.3f", versions[v].name, vms[v]);
                if (csv) fprintf(csv, "%s,%s,%.3f,%s,%.4f,%.2f\n", L.name, phase_name[ph], gf, versions[v].name, vms[v], gf / vms[v]);
            }
            printf("\n");
            char line[512];
            int o = snprintf(line, sizeof line, "%-11s %-10s %7.1f GF", L.name, phase_name[ph], gf);
            for (int prec = 0; prec < 3; prec++) {
                double best = 1e30;
                const char *bn = "-";
                for (int v = 0; v < NV; v++) // what the engine may pick at this precision
                    if (versions[v].engine && (int)versions[v].kind <= prec && vms[v] > 0 && vms[v] < best) best = vms[v], bn = versions[v].name;
                dnn_result d = dnn_best(h, p, ph, prec, B, ws, wsz);
                if (csv) fprintf(csv, "%s,%s,%.3f,cudnn-%s-%s,%.4f,%.2f\n", L.name, phase_name[ph], gf, kind_name((cb_tc_kind)prec),
                                 dnn_algo_name(ph, d.algo), d.ms, gf / d.ms);
                double ratio = d.ms > 0 ? best / d.ms : 0;
                if (d.ms > 0) logsum[prec] += log(ratio), cnt[prec]++;
                o += snprintf(line + o, sizeof line - o, " | %s own %6.3f %5.1fT (%s) cudnn %6.3f %5.1fT %s x%.2f", kind_name((cb_tc_kind)prec),
                              best, gf / best, bn, d.ms, gf / d.ms, dnn_algo_name(ph, d.algo), ratio);
            }
            printf("%s\n", line);
            summary.push_back(line);
        }
        free_bufs(B);
    }
    printf("\n== summary: own best of the engine's algorithms (version) vs cuDNN best, ms and TFLOP/s, ratio own/cuDNN\n");
    for (auto &s : summary) printf("%s\n", s.c_str());
    double all = 0;
    int n = 0;
    for (int prec = 0; prec < 3; prec++) {
        printf("geomean own/cuDNN %s: %.2f over %d\n", kind_name((cb_tc_kind)prec), cnt[prec] ? exp(logsum[prec] / cnt[prec]) : 0, cnt[prec]);
        all += logsum[prec], n += cnt[prec];
    }
    printf("geomean own/cuDNN all: %.2f over %d\n", n ? exp(all / n) : 0, n);
    if (csv) fclose(csv);
    cudaFree(ws);
    cudnnDestroy(h);
}

int main(int argc, char **argv) { return lab_main(argc, argv, check_all, time_all, false); }
