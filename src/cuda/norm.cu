// Local response normalisation across channels and batch normalisation, NCHW. Per-channel
// reductions run one block per channel and sum in double.
#include "cuda/common.cuh"
#include "cuda/launch.h"

// scale = k + alpha/size * sum_{window} x^2;  y = x * scale^-beta
__global__ void lrn_fwd_kernel(cb_lrn_params p, const float *x, float *y, float *scale) {
    size_t hw = (size_t)p.h * p.w, total = (size_t)p.n * p.c * hw;
    int half = p.size / 2;
    CB_FOR(o, total) {
        size_t i = o % hw, nc = o / hw;
        int c = (int)(nc % p.c);
        size_t n = nc / p.c;
        float sq = 0.f;
        for (int cc = max(0, c - half); cc <= min(p.c - 1, c + half); cc++) {
            float v = x[(n * p.c + cc) * hw + i];
            sq += v * v;
        }
        float s = p.k + p.alpha / p.size * sq;
        scale[o] = s;
        y[o] = x[o] * powf(s, -p.beta);
    }
}

__global__ void lrn_bwd_kernel(cb_lrn_params p, const float *x, const float *y, const float *scale, const float *dy, float *dx) {
    size_t hw = (size_t)p.h * p.w, total = (size_t)p.n * p.c * hw;
    int half = p.size / 2;
    float coef = 2.f * p.alpha * p.beta / p.size;
    CB_FOR(o, total) {
        size_t i = o % hw, nc = o / hw;
        int c = (int)(nc % p.c);
        size_t n = nc / p.c;
        float acc = 0.f;
        for (int cc = max(0, c - half); cc <= min(p.c - 1, c + half); cc++) {
            size_t j = (n * p.c + cc) * hw + i;
            acc += dy[j] * y[j] / scale[j];
        }
        dx[o] = dy[o] * powf(scale[o], -p.beta) - coef * x[o] * acc;
    }
}

extern "C" void cb_cuda_lrn_forward(const cb_lrn_params *p, const float *x, float *y, float *scale) {
    size_t t = (size_t)p->n * p->c * p->h * p->w;
    lrn_fwd_kernel<<<cb_blocks(t, 256), 256>>>(*p, x, y, scale);
}

extern "C" void cb_cuda_lrn_backward(const cb_lrn_params *p, const float *x, const float *y, const float *scale,
                                     const float *dy, float *dx) {
    size_t t = (size_t)p->n * p->c * p->h * p->w;
    lrn_bwd_kernel<<<cb_blocks(t, 256), 256>>>(*p, x, y, scale, dy, dx);
}

// one block per channel: mean, biased variance (two passes), running statistics (unbiased var)
__global__ void bn_stats_kernel(cb_bn_params p, const float *x, float *mean, float *invstd, float *rmean, float *rvar,
                                float momentum) {
    int c = blockIdx.x;
    size_t hw = (size_t)p.h * p.w, m = (size_t)p.n * hw;
    double s = 0;
    for (size_t i = threadIdx.x; i < m; i += blockDim.x) s += x[((i / hw) * p.c + c) * hw + i % hw];
    double mu = cb_block_sum(s) / (double)m;
    double ss = 0;
    for (size_t i = threadIdx.x; i < m; i += blockDim.x) {
        double d = x[((i / hw) * p.c + c) * hw + i % hw] - mu;
        ss += d * d;
    }
    ss = cb_block_sum(ss);
    if (threadIdx.x == 0) {
        mean[c] = (float)mu;
        invstd[c] = (float)(1.0 / sqrt(ss / m + (double)p.eps));
        if (rmean && rvar) {
            double unb = m > 1 ? ss / (m - 1) : ss;
            rmean[c] = (float)((1.0 - momentum) * rmean[c] + momentum * mu);
            rvar[c] = (float)((1.0 - momentum) * rvar[c] + momentum * unb);
        }
    }
}

// y = (x - mean) * invstd * gamma + beta; infer passes running stats and computes invstd here
__global__ void bn_apply_kernel(cb_bn_params p, const float *x, const float *gamma, const float *beta, float *y,
                                const float *mean, const float *invstd, const float *var) {
    size_t hw = (size_t)p.h * p.w, total = (size_t)p.n * p.c * hw;
    CB_FOR(o, total) {
        int c = (int)(o / hw % p.c);
        float is = invstd ? invstd[c] : rsqrtf(var[c] + p.eps);
        y[o] = (x[o] - mean[c]) * is * gamma[c] + beta[c];
    }
}

extern "C" void cb_cuda_bn_forward_train(const cb_bn_params *p, const float *x, const float *gamma, const float *beta,
                                         float *y, float *mean, float *invstd, float *running_mean, float *running_var,
                                         float momentum) {
    bn_stats_kernel<<<p->c, 512>>>(*p, x, mean, invstd, running_mean, running_var, momentum);
    size_t t = (size_t)p->n * p->c * p->h * p->w;
    bn_apply_kernel<<<cb_blocks(t, 256), 256>>>(*p, x, gamma, beta, y, mean, invstd, NULL);
}

extern "C" void cb_cuda_bn_forward_infer(const cb_bn_params *p, const float *x, const float *gamma, const float *beta,
                                         float *y, const float *running_mean, const float *running_var) {
    size_t t = (size_t)p->n * p->c * p->h * p->w;
    bn_apply_kernel<<<cb_blocks(t, 256), 256>>>(*p, x, gamma, beta, y, running_mean, NULL, running_var);
}

// one block per channel: sdy = sum dy, sdyx = sum dy*xhat, then dx = gamma*invstd/M * (M dy - sdy - xhat sdyx)
__global__ void bn_bwd_kernel(cb_bn_params p, const float *x, const float *gamma, const float *mean, const float *invstd,
                              const float *dy, float *dx, float *dgamma, float *dbeta) {
    int c = blockIdx.x;
    size_t hw = (size_t)p.h * p.w, m = (size_t)p.n * hw;
    float mu = mean[c], is = invstd[c];
    double s1 = 0, s2 = 0;
    for (size_t i = threadIdx.x; i < m; i += blockDim.x) {
        size_t o = ((i / hw) * p.c + c) * hw + i % hw;
        s1 += dy[o];
        s2 += (double)dy[o] * (x[o] - mu) * is;
    }
    s1 = cb_block_sum(s1);
    s2 = cb_block_sum(s2);
    if (threadIdx.x == 0) {
        if (dgamma) dgamma[c] = (float)s2;
        if (dbeta) dbeta[c] = (float)s1;
    }
    if (!dx) return;
    float f = gamma[c] * is / (float)m, fs1 = (float)s1, fs2 = (float)s2, fm = (float)m;
    for (size_t i = threadIdx.x; i < m; i += blockDim.x) {
        size_t o = ((i / hw) * p.c + c) * hw + i % hw;
        float xh = (x[o] - mu) * is;
        dx[o] = f * (fm * dy[o] - fs1 - xh * fs2);
    }
}

extern "C" void cb_cuda_bn_backward(const cb_bn_params *p, const float *x, const float *gamma, const float *mean,
                                    const float *invstd, const float *dy, float *dx, float *dgamma, float *dbeta) {
    bn_bwd_kernel<<<p->c, 512>>>(*p, x, gamma, mean, invstd, dy, dx, dgamma, dbeta);
}
