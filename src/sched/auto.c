// The "auto" backend: a scheduler above the implementations. For each layer and phase where more
// than one can run it (cuDNN's pick, convbench's own kernels, a cuBLAS GEMM), it times the
// candidates on the layer's own buffers at plan time and keeps the fastest, recording the race in
// the layer's choice (CB_CHOICE_RACED: ms won over rival_ms). It runs as the cudnn backend with
// this policy (src/cudnn/dnn.h): each convolution phase against the fastest own algorithm and, a
// 1x1 convolution of stride 1 (NHWC, or fp32 NCHW as one GEMM per image), against cuBLAS, each FC phase cuBLAS against the own GEMM, and each
// max or average pool cuDNN against the own kernels (forward and backward as a pair: the own
// backward reads the own forward's argmax). Own kernels read fp32 NCHW only: on another storage
// only the pools, the 1x1 GEMMs, the depthwise convolutions (src/cuda/conv_depthwise.cu, which
// reads every storage) and, on bf16 NHWC, the Hopper wgmma implicit GEMM (src/cuda/conv_igemm_wgmma.cu,
// every phase it takes, against the winner of the others) race.
// Each batch norm races cuDNN's against the own storage kernels the same way. Test overrides force
// a path whatever the timings say: $CONVBENCH_AUTO_POOL=own|cudnn, $CONVBENCH_AUTO_GEMM=cublas|cudnn
// $CONVBENCH_AUTO_BN=own|cudnn, $CONVBENCH_AUTO_DW=own|cudnn and $CONVBENCH_AUTO_WGMMA=own|cudnn
// (CB_CHOICE_FORCED).
#include "core/act.h"
#include "cudnn/dnn.h"
#include "blas/blas.h"
#include "core/net.h"

#include <stdlib.h>
#include <string.h>

// what "auto" does where a test forces a path: measure, or take the own / the library's path
typedef enum force_choice { FORCE_NONE, FORCE_OWN, FORCE_LIB } force_choice;
typedef struct sched_state {
    force_choice pool;           // $CONVBENCH_AUTO_POOL=own|cudnn forces the pool layers' choice
    force_choice gemm1x1;        // $CONVBENCH_AUTO_GEMM=cublas|cudnn forces the 1x1 convolutions' (FORCE_OWN: cuBLAS)
    force_choice bn;             // $CONVBENCH_AUTO_BN=own|cudnn forces the batch norms' choice
    force_choice dw;             // $CONVBENCH_AUTO_DW=own|cudnn forces the depthwise convolutions' (other storages)
    force_choice wg;             // $CONVBENCH_AUTO_WGMMA=own|cudnn forces the own wgmma kernel on bf16 NHWC, or the libraries
    bool wg_spare;               // the own wgmma kernel that lost a phase's race stays its candidate of little workspace
                                 // for the trim and the step check (cb_dnn_revise); $CONVBENCH_WG_SPARE=off: not
} sched_state;

static sched_state *sched(const cb_exec *e) { return cb_dnn_state(e)->policy_state; }

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

static void conv_phase_lib(cb_exec *e, int i, cb_phase p, double dnn_ms, size_t dnn_ws) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = cb_dnn_layer(e, i);
    cb_choice *c = &b->choice[p], dnn_c = *c; // cuDNN's pick
    if (cb_blas_conv_is_gemm(e, L) && sched(e)->gemm1x1 != FORCE_NONE) { // a test's way to run either
        l->blas[p] = sched(e)->gemm1x1 == FORCE_OWN;
        if (l->blas[p]) b->ws[p] = 0, *c = cb_choice_of(CB_IMPL_CUBLAS, 0, "cuBLAS 1x1 GEMM");
        c->flags |= CB_CHOICE_FORCED;
    } else if (cb_blas_conv_is_gemm(e, L)) {
        // fp32 NCHW: the own kernels against cuDNN first, then cuBLAS against the faster
        double best = dnn_ms;
        if (cb_store_native(e) && cb_dnn_conv_own_ok(L)) {
            double own = cb_cuda_conv_choose(e, i, p, true);
            if (own >= 0 && own < dnn_ms) {
                l->own[p] = true;
                c->rival_ms = dnn_ms;
                best = own;
            } else {
                b->ws[p] = dnn_ws;
                *c = dnn_c;
                c->rival_ms = own;
            }
        }
        double blas = cb_blas_time_conv(e, i, p);
        if (blas >= 0 && blas < best) {
            l->own[p] = false;
            l->blas[p] = true;
            b->ws[p] = 0;
            *c = cb_choice_of(CB_IMPL_CUBLAS, 0, "cuBLAS 1x1 GEMM");
            c->ms = blas, c->rival_ms = best;
        } else if (blas >= 0 && (c->rival_ms < 0 || blas < c->rival_ms)) c->rival_ms = blas; // the fastest that lost
        c->flags |= CB_CHOICE_RACED;
    } else if (cb_dnn_dw_ok(e, i)) { // a depthwise convolution on a storage: the own depthwise kernel races
        double own = sched(e)->dw == FORCE_LIB ? -1 : cb_dnn_time_dw(e, i, p);
        if (own >= 0 && (sched(e)->dw == FORCE_OWN || (sched(e)->dw == FORCE_NONE && own < dnn_ms))) {
            cb_dnn_take_dw(e, i, p, 0);
            c->ms = own, c->rival_ms = dnn_ms;
        } else c->rival_ms = own;
        c->flags |= sched(e)->dw != FORCE_NONE ? CB_CHOICE_FORCED : CB_CHOICE_RACED;
    } else if (!cb_store_native(e)) { // own kernels cannot read this storage (but bf16 NHWC's wgmma: wg_race): cuDNN's choice stands
        if (!cb_dnn_wg_ok(e, i, p)) c->flags |= CB_CHOICE_OWN_NCHW_ONLY;
    } else if (!cb_dnn_conv_own_ok(L)) { // nor a dilation
        c->flags |= CB_CHOICE_DILATED;
    } else {
        double own = cb_cuda_conv_choose(e, i, p, true);
        if (own >= 0 && own < dnn_ms) {
            l->own[p] = true;
            c->rival_ms = dnn_ms;
        } else {
            b->ws[p] = dnn_ws;
            *c = dnn_c;
            c->rival_ms = own;
        }
        c->flags |= CB_CHOICE_RACED;
    }
}

// bf16 NHWC storage: the own wgmma kernel on the tensors as they are against the phase's winner so
// far (cuDNN's pick, or cuBLAS where it beat that)
static void wg_race(cb_exec *e, int i, cb_phase p, double dnn_ms) {
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = cb_dnn_layer(e, i);
    cb_choice *c = &b->choice[p];
    force_choice f = sched(e)->wg;
    double best = c->ms > 0 ? c->ms : dnn_ms, own = cb_dnn_time_wg(e, i, p);
    if (own >= 0 && (f == FORCE_OWN || best < 0 || own < best)) {
        l->blas[p] = false;
        cb_dnn_take_wg(e, i, p);
        c->ms = own, c->rival_ms = best;
        c->flags |= f == FORCE_OWN ? CB_CHOICE_FORCED : CB_CHOICE_RACED;
    } else if (own >= 0) {
        if (c->rival_ms < 0 || own < c->rival_ms) c->rival_ms = own;
        c->flags |= CB_CHOICE_RACED;
        if (c->impl == CB_IMPL_CUDNN && sched(e)->wg_spare) l->wg_lost_ms[p] = own; // (cb_dnn_revise: a candidate of less workspace)
    }
}

static void conv_phase(cb_exec *e, int i, cb_phase p, double dnn_ms, size_t dnn_ws) {
    conv_phase_lib(e, i, p, dnn_ms, dnn_ws);
    const cb_choice *c = &e->lb[i].choice[p];
    if (sched(e)->wg != FORCE_LIB && !(c->flags & CB_CHOICE_FORCED) && cb_dnn_wg_ok(e, i, p)) wg_race(e, i, p, dnn_ms);
}

static void fc_phase(cb_exec *e, int i, cb_phase p) {
    cb_lbuf *b = &e->lb[i];
    cb_choice *c = &b->choice[p], lib = *c;
    lib.ms = cb_blas_time_fc(e, i, p);
    double own = cb_cuda_conv_choose(e, i, p, true);
    if (own >= 0 && (lib.ms < 0 || own < lib.ms)) {
        cb_dnn_layer(e, i)->own[p] = true;
        c->rival_ms = lib.ms;
    } else {
        b->ws[p] = 0;
        *c = lib;
        c->rival_ms = own;
    }
    c->flags |= CB_CHOICE_RACED;
}

// Mean ms of 3 runs after a warm-up of pool layer i's forward, then of its backward when bwd
// (the own backward reads the argmax that the own forward has just written): ms[0] forward,
// ms[1] backward; false when a call failed.
static bool time_pool(cb_exec *e, int i, bool own, bool bwd, double ms[2]) {
    ms[0] = ms[1] = -1;
    for (int ph = 0; ph < (bwd ? 2 : 1); ph++) {
        cudnnStatus_t st = cb_dnn_run_pool(e, i, own, ph, NULL);
        cb_cuda_timer_start(e);
        for (int r = 0; r < 3; r++)
            if (st == CUDNN_STATUS_SUCCESS) st = cb_dnn_run_pool(e, i, own, ph, NULL);
        double t = cb_cuda_timer_stop(e) / 3;
        if (st != CUDNN_STATUS_SUCCESS || cudaGetLastError() != cudaSuccess) return false;
        ms[ph] = t;
    }
    return true;
}

// A max pool that takes over its input's ReLU (relu_by_pool) keeps the own kernels, both timed: the
// layer before it then keeps no output for its backward and runs no ReLU pass there
// (CB_CHOICE_RELU_MASK shows both times; VGG-A b64 bf16 NHWC: 747 MiB less at the step's peak)
static void pool(cb_exec *e, int i, bool bwd, cb_choice *c) {
    dnn_layer *l = cb_dnn_layer(e, i);
    bool mask = bwd && !e->net->layers[i].p.pool.avg && e->lb[e->net->layers[i].parents[0]].relu_by_pool;
    if (sched(e)->pool != FORCE_NONE) {
        l->own[0] = l->own[1] = sched(e)->pool == FORCE_OWN;
        *c = l->own[0] ? cb_choice_of(CB_IMPL_OWN, -1, "pool") : cb_choice_of(CB_IMPL_CUDNN, -1, "cudnn pool");
        c->flags |= CB_CHOICE_FORCED;
        return;
    }
    double own_ms[2], dnn_ms[2];
    bool own_ok = time_pool(e, i, true, bwd, own_ms), dnn_ok = time_pool(e, i, false, bwd, dnn_ms);
    double own = own_ok ? own_ms[0] + (bwd ? own_ms[1] : 0) : -1, dnn = dnn_ok ? dnn_ms[0] + (bwd ? dnn_ms[1] : 0) : -1;
    l->own[0] = l->own[1] = mask || (own_ok && (!dnn_ok || own < dnn));
    *c = l->own[0] ? cb_choice_of(CB_IMPL_OWN, -1, "pool") : cb_choice_of(CB_IMPL_CUDNN, -1, "cudnn pool");
    c->flags |= (mask ? CB_CHOICE_RELU_MASK : CB_CHOICE_RACED) | (bwd ? CB_CHOICE_PAIRED : 0);
    c->ms = l->own[0] ? own : dnn, c->rival_ms = l->own[0] ? dnn : own;
}

// a batch norm both cuDNN and the own storage kernels take: forward plus backward when the pass
// trains, the faster kept
static void bn(cb_exec *e, int i, cb_choice *c) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dnn_layer *l = cb_dnn_layer(e, i);
    if (sched(e)->bn != FORCE_NONE) {
        l->own_bn = sched(e)->bn == FORCE_OWN;
        *c = l->own_bn ? cb_choice_of(CB_IMPL_OWN, -1, "bn") : cb_choice_of(CB_IMPL_CUDNN, -1, "cudnn bn");
        c->flags |= CB_CHOICE_FORCED | (!l->own_bn && l->bn_ex ? CB_CHOICE_BN_PERSISTENT : 0);
        return;
    }
    bool train = L->bn ? b->dpre != NULL : b->dgamma != NULL;
    bool no_input = cb_act_needs_input(L->act) && !b->act_in; // (bn_act_recompute: no input kept for cuDNN's path, or no output)
    if (train && L->bn && (no_input || b->y_again)) {
        l->own_bn = true;
        *c = cb_choice_of(CB_IMPL_OWN, -1, b->y_again ? "bn (output made again)" : "bn (activation's input recomputed)");
        c->ms = cb_dnn_time_bn(e, i, true, train);
        return;
    }
    double own = cb_dnn_time_bn(e, i, true, train), lib = cb_dnn_time_bn(e, i, false, train);
    l->own_bn = own >= 0 && (lib < 0 || own < lib);
    *c = l->own_bn ? cb_choice_of(CB_IMPL_OWN, -1, "bn") : cb_choice_of(CB_IMPL_CUDNN, -1, "cudnn bn");
    c->flags |= CB_CHOICE_RACED | (train ? CB_CHOICE_PAIRED : 0) | (!l->own_bn && l->bn_ex ? CB_CHOICE_BN_PERSISTENT : 0);
    c->ms = l->own_bn ? own : lib, c->rival_ms = l->own_bn ? lib : own;
}

// the own max pools may take over ReLUs unless a test forces cuDNN's
static bool pool_relu_mask(const cb_exec *e, int i) { return ((sched_state *)cb_dnn_state(e)->policy_state)->pool != FORCE_LIB; }

// the own batch norm may recompute a SiLU's, hardswish's or GELU's input in its backward unless a test forces cuDNN's
static bool bn_act_recompute(const cb_exec *e, int i) { return ((sched_state *)cb_dnn_state(e)->policy_state)->bn != FORCE_LIB; }

static const dnn_policy POLICY = {.conv_phase = conv_phase, .fc_phase = fc_phase, .pool = pool, .pool_relu_mask = pool_relu_mask,
                                  .bn_act_recompute = bn_act_recompute, .bn = bn};

static cb_status init(cb_exec *e, cb_error *err) {
    sched_state f = {FORCE_NONE, FORCE_NONE, FORCE_NONE, FORCE_NONE, FORCE_NONE, true};
    int spare = 1;
    cb_status st = env_force("CONVBENCH_AUTO_POOL", "own", &f.pool, err);
    if (st == CB_OK) st = env_force("CONVBENCH_AUTO_GEMM", "cublas", &f.gemm1x1, err);
    if (st == CB_OK) st = env_force("CONVBENCH_AUTO_BN", "own", &f.bn, err);
    if (st == CB_OK) st = env_force("CONVBENCH_AUTO_DW", "own", &f.dw, err);
    if (st == CB_OK) st = env_force("CONVBENCH_AUTO_WGMMA", "own", &f.wg, err);
    if (st == CB_OK) st = cb_env_on_off("CONVBENCH_WG_SPARE", &spare, err);
    f.wg_spare = spare != 0;
    if (st == CB_OK) st = cb_dnn_init(e, err, &POLICY);
    if (st != CB_OK) return st;
    sched_state *s = cb_xcalloc(1, sizeof *s);
    *s = f;
    cb_dnn_state(e)->policy_state = s;
    return CB_OK;
}

static void destroy(cb_exec *e) {
    if (e->state && cb_dnn_state(e)) free(cb_dnn_state(e)->policy_state);
    cb_dnn_destroy(e);
}

const cb_backend cb_backend_auto = DNN_BACKEND("auto", init, destroy, cb_dnn_supports);
