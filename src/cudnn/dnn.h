// The cudnn backend's state and table entries, for the scheduler above it (src/sched/auto.c).
// Private to src/cudnn and src/sched.
#ifndef CB_CUDNN_DNN_H
#define CB_CUDNN_DNN_H

#include "storage/storage.h"

#include <cudnn.h>

// What a scheduler decides inside the cudnn backend's plan, where there is a choice to make;
// NULL for the plain "cudnn" backend (cuDNN's pick, own kernels only where cuDNN cannot run).
typedef struct dnn_policy {
    // phase p of conv layer i (fp32 NCHW or any storage, channels not padded) after cuDNN's pick:
    // b->choice[p] with dnn_ms, workspace dnn_ws; may take an own kernel (own[p]) or a cuBLAS 1x1
    // GEMM (blas[p]) and set the choice
    void (*conv_phase)(cb_exec *e, int i, cb_phase p, double dnn_ms, size_t dnn_ws);
    // phase p of FC layer i on fp32 NCHW after cuBLAS's choice: may take an own kernel
    void (*fc_phase)(cb_exec *e, int i, cb_phase p);
    // pool layer i that cuDNN can express: own (own[0] = own[1]) or cuDNN, and the choice of both
    // phases in *c (bwd: the pass trains)
    void (*pool)(cb_exec *e, int i, bool bwd, cb_choice *c);
    // may max pool i (cb_pool_relu_input) run on the own kernels, whatever the race, to take over
    // its input's ReLU (be->pool_relu_mask)? Asked before the plan; pool then keeps the own kernels
    bool (*pool_relu_mask)(const cb_exec *e, int i);
    // may batch norm i, with a fused activation whose gradient reads its input (SiLU, hardswish,
    // GELU), run on the own kernels whatever the race, so that the activation's input is recomputed
    // in the backward and not kept (be->act_input_kept), or its output made again there
    // (be->output_again, lb[i].y_again)? Asked before the plan; bn then keeps the own kernels
    bool (*bn_act_recompute)(const cb_exec *e, int i);
    // the batch norm of layer i (fused or a layer) that both cuDNN and the own storage kernels take:
    // own_bn, and in *c the choice a standalone BatchNorm layer shows
    void (*bn)(cb_exec *e, int i, cb_choice *c);
} dnn_policy;

typedef struct dnn_state {
    cudnnHandle_t h;
    const dnn_policy *policy;    // NULL: the plain cudnn backend
    void *policy_state;          // the scheduler's own
    float *bn_part;              // (bn_part_floats) the own batch-norm kernels' partial sums (norm_fmt.cu)
    size_t bn_part_floats;
    cudnnMathType_t math;
    cudnnTensorFormat_t tfmt;    // CUDNN_TENSOR_NCHW or _NHWC (filters KCRS or KRSC)
    cudnnDataType_t dtype;       // CUDNN_DATA_FLOAT or _BFLOAT16
    bool bn_add_separate;        // $CONVBENCH_BN_ADD=separate: no CB_FUSION_BN_ADD (the sum its own pass)
    bool bn_ex;                  // cuDNN's training batch norm on NHWC storage through the Ex API in its persistent
                                 // mode (PyTorch's channels-last path) where it runs: $CONVBENCH_DNN_BN=ex, or unset
                                 // on the cudnn backend (cb_dnn_init)
    void *bn_ws;                 // (bn_ws_bytes) its workspace, one for every layer (they run one after another)
    size_t bn_ws_bytes;
    bool bn_act_separate;        // $CONVBENCH_BN_ACT=separate: the own batch-norm kernels leave the activation
                                 // to a pass of its own (the fused passes' A/B; default fused)
    int pick;                    // $CONVBENCH_DNN_PICK=K (tests: every algorithm cuDNN offers, not only the fastest):
                                 // each convolution phase takes the K-th algorithm of cudnnFind's list that runs, and
                                 // the graph race its K-th plan that ran, the last where fewer; -1 (unset): the fastest
} dnn_state;

typedef struct dnn_gplan dnn_gplan; // a phase's plan on cuDNN's graph API (src/cudnn/graph.c)

typedef struct dnn_layer {
    bool own[CB_PHASE_COUNT];    // this phase runs convbench's own kernel
    bool blas[CB_PHASE_COUNT];   // this phase of a 1x1 convolution runs as a cuBLAS GEMM (cb_blas_conv_is_gemm)
    bool own_bn;                 // the batch norm (fused or a layer) runs on the own storage kernels (norm_fmt.cu)
    bool bn_add;                 // a CB_FUSION_BN_ADD head: its own batch-norm pass also adds the next layer's (a sum's)
                                 // other input and applies the sum's activation, writing the sum's output
    bool in_bn_add;              // a sum computed by the batch-norm pass of the layer before it (bn_add)
    bool relu_in_bn;             // (in_bn_add) in training, the sum's ReLU gradient is applied by the head's batch-norm
                                 // backward as it reads dy (cb_fmt_bn_backward_relu_mask), not by a pass of its own
    bool bn_ex;                  // cuDNN's batch norm of this layer runs the Ex API, persistent mode (dnn_state.bn_ex)
    bool dw[CB_PHASE_COUNT];     // this phase of a depthwise convolution runs the own depthwise kernel on the storage
                                 // (src/cuda/conv_depthwise.cu; fp32 NCHW reaches it through own[] instead)
    bool dw_pair[CB_PHASE_COUNT]; // and there the two-channel stride-1 NHWC kernel (the calls' `pairs`), the faster in
                                  // cb_dnn_time_dw's race
    bool wg[CB_PHASE_COUNT];     // this phase runs the own Hopper wgmma implicit GEMM on bf16 NHWC storage as it is
                                 // (cb_cuda_wg_store_*; fp32 NCHW reaches it through own[] and its conversions)
    cb_choice wg_rival[CB_PHASE_COUNT]; // (wg) cuDNN's choice it beat, its workspace in .workspace: the step check's
                                 // way back (cb_dnn_revise)
    double wg_lost_ms[CB_PHASE_COUNT]; // (auto) the own wgmma kernel's race time where it raced and lost (0: it did
                                 // not): a candidate of little workspace for the trim and the step check (cb_dnn_revise)
    cudnnTensorDescriptor_t xd, yd, bd, bnd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd[CB_PHASE_COUNT];
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    dnn_gplan *g[CB_PHASE_COUNT]; // this phase runs a graph-API plan that beat the legacy algorithm (NULL: legacy)
    // the candidates the plan timed, for the step check (cb_dnn_revise): cudnnFind's legacy
    // algorithms that ran within the limits, fastest first, and the graph race's best plan where
    // the legacy pick beat it (galt; while a switch to it holds, g, and galt NULL)
    struct dnn_alt { int algo; cudnnMathType_t math; size_t ws; double ms; } alt[CB_PHASE_COUNT][8];
    int nalt[CB_PHASE_COUNT];
    dnn_gplan *galt[CB_PHASE_COUNT];
    double galt_ms[CB_PHASE_COUNT];
    struct dnn_prev { bool held; int algo; cudnnMathType_t math; bool graph; bool wg; bool to_wg; cb_choice choice; } prev[CB_PHASE_COUNT];
                                 // (wg: the switch left the own wgmma kernel; to_wg: it went to it from cuDNN's choice)
    cudnnPoolingDescriptor_t pd;
    cudnnLRNDescriptor_t lrn;
    cudnnActivationDescriptor_t act;
    cb_shape xs;                 // a conv's input as cuDNN sees it: L->in, or its padded copy's shape
    void *xpad, *xpad_bwd, *dxpad; // (xs): the padded copy of a conv's input made by the forward, made again by the
                                 // backward filter, and its gradient (NULL: none); the engine's arena (cb_lbuf xcopy)
} dnn_layer;

// a dilation of 0 or 1: none; the own convolution kernels take no dilation (a dilated convolution
// runs on cuDNN alone)
static inline int cb_dnn_dil(int d) { return d > 1 ? d : 1; }
static inline bool cb_dnn_conv_own_ok(const cb_layer *L) { return cb_dnn_dil(L->p.conv.dil_h) == 1 && cb_dnn_dil(L->p.conv.dil_w) == 1; }

static inline dnn_state *cb_dnn_state(const cb_exec *e) { return ((cb_cuda_state *)e->state)->lib; }
static inline dnn_layer *cb_dnn_layer(const cb_exec *e, int i) { return e->lb[i].priv; }

// the backend with a policy (NULL: plain cudnn); the table entries both share
cb_status cb_dnn_init(cb_exec *e, cb_error *err, const dnn_policy *policy);
void cb_dnn_destroy(cb_exec *e);
cb_reason cb_dnn_supports(const cb_net *net, int i, const cb_exec_opts *o, char *why, size_t n);
cb_status cb_dnn_plan(cb_exec *e, int i, cb_error *err);
void cb_dnn_forward(cb_exec *e, int i, bool train);
void cb_dnn_forward_epilogue(cb_exec *e, int i, bool train);
void cb_dnn_backward_epilogue(cb_exec *e, int i);
void cb_dnn_backward_data(cb_exec *e, int i, int slot, float *dx);
bool cb_dnn_backward_data_add(cb_exec *e, int i, int slot, float *dx); // dx += it: cuDNN's dgrad with beta 1
void cb_dnn_backward_filter(cb_exec *e, int i);

// One run of pool layer i's forward (ph 0) or backward (ph 1), on cuDNN or the own kernels; the
// layer's output gradient may not be allocated yet (plan): then y stands in. dx: where the input
// gradient goes (NULL: the input's own gradient buffer).
cudnnStatus_t cb_dnn_run_pool(cb_exec *e, int i, bool own, int ph, float *dx);
// Depthwise convolutions on the storages (any but fp32 NCHW, where the own-algorithm table has
// them): can the own kernel run conv layer i, one run of its phase ph (ws: its workspace,
// cb_cuda_dw_workspace; dx: the input gradient), and its ms over 3 runs after one (-1: failed).
bool cb_dnn_dw_ok(const cb_exec *e, int i);
// phase p of such a layer on the own depthwise kernel: its workspace and its choice, flags `why`
void cb_dnn_take_dw(cb_exec *e, int i, int p, unsigned why);
void cb_dnn_run_dw(cb_exec *e, int i, cb_phase ph, void *ws, void *dx);
double cb_dnn_time_dw(cb_exec *e, int i, cb_phase ph);
// The own wgmma implicit GEMM on bf16 NHWC storage (src/cuda/conv_igemm_wgmma.cu): can it run phase
// ph of conv layer i here (bf16 NHWC, the GPU and the shape), take it (its workspace and choice,
// cuDNN's kept as the rival), one run (ws: its workspace; dx: the input gradient), and its ms
// over 3 runs after one (-1: failed).
bool cb_dnn_wg_ok(const cb_exec *e, int i, cb_phase ph);
int cb_dnn_wg_mode(const cb_exec *e);
void cb_dnn_take_wg(cb_exec *e, int i, cb_phase ph);
void cb_dnn_run_wg(cb_exec *e, int i, cb_phase ph, void *ws, void *dx);
double cb_dnn_time_wg(cb_exec *e, int i, cb_phase ph);
// ms of the batch norm of layer i, forward (training) plus backward when train, 3 runs after one,
// on the own kernels or cuDNN's, on the layer's own buffers; running statistics untouched; -1: failed
double cb_dnn_time_bn(cb_exec *e, int i, bool own, bool train);

// the engine's be->input_copy (src/cudnn/plan.c): a conv's padded input, an FC layer's permuted one
bool cb_dnn_conv_xin(const cb_exec *e, const cb_layer *L, cb_shape *xin);
size_t cb_dnn_input_copy(const cb_exec *e, int i);
// the engine's be->pool_relu_mask (src/cudnn/plan.c)
bool cb_dnn_pool_relu_mask(const cb_exec *e, int i);
// the engine's be->act_input_kept (src/cudnn/backend.c)
bool cb_dnn_act_input_kept(const cb_exec *e, int i);
// the engine's be->output_again and be->recompute_output (src/cudnn/backend.c)
bool cb_dnn_output_again(const cb_exec *e, int i);
void cb_dnn_recompute_output(cb_exec *e, int i);
// the engine's be->revise (src/cudnn/plan.c): a conv phase on cuDNN to its next candidate, or back
bool cb_dnn_revise(cb_exec *e, int i, cb_phase p, size_t max_ws, bool undo);

#define DNN_BACKEND(NAME, INIT, DESTROY, SUPPORTS)                                                                              \
    {.name = NAME, .device = true, .init = INIT, .destroy = DESTROY, .alloc = cb_cuda_alloc,                  \
     .alloc_growable = cb_cuda_alloc_growable, .grow = cb_cuda_grow,                                                  \
     .alloc_why = cb_cuda_alloc_why, .device_ok = cb_cuda_device_ok, .pool_argmax_item = cb_cuda_pool_argmax_item,   \
     .pool_relu_mask = cb_dnn_pool_relu_mask,                                                                         \
     .concat_relu_mask = cb_cuda_concat_relu_mask, .act_input_kept = cb_dnn_act_input_kept,                           \
     .output_again = cb_dnn_output_again, .recompute_output = cb_dnn_recompute_output, .mem_free = cb_cuda_mem_free,  \
     .release = cb_cuda_release, .upload = cb_cuda_upload, .download = cb_cuda_download,                             \
     .timer_start = cb_cuda_timer_start, .timer_stop = cb_cuda_timer_stop, .mark_reset = cb_cuda_mark_reset,          \
     .mark = cb_cuda_mark, .mark_ms = cb_cuda_mark_ms, .hold = cb_cuda_hold, .supports = SUPPORTS, .input_copy = cb_dnn_input_copy, .weight_copy = cb_store_weight_copy, .plan = cb_dnn_plan, \
     .forward = cb_dnn_forward, .forward_epilogue = cb_dnn_forward_epilogue, .backward_epilogue = cb_dnn_backward_epilogue, \
     .backward_data = cb_dnn_backward_data, .backward_data_add = cb_dnn_backward_data_add,                            \
     .backward_filter = cb_dnn_backward_filter, .add = cb_store_act_add, .fill = cb_cuda_fill_, .sgd = cb_cuda_sgd_,  \
     .xent_forward = cb_store_crit_xent_forward, .xent_backward = cb_store_crit_xent_backward,                        \
     .softmax = cb_store_crit_softmax, .act_upload = cb_store_act_upload, .act_download = cb_store_act_download,      \
     .act_fill = cb_store_act_fill, .step_begin = cb_cuda_step_begin, .graph_begin = cb_cuda_graph_begin,                \
     .graph_end = cb_cuda_graph_end, .graph_launch = cb_cuda_graph_launch, .revise = cb_dnn_revise}

#endif
