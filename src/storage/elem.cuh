// Element access shared by the storage kernels (format.cu, norm_fmt.cu): fp32 or bf16 elements
// read as fp32, stored with round-to-nearest-even, and V of them moved as one 16-byte access.
#ifndef CB_STORAGE_ELEM_CUH
#define CB_STORAGE_ELEM_CUH

#include <cuda_bf16.h>
#include <stddef.h>

typedef __nv_bfloat16 bf16;

__device__ static inline float ld(const float *p, size_t i) { return p[i]; }
__device__ static inline float ld(const bf16 *p, size_t i) { return __bfloat162float(p[i]); }
__device__ static inline void st(float *p, size_t i, float v) { p[i] = v; }
__device__ static inline void st(bf16 *p, size_t i, float v) { p[i] = __float2bfloat16_rn(v); }

// V elements of T as one 16-byte (or smaller) load and store
template <class T, int V> struct alignas(sizeof(T) * V) vec_t { T v[V]; };

#endif
