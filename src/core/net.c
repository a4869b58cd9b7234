// The network graph: parents resolved to indices, topological order, shape inference.
#include "core/net.h"
#include "core/limits.h"
#include "core/strmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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
    cb_msg_clean(err->msg);
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

void cb_msg_clean(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

// zlib's message for the file's error, without the path it prefixes (the caller names the file)
static const char *gz_why(gzFile f, const char *path, int *code) {
    const char *m = gzerror(f, code);
    if (*code == Z_ERRNO) return strerror(errno);
    if (!m || !*m) return "read error";
    size_t n = strlen(path);
    if (strncmp(m, path, n) == 0 && strncmp(m + n, ": ", 2) == 0) m += n + 2;
    return m;
}

// Plain or gzip-compressed alike (zlib's gzread reads both): the results' JSON is kept gzipped
// (docs/results/*.json.gz), and a calibration or a profile may be given so.
char *cb_read_text(const char *path, cb_error *err) {
    gzFile f = gzopen(path, "rb");
    if (!f) {
        cb_fail(err, errno ? CB_STATUS_IO : CB_STATUS_NOMEM, path, NULL, "cannot open: %s", errno ? strerror(errno) : "out of memory");
        return NULL;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    bool big = false, full = false, bad = false;
    for (;;) { // read to the end (no length asked: a pipe or a directory has none)
        if (n + 1 == cap || !buf) {
            if (cap > CB_MAX_FILE_BYTES) {
                big = true;
                break;
            }
            size_t c = cap ? 2 * cap : 1 << 12;
            char *nb = realloc(buf, c);
            if (!nb) {
                full = true;
                break;
            }
            buf = nb, cap = c;
        }
        size_t want = cap - 1 - n;
        if (want > (1u << 30)) want = 1u << 30; // (gzread takes an unsigned count)
        int got = gzread(f, buf + n, (unsigned)want);
        if (got < 0) {
            bad = true;
            break;
        }
        n += (size_t)got;
        if ((size_t)got < want) break;
    }
    int code = Z_OK;
    char why[200] = "";
    if (!big && !full) { // (a truncated or corrupt gzip stream ends the reads with its error set)
        const char *m = gz_why(f, path, &code);
        if (bad || code != Z_OK) snprintf(why, sizeof why, "%s", m);
    }
    gzclose(f);
    if (big || full || why[0]) {
        free(buf);
        if (big) cb_fail(err, CB_STATUS_PARSE, path, NULL, "larger than %u MiB", CB_MAX_FILE_BYTES >> 20);
        else if (full) cb_fail(err, CB_STATUS_NOMEM, path, NULL, "out of memory reading the file");
        else cb_fail(err, code == Z_ERRNO ? CB_STATUS_IO : CB_STATUS_PARSE, path, NULL, "cannot read: %s", why);
        return NULL;
    }
    buf[n] = 0;
    if (strlen(buf) != n) {
        free(buf);
        cb_fail(err, CB_STATUS_PARSE, path, NULL, "the file holds a NUL byte: not a text file");
        return NULL;
    }
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
    if (e && *e) return e;
    static char path[8192]; // every data directory's nets/
    const char *d = cb_data_dirs();
    path[0] = 0;
    for (const char *c; *d; d = c + 1) {
        c = strchr(d, ':');
        int len = c ? (int)(c - d) : (int)strlen(d);
        if (len) snprintf(path + strlen(path), sizeof path - strlen(path), "%s%.*s/nets", path[0] ? ":" : "", len, d);
        if (!c) break;
    }
    return path;
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

// a binary min-heap of layer indices
static void heap_push(int *h, int *n, int v) {
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
    h[i] = v;
}

static int heap_pop(int *h, int *n) {
    int top = h[0], v = h[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c], i = c;
    }
    if (*n) h[i] = v;
    return top;
}

cb_net *cb_net_build(char *name, const char *source, cb_layer *layers, cb_raw_parents *parents, int n, cb_error *err) {
    cb_net *net = NULL;
    int *order = NULL, *pos = NULL, *indeg = NULL;
    int ninputs = 0;
    int64_t refs = 0;
    for (int i = 0; i < n; i++) refs += parents[i].n;
    if (n > CB_MAX_LAYERS || refs > CB_MAX_PARENT_REFS) {
        cb_fail(err, CB_STATUS_PARSE, source, NULL, "%d layers and %lld parent references: the limits are %d and %d", n,
                (long long)refs, CB_MAX_LAYERS, CB_MAX_PARENT_REFS);
        goto fail;
    }
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
    // resolve names to file indices through a hash of the names (a network may have many layers)
    cb_strmap names = {0};
    for (int i = 0; i < n; i++) cb_strmap_put(&names, layers[i].name, i);
    int64_t nedges = 0;
    for (int i = 0; i < n; i++) {
        layers[i].parents = cb_xcalloc((size_t)parents[i].n, sizeof(int));
        layers[i].nparents = parents[i].n;
        nedges += parents[i].n;
        for (int j = 0; j < parents[i].n; j++) {
            int k = cb_strmap_get(&names, parents[i].names[j]);
            if (k < 0) {
                cb_fail(err, CB_STATUS_PARSE, source, layers[i].name, "unknown parent '%s'", parents[i].names[j]);
                cb_strmap_free(&names);
                goto fail;
            }
            if (k == i) {
                cb_fail(err, CB_STATUS_PARSE, source, layers[i].name, "a layer cannot be its own parent (cycle)");
                cb_strmap_free(&names);
                goto fail;
            }
            layers[i].parents[j] = k;
        }
    }
    cb_strmap_free(&names);
    // Kahn's algorithm, taking the earliest ready layer in file order each step (a min-heap of
    // ready file indices); children as compressed rows: child[cstart[p] .. cstart[p + 1])
    order = cb_xcalloc((size_t)n, sizeof(int));
    pos = cb_xcalloc((size_t)n, sizeof(int));
    indeg = cb_xcalloc((size_t)n, sizeof(int));
    int *cstart = cb_xcalloc((size_t)n + 1, sizeof(int)), *child = cb_xcalloc((size_t)nedges, sizeof(int));
    int *fill = cb_xcalloc((size_t)n, sizeof(int)), *heap = cb_xcalloc((size_t)n, sizeof(int)), nheap = 0, done = 0;
    for (int i = 0; i < n; i++) {
        indeg[i] = layers[i].nparents;
        for (int j = 0; j < layers[i].nparents; j++) cstart[layers[i].parents[j] + 1]++;
    }
    for (int i = 0; i < n; i++) cstart[i + 1] += cstart[i];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < layers[i].nparents; j++) child[cstart[layers[i].parents[j]] + fill[layers[i].parents[j]]++] = i;
    for (int i = 0; i < n; i++)
        if (indeg[i] == 0) heap_push(heap, &nheap, i);
    while (nheap) {
        int pick = heap_pop(heap, &nheap);
        pos[pick] = done;
        order[done++] = pick;
        for (int c = cstart[pick]; c < cstart[pick + 1]; c++)
            if (--indeg[child[c]] == 0) heap_push(heap, &nheap, child[c]);
    }
    free(cstart);
    free(child);
    free(fill);
    free(heap);
    if (done < n) {
        int any = 0;
        for (int i = 0; i < n; i++)
            if (indeg[i] > 0) { any = i; break; }
        cb_fail(err, CB_STATUS_PARSE, source, layers[any].name, "cyclic parents: the layers cannot be ordered");
        goto fail;
    }
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
    for (int s = 0; s < n; s++) net->layers[s].last_child = -1;
    for (int s = 0; s < n; s++)
        for (int j = 0; j < net->layers[s].nparents; j++) {
            cb_layer *P = &net->layers[net->layers[s].parents[j]];
            P->nchildren++;
            P->last_child = s;
        }
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

// every dimension in [1, CB_MAX_DIM], the element count times 4 (fp32 bytes) in int64
static bool shape_ok(cb_shape s) {
    int64_t t;
    return s.n >= 1 && s.c >= 1 && s.h >= 1 && s.w >= 1 && s.n <= CB_MAX_DIM && s.c <= CB_MAX_DIM && s.h <= CB_MAX_DIM &&
           s.w <= CB_MAX_DIM && mul_ok(s.n, s.c, &t) && mul_ok(t, s.h, &t) && mul_ok(t, s.w, &t) && mul_ok(t, 4, &t);
}

static cb_status shape_fail(const cb_net *net, const cb_layer *L, cb_shape s, cb_error *err) {
    if (s.n > CB_MAX_DIM || s.c > CB_MAX_DIM || s.h > CB_MAX_DIM || s.w > CB_MAX_DIM)
        return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "output [%lld, %lld, %lld, %lld] (NHWC) has a dimension over %d",
                       (long long)s.n, (long long)s.h, (long long)s.w, (long long)s.c, CB_MAX_DIM);
    return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "output [%lld, %lld, %lld, %lld] (NHWC): sizes overflow 64 bits",
                   (long long)s.n, (long long)s.h, (long long)s.w, (long long)s.c);
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
        if (L->p.conv.cin == -1 || (i > 0 && L->p.conv.cin <= 0)) {
            if (in.c / g > CB_MAX_CHANNELS)
                return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "%lld input channels per group, more than %d",
                               (long long)(in.c / g), CB_MAX_CHANNELS);
            L->p.conv.cin = (int)(in.c / g);
        }
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
    case CB_OP_FC: // (in's count fits int64: shape_ok held for the parent)
        if (in.c * in.h * in.w > CB_MAX_DIM) // the flattened input is a dimension too (the model's GEMM shapes are int)
            return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "%lld input values per example, more than %d",
                           (long long)(in.c * in.h * in.w), CB_MAX_DIM);
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
            if (__builtin_add_overflow(*fo, *fa, fo))
                return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "sizes overflow 64 bits");
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
        if (L->nparents < 2)
            return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "an Elementwise layer needs two or more parents, not %d",
                           L->nparents);
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
            else if (!mul_ok(known, *f[j], &known))
                return cb_fail(err, CB_STATUS_SHAPE, net->path, L->name, "output_shape's sizes overflow 64 bits");
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
    if (!shape_ok(out)) return shape_fail(net, L, out, err);
    L->out = out;
    return CB_OK;
}

cb_status cb_net_infer(cb_net *net, cb_error *err) {
    if (!shape_ok(net->layers[0].out)) return shape_fail(net, &net->layers[0], net->layers[0].out, err);
    for (int i = 1; i < net->nlayers; i++) {
        cb_status st = infer_one(net, i, err);
        if (st != CB_OK) return st;
    }
    int over = cb_net_cost_overflow(net);
    if (over >= 0)
        return cb_fail(err, CB_STATUS_SHAPE, net->path, net->layers[over].name,
                       "its parameters, or the network's activation or training-memory totals up to it at batch %lld, "
                       "overflow 64 bits", (long long)cb_net_batch(net));
    return CB_OK;
}

cb_status cb_net_set_batch(cb_net *net, int64_t batch, cb_error *err) {
    if (batch < 1 || batch > CB_MAX_BATCH)
        return cb_fail(err, CB_STATUS_ARG, net->path, NULL, "batch %lld must be in [1, %d]", (long long)batch, CB_MAX_BATCH);
    net->layers[0].out.n = batch;
    return cb_net_infer(net, err);
}
