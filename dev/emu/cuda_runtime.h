// A CPU stand-in for the CUDA runtime, enough to run convbench's simple kernels on the host
// (dev/winograd_emu.sh): each block runs as blockDim host threads that meet at __syncthreads on a
// std::barrier; blocks run one after another, so a function-static array serves as __shared__.
// Launches `k<<<grid, block>>>(args)` are rewritten to emu_launch(grid, block, k, args) by the
// script. Build it with -fsanitize=address to catch out-of-bounds reads and writes.
#ifndef EMU_CUDA_RUNTIME_H
#define EMU_CUDA_RUNTIME_H

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
using std::max;
using std::min;

typedef int cudaError_t;
struct CUstream_st;
typedef struct CUstream_st *cudaStream_t; // (as CUDA's: src/storage/format.h declares with the struct)
enum { cudaSuccess = 0 };
static cudaStream_t const cudaStreamPerThread = (cudaStream_t)2; // (the per-thread stream a step graph captures: one stream here)
// copies run at once (one stream; "device" memory is the host's)
enum cudaMemcpyKind { cudaMemcpyDeviceToDevice = 3 };
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t = 0) {
    if (n) std::memmove(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t = 0) {
    if (n) std::memset(d, v, n);
    return cudaSuccess;
}
// a block's threads run at once: atomic as on the GPU
static inline float atomicAdd(float *p, float v) { return std::atomic_ref<float>(*p).fetch_add(v); }
static inline cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, cudaMemcpyKind, cudaStream_t = 0) {
    for (size_t r = 0; r < h; r++) std::memmove((char *)d + r * dp, (const char *)s + r * sp, w);
    return cudaSuccess;
}

// the bit moves between a float and its 32-bit word
static inline float __uint_as_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline uint32_t __float_as_uint(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;
inline std::barrier<> *emu_bar;
static inline void __syncthreads() { emu_bar->arrive_and_wait(); }

// warp shuffles: the 32 threads of a warp (32 consecutive thread indexes) meet on a barrier of
// their own, so that a warp that has returned does not hold up the others
inline std::vector<std::barrier<> *> emu_warp_bar;
inline std::vector<double> emu_warp_slot;
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int o) {
    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z), w = t / 32;
    emu_warp_slot[t] = (double)v;
    emu_warp_bar[w]->arrive_and_wait();
    T r = (T)emu_warp_slot[(t & ~31u) | ((t & 31u) ^ (unsigned)o)];
    emu_warp_bar[w]->arrive_and_wait();
    return r;
}
static inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
// the hardware's fast exponential and division (src/cuda/common.cuh's CB_FAST_EXPF, CB_FAST_DIV): the
// library's here (glibc declares an __expf of its own)
#define CB_FAST_EXPF(x) std::exp((float)(x))
#define CB_FAST_DIV(a, b) ((float)(a) / (float)(b))

// one device with a few multiprocessors (kernels that size their grids by it get small ones)
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount };
static inline cudaError_t cudaGetDevice(int *d) { return *d = 0, cudaSuccess; }
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
static inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int) { return *v = 4, cudaSuccess; }

template <class F, class... A> void emu_launch(dim3 grid, dim3 block, F f, A... args) {
    unsigned nt = block.x * block.y * block.z;
    std::barrier<> bar((std::ptrdiff_t)nt);
    emu_bar = &bar;
    std::vector<std::barrier<> *> warps;
    for (unsigned w = 0; w < (nt + 31) / 32; w++) warps.push_back(new std::barrier<>((std::ptrdiff_t)std::min(32u, nt - 32 * w)));
    emu_warp_bar = warps;
    emu_warp_slot.assign(nt, 0.0);
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                std::vector<std::thread> th;
                for (unsigned t = 0; t < nt; t++)
                    th.emplace_back([=] {
                        threadIdx = dim3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
                        blockIdx = dim3(bx, by, bz), blockDim = block, gridDim = grid;
                        f(args...);
                    });
                for (auto &x : th) x.join();
            }
    for (auto *w : warps) delete w;
}
#endif
