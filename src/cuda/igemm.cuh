// One tiled fp32 GEMM body for every matrix product of the cuda backend: C[m, n] = sum_k A(m, k)
// B(k, n), with A, B and the store given by an Op (gathers: no im2col buffer). 64x64 block tile,
// 16-deep k steps through shared memory, 256 threads of 4x4 outputs each. blockIdx.z runs over
// groups x k-splits; with splits > 1 the Op's store accumulates atomically into a zeroed C.
#ifndef CB_CUDA_IGEMM_CUH
#define CB_CUDA_IGEMM_CUH

#include "cuda/common.cuh"

#define IG_BM 64
#define IG_BN 64
#define IG_BK 16

template <class Op> __global__ void __launch_bounds__(256) cb_igemm_kernel(Op op, int M, int N, int K, int kchunk, int splits) {
    __shared__ float As[IG_BK][IG_BM + 4]; // (k, m)
    __shared__ float Bs[IG_BK][IG_BN];     // (k, n)
    const int g = blockIdx.z / splits, split = blockIdx.z % splits;
    const int m0 = blockIdx.y * IG_BM, n0 = blockIdx.x * IG_BN;
    const int kb = split * kchunk, ke = min(K, kb + kchunk);
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = 0.f;
    for (int k0 = kb; k0 < ke; k0 += IG_BK) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int idx = tid + i * 256, mm = idx / IG_BK, kk = idx % IG_BK, m = m0 + mm, k = k0 + kk;
            As[kk][mm] = (m < M && k < ke) ? op.a(g, m, k) : 0.f;
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int idx = tid + i * 256, kk = idx / IG_BN, nn = idx % IG_BN, n = n0 + nn, k = k0 + kk;
            Bs[kk][nn] = (n < N && k < ke) ? op.b(g, k, n) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < IG_BK; kk++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
            if (m < M && n < N) op.store(g, m, n, acc[i][j], splits > 1);
        }
}

// splits chosen so that about two waves of blocks fill the chip (132 SMs on an H200)
static inline int cb_igemm_splits(int M, int N, int K, int groups, int *kchunk) {
    long tiles = (long)((M + IG_BM - 1) / IG_BM) * ((N + IG_BN - 1) / IG_BN) * groups;
    long want = (2 * 132 * 4 + tiles - 1) / tiles;
    long most = K / 256 > 1 ? K / 256 : 1;
    int s = (int)(want < most ? want : most);
    if (s < 1) s = 1;
    int c = (K + s - 1) / s;
    c = (c + IG_BK - 1) / IG_BK * IG_BK;
    *kchunk = c;
    return (K + c - 1) / c;
}

template <class Op> static void cb_igemm_launch(const Op &op, int M, int N, int K, int groups, int splits, int kchunk) {
    dim3 grid((N + IG_BN - 1) / IG_BN, (M + IG_BM - 1) / IG_BM, groups * splits);
    cb_igemm_kernel<Op><<<grid, 256>>>(op, M, N, K, kchunk, splits);
}

#endif
