// The limits on untrusted input, stated once. Every reader checks them at parse time and
// answers a violation with one line naming the file, layer or flag (exit 2): nothing past them
// reaches the arithmetic, the allocator or a loop whose length the input chooses.
#ifndef CB_CORE_LIMITS_H
#define CB_CORE_LIMITS_H

#include <stdint.h>

// ---- network descriptions (src/spec/paleo.c, src/core/net.c) ----
#define CB_MAX_FILE_BYTES (64u << 20)    // a network or device JSON file
#define CB_MAX_JSON_DEPTH 1000           // nesting of JSON arrays and objects: cJSON's CJSON_NESTING_LIMIT
#define CB_MAX_LAYERS (1 << 17)          // layers after Block and ModelParallel expansion (131,072)
#define CB_MAX_SPLITS 4096               // a ModelParallel block's "splits"
#define CB_MAX_MP_LAYERS (1 << 16)       // layers one ModelParallel block expands to: splits x sub-layers
#define CB_MAX_PARENT_REFS (1 << 21)     // parent references of all layers, after "@all" expansion
#define CB_MAX_DIM INT32_MAX             // any tensor dimension, an InnerProduct's inputs per example
#define CB_MAX_WINDOW (1 << 20)          // kernel sides, strides and pads of a window
#define CB_MAX_CHANNELS (1 << 24)        // a Convolution filter's input or output channels
#define CB_MAX_GROUPS (1 << 20)          // a Convolution's "groups"
#define CB_MAX_FC_OUTPUTS (1 << 28)      // an InnerProduct's num_outputs
// Every tensor's element count times 4 (its fp32 bytes), every layer's parameter count times 16
// (weights, gradients, momentum, their bytes), and the network totals of summary, predict and the
// engine's plan fit in int64: checked with overflow-checked arithmetic when a network is built
// and again at every batch change (cb_net_set_batch).

// ---- command line (tools/) ----
#define CB_MAX_BATCH (1 << 30)           // --batch

// ---- IDX data (src/data/idx.c) ----
#define CB_IDX_MAX_COUNT 100000000LL     // images or labels in a file
#define CB_IDX_MAX_SIDE 4096             // image height and width
#define CB_IDX_CLASSES 10                // labels are 0..9 (Fashion-MNIST)

// ---- device descriptions (src/model/devices.c) ----
#define CB_DEV_MAX_RATE 1e21             // FLOP/s, bytes/s: positive, finite, at most this
#define CB_DEV_MAX_COUNT 1000000         // SMs, cores, sample counts

#endif
