// Direct convolution kernels for layers with few channels, such as the ECE408 course network's
// (seed 004: 1->4 7x7 on 86x86 and 4->16 7x7 on 40x40), forward only, with the bias, the ReLU
// and optionally the max pool that follows fused in. Shared by the engine's algorithms
// (conv_direct.cu) and the lab (dev/cuda/ece408_lab.cu): what the lab measures is what runs.
//
// Layouts: x (N, C, H, W), w (K, C, R, S), b (K) or NULL, y (N, K, P, Q). With a fused max pool
// of window = stride = pool (VALID, no padding), y is the pool's output (N, K, P/pool, Q/pool),
// and only the conv outputs some window covers are computed.
//
// Every kernel stages whole images into shared memory with cp.async, two buffers deep (the next
// image loads while this one computes) on a persistent grid. A staged image sits at an offset of
// (pad_top, pad_left); the cells around it are zeroed once, as every image has the same geometry.
//   direct  (fp32 FMA): a thread computes TP output rows x TQ columns x 4 output channels in
//           registers; a sliding window of input values in registers (stride-1, S <= 7) or plain
//           shared-memory reads (any stride, any S); weights in constant memory ("direct-const",
//           what the course asked for) or in shared memory ("direct-smem").
//   unroll  (fp32 FMA): the course's fused unroll + matrix multiply: a tile of the unrolled
//           input (C*R*S x pixels) gathered into shared memory, all weights in shared memory,
//           a 4x4 register tile per thread.
//   tc      (tensor cores, mma.sync bf16 m16n8k16 or tf32 m16n8k8, fp32 accumulation): pixels on
//           the M side, (output channel, column shift dq in {0,1}) on the N side, (input channel
//           or filter row pair, 8 taps) on the K side; see cd_tc_kernel.
#ifndef CB_CUDA_CONV_DIRECT_CUH
#define CB_CUDA_CONV_DIRECT_CUH

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

// ---- direct, fp32 FMA -----------------------------------------------------------------------------

#define CD_KT 4   // output channels per thread
#define CD_SMAX 7 // widest filter the register window handles

// (C, R, S, KP) weights for direct-const: 16384 floats is all of constant memory's 64 KB
__constant__ float4 cd_wconst[4096];

struct cd_direct_args {
    const float *x, *w, *bias; // w: (K, C, R, S) as given (direct-smem transposes it on staging)
    float *y;
    cd_shape g;
    int kp, kg;          // output channels padded to a multiple of 4; kp / 4 channel groups
    int nb, ns;          // bands of TP rows, segments of TQ columns per image
    int ib, hs, ws;      // images per block step; shared-memory plane rows, columns
    int wfloats;         // weights in shared memory (0 for direct-const), a multiple of 4
    int kin;             // 1: the channel group is the item index's innermost part (lanes of a warp
                         // share input addresses, which spreads a warp's distinct ones over more banks)
};

// One thread's outputs: TP rows x TQ columns of 4 output channels (group kgi) of image n, from the
// staged image sx (C, hs, ws); weights (C, R, S, KP) in constant memory or shared memory sw.
// MODE 0: generic (any stride, any S: every input value read from shared memory); 1: stride-1
// window, streaming input rows (each row's window loaded once, fed to every output row it
// reaches); 2: stride-1 window, filter rows outer (no branches inside: S x 4 weights held, the
// window reloaded per output row).
template <int TP, int TQ, int MODE, bool CONSTW>
__device__ __forceinline__ void cd_direct_item(const cd_direct_args &a, const float *sx, const float *sw, int n, int kgi,
                                               int band, int seg) {
    constexpr bool WIN = MODE > 0;
    const cd_shape &g = a.g;
    auto ldw = [&](int wi) { return CONSTW ? cd_wconst[wi >> 2] : *reinterpret_cast<const float4 *>(sw + wi); };
    float acc[TP][CD_KT][TQ];
#pragma unroll
    for (int v = 0; v < TP; v++)
#pragma unroll
        for (int k = 0; k < CD_KT; k++)
#pragma unroll
            for (int t = 0; t < TQ; t++) acc[v][k][t] = 0.f;
    const int rows = (TP - 1) * g.sh + g.r;
    const float *xb = sx + (size_t)band * TP * g.sh * a.ws + seg * TQ * g.sw;
    for (int c = 0; c < g.c; c++) {
        const float *xc = xb + (size_t)c * a.hs * a.ws;
        const int wc = c * g.r * g.s * a.kp + kgi * CD_KT; // float index of (c, 0, 0, kgi*4)
        if constexpr (MODE == 2) {
            for (int r = 0; r < g.r; r++) {
                const int wr = wc + r * g.s * a.kp;
                auto fma_row = [&](int v, const float *in, float4 wv, int s) {
#pragma unroll
                    for (int t = 0; t < TQ; t++) {
                        acc[v][0][t] = fmaf(in[t + s], wv.x, acc[v][0][t]);
                        acc[v][1][t] = fmaf(in[t + s], wv.y, acc[v][1][t]);
                        acc[v][2][t] = fmaf(in[t + s], wv.z, acc[v][2][t]);
                        acc[v][3][t] = fmaf(in[t + s], wv.w, acc[v][3][t]);
                    }
                };
                if (g.s == CD_SMAX) { // the common 7-wide filter: one straight block per filter row
                    float4 wv[CD_SMAX];
#pragma unroll
                    for (int s = 0; s < CD_SMAX; s++) wv[s] = ldw(wr + s * a.kp);
#pragma unroll
                    for (int v = 0; v < TP; v++) {
                        const float *row = xc + (v * g.sh + r) * a.ws;
                        float in[TQ + CD_SMAX - 1];
#pragma unroll
                        for (int j = 0; j < TQ + CD_SMAX - 1; j++) in[j] = row[j];
#pragma unroll
                        for (int s = 0; s < CD_SMAX; s++) fma_row(v, in, wv[s], s);
                    }
                } else {
#pragma unroll
                    for (int v = 0; v < TP; v++) {
                        const float *row = xc + (v * g.sh + r) * a.ws;
                        float in[TQ + CD_SMAX - 1];
#pragma unroll
                        for (int j = 0; j < TQ + CD_SMAX - 1; j++) in[j] = row[j];
#pragma unroll
                        for (int s = 0; s < CD_SMAX; s++) {
                            if (s >= g.s) break;
                            fma_row(v, in, ldw(wr + s * a.kp), s);
                        }
                    }
                }
            }
        } else {
            for (int i = 0; i < rows; i++) {
                const float *row = xc + i * a.ws;
                if constexpr (WIN) {
                    float in[TQ + CD_SMAX - 1];
#pragma unroll
                    for (int j = 0; j < TQ + CD_SMAX - 1; j++) in[j] = row[j];
#pragma unroll
                    for (int v = 0; v < TP; v++) {
                        const int r = i - v * g.sh;
                        if (r < 0 || r >= g.r) continue;
                        const int wr = wc + r * g.s * a.kp;
#pragma unroll
                        for (int s = 0; s < CD_SMAX; s++) {
                            if (s >= g.s) break;
                            const int wi = wr + s * a.kp;
                            const float4 wv = ldw(wi);
#pragma unroll
                            for (int t = 0; t < TQ; t++) {
                                acc[v][0][t] = fmaf(in[t + s], wv.x, acc[v][0][t]);
                                acc[v][1][t] = fmaf(in[t + s], wv.y, acc[v][1][t]);
                                acc[v][2][t] = fmaf(in[t + s], wv.z, acc[v][2][t]);
                                acc[v][3][t] = fmaf(in[t + s], wv.w, acc[v][3][t]);
                            }
                        }
                    }
                } else {
#pragma unroll
                    for (int v = 0; v < TP; v++) {
                        const int r = i - v * g.sh;
                        if (r < 0 || r >= g.r) continue;
                        const int wr = wc + r * g.s * a.kp;
                        for (int s = 0; s < g.s; s++) {
                            const int wi = wr + s * a.kp;
                            const float4 wv = ldw(wi);
#pragma unroll
                            for (int t = 0; t < TQ; t++) {
                                const float xv = row[t * g.sw + s];
                                acc[v][0][t] = fmaf(xv, wv.x, acc[v][0][t]);
                                acc[v][1][t] = fmaf(xv, wv.y, acc[v][1][t]);
                                acc[v][2][t] = fmaf(xv, wv.z, acc[v][2][t]);
                                acc[v][3][t] = fmaf(xv, wv.w, acc[v][3][t]);
                            }
                        }
                    }
                }
            }
        }
    }
    const float lo = g.relu ? 0.f : -INFINITY;
    const int p0 = band * TP, q0 = seg * TQ;
#pragma unroll
    for (int kk = 0; kk < CD_KT; kk++) {
        const int k = kgi * CD_KT + kk;
        if (k >= g.k) break;
        const float bk = a.bias ? a.bias[k] : 0.f;
        if (g.pool == 1) {
            float *yk = a.y + ((size_t)n * g.k + k) * g.p * g.q;
#pragma unroll
            for (int v = 0; v < TP; v++) {
                if (p0 + v >= g.p) break;
                float o[TQ];
#pragma unroll
                for (int t = 0; t < TQ; t++) o[t] = fmaxf(acc[v][kk][t] + bk, lo);
                cd_store_row<TQ>(yk + (size_t)(p0 + v) * g.q, q0, g.q, o);
            }
        } else {
            // a pool window lies inside one thread's tile: TP and TQ are multiples of the window
            const int pp_n = g.pe / g.pool, pq_n = g.qe / g.pool;
            float *yk = a.y + ((size_t)n * g.k + k) * pp_n * pq_n;
            auto pool_out = [&](auto PW) {
                constexpr int pw = decltype(PW)::value;
                if constexpr (TP % pw == 0 && TQ % pw == 0) {
#pragma unroll
                    for (int v = 0; v < TP; v += pw) {
                        const int pp = (p0 + v) / pw;
                        if (pp >= pp_n) break;
                        float o[TQ / pw];
#pragma unroll
                        for (int t = 0; t < TQ; t += pw) {
                            float m = -INFINITY;
#pragma unroll
                            for (int dv = 0; dv < pw; dv++)
#pragma unroll
                                for (int dt = 0; dt < pw; dt++) m = fmaxf(m, acc[v + dv][kk][t + dt]);
                            o[t / pw] = fmaxf(m + bk, lo);
                        }
                        cd_store_row<TQ / pw>(yk + (size_t)pp * pq_n, q0 / pw, pq_n, o);
                    }
                }
            };
            if (g.pool == 2) pool_out(std::integral_constant<int, 2>());
            else if (g.pool == 4) pool_out(std::integral_constant<int, 4>());
        }
    }
}

template <int TP, int TQ, int MODE, bool CONSTW> __device__ __forceinline__ void cd_direct_body(const cd_direct_args &a) {
    extern __shared__ float4 cd_dyn[];
    float *sm = reinterpret_cast<float *>(cd_dyn);
    const cd_shape &g = a.g;
    const int img_floats = g.c * a.hs * a.ws, buf_floats = a.ib * img_floats;
    float *sw = sm, *sx0 = sm + a.wfloats, *sx1 = sx0 + buf_floats;
    for (int i = threadIdx.x; i < a.wfloats + 2 * buf_floats; i += blockDim.x) sm[i] = 0.f;
    __syncthreads();
    if (!CONSTW) { // (K, C, R, S) -> (C, R, S, KP), zeros in the padded channels
        const int crs = g.c * g.r * g.s;
        for (int i = threadIdx.x; i < g.k * crs; i += blockDim.x) {
            int k = i / crs, j = i - k * crs;
            sw[j * a.kp + k] = a.w[i];
        }
    }
    const int ngroups = cd_div_up(g.n, a.ib), per_img = a.nb * a.ns, ipk = a.ib * per_img, items = a.kg * ipk;
    int grp = blockIdx.x, buf = 0;
    if (grp < ngroups) cd_stage(sx0, a.x, grp * a.ib, min(a.ib, g.n - grp * a.ib), g.c, g.c, g.h, g.w, a.hs, a.ws, g.pt, g.pl);
    cd_cp_commit();
    for (; grp < ngroups; grp += gridDim.x, buf ^= 1) {
        const int nxt = grp + gridDim.x;
        if (nxt < ngroups)
            cd_stage(buf ? sx0 : sx1, a.x, nxt * a.ib, min(a.ib, g.n - nxt * a.ib), g.c, g.c, g.h, g.w, a.hs, a.ws, g.pt, g.pl);
        cd_cp_commit();
        cd_cp_wait_one();
        __syncthreads();
        const float *sx = buf ? sx1 : sx0;
        for (int it = threadIdx.x; it < items; it += blockDim.x) {
            const int kgi = a.kin ? it % a.kg : it / ipk, rest = a.kin ? it / a.kg : it - kgi * ipk;
            const int im = rest / per_img, t2 = rest - im * per_img;
            const int band = t2 / a.ns, seg = t2 - band * a.ns, n = grp * a.ib + im;
            if (n < g.n) cd_direct_item<TP, TQ, MODE, CONSTW>(a, sx + (size_t)im * img_floats, sw, n, kgi, band, seg);
        }
        __syncthreads();
    }
}
template <int TP, int TQ, int MODE, bool CONSTW> __global__ void cd_direct_kernel(cd_direct_args a) {
    cd_direct_body<TP, TQ, MODE, CONSTW>(a);
}
// the same with at most 128 threads a block and MINB blocks a multiprocessor: fewer registers, more
// warps to hide latency with
template <int TP, int TQ, int MODE, bool CONSTW, int MINB>
__global__ void __launch_bounds__(128, MINB) cd_direct_kernel_lb(cd_direct_args a) {
    cd_direct_body<TP, TQ, MODE, CONSTW>(a);
}

// The thread tiles compiled: stride-1 layers with S <= 7 use a register window (WIN), any other
// layer the generic tile. A fused pool needs a tile that holds whole windows.
struct cd_direct_cfg {
    int tp, tq, mode; // mode: see cd_direct_item
    bool win;
    int minb; // 0, or the kernel is bounded to 128 threads and minb blocks a multiprocessor
};
static const cd_direct_cfg cd_direct_cfgs[] = {
    {2, 10, 1, true, 0}, {4, 8, 1, true, 0},  {2, 17, 1, true, 0}, {1, 17, 1, true, 0}, {2, 8, 1, true, 0},
    {2, 8, 0, false, 0}, {2, 10, 2, true, 0}, {4, 8, 2, true, 0},  {2, 17, 2, true, 0}, {2, 8, 2, true, 0},
    {4, 8, 2, true, 3},  {4, 4, 2, true, 0},  {4, 4, 2, true, 4}};
#define CD_DIRECT_NCFG 13
static_assert(sizeof cd_direct_cfgs / sizeof cd_direct_cfgs[0] == CD_DIRECT_NCFG, "cd_direct_cfgs and CD_DIRECT_NCFG");

typedef void (*cd_direct_fn)(cd_direct_args);
template <bool CONSTW> static cd_direct_fn cd_direct_kernel_of(int cfg) {
    switch (cfg) {
    case 0: return cd_direct_kernel<2, 10, 1, CONSTW>;
    case 1: return cd_direct_kernel<4, 8, 1, CONSTW>;
    case 2: return cd_direct_kernel<2, 17, 1, CONSTW>;
    case 3: return cd_direct_kernel<1, 17, 1, CONSTW>;
    case 4: return cd_direct_kernel<2, 8, 1, CONSTW>;
    case 5: return cd_direct_kernel<2, 8, 0, CONSTW>;
    case 6: return cd_direct_kernel<2, 10, 2, CONSTW>;
    case 7: return cd_direct_kernel<4, 8, 2, CONSTW>;
    case 8: return cd_direct_kernel<2, 17, 2, CONSTW>;
    case 9: return cd_direct_kernel<2, 8, 2, CONSTW>;
    case 10: return cd_direct_kernel_lb<4, 8, 2, CONSTW, 3>;
    case 11: return cd_direct_kernel<4, 4, 2, CONSTW>;
    default: return cd_direct_kernel_lb<4, 4, 2, CONSTW, 4>;
    }
}

struct cd_direct_plan {
    cd_direct_args a;
    cd_direct_fn fn;
    int cfg, threads, blocks, bps, warps_sm, conflicts; // blocks, warps per multiprocessor; bank conflict degree
    size_t smem;
    double eff;     // useful outputs / thread slots spent
    double balance; // the schedulers' share of a block step's work (cd_direct_balance)
};

// The most lanes of a block's first warp whose window loads fall in one shared-memory bank at
// different addresses, for plane width ws (the loads of one instruction differ by a constant).
static int cd_direct_conflicts(const cd_direct_args &a, const cd_direct_cfg &cf, int ws) {
    const int per_img = a.nb * a.ns;
    const long img = (long)a.g.c * a.hs * ws;
    long addr[32];
    int na = 0, cnt[32] = {0}, most = 0;
    for (int l = 0; l < 32 && l < a.kg * a.ib * per_img; l++) {
        int it = a.kin ? l / a.kg : l % (a.ib * per_img); // the item's place in the block's images
        int im = it / per_img, t = it % per_img, band = t / a.ns, seg = t % a.ns;
        long ad = im * img + (long)band * cf.tp * a.g.sh * ws + (long)seg * cf.tq * a.g.sw;
        bool seen = false;
        for (int j = 0; j < na; j++) seen |= addr[j] == ad;
        if (!seen) addr[na++] = ad, most = std::max(most, ++cnt[ad % 32]);
    }
    return most;
}

// How evenly a multiprocessor's four schedulers share the work of one block step: items are
// dealt to threads round-robin, warp w of resident block b sits on scheduler (b*W + w) % 4; the
// step lasts as long as the busiest scheduler's warp-items. 1 = even.
static double cd_direct_balance(long items, int threads, int bps) {
    const int nw = threads / 32;
    const long rounds = (items + threads - 1) / threads;
    long load[4] = {0, 0, 0, 0};
    for (int b = 0; b < bps; b++)
        for (int w = 0; w < nw; w++) {
            long busy = 0; // rounds in which warp w has an item
            for (long j = 0; j < rounds; j++) busy += j * threads + w * 32 < items;
            load[(b * nw + w) % 4] += busy;
        }
    long most = std::max(std::max(load[0], load[1]), std::max(load[2], load[3]));
    return most ? (double)(load[0] + load[1] + load[2] + load[3]) / (4.0 * most) : 0;
}

// Plans config cfg for shape g with ib images per block step and `threads` threads (a multiple of
// 32), items in order kin (see cd_direct_args); false when it cannot run it. The plane width is
// padded against bank conflicts.
static bool cd_direct_plan_cfg(const cd_shape &g, bool constw, int cfg, int ib, int threads, int kin, cd_direct_plan *pl) {
    const cd_direct_cfg &cf = cd_direct_cfgs[cfg];
    if (cf.win && (g.sw != 1 || g.s > CD_SMAX)) return false;
    if (g.pool > 1 && (cf.tp % g.pool || cf.tq % g.pool)) return false;
    if (g.pe < 1 || g.qe < 1) return false;
    cd_direct_args a = {};
    a.g = g;
    a.kp = cd_round_up(g.k, CD_KT);
    a.kg = a.kp / CD_KT;
    a.kin = kin && a.kg > 1;
    if (kin && !a.kin) return false; // the same as kin 0
    if ((long)g.c * g.r * g.s * a.kp > 16384) return false; // constant memory (and a sane shared-memory share)
    a.nb = cd_div_up(g.pe, cf.tp);
    a.ns = cd_div_up(g.qe, cf.tq);
    a.ib = ib;
    a.hs = (a.nb * cf.tp - 1) * g.sh + g.r;
    int ws0 = cf.win ? a.ns * cf.tq + CD_SMAX - 1 : (a.ns * cf.tq - 1) * g.sw + g.s, best_c = 1 << 30;
    for (int ws = ws0; ws < ws0 + 32; ws++) { // fewest conflicts; then 16-, then 8-byte rows; then narrowest
        int c = 4 * cd_direct_conflicts(a, cf, ws) + (ws % 4 == 0 ? 0 : ws % 2 == 0 ? 1 : 2);
        if (c < best_c) best_c = c, a.ws = ws;
    }
    pl->conflicts = best_c / 4;
    a.wfloats = constw ? 0 : cd_round_up(g.c * g.r * g.s * a.kp, 4);
    size_t smem = ((size_t)a.wfloats + 2 * (size_t)ib * g.c * a.hs * a.ws) * sizeof(float);
    cd_device d = cd_device_get();
    if (smem > (size_t)d.smem_optin) return false;
    cd_direct_fn fn = constw ? cd_direct_kernel_of<true>(cfg) : cd_direct_kernel_of<false>(cfg);
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, (const void *)fn) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    long items = (long)a.kg * ib * a.nb * a.ns;
    if (threads < 32 || threads % 32 || threads > fa.maxThreadsPerBlock || threads > cd_round_up((int)items, 32)) return false;
    int bps = cd_blocks_per_sm((const void *)fn, threads, smem);
    if (bps < 1) return false;
    long nsteps = cd_div_up((int)items, threads);
    pl->a = a;
    pl->fn = fn;
    pl->cfg = cfg;
    pl->threads = threads;
    pl->smem = smem;
    pl->bps = bps;
    pl->warps_sm = std::min(64, bps * threads / 32);
    int groups = cd_div_up(g.n, ib);
    pl->blocks = groups < d.sms * bps ? groups : d.sms * bps;
    // slots: every block step runs `nsteps` passes of `threads`; the last group may be partial
    double useful = (double)g.pe * g.qe * a.kg * g.n;
    double spent = (double)groups * nsteps * threads * cf.tp * cf.tq;
    pl->balance = cd_direct_balance(items, threads, bps);
    pl->eff = useful / spent;
    return true;
}

// Milliseconds of f() on the device: one warm-up, then the best of five.
template <class F> static double cd_time_ms(F f) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double best = 1e30;
    for (int i = 0; i < 6; i++) {
        cudaEventRecord(e0);
        f();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i > 0 && ms < best) best = ms;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (cudaGetLastError() != cudaSuccess) return 1e30;
    return best;
}

// Synthetic device buffers for timing candidate plans of g on n images (zeros: the kernels'
// speed does not depend on the values); ok false when memory is short.
struct cd_bench_bufs {
    float *x, *w, *b, *y;
    void *ws;
    bool ok;
};
static cd_bench_bufs cd_bench_alloc(const cd_shape &g, int n) {
    cd_bench_bufs t = {};
    size_t nx = (size_t)n * g.c * g.h * g.w, nw = (size_t)g.k * g.c * g.r * g.s, ny = (size_t)n * g.k * g.p * g.q;
    t.ok = cudaMalloc((void **)&t.x, nx * 4) == cudaSuccess && cudaMalloc((void **)&t.w, nw * 4) == cudaSuccess &&
           cudaMalloc((void **)&t.b, g.k * 4) == cudaSuccess && cudaMalloc((void **)&t.y, ny * 4) == cudaSuccess &&
           cudaMalloc(&t.ws, 16384 * 4) == cudaSuccess;
    if (t.ok) t.ok = cudaMemset(t.x, 0, nx * 4) == cudaSuccess && cudaMemset(t.w, 0, nw * 4) == cudaSuccess &&
                     cudaMemset(t.b, 0, g.k * 4) == cudaSuccess;
    cudaGetLastError();
    return t;
}
static void cd_bench_free(cd_bench_bufs &t) {
    cudaFree(t.x), cudaFree(t.w), cudaFree(t.b), cudaFree(t.y), cudaFree(t.ws);
    cudaGetLastError();
}
#define CD_BENCH_MIN_N 256  // smaller batches take the heuristic's choice
// Candidates are timed on this many images (or the batch, if smaller): 1024, or up to 4096 small
// ones (256 MB of input and output at most), so that every multiprocessor runs many block steps
// and the tail of the grid weighs as little as in a large batch.
static inline int cd_bench_batch(const cd_shape &g) {
    const double per_img = 4.0 * ((double)g.c * g.h * g.w + (double)g.k * g.p * g.q);
    const int cap = (int)std::min(4096.0, std::max(1024.0, (256.0 * (1 << 20)) / per_img));
    return std::min(g.n, cap);
}

static void cd_direct_run(const cd_direct_plan &pl, const float *x, const float *w, const float *b, float *y, bool relu,
                          void *ws);

// The config for g (force_cfg >= 0: that one). Each thread tile gets candidates over 1 to 4 images
// per block step, several block sizes and both item orders, scored by the fraction of thread slots
// that compute wanted outputs, times the schedulers' balance, a little more for bigger tiles, less
// under 16 resident warps per multiprocessor and for bank conflicts. For batches of
// CD_BENCH_MIN_N or more, each tile's best CD_DIRECT_KEEP candidates are timed on a synthetic
// batch and the fastest kept, as cuDNN's Find does; else the best score.
#define CD_DIRECT_KEEP 3
static bool cd_direct_plan_make(const cd_shape &g, bool constw, int force_cfg, cd_direct_plan *best) {
    cd_direct_plan cand[CD_DIRECT_NCFG][CD_DIRECT_KEEP];
    double score[CD_DIRECT_NCFG][CD_DIRECT_KEEP];
    int top_cfg = -1;
    for (int cfg = 0; cfg < CD_DIRECT_NCFG; cfg++) {
        for (int j = 0; j < CD_DIRECT_KEEP; j++) score[cfg][j] = -1;
        if (force_cfg >= 0 && cfg != force_cfg) continue;
        const cd_direct_cfg &cf = cd_direct_cfgs[cfg];
        for (int ib = 1; ib <= 4; ib++)
            for (int kin = 0; kin < 2; kin++) {
                // block sizes: an even split of the step's items into 1 to 3 passes, and 4 to 20 warps
                long items = (long)cd_div_up(g.k, CD_KT) * ib * cd_div_up(g.pe, cf.tp) * cd_div_up(g.qe, cf.tq);
                int sizes[8], ns = 0;
                for (int steps = 1; steps <= 3; steps++) sizes[ns++] = cd_round_up((int)cd_div_up((int)items, steps), 32);
                for (int w = 4; w <= 20; w += 4) sizes[ns++] = 32 * w;
                for (int si = 0; si < ns; si++) {
                    bool dup = false;
                    for (int sj = 0; sj < si; sj++) dup |= sizes[sj] == sizes[si];
                    if (dup) continue;
                    cd_direct_plan pl;
                    if (!cd_direct_plan_cfg(g, constw, cfg, ib, sizes[si], kin, &pl)) continue;
                    double sc = pl.eff * pl.balance * (1.0 + 0.004 * cf.tp * cf.tq) * sqrt(std::min(pl.warps_sm, 16) / 16.0) /
                                (1.0 + 0.05 * (pl.conflicts - 1));
                    // insert into this tile's top list
                    for (int j = 0; j < CD_DIRECT_KEEP; j++)
                        if (sc > score[cfg][j] + 1e-9) {
                            for (int m = CD_DIRECT_KEEP - 1; m > j; m--) score[cfg][m] = score[cfg][m - 1], cand[cfg][m] = cand[cfg][m - 1];
                            score[cfg][j] = sc, cand[cfg][j] = pl;
                            break;
                        }
                }
            }
        if (score[cfg][0] >= 0 && (top_cfg < 0 || score[cfg][0] > score[top_cfg][0])) top_cfg = cfg;
    }
    if (top_cfg < 0) return false;
    *best = cand[top_cfg][0];
    if (g.n < CD_BENCH_MIN_N) return true;
    const int nb = cd_bench_batch(g);
    cd_shape gb = g;
    gb.n = nb;
    cd_bench_bufs t = cd_bench_alloc(gb, nb);
    if (t.ok) {
        double best_ms = 1e30;
        for (int cfg = 0; cfg < CD_DIRECT_NCFG; cfg++)
            for (int j = 0; j < CD_DIRECT_KEEP; j++) {
                if (score[cfg][j] < 0 || score[cfg][j] < 0.6 * score[top_cfg][0]) continue; // hopeless ones are not timed
                cd_direct_plan pl = cand[cfg][j];
                pl.a.g.n = nb;
                pl.blocks = std::min(cd_div_up(nb, pl.a.ib), cd_device_get().sms * pl.bps);
                double ms = cd_time_ms([&] { cd_direct_run(pl, t.x, t.w, t.b, t.y, true, t.ws); });
                if (ms < best_ms) best_ms = ms, *best = cand[cfg][j];
            }
    }
    cd_bench_free(t);
    return true;
}

// (K, C, R, S) -> (C, R, S, KP) for the constant-memory copy
__global__ void cd_transpose_weights(const float *__restrict__ w, float *__restrict__ wt, int k, int crs, int kp) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < crs * kp; i += gridDim.x * blockDim.x) {
        int j = i / kp, kk = i - j * kp;
        wt[i] = kk < k ? w[(size_t)kk * crs + j] : 0.f;
    }
}

static inline size_t cd_direct_const_workspace(const cb_conv_params *p) {
    return (size_t)p->c * p->r * p->s * cd_round_up(p->k, CD_KT) * sizeof(float);
}

// Runs a plan. direct-const first transposes the weights into ws (cd_direct_const_workspace bytes)
// and copies them to constant memory: both on the stream, inside the layer's time.
static void cd_direct_run(const cd_direct_plan &pl, const float *x, const float *w, const float *b, float *y, bool relu,
                          void *ws) {
    cd_direct_args a = pl.a;
    a.x = x, a.w = w, a.bias = b, a.y = y, a.g.relu = relu;
    if (a.wfloats == 0) {
        int crs = a.g.c * a.g.r * a.g.s;
        cd_transpose_weights<<<cd_div_up(crs * a.kp, 256), 256>>>(w, (float *)ws, a.g.k, crs, a.kp);
        cudaMemcpyToSymbolAsync(cd_wconst, ws, (size_t)crs * a.kp * sizeof(float), 0, cudaMemcpyDeviceToDevice, 0);
    }
    pl.fn<<<pl.blocks, pl.threads, pl.smem>>>(a);
}

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

// ---- tensor cores: mma.sync, bf16 m16n8k16 or tf32 m16n8k8, fp32 accumulation ---------------------
//
// Output pixels come in pairs (q = 2u, 2u+1) and bands of RW = 4 rows. An "item" is (band b, pair
// u) of one image; 16 consecutive items are the M rows of a tile, and the warp computes that tile
// for each of the band's 4 rows v. The N side is (output channel k, shift dq): column n = 2k + dq
// of n-tile nt is channel 4nt + n/2, and B[s'][(k, dq)] = w[k][.][.][s' - dq], so that one row of A,
// A[m][s'] = x[row][2u + s'] (s' = 0..7), serves both pixels of the pair: 7 taps + 1 shift fill the
// 8 taps of a K group exactly, and every A pair (s' even) is an aligned 8-byte shared-memory load.
// K groups: bf16 k16 holds two 8-tap groups: two input channels at one filter row (CT = 4) or, for
// one input channel (CT = 1), two filter rows; tf32 k8 holds one group (c, r). Filters up to 7x7
// (RT = 7; smaller ones are zero-padded), stride 1. The warp streams input rows i = v + r once per
// tile and feeds each to every output row v it reaches; B (all weights) stays in registers.
#define CD_TC_RT 7

struct cd_tc_args {
    const float *x, *w, *bias;
    float *y;
    cd_shape g;
    int nu, nb, ntiles, hs, ws, nw; // pairs per row, bands, tiles per image; plane rows, cols; warps
    int rw;                         // rows per band (the kernel's RW)
    cb_fast_div nu_div;             // division by nu without a divide
};

__device__ __forceinline__ uint32_t cd_pack_bf16(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
__device__ __forceinline__ uint32_t cd_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ void cd_mma_bf16(float *d, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, const uint32_t *b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void cd_mma_tf32(float *d, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, const uint32_t *b) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ float cd_wval(const cd_shape &g, const float *__restrict__ w, int k, int c, int r, int s) {
    return (k < g.k && c < g.c && r < g.r && s >= 0 && s < g.s) ? w[(((size_t)k * g.c + c) * g.r + r) * g.s + s] : 0.f;
}

template <int CT, int NT, bool BF16, bool SPLIT> struct cd_tc_traits {
    // n-tiles per warp: with SPLIT two warps share a tile, each with half the filters (tf32 always:
    // B for 4 n-tiles would not fit in registers)
    static constexpr int NTW = (SPLIT || !BF16) && NT >= 2 ? NT / 2 : NT;
    static constexpr int NSPLIT = NT / NTW;                  // warps sharing one tile
    static constexpr int KSTEPS = BF16 ? (CT == 1 ? (CD_TC_RT + 1) / 2 : CD_TC_RT * CT / 2) : CD_TC_RT * CT;
};

template <int CT, int NT, bool BF16, bool SPLIT, int RW> __global__ void __launch_bounds__(256) cd_tc_kernel(cd_tc_args a) {
    using T = cd_tc_traits<CT, NT, BF16, SPLIT>;
    constexpr int NTW = T::NTW, NSPLIT = T::NSPLIT, KSTEPS = T::KSTEPS, RT = CD_TC_RT;
    static_assert(RW % 4 == 0, "a band holds whole pool windows of 2 and 4");
    extern __shared__ float4 cd_dyn[];
    float *sbuf = reinterpret_cast<float *>(cd_dyn);
    const cd_shape &g = a.g;
    const int plane = a.hs * a.ws, img_floats = CT * plane;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gq = lane >> 2, tq = lane & 3;
    const int nh = warp % NSPLIT;
    for (int i = threadIdx.x; i < 2 * img_floats; i += blockDim.x) sbuf[i] = 0.f;

    // B fragments of this warp's n-tiles, for every K step: the whole filter bank in registers
    uint32_t bfr[KSTEPS][NTW][2];
#pragma unroll
    for (int j = 0; j < KSTEPS; j++)
#pragma unroll
        for (int ntl = 0; ntl < NTW; ntl++) {
            const int nt = nh * NTW + ntl, k = 4 * nt + (gq >> 1), dq = gq & 1;
#pragma unroll
            for (int reg = 0; reg < 2; reg++) {
                if constexpr (BF16) {
                    float v[2];
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int kidx = 2 * tq + 8 * reg + e, h = kidx >> 3, sp = kidx & 7;
                        const int c = CT == 1 ? 0 : 2 * (j % (CT / 2)) + h, r = CT == 1 ? 2 * j + h : j / (CT / 2);
                        v[e] = cd_wval(g, a.w, k, c, r, sp - dq);
                    }
                    bfr[j][ntl][reg] = cd_pack_bf16(v[0], v[1]);
                } else {
                    const int sp = tq + 4 * reg, c = j % CT, r = j / CT;
                    bfr[j][ntl][reg] = cd_tf32(cd_wval(g, a.w, k, c, r, sp - dq));
                }
            }
        }
    __syncthreads();

    const int items = a.nb * a.nu, wpn = a.nw / NSPLIT;
    const float lo = g.relu ? 0.f : -INFINITY;
    int img = blockIdx.x, buf = 0;
    if (img < g.n) cd_stage(sbuf, a.x, img, 1, g.c, CT, g.h, g.w, a.hs, a.ws, g.pt, g.pl);
    cd_cp_commit();
    for (; img < g.n; img += gridDim.x, buf ^= 1) {
        const int nxt = img + gridDim.x;
        if (nxt < g.n) cd_stage(sbuf + (buf ^ 1) * img_floats, a.x, nxt, 1, g.c, CT, g.h, g.w, a.hs, a.ws, g.pt, g.pl);
        cd_cp_commit();
        cd_cp_wait_one();
        __syncthreads();
        const float *sx = sbuf + buf * img_floats;
        for (int tile = warp / NSPLIT; tile < a.ntiles; tile += wpn) {
            // this lane's two M rows: items tile*16 + gq and + 8
            int bm[2], um[2];
            bool ok[2];
            const float *xs[2];
#pragma unroll
            for (int m = 0; m < 2; m++) {
                const int idx = tile * 16 + gq + 8 * m;
                ok[m] = idx < items;
                bm[m] = ok[m] ? (int)cb_fast_div_q(a.nu_div, (uint32_t)idx) : 0;
                um[m] = ok[m] ? idx - bm[m] * a.nu : 0;
                xs[m] = sx + (RW * bm[m]) * a.ws + 2 * um[m];
            }
            float acc[RW][NTW][4];
#pragma unroll
            for (int v = 0; v < RW; v++)
#pragma unroll
                for (int ntl = 0; ntl < NTW; ntl++)
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[v][ntl][e] = 0.f;
            if constexpr (BF16 && CT == 1) {
                uint32_t p0 = 0, p1 = 0; // the previous input row's A halves (M rows gq, gq+8)
#pragma unroll
                for (int i = 0; i < RW + RT - 1; i++) {
                    const float2 v0 = *reinterpret_cast<const float2 *>(xs[0] + i * a.ws + 2 * tq);
                    const float2 v1 = *reinterpret_cast<const float2 *>(xs[1] + i * a.ws + 2 * tq);
                    const uint32_t c0 = cd_pack_bf16(v0.x, v0.y), c1 = cd_pack_bf16(v1.x, v1.y);
#pragma unroll
                    for (int v = 0; v < RW; v++) {
                        const int r = i - v; // filter row of input row i for output row v
                        if (r >= 1 && r < RT && (r & 1))
#pragma unroll
                            for (int ntl = 0; ntl < NTW; ntl++) cd_mma_bf16(acc[v][ntl], p0, p1, c0, c1, bfr[(r - 1) / 2][ntl]);
                        if ((RT & 1) && r == RT - 1)
#pragma unroll
                            for (int ntl = 0; ntl < NTW; ntl++) cd_mma_bf16(acc[v][ntl], c0, c1, 0u, 0u, bfr[RT / 2][ntl]);
                    }
                    p0 = c0, p1 = c1;
                }
            } else if constexpr (BF16) {
#pragma unroll
                for (int i = 0; i < RW + RT - 1; i++) {
                    uint32_t c0[CT], c1[CT];
#pragma unroll
                    for (int ch = 0; ch < CT; ch++) {
                        const float2 v0 = *reinterpret_cast<const float2 *>(xs[0] + ch * plane + i * a.ws + 2 * tq);
                        const float2 v1 = *reinterpret_cast<const float2 *>(xs[1] + ch * plane + i * a.ws + 2 * tq);
                        c0[ch] = cd_pack_bf16(v0.x, v0.y), c1[ch] = cd_pack_bf16(v1.x, v1.y);
                    }
#pragma unroll
                    for (int v = 0; v < RW; v++) {
                        const int r = i - v;
                        if (r < 0 || r >= RT) continue;
#pragma unroll
                        for (int cp = 0; cp < CT / 2; cp++)
#pragma unroll
                            for (int ntl = 0; ntl < NTW; ntl++)
                                cd_mma_bf16(acc[v][ntl], c0[2 * cp], c1[2 * cp], c0[2 * cp + 1], c1[2 * cp + 1], bfr[r * (CT / 2) + cp][ntl]);
                    }
                }
            } else {
#pragma unroll
                for (int i = 0; i < RW + RT - 1; i++) {
                    uint32_t a0[CT], a1[CT], a2[CT], a3[CT];
#pragma unroll
                    for (int ch = 0; ch < CT; ch++) {
                        const float *r0 = xs[0] + ch * plane + i * a.ws, *r1 = xs[1] + ch * plane + i * a.ws;
                        a0[ch] = cd_tf32(r0[tq]), a1[ch] = cd_tf32(r1[tq]), a2[ch] = cd_tf32(r0[tq + 4]), a3[ch] = cd_tf32(r1[tq + 4]);
                    }
#pragma unroll
                    for (int v = 0; v < RW; v++) {
                        const int r = i - v;
                        if (r < 0 || r >= RT) continue;
#pragma unroll
                        for (int ch = 0; ch < CT; ch++)
#pragma unroll
                            for (int ntl = 0; ntl < NTW; ntl++) cd_mma_tf32(acc[v][ntl], a0[ch], a1[ch], a2[ch], a3[ch], bfr[r * CT + ch][ntl]);
                    }
                }
            }
            // epilogue: acc[v][ntl][2m + dq] is channel 4nt + tq, row RW*b + v, column 2u + dq of M row m
#pragma unroll
            for (int ntl = 0; ntl < NTW; ntl++) {
                const int k = 4 * (nh * NTW + ntl) + tq;
                const bool kok = k < g.k;
                const float bk = (kok && a.bias) ? a.bias[k] : 0.f;
                if (g.pool == 1) {
                    if (!kok) continue;
                    float *yk = a.y + ((size_t)img * g.k + k) * g.p * g.q;
#pragma unroll
                    for (int v = 0; v < RW; v++)
#pragma unroll
                        for (int m = 0; m < 2; m++) {
                            const int p = RW * bm[m] + v, q = 2 * um[m];
                            if (!ok[m] || p >= g.p) continue;
                            const float y0 = fmaxf(acc[v][ntl][2 * m] + bk, lo), y1 = fmaxf(acc[v][ntl][2 * m + 1] + bk, lo);
                            float *yr = yk + (size_t)p * g.q + q;
                            if (q + 1 < g.q) {
                                if ((g.q & 1) == 0) *reinterpret_cast<float2 *>(yr) = make_float2(y0, y1);
                                else yr[0] = y0, yr[1] = y1;
                            } else {
                                yr[0] = y0;
                            }
                        }
                } else if (g.pool == 2) {
                    const int pp_n = g.pe / 2, pq_n = g.qe / 2;
                    float *yk = a.y + ((size_t)img * g.k + k) * pp_n * pq_n;
#pragma unroll
                    for (int v = 0; v < RW; v += 2)
#pragma unroll
                        for (int m = 0; m < 2; m++) {
                            const float mx = fmaxf(fmaxf(acc[v][ntl][2 * m], acc[v][ntl][2 * m + 1]),
                                                   fmaxf(acc[v + 1][ntl][2 * m], acc[v + 1][ntl][2 * m + 1]));
                            const int pp = (RW * bm[m] + v) / 2, pq = um[m];
                            if (kok && ok[m] && pp < pp_n && pq < pq_n) yk[(size_t)pp * pq_n + pq] = fmaxf(mx + bk, lo);
                        }
                } else { // pool 4: rows v0..v0+3, columns 2u..2u+3 across this lane and lane ^ 4 (M row gq ^ 1)
                    const int pp_n = g.pe / 4, pq_n = g.qe / 4;
                    float *yk = a.y + ((size_t)img * g.k + (kok ? k : 0)) * pp_n * pq_n;
#pragma unroll
                    for (int v0 = 0; v0 < RW; v0 += 4)
#pragma unroll
                        for (int m = 0; m < 2; m++) {
                            float mx = -INFINITY;
#pragma unroll
                            for (int v = v0; v < v0 + 4; v++) mx = fmaxf(mx, fmaxf(acc[v][ntl][2 * m], acc[v][ntl][2 * m + 1]));
                            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
                            const int pp = (RW * bm[m] + v0) / 4, pq = um[m] >> 1;
                            if (kok && ok[m] && (gq & 1) == 0 && pp < pp_n && pq < pq_n) yk[(size_t)pp * pq_n + pq] = fmaxf(mx + bk, lo);
                        }
                }
            }
        }
        __syncthreads();
    }
}

typedef void (*cd_tc_fn)(cd_tc_args);

struct cd_tc_plan {
    cd_tc_args a;
    cd_tc_fn fn;
    int threads, blocks, bps, nsplit;
    size_t smem;
};

// The kernel for (channels ct, n-tiles nt, bf16, split, rows per band rw), NULL where not compiled:
// 8-row bands (fewer input rows staged per output row, twice the accumulators) only where the
// registers allow, for one input channel and for bf16 with the filters split over two warps.
static cd_tc_fn cd_tc_kernel_of(int ct, int nt, bool bf16, bool split, int rw) {
    if (rw == 16) return ct == 1 && nt == 1 && bf16 ? cd_tc_kernel<1, 1, true, false, 16> : NULL;
    if (rw == 8) {
        if (ct == 1 && nt == 1) return bf16 ? cd_tc_kernel<1, 1, true, false, 8> : cd_tc_kernel<1, 1, false, false, 8>;
        if (ct == 4 && nt == 4 && bf16 && split) return cd_tc_kernel<4, 4, true, true, 8>;
        return NULL;
    }
    if (rw != 4) return NULL;
    if (bf16 && !split)
        return ct == 1 ? (nt == 1 ? cd_tc_kernel<1, 1, true, false, 4> : cd_tc_kernel<1, 4, true, false, 4>)
                       : (nt == 1 ? cd_tc_kernel<4, 1, true, false, 4> : cd_tc_kernel<4, 4, true, false, 4>);
    if (bf16)
        return ct == 1 ? (nt == 1 ? cd_tc_kernel<1, 1, true, false, 4> : cd_tc_kernel<1, 4, true, true, 4>)
                       : (nt == 1 ? cd_tc_kernel<4, 1, true, false, 4> : cd_tc_kernel<4, 4, true, true, 4>);
    return ct == 1 ? (nt == 1 ? cd_tc_kernel<1, 1, false, false, 4> : cd_tc_kernel<1, 4, false, false, 4>)
                   : (nt == 1 ? cd_tc_kernel<4, 1, false, false, 4> : cd_tc_kernel<4, 4, false, false, 4>);
}

// Runs stride-1 layers with R, S <= 7, C <= 4 and K <= 16 whose staged image fits shared memory
// twice; a fused pool of 2 or 4. split: bf16 with the filters split over two warps (tf32 always).
// nw: warps per block (0: the count that spreads an image's tiles most evenly). rw: output rows
// per band, 4, 8 or 16 (where compiled, see cd_tc_kernel_of).
static bool cd_tc_plan_make(const cd_shape &g, bool bf16, bool split, int nw, int rw, cd_tc_plan *pl) {
    if (g.sh != 1 || g.sw != 1 || g.r > CD_TC_RT || g.s > CD_TC_RT || g.c > 4 || g.k > 16) return false;
    if (g.pool != 1 && g.pool != 2 && g.pool != 4) return false;
    if (g.pe < 1 || g.qe < 1) return false;
    const int ct = g.c == 1 ? 1 : 4, nt = g.k <= 4 ? 1 : 4;
    cd_tc_fn fn = cd_tc_kernel_of(ct, nt, bf16, split, rw);
    if (!fn) return false;
    const int nsplit = (bf16 && !split) || nt == 1 ? 1 : 2;
    cd_tc_args a = {};
    a.g = g;
    a.rw = rw;
    a.nu = cd_div_up(g.qe, 2);
    a.nb = cd_div_up(g.pe, rw);
    a.ntiles = cd_div_up(a.nb * a.nu, 16);
    a.nu_div = cb_fast_div_make((uint32_t)a.nu);
    // the plane: the rows and columns the tiles read; the image itself where it holds them (no
    // padding), so that staging is a flat copy (the tiles read inside it)
    const int hs_need = a.nb * rw + CD_TC_RT - 1, ws_need = 2 * a.nu + 6;
    if (g.pt == 0 && g.pl == 0 && hs_need <= g.h && ws_need <= g.w && g.w % 2 == 0) a.hs = g.h, a.ws = g.w;
    else a.hs = hs_need, a.ws = cd_round_up(ws_need, 4);
    size_t smem = 2 * (size_t)ct * a.hs * a.ws * sizeof(float);
    if (smem > (size_t)cd_device_get().smem_optin) return false;
    // warps per block: 4 to 8, a multiple of nsplit, spreading the tiles most evenly (fewer on ties)
    int best_nw = 0;
    double best_eff = 0;
    for (int w = 4; w <= 8; w++) {
        if (w % nsplit) continue;
        int wpn = w / nsplit, per = cd_div_up(a.ntiles, wpn);
        double eff = (double)a.ntiles / ((double)wpn * per);
        if (eff > best_eff + 1e-9) best_eff = eff, best_nw = w;
    }
    if (nw) {
        if (nw < 1 || nw > 8 || nw % nsplit) return false;
        best_nw = nw;
    }
    a.nw = best_nw;
    int bps = cd_blocks_per_sm((const void *)fn, 32 * best_nw, smem);
    if (bps < 1) return false;
    pl->a = a;
    pl->fn = fn;
    pl->threads = 32 * best_nw;
    pl->nsplit = nsplit;
    pl->smem = smem;
    pl->bps = bps;
    int most = cd_device_get().sms * bps;
    pl->blocks = g.n < most ? g.n : most;
    return true;
}

static void cd_tc_run(const cd_tc_plan &pl, const float *x, const float *w, const float *b, float *y, bool relu) {
    cd_tc_args a = pl.a;
    a.x = x, a.w = w, a.bias = b, a.y = y, a.g.relu = relu;
    pl.fn<<<pl.blocks, pl.threads, pl.smem>>>(a);
}

// The engine's choice: for batches of CD_BENCH_MIN_N or more, every band height, split (bf16 with
// 16 filters) and block size timed on a synthetic batch, the fastest kept; else split when not pooling (the
// unsplit bf16 kernel spills a little in the plain epilogue) and the most even block size.
static bool cd_tc_plan_best(const cd_shape &g, bool bf16, cd_tc_plan *best) {
    if (!cd_tc_plan_make(g, bf16, bf16 && g.pool == 1, 0, 4, best)) return false;
    if (g.n < CD_BENCH_MIN_N) return true;
    const int nb = cd_bench_batch(g);
    cd_shape gb = g;
    gb.n = nb;
    cd_bench_bufs t = cd_bench_alloc(gb, nb);
    if (t.ok) {
        double best_ms = 1e30;
        for (int rw = 4; rw <= 16; rw *= 2)
            for (int split = 0; split < (bf16 ? 2 : 1); split++)
                for (int nw = 4; nw <= 8; nw++) {
                    cd_tc_plan pl;
                    if (!cd_tc_plan_make(g, bf16, split, nw, rw, &pl)) continue;
                    cd_tc_plan run = pl;
                    run.a.g.n = nb;
                    run.blocks = std::min(nb, cd_device_get().sms * pl.bps);
                    double ms = cd_time_ms([&] { cd_tc_run(run, t.x, t.w, t.b, t.y, true); });
                    if (ms < best_ms) best_ms = ms, *best = pl;
                }
    }
    cd_bench_free(t);
    return true;
}

#endif
