// Template body of the reference kernels; included by ref.c once per element type.
// The includer defines
//   T          the element type (float or double)
//   CB_REF(x)  the name of function x (cb_ref_##x or cb_ref64_##x)
// No include guard on purpose. Every sum is accumulated in double whatever T is, so the float
// reference differs from the double one only by the rounding of inputs and outputs.
//
// These loops are written to be read, not to be fast: they are the oracle the fast paths are
// checked against. Shapes of every buffer are in kernels.h.

// ---- convolution --------------------------------------------------------------------------

// x (N,C,H,W)  w (K,C/g,R,S)  b (K) or NULL  y (N,K,P,Q)
void CB_REF(conv_forward)(const cb_conv_params *p, const T *x, const T *w, const T *b, T *y)
{
    const int cg = p->c / p->groups, kg = p->k / p->groups;
    const int dlh = p->dil_h > 1 ? p->dil_h : 1, dlw = p->dil_w > 1 ? p->dil_w : 1;
    for (int n = 0; n < p->n; n++)
        for (int k = 0; k < p->k; k++) {
            const int g = k / kg;
            for (int oh = 0; oh < p->p; oh++)
                for (int ow = 0; ow < p->q; ow++) {
                    double acc = b ? (double)b[k] : 0.0;
                    for (int ci = 0; ci < cg; ci++) {
                        const int c = g * cg + ci;
                        for (int kh = 0; kh < p->r; kh++) {
                            const int ih = oh * p->stride_h - p->pad_top + kh * dlh;
                            if (ih < 0 || ih >= p->h) continue;
                            for (int kw = 0; kw < p->s; kw++) {
                                const int iw = ow * p->stride_w - p->pad_left + kw * dlw;
                                if (iw < 0 || iw >= p->w) continue;
                                acc += (double)x[(((size_t)n * p->c + c) * p->h + ih) * p->w + iw] *
                                       (double)w[(((size_t)k * cg + ci) * p->r + kh) * p->s + kw];
                            }
                        }
                    }
                    y[(((size_t)n * p->k + k) * p->p + oh) * p->q + ow] = (T)acc;
                }
        }
}

// dy (N,K,P,Q)  w (K,C/g,R,S) -> dx (N,C,H,W). Gathered per input pixel (no scatter), so each
// dx element is written once: dx[ih] collects every (oh, kh) with oh*stride - pad + kh == ih.
void CB_REF(conv_backward_data)(const cb_conv_params *p, const T *dy, const T *w, T *dx)
{
    const int cg = p->c / p->groups, kg = p->k / p->groups;
    const int dlh = p->dil_h > 1 ? p->dil_h : 1, dlw = p->dil_w > 1 ? p->dil_w : 1;
    for (int n = 0; n < p->n; n++)
        for (int c = 0; c < p->c; c++) {
            const int g = c / cg, ci = c % cg;
            for (int ih = 0; ih < p->h; ih++)
                for (int iw = 0; iw < p->w; iw++) {
                    double acc = 0.0;
                    for (int kh = 0; kh < p->r; kh++) {
                        const int th = ih + p->pad_top - kh * dlh; // = oh * stride_h
                        if (th < 0 || th % p->stride_h) continue;
                        const int oh = th / p->stride_h;
                        if (oh >= p->p) continue;
                        for (int kw = 0; kw < p->s; kw++) {
                            const int tw = iw + p->pad_left - kw * dlw;
                            if (tw < 0 || tw % p->stride_w) continue;
                            const int ow = tw / p->stride_w;
                            if (ow >= p->q) continue;
                            for (int kk = 0; kk < kg; kk++) {
                                const int k = g * kg + kk;
                                acc += (double)dy[(((size_t)n * p->k + k) * p->p + oh) * p->q + ow] *
                                       (double)w[(((size_t)k * cg + ci) * p->r + kh) * p->s + kw];
                            }
                        }
                    }
                    dx[(((size_t)n * p->c + c) * p->h + ih) * p->w + iw] = (T)acc;
                }
        }
}

// x (N,C,H,W)  dy (N,K,P,Q) -> dw (K,C/g,R,S), db (K) or NULL
void CB_REF(conv_backward_filter)(const cb_conv_params *p, const T *x, const T *dy, T *dw, T *db)
{
    const int cg = p->c / p->groups, kg = p->k / p->groups;
    const int dlh = p->dil_h > 1 ? p->dil_h : 1, dlw = p->dil_w > 1 ? p->dil_w : 1;
    for (int k = 0; k < p->k; k++) {
        const int g = k / kg;
        for (int ci = 0; ci < cg; ci++) {
            const int c = g * cg + ci;
            for (int kh = 0; kh < p->r; kh++)
                for (int kw = 0; kw < p->s; kw++) {
                    double acc = 0.0;
                    for (int n = 0; n < p->n; n++)
                        for (int oh = 0; oh < p->p; oh++) {
                            const int ih = oh * p->stride_h - p->pad_top + kh * dlh;
                            if (ih < 0 || ih >= p->h) continue;
                            for (int ow = 0; ow < p->q; ow++) {
                                const int iw = ow * p->stride_w - p->pad_left + kw * dlw;
                                if (iw < 0 || iw >= p->w) continue;
                                acc += (double)x[(((size_t)n * p->c + c) * p->h + ih) * p->w + iw] *
                                       (double)dy[(((size_t)n * p->k + k) * p->p + oh) * p->q + ow];
                            }
                        }
                    dw[(((size_t)k * cg + ci) * p->r + kh) * p->s + kw] = (T)acc;
                }
        }
        if (db) {
            double acc = 0.0;
            for (int n = 0; n < p->n; n++)
                for (int i = 0; i < p->p * p->q; i++)
                    acc += (double)dy[((size_t)n * p->k + k) * p->p * p->q + i];
            db[k] = (T)acc;
        }
    }
}

// ---- fully connected ----------------------------------------------------------------------

// x (N,C)  w (K,C)  b (K) or NULL  y (N,K)
void CB_REF(fc_forward)(int n, int c, int k, const T *x, const T *w, const T *b, T *y)
{
    for (int i = 0; i < n; i++)
        for (int o = 0; o < k; o++) {
            double acc = b ? (double)b[o] : 0.0;
            for (int j = 0; j < c; j++) acc += (double)x[(size_t)i * c + j] * (double)w[(size_t)o * c + j];
            y[(size_t)i * k + o] = (T)acc;
        }
}

// dy (N,K)  w (K,C) -> dx (N,C)
void CB_REF(fc_backward_data)(int n, int c, int k, const T *dy, const T *w, T *dx)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < c; j++) {
            double acc = 0.0;
            for (int o = 0; o < k; o++) acc += (double)dy[(size_t)i * k + o] * (double)w[(size_t)o * c + j];
            dx[(size_t)i * c + j] = (T)acc;
        }
}

// x (N,C)  dy (N,K) -> dw (K,C), db (K) or NULL
void CB_REF(fc_backward_filter)(int n, int c, int k, const T *x, const T *dy, T *dw, T *db)
{
    for (int o = 0; o < k; o++) {
        for (int j = 0; j < c; j++) {
            double acc = 0.0;
            for (int i = 0; i < n; i++) acc += (double)dy[(size_t)i * k + o] * (double)x[(size_t)i * c + j];
            dw[(size_t)o * c + j] = (T)acc;
        }
        if (db) {
            double acc = 0.0;
            for (int i = 0; i < n; i++) acc += (double)dy[(size_t)i * k + o];
            db[o] = (T)acc;
        }
    }
}

// ---- pooling ------------------------------------------------------------------------------

// x (N,C,H,W) -> y (N,C,P,Q); argmax (N,C,P,Q) index into the H*W plane (max only, may be NULL).
// Padded positions take no part: max ignores them, avg leaves them out of the divisor.
// Ties go to the first maximum in window order (kh outer, kw inner).
void CB_REF(pool_forward)(const cb_pool_params *p, const T *x, T *y, int32_t *argmax)
{
    for (int nc = 0; nc < p->n * p->c; nc++) {
        const T *xp = x + (size_t)nc * p->h * p->w;
        for (int oh = 0; oh < p->p; oh++)
            for (int ow = 0; ow < p->q; ow++) {
                double best = 0.0, sum = 0.0;
                int best_i = -1, count = 0;
                for (int kh = 0; kh < p->r; kh++) {
                    const int ih = oh * p->stride_h - p->pad_top + kh;
                    if (ih < 0 || ih >= p->h) continue;
                    for (int kw = 0; kw < p->s; kw++) {
                        const int iw = ow * p->stride_w - p->pad_left + kw;
                        if (iw < 0 || iw >= p->w) continue;
                        const double v = (double)xp[ih * p->w + iw];
                        if (best_i < 0 || v > best) { best = v; best_i = ih * p->w + iw; }
                        sum += v;
                        count++;
                    }
                }
                const size_t o = ((size_t)nc * p->p + oh) * p->q + ow;
                if (p->is_avg) {
                    y[o] = (T)(count ? sum / count : 0.0);
                } else {
                    y[o] = (T)best; // 0 for a window wholly in the padding
                    if (argmax) argmax[o] = best_i;
                }
            }
    }
}

// dy (N,C,P,Q) -> dx (N,C,H,W). Max routes each dy to its argmax (recomputed from x when argmax
// is NULL); avg spreads dy / count over the valid part of the window.
void CB_REF(pool_backward)(const cb_pool_params *p, const T *x, const T *dy, const int32_t *argmax, T *dx)
{
    const size_t plane = (size_t)p->h * p->w;
    for (size_t i = 0; i < (size_t)p->n * p->c * plane; i++) dx[i] = 0;
    for (int nc = 0; nc < p->n * p->c; nc++) {
        const T *xp = x ? x + (size_t)nc * plane : NULL;
        T *dxp = dx + (size_t)nc * plane;
        for (int oh = 0; oh < p->p; oh++)
            for (int ow = 0; ow < p->q; ow++) {
                const size_t o = ((size_t)nc * p->p + oh) * p->q + ow;
                int best_i = -1, count = 0;
                double best = 0.0;
                for (int kh = 0; kh < p->r; kh++) {
                    const int ih = oh * p->stride_h - p->pad_top + kh;
                    if (ih < 0 || ih >= p->h) continue;
                    for (int kw = 0; kw < p->s; kw++) {
                        const int iw = ow * p->stride_w - p->pad_left + kw;
                        if (iw < 0 || iw >= p->w) continue;
                        count++;
                        if (!p->is_avg && !argmax) {
                            const double v = (double)xp[ih * p->w + iw];
                            if (best_i < 0 || v > best) { best = v; best_i = ih * p->w + iw; }
                        }
                    }
                }
                if (p->is_avg) {
                    if (!count) continue;
                    const double d = (double)dy[o] / count;
                    for (int kh = 0; kh < p->r; kh++) {
                        const int ih = oh * p->stride_h - p->pad_top + kh;
                        if (ih < 0 || ih >= p->h) continue;
                        for (int kw = 0; kw < p->s; kw++) {
                            const int iw = ow * p->stride_w - p->pad_left + kw;
                            if (iw < 0 || iw >= p->w) continue;
                            dxp[ih * p->w + iw] = (T)((double)dxp[ih * p->w + iw] + d);
                        }
                    }
                } else {
                    if (argmax) best_i = argmax[o];
                    if (best_i >= 0) dxp[best_i] = (T)((double)dxp[best_i] + (double)dy[o]);
                }
            }
    }
}

// ---- local response normalisation across channels -----------------------------------------
// scale = k + alpha/size * sum_{c' = c-size/2 .. c+size/2, clipped} x[c']^2,  y = x * scale^-beta

void CB_REF(lrn_forward)(const cb_lrn_params *p, const T *x, T *y, T *scale)
{
    const size_t hw = (size_t)p->h * p->w;
    const int half = p->size / 2;
    for (int n = 0; n < p->n; n++)
        for (int c = 0; c < p->c; c++)
            for (size_t i = 0; i < hw; i++) {
                double sq = 0.0;
                for (int cc = c - half; cc <= c + half; cc++) {
                    if (cc < 0 || cc >= p->c) continue;
                    const double v = (double)x[((size_t)n * p->c + cc) * hw + i];
                    sq += v * v;
                }
                const size_t o = ((size_t)n * p->c + c) * hw + i;
                const double s = (double)p->k + (double)p->alpha / p->size * sq;
                scale[o] = (T)s;
                y[o] = (T)((double)x[o] * pow(s, -(double)p->beta));
            }
}

// dx[c] = dy[c] * scale[c]^-beta - 2*alpha*beta/size * x[c] * sum_{c' in window(c)} dy[c'] * y[c'] / scale[c']
// (the window is symmetric, so c' sees c exactly when c sees c')
void CB_REF(lrn_backward)(const cb_lrn_params *p, const T *x, const T *y, const T *scale, const T *dy, T *dx)
{
    const size_t hw = (size_t)p->h * p->w;
    const int half = p->size / 2;
    const double coef = 2.0 * p->alpha * p->beta / p->size;
    for (int n = 0; n < p->n; n++)
        for (int c = 0; c < p->c; c++)
            for (size_t i = 0; i < hw; i++) {
                double acc = 0.0;
                for (int cc = c - half; cc <= c + half; cc++) {
                    if (cc < 0 || cc >= p->c) continue;
                    const size_t j = ((size_t)n * p->c + cc) * hw + i;
                    acc += (double)dy[j] * (double)y[j] / (double)scale[j];
                }
                const size_t o = ((size_t)n * p->c + c) * hw + i;
                dx[o] = (T)((double)dy[o] * pow((double)scale[o], -(double)p->beta) - coef * (double)x[o] * acc);
            }
}

// ---- batch normalisation ------------------------------------------------------------------

// x, y (N,C,H,W); gamma, beta, mean, invstd, running_* (C). Normalises with the biased batch
// variance; the running variance gets the unbiased one (PyTorch).
void CB_REF(bn_forward_train)(const cb_bn_params *p, const T *x, const T *gamma, const T *beta, T *y,
                              T *mean, T *invstd, T *running_mean, T *running_var, T momentum)
{
    const size_t hw = (size_t)p->h * p->w, m = (size_t)p->n * hw;
    for (int c = 0; c < p->c; c++) {
        double sum = 0.0;
        for (int n = 0; n < p->n; n++)
            for (size_t i = 0; i < hw; i++) sum += (double)x[((size_t)n * p->c + c) * hw + i];
        const double mu = sum / m;
        double ss = 0.0;
        for (int n = 0; n < p->n; n++)
            for (size_t i = 0; i < hw; i++) {
                const double d = (double)x[((size_t)n * p->c + c) * hw + i] - mu;
                ss += d * d;
            }
        const double var = ss / m, is = 1.0 / sqrt(var + (double)p->eps);
        for (int n = 0; n < p->n; n++)
            for (size_t i = 0; i < hw; i++) {
                const size_t o = ((size_t)n * p->c + c) * hw + i;
                y[o] = (T)(((double)x[o] - mu) * is * (double)gamma[c] + (double)beta[c]);
            }
        if (mean) mean[c] = (T)mu;
        if (invstd) invstd[c] = (T)is;
        if (running_mean && running_var) {
            const double mom = (double)momentum, unbiased = m > 1 ? ss / (m - 1) : ss;
            running_mean[c] = (T)((1.0 - mom) * (double)running_mean[c] + mom * mu);
            running_var[c] = (T)((1.0 - mom) * (double)running_var[c] + mom * unbiased);
        }
    }
}

void CB_REF(bn_forward_infer)(const cb_bn_params *p, const T *x, const T *gamma, const T *beta, T *y,
                              const T *running_mean, const T *running_var)
{
    const size_t hw = (size_t)p->h * p->w;
    for (int n = 0; n < p->n; n++)
        for (int c = 0; c < p->c; c++) {
            const double is = 1.0 / sqrt((double)running_var[c] + (double)p->eps);
            for (size_t i = 0; i < hw; i++) {
                const size_t o = ((size_t)n * p->c + c) * hw + i;
                y[o] = (T)(((double)x[o] - (double)running_mean[c]) * is * (double)gamma[c] + (double)beta[c]);
            }
        }
}

// with xhat = (x - mean) * invstd over M = N*H*W values per channel:
//   dbeta = sum dy,  dgamma = sum dy * xhat,  dx = gamma * invstd / M * (M dy - dbeta - xhat dgamma)
void CB_REF(bn_backward)(const cb_bn_params *p, const T *x, const T *gamma, const T *mean, const T *invstd,
                         const T *dy, T *dx, T *dgamma, T *dbeta)
{
    const size_t hw = (size_t)p->h * p->w, m = (size_t)p->n * hw;
    for (int c = 0; c < p->c; c++) {
        const double mu = (double)mean[c], is = (double)invstd[c];
        double sdy = 0.0, sdyx = 0.0;
        for (int n = 0; n < p->n; n++)
            for (size_t i = 0; i < hw; i++) {
                const size_t o = ((size_t)n * p->c + c) * hw + i;
                sdy += (double)dy[o];
                sdyx += (double)dy[o] * ((double)x[o] - mu) * is;
            }
        if (dgamma) dgamma[c] = (T)sdyx;
        if (dbeta) dbeta[c] = (T)sdy;
        if (!dx) continue;
        const double f = (double)gamma[c] * is / m;
        for (int n = 0; n < p->n; n++)
            for (size_t i = 0; i < hw; i++) {
                const size_t o = ((size_t)n * p->c + c) * hw + i;
                const double xhat = ((double)x[o] - mu) * is;
                dx[o] = (T)(f * ((double)m * (double)dy[o] - sdy - xhat * sdyx));
            }
    }
}

// ---- softmax and cross-entropy ------------------------------------------------------------

// x (N,K) -> prob (N,K), shifted by the row maximum so exp never overflows
void CB_REF(softmax_forward)(int n, int k, const T *x, T *prob)
{
    for (int i = 0; i < n; i++) {
        const T *xr = x + (size_t)i * k;
        double mx = (double)xr[0], sum = 0.0;
        for (int j = 1; j < k; j++) if ((double)xr[j] > mx) mx = (double)xr[j];
        for (int j = 0; j < k; j++) sum += exp((double)xr[j] - mx);
        for (int j = 0; j < k; j++) prob[(size_t)i * k + j] = (T)(exp((double)xr[j] - mx) / sum);
    }
}

// mean over the batch of -log(prob[label]); prob clamped at 1e-30 so the loss stays finite
double CB_REF(xent_forward)(int n, int k, const T *prob, const int32_t *labels)
{
    double loss = 0.0;
    for (int i = 0; i < n; i++) {
        double pr = (double)prob[(size_t)i * k + labels[i]];
        if (pr < 1e-30) pr = 1e-30;
        loss -= log(pr);
    }
    return loss / n;
}

// gradient w.r.t. the logits of xent(softmax(x)): (prob - onehot(label)) / N
void CB_REF(xent_backward)(int n, int k, const T *prob, const int32_t *labels, T *dx)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < k; j++)
            dx[(size_t)i * k + j] = (T)(((double)prob[(size_t)i * k + j] - (j == labels[i] ? 1.0 : 0.0)) / n);
}
