// GPU calibration (convbench calibrate --backend cuda|cudnn): measures, on the GPU, what the
// model's fit needs, timing every call as convbench profile times a layer inside a pass (an event
// pair around calls queued behind one more, median of the repetitions; by default the larger of
// that and the median after an L2 flush with the call's input written again, as a step leaves the
// caches; the launch latency alone from an idle GPU):
//   - cuBLAS GEMMs per precision (cublasSgemm pedantic fp32, TF32 tensor-op math, cublasGemmEx
//     bf16 inputs with fp32 accumulation) on square sizes and on FC-like shapes, in the three
//     transpositions the FC layer uses (forward, backward data, backward filter);
//   - every convolution algorithm (cuDNN's per direction, or the own table cb_cuda_conv_algos)
//     on a fixed grid of calibration shapes (cb_cal_conv_shapes: none is an evaluation layer), or on
//     the layers of networks given instead (cb_cal_net_conv_shapes: never the evaluated ones);
//   - the memory-bound passes the backend runs (copy, bias, ReLU, batch norm, adds, pooling) on a
//     range of tensor sizes, the launch latency of an empty-ish kernel, and the host's time per
//     call (small cuDNN calls enqueued back to back, wall clock over their count).
// Plain C API; the implementation needs CB_HAVE_CUDA (it lives in src/cudnn, built with nvcc present).
#ifndef CB_CUDNN_CALIBRATE_H
#define CB_CUDNN_CALIBRATE_H

#include "model/model.h"

// what to measure: memory-bound passes and the launch, the GEMMs, the convolutions
enum { CB_GPU_CAL_MOPS = 1, CB_GPU_CAL_GEMM = 2, CB_GPU_CAL_CONV = 4 };

typedef struct cb_gpu_cal_opts {
    const char *backend;                 // "cudnn" or "cuda"
    cb_precision precs[CB_PREC_COUNT];   // convolution precisions to calibrate
    int nprec;
    int reps;                            // timed repetitions per measurement (median)
    double workspace_limit;              // bytes: algorithms needing more are recorded as such (-2)
    unsigned sections;                   // CB_GPU_CAL_* bits; 0 = all
    int shape_lo, shape_hi;              // convolution shapes [lo, hi] of the grid; hi < 0 = to the end
    const cb_conv_params *shapes;        // (nshapes) the convolution shapes to measure instead of the grid (shape_lo and
    int nshapes;                         // shape_hi index these): `calibrate --shapes-from`'s; NULL: the grid
    bool cache_hot;                      // calls timed back to back, their data in the L2 (before stop 44, 2026-11-28); else in a
                                         // step's cache state: the L2 flushed, the phase's input written again (calibrate --cache)
    bool held;                           // each timed series queued behind a hold, released once queued (the device's time
                                         // alone, as profile --hold measures layers; calibrate --timing held); else behind one call
    bool verbose;                        // progress for every measurement
    void (*progress)(void *ctx, const char *msg);
    void *ctx;
} cb_gpu_cal_opts;

typedef struct cb_gpu_cal {
    char gpu[128];
    int sms;
    double clock_mhz, mem_bytes;
    double l2_bytes;                     // the device's own L2 size (cudaDeviceProp.l2CacheSize; the spill term's start)
    double launch_s;
    double host_call_s;                  // the host's wall clock per call of back-to-back small cuDNN calls
    double host_graph_call_s;            // the same for a cuDNN graph plan's execution (0: none ran)
    int hold_timeouts;                   // --timing held: series whose hold ended by its timeout (their calls not back to back)
    cb_cal_sample *s;                    // every measurement (malloc'd)
    int n, cap;
} cb_gpu_cal;

// CB_STATUS_DEVICE with a one-line message when no GPU is visible or a library call fails.
cb_status cb_gpu_calibrate(const cb_gpu_cal_opts *o, cb_gpu_cal *out, cb_error *err);
void cb_gpu_cal_free(cb_gpu_cal *c);

#endif
