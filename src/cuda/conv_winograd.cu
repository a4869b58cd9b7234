// Winograd F(2x2,3x3) for 3x3 stride-1 convolutions, non-fused, strict fp32, all three phases
// (Lavin & Gray 2016; dev/winograd_proto.py is the numpy prototype with the same index arithmetic).
// Output tiles of 2x2 read 4x4 input patches at stride 2 (zeros outside the image, so any padding,
// negative too); xi = 0..15 runs over the 4x4 transform domain:
//
//   forward    U[xi][c][k] = (G g G^T)          filter, once per call
//              V[xi][c][t] = (B^T d B)          input patches, t over N*ceil(P/2)*ceil(Q/2) tiles
//              M[xi][k][t] = sum_c U[xi][c][k] V[xi][c][t]      16 SGEMMs (the time goes here)
//              y = A^T M A (+ bias, ReLU), partial tiles cropped
//   bwd data   the same pipeline on dy: the full correlation with the filter rotated 180 degrees and
//              its channels swapped (pads 2 - pad), writing dx
//   bwd filter D[xi][t][k] = (A dY A^T) of the 2x2 output tiles (zeros past P, Q), V[xi][t][c] as
//              above; dU[xi][k][c] = sum_t D[xi][t][k] V[xi][t][c] (16 SGEMMs, split over t into
//              partial slices); dw = G^T (sum of the slices) G
//
// Every operand of the SGEMM is stored with its reduction index as the row and the output index
// contiguous (leading dimension padded to 4 floats, padding written as zeros), so both shared-memory
// tiles load with straight float4 copies. Images are processed in chunks so the workspace (U, V, M
// or dU slices, V, D) stays under WINO_CAP; the algorithm declines shapes where one image would not.
#include "cuda/common.cuh"
#include "cuda/conv_algo.h"
#include "cuda/launch.h"

#include <stdint.h>

#ifndef WINO_CAP
#define WINO_CAP ((size_t)1 << 30) // workspace bytes: chunks of images keep it under this
#endif
#define WINO_MAX_GROUPS 64         // a pipeline per group: beyond this the launches dominate

static size_t r4(size_t f) { return (f + 3) & ~(size_t)3; }
static size_t r64(size_t f) { return (f + 63) & ~(size_t)63; } // 256-byte aligned sub-buffers

// ---- transforms ---------------------------------------------------------------------------------

// V = B^T d B, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
__device__ __forceinline__ void wino_input_tile(const float (&d)[4][4], float (&v)[16]) {
    float t[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        t[0][j] = d[0][j] - d[2][j];
        t[1][j] = d[1][j] + d[2][j];
        t[2][j] = d[2][j] - d[1][j];
        t[3][j] = d[1][j] - d[3][j];
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        v[i * 4 + 0] = t[i][0] - t[i][2];
        v[i * 4 + 1] = t[i][1] + t[i][2];
        v[i * 4 + 2] = t[i][2] - t[i][1];
        v[i * 4 + 3] = t[i][1] - t[i][3];
    }
}

// the transformed 4x4 input patch at (h0, w0) of one plane xp (H, W), zeros outside it
__device__ __forceinline__ void wino_input_patch(const float *xp, int H, int W, int h0, int w0, float (&v)[16]) {
    float d[4][4];
#pragma unroll
    for (int a = 0; a < 4; a++)
#pragma unroll
        for (int b = 0; b < 4; b++) {
            int h = h0 + a, w = w0 + b;
            d[a][b] = h >= 0 && h < H && w >= 0 && w < W ? xp[(size_t)h * W + w] : 0.f;
        }
    wino_input_tile(d, v);
}

// A d A^T, A = [1 0; 1 1; 1 -1; 0 -1], of the 2x2 output tile at (p0, q0) of one plane dp (P, Q),
// zeros past P and Q
__device__ __forceinline__ void wino_dy_patch(const float *dp, int P, int Q, int p0, int q0, float (&v)[16]) {
    float d[2][2], u[4][2];
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 2; b++) {
            int p = p0 + a, q = q0 + b;
            d[a][b] = p < P && q < Q ? dp[(size_t)p * Q + q] : 0.f;
        }
#pragma unroll
    for (int b = 0; b < 2; b++) {
        u[0][b] = d[0][b];
        u[1][b] = d[0][b] + d[1][b];
        u[2][b] = d[0][b] - d[1][b];
        u[3][b] = -d[1][b];
    }
#pragma unroll
    for (int a = 0; a < 4; a++) {
        v[a * 4 + 0] = u[a][0];
        v[a * 4 + 1] = u[a][0] + u[a][1];
        v[a * 4 + 2] = u[a][0] - u[a][1];
        v[a * 4 + 3] = -u[a][1];
    }
}

// V[xi][c][t] (ld = r4(T)): the input patches of x (N, Ctot, H, W), channels [c0, c0 + C), of the
// chunk's images [n0, n0 + T / tpi): tile t is image t / (th*tw), tile row and column (ty, tx),
// patch origin (2ty - pt, 2tx - pl); threads along t. The forward's B operand.
__global__ void wino_input_kernel(const float *x, int ctot, int c0, int C, int H, int W, int n0, int th, int tw, int T,
                                  int pt, int pl, float *V, int ld) {
    const size_t total = (size_t)C * ld;
    CB_FOR(i, total) {
        int c = (int)(i / ld), t = (int)(i % ld);
        float v[16];
        if (t < T) {
            int n = t / (th * tw), r = t - n * (th * tw), ty = r / tw, tx = r - ty * tw;
            wino_input_patch(x + ((size_t)(n0 + n) * ctot + c0 + c) * H * W, H, W, 2 * ty - pt, 2 * tx - pl, v);
        } else {
#pragma unroll
            for (int e = 0; e < 16; e++) v[e] = 0.f;
        }
#pragma unroll
        for (int e = 0; e < 16; e++) V[e * total + i] = v[e];
    }
}

// The filter gradient's operands, tile-major: V[xi][t][c] (ld = r4(C)) of the input patches as
// above, or with DY, D[xi][t][k] of dy's 2x2 output tiles (src (N, Ctot, P, Q), origin (2ty, 2tx),
// no pads). A block takes 16 tiles x 32 channels: transformed by threads along the tiles (reads
// along image rows), transposed through shared memory, written along the channels.
template <bool DY>
__global__ void __launch_bounds__(256) wino_rows_kernel(const float *src, int ctot, int c0, int C, int H, int W, int n0,
                                                        int th, int tw, int T, int pt, int pl, float *V, int ld) {
    __shared__ float s[16][32][17];
    const int t0 = blockIdx.x * 16, cb = blockIdx.y * 32;
    const size_t sxi = (size_t)T * ld;
    for (int j = threadIdx.x; j < 16 * 32; j += blockDim.x) {
        int tl = j % 16, cl = j / 16, t = t0 + tl, c = cb + cl;
        float v[16];
        if (t < T && c < C) {
            int n = t / (th * tw), r = t - n * (th * tw), ty = r / tw, tx = r - ty * tw;
            const float *sp = src + ((size_t)(n0 + n) * ctot + c0 + c) * H * W;
            if (DY) wino_dy_patch(sp, H, W, 2 * ty, 2 * tx, v);
            else wino_input_patch(sp, H, W, 2 * ty - pt, 2 * tx - pl, v);
        } else {
#pragma unroll
            for (int e = 0; e < 16; e++) v[e] = 0.f;
        }
#pragma unroll
        for (int e = 0; e < 16; e++) s[e][cl][tl] = v[e];
    }
    __syncthreads();
    for (int j = threadIdx.x; j < 16 * 16 * 32; j += blockDim.x) {
        int e = j / 512, cl = j % 32, tl = j / 32 % 16, t = t0 + tl, c = cb + cl;
        if (t < T && c < ld) V[e * sxi + (size_t)t * ld + c] = s[e][cl][tl];
    }
}

// U[xi][ci][o] = G g G^T, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1], ld = r4(K); g = w[o][ci] of
// w (K, Cin, 3, 3), or with flip g = w[ci][o] rotated 180 degrees of w (Cin, K, 3, 3)
__global__ void wino_filter_kernel(const float *w, int Cin, int K, bool flip, float *U, int ld) {
    const size_t total = (size_t)Cin * ld;
    CB_FOR(i, total) {
        int ci = (int)(i / ld), o = (int)(i % ld);
        float u[16];
        if (o < K) {
            float g[3][3], t[4][3];
            const float *gp = w + (flip ? (size_t)ci * K + o : (size_t)o * Cin + ci) * 9;
#pragma unroll
            for (int r = 0; r < 3; r++)
#pragma unroll
                for (int s = 0; s < 3; s++) g[r][s] = flip ? gp[(2 - r) * 3 + 2 - s] : gp[r * 3 + s];
#pragma unroll
            for (int s = 0; s < 3; s++) {
                t[0][s] = g[0][s];
                t[1][s] = 0.5f * (g[0][s] + g[1][s] + g[2][s]);
                t[2][s] = 0.5f * (g[0][s] - g[1][s] + g[2][s]);
                t[3][s] = g[2][s];
            }
#pragma unroll
            for (int a = 0; a < 4; a++) {
                u[a * 4 + 0] = t[a][0];
                u[a * 4 + 1] = 0.5f * (t[a][0] + t[a][1] + t[a][2]);
                u[a * 4 + 2] = 0.5f * (t[a][0] - t[a][1] + t[a][2]);
                u[a * 4 + 3] = t[a][2];
            }
        } else {
#pragma unroll
            for (int e = 0; e < 16; e++) u[e] = 0.f;
        }
#pragma unroll
        for (int e = 0; e < 16; e++) U[e * total + i] = u[e];
    }
}

// y (N, Ktot, P, Q) channels [k0, k0 + K) of the chunk's images = A^T M A, A^T = [1 1 1 0; 0 1 -1 -1],
// from M[xi][k][t] (ld = r4(T)); + bias[k], then ReLU when relu; outputs past P, Q dropped
__global__ void wino_output_kernel(const float *M, int K, int T, int ld, int th, int tw, int P, int Q, int n0, float *y,
                                   int ktot, int k0, const float *bias, bool relu) {
    const size_t total = (size_t)K * T, sxi = (size_t)K * ld;
    CB_FOR(i, total) {
        int k = (int)(i / T), t = (int)(i % T);
        const float *mp = M + (size_t)k * ld + t;
        float m[16], u[2][4];
#pragma unroll
        for (int e = 0; e < 16; e++) m[e] = mp[e * sxi];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            u[0][j] = m[0 * 4 + j] + m[1 * 4 + j] + m[2 * 4 + j];
            u[1][j] = m[1 * 4 + j] - m[2 * 4 + j] - m[3 * 4 + j];
        }
        int n = t / (th * tw), r = t - n * (th * tw), ty = r / tw, tx = r - ty * tw;
        float bv = bias ? bias[k] : 0.f;
        float *yp = y + ((size_t)(n0 + n) * ktot + k0 + k) * P * Q;
#pragma unroll
        for (int a = 0; a < 2; a++) {
            float o[2] = {u[a][0] + u[a][1] + u[a][2] + bv, u[a][1] - u[a][2] - u[a][3] + bv};
            int p = 2 * ty + a;
#pragma unroll
            for (int b = 0; b < 2; b++) {
                int q = 2 * tx + b;
                if (p < P && q < Q) yp[(size_t)p * Q + q] = relu ? fmaxf(o[b], 0.f) : o[b];
            }
        }
    }
}

// dw (K, C, 3, 3) = G^T S G, S = the sum of the splits slices dU[s][xi][k][c] (slice = 16*K*C)
__global__ void wino_filter_grad_kernel(const float *dU, int splits, int K, int C, float *dw) {
    const size_t total = (size_t)K * C;
    CB_FOR(i, total) {
        float S[16], t[3][4];
#pragma unroll
        for (int e = 0; e < 16; e++) {
            float s = 0.f;
            for (int sp = 0; sp < splits; sp++) s += dU[((size_t)sp * 16 + e) * total + i];
            S[e] = s;
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            t[0][j] = S[0 * 4 + j] + 0.5f * (S[1 * 4 + j] + S[2 * 4 + j]);
            t[1][j] = 0.5f * (S[1 * 4 + j] - S[2 * 4 + j]);
            t[2][j] = 0.5f * (S[1 * 4 + j] + S[2 * 4 + j]) + S[3 * 4 + j];
        }
        float *o = dw + i * 9;
#pragma unroll
        for (int a = 0; a < 3; a++) {
            o[a * 3 + 0] = t[a][0] + 0.5f * (t[a][1] + t[a][2]);
            o[a * 3 + 1] = 0.5f * (t[a][1] - t[a][2]);
            o[a * 3 + 2] = 0.5f * (t[a][1] + t[a][2]) + t[a][3];
        }
    }
}

// ---- the 16 SGEMMs ------------------------------------------------------------------------------

// C[xi][m][n] (+)= sum_{kk in split} A[xi][kk][m] B[xi][kk][n] for xi = blockIdx.z % 16 and split
// blockIdx.z / 16 over kk in [split*kchunk, min(K, (split+1)*kchunk)), its own slice of C. A and B
// rows hold lda, ldb floats (multiples of 4, 16-byte aligned; columns past M, N are allocated).
struct wino_gemm {
    const float *A, *B;
    float *C;
    int M, N, K, lda, ldb, ldc, kchunk;
    size_t sa, sb, sc, ssplit; // per xi, and per split of C (floats)
    bool beta;                 // add to C instead of overwriting it
    bool vec;                  // C rows and slices 16-byte aligned: float4 stores
};

// BM x BN block tile, BK = 8, BM*BN/64 threads of 8x8 outputs (rows ty*4 + {0..3} and BM/2 + ...,
// columns tx*4 + {0..3} and BN/2 + ...: float4 fragment reads that broadcast or hit distinct
// banks); double-buffered shared memory, the next k-step prefetched into registers while this one
// is multiplied, one barrier per step.
template <int BM, int BN>
__global__ void __launch_bounds__(BM *BN / 64, BM *BN >= 16384 ? 2 : BM * BN == 8192 ? 3 : 6) wino_gemm_kernel(const wino_gemm g) {
    constexpr int NT = BM * BN / 64, BK = 8, TX = BN / 8;
    constexpr int LA = 2 * BM / NT, LB = 2 * BN / NT; // float4 loads per thread and step
    __shared__ __align__(16) float As[2][BK][BM];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int xi = blockIdx.z % 16, split = blockIdx.z / 16;
    const float *A = g.A + xi * g.sa, *B = g.B + xi * g.sb;
    float *C = g.C + xi * g.sc + split * g.ssplit;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int kb = split * g.kchunk, ke = min(g.K, kb + g.kchunk);
    const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
    const int nk = ke > kb ? (ke - kb + BK - 1) / BK : 0;
    float4 ra[LA], rb[LB];

    auto load = [&](int k0) {
#pragma unroll
        for (int l = 0; l < LA; l++) {
            int f = tid + l * NT, k = k0 + f / (BM / 4), m = m0 + f % (BM / 4) * 4;
            ra[l] = k < ke && m < g.lda ? *(const float4 *)(A + (size_t)k * g.lda + m) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int l = 0; l < LB; l++) {
            int f = tid + l * NT, k = k0 + f / (BN / 4), n = n0 + f % (BN / 4) * 4;
            rb[l] = k < ke && n < g.ldb ? *(const float4 *)(B + (size_t)k * g.ldb + n) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
    };
    auto store = [&](int buf) {
#pragma unroll
        for (int l = 0; l < LA; l++) {
            int f = tid + l * NT;
            *(float4 *)&As[buf][f / (BM / 4)][f % (BM / 4) * 4] = ra[l];
        }
#pragma unroll
        for (int l = 0; l < LB; l++) {
            int f = tid + l * NT;
            *(float4 *)&Bs[buf][f / (BN / 4)][f % (BN / 4) * 4] = rb[l];
        }
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;

    if (nk > 0) {
        load(kb);
        store(0);
    }
    __syncthreads();
    for (int s = 0; s < nk; s++) {
        const int cur = s & 1;
        if (s + 1 < nk) load(kb + (s + 1) * BK);
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float4 a0 = *(const float4 *)&As[cur][k][ty * 4], a1 = *(const float4 *)&As[cur][k][BM / 2 + ty * 4];
            float4 b0 = *(const float4 *)&Bs[cur][k][tx * 4], b1 = *(const float4 *)&Bs[cur][k][BN / 2 + tx * 4];
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (s + 1 < nk) store(cur ^ 1);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; i++) {
        int m = m0 + (i < 4 ? ty * 4 + i : BM / 2 + ty * 4 + i - 4);
        if (m >= g.M) continue;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int n = n0 + h * (BN / 2) + tx * 4;
            float *c = C + (size_t)m * g.ldc + n;
            float v[4] = {acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]};
            if (g.vec && n + 3 < g.N) {
                float4 o = make_float4(v[0], v[1], v[2], v[3]);
                if (g.beta) {
                    float4 p = *(const float4 *)c;
                    o.x += p.x, o.y += p.y, o.z += p.z, o.w += p.w;
                }
                *(float4 *)c = o;
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++)
                    if (n + j < g.N) c[j] = v[j] + (g.beta ? c[j] : 0.f);
            }
        }
    }
}

template <int BM, int BN> static void wino_gemm_go(const wino_gemm &g, int splits) {
    dim3 grid((unsigned)((g.N + BN - 1) / BN), (unsigned)((g.M + BM - 1) / BM), (unsigned)(16 * splits));
    wino_gemm_kernel<BM, BN><<<grid, BM * BN / 64>>>(g);
}

// the block tile from the GEMM's shape: 64 rows or columns where 128 would be mostly idle
static void wino_gemm_launch(wino_gemm g, int splits) {
    g.vec = g.ldc % 4 == 0 && g.sc % 4 == 0 && g.ssplit % 4 == 0 && (uintptr_t)g.C % 16 == 0;
    bool m64 = g.M <= 64, n64 = g.N <= 64;
    if (m64 && n64) wino_gemm_go<64, 64>(g, splits);
    else if (m64) wino_gemm_go<64, 128>(g, splits);
    else if (n64) wino_gemm_go<128, 64>(g, splits);
    else wino_gemm_go<128, 128>(g, splits);
}

// ---- plan: shapes, chunks and workspace -----------------------------------------------------------

// one phase as a Winograd correlation: per group, Cin input channels of (H, W) -> K outputs (P, Q)
typedef struct wino_plan {
    int n, cin, k, h, w, p, q, pt, pl, groups;
    int th, tw, tpi; // tile rows and columns per image, tiles per image
    int nb;          // images per chunk
    int splits;      // filter gradient: slices of the tile reduction
    size_t u, v, m;  // sub-buffer floats: forward U, V, M; filter gradient dU slices, V, D
} wino_plan;

static size_t wino_bytes(const wino_plan *w, cb_phase ph, int nb, size_t *v, size_t *m) {
    size_t t = (size_t)nb * w->tpi;
    if (ph == CB_PHASE_BWD_FILTER) *v = r64(16 * t * r4(w->cin)), *m = r64(16 * t * r4(w->k));
    else *v = r64(16 * (size_t)w->cin * r4(t)), *m = r64(16 * (size_t)w->k * r4(t));
    return (w->u + *v + *m) * sizeof(float);
}

static bool wino_plan_of(const cb_conv_params *p, cb_phase ph, wino_plan *w) {
    if (p->r != 3 || p->s != 3 || p->stride_h != 1 || p->stride_w != 1 || p->groups < 1 || p->groups > WINO_MAX_GROUPS ||
        p->n < 1 || p->p < 1 || p->q < 1)
        return false;
    const int cg = p->c / p->groups, kg = p->k / p->groups;
    const bool bd = ph == CB_PHASE_BWD_DATA; // dy (N, K, P, Q) -> dx (N, C, H, W), pads 2 - pad
    w->n = p->n, w->groups = p->groups;
    w->cin = bd ? kg : cg, w->k = bd ? cg : kg;
    w->h = bd ? p->p : p->h, w->w = bd ? p->q : p->w, w->p = bd ? p->h : p->p, w->q = bd ? p->w : p->q;
    w->pt = bd ? 2 - p->pad_top : p->pad_top, w->pl = bd ? 2 - p->pad_left : p->pad_left;
    w->th = (w->p + 1) / 2, w->tw = (w->q + 1) / 2;
    if ((long)w->th * w->tw >= (1L << 28)) return false;
    w->tpi = w->th * w->tw;
    const size_t cin = (size_t)w->cin, k = (size_t)w->k;
    w->splits = 1;
    if (ph == CB_PHASE_BWD_FILTER) { // about two blocks per SM of an H200, each slice >= 256 tiles
        size_t blocks = 16 * ((k + 127) / 128) * ((cin + 127) / 128), tiles = (size_t)p->n * w->tpi;
        size_t s = (264 + blocks - 1) / blocks;
        if (s > tiles / 256) s = tiles / 256;
        w->splits = s < 1 ? 1 : s > 32 ? 32 : (int)s;
        w->u = r64((size_t)w->splits * 16 * k * cin);
    } else
        w->u = r64(16 * cin * r4(k));
    if (w->u * sizeof(float) >= WINO_CAP) return false;
    size_t per_image = 16 * (size_t)w->tpi * (cin + k) * sizeof(float), v, m;
    size_t nb = (WINO_CAP - w->u * sizeof(float)) / per_image;
    if (nb > (size_t)p->n) nb = p->n;
    while (nb > 0 && wino_bytes(w, ph, (int)nb, &v, &m) > WINO_CAP) nb--;
    if (nb < 1) return false;
    w->nb = (int)nb;
    wino_bytes(w, ph, w->nb, &w->v, &w->m);
    return true;
}

static bool supports(const cb_conv_params *p, cb_phase ph) {
    wino_plan w;
    return wino_plan_of(p, ph, &w);
}

static size_t workspace(const cb_conv_params *p, cb_phase ph) {
    wino_plan w;
    return wino_plan_of(p, ph, &w) ? (w.u + w.v + w.m) * sizeof(float) : 0;
}

// dst (N, groups*K, P, Q) = the Winograd correlation of src (N, groups*Cin, H, W) with the filter
// wt, (groups*K, Cin, 3, 3), or with flip (groups*Cin, K, 3, 3) rotated and transposed
static void wino_conv(const wino_plan *w, const float *src, const float *wt, bool flip, const float *bias, bool relu,
                      float *dst, void *ws) {
    float *U = (float *)ws, *V = U + w->u, *M = V + w->v;
    const int ldu = (int)r4(w->k);
    for (int g = 0; g < w->groups; g++) {
        const size_t ufl = (size_t)w->cin * ldu;
        wino_filter_kernel<<<cb_blocks(ufl, 256), 256>>>(wt + (size_t)g * w->cin * w->k * 9, w->cin, w->k, flip, U, ldu);
        for (int n0 = 0; n0 < w->n; n0 += w->nb) {
            const int T = (w->n - n0 < w->nb ? w->n - n0 : w->nb) * w->tpi, ldt = (int)r4(T);
            const size_t vfl = (size_t)w->cin * ldt;
            wino_input_kernel<<<cb_blocks(vfl, 256), 256>>>(src, w->groups * w->cin, g * w->cin, w->cin, w->h, w->w, n0,
                                                             w->th, w->tw, T, w->pt, w->pl, V, ldt);
            wino_gemm gm = {U, V, M, w->k, T, w->cin, ldu, ldt, ldt, w->cin, ufl, vfl, (size_t)w->k * ldt, 0, false, false};
            wino_gemm_launch(gm, 1);
            const size_t ofl = (size_t)w->k * T;
            wino_output_kernel<<<cb_blocks(ofl, 256), 256>>>(M, w->k, T, ldt, w->th, w->tw, w->p, w->q, n0, dst,
                                                             w->groups * w->k, g * w->k, bias ? bias + g * w->k : NULL, relu);
        }
    }
}

static void forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    wino_plan wp;
    if (!wino_plan_of(p, CB_PHASE_FORWARD, &wp)) return; // not reached: the backend asks supports first
    wino_conv(&wp, x, w, false, b, relu, y, ws);
}

static void backward_data(const cb_conv_params *p, const float *dy, const float *w, float *dx, void *ws) {
    wino_plan wp;
    if (!wino_plan_of(p, CB_PHASE_BWD_DATA, &wp)) return;
    wino_conv(&wp, dy, w, true, NULL, false, dx, ws);
}

static void backward_filter(const cb_conv_params *p, const float *x, const float *dy, float *dw, float *db, void *ws) {
    wino_plan w;
    if (!wino_plan_of(p, CB_PHASE_BWD_FILTER, &w)) return;
    float *dU = (float *)ws, *V = dU + w.u, *D = V + w.v;
    const int ldc = (int)r4(w.cin), ldk = (int)r4(w.k);
    const size_t slice = 16 * (size_t)w.k * w.cin;
    for (int g = 0; g < w.groups; g++) {
        for (int n0 = 0; n0 < w.n; n0 += w.nb) {
            const int T = (w.n - n0 < w.nb ? w.n - n0 : w.nb) * w.tpi;
            const size_t vfl = (size_t)T * ldc, dfl = (size_t)T * ldk;
            const unsigned tb = (unsigned)((T + 15) / 16);
            wino_rows_kernel<false><<<dim3(tb, (unsigned)((ldc + 31) / 32)), 256>>>(x, w.groups * w.cin, g * w.cin, w.cin, w.h,
                                                                                  w.w, n0, w.th, w.tw, T, w.pt, w.pl, V, ldc);
            wino_rows_kernel<true><<<dim3(tb, (unsigned)((ldk + 31) / 32)), 256>>>(dy, w.groups * w.k, g * w.k, w.k, w.p, w.q,
                                                                                 n0, w.th, w.tw, T, 0, 0, D, ldk);
            const int kchunk = (int)(((T + w.splits - 1) / w.splits + 7) / 8 * 8);
            wino_gemm gm = {D, V, dU, w.k, w.cin, T, ldk, ldc, w.cin, kchunk, dfl, vfl, (size_t)w.k * w.cin, slice, n0 > 0, false};
            wino_gemm_launch(gm, w.splits);
        }
        const size_t kc = (size_t)w.k * w.cin;
        wino_filter_grad_kernel<<<cb_blocks(kc, 256), 256>>>(dU, w.splits, w.k, w.cin, dw + (size_t)g * kc * 9);
    }
    if (db) cb_cuda_bias_grad(p->n, p->k, p->p * p->q, dy, db);
}

extern "C" const cb_cuda_conv_algo cb_conv_algo_winograd_f2x2 = {
    "winograd-f2x2", CB_PREC_FP32,
    "Winograd F(2x2,3x3), non-fused: transforms + 16 batched SGEMMs (128x128x8 tiles, 8x8 per thread), fp32 FMA; "
    "3x3 stride 1, every phase",
    supports, workspace, forward, backward_data, backward_filter,
};
