// What the convolution labs (dev/cuda/*_lab.cu) share: error checks, the median of timed runs,
// and the command line `[check] [time] [only=NAME,NAME] [csv=FILE]`.
#ifndef CB_DEV_LAB_CUH
#define CB_DEV_LAB_CUH

#include "core/ops.h"

#include <cuda_bf16.h>
#include <cudnn.h>

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

// the sum of v over a block of 256 threads, in thread 0 (the float64 references' reductions)
__device__ __forceinline__ double lab_block_sum256(double v) {
    __shared__ double part[256];
    part[threadIdx.x] = v;
    __syncthreads();
    for (int o = 128; o > 0; o >>= 1) {
        if (threadIdx.x < o) part[threadIdx.x] += part[threadIdx.x + o];
        __syncthreads();
    }
    return part[0];
}

#define CK(x) cuda_check((x), __FILE__, __LINE__)
static void cuda_check(cudaError_t e, const char *f, int l) {
    if (e != cudaSuccess) {
        fprintf(stderr, "%s:%d: CUDA error %s\n", f, l, cudaGetErrorString(e));
        exit(1);
    }
}
#define DNN(x) dnn_check((x), __FILE__, __LINE__)
static bool dnn_check(cudnnStatus_t s, const char *f, int l) {
    if (s != CUDNN_STATUS_SUCCESS) fprintf(stderr, "%s:%d: cuDNN %s\n", f, l, cudnnGetErrorString(s));
    return s == CUDNN_STATUS_SUCCESS;
}

// the median ms of iters runs of f (CUDA events), after warmup runs; -1 when a launch failed
template <class F> static double time_ms(F f, int iters, int warmup = 1) {
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    for (int i = 0; i < warmup; i++) f();
    std::vector<float> t;
    for (int i = 0; i < iters; i++) {
        cudaEventRecord(a);
        f();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    if (cudaGetLastError() != cudaSuccess) return -1;
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// ---- shapes, errors and cuDNN's legacy best (the convolution labs) -------------------------------

// the convolution of n images of c x h x w by k filters of c/groups x r x s at the stride; pad -1:
// TF SAME (out = ceil(in / stride), leading pad = total / 2, asymmetric where odd)
static inline cb_conv_params lab_conv_params(int n, int c, int h, int w, int k, int r, int s, int stride, int pad, int groups) {
    cb_conv_params p = {};
    p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s;
    p.stride_h = p.stride_w = stride, p.groups = groups, p.dil_h = p.dil_w = 1;
    if (pad >= 0) {
        p.pad_top = p.pad_left = pad;
        p.p = (h + 2 * pad - r) / stride + 1, p.q = (w + 2 * pad - s) / stride + 1;
    } else {
        p.p = (h + stride - 1) / stride, p.q = (w + stride - 1) / stride;
        int th = std::max((p.p - 1) * stride + r - h, 0), tw = std::max((p.q - 1) * stride + s - w, 0);
        p.pad_top = th / 2, p.pad_left = tw / 2;
    }
    return p;
}

// ||own - ref|| / ||ref|| over n values (own fp32 or bf16 on the device, ref float64 on the device;
// ref through ReLU when relu); infinite where own holds a NaN or infinity
static inline double lab_host_v(float v) { return v; }
static inline double lab_host_v(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> static inline double lab_nerr(const T *own_d, const double *ref_d, size_t n, bool relu) {
    std::vector<T> a(n);
    std::vector<double> b(n);
    CK(cudaMemcpy(a.data(), own_d, n * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), ref_d, n * 8, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double r = relu ? std::max(b[i], 0.0) : b[i], v = lab_host_v(a[i]);
        if (!isfinite(v)) return INFINITY;
        num += (v - r) * (v - r), den += r * r;
    }
    return sqrt(num) / std::max(sqrt(den), 1e-30);
}

// the same for a KCRS fp32 dw against a KRSC (K, R, S, C) reference
static inline double lab_nerr_kcrs(const float *own_d, const double *ref_d, const cb_conv_params &p) {
    size_t n = (size_t)p.k * p.c * p.r * p.s;
    std::vector<float> a(n);
    std::vector<double> b(n);
    CK(cudaMemcpy(a.data(), own_d, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), ref_d, n * 8, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (long k = 0; k < p.k; k++)
        for (long c = 0; c < p.c; c++)
            for (long rs = 0; rs < p.r * p.s; rs++) {
                double v = a[(k * p.c + c) * p.r * p.s + rs], r = b[(k * p.r * p.s + rs) * p.c + c];
                if (!isfinite(v)) return INFINITY;
                num += (v - r) * (v - r), den += r * r;
            }
    return sqrt(num) / std::max(sqrt(den), 1e-30);
}

// the math cuDNN's legacy best is found under (CUDNN_FMA_MATH: strict fp32, as against 3xTF32)
static cudnnMathType_t lab_dnn_math = CUDNN_TENSOR_OP_MATH;
// cuDNN's legacy best for phase ph (0 forward, 1 backward data, 2 backward filter) of p on NHWC
// tensors of type dt (filters KRSC), lab_dnn_math: cudnnFind*Ex, then our own median of 10 runs of
// the first that ran (its algorithm in *algo); -1 where none ran
static inline double lab_dnn_best(cudnnHandle_t h, const cb_conv_params &p, int ph, cudnnDataType_t dt, const void *x, const void *w, void *y,
                                  const void *dy, void *dx, void *dw, void *ws, size_t wsz, int *algo) {
    double ms = -1;
    *algo = -1;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnCreateTensorDescriptor(&xd), cudnnCreateTensorDescriptor(&yd), cudnnCreateFilterDescriptor(&wd);
    cudnnCreateConvolutionDescriptor(&cd);
    DNN(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NHWC, dt, p.n, p.c, p.h, p.w));
    DNN(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, dt, p.n, p.k, p.p, p.q));
    const int groups = p.groups > 1 ? p.groups : 1; // (grouped and depthwise: the filter's C per group)
    DNN(cudnnSetFilter4dDescriptor(wd, dt, CUDNN_TENSOR_NHWC, p.k, p.c / groups, p.r, p.s));
    DNN(cudnnSetConvolution2dDescriptor(cd, p.pad_top, p.pad_left, p.stride_h, p.stride_w, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    DNN(cudnnSetConvolutionGroupCount(cd, groups));
    DNN(cudnnSetConvolutionMathType(cd, lab_dnn_math));
    float one = 1.f, zero = 0.f;
    int ret = 0;
    if (ph == 0) {
        cudnnConvolutionFwdAlgoPerf_t pf[10];
        if (DNN(cudnnFindConvolutionForwardAlgorithmEx(h, xd, x, wd, w, cd, yd, y, 10, &ret, pf, ws, wsz)))
            for (int j = 0; j < ret; j++)
                if (pf[j].status == CUDNN_STATUS_SUCCESS) {
                    cudnnSetConvolutionMathType(cd, pf[j].mathType);
                    cudnnConvolutionFwdAlgo_t a = pf[j].algo;
                    *algo = a;
                    ms = time_ms([&] { cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, a, ws, wsz, &zero, yd, y); }, 10, 2);
                    break;
                }
    } else if (ph == 2) {
        cudnnConvolutionBwdFilterAlgoPerf_t pf[10];
        if (DNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, xd, x, yd, dy, cd, wd, dw, 10, &ret, pf, ws, wsz)))
            for (int j = 0; j < ret; j++)
                if (pf[j].status == CUDNN_STATUS_SUCCESS) {
                    cudnnSetConvolutionMathType(cd, pf[j].mathType);
                    cudnnConvolutionBwdFilterAlgo_t a = pf[j].algo;
                    *algo = a;
                    ms = time_ms([&] { cudnnConvolutionBackwardFilter(h, &one, xd, x, yd, dy, cd, a, ws, wsz, &zero, wd, dw); }, 10, 2);
                    break;
                }
    } else {
        cudnnConvolutionBwdDataAlgoPerf_t pf[10];
        if (DNN(cudnnFindConvolutionBackwardDataAlgorithmEx(h, wd, w, yd, dy, cd, xd, dx, 10, &ret, pf, ws, wsz)))
            for (int j = 0; j < ret; j++)
                if (pf[j].status == CUDNN_STATUS_SUCCESS) {
                    cudnnSetConvolutionMathType(cd, pf[j].mathType);
                    cudnnConvolutionBwdDataAlgo_t a = pf[j].algo;
                    *algo = a;
                    ms = time_ms([&] { cudnnConvolutionBackwardData(h, &one, wd, w, yd, dy, cd, a, ws, wsz, &zero, xd, dx); }, 10, 2);
                    break;
                }
    }
    cudaGetLastError();
    cudnnDestroyTensorDescriptor(xd), cudnnDestroyTensorDescriptor(yd), cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    return ms;
}

struct lab_args {
    bool check, time;
    const char *only, *csv;
};
// the command line; false (after the usage line) on an unknown argument. Neither check nor time: both.
static bool lab_parse(int argc, char **argv, lab_args *a) {
    *a = lab_args{false, false, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "check")) a->check = true;
        else if (!strcmp(argv[i], "time")) a->time = true;
        else if (!strncmp(argv[i], "only=", 5)) a->only = argv[i] + 5;
        else if (!strncmp(argv[i], "csv=", 4)) a->csv = argv[i] + 4;
        else {
            fprintf(stderr, "usage: %s [check] [time] [only=NAME,...] [csv=FILE]\n", argv[0]);
            return false;
        }
    }
    if (!a->check && !a->time) a->check = a->time = true;
    setvbuf(stdout, NULL, _IOLBF, 0);
    return true;
}

// a lab's main: the command line, the device line, then check_all (its failures: the exit status)
// and time_all; sm90: compute capability 9.0 only (the wgmma labs), elsewhere nothing runs (exit 1)
static int lab_main(int argc, char **argv, int (*check_all)(const char *), void (*time_all)(const char *, const char *), bool sm90) {
    lab_args a;
    if (!lab_parse(argc, argv, &a)) return 2;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs, cc %d.%d, cuDNN %zu\n", prop.name, prop.multiProcessorCount, prop.major, prop.minor, cudnnGetVersion());
    if (sm90 && !(prop.major == 9 && prop.minor == 0)) {
        printf("not a compute capability 9.0 GPU: nothing to run\n");
        return 1;
    }
    int fails = a.check ? check_all(a.only) : 0;
    if (a.time) time_all(a.only, a.csv);
    return fails ? 1 : 0;
}

#endif
