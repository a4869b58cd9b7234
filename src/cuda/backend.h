// The "cuda" backend's pieces that the "cudnn" and "auto" backends reuse: device memory, event
// timers, the criterion, and every layer computed with convbench's own kernels.
#ifndef CB_CUDA_BACKEND_H
#define CB_CUDA_BACKEND_H

#include "core/backend.h"
#include "core/ops.h"
#include "cuda/conv_algo.h"
#include "gpu/gpu.h"

#include <cuda_runtime.h>

// Backend-wide state; the cudnn backend keeps its handles in `lib`.
#define CB_CUDA_TIMER_DEPTH 8
// the growable arena's mapping (src/cuda/vmm.c): reserved addresses from base, the first `mapped`
// bytes backed by nh physical pieces (handles h, sizes hbytes) of granularity gran
enum { CB_CUDA_VMM_PIECES = 16 };
typedef struct cb_cuda_vmm {
    unsigned long long base; // a CUdeviceptr; 0: none
    size_t reserved, mapped, gran;
    int dev, nh;
    unsigned long long h[CB_CUDA_VMM_PIECES];
    size_t hbytes[CB_CUDA_VMM_PIECES];
} cb_cuda_vmm;

typedef struct cb_cuda_state {
    cudaEvent_t t0[CB_CUDA_TIMER_DEPTH], t1; // start events as a stack: timers nest (a step around its layers)
    int depth;
    cudaEvent_t *marks; // (cap_marks) per-layer timing without synchronisation (cb_cuda_mark)
    int nmarks, cap_marks;
    cb_gpu_hold hold; // profile's (cb_cuda_hold)
    double *loss; // (1) device
    unsigned long long *step; // (1) device: training forwards so far (dropout's masks move on with it)
    uint64_t dropout_seed;    // from --seed: layer i's dropout seed is this and i (cb_cuda_dropout_seed)
    bool dropout;             // the net has a dropout layer: a training forward advances *step
    bool capturing;           // a step graph is being recorded: nothing may wait for the device
    cudaGraphExec_t graph;    // the recorded step, or NULL
    const cb_cuda_conv_algo *(*conv)[CB_PHASE_COUNT]; // (nlayers) own algorithm per conv layer and phase
    bool *fused_act;                                   // (nlayers) the forward kernel applied the activation (ReLU, or any with the bias)
    bool fuse_epilogue; // $CONVBENCH_FUSE_EPILOGUE (default on): cb_cuda_act_bias_grad runs, and max pools take over ReLUs (be->pool_relu_mask)
    bool concat_relu;   // and concatenations their inputs' (be->concat_relu_mask; cb_env_concat_relu)
    bool *bias_done; // (nlayers) the backward epilogue computed the bias gradient with the activation's (cb_cuda_act_bias_grad)
    int *fuse_pool; // (nlayers) inference: conv i also computes the max pool j after it: [i] = j, [j] = i; 0 none
    struct cb_store *store;  // the library backends' activation storage (src/storage), NULL for cuda
    struct cb_blas *blas;    // their cuBLAS GEMMs (src/blas)
    void *lib;               // their cuDNN state (src/cudnn)
    float *bias_part;        // training: cb_fmt_bias_grad's partial sums, for the largest bias (NULL: none)
    int alloc_err;           // the cudaError_t of the last cudaMalloc that failed (cb_cuda_alloc_why)
    cb_cuda_vmm vmm;         // the arena, where it can grow (cb_cuda_alloc_growable)
} cb_cuda_state;

cb_status cb_cuda_init_state(cb_exec *e, cb_error *err);
void cb_cuda_destroy_state(cb_exec *e);
uint64_t cb_cuda_dropout_seed(cb_exec *e, int layer);
void cb_cuda_step_begin(cb_exec *e);
bool cb_cuda_graph_begin(cb_exec *e, char *why, size_t n);
bool cb_cuda_graph_end(cb_exec *e, char *why, size_t n);
void cb_cuda_graph_launch(cb_exec *e);
void *cb_cuda_alloc(cb_exec *e, size_t bytes);
// be->alloc_growable, be->grow (src/cuda/vmm.c); cb_cuda_vmm_release: true where p was that allocation
// (then freed)
void *cb_cuda_alloc_growable(cb_exec *e, size_t bytes, size_t reserve);
bool cb_cuda_grow(cb_exec *e, void *p, size_t bytes);
bool cb_cuda_vmm_release(cb_exec *e, void *p);
bool cb_cuda_alloc_why(cb_exec *e, char *why, size_t n);
// be->mem_free: the device's free bytes now (0: unknown)
size_t cb_cuda_mem_free(cb_exec *e);
int cb_cuda_pool_argmax_item(const cb_layer *L); // 1 where the window has at most 255 taps, else 4
bool cb_cuda_device_ok(cb_exec *e, char *why, size_t n);
// the device failed for good (an error every synchronisation returns: a kernel's illegal access
// or launch failure); rc: the first synchronisation's error
bool cb_cuda_device_lost(cudaError_t *rc);
// the failure of a device allocation for `what` of layer `layer` (NULL: none), with its reason
// (cb_cuda_alloc_why): CB_STATUS_NOMEM, or CB_STATUS_DEVICE where the GPU failed before it
cb_status cb_cuda_nomem(cb_exec *e, cb_error *err, const char *layer, const char *what);
void cb_cuda_release(cb_exec *e, void *p);
void cb_cuda_upload(cb_exec *e, void *dst, const void *src, size_t bytes);
void cb_cuda_download(cb_exec *e, void *dst, const void *src, size_t bytes);
void cb_cuda_timer_start(cb_exec *e);
double cb_cuda_timer_stop(cb_exec *e);
void cb_cuda_mark_reset(cb_exec *e);
int cb_cuda_mark(cb_exec *e);
double cb_cuda_mark_ms(cb_exec *e, int a, int b);
int cb_cuda_hold(cb_exec *e, bool on);
void cb_cuda_add_(cb_exec *e, float *dst, const float *src, size_t n);
// A conv or FC layer with a bias and an activation and no batch norm between: the backward
// epilogue takes the activation's gradient (dy in place) and the bias gradient in one pass over dy
// (cb_fmt_act_bias_grad) on the storage given, and true; the bias gradient after the filter
// gradient then skips that layer once (cb_cuda_bias_taken: true, and the mark cleared).
bool cb_cuda_act_bias_grad(cb_exec *e, int i, bool nhwc, bool bf16);
bool cb_cuda_bias_taken(cb_exec *e, int i);
// be->pool_relu_mask of the cuda backend, whose pools run on the own kernels: max pool layer i in
// training, whose input is the output of a layer with a ReLU that nothing else reads
// (cb_pool_relu_input), keeps no argmax where a window's maximum is <= 0 (cb_pool_params.relu_mask),
// so its backward leaves the ReLU's gradient applied (y > 0 wherever a gradient lands) and that
// layer's backward epilogue skips the ReLU's pass (its relu_by_pool); unless
// $CONVBENCH_FUSE_EPILOGUE=off
bool cb_cuda_pool_relu_mask(const cb_exec *e, int i);
// be->concat_relu_mask of the cuda backend and the library backends (their concatenations run on
// the own kernels everywhere): concatenation i's backward passes each input that
// cb_concat_relu_input names the slice of its gradient where its own output is above 0
// (cb_fmt_concat_slice_masked), that input's relu_by_concat; unless $CONVBENCH_FUSE_EPILOGUE or
// $CONVBENCH_CONCAT_RELU is off
bool cb_cuda_concat_relu_mask(const cb_exec *e, int i);
void cb_cuda_fill_(cb_exec *e, float *dst, float v, size_t n);
void cb_cuda_sgd_(cb_exec *e, size_t n, float lr, float momentum, float wd, float *w, const float *g, float *v);
double cb_cuda_xent_forward_(cb_exec *e, const float *prob, const int32_t *labels, int n, int k);
void cb_cuda_xent_backward_(cb_exec *e, const float *prob, const int32_t *labels, int n, int k, float *dlogits);
void cb_cuda_softmax_(cb_exec *e, const float *x, float *prob, int n, int k);

// one layer with convbench's own kernels (the "cuda" backend's table entries)
void cb_cuda_forward(cb_exec *e, int i, bool train);
void cb_cuda_forward_op(cb_exec *e, int i, bool train);       // the op alone, no epilogue
void cb_cuda_epilogue_forward(cb_exec *e, int i, bool train); // fused bn and relu
void cb_cuda_backward_epilogue(cb_exec *e, int i);
void cb_cuda_backward_data(cb_exec *e, int i, int slot, float *dx);
void cb_cuda_backward_filter(cb_exec *e, int i);

// Chooses convbench's own algorithm for phase ph of conv layer i: the one --conv-algo names when
// it runs this shape (else the generic igemm-simt, noted in the layer's algorithm name), or with
// measure, the fastest supported one the precision allows, timed on the layer's own buffers (a
// temporary workspace). Returns its time in ms (measured, else -1) and sets the layer's algo
// name and workspace.
double cb_cuda_conv_choose(cb_exec *e, int i, cb_phase ph, bool measure);

#endif
