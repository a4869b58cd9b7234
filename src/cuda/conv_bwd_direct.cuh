// Backward data of a convolution with few input channels per group (C/g <= 8: first layers such as
// AlexNet conv1 and L1), directly: dx[n, c, h, w] = sum_{k, r, s} w[k, c, r, s] dy[n, k, oh, ow]
// with oh*sh = h + pt - r, ow*sw = w + pl - s. As a GEMM its M side is C/g, far below any tile;
// here every thread owns TW neighbouring pixels of one row, for all C/g channels at once, and
// walks the output channels with their weights staged in shared memory (KC at a time, as one
// float4 per tap per 4 channels). Stride 1 slides a window of TW + 1 dy values along s, so each
// dy load serves TW taps; other strides visit only the taps of each pixel's residue class.
// Strict fp32 FMA.
#ifndef CB_CUDA_CONV_BWD_DIRECT_CUH
#define CB_CUDA_CONV_BWD_DIRECT_CUH

#include "core/ops.h"

#include <cuda_runtime.h>

#define CB_BWD_DIRECT_TW 8
#define CB_BWD_DIRECT_SMEM 32768

template <int CV, bool STRIDE1>
__global__ void __launch_bounds__(256) cb_conv_bwd_data_direct_kernel(cb_conv_params p, int kc, const float *dy, const float *w,
                                                                       float *dx) {
    constexpr int TW = CB_BWD_DIRECT_TW;
    extern __shared__ float4 cb_ws4[]; // (KC, R*S, CV): weights of the group's channels, 4 per float4
    const int cg = p.c / p.groups, kg = p.k / p.groups, rs = p.r * p.s;
    const int n = blockIdx.y / p.groups, g = blockIdx.y % p.groups;
    const int wq = (p.w + TW - 1) / TW;
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    const bool active = q < p.h * wq;
    const int h = active ? q / wq : 0, w0 = active ? (q % wq) * TW : 0;
    float acc[TW][CV * 4];
#pragma unroll
    for (int j = 0; j < TW; j++)
#pragma unroll
        for (int c = 0; c < CV * 4; c++) acc[j][c] = 0.f;
    float *ws = (float *)cb_ws4;
    // strided: the first tap of each pixel's residue class and its output row / column (the taps
    // of a class step by the stride, their outputs by one)
    int r0 = 0, oh0 = 0, s0[TW], ow0[TW];
    if (!STRIDE1) {
        const int th = h + p.pad_top;
        r0 = th % p.stride_h, oh0 = (th - r0) / p.stride_h;
#pragma unroll
        for (int j = 0; j < TW; j++) {
            const int tw = w0 + j + p.pad_left;
            s0[j] = tw % p.stride_w, ow0[j] = (tw - s0[j]) / p.stride_w;
        }
    }

    for (int k0 = 0; k0 < kg; k0 += kc) {
        const int kn = min(kc, kg - k0);
        __syncthreads();
        for (int i = threadIdx.x; i < kn * rs * CV * 4; i += blockDim.x) {
            int c = i % (CV * 4), t = i / (CV * 4), tap = t % rs, kl = t / rs;
            ws[i] = c < cg ? __ldg(w + ((long)(g * kg + k0 + kl) * cg + c) * rs + tap) : 0.f;
        }
        __syncthreads();
        if (!active) continue;
        for (int kl = 0; kl < kn; kl++) {
            const float *dyk = dy + ((long)n * p.k + g * kg + k0 + kl) * p.p * p.q;
            const float4 *wk = cb_ws4 + (long)kl * rs * CV;
            if (STRIDE1) {
                for (int r = 0; r < p.r; r++) {
                    int oh = h + p.pad_top - r;
                    if (oh < 0) break;
                    if (oh >= p.p) continue;
                    const float *row = dyk + (long)oh * p.q;
                    const int ob = w0 + p.pad_left; // pixel j at tap s reads ow = ob + j - s
                    float d[TW];
#pragma unroll
                    for (int j = 0; j < TW; j++) d[j] = (unsigned)(ob + j) < (unsigned)p.q ? __ldg(row + ob + j) : 0.f;
                    const float4 *wr = wk + r * p.s * CV;
                    for (int s = 0; s < p.s; s++) {
#pragma unroll
                        for (int v = 0; v < CV; v++) {
                            float4 wv = wr[s * CV + v];
#pragma unroll
                            for (int j = 0; j < TW; j++) {
                                acc[j][v * 4 + 0] = fmaf(wv.x, d[j], acc[j][v * 4 + 0]);
                                acc[j][v * 4 + 1] = fmaf(wv.y, d[j], acc[j][v * 4 + 1]);
                                acc[j][v * 4 + 2] = fmaf(wv.z, d[j], acc[j][v * 4 + 2]);
                                acc[j][v * 4 + 3] = fmaf(wv.w, d[j], acc[j][v * 4 + 3]);
                            }
                        }
#pragma unroll
                        for (int j = TW - 1; j > 0; j--) d[j] = d[j - 1];
                        int o = ob - s - 1;
                        d[0] = (unsigned)o < (unsigned)p.q ? __ldg(row + o) : 0.f;
                    }
                }
            } else {
                for (int r = r0, oh = oh0; r < p.r; r += p.stride_h, oh--) {
                    if (oh < 0) break;
                    if (oh >= p.p) continue;
                    const float *row = dyk + (long)oh * p.q;
                    const float4 *wr = wk + r * p.s * CV;
#pragma unroll
                    for (int j = 0; j < TW; j++)
                        for (int s = s0[j], ow = ow0[j]; s < p.s; s += p.stride_w, ow--) {
                            if (ow < 0) break;
                            if (ow >= p.q) continue;
                            float d = __ldg(row + ow);
#pragma unroll
                            for (int v = 0; v < CV; v++) {
                                float4 wv = wr[s * CV + v];
                                acc[j][v * 4 + 0] = fmaf(wv.x, d, acc[j][v * 4 + 0]);
                                acc[j][v * 4 + 1] = fmaf(wv.y, d, acc[j][v * 4 + 1]);
                                acc[j][v * 4 + 2] = fmaf(wv.z, d, acc[j][v * 4 + 2]);
                                acc[j][v * 4 + 3] = fmaf(wv.w, d, acc[j][v * 4 + 3]);
                            }
                        }
                }
            }
        }
    }
    if (!active) return;
#pragma unroll
    for (int c = 0; c < CV * 4; c++) {
        if (c >= cg) break;
        float *out = dx + (((long)n * p.c + g * cg + c) * p.h + h) * p.w;
#pragma unroll
        for (int j = 0; j < TW; j++)
            if (w0 + j < p.w) out[w0 + j] = acc[j][c];
    }
}

static inline bool cb_conv_bwd_data_direct_supports(const cb_conv_params *p) {
    return p->c / p->groups <= 8 && (long)p->n * p->groups <= 65535 && p->r * p->s * 2 * 16 <= CB_BWD_DIRECT_SMEM &&
           (long)p->n * p->c * p->h * p->w < (1L << 31);
}

// dx overwritten
static inline void cb_conv_bwd_data_direct(const cb_conv_params *p, const float *dy, const float *w, float *dx) {
    int cg = p->c / p->groups, kg = p->k / p->groups, cv = cg <= 4 ? 1 : 2;
    int kc = CB_BWD_DIRECT_SMEM / (p->r * p->s * cv * 16);
    if (kc > kg) kc = kg;
    if (kc < 1) kc = 1;
    size_t smem = (size_t)kc * p->r * p->s * cv * 16;
    int wq = (p->w + CB_BWD_DIRECT_TW - 1) / CB_BWD_DIRECT_TW;
    dim3 grid((unsigned)((p->h * wq + 255) / 256), (unsigned)(p->n * p->groups));
    bool s1 = p->stride_h == 1 && p->stride_w == 1;
    if (cv == 1 && s1) cb_conv_bwd_data_direct_kernel<1, true><<<grid, 256, smem>>>(*p, kc, dy, w, dx);
    else if (cv == 1) cb_conv_bwd_data_direct_kernel<1, false><<<grid, 256, smem>>>(*p, kc, dy, w, dx);
    else if (s1) cb_conv_bwd_data_direct_kernel<2, true><<<grid, 256, smem>>>(*p, kc, dy, w, dx);
    else cb_conv_bwd_data_direct_kernel<2, false><<<grid, 256, smem>>>(*p, kc, dy, w, dx);
}

#endif
