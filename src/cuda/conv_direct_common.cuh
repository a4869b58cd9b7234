// The pieces the direct convolution families share (conv_direct.cuh says what they are): the
// problem shape, the device limits, staging whole images into shared memory with cp.async, and
// row stores.
#ifndef CB_CUDA_CONV_DIRECT_COMMON_CUH
#define CB_CUDA_CONV_DIRECT_COMMON_CUH

#include "core/ops.h"
#include "cuda/fast_div.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <math.h>
#include <stdint.h>
#include <type_traits>

// ---- shared pieces ------------------------------------------------------------------------------

// The problem: a convolution, then bias, ReLU when relu, then a max pool of window = stride = pool
// when pool > 1. pe x qe: the conv outputs computed (P x Q, or the rows and columns pool windows
// cover).
struct cd_shape {
    int n, c, h, w, k, r, s, p, q, sh, sw, pt, pl;
    int pool, pe, qe;
    int relu;
};

static inline cd_shape cd_shape_of(const cb_conv_params *p, int pool, bool relu) {
    cd_shape g = {p->n, p->c, p->h, p->w, p->k, p->r, p->s, p->p, p->q, p->stride_h, p->stride_w, p->pad_top,
                  p->pad_left, pool, p->p, p->q, relu ? 1 : 0};
    if (pool > 1) g.pe = p->p / pool * pool, g.qe = p->q / pool * pool;
    return g;
}

__host__ __device__ static inline int cd_round_up(int a, int b) { return (a + b - 1) / b * b; }
__host__ __device__ static inline int cd_div_up(int a, int b) { return (a + b - 1) / b; }

struct cd_device {
    int sms, smem_optin;
};
static inline cd_device cd_device_get(void) {
    static cd_device d = {0, 0};
    if (!d.sms) {
        int dev = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev);
        cudaDeviceGetAttribute(&d.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    }
    return d;
}

// Lets fn use all the shared memory a block may opt in to (once per kernel), then returns how many
// blocks of `threads` threads and `smem` bytes fit on one multiprocessor (0: none).
static inline int cd_blocks_per_sm(const void *fn, int threads, size_t smem) {
    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, cd_device_get().smem_optin);
    int nb = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, threads, smem) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return nb;
}

__device__ __forceinline__ void cd_cp_async(float *dst, const float *src, int bytes) {
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    if (bytes == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
    else if (bytes == 8) asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(d), "l"(src));
    else asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src));
}
__device__ __forceinline__ void cd_cp_commit(void) { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cd_cp_wait_one(void) { asm volatile("cp.async.wait_group 1;\n" ::); }

// Copies n floats from src to dst (both contiguous) by cp.async, 16, 8 or 4 bytes a lane as the
// alignment of both allows; the size is chosen once, outside the loop (a constant to cd_cp_async).
__device__ __forceinline__ void cd_stage_flat(float *dst, const float *__restrict__ src, long n) {
    const uintptr_t al = (uintptr_t)dst | (uintptr_t)src;
    const long t0 = threadIdx.x, nt = blockDim.x;
    if (al % 16 == 0 && n % 4 == 0)
        for (long i = 4 * t0; i < n; i += 4 * nt) cd_cp_async(dst + i, src + i, 16);
    else if (al % 8 == 0 && n % 2 == 0)
        for (long i = 2 * t0; i < n; i += 2 * nt) cd_cp_async(dst + i, src + i, 8);
    else
        for (long i = t0; i < n; i += nt) cd_cp_async(dst + i, src + i, 4);
}

// Stages images [img0, img0 + cnt) of x (N, C, H, W) into sbuf (cnt, cs, hs, ws): image pixel
// (c, ih, iw) goes to (c, ih + pt, iw + pl), clipped to hs x ws. Only in-image cells are written.
// Where a plane is exactly an image (no padding, hs = H, ws = W), a flat copy does it.
// A warp copies whole rows (several short ones at once), 16 or 8 bytes a lane where alignment
// allows; the row walk is incremental, so the index arithmetic stays off the copy's critical path.
__device__ __forceinline__ void cd_stage(float *sbuf, const float *__restrict__ x, int img0, int cnt, int C, int cs,
                                         int H, int W, int hs, int ws, int pt, int pl) {
    if (hs == H && ws == W && pt == 0 && pl == 0) { // planes are the images: contiguous copies
        if (cs == C) cd_stage_flat(sbuf, x + (size_t)img0 * C * H * W, (long)cnt * C * H * W);
        else
            for (int im = 0; im < cnt; im++)
                cd_stage_flat(sbuf + (size_t)im * cs * H * W, x + (size_t)(img0 + im) * C * H * W, (long)C * H * W);
        return;
    }
    const int nrow = min(H, hs - pt), ncol = min(W, ws - pl), rows = cnt * C * nrow;
    if (nrow <= 0 || ncol <= 0) return;
    const uintptr_t xa = (uintptr_t)x, sa = (uintptr_t)sbuf;
    const int vec = (ncol % 4 == 0 && pl % 4 == 0 && W % 4 == 0 && ws % 4 == 0 && xa % 16 == 0 && sa % 16 == 0) ? 4
                    : (ncol % 2 == 0 && pl % 2 == 0 && W % 2 == 0 && ws % 2 == 0 && xa % 8 == 0 && sa % 8 == 0) ? 2 : 1;
    const int nv = ncol / vec, lane = threadIdx.x & 31, nwarp = blockDim.x >> 5;
    const int rpi = nv >= 32 ? 1 : 32 / nv; // rows per warp step
    const int lr = nv >= 32 ? 0 : lane / nv, lj = nv >= 32 ? lane : lane - lr * nv;
    if (lr >= rpi) return;
    const int step = nwarp * rpi, dih = step % nrow, dt = step / nrow;
    int rr = (threadIdx.x >> 5) * rpi + lr;
    if (rr >= rows) return;
    int ih = rr % nrow, t = rr / nrow, c = t % C, im = t / C;
    for (;;) {
        const float *src = x + (((size_t)(img0 + im) * C + c) * H + ih) * W;
        float *dst = sbuf + ((size_t)(im * cs + c) * hs + ih + pt) * ws + pl;
        for (int j = lj; j < nv; j += 32) cd_cp_async(dst + j * vec, src + j * vec, vec * 4);
        if ((rr += step) >= rows) break;
        ih += dih;
        int carry = dt;
        if (ih >= nrow) ih -= nrow, carry++;
        c += carry;
        if (c >= C) im += c / C, c %= C;
    }
}

// Stores L consecutive values v of one output row (length lrow) from column c0: 16- or 8-byte
// stores where the row and the column allow, else element by element within the row.
template <int L> __device__ __forceinline__ void cd_store_row(float *row, int c0, int lrow, const float *v) {
    if (c0 + L <= lrow) {
        if (L % 4 == 0 && lrow % 4 == 0 && c0 % 4 == 0) {
#pragma unroll
            for (int t = 0; t < L; t += 4) *reinterpret_cast<float4 *>(row + c0 + t) = make_float4(v[t], v[t + 1], v[t + 2], v[t + 3]);
            return;
        }
        if (L % 2 == 0 && lrow % 2 == 0 && c0 % 2 == 0) {
#pragma unroll
            for (int t = 0; t < L; t += 2) *reinterpret_cast<float2 *>(row + c0 + t) = make_float2(v[t], v[t + 1]);
            return;
        }
    }
#pragma unroll
    for (int t = 0; t < L; t++)
        if (c0 + t < lrow) row[c0 + t] = v[t];
}


#endif
