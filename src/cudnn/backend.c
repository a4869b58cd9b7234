// The "cudnn" backend (cuDNN 9 legacy API for convolution, pooling, LRN, batch norm, activation,
// softmax; cuBLAS for FC; convbench's own kernels for the rest) and the "auto" backend: the same
// table, with each convolution phase measured in plan() against convbench's own kernel and the
// faster kept, and each max or average pool measured the same way (forward and backward as a pair).
// Layers cuDNN cannot express (asymmetric padding, LRN windows over 16, batch-norm
// eps under CUDNN_BN_MIN_EPSILON) fall back to the own kernels and say so in their algorithm name.
// Tensors are fp32 NCHW: --precision tf32 lets cuDNN and cuBLAS use TF32 tensor cores; bf16 does
// the same for them (their bf16 paths need bf16 tensors) while own kernels may compute in bf16.
#include "cuda/backend.h"
#include "cuda/launch.h"
#include "core/net.h"
#include "gpu/gpu.h"

#include <cublas_v2.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum pool_choice { POOL_MEASURE, POOL_OWN, POOL_CUDNN } pool_choice;

typedef struct dnn_state {
    cudnnHandle_t h;
    cublasHandle_t blas;
    bool autotune;               // "auto": measure own vs cuDNN per convolution phase and pool layer
    pool_choice pool;            // "auto": $CONVBENCH_AUTO_POOL=own|cudnn forces the pool layers' choice
    cudnnMathType_t math;
} dnn_state;

typedef struct dnn_layer {
    bool own[CB_PHASE_COUNT];    // this phase runs convbench's own kernel
    cudnnTensorDescriptor_t xd, yd, bd, bnd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd[CB_PHASE_COUNT];
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    cudnnPoolingDescriptor_t pd;
    cudnnLRNDescriptor_t lrn;
    cudnnActivationDescriptor_t act;
} dnn_layer;

static const float one = 1.f, zero = 0.f;
static dnn_state *dnn(const cb_exec *e) { return ((cb_cuda_state *)e->state)->lib; }
static dnn_layer *lay(const cb_exec *e, int i) { return e->lb[i].priv; }

#define DNN_TRY(call)                                                                                                  \
    do {                                                                                                               \
        cudnnStatus_t st_ = (call);                                                                                    \
        if (st_ != CUDNN_STATUS_SUCCESS)                                                                               \
            return cb_fail(err, CB_STATUS_DEVICE, e->net->path, L ? L->name : NULL, "%s: %s", #call,                  \
                           cudnnGetErrorString(st_));                                                                  \
    } while (0)

static cb_status init_common(cb_exec *e, cb_error *err, bool autotune) {
    const cb_layer *L = NULL;
    // tensors are fp32 in memory: under bf16, cuDNN and cuBLAS compute with TF32 tensor cores (at
    // least bf16's precision) and own kernels may compute in bf16 (src/cuda/conv_algo.h)
    if (e->opts.precision == CB_PREC_BF16 && e->opts.verbose > 0)
        fprintf(stderr, "note: backend %s, bf16: cuDNN and cuBLAS layers compute in tf32 on fp32 tensors\n", e->be->name);
    if (e->opts.layout != CB_LAYOUT_NCHW)
        return cb_fail(err, CB_STATUS_UNSUPPORTED, "--layout", NULL, "backend %s: NCHW only so far", e->be->name);
    // a test's way to run both of auto's pooling paths whatever the timings say
    const char *force = autotune ? getenv("CONVBENCH_AUTO_POOL") : NULL;
    pool_choice pool = POOL_MEASURE;
    if (force && *force) {
        if (strcmp(force, "own") == 0) pool = POOL_OWN;
        else if (strcmp(force, "cudnn") == 0) pool = POOL_CUDNN;
        else return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_AUTO_POOL", NULL, "'%s' is not own or cudnn", force);
    }
    cb_status st = cb_cuda_init_state(e, err);
    if (st != CB_OK) return st;
    dnn_state *d = cb_xcalloc(1, sizeof *d);
    ((cb_cuda_state *)e->state)->lib = d;
    d->autotune = autotune;
    d->pool = pool;
    bool tensor_ops = e->opts.precision != CB_PREC_FP32;
    d->math = tensor_ops ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    DNN_TRY(cudnnCreate(&d->h));
    if (cublasCreate(&d->blas) != CUBLAS_STATUS_SUCCESS)
        return cb_fail(err, CB_STATUS_DEVICE, "--backend", NULL, "cublasCreate failed");
    cublasSetMathMode(d->blas, tensor_ops ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
    return CB_OK;
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
        free(l);
        e->lb[i].priv = NULL;
    }
    dnn_state *d = s->lib;
    if (d) {
        if (d->h) cudnnDestroy(d->h);
        if (d->blas) cublasDestroy(d->blas);
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

static cudnnStatus_t set4d(cudnnTensorDescriptor_t *d, cb_shape s) {
    cudnnStatus_t st = *d ? CUDNN_STATUS_SUCCESS : cudnnCreateTensorDescriptor(d);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    return cudnnSetTensor4dDescriptor(*d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)s.n, (int)s.c, (int)s.h, (int)s.w);
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

static cb_status plan_conv(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_state *d = dnn(e);
    dnn_layer *l = lay(e, i);
    const cb_window *w = &L->p.conv.win;
    int cg = L->p.conv.cin;
    DNN_TRY(set4d(&l->xd, L->in));
    DNN_TRY(set4d(&l->yd, L->out));
    DNN_TRY(cudnnCreateFilterDescriptor(&l->wd));
    DNN_TRY(cudnnSetFilter4dDescriptor(l->wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, L->p.conv.k, cg, w->r, w->s));
    if (L->p.conv.bias) DNN_TRY(set4d(&l->bd, (cb_shape){4, 1, L->p.conv.k, 1, 1}));
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        DNN_TRY(cudnnCreateConvolutionDescriptor(&l->cd[p]));
        DNN_TRY(cudnnSetConvolution2dDescriptor(l->cd[p], w->pad_top, w->pad_left, w->stride_h, w->stride_w, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        DNN_TRY(cudnnSetConvolutionGroupCount(l->cd[p], L->p.conv.groups));
        DNN_TRY(cudnnSetConvolutionMathType(l->cd[p], d->math));
    }
    int on, oc, oh, ow;
    DNN_TRY(cudnnGetConvolution2dForwardOutputDim(l->cd[0], l->xd, l->wd, &on, &oc, &oh, &ow));
    if (oh != L->out.h || ow != L->out.w) { // trailing pads differ from leading ones: cuDNN has no such padding
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            bool needed = p == 0 || (p == 1 && e->lb[L->parents[0]].dy) || (p == 2 && b->dw);
            if (!needed) continue;
            l->own[p] = true;
            cb_cuda_conv_choose(e, i, (cb_phase)p, d->autotune);
            char nm[48];
            snprintf(nm, sizeof nm, "%s", b->algo[p]);
            snprintf(b->algo[p], sizeof b->algo[p], "own %.24s (asym. pad)", nm);
        }
        return CB_OK;
    }
    size_t wsz = 0;
    void *ws = find_ws(e, &wsz);
    const float *x = e->lb[L->parents[0]].y;
    float *y = cb_exec_op_out(e, i), *dx = e->lb[L->parents[0]].dy;
    double dnn_ms[CB_PHASE_COUNT] = {-1, -1, -1};
    enum { NA = 8 };
    int ret = 0;
    cudnnStatus_t sts[NA];
    int algs[NA];
    size_t mems[NA];
    {
        cudnnConvolutionFwdAlgoPerf_t pf[NA];
        cudnnStatus_t st = cudnnFindConvolutionForwardAlgorithmEx(d->h, l->xd, x, l->wd, b->w, l->cd[0], l->yd, y, NA, &ret, pf, ws, wsz);
        for (int j = 0; j < ret; j++) sts[j] = pf[j].status, algs[j] = pf[j].algo, mems[j] = pf[j].memory;
        note_skips(e, L, "forward", ret, sts, algs, mems);
        for (int j = 0; st == CUDNN_STATUS_SUCCESS && j < ret; j++)
            if (pf[j].status == CUDNN_STATUS_SUCCESS && pf[j].memory <= e->opts.workspace_limit) {
                l->fwd = pf[j].algo;
                b->ws[0] = pf[j].memory;
                dnn_ms[0] = pf[j].time;
                cudnnSetConvolutionMathType(l->cd[0], pf[j].mathType);
                snprintf(b->algo[0], sizeof b->algo[0], "%s", algo_name(fwd_name, 8, pf[j].algo));
                break;
            }
    }
    if (dx) {
        cudnnConvolutionBwdDataAlgoPerf_t pf[NA];
        cudnnStatus_t st = cudnnFindConvolutionBackwardDataAlgorithmEx(d->h, l->wd, b->w, l->yd, y, l->cd[1], l->xd, dx, NA, &ret, pf, ws, wsz);
        for (int j = 0; j < ret; j++) sts[j] = pf[j].status, algs[j] = pf[j].algo, mems[j] = pf[j].memory;
        note_skips(e, L, "backward-data", ret, sts, algs, mems);
        for (int j = 0; st == CUDNN_STATUS_SUCCESS && j < ret; j++)
            if (pf[j].status == CUDNN_STATUS_SUCCESS && pf[j].memory <= e->opts.workspace_limit) {
                l->bwd_data = pf[j].algo;
                b->ws[1] = pf[j].memory;
                dnn_ms[1] = pf[j].time;
                cudnnSetConvolutionMathType(l->cd[1], pf[j].mathType);
                snprintf(b->algo[1], sizeof b->algo[1], "%s", algo_name(bwd_data_name, 6, pf[j].algo));
                break;
            }
    }
    if (b->dw) {
        cudnnConvolutionBwdFilterAlgoPerf_t pf[NA];
        cudnnStatus_t st = cudnnFindConvolutionBackwardFilterAlgorithmEx(d->h, l->xd, x, l->yd, y, l->cd[2], l->wd, b->dw, NA, &ret, pf, ws, wsz);
        for (int j = 0; j < ret; j++) sts[j] = pf[j].status, algs[j] = pf[j].algo, mems[j] = pf[j].memory;
        note_skips(e, L, "backward-filter", ret, sts, algs, mems);
        for (int j = 0; st == CUDNN_STATUS_SUCCESS && j < ret; j++)
            if (pf[j].status == CUDNN_STATUS_SUCCESS && pf[j].memory <= e->opts.workspace_limit) {
                l->bwd_filter = pf[j].algo;
                b->ws[2] = pf[j].memory;
                dnn_ms[2] = pf[j].time;
                cudnnSetConvolutionMathType(l->cd[2], pf[j].mathType);
                snprintf(b->algo[2], sizeof b->algo[2], "%s", algo_name(bwd_filter_name, 7, pf[j].algo));
                break;
            }
    }
    cudaFree(ws);
    cudaGetLastError();
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        bool needed = p == 0 || (p == 1 && dx) || (p == 2 && b->dw);
        if (!needed) continue;
        char dnn_name[48];
        size_t dnn_ws = b->ws[p];
        snprintf(dnn_name, sizeof dnn_name, "%s", b->algo[p]);
        if (dnn_ms[p] < 0) { // no cuDNN algorithm fits: an own kernel
            l->own[p] = true;
            cb_cuda_conv_choose(e, i, (cb_phase)p, d->autotune);
            snprintf(dnn_name, sizeof dnn_name, "%s", b->algo[p]);
            snprintf(b->algo[p], sizeof b->algo[p], "own %.20s (no cuDNN fits)", dnn_name);
        } else if (d->autotune) {
            double own = cb_cuda_conv_choose(e, i, (cb_phase)p, true);
            if (own >= 0 && own < dnn_ms[p]) {
                char nm[48];
                l->own[p] = true;
                snprintf(nm, sizeof nm, "%s", b->algo[p]);
                snprintf(b->algo[p], sizeof b->algo[p], "own %.20s %.2f<%.2f", nm, own, dnn_ms[p]);
            } else {
                b->ws[p] = dnn_ws;
                snprintf(b->algo[p], sizeof b->algo[p], "%.24s %.2f<%.2f", dnn_name, dnn_ms[p], own);
            }
        }
    }
    return CB_OK;
}

// fully connected layers on cuBLAS: y (N,K) = x (N,C) w (K,C)^T + b; dx = dy w; dw = dy^T x
static void fc_blas_data(cb_exec *e, int i, const float *dy, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    int n = (int)L->in.n, c = (int)L->in.c, k = L->p.fc.k;
    cublasSgemm(dnn(e)->blas, CUBLAS_OP_N, CUBLAS_OP_N, c, n, k, &one, e->lb[i].w, c, dy, k, &zero, dx, c);
}
static void fc_blas(cb_exec *e, int i, cb_phase ph) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_state *d = dnn(e);
    int n = (int)L->in.n, c = (int)L->in.c, k = L->p.fc.k;
    const float *x = e->lb[L->parents[0]].y, *dy = cb_exec_op_grad(e, i) ? cb_exec_op_grad(e, i) : cb_exec_op_out(e, i);
    if (ph == CB_PHASE_FORWARD) {
        float *out = cb_exec_op_out(e, i);
        cublasSgemm(d->blas, CUBLAS_OP_T, CUBLAS_OP_N, k, n, c, &one, b->w, c, x, c, &zero, out, k);
        if (b->b) cb_cuda_bias_add(n, k, 1, b->b, out);
    } else if (ph == CB_PHASE_BWD_DATA) {
        fc_blas_data(e, i, dy, e->lb[L->parents[0]].dy);
    } else {
        cublasSgemm(d->blas, CUBLAS_OP_N, CUBLAS_OP_T, c, k, n, &one, x, c, dy, k, &zero, b->dw, c);
        if (b->db) cb_cuda_bias_grad(n, k, 1, dy, b->db);
    }
}

// cuBLAS for every phase; "auto" races it against the best own algorithm (a 1x1 convolution)
static void plan_fc(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    const char *blas = e->opts.precision == CB_PREC_FP32 ? "cublasSgemm" : "cublasSgemm tf32";
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        bool needed = p == 0 || (p == 1 && e->lb[L->parents[0]].dy) || (p == 2 && b->dw);
        snprintf(b->algo[p], sizeof b->algo[p], "%s", blas);
        if (!needed || !dnn(e)->autotune) continue;
        double ms = 0;
        for (int r = 0; r < 4; r++) {
            if (r == 1) cb_cuda_timer_start(e);
            fc_blas(e, i, (cb_phase)p);
        }
        ms = cb_cuda_timer_stop(e) / 3;
        double own = cb_cuda_conv_choose(e, i, (cb_phase)p, true);
        char nm[48];
        snprintf(nm, sizeof nm, "%s", b->algo[p]);
        if (own >= 0 && own < ms) {
            l->own[p] = true;
            snprintf(b->algo[p], sizeof b->algo[p], "own %.20s %.2f<%.2f", nm, own, ms);
        } else {
            b->ws[p] = 0;
            snprintf(b->algo[p], sizeof b->algo[p], "%s %.2f<%.2f", blas, ms, own);
        }
    }
}

// One run of pool layer i's forward (ph 0) or backward (ph 1), on cuDNN or the own kernels. The
// layer's output gradient may not be allocated yet: then y (the same shape) stands in for it, as
// in time_conv.
static cudnnStatus_t run_pool(cb_exec *e, int i, bool own, int ph) {
    const cb_layer *L = &e->net->layers[i];
    dnn_layer *l = lay(e, i);
    cb_pool_params pp;
    cb_cuda_pool_params_of(L, &pp);
    const float *x = e->lb[L->parents[0]].y;           // (N, C, H, W)
    float *y = cb_exec_op_out(e, i);                     // (N, C, P, Q)
    float *dx = e->lb[L->parents[0]].dy;                 // (N, C, H, W)
    const float *dy = cb_exec_op_grad(e, i) ? cb_exec_op_grad(e, i) : y;
    if (own && ph == 0) cb_cuda_pool_forward(&pp, x, y, e->lb[i].aux);
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
        cudnnStatus_t st = run_pool(e, i, own, ph);
        cb_cuda_timer_start(e);
        for (int r = 0; r < 3; r++)
            if (st == CUDNN_STATUS_SUCCESS) st = run_pool(e, i, own, ph);
        double t = cb_cuda_timer_stop(e) / 3;
        if (st != CUDNN_STATUS_SUCCESS || cudaGetLastError() != cudaSuccess) return false;
        ms[ph] = t;
    }
    return true;
}

// A pool layer runs on cuDNN, or on the own kernels where cuDNN cannot express its padding.
// "auto" times both, forward plus backward when the pass trains (the own backward needs the own
// forward's argmax: the two phases go together), and keeps the faster; each phase's algorithm
// name says which and the two totals: "own pool f+b 0.40<1.88", "cudnn pool 0.12<0.30".
static cb_status plan_pool(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_state *d = dnn(e);
    dnn_layer *l = lay(e, i);
    const cb_window *w = &L->p.pool.win;
    bool bwd = e->lb[L->parents[0]].dy != NULL;
    DNN_TRY(set4d(&l->xd, L->in));
    DNN_TRY(cudnnCreatePoolingDescriptor(&l->pd));
    DNN_TRY(cudnnSetPooling2dDescriptor(l->pd, L->p.pool.avg ? CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING : CUDNN_POOLING_MAX_DETERMINISTIC,
                                        CUDNN_NOT_PROPAGATE_NAN, w->r, w->s, w->pad_top, w->pad_left, w->stride_h, w->stride_w));
    int n, c, h, ww;
    DNN_TRY(cudnnGetPooling2dForwardOutputDim(l->pd, l->xd, &n, &c, &h, &ww));
    char name[48] = "";
    if (h != L->out.h || ww != L->out.w) { // trailing pads differ from leading ones: cuDNN has no such padding
        l->own[0] = l->own[1] = true;
        snprintf(name, sizeof name, "own pool (asym. pad)");
    } else if (d->autotune && d->pool != POOL_MEASURE) {
        l->own[0] = l->own[1] = d->pool == POOL_OWN;
        snprintf(name, sizeof name, "%s pool (forced)", l->own[0] ? "own" : "cudnn");
    } else if (d->autotune) {
        double own_ms[2], dnn_ms[2];
        bool own_ok = time_pool(e, i, true, bwd, own_ms), dnn_ok = time_pool(e, i, false, bwd, dnn_ms);
        double own = own_ok ? own_ms[0] + (bwd ? own_ms[1] : 0) : -1, dnn = dnn_ok ? dnn_ms[0] + (bwd ? dnn_ms[1] : 0) : -1;
        l->own[0] = l->own[1] = own_ok && (!dnn_ok || own < dnn);
        snprintf(name, sizeof name, "%s pool%s %.2f<%.2f", l->own[0] ? "own" : "cudnn", bwd ? " f+b" : "",
                 l->own[0] ? own : dnn, l->own[0] ? dnn : own);
    }
    for (int p = 0; p < (bwd ? 2 : 1); p++) snprintf(b->algo[p], sizeof b->algo[p], "%s", name);
    return CB_OK;
}

static cb_status plan(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = cb_xcalloc(1, sizeof *l);
    b->priv = l;
    if (L->op == CB_OP_INPUT) return CB_OK;
    DNN_TRY(set4d(&l->yd, L->out));
    if (L->act == CB_ACT_RELU || L->op == CB_OP_RELU) {
        DNN_TRY(cudnnCreateActivationDescriptor(&l->act));
        DNN_TRY(cudnnSetActivationDescriptor(l->act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    float eps = L->op == CB_OP_BATCHNORM ? L->p.bn.eps : L->bn_eps;
    if (L->bn || L->op == CB_OP_BATCHNORM) {
        if (eps < CUDNN_BN_MIN_EPSILON) l->own[0] = l->own[1] = true;
        else {
            DNN_TRY(cudnnCreateTensorDescriptor(&l->bnd));
            DNN_TRY(cudnnDeriveBNTensorDescriptor(l->bnd, l->yd, CUDNN_BATCHNORM_SPATIAL));
        }
    }
    switch (L->op) {
    case CB_OP_CONV:
        return plan_conv(e, i, err);
    case CB_OP_FC:
        plan_fc(e, i);
        break;
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
        DNN_TRY(set4d(&l->xd, (cb_shape){4, L->out.n, L->out.c * L->out.h * L->out.w, 1, 1}));
        break;
    default:
        break;
    }
    return CB_OK;
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
            cudnnConvolutionForward(d->h, &one, l->xd, x, l->wd, b->w, l->cd[0], l->fwd, e->ws, b->ws[0], &zero, l->yd, out);
            if (b->b) cudnnAddTensor(d->h, &one, l->bd, b->b, &one, l->yd, out);
        }
        break;
    case CB_OP_FC:
        if (own) cb_cuda_forward_op(e, i, train);
        else fc_blas(e, i, CB_PHASE_FORWARD);
        break;
    case CB_OP_POOL:
        if (own) cb_cuda_forward_op(e, i, train);
        else cudnnPoolingForward(d->h, l->pd, &one, l->xd, x, &zero, l->yd, out);
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
        cb_cuda_forward_op(e, i, train);
        break;
    }
    epilogue_forward(e, i, train);
}

// relu's gradient with the own kernel (it reads y > 0 as the CPU reference does)
static void backward_epilogue(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    if (L->act == CB_ACT_RELU) cb_cuda_relu_backward((size_t)cb_shape_count(L->out), b->y, b->dy, b->dy);
    if (L->bn) {
        if (l->own[1] || !l->bnd) {
            cb_bn_params bp = {(int)L->out.n, (int)L->out.c, (int)L->out.h, (int)L->out.w, L->bn_eps};
            cb_cuda_bn_backward(&bp, b->pre, b->gamma, b->bn_mean, b->bn_invstd, b->dy, b->dpre, b->dgamma, b->dbeta);
        } else
            cudnnBatchNormalizationBackward(dnn(e)->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, l->yd, b->pre, l->yd,
                                            b->dy, l->yd, b->dpre, l->bnd, b->gamma, b->dgamma, b->dbeta, L->bn_eps,
                                            b->bn_mean, b->bn_invstd);
    }
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
        else cudnnConvolutionBackwardData(d->h, &one, l->wd, b->w, l->yd, dy, l->cd[1], l->bwd_data, e->ws, b->ws[1], &zero, l->xd, dx);
        break;
    case CB_OP_FC:
        if (l->own[1]) cb_cuda_backward_data(e, i, slot, dx);
        else fc_blas_data(e, i, dy, dx);
        break;
    case CB_OP_POOL:
        if (l->own[1]) cb_cuda_backward_data(e, i, slot, dx);
        else cudnnPoolingBackward(d->h, l->pd, &one, l->yd, cb_exec_op_out(e, i), l->yd, dy, l->xd, x, &zero, l->xd, dx);
        break;
    case CB_OP_LRN:
        if (l->own[1]) cb_cuda_backward_data(e, i, slot, dx);
        else cudnnLRNCrossChannelBackward(d->h, l->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, l->yd, cb_exec_op_out(e, i), l->yd, dy,
                                          l->yd, x, &zero, l->yd, dx);
        break;
    default: // standalone batch norm, relu, dropout, concat, add, softmax, reshape
        cb_cuda_backward_data(e, i, slot, dx);
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
        cudnnConvolutionBackwardFilter(d->h, &one, l->xd, x, l->yd, dy, l->cd[2], l->bwd_filter, e->ws, b->ws[2], &zero, l->wd, b->dw);
        if (b->db) cudnnConvolutionBackwardBias(d->h, &one, l->yd, dy, &zero, l->bd, b->db);
    } else if (L->op == CB_OP_FC && !l->own[2]) {
        fc_blas(e, i, CB_PHASE_BWD_FILTER);
    } else cb_cuda_backward_filter(e, i);
}

#define DNN_BACKEND(NAME, INIT)                                                                                        \
    {.name = NAME, .device = true, .init = INIT, .destroy = destroy, .alloc = cb_cuda_alloc, .release = cb_cuda_release, \
     .upload = cb_cuda_upload, .download = cb_cuda_download, .timer_start = cb_cuda_timer_start,                      \
     .timer_stop = cb_cuda_timer_stop, .supports = NULL, .plan = plan, .forward = forward,                            \
     .backward_epilogue = backward_epilogue, .backward_data = backward_data, .backward_filter = backward_filter,      \
     .add = cb_cuda_add_, .fill = cb_cuda_fill_, .sgd = cb_cuda_sgd_, .xent_forward = cb_cuda_xent_forward_,          \
     .xent_backward = cb_cuda_xent_backward_, .softmax = cb_cuda_softmax_}

const cb_backend cb_backend_cudnn = DNN_BACKEND("cudnn", init_cudnn);
const cb_backend cb_backend_auto = DNN_BACKEND("auto", init_auto);
