// Helpers shared by the .cu files of the cuda backend: grid sizes and block reductions.
#ifndef CB_CUDA_COMMON_CUH
#define CB_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

// the hardware's fast exponential and division (a few units in the last place of fp32; dev/emu
// defines them as the library's)
#ifndef CB_FAST_EXPF
#define CB_FAST_EXPF(x) __expf(x)
#define CB_FAST_DIV(a, b) __fdividef(a, b)
#endif

static inline unsigned cb_blocks(size_t n, int threads) {
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b > 1048576 ? 1048576 : (b ? b : 1));
}

// A kernel's raised dynamic shared memory limit (cudaFuncSetAttribute) holds for the current
// device's context only, and the multi-GPU replicas run one device per thread: true the first time
// this is asked on the calling thread's device for the flag word *devs (one per kernel; bit d for
// device d), which the caller then sets the attribute for. Setting it twice is harmless.
static inline bool cb_first_on_device(unsigned long long *devs) {
    int d = 0;
    if (cudaGetDevice(&d) != cudaSuccess || d < 0 || d >= 64) {
        cudaGetLastError();
        return true;
    }
    unsigned long long bit = 1ull << d;
    return !(__atomic_fetch_or(devs, bit, __ATOMIC_RELAXED) & bit);
}

// grid-stride loop over [0, n)
#define CB_FOR(i, n) for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

// splitmix64 finaliser of (seed + index): a counter-based generator, no state per thread (dropout
// masks; the cudnn backend's bf16 dropout draws the same masks)
__device__ static inline float cb_hash_uniform(uint64_t seed, uint64_t i) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}
// a dropout layer's seed in this step: its fixed seed moved on by the device's step counter (NULL: as is)
__device__ static inline uint64_t cb_dropout_seed(uint64_t seed, const unsigned long long *step) {
    return step ? seed + *step * 0xD1B54A32D192ED03ULL : seed;
}

// sum of v over the block (blockDim.x a multiple of 32, at most 1024); every thread gets it
template <class T> __device__ T cb_block_sum(T v) {
    __shared__ T part[32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) part[wid] = v;
    __syncthreads();
    T s = 0;
    for (int i = 0; i < (int)(blockDim.x >> 5); i++) s += part[i];
    return s;
}

template <class T> __device__ T cb_block_max(T v) {
    __shared__ T part[32];
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) part[wid] = v;
    __syncthreads();
    T s = part[0];
    for (int i = 1; i < (int)(blockDim.x >> 5); i++) s = max(s, part[i]);
    return s;
}

#endif
