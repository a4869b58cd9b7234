// What the CPU emulations of GPU algorithms share (dev/*_emu.cpp): a reference stand-in for the
// engine's bias-gradient kernel, the test generator, and the normalised error of test_gpu.c.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void cb_cuda_bias_grad(int n, int k, int inner, const float *dy, float *db) {
    for (int c = 0; c < k; c++) {
        double s = 0;
        for (int i = 0; i < n; i++)
            for (int o = 0; o < inner; o++) s += dy[((size_t)i * k + c) * inner + o];
        db[c] = (float)s;
    }
}

static uint64_t rng = 88172645463325252ULL;
static float urand() {
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (float)((rng * 2685821657736338717ULL) >> 40) / 16777216.0f * 2.f - 1.f;
}

static double nerr(const std::vector<float> &a, const std::vector<float> &b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); i++) {
        if (!std::isfinite(a[i])) return INFINITY;
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]), den += (double)b[i] * b[i];
    }
    return std::sqrt(num / (den > 0 ? den : 1));
}
