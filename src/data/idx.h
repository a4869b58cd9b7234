// MNIST IDX files (idx3-ubyte images, idx1-ubyte labels), raw or gzip-compressed, and the
// Fashion-MNIST data set built from them: float32 NCHW images and int32 labels in memory.
#ifndef CB_DATA_IDX_H
#define CB_DATA_IDX_H

#include "convbench.h"

// Fashion-MNIST's pixel statistics over the 60,000 training images, pixels scaled to [0, 1].
#define CB_FASHION_MEAN 0.2860f
#define CB_FASHION_STD 0.3530f

typedef struct cb_dataset {
    int64_t n;                    // images
    int h, w;                     // image height and width (28 as stored; other after a resize)
    float *x;                     // (N, 1, H, W), [0, 1] or normalised
    int32_t *y;                   // (N), class 0..9
} cb_dataset;

// Read an idx3-ubyte image file: *pix (N, H, W) bytes, malloc'd. Errors name the file:
// missing (IO), bad magic, absurd dimensions, truncated (PARSE).
cb_status cb_idx_read_images(const char *path, uint8_t **pix, int64_t *n, int *h, int *w, cb_error *err);
// Read an idx1-ubyte label file: *lab (N) bytes, malloc'd.
cb_status cb_idx_read_labels(const char *path, uint8_t **lab, int64_t *n, cb_error *err);

// Load a split ("train" or "t10k") from dir: SPLIT-images-idx3-ubyte and SPLIT-labels-idx1-ubyte,
// each with or without ".gz". Pixels are scaled to [0, 1]; with normalise, then (x - mean) / std
// with Fashion-MNIST's statistics above. limit > 0 keeps the first `limit` images only.
cb_status cb_dataset_load(const char *dir, const char *split, bool normalise, int64_t limit, cb_dataset *d,
                          cb_error *err);
void cb_dataset_free(cb_dataset *d);
// Resize every image to (h, w) bilinearly (cb_resize_bilinear). Replaces d->x.
cb_status cb_dataset_resize(cb_dataset *d, int h, int w, cb_error *err);

// Bilinear resize of one plane, src (sh, sw) -> dst (dh, dw), with PyTorch's
// F.interpolate(mode="bilinear", align_corners=False) convention (see resize.c).
void cb_resize_bilinear(const float *src, int sh, int sw, float *dst, int dh, int dw);

#define CB_FASHION_DIR "/usr/share/datasets/fashion-mnist"

#endif
