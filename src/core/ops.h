// The op vocabulary every backend and the model share: one parameter struct per op kind and the
// one function that derives it from a layer. No backend owns these; the CPU kernels
// (src/cpu/kernels.h), the CUDA kernels (src/cuda/launch.h), cuDNN's descriptors and the
// analytical model all read the same structs.
//
// Shapes are given by the params structs; buffer shapes are in the kernels' comments.
// Padding is TensorFlow's: pad_top/pad_left are the leading pads, the trailing pads are implied
// by the output size (p, q), so asymmetric SAME padding needs no extra fields.
#ifndef CB_CORE_OPS_H
#define CB_CORE_OPS_H

#include "convbench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_conv_params {
    int n, c, h, w;        // input (N, C, H, W)
    int k, r, s;           // K filters of R x S over C/groups channels
    int p, q;              // output height, width
    int stride_h, stride_w;
    int pad_top, pad_left; // leading padding; trailing = (p-1)*stride_h + r - h - pad_top (may be < 0)
    int groups;            // 1 for dense; c and k are multiples of groups
    int dil_h, dil_w;      // dilation (tap kh reads row oh*stride_h - pad_top + kh*dil_h); 0 or 1: none
} cb_conv_params;

// The input channels of a convolution's channel-padded copy on NHWC storage (the cudnn backend's,
// src/storage/storage.c, and the model's price of it): c rounded up to 16 bytes' worth of elements.
static inline int64_t cb_conv_cpad_to(int64_t c, bool bf16) {
    int64_t a = bf16 ? 8 : 4;
    return (c + a - 1) / a * a;
}
// Does the cudnn backend pad them by default in precision p under cuDNN's graph race (storage.c
// says why): only in bf16. fp32 and tf32 take the channels as they are (the graph engines do).
static inline bool cb_conv_cpad_default(cb_precision p) { return p == CB_PREC_BF16; }

typedef struct cb_pool_params {
    int n, c, h, w;        // input (N, C, H, W)
    int r, s;              // window
    int p, q;              // output
    int stride_h, stride_w;
    int pad_top, pad_left;
    int is_avg;            // 0 max, 1 average (padding excluded from the count, as TensorFlow)
    int relu_mask;         // max, training: the input is a ReLU's output whose gradient this pool's backward applies
                           // (a window whose maximum is <= 0 keeps no argmax: its gradient would be masked)
} cb_pool_params;

typedef struct cb_lrn_params {
    int n, c, h, w;
    int size;              // window across channels (odd)
    float alpha, beta, k;  // y = x / (k + alpha/size * sum_{window} x^2)^beta  (Caffe/PyTorch convention)
} cb_lrn_params;

typedef struct cb_bn_params {
    int n, c, h, w;
    float eps;
} cb_bn_params;

// A convolution layer's geometry; an InnerProduct layer is the 1x1 convolution of its (N, C, 1, 1)
// input with (K, C, 1, 1) weights (the same memory layouts).
void cb_conv_params_of(const cb_layer *L, cb_conv_params *p);
// Bytes of conv or FC layer L's weights as the GPU backends' storage keeps a copy of them for
// precision p and layout l (src/storage/storage.c): a convolution's on NHWC or bf16 storage (KRSC
// under NHWC, its input channels padded as cb_conv_cpad_to where cb_conv_cpad_default says: in
// bf16), an FC layer's on bf16; 0 where the layer reads its fp32 masters. The plans that place these
// copies without a GPU use it (summary's, the model's).
size_t cb_weight_copy_bytes(const cb_layer *L, cb_precision p, cb_layout l);

// Does pool layer L's output size follow from its leading pads on both sides (what cuDNN's pooling
// expresses, cudnnGetPooling2dForwardOutputDim)? False for a TF SAME pool whose trailing pad
// differs: the GPU backends run it on the own kernels (src/cudnn/plan.c), and the model prices so.
bool cb_pool_pads_symmetric(const cb_layer *L);

void cb_pool_params_of(const cb_layer *L, cb_pool_params *p);
void cb_lrn_params_of(const cb_layer *L, cb_lrn_params *p);
// a BatchNorm layer's, or the batch norm fused after a Convolution / InnerProduct (L->bn)
void cb_bn_params_of(const cb_layer *L, cb_bn_params *p);

#ifdef __cplusplus
}
#endif
#endif
