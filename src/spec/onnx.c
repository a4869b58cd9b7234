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
#include "spec/onnx_imp.h"

#include <errno.h>

#define MAX_ONNX_BYTES ((size_t)2 << 30)

// ---- messages ---------------------------------------------------------------------------------

bool ox_node_fail(imp *m, const node_t *nd, cb_status st, const char *fmt, ...) {
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

void ox_add_weight(imp *m, const char *layer, const char *what, float *data, int64_t count) {
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

ivalue *ox_find_value(imp *m, const char *name) {
    for (int i = m->nv - 1; i >= 0; i--)
        if (strcmp(m->v[i].name, name) == 0) return &m->v[i];
    return NULL;
}

void ox_bind(imp *m, const char *name, int layer, const tensor_t *t, int rank, bool nhwc) {
    if (m->nv == m->capv) {
        m->capv = m->capv ? 2 * m->capv : 256;
        m->v = realloc(m->v, sizeof *m->v * (size_t)m->capv);
        if (!m->v) abort();
    }
    m->v[m->nv++] = (ivalue){name, layer, t, rank, nhwc};
    if (layer >= 0) m->l[layer].out = name;
}

// Input i of a node: a value that exists, or an error naming it.
ivalue *ox_input(imp *m, const node_t *nd, size_t i) {
    if (i >= nd->n_input || !*nd->input[i]) {
        ox_node_fail(m, nd, CB_STATUS_PARSE, "missing input %zu", i + 1);
        return NULL;
    }
    ivalue *v = ox_find_value(m, nd->input[i]);
    if (!v) ox_node_fail(m, nd, CB_STATUS_PARSE, "input '%s' is neither a graph input, an initializer nor an earlier node's output", nd->input[i]);
    return v;
}

ivalue *ox_input_layer(imp *m, const node_t *nd, size_t i) {
    ivalue *v = ox_input(m, nd, i);
    if (v && v->layer < 0) {
        ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "input '%s' is a constant where a computed tensor is needed", v->name);
        return NULL;
    }
    if (v && v->nhwc && strcmp(nd->op_type, "Transpose") && strcmp(nd->op_type, "LayerNormalization") &&
        strcmp(nd->op_type, "MatMul") && strcmp(nd->op_type, "Add") && strcmp(nd->op_type, "Mul") &&
        strcmp(nd->op_type, "Div") && strcmp(nd->op_type, "Relu") && strcmp(nd->op_type, "Gelu") &&
        strcmp(nd->op_type, "Sigmoid") && strcmp(nd->op_type, "Identity") && strcmp(nd->op_type, "Dropout")) {
        ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "input '%s' is in NHWC order (after a Transpose): only a LayerNorm, "
                  "MatMul, bias, activation and Transpose back may sit between the two Transposes", v->name);
        return NULL;
    }
    return v;
}

ivalue *ox_input_const(imp *m, const node_t *nd, size_t i, const char *what) {
    ivalue *v = ox_input(m, nd, i);
    if (v && v->layer >= 0) {
        ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "%s '%s' is computed at run time; it must be an initializer", what, v->name);
        return NULL;
    }
    return v;
}

int64_t ox_numel(const tensor_t *t) {
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || (t->dims[i] && n > INT64_MAX / 4 / t->dims[i])) return -1;
        n *= t->dims[i];
    }
    return n;
}

// A constant's values as float32 (FLOAT, DOUBLE, INT64 or INT32 data); the caller frees them.
float *ox_const_floats(imp *m, const node_t *nd, const tensor_t *t, int64_t *count) {
    int64_t n = ox_numel(t);
    const char *nm = t->name ? t->name : "";
    if (n < 0) return ox_node_fail(m, nd, CB_STATUS_PARSE, "constant '%s' has bad dimensions", nm), NULL;
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "constant '%s' is stored in an external file", nm), NULL;
    float *out = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!out) abort();
    int dt = t->has_data_type ? t->data_type : 0;
    size_t width = dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4
                   : dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE || dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? 8 : 0;
    if (!width) {
        free(out);
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "constant '%s' has element type %d (float, double, int32 or int64 needed)", nm, dt), NULL;
    }
    size_t have = t->has_raw_data ? t->raw_data.len / width
                  : dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? t->n_float_data
                  : dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? t->n_double_data
                  : dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? t->n_int64_data : t->n_int32_data;
    if ((int64_t)have != n || (t->has_raw_data && t->raw_data.len % width)) {
        free(out);
        return ox_node_fail(m, nd, CB_STATUS_PARSE, "constant '%s' holds %zu values, its dimensions say %lld", nm, have, (long long)n), NULL;
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
bool ox_const_is(imp *m, const node_t *nd, const ivalue *v, double want, double tol) {
    if (!v || v->layer >= 0 || ox_numel(v->t) != 1) return false;
    int64_t n;
    cb_error quiet, *keep = m->err;
    m->err = &quiet;
    float *f = ox_const_floats(m, nd, v->t, &n);
    m->err = keep;
    bool ok = f && fabs(f[0] - want) <= tol;
    free(f);
    return ok;
}

// ---- attributes -------------------------------------------------------------------------------

const Onnx__AttributeProto *ox_attr(const node_t *nd, const char *name) {
    for (size_t i = 0; i < nd->n_attribute; i++)
        if (nd->attribute[i]->name && strcmp(nd->attribute[i]->name, name) == 0) return nd->attribute[i];
    return NULL;
}

// Every attribute of the node must be in the list (NULL-terminated).
bool ox_attrs_known(imp *m, const node_t *nd, const char *const *known) {
    for (size_t i = 0; i < nd->n_attribute; i++) {
        const char *a = nd->attribute[i]->name ? nd->attribute[i]->name : "";
        bool ok = false;
        for (int k = 0; known && known[k]; k++)
            if (strcmp(known[k], a) == 0) ok = true;
        if (!ok) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "attribute '%s' is not supported", a);
    }
    return true;
}

int64_t ox_attr_int(const node_t *nd, const char *name, int64_t def) {
    const Onnx__AttributeProto *a = ox_attr(nd, name);
    return a && a->has_i ? a->i : def;
}

double ox_attr_float(const node_t *nd, const char *name, double def) {
    const Onnx__AttributeProto *a = ox_attr(nd, name);
    return a && a->has_f ? a->f : def;
}

// An ints attribute of exactly n entries (or absent: def for each); false with an error otherwise.
bool ox_attr_ints(imp *m, const node_t *nd, const char *name, size_t n, int64_t def, int64_t *out) {
    const Onnx__AttributeProto *a = ox_attr(nd, name);
    for (size_t i = 0; i < n; i++) out[i] = def;
    if (!a) return true;
    if (a->n_ints != n)
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "'%s' has %zu entries; a 2-d window needs %zu", name, a->n_ints, n);
    for (size_t i = 0; i < n; i++) {
        if (a->ints[i] < 0 || a->ints[i] > (1 << 20))
            return ox_node_fail(m, nd, CB_STATUS_PARSE, "'%s' entry %lld is out of range", name, (long long)a->ints[i]);
        out[i] = a->ints[i];
    }
    return true;
}

bool ox_attr_str_is(const node_t *nd, const char *name, const char *want, const char *def) {
    const Onnx__AttributeProto *a = ox_attr(nd, name);
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
int ox_emit(imp *m, const node_t *nd, int index, const char *type, lkind kind, ivalue **parents, int np) {
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

cJSON *ox_int_array(const int64_t *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

// A float32 attribute as its shortest decimal (1e-06, not 9.99999997475243e-07)
cJSON *ox_float_num(double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", v);
    return cJSON_CreateNumber(strtod(buf, NULL));
}

void ox_set_item(cJSON *obj, const char *key, cJSON *item) {
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
    else cJSON_AddItemToObject(obj, key, item);
}

// The ONNX tensor t, an output of a layer, has exactly one consumer (no graph output either).
int ox_consumers(const imp *m, const char *t) {
    int c = 0;
    for (size_t i = 0; i < m->g->n_node; i++)
        for (size_t j = 0; j < m->g->node[i]->n_input; j++)
            if (strcmp(m->g->node[i]->input[j], t) == 0) c++;
    for (size_t i = 0; i < m->g->n_output; i++)
        if (m->g->output[i]->name && strcmp(m->g->output[i]->name, t) == 0) c++;
    return c;
}

// The one node consuming t, or -1.
int ox_sole_consumer(const imp *m, const char *t) {
    if (ox_consumers(m, t) != 1) return -1;
    for (size_t i = 0; i < m->g->n_node; i++)
        for (size_t j = 0; j < m->g->node[i]->n_input; j++)
            if (strcmp(m->g->node[i]->input[j], t) == 0) return (int)i;
    return -1;
}

bool ox_is_op(const imp *m, int i, const char *op) { return i >= 0 && strcmp(m->g->node[i]->op_type, op) == 0; }

// The layer producing v, when it can take a fused epilogue: v is its current output and has `uses`
// consumers (1, or the nodes of a pattern like x * Sigmoid(x)).
elayer *ox_fusible_n(imp *m, const ivalue *v, int uses) {
    if (v->layer < 0) return NULL;
    elayer *L = &m->l[v->layer];
    if (L->out != v->name || ox_consumers(m, v->name) != uses) return NULL;
    return L;
}
elayer *ox_fusible(imp *m, const ivalue *v) { return ox_fusible_n(m, v, 1); }

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
    int k = ox_emit(m, NULL, 0, "Input", LK_OTHER, NULL, 0);
    int64_t t4[4] = {d[0], d[2], d[3], d[1]};
    cJSON_AddItemToObject(m->l[k].obj, "tensor", ox_int_array(t4, (int)sh->n_dim));
    ox_bind(m, in->name, k, NULL, (int)sh->n_dim, false);
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
        if (t->name) ox_bind(&m, t->name, -1, t, 0, false);
    }
    if (!add_input(&m, batch)) goto done;
    err->msg[0] = 0;
    for (size_t i = 0; i < m.g->n_node; i++) // constants first: a pattern may look ahead at them
        if (!strcmp(m.g->node[i]->op_type ? m.g->node[i]->op_type : "", "Constant")) {
            if (!ox_op_node(&m, m.g->node[i], (int)i)) goto done;
            m.done[i] = true;
        }
    for (size_t i = 0; i < m.g->n_node; i++)
        if (!m.done[i] && !ox_op_node(&m, m.g->node[i], (int)i)) goto done;
    if (m.g->n_output != 1) {
        cb_fail(err, CB_STATUS_UNSUPPORTED, path, NULL, "%zu graph outputs: one is supported", m.g->n_output);
        goto done;
    }
    ivalue *y = ox_find_value(&m, m.g->output[0]->name ? m.g->output[0]->name : "");
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
