// The "cudnn" backend (cuDNN 9 legacy API for convolution, pooling, LRN, batch norm, activation,
// softmax; cuBLAS for FC; convbench's own kernels for the rest) and the "auto" backend: the same
// table, with each convolution phase measured in plan() against convbench's own kernel and the
// faster kept, and each max or average pool measured the same way (forward and backward as a pair).
// Layers cuDNN cannot express (asymmetric padding, LRN windows over 16, batch-norm
// eps under CUDNN_BN_MIN_EPSILON) fall back to the own kernels and say so in their algorithm name.
// Storage: fp32 NCHW by default (--precision tf32 lets cuDNN and cuBLAS use TF32 tensor cores).
// --layout nhwc and --precision bf16 store activations NHWC and/or bf16 (descriptors
// CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, convolution compute type fp32) and run FC layers on
// cublasGemmEx (bf16 in, fp32 accumulation). Weights stay fp32 KCRS masters for SGD, as PyTorch's
// autocast: each conv and FC layer keeps a copy in the storage format (KRSC filters under NHWC; an
// FC layer after a spatial input gets its columns in (h, w, c) order) refreshed when
// e->param_version changes, and its weight gradient comes back to fp32 KCRS. The input and the
// criterion convert at the boundary. Own convolution, LRN and batch-norm kernels compute fp32 NCHW
// only: a layer that needs them (a convolution with asymmetric padding, LRN or batch-norm
// parameters cuDNN refuses) is declined in plan with a message, and "auto" races no own
// convolution there. Pooling has own kernels in every storage (src/cudnn/pool_fmt.cu): they run
// the pools cuDNN cannot express and race cuDNN's in "auto". The few layers the backend computes
// itself (bias with the ReLU, concat, sum, dropout, relu gradient) have storage-aware kernels in
// src/cudnn/format.cu; under NHWC a convolution's unaligned input channels are zero-padded
// (conv_cpad).
#include "cuda/backend.h"
#include "cuda/launch.h"
#include "cudnn/format.h"
#include "core/net.h"
#include "gpu/gpu.h"

#include <cublas_v2.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// what "auto" does where a test forces a path: measure, or take the own / the library's path
typedef enum force_choice { FORCE_NONE, FORCE_OWN, FORCE_LIB } force_choice;

typedef struct dnn_state {
    cudnnHandle_t h;
    cublasHandle_t blas;
    bool autotune;               // "auto": measure own vs cuDNN per convolution phase and pool layer
    force_choice pool;           // "auto": $CONVBENCH_AUTO_POOL=own|cudnn forces the pool layers' choice
    force_choice gemm1x1;        // "auto": $CONVBENCH_AUTO_GEMM=cublas|cudnn forces the 1x1 convolutions' (FORCE_OWN: cuBLAS)
    cudnnMathType_t math;
    int fmt;                     // storage: 0 (fp32 NCHW) or CB_FMT_NHWC | CB_FMT_BF16 (src/cudnn/format.h)
    cudnnTensorFormat_t tfmt;    // CUDNN_TENSOR_NCHW or _NHWC (filters KCRS or KRSC)
    cudnnDataType_t dtype;       // CUDNN_DATA_FLOAT or _BFLOAT16
    // only with fmt != 0:
    float *stage;                // (stage_elems) fp32 NCHW, host transfers of act_upload and act_download
    int64_t stage_elems;         // >= the input's count, the last layer's, and any layer's per example
    float *crit;                 // (N, K) fp32 NCHW: the criterion's probabilities and gradient
    void *wgrad;                 // (largest nw) a weight gradient in storage format, before fp32 KCRS
    float *part;                 // (CB_FMT_BIAS_PARTS, largest K) bias-gradient partial sums
} dnn_state;

typedef struct dnn_layer {
    bool own[CB_PHASE_COUNT];    // this phase runs convbench's own kernel
    bool blas[CB_PHASE_COUNT];   // this phase of a 1x1 convolution runs as a cuBLAS GEMM (conv_is_gemm)
    cudnnTensorDescriptor_t xd, yd, bd, bnd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd[CB_PHASE_COUNT];
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    cudnnPoolingDescriptor_t pd;
    cudnnLRNDescriptor_t lrn;
    cudnnActivationDescriptor_t act;
    void *w;                     // (nw) conv / FC weights in storage format (fmt != 0), from b->w
    uint64_t wver;               // the e->param_version that w was converted at
    int64_t wk, wc, wr, ws;      // the weights' (K, C, R, S) dims: conv filter, or FC (K, C, H, W) of its input
    int64_t wcp;                 // C of the storage copy: wc, or a conv's channels padded (conv_cpad)
    cb_shape xs;                 // a conv's input as cuDNN sees it: L->in, or its padded copy's shape
    void *xpad, *dxpad;          // (xs) NHWC: the padded copy of a conv's input and its gradient (NULL: none)
    void *xperm, *dxperm;        // (N, C, H, W) in the storage's type: an FC layer's spatial NHWC input and its gradient
} dnn_layer;

static const float one = 1.f, zero = 0.f;
static dnn_state *dnn(const cb_exec *e) { return ((cb_cuda_state *)e->state)->lib; }
static dnn_layer *lay(const cb_exec *e, int i) { return e->lb[i].priv; }
static bool native(const cb_exec *e) { return dnn(e)->fmt == 0; } // fp32 NCHW: the code paths of before
static bool is_bf16(const cb_exec *e) { return dnn(e)->fmt & CB_FMT_BF16; }
static bool is_nhwc(const cb_exec *e) { return dnn(e)->fmt & CB_FMT_NHWC; }
// the storage options o give: 0 (fp32 NCHW) or CB_FMT_NHWC | CB_FMT_BF16
static int fmt_of(const cb_exec_opts *o) {
    return (o->layout == CB_LAYOUT_NHWC ? CB_FMT_NHWC : 0) | (o->precision == CB_PREC_BF16 ? CB_FMT_BF16 : 0);
}
static const char *fmt_label(int fmt) {
    static const char *names[] = {"fp32 NCHW", "fp32 NHWC", "bf16 NCHW", "bf16 NHWC"};
    return names[fmt & 3];
}
static const char *fmt_name(const cb_exec *e) { return fmt_label(dnn(e)->fmt); }

#define DNN_TRY(call)                                                                                                  \
    do {                                                                                                               \
        cudnnStatus_t st_ = (call);                                                                                    \
        if (st_ != CUDNN_STATUS_SUCCESS)                                                                               \
            return cb_fail(err, CB_STATUS_DEVICE, e->net->path, L ? L->name : NULL, "%s: %s", #call,                  \
                           cudnnGetErrorString(st_));                                                                  \
    } while (0)

// device memory of the backend's own (fmt != 0), counted with the engine's
static void *dev_alloc(cb_exec *e, size_t bytes);

// Under NHWC, a convolution whose input channels are not a multiple of 16 bytes' worth (the C = 3
// of a first layer) runs on a copy of its input with zero channels added: cuDNN's tensor-core
// kernels want aligned channels (VGG-A b64 bf16 NHWC conv1 took 1.95 ms forward and 2.74 ms
// backward-filter on C = 3). Its filters get the same zero channels. Grouped ones stay as they are.
static int64_t conv_cpad(const cb_exec *e, const cb_layer *L) {
    int64_t c = L->p.conv.cin, a = is_bf16(e) ? 8 : 4;
    if (!is_nhwc(e) || L->p.conv.groups != 1 || c % a == 0) return c;
    return (c + a - 1) / a * a;
}

static void *dev_alloc(cb_exec *e, size_t bytes) {
    void *p = NULL;
    if (bytes && cudaMalloc(&p, bytes) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    e->allocated += bytes;
    return p;
}

// the buffers of a storage other than fp32 NCHW, sized from the network's shapes
static cb_status init_storage(cb_exec *e, cb_error *err) {
    dnn_state *d = dnn(e);
    const cb_net *net = e->net;
    const cb_layer *last = &net->layers[net->nlayers - 1];
    int64_t stage = cb_shape_count(net->layers[0].out), maxw = 1, maxk = 1;
    if (cb_shape_count(last->out) > stage) stage = cb_shape_count(last->out);
    for (int i = 0; i < net->nlayers; i++) {
        const cb_layer *L = &net->layers[i];
        int64_t per = L->out.c * L->out.h * L->out.w, nw = 0, k = 0;
        if (per > stage) stage = per;
        if (L->op == CB_OP_CONV) nw = (int64_t)L->p.conv.k * conv_cpad(e, L) * L->p.conv.win.r * L->p.conv.win.s, k = L->p.conv.k;
        if (L->op == CB_OP_FC) k = L->p.fc.k; // (its weight gradient goes straight to the fp32 masters: fc_blas)
        if (nw > maxw) maxw = nw;
        if (k > maxk) maxk = k;
    }
    d->stage_elems = stage;
    d->stage = dev_alloc(e, (size_t)stage * 4);
    d->part = dev_alloc(e, (size_t)CB_FMT_BIAS_PARTS * (size_t)maxk * 4);
    d->wgrad = e->opts.train ? dev_alloc(e, (size_t)maxw * cb_fmt_bytes(d->fmt)) : NULL;
    d->crit = dev_alloc(e, (size_t)cb_shape_count(last->out) * 4);
    if (!d->stage || !d->part || (e->opts.train && !d->wgrad) || !d->crit)
        return cb_fail(err, CB_STATUS_NOMEM, net->path, NULL, "backend %s: out of device memory for the %s buffers",
                       e->be->name, fmt_name(e));
    return CB_OK;
}

// $var (a test's way to run both of auto's paths whatever the timings say): unset or empty
// FORCE_NONE, own_name FORCE_OWN, "cudnn" FORCE_LIB, anything else refused by name
static cb_status env_force(const char *var, const char *own_name, force_choice *out, cb_error *err) {
    const char *v = getenv(var);
    *out = FORCE_NONE;
    if (!v || !*v) return CB_OK;
    if (strcmp(v, own_name) == 0) *out = FORCE_OWN;
    else if (strcmp(v, "cudnn") == 0) *out = FORCE_LIB;
    else return cb_fail(err, CB_STATUS_ARG, var, NULL, "'%s' is not %s or cudnn", v, own_name);
    return CB_OK;
}

static cb_status init_common(cb_exec *e, cb_error *err, bool autotune) {
    const cb_layer *L = NULL;
    force_choice pool = FORCE_NONE, gemm1x1 = FORCE_NONE;
    if (autotune) {
        cb_status fs = env_force("CONVBENCH_AUTO_POOL", "own", &pool, err);
        if (fs == CB_OK) fs = env_force("CONVBENCH_AUTO_GEMM", "cublas", &gemm1x1, err);
        if (fs != CB_OK) return fs;
    }
    cb_status st = cb_cuda_init_state(e, err);
    if (st != CB_OK) return st;
    dnn_state *d = cb_xcalloc(1, sizeof *d);
    ((cb_cuda_state *)e->state)->lib = d;
    d->autotune = autotune;
    d->fmt = fmt_of(&e->opts);
    d->tfmt = is_nhwc(e) ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    d->dtype = is_bf16(e) ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    e->act_bytes = cb_fmt_bytes(d->fmt);
    if (!native(e) && e->opts.verbose > 0)
        fprintf(stderr, "note: backend %s, %s tensors: cuDNN and cuBLAS compute every layer (fp32 accumulation); own "
                        "kernels run fp32 NCHW only%s\n", e->be->name, fmt_name(e), autotune ? " and are not raced" : "");
    d->pool = pool;
    d->gemm1x1 = gemm1x1;
    bool tensor_ops = e->opts.precision != CB_PREC_FP32;
    // cuDNN's legacy convolutions take tensor cores on bf16 data only under CUDNN_TENSOR_OP_MATH (its
    // default math allows TF32 on fp32 data, not them: bf16 NHWC ran BWD_DATA_ALGO_0 at 0.5 TFLOP/s)
    d->math = !tensor_ops ? CUDNN_FMA_MATH : e->opts.precision == CB_PREC_BF16 ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH;
    DNN_TRY(cudnnCreate(&d->h));
    if (cublasCreate(&d->blas) != CUBLAS_STATUS_SUCCESS)
        return cb_fail(err, CB_STATUS_DEVICE, "--backend", NULL, "cublasCreate failed");
    cublasSetMathMode(d->blas, tensor_ops ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
    return native(e) ? CB_OK : init_storage(e, err);
}
static cb_status init_cudnn(cb_exec *e, cb_error *err) { return init_common(e, err, false); }
static cb_status init_auto(cb_exec *e, cb_error *err) { return init_common(e, err, true); }

static void destroy(cb_exec *e) {
    cb_cuda_state *s = e->state;
    if (!s) return;
    for (int i = 0; e->lb && i < e->net->nlayers; i++) {
        dnn_layer *l = e->lb[i].priv;
        if (!l) continue;
        if (l->xd) cudnnDestroyTensorDescriptor(l->xd);
        if (l->yd) cudnnDestroyTensorDescriptor(l->yd);
        if (l->bd) cudnnDestroyTensorDescriptor(l->bd);
        if (l->bnd) cudnnDestroyTensorDescriptor(l->bnd);
        if (l->wd) cudnnDestroyFilterDescriptor(l->wd);
        for (int p = 0; p < CB_PHASE_COUNT; p++)
            if (l->cd[p]) cudnnDestroyConvolutionDescriptor(l->cd[p]);
        if (l->pd) cudnnDestroyPoolingDescriptor(l->pd);
        if (l->lrn) cudnnDestroyLRNDescriptor(l->lrn);
        if (l->act) cudnnDestroyActivationDescriptor(l->act);
        cudaFree(l->w);
        cudaFree(l->xpad);
        cudaFree(l->dxpad);
        cudaFree(l->xperm);
        cudaFree(l->dxperm);
        free(l);
        e->lb[i].priv = NULL;
    }
    dnn_state *d = s->lib;
    if (d) {
        if (d->h) cudnnDestroy(d->h);
        if (d->blas) cublasDestroy(d->blas);
        cudaFree(d->stage);
        cudaFree(d->crit);
        cudaFree(d->wgrad);
        cudaFree(d->part);
        free(d);
    }
    cb_cuda_destroy_state(e);
}

static const char *fwd_name[] = {"FWD_IMPLICIT_GEMM", "FWD_IMPLICIT_PRECOMP_GEMM", "FWD_GEMM", "FWD_DIRECT",
                                 "FWD_FFT", "FWD_FFT_TILING", "FWD_WINOGRAD", "FWD_WINOGRAD_NONFUSED"};
static const char *bwd_data_name[] = {"BWD_DATA_ALGO_0", "BWD_DATA_ALGO_1", "BWD_DATA_FFT", "BWD_DATA_FFT_TILING",
                                      "BWD_DATA_WINOGRAD", "BWD_DATA_WINOGRAD_NONFUSED"};
static const char *bwd_filter_name[] = {"BWD_FILTER_ALGO_0", "BWD_FILTER_ALGO_1", "BWD_FILTER_FFT",
                                        "BWD_FILTER_ALGO_3", "BWD_FILTER_WINOGRAD", "BWD_FILTER_WINOGRAD_NONFUSED",
                                        "BWD_FILTER_FFT_TILING"};
static const char *algo_name(const char *const *names, int n, int a) { return a >= 0 && a < n ? names[a] : "?"; }

// a tensor of shape s in the backend's storage (dims are given as n, c, h, w in either layout)
static cudnnStatus_t set4d(const cb_exec *e, cudnnTensorDescriptor_t *d, cb_shape s) {
    cudnnStatus_t st = *d ? CUDNN_STATUS_SUCCESS : cudnnCreateTensorDescriptor(d);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    return cudnnSetTensor4dDescriptor(*d, dnn(e)->tfmt, dnn(e)->dtype, (int)s.n, (int)s.c, (int)s.h, (int)s.w);
}

// A layer the storage (other than fp32 NCHW) cannot run: declined, with the reason. Own kernels,
// the fallback of fp32 NCHW, compute fp32 NCHW only.
#define OWN_NCHW "; own kernels run fp32 NCHW only"
static cb_status decline(const cb_exec *e, const cb_layer *L, cb_error *err, cb_reason r, const char *why) {
    cb_decline(err, r, e->net->path, L->name, "backend %s, %s tensors: %s", e->be->name, fmt_name(e), why);
    return CB_STATUS_UNSUPPORTED;
}

// The weights of conv or FC layer i as cuDNN / cuBLAS read them: b->w itself in fp32 NCHW, else
// the layer's copy in storage format, converted again when the parameters changed
static const void *dev_weights(cb_exec *e, int i) {
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    if (native(e) || !l->w) return b->w; // (an FC layer on fp32 storage reads the masters: fc_input)
    if (l->wver != e->param_version) {
        cb_fmt_convert_pad(l->wk, l->wc, l->wcp, l->wr, l->ws, b->w, 0, l->w, dnn(e)->fmt);
        l->wver = e->param_version;
    }
    return l->w;
}
// where the weight gradient is computed, and its conversion to the fp32 KCRS master gradient
static void *dev_wgrad(cb_exec *e, int i) { return native(e) ? (void *)e->lb[i].dw : dnn(e)->wgrad; }
static void finish_wgrad(cb_exec *e, int i) {
    dnn_layer *l = lay(e, i);
    if (!native(e)) cb_fmt_convert_pad(l->wk, l->wcp, l->wc, l->wr, l->ws, dnn(e)->wgrad, dnn(e)->fmt, e->lb[i].dw, 0);
}

// conv / FC layer i (fmt != 0): its storage-format weight copy and the dims it converts with
static cb_status plan_weights(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    dnn_layer *l = lay(e, i);
    if (L->op == CB_OP_CONV) {
        l->wk = L->p.conv.k, l->wc = L->p.conv.cin, l->wr = L->p.conv.win.r, l->ws = L->p.conv.win.s;
        l->wcp = conv_cpad(e, L);
    } else { // FC: the masters' (K, C*H*W) as they are (fc_input turns the input to match); fp32 storage reads them
        l->wk = L->p.fc.k, l->wc = l->wcp = L->in.c, l->wr = l->ws = 1;
        if (!is_bf16(e)) return CB_OK;
    }
    l->w = dev_alloc(e, (size_t)(l->wk * l->wcp * l->wr * l->ws) * cb_fmt_bytes(dnn(e)->fmt));
    if (!l->w) return cb_fail(err, CB_STATUS_NOMEM, e->net->path, L->name, "out of device memory for its %s weights", fmt_name(e));
    dev_weights(e, i);
    return CB_OK;
}

// y (N, K, H, W) of conv / FC layer i in the storage += b (K), and the layer's ReLU in the same
// pass when one follows directly (no batch norm between): then epilogue_forward skips it
static void bias_act(cb_exec *e, int i, const float *bias, void *y) {
    const cb_layer *L = &e->net->layers[i];
    cb_shape s = L->out;
    bool relu = L->act == CB_ACT_RELU && !L->bn;
    if (is_nhwc(e)) cb_fmt_bias_act(s.n * s.h * s.w, (int)s.c, 1, bias, y, relu, is_bf16(e));
    else cb_fmt_bias_act(s.n, (int)s.c, s.h * s.w, bias, y, relu, is_bf16(e));
    ((cb_cuda_state *)e->state)->fused_relu[i] = relu;
}
// db = sum of dy over all but the channels
static void fmt_bias_grad(cb_exec *e, int i, const void *dy, float *db) {
    cb_shape s = e->net->layers[i].out;
    if (is_nhwc(e)) cb_fmt_bias_grad(s.n * s.h * s.w, (int)s.c, 1, dy, is_bf16(e), db, dnn(e)->part);
    else cb_fmt_bias_grad(s.n, (int)s.c, s.h * s.w, dy, is_bf16(e), db, dnn(e)->part);
}

// a temporary workspace for cudnnFind*Ex, as large as the limit and free memory allow
static void *find_ws(cb_exec *e, size_t *bytes) {
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    size_t want = e->opts.workspace_limit < fr / 2 ? e->opts.workspace_limit : fr / 2;
    void *p = NULL;
    while (want >= (1 << 20) && cudaMalloc(&p, want) != cudaSuccess) {
        cudaGetLastError();
        want /= 2;
    }
    *bytes = p ? want : 0;
    return p;
}

static void note_skips(cb_exec *e, const cb_layer *L, const char *phase, int n, const cudnnStatus_t *st, const int *alg,
                       const size_t *mem) {
    if (e->opts.verbose <= 0) return;
    for (int j = 0; j < n; j++)
        if (st[j] != CUDNN_STATUS_SUCCESS)
            fprintf(stderr, "note: layer '%s' %s algorithm %d skipped: %s (workspace %zu bytes)\n", L->name, phase, alg[j],
                    cudnnGetErrorString(st[j]), mem[j]);
}

// Under NHWC a 1x1 convolution of stride 1 without padding is a GEMM over the N*H*W pixel rows,
// as an FC layer's: "auto" races cuBLAS against cuDNN on it (GoogLeNet's 1x1 layers: cuDNN's
// legacy algorithms ran them at 9 TFLOP/s in bf16).
static bool conv_is_gemm(const cb_exec *e, const cb_layer *L) {
    const cb_window *w = &L->p.conv.win;
    return is_nhwc(e) && w->r == 1 && w->s == 1 && w->stride_h == 1 && w->stride_w == 1 && w->pad_top == 0 && w->pad_left == 0 &&
           L->p.conv.groups == 1 && L->out.h == L->in.h && L->out.w == L->in.w && conv_cpad(e, L) == L->p.conv.cin;
}
static void conv_gemm(cb_exec *e, int i, int ph, void *dx);
static double time_conv_gemm(cb_exec *e, int i, int ph) {
    void *dx = e->lb[e->net->layers[i].parents[0]].dy;
    conv_gemm(e, i, ph, dx);
    cb_cuda_timer_start(e);
    for (int r = 0; r < 3; r++) conv_gemm(e, i, ph, dx);
    double ms = cb_cuda_timer_stop(e) / 3;
    return cudaGetLastError() == cudaSuccess ? ms : -1;
}

static cb_status plan_conv(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_state *d = dnn(e);
    dnn_layer *l = lay(e, i);
    const cb_window *w = &L->p.conv.win;
    int on, oc, oh, ow;
    int cg = (int)conv_cpad(e, L); // the input channels (of a group), padded under NHWC where needed
    cb_shape xin = L->in;          // as cuDNN sees it
    if (cg != L->p.conv.cin) xin.c = cg; // (groups 1 here)
    DNN_TRY(set4d(e, &l->xd, xin));
    DNN_TRY(set4d(e, &l->yd, L->out));
    DNN_TRY(cudnnCreateFilterDescriptor(&l->wd));
    // under NHWC the filter format CUDNN_TENSOR_NHWC means KRSC (dims still given as K, C, R, S)
    DNN_TRY(cudnnSetFilter4dDescriptor(l->wd, d->dtype, d->tfmt, L->p.conv.k, cg, w->r, w->s));
    if (L->p.conv.bias) DNN_TRY(set4d(e, &l->bd, (cb_shape){4, 1, L->p.conv.k, 1, 1}));
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        DNN_TRY(cudnnCreateConvolutionDescriptor(&l->cd[p]));
        DNN_TRY(cudnnSetConvolution2dDescriptor(l->cd[p], w->pad_top, w->pad_left, w->stride_h, w->stride_w, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        DNN_TRY(cudnnSetConvolutionGroupCount(l->cd[p], L->p.conv.groups));
        DNN_TRY(cudnnSetConvolutionMathType(l->cd[p], d->math));
    }
    DNN_TRY(cudnnGetConvolution2dForwardOutputDim(l->cd[0], l->xd, l->wd, &on, &oc, &oh, &ow));
    if ((oh != L->out.h || ow != L->out.w) && is_nhwc(e)) {
        // trailing pads larger than the leading ones (TF SAME): under NHWC cuDNN runs on a copy of
        // the input with the difference added as zero rows and columns at the end
        int64_t eh = (L->out.h - 1) * w->stride_h + w->r - 2 * w->pad_top - L->in.h;
        int64_t ew = (L->out.w - 1) * w->stride_w + w->s - 2 * w->pad_left - L->in.w;
        if (eh > 0) xin.h += eh;
        if (ew > 0) xin.w += ew;
        DNN_TRY(set4d(e, &l->xd, xin));
        DNN_TRY(cudnnGetConvolution2dForwardOutputDim(l->cd[0], l->xd, l->wd, &on, &oc, &oh, &ow));
    }
    if (oh != L->out.h || ow != L->out.w) { // trailing pads differ from leading ones: cuDNN has no such padding
        if (!native(e)) return decline(e, L, err, CB_REASON_ASYM_PADDING, "asymmetric padding, which cuDNN lacks" OWN_NCHW);
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            bool needed = p == 0 || (p == 1 && e->lb[L->parents[0]].dy) || (p == 2 && b->dw);
            if (!needed) continue;
            l->own[p] = true;
            cb_cuda_conv_choose(e, i, (cb_phase)p, d->autotune);
            b->choice[p].flags |= CB_CHOICE_ASYM_PAD;
        }
        return CB_OK;
    }
    if (!native(e)) {
        cb_status st = plan_weights(e, i, err);
        if (st != CB_OK) return st;
    }
    const void *x = e->lb[L->parents[0]].y;
    void *y = cb_exec_op_out(e, i), *dx = e->lb[L->parents[0]].dy;
    l->xs = xin;
    if (xin.c != L->in.c || xin.h != L->in.h || xin.w != L->in.w) {
        size_t bytes = (size_t)cb_shape_count(xin) * e->act_bytes;
        l->xpad = dev_alloc(e, bytes);
        l->dxpad = dx ? dev_alloc(e, bytes) : NULL;
        if (!l->xpad || (dx && !l->dxpad))
            return cb_fail(err, CB_STATUS_NOMEM, e->net->path, L->name, "out of device memory for its channel-padded input");
        x = l->xpad;
        dx = l->dxpad;
    }
    size_t wsz = 0;
    void *ws = find_ws(e, &wsz);
    const void *wf = dev_weights(e, i);
    void *dwf = b->dw ? dev_wgrad(e, i) : NULL;
    double dnn_ms[CB_PHASE_COUNT] = {-1, -1, -1};
    enum { NA = 8 };
    int ret = 0;
    cudnnStatus_t sts[NA];
    int algs[NA];
    size_t mems[NA];
    {
        cudnnConvolutionFwdAlgoPerf_t pf[NA];
        cudnnStatus_t st = cudnnFindConvolutionForwardAlgorithmEx(d->h, l->xd, x, l->wd, wf, l->cd[0], l->yd, y, NA, &ret, pf, ws, wsz);
        for (int j = 0; j < ret; j++) sts[j] = pf[j].status, algs[j] = pf[j].algo, mems[j] = pf[j].memory;
        note_skips(e, L, "forward", ret, sts, algs, mems);
        for (int j = 0; st == CUDNN_STATUS_SUCCESS && j < ret; j++)
            if (pf[j].status == CUDNN_STATUS_SUCCESS && pf[j].memory <= e->opts.workspace_limit) {
                l->fwd = pf[j].algo;
                b->ws[0] = pf[j].memory;
                dnn_ms[0] = pf[j].time;
                cudnnSetConvolutionMathType(l->cd[0], pf[j].mathType);
                b->choice[0] = cb_choice_of(CB_IMPL_CUDNN, pf[j].algo, algo_name(fwd_name, 8, pf[j].algo));
                b->choice[0].ms = pf[j].time;
                break;
            }
    }
    if (dx) {
        cudnnConvolutionBwdDataAlgoPerf_t pf[NA];
        cudnnStatus_t st = cudnnFindConvolutionBackwardDataAlgorithmEx(d->h, l->wd, wf, l->yd, y, l->cd[1], l->xd, dx, NA, &ret, pf, ws, wsz);
        for (int j = 0; j < ret; j++) sts[j] = pf[j].status, algs[j] = pf[j].algo, mems[j] = pf[j].memory;
        note_skips(e, L, "backward-data", ret, sts, algs, mems);
        for (int j = 0; st == CUDNN_STATUS_SUCCESS && j < ret; j++)
            if (pf[j].status == CUDNN_STATUS_SUCCESS && pf[j].memory <= e->opts.workspace_limit) {
                l->bwd_data = pf[j].algo;
                b->ws[1] = pf[j].memory;
                dnn_ms[1] = pf[j].time;
                cudnnSetConvolutionMathType(l->cd[1], pf[j].mathType);
                b->choice[1] = cb_choice_of(CB_IMPL_CUDNN, pf[j].algo, algo_name(bwd_data_name, 6, pf[j].algo));
                b->choice[1].ms = pf[j].time;
                break;
            }
    }
    if (b->dw) {
        cudnnConvolutionBwdFilterAlgoPerf_t pf[NA];
        cudnnStatus_t st = cudnnFindConvolutionBackwardFilterAlgorithmEx(d->h, l->xd, x, l->yd, y, l->cd[2], l->wd, dwf, NA, &ret, pf, ws, wsz);
        for (int j = 0; j < ret; j++) sts[j] = pf[j].status, algs[j] = pf[j].algo, mems[j] = pf[j].memory;
        note_skips(e, L, "backward-filter", ret, sts, algs, mems);
        for (int j = 0; st == CUDNN_STATUS_SUCCESS && j < ret; j++)
            if (pf[j].status == CUDNN_STATUS_SUCCESS && pf[j].memory <= e->opts.workspace_limit) {
                l->bwd_filter = pf[j].algo;
                b->ws[2] = pf[j].memory;
                dnn_ms[2] = pf[j].time;
                cudnnSetConvolutionMathType(l->cd[2], pf[j].mathType);
                b->choice[2] = cb_choice_of(CB_IMPL_CUDNN, pf[j].algo, algo_name(bwd_filter_name, 7, pf[j].algo));
                b->choice[2].ms = pf[j].time;
                break;
            }
    }
    cudaFree(ws);
    cudaGetLastError();
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        bool needed = p == 0 || (p == 1 && dx) || (p == 2 && b->dw);
        if (!needed) continue;
        cb_choice dnn_c = b->choice[p]; // cuDNN's pick
        size_t dnn_ws = b->ws[p];
        cb_choice *c = &b->choice[p];
        if (dnn_ms[p] < 0 && !native(e)) {
            return decline(e, L, err, CB_REASON_NO_ALGORITHM, p == 0 ? "no cuDNN forward algorithm runs it within the workspace limit" OWN_NCHW
                                      : p == 1 ? "no cuDNN backward-data algorithm runs it within the workspace limit" OWN_NCHW
                                               : "no cuDNN backward-filter algorithm runs it within the workspace limit" OWN_NCHW);
        } else if (dnn_ms[p] < 0) { // no cuDNN algorithm fits: an own kernel
            l->own[p] = true;
            cb_cuda_conv_choose(e, i, (cb_phase)p, d->autotune);
            c->flags |= CB_CHOICE_NO_LIB_FIT;
        } else if (l->xpad && cg != L->p.conv.cin) {
            c->flags |= CB_CHOICE_CHANNEL_PAD | (xin.h != L->in.h || xin.w != L->in.w ? CB_CHOICE_SAME_COPY : 0);
            c->pad_from = L->p.conv.cin, c->pad_to = cg;
        } else if (l->xpad) {
            c->flags |= CB_CHOICE_SAME_COPY;
        } else if (d->autotune && conv_is_gemm(e, L) && d->gemm1x1 != FORCE_NONE) { // a test's way to run either
            l->blas[p] = d->gemm1x1 == FORCE_OWN;
            if (l->blas[p]) b->ws[p] = 0, *c = cb_choice_of(CB_IMPL_CUBLAS, 0, "cuBLAS 1x1 GEMM");
            c->flags |= CB_CHOICE_FORCED;
        } else if (d->autotune && conv_is_gemm(e, L)) {
            double blas = time_conv_gemm(e, i, p);
            if (blas >= 0 && blas < dnn_ms[p]) {
                l->blas[p] = true;
                b->ws[p] = 0;
                *c = cb_choice_of(CB_IMPL_CUBLAS, 0, "cuBLAS 1x1 GEMM");
                c->ms = blas, c->rival_ms = dnn_ms[p];
            } else c->rival_ms = blas;
            c->flags |= CB_CHOICE_RACED;
        } else if (d->autotune && !native(e)) { // own kernels cannot read this storage: cuDNN's choice stands
            c->flags |= CB_CHOICE_OWN_NCHW_ONLY;
        } else if (d->autotune) {
            double own = cb_cuda_conv_choose(e, i, (cb_phase)p, true);
            if (own >= 0 && own < dnn_ms[p]) {
                l->own[p] = true;
                c->rival_ms = dnn_ms[p];
            } else {
                b->ws[p] = dnn_ws;
                *c = dnn_c;
                c->rival_ms = own;
            }
            c->flags |= CB_CHOICE_RACED;
        }
    }
    return CB_OK;
}

// C = op(A) op(B), column-major, on the storage type: cublasSgemm on fp32 (tf32 by the handle's
// math mode), cublasGemmEx on bf16 with fp32 accumulation
static void gemm(cb_exec *e, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *a, int lda,
                 const void *bm, int ldb, void *c, int ldc) {
    dnn_state *d = dnn(e);
    if (is_bf16(e))
        cublasGemmEx(d->blas, ta, tb, m, n, k, &one, a, CUDA_R_16BF, lda, bm, CUDA_R_16BF, ldb, &zero, c, CUDA_R_16BF, ldc,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else cublasSgemm(d->blas, ta, tb, m, n, k, &one, a, lda, bm, ldb, &zero, c, ldc);
}

// one phase of a 1x1 convolution (conv_is_gemm) on cuBLAS, as fc_blas with N*H*W rows: x (M, C),
// w (K, C), y (M, K) row-major; dx: where the input gradient goes
static void conv_gemm(cb_exec *e, int i, int ph, void *dx) {
    const cb_layer *L = &e->net->layers[i];
    int m = (int)(L->in.n * L->in.h * L->in.w), c = L->p.conv.cin, k = L->p.conv.k;
    const void *x = e->lb[L->parents[0]].y;
    void *y = cb_exec_op_out(e, i);
    const void *dy = cb_exec_op_grad(e, i) ? (const void *)cb_exec_op_grad(e, i) : y; // (plan: y stands in)
    if (ph == CB_PHASE_FORWARD) gemm(e, CUBLAS_OP_T, CUBLAS_OP_N, k, m, c, dev_weights(e, i), c, x, c, y, k);
    else if (ph == CB_PHASE_BWD_DATA) gemm(e, CUBLAS_OP_N, CUBLAS_OP_N, c, m, k, dev_weights(e, i), c, dy, k, dx, c);
    else gemm(e, CUBLAS_OP_N, CUBLAS_OP_T, c, k, m, x, c, dy, k, dev_wgrad(e, i), c);
}

// fully connected layers on cuBLAS: y (N,K) = x (N,C) w (K,C)^T + b; dx = dy w; dw = dy^T x
// (under NHWC, x's C is (h, w, c)-ordered and so are the columns of the layer's weight copy)
// An FC layer's input as its GEMM reads it, (N, C*H*W) in (c, h, w) order, the masters' column
// order: under NHWC a spatial input is permuted into l->xperm (N*C*H*W elements, small next to
// the weights: VGG-16's fc6 reads 16 x 25088 of them against 103 M weights, which are therefore
// never permuted). With fp32 storage the GEMMs read the fp32 masters themselves and write the
// weight gradient in place; on bf16 storage the weights' bf16 copy is a plain cast and cuBLAS
// writes the gradient as fp32 straight into the master gradient.
static bool fc_permutes(const cb_exec *e, int i) {
    cb_shape in = e->net->layers[e->net->layers[i].parents[0]].out;
    return is_nhwc(e) && in.h * in.w > 1;
}
static const void *fc_input(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    dnn_layer *l = lay(e, i);
    const void *x = e->lb[L->parents[0]].y;
    if (!l->xperm) return x;
    cb_shape in = e->net->layers[L->parents[0]].out;
    cb_fmt_convert(in.n, in.c, in.h, in.w, x, dnn(e)->fmt, l->xperm, dnn(e)->fmt & CB_FMT_BF16);
    return l->xperm;
}

static void fc_blas_data(cb_exec *e, int i, const float *dy, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    dnn_layer *l = lay(e, i);
    int n = (int)L->in.n, c = (int)L->in.c, k = L->p.fc.k;
    gemm(e, CUBLAS_OP_N, CUBLAS_OP_N, c, n, k, dev_weights(e, i), c, dy, k, l->dxperm ? l->dxperm : (void *)dx, c);
    if (l->dxperm) { // back to the input's NHWC
        cb_shape in = e->net->layers[L->parents[0]].out;
        cb_fmt_convert(in.n, in.c, in.h, in.w, l->dxperm, dnn(e)->fmt & CB_FMT_BF16, dx, dnn(e)->fmt);
    }
}
static void fc_blas(cb_exec *e, int i, cb_phase ph) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    int n = (int)L->in.n, c = (int)L->in.c, k = L->p.fc.k;
    const float *dy = cb_exec_op_grad(e, i) ? cb_exec_op_grad(e, i) : cb_exec_op_out(e, i);
    if (ph == CB_PHASE_FORWARD) {
        float *out = cb_exec_op_out(e, i);
        gemm(e, CUBLAS_OP_T, CUBLAS_OP_N, k, n, c, dev_weights(e, i), c, fc_input(e, i), c, out, k);
        if (b->b) bias_act(e, i, b->b, out);
    } else if (ph == CB_PHASE_BWD_DATA) {
        fc_blas_data(e, i, dy, e->lb[L->parents[0]].dy);
    } else {
        // the permuted input is the forward's (the engine runs the forward first)
        const void *x = lay(e, i)->xperm ? lay(e, i)->xperm : e->lb[L->parents[0]].y;
        if (is_bf16(e))
            cublasGemmEx(dnn(e)->blas, CUBLAS_OP_N, CUBLAS_OP_T, c, k, n, &one, x, CUDA_R_16BF, c, dy, CUDA_R_16BF, k, &zero, b->dw,
                         CUDA_R_32F, c, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        else gemm(e, CUBLAS_OP_N, CUBLAS_OP_T, c, k, n, x, c, dy, k, b->dw, c);
        if (b->db && native(e)) cb_cuda_bias_grad(n, k, 1, dy, b->db);
        else if (b->db) fmt_bias_grad(e, i, dy, b->db);
    }
}

// cuBLAS for every phase; "auto" races it against the best own algorithm (a 1x1 convolution)
static cb_status plan_fc(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    const char *blas = is_bf16(e) ? "cublasGemmEx bf16" : e->opts.precision == CB_PREC_FP32 ? "cublasSgemm" : "cublasSgemm tf32";
    if (!native(e)) {
        cb_status st = plan_weights(e, i, err);
        if (st != CB_OK) return st;
        if (fc_permutes(e, i)) {
            size_t bytes = (size_t)cb_shape_count(L->in) * e->act_bytes;
            l->xperm = dev_alloc(e, bytes);
            l->dxperm = e->lb[L->parents[0]].dy ? dev_alloc(e, bytes) : NULL;
            if (!l->xperm || (e->lb[L->parents[0]].dy && !l->dxperm))
                return cb_fail(err, CB_STATUS_NOMEM, e->net->path, L->name, "out of device memory for its permuted input");
        }
    }
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        bool needed = p == 0 || (p == 1 && e->lb[L->parents[0]].dy) || (p == 2 && b->dw);
        cb_choice *c = &b->choice[p];
        *c = cb_choice_of(CB_IMPL_CUBLAS, 0, blas);
        if (dnn(e)->autotune && !native(e)) c->flags |= CB_CHOICE_OWN_NCHW_ONLY;
        if (!needed || !dnn(e)->autotune || !native(e)) continue;
        double ms = 0;
        for (int r = 0; r < 4; r++) {
            if (r == 1) cb_cuda_timer_start(e);
            fc_blas(e, i, (cb_phase)p);
        }
        ms = cb_cuda_timer_stop(e) / 3;
        cb_choice lib = *c;
        lib.ms = ms;
        double own = cb_cuda_conv_choose(e, i, (cb_phase)p, true);
        if (own >= 0 && own < ms) {
            l->own[p] = true;
            c->rival_ms = ms;
        } else {
            b->ws[p] = 0;
            *c = lib;
            c->rival_ms = own;
        }
        c->flags |= CB_CHOICE_RACED;
    }
    return CB_OK;
}

// Under a storage other than fp32 NCHW, runs layer i's cuDNN calls once on its own buffers (their
// contents do not matter) so that a combination cuDNN refuses (a layout or type one of its legacy
// routines lacks) is declined here with its status, not ignored in forward()
static cb_status probe(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    dnn_state *d = dnn(e);
    const void *x = e->lb[L->parents[0]].y;
    void *out = cb_exec_op_out(e, i), *dx = e->lb[L->parents[0]].dy ? (void *)e->lb[L->parents[0]].dy : (void *)e->scratch;
    const void *dy = cb_exec_op_grad(e, i);
    bool train = e->opts.train && dy && dx;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    const char *what = "";
#define PROBE(name, call)                                                                                              \
    if (st == CUDNN_STATUS_SUCCESS) st = (call), what = name
    if (L->op == CB_OP_POOL && !l->own[0]) {
        PROBE("pooling forward", cudnnPoolingForward(d->h, l->pd, &one, l->xd, x, &zero, l->yd, out));
        if (train) PROBE("pooling backward", cudnnPoolingBackward(d->h, l->pd, &one, l->yd, out, l->yd, dy, l->xd, x, &zero, l->xd, dx));
    }
    if (L->op == CB_OP_LRN && !l->own[0]) {
        PROBE("LRN forward", cudnnLRNCrossChannelForward(d->h, l->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, l->yd, x, &zero, l->yd, out));
        if (train)
            PROBE("LRN backward", cudnnLRNCrossChannelBackward(d->h, l->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, l->yd, out, l->yd, dy,
                                                               l->yd, x, &zero, l->yd, dx));
    }
    if (L->op == CB_OP_SOFTMAX)
        PROBE("softmax", cudnnSoftmaxForward(d->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, l->xd, x, &zero, l->xd, out));
    if (l->act) PROBE("activation", cudnnActivationForward(d->h, l->act, &one, l->yd, b->y, &zero, l->yd, b->y));
    // batch norm: inference (training would move the running statistics) and backward
    if (L->op == CB_OP_BATCHNORM && l->bnd) {
        PROBE("batch norm", cudnnBatchNormalizationForwardInference(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, l->yd, x, l->yd, out,
                                                                    l->bnd, b->gamma, b->beta, b->rmean, b->rvar, L->p.bn.eps));
        if (train && b->dgamma)
            PROBE("batch norm backward", cudnnBatchNormalizationBackward(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, l->yd, x,
                                                                         l->yd, dy, l->yd, dx, l->bnd, b->gamma, b->dgamma,
                                                                         b->dbeta, L->p.bn.eps, b->bn_mean, b->bn_invstd));
    }
    if (L->bn && l->bnd) {
        PROBE("batch norm", cudnnBatchNormalizationForwardInference(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, l->yd, b->pre, l->yd,
                                                                    b->y, l->bnd, b->gamma, b->beta, b->rmean, b->rvar, L->bn_eps));
        if (e->opts.train && b->dpre && b->dgamma)
            PROBE("batch norm backward", cudnnBatchNormalizationBackward(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, l->yd,
                                                                         b->pre, l->yd, b->dy, l->yd, b->dpre, l->bnd, b->gamma,
                                                                         b->dgamma, b->dbeta, L->bn_eps, b->bn_mean, b->bn_invstd));
    }
#undef PROBE
    cudaGetLastError();
    if (st != CUDNN_STATUS_SUCCESS) {
        char why[160];
        snprintf(why, sizeof why, "cuDNN's %s refuses them (%s)" OWN_NCHW, what, cudnnGetErrorString(st));
        return decline(e, L, err, CB_REASON_LIBRARY_REFUSES, why);
    }
    return CB_OK;
}

// One run of pool layer i's forward (ph 0) or backward (ph 1), on cuDNN or the own kernels. The
// layer's output gradient may not be allocated yet: then y (the same shape) stands in for it, as
// in time_conv.
// The own kernels: src/cuda/pool.cu on fp32 NCHW, src/cudnn/pool_fmt.cu on the other storages.
// dx: where the input gradient goes (NULL: the input's own gradient buffer).
static cudnnStatus_t run_pool(cb_exec *e, int i, bool own, int ph, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    dnn_layer *l = lay(e, i);
    cb_pool_params pp;
    cb_pool_params_of(L, &pp);
    const float *x = e->lb[L->parents[0]].y;           // (N, C, H, W)
    float *y = cb_exec_op_out(e, i);                     // (N, C, P, Q)
    if (!dx) dx = e->lb[L->parents[0]].dy;               // (N, C, H, W)
    const float *dy = cb_exec_op_grad(e, i) ? cb_exec_op_grad(e, i) : y;
    if (own && !native(e) && ph == 0) cb_fmt_pool_forward(&pp, dnn(e)->fmt, x, y, e->lb[i].aux);
    else if (own && !native(e)) cb_fmt_pool_backward(&pp, dnn(e)->fmt, dy, e->lb[i].aux, dx);
    else if (own && ph == 0) cb_cuda_pool_forward(&pp, x, y, e->lb[i].aux);
    else if (own) cb_cuda_pool_backward(&pp, dy, e->lb[i].aux, dx);
    else if (ph == 0) return cudnnPoolingForward(dnn(e)->h, l->pd, &one, l->xd, x, &zero, l->yd, y);
    else return cudnnPoolingBackward(dnn(e)->h, l->pd, &one, l->yd, y, l->yd, dy, l->xd, x, &zero, l->xd, dx);
    return CUDNN_STATUS_SUCCESS;
}

// Mean ms of 3 runs after a warm-up of pool layer i's forward, then of its backward when bwd
// (the own backward reads the argmax that the own forward has just written): ms[0] forward,
// ms[1] backward; false when a call failed.
static bool time_pool(cb_exec *e, int i, bool own, bool bwd, double ms[2]) {
    ms[0] = ms[1] = -1;
    for (int ph = 0; ph < (bwd ? 2 : 1); ph++) {
        cudnnStatus_t st = run_pool(e, i, own, ph, NULL);
        cb_cuda_timer_start(e);
        for (int r = 0; r < 3; r++)
            if (st == CUDNN_STATUS_SUCCESS) st = run_pool(e, i, own, ph, NULL);
        double t = cb_cuda_timer_stop(e) / 3;
        if (st != CUDNN_STATUS_SUCCESS || cudaGetLastError() != cudaSuccess) return false;
        ms[ph] = t;
    }
    return true;
}

// A pool layer runs on cuDNN, or on the own kernels where cuDNN cannot express its padding (in
// every storage: GoogLeNet's SAME pools). "auto" times both, forward plus backward when the pass trains (the own backward needs the own
// forward's argmax: the two phases go together), and keeps the faster; each phase's algorithm
// name says which and the two totals: "own pool f+b 0.40<1.88", "cudnn pool 0.12<0.30".
static cb_status plan_pool(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_state *d = dnn(e);
    dnn_layer *l = lay(e, i);
    const cb_window *w = &L->p.pool.win;
    bool bwd = e->lb[L->parents[0]].dy != NULL;
    DNN_TRY(set4d(e, &l->xd, L->in));
    DNN_TRY(cudnnCreatePoolingDescriptor(&l->pd));
    DNN_TRY(cudnnSetPooling2dDescriptor(l->pd, L->p.pool.avg ? CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING : CUDNN_POOLING_MAX_DETERMINISTIC,
                                        CUDNN_NOT_PROPAGATE_NAN, w->r, w->s, w->pad_top, w->pad_left, w->stride_h, w->stride_w));
    int n, c, h, ww;
    DNN_TRY(cudnnGetPooling2dForwardOutputDim(l->pd, l->xd, &n, &c, &h, &ww));
    cb_choice pc = cb_choice_of(CB_IMPL_CUDNN, -1, "");
    if (h != L->out.h || ww != L->out.w) { // trailing pads differ from leading ones: cuDNN has no such padding
        l->own[0] = l->own[1] = true;
        pc = cb_choice_of(CB_IMPL_OWN, -1, "pool");
        pc.flags |= CB_CHOICE_ASYM_PAD;
    } else if (d->autotune && d->pool != FORCE_NONE) {
        l->own[0] = l->own[1] = d->pool == FORCE_OWN;
        pc = l->own[0] ? cb_choice_of(CB_IMPL_OWN, -1, "pool") : cb_choice_of(CB_IMPL_CUDNN, -1, "cudnn pool");
        pc.flags |= CB_CHOICE_FORCED;
    } else if (d->autotune) {
        double own_ms[2], dnn_ms[2];
        bool own_ok = time_pool(e, i, true, bwd, own_ms), dnn_ok = time_pool(e, i, false, bwd, dnn_ms);
        double own = own_ok ? own_ms[0] + (bwd ? own_ms[1] : 0) : -1, dnn = dnn_ok ? dnn_ms[0] + (bwd ? dnn_ms[1] : 0) : -1;
        l->own[0] = l->own[1] = own_ok && (!dnn_ok || own < dnn);
        pc = l->own[0] ? cb_choice_of(CB_IMPL_OWN, -1, "pool") : cb_choice_of(CB_IMPL_CUDNN, -1, "cudnn pool");
        pc.flags |= CB_CHOICE_RACED | (bwd ? CB_CHOICE_PAIRED : 0);
        pc.ms = l->own[0] ? own : dnn, pc.rival_ms = l->own[0] ? dnn : own;
    }
    for (int p = 0; p < (bwd ? 2 : 1); p++) b->choice[p] = pc;
    return native(e) || l->own[0] ? CB_OK : probe(e, i, err);
}

// cuDNN pads a convolution symmetrically (the leading pads on both sides). Under NHWC plan_conv
// runs it on a copy of the input with the missing trailing rows and columns added (TF SAME).
static int64_t cudnn_out(int64_t in, int pad, int r, int stride) { return (in + 2 * pad - r) / stride + 1; }
static bool conv_pads_fit(const cb_layer *L, bool nhwc) {
    const cb_window *w = &L->p.conv.win;
    int64_t h = L->in.h, wd = L->in.w;
    if (nhwc) {
        int64_t eh = (L->out.h - 1) * w->stride_h + w->r - 2 * w->pad_top - h, ew = (L->out.w - 1) * w->stride_w + w->s - 2 * w->pad_left - wd;
        h += eh > 0 ? eh : 0, wd += ew > 0 ? ew : 0;
    }
    return cudnn_out(h, w->pad_top, w->r, w->stride_h) == L->out.h && cudnn_out(wd, w->pad_left, w->s, w->stride_w) == L->out.w;
}

// In fp32 NCHW own kernels run whatever cuDNN cannot; in another storage (own convolution, LRN and
// batch-norm kernels compute fp32 NCHW only) these are declined. What only cuDNN can tell (a
// refused descriptor, no algorithm within the workspace) plan declines after asking it.
static cb_reason supports(const cb_net *net, int i, const cb_exec_opts *o, char *why, size_t n) {
    const cb_layer *L = &net->layers[i];
    int fmt = fmt_of(o);
    if (fmt == 0 || L->op == CB_OP_INPUT) return CB_REASON_NONE;
    cb_reason r = CB_REASON_NONE;
    const char *what = "";
    cb_shape in = net->layers[L->parents[0]].out, out = L->out;
    bool spatial_in = in.h * in.w > 1, spatial_out = out.h * out.w > 1;
    float eps = L->op == CB_OP_BATCHNORM ? L->p.bn.eps : L->bn_eps;
    if ((fmt & CB_FMT_NHWC) && L->op == CB_OP_RESHAPE && (spatial_in || spatial_out) && (in.c != out.c || in.h != out.h || in.w != out.w))
        r = CB_REASON_NHWC_ORDER, what = "a Reshape of a spatial tensor, whose elements NHWC orders differently";
    else if ((fmt & CB_FMT_NHWC) && L->op == CB_OP_SOFTMAX && spatial_in)
        r = CB_REASON_NHWC_ORDER, what = "a Softmax over a spatial input, whose classes NHWC orders differently";
    else if ((L->bn || L->op == CB_OP_BATCHNORM) && eps < CUDNN_BN_MIN_EPSILON)
        r = CB_REASON_BN_EPSILON, what = "a batch-norm epsilon under CUDNN_BN_MIN_EPSILON" OWN_NCHW;
    else if (L->op == CB_OP_LRN && (L->p.lrn.size < CUDNN_LRN_MIN_N || L->p.lrn.size > CUDNN_LRN_MAX_N || L->p.lrn.k < CUDNN_LRN_MIN_K ||
                                    L->p.lrn.beta < CUDNN_LRN_MIN_BETA))
        r = CB_REASON_LRN_RANGE, what = "an LRN size, k or beta outside cuDNN's range" OWN_NCHW;
    else if (L->op == CB_OP_CONV && !conv_pads_fit(L, fmt & CB_FMT_NHWC))
        r = CB_REASON_ASYM_PADDING, what = "asymmetric padding, which cuDNN lacks" OWN_NCHW;
    if (r != CB_REASON_NONE) snprintf(why, n, "%s tensors: %s", fmt_label(fmt), what);
    return r;
}

static cb_status plan(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = cb_xcalloc(1, sizeof *l);
    b->priv = l;
    if (L->op == CB_OP_INPUT) return CB_OK;
    DNN_TRY(set4d(e, &l->yd, L->out));
    if (L->act == CB_ACT_RELU || L->op == CB_OP_RELU) {
        DNN_TRY(cudnnCreateActivationDescriptor(&l->act));
        DNN_TRY(cudnnSetActivationDescriptor(l->act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    float eps = L->op == CB_OP_BATCHNORM ? L->p.bn.eps : L->bn_eps;
    if (L->bn || L->op == CB_OP_BATCHNORM) {
        if (eps < CUDNN_BN_MIN_EPSILON && !native(e)) return decline(e, L, err, CB_REASON_BN_EPSILON, "a batch-norm epsilon under CUDNN_BN_MIN_EPSILON" OWN_NCHW);
        if (eps < CUDNN_BN_MIN_EPSILON) l->own[0] = l->own[1] = true;
        else {
            DNN_TRY(cudnnCreateTensorDescriptor(&l->bnd));
            DNN_TRY(cudnnDeriveBNTensorDescriptor(l->bnd, l->yd, CUDNN_BATCHNORM_SPATIAL));
        }
    }
    switch (L->op) {
    case CB_OP_CONV: {
        cb_status st = plan_conv(e, i, err);
        return st == CB_OK && !native(e) ? probe(e, i, err) : st;
    }
    case CB_OP_FC: {
        cb_status st = plan_fc(e, i, err);
        if (st != CB_OK) return st;
        break;
    }
    case CB_OP_POOL:
        return plan_pool(e, i, err);
    case CB_OP_LRN:
        if (L->p.lrn.size < CUDNN_LRN_MIN_N || L->p.lrn.size > CUDNN_LRN_MAX_N || L->p.lrn.k < CUDNN_LRN_MIN_K ||
            L->p.lrn.beta < CUDNN_LRN_MIN_BETA) {
            l->own[0] = l->own[1] = true;
            break;
        }
        DNN_TRY(cudnnCreateLRNDescriptor(&l->lrn));
        DNN_TRY(cudnnSetLRNDescriptor(l->lrn, (unsigned)L->p.lrn.size, L->p.lrn.alpha, L->p.lrn.beta, L->p.lrn.k));
        break;
    case CB_OP_SOFTMAX:
        DNN_TRY(set4d(e, &l->xd, (cb_shape){4, L->out.n, L->out.c * L->out.h * L->out.w, 1, 1}));
        break;
    default:
        break;
    }
    if (!native(e) && (l->own[0] || l->own[1])) return decline(e, L, err, CB_REASON_LRN_RANGE, "an LRN size, k or beta outside cuDNN's range" OWN_NCHW);
    return native(e) ? CB_OK : probe(e, i, err);
}

static void epilogue_forward(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    dnn_state *d = dnn(e);
    if (L->bn) {
        if (l->own[0] || !l->bnd) {
            cb_cuda_epilogue_forward(e, i, train);
            return;
        }
        if (train)
            cudnnBatchNormalizationForwardTraining(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, l->yd, b->pre, l->yd, b->y, l->bnd,
                                                   b->gamma, b->beta, 0.1, b->rmean, b->rvar, L->bn_eps, b->bn_mean, b->bn_invstd);
        else
            cudnnBatchNormalizationForwardInference(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, l->yd, b->pre, l->yd, b->y,
                                                    l->bnd, b->gamma, b->beta, b->rmean, b->rvar, L->bn_eps);
    }
    if (L->act == CB_ACT_RELU && !((cb_cuda_state *)e->state)->fused_relu[i])
        cudnnActivationForward(d->h, l->act, &one, l->yd, b->y, &zero, l->yd, b->y);
}

static uint64_t next_seed(cb_exec *e) { // the cuda backend's dropout seed sequence
    e->rng = e->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return e->rng;
}

// concat, sum, dropout, reshape of layer i on the storage (fmt != 0): the cuda backend's own ops,
// with NHWC's channel blocks (rows of N*H*W pixels) and bf16 elements
static void fmt_forward_op(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const void *x = e->lb[L->parents[0]].y;
    void *out = cb_exec_op_out(e, i);
    size_t n = (size_t)cb_shape_count(L->out), es = e->act_bytes;
    int64_t hw = L->out.h * L->out.w;
    switch (L->op) {
    case CB_OP_CONCAT: {
        int64_t off = 0;
        for (int j = 0; j < L->nparents; j++) {
            const cb_layer *P = &e->net->layers[L->parents[j]];
            if (is_nhwc(e)) cb_fmt_concat_copy(L->out.n * hw, L->out.c, P->out.c, off, 1, es, out, e->lb[L->parents[j]].y, 0);
            else cb_fmt_concat_copy(L->out.n, L->out.c, P->out.c, off, hw, es, out, e->lb[L->parents[j]].y, 0);
            off += P->out.c;
        }
        break;
    }
    case CB_OP_ADD:
        cudaMemcpyAsync(out, x, n * es, cudaMemcpyDeviceToDevice, 0);
        for (int j = 1; j < L->nparents; j++) cb_fmt_add(n, out, e->lb[L->parents[j]].y, is_bf16(e));
        break;
    case CB_OP_DROPOUT:
        if (train) cb_fmt_dropout_forward(n, L->p.dropout.keep, next_seed(e), x, b->aux, out, is_bf16(e));
        else cudaMemcpyAsync(out, x, n * es, cudaMemcpyDeviceToDevice, 0);
        break;
    case CB_OP_RESHAPE:
        cudaMemcpyAsync(out, x, n * es, cudaMemcpyDeviceToDevice, 0);
        break;
    default:
        break;
    }
}

static void forward(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    dnn_state *d = dnn(e);
    const float *x = e->lb[L->parents[0]].y;
    float *out = cb_exec_op_out(e, i);
    bool own = l->own[0];
    ((cb_cuda_state *)e->state)->fused_relu[i] = false;
    switch (L->op) {
    case CB_OP_CONV:
        if (own) cb_cuda_forward_op(e, i, train);
        else {
            const void *xc = x;
            if (l->xpad) {
                cb_fmt_window_nhwc(L->in.n, L->in.h, L->in.w, L->in.c, x, l->xs.h, l->xs.w, l->xs.c, l->xpad, is_bf16(e));
                xc = l->xpad;
            }
            if (l->blas[0]) conv_gemm(e, i, CB_PHASE_FORWARD, NULL);
            else cudnnConvolutionForward(d->h, &one, l->xd, xc, l->wd, dev_weights(e, i), l->cd[0], l->fwd, e->ws, b->ws[0], &zero, l->yd,
                                         out);
            if (b->b) bias_act(e, i, b->b, out);
        }
        break;
    case CB_OP_FC:
        if (own) cb_cuda_forward_op(e, i, train);
        else fc_blas(e, i, CB_PHASE_FORWARD);
        break;
    case CB_OP_POOL:
        if (own && native(e)) cb_cuda_forward_op(e, i, train);
        else run_pool(e, i, own, 0, NULL);
        break;
    case CB_OP_LRN:
        if (own) cb_cuda_forward_op(e, i, train);
        else cudnnLRNCrossChannelForward(d->h, l->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, l->yd, x, &zero, l->yd, out);
        break;
    case CB_OP_BATCHNORM:
        if (own || !l->bnd) cb_cuda_forward_op(e, i, train);
        else if (train)
            cudnnBatchNormalizationForwardTraining(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, l->yd, x, l->yd, out, l->bnd,
                                                   b->gamma, b->beta, 0.1, b->rmean, b->rvar, L->p.bn.eps, b->bn_mean, b->bn_invstd);
        else
            cudnnBatchNormalizationForwardInference(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, l->yd, x, l->yd, out, l->bnd,
                                                    b->gamma, b->beta, b->rmean, b->rvar, L->p.bn.eps);
        break;
    case CB_OP_RELU:
        cudnnActivationForward(d->h, l->act, &one, l->yd, x, &zero, l->yd, out);
        break;
    case CB_OP_SOFTMAX:
        cudnnSoftmaxForward(d->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, l->xd, x, &zero, l->xd, out);
        break;
    default: // concat, add, dropout, reshape: the own kernels
        if (native(e)) cb_cuda_forward_op(e, i, train);
        else fmt_forward_op(e, i, train);
        break;
    }
    epilogue_forward(e, i, train);
}

// relu's gradient with the own kernel (it reads y > 0 as the CPU reference does)
static void backward_epilogue(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    if (L->act == CB_ACT_RELU) cb_fmt_relu_backward((size_t)cb_shape_count(L->out), b->y, b->dy, b->dy, is_bf16(e));
    if (L->bn) {
        if (l->own[1] || !l->bnd) {
            cb_bn_params bp;
            cb_bn_params_of(L, &bp);
            cb_cuda_bn_backward(&bp, b->pre, b->gamma, b->bn_mean, b->bn_invstd, b->dy, b->dpre, b->dgamma, b->dbeta);
        } else
            cudnnBatchNormalizationBackward(dnn(e)->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, l->yd, b->pre, l->yd,
                                            b->dy, l->yd, b->dpre, l->bnd, b->gamma, b->dgamma, b->dbeta, L->bn_eps,
                                            b->bn_mean, b->bn_invstd);
    }
}

// the gradients of concat, sum, dropout, relu, softmax (passed through) and reshape on the storage
static void fmt_backward_data(cb_exec *e, int i, int slot, void *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const void *dy = cb_exec_op_grad(e, i);
    size_t nin = (size_t)cb_shape_count(e->net->layers[L->parents[slot]].out), es = e->act_bytes;
    switch (L->op) {
    case CB_OP_CONCAT: {
        int64_t hw = L->out.h * L->out.w, off = 0, c = e->net->layers[L->parents[slot]].out.c;
        for (int j = 0; j < slot; j++) off += e->net->layers[L->parents[j]].out.c;
        if (is_nhwc(e)) cb_fmt_concat_copy(L->out.n * hw, L->out.c, c, off, 1, es, dx, dy, 1);
        else cb_fmt_concat_copy(L->out.n, L->out.c, c, off, hw, es, dx, dy, 1);
        break;
    }
    case CB_OP_DROPOUT:
        cb_fmt_dropout_backward(nin, b->aux, dy, dx, is_bf16(e));
        break;
    case CB_OP_RELU:
        cb_fmt_relu_backward(nin, b->y, dy, dx, is_bf16(e));
        break;
    case CB_OP_ADD:
    case CB_OP_SOFTMAX:
    case CB_OP_RESHAPE:
        cudaMemcpyAsync(dx, dy, nin * es, cudaMemcpyDeviceToDevice, 0);
        break;
    default:
        break;
    }
}

// standalone batch norm on cuDNN (fmt != 0): dx, dgamma and dbeta in one call
static void bn_backward(cb_exec *e, int i, void *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    cudnnBatchNormalizationBackward(dnn(e)->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, l->yd, e->lb[L->parents[0]].y,
                                    l->yd, cb_exec_op_grad(e, i), l->yd, dx, l->bnd, b->gamma, b->dgamma, b->dbeta, L->p.bn.eps,
                                    b->bn_mean, b->bn_invstd);
}

static void backward_data(cb_exec *e, int i, int slot, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    dnn_state *d = dnn(e);
    const float *dy = cb_exec_op_grad(e, i);
    const float *x = e->lb[L->parents[slot]].y;
    switch (L->op) {
    case CB_OP_CONV:
        if (l->own[1]) cb_cuda_backward_data(e, i, slot, dx);
        else if (l->blas[1]) conv_gemm(e, i, CB_PHASE_BWD_DATA, dx);
        else if (l->dxpad) {
            cudnnConvolutionBackwardData(d->h, &one, l->wd, dev_weights(e, i), l->yd, dy, l->cd[1], l->bwd_data, e->ws, b->ws[1],
                                         &zero, l->xd, l->dxpad);
            cb_fmt_window_nhwc(L->in.n, l->xs.h, l->xs.w, l->xs.c, l->dxpad, L->in.h, L->in.w, L->in.c, dx, is_bf16(e));
        } else cudnnConvolutionBackwardData(d->h, &one, l->wd, dev_weights(e, i), l->yd, dy, l->cd[1], l->bwd_data, e->ws, b->ws[1],
                                            &zero, l->xd, dx);
        break;
    case CB_OP_FC:
        if (l->own[1]) cb_cuda_backward_data(e, i, slot, dx);
        else fc_blas_data(e, i, dy, dx);
        break;
    case CB_OP_POOL:
        if (l->own[1] && native(e)) cb_cuda_backward_data(e, i, slot, dx);
        else run_pool(e, i, l->own[1], 1, dx);
        break;
    case CB_OP_LRN:
        if (l->own[1]) cb_cuda_backward_data(e, i, slot, dx);
        else cudnnLRNCrossChannelBackward(d->h, l->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, l->yd, cb_exec_op_out(e, i), l->yd, dy,
                                          l->yd, x, &zero, l->yd, dx);
        break;
    case CB_OP_BATCHNORM:
        if (native(e)) cb_cuda_backward_data(e, i, slot, dx);
        else bn_backward(e, i, dx);
        break;
    default: // relu, dropout, concat, add, softmax, reshape
        if (native(e)) cb_cuda_backward_data(e, i, slot, dx);
        else fmt_backward_data(e, i, slot, dx);
        break;
    }
}

static void backward_filter(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    dnn_state *d = dnn(e);
    const float *dy = cb_exec_op_grad(e, i);
    const float *x = e->lb[L->parents[0]].y;
    if (L->op == CB_OP_CONV && !l->own[2]) {
        // a padded input was padded by the forward pass
        if (l->blas[2]) conv_gemm(e, i, CB_PHASE_BWD_FILTER, NULL);
        else cudnnConvolutionBackwardFilter(d->h, &one, l->xd, l->xpad ? l->xpad : x, l->yd, dy, l->cd[2], l->bwd_filter, e->ws, b->ws[2],
                                       &zero, l->wd, dev_wgrad(e, i));
        finish_wgrad(e, i);
        if (b->db && native(e)) cudnnConvolutionBackwardBias(d->h, &one, l->yd, dy, &zero, l->bd, b->db);
        else if (b->db) fmt_bias_grad(e, i, dy, b->db);
    } else if (L->op == CB_OP_FC && !l->own[2]) {
        fc_blas(e, i, CB_PHASE_BWD_FILTER);
    } else if (L->op == CB_OP_BATCHNORM && !native(e)) {
        // backward_data computes dgamma and dbeta with dx; without an input gradient, here (dx to scratch)
        if (!e->lb[L->parents[0]].dy) bn_backward(e, i, e->scratch);
    } else cb_cuda_backward_filter(e, i);
}

// ---- the boundary: host fp32 NCHW and the criterion's fp32 (N, K) against the storage ----------
// Per-example blocks are contiguous in both layouts, so a tensor moves through the fp32 stage in
// chunks of whole examples.
static void act_upload(cb_exec *e, int layer, void *dst, const float *host) {
    cb_shape s = e->net->layers[layer].out;
    dnn_state *d = dnn(e);
    if (native(e)) {
        cb_cuda_upload(e, dst, host, (size_t)cb_shape_count(s) * 4);
        return;
    }
    int64_t per = s.c * s.h * s.w, chunk = d->stage_elems / per;
    for (int64_t n0 = 0; n0 < s.n; n0 += chunk) {
        int64_t m = s.n - n0 < chunk ? s.n - n0 : chunk;
        cudaMemcpy(d->stage, host + n0 * per, (size_t)(m * per) * 4, cudaMemcpyHostToDevice);
        cb_fmt_convert(m, s.c, s.h, s.w, d->stage, 0, (char *)dst + (size_t)(n0 * per) * e->act_bytes, d->fmt);
    }
}
static void act_download(cb_exec *e, int layer, float *host, const void *src) {
    cb_shape s = e->net->layers[layer].out;
    dnn_state *d = dnn(e);
    if (native(e)) {
        cb_cuda_download(e, host, src, (size_t)cb_shape_count(s) * 4);
        return;
    }
    int64_t per = s.c * s.h * s.w, chunk = d->stage_elems / per;
    for (int64_t n0 = 0; n0 < s.n; n0 += chunk) {
        int64_t m = s.n - n0 < chunk ? s.n - n0 : chunk;
        cb_fmt_convert(m, s.c, s.h, s.w, (const char *)src + (size_t)(n0 * per) * e->act_bytes, d->fmt, d->stage, 0);
        cudaMemcpy(host + n0 * per, d->stage, (size_t)(m * per) * 4, cudaMemcpyDeviceToHost);
    }
}
static void act_fill(cb_exec *e, void *dst, float v, size_t n) {
    if (native(e)) cb_cuda_fill_(e, dst, v, n);
    else cb_fmt_fill(n, dst, v, is_bf16(e));
}
static void act_add(cb_exec *e, float *dst, const float *src, size_t n) {
    if (native(e)) cb_cuda_add_(e, dst, src, n);
    else cb_fmt_add(n, dst, src, is_bf16(e));
}

// The criterion computes in fp32 on (N, K) logits or probabilities, K in NCHW order (c, h, w) as
// the reference's; the engine's prob buffer is fp32 NCHW. Under another storage the last layer's
// output converts (with its shape: a spatial last layer under NHWC reorders) on the way in and the
// gradient on the way out. x is the last layer's y; prob is e->prob or, after a Softmax layer,
// that layer's y.
static void crit_softmax(cb_exec *e, const float *x, float *prob, int n, int k) {
    if (!native(e)) {
        cb_shape s = e->net->layers[e->net->nlayers - 1].out;
        cb_fmt_convert(s.n, s.c, s.h, s.w, x, dnn(e)->fmt, prob, 0);
        cb_cuda_softmax(n, k, prob, prob); // in place: each element is read before the same thread writes it
    } else cb_cuda_softmax(n, k, x, prob);
}
static const float *crit_prob(cb_exec *e, const float *prob, int n, int k) {
    if (native(e) || prob == e->prob) return prob;
    cb_shape s = e->net->layers[e->net->nlayers - 1].out;
    cb_fmt_convert(s.n, s.c, s.h, s.w, prob, dnn(e)->fmt, dnn(e)->crit, 0);
    return dnn(e)->crit;
}
static double crit_xent_forward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k) {
    return cb_cuda_xent_forward_(e, crit_prob(e, prob, n, k), labels, n, k);
}
static void crit_xent_backward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k, float *dlogits) {
    if (native(e)) {
        cb_cuda_xent_backward(n, k, prob, labels, dlogits);
        return;
    }
    // fp32 NCHW gradient in crit (in place when prob was converted there: elementwise), then to the storage
    cb_shape s = e->net->layers[e->net->nlayers - 1].out;
    cb_cuda_xent_backward(n, k, crit_prob(e, prob, n, k), labels, dnn(e)->crit);
    cb_fmt_convert(s.n, s.c, s.h, s.w, dnn(e)->crit, 0, dlogits, dnn(e)->fmt);
}

#define DNN_BACKEND(NAME, INIT)                                                                                        \
    {.name = NAME, .device = true, .init = INIT, .destroy = destroy, .alloc = cb_cuda_alloc, .release = cb_cuda_release, \
     .upload = cb_cuda_upload, .download = cb_cuda_download, .timer_start = cb_cuda_timer_start,                      \
     .timer_stop = cb_cuda_timer_stop, .supports = supports, .plan = plan, .forward = forward,                            \
     .backward_epilogue = backward_epilogue, .backward_data = backward_data, .backward_filter = backward_filter,      \
     .add = act_add, .fill = cb_cuda_fill_, .sgd = cb_cuda_sgd_, .xent_forward = crit_xent_forward,                  \
     .xent_backward = crit_xent_backward, .softmax = crit_softmax, .act_upload = act_upload,                           \
     .act_download = act_download, .act_fill = act_fill}

const cb_backend cb_backend_cudnn = DNN_BACKEND("cudnn", init_cudnn);
const cb_backend cb_backend_auto = DNN_BACKEND("auto", init_auto);
