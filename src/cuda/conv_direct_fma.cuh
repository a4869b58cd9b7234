// Direct convolution, fp32 FMA ("direct-const", "direct-smem" and their "+pool" twins): see
// conv_direct.cuh.
#ifndef CB_CUDA_CONV_DIRECT_FMA_CUH
#define CB_CUDA_CONV_DIRECT_FMA_CUH

#include "cuda/conv_direct_common.cuh"

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


#endif
