// The lab's warp-specialized wgmma convolution (tiles 6-8 of dev/cuda/wgmma_lab.cu), on the
// library's cb_wg_args, gather and staged store (src/cuda/igemm_wgmma.cuh). Measured slower than the
// library's tiles (docs/results/2026-11-28-epistage.md) and so not in the library: kept as the
// pipeline a TMA im2col producer is to feed.
#ifndef CB_DEV_WGMMA_WS_CUH
#define CB_DEV_WGMMA_WS_CUH

#include "cuda/igemm_wgmma.cuh"

// A producer warpgroup and two consumer warpgroups.
//
// 384 threads. Warpgroup 0 gathers every k-step of the block's tiles (blockIdx.x, + gridDim.x, ...)
// into STAGES buffers with cp.async, BM rows of A and BN rows of B a step; each thread's copies
// arrive on the step's full barrier as they land (cp.async.mbarrier.arrive.noinc, 128 arrivals), and
// it waits only for a free buffer (the step's empty barrier). A consumer waits on the full barrier,
// fences the proxies (the copies are the generic proxy's writes, the wgmma reads the async proxy's),
// issues the step's wgmma as one group, and once the group before has retired releases that
// group's buffer (one arrival per warp). !COOP: the consumers take the tiles in turn (tile j of the
// block to consumer j % 2), each a whole WM x BN tile, their main loops in tile order (the done
// barriers), so one stores a tile (the staged epilogue) while the other multiplies the next. COOP:
// both take every tile, consumer c its rows WM c, as cb_wgmma_conv_kernel's warpgroups do.
// Measured on the H200 (2026-11-28, docs/results/2026-11-28-epistage.md): 1.13-1.6x the time of the
// tiles above on the lab's layers; one producer warpgroup's cp.async gathers do not keep the tensor
// cores fed (cuDNN's persistent 128x128 kernel, 384 threads, fed by TMA, reaches 93% of the SM's
// throughput where cb_wgmma_conv_kernel reaches 64%, Nsight Compute).
__device__ __forceinline__ void cb_wg_bar_init(uint32_t b, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(b), "r"(count) : "memory");
}
__device__ __forceinline__ void cb_wg_bar_arrive(uint32_t b) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(b) : "memory");
}
__device__ __forceinline__ void cb_wg_bar_wait(uint32_t b, uint32_t parity) {
    asm volatile("{\n.reg .pred p;\nWAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra WAIT_%=;\n}\n" ::"r"(b), "r"(parity) : "memory");
}

template <int WM, int BN, int STAGES, bool COOP>
__global__ void __launch_bounds__(384, 1) cb_wgmma_ws_kernel(cb_wg_args a) {
#ifdef CB_WG_SM90A
    constexpr int MT = WM / 64, BM = COOP ? 2 * WM : WM, A_BYTES = BM * 128, STAGE = A_BYTES + BN * 128;
    constexpr int AR = BM / 16, BR = BN / 16; // rows of A and B per producer thread per step
    extern __shared__ unsigned char cb_wg_raw[];
    const uint32_t base = (cb_wg_smem(cb_wg_raw) + 1023u) & ~1023u;
    const uint32_t epi = base + STAGES * STAGE, full = epi + 8 * 2048, empty = full + 8 * STAGES, done = empty + 8 * STAGES;
    const int tid = threadIdx.x, wg = tid >> 7;
    const int ntn = (a.k + BN - 1) / BN, ntiles = (a.m + BM - 1) / BM * ntn, nk = a.nk;
    if (tid == 0)
        for (int i = 0; i < STAGES; i++) cb_wg_bar_init(full + 8 * i, 128), cb_wg_bar_init(empty + 8 * i, COOP ? 8 : 4);
    if (tid == 0) cb_wg_bar_init(done, 4), cb_wg_bar_init(done + 8, 4);
    __syncthreads();

    if (wg == 0) { // the producer, its registers given over to the consumers
        asm volatile("setmaxnreg.dec.sync.aligned.u32 120;\n" ::: "memory");
        const int ch = tid & 7, row0 = tid >> 3, H = a.h, W = a.w_, C = a.c;
        const long rsc = (long)nk * 64;
        const uint32_t sw_off = row0 * 128 + ((ch ^ (row0 & 7)) << 4); // (row0 + 16 i) % 8 == row0 % 8
        int a_off[AR], a_ih[AR], a_iw[AR];
        int it = 0;
        for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
            const int m0 = (tile / ntn) * BM, n0 = (tile % ntn) * BN;
#pragma unroll
            for (int i = 0; i < AR; i++) {
                int m = m0 + row0 + 16 * i;
                if (m < a.m) {
                    int nn = cb_div(a.d_pq, m), o = m - nn * (a.p * a.q), oh = cb_div(a.d_q, o), ow = o - oh * a.q;
                    a_ih[i] = oh * a.sh - a.pt, a_iw[i] = ow * a.sw - a.pl;
                    a_off[i] = ((nn * H + a_ih[i]) * W + a_iw[i]) * C + ch * 8;
                } else {
                    a_ih[i] = -(1 << 28), a_iw[i] = 0, a_off[i] = 0;
                }
            }
            int lr = 0, ls = 0, lc = 0;
            for (int t = 0; t < nk; t++, it++) {
                const int slot = it % STAGES;
                if (it >= STAGES) cb_wg_bar_wait(empty + 8 * slot, ((it / STAGES) & 1) ^ 1);
                const int doff = (lr * W + ls) * C + lc;
                const uint32_t ad = base + slot * STAGE + sw_off, bd = ad + A_BYTES;
#pragma unroll
                for (int i = 0; i < AR; i++) {
                    bool ok = (unsigned)(a_ih[i] + lr) < (unsigned)H && (unsigned)(a_iw[i] + ls) < (unsigned)W;
                    cb_wg_cp16(ad + i * 16 * 128, ok ? a.x + a_off[i] + doff : a.x, ok);
                }
#pragma unroll
                for (int i = 0; i < BR; i++) {
                    int k = n0 + row0 + 16 * i;
                    bool ok = k < a.k;
                    cb_wg_cp16(bd + i * 16 * 128, ok ? a.w + k * rsc + t * 64 + ch * 8 : a.w, ok);
                }
                // the step's full barrier gets this thread's arrival once its copies have landed
                asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(full + 8 * slot) : "memory");
                lc += 64;
                if (lc == C) {
                    lc = 0;
                    if (++ls == a.s) ls = 0, lr++;
                }
            }
        }
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        return;
    }

    // a consumer, c = 0 or 1: COOP, rows WM c of every tile; else tiles j = c, c + 2, ... of the
    // block (it counts every step of the block)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 192;\n" ::: "memory"); // 168 each at launch: 128 x 120 + 256 x 192 (no spills)
    const int c = wg - 1, lane = tid & 31, wv = (tid >> 5) & 3, row_off = COOP ? c * WM : 0;
    const uint32_t ep = epi + ((tid >> 5) - 4) * 2048;
    float acc[MT][BN / 2];
    int it = 0;
    for (int tile = blockIdx.x, j = 0; tile < ntiles; tile += gridDim.x, j++) {
        if (!COOP && (j & 1) != c) {
            it += nk;
            continue;
        }
        // the multiplies in tile order: tile j's start once tile j - 1's (the other consumer's) are
        // issued and retired (done[1 - c]'s phase j / 2 for c = 1, j / 2 - 1 for c = 0); so each
        // full barrier waited on is at most one phase from the step's, as a wait on parity needs
        // (a consumer skipping ahead would take a phase long past for its own)
        if (!COOP && j > 0) cb_wg_bar_wait(done + 8 * (1 - c), ((j >> 1) - (c == 0)) & 1);
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int q = 0; q < BN / 2; q++) acc[i][q] = 0.f;
        for (int t = 0; t < nk; t++, it++) {
            const int slot = it % STAGES;
            cb_wg_bar_wait(full + 8 * slot, (it / STAGES) & 1);
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // the copies (generic proxy) before the wgmma's reads
            cb_wg_fence();
            const uint32_t as = base + slot * STAGE, bs = as + A_BYTES;
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int i = 0; i < MT; i++) cb_wgmma<BN>(acc[i], cb_wg_desc(as + (row_off / 64 + i) * 8192 + kk * 32), cb_wg_desc(bs + kk * 32));
            cb_wg_commit();
            cb_wg_wait<1>();
            if (t > 0 && lane == 0) cb_wg_bar_arrive(empty + 8 * ((it - 1) % STAGES));
        }
        cb_wg_wait<0>();
        if (lane == 0) {
            cb_wg_bar_arrive(empty + 8 * ((it - 1) % STAGES));
            if (!COOP) cb_wg_bar_arrive(done + 8 * c);
        }

        cb_wg_store_bf16<MT, BN>(acc, a, ep, (tile / ntn) * BM + row_off, (tile % ntn) * BN, lane, wv); // the staged store
    }
#else
    __trap();
#endif
}

template <int WM, int BN, bool COOP> static void cb_wg_ws_launch_t(const cb_wg_args &a, cudaStream_t st) {
    constexpr int BM = COOP ? 2 * WM : WM, STAGE = BM * 128 + BN * 128, FIT = (220 * 1024 - 8 * 2048) / STAGE, STAGES = FIT > 6 ? 6 : FIT;
    constexpr int BYTES = STAGES * STAGE + 8 * 2048 + 16 * STAGES + 16 + 1024;
    static unsigned long long attr_devs = 0;
    if (cb_first_on_device(&attr_devs))
        cudaFuncSetAttribute(cb_wgmma_ws_kernel<WM, BN, STAGES, COOP>, cudaFuncAttributeMaxDynamicSharedMemorySize, BYTES);
    long tiles = (long)((a.m + BM - 1) / BM) * ((a.k + BN - 1) / BN);
    cb_wgmma_ws_kernel<WM, BN, STAGES, COOP><<<(unsigned)cb_wg_grid(tiles), 384, BYTES, st>>>(a);
}

// tile 6: 128x128 a consumer in turn; 7: 128x256 and 8: 256x128, both consumers on each tile
enum { CB_WS_TILE0 = CB_WG_TILES, CB_WS_TILES = 3 };
static inline void cb_wg_ws_launch(const cb_wg_args &a, int t, cudaStream_t st = 0) {
    if (a.m <= 0 || a.k <= 0) return;
    if (t == CB_WS_TILE0) cb_wg_ws_launch_t<128, 128, false>(a, st);
    else if (t == CB_WS_TILE0 + 1) cb_wg_ws_launch_t<64, 256, true>(a, st);
    else cb_wg_ws_launch_t<128, 128, true>(a, st);
}

#endif
