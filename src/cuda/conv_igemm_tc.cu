// Own convolution algorithms on the implicit-GEMM bodies of igemm_tc.cuh: tf32 and bf16 tensor
// cores (mma.sync) and a strict-fp32 SIMT kernel, every shape and phase, the tile picked from the
// GEMM's shape; the backward filter splits N*P*Q and accumulates into a zeroed dw with atomics (no
// workspace). And a direct backward data for few input channels (conv_bwd_direct.cuh).
#include "cuda/conv_algo.h"
#include "cuda/conv_bwd_direct.cuh"
#include "cuda/igemm_tc.cuh"
#include "cuda/launch.h"

// the gathers index with 32-bit offsets inside a tensor and divide positions below 2^31
static bool supports(const cb_conv_params *p, cb_phase ph) {
    const long lim = 1L << 31;
    return (long)p->n * p->c * p->h * p->w < lim && (long)p->n * p->k * p->p * p->q < lim && p->r < CB_GATHER_OFF;
}

// the engine's configuration of each kind (cb_tc_resolve; dev/cuda/igemm_lab.cu times the alternatives)
template <cb_tc_kind KIND> static cb_tc_cfg cfg() { return cb_tc_cfg{KIND, 0, 0}; }

template <cb_tc_kind KIND> static void forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    cb_tc_conv_forward(cfg<KIND>(), p, x, w, b, y, relu);
}

template <cb_tc_kind KIND> static void backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws) {
    cb_tc_conv_backward_data(cfg<KIND>(), p, dy, w, dx);
}

template <cb_tc_kind KIND>
static void backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws) {
    cb_tc_conv_backward_filter(cfg<KIND>(), p, x, dy, dw);
    if (db) cb_cuda_bias_grad(p->n, p->k, p->p * p->q, dy, db);
}

extern "C" const cb_cuda_conv_algo cb_conv_algo_igemm_simt128 = {
    "igemm-simt-128", CB_PREC_FP32,
    "implicit GEMM, 128x128 (or 64x256, 256x64) x8 tiles, cp.async 4 stages, 8x8 outputs per thread, fp32 FMA (every shape, every phase)",
    supports, NULL, forward<CB_TC_SIMT>, backward_data<CB_TC_SIMT>, backward_filter<CB_TC_SIMT>,
};

extern "C" const cb_cuda_conv_algo cb_conv_algo_igemm_tf32 = {
    "igemm-tf32", CB_PREC_TF32,
    "implicit GEMM on tensor cores, mma.sync tf32, 128x128 (or 64x256, 256x64) x16 tiles, cp.async 4 stages (backward filter: register-staged 128x128 unless K/g <= 64), fp32 accumulation",
    supports, NULL, forward<CB_TC_TF32>, backward_data<CB_TC_TF32>, backward_filter<CB_TC_TF32>,
};

extern "C" const cb_cuda_conv_algo cb_conv_algo_igemm_bf16 = {
    "igemm-bf16", CB_PREC_BF16,
    "implicit GEMM on tensor cores, mma.sync bf16, 128x128 (or 64x256, 256x64) x16 tiles, cp.async 4 stages (backward filter: register-staged 128x128 unless K/g <= 64), fp32 accumulation",
    supports, NULL, forward<CB_TC_BF16>, backward_data<CB_TC_BF16>, backward_filter<CB_TC_BF16>,
};

static bool direct_supports(const cb_conv_params *p, cb_phase ph) { return ph == CB_PHASE_BWD_DATA && cb_conv_bwd_data_direct_supports(p); }

static void direct_backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws) {
    cb_conv_bwd_data_direct(p, dy, w, dx);
}

extern "C" const cb_cuda_conv_algo cb_conv_algo_bwd_data_direct = {
    "bwd-data-direct", CB_PREC_FP32, "backward data only, direct, for at most 8 input channels per group (first layers), fp32 FMA",
    direct_supports, NULL, NULL, direct_backward_data, NULL,
};
