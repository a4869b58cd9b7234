// The "cuda" backend: convbench's own kernels (no cuDNN, no cuBLAS) on NCHW fp32 device buffers,
// everything on the default stream. Mirrors src/cpu/backend.c op for op.
#include "cuda/backend.h"
#include "cuda/launch.h"
#include "core/net.h"
#include "gpu/gpu.h"
#include "storage/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cb_status cb_cuda_init_state(cb_exec *e, cb_error *err) {
    // $CONVBENCH_WG_BLOCKS=N: at most N blocks for the own wgmma kernels (tests: every tile boundary of
    // their pipeline crossed on small shapes; igemm_wgmma.cuh, cb_wg_grid)
    const char *wb = getenv("CONVBENCH_WG_BLOCKS");
    char *end = NULL;
    long nb = wb && *wb ? strtol(wb, &end, 10) : 0;
    if (wb && *wb && (*end || nb < 1 || nb > 1L << 20))
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_WG_BLOCKS", NULL, "'%s' is not a count of blocks from 1 to 1048576", wb);
    // $CONVBENCH_WG_TMA=on|off: the wgmma kernel's TMA-fed tiles on bf16 NHWC storage, or the cp.async ones
    int wt, x3;
    if (cb_env_on_off("CONVBENCH_WG_TMA", &wt, err) != CB_OK) return CB_STATUS_ARG;
    // $CONVBENCH_FP32_3XTF32=on|off: under strict fp32, the own wgmma kernels' fp32-accurate 3xTF32
    // products (on, the default), or fp32 FMA products alone
    if (cb_env_on_off("CONVBENCH_FP32_3XTF32", &x3, err) != CB_OK) return CB_STATUS_ARG;
    // $CONVBENCH_DW_PAIR=on|off: the stride-1 NHWC depthwise kernels at two channels a thread where
    // they apply (on), or 16 bytes of channels a thread (off); unset: raced per layer and phase on
    // cudnn and auto (cb_dnn_time_dw), the second elsewhere (src/cuda/conv_depthwise.cu)
    int dp;
    if (cb_env_on_off("CONVBENCH_DW_PAIR", &dp, err) != CB_OK) return CB_STATUS_ARG;
    cb_cuda_dw_pair(dp);
    if (!cb_gpu_available())
        return cb_fail(err, CB_STATUS_DEVICE, "--backend", NULL, "backend %s: no CUDA device is visible", e->be->name);
    cb_cuda_state *s = cb_xcalloc(1, sizeof *s);
    e->state = s;
    s->conv = cb_xcalloc((size_t)e->net->nlayers, sizeof *s->conv);
    s->fused_act = cb_xcalloc((size_t)e->net->nlayers, sizeof *s->fused_act);
    s->bias_done = cb_xcalloc((size_t)e->net->nlayers, sizeof *s->bias_done);
    cb_cuda_wg_set_blocks(nb);
    cb_cuda_wg_set_tma(wt != 0);
    cb_cuda_wg_set_x3(x3 != 0);
    cb_status fst = cb_env_fuse_epilogue(&s->fuse_epilogue, err); // off: the separate passes, to compare
    if (fst != CB_OK) return fst;
    if ((fst = cb_env_concat_relu(&s->concat_relu, err)) != CB_OK) return fst;
    s->fuse_pool = cb_xcalloc((size_t)e->net->nlayers, sizeof *s->fuse_pool);
    if (e->opts.conv_algo && strcmp(e->opts.conv_algo, "auto") != 0) {
        const cb_cuda_conv_algo *a = cb_cuda_conv_algo_find(e->opts.conv_algo);
        if (!a) {
            char names[512] = "";
            for (int j = 0; cb_cuda_conv_algos[j]; j++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", j ? ", " : "", cb_cuda_conv_algos[j]->name);
            return cb_fail(err, CB_STATUS_ARG, "--conv-algo", NULL, "'%s' is not one of auto, %s", e->opts.conv_algo, names);
        }
        if (!cb_cuda_conv_algo_allowed(a, e->opts.precision))
            return cb_fail(err, CB_STATUS_ARG, "--conv-algo", NULL, "%s computes in %s; --precision %s does not allow it", a->name,
                           cb_precision_name(a->prec), cb_precision_name(e->opts.precision));
    }
    for (int j = 0; j < CB_CUDA_TIMER_DEPTH; j++) CB_CUDA_TRY(cudaEventCreate(&s->t0[j]));
    CB_CUDA_TRY(cudaEventCreate(&s->t1));
    CB_CUDA_TRY(cudaMalloc((void **)&s->loss, sizeof(double)));
    CB_CUDA_TRY(cudaMalloc((void **)&s->step, sizeof *s->step));
    CB_CUDA_TRY(cudaMemset(s->step, 0, sizeof *s->step));
    s->dropout_seed = e->opts.seed * 0xC2B2AE3D27D4EB4FULL + 0x165667B19E3779F9ULL;
    for (int i = 1; i < e->net->nlayers; i++) s->dropout |= e->net->layers[i].op == CB_OP_DROPOUT;
    size_t part = 0; // every backend's bias gradient (cb_fmt_bias_grad) sums its chunks here
    for (int i = 1; e->opts.train && i < e->net->nlayers; i++) {
        const cb_layer *L = &e->net->layers[i];
        int k = L->op == CB_OP_CONV && L->p.conv.bias ? (int)L->p.conv.k : L->op == CB_OP_FC && L->p.fc.bias ? (int)L->p.fc.k : 0;
        if (k && cb_fmt_bias_part_floats(k) > part) part = cb_fmt_bias_part_floats(k);
    }
    if (part) {
        CB_CUDA_TRY(cudaMalloc((void **)&s->bias_part, part * 4));
        e->allocated += part * 4;
    }
    return CB_OK;
}

void cb_cuda_destroy_state(cb_exec *e) {
    cb_cuda_state *s = e->state;
    if (!s) return;
    for (int j = 0; j < CB_CUDA_TIMER_DEPTH; j++)
        if (s->t0[j]) cudaEventDestroy(s->t0[j]);
    if (s->t1) cudaEventDestroy(s->t1);
    for (int j = 0; j < s->cap_marks; j++) cudaEventDestroy(s->marks[j]);
    free(s->marks);
    cb_gpu_hold_free(&s->hold);
    cudaFree(s->loss);
    cudaFree(s->step);
    cudaFree(s->bias_part);
    if (s->graph) cudaGraphExecDestroy(s->graph);
    free(s->conv);
    free(s->fused_act);
    free(s->bias_done);
    free(s->fuse_pool);
    free(s);
    e->state = NULL;
}

// Dropout draws its mask from a fixed seed per layer and the device's count of training forwards,
// so that a replayed step graph draws a new mask each step as the launched steps do.
uint64_t cb_cuda_dropout_seed(cb_exec *e, int layer) {
    return ((cb_cuda_state *)e->state)->dropout_seed + (uint64_t)layer * 0x9E3779B97F4A7C15ULL;
}
void cb_cuda_step_begin(cb_exec *e) {
    cb_cuda_state *s = e->state;
    if (s->dropout) cb_cuda_counter_inc(s->step);
}

// A step graph: the work queued on this thread's default stream (every kernel's and library
// call's stream, see the Makefile) between begin and end, recorded, instantiated and replayed.
static bool graph_fail(char *why, size_t n, const char *what, cudaError_t c) {
    snprintf(why, n, "%s: %s", what, cudaGetErrorString(c));
    cudaGetLastError();
    return false;
}
bool cb_cuda_graph_begin(cb_exec *e, char *why, size_t n) {
    cb_cuda_state *s = e->state;
    if (s->graph) cudaGraphExecDestroy(s->graph), s->graph = NULL;
    cudaError_t c = cudaDeviceSynchronize();
    if (c == cudaSuccess) c = cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal);
    if (c != cudaSuccess) return graph_fail(why, n, "cudaStreamBeginCapture", c);
    s->capturing = true;
    return true;
}
bool cb_cuda_graph_end(cb_exec *e, char *why, size_t n) {
    cb_cuda_state *s = e->state;
    cudaGraph_t g = NULL;
    s->capturing = false;
    cudaError_t c = cudaStreamEndCapture(cudaStreamPerThread, &g);
    if (c != cudaSuccess) return graph_fail(why, n, "recording the step (cudaStreamEndCapture)", c);
    c = cudaGraphInstantiate(&s->graph, g, 0);
    cudaGraphDestroy(g);
    if (c != cudaSuccess) {
        s->graph = NULL;
        return graph_fail(why, n, "cudaGraphInstantiate", c);
    }
    return true;
}
void cb_cuda_graph_launch(cb_exec *e) { cudaGraphLaunch(((cb_cuda_state *)e->state)->graph, cudaStreamPerThread); }

// every layer kind but the CPU-only ones (cb_layer_cpu_only) and every activation, with its own
// kernels, in fp32 NCHW storage (the registry declines another --layout)
static cb_reason supports(const cb_net *net, int i, const cb_exec_opts *o, char *why, size_t n) {
    return cb_layer_gpu_supports(&net->layers[i], why, n);
}

void *cb_cuda_alloc(cb_exec *e, size_t bytes) {
    void *p = NULL;
    cudaError_t rc = cudaMalloc(&p, bytes);
    if (rc != cudaSuccess) {
        cudaGetLastError();
        if (e->state) ((cb_cuda_state *)e->state)->alloc_err = (int)rc;
        return NULL;
    }
    return p;
}

// the own pooling kernels' argmax item (src/cuda/pool.cu argmax_is_byte, src/storage/pool_fmt.cu):
// a window offset in one byte (255: a window wholly in the padding) where the window has at most
// 255 taps, else an int32
int cb_cuda_pool_argmax_item(const cb_layer *L) { return (int64_t)L->p.pool.win.r * L->p.pool.win.s <= 255 ? 1 : 4; }

// Is the device lost? An error no later call survives (an illegal address, a kernel's launch
// failure: sticky) comes back from every synchronisation, where a pending ordinary one is cleared
// by reading it: so synchronise, clear, and synchronise again. rc: the first failure.
bool cb_cuda_device_lost(cudaError_t *rc) {
    *rc = cudaDeviceSynchronize();
    if (*rc == cudaSuccess) return false;
    cudaGetLastError();
    return cudaDeviceSynchronize() != cudaSuccess;
}

bool cb_cuda_alloc_why(cb_exec *e, char *why, size_t n) {
    cudaError_t rc = e->state ? (cudaError_t)((cb_cuda_state *)e->state)->alloc_err : cudaErrorMemoryAllocation, lost_rc;
    if (rc == cudaSuccess) rc = cudaErrorMemoryAllocation;
    if (cb_cuda_device_lost(&lost_rc)) {
        snprintf(why, n, "the GPU failed before it: %s (%s), which no later call survives", cudaGetErrorName(lost_rc),
                 cudaGetErrorString(lost_rc));
        return true;
    }
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) == cudaSuccess)
        snprintf(why, n, "cudaMalloc: %s, %.2f of %.2f GiB free", cudaGetErrorName(rc), (double)fr / (1 << 30), (double)tot / (1 << 30));
    else snprintf(why, n, "cudaMalloc: %s", cudaGetErrorName(rc));
    cudaGetLastError();
    return false;
}

size_t cb_cuda_mem_free(cb_exec *e) {
    (void)e;
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return fr;
}

cb_status cb_cuda_nomem(cb_exec *e, cb_error *err, const char *layer, const char *what) {
    char why[200];
    bool lost = cb_cuda_alloc_why(e, why, sizeof why);
    return cb_fail(err, lost ? CB_STATUS_DEVICE : CB_STATUS_NOMEM, e->net->path, layer, "%s device memory for %s: %s", lost ? "no" : "out of",
                   what, why);
}

bool cb_cuda_device_ok(cb_exec *e, char *why, size_t n) {
    (void)e;
    cudaError_t rc;
    if (!cb_cuda_device_lost(&rc)) return true;
    snprintf(why, n, "the GPU failed: %s (%s), which no later call survives", cudaGetErrorName(rc), cudaGetErrorString(rc));
    return false;
}
void cb_cuda_release(cb_exec *e, void *p) {
    if (!cb_cuda_vmm_release(e, p)) cudaFree(p);
}
void cb_cuda_upload(cb_exec *e, void *dst, const void *src, size_t bytes) { cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice); }
void cb_cuda_download(cb_exec *e, void *dst, const void *src, size_t bytes) { cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost); }

// The engine nests timers (fullpass times the whole backward around per-layer timers), so starts
// are a stack and each stop pairs with the latest open start.
void cb_cuda_timer_start(cb_exec *e) {
    cb_cuda_state *s = e->state;
    int d = s->depth < CB_CUDA_TIMER_DEPTH ? s->depth : CB_CUDA_TIMER_DEPTH - 1;
    cudaEventRecord(s->t0[d], 0);
    s->depth = d + 1;
}
double cb_cuda_timer_stop(cb_exec *e) {
    cb_cuda_state *s = e->state;
    float ms = 0;
    int d = s->depth > 0 ? --s->depth : 0;
    cudaEventRecord(s->t1, 0);
    cudaEventSynchronize(s->t1);
    cudaEventElapsedTime(&ms, s->t0[d], s->t1);
    return ms;
}

// Marks: a pool of events that grows to the largest pass (the warm-up steps grow it, so timed
// steps create none); recording one costs the host a few microseconds and the device nothing.
void cb_cuda_mark_reset(cb_exec *e) { ((cb_cuda_state *)e->state)->nmarks = 0; }
int cb_cuda_mark(cb_exec *e) {
    cb_cuda_state *s = e->state;
    if (s->nmarks == s->cap_marks) {
        int cap = s->cap_marks ? 2 * s->cap_marks : 256;
        cudaEvent_t *m = realloc(s->marks, (size_t)cap * sizeof *m);
        if (!m) return -1;
        s->marks = m;
        for (; s->cap_marks < cap; s->cap_marks++)
            if (cudaEventCreate(&s->marks[s->cap_marks]) != cudaSuccess) return -1;
    }
    cudaEventRecord(s->marks[s->nmarks], 0);
    return s->nmarks++;
}
double cb_cuda_mark_ms(cb_exec *e, int a, int b) {
    cb_cuda_state *s = e->state;
    float ms = 0;
    if (a < 0 || b < 0 || a >= s->nmarks || b >= s->nmarks) return 0;
    cudaEventSynchronize(s->marks[b]);
    cudaEventElapsedTime(&ms, s->marks[a], s->marks[b]);
    return ms;
}

// be->hold (cb_gpu_hold); never while a step graph is recorded
int cb_cuda_hold(cb_exec *e, bool on) {
    cb_cuda_state *s = e->state;
    if (s->capturing || !cb_gpu_hold_ready(&s->hold)) return -1;
    if (on && !cb_gpu_hold_on(&s->hold)) return -1;
    if (!on) cb_gpu_hold_off(&s->hold);
    return cb_gpu_hold_timeouts(&s->hold);
}

// time one phase of conv layer i with algorithm a: a warm-up, then the mean of 3 runs (ms)
static double time_conv(cb_exec *e, int i, cb_phase ph, const cb_cuda_conv_algo *a, void *ws) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    cb_conv_params p;
    cb_conv_params_of(L, &p);
    const float *x = e->lb[L->parents[0]].y;
    float *y = cb_exec_op_out(e, i), *dx = e->lb[L->parents[0]].dy;
    // the layer's own gradient buffer may not hold a gradient yet: time on y (same shape)
    const float *dy = cb_exec_op_grad(e, i) ? cb_exec_op_grad(e, i) : y;
    for (int r = 0; r < 4; r++) {
        if (r == 1) cb_cuda_timer_start(e);
        if (ph == CB_PHASE_FORWARD) a->forward(&p, x, b->w, b->b, y, false, ws);
        else if (ph == CB_PHASE_BWD_DATA) a->backward_data(&p, dy, b->w, dx, ws);
        else a->backward_filter(&p, x, dy, b->dw, NULL, ws); // (the bias gradient is the engine's, apart)
    }
    double ms = cb_cuda_timer_stop(e) / 3;
    if (cudaGetLastError() != cudaSuccess) return -1; // a launch that failed (too many resources): not a candidate
    return ms;
}

double cb_cuda_conv_choose(cb_exec *e, int i, cb_phase ph, bool measure) {
    cb_cuda_state *s = e->state;
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    cb_conv_params p;
    cb_conv_params_of(L, &p);
    const cb_cuda_conv_algo *named = cb_cuda_conv_algo_find(e->opts.conv_algo), *best = cb_cuda_conv_algos[0];
    double best_ms = -1;
    if (named) {
        if (cb_cuda_conv_algo_supports(named, &p, ph)) best = named;
    } else if (measure) {
        for (int j = 0; cb_cuda_conv_algos[j]; j++) {
            const cb_cuda_conv_algo *a = cb_cuda_conv_algos[j];
            size_t wsz = cb_cuda_conv_algo_workspace(a, &p, ph);
            if (!cb_cuda_conv_algo_allowed(a, e->opts.precision) || !cb_cuda_conv_algo_supports(a, &p, ph) ||
                wsz > e->opts.workspace_limit)
                continue;
            void *ws = NULL;
            if (wsz && cudaMalloc(&ws, wsz) != cudaSuccess) {
                cudaGetLastError();
                if (e->opts.verbose > 0)
                    fprintf(stderr, "note: layer '%s' own algorithm %s skipped: no memory for its %.1f MiB workspace\n",
                            L->name, a->name, wsz / 1048576.0);
                continue;
            }
            double ms = time_conv(e, i, ph, a, ws);
            cudaFree(ws);
            if (ms >= 0 && (best_ms < 0 || ms < best_ms)) best = a, best_ms = ms;
        }
    }
    s->conv[i][ph] = best;
    b->ws[ph] = cb_cuda_conv_algo_workspace(best, &p, ph);
    b->choice[ph] = cb_choice_of(CB_IMPL_OWN, cb_cuda_conv_algo_index(best), best->name);
    b->choice[ph].ms = best_ms;
    if (named && best != named) b->choice[ph].flags |= CB_CHOICE_FALLBACK;
    return best_ms;
}

// A CB_FUSION_CONV_RELU_MAXPOOL plan node (core/plan.c: inference, conv layer i with its ReLU and
// no batch norm, whose one consumer is a pool) whose pool the forward algorithm can compute in
// the same kernel (a VALID max pool of window = stride) runs both at once:
// the pool's forward becomes a no-op, the conv's time covers both, and its algorithm is the
// "+pool" one. A measured choice moves to its algorithm's "+pool" twin (same forward kernel); a
// named one is kept as named.
static void plan_pool_fusion(cb_exec *e, int i, bool measured) {
    cb_cuda_state *s = e->state;
    const cb_net *net = e->net;
    const cb_layer *L = &net->layers[i];
    const cb_plan_node *nd = &e->plan.node[e->plan.node_of[i]];
    if (nd->fusion != CB_FUSION_CONV_RELU_MAXPOOL || nd->layer[0] != i) return; // the group is formed in core/plan.c
    int j = nd->layer[1];
    cb_conv_params cp;
    cb_pool_params pp;
    cb_conv_params_of(L, &cp);
    cb_pool_params_of(&net->layers[j], &pp);
    const cb_cuda_conv_algo *a = s->conv[i][CB_PHASE_FORWARD];
    if (!a->forward_relu_maxpool && measured) {
        char twin[64];
        snprintf(twin, sizeof twin, "%s+pool", a->name);
        const cb_cuda_conv_algo *t = cb_cuda_conv_algo_find(twin);
        if (t && cb_cuda_conv_algo_allowed(t, e->opts.precision) && cb_cuda_conv_algo_supports(t, &cp, CB_PHASE_FORWARD)) a = t;
    }
    if (!a->forward_relu_maxpool || !a->supports_relu_maxpool || !a->supports_relu_maxpool(&cp, &pp)) return;
    s->conv[i][CB_PHASE_FORWARD] = a;
    s->fuse_pool[i] = j, s->fuse_pool[j] = i;
    e->lb[i].ws[CB_PHASE_FORWARD] = cb_cuda_conv_algo_workspace(a, &cp, CB_PHASE_FORWARD);
    cb_choice *c = &e->lb[i].choice[CB_PHASE_FORWARD];
    *c = cb_choice_of(CB_IMPL_OWN, cb_cuda_conv_algo_index(a), a->name);
    c->flags |= CB_CHOICE_FUSED, c->fused_with = j;
    cb_choice *cj = &e->lb[j].choice[CB_PHASE_FORWARD];
    *cj = cb_choice_of(CB_IMPL_OWN, -1, "");
    cj->flags |= CB_CHOICE_IN_FUSED, cj->fused_with = i;
}

// does conv layer i run the max pool after it (plan_pool_fusion)?
static bool pool_fused(const cb_cuda_state *s, int i) {
    return s->fuse_pool[i] && s->conv[i][CB_PHASE_FORWARD] && s->conv[i][CB_PHASE_FORWARD]->forward_relu_maxpool;
}

static cb_status plan(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    if (L->op == CB_OP_CONV) {
        bool measure = !e->opts.conv_algo || strcmp(e->opts.conv_algo, "auto") == 0;
        cb_cuda_conv_choose(e, i, CB_PHASE_FORWARD, measure);
        plan_pool_fusion(e, i, measure);
        if (e->lb[L->parents[0]].dy) cb_cuda_conv_choose(e, i, CB_PHASE_BWD_DATA, measure);
        if (b->dw) cb_cuda_conv_choose(e, i, CB_PHASE_BWD_FILTER, measure);
    } else if (L->op == CB_OP_FC) {
        bool measure = !e->opts.conv_algo || strcmp(e->opts.conv_algo, "auto") == 0;
        cb_cuda_conv_choose(e, i, CB_PHASE_FORWARD, measure);
        if (e->lb[L->parents[0]].dy) cb_cuda_conv_choose(e, i, CB_PHASE_BWD_DATA, measure);
        if (b->dw) cb_cuda_conv_choose(e, i, CB_PHASE_BWD_FILTER, measure);
    }
    return CB_OK;
}

static const cb_cuda_conv_algo *conv_algo_of(cb_exec *e, int i, cb_phase ph) {
    cb_cuda_state *s = e->state;
    if (!s->conv[i][ph]) cb_cuda_conv_choose(e, i, ph, false); // planned by another backend: the default
    return s->conv[i][ph];
}

void cb_cuda_epilogue_forward(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    if (L->bn) {
        cb_bn_params bp;
        cb_bn_params_of(L, &bp);
        if (train) cb_cuda_bn_forward_train(&bp, b->pre, b->gamma, b->beta, b->y, b->bn_mean, b->bn_invstd, b->rmean, b->rvar, 0.1f);
        else cb_cuda_bn_forward_infer(&bp, b->pre, b->gamma, b->beta, b->y, b->rmean, b->rvar);
    }
    if (L->act != CB_ACT_NONE && !((cb_cuda_state *)e->state)->fused_act[i])
        cb_cuda_act_forward((size_t)cb_shape_count(L->out), L->act, b->y, b->act_in, b->y);
}

void cb_cuda_forward_op(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const float *x = e->lb[L->parents[0]].y;
    float *out = cb_exec_op_out(e, i);
    size_t n = (size_t)cb_shape_count(L->out);
    cb_cuda_state *s = e->state;
    s->fused_act[i] = false;
    switch (L->op) {
    case CB_OP_CONV:
    case CB_OP_FC: {
        cb_conv_params p;
        cb_conv_params_of(L, &p);
        s->fused_act[i] = L->act == CB_ACT_RELU && !L->bn;
        conv_algo_of(e, i, CB_PHASE_FORWARD)->forward(&p, x, b->w, b->b, out, s->fused_act[i], e->ws);
        break;
    }
    case CB_OP_POOL: {
        cb_pool_params p;
        cb_pool_params_of(L, &p);
        p.relu_mask = train && e->lb[L->parents[0]].relu_by_pool;
        cb_cuda_pool_forward(&p, x, out, b->aux);
        break;
    }
    case CB_OP_CONCAT: {
        int inner = (int)(L->out.h * L->out.w), off = 0;
        for (int j = 0; j < L->nparents; j++) {
            const cb_layer *P = &e->net->layers[L->parents[j]];
            cb_cuda_concat_copy((int)L->out.n, (int)L->out.c, (int)P->out.c, off, inner, out, e->lb[L->parents[j]].y, 0);
            off += (int)P->out.c;
        }
        break;
    }
    case CB_OP_ADD:
        cudaMemcpyAsync(out, x, n * 4, cudaMemcpyDeviceToDevice, 0);
        for (int j = 1; j < L->nparents; j++) cb_cuda_add(n, out, e->lb[L->parents[j]].y);
        break;
    case CB_OP_DROPOUT:
        if (train) cb_cuda_dropout_forward(n, L->p.dropout.keep, cb_cuda_dropout_seed(e, i), ((cb_cuda_state *)e->state)->step, x, b->aux, out);
        else cudaMemcpyAsync(out, x, n * 4, cudaMemcpyDeviceToDevice, 0);
        break;
    case CB_OP_SOFTMAX:
        cb_cuda_softmax((int)L->out.n, (int)L->out.c, x, out);
        break;
    case CB_OP_RESHAPE:
        cudaMemcpyAsync(out, x, n * 4, cudaMemcpyDeviceToDevice, 0);
        break;
    case CB_OP_LRN: {
        cb_lrn_params p;
        cb_lrn_params_of(L, &p);
        cb_cuda_lrn_forward(&p, x, out, b->aux);
        break;
    }
    case CB_OP_BATCHNORM: {
        cb_bn_params p;
        cb_bn_params_of(L, &p);
        if (train) cb_cuda_bn_forward_train(&p, x, b->gamma, b->beta, out, b->bn_mean, b->bn_invstd, b->rmean, b->rvar, 0.1f);
        else cb_cuda_bn_forward_infer(&p, x, b->gamma, b->beta, out, b->rmean, b->rvar);
        break;
    }
    case CB_OP_ACT:
        cb_cuda_act_forward(n, L->p.act.fn, x, NULL, out);
        break;
    case CB_OP_MUL: // declined by supports (cb_layer_gpu_supports)
    case CB_OP_LAYERNORM:
    case CB_OP_SCALE:
    case CB_OP_INPUT:
    case CB_OP_COUNT:
        break;
    }
}

void cb_cuda_forward(cb_exec *e, int i, bool train) {
    cb_cuda_state *s = e->state;
    const cb_layer *L = &e->net->layers[i];
    if (!train && s->fuse_pool[i]) {
        if (L->op == CB_OP_POOL && pool_fused(s, s->fuse_pool[i])) return; // computed with its conv
        if (L->op == CB_OP_CONV && pool_fused(s, i)) {
            int j = s->fuse_pool[i];
            cb_conv_params p;
            cb_pool_params pp;
            cb_conv_params_of(L, &p);
            cb_pool_params_of(&e->net->layers[j], &pp);
            s->fused_act[i] = true;
            s->conv[i][CB_PHASE_FORWARD]->forward_relu_maxpool(&p, e->lb[L->parents[0]].y, e->lb[i].w, e->lb[i].b, &pp,
                                                                e->lb[j].y, e->ws);
            return;
        }
    }
    cb_cuda_forward_op(e, i, train); // the engine calls cb_cuda_epilogue_forward (forward_epilogue)
}

bool cb_cuda_pool_relu_mask(const cb_exec *e, int i) { return ((const cb_cuda_state *)e->state)->fuse_epilogue; }
bool cb_cuda_concat_relu_mask(const cb_exec *e, int i) { return ((const cb_cuda_state *)e->state)->concat_relu; }

bool cb_cuda_act_bias_grad(cb_exec *e, int i, bool nhwc, bool bf16) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    cb_cuda_state *s = e->state;
    if (!s->fuse_epilogue || (L->op != CB_OP_CONV && L->op != CB_OP_FC) || L->bn || L->act == CB_ACT_NONE || !b->db || !b->dy || cb_exec_op_grad(e, i) != b->dy)
        return false;
    cb_shape o = L->out;
    int64_t rows = nhwc ? o.n * o.h * o.w : o.n, inner = nhwc ? 1 : o.h * o.w;
    cb_fmt_act_bias_grad(rows, (int)o.c, inner, L->act, b->act_in, b->y, b->dy, bf16, b->db, s->bias_part);
    s->bias_done[i] = true;
    return true;
}
bool cb_cuda_bias_taken(cb_exec *e, int i) {
    cb_cuda_state *s = e->state;
    bool t = s->bias_done[i];
    s->bias_done[i] = false;
    return t;
}

void cb_cuda_backward_epilogue(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    bool masked = cb_relu_taken(b); // (the max pool or concatenation after it applied the ReLU's gradient)
    if (L->act != CB_ACT_NONE && !masked && !cb_cuda_act_bias_grad(e, i, false, false)) cb_cuda_act_backward((size_t)cb_shape_count(L->out), L->act, b->act_in, b->y, b->dy, b->dy);
    if (L->bn) {
        cb_bn_params bp;
        cb_bn_params_of(L, &bp);
        cb_cuda_bn_backward(&bp, b->pre, b->gamma, b->bn_mean, b->bn_invstd, b->dy, b->dpre, b->dgamma, b->dbeta);
    }
}

void cb_cuda_backward_data(cb_exec *e, int i, int slot, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const float *dy = cb_exec_op_grad(e, i);
    const float *x = e->lb[L->parents[slot]].y;
    size_t nin = (size_t)cb_shape_count(e->net->layers[L->parents[slot]].out);
    switch (L->op) {
    case CB_OP_CONV:
    case CB_OP_FC: {
        cb_conv_params p;
        cb_conv_params_of(L, &p);
        conv_algo_of(e, i, CB_PHASE_BWD_DATA)->backward_data(&p, dy, b->w, dx, e->ws);
        break;
    }
    case CB_OP_POOL: {
        cb_pool_params p;
        cb_pool_params_of(L, &p);
        cb_cuda_pool_backward(&p, dy, b->aux, dx);
        break;
    }
    case CB_OP_CONCAT: {
        int inner = (int)(L->out.h * L->out.w), off = 0;
        for (int j = 0; j < slot; j++) off += (int)e->net->layers[L->parents[j]].out.c;
        if (e->lb[L->parents[slot]].relu_by_concat) // (that input's ReLU: its values, this output's slice, above 0)
            cb_fmt_concat_slice_masked(L->out.n, L->out.c, e->net->layers[L->parents[slot]].out.c, off, inner, 0, dx, dy, b->y);
        else cb_cuda_concat_copy((int)L->out.n, (int)L->out.c, (int)e->net->layers[L->parents[slot]].out.c, off, inner, dx, dy, 1);
        break;
    }
    case CB_OP_DROPOUT:
        cb_cuda_dropout_backward(nin, b->aux, dy, dx);
        break;
    case CB_OP_LRN: {
        cb_lrn_params p;
        cb_lrn_params_of(L, &p);
        cb_cuda_lrn_backward(&p, x, b->y, b->aux, dy, dx);
        break;
    }
    case CB_OP_BATCHNORM: {
        cb_bn_params p;
        cb_bn_params_of(L, &p);
        cb_cuda_bn_backward(&p, x, b->gamma, b->bn_mean, b->bn_invstd, dy, dx, NULL, NULL);
        break;
    }
    case CB_OP_ACT:
        cb_cuda_act_backward(nin, L->p.act.fn, x, b->y, dy, dx);
        break;
    case CB_OP_ADD:
    case CB_OP_SOFTMAX:
    case CB_OP_RESHAPE:
        cudaMemcpyAsync(dx, dy, nin * 4, cudaMemcpyDeviceToDevice, 0);
        break;
    case CB_OP_MUL: // declined by supports (cb_layer_gpu_supports)
    case CB_OP_LAYERNORM:
    case CB_OP_SCALE:
    case CB_OP_INPUT:
    case CB_OP_COUNT:
        break;
    }
}

void cb_cuda_backward_filter(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const float *dy = cb_exec_op_grad(e, i);
    const float *x = e->lb[L->parents[0]].y;
    if (L->op == CB_OP_CONV || L->op == CB_OP_FC) {
        cb_conv_params p;
        cb_conv_params_of(L, &p);
        conv_algo_of(e, i, CB_PHASE_BWD_FILTER)->backward_filter(&p, x, dy, b->dw, NULL, e->ws);
        if (b->db && !cb_cuda_bias_taken(e, i)) cb_fmt_bias_grad(p.n, p.k, (int64_t)p.p * p.q, dy, 0, b->db, ((cb_cuda_state *)e->state)->bias_part);
    } else if (L->op == CB_OP_BATCHNORM) {
        cb_bn_params p;
        cb_bn_params_of(L, &p);
        cb_cuda_bn_backward(&p, x, b->gamma, b->bn_mean, b->bn_invstd, dy, NULL, b->dgamma, b->dbeta);
    }
}

void cb_cuda_add_(cb_exec *e, float *dst, const float *src, size_t n) { cb_cuda_add(n, dst, src); }
void cb_cuda_fill_(cb_exec *e, float *dst, float v, size_t n) { cb_cuda_fill(n, dst, v); }
void cb_cuda_sgd_(cb_exec *e, size_t n, float lr, float mom, float wd, float *w, const float *g, float *v) {
    cb_cuda_sgd(n, lr, mom, wd, w, g, v);
}
double cb_cuda_xent_forward_(cb_exec *e, const float *prob, const int32_t *labels, int n, int k) {
    cb_cuda_state *s = e->state;
    double loss = 0;
    cb_cuda_xent_forward(n, k, prob, labels, s->loss);
    // (while a step graph is recorded nothing may wait for the device: the loss stays in s->loss)
    if (!s->capturing) cudaMemcpy(&loss, s->loss, sizeof loss, cudaMemcpyDeviceToHost);
    return loss;
}
void cb_cuda_xent_backward_(cb_exec *e, const float *prob, const int32_t *labels, int n, int k, float *dlogits) {
    cb_cuda_xent_backward(n, k, prob, labels, dlogits);
}
void cb_cuda_softmax_(cb_exec *e, const float *x, float *prob, int n, int k) { cb_cuda_softmax(n, k, x, prob); }

const cb_backend cb_backend_cuda = {
    .name = "cuda", .device = true, .init = cb_cuda_init_state, .destroy = cb_cuda_destroy_state, .alloc = cb_cuda_alloc,
    .alloc_growable = cb_cuda_alloc_growable, .grow = cb_cuda_grow,
    .alloc_why = cb_cuda_alloc_why, .mem_free = cb_cuda_mem_free, .device_ok = cb_cuda_device_ok, .pool_argmax_item = cb_cuda_pool_argmax_item, .pool_relu_mask = cb_cuda_pool_relu_mask,
    .concat_relu_mask = cb_cuda_concat_relu_mask,
    .release = cb_cuda_release, .upload = cb_cuda_upload, .download = cb_cuda_download,
    .timer_start = cb_cuda_timer_start, .timer_stop = cb_cuda_timer_stop, .mark_reset = cb_cuda_mark_reset,
    .mark = cb_cuda_mark, .mark_ms = cb_cuda_mark_ms, .hold = cb_cuda_hold, .supports = supports, .plan = plan,
    .forward = cb_cuda_forward, .forward_epilogue = cb_cuda_epilogue_forward, .backward_epilogue = cb_cuda_backward_epilogue,
    .backward_data = cb_cuda_backward_data,
    .backward_filter = cb_cuda_backward_filter, .add = cb_cuda_add_, .fill = cb_cuda_fill_, .sgd = cb_cuda_sgd_,
    .xent_forward = cb_cuda_xent_forward_, .xent_backward = cb_cuda_xent_backward_, .softmax = cb_cuda_softmax_,
    .step_begin = cb_cuda_step_begin, .graph_begin = cb_cuda_graph_begin, .graph_end = cb_cuda_graph_end,
    .graph_launch = cb_cuda_graph_launch};
