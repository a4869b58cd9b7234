// The bias kernels of convolution and fully connected layers (their products run on the
// algorithm table, src/cuda/conv_algo.h: an FC layer is a 1x1 convolution).
#include "cuda/common.cuh"
#include "cuda/launch.h"

// one block per channel k; sums in double so long reductions keep fp32 accuracy
__global__ void bias_grad_kernel(int n, int k, int inner, const float *dy, float *db) {
    int c = blockIdx.x;
    double s = 0;
    for (long i = threadIdx.x; i < (long)n * inner; i += blockDim.x) {
        long nn = i / inner, o = i - nn * inner;
        s += dy[((size_t)nn * k + c) * inner + o];
    }
    s = cb_block_sum(s);
    if (threadIdx.x == 0) db[c] = (float)s;
}

extern "C" void cb_cuda_bias_grad(int n, int k, int inner, const float *dy, float *db) {
    bias_grad_kernel<<<k, 256>>>(n, k, inner, dy, db);
}

__global__ void bias_add_kernel(size_t total, int k, int inner, const float *b, float *y) {
    CB_FOR(i, total) y[i] += b[(i / inner) % k];
}

extern "C" void cb_cuda_bias_add(int n, int k, int inner, const float *b, float *y) {
    size_t t = (size_t)n * k * inner;
    bias_add_kernel<<<cb_blocks(t, 256), 256>>>(t, k, inner, b, y);
}
