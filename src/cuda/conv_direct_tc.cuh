// Direct convolution on tensor cores, mma.sync bf16 or tf32 with fp32 accumulation
// ("direct-tf32", "direct-bf16" and their "+pool" twins): see conv_direct.cuh.
#ifndef CB_CUDA_CONV_DIRECT_TC_CUH
#define CB_CUDA_CONV_DIRECT_TC_CUH

#include "cuda/conv_direct_common.cuh"

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
