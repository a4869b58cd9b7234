// The own-algorithm table's entry for the Hopper wgmma implicit GEMM (igemm_wgmma.cuh): every
// phase (the backward data at stride 1), on compute capability 9.0 only; and (at the end) the same
// kernels on bf16 NHWC storage as it is, for the cudnn and auto backends. The table hands fp32 NCHW buffers,
// so the inputs go to bf16 NHWC / KRSC copies in the workspace first (the kernel's operands) and
// the epilogue writes fp32 NCHW; the products and sums are those of bf16 storage (bf16 operands,
// fp32 accumulation). Shapes it declines (cb_wg_shape_ok, and a stride other than 1 for the
// backward data) run on the other algorithms. The backward filter adds pixel splits into a zeroed
// dw with atomics (igemm-bf16's way), so its sums are not deterministic.
#include "cuda/conv_algo.h"
#include "cuda/igemm_wgmma.cuh"
#include "cuda/launch.h"
#include "storage/format.h"

static size_t align256(size_t b) { return (b + 255) / 256 * 256; }

// (threads of one process may start backends at once, all with the same value)
extern "C" void cb_cuda_wg_set_blocks(long n) { __atomic_store_n(&cb_wg_max_blocks, n > 0 ? n : 0, __ATOMIC_RELAXED); }
extern "C" void cb_cuda_wg_set_tma(int on) { __atomic_store_n(&cb_wg_tma, on ? 1 : 0, __ATOMIC_RELAXED); }
static int cb_wg_x3_on = 1;
extern "C" void cb_cuda_wg_set_x3(int on) { __atomic_store_n(&cb_wg_x3_on, on ? 1 : 0, __ATOMIC_RELAXED); }

extern "C" bool cb_cuda_wg_store_supports(const cb_conv_params *p, cb_phase ph, int f32) {
    if (f32 == 2 && !__atomic_load_n(&cb_wg_x3_on, __ATOMIC_RELAXED)) return false;
    if (!cb_wg_shape_ok(p, f32) || !cb_wg_device_ok()) return false;
    if (f32) { // the TMA kernels alone: the maps must take the padding (the backward filter's im2col map is the forward's)
        cb_wg_args a = ph == CB_PHASE_BWD_DATA ? cb_wg_args_bwd_data(p) : cb_wg_args_fwd(p);
        if (!cb_wg_pads_fit(a) || (ph == CB_PHASE_BWD_FILTER && p->k > 65535)) return false; // (the KCRS transpose's grid)
    }
    if (ph != CB_PHASE_BWD_DATA) return true;
    // as a forward over dy: its channels K are the k-steps' 64 (32), C the outputs' 8
    return p->stride_h == 1 && p->stride_w == 1 && p->k % (f32 ? 32 : 64) == 0 && p->c % 8 == 0 &&
           ((long)p->n * p->h * p->w / 128 + 1) * (p->c / 64 + 1) < (1L << 31);
}

static bool supports(const cb_conv_params *p, cb_phase ph) { return cb_cuda_wg_store_supports(p, ph, 0); }

// forward: x (N, H, W, C) and w (K, R, S, C); backward data: dy (N, P, Q, K) and wT (C, R, S, K);
// backward filter: dy and x; bf16

static size_t workspace(const cb_conv_params *p, cb_phase ph) {
    size_t wb = align256((size_t)p->k * p->c * p->r * p->s * 2);
    if (ph == CB_PHASE_FORWARD) return align256((size_t)p->n * p->c * p->h * p->w * 2) + wb;
    size_t yb = align256((size_t)p->n * p->k * p->p * p->q * 2);
    return ph == CB_PHASE_BWD_DATA ? yb + wb : yb + align256((size_t)p->n * p->c * p->h * p->w * 2) + cb_wg_wgrad_kcrs_workspace(p);
}

static void forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    __nv_bfloat16 *xb = (__nv_bfloat16 *)ws, *wb = (__nv_bfloat16 *)((char *)ws + align256((size_t)p->n * p->c * p->h * p->w * 2));
    cb_fmt_convert(p->n, p->c, p->h, p->w, x, 0, xb, CB_FMT_NHWC | CB_FMT_BF16);
    cb_fmt_convert(p->k, p->c, p->r, p->s, w, 0, wb, CB_FMT_NHWC | CB_FMT_BF16); // KCRS -> KRSC
    cb_wg_args a = cb_wg_args_fwd(p);
    a.x = xb, a.w = wb, a.bias = b, a.y = y, a.relu = relu;
    cb_wg_launch<true>(a, 0);
}

static void backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws) {
    __nv_bfloat16 *dyb = (__nv_bfloat16 *)ws, *wt = (__nv_bfloat16 *)((char *)ws + align256((size_t)p->n * p->k * p->p * p->q * 2));
    cb_fmt_convert(p->n, p->k, p->p, p->q, dy, 0, dyb, CB_FMT_NHWC | CB_FMT_BF16);
    cb_wg_flip(p, w, wt);
    cb_wg_args a = cb_wg_args_bwd_data(p);
    a.x = dyb, a.w = wt, a.y = dx;
    cb_wg_launch<true>(a, 0);
}

static void backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws) {
    const size_t yb = align256((size_t)p->n * p->k * p->p * p->q * 2), xbb = align256((size_t)p->n * p->c * p->h * p->w * 2);
    __nv_bfloat16 *dyb = (__nv_bfloat16 *)ws, *xb = (__nv_bfloat16 *)((char *)ws + yb);
    cb_fmt_convert(p->n, p->k, p->p, p->q, dy, 0, dyb, CB_FMT_NHWC | CB_FMT_BF16);
    cb_fmt_convert(p->n, p->c, p->h, p->w, x, 0, xb, CB_FMT_NHWC | CB_FMT_BF16);
    cb_wg_wgrad_args a = cb_wg_wgrad_args_make(p);
    a.x = xb, a.dy = dyb, a.dw = dw;
    cb_wg_wgrad_kcrs(a, (float *)((char *)ws + yb + xbb), 0);
    if (db) cb_cuda_bias_grad(p->n, p->k, p->p * p->q, dy, db);
}

extern "C" const cb_cuda_conv_algo cb_conv_algo_igemm_wgmma_bf16 = {
    "igemm-wgmma-bf16", CB_PREC_BF16,
    "implicit GEMM on Hopper tensor cores (sm_90 only), wgmma bf16 from 128B-swizzled shared memory, 256x128 (or 128x128, 256x64, 128x64) x64 tiles, cp.async gathers of bf16 NHWC copies (the backward filter, and under cudnn and auto on bf16 NHWC every phase on the tensors themselves: TMA im2col loads into a warp-specialized pipeline), fp32 accumulation; every phase (backward data at stride 1, K a multiple of 64); C a multiple of 64, K of 8",
    supports, workspace, forward, backward_data, backward_filter,
};

// ---- tf32 (igemm-wgmma-tf32): the TMA kernels on fp32 NHWC copies -----------------------------
// Every phase (the backward data at stride 1) on fp32 copies in NHWC / KRSC (C a multiple of 32), tf32
// products: the forward's and backward data's output NHWC in the workspace, then back to NCHW; the
// backward filter by way of its transposing kernel (cb_wgmma_wgrad_tf32_kernel) into KRSC, then KCRS.

static bool supports_tf32(const cb_conv_params *p, cb_phase ph) { return cb_cuda_wg_store_supports(p, ph, 1); }

// forward: x, w, y copies; backward data: dy, wT, dx copies; backward filter: x, dy copies and the KRSC sums
static size_t workspace_tf32(const cb_conv_params *p, cb_phase ph) {
    const size_t xb = align256((size_t)p->n * p->c * p->h * p->w * 4), yb = align256((size_t)p->n * p->k * p->p * p->q * 4);
    return xb + yb + (ph == CB_PHASE_BWD_FILTER ? cb_wg_wgrad_kcrs_workspace(p) : align256((size_t)p->k * p->c * p->r * p->s * 4));
}

// (x3: fp32-accurate products, 3xTF32: igemm-wgmma-3xtf32 below)
static void forward_f32(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu, void *ws, bool x3) {
    float *xs = (float *)ws, *ys = (float *)((char *)ws + align256((size_t)p->n * p->c * p->h * p->w * 4));
    float *wk = (float *)((char *)ys + align256((size_t)p->n * p->k * p->p * p->q * 4));
    cb_fmt_convert(p->n, p->c, p->h, p->w, x, 0, xs, CB_FMT_NHWC);
    cb_fmt_convert(p->k, p->c, p->r, p->s, w, 0, wk, CB_FMT_NHWC); // KCRS -> KRSC
    cb_wg_args a = x3 ? cb_wg_args_x3(cb_wg_args_fwd(p)) : cb_wg_args_tf32(cb_wg_args_fwd(p));
    a.x = xs, a.w = wk, a.bias = b, a.y = ys, a.relu = relu;
    cb_wg_launch<false>(a, 0);
    cb_fmt_convert(p->n, p->k, p->p, p->q, ys, CB_FMT_NHWC, y, 0);
}

static void backward_data_f32(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws, bool x3) {
    float *dys = (float *)ws, *dxs = (float *)((char *)ws + align256((size_t)p->n * p->k * p->p * p->q * 4));
    float *wt = (float *)((char *)dxs + align256((size_t)p->n * p->c * p->h * p->w * 4));
    cb_fmt_convert(p->n, p->k, p->p, p->q, dy, 0, dys, CB_FMT_NHWC);
    cb_wg_flip_f32(p, w, wt, false); // KCRS -> (C, R, S, K) flipped
    cb_wg_args a = x3 ? cb_wg_args_x3(cb_wg_args_bwd_data(p)) : cb_wg_args_tf32(cb_wg_args_bwd_data(p));
    a.x = dys, a.w = wt, a.y = dxs;
    cb_wg_launch<false>(a, 0);
    cb_fmt_convert(p->n, p->c, p->h, p->w, dxs, CB_FMT_NHWC, dx, 0);
}
static void forward_tf32(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    forward_f32(p, x, w, b, y, relu, ws, false);
}
static void backward_data_tf32(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws) { backward_data_f32(p, dy, w, dx, ws, false); }

static void backward_filter_f32(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws, bool x3) {
    float *xs = (float *)ws, *dys = (float *)((char *)ws + align256((size_t)p->n * p->c * p->h * p->w * 4));
    float *kr = (float *)((char *)dys + align256((size_t)p->n * p->k * p->p * p->q * 4));
    cb_fmt_convert(p->n, p->c, p->h, p->w, x, 0, xs, CB_FMT_NHWC);
    cb_fmt_convert(p->n, p->k, p->p, p->q, dy, 0, dys, CB_FMT_NHWC);
    cb_wg_wgrad_args a = cb_wg_wgrad_args_make(p);
    a.x = xs, a.dy = dys, a.dw = dw, a.f32 = 1, a.x3 = x3;
    cb_wg_wgrad_kcrs(a, kr, 0);
    if (db) cb_cuda_bias_grad(p->n, p->k, p->p * p->q, dy, db);
}
static void backward_filter_tf32(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws) {
    backward_filter_f32(p, x, dy, dw, db, ws, false);
}

extern "C" const cb_cuda_conv_algo cb_conv_algo_igemm_wgmma_tf32 = {
    "igemm-wgmma-tf32", CB_PREC_TF32,
    "implicit GEMM on Hopper tensor cores (sm_90 only), wgmma tf32 on fp32 operands fed by TMA (im2col for the activations) into warp-specialized pipelines, 128x128 to 256x128 x32 tiles (the backward filter's panels transposed to K-major in shared memory by three warps), fp32 accumulation; on fp32 NHWC copies (fp32 NHWC storage under cudnn and auto: the tensors themselves); every phase (backward data at stride 1, K a multiple of 32); C a multiple of 32, K of 8",
    supports_tf32, workspace_tf32, forward_tf32, backward_data_tf32, backward_filter_tf32,
};

// ---- fp32 (igemm-wgmma-3xtf32): the same on fp32 NHWC copies, fp32-accurate products ----------
// Each operand split in shared memory into a tf32 high part and a tf32 remainder, three tf32 wgmma
// per slice (hi*hi + hi*lo + lo*hi; the lo*lo term, under 2^-22 of a product, left out), each k-step's
// sum added into fp32 registers: within fp32's error, on tensor cores (the fp32 tolerance of the
// checks, against float64). Every phase (the backward data at stride 1).

static bool supports_x3(const cb_conv_params *p, cb_phase ph) { return cb_cuda_wg_store_supports(p, ph, 2); }
static void forward_x3(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    forward_f32(p, x, w, b, y, relu, ws, true);
}
static void backward_data_x3(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws) { backward_data_f32(p, dy, w, dx, ws, true); }
static void backward_filter_x3(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws) {
    backward_filter_f32(p, x, dy, dw, db, ws, true);
}

extern "C" const cb_cuda_conv_algo cb_conv_algo_igemm_wgmma_x3 = {
    "igemm-wgmma-3xtf32", CB_PREC_FP32,
    "implicit GEMM on Hopper tensor cores (sm_90 only) with fp32-accurate products: fp32 operands fed by TMA, split in shared memory into tf32 high parts and remainders, three tf32 wgmma a slice (3xTF32), each k-step's sum added into fp32 registers, 128x128 or 128x64 x32 tiles (the backward filter 64x128, its panels transposed to K-major); on fp32 NHWC copies (fp32 NHWC storage under cudnn and auto: the tensors themselves); every phase (backward data at stride 1, K a multiple of 32); C a multiple of 32, K of 8",
    supports_x3, workspace_tf32, forward_x3, backward_data_x3, backward_filter_x3,
};

// ---- on bf16 NHWC storage (launch.h): the kernels on the tensors as they are --------------------

extern "C" size_t cb_cuda_wg_store_workspace(const cb_conv_params *p, cb_phase ph, int f32) {
    return ph == CB_PHASE_BWD_DATA ? align256((size_t)p->k * p->c * p->r * p->s * (f32 ? 4 : 2))
                                   : ph == CB_PHASE_BWD_FILTER ? cb_wg_wgrad_kcrs_workspace(p) : 0;
}

extern "C" void cb_cuda_wg_store_forward(const cb_conv_params *p, const void *x, const void *w, const float *b, void *y, int relu, int f32) {
    cb_wg_args a = cb_wg_args_fwd(p);
    if (f32) a = f32 == 2 ? cb_wg_args_x3(a) : cb_wg_args_tf32(a);
    a.x = x, a.w = w, a.bias = b, a.y = y, a.relu = relu;
    cb_wg_launch<false>(a, 0);
}

extern "C" void cb_cuda_wg_store_backward_data(const cb_conv_params *p, const void *dy, const void *w, void *dx, void *ws, int f32) {
    cb_wg_args a = cb_wg_args_bwd_data(p);
    if (f32) { // KRSC fp32 -> (C, R, S, K) flipped
        cb_wg_flip_f32(p, (const float *)w, (float *)ws, true);
        a = f32 == 2 ? cb_wg_args_x3(a) : cb_wg_args_tf32(a);
    } else {
        cb_wg_flip(p, (const __nv_bfloat16 *)w, (__nv_bfloat16 *)ws); // KRSC -> (C, R, S, K) flipped
    }
    a.x = dy, a.w = ws, a.y = dx;
    cb_wg_launch<false>(a, 0);
}

extern "C" void cb_cuda_wg_store_backward_filter(const cb_conv_params *p, const void *x, const void *dy, float *dw, void *ws, int f32) {
    cb_wg_wgrad_args a = cb_wg_wgrad_args_make(p);
    a.x = x, a.dy = dy, a.dw = dw, a.f32 = f32 != 0, a.x3 = f32 == 2;
    cb_wg_wgrad_kcrs(a, (float *)ws, 0);
}
