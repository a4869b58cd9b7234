// The "onednn" backend: oneDNN (Debian's libdnnl, C API) for convolution, inner product, max and
// average pooling, LRN, batch norm (a layer or a convolution's fused one) and ReLU, forward and
// backward, fp32. The engine's buffers stay fp32 NCHW; each primitive is created once in plan with
// the memory formats oneDNN prefers (format "any" for convolution and inner product, the CPU's
// blocked nChw8c / nChw16c for pooling, LRN and batch norm), and the reorders between the
// engine's NCHW and those formats run inside the layer's call, so they count in its time (the
// weights' only when they changed since the last call: once per training step).
// Every other layer kind (concat, sum, dropout, softmax, reshape, mul, scale, layer norm), the
// criterion and the update run on the "cpu" backend's functions. Every layer the net loader accepts
// has a oneDNN primitive (even LRN sizes and pooling pads >= the window are refused there), so no
// supports(): creating the primitive in plan is the test, and a refusal declines the layer with
// the reason (CB_STATUS_UNSUPPORTED, naming the layer).
//
// The "cpu-auto" backend is this one with a per-layer choice: for each convolution and FC layer
// and each phase (forward, backward data, backward filter) plan times the oneDNN primitive
// (reorders included; in training the weights' reorder too, as a step pays it) against the "cpu"
// backend's im2col + OpenBLAS (a GEMM for FC) and, for a convolution's forward, the own direct
// kernels (src/cpu/direct.c) where they apply, and for an FC layer also oneDNN's inner product on
// the engine's plain weights (no weight reorders), on scratch buffers of the layer's shapes, and
// runs the fastest; a convolution's forward also races the own blocked kernels (src/cpu/blocked.c)
// and, for 3x3 stride 1, the own Winograd F(4x4, 3x3) (src/cpu/winograd.c); a stride-1
// convolution's backward data races both too, as a forward convolution (src/cpu/dgrad.c), and a
// convolution's backward filter races the own blocked one (src/cpu/wgrad.c).
// The choice names the winner, the fastest loser and both times
// (CB_CHOICE_RACED). $CONVBENCH_CPU_AUTO forces a path for every such layer (tests): onednn,
// onednn-plain (FC; convolutions take onednn), gemm (OpenBLAS), own (the direct forward where
// it applies, else OpenBLAS), own-blocked or winograd (the same for those kernels); race or
// unset measures; anything else is refused by name.
#include "core/backend.h"
#include "core/net.h"
#include "cpu/kernels.h"
#include "core/clock.h"

#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DN_MAXARG 9

typedef struct dn_state {
    void *cpu;                    // the "cpu" backend's state, for the functions it runs
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    dnnl_format_tag_t blocked;    // nChw16c with AVX-512, else nChw8c
    bool choose;                  // "cpu-auto": convolution and FC phases race oneDNN against cpu's
    int force;                    // cpu-auto's $CONVBENCH_CPU_AUTO: a dn_route, or -1: race
} dn_state;

// where a cpu-auto layer's phase runs
// (DN_ROUTE_PLAIN: FC layers' oneDNN inner product on the engine's (K, C) weights, with no weight
// or weight-gradient reorder: on AlexNet's fc6 those took 20 ms a call against 6 for the product)
// (DN_ROUTE_OWN: the own direct forward, src/cpu/direct.c; DN_ROUTE_BLOCKED: the own blocked
// forward, src/cpu/blocked.c; DN_ROUTE_WINOGRAD: the own Winograd F(4x4, 3x3) forward,
// src/cpu/winograd.c; both also a stride-1 convolution's backward data, as a forward convolution
// (src/cpu/dgrad.c); DN_ROUTE_BLOCKED also the backward filter, src/cpu/wgrad.c; the phases a
// route lacks on OpenBLAS)
typedef enum dn_route { DN_ROUTE_ONEDNN, DN_ROUTE_PLAIN, DN_ROUTE_GEMM, DN_ROUTE_OWN, DN_ROUTE_BLOCKED, DN_ROUTE_WINOGRAD, DN_ROUTE_COUNT } dn_route;
static const char *const ROUTE_NAMES[] = {"onednn", "onednn-plain", "gemm", "own", "own-blocked", "winograd"};
_Static_assert(sizeof ROUTE_NAMES / sizeof ROUTE_NAMES[0] == DN_ROUTE_COUNT, "a route lacks a name");

// One argument of a primitive: the engine's plain tensor and, where the primitive wants another
// format, oneDNN's own copy and the reorder between them.
typedef struct dn_mem {
    dnnl_memory_t user, own;      // own NULL: the primitive works on user directly
    dnnl_primitive_t reorder;     // user -> own for an input, own -> user for an output
    uint64_t ver;                 // weights: the e->param_version (and buffer) own was reordered at
    const void *ptr;
} dn_mem;

typedef struct dn_prim {
    dnnl_primitive_t p;
    int nargs;
    int arg[DN_MAXARG];
    bool out[DN_MAXARG];
    dn_mem m[DN_MAXARG];
    dnnl_memory_t fixed[DN_MAXARG]; // an argument that is oneDNN's own (a pooling or LRN workspace)
    char impl[48];
} dn_prim;

typedef struct dn_layer {
    dn_prim fwd, fwd_infer, bwd_data, bwd_filter; // the op (a BatchNorm layer: its batch norm)
    dn_prim bn_fwd, bn_infer, bn_bwd;             // a fused batch norm
    dn_prim relu_fwd, relu_bwd;                   // a fused ReLU, or a ReLU layer's
    dnnl_memory_t ws;                             // max pooling or LRN workspace, forward to backward
    float *var;                                   // batch norm: the batch variance (C)
    float *dx;                                    // BatchNorm layer: dx, computed with dgamma, dbeta
    float *ones;                                  // batch norm: (C) of 1, (C) of 0 (no gamma, beta), 2 (C) unread gradients
    dn_prim pfwd, pbwd_data, pbwd_filter;         // cpu-auto, FC: the op on plain (K, C) weights (DN_ROUTE_PLAIN)
    dn_route route[CB_PHASE_COUNT];               // cpu-auto: where the phase runs (GEMM, OWN: the cpu backend's functions)
    char label[CB_PHASE_COUNT][64];               // cpu-auto: the choice's name (winner and rival)
} dn_layer;

static dn_state *st_of(const cb_exec *e) { return e->state; }

// the "cpu" backend's function on the same exec, with its own state in place
#define ON_CPU(e, call)                                                                                                \
    do {                                                                                                               \
        void *own_ = (e)->state;                                                                                       \
        (e)->state = ((dn_state *)own_)->cpu;                                                                          \
        call;                                                                                                          \
        (e)->state = own_;                                                                                             \
    } while (0)

static cb_status init(cb_exec *e, cb_error *err) {
    dn_state *s = calloc(1, sizeof *s);
    if (!s) return CB_STATUS_NOMEM;
    e->state = s;
    s->force = -1;
    cb_status rc = cb_backend_cpu.init(e, err);
    s->cpu = e->state;
    e->state = s;
    if (rc != CB_OK) return rc;
    if (dnnl_engine_create(&s->eng, dnnl_cpu, 0) != dnnl_success || dnnl_stream_create(&s->strm, s->eng, dnnl_stream_default_flags) != dnnl_success) {
        return cb_fail(err, CB_STATUS_UNSUPPORTED, NULL, NULL, "backend onednn: oneDNN has no CPU engine");
    }
    __builtin_cpu_init();
    s->blocked = __builtin_cpu_supports("avx512f") ? dnnl_nChw16c : dnnl_nChw8c;
    return CB_OK;
}

// cpu-auto: the onednn backend choosing per layer and phase; $CONVBENCH_CPU_AUTO read once here
static cb_status init_auto(cb_exec *e, cb_error *err) {
    const char *v = getenv("CONVBENCH_CPU_AUTO");
    int force = -1;
    if (v && *v && strcmp(v, "race")) {
        for (int r = 0; r < DN_ROUTE_COUNT; r++)
            if (!strcmp(v, ROUTE_NAMES[r])) force = r;
        if (force < 0) return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_CPU_AUTO", NULL, "'%s' is not race, onednn, onednn-plain, gemm, own, own-blocked or winograd", v);
    }
    cb_status rc = init(e, err);
    if (e->state) st_of(e)->choose = true, st_of(e)->force = force;
    return rc;
}

static void prim_free(dn_prim *P) {
    for (int j = 0; j < P->nargs; j++) {
        if (P->m[j].user) dnnl_memory_destroy(P->m[j].user);
        if (P->m[j].own) dnnl_memory_destroy(P->m[j].own);
        if (P->m[j].reorder) dnnl_primitive_destroy(P->m[j].reorder);
    }
    if (P->p) dnnl_primitive_destroy(P->p);
    memset(P, 0, sizeof *P);
}

static void destroy(cb_exec *e) {
    dn_state *s = st_of(e);
    if (!s) return;
    for (int i = 0; e->lb && e->net && i < e->net->nlayers; i++) {
        dn_layer *l = e->lb[i].priv;
        if (!l) continue;
        dn_prim *all[] = {&l->fwd, &l->fwd_infer, &l->bwd_data, &l->bwd_filter, &l->bn_fwd, &l->bn_infer, &l->bn_bwd, &l->relu_fwd, &l->relu_bwd,
                          &l->pfwd, &l->pbwd_data, &l->pbwd_filter};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) prim_free(all[k]);
        if (l->ws) dnnl_memory_destroy(l->ws);
        free(l->var), free(l->dx), free(l->ones), free(l);
        e->lb[i].priv = NULL;
    }
    if (s->strm) dnnl_stream_destroy(s->strm);
    if (s->eng) dnnl_engine_destroy(s->eng);
    e->state = s->cpu;
    cb_backend_cpu.destroy(e);
    free(s);
    e->state = NULL;
}

static void *alloc(cb_exec *e, size_t bytes) { return cb_backend_cpu.alloc(e, bytes); }
static void release(cb_exec *e, void *p) { cb_backend_cpu.release(e, p); }
static void copy(cb_exec *e, void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }
static void timer_start(cb_exec *e) { ON_CPU(e, cb_backend_cpu.timer_start(e)); }
static double timer_stop(cb_exec *e) {
    double ms = 0;
    ON_CPU(e, ms = cb_backend_cpu.timer_stop(e));
    return ms;
}

static dnnl_memory_desc_t md_of(int nd, const int64_t *d, dnnl_format_tag_t tag) {
    dnnl_memory_desc_t md;
    dnnl_dims_t dims = {0};
    for (int k = 0; k < nd; k++) dims[k] = d[k];
    dnnl_memory_desc_init_by_tag(&md, nd, dims, dnnl_f32, tag);
    return md;
}

// What an argument of a primitive is: its DNNL_ARG_*, the engine's plain format of it (NULL: the
// primitive's own, a workspace), and whether the primitive writes it.
typedef struct dn_argspec {
    int arg;
    const dnnl_memory_desc_t *user;
    bool out;
} dn_argspec;

// Creates primitive P from desc (hint: the forward's descriptor, for a backward), its arguments'
// memories and reorders; *pd_out keeps the descriptor when asked. fail: a reason in why.
static bool prim_create(cb_exec *e, dn_prim *P, const_dnnl_op_desc_t desc, const_dnnl_primitive_desc_t hint,
                        const dn_argspec *a, int na, dnnl_primitive_desc_t *pd_out, char *why, size_t n) {
    dn_state *s = st_of(e);
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t rc = dnnl_primitive_desc_create(&pd, desc, NULL, s->eng, hint);
    if (rc != dnnl_success) {
        snprintf(why, n, "oneDNN has no implementation for it (status %d)", (int)rc);
        return false;
    }
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(P->impl, sizeof P->impl, "onednn %s", impl ? impl : "?");
    bool ok = dnnl_primitive_create(&P->p, pd) == dnnl_success;
    P->nargs = na;
    for (int j = 0; ok && j < na; j++) {
        P->arg[j] = a[j].arg;
        P->out[j] = a[j].out;
        if (!a[j].user) continue; // set by the caller (fixed)
        const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, a[j].arg);
        dn_mem *m = &P->m[j];
        ok = dnnl_memory_create(&m->user, a[j].user, s->eng, DNNL_MEMORY_NONE) == dnnl_success;
        if (!ok || !want || dnnl_memory_desc_equal(want, a[j].user)) continue;
        ok = dnnl_memory_create(&m->own, want, s->eng, DNNL_MEMORY_ALLOCATE) == dnnl_success;
        e->allocated += dnnl_memory_desc_get_size(want);
        dnnl_primitive_desc_t rpd = NULL;
        ok = ok && (a[j].out ? dnnl_reorder_primitive_desc_create(&rpd, want, s->eng, a[j].user, s->eng, NULL)
                             : dnnl_reorder_primitive_desc_create(&rpd, a[j].user, s->eng, want, s->eng, NULL)) == dnnl_success;
        ok = ok && dnnl_primitive_create(&m->reorder, rpd) == dnnl_success;
        if (rpd) dnnl_primitive_desc_destroy(rpd);
    }
    if (!ok) snprintf(why, n, "oneDNN could not create its primitive or memory");
    if (ok && pd_out) *pd_out = pd;
    else dnnl_primitive_desc_destroy(pd);
    return ok;
}

static void reorder(dn_state *s, dnnl_primitive_t r, dnnl_memory_t from, dnnl_memory_t to) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    dnnl_primitive_execute(r, s->strm, 2, args);
}

// Runs P on the engine's buffers ptr[j] (one per argument; NULL for a fixed one), with the
// reorders into and out of oneDNN's formats.
static void prim_run(cb_exec *e, dn_prim *P, void *const *ptr) {
    dn_state *s = st_of(e);
    dnnl_exec_arg_t args[DN_MAXARG];
    for (int j = 0; j < P->nargs; j++) {
        dn_mem *m = &P->m[j];
        args[j].arg = P->arg[j];
        if (!m->user) {
            args[j].memory = P->fixed[j];
            continue;
        }
        dnnl_memory_set_data_handle(m->user, ptr[j]);
        args[j].memory = m->own ? m->own : m->user;
        // weights are reordered again only after they changed (as the cudnn backend converts them)
        bool fresh = P->arg[j] == DNNL_ARG_WEIGHTS && m->ver == e->param_version && m->ptr == ptr[j];
        if (m->own && !P->out[j] && !fresh) reorder(s, m->reorder, m->user, m->own);
        m->ver = e->param_version, m->ptr = ptr[j];
    }
    dnnl_status_t rc_ = dnnl_primitive_execute(P->p, s->strm, P->nargs, args);
    if (rc_ != dnnl_success) { // arguments that the primitive created in plan refuses: a bug here
        fprintf(stderr, "convbench: backend onednn: %s refused its arguments (oneDNN status %d)\n", P->impl, (int)rc_);
        abort();
    }
    for (int j = 0; j < P->nargs; j++)
        if (P->m[j].own && P->out[j]) reorder(s, P->m[j].reorder, P->m[j].own, P->m[j].user);
    dnnl_stream_wait(s->strm);
}

// ---- cpu-auto: each convolution and FC phase timed on oneDNN and on the cpu backend's functions ----

// scratch of the layer's shapes for the race (the engine's buffers hold nothing yet, and the
// weights must stay): inputs small and random, so that no denormals slow one side
typedef struct race_buf {
    float *x, *w, *b, *y, *dy, *dx, *dw, *db; // (N, C, H, W) in; (K, C/g, R, S) or (K, C); (K); out; out; in; as w; as b
    void *ws;                                  // the cpu path's workspace, the largest of its routes
} race_buf;

static void race_buf_free(race_buf *r) {
    float *all[] = {r->x, r->w, r->b, r->y, r->dy, r->dx, r->dw, r->db};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]);
    free(r->ws);
}

static float *race_alloc(size_t n, bool fill, uint64_t *rng) {
    if (n == 0) return NULL;
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    for (size_t k = 0; p && k < n; k++) p[k] = fill ? 0.01f * cb_rng_uniform(rng) : 0.f;
    return p;
}

static bool race_buf_make(const cb_exec *e, int i, size_t ws, race_buf *r) {
    const cb_layer *L = &e->net->layers[i];
    const cb_lbuf *b = &e->lb[i];
    size_t nin = (size_t)cb_shape_count(L->in), nout = (size_t)cb_shape_count(L->out);
    uint64_t rng = 0x5eed1234ull;
    r->x = race_alloc(nin, true, &rng), r->w = race_alloc((size_t)b->nw, true, &rng), r->b = race_alloc((size_t)b->nb, true, &rng);
    r->dy = race_alloc(nout, true, &rng), r->y = race_alloc(nout, false, &rng), r->dx = race_alloc(nin, false, &rng);
    r->dw = race_alloc((size_t)b->nw, false, &rng), r->db = race_alloc((size_t)b->nb, false, &rng);
    r->ws = ws ? aligned_alloc(64, (ws + 63) / 64 * 64) : NULL;
    return r->x && r->w && r->y && r->dy && r->dx && r->dw && (!b->nb || (r->b && r->db)) && (!ws || r->ws);
}

static dn_prim *phase_prim(dn_layer *l, int p, bool plain) {
    if (plain) return p == CB_PHASE_FORWARD ? &l->pfwd : p == CB_PHASE_BWD_DATA ? &l->pbwd_data : &l->pbwd_filter;
    return p == CB_PHASE_FORWARD ? &l->fwd : p == CB_PHASE_BWD_DATA ? &l->bwd_data : &l->bwd_filter;
}

// one run of phase p of layer i by route on the race's buffers
static void route_run(cb_exec *e, int i, dn_layer *l, const race_buf *r, int p, dn_route route) {
    const cb_layer *L = &e->net->layers[i];
    if (route == DN_ROUTE_ONEDNN || route == DN_ROUTE_PLAIN) {
        dn_prim *P = phase_prim(l, p, route == DN_ROUTE_PLAIN);
        // a training step gives new weights to every call: their reorder is part of the call's time
        for (int j = 0; e->opts.train && j < P->nargs; j++)
            if (P->arg[j] == DNNL_ARG_WEIGHTS) P->m[j].ptr = NULL;
        void *fa[] = {r->x, r->w, r->y, r->b}, *da[] = {r->dy, r->w, r->dx}, *wa[] = {r->x, r->dy, r->dw, r->db};
        prim_run(e, P, p == CB_PHASE_FORWARD ? fa : p == CB_PHASE_BWD_DATA ? da : wa);
        return;
    }
    if (L->op == CB_OP_FC) { // as the cpu backend calls them
        int n = (int)L->in.n, c = (int)L->in.c, k = L->p.fc.k;
        if (p == CB_PHASE_FORWARD) cb_cpu_fc_forward(n, c, k, r->x, r->w, r->b, r->y);
        else if (p == CB_PHASE_BWD_DATA) cb_cpu_fc_backward_data(n, c, k, r->dy, r->w, r->dx);
        else cb_cpu_fc_backward_filter(n, c, k, r->x, r->dy, r->dw, r->db);
        return;
    }
    cb_conv_params cp;
    cb_conv_params_of(L, &cp);
    if (p == CB_PHASE_BWD_DATA && (route == DN_ROUTE_BLOCKED || route == DN_ROUTE_WINOGRAD))
        cb_cpu_dgrad(&cp, r->dy, r->w, r->dx, r->ws, route == DN_ROUTE_WINOGRAD);
    else if (p == CB_PHASE_BWD_FILTER && route == DN_ROUTE_BLOCKED) cb_cpu_wgrad(&cp, r->x, r->dy, r->dw, r->db, r->ws);
    else if (p == CB_PHASE_FORWARD && route == DN_ROUTE_OWN) cb_cpu_direct_forward(&cp, r->x, r->w, r->b, r->y, r->ws);
    else if (p == CB_PHASE_FORWARD && route == DN_ROUTE_BLOCKED) cb_cpu_blocked_forward(&cp, r->x, r->w, r->b, r->y, r->ws);
    else if (p == CB_PHASE_FORWARD && route == DN_ROUTE_WINOGRAD) cb_cpu_winograd_forward(&cp, r->x, r->w, r->b, r->y, r->ws);
    else if (p == CB_PHASE_FORWARD) cb_cpu_conv_forward(&cp, r->x, r->w, r->b, r->y, r->ws);
    else if (p == CB_PHASE_BWD_DATA) cb_cpu_conv_backward_data(&cp, r->dy, r->w, r->dx, r->ws);
    else cb_cpu_conv_backward_filter(&cp, r->x, r->dy, r->dw, r->db, r->ws);
}

// the best of `runs` runs after `warm` untimed ones, ms
static double route_time(cb_exec *e, int i, dn_layer *l, const race_buf *r, int p, dn_route route, int warm, int runs) {
    double best = 1e30;
    for (int k = 0; k < warm + runs; k++) {
        double t0 = cb_now_ms();
        route_run(e, i, l, r, p, route);
        double t = cb_now_ms() - t0;
        if (k >= warm && t < best) best = t;
    }
    return best;
}

// The choice of each phase of convolution or FC layer i: raced, or forced by $CONVBENCH_CPU_AUTO.
// Recorded as data in the layer's choice (impl, the route's algorithm, winner and rival in the
// name, both times) and in l->route, which forward and backward read.
static bool choose(cb_exec *e, int i, dn_layer *l, char *why, size_t n) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const dn_state *s = st_of(e);
    static const char *own_names[] = {"own direct (scalar)", "own direct (AVX2)", "own direct (AVX-512)"};
    static const char *blocked_names[] = {"own blocked (scalar)", "own blocked (AVX2)", "own blocked (AVX-512)"};
    static const char *winograd_names[] = {"own winograd (scalar)", "own winograd (AVX2)", "own winograd (AVX-512)"};
    bool conv = L->op == CB_OP_CONV, own_ok = false, blocked_ok = false, winograd_ok = false, dgrad_ok[2] = {false, false}, wgrad_ok = false;
    size_t ws[DN_ROUTE_COUNT] = {0}, dws[2] = {0}, wws = 0; // dws: backward data on the blocked, Winograd kernels; wws: backward filter
    if (conv) {
        cb_conv_params cp;
        cb_conv_params_of(L, &cp);
        ws[DN_ROUTE_GEMM] = cb_cpu_conv_workspace(&cp);
        own_ok = cb_cpu_direct_supports(&cp);
        ws[DN_ROUTE_OWN] = own_ok ? cb_cpu_direct_workspace(&cp) : 0;
        blocked_ok = cb_cpu_blocked_supports(&cp);
        ws[DN_ROUTE_BLOCKED] = blocked_ok ? cb_cpu_blocked_workspace(&cp) : 0;
        winograd_ok = cb_cpu_winograd_supports(&cp);
        ws[DN_ROUTE_WINOGRAD] = winograd_ok ? cb_cpu_winograd_workspace(&cp) : 0;
        for (int k = 0; k < 2; k++) {
            dgrad_ok[k] = e->opts.train && cb_cpu_dgrad_applies(&cp, k);
            dws[k] = dgrad_ok[k] ? cb_cpu_dgrad_workspace(&cp, k) : 0;
        }
        wgrad_ok = e->opts.train && cb_cpu_wgrad_supports(&cp);
        wws = wgrad_ok ? cb_cpu_wgrad_workspace(&cp) : 0;
    }
    const char *name[DN_ROUTE_COUNT] = {NULL, NULL, !conv ? "GEMM" : ws[DN_ROUTE_GEMM] ? "im2col+GEMM" : "GEMM 1x1", own_names[cb_cpu_direct_isa()],
                                        blocked_names[cb_cpu_direct_isa()], winograd_names[cb_cpu_direct_isa()]};
    // the cpu backend's algorithm numbers (src/cpu/backend.c's forward); oneDNN: 0 its weight format, 1 plain
    const int algo[DN_ROUTE_COUNT] = {0, 1, conv && ws[DN_ROUTE_GEMM] ? 1 : 0, 2, 3, 4};
    size_t most = 0;
    for (int k = 0; k < DN_ROUTE_COUNT; k++) most = ws[k] > most ? ws[k] : most;
    for (int k = 0; k < 2; k++) most = dws[k] > most ? dws[k] : most;
    most = wws > most ? wws : most;
    race_buf r = {0};
    if (s->force < 0 && !race_buf_make(e, i, most, &r)) {
        race_buf_free(&r);
        snprintf(why, n, "out of memory for the race's buffers");
        return false;
    }
    for (int p = 0; p < (e->opts.train ? CB_PHASE_COUNT : 1); p++) {
        if (p == CB_PHASE_BWD_DATA && !e->lb[L->parents[0]].dy) continue; // no gradient into the input: left unraced on oneDNN
        name[DN_ROUTE_ONEDNN] = phase_prim(l, p, false)->impl;
        name[DN_ROUTE_PLAIN] = l->pfwd.p ? phase_prim(l, p, true)->impl : NULL;
        const bool fwd = p == CB_PHASE_FORWARD, bwd = p == CB_PHASE_BWD_DATA, bwf = p == CB_PHASE_BWD_FILTER;
        bool can[DN_ROUTE_COUNT] = {true, l->pfwd.p != NULL, true, fwd && own_ok,
                                    (fwd && blocked_ok) || (bwd && dgrad_ok[0]) || (bwf && wgrad_ok),
                                    (fwd && winograd_ok) || (bwd && dgrad_ok[1])};
        int win = 0, rival = -1;
        double ms[DN_ROUTE_COUNT] = {-1, -1, -1, -1, -1, -1};
        if (s->force >= 0) { // a path this layer lacks falls back: plain to oneDNN's own format, own to OpenBLAS
            win = s->force;
            if (!can[win]) win = win == DN_ROUTE_PLAIN ? DN_ROUTE_ONEDNN : DN_ROUTE_GEMM;
        } else {
            for (int k = 0; k < DN_ROUTE_COUNT; k++)
                if (can[k]) ms[k] = route_time(e, i, l, &r, p, (dn_route)k, 1, 2);
            for (int pass = 0; pass < 2; pass++) {
                win = 0, rival = -1;
                for (int k = 1; k < DN_ROUTE_COUNT; k++)
                    if (can[k] && ms[k] < ms[win]) win = k;
                for (int k = 0; k < DN_ROUTE_COUNT; k++)
                    if (can[k] && k != win && (rival < 0 || ms[k] < ms[rival])) rival = k;
                // within 20%: a burst of load elsewhere decides as easily as the code; three more
                // runs of both, the best of all kept (the slower path's spikes, not its speed, fall out)
                if (pass || ms[rival] > 1.2 * ms[win]) break;
                for (int k = 0; k < DN_ROUTE_COUNT; k++)
                    if (k == win || k == rival) ms[k] = fmin(ms[k], route_time(e, i, l, &r, p, (dn_route)k, 0, 3));
            }
        }
        l->route[p] = (dn_route)win;
        b->ws[p] = bwd && (win == DN_ROUTE_BLOCKED || win == DN_ROUTE_WINOGRAD) ? dws[win == DN_ROUTE_WINOGRAD]
                   : bwf && win == DN_ROUTE_BLOCKED                              ? wws
                                                                                 : ws[win];
        if (rival >= 0) snprintf(l->label[p], sizeof l->label[p], "%s%s vs %s", name[win], win == DN_ROUTE_PLAIN ? " plain" : "", ROUTE_NAMES[rival]);
        else snprintf(l->label[p], sizeof l->label[p], "%s%s", name[win], win == DN_ROUTE_PLAIN ? " plain" : "");
        bool dnn = win == DN_ROUTE_ONEDNN || win == DN_ROUTE_PLAIN;
        cb_choice c = cb_choice_of(dnn ? CB_IMPL_ONEDNN : CB_IMPL_CPU, algo[win], l->label[p]);
        c.ms = ms[win], c.rival_ms = rival >= 0 ? ms[rival] : -1;
        c.flags |= rival >= 0 ? CB_CHOICE_RACED : CB_CHOICE_FORCED;
        b->choice[p] = c;
    }
    race_buf_free(&r);
    return true;
}

static void nchw_dims(cb_shape s, int64_t d[4]) { d[0] = s.n, d[1] = s.c, d[2] = s.h, d[3] = s.w; }

// the trailing padding that gives the layer's output size (oneDNN takes both sides)
static int64_t pad_after(int64_t in, int64_t out, int k, int stride, int dil, int before) {
    int64_t p = (out - 1) * stride + (int64_t)(k - 1) * dil + 1 - in - before;
    return p < 0 ? 0 : p;
}

static bool plan_conv(cb_exec *e, int i, dn_layer *l, char *why, size_t n) {
    const cb_layer *L = &e->net->layers[i];
    const cb_window *w = &L->p.conv.win;
    int g = L->p.conv.groups, dh = L->p.conv.dil_h > 1 ? L->p.conv.dil_h : 1, dw = L->p.conv.dil_w > 1 ? L->p.conv.dil_w : 1;
    int64_t xd[4], yd[4], kd[5] = {g, L->p.conv.k / g, L->in.c / g, w->r, w->s}, bd[1] = {L->p.conv.k};
    nchw_dims(L->in, xd), nchw_dims(L->out, yd);
    dnnl_memory_desc_t x = md_of(4, xd, dnnl_nchw), y = md_of(4, yd, dnnl_nchw), b = md_of(1, bd, dnnl_x);
    dnnl_memory_desc_t k = g > 1 ? md_of(5, kd, dnnl_goihw) : md_of(4, kd + 1, dnnl_oihw);
    dnnl_memory_desc_t xa = md_of(4, xd, dnnl_format_tag_any), ya = md_of(4, yd, dnnl_format_tag_any);
    dnnl_memory_desc_t ka = g > 1 ? md_of(5, kd, dnnl_format_tag_any) : md_of(4, kd + 1, dnnl_format_tag_any);
    bool bias = e->lb[i].nb > 0;
    dnnl_dims_t strides = {w->stride_h, w->stride_w}, dil = {dh - 1, dw - 1}, pl = {w->pad_top, w->pad_left};
    dnnl_dims_t pr = {pad_after(L->in.h, L->out.h, w->r, w->stride_h, dh, w->pad_top),
                      pad_after(L->in.w, L->out.w, w->s, w->stride_w, dw, w->pad_left)};
    dnnl_convolution_desc_t fd, bdd, bwd;
    if (dnnl_dilated_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &xa, &ka, bias ? &b : NULL, &ya,
                                                   strides, dil, pl, pr) != dnnl_success) {
        snprintf(why, n, "oneDNN refuses the convolution's shape");
        return false;
    }
    dnnl_primitive_desc_t fpd = NULL;
    dn_argspec fa[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_WEIGHTS, &k, false}, {DNNL_ARG_DST, &y, true}, {DNNL_ARG_BIAS, &b, false}};
    if (!prim_create(e, &l->fwd, &fd, NULL, fa, bias ? 4 : 3, &fpd, why, n)) return false;
    bool ok = true;
    if (e->opts.train) {
        ok = dnnl_dilated_convolution_backward_data_desc_init(&bdd, dnnl_convolution_direct, &xa, &ka, &ya, strides, dil, pl, pr) == dnnl_success &&
             dnnl_dilated_convolution_backward_weights_desc_init(&bwd, dnnl_convolution_direct, &xa, &ka, bias ? &b : NULL, &ya, strides, dil, pl, pr) == dnnl_success;
        dn_argspec da[] = {{DNNL_ARG_DIFF_DST, &y, false}, {DNNL_ARG_WEIGHTS, &k, false}, {DNNL_ARG_DIFF_SRC, &x, true}};
        dn_argspec wa[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_DIFF_DST, &y, false}, {DNNL_ARG_DIFF_WEIGHTS, &k, true}, {DNNL_ARG_DIFF_BIAS, &b, true}};
        ok = ok && prim_create(e, &l->bwd_data, &bdd, fpd, da, 3, NULL, why, n) && prim_create(e, &l->bwd_filter, &bwd, fpd, wa, bias ? 4 : 3, NULL, why, n);
    }
    dnnl_primitive_desc_destroy(fpd);
    return ok;
}

// an inner product's forward and backward primitives, the weights in oneDNN's preferred format
// (plain false) or in the engine's (K, C)
static bool plan_fc_prims(cb_exec *e, int i, bool plain, dn_prim *fwd, dn_prim *bwd_data, dn_prim *bwd_filter, char *why, size_t n) {
    const cb_layer *L = &e->net->layers[i];
    int64_t xd[2] = {L->in.n, cb_shape_count(L->in) / L->in.n}, yd[2] = {L->in.n, L->p.fc.k}, kd[2] = {L->p.fc.k, xd[1]}, bd[1] = {L->p.fc.k};
    dnnl_memory_desc_t x = md_of(2, xd, dnnl_nc), y = md_of(2, yd, dnnl_nc), k = md_of(2, kd, dnnl_oi), b = md_of(1, bd, dnnl_x);
    dnnl_memory_desc_t xa = md_of(2, xd, dnnl_format_tag_any), ya = md_of(2, yd, dnnl_format_tag_any), ka = plain ? k : md_of(2, kd, dnnl_format_tag_any);
    bool bias = e->lb[i].nb > 0;
    dnnl_inner_product_desc_t fd, bdd, bwd;
    dnnl_inner_product_forward_desc_init(&fd, dnnl_forward_training, &xa, &ka, bias ? &b : NULL, &ya);
    dnnl_primitive_desc_t fpd = NULL;
    dn_argspec fa[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_WEIGHTS, &k, false}, {DNNL_ARG_DST, &y, true}, {DNNL_ARG_BIAS, &b, false}};
    if (!prim_create(e, fwd, &fd, NULL, fa, bias ? 4 : 3, &fpd, why, n)) return false;
    bool ok = true;
    if (e->opts.train) {
        dnnl_inner_product_backward_data_desc_init(&bdd, &xa, &ka, &ya);
        dnnl_inner_product_backward_weights_desc_init(&bwd, &xa, &ka, bias ? &b : NULL, &ya);
        dn_argspec da[] = {{DNNL_ARG_DIFF_DST, &y, false}, {DNNL_ARG_WEIGHTS, &k, false}, {DNNL_ARG_DIFF_SRC, &x, true}};
        dn_argspec wa[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_DIFF_DST, &y, false}, {DNNL_ARG_DIFF_WEIGHTS, &k, true}, {DNNL_ARG_DIFF_BIAS, &b, true}};
        ok = prim_create(e, bwd_data, &bdd, fpd, da, 3, NULL, why, n) && prim_create(e, bwd_filter, &bwd, fpd, wa, bias ? 4 : 3, NULL, why, n);
    }
    dnnl_primitive_desc_destroy(fpd);
    return ok;
}

// cpu-auto also makes the plain-weight variant (DN_ROUTE_PLAIN) to race; where oneDNN has none,
// the layer races without it
static bool plan_fc(cb_exec *e, int i, dn_layer *l, char *why, size_t n) {
    if (!plan_fc_prims(e, i, false, &l->fwd, &l->bwd_data, &l->bwd_filter, why, n)) return false;
    if (st_of(e)->choose) {
        char no[200];
        if (!plan_fc_prims(e, i, true, &l->pfwd, &l->pbwd_data, &l->pbwd_filter, no, sizeof no)) {
            dn_prim *pl[] = {&l->pfwd, &l->pbwd_data, &l->pbwd_filter};
            for (int k = 0; k < 3; k++) prim_free(pl[k]);
        }
    }
    return true;
}

// the workspace that a training forward leaves for the backward (max pooling, LRN), fixed in both
static bool bind_ws(cb_exec *e, dn_layer *l, dnnl_primitive_desc_t fpd, dn_prim *fwd, int fslot, dn_prim *bwd, int bslot) {
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(fpd, dnnl_query_workspace_md, 0);
    if (!wmd || dnnl_memory_desc_get_size(wmd) == 0) return false;
    if (dnnl_memory_create(&l->ws, wmd, st_of(e)->eng, DNNL_MEMORY_ALLOCATE) != dnnl_success) return false;
    e->allocated += dnnl_memory_desc_get_size(wmd);
    fwd->fixed[fslot] = l->ws;
    bwd->fixed[bslot] = l->ws;
    return true;
}

static bool plan_pool(cb_exec *e, int i, dn_layer *l, char *why, size_t n) {
    const cb_layer *L = &e->net->layers[i];
    const cb_window *w = &L->p.pool.win;
    int64_t xd[4], yd[4];
    nchw_dims(L->in, xd), nchw_dims(L->out, yd);
    dnnl_format_tag_t blk = st_of(e)->blocked;
    dnnl_memory_desc_t x = md_of(4, xd, dnnl_nchw), y = md_of(4, yd, dnnl_nchw), xb = md_of(4, xd, blk), yb = md_of(4, yd, blk);
    dnnl_dims_t strides = {w->stride_h, w->stride_w}, kern = {w->r, w->s}, dil = {0, 0}, pl = {w->pad_top, w->pad_left};
    dnnl_dims_t pr = {pad_after(L->in.h, L->out.h, w->r, w->stride_h, 1, w->pad_top), pad_after(L->in.w, L->out.w, w->s, w->stride_w, 1, w->pad_left)};
    dnnl_alg_kind_t alg = L->p.pool.avg ? dnnl_pooling_avg_exclude_padding : dnnl_pooling_max;
    bool max_train = !L->p.pool.avg && e->opts.train;
    dnnl_pooling_v2_desc_t fd, bd;
    if (dnnl_pooling_v2_forward_desc_init(&fd, e->opts.train ? dnnl_forward_training : dnnl_forward_inference, alg, &xb, &yb, strides, kern, dil, pl, pr) != dnnl_success) {
        snprintf(why, n, "oneDNN refuses the pooling's shape or padding");
        return false;
    }
    dnnl_primitive_desc_t fpd = NULL;
    dn_argspec fa[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_DST, &y, true}, {DNNL_ARG_WORKSPACE, NULL, true}};
    if (!prim_create(e, &l->fwd, &fd, NULL, fa, max_train ? 3 : 2, &fpd, why, n)) return false;
    bool ok = true;
    if (e->opts.train) {
        dn_argspec ba[] = {{DNNL_ARG_DIFF_DST, &y, false}, {DNNL_ARG_DIFF_SRC, &x, true}, {DNNL_ARG_WORKSPACE, NULL, false}};
        ok = dnnl_pooling_v2_backward_desc_init(&bd, alg, &xb, &yb, strides, kern, dil, pl, pr) == dnnl_success &&
             prim_create(e, &l->bwd_data, &bd, fpd, ba, max_train ? 3 : 2, NULL, why, n) &&
             (!max_train || bind_ws(e, l, fpd, &l->fwd, 2, &l->bwd_data, 2));
        if (!ok) snprintf(why, n, "oneDNN has no backward for the pooling");
    }
    dnnl_primitive_desc_destroy(fpd);
    return ok;
}

static bool plan_lrn(cb_exec *e, int i, dn_layer *l, char *why, size_t n) {
    const cb_layer *L = &e->net->layers[i];
    int64_t d[4];
    nchw_dims(L->out, d);
    dnnl_memory_desc_t x = md_of(4, d, dnnl_nchw), xb = md_of(4, d, st_of(e)->blocked);
    dnnl_lrn_desc_t fd, bd;
    dnnl_prop_kind_t prop = e->opts.train ? dnnl_forward_training : dnnl_forward_inference;
    dnnl_lrn_forward_desc_init(&fd, prop, dnnl_lrn_across_channels, &xb, L->p.lrn.size, L->p.lrn.alpha, L->p.lrn.beta, L->p.lrn.k);
    dnnl_primitive_desc_t fpd = NULL;
    dn_argspec fa[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_DST, &x, true}, {DNNL_ARG_WORKSPACE, NULL, true}};
    // a training forward passes a workspace to the backward where the implementation has one
    bool ws = false;
    if (e->opts.train && dnnl_primitive_desc_create(&fpd, &fd, NULL, st_of(e)->eng, NULL) == dnnl_success) {
        const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(fpd, dnnl_query_workspace_md, 0);
        ws = wmd && dnnl_memory_desc_get_size(wmd) > 0;
        dnnl_primitive_desc_destroy(fpd);
        fpd = NULL;
    }
    if (!prim_create(e, &l->fwd, &fd, NULL, fa, ws ? 3 : 2, &fpd, why, n)) return false;
    bool ok = true;
    if (ok && e->opts.train) {
        dn_argspec ba[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_DIFF_DST, &x, false}, {DNNL_ARG_DIFF_SRC, &x, true}, {DNNL_ARG_WORKSPACE, NULL, false}};
        ok = dnnl_lrn_backward_desc_init(&bd, dnnl_lrn_across_channels, &xb, &xb, L->p.lrn.size, L->p.lrn.alpha, L->p.lrn.beta, L->p.lrn.k) == dnnl_success &&
             prim_create(e, &l->bwd_data, &bd, fpd, ba, ws ? 4 : 3, NULL, why, n) && (!ws || bind_ws(e, l, fpd, &l->fwd, 2, &l->bwd_data, 3));
    }
    dnnl_primitive_desc_destroy(fpd);
    return ok;
}

// batch norm of a (N, C, H, W) tensor: training forward, inference forward and backward into
// fwd, infer and bwd
static bool plan_bn(cb_exec *e, cb_shape s, float eps, dn_layer *l, dn_prim *fwd, dn_prim *infer, dn_prim *bwd, char *why, size_t n) {
    int64_t d[4], cd[1] = {s.c};
    nchw_dims(s, d);
    dnnl_memory_desc_t x = md_of(4, d, dnnl_nchw), xb = md_of(4, d, st_of(e)->blocked), c = md_of(1, cd, dnnl_x);
    unsigned ss = dnnl_use_scale | dnnl_use_shift;
    dnnl_batch_normalization_desc_t fd, id, bd;
    dnnl_batch_normalization_forward_desc_init(&fd, dnnl_forward_training, &xb, eps, ss);
    dnnl_batch_normalization_forward_desc_init(&id, dnnl_forward_inference, &xb, eps, ss | dnnl_use_global_stats);
    dnnl_primitive_desc_t fpd = NULL;
    dn_argspec fa[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_SCALE, &c, false}, {DNNL_ARG_SHIFT, &c, false},
                       {DNNL_ARG_DST, &x, true},  {DNNL_ARG_MEAN, &c, true},   {DNNL_ARG_VARIANCE, &c, true}};
    dn_argspec ia[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_SCALE, &c, false}, {DNNL_ARG_SHIFT, &c, false},
                       {DNNL_ARG_DST, &x, true},  {DNNL_ARG_MEAN, &c, false},  {DNNL_ARG_VARIANCE, &c, false}};
    dn_argspec ba[] = {{DNNL_ARG_SRC, &x, false},      {DNNL_ARG_MEAN, &c, false},       {DNNL_ARG_VARIANCE, &c, false},
                       {DNNL_ARG_DIFF_DST, &x, false}, {DNNL_ARG_SCALE, &c, false},      {DNNL_ARG_DIFF_SRC, &x, true},
                       {DNNL_ARG_DIFF_SCALE, &c, true}, {DNNL_ARG_DIFF_SHIFT, &c, true}, {DNNL_ARG_SHIFT, &c, false}};
    if (!prim_create(e, fwd, &fd, NULL, fa, 6, &fpd, why, n)) return false;
    bool ok = prim_create(e, infer, &id, NULL, ia, 6, NULL, why, n);
    if (ok && e->opts.train) {
        dnnl_batch_normalization_backward_desc_init(&bd, dnnl_backward, &xb, &xb, eps, ss);
        ok = prim_create(e, bwd, &bd, fpd, ba, 9, NULL, why, n); // oneDNN 2.6 counts the shift among its inputs
    }
    dnnl_primitive_desc_destroy(fpd);
    if (ok && !l->var) {
        l->var = calloc((size_t)s.c, sizeof(float));
        l->ones = malloc((size_t)s.c * 4 * sizeof(float) + 4);
        ok = l->var && l->ones;
        for (int64_t k = 0; ok && k < s.c; k++) l->ones[k] = 1.f, l->ones[s.c + k] = 0.f;
        if (!ok) snprintf(why, n, "out of memory");
    }
    return ok;
}

// ReLU of a tensor of shape s, in place or not, with its backward from the output
static bool plan_relu(cb_exec *e, cb_shape s, dn_layer *l, char *why, size_t n) {
    int64_t d[4];
    nchw_dims(s, d);
    dnnl_memory_desc_t x = md_of(4, d, dnnl_nchw);
    dnnl_eltwise_desc_t fd, bd;
    dnnl_eltwise_forward_desc_init(&fd, dnnl_forward_training, dnnl_eltwise_relu_use_dst_for_bwd, &x, 0.f, 0.f);
    dnnl_primitive_desc_t fpd = NULL;
    dn_argspec fa[] = {{DNNL_ARG_SRC, &x, false}, {DNNL_ARG_DST, &x, true}};
    dn_argspec ba[] = {{DNNL_ARG_DST, &x, false}, {DNNL_ARG_DIFF_DST, &x, false}, {DNNL_ARG_DIFF_SRC, &x, true}};
    if (!prim_create(e, &l->relu_fwd, &fd, NULL, fa, 2, &fpd, why, n)) return false;
    bool ok = true;
    if (e->opts.train) {
        dnnl_eltwise_backward_desc_init(&bd, dnnl_eltwise_relu_use_dst_for_bwd, &x, &x, 0.f, 0.f);
        ok = prim_create(e, &l->relu_bwd, &bd, fpd, ba, 3, NULL, why, n);
    }
    dnnl_primitive_desc_destroy(fpd);
    return ok;
}

// a ReLU layer (an Activation layer of fn relu): oneDNN's eltwise; other functions run as cpu's
static bool relu_layer(const cb_layer *L) { return L->op == CB_OP_ACT && L->p.act.fn == CB_ACT_RELU; }

static cb_status plan(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    bool op = L->op == CB_OP_CONV || L->op == CB_OP_FC || L->op == CB_OP_POOL || L->op == CB_OP_LRN || L->op == CB_OP_BATCHNORM || relu_layer(L);
    if (!op && !L->bn && L->act != CB_ACT_RELU) {
        cb_status rc;
        ON_CPU(e, rc = cb_backend_cpu.plan(e, i, err));
        return rc;
    }
    dn_layer *l = calloc(1, sizeof *l);
    if (!l) return CB_STATUS_NOMEM;
    b->priv = l;
    char why[200] = "";
    bool ok = true;
    switch (L->op) {
    case CB_OP_CONV: ok = plan_conv(e, i, l, why, sizeof why); break;
    case CB_OP_FC: ok = plan_fc(e, i, l, why, sizeof why); break;
    case CB_OP_POOL: ok = plan_pool(e, i, l, why, sizeof why); break;
    case CB_OP_LRN: ok = plan_lrn(e, i, l, why, sizeof why); break;
    case CB_OP_BATCHNORM:
        ok = plan_bn(e, L->out, L->p.bn.eps, l, &l->fwd, &l->fwd_infer, &l->bwd_data, why, sizeof why);
        if (ok && e->opts.train && !(l->dx = malloc((size_t)cb_shape_count(L->out) * 4 + 4))) ok = false, snprintf(why, sizeof why, "out of memory");
        break;
    case CB_OP_ACT: ok = plan_relu(e, L->out, l, why, sizeof why); break; // relu_layer: the others are cpu's
    default: break;
    }
    if (ok && L->bn) ok = plan_bn(e, L->out, L->bn_eps, l, &l->bn_fwd, &l->bn_infer, &l->bn_bwd, why, sizeof why);
    if (ok && !relu_layer(L) && L->act == CB_ACT_RELU) ok = plan_relu(e, L->out, l, why, sizeof why);
    if (!ok) {
        return cb_fail(err, CB_STATUS_UNSUPPORTED, e->net->path, L->name, "backend onednn: %s", why);
    }
    const dn_prim *ph[CB_PHASE_COUNT] = {[CB_PHASE_FORWARD] = &l->fwd, [CB_PHASE_BWD_DATA] = &l->bwd_data, [CB_PHASE_BWD_FILTER] = &l->bwd_filter};
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        const dn_prim *P = ph[p] && ph[p]->p ? ph[p] : relu_layer(L) ? (p == CB_PHASE_FORWARD ? &l->relu_fwd : &l->relu_bwd) : NULL;
        if (P && P->p) b->choice[p] = cb_choice_of(CB_IMPL_ONEDNN, 0, P->impl);
    }
    if (st_of(e)->choose && (L->op == CB_OP_CONV || L->op == CB_OP_FC) && !choose(e, i, l, why, sizeof why))
        return cb_fail(err, CB_STATUS_NOMEM, e->net->path, L->name, "backend cpu-auto: %s", why);
    return CB_OK;
}

// a batch norm's (gamma, beta) as oneDNN's scale and shift; 1 and 0 where the layer has none
static float *bn_gamma(const cb_lbuf *b, const dn_layer *l) { return b->gamma ? b->gamma : l->ones; }
static float *bn_beta(const cb_lbuf *b, const dn_layer *l, int64_t c) { return b->beta ? b->beta : l->ones + c; }

static void bn_forward(cb_exec *e, cb_lbuf *b, dn_layer *l, dn_prim *fwd, dn_prim *infer, cb_shape s, float eps, const float *x, float *y, bool train) {
    int64_t c = s.c;
    if (!train) {
        void *p[] = {(void *)x, bn_gamma(b, l), bn_beta(b, l, c), y, b->rmean, b->rvar};
        prim_run(e, infer, p);
        return;
    }
    void *p[] = {(void *)x, bn_gamma(b, l), bn_beta(b, l, c), y, b->bn_mean, l->var};
    prim_run(e, fwd, p);
    double m = (double)s.n * s.h * s.w;
    for (int64_t k = 0; k < c; k++) { // the running statistics, as the cpu backend keeps them (unbiased variance)
        double unb = m > 1 ? l->var[k] * m / (m - 1) : l->var[k];
        if (b->bn_invstd) b->bn_invstd[k] = (float)(1.0 / sqrt((double)l->var[k] + eps));
        if (b->rmean) b->rmean[k] = (float)(0.9 * b->rmean[k] + 0.1 * b->bn_mean[k]);
        if (b->rvar) b->rvar[k] = (float)(0.9 * b->rvar[k] + 0.1 * unb);
    }
}

static void bn_backward(cb_exec *e, cb_lbuf *b, dn_layer *l, dn_prim *bwd, int64_t c, const float *x, const float *dy, float *dx, float *dg, float *db) {
    void *p[] = {(void *)x, b->bn_mean, l->var, (void *)dy, bn_gamma(b, l), dx, dg ? dg : l->ones + 2 * c, db ? db : l->ones + 3 * c, bn_beta(b, l, c)};
    prim_run(e, bwd, p);
}

static void epilogue_forward(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dn_layer *l = b->priv;
    if (L->bn) bn_forward(e, b, l, &l->bn_fwd, &l->bn_infer, L->out, L->bn_eps, b->pre, b->y, train);
    if (L->act == CB_ACT_RELU) prim_run(e, &l->relu_fwd, (void *[]){b->y, b->y});
    else if (L->act != CB_ACT_NONE) cb_cpu_act_forward((size_t)cb_shape_count(L->out), L->act, b->y, b->act_in, b->y);
}

static void backward_epilogue(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dn_layer *l = b->priv;
    if (L->act == CB_ACT_RELU) prim_run(e, &l->relu_bwd, (void *[]){b->y, b->dy, b->dy});
    else if (L->act != CB_ACT_NONE) cb_cpu_act_backward((size_t)cb_shape_count(L->out), L->act, b->act_in, b->y, b->dy, b->dy);
    if (L->bn) bn_backward(e, b, l, &l->bn_bwd, L->out.c, b->pre, b->dy, b->dpre, b->dgamma, b->dbeta);
}

static void forward(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dn_layer *l = b->priv;
    void *x = e->lb[L->parents[0]].y;
    float *out = cb_exec_op_out(e, i);
    switch (L->op) {
    case CB_OP_CONV:
    case CB_OP_FC:
        if (l->route[CB_PHASE_FORWARD] >= DN_ROUTE_GEMM) ON_CPU(e, cb_backend_cpu.forward(e, i, train)); // cpu-auto's choice
        else prim_run(e, phase_prim(l, CB_PHASE_FORWARD, l->route[CB_PHASE_FORWARD] == DN_ROUTE_PLAIN), (void *[]){x, b->w, out, b->b});
        break;
    case CB_OP_POOL:
    case CB_OP_LRN: prim_run(e, &l->fwd, (void *[]){x, out, NULL}); break;
    case CB_OP_BATCHNORM: bn_forward(e, b, l, &l->fwd, &l->fwd_infer, L->out, L->p.bn.eps, x, out, train); break;
    case CB_OP_ACT:
        if (relu_layer(L)) {
            prim_run(e, &l->relu_fwd, (void *[]){x, out});
            break;
        }
        ON_CPU(e, cb_backend_cpu.forward(e, i, train));
        break;
    default: ON_CPU(e, cb_backend_cpu.forward(e, i, train)); break;
    }
}

static void backward_data(cb_exec *e, int i, int slot, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dn_layer *l = b->priv;
    void *dy = cb_exec_op_grad(e, i), *x = e->lb[L->parents[slot]].y;
    switch (L->op) {
    case CB_OP_CONV:
    case CB_OP_FC:
        if (l->route[CB_PHASE_BWD_DATA] >= DN_ROUTE_GEMM) ON_CPU(e, cb_backend_cpu.backward_data(e, i, slot, dx));
        else prim_run(e, phase_prim(l, CB_PHASE_BWD_DATA, l->route[CB_PHASE_BWD_DATA] == DN_ROUTE_PLAIN), (void *[]){dy, b->w, dx});
        break;
    case CB_OP_POOL: prim_run(e, &l->bwd_data, (void *[]){dy, dx, NULL}); break;
    case CB_OP_LRN: prim_run(e, &l->bwd_data, (void *[]){x, dy, dx, NULL}); break;
    case CB_OP_BATCHNORM: memcpy(dx, l->dx, (size_t)cb_shape_count(L->out) * 4); break; // computed in backward_filter
    case CB_OP_ACT:
        if (relu_layer(L)) {
            prim_run(e, &l->relu_bwd, (void *[]){b->y, dy, dx});
            break;
        }
        ON_CPU(e, cb_backend_cpu.backward_data(e, i, slot, dx));
        break;
    default: ON_CPU(e, cb_backend_cpu.backward_data(e, i, slot, dx)); break;
    }
}

static void backward_filter(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    dn_layer *l = b->priv;
    void *dy = cb_exec_op_grad(e, i), *x = e->lb[L->parents[0]].y;
    switch (L->op) {
    case CB_OP_CONV:
    case CB_OP_FC:
        if (l->route[CB_PHASE_BWD_FILTER] >= DN_ROUTE_GEMM) ON_CPU(e, cb_backend_cpu.backward_filter(e, i));
        else prim_run(e, phase_prim(l, CB_PHASE_BWD_FILTER, l->route[CB_PHASE_BWD_FILTER] == DN_ROUTE_PLAIN), (void *[]){x, dy, b->dw, b->db});
        break;
    // the engine asks for dgamma, dbeta before dx: oneDNN computes the three at once
    case CB_OP_BATCHNORM: bn_backward(e, b, l, &l->bwd_data, L->out.c, x, dy, l->dx, b->dgamma, b->dbeta); break;
    default: ON_CPU(e, cb_backend_cpu.backward_filter(e, i)); break;
    }
}

static void add(cb_exec *e, float *dst, const float *src, size_t n) { ON_CPU(e, cb_backend_cpu.add(e, dst, src, n)); }
static void fill(cb_exec *e, float *dst, float v, size_t n) { ON_CPU(e, cb_backend_cpu.fill(e, dst, v, n)); }
static void sgd(cb_exec *e, size_t n, float lr, float mom, float wd, float *w, const float *g, float *v) {
    ON_CPU(e, cb_backend_cpu.sgd(e, n, lr, mom, wd, w, g, v));
}
static double xent_forward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k) {
    double l = 0;
    ON_CPU(e, l = cb_backend_cpu.xent_forward(e, prob, labels, n, k));
    return l;
}
static void xent_backward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k, float *dlogits) {
    ON_CPU(e, cb_backend_cpu.xent_backward(e, prob, labels, n, k, dlogits));
}
static void softmax(cb_exec *e, const float *x, float *prob, int n, int k) { ON_CPU(e, cb_backend_cpu.softmax(e, x, prob, n, k)); }

const cb_backend cb_backend_onednn = {
    .name = "onednn", .device = false, .init = init, .destroy = destroy, .alloc = alloc, .release = release,
    .upload = copy, .download = copy, .timer_start = timer_start, .timer_stop = timer_stop, .supports = NULL,
    .plan = plan, .forward = forward, .forward_epilogue = epilogue_forward, .backward_epilogue = backward_epilogue,
    .backward_data = backward_data, .backward_filter = backward_filter, .add = add, .fill = fill, .sgd = sgd,
    .xent_forward = xent_forward, .xent_backward = xent_backward, .softmax = softmax};

// the same table with the per-layer choice (plan's choose)
const cb_backend cb_backend_cpu_auto = {
    .name = "cpu-auto", .device = false, .init = init_auto, .destroy = destroy, .alloc = alloc, .release = release,
    .upload = copy, .download = copy, .timer_start = timer_start, .timer_stop = timer_stop, .supports = NULL,
    .plan = plan, .forward = forward, .forward_epilogue = epilogue_forward, .backward_epilogue = backward_epilogue,
    .backward_data = backward_data, .backward_filter = backward_filter, .add = add, .fill = fill, .sgd = sgd,
    .xent_forward = xent_forward, .xent_backward = xent_backward, .softmax = softmax};
