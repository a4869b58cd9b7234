// libFuzzer: the IDX reader (raw or gzip) through cb_dataset_load, which reads an image file and
// a label file and checks them against each other. The input is split in two at a point its
// first byte chooses; the second byte picks normalisation and a limit.
#include "common.h"
#include "data/idx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    size_t cut = 2 + (size_t)data[0] * (size - 2) / 255;
    fuzz_file("train-images-idx3-ubyte", data + 2, cut - 2);
    fuzz_file("train-labels-idx1-ubyte", data + cut, size - cut);
    cb_dataset d;
    cb_error err = {0};
    cb_status st = cb_dataset_load(fuzz_dir(), "train", data[1] & 1, data[1] >> 1, &d, &err);
    if (st != CB_OK) {
        FUZZ_ASSERT(err.msg[0] && !strchr(err.msg, '\n') && st != CB_STATUS_NOMEM);
        return 0;
    }
    FUZZ_ASSERT(d.n >= 0 && d.h >= 1 && d.w >= 1);
    for (int64_t i = 0; i < d.n; i++) FUZZ_ASSERT(d.y[i] >= 0 && d.y[i] <= 9);
    cb_dataset_free(&d);
    return 0;
}
