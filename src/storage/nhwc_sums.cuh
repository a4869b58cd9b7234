// Per-image channel sums over the pixels of NHWC tensors in 16-byte vectors: out (n, c) =
// scale * sum over the hw pixels of a (or of a * b, PROD), for the global average pool's forward
// (src/cuda/pool.cu) and the SE product's broadcast gradient (chan_fmt.cu). c a multiple of V and
// the tensors 16-byte aligned (the callers check). A block of NHWC_SUM_THREADS per (image, LX
// channel vectors): LX lanes along the vectors (a power of 2 up to 32), the rest along the pixels
// with four pixels' loads in flight; each thread sums in A (float or double), the threads' sums are
// added over a warp's pixel lanes by shuffles, then over the warps in shared memory, in a fixed
// order (deterministic). A block per (image, 32 channels) with 2-byte loads, as both kernels were,
// read EfficientNet-B0's first SE block (112 x 112 x 32, b128 bf16) at a quarter of the DRAM's rate
// (2026-11-29).
#ifndef CB_STORAGE_NHWC_SUMS_CUH
#define CB_STORAGE_NHWC_SUMS_CUH

#include "storage/elem.cuh"

#define NHWC_SUM_THREADS 512

template <class T, int V, class A, bool PROD>
__global__ void __launch_bounds__(NHWC_SUM_THREADS) nhwc_image_sums(int cv, int lx_n, size_t hw, const T *a, const T *b, float scale, T *out) {
    typedef vec_t<T, V> vec;
    __shared__ A part[NHWC_SUM_THREADS / 32][32][V];
    int lx = threadIdx.x % lx_n, ly = threadIdx.x / lx_n, ly_n = NHWC_SUM_THREADS / lx_n, cj = blockIdx.y * lx_n + lx;
    size_t base = blockIdx.x * hw * cv;
    const vec *av = reinterpret_cast<const vec *>(a) + base, *bv = reinterpret_cast<const vec *>(b) + base;
    A s[V];
#pragma unroll
    for (int e = 0; e < V; e++) s[e] = 0;
    if (cj < cv) {
#pragma unroll 4
        for (size_t p = ly; p < hw; p += ly_n) {
            vec u = av[p * cv + cj], w;
            if (PROD) w = bv[p * cv + cj];
#pragma unroll
            for (int e = 0; e < V; e++) s[e] += PROD ? (A)ld(u.v, e) * ld(w.v, e) : (A)ld(u.v, e);
        }
    }
#pragma unroll
    for (int e = 0; e < V; e++)
        for (int o = 16; o >= lx_n; o >>= 1) s[e] += __shfl_xor_sync(0xffffffffu, s[e], o);
    if (threadIdx.x % 32 < lx_n)
#pragma unroll
        for (int e = 0; e < V; e++) part[threadIdx.x / 32][lx][e] = s[e];
    __syncthreads();
    if (ly || cj >= cv) return;
#pragma unroll
    for (int e = 0; e < V; e++) {
        A t = 0;
        for (int w = 0; w < NHWC_SUM_THREADS / 32; w++) t += part[w][lx][e];
        st(out, (size_t)blockIdx.x * cv * V + (size_t)cj * V + e, (float)t * scale);
    }
}

// its grid and lanes for n images of c channels (a multiple of V). (The callers launch it: the host
// emulation, dev/emu, rewrites the launches of the file it builds, not of the headers.)
struct nhwc_sums_grid {
    dim3 grid;
    int cv, lx;
};
static inline nhwc_sums_grid nhwc_image_sums_grid(int n, int c, int V) {
    nhwc_sums_grid q;
    q.cv = c / V, q.lx = 1;
    // (the power of 2 at or above the vectors: the largest that divides them, which idles no lane,
    // left EfficientNet-B0's late SE blocks, 14 x 14 and 7 x 7, with blocks of little work: their
    // pools' forward 0.010 -> 0.023 ms, 2026-11-29 call 3)
    while (q.lx < 32 && q.lx < q.cv) q.lx *= 2;
    q.grid = dim3((unsigned)n, (unsigned)((q.cv + q.lx - 1) / q.lx));
    return q;
}

#endif
