// CPU kernels: plain float32 functions on raw NCHW buffers, no allocation inside.
//
// Two families share these signatures:
//   cb_ref_*   plain loops, written to be read; the oracle every backend is checked against.
//   cb_cpu_*   the fast default path (im2col + OpenBLAS sgemm, OpenMP loops).
// A float64 twin of every reference (cb_ref64_*) exists for the tests (src/cpu/ref_impl.h is
// compiled twice, once per element type).
//
// Shapes are given by the params structs of src/core/ops.h; buffer shapes are in the comments
// next to them.
#ifndef CB_CPU_KERNELS_H
#define CB_CPU_KERNELS_H

#include "core/ops.h"

#include <stddef.h>
#include <stdint.h>


// workspace in bytes the fast conv needs (im2col buffer etc.); reference needs 0
size_t cb_cpu_conv_workspace(const cb_conv_params *p);

// ---- convolution --------------------------------------------------------------------------
// x (N,C,H,W)  w (K,C/g,R,S)  b (K) or NULL  y (N,K,P,Q)
// Own direct convolution, forward (src/cpu/direct.c): AVX-512 / AVX2+FMA / scalar by what the
// CPU has (CONVBENCH_CPU_ISA forces one it has); dense convolutions (groups 1, K >= 8) only.
bool cb_cpu_direct_supports(const cb_conv_params *p);
size_t cb_cpu_direct_workspace(const cb_conv_params *p);
void cb_cpu_direct_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, void *ws);
int cb_cpu_direct_isa(void);
const char *cb_cpu_direct_isa_name(void);
// tests: run the path named from now on (capped at what the CPU has); returns its name
const char *cb_cpu_direct_set_isa(const char *name);
// Own blocked convolution, forward (src/cpu/blocked.c): channel-blocked layouts, two output
// channel vectors x up to 14 pixels in registers; the ISA as the direct kernel's (CONVBENCH_CPU_ISA).
// Dense convolutions (groups 1) of any shape.
bool cb_cpu_blocked_supports(const cb_conv_params *p);
size_t cb_cpu_blocked_workspace(const cb_conv_params *p);
void cb_cpu_blocked_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, void *ws);
// Own Winograd F(4x4, 3x3) forward (src/cpu/winograd.c): 3x3, stride 1, undilated, groups 1; its
// 36 products run on the blocked kernels (so on their ISA). fp32 error larger than direct's (1e-4 allowed).
bool cb_cpu_winograd_supports(const cb_conv_params *p);
size_t cb_cpu_winograd_workspace(const cb_conv_params *p);
void cb_cpu_winograd_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, void *ws);
// Backward data of a stride-1, undilated, dense convolution as a forward one on the blocked or
// Winograd kernels (src/cpu/dgrad.c): dy (N,K,P,Q)  w (K,C,R,S) -> dx (N,C,H,W), overwritten.
// q: the forward convolution that computes it (dy in, dx out).
bool cb_cpu_dgrad_applies(const cb_conv_params *p, bool winograd);
void cb_cpu_dgrad_params(const cb_conv_params *p, cb_conv_params *q);
size_t cb_cpu_dgrad_workspace(const cb_conv_params *p, bool winograd);
void cb_cpu_dgrad(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws, bool winograd);
// Own backward filter on the blocked layouts (src/cpu/wgrad.c): x (N,C,H,W)  dy (N,K,P,Q) ->
// dw (K,C,R,S) and db (K) or NULL, overwritten; dense convolutions (groups 1) of any stride, padding,
// dilation; the ISA as the direct kernel's (CONVBENCH_CPU_ISA). Deterministic for any thread count.
bool cb_cpu_wgrad_supports(const cb_conv_params *p);
size_t cb_cpu_wgrad_workspace(const cb_conv_params *p);
void cb_cpu_wgrad(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws);
void cb_ref_conv_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y);
// dy (N,K,P,Q)  w (K,C/g,R,S)  -> dx (N,C,H,W), overwritten
void cb_ref_conv_backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx);
// x (N,C,H,W)  dy (N,K,P,Q) -> dw (K,C/g,R,S) and db (K) or NULL, overwritten
void cb_ref_conv_backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db);

// the fast path (src/cpu/conv.c): im2col + OpenBLAS, or the direct depthwise loops below where
// cb_cpu_dw_applies (those need no workspace)
void cb_cpu_conv_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, void *ws);
void cb_cpu_conv_backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws);
void cb_cpu_conv_backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws);
// the output columns [*lo, *hi) whose input column ow * stride_w - pad_left + kw lies in the image
// (kw: the tap's column offset, dilation included)
void cb_cpu_conv_valid_cols(const cb_conv_params *p, int kw, int *lo, int *hi);
// depthwise convolution (groups == C == K > 1; src/cpu/depthwise.c), OpenMP over planes
bool cb_cpu_dw_applies(const cb_conv_params *p);
void cb_cpu_dw_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y);
void cb_cpu_dw_backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx);
void cb_cpu_dw_backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db);

// ---- fully connected ----------------------------------------------------------------------
// x (N, C)  w (K, C)  b (K) or NULL  y (N, K)
void cb_ref_fc_forward(int n, int c, int k, const float *x, const float *w, const float *b, float *y);
void cb_ref_fc_backward_data(int n, int c, int k, const float *dy, const float *w, float *dx);
void cb_ref_fc_backward_filter(int n, int c, int k, const float *x, const float *dy, float *dw, float *db);
void cb_cpu_fc_forward(int n, int c, int k, const float *x, const float *w, const float *b, float *y);
void cb_cpu_fc_backward_data(int n, int c, int k, const float *dy, const float *w, float *dx);
void cb_cpu_fc_backward_filter(int n, int c, int k, const float *x, const float *dy, float *dw, float *db);

// ---- pooling ------------------------------------------------------------------------------
// x (N,C,H,W) -> y (N,C,P,Q); argmax (N,C,P,Q) int32 index into the H*W plane, max only, may be NULL for avg
void cb_ref_pool_forward(const cb_pool_params *p, const float *x, float *y, int32_t *argmax);
// dy (N,C,P,Q) -> dx (N,C,H,W), overwritten. x is the forward input (used by max when argmax is NULL).
void cb_ref_pool_backward(const cb_pool_params *p, const float *x, const float *dy, const int32_t *argmax, float *dx);
void cb_cpu_pool_forward(const cb_pool_params *p, const float *x, float *y, int32_t *argmax);
void cb_cpu_pool_backward(const cb_pool_params *p, const float *x, const float *dy, const int32_t *argmax, float *dx);

// ---- local response normalisation (across channels) ----------------------------------------
// x, y (N,C,H,W); scale (N,C,H,W) keeps k + alpha/size*sum x^2 for the backward pass
void cb_ref_lrn_forward(const cb_lrn_params *p, const float *x, float *y, float *scale);
void cb_ref_lrn_backward(const cb_lrn_params *p, const float *x, const float *y, const float *scale, const float *dy, float *dx);
void cb_cpu_lrn_forward(const cb_lrn_params *p, const float *x, float *y, float *scale);
void cb_cpu_lrn_backward(const cb_lrn_params *p, const float *x, const float *y, const float *scale, const float *dy, float *dx);

// ---- batch normalisation (per channel over N,H,W) ------------------------------------------
// training: batch statistics; saves mean (C) and invstd (C); updates running stats with momentum
// (running = (1-momentum)*running + momentum*batch, unbiased variance as PyTorch) when running_* non-NULL.
void cb_ref_bn_forward_train(const cb_bn_params *p, const float *x, const float *gamma, const float *beta, float *y,
                             float *mean, float *invstd, float *running_mean, float *running_var, float momentum);
void cb_ref_bn_forward_infer(const cb_bn_params *p, const float *x, const float *gamma, const float *beta, float *y,
                             const float *running_mean, const float *running_var);
// dy -> dx (overwritten), dgamma, dbeta (C, overwritten); either of dx or (dgamma, dbeta) may be NULL
void cb_ref_bn_backward(const cb_bn_params *p, const float *x, const float *gamma, const float *mean, const float *invstd,
                        const float *dy, float *dx, float *dgamma, float *dbeta);
void cb_cpu_bn_forward_train(const cb_bn_params *p, const float *x, const float *gamma, const float *beta, float *y,
                             float *mean, float *invstd, float *running_mean, float *running_var, float momentum);
void cb_cpu_bn_forward_infer(const cb_bn_params *p, const float *x, const float *gamma, const float *beta, float *y,
                             const float *running_mean, const float *running_var);
void cb_cpu_bn_backward(const cb_bn_params *p, const float *x, const float *gamma, const float *mean, const float *invstd,
                        const float *dy, float *dx, float *dgamma, float *dbeta);

// ---- elementwise --------------------------------------------------------------------------
// y = f(x) for activation a (src/core/act.h), y may equal x; xsave (or NULL) gets x
void cb_cpu_act_forward(size_t n, cb_act a, const float *x, float *xsave, float *y);
// dx = f'(x) dy from the input x (NULL where a's gradient reads y alone) and the output y; dx may equal dy
void cb_cpu_act_backward(size_t n, cb_act a, const float *x, const float *y, const float *dy, float *dx);
// mask (n) holds 0 or 1/keep; y = x * mask. rng_state advanced (xorshift64*).
void cb_cpu_dropout_forward(size_t n, float keep, uint64_t *rng_state, const float *x, float *mask, float *y);
void cb_cpu_dropout_backward(size_t n, const float *mask, const float *dy, float *dx);

// ---- softmax and criterion ----------------------------------------------------------------
// x (N, K) -> prob (N, K)
void cb_ref_softmax_forward(int n, int k, const float *x, float *prob);
// mean cross-entropy over the batch of prob against labels (N); returns the loss
double cb_ref_xent_forward(int n, int k, const float *prob, const int32_t *labels);
// gradient of the mean cross-entropy w.r.t. the logits: (prob - onehot)/N
void cb_ref_xent_backward(int n, int k, const float *prob, const int32_t *labels, float *dx);
void cb_cpu_softmax_forward(int n, int k, const float *x, float *prob);

// ---- update -------------------------------------------------------------------------------
// PyTorch's SGD: g' = g + wd*w; v = momentum*v + g'; w -= lr*v   (v may be NULL when momentum == 0)
void cb_cpu_sgd_update(size_t n, float lr, float momentum, float wd, float *w, const float *g, float *v);

// ---- per channel (src/cpu/channel_impl.h; cb_ref64_* twins too): SE product, layer scale, LayerNorm
// a (N,C,HW) * b (N,C,BHW) -> y (N,C,HW); BHW is HW or 1 (b broadcast over the pixels)
void cb_ref_mul_forward(int n, int c, int hw, int bhw, const float *a, const float *b, float *y);
// the gradient w.r.t. a broadcast b (N,C,1,1): db = sum over pixels of dy * a
void cb_ref_mul_backward_bcast(int n, int c, int hw, const float *dy, const float *a, float *db);
// y = x * w[c] (and dx = dy * w[c]); dw (C) = sum of dy * x
void cb_ref_scale_forward(int n, int c, int hw, const float *x, const float *w, float *y);
void cb_ref_scale_backward_filter(int n, int c, int hw, const float *x, const float *dy, float *dw);
// LayerNorm over the C channels of each pixel; g, b (C). Backward: dx, dg, db each NULL-able, overwritten.
void cb_ref_layernorm_forward(int n, int c, int hw, double eps, const float *x, const float *g, const float *b, float *y);
void cb_ref_layernorm_backward(int n, int c, int hw, double eps, const float *x, const float *g, const float *dy, float *dx,
                               float *dg, float *db);
void cb_ref64_mul_forward(int n, int c, int hw, int bhw, const double *a, const double *b, double *y);
void cb_ref64_mul_backward_bcast(int n, int c, int hw, const double *dy, const double *a, double *db);
void cb_ref64_scale_forward(int n, int c, int hw, const double *x, const double *w, double *y);
void cb_ref64_scale_backward_filter(int n, int c, int hw, const double *x, const double *dy, double *dw);
void cb_ref64_layernorm_forward(int n, int c, int hw, double eps, const double *x, const double *g, const double *b, double *y);
void cb_ref64_layernorm_backward(int n, int c, int hw, double eps, const double *x, const double *g, const double *dy,
                                 double *dx, double *dg, double *db);

// ---- float64 references for the tests (same semantics) ------------------------------------
void cb_ref64_conv_forward(const cb_conv_params *p, const double *x, const double *w, const double *b, double *y);
void cb_ref64_conv_backward_data(const cb_conv_params *p, const double *dy, const double *w, double *dx);
void cb_ref64_conv_backward_filter(const cb_conv_params *p, const double *x, const double *dy, double *dw, double *db);
void cb_ref64_fc_forward(int n, int c, int k, const double *x, const double *w, const double *b, double *y);
void cb_ref64_pool_forward(const cb_pool_params *p, const double *x, double *y, int32_t *argmax);
void cb_ref64_lrn_forward(const cb_lrn_params *p, const double *x, double *y, double *scale);
void cb_ref64_bn_forward_train(const cb_bn_params *p, const double *x, const double *gamma, const double *beta, double *y,
                               double *mean, double *invstd, double *running_mean, double *running_var, double momentum);
void cb_ref64_softmax_forward(int n, int k, const double *x, double *prob);
// the rest of the float64 family, for the gradient checks (ref_impl.h emits every function twice)
void cb_ref64_fc_backward_data(int n, int c, int k, const double *dy, const double *w, double *dx);
void cb_ref64_fc_backward_filter(int n, int c, int k, const double *x, const double *dy, double *dw, double *db);
void cb_ref64_pool_backward(const cb_pool_params *p, const double *x, const double *dy, const int32_t *argmax, double *dx);
void cb_ref64_lrn_backward(const cb_lrn_params *p, const double *x, const double *y, const double *scale,
                           const double *dy, double *dx);
void cb_ref64_bn_forward_infer(const cb_bn_params *p, const double *x, const double *gamma, const double *beta,
                               double *y, const double *running_mean, const double *running_var);
void cb_ref64_bn_backward(const cb_bn_params *p, const double *x, const double *gamma, const double *mean,
                          const double *invstd, const double *dy, double *dx, double *dgamma, double *dbeta);
double cb_ref64_xent_forward(int n, int k, const double *prob, const int32_t *labels);
void cb_ref64_xent_backward(int n, int k, const double *prob, const int32_t *labels, double *dx);

#endif
