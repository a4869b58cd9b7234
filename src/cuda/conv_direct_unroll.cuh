// The course's fused unroll + matrix multiply in shared memory, fp32 FMA ("unroll-smem"): see
// conv_direct.cuh.
#ifndef CB_CUDA_CONV_DIRECT_UNROLL_CUH
#define CB_CUDA_CONV_DIRECT_UNROLL_CUH

#include "cuda/conv_direct_common.cuh"

// ---- unroll + matrix multiply in shared memory (the course's), fp32 FMA ----------------------------

#define CU_BK 16      // rows of the unrolled input per step
#define CU_THREADS 128

struct cd_unroll_args {
    const float *x, *w, *bias;
    float *y;
    cd_shape g;
    int kp, kg, crs, crs_pad, bn; // bn: pixels per block tile = 4 * (128 / kg)
    long long npix;               // N * P * Q
};

// A block tile: bn pixels (n, p, q flattened) x all kp output channels; thread (kgi, pg) computes
// channels 4kgi.. x pixels 4pg.. Shared: weights (crs_pad, kp), the unrolled tile (CU_BK, bn),
// per pixel its image and top-left input corner, per unrolled row its (c, r, s).
__global__ void __launch_bounds__(CU_THREADS) cd_unroll_kernel(cd_unroll_args a) {
    extern __shared__ float4 cd_dyn[];
    const cd_shape &g = a.g;
    float *sw = reinterpret_cast<float *>(cd_dyn);
    float *sxu = sw + a.crs_pad * a.kp;
    int *pimg = reinterpret_cast<int *>(sxu + CU_BK * a.bn), *pih = pimg + a.bn, *piw = pih + a.bn;
    int *ctab = piw + a.bn;
    for (int i = threadIdx.x; i < a.crs_pad * a.kp; i += CU_THREADS) {
        int j = i / a.kp, k = i - j * a.kp;
        sw[i] = (j < a.crs && k < g.k) ? a.w[(size_t)k * a.crs + j] : 0.f;
    }
    for (int j = threadIdx.x; j < a.crs_pad; j += CU_THREADS) {
        int c = j / (g.r * g.s), rs = j - c * g.r * g.s, r = rs / g.s, s = rs - r * g.s;
        ctab[j] = j < a.crs ? (c << 16 | r << 8 | s) : -1;
    }
    const int groups_px = CU_THREADS / a.kg, kgi = threadIdx.x / groups_px, pg = threadIdx.x - kgi * groups_px;
    const long long tiles = (a.npix + a.bn - 1) / a.bn;
    const int pq = g.p * g.q;
    for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        __syncthreads(); // the previous tile's readers are done with the pixel table
        for (int i = threadIdx.x; i < a.bn; i += CU_THREADS) {
            long long px = tile * a.bn + i;
            if (px < a.npix) {
                int n = (int)(px / pq), o = (int)(px - (long long)n * pq), p = o / g.q, q = o - p * g.q;
                pimg[i] = n, pih[i] = p * g.sh - g.pt, piw[i] = q * g.sw - g.pl;
            } else {
                pimg[i] = -1, pih[i] = 0, piw[i] = 0;
            }
        }
        float acc[4][4];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) acc[i][j] = 0.f;
        for (int k0 = 0; k0 < a.crs_pad; k0 += CU_BK) {
            __syncthreads();
            for (int e = threadIdx.x; e < CU_BK * a.bn; e += CU_THREADS) {
                int kk = e / a.bn, i = e - kk * a.bn, code = ctab[k0 + kk], n = pimg[i];
                float v = 0.f;
                if (code >= 0 && n >= 0) {
                    int c = code >> 16, ih = pih[i] + (code >> 8 & 255), iw = piw[i] + (code & 255);
                    if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) v = a.x[(((size_t)n * g.c + c) * g.h + ih) * g.w + iw];
                }
                sxu[e] = v;
            }
            __syncthreads();
#pragma unroll 4
            for (int kk = 0; kk < CU_BK; kk++) {
                const float4 wv = *reinterpret_cast<const float4 *>(sw + (k0 + kk) * a.kp + kgi * 4);
                const float4 xv = *reinterpret_cast<const float4 *>(sxu + kk * a.bn + pg * 4);
                const float wr[4] = {wv.x, wv.y, wv.z, wv.w}, xr[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
                for (int i = 0; i < 4; i++)
#pragma unroll
                    for (int j = 0; j < 4; j++) acc[i][j] = fmaf(wr[i], xr[j], acc[i][j]);
            }
        }
        const float lo = g.relu ? 0.f : -INFINITY;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            long long px = tile * a.bn + pg * 4 + j;
            if (px >= a.npix) break;
            int n = (int)(px / pq), o = (int)(px - (long long)n * pq);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                int k = kgi * 4 + i;
                if (k < g.k) a.y[((size_t)n * g.k + k) * pq + o] = fmaxf(acc[i][j] + (a.bias ? a.bias[k] : 0.f), lo);
            }
        }
    }
}

struct cd_unroll_plan {
    cd_unroll_args a;
    int blocks;
    size_t smem;
};

static bool cd_unroll_plan_make(const cd_shape &g, cd_unroll_plan *pl) {
    if (g.pool != 1 || g.k > 32 || g.r > 255 || g.s > 255 || g.c > 32767) return false;
    cd_unroll_args a = {};
    a.g = g;
    a.kp = cd_round_up(g.k, 4);
    a.kg = a.kp / 4;
    if (a.kg == 3 || a.kg > 4) a.kp = a.kg > 4 ? 32 : 16, a.kg = a.kp / 4; // kg divides the 128 threads
    a.crs = g.c * g.r * g.s;
    a.crs_pad = cd_round_up(a.crs, CU_BK);
    if ((long)a.crs_pad * a.kp > 8192) return false;
    a.bn = 4 * (CU_THREADS / a.kg);
    a.npix = (long long)g.n * g.p * g.q;
    size_t smem = ((size_t)a.crs_pad * a.kp + CU_BK * a.bn) * 4 + (size_t)a.bn * 3 * 4 + (size_t)a.crs_pad * 4;
    int bps = cd_blocks_per_sm((const void *)cd_unroll_kernel, CU_THREADS, smem);
    if (bps < 1) return false;
    long long tiles = (a.npix + a.bn - 1) / a.bn, most = (long long)cd_device_get().sms * bps;
    pl->a = a;
    pl->smem = smem;
    pl->blocks = (int)(tiles < most ? tiles : most);
    return true;
}

static void cd_unroll_run(const cd_unroll_plan &pl, const float *x, const float *w, const float *b, float *y, bool relu) {
    cd_unroll_args a = pl.a;
    a.x = x, a.w = w, a.bias = b, a.y = y, a.g.relu = relu;
    cd_unroll_kernel<<<pl.blocks, CU_THREADS, pl.smem>>>(a);
}


#endif
