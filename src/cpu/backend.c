// The CPU backends: "cpu" (im2col + OpenBLAS, OpenMP loops) and "ref" (the plain reference
// loops, the oracle at network level). Buffers are host memory in NCHW.
#include "core/backend.h"
#include "cpu/kernels.h"
#include "core/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cpu_state {
    bool ref;
    bool fuse_epilogue;           // $CONVBENCH_FUSE_EPILOGUE (default on): max pools take over ReLUs (cpu only)
    bool concat_relu;             // and concatenations (cb_env_concat_relu)
    double t0[8];                 // timers nest: a phase timer around per-layer timers
    int depth;
} cpu_state;

static bool is_ref(const cb_exec *e) { return ((const cpu_state *)e->state)->ref; }

static cb_status init_common(cb_exec *e, bool ref, cb_error *err) {
    bool fuse;
    cb_status st = cb_env_fuse_epilogue(&fuse, err); // off: the ReLU's own pass, to compare
    if (st != CB_OK) return st;
    bool concat;
    if ((st = cb_env_concat_relu(&concat, err)) != CB_OK) return st;
    cpu_state *s = calloc(1, sizeof *s);
    if (!s) return CB_STATUS_NOMEM;
    s->ref = ref;
    s->fuse_epilogue = fuse;
    s->concat_relu = concat;
    e->state = s;
    return CB_OK;
}
static cb_status init_cpu(cb_exec *e, cb_error *err) { return init_common(e, false, err); }
static cb_status init_ref(cb_exec *e, cb_error *err) { return init_common(e, true, err); }

// be->pool_relu_mask: the cpu backend's max pools keep an argmax and read it alone in the backward,
// so one may mark the windows whose maximum is not above 0 and take over the ReLU before it (the
// memory of the GPU backends' plan, on the host); the reference keeps the plain passes
static bool pool_relu_mask(const cb_exec *e, int i) {
    const cpu_state *s = e->state;
    return !s->ref && s->fuse_epilogue;
}
// be->concat_relu_mask: so may its concatenations take over their inputs' ReLU (the GPU backends'
// plan on the host); the reference keeps the plain passes
static bool concat_relu_mask(const cb_exec *e, int i) {
    const cpu_state *s = e->state;
    return !s->ref && s->concat_relu;
}
static void destroy(cb_exec *e) { free(e->state); }

static void *alloc(cb_exec *e, size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64); }
static void release(cb_exec *e, void *p) { free(p); }
static void copy(cb_exec *e, void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }
static void timer_start(cb_exec *e) {
    cpu_state *s = e->state;
    if (s->depth < 8) s->t0[s->depth] = cb_now_ms();
    s->depth++;
}
static double timer_stop(cb_exec *e) {
    cpu_state *s = e->state;
    if (s->depth == 0) return 0;
    s->depth--;
    return s->depth < 8 ? cb_now_ms() - s->t0[s->depth] : 0;
}

// every layer kind and activation, in fp32 NCHW (the options the registry checked)
static cb_reason supports(const cb_net *net, int i, const cb_exec_opts *o, char *why, size_t n) { return CB_REASON_NONE; }

// The forward of a convolution on the CPU: im2col + OpenBLAS, or the own direct kernels
// (src/cpu/direct.c). CONVBENCH_CPU_CONV=race times both on one image of the layer's shape (random
// inputs; the better of two after one untimed) and keeps the faster; =own forces the own kernels.
// Not raced by default: alone the own kernels beat OpenBLAS on some layers (AlexNet conv1 130
// against 95 GFLOP/s), but between OpenBLAS layers their OpenMP team and OpenBLAS's spinning
// threads contend for the two cores, and the raced AlexNet b16 forward took 312 ms against 228
// (docs/results/2026-11-23-cpu-direct.md).
static double time_conv(const cb_conv_params *p1, bool direct, const float *x, const float *w, float *y, void *ws) {
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = cb_now_ms();
        if (direct) cb_cpu_direct_forward(p1, x, w, NULL, y, ws);
        else cb_cpu_conv_forward(p1, x, w, NULL, y, ws);
        double t = cb_now_ms() - t0;
        if (r > 0 && t < best) best = t;
    }
    return best;
}

static cb_choice race_conv_forward(const cb_conv_params *p, cb_choice gemm, size_t *ws) {
    static const char *names[] = {"own direct (scalar)", "own direct (AVX2)", "own direct (AVX-512)"};
    if (!cb_cpu_direct_supports(p)) return gemm;
    cb_choice own = cb_choice_of(CB_IMPL_CPU, 2, names[cb_cpu_direct_isa()]);
    const char *force = getenv("CONVBENCH_CPU_CONV");
    size_t dws = cb_cpu_direct_workspace(p);
    if (!force || strcmp(force, "race")) {
        if (!force || strcmp(force, "own")) return gemm;
        *ws = dws;
        return own;
    }
    cb_conv_params p1 = *p;
    p1.n = 1;
    size_t xs = (size_t)p->c * p->h * p->w, wsz = (size_t)p->k * p->c * p->r * p->s, ys = (size_t)p->k * p->p * p->q;
    size_t scratch = dws > *ws ? dws : *ws;
    float *x = malloc(sizeof(float) * (xs + wsz + ys) + scratch + 64);
    if (!x) return gemm;
    float *w = x + xs, *y = w + wsz;
    uint64_t s = 0x1234567ull;
    for (size_t j = 0; j < xs + wsz; j++) x[j] = 0.01f * cb_rng_uniform(&s); // small values: no denormals, no overflow
    void *wsp = y + ys;
    double tg = time_conv(&p1, false, x, w, y, wsp), to = time_conv(&p1, true, x, w, y, wsp);
    free(x);
    cb_choice *win = to < tg ? &own : &gemm;
    win->ms = to < tg ? to : tg;
    win->rival_ms = to < tg ? tg : to;
    if (to < tg) *ws = dws;
    return *win;
}

static cb_status plan(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    if (L->op != CB_OP_CONV && L->op != CB_OP_FC) return CB_OK;
    cb_choice c = is_ref(e) ? cb_choice_of(CB_IMPL_REF, 0, "direct (reference)")
                  : L->op == CB_OP_FC ? cb_choice_of(CB_IMPL_CPU, 0, "GEMM") : cb_choice_of(CB_IMPL_CPU, 1, "im2col+GEMM");
    if (L->op == CB_OP_CONV && !is_ref(e)) {
        cb_conv_params cp;
        cb_conv_params_of(L, &cp);
        size_t ws = cb_cpu_conv_workspace(&cp);
        for (int p = 0; p < CB_PHASE_COUNT; p++) b->ws[p] = ws;
        if (ws == 0) c = cb_choice_of(CB_IMPL_CPU, 0, "GEMM 1x1");
        for (int p = 0; p < CB_PHASE_COUNT; p++) b->choice[p] = c;
        size_t fws = ws;
        b->choice[CB_PHASE_FORWARD] = race_conv_forward(&cp, c, &fws);
        b->ws[CB_PHASE_FORWARD] = fws;
        return CB_OK;
    }
    for (int p = 0; p < CB_PHASE_COUNT; p++) b->choice[p] = c;
    return CB_OK;
}

// y = act(bn(pre)) for the fused epilogue of layer i, in training or inference mode
static void epilogue_forward(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    size_t n = (size_t)cb_shape_count(L->out);
    if (L->bn) {
        cb_bn_params bp;
        cb_bn_params_of(L, &bp);
        if (train) cb_cpu_bn_forward_train(&bp, b->pre, b->gamma, b->beta, b->y, b->bn_mean, b->bn_invstd, b->rmean, b->rvar, 0.1f);
        else cb_cpu_bn_forward_infer(&bp, b->pre, b->gamma, b->beta, b->y, b->rmean, b->rvar);
    }
    if (L->act != CB_ACT_NONE) cb_cpu_act_forward(n, L->act, b->y, b->act_in, b->y);
}

static void forward(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const float *x = e->lb[L->parents[0]].y;
    float *out = cb_exec_op_out(e, i);
    bool ref = is_ref(e);
    size_t n = (size_t)cb_shape_count(L->out);
    switch (L->op) {
    case CB_OP_CONV: {
        cb_conv_params p;
        cb_conv_params_of(L, &p);
        if (ref) cb_ref_conv_forward(&p, x, b->w, b->b, out);
        else if (b->choice[CB_PHASE_FORWARD].algo == 2) cb_cpu_direct_forward(&p, x, b->w, b->b, out, e->ws);
        else if (b->choice[CB_PHASE_FORWARD].algo == 3) cb_cpu_blocked_forward(&p, x, b->w, b->b, out, e->ws); // cpu-auto's
        else if (b->choice[CB_PHASE_FORWARD].algo == 4) cb_cpu_winograd_forward(&p, x, b->w, b->b, out, e->ws);  // cpu-auto's
        else cb_cpu_conv_forward(&p, x, b->w, b->b, out, e->ws);
        break;
    }
    case CB_OP_FC:
        if (ref) cb_ref_fc_forward((int)L->in.n, (int)L->in.c, L->p.fc.k, x, b->w, b->b, out);
        else cb_cpu_fc_forward((int)L->in.n, (int)L->in.c, L->p.fc.k, x, b->w, b->b, out);
        break;
    case CB_OP_POOL: {
        cb_pool_params p;
        cb_pool_params_of(L, &p);
        p.relu_mask = train && e->lb[L->parents[0]].relu_by_pool; // (never on the reference)
        if (ref) cb_ref_pool_forward(&p, x, out, b->aux);
        else cb_cpu_pool_forward(&p, x, out, b->aux);
        break;
    }
    case CB_OP_CONCAT: {
        int64_t inner = L->out.h * L->out.w, off = 0;
        for (int j = 0; j < L->nparents; j++) {
            const cb_layer *P = &e->net->layers[L->parents[j]];
            const float *src = e->lb[L->parents[j]].y;
            int64_t blk = P->out.c * inner;
            for (int64_t s = 0; s < L->out.n; s++) memcpy(out + s * L->out.c * inner + off, src + s * blk, (size_t)blk * 4);
            off += blk;
        }
        break;
    }
    case CB_OP_ADD:
        memcpy(out, x, n * 4);
        for (int j = 1; j < L->nparents; j++) {
            const float *src = e->lb[L->parents[j]].y;
            for (size_t k = 0; k < n; k++) out[k] += src[k];
        }
        break;
    case CB_OP_DROPOUT:
        if (train) cb_cpu_dropout_forward(n, L->p.dropout.keep, &e->rng, x, b->aux, out);
        else memcpy(out, x, n * 4);
        break;
    case CB_OP_SOFTMAX: {
        int k = (int)(L->out.c);
        if (ref) cb_ref_softmax_forward((int)L->out.n, k, x, out);
        else cb_cpu_softmax_forward((int)L->out.n, k, x, out);
        break;
    }
    case CB_OP_RESHAPE:
        memcpy(out, x, n * 4);
        break;
    case CB_OP_LRN: {
        cb_lrn_params p;
        cb_lrn_params_of(L, &p);
        if (ref) cb_ref_lrn_forward(&p, x, out, b->aux);
        else cb_cpu_lrn_forward(&p, x, out, b->aux);
        break;
    }
    case CB_OP_BATCHNORM: {
        cb_bn_params p;
        cb_bn_params_of(L, &p);
        if (train) cb_cpu_bn_forward_train(&p, x, b->gamma, b->beta, out, b->bn_mean, b->bn_invstd, b->rmean, b->rvar, 0.1f);
        else cb_cpu_bn_forward_infer(&p, x, b->gamma, b->beta, out, b->rmean, b->rvar);
        break;
    }
    case CB_OP_ACT:
        cb_cpu_act_forward(n, L->p.act.fn, x, NULL, out);
        break;
    case CB_OP_MUL: { // the full-size operand first; the other may be (N, C, 1, 1)
        int big = L->in.h * L->in.w == L->out.h * L->out.w ? 0 : 1;
        const cb_layer *S = &e->net->layers[L->parents[1 - big]];
        cb_ref_mul_forward((int)L->out.n, (int)L->out.c, (int)(L->out.h * L->out.w), (int)(S->out.h * S->out.w),
                           e->lb[L->parents[big]].y, e->lb[L->parents[1 - big]].y, out);
        break;
    }
    case CB_OP_SCALE:
        cb_ref_scale_forward((int)L->out.n, (int)L->out.c, (int)(L->out.h * L->out.w), x, b->w, out);
        break;
    case CB_OP_LAYERNORM:
        cb_ref_layernorm_forward((int)L->out.n, (int)L->out.c, (int)(L->out.h * L->out.w), L->p.ln.eps, x, b->w, b->b, out);
        break;
    case CB_OP_INPUT:
    case CB_OP_COUNT:
        break;
    }
}

static void backward_epilogue(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    size_t n = (size_t)cb_shape_count(L->out);
    if (L->act != CB_ACT_NONE && !cb_relu_taken(b)) // (the max pool or concatenation after it applied the ReLU's gradient)
        cb_cpu_act_backward(n, L->act, b->act_in, b->y, b->dy, b->dy);
    if (L->bn) {
        cb_bn_params bp;
        cb_bn_params_of(L, &bp);
        cb_cpu_bn_backward(&bp, b->pre, b->gamma, b->bn_mean, b->bn_invstd, b->dy, b->dpre, b->dgamma, b->dbeta);
    }
}

static void backward_data(cb_exec *e, int i, int slot, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const float *dy = cb_exec_op_grad(e, i);
    const float *x = e->lb[L->parents[slot]].y;
    bool ref = is_ref(e);
    size_t nin = (size_t)cb_shape_count(e->net->layers[L->parents[slot]].out);
    switch (L->op) {
    case CB_OP_CONV: {
        cb_conv_params p;
        cb_conv_params_of(L, &p);
        if (ref) cb_ref_conv_backward_data(&p, dy, b->w, dx);
        else if (b->choice[CB_PHASE_BWD_DATA].algo == 3 || b->choice[CB_PHASE_BWD_DATA].algo == 4) // cpu-auto's own
            cb_cpu_dgrad(&p, dy, b->w, dx, e->ws, b->choice[CB_PHASE_BWD_DATA].algo == 4);
        else cb_cpu_conv_backward_data(&p, dy, b->w, dx, e->ws);
        break;
    }
    case CB_OP_FC:
        if (ref) cb_ref_fc_backward_data((int)L->in.n, (int)L->in.c, L->p.fc.k, dy, b->w, dx);
        else cb_cpu_fc_backward_data((int)L->in.n, (int)L->in.c, L->p.fc.k, dy, b->w, dx);
        break;
    case CB_OP_POOL: {
        cb_pool_params p;
        cb_pool_params_of(L, &p);
        if (ref) cb_ref_pool_backward(&p, x, dy, b->aux, dx);
        else cb_cpu_pool_backward(&p, x, dy, b->aux, dx);
        break;
    }
    case CB_OP_CONCAT: {
        int64_t inner = L->out.h * L->out.w, off = 0;
        for (int j = 0; j < slot; j++) off += e->net->layers[L->parents[j]].out.c * inner;
        int64_t blk = e->net->layers[L->parents[slot]].out.c * inner;
        if (e->lb[L->parents[slot]].relu_by_concat) { // (that input's ReLU: its values, this output's slice, above 0)
            for (int64_t s = 0; s < L->out.n; s++)
                for (int64_t k = 0, o = s * L->out.c * inner + off; k < blk; k++) dx[s * blk + k] = b->y[o + k] > 0 ? dy[o + k] : 0.f;
        } else
            for (int64_t s = 0; s < L->out.n; s++) memcpy(dx + s * blk, dy + s * L->out.c * inner + off, (size_t)blk * 4);
        break;
    }
    case CB_OP_DROPOUT:
        cb_cpu_dropout_backward(nin, b->aux, dy, dx);
        break;
    case CB_OP_LRN: {
        cb_lrn_params p;
        cb_lrn_params_of(L, &p);
        if (ref) cb_ref_lrn_backward(&p, x, b->y, b->aux, dy, dx);
        else cb_cpu_lrn_backward(&p, x, b->y, b->aux, dy, dx);
        break;
    }
    case CB_OP_BATCHNORM: {
        cb_bn_params p;
        cb_bn_params_of(L, &p);
        cb_cpu_bn_backward(&p, x, b->gamma, b->bn_mean, b->bn_invstd, dy, dx, NULL, NULL);
        break;
    }
    case CB_OP_ACT:
        cb_cpu_act_backward(nin, L->p.act.fn, x, b->y, dy, dx);
        break;
    case CB_OP_MUL: { // d(slot) = dy * other, summed over the pixels when the slot was broadcast
        const cb_layer *S = &e->net->layers[L->parents[slot]], *O = &e->net->layers[L->parents[1 - slot]];
        const float *other = e->lb[L->parents[1 - slot]].y;
        int n_ = (int)L->out.n, c = (int)L->out.c, hw = (int)(L->out.h * L->out.w);
        if (S->out.h * S->out.w == hw) cb_ref_mul_forward(n_, c, hw, (int)(O->out.h * O->out.w), dy, other, dx);
        else cb_ref_mul_backward_bcast(n_, c, hw, dy, other, dx);
        break;
    }
    case CB_OP_SCALE:
        cb_ref_scale_forward((int)L->out.n, (int)L->out.c, (int)(L->out.h * L->out.w), dy, b->w, dx);
        break;
    case CB_OP_LAYERNORM:
        cb_ref_layernorm_backward((int)L->out.n, (int)L->out.c, (int)(L->out.h * L->out.w), L->p.ln.eps, x, b->w, dy, dx,
                                  NULL, NULL);
        break;
    case CB_OP_ADD:     // the sum passes its gradient to every input
    case CB_OP_SOFTMAX: // the criterion's gradient is already w.r.t. the logits
    case CB_OP_RESHAPE:
        memcpy(dx, dy, nin * 4);
        break;
    case CB_OP_INPUT:
    case CB_OP_COUNT:
        break;
    }
}

static void backward_filter(cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const float *dy = cb_exec_op_grad(e, i);
    const float *x = e->lb[L->parents[0]].y;
    bool ref = is_ref(e);
    if (L->op == CB_OP_CONV) {
        cb_conv_params p;
        cb_conv_params_of(L, &p);
        if (ref) cb_ref_conv_backward_filter(&p, x, dy, b->dw, b->db);
        else if (b->choice[CB_PHASE_BWD_FILTER].algo == 3) cb_cpu_wgrad(&p, x, dy, b->dw, b->db, e->ws); // cpu-auto's own
        else cb_cpu_conv_backward_filter(&p, x, dy, b->dw, b->db, e->ws);
    } else if (L->op == CB_OP_FC) {
        if (ref) cb_ref_fc_backward_filter((int)L->in.n, (int)L->in.c, L->p.fc.k, x, dy, b->dw, b->db);
        else cb_cpu_fc_backward_filter((int)L->in.n, (int)L->in.c, L->p.fc.k, x, dy, b->dw, b->db);
    } else if (L->op == CB_OP_BATCHNORM) {
        cb_bn_params p;
        cb_bn_params_of(L, &p);
        cb_cpu_bn_backward(&p, x, b->gamma, b->bn_mean, b->bn_invstd, dy, NULL, b->dgamma, b->dbeta);
    } else if (L->op == CB_OP_SCALE) {
        cb_ref_scale_backward_filter((int)L->out.n, (int)L->out.c, (int)(L->out.h * L->out.w), x, dy, b->dw);
    } else if (L->op == CB_OP_LAYERNORM) {
        cb_ref_layernorm_backward((int)L->out.n, (int)L->out.c, (int)(L->out.h * L->out.w), L->p.ln.eps, x, b->w, dy, NULL,
                                  b->dw, b->db);
    }
}

static void add(cb_exec *e, float *dst, const float *src, size_t n) {
#pragma omp parallel for if (n > 65536)
    for (size_t i = 0; i < n; i++) dst[i] += src[i];
}

static void fill(cb_exec *e, float *dst, float v, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = v;
}

static void sgd(cb_exec *e, size_t n, float lr, float mom, float wd, float *w, const float *g, float *v) {
    cb_cpu_sgd_update(n, lr, mom, wd, w, g, v);
}

static double xent_forward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k) {
    return cb_ref_xent_forward(n, k, prob, labels);
}

static void xent_backward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k, float *dlogits) {
    cb_ref_xent_backward(n, k, prob, labels, dlogits);
}

static void softmax(cb_exec *e, const float *x, float *prob, int n, int k) { cb_cpu_softmax_forward(n, k, x, prob); }

#define CPU_BACKEND(NAME, INIT)                                                                                        \
    {.name = NAME, .device = false, .init = INIT, .destroy = destroy, .alloc = alloc, .release = release,            \
     .upload = copy, .download = copy, .timer_start = timer_start, .timer_stop = timer_stop, .supports = supports,    \
     .pool_relu_mask = pool_relu_mask, .concat_relu_mask = concat_relu_mask, .plan = plan, .forward = forward, .forward_epilogue = epilogue_forward, .backward_epilogue = backward_epilogue,  \
     .backward_data = backward_data,                                                                                  \
     .backward_filter = backward_filter, .add = add, .fill = fill, .sgd = sgd, .xent_forward = xent_forward,          \
     .xent_backward = xent_backward, .softmax = softmax}

const cb_backend cb_backend_cpu = CPU_BACKEND("cpu", init_cpu);
const cb_backend cb_backend_ref = CPU_BACKEND("ref", init_ref);
