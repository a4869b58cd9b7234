// Backward data of a stride-1 convolution as a forward convolution, on the own blocked or
// Winograd kernels: dx (N, C, H, W) = the convolution of dy (N, K, P, Q) with the filters flipped
// and transposed, w' (C, K, R, S), w'[c][k][r][s] = w[k][c][R-1-r][S-1-s], padded R-1-pad_top
// above and S-1-pad_left left (a negative padding crops; both forward kernels take it).
// Stride 1, undilated, groups 1: with a stride the gradient is a convolution of a dilated dy.
#include "cpu/kernels.h"

bool cb_cpu_dgrad_applies(const cb_conv_params *p, bool winograd) {
    if (p->groups != 1 || p->stride_h != 1 || p->stride_w != 1 || p->dil_h > 1 || p->dil_w > 1) return false;
    cb_conv_params q;
    cb_cpu_dgrad_params(p, &q);
    return winograd ? cb_cpu_winograd_supports(&q) : cb_cpu_blocked_supports(&q);
}

void cb_cpu_dgrad_params(const cb_conv_params *p, cb_conv_params *q) {
    *q = *p;
    q->c = p->k, q->k = p->c;
    q->h = p->p, q->w = p->q, q->p = p->h, q->q = p->w;
    q->pad_top = p->r - 1 - p->pad_top, q->pad_left = p->s - 1 - p->pad_left;
}

size_t cb_cpu_dgrad_workspace(const cb_conv_params *p, bool winograd) {
    cb_conv_params q;
    cb_cpu_dgrad_params(p, &q);
    const size_t wsz = (size_t)p->k * p->c * p->r * p->s * sizeof(float);
    return (wsz + 63) / 64 * 64 + (winograd ? cb_cpu_winograd_workspace(&q) : cb_cpu_blocked_workspace(&q));
}

void cb_cpu_dgrad(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws, bool winograd) {
    cb_conv_params q;
    cb_cpu_dgrad_params(p, &q);
    const int rs = p->r * p->s;
    const size_t wsz = (size_t)p->k * p->c * rs;
    float *wt = ws; // w' (C, K, R, S)
#pragma omp parallel for schedule(static)
    for (int c = 0; c < p->c; c++)
        for (int k = 0; k < p->k; k++)
            for (int t = 0; t < rs; t++) wt[((size_t)c * p->k + k) * rs + t] = w[((size_t)k * p->c + c) * rs + rs - 1 - t];
    void *fws = (char *)ws + (wsz * sizeof(float) + 63) / 64 * 64;
    if (winograd) cb_cpu_winograd_forward(&q, dy, wt, NULL, dx, fws);
    else cb_cpu_blocked_forward(&q, dy, wt, NULL, dx, fws);
}
