// The shapes calibrate measures. Chosen as a grid over the quantities that move an algorithm's
// efficiency (filter size and stride, channels from 3 to 2560, planes from 6x6 to 200x200,
// batch 1 to 128, work from 0.003 to 50 GFLOP), and deliberately not the layers of the networks
// the model is evaluated on (AlexNet, VGG-16, GoogLeNet, ResNet-50): the plane sizes are ones
// those networks do not have, so the evaluation is not circular (tests/test_model.c checks it).
#include "model/model.h"

#include <string.h>

// n, c, h (= w), k, r (= s), stride, pad, groups
static const int CONV[][8] = {
    // 3x3, stride 1
    {64, 32, 120, 48, 3, 1, 1, 1}, {32, 64, 100, 96, 3, 1, 1, 1}, {64, 96, 60, 128, 3, 1, 1, 1}, {16, 128, 64, 160, 3, 1, 1, 1},
    {64, 160, 30, 192, 3, 1, 1, 1}, {32, 256, 32, 320, 3, 1, 1, 1}, {128, 192, 15, 256, 3, 1, 1, 1}, {64, 320, 20, 384, 3, 1, 1, 1},
    {32, 384, 10, 448, 3, 1, 1, 1}, {16, 640, 12, 640, 3, 1, 1, 1}, {128, 48, 24, 96, 3, 1, 1, 1}, {96, 512, 9, 512, 3, 1, 1, 1},
    {8, 64, 200, 64, 3, 1, 1, 1}, {48, 48, 80, 48, 3, 1, 1, 1}, {32, 512, 6, 1024, 3, 1, 1, 1}, {16, 3, 160, 48, 3, 1, 1, 1},
    // 5x5, stride 1
    {64, 48, 30, 160, 5, 1, 2, 1}, {128, 24, 20, 64, 5, 1, 2, 1}, {32, 96, 16, 256, 5, 1, 2, 1}, {128, 16, 12, 48, 5, 1, 2, 1},
    // 1x1, stride 1
    {64, 96, 60, 48, 1, 1, 0, 1}, {32, 320, 30, 96, 1, 1, 0, 1}, {64, 192, 20, 640, 1, 1, 0, 1}, {128, 640, 12, 160, 1, 1, 0, 1},
    {16, 1536, 10, 384, 1, 1, 0, 1}, {64, 48, 100, 192, 1, 1, 0, 1}, {128, 384, 8, 96, 1, 1, 0, 1}, {32, 2560, 6, 512, 1, 1, 0, 1},
    // strided and large filters
    {64, 320, 30, 640, 1, 2, 0, 1}, {64, 96, 60, 96, 3, 2, 1, 1}, {32, 192, 30, 256, 3, 2, 1, 1}, {64, 3, 200, 48, 7, 2, 3, 1},
    {64, 3, 200, 96, 11, 4, 2, 1}, {32, 64, 32, 64, 7, 1, 3, 1},
    // small, latency-bound layers (batch 1-4, 3-70 MFLOP): without them the fitted overheads came
    // from shapes of 0.7 GFLOP and more, and layers of 20-50 us were predicted 1.6x too slow
    // (held-out rows of the 2026-11-23 H200/H100 evaluation; measured again with the next calibration)
    {1, 32, 46, 32, 3, 1, 1, 1}, {2, 64, 22, 64, 3, 1, 1, 1}, {1, 128, 10, 128, 3, 1, 1, 1}, {4, 16, 34, 32, 1, 1, 0, 1},
    {1, 256, 9, 256, 1, 1, 0, 1}, {2, 24, 18, 48, 3, 2, 1, 1},
    // more of the latency-bound and middle regime (batch 1-8, 16-940 MFLOP): the 2026-11-25
    // held-out rows of 20-100 us (random networks at batch 1-4) had six shapes to go by
    {1, 64, 40, 64, 3, 1, 1, 1}, {8, 128, 20, 128, 3, 1, 1, 1}, {1, 512, 5, 512, 3, 1, 1, 1}, {8, 64, 50, 128, 1, 1, 0, 1},
    {2, 192, 18, 64, 1, 1, 0, 1}, {4, 32, 80, 64, 3, 2, 1, 1}, {1, 16, 120, 32, 5, 1, 2, 1}, {8, 256, 16, 512, 1, 2, 0, 1},
    // grouped (depthwise: groups = channels) convolutions, which cuDNN runs with kernels of their
    // own and far lower efficiency; fitted as separate entries (cb_cal_algo.grouped)
    {32, 96, 50, 96, 3, 1, 1, 96}, {8, 192, 24, 192, 3, 2, 1, 192}, {64, 256, 12, 256, 3, 1, 1, 256},
    {1, 144, 40, 144, 3, 1, 1, 144}, {16, 384, 8, 384, 5, 1, 2, 384}, {128, 32, 46, 32, 3, 1, 1, 32},
    // long reductions (N*P*Q of 0.3-2.4 million) over few filter elements: first layers (3-4 input
    // channels) and large planes of few channels, where backward filter runs far below the rate the
    // grid's other shapes give it (2026-11-25: such rows predicted 30% too fast, 16 ms of the gap)
    {64, 3, 192, 32, 3, 1, 1, 1}, {128, 3, 150, 64, 7, 2, 3, 1}, {32, 4, 160, 24, 5, 2, 2, 1}, {96, 3, 120, 32, 11, 4, 2, 1},
    {32, 32, 192, 32, 3, 1, 1, 1}, {128, 48, 90, 48, 3, 1, 1, 1},
    {256, 24, 64, 40, 3, 1, 1, 1}, {192, 64, 40, 32, 1, 1, 0, 1}, {128, 300, 24, 40, 1, 1, 0, 1}, {8, 3, 256, 16, 3, 2, 1, 1},
    // depthwise at large batch and plane (the grid's six above are small problems)
    {128, 120, 60, 120, 3, 1, 1, 120}, {256, 64, 40, 64, 5, 2, 2, 64},
    // channels that are not multiples of 4 (cb_conv_unaligned; the grid above has only the first
    // layers' 3 and 4): entries of their own, over the same regimes as the aligned grid
    {64, 37, 60, 53, 3, 1, 1, 1}, {32, 75, 40, 91, 3, 1, 1, 1}, {128, 21, 32, 45, 3, 1, 1, 1}, {16, 131, 18, 157, 3, 1, 1, 1},
    {8, 59, 50, 67, 3, 1, 1, 1}, {64, 203, 12, 233, 3, 1, 1, 1},
    {64, 96, 30, 43, 1, 1, 0, 1}, {128, 227, 15, 61, 1, 1, 0, 1}, {32, 45, 60, 128, 1, 1, 0, 1}, {16, 301, 10, 77, 1, 1, 0, 1},
    {64, 19, 30, 35, 5, 1, 2, 1}, {32, 23, 40, 41, 7, 1, 3, 1},
    {64, 51, 70, 99, 3, 2, 1, 1}, {96, 117, 30, 131, 1, 2, 0, 1}, {1, 57, 48, 83, 3, 1, 1, 1}, {2, 147, 12, 179, 3, 1, 1, 1},
    {4, 45, 39, 73, 3, 2, 1, 1}, {1, 250, 9, 61, 1, 1, 0, 1},
};
// FC: batch, inputs, outputs (squares give the peak GEMM rate); then classifier heads of few
// outputs (10, 100, 1000), whose backward GEMMs have a short side: the H200's profiles (2026-11-28)
// measured a 10-class head's backward at 3-5x what the model priced from the wide shapes above
static const int FC[][3] = {
    {32, 4608, 2048}, {64, 12000, 3000}, {128, 3000, 6000}, {256, 1024, 1024}, {96, 8192, 8192}, {128, 2000, 500},
    {64, 1536, 768},  {256, 6144, 4096}, {512, 2048, 2048}, {16, 4096, 4096},  {2048, 2048, 2048}, {4096, 4096, 4096},
    {8192, 8192, 8192},
    {64, 2048, 10},   {256, 512, 10},    {1, 1024, 10},     {128, 1024, 100},   {64, 2048, 1000},   {192, 768, 10},
};
// memory-bound passes: tensors (N, C, H, W) from 16 KiB to 400 MB; pooling 3x3 or 2x2, stride 2,
// no padding (cb_cal_pool_shapes adds the other windows)
static const int MOP[][4] = {
    {4, 16, 8, 8}, {8, 32, 20, 20}, {32, 48, 30, 30}, {128, 80, 30, 30}, {64, 200, 15, 15}, {16, 40, 120, 120},
    {32, 48, 60, 60}, {256, 400, 6, 6}, {64, 64, 100, 100}, {128, 120, 50, 50}, {128, 96, 90, 90},
};

// pooling alone: n, c, h (= w), window r (= s; 0: global, the whole plane), stride, pad. Stride 1
// with padding (inception blocks' 3x3 pools), strided with padding, a 5x5, and global windows from
// 5x5 to 40x40 at batch 1 to 512; each measured as max, average and own-kernel pooling
static const int POOL[][6] = {
    {64, 160, 30, 3, 1, 1}, {128, 96, 20, 3, 1, 1}, {8, 64, 50, 3, 1, 1}, {1, 200, 12, 3, 1, 1}, {32, 320, 10, 3, 1, 1},
    {64, 64, 90, 3, 2, 1}, {2, 48, 40, 3, 2, 1}, {32, 128, 24, 5, 1, 2}, {16, 96, 60, 2, 2, 0},
    {512, 512, 5, 0, 1, 0}, {128, 640, 8, 0, 1, 0}, {64, 384, 12, 0, 1, 0}, {96, 256, 20, 0, 1, 0}, {128, 200, 30, 0, 1, 0},
    {64, 240, 40, 0, 1, 0}, {1, 512, 10, 0, 1, 0}, {4, 300, 6, 0, 1, 0},
    // tensors of 100-400 MB (the first pools of VGG-style networks at batch 64-256): the H200's
    // 2026-11-28 set priced VGG-16 b64's pool backward 25-30% short, extrapolated from samples of 77 MB at most
    {64, 48, 200, 2, 2, 0}, {32, 96, 160, 3, 2, 1}, {128, 32, 180, 2, 2, 0},
    // and of 70-180 MB with 72-144 channels: cuDNN's bf16 NHWC backward of 2x2 windows costs 0.014 ns an
    // input element at 32 channels, 0.019 at 48 and 0.024-0.025 from 80 up (the H200, 2026-11-28),
    // and the large samples above had only the few channels (VGG-16 b64's pool1, 64 channels, was
    // priced 0.66 of its 5.2 ms)
    {32, 72, 200, 2, 2, 0}, {64, 96, 120, 2, 2, 0}, {16, 144, 150, 2, 2, 0}, {32, 128, 110, 3, 2, 1},
};

#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

int cb_cal_conv_shapes(cb_conv_params *out, int cap) {
    int n = COUNT(CONV) < cap ? COUNT(CONV) : cap;
    for (int i = 0; i < n; i++) {
        const int *v = CONV[i];
        int o = (v[2] + 2 * v[6] - v[4]) / v[5] + 1;
        out[i] = (cb_conv_params){.n = v[0], .c = v[1], .h = v[2], .w = v[2], .k = v[3], .r = v[4], .s = v[4], .p = o, .q = o,
                                  .stride_h = v[5], .stride_w = v[5], .pad_top = v[6], .pad_left = v[6], .groups = v[7]};
    }
    return n;
}

int cb_cal_fc_shapes(cb_conv_params *out, int cap) {
    int n = COUNT(FC) < cap ? COUNT(FC) : cap;
    for (int i = 0; i < n; i++) out[i] = (cb_conv_params){.n = FC[i][0], .c = FC[i][1], .k = FC[i][2], .h = 1, .w = 1, .p = 1, .q = 1};
    return n;
}

int cb_cal_mop_shapes(cb_conv_params *out, int cap) {
    int n = COUNT(MOP) < cap ? COUNT(MOP) : cap;
    for (int i = 0; i < n; i++) {
        const int *v = MOP[i];
        int r = i % 2 ? 2 : 3, o = (v[2] - r) / 2 + 1;
        out[i] = (cb_conv_params){.n = v[0], .c = v[1], .h = v[2], .w = v[3], .k = v[1], .r = r, .s = r, .p = o, .q = o,
                                  .stride_h = 2, .stride_w = 2, .groups = 1};
    }
    return n;
}

int cb_cal_pool_shapes(cb_conv_params *out, int cap) {
    int n = COUNT(POOL) < cap ? COUNT(POOL) : cap;
    for (int i = 0; i < n; i++) {
        const int *v = POOL[i];
        int r = v[3] ? v[3] : v[2], o = (v[2] + 2 * v[5] - r) / v[4] + 1;
        out[i] = (cb_conv_params){.n = v[0], .c = v[1], .h = v[2], .w = v[2], .k = v[1], .r = r, .s = r, .p = o, .q = o,
                                  .stride_h = v[4], .stride_w = v[4], .pad_top = v[5], .pad_left = v[5], .groups = 1};
    }
    return n;
}

int cb_cal_net_conv_shapes(const cb_net *net, cb_conv_params *out, int n, int cap) {
    for (int i = 0; i < net->nlayers && n < cap; i++) {
        const cb_layer *L = &net->layers[i];
        if (L->op != CB_OP_CONV) continue;
        cb_conv_params p;
        cb_conv_params_of(L, &p);
        bool depthwise = p.groups == p.c && p.groups == p.k;
        // TF SAME's larger trailing pad: cuDNN runs the zero-padded copy (cb_dnn_conv_xin), this shape
        int eh = (p.p - 1) * p.stride_h + p.r - 2 * p.pad_top - p.h, ew = (p.q - 1) * p.stride_w + p.s - 2 * p.pad_left - p.w;
        if (eh > 0) p.h += eh;
        if (ew > 0) p.w += ew;
        if ((p.groups != 1 && !depthwise) || p.dil_h > 1 || p.dil_w > 1 || (p.h + 2 * p.pad_top - p.r) / p.stride_h + 1 != p.p ||
            (p.w + 2 * p.pad_left - p.s) / p.stride_w + 1 != p.q || p.h + 2 * p.pad_top < p.r || p.w + 2 * p.pad_left < p.s)
            continue;
        const double big = (double)(1 << 28); // elements of a tensor: the calibration's buffers hold every shape
        if ((double)p.n * p.c * p.h * p.w > big || (double)p.n * p.k * p.p * p.q > big || (double)p.k * p.c * p.r * p.s > big) continue;
        bool seen = false;
        for (int j = 0; j < n && !seen; j++) seen = memcmp(&out[j], &p, sizeof p) == 0;
        if (!seen) out[n++] = p;
    }
    return n;
}

