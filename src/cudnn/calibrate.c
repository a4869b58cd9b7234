// GPU calibration: the measurements behind convbench calibrate --backend cuda|cudnn
// (src/cudnn/calibrate.h). Every measurement times calls queued behind another one, as convbench
// profile and fullpass see a layer inside a pass, so the fixed costs the model fits (cuDNN's host
// work where it is the slower side, the GPU's own fixed costs) are the ones the profiles contain,
// without the launch latency from an idle GPU that a pass hides (timing: "stream" in the entry).
// By default (--cache step, "cache": "step") each call is timed once more in the cache state a
// step leaves it (the L2 flushed, its input written again) and keeps the larger median (time_call_in).
#include "cudnn/calibrate.h"
#include "cudnn/graph.h"
#include "bench/stats.h"
#include "core/net.h"
#include "core/rng.h"
#include "cuda/conv_algo.h"
#include "cuda/launch.h"
#include "gpu/gpu.h"
#include "storage/format.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// as src/cudnn/plan.c names them (the profile's algorithm column)
static const char *const FWD_NAMES[] = {"FWD_IMPLICIT_GEMM", "FWD_IMPLICIT_PRECOMP_GEMM", "FWD_GEMM", "FWD_DIRECT",
                                        "FWD_FFT", "FWD_FFT_TILING", "FWD_WINOGRAD", "FWD_WINOGRAD_NONFUSED"};
static const char *const BWD_DATA_NAMES[] = {"BWD_DATA_ALGO_0", "BWD_DATA_ALGO_1", "BWD_DATA_FFT", "BWD_DATA_FFT_TILING",
                                             "BWD_DATA_WINOGRAD", "BWD_DATA_WINOGRAD_NONFUSED"};
static const char *const BWD_FILTER_NAMES[] = {"BWD_FILTER_ALGO_0", "BWD_FILTER_ALGO_1", "BWD_FILTER_FFT", "BWD_FILTER_ALGO_3",
                                               "BWD_FILTER_WINOGRAD", "BWD_FILTER_WINOGRAD_NONFUSED", "BWD_FILTER_FFT_TILING"};
_Static_assert(sizeof FWD_NAMES / sizeof FWD_NAMES[0] == CUDNN_CONVOLUTION_FWD_ALGO_COUNT, "forward algorithms");
_Static_assert(sizeof BWD_DATA_NAMES / sizeof BWD_DATA_NAMES[0] == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, "bwd data algorithms");
_Static_assert(sizeof BWD_FILTER_NAMES / sizeof BWD_FILTER_NAMES[0] == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, "bwd filter algorithms");


typedef struct ctx {
    const cb_gpu_cal_opts *o;
    cb_gpu_cal *out;
    cb_error *err;
    bool dnn_backend;              // cudnn (else the own kernels, "cuda")
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    cudaEvent_t e0, e1;
    cb_gpu_hold hold;              // o->held: each timed series behind it
    // device buffers, each large enough for every shape (floats): x, dx; w, dw; y, dy; vectors
    float *x, *dx, *w, *dw, *y, *dy, *v[8];
    int32_t *argmax;
    void *ws;
    size_t ws_bytes;
    size_t nx, nw, ny;             // the buffers' floats: x and dx, w and dw, y and dy
    float *pat;                    // (npat) the host pattern they were filled from
    size_t npat;
    bool host_graph_done;          // the graph plans' host time per call measured (host_graph_call)
    // the step's cache state (o->cache_hot false): before each timed call the L2 is flushed (a
    // write of flush_bytes to scratch) and the phase's input written again (through scratch), as a
    // pass leaves it: the input just made by the layer before, the weights long evicted
    void *scratch;
    size_t scratch_bytes, flush_bytes;
} ctx;

typedef int (*run_fn)(ctx *c, void *arg); // 0: ran

static void progress(ctx *c, const char *fmt, const char *a, const char *b) {
    if (!c->o->progress) return;
    if (!strncmp(fmt, "  ", 2) && !c->o->verbose) return; // per measurement: --verbose
    char msg[256];
    snprintf(msg, sizeof msg, fmt, a, b);
    c->o->progress(c->o->ctx, msg);
}

// median ms of one call; -1 when the call declines, -3 after a CUDA error (sticky: the
// calibration stops). stream: as a pass sees the call (profile and fullpass time layers between
// marks with nothing waiting between them): each repetition times STREAM_CALLS calls between two
// events recorded behind one more call already queued, so the launch latency hides behind the
// work ahead and a call whose host side is the slower part shows that (max(host, GPU) per call).
// Else (the launch latency itself): one call between events on an idle GPU.
// in (in_bytes; NULL: none): the call's input, for the step's cache state (ctx.scratch): each
// repetition of a second series flushes the L2, writes the input again and times one call queued
// behind those copies, and the call takes the larger of the two medians. Back to back, a call
// finds its weights and inputs in the L2, which a pass does not give it (ResNet-50 b64's own
// convolutions took a median 1.24x their back-to-back time inside the step, H200, 2026-11-28); the
// flush alone is long enough to hide the host's side of a small call, which a pass shows (the
// 2026-11-28 calibration of the flushed series alone put the FC layers' GEMMs 0.49x short;
// docs/results/2026-11-28-cache.md).
// o->held (calibrate --timing held): each repetition is queued behind a hold (cb_gpu_hold) that the
// host releases once the repetition is queued, so every call of it runs back to back, as a held
// profile's layers do: the device's time alone, the host's priced apart (host_call_s).
#define STREAM_CALLS 3
static double series(ctx *c, run_fn fn, void *arg, int reps, int calls, bool stream, const void *in, size_t in_bytes) {
    double t[32];
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        bool held = stream && c->o->held && cb_gpu_hold_on(&c->hold);
        if (in) { // the step's cache state (the copies are the work ahead)
            cudaMemsetAsync(c->scratch, r & 0xff, c->flush_bytes, 0);
            cudaMemcpyAsync(c->scratch, in, in_bytes, cudaMemcpyDeviceToDevice, 0);
            cudaMemcpyAsync((void *)in, c->scratch, in_bytes, cudaMemcpyDeviceToDevice, 0);
        } else if (stream && !held) {
            fn(c, arg); // the work ahead
        }
        cudaEventRecord(c->e0, 0);
        for (int k = 0; k < calls; k++) fn(c, arg);
        cudaEventRecord(c->e1, 0);
        if (held) cb_gpu_hold_off(&c->hold);
        if (cudaEventSynchronize(c->e1) != cudaSuccess) return -3;
        cudaEventElapsedTime(&ms, c->e0, c->e1);
        t[r] = ms / calls;
    }
    if (cudaGetLastError() != cudaSuccess) return -3;
    return cb_stats_of(t, reps).median;
}
static double time_call_in(ctx *c, run_fn fn, void *arg, bool stream, const void *in, size_t in_bytes) {
    if (cudaDeviceSynchronize() != cudaSuccess) return -3;
    cudaEventRecord(c->e0, 0);
    if (fn(c, arg) != 0) { // declined, or a launch that failed cleanly (resources): not a candidate
        cudaGetLastError();
        return cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess ? -1 : -3;
    }
    cudaEventRecord(c->e1, 0);
    if (cudaEventSynchronize(c->e1) != cudaSuccess) return -3;
    float first = 0;
    cudaEventElapsedTime(&first, c->e0, c->e1);
    int reps = first > 30 ? 2 : c->o->reps;
    double ms = series(c, fn, arg, reps, stream && first < 1 ? STREAM_CALLS : 1, stream, NULL, 0);
    if (ms >= 0 && stream && in && c->scratch && in_bytes <= c->scratch_bytes) {
        double cold = series(c, fn, arg, reps, 1, stream, in, in_bytes);
        ms = cold < 0 ? cold : cold > ms ? cold : ms;
    }
    return ms;
}
static double time_call(ctx *c, run_fn fn, void *arg, bool stream) { return time_call_in(c, fn, arg, stream, NULL, 0); }

// a phase's input (for the step's cache state): the forward's x (inplane elements), the backwards'
// dy (outplane elements), elem bytes each
static const void *phase_input(const ctx *c, cb_phase ph, size_t inplane, size_t outplane, int elem, size_t *bytes) {
    *bytes = (ph == CB_PHASE_FORWARD ? inplane : outplane) * (size_t)elem;
    return ph == CB_PHASE_FORWARD ? (const void *)c->x : (const void *)c->dy;
}

static void add(ctx *c, cb_sample_kind k, const char *name, cb_phase ph, cb_precision prec, const cb_conv_params *p, double ms,
                double ws) {
    cb_gpu_cal *o = c->out;
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 1024;
        o->s = realloc(o->s, sizeof *o->s * (size_t)o->cap);
        if (!o->s) abort();
    }
    cb_cal_sample *s = &o->s[o->n++];
    memset(s, 0, sizeof *s);
    s->kind = k;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->phase = ph;
    s->prec = prec;
    s->p = *p;
    s->ms = ms;
    s->workspace = ws;
}

static cb_status fatal(ctx *c, const char *what, const char *name) {
    cudaError_t e = cudaGetLastError();
    return cb_fail(c->err, CB_STATUS_DEVICE, "calibrate", NULL, "%s %s: CUDA error %s (%s)", what, name, cudaGetErrorName(e),
                   cudaGetErrorString(e));
}

// ---- GEMM (the FC layer's three products) ------------------------------------------------------
typedef struct gemm_arg { cb_phase ph; cb_precision prec; int n, c, k; } gemm_arg;

static int run_gemm(ctx *c, void *v) {
    const gemm_arg *g = v;
    const float one = 1, zero = 0;
    int n = g->n, ci = g->c, k = g->k;
    cublasOperation_t ta, tb;
    int m, nn, kk, lda, ldb, ldc;
    const void *A, *B;
    void *C;
    // column-major, as src/blas/blas.c calls cublasSgemm for an FC layer
    if (g->ph == CB_PHASE_FORWARD) ta = CUBLAS_OP_T, tb = CUBLAS_OP_N, m = k, nn = n, kk = ci, A = c->w, lda = ci, B = c->x, ldb = ci, C = c->y, ldc = k;
    else if (g->ph == CB_PHASE_BWD_DATA) ta = CUBLAS_OP_N, tb = CUBLAS_OP_N, m = ci, nn = n, kk = k, A = c->w, lda = ci, B = c->dy, ldb = k, C = c->dx, ldc = ci;
    else ta = CUBLAS_OP_N, tb = CUBLAS_OP_T, m = ci, nn = k, kk = n, A = c->x, lda = ci, B = c->dy, ldb = k, C = c->dw, ldc = ci;
    cublasStatus_t st;
    if (g->prec == CB_PREC_BF16)
        st = cublasGemmEx(c->blas, ta, tb, m, nn, kk, &one, A, CUDA_R_16BF, lda, B, CUDA_R_16BF, ldb, &zero, C, CUDA_R_32F, ldc,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else st = cublasSgemm(c->blas, ta, tb, m, nn, kk, &one, A, lda, B, ldb, &zero, C, ldc);
    return st != CUBLAS_STATUS_SUCCESS;
}

// the cuda backend's FC layer: a 1x1 convolution of (N, C, 1, 1) on the generic own algorithm
// (the engine may pick a faster entry of the table per layer), the FC layer's three products
static int run_own_fc(ctx *c, void *v) {
    const gemm_arg *g = v;
    const cb_cuda_conv_algo *a = cb_cuda_conv_algos[0];
    cb_conv_params p = {.n = g->n, .c = g->c, .h = 1, .w = 1, .k = g->k, .r = 1, .s = 1, .p = 1, .q = 1,
                        .stride_h = 1, .stride_w = 1, .groups = 1};
    if (g->ph == CB_PHASE_FORWARD) a->forward(&p, c->x, c->w, NULL, c->y, false, NULL);
    else if (g->ph == CB_PHASE_BWD_DATA) a->backward_data(&p, c->dy, c->w, c->dx, NULL);
    else a->backward_filter(&p, c->x, c->dy, c->dw, NULL, NULL);
    return cudaPeekAtLastError() != cudaSuccess;
}

static const char *gemm_name(cb_precision p) { return p == CB_PREC_FP32 ? "cublas_fp32" : p == CB_PREC_TF32 ? "cublas_tf32" : "cublas_bf16"; }

static cb_status cal_gemm(ctx *c) {
    cb_conv_params fc[CB_CAL_MAX_SHAPES];
    int nfc = cb_cal_fc_shapes(fc, CB_CAL_MAX_SHAPES);
    for (int pr = 0; pr < CB_PREC_COUNT; pr++) {
        cublasSetMathMode(c->blas, pr == CB_PREC_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
        progress(c, "calibrate: GEMM %s%s", cb_precision_name((cb_precision)pr), "");
        for (int i = 0; i < nfc; i++)
            for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
                bool square = fc[i].n == fc[i].c && fc[i].c == fc[i].k;
                if (square && ph != CB_PHASE_FORWARD) continue;
                gemm_arg g = {(cb_phase)ph, (cb_precision)pr, fc[i].n, fc[i].c, fc[i].k};
                progress(c, "  gemm %s %s", cb_precision_name((cb_precision)pr), ph == 0 ? "forward" : ph == 1 ? "bwd_data" : "bwd_filter");
                size_t ib;
                const void *in = phase_input(c, (cb_phase)ph, (size_t)g.n * g.c, (size_t)g.n * g.k, pr == CB_PREC_BF16 ? 2 : 4, &ib);
                double ms = time_call_in(c, run_gemm, &g, true, in, ib);
                if (ms < -2) return fatal(c, "GEMM", gemm_name((cb_precision)pr));
                add(c, CB_SAMPLE_FC, gemm_name((cb_precision)pr), (cb_phase)ph, (cb_precision)pr, &fc[i], ms, 0);
            }
    }
    cublasSetMathMode(c->blas, CUBLAS_PEDANTIC_MATH);
    if (c->dnn_backend) return CB_OK;
    progress(c, "calibrate: own FC kernels%s%s", "", "");
    for (int i = 0; i < nfc; i++)
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
            if (fc[i].n == fc[i].c && fc[i].c == fc[i].k && ph != CB_PHASE_FORWARD) continue;
            gemm_arg g = {(cb_phase)ph, CB_PREC_FP32, fc[i].n, fc[i].c, fc[i].k};
            size_t ib;
            const void *in = phase_input(c, (cb_phase)ph, (size_t)g.n * g.c, (size_t)g.n * g.k, 4, &ib);
            double ms = time_call_in(c, run_own_fc, &g, true, in, ib);
            if (ms < -2) return fatal(c, "FC", "own");
            add(c, CB_SAMPLE_FC, "own-fc", (cb_phase)ph, CB_PREC_FP32, &fc[i], ms, 0);
        }
    return CB_OK;
}

// ---- convolutions ---------------------------------------------------------------------------
typedef struct conv_arg {
    cb_phase ph;
    int algo;                           // cuDNN's enum value
    const cb_cuda_conv_algo *own;       // or an own algorithm
    cb_conv_params p;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    size_t wsz;
} conv_arg;

static int run_conv(ctx *c, void *v) {
    const conv_arg *a = v;
    const float one = 1, zero = 0;
    if (a->own) {
        if (a->ph == CB_PHASE_FORWARD) a->own->forward(&a->p, c->x, c->w, NULL, c->y, false, c->ws);
        else if (a->ph == CB_PHASE_BWD_DATA) a->own->backward_data(&a->p, c->dy, c->w, c->dx, c->ws);
        else a->own->backward_filter(&a->p, c->x, c->dy, c->dw, NULL, c->ws);
        return cudaPeekAtLastError() != cudaSuccess;
    }
    cudnnStatus_t st;
    if (a->ph == CB_PHASE_FORWARD)
        st = cudnnConvolutionForward(c->dnn, &one, a->xd, c->x, a->wd, c->w, a->cd, (cudnnConvolutionFwdAlgo_t)a->algo, c->ws,
                                     a->wsz, &zero, a->yd, c->y);
    else if (a->ph == CB_PHASE_BWD_DATA)
        st = cudnnConvolutionBackwardData(c->dnn, &one, a->wd, c->w, a->yd, c->dy, a->cd, (cudnnConvolutionBwdDataAlgo_t)a->algo,
                                          c->ws, a->wsz, &zero, a->xd, c->dx);
    else
        st = cudnnConvolutionBackwardFilter(c->dnn, &one, a->xd, c->x, a->yd, c->dy, a->cd,
                                            (cudnnConvolutionBwdFilterAlgo_t)a->algo, c->ws, a->wsz, &zero, a->wd, c->dw);
    return st != CUDNN_STATUS_SUCCESS;
}

// a convolution phase's input, elem bytes an element
static const void *conv_input(const ctx *c, const cb_conv_params *p, cb_phase ph, int elem, size_t *bytes) {
    return phase_input(c, ph, (size_t)p->n * p->c * p->h * p->w, (size_t)p->n * p->k * p->p * p->q, elem, bytes);
}

static cudnnStatus_t dnn_ws(ctx *c, conv_arg *a, size_t *sz) {
    if (a->ph == CB_PHASE_FORWARD)
        return cudnnGetConvolutionForwardWorkspaceSize(c->dnn, a->xd, a->wd, a->cd, a->yd, (cudnnConvolutionFwdAlgo_t)a->algo, sz);
    if (a->ph == CB_PHASE_BWD_DATA)
        return cudnnGetConvolutionBackwardDataWorkspaceSize(c->dnn, a->wd, a->yd, a->cd, a->xd,
                                                            (cudnnConvolutionBwdDataAlgo_t)a->algo, sz);
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(c->dnn, a->xd, a->yd, a->cd, a->wd,
                                                          (cudnnConvolutionBwdFilterAlgo_t)a->algo, sz);
}

// cuDNN's graph-API race as the cudnn backend runs it in tf32 and bf16 (src/cudnn/graph.c): the
// fastest of the heuristics' plans on this shape, one pseudo-algorithm per phase (FWD_GRAPH, ...)
// that the model prices like the legacy ones and races against them as the backend does
typedef struct graph_arg { cb_phase ph; dnn_gplan *g; } graph_arg;
static const char *const GRAPH_NAMES[CB_PHASE_COUNT] = {"FWD_GRAPH", "BWD_DATA_GRAPH", "BWD_FILTER_GRAPH"};

static int run_graph(ctx *c, void *v) {
    const graph_arg *a = v;
    const void *x = a->ph == CB_PHASE_BWD_DATA ? (void *)c->dx : (void *)c->x, *w = a->ph == CB_PHASE_BWD_FILTER ? (void *)c->dw : (void *)c->w,
               *y = a->ph == CB_PHASE_FORWARD ? (void *)c->y : (void *)c->dy;
    return !cb_dnn_graph_exec(c->dnn, a->g, x, w, y, c->ws);
}

// phase ph's graph sample of the shape of descriptors a (its legacy descriptors): -1 where no
// plan runs it (a grouped convolution: the backend keeps the legacy path)
static double host_graph_call(ctx *c, const graph_arg *g);

static cb_status cal_graph(ctx *c, const conv_arg *a, cb_phase ph, cb_precision prec) {
    graph_arg g = {ph, NULL};
    const void *x = ph == CB_PHASE_BWD_DATA ? (void *)c->dx : (void *)c->x, *w = ph == CB_PHASE_BWD_FILTER ? (void *)c->dw : (void *)c->w,
               *y = ph == CB_PHASE_FORWARD ? (void *)c->y : (void *)c->dy;
    progress(c, "  %s %s", GRAPH_NAMES[ph], cb_precision_name(prec));
    double ms = -1, ws = 0;
    int64_t lost = -1;
    // (the pick the backend makes, cb_choice_pick's workspace slack included)
    const cb_dnn_race_opts ro = {c->o->workspace_limit, -1, CB_WORKSPACE_SLACK_DEFAULT, NULL, NULL, NULL};
    if (cb_dnn_graph_race_desc(c->dnn, a->xd, a->wd, a->yd, a->cd, ph, prec, &ro, x, w, y, c->ws, c->ws_bytes, &g.g, &lost) >= 0 &&
        g.g) {
        ws = (double)cb_dnn_graph_workspace(g.g);
        size_t ib;
        const void *in = conv_input(c, &a->p, ph, prec == CB_PREC_BF16 ? 2 : 4, &ib);
        ms = time_call_in(c, run_graph, &g, true, in, ib);
        // the host's time per graph execution, once, on the first plan that runs (the grid's first
        // shapes are its smallest: the GPU keeps up, so the host's loop is what is timed)
        if (ms >= 0 && !c->host_graph_done) {
            double h = host_graph_call(c, &g);
            if (h > 0) c->out->host_graph_call_s = h, c->host_graph_done = true;
        }
    }
    if (lost >= 0) ms = -3; // (an engine took the device down: the calibration stops, as on any CUDA error)
    cb_dnn_graph_free(g.g);
    if (ms < -2) {
        char name[64];
        snprintf(name, sizeof name, "%s (cuDNN graph engine %lld)", GRAPH_NAMES[ph], (long long)lost);
        return fatal(c, "convolution", lost >= 0 ? name : GRAPH_NAMES[ph]);
    }
    add(c, CB_SAMPLE_CONV, GRAPH_NAMES[ph], ph, prec, &a->p, ms, ws);
    return CB_OK;
}

// The own wgmma implicit GEMM on the storage as it is, as auto races it against cuDNN per conv phase
// (src/sched/auto.c's wg_race): bf16 NHWC, tf32 on fp32 NHWC, and 3xTF32 on fp32 NHWC under strict fp32
// (cb_cuda_wg_store_*, compute capability 9.0 only). Its samples ("igemm-wgmma-bf16" / "-tf32" /
// "-3xtf32") sit beside cuDNN's; the model
// prices them for auto's steps only (cb_model_opts.own_race). The buffers are the calibration's:
// bf16 values in bf16, the pattern's floats in tf32, read as NHWC; the filter gradient goes to dw as fp32.
typedef struct wg_arg { cb_phase ph; cb_conv_params p; int f32; } wg_arg;

static int run_wg(ctx *c, void *v) {
    const wg_arg *a = v;
    if (a->ph == CB_PHASE_FORWARD) cb_cuda_wg_store_forward(&a->p, c->x, c->w, NULL, c->y, 0, a->f32);
    else if (a->ph == CB_PHASE_BWD_DATA) cb_cuda_wg_store_backward_data(&a->p, c->dy, c->w, c->dx, c->ws, a->f32);
    else cb_cuda_wg_store_backward_filter(&a->p, c->x, c->dy, c->dw, c->ws, a->f32);
    return cudaPeekAtLastError() != cudaSuccess;
}

// phase ph of p on the own wgmma kernel, where this GPU and the shape take it (else no sample)
static cb_status cal_wg(ctx *c, const cb_conv_params *p, cb_phase ph, cb_precision prec) {
    const int f32 = prec == CB_PREC_TF32 ? 1 : prec == CB_PREC_FP32 ? 2 : 0; // (fp32: 3xTF32 products)
    const char *name = (f32 == 2 ? &cb_conv_algo_igemm_wgmma_x3 : f32 ? &cb_conv_algo_igemm_wgmma_tf32 : &cb_conv_algo_igemm_wgmma_bf16)->name; // (the engine's choice names them so)
    if (!cb_cuda_wg_store_supports(p, ph, f32)) return CB_OK;
    progress(c, "  %s %s", name, ph == CB_PHASE_FORWARD ? "forward" : ph == CB_PHASE_BWD_DATA ? "bwd_data" : "bwd_filter");
    const size_t sz = cb_cuda_wg_store_workspace(p, ph, f32);
    double ms = -2;
    if (sz <= c->ws_bytes) {
        wg_arg a = {ph, *p, f32};
        size_t ib;
        const void *in = conv_input(c, p, ph, f32 ? 4 : 2, &ib);
        if ((ms = time_call_in(c, run_wg, &a, true, in, ib)) < -2) return fatal(c, "convolution", name);
    }
    add(c, CB_SAMPLE_CONV, name, ph, prec, p, ms, (double)sz);
    return CB_OK;
}

static cb_status cal_conv_dnn(ctx *c, const cb_conv_params *p0, cb_precision prec) {
    // bf16 NHWC: a dense convolution whose input channels are not 16 bytes' worth runs on a
    // channel-padded copy in the backend (cb_store_conv_cpad) and is priced so (the model's
    // model_cpad): measured and recorded padded, as it runs (AlexNet b128's conv1, C 3 -> 8: 0.50 ms
    // in the step on the H200, where the unpadded C = 3 entries had the model say 0.23)
    cb_conv_params q = *p0;
    if (prec == CB_PREC_BF16 && q.groups == 1) q.c = (int)cb_conv_cpad_to(q.c, true);
    const cb_conv_params *p = &q;
    conv_arg a = {.p = *p};
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    st |= cudnnCreateTensorDescriptor(&a.xd);
    st |= cudnnCreateTensorDescriptor(&a.yd);
    st |= cudnnCreateFilterDescriptor(&a.wd);
    st |= cudnnCreateConvolutionDescriptor(&a.cd);
    // fp32 and tf32 on fp32 NCHW; bf16 on bf16 NHWC (filters KRSC), as the backend stores them
    // (--precision bf16 --layout nhwc, the suite's cells), compute in fp32 on tensor cores
    bool bf = prec == CB_PREC_BF16;
    cudnnTensorFormat_t tf = bf ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    cudnnDataType_t dt = bf ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    st |= cudnnSetTensor4dDescriptor(a.xd, tf, dt, p->n, p->c, p->h, p->w);
    st |= cudnnSetTensor4dDescriptor(a.yd, tf, dt, p->n, p->k, p->p, p->q);
    st |= cudnnSetFilter4dDescriptor(a.wd, dt, tf, p->k, p->c / p->groups, p->r, p->s);
    st |= cudnnSetConvolution2dDescriptor(a.cd, p->pad_top, p->pad_left, p->stride_h, p->stride_w, 1, 1, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT);
    st |= cudnnSetConvolutionGroupCount(a.cd, p->groups);
    st |= cudnnSetConvolutionMathType(a.cd, bf ? CUDNN_TENSOR_OP_MATH : prec == CB_PREC_TF32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
    cb_status rc = CB_OK;
    if (st != CUDNN_STATUS_SUCCESS) rc = cb_fail(c->err, CB_STATUS_DEVICE, "calibrate", NULL, "cuDNN descriptors for a calibration shape");
    for (int ph = 0; rc == CB_OK && ph < CB_PHASE_COUNT; ph++) {
        int na = ph == 0 ? CUDNN_CONVOLUTION_FWD_ALGO_COUNT : ph == 1 ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                                                                      : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
        const char *const *names = ph == 0 ? FWD_NAMES : ph == 1 ? BWD_DATA_NAMES : BWD_FILTER_NAMES;
        for (int j = 0; j < na; j++) {
            a.ph = (cb_phase)ph;
            a.algo = j;
            progress(c, "  %s %s", names[j], cb_precision_name(prec));
            size_t sz = 0;
            double ms;
            if (dnn_ws(c, &a, &sz) != CUDNN_STATUS_SUCCESS) ms = -1, sz = 0;
            else if (sz > c->ws_bytes || (double)sz > c->o->workspace_limit) ms = -2;
            else {
                a.wsz = sz;
                size_t ib;
                const void *in = conv_input(c, p, (cb_phase)ph, bf ? 2 : 4, &ib);
                ms = time_call_in(c, run_conv, &a, true, in, ib);
                if (ms < -2) {
                    rc = fatal(c, "convolution", names[j]);
                    break;
                }
            }
            add(c, CB_SAMPLE_CONV, names[j], (cb_phase)ph, prec, p, ms, (double)sz);
        }
        // in tf32 and bf16 the backend races the graph API's engines against them (graph.c), and auto the own wgmma kernel
        if (rc == CB_OK && cb_dnn_graph_mode_of(prec) != CB_DNN_GRAPH_OFF) rc = cal_graph(c, &a, (cb_phase)ph, prec);
        if (rc == CB_OK && p0->groups == 1 && q.c == p0->c) rc = cal_wg(c, p, (cb_phase)ph, prec); // (a padded copy: cuDNN's layer)
    }
    cudnnDestroyTensorDescriptor(a.xd);
    cudnnDestroyTensorDescriptor(a.yd);
    cudnnDestroyFilterDescriptor(a.wd);
    cudnnDestroyConvolutionDescriptor(a.cd);
    return rc;
}

static cb_status cal_conv_own(ctx *c, const cb_conv_params *p, cb_precision prec) {
    for (int j = 0; cb_cuda_conv_algos[j]; j++) {
        const cb_cuda_conv_algo *al = cb_cuda_conv_algos[j];
        if (!cb_cuda_conv_algo_allowed(al, prec)) continue;
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
            conv_arg a = {.ph = (cb_phase)ph, .own = al, .p = *p};
            double ms, sz = 0;
            progress(c, "  %s %s", al->name, ph == 0 ? "forward" : ph == 1 ? "bwd_data" : "bwd_filter");
            if (!cb_cuda_conv_algo_supports(al, p, (cb_phase)ph)) ms = -1;
            else if ((sz = (double)cb_cuda_conv_algo_workspace(al, p, (cb_phase)ph)) > (double)c->ws_bytes ||
                     sz > c->o->workspace_limit)
                ms = -2;
            else {
                size_t ib;
                const void *in = conv_input(c, p, (cb_phase)ph, 4, &ib);
                if ((ms = time_call_in(c, run_conv, &a, true, in, ib)) < -2) return fatal(c, "convolution", al->name);
            }
            add(c, CB_SAMPLE_CONV, al->name, (cb_phase)ph, prec, p, ms, sz);
        }
    }
    return CB_OK;
}

// ---- memory-bound passes --------------------------------------------------------------------
typedef struct mop_arg {
    cb_mop m;
    cb_conv_params t;
    cudnnTensorDescriptor_t td, od, bd, bnd;
    cudnnActivationDescriptor_t act;
    cudnnPoolingDescriptor_t pd;
    bool bf16;                     // on bf16 NHWC storage (run_mop16)
    bool bn_ex;                    // bf16: cuDNN's Ex batch norm takes this shape (as the cudnn backend's bn_ex_probe)
} mop_arg;

// A pass on bf16 NHWC storage as the cudnn backend runs it there: the storage's own kernels for the
// bias, the activation, the sum and the bias gradient (src/storage); cuDNN's pooling and batch norm
// on NHWC bf16 descriptors, training batch norm through the Ex API in persistent mode where the
// backend takes it (channels a multiple of 8, no reserve space: every calibration shape), the own
// pooling kernels for the padding cuDNN lacks.
static int run_mop16(ctx *c, const mop_arg *a) {
    const cb_conv_params *t = &a->t;
    const float one = 1, zero = 0;
    size_t count = (size_t)t->n * t->c * t->h * t->w;
    int64_t rows = (int64_t)t->n * t->h * t->w;
    const int fmt = CB_FMT_NHWC | CB_FMT_BF16;
    cb_pool_params pp = {.n = t->n, .c = t->c, .h = t->h, .w = t->w, .r = t->r, .s = t->s, .p = t->p, .q = t->q,
                         .stride_h = t->stride_h, .stride_w = t->stride_w, .pad_top = t->pad_top, .pad_left = t->pad_left,
                         .is_avg = a->m == CB_MOP_AVGPOOL_FWD || a->m == CB_MOP_AVGPOOL_BWD};
    float **vv = (float **)c->v;
    const cudnnBatchNormMode_t px = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    switch (a->m) {
    case CB_MOP_COPY:
        return cudaMemcpyAsync(c->y, c->x, count * 2, cudaMemcpyDeviceToDevice, 0) != cudaSuccess;
    case CB_MOP_BIAS_ADD:
        cb_fmt_bias_act_fn(rows, t->c, 1, vv[0], c->y, CB_ACT_NONE, NULL, 1);
        break;
    case CB_MOP_RELU_FWD:
        cb_fmt_act_forward(count, CB_ACT_RELU, c->y, NULL, c->y, 1);
        break;
    case CB_MOP_RELU_BWD:
        cb_fmt_act_backward(count, CB_ACT_RELU, NULL, c->y, c->dy, c->dy, 1);
        break;
    case CB_MOP_BN_FWD:
        st = cudnnBatchNormalizationForwardInference(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, a->td, c->x, a->td, c->y, a->bnd,
                                                     vv[0], vv[1], vv[2], vv[3], 1e-5);
        break;
    case CB_MOP_BN_FWD_TRAIN:
        if (a->bn_ex)
            st = cudnnBatchNormalizationForwardTrainingEx(c->dnn, px, CUDNN_BATCHNORM_OPS_BN, &one, &zero, a->td, c->x, NULL, NULL, a->td,
                                                          c->y, a->bnd, vv[0], vv[1], 0.1, vv[2], vv[3], 1e-5, vv[4], vv[5], NULL, c->ws,
                                                          c->ws_bytes, NULL, 0);
        else
            st = cudnnBatchNormalizationForwardTraining(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, a->td, c->x, a->td, c->y, a->bnd,
                                                        vv[0], vv[1], 0.1, vv[2], vv[3], 1e-5, vv[4], vv[5]);
        break;
    case CB_MOP_BN_FWD_TRAIN_ODD: // (a->td: channels not a multiple of 8, as the backend's legacy call)
        st = cudnnBatchNormalizationForwardTraining(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, a->td, c->x, a->td, c->y, a->bnd, vv[0],
                                                    vv[1], 0.1, vv[2], vv[3], 1e-5, vv[4], vv[5]);
        break;
    case CB_MOP_BN_BWD_ODD:
        st = cudnnBatchNormalizationBackward(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, a->td, c->x, a->td, c->dy, a->td,
                                             c->dx, a->bnd, vv[0], vv[6], vv[7], 1e-5, vv[4], vv[5]);
        break;
    case CB_MOP_BN_BWD:
        if (a->bn_ex)
            st = cudnnBatchNormalizationBackwardEx(c->dnn, px, CUDNN_BATCHNORM_OPS_BN, &one, &zero, &one, &zero, a->td, c->x, NULL, NULL,
                                                   a->td, c->dy, NULL, NULL, a->td, c->dx, a->bnd, vv[0], vv[1], vv[6], vv[7], 1e-5, vv[4],
                                                   vv[5], NULL, c->ws, c->ws_bytes, NULL, 0);
        else
            st = cudnnBatchNormalizationBackward(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, a->td, c->x, a->td, c->dy,
                                                 a->td, c->dx, a->bnd, vv[0], vv[6], vv[7], 1e-5, vv[4], vv[5]);
        break;
    case CB_MOP_BIAS_GRAD:
        cb_fmt_bias_grad(rows, t->c, 1, c->dy, 1, vv[6], c->ws_bytes >= 4 * cb_fmt_bias_part_floats(t->c) ? (float *)c->ws : NULL);
        break;
    case CB_MOP_ACT_BIAS_GRAD:
        cb_fmt_act_bias_grad(rows, t->c, 1, CB_ACT_RELU, NULL, c->y, c->dy, 1, vv[6],
                             c->ws_bytes >= 4 * cb_fmt_bias_part_floats(t->c) ? (float *)c->ws : NULL);
        break;
    case CB_MOP_CONCAT:
    case CB_MOP_CONCAT_NARROW: // (x into its slice of y, rows of t->k channels)
        cb_fmt_concat_copy(rows, t->k, t->c, t->k - t->c, 1, 2, c->y, c->x, 0);
        break;
    case CB_MOP_ADD:
        cb_fmt_add(count, c->dx, c->dy, 1);
        break;
    case CB_MOP_POOL_FWD:
    case CB_MOP_AVGPOOL_FWD:
        st = cudnnPoolingForward(c->dnn, a->pd, &one, a->td, c->x, &zero, a->od, c->y);
        break;
    case CB_MOP_POOL_BWD:
    case CB_MOP_AVGPOOL_BWD:
        st = cudnnPoolingBackward(c->dnn, a->pd, &one, a->od, c->y, a->od, c->dy, a->td, c->x, &zero, a->td, c->dx);
        break;
    case CB_MOP_OWNPOOL_FWD:
        cb_fmt_pool_forward(&pp, fmt, c->x, c->y, c->argmax);
        break;
    case CB_MOP_OWNPOOL_BWD:
        cb_fmt_pool_backward(&pp, fmt, c->dy, c->argmax, c->dx);
        break;
    default:
        return 1;
    }
    return st != CUDNN_STATUS_SUCCESS || cudaPeekAtLastError() != cudaSuccess;
}

// A pass's input as a step leaves it (the step's cache state; time_call_in): what the layer before
// has just written, the rest long evicted: the forward passes' input (x; y for the in-place bias and
// ReLU), the backward passes' incoming gradient (dy). Repeated back to back, a pass also finds its
// output and its other operands in the L2: the 2026-11-28 H200 calibration priced the passes of
// the profiles (pooling, concatenations, sums) a median 0.72x of what they took in the step.
static const void *mop_input(const ctx *c, const mop_arg *a, size_t *bytes) {
    const cb_conv_params *t = &a->t;
    size_t in = (size_t)t->n * t->c * t->h * t->w, out = cb_mop_is_pool(a->m) ? (size_t)t->n * t->c * t->p * t->q : in;
    size_t e = a->bf16 ? 2 : 4;
    switch (a->m) {
    case CB_MOP_BIAS_ADD:
    case CB_MOP_RELU_FWD: *bytes = in * e; return c->y;
    case CB_MOP_RELU_BWD:
    case CB_MOP_BN_BWD:
    case CB_MOP_BN_BWD_ODD:
    case CB_MOP_BIAS_GRAD:
    case CB_MOP_ACT_BIAS_GRAD:
    case CB_MOP_ADD:
    case CB_MOP_POOL_BWD:
    case CB_MOP_AVGPOOL_BWD:
    case CB_MOP_OWNPOOL_BWD: *bytes = out * e; return c->dy;
    default: *bytes = in * e; return c->x; // the copy, batch norm's and pooling's forward
    }
}

static int run_mop(ctx *c, void *v) {
    const mop_arg *a = v;
    if (a->bf16) return run_mop16(c, a);
    const cb_conv_params *t = &a->t;
    const float one = 1, zero = 0;
    size_t count = (size_t)t->n * t->c * t->h * t->w;
    cb_bn_params bp = {t->n, t->c, t->h, t->w, 1e-5f};
    cb_pool_params pp = {.n = t->n, .c = t->c, .h = t->h, .w = t->w, .r = t->r, .s = t->s, .p = t->p, .q = t->q,
                         .stride_h = t->stride_h, .stride_w = t->stride_w, .pad_top = t->pad_top, .pad_left = t->pad_left,
                         .is_avg = a->m == CB_MOP_AVGPOOL_FWD || a->m == CB_MOP_AVGPOOL_BWD};
    float **vv = (float **)c->v;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    bool dnn = c->dnn_backend;
    switch (a->m) {
    case CB_MOP_COPY:
        return cudaMemcpyAsync(c->y, c->x, count * 4, cudaMemcpyDeviceToDevice, 0) != cudaSuccess;
    case CB_MOP_BIAS_ADD:
        if (dnn) st = cudnnAddTensor(c->dnn, &one, a->bd, vv[0], &one, a->td, c->y);
        else cb_cuda_bias_add(t->n, t->c, t->h * t->w, vv[0], c->y);
        break;
    case CB_MOP_RELU_FWD:
        if (dnn) st = cudnnActivationForward(c->dnn, a->act, &one, a->td, c->y, &zero, a->td, c->y);
        else cb_cuda_act_forward(count, CB_ACT_RELU, c->y, NULL, c->y);
        break;
    case CB_MOP_RELU_BWD:
        cb_cuda_act_backward(count, CB_ACT_RELU, NULL, c->y, c->dy, c->dy); // the own kernel in both backends
        break;
    case CB_MOP_BN_FWD:
        if (dnn)
            st = cudnnBatchNormalizationForwardInference(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, a->td, c->x, a->td, c->y,
                                                         a->bnd, vv[0], vv[1], vv[2], vv[3], 1e-5);
        else cb_cuda_bn_forward_infer(&bp, c->x, vv[0], vv[1], c->y, vv[2], vv[3]);
        break;
    case CB_MOP_BN_FWD_TRAIN:
        if (dnn)
            st = cudnnBatchNormalizationForwardTraining(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, a->td, c->x, a->td, c->y,
                                                        a->bnd, vv[0], vv[1], 0.1, vv[2], vv[3], 1e-5, vv[4], vv[5]);
        else cb_cuda_bn_forward_train(&bp, c->x, vv[0], vv[1], c->y, vv[4], vv[5], vv[2], vv[3], 0.1f);
        break;
    case CB_MOP_BN_BWD:
        if (dnn)
            st = cudnnBatchNormalizationBackward(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, a->td, c->x, a->td,
                                                 c->dy, a->td, c->dx, a->bnd, vv[0], vv[6], vv[7], 1e-5, vv[4], vv[5]);
        else cb_cuda_bn_backward(&bp, c->x, vv[0], vv[4], vv[5], c->dy, c->dx, vv[6], vv[7]);
        break;
    case CB_MOP_BIAS_GRAD:
        // both backends run the storage's chunked reduction (cb_store_bias_grad), its partial sums in the workspace
        cb_fmt_bias_grad(t->n, t->c, t->h * t->w, c->dy, 0, vv[6],
                         c->ws_bytes >= 4 * cb_fmt_bias_part_floats(t->c) ? (float *)c->ws : NULL);
        break;
    case CB_MOP_ACT_BIAS_GRAD: // the backward epilogue both backends run (cb_cuda_act_bias_grad)
        cb_fmt_act_bias_grad(t->n, t->c, t->h * t->w, CB_ACT_RELU, NULL, c->y, c->dy, 0, vv[6],
                             c->ws_bytes >= 4 * cb_fmt_bias_part_floats(t->c) ? (float *)c->ws : NULL);
        break;
    case CB_MOP_ADD:
        cb_cuda_add(count, c->dx, c->dy);
        break;
    case CB_MOP_CONCAT: // the storage's kernel on 4-byte elements: an fp32/tf32 NHWC concatenation (an NCHW one
    case CB_MOP_CONCAT_NARROW: // copies channel blocks on the copy engine: the copy's entry prices it)
        cb_fmt_concat_copy((int64_t)t->n * t->h * t->w, t->k, t->c, t->k - t->c, 1, 4, c->y, c->x, 0);
        break;
    case CB_MOP_POOL_FWD:
    case CB_MOP_AVGPOOL_FWD:
        if (dnn) st = cudnnPoolingForward(c->dnn, a->pd, &one, a->td, c->x, &zero, a->od, c->y);
        else cb_cuda_pool_forward(&pp, c->x, c->y, c->argmax);
        break;
    case CB_MOP_POOL_BWD:
    case CB_MOP_AVGPOOL_BWD:
        if (dnn) st = cudnnPoolingBackward(c->dnn, a->pd, &one, a->od, c->y, a->od, c->dy, a->td, c->x, &zero, a->td, c->dx);
        else cb_cuda_pool_backward(&pp, c->dy, c->argmax, c->dx);
        break;
    case CB_MOP_OWNPOOL_FWD: // the own kernels in either backend (the cudnn backend's fallback), max pooling
        cb_cuda_pool_forward(&pp, c->x, c->y, c->argmax);
        break;
    case CB_MOP_OWNPOOL_BWD:
        cb_cuda_pool_backward(&pp, c->dy, c->argmax, c->dx);
        break;
    default:
        return 1;
    }
    return st != CUDNN_STATUS_SUCCESS || cudaPeekAtLastError() != cudaSuccess;
}

// every pass on the tensors of cb_cal_mop_shapes, then the pooling passes alone on cb_cal_pool_shapes:
// on fp32 NCHW, then (the cudnn backend) on bf16 NHWC storage, those samples marked bf16 (the
// model's ops_bf16: the storage's kernels, not fp32's with half the bytes; whatever the convolution
// precisions, as `--sections mops` runs alone)
static cb_status cal_mops(ctx *c) {
    cb_conv_params sh[2 * CB_CAL_MAX_SHAPES];
    int nm = cb_cal_mop_shapes(sh, CB_CAL_MAX_SHAPES), ns = nm + cb_cal_pool_shapes(sh + nm, CB_CAL_MAX_SHAPES);
    mop_arg a = {0};
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    st |= cudnnCreateTensorDescriptor(&a.td);
    st |= cudnnCreateTensorDescriptor(&a.od);
    st |= cudnnCreateTensorDescriptor(&a.bd);
    st |= cudnnCreateTensorDescriptor(&a.bnd);
    st |= cudnnCreateActivationDescriptor(&a.act);
    st |= cudnnCreatePoolingDescriptor(&a.pd);
    st |= cudnnSetActivationDescriptor(a.act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0);
    cb_status rc = st == CUDNN_STATUS_SUCCESS ? CB_OK : cb_fail(c->err, CB_STATUS_DEVICE, "calibrate", NULL, "cuDNN descriptors");
    for (int pass = 0; pass < (c->dnn_backend ? 2 : 1) && rc == CB_OK; pass++) {
        a.bf16 = pass == 1;
        cudnnTensorFormat_t tf = a.bf16 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
        cudnnDataType_t dt = a.bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
        progress(c, "calibrate: memory-bound passes%s%s", a.bf16 ? ", bf16 NHWC" : "", "");
        for (int i = 0; rc == CB_OK && i < ns; i++) {
            const cb_conv_params *t = &sh[i];
            a.t = *t;
            st = cudnnSetTensor4dDescriptor(a.td, tf, dt, t->n, t->c, t->h, t->w);
            st |= cudnnSetTensor4dDescriptor(a.od, tf, dt, t->n, t->c, t->p, t->q);
            st |= cudnnSetTensor4dDescriptor(a.bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, t->c, 1, 1);
            st |= cudnnDeriveBNTensorDescriptor(a.bnd, a.td, CUDNN_BATCHNORM_SPATIAL);
            if (st != CUDNN_STATUS_SUCCESS) {
                rc = cb_fail(c->err, CB_STATUS_DEVICE, "calibrate", NULL, "cuDNN descriptors for a memory-bound pass");
                break;
            }
            a.bn_ex = false;
            if (a.bf16 && t->c % 8 == 0) { // (the backend's rule, src/cudnn/backend.c bn_ex_probe)
                const cudnnBatchNormMode_t px = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
                size_t fw = 0, bw = 0, rs = 1;
                a.bn_ex = !cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(c->dnn, px, CUDNN_BATCHNORM_OPS_BN, a.td, NULL, a.td,
                                                                                     a.bnd, NULL, &fw) &&
                          !cudnnGetBatchNormalizationBackwardExWorkspaceSize(c->dnn, px, CUDNN_BATCHNORM_OPS_BN, a.td, NULL, a.td, NULL,
                                                                             a.td, a.bnd, NULL, &bw) &&
                          !cudnnGetBatchNormalizationTrainingExReserveSpaceSize(c->dnn, px, CUDNN_BATCHNORM_OPS_BN, NULL, a.td, &rs) &&
                          rs == 0 && fw <= c->ws_bytes && bw <= c->ws_bytes;
            }
            for (int m = 0; m < CB_MOP_COUNT; m++) {
                if (i >= nm && !cb_mop_is_pool((cb_mop)m)) continue;
                a.m = (cb_mop)m;
                // cuDNN's legacy batch norm on NHWC, which the cudnn backend calls where the channels are
                // not a multiple of 8 (the Ex API declined: gen-mobile-s2 b256 bf16 spent 224 ms of a
                // 260 ms step there, H200 2026-11-27): on bf16 NHWC storage alone (NCHW's batch norm is
                // cuDNN's one call, the bn entries), on the shape with one channel fewer where its
                // channels are a multiple of 8; the sample records that shape
                bool odd = m == CB_MOP_BN_FWD_TRAIN_ODD || m == CB_MOP_BN_BWD_ODD;
                if (odd && !a.bf16) continue;
                // a concatenation's input (the shape's channels, a multiple of 8: 16-byte rows) into the
                // second half of an output of twice its channels; the narrow entry's input has one channel
                // fewer at the same offset (2- or 4-byte units, as random networks' odd channel counts run:
                // 0.6 ms of gen-inception-s2 b192's forward where the copy's entry priced 0.2, H200 2026-11-28)
                bool cat = m == CB_MOP_CONCAT || m == CB_MOP_CONCAT_NARROW;
                if (cat) {
                    a.t.c = m == CB_MOP_CONCAT ? t->c : t->c - 1, a.t.k = t->c + a.t.c;
                    if (cb_mop_concat(a.t.c, a.t.k, t->c, a.bf16 ? 2 : 4) != (cb_mop)m) {
                        a.t = *t;
                        continue;
                    }
                }
                if (odd) {
                    a.t.c = t->c % 8 ? t->c : t->c - 1;
                    st = a.t.c > 0 ? cudnnSetTensor4dDescriptor(a.td, tf, dt, t->n, a.t.c, t->h, t->w) : CUDNN_STATUS_BAD_PARAM;
                    st |= cudnnDeriveBNTensorDescriptor(a.bnd, a.td, CUDNN_BATCHNORM_SPATIAL);
                    if (st != CUDNN_STATUS_SUCCESS) {
                        rc = cb_fail(c->err, CB_STATUS_DEVICE, "calibrate", NULL, "cuDNN descriptors for a batch norm on %d channels", a.t.c);
                        break;
                    }
                }
                bool avg = m == CB_MOP_AVGPOOL_FWD || m == CB_MOP_AVGPOOL_BWD; // as src/cudnn/plan.c sets a pool layer's
                if (cb_mop_is_pool((cb_mop)m) &&
                    cudnnSetPooling2dDescriptor(a.pd, avg ? CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING : CUDNN_POOLING_MAX_DETERMINISTIC,
                                                CUDNN_NOT_PROPAGATE_NAN, t->r, t->s, t->pad_top, t->pad_left, t->stride_h,
                                                t->stride_w) != CUDNN_STATUS_SUCCESS) {
                    rc = cb_fail(c->err, CB_STATUS_DEVICE, "calibrate", NULL, "cuDNN pooling descriptor");
                    break;
                }
                progress(c, "  %s%s", cb_mop_name((cb_mop)m), a.bf16 ? " (bf16 NHWC)" : "");
                size_t ib;
                const void *in = mop_input(c, &a, &ib);
                double ms = time_call_in(c, run_mop, &a, true, in, ib);
                if (ms < -2) {
                    rc = fatal(c, "pass", cb_mop_name((cb_mop)m));
                    break;
                }
                add(c, CB_SAMPLE_MOP, cb_mop_name((cb_mop)m), CB_PHASE_FORWARD, a.bf16 ? CB_PREC_BF16 : CB_PREC_FP32, &a.t, ms, 0);
                if (cat) a.t = *t;
                if (odd) { // (the shape's own descriptors again for what follows)
                    a.t = *t;
                    if (cudnnSetTensor4dDescriptor(a.td, tf, dt, t->n, t->c, t->h, t->w) != CUDNN_STATUS_SUCCESS ||
                        cudnnDeriveBNTensorDescriptor(a.bnd, a.td, CUDNN_BATCHNORM_SPATIAL) != CUDNN_STATUS_SUCCESS) {
                        rc = cb_fail(c->err, CB_STATUS_DEVICE, "calibrate", NULL, "cuDNN descriptors for a memory-bound pass");
                        break;
                    }
                }
            }
        }
    }
    cudnnDestroyTensorDescriptor(a.td);
    cudnnDestroyTensorDescriptor(a.od);
    cudnnDestroyTensorDescriptor(a.bd);
    cudnnDestroyTensorDescriptor(a.bnd);
    cudnnDestroyActivationDescriptor(a.act);
    cudnnDestroyPoolingDescriptor(a.pd);
    return rc;
}

static int run_launch(ctx *c, void *v) {
    cb_cuda_fill(1, c->v[7], 0.f);
    return cudaPeekAtLastError() != cudaSuccess;
}

// The host's time per call: HOST_CALLS small cuDNN calls (a ReLU over 8x8x8 floats, a call a
// small layer's pass makes) enqueued back to back with no sync between them, host wall clock from
// before the first to after the last, over their count; the median of the repetitions. The GPU
// runs each in about a microsecond, so the queue never fills and the host's issuing is all that
// is timed: what bounds a pass of small layers (src/model/predict_cal.c, the host floor). Seconds;
// -1 when cuDNN refuses the descriptors.
#define HOST_CALLS 256
static double time_host_call(ctx *c) {
    cudnnTensorDescriptor_t td = NULL;
    cudnnActivationDescriptor_t act = NULL;
    const float one = 1, zero = 0;
    double t[32], s = -1;
    int reps = c->o->reps < 32 ? c->o->reps : 32;
    if (reps < 1) reps = 1;
    if (cudnnCreateTensorDescriptor(&td) == CUDNN_STATUS_SUCCESS && cudnnCreateActivationDescriptor(&act) == CUDNN_STATUS_SUCCESS &&
        cudnnSetTensor4dDescriptor(td, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 8, 8, 8) == CUDNN_STATUS_SUCCESS &&
        cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0) == CUDNN_STATUS_SUCCESS) {
        bool ok = true;
        for (int r = -1; r < reps && ok; r++) { // (r = -1: warm-up)
            cudaDeviceSynchronize();
            double t0 = cb_now_ms();
            for (int k = 0; k < HOST_CALLS; k++) ok &= cudnnActivationForward(c->dnn, act, &one, td, c->y, &zero, td, c->y) == CUDNN_STATUS_SUCCESS;
            double t1 = cb_now_ms();
            if (r >= 0) t[r] = (t1 - t0) / 1e3 / HOST_CALLS;
        }
        if (ok && cudaDeviceSynchronize() == cudaSuccess) s = cb_stats_of(t, reps).median;
    }
    if (td) cudnnDestroyTensorDescriptor(td);
    if (act) cudnnDestroyActivationDescriptor(act);
    return s;
}

// The same for a cuDNN graph plan's execution (cudnnBackendExecute with its variant pack): what a
// layer's convolution costs the host where the graph race chose an engine (the model's steps)
static double host_graph_call(ctx *c, const graph_arg *g) {
    double t[32];
    int reps = c->o->reps < 32 ? c->o->reps : 32;
    if (reps < 1) reps = 1;
    bool ok = true;
    for (int r = -1; r < reps && ok; r++) { // (r = -1: warm-up)
        if (cudaDeviceSynchronize() != cudaSuccess) return -1;
        double t0 = cb_now_ms();
        for (int k = 0; k < HOST_CALLS && ok; k++) ok &= run_graph(c, (void *)g) == 0;
        double t1 = cb_now_ms();
        if (r >= 0) t[r] = (t1 - t0) / 1e3 / HOST_CALLS;
    }
    return ok && cudaDeviceSynchronize() == cudaSuccess ? cb_stats_of(t, reps).median : -1;
}

// ---- set-up ---------------------------------------------------------------------------------
static size_t max_z(size_t a, size_t b) { return a > b ? a : b; }

// fills a device buffer with values in [-0.5, 0.5) from a 4 MiB host pattern
static bool fill(float *d, size_t n, const float *pat, size_t npat) {
    for (size_t o = 0; o < n; o += npat)
        if (cudaMemcpy(d + o, pat, (n - o < npat ? n - o : npat) * 4, cudaMemcpyHostToDevice) != cudaSuccess) return false;
    return true;
}

// the convolution shapes this run measures: the grid, or the ones given (o->shapes)
static int conv_shapes(const ctx *c, cb_conv_params *grid, const cb_conv_params **sh) {
    if (c->o->nshapes > 0) return *sh = c->o->shapes, c->o->nshapes;
    *sh = grid;
    return cb_cal_conv_shapes(grid, CB_CAL_MAX_SHAPES);
}

static cb_status setup(ctx *c) {
    cb_conv_params sh[CB_CAL_MAX_SHAPES], grid[CB_CAL_MAX_SHAPES];
    const cb_conv_params *cs;
    size_t nx = 1 << 16, nw = 1 << 16, ny = 1 << 16; // floats
    int n = conv_shapes(c, grid, &cs);
    for (int i = 0; i < n; i++) {
        const cb_conv_params *p = &cs[i];
        size_t c = p->groups == 1 ? (size_t)cb_conv_cpad_to(p->c, true) : (size_t)p->c; // (bf16's padded copy, cal_conv_dnn)
        nx = max_z(nx, (size_t)p->n * c * p->h * p->w);
        nw = max_z(nw, (size_t)p->k * (c / (size_t)p->groups) * p->r * p->s);
        ny = max_z(ny, (size_t)p->n * p->k * p->p * p->q);
    }
    n = cb_cal_fc_shapes(sh, CB_CAL_MAX_SHAPES);
    for (int i = 0; i < n; i++) {
        nx = max_z(nx, (size_t)sh[i].n * sh[i].c);
        nw = max_z(nw, (size_t)sh[i].c * sh[i].k);
        ny = max_z(ny, (size_t)sh[i].n * sh[i].k);
    }
    n = cb_cal_mop_shapes(sh, CB_CAL_MAX_SHAPES);
    int nm = n;
    n += cb_cal_pool_shapes(sh + n, CB_CAL_MAX_SHAPES - n);
    for (int i = 0; i < n; i++) {
        size_t t = (size_t)sh[i].n * sh[i].c * sh[i].h * sh[i].w;
        nx = max_z(nx, t);
        ny = max_z(ny, i < nm ? 2 * t : t); // (a concatenation's output: twice its input)
    }
    float **bufs[] = {&c->x, &c->dx, &c->w, &c->dw, &c->y, &c->dy};
    size_t sizes[] = {nx, nx, nw, nw, ny, ny};
    size_t npat = 1 << 20;
    float *pat = malloc(npat * 4);
    if (!pat) abort();
    uint64_t s = 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < npat; i++) {
        pat[i] = (float)((cb_rng_lcg(&s) >> 40) & 0xFFFF) / 65536.0f - 0.5f;
    }
    cb_status rc = CB_OK;
    for (int i = 0; i < 6 && rc == CB_OK; i++)
        if (cudaMalloc((void **)bufs[i], sizes[i] * 4) != cudaSuccess || !fill(*bufs[i], sizes[i], pat, npat))
            rc = cb_fail(c->err, CB_STATUS_NOMEM, "calibrate", NULL, "out of device memory for %.0f MB of buffers",
                         4.0 * (2 * nx + 2 * nw + 2 * ny) / 1e6);
    for (int i = 0; i < 8 && rc == CB_OK; i++)
        if (cudaMalloc((void **)&c->v[i], (1 << 16) * 4) != cudaSuccess || !fill(c->v[i], 1 << 16, pat, npat))
            rc = cb_fail(c->err, CB_STATUS_NOMEM, "calibrate", NULL, "out of device memory");
    c->pat = pat, c->npat = npat, c->nx = nx, c->nw = nw, c->ny = ny;
    if (rc != CB_OK) return rc;
    // batch-norm variances must be positive: 1 + pattern
    float ones[1 << 10];
    for (int i = 0; i < 1 << 10; i++) ones[i] = 1.0f + 0.25f * (float)(i % 7) / 7.0f;
    for (int o = 0; o < 1 << 16; o += 1 << 10) cudaMemcpy(c->v[3] + o, ones, sizeof ones, cudaMemcpyHostToDevice);
    if (cudaMalloc((void **)&c->argmax, ny * 4) != cudaSuccess)
        return cb_fail(c->err, CB_STATUS_NOMEM, "calibrate", NULL, "out of device memory");
    // the workspace: the limit, or as much as half the free memory allows
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    size_t want = (size_t)c->o->workspace_limit < fr / 2 ? (size_t)c->o->workspace_limit : fr / 2;
    while (want >= (1 << 20) && cudaMalloc(&c->ws, want) != cudaSuccess) {
        cudaGetLastError();
        want /= 2;
    }
    c->ws_bytes = c->ws ? want : 0;
    if (c->o->held && !cb_gpu_hold_ready(&c->hold))
        return cb_fail(c->err, CB_STATUS_NOMEM, "calibrate", NULL, "--timing held: no mapped host memory for the hold");
    if (!c->o->cache_hot) { // the step's cache state: a scratch of twice the L2 (the flush) and at least any input
        int dev = 0, l2 = 0;
        cudaGetDevice(&dev);
        if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess || l2 <= 0) l2 = 64 << 20;
        c->flush_bytes = 2 * (size_t)l2;
        c->scratch_bytes = max_z(c->flush_bytes, 4 * max_z(nx, ny));
        if (cudaMalloc(&c->scratch, c->scratch_bytes) != cudaSuccess)
            return cb_fail(c->err, CB_STATUS_NOMEM, "calibrate", NULL,
                           "out of device memory for the cache flush's %.0f MB (--cache hot needs none)", c->scratch_bytes / 1e6);
    }
    return CB_OK;
}

static void teardown(ctx *c) {
    float *b[] = {c->x, c->dx, c->w, c->dw, c->y, c->dy, c->v[0], c->v[1], c->v[2], c->v[3], c->v[4], c->v[5], c->v[6], c->v[7]};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
        if (b[i]) cudaFree(b[i]);
    if (c->argmax) cudaFree(c->argmax);
    if (c->ws) cudaFree(c->ws);
    if (c->scratch) cudaFree(c->scratch);
    c->out->hold_timeouts = cb_gpu_hold_timeouts(&c->hold);
    cb_gpu_hold_free(&c->hold);
    if (c->e0) cudaEventDestroy(c->e0);
    if (c->e1) cudaEventDestroy(c->e1);
    if (c->dnn) cudnnDestroy(c->dnn);
    if (c->blas) cublasDestroy(c->blas);
    free(c->pat);
}

// The convolutions' inputs (x, w, dy) in precision prec's storage: fp32 and tf32 the pattern's
// floats; bf16 (NHWC storage on cuDNN, as the backend's) the same values rounded to bf16, cast
// through the outputs' buffers (dx, dw, y: their contents do not matter)
static bool conv_inputs(ctx *c, cb_precision prec) {
    float *in[3] = {c->x, c->w, c->dy}, *tmp[3] = {c->dx, c->dw, c->y};
    size_t n[3] = {c->nx, c->nw, c->ny};
    for (int k = 0; k < 3; k++) {
        if (!fill(prec == CB_PREC_BF16 ? tmp[k] : in[k], n[k], c->pat, c->npat)) return false;
        if (prec == CB_PREC_BF16) cb_fmt_cast(n[k], tmp[k], 0, in[k], CB_FMT_BF16, NULL);
    }
    return cudaDeviceSynchronize() == cudaSuccess;
}

// brings the clocks up: fp32 GEMMs for about half a second
static void warm_up(ctx *c) {
    gemm_arg g = {CB_PHASE_FORWARD, CB_PREC_FP32, 4096, 4096, 4096};
    double t0 = cb_now_ms();
    while (cb_now_ms() - t0 < 500) {
        run_gemm(c, &g);
        cudaDeviceSynchronize();
    }
}

cb_status cb_gpu_calibrate(const cb_gpu_cal_opts *o, cb_gpu_cal *out, cb_error *err) {
    memset(out, 0, sizeof *out);
    if (!cb_gpu_available())
        return cb_fail(err, CB_STATUS_DEVICE, "--backend", NULL, "%s: no CUDA device is visible", o->backend);
    ctx c = {.o = o, .out = out, .err = err, .dnn_backend = cb_backend_caps_of(o->backend)->conv_library};
    int dev = 0;
    struct cudaDeviceProp prop;
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return fatal(&c, "cudaGetDeviceProperties", "");
    snprintf(out->gpu, sizeof out->gpu, "%.120s", prop.name);
    out->sms = prop.multiProcessorCount;
    out->l2_bytes = prop.l2CacheSize;
    out->mem_bytes = (double)prop.totalGlobalMem;
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess) out->clock_mhz = khz / 1e3;
    cb_status rc = CB_OK;
    if (cudnnCreate(&c.dnn) != CUDNN_STATUS_SUCCESS || cublasCreate(&c.blas) != CUBLAS_STATUS_SUCCESS ||
        cudaEventCreate(&c.e0) != cudaSuccess || cudaEventCreate(&c.e1) != cudaSuccess)
        rc = cb_fail(err, CB_STATUS_DEVICE, "calibrate", NULL, "cannot create cuDNN, cuBLAS or event handles");
    if (rc == CB_OK) cudnnSetStream(c.dnn, cudaStreamPerThread), cublasSetStream(c.blas, cudaStreamPerThread); // as the backends'
    if (rc == CB_OK) rc = setup(&c);
    unsigned sec = o->sections ? o->sections : CB_GPU_CAL_MOPS | CB_GPU_CAL_GEMM | CB_GPU_CAL_CONV;
    if (rc == CB_OK) {
        progress(&c, "calibrate: %s, warming up%s", out->gpu, "");
        warm_up(&c);
    }
    if (rc == CB_OK && (sec & CB_GPU_CAL_MOPS)) {
        cb_conv_params one = {.n = 1, .c = 1, .h = 1, .w = 1, .p = 1, .q = 1};
        out->launch_s = time_call(&c, run_launch, NULL, false) / 1e3;
        add(&c, CB_SAMPLE_MOP, "launch", CB_PHASE_FORWARD, CB_PREC_FP32, &one, out->launch_s * 1e3, 0);
        double h = time_host_call(&c);
        if (h > 0) out->host_call_s = h;
        rc = cal_mops(&c);
    }
    if (rc == CB_OK && (sec & CB_GPU_CAL_GEMM)) rc = cal_gemm(&c);
    cb_conv_params grid[CB_CAL_MAX_SHAPES];
    const cb_conv_params *sh;
    int ns = conv_shapes(&c, grid, &sh);
    int lo = o->shape_lo > 0 ? o->shape_lo : 0, hi = o->shape_hi >= 0 && o->shape_hi < ns ? o->shape_hi : ns - 1;
    for (int k = 0; rc == CB_OK && (sec & CB_GPU_CAL_CONV) && k < o->nprec; k++) {
        progress(&c, "calibrate: convolutions, %s, %s", o->backend, cb_precision_name(o->precs[k]));
        if (c.dnn_backend && !conv_inputs(&c, o->precs[k])) rc = fatal(&c, "convolution inputs", cb_precision_name(o->precs[k]));
        for (int i = lo; rc == CB_OK && i <= hi; i++) {
            char what[96];
            snprintf(what, sizeof what, "%d (%dx%dx%dx%d, K %d, %dx%d / %d)", i, sh[i].n, sh[i].c, sh[i].h, sh[i].w, sh[i].k,
                     sh[i].r, sh[i].s, sh[i].stride_h);
            progress(&c, "calibrate: shape %s%s", what, "");
            rc = c.dnn_backend ? cal_conv_dnn(&c, &sh[i], o->precs[k]) : cal_conv_own(&c, &sh[i], o->precs[k]);
        }
    }
    teardown(&c);
    if (rc != CB_OK) cb_gpu_cal_free(out);
    return rc;
}

void cb_gpu_cal_free(cb_gpu_cal *c) {
    free(c->s);
    c->s = NULL;
    c->n = c->cap = 0;
}
