// Training batch norm on NHWC storage (src/storage/norm_fmt.cu) against memory speed and cuDNN's
// Ex batch norm (persistent NHWC, PyTorch's channels-last path), on ResNet-50's batch-norm shapes:
// the median ms of one call of each direction, its bytes (the passes' reads and writes) and
// GB/s, a device-to-device copy of the same tensor as the bandwidth reference. norm_fmt.cu is
// compiled into this file, so its chunk policy can be changed with -D (dev/cuda/bn_lab.sh builds
// variants: BN_BLOCKS_PER_SM, BN_CHUNK_MIN_NHWC).
//   bn_lab [batch] [bf16|fp32] [SHAPES] [periodic|one]
// $BN_LAB_ACT: the fused activation timed (relu where unset; silu, gelu, ...: src/core/act.h's names)
// SHAPES: a comma-separated list of HxWxC (each counted once) in place of ResNet-50's, "-" for those;
// the fourth argument "one" runs C not a multiple of the vector one channel a thread
// (cb_fmt_bn_periodic(0)), as CONVBENCH_BN_PERIODIC=off does
#include "../../src/storage/norm_fmt.cu"

#include "lab.cuh"

#include <cuda_bf16.h>

struct shape {
    int h, w, c;
};

template <class T> __global__ void fill(T *p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (T)((float)((i * 2654435761u + seed * 40503u) % 1000) / 666.f - 0.5f);
}

// the forward's three kernels alone (the statistics' reduction, the per-channel finish, the output
// pass with a ReLU): ms each; v: the vectors' (16 B) per-channel vectors: gamma, beta, mean, invstd,
// rmean, rvar
static cb_act lab_act = CB_ACT_RELU;
template <class T, int V>
static void pass_ms(const cb_bn_params *p, const void *x, void *y, float *part, float *const *v, double *red, double *fin, double *app) {
    bn_run<T, V> r = {p, true, bn_chunks(p, true, V), (int64_t)p->h * p->w, (int64_t)p->n * p->h * p->w};
    r.init();
    float *coef = BN_COEF(part, r.part_chunks(), p->c);
    *red = time_ms([&] { r.template reduce<BN_STATS, CB_ACT_NONE>((const T *)x, nullptr, nullptr, nullptr, part); }, 20, 3);
    *fin = time_ms([&] {
        bn_finish<T, BN_STATS><<<warps_grid(p->c), 256>>>(p->c, r.part_chunks(), (double)r.rows, true, r.hw, (const T *)x, part, v[0], v[1], p->eps,
                                                          0.1f, v[2], v[3], v[4], v[5], nullptr, nullptr, coef);
    }, 20, 3);
    *app = time_ms([&] { r.template apply_act<BN_STATS>(coef, lab_act, (const T *)x, nullptr, (T *)y); }, 20, 3);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 64;
    bool bf = !(argc > 2 && !strcmp(argv[2], "fp32"));
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (getenv("BN_LAB_ACT") && !cb_act_parse(getenv("BN_LAB_ACT"), &lab_act)) {
        fprintf(stderr, "bn_lab: BN_LAB_ACT '%s' is not an activation\n", getenv("BN_LAB_ACT"));
        return 2;
    }
    // ResNet-50 v1.5's batch norms: (plane side, channels) and how many layers have it
    std::vector<shape> shapes = {{112, 112, 64}, {56, 56, 64}, {56, 56, 256}, {56, 56, 128}, {28, 28, 128}, {28, 28, 512},
                                 {28, 28, 256}, {14, 14, 256}, {14, 14, 1024}, {14, 14, 512}, {7, 7, 512}, {7, 7, 2048}};
    std::vector<int> count = {1, 6, 4, 1, 7, 5, 1, 11, 7, 1, 5, 4};
    const char *what = "ResNet-50's 53 batch norms";
    if (argc > 3 && strcmp(argv[3], "-")) {
        shapes.clear(), count.clear(), what = "the shapes given";
        for (const char *s = argv[3]; *s;) {
            shape sh;
            int used = 0;
            if (sscanf(s, "%dx%dx%d%n", &sh.h, &sh.w, &sh.c, &used) != 3 || sh.h < 1 || sh.w < 1 || sh.c < 1 || sh.c > 2048) {
                fprintf(stderr, "bn_lab: bad shape list '%s' (HxWxC,..., C up to 2048)\n", argv[3]);
                return 2;
            }
            shapes.push_back(sh), count.push_back(1);
            s += used;
            if (*s == ',') s++;
        }
    }
    if (argc > 4) cb_fmt_bn_periodic(strcmp(argv[4], "one") != 0);
    size_t es = bf ? 2 : 4, most = 0;
    for (const shape &sh : shapes) most = std::max(most, (size_t)n * sh.h * sh.w * sh.c);
    void *x, *y, *dy, *dx, *m, *ws;
    float *gamma, *beta, *mean, *invstd, *rmean, *rvar, *dgamma, *dbeta, *part;
    CK(cudaMalloc(&x, most * es)), CK(cudaMalloc(&y, most * es)), CK(cudaMalloc(&dy, most * es)), CK(cudaMalloc(&dx, most * es));
    CK(cudaMalloc(&m, most * es));
    size_t cmax = 2048;
    float **vecs[] = {&gamma, &beta, &mean, &invstd, &rmean, &rvar, &dgamma, &dbeta};
    for (auto v : vecs) CK(cudaMalloc((void **)v, cmax * 4));
    CK(cudaMalloc((void **)&part, cb_fmt_bn_scratch((int64_t)cmax) * 4));
    size_t wsb = 64 << 20;
    CK(cudaMalloc(&ws, wsb));
    // values: x, dy, m in [-0.5, 1), gamma 1, beta 0, running statistics 0 / 1
    for (int j = 0; j < 3; j++) {
        void *t = j == 0 ? x : j == 1 ? dy : m;
        if (bf) fill<<<1024, 256>>>((__nv_bfloat16 *)t, most, 7u * j + 1);
        else fill<<<1024, 256>>>((float *)t, most, 7u * j + 1);
    }
    {
        std::vector<float> one(cmax, 1.f), zero(cmax, 0.f);
        for (float *v : {gamma, rvar}) CK(cudaMemcpy(v, one.data(), cmax * 4, cudaMemcpyHostToDevice));
        for (float *v : {beta, rmean}) CK(cudaMemcpy(v, zero.data(), cmax * 4, cudaMemcpyHostToDevice));
    }
    cudnnHandle_t h;
    DNN(cudnnCreate(&h));
    int fmt = CB_FMT_NHWC | (bf ? CB_FMT_BF16 : 0);
    printf("batch %d, %s NHWC, activation %s%s; ms per call (median of 20); GB/s = the passes' bytes / time\n", n, bf ? "bf16" : "fp32", cb_act_name(lab_act),
           argc > 4 && !strcmp(argv[4], "one") ? ", one channel a thread where C is not a multiple of the vector" : "");
    printf("%-12s %5s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "shape", "count", "copy_GBs", "fwd_ms", "fwd_GBs", "dnnf_ms", "bwd_ms",
           "bwd_GBs", "dnnb_ms", "mask_ms", "mask_GBs", "stat_GBs", "fin_us", "out_GBs");
    double tot[5] = {0};
    for (size_t k = 0; k < shapes.size(); k++) {
        int hh = shapes[k].h, ww = shapes[k].w, c = shapes[k].c;
        cb_bn_params p = {n, c, hh, ww, 1e-5f};
        size_t t = (size_t)n * c * hh * ww;
        double gb = (double)t * es / 1e9;
        double copy = time_ms([&] { cudaMemcpyAsync(y, x, t * es, cudaMemcpyDeviceToDevice); }, 20, 3);
        double fwd = time_ms([&] { cb_fmt_bn_forward_train(&p, fmt, x, gamma, beta, y, mean, invstd, rmean, rvar, 0.1f, lab_act, part); }, 20, 3);
        double bwd = time_ms([&] { cb_fmt_bn_backward(&p, fmt, x, gamma, beta, mean, invstd, lab_act, dy, dx, dgamma, dbeta, part); }, 20, 3);
        double mask = time_ms([&] { cb_fmt_bn_backward_relu_mask(&p, fmt, x, gamma, mean, invstd, m, dy, dx, dgamma, dbeta, part); }, 20, 3);
        double red = -1, fin = -1, app = -1; // the forward's kernels alone, as the forward runs them (its vector width)
        float *const pv[6] = {gamma, beta, mean, invstd, rmean, rvar};
        int vw = bn_width(&p, true, es, x, y, x);
        if (bf && vw == 8) pass_ms<bf16, 8>(&p, x, y, part, pv, &red, &fin, &app);
        else if (bf) pass_ms<bf16, 1>(&p, x, y, part, pv, &red, &fin, &app);
        else if (vw == 4) pass_ms<float, 4>(&p, x, y, part, pv, &red, &fin, &app);
        else pass_ms<float, 1>(&p, x, y, part, pv, &red, &fin, &app);
        // cuDNN's Ex batch norm, persistent NHWC (no activation: its fused ops need other layouts)
        cudnnTensorDescriptor_t td, bd;
        DNN(cudnnCreateTensorDescriptor(&td)), DNN(cudnnCreateTensorDescriptor(&bd));
        DNN(cudnnSetTensor4dDescriptor(td, CUDNN_TENSOR_NHWC, bf ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT, n, c, hh, ww));
        DNN(cudnnDeriveBNTensorDescriptor(bd, td, CUDNN_BATCHNORM_SPATIAL_PERSISTENT));
        float one = 1, zero = 0;
        bool dnn_ok = dnn_check(cudnnBatchNormalizationForwardTrainingEx(h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &one, &zero, td, x,
                                                                        NULL, NULL, td, y, bd, gamma, beta, 0.1, rmean, rvar, 1e-5, mean, invstd,
                                                                        NULL, ws, wsb, NULL, 0), __FILE__, __LINE__);
        double dnnf = !dnn_ok ? -1 : time_ms([&] {
            cudnnBatchNormalizationForwardTrainingEx(h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &one, &zero, td, x, NULL, NULL, td, y, bd,
                                                     gamma, beta, 0.1, rmean, rvar, 1e-5, mean, invstd, NULL, ws, wsb, NULL, 0);
        }, 20, 3);
        double dnnb = !dnn_ok ? -1 : time_ms([&] {
            cudnnBatchNormalizationBackwardEx(h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &one, &zero, &one, &zero, td, x, NULL, NULL, td, dy,
                                              NULL, NULL, td, dx, bd, gamma, beta, dgamma, dbeta, 1e-5, mean, invstd, NULL, ws, wsb, NULL, 0);
        }, 20, 3);
        cudnnDestroyTensorDescriptor(td), cudnnDestroyTensorDescriptor(bd);
        char name[32];
        snprintf(name, sizeof name, "%dx%dx%d", hh, ww, c);
        // passes: forward reads x twice, writes y; backward reads x, dy twice, writes dx; the
        // masked backward also reads m and writes dy over in its first pass
        printf("%-12s %5d %8.0f %8.4f %8.0f %8.4f %8.4f %8.0f %8.4f %8.4f %8.0f %8.0f %8.1f %8.0f\n", name, count[k], 2 * gb / copy * 1e3, fwd, 3 * gb / fwd * 1e3,
               dnnf, bwd, 5 * gb / bwd * 1e3, dnnb, mask, 7 * gb / mask * 1e3, gb / red * 1e3, fin * 1e3, 2 * gb / app * 1e3);
        double row[5] = {fwd, dnnf, bwd, dnnb, mask};
        for (int j = 0; j < 5; j++) tot[j] += count[k] * row[j];
    }
    printf("== summary: %s at batch %d, ms: own forward %.3f, cuDNN forward %.3f, own backward %.3f, cuDNN backward %.3f, "
           "own backward with the sum's ReLU %.3f\n", what, n, tot[0], tot[1], tot[2], tot[3], tot[4]);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
