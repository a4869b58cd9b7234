// Every activation function's forward and gradient, once, for element type ACT_T (src/core/act.h
// includes this twice: float and double). Conventions are PyTorch's, gradients at kinks included.
// x: the function's input, y = f(x), dy: dL/dy. cb_act_needs_input says which gradients read x
// (the others read y alone, and the engine saves no input for them).

CB_ACT_HD ACT_T ACT_FN(fwd)(cb_act a, ACT_T x) {
    switch (a) {
    case CB_ACT_NONE: return x;
    case CB_ACT_RELU: return x > 0 ? x : (ACT_T)0;
    case CB_ACT_COUNT: break;
    }
    return x;
}

CB_ACT_HD ACT_T ACT_FN(bwd)(cb_act a, ACT_T x, ACT_T y, ACT_T dy) {
    (void)x;
    switch (a) {
    case CB_ACT_NONE: return dy;
    case CB_ACT_RELU: return y > 0 ? dy : (ACT_T)0;
    case CB_ACT_COUNT: break;
    }
    return dy;
}
