// Static costs of each layer kind: parameters, FLOPs per direction, bytes. FLOPs count a
// multiply-add as two; elementwise epilogues (bias, batch norm, ReLU) are counted per element.
#include "convbench.h"

#include <stdbool.h>
#include <string.h>

// int64 arithmetic that remembers an overflow: sizes come from untrusted files, and a network
// whose totals do not fit is refused when it is built (cb_net_cost_fits), so every figure
// printed from these functions is exact.
static int64_t mul(bool *over, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) *over = true;
    return r;
}
static int64_t add(bool *over, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) *over = true;
    return r;
}

// Elements of state a layer keeps for its backward pass besides its output (bytes / 4).
// (Each term is one output, whose count times 4 fits int64: a sum of three cannot overflow.)
static int64_t saved_elems(const cb_layer *L) {
    int64_t out = cb_shape_count(L->out);
    int64_t s = 0;
    if (L->bn) s += out;                                        // pre-normalisation values
    if (L->op == CB_OP_POOL && !L->p.pool.avg) s += out;        // argmax (int32)
    if (L->op == CB_OP_DROPOUT || L->op == CB_OP_LRN) s += out; // mask, scale
    return s;
}

static bool layer_cost(const cb_net *net, int i, cb_cost *c) {
    bool over = false;
    const cb_layer *L = &net->layers[i];
    memset(c, 0, sizeof *c);
    int64_t out = cb_shape_count(L->out), in = cb_shape_count(L->in);
    double epi = 0; // per-output-element epilogue FLOPs
    switch (L->op) {
    case CB_OP_INPUT:
        break;
    case CB_OP_CONV: {
        const cb_window *w = &L->p.conv.win;
        double macs = (double)out * L->p.conv.cin * w->r * w->s;
        c->params = add(&over, mul(&over, mul(&over, (int64_t)w->r * w->s, L->p.conv.cin), L->p.conv.k),
                        L->p.conv.bias ? L->p.conv.k : 0);
        c->fwd_flops = 2 * macs;
        c->bwd_data_flops = 2 * macs;
        c->bwd_filter_flops = 2 * macs + (L->p.conv.bias ? (double)out : 0);
        epi = L->p.conv.bias ? 1 : 0;
        break;
    }
    case CB_OP_FC: {
        double macs = (double)L->in.n * L->in.c * L->p.fc.k;
        c->params = add(&over, mul(&over, L->in.c, L->p.fc.k), L->p.fc.bias ? L->p.fc.k : 0);
        c->fwd_flops = 2 * macs;
        c->bwd_data_flops = 2 * macs;
        c->bwd_filter_flops = 2 * macs + (L->p.fc.bias ? (double)out : 0);
        epi = L->p.fc.bias ? 1 : 0;
        break;
    }
    case CB_OP_POOL: {
        double win = (double)L->p.pool.win.r * L->p.pool.win.s;
        c->fwd_flops = (double)out * win;
        c->bwd_data_flops = L->p.pool.avg ? (double)out * win : (double)out;
        break;
    }
    case CB_OP_ADD:
        c->fwd_flops = (double)out * (L->nparents - 1);
        break;
    case CB_OP_SOFTMAX:
        c->fwd_flops = 5.0 * out; // max, subtract, exp, sum, divide
        c->bwd_data_flops = 2.0 * out;
        break;
    case CB_OP_LRN:
        c->fwd_flops = (double)out * (2 * L->p.lrn.size + 4);
        c->bwd_data_flops = (double)out * (2 * L->p.lrn.size + 6);
        break;
    case CB_OP_BATCHNORM:
        c->params = c->bn_params = mul(&over, 2, L->out.c);
        c->fwd_flops = 8.0 * out;
        c->bwd_data_flops = 8.0 * out;
        c->bwd_filter_flops = 4.0 * out;
        break;
    case CB_OP_ACT: // one operation per element, as Paleo counts a ReLU, whatever the function
    case CB_OP_DROPOUT:
        c->fwd_flops = (double)out;
        c->bwd_data_flops = (double)out;
        break;
    case CB_OP_MUL: // one product per output; backward: one per input element (and the pixel sums)
        c->fwd_flops = (double)out;
        c->bwd_data_flops = 2.0 * out;
        break;
    case CB_OP_SCALE:
        c->params = L->out.c;
        c->fwd_flops = (double)out;
        c->bwd_data_flops = (double)out;
        c->bwd_filter_flops = 2.0 * out;
        break;
    case CB_OP_LAYERNORM: // mean, variance, normalise, scale and shift per element
        c->params = 2 * L->out.c;
        c->fwd_flops = 8.0 * out;
        c->bwd_data_flops = 10.0 * out;
        c->bwd_filter_flops = 4.0 * out;
        break;
    case CB_OP_CONCAT:
    case CB_OP_RESHAPE:
    case CB_OP_COUNT:
        break;
    }
    if (L->bn) {
        c->params = add(&over, c->params, mul(&over, 2, L->out.c));
        c->bn_params = add(&over, c->bn_params, mul(&over, 2, L->out.c));
        epi += 8;
        c->bwd_data_flops += 8.0 * out;
        c->bwd_filter_flops += 4.0 * out;
    }
    if (L->act != CB_ACT_NONE) {
        epi += 1;
        c->bwd_data_flops += (double)out;
    }
    c->fwd_flops += epi * (double)out;
    c->weight_bytes = mul(&over, 4, c->params);
    mul(&over, 16, c->params); // weights, gradients, momentum: the engine's arenas stay in int64
    c->out_elems = out;
    c->fwd_bytes = 4.0 * ((double)(L->op == CB_OP_INPUT ? 0 : (double)in * (L->nparents ? L->nparents : 1)) +
                          (double)c->params + (double)out);
    return !over;
}

void cb_layer_cost(const cb_net *net, int i, cb_cost *c) { layer_cost(net, i, c); }

// the first layer whose cost or whose share of the totals overflows; -1 when none does
static int net_cost(const cb_net *net, cb_net_cost *t) {
    memset(t, 0, sizeof *t);
    bool over = false;
    int first = -1;
    int64_t act = 0, saved = 0;
    for (int i = 0; i < net->nlayers; i++) {
        cb_cost c;
        if (!layer_cost(net, i, &c)) over = true;
        t->total.params = add(&over, t->total.params, c.params);
        t->total.bn_params = add(&over, t->total.bn_params, c.bn_params);
        t->total.weight_bytes = add(&over, t->total.weight_bytes, c.weight_bytes);
        t->total.out_elems = add(&over, t->total.out_elems, c.out_elems);
        t->total.fwd_flops += c.fwd_flops;
        t->total.bwd_data_flops += c.bwd_data_flops;
        t->total.bwd_filter_flops += c.bwd_filter_flops;
        t->total.fwd_bytes += c.fwd_bytes;
        act = add(&over, act, c.out_elems);
        saved = add(&over, saved, saved_elems(&net->layers[i]));
        // weights, their gradients, momentum; every output and its gradient; state saved for backward
        t->activation_bytes = mul(&over, 4, act);
        t->train_bytes = add(&over, mul(&over, 3, t->total.weight_bytes), mul(&over, 4, add(&over, mul(&over, 2, act), saved)));
        if (over && first < 0) first = i;
    }
    return first;
}

void cb_net_cost_total(const cb_net *net, cb_net_cost *t) { net_cost(net, t); }

int cb_net_cost_overflow(const cb_net *net) {
    cb_net_cost t;
    return net_cost(net, &t);
}
