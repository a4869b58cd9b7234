// GPU plumbing shared by the "cuda", "cudnn" and "auto" backends: availability, the run's
// environment for reports, and error checks. Plain C; everything here needs CB_HAVE_CUDA.
#ifndef CB_GPU_GPU_H
#define CB_GPU_GPU_H

#include "convbench.h"

#include <stdbool.h>

// true when the CUDA runtime sees at least one device (never aborts)
bool cb_gpu_available(void);
// The device the run uses, for a report's environment (src/bench/env.c writes it): name, driver,
// runtime, cuDNN and cuBLAS versions ("" when unknown), compute capability, SMs, memory.
typedef struct cb_gpu_info {
    bool present;                 // a device is visible (else only this is set)
    char name[256], driver[24], runtime[24], cudnn[24], cublas[24], cc[24];
    int sms;
    double mem_gib;
} cb_gpu_info;
void cb_gpu_info_get(cb_gpu_info *g);
// the current device's name ("NVIDIA H200"); false when there is no GPU
bool cb_gpu_name(char *buf, size_t n);
// bytes of device memory in use now (total - free, every process's), 0 when it cannot tell
size_t cb_gpu_mem_used(void);
// fills err with "what: CUDA error NAME (message)" and returns CB_STATUS_DEVICE; CB_OK when rc == 0
cb_status cb_gpu_check(int rc, const char *what, const char *file, int line, cb_error *err);

// Library code: turn a CUDA runtime error into CB_STATUS_DEVICE with a message (user-facing,
// never an abort). Use inside functions that return cb_status and have `cb_error *err`.
#define CB_CUDA_TRY(call)                                                                                              \
    do {                                                                                                               \
        cb_status cb_try_st_ = cb_gpu_check((int)(call), #call, __FILE__, __LINE__, err);                              \
        if (cb_try_st_ != CB_OK) return cb_try_st_;                                                                    \
    } while (0)

#endif
