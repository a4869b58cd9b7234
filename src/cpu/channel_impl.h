// Template body of the per-channel kernels of today's convnets, included by ref.c once per element
// type (T, CB_REF as in ref_impl.h): the squeeze-excitation product (MobileNetV3, EfficientNet),
// ConvNeXt's layer scale and its LayerNorm over the channels of each pixel. Sums accumulate in
// double. No include guard on purpose. These are memory-bound loops; the cpu backend runs them too.

// a (N,C,HW) * b (N,C,BHW) -> y (N,C,HW), where BHW is HW or 1 (b broadcast over the pixels)
void CB_REF(mul_forward)(int n, int c, int hw, int bhw, const T *a, const T *b, T *y)
{
    for (size_t nc = 0; nc < (size_t)n * c; nc++)
        for (int i = 0; i < hw; i++)
            y[nc * hw + i] = (T)((double)a[nc * hw + i] * (double)b[nc * bhw + (bhw == 1 ? 0 : i)]);
}

// the gradient w.r.t. the broadcast operand b (N,C,1,1) of mul_forward: db = sum over pixels of dy * a
void CB_REF(mul_backward_bcast)(int n, int c, int hw, const T *dy, const T *a, T *db)
{
    for (size_t nc = 0; nc < (size_t)n * c; nc++) {
        double acc = 0.0;
        for (int i = 0; i < hw; i++) acc += (double)dy[nc * hw + i] * (double)a[nc * hw + i];
        db[nc] = (T)acc;
    }
}

// x (N,C,HW)  w (C) -> y = x * w[c]; also the gradient w.r.t. x (x = dy)
void CB_REF(scale_forward)(int n, int c, int hw, const T *x, const T *w, T *y)
{
    for (size_t nc = 0; nc < (size_t)n * c; nc++)
        for (int i = 0; i < hw; i++) y[nc * hw + i] = (T)((double)x[nc * hw + i] * (double)w[nc % (size_t)c]);
}

// x, dy (N,C,HW) -> dw (C) = sum over images and pixels of dy * x
void CB_REF(scale_backward_filter)(int n, int c, int hw, const T *x, const T *dy, T *dw)
{
    for (int k = 0; k < c; k++) {
        double acc = 0.0;
        for (int s = 0; s < n; s++)
            for (int i = 0; i < hw; i++) {
                const size_t o = ((size_t)s * c + k) * hw + i;
                acc += (double)dy[o] * (double)x[o];
            }
        dw[k] = (T)acc;
    }
}

// mean and 1/sqrt(var + eps) over the C channels of pixel i of image s (biased variance, as PyTorch)
static void CB_REF(ln_stats)(int c, int hw, const T *xs, int i, double eps, double *mu, double *is)
{
    double m = 0.0, v = 0.0;
    for (int k = 0; k < c; k++) m += (double)xs[(size_t)k * hw + i];
    m /= c;
    for (int k = 0; k < c; k++) {
        const double d = (double)xs[(size_t)k * hw + i] - m;
        v += d * d;
    }
    *mu = m;
    *is = 1.0 / sqrt(v / c + eps);
}

// x (N,C,HW)  g, b (C) -> y = (x - mean) / sqrt(var + eps) * g[c] + b[c], statistics per pixel over C
void CB_REF(layernorm_forward)(int n, int c, int hw, double eps, const T *x, const T *g, const T *b, T *y)
{
    for (int s = 0; s < n; s++) {
        const T *xs = x + (size_t)s * c * hw;
        for (int i = 0; i < hw; i++) {
            double mu, is;
            CB_REF(ln_stats)(c, hw, xs, i, eps, &mu, &is);
            for (int k = 0; k < c; k++) {
                const size_t o = ((size_t)s * c + k) * hw + i;
                y[o] = (T)(((double)x[o] - mu) * is * (double)g[k] + (double)b[k]);
            }
        }
    }
}

// dy (N,C,HW) -> dx (N,C,HW) (NULL: skipped) and dg, db (C) (NULL: skipped), overwritten:
// with xhat = (x - mean) * is and e = dy * g: dx = is * (e - mean_c(e) - xhat * mean_c(e * xhat))
void CB_REF(layernorm_backward)(int n, int c, int hw, double eps, const T *x, const T *g, const T *dy, T *dx, T *dg, T *db)
{
    if (dg)
        for (int k = 0; k < c; k++) dg[k] = 0;
    if (db)
        for (int k = 0; k < c; k++) db[k] = 0;
    for (int s = 0; s < n; s++) {
        const T *xs = x + (size_t)s * c * hw;
        for (int i = 0; i < hw; i++) {
            double mu, is, se = 0.0, sex = 0.0;
            CB_REF(ln_stats)(c, hw, xs, i, eps, &mu, &is);
            for (int k = 0; k < c; k++) {
                const size_t o = ((size_t)s * c + k) * hw + i;
                const double xhat = ((double)x[o] - mu) * is, e = (double)dy[o] * (double)g[k];
                se += e;
                sex += e * xhat;
                if (dg) dg[k] = (T)((double)dg[k] + (double)dy[o] * xhat);
                if (db) db[k] = (T)((double)db[k] + (double)dy[o]);
            }
            if (!dx) continue;
            for (int k = 0; k < c; k++) {
                const size_t o = ((size_t)s * c + k) * hw + i;
                const double xhat = ((double)x[o] - mu) * is, e = (double)dy[o] * (double)g[k];
                dx[o] = (T)(is * (e - se / c - xhat * sex / c));
            }
        }
    }
}
