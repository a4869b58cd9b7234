// Convolution forward, backward-data and backward-filter as implicit GEMMs over NCHW tensors:
// the Op structs gather matrix elements straight from x, w and dy (TF padding: leading pads
// given, trailing implied; out-of-image taps read as zero).
#include "cuda/conv_algo.h"
#include "cuda/igemm.cuh"
#include "cuda/launch.h"

// forward, per group g: y[k, (n,p,q)] = sum_{(c,r,s)} w[k, (c,r,s)] * x[n, c, p*sh-pt+r, q*sw-pl+s]
struct conv_fwd_op {
    const float *x, *w, *bias;
    float *y;
    cb_conv_params p;
    int cg, kg, rs, pq;
    bool relu;
    __device__ float a(int g, int m, int k) const { return w[(size_t)(g * kg + m) * cg * rs + k]; }
    __device__ float b(int g, int k, int n) const {
        int nn = n / pq, o = n - nn * pq, oh = o / p.q, ow = o - oh * p.q;
        int c = k / rs, t = k - c * rs, r = t / p.s, s = t - r * p.s;
        int ih = oh * p.stride_h - p.pad_top + r, iw = ow * p.stride_w - p.pad_left + s;
        if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) return 0.f;
        return x[(((size_t)nn * p.c + g * cg + c) * p.h + ih) * p.w + iw];
    }
    __device__ void store(int g, int m, int n, float v, bool atomic) const {
        int nn = n / pq, o = n - nn * pq, k = g * kg + m;
        v += bias ? bias[k] : 0.f;
        y[((size_t)nn * p.k + k) * pq + o] = relu ? fmaxf(v, 0.f) : v;
    }
};

// backward data, per group: dx[c, (n,h,w)] = sum_{(k,r,s)} w[k, c, r, s] * dy[n, k, oh, ow]
// where oh*sh = h + pt - r (only exact multiples inside the output)
struct conv_bwd_data_op {
    const float *dy, *w;
    float *dx;
    cb_conv_params p;
    int cg, kg, rs, hw;
    __device__ float a(int g, int m, int k) const {
        int kk = k / rs, t = k - kk * rs;
        return w[((size_t)(g * kg + kk) * cg + m) * rs + t];
    }
    __device__ float b(int g, int k, int n) const {
        int nn = n / hw, o = n - nn * hw, ih = o / p.w, iw = o - ih * p.w;
        int kk = k / rs, t = k - kk * rs, r = t / p.s, s = t - r * p.s;
        int th = ih + p.pad_top - r, tw = iw + p.pad_left - s;
        if (th < 0 || tw < 0 || th % p.stride_h || tw % p.stride_w) return 0.f;
        int oh = th / p.stride_h, ow = tw / p.stride_w;
        if (oh >= p.p || ow >= p.q) return 0.f;
        return dy[(((size_t)nn * p.k + g * kg + kk) * p.p + oh) * p.q + ow];
    }
    __device__ void store(int g, int m, int n, float v, bool atomic) const {
        int nn = n / hw, o = n - nn * hw;
        dx[((size_t)nn * p.c + g * cg + m) * hw + o] = v;
    }
};

// backward filter, per group: dw[k, (c,r,s)] = sum_{(n,p,q)} dy[n, k, p, q] * x[n, c, p*sh-pt+r, q*sw-pl+s]
struct conv_bwd_filter_op {
    const float *x, *dy;
    float *dw;
    cb_conv_params p;
    int cg, kg, rs, pq;
    __device__ float a(int g, int m, int k) const {
        int nn = k / pq, o = k - nn * pq;
        return dy[((size_t)nn * p.k + g * kg + m) * pq + o];
    }
    __device__ float b(int g, int k, int n) const {
        int nn = k / pq, o = k - nn * pq, oh = o / p.q, ow = o - oh * p.q;
        int c = n / rs, t = n - c * rs, r = t / p.s, s = t - r * p.s;
        int ih = oh * p.stride_h - p.pad_top + r, iw = ow * p.stride_w - p.pad_left + s;
        if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) return 0.f;
        return x[(((size_t)nn * p.c + g * cg + c) * p.h + ih) * p.w + iw];
    }
    __device__ void store(int g, int m, int n, float v, bool atomic) const {
        float *d = dw + (size_t)(g * kg + m) * cg * rs + n;
        if (atomic) atomicAdd(d, v);
        else *d = v;
    }
};

static void forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    int cg = p->c / p->groups, kg = p->k / p->groups;
    conv_fwd_op op = {x, w, b, y, *p, cg, kg, p->r * p->s, p->p * p->q, relu};
    cb_igemm_launch(op, kg, p->n * p->p * p->q, cg * p->r * p->s, p->groups, 1, cg * p->r * p->s);
}

static void backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws) {
    int cg = p->c / p->groups, kg = p->k / p->groups;
    conv_bwd_data_op op = {dy, w, dx, *p, cg, kg, p->r * p->s, p->h * p->w};
    cb_igemm_launch(op, cg, p->n * p->h * p->w, kg * p->r * p->s, p->groups, 1, kg * p->r * p->s);
}

static void backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws) {
    int cg = p->c / p->groups, kg = p->k / p->groups;
    int M = kg, N = cg * p->r * p->s, K = p->n * p->p * p->q, kchunk;
    int splits = cb_igemm_splits(M, N, K, p->groups, &kchunk);
    if (splits > 1) cudaMemsetAsync(dw, 0, (size_t)p->k * N * sizeof(float));
    conv_bwd_filter_op op = {x, dy, dw, *p, cg, kg, p->r * p->s, p->p * p->q};
    cb_igemm_launch(op, M, N, K, p->groups, splits, kchunk);
    if (db) cb_cuda_bias_grad(p->n, p->k, p->p * p->q, dy, db);
}

extern "C" const cb_cuda_conv_algo cb_conv_algo_igemm_simt = {
    "igemm-simt", CB_PREC_FP32, "implicit GEMM, 64x64x16 shared-memory tiles, fp32 FMA (every shape, every phase)",
    NULL, NULL, forward, backward_data, backward_filter,
};
