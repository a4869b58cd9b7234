// convbench's own CUDA kernels: extern "C" launchers on the default stream, plain C types.
// Buffer shapes and semantics are those of the CPU reference (src/cpu/kernels.h). None of these
// allocates; none synchronizes (errors surface at the next synchronizing call).
#ifndef CB_CUDA_LAUNCH_H
#define CB_CUDA_LAUNCH_H

#include "core/ops.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- bias (bias.cu); convolution and fully connected layers: src/cuda/conv_algo.h -------------
// db (K) = sum over n and inner of dy (N, K, inner)
void cb_cuda_bias_grad(int n, int k, int inner, const float *dy, float *db);
// y (N, K, inner) += b (K)
void cb_cuda_bias_add(int n, int k, int inner, const float *b, float *y);

// ---- depthwise convolution (conv_depthwise.cu) ------------------------------------------------
// groups == C == K: one (R, S) filter per channel. Elements fp32, or bf16 when `bf16`; tensors
// NCHW, or NHWC when `nhwc`: x (N, C, H, W), y (N, C, P, Q) in that layout, filters w and dw
// (C, R, S) in the elements' type, bias b fp32 (C) or NULL; any stride, padding, dilation. Every
// output is overwritten. ws: cb_cuda_dw_workspace bytes for the filter gradient. The own-algorithm
// table's "depthwise" entry runs these on fp32 NCHW.
bool cb_cuda_dw_supports(const cb_conv_params *p);
size_t cb_cuda_dw_workspace(const cb_conv_params *p, int nhwc);
// the stride-1 NHWC kernels at two channels a thread where they apply (cb_cuda_dw_pair_applies), or
// 16 bytes of channels a thread: mode 1 the first, 0 the second ($CONVBENCH_DW_PAIR=on|off through
// cb_cuda_init_state), -1 (unset) as the calls' `pairs` say (the cudnn backend's race per layer and
// phase)
void cb_cuda_dw_pair(int mode);
bool cb_cuda_dw_pair_applies(const cb_conv_params *p);
void cb_cuda_dw_forward(const cb_conv_params *p, int nhwc, int bf16, const void *x, const void *w, const float *b, void *y,
                        int relu, int pairs);
void cb_cuda_dw_backward_data(const cb_conv_params *p, int nhwc, int bf16, const void *dy, const void *w, void *dx, int pairs);
void cb_cuda_dw_backward_filter(const cb_conv_params *p, int nhwc, int bf16, const void *x, const void *dy, void *dw, float *ws);

// ---- the Hopper wgmma implicit GEMM on bf16 NHWC storage (conv_igemm_wgmma.cu) --------------
// The own-algorithm table's igemm-wgmma-bf16 without its conversions: x (N, H, W, C), y (N, P, Q, K)
// and the filters w (K, R, S, C) bf16 as the cudnn and auto backends store them under --precision
// bf16 --layout nhwc. cb_cuda_wg_store_supports: the GPU (compute capability 9.0) and phase ph of
// p (C a multiple of 64, K of 8, groups 1, no dilation; the backward data at stride 1). Forward:
// y = conv + b (fp32, or NULL), then ReLU when relu, in the epilogue. Backward data: dx overwritten;
// ws: cb_cuda_wg_store_workspace bytes (the flipped filter). Backward filter: dw, the fp32 KCRS
// master gradient, overwritten (pixel splits added with atomics into a zeroed KRSC copy in ws, its
// cb_cuda_wg_store_workspace bytes, then transposed: not deterministic).
// f32: the same on fp32 NHWC storage (--precision tf32 --layout nhwc; filters fp32 KRSC) with tf32
// products (C, and K for the backward data, multiples of 32).
bool cb_cuda_wg_store_supports(const cb_conv_params *p, cb_phase ph, int f32);
// at most n blocks for every launch of the wgmma kernels after this (0: one per SM), from
// $CONVBENCH_WG_BLOCKS at a backend's start (tests)
void cb_cuda_wg_set_blocks(long n);
// on (the default): the forward and backward data on bf16 NHWC storage run the TMA-fed tiles; off:
// the cp.async ones as before 2026-11-28 (evening) (from $CONVBENCH_WG_TMA=on|off at a backend's start, to compare).
// The tf32 form (f32) has the TMA kernels only and runs them either way.
void cb_cuda_wg_set_tma(int on);
// f32 = 2: fp32 NHWC storage under strict fp32, fp32-accurate products by 3xTF32 (every phase, the
// backward data at stride 1). on (the default): the kernels take it (and the table's igemm-wgmma-3xtf32
// runs); off: none (from $CONVBENCH_FP32_3XTF32=on|off at a backend's start: fp32 FMA products alone).
void cb_cuda_wg_set_x3(int on);
size_t cb_cuda_wg_store_workspace(const cb_conv_params *p, cb_phase ph, int f32);
void cb_cuda_wg_store_forward(const cb_conv_params *p, const void *x, const void *w, const float *b, void *y, int relu, int f32);
void cb_cuda_wg_store_backward_data(const cb_conv_params *p, const void *dy, const void *w, void *dx, void *ws, int f32);
void cb_cuda_wg_store_backward_filter(const cb_conv_params *p, const void *x, const void *dy, float *dw, void *ws, int f32);

// ---- pooling (pool.cu) -----------------------------------------------------------------------
// argmax: one item per output (N, C, P, Q), a byte where the window has at most 255 taps, else 4
// (cb_cuda_pool_argmax_item), written by the max forward (NULL there: not saved) for the backward
// of the same parameters to read; its contents are the kernels' own (window offsets)
void cb_cuda_pool_forward(const cb_pool_params *p, const float *x, float *y, void *argmax);
// gathers per input pixel: deterministic, dx overwritten; max needs argmax, avg ignores it
void cb_cuda_pool_backward(const cb_pool_params *p, const float *dy, const void *argmax, float *dx);
// a global average pool (p = q = 1, the window the whole unpadded input), which the forward above
// and the storages' (format.h) run as one reduction per plane: fp32 or bf16, NCHW or NHWC
bool cb_cuda_pool_is_global_avg(const cb_pool_params *p);
void cb_cuda_global_avg_forward(const cb_pool_params *p, int nhwc, int bf16, const void *x, void *y);
void cb_cuda_global_avg_backward(const cb_pool_params *p, int nhwc, int bf16, const void *dy, void *dx);
// the same added into dx (dx += dy / (H*W), one rounding): the input has a gradient from another consumer
void cb_cuda_global_avg_backward_add(const cb_pool_params *p, int nhwc, int bf16, const void *dy, void *dx);

// ---- normalisation (norm.cu) -----------------------------------------------------------------
void cb_cuda_lrn_forward(const cb_lrn_params *p, const float *x, float *y, float *scale);
void cb_cuda_lrn_backward(const cb_lrn_params *p, const float *x, const float *y, const float *scale, const float *dy,
                          float *dx);
void cb_cuda_bn_forward_train(const cb_bn_params *p, const float *x, const float *gamma, const float *beta, float *y,
                              float *mean, float *invstd, float *running_mean, float *running_var, float momentum);
void cb_cuda_bn_forward_infer(const cb_bn_params *p, const float *x, const float *gamma, const float *beta, float *y,
                              const float *running_mean, const float *running_var);
// either dx or (dgamma, dbeta) may be NULL
void cb_cuda_bn_backward(const cb_bn_params *p, const float *x, const float *gamma, const float *mean,
                         const float *invstd, const float *dy, float *dx, float *dgamma, float *dbeta);

// ---- elementwise, softmax, criterion, update (elementwise.cu) ---------------------------------
// y = f(x) for activation a (src/core/act.h), y may equal x; xsave (or NULL) gets x
void cb_cuda_act_forward(size_t n, cb_act a, const float *x, float *xsave, float *y);
// dx = f'(x) dy from the input x (NULL where a's gradient reads y alone) and the output y; dx may equal dy
void cb_cuda_act_backward(size_t n, cb_act a, const float *x, const float *y, const float *dy, float *dx);
// counter-based hash of (seed, index): mask = 0 or 1/keep
// the mask from seed and the device's step counter *step (NULL: 0), which cb_cuda_counter_inc
// advances once per training forward: a replayed step graph draws a new mask each step
void cb_cuda_dropout_forward(size_t n, float keep, uint64_t seed, const unsigned long long *step, const float *x, float *mask, float *y);
void cb_cuda_counter_inc(unsigned long long *c); // ++*c on the device
void cb_cuda_dropout_backward(size_t n, const float *mask, const float *dy, float *dx);
void cb_cuda_softmax(int n, int k, const float *x, float *prob);
// mean cross-entropy reduced on the device into *loss (one double, device memory)
void cb_cuda_xent_forward(int n, int k, const float *prob, const int32_t *labels, double *loss);
void cb_cuda_xent_backward(int n, int k, const float *prob, const int32_t *labels, float *dx);
void cb_cuda_add(size_t n, float *dst, const float *src);
void cb_cuda_fill(size_t n, float *dst, float v);
void cb_cuda_sgd(size_t n, float lr, float momentum, float wd, float *w, const float *g, float *v);
// one thread that waits until *go (host memory, mapped) holds gen, or timeout_ns have passed (then
// ++*timeouts, host memory too): the work queued behind it waits for the host (cb_gpu_hold, src/gpu)
void cb_cuda_hold_launch(const int *go, int *timeouts, int gen, unsigned long long timeout_ns);
// dst (N, C_dst, inner) channel block at c_off <- src (N, C_src, inner), or the reverse when `out`
void cb_cuda_concat_copy(int n, int c_dst, int c_src, int c_off, int inner, float *dst, const float *src, int to_slice);
// Plan-time checks (they allocate and synchronise, unlike the rest): n values at p (fp32, or bf16
// where bf16) drawn uniform in [-1, 1) from a hash of index and seed (0, or -1 on a CUDA error);
// ||a - b|| / ||b|| over n values (INFINITY where a holds one not finite; -1 on a CUDA error)
int cb_cuda_fill_uniform(size_t n, void *p, int bf16, uint64_t seed);
double cb_cuda_nerr(size_t n, const void *a, const void *b, int bf16);

#ifdef __cplusplus
}
#endif
#endif
