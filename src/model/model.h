// Analytical performance model: a device database, per-algorithm FLOP and byte counts, a
// roofline prediction per layer and direction, Paleo's uncalibrated method, and Paleo's
// distributed-training simulation. Units: FLOP/s, bytes/s, seconds inside, ms in results.
#ifndef CB_MODEL_H
#define CB_MODEL_H

#include "convbench.h"
#include "core/ops.h"

// ---- devices and interconnects (data/devices.json) ------------------------------------------
typedef enum cb_algo {
    CB_ALGO_GEMM,          // explicit im2col (col2im) + GEMM; workspace = the column matrix
    CB_ALGO_IMPLICIT_GEMM, // GEMM with the im2col done on the fly; no workspace
    CB_ALGO_WINOGRAD,      // F(4x4,3x3): 3x3, stride 1, ungrouped
    CB_ALGO_FFT,           // whole-image FFT: stride 1, ungrouped, filter > 1x1
    CB_ALGO_DIRECT,        // everything that is not a convolution or FC: memory-bound loops
    CB_ALGO_FFT_TILING,    // FFT over overlapping tiles (cuDNN: 32x32): stride 1, ungrouped, filter <= tile
    CB_ALGO_COUNT
} cb_algo;
const char *cb_algo_name(cb_algo a);
bool cb_algo_parse(const char *s, cb_algo *a);

// ---- GPU calibration (convbench calibrate --backend cuda|cudnn) -------------------------------
// An algorithm's cost form: its family's FLOP and byte counts, with the family's tile (Winograd
// output tile m, FFT tile edge; 0 = the default 4 or 32), whether the transforms are fused (no
// workspace traffic), and the limits the implementation states (0 = none).
typedef struct cb_algo_form {
    cb_algo family;
    int tile;
    bool fused;
    int max_filter;    // Winograd: square odd filters from 3 up to this edge (0: 3 only)
    int max_padded;    // whole-image FFT: input edge + 2 * pad at most this (cuDNN: 256)
    bool cudnn;        // cuDNN's further rules: FFT filters larger than the padding
    bool blas;         // a cuBLAS GEMM (an FC layer's on the library backends)
    bool best;         // cuDNN's fastest per shape, legacy or graph (FWD_BEST, BWD_DATA_BEST, BWD_FILTER_BEST)
    bool graph;        // cuDNN's graph-API race in tf32 and bf16 (calibrate's FWD_GRAPH, BWD_DATA_GRAPH,
                       // BWD_FILTER_GRAPH: the fastest engine per shape): ungrouped convolutions only
    int store_cmul;    // an own kernel on the library backends' NHWC storage that auto races (the wgmma implicit
                       // GEMM, igemm-wgmma-*): the multiple its channels must be in (its entry's precision
                       // the storage's); 0: none
} cb_algo_form;
// The form of a named algorithm: cuDNN's ("FWD_FFT_TILING", "BWD_DATA_ALGO_1", ...), an own one
// or a cuBLAS GEMM, by exact name from tables (an own name the table lacks: implicit GEMM).
// False for unknown cuDNN names.
bool cb_algo_form_of(const char *name, cb_algo_form *f);
bool cb_algo_form_known(const char *name); // listed in the tables (not the implicit-GEMM default)

// Memory-bound operations the GPU backends run around and between convolutions; bytes per call
// from cb_mop_bytes, time = overhead + bytes / bw.
typedef enum cb_mop {
    CB_MOP_COPY,        // cudaMemcpy device to device: read + write
    CB_MOP_BIAS_ADD,    // y (N,K,P,Q) += b (K)
    CB_MOP_RELU_FWD,    // in place
    CB_MOP_RELU_BWD,    // dy *= (y > 0)
    CB_MOP_BN_FWD,      // batch norm, inference (what profile's forward times): normalise
    CB_MOP_BN_FWD_TRAIN, // batch norm, training: statistics + normalise
    CB_MOP_BN_BWD,      // batch norm backward: dgamma, dbeta, dx
    CB_MOP_BIAS_GRAD,   // db = sum dy
    CB_MOP_ADD,         // dst += src (gradient accumulation, residual add)
    CB_MOP_POOL_FWD,    // max pooling (cuDNN's MAX_DETERMINISTIC under cudnn; average pooling too when
    CB_MOP_POOL_BWD,    // a calibration has no avgpool entries)
    CB_MOP_AVGPOOL_FWD, // average pooling, padding excluded from the count (cuDNN's own code path)
    CB_MOP_AVGPOOL_BWD,
    CB_MOP_OWNPOOL_FWD, // the own pooling kernels (src/cuda/pool.cu), which the cudnn backend runs
    CB_MOP_OWNPOOL_BWD, // where cuDNN cannot express the padding (TF SAME pools)
    CB_MOP_BN_FWD_TRAIN_ODD, // cuDNN's batch norm, training, on NHWC storage whose channels are not a multiple of 8:
    CB_MOP_BN_BWD_ODD,       // the legacy calls the cudnn backend makes there (not the Ex API); bf16 NHWC only
    CB_MOP_ACT_BIAS_GRAD,    // a ReLU's gradient and the bias gradient in one pass over dy (cb_fmt_act_bias_grad): the
                             // backward epilogue of a conv / FC layer with a bias and an activation, no batch norm
    CB_MOP_CONCAT,           // one input of an NHWC concatenation copied into its channel slice (cb_fmt_concat_copy), t the
    CB_MOP_CONCAT_NARROW,    // input and t.k the output's channels, the slice at k - c: rows of 16-byte units (every
                             // channel count and offset allows them), or narrower (the flat kernel): cb_mop_concat
    CB_MOP_COUNT
} cb_mop;
const char *cb_mop_name(cb_mop m);
// the concatenation entry an input of c channels at channel offset off of an output of c_dst takes on
// storage of elem bytes an element: CB_MOP_CONCAT where the rows copy in 16-byte units, else _NARROW
cb_mop cb_mop_concat(int64_t c, int64_t c_dst, int64_t off, int elem);
bool cb_mop_parse(const char *s, cb_mop *m);
// bytes one call moves: t (N,C,H,W) is the tensor (pooling: the input, out = the pooled shape)
double cb_mop_bytes(cb_mop m, const cb_conv_params *t);
bool cb_mop_is_pool(cb_mop m);
// A pooling pass's two window terms (0 for other passes and for t->r == 0): the overlap,
// N*C*H*W * (R / stride_h + S / stride_w) / 2, the input elements times the windows that cover
// one along an axis; and the visits, N*C*P*Q * R*S, every output's window read once. A stride-1
// or large window (3x3 at stride 1, a global average pool) costs cuDNN's pooling up to 28x its
// bytes' time (2026-11-25); on the calibration's pooling tensors, average pooling's backward
// grows with the overlap (a global window's cost with its edge) and max pooling's forward with
// the visits.
double cb_mop_window(cb_mop m, const cb_conv_params *t);
double cb_mop_visits(cb_mop m, const cb_conv_params *t);
// A pooling pass's input elements where its windows tile the input (window = stride on both axes,
// larger than 1: 2x2 at stride 2), else 0. cuDNN runs such pools on other kernels: on bf16 NHWC
// storage its max and average pooling backward took 2-3x the time per element of the 3x3 windows
// at stride 2 (H200 calibration, 2026-11-27), which no window term of the overlap or the visits
// says (both are smaller for a 2x2 window); VGG's five 2x2 pools were predicted 2.5x too fast.
double cb_mop_tiled(cb_mop m, const cb_conv_params *t);
// The tiled elements (cb_mop_tiled) times the fraction of a CB_POOL_LINE_BYTES line that one pixel's
// channels fill on NHWC storage of elem bytes an element, min(1, C * elem / line): the pool_lines
// form's term. cuDNN's bf16 NHWC max pooling backward of 2x2 windows at stride 2 cost 0.014 ns an
// input element at 32 channels, 0.017 at 40, 0.019 at 48 and 0.024-0.025 from 72 to 144 (the H200's
// calibration, 2026-11-29-bestof call 2), linear in C up to a 128-byte line of a pixel and flat
// after it; on fp32 NCHW storage, where a line holds one channel's row, the term fits nothing
// (docs/results/2026-11-29-poolmodel.md).
#define CB_POOL_LINE_BYTES 128
double cb_mop_tiled_line(cb_mop m, const cb_conv_params *t, double elem);
// A pass's traffic beyond l2 bytes, on storage of elem bytes an element (cb_mop_bytes counts fp32's):
// max(0, bytes * elem / 4 - l2); 0 where l2 is 0 (unknown)
double cb_mop_spill(cb_mop m, const cb_conv_params *t, double elem, double l2);

typedef struct cb_cal_algo {
    char name[40];                      // "FWD_IMPLICIT_PRECOMP_GEMM", "igemm-simt", "cublasSgemm"
    cb_algo_form form;
    cb_phase phase;
    cb_precision prec;
    double rate, bw, overhead_s;        // fitted: time = overhead + flops / (rate * util) + bytes / bw
    double wave_rate;                   // the wave_both form: time = overhead + flops / rate + flops / (wave_rate * util)
                                        // + bytes / bw (0: no such term)
    double eff;                         // rate / peak(prec), for reports
    bool fc;                            // a GEMM of the FC layer (its samples were FC shapes)
    bool grouped;                       // fitted on grouped convolutions (groups > 1): priced for those
                                        // layers; the dense entries serve them when no grouped one exists
    bool unaligned;                     // fitted on ungrouped convolutions whose channels are not multiples of 4
                                        // (cb_conv_unaligned): priced for those layers, the dense entries
                                        // serving them when the calibration has none
    int n;                              // samples it was fitted on
    int excluded;                       // measured samples its form's rules exclude (not fitted)
    double err_median_pct, err_p90_pct; // in-sample |fit - measured| / measured
} cb_cal_algo;

// time = overhead + bytes / bw + plane_s * N*H*W + win_s * overlap + visit_s * visits + tile_s * tiled
// + tile_line_s * tiled x line fraction (cb_mop_tiled_line; bf16 NHWC pooling in the pool_lines form):
// the third term for passes that reduce or gather per channel and run a channel's plane serially
// (batch norm, bias gradient), which then scale with the plane, not with the bytes; the last three
// for pooling (cb_mop_window, cb_mop_visits, cb_mop_tiled; a pooling entry is fitted without the
// plane term)
// A pass's traffic beyond the L2's size adds spill_s per byte (the pass's own bytes in its storage,
// read and written, past cb_calibration.l2_bytes): calibrate repeats each call on the same
// tensors, which stay in the L2 where they fit, and so does a step for a pass right after the one
// that wrote its input; bf16 NHWC's ReLU gradient and sum ran 9 M elements at 950 per ns and 38-100 M
// at 690-720 on the H200, and one bandwidth fitted to both priced the large ones up to 2x too fast.
typedef struct cb_cal_mop {
    double bw, overhead_s, plane_s, win_s, visit_s, tile_s, tile_line_s, spill_s;
    int n;
    double err_median_pct;
} cb_cal_mop;

#define CB_CAL_MAX_ALGOS 192
// One calibration sample's residual against its entry's fitted form: r = ln(measured / fitted), at
// the shape's coordinates f = log2 of the implicit GEMM's rows, columns, reduction and the
// channels per filter tap (cb_cal_coords); algo: the entry's index in cb_calibration.algo.
#define CB_CAL_MAX_RESID 6144
typedef struct cb_cal_resid {
    short algo;
    float f[4], r;
} cb_cal_resid;
typedef struct cb_calibration {
    char backend[16];                   // "cudnn", "cuda"; "" = not calibrated this way
    int sms;                            // streaming multiprocessors (wave quantisation)
    // the model's form (a choice made on data, so model-eval can select it leave-one-out):
    int wave_tile;                      // output tile edge of the wave term; 0 = 64, -1 = no wave term
    int wave_wgrad;                     // backward filter: 0 no wave term; 1 tiles over K x C*R*S; 2 the same, split
                                        // over the reduction (N*P*Q) until the tiles fill the SMs (split-K)
    // 1: the throughput and the wave terms apart, each with its own rate: flops / rate is the
    // whole GPU's work, flops / (wave_rate * util) the busiest SM's tiles one after another (its
    // critical path, which sets the time of a problem of few tiles: a handful of SMs each with one
    // tile cannot run at the full GPU's rate per SM); 0: one term, flops / (rate * util)
    int wave_both;
    // 1: the wave and throughput terms count the work of whole tensor-core tiles (cb_conv_fill: a
    // tile's channels padded to its width); 0: the useful FLOPs alone (the form before 2026-11-29,
    // which a file without "wave_fill" was fitted in). calibrate and model-eval fit in form 1.
    int wave_fill;
    // 1: the bf16 NHWC pooling entries fitted with the tiled windows' line term (cb_mop_tiled_line:
    // the channels' share of a 128-byte line of a pixel) where their samples hold both kinds of window;
    // 0: without it (the form before 2026-11-29, which a file without "pool_lines" was fitted in).
    // calibrate and model-eval fit in form 1.
    int pool_lines;
    // carried onto another GPU (cb_device_transfer_calibration): 0, every bandwidth term scales
    // with the datasheet's memory bandwidth; 1, the convolutions' and GEMMs' bandwidth terms scale
    // with the SMs x clock instead (their traffic is mostly the L2's: tiles re-read, workspace
    // written and read back), the memory-bound passes' still with the memory's
    int bw_onchip;
    // the fixed cost per call as a pass sees it: profile and fullpass time a pass's layers between
    // marks with nothing waiting between them, so one call's launch latency hides behind the work
    // queued before it; calibrate used to time each call from an idle GPU (sync, event, call,
    // event), which adds that latency to every call. launch_overlap 1: take launch_s off each
    // idle-timed fixed cost (floored at 0); 0: keep the idle fixed costs (the default, the form
    // before 2026-11-25). stream_timed: the samples were timed as a pass sees them (calibrate
    // since 2026-11-25: calls queued behind another one): nothing to take off.
    int launch_overlap;
    bool stream_timed;
    bool held_timed; // (with stream_timed) each series queued behind a hold: the device's time alone (calibrate --timing held)
    // the convolutions and GEMMs timed in a step's cache state (calibrate --cache step, the default
    // since stop 44, 2026-11-28, "cache": "step"): the L2 flushed, the input written again before each call;
    // false: back to back, their data in the L2 (older files, --cache hot). A record of how the
    // samples were taken; the model reads them the same either way.
    bool cache_step;
    // the backends' backward epilogue as calibrated (calibrate since 2026-11-27, "epilogue":
    // "act_bias"): a conv or FC layer's activation gradient and bias gradient in one pass, none
    // where an own max pool applies the ReLU's (src/model/predict_cal.c, relu_masked); false: the
    // separate passes of the code before, which the profiles measured with older calibrations saw
    bool act_bias_fused;
    // the backends' concatenations take over their inputs' ReLU (calibrate since 2026-11-29,
    // "concat_relu": true; relu_by_concat, src/core/backend.h): such an input runs no ReLU pass (its
    // bias gradient then a pass of its own) and the concatenation's backward reads its output's
    // slice beside the gradient's; false: the code before, which the older profiles measured
    bool concat_relu;
    double launch_s;                    // an empty launch timed with events from an idle GPU (GPU-side: the
                                        // time from one event to the next around one call, not the host's)
    // the host's time per call: wall clock over N back-to-back small cuDNN calls enqueued without a
    // sync, divided by N (calibrate since 2026-11-27); 0: not measured (cb_cal_host_call_s falls back)
    double host_call_s;
    // the same for a cuDNN graph plan's execution, the convolution of a layer whose engine the graph
    // race chose (calibrate since 2026-11-27 evening); 0: not measured (such a call costs host_call_s)
    double host_graph_call_s;
    // the engine's host time per call in a training step: a small network's passes at batch 1 issued
    // from an idle GPU, over the calls cb_predict_layer_calls counts (calibrate since 2026-11-28,
    // tools/cmd_calibrate.c); recorded and reported beside host_call_s, not priced (cb_cal_host_call_s)
    double host_engine_call_s;
    // the whole step's form (model-eval selects it leave-one-network-out): how the host's issuing of
    // calls bounds a pass (cb_host_floor; 0, the default: not at all, the form before 2026-11-27)
    int host_floor;
    // the L2's bytes the passes were fitted with (the device's l2_bytes at the fit; a carried
    // calibration takes the target's): where a pass's traffic passes it, the spill term (cb_cal_mop)
    double l2_bytes;
    // the passes' form (model-eval selects it leave-one-network-out): 1, the spill term fitted where
    // l2_bytes is known; 0, the default: none, the form before 2026-11-27 late
    int spill;
    // the convolutions' and GEMMs' form (model-eval selects it leave-one-network-out): 1, an entry's
    // fitted time times the correction of its nearest calibration shapes (cb_cal_local: what the
    // fitted form misses on the measured shapes near this one, res[] below); 0, the default: none
    int local;
    // the cuDNN convolutions' form (model-eval selects it leave-one-network-out): 1, priced by the
    // entry of cuDNN's fastest per calibrated shape (FWD_BEST ...: fit.c's with_best); 0, the
    // default: the least of every cuDNN algorithm's fitted time
    int best;
    int nres;
    cb_cal_resid res[CB_CAL_MAX_RESID]; // set by cb_cal_fit and cb_cal_residuals, grouped by entry:
    short res_at[CB_CAL_MAX_ALGOS + 1]; // entry j's are res[res_at[j] .. res_at[j + 1])
    int nalgo;
    cb_cal_algo algo[CB_CAL_MAX_ALGOS]; // convolution algorithms, and the FC GEMMs (family gemm, name "cublas*")
    cb_cal_mop mop[CB_MOP_COUNT];       // bw 0: not measured
    // the same passes on bf16 NHWC storage as the cudnn backend runs them (the storage's kernels,
    // cuDNN's NHWC pooling and Ex batch norm), fitted on samples marked bf16; n 0: not measured
    // (the model then prices fp32's with half the bytes)
    cb_cal_mop mop16[CB_MOP_COUNT];
} cb_calibration;

// One calibration measurement, kept in the saved entry so the fit can be redone (--refit).
typedef enum cb_sample_kind { CB_SAMPLE_CONV, CB_SAMPLE_FC, CB_SAMPLE_MOP, CB_SAMPLE_KIND_COUNT } cb_sample_kind;
typedef struct cb_cal_sample {
    cb_sample_kind kind;
    char name[40];                      // algorithm, GEMM or operation name
    cb_phase phase;
    cb_precision prec;
    cb_conv_params p;                   // conv: the shape; fc: n batch, c inputs, k outputs; mop: the tensor
    double ms;                          // median; -1 not supported, -2 workspace over the limit
    double workspace;                   // bytes
} cb_cal_sample;

typedef struct cb_link {
    char name[64], source[256];
    double bw, latency_s;               // bytes/s per direction, seconds per message
} cb_link;

typedef struct cb_device {
    char name[64], kind[8], model[160], source[512];
    char link[64];                      // its usual interconnect, by name in the database ("link"; "": none said)
    double clock_mhz, mem_bytes, mem_bw, launch_s;
    double l2_bytes;                    // the last-level cache (datasheet; 0: unknown): the passes' spill term (cb_cal_mop)
    int cores;
    double peak[CB_PREC_COUNT + 1];     // FLOP/s by precision, [CB_PREC_COUNT] = fp16; 0 = none
    // measured ceilings (0 = not measured): GEMM rate per precision, copy bandwidth
    double meas_gemm[CB_PREC_COUNT + 1], meas_copy_bw;
    char meas_source[256];
    // calibrated fraction of peak per algorithm and phase (0 = not calibrated); when any is
    // set, only calibrated algorithms are considered (the backend has no others)
    double algo_eff[CB_ALGO_COUNT][CB_PHASE_COUNT];
    bool calibrated;
    cb_calibration cal;                 // GPU calibration: per named algorithm, precision and phase
    // the interconnect measured with the calibration (calibrate --allreduce FILE | --allreduce-gpus
    // N; "interconnect" in the entry), simulate's link when none is named; bw 0: none
    cb_link interconnect;
} cb_device;

typedef struct cb_devdb {
    int ndev, nlink;
    cb_device *dev;
    cb_link *link;
} cb_devdb;

// ---- this CPU (src/model/cpudetect.c) ----------------------------------------------------------
typedef struct cb_cpu_info {
    char vendor[16];              // "GenuineIntel", "AuthenticAMD"
    char model[64];               // the brand string
    int family;                   // cpuid family (with the extended family)
    bool fma, avx2, avx512, avx512_bf16, amx; // usable: the CPU has them and the OS saves their state
    int cores;                    // online logical CPUs
    double clock_mhz;             // cpufreq's maximum, else clock_measured_mhz
    double clock_measured_mhz;    // a dependent-add chain timed now
    char clock_source[32];
    int flops_per_cycle;          // FP32 per core
    double peak_fp32, peak_bf16;  // FLOP/s, whole CPU
} cb_cpu_info;
void cb_cpu_detect(cb_cpu_info *c);
void cb_cpu_isa(const cb_cpu_info *c, char *out, size_t n); // "AVX-512 + FMA + AVX512_BF16"
// A device entry for it ("this-cpu"): peaks from the detection; mem_bw left 0 (measure it)
void cb_cpu_device(const cb_cpu_info *c, cb_device *d);

// Path of the database: $CONVBENCH_DEVICES, else data/devices.json in the first of cb_data_dirs() that has it.
const char *cb_devdb_path(void);
cb_status cb_devdb_load(const char *path, cb_devdb *db, cb_error *err); // path NULL: cb_devdb_path()
void cb_devdb_free(cb_devdb *db);
const cb_device *cb_devdb_device(const cb_devdb *db, const char *name); // case-insensitive; NULL
const cb_link *cb_devdb_link(const cb_devdb *db, const char *name);
// A device entry from a calibration file (one device object, as calibrate writes it).
cb_status cb_device_load_file(const char *path, cb_device *d, cb_error *err);
// Puts the measurements of calibration entry c (taken on c's GPU, whose datasheet figures c
// carries) onto device d, another GPU known only from its datasheet: what transfers is each
// algorithm's efficiency (its fitted rate scales with d's peak over c's, per precision), its
// bandwidth term (scaled with d's memory bandwidth over c's, or in the bw_onchip form with the
// SMs x clock), the memory-bound passes (scaled with the memory bandwidth), and
// the fixed costs per call (launch, overheads, the host's time per call: unchanged). The wave term counts d's SMs
// (d->cores) when the database gives them. On the same kind of GPU every ratio is 1. A measured
// interconnect (c->interconnect) is the machine's: it transfers as it is.
void cb_device_transfer_calibration(cb_device *d, const cb_device *c, const char *source);
// Parse/emit one device object (cJSON*), used by load and calibrate.
struct cJSON;
cb_status cb_device_from_json(const struct cJSON *o, cb_device *d, const char *src, cb_error *err);
struct cJSON *cb_device_to_json(const cb_device *d);
// A saved entry's text: the entry, with the samples of a GPU calibration (s, n; NULL, 0: none), as
// indented JSON and a final newline (malloc'd), as calibrate --save and model-eval --save write it.
char *cb_device_entry_text(const cb_device *d, const cb_cal_sample *s, int n);
// the "samples" array of a saved GPU calibration (malloc'd; *n = 0 and NULL when absent)
cb_status cb_cal_samples_from_json(const struct cJSON *arr, cb_cal_sample **s, int *n, const char *src, cb_error *err);
struct cJSON *cb_cal_samples_to_json(const cb_cal_sample *s, int n);
// the samples of a saved calibration file (*n = 0 and NULL when it holds none)
cb_status cb_cal_samples_load_file(const char *path, cb_cal_sample **s, int *n, cb_error *err);

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
// One convolution shape in a given form (its limits applied); epi: epilogue FLOPs folded in.
void cb_conv_cost(const cb_conv_params *p, cb_phase ph, const cb_algo_form *f, int elem_bytes, double epi, cb_algo_cost *c);
// Fraction of the SMs the last wave of output tiles keeps busy, for the GEMM-like families in the
// forward (M = N*P*Q, N = K) and backward-data (M = N*H*W, N = C) directions:
// tiles = ceil(M / t) * ceil(N / t), util = tiles / (ceil(tiles / sms) * sms), t = cal->wave_tile
// (0: 64). 1 for the other families, for backward filter (split over the reduction) unless
// cal->wave_wgrad (then M = K, N = C*R*S, and with split-K (2) the tiles are multiplied by
// s = max(1, floor(sms / tiles)), at most one split per 4096 of the reduction N*P*Q), and for sms <= 0 or wave_tile < 0. The default 64 x 64
// tile is a form choice: of 32, 64, 128 and 256 it fits the calibration shapes best (median of the
// per-algorithm fits 14.5% against 15.5% without the term); convbench model-eval re-makes the
// choice leave-one-network-out.
double cb_conv_util(const cb_conv_params *p, cb_phase ph, const cb_algo_form *f, const cb_calibration *cal);
// The useful fraction of the tensor-core tiles' work in the wave_fill form (1 otherwise, and for fp32,
// grouped convolutions, backward filter, families other than the GEMM-like and wave_tile < 0): the
// kernels step through the reduction per filter tap in slabs of CB_CONV_SLAB_BYTES of channels,
// and an output tile is t (wave_tile) channels wide, so the forward (reduction C, tile over K) and
// the backward data (reduction K, tile over C) do R*S*ceil(red / slab)*slab x ceil(n / t)*t
// channels' work for red x n useful. On the H200's bf16 calibration shapes cuDNN's fastest ran the
// stems (C 8 after the channel padding) at 0.17-0.30x the rate the shapes of 64 channels or more
// fitted, C 16-48 at 0.4-0.8x (the wave form left them 3-6x short); with the fill the fits'
// in-sample p90 goes 62% -> 36% forward and 73% -> 42% backward data (median 18 -> 12%, 23 -> 14%),
// and the same on the older bf16 and tf32 calibrations (docs/results/2026-11-29-fill.md). Backward
// filter keeps the useful FLOPs: there the fill made the tf32 fits worse (median 21 -> 25%).
#define CB_CONV_SLAB_BYTES 128
double cb_conv_fill(const cb_conv_params *p, cb_phase ph, cb_precision prec, const cb_algo_form *f, const cb_calibration *cal);

// ---- calibration shapes (src/model/calshapes.c): fill out[0..cap), return the count -------------
#define CB_CAL_MAX_SHAPES 96
int cb_cal_conv_shapes(cb_conv_params *out, int cap);
int cb_cal_fc_shapes(cb_conv_params *out, int cap);  // n batch, c inputs, k outputs
int cb_cal_mop_shapes(cb_conv_params *out, int cap); // tensors; r, s, stride, p, q: the pooling window
// pooling alone (every pooling pass measured on each): stride 1 with padding, strided with
// padding, large and global windows; r, s, stride, pad_top (= pad_left), p, q as a layer's
int cb_cal_pool_shapes(cb_conv_params *out, int cap);
// `calibrate --shapes-from`: the convolutions of a network other than those the model is evaluated
// on (random networks of other seeds: realistic neighbours for the local form) that calibrate
// measures as they are: groups 1 or depthwise, no dilation, padding cuDNN expresses (symmetric
// leading pads give the output; TF SAME's larger trailing pad as the zero-padded copy cuDNN runs),
// no tensor over 2^28 elements; each one not among out[0..n)
// appended while n < cap. Returns the new count.
#define CB_CAL_MAX_NET_SHAPES 512
int cb_cal_net_conv_shapes(const cb_net *net, cb_conv_params *out, int n, int cap);

// ---- calibration fit (src/model/fit.c) --------------------------------------------------------
// An ungrouped convolution whose input or output channels are not a multiple of 4 (a float4):
// cuDNN runs such shapes slower than the grid's aligned ones predict (2026-11-25: the random
// networks' odd channel counts, forward 15% and backward filter 29% too fast against 1% and 16%
// for aligned layers). The calibration fits them apart where it measured at least
// CB_CAL_MIN_UNALIGNED such shapes of an algorithm (fewer: with the aligned ones, as before).
bool cb_conv_unaligned(const cb_conv_params *p);
#define CB_CAL_MIN_UNALIGNED 12
// Weighted least squares in relative error of t = a + x1 * b1 + x2 * b2 with every coefficient
// >= 0 (the best of the feasible active sets); x2 may be NULL (one term). Returns false for n < 1.
bool cb_fit_nnls(const double *t, const double *x1, const double *x2, int n, double *a, double *b1, double *b2);
// the same with nx <= 4 columns x[0..nx): coef[0] the constant, coef[1 + j] the coefficient of x[j]
bool cb_fit_nnls_n(const double *t, const double *const *x, int nx, int n, double *coef);
// the same with the constant fixed at `fixed` (>= 0; coef[0] = fixed), the other coefficients fitted
bool cb_fit_nnls_fixed(const double *t, const double *const *x, int nx, int n, double fixed, double *coef);
// Fits every (name, phase, precision) group of conv and FC samples and every memory-bound op
// into d->cal (peaks from d for the efficiencies); sms and launch_s must be set before.
cb_status cb_cal_fit(const cb_cal_sample *s, int n, cb_device *d, cb_error *err);
// The residuals of the conv and FC samples against the entries cal holds (cal->res; what the local
// form corrects with): cb_cal_fit sets them, and a calibration read from a file without a refit
// gets them from its samples this way.
void cb_cal_residuals(cb_calibration *cal, const cb_cal_sample *s, int n);
// The local form's factor on entry a's fitted time for shape p (1 without residuals near it): the
// residuals of a's samples weighted by a Gaussian of their distance in cb_cal_coords (one octave
// per coordinate: a factor of 2 in any of them weighs e^-1/2), shrunk towards 1 by a prior weight
// of one sample, so that a shape far from every sample keeps its fitted time.
double cb_cal_local(const cb_calibration *cal, const cb_cal_algo *a, const cb_conv_params *p, bool fc);
// Predicted seconds of one calibrated algorithm on a shape (FC: p.n batch, p.c inputs, p.k outputs).
double cb_cal_algo_s(const cb_calibration *cal, const cb_cal_algo *a, const cb_conv_params *p, bool fc, cb_algo_cost *c);
double cb_cal_mop_s(const cb_calibration *cal, cb_mop m, const cb_conv_params *t);
// the same on a storage of es x fp32's bytes an element (bf16: 0.5), from the fp32 entry: its bytes
// and spill terms at those bytes (what a calibration without bf16 entries prices bf16 passes with)
double cb_cal_mop_es_s(const cb_calibration *cal, cb_mop m, const cb_conv_params *t, double es);
// the same from the bf16 NHWC entries (cb_calibration.mop16); -1 when that pass has none
double cb_cal_mop16_s(const cb_calibration *cal, cb_mop m, const cb_conv_params *t);
// The host's seconds per call it issues: cal->host_call_s where calibrate measured it; for a
// calibration without it (before 2026-11-27), CB_HOST_CALL_PER_LAUNCH x launch_s (see predict_cal.c
// for why that multiple); 0 when neither is known. *measured (may be NULL): whether host_call_s was used.
#define CB_HOST_CALL_PER_LAUNCH 1.0
double cb_cal_host_call_s(const cb_calibration *cal, bool *measured);
// A fitted fixed cost (overhead_s) as a pass sees it: less launch_s for idle-timed samples in the
// launch_overlap form (see cb_calibration), never below 0.
double cb_cal_fixed_s(const cb_calibration *cal, double overhead_s);

// ---- prediction -----------------------------------------------------------------------------
typedef struct cb_pred {
    double ms;                          // 0 when the layer does nothing in this phase
    cb_algo algo;
    double flops, bytes, workspace;
    bool memory_bound;
    char name[40];                      // calibrated device: the algorithm entry chosen ("" otherwise)
    bool graph;                         // that entry is cuDNN's graph race (its form's graph: a graph execution per call)
    double extra_ms;                    // calibrated device: the memory-bound passes around it (bias, BN, ReLU, adds)
} cb_pred;

typedef struct cb_model_opts {
    cb_precision precision;
    double workspace_limit;             // bytes an algorithm may use (0: no limit); calibrated GPUs only
    bool inference;                     // forward as inference (batch norm with running statistics), as profile times it
    cb_layout layout;                   // the activations' storage (NHWC: the cudnn backend's padded-channel copies)
    bool weights_fixed;                 // no update between the steps timed (profile): the storage's weight copies
                                        // are the backend's own, converted once, so no cast is charged per step
    bool own_race;                      // auto's race (not cudnn's): a convolution phase on NHWC storage (bf16, or fp32
                                        // under tf32) is priced at the faster of the libraries' best and the own wgmma
                                        // kernel's entry (igemm-wgmma-bf16 / -tf32: calibrate times it on the storage,
                                        // Hopper only) where the shape takes it; without those entries, as before
} cb_model_opts;

// Effective rates the roofline uses (after efficiencies and measured ceilings).
double cb_model_rate(const cb_device *d, cb_precision p, cb_algo a, cb_phase ph);
double cb_model_bw(const cb_device *d);
// time = max(flops / rate, bytes / bw) + launch; seconds
double cb_roofline_s(double flops, double rate, double bytes, double bw, double launch_s, bool *memory_bound);
// A device with a GPU calibration (d->cal.nalgo > 0): per phase, the fastest calibrated algorithm
// of the precision that the shape allows (fp32 entries when the precision has none), plus the
// memory-bound passes the cudnn backend runs around it; src/model/predict_cal.c.
void cb_predict_layer_cal(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *o, cb_pred *out);
// fastest applicable algorithm for layer i in phase ph (layer 0, the input, or i past the last: 0 ms)
void cb_predict_layer(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *o, cb_pred *out);
// weight update (SGD with momentum): read w, g, v; write v, w
void cb_predict_update(const cb_device *d, const cb_net *net, const cb_model_opts *o, cb_pred *out);
// whether layer i computes a gradient w.r.t. its input (not when every parent is the net input)
bool cb_model_needs_data_grad(const cb_net *net, int i);
// A pass as profile and fullpass time it starts on an idle GPU: its first piece of work waits for
// the host's first call and the GPU's pick-up, the calibration's launch_s (calibrate times every
// call as a pass sees it, queued, so no fitted cost holds that wait). cb_pass_start_s: that time
// (0 without a GPU calibration); cb_pass_first: the layer and phase whose time it falls in, the
// forward's first layer, or the backward's first piece (the last layer's activation or batch norm
// gradient, counted in its backward data; else its weights' gradient; else its backward data).
double cb_pass_start_s(const cb_device *d);
int cb_pass_first(const cb_net *net, bool backward, cb_phase *ph);

// Calls the host issues for layer i in phase ph on a library backend (cudnn): every cuDNN, cuBLAS
// or cudaMemcpyAsync call and every own-kernel launcher counts one (one that launches several
// kernels still one); the table and its rules in src/model/predict_cal.c (host_calls).
int cb_predict_layer_calls(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *o); // o NULL: fp32 NCHW

// How the host bounds a pass (cb_calibration's host_floor): fullpass times each pass from an
// empty GPU queue, and the host issues every call of it one after another, host_call_s each.
typedef enum cb_host_floor {
    CB_HOST_FLOOR_NONE,  // the sum of the layers' GPU times (each call's fixed cost only)
    CB_HOST_FLOOR_PASS,  // max(sum of the GPU times, sum of the host times) per pass: the queue fills
    CB_HOST_FLOOR_LAYER, // sum over the layers of max(GPU time, host time): nothing queues across layers
    CB_HOST_FLOOR_COUNT
} cb_host_floor;
const char *cb_host_floor_name(cb_host_floor f);

// A training step as `convbench fullpass --update --no-data-grad` times it: every layer's training
// forward, backward data and backward filter (each as profile times a layer), softmax
// cross-entropy forward and backward on the last layer's output, and the SGD update, one pass
// over the parameter arena (read w, g, v; write v, w). fwd/bwd_*: the layers' GPU times summed;
// fwd_pass/bwd_pass: each pass with the host floor of d->cal.host_floor applied (the backward
// pass is backward data and filter together, as fullpass times it); total = the passes +
// criterion + update. ms. src/model/predict_cal.c.
typedef struct cb_step_pred {
    double fwd_ms, bwd_data_ms, bwd_filter_ms, criterion_ms, update_ms, total_ms;
    int calls_fwd, calls_bwd;           // host calls per pass (cb_predict_layer_calls)
    double host_fwd_ms, host_bwd_ms;    // those calls x cb_cal_host_call_s, and host_graph_ms
    double host_graph_ms[2];            // of those, forward and backward: what graph executions cost beyond a call (host_graph_call_s)
    double fwd_pass_ms, bwd_pass_ms;    // the passes as predicted (the floor applied)
    bool host_bound_fwd, host_bound_bwd; // the pass's host time exceeds its GPU time (whatever the form)
    int host_layers, layer_passes;      // (layer, pass) pairs with any call, and those whose host time exceeds their GPU time
} cb_step_pred;
void cb_predict_step(const cb_device *d, const cb_net *net, const cb_model_opts *o, cb_step_pred *out);

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
    // the all-reduced gradients' element type, as fullpass --grad-precision: CB_PREC_FP32 (4 bytes)
    // or CB_PREC_BF16 (2 bytes, plus the casts there and back on each worker)
    cb_precision grad_precision;
} cb_sim_opts;

// ---- measured inputs (src/model/measured.c) ---------------------------------------------------
// The interconnect fitted to `convbench allreduce --format json` (2+ GPUs): bandwidth and latency
// of simulate's ring model. CB_STATUS_PARSE (one line naming the file) when it is not such a result.
cb_status cb_link_from_allreduce(const char *path, cb_link *out, cb_error *err);
// The same fit to k all-reduces of bytes[j] taken sec[j] seconds each over gpus GPUs (2+); src
// names the measurement in messages (NULL: none), source is what out->source says.
cb_status cb_link_fit(const double *bytes, const double *sec, int k, int gpus, const char *src, const char *source, cb_link *out,
                      cb_error *err);
// The steps of `fullpass --gpus --format json`: (gpus, step ms) rows; CB_STATUS_ARG when its
// network, scaling, batch or gradient precision differ from the simulation's (batch per GPU under
// weak scaling, in all under strong; a file without "grad_precision" was fp32).
typedef struct cb_measured_step {
    int gpus;
    double step_ms;
} cb_measured_step;
cb_status cb_measured_steps(const char *path, const char *network, int64_t batch, bool strong, cb_precision grad, cb_measured_step *out,
                            int max, int *n, cb_error *err);

// net is re-batched as needed (left at its original batch on return).
cb_status cb_simulate(cb_net *net, const cb_device *d, const cb_link *l, const cb_sim_opts *o, const int *workers, int n,
                      cb_sim_step *out, cb_error *err);

#endif
