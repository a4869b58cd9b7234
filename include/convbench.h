// convbench: read, summarise, run, measure and predict convolutional networks.
//
// Public C11 API. A network is loaded from a Paleo-format JSON description into a cb_net (a
// graph of layers in topological order with every shape inferred), summarised with the cost
// functions, and run by a cb_exec: one network, one backend, buffers planned once.
#ifndef CONVBENCH_H
#define CONVBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- version and data -----------------------------------------------------------------------
#define CONVBENCH_VERSION_MAJOR 0
#define CONVBENCH_VERSION_MINOR 1
#define CONVBENCH_VERSION_PATCH 0
#define CONVBENCH_VERSION "0.1.0"
// MAJOR * 10000 + MINOR * 100 + PATCH, for #if
#define CONVBENCH_VERSION_NUMBER (CONVBENCH_VERSION_MAJOR * 10000 + CONVBENCH_VERSION_MINOR * 100 + CONVBENCH_VERSION_PATCH)

const char *cb_version(void); // the library's CONVBENCH_VERSION (the header's may differ)
// Where data (nets/, devices.json) is looked for, ':'-separated, in order: the installed
// PREFIX/share/convbench, $CONVBENCH_DATA, the source tree the library was built in.
const char *cb_data_dirs(void);
// Threads for the CPU backends (OpenMP loops and OpenBLAS); n < 1 leaves them as they are.
void cb_set_threads(int n);
// The first DIR/rel of cb_data_dirs() that exists, in out; false (and the source tree's path) if none.
bool cb_data_file(const char *rel, char *out, size_t n);

// ---- status ---------------------------------------------------------------------------------
typedef enum cb_status {
    CB_OK = 0,
    CB_STATUS_IO,          // file missing or unreadable
    CB_STATUS_PARSE,       // syntax, unknown type or key, bad value
    CB_STATUS_SHAPE,       // shapes that cannot be: mismatch, overflow, kernel larger than input
    CB_STATUS_NOMEM,       // host or device allocation failed
    CB_STATUS_UNSUPPORTED, // the backend does not do this layer or option
    CB_STATUS_ARG,         // a bad argument from the caller
    CB_STATUS_DEVICE,      // no GPU, driver or library error
    CB_STATUS_COUNT
} cb_status;

const char *cb_status_name(cb_status s);

// Why a backend declines a layer or an option (as NNPACK's nnp_status_unsupported_*): a test
// asserts the code, a user reads the message made from it, which ends "[unsupported: NAME]".
typedef enum cb_reason {
    CB_REASON_NONE,             // supported
    CB_REASON_PRECISION,        // the backend does not compute in this --precision
    CB_REASON_LAYOUT,           // the backend does not store this --layout
    CB_REASON_CONV_ALGO,        // --conv-algo on a backend without convbench's own GPU algorithms
    CB_REASON_CONCAT_AXIS,      // a concatenation along another axis than the channels
    CB_REASON_SOFTMAX_POSITION, // a Softmax layer that is not the last
    CB_REASON_ASYM_PADDING,     // trailing pads differ from leading ones, and nothing here pads so
    CB_REASON_LRN_RANGE,        // an LRN size, k or beta outside the library's range
    CB_REASON_BN_EPSILON,       // a batch-norm epsilon under the library's minimum
    CB_REASON_NHWC_ORDER,       // a Reshape or Softmax of a spatial tensor, whose elements NHWC orders differently
    CB_REASON_LIBRARY_REFUSES,  // the library returned an error for this layer's descriptors
    CB_REASON_NO_ALGORITHM,     // no algorithm runs it within the workspace limit
    CB_REASON_ACTIVATION,       // an activation function the backend lacks in this storage
    CB_REASON_NO_GPU_KERNEL,    // a layer kind only the CPU backends run (cb_layer_cpu_only)
    CB_REASON_COUNT
} cb_reason;

const char *cb_reason_name(cb_reason r); // "asymmetric_padding", ...

// Errors carry a one-line message: "FILE: layer 'NAME': problem". reason: set with
// CB_STATUS_UNSUPPORTED when a backend declined (CB_REASON_NONE otherwise).
typedef struct cb_error {
    cb_status status;
    cb_reason reason;
    char msg[512];
} cb_error;

// ---- layers ---------------------------------------------------------------------------------
typedef enum cb_op {
    CB_OP_INPUT,
    CB_OP_CONV,
    CB_OP_POOL,      // max or average
    CB_OP_FC,        // InnerProduct; input flattened
    CB_OP_CONCAT,
    CB_OP_ADD,       // Elementwise sum
    CB_OP_DROPOUT,
    CB_OP_SOFTMAX,
    CB_OP_RESHAPE,
    CB_OP_LRN,
    CB_OP_BATCHNORM,
    CB_OP_ACT,       // an activation function as a layer: Activation ("fn"), ReLU
    CB_OP_MUL,       // Elementwise product of two inputs; one may be (N, C, 1, 1), broadcast over H, W (SE)
    CB_OP_LAYERNORM, // over the channels of each pixel (ConvNeXt), with a weight and bias per channel
    CB_OP_SCALE,     // y = x * weight[c] (ConvNeXt's layer scale)
    CB_OP_COUNT
} cb_op;

const char *cb_op_name(cb_op op); // Paleo's type name ("Convolution", ...)

// Activation functions, fused after a Convolution, InnerProduct or Elementwise ("activation_fn")
// or as an Activation layer ("fn"); names and formulas in src/core/act.h.
typedef enum cb_act {
    CB_ACT_NONE,
    CB_ACT_RELU,
    CB_ACT_SIGMOID,
    CB_ACT_SILU,        // x * sigmoid(x) (swish)
    CB_ACT_HARDSWISH,   // x * relu6(x + 3) / 6
    CB_ACT_HARDSIGMOID, // relu6(x + 3) / 6
    CB_ACT_RELU6,
    CB_ACT_GELU,        // x * Phi(x), the erf form
    CB_ACT_COUNT
} cb_act;

// A tensor shape. rank 4 is (n, c, h, w); rank 2 is (n, c) with h = w = 1. Printed in Paleo's
// NHWC order. Every element count fits in int64 (checked at load).
typedef struct cb_shape {
    int rank;
    int64_t n, c, h, w;
} cb_shape;

static inline int64_t cb_shape_count(cb_shape s) { return s.n * s.c * s.h * s.w; }

typedef enum cb_pad_mode { CB_PAD_VALID, CB_PAD_SAME, CB_PAD_EXPLICIT } cb_pad_mode;

// Window geometry shared by convolution and pooling.
typedef struct cb_window {
    int r, s;                     // kernel height, width
    int stride_h, stride_w;
    cb_pad_mode mode;
    int pad_top, pad_left;        // leading pads (Paleo prints these)
    int pad_bottom, pad_right;    // trailing pads; differ from leading for odd SAME totals
} cb_window;

typedef struct cb_layer {
    char *name;
    cb_op op;
    int nparents;
    int *parents;                 // indices into cb_net.layers, all smaller than this layer's
    int nchildren;                // layers that consume this one's output
    int last_child;               // the last layer (index) that consumes this one's output; -1 when none
    cb_shape in;                  // shape of the first parent's output (flattened for FC)
    cb_shape out;
    cb_act act;                   // fused activation after the op (Convolution, InnerProduct, Elementwise)
    bool bn;                      // fused batch norm before the activation (normalizer_fn)
    int split, splits;            // ModelParallel: which copy of how many (0, 1 otherwise)
    union {
        struct { cb_window win; int cin, k, groups; bool bias; int dil_h, dil_w; } conv; // dilation 0 or 1: none
        struct { cb_window win; bool avg, global; } pool; // global: the window is the input (set by shape inference)
        struct { int k; bool bias; } fc;
        struct { int dim; } concat;           // NHWC dimension as in the file (3 = channels)
        struct { float keep; } dropout;
        struct { int classes; } softmax;
        struct { int size; float alpha, beta, k; } lrn;
        struct { float eps; } bn;
        struct { cb_act fn; } act;            // the Activation layer's function
        struct { float eps; } ln;             // LayerNorm over channels, per pixel
    } p;
    float bn_eps;                 // for the fused batch norm
} cb_layer;

typedef struct cb_net {
    char *name;                   // the description's "name"
    char *path;                   // the file it came from
    int nlayers;
    cb_layer *layers;             // topological order; layers[0] is the input
    struct cb_net_weights *weights; // starting parameters read with the description (ONNX), or NULL
} cb_net;

// Load a Paleo-format description. `spec` is a path or the name of a built-in network
// ("alexnet" finds nets/alexnet.json). On failure returns NULL and fills err.
cb_net *cb_net_load(const char *spec, cb_error *err);
cb_net *cb_net_load_string(const char *json, const char *source_name, cb_error *err);
void cb_net_free(cb_net *net);
// An ONNX model (.onnx) as a Paleo-format description (JSON text; free it). cb_net_load takes
// .onnx files directly, with their initializers as the starting weights. batch > 0 replaces the
// input's batch dimension; a symbolic batch is 1 otherwise.
char *cb_onnx_import(const char *path, int64_t batch, cb_error *err);
// Change the batch size and infer every shape again.
cb_status cb_net_set_batch(cb_net *net, int64_t batch, cb_error *err);
int64_t cb_net_batch(const cb_net *net);
int cb_net_find(const cb_net *net, const char *name); // index or -1
// The directories searched for built-in networks, ':'-separated (CONVBENCH_NETS overrides).
const char *cb_nets_path(void);

// ---- static costs ---------------------------------------------------------------------------
typedef struct cb_cost {
    int64_t params;               // learnable parameters (weights, bias, batch-norm scale and shift)
    int64_t bn_params;            // of which batch-norm scale and shift (Paleo does not count these)
    int64_t weight_bytes;         // as Paleo: params * 4
    int64_t out_elems;            // output elements
    double fwd_flops;             // forward
    double bwd_data_flops;        // gradient w.r.t. the input
    double bwd_filter_flops;      // gradient w.r.t. the parameters
    double fwd_bytes;             // minimum bytes moved forward (inputs, weights, output once)
} cb_cost;

void cb_layer_cost(const cb_net *net, int i, cb_cost *c);

typedef struct cb_net_cost {
    cb_cost total;
    int64_t activation_bytes;     // Paleo's figure: 4 * sum of every layer's output elements
    int64_t train_bytes;          // weights + gradients + momentum + activations + their gradients + saved state
} cb_net_cost;

void cb_net_cost_total(const cb_net *net, cb_net_cost *c);

// ---- execution ------------------------------------------------------------------------------
typedef enum cb_precision { CB_PREC_FP32, CB_PREC_TF32, CB_PREC_BF16, CB_PREC_COUNT } cb_precision;
typedef enum cb_layout { CB_LAYOUT_NCHW, CB_LAYOUT_NHWC, CB_LAYOUT_COUNT } cb_layout;
// The names the flags take and the results print: "fp32", "tf32", "bf16"; "nchw", "nhwc".
const char *cb_precision_name(cb_precision p);
bool cb_precision_parse(const char *s, cb_precision *p);
const char *cb_layout_name(cb_layout l);
bool cb_layout_parse(const char *s, cb_layout *l);
typedef enum cb_phase {
    CB_PHASE_FORWARD,
    CB_PHASE_BWD_DATA,
    CB_PHASE_BWD_FILTER,
    CB_PHASE_COUNT
} cb_phase;

// Which layer outputs a training step drops after their last forward reader and makes again
// before their first backward reader, from what the backward keeps anyway (a fused batch norm's
// input and statistics: be->output_again), one more pass over that input each: AUTO, only while
// the plan's busiest point is above the memory budget (cb_exec_opts.memory_budget), largest first;
// ON, every such output live at the busiest point while that lowers it; ALL, every output that
// can be (wherever the busiest point is: tests and A/B runs); OFF, none.
typedef enum cb_recompute { CB_RECOMPUTE_AUTO, CB_RECOMPUTE_OFF, CB_RECOMPUTE_ON, CB_RECOMPUTE_ALL } cb_recompute;

typedef struct cb_exec_opts {
    const char *backend;          // "cpu", "ref", "cuda", "cudnn", "auto"
    cb_precision precision;
    cb_layout layout;
    bool train;                   // allocate gradients and saved state
    bool no_data_grad;            // skip the gradient w.r.t. the first layer's input (always skipped for data)
    bool no_update;               // no SGD update will run: no momentum buffer (cb_exec_update refuses)
    bool plan_only;               // plan and count the buffers only (activations of precision's storage: bf16 2
                                  // bytes, else 4), allocating and running nothing: for cb_exec_memory and
                                  // cb_exec_peak_bytes, before any backend (no backend copies, no workspace)
    float lr, momentum, weight_decay;
    uint64_t seed;
    size_t workspace_limit;       // bytes, for algorithm choice (GPU)
    double workspace_slack;       // fraction: where algorithms race, the one of least workspace among those at most
                                  // this much slower than the fastest is taken (cb_choice_pick; 0: the fastest)
    double memory_slack;          // fraction: a workspace that fits no gap of the activation arena (a buffer of its own,
                                  // paid whole in the device's peak) gives way to its phase's fastest candidate of
                                  // less workspace while the races' times add up to at most this much of the planned
                                  // step (cb_exec_create; backends with revise: cudnn, auto; 0: the fastest always)
    const char *conv_algo;        // own GPU convolution algorithm to use (NULL or "auto": the fastest)
    int verbose;
    bool step_check;              // training, on a backend that can revise its choices (cudnn, auto): after the
                                  // plan, time each layer in whole steps and replace a choice that runs there far
                                  // slower than its race said (cb_exec_create; running statistics restored)
    cb_recompute recompute;       // training: outputs dropped after the forward and made again in the backward
    size_t memory_budget;         // bytes the plan should fit (CB_RECOMPUTE_AUTO recomputes to fit; 0: the device's
                                  // free memory where the backend tells it, else no limit)
} cb_exec_opts;

void cb_exec_opts_default(cb_exec_opts *o);

// ---- backends: what each declares it can do --------------------------------------------------
typedef struct cb_backend_caps {
    unsigned precisions;          // bit (1u << p) for each cb_precision it computes in
    unsigned layouts;             // bit (1u << l) for each cb_layout it stores activations in
    bool device;                  // buffers live in GPU memory
    bool own_conv_algos;          // runs convbench's own GPU convolution algorithms (--conv-algo)
    bool conv_library;            // its convolutions run on a vendor library (cuDNN): calibrate measures those
    bool calibrates;              // `convbench calibrate --backend` measures it
    bool conv_fuses_relu;         // its convolution kernels apply the ReLU that follows (no separate pass)
    bool fc_on_library;           // its fully connected layers run on a vendor GEMM (cuBLAS)
    bool races_own_conv;          // times its own storage kernels against the library's per conv phase and keeps
                                  // the faster (auto): the model prices both for its runs (cb_model_opts.own_race)
} cb_backend_caps;

// What backend `name` declares, whether or not this build has it; NULL: no such backend.
const cb_backend_caps *cb_backend_caps_of(const char *name);
bool cb_backend_built(const char *name);   // this build has it (CUDA ones need nvcc at build time)
const char *cb_backend_name(int i);        // the i-th backend this build has (0, 1, ...), NULL past the last
// Does backend o->backend run the options o (precision, layout, --conv-algo) and, when net is not
// NULL, every layer of net? CB_REASON_NONE, or the first reason it declines with err's one line
// (status CB_STATUS_UNSUPPORTED, or CB_STATUS_ARG for an unknown backend). Asks only what the
// options and shapes tell; cb_exec_create may still decline a layer its library refuses.
cb_reason cb_backend_supports(const cb_net *net, const cb_exec_opts *o, cb_error *err);

typedef struct cb_exec cb_exec;

// Plans and allocates every buffer (activations, gradients, workspace, parameters initialised
// from opts.seed). Nothing is allocated by the run calls below.
cb_exec *cb_exec_create(cb_net *net, const cb_exec_opts *opts, cb_error *err);
void cb_exec_destroy(cb_exec *e);

// Per-layer times in ms of the last call, indexed [layer][phase]; NULL-able.
// Per-layer times of one pass: ms per phase; epilogue_ms: the parts of ms[CB_PHASE_FORWARD] and
// ms[CB_PHASE_BWD_DATA] spent in the fused batch norm and activation, where the backend runs them
// apart from the op (else 0: they are inside the op's time).
typedef struct cb_layer_times {
    double ms[CB_PHASE_COUNT];
    double epilogue_ms[2];
    double recompute_ms; // of epilogue_ms[1]: making this layer's output again for the backward (cb_recompute)
} cb_layer_times;

// Copy a batch in (host, float32 NCHW, count of net input elements) and labels (int32, n).
cb_status cb_exec_set_input(cb_exec *e, const float *x, const int32_t *labels);
cb_status cb_exec_forward(cb_exec *e, bool train, cb_layer_times *t);
// softmax + mean cross-entropy of the last layer's logits; returns the loss in *loss
cb_status cb_exec_criterion_forward(cb_exec *e, double *loss, double *ms);
cb_status cb_exec_criterion_backward(cb_exec *e, double *ms);
cb_status cb_exec_backward(cb_exec *e, cb_layer_times *t);
// Per-layer times of a device's pass are read from marks between its layers: where the host queues
// a layer's calls more slowly than the device runs them (small layers, the first layers after the
// device waited for the host), a mark's gap holds the host's time. With the hold on, each timed
// pass (t not NULL) keeps the device's queue waiting until the whole pass is queued, so that each
// layer's time is the device's work alone (profile: the layers' own times; fullpass keeps the gaps,
// they belong to the step). Returns -1 where the backend cannot hold (the CPU), else the number of
// holds so far that ended by their timeout (100 ms; a call in the pass waited for the device or the
// launch queue filled): those passes' first layers may still hold host time.
int cb_exec_hold(cb_exec *e, bool on);
cb_status cb_exec_update(cb_exec *e, double *ms);
// The learning rate of the next updates (a schedule changes it between steps).
cb_status cb_exec_set_lr(cb_exec *e, float lr);
// Output probabilities (after softmax) or logits of the last layer, copied to host (n * classes)
cb_status cb_exec_get_output(cb_exec *e, float *out, size_t count);
int64_t cb_exec_output_classes(const cb_exec *e);
// What a backend chose for one layer and phase, as data: tests, tools and the model read the
// fields; cb_choice_format prints it at the edge ("own igemm-tf32 0.051<0.352", "FWD_WINOGRAD
// (C 3->8)", "in conv1"). Nothing decides on the printed text.
typedef enum cb_impl {
    CB_IMPL_NONE,                 // no choice made for this layer and phase
    CB_IMPL_REF,                  // the plain reference loops (CPU)
    CB_IMPL_CPU,                  // the fast CPU path: im2col + OpenBLAS
    CB_IMPL_OWN,                  // convbench's own GPU kernels (algo: index into the own algorithm table, -1: not a convolution)
    CB_IMPL_CUDNN,                // cuDNN (algo: its cudnnConvolution*Algo_t of the phase, -1: not a convolution)
    CB_IMPL_CUBLAS,               // a cuBLAS GEMM (FC layers; 1x1 convolutions under NHWC)
    CB_IMPL_ONEDNN,               // a oneDNN primitive with its reorders from and to NCHW (name: its implementation)
    CB_IMPL_COUNT
} cb_impl;

typedef enum cb_choice_flag {
    CB_CHOICE_FALLBACK = 1 << 0,     // --conv-algo's algorithm does not run this; the generic one does
    CB_CHOICE_RACED = 1 << 1,        // measured against the other implementation: ms won over rival_ms
    CB_CHOICE_FORCED = 1 << 2,       // a test's override ($CONVBENCH_AUTO_POOL / _GEMM, $CONVBENCH_CPU_AUTO) chose it
    CB_CHOICE_FUSED = 1 << 3,        // also computes layer fused_with (conv + ReLU + max pool)
    CB_CHOICE_IN_FUSED = 1 << 4,     // computed by layer fused_with's fused kernel
    CB_CHOICE_ASYM_PAD = 1 << 5,     // own kernels: the library lacks this padding
    CB_CHOICE_NO_LIB_FIT = 1 << 6,   // own kernels: no library algorithm fits the workspace limit
    CB_CHOICE_CHANNEL_PAD = 1 << 7,  // runs on a copy of the input with zero channels added (pad_from -> pad_to)
    CB_CHOICE_SAME_COPY = 1 << 8,    // runs on a copy of the input with the trailing SAME rows and columns
    CB_CHOICE_OWN_NCHW_ONLY = 1 << 9,// raced nothing: the own kernels compute fp32 NCHW only
    CB_CHOICE_PAIRED = 1 << 10,      // timed forward and backward together (pooling: the backward needs the forward's argmax)
    CB_CHOICE_DILATED = 1 << 11,     // raced nothing: the own kernels take no dilation
    CB_CHOICE_GRAPH_API = 1 << 12,   // a cuDNN graph-API engine ($CONVBENCH_DNN_GRAPH); algo: its global index
    CB_CHOICE_BN_PERSISTENT = 1 << 13, // cuDNN's batch norm through its Ex API, persistent mode ($CONVBENCH_DNN_BN=ex)
    CB_CHOICE_RELU_MASK = 1 << 14,   // own max pool: its argmax carries its input's ReLU mask, so that output is not kept
                                     // (be->pool_relu_mask); ms and rival_ms: its time and cuDNN's, measured
    CB_CHOICE_STEP_CHECKED = 1 << 15, // replaced after the plan's step check: ms is its time in the step, rival_ms
                                     // the time there of the choice it replaced (which its race had made faster)
    CB_CHOICE_LESS_WORKSPACE = 1 << 16, // replaced after the plan by a candidate of less workspace (memory_slack):
                                     // rival_ms the race time of the choice it replaced
} cb_choice_flag;

typedef struct cb_choice {
    cb_impl impl;
    int algo;                     // id within impl (see cb_impl), -1 none
    const char *name;             // the algorithm's name, static ("igemm-simt", "FWD_WINOGRAD", "cublasSgemm tf32"); never NULL
    double ms, rival_ms;          // measured at plan time (-1: not measured): the choice's and, raced, the loser's
    size_t workspace;             // bytes
    unsigned flags;               // cb_choice_flag
    int pad_from, pad_to;         // CB_CHOICE_CHANNEL_PAD: the input channels before and after
    int fused_with;               // CB_CHOICE_FUSED / IN_FUSED: the other layer
    double check_err;             // CB_CHOICE_GRAPH_API: ||its result - a legacy FMA algorithm's|| / ||legacy's|| on
                                  // random operands at plan time (src/cudnn/graph.c); -1 not checked
} cb_choice;

// The one printer of a choice (net names the layer of fused_with).
void cb_choice_format(const cb_choice *c, const cb_net *net, char *buf, size_t n);
// The candidate a race takes among n (ms[j] < 0: it did not run): the least workspace among those
// whose time is within slack (a fraction) of the fastest, the faster of equal workspaces; -1 when
// none ran. A workspace can set a step's peak memory (AlexNet b128 tf32 NHWC on the H200: 207 MiB of
// its 1,164), and times closer than a race's noise do not tell the faster apart.
int cb_choice_pick(const double *ms, const size_t *ws, int n, double slack);
#define CB_WORKSPACE_SLACK_DEFAULT 0.03
#define CB_MEMORY_SLACK_DEFAULT 0.01
const cb_choice *cb_exec_choice(const cb_exec *e, int layer, cb_phase ph);
const char *cb_exec_algo(const cb_exec *e, int layer, cb_phase ph); // cb_choice_format of it, "" when none
// What the backend noted at plan of the slow paths it took where a faster one exists elsewhere
// (cuDNN's batch norm or pooling backward on NHWC storage under --backend cudnn): note k of
// cb_exec_note_count, NULL beyond. Results print them: no slow path is taken silently. At most
// CB_EXEC_MAX_NOTES, each shorter than CB_EXEC_NOTE_LEN bytes.
enum { CB_EXEC_MAX_NOTES = 8, CB_EXEC_NOTE_LEN = 400 };
int cb_exec_note_count(const cb_exec *e);
const char *cb_exec_note_at(const cb_exec *e, int k);
size_t cb_exec_workspace(const cb_exec *e, int layer, cb_phase ph);
size_t cb_exec_peak_bytes(const cb_exec *e);
// Where the planned bytes go: parameters (values, gradients, momentum, running statistics), layer
// outputs, what layers keep for their backward (a batch norm's input, an activation's input, pool
// argmax, dropout masks, LRN scales, per-channel statistics), the activations' gradients, the
// accumulation scratch, the shared workspace, the criterion's buffers, and the backend's own
// copies (padded or permuted inputs, converted weights; the rest of cb_exec_peak_bytes). The
// activation-sized buffers share one arena by liveness (src/core/exec.c): cb_exec_memory counts
// each kind's buffers whole, cb_exec_memory_reused the bytes they share (all kinds' sum less it is
// cb_exec_peak_bytes).
typedef enum cb_mem_kind {
    CB_MEM_PARAMS, CB_MEM_OUTPUTS, CB_MEM_SAVED, CB_MEM_GRADS, CB_MEM_ACC, CB_MEM_WORKSPACE, CB_MEM_CRITERION, CB_MEM_BACKEND,
    CB_MEM_COUNT
} cb_mem_kind;
const char *cb_mem_kind_name(cb_mem_kind k);
size_t cb_exec_memory(const cb_exec *e, cb_mem_kind k);
size_t cb_exec_memory_reused(const cb_exec *e);
// The same kinds as they stand at the arena's busiest point of the step: the arena's buffers live
// there, and the rest (parameters, backend copies outside the arena) whole; the layer whose pass
// that point is (*backward: its backward), -1 before the first.
size_t cb_exec_memory_at_peak(const cb_exec *e, cb_mem_kind k);
int cb_exec_memory_peak_layer(const cb_exec *e, bool *backward);
size_t cb_exec_arena_bytes(const cb_exec *e); // 0 without the arena
size_t cb_exec_arena_grown(const cb_exec *e); // of those, the bytes the workspaces past its first end added (GPU backends)
bool cb_exec_memory_shared(const cb_exec *e); // the arena is in use (not $CONVBENCH_MEMORY=separate)
const cb_net *cb_exec_net(const cb_exec *e);
const char *cb_exec_backend_name(const cb_exec *e);
// Backward without the criterion starts from dL/dy = v for the last layer (convnet-benchmarks' "no softmax").
cb_status cb_exec_set_output_grad(cb_exec *e, float v);
// A timer on the backend's clock (CUDA events on a GPU): ms between start and stop, work completed.
void cb_exec_timer_start(cb_exec *e);
double cb_exec_timer_stop(cb_exec *e);
bool cb_exec_on_device(const cb_exec *e);
// A whole training step recorded once as a device graph and replayed (CUDA graphs): the set
// output gradient (no_criterion) or the criterion, the backward pass, and the update if asked, as
// the calls above would run them. Capture after warm-up steps (every lazy setup done); false from
// cb_exec_can_graph where the backend has no graphs or the step cannot be one (data-parallel
// training). Capture returns CB_STATUS_DEVICE with the device's reason in err when it is refused.
// The graph keeps the learning rate it was recorded with: cb_exec_set_lr with another one drops
// it, and a replay without a graph is CB_STATUS_ARG. A replay queues the step and returns; time it
// with cb_exec_timer_start/stop around it.
bool cb_exec_can_graph(const cb_exec *e);
cb_status cb_exec_graph_capture(cb_exec *e, bool criterion, bool update, cb_error *err);
cb_status cb_exec_graph_replay(cb_exec *e);

// Parameters: each learnable tensor of layer i (weights, bias, bn scale, bn shift, running mean, var).
typedef struct cb_param {
    const char *what;             // "weight", "bias", "bn_scale", "bn_shift", "bn_mean", "bn_var"
    float *data;                  // backend memory
    float *grad;                  // NULL for running statistics
    int64_t count;
} cb_param;
int cb_exec_params(cb_exec *e, int layer, cb_param *out, int max);
cb_status cb_exec_param_get(cb_exec *e, const cb_param *p, float *host);
cb_status cb_exec_param_set(cb_exec *e, const cb_param *p, const float *host);

// Weights files (docs/weights-format.md): every tensor of cb_exec_params, layer by layer, with a
// CRC32. Save writes PATH.tmp.PID and renames it (cb_write_whole): whole or not at all. Load checks magic, version,
// length, checksum, then every layer name, kind and size against the network before setting any.
cb_status cb_exec_save_weights(cb_exec *e, const char *path, cb_error *err);
cb_status cb_exec_load_weights(cb_exec *e, const char *path, cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
