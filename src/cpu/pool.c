// Fast CPU pooling: one OpenMP task per (n, c) plane; windows clipped to the image up front,
// so the inner loops carry no bounds tests. Same semantics as the reference: padding takes no
// part (max ignores it, avg leaves it out of the divisor), ties go to the first maximum in
// window order.
#include <string.h>

#include "cpu/kernels.h"

// the window of output (oh, ow) clipped to the image: rows [*h0, *h1), columns [*w0, *w1)
static void pool_window(const cb_pool_params *p, int oh, int ow, int *h0, int *h1, int *w0, int *w1)
{
    const int hs = oh * p->stride_h - p->pad_top, ws = ow * p->stride_w - p->pad_left;
    *h0 = hs < 0 ? 0 : hs;
    *h1 = hs + p->r > p->h ? p->h : hs + p->r;
    *w0 = ws < 0 ? 0 : ws;
    *w1 = ws + p->s > p->w ? p->w : ws + p->s;
}

// x (N,C,H,W) -> y (N,C,P,Q); argmax (N,C,P,Q) index into the H*W plane, max only, may be NULL
// the index in a (., w) plane of the first largest value of window [h0, h1) x [w0, w1)
static int window_argmax(const float *xp, int w, int h0, int h1, int w0, int w1) {
    int bi = h0 * w + w0;
    for (int ih = h0; ih < h1; ih++)
        for (int iw = w0; iw < w1; iw++)
            if (xp[ih * w + iw] > xp[bi]) bi = ih * w + iw;
    return bi;
}

void cb_cpu_pool_forward(const cb_pool_params *p, const float *x, float *y, int32_t *argmax)
{
    const int planes = p->n * p->c;
    const size_t hw = (size_t)p->h * p->w, pq = (size_t)p->p * p->q;
#pragma omp parallel for schedule(static)
    for (int nc = 0; nc < planes; nc++) {
        const float *xp = x + nc * hw;
        float *yp = y + nc * pq;
        int32_t *ap = argmax ? argmax + nc * pq : NULL;
        for (int oh = 0; oh < p->p; oh++)
            for (int ow = 0; ow < p->q; ow++) {
                int h0, h1, w0, w1;
                pool_window(p, oh, ow, &h0, &h1, &w0, &w1);
                const int o = oh * p->q + ow;
                if (h0 >= h1 || w0 >= w1) { // window wholly in the padding
                    yp[o] = 0.0f;
                    if (ap) ap[o] = -1;
                    continue;
                }
                if (p->is_avg) {
                    float sum = 0.0f;
                    for (int ih = h0; ih < h1; ih++)
                        for (int iw = w0; iw < w1; iw++) sum += xp[ih * p->w + iw];
                    yp[o] = sum / (float)((h1 - h0) * (w1 - w0));
                } else {
                    int bi = window_argmax(xp, p->w, h0, h1, w0, w1);
                    yp[o] = xp[bi];
                    if (ap) ap[o] = p->relu_mask && !(yp[o] > 0.0f) ? -1 : bi; // (relu_mask: the ReLU's gradient is 0 there)
                }
            }
    }
}

// dy (N,C,P,Q) -> dx (N,C,H,W), overwritten; max recomputes the argmax from x when argmax is NULL,
// and passes nothing where the forward marked a window -1 (wholly in the padding, or, with
// relu_mask, its maximum not above 0)
void cb_cpu_pool_backward(const cb_pool_params *p, const float *x, const float *dy, const int32_t *argmax, float *dx)
{
    const int planes = p->n * p->c;
    const size_t hw = (size_t)p->h * p->w, pq = (size_t)p->p * p->q;
#pragma omp parallel for schedule(static)
    for (int nc = 0; nc < planes; nc++) {
        const float *xp = x ? x + nc * hw : NULL, *dyp = dy + nc * pq;
        const int32_t *ap = argmax ? argmax + nc * pq : NULL;
        float *dxp = dx + nc * hw;
        memset(dxp, 0, hw * sizeof(float));
        for (int oh = 0; oh < p->p; oh++)
            for (int ow = 0; ow < p->q; ow++) {
                int h0, h1, w0, w1;
                pool_window(p, oh, ow, &h0, &h1, &w0, &w1);
                const int o = oh * p->q + ow;
                if (h0 >= h1 || w0 >= w1) continue;
                if (p->is_avg) {
                    const float d = dyp[o] / (float)((h1 - h0) * (w1 - w0));
                    for (int ih = h0; ih < h1; ih++)
                        for (int iw = w0; iw < w1; iw++) dxp[ih * p->w + iw] += d;
                } else if (ap) {
                    if (ap[o] >= 0) dxp[ap[o]] += dyp[o];
                } else {
                    dxp[window_argmax(xp, p->w, h0, h1, w0, w1)] += dyp[o];
                }
            }
    }
}
