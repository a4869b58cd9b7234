// Why is cuDNN's backward filter slower inside a training pass than in `calibrate`?
// (docs/results/2026-11-25-model-hp.md: the same call on the same shape, 2-4.7x.) For a few shapes,
// each backward-filter algorithm and cudnnConvolutionBackwardBias are timed in the ways the two
// differ, one thing changed at a time:
//   cal      calibrate's way: a call ahead, then 3 calls back to back, per call
//   warm1    a call ahead, then one call
//   cold     the L2 flushed (a 256 MiB memset) before the one call
//   pass     what a pass runs before it: a ReLU backward over dy (read y and dy, write dy), then the
//            call (the L2 holds the end of dy, as in a pass)
//   sparse   cold, dy ReLU-masked (half zeros) and scaled to 1e-4, as a real gradient
//   denorm   cold, dy of magnitude 1e-39 (subnormal)
//   bias     cudnnConvolutionBackwardBias alone, cold; bias+w: bias then the call, both timed
// Build and run (GPU machine, repository root):
//   nvcc -O3 -std=c++17 -arch=sm_90 dev/cuda/ctx_lab.cu -lcudnn -o /tmp/ctx_lab && /tmp/ctx_lab
#include "lab.cuh"

#include <math.h>

struct shape {
    const char *name;
    int n, c, h, w, k, r, s, stride, pad;
};
static const shape SHAPES[] = {
    {"ctxA conv1 (cal. shape)", 128, 3, 150, 150, 64, 7, 7, 2, 3},
    {"ctxF conv1 (cal. shape)", 64, 3, 200, 200, 96, 11, 11, 4, 0},
    {"ctxA conv2 1x1", 128, 64, 75, 75, 32, 1, 1, 1, 0},
    {"cal. 1x1", 192, 64, 40, 40, 32, 1, 1, 1, 0},
    {"3x3 128ch", 64, 128, 28, 28, 128, 3, 3, 1, 1},
};

__global__ void relu_bwd(size_t n, const float *y, float *dy) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dy[i] = y[i] > 0 ? dy[i] : 0;
}
__global__ void fill_pat(size_t n, float *p, unsigned seed, float scale, bool mask) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)(i * 2654435761u) ^ seed;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        float v = ((h & 0xffffff) / 16777216.f - 0.5f) * scale;
        p[i] = mask && (h >> 24) & 1 ? 0.f : v;
    }
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    setvbuf(stdout, NULL, _IOLBF, 0);
    cudnnHandle_t h;
    if (!DNN(cudnnCreate(&h))) return 1;
    const size_t FLUSH = 256u << 20, WS = 1u << 30;
    void *flush, *ws;
    CK(cudaMalloc(&flush, FLUSH));
    CK(cudaMalloc(&ws, WS));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    const float one = 1, zero = 0;
    printf("shape | algo | cal | warm1 | cold | pass | sparse | denorm | bias | bias+w (ms, median of 7)\n");
    for (const shape &S : SHAPES) {
        int p = (S.h + 2 * S.pad - S.r) / S.stride + 1, q = (S.w + 2 * S.pad - S.s) / S.stride + 1;
        size_t nx = (size_t)S.n * S.c * S.h * S.w, ny = (size_t)S.n * S.k * p * q, nw = (size_t)S.k * S.c * S.r * S.s;
        float *x, *y, *dy, *dw, *db;
        CK(cudaMalloc(&x, nx * 4));
        CK(cudaMalloc(&y, ny * 4));
        CK(cudaMalloc(&dy, ny * 4));
        CK(cudaMalloc(&dw, nw * 4));
        CK(cudaMalloc(&db, S.k * 4));
        fill_pat<<<1024, 256>>>(nx, x, 1, 1, false);
        fill_pat<<<1024, 256>>>(ny, y, 2, 1, false);
        cudnnTensorDescriptor_t xd, yd, bd;
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd;
        cudnnCreateTensorDescriptor(&xd), cudnnCreateTensorDescriptor(&yd), cudnnCreateTensorDescriptor(&bd);
        cudnnCreateFilterDescriptor(&wd), cudnnCreateConvolutionDescriptor(&cd);
        cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, S.n, S.c, S.h, S.w);
        cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, S.n, S.k, p, q);
        cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, S.k, 1, 1);
        cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, S.k, S.c, S.r, S.s);
        cudnnSetConvolution2dDescriptor(cd, S.pad, S.pad, S.stride, S.stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
        cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH);
        auto wgrad = [&](int a, size_t wsz) {
            return cudnnConvolutionBackwardFilter(h, &one, xd, x, yd, dy, cd, (cudnnConvolutionBwdFilterAlgo_t)a, ws, wsz, &zero, wd, dw);
        };
        auto bias = [&] { cudnnConvolutionBackwardBias(h, &one, yd, dy, &zero, bd, db); };
        // the time of f() alone after pre() (not timed), median of 7
        auto timed = [&](auto pre, auto f, int calls) {
            std::vector<float> t;
            for (int r = 0; r < 7; r++) {
                pre();
                cudaEventRecord(e0);
                for (int k = 0; k < calls; k++) f();
                cudaEventRecord(e1);
                cudaEventSynchronize(e1);
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                t.push_back(ms / calls);
            }
            std::sort(t.begin(), t.end());
            return t[3];
        };
        auto cold = [&] { cudaMemsetAsync(flush, 1, FLUSH); };
        auto dy_rand = [&] { fill_pat<<<1024, 256>>>(ny, dy, 3, 1, false); };
        for (int a = 0; a < CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT; a++) {
            size_t wsz = 0;
            if (cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, wd, (cudnnConvolutionBwdFilterAlgo_t)a, &wsz) !=
                    CUDNN_STATUS_SUCCESS ||
                wsz > WS)
                continue;
            dy_rand();
            if (wgrad(a, wsz) != CUDNN_STATUS_SUCCESS) continue;
            CK(cudaDeviceSynchronize());
            auto w = [&] { wgrad(a, wsz); };
            double t_cal = timed([&] { w(); }, w, 3);
            double t_warm = timed([&] { w(); }, w, 1);
            double t_cold = timed(cold, w, 1);
            double t_pass = timed([&] { relu_bwd<<<1024, 256>>>(ny, y, dy); }, w, 1);
            fill_pat<<<1024, 256>>>(ny, dy, 4, 2e-4f, true);
            double t_sparse = timed(cold, w, 1);
            fill_pat<<<1024, 256>>>(ny, dy, 5, 2e-39f, false);
            double t_den = timed(cold, w, 1);
            dy_rand();
            double t_bias = timed(cold, bias, 1);
            double t_bw = timed(cold, [&] { bias(), w(); }, 1);
            printf("%s %dx%dx%dx%d->%d %dx%d/%d | ALGO_%d ws %.0f MiB | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f\n", S.name, S.n,
                   S.c, S.h, S.w, S.k, S.r, S.s, S.stride, a, wsz / 1048576.0, t_cal, t_warm, t_cold, t_pass, t_sparse, t_den, t_bias,
                   t_bw);
        }
        CK(cudaGetLastError());
        cudaFree(x), cudaFree(y), cudaFree(dy), cudaFree(dw), cudaFree(db);
        cudnnDestroyTensorDescriptor(xd), cudnnDestroyTensorDescriptor(yd), cudnnDestroyTensorDescriptor(bd);
        cudnnDestroyFilterDescriptor(wd), cudnnDestroyConvolutionDescriptor(cd);
    }
    cudnnDestroy(h);
    return 0;
}
