// convbench's own GPU convolution algorithms, as a table. Each entry computes some of the three
// phases of a convolution on NCHW fp32 device buffers (x (N,C,H,W), w (K,C/g,R,S), b (K) or NULL,
// y (N,K,P,Q)) with its own arithmetic (strict fp32, or tf32 / bf16 tensor cores accumulating in
// fp32). The cuda backend picks one per layer and phase: the one named by --conv-algo, or the
// fastest measured at plan time among those the precision allows; the auto backend races that
// against cuDNN. Tests run every entry against the float64 reference (tests/test_gpu.c).
#ifndef CB_CUDA_CONV_ALGO_H
#define CB_CUDA_CONV_ALGO_H

#include "convbench.h"
#include "core/ops.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_cuda_conv_algo {
    const char *name;      // "igemm-simt", ...: what --conv-algo takes and the profile shows
    cb_precision prec;     // its arithmetic: FP32 (fp32 FMA, or fp32-accurate 3xTF32 products), TF32 or BF16 (tensor cores)
    const char *about;     // one line for --help and the docs
    // can it run phase ph of p? (NULL function pointer for a phase means no)
    bool (*supports)(const cb_conv_params *p, cb_phase ph);
    // device workspace bytes for phase ph (NULL: none)
    size_t (*workspace)(const cb_conv_params *p, cb_phase ph);
    // y = conv(x, w) + b, then max(y, 0) when relu (the backend then skips its own ReLU)
    void (*forward)(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu,
                    void *ws);
    // dx overwritten
    void (*backward_data)(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws);
    // dw and db (when not NULL) overwritten
    void (*backward_filter)(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws);
    // Optional, inference only: yp = maxpool(max(conv(x, w) + b, 0)) for the VALID max pool that
    // follows the layer (yp is that pool's output, (N, K, P/r, Q/s)); the conv's own output is not
    // written. supports_relu_maxpool says which pools it runs; the workspace is the forward's.
    bool (*supports_relu_maxpool)(const cb_conv_params *p, const cb_pool_params *pool);
    void (*forward_relu_maxpool)(const cb_conv_params *p, const float *x, const float *w, const float *b,
                                 const cb_pool_params *pool, float *yp, void *ws);
} cb_cuda_conv_algo;

// every algorithm, NULL-terminated; the first is the generic fallback that runs every shape
extern const cb_cuda_conv_algo *const cb_cuda_conv_algos[];
// the depthwise entry (conv_depthwise.cu), whose id the other storages' depthwise choice records
extern const cb_cuda_conv_algo cb_conv_algo_depthwise;
// the Hopper wgmma entries (conv_igemm_wgmma.cu), whose ids the bf16 NHWC (tf32: fp32 NHWC) storage's choices record too
// (x3: fp32 NHWC storage under strict fp32, 3xTF32)
extern const cb_cuda_conv_algo cb_conv_algo_igemm_wgmma_bf16, cb_conv_algo_igemm_wgmma_tf32, cb_conv_algo_igemm_wgmma_x3;

const cb_cuda_conv_algo *cb_cuda_conv_algo_find(const char *name);
int cb_cuda_conv_algo_index(const cb_cuda_conv_algo *a); // its place in cb_cuda_conv_algos (a choice's algo id)
// does --precision prec allow this algorithm's arithmetic? fp32 allows FP32 only; tf32 allows
// FP32 and TF32; bf16 allows all three
bool cb_cuda_conv_algo_allowed(const cb_cuda_conv_algo *a, cb_precision prec);
// can it run phase ph of p (and is the phase implemented)?
bool cb_cuda_conv_algo_supports(const cb_cuda_conv_algo *a, const cb_conv_params *p, cb_phase ph);
size_t cb_cuda_conv_algo_workspace(const cb_cuda_conv_algo *a, const cb_conv_params *p, cb_phase ph);

#ifdef __cplusplus
}
#endif
#endif
