// The bias gradient of a convolution or FC layer on every storage (src/storage/format.h), and the
// same reduction with the layer's activation gradient in one pass: dy = act'(dy) in place while
// its per-channel sums are taken, so a layer with a bias and an activation (no batch norm between)
// reads its gradient once for both where it read it twice (the activation's pass, then the
// bias's). The sums run in the same order either way: the fused and the separate passes give the
// same bits (dev/bias_fmt_emu.sh checks both against a float64 reference on the CPU).
#include "cuda/common.cuh"
#include "storage/format.h"
#include "core/act.h"
#include "storage/elem.cuh"

// the element of the gradient a bias sum reads: dy[i] itself, or (ACT) the activation's gradient
// of it, stored back in the storage's type and read as stored (so that the sum is that of the
// tensor the backward goes on with)
struct act_grad {
    cb_act a;
    const void *x, *y; // the activation's saved input (or NULL where its gradient needs none) and output
};
template <class T, bool ACT> __device__ __forceinline__ float grad_at(const T *dy, size_t i, const act_grad &g) {
    float v = ld(dy, i);
    if (!ACT) return v;
    const T *x = (const T *)g.x, *y = (const T *)g.y;
    T r;
    st(&r, 0, cb_act_bwd_f32(g.a, x ? ld(x, i) : 0.f, y ? ld(y, i) : 0.f, v));
    const_cast<T *>(dy)[i] = r;
    return ld(&r, 0);
}
// (grad_at(i0) + grad_at(i1)) + (grad_at(i2) + grad_at(i3)), with the four elements' loads before
// any store (dy is written in place: the compiler may not move a load above an earlier store)
template <class T, bool ACT> __device__ __forceinline__ float grad_at4(const T *dy, const size_t (&i)[4], const act_grad &g) {
    if (!ACT) return (ld(dy, i[0]) + ld(dy, i[1])) + (ld(dy, i[2]) + ld(dy, i[3]));
    const T *x = (const T *)g.x, *y = (const T *)g.y;
    float d[4], xv[4], yv[4], a[4];
#pragma unroll
    for (int u = 0; u < 4; u++) d[u] = ld(dy, i[u]), xv[u] = x ? ld(x, i[u]) : 0.f, yv[u] = y ? ld(y, i[u]) : 0.f;
#pragma unroll
    for (int u = 0; u < 4; u++) {
        T r;
        st(&r, 0, cb_act_bwd_f32(g.a, xv[u], yv[u], d[u]));
        const_cast<T *>(dy)[i[u]] = r;
        a[u] = ld(&r, 0);
    }
    return (a[0] + a[1]) + (a[2] + a[3]);
}

// inner > 1 (NCHW) without scratch: one block per channel, contiguous runs of `inner`; sums in double
template <class T, bool ACT> __global__ void bias_grad_inner_kernel(int64_t rows, int k, int64_t inner, const T *dy, act_grad g, float *db) {
    int c = blockIdx.x;
    double s = 0;
    for (int64_t i = threadIdx.x; i < rows * inner; i += blockDim.x) {
        int64_t r = i / inner, o = i - r * inner;
        s += grad_at<T, ACT>(dy, ((size_t)r * k + c) * inner + o, g);
    }
    s = cb_block_sum(s);
    if (threadIdx.x == 0) db[c] = (float)s;
}

// inner > 1 (NCHW) with scratch: block (c, j) sums chunk j of channel c into part[j][c]. A chunk is
// `rows_per` whole planes (per == 1) or 1/per of one plane (per > 1: few rows, large planes), so
// every channel spreads over gridDim.y blocks and the grid fills the GPU whatever k is (one block
// per channel, the kernel above and cuDNN's backward bias, reads at 36-120 GB/s where k is 32-64
// and the planes large: dev/cuda/ctx_lab.cu). Four loads in flight per thread; planes under 256
// elements are walked as one flat index.
template <class T, bool ACT>
__global__ void __launch_bounds__(256) bias_grad_chunks_kernel(int64_t rows, int k, int64_t inner, int per, int64_t rows_per, const T *dy,
                                                               act_grad g, float *__restrict__ part) {
    int c = blockIdx.x, j = blockIdx.y;
    int64_t r0, r1, o0 = 0, o1 = inner;
    if (per > 1) r0 = j / per, r1 = r0 + 1, o0 = inner * (j % per) / per, o1 = inner * (j % per + 1) / per;
    else r0 = (int64_t)j * rows_per, r1 = r0 + rows_per < rows ? r0 + rows_per : rows;
    float s = 0.f;
    if (o1 - o0 >= 256) {
        for (int64_t r = r0; r < r1; r++) {
            size_t p = ((size_t)r * k + c) * inner;
            int64_t o = o0 + threadIdx.x;
            for (; o + 768 < o1; o += 1024) {
                const size_t at[4] = {p + o, p + o + 256, p + o + 512, p + o + 768};
                s += grad_at4<T, ACT>(dy, at, g);
            }
            for (; o < o1; o += 256) s += grad_at<T, ACT>(dy, p + o, g);
        }
    } else {
        int64_t len = (r1 - r0) * inner;
        for (int64_t i = threadIdx.x; i < len; i += 256) {
            int64_t r = r0 + i / inner, o = i % inner;
            s += grad_at<T, ACT>(dy, ((size_t)r * k + c) * inner + o, g);
        }
    }
    __shared__ float red[8];
    for (int d = 16; d; d >>= 1) s += __shfl_xor_sync(0xffffffffu, s, d);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int w = 0; w < 8; w++) t += red[w];
        part[(size_t)j * k + c] = t;
    }
}

// inner == 1 (NHWC, FC): block (32, 8) covers 32 adjacent channels (coalesced reads along a row);
// blockIdx.y takes every gridDim.y-th group of 8 rows, four groups per step (loads in flight);
// part[blockIdx.y][c] gets the block's sum
template <class T, bool ACT>
__global__ void __launch_bounds__(256) bias_grad_rows_kernel(uint32_t rows, int k, const T *dy, act_grad g, float *__restrict__ part) {
    __shared__ float red[8][33];
    int c = blockIdx.x * 32 + threadIdx.x;
    float s = 0.f;
    if (c < k) {
        uint32_t step = gridDim.y * 8u, r = blockIdx.y * 8u + threadIdx.y;
        for (; r + 3 * step < rows; r += 4 * step) {
            const size_t at[4] = {(size_t)r * k + c, (size_t)(r + step) * k + c, (size_t)(r + 2 * step) * k + c, (size_t)(r + 3 * step) * k + c};
            s += grad_at4<T, ACT>(dy, at, g);
        }
        for (; r < rows; r += step) s += grad_at<T, ACT>(dy, (size_t)r * k + c, g);
    }
    red[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < k) {
        for (int j = 1; j < 8; j++) s += red[j][threadIdx.x];
        part[(size_t)blockIdx.y * k + c] = s;
    }
}
// the same with V adjacent channels a thread (k a multiple of V, every pointer V elements aligned):
// a load of V elements where the kernel above takes one, each channel's sums in the same order (a
// thread's rows are the same, V of its channels at once), so the same bits. The activation's
// gradient reads x or y only where it needs it (g.x, g.y NULL otherwise): GELU's, SiLU's and
// hardswish's read their input, ReLU's and the others their output.
//
// A step loads all four rows (dy, and x or y) before it computes and stores any: dy is written in
// place, and the compiler may not move a row's loads above the previous row's store (x might be dy),
// so a step written row by row had one row's loads in flight, and the activation's pass ran at 40%
// of the memory's rate (ConvNeXt-Tiny b64 bf16, K 384: 0.28 ms a layer for 0.46 GB; 0.159 loaded
// first, docs/results/2026-11-29-actgrad.md). A is the activation, known at compile time (no
// switch an element), ACT_ANY for one the dispatch does not list (g.a at run time), ACT_OFF for none.
enum { ACT_OFF = -1, ACT_ANY = -2 };
template <int A> __device__ __forceinline__ float act_grad_of(const act_grad &g, float x, float y, float d) {
    return cb_act_bwd_f32(A == ACT_ANY ? g.a : (cb_act)A, x, y, d);
}
template <class T, int V> struct grad_rows {
    vec_t<T, V> d, x, y;
};
template <class T, int V, int A> __device__ __forceinline__ void grad_load(const T *dy, size_t i, const act_grad &g, grad_rows<T, V> &r) {
    r.d = *reinterpret_cast<const vec_t<T, V> *>(dy + i);
    if (A == ACT_OFF) return;
    bool wx = A == ACT_ANY ? g.x != NULL : cb_act_needs_input((cb_act)A), wy = A == ACT_ANY ? g.y != NULL : !wx;
    if (wx) r.x = *reinterpret_cast<const vec_t<T, V> *>((const T *)g.x + i);
    if (wy) r.y = *reinterpret_cast<const vec_t<T, V> *>((const T *)g.y + i);
}
// dy's V elements after the activation's gradient, stored back in T (r.d) and read as stored (out)
template <class T, int V, int A> __device__ __forceinline__ void grad_apply(grad_rows<T, V> &r, const act_grad &g, float *out) {
    bool wx = A == ACT_ANY ? g.x != NULL : A != ACT_OFF && cb_act_needs_input((cb_act)A), wy = A == ACT_ANY ? g.y != NULL : A != ACT_OFF && !wx;
#pragma unroll
    for (int v = 0; v < V; v++) {
        if (A != ACT_OFF) st(r.d.v, v, act_grad_of<A>(g, wx ? ld(r.x.v, v) : 0.f, wy ? ld(r.y.v, v) : 0.f, ld(r.d.v, v)));
        out[v] = ld(r.d.v, v);
    }
}
template <class T, int A, int V>
__global__ void __launch_bounds__(256) bias_grad_rows_vec_kernel(uint32_t rows, int k, T *dy, act_grad g, float *__restrict__ part) {
    __shared__ float red[8][32 * V + 1];
    int c0 = (blockIdx.x * 32 + threadIdx.x) * V;
    float s[V];
#pragma unroll
    for (int v = 0; v < V; v++) s[v] = 0.f;
    if (c0 < k) {
        uint32_t step = gridDim.y * 8u, r = blockIdx.y * 8u + threadIdx.y;
        for (; r + 3 * step < rows; r += 4 * step) {
            grad_rows<T, V> q[4];
            float a[4][V];
#pragma unroll
            for (int u = 0; u < 4; u++) grad_load<T, V, A>(dy, (size_t)(r + u * step) * k + c0, g, q[u]);
#pragma unroll
            for (int u = 0; u < 4; u++) grad_apply<T, V, A>(q[u], g, a[u]);
            if (A != ACT_OFF)
#pragma unroll
                for (int u = 0; u < 4; u++) *reinterpret_cast<vec_t<T, V> *>(dy + (size_t)(r + u * step) * k + c0) = q[u].d;
#pragma unroll
            for (int v = 0; v < V; v++) s[v] += (a[0][v] + a[1][v]) + (a[2][v] + a[3][v]);
        }
        for (; r < rows; r += step) {
            grad_rows<T, V> q;
            float a[V];
            grad_load<T, V, A>(dy, (size_t)r * k + c0, g, q);
            grad_apply<T, V, A>(q, g, a);
            if (A != ACT_OFF) *reinterpret_cast<vec_t<T, V> *>(dy + (size_t)r * k + c0) = q.d;
#pragma unroll
            for (int v = 0; v < V; v++) s[v] += a[v];
        }
    }
#pragma unroll
    for (int v = 0; v < V; v++) red[threadIdx.y][threadIdx.x * V + v] = s[v];
    __syncthreads();
    if (threadIdx.y == 0 && c0 < k)
#pragma unroll
        for (int v = 0; v < V; v++) {
            float t = s[v];
            for (int j = 1; j < 8; j++) t += red[j][threadIdx.x * V + v];
            part[(size_t)blockIdx.y * k + c0 + v] = t;
        }
}

// db[c] = sum of part[0..parts)[c]: block (32, 8), 32 channels, 8 lanes over the parts in a fixed order
__global__ void bias_grad_parts_kernel(int parts, int k, const float *part, float *db) {
    __shared__ double red[8][33];
    int c = blockIdx.x * 32 + threadIdx.x;
    double s = 0;
    if (c < k)
        for (int j = threadIdx.y; j < parts; j += 8) s += part[(size_t)j * k + c];
    red[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < k) {
        for (int j = 1; j < 8; j++) s += red[j][threadIdx.x];
        db[c] = (float)s;
    }
}

// the NCHW chunking: parts per channel (about 2048 blocks in all, each over 4096 or more elements),
// as whole planes (*per = 1, *rows_per planes each) or, with fewer rows than parts, planes split in *per
static int nchw_parts(int64_t rows, int k, int64_t inner, int *per, int64_t *rows_per) {
    int64_t want = (2048 + k - 1) / k, most = rows * inner / 4096;
    if (want > CB_FMT_BIAS_NCHW_PARTS) want = CB_FMT_BIAS_NCHW_PARTS;
    if (want > most) want = most;
    if (want < 1) want = 1;
    if (rows >= want) {
        *per = 1, *rows_per = (rows + want - 1) / want;
        return (int)((rows + *rows_per - 1) / *rows_per);
    }
    int64_t p = (want + rows - 1) / rows;
    if (p > inner / 1024) p = inner / 1024 > 1 ? inner / 1024 : 1;
    if (p * rows > CB_FMT_BIAS_NCHW_PARTS) p = CB_FMT_BIAS_NCHW_PARTS / rows > 1 ? CB_FMT_BIAS_NCHW_PARTS / rows : 1;
    *per = (int)p, *rows_per = 1;
    return (int)(rows * p);
}
// the rows (NHWC, FC) chunking: about 2048 blocks in all (16 per SM), each over at least 64 rows;
// lanes: the threads a row takes (k, or k / V with V channels a thread)
static int rows_parts(int64_t rows, int lanes) {
    int64_t gx = (lanes + 31) / 32, want = 2048 / gx, most = (rows + 63) / 64;
    int64_t parts = want < most ? want : most;
    if (parts > CB_FMT_BIAS_PARTS) parts = CB_FMT_BIAS_PARTS;
    return parts < 1 ? 1 : (int)parts;
}

extern "C" size_t cb_fmt_bias_part_floats(int k) {
    // (the most parts: rows_parts with the widest vectors, 8 channels a thread)
    int64_t gx = (k / 8 + 31) / 32, rows = gx < 1 || 2048 / gx >= CB_FMT_BIAS_PARTS ? CB_FMT_BIAS_PARTS : 2048 / gx;
    if (rows < 1) rows = 1;
    return (size_t)(rows > CB_FMT_BIAS_NCHW_PARTS ? rows : CB_FMT_BIAS_NCHW_PARTS) * (size_t)k;
}

template <class T, int A> static void rows_vec(int v, dim3 grid, int64_t rows, int k, T *dy, act_grad g, float *part) {
    dim3 block(32, 8);
    if constexpr (sizeof(T) == 2) // (fp32 vectors are at most 4 wide: 16 bytes)
        if (v == 8) {
            bias_grad_rows_vec_kernel<T, A, 8><<<grid, block>>>((uint32_t)rows, k, dy, g, part);
            return;
        }
    if (v == 4) bias_grad_rows_vec_kernel<T, A, 4><<<grid, block>>>((uint32_t)rows, k, dy, g, part);
    else bias_grad_rows_vec_kernel<T, A, 2><<<grid, block>>>((uint32_t)rows, k, dy, g, part);
}

template <class T, bool ACT> static void bias_grad_t(int64_t rows, int k, int64_t inner, const T *dy, act_grad g, float *db, float *part) {
    dim3 block(32, 8);
    if (!part || rows >= 0x7fffffff || (inner > 1 && rows * inner < 4096)) {
        bias_grad_inner_kernel<T, ACT><<<k, 256>>>(rows, k, inner, dy, g, db);
        return;
    }
    int parts;
    if (inner > 1) {
        int per;
        int64_t rows_per;
        parts = nchw_parts(rows, k, inner, &per, &rows_per);
        bias_grad_chunks_kernel<T, ACT><<<dim3((unsigned)k, (unsigned)parts), 256>>>(rows, k, inner, per, rows_per, dy, g, part);
    } else {
        // V channels a thread where k and the pointers allow, the most that leaves no block's lanes idle (k 384 in bf16: 4);
        // as many blocks as one a thread would have (parts by the lanes a row takes)
        uintptr_t bits = (uintptr_t)dy | (uintptr_t)g.x | (uintptr_t)g.y;
        int v = 16 / (int)sizeof(T);
        while (v > 1 && (k % v || bits % (v * sizeof(T)) || (k / v) % 32)) v /= 2;
        if (v == 1 && k % 8 == 0 && bits % (8 * sizeof(T)) == 0 && sizeof(T) == 2) v = 8; // (lanes idle in the last block, still wider)
        parts = rows_parts(rows, k / v);
        unsigned gx = (unsigned)((k / v + 31) / 32);
        T *d = const_cast<T *>(dy);
        dim3 grid(gx, (unsigned)parts);
        if (v == 1) bias_grad_rows_kernel<T, ACT><<<dim3((unsigned)((k + 31) / 32), (unsigned)parts), block>>>((uint32_t)rows, k, dy, g, part);
        else if (!ACT || g.a == CB_ACT_NONE) rows_vec<T, ACT_OFF>(v, grid, rows, k, d, g, part);
        else
            switch (g.a) {
#define ACT_CASE(a)                                                                                                                        \
    case a: rows_vec<T, a>(v, grid, rows, k, d, g, part); break;
                ACT_CASE(CB_ACT_RELU)
                ACT_CASE(CB_ACT_SIGMOID)
                ACT_CASE(CB_ACT_SILU)
                ACT_CASE(CB_ACT_HARDSWISH)
                ACT_CASE(CB_ACT_HARDSIGMOID)
                ACT_CASE(CB_ACT_RELU6)
                ACT_CASE(CB_ACT_GELU)
#undef ACT_CASE
            default: rows_vec<T, ACT_ANY>(v, grid, rows, k, d, g, part); // (one added later: chosen at run time)
            }
    }
    bias_grad_parts_kernel<<<(unsigned)((k + 31) / 32), block>>>(parts, k, part, db);
}

extern "C" void cb_fmt_bias_grad(int64_t rows, int k, int64_t inner, const void *dy, int bf, float *db, float *part) {
    act_grad g = {CB_ACT_NONE, NULL, NULL};
    if (bf) bias_grad_t<bf16, false>(rows, k, inner, (const bf16 *)dy, g, db, part);
    else bias_grad_t<float, false>(rows, k, inner, (const float *)dy, g, db, part);
}

extern "C" void cb_fmt_act_bias_grad(int64_t rows, int k, int64_t inner, cb_act a, const void *x, const void *y, void *dy, int bf, float *db,
                                     float *part) {
    act_grad g = {a, cb_act_needs_input(a) ? x : NULL, cb_act_needs_input(a) ? NULL : y}; // (only what its gradient reads)
    if (bf) bias_grad_t<bf16, true>(rows, k, inner, (const bf16 *)dy, g, db, part);
    else bias_grad_t<float, true>(rows, k, inner, (const float *)dy, g, db, part);
}
