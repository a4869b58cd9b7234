// The three phases of a convolution as implicit-GEMM operands for the 128x128 kernels of
// igemm_tc.cuh: C[m, n] = sum_k A(m, k) B(k, n) per group, gathered straight from NCHW fp32
// tensors (no im2col buffer; TF padding: leading pads given, out-of-image taps read as zero).
//
// A kernel hands each thread E elements of the A tile (BM x BK) and of the B tile (BK x BN) per
// k-step, in one of two fixed patterns that keep a warp's loads coalesced:
//   rows: thread t owns column kk = t % BK of rows t / BK + i * (NT / BK), i < E
//         (a warp walks along k: contiguous in w, dy rows and the (n, p, q) axis of x)
//   cols: thread t owns column t % BN, rows kk = (t / BN) * E + i, i < E
//         (a warp walks along n = (n, oh, ow): contiguous in x and dy)
// A is always "rows"; B is "rows" when Op::B_ROWS, else "cols". load_a / load_b hand element i to
// the kernel's visitor f(i, src, ok): the kernel loads *src (or zero when !ok) into a register, or
// copies it into shared memory with cp.async (zero-filled when !ok; safe() is a valid address to
// name then). The per-thread part of each
// gather (the output pixel, or the k position) is decomposed once per thread or per k-step; the
// k walk inside a step is incremental, so no element pays for a division.
//
//   forward        M = K/g   N = N*P*Q   K = C/g*R*S   A = w        B = x gather (cols)
//   backward data  M = C/g   N = N*H*W   K = K/g*R*S   A = w^T      B = dy gather (cols)
//   backward filt. M = C/g*R*S  N = K/g  K = N*P*Q     A = x gather B = dy (rows); C = dw^T
#ifndef CB_CUDA_CONV_GATHER_CUH
#define CB_CUDA_CONV_GATHER_CUH

#include "core/ops.h"

#include <cuda_runtime.h>

// n / d for 0 <= n < 2^31 by a multiply-high and a shift (Granlund and Montgomery; CUTLASS's
// FastDivmod): the divisors of a launch are fixed, and a hardware division costs ~20 instructions
struct cb_divmod {
    int d;
    unsigned mul, shr;
};

static inline cb_divmod cb_divmod_make(int d) {
    cb_divmod r = {d, 0u, 0u};
    if (d > 1) {
        int l = 0;
        while ((1u << l) < (unsigned)d) l++; // ceil(log2 d)
        unsigned p = 31u + (unsigned)l;
        r.mul = (unsigned)(((1ull << p) + (unsigned)d - 1) / (unsigned)d);
        r.shr = p - 32u;
    }
    return r;
}

__device__ __forceinline__ int cb_div(const cb_divmod &m, int n) {
    return m.d == 1 ? n : (int)(__umulhi((unsigned)n, m.mul) >> m.shr);
}

// an (r, s) pair packed for the filter-row table of the backward-filter gather; rows past M get
// r = CB_GATHER_OFF so that every bounds test fails
#define CB_GATHER_OFF 0x4000

// the shape values every gather needs, filled on the host (cb_conv_geom_make)
struct cb_conv_geom {
    cb_conv_params p;
    int cg, kg, rs, pq, hw;
    cb_divmod d_rs, d_s, d_pq, d_q, d_hw, d_w, d_sh, d_sw;
};

static inline cb_conv_geom cb_conv_geom_make(const cb_conv_params *p) {
    cb_conv_geom g;
    g.p = *p;
    g.cg = p->c / p->groups, g.kg = p->k / p->groups;
    g.rs = p->r * p->s, g.pq = p->p * p->q, g.hw = p->h * p->w;
    g.d_rs = cb_divmod_make(g.rs), g.d_s = cb_divmod_make(p->s), g.d_pq = cb_divmod_make(g.pq);
    g.d_q = cb_divmod_make(p->q), g.d_hw = cb_divmod_make(g.hw), g.d_w = cb_divmod_make(p->w);
    g.d_sh = cb_divmod_make(p->stride_h), g.d_sw = cb_divmod_make(p->stride_w);
    return g;
}

// ---- forward: y[k, (n,p,q)] = sum_{(c,r,s)} w[k, (c,r,s)] x[n, c, p*sh-pt+r, q*sw-pl+s] ---------
struct cb_conv_fwd_gather {
    static constexpr bool B_ROWS = false;
    cb_conv_geom G;
    const float *x, *w, *bias; // x (N, C, H, W)  w (K, C/g, R, S)  bias (K) or NULL
    float *y;                  // (N, K, P, Q)
    bool relu;
    struct state {
        long a_idx;   // w index of this thread's first A row at k = 0
        int a_k, a_rows;
        long b_base;  // x index of (n, channel g*cg, ih0, iw0)
        int ih0, iw0, b_k;
    };
    template <int BM, int BN, int BK, int NT>
    __device__ void init(state &st, int g, int m0, int n0, int tid, int2 *tab) const {
        const cb_conv_params &p = G.p;
        int K = G.cg * G.rs, row = m0 + tid / BK;
        st.a_k = tid % BK;
        st.a_idx = ((long)g * G.kg + row) * K + st.a_k;
        st.a_rows = row < G.kg ? (G.kg - row + NT / BK - 1) / (NT / BK) : 0;
        int n = n0 + tid % BN;
        st.b_k = (tid / BN) * (BK * BN / NT);
        if (n < p.n * G.pq) {
            int nn = cb_div(G.d_pq, n), o = n - nn * G.pq, oh = cb_div(G.d_q, o), ow = o - oh * p.q;
            st.ih0 = oh * p.stride_h - p.pad_top, st.iw0 = ow * p.stride_w - p.pad_left;
            st.b_base = ((long)nn * p.c + (long)g * G.cg) * G.hw + (long)st.ih0 * p.w + st.iw0;
        } else {
            st.ih0 = -(1 << 28), st.iw0 = 0, st.b_base = 0;
        }
    }
    __device__ const float *safe() const { return w; }
    template <int BM, int BK, int NT, int E, class F>
    __device__ void load_a(const state &st, int k0, int kend, F &&f) const {
        int K = G.cg * G.rs;
        bool kok = k0 + st.a_k < kend;
        const float *src = w + st.a_idx + k0;
#pragma unroll
        for (int i = 0; i < E; i++) f(i, src + (long)i * (NT / BK) * K, kok && i < st.a_rows);
    }
    template <int BN, int BK, int NT, int E, class F>
    __device__ void load_b(const state &st, int k0, int kend, F &&f) const {
        const cb_conv_params &p = G.p;
        int k = k0 + st.b_k;
        int c = cb_div(G.d_rs, k), t = k - c * G.rs, rr = cb_div(G.d_s, t), s = t - rr * p.s;
        int off = c * G.hw + rr * p.w + s;
        const float *src = x + st.b_base;
#pragma unroll
        for (int i = 0; i < E; i++) {
            bool ok = k + i < kend && (unsigned)(st.ih0 + rr) < (unsigned)p.h && (unsigned)(st.iw0 + s) < (unsigned)p.w;
            f(i, src + off, ok);
            s++, off++;
            if (s == p.s) {
                s = 0, rr++, off += p.w - p.s;
                if (rr == p.r) rr = 0, off += G.hw - p.r * p.w;
            }
        }
    }
    __device__ void store(int g, int m, int n, float v, bool atomic) const {
        int nn = cb_div(G.d_pq, n), o = n - nn * G.pq, k = g * G.kg + m;
        if (bias) v += __ldg(bias + k);
        y[((long)nn * G.p.k + k) * G.pq + o] = relu ? fmaxf(v, 0.f) : v;
    }
};

// ---- backward data: dx[c, (n,h,w)] = sum_{(k,r,s)} w[k, c, r, s] dy[n, k, oh, ow] ---------------
// where oh*sh = h + pt - r and ow*sw = w + pl - s (only exact multiples inside the output count)
template <bool STRIDED> struct cb_conv_bwd_data_gather {
    static constexpr bool B_ROWS = false;
    cb_conv_geom G;
    const float *dy, *w; // dy (N, K, P, Q)  w (K, C/g, R, S)
    float *dx;           // (N, C, H, W)
    struct state {
        long a_idx;  // w index of (k = g*kg, c = this thread's first A row, 0)
        int a_k, a_rows;
        long b_base; // dy index of (n, g*kg, 0, 0)
        int th0, tw0, b_k;
    };
    template <int BM, int BN, int BK, int NT>
    __device__ void init(state &st, int g, int m0, int n0, int tid, int2 *tab) const {
        const cb_conv_params &p = G.p;
        int row = m0 + tid / BK;
        st.a_k = tid % BK;
        st.a_idx = ((long)g * G.kg * G.cg + row) * G.rs;
        st.a_rows = row < G.cg ? (G.cg - row + NT / BK - 1) / (NT / BK) : 0;
        int n = n0 + tid % BN;
        st.b_k = (tid / BN) * (BK * BN / NT);
        if (n < p.n * G.hw) {
            int nn = cb_div(G.d_hw, n), o = n - nn * G.hw, ih = cb_div(G.d_w, o), iw = o - ih * p.w;
            st.th0 = ih + p.pad_top, st.tw0 = iw + p.pad_left;
            st.b_base = ((long)nn * p.k + (long)g * G.kg) * G.pq;
        } else {
            st.th0 = -(1 << 28), st.tw0 = 0, st.b_base = 0;
        }
    }
    __device__ const float *safe() const { return w; }
    template <int BM, int BK, int NT, int E, class F>
    __device__ void load_a(const state &st, int k0, int kend, F &&f) const {
        int k = k0 + st.a_k;
        bool kok = k < kend;
        int kk = cb_div(G.d_rs, k), t = k - kk * G.rs;
        const float *src = w + st.a_idx + (long)kk * G.cg * G.rs + t;
#pragma unroll
        for (int i = 0; i < E; i++) f(i, src + (long)i * (NT / BK) * G.rs, kok && i < st.a_rows);
    }
    template <int BN, int BK, int NT, int E, class F>
    __device__ void load_b(const state &st, int k0, int kend, F &&f) const {
        const cb_conv_params &p = G.p;
        int k = k0 + st.b_k;
        int kk = cb_div(G.d_rs, k), t = k - kk * G.rs, rr = cb_div(G.d_s, t), s = t - rr * p.s;
        if (!STRIDED) {
            // off = kk*PQ - r*Q - s, relative to (th0, tw0)
            const float *src = dy + st.b_base + (long)st.th0 * p.q + st.tw0;
            int off = kk * G.pq - rr * p.q - s;
#pragma unroll
            for (int i = 0; i < E; i++) {
                bool ok = k + i < kend && (unsigned)(st.th0 - rr) < (unsigned)p.p && (unsigned)(st.tw0 - s) < (unsigned)p.q;
                f(i, src + off, ok);
                s++, off--;
                if (s == p.s) {
                    s = 0, rr++, off += p.s - p.q;
                    if (rr == p.r) rr = 0, off += p.r * p.q + G.pq;
                }
            }
        } else {
            const float *src = dy + st.b_base;
#pragma unroll
            for (int i = 0; i < E; i++) {
                int th = st.th0 - rr, tw = st.tw0 - s;
                int oh = cb_div(G.d_sh, th < 0 ? 0 : th), ow = cb_div(G.d_sw, tw < 0 ? 0 : tw);
                bool ok = k + i < kend && th >= 0 && tw >= 0 && oh * p.stride_h == th && ow * p.stride_w == tw &&
                          oh < p.p && ow < p.q;
                f(i, src + (long)kk * G.pq + oh * p.q + ow, ok);
                s++;
                if (s == p.s) {
                    s = 0, rr++;
                    if (rr == p.r) rr = 0, kk++;
                }
            }
        }
    }
    __device__ void store(int g, int m, int n, float v, bool atomic) const {
        int nn = cb_div(G.d_hw, n), o = n - nn * G.hw;
        dx[((long)nn * G.p.c + g * G.cg + m) * G.hw + o] = v;
    }
};

// ---- backward filter, transposed: dw[k, (c,r,s)] = sum_{(n,p,q)} x[n, c, p*sh-pt+r, q*sw-pl+s] dy[n, k, p, q]
// as C[(c,r,s), k]: A is the x gather (rows (c,r,s) through a per-block table), B is dy
struct cb_conv_bwd_filter_gather {
    static constexpr bool B_ROWS = true;
    cb_conv_geom G;
    const float *x, *dy; // x (N, C, H, W)  dy (N, K, P, Q)
    float *dw;           // (K, C/g, R, S); accumulated atomically when split
    struct state {
        const int2 *tab; // per A row of the block: (c*H*W + r*W + s, r << 16 | s)
        int a_k, a_row;
        long b_idx;      // dy index of (n = 0, k = g*kg + this thread's first B row, 0)
        int b_rows, g;
    };
    template <int BM, int BN, int BK, int NT>
    __device__ void init(state &st, int g, int m0, int n0, int tid, int2 *tab) const {
        const cb_conv_params &p = G.p;
        if (tid < BM) {
            int m = m0 + tid;
            int2 e = make_int2(0, CB_GATHER_OFF << 16);
            if (m < G.cg * G.rs) {
                int c = m / G.rs, t = m - c * G.rs, r = t / p.s, s = t - r * p.s;
                e = make_int2(c * G.hw + r * p.w + s, r << 16 | s);
            }
            tab[tid] = e;
        }
        st.tab = tab;
        st.a_k = tid % BK, st.a_row = tid / BK, st.g = g;
        int row = n0 + tid / BK;
        st.b_idx = ((long)g * G.kg + row) * G.pq;
        st.b_rows = row < G.kg ? (G.kg - row + NT / BK - 1) / (NT / BK) : 0;
    }
    __device__ const float *safe() const { return x; }
    template <int BM, int BK, int NT, int E, class F>
    __device__ void load_a(const state &st, int k0, int kend, F &&f) const {
        const cb_conv_params &p = G.p;
        int k = k0 + st.a_k;
        int nn = cb_div(G.d_pq, k), o = k - nn * G.pq, oh = cb_div(G.d_q, o), ow = o - oh * p.q;
        int ih0 = k < kend ? oh * p.stride_h - p.pad_top : -(1 << 28), iw0 = ow * p.stride_w - p.pad_left;
        const float *src = x + ((long)nn * p.c + (long)st.g * G.cg) * G.hw + (long)ih0 * p.w + iw0;
#pragma unroll
        for (int i = 0; i < E; i++) {
            int2 e = st.tab[st.a_row + i * (NT / BK)];
            int rr = e.y >> 16, s = e.y & 0xffff;
            bool ok = (unsigned)(ih0 + rr) < (unsigned)p.h && (unsigned)(iw0 + s) < (unsigned)p.w;
            f(i, src + e.x, ok);
        }
    }
    template <int BN, int BK, int NT, int E, class F>
    __device__ void load_b(const state &st, int k0, int kend, F &&f) const {
        int k = k0 + st.a_k;
        bool kok = k < kend;
        int nn = cb_div(G.d_pq, k), o = k - nn * G.pq;
        const float *src = dy + st.b_idx + (long)nn * G.p.k * G.pq + o;
#pragma unroll
        for (int i = 0; i < E; i++) f(i, src + (long)i * (NT / BK) * G.pq, kok && i < st.b_rows);
    }
    __device__ void store(int g, int m, int n, float v, bool atomic) const {
        float *d = dw + ((long)g * G.kg + n) * G.cg * G.rs + m;
        if (atomic) atomicAdd(d, v);
        else *d = v;
    }
};

#endif
