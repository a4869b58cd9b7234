// GPU availability, environment and error messages (CUDA runtime, cuDNN, cuBLAS versions).
#ifdef CB_HAVE_CUDA
#include "gpu/gpu.h"
#include "core/net.h"
#include "cuda/launch.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define HOLD_NS 100000000ull
bool cb_gpu_hold_ready(cb_gpu_hold *h) {
    if (h->words) return true;
    void *p = NULL;
    if (cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    h->words = p;
    h->words[0] = h->words[1] = 0;
    return true;
}
bool cb_gpu_hold_on(cb_gpu_hold *h) {
    if (h->held) return true;
    if (!cb_gpu_hold_ready(h)) return false;
    int *dev = NULL;
    if (cudaHostGetDevicePointer((void **)&dev, h->words, 0) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    h->gen = h->gen == INT_MAX ? 1 : h->gen + 1;
    cb_cuda_hold_launch(dev, dev + 1, h->gen, HOLD_NS);
    return h->held = true;
}
void cb_gpu_hold_off(cb_gpu_hold *h) {
    if (h->held) __atomic_store_n(&h->words[0], h->gen, __ATOMIC_SEQ_CST);
    h->held = false;
}
int cb_gpu_hold_timeouts(const cb_gpu_hold *h) { return h->words ? __atomic_load_n(&h->words[1], __ATOMIC_SEQ_CST) : 0; }
void cb_gpu_hold_free(cb_gpu_hold *h) {
    if (!h->words) return;
    cb_gpu_hold_off(h);
    cudaDeviceSynchronize(); // (a wait reads the words)
    cudaFreeHost(h->words);
    h->words = NULL;
}

bool cb_gpu_available(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); // clear the sticky "no device" error
        return false;
    }
    return n > 0;
}

bool cb_gpu_name(char *buf, size_t n) {
    int dev = 0;
    struct cudaDeviceProp p;
    if (!cb_gpu_available() || cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    snprintf(buf, n, "%s", p.name);
    return true;
}

size_t cb_gpu_mem_used(void) {
    size_t free_b = 0, total = 0;
    if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return total - free_b;
}

cb_status cb_gpu_check(int rc, const char *what, const char *file, int line, cb_error *err) {
    if (rc == 0) return CB_OK;
    cudaError_t e = (cudaError_t)rc;
    return cb_fail(err, CB_STATUS_DEVICE, file, NULL, "line %d: %s: CUDA error %s (%s)", line, what, cudaGetErrorName(e),
                   cudaGetErrorString(e));
}

void cb_gpu_info_get(cb_gpu_info *g) {
    int n = 0, dev = 0, drv = 0, rt = 0;
    memset(g, 0, sizeof *g);
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        return;
    }
    cudaGetDevice(&dev);
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) return;
    g->present = true;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    snprintf(g->name, sizeof g->name, "%s", p.name);
    snprintf(g->driver, sizeof g->driver, "%d.%d", drv / 1000, (drv % 1000) / 10);
    snprintf(g->runtime, sizeof g->runtime, "%d.%d", rt / 1000, (rt % 1000) / 10);
    size_t v = cudnnGetVersion();
    snprintf(g->cudnn, sizeof g->cudnn, "%zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
    cublasHandle_t h;
    int cv = 0;
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
        cublasGetVersion(h, &cv);
        cublasDestroy(h);
        snprintf(g->cublas, sizeof g->cublas, "%d.%d.%d", cv / 10000, (cv % 10000) / 100, cv % 100);
    }
    snprintf(g->cc, sizeof g->cc, "%d.%d", p.major, p.minor);
    g->sms = p.multiProcessorCount;
    g->mem_gib = (double)p.totalGlobalMem / (1 << 30);
}
#endif
