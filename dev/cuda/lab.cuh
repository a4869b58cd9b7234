// What the convolution labs (dev/cuda/*_lab.cu) share: error checks, the median of timed runs,
// and the command line `[check] [time] [only=NAME,NAME] [csv=FILE]`.
#ifndef CB_DEV_LAB_CUH
#define CB_DEV_LAB_CUH

#include <cudnn.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

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

#endif
