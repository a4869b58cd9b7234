// Analytical performance model: a device database, per-algorithm FLOP and byte counts, a
// roofline prediction per layer and direction, Paleo's uncalibrated method, and Paleo's
// distributed-training simulation. Units: FLOP/s, bytes/s, seconds inside, ms in results.
#ifndef CB_MODEL_H
#define CB_MODEL_H

#include "convbench.h"

// ---- devices and interconnects (data/devices.json) ------------------------------------------
typedef enum cb_algo {
    CB_ALGO_GEMM,          // explicit im2col (col2im) + GEMM; workspace = the column matrix
    CB_ALGO_IMPLICIT_GEMM, // GEMM with the im2col done on the fly; no workspace
    CB_ALGO_WINOGRAD,      // F(4x4,3x3): 3x3, stride 1, ungrouped
    CB_ALGO_FFT,           // whole-image FFT: stride 1, ungrouped, filter > 1x1
    CB_ALGO_DIRECT,        // everything that is not a convolution or FC: memory-bound loops
    CB_ALGO_COUNT
} cb_algo;
const char *cb_algo_name(cb_algo a);
bool cb_algo_parse(const char *s, cb_algo *a);

typedef struct cb_device {
    char name[64], kind[8], model[160], source[512];
    double clock_mhz, mem_bytes, mem_bw, launch_s;
    int cores;
    double peak[CB_PREC_COUNT + 1];     // FLOP/s by precision, [CB_PREC_COUNT] = fp16; 0 = none
    // measured ceilings (0 = not measured): GEMM rate per precision, copy bandwidth
    double meas_gemm[CB_PREC_COUNT + 1], meas_copy_bw;
    char meas_source[256];
    // calibrated fraction of peak per algorithm and phase (0 = not calibrated); when any is
    // set, only calibrated algorithms are considered (the backend has no others)
    double algo_eff[CB_ALGO_COUNT][CB_PHASE_COUNT];
    bool calibrated;
} cb_device;

typedef struct cb_link {
    char name[64], source[256];
    double bw, latency_s;               // bytes/s per direction, seconds per message
} cb_link;

typedef struct cb_devdb {
    int ndev, nlink;
    cb_device *dev;
    cb_link *link;
} cb_devdb;

// Path of the database: $CONVBENCH_DEVICES, else data/devices.json, else CB_DATA_DIR/devices.json.
const char *cb_devdb_path(void);
cb_status cb_devdb_load(const char *path, cb_devdb *db, cb_error *err); // path NULL: cb_devdb_path()
void cb_devdb_free(cb_devdb *db);
const cb_device *cb_devdb_device(const cb_devdb *db, const char *name); // case-insensitive; NULL
const cb_link *cb_devdb_link(const cb_devdb *db, const char *name);
// A device entry from a calibration file (one device object, as calibrate writes it).
cb_status cb_device_load_file(const char *path, cb_device *d, cb_error *err);
// Parse/emit one device object (cJSON*), used by load and calibrate.
struct cJSON;
cb_status cb_device_from_json(const struct cJSON *o, cb_device *d, const char *src, cb_error *err);
struct cJSON *cb_device_to_json(const cb_device *d);

// ---- per-algorithm costs --------------------------------------------------------------------
typedef struct cb_algo_cost {
    bool applicable;
    double flops;                       // arithmetic actually done (Winograd: fewer multiplies + transforms)
    double mults;                       // multiplies in the main product stage (for the hand counts)
    double bytes;                       // DRAM traffic: inputs, weights, outputs once + workspace written and read
    double workspace;                   // bytes of scratch
} cb_algo_cost;

// elem_bytes: 4 for fp32/tf32, 2 for bf16.
void cb_algo_cost_of(const cb_net *net, int i, cb_phase ph, cb_algo a, int elem_bytes, cb_algo_cost *c);

// ---- prediction -----------------------------------------------------------------------------
typedef struct cb_pred {
    double ms;                          // 0 when the layer does nothing in this phase
    cb_algo algo;
    double flops, bytes, workspace;
    bool memory_bound;
} cb_pred;

typedef struct cb_model_opts {
    cb_precision precision;
} cb_model_opts;

// Effective rates the roofline uses (after efficiencies and measured ceilings).
double cb_model_rate(const cb_device *d, cb_precision p, cb_algo a, cb_phase ph);
double cb_model_bw(const cb_device *d);
// time = max(flops / rate, bytes / bw) + launch; seconds
double cb_roofline_s(double flops, double rate, double bytes, double bw, double launch_s, bool *memory_bound);
// fastest applicable algorithm for layer i in phase ph
void cb_predict_layer(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *o, cb_pred *out);
// weight update (SGD with momentum): read w, g, v; write v, w
void cb_predict_update(const cb_device *d, const cb_net *net, const cb_model_opts *o, cb_pred *out);
// whether layer i computes a gradient w.r.t. its input (not when every parent is the net input)
bool cb_model_needs_data_grad(const cb_net *net, int i);

// Paleo's FlopsProfiler with cuDNN heuristics off: GEMM FLOPs over the fp32 peak plus each
// tensor's bytes over the memory bandwidth (GiB as Paleo), platform percent 1.0. ms.
double cb_paleo_layer_ms(const cb_device *d, const cb_net *net, int i, cb_phase ph);
double cb_paleo_update_ms(const cb_device *d, const cb_net *net);

// ---- distributed simulation (Paleo's simulation.py) ----------------------------------------
typedef enum cb_allreduce { CB_AR_RING, CB_AR_TREE, CB_AR_BUTTERFLY, CB_AR_COUNT } cb_allreduce;
typedef enum cb_parallel { CB_PAR_DATA, CB_PAR_MODEL, CB_PAR_HYBRID, CB_PAR_COUNT } cb_parallel;

// all-reduce of `bytes` among n workers over link: seconds
double cb_allreduce_s(cb_allreduce a, int n, double bytes, const cb_link *l);

typedef struct cb_sim_step {
    int workers;
    int64_t batch_per_worker, effective_batch;
    double fwd_ms, bwd_ms, update_ms, compute_ms, comm_ms, total_ms;
    double speedup, efficiency;         // vs one worker: throughput ratio, speedup / workers
} cb_sim_step;

typedef struct cb_sim_opts {
    cb_parallel parallel;
    cb_allreduce allreduce;
    bool strong;                        // strong scaling: the batch is split; weak: per worker
    bool overlap;                       // gradient all-reduce overlaps the backward pass
    bool paleo;                         // per-layer times by Paleo's method
    cb_model_opts model;
} cb_sim_opts;

// net is re-batched as needed (left at its original batch on return).
cb_status cb_simulate(cb_net *net, const cb_device *d, const cb_link *l, const cb_sim_opts *o, const int *workers, int n,
                      cb_sim_step *out, cb_error *err);

#endif
