// The own NHWC depthwise kernels at stride 1 (src/cuda/conv_depthwise.cu), forward and data
// gradient, the 16-byte kernel against the two-channel one, bf16, on a sweep of planes (7 to 112)
// and channels (32 to 768) at about the same number of elements (the batch makes it up), so that
// the plane's and the channels' effects part: ms (median of 20) and GB/s (input and output once,
// against the DRAM's rate), and whether the two kernels agree bit for bit (they sum the same
// products in the same order); then the filter gradient's time and cuDNN's legacy best of each
// phase (cudnnFind, then a median of 10), for scale. The kernels' file is included whole, so its -D
// knobs (DW_PAIR_CPB_MAX, DW_FAST_VMAX, DW_WGRAD_VMAX) apply: dev/cuda/dw_lab.sh builds variants.
//   dw_lab [k=3,5,7] [elems=20000000] [dnn]
#include "cuda/conv_depthwise.cu"
#include "lab.cuh"

#include <stdint.h>

extern "C" void cb_cuda_bias_grad(int, int, int, const float *, float *) {} // (the own-algorithm table's; not run here)

static uint64_t lab_state = 0x9E3779B97F4A7C15ull;
static float lab_rand(void) { // uniform in [-1, 1)
    lab_state = lab_state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((lab_state >> 40) & 0xffffff) / 8388608.f - 1.f;
}
static bf16 *rand_dev(size_t n) {
    std::vector<bf16> h(n);
    for (auto &v : h) v = __float2bfloat16_rn(lab_rand());
    bf16 *d;
    CK(cudaMalloc(&d, n * sizeof(bf16)));
    CK(cudaMemcpy(d, h.data(), n * sizeof(bf16), cudaMemcpyHostToDevice));
    return d;
}
static bool same(const bf16 *a, const bf16 *b, size_t n) {
    std::vector<bf16> x(n), y(n);
    CK(cudaMemcpy(x.data(), a, n * sizeof(bf16), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(y.data(), b, n * sizeof(bf16), cudaMemcpyDeviceToHost));
    return memcmp(x.data(), y.data(), n * sizeof(bf16)) == 0;
}

int main(int argc, char **argv) {
    std::vector<int> ks = {3, 7};
    double elems = 2e7;
    bool with_dnn = false; // cuDNN's legacy columns (slow to find; its graph engines, which convbench races, are faster)
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "k=", 2)) {
            ks.clear();
            for (char *t = strtok(argv[i] + 2, ","); t; t = strtok(NULL, ",")) {
                int k = atoi(t);
                if (k != 3 && k != 5 && k != 7) return fprintf(stderr, "dw_lab: k=%s: the fast kernels take 3, 5 or 7\n", t), 2;
                ks.push_back(k);
            }
        } else if (!strcmp(argv[i], "dnn")) with_dnn = true;
        else if (!strncmp(argv[i], "elems=", 6)) {
            elems = atof(argv[i] + 6);
            if (!(elems >= 1e3 && elems <= 2e8)) return fprintf(stderr, "dw_lab: elems=%s: from 1e3 to 2e8\n", argv[i] + 6), 2;
        }
        else return fprintf(stderr, "dw_lab: '%s': usage: dw_lab [k=3,5,7] [elems=N] [dnn]\n", argv[i]), 2;
    }
    cudnnHandle_t dnn;
    DNN(cudnnCreate(&dnn));
    const size_t DWS = (size_t)256 << 20;
    void *dws;
    CK(cudaMalloc(&dws, DWS));
    printf("| k | plane | C | N | fwd 16B ms | fwd pairs ms | fwd 16B GB/s | fwd pairs GB/s | bwd 16B ms | bwd pairs ms | wgrad ms | cuDNN fwd ms | cuDNN bwd ms | cuDNN wgrad ms | same bits |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    const int planes[] = {7, 14, 28, 56, 112}, chans[] = {32, 96, 192, 384, 768};
    for (int k : ks)
        for (int h : planes)
            for (int c : chans) {
                int n = (int)(elems / ((double)h * h * c) + 0.5);
                if (n < 1) n = 1;
                cb_conv_params p = lab_conv_params(n, c, h, h, c, k, k, 1, k / 2, c);
                size_t ne = (size_t)n * h * h * c;
                bf16 *x = rand_dev(ne), *w = rand_dev((size_t)c * k * k), *dy = rand_dev(ne), *y[2], *dx[2];
                double tf[2], tb[2], tw;
                float *ws;
                bf16 *dwt;
                CK(cudaMalloc(&ws, cb_cuda_dw_workspace(&p, 1) + 16));
                CK(cudaMalloc(&dwt, (size_t)c * k * k * sizeof(bf16)));
                tw = time_ms([&] { cb_cuda_dw_backward_filter(&p, 1, 1, x, dy, dwt, ws); }, 20, 2);
                double td[3]; // cuDNN's legacy best of each phase, for scale (its own outputs)
                {
                    bf16 *yo, *dxo, *dwo;
                    CK(cudaMalloc(&yo, ne * sizeof(bf16)));
                    CK(cudaMalloc(&dxo, ne * sizeof(bf16)));
                    CK(cudaMalloc(&dwo, (size_t)c * k * k * sizeof(bf16)));
                    int algo;
                    for (int ph = 0; ph < 3; ph++) td[ph] = with_dnn ? lab_dnn_best(dnn, p, ph, CUDNN_DATA_BFLOAT16, x, w, yo, dy, dxo, dwo, dws, DWS, &algo) : NAN;
                    cudaFree(yo), cudaFree(dxo), cudaFree(dwo);
                }
                for (int m = 0; m < 2; m++) {
                    CK(cudaMalloc(&y[m], ne * sizeof(bf16)));
                    CK(cudaMalloc(&dx[m], ne * sizeof(bf16)));
                    tf[m] = time_ms([&] { cb_cuda_dw_forward(&p, 1, 1, x, w, NULL, y[m], 0, m); }, 20, 2);
                    tb[m] = time_ms([&] { cb_cuda_dw_backward_data(&p, 1, 1, dy, w, dx[m], m); }, 20, 2);
                }
                CK(cudaDeviceSynchronize());
                double gb = 2.0 * ne * sizeof(bf16) / 1e9;
                bool ok = same(y[0], y[1], ne) && same(dx[0], dx[1], ne);
                printf("| %d | %d | %d | %d | %.4f | %.4f | %.0f | %.0f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %s |\n", k, h, c, n, tf[0], tf[1], gb / tf[0] * 1e3,
                       gb / tf[1] * 1e3, tb[0], tb[1], tw, td[0], td[1], td[2], ok ? "yes" : "NO");
                for (int m = 0; m < 2; m++) cudaFree(y[m]), cudaFree(dx[m]);
                cudaFree(x), cudaFree(w), cudaFree(dy), cudaFree(ws), cudaFree(dwt);
            }
    return 0;
}
