// Data set options and loading shared by `convbench train` and `convbench infer`.
#ifndef CB_TOOLS_FASHION_COMMON_H
#define CB_TOOLS_FASHION_COMMON_H

#include "cli.h"
#include "data/idx.h"

typedef struct data_opts {
    const char *dir;              // --data
    long resize;                  // --resize N (0: none)
    bool no_normalise;            // --no-normalise
} data_opts;

#define DATA_OPTS(d)                                                                                                   \
    {"--data", CLI_STR, &(d).dir, "DIR", "Fashion-MNIST IDX files, raw or .gz (default " CB_FASHION_DIR ")"},        \
        {"--resize", CLI_INT, &(d).resize, "N", "resize the 28x28 images to NxN bilinearly (the net's input size)"}, \
        {"--no-normalise", CLI_FLAG, &(d).no_normalise, NULL,                                                          \
         "pixels in [0, 1] only; by default (x - 0.2860) / 0.3530 (use the same for train and infer)"}

// Load split "train" or "t10k" (limit > 0: first `limit` images), resize, and check that the net
// takes them. Returns -1 to go on, or an exit status after printing the reason.
int data_load(const cli_cmd *cmd, const data_opts *d, const cb_net *net, const char *split, int64_t limit,
              cb_dataset *out);

#endif
