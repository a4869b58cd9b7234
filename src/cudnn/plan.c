// The cudnn backend's choices per layer (the backend itself: backend.c): cuDNN's algorithms
// found with cudnnFind*Ex within the workspace, the probe of what cuDNN refuses, pooling's and
// batch norm's choice, and what the backend supports before any of it (reason codes).
#include "cudnn/backend_impl.h"
#include "cudnn/graph.h"
#include "blas/blas.h"
#include "cuda/conv_algo.h"
#include "cuda/launch.h"
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

// (dnn.h) the own depthwise kernel for phase p of conv layer i: its workspace and choice, why: what
// cuDNN lacks (a CB_CHOICE_ flag; 0 where auto raced it)
void cb_dnn_take_dw(cb_exec *e, int i, int p, unsigned why) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    cb_conv_params cp;
    cb_conv_params_of(L, &cp);
    lay(e, i)->dw[p] = true;
    b->ws[p] = p == CB_PHASE_BWD_FILTER ? cb_cuda_dw_workspace(&cp, is_nhwc(e)) : 0;
    b->choice[p] = cb_choice_of(CB_IMPL_OWN, cb_cuda_conv_algo_index(&cb_conv_algo_depthwise), "depthwise");
    b->choice[p].flags |= why;
}

// (dnn.h) the own wgmma kernel on bf16 NHWC storage for phase p of conv layer i: its workspace and
// choice; the choice it replaces (cuDNN's, where there was one) kept for the step check's way back
void cb_dnn_take_wg(cb_exec *e, int i, cb_phase p) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    cb_conv_params cp;
    cb_conv_params_of(L, &cp);
    l->wg_rival[p] = b->choice[p];
    l->wg_rival[p].workspace = b->ws[p];
    l->wg[p] = true;
    const int mode = cb_dnn_wg_mode(e);
    const cb_cuda_conv_algo *a = mode == 0 ? &cb_conv_algo_igemm_wgmma_bf16 : mode == 1 ? &cb_conv_algo_igemm_wgmma_tf32 : &cb_conv_algo_igemm_wgmma_x3;
    b->ws[p] = cb_cuda_wg_store_workspace(&cp, p, mode);
    b->choice[p] = cb_choice_of(CB_IMPL_OWN, cb_cuda_conv_algo_index(a), a->name);
}

// The input that cuDNN's convolution of layer i reads: under NHWC its channels padded
// (cb_store_conv_cpad), and where the trailing padding exceeds the leading (TF SAME) zero rows and
// columns added at the end, as cuDNN pads both sides alike (its output size: (h + 2 pad - dil (r - 1)
// - 1) / stride + 1). False: L->in itself (or leading padding larger, which no copy helps).
static int64_t sym_out(int64_t h, int pad, int r, int dil, int stride) { return (h + 2 * pad - (int64_t)dil * (r - 1) - 1) / stride + 1; }
bool cb_dnn_conv_xin(const cb_exec *e, const cb_layer *L, cb_shape *xin) {
    const cb_window *w = &L->p.conv.win;
    int dh = cb_dnn_dil(L->p.conv.dil_h), dw = cb_dnn_dil(L->p.conv.dil_w);
    *xin = L->in;
    int64_t cg = cb_store_conv_cpad(e, L); // (of a group: a grouped convolution's stay as they are)
    if (cg != L->p.conv.cin) xin->c = cg;
    if (sym_out(xin->h, w->pad_top, w->r, dh, w->stride_h) != L->out.h)
        xin->h += (L->out.h - 1) * w->stride_h + (int64_t)(w->r - 1) * dh + 1 - 2 * w->pad_top - L->in.h;
    if (sym_out(xin->w, w->pad_left, w->s, dw, w->stride_w) != L->out.w)
        xin->w += (L->out.w - 1) * w->stride_w + (int64_t)(w->s - 1) * dw + 1 - 2 * w->pad_left - L->in.w;
    if (xin->h < L->in.h || xin->w < L->in.w || sym_out(xin->h, w->pad_top, w->r, dh, w->stride_h) != L->out.h ||
        sym_out(xin->w, w->pad_left, w->s, dw, w->stride_w) != L->out.w) {
        *xin = L->in;
        return false;
    }
    return xin->c != L->in.c || xin->h != L->in.h || xin->w != L->in.w;
}

// the engine's be->input_copy: a conv's padded input (cb_dnn_conv_xin), an FC layer's permuted one
size_t cb_dnn_input_copy(const cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_shape xin;
    if (L->op == CB_OP_CONV && cb_dnn_conv_xin(e, L, &xin)) return (size_t)cb_shape_count(xin) * e->act_bytes;
    if (L->op == CB_OP_FC && cb_blas_fc_permutes(e, i)) return (size_t)cb_shape_count(L->in) * e->act_bytes;
    return 0;
}

static cb_status plan_conv(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_state *d = dnn(e);
    dnn_layer *l = lay(e, i);
    const cb_window *w = &L->p.conv.win;
    int on, oc, oh, ow;
    int cg = (int)cb_store_conv_cpad(e, L); // the input channels (of a group), padded under NHWC where needed
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
        DNN_TRY(cudnnSetConvolution2dDescriptor(l->cd[p], w->pad_top, w->pad_left, w->stride_h, w->stride_w, cb_dnn_dil(L->p.conv.dil_h),
                                                cb_dnn_dil(L->p.conv.dil_w),
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        DNN_TRY(cudnnSetConvolutionGroupCount(l->cd[p], L->p.conv.groups));
        DNN_TRY(cudnnSetConvolutionMathType(l->cd[p], d->math));
    }
    DNN_TRY(cudnnGetConvolution2dForwardOutputDim(l->cd[0], l->xd, l->wd, &on, &oc, &oh, &ow));
    if (oh != L->out.h || ow != L->out.w) {
        // trailing pads larger than the leading ones (TF SAME): cuDNN runs on a copy of the input
        // with the difference added as zero rows and columns at the end (in every storage; under
        // auto, fp32 NCHW, the own kernels that take the padding as it is race it)
        int64_t eh = (L->out.h - 1) * w->stride_h + (w->r - 1) * cb_dnn_dil(L->p.conv.dil_h) + 1 - 2 * w->pad_top - L->in.h;
        int64_t ew = (L->out.w - 1) * w->stride_w + (w->s - 1) * cb_dnn_dil(L->p.conv.dil_w) + 1 - 2 * w->pad_left - L->in.w;
        if (eh > 0) xin.h += eh;
        if (ew > 0) xin.w += ew;
        DNN_TRY(set4d(e, &l->xd, xin));
        DNN_TRY(cudnnGetConvolution2dForwardOutputDim(l->cd[0], l->xd, l->wd, &on, &oc, &oh, &ow));
    }
    if (oh != L->out.h || ow != L->out.w) { // leading pads larger than trailing ones: no copy helps cuDNN
        if (cb_dnn_dw_ok(e, i)) { // a depthwise convolution: the own kernel takes any padding
            cb_status st = cb_store_plan_weights(e, i, err);
            for (int p = 0; st == CB_OK && p < CB_PHASE_COUNT; p++)
                if (p == 0 || (p == 1 && e->lb[L->parents[0]].dy) || (p == 2 && b->dw)) cb_dnn_take_dw(e, i, p, CB_CHOICE_ASYM_PAD);
            return st;
        }
        bool wg_all = !native(e);
        for (int p = 0; p < CB_PHASE_COUNT; p++)
            if (p == 0 || (p == 1 && e->lb[L->parents[0]].dy) || (p == 2 && b->dw)) wg_all = wg_all && cb_dnn_wg_ok(e, i, (cb_phase)p);
        if (wg_all) { // bf16 NHWC: the own wgmma kernel takes any padding
            cb_status st = cb_store_plan_weights(e, i, err);
            for (int p = 0; st == CB_OK && p < CB_PHASE_COUNT; p++)
                if (p == 0 || (p == 1 && e->lb[L->parents[0]].dy) || (p == 2 && b->dw)) {
                    cb_dnn_take_wg(e, i, (cb_phase)p);
                    b->choice[p].flags |= CB_CHOICE_ASYM_PAD;
                }
            return st;
        }
        if (!native(e) || !cb_dnn_conv_own_ok(L))
            return decline(e, L, err, CB_REASON_ASYM_PADDING, "leading padding larger than trailing, which cuDNN lacks" OWN_NCHW);
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            bool needed = p == 0 || (p == 1 && e->lb[L->parents[0]].dy) || (p == 2 && b->dw);
            if (!needed) continue;
            l->own[p] = true;
            cb_cuda_conv_choose(e, i, (cb_phase)p, d->policy != NULL);
            b->choice[p].flags |= CB_CHOICE_ASYM_PAD;
        }
        return CB_OK;
    }
    if (!native(e)) {
        cb_status st = cb_store_plan_weights(e, i, err);
        if (st != CB_OK) return st;
    }
    const void *x = e->lb[L->parents[0]].y;
    void *y = cb_exec_op_out(e, i), *dx = e->lb[L->parents[0]].dy;
    l->xs = xin;
    if (xin.c != L->in.c || xin.h != L->in.h || xin.w != L->in.w) { // the arena's copies (cb_dnn_input_copy)
        cb_shape want;
        if (!cb_dnn_conv_xin(e, L, &want) || want.c != xin.c || want.h != xin.h || want.w != xin.w || !b->xcopy ||
            (e->opts.train && (!b->xcopy_bwd || (dx && !b->dxcopy))))
            return cb_fail(err, CB_STATUS_UNSUPPORTED, e->net->path, L->name, "internal: its padded input (%lld, %lld, %lld) was not planned",
                           (long long)xin.c, (long long)xin.h, (long long)xin.w);
        l->xpad = b->xcopy, l->xpad_bwd = b->xcopy_bwd;
        l->dxpad = dx ? b->dxcopy : NULL;
        x = l->xpad;
        dx = l->dxpad;
    }
    size_t wsz = 0;
    void *ws = find_ws(e, &wsz);
    const void *wf = cb_store_weights(e, i);
    void *dwf = b->dw ? cb_store_wgrad(e, i) : NULL;
    double dnn_ms[CB_PHASE_COUNT] = {-1, -1, -1};
    enum { NA = 8 };
    int ret = 0;
    cudnnStatus_t sts[NA];
    int algs[NA];
    size_t mems[NA];
    // each phase: of cudnnFind*AlgorithmEx's results (fastest first) that ran within the workspace
    // limit, the least workspace within --workspace-slack of the fastest (cb_choice_pick) becomes its
    // algorithm, workspace, time and choice ($CONVBENCH_DNN_PICK: a test's K-th); --verbose lists them all
#define FIND_BEST(PERF_T, PH, PHASE_NAME, NAMES, NNAMES, ALGO_FIELD, FIND_CALL)                                      \
    do {                                                                                                               \
        PERF_T pf[NA];                                                                                                 \
        cudnnStatus_t st = FIND_CALL;                                                                                  \
        for (int j = 0; j < ret; j++) sts[j] = pf[j].status, algs[j] = pf[j].algo, mems[j] = pf[j].memory;             \
        note_skips(e, L, PHASE_NAME, ret, sts, algs, mems);                                                            \
        int runs = 0, j = -1; /* $CONVBENCH_DNN_PICK's (the last where fewer), else cb_choice_pick's */               \
        double run_ms[NA];                                                                                             \
        for (int k = 0; k < NA; k++) {                                                                                 \
            bool ok = st == CUDNN_STATUS_SUCCESS && k < ret && pf[k].status == CUDNN_STATUS_SUCCESS &&                 \
                      pf[k].memory <= e->opts.workspace_limit;                                                         \
            run_ms[k] = ok ? pf[k].time : -1;                                                                          \
            if (ok && e->opts.verbose > 0)                                                                             \
                fprintf(stderr, "note: layer '%s' %s algorithm %s: %.4f ms, workspace %.2f MiB\n", L->name, PHASE_NAME,  \
                        algo_name(NAMES, NNAMES, pf[k].algo), pf[k].time, pf[k].memory / 1048576.0);                   \
            if (ok && d->pick >= 0 && (j < 0 || runs <= d->pick)) j = k, runs++;                                       \
            if (ok && l->nalt[PH] < 8)                                                                                 \
                l->alt[PH][l->nalt[PH]++] = (struct dnn_alt){(int)pf[k].algo, pf[k].mathType, pf[k].memory, pf[k].time}; \
        }                                                                                                              \
        if (d->pick < 0) j = cb_choice_pick(run_ms, mems, ret < NA ? ret : NA, e->opts.workspace_slack);               \
        if (j >= 0) {                                                                                                  \
            l->ALGO_FIELD = pf[j].algo;                                                                                \
            b->ws[PH] = pf[j].memory;                                                                                  \
            dnn_ms[PH] = pf[j].time;                                                                                   \
            cudnnSetConvolutionMathType(l->cd[PH], pf[j].mathType);                                                    \
            b->choice[PH] = cb_choice_of(CB_IMPL_CUDNN, pf[j].algo, algo_name(NAMES, NNAMES, pf[j].algo));             \
            b->choice[PH].ms = pf[j].time;                                                                             \
            if (d->pick >= 0) b->choice[PH].flags |= CB_CHOICE_FORCED;                                                 \
        }                                                                                                              \
    } while (0)
    FIND_BEST(cudnnConvolutionFwdAlgoPerf_t, 0, "forward", fwd_name, 8, fwd,
              cudnnFindConvolutionForwardAlgorithmEx(d->h, l->xd, x, l->wd, wf, l->cd[0], l->yd, y, NA, &ret, pf, ws, wsz));
    if (dx)
        FIND_BEST(cudnnConvolutionBwdDataAlgoPerf_t, 1, "backward-data", bwd_data_name, 6, bwd_data,
                  cudnnFindConvolutionBackwardDataAlgorithmEx(d->h, l->wd, wf, l->yd, y, l->cd[1], l->xd, dx, NA, &ret, pf, ws, wsz));
    if (b->dw)
        FIND_BEST(cudnnConvolutionBwdFilterAlgoPerf_t, 2, "backward-filter", bwd_filter_name, 7, bwd_filter,
                  cudnnFindConvolutionBackwardFilterAlgorithmEx(d->h, l->xd, x, l->yd, y, l->cd[2], l->wd, dwf, NA, &ret, pf, ws, wsz));
#undef FIND_BEST
    // the graph API's engines for each phase, against the legacy pick (src/cudnn/graph.c), on the
    // buffers cudnnFind timed (y as the output gradient)
    cb_dnn_graph_mode gm = cb_dnn_graph_mode_of(e->opts.precision);
    for (int p = 0; gm != CB_DNN_GRAPH_OFF && p < CB_PHASE_COUNT; p++) {
        if (!(p == 0 || (p == 1 && dx) || (p == 2 && b->dw))) continue;
        dnn_gplan *g = NULL;
        int64_t lost = -1;
        double ms = cb_dnn_graph_race(e, i, (cb_phase)p, p == 1 ? dx : x, p == 2 ? dwf : wf, y, ws, wsz, &g, &lost);
        if (lost >= 0) { // a cuDNN engine's kernel failed and took the device with it: say which, and stop
            cudaError_t rc = cudaDeviceSynchronize();
            cudaFree(ws);
            return cb_fail(err, CB_STATUS_DEVICE, e->net->path, L->name,
                           "cuDNN graph engine %lld failed in the %s race and the GPU with it (%s: %s); "
                           "CONVBENCH_DNN_GRAPH=off runs without the graph race",
                           (long long)lost, p == 0 ? "forward" : p == 1 ? "backward-data" : "backward-filter", cudaGetErrorName(rc),
                           cudaGetErrorString(rc));
        }
        // the graph plan against the legacy pick, by cb_choice_pick's rule too
        const double two_ms[2] = {dnn_ms[p], g ? ms : -1};
        const size_t two_ws[2] = {b->ws[p], cb_dnn_graph_workspace(g)};
        if (g && (gm == CB_DNN_GRAPH_FORCE || cb_choice_pick(two_ms, two_ws, 2, e->opts.workspace_slack) == 1)) {
            l->g[p] = g;
            b->ws[p] = cb_dnn_graph_workspace(g);
            b->choice[p] = cb_choice_of(CB_IMPL_CUDNN, (int)cb_dnn_graph_engine(g), "cuDNN graph engine");
            b->choice[p].ms = ms, b->choice[p].rival_ms = dnn_ms[p], b->choice[p].check_err = cb_dnn_graph_check_err(g);
            b->choice[p].flags |= CB_CHOICE_RACED | CB_CHOICE_GRAPH_API | (gm == CB_DNN_GRAPH_FORCE ? CB_CHOICE_FORCED : 0);
            dnn_ms[p] = ms;
        } else if (g) l->galt[p] = g, l->galt_ms[p] = ms; // (the step check's candidate)
    }
    cudaFree(ws);
    cudaGetLastError();
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        bool needed = p == 0 || (p == 1 && dx) || (p == 2 && b->dw);
        if (!needed) continue;
        size_t dnn_ws = b->ws[p];
        cb_choice *c = &b->choice[p];
        if (dnn_ms[p] < 0 && cb_dnn_dw_ok(e, i)) { // no cuDNN algorithm fits: the own depthwise kernel
            cb_dnn_take_dw(e, i, p, CB_CHOICE_NO_LIB_FIT);
        } else if (dnn_ms[p] < 0 && cb_dnn_wg_ok(e, i, (cb_phase)p)) { // or the own wgmma kernel on bf16 NHWC
            cb_dnn_take_wg(e, i, (cb_phase)p);
            c->flags |= CB_CHOICE_NO_LIB_FIT;
        } else if (dnn_ms[p] < 0 && (!native(e) || !cb_dnn_conv_own_ok(L))) {
            return decline(e, L, err, CB_REASON_NO_ALGORITHM, p == 0 ? "no cuDNN forward algorithm runs it within the workspace limit" OWN_NCHW
                                      : p == 1 ? "no cuDNN backward-data algorithm runs it within the workspace limit" OWN_NCHW
                                               : "no cuDNN backward-filter algorithm runs it within the workspace limit" OWN_NCHW);
        } else if (dnn_ms[p] < 0) { // no cuDNN algorithm fits: an own kernel
            l->own[p] = true;
            cb_cuda_conv_choose(e, i, (cb_phase)p, d->policy != NULL);
            c->flags |= CB_CHOICE_NO_LIB_FIT;
        } else if (l->xpad && cg != L->p.conv.cin) {
            c->flags |= CB_CHOICE_CHANNEL_PAD | (xin.h != L->in.h || xin.w != L->in.w ? CB_CHOICE_SAME_COPY : 0);
            c->pad_from = L->p.conv.cin, c->pad_to = cg;
        } else if (l->xpad && !(d->policy && (native(e) || cb_dnn_dw_ok(e, i) || cb_dnn_wg_ok(e, i, (cb_phase)p)))) { // (auto: raced against own kernels)
            c->flags |= CB_CHOICE_SAME_COPY;
        } else if (d->policy) {
            d->policy->conv_phase(e, i, (cb_phase)p, dnn_ms[p], dnn_ws);
            if (l->xpad && c->impl == CB_IMPL_CUDNN) c->flags |= CB_CHOICE_SAME_COPY;
        }
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
// The own kernels: src/cuda/pool.cu on fp32 NCHW, src/storage/pool_fmt.cu on the other storages.
// dx: where the input gradient goes (NULL: the input's own gradient buffer).
cudnnStatus_t cb_dnn_run_pool(cb_exec *e, int i, bool own, int ph, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    dnn_layer *l = lay(e, i);
    cb_pool_params pp;
    cb_pool_params_of(L, &pp);
    pp.relu_mask = e->lb[L->parents[0]].relu_by_pool; // (be->pool_relu_mask; only own kernels read it)
    const float *x = e->lb[L->parents[0]].y;           // (N, C, H, W)
    float *y = cb_exec_op_out(e, i);                     // (N, C, P, Q)
    if (!dx) dx = e->lb[L->parents[0]].dy;               // (N, C, H, W)
    const float *dy = cb_exec_op_grad(e, i) ? cb_exec_op_grad(e, i) : y;
    if (own && !native(e) && ph == 0) cb_fmt_pool_forward(&pp, cb_store_of(e)->fmt, x, y, e->lb[i].aux);
    else if (own && !native(e)) cb_fmt_pool_backward(&pp, cb_store_of(e)->fmt, dy, e->lb[i].aux, dx);
    else if (own && ph == 0) cb_cuda_pool_forward(&pp, x, y, e->lb[i].aux);
    else if (own) cb_cuda_pool_backward(&pp, dy, e->lb[i].aux, dx);
    else if (ph == 0) return cudnnPoolingForward(dnn(e)->h, l->pd, &one, l->xd, x, &zero, l->yd, y);
    else return cudnnPoolingBackward(dnn(e)->h, l->pd, &one, l->yd, y, l->yd, dy, l->xd, x, &zero, l->xd, dx);
    return CUDNN_STATUS_SUCCESS;
}

// be->pool_relu_mask: a max pool whose padding cuDNN lacks runs on the own kernels anyway; any
// other where the policy (auto) lets it (not $CONVBENCH_AUTO_POOL=cudnn). The plain cudnn backend
// keeps cuDNN's pooling, which reads its input in the backward. Not with $CONVBENCH_FUSE_EPILOGUE=off.
bool cb_dnn_pool_relu_mask(const cb_exec *e, int i) {
    const dnn_state *d = dnn(e);
    if (!((const cb_cuda_state *)e->state)->fuse_epilogue) return false;
    return !cb_pool_pads_symmetric(&e->net->layers[i]) || (d->policy && d->policy->pool_relu_mask && d->policy->pool_relu_mask(e, i));
}

// A pool layer runs on cuDNN, or on the own kernels where cuDNN cannot express its padding (in
// every storage: GoogLeNet's SAME pools) or where it takes over its input's ReLU (relu_by_pool:
// cb_dnn_pool_relu_mask); "auto"'s policy chooses between them elsewhere.
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
    } else if (d->policy) {
        d->policy->pool(e, i, bwd, &pc);
    } else if (bwd && !native(e) && d->tfmt == CUDNN_TENSOR_NHWC) {
        cb_exec_note(e, "backend cudnn runs cuDNN's pooling backward on NHWC storage, its slow path: VGG-A b64 tf32 on an H200 "
                        "(2026-11-27) spent 9.9 ms of a 26.3 ms step in it, against 0.9 ms for the own pooling kernels that "
                        "--backend auto races (16.8 ms a step)");
    }
    if (!L->p.pool.avg && e->lb[L->parents[0]].relu_by_pool && !(l->own[0] && l->own[1])) { // (the policy keeps them: not reached)
        l->own[0] = l->own[1] = true;
        pc = cb_choice_of(CB_IMPL_OWN, -1, "pool");
        pc.flags |= CB_CHOICE_RELU_MASK;
    }
    for (int p = 0; p < (bwd ? 2 : 1); p++) b->choice[p] = pc;
    return native(e) || l->own[0] ? CB_OK : probe(e, i, err);
}

// cuDNN pads a convolution symmetrically (the leading pads on both sides). plan_conv runs it on a
// copy of the input with the missing trailing rows and columns added (TF SAME), in every storage;
// leading pads larger than the trailing ones no copy helps.
static int64_t cudnn_out(int64_t in, int pad, int r, int stride) { return (in + 2 * pad - r) / stride + 1; }
static bool conv_pads_fit(const cb_layer *L) {
    const cb_window *w = &L->p.conv.win;
    int64_t h = L->in.h, wd = L->in.w;
    int rh = (w->r - 1) * cb_dnn_dil(L->p.conv.dil_h) + 1, rw = (w->s - 1) * cb_dnn_dil(L->p.conv.dil_w) + 1; // the dilated extent
    int64_t eh = (L->out.h - 1) * w->stride_h + rh - 2 * w->pad_top - h, ew = (L->out.w - 1) * w->stride_w + rw - 2 * w->pad_left - wd;
    h += eh > 0 ? eh : 0, wd += ew > 0 ? ew : 0;
    return cudnn_out(h, w->pad_top, rh, w->stride_h) == L->out.h && cudnn_out(wd, w->pad_left, rw, w->stride_w) == L->out.w;
}

// a depthwise convolution the own storage kernel runs (src/cuda/conv_depthwise.cu)
static bool dw_layer(const cb_layer *L) {
    cb_conv_params p;
    cb_conv_params_of(L, &p);
    return cb_cuda_dw_supports(&p);
}

// on bf16 NHWC, a convolution the own wgmma kernel runs on this GPU (its forward; plan_conv says
// where a phase it lacks, a strided backward data, leaves the layer to decline)
static bool wg_layer(const cb_layer *L, int fmt) {
    if (fmt != (CB_FMT_NHWC | CB_FMT_BF16) || cb_conv_cpad_to(L->p.conv.cin, 1) != L->p.conv.cin) return false;
    cb_conv_params p;
    cb_conv_params_of(L, &p);
    return cb_cuda_wg_store_supports(&p, CB_PHASE_FORWARD, 0);
}

// In fp32 NCHW own kernels run whatever cuDNN cannot; in another storage (own convolution, LRN and
// batch-norm kernels compute fp32 NCHW only) these are declined. What only cuDNN can tell (a
// refused descriptor, no algorithm within the workspace) plan declines after asking it.
cb_reason cb_dnn_supports(const cb_net *net, int i, const cb_exec_opts *o, char *why, size_t n) {
    const cb_layer *L = &net->layers[i];
    int fmt = cb_store_fmt_of(o);
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
    else if ((L->bn || L->op == CB_OP_BATCHNORM) && eps < CUDNN_BN_MIN_EPSILON && !cb_dnn_bn_own_ok(L))
        r = CB_REASON_BN_EPSILON, what = "a batch-norm epsilon under CUDNN_BN_MIN_EPSILON on a tensor over 2^31 elements";
    else if (L->op == CB_OP_LRN && (L->p.lrn.size < CUDNN_LRN_MIN_N || L->p.lrn.size > CUDNN_LRN_MAX_N || L->p.lrn.k < CUDNN_LRN_MIN_K ||
                                    L->p.lrn.beta < CUDNN_LRN_MIN_BETA))
        r = CB_REASON_LRN_RANGE, what = "an LRN size, k or beta outside cuDNN's range" OWN_NCHW;
    else if (L->op == CB_OP_CONV && !conv_pads_fit(L) && !dw_layer(L) && !wg_layer(L, fmt))
        r = CB_REASON_ASYM_PADDING, what = "leading padding larger than trailing, which cuDNN lacks" OWN_NCHW;
    if (r != CB_REASON_NONE) snprintf(why, n, "%s tensors: %s", cb_store_fmt_label(fmt), what);
    return r;
}

// Whether the backward of sum i (a CB_FUSION_BN_ADD node's, head h) leaves its ReLU's gradient to
// h's batch norm: that pass reads the sum's gradient anyway, and writes the ReLU's input gradient
// back in place. Every input of the sum must then read its gradient from that one buffer after h's
// backward (exec.c's grad_alias: h and the shortcut share the sum's buffer), not get a copy of the
// unmasked one when the sum's backward runs. ($CONVBENCH_FUSE_EPILOGUE=off: the separate pass.)
// Not where the max pool or concatenation after the sum applies that gradient (relu_by_pool,
// relu_by_concat: the sum's output, the mask this pass would read, is not kept).
static bool relu_in_bn(const cb_exec *e, int h, int i) {
    const cb_layer *S = &e->net->layers[i];
    if (!e->opts.train || S->act != CB_ACT_RELU || !((cb_cuda_state *)e->state)->fuse_epilogue || e->grad_alias[h] != i ||
        cb_relu_taken(&e->lb[i]))
        return false;
    for (int k = 0; k < S->nparents; k++) {
        int p = S->parents[k];
        if (e->lb[p].dy && e->grad_alias[p] != i) return false;
    }
    return true;
}

// Sum i closes a CB_FUSION_BN_ADD node (core/plan.c) whose head's batch norm runs on the own
// kernels (auto's choice, raced on the batch norm alone): the head's pass computes the sum. Plain
// cudnn keeps cuDNN's batch norm; $CONVBENCH_BN_ADD=separate (or BN_ACT=separate) turns it off.
static void plan_bn_add(cb_exec *e, int i) {
    const cb_plan_node *nd = &e->plan.node[e->plan.node_of[i]];
    dnn_state *d = dnn(e);
    if (nd->fusion != CB_FUSION_BN_ADD || nd->layer[1] != i || !d->policy || d->bn_add_separate || d->bn_act_separate) return;
    int h = nd->layer[0];
    dnn_layer *lh = e->lb[h].priv;
    if (!lh || !lh->own_bn) return;
    lh->bn_add = true;
    dnn_layer *ls = e->lb[i].priv;
    ls->in_bn_add = true;
    ls->relu_in_bn = relu_in_bn(e, h, i);
    cb_choice c = cb_choice_of(CB_IMPL_OWN, -1, "bn+add");
    c.flags |= CB_CHOICE_IN_FUSED, c.fused_with = h;
    e->lb[i].choice[CB_PHASE_FORWARD] = c;
}

cb_status cb_dnn_plan(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_state *d = dnn(e);
    dnn_layer *l = cb_xcalloc(1, sizeof *l);
    b->priv = l;
    if (L->op == CB_OP_INPUT) return CB_OK;
    DNN_TRY(set4d(e, &l->yd, L->out));
    if (L->act == CB_ACT_RELU || (L->op == CB_OP_ACT && L->p.act.fn == CB_ACT_RELU)) { // cuDNN's ReLU; the others: own kernels
        DNN_TRY(cudnnCreateActivationDescriptor(&l->act));
        DNN_TRY(cudnnSetActivationDescriptor(l->act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    if (L->bn || L->op == CB_OP_BATCHNORM) {
        cb_status st = cb_dnn_plan_bn(e, i, err);
        if (st != CB_OK) return st;
    }
    plan_bn_add(e, i);
    switch (L->op) {
    case CB_OP_CONV: {
        cb_status st = plan_conv(e, i, err);
        return st == CB_OK && !native(e) ? probe(e, i, err) : st;
    }
    case CB_OP_FC: {
        cb_status st = cb_blas_plan_fc(e, i, err);
        if (st != CB_OK) return st;
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            bool needed = p == 0 || (p == 1 && e->lb[L->parents[0]].dy) || (p == 2 && b->dw);
            if (d->policy && !native(e)) b->choice[p].flags |= CB_CHOICE_OWN_NCHW_ONLY; // own kernels cannot read this storage
            else if (d->policy && needed) d->policy->fc_phase(e, i, (cb_phase)p);
        }
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
    case CB_OP_SCALE:
    case CB_OP_LAYERNORM:
        if (!cb_dnn_part_reserve(e, cb_fmt_layernorm_scratch(L->out.c)))
            return cb_cuda_nomem(e, err, L->name, "the layer's partial sums");
        break;
    default:
        break;
    }
    if (!native(e) && (l->own[0] || l->own[1])) return decline(e, L, err, CB_REASON_LRN_RANGE, "an LRN size, k or beta outside cuDNN's range" OWN_NCHW);
    return native(e) ? CB_OK : probe(e, i, err);
}

// be->revise (the step check and the workspace trim, src/core/exec.c): phase p of conv layer i,
// where it runs on cuDNN (neither an own kernel, a cuBLAS GEMM nor the own depthwise one), to the
// fastest other candidate its plan timed, legacy or graph, or the own wgmma kernel that lost
// auto's race (wg_lost_ms), that needs at most max_ws bytes; undo puts back the choice before.
// The choice's .workspace says what the candidate needs; the phase's workspace (b->ws) is the
// caller's to set (the trim sets it from the choice, and back on undo). The choice keeps its flags (the channel padding) but for the
// graph API's, which follows the candidate.
static void set_legacy(dnn_layer *l, int p, int algo, cudnnMathType_t math) {
    if (p == 0) l->fwd = (cudnnConvolutionFwdAlgo_t)algo;
    else if (p == 1) l->bwd_data = (cudnnConvolutionBwdDataAlgo_t)algo;
    else l->bwd_filter = (cudnnConvolutionBwdFilterAlgo_t)algo;
    cudnnSetConvolutionMathType(l->cd[p], math);
}
bool cb_dnn_revise(cb_exec *e, int i, cb_phase p, size_t max_ws, bool undo) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    if (!l || L->op != CB_OP_CONV) return false;
    struct dnn_prev *pv = &l->prev[p];
    if (undo && pv->held && pv->to_wg) { // back from the own wgmma kernel to the cuDNN choice it had lost to
        l->wg[p] = false, b->choice[p] = pv->choice;
        pv->held = pv->to_wg = false;
        return true;
    }
    if (l->wg[p] || (undo && pv->held && pv->wg)) { // the own wgmma kernel back to the cuDNN choice it beat, or again
        if (undo) {
            if (!pv->held || !pv->wg) return false;
            l->wg[p] = true, b->choice[p] = pv->choice, pv->held = false;
            return true;
        }
        if (l->wg_rival[p].impl != CB_IMPL_CUDNN || l->wg_rival[p].workspace > max_ws) return false;
        *pv = (struct dnn_prev){.held = true, .wg = true, .choice = b->choice[p]};
        l->wg[p] = false;
        b->choice[p] = l->wg_rival[p];
        b->choice[p].flags &= ~(unsigned)CB_CHOICE_RACED;
        b->choice[p].rival_ms = -1;
        return true;
    }
    if (l->own[p] || l->blas[p] || l->dw[p] || b->choice[p].impl != CB_IMPL_CUDNN) return false;
    if (undo) {
        if (!pv->held) return false;
        if (l->g[p] && !pv->graph) l->galt[p] = l->g[p], l->g[p] = NULL;         // back from the graph plan
        else if (!l->g[p] && pv->graph) l->g[p] = l->galt[p], l->galt[p] = NULL; // back to it
        if (!pv->graph) set_legacy(l, p, pv->algo, pv->math);
        b->choice[p] = pv->choice;
        pv->held = false;
        return true;
    }
    static const char *const *const NAMES[3] = {fwd_name, bwd_data_name, bwd_filter_name};
    static const int NN[3] = {8, 6, 7};
    int cur = p == 0 ? (int)l->fwd : p == 1 ? (int)l->bwd_data : (int)l->bwd_filter;
    bool on_graph = l->g[p] != NULL;
    int best = -1; // an index into alt, or nalt for the graph plan
    double best_ms = -1;
    for (int k = 0; k < l->nalt[p]; k++) {
        const struct dnn_alt *a = &l->alt[p][k];
        if ((!on_graph && a->algo == cur) || a->ws > max_ws || (best >= 0 && a->ms >= best_ms)) continue;
        best = k, best_ms = a->ms;
    }
    if (!on_graph && l->galt[p] && cb_dnn_graph_workspace(l->galt[p]) <= max_ws && (best < 0 || l->galt_ms[p] < best_ms))
        best = l->nalt[p], best_ms = l->galt_ms[p];
    // the own wgmma kernel that lost auto's race: its workspace is a filter's size (or none)
    cb_conv_params cp;
    cb_conv_params_of(L, &cp);
    size_t wg_ws = cb_cuda_wg_store_workspace(&cp, p, cb_dnn_wg_mode(e));
    if (l->wg_lost_ms[p] > 0 && wg_ws <= max_ws && (best < 0 || l->wg_lost_ms[p] < best_ms)) {
        cb_choice was = b->choice[p];
        was.workspace = b->ws[p];
        *pv = (struct dnn_prev){.held = true, .to_wg = true, .choice = was};
        size_t ws = b->ws[p];
        cb_dnn_take_wg(e, i, p); // (keeps was as its rival)
        b->ws[p] = ws;           // (the caller sizes the phase's workspace from the choice, as after every switch here)
        b->choice[p].ms = l->wg_lost_ms[p];
        b->choice[p].workspace = wg_ws;
        return true;
    }
    if (best < 0) return false;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    cudnnGetConvolutionMathType(l->cd[p], &math);
    *pv = (struct dnn_prev){.held = true, .algo = cur, .math = math, .graph = on_graph, .choice = b->choice[p]};
    cb_choice c = b->choice[p];
    c.flags &= ~(unsigned)(CB_CHOICE_GRAPH_API | CB_CHOICE_RACED);
    c.rival_ms = -1;
    if (best == l->nalt[p]) { // the graph race's plan
        l->g[p] = l->galt[p], l->galt[p] = NULL;
        c.algo = (int)cb_dnn_graph_engine(l->g[p]), c.name = "cuDNN graph engine", c.flags |= CB_CHOICE_GRAPH_API;
        c.check_err = cb_dnn_graph_check_err(l->g[p]);
        c.workspace = cb_dnn_graph_workspace(l->g[p]);
    } else {
        const struct dnn_alt *a = &l->alt[p][best];
        if (on_graph) l->galt[p] = l->g[p], l->g[p] = NULL, l->galt_ms[p] = b->choice[p].ms;
        set_legacy(l, p, a->algo, a->math);
        c.algo = a->algo, c.name = algo_name(NAMES[p], NN[p], a->algo), c.workspace = a->ws, c.check_err = -1;
    }
    c.ms = best_ms;
    b->choice[p] = c;
    return true;
}
