// GPU plumbing shared by the "cuda", "cudnn" and "auto" backends: availability, the run's
// environment for reports, and error checks. Plain C; everything here needs CB_HAVE_CUDA.
#ifndef CB_GPU_GPU_H
#define CB_GPU_GPU_H

#include "convbench.h"
#include "bench/report.h"

#include <stdbool.h>

// true when the CUDA runtime sees at least one device (never aborts)
bool cb_gpu_available(void);
// gpu name, driver, runtime, cuDNN and cuBLAS versions, SMs, memory as report metadata
void cb_gpu_env(cb_report *r);
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
