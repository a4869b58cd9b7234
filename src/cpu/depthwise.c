// Depthwise convolution on the CPU (groups == C == K: one R x S filter per channel), fp32 NCHW,
// every phase, any stride, padding and dilation. The im2col + GEMM path (conv.c) would run C
// one-row GEMMs per image, each a library call with its own threading (MobileNetV2 at batch 1
// took 1.65 s a step that way); here each (image, channel) plane is one direct loop, planes spread
// over OpenMP threads (no OpenBLAS call runs inside, so the two thread pools do not meet here).
// Per filter tap the plane's valid output columns are a contiguous run: y row += w * x row (with
// the stride), on SIMD lanes (`omp simd`; the rows of one tap do not overlap, so the lanes never
// write one element twice).
#include "cpu/kernels.h"

#include <string.h>

bool cb_cpu_dw_applies(const cb_conv_params *p) { return p->groups > 1 && p->groups == p->c && p->k == p->c; }

static int dil(int d) { return d > 1 ? d : 1; }

// tap (kh, kw) of output row oh reads input row ih (or none: false) and, for output columns
// [lo, hi), input columns ow * sw + off
typedef struct tap {
    int lo, hi, off;
} tap;
static tap tap_of(const cb_conv_params *p, int kw) {
    tap t;
    t.off = kw * dil(p->dil_w) - p->pad_left;
    cb_cpu_conv_valid_cols(p, kw * dil(p->dil_w), &t.lo, &t.hi);
    return t;
}

// the input row that filter row kh reads for output row oh, or -1 outside the image
static int in_row(const cb_conv_params *p, int oh, int kh) {
    const int ih = oh * p->stride_h - p->pad_top + kh * dil(p->dil_h);
    return ih >= 0 && ih < p->h ? ih : -1;
}

void cb_cpu_dw_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y) {
    const size_t hw = (size_t)p->h * p->w, pq = (size_t)p->p * p->q;
    const long planes = (long)p->n * p->c;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < planes; i++) {
        const int c = (int)(i % p->c);
        const float *xp = x + i * hw, *wc = w + (size_t)c * p->r * p->s;
        float *yp = y + i * pq;
        const float bias = b ? b[c] : 0.f;
        for (size_t o = 0; o < pq; o++) yp[o] = bias;
        for (int kh = 0; kh < p->r; kh++)
            for (int kw = 0; kw < p->s; kw++) {
                const float wv = wc[kh * p->s + kw];
                const tap t = tap_of(p, kw);
                for (int oh = 0; oh < p->p; oh++) {
                    const int ih = in_row(p, oh, kh);
                    if (ih < 0) continue;
                    const float *xr = xp + (size_t)ih * p->w + t.off;
                    float *yr = yp + (size_t)oh * p->q;
                    if (p->stride_w == 1) {
#pragma omp simd
                        for (int ow = t.lo; ow < t.hi; ow++) yr[ow] += wv * xr[ow];
                    } else {
                        const int sw = p->stride_w;
#pragma omp simd
                        for (int ow = t.lo; ow < t.hi; ow++) yr[ow] += wv * xr[ow * sw];
                    }
                }
            }
    }
}

void cb_cpu_dw_backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx) {
    const size_t hw = (size_t)p->h * p->w, pq = (size_t)p->p * p->q;
    const long planes = (long)p->n * p->c;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < planes; i++) {
        const int c = (int)(i % p->c);
        const float *dyp = dy + i * pq, *wc = w + (size_t)c * p->r * p->s;
        float *dxp = dx + i * hw;
        memset(dxp, 0, hw * sizeof *dxp);
        for (int kh = 0; kh < p->r; kh++)
            for (int kw = 0; kw < p->s; kw++) {
                const float wv = wc[kh * p->s + kw];
                const tap t = tap_of(p, kw);
                for (int oh = 0; oh < p->p; oh++) {
                    const int ih = in_row(p, oh, kh);
                    if (ih < 0) continue;
                    float *dxr = dxp + (size_t)ih * p->w + t.off;
                    const float *dyr = dyp + (size_t)oh * p->q;
                    const int sw = p->stride_w;
#pragma omp simd
                    for (int ow = t.lo; ow < t.hi; ow++) dxr[ow * sw] += wv * dyr[ow];
                }
            }
    }
}

// dw (C, R, S) and db (C) overwritten: per channel (one thread each), sums over images and rows
// in double, each row's run in float
void cb_cpu_dw_backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db) {
    const size_t hw = (size_t)p->h * p->w, pq = (size_t)p->p * p->q;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < p->c; c++) {
        for (int kh = 0; kh < p->r; kh++)
            for (int kw = 0; kw < p->s; kw++) {
                const tap t = tap_of(p, kw);
                double acc = 0;
                for (int n = 0; n < p->n; n++) {
                    const size_t plane = (size_t)n * p->c + c;
                    for (int oh = 0; oh < p->p; oh++) {
                        const int ih = in_row(p, oh, kh);
                        if (ih < 0) continue;
                        const float *xr = x + plane * hw + (size_t)ih * p->w + t.off, *dyr = dy + plane * pq + (size_t)oh * p->q;
                        float s = 0.f;
                        const int sw = p->stride_w;
#pragma omp simd reduction(+ : s)
                        for (int ow = t.lo; ow < t.hi; ow++) s += dyr[ow] * xr[ow * sw];
                        acc += s;
                    }
                }
                dw[((size_t)c * p->r + kh) * p->s + kw] = (float)acc;
            }
        if (db) {
            double s = 0;
            for (int n = 0; n < p->n; n++) {
                const float *d = dy + ((size_t)n * p->c + c) * pq;
                for (size_t o = 0; o < pq; o++) s += d[o];
            }
            db[c] = (float)s;
        }
    }
}
