// The own blocked convolution's layouts and product loop (src/cpu/blocked.c), shared with the
// Winograd forward (src/cpu/winograd.c), which writes its transforms straight into these layouts
// and runs its 36 products as one batch of 1x1 convolutions with a weight set per image.
#ifndef CB_CPU_BLOCKED_H
#define CB_CPU_BLOCKED_H

#include "cpu/kernels.h"

// the layouts of one call, fixed by the shape and the ISA (V the vector width, CB = min(C, V)):
//   packed input  (N, NCB, Hp, Wp, CB)       zeros around the image and past C
//   packed weights (K2, NCB, R, S, CB, 2, V) zeros past K and C
typedef struct bk_geom {
    int isa, v, cb, ncb, k2, hp, wp, tw, tiles, dh, dw;
} bk_geom;

// the geometry for the ISA that runs (cb_cpu_direct_isa), or for isa (its number: 0 scalar,
// 1 AVX2, 2 AVX-512; workspace sizes take the largest)
bk_geom cb_cpu_blocked_geom(const cb_conv_params *p);
bk_geom cb_cpu_blocked_geom_isa(const cb_conv_params *p, int isa);
// floats of one image's packed input and of one weight set
size_t cb_cpu_blocked_image_floats(const bk_geom *g);
size_t cb_cpu_blocked_weight_floats(const cb_conv_params *p, const bk_geom *g);
// x (N, C, H, W) -> xb (N, NCB, Hp, Wp, CB), OpenMP over (image, channel block); the backward
// filter (src/cpu/wgrad.c) reads the same packed input
void cb_cpu_blocked_pack_input(const cb_conv_params *p, const bk_geom *g, const float *x, float *xb);
// y (N, K, P, Q) = the convolution of each packed image n with weight set wb + n * wstride
// (wstride 0: one set for all), plus b (K) or NULL; OpenMP over (image, pair, row)
void cb_cpu_blocked_run(const cb_conv_params *p, const bk_geom *g, const float *xb, const float *wb, size_t wstride,
                        const float *b, float *y);

#endif
