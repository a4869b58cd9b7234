// The table of convbench's own GPU convolution algorithms (src/cuda/conv_algo.h). Each algorithm
// lives in its own .cu file and exports one cb_cuda_conv_algo; add it here.
#include "cuda/conv_algo.h"

#include <string.h>

extern const cb_cuda_conv_algo cb_conv_algo_igemm_simt;
extern const cb_cuda_conv_algo cb_conv_algo_direct_const, cb_conv_algo_direct_const_pool, cb_conv_algo_direct_smem,
    cb_conv_algo_direct_smem_pool, cb_conv_algo_unroll_smem, cb_conv_algo_direct_tf32, cb_conv_algo_direct_tf32_pool,
    cb_conv_algo_direct_bf16, cb_conv_algo_direct_bf16_pool;
extern const cb_cuda_conv_algo cb_conv_algo_fft_cufft;
extern const cb_cuda_conv_algo cb_conv_algo_winograd_f2x2;
extern const cb_cuda_conv_algo cb_conv_algo_igemm_simt128, cb_conv_algo_igemm_tf32, cb_conv_algo_igemm_bf16,
    cb_conv_algo_bwd_data_direct;
extern const cb_cuda_conv_algo cb_conv_algo_igemm_wgmma_bf16, cb_conv_algo_igemm_wgmma_tf32, cb_conv_algo_igemm_wgmma_x3;

const cb_cuda_conv_algo *const cb_cuda_conv_algos[] = {
    &cb_conv_algo_igemm_simt,
    &cb_conv_algo_direct_const, &cb_conv_algo_direct_const_pool, &cb_conv_algo_direct_smem, &cb_conv_algo_direct_smem_pool,
    &cb_conv_algo_unroll_smem, &cb_conv_algo_direct_tf32, &cb_conv_algo_direct_tf32_pool, &cb_conv_algo_direct_bf16,
    &cb_conv_algo_direct_bf16_pool,
    &cb_conv_algo_igemm_simt128, &cb_conv_algo_igemm_tf32, &cb_conv_algo_igemm_bf16, &cb_conv_algo_bwd_data_direct,
    &cb_conv_algo_igemm_wgmma_bf16, &cb_conv_algo_igemm_wgmma_tf32,
    &cb_conv_algo_fft_cufft,
    &cb_conv_algo_winograd_f2x2,
    &cb_conv_algo_depthwise,
    &cb_conv_algo_igemm_wgmma_x3, // (last: the ids before it unchanged)
    NULL,
};

int cb_cuda_conv_algo_index(const cb_cuda_conv_algo *a) {
    for (int i = 0; cb_cuda_conv_algos[i]; i++)
        if (cb_cuda_conv_algos[i] == a) return i;
    return -1;
}

const cb_cuda_conv_algo *cb_cuda_conv_algo_find(const char *name) {
    for (int i = 0; name && cb_cuda_conv_algos[i]; i++)
        if (strcmp(cb_cuda_conv_algos[i]->name, name) == 0) return cb_cuda_conv_algos[i];
    return NULL;
}

bool cb_cuda_conv_algo_allowed(const cb_cuda_conv_algo *a, cb_precision prec) {
    switch (a->prec) {
    case CB_PREC_FP32: return true;
    case CB_PREC_TF32: return prec == CB_PREC_TF32 || prec == CB_PREC_BF16;
    case CB_PREC_BF16: return prec == CB_PREC_BF16;
    default: return false;
    }
}

bool cb_cuda_conv_algo_supports(const cb_cuda_conv_algo *a, const cb_conv_params *p, cb_phase ph) {
    bool has = ph == CB_PHASE_FORWARD ? a->forward != NULL : ph == CB_PHASE_BWD_DATA ? a->backward_data != NULL
                                                                                       : a->backward_filter != NULL;
    return has && (!a->supports || a->supports(p, ph));
}

size_t cb_cuda_conv_algo_workspace(const cb_cuda_conv_algo *a, const cb_conv_params *p, cb_phase ph) {
    return a->workspace ? a->workspace(p, ph) : 0;
}
