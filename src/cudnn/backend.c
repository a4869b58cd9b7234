// The "cudnn" backend: cuDNN 9's legacy API for convolution, pooling, LRN, batch norm, activation
// and softmax; cuBLAS for FC (src/blas); convbench's own kernels for the rest. Layers cuDNN cannot
// express (asymmetric padding, LRN windows over 16, batch-norm eps under CUDNN_BN_MIN_EPSILON)
// fall back to the own kernels in fp32 NCHW and say so in their choice (CB_CHOICE_ASYM_PAD, ...).
// Storage: fp32 NCHW by default (--precision tf32 lets cuDNN and cuBLAS use TF32 tensor cores);
// --layout nhwc and --precision bf16 store activations NHWC and/or bf16 (src/storage: descriptors
// CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, convolution compute type fp32). Own convolution, LRN and
// batch-norm kernels compute fp32 NCHW only: a layer that needs them there is declined by supports()
// (or, what only cuDNN can tell, in plan) with a reason code. Pooling has own kernels in every
// storage (src/storage/pool_fmt.cu); under NHWC a convolution's unaligned input channels are
// zero-padded (cb_store_conv_cpad). "auto" (src/sched/auto.c) is this backend with a policy that
// races the alternatives where plan asks it (dnn_policy, src/cudnn/dnn.h).
#include "core/act.h"
#include "cudnn/backend_impl.h"
#include "cudnn/graph.h"
#include "blas/blas.h"
#include "cuda/launch.h"
#include "core/net.h"
#include "gpu/gpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// the backend's state, with a scheduler's policy (auto) or none (cudnn)
cb_status cb_dnn_init(cb_exec *e, cb_error *err, const dnn_policy *policy) {
    const cb_layer *L = NULL;
    if (cb_dnn_graph_mode_of(e->opts.precision) == CB_DNN_GRAPH_BAD)
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_DNN_GRAPH", NULL, "'%s' is not race, off or force", getenv("CONVBENCH_DNN_GRAPH"));
    if (cb_dnn_graph_plans() < 0)
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_DNN_GRAPH_PLANS", NULL, "'%s' is not a count of plans from 1 to 48, or first",
                       getenv("CONVBENCH_DNN_GRAPH_PLANS"));
    if (cb_dnn_graph_rtc() < 0)
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_DNN_GRAPH_RTC", NULL, "'%s' is not grouped, on, off, 1 or 0", getenv("CONVBENCH_DNN_GRAPH_RTC"));
    if (cb_dnn_graph_tol(e->opts.precision) < 0)
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_DNN_GRAPH_TOL", NULL, "'%s' is not a number from 0 to 1", getenv("CONVBENCH_DNN_GRAPH_TOL"));
    int prs; // $CONVBENCH_POOL_RS: the NHWC pools' compile-time window forward everywhere (on), nowhere (off)
    if (cb_env_on_off("CONVBENCH_POOL_RS", &prs, err) != CB_OK) return CB_STATUS_ARG;
    cb_fmt_pool_rs(prs);
    int bnp; // $CONVBENCH_BN_PERIODIC: the own NHWC batch norm in 16-byte vectors when C is not a multiple of them (on, the default), or a channel a thread (off)
    if (cb_env_on_off("CONVBENCH_BN_PERIODIC", &bnp, err) != CB_OK) return CB_STATUS_ARG;
    cb_fmt_bn_periodic(bnp != 0);
    int cv; // $CONVBENCH_CHAN_VEC: the NHWC SE product, layer scale and LayerNorm in 16-byte vectors where they apply (on, the default), or an element a thread (off)
    if (cb_env_on_off("CONVBENCH_CHAN_VEC", &cv, err) != CB_OK) return CB_STATUS_ARG;
    cb_fmt_chan_vec(cv);
    int psc; // $CONVBENCH_POOL_SCATTER: fp32 NHWC max pools scatter their gradients by atomic adds where that measured faster (unset: pool_fmt.cu's pf_scatters), everywhere (on), or gather them (off: deterministic)
    if (cb_env_on_off("CONVBENCH_POOL_SCATTER", &psc, err) != CB_OK) return CB_STATUS_ARG;
    cb_fmt_pool_scatter(psc);
    int cp; // $CONVBENCH_DNN_CPAD (cb_store_conv_cpad: padded in bf16, or without the graph race)
    if (cb_env_on_off("CONVBENCH_DNN_CPAD", &cp, err) != CB_OK) return CB_STATUS_ARG;
    bool cpad = cp >= 0 ? cp == 1 : cb_conv_cpad_default(e->opts.precision) || cb_dnn_graph_mode_of(e->opts.precision) == CB_DNN_GRAPH_OFF;
    cb_status st = cb_cuda_init_state(e, err);
    if (st == CB_OK) st = cb_store_init(e, cpad, err);
    if (st == CB_OK) st = cb_blas_init(e, err);
    if (st != CB_OK) return st;
    dnn_state *d = cb_xcalloc(1, sizeof *d);
    ((cb_cuda_state *)e->state)->lib = d;
    d->policy = policy;
    d->tfmt = is_nhwc(e) ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    d->dtype = is_bf16(e) ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    if (!native(e) && e->opts.verbose > 0)
        fprintf(stderr, "note: backend %s, %s tensors: cuDNN and cuBLAS compute every layer (fp32 accumulation); own "
                        "kernels run fp32 NCHW only%s\n", e->be->name, fmt_name(e), policy ? " and are not raced" : "");
    bool tensor_ops = e->opts.precision != CB_PREC_FP32;
    // cuDNN's legacy convolutions take tensor cores on bf16 data only under CUDNN_TENSOR_OP_MATH (its
    // default math allows TF32 on fp32 data, not them: bf16 NHWC ran BWD_DATA_ALGO_0 at 0.5 TFLOP/s)
    d->math = !tensor_ops ? CUDNN_FMA_MATH : e->opts.precision == CB_PREC_BF16 ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH;
    const char *ba = getenv("CONVBENCH_BN_ACT");
    if (ba && *ba && strcmp(ba, "fused") && strcmp(ba, "separate"))
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_BN_ACT", NULL, "'%s' is not fused or separate", ba);
    d->bn_act_separate = ba && !strcmp(ba, "separate");
    // $CONVBENCH_DNN_BN=ex|legacy: cuDNN's NHWC training batch norm through the Ex API in persistent
    // mode, or the legacy call. Default: ex on the cudnn backend (ResNet-50 b64 bf16 NHWC, H200:
    // 187.7 -> 23.9 ms a step), legacy under auto, whose race against the own batch norm then
    // picked Ex on layers where it lost in the step (12.57 -> 13.31 ms). (Both measured in a session
    // of 2026-11-25 that was cut off before it recorded them: not in docs/results.) The own pass also
    // computes the ReLU and the residual sum, which the Ex call here leaves to passes of their own.
    const char *bx = getenv("CONVBENCH_DNN_BN");
    if (bx && *bx && strcmp(bx, "legacy") && strcmp(bx, "ex"))
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_DNN_BN", NULL, "'%s' is not legacy or ex", bx);
    d->bn_ex = bx && *bx ? !strcmp(bx, "ex") : policy == NULL;
    const char *bs = getenv("CONVBENCH_BN_ADD");
    if (bs && *bs && strcmp(bs, "fused") && strcmp(bs, "separate"))
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_BN_ADD", NULL, "'%s' is not fused or separate", bs);
    d->bn_add_separate = bs && !strcmp(bs, "separate");
    // $CONVBENCH_CONCAT=copy2d|rows|each|gather|kernel: NHWC concatenations on the copy engine (as
    // before 2026-11-27 late), on the warp-per-row kernel for every unit (as before 2026-11-28), with
    // one copy per input forward too (as before 2026-11-29), in one pass forward for 16-byte rows
    // too, all to compare, or on the own kernels (kernel, the default; src/storage/format.cu reads it)
    const char *cc = getenv("CONVBENCH_CONCAT");
    if (cc && *cc && strcmp(cc, "copy2d") && strcmp(cc, "rows") && strcmp(cc, "each") && strcmp(cc, "gather") && strcmp(cc, "kernel"))
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_CONCAT", NULL, "'%s' is not copy2d, rows, each, gather or kernel", cc);
    const char *pk = getenv("CONVBENCH_DNN_PICK");
    char *end = NULL;
    long k = pk && *pk ? strtol(pk, &end, 10) : -1;
    if (pk && *pk && (*end || k < 0 || k > 47))
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_DNN_PICK", NULL, "'%s' is not an algorithm index from 0 to 47", pk);
    d->pick = (int)k;
    DNN_TRY(cudnnCreate(&d->h));
    DNN_TRY(cudnnSetStream(d->h, cudaStreamPerThread)); // the stream a step graph captures (Makefile)
    return CB_OK;
}
static cb_status init_cudnn(cb_exec *e, cb_error *err) { return cb_dnn_init(e, err, NULL); }

void cb_dnn_destroy(cb_exec *e) {
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
        for (int p = 0; p < CB_PHASE_COUNT; p++) cb_dnn_graph_free(l->g[p]), cb_dnn_graph_free(l->galt[p]);
        if (l->pd) cudnnDestroyPoolingDescriptor(l->pd);
        if (l->lrn) cudnnDestroyLRNDescriptor(l->lrn);
        if (l->act) cudnnDestroyActivationDescriptor(l->act);
        free(l);
        e->lb[i].priv = NULL;
    }
    dnn_state *d = s->lib;
    if (d) {
        if (d->h) cudnnDestroy(d->h);
        cudaFree(d->bn_part);
        cudaFree(d->bn_ws);
        free(d);
        s->lib = NULL;
    }
    cb_blas_destroy(e);
    cb_store_destroy(e);
    cb_cuda_destroy_state(e);
}

// ---- batch norm: cuDNN's legacy routines or the own storage kernels (norm_fmt.cu) ----------------
// A batch norm is fused into a conv / FC layer (L->bn: pre -> y, then the ReLU) or is a layer of
// its own (x -> out). The own kernels take every storage and fuse the ReLU (forward) and its mask
// (backward); cuDNN's run NHWC tensors several times slower than NCHW ones. "cudnn" keeps cuDNN's
// where cuDNN takes the layer; "auto"'s policy times both (src/sched/auto.c).

// the per-channel kernels' partial sums (batch norm, layer scale, LayerNorm): one scratch, grown
// at plan time to the largest need
bool cb_dnn_part_reserve(cb_exec *e, size_t floats) {
    dnn_state *d = dnn(e);
    if (floats <= d->bn_part_floats) return true;
    cudaFree(d->bn_part);
    e->allocated -= d->bn_part_floats * 4;
    d->bn_part_floats = 0;
    if (!(d->bn_part = cb_store_alloc(e, floats * 4))) return false;
    d->bn_part_floats = floats;
    return true;
}

// the own batch-norm kernels apply a layer's activation (any) in their passes, forward and backward
static bool bn_act_fused(const cb_exec *e, const cb_layer *L) { return L->bn && L->act != CB_ACT_NONE && !dnn(e)->bn_act_separate; }
bool cb_dnn_bn_own_ok(const cb_layer *L) {
    cb_bn_params bp;
    cb_bn_params_of(L, &bp);
    return cb_fmt_bn_supported(&bp);
}

// be->act_input_kept: a fused batch norm whose activation's gradient reads its input keeps none
// where the own kernels run it whatever the race (they take that gradient at the input recomputed
// from x and the statistics): an epsilon under cuDNN's minimum, or the policy's say
// (bn_act_recompute: auto's, unless a test forces cuDNN's batch norm)
bool cb_dnn_act_input_kept(const cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    const dnn_state *d = dnn(e);
    if (!bn_act_fused(e, L) || !cb_act_needs_input(L->act) || !cb_dnn_bn_own_ok(L)) return true;
    cb_bn_params bp;
    cb_bn_params_of(L, &bp);
    return bp.eps >= CUDNN_BN_MIN_EPSILON && !(d->policy && d->policy->bn_act_recompute && d->policy->bn_act_recompute(e, i));
}

// be->output_again (cb_recompute): a layer with its own batch norm (no fused sum) that the own
// kernels run whatever the race, as for act_input_kept, with its activation in their passes: its
// backward reads its input (pre) and statistics alone, so its output can be made again from them
bool cb_dnn_output_again(const cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    const dnn_state *d = dnn(e);
    if (!L->bn || !cb_dnn_bn_own_ok(L) || (L->act != CB_ACT_NONE && !bn_act_fused(e, L))) return false;
    cb_bn_params bp;
    cb_bn_params_of(L, &bp);
    return bp.eps < CUDNN_BN_MIN_EPSILON || (d->policy && d->policy->bn_act_recompute && d->policy->bn_act_recompute(e, i));
}

// be->recompute_output: y = act(bn(pre)) again, from the statistics the forward saved
void cb_dnn_recompute_output(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    cb_bn_params bp;
    cb_bn_params_of(L, &bp);
    cb_fmt_bn_again(&bp, cb_store_of(e)->fmt, b->pre, b->gamma, b->beta, b->bn_mean, b->bn_invstd, b->y, L->act, dnn(e)->bn_part);
}

// the batch norm's input and output: the op's output and y (fused), or the parent's y and out
static const void *bn_x(const cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    return L->bn ? e->lb[i].pre : e->lb[L->parents[0]].y;
}

// the own kernels' batch-norm pass of layer i into y with activation act, plus res (NULL: none)
// before it; running statistics updated in training unless keep_running
static void bn_own_forward(cb_exec *e, int i, bool train, bool keep_running, void *y, cb_act act, const void *res) {
    cb_lbuf *b = &e->lb[i];
    cb_bn_params bp;
    cb_bn_params_of(&e->net->layers[i], &bp);
    int fmt = cb_store_of(e)->fmt;
    float *rm = keep_running ? NULL : b->rmean, *rv = keep_running ? NULL : b->rvar;
    if (train)
        cb_fmt_bn_forward_train_res(&bp, fmt, bn_x(e, i), b->gamma, b->beta, y, b->bn_mean, b->bn_invstd, rm, rv, 0.1f, act, dnn(e)->bn_part,
                                    res);
    else cb_fmt_bn_forward_infer_res(&bp, fmt, bn_x(e, i), b->gamma, b->beta, b->rmean, b->rvar, y, act, dnn(e)->bn_part, res);
}

// CB_FUSION_BN_ADD head i: the sum i + 1's output = its activation of bn(x) + the sum's other
// input, in the batch norm's pass (i's own output is never written: nothing reads it)
static void bn_add_forward(cb_exec *e, int i, bool train) {
    const cb_layer *S = &e->net->layers[i + 1];
    const void *other = e->lb[S->parents[0] == i ? S->parents[1] : S->parents[0]].y;
    bn_own_forward(e, i, train, false, e->lb[i + 1].y, S->act, other);
}

// forward of the batch norm of layer i into y (training: batch statistics, running ones updated
// unless `keep_running`); returns whether the layer's activation was applied
static bool bn_forward(cb_exec *e, int i, bool train, bool keep_running, void *y) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    dnn_state *d = dnn(e);
    const void *x = bn_x(e, i);
    float *rm = keep_running ? NULL : b->rmean, *rv = keep_running ? NULL : b->rvar;
    cb_bn_params bp;
    cb_bn_params_of(L, &bp);
    if (l->own_bn) {
        cb_act act = bn_act_fused(e, L) ? L->act : CB_ACT_NONE;
        bn_own_forward(e, i, train, keep_running, y, act, NULL);
        return act != CB_ACT_NONE;
    }
    if (train && l->bn_ex)
        cudnnBatchNormalizationForwardTrainingEx(d->h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &one, &zero, l->yd, x,
                                                 NULL, NULL, l->yd, y, l->bnd, b->gamma, b->beta, 0.1, rm, rv, bp.eps, b->bn_mean,
                                                 b->bn_invstd, NULL, d->bn_ws, d->bn_ws_bytes, NULL, 0);
    else if (train)
        cudnnBatchNormalizationForwardTraining(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, l->yd, x, l->yd, y, l->bnd, b->gamma,
                                               b->beta, 0.1, rm, rv, bp.eps, b->bn_mean, b->bn_invstd);
    else
        cudnnBatchNormalizationForwardInference(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, l->yd, x, l->yd, y, l->bnd, b->gamma,
                                                b->beta, b->rmean, b->rvar, bp.eps);
    return false;
}

// backward of the batch norm of layer i: dgamma, dbeta, and dx when not NULL (the own kernels need
// no dx; cuDNN's get the scratch). dy: the gradient w.r.t. the batch norm's output, the
// activation's gradient applied already unless the own kernels fused it (bn_act_fused; they may
// then leave the activation's input gradient in dy, as the separate pass does).
static void bn_backward_of(cb_exec *e, int i, void *dy, void *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    cb_bn_params bp;
    cb_bn_params_of(L, &bp);
    if (l->own_bn && l->bn_add && lay(e, i + 1)->relu_in_bn) // (the sum i + 1's ReLU, its output the mask)
        cb_fmt_bn_backward_relu_mask(&bp, cb_store_of(e)->fmt, bn_x(e, i), b->gamma, b->bn_mean, b->bn_invstd, e->lb[i + 1].y, dy, dx,
                                     b->dgamma, b->dbeta, dnn(e)->bn_part);
    else if (l->own_bn)
        cb_fmt_bn_backward(&bp, cb_store_of(e)->fmt, bn_x(e, i), b->gamma, b->beta, b->bn_mean, b->bn_invstd,
                           bn_act_fused(e, L) ? L->act : CB_ACT_NONE, dy, dx, b->dgamma, b->dbeta, dnn(e)->bn_part);
    if (l->own_bn) return;
    dnn_state *d = dnn(e);
    if (l->bn_ex)
        cudnnBatchNormalizationBackwardEx(d->h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &one, &zero, &one, &zero, l->yd,
                                          bn_x(e, i), NULL, NULL, l->yd, dy, NULL, NULL, l->yd, dx ? dx : e->scratch, l->bnd, b->gamma,
                                          b->beta, b->dgamma, b->dbeta, bp.eps, b->bn_mean, b->bn_invstd, NULL, d->bn_ws, d->bn_ws_bytes,
                                          NULL, 0);
    else
        cudnnBatchNormalizationBackward(d->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, l->yd, bn_x(e, i), l->yd, dy, l->yd,
                                        dx ? dx : e->scratch, l->bnd, b->gamma, b->dgamma, b->dbeta, bp.eps, b->bn_mean, b->bn_invstd);
}

// layer i's activation as a pass of its own on y, forward (saving its input where the gradient
// reads it) and backward (dy in place)
static void act_forward(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    if (L->act == CB_ACT_RELU) cudnnActivationForward(dnn(e)->h, l->act, &one, l->yd, b->y, &zero, l->yd, b->y);
    else cb_fmt_act_forward((size_t)cb_shape_count(L->out), L->act, b->y, b->act_in, b->y, is_bf16(e));
}

static void act_backward(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    cb_fmt_act_backward((size_t)cb_shape_count(L->out), L->act, b->act_in, b->y, b->dy, b->dy, is_bf16(e));
}

// one training step's batch norm of layer i (own kernels or cuDNN's) with its activation, ms: a
// path that does not fuse the activation pays for its passes, so that the race compares the same work
double cb_dnn_time_bn(cb_exec *e, int i, bool own, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    l->own_bn = own;
    void *dx = L->bn ? b->dpre : NULL; // a layer's dx goes to the scratch (cuDNN) or nowhere (own)
    if (train && (!b->dy || (!own && !dx && !e->scratch))) return -1;
    double t = 0;
    for (int r = 0; r < 4; r++) {
        if (r == 1) cb_cuda_timer_start(e);
        bool unfused = !bn_forward(e, i, true, true, b->y) && L->act != CB_ACT_NONE;
        if (unfused) act_forward(e, i);
        if (train && unfused) act_backward(e, i);
        if (train) bn_backward_of(e, i, b->dy, dx);
    }
    t = cb_cuda_timer_stop(e) / 3;
    return cudaGetLastError() == cudaSuccess ? t : -1;
}

// Whether cuDNN's Ex batch norm (persistent mode, no fused op) runs layer i's training forward and
// backward on its own buffers: channels a multiple of 8 and every tensor 16-byte aligned (its NHWC
// kernels read 16 bytes at a time and fault, killing the context, on fp32 C = 6 or 7 and on
// unaligned pointers: H200 memcheck, 2026-11-25, so this is checked before anything runs), its
// workspace sizes, no reserve space (what would have to live from the forward to the backward),
// and one run of each without an error; sets l->bn_ex. False only when the shared workspace could
// not grow (out of memory); a layer the Ex API refuses keeps the legacy calls.
static bool bn_ex_probe(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_state *d = dnn(e);
    dnn_layer *l = lay(e, i);
    const cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    size_t fw = 0, bw = 0, rs = 0;
    l->bn_ex = false;
    if (L->out.c % 8) return true;
    if (cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(d->h, mode, CUDNN_BATCHNORM_OPS_BN, l->yd, NULL, l->yd, l->bnd, NULL, &fw) ||
        cudnnGetBatchNormalizationBackwardExWorkspaceSize(d->h, mode, CUDNN_BATCHNORM_OPS_BN, l->yd, NULL, l->yd, NULL, l->yd, l->bnd, NULL,
                                                          &bw) ||
        cudnnGetBatchNormalizationTrainingExReserveSpaceSize(d->h, mode, CUDNN_BATCHNORM_OPS_BN, NULL, l->yd, &rs) || rs)
        return true;
    size_t need = fw > bw ? fw : bw;
    if (need > d->bn_ws_bytes) {
        cudaFree(d->bn_ws);
        e->allocated -= d->bn_ws_bytes;
        d->bn_ws_bytes = 0;
        if (!(d->bn_ws = cb_store_alloc(e, need))) return false;
        d->bn_ws_bytes = need;
    }
    void *dx = L->bn ? b->dpre : e->scratch, *y = L->bn ? b->y : cb_exec_op_out(e, i);
    const void *dy = L->bn ? b->dy : cb_exec_op_grad(e, i);
    if (!dx || !y || !dy) return true;
    // (every pointer the step's Ex calls take, the running statistics and the gradients of gamma and
    // beta too: with gamma aligned and the running mean not, the forward read 16 bytes misaligned)
    const void *ptrs[] = {dx, y, dy, bn_x(e, i), d->bn_ws, b->gamma, b->beta, b->bn_mean, b->bn_invstd, b->rmean, b->rvar, b->dgamma, b->dbeta};
    for (size_t k = 0; k < sizeof ptrs / sizeof *ptrs; k++)
        if ((uintptr_t)ptrs[k] % 16) return true;
    cb_bn_params bp;
    cb_bn_params_of(L, &bp);
    cudnnStatus_t st = cudnnBatchNormalizationForwardTrainingEx(d->h, mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero, l->yd, bn_x(e, i), NULL,
                                                                NULL, l->yd, y, l->bnd, b->gamma, b->beta, 0.1, NULL, NULL, bp.eps,
                                                                b->bn_mean, b->bn_invstd, NULL, d->bn_ws, d->bn_ws_bytes, NULL, 0);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBatchNormalizationBackwardEx(d->h, mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero, &one, &zero, l->yd, bn_x(e, i), NULL, NULL,
                                               l->yd, dy, NULL, NULL, l->yd, dx, l->bnd, b->gamma, b->beta, b->dgamma, b->dbeta, bp.eps,
                                               b->bn_mean, b->bn_invstd, NULL, d->bn_ws, d->bn_ws_bytes, NULL, 0);
    l->bn_ex = st == CUDNN_STATUS_SUCCESS && cudaDeviceSynchronize() == cudaSuccess;
    cudaGetLastError();
    return true;
}

cb_status cb_dnn_plan_bn(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_state *d = dnn(e);
    dnn_layer *l = lay(e, i);
    cb_bn_params bp;
    cb_bn_params_of(L, &bp);
    bool lib_ok = bp.eps >= CUDNN_BN_MIN_EPSILON, own_ok = cb_fmt_bn_supported(&bp);
    if (!lib_ok && !own_ok && !native(e))
        return decline(e, L, err, CB_REASON_BN_EPSILON, "a batch-norm epsilon under CUDNN_BN_MIN_EPSILON on a tensor over 2^31 elements");
    if (lib_ok) {
        DNN_TRY(cudnnCreateTensorDescriptor(&l->bnd));
        DNN_TRY(cudnnDeriveBNTensorDescriptor(l->bnd, l->yd, CUDNN_BATCHNORM_SPATIAL));
        if (d->bn_ex && is_nhwc(e) && e->opts.train && !bn_ex_probe(e, i))
            return cb_cuda_nomem(e, err, L->name, "cuDNN's batch-norm workspace");
    }
    if (!own_ok) return CB_OK; // cuDNN's, or (fp32 NCHW, eps under cuDNN's minimum) the cuda backend's own
    if (!cb_dnn_part_reserve(e, cb_fmt_bn_scratch(bp.c))) return cb_cuda_nomem(e, err, L->name, "the batch norm's partial sums");
    cb_choice c = cb_choice_of(CB_IMPL_NONE, -1, "");
    if (!lib_ok) l->own_bn = true, c = cb_choice_of(CB_IMPL_OWN, -1, "own bn (eps)");
    else if (!d->policy) {
        l->own_bn = false;
        c = cb_choice_of(CB_IMPL_CUDNN, -1, "cudnn bn");
        c.flags |= l->bn_ex ? CB_CHOICE_BN_PERSISTENT : 0;
        // the legacy call on NHWC storage in training: ResNet-50 b64 bf16 on the H200, 187.8 ms a
        // step (2026-11-25-h200-bias.md) against 12.5 under auto (2026-11-27-h200-dnngraph.md)
        if (is_nhwc(e) && e->opts.train && !l->bn_ex)
            cb_exec_note(e, "backend cudnn runs cuDNN's legacy batch norm on NHWC storage (%s), its slow path: ResNet-50 b64 "
                            "bf16 on an H200 took 188 ms a step on it, 12.5 ms under --backend auto",
                         d->bn_ex ? "the Ex API not taken on some layers: channels not a multiple of 8, unaligned tensors, or cuDNN refused it"
                                  : "CONVBENCH_DNN_BN=legacy");
    }
    else d->policy->bn(e, i, &c);
    // a standalone batch norm shows its choice; a fused one leaves the op's choices alone
    if (c.impl != CB_IMPL_NONE && L->op == CB_OP_BATCHNORM)
        for (int p = 0; p < CB_PHASE_COUNT; p++) b->choice[p] = c;
    return CB_OK;
}

void cb_dnn_forward_epilogue(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    if (L->bn && l->bn_add) {
        bn_add_forward(e, i, train);
        return;
    }
    if (L->bn) {
        if (!l->own_bn && !l->bnd) {
            cb_cuda_epilogue_forward(e, i, train);
            return;
        }
        if (bn_forward(e, i, train, false, b->y)) ((cb_cuda_state *)e->state)->fused_act[i] = true;
    }
    if (L->act != CB_ACT_NONE && !((cb_cuda_state *)e->state)->fused_act[i]) act_forward(e, i); // (else the bias pass's)
}

// an Elementwise mul's parent in slot j is full-size (else (N, C, 1, 1), broadcast)
static bool mul_full(const cb_exec *e, int i, int j) {
    const cb_layer *L = &e->net->layers[i], *P = &e->net->layers[L->parents[j]];
    return P->out.h * P->out.w == L->out.h * L->out.w;
}

// the zero-padded copy of conv layer i's input x into to (l->xpad or l->xpad_bwd, shape l->xs:
// channels and trailing rows and columns added)
static void pad_input(cb_exec *e, int i, const void *x, void *to) {
    const cb_layer *L = &e->net->layers[i];
    dnn_layer *l = lay(e, i);
    if (is_nhwc(e)) cb_fmt_window_nhwc(L->in.n, L->in.h, L->in.w, L->in.c, x, l->xs.h, l->xs.w, l->xs.c, to, is_bf16(e));
    else cb_fmt_window_nchw(L->in.n * L->in.c, L->in.h, L->in.w, x, l->xs.h, l->xs.w, to, is_bf16(e));
}

bool cb_dnn_dw_ok(const cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    if (L->op != CB_OP_CONV || native(e)) return false;
    cb_conv_params p;
    cb_conv_params_of(L, &p);
    return cb_cuda_dw_supports(&p);
}

// conv layer i's parameters and the tensors its own storage kernels read and write: input x, output y
// and its gradient dy (y where the plan has none yet)
typedef struct own_conv { cb_conv_params p; const void *x; void *y; const void *dy; } own_conv;
static own_conv own_conv_of(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    own_conv c;
    cb_conv_params_of(L, &c.p);
    c.x = e->lb[L->parents[0]].y;
    c.y = cb_exec_op_out(e, i);
    c.dy = cb_exec_op_grad(e, i) ? (const void *)cb_exec_op_grad(e, i) : c.y;
    return c;
}

void cb_dnn_run_dw(cb_exec *e, int i, cb_phase ph, void *ws, void *dx) {
    const cb_layer *L = &e->net->layers[i];
    own_conv c = own_conv_of(e, i);
    bool pairs = lay(e, i)->dw_pair[ph];
    if (ph == CB_PHASE_FORWARD) {
        bool relu = L->act == CB_ACT_RELU && !L->bn;
        cb_cuda_dw_forward(&c.p, is_nhwc(e), is_bf16(e), c.x, cb_store_weights(e, i), e->lb[i].b, c.y, relu, pairs);
        ((cb_cuda_state *)e->state)->fused_act[i] = relu;
    } else if (ph == CB_PHASE_BWD_DATA) {
        cb_cuda_dw_backward_data(&c.p, is_nhwc(e), is_bf16(e), c.dy, cb_store_weights(e, i), dx, pairs);
    } else {
        cb_cuda_dw_backward_filter(&c.p, is_nhwc(e), is_bf16(e), c.x, c.dy, cb_store_wgrad(e, i), ws);
        cb_store_finish_wgrad(e, i);
        if (e->lb[i].db) cb_store_bias_grad(e, i, c.dy, e->lb[i].db);
    }
}

// mean ms of 3 runs after one of phase ph of conv layer i on an own storage kernel (run), with
// wsz bytes of workspace; -1 where it cannot run (no input gradient, no memory) or failed
static double time_own(cb_exec *e, int i, cb_phase ph, size_t wsz, void (*run)(cb_exec *, int, cb_phase, void *, void *)) {
    const cb_layer *L = &e->net->layers[i];
    void *ws = NULL, *dx = e->lb[L->parents[0]].dy;
    if ((wsz && cudaMalloc(&ws, wsz) != cudaSuccess) || (ph == CB_PHASE_BWD_DATA && !dx) || (ph == CB_PHASE_BWD_FILTER && !e->lb[i].dw)) {
        cudaGetLastError();
        return -1;
    }
    for (int r = 0; r < 4; r++) {
        if (r == 1) cb_cuda_timer_start(e);
        run(e, i, ph, ws, dx);
    }
    double t = cb_cuda_timer_stop(e) / 3;
    cudaFree(ws);
    return cudaGetLastError() == cudaSuccess ? t : -1;
}

// the own depthwise kernels' time for phase ph; where the two-channel stride-1 NHWC kernel applies
// (forward, data gradient), both it and the 16-byte one, the faster kept (dw_pair[ph])
double cb_dnn_time_dw(cb_exec *e, int i, cb_phase ph) {
    cb_conv_params p;
    cb_conv_params_of(&e->net->layers[i], &p);
    dnn_layer *l = lay(e, i);
    l->dw_pair[ph] = false;
    double t = time_own(e, i, ph, ph == CB_PHASE_BWD_FILTER ? cb_cuda_dw_workspace(&p, is_nhwc(e)) : 0, cb_dnn_run_dw);
    if (ph == CB_PHASE_BWD_FILTER || !is_nhwc(e) || !cb_cuda_dw_pair_applies(&p)) return t;
    l->dw_pair[ph] = true;
    double t2 = time_own(e, i, ph, 0, cb_dnn_run_dw);
    if (t2 >= 0 && (t < 0 || t2 < t)) return t2;
    l->dw_pair[ph] = false;
    return t;
}

// the wgmma kernels' form on this storage (cb_cuda_wg_store_*'s f32): 0 bf16; on fp32, 1 tf32
// products under tf32, 2 fp32-accurate ones (3xTF32) under strict fp32
int cb_dnn_wg_mode(const cb_exec *e) { return is_bf16(e) ? 0 : e->opts.precision == CB_PREC_TF32 ? 1 : 2; }

bool cb_dnn_wg_ok(const cb_exec *e, int i, cb_phase ph) {
    const cb_layer *L = &e->net->layers[i];
    // NHWC: bf16; fp32 with tf32 products under tf32, with 3xTF32 ones under fp32 (unless $CONVBENCH_FP32_3XTF32=off)
    if (L->op != CB_OP_CONV || !is_nhwc(e) || !cb_dnn_conv_own_ok(L) || cb_store_conv_cpad(e, L) != L->p.conv.cin) return false;
    cb_conv_params p;
    cb_conv_params_of(L, &p);
    return cb_cuda_wg_store_supports(&p, ph, cb_dnn_wg_mode(e));
}

// the kernel reads the storage's tensors as they are: the input unpadded (it takes any padding),
// the KRSC bf16 (tf32: fp32) weight copy; its backward filter writes the fp32 KCRS master gradient itself
void cb_dnn_run_wg(cb_exec *e, int i, cb_phase ph, void *ws, void *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    own_conv c = own_conv_of(e, i);
    if (ph == CB_PHASE_FORWARD) {
        // bias and ReLU in the epilogue; another activation (no batch norm between) in the storage's pass
        bool other = !L->bn && L->act != CB_ACT_NONE && L->act != CB_ACT_RELU, relu = !L->bn && L->act == CB_ACT_RELU;
        cb_cuda_wg_store_forward(&c.p, c.x, cb_store_weights(e, i), other ? NULL : b->b, c.y, relu, cb_dnn_wg_mode(e));
        ((cb_cuda_state *)e->state)->fused_act[i] = relu;
        if (other && b->b) cb_store_bias_act(e, i, b->b, c.y);
    } else if (ph == CB_PHASE_BWD_DATA) {
        cb_cuda_wg_store_backward_data(&c.p, c.dy, cb_store_weights(e, i), dx, ws, cb_dnn_wg_mode(e));
    } else {
        cb_cuda_wg_store_backward_filter(&c.p, c.x, c.dy, b->dw, ws, cb_dnn_wg_mode(e));
        if (b->db) cb_store_bias_grad(e, i, c.dy, b->db);
    }
}

double cb_dnn_time_wg(cb_exec *e, int i, cb_phase ph) {
    cb_conv_params p;
    cb_conv_params_of(&e->net->layers[i], &p);
    return time_own(e, i, ph, cb_cuda_wg_store_workspace(&p, ph, cb_dnn_wg_mode(e)), cb_dnn_run_wg);
}

void cb_dnn_forward(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    dnn_state *d = dnn(e);
    const float *x = e->lb[L->parents[0]].y;
    float *out = cb_exec_op_out(e, i);
    bool own = l->own[0];
    ((cb_cuda_state *)e->state)->fused_act[i] = l->in_bn_add && L->act != CB_ACT_NONE;
    if (l->in_bn_add) return; // computed, with its activation, by the batch-norm pass before it
    switch (L->op) {
    case CB_OP_CONV:
        if (own) cb_cuda_forward_op(e, i, train);
        else if (l->dw[0]) cb_dnn_run_dw(e, i, CB_PHASE_FORWARD, NULL, NULL);
        else if (l->wg[0]) cb_dnn_run_wg(e, i, CB_PHASE_FORWARD, NULL, NULL);
        else {
            const void *xc = x;
            if (l->xpad) {
                pad_input(e, i, x, l->xpad);
                xc = l->xpad;
            }
            if (l->blas[0]) cb_blas_conv(e, i, CB_PHASE_FORWARD, NULL);
            else if (l->g[0] && cb_dnn_graph_run(e, l->g[0], xc, cb_store_weights(e, i), out, e->ws)) {
            } else cudnnConvolutionForward(d->h, &one, l->xd, xc, l->wd, cb_store_weights(e, i), l->cd[0], l->fwd, e->ws, b->ws[0], &zero, l->yd,
                                         out);
            if (b->b) cb_store_bias_act(e, i, b->b, out);
        }
        break;
    case CB_OP_FC:
        if (own) cb_cuda_forward_op(e, i, train);
        else cb_blas_fc(e, i, CB_PHASE_FORWARD);
        break;
    case CB_OP_POOL:
        if (own && native(e)) cb_cuda_forward_op(e, i, train);
        else cb_dnn_run_pool(e, i, own, 0, NULL);
        break;
    case CB_OP_LRN:
        if (own) cb_cuda_forward_op(e, i, train);
        else cudnnLRNCrossChannelForward(d->h, l->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, l->yd, x, &zero, l->yd, out);
        break;
    case CB_OP_BATCHNORM:
        if (!l->own_bn && !l->bnd) cb_cuda_forward_op(e, i, train);
        else bn_forward(e, i, train, false, out);
        break;
    case CB_OP_ACT:
        if (l->act) cudnnActivationForward(d->h, l->act, &one, l->yd, x, &zero, l->yd, out);
        else cb_fmt_act_forward((size_t)cb_shape_count(L->out), L->p.act.fn, x, NULL, out, is_bf16(e));
        break;
    case CB_OP_SOFTMAX:
        cudnnSoftmaxForward(d->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, l->xd, x, &zero, l->xd, out);
        break;
    case CB_OP_MUL: { // the full-size operand first; the other may be (N, C, 1, 1)
        int big = mul_full(e, i, 0) ? 0 : 1;
        cb_fmt_mul_forward(cb_store_of(e)->fmt, (int)L->out.n, (int)L->out.c, L->out.h * L->out.w, !mul_full(e, i, 1 - big), e->lb[L->parents[big]].y,
                           e->lb[L->parents[1 - big]].y, out);
        break;
    }
    case CB_OP_SCALE:
        cb_fmt_scale_forward(cb_store_of(e)->fmt, (int)L->out.n, (int)L->out.c, L->out.h * L->out.w, x, b->w, out);
        break;
    case CB_OP_LAYERNORM:
        cb_fmt_layernorm_forward(cb_store_of(e)->fmt, (int)L->out.n, (int)L->out.c, L->out.h * L->out.w, L->p.ln.eps, x, b->w, b->b, out,
                                 train ? b->aux : NULL);
        break;
    default: // concat, add, dropout, reshape: the own kernels (the sum with its ReLU in one pass)
        if (native(e) && L->op != CB_OP_ADD) cb_cuda_forward_op(e, i, train);
        else cb_store_forward_op(e, i, train);
        break;
    }
}

// the activation's gradient with the own kernels (a ReLU's reads y > 0 as the CPU reference does)
void cb_dnn_backward_epilogue(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    bool fused = L->bn && l->own_bn && bn_act_fused(e, L); // the own backward applies the activation's gradient itself
    bool masked = cb_relu_taken(b)  // (the own max pool or the concatenation after it applied the ReLU's gradient,
                  || l->relu_in_bn; // or the batch norm before this sum will)
    if (L->act != CB_ACT_NONE && !fused && !masked && !cb_cuda_act_bias_grad(e, i, is_nhwc(e), is_bf16(e))) act_backward(e, i);
    if (L->bn) {
        if (!l->own_bn && !l->bnd) {
            cb_bn_params bp;
            cb_bn_params_of(L, &bp);
            cb_cuda_bn_backward(&bp, b->pre, b->gamma, b->bn_mean, b->bn_invstd, b->dy, b->dpre, b->dgamma, b->dbeta);
        } else bn_backward_of(e, i, b->dy, b->dpre);
    }
}

// cuDNN's data gradient of conv layer i into dx (beta: 0 to write, 1 to add)
static void dnn_dgrad(cb_exec *e, int i, const float *beta, void *dx) {
    dnn_layer *l = lay(e, i);
    if (l->g[1] && *beta == 0 && cb_dnn_graph_run(e, l->g[1], dx, cb_store_weights(e, i), cb_exec_op_grad(e, i), e->ws)) return;
    cudnnConvolutionBackwardData(dnn(e)->h, &one, l->wd, cb_store_weights(e, i), l->yd, cb_exec_op_grad(e, i), l->cd[1], l->bwd_data, e->ws,
                                 e->lb[i].ws[1], beta, l->xd, dx);
}

void cb_dnn_backward_data(cb_exec *e, int i, int slot, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    dnn_state *d = dnn(e);
    const float *dy = cb_exec_op_grad(e, i);
    const float *x = e->lb[L->parents[slot]].y;
    switch (L->op) {
    case CB_OP_CONV:
        if (l->own[1]) cb_cuda_backward_data(e, i, slot, dx);
        else if (l->dw[1]) cb_dnn_run_dw(e, i, CB_PHASE_BWD_DATA, NULL, dx);
        else if (l->wg[1]) cb_dnn_run_wg(e, i, CB_PHASE_BWD_DATA, e->ws, dx);
        else if (l->blas[1]) cb_blas_conv(e, i, CB_PHASE_BWD_DATA, dx);
        else if (l->dxpad) {
            dnn_dgrad(e, i, &zero, l->dxpad);
            if (is_nhwc(e)) cb_fmt_window_nhwc(L->in.n, l->xs.h, l->xs.w, l->xs.c, l->dxpad, L->in.h, L->in.w, L->in.c, dx, is_bf16(e));
            else cb_fmt_window_nchw(L->in.n * L->in.c, l->xs.h, l->xs.w, l->dxpad, L->in.h, L->in.w, dx, is_bf16(e));
        } else dnn_dgrad(e, i, &zero, dx);
        break;
    case CB_OP_FC:
        if (l->own[1]) cb_cuda_backward_data(e, i, slot, dx);
        else cb_blas_fc_data(e, i, dy, dx);
        break;
    case CB_OP_POOL:
        if (l->own[1] && native(e)) cb_cuda_backward_data(e, i, slot, dx);
        else cb_dnn_run_pool(e, i, l->own[1], 1, dx);
        break;
    case CB_OP_LRN:
        if (l->own[1]) cb_cuda_backward_data(e, i, slot, dx);
        else cudnnLRNCrossChannelBackward(d->h, l->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, l->yd, cb_exec_op_out(e, i), l->yd, dy,
                                          l->yd, x, &zero, l->yd, dx);
        break;
    case CB_OP_BATCHNORM:
        if (native(e) && !l->own_bn) cb_cuda_backward_data(e, i, slot, dx);
        else bn_backward_of(e, i, cb_exec_op_grad(e, i), dx);
        break;
    case CB_OP_MUL: { // d(slot) = dy * other, summed over the pixels where the slot was broadcast
        int n = (int)L->out.n, c = (int)L->out.c;
        const void *other = e->lb[L->parents[1 - slot]].y;
        if (mul_full(e, i, slot)) cb_fmt_mul_forward(cb_store_of(e)->fmt, n, c, L->out.h * L->out.w, !mul_full(e, i, 1 - slot), dy, other, dx);
        else cb_fmt_mul_backward_bcast(cb_store_of(e)->fmt, n, c, L->out.h * L->out.w, dy, other, dx);
        break;
    }
    case CB_OP_SCALE:
        cb_fmt_scale_forward(cb_store_of(e)->fmt, (int)L->out.n, (int)L->out.c, L->out.h * L->out.w, dy, b->w, dx);
        break;
    case CB_OP_LAYERNORM:
        cb_fmt_layernorm_backward(cb_store_of(e)->fmt, (int)L->out.n, (int)L->out.c, L->out.h * L->out.w, x, b->w, dy, b->aux, dx, NULL, NULL,
                                  d->bn_part);
        break;
    default: // relu, dropout, concat, add, softmax, reshape
        if (native(e)) cb_cuda_backward_data(e, i, slot, dx);
        else cb_store_backward_data(e, i, slot, dx);
        break;
    }
}

// A convolution on cuDNN's own dgrad (no padded copy) or on a cuBLAS GEMM, a pool on cuDNN, and a
// global average pool on the own kernels (an SE block's, whose input the SE product reads too) add
// their input gradient into dx in the same call (beta = 1), with one rounding to the storage; every
// other layer leaves it to the engine (the gradient apart in the scratch, then a pass to add it).
bool cb_dnn_backward_data_add(cb_exec *e, int i, int slot, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    dnn_layer *l = lay(e, i);
    if (L->op == CB_OP_POOL) {
        cb_pool_params pp;
        cb_pool_params_of(L, &pp);
        const void *dy = cb_exec_op_grad(e, i);
        if (!l->own[1])
            return cudnnPoolingBackward(dnn(e)->h, l->pd, &one, l->yd, cb_exec_op_out(e, i), l->yd, dy, l->xd, e->lb[L->parents[0]].y, &one, l->xd,
                                        dx) == CUDNN_STATUS_SUCCESS;
        if (!cb_cuda_pool_is_global_avg(&pp)) return false;
        cb_cuda_global_avg_backward_add(&pp, is_nhwc(e), is_bf16(e), dy, dx);
        return true;
    }
    if (L->op != CB_OP_CONV || l->own[1] || l->dw[1] || l->wg[1] || l->dxpad || (l->g[1] && !l->blas[1])) return false; // (a graph plan writes, beta 0)
    if (l->blas[1]) {
        cb_blas_conv_data_add(e, i, dx);
        return true;
    }
    dnn_dgrad(e, i, &one, dx);
    return true;
}

void cb_dnn_backward_filter(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = lay(e, i);
    dnn_state *d = dnn(e);
    const float *dy = cb_exec_op_grad(e, i);
    const float *x = e->lb[L->parents[0]].y;
    if (L->op == CB_OP_CONV && l->dw[2]) {
        cb_dnn_run_dw(e, i, CB_PHASE_BWD_FILTER, e->ws, NULL);
    } else if (L->op == CB_OP_CONV && l->wg[2]) {
        cb_dnn_run_wg(e, i, CB_PHASE_BWD_FILTER, e->ws, NULL);
    } else if (L->op == CB_OP_CONV && !l->own[2]) {
        // the padded input is made again here: the forward's copy was not kept (its bytes served
        // other buffers in between; a copy costs a pass over the input, keeping it its bytes over the step)
        void *xpad = l->xpad_bwd ? l->xpad_bwd : l->xpad;
        if (xpad) pad_input(e, i, x, xpad);
        if (l->blas[2]) cb_blas_conv(e, i, CB_PHASE_BWD_FILTER, NULL);
        else if (l->g[2] && cb_dnn_graph_run(e, l->g[2], xpad ? xpad : x, cb_store_wgrad(e, i), dy, e->ws)) {
        } else cudnnConvolutionBackwardFilter(d->h, &one, l->xd, xpad ? xpad : x, l->yd, dy, l->cd[2], l->bwd_filter, e->ws, b->ws[2],
                                       &zero, l->wd, cb_store_wgrad(e, i));
        cb_store_finish_wgrad(e, i);
        if (b->db) cb_store_bias_grad(e, i, dy, b->db);
    } else if (L->op == CB_OP_FC && !l->own[2]) {
        cb_blas_fc(e, i, CB_PHASE_BWD_FILTER);
    } else if (L->op == CB_OP_SCALE) {
        cb_fmt_scale_backward_filter(cb_store_of(e)->fmt, (int)L->out.n, (int)L->out.c, L->out.h * L->out.w, x, dy, b->dw, d->bn_part);
    } else if (L->op == CB_OP_LAYERNORM) {
        cb_fmt_layernorm_backward(cb_store_of(e)->fmt, (int)L->out.n, (int)L->out.c, L->out.h * L->out.w, x, b->w, dy, b->aux, NULL, b->dw,
                                  b->db, d->bn_part);
    } else if (L->op == CB_OP_BATCHNORM && (!native(e) || l->own_bn)) {
        // backward_data computes dgamma and dbeta with dx; without an input gradient, here
        if (!e->lb[L->parents[0]].dy) bn_backward_of(e, i, cb_exec_op_grad(e, i), NULL);
    } else cb_cuda_backward_filter(e, i);
}

const cb_backend cb_backend_cudnn = DNN_BACKEND("cudnn", init_cudnn, cb_dnn_destroy, cb_dnn_supports);
