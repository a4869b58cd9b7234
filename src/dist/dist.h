// Data-parallel training over several GPUs (issue 15): gradient buckets, NCCL's bus bandwidth,
// the launcher's environment, and (built with NCCL) one replica of the execution plan per GPU.
#ifndef CB_DIST_DIST_H
#define CB_DIST_DIST_H
#include "convbench.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// ---- buckets (pure C) -------------------------------------------------------------------------
// The parameter gradients live in one arena, layer after layer in the network's order; the
// backward pass completes them from the last layer to the first. A bucket is a contiguous range
// [lo, hi) of the arena (elements) whose all-reduce can start once the backward pass has done
// layer `ready_after` (the lowest layer with parameters in it).
typedef struct cb_bucket {
    int64_t lo, hi;
    int ready_after;
} cb_bucket;

// off[i], count[i]: layer i's slice of the arena (count 0: no parameters; the slices ascend
// with i and touch). Buckets of at least bucket_bytes (but never splitting a layer; 0: one
// bucket per layer with parameters), in the order the backward pass completes them. Returns the
// number written (at most max), or -1 when the slices are not ascending and contiguous or max
// is too small.
int cb_bucket_plan(const int64_t *off, const int64_t *count, int nlayers, size_t bucket_bytes, size_t elem_bytes, cb_bucket *out,
                   int max);

// nccl-tests' figures for all-reduce over n ranks of `bytes` per rank in `seconds`: the
// algorithm bandwidth bytes / seconds and the bus bandwidth algbw * 2 (n - 1) / n, in GB/s (1e9)
double cb_allreduce_algbw(double bytes, double seconds);
double cb_allreduce_busbw(double bytes, double seconds, int n);
// The message sizes of an all-reduce sweep, in bytes: min_bytes rounded down to a whole element
// (at least one), doubled while it stays within max_bytes; at most cap of them. 8 B to 256 MiB
// gives 8, 16, ..., 268435456. Returns how many.
int cb_allreduce_sizes(double min_bytes, double max_bytes, size_t elem_bytes, size_t *sizes, int cap);

// --grad-precision: "fp32" or "bf16" (the all-reduce's element type); false for anything else
bool cb_grad_precision_parse(const char *s, cb_precision *p);

// ---- the launcher's environment (multi-process) ------------------------------------------------
typedef struct cb_dist_env {
    int rank, world, local_rank;
    const char *source; // which variables gave them: "RANK/WORLD_SIZE", "OMPI_COMM_WORLD_*", "SLURM_*"
} cb_dist_env;
// From getenv-like lookups: torchrun's RANK, WORLD_SIZE, LOCAL_RANK; Open MPI's
// OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK; Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID.
// CB_STATUS_ARG with one line naming the variable when one is malformed or out of range;
// world 1, rank 0 when none is set.
cb_status cb_dist_env_parse(const char *(*get)(const char *name), cb_dist_env *out, cb_error *err);

// Rank 0's n bytes of blob (NCCL's unique id) to every rank: spec "file:PATH" (rank 0 writes the
// file whole; the others wait for it) or "tcp://HOST:PORT" (rank 0 listens on PORT and sends it to
// each of the world - 1 others, who connect to HOST). Waits at most timeout_s: then one line,
// CB_STATUS_IO. World 1: nothing to do.
cb_status cb_rendezvous(const char *spec, int rank, int world, void *blob, size_t n, double timeout_s, cb_error *err);

// ---- replicas (NCCL) ---------------------------------------------------------------------------
#define CB_DIST_MAX_GPUS 16

typedef struct cb_dist_opts {
    int ngpus;
    int devices[CB_DIST_MAX_GPUS];  // CUDA device of each replica
    size_t bucket_bytes;            // gradient bucket size (0: one bucket per layer)
    bool overlap;                   // all-reduce each bucket as backward completes it (else after backward)
    bool comm;                      // all-reduce at all (false: the replicas' compute alone)
    bool criterion, update;         // softmax cross-entropy; the SGD update
    // the all-reduce's element type: CB_PREC_FP32 (default) or CB_PREC_BF16 (each bucket cast to a
    // bf16 staging buffer on the communication stream, averaged as bf16, cast back into the fp32
    // gradients, so the update stays fp32; the casts count in comm_ms)
    cb_precision grad_precision;
    int warmup, iters;
    // host data, replica r's batch at x + r * (batch * image), labels + r * batch; NULL: seeded
    // random images per replica (each its own)
    const float *x;
    const int32_t *labels;
    // Multi-process (one process per GPU or group of GPUs, across machines): world ranks in all,
    // this process's replicas are ranks rank_base.. rank_base + ngpus - 1, and nccl_id (NCCL's
    // unique id, CB_DIST_ID_BYTES, from rank 0 through cb_rendezvous). NULL: one process, world = ngpus.
    const void *nccl_id;
    int world, rank_base;
} cb_dist_opts;

#define CB_DIST_ID_BYTES 128 // NCCL_UNIQUE_ID_BYTES
// NCCL's unique id for a new communicator (rank 0 makes it and passes it on)
cb_status cb_dist_unique_id(void *id, cb_error *err);

typedef struct cb_dist_result {
    double step_ms;                 // median over the timed steps of the slowest replica's step
    double compute_ms;              // the same steps without the all-reduce (the replicas' compute alone)
    double comm_ms;                 // median over steps of the all-reduces' summed device time (replica 0)
    double loss;                    // replica 0's last loss (criterion)
    double max_param_diff;          // after the run: largest |param(r) - param(0)| over replicas (must be 0)
    int buckets;
    int64_t params;
} cb_dist_result;

// Runs opts->iters timed steps (after warmup) of data-parallel training: one host thread and one
// cb_exec per GPU (nets[r], each the per-replica batch; eo as for cb_exec_create with
// eo->train), parameters broadcast from replica 0, gradients averaged with NCCL in buckets.
// params_out (NULL-able, nparams floats): replica 0's learnable tensors after the run (weights,
// biases, batch-norm scales and shifts, in the engine's order, packed; res->params of them).
// CB_STATUS_UNSUPPORTED when this build has no NCCL.
cb_status cb_dist_fullpass(cb_net *const *nets, const cb_exec_opts *eo, const cb_dist_opts *opts, cb_dist_result *res, float *params_out,
                           int64_t nparams_out, cb_error *err);

// NCCL all-reduce over ngpus GPUs (devices[]) of each size in bytes[] (nsizes), fp32 (bf16:
// bf16 elements): seconds per all-reduce (median of iters after warmup) into sec[].
cb_status cb_dist_allreduce_bench(int ngpus, const int *devices, const size_t *bytes, int nsizes, bool bf16, int warmup, int iters, double *sec,
                                  cb_error *err);

// how many CUDA devices there are (0 without CUDA or a driver)
int cb_dist_device_count(void);
bool cb_dist_have_nccl(void);
#endif
