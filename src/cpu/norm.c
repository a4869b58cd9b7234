// Fast CPU normalisations: LRN across channels and batch normalisation.
// LRN works plane by plane, (n, c) per OpenMP iteration, with contiguous H*W inner loops that
// vectorise; BN works channel by channel with double accumulators (N*H*W can be large), each
// plane's sums in float on SIMD lanes (`omp simd reduction`: without it the compiler may not
// reorder a float sum, and the loop ran one add per latency).
#include <math.h>
#include <string.h>

#include "cpu/kernels.h"

// s^-beta; AlexNet's beta = 0.75 gets 1/sqrt(s*sqrt(s)), several times cheaper than powf
static inline float lrn_pow(float s, float beta)
{
    return beta == 0.75f ? 1.0f / sqrtf(s * sqrtf(s)) : powf(s, -beta);
}

// x, y, scale (N,C,H,W)
void cb_cpu_lrn_forward(const cb_lrn_params *p, const float *x, float *y, float *scale)
{
    const size_t hw = (size_t)p->h * p->w;
    const int half = p->size / 2, planes = p->n * p->c;
    const float a = p->alpha / p->size, k = p->k, beta = p->beta;
#pragma omp parallel for schedule(static)
    for (int nc = 0; nc < planes; nc++) {
        const int n = nc / p->c, c = nc % p->c;
        const int c0 = c - half < 0 ? 0 : c - half, c1 = c + half >= p->c ? p->c - 1 : c + half;
        float *sp = scale + nc * hw, *yp = y + nc * hw;
        const float *xp = x + nc * hw;
        memset(sp, 0, hw * sizeof(float));
        for (int cc = c0; cc <= c1; cc++) {
            const float *xc = x + ((size_t)n * p->c + cc) * hw;
            for (size_t i = 0; i < hw; i++) sp[i] += xc[i] * xc[i];
        }
        for (size_t i = 0; i < hw; i++) {
            sp[i] = k + a * sp[i];
            yp[i] = xp[i] * lrn_pow(sp[i], beta);
        }
    }
}

// dx[c] = dy[c] * scale[c]^-beta - 2*alpha*beta/size * x[c] * sum_{c' in window(c)} dy[c'] y[c'] / scale[c']
void cb_cpu_lrn_backward(const cb_lrn_params *p, const float *x, const float *y, const float *scale, const float *dy,
                         float *dx)
{
    const size_t hw = (size_t)p->h * p->w;
    const int half = p->size / 2, planes = p->n * p->c;
    const float coef = 2.0f * p->alpha * p->beta / p->size, beta = p->beta;
#pragma omp parallel for schedule(static)
    for (int nc = 0; nc < planes; nc++) {
        const int n = nc / p->c, c = nc % p->c;
        const int c0 = c - half < 0 ? 0 : c - half, c1 = c + half >= p->c ? p->c - 1 : c + half;
        float *dxp = dx + nc * hw;
        // dx may not alias dy: the window reads neighbouring planes of dy
        memset(dxp, 0, hw * sizeof(float));
        for (int cc = c0; cc <= c1; cc++) {
            const size_t off = ((size_t)n * p->c + cc) * hw;
            const float *dyc = dy + off, *yc = y + off, *sc = scale + off;
            for (size_t i = 0; i < hw; i++) dxp[i] += dyc[i] * yc[i] / sc[i];
        }
        const float *xp = x + nc * hw, *dyp = dy + nc * hw, *sp = scale + nc * hw;
        for (size_t i = 0; i < hw; i++) dxp[i] = dyp[i] * lrn_pow(sp[i], beta) - coef * xp[i] * dxp[i];
    }
}

void cb_cpu_bn_forward_train(const cb_bn_params *p, const float *x, const float *gamma, const float *beta, float *y,
                             float *mean, float *invstd, float *running_mean, float *running_var, float momentum)
{
    const size_t hw = (size_t)p->h * p->w, m = (size_t)p->n * hw;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < p->c; c++) {
        double sum = 0.0;
        for (int n = 0; n < p->n; n++) {
            const float *xc = x + ((size_t)n * p->c + c) * hw;
            float s = 0.0f; // per plane in float, vectorised (simd: the sum's order is the vectors'), across planes in double
#pragma omp simd reduction(+ : s)
            for (size_t i = 0; i < hw; i++) s += xc[i];
            sum += s;
        }
        const double mu = sum / m;
        double ss = 0.0;
        const float muf = (float)mu;
        for (int n = 0; n < p->n; n++) {
            const float *xc = x + ((size_t)n * p->c + c) * hw;
            float s = 0.0f;
#pragma omp simd reduction(+ : s)
            for (size_t i = 0; i < hw; i++) {
                const float d = xc[i] - muf;
                s += d * d;
            }
            ss += s;
        }
        const double is = 1.0 / sqrt(ss / m + (double)p->eps);
        const float scl = (float)(is * gamma[c]), sh = (float)(beta[c] - mu * is * gamma[c]);
        for (int n = 0; n < p->n; n++) {
            const size_t off = ((size_t)n * p->c + c) * hw;
            for (size_t i = 0; i < hw; i++) y[off + i] = x[off + i] * scl + sh;
        }
        if (mean) mean[c] = (float)mu;
        if (invstd) invstd[c] = (float)is;
        if (running_mean && running_var) {
            const double unbiased = m > 1 ? ss / (m - 1) : ss;
            running_mean[c] = (float)((1.0 - momentum) * running_mean[c] + momentum * mu);
            running_var[c] = (float)((1.0 - momentum) * running_var[c] + momentum * unbiased);
        }
    }
}

void cb_cpu_bn_forward_infer(const cb_bn_params *p, const float *x, const float *gamma, const float *beta, float *y,
                             const float *running_mean, const float *running_var)
{
    const size_t hw = (size_t)p->h * p->w;
    const int planes = p->n * p->c;
#pragma omp parallel for schedule(static)
    for (int nc = 0; nc < planes; nc++) {
        const int c = nc % p->c;
        const double is = 1.0 / sqrt((double)running_var[c] + p->eps);
        const float scl = (float)(is * gamma[c]), sh = (float)(beta[c] - running_mean[c] * is * gamma[c]);
        const float *xp = x + nc * hw;
        float *yp = y + nc * hw;
        for (size_t i = 0; i < hw; i++) yp[i] = xp[i] * scl + sh;
    }
}

// dbeta = sum dy, dgamma = sum dy*xhat, dx = gamma*invstd/M * (M dy - dbeta - xhat dgamma)
void cb_cpu_bn_backward(const cb_bn_params *p, const float *x, const float *gamma, const float *mean, const float *invstd,
                        const float *dy, float *dx, float *dgamma, float *dbeta)
{
    const size_t hw = (size_t)p->h * p->w, m = (size_t)p->n * hw;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < p->c; c++) {
        const float mu = mean[c], is = invstd[c];
        double sdy = 0.0, sdyx = 0.0;
        for (int n = 0; n < p->n; n++) {
            const size_t off = ((size_t)n * p->c + c) * hw;
            float a = 0.0f, b = 0.0f;
#pragma omp simd reduction(+ : a, b)
            for (size_t i = 0; i < hw; i++) {
                a += dy[off + i];
                b += dy[off + i] * (x[off + i] - mu);
            }
            sdy += a;
            sdyx += b;
        }
        sdyx *= is; // sum dy * xhat
        if (dgamma) dgamma[c] = (float)sdyx;
        if (dbeta) dbeta[c] = (float)sdy;
        if (!dx) continue;
        // dx = f * dy - f/M * (dbeta + xhat * dgamma) = f*dy + u*(x - mu) + v
        const double f = (double)gamma[c] * is;
        const float ff = (float)f, u = (float)(-f / m * sdyx * is), v = (float)(-f / m * sdy);
        for (int n = 0; n < p->n; n++) {
            const size_t off = ((size_t)n * p->c + c) * hw;
            for (size_t i = 0; i < hw; i++) dx[off + i] = ff * dy[off + i] + u * (x[off + i] - mu) + v;
        }
    }
}
