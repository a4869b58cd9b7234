// Direct convolution kernels for layers with few channels, such as the ECE408 course network's
// (seed 004: 1->4 7x7 on 86x86 and 4->16 7x7 on 40x40), forward only, with the bias, the ReLU
// and optionally the max pool that follows fused in. Shared by the engine's algorithms
// (conv_direct.cu) and the lab (dev/cuda/ece408_lab.cu): what the lab measures is what runs.
//
// Layouts: x (N, C, H, W), w (K, C, R, S), b (K) or NULL, y (N, K, P, Q). With a fused max pool
// of window = stride = pool (VALID, no padding), y is the pool's output (N, K, P/pool, Q/pool),
// and only the conv outputs some window covers are computed.
//
// Every kernel stages whole images into shared memory with cp.async, two buffers deep (the next
// image loads while this one computes) on a persistent grid. A staged image sits at an offset of
// (pad_top, pad_left); the cells around it are zeroed once, as every image has the same geometry.
//   direct  (fp32 FMA): a thread computes TP output rows x TQ columns x 4 output channels in
//           registers; a sliding window of input values in registers (stride-1, S <= 7) or plain
//           shared-memory reads (any stride, any S); weights in constant memory ("direct-const",
//           what the course asked for) or in shared memory ("direct-smem").
//   unroll  (fp32 FMA): the course's fused unroll + matrix multiply: a tile of the unrolled
//           input (C*R*S x pixels) gathered into shared memory, all weights in shared memory,
//           a 4x4 register tile per thread.
//   tc      (tensor cores, mma.sync bf16 m16n8k16 or tf32 m16n8k8, fp32 accumulation): pixels on
//           the M side, (output channel, column shift dq in {0,1}) on the N side, (input channel
//           or filter row pair, 8 taps) on the K side; see cd_tc_kernel.
#ifndef CB_CUDA_CONV_DIRECT_CUH
#define CB_CUDA_CONV_DIRECT_CUH

#include "cuda/conv_direct_common.cuh"  // shapes, device limits, image staging, row stores
#include "cuda/conv_direct_fma.cuh"     // direct-const, direct-smem
#include "cuda/conv_direct_unroll.cuh"  // unroll-smem
#include "cuda/conv_direct_tc.cuh"      // direct-tf32, direct-bf16

#endif
