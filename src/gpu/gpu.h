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
// The queue's hold (profile --hold, calibrate --timing held): cb_gpu_hold_on queues a one-thread
// kernel (cb_cuda_hold_launch) that waits until cb_gpu_hold_off writes this hold's generation to a
// word of mapped host memory, so the work queued between the two runs back to back once released;
// past 100 ms the wait ends by itself and counts. Generations, not a flag set back to 0: a wait
// released late never sees the next one's value. The words are allocated at the first hold.
typedef struct cb_gpu_hold {
    int *words; // (2) pinned host memory, mapped: the generation released, the timeouts
    int gen;    // the latest hold's generation
    bool held;  // a hold waits in the queue
} cb_gpu_hold;
bool cb_gpu_hold_ready(cb_gpu_hold *h);       // the words allocated (once); false where there is no mapped memory
bool cb_gpu_hold_on(cb_gpu_hold *h);          // false where it cannot hold (cb_gpu_hold_ready)
void cb_gpu_hold_off(cb_gpu_hold *h);         // releases the waiting hold, if any
int cb_gpu_hold_timeouts(const cb_gpu_hold *h); // holds so far that ended by their timeout
void cb_gpu_hold_free(cb_gpu_hold *h);        // releases, waits for the device, frees the words
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
