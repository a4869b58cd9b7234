// Training and evaluation of a classifier on an in-memory data set through any backend, by the
// public cb_exec API only. Used by `convbench train`, `convbench infer` and the tests.
#ifndef CB_BENCH_TRAIN_H
#define CB_BENCH_TRAIN_H

#include "convbench.h"
#include "data/idx.h"

typedef enum cb_schedule {
    CB_SCHEDULE_NONE,             // constant lr
    CB_SCHEDULE_STEP,             // lr x 0.1 after 50% and again after 75% of the epochs
    CB_SCHEDULE_COSINE,           // per step: lr * (1 + cos(pi * step / steps)) / 2
    CB_SCHEDULE_COUNT
} cb_schedule;
bool cb_schedule_parse(const char *s, cb_schedule *out);
const char *cb_schedule_name(cb_schedule s);

typedef struct cb_epoch_stats {
    int epoch;                    // 1-based
    double lr;                    // at the epoch's first step
    double loss;                  // mean training loss over the epoch's batches
    double train_acc;             // over the images trained on, measured in training mode as they went
    double test_acc;              // inference mode over the whole test set (NaN without one)
    double images_per_s;          // training images / training seconds (evaluation excluded)
    double seconds;               // wall time of the epoch: training plus evaluation
} cb_epoch_stats;

typedef struct cb_train_opts {
    int epochs;
    float lr;                     // base learning rate; momentum and weight decay come from the exec's opts
    cb_schedule schedule;
    uint64_t seed;                // shuffling
    // called after every epoch (NULL-able)
    void (*on_epoch)(void *ctx, const cb_epoch_stats *s);
    void *ctx;
} cb_train_opts;

// SGD over `train` for o->epochs. The exec must have been created with opts.train, on a net whose
// input is (B, 1, H, W) with the data set's H, W. Each epoch visits a fresh permutation; the last
// partial batch is dropped (a different remainder each epoch). stats: o->epochs entries.
cb_status cb_train(cb_exec *e, const cb_dataset *train, const cb_dataset *test, const cb_train_opts *o,
                   cb_epoch_stats *stats, cb_error *err);

// Accuracy in inference mode over all of d. A partial last batch is padded with zero images whose
// rows are ignored. Optional: per-layer forward times summed over batches (t, nlayers entries,
// added to), and the time spent copying batches in (copy_ms, added to).
typedef struct cb_eval_times {
    cb_layer_times *layers;       // NULL or nlayers entries, forward ms added
    double copy_ms;               // cb_exec_set_input, summed over batches
    double forward_ms;            // cb_exec_forward, summed
    int batches;
} cb_eval_times;
cb_status cb_evaluate(cb_exec *e, const cb_dataset *d, double *accuracy, cb_eval_times *times, cb_error *err);

// "NET wants HxW inputs" checks: the net's input must be (B, 1, h, w).
cb_status cb_check_input(const cb_net *net, const cb_dataset *d, cb_error *err);

#endif
