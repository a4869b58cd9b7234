// Activation functions: the one definition of each, read by every backend (C, and CUDA device
// code through the same header), the float64 reference and the description reader. Adding one
// (docs/adding-a-layer.md): its value in cb_act (include/convbench.h), its name in cb_act_name,
// its forward and gradient in src/core/act_impl.h; every backend then runs it, fused after a
// Convolution, InnerProduct or Elementwise ("activation_fn") and as an Activation layer ("fn").
#ifndef CB_CORE_ACT_H
#define CB_CORE_ACT_H

#include "convbench.h"

#include <math.h>
#include <string.h>

#ifdef __CUDACC__
#define CB_ACT_HD static inline __host__ __device__
#else
#define CB_ACT_HD static inline
#endif

// the name "activation_fn" and "fn" take (lower case, as ONNX importers emit them); NULL: none
static inline const char *cb_act_name(cb_act a) {
    switch (a) {
    case CB_ACT_NONE: return "none";
    case CB_ACT_RELU: return "relu";
    case CB_ACT_SIGMOID: return "sigmoid";
    case CB_ACT_SILU: return "silu";
    case CB_ACT_HARDSWISH: return "hardswish";
    case CB_ACT_HARDSIGMOID: return "hardsigmoid";
    case CB_ACT_RELU6: return "relu6";
    case CB_ACT_GELU: return "gelu";
    case CB_ACT_COUNT: break;
    }
    return NULL;
}

static inline bool cb_act_parse(const char *s, cb_act *a) {
    for (int i = 0; i < CB_ACT_COUNT; i++)
        if (cb_act_name((cb_act)i) && strcmp(s, cb_act_name((cb_act)i)) == 0) return *a = (cb_act)i, true;
    return false;
}

// does the gradient of a read its input x (not only its output y)? The engine then keeps the
// input of a fused activation (cb_lbuf.act_in).
CB_ACT_HD bool cb_act_needs_input(cb_act a) {
    switch (a) {
    case CB_ACT_SILU:
    case CB_ACT_HARDSWISH:
    case CB_ACT_GELU: return true;
    case CB_ACT_NONE:
    case CB_ACT_RELU:
    case CB_ACT_SIGMOID:     // y (1 - y)
    case CB_ACT_HARDSIGMOID: // 0 < y < 1
    case CB_ACT_RELU6:       // 0 < y < 6
    case CB_ACT_COUNT: return false;
    }
    return false;
}

// fp32 (every backend) and float64 (the reference the tests check against): cb_act_fwd_f32,
// cb_act_bwd_f32, cb_act_fwd_f64, cb_act_bwd_f64
#define ACT_T float
#define ACT_FN(name) cb_act_##name##_f32
#define ACT_EXP expf
#define ACT_ERF erff
#include "core/act_impl.h"
#undef ACT_T
#undef ACT_FN
#undef ACT_EXP
#undef ACT_ERF
#define ACT_T double
#define ACT_FN(name) cb_act_##name##_f64
#define ACT_EXP exp
#define ACT_ERF erf
#include "core/act_impl.h"
#undef ACT_T
#undef ACT_FN
#undef ACT_EXP
#undef ACT_ERF

#endif
