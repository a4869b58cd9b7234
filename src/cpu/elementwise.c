// Fast CPU elementwise kernels: activations (src/core/act.h), dropout, softmax, the SGD update.
#include <math.h>

#include "cpu/kernels.h"
#include "core/rng.h"
#include "core/act.h"

// Each activation's loop compiled apart (the switch outside the loop, so cb_act_*_f32 folds to
// that function's expression and the loop can take SIMD lanes where its math allows)
#define ACT_CASES(X)                                                                                                   \
    X(CB_ACT_NONE) X(CB_ACT_RELU) X(CB_ACT_SIGMOID) X(CB_ACT_SILU) X(CB_ACT_HARDSWISH) X(CB_ACT_HARDSIGMOID)           \
    X(CB_ACT_RELU6) X(CB_ACT_GELU)
_Static_assert(CB_ACT_COUNT == 8, "an activation added to src/core/act.h needs its case in ACT_CASES");

void cb_cpu_act_forward(size_t n, cb_act a, const float *x, float *xsave, float *y)
{
    if (xsave) { // the input, for a gradient that reads it (y may equal x)
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < n; i++) xsave[i] = x[i];
    }
#define FWD_CASE(A)                                                                                                    \
    case A: {                                                                                                          \
        _Pragma("omp parallel for simd schedule(static)") for (size_t i = 0; i < n; i++) y[i] = cb_act_fwd_f32(A, x[i]); \
        break;                                                                                                         \
    }
    switch (a) {
        ACT_CASES(FWD_CASE)
    default: break;
    }
#undef FWD_CASE
}

// a ReLU's is gated on the output y > 0 (so the input need not be kept); dx may equal dy
void cb_cpu_act_backward(size_t n, cb_act a, const float *x, const float *y, const float *dy, float *dx)
{
#define BWD_CASE(A)                                                                                                    \
    case A: {                                                                                                          \
        if (x) {                                                                                                       \
            _Pragma("omp parallel for simd schedule(static)") for (size_t i = 0; i < n; i++) dx[i] =                    \
                cb_act_bwd_f32(A, x[i], y[i], dy[i]);                                                                  \
        } else {                                                                                                       \
            _Pragma("omp parallel for simd schedule(static)") for (size_t i = 0; i < n; i++) dx[i] =                    \
                cb_act_bwd_f32(A, 0.0f, y[i], dy[i]);                                                                  \
        }                                                                                                              \
        break;                                                                                                         \
    }
    switch (a) {
        ACT_CASES(BWD_CASE)
    default: break;
    }
#undef BWD_CASE
}
#undef ACT_CASES

// mask (n): 0 or 1/keep, drawn sequentially from xorshift64* so a given seed gives one mask
// whatever the thread count; y = x * mask
void cb_cpu_dropout_forward(size_t n, float keep, uint64_t *rng_state, const float *x, float *mask, float *y)
{
    uint64_t s = *rng_state ? *rng_state : 0x9E3779B97F4A7C15ull; // xorshift is stuck at 0
    const float inv = 1.0f / keep;
    for (size_t i = 0; i < n; i++) mask[i] = cb_rng_unit(&s) < keep ? inv : 0.0f;
    *rng_state = s;
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++) y[i] = x[i] * mask[i];
}

void cb_cpu_dropout_backward(size_t n, const float *mask, const float *dy, float *dx)
{
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++) dx[i] = dy[i] * mask[i];
}

// x (N,K) -> prob (N,K), shifted by the row maximum
void cb_cpu_softmax_forward(int n, int k, const float *x, float *prob)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        const float *xr = x + (size_t)i * k;
        float *pr = prob + (size_t)i * k;
        float mx = xr[0];
        for (int j = 1; j < k; j++) mx = xr[j] > mx ? xr[j] : mx;
        double sum = 0.0;
        for (int j = 0; j < k; j++) {
            pr[j] = expf(xr[j] - mx);
            sum += pr[j];
        }
        const float inv = (float)(1.0 / sum);
        for (int j = 0; j < k; j++) pr[j] *= inv;
    }
}

// PyTorch's SGD: g' = g + wd*w; v = momentum*v + g'; w -= lr*v  (v may be NULL when momentum == 0)
void cb_cpu_sgd_update(size_t n, float lr, float momentum, float wd, float *w, const float *g, float *v)
{
    if (momentum == 0.0f || !v) {
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < n; i++) w[i] -= lr * (g[i] + wd * w[i]);
        return;
    }
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++) {
        v[i] = momentum * v[i] + g[i] + wd * w[i];
        w[i] -= lr * v[i];
    }
}
