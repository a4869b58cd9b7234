// GPU availability, environment and error messages (CUDA runtime, cuDNN, cuBLAS versions).
#ifdef CB_HAVE_CUDA
#include "gpu/gpu.h"
#include "core/net.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdio.h>

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

void cb_gpu_env(cb_report *r) {
    int n = 0, dev = 0, drv = 0, rt = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        cb_report_meta_str(r, "gpu", "none");
        return;
    }
    cudaGetDevice(&dev);
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) return;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    char buf[64];
    cb_report_meta_str(r, "gpu", p.name);
    snprintf(buf, sizeof buf, "%d.%d", drv / 1000, (drv % 1000) / 10);
    cb_report_meta_str(r, "cuda_driver", buf);
    snprintf(buf, sizeof buf, "%d.%d", rt / 1000, (rt % 1000) / 10);
    cb_report_meta_str(r, "cuda_runtime", buf);
    size_t v = cudnnGetVersion();
    snprintf(buf, sizeof buf, "%zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
    cb_report_meta_str(r, "cudnn", buf);
    cublasHandle_t h;
    int cv = 0;
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
        cublasGetVersion(h, &cv);
        cublasDestroy(h);
        snprintf(buf, sizeof buf, "%d.%d.%d", cv / 10000, (cv % 10000) / 100, cv % 100);
        cb_report_meta_str(r, "cublas", buf);
    }
    snprintf(buf, sizeof buf, "%d.%d", p.major, p.minor);
    cb_report_meta_str(r, "gpu_cc", buf);
    cb_report_meta_num(r, "gpu_sms", p.multiProcessorCount);
    cb_report_meta_num(r, "gpu_mem_gib", (double)p.totalGlobalMem / (1 << 30));
}
#endif
