// Convolutions through cuDNN's graph API (the backend descriptors), raced against the legacy
// algorithm cudnnFind picked. The legacy API (cudnnConvolutionForward and its kin) does not reach
// every engine: on the H200, PyTorch's cuDNN ran VGG-A's tf32 NHWC convolutions on the Hopper
// kernels (sm90_xmma_*_nhwckrsc_nhwc) in about 11.3 ms a step where the legacy algorithms took
// 14.6 (docs/results/2026-11-25-h200-bias.md). Here one operation per phase is built from the
// layer's legacy descriptors (the same tensors, filter, padding, strides, dilation, data and
// compute types), so the graph path runs exactly the convolution the legacy one does, on the same
// buffers: the heuristics' engine configs (mode A, then the fallback list) are finalised into
// plans, and the first 16 over both lists ($CONVBENCH_DNN_GRAPH_PLANS=N: N; first: one of each) within the
// workspace limit whose numerics the precision allows (and not compiled at run time but for a
// grouped convolution's, unless $CONVBENCH_DNN_GRAPH_RTC=on or off says) are timed on the layer's buffers (one run, then the mean of 3);
// the fastest is kept when it beats the legacy pick (both picks by cb_choice_pick: a plan of less
// workspace within --workspace-slack of the fastest is taken instead). $CONVBENCH_DNN_GRAPH: race (the default),
// off, force (the fastest graph plan wherever one runs: tests). On
// the H200 (docs/results/2026-11-27-h200-dnngraph.md) the race puts VGG-A b64 tf32 NHWC's
// convolutions on graph engines within 6% of PyTorch's cuDNN kernels (auto 16.99 -> 16.80 ms a
// step). (That run's "timing 16 plans finds nothing faster" timed two: see MAX_CFGS.)
//
// The engines' numerical notes are not trusted alone: no note marks every engine that computes
// below fp32's accuracy (on the H200, 2026-11-25, engine 17 computed AlexNet conv2's NHWC fp32
// filter gradient at 1.4e-3 relative error with no tensor-core note). So the plan a race would
// take is first run on fresh random operands beside a legacy FMA algorithm (implicit GEMM) on the
// same descriptors, and taken only when ||plan - legacy|| / ||legacy|| is within the precision's
// bound (cb_dnn_graph_tol); otherwise the next is checked. fp32's bound is what cudnnFind's own FFT and
// non-fused Winograd algorithms are allowed in fp32 (3e-3, tests/test_gpu.c), which is also how
// PyTorch's fp32 computes (FFT, Winograd): the check keeps out what is worse, and the choice
// carries the error measured (cb_choice.check_err).
#include "cudnn/graph.h"
#include "cuda/backend.h"
#include "cuda/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef cudnnBackendDescriptor_t bdesc;

// MAX_CFGS: engine configs read from each heuristics list; plans timed per phase: DEFAULT_TIMED over
// both lists unless $CONVBENCH_DNN_GRAPH_PLANS says (1..MAX_TIMED, or "first": the first of each list
// that finalises, ONE_PER_LIST). Until 2026-11-28 (night) the workspace query wrote its element count
// over the list's, so every race stopped after the first config of each list whatever
// $CONVBENCH_DNN_GRAPH_PLANS said; every figure recorded before then ran that. Measured on the H200
// (docs/results/2026-11-28-plans.md, call 1), first of each list / 6 / 16 plans, ms a step: a VGG-like
// random network b256 tf32 22.37 / 19.26 / 18.91, an Inception-like b192 tf32 27.74 / 27.94 / 27.61,
// ResNet-50 b64 bf16 12.29 / 12.30 / 12.27, the same memory, planning 2-7 s; so 16 is the default.
enum { UID_X = 1, UID_W = 2, UID_Y = 3, MAX_CFGS = 24, ONE_PER_LIST = 0, DEFAULT_TIMED = 16, GROUPED_TIMED = 6, MAX_TIMED = 2 * MAX_CFGS };

struct dnn_gplan {
    bdesc plan;
    bdesc vpack;         // for ptr[] and ws as last run (rebuilt when one moves)
    void *ptr[3];        // X, W, Y as the variant pack has them
    void *ws;
    int64_t ws_bytes;
    int64_t engine;      // the engine's global index
    uintptr_t align[3];  // the byte alignment each tensor was declared with
    double check_err;    // ||plan - legacy FMA|| / ||legacy|| on random operands (check_plan); -1 not checked
};

int64_t cb_dnn_graph_engine(const dnn_gplan *g) { return g ? g->engine : -1; }
double cb_dnn_graph_check_err(const dnn_gplan *g) { return g ? g->check_err : -1; }
size_t cb_dnn_graph_workspace(const dnn_gplan *g) { return g ? (size_t)g->ws_bytes : 0; }

cb_dnn_graph_mode cb_dnn_graph_mode_of(cb_precision prec) {
    (void)prec; // (every precision: the plans are checked, check_plan)
    const char *v = getenv("CONVBENCH_DNN_GRAPH");
    return !v || !*v || !strcmp(v, "race") ? CB_DNN_GRAPH_RACE
           : !strcmp(v, "off")              ? CB_DNN_GRAPH_OFF
           : !strcmp(v, "force")            ? CB_DNN_GRAPH_FORCE
                                            : CB_DNN_GRAPH_BAD;
}

bool cb_dnn_graph_plans_set(void) {
    const char *v = getenv("CONVBENCH_DNN_GRAPH_PLANS");
    return v && *v;
}
int cb_dnn_graph_plans(void) {
    const char *v = getenv("CONVBENCH_DNN_GRAPH_PLANS");
    if (!v || !*v) return DEFAULT_TIMED;
    if (!strcmp(v, "first")) return ONE_PER_LIST;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    return *end || n < 1 || n > MAX_TIMED ? -1 : (int)n;
}
int cb_dnn_graph_rtc(void) {
    const char *v = getenv("CONVBENCH_DNN_GRAPH_RTC");
    if (!v || !*v || !strcmp(v, "grouped")) return CB_DNN_RTC_GROUPED;
    if (!strcmp(v, "1") || !strcmp(v, "on")) return CB_DNN_RTC_ALL;
    if (!strcmp(v, "0") || !strcmp(v, "off")) return CB_DNN_RTC_NONE;
    return -1;
}

static bool set(bdesc d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, int64_t n, const void *v) {
    return cudnnBackendSetAttribute(d, a, t, n, v) == CUDNN_STATUS_SUCCESS;
}
static bdesc make(cudnnBackendDescriptorType_t t) {
    bdesc d = NULL;
    return cudnnBackendCreateDescriptor(t, &d) == CUDNN_STATUS_SUCCESS ? d : NULL;
}
static void drop(bdesc d) {
    if (d) cudnnBackendDestroyDescriptor(d);
}
static bdesc done(bdesc d, bool ok) { // finalised, or NULL (and destroyed)
    if (d && ok && cudnnBackendFinalize(d) == CUDNN_STATUS_SUCCESS) return d;
    drop(d);
    return NULL;
}

// the largest power of two up to 16 that divides p's address
static uintptr_t align_of(const void *p) {
    uintptr_t a = 16;
    while (a > 1 && ((uintptr_t)p & (a - 1))) a >>= 1;
    return a;
}

static bdesc tensor(cudnnDataType_t dt, const int64_t dim[4], const int64_t str[4], int64_t uid, uintptr_t align) {
    bdesc d = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t al = (int64_t)align;
    bool ok = d && set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt) &&
              set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dim) && set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, str) &&
              set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid) &&
              set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &al);
    return done(d, ok);
}
// the legacy tensor descriptor's dims and strides as a graph tensor
static bdesc tensor_of(cudnnTensorDescriptor_t td, int64_t uid, uintptr_t align) {
    cudnnDataType_t dt;
    int n, c, h, w, ns, cs, hs, ws;
    if (cudnnGetTensor4dDescriptor(td, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws) != CUDNN_STATUS_SUCCESS) return NULL;
    int64_t dim[4] = {n, c, h, w}, str[4] = {ns, cs, hs, ws};
    return tensor(dt, dim, str, uid, align);
}
// the legacy filter descriptor: dims K, C (of a group), R, S; KCRS or (format NHWC) KRSC strides
static bdesc filter_of(cudnnFilterDescriptor_t wd, int64_t uid, uintptr_t align) {
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    int k, c, r, s;
    if (cudnnGetFilter4dDescriptor(wd, &dt, &fmt, &k, &c, &r, &s) != CUDNN_STATUS_SUCCESS) return NULL;
    int64_t dim[4] = {k, c, r, s};
    int64_t nchw[4] = {(int64_t)c * r * s, (int64_t)r * s, s, 1}, nhwc[4] = {(int64_t)r * s * c, 1, (int64_t)s * c, c};
    return tensor(dt, dim, fmt == CUDNN_TENSOR_NHWC ? nhwc : nchw, uid, align);
}
static bdesc conv_of(cudnnConvolutionDescriptor_t cd) {
    // (a grouped convolution, depthwise too, needs no attribute: the graph takes the groups from the
    // filter's channels, C of a group, against the input's; cuDNN's depthwise kernels, PyTorch's
    // channels-last picks, are among its engines and none of the legacy algorithms)
    int ph, pw, u, v, dh, dw;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t ct;
    if (cudnnGetConvolution2dDescriptor(cd, &ph, &pw, &u, &v, &dh, &dw, &mode, &ct) != CUDNN_STATUS_SUCCESS) return NULL;
    int64_t dims = 2, pad[2] = {ph, pw}, stride[2] = {u, v}, dil[2] = {dh, dw};
    bdesc d = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    bool ok = d && set(d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims) &&
              set(d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct) &&
              set(d, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode) &&
              set(d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad) &&
              set(d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad) &&
              set(d, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil) &&
              set(d, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    return done(d, ok);
}

// phase p's operation on tensors X (x, or dx), W (w, or dw), Y (y, or dy): alpha 1, beta 0
static bdesc conv_op(cb_phase p, bdesc x, bdesc w, bdesc y, bdesc conv) {
    static const cudnnBackendDescriptorType_t type[3] = {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                                         CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                                         CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
    static const cudnnBackendAttributeName_t attr[3][6] = {
        {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
        {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
        {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA}};
    float alpha = 1, beta = 0; // (float compute: the scalars are float)
    bdesc d = make(type[p]);
    bool ok = d && set(d, attr[p][0], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x) && set(d, attr[p][1], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w) &&
              set(d, attr[p][2], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y) && set(d, attr[p][3], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv) &&
              set(d, attr[p][4], CUDNN_TYPE_FLOAT, 1, &alpha) && set(d, attr[p][5], CUDNN_TYPE_FLOAT, 1, &beta);
    return done(d, ok);
}

bool cb_dnn_graph_op_ok(cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t yd,
                        cudnnConvolutionDescriptor_t cd, cb_phase p) {
    bdesc tx = tensor_of(xd, UID_X, 16), tw = filter_of(wd, UID_W, 16), ty = tensor_of(yd, UID_Y, 16), conv = conv_of(cd);
    bdesc op = tx && tw && ty && conv ? conv_op(p, tx, tw, ty, conv) : NULL;
    bool ok = op != NULL;
    drop(op), drop(conv), drop(tx), drop(tw), drop(ty);
    return ok;
}

// Why the race leaves engine config cfg out, or NULL where it may run: its numerical notes in
// precision prec (inputs converted down, a reduced-precision reduction; tensor cores in fp32), or
// compiled at run time (NVRTC: a second or more to finalise) where rtc is false
static const char *notes_why(bdesc cfg, cb_precision prec, bool rtc, int64_t *engine) {
    bdesc eng = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t got = 0;
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    bool ok = eng && cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &eng) ==
                         CUDNN_STATUS_SUCCESS;
    if (ok && cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, engine) != CUDNN_STATUS_SUCCESS)
        *engine = -1;
    got = 0;
    const char *why = NULL;
    if (!ok || cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
                                        &got, notes) != CUDNN_STATUS_SUCCESS)
        why = "its engine or numerical notes not readable";
    for (int64_t j = 0; !why && j < got; j++)
        why = notes[j] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS                 ? "numerical note: inputs converted down"
              : notes[j] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION       ? "numerical note: reduced-precision reduction"
              : prec == CB_PREC_FP32 && notes[j] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ? "numerical note: tensor cores (fp32)"
                                                                                   : NULL;
    cudnnBackendBehaviorNote_t beh[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    got = 0;
    if (!why && !rtc &&
        cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &got,
                                 beh) == CUDNN_STATUS_SUCCESS)
        for (int64_t j = 0; !why && j < got; j++)
            if (beh[j] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) why = "compiled at run time (CONVBENCH_DNN_GRAPH_RTC=on lets it in)";
    drop(eng);
    return why;
}

static void gplan_free(dnn_gplan *g) {
    if (!g) return;
    drop(g->vpack);
    drop(g->plan);
    free(g);
}
void cb_dnn_graph_free(dnn_gplan *g) { gplan_free(g); }

// the variant pack for these pointers (kept while they stay)
static bool vpack_for(dnn_gplan *g, void *const ptr[3], void *ws) {
    if (g->vpack && !memcmp(g->ptr, ptr, sizeof g->ptr) && g->ws == ws) return true;
    for (int k = 0; k < 3; k++)
        if (align_of(ptr[k]) < g->align[k]) return false; // (declared with more alignment than this pointer has)
    drop(g->vpack);
    g->vpack = NULL;
    int64_t uids[3] = {UID_X, UID_W, UID_Y};
    bdesc v = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    bool ok = v && set(v, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptr) &&
              set(v, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids) &&
              set(v, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    g->vpack = done(v, ok);
    if (!g->vpack) return false;
    memcpy(g->ptr, ptr, sizeof g->ptr);
    g->ws = ws;
    return true;
}

bool cb_dnn_graph_exec(cudnnHandle_t h, dnn_gplan *g, const void *x, const void *w, const void *y, void *ws) {
    void *ptr[3] = {(void *)x, (void *)w, (void *)y};
    if (!vpack_for(g, ptr, g->ws_bytes ? ws : NULL)) return false;
    return cudnnBackendExecute(h, g->plan, g->vpack) == CUDNN_STATUS_SUCCESS;
}
bool cb_dnn_graph_run(cb_exec *e, dnn_gplan *g, const void *x, const void *w, const void *y, void *ws) {
    return cb_dnn_graph_exec(cb_dnn_state(e)->h, g, x, w, y, ws);
}

double cb_dnn_graph_race(cb_exec *e, int i, cb_phase p, const void *x, const void *w, const void *y, void *ws, size_t wsz,
                         dnn_gplan **best, int64_t *lost) {
    dnn_layer *l = cb_dnn_layer(e, i);
    static const char *const PH[CB_PHASE_COUNT] = {"forward", "backward-data", "backward-filter"};
    char trace[160];
    snprintf(trace, sizeof trace, "note: layer '%s' %s graph plan", e->net->layers[i].name, PH[p]);
    int left = 0;
    const char *why = "";
    cb_dnn_race_opts ro = {(double)e->opts.workspace_limit, cb_dnn_state(e)->pick, e->opts.workspace_slack,
                           e->opts.verbose > 0 ? trace : NULL, &left, &why};
    double ms = cb_dnn_graph_race_desc(cb_dnn_state(e)->h, l->xd, l->wd, l->yd, l->cd[p], p, e->opts.precision, &ro, x, w, y, ws, wsz,
                                       best, lost);
    // (a plan the race would have taken, kept out by the check: never silently)
    if (left)
        cb_exec_note(e, "layer '%s' %s: %d cuDNN graph plan%s left out of the race (%s), the first: %s (--verbose: each)",
                     e->net->layers[i].name, PH[p], left, left > 1 ? "s" : "",
                     *best ? "a slower one raced the legacy algorithm" : "none left to race the legacy algorithm", why);
    return ms;
}

// ms of 3 runs of plan g after the one before (events on the handle's stream); -1 when one failed,
// -2 when it took the device down with it
static double time_plan(cudnnHandle_t h, dnn_gplan *g, void *const ptr[3], void *ws) {
    cudaStream_t st = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    bool ran = cb_dnn_graph_exec(h, g, ptr[0], ptr[1], ptr[2], ws) && cudaDeviceSynchronize() == cudaSuccess;
    float ms = -1;
    if (ran && cudnnGetStream(h, &st) == CUDNN_STATUS_SUCCESS && cudaEventCreate(&t0) == cudaSuccess && cudaEventCreate(&t1) == cudaSuccess) {
        cudaEventRecord(t0, st);
        for (int r = 0; r < 3; r++) ran &= cb_dnn_graph_exec(h, g, ptr[0], ptr[1], ptr[2], ws);
        cudaEventRecord(t1, st);
        if (!ran || cudaEventSynchronize(t1) != cudaSuccess || cudaEventElapsedTime(&ms, t0, t1) != cudaSuccess) ms = -3;
    }
    if (t0) cudaEventDestroy(t0);
    if (t1) cudaEventDestroy(t1);
    if (!ran || cudaGetLastError() != cudaSuccess || ms < 0) { // (a launch that failed: not a candidate; -2 where the device went with it)
        cudaError_t rc;
        return cb_cuda_device_lost(&rc) ? -2 : -1;
    }
    return ms / 3;
}

// The most a graph plan's result may differ from the legacy FMA algorithm's on the same random
// operands, ||plan - legacy|| / ||legacy||: fp32, cudnnFind's own FFT and non-fused Winograd
// algorithms' bound in fp32 (tests/test_gpu.c: 1e-3 to 1.5e-3 measured for AlexNet conv2's 5x5);
// tf32 and bf16, twice the tests' per-layer tolerances (5e-3, 1.5e-2; the legacy side rounds too)
// ($CONVBENCH_DNN_GRAPH_TOL, a number from 0 to 1, replaces it in every precision: tests)
double cb_dnn_graph_tol(cb_precision prec) {
    const char *v = getenv("CONVBENCH_DNN_GRAPH_TOL");
    if (v && *v) {
        char *end = NULL;
        double t = strtod(v, &end);
        return *end || !(t >= 0 && t <= 1) ? -1 : t;
    }
    return prec == CB_PREC_BF16 ? 3e-2 : prec == CB_PREC_TF32 ? 1e-2 : 3e-3;
}

// a tensor descriptor's elements as laid out (the last one's offset + 1) and whether they are bf16;
// 0 where it cannot be read or holds another type
static size_t tensor_span(cudnnTensorDescriptor_t td, int *bf16) {
    cudnnDataType_t dt;
    int n, c, h, w, ns, cs, hs, ws;
    if (cudnnGetTensor4dDescriptor(td, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws) != CUDNN_STATUS_SUCCESS ||
        (dt != CUDNN_DATA_FLOAT && dt != CUDNN_DATA_BFLOAT16) || n < 1 || c < 1 || h < 1 || w < 1)
        return 0;
    *bf16 = dt == CUDNN_DATA_BFLOAT16;
    return 1 + (size_t)(n - 1) * ns + (size_t)(c - 1) * cs + (size_t)(h - 1) * hs + (size_t)(w - 1) * ws;
}
static size_t filter_span(cudnnFilterDescriptor_t wd, int *bf16) {
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    int k, c, r, s;
    if (cudnnGetFilter4dDescriptor(wd, &dt, &fmt, &k, &c, &r, &s) != CUDNN_STATUS_SUCCESS ||
        (dt != CUDNN_DATA_FLOAT && dt != CUDNN_DATA_BFLOAT16) || k < 1 || c < 1 || r < 1 || s < 1)
        return 0;
    *bf16 = dt == CUDNN_DATA_BFLOAT16;
    return (size_t)k * c * r * s;
}

// phase p by a legacy algorithm that multiplies in fp32 (implicit GEMM first; FMA math where the
// data is fp32) on buffers x, w, y (the output among them), workspace ws of wsz bytes: false where
// none of them runs
static bool legacy_ref(cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t yd,
                       cudnnConvolutionDescriptor_t cd, cb_phase p, bool fp32_data, void *x, void *w, void *y, void *ws, size_t wsz) {
    static const cudnnConvolutionFwdAlgo_t fa[] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_GEMM};
    static const cudnnConvolutionBwdDataAlgo_t da[] = {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0};
    static const cudnnConvolutionBwdFilterAlgo_t wa[] = {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
                                                         CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3};
    cudnnMathType_t saved = CUDNN_DEFAULT_MATH;
    cudnnGetConvolutionMathType(cd, &saved);
    if (fp32_data) cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH);
    const float one = 1, zero = 0;
    bool ran = false;
    for (int k = 0; !ran && k < 3; k++) {
        size_t need = 0;
        cudnnStatus_t st = CUDNN_STATUS_NOT_SUPPORTED;
        if (p == CB_PHASE_FORWARD) {
            if (cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, fa[k], &need) == CUDNN_STATUS_SUCCESS && need <= wsz)
                st = cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, fa[k], ws, wsz, &zero, yd, y);
        } else if (p == CB_PHASE_BWD_DATA) {
            if (k < 2 && cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, yd, cd, xd, da[k], &need) == CUDNN_STATUS_SUCCESS && need <= wsz)
                st = cudnnConvolutionBackwardData(h, &one, wd, w, yd, y, cd, da[k], ws, wsz, &zero, xd, x);
        } else if (cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, wd, wa[k], &need) == CUDNN_STATUS_SUCCESS && need <= wsz) {
            st = cudnnConvolutionBackwardFilter(h, &one, xd, x, yd, y, cd, wa[k], ws, wsz, &zero, wd, w);
        }
        ran = st == CUDNN_STATUS_SUCCESS && cudaDeviceSynchronize() == cudaSuccess;
    }
    cudnnSetConvolutionMathType(cd, saved);
    return ran;
}

// plan g's ||result - legacy|| / ||legacy|| for phase p on fresh random operands in buffers of its
// own (uniform in [-1, 1), seeded by the shape), against legacy_ref; -1 where it could not be
// measured (*why says why: no memory for the operands, no legacy algorithm ran, a CUDA error)
static double check_plan(cudnnHandle_t h, dnn_gplan *g, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t yd,
                         cudnnConvolutionDescriptor_t cd, cb_phase p, void *ws, size_t wsz, const char **why) {
    int bx = 0, bw = 0, by = 0;
    size_t n[3] = {tensor_span(xd, &bx), filter_span(wd, &bw), tensor_span(yd, &by)};
    int bf[3] = {bx, bw, by};
    *why = "not checked, a descriptor it cannot read";
    if (!n[0] || !n[1] || !n[2]) return -1;
    int out = p == CB_PHASE_FORWARD ? 2 : p == CB_PHASE_BWD_DATA ? 0 : 1; // (the operand the phase writes)
    void *buf[3] = {NULL, NULL, NULL}, *ref = NULL;
    double err = -1;
    *why = "not checked, no memory for its operands";
    bool ok = true;
    for (int k = 0; k < 3; k++) ok = ok && cudaMalloc(&buf[k], n[k] * (bf[k] ? 2 : 4)) == cudaSuccess;
    ok = ok && cudaMalloc(&ref, n[out] * (bf[out] ? 2 : 4)) == cudaSuccess;
    if (ok) {
        *why = "not checked, a CUDA error";
        uint64_t seed = 0x5EED ^ ((uint64_t)n[0] << 20) ^ ((uint64_t)n[1] << 7) ^ (uint64_t)n[2];
        for (int k = 0; ok && k < 3; k++)
            ok = k == out ? cudaMemset(buf[k], 0, n[k] * (bf[k] ? 2 : 4)) == cudaSuccess
                          : cb_cuda_fill_uniform(n[k], buf[k], bf[k], seed + (uint64_t)k) == 0;
        ok = ok && cudaMemset(ref, 0, n[out] * (bf[out] ? 2 : 4)) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
        ok = ok && cb_dnn_graph_exec(h, g, buf[0], buf[1], buf[2], ws) && cudaDeviceSynchronize() == cudaSuccess;
        if (ok) {
            void *r[3] = {buf[0], buf[1], buf[2]};
            r[out] = ref;
            *why = "not checked, no legacy algorithm ran it";
            ok = legacy_ref(h, xd, wd, yd, cd, p, !bf[0] && !bf[1] && !bf[2], r[0], r[1], r[2], ws, wsz);
        }
        if (ok) {
            *why = "not checked, a CUDA error";
            err = cb_cuda_nerr(n[out], buf[out], ref, bf[out]);
        }
    }
    for (int k = 0; k < 3; k++) cudaFree(buf[k]);
    cudaFree(ref);
    cudaGetLastError();
    return ok ? err : -1;
}

// --verbose: an engine config of list m (0 the heuristics', 1 the fallback) that the race did not time, and why
static void trace_left(const cb_dnn_race_opts *ro, int64_t engine, int m, const char *why) {
    if (ro->trace) fprintf(stderr, "%s: engine %lld (%s list) left out: %s\n", ro->trace, (long long)engine, m ? "fallback" : "heuristics", why);
}

double cb_dnn_graph_race_desc(cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t yd,
                              cudnnConvolutionDescriptor_t cd, cb_phase p, cb_precision prec, const cb_dnn_race_opts *ro, const void *x,
                              const void *w, const void *y, void *ws, size_t wsz, dnn_gplan **best, int64_t *lost) {
    *best = NULL;
    const double ws_limit = ro->ws_limit;
    const int pick = ro->pick;
    *lost = -1;
    void *ptr[3] = {(void *)x, (void *)w, (void *)y};
    uintptr_t al[3] = {align_of(x), align_of(w), align_of(y)};
    // Tensors less than 16-byte aligned (a view into a larger buffer) stay with the legacy
    // algorithms: engines declared for them have faulted (cudaErrorMisalignedAddress), which no
    // later call survives. (Every buffer the engine allocates starts on 256 bytes.)
    if (al[0] < 16 || al[1] < 16 || al[2] < 16) return -1;
    bdesc tx = tensor_of(xd, UID_X, al[0]), tw = filter_of(wd, UID_W, al[1]), ty = tensor_of(yd, UID_Y, al[2]);
    bdesc conv = conv_of(cd);
    bdesc op = tx && tw && ty && conv ? conv_op(p, tx, tw, ty, conv) : NULL;
    bdesc graph = NULL;
    if (op) {
        graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
        graph = done(graph, graph && set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op) &&
                                set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
    }
    // the plans that ran, kept to the end: the pick weighs each one's time and workspace
    dnn_gplan *cand[MAX_TIMED];
    double cand_ms[MAX_TIMED];
    size_t cand_ws[MAX_TIMED];
    int ncand = 0;
    // the heuristics' list (mode A), then the fallback list: engine configs, best guess first
    static const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    int64_t tried[2 * MAX_CFGS];
    // a grouped (depthwise) convolution: engines compiled at run time race too unless
    // $CONVBENCH_DNN_GRAPH_RTC=off (cuDNN's depthwise kernels are among them, the fast ones: on
    // the H200, 2026-11-29, an odd-channel MobileNet-like network's bf16 step went from 26.2 to
    // 19.9 ms), and at most GROUPED_TIMED plans a phase are timed where $CONVBENCH_DNN_GRAPH_PLANS
    // is unset (its 16 took planning from 3.3 to 34 s there: the slow engines' runs and the
    // compilations)
    int groups = 1;
    cudnnGetConvolutionGroupCount(cd, &groups);
    const int rtc_mode = cb_dnn_graph_rtc();
    const bool rtc = rtc_mode == CB_DNN_RTC_ALL || (rtc_mode == CB_DNN_RTC_GROUPED && groups > 1);
    const int want = groups > 1 && !cb_dnn_graph_plans_set() ? GROUPED_TIMED : cb_dnn_graph_plans(); // (0: the first of each list)
    int ntried = 0, timed = 0, max_timed = want > 0 ? want : MAX_TIMED;
    for (int m = 0; graph && m < 2 && timed < max_timed; m++) {
        bdesc heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        heur = done(heur, heur && set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph) &&
                              set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &modes[m]));
        int64_t count = 0;
        if (!heur || cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL) !=
                         CUDNN_STATUS_SUCCESS) {
            drop(heur);
            continue;
        }
        if (ro->trace)
            fprintf(stderr, "%s: the %s list offers %lld engine config%s (%d read at most)\n", ro->trace, m ? "fallback" : "heuristics",
                    (long long)count, count == 1 ? "" : "s", MAX_CFGS);
        if (count > MAX_CFGS) count = MAX_CFGS;
        bdesc cfg[MAX_CFGS] = {0};
        int64_t made = 0;
        for (; made < count; made++)
            if (!(cfg[made] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))) break;
        int64_t got = 0;
        if (made && cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &got, cfg) !=
                        CUDNN_STATUS_SUCCESS)
            got = 0;
        bool finalised = false; // (one of this list's configs made a plan)
        for (int64_t c = 0; c < got && timed < max_timed && !(want == ONE_PER_LIST && finalised); c++) {
            int64_t engine = -1;
            const char *skip = notes_why(cfg[c], prec, rtc, &engine);
            if (skip) {
                trace_left(ro, engine, m, skip);
                continue;
            }
            bool seen = false;
            for (int k = 0; m == 1 && k < ntried; k++) seen |= tried[k] == engine && engine >= 0;
            if (seen) continue; // (the fallback list repeats mode A's engines; within a list, knob variants differ)
            if (m == 0 && ntried < 2 * MAX_CFGS) tried[ntried++] = engine;
            bdesc plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
            plan = done(plan, plan && set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h) &&
                                  set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[c]));
            int64_t need = -1, nv = 0; // (nv: its own count, never the list's)
            finalised |= plan != NULL;
            bool sized = plan && cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &nv, &need) ==
                                     CUDNN_STATUS_SUCCESS && need >= 0;
            if (!sized || (size_t)need > wsz || (double)need > ws_limit) {
                char why[96];
                snprintf(why, sizeof why, "workspace %.2f MiB beyond the limit, %.2f MiB", need / 1048576.0,
                         (wsz < ws_limit ? (double)wsz : ws_limit) / 1048576.0);
                trace_left(ro, engine, m, sized ? why : plan ? "its workspace size not readable" : "its plan not finalised (not supported for this shape)");
                drop(plan);
                continue;
            }
            dnn_gplan *g = calloc(1, sizeof *g);
            if (!g) abort();
            g->plan = plan, g->ws_bytes = need, g->engine = engine, g->check_err = -1;
            memcpy(g->align, al, sizeof al);
            double ms = time_plan(h, g, ptr, ws);
            timed++;
            if (ms < -1.5) { // the engine took the device down: nothing after it can run
                *lost = engine;
                gplan_free(g);
                for (int k = 0; k < ncand; k++) gplan_free(cand[k]);
                ncand = 0;
                timed = max_timed;
                break;
            }
            if (ro->trace && ms >= 0)
                fprintf(stderr, "%s: engine %lld, %.4f ms, workspace %.2f MiB\n", ro->trace, (long long)engine, ms, need / 1048576.0);
            else trace_left(ro, engine, m, "it failed to run");
            if (ms >= 0 && ncand < MAX_TIMED) cand[ncand] = g, cand_ms[ncand] = ms, cand_ws[ncand++] = (size_t)need;
            else gplan_free(g);
        }
        for (int64_t c = 0; c < made; c++) drop(cfg[c]);
        drop(heur);
    }
    drop(graph), drop(op), drop(conv), drop(tx), drop(tw), drop(ty);
    // $CONVBENCH_DNN_PICK=K: the K-th plan that ran (the last where fewer), whatever its time; the
    // pick checked against the legacy algorithm, and dropped (the next picked) where it is off
    int j = -1;
    while (ncand > 0) {
        j = pick >= 0 ? (pick < ncand ? pick : ncand - 1) : cb_choice_pick(cand_ms, cand_ws, ncand, ro->slack);
        if (j < 0) break;
        const char *why = "";
        double err = check_plan(h, cand[j], xd, wd, yd, cd, p, ws, wsz, &why);
        cand[j]->check_err = err;
        if (err >= 0 && err <= cb_dnn_graph_tol(prec)) break;
        if (ro->left_out && !(*ro->left_out)++ && ro->left_why)
            *ro->left_why = err >= 0 ? "its result off the legacy algorithm's beyond the precision's bound" : why;
        if (ro->trace) {
            if (err >= 0)
                fprintf(stderr, "%s: engine %lld left out: %.2e from the legacy algorithm's result, over %.0e\n", ro->trace,
                        (long long)cand[j]->engine, err, cb_dnn_graph_tol(prec));
            else fprintf(stderr, "%s: engine %lld left out: %s\n", ro->trace, (long long)cand[j]->engine, why);
        }
        gplan_free(cand[j]);
        for (int k = j; k + 1 < ncand; k++) cand[k] = cand[k + 1], cand_ms[k] = cand_ms[k + 1], cand_ws[k] = cand_ws[k + 1];
        ncand--, j = -1;
    }
    double best_ms = j >= 0 ? cand_ms[j] : -1;
    if (j >= 0 && ro->trace)
        fprintf(stderr, "%s: engine %lld checked: %.2e from the legacy algorithm's result\n", ro->trace, (long long)cand[j]->engine,
                cand[j]->check_err);
    for (int k = 0; k < ncand; k++)
        if (k == j) *best = cand[k];
        else gplan_free(cand[k]);
    return best_ms;
}
