// Implicit-GEMM bodies over the gathers of conv_gather.cuh, C[m, n] = sum_k A(m, k) B(k, n) per
// group, 256 threads, k-steps of BK through shared memory:
//
//   cb_igemm_tc_kernel (v1)   128x128 tile, register-staged double buffer: each thread loads its
//                             share of the next step into registers before the current step is
//                             multiplied and stores it, rounded to tf32 (cvt.rna) or bf16 (rn),
//                             into the other buffer after; one barrier per step
//   cb_igemm_mma_kernel (v2)  BM x BN in {128x128, 64x256, 256x64}: each element of a step goes
//                             straight to shared memory with a 4-byte cp.async (zero-filled out of
//                             the image), STAGES steps in flight; fp32 in shared memory: tf32
//                             fragments are its bits (the tensor cores drop the low mantissa bits),
//                             bf16 fragments are rounded pairs (cvt.rn.bf16x2) at fragment load
//   cb_igemm_simt_kernel (v2) the same pipeline, strict fp32 FMA, 8x8 outputs per thread
//
// Tensor cores: mma.sync m16n8k8 tf32 or m16n8k16 bf16, fp32 accumulators, 8 warps of 64x32. A is
// (m, k) in shared memory, B (k, n) or (n, k) (Op::B_ROWS); rows are padded so that ldmatrix and
// the fragment loads of a warp hit distinct banks. blockIdx.z runs over groups x k-splits; with
// splits > 1 the Op's store accumulates atomically into a zeroed C. The host launchers at the end
// are what the engine (conv_igemm_tc.cu) and the lab (dev/cuda/igemm_lab.cu) both call.
#ifndef CB_CUDA_IGEMM_TC_CUH
#define CB_CUDA_IGEMM_TC_CUH

#include "cuda/common.cuh"
#include "cuda/conv_gather.cuh"

#include <cuda_bf16.h>
#include <stdint.h>

#define CB_TC_NT 256

__device__ __forceinline__ uint32_t cb_smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cb_ldsm_x4(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
__device__ __forceinline__ void cb_ldsm_x4_trans(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

// 4 bytes global -> shared, asynchronously; zeros when !ok (src is then not read)
__device__ __forceinline__ void cb_cp_async4(void *dst, const float *src, bool ok) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(cb_smem_addr(dst)), "l"(src), "r"(ok ? 4 : 0));
}
__device__ __forceinline__ void cb_cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cb_cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ uint32_t cb_bf16x2(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi); // lo in the low half: the smaller k
    return *(uint32_t *)&v;
}

// shared-memory element type and conversion per arithmetic (v1)
template <bool BF16> struct cb_tc_elem;
template <> struct cb_tc_elem<false> {
    typedef uint32_t T;
    static constexpr int KSTEP = 8; // m16n8k8
    __device__ static T cvt(float v) {
        uint32_t r;
        asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
        return r;
    }
};
template <> struct cb_tc_elem<true> {
    typedef __nv_bfloat16 T;
    static constexpr int KSTEP = 16; // m16n8k16
    __device__ static T cvt(float v) { return __float2bfloat16_rn(v); }
};

__device__ __forceinline__ void cb_mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, bool bf16) {
    if (bf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                     "{%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                     "{%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- v1: register-staged, 128x128 ---------------------------------------------------------------

template <bool BF16, int BK, bool B_ROWS> struct cb_tc_smem {
    static constexpr int PAD = BF16 ? 8 : 4;                // 16 bytes
    static constexpr int ALD = BK + PAD;                    // A (m, k) row
    static constexpr int BLD = B_ROWS ? BK + PAD : 128 + 8; // B (n, k) row, or (k, n) row
    static constexpr int A_ELEMS = 128 * ALD;
    static constexpr int B_ELEMS = B_ROWS ? 128 * ALD : BK * BLD;
    static constexpr size_t BYTES = 2 * (A_ELEMS + B_ELEMS) * (BF16 ? 2 : 4);
};

template <class Op, bool BF16, int BK, int MINB>
__global__ void __launch_bounds__(CB_TC_NT, MINB) cb_igemm_tc_kernel(Op op, int M, int N, int K, int kchunk, int splits) {
    typedef cb_tc_elem<BF16> E;
    typedef typename E::T T;
    typedef cb_tc_smem<BF16, BK, Op::B_ROWS> S;
    constexpr int BM = 128, BN = 128, NT = CB_TC_NT;
    constexpr int EA = BM * BK / NT, EB = BN * BK / NT;
    constexpr int KS = E::KSTEP, V = 16 / sizeof(T); // elements per 16-byte ldmatrix row
    extern __shared__ __align__(16) unsigned char cb_smem_raw[];
    T *As = (T *)cb_smem_raw, *Bs = As + 2 * S::A_ELEMS;
    __shared__ int2 tab[BM];

    const int g = blockIdx.z / splits, split = blockIdx.z % splits;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int kb = split * kchunk, ke = min(K, kb + kchunk);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp >> 2, wn = warp & 3; // warp tile (wm*64, wn*32), 64x32
    typename Op::state st;
    op.template init<BM, BN, BK, NT>(st, g, m0, n0, tid, tab);
    __syncthreads();

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int q = 0; q < 4; q++) acc[i][j][q] = 0.f;

    float ra[EA], rb[EB];
    auto fetch = [&](int k0) {
        op.template load_a<BM, BK, NT, EA>(st, k0, ke, [&](int i, const float *s, bool ok) { ra[i] = ok ? __ldg(s) : 0.f; });
        op.template load_b<BN, BK, NT, EB>(st, k0, ke, [&](int i, const float *s, bool ok) { rb[i] = ok ? __ldg(s) : 0.f; });
    };
    auto stage = [&](int buf) {
        T *a = As + buf * S::A_ELEMS, *b = Bs + buf * S::B_ELEMS;
#pragma unroll
        for (int i = 0; i < EA; i++) a[(tid / BK + i * (NT / BK)) * S::ALD + tid % BK] = E::cvt(ra[i]);
        if (Op::B_ROWS) {
#pragma unroll
            for (int i = 0; i < EB; i++) b[(tid / BK + i * (NT / BK)) * S::BLD + tid % BK] = E::cvt(rb[i]);
        } else {
#pragma unroll
            for (int i = 0; i < EB; i++) b[((tid / BN) * EB + i) * S::BLD + tid % BN] = E::cvt(rb[i]);
        }
    };

    if (kb < ke) {
        fetch(kb);
        stage(0);
    }
    __syncthreads();
    int buf = 0;
    for (int k0 = kb; k0 < ke; k0 += BK) {
        const bool more = k0 + BK < ke;
        if (more) fetch(k0 + BK);
        const T *a = As + buf * S::A_ELEMS, *b = Bs + buf * S::B_ELEMS;
#pragma unroll
        for (int ks = 0; ks < BK; ks += KS) {
            uint32_t af[4][4], bf[4][2];
#pragma unroll
            for (int mt = 0; mt < 4; mt++) {
                int row = wm * 64 + mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, col = ks + (lane >> 4) * V;
                cb_ldsm_x4(cb_smem_addr(a + row * S::ALD + col), af[mt][0], af[mt][1], af[mt][2], af[mt][3]);
            }
            if (Op::B_ROWS) { // (n, k): like A, two n8 tiles per ldmatrix
#pragma unroll
                for (int nt = 0; nt < 4; nt += 2) {
                    int row = wn * 32 + nt * 8 + (lane & 7) + (lane >> 4) * 8, col = ks + ((lane >> 3) & 1) * V;
                    cb_ldsm_x4(cb_smem_addr(b + row * S::BLD + col), bf[nt][0], bf[nt][1], bf[nt + 1][0], bf[nt + 1][1]);
                }
            } else if (BF16) { // (k, n) of 16-bit: transposing ldmatrix
#pragma unroll
                for (int nt = 0; nt < 4; nt += 2) {
                    int row = ks + (lane & 7) + ((lane >> 3) & 1) * 8, col = wn * 32 + nt * 8 + (lane >> 4) * 8;
                    cb_ldsm_x4_trans(cb_smem_addr(b + row * S::BLD + col), bf[nt][0], bf[nt][1], bf[nt + 1][0], bf[nt + 1][1]);
                }
            } else { // (k, n) of 32-bit: b0 = (k = lane%4, n = lane/4), b1 = (k + 4, n)
                const uint32_t *bb = (const uint32_t *)b;
#pragma unroll
                for (int nt = 0; nt < 4; nt++) {
                    int n = wn * 32 + nt * 8 + (lane >> 2), k = ks + (lane & 3);
                    bf[nt][0] = bb[k * S::BLD + n];
                    bf[nt][1] = bb[(k + 4) * S::BLD + n];
                }
            }
#pragma unroll
            for (int mt = 0; mt < 4; mt++)
#pragma unroll
                for (int nt = 0; nt < 4; nt++) cb_mma(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1], BF16);
        }
        if (more) stage(buf ^ 1);
        __syncthreads();
        buf ^= 1;
    }

    const bool atomic = splits > 1;
#pragma unroll
    for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int nt = 0; nt < 4; nt++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                int m = m0 + wm * 64 + mt * 16 + (lane >> 2) + (q >> 1) * 8, n = n0 + wn * 32 + nt * 8 + (lane & 3) * 2 + (q & 1);
                if (m < M && n < N) op.store(g, m, n, acc[mt][nt][q], atomic);
            }
}

// ---- v2: cp.async pipeline, fp32 in shared memory -----------------------------------------------

// shared-memory geometry (fp32 words) of the v2 kernels; KIND 0 SIMT, 1 tf32, 2 bf16
template <int KIND, int BM, int BN, int BK, bool B_ROWS> struct cb_mma_smem {
    // SIMT: A (k, m) and B (k, n), rows of BM + 4 / BN + 4 for float4 reads
    // tf32: rows of BK + 4 words (16 bytes: ldmatrix rows fall on distinct banks); B (k, n) rows of
    //       BN + 8 (the 4 k rows a warp reads at once land 8 banks apart)
    // bf16: rows of BK + 8 (float2 pairs of a half-warp on distinct banks); B (k, n) rows of BN + 4
    static constexpr int ALD = KIND == 0 ? BM + 4 : KIND == 1 ? BK + 4 : BK + 8;
    static constexpr int BLD = KIND == 0 ? BN + 4 : B_ROWS ? ALD : KIND == 1 ? BN + 8 : BN + 4;
    static constexpr int A_EL = KIND == 0 ? BK * ALD : BM * ALD;
    static constexpr int B_EL = KIND == 0 ? BK * BLD : B_ROWS ? BN * BLD : BK * BLD;
};

// issue the cp.async copies of one k-step into stage buffers a, b (layouts of cb_mma_smem)
template <int KIND, int BM, int BN, int BK, class Op, class Smem>
__device__ __forceinline__ void cb_mma_issue(const Op &op, const typename Op::state &st, int k0, int ke, float *a, float *b, int tid) {
    constexpr int NT = CB_TC_NT, EA = BM * BK / NT, EB = BN * BK / NT;
    const float *safe = op.safe();
    const int rk = tid % BK, rr = tid / BK; // "rows" pattern: column k, first row
    const int cn = tid % BN, ck = (tid / BN) * EB; // "cols" pattern: column n, first k
    op.template load_a<BM, BK, NT, EA>(st, k0, ke, [&](int i, const float *s, bool ok) {
        int row = rr + i * (NT / BK);
        cb_cp_async4(KIND == 0 ? a + rk * Smem::ALD + row : a + row * Smem::ALD + rk, ok ? s : safe, ok);
    });
    op.template load_b<BN, BK, NT, EB>(st, k0, ke, [&](int i, const float *s, bool ok) {
        float *d;
        if (Op::B_ROWS) {
            int row = rr + i * (NT / BK);
            d = KIND == 0 ? b + rk * Smem::BLD + row : b + row * Smem::BLD + rk;
        } else {
            d = b + (ck + i) * Smem::BLD + cn;
        }
        cb_cp_async4(d, ok ? s : safe, ok);
    });
}

template <class Op, int KIND, int BM, int BN, int BK, int STAGES, int MINB>
__global__ void __launch_bounds__(CB_TC_NT, MINB) cb_igemm_mma_kernel(Op op, int M, int N, int K, int kchunk, int splits) {
    typedef cb_mma_smem<KIND, BM, BN, BK, Op::B_ROWS> S;
    constexpr int NT = CB_TC_NT, WN = BN / 32;
    constexpr bool BF16 = KIND == 2;
    constexpr int KS = BF16 ? 16 : 8;
    static_assert((BM / 64) * WN == 8, "8 warps of 64x32");
    extern __shared__ __align__(16) float cb_smem_f[];
    float *As = cb_smem_f, *Bs = cb_smem_f + STAGES * S::A_EL;
    __shared__ int2 tab[BM];

    const int g = blockIdx.z / splits, split = blockIdx.z % splits;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int kb = split * kchunk, ke = min(K, kb + kchunk);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WN, wn = warp % WN; // warp tile (wm*64, wn*32)
    const int gid = lane >> 2, tig = lane & 3;
    typename Op::state st;
    op.template init<BM, BN, BK, NT>(st, g, m0, n0, tid, tab);
    __syncthreads();

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int q = 0; q < 4; q++) acc[i][j][q] = 0.f;

    const int nk = ke > kb ? (ke - kb + BK - 1) / BK : 0;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk) cb_mma_issue<KIND, BM, BN, BK, Op, S>(op, st, kb + s * BK, ke, As + s * S::A_EL, Bs + s * S::B_EL, tid);
        cb_cp_commit();
    }
    for (int t = 0; t < nk; t++) {
        cb_cp_wait<STAGES - 2>();
        __syncthreads();
        {
            int tn = t + STAGES - 1, sl = tn % STAGES;
            if (tn < nk) cb_mma_issue<KIND, BM, BN, BK, Op, S>(op, st, kb + tn * BK, ke, As + sl * S::A_EL, Bs + sl * S::B_EL, tid);
            cb_cp_commit();
        }
        const float *a = As + (t % STAGES) * S::A_EL, *b = Bs + (t % STAGES) * S::B_EL;
#pragma unroll
        for (int ks = 0; ks < BK; ks += KS) {
            uint32_t af[4][4], bf[4][2];
            if (!BF16) {
#pragma unroll
                for (int mt = 0; mt < 4; mt++) {
                    int row = wm * 64 + mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, col = ks + (lane >> 4) * 4;
                    cb_ldsm_x4(cb_smem_addr(a + row * S::ALD + col), af[mt][0], af[mt][1], af[mt][2], af[mt][3]);
                }
                if (Op::B_ROWS) {
#pragma unroll
                    for (int nt = 0; nt < 4; nt += 2) {
                        int row = wn * 32 + nt * 8 + (lane & 7) + (lane >> 4) * 8, col = ks + ((lane >> 3) & 1) * 4;
                        cb_ldsm_x4(cb_smem_addr(b + row * S::BLD + col), bf[nt][0], bf[nt][1], bf[nt + 1][0], bf[nt + 1][1]);
                    }
                } else {
#pragma unroll
                    for (int nt = 0; nt < 4; nt++) {
                        int n = wn * 32 + nt * 8 + gid;
                        bf[nt][0] = __float_as_uint(b[(ks + tig) * S::BLD + n]);
                        bf[nt][1] = __float_as_uint(b[(ks + tig + 4) * S::BLD + n]);
                    }
                }
            } else {
#pragma unroll
                for (int mt = 0; mt < 4; mt++) {
                    const float *p = a + (wm * 64 + mt * 16 + gid) * S::ALD + ks + tig * 2;
                    float2 v0 = *(const float2 *)p, v1 = *(const float2 *)(p + 8 * S::ALD);
                    float2 v2 = *(const float2 *)(p + 8), v3 = *(const float2 *)(p + 8 * S::ALD + 8);
                    af[mt][0] = cb_bf16x2(v0.x, v0.y), af[mt][1] = cb_bf16x2(v1.x, v1.y);
                    af[mt][2] = cb_bf16x2(v2.x, v2.y), af[mt][3] = cb_bf16x2(v3.x, v3.y);
                }
#pragma unroll
                for (int nt = 0; nt < 4; nt++) {
                    int n = wn * 32 + nt * 8 + gid;
                    if (Op::B_ROWS) {
                        const float *p = b + n * S::BLD + ks + tig * 2;
                        float2 v0 = *(const float2 *)p, v1 = *(const float2 *)(p + 8);
                        bf[nt][0] = cb_bf16x2(v0.x, v0.y), bf[nt][1] = cb_bf16x2(v1.x, v1.y);
                    } else {
                        const float *p = b + (ks + tig * 2) * S::BLD + n;
                        bf[nt][0] = cb_bf16x2(p[0], p[S::BLD]);
                        bf[nt][1] = cb_bf16x2(p[8 * S::BLD], p[9 * S::BLD]);
                    }
                }
            }
#pragma unroll
            for (int mt = 0; mt < 4; mt++)
#pragma unroll
                for (int nt = 0; nt < 4; nt++) cb_mma(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1], BF16);
        }
    }
    cb_cp_wait<0>();

    const bool atomic = splits > 1;
#pragma unroll
    for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int nt = 0; nt < 4; nt++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                int m = m0 + wm * 64 + mt * 16 + gid + (q >> 1) * 8, n = n0 + wn * 32 + nt * 8 + tig * 2 + (q & 1);
                if (m < M && n < N) op.store(g, m, n, acc[mt][nt][q], atomic);
            }
}

template <class Op, int BM, int BN, int BK, int STAGES>
__global__ void __launch_bounds__(CB_TC_NT, 2) cb_igemm_simt_kernel(Op op, int M, int N, int K, int kchunk, int splits) {
    typedef cb_mma_smem<0, BM, BN, BK, Op::B_ROWS> S;
    constexpr int NT = CB_TC_NT, TN = BN / 8; // threads along n; each thread 8x8: rows ty*4+i and BM/2+ty*4+i
    extern __shared__ __align__(16) float cb_smem_f[];
    float *As = cb_smem_f, *Bs = cb_smem_f + STAGES * S::A_EL;
    __shared__ int2 tab[BM];

    const int g = blockIdx.z / splits, split = blockIdx.z % splits;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int kb = split * kchunk, ke = min(K, kb + kchunk);
    const int tid = threadIdx.x, tx = tid % TN, ty = tid / TN;
    typename Op::state st;
    op.template init<BM, BN, BK, NT>(st, g, m0, n0, tid, tab);
    __syncthreads();

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;

    const int nk = ke > kb ? (ke - kb + BK - 1) / BK : 0;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk) cb_mma_issue<0, BM, BN, BK, Op, S>(op, st, kb + s * BK, ke, As + s * S::A_EL, Bs + s * S::B_EL, tid);
        cb_cp_commit();
    }
    for (int t = 0; t < nk; t++) {
        cb_cp_wait<STAGES - 2>();
        __syncthreads();
        {
            int tn = t + STAGES - 1, sl = tn % STAGES;
            if (tn < nk) cb_mma_issue<0, BM, BN, BK, Op, S>(op, st, kb + tn * BK, ke, As + sl * S::A_EL, Bs + sl * S::B_EL, tid);
            cb_cp_commit();
        }
        const float *a = As + (t % STAGES) * S::A_EL, *b = Bs + (t % STAGES) * S::B_EL;
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float av[8], bv[8];
            *(float4 *)&av[0] = *(const float4 *)&a[kk * S::ALD + ty * 4];
            *(float4 *)&av[4] = *(const float4 *)&a[kk * S::ALD + BM / 2 + ty * 4];
            *(float4 *)&bv[0] = *(const float4 *)&b[kk * S::BLD + tx * 4];
            *(float4 *)&bv[4] = *(const float4 *)&b[kk * S::BLD + BN / 2 + tx * 4];
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
    }
    cb_cp_wait<0>();

    const bool atomic = splits > 1;
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int m = m0 + (i >> 2) * (BM / 2) + ty * 4 + (i & 3), n = n0 + (j >> 2) * (BN / 2) + tx * 4 + (j & 3);
            if (m < M && n < N) op.store(g, m, n, acc[i][j], atomic);
        }
}

// ---- host side --------------------------------------------------------------------------------

// the kernel family of an algorithm
typedef enum cb_tc_kind { CB_TC_SIMT, CB_TC_TF32, CB_TC_BF16 } cb_tc_kind;

// a kernel configuration: v1 (register-staged 128x128, tensor cores only) or v2 (cp.async) with
// tile 0 = chosen from the shape, 1 = 128x128, 2 = 64x256, 3 = 256x64; version 0 = what the engine
// runs (cb_tc_resolve)
typedef struct cb_tc_cfg {
    cb_tc_kind kind;
    int version, tile;
} cb_tc_cfg;

// the v2 tile with the least padding waste in M x N (ties: the square one)
static inline int cb_tc_pick_tile(int M, int N) {
    int best = 1;
    double waste = 1e300;
    const int bm[4] = {0, 128, 64, 256};
    for (int t = 1; t <= 3; t++) {
        int BM = bm[t], BN = 16384 / BM;
        double w = (double)((M + BM - 1) / BM * BM) * ((N + BN - 1) / BN * BN);
        if (w < waste * 0.97) waste = w, best = t;
    }
    return best;
}

static inline void cb_tc_tile_dims(int tile, int *bm, int *bn) {
    *bm = tile == 2 ? 64 : tile == 3 ? 256 : 128;
    *bn = 16384 / *bm;
}

// k-splits so that about `waves` blocks per SM fill the chip (132 SMs on an H200), each split at
// least `minchunk` deep; kchunk a multiple of 32
static inline int cb_tc_splits(long tiles, int K, int waves, int minchunk, int *kchunk) {
    long want = (132L * waves + tiles - 1) / tiles;
    long most = K / minchunk > 1 ? K / minchunk : 1;
    int s = (int)(want < most ? want : most);
    if (s < 1) s = 1;
    int c = (K + s - 1) / s;
    c = (c + 31) / 32 * 32;
    *kchunk = c;
    return (K + c - 1) / c;
}

template <class Op, bool BF16, int BK, int MINB> static void cb_tc_launch_v1(const Op &op, int M, int N, int K, int groups, int splits, int kchunk) {
    typedef cb_tc_smem<BF16, BK, Op::B_ROWS> S;
    static unsigned long long attr_devs = 0;
    if (cb_first_on_device(&attr_devs))
        cudaFuncSetAttribute(cb_igemm_tc_kernel<Op, BF16, BK, MINB>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::BYTES);
    dim3 grid((N + 127) / 128, (M + 127) / 128, groups * splits);
    cb_igemm_tc_kernel<Op, BF16, BK, MINB><<<grid, CB_TC_NT, S::BYTES>>>(op, M, N, K, kchunk, splits);
}

template <class Op, int KIND, int BM, int BN> static void cb_tc_launch_v2(const Op &op, int M, int N, int K, int groups, int splits, int kchunk) {
    constexpr int BK = KIND == 0 ? 8 : 16;
    typedef cb_mma_smem<KIND, BM, BN, BK, Op::B_ROWS> S;
    // up to 4 steps in flight, within ~110 KB so that two blocks share an SM
    constexpr int STEP_BYTES = (S::A_EL + S::B_EL) * 4, FIT = 110 * 1024 / STEP_BYTES;
    constexpr int STAGES = FIT > 4 ? 4 : FIT < 2 ? 2 : FIT;
    const int bytes = STAGES * STEP_BYTES;
    static unsigned long long attr_devs = 0;
    bool first = cb_first_on_device(&attr_devs);
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM, groups * splits);
    if (KIND == 0) {
        if (first) cudaFuncSetAttribute(cb_igemm_simt_kernel<Op, BM, BN, BK, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        cb_igemm_simt_kernel<Op, BM, BN, BK, STAGES><<<grid, CB_TC_NT, bytes>>>(op, M, N, K, kchunk, splits);
    } else {
        if (first) cudaFuncSetAttribute(cb_igemm_mma_kernel<Op, KIND, BM, BN, BK, STAGES, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        cb_igemm_mma_kernel<Op, KIND, BM, BN, BK, STAGES, 2><<<grid, CB_TC_NT, bytes>>>(op, M, N, K, kchunk, splits);
    }
}

// one GEMM with configuration c (the tile already resolved)
template <class Op> static void cb_tc_launch(const Op &op, cb_tc_cfg c, int M, int N, int K, int groups, int splits, int kchunk) {
    if (c.version == 1) {
        if (c.kind == CB_TC_BF16) cb_tc_launch_v1<Op, true, 16, 2>(op, M, N, K, groups, splits, kchunk);
        else cb_tc_launch_v1<Op, false, 16, 2>(op, M, N, K, groups, splits, kchunk);
        return;
    }
#define CB_TC_V2(KIND)                                                                  \
    do {                                                                                \
        if (c.tile == 2) cb_tc_launch_v2<Op, KIND, 64, 256>(op, M, N, K, groups, splits, kchunk); \
        else if (c.tile == 3) cb_tc_launch_v2<Op, KIND, 256, 64>(op, M, N, K, groups, splits, kchunk); \
        else cb_tc_launch_v2<Op, KIND, 128, 128>(op, M, N, K, groups, splits, kchunk); \
    } while (0)
    if (c.kind == CB_TC_SIMT) CB_TC_V2(0);
    else if (c.kind == CB_TC_TF32) CB_TC_V2(1);
    else CB_TC_V2(2);
#undef CB_TC_V2
}

// ---- the three phases (what conv_igemm_tc.cu registers and the lab times) ----------------------

// version 0: v2 with the tile picked from the shape, except the backward filter on tensor cores,
// which runs v1 unless the shape picks the 256x64 tile (K/g <= 64): there bf16 v1 took 0.72-0.84 of
// v2's time and tf32 v1 0.85-1.01 (the lab on the H200, docs/results/2026-11-21-own-conv-h200.md)
static inline cb_tc_cfg cb_tc_resolve(cb_tc_cfg c, int M, int N, bool bwd_filter) {
    if (c.version == 0) {
        c.version = c.kind != CB_TC_SIMT && bwd_filter && cb_tc_pick_tile(M, N) != 3 ? 1 : 2;
        c.tile = 0;
    }
    if (c.version == 1) c.tile = 1;
    else if (c.tile == 0) c.tile = cb_tc_pick_tile(M, N);
    return c;
}

static inline void cb_tc_conv_forward(cb_tc_cfg c, const cb_conv_params *p, const float *x, const float *w, const float *b, float *y,
                                      bool relu) {
    cb_conv_fwd_gather op;
    op.G = cb_conv_geom_make(p);
    op.x = x, op.w = w, op.bias = b, op.y = y, op.relu = relu;
    int M = op.G.kg, N = p->n * op.G.pq, K = op.G.cg * op.G.rs;
    cb_tc_launch(op, cb_tc_resolve(c, M, N, false), M, N, K, p->groups, 1, K);
}

static inline void cb_tc_conv_backward_data(cb_tc_cfg c, const cb_conv_params *p, const float *dy, const float *w, float *dx) {
    cb_conv_geom G = cb_conv_geom_make(p);
    int M = G.cg, N = p->n * G.hw, K = G.kg * G.rs;
    c = cb_tc_resolve(c, M, N, false);
    if (p->stride_h == 1 && p->stride_w == 1) {
        cb_conv_bwd_data_gather<false> op;
        op.G = G, op.dy = dy, op.w = w, op.dx = dx;
        cb_tc_launch(op, c, M, N, K, p->groups, 1, K);
    } else {
        cb_conv_bwd_data_gather<true> op;
        op.G = G, op.dy = dy, op.w = w, op.dx = dx;
        cb_tc_launch(op, c, M, N, K, p->groups, 1, K);
    }
}

// dw overwritten (zeroed first when split); db by the caller
static inline void cb_tc_conv_backward_filter(cb_tc_cfg c, const cb_conv_params *p, const float *x, const float *dy, float *dw) {
    cb_conv_bwd_filter_gather op;
    op.G = cb_conv_geom_make(p);
    op.x = x, op.dy = dy, op.dw = dw;
    int M = op.G.cg * op.G.rs, N = op.G.kg, K = p->n * op.G.pq, kchunk, bm, bn;
    c = cb_tc_resolve(c, M, N, true);
    cb_tc_tile_dims(c.tile, &bm, &bn);
    long tiles = (long)((M + bm - 1) / bm) * ((N + bn - 1) / bn) * p->groups;
    int splits = cb_tc_splits(tiles, K, 4, 512, &kchunk);
    if (splits > 1) cudaMemsetAsync(dw, 0, (size_t)p->k * M * sizeof(float));
    cb_tc_launch(op, c, M, N, K, p->groups, splits, kchunk);
}

#endif
