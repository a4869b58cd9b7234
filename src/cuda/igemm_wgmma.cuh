// Hopper-native implicit-GEMM convolution on bf16 NHWC tensors: wgmma (sm_90a) with both operands
// in shared memory under the 128-byte swizzle, fp32 accumulators in registers.
//
//   y[m, k] = sum_{(r, s, c)} x[n, oh*sh - pt + r, ow*sw - pl + s, c] * w[k, r, s, c]
//   M = N*P*Q output pixels (rows m = (n, oh, ow)), N = K channels, K = R*S*C
//
// x (N, H, W, C) and w (K, R, S, C) are bf16; a k-step is 64 channels of one tap (r, s), so C must
// be a multiple of 64: each A row of a step is 128 contiguous bytes of one input pixel, and each B
// row 128 contiguous bytes of one filter. 256 threads = 2 warpgroups; a block computes BM x BN =
// (128*MT) x BN, each warpgroup 64*MT rows x BN with MT wgmma.m64nBNk16 per 16-deep slice. Every
// thread gathers its share of the next step with 16-byte cp.async straight into the swizzled
// layout (chunk j of row r at r*128 + ((j ^ (r % 8)) * 16), zero-filled outside the image, the
// M rows or the K filters), STAGES buffers, STAGES-2 steps ahead: a buffer is refilled only
// after the wgmma group that read it has retired (wgmma.wait_group 1 and a barrier), so one
// group of wgmma stays in flight while the next step is waited for. A block runs its tiles as one
// stream of k-steps (cb_wg_mainloop; one block per SM, cb_wg_grid), the loads running on into the
// next tile while a tile is stored.
//
// On bf16 NHWC output (the storage's tensors) the forward and backward data run instead on
// cb_wgmma_tma_kernel (tiles 6-10, below), and the KRSC backward filter on cb_wgmma_wgrad_tma_kernel:
// one producer thread's TMA copies (im2col for the gathered activations) feed two consumer warpgroups
// through mbarriers. cb_wgmma_conv_kernel stays for fp32 NCHW output (the own-algorithm table), and
// where the driver refuses the tensor maps; $CONVBENCH_WG_TMA=off runs it everywhere, to compare.
//
// The epilogue adds the bias (fp32), applies the ReLU when asked (cb_tc_conv_forward's order:
// y = max(conv + b, 0)), and stores bf16 NHWC (by way of each warp's 2 KB of shared memory, whole
// 128-byte row segments), or fp32 NCHW (OUT_NCHW: the own-algorithm table's buffers). The backward data of a stride-1 convolution is the same GEMM over dy with the filter
// flipped and transposed (cb_wg_flip_*): (C, R, S, K), leading pads R-1-pt and S-1-pl. The
// backward filter (cb_wgmma_wgrad_kernel, below) sums over pixels with both operands MN-major
// (into KCRS by way of a KRSC workspace: cb_wg_wgrad_kcrs).
//
// Device code only for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL); elsewhere the kernel traps, and the
// host side declines any GPU other than compute capability 9.0 (cb_wg_device_ok).
#ifndef CB_CUDA_IGEMM_WGMMA_CUH
#define CB_CUDA_IGEMM_WGMMA_CUH

#include "cuda/common.cuh"
#include "cuda/conv_gather.cuh"

#include <cuda.h> // CUtensorMap and its encoders' types (the encoders come from the driver at run time)
#include <cuda_bf16.h>
#include <stdio.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CB_WG_SM90A 1
#endif

// what one launch computes (filled by cb_wg_args_fwd / cb_wg_args_bwd_data)
struct cb_wg_args {
    const void *x;          // (N, H, W, C) bf16 (fp32 with f32)
    const void *w;          // (K, R, S, C) bf16 (fp32 with f32)
    const float *bias;      // (K) or NULL
    void *y;                // (N, P, Q, K) bf16 (fp32 with f32), or (N, K, P, Q) fp32 with OUT_NCHW
    int h, w_, c, k, r, s, p, q, sh, sw, pt, pl;
    int m;                  // N*P*Q
    int nk;                 // R*S*C/64 k-steps (R*S*C/32 with f32: a step is 128 bytes of channels either way)
    int f32;                // fp32 operands and output, tf32 products (cb_wg_args_tf32; the TMA tiles only)
    int x3;                 // with f32: fp32-accurate products, three tf32 ones each (3xTF32: cb_wg_args_x3; tiles 6 and 9)
    int relu;
    int direct;             // bf16 NHWC output stored from the fragments as they are (the lab's comparison; cb_wg_direct)
    cb_divmod d_pq, d_q;
};

__device__ __forceinline__ uint32_t cb_wg_smem(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// 16 bytes global -> shared, bypassing L1; zeros when !ok (src is then not read)
__device__ __forceinline__ void cb_wg_cp16(uint32_t dst, const void *src, bool ok) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0) : "memory");
}

__device__ __forceinline__ void cb_wg_st32(uint32_t a, uint32_t v) { asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(a), "r"(v) : "memory"); }
__device__ __forceinline__ uint4 cb_wg_ld128(uint32_t a) {
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a) : "memory");
    return v;
}

// a K-major operand tile of rows of 64 bf16 (128 bytes) under the 128-byte swizzle: 8-row groups
// 1024 bytes apart (the stride byte offset), the leading byte offset unused (1), layout type 1
// (bits 62-63) = SWIZZLE_128B; the start address in 16-byte units in bits 0-13
__device__ __forceinline__ uint64_t cb_wg_desc(uint32_t addr) {
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
}

#ifdef CB_WG_SM90A
__device__ __forceinline__ void cb_wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cb_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cb_wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

// d (64 x N fragment, fp32) += A (64 x 16, descriptor da) * B (16 x N, descriptor db): both operands
// K-major (TRANS 0) or both MN-major (TRANS 1: M resp. N contiguous, imm-trans-a = imm-trans-b = 1).
// One asm statement per N (the fragment's registers listed by the macros below); the predicate
// (scale-d) is 1: accumulate.
#define CB_WG_REGS32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define CB_WG_OUTS32 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define CB_WG_REGS64 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define CB_WG_OUTS64 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define CB_WG_REGS128 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define CB_WG_OUTS128 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
template <int N, int TRANS> __device__ __forceinline__ void cb_wgmma_t(float (&d)[N / 2], uint64_t da, uint64_t db);
template <> __device__ __forceinline__ void cb_wgmma_t<64, 0>(float (&d)[32], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" CB_WG_REGS32 "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : CB_WG_OUTS32 : "l"(da), "l"(db), "r"(1));
}
template <> __device__ __forceinline__ void cb_wgmma_t<128, 0>(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" CB_WG_REGS64 "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : CB_WG_OUTS64 : "l"(da), "l"(db), "r"(1));
}
template <> __device__ __forceinline__ void cb_wgmma_t<128, 1>(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" CB_WG_REGS64 "}, %64, %65, p, 1, 1, 1, 1;\n}\n"
                 : CB_WG_OUTS64 : "l"(da), "l"(db), "r"(1));
}
template <> __device__ __forceinline__ void cb_wgmma_t<256, 0>(float (&d)[128], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\nwgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" CB_WG_REGS128 "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
                 : CB_WG_OUTS128 : "l"(da), "l"(db), "r"(1));
}
template <> __device__ __forceinline__ void cb_wgmma_t<256, 1>(float (&d)[128], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\nwgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" CB_WG_REGS128 "}, %128, %129, p, 1, 1, 1, 1;\n}\n"
                 : CB_WG_OUTS128 : "l"(da), "l"(db), "r"(1));
}
// the same on fp32 operands as tf32 (the tensor cores read the top 19 bits of each): d (64 x N) +=
// A (64 x 8) * B (8 x N), K-major only (tf32 has no transposed form); 8 fp32 are the 32 bytes that
// 16 bf16 are, so the descriptors and their steps are the bf16 ones; acc 0: d = A * B (scale-d 0)
template <int N> __device__ __forceinline__ void cb_wgmma_tf32(float (&d)[N / 2], uint64_t da, uint64_t db, int acc = 1);
template <> __device__ __forceinline__ void cb_wgmma_tf32<64>(float (&d)[32], uint64_t da, uint64_t db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {" CB_WG_REGS32 "}, %32, %33, p, 1, 1;\n}\n"
                 : CB_WG_OUTS32 : "l"(da), "l"(db), "r"(acc));
}
template <> __device__ __forceinline__ void cb_wgmma_tf32<128>(float (&d)[64], uint64_t da, uint64_t db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" CB_WG_REGS64 "}, %64, %65, p, 1, 1;\n}\n"
                 : CB_WG_OUTS64 : "l"(da), "l"(db), "r"(acc));
}
template <> __device__ __forceinline__ void cb_wgmma_tf32<256>(float (&d)[128], uint64_t da, uint64_t db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\nwgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" CB_WG_REGS128 "}, %128, %129, p, 1, 1;\n}\n"
                 : CB_WG_OUTS128 : "l"(da), "l"(db), "r"(acc));
}
template <int N> __device__ __forceinline__ void cb_wgmma(float (&d)[N / 2], uint64_t da, uint64_t db) { cb_wgmma_t<N, 0>(d, da, db); }
template <int N> __device__ __forceinline__ void cb_wgmma_mn(float (&d)[N / 2], uint64_t da, uint64_t db) { cb_wgmma_t<N, 1>(d, da, db); }

// One tile's (or unit's) nk k-steps into acc, zeroed first, with D steps loaded ahead in STAGES
// buffers: each step starts when this thread's part of it has landed (and is visible to the tensor
// cores' reads), the wgmma of the step two back has retired and the block is there; then load(ns)
// refills that step's buffer (the load cursor moves on across tiles), and mma(cs) issues the step's
// wgmma as one group. cs, ns: the slots of the step multiplied and the step loaded, carried from
// tile to tile. Ends with every wgmma retired.
template <int STAGES, int D, int MT, int NA, class Load, class Mma>
__device__ __forceinline__ void cb_wg_mainloop(float (&acc)[MT][NA], int nk, int &cs, int &ns, Load &load, Mma mma) {
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NA; j++) acc[i][j] = 0.f;
    for (int t = 0; t < nk; t++) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(D - 1) : "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        cb_wg_wait<1>();
        __syncthreads();
        load(ns);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        cb_wg_fence();
        mma(cs);
        cb_wg_commit();
        cs = cs + 1 == STAGES ? 0 : cs + 1, ns = ns + 1 == STAGES ? 0 : ns + 1;
    }
    cb_wg_wait<0>();
}

// The bf16 NHWC store of a warp's accumulators (rows m0 + 64 i + 16 wv + lane/4 (+8): the fragment
// as cb_wgmma_conv_kernel's epilogue describes it), with the bias and ReLU, by way of the warp's own
// 2 KB of shared memory at ep: 16 rows x 64 channels at a time (16-byte chunks swizzled by row:
// conflict-free both ways), then whole 128-byte row segments, 16 bytes a lane. Stored from the
// fragments as they are, each instruction would write 16 bytes of each of 8 rows, half sectors
// (4x slower on 1x1 layers, the lab, H200, 2026-11-28).
template <int MT, int BN>
__device__ __forceinline__ void cb_wg_store_bf16(float (&acc)[MT][BN / 2], const cb_wg_args &a, uint32_t ep, int m0, int n0, int lane, int wv) {
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int c = 0; c < BN / 64; c++) {
#pragma unroll
            for (int jj = 0; jj < 8; jj++) {
                const int j = 8 * c + jj, k = n0 + 8 * j + 2 * (lane & 3);
                float b0 = 0.f, b1 = 0.f;
                if (a.bias && k < a.k) b0 = __ldg(a.bias + k), b1 = __ldg(a.bias + k + 1);
#pragma unroll
                for (int h2 = 0; h2 < 2; h2++) {
                    const int r = (lane >> 2) + 8 * h2;
                    float v0 = acc[i][4 * j + 2 * h2] + b0, v1 = acc[i][4 * j + 2 * h2 + 1] + b1;
                    if (a.relu) v0 = fmaxf(v0, 0.f), v1 = fmaxf(v1, 0.f);
                    __nv_bfloat162 v = __floats2bfloat162_rn(v0, v1);
                    cb_wg_st32(ep + r * 128 + ((jj ^ (r & 7)) << 4) + 4 * (lane & 3), *(uint32_t *)&v);
                }
            }
            __syncwarp();
#pragma unroll
            for (int it = 0; it < 4; it++) {
                const int idx = it * 32 + lane, r = idx >> 3, chk = idx & 7;
                const uint4 v = cb_wg_ld128(ep + r * 128 + ((chk ^ (r & 7)) << 4));
                const int m = m0 + i * 64 + wv * 16 + r, k = n0 + 64 * c + 8 * chk;
                if (m < a.m && k < a.k) *(uint4 *)((__nv_bfloat16 *)a.y + (long)m * a.k + k) = v; // K % 8 == 0: whole chunks
            }
            __syncwarp();
        }
}

// the same for fp32 NHWC output (a.f32): 16 rows x 32 channels at a time through the warp's 2 KB,
// each lane's pair of columns an 8-byte half of a swizzled 16-byte chunk, then whole 128-byte row
// segments, 16 bytes a lane
template <int MT, int BN>
__device__ __forceinline__ void cb_wg_store_f32(float (&acc)[MT][BN / 2], const cb_wg_args &a, uint32_t ep, int m0, int n0, int lane, int wv) {
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int c = 0; c < BN / 32; c++) {
#pragma unroll
            for (int jj = 0; jj < 4; jj++) {
                const int j = 4 * c + jj, k = n0 + 8 * j + 2 * (lane & 3), chk = 2 * jj + ((lane & 3) >> 1);
                float b0 = 0.f, b1 = 0.f;
                if (a.bias && k < a.k) b0 = __ldg(a.bias + k), b1 = __ldg(a.bias + k + 1);
#pragma unroll
                for (int h2 = 0; h2 < 2; h2++) {
                    const int r = (lane >> 2) + 8 * h2;
                    float v0 = acc[i][4 * j + 2 * h2] + b0, v1 = acc[i][4 * j + 2 * h2 + 1] + b1;
                    if (a.relu) v0 = fmaxf(v0, 0.f), v1 = fmaxf(v1, 0.f);
                    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(ep + r * 128 + ((chk ^ (r & 7)) << 4) + 8 * (lane & 1)), "f"(v0), "f"(v1)
                                 : "memory");
                }
            }
            __syncwarp();
#pragma unroll
            for (int it = 0; it < 4; it++) {
                const int idx = it * 32 + lane, r = idx >> 3, chk = idx & 7;
                const uint4 v = cb_wg_ld128(ep + r * 128 + ((chk ^ (r & 7)) << 4));
                const int m = m0 + i * 64 + wv * 16 + r, k = n0 + 32 * c + 4 * chk;
                if (m < a.m && k < a.k) *(uint4 *)((float *)a.y + (long)m * a.k + k) = v; // K % 8 == 0: whole chunks
            }
            __syncwarp();
        }
}
#endif

template <int MT, int BN, int STAGES, bool OUT_NCHW>
__global__ void __launch_bounds__(256, 1) cb_wgmma_conv_kernel(cb_wg_args a) {
#ifdef CB_WG_SM90A
    constexpr int BM = 128 * MT, A_BYTES = BM * 128, STAGE = A_BYTES + BN * 128;
    constexpr int AR = BM / 32, BR = BN / 32; // rows of the A and B tiles per thread per step
    constexpr int D = STAGES - 2;             // steps loaded ahead of the one multiplied
    extern __shared__ unsigned char cb_wg_raw[];
    const uint32_t base = (cb_wg_smem(cb_wg_raw) + 1023u) & ~1023u; // the swizzle needs 1024-byte alignment
    const uint32_t epi = base + STAGES * STAGE;                      // the epilogue's 8 x 2 KB (bf16 NHWC output)
    const int tid = threadIdx.x, wg = tid >> 7, ch = tid & 7, row0 = tid >> 3;
    const int ntn = (a.k + BN - 1) / BN, ntiles = (a.m + BM - 1) / BM * ntn; // consecutive tiles share an A tile
    const int H = a.h, W = a.w_, C = a.c, nk = a.nk;
    const long rsc = (long)nk * 64;
    const __nv_bfloat16 *X = (const __nv_bfloat16 *)a.x, *Wt = (const __nv_bfloat16 *)a.w;
    const uint32_t sw_off = row0 * 128 + ((ch ^ (row0 & 7)) << 4); // row0 % 8 == (row0 + 32 i) % 8

    // The block runs tiles blockIdx.x, + gridDim.x, ... as one stream of k-steps: the loads run D
    // steps ahead of the multiply across tile boundaries, so a tile's first steps are in flight
    // while the one before it is stored (a grid of one block per tile is the plain kernel).
    // The load cursor: tile lt_tile, its step lt (tap lr, ls; channel block lc) and its rows:
    // this thread's A rows row0 + 32 i, the input pixel of (n, oh*sh - pt, ow*sw - pl), chunk ch
    int lt_tile = blockIdx.x, lt = 0, lr = 0, ls = 0, lc = 0, ln0 = 0;
    int a_off[AR], a_ih[AR], a_iw[AR];
    auto rows = [&]() {
        const int m0 = (lt_tile / ntn) * BM;
        ln0 = (lt_tile % ntn) * BN;
#pragma unroll
        for (int i = 0; i < AR; i++) {
            int m = m0 + row0 + 32 * i;
            if (m < a.m) {
                int nn = cb_div(a.d_pq, m), o = m - nn * (a.p * a.q), oh = cb_div(a.d_q, o), ow = o - oh * a.q;
                a_ih[i] = oh * a.sh - a.pt, a_iw[i] = ow * a.sw - a.pl;
                a_off[i] = ((nn * H + a_ih[i]) * W + a_iw[i]) * C + ch * 8;
            } else {
                a_ih[i] = -(1 << 28), a_iw[i] = 0, a_off[i] = 0;
            }
        }
    };
    if (lt_tile < ntiles) rows();
    // the cursor's step into slot, then the cursor one step on (nothing once past the last tile)
    auto load = [&](int slot) {
        if (lt_tile >= ntiles) return;
        const int doff = (lr * W + ls) * C + lc;
        const uint32_t ad = base + slot * STAGE + sw_off, bd = ad + A_BYTES;
#pragma unroll
        for (int i = 0; i < AR; i++) {
            bool ok = (unsigned)(a_ih[i] + lr) < (unsigned)H && (unsigned)(a_iw[i] + ls) < (unsigned)W;
            cb_wg_cp16(ad + i * 32 * 128, ok ? X + a_off[i] + doff : X, ok);
        }
#pragma unroll
        for (int i = 0; i < BR; i++) {
            int k = ln0 + row0 + 32 * i;
            bool ok = k < a.k;
            cb_wg_cp16(bd + i * 32 * 128, ok ? Wt + k * rsc + lt * 64 + ch * 8 : Wt, ok);
        }
        lc += 64;
        if (lc == C) {
            lc = 0;
            if (++ls == a.s) ls = 0, lr++;
        }
        if (++lt == nk) {
            lt = lr = ls = lc = 0, lt_tile += gridDim.x;
            if (lt_tile < ntiles) rows();
        }
    };

    float acc[MT][BN / 2];
#pragma unroll
    for (int t = 0; t < D; t++) {
        load(t);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    // slots: cs of the step multiplied, ns of the step loaded (D further)
    int cs = 0, ns = D;
    const int lane = tid & 31, wv = (tid & 127) >> 5, pq = a.p * a.q;
    for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        cb_wg_mainloop<STAGES, D>(acc, nk, cs, ns, load, [&](int slot) {
            const uint32_t as = base + slot * STAGE + wg * MT * 8192, bs = base + slot * STAGE + A_BYTES;
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int i = 0; i < MT; i++) cb_wgmma<BN>(acc[i], cb_wg_desc(as + i * 8192 + kk * 32), cb_wg_desc(bs + kk * 32));
        });

        // accumulator fragment: warp v of the warpgroup holds rows 16 v + lane/4 (+8), columns
        // 8 j + 2 (lane % 4) (+1) in acc[4 j + {0, 1}] (and {2, 3} for the row + 8)
        const int m0 = (tile / ntn) * BM, n0 = (tile % ntn) * BN;
        if (!OUT_NCHW && !a.direct) { // bf16 NHWC: staged through the warp's 2 KB
            cb_wg_store_bf16<MT, BN>(acc, a, epi + (tid >> 5) * 2048, m0 + wg * 64 * MT, n0, lane, wv);
            continue;
        }
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int h2 = 0; h2 < 2; h2++) {
                const int m = m0 + wg * 64 * MT + i * 64 + wv * 16 + (lane >> 2) + 8 * h2;
                if (m >= a.m) continue;
                int nn = 0, o = 0;
                if (OUT_NCHW) nn = cb_div(a.d_pq, m), o = m - nn * pq;
#pragma unroll
                for (int j = 0; j < BN / 8; j++) {
                    const int k = n0 + 8 * j + 2 * (lane & 3);
                    if (k >= a.k) continue; // K is a multiple of 8: k + 1 < K too
                    float v0 = acc[i][4 * j + 2 * h2], v1 = acc[i][4 * j + 2 * h2 + 1];
                    if (a.bias) v0 += __ldg(a.bias + k), v1 += __ldg(a.bias + k + 1);
                    if (a.relu) v0 = fmaxf(v0, 0.f), v1 = fmaxf(v1, 0.f);
                    if (OUT_NCHW) {
                        float *y = (float *)a.y + ((long)nn * a.k + k) * pq + o;
                        y[0] = v0, y[pq] = v1;
                    } else {
                        *(__nv_bfloat162 *)((__nv_bfloat16 *)a.y + (long)m * a.k + k) = __floats2bfloat162_rn(v0, v1);
                    }
                }
            }
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#else
    __trap(); // built for a GPU without wgmma: the host never launches it there (cb_wg_device_ok)
#endif
}

// ---- the TMA-fed, warp-specialized kernel (tiles 6-10; bf16 NHWC output) ------------------------
//
// 384 threads: warpgroup 0 the producer, 1 and 2 the consumers. One producer thread issues each
// k-step's two tensor copies (TMA) into one of STAGES buffers: A by the im2col map ta (BM output
// pixels' input pixels at tap (r, s), 64 channels each; zeros outside the image, the padding, and
// past the last image), B by the tiled map tb (BN filters x 64 of w as a (K, R*S*C) matrix; zeros
// past K). Both land as 128-byte rows under the 128-byte swizzle, the layout cb_wg_desc describes,
// and arrive on the buffer's full barrier by their byte count. A consumer waits for the full
// barrier, issues the step's wgmma as one group, and once the group before has retired frees that
// group's buffer (its empty barrier, one arrival per warp). No thread gathers, and nothing waits on
// a block-wide barrier.
//   !COOP ("ping-pong"): the consumers take the block's tiles in turn, each a whole WM x BN tile;
//   their main loops run in tile order (the done barriers), so one stores a tile (the staged
//   epilogue) while the other multiplies the next.
//   COOP: both take every tile, consumer c its rows WM c .. WM c + WM - 1.
// X3 (fp32 operands, fp32-accurate products by 3xTF32): each stage has a second buffer beside it.
// Warps 1-3 of the producer's warpgroup (the splitters) wait for the stage's copies, write each
// operand x again as hi = tf32(x) (round to nearest) in place and lo = tf32(x - hi) into the second
// buffer (an element for an element: the swizzle is the same), and arrive on the stage's ready
// barrier; the consumers wait for that one and issue three tf32 wgmma per slice, lo*hi, hi*lo, then
// hi*hi. The tensor cores' additions truncate, so a long sum in their accumulator drifts (the first
// form's error grew with the reduction: 4.5e-7 at 64 terms, 2.9e-5 at 4,608, the lab on the H200,
// 2026-11-28): each k-step's products go to a fresh accumulator (scale-d 0), which is added into the
// tile's fp32 sums (rounded to nearest) once the step's group has retired. X3 runs COOP with 64 rows
// a consumer (the two sets of registers), the consumers overlapping each other's waits. (No register
// reallocation then: the splitters keep theirs.)
// The same kernel fed by cp.async gathers from one producer warpgroup ran 1.13-1.6x the time of
// cb_wgmma_conv_kernel (docs/results/2026-11-28-epistage.md); fed by TMA, the picked tile runs 0.84x
// (forward) and 0.83x (backward data) of cb_wgmma_conv_kernel's pick on 33 layers of ResNet-50,
// VGG-A and GoogLeNet (the lab, H200; docs/results/2026-11-28-wgtma.md). (Its consumer loop and
// cb_wgmma_wgrad_tma_kernel's are alike line for line; they are not yet one function because these
// two are the kernels the GPU checked, and a shared one would be a new kernel to check.)
#ifdef CB_WG_SM90A
__device__ __forceinline__ void cb_wg_bar_init(uint32_t b, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(b), "r"(count) : "memory");
}
__device__ __forceinline__ void cb_wg_bar_arrive(uint32_t b) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(b) : "memory");
}
// waits for the phase of the given parity to complete (the current phase or the one before it only)
__device__ __forceinline__ void cb_wg_bar_wait(uint32_t b, uint32_t parity) {
    asm volatile("{\n.reg .pred p;\nWAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra WAIT_%=;\n}\n" ::"r"(b), "r"(parity) : "memory");
}
// this thread's arrival, with `bytes` more of asynchronous copies for the phase to wait for
__device__ __forceinline__ void cb_wg_bar_expect(uint32_t b, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(bytes) : "memory");
}
// TMA im2col: the map's pixelsPerColumn pixels from (n, h, w) on (w by the stride within the pixel
// box, then h, then n), channelsPerPixel channels each from c, at filter offset (ow, oh)
__device__ __forceinline__ void cb_wg_tma_im2col(uint32_t dst, const void *m, int c, int w, int h, int n, uint32_t bar, uint16_t ow, uint16_t oh) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};\n"
                 ::"r"(dst), "l"((uint64_t)m), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar), "h"(ow), "h"(oh) : "memory");
}
// TMA tiled, 2D: the box at column x, row y
__device__ __forceinline__ void cb_wg_tma_2d(uint32_t dst, const void *m, int x, int y, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(dst), "l"((uint64_t)m), "r"(x), "r"(y), "r"(bar) : "memory");
}
// x as hi = tf32(x) (round to nearest, ties away) and lo = tf32(x - hi), both as fp32 bits; lo 0
// where x is not finite
__device__ __forceinline__ void cb_wg_split_tf32(uint32_t x, uint32_t &hi, uint32_t &lo) {
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(hi) : "f"(__uint_as_float(x)));
    float r = __uint_as_float(x) - __uint_as_float(hi);
    if (!(fabsf(r) < INFINITY)) r = 0.f;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(lo) : "f"(r));
}
// 3xTF32's end of a k-step (both kernels): its group retired, its buffer freed (a warp's arrival on
// empty_bar), its accumulator added into the sums, rounded to nearest
template <int MT, int BN>
__device__ __forceinline__ void cb_wg_x3_retire(float (&sum)[MT][BN / 2], const float (&acc)[MT][BN / 2], uint32_t empty_bar, int lane) {
    cb_wg_wait<0>();
    if (lane == 0) cb_wg_bar_arrive(empty_bar);
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int q = 0; q < BN / 2; q++) sum[i][q] += acc[i][q];
}
#endif

template <int WM, int BN, int STAGES, bool COOP, bool F32, bool X3 = false>
__global__ void __launch_bounds__(384, 1) cb_wgmma_tma_kernel(cb_wg_args a, const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb) {
#ifdef CB_WG_SM90A
    static_assert(!X3 || F32, "3xTF32 takes fp32 operands");
    constexpr int MT = WM / 64, BM = COOP ? 2 * WM : WM, A_BYTES = BM * 128, STAGE = A_BYTES + BN * 128;
    constexpr int SLOT = X3 ? 2 * STAGE : STAGE; // X3: the stage's lo parts beside it
    constexpr int CH = F32 ? 32 : 64;            // channels of a k-step: 128 bytes
    extern __shared__ unsigned char cb_wg_raw[];
    const uint32_t base = (cb_wg_smem(cb_wg_raw) + 1023u) & ~1023u;
    const uint32_t epi = base + STAGES * SLOT, full = epi + 8 * 2048, empty = full + 8 * STAGES, done = empty + 8 * STAGES;
    const uint32_t ready = done + 16; // X3: the splitters -> the consumers
    const int tid = threadIdx.x, wg = tid >> 7;
    const int ntn = (a.k + BN - 1) / BN, ntiles = (a.m + BM - 1) / BM * ntn, nk = a.nk;
    if (tid == 0) {
        for (int i = 0; i < STAGES; i++) cb_wg_bar_init(full + 8 * i, 1), cb_wg_bar_init(empty + 8 * i, COOP ? 8 : 4);
        if constexpr (X3)
            for (int i = 0; i < STAGES; i++) cb_wg_bar_init(ready + 8 * i, 3);
        cb_wg_bar_init(done, 4), cb_wg_bar_init(done + 8, 4);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); // the inits, seen by the copies
    }
    __syncthreads();

    if constexpr (X3)
        if (wg == 0 && tid >= 32) { // the splitters, 96 threads, every stage of the block in order
            int it = 0;
            for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x)
                for (int t = 0; t < nk; t++, it++) {
                    const int slot = it % STAGES;
                    cb_wg_bar_wait(full + 8 * slot, (it / STAGES) & 1);
                    const uint32_t s0 = base + slot * SLOT;
#pragma unroll 4
                    for (int q = tid - 32; q < STAGE / 16; q += 96) {
                        const uint4 v = cb_wg_ld128(s0 + q * 16);
                        uint4 hi, lo;
                        cb_wg_split_tf32(v.x, hi.x, lo.x), cb_wg_split_tf32(v.y, hi.y, lo.y);
                        cb_wg_split_tf32(v.z, hi.z, lo.z), cb_wg_split_tf32(v.w, hi.w, lo.w);
                        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(s0 + q * 16), "r"(hi.x), "r"(hi.y), "r"(hi.z), "r"(hi.w) : "memory");
                        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(s0 + STAGE + q * 16), "r"(lo.x), "r"(lo.y), "r"(lo.z), "r"(lo.w)
                                     : "memory");
                    }
                    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // the writes, seen by wgmma
                    __syncwarp();
                    if ((tid & 31) == 0) cb_wg_bar_arrive(ready + 8 * slot);
                }
            return;
        }
    if (wg == 0) { // the producer: its registers given over to the consumers, one thread issuing
        if constexpr (!X3) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid != 0) return;
        asm volatile("prefetch.tensormap [%0];\nprefetch.tensormap [%1];\n" ::"l"((uint64_t)&ta), "l"((uint64_t)&tb) : "memory");
        const int pq = a.p * a.q;
        int it = 0;
        for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
            const int m0 = (tile / ntn) * BM, n0 = (tile % ntn) * BN;
            const int nn = cb_div(a.d_pq, m0), o = m0 - nn * pq, oh = cb_div(a.d_q, o), ow = o - oh * a.q;
            const int h0 = oh * a.sh - a.pt, w0 = ow * a.sw - a.pl;
            int lr = 0, ls = 0, lc = 0;
            for (int t = 0; t < nk; t++, it++) {
                const int slot = it % STAGES;
                if (it >= STAGES) cb_wg_bar_wait(empty + 8 * slot, ((it / STAGES) & 1) ^ 1);
                const uint32_t fb = full + 8 * slot, ad = base + slot * SLOT;
                cb_wg_bar_expect(fb, STAGE);
                cb_wg_tma_im2col(ad, &ta, lc, w0, h0, nn, fb, (uint16_t)ls, (uint16_t)lr);
                cb_wg_tma_2d(ad + A_BYTES, &tb, t * CH, n0, fb);
                lc += CH;
                if (lc == a.c) {
                    lc = 0;
                    if (++ls == a.s) ls = 0, lr++;
                }
            }
        }
        return;
    }

    // a consumer, c = 0 or 1: COOP, rows WM c of every tile; else tiles j = c, c + 2, ... of the
    // block (it counts every step of the block)
    if constexpr (!X3) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory"); // 128 x 40 + 256 x 232 <= 64K
    const int c = wg - 1, lane = tid & 31, wv = (tid >> 5) & 3, row_off = COOP ? c * WM : 0;
    const uint32_t ep = epi + ((tid >> 5) - 4) * 2048;
    float acc[MT][BN / 2];
    float sum[X3 ? MT : 1][X3 ? BN / 2 : 1]; // X3: the tile's sums, each k-step's accumulator added in
    int it = 0;
    for (int tile = blockIdx.x, j = 0; tile < ntiles; tile += gridDim.x, j++) {
        if (!COOP && (j & 1) != c) {
            it += nk;
            continue;
        }
        // the multiplies in tile order: tile j's start once tile j - 1's (the other consumer's) are
        // issued and retired (done[1 - c]'s phase j / 2 for c = 1, j / 2 - 1 for c = 0); so each
        // full barrier waited on is at most one phase from the step's, as a wait on parity needs
        if (!COOP && j > 0) cb_wg_bar_wait(done + 8 * (1 - c), ((j >> 1) - (c == 0)) & 1);
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int q = 0; q < BN / 2; q++) {
                acc[i][q] = 0.f;
                if constexpr (X3) sum[i][q] = 0.f;
            }
        for (int t = 0; t < nk; t++, it++) {
            const int slot = it % STAGES;
            cb_wg_bar_wait((X3 ? ready : full) + 8 * slot, (it / STAGES) & 1);
            cb_wg_fence();
            const uint32_t as = base + slot * SLOT, bs = as + A_BYTES;
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int i = 0; i < MT; i++) {
                    const uint32_t ao = (row_off / 64 + i) * 8192 + kk * 32;
                    const uint64_t da = cb_wg_desc(as + ao), db = cb_wg_desc(bs + kk * 32);
                    if constexpr (X3) { // the small terms first, the step's first product into a fresh accumulator
                        cb_wgmma_tf32<BN>(acc[i], cb_wg_desc(as + STAGE + ao), db, kk > 0);
                        cb_wgmma_tf32<BN>(acc[i], da, cb_wg_desc(bs + STAGE + kk * 32));
                    }
                    if constexpr (F32) cb_wgmma_tf32<BN>(acc[i], da, db);
                    else cb_wgmma<BN>(acc[i], da, db);
                }
            cb_wg_commit();
            if constexpr (X3) {
                cb_wg_x3_retire<MT, BN>(sum, acc, empty + 8 * slot, lane);
                continue;
            }
            cb_wg_wait<1>();
            if (t > 0 && lane == 0) cb_wg_bar_arrive(empty + 8 * ((it - 1) % STAGES));
        }
        if constexpr (!X3) {
            cb_wg_wait<0>();
            if (lane == 0) cb_wg_bar_arrive(empty + 8 * ((it - 1) % STAGES));
        }
        if (lane == 0 && !COOP) cb_wg_bar_arrive(done + 8 * c);
        if constexpr (X3) cb_wg_store_f32<MT, BN>(sum, a, ep, (tile / ntn) * BM + row_off, (tile % ntn) * BN, lane, wv);
        else if constexpr (F32) cb_wg_store_f32<MT, BN>(acc, a, ep, (tile / ntn) * BM + row_off, (tile % ntn) * BN, lane, wv);
        else cb_wg_store_bf16<MT, BN>(acc, a, ep, (tile / ntn) * BM + row_off, (tile % ntn) * BN, lane, wv);
    }
#else
    __trap();
#endif
}

// (dw) wT (C, R, S, K) bf16 (O float: fp32) = w flipped in r and s: wT[c, R-1-r, S-1-s, k] = w[k, c, r, s]
// for w KCRS (KRSC: (K, R, S, C)), the filter of the stride-1 backward data as a forward
__device__ __forceinline__ void cb_wg_put(__nv_bfloat16 *o, float v) { *o = __float2bfloat16_rn(v); }
__device__ __forceinline__ void cb_wg_put(float *o, float v) { *o = v; }
template <bool KRSC, class T, class O>
__global__ void cb_wg_flip_kernel(int K, int C, int R, int S, const T *__restrict__ w, O *__restrict__ wt) {
    long total = (long)K * C * R * S;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        int k = (int)(i % K);
        long t = i / K;
        int s = (int)(t % S), r = (int)(t / S % R), c = (int)(t / ((long)S * R));
        int rs = R - 1 - r, ss = S - 1 - s;
        float v = KRSC ? (float)w[(((long)k * R + rs) * S + ss) * C + c] : (float)w[(((long)k * C + c) * R + rs) * S + ss];
        cb_wg_put(wt + i, v);
    }
}

// ---- host side --------------------------------------------------------------------------------

// does the current GPU run the sm_90a code (compute capability 9.0 exactly)?
static inline bool cb_wg_device_ok() {
    int d = 0, maj = 0, min = 0;
    if (cudaGetDevice(&d) != cudaSuccess || cudaDeviceGetAttribute(&maj, cudaDevAttrComputeCapabilityMajor, d) != cudaSuccess ||
        cudaDeviceGetAttribute(&min, cudaDevAttrComputeCapabilityMinor, d) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return maj == 9 && min == 0;
}

// the current GPU's SMs (132 if it cannot say)
static inline int cb_wg_sms() {
    int sms = 132, d = 0;
    if (cudaGetDevice(&d) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d) != cudaSuccess) {
        cudaGetLastError();
        sms = 132;
    }
    return sms;
}

// the shapes the kernel computes (besides the GPU): groups 1, no dilation, C a multiple of 64
// (a k-step is one tap's 64 channels; f32: 32 channels, the same 128 bytes), K of 8 (whole 16-byte
// output chunks), 32-bit offsets
static inline bool cb_wg_shape_ok(const cb_conv_params *p, bool f32 = false) {
    const long lim = 1L << 31;
    return p->groups == 1 && p->dil_h <= 1 && p->dil_w <= 1 && p->c % (f32 ? 32 : 64) == 0 && p->k % 8 == 0 && p->k > 0 &&
           (long)p->n * p->h * p->w * p->c < lim && (long)p->n * p->p * p->q * p->k < lim && (long)p->k * p->r * p->s * p->c < lim &&
           ((long)p->n * p->p * p->q / 128 + 1) * (p->k / 64 + 1) < lim; // blocks of the smallest tile
}

static inline cb_wg_args cb_wg_args_make(int n, int h, int w, int c, int k, int r, int s, int p, int q, int sh, int sw, int pt, int pl) {
    cb_wg_args a = {};
    a.h = h, a.w_ = w, a.c = c, a.k = k, a.r = r, a.s = s, a.p = p, a.q = q, a.sh = sh, a.sw = sw, a.pt = pt, a.pl = pl;
    a.m = n * p * q, a.nk = r * s * c / 64;
    a.d_pq = cb_divmod_make(p * q), a.d_q = cb_divmod_make(q);
    return a;
}
// the forward of p: x (N, H, W, C), w (K, R, S, C) -> y (N, P, Q, K)
static inline cb_wg_args cb_wg_args_fwd(const cb_conv_params *p) {
    return cb_wg_args_make(p->n, p->h, p->w, p->c, p->k, p->r, p->s, p->p, p->q, p->stride_h, p->stride_w, p->pad_top, p->pad_left);
}
// the stride-1 backward data of p as a forward: dy (N, P, Q, K), wT (C, R, S, K) -> dx (N, H, W, C)
static inline cb_wg_args cb_wg_args_bwd_data(const cb_conv_params *p) {
    return cb_wg_args_make(p->n, p->p, p->q, p->k, p->c, p->r, p->s, p->h, p->w, 1, 1, p->r - 1 - p->pad_top, p->s - 1 - p->pad_left);
}
// a on fp32 tensors with tf32 products (the TMA tiles; the input's channels a multiple of 32)
static inline cb_wg_args cb_wg_args_tf32(cb_wg_args a) {
    a.f32 = 1, a.nk = a.r * a.s * a.c / 32;
    return a;
}
// a on fp32 tensors with fp32-accurate products: each operand split into a tf32 high part and a tf32
// remainder, hi*hi + hi*lo + lo*hi (3xTF32; the lo*lo term, below 2^-22 of the product, left out)
static inline cb_wg_args cb_wg_args_x3(cb_wg_args a) {
    a = cb_wg_args_tf32(a);
    a.x3 = 1;
    return a;
}
// whether the padding of a fits the im2col map's pixel box offsets ([-128, 127] for a rank-4 map)
static inline bool cb_wg_pads_fit(const cb_wg_args &a) {
    const int pb = (a.p - 1) * a.sh + a.r - a.h - a.pt, pr = (a.q - 1) * a.sw + a.s - a.w_ - a.pl; // the trailing pads in use
    const int v[4] = {-a.pl, -a.pt, pr - (a.s - 1), pb - (a.r - 1)};
    for (int i = 0; i < 4; i++)
        if (v[i] < -128 || v[i] > 127) return false;
    return true;
}

// tiles: 0 = picked from the shape; cb_wgmma_conv_kernel's 1 = 128x128, 2 = 256x128, 3 = 256x64,
// 4 = 128x256, 5 = 128x64; cb_wgmma_tma_kernel's (bf16 NHWC output only) 6 = 128x128 and 9 = 128x64
// a consumer in turn, 7 = 128x256, 8 = 256x128 and 10 = 256x64 both consumers on every tile
enum { CB_WG_TMA0 = 6, CB_WG_TILES = 11 };
static inline void cb_wg_tile_bm_bn(int t, int *bm, int *bn) {
    static const int BM[CB_WG_TILES] = {0, 128, 256, 256, 128, 128, 128, 128, 256, 128, 256}, BN[CB_WG_TILES] = {0, 128, 128, 64, 256, 64, 128, 256, 128, 64, 64};
    *bm = BM[t], *bn = BN[t];
}
static inline void cb_wg_tile_dims(int t, int *mt, int *bn) {
    int bm;
    cb_wg_tile_bm_bn(t, &bm, bn);
    *mt = bm / 128;
}
static inline long cb_wg_blocks(const cb_wg_args &a, int t) {
    int bm, bn;
    cb_wg_tile_bm_bn(t, &bm, &bn);
    return (long)((a.m + bm - 1) / bm) * ((a.k + bn - 1) / bn);
}
// the tile of least estimated time among tiles [t0, t1): waves of blocks over the SMs, times a
// block's outputs over the tile's rate; BN 64 tiles alone where K <= 64, BN 256 only where K is a
// multiple of 256. cb_wgmma_conv_kernel's rates are relative to 128x256 (from the lab's ResNet-50 /
// VGG-A timings on the H200, 2026-11-25). (Until the staged store 128x256 also needed K = 256 or
// R*S*C >= 2048: wide 1x1 layers ran slower on it, for the fragments' own stores. With the staged
// store the 11 layers that rule kept off it run 0.97x on it, in each of three calls:
// docs/results/2026-11-28-epistage.md.) The TMA tiles' rates are relative to 128x128 a consumer in
// turn: the two 256-row or -column tiles read fewer operand bytes per output, the 64-column ones more
// (docs/results/2026-11-28-wgtma.md).
static inline int cb_wg_pick_among(const cb_wg_args &a, int t0, int t1) {
    static const double rate[CB_WG_TILES] = {0, 0.85, 0.93, 0.80, 1.0, 0.6, 1.0, 1.04, 1.04, 0.9, 0.93};
    int sms = cb_wg_sms(), best = -1;
    double best_cost = 1e300;
    for (int t = t0; t < t1; t++) {
        int bm, bn;
        cb_wg_tile_bm_bn(t, &bm, &bn);
        if ((a.k <= 64) != (bn == 64)) continue;
        if (bn == 256 && a.k % 256) continue;
        double cost = (double)((cb_wg_blocks(a, t) + sms - 1) / sms) * ((double)bm * bn) / rate[t];
        if (best < 0 || cost < best_cost * 0.999) best_cost = cost, best = t;
    }
    return best;
}
static inline int cb_wg_pick_tile(const cb_wg_args &a) {
    int t = cb_wg_pick_among(a, 1, CB_WG_TMA0);
    return t > 0 ? t : a.k <= 64 ? 3 : 1;
}

// Blocks of a launch over `tiles` output tiles (or backward-filter units): one per SM, each running
// its share in one pipeline; !persist, or cb_wg_persist = 0 (the lab's comparison), gives every tile
// its own block, as before 2026-11-28. cb_wg_max_blocks > 0 caps the blocks (tests: a few blocks run
// many tiles each, so every tile boundary of the pipeline is crossed on small shapes too); the
// backends set it at start from $CONVBENCH_WG_BLOCKS (cb_cuda_wg_set_blocks), not per launch.
static int cb_wg_persist = 1;
// 1: bf16 NHWC outputs stored from the accumulator fragments directly, as before 2026-11-28's staged
// epilogue (the lab's comparison)
static int cb_wg_direct = 0;
static long cb_wg_max_blocks = 0;
static inline long cb_wg_grid(long tiles, bool persist = true) {
    long cap = persist && cb_wg_persist ? cb_wg_sms() : tiles, most = __atomic_load_n(&cb_wg_max_blocks, __ATOMIC_RELAXED);
    if (most > 0) cap = most;
    return tiles < cap ? tiles : cap;
}

// shared memory: STAGES buffers (at most 6, within 220 KB with the epilogue's 16 KB), 1 KB for alignment
template <int MT, int BN, bool OUT_NCHW> static void cb_wg_launch_t(const cb_wg_args &a, cudaStream_t st) {
    constexpr int EPI = OUT_NCHW ? 0 : 8 * 2048;
    constexpr int STAGE = 128 * MT * 128 + BN * 128, FIT = (220 * 1024 - EPI) / STAGE, STAGES = FIT > 6 ? 6 : FIT;
    constexpr int BYTES = STAGES * STAGE + EPI + 1024;
    static unsigned long long attr_devs = 0;
    if (cb_first_on_device(&attr_devs))
        cudaFuncSetAttribute(cb_wgmma_conv_kernel<MT, BN, STAGES, OUT_NCHW>, cudaFuncAttributeMaxDynamicSharedMemorySize, BYTES);
    long blocks = (long)((a.m + 128 * MT - 1) / (128 * MT)) * ((a.k + BN - 1) / BN);
    cb_wg_args b = a;
    b.direct = cb_wg_direct;
    cb_wgmma_conv_kernel<MT, BN, STAGES, OUT_NCHW><<<(unsigned)cb_wg_grid(blocks), 256, BYTES, st>>>(b);
}

// ---- the TMA tiles' launch --------------------------------------------------------------------

// 1 (the default): bf16 NHWC outputs on the TMA tiles (6-10) and the KRSC backward filter on its own
// (6-8); 0: the cp.async tiles alone, as before 2026-11-28 (evening) (the lab's comparison; $CONVBENCH_WG_TMA=off,
// cb_cuda_wg_set_tma). fp32 operands (tf32) have the TMA kernels only and take them either way.
static int cb_wg_tma = 1;

typedef CUresult (*cb_wg_enc_im2col_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *, const int *,
                                        const int *, cuuint32_t, cuuint32_t, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                        CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
typedef CUresult (*cb_wg_enc_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *,
                                       const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                       CUtensorMapFloatOOBfill);
struct cb_wg_encoders {
    cb_wg_enc_im2col_fn im2col;
    cb_wg_enc_tiled_fn tiled;
};
static inline cb_wg_encoders cb_wg_encoders_load() {
    cb_wg_encoders e = {NULL, NULL};
    void *f1 = NULL, *f2 = NULL;
    cudaDriverEntryPointQueryResult q1, q2;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", &f1, 12000, cudaEnableDefault, &q1) == cudaSuccess &&
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f2, 12000, cudaEnableDefault, &q2) == cudaSuccess && f1 && f2)
        e.im2col = (cb_wg_enc_im2col_fn)f1, e.tiled = (cb_wg_enc_tiled_fn)f2;
    cudaGetLastError();
    return e;
}

// The im2col map over a's input x (N, H, W, C): columns of `pixels` pixels of 64 channels, its pixel
// box the top-left taps of the P x Q outputs ([-pl, (Q-1) sw - pl] in w, the same in h) traversed by
// the strides; bf16, 128-byte swizzle, zeros out of bounds. NULL, or why not (the driver lacks the
// encoders; a pad beyond the rank-4 box's [-128, 127]; the encoder refused).
static inline const char *cb_wg_im2col_map(const cb_wg_args &a, int pixels, CUtensorMap *m) {
    static const cb_wg_encoders enc = cb_wg_encoders_load();
    if (!enc.im2col) return "the driver has no tensor map encoders";
    if (!cb_wg_pads_fit(a)) return "a pad beyond the tensor map's pixel box range";
    const int n = a.m / (a.p * a.q), esz = a.f32 ? 4 : 2;
    const int pb = (a.p - 1) * a.sh + a.r - a.h - a.pt, pr = (a.q - 1) * a.sw + a.s - a.w_ - a.pl; // the trailing pads in use
    int lo[2] = {-a.pl, -a.pt}, up[2] = {pr - (a.s - 1), pb - (a.r - 1)};
    cuuint64_t dim[4] = {(cuuint64_t)a.c, (cuuint64_t)a.w_, (cuuint64_t)a.h, (cuuint64_t)n};
    cuuint64_t str[3] = {(cuuint64_t)a.c * esz, (cuuint64_t)a.w_ * a.c * esz, (cuuint64_t)a.h * a.w_ * a.c * esz};
    cuuint32_t es[4] = {1, (cuuint32_t)a.sw, (cuuint32_t)a.sh, 1};
    if (enc.im2col(m, a.f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, (void *)a.x, dim, str, lo, up, 128 / esz,
                   (cuuint32_t)pixels, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                   CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return "the im2col tensor map was refused";
    return NULL;
}
// The tiled map over a (rows, cols) bf16 (f32: fp32) matrix at p: boxes of 128 bytes of columns x
// box_rows rows, 128-byte swizzle, zeros out of bounds. NULL, or why not.
static inline const char *cb_wg_matrix_map(const void *p, long rows, long cols, int box_rows, CUtensorMap *m, const char *what, bool f32 = false) {
    static const cb_wg_encoders enc = cb_wg_encoders_load();
    if (!enc.tiled) return "the driver has no tensor map encoders";
    const int esz = f32 ? 4 : 2;
    cuuint64_t d[2] = {(cuuint64_t)cols, (cuuint64_t)rows}, str[1] = {(cuuint64_t)cols * esz};
    cuuint32_t box[2] = {(cuuint32_t)(128 / esz), (cuuint32_t)box_rows}, e2[2] = {1, 1};
    if (enc.tiled(m, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)p, d, str, box, e2, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return what;
    return NULL;
}
// the two maps of a launch with a BM x BN tile: ta im2col over x, BM pixels a column; tb over w as a
// (K, R*S*C) matrix, 64 x BN boxes
static inline const char *cb_wg_tma_maps(const cb_wg_args &a, int bm, int bn, CUtensorMap *ta, CUtensorMap *tb) {
    const char *why = cb_wg_im2col_map(a, bm, ta);
    return why ? why : cb_wg_matrix_map(a.w, a.k, (long)a.nk * (a.f32 ? 32 : 64), bn, tb, "the filter's tensor map was refused", a.f32);
}

// the maps of launch a on tile t, encoded once and kept (a step calls every layer with the same
// tensors; the encoding is host time the GPU would wait for): per thread (a device each), the last
// 64 launches' maps, the oldest replaced
struct cb_wg_map_entry {
    const void *x, *w;
    int h, w_, c, k, r, s, p, q, sh, sw, pt, pl, m, tile, f32;
    CUtensorMap ta, tb;
};
static inline const char *cb_wg_maps_for(const cb_wg_args &a, int t, const CUtensorMap **ta, const CUtensorMap **tb) {
    enum { N = 64 };
    static thread_local cb_wg_map_entry cache[N];
    static thread_local int used = 0, next = 0;
    for (int i = 0; i < used; i++) {
        const cb_wg_map_entry &e = cache[i];
        if (e.x == a.x && e.w == a.w && e.h == a.h && e.w_ == a.w_ && e.c == a.c && e.k == a.k && e.r == a.r && e.s == a.s && e.p == a.p &&
            e.q == a.q && e.sh == a.sh && e.sw == a.sw && e.pt == a.pt && e.pl == a.pl && e.m == a.m && e.tile == t && e.f32 == a.f32) {
            *ta = &e.ta, *tb = &e.tb;
            return NULL;
        }
    }
    cb_wg_map_entry &e = cache[next];
    int bm, bn;
    cb_wg_tile_bm_bn(t, &bm, &bn);
    const char *why = cb_wg_tma_maps(a, bm, bn, &e.ta, &e.tb);
    if (why) return why;
    e.x = a.x, e.w = a.w, e.h = a.h, e.w_ = a.w_, e.c = a.c, e.k = a.k, e.r = a.r, e.s = a.s, e.p = a.p, e.q = a.q, e.sh = a.sh, e.sw = a.sw;
    e.pt = a.pt, e.pl = a.pl, e.m = a.m, e.tile = t, e.f32 = a.f32;
    next = (next + 1) % N, used = used < N ? used + 1 : N;
    *ta = &e.ta, *tb = &e.tb;
    return NULL;
}

// shared memory: STAGES buffers (at most 6, within 220 KB with the epilogue's 16 KB), the barriers,
// 1 KB for alignment
// (X3: a stage is twice its bytes, with its lo parts, and has a ready barrier more)
template <int WM, int BN, bool COOP, bool F32, bool X3 = false>
static void cb_wg_tma_launch_t(const cb_wg_args &a, const CUtensorMap &ta, const CUtensorMap &tb, cudaStream_t st) {
    constexpr int BM = COOP ? 2 * WM : WM, SLOT = (BM * 128 + BN * 128) * (X3 ? 2 : 1), FIT = (220 * 1024 - 8 * 2048) / SLOT, STAGES = FIT > 6 ? 6 : FIT;
    constexpr int BYTES = STAGES * SLOT + 8 * 2048 + (X3 ? 24 : 16) * STAGES + 16 + 1024;
    static unsigned long long attr_devs = 0;
    if (cb_first_on_device(&attr_devs))
        cudaFuncSetAttribute(cb_wgmma_tma_kernel<WM, BN, STAGES, COOP, F32, X3>, cudaFuncAttributeMaxDynamicSharedMemorySize, BYTES);
    long tiles = (long)((a.m + BM - 1) / BM) * ((a.k + BN - 1) / BN);
    cb_wgmma_tma_kernel<WM, BN, STAGES, COOP, F32, X3><<<(unsigned)cb_wg_grid(tiles), 384, BYTES, st>>>(a, ta, tb);
}
// 3xTF32 on 128 x 128 and 128 x 64 tiles (their maps are tiles 6's and 9's), both consumers on every
// tile with 64 rows each (3 and 4 stages of twice the bytes): 7 and 8 run as 6, 10 as 9
static inline int cb_wg_x3_tile(int t) { return t == 7 || t == 8 ? 6 : t == 10 ? 9 : t; }
template <bool F32> static void cb_wg_tma_tile(const cb_wg_args &a, int t, const CUtensorMap &ta, const CUtensorMap &tb, cudaStream_t st) {
    if (F32 && a.x3) {
        if (cb_wg_x3_tile(t) == 9) cb_wg_tma_launch_t<64, 64, true, true, true>(a, ta, tb, st);
        else cb_wg_tma_launch_t<64, 128, true, true, true>(a, ta, tb, st);
        return;
    }
    switch (t) {
    case 6: cb_wg_tma_launch_t<128, 128, false, F32>(a, ta, tb, st); break;
    case 7: cb_wg_tma_launch_t<64, 256, true, F32>(a, ta, tb, st); break;
    case 8: cb_wg_tma_launch_t<128, 128, true, F32>(a, ta, tb, st); break;
    case 9: cb_wg_tma_launch_t<128, 64, false, F32>(a, ta, tb, st); break;
    default: cb_wg_tma_launch_t<128, 64, true, F32>(a, ta, tb, st); break;
    }
}
// false where the maps are refused (said once on stderr): the caller runs cb_wgmma_conv_kernel's tiles
static inline bool cb_wg_tma_launch(const cb_wg_args &a, int t, cudaStream_t st) {
    const CUtensorMap *ta, *tb;
    const char *why = cb_wg_maps_for(a, t, &ta, &tb);
    if (why) {
        static int said = 0;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            fprintf(stderr, "convbench: note: own wgmma kernel: %s; its layers run the kernel without TMA\n", why);
        return false;
    }
    if (a.f32) cb_wg_tma_tile<true>(a, t, *ta, *tb, st);
    else cb_wg_tma_tile<false>(a, t, *ta, *tb, st);
    return true;
}

// one launch of a with tile t (0: picked; the TMA tiles for bf16 NHWC output unless cb_wg_tma is 0)
template <bool OUT_NCHW> static void cb_wg_launch(const cb_wg_args &a, int t, cudaStream_t st = 0) {
    if (a.m <= 0 || a.k <= 0) return;
    if (a.f32) { // fp32 NHWC in and out: the TMA tiles alone; refused maps (said on stderr) leave y NaN, never silently stale
        if (t < CB_WG_TMA0) t = cb_wg_pick_among(a, CB_WG_TMA0, CB_WG_TILES);
        if (a.x3) t = cb_wg_x3_tile(t);
        if (!cb_wg_tma_launch(a, t, st)) cudaMemsetAsync(a.y, 0xff, (size_t)a.m * a.k * 4, st);
        return;
    }
    if (t == 0 && !OUT_NCHW && cb_wg_tma) t = cb_wg_pick_among(a, CB_WG_TMA0, CB_WG_TILES);
    if (t >= CB_WG_TMA0) {
        if (!OUT_NCHW && cb_wg_tma_launch(a, t, st)) return;
        t = 0;
    }
    switch (t ? t : cb_wg_pick_tile(a)) {
    case 2: cb_wg_launch_t<2, 128, OUT_NCHW>(a, st); break;
    case 3: cb_wg_launch_t<2, 64, OUT_NCHW>(a, st); break;
    case 4: cb_wg_launch_t<1, 256, OUT_NCHW>(a, st); break;
    case 5: cb_wg_launch_t<1, 64, OUT_NCHW>(a, st); break;
    default: cb_wg_launch_t<1, 128, OUT_NCHW>(a, st); break;
    }
}

// wT (C, R, S, K) bf16 <- w, fp32 KCRS or (KRSC) bf16 (K, R, S, C)
static inline void cb_wg_flip(const cb_conv_params *p, const float *w, __nv_bfloat16 *wt, cudaStream_t st = 0) {
    cb_wg_flip_kernel<false><<<1024, 256, 0, st>>>(p->k, p->c, p->r, p->s, w, wt);
}
static inline void cb_wg_flip(const cb_conv_params *p, const __nv_bfloat16 *w, __nv_bfloat16 *wt, cudaStream_t st = 0) {
    cb_wg_flip_kernel<true><<<1024, 256, 0, st>>>(p->k, p->c, p->r, p->s, w, wt);
}
// wT (C, R, S, K) fp32 <- w fp32 (K, R, S, C) (krsc) or KCRS
static inline void cb_wg_flip_f32(const cb_conv_params *p, const float *w, float *wt, bool krsc, cudaStream_t st = 0) {
    if (krsc) cb_wg_flip_kernel<true><<<1024, 256, 0, st>>>(p->k, p->c, p->r, p->s, w, wt);
    else cb_wg_flip_kernel<false><<<1024, 256, 0, st>>>(p->k, p->c, p->r, p->s, w, wt);
}

// ---- backward filter: dw[k, (r, s, c)] = sum over pixels m = (n, oh, ow) of dy[m, k] x[n, ih, iw, c] ----
//
// M = K channels, N = R*S*C, the sum over N*P*Q pixels in k-steps of 64 pixels; both operands are
// MN-major (dy rows hold K contiguous channels, the gathered x rows C contiguous channels), so the
// tiles are panels of 64 pixels x 64 channels, one 128-byte row per pixel under the 128-byte
// swizzle: A has BM/64 panels of channels of dy, B BN/64 panels of (tap, 64 channels) of x. The
// descriptors' leading byte offset is then the stride between panels (8192 bytes), the stride
// byte offset the 8 pixel rows of a swizzle pattern (1024); a 16-deep slice is 16 rows further.
// The pixels are split (cb_wg_wgrad_split); each (tile, split) unit adds its partial sums into a
// zeroed fp32 dw with atomics: KCRS (the table's) or KRSC.
struct cb_wg_wgrad_args {
    const void *x;           // (N, H, W, C) bf16 (fp32 with f32)
    const void *dy;          // (N, P, Q, K) bf16 (fp32 with f32)
    float *dw;               // (K, C, R, S) with KCRS, else (K, R, S, C); zeroed
    int h, w_, c, k, r, s, p, q, sh, sw, pt, pl;
    int npq, rsc, chunk;     // pixels, columns, pixels per split (a multiple of 64)
    int scalar;              // KRSC: one float per atomic, as before stop 44, 2026-11-28 (the lab's comparison; cb_wg_red_scalar)
    int f32;                 // fp32 operands, tf32 products: cb_wgmma_wgrad_tf32_kernel (KRSC)
    int x3;                  // with f32: fp32-accurate products (3xTF32, 64 filters a tile)
    cb_divmod d_pq, d_q, d_c, d_s;
};

#ifdef CB_WG_SM90A
// dst[0..3] += v, one 16-byte vector reduction in the L2 (sm_90; dst 16-byte aligned)
__device__ __forceinline__ void cb_wg_red4(float *dst, float v0, float v1, float v2, float v3) {
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "f"(v0), "f"(v1), "f"(v2), "f"(v3) : "memory");
}
#endif

template <int MT, int BN, int STAGES, bool KCRS>
__global__ void __launch_bounds__(256, 1) cb_wgmma_wgrad_kernel(cb_wg_wgrad_args a) {
#ifdef CB_WG_SM90A
    constexpr int BM = 128 * MT, A_BYTES = BM * 128, STAGE = A_BYTES + BN * 128, PA = BM / 64, PB = BN / 64;
    constexpr int D = STAGES - 2;
    extern __shared__ unsigned char cb_wg_raw[];
    const uint32_t base = (cb_wg_smem(cb_wg_raw) + 1023u) & ~1023u;
    const int tid = threadIdx.x, wg = tid >> 7, ch = tid & 7, row0 = tid >> 3;
    const int ntn = (a.rsc + BN - 1) / BN, ntiles = (a.k + BM - 1) / BM * ntn, nsplit = (a.npq + a.chunk - 1) / a.chunk;
    const int nunits = ntiles * nsplit; // unit u: tile u % ntiles, pixels of split u / ntiles
    const int H = a.h, W = a.w_, C = a.c;
    const uint32_t sw_off = row0 * 128 + ((ch ^ (row0 & 7)) << 4);
    auto steps = [&](int u) { return (min(a.npq, (u / ntiles + 1) * a.chunk) - (u / ntiles) * a.chunk + 63) / 64; };

    // The block runs units blockIdx.x, + gridDim.x, ... as one stream of k-steps (as the forward
    // kernel does its tiles): the load cursor is unit lu, its step lt, its first pixel lpb and end
    // lpe, its channels lm0 and the taps and first channels of its B panels
    int lu = blockIdx.x, lt = 0, lnk = 0, lpb = 0, lpe = 0, lm0 = 0;
    int boff[PB], br[PB], bs[PB];
    auto unit = [&]() {
        const int tile = lu % ntiles;
        lm0 = (tile / ntn) * BM, lpb = (lu / ntiles) * a.chunk, lpe = min(a.npq, lpb + a.chunk), lnk = steps(lu);
#pragma unroll
        for (int b = 0; b < PB; b++) {
            int col = (tile % ntn) * BN + 64 * b;
            if (col < a.rsc) {
                int tap = cb_div(a.d_c, col), c0 = col - tap * C, r = cb_div(a.d_s, tap);
                br[b] = r, bs[b] = tap - r * a.s, boff[b] = (br[b] * W + bs[b]) * C + c0 + ch * 8;
            } else {
                br[b] = -(1 << 28), bs[b] = 0, boff[b] = 0;
            }
        }
    };
    if (lu < nunits) unit();

    auto load = [&](int slot) {
        if (lu >= nunits) return;
        const uint32_t ad = base + slot * STAGE + sw_off, bd = ad + A_BYTES;
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const int pix = lpb + lt * 64 + row0 + 32 * i;
            const bool pok = pix < lpe;
#pragma unroll
            for (int b = 0; b < PA; b++) {
                int kc = lm0 + 64 * b + ch * 8;
                bool ok = pok && kc < a.k;
                cb_wg_cp16(ad + b * 8192 + i * 32 * 128, ok ? (const __nv_bfloat16 *)a.dy + (long)pix * a.k + kc : a.dy, ok);
            }
            int ih0 = -(1 << 28), iw0 = 0, xoff = 0;
            if (pok) {
                int nn = cb_div(a.d_pq, pix), o = pix - nn * (a.p * a.q), oh = cb_div(a.d_q, o), ow = o - oh * a.q;
                ih0 = oh * a.sh - a.pt, iw0 = ow * a.sw - a.pl;
                xoff = ((nn * H + ih0) * W + iw0) * C;
            }
#pragma unroll
            for (int b = 0; b < PB; b++) {
                bool ok = (unsigned)(ih0 + br[b]) < (unsigned)H && (unsigned)(iw0 + bs[b]) < (unsigned)W;
                cb_wg_cp16(bd + b * 8192 + i * 32 * 128, ok ? (const __nv_bfloat16 *)a.x + xoff + boff[b] : a.x, ok);
            }
        }
        if (++lt == lnk) {
            lt = 0, lu += gridDim.x;
            if (lu < nunits) unit();
        }
    };

    float acc[MT][BN / 2];
#pragma unroll
    for (int t = 0; t < D; t++) {
        load(t);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    int cs = 0, ns = D;
    const int lane = tid & 31, wv = (tid & 127) >> 5;
    const uint64_t mn = (1ull << 62) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)(8192 >> 4) << 16);
    for (int u = blockIdx.x; u < nunits; u += gridDim.x) {
        const int nk = steps(u);
        cb_wg_mainloop<STAGES, D>(acc, nk, cs, ns, load, [&](int slot) {
            const uint32_t as = base + slot * STAGE + wg * MT * 8192, bs_ = base + slot * STAGE + A_BYTES;
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int i = 0; i < MT; i++)
                    cb_wgmma_mn<BN>(acc[i], mn | (((as + i * 8192 + kk * 2048) & 0x3FFFF) >> 4), mn | (((bs_ + kk * 2048) & 0x3FFFF) >> 4));
        });
        if (nk <= 0) continue;

        const int tile = u % ntiles, m0 = (tile / ntn) * BM, n0 = (tile % ntn) * BN;
        if (!KCRS && !a.scalar) {
            // KRSC, 4 floats an atomic: the lanes of a pair swap halves (shfl_xor 1), the even one then
            // holding columns 8 j + 2 (lane & 2) .. + 3 of row lane/4, the odd one those of row lane/4 + 8
            // (the fragment as the forward kernel's epilogue describes it); R*S*C is a multiple of 64,
            // so the 4 columns are in range together and 16-byte aligned
            const bool odd = lane & 1;
            const int col0 = n0 + 2 * (lane & 2);
#pragma unroll
            for (int i = 0; i < MT; i++) {
                const int k = m0 + wg * 64 * MT + i * 64 + wv * 16 + (lane >> 2) + (odd ? 8 : 0);
#pragma unroll
                for (int j = 0; j < BN / 8; j++) {
                    const float a0 = acc[i][4 * j], a1 = acc[i][4 * j + 1], b0 = acc[i][4 * j + 2], b1 = acc[i][4 * j + 3];
                    const float r0 = __shfl_xor_sync(0xffffffffu, odd ? a0 : b0, 1), r1 = __shfl_xor_sync(0xffffffffu, odd ? a1 : b1, 1);
                    const int col = col0 + 8 * j;
                    if (k < a.k && col < a.rsc) {
                        if (odd) cb_wg_red4(a.dw + (long)k * a.rsc + col, r0, r1, b0, b1);
                        else cb_wg_red4(a.dw + (long)k * a.rsc + col, a0, a1, r0, r1);
                    }
                }
            }
            continue;
        }
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int h2 = 0; h2 < 2; h2++) {
                const int k = m0 + wg * 64 * MT + i * 64 + wv * 16 + (lane >> 2) + 8 * h2;
                if (k >= a.k) continue;
#pragma unroll
                for (int j = 0; j < BN / 8; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int col = n0 + 8 * j + 2 * (lane & 3) + e;
                        if (col >= a.rsc) continue;
                        long idx;
                        if (KCRS) {
                            int tap = cb_div(a.d_c, col), c = col - tap * C, r = cb_div(a.d_s, tap), s = tap - r * a.s;
                            idx = (((long)k * C + c) * a.r + r) * a.s + s;
                        } else {
                            idx = (long)k * a.rsc + col;
                        }
                        atomicAdd(a.dw + idx, acc[i][4 * j + 2 * h2 + e]);
                    }
            }
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#else
    __trap();
#endif
}

#ifdef CB_WG_SM90A
// a unit's partial sums (rows m0 + 64 i + 16 wv + lane/4 (+8) of filters, columns n0 + ... of R*S*C)
// added into the KRSC dw, 4 floats an atomic: lane pairs trade halves so that each holds 4
// consecutive columns of one row
template <int MT, int BN>
__device__ __forceinline__ void cb_wg_wgrad_red(float (&acc)[MT][BN / 2], const cb_wg_wgrad_args &a, int m0, int n0, int lane, int wv) {
    const bool odd = lane & 1;
    const int col0 = n0 + 2 * (lane & 2);
#pragma unroll
    for (int i = 0; i < MT; i++) {
        const int k = m0 + i * 64 + wv * 16 + (lane >> 2) + (odd ? 8 : 0);
#pragma unroll
        for (int jj = 0; jj < BN / 8; jj++) {
            const float a0 = acc[i][4 * jj], a1 = acc[i][4 * jj + 1], b0 = acc[i][4 * jj + 2], b1 = acc[i][4 * jj + 3];
            const float r0 = __shfl_xor_sync(0xffffffffu, odd ? a0 : b0, 1), r1 = __shfl_xor_sync(0xffffffffu, odd ? a1 : b1, 1);
            const int col = col0 + 8 * jj;
            if (k < a.k && col < a.rsc) {
                if (odd) cb_wg_red4(a.dw + (long)k * a.rsc + col, r0, r1, b0, b1);
                else cb_wg_red4(a.dw + (long)k * a.rsc + col, a0, a1, r0, r1);
            }
        }
    }
}
#endif

// The backward filter fed by TMA, warp-specialized as cb_wgmma_tma_kernel (384 threads: one producer
// thread, two consumer warpgroups), over the same units as cb_wgmma_wgrad_kernel: a k-step's A panels
// (64 pixels x 64 channels of dy) by the tiled map ta over dy as an (N*P*Q, K) matrix, its B panels
// (64 pixels x 64 channels of one tap) by the im2col map tb over x, 64 pixels a column, at the
// panel's tap. Zeros past the last pixel and K come from the maps' bounds (a split's pixels are whole
// k-steps but for the last one's end, N*P*Q). !COOP: the consumers take the block's units in turn,
// so one's atomics overlap the other's multiplies; COOP: both on every unit, WM rows each. KRSC dw
// only, the atomics 16 bytes each (the KCRS and scalar paths are cb_wgmma_wgrad_kernel's).
template <int WM, int BN, int STAGES, bool COOP>
__global__ void __launch_bounds__(384, 1) cb_wgmma_wgrad_tma_kernel(cb_wg_wgrad_args a, const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb) {
#ifdef CB_WG_SM90A
    constexpr int MT = WM / 64, BM = COOP ? 2 * WM : WM, A_BYTES = BM * 128, STAGE = A_BYTES + BN * 128, PA = BM / 64, PB = BN / 64;
    extern __shared__ unsigned char cb_wg_raw[];
    const uint32_t base = (cb_wg_smem(cb_wg_raw) + 1023u) & ~1023u;
    const uint32_t full = base + STAGES * STAGE, empty = full + 8 * STAGES, done = empty + 8 * STAGES;
    const int tid = threadIdx.x, wg = tid >> 7;
    const int ntn = (a.rsc + BN - 1) / BN, ntiles = (a.k + BM - 1) / BM * ntn, nsplit = (a.npq + a.chunk - 1) / a.chunk;
    const int nunits = ntiles * nsplit; // unit u: tile u % ntiles, pixels of split u / ntiles
    auto steps = [&](int u) { return (min(a.npq, (u / ntiles + 1) * a.chunk) - (u / ntiles) * a.chunk + 63) / 64; };
    if (tid == 0) {
        for (int i = 0; i < STAGES; i++) cb_wg_bar_init(full + 8 * i, 1), cb_wg_bar_init(empty + 8 * i, COOP ? 8 : 4);
        cb_wg_bar_init(done, 4), cb_wg_bar_init(done + 8, 4);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid != 0) return;
        asm volatile("prefetch.tensormap [%0];\nprefetch.tensormap [%1];\n" ::"l"((uint64_t)&ta), "l"((uint64_t)&tb) : "memory");
        const int pq = a.p * a.q;
        int it = 0;
        for (int u = blockIdx.x; u < nunits; u += gridDim.x) {
            const int tile = u % ntiles, m0 = (tile / ntn) * BM, pb = (u / ntiles) * a.chunk, nk = steps(u);
            int br[PB], bsx[PB], bc[PB];
#pragma unroll
            for (int b = 0; b < PB; b++) { // the tap and first channel of B panel b (past R*S*C: a tap past R, all zeros)
                const int col = (tile % ntn) * BN + 64 * b, tap = cb_div(a.d_c, col), r = cb_div(a.d_s, tap);
                br[b] = r, bsx[b] = tap - r * a.s, bc[b] = col - tap * a.c;
            }
            for (int t = 0; t < nk; t++, it++) {
                const int slot = it % STAGES;
                if (it >= STAGES) cb_wg_bar_wait(empty + 8 * slot, ((it / STAGES) & 1) ^ 1);
                const uint32_t fb = full + 8 * slot, ad = base + slot * STAGE, bd = ad + A_BYTES;
                cb_wg_bar_expect(fb, STAGE);
                const int pix = pb + t * 64;
#pragma unroll
                for (int b = 0; b < PA; b++) cb_wg_tma_2d(ad + b * 8192, &ta, m0 + 64 * b, pix, fb);
                const int nn = cb_div(a.d_pq, pix), o = pix - nn * pq, oh = cb_div(a.d_q, o), ow = o - oh * a.q;
#pragma unroll
                for (int b = 0; b < PB; b++)
                    cb_wg_tma_im2col(bd + b * 8192, &tb, bc[b], ow * a.sw - a.pl, oh * a.sh - a.pt, nn, fb, (uint16_t)bsx[b], (uint16_t)br[b]);
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int c = wg - 1, lane = tid & 31, wv = (tid >> 5) & 3, row_off = COOP ? c * WM : 0;
    const uint64_t mn = (1ull << 62) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)(8192 >> 4) << 16);
    float acc[MT][BN / 2];
    int it = 0;
    for (int u = blockIdx.x, j = 0; u < nunits; u += gridDim.x, j++) {
        const int nk = steps(u);
        if (!COOP && (j & 1) != c) {
            it += nk;
            continue;
        }
        if (!COOP && j > 0) cb_wg_bar_wait(done + 8 * (1 - c), ((j >> 1) - (c == 0)) & 1);
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int q = 0; q < BN / 2; q++) acc[i][q] = 0.f;
        for (int t = 0; t < nk; t++, it++) {
            const int slot = it % STAGES;
            cb_wg_bar_wait(full + 8 * slot, (it / STAGES) & 1);
            cb_wg_fence();
            const uint32_t as = base + slot * STAGE + (row_off / 64) * 8192, bs_ = base + slot * STAGE + A_BYTES;
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int i = 0; i < MT; i++)
                    cb_wgmma_mn<BN>(acc[i], mn | (((as + i * 8192 + kk * 2048) & 0x3FFFF) >> 4), mn | (((bs_ + kk * 2048) & 0x3FFFF) >> 4));
            cb_wg_commit();
            cb_wg_wait<1>();
            if (t > 0 && lane == 0) cb_wg_bar_arrive(empty + 8 * ((it - 1) % STAGES));
        }
        cb_wg_wait<0>();
        if (lane == 0) {
            if (nk > 0) cb_wg_bar_arrive(empty + 8 * ((it - 1) % STAGES));
            if (!COOP) cb_wg_bar_arrive(done + 8 * c);
        }
        if (nk <= 0) continue;
        // KRSC, 4 floats an atomic (cb_wgmma_wgrad_kernel's epilogue)
        const int tile = u % ntiles;
        cb_wg_wgrad_red<MT, BN>(acc, a, (tile / ntn) * BM + row_off, (tile % ntn) * BN, lane, wv);
    }
#else
    __trap();
#endif
}

// The backward filter in tf32 (a.f32: fp32 x and dy, KRSC dw). wgmma's tf32 takes K-major operands
// only, and here the sum runs over pixels, which NHWC keeps apart: so each k-step (32 pixels) lands
// by TMA as MN-major panels (32 pixels x 32 channels, 128-byte rows: A's of dy by the tiled map ta,
// B's of one tap of x by the im2col map tb), and three transposer warps write it again K-major (32
// channels x 32 pixels a panel) beside it, 4 x 4 blocks through registers, 16 bytes an access (an 8-lane
// phase's blocks (q, q + c) hit 8 distinct 16-byte columns, loading and storing; two blocks in flight a
// thread, one arrival a warp). 384 threads: warp 0's
// lane 0 issues the copies (full barriers), warps 1-3 transpose (ready barriers), two consumer
// warpgroups take the units in turn and multiply from the K-major copies (empty barriers, as
// cb_wgmma_wgrad_tma_kernel's), then add into dw (cb_wg_wgrad_red). Units and splits as there, in
// steps of 32 pixels. Two rings: S2 K-major buffers (A then B) the consumers read, then S1 staging
// buffers the copies land in, so that the copies run S1 steps ahead (one ring of 3 stages of both ran
// at 96-158 TF/s in the lab, H200, 2026-11-28: too few copies in flight).
// X3 (fp32-accurate products, 3xTF32, cb_wgmma_tma_kernel's way): the transposers write each value's
// tf32 high part K-major and its tf32 remainder in a second K-major buffer beside it; the consumers
// issue three products a slice, each k-step into a fresh accumulator added into fp32 sums (64 filters
// a tile: the two sets of registers).
template <int WM, int BN, int S1, int S2, bool X3 = false>
__global__ void __launch_bounds__(384, 1) cb_wgmma_wgrad_tf32_kernel(cb_wg_wgrad_args a, const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb) {
#ifdef CB_WG_SM90A
    constexpr int MT = WM / 64, BM = WM, KB = (BM + BN) * 128, PA = BM / 32, PB = BN / 32;
    constexpr int KS = X3 ? 2 * KB : KB; // a K-major slot (X3: with the remainders)
    extern __shared__ unsigned char cb_wg_raw[];
    const uint32_t base = (cb_wg_smem(cb_wg_raw) + 1023u) & ~1023u, stage1 = base + S2 * KS;
    // full, empty1: the staging ring (copies -> transposers); ready, empty: the K-major ring (transposers -> consumers)
    const uint32_t full = stage1 + S1 * KB, empty1 = full + 8 * S1, ready = empty1 + 8 * S1, empty = ready + 8 * S2, done = empty + 8 * S2;
    const int tid = threadIdx.x, wg = tid >> 7;
    const int ntn = (a.rsc + BN - 1) / BN, ntiles = (a.k + BM - 1) / BM * ntn, nsplit = (a.npq + a.chunk - 1) / a.chunk;
    const int nunits = ntiles * nsplit; // unit u: tile u % ntiles, pixels of split u / ntiles
    auto steps = [&](int u) { return (min(a.npq, (u / ntiles + 1) * a.chunk) - (u / ntiles) * a.chunk + 31) / 32; };
    if (tid == 0) {
        for (int i = 0; i < S1; i++) cb_wg_bar_init(full + 8 * i, 1), cb_wg_bar_init(empty1 + 8 * i, 3);
        for (int i = 0; i < S2; i++) cb_wg_bar_init(ready + 8 * i, 3), cb_wg_bar_init(empty + 8 * i, 4);
        cb_wg_bar_init(done, 4), cb_wg_bar_init(done + 8, 4);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (tid < 32) { // the copies (cb_wgmma_wgrad_tma_kernel's producer, with 32-wide panels into the staging ring; the two are
                    // not one function yet: the bf16 one is the form the GPU checked, and a shared one would be a new kernel to check)
        if (tid != 0) return;
        asm volatile("prefetch.tensormap [%0];\nprefetch.tensormap [%1];\n" ::"l"((uint64_t)&ta), "l"((uint64_t)&tb) : "memory");
        const int pq = a.p * a.q;
        int it = 0;
        for (int u = blockIdx.x; u < nunits; u += gridDim.x) {
            const int tile = u % ntiles, m0 = (tile / ntn) * BM, pb = (u / ntiles) * a.chunk, nk = steps(u);
            int br[PB], bsx[PB], bc[PB];
#pragma unroll
            for (int b = 0; b < PB; b++) { // the tap and first channel of B panel b (past R*S*C: a tap past R, all zeros)
                const int col = (tile % ntn) * BN + 32 * b, tap = cb_div(a.d_c, col), r = cb_div(a.d_s, tap);
                br[b] = r, bsx[b] = tap - r * a.s, bc[b] = col - tap * a.c;
            }
            for (int t = 0; t < nk; t++, it++) {
                const int slot = it % S1;
                if (it >= S1) cb_wg_bar_wait(empty1 + 8 * slot, ((it / S1) & 1) ^ 1);
                const uint32_t fb = full + 8 * slot, sa = stage1 + slot * KB, sb = sa + BM * 128;
                cb_wg_bar_expect(fb, KB);
                const int pix = pb + t * 32;
#pragma unroll
                for (int b = 0; b < PA; b++) cb_wg_tma_2d(sa + b * 4096, &ta, m0 + 32 * b, pix, fb);
                const int nn = cb_div(a.d_pq, pix), o = pix - nn * pq, oh = cb_div(a.d_q, o), ow = o - oh * a.q;
#pragma unroll
                for (int b = 0; b < PB; b++)
                    cb_wg_tma_im2col(sb + b * 4096, &tb, bc[b], ow * a.sw - a.pl, oh * a.sh - a.pt, nn, fb, (uint16_t)bsx[b], (uint16_t)br[b]);
            }
        }
        return;
    }
    if (wg == 0) { // the transposers, 96 threads
        const int tt = tid - 32;
        int it = 0;
        for (int u = blockIdx.x; u < nunits; u += gridDim.x) {
            const int nk = steps(u);
            for (int t = 0; t < nk; t++, it++) {
                const int s1 = it % S1, s2 = it % S2;
                cb_wg_bar_wait(full + 8 * s1, (it / S1) & 1);
                if (it >= S2) cb_wg_bar_wait(empty + 8 * s2, ((it / S2) & 1) ^ 1);
                const uint32_t km = base + s2 * KS, sm = stage1 + s1 * KB;
                // two blocks an iteration (8 loads in flight), the second where there is one
                for (int task = tt; task < (PA + PB) * 64; task += 192) {
                    uint4 v[2][4];
                    uint32_t dst[2];
                    int qq[2], jj[2];
                    const bool two = task + 96 < (PA + PB) * 64;
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        // block (q, jb) of a panel: pixels 4q .. 4q+3, channels 4jb .. 4jb+3
                        const int tk = task + 96 * h, panel = tk >> 6, b = tk & 63, q = b & 7, jb = (q + (b >> 3)) & 7;
                        const uint32_t src = sm + panel * 4096;
                        dst[h] = km + panel * 4096, qq[h] = q, jj[h] = jb;
                        if (h == 1 && !two) break;
#pragma unroll
                        for (int i = 0; i < 4; i++) {
                            const int pr = 4 * q + i;
                            v[h][i] = cb_wg_ld128(src + pr * 128 + ((jb ^ (pr & 7)) << 4));
                        }
                    }
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        if (h == 1 && !two) break;
                        const uint32_t o[4][4] = {{v[h][0].x, v[h][1].x, v[h][2].x, v[h][3].x}, {v[h][0].y, v[h][1].y, v[h][2].y, v[h][3].y},
                                                  {v[h][0].z, v[h][1].z, v[h][2].z, v[h][3].z}, {v[h][0].w, v[h][1].w, v[h][2].w, v[h][3].w}};
#pragma unroll
                        for (int i = 0; i < 4; i++) {
                            const int row = 4 * jj[h] + i;
                            const uint32_t at = dst[h] + row * 128 + ((qq[h] ^ (row & 7)) << 4);
                            if constexpr (X3) {
                                uint32_t hi[4], lo[4];
#pragma unroll
                                for (int e = 0; e < 4; e++) cb_wg_split_tf32(o[i][e], hi[e], lo[e]);
                                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(at), "r"(hi[0]), "r"(hi[1]), "r"(hi[2]), "r"(hi[3]) : "memory");
                                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(at + KB), "r"(lo[0]), "r"(lo[1]), "r"(lo[2]), "r"(lo[3]) : "memory");
                            } else {
                                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(at), "r"(o[i][0]), "r"(o[i][1]), "r"(o[i][2]), "r"(o[i][3])
                                             : "memory");
                            }
                        }
                    }
                }
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // the copies, seen by wgmma
                __syncwarp();
                if ((tid & 31) == 0) cb_wg_bar_arrive(empty1 + 8 * s1), cb_wg_bar_arrive(ready + 8 * s2); // a warp's arrival
            }
        }
        return;
    }

    // a consumer, c = 0 or 1: units j = c, c + 2, ... of the block, in unit order (the done barriers)
    const int c = wg - 1, lane = tid & 31, wv = (tid >> 5) & 3;
    float acc[MT][BN / 2];
    float sum[X3 ? MT : 1][X3 ? BN / 2 : 1]; // X3: the unit's sums, each k-step's accumulator added in
    int it = 0;
    for (int u = blockIdx.x, j = 0; u < nunits; u += gridDim.x, j++) {
        const int nk = steps(u);
        if ((j & 1) != c) {
            it += nk;
            continue;
        }
        if (j > 0) cb_wg_bar_wait(done + 8 * (1 - c), ((j >> 1) - (c == 0)) & 1);
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int q = 0; q < BN / 2; q++) {
                acc[i][q] = 0.f;
                if constexpr (X3) sum[i][q] = 0.f;
            }
        for (int t = 0; t < nk; t++, it++) {
            const int slot = it % S2;
            cb_wg_bar_wait(ready + 8 * slot, (it / S2) & 1);
            cb_wg_fence();
            const uint32_t as = base + slot * KS, bs = as + BM * 128;
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int i = 0; i < MT; i++) {
                    const uint64_t da = cb_wg_desc(as + i * 8192 + kk * 32), db = cb_wg_desc(bs + kk * 32);
                    if constexpr (X3) { // the small terms first, the step's first product into a fresh accumulator
                        cb_wgmma_tf32<BN>(acc[i], cb_wg_desc(as + KB + i * 8192 + kk * 32), db, kk > 0);
                        cb_wgmma_tf32<BN>(acc[i], da, cb_wg_desc(bs + KB + kk * 32));
                    }
                    cb_wgmma_tf32<BN>(acc[i], da, db);
                }
            cb_wg_commit();
            if constexpr (X3) {
                cb_wg_x3_retire<MT, BN>(sum, acc, empty + 8 * slot, lane);
                continue;
            }
            cb_wg_wait<1>();
            if (t > 0 && lane == 0) cb_wg_bar_arrive(empty + 8 * ((it - 1) % S2));
        }
        if constexpr (!X3) {
            cb_wg_wait<0>();
            if (lane == 0 && nk > 0) cb_wg_bar_arrive(empty + 8 * ((it - 1) % S2));
        }
        if (lane == 0) cb_wg_bar_arrive(done + 8 * c);
        if (nk <= 0) continue;
        const int tile = u % ntiles;
        if constexpr (X3) cb_wg_wgrad_red<MT, BN>(sum, a, (tile / ntn) * BM, (tile % ntn) * BN, lane, wv);
        else cb_wg_wgrad_red<MT, BN>(acc, a, (tile / ntn) * BM, (tile % ntn) * BN, lane, wv);
    }
#else
    __trap();
#endif
}

static inline cb_wg_wgrad_args cb_wg_wgrad_args_make(const cb_conv_params *p) {
    cb_wg_wgrad_args a = {};
    a.h = p->h, a.w_ = p->w, a.c = p->c, a.k = p->k, a.r = p->r, a.s = p->s, a.p = p->p, a.q = p->q;
    a.sh = p->stride_h, a.sw = p->stride_w, a.pt = p->pad_top, a.pl = p->pad_left;
    a.npq = p->n * p->p * p->q, a.rsc = p->r * p->s * p->c;
    a.d_pq = cb_divmod_make(p->p * p->q), a.d_q = cb_divmod_make(p->q), a.d_c = cb_divmod_make(p->c), a.d_s = cb_divmod_make(p->s);
    return a;
}

// The pixel split s: the (tile, split) units run in waves of one block per SM, and each unit ends
// with an epilogue of atomics worth about 5 k-steps (the lab, H200, 2026-11-28: the one-parameter fit
// of ResNet-50's 1x1 64->64 and VGG-A conv4 at one and two, resp. two and four, units per SM), so
// the split is the one of least waves x (steps per unit + 5), each split at least 512 pixels, at
// most about four units per SM. cb_wg_wgrad_units = N > 0 (the lab's comparison) is the rule before:
// about N units per SM.
static int cb_wg_wgrad_units = 0;
// a unit's epilogue of atomics, in k-steps (the lab's sweep sets others)
static double cb_wg_wgrad_epi = 5;
// 1: the KRSC backward filter's atomics one float each, as before stop 44's 16-byte reductions (2026-11-28) (the lab's comparison)
static int cb_wg_red_scalar = 0;
static inline void cb_wg_wgrad_split(cb_wg_wgrad_args &a, long tiles, int *splits) {
    const long sms = cb_wg_sms(), most = (a.npq + 511) / 512, steps = (a.npq + 63) / 64;
    long s = 1;
    if (cb_wg_wgrad_units > 0) {
        s = ((long)cb_wg_wgrad_units * sms + tiles - 1) / tiles;
    } else {
        const long top = (4 * sms + tiles - 1) / tiles;
        double best = 1e300;
        for (long t = 1; t <= top && t <= most; t++) {
            double cost = (double)((tiles * t + sms - 1) / sms) * ((steps + t - 1) / t + cb_wg_wgrad_epi);
            if (cost < best * 0.999) best = cost, s = t;
        }
    }
    if (s > most) s = most;
    if (s < 1) s = 1;
    long chunk = ((a.npq + s - 1) / s + 63) / 64 * 64;
    a.chunk = (int)chunk;
    *splits = (int)((a.npq + chunk - 1) / chunk);
}

// dw (zeroed here first) from x and dy, with tile t (1: 128x128, 2: 256x128, 4: 128x256; 0: picked)
template <int MT, int BN, bool KCRS> static void cb_wg_wgrad_launch_t(cb_wg_wgrad_args a, cudaStream_t st) {
    constexpr int STAGE = 128 * MT * 128 + BN * 128, FIT = 220 * 1024 / STAGE, STAGES = FIT > 6 ? 6 : FIT;
    constexpr int BYTES = STAGES * STAGE + 1024;
    static unsigned long long attr_devs = 0;
    if (cb_first_on_device(&attr_devs))
        cudaFuncSetAttribute(cb_wgmma_wgrad_kernel<MT, BN, STAGES, KCRS>, cudaFuncAttributeMaxDynamicSharedMemorySize, BYTES);
    long tiles = (long)((a.k + 128 * MT - 1) / (128 * MT)) * ((a.rsc + BN - 1) / BN);
    int splits;
    cb_wg_wgrad_split(a, tiles, &splits);
    a.scalar = cb_wg_red_scalar;
    // a block per unit: one block per SM running its units in one pipeline measured 2% slower (the
    // lab, H200, 2026-11-28), the atomics of a unit's end not overlapping as a store does
    cb_wgmma_wgrad_kernel<MT, BN, STAGES, KCRS><<<(unsigned)cb_wg_grid(tiles * splits, false), 256, BYTES, st>>>(a);
}
// The TMA maps of the backward filter: ta tiled over dy as an (N*P*Q, K) matrix, 64 x 64 boxes;
// tb im2col over x, columns of 64 pixels of 64 channels, the pixel box that of the forward's
// outputs. NULL, or why not (cb_wg_tma_maps's reasons).
// (f32: 32 x 32 boxes, columns of 32 pixels of 32 channels, fp32)
static inline const char *cb_wg_wgrad_maps(const cb_wg_wgrad_args &a, CUtensorMap *ta, CUtensorMap *tb) {
    const int box = a.f32 ? 32 : 64;
    const char *why = cb_wg_matrix_map(a.dy, a.npq, a.k, box, ta, "the gradient's tensor map was refused", a.f32);
    if (why) return why;
    cb_wg_args f = cb_wg_args_make(a.npq / (a.p * a.q), a.h, a.w_, a.c, a.k, a.r, a.s, a.p, a.q, a.sh, a.sw, a.pt, a.pl);
    f.x = a.x, f.f32 = a.f32;
    return cb_wg_im2col_map(f, box, tb);
}
// shared memory: S2 K-major buffers (cb_wg_tf32_s2: 2 or 3; X3: each twice the bytes), as many staging
// buffers as fit in 220 KB (at most 6), the barriers, 1 KB for alignment
static int cb_wg_tf32_s2 = 3;
template <int WM, int BN, int S2, bool X3 = false>
static void cb_wg_wgrad_tf32_launch_s(cb_wg_wgrad_args a, const CUtensorMap &ta, const CUtensorMap &tb, cudaStream_t st) {
    constexpr int KB = (WM + BN) * 128, KS = X3 ? 2 * KB : KB, FIT = (220 * 1024 - S2 * KS) / KB, S1 = FIT > 6 ? 6 : FIT;
    constexpr int BYTES = S2 * KS + S1 * KB + 16 * (S1 + S2) + 16 + 1024;
    static unsigned long long attr_devs = 0;
    if (cb_first_on_device(&attr_devs))
        cudaFuncSetAttribute(cb_wgmma_wgrad_tf32_kernel<WM, BN, S1, S2, X3>, cudaFuncAttributeMaxDynamicSharedMemorySize, BYTES);
    long tiles = (long)((a.k + WM - 1) / WM) * ((a.rsc + BN - 1) / BN);
    int splits;
    cb_wg_wgrad_split(a, tiles, &splits);
    cb_wgmma_wgrad_tf32_kernel<WM, BN, S1, S2, X3><<<(unsigned)cb_wg_grid(tiles * splits), 384, BYTES, st>>>(a, ta, tb);
}
template <int WM, int BN> static void cb_wg_wgrad_tf32_launch_t(cb_wg_wgrad_args a, const CUtensorMap &ta, const CUtensorMap &tb, cudaStream_t st) {
    if (a.x3) return cb_wg_wgrad_tf32_launch_s<64, BN, 3, true>(a, ta, tb, st); // (3xTF32: 64 filters a tile)
    if (cb_wg_tf32_s2 == 2) return cb_wg_wgrad_tf32_launch_s<WM, BN, 2>(a, ta, tb, st);
    cb_wg_wgrad_tf32_launch_s<WM, BN, 3>(a, ta, tb, st);
}
template <int WM, int BN, bool COOP> static void cb_wg_wgrad_tma_launch_t(cb_wg_wgrad_args a, const CUtensorMap &ta, const CUtensorMap &tb, cudaStream_t st) {
    constexpr int BM = COOP ? 2 * WM : WM, STAGE = BM * 128 + BN * 128, FIT = (220 * 1024) / STAGE, STAGES = FIT > 6 ? 6 : FIT;
    constexpr int BYTES = STAGES * STAGE + 16 * STAGES + 16 + 1024;
    static unsigned long long attr_devs = 0;
    if (cb_first_on_device(&attr_devs))
        cudaFuncSetAttribute(cb_wgmma_wgrad_tma_kernel<WM, BN, STAGES, COOP>, cudaFuncAttributeMaxDynamicSharedMemorySize, BYTES);
    long tiles = (long)((a.k + BM - 1) / BM) * ((a.rsc + BN - 1) / BN);
    int splits;
    cb_wg_wgrad_split(a, tiles, &splits);
    cb_wgmma_wgrad_tma_kernel<WM, BN, STAGES, COOP><<<(unsigned)cb_wg_grid(tiles * splits), 384, BYTES, st>>>(a, ta, tb);
}
// tiles 6 (128x128), 9 (64x256) and 10 (64x128), the consumers on units in turn; 7 (128x256) and 8
// (256x128), both consumers on every unit; false where the maps are refused (said once on stderr)
static inline bool cb_wg_wgrad_tma_launch(const cb_wg_wgrad_args &a, int t, cudaStream_t st) {
    // the maps of the last 64 launches, per thread, as cb_wg_maps_for keeps the forward's
    struct entry {
        const void *x, *dy;
        int h, w_, c, k, r, s, p, q, sh, sw, pt, pl, npq, f32;
        CUtensorMap ta, tb;
    };
    enum { N = 64 };
    static thread_local entry cache[N];
    static thread_local int used = 0, next = 0;
    const entry *e = NULL;
    for (int i = 0; i < used && !e; i++) {
        const entry &c = cache[i];
        if (c.x == a.x && c.dy == a.dy && c.h == a.h && c.w_ == a.w_ && c.c == a.c && c.k == a.k && c.r == a.r && c.s == a.s && c.p == a.p &&
            c.q == a.q && c.sh == a.sh && c.sw == a.sw && c.pt == a.pt && c.pl == a.pl && c.npq == a.npq && c.f32 == a.f32)
            e = &c;
    }
    if (!e) {
        entry &n = cache[next];
        const char *why = cb_wg_wgrad_maps(a, &n.ta, &n.tb);
        if (why) {
            static int said = 0;
            if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
                fprintf(stderr, "convbench: note: own wgmma backward filter: %s; it runs the kernel without TMA\n", why);
            return false;
        }
        n.x = a.x, n.dy = a.dy, n.h = a.h, n.w_ = a.w_, n.c = a.c, n.k = a.k, n.r = a.r, n.s = a.s, n.p = a.p, n.q = a.q;
        n.sh = a.sh, n.sw = a.sw, n.pt = a.pt, n.pl = a.pl, n.npq = a.npq, n.f32 = a.f32;
        next = (next + 1) % N, used = used < N ? used + 1 : N;
        e = &n;
    }
    if (a.f32) { // tf32: 64 rows (filters) where K <= 64 (tile 10), else 128 (6)
        if (t == 10) cb_wg_wgrad_tf32_launch_t<64, 128>(a, e->ta, e->tb, st);
        else cb_wg_wgrad_tf32_launch_t<128, 128>(a, e->ta, e->tb, st);
        return true;
    }
    switch (t) {
    case 7: cb_wg_wgrad_tma_launch_t<64, 256, true>(a, e->ta, e->tb, st); break;
    case 8: cb_wg_wgrad_tma_launch_t<128, 128, true>(a, e->ta, e->tb, st); break;
    case 9: cb_wg_wgrad_tma_launch_t<64, 256, false>(a, e->ta, e->tb, st); break;
    case 10: cb_wg_wgrad_tma_launch_t<64, 128, false>(a, e->ta, e->tb, st); break;
    default: cb_wg_wgrad_tma_launch_t<128, 128, false>(a, e->ta, e->tb, st); break;
    }
    return true;
}

// (tiles 6-8: cb_wgmma_wgrad_tma_kernel, KRSC only, not the scalar atomics; 0 picks among them unless
// cb_wg_tma is 0)
template <bool KCRS> static void cb_wg_wgrad_launch(const cb_wg_wgrad_args &a, int t, cudaStream_t st = 0) {
    cudaMemsetAsync(a.dw, 0, (size_t)a.k * a.rsc * sizeof(float), st);
    if (a.npq <= 0) return;
    if (a.f32) { // tf32: the transposing TMA kernel alone (KRSC); refused maps (said on stderr) leave dw NaN
        if (t != 6 && t != 10) t = a.k <= 64 ? 10 : 6;
        if (a.x3) t = 10; // (64 filters a tile)
        if (KCRS || !cb_wg_wgrad_tma_launch(a, t, st)) cudaMemsetAsync(a.dw, 0xff, (size_t)a.k * a.rsc * sizeof(float), st);
        return;
    }
    const bool tma_ok = !KCRS && !cb_wg_red_scalar;
    if (t == 0 && tma_ok && cb_wg_tma) { // the 256-column tile where the units run long (as below), else 128
                                          // columns; 64 rows (filters) where K <= 64, else 128
        const int bm = a.k <= 64 ? 64 : 128;
        cb_wg_wgrad_args w = a;
        int splits;
        cb_wg_wgrad_split(w, (long)((a.k + bm - 1) / bm) * ((a.rsc + 255) / 256), &splits);
        const bool wide = w.chunk / 64 >= 40 && a.rsc % 256 == 0;
        t = bm == 64 ? (wide ? 9 : 10) : wide ? 7 : 6;
    }
    if (t >= 6) {
        if (tma_ok && cb_wg_wgrad_tma_launch(a, t, st)) return;
        t = 0;
    }
    if (t == 0) { // 128x256 where its blocks run long (>= 40 steps of 64 pixels: VGG's layers), else 128x128 (the
                  // ResNet-50 layers, whose short splits the wider tile's epilogue of atomics outweighs; lab, H200)
        cb_wg_wgrad_args w = a;
        int splits;
        cb_wg_wgrad_split(w, (long)((a.k + 127) / 128) * ((a.rsc + 255) / 256), &splits);
        t = w.chunk / 64 >= 40 ? 4 : 1;
    }
    if (t == 2) cb_wg_wgrad_launch_t<2, 128, KCRS>(a, st);
    else if (t == 4) cb_wg_wgrad_launch_t<1, 256, KCRS>(a, st);
    else cb_wg_wgrad_launch_t<1, 128, KCRS>(a, st);
}

// out (K, C, RS) = in (K, RS, C) transposed per filter, fp32: 32 x 32 tiles through shared memory
__global__ void cb_wg_krsc_kcrs_kernel(int C, int RS, const float *__restrict__ in, float *__restrict__ out) {
    __shared__ float t[32][33];
    const long base = (long)blockIdx.z * RS * C;
    const int c0 = blockIdx.x * 32, rs0 = blockIdx.y * 32;
    for (int y = threadIdx.y; y < 32; y += 8)
        if (rs0 + y < RS && c0 + (int)threadIdx.x < C) t[y][threadIdx.x] = in[base + (long)(rs0 + y) * C + c0 + threadIdx.x];
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += 8)
        if (c0 + y < C && rs0 + (int)threadIdx.x < RS) out[base + (long)(c0 + y) * RS + rs0 + threadIdx.x] = t[threadIdx.x][y];
}

// Bytes of fp32 workspace cb_wg_wgrad_kcrs takes: a KRSC dw, where KCRS differs (R*S > 1)
static inline size_t cb_wg_wgrad_kcrs_workspace(const cb_conv_params *p) {
    return p->r * p->s > 1 ? (size_t)p->k * p->r * p->s * p->c * sizeof(float) : 0;
}
// dw (fp32 KCRS, a.dw) with tile t: the units' atomics go to a KRSC dw in ws (cb_wg_wgrad_kcrs_workspace
// bytes), where a fragment's lanes add to whole 32-byte sectors, then one transpose to KCRS: the
// atomics straight into KCRS land R*S floats apart, a sector each (1.7x the kernel's time on
// ResNet-50's 3x3 layers, the engine's race, H200, 2026-11-28). cb_wg_kcrs_direct = 1: straight (the lab's comparison).
static int cb_wg_kcrs_direct = 0;
static inline void cb_wg_wgrad_kcrs(cb_wg_wgrad_args a, float *ws, int t, cudaStream_t st = 0) {
    if (a.r * a.s == 1) return cb_wg_wgrad_launch<false>(a, t, st); // KCRS is KRSC
    if (!a.f32 && (cb_wg_kcrs_direct || a.k > 65535)) return cb_wg_wgrad_launch<true>(a, t, st); // (gridDim.z: a filter a block)
    float *dw = a.dw;
    a.dw = ws;
    cb_wg_wgrad_launch<false>(a, t, st);
    const int rs = a.r * a.s;
    cb_wg_krsc_kcrs_kernel<<<dim3((a.c + 31) / 32, (rs + 31) / 32, a.k), dim3(32, 8), 0, st>>>(a.c, rs, ws, dw);
}

#endif
