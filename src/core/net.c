// The network graph: parents resolved to indices, topological order, shape inference.
#include "core/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CB_NETS_DIR
#define CB_NETS_DIR "nets"
#endif

static const char *STATUS_NAMES[] = {"ok", "io", "parse", "shape", "nomem", "unsupported", "arg", "device"};
_Static_assert(sizeof STATUS_NAMES / sizeof STATUS_NAMES[0] == CB_STATUS_COUNT, "a status lacks a name");

static const char *OP_NAMES[] = {"Input",   "Convolution", "Pooling", "InnerProduct", "Concatenate", "Elementwise",
                                 "Dropout", "Softmax",     "Reshape", "LRN",          "BatchNorm",   "Activation",
                                 "Elementwise", "LayerNorm", "Scale"};
_Static_assert(sizeof OP_NAMES / sizeof OP_NAMES[0] == CB_OP_COUNT, "an op lacks a name");

const char *cb_status_name(cb_status s) { return (unsigned)s < CB_STATUS_COUNT ? STATUS_NAMES[s] : "?"; }
const char *cb_op_name(cb_op op) { return (unsigned)op < CB_OP_COUNT ? OP_NAMES[op] : "?"; }

cb_status cb_fail(cb_error *err, cb_status st, const char *source, const char *layer, const char *fmt, ...) {
    if (!err) return st;
    err->status = st;
    err->reason = CB_REASON_NONE;
    int n = 0;
    if (source) n = snprintf(err->msg, sizeof err->msg, "%s: ", source);
    if (layer && n >= 0 && (size_t)n < sizeof err->msg) n += snprintf(err->msg + n, sizeof err->msg - (size_t)n, "layer '%s': ", layer);
    if (n >= 0 && (size_t)n < sizeof err->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    for (char *c = err->msg; *c; c++) // one line, whatever names a damaged file holds
        if ((unsigned char)*c < 32) *c = '?';
    return st;
}

cb_reason cb_decline(cb_error *err, cb_reason r, const char *source, const char *layer, const char *fmt, ...) {
    if (!err) return r;
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    cb_fail(err, CB_STATUS_UNSUPPORTED, source, layer, "%s [unsupported: %s]", what, cb_reason_name(r));
    err->reason = r;
    return r;
}

char *cb_read_text(const char *path, cb_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        cb_fail(err, CB_STATUS_IO, path, NULL, "cannot open");
        return NULL;
    }
    char *buf = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        cb_fail(err, CB_STATUS_IO, path, NULL, "cannot read");
        return NULL;
    }
    buf[n] = 0;
    fclose(f);
    return buf;
}

void *cb_xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "convbench: out of host memory (%zu x %zu bytes)\n", n, size);
        abort();
    }
    return p;
}

char *cb_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = cb_xcalloc(n, 1);
    memcpy(d, s, n);
    return d;
}

const char *cb_nets_path(void) {
    const char *e = getenv("CONVBENCH_NETS");
    return e && *e ? e : "nets:" CB_NETS_DIR;
}

void cb_net_free(cb_net *net) {
    if (!net) return;
    for (int i = 0; i < net->nlayers; i++) {
        free(net->layers[i].name);
        free(net->layers[i].parents);
    }
    free(net->layers);
    cb_net_weights_free(net->weights);
    free(net->name);
    free(net->path);
    free(net);
}

int cb_net_find(const cb_net *net, const char *name) {
    for (int i = 0; i < net->nlayers; i++)
        if (strcmp(net->layers[i].name, name) == 0) return i;
    return -1;
}

int64_t cb_net_batch(const cb_net *net) { return net->layers[0].out.n; }

static void free_raw(cb_layer *layers, cb_raw_parents *parents, int n) {
    for (int i = 0; i < n; i++) {
        free(layers[i].name);
        free(layers[i].parents);
        for (int j = 0; j < parents[i].n; j++) free(parents[i].names[j]);
        free(parents[i].names);
    }
    free(layers);
    free(parents);
}

cb_net *cb_net_build(char *name, const char *source, cb_layer *layers, cb_raw_parents *parents, int n, cb_error *err) {
    cb_net *net = NULL;
    int *order = NULL, *pos = NULL, *indeg = NULL;
    int ninputs = 0;
    for (int i = 0; i < n; i++) {
        if (layers[i].op == CB_OP_INPUT) {
            ninputs++;
            if (parents[i].n) {
                cb_fail(err, CB_STATUS_PARSE, source, layers[i].name, "an Input layer has no parents");
                goto fail;
            }
        } else if (parents[i].n == 0) {
            cb_fail(err, CB_STATUS_PARSE, source, layers[i].name, "no parents (only the Input layer has none)");
            goto fail;
        }
    }
    if (ninputs != 1) {
        cb_fail(err, CB_STATUS_PARSE, source, NULL, "%s Input layer (exactly one is needed)", ninputs ? "more than one" : "no");
        goto fail;
    }
    // resolve names to file indices
    for (int i = 0; i < n; i++) {
        layers[i].parents = cb_xcalloc((size_t)parents[i].n, sizeof(int));
        layers[i].nparents = parents[i].n;
        for (int j = 0; j < parents[i].n; j++) {
            int k = -1;
            for (int m = 0; m < n; m++)
                if (strcmp(layers[m].name, parents[i].names[j]) == 0) k = m;
            if (k < 0) {
                cb_fail(err, CB_STATUS_PARSE, source, layers[i].name, "unknown parent '%s'", parents[i].names[j]);
                goto fail;
            }
            if (k == i) {
                cb_fail(err, CB_STATUS_PARSE, source, layers[i].name, "a layer cannot be its own parent (cycle)");
                goto fail;
            }
            layers[i].parents[j] = k;
        }
    }
    // Kahn's algorithm, taking the earliest ready layer in file order each step
    order = cb_xcalloc((size_t)n, sizeof(int));
    pos = cb_xcalloc((size_t)n, sizeof(int));
    indeg = cb_xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) indeg[i] = layers[i].nparents;
    bool *done = cb_xcalloc((size_t)n, sizeof(bool));
    for (int step = 0; step < n; step++) {
        int pick = -1;
        for (int i = 0; i < n && pick < 0; i++)
            if (!done[i] && indeg[i] == 0) pick = i;
        if (pick < 0) {
            int any = 0;
            for (int i = 0; i < n; i++)
                if (!done[i]) { any = i; break; }
            cb_fail(err, CB_STATUS_PARSE, source, layers[any].name, "cyclic parents: the layers cannot be ordered");
            free(done);
            goto fail;
        }
        done[pick] = true;
        pos[pick] = step;
        order[step] = pick;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < layers[i].nparents; j++)
                if (layers[i].parents[j] == pick) indeg[i]--;
    }
    free(done);
    net = cb_xcalloc(1, sizeof *net);
    net->name = name;
    name = NULL;
    net->path = cb_strdup(source);
    net->nlayers = n;
    net->layers = cb_xcalloc((size_t)n, sizeof(cb_layer));
    for (int s = 0; s < n; s++) {
        net->layers[s] = layers[order[s]];
        for (int j = 0; j < net->layers[s].nparents; j++) net->layers[s].parents[j] = pos[net->layers[s].parents[j]];
        for (int j = 0; j < parents[order[s]].n; j++) free(parents[order[s]].names[j]);
        free(parents[order[s]].names);
    }
    for (int s = 0; s < n; s++)
        for (int j = 0; j < net->layers[s].nparents; j++) net->layers[net->layers[s].parents[j]].nchildren++;
    free(layers);
    free(parents);
    free(order);
    free(pos);
    free(indeg);
    if (cb_net_infer(net, err) != CB_OK) {
        cb_net_free(net);
        return NULL;
    }
    return net;
fail:
    free(order);
    free(pos);
    free(indeg);
    free(name);
    free_raw(layers, parents, n);
    return NULL;
}

// ---- shape inference --------------------------------------------------------------------------

static bool mul_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }

static bool shape_ok(cb_shape s) {
    int64_t t;
    return mul_ok(s.n, s.c, &t) && mul_ok(t, s.h, &t) && mul_ok(t, s.w, &t) && mul_ok(t, 4, &t);
}

// Output extent and pads along one axis, TensorFlow's rules (Paleo's for explicit pads).
static bool window_axis(const cb_net *net, const cb_layer *L, const char *axis, cb_pad_mode mode, int64_t in, int k,
                        int stride, int *pad_lo, int *pad_hi, int64_t *out, cb_error *err) {
    int64_t o;
    if (mode == CB_PAD_VALID) {
        if (in < k) {
            cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "kernel %s %d is larger than the input's %lld (VALID padding)",
                    axis, k, (long long)in);
            return false;
        }
        o = (in - k) / stride + 1; // = ceil((in - k + 1) / stride)
        *pad_lo = *pad_hi = 0;
    } else if (mode == CB_PAD_SAME) {
        o = (in + stride - 1) / stride;
        int64_t total = (o - 1) * stride + k - in;
        if (total < 0) total = 0;
        *pad_lo = (int)(total / 2);
        *pad_hi = (int)(total - total / 2);
    } else { // explicit: the trailing pad as given ([p, p] gives it equal to the leading one)
        if (in + (int64_t)*pad_lo + *pad_hi < k) {
            cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "kernel %s %d is larger than the padded input's %lld", axis, k,
                    (long long)(in + (int64_t)*pad_lo + *pad_hi));
            return false;
        }
        o = (in + (int64_t)*pad_lo + *pad_hi - k) / stride + 1;
        *pad_hi = (int)((o - 1) * stride + k - in - *pad_lo); // what the last window actually covers
        if (*pad_hi < 0) *pad_hi = 0;
        if (*pad_lo >= k) {
            cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "padding %s %d is not smaller than the kernel's %d", axis, *pad_lo, k);
            return false;
        }
    }
    *out = o;
    return true;
}

// dil_h, dil_w: the dilation of a convolution's taps (1 for pooling); the window spans (r-1)*dil+1
static bool window_shape(const cb_net *net, const cb_layer *L, cb_window *w, int dil_h, int dil_w, cb_shape in, int64_t *p,
                         int64_t *q, cb_error *err) {
    if (in.rank != 4) {
        cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "needs a 4-d input [N, H, W, C], got a 2-d one");
        return false;
    }
    int er = (w->r - 1) * (dil_h > 1 ? dil_h : 1) + 1, es = (w->s - 1) * (dil_w > 1 ? dil_w : 1) + 1;
    return window_axis(net, L, "height", w->mode, in.h, er, w->stride_h, &w->pad_top, &w->pad_bottom, p, err) &&
           window_axis(net, L, "width", w->mode, in.w, es, w->stride_w, &w->pad_left, &w->pad_right, q, err);
}

static cb_status infer_one(cb_net *net, int i, cb_error *err) {
    cb_layer *L = &net->layers[i];
    if (L->op == CB_OP_INPUT) return CB_OK;
    cb_shape in = net->layers[L->parents[0]].out;
    L->in = in;
    cb_shape out = in;
    int64_t p, q;
    switch (L->op) {
    case CB_OP_CONV: {
        int g = L->p.conv.groups;
        if (in.rank != 4) return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "needs a 4-d input [N, H, W, C], got a 2-d one");
        if (L->p.conv.cin == -1 || (i > 0 && L->p.conv.cin <= 0)) L->p.conv.cin = (int)(in.c / g);
        if ((int64_t)L->p.conv.cin * g != in.c)
            return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "filter expects %d input channels%s but the input has %lld",
                           L->p.conv.cin * g, g > 1 ? " (over all groups)" : "", (long long)in.c);
        if (L->p.conv.k % g)
            return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "%d filters do not divide into %d groups", L->p.conv.k, g);
        if (!window_shape(net, L, &L->p.conv.win, L->p.conv.dil_h, L->p.conv.dil_w, in, &p, &q, err)) return err->status;
        out = (cb_shape){4, in.n, L->p.conv.k, p, q};
        break;
    }
    case CB_OP_POOL:
        if (L->p.pool.global && in.rank == 4) { // the whole input, again after a new batch or input size
            cb_window *w = &L->p.pool.win;
            *w = (cb_window){.r = (int)in.h, .s = (int)in.w, .stride_h = 1, .stride_w = 1, .mode = CB_PAD_VALID};
        }
        if (!window_shape(net, L, &L->p.pool.win, 1, 1, in, &p, &q, err)) return err->status;
        out = (cb_shape){4, in.n, in.c, p, q};
        break;
    case CB_OP_FC:
        L->in = (cb_shape){2, in.n, in.c * in.h * in.w, 1, 1};
        out = (cb_shape){2, in.n, L->p.fc.k, 1, 1};
        break;
    case CB_OP_CONCAT: {
        int rank = in.rank, d = L->p.concat.dim;
        if (d < 0) d += rank;
        if (d < 0 || d >= rank)
            return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "Concatenate on dimension %d, but the inputs have %d",
                           L->p.concat.dim, rank);
        // NHWC dimension -> our field: 0 n, 1 h, 2 w, 3 c (rank 2: 0 n, 1 c)
        int64_t *fo = rank == 4 ? (int64_t *[]){&out.n, &out.h, &out.w, &out.c}[d] : (int64_t *[]){&out.n, &out.c}[d];
        *fo = 0;
        for (int j = 0; j < L->nparents; j++) {
            cb_shape s = net->layers[L->parents[j]].out;
            cb_shape a = s, b = in;
            int64_t *fa = rank == 4 ? (int64_t *[]){&a.n, &a.h, &a.w, &a.c}[d] : (int64_t *[]){&a.n, &a.c}[d];
            int64_t *fb = rank == 4 ? (int64_t *[]){&b.n, &b.h, &b.w, &b.c}[d] : (int64_t *[]){&b.n, &b.c}[d];
            *fo += *fa;
            *fa = *fb = 0;
            if (s.rank != rank || a.n != b.n || a.c != b.c || a.h != b.h || a.w != b.w)
                return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name,
                               "input '%s' is [%lld, %lld, %lld, %lld] (NHWC) and does not match '%s' outside dimension %d",
                               net->layers[L->parents[j]].name, (long long)s.n, (long long)s.h, (long long)s.w, (long long)s.c,
                               net->layers[L->parents[0]].name, L->p.concat.dim);
        }
        break;
    }
    case CB_OP_ADD:
        for (int j = 1; j < L->nparents; j++) {
            cb_shape s = net->layers[L->parents[j]].out;
            if (s.rank != in.rank || s.n != in.n || s.c != in.c || s.h != in.h || s.w != in.w)
                return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name,
                               "Elementwise inputs differ: '%s' is [%lld, %lld, %lld, %lld], '%s' is [%lld, %lld, %lld, %lld] (NHWC)",
                               net->layers[L->parents[0]].name, (long long)in.n, (long long)in.h, (long long)in.w,
                               (long long)in.c, net->layers[L->parents[j]].name, (long long)s.n, (long long)s.h,
                               (long long)s.w, (long long)s.c);
        }
        break;
    case CB_OP_MUL: { // equal shapes, or one (N, C, 1, 1) broadcast over the other's H, W
        cb_shape b = L->nparents == 2 ? net->layers[L->parents[1]].out : in;
        bool bc = in.rank == 4 && b.rank == 4 && in.n == b.n && in.c == b.c &&
                  ((b.h == 1 && b.w == 1) || (in.h == 1 && in.w == 1));
        bool same = b.rank == in.rank && b.n == in.n && b.c == in.c && b.h == in.h && b.w == in.w;
        if (L->nparents != 2)
            return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "an Elementwise mul takes two inputs, not %d", L->nparents);
        if (!same && !bc)
            return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name,
                           "Elementwise mul inputs [%lld, %lld, %lld, %lld] and [%lld, %lld, %lld, %lld] (NHWC) neither match "
                           "nor broadcast one [N, 1, 1, C] over the other",
                           (long long)in.n, (long long)in.h, (long long)in.w, (long long)in.c, (long long)b.n, (long long)b.h,
                           (long long)b.w, (long long)b.c);
        if (b.h * b.w > in.h * in.w) out = b;
        break;
    }
    case CB_OP_SOFTMAX: {
        int64_t k = in.c * in.h * in.w;
        if (L->p.softmax.classes && L->p.softmax.classes != k)
            return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "num_classes %d but the input has %lld values per example",
                           L->p.softmax.classes, (long long)k);
        out = (cb_shape){2, in.n, k, 1, 1};
        break;
    }
    case CB_OP_RESHAPE: {
        cb_shape want = L->out; // as read: -1 for "the rest"; n is the batch (taken from the input)
        want.n = in.n;
        int64_t known = 1, rest = 0;
        int64_t *f[3] = {&want.c, &want.h, &want.w};
        for (int j = 0; j < 3; j++) {
            if (*f[j] == -1) rest++;
            else known *= *f[j];
        }
        int64_t per = in.c * in.h * in.w;
        if (rest > 1 || (rest == 0 && known != per) || (rest == 1 && per % known))
            return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "cannot reshape %lld values per example to the given shape",
                           (long long)per);
        for (int j = 0; j < 3; j++)
            if (*f[j] == -1) *f[j] = per / known;
        out = want;
        break; // the resolved shape stays: a new batch keeps the per-example count
    }
    default:
        break;
    }
    if (L->nparents > 1 && L->op != CB_OP_CONCAT && L->op != CB_OP_ADD && L->op != CB_OP_MUL)
        return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "a %s layer takes one parent, not %d", cb_op_name(L->op),
                       L->nparents);
    if (!shape_ok(out) || !shape_ok(in))
        return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "sizes overflow 64 bits");
    L->out = out;
    return CB_OK;
}

cb_status cb_net_infer(cb_net *net, cb_error *err) {
    if (!shape_ok(net->layers[0].out))
        return cb_fail(err, CB_STATUS_SHAPE, net->path, net->layers[0].name, "sizes overflow 64 bits");
    for (int i = 1; i < net->nlayers; i++) {
        cb_status st = infer_one(net, i, err);
        if (st != CB_OK) return st;
    }
    return CB_OK;
}

cb_status cb_net_set_batch(cb_net *net, int64_t batch, cb_error *err) {
    if (batch < 1 || batch > INT32_MAX) return cb_fail(err, CB_STATUS_ARG, net->path, NULL, "batch %lld must be in [1, %d]", (long long)batch, INT32_MAX);
    net->layers[0].out.n = batch;
    return cb_net_infer(net, err);
}
