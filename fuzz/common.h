// Shared by the libFuzzer harnesses (fuzz/fuzz_*.c, built by `make fuzz`): the input as a file,
// for the readers that take a path, and a fixed device and network for the model.
#ifndef CB_FUZZ_COMMON_H
#define CB_FUZZ_COMMON_H

#include "convbench.h"
#include "model/model.h"

#include <stddef.h>
#include <stdint.h>

// A private temporary directory, made once per process (removed at exit).
const char *fuzz_dir(void);
// Write data to fuzz_dir()/name (replacing it); returns the path (static storage per name slot).
const char *fuzz_file(const char *name, const uint8_t *data, size_t n);
// Predict every layer and phase of net on d with the roofline and Paleo's model, and check the
// answers are numbers (never NaN, never negative).
void fuzz_predict(const cb_device *d, const cb_net *net);
// A device entry (H200-like datasheet figures) for harnesses that fuzz the network.
const cb_device *fuzz_device(void);
// The same fitted to the H200 calibration samples in tests/data (the calibrated model's path).
const cb_device *fuzz_cal_device(void);
// A small network with every parameterised kind (conv with bias and batch norm, FC, BatchNorm).
cb_net *fuzz_net(void);

#define FUZZ_ASSERT(c)                                                                                                 \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);                          \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

#endif
