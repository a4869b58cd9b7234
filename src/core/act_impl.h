// Every activation function's forward and gradient, once, for element type ACT_T (src/core/act.h
// includes this twice: float and double). Conventions are PyTorch's, gradients at kinks included.
// x: the function's input, y = f(x), dy: dL/dy. cb_act_needs_input says which gradients read x
// (the others read y alone, and the engine saves no input for them).

CB_ACT_HD ACT_T ACT_FN(fwd)(cb_act a, ACT_T x) {
    switch (a) {
    case CB_ACT_NONE: return x;
    case CB_ACT_RELU: return x > 0 ? x : (ACT_T)0;
    case CB_ACT_SIGMOID: return 1 / (1 + ACT_EXP(-x));
    case CB_ACT_SILU: return x / (1 + ACT_EXP(-x));
    case CB_ACT_HARDSWISH: return x <= -3 ? (ACT_T)0 : x >= 3 ? x : x * (x + 3) / 6;
    case CB_ACT_HARDSIGMOID: return x <= -3 ? (ACT_T)0 : x >= 3 ? (ACT_T)1 : x / 6 + (ACT_T)0.5;
    case CB_ACT_RELU6: return x <= 0 ? (ACT_T)0 : x >= 6 ? (ACT_T)6 : x;
    case CB_ACT_GELU: return (ACT_T)0.5 * x * (1 + ACT_ERF(x * (ACT_T)0.70710678118654752440));
    case CB_ACT_COUNT: break;
    }
    return x;
}

CB_ACT_HD ACT_T ACT_FN(bwd)(cb_act a, ACT_T x, ACT_T y, ACT_T dy) {
    (void)x;
    switch (a) {
    case CB_ACT_NONE: return dy;
    case CB_ACT_RELU: return y > 0 ? dy : (ACT_T)0;
    case CB_ACT_SIGMOID: return dy * y * (1 - y);
    case CB_ACT_SILU: {
        ACT_T s = 1 / (1 + ACT_EXP(-x));
        return dy * s * (1 + x * (1 - s));
    }
    case CB_ACT_HARDSWISH: return x < -3 ? (ACT_T)0 : x > 3 ? dy : dy * (x / 3 + (ACT_T)0.5); // PyTorch: x in [-3, 3]
    case CB_ACT_HARDSIGMOID: return y > 0 && y < 1 ? dy / 6 : (ACT_T)0;                          // open interval, as PyTorch
    case CB_ACT_RELU6: return y > 0 && y < 6 ? dy : (ACT_T)0;
    case CB_ACT_GELU: // Phi(x) + x phi(x)
        return dy * ((ACT_T)0.5 * (1 + ACT_ERF(x * (ACT_T)0.70710678118654752440)) +
                     x * ACT_EXP(-(ACT_T)0.5 * x * x) * (ACT_T)0.39894228040143267794);
    case CB_ACT_COUNT: break;
    }
    return dy;
}
