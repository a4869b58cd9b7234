// ECE408 lab (seed 004): the course network's two convolutions, conv1 1->4 7x7 on 86x86 and conv2
// 4->16 7x7 on 40x40 (VALID, bias, ReLU), with every version of src/cuda/conv_direct.cuh (the
// kernels the engine's algorithms run): each checked against a float64 CPU reference on fresh
// random inputs (odd shapes, batch 1 to 5, with and without ReLU, fused max pool), then timed at
// batch N (default 10000) by CUDA events, median of 10, spot-checked at that size, and finally
// cuDNN's best algorithm on the same two layers (conv alone, no bias or ReLU) for comparison.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/ece408_lab.cu \
//        -o /tmp/ece408_lab -lcudnn
//   /tmp/ece408_lab [N [VERSION]]   (N 0: the checks alone, e.g. under compute-sanitizer; VERSION:
//                                    only the versions named exactly so, and no cuDNN, e.g. under ncu)
// Tolerances (normalised error ||y - ref|| / ||ref||): fp32 1e-5, tf32 5e-3, bf16 1.5e-2.
#include "cuda/conv_direct.cuh"

#include <cuda_profiler_api.h>
#include <cudnn.h>

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#define cuda_check(x) cuda_check_((x), #x, __FILE__, __LINE__)
static void cuda_check_(cudaError_t e, const char *what, const char *file, int line) {
    if (e != cudaSuccess) {
        fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudaGetErrorString(e));
        exit(1);
    }
}
#define cudnn_check(x) cudnn_check_((x), #x, __FILE__, __LINE__)
static void cudnn_check_(cudnnStatus_t e, const char *what, const char *file, int line) {
    if (e != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudnnGetErrorString(e));
        exit(1);
    }
}

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static float urand(void) { // [0, 1)
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (float)((rng * 2685821657736338717ULL) >> 40) / 16777216.0f;
}

// ---- the CPU reference ----------------------------------------------------------------------------

static cb_conv_params conv_params(int n, int c, int h, int w, int k, int r, int s, int stride, int pad) {
    cb_conv_params p = {n, c, h, w, k, r, s, (h + 2 * pad - r) / stride + 1, (w + 2 * pad - s) / stride + 1, stride, stride, pad, pad, 1};
    return p;
}

// one output of pool(act(conv(x, w) + b)) in float64: y (n, k, i, j), i and j in the pooled grid
static double ref_at(const cb_conv_params &p, const float *x, const float *w, const float *b, bool relu, int pool, int n, int k,
                     int i, int j) {
    double best = -INFINITY;
    for (int di = 0; di < pool; di++)
        for (int dj = 0; dj < pool; dj++) {
            int oh = i * pool + di, ow = j * pool + dj;
            double acc = b ? b[k] : 0;
            for (int c = 0; c < p.c; c++)
                for (int r = 0; r < p.r; r++) {
                    int ih = oh * p.stride_h - p.pad_top + r;
                    if (ih < 0 || ih >= p.h) continue;
                    for (int s = 0; s < p.s; s++) {
                        int iw = ow * p.stride_w - p.pad_left + s;
                        if (iw < 0 || iw >= p.w) continue;
                        acc += (double)x[(((size_t)n * p.c + c) * p.h + ih) * p.w + iw] * w[(((size_t)k * p.c + c) * p.r + r) * p.s + s];
                    }
                }
            if (relu && acc < 0) acc = 0;
            best = std::max(best, acc);
        }
    return best;
}

// ---- the versions -------------------------------------------------------------------------------

// K_CONST, K_SMEM, K_TF32, K_BF16 with cfg -1 plan as the engine does (timed candidates at large
// batches); the other rows force one variant
enum kind { K_CONST, K_SMEM, K_UNROLL, K_TF32, K_BF16, K_BF16_NOSPLIT, K_BF16_SPLIT, K_BF16_RW8, K_BF16_SPLIT_RW8, K_BF16_RW16 };
struct version {
    const char *name;
    kind kd;
    int cfg;   // direct: -1 the planner's choice, else that entry of cd_direct_cfgs
    bool pool; // fused max pool (2 after conv1, 4 after conv2)
    double tol;
};
static const version versions[] = {
    {"direct-const", K_CONST, -1, false, 1e-5},
    {"direct-smem", K_SMEM, -1, false, 1e-5},
    {"direct-const 2x10 stream", K_CONST, 0, false, 1e-5},
    {"direct-const 4x8 r-outer", K_CONST, 7, false, 1e-5},
    {"direct-smem 2x10 stream", K_SMEM, 0, false, 1e-5},
    {"direct-smem 4x8 stream", K_SMEM, 1, false, 1e-5},
    {"direct-smem 2x17 stream", K_SMEM, 2, false, 1e-5},
    {"direct-smem 1x17", K_SMEM, 3, false, 1e-5},
    {"direct-smem 2x8 stream", K_SMEM, 4, false, 1e-5},
    {"direct-smem 2x8 generic", K_SMEM, 5, false, 1e-5},
    {"direct-smem 2x10 r-outer", K_SMEM, 6, false, 1e-5},
    {"direct-smem 4x8 r-outer", K_SMEM, 7, false, 1e-5},
    {"direct-smem 2x17 r-outer", K_SMEM, 8, false, 1e-5},
    {"direct-smem 2x8 r-outer", K_SMEM, 9, false, 1e-5},
    {"unroll-smem", K_UNROLL, -1, false, 1e-5},
    {"direct-tf32", K_TF32, -1, false, 5e-3},
    {"direct-bf16", K_BF16, -1, false, 1.5e-2},
    {"direct-bf16 unsplit", K_BF16_NOSPLIT, -1, false, 1.5e-2},
    {"direct-bf16 split", K_BF16_SPLIT, -1, false, 1.5e-2},
    {"direct-bf16 rw8", K_BF16_RW8, -1, false, 1.5e-2},
    {"direct-bf16 split rw8", K_BF16_SPLIT_RW8, -1, false, 1.5e-2},
    {"direct-const+pool", K_CONST, -1, true, 1e-5},
    {"direct-smem+pool", K_SMEM, -1, true, 1e-5},
    {"direct-smem+pool 4x8 stream", K_SMEM, 1, true, 1e-5},
    {"direct-smem+pool 4x8 r-outer", K_SMEM, 7, true, 1e-5},
    {"direct-smem+pool 2x10 r-outer", K_SMEM, 6, true, 1e-5},
    {"direct-smem+pool 4x8 r-outer lb3", K_SMEM, 10, true, 1e-5},
    {"direct-smem+pool 4x4 r-outer", K_SMEM, 11, true, 1e-5},
    {"direct-smem+pool 4x4 r-outer lb4", K_SMEM, 12, true, 1e-5},
    {"direct-tf32+pool", K_TF32, -1, true, 5e-3},
    {"direct-bf16+pool", K_BF16, -1, true, 1.5e-2},
    {"direct-bf16+pool unsplit", K_BF16_NOSPLIT, -1, true, 1.5e-2},
    {"direct-bf16+pool split", K_BF16_SPLIT, -1, true, 1.5e-2},
    {"direct-bf16+pool rw8", K_BF16_RW8, -1, true, 1.5e-2},
    {"direct-bf16+pool split rw8", K_BF16_SPLIT_RW8, -1, true, 1.5e-2},
    {"direct-bf16+pool rw16", K_BF16_RW16, -1, true, 1.5e-2},
};
#define NVERSIONS (int)(sizeof versions / sizeof versions[0])

struct prepared {
    kind kd;
    bool ok;
    cd_direct_plan direct;
    cd_unroll_plan unroll;
    cd_tc_plan tc;
    char desc[128];
};

static prepared prepare(const version &v, const cb_conv_params &p, int pool, bool relu) {
    prepared pr = {};
    pr.kd = v.kd;
    cd_shape g = cd_shape_of(&p, pool, relu);
    switch (v.kd) {
    case K_CONST:
    case K_SMEM:
        pr.ok = cd_direct_plan_make(g, v.kd == K_CONST, v.cfg, &pr.direct);
        if (pr.ok) {
            const cd_direct_cfg &cf = cd_direct_cfgs[pr.direct.cfg];
            snprintf(pr.desc, sizeof pr.desc, "%dx%d %s%s, %d img, %d thr, %d w/SM, ws %d (%d-way)%s, eff %.2f, bal %.2f", cf.tp,
                     cf.tq, cf.mode == 2 ? "r-outer" : cf.mode == 1 ? "stream" : "generic", cf.minb ? " lb" : "",
                     pr.direct.a.ib, pr.direct.threads, pr.direct.warps_sm, pr.direct.a.ws, pr.direct.conflicts,
                     pr.direct.a.kin ? " k-inner" : "", pr.direct.eff, pr.direct.balance);
        }
        break;
    case K_UNROLL:
        pr.ok = cd_unroll_plan_make(g, &pr.unroll);
        if (pr.ok) snprintf(pr.desc, sizeof pr.desc, "bn %d, kp %d, %d blk, %zu KB", pr.unroll.a.bn, pr.unroll.a.kp, pr.unroll.blocks, pr.unroll.smem / 1024);
        break;
    default:
        if (v.kd == K_TF32 || v.kd == K_BF16) pr.ok = cd_tc_plan_best(g, v.kd == K_BF16, &pr.tc);
        else pr.ok = cd_tc_plan_make(g, true, v.kd == K_BF16_SPLIT || v.kd == K_BF16_SPLIT_RW8, 0,
                                     v.kd == K_BF16_RW16 ? 16 : v.kd == K_BF16_RW8 || v.kd == K_BF16_SPLIT_RW8 ? 8 : 4, &pr.tc);
        if (pr.ok)
            snprintf(pr.desc, sizeof pr.desc, "%d-row bands, %d tiles/img, %d warps, split %d, %d blk/SM, %zu KB", pr.tc.a.rw, pr.tc.a.ntiles, pr.tc.a.nw,
                     pr.tc.nsplit, pr.tc.bps, pr.tc.smem / 1024);
        break;
    }
    return pr;
}

static void launch(const prepared &pr, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    if (pr.kd == K_CONST || pr.kd == K_SMEM) cd_direct_run(pr.direct, x, w, b, y, relu, ws);
    else if (pr.kd == K_UNROLL) cd_unroll_run(pr.unroll, x, w, b, y, relu);
    else cd_tc_run(pr.tc, x, w, b, y, relu);
}

// ---- one layer's buffers ----------------------------------------------------------------------------

struct layer {
    cb_conv_params p;
    int pool;
    bool relu;
    std::vector<float> x, w, b; // host
    float *dx, *dw, *db, *dy;   // device; dy holds the larger of the conv and the pooled output
    size_t ny, nyp;
};

static layer make_layer(const cb_conv_params &p, int pool, bool relu, bool centred) {
    layer L;
    L.p = p, L.pool = pool, L.relu = relu;
    size_t nx = (size_t)p.n * p.c * p.h * p.w, nw = (size_t)p.k * p.c * p.r * p.s;
    L.ny = (size_t)p.n * p.k * p.p * p.q;
    L.nyp = pool > 1 ? (size_t)p.n * p.k * (p.p / pool) * (p.q / pool) : L.ny;
    L.x.resize(nx), L.w.resize(nw), L.b.resize(p.k);
    for (auto &v : L.x) v = centred ? 2 * urand() - 1 : urand();
    float bound = 1.f / sqrtf((float)p.c * p.r * p.s);
    for (auto &v : L.w) v = bound * (2 * urand() - 1);
    for (auto &v : L.b) v = bound * (2 * urand() - 1);
    cuda_check(cudaMalloc(&L.dx, nx * 4));
    cuda_check(cudaMalloc(&L.dw, nw * 4));
    cuda_check(cudaMalloc(&L.db, p.k * 4));
    cuda_check(cudaMalloc(&L.dy, std::max(L.ny, L.nyp) * 4));
    cuda_check(cudaMemcpy(L.dx, L.x.data(), nx * 4, cudaMemcpyHostToDevice));
    cuda_check(cudaMemcpy(L.dw, L.w.data(), nw * 4, cudaMemcpyHostToDevice));
    cuda_check(cudaMemcpy(L.db, L.b.data(), p.k * 4, cudaMemcpyHostToDevice));
    return L;
}
static void free_layer(layer &L) { cudaFree(L.dx), cudaFree(L.dw), cudaFree(L.db), cudaFree(L.dy); }

__global__ void gather(const float *y, const size_t *idx, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = y[idx[i]];
}

// normalised error of the device output over all outputs (samples 0) or `samples` random ones
static double check_layer(const layer &L, int pool, int samples) {
    const cb_conv_params &p = L.p;
    int ph = pool > 1 ? p.p / pool : p.p, pw = pool > 1 ? p.q / pool : p.q;
    size_t ny = (size_t)p.n * p.k * ph * pw, cnt = samples && (size_t)samples < ny ? (size_t)samples : ny;
    std::vector<size_t> idx(cnt);
    for (size_t t = 0; t < cnt; t++) idx[t] = cnt == ny ? t : (size_t)(urand() * (double)ny) % ny;
    std::vector<float> y(cnt);
    if (cnt == ny) {
        cuda_check(cudaMemcpy(y.data(), L.dy, ny * 4, cudaMemcpyDeviceToHost));
    } else {
        size_t *didx;
        float *dout;
        cuda_check(cudaMalloc(&didx, cnt * sizeof(size_t)));
        cuda_check(cudaMalloc(&dout, cnt * 4));
        cuda_check(cudaMemcpy(didx, idx.data(), cnt * sizeof(size_t), cudaMemcpyHostToDevice));
        gather<<<(unsigned)((cnt + 255) / 256), 256>>>(L.dy, didx, dout, (int)cnt);
        cuda_check(cudaMemcpy(y.data(), dout, cnt * 4, cudaMemcpyDeviceToHost));
        cudaFree(didx), cudaFree(dout);
    }
    double num = 0, den = 0;
    for (size_t t = 0; t < cnt; t++) {
        size_t i = idx[t];
        int j = (int)(i % pw), ii = (int)(i / pw % ph), k = (int)(i / ((size_t)pw * ph) % p.k), n = (int)(i / ((size_t)pw * ph * p.k));
        double r = ref_at(p, L.x.data(), L.w.data(), L.b.data(), L.relu, pool > 1 ? pool : 1, n, k, ii, j);
        if (!isfinite(y[t])) return INFINITY;
        num += (y[t] - r) * (y[t] - r), den += r * r;
    }
    return sqrt(num) / std::max(sqrt(den), 1e-30);
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// median of 10 timed launches (after 2 warm-ups), ms. With LAB_PROFILE set: one warm-up, then one
// launch between cudaProfilerStart and Stop (for `ncu --profile-from-start off`), timed alone.
template <class F> static double time_ms(F f) {
    if (getenv("LAB_PROFILE")) {
        f();
        cuda_check(cudaDeviceSynchronize());
        cuda_check(cudaProfilerStart());
        f();
        cuda_check(cudaDeviceSynchronize());
        cuda_check(cudaProfilerStop());
        return 0;
    }
    cudaEvent_t a, b;
    cuda_check(cudaEventCreate(&a));
    cuda_check(cudaEventCreate(&b));
    std::vector<double> t;
    for (int i = 0; i < 12; i++) {
        cuda_check(cudaEventRecord(a));
        f();
        cuda_check(cudaEventRecord(b));
        cuda_check(cudaEventSynchronize(b));
        float ms;
        cuda_check(cudaEventElapsedTime(&ms, a, b));
        if (i >= 2) t.push_back(ms);
    }
    cuda_check(cudaGetLastError());
    cudaEventDestroy(a), cudaEventDestroy(b);
    return median(t);
}

// cuDNN's fastest forward algorithm (cudnnFind), conv alone; math: CUDNN_FMA_MATH (strict fp32) or
// CUDNN_TENSOR_OP_MATH (tf32 on fp32 data); returns ms (median of 10) and the algorithm in *algo
static double cudnn_time(cudnnHandle_t h, const layer &L, cudnnMathType_t math, int *algo) {
    const cb_conv_params &p = L.p;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnn_check(cudnnCreateTensorDescriptor(&xd));
    cudnn_check(cudnnCreateTensorDescriptor(&yd));
    cudnn_check(cudnnCreateFilterDescriptor(&wd));
    cudnn_check(cudnnCreateConvolutionDescriptor(&cd));
    cudnn_check(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, p.n, p.c, p.h, p.w));
    cudnn_check(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, p.n, p.k, p.p, p.q));
    cudnn_check(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, p.k, p.c, p.r, p.s));
    cudnn_check(cudnnSetConvolution2dDescriptor(cd, p.pad_top, p.pad_left, p.stride_h, p.stride_w, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    cudnn_check(cudnnSetConvolutionMathType(cd, math));
    size_t wsz = (size_t)2 << 30;
    void *ws = NULL;
    if (cudaMalloc(&ws, wsz) != cudaSuccess) cudaGetLastError(), wsz = 0;
    cudnnConvolutionFwdAlgoPerf_t perf[16];
    int got = 0;
    cudnn_check(cudnnFindConvolutionForwardAlgorithmEx(h, xd, L.dx, wd, L.dw, cd, yd, L.dy, 16, &got, perf, ws, wsz));
    double ms = -1;
    *algo = -1;
    for (int i = 0; i < got; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > wsz) continue;
        if (math == CUDNN_FMA_MATH && perf[i].mathType != CUDNN_FMA_MATH && perf[i].mathType != CUDNN_DEFAULT_MATH) continue;
        cudnnConvolutionFwdAlgo_t al = perf[i].algo;
        cudnn_check(cudnnSetConvolutionMathType(cd, perf[i].mathType));
        const float one = 1, zero = 0;
        ms = time_ms([&] { cudnnConvolutionForward(h, &one, xd, L.dx, wd, L.dw, cd, al, ws, perf[i].memory, &zero, yd, L.dy); });
        *algo = (int)al;
        break;
    }
    cudaFree(ws);
    cudnnDestroyTensorDescriptor(xd), cudnnDestroyTensorDescriptor(yd), cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    return ms;
}

int main(int argc, char **argv) {
    int N = argc > 1 ? atoi(argv[1]) : 10000;
    const char *only = argc > 2 ? argv[2] : NULL;
    auto skip = [&](const version &v) { return only && strcmp(v.name, only) != 0; };
    cudaDeviceProp prop;
    cuda_check(cudaGetDeviceProperties(&prop, 0));
    printf("ece408 lab: %s, %d SMs, batch %d\n", prop.name, prop.multiProcessorCount, N);
    void *ws; // direct-const's transposed weights
    cuda_check(cudaMalloc(&ws, 16384 * 4));

    // 1. check every version against the reference on small shapes
    struct ccase {
        const char *name;
        cb_conv_params p;
        int pool;
        bool relu;
    };
    const ccase plain[] = {
        {"conv1 b3 relu", conv_params(3, 1, 86, 86, 4, 7, 7, 1, 0), 1, true},
        {"conv2 b5 relu", conv_params(5, 4, 40, 40, 16, 7, 7, 1, 0), 1, true},
        {"conv2 b1 no relu", conv_params(1, 4, 40, 40, 16, 7, 7, 1, 0), 1, false},
        {"5x5 pad 2 C3->5 b2 23x19", conv_params(2, 3, 23, 19, 5, 5, 5, 1, 2), 1, true},
        {"3x3 s2 pad 1 C2->7 b3 17x15 no relu", conv_params(3, 2, 17, 15, 7, 3, 3, 2, 1), 1, false},
    };
    const ccase pooled[] = {
        {"conv1 b3 relu pool 2", conv_params(3, 1, 86, 86, 4, 7, 7, 1, 0), 2, true},
        {"conv2 b5 relu pool 4", conv_params(5, 4, 40, 40, 16, 7, 7, 1, 0), 4, true},
        {"5x5 pad 2 C3->6 b2 23x19 pool 2", conv_params(2, 3, 23, 19, 6, 5, 5, 1, 2), 2, true},
        {"3x3 C2->5 b1 18x21 pool 4", conv_params(1, 2, 18, 21, 5, 3, 3, 1, 0), 4, true},
    };
    std::vector<double> worst(NVERSIONS, 0);
    std::vector<int> checked(NVERSIONS, 0);
    int fails = 0;
    for (int vi = 0; vi < NVERSIONS; vi++) {
        const version &v = versions[vi];
        if (skip(v)) continue;
        const ccase *cs = v.pool ? pooled : plain;
        int nc = v.pool ? (int)(sizeof pooled / sizeof pooled[0]) : (int)(sizeof plain / sizeof plain[0]);
        for (int ci = 0; ci < nc; ci++) {
            layer L = make_layer(cs[ci].p, cs[ci].pool, cs[ci].relu, true);
            prepared pr = prepare(v, L.p, L.pool, L.relu);
            if (pr.ok) {
                cuda_check(cudaMemset(L.dy, 0xff, std::max(L.ny, L.nyp) * 4)); // NaN: unwritten outputs show
                launch(pr, L.dx, L.dw, L.db, L.dy, L.relu, ws);
                cuda_check(cudaDeviceSynchronize());
                double e = check_layer(L, L.pool, 0);
                bool ok = e <= v.tol;
                fails += !ok;
                worst[vi] = std::max(worst[vi], e), checked[vi]++;
                printf("%s %-30s %-36s err %.2e (tol %.0e)  %s\n", ok ? "ok  " : "FAIL", v.name, cs[ci].name, e, v.tol, pr.desc);
            }
            free_layer(L);
        }
    }

    if (N == 0) {
        printf("%s\n", fails ? "SOME CHECKS FAILED" : "all checks passed");
        cudaFree(ws);
        return fails ? 1 : 0;
    }

    // 2. time at batch N: conv1 (N,1,86,86) -> (N,4,80,80), conv2 (N,4,40,40) -> (N,16,34,34)
    layer L1 = make_layer(conv_params(N, 1, 86, 86, 4, 7, 7, 1, 0), 2, true, false);
    layer L2 = make_layer(conv_params(N, 4, 40, 40, 16, 7, 7, 1, 0), 4, true, false);
    const double gf1 = 2.0 * N * 4 * 80 * 80 * 49 / 1e9, gf2 = 2.0 * N * 16 * 34 * 34 * 196 / 1e9;
    struct row {
        const char *name;
        double ms1, ms2, big_err;
        char desc1[128], desc2[128];
    };
    std::vector<row> rows;
    for (int vi = 0; vi < NVERSIONS; vi++) {
        const version &v = versions[vi];
        row rw = {v.name, -1, -1, 0, "", ""};
        if (skip(v)) {
            rows.push_back(rw);
            continue;
        }
        layer *Ls[2] = {&L1, &L2};
        for (int li = 0; li < 2; li++) {
            layer &L = *Ls[li];
            int pool = v.pool ? L.pool : 1;
            prepared pr = prepare(v, L.p, pool, true);
            if (!pr.ok) continue;
            double ms = time_ms([&] { launch(pr, L.dx, L.dw, L.db, L.dy, true, ws); });
            double e = check_layer(L, pool, 3000);
            if (e > v.tol) fails++, printf("FAIL %s at batch %d, layer %d: sampled err %.2e\n", v.name, N, li + 1, e);
            rw.big_err = std::max(rw.big_err, e);
            (li ? rw.ms2 : rw.ms1) = ms;
            snprintf(li ? rw.desc2 : rw.desc1, 128, "%s", pr.desc);
        }
        rows.push_back(rw);
        printf("timed %-30s conv1 %8.3f ms [%s]  conv2 %8.3f ms [%s]\n", v.name, rw.ms1, rw.desc1, rw.ms2, rw.desc2);
    }

    // 3. cuDNN's best on the same layers (conv alone)
    cudnnHandle_t h;
    cudnn_check(cudnnCreate(&h));
    struct crow {
        const char *name;
        double ms1, ms2;
        int a1, a2;
    } cr[2] = {{"cudnn fp32 (FMA math)", 0, 0, 0, 0}, {"cudnn tf32 (tensor op math)", 0, 0, 0, 0}};
    cudnnMathType_t maths[2] = {CUDNN_FMA_MATH, CUDNN_TENSOR_OP_MATH};
    for (int i = 0; i < (only ? 0 : 2); i++) {
        cr[i].ms1 = cudnn_time(h, L1, maths[i], &cr[i].a1);
        cr[i].ms2 = cudnn_time(h, L2, maths[i], &cr[i].a2);
    }
    cudnnDestroy(h);

    printf("\nbatch %d: conv1 %.1f GFLOP, conv2 %.1f GFLOP (pool versions: conv+bias+relu+pool, the conv "
           "FLOPs counted in full)\n", N, gf1, gf2);
    printf("%-30s %10s %10s %10s %8s %10s %10s\n", "version", "conv1 ms", "conv2 ms", "sum ms", "TFLOP/s", "small err", "big err");
    for (int vi = 0; vi < NVERSIONS; vi++) {
        const row &rw = rows[vi];
        if (rw.ms1 < 0 && rw.ms2 < 0) continue;
        double sum = (rw.ms1 > 0 ? rw.ms1 : 0) + (rw.ms2 > 0 ? rw.ms2 : 0);
        printf("%-30s %10.3f %10.3f %10.3f %8.1f %10.1e %10.1e\n", rw.name, rw.ms1, rw.ms2, sum,
               rw.ms1 > 0 && rw.ms2 > 0 ? (gf1 + gf2) / sum : 0.0, worst[vi], rw.big_err);
    }
    for (int i = 0; i < (only ? 0 : 2); i++)
        printf("%-30s %10.3f %10.3f %10.3f %8.1f   algos %d, %d\n", cr[i].name, cr[i].ms1, cr[i].ms2, cr[i].ms1 + cr[i].ms2,
               (gf1 + gf2) / (cr[i].ms1 + cr[i].ms2), cr[i].a1, cr[i].a2);
    printf("%s\n", fails ? "SOME CHECKS FAILED" : "all checks passed");
    free_layer(L1), free_layer(L2);
    cudaFree(ws);
    return fails ? 1 : 0;
}
