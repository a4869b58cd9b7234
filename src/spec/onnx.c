// ONNX import: an ONNX model (a protobuf ModelProto) becomes a Paleo-format description (cJSON)
// and the initializers become the network's starting weights (cb_net_weights, applied by
// cb_exec_create). The protobuf code is generated at build time by protoc-c from the onnx.proto
// of Debian's libonnx-dev (see the Makefile); nothing here reads protobuf by hand.
//
// Nodes are converted in the graph's order (ONNX requires a topological one). Some are folded
// into the layer that produces their input: BatchNormalization into a Convolution
// ("normalizer_fn"), activations into Convolution / InnerProduct / Elementwise
// ("activation_fn"), an Add of a constant into a bias. Patterns become activations:
// x * Sigmoid(x) is silu, x * HardSigmoid(x) hardswish, the Erf decomposition of GELU gelu.
// A Transpose to NHWC and back is allowed around a LayerNorm (ConvNeXt): between the two, a
// MatMul with a 2-d constant is a 1x1 convolution and the LayerNorm runs over channels.
#include "core/net.h"
#include "onnx.pb-c.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ONNX_BYTES ((size_t)2 << 30)

typedef Onnx__NodeProto node_t;
typedef Onnx__TensorProto tensor_t;

typedef enum lkind { LK_OTHER, LK_CONV, LK_FC, LK_ELT } lkind;

typedef struct elayer {           // an emitted Paleo layer
    char *name;
    cJSON *obj;
    lkind kind;
    bool act, bn, bias;           // has a fused activation, batch norm, bias
    const char *out;              // the ONNX tensor that holds its output now (fusions move it)
} elayer;

typedef struct ivalue {           // what an ONNX tensor name stands for
    const char *name;
    int layer;                    // emitted layer, or -1 for a constant
    const tensor_t *t;            // the constant
    int rank;                     // 4 or 2, as the engine sees it
    bool nhwc;                    // ONNX sees it transposed to NHWC (around a LayerNorm)
} ivalue;

typedef struct imp {
    const char *src;
    cb_error *err;
    const Onnx__GraphProto *g;
    ivalue *v;
    int nv, capv;
    elayer *l;
    int nl, capl;
    cJSON *layers;
    cb_net_weights *w;
    bool *done;                   // per node: absorbed into a pattern
} imp;

// ---- messages ---------------------------------------------------------------------------------

static bool node_fail(imp *m, const node_t *nd, cb_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool node_fail(imp *m, const node_t *nd, cb_status st, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cb_fail(m->err, st, m->src, NULL, "node '%s' (%s): %s", nd->name && *nd->name ? nd->name : nd->n_output ? nd->output[0] : "?",
            nd->op_type, msg);
    return false;
}

// ---- weights ----------------------------------------------------------------------------------

void cb_net_weights_free(cb_net_weights *w) {
    if (!w) return;
    for (int i = 0; i < w->n; i++) free(w->t[i].layer), free(w->t[i].data);
    free(w->t);
    free(w);
}

static void add_weight(imp *m, const char *layer, const char *what, float *data, int64_t count) {
    cb_net_weights *w = m->w;
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->t = realloc(w->t, sizeof *w->t * (size_t)w->cap);
        if (!w->t) abort();
    }
    cb_init_tensor *t = &w->t[w->n++];
    t->layer = cb_strdup(layer);
    snprintf(t->what, sizeof t->what, "%s", what);
    t->data = data;
    t->count = count;
}

// ---- values and constants ---------------------------------------------------------------------

static ivalue *find_value(imp *m, const char *name) {
    for (int i = m->nv - 1; i >= 0; i--)
        if (strcmp(m->v[i].name, name) == 0) return &m->v[i];
    return NULL;
}

static void bind(imp *m, const char *name, int layer, const tensor_t *t, int rank, bool nhwc) {
    if (m->nv == m->capv) {
        m->capv = m->capv ? 2 * m->capv : 256;
        m->v = realloc(m->v, sizeof *m->v * (size_t)m->capv);
        if (!m->v) abort();
    }
    m->v[m->nv++] = (ivalue){name, layer, t, rank, nhwc};
    if (layer >= 0) m->l[layer].out = name;
}

// Input i of a node: a value that exists, or an error naming it.
static ivalue *input(imp *m, const node_t *nd, size_t i) {
    if (i >= nd->n_input || !*nd->input[i]) {
        node_fail(m, nd, CB_STATUS_PARSE, "missing input %zu", i + 1);
        return NULL;
    }
    ivalue *v = find_value(m, nd->input[i]);
    if (!v) node_fail(m, nd, CB_STATUS_PARSE, "input '%s' is neither a graph input, an initializer nor an earlier node's output", nd->input[i]);
    return v;
}

static ivalue *input_layer(imp *m, const node_t *nd, size_t i) {
    ivalue *v = input(m, nd, i);
    if (v && v->layer < 0) {
        node_fail(m, nd, CB_STATUS_UNSUPPORTED, "input '%s' is a constant where a computed tensor is needed", v->name);
        return NULL;
    }
    if (v && v->nhwc && strcmp(nd->op_type, "Transpose") && strcmp(nd->op_type, "LayerNormalization") &&
        strcmp(nd->op_type, "MatMul") && strcmp(nd->op_type, "Add") && strcmp(nd->op_type, "Mul") &&
        strcmp(nd->op_type, "Div") && strcmp(nd->op_type, "Relu") && strcmp(nd->op_type, "Gelu") &&
        strcmp(nd->op_type, "Sigmoid") && strcmp(nd->op_type, "Identity") && strcmp(nd->op_type, "Dropout")) {
        node_fail(m, nd, CB_STATUS_UNSUPPORTED, "input '%s' is in NHWC order (after a Transpose): only a LayerNorm, "
                  "MatMul, bias, activation and Transpose back may sit between the two Transposes", v->name);
        return NULL;
    }
    return v;
}

static ivalue *input_const(imp *m, const node_t *nd, size_t i, const char *what) {
    ivalue *v = input(m, nd, i);
    if (v && v->layer >= 0) {
        node_fail(m, nd, CB_STATUS_UNSUPPORTED, "%s '%s' is computed at run time; it must be an initializer", what, v->name);
        return NULL;
    }
    return v;
}

static int64_t numel(const tensor_t *t) {
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || (t->dims[i] && n > INT64_MAX / 4 / t->dims[i])) return -1;
        n *= t->dims[i];
    }
    return n;
}

// A constant's values as float32 (FLOAT, DOUBLE, INT64 or INT32 data); the caller frees them.
static float *const_floats(imp *m, const node_t *nd, const tensor_t *t, int64_t *count) {
    int64_t n = numel(t);
    const char *nm = t->name ? t->name : "";
    if (n < 0) return node_fail(m, nd, CB_STATUS_PARSE, "constant '%s' has bad dimensions", nm), NULL;
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "constant '%s' is stored in an external file", nm), NULL;
    float *out = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!out) abort();
    int dt = t->has_data_type ? t->data_type : 0;
    size_t width = dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4
                   : dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE || dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? 8 : 0;
    if (!width) {
        free(out);
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "constant '%s' has element type %d (float, double, int32 or int64 needed)", nm, dt), NULL;
    }
    size_t have = t->has_raw_data ? t->raw_data.len / width
                  : dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? t->n_float_data
                  : dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? t->n_double_data
                  : dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? t->n_int64_data : t->n_int32_data;
    if ((int64_t)have != n || (t->has_raw_data && t->raw_data.len % width)) {
        free(out);
        return node_fail(m, nd, CB_STATUS_PARSE, "constant '%s' holds %zu values, its dimensions say %lld", nm, have, (long long)n), NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        double x;
        if (t->has_raw_data) { // little-endian bytes
            const unsigned char *p = t->raw_data.data + (size_t)i * width;
            uint64_t u = 0;
            for (size_t b = 0; b < width; b++) u |= (uint64_t)p[b] << (8 * b);
            if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) { uint32_t u32 = (uint32_t)u; float f; memcpy(&f, &u32, 4); x = f; }
            else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) memcpy(&x, &u, 8);
            else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) x = (double)(int64_t)u;
            else x = (double)(int32_t)(uint32_t)u;
        } else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) x = t->float_data[i];
        else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) x = t->double_data[i];
        else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) x = (double)t->int64_data[i];
        else x = t->int32_data[i];
        out[i] = (float)x;
    }
    *count = n;
    return out;
}

// A scalar constant (any shape with one element) equal to want within tolerance.
static bool const_is(imp *m, const node_t *nd, const ivalue *v, double want, double tol) {
    if (!v || v->layer >= 0 || numel(v->t) != 1) return false;
    int64_t n;
    cb_error quiet, *keep = m->err;
    m->err = &quiet;
    float *f = const_floats(m, nd, v->t, &n);
    m->err = keep;
    bool ok = f && fabs(f[0] - want) <= tol;
    free(f);
    return ok;
}

// ---- attributes -------------------------------------------------------------------------------

static const Onnx__AttributeProto *attr(const node_t *nd, const char *name) {
    for (size_t i = 0; i < nd->n_attribute; i++)
        if (nd->attribute[i]->name && strcmp(nd->attribute[i]->name, name) == 0) return nd->attribute[i];
    return NULL;
}

// Every attribute of the node must be in the list (NULL-terminated).
static bool attrs_known(imp *m, const node_t *nd, const char *const *known) {
    for (size_t i = 0; i < nd->n_attribute; i++) {
        const char *a = nd->attribute[i]->name ? nd->attribute[i]->name : "";
        bool ok = false;
        for (int k = 0; known && known[k]; k++)
            if (strcmp(known[k], a) == 0) ok = true;
        if (!ok) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "attribute '%s' is not supported", a);
    }
    return true;
}

static int64_t attr_int(const node_t *nd, const char *name, int64_t def) {
    const Onnx__AttributeProto *a = attr(nd, name);
    return a && a->has_i ? a->i : def;
}

static double attr_float(const node_t *nd, const char *name, double def) {
    const Onnx__AttributeProto *a = attr(nd, name);
    return a && a->has_f ? a->f : def;
}

// An ints attribute of exactly n entries (or absent: def for each); false with an error otherwise.
static bool attr_ints(imp *m, const node_t *nd, const char *name, size_t n, int64_t def, int64_t *out) {
    const Onnx__AttributeProto *a = attr(nd, name);
    for (size_t i = 0; i < n; i++) out[i] = def;
    if (!a) return true;
    if (a->n_ints != n)
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "'%s' has %zu entries; a 2-d window needs %zu", name, a->n_ints, n);
    for (size_t i = 0; i < n; i++) {
        if (a->ints[i] < 0 || a->ints[i] > (1 << 20))
            return node_fail(m, nd, CB_STATUS_PARSE, "'%s' entry %lld is out of range", name, (long long)a->ints[i]);
        out[i] = a->ints[i];
    }
    return true;
}

static bool attr_str_is(const node_t *nd, const char *name, const char *want, const char *def) {
    const Onnx__AttributeProto *a = attr(nd, name);
    if (!a || !a->has_s) return strcmp(want, def) == 0;
    return a->s.len == strlen(want) && memcmp(a->s.data, want, a->s.len) == 0;
}

// ---- emitting layers --------------------------------------------------------------------------

static bool name_taken(imp *m, const char *s) {
    if (strcmp(s, "data") == 0) return true;
    for (int i = 0; i < m->nl; i++)
        if (strcmp(m->l[i].name, s) == 0) return true;
    return false;
}

// A layer named after the node (without PyTorch's leading '/'), made unique.
static char *layer_name(imp *m, const node_t *nd, int index) {
    char base[200];
    const char *s = nd->name && *nd->name ? nd->name : NULL;
    while (s && *s == '/') s++;
    if (s && *s) snprintf(base, sizeof base, "%s", s);
    else snprintf(base, sizeof base, "%s_%d", nd->op_type, index);
    for (char *c = base; *c; c++)
        if (*c == '@' || *c == '"' || (unsigned char)*c < 32) *c = '_';
    char buf[220];
    snprintf(buf, sizeof buf, "%s", base);
    for (int k = 2; name_taken(m, buf); k++) snprintf(buf, sizeof buf, "%s_%d", base, k);
    return cb_strdup(buf);
}

// A new layer of the given type with the given parent values; returns its index.
static int emit(imp *m, const node_t *nd, int index, const char *type, lkind kind, ivalue **parents, int np) {
    if (m->nl == m->capl) {
        m->capl = m->capl ? 2 * m->capl : 128;
        m->l = realloc(m->l, sizeof *m->l * (size_t)m->capl);
        if (!m->l) abort();
    }
    elayer *L = &m->l[m->nl];
    memset(L, 0, sizeof *L);
    L->name = nd ? layer_name(m, nd, index) : cb_strdup("data");
    L->kind = kind;
    L->obj = cJSON_CreateObject();
    cJSON *p = cJSON_AddArrayToObject(L->obj, "parents");
    for (int i = 0; i < np; i++) cJSON_AddItemToArray(p, cJSON_CreateString(m->l[parents[i]->layer].name));
    cJSON_AddStringToObject(L->obj, "type", type);
    cJSON_AddItemToObject(m->layers, L->name, L->obj);
    return m->nl++;
}

static cJSON *int_array(const int64_t *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

// A float32 attribute as its shortest decimal (1e-06, not 9.99999997475243e-07)
static cJSON *float_num(double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", v);
    return cJSON_CreateNumber(strtod(buf, NULL));
}

static void set_item(cJSON *obj, const char *key, cJSON *item) {
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
    else cJSON_AddItemToObject(obj, key, item);
}

// The ONNX tensor t, an output of a layer, has exactly one consumer (no graph output either).
static int consumers(const imp *m, const char *t) {
    int c = 0;
    for (size_t i = 0; i < m->g->n_node; i++)
        for (size_t j = 0; j < m->g->node[i]->n_input; j++)
            if (strcmp(m->g->node[i]->input[j], t) == 0) c++;
    for (size_t i = 0; i < m->g->n_output; i++)
        if (m->g->output[i]->name && strcmp(m->g->output[i]->name, t) == 0) c++;
    return c;
}

// The one node consuming t, or -1.
static int sole_consumer(const imp *m, const char *t) {
    if (consumers(m, t) != 1) return -1;
    for (size_t i = 0; i < m->g->n_node; i++)
        for (size_t j = 0; j < m->g->node[i]->n_input; j++)
            if (strcmp(m->g->node[i]->input[j], t) == 0) return (int)i;
    return -1;
}

static bool is_op(const imp *m, int i, const char *op) { return i >= 0 && strcmp(m->g->node[i]->op_type, op) == 0; }

// The layer producing v, when it can take a fused epilogue: v is its current output and has `uses`
// consumers (1, or the nodes of a pattern like x * Sigmoid(x)).
static elayer *fusible_n(imp *m, const ivalue *v, int uses) {
    if (v->layer < 0) return NULL;
    elayer *L = &m->l[v->layer];
    if (L->out != v->name || consumers(m, v->name) != uses) return NULL;
    return L;
}
static elayer *fusible(imp *m, const ivalue *v) { return fusible_n(m, v, 1); }

// ---- operators --------------------------------------------------------------------------------

// An activation fn on value x, its result named out: fused into x's layer when it can be (x has
// `uses` consumers, all inside the activation's pattern).
static bool activation_n(imp *m, const node_t *nd, int index, ivalue *x, const char *fn, const char *out, int uses) {
    elayer *L = fusible_n(m, x, uses);
    if (L && (L->kind == LK_CONV || L->kind == LK_FC || L->kind == LK_ELT) && !L->act) {
        set_item(L->obj, "activation_fn", cJSON_CreateString(fn));
        L->act = true;
        bind(m, out, x->layer, NULL, x->rank, x->nhwc);
        return true;
    }
    int k = emit(m, nd, index, strcmp(fn, "relu") ? "Activation" : "ReLU", LK_OTHER, &x, 1);
    if (strcmp(fn, "relu")) cJSON_AddStringToObject(m->l[k].obj, "fn", fn);
    bind(m, out, k, NULL, x->rank, x->nhwc);
    return true;
}
static bool activation(imp *m, const node_t *nd, int index, ivalue *x, const char *fn, const char *out) {
    return activation_n(m, nd, index, x, fn, out, 1);
}

// Pads, strides and dilations of a Conv or pooling node into Paleo's keys.
static bool window(imp *m, const node_t *nd, cJSON *obj, bool dilation) {
    int64_t pads[4], strides[2], dil[2];
    if (!attr_ints(m, nd, "pads", 4, 0, pads) || !attr_ints(m, nd, "strides", 2, 1, strides) ||
        !attr_ints(m, nd, "dilations", 2, 1, dil))
        return false;
    if (strides[0] < 1 || strides[1] < 1) return node_fail(m, nd, CB_STATUS_PARSE, "strides must be positive");
    if (dil[0] != 1 || dil[1] != 1) {
        if (!dilation) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "dilations other than 1 are not supported on pooling");
        if (dil[0] < 1 || dil[1] < 1) return node_fail(m, nd, CB_STATUS_PARSE, "dilations must be positive");
        cJSON_AddItemToObject(obj, "dilations", int_array(dil, 2));
    }
    int64_t st4[4] = {1, strides[0], strides[1], 1};
    cJSON_AddItemToObject(obj, "strides", int_array(st4, 4));
    const Onnx__AttributeProto *ap = attr(nd, "auto_pad");
    if (ap && ap->has_s && !attr_str_is(nd, "auto_pad", "NOTSET", "NOTSET")) {
        if (attr(nd, "pads")) return node_fail(m, nd, CB_STATUS_PARSE, "both auto_pad and pads are given");
        if (attr_str_is(nd, "auto_pad", "VALID", "")) cJSON_AddStringToObject(obj, "padding", "VALID");
        else if (attr_str_is(nd, "auto_pad", "SAME_UPPER", "")) cJSON_AddStringToObject(obj, "padding", "SAME");
        else return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "auto_pad '%.*s' is not supported (NOTSET, VALID, SAME_UPPER)",
                              (int)ap->s.len, (const char *)ap->s.data);
        return true;
    }
    if (!pads[0] && !pads[1] && !pads[2] && !pads[3]) cJSON_AddStringToObject(obj, "padding", "VALID");
    else if (pads[0] == pads[2] && pads[1] == pads[3]) cJSON_AddItemToObject(obj, "padding", int_array(pads, 2));
    else { // ONNX orders them [top, left, bottom, right], as convbench's 4-entry form
        cJSON_AddItemToObject(obj, "padding", int_array(pads, 4));
    }
    return true;
}

static bool op_conv(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", NULL};
    if (!attrs_known(m, nd, known)) return false;
    ivalue *x = input_layer(m, nd, 0), *w = x ? input_const(m, nd, 1, "weight") : NULL;
    ivalue *b = w && nd->n_input > 2 && *nd->input[2] ? input_const(m, nd, 2, "bias") : NULL;
    if (!w || (nd->n_input > 2 && *nd->input[2] && !b)) return false;
    if (w->t->n_dims != 4) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "a %zu-d weight: only 2-d convolutions (4-d weights) are supported", w->t->n_dims);
    int64_t g = attr_int(nd, "group", 1), K = w->t->dims[0];
    if (g < 1 || K % g) return node_fail(m, nd, CB_STATUS_PARSE, "group %lld does not divide %lld filters", (long long)g, (long long)K);
    int64_t ks[2];
    if (!attr_ints(m, nd, "kernel_shape", 2, 0, ks)) return false;
    if (attr(nd, "kernel_shape") && (ks[0] != w->t->dims[2] || ks[1] != w->t->dims[3]))
        return node_fail(m, nd, CB_STATUS_PARSE, "kernel_shape disagrees with the weight's dimensions");
    int k = emit(m, nd, index, "Convolution", LK_CONV, &x, 1);
    elayer *L = &m->l[k];
    int64_t f[4] = {w->t->dims[2], w->t->dims[3], w->t->dims[1], K};
    cJSON_AddItemToObject(L->obj, "filter", int_array(f, 4));
    if (!window(m, nd, L->obj, true)) return false;
    cJSON_AddNullToObject(L->obj, "activation_fn");
    if (g > 1) cJSON_AddNumberToObject(L->obj, "groups", (double)g);
    int64_t n;
    float *wd = const_floats(m, nd, w->t, &n); // (K, C/g, R, S): the engine's layout
    if (!wd) return false;
    add_weight(m, L->name, "weight", wd, n);
    if (b) {
        float *bd = const_floats(m, nd, b->t, &n);
        if (!bd) return false;
        if (n != K) return free(bd), node_fail(m, nd, CB_STATUS_SHAPE, "bias has %lld values for %lld filters", (long long)n, (long long)K);
        add_weight(m, L->name, "bias", bd, n);
        L->bias = true;
    } else cJSON_AddFalseToObject(L->obj, "bias");
    bind(m, nd->output[0], k, NULL, 4, false);
    return true;
}

static bool op_batchnorm(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"epsilon", "momentum", "training_mode", "spatial", NULL};
    if (!attrs_known(m, nd, known)) return false;
    if (attr_int(nd, "training_mode", 0) != 0 || nd->n_output > 1)
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "training mode (batch statistics as outputs) is not supported");
    if (attr_int(nd, "spatial", 1) != 1) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "spatial=0 is not supported");
    ivalue *x = input_layer(m, nd, 0);
    if (!x) return false;
    static const char *const what[4] = {"bn_scale", "bn_shift", "bn_mean", "bn_var"};
    float *d[4] = {0};
    int64_t n[4];
    for (int i = 0; i < 4; i++) {
        ivalue *c = input_const(m, nd, (size_t)i + 1, what[i]);
        if (!c || !(d[i] = const_floats(m, nd, c->t, &n[i]))) {
            for (int j = 0; j < i; j++) free(d[j]);
            return false;
        }
    }
    double eps = attr_float(nd, "epsilon", 1e-5);
    elayer *L = fusible(m, x);
    int k;
    if (L && L->kind == LK_CONV && !L->bn && !L->act && fabs(eps - 1e-5) < 1e-9) { // the engine's fused eps
        cJSON_AddStringToObject(L->obj, "normalizer_fn", "batch_norm");
        L->bn = true;
        k = x->layer;
    } else {
        k = emit(m, nd, index, "BatchNorm", LK_OTHER, &x, 1);
        cJSON_AddItemToObject(m->l[k].obj, "epsilon", float_num(eps));
    }
    for (int i = 0; i < 4; i++) add_weight(m, m->l[k].name, what[i], d[i], n[i]);
    bind(m, nd->output[0], k, NULL, x->rank, false);
    return true;
}

static bool op_pool(imp *m, const node_t *nd, int index, bool avg) {
    static const char *const known[] = {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads",
                                        "storage_order", "strides", NULL};
    if (!attrs_known(m, nd, known)) return false;
    ivalue *x = input_layer(m, nd, 0);
    if (!x) return false;
    if (nd->n_output > 1 && *nd->output[1]) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "the Indices output is not supported");
    if (attr_int(nd, "ceil_mode", 0)) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "ceil_mode=1 is not supported");
    if (attr_int(nd, "storage_order", 0)) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "storage_order=1 is not supported");
    int64_t ks[2], pads[4];
    if (!attr(nd, "kernel_shape")) return node_fail(m, nd, CB_STATUS_PARSE, "missing kernel_shape");
    if (!attr_ints(m, nd, "kernel_shape", 2, 1, ks) || !attr_ints(m, nd, "pads", 4, 0, pads)) return false;
    bool padded = pads[0] || pads[1] || pads[2] || pads[3] || (attr(nd, "auto_pad") && !attr_str_is(nd, "auto_pad", "VALID", "") &&
                                                                !attr_str_is(nd, "auto_pad", "NOTSET", ""));
    if (avg && padded && attr_int(nd, "count_include_pad", 0))
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "count_include_pad=1 with padding is not supported (the engine leaves pads out of the mean)");
    int k = emit(m, nd, index, avg ? "AvgPool" : "Pooling", LK_OTHER, &x, 1);
    int64_t k4[4] = {1, ks[0], ks[1], 1};
    cJSON_AddItemToObject(m->l[k].obj, "ksize", int_array(k4, 4));
    if (!window(m, nd, m->l[k].obj, false)) return false;
    bind(m, nd->output[0], k, NULL, 4, false);
    return true;
}

static bool op_global_pool(imp *m, const node_t *nd, int index, bool keep4) {
    ivalue *x = input_layer(m, nd, 0);
    if (!x) return false;
    if (x->rank != 4) return node_fail(m, nd, CB_STATUS_SHAPE, "needs a 4-d input");
    int k = emit(m, nd, index, "GlobalAvgPool", LK_OTHER, &x, 1);
    bind(m, nd->output[0], k, NULL, keep4 ? 4 : 2, false);
    return true;
}

static bool op_reduce_mean(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"axes", "keepdims", NULL};
    if (!attrs_known(m, nd, known)) return false;
    const Onnx__AttributeProto *a = attr(nd, "axes");
    bool hw = a && a->n_ints == 2 && ((a->ints[0] == 2 && a->ints[1] == 3) || (a->ints[0] == -2 && a->ints[1] == -1));
    if (!hw || nd->n_input > 1) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a mean over the spatial axes [2, 3] is supported");
    return op_global_pool(m, nd, index, attr_int(nd, "keepdims", 1) != 0);
}

// Weight (K, C) for an InnerProduct or a 1x1 convolution, from a 2-d constant; transposed when
// the constant is (C, K) (MatMul, Gemm with transB = 0).
static float *weight_kc(imp *m, const node_t *nd, const tensor_t *t, bool kc, int64_t *K, int64_t *n) {
    if (t->n_dims != 2) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "the weight must be a 2-d constant"), NULL;
    float *d = const_floats(m, nd, t, n);
    if (!d) return NULL;
    int64_t r = t->dims[0], c = t->dims[1];
    *K = kc ? r : c;
    if (kc) return d;
    float *o = malloc((size_t)(*n ? *n : 1) * sizeof(float));
    if (!o) abort();
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) o[j * r + i] = d[i * c + j];
    free(d);
    return o;
}

static bool op_gemm(imp *m, const node_t *nd, int index, bool matmul) {
    static const char *const known[] = {"alpha", "beta", "transA", "transB", NULL};
    if (!attrs_known(m, nd, known)) return false;
    if (attr_float(nd, "alpha", 1) != 1 || attr_float(nd, "beta", 1) != 1 || attr_int(nd, "transA", 0))
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "alpha, beta other than 1 or transA=1 are not supported");
    ivalue *x = input_layer(m, nd, 0), *w = x ? input_const(m, nd, 1, "weight") : NULL;
    if (!w) return false;
    ivalue *b = !matmul && nd->n_input > 2 && *nd->input[2] ? input_const(m, nd, 2, "bias") : NULL;
    if (!matmul && nd->n_input > 2 && *nd->input[2] && !b) return false;
    if (x->rank == 4 && !x->nhwc && matmul)
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "MatMul of a 4-d NCHW tensor: flatten it first");
    int64_t K, n;
    float *wd = weight_kc(m, nd, w->t, !matmul && attr_int(nd, "transB", 0), &K, &n);
    if (!wd) return false;
    int k;
    if (x->nhwc) { // a Linear over the channels of an NHWC tensor: a 1x1 convolution
        k = emit(m, nd, index, "Convolution", LK_CONV, &x, 1);
        int64_t f[4] = {1, 1, n / K, K};
        cJSON_AddItemToObject(m->l[k].obj, "filter", int_array(f, 4));
        cJSON_AddStringToObject(m->l[k].obj, "padding", "VALID");
        cJSON_AddNullToObject(m->l[k].obj, "activation_fn");
    } else {
        k = emit(m, nd, index, "InnerProduct", LK_FC, &x, 1);
        cJSON_AddNumberToObject(m->l[k].obj, "num_outputs", (double)K);
        cJSON_AddNullToObject(m->l[k].obj, "activation_fn");
    }
    add_weight(m, m->l[k].name, "weight", wd, n);
    if (b) {
        float *bd = const_floats(m, nd, b->t, &n);
        if (!bd) return false;
        if (n != K) return free(bd), node_fail(m, nd, CB_STATUS_SHAPE, "bias has %lld values for %lld outputs", (long long)n, (long long)K);
        add_weight(m, m->l[k].name, "bias", bd, n);
        m->l[k].bias = true;
    } else cJSON_AddFalseToObject(m->l[k].obj, "bias");
    bind(m, nd->output[0], k, NULL, x->nhwc ? 4 : 2, x->nhwc);
    return true;
}

// Flatten, Reshape to (N, -1): nothing when only InnerProducts consume it (they flatten their input).
static bool op_flatten(imp *m, const node_t *nd, int index) {
    ivalue *x = input_layer(m, nd, 0);
    if (!x) return false;
    if (!strcmp(nd->op_type, "Flatten")) {
        static const char *const known[] = {"axis", NULL};
        if (!attrs_known(m, nd, known)) return false;
        if (attr_int(nd, "axis", 1) != 1) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only axis=1 is supported");
    } else {
        static const char *const known[] = {"allowzero", NULL};
        if (!attrs_known(m, nd, known)) return false;
        ivalue *s = input_const(m, nd, 1, "shape");
        int64_t n;
        float *d = s ? const_floats(m, nd, s->t, &n) : NULL;
        if (!d) return false;
        bool flat = n == 2 && (d[1] == -1 || (d[0] != -1 && d[1] > 0));
        free(d);
        if (!flat) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a reshape to (batch, features) is supported");
    }
    bool all_fc = true;
    for (size_t i = 0; i < m->g->n_node; i++)
        for (size_t j = 0; j < m->g->node[i]->n_input; j++)
            if (!strcmp(m->g->node[i]->input[j], nd->output[0]) && strcmp(m->g->node[i]->op_type, "Gemm") &&
                strcmp(m->g->node[i]->op_type, "MatMul"))
                all_fc = false;
    if (x->rank == 2 || all_fc) {
        bind(m, nd->output[0], x->layer, NULL, 2, false);
        m->l[x->layer].out = x->name; // an alias: the layer's output did not move
        return true;
    }
    int k = emit(m, nd, index, "Reshape", LK_OTHER, &x, 1);
    int64_t s[2] = {1, -1};
    cJSON_AddItemToObject(m->l[k].obj, "output_shape", int_array(s, 2));
    bind(m, nd->output[0], k, NULL, 2, false);
    return true;
}

static bool op_concat(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"axis", NULL};
    if (!attrs_known(m, nd, known)) return false;
    ivalue *ps[256];
    if (nd->n_input < 1 || nd->n_input > 256) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "%zu inputs", nd->n_input);
    for (size_t i = 0; i < nd->n_input; i++)
        if (!(ps[i] = input_layer(m, nd, i))) return false;
    int64_t ax = attr_int(nd, "axis", 1);
    int rank = ps[0]->rank;
    if (ax < 0) ax += rank;
    if (ax != 1) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "concatenation along axis %lld: only channels (1) are supported", (long long)ax);
    int k = emit(m, nd, index, "Concatenate", LK_OTHER, ps, (int)nd->n_input);
    cJSON_AddNumberToObject(m->l[k].obj, "dim", -1); // NHWC's last: channels at rank 4 and 2
    bind(m, nd->output[0], k, NULL, rank, false);
    return true;
}

// GELU's Erf form, as PyTorch exports it: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5).
static bool try_gelu(imp *m, const node_t *nd, int index) {
    if (nd->n_input != 2) return false;
    ivalue *x = find_value(m, nd->input[0]), *c = nd->n_input > 1 ? find_value(m, nd->input[1]) : NULL;
    if (!x || x->layer < 0 || !const_is(m, nd, c, sqrt(2.0), 1e-3)) return false;
    int e = sole_consumer(m, nd->output[0]);
    if (!is_op(m, e, "Erf")) return false;
    int a = sole_consumer(m, m->g->node[e]->output[0]);
    if (!is_op(m, a, "Add") || m->g->node[a]->n_input != 2) return false;
    const node_t *an = m->g->node[a];
    ivalue *one = find_value(m, strcmp(an->input[0], m->g->node[e]->output[0]) ? an->input[0] : an->input[1]);
    if (!const_is(m, nd, one, 1.0, 1e-6)) return false;
    int m1 = sole_consumer(m, an->output[0]);
    if (!is_op(m, m1, "Mul") || m->g->node[m1]->n_input != 2) return false;
    const node_t *mn = m->g->node[m1];
    const char *other = strcmp(mn->input[0], an->output[0]) ? mn->input[0] : mn->input[1];
    if (strcmp(other, x->name)) return false;
    int m2 = sole_consumer(m, mn->output[0]);
    if (!is_op(m, m2, "Mul") || m->g->node[m2]->n_input != 2) return false;
    const node_t *hn = m->g->node[m2];
    ivalue *half = find_value(m, strcmp(hn->input[0], mn->output[0]) ? hn->input[0] : hn->input[1]);
    if (!const_is(m, nd, half, 0.5, 1e-6)) return false;
    m->done[e] = m->done[a] = m->done[m1] = m->done[m2] = true;
    return activation_n(m, nd, index, x, "gelu", hn->output[0], 2);
}

// x * act(x) as one activation: Sigmoid -> silu, HardSigmoid -> hardswish.
static bool try_gated(imp *m, const node_t *nd, int index, const char *fn) {
    if (nd->n_input != 1) return false;
    int c = sole_consumer(m, nd->output[0]);
    if (!is_op(m, c, "Mul") || m->g->node[c]->n_input != 2) return false;
    const node_t *mn = m->g->node[c];
    const char *other = strcmp(mn->input[0], nd->output[0]) ? mn->input[0] : mn->input[1];
    if (strcmp(other, nd->input[0])) return false;
    ivalue *x = input_layer(m, nd, 0);
    if (!x) return false;
    m->done[c] = true;
    return activation_n(m, nd, index, x, fn, mn->output[0], 2);
}

static bool op_binary(imp *m, const node_t *nd, int index, bool mul) {
    ivalue *a = input(m, nd, 0), *b = a ? input(m, nd, 1) : NULL;
    if (!b) return false;
    if (a->layer >= 0 && b->layer >= 0) {
        if (a->nhwc != b->nhwc) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "one input is NHWC, the other NCHW");
        ivalue *ps[2] = {a, b};
        int k = emit(m, nd, index, "Elementwise", LK_ELT, ps, 2);
        cJSON_AddStringToObject(m->l[k].obj, "operation", mul ? "mul" : "sum");
        cJSON_AddNullToObject(m->l[k].obj, "activation_fn");
        bind(m, nd->output[0], k, NULL, a->rank > b->rank ? a->rank : b->rank, a->nhwc);
        return true;
    }
    ivalue *x = a->layer >= 0 ? a : b, *c = a->layer >= 0 ? b : a;
    if (x->layer < 0) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "both inputs are constants");
    // a constant per channel: [C], [C,1,1] or [1,C,1,1] (NCHW), [C] or [1,1,1,C] (NHWC, rank 2)
    int64_t per = 1, nd_ = (int64_t)c->t->n_dims;
    int nontrivial = 0;
    for (int64_t i = 0; i < nd_; i++)
        if (c->t->dims[i] != 1) nontrivial++, per = c->t->dims[i];
    bool chan_ok = nontrivial <= 1 && (nontrivial == 0 || x->nhwc || x->rank == 2
                                       ? c->t->dims[nd_ - 1] == per
                                       : nd_ >= 3 && c->t->dims[nd_ - 3] == per);
    if (!chan_ok || nontrivial == 0)
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "a constant operand must hold one value per channel (SE scales, layer scale, bias)");
    int64_t n;
    float *d = const_floats(m, nd, c->t, &n);
    if (!d) return false;
    elayer *L = fusible(m, x);
    if (!mul) { // a bias for the layer before
        if (!L || (L->kind != LK_CONV && L->kind != LK_FC) || L->bias || L->act || L->bn) {
            free(d);
            return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "adding a constant is supported only as the bias of a Conv, Gemm or MatMul");
        }
        set_item(L->obj, "bias", cJSON_CreateTrue());
        L->bias = true;
        add_weight(m, L->name, "bias", d, n);
        bind(m, nd->output[0], x->layer, NULL, x->rank, x->nhwc);
        return true;
    }
    int k = emit(m, nd, index, "Scale", LK_OTHER, &x, 1);
    add_weight(m, m->l[k].name, "weight", d, n);
    bind(m, nd->output[0], k, NULL, x->rank, x->nhwc);
    return true;
}

static bool op_layernorm(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"axis", "epsilon", "stash_type", NULL};
    if (!attrs_known(m, nd, known)) return false;
    if (nd->n_output > 1) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "the Mean and InvStdDev outputs are not supported");
    ivalue *x = input_layer(m, nd, 0);
    if (!x) return false;
    int64_t ax = attr_int(nd, "axis", -1), rank = x->rank;
    if (ax < 0) ax += rank;
    if (ax != rank - 1 || (rank == 4 && !x->nhwc))
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a LayerNorm over the channels is supported (NHWC between Transposes, axis -1)");
    int k = emit(m, nd, index, "LayerNorm", LK_OTHER, &x, 1);
    cJSON_AddItemToObject(m->l[k].obj, "epsilon", float_num(attr_float(nd, "epsilon", 1e-5)));
    static const char *const what[2] = {"weight", "bias"};
    for (size_t i = 0; i < 2; i++) {
        int64_t n;
        float *d;
        if (i == 1 && (nd->n_input < 3 || !*nd->input[2])) { // no bias: zeros
            n = 0;
            ivalue *s = find_value(m, nd->input[1]);
            n = s && s->layer < 0 ? numel(s->t) : 0;
            d = cb_xcalloc((size_t)(n ? n : 1), sizeof(float));
        } else {
            ivalue *c = input_const(m, nd, i + 1, i ? "bias" : "scale");
            if (!c || !(d = const_floats(m, nd, c->t, &n))) return false;
        }
        add_weight(m, m->l[k].name, what[i], d, n);
    }
    bind(m, nd->output[0], k, NULL, x->rank, x->nhwc);
    return true;
}

static bool op_transpose(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"perm", NULL};
    if (!attrs_known(m, nd, known)) return false;
    ivalue *x = input_layer(m, nd, 0);
    if (!x) return false;
    const Onnx__AttributeProto *a = attr(nd, "perm");
    static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    bool ok = a && a->n_ints == 4 && x->rank == 4 && !memcmp(a->ints, x->nhwc ? to_nchw : to_nhwc, sizeof to_nhwc);
    if (!ok) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a Transpose between NCHW and NHWC around a LayerNorm is supported");
    bind(m, nd->output[0], x->layer, NULL, 4, !x->nhwc);
    m->l[x->layer].out = x->name; // an alias: the layer's output did not move
    return true;
}

static bool op_clip(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"min", "max", NULL};
    if (!attrs_known(m, nd, known)) return false;
    double lo = attr_float(nd, "min", -INFINITY), hi = attr_float(nd, "max", INFINITY);
    bool relu6 = attr(nd, "min") ? lo == 0 && hi == 6
                                 : nd->n_input == 3 && const_is(m, nd, find_value(m, nd->input[1]), 0, 0) &&
                                       const_is(m, nd, find_value(m, nd->input[2]), 6, 0);
    if (!relu6) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only Clip(0, 6) (ReLU6) is supported");
    ivalue *x = input_layer(m, nd, 0);
    return x && activation(m, nd, index, x, "relu6", nd->output[0]);
}

static bool op_node(imp *m, const node_t *nd, int index) {
    const char *op = nd->op_type ? nd->op_type : "";
    if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx"))
        return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "operator domain '%s' is not supported", nd->domain);
    if (nd->n_output < 1) return node_fail(m, nd, CB_STATUS_PARSE, "no outputs");
    static const char *const none[] = {NULL};
    ivalue *x;
    if (!strcmp(op, "Conv")) return op_conv(m, nd, index);
    if (!strcmp(op, "BatchNormalization")) return op_batchnorm(m, nd, index);
    if (!strcmp(op, "MaxPool")) return op_pool(m, nd, index, false);
    if (!strcmp(op, "AveragePool")) return op_pool(m, nd, index, true);
    if (!strcmp(op, "GlobalAveragePool")) return attrs_known(m, nd, none) && op_global_pool(m, nd, index, true);
    if (!strcmp(op, "ReduceMean")) return op_reduce_mean(m, nd, index);
    if (!strcmp(op, "Gemm")) return op_gemm(m, nd, index, false);
    if (!strcmp(op, "MatMul")) return attrs_known(m, nd, none) && op_gemm(m, nd, index, true);
    if (!strcmp(op, "Flatten") || !strcmp(op, "Reshape")) return op_flatten(m, nd, index);
    if (!strcmp(op, "Concat")) return op_concat(m, nd, index);
    if (!strcmp(op, "Add")) return attrs_known(m, nd, none) && op_binary(m, nd, index, false);
    if (!strcmp(op, "Mul")) return attrs_known(m, nd, none) && op_binary(m, nd, index, true);
    if (!strcmp(op, "LayerNormalization")) return op_layernorm(m, nd, index);
    if (!strcmp(op, "Transpose")) return op_transpose(m, nd, index);
    if (!strcmp(op, "Clip")) return op_clip(m, nd, index);
    if (!strcmp(op, "Div")) {
        if (try_gelu(m, nd, index)) return true;
        return m->err->msg[0] ? false : node_fail(m, nd, CB_STATUS_UNSUPPORTED, "Div is supported only inside GELU's Erf form");
    }
    if (!strcmp(op, "Sigmoid") || !strcmp(op, "HardSigmoid")) {
        bool hard = op[0] == 'H';
        static const char *const hk[] = {"alpha", "beta", NULL};
        if (!attrs_known(m, nd, hard ? hk : none)) return false;
        if (hard && (fabs(attr_float(nd, "alpha", 0.2) - 1.0 / 6) > 1e-6 || fabs(attr_float(nd, "beta", 0.5) - 0.5) > 1e-6))
            return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "alpha and beta must be 1/6 and 0.5 (PyTorch's hardsigmoid)");
        if (try_gated(m, nd, index, hard ? "hardswish" : "silu")) return true;
        if (m->err->msg[0]) return false;
        return (x = input_layer(m, nd, 0)) && activation(m, nd, index, x, hard ? "hardsigmoid" : "sigmoid", nd->output[0]);
    }
    if (!strcmp(op, "Relu") || !strcmp(op, "HardSwish")) {
        if (!attrs_known(m, nd, none)) return false;
        return (x = input_layer(m, nd, 0)) && activation(m, nd, index, x, op[0] == 'R' ? "relu" : "hardswish", nd->output[0]);
    }
    if (!strcmp(op, "Gelu")) {
        static const char *const gk[] = {"approximate", NULL};
        if (!attrs_known(m, nd, gk)) return false;
        if (!attr_str_is(nd, "approximate", "none", "none")) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only approximate='none' is supported");
        return (x = input_layer(m, nd, 0)) && activation(m, nd, index, x, "gelu", nd->output[0]);
    }
    if (!strcmp(op, "Dropout")) {
        static const char *const dk[] = {"ratio", "seed", NULL};
        if (!attrs_known(m, nd, dk)) return false;
        if (nd->n_output > 1 && *nd->output[1]) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "the mask output is not supported");
        double ratio = attr_float(nd, "ratio", 0.5);
        if (nd->n_input > 1 && *nd->input[1]) {
            ivalue *r = input_const(m, nd, 1, "ratio");
            int64_t n;
            float *d = r ? const_floats(m, nd, r->t, &n) : NULL;
            if (!d) return false;
            ratio = n == 1 ? d[0] : -1;
            free(d);
        }
        if (!(ratio >= 0 && ratio < 1)) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "ratio must be one value in [0, 1)");
        if (!(x = input_layer(m, nd, 0))) return false;
        int k = emit(m, nd, index, "Dropout", LK_OTHER, &x, 1);
        cJSON_AddItemToObject(m->l[k].obj, "dropout_keep_prob", float_num(1 - ratio));
        bind(m, nd->output[0], k, NULL, x->rank, x->nhwc);
        return true;
    }
    if (!strcmp(op, "Pad")) { // PyTorch writes a zero Pad before some pools
        static const char *const pk[] = {"mode", "pads", "value", NULL};
        if (!attrs_known(m, nd, pk) || !(x = input_layer(m, nd, 0))) return false;
        const Onnx__AttributeProto *a = attr(nd, "pads");
        bool zero = true;
        for (size_t i = 0; a && i < a->n_ints; i++) zero &= a->ints[i] == 0;
        if (!a && nd->n_input > 1) {
            ivalue *pv = input_const(m, nd, 1, "pads");
            int64_t n;
            float *d = pv ? const_floats(m, nd, pv->t, &n) : NULL;
            if (!d) return false;
            for (int64_t i = 0; i < n; i++) zero &= d[i] == 0;
            free(d);
        }
        if (!zero) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only an all-zero Pad is supported (padding belongs to the Conv or pool)");
        bind(m, nd->output[0], x->layer, NULL, x->rank, x->nhwc);
        m->l[x->layer].out = x->name;
        return true;
    }
    if (!strcmp(op, "Identity")) {
        if (!(x = input(m, nd, 0))) return false;
        bind(m, nd->output[0], x->layer, x->t, x->rank, x->nhwc);
        if (x->layer >= 0) m->l[x->layer].out = x->name;
        return true;
    }
    if (!strcmp(op, "Softmax")) {
        static const char *const sk[] = {"axis", NULL};
        if (!attrs_known(m, nd, sk) || !(x = input_layer(m, nd, 0))) return false;
        int64_t ax = attr_int(nd, "axis", -1);
        if (x->rank != 2 || (ax != 1 && ax != -1)) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a softmax over the features of a 2-d tensor is supported");
        int k = emit(m, nd, index, "Softmax", LK_OTHER, &x, 1);
        bind(m, nd->output[0], k, NULL, 2, false);
        return true;
    }
    if (!strcmp(op, "Constant")) {
        static const char *const ck[] = {"value", NULL};
        if (!attrs_known(m, nd, ck)) return false;
        const Onnx__AttributeProto *a = attr(nd, "value");
        if (!a || !a->t) return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a tensor 'value' is supported");
        bind(m, nd->output[0], -1, a->t, 0, false);
        return true;
    }
    return node_fail(m, nd, CB_STATUS_UNSUPPORTED, "operator %s is not supported", op);
}

// ---- the model --------------------------------------------------------------------------------

static unsigned char *read_file(const char *path, size_t *len, cb_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return cb_fail(err, CB_STATUS_IO, path, NULL, "cannot open: %s", strerror(errno)), NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *p = malloc(cap);
    while (p) {
        n += fread(p + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap >= MAX_ONNX_BYTES) {
            free(p), fclose(f);
            return cb_fail(err, CB_STATUS_PARSE, path, NULL, "larger than %zu MiB", MAX_ONNX_BYTES >> 20), NULL;
        }
        unsigned char *q = realloc(p, cap * 2);
        if (!q) free(p);
        p = q;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!p) return cb_fail(err, CB_STATUS_NOMEM, path, NULL, "out of memory reading the file"), NULL;
    if (bad) return free(p), cb_fail(err, CB_STATUS_IO, path, NULL, "read error"), NULL;
    *len = n;
    return p;
}

static bool is_initializer(const Onnx__GraphProto *g, const char *name) {
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return true;
    return false;
}

// The one data input: its layer "data" with the shape [N, H, W, C] or [N, C].
static bool add_input(imp *m, int64_t batch) {
    const Onnx__ValueInfoProto *in = NULL;
    for (size_t i = 0; i < m->g->n_input; i++) {
        const Onnx__ValueInfoProto *v = m->g->input[i];
        if (!v->name || is_initializer(m->g, v->name)) continue;
        if (in) return cb_fail(m->err, CB_STATUS_UNSUPPORTED, m->src, NULL, "graph inputs '%s' and '%s': only one data input is supported", in->name, v->name), false;
        in = v;
    }
    if (!in) return cb_fail(m->err, CB_STATUS_PARSE, m->src, NULL, "the graph has no data input"), false;
    const Onnx__TypeProto *tp = in->type;
    const Onnx__TensorShapeProto *sh = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type ? tp->tensor_type->shape : NULL;
    if (!sh) return cb_fail(m->err, CB_STATUS_UNSUPPORTED, m->src, NULL, "input '%s' has no tensor shape", in->name), false;
    if (tp->tensor_type->has_elem_type && tp->tensor_type->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return cb_fail(m->err, CB_STATUS_UNSUPPORTED, m->src, NULL, "input '%s' has element type %d; float is needed", in->name, tp->tensor_type->elem_type), false;
    if (sh->n_dim != 4 && sh->n_dim != 2)
        return cb_fail(m->err, CB_STATUS_UNSUPPORTED, m->src, NULL, "input '%s' has %zu dimensions; 4 (NCHW) or 2 are supported", in->name, sh->n_dim), false;
    int64_t d[4] = {1, 1, 1, 1};
    for (size_t i = 0; i < sh->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *dm = sh->dim[i];
        bool fixed = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value > 0;
        if (fixed && dm->dim_value > INT32_MAX)
            return cb_fail(m->err, CB_STATUS_SHAPE, m->src, NULL, "input '%s' dimension %zu is too large", in->name, i), false;
        if (fixed) d[i] = dm->dim_value;
        else if (i == 0) d[0] = batch > 0 ? batch : 1; // a symbolic batch: --batch, or 1
        else
            return cb_fail(m->err, CB_STATUS_UNSUPPORTED, m->src, NULL, "input '%s' dimension %zu is dynamic ('%s'): convbench needs fixed shapes (only the batch may be symbolic)",
                           in->name, i, dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? dm->dim_param : "?"), false;
    }
    if (batch > 0) d[0] = batch;
    int k = emit(m, NULL, 0, "Input", LK_OTHER, NULL, 0);
    int64_t t4[4] = {d[0], d[2], d[3], d[1]};
    cJSON_AddItemToObject(m->l[k].obj, "tensor", int_array(t4, (int)sh->n_dim));
    bind(m, in->name, k, NULL, (int)sh->n_dim, false);
    return true;
}

cJSON *cb_onnx_read(const char *path, int64_t batch, cb_net_weights **weights, cb_error *err) {
    cb_error local;
    if (!err) err = &local;
    size_t len = 0;
    unsigned char *buf = read_file(path, &len, err);
    if (!buf) return NULL;
    Onnx__ModelProto *model = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    if (!model) return cb_fail(err, CB_STATUS_PARSE, path, NULL, "not a valid ONNX model (the protobuf does not decode: truncated or corrupt)"), NULL;
    imp m = {.src = path, .err = err};
    m.w = cb_xcalloc(1, sizeof *m.w);
    cJSON *root = NULL;
    bool ok = false;
    if (!model->graph || !model->graph->n_node) {
        cb_fail(err, CB_STATUS_PARSE, path, NULL, "the model has no graph or no nodes");
        goto done;
    }
    for (size_t i = 0; i < model->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = model->opset_import[i];
        if ((!o->domain || !*o->domain) && o->has_version && (o->version < 7 || o->version > 21)) {
            cb_fail(err, CB_STATUS_UNSUPPORTED, path, NULL, "opset %lld is not supported (7 to 21)", (long long)o->version);
            goto done;
        }
    }
    m.g = model->graph;
    for (size_t i = 0; i < m.g->n_node; i++) { // every lookup below may take any node's strings
        const node_t *nd = m.g->node[i];
        bool ok_strings = nd->op_type != NULL;
        for (size_t j = 0; j < nd->n_input; j++) ok_strings &= nd->input[j] != NULL;
        for (size_t j = 0; j < nd->n_output; j++) ok_strings &= nd->output[j] != NULL;
        if (!ok_strings || !nd->n_output || !*nd->output[0]) {
            cb_fail(err, CB_STATUS_PARSE, path, NULL, "node %zu has no operator type or an unnamed output", i);
            goto done;
        }
    }
    m.done = cb_xcalloc(m.g->n_node, sizeof(bool));
    root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", m.g->name && *m.g->name ? m.g->name : path);
    m.layers = cJSON_AddObjectToObject(root, "layers");
    for (size_t i = 0; i < m.g->n_initializer; i++) {
        const tensor_t *t = m.g->initializer[i];
        if (t->name) bind(&m, t->name, -1, t, 0, false);
    }
    if (!add_input(&m, batch)) goto done;
    err->msg[0] = 0;
    for (size_t i = 0; i < m.g->n_node; i++) // constants first: a pattern may look ahead at them
        if (!strcmp(m.g->node[i]->op_type ? m.g->node[i]->op_type : "", "Constant")) {
            if (!op_node(&m, m.g->node[i], (int)i)) goto done;
            m.done[i] = true;
        }
    for (size_t i = 0; i < m.g->n_node; i++)
        if (!m.done[i] && !op_node(&m, m.g->node[i], (int)i)) goto done;
    if (m.g->n_output != 1) {
        cb_fail(err, CB_STATUS_UNSUPPORTED, path, NULL, "%zu graph outputs: one is supported", m.g->n_output);
        goto done;
    }
    ivalue *y = find_value(&m, m.g->output[0]->name ? m.g->output[0]->name : "");
    if (!y || y->layer != m.nl - 1) {
        cb_fail(err, CB_STATUS_UNSUPPORTED, path, NULL, "the graph output '%s' is not the last layer's output", m.g->output[0]->name);
        goto done;
    }
    if (y->nhwc) {
        cb_fail(err, CB_STATUS_UNSUPPORTED, path, NULL, "the graph output '%s' is in NHWC order", y->name);
        goto done;
    }
    ok = true;
done:
    for (int i = 0; i < m.nl; i++) free(m.l[i].name);
    free(m.l);
    free(m.v);
    free(m.done);
    onnx__model_proto__free_unpacked(model, NULL);
    if (!ok) {
        cJSON_Delete(root);
        cb_net_weights_free(m.w);
        return NULL;
    }
    *weights = m.w;
    return root;
}

char *cb_onnx_import(const char *path, int64_t batch, cb_error *err) {
    cb_net_weights *w = NULL;
    cJSON *root = cb_onnx_read(path, batch, &w, err);
    if (!root) return NULL;
    cb_net_weights_free(w);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) cb_fail(err, CB_STATUS_NOMEM, path, NULL, "out of memory printing the description");
    return s;
}

cb_net *cb_onnx_load(const char *path, cb_error *err) {
    cb_net_weights *w = NULL;
    cJSON *root = cb_onnx_read(path, 0, &w, err);
    if (!root) return NULL;
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!s) abort();
    cb_net *net = cb_net_load_string(s, path, err);
    free(s);
    if (!net) cb_net_weights_free(w);
    else net->weights = w;
    return net;
}
