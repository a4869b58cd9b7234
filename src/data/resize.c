// Bilinear image resize with PyTorch's F.interpolate(mode="bilinear", align_corners=False)
// convention (also OpenCV's INTER_LINEAR): output pixel centres map back to the input by
//   src = (dst + 0.5) * (in / out) - 0.5, clamped below at 0,
// the lower neighbour is floor(src), the upper min(lower + 1, in - 1), and the weights are the
// fractional distances. With align_corners=True corners would map to corners instead; not used.
#include "data/idx.h"
#include "core/net.h"

#include <stdlib.h>

typedef struct axis_tap { int lo, hi; float frac; } axis_tap;

static void taps(int in, int out, axis_tap *t) {
    float scale = (float)in / (float)out;
    for (int o = 0; o < out; o++) {
        float s = ((float)o + 0.5f) * scale - 0.5f;
        if (s < 0) s = 0;
        int lo = (int)s;
        if (lo > in - 1) lo = in - 1;
        t[o].lo = lo;
        t[o].hi = lo + 1 < in ? lo + 1 : in - 1;
        t[o].frac = s - (float)lo;
    }
}

void cb_resize_bilinear(const float *src, int sh, int sw, float *dst, int dh, int dw) {
    axis_tap *ty = malloc(sizeof *ty * (size_t)dh), *tx = malloc(sizeof *tx * (size_t)dw);
    if (!ty || !tx) abort();
    taps(sh, dh, ty);
    taps(sw, dw, tx);
    for (int y = 0; y < dh; y++) {
        const float *r0 = src + (size_t)ty[y].lo * sw, *r1 = src + (size_t)ty[y].hi * sw;
        float fy = ty[y].frac;
        for (int x = 0; x < dw; x++) {
            float fx = tx[x].frac;
            float top = r0[tx[x].lo] * (1 - fx) + r0[tx[x].hi] * fx;
            float bot = r1[tx[x].lo] * (1 - fx) + r1[tx[x].hi] * fx;
            dst[(size_t)y * dw + x] = top * (1 - fy) + bot * fy;
        }
    }
    free(ty);
    free(tx);
}

cb_status cb_dataset_resize(cb_dataset *d, int h, int w, cb_error *err) {
    if (h < 1 || w < 1 || h > 4096 || w > 4096)
        return cb_fail(err, CB_STATUS_ARG, "--resize", NULL, "%d x %d: sides must be in [1, 4096]", h, w);
    if (h == d->h && w == d->w) return CB_OK;
    size_t plane = (size_t)h * w;
    float *x = malloc(plane * (size_t)(d->n ? d->n : 1) * sizeof(float));
    if (!x) return cb_fail(err, CB_STATUS_NOMEM, "--resize", NULL, "out of memory for %lld images of %d x %d",
                           (long long)d->n, h, w);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d->n; i++) cb_resize_bilinear(d->x + (size_t)i * d->h * d->w, d->h, d->w, x + plane * (size_t)i, h, w);
    free(d->x);
    d->x = x;
    d->h = h;
    d->w = w;
    return CB_OK;
}
