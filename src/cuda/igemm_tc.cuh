// Two 128x128-tile implicit-GEMM bodies over the gathers of conv_gather.cuh, C[m, n] = sum_k
// A(m, k) B(k, n) per group, 256 threads, k-steps of BK through double-buffered shared memory:
// each thread loads its share of the next step into registers before the current step is
// multiplied, and stores it (converted) into the other buffer after; one barrier per step.
//
//   cb_igemm_tc_kernel      tensor cores, mma.sync m16n8k8 tf32 or m16n8k16 bf16, fp32 accumulators;
//                           8 warps of 64x32; A in shared memory as (m, k), B as (k, n) or (n, k),
//                           rows padded by 16 bytes so that ldmatrix and the stores hit distinct banks;
//                           operands rounded to tf32 (cvt.rna) or bf16 (rn) when staged
//   cb_igemm_simt128_kernel strict fp32 FMA, 8x8 outputs per thread (two 4-wide strips each way)
//
// blockIdx.z runs over groups x k-splits; with splits > 1 the Op's store accumulates atomically
// into a zeroed C. The host launchers at the end are what the engine (conv_igemm_tc.cu) and the
// lab (dev/cuda/igemm_lab.cu) both call.
#ifndef CB_CUDA_IGEMM_TC_CUH
#define CB_CUDA_IGEMM_TC_CUH

#include "cuda/conv_gather.cuh"

#include <cuda_bf16.h>
#include <stdint.h>

#define CB_TC_BM 128
#define CB_TC_BN 128
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

// shared-memory element type and conversion per arithmetic
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

// shared-memory geometry of the tensor-core kernel (elements of cb_tc_elem<BF16>::T)
template <bool BF16, int BK, bool B_ROWS> struct cb_tc_smem {
    static constexpr int PAD = BF16 ? 8 : 4;                  // 16 bytes
    static constexpr int ALD = BK + PAD;                      // A (m, k) row
    static constexpr int BLD = B_ROWS ? BK + PAD : CB_TC_BN + 8; // B (n, k) row, or (k, n) row
    static constexpr int A_ELEMS = CB_TC_BM * ALD;
    static constexpr int B_ELEMS = B_ROWS ? CB_TC_BN * ALD : BK * BLD;
    static constexpr size_t BYTES = 2 * (A_ELEMS + B_ELEMS) * (BF16 ? 2 : 4);
};

template <class Op, bool BF16, int BK, int MINB>
__global__ void __launch_bounds__(CB_TC_NT, MINB) cb_igemm_tc_kernel(Op op, int M, int N, int K, int kchunk, int splits) {
    typedef cb_tc_elem<BF16> E;
    typedef typename E::T T;
    typedef cb_tc_smem<BF16, BK, Op::B_ROWS> S;
    constexpr int BM = CB_TC_BM, BN = CB_TC_BN, NT = CB_TC_NT;
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
        op.template load_a<BM, BK, NT, EA>(st, kb, ke, ra);
        op.template load_b<BN, BK, NT, EB>(st, kb, ke, rb);
        stage(0);
    }
    __syncthreads();
    int buf = 0;
    for (int k0 = kb; k0 < ke; k0 += BK) {
        const bool more = k0 + BK < ke;
        if (more) {
            op.template load_a<BM, BK, NT, EA>(st, k0 + BK, ke, ra);
            op.template load_b<BN, BK, NT, EB>(st, k0 + BK, ke, rb);
        }
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

template <class Op, int BK>
__global__ void __launch_bounds__(CB_TC_NT, 2) cb_igemm_simt128_kernel(Op op, int M, int N, int K, int kchunk, int splits) {
    constexpr int BM = CB_TC_BM, BN = CB_TC_BN, NT = CB_TC_NT, LD = 128 + 4;
    constexpr int EA = BM * BK / NT, EB = BN * BK / NT;
    __shared__ __align__(16) float As[2][BK][LD]; // (k, m)
    __shared__ __align__(16) float Bs[2][BK][LD]; // (k, n)
    __shared__ int2 tab[BM];

    const int g = blockIdx.z / splits, split = blockIdx.z % splits;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int kb = split * kchunk, ke = min(K, kb + kchunk);
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    typename Op::state st;
    op.template init<BM, BN, BK, NT>(st, g, m0, n0, tid, tab);
    __syncthreads();

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;

    float ra[EA], rb[EB];
    auto stage = [&](int buf) {
#pragma unroll
        for (int i = 0; i < EA; i++) As[buf][tid % BK][tid / BK + i * (NT / BK)] = ra[i];
        if (Op::B_ROWS) {
#pragma unroll
            for (int i = 0; i < EB; i++) Bs[buf][tid % BK][tid / BK + i * (NT / BK)] = rb[i];
        } else {
#pragma unroll
            for (int i = 0; i < EB; i++) Bs[buf][(tid / BN) * EB + i][tid % BN] = rb[i];
        }
    };

    if (kb < ke) {
        op.template load_a<BM, BK, NT, EA>(st, kb, ke, ra);
        op.template load_b<BN, BK, NT, EB>(st, kb, ke, rb);
        stage(0);
    }
    __syncthreads();
    int buf = 0;
    for (int k0 = kb; k0 < ke; k0 += BK) {
        const bool more = k0 + BK < ke;
        if (more) {
            op.template load_a<BM, BK, NT, EA>(st, k0 + BK, ke, ra);
            op.template load_b<BN, BK, NT, EB>(st, k0 + BK, ke, rb);
        }
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[8], b[8];
            *(float4 *)&a[0] = *(const float4 *)&As[buf][kk][ty * 4];
            *(float4 *)&a[4] = *(const float4 *)&As[buf][kk][64 + ty * 4];
            *(float4 *)&b[0] = *(const float4 *)&Bs[buf][kk][tx * 4];
            *(float4 *)&b[4] = *(const float4 *)&Bs[buf][kk][64 + tx * 4];
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) stage(buf ^ 1);
        __syncthreads();
        buf ^= 1;
    }

    const bool atomic = splits > 1;
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int m = m0 + (i >> 2) * 64 + ty * 4 + (i & 3), n = n0 + (j >> 2) * 64 + tx * 4 + (j & 3);
            if (m < M && n < N) op.store(g, m, n, acc[i][j], atomic);
        }
}

// ---- host side --------------------------------------------------------------------------------

// the kernel family of an algorithm
typedef enum cb_tc_kind { CB_TC_SIMT, CB_TC_TF32, CB_TC_BF16 } cb_tc_kind;

// k-splits so that about `waves` blocks per SM fill the chip (132 SMs on an H200), each split at
// least `minchunk` deep; kchunk a multiple of bk
static inline int cb_tc_splits(int M, int N, int K, int groups, int bk, int waves, int minchunk, int *kchunk) {
    long tiles = (long)((M + CB_TC_BM - 1) / CB_TC_BM) * ((N + CB_TC_BN - 1) / CB_TC_BN) * groups;
    long want = (132L * waves + tiles - 1) / tiles;
    long most = K / minchunk > 1 ? K / minchunk : 1;
    int s = (int)(want < most ? want : most);
    if (s < 1) s = 1;
    int c = (K + s - 1) / s;
    c = (c + bk - 1) / bk * bk;
    *kchunk = c;
    return (K + c - 1) / c;
}

template <class Op, bool BF16, int BK, int MINB> static void cb_tc_launch_k(const Op &op, int M, int N, int K, int groups, int splits, int kchunk) {
    typedef cb_tc_smem<BF16, BK, Op::B_ROWS> S;
    static bool attr_set = false;
    if (!attr_set) {
        cudaFuncSetAttribute(cb_igemm_tc_kernel<Op, BF16, BK, MINB>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::BYTES);
        attr_set = true;
    }
    dim3 grid((N + CB_TC_BN - 1) / CB_TC_BN, (M + CB_TC_BM - 1) / CB_TC_BM, groups * splits);
    cb_igemm_tc_kernel<Op, BF16, BK, MINB><<<grid, CB_TC_NT, S::BYTES>>>(op, M, N, K, kchunk, splits);
}

// one GEMM of kind `kind` (bk: k-step; 32 or 16 for the tensor cores, 8 or 16 for SIMT)
template <class Op> static void cb_tc_launch(const Op &op, cb_tc_kind kind, int bk, int M, int N, int K, int groups, int splits, int kchunk) {
    dim3 grid((N + CB_TC_BN - 1) / CB_TC_BN, (M + CB_TC_BM - 1) / CB_TC_BM, groups * splits);
    if (kind == CB_TC_SIMT) {
        if (bk == 16) cb_igemm_simt128_kernel<Op, 16><<<grid, CB_TC_NT>>>(op, M, N, K, kchunk, splits);
        else cb_igemm_simt128_kernel<Op, 8><<<grid, CB_TC_NT>>>(op, M, N, K, kchunk, splits);
    } else if (kind == CB_TC_TF32) {
        if (bk == 16) cb_tc_launch_k<Op, false, 16, 2>(op, M, N, K, groups, splits, kchunk);
        else cb_tc_launch_k<Op, false, 32, 1>(op, M, N, K, groups, splits, kchunk);
    } else {
        if (bk == 16) cb_tc_launch_k<Op, true, 16, 2>(op, M, N, K, groups, splits, kchunk);
        else cb_tc_launch_k<Op, true, 32, 1>(op, M, N, K, groups, splits, kchunk);
    }
}

// ---- the three phases (what conv_igemm_tc.cu registers and the lab times) ----------------------

static inline void cb_tc_conv_forward(cb_tc_kind kind, int bk, const cb_conv_params *p, const float *x, const float *w,
                                      const float *b, float *y, bool relu) {
    cb_conv_fwd_gather op;
    op.G = cb_conv_geom_make(p);
    op.x = x, op.w = w, op.bias = b, op.y = y, op.relu = relu;
    int K = op.G.cg * op.G.rs;
    cb_tc_launch(op, kind, bk, op.G.kg, p->n * op.G.pq, K, p->groups, 1, K);
}

static inline void cb_tc_conv_backward_data(cb_tc_kind kind, int bk, const cb_conv_params *p, const float *dy, const float *w,
                                            float *dx) {
    cb_conv_geom G = cb_conv_geom_make(p);
    int M = G.cg, N = p->n * G.hw, K = G.kg * G.rs;
    if (p->stride_h == 1 && p->stride_w == 1) {
        cb_conv_bwd_data_gather<false> op;
        op.G = G, op.dy = dy, op.w = w, op.dx = dx;
        cb_tc_launch(op, kind, bk, M, N, K, p->groups, 1, K);
    } else {
        cb_conv_bwd_data_gather<true> op;
        op.G = G, op.dy = dy, op.w = w, op.dx = dx;
        cb_tc_launch(op, kind, bk, M, N, K, p->groups, 1, K);
    }
}

// dw overwritten (zeroed first when split); db by the caller
static inline void cb_tc_conv_backward_filter(cb_tc_kind kind, int bk, const cb_conv_params *p, const float *x, const float *dy,
                                              float *dw) {
    cb_conv_bwd_filter_gather op;
    op.G = cb_conv_geom_make(p);
    op.x = x, op.dy = dy, op.dw = dw;
    int M = op.G.cg * op.G.rs, N = op.G.kg, K = p->n * op.G.pq, kchunk;
    int splits = cb_tc_splits(M, N, K, p->groups, bk, kind == CB_TC_SIMT ? 4 : 2, 512, &kchunk);
    if (splits > 1) cudaMemsetAsync(dw, 0, (size_t)p->k * M * sizeof(float));
    cb_tc_launch(op, kind, bk, M, N, K, p->groups, splits, kchunk);
}

#endif
