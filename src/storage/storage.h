// Activation storage other than fp32 NCHW for the library backends (cudnn, auto): NHWC and/or
// bf16 tensors (--layout nhwc, --precision bf16), their weight copies, conversions at the host and
// criterion boundary, and the few layers computed on them directly (bias with the ReLU, concat,
// sum, dropout, relu gradient). Private to the GPU backends; kernels in src/storage/format.h.
//
// Weights stay fp32 KCRS masters for SGD, as PyTorch's autocast: each conv and FC layer keeps a
// copy in the storage format (KRSC filters under NHWC; an FC layer after a spatial input gets its
// columns in (h, w, c) order) refreshed when e->param_version changes, and its weight gradient
// comes back to fp32 KCRS. The input and the criterion convert at the boundary.
#ifndef CB_STORAGE_STORAGE_H
#define CB_STORAGE_STORAGE_H

#include "cuda/backend.h"
#include "storage/format.h"

typedef struct cb_store_layer {
    void *w;                     // (nw) conv / FC weights in storage format (fmt != 0), from b->w
    uint64_t wver;               // the e->param_version that w was converted at
    bool step;                   // w is the arena's (b->wcopy, training): made in each forward, see cb_store_weights
    uint64_t wpass[2];           // step: the e->pass that b->wcopy [0] and b->wcopy_bwd [1] were made in,
    bool wfwd[2];                // and whether that pass was a forward one
    int64_t wk, wc, wr, ws;      // the weights' (K, C, R, S) dims: conv filter, or FC (K, C, H, W) of its input
    int64_t wcp;                 // C of the storage copy: wc, or a conv's channels padded (cb_store_conv_cpad)
    void *xperm, *xperm_bwd, *dxperm; // (N, C, H, W) in the storage's type: an FC layer's spatial NHWC input permuted
                                 // by the forward, again by the backward filter, and its gradient (the engine's arena)
} cb_store_layer;

typedef struct cb_store {
    int fmt;                     // 0 (fp32 NCHW) or CB_FMT_NHWC | CB_FMT_BF16
    // only with fmt != 0:
    float *stage;                // (stage_elems) fp32 NCHW, host transfers of act_upload and act_download
    int64_t stage_elems;         // >= any layer's per example; up to 4M floats, or the input's and the last layer's count
    float *crit;                 // (N, K) fp32 NCHW: the criterion's probabilities and gradient
    void *wgrad;                 // (largest nw) a weight gradient in storage format, before fp32 KCRS
    cb_store_layer *layer;       // (nlayers)
    bool cpad;                   // NHWC: pad a convolution's unaligned input channels (cb_store_conv_cpad)
    enum { WCOPY_DEFAULT, WCOPY_KEEP, WCOPY_ARENA } weight_copy; // CONVBENCH_WEIGHT_COPY: unset, keep, or plan / step / remake
} cb_store;

static inline cb_store *cb_store_of(const cb_exec *e) { return ((cb_cuda_state *)e->state)->store; }
static inline cb_store_layer *cb_store_layer_of(const cb_exec *e, int i) { return &cb_store_of(e)->layer[i]; }
static inline bool cb_store_native(const cb_exec *e) { return cb_store_of(e)->fmt == 0; } // fp32 NCHW
static inline bool cb_store_bf16(const cb_exec *e) { return cb_store_of(e)->fmt & CB_FMT_BF16; }
static inline bool cb_store_nhwc(const cb_exec *e) { return cb_store_of(e)->fmt & CB_FMT_NHWC; }

int cb_store_fmt_of(const cb_exec_opts *o);   // the storage options o give
const char *cb_store_fmt_label(int fmt);      // "bf16 NHWC", ...
// device memory of the storage's own, counted with the engine's; NULL when out of memory (or 0 bytes)
void *cb_store_alloc(cb_exec *e, size_t bytes);

// The state (and, fmt != 0, the buffers sized from the network's shapes; cpad: see cb_store_conv_cpad) / its release.
cb_status cb_store_init(cb_exec *e, bool cpad, cb_error *err);
void cb_store_destroy(cb_exec *e);

// Under NHWC with cpad (the cudnn backend's choice: bf16, or any precision without cuDNN's graph race), a convolution
// whose input channels are not a multiple of 16 bytes' worth runs on a copy of its input with zero
// channels added: the padded channel count (else L->p.conv.cin).
int64_t cb_store_conv_cpad(const cb_exec *e, const cb_layer *L);

// The backends' be->weight_copy: bytes of conv / FC layer i's storage-format weight copy that the
// engine places in the arena, 0 where it is the backend's own. A training plan with an update
// places it: the update changes the weights every step, so the copy is made in every forward
// anyway, and in the arena it holds no bytes between steps; the engine keeps it to the backward or
// makes it again there (CONVBENCH_WEIGHT_COPY=plan, the default; step keeps each, remake makes each
// again; these place the copies in a plan without an update too). Inference and a plan without an
// update (its weights never change: one conversion serves every step), and CONVBENCH_WEIGHT_COPY=keep,
// keep it from one pass to the next outside the arena, refreshed only when the weights change.
size_t cb_store_weight_copy(const cb_exec *e, int i);
// conv / FC layer i (fmt != 0): its storage-format weight copy
cb_status cb_store_plan_weights(cb_exec *e, int i, cb_error *err);
// the weights of conv or FC layer i as the libraries read them (b->w itself in fp32 NCHW)
const void *cb_store_weights(cb_exec *e, int i);
// where the weight gradient is computed, and its conversion to the fp32 KCRS master gradient
void *cb_store_wgrad(cb_exec *e, int i);
void cb_store_finish_wgrad(cb_exec *e, int i);

// y of conv / FC layer i += b (K), with the layer's activation when no batch norm comes between
// (then marked fused_act; one whose gradient reads its input saves it in act_in); db = sum of dy
// over all but the channels
void cb_store_bias_act(cb_exec *e, int i, const float *bias, void *y);
void cb_store_bias_grad(cb_exec *e, int i, const void *dy, float *db);

// concat, dropout, reshape of layer i (fmt != 0) and the sum (any fmt: with its ReLU in one pass),
// and the gradients of concat, sum, dropout, activation, softmax (passed through) and reshape
void cb_store_forward_op(cb_exec *e, int i, bool train);
void cb_store_backward_data(cb_exec *e, int i, int slot, void *dx);

// the backend table's boundary entries: host fp32 NCHW and the criterion's fp32 (N, K)
void cb_store_act_upload(cb_exec *e, int layer, void *dst, const float *host);
void cb_store_act_download(cb_exec *e, int layer, float *host, const void *src);
void cb_store_act_fill(cb_exec *e, void *dst, float v, size_t n);
void cb_store_act_add(cb_exec *e, float *dst, const float *src, size_t n);
void cb_store_crit_softmax(cb_exec *e, const float *x, float *prob, int n, int k);
double cb_store_crit_xent_forward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k);
void cb_store_crit_xent_backward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k, float *dlogits);

#endif
