// Activation storage other than fp32 NCHW (src/storage/storage.h): state, weight copies, the
// layers computed on the storage, and the host / criterion boundary.
#include "storage/storage.h"
#include "core/net.h"
#include "cuda/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cb_store_fmt_of(const cb_exec_opts *o) {
    return (o->layout == CB_LAYOUT_NHWC ? CB_FMT_NHWC : 0) | (o->precision == CB_PREC_BF16 ? CB_FMT_BF16 : 0);
}
const char *cb_store_fmt_label(int fmt) {
    static const char *names[] = {"fp32 NCHW", "fp32 NHWC", "bf16 NCHW", "bf16 NHWC"};
    return names[fmt & 3];
}

// Under NHWC, a convolution whose input channels are not a multiple of 16 bytes' worth (the C = 3
// of a first layer) may run on a copy of its input with zero channels added, its filters with the
// same zero channels (grouped ones stay as they are): cuDNN's legacy tensor-core kernels want
// aligned channels (VGG-A b64 bf16 NHWC conv1 took 1.95 ms forward and 2.74 ms backward-filter on
// C = 3 before). In tf32 the graph API's engines take C = 3 as it is, faster and with less
// workspace: on the H200 (2026-11-27, dev/gpu-epilogue.sh, docs/results/2026-11-27-h200-epilogue/
// ab_calls1_3.md) VGG-A b64 tf32's step went from 15.73 to 15.15 ms unpadded, its workspace from 834
// to 37 MiB. In bf16 unpadded gained at most 0.13 ms (ResNet-50 b64) and cost workspace (ResNet-50
// 8 -> 55 MiB, VGG-A 16 -> 51: two cells' planned peaks went above PyTorch's); with the legacy
// algorithms alone ResNet-50 b64 bf16 was 0.28 ms slower unpadded. In fp32 under the graph race
// (since 2026-11-28) unpadded won every cell measured (2026-11-28-cpad, dev/gpu-cpad.sh, auto, fp32
// NHWC, ms per step padded/unpadded): the Inception-like random network seed 3 b128 10.12/8.06,
// seed 2 b192 68.39/53.55, the ResNet-like seed 2 b96 17.03/15.30, GoogLeNet b128 37.40/36.27, and
// less memory in each. So the padding stays only in bf16 (cb_conv_cpad_default) and where the graph
// race is off. d->cpad, set by the cudnn backend (CONVBENCH_DNN_CPAD=on|off forces it).
int64_t cb_store_conv_cpad(const cb_exec *e, const cb_layer *L) {
    int64_t c = L->p.conv.cin;
    if (!cb_store_nhwc(e) || !cb_store_of(e)->cpad || L->p.conv.groups != 1) return c;
    return cb_conv_cpad_to(c, cb_store_bf16(e));
}

void *cb_store_alloc(cb_exec *e, size_t bytes) {
    void *p = NULL;
    if (bytes && !(p = cb_cuda_alloc(e, bytes))) return NULL; // (its error kept for cb_cuda_alloc_why)
    e->allocated += bytes;
    return p;
}


// the buffers of a storage other than fp32 NCHW, sized from the network's shapes
static cb_status alloc_buffers(cb_exec *e, cb_error *err) {
    cb_store *d = cb_store_of(e);
    const cb_net *net = e->net;
    const cb_layer *last = &net->layers[net->nlayers - 1];
    // the stage moves whole examples: a 16 MiB one (or the whole of the input and the last
    // output, if smaller) in as few copies as that takes, but never less than one example of any layer
    int64_t stage = cb_shape_count(net->layers[0].out), maxw = 1;
    if (cb_shape_count(last->out) > stage) stage = cb_shape_count(last->out);
    if (stage > ((int64_t)1 << 22)) stage = (int64_t)1 << 22;
    for (int i = 0; i < net->nlayers; i++) {
        const cb_layer *L = &net->layers[i];
        int64_t per = L->out.c * L->out.h * L->out.w, nw = 0;
        if (per > stage) stage = per;
        if (L->op == CB_OP_CONV) nw = (int64_t)L->p.conv.k * cb_store_conv_cpad(e, L) * L->p.conv.win.r * L->p.conv.win.s;
        if (nw > maxw) maxw = nw; // (an FC layer's weight gradient goes straight to the fp32 masters: fc_blas)
    }
    d->stage_elems = stage;
    d->stage = cb_store_alloc(e, (size_t)stage * 4);
    d->wgrad = e->opts.train ? cb_store_alloc(e, (size_t)maxw * cb_fmt_bytes(d->fmt)) : NULL;
    d->crit = cb_store_alloc(e, (size_t)cb_shape_count(last->out) * 4);
    if (!d->stage || (e->opts.train && !d->wgrad) || !d->crit)
        return cb_fail(err, CB_STATUS_NOMEM, net->path, NULL, "backend %s: out of device memory for the %s buffers",
                       e->be->name, cb_store_fmt_label(cb_store_of(e)->fmt));
    return CB_OK;
}


// The weights of conv or FC layer i as cuDNN / cuBLAS read them: b->w itself in fp32 NCHW, else
// the layer's copy in storage format. The arena's copy (training) is made in each forward pass and
// read again in the backward that follows it, or made again there into b->wcopy_bwd where the engine
// planned so; any other call (a plan's race between steps) makes it again. The backend's own copy
// (inference, CONVBENCH_WEIGHT_COPY=keep) is converted again when the parameters changed.
const void *cb_store_weights(cb_exec *e, int i) {
    cb_lbuf *b = &e->lb[i];
    cb_store_layer *l = cb_store_layer_of(e, i);
    if (cb_store_native(e) || !l->w) return b->w; // (an FC layer on fp32 storage reads the masters: fc_input)
    if (l->step) {
        int k = e->in_backward && b->wcopy_bwd ? 1 : 0;
        void *w = k ? b->wcopy_bwd : l->w;
        if (!cb_exec_copy_holds(e, l->wpass[k], l->wfwd[k])) {
            cb_fmt_convert_pad(l->wk, l->wc, l->wcp, l->wr, l->ws, b->w, 0, w, cb_store_of(e)->fmt);
            l->wpass[k] = e->pass, l->wfwd[k] = !e->in_backward;
        }
        return w;
    }
    if (l->wver != e->param_version) {
        cb_fmt_convert_pad(l->wk, l->wc, l->wcp, l->wr, l->ws, b->w, 0, l->w, cb_store_of(e)->fmt);
        l->wver = e->param_version;
    }
    return l->w;
}
// where the weight gradient is computed, and its conversion to the fp32 KCRS master gradient
void *cb_store_wgrad(cb_exec *e, int i) { return cb_store_native(e) ? (void *)e->lb[i].dw : cb_store_of(e)->wgrad; }
void cb_store_finish_wgrad(cb_exec *e, int i) {
    cb_store_layer *l = cb_store_layer_of(e, i);
    if (!cb_store_native(e)) cb_fmt_convert_pad(l->wk, l->wcp, l->wc, l->wr, l->ws, cb_store_of(e)->wgrad, cb_store_of(e)->fmt, e->lb[i].dw, 0);
}

// conv / FC layer i's weight dims as its storage-format copy holds them (false: it has none)
static bool weight_dims(const cb_exec *e, const cb_layer *L, cb_store_layer *l) {
    if (L->op == CB_OP_CONV) {
        l->wk = L->p.conv.k, l->wc = L->p.conv.cin, l->wr = L->p.conv.win.r, l->ws = L->p.conv.win.s;
        l->wcp = cb_store_conv_cpad(e, L);
        return true;
    }
    // FC: the masters' (K, C*H*W) as they are (fc_input turns the input to match); fp32 storage reads them
    l->wk = L->p.fc.k, l->wc = l->wcp = L->in.c, l->wr = l->ws = 1;
    return L->op == CB_OP_FC && cb_store_bf16(e);
}

size_t cb_store_weight_copy(const cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    cb_store *d = cb_store_of(e);
    cb_store_layer l;
    // (a plan without an update: its weights never change, and one conversion serves every step)
    bool keep = d->weight_copy == WCOPY_KEEP || (d->weight_copy == WCOPY_DEFAULT && e->opts.no_update);
    if (d->fmt == 0 || !e->opts.train || keep || (L->op != CB_OP_CONV && L->op != CB_OP_FC) || !weight_dims(e, L, &l)) return 0;
    return (size_t)(l.wk * l.wcp * l.wr * l.ws) * cb_fmt_bytes(d->fmt);
}

// conv / FC layer i (fmt != 0): its storage-format weight copy, the arena's (b->wcopy) or its own
cb_status cb_store_plan_weights(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_store_layer *l = cb_store_layer_of(e, i);
    if (!weight_dims(e, L, l) || l->w) return CB_OK; // (none; or planned already)
    size_t bytes = (size_t)(l->wk * l->wcp * l->wr * l->ws) * cb_fmt_bytes(cb_store_of(e)->fmt);
    if (e->lb[i].wcopy && cb_store_weight_copy(e, i) == bytes) {
        l->w = e->lb[i].wcopy, l->step = true; // (made now, for the plan)
        l->wpass[0] = l->wpass[1] = UINT64_MAX, l->wfwd[0] = l->wfwd[1] = false;
        cb_store_weights(e, i);
        return CB_OK;
    }
    l->w = cb_store_alloc(e, bytes);
    if (!l->w) {
        char what[64];
        snprintf(what, sizeof what, "its %s weights", cb_store_fmt_label(cb_store_of(e)->fmt));
        return cb_cuda_nomem(e, err, L->name, what);
    }
    cb_store_weights(e, i);
    return CB_OK;
}

// y (N, K, H, W) of conv / FC layer i in the storage += b (K), and the layer's ReLU in the same
// pass when one follows directly (no batch norm between): then epilogue_forward skips it
void cb_store_bias_act(cb_exec *e, int i, const float *bias, void *y) {
    const cb_layer *L = &e->net->layers[i];
    cb_shape s = L->out;
    // the layer's activation in the same pass unless a batch norm comes between; an activation
    // whose gradient reads its input saves it (b->act_in, training) as the epilogue would
    cb_act act = L->bn ? CB_ACT_NONE : L->act;
    void *xsave = act != CB_ACT_NONE && act != CB_ACT_RELU ? e->lb[i].act_in : NULL;
    if (cb_store_nhwc(e)) cb_fmt_bias_act_fn(s.n * s.h * s.w, (int)s.c, 1, bias, y, act, xsave, cb_store_bf16(e));
    else cb_fmt_bias_act_fn(s.n, (int)s.c, s.h * s.w, bias, y, act, xsave, cb_store_bf16(e));
    ((cb_cuda_state *)e->state)->fused_act[i] = act != CB_ACT_NONE;
}
// db = sum of dy over all but the channels, on every storage (fp32 NCHW too: cuDNN's
// cudnnConvolutionBackwardBias reads 36-120 GB/s where the planes are large and k small)
void cb_store_bias_grad(cb_exec *e, int i, const void *dy, float *db) {
    if (cb_cuda_bias_taken(e, i)) return; // the backward epilogue's, with the activation's gradient
    cb_shape s = e->net->layers[i].out;
    float *part = ((cb_cuda_state *)e->state)->bias_part;
    if (cb_store_nhwc(e)) cb_fmt_bias_grad(s.n * s.h * s.w, (int)s.c, 1, dy, cb_store_bf16(e), db, part);
    else cb_fmt_bias_grad(s.n, (int)s.c, s.h * s.w, dy, cb_store_bf16(e), db, part);
}


// concat, sum, dropout, reshape of layer i on the storage (fmt != 0): the cuda backend's own ops,
// with NHWC's channel blocks (rows of N*H*W pixels) and bf16 elements
void cb_store_forward_op(cb_exec *e, int i, bool train) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const void *x = e->lb[L->parents[0]].y;
    void *out = cb_exec_op_out(e, i);
    size_t n = (size_t)cb_shape_count(L->out), es = e->act_bytes;
    int64_t hw = L->out.h * L->out.w;
    switch (L->op) {
    case CB_OP_CONCAT: {
        int64_t off = 0, cs[8];
        const void *srcs[8];
        for (int j = 0; j < L->nparents && j < 8; j++) cs[j] = e->net->layers[L->parents[j]].out.c, srcs[j] = e->lb[L->parents[j]].y;
        if (cb_store_nhwc(e) && L->nparents <= 8 && cb_fmt_concat_gather(L->out.n * hw, L->out.c, L->nparents, cs, srcs, es, out)) break;
        for (int j = 0; j < L->nparents; j++) {
            const cb_layer *P = &e->net->layers[L->parents[j]];
            if (cb_store_nhwc(e)) cb_fmt_concat_copy(L->out.n * hw, L->out.c, P->out.c, off, 1, es, out, e->lb[L->parents[j]].y, 0);
            else cb_fmt_concat_copy(L->out.n, L->out.c, P->out.c, off, hw, es, out, e->lb[L->parents[j]].y, 0);
            off += P->out.c;
        }
        break;
    }
    case CB_OP_ADD: { // one pass for the usual two parents, the ReLU in the last one (the epilogue skips it)
        bool relu = L->act == CB_ACT_RELU && !L->bn;
        if (L->nparents == 1) cudaMemcpyAsync(out, x, n * es, cudaMemcpyDeviceToDevice, 0), relu = false;
        for (int j = 1; j < L->nparents; j++)
            cb_fmt_add_act(n, out, j == 1 ? x : out, e->lb[L->parents[j]].y, relu && j == L->nparents - 1, cb_store_bf16(e));
        ((cb_cuda_state *)e->state)->fused_act[i] = relu;
        break;
    }
    case CB_OP_DROPOUT:
        if (train) cb_fmt_dropout_forward(n, L->p.dropout.keep, cb_cuda_dropout_seed(e, i), ((cb_cuda_state *)e->state)->step, x, b->aux, out,
                               cb_store_bf16(e));
        else cudaMemcpyAsync(out, x, n * es, cudaMemcpyDeviceToDevice, 0);
        break;
    case CB_OP_RESHAPE:
        cudaMemcpyAsync(out, x, n * es, cudaMemcpyDeviceToDevice, 0);
        break;
    default:
        break;
    }
}


// the gradients of concat, sum, dropout, relu, softmax (passed through) and reshape on the storage
void cb_store_backward_data(cb_exec *e, int i, int slot, void *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    const void *dy = cb_exec_op_grad(e, i);
    size_t nin = (size_t)cb_shape_count(e->net->layers[L->parents[slot]].out), es = e->act_bytes;
    switch (L->op) {
    case CB_OP_CONCAT: {
        int64_t hw = L->out.h * L->out.w, off = 0, c = e->net->layers[L->parents[slot]].out.c;
        for (int j = 0; j < slot; j++) off += e->net->layers[L->parents[j]].out.c;
        if (e->lb[L->parents[slot]].relu_by_concat) { // (that input's ReLU: its values, this output's slice, above 0)
            bool nhwc = cb_store_nhwc(e);
            cb_fmt_concat_slice_masked(nhwc ? L->out.n * hw : L->out.n, L->out.c, c, off, nhwc ? 1 : hw, cb_store_bf16(e), dx, dy, b->y);
        } else if (cb_store_nhwc(e)) cb_fmt_concat_copy(L->out.n * hw, L->out.c, c, off, 1, es, dx, dy, 1);
        else cb_fmt_concat_copy(L->out.n, L->out.c, c, off, hw, es, dx, dy, 1);
        break;
    }
    case CB_OP_DROPOUT:
        cb_fmt_dropout_backward(nin, b->aux, dy, dx, cb_store_bf16(e));
        break;
    case CB_OP_ACT:
        cb_fmt_act_backward(nin, L->p.act.fn, e->lb[L->parents[slot]].y, b->y, dy, dx, cb_store_bf16(e));
        break;
    case CB_OP_ADD:
    case CB_OP_SOFTMAX:
    case CB_OP_RESHAPE:
        cudaMemcpyAsync(dx, dy, nin * es, cudaMemcpyDeviceToDevice, 0);
        break;
    default:
        break;
    }
}


// ---- the boundary: host fp32 NCHW and the criterion's fp32 (N, K) against the storage ----------
// Per-example blocks are contiguous in both layouts, so a tensor moves through the fp32 stage in
// chunks of whole examples.
void cb_store_act_upload(cb_exec *e, int layer, void *dst, const float *host) {
    cb_shape s = e->net->layers[layer].out;
    cb_store *d = cb_store_of(e);
    if (cb_store_native(e)) {
        cb_cuda_upload(e, dst, host, (size_t)cb_shape_count(s) * 4);
        return;
    }
    int64_t per = s.c * s.h * s.w, chunk = d->stage_elems / per;
    for (int64_t n0 = 0; n0 < s.n; n0 += chunk) {
        int64_t m = s.n - n0 < chunk ? s.n - n0 : chunk;
        cudaMemcpy(d->stage, host + n0 * per, (size_t)(m * per) * 4, cudaMemcpyHostToDevice);
        cb_fmt_convert(m, s.c, s.h, s.w, d->stage, 0, (char *)dst + (size_t)(n0 * per) * e->act_bytes, d->fmt);
    }
}
void cb_store_act_download(cb_exec *e, int layer, float *host, const void *src) {
    cb_shape s = e->net->layers[layer].out;
    cb_store *d = cb_store_of(e);
    if (cb_store_native(e)) {
        cb_cuda_download(e, host, src, (size_t)cb_shape_count(s) * 4);
        return;
    }
    int64_t per = s.c * s.h * s.w, chunk = d->stage_elems / per;
    for (int64_t n0 = 0; n0 < s.n; n0 += chunk) {
        int64_t m = s.n - n0 < chunk ? s.n - n0 : chunk;
        cb_fmt_convert(m, s.c, s.h, s.w, (const char *)src + (size_t)(n0 * per) * e->act_bytes, d->fmt, d->stage, 0);
        cudaMemcpy(host + n0 * per, d->stage, (size_t)(m * per) * 4, cudaMemcpyDeviceToHost);
    }
}
void cb_store_act_fill(cb_exec *e, void *dst, float v, size_t n) {
    if (cb_store_native(e)) cb_cuda_fill_(e, dst, v, n);
    else cb_fmt_fill(n, dst, v, cb_store_bf16(e));
}
void cb_store_act_add(cb_exec *e, float *dst, const float *src, size_t n) {
    if (cb_store_native(e)) cb_cuda_add_(e, dst, src, n);
    else cb_fmt_add(n, dst, src, cb_store_bf16(e));
}

// The criterion computes in fp32 on (N, K) logits or probabilities, K in NCHW order (c, h, w) as
// the reference's; the engine's prob buffer is fp32 NCHW. Under another storage the last layer's
// output converts (with its shape: a spatial last layer under NHWC reorders) on the way in and the
// gradient on the way out. x is the last layer's y; prob is e->prob or, after a Softmax layer,
// that layer's y.
void cb_store_crit_softmax(cb_exec *e, const float *x, float *prob, int n, int k) {
    if (!cb_store_native(e)) {
        cb_shape s = e->net->layers[e->net->nlayers - 1].out;
        cb_fmt_convert(s.n, s.c, s.h, s.w, x, cb_store_of(e)->fmt, prob, 0);
        cb_cuda_softmax(n, k, prob, prob); // in place: each element is read before the same thread writes it
    } else cb_cuda_softmax(n, k, x, prob);
}
static const float *crit_prob(cb_exec *e, const float *prob, int n, int k) {
    if (cb_store_native(e) || prob == e->prob) return prob;
    cb_shape s = e->net->layers[e->net->nlayers - 1].out;
    cb_fmt_convert(s.n, s.c, s.h, s.w, prob, cb_store_of(e)->fmt, cb_store_of(e)->crit, 0);
    return cb_store_of(e)->crit;
}
double cb_store_crit_xent_forward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k) {
    return cb_cuda_xent_forward_(e, crit_prob(e, prob, n, k), labels, n, k);
}
void cb_store_crit_xent_backward(cb_exec *e, const float *prob, const int32_t *labels, int n, int k, float *dlogits) {
    if (cb_store_native(e)) {
        cb_cuda_xent_backward(n, k, prob, labels, dlogits);
        return;
    }
    // fp32 NCHW gradient in crit (in place when prob was converted there: elementwise), then to the storage
    cb_shape s = e->net->layers[e->net->nlayers - 1].out;
    cb_cuda_xent_backward(n, k, crit_prob(e, prob, n, k), labels, cb_store_of(e)->crit);
    cb_fmt_convert(s.n, s.c, s.h, s.w, cb_store_of(e)->crit, 0, dlogits, cb_store_of(e)->fmt);
}


cb_status cb_store_init(cb_exec *e, bool cpad, cb_error *err) {
    cb_cuda_state *s = e->state;
    cb_store *d = cb_xcalloc(1, sizeof *d);
    s->store = d;
    d->fmt = cb_store_fmt_of(&e->opts);
    d->cpad = cpad;
    d->layer = cb_xcalloc((size_t)e->net->nlayers, sizeof *d->layer);
    const char *wc = getenv("CONVBENCH_WEIGHT_COPY");
    if (wc && *wc && strcmp(wc, "plan") && strcmp(wc, "step") && strcmp(wc, "remake") && strcmp(wc, "keep"))
        return cb_fail(err, CB_STATUS_ARG, "CONVBENCH_WEIGHT_COPY", NULL, "'%s' is not plan, step, remake or keep", wc);
    d->weight_copy = !wc || !*wc ? WCOPY_DEFAULT : !strcmp(wc, "keep") ? WCOPY_KEEP : WCOPY_ARENA;
    e->act_bytes = cb_fmt_bytes(d->fmt);
    return d->fmt == 0 ? CB_OK : alloc_buffers(e, err);
}

void cb_store_destroy(cb_exec *e) {
    cb_cuda_state *s = e->state;
    cb_store *d = s ? s->store : NULL;
    if (!d) return;
    for (int i = 0; i < e->net->nlayers; i++)
        if (!d->layer[i].step) cudaFree(d->layer[i].w); // (a step's copy lies in the engine's arena)
    cudaFree(d->stage);
    cudaFree(d->crit);
    cudaFree(d->wgrad);
    free(d->layer);
    free(d);
    s->store = NULL;
}
