// Fully connected layers on the shared tiled SGEMM body (igemm.cuh) with strided operands,
// plus the bias kernels convolution uses too.
#include "cuda/igemm.cuh"
#include "cuda/launch.h"

// C[m*scm + n*scn] = sum_k A[m*sam + k*sak] * B[k*sbk + n*sbn] (+ bias[n])
struct gemm_op {
    const float *A, *B, *bias;
    float *C;
    int sam, sak, sbk, sbn, scm, scn;
    __device__ float a(int g, int m, int k) const { return A[(size_t)m * sam + (size_t)k * sak]; }
    __device__ float b(int g, int k, int n) const { return B[(size_t)k * sbk + (size_t)n * sbn]; }
    __device__ void store(int g, int m, int n, float v, bool atomic) const {
        float *d = C + (size_t)m * scm + (size_t)n * scn;
        if (atomic) atomicAdd(d, v);
        else *d = v + (bias ? bias[n] : 0.f);
    }
};

// y (N,K) = x (N,C) w (K,C)^T + b
extern "C" void cb_cuda_fc_forward(int n, int c, int k, const float *x, const float *w, const float *b, float *y) {
    gemm_op op = {x, w, b, y, c, 1, 1, c, k, 1};
    cb_igemm_launch(op, n, k, c, 1, 1, c);
}

// dx (N,C) = dy (N,K) w (K,C)
extern "C" void cb_cuda_fc_backward_data(int n, int c, int k, const float *dy, const float *w, float *dx) {
    gemm_op op = {dy, w, NULL, dx, k, 1, c, 1, c, 1};
    cb_igemm_launch(op, n, c, k, 1, 1, k);
}

// dw (K,C) = dy (N,K)^T x (N,C); db (K) = column sums of dy
extern "C" void cb_cuda_fc_backward_filter(int n, int c, int k, const float *x, const float *dy, float *dw, float *db) {
    int kchunk, splits = cb_igemm_splits(k, c, n, 1, &kchunk);
    if (splits > 1) cudaMemsetAsync(dw, 0, (size_t)k * c * sizeof(float));
    gemm_op op = {dy, x, NULL, dw, 1, k, c, 1, c, 1};
    cb_igemm_launch(op, k, c, n, 1, splits, kchunk);
    if (db) cb_cuda_bias_grad(n, k, 1, dy, db);
}

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
