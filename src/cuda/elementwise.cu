// Elementwise kernels, softmax, the cross-entropy criterion and SGD.
#include "cuda/common.cuh"
#include "cuda/launch.h"
#include "core/act.h"

__global__ void relu_fwd_kernel(size_t n, const float *x, float *y) { CB_FOR(i, n) y[i] = fmaxf(x[i], 0.f); }
__global__ void relu_bwd_kernel(size_t n, const float *y, const float *dy, float *dx) {
    CB_FOR(i, n) dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}

// any activation function: src/core/act.h's one definition, on the device
__global__ void act_fwd_kernel(size_t n, cb_act a, const float *x, float *xsave, float *y) {
    CB_FOR(i, n) {
        float v = x[i];
        if (xsave) xsave[i] = v;
        y[i] = cb_act_fwd_f32(a, v);
    }
}
__global__ void act_bwd_kernel(size_t n, cb_act a, const float *x, const float *y, const float *dy, float *dx) {
    CB_FOR(i, n) dx[i] = cb_act_bwd_f32(a, x ? x[i] : 0.f, y[i], dy[i]);
}

extern "C" void cb_cuda_act_forward(size_t n, cb_act a, const float *x, float *xsave, float *y) {
    if (a == CB_ACT_RELU && !xsave) relu_fwd_kernel<<<cb_blocks(n, 256), 256>>>(n, x, y);
    else act_fwd_kernel<<<cb_blocks(n, 256), 256>>>(n, a, x, xsave, y);
}
extern "C" void cb_cuda_act_backward(size_t n, cb_act a, const float *x, const float *y, const float *dy, float *dx) {
    if (a == CB_ACT_RELU) relu_bwd_kernel<<<cb_blocks(n, 256), 256>>>(n, y, dy, dx);
    else act_bwd_kernel<<<cb_blocks(n, 256), 256>>>(n, a, x, y, dy, dx);
}

__global__ void dropout_fwd_kernel(size_t n, float keep, uint64_t seed, const unsigned long long *step, const float *x, float *mask,
                                   float *y) {
    seed = cb_dropout_seed(seed, step);
    CB_FOR(i, n) {
        float m = cb_hash_uniform(seed, i) < keep ? 1.f / keep : 0.f;
        mask[i] = m;
        y[i] = x[i] * m;
    }
}
__global__ void mul_kernel(size_t n, const float *a, const float *b, float *c) { CB_FOR(i, n) c[i] = a[i] * b[i]; }

extern "C" void cb_cuda_dropout_forward(size_t n, float keep, uint64_t seed, const unsigned long long *step, const float *x, float *mask,
                                        float *y) {
    dropout_fwd_kernel<<<cb_blocks(n, 256), 256>>>(n, keep, seed, step, x, mask, y);
}
__global__ void counter_inc_kernel(unsigned long long *c) { ++*c; }
extern "C" void cb_cuda_counter_inc(unsigned long long *c) { counter_inc_kernel<<<1, 1>>>(c); }
extern "C" void cb_cuda_dropout_backward(size_t n, const float *mask, const float *dy, float *dx) {
    mul_kernel<<<cb_blocks(n, 256), 256>>>(n, mask, dy, dx);
}

// one block per row
__global__ void softmax_kernel(int k, const float *x, float *prob) {
    const float *xr = x + (size_t)blockIdx.x * k;
    float *pr = prob + (size_t)blockIdx.x * k;
    float mx = -INFINITY;
    for (int j = threadIdx.x; j < k; j += blockDim.x) mx = fmaxf(mx, xr[j]);
    mx = cb_block_max(mx);
    float s = 0.f;
    for (int j = threadIdx.x; j < k; j += blockDim.x) s += expf(xr[j] - mx);
    s = cb_block_sum(s);
    for (int j = threadIdx.x; j < k; j += blockDim.x) pr[j] = expf(xr[j] - mx) / s;
}

extern "C" void cb_cuda_softmax(int n, int k, const float *x, float *prob) { softmax_kernel<<<n, 256>>>(k, x, prob); }

__global__ void xent_fwd_kernel(int n, int k, const float *prob, const int32_t *labels, double *loss) {
    double s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        double pr = prob[(size_t)i * k + labels[i]];
        s -= log(pr < 1e-30 ? 1e-30 : pr);
    }
    s = cb_block_sum(s);
    if (threadIdx.x == 0) *loss = s / n;
}

extern "C" void cb_cuda_xent_forward(int n, int k, const float *prob, const int32_t *labels, double *loss) {
    xent_fwd_kernel<<<1, 1024>>>(n, k, prob, labels, loss);
}

__global__ void xent_bwd_kernel(int n, int k, const float *prob, const int32_t *labels, float *dx) {
    size_t t = (size_t)n * k;
    CB_FOR(i, t) {
        int row = (int)(i / k), j = (int)(i % k);
        dx[i] = (prob[i] - (j == labels[row] ? 1.f : 0.f)) / n;
    }
}

extern "C" void cb_cuda_xent_backward(int n, int k, const float *prob, const int32_t *labels, float *dx) {
    size_t t = (size_t)n * k;
    xent_bwd_kernel<<<cb_blocks(t, 256), 256>>>(n, k, prob, labels, dx);
}

// The queue's hold (cb_gpu_hold, src/gpu/gpu.c): one thread polls a word in host memory until the host writes
// `gen` there or `timeout_ns` pass (the global timer), then counts a timeout in *timeouts.
__global__ void hold_kernel(const volatile int *go, volatile int *timeouts, int gen, unsigned long long timeout_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*go != gen) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) {
            *timeouts = *timeouts + 1;
            return;
        }
        __nanosleep(500);
    }
}

extern "C" void cb_cuda_hold_launch(const int *go, int *timeouts, int gen, unsigned long long timeout_ns) {
    hold_kernel<<<1, 1>>>(go, timeouts, gen, timeout_ns);
}

__global__ void add_kernel(size_t n, float *dst, const float *src) { CB_FOR(i, n) dst[i] += src[i]; }
__global__ void fill_kernel(size_t n, float *dst, float v) { CB_FOR(i, n) dst[i] = v; }

extern "C" void cb_cuda_add(size_t n, float *dst, const float *src) { add_kernel<<<cb_blocks(n, 256), 256>>>(n, dst, src); }
extern "C" void cb_cuda_fill(size_t n, float *dst, float v) {
    if (n) fill_kernel<<<cb_blocks(n, 256), 256>>>(n, dst, v);
}

// PyTorch's SGD: g' = g + wd*w; v = momentum*v + g'; w -= lr*v
__global__ void sgd_kernel(size_t n, float lr, float mom, float wd, float *w, const float *g, float *v) {
    CB_FOR(i, n) {
        float d = g[i] + wd * w[i];
        if (v) {
            d = mom * v[i] + d;
            v[i] = d;
        }
        w[i] -= lr * d;
    }
}

extern "C" void cb_cuda_sgd(size_t n, float lr, float momentum, float wd, float *w, const float *g, float *v) {
    sgd_kernel<<<cb_blocks(n, 256), 256>>>(n, lr, momentum, wd, w, g, momentum != 0 ? v : NULL);
}

extern "C" void cb_cuda_concat_copy(int n, int c_dst, int c_src, int c_off, int inner, float *dst, const float *src,
                                    int to_slice) {
    size_t blk = (size_t)c_src * inner * sizeof(float), pitch = (size_t)c_dst * inner * sizeof(float);
    float *big = dst + (size_t)c_off * inner;
    if (!to_slice) cudaMemcpy2DAsync(big, pitch, src, blk, blk, n, cudaMemcpyDeviceToDevice);
    else cudaMemcpy2DAsync(dst, blk, src + (size_t)c_off * inner, pitch, blk, n, cudaMemcpyDeviceToDevice);
}

// Plan-time numerical checks (src/cudnn/graph.c checks a graph plan against a legacy algorithm):
// n values (fp32, or bf16 where bf16) drawn uniform in [-1, 1) from a hash of their index and the
// seed (cb_hash_uniform), and ||a - b|| / ||b|| over n such values
__device__ __forceinline__ float load_any(const void *p, size_t i, int bf16) {
    return bf16 ? __uint_as_float((uint32_t)((const uint16_t *)p)[i] << 16) : ((const float *)p)[i];
}
__global__ void fill_uniform_kernel(size_t n, void *p, int bf16, uint64_t seed) {
    CB_FOR(i, n) {
        float v = 2.f * cb_hash_uniform(seed, i) - 1.f;
        if (bf16) ((uint16_t *)p)[i] = (uint16_t)(__float_as_uint(v) >> 16); // (truncated: any bf16 value will do)
        else ((float *)p)[i] = v;
    }
}
// acc[0] += sum (a - b)^2, acc[1] += sum b^2, acc[2] += the values of a that are not finite
__global__ void nerr_kernel(size_t n, const void *a, const void *b, int bf16, double *acc) {
    double d2 = 0, b2 = 0, bad = 0;
    CB_FOR(i, n) {
        float x = load_any(a, i, bf16), y = load_any(b, i, bf16);
        if (!isfinite(x)) bad += 1;
        else d2 += ((double)x - y) * ((double)x - y), b2 += (double)y * y;
    }
    d2 = cb_block_sum(d2), b2 = cb_block_sum(b2), bad = cb_block_sum(bad);
    if (threadIdx.x == 0) atomicAdd(&acc[0], d2), atomicAdd(&acc[1], b2), atomicAdd(&acc[2], bad);
}
extern "C" int cb_cuda_fill_uniform(size_t n, void *p, int bf16, uint64_t seed) {
    if (n) fill_uniform_kernel<<<cb_blocks(n, 256), 256>>>(n, p, bf16, seed);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
extern "C" double cb_cuda_nerr(size_t n, const void *a, const void *b, int bf16) {
    double *acc = NULL, h[3] = {0, 0, 0};
    if (cudaMalloc(&acc, sizeof h) != cudaSuccess) return -1;
    bool ok = cudaMemset(acc, 0, sizeof h) == cudaSuccess;
    if (ok && n) nerr_kernel<<<cb_blocks(n, 256) < 1024 ? cb_blocks(n, 256) : 1024, 256>>>(n, a, b, bf16, acc);
    ok = ok && cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaFree(acc);
    if (!ok) return -1;
    if (h[2] > 0) return INFINITY;
    return h[1] > 0 ? sqrt(h[0] / h[1]) : (h[0] > 0 ? INFINITY : 0);
}
