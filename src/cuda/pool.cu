// Max and average pooling, forward and backward, NCHW. Padded taps take no part (max ignores
// them, average leaves them out of the divisor); ties go to the first maximum in window order.
#include "cuda/common.cuh"
#include "cuda/launch.h"

__global__ void pool_fwd_kernel(cb_pool_params p, const float *x, float *y, int32_t *argmax) {
    size_t total = (size_t)p.n * p.c * p.p * p.q;
    CB_FOR(o, total) {
        int ow = (int)(o % p.q), oh = (int)(o / p.q % p.p);
        size_t nc = o / ((size_t)p.p * p.q);
        const float *xp = x + nc * p.h * p.w;
        float best = 0.f, sum = 0.f;
        int bi = -1, count = 0;
        for (int kh = 0; kh < p.r; kh++) {
            int ih = oh * p.stride_h - p.pad_top + kh;
            if (ih < 0 || ih >= p.h) continue;
            for (int kw = 0; kw < p.s; kw++) {
                int iw = ow * p.stride_w - p.pad_left + kw;
                if (iw < 0 || iw >= p.w) continue;
                float v = xp[ih * p.w + iw];
                if (bi < 0 || v > best) best = v, bi = ih * p.w + iw;
                sum += v;
                count++;
            }
        }
        if (p.is_avg) y[o] = count ? sum / count : 0.f;
        else {
            y[o] = best;
            if (argmax) argmax[o] = bi;
        }
    }
}

// one thread per input pixel: collect every output window that covers it
__global__ void pool_bwd_kernel(cb_pool_params p, const float *dy, const int32_t *argmax, float *dx) {
    size_t total = (size_t)p.n * p.c * p.h * p.w;
    CB_FOR(i, total) {
        int iw = (int)(i % p.w), ih = (int)(i / p.w % p.h);
        size_t nc = i / ((size_t)p.h * p.w);
        int me = ih * p.w + iw;
        // outputs oh with oh*sh - pt <= ih <= oh*sh - pt + r - 1
        int oh0 = max(0, (ih + p.pad_top - p.r + p.stride_h) / p.stride_h), oh1 = min(p.p - 1, (ih + p.pad_top) / p.stride_h);
        int ow0 = max(0, (iw + p.pad_left - p.s + p.stride_w) / p.stride_w), ow1 = min(p.q - 1, (iw + p.pad_left) / p.stride_w);
        if (ih + p.pad_top - p.r + 1 < 0) oh0 = 0;
        if (iw + p.pad_left - p.s + 1 < 0) ow0 = 0;
        float acc = 0.f;
        for (int oh = oh0; oh <= oh1; oh++)
            for (int ow = ow0; ow <= ow1; ow++) {
                size_t o = (nc * p.p + oh) * p.q + ow;
                if (p.is_avg) {
                    int h0 = max(oh * p.stride_h - p.pad_top, 0), h1 = min(oh * p.stride_h - p.pad_top + p.r, p.h);
                    int w0 = max(ow * p.stride_w - p.pad_left, 0), w1 = min(ow * p.stride_w - p.pad_left + p.s, p.w);
                    acc += dy[o] / (float)((h1 - h0) * (w1 - w0));
                } else if (argmax[o] == me) acc += dy[o];
            }
        dx[i] = acc;
    }
}

extern "C" void cb_cuda_pool_forward(const cb_pool_params *p, const float *x, float *y, int32_t *argmax) {
    size_t t = (size_t)p->n * p->c * p->p * p->q;
    pool_fwd_kernel<<<cb_blocks(t, 256), 256>>>(*p, x, y, argmax);
}

extern "C" void cb_cuda_pool_backward(const cb_pool_params *p, const float *dy, const int32_t *argmax, float *dx) {
    size_t t = (size_t)p->n * p->c * p->h * p->w;
    pool_bwd_kernel<<<cb_blocks(t, 256), 256>>>(*p, dy, argmax, dx);
}
