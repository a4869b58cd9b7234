// Float64 direct convolutions on the GPU, the convolution labs' references (dev/cuda/wgmma_lab.cu,
// wgmma_tf32_lab.cu): NHWC tensors, KRSC filters, of fp32 or bf16 values, summed in double.
//   ref_fwd         y (N, P, Q, K) = conv(x, w) + b (b NULL: none)
//   ref_bwd_data    dx (N, H, W, C) from dy (N, P, Q, K) and w
//   ref_bwd_filter  dw (K, R, S, C) from x and dy, one block of 256 threads per element
#ifndef CB_DEV_CONV_REF_CUH
#define CB_DEV_CONV_REF_CUH

#include "core/ops.h"
#include "lab.cuh"

#include <cuda_bf16.h>

#include <vector>

__device__ __forceinline__ double lab_v(float v) { return v; }
__device__ __forceinline__ double lab_v(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T> __global__ void ref_fwd(cb_conv_params p, const T *x, const T *w, const float *b, double *y) {
    long total = (long)p.n * p.p * p.q * p.k;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        int k = i % p.k, oq = (i / p.k) % p.q, op = (i / ((long)p.k * p.q)) % p.p, n = i / ((long)p.k * p.q * p.p);
        double acc = b ? b[k] : 0.0;
        for (int r = 0; r < p.r; r++) {
            int ih = op * p.stride_h - p.pad_top + r;
            if (ih < 0 || ih >= p.h) continue;
            for (int s = 0; s < p.s; s++) {
                int iw = oq * p.stride_w - p.pad_left + s;
                if (iw < 0 || iw >= p.w) continue;
                const T *xr = x + (((long)n * p.h + ih) * p.w + iw) * p.c, *wr = w + (((long)k * p.r + r) * p.s + s) * p.c;
                for (int c = 0; c < p.c; c++) acc += lab_v(xr[c]) * lab_v(wr[c]);
            }
        }
        y[i] = acc;
    }
}

template <class T> __global__ void ref_bwd_data(cb_conv_params p, const T *dy, const T *w, double *dx) {
    long total = (long)p.n * p.h * p.w * p.c;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        int c = i % p.c, iw = (i / p.c) % p.w, ih = (i / ((long)p.c * p.w)) % p.h, n = i / ((long)p.c * p.w * p.h);
        double acc = 0;
        for (int r = 0; r < p.r; r++) {
            int th = ih + p.pad_top - r;
            if (th < 0 || th % p.stride_h || th / p.stride_h >= p.p) continue;
            for (int s = 0; s < p.s; s++) {
                int tw = iw + p.pad_left - s;
                if (tw < 0 || tw % p.stride_w || tw / p.stride_w >= p.q) continue;
                const T *d = dy + (((long)n * p.p + th / p.stride_h) * p.q + tw / p.stride_w) * p.k;
                for (int k = 0; k < p.k; k++) acc += lab_v(d[k]) * lab_v(w[(((long)k * p.r + r) * p.s + s) * p.c + c]);
            }
        }
        dx[i] = acc;
    }
}

// dw (K, R, S, C): one block per element
template <class T> __global__ void ref_bwd_filter(cb_conv_params p, const T *x, const T *dy, double *dw) {
    long i = blockIdx.x;
    int c = i % p.c, s = (i / p.c) % p.s, r = (i / ((long)p.c * p.s)) % p.r, k = i / ((long)p.c * p.s * p.r);
    long npq = (long)p.n * p.p * p.q;
    double acc = 0;
    for (long j = threadIdx.x; j < npq; j += blockDim.x) {
        int oq = j % p.q, op = (j / p.q) % p.p, n = j / ((long)p.p * p.q);
        int ih = op * p.stride_h - p.pad_top + r, iw = oq * p.stride_w - p.pad_left + s;
        if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
        acc += lab_v(dy[j * p.k + k]) * lab_v(x[(((long)n * p.h + ih) * p.w + iw) * p.c + c]);
    }
    acc = lab_block_sum256(acc);
    if (threadIdx.x == 0) dw[i] = acc;
}

// host values on the bf16 grid in [-1, 1) (8 significant bits: exact in bf16 and in tf32, so every
// product the tensor cores form from them is exact)
static inline std::vector<float> lab_random_grid(size_t n, unsigned long long seed) {
    std::vector<float> h(n);
    for (size_t i = 0; i < n; i++) {
        seed ^= seed >> 12, seed ^= seed << 25, seed ^= seed >> 27;
        float v = (float)((seed * 2685821657736338717ULL) >> 40) / 16777216.0f * 2.f - 1.f;
        h[i] = __bfloat162float(__float2bfloat16_rn(v));
    }
    return h;
}
// the same draw at fp32's full 24 bits (off the tf32 and bf16 grids: for fp32-accurate kernels)
static inline std::vector<float> lab_random_f32(size_t n, unsigned long long seed) {
    std::vector<float> h(n);
    for (size_t i = 0; i < n; i++) {
        seed ^= seed >> 12, seed ^= seed << 25, seed ^= seed >> 27;
        h[i] = (float)((seed * 2685821657736338717ULL) >> 40) / 16777216.0f * 2.f - 1.f;
    }
    return h;
}

#endif
