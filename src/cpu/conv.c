// Fast CPU convolution: im2col + OpenBLAS sgemm, one image at a time.
//
// For one image, with g groups, Cg = C/g, Kg = K/g, CRS = Cg*R*S, PQ = P*Q:
//   col (C*R*S, PQ)            row (c, kh, kw) holds x[c][oh*sh - pt + kh][ow*sw - pl + kw] (0 outside)
//   forward          y_g  (Kg, PQ)  = w_g (Kg, CRS) * col_g (CRS, PQ)
//   backward_data    col_g (CRS, PQ) = w_g^T * dy_g, then col2im accumulates col into dx
//   backward_filter  dw_g (Kg, CRS) += dy_g (Kg, PQ) * col_g^T
// Group g's rows of col are the contiguous slab [g*CRS, (g+1)*CRS), so one im2col serves all groups.
// A 1x1, stride 1, unpadded convolution needs no im2col: the image itself is col. A depthwise
// convolution runs direct loops instead (src/cpu/depthwise.c).
//
// No OpenMP in this file, on purpose. OpenBLAS (pthread build) threads each sgemm itself, and
// alternating its threads with an OpenMP team on the same cores makes the two spin against each
// other: AlexNet conv2 at batch 16 on 2 cores ran 2-3x slower with OpenMP im2col than without.
// im2col costs ~3% of the GEMM time (0.3 ms against ~9 ms per image), col2im ~10%, so
// running them on one thread loses little.
#include <cblas.h>
#include <string.h>

#include "cpu/kernels.h"

static int conv_is_direct(const cb_conv_params *p)
{
    return p->r == 1 && p->s == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
           p->pad_left == 0 && p->p == p->h && p->q == p->w;
}

size_t cb_cpu_conv_workspace(const cb_conv_params *p)
{
    if (conv_is_direct(p) || cb_cpu_dw_applies(p)) return 0;
    return (size_t)p->c * p->r * p->s * p->p * p->q * sizeof(float);
}

static int dil_h(const cb_conv_params *p) { return p->dil_h > 1 ? p->dil_h : 1; }
static int dil_w(const cb_conv_params *p) { return p->dil_w > 1 ? p->dil_w : 1; }

// valid output columns [*lo, *hi) for input column offset kw (the tap times the dilation): those
// with 0 <= ow*sw - pl + kw < w
void cb_cpu_conv_valid_cols(const cb_conv_params *p, int kw, int *lo, int *hi)
{
    const int sw = p->stride_w, off = p->pad_left - kw; // iw = ow*sw - off
    int a = off > 0 ? (off + sw - 1) / sw : 0;
    int b = p->w - 1 + off >= 0 ? (p->w - 1 + off) / sw + 1 : 0;
    if (b > p->q) b = p->q;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

// x (C,H,W) of one image -> col (C*R*S, P*Q)
static void im2col(const cb_conv_params *p, const float *restrict x, float *restrict col)
{
    const int rs = p->r * p->s, rows = p->c * rs, q = p->q;
    const size_t pq = (size_t)p->p * q;
    for (int row = 0; row < rows; row++) {
        const int c = row / rs, kh = row / p->s % p->r * dil_h(p), kw = row % p->s * dil_w(p);
        const float *xc = x + (size_t)c * p->h * p->w;
        float *dst = col + (size_t)row * pq;
        int lo, hi;
        cb_cpu_conv_valid_cols(p, kw, &lo, &hi);
        const int off = kw - p->pad_left; // iw = ow*sw + off
        for (int oh = 0; oh < p->p; oh++, dst += q) {
            const int ih = oh * p->stride_h - p->pad_top + kh;
            if (ih < 0 || ih >= p->h) {
                memset(dst, 0, (size_t)q * sizeof(float));
                continue;
            }
            const float *src = xc + (size_t)ih * p->w + off;
            for (int ow = 0; ow < lo; ow++) dst[ow] = 0.0f;
            if (p->stride_w == 1) {
                memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(float));
            } else {
                const int sw = p->stride_w;
                for (int ow = lo; ow < hi; ow++) dst[ow] = src[ow * sw];
            }
            for (int ow = hi; ow < q; ow++) dst[ow] = 0.0f;
        }
    }
}

// col (C*R*S, P*Q) -> dx (C,H,W) of one image, overwritten
static void col2im(const cb_conv_params *p, const float *restrict col, float *restrict dx)
{
    const int rs = p->r * p->s, q = p->q;
    const size_t pq = (size_t)p->p * q, hw = (size_t)p->h * p->w;
    for (int c = 0; c < p->c; c++) {
        float *dxc = dx + (size_t)c * hw;
        memset(dxc, 0, hw * sizeof(float));
        for (int th = 0; th < p->r; th++)
            for (int tw = 0; tw < p->s; tw++) {
                const float *restrict src = col + ((size_t)c * rs + th * p->s + tw) * pq;
                const int kh = th * dil_h(p), kw = tw * dil_w(p);
                int lo, hi;
                cb_cpu_conv_valid_cols(p, kw, &lo, &hi);
                const int off = kw - p->pad_left, sw = p->stride_w;
                for (int oh = 0; oh < p->p; oh++, src += q) {
                    const int ih = oh * p->stride_h - p->pad_top + kh;
                    if (ih < 0 || ih >= p->h) continue;
                    float *restrict d = dxc + (size_t)ih * p->w + off;
                    if (sw == 1) {
                        for (int ow = lo; ow < hi; ow++) d[ow] += src[ow];
                    } else {
                        for (int ow = lo; ow < hi; ow++) d[ow * sw] += src[ow];
                    }
                }
            }
    }
}

void cb_cpu_conv_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, void *ws)
{
    if (cb_cpu_dw_applies(p)) {
        cb_cpu_dw_forward(p, x, w, b, y);
        return;
    }
    const int g = p->groups, cg = p->c / g, kg = p->k / g;
    const int crs = cg * p->r * p->s, pq = p->p * p->q;
    const size_t xsz = (size_t)p->c * p->h * p->w, ysz = (size_t)p->k * pq;
    const int direct = conv_is_direct(p);
    for (int n = 0; n < p->n; n++) {
        const float *xn = x + n * xsz;
        float *yn = y + n * ysz;
        const float *col = xn;
        if (!direct) {
            im2col(p, xn, ws);
            col = ws;
        }
        for (int gi = 0; gi < g; gi++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kg, pq, crs, 1.0f, w + (size_t)gi * kg * crs, crs,
                        col + (size_t)gi * crs * pq, pq, 0.0f, yn + (size_t)gi * kg * pq, pq);
        if (b) {
            for (int k = 0; k < p->k; k++) {
                float *yk = yn + (size_t)k * pq;
                const float bk = b[k];
                for (int i = 0; i < pq; i++) yk[i] += bk;
            }
        }
    }
}

void cb_cpu_conv_backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws)
{
    if (cb_cpu_dw_applies(p)) {
        cb_cpu_dw_backward_data(p, dy, w, dx);
        return;
    }
    const int g = p->groups, cg = p->c / g, kg = p->k / g;
    const int crs = cg * p->r * p->s, pq = p->p * p->q;
    const size_t xsz = (size_t)p->c * p->h * p->w, ysz = (size_t)p->k * pq;
    const int direct = conv_is_direct(p);
    for (int n = 0; n < p->n; n++) {
        const float *dyn = dy + n * ysz;
        // direct: the column buffer is dx itself (crs == cg, pq == h*w)
        float *col = direct ? dx + n * xsz : ws;
        for (int gi = 0; gi < g; gi++)
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, crs, pq, kg, 1.0f, w + (size_t)gi * kg * crs, crs,
                        dyn + (size_t)gi * kg * pq, pq, 0.0f, col + (size_t)gi * crs * pq, pq);
        if (!direct) col2im(p, col, dx + n * xsz);
    }
}

void cb_cpu_conv_backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws)
{
    if (cb_cpu_dw_applies(p)) {
        cb_cpu_dw_backward_filter(p, x, dy, dw, db);
        return;
    }
    const int g = p->groups, cg = p->c / g, kg = p->k / g;
    const int crs = cg * p->r * p->s, pq = p->p * p->q;
    const size_t xsz = (size_t)p->c * p->h * p->w, ysz = (size_t)p->k * pq;
    const int direct = conv_is_direct(p);
    if (p->n == 0) memset(dw, 0, (size_t)p->k * crs * sizeof(float));
    for (int n = 0; n < p->n; n++) {
        const float *xn = x + n * xsz;
        const float *col = xn;
        if (!direct) {
            im2col(p, xn, ws);
            col = ws;
        }
        for (int gi = 0; gi < g; gi++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kg, crs, pq, 1.0f, dy + n * ysz + (size_t)gi * kg * pq,
                        pq, col + (size_t)gi * crs * pq, pq, n ? 1.0f : 0.0f, dw + (size_t)gi * kg * crs, crs);
    }
    if (db) {
        for (int k = 0; k < p->k; k++) {
            double acc = 0.0;
            for (int n = 0; n < p->n; n++) {
                const float *dyk = dy + n * ysz + (size_t)k * pq;
                float s = 0.0f;
                for (int i = 0; i < pq; i++) s += dyk[i];
                acc += s;
            }
            db[k] = (float)acc;
        }
    }
}
