// Kernels for the cudnn backend's other storages (src/storage/format.cu, the bias gradient in
// bias_fmt.cu): activations in NHWC
// and/or bf16, filters in KRSC and/or bf16, next to fp32 NCHW master weights. A format is a set of
// bits; 0 is fp32 NCHW (filters KCRS). Every kernel computes in fp32 and rounds to nearest even
// when it stores bf16. Launches on the default stream (cb_fmt_cast: on the stream given); none
// allocates or synchronizes.
#ifndef CB_STORAGE_FORMAT_H
#define CB_STORAGE_FORMAT_H

#include "core/ops.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CB_FMT_NHWC 1 // channels last (filters: KRSC)
#define CB_FMT_BF16 2 // 2-byte bfloat16 elements

static inline size_t cb_fmt_bytes(int fmt) { return fmt & CB_FMT_BF16 ? 2 : 4; }

// dst (n, c, h, w) in dst_fmt <- src (n, c, h, w) in src_fmt; filters are (K, C, R, S) as (n, c, h, w)
void cb_fmt_convert(int64_t n, int64_t c, int64_t h, int64_t w, const void *src, int src_fmt, void *dst, int dst_fmt);
// the same between channel counts: dst (n, c_dst, h, w) <- src (n, c_src, h, w), dst's channels at
// or past c_src set to 0 (zero padding of channels), src's past c_dst dropped
void cb_fmt_convert_pad(int64_t n, int64_t c_src, int64_t c_dst, int64_t h, int64_t w, const void *src, int src_fmt,
                        void *dst, int dst_fmt);

// dst (n, hd, wd, cd) <- src (n, hs, ws, cs), NHWC, both bf16 (when `bf16`) or fp32: a pixel or
// channel that src lacks is 0 (a convolution's input with zero rows, columns and channels added
// at the end), one that dst lacks is dropped (its gradient cut back)
void cb_fmt_window_nhwc(int64_t n, int64_t hs, int64_t ws, int64_t cs, const void *src, int64_t hd, int64_t wd, int64_t cd,
                        void *dst, int bf16);
// the same for NCHW: dst (planes, hd, wd) <- src (planes, hs, ws), planes = n * c
void cb_fmt_window_nchw(int64_t planes, int64_t hs, int64_t ws, const void *src, int64_t hd, int64_t wd, void *dst, int bf16);

// dst (n) <- src (n), elementwise between fp32 and bf16 (a copy when the types agree), any count
// and alignment, on stream s (NULL: the default stream; cudaStream_t is a struct CUstream_st *)
struct CUstream_st;
void cb_fmt_cast(size_t n, const void *src, int src_fmt, void *dst, int dst_fmt, struct CUstream_st *s);

// elementwise on n elements of type bf16 (when `bf16`) or fp32; layout does not matter
void cb_fmt_add(size_t n, void *dst, const void *src, int bf16);                   // dst += src
void cb_fmt_add_act(size_t n, void *dst, const void *a, const void *b, int relu, int bf16); // dst = relu?(a + b)
void cb_fmt_fill(size_t n, void *dst, float v, int bf16);
// activation a (src/core/act.h): y = f(x), xsave (or NULL) gets x; dx = f'(x) dy from the input x
// (NULL where a's gradient reads y alone) and the output y. y may equal x, dx dy.
void cb_fmt_act_forward(size_t n, cb_act a, const void *x, void *xsave, void *y, int bf16);
void cb_fmt_act_backward(size_t n, cb_act a, const void *x, const void *y, const void *dy, void *dx, int bf16);
// mask (n) fp32 = 0 or 1/keep from the same generator as cb_cuda_dropout_forward; y = x * mask
void cb_fmt_dropout_forward(size_t n, float keep, uint64_t seed, const unsigned long long *step, const void *x, float *mask, void *y, int bf16);
void cb_fmt_dropout_backward(size_t n, const float *mask, const void *dy, void *dx, int bf16);

// y (rows, k, inner) += b (k), b fp32, then ReLU when `relu`, in one pass (b may be NULL: the ReLU
// alone). NCHW: rows = N, inner = H*W; NHWC: rows = N*H*W, inner = 1.
void cb_fmt_bias_act(int64_t rows, int k, int64_t inner, const float *b, void *y, int relu, int bf16);
// the same with any activation act (src/core/act.h); xsave (or NULL) gets y + b, its input
void cb_fmt_bias_act_fn(int64_t rows, int k, int64_t inner, const float *b, void *y, cb_act act, void *xsave, int bf16);
// db (k) fp32 = sum over rows and inner of dy (rows, k, inner). part is a device scratch of
// cb_fmt_bias_part_floats(k) floats or more (per-chunk partial sums, added in a fixed order, so
// the result is the same from run to run), or NULL: one block per channel, slow where k is small.
#define CB_FMT_BIAS_PARTS 1024
#define CB_FMT_BIAS_NCHW_PARTS 128
size_t cb_fmt_bias_part_floats(int k);
void cb_fmt_bias_grad(int64_t rows, int k, int64_t inner, const void *dy, int bf16, float *db, float *part);
// the same after the activation's gradient, in the same pass: dy = act'(dy) in place (x: the
// activation's saved input, or NULL where its gradient reads only y, its output), then db its sums;
// dy and db come out as cb_fmt_act_backward then cb_fmt_bias_grad leave them (the same sums in the
// same order; a ReLU's bit for bit)
void cb_fmt_act_bias_grad(int64_t rows, int k, int64_t inner, cb_act act, const void *x, const void *y, void *dy, int bf16, float *db,
                          float *part);

// Concatenation along channels of elements of `bytes` bytes: dst (n, c_dst, inner) channel block at
// c_off <- src (n, c_src, inner), or the reverse when to_slice. NHWC: n = N*H*W, inner = 1.
void cb_fmt_concat_copy(int64_t n, int64_t c_dst, int64_t c_src, int64_t c_off, int64_t inner, size_t bytes, void *dst,
                        const void *src, int to_slice);
// The forward of an NHWC concatenation in one pass: dst (rows, c_dst) <- the k inputs' rows
// (rows, c_src[q]) side by side, elements of `bytes` (2 or 4) bytes, where one of them would copy in
// units narrower than 16 bytes (cb_fmt_concat_copy's), k <= 8 and the elements are 4 bytes; 1:
// done, 0: not taken (nothing done: copy each input). $CONVBENCH_CONCAT=each: never; gather: 2-byte
// elements and 16-byte rows too.
int cb_fmt_concat_gather(int64_t rows, int64_t c_dst, int k, const int64_t *c_src, const void *const *src, size_t bytes, void *dst);
// The backward of a concatenation that takes over an input's ReLU (relu_by_concat): dst (n, c_src,
// inner) <- the channel block at c_off of src (n, c_dst, inner) where mask (the concatenation's
// output, src's shape) is above 0, else 0; fp32 or bf16 elements. NHWC: n = N*H*W, inner = 1.
void cb_fmt_concat_slice_masked(int64_t n, int64_t c_dst, int64_t c_src, int64_t c_off, int64_t inner, int bf16, void *dst,
                                const void *src, const void *mask);

// Max / average pooling on a storage (pool_fmt.cu), the semantics of cb_cuda_pool_forward and
// _backward (src/cuda/pool.cu; fmt 0 runs those) in that storage's layout and element type:
// x (n, c, h, w) -> y (n, c, p, q), p and q at least 1. argmax: per output element, in y's layout
// (the same flat index as y), the window offset kh * s + kw of the maximum, one byte when
// r * s <= 255 (255: window wholly in the padding, where y = 0) else int32 (-1); NULL for average,
// or for a max whose backward will not run. Average leaves the padding out of the count. Ties: the
// first maximum in window order. NHWC takes 16-byte accesses when c is a multiple of 8 (bf16) or
// 4 (fp32) and the buffers are 16-byte aligned.
void cb_fmt_pool_forward(const cb_pool_params *p, int fmt, const void *x, void *y, void *argmax);
// which NHWC forward a 2x2 or 3x3 pool takes (pool_fmt.cu, pf_rs): -1 (the default) the window known
// at compile time where a thread holds one channel, 1 at every vector width, 0 the runtime loops;
// for the process ($CONVBENCH_POOL_RS=on|off through cb_dnn_init; tests)
void cb_fmt_pool_rs(int mode);
// whether that max backward scatters (pool_fmt.cu, pf_scatter_mode): -1 (the default) there, 1
// everywhere on fp32 NHWC storage, 0 nowhere: the gather
// ($CONVBENCH_POOL_SCATTER=on|off through cb_dnn_init; tests)
void cb_fmt_pool_scatter(int mode);
// dx (n, c, h, w) overwritten: one gather per input element over the windows that cover it (no
// atomics, deterministic); max reads the forward's argmax, average ignores it. A max on fp32 NHWC
// storage scatters instead where c is not a multiple of 4 (or the buffers are not 16-byte
// aligned), or where it applies a ReLU's mask and overlapping windows, at most 2 x 2, cover an input (pool_fmt.cu,
// pf_scatters): dx zeroed, each output's gradient added to its maximum's input by an atomic add
// (not deterministic in the last bits), unless cb_fmt_pool_scatter(0)
void cb_fmt_pool_backward(const cb_pool_params *p, int fmt, const void *dy, const void *argmax, void *dx);

// Batch normalisation on a storage (norm_fmt.cu), any fmt (0 too): x (n, c, h, w) -> y over the
// n*h*w values of each channel, the semantics of cb_cuda_bn_* (src/cuda/norm.cu): biased variance
// normalises, the running variance (updated with `momentum` when rmean and rvar are not NULL) is
// unbiased; invstd = 1 / sqrt(var + eps). `act` (src/core/act.h; CB_ACT_NONE: none) is applied
// to y in the same pass. part: device scratch of
// cb_fmt_bn_scratch(c) floats. Deterministic (fixed reduction order). cb_fmt_bn_supported: the
// kernels' limits (fewer than 2^31 elements, 65535 channels).
// NHWC with 16-byte aligned tensors runs 16-byte vectors whatever C: where C is not a multiple of
// the vector, the kernels see rows of lcm(C, V) elements, in which each element's channel is fixed
// (norm_fmt.cu, bn_run's periodic view); cb_fmt_bn_periodic(0) keeps one channel a thread there
// ($CONVBENCH_BN_PERIODIC=on|off through cb_dnn_init; the A/B)
#define CB_FMT_BN_CHUNKS 1024
void cb_fmt_bn_periodic(int on);
size_t cb_fmt_bn_scratch(int64_t c);
int cb_fmt_bn_supported(const cb_bn_params *p);
void cb_fmt_bn_forward_train(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta, void *y,
                             float *mean, float *invstd, float *rmean, float *rvar, float momentum, cb_act act, float *part);
void cb_fmt_bn_forward_infer(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta,
                             const float *rmean, const float *rvar, void *y, cb_act act, float *part);
// the same with a residual res (shaped and stored as y) added before the activation, in the same
// pass: y = act(bn(x) + res) (a batch norm whose one consumer is a sum, CB_FUSION_BN_ADD); res NULL: none
void cb_fmt_bn_forward_train_res(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta, void *y,
                                 float *mean, float *invstd, float *rmean, float *rvar, float momentum, cb_act act, float *part,
                                 const void *res);
void cb_fmt_bn_forward_infer_res(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta,
                                 const float *rmean, const float *rvar, void *y, cb_act act, float *part, const void *res);
// y = act(bn(x)) of a training forward again, from x and the statistics it saved (mean, invstd): the
// scale and shift rounded as the backward takes them, so within an fp32 rounding of the forward's
// coefficients (an output dropped after the forward and made again for the backward: cb_recompute)
void cb_fmt_bn_again(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta, const float *mean,
                     const float *invstd, void *y, cb_act act, float *part);
// dgamma, dbeta (overwritten) and, when dx is not NULL, dx (may alias dy) from dy, the gradient
// w.r.t. y = act(bn(x)): the activation's gradient is taken at its input, recomputed from x and
// the statistics of the forward pass (gamma, beta, mean, invstd), so neither y nor the
// activation's input is read. With dx, a sigmoid's, SiLU's or GELU's gradient overwrites dy
// (computed once, in the first pass).
void cb_fmt_bn_backward(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *beta, const float *mean,
                        const float *invstd, cb_act act, void *dy, void *dx, float *dgamma, float *dbeta, float *part);
// the same for a batch norm without activation followed by a residual sum and a ReLU whose output
// is m (CB_FUSION_BN_ADD): dy, the gradient w.r.t. m, becomes the ReLU's input gradient
// (m > 0 ? dy : 0, stored over dy in the first pass, as the separate pass would leave it for the
// sum's other input), and the batch norm's gradients follow from it. Bit for bit the separate
// ReLU pass and cb_fmt_bn_backward without activation.
void cb_fmt_bn_backward_relu_mask(const cb_bn_params *p, int fmt, const void *x, const float *gamma, const float *mean,
                                  const float *invstd, const void *m, void *dy, void *dx, float *dgamma, float *dbeta, float *part);

// Per-channel layers of today's convnets (chan_fmt.cu), any fmt, tensors (n, c, hw) in the
// storage; the semantics of the reference loops (src/cpu/channel_impl.h). The SE product y = a * b
// with b of a's shape or (n, c, 1, 1) when bcast (then also a's gradient: a = dy); the gradient
// w.r.t. a broadcast b: db (n, c) = sum over pixels of dy * a.
void cb_fmt_mul_forward(int fmt, int n, int c, int64_t hw, int bcast, const void *a, const void *b, void *y);
void cb_fmt_mul_backward_bcast(int fmt, int n, int c, int64_t hw, const void *dy, const void *a, void *db);
// layer scale: y = x * w[c] (also dx = dy * w[c]); dw (c) = sum of dy * x. part: device scratch of
// cb_fmt_layernorm_scratch(c) floats.
void cb_fmt_scale_forward(int fmt, int n, int c, int64_t hw, const void *x, const float *w, void *y);
void cb_fmt_scale_backward_filter(int fmt, int n, int c, int64_t hw, const void *x, const void *dy, float *dw, float *part);
// LayerNorm over the c channels of each of the n * hw pixels, weight g and bias b (c): stats (n *
// hw, 2) keeps each pixel's mean and 1 / sqrt(var + eps) for the backward (may be NULL when none
// follows). Backward: dx (NULL: skipped), dg, db (NULL: skipped, overwritten).
void cb_fmt_layernorm_forward(int fmt, int n, int c, int64_t hw, float eps, const void *x, const float *g, const float *b, void *y,
                              float *stats);
void cb_fmt_layernorm_backward(int fmt, int n, int c, int64_t hw, const void *x, const float *g, const void *dy, const float *stats,
                               void *dx, float *dg, float *db, float *part);
size_t cb_fmt_layernorm_scratch(int64_t c);
// NHWC in 16-byte vectors (chan_fmt.cu) where c is a multiple of 8 (bf16) or 4 (fp32) and the
// tensors are 16-byte aligned: the SE product, its broadcast operand's gradient and the layer scale
// (chan_vec_of), and the LayerNorm's forward and dx with a row held in registers, c at most 2048
// (bf16) or 1024 (fp32) (ln_rows_of). -1 (the default) or 1: there; 0: nowhere, the kernels of an
// element a thread ($CONVBENCH_CHAN_VEC=on|off through cb_dnn_init; the A/B)
void cb_fmt_chan_vec(int mode);

#ifdef __cplusplus
}
#endif
#endif
