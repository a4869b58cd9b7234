// The NHWC pool kernels alone (src/storage/pool_fmt.cu), on the GPU: each pool shape of some
// networks, fp32 and bf16 storage, under each setting: the gather backward (CONVBENCH_POOL_SCATTER=off)
// with the forward's window as by default, known at compile time at every vector width
// (cb_fmt_pool_rs) or in runtime loops; then the default (fp32 max at one channel a thread: the
// scatter backward). Per row: forward (with the argmax) and backward, median of 20 launches timed
// by CUDA events after 3 untimed, and the DRAM floor (bytes each pass must move: x, y and argmax
// forward; dy, argmax and dx backward) at 4.3 TB/s (the H200's copy rate). Each setting's outputs
// are compared with the first setting's: bit for bit, but the scatter's dx within 1e-5 (its adds
// come in any order). On 2026-11-29 it also timed two forms since removed
// (docs/results/2026-11-29-pools.md).
//   nvcc -O3 -std=c++17 -arch=sm_90 -DCB_HAVE_CUDA -Iinclude -Isrc dev/pool_bench.cu -Lbuild -lconvbench -Xlinker -rpath,build -o pool_bench
//   ./pool_bench [SHAPE [fp32|bf16]]    (a markdown table on stdout; exit 1 where settings disagree)
#include "core/ops.h"
#include "storage/format.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

typedef struct {
    const char *name;
    int n, c, h, w, r, stride, pt, pb; // square window and stride; pads top = left, bottom = right
} shape;

static const shape shapes[] = {
    {"gen-inception-s2 b192 inception_2/pool", 192, 322, 36, 36, 3, 1, 1, 1},
    {"gen-inception-s2 b192 inception_1/pool", 192, 277, 36, 36, 3, 1, 1, 1},
    {"gen-inception-s2 b192 pool1", 192, 49, 72, 72, 3, 2, 0, 1},
    {"GoogLeNet b128 inception_3b/pool", 128, 256, 28, 28, 3, 1, 1, 1},
    {"GoogLeNet b128 inception_4a/pool", 128, 480, 14, 14, 3, 1, 1, 1},
    {"GoogLeNet b128 pool1", 128, 64, 112, 112, 3, 2, 0, 1},
    {"GoogLeNet b128 pool2", 128, 192, 56, 56, 3, 2, 0, 1},
    {"ResNet-50 b256 pool1", 256, 64, 112, 112, 3, 2, 1, 1},
    {"odd b64 C101 3x3 s1", 64, 101, 35, 35, 3, 1, 1, 1},
};

static const struct {
    int rs, scatter;
    const char *label;
} modes[] = {{-1, 0, "CONVBENCH_POOL_SCATTER=off"},
             {1, 0, "CONVBENCH_POOL_RS=on CONVBENCH_POOL_SCATTER=off"},
             {0, 0, "CONVBENCH_POOL_RS=off CONVBENCH_POOL_SCATTER=off"},
             {-1, -1, "default"}};

static int cmp_f(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

#define CK(x)                                                                                                                              \
    do {                                                                                                                                   \
        cudaError_t e_ = (x);                                                                                                              \
        if (e_ != cudaSuccess) {                                                                                                           \
            fprintf(stderr, "pool_bench: %s: %s\n", #x, cudaGetErrorString(e_));                                                           \
            exit(2);                                                                                                                       \
        }                                                                                                                                  \
    } while (0)

// median ms of 20 timed runs of pass (0 forward, 1 backward)
static float time_pass(int pass, const cb_pool_params *p, int fmt, void *x, void *y, void *am, void *dy, void *dx) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    float t[20];
    for (int i = 0; i < 23; i++) {
        CK(cudaEventRecord(a, 0));
        if (pass == 0) cb_fmt_pool_forward(p, fmt, x, y, am);
        else cb_fmt_pool_backward(p, fmt, dy, am, dx);
        CK(cudaEventRecord(b, 0));
        CK(cudaEventSynchronize(b));
        if (i >= 3) CK(cudaEventElapsedTime(&t[i - 3], a, b));
    }
    CK(cudaGetLastError());
    cudaEventDestroy(a), cudaEventDestroy(b);
    qsort(t, 20, sizeof t[0], cmp_f);
    return 0.5f * (t[9] + t[10]);
}

// n bytes of random values in [-1, 1) as fp32 or bf16 (the high half of an fp32)
static void fill(void *d, size_t elems, int bf) {
    size_t es = bf ? 2 : 4;
    unsigned char *h = (unsigned char *)malloc(elems * es);
    unsigned s = 12345u;
    for (size_t i = 0; i < elems; i++) {
        s = s * 1664525u + 1013904223u;
        float v = (float)(s >> 8) / 8388608.0f - 1.0f;
        if (bf) {
            unsigned u;
            memcpy(&u, &v, 4);
            unsigned short hv = (unsigned short)(u >> 16);
            memcpy(h + i * 2, &hv, 2);
        } else memcpy(h + i * 4, &v, 4);
    }
    CK(cudaMemcpy(d, h, elems * es, cudaMemcpyHostToDevice));
    free(h);
}

int main(int argc, char **argv) {
    int bad = 0, only = argc > 1 ? atoi(argv[1]) : -1, only_bf = argc > 2 ? !strcmp(argv[2], "bf16") : -1;
    printf("| pool | storage | setting | fwd ms | bwd ms | fwd floor ms | fwd / floor | bwd / floor |\n|---|---|---|---:|---:|---:|---:|---:|\n");
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int bf = 0; bf < 2; bf++) {
            if ((only >= 0 && (size_t)only != si) || (only_bf >= 0 && only_bf != bf)) continue;
            const shape *sh = &shapes[si];
            cb_pool_params p = {0};
            p.n = sh->n, p.c = sh->c, p.h = sh->h, p.w = sh->w, p.r = p.s = sh->r, p.stride_h = p.stride_w = sh->stride;
            p.pad_top = p.pad_left = sh->pt;
            p.p = (sh->h + sh->pt + sh->pb - sh->r) / sh->stride + 1, p.q = (sh->w + sh->pt + sh->pb - sh->r) / sh->stride + 1;
            size_t nx = (size_t)p.n * p.c * p.h * p.w, ny = (size_t)p.n * p.c * p.p * p.q, es = bf ? 2 : 4;
            int fmt = CB_FMT_NHWC | (bf ? CB_FMT_BF16 : 0);
            void *x, *y, *am, *dy, *dx, *y0, *am0, *dx0;
            CK(cudaMalloc(&x, nx * es)); CK(cudaMalloc(&y, ny * es)); CK(cudaMalloc(&am, ny)); CK(cudaMalloc(&dy, ny * es));
            CK(cudaMalloc(&dx, nx * es)); CK(cudaMalloc(&y0, ny * es)); CK(cudaMalloc(&am0, ny)); CK(cudaMalloc(&dx0, nx * es));
            fill(x, nx, bf), fill(dy, ny, bf);
            double floor_f = (double)(nx * es + ny * es + ny) / 4.3e9, floor_b = (double)(ny * es + ny + nx * es) / 4.3e9; // ms
            for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
                cb_fmt_pool_rs(modes[m].rs), cb_fmt_pool_scatter(modes[m].scatter);
                float f = time_pass(0, &p, fmt, x, y, am, dy, dx);
                float b = time_pass(1, &p, fmt, x, y, am, dy, dx);
                CK(cudaDeviceSynchronize());
                if (m == 0) {
                    CK(cudaMemcpy(y0, y, ny * es, cudaMemcpyDeviceToDevice)); CK(cudaMemcpy(am0, am, ny, cudaMemcpyDeviceToDevice));
                    CK(cudaMemcpy(dx0, dx, nx * es, cudaMemcpyDeviceToDevice));
                } else {
                    unsigned char *h1 = (unsigned char *)malloc(nx * es), *h2 = (unsigned char *)malloc(nx * es);
                    int same = 1;
                    CK(cudaMemcpy(h1, y, ny * es, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(h2, y0, ny * es, cudaMemcpyDeviceToHost));
                    same &= !memcmp(h1, h2, ny * es);
                    CK(cudaMemcpy(h1, am, ny, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(h2, am0, ny, cudaMemcpyDeviceToHost));
                    same &= !memcmp(h1, h2, ny);
                    CK(cudaMemcpy(h1, dx, nx * es, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(h2, dx0, nx * es, cudaMemcpyDeviceToHost));
                    if (modes[m].scatter && !bf) { // (the scatter's sums in any order: within fp32 rounding)
                        for (size_t i = 0; i < nx; i++) same &= fabsf(((float *)h1)[i] - ((float *)h2)[i]) <= 1e-5f;
                    } else same &= !memcmp(h1, h2, nx * es);
                    free(h1), free(h2);
                    if (!same) printf("FAIL %s %s %s: outputs differ from %s\n", sh->name, bf ? "bf16" : "fp32", modes[m].label, modes[0].label);
                    bad += !same;
                }
                printf("| %s C%d | %s | %s | %.3f | %.3f | %.3f | %.2f | %.2f |\n", sh->name, p.c, bf ? "bf16" : "fp32", modes[m].label, f, b,
                       floor_f, f / floor_f, b / floor_b);
                fflush(stdout);
            }
            cudaFree(x), cudaFree(y), cudaFree(am), cudaFree(dy), cudaFree(dx), cudaFree(y0), cudaFree(am0), cudaFree(dx0);
        }
    cb_fmt_pool_rs(-1), cb_fmt_pool_scatter(-1);
    return bad ? 1 : 0;
}
