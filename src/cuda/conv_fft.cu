// FFT convolution through cuFFT (fp32), all three phases, for stride 1 and groups 1. The math,
// step by step and checked against PyTorch, is dev/fft_conv_proto.py; in short:
//   the padded input region the convolution reads is Hp x Wp = (P + R - 1) x (Q + S - 1); every
//   plane (input, filter, output gradient) is placed, zero-padded, in an Hf x Wf tile
//   (Hf >= Hp, Wf >= Wp, 7-smooth sizes, Wf even), so no index wraps around the tile; R2C gives
//   Hf x (Wf/2+1) frequencies per plane, stored [plane][Fp] (Fp: rounded up to 32). Per
//   frequency, a complex GEMM (own kernel below) over the interleaved spectra:
//     forward          Y[n,k]  = sum_c X[n,c] conj(W[k,c])
//     backward data    DX[n,c] = sum_k DY[n,k] W[k,c]
//     backward filter  DW[k,c] = sum_n conj(DY[n,k]) X[n,c]
//   then C2R and a crop that scales by 1/(Hf Wf) (and adds the bias, applies the ReLU).
// Workspace (each region 256-byte aligned): one real tile buffer for max(NC, KC, NK) planes
// (pad before R2C, the C2R output before the crop), the spectra of NC, KC and NK planes, and
// cuFFT's work area (the largest of the phase's three plans). Plans are made when supports() is
// asked (not inside a timed call), kept in a small table keyed by transform, size and batch, and
// destroyed at exit.
#include "cuda/common.cuh"
#include "cuda/conv_algo.h"
#include "cuda/launch.h"

#include <cufft.h>

#include <mutex>
#include <stdio.h>

// an FFT tile beyond this, or a workspace beyond this, is not offered
#define FFT_MAX_SIDE 4096
#define FFT_MAX_WORKSPACE ((size_t)4 << 30)

// ---- sizes and workspace layout ---------------------------------------------------------------

// the smallest m >= n with no prime factor above 7 (cuFFT's fast sizes), even when asked
static int fft_size(int n, bool even) {
    for (int m = n < 1 ? 1 : n;; m++) {
        int t = m;
        for (int f = 2; f <= 7; f++)
            while (t % f == 0) t /= f;
        if (t == 1 && (!even || m % 2 == 0)) return m;
    }
}

typedef struct fft_layout {
    int hp, wp;            // the padded input region the convolution reads
    int hf, wf;            // FFT tile
    size_t f, fp;          // frequencies per plane, and the plane stride in complex numbers
    size_t nc, kc, nk;     // planes of x / dx, w / dw, y / dy
    size_t off_sx, off_sw, off_sy, off_work, real_bytes, spec_bytes;
} fft_layout;

static size_t align256(size_t v) { return (v + 255) & ~(size_t)255; }

// sizes of everything but cuFFT's work area; false when the shape is out of range
static bool fft_layout_of(const cb_conv_params *p, fft_layout *L) {
    if (p->stride_h != 1 || p->stride_w != 1 || p->groups != 1 || p->pad_top < 0 || p->pad_left < 0) return false;
    if (p->n < 1 || p->c < 1 || p->k < 1 || p->p < 1 || p->q < 1 || p->r < 1 || p->s < 1) return false;
    L->hp = p->p + p->r - 1, L->wp = p->q + p->s - 1;
    if (L->hp > FFT_MAX_SIDE || L->wp > FFT_MAX_SIDE) return false;
    L->hf = fft_size(L->hp, false), L->wf = fft_size(L->wp, true);
    if (L->hf > FFT_MAX_SIDE || L->wf > FFT_MAX_SIDE) return false;
    L->f = (size_t)L->hf * (L->wf / 2 + 1);
    L->fp = (L->f + 31) / 32 * 32;
    if (L->fp / 32 > 65535) return false; // the GEMM's grid.y
    L->nc = (size_t)p->n * p->c, L->kc = (size_t)p->k * p->c, L->nk = (size_t)p->n * p->k;
    size_t planes = L->nc > L->kc ? L->nc : L->kc;
    if (L->nk > planes) planes = L->nk;
    if (planes > (size_t)1 << 30) return false;
    L->real_bytes = align256(planes * L->hf * L->wf * sizeof(float));
    L->off_sx = L->real_bytes;
    L->off_sw = L->off_sx + align256(L->nc * L->fp * sizeof(float2));
    L->off_sy = L->off_sw + align256(L->kc * L->fp * sizeof(float2));
    L->off_work = L->off_sy + align256(L->nk * L->fp * sizeof(float2));
    L->spec_bytes = L->off_work;
    // cuFFT's plans take an int batch and int distances; the real tiles stay below 2^31 floats
    return L->spec_bytes <= FFT_MAX_WORKSPACE && planes * L->hf * L->wf < ((size_t)1 << 31) &&
           planes * L->fp < ((size_t)1 << 31);
}

// ---- cuFFT plans: made once per (direction, tile, batch), work area supplied by the caller ------

static const char *cufft_error(cufftResult r) {
    switch (r) {
    case CUFFT_SUCCESS: return "success";
    case CUFFT_INVALID_PLAN: return "invalid plan";
    case CUFFT_ALLOC_FAILED: return "allocation failed";
    case CUFFT_INVALID_VALUE: return "invalid value";
    case CUFFT_INTERNAL_ERROR: return "internal error";
    case CUFFT_EXEC_FAILED: return "execution failed";
    case CUFFT_SETUP_FAILED: return "setup failed";
    case CUFFT_INVALID_SIZE: return "invalid size";
    default: return "error";
    }
}

typedef struct fft_plan {
    bool used;
    int dev;                    // the CUDA device the plan was made on (a plan is per device)
    int inverse, hf, wf, batch; // inverse: C2R, else R2C
    size_t fp;
    cufftHandle h;
    size_t work;
    unsigned long stamp; // last use, for eviction
} fft_plan;

#define FFT_PLANS 48
static fft_plan plans[FFT_PLANS];
static unsigned long plan_clock;
static std::mutex plan_mutex;
static bool plans_atexit;

static void plans_destroy(void) {
    std::lock_guard<std::mutex> lock(plan_mutex);
    for (int i = 0; i < FFT_PLANS; i++)
        if (plans[i].used) cufftDestroy(plans[i].h), plans[i].used = false;
}

// one complaint per kind of failure, on stderr
static void fft_complain(const char *what, cufftResult r) {
    static int said[16];
    int k = (int)r & 15;
    if (said[k]++) return;
    fprintf(stderr, "convbench: fft-cufft: %s: cuFFT %s (%d)\n", what, cufft_error(r), (int)r);
}

// the plan, made on first use; NULL when cuFFT cannot make it
static const fft_plan *plan_get(int inverse, int hf, int wf, size_t fp, size_t batch) {
    std::lock_guard<std::mutex> lock(plan_mutex);
    int dev = 0;
    cudaGetDevice(&dev);
    fft_plan *slot = &plans[0];
    for (int i = 0; i < FFT_PLANS; i++) {
        fft_plan *e = &plans[i];
        if (e->used && e->dev == dev && e->inverse == inverse && e->hf == hf && e->wf == wf && e->fp == fp && e->batch == (int)batch) {
            e->stamp = ++plan_clock;
            return e;
        }
        if (!e->used || (slot->used && e->stamp < slot->stamp)) slot = e;
    }
    // the least recently used goes (cufftDestroy frees through cudaFree, which waits for queued work)
    if (slot->used) cufftDestroy(slot->h), slot->used = false;
    if (!plans_atexit) atexit(plans_destroy), plans_atexit = true; // after CUDA's own: runs before it
    int n[2] = {hf, wf}, rembed[2] = {hf, wf}, cembed[2] = {hf, wf / 2 + 1};
    int rdist = hf * wf, cdist = (int)fp;
    cufftHandle h;
    size_t work = 0;
    cufftResult r = cufftCreate(&h);
    if (r != CUFFT_SUCCESS) {
        fft_complain("cufftCreate", r);
        return NULL;
    }
    r = cufftSetAutoAllocation(h, 0);
    if (r == CUFFT_SUCCESS) r = cufftSetStream(h, cudaStreamPerThread); // the stream a step graph captures
    if (r == CUFFT_SUCCESS)
        r = inverse ? cufftMakePlanMany(h, 2, n, cembed, 1, cdist, rembed, 1, rdist, CUFFT_C2R, (int)batch, &work)
                    : cufftMakePlanMany(h, 2, n, rembed, 1, rdist, cembed, 1, cdist, CUFFT_R2C, (int)batch, &work);
    if (r != CUFFT_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "plan %s %dx%d batch %zu", inverse ? "C2R" : "R2C", hf, wf, batch);
        fft_complain(what, r);
        cufftDestroy(h);
        return NULL;
    }
    *slot = fft_plan{true, dev, inverse, hf, wf, (int)batch, fp, h, work, ++plan_clock};
    return slot;
}

// the three transforms a phase runs: two R2C (batches a, b) and one C2R (batch c)
static void phase_batches(const fft_layout *L, cb_phase ph, size_t bt[3]) {
    if (ph == CB_PHASE_FORWARD) bt[0] = L->nc, bt[1] = L->kc, bt[2] = L->nk;
    else if (ph == CB_PHASE_BWD_DATA) bt[0] = L->nk, bt[1] = L->kc, bt[2] = L->nc;
    else bt[0] = L->nc, bt[1] = L->nk, bt[2] = L->kc;
}

// the layout and the phase's plans (made now if new); false when the shape or a plan fails
static bool fft_prepare(const cb_conv_params *p, cb_phase ph, fft_layout *L, const fft_plan *pl[3]) {
    if (!fft_layout_of(p, L)) return false;
    size_t bt[3], work = 0;
    phase_batches(L, ph, bt);
    for (int i = 0; i < 3; i++) {
        pl[i] = plan_get(i == 2, L->hf, L->wf, L->fp, bt[i]);
        if (!pl[i]) return false;
        if (pl[i]->work > work) work = pl[i]->work;
    }
    L->off_work = L->spec_bytes;
    return L->spec_bytes + work <= FFT_MAX_WORKSPACE;
}

static size_t fft_workspace_of(const fft_layout *L, const fft_plan *const pl[3]) {
    size_t work = 0;
    for (int i = 0; i < 3; i++)
        if (pl[i]->work > work) work = pl[i]->work;
    return L->spec_bytes + work;
}

static void fft_exec(const fft_plan *pl, void *work, void *in, void *out) {
    cufftResult r = cufftSetWorkArea(pl->h, work);
    if (r == CUFFT_SUCCESS)
        r = pl->inverse ? cufftExecC2R(pl->h, (cufftComplex *)in, (cufftReal *)out)
                        : cufftExecR2C(pl->h, (cufftReal *)in, (cufftComplex *)out);
    if (r != CUFFT_SUCCESS) fft_complain(pl->inverse ? "cufftExecC2R" : "cufftExecR2C", r);
}

// ---- kernels ----------------------------------------------------------------------------------

// dst (B, Hf, Wf) tiles <- src (B, H, W) planes placed at (pt, pl), zero elsewhere and at or past
// row hlim / column wlim (the rows and columns the convolution does not read). One warp per row.
__global__ void fft_pad_kernel(const float *__restrict__ src, float *__restrict__ dst, int rows, int hf, int wf, int h,
                               int w, int pt, int pl, int hlim, int wlim) {
    for (int row = blockIdx.x * blockDim.y + threadIdx.y; row < rows; row += gridDim.x * blockDim.y) {
        int b = row / hf, i = row - b * hf, hi = i - pt;
        bool rowok = hi >= 0 && hi < h && i < hlim;
        float *d = dst + (size_t)row * wf;
        for (int j = threadIdx.x; j < wf; j += 32) {
            int v = j - pl;
            d[j] = rowok && v >= 0 && v < w && j < wlim ? src[((size_t)b * h + hi) * w + v] : 0.f;
        }
    }
}

// dst (B, Ho, Wo) <- scale * src (B, Hf, Wf) tiles read from (pt, pl), zero at or past row hlim /
// column wlim of the tile; + bias[b % k] when bias; then max(., 0) when relu
__global__ void fft_crop_kernel(const float *__restrict__ src, float *__restrict__ dst, int rows, int ho, int wo, int hf,
                                int wf, int pt, int pl, int hlim, int wlim, float scale, const float *__restrict__ bias,
                                int k, bool relu) {
    for (int row = blockIdx.x * blockDim.y + threadIdx.y; row < rows; row += gridDim.x * blockDim.y) {
        int b = row / ho, hi = row - b * ho, i = hi + pt;
        float add = bias ? bias[b % k] : 0.f;
        const float *s = src + ((size_t)b * hf + (i < hf ? i : 0)) * wf;
        float *d = dst + (size_t)row * wo;
        for (int v = threadIdx.x; v < wo; v += 32) {
            int j = v + pl;
            float y = (i < hlim && j < wlim ? s[j] * scale : 0.f) + add;
            d[v] = relu ? fmaxf(y, 0.f) : y;
        }
    }
}

static void fft_pad(const float *src, float *dst, size_t planes, int hf, int wf, int h, int w, int pt, int pl, int hlim,
                    int wlim) {
    size_t rows = planes * hf;
    fft_pad_kernel<<<cb_blocks(rows, 8), dim3(32, 8)>>>(src, dst, (int)rows, hf, wf, h, w, pt, pl, hlim, wlim);
}

static void fft_crop(const float *src, float *dst, size_t planes, int ho, int wo, int hf, int wf, int pt, int pl,
                     int hlim, int wlim, float scale, const float *bias, int k, bool relu) {
    size_t rows = planes * ho;
    fft_crop_kernel<<<cb_blocks(rows, 8), dim3(32, 8)>>>(src, dst, (int)rows, ho, wo, hf, wf, pt, pl, hlim, wlim, scale,
                                                         bias, k, relu);
}

// Per frequency f < nf, out[i][j] = sum_l opA(a[i][l]) opB(b[l][j]) over complex spectra stored
// [plane][fp]: element (i, l) of a at (i sai + l sal) fp + f, and so on; opX conjugates when CX.
// A block owns 32 consecutive frequencies (one per lane) and a 16 x 16 tile of (i, j); warp w
// computes rows 4 (w % 4).. and columns 8 (w / 4).. of it for its lane's frequency. Chunks of 4
// l go through shared memory as [l][row][lane] (conflict-free); two blocks per multiprocessor
// (128 registers) overlap one's loads with the other's multiplies (a register prefetch of the next
// chunk needs 172 registers: one block). Lanes at or past nf read zeros and write nothing.
#define FG 32
#define TM 16
#define TN 16
#define TL 4
static_assert(TL * TM == 8 * 8 && TM == TN && TM == 16, "the staging below: 8 warps, each one l and 8 rows of a chunk");
template <bool CA, bool CB>
__global__ void __launch_bounds__(256, 2) fft_cgemm_kernel(int m, int n, int l, int nf, size_t fp, const float2 *__restrict__ a,
                                                        long long sai, long long sal, const float2 *__restrict__ b,
                                                        long long sbl, long long sbj, float2 *__restrict__ out,
                                                        long long soi, long long soj) {
    __shared__ float2 as[TL][TM][FG], bs[TL][TN][FG];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int tiles_j = (n + TN - 1) / TN;
    const int i0 = (blockIdx.x / tiles_j) * TM, j0 = (blockIdx.x % tiles_j) * TN;
    const int f = blockIdx.y * FG + lane;
    const bool fok = f < nf;
    // warp w stages rows 8w..8w+7 of each chunk, row t being (l = t / 16, i or j = t % 16): its
    // l is l0 + w / 2 and its rows are 8 (w % 2) + r, r < 8
    const int lw = warp >> 1, rw = (warp & 1) * 8;
    const size_t sa_i = (size_t)sai * fp, sa_l = (size_t)sal * fp, sb_l = (size_t)sbl * fp, sb_j = (size_t)sbj * fp;
    const int ma = fok ? min(max(m - i0 - rw, 0), 8) : 0, nb = fok ? min(max(n - j0 - rw, 0), 8) : 0;
    const float2 *pa = a + (size_t)(i0 + rw) * sa_i + (size_t)lw * sa_l + f;
    const float2 *pb = b + (size_t)lw * sb_l + (size_t)(j0 + rw) * sb_j + f;
    float2 ra[8], rb[8];
    auto load = [&](int l0) {
        const bool in = l0 + lw < l;
#pragma unroll
        for (int r = 0; r < 8; r++) {
            ra[r] = in && r < ma ? pa[r * sa_i + l0 * sa_l] : make_float2(0.f, 0.f);
            rb[r] = in && r < nb ? pb[l0 * sb_l + r * sb_j] : make_float2(0.f, 0.f);
        }
    };
    float2 acc[4][8];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 8; c++) acc[r][c] = make_float2(0.f, 0.f);
    const int wi = (warp & 3) * 4, wj = (warp >> 2) * 8;
    for (int l0 = 0; l0 < l; l0 += TL) {
        load(l0);
        __syncthreads(); // the previous chunk is no longer read
#pragma unroll
        for (int r = 0; r < 8; r++) as[lw][rw + r][lane] = ra[r], bs[lw][rw + r][lane] = rb[r];
        __syncthreads();
#pragma unroll
        for (int ll = 0; ll < TL; ll++) {
            float2 av[4], bv[8];
#pragma unroll
            for (int r = 0; r < 4; r++) {
                av[r] = as[ll][wi + r][lane];
                if (CA) av[r].y = -av[r].y;
            }
#pragma unroll
            for (int c = 0; c < 8; c++) {
                bv[c] = bs[ll][wj + c][lane];
                if (CB) bv[c].y = -bv[c].y;
            }
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int c = 0; c < 8; c++) {
                    acc[r][c].x = fmaf(av[r].x, bv[c].x, fmaf(-av[r].y, bv[c].y, acc[r][c].x));
                    acc[r][c].y = fmaf(av[r].x, bv[c].y, fmaf(av[r].y, bv[c].x, acc[r][c].y));
                }
        }
    }
    if (!fok) return;
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 8; c++) {
            int ii = i0 + wi + r, jj = j0 + wj + c;
            if (ii < m && jj < n) out[(size_t)(ii * soi + jj * soj) * fp + f] = acc[r][c];
        }
}

template <bool CA, bool CB>
static void fft_cgemm(const fft_layout *L, int m, int n, int l, const float2 *a, long long sai, long long sal,
                      const float2 *b, long long sbl, long long sbj, float2 *out, long long soi, long long soj) {
    dim3 grid((unsigned)(((m + TM - 1) / TM) * ((n + TN - 1) / TN)), (unsigned)(L->fp / FG));
    fft_cgemm_kernel<CA, CB><<<grid, 256>>>(m, n, l, (int)L->f, L->fp, a, sai, sal, b, sbl, sbj, out, soi, soj);
}

// ---- the algorithm ------------------------------------------------------------------------------

static bool supports(const cb_conv_params *p, cb_phase ph) {
    if (p->r * p->s < 9) return false; // 1x1 and small filters: the GEMM algorithms win
    fft_layout L;
    const fft_plan *pl[3];
    return fft_prepare(p, ph, &L, pl);
}

static size_t workspace(const cb_conv_params *p, cb_phase ph) {
    fft_layout L;
    const fft_plan *pl[3];
    return fft_prepare(p, ph, &L, pl) ? fft_workspace_of(&L, pl) : 0;
}

// the buffers of ws, and the phase's plans; false (with a note on stderr) when they cannot be had
struct fft_bufs {
    fft_layout L;
    const fft_plan *pl[3];
    float *rt;
    float2 *sx, *sw, *sy;
    void *work;
};

static bool fft_bufs_of(const cb_conv_params *p, cb_phase ph, void *ws, fft_bufs *B) {
    if (!ws || !fft_prepare(p, ph, &B->L, B->pl)) {
        fft_complain("no plan or workspace for this call (supports() said no)", CUFFT_INVALID_VALUE);
        return false;
    }
    char *base = (char *)ws;
    B->rt = (float *)base;
    B->sx = (float2 *)(base + B->L.off_sx), B->sw = (float2 *)(base + B->L.off_sw), B->sy = (float2 *)(base + B->L.off_sy);
    B->work = base + B->L.off_work;
    return true;
}

static void forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    fft_bufs B;
    if (!fft_bufs_of(p, CB_PHASE_FORWARD, ws, &B)) return;
    const fft_layout *L = &B.L;
    fft_pad(x, B.rt, L->nc, L->hf, L->wf, p->h, p->w, p->pad_top, p->pad_left, L->hp, L->wp);
    fft_exec(B.pl[0], B.work, B.rt, B.sx);
    fft_pad(w, B.rt, L->kc, L->hf, L->wf, p->r, p->s, 0, 0, p->r, p->s);
    fft_exec(B.pl[1], B.work, B.rt, B.sw);
    // Y[n,k] = sum_c X[n,c] conj(W[k,c]): a = X (i = n, l = c), b = W (l = c, j = k)
    fft_cgemm<false, true>(L, p->n, p->k, p->c, B.sx, p->c, 1, B.sw, 1, p->c, B.sy, p->k, 1);
    fft_exec(B.pl[2], B.work, B.sy, B.rt);
    fft_crop(B.rt, y, L->nk, p->p, p->q, L->hf, L->wf, 0, 0, L->hf, L->wf, 1.f / ((float)L->hf * L->wf), b, p->k, relu);
}

static void backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws) {
    fft_bufs B;
    if (!fft_bufs_of(p, CB_PHASE_BWD_DATA, ws, &B)) return;
    const fft_layout *L = &B.L;
    fft_pad(dy, B.rt, L->nk, L->hf, L->wf, p->p, p->q, 0, 0, p->p, p->q);
    fft_exec(B.pl[0], B.work, B.rt, B.sy);
    fft_pad(w, B.rt, L->kc, L->hf, L->wf, p->r, p->s, 0, 0, p->r, p->s);
    fft_exec(B.pl[1], B.work, B.rt, B.sw);
    // DX[n,c] = sum_k DY[n,k] W[k,c]: a = DY (i = n, l = k), b = W (l = k, j = c)
    fft_cgemm<false, false>(L, p->n, p->c, p->k, B.sy, p->k, 1, B.sw, p->c, 1, B.sx, p->c, 1);
    fft_exec(B.pl[2], B.work, B.sx, B.rt);
    // dx[h][v] = tile[h + pt][v + pl], zero where the forward did not read (past Hp, Wp)
    fft_crop(B.rt, dx, L->nc, p->h, p->w, L->hf, L->wf, p->pad_top, p->pad_left, L->hp, L->wp,
             1.f / ((float)L->hf * L->wf), NULL, 1, false);
}

static void backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws) {
    fft_bufs B;
    if (!fft_bufs_of(p, CB_PHASE_BWD_FILTER, ws, &B)) return;
    const fft_layout *L = &B.L;
    fft_pad(x, B.rt, L->nc, L->hf, L->wf, p->h, p->w, p->pad_top, p->pad_left, L->hp, L->wp);
    fft_exec(B.pl[0], B.work, B.rt, B.sx);
    fft_pad(dy, B.rt, L->nk, L->hf, L->wf, p->p, p->q, 0, 0, p->p, p->q);
    fft_exec(B.pl[1], B.work, B.rt, B.sy);
    // DW[k,c] = sum_n conj(DY[n,k]) X[n,c]: a = DY (i = k, l = n), b = X (l = n, j = c)
    fft_cgemm<true, false>(L, p->k, p->c, p->n, B.sy, 1, p->k, B.sx, p->c, 1, B.sw, p->c, 1);
    fft_exec(B.pl[2], B.work, B.sw, B.rt);
    fft_crop(B.rt, dw, L->kc, p->r, p->s, L->hf, L->wf, 0, 0, L->hf, L->wf, 1.f / ((float)L->hf * L->wf), NULL, 1, false);
    if (db) cb_cuda_bias_grad(p->n, p->k, p->p * p->q, dy, db);
}

extern "C" const cb_cuda_conv_algo cb_conv_algo_fft_cufft = {
    "fft-cufft", CB_PREC_FP32,
    "FFT convolution: cuFFT R2C/C2R (fp32) on 7-smooth tiles, per-frequency complex GEMM (own, fp32), "
    "stride 1, groups 1, filters of 9+ taps, every phase",
    supports, workspace, forward, backward_data, backward_filter,
};
