// Reader for Paleo's JSON network descriptions (github.com/TalwalkarLab/paleo, nets/*.json),
// with convbench's extensions: LRN, BatchNorm, ReLU, Reshape, GlobalAvgPool, LayerNorm, Scale
// layers; "bias", "groups", "dilations" on Convolution; "activation_fn" on InnerProduct and
// Elementwise; Elementwise "operation": "mul"; padding [top, left, bottom, right].
//
// Blocks and ModelParallel are expanded as Paleo does: a sub-layer is named "block/sub", a
// ModelParallel copy "block/sub@i"; a block name used as a parent means its endpoint; "x@self"
// is the same split of x, "x@all" every split of x.
#include "core/net.h"
#include "core/act.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/strmap.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    const char *src;              // file name for messages
    cb_error *err;
    cb_layer *layers;
    cb_raw_parents *parents;
    int n, cap;
    // block name -> "block/endpoint"; ModelParallel sub-layer name -> splits
    char **ep_block, **ep_target;
    int nep;
    char **split_name;
    int *split_count;
    int nsplit;
    // hashes of the names above: layer name -> index, block -> index in ep_*, name -> index in split_*
    cb_strmap names, eps, splitmap;
    int64_t refs;                 // parent references so far (CB_MAX_PARENT_REFS)
} reader;

typedef struct type_info {
    const char *type;
    cb_op op;
    const char *keys[12];         // allowed keys besides "type" and "parents"
} type_info;

static const type_info TYPES[] = {
    {"Input", CB_OP_INPUT, {"tensor"}},
    {"Convolution", CB_OP_CONV, {"filter", "padding", "strides", "activation_fn", "normalizer_fn", "bias", "groups", "splits", "dilations"}},
    {"Pooling", CB_OP_POOL, {"ksize", "strides", "padding"}},
    {"AvgPool", CB_OP_POOL, {"ksize", "strides", "padding"}},
    {"GlobalAvgPool", CB_OP_POOL, {0}},
    {"InnerProduct", CB_OP_FC, {"num_outputs", "activation_fn", "bias"}},
    {"Concatenate", CB_OP_CONCAT, {"dim"}},
    {"Elementwise", CB_OP_ADD, {"operation", "activation_fn"}},
    {"Dropout", CB_OP_DROPOUT, {"dropout_keep_prob"}},
    {"Softmax", CB_OP_SOFTMAX, {"num_classes"}},
    {"Reshape", CB_OP_RESHAPE, {"output_shape"}},
    {"LRN", CB_OP_LRN, {"size", "alpha", "beta", "k"}},
    {"BatchNorm", CB_OP_BATCHNORM, {"epsilon"}},
    {"ReLU", CB_OP_ACT, {0}},
    {"Activation", CB_OP_ACT, {"fn"}},
    {"LayerNorm", CB_OP_LAYERNORM, {"epsilon"}},
    {"Scale", CB_OP_SCALE, {0}},
};

static const type_info *find_type(const char *t) {
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (strcmp(TYPES[i].type, t) == 0) return &TYPES[i];
    return NULL;
}

// ---- small JSON accessors -------------------------------------------------------------------

static bool get_int(reader *r, const char *layer, const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble)) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "'%s' must be an integer", key);
        return false;
    }
    double d = v->valuedouble;
    if (d < (double)lo || d > (double)hi) {
        cb_fail(r->err, CB_STATUS_SHAPE, r->src, layer, "'%s' is %.0f, outside [%lld, %lld]", key, d, (long long)lo,
                (long long)hi);
        return false;
    }
    *out = (int64_t)d;
    return true;
}

static bool get_float(reader *r, const char *layer, const cJSON *obj, const char *key, double lo, double hi, double def,
                      float *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) { *out = (float)def; return true; }
    if (!cJSON_IsNumber(v)) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "'%s' must be a number", key);
        return false;
    }
    if (!(v->valuedouble >= lo && v->valuedouble <= hi)) {
        cb_fail(r->err, CB_STATUS_SHAPE, r->src, layer, "'%s' is %g, outside [%g, %g]", key, v->valuedouble, lo, hi);
        return false;
    }
    *out = (float)v->valuedouble;
    return true;
}

// An integer array of length 2 or 4 (Paleo writes [1, h, w, 1]); returns the middle pair.
static bool get_pair(reader *r, const char *layer, const cJSON *obj, const char *key, int *a, int *b, bool required,
                     int def) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (required) {
            cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "missing '%s'", key);
            return false;
        }
        *a = *b = def;
        return true;
    }
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n != 2 && n != 4) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "'%s' must be an array of 2 or 4 integers", key);
        return false;
    }
    int vals[4];
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(v, i);
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble)) {
            cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "'%s' must be an array of integers", key);
            return false;
        }
        if (e->valuedouble < 1 || e->valuedouble > CB_MAX_WINDOW) {
            cb_fail(r->err, CB_STATUS_SHAPE, r->src, layer, "'%s' has %g; sizes must be in [1, %d]", key, e->valuedouble,
                    CB_MAX_WINDOW);
            return false;
        }
        vals[i] = (int)e->valuedouble;
    }
    if (n == 4 && (vals[0] != 1 || vals[3] != 1)) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "'%s' must be [1, h, w, 1]: batch and channel entries must be 1",
                key);
        return false;
    }
    *a = n == 4 ? vals[1] : vals[0];
    *b = n == 4 ? vals[2] : vals[1];
    return true;
}

static bool get_padding(reader *r, const char *layer, const cJSON *obj, cb_window *w) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "padding");
    if (!v) {
        w->mode = CB_PAD_VALID;
        return true;
    }
    if (cJSON_IsString(v)) {
        if (strcmp(v->valuestring, "SAME") == 0) w->mode = CB_PAD_SAME;
        else if (strcmp(v->valuestring, "VALID") == 0) w->mode = CB_PAD_VALID;
        else {
            cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "padding '%s' is neither SAME nor VALID", v->valuestring);
            return false;
        }
        return true;
    }
    int np = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (np == 2 || np == 4) { // [pad_h, pad_w] or [top, left, bottom, right]
        int p[4];
        for (int i = 0; i < np; i++) {
            const cJSON *e = cJSON_GetArrayItem(v, i);
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
                e->valuedouble > CB_MAX_WINDOW) {
                cb_fail(r->err, CB_STATUS_PARSE, r->src, layer,
                        "padding must be SAME, VALID, [pad_h, pad_w] or [top, left, bottom, right] in [0, %d]", CB_MAX_WINDOW);
                return false;
            }
            p[i] = (int)e->valuedouble;
        }
        w->mode = CB_PAD_EXPLICIT;
        w->pad_top = p[0];
        w->pad_left = p[1];
        w->pad_bottom = np == 4 ? p[2] : p[0];
        w->pad_right = np == 4 ? p[3] : p[1];
        return true;
    }
    cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "padding must be SAME, VALID, [pad_h, pad_w] or [top, left, bottom, right]");
    return false;
}

// an activation function named by key ("activation_fn", or an Activation layer's "fn")
static bool get_act(reader *r, const char *layer, const cJSON *obj, const char *key, cb_act def, cb_act *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) { *out = def; return true; }
    if (cJSON_IsNull(v)) { *out = CB_ACT_NONE; return true; }
    if (cJSON_IsString(v) && strcmp(v->valuestring, "ReLU") == 0) return *out = CB_ACT_RELU, true; // Paleo's spelling
    if (cJSON_IsString(v) && strcmp(v->valuestring, "linear") == 0) return *out = CB_ACT_NONE, true;
    if (cJSON_IsString(v) && cb_act_parse(v->valuestring, out)) return true;
    char names[256] = "";
    for (int i = 1; i < CB_ACT_COUNT; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s, ", cb_act_name((cb_act)i));
    cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "unknown %s %s (%snone or null)", key,
            cJSON_IsString(v) ? v->valuestring : "(not a string)", names);
    return false;
}

static bool get_bool(reader *r, const char *layer, const cJSON *obj, const char *key, bool def, bool *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) { *out = def; return true; }
    if (!cJSON_IsBool(v)) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "'%s' must be true or false", key);
        return false;
    }
    *out = cJSON_IsTrue(v);
    return true;
}

// ---- one layer --------------------------------------------------------------------------------

static bool check_keys(reader *r, const char *layer, const cJSON *obj, const type_info *ti) {
    for (const cJSON *k = obj->child; k; k = k->next) {
        if (strcmp(k->string, "type") == 0 || strcmp(k->string, "parents") == 0) continue;
        bool ok = false;
        for (int i = 0; i < 12 && ti->keys[i]; i++)
            if (strcmp(ti->keys[i], k->string) == 0) ok = true;
        if (!ok) {
            cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "unknown key '%s' for a %s layer", k->string, ti->type);
            return false;
        }
    }
    return true;
}

static bool parse_params(reader *r, cb_layer *L, const cJSON *obj, const type_info *ti, int splits) {
    const char *nm = L->name;
    int64_t v;
    L->op = ti->op;
    L->splits = splits;
    switch (ti->op) {
    case CB_OP_INPUT: {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "tensor");
        int n = cJSON_IsArray(t) ? cJSON_GetArraySize(t) : -1;
        if (n != 4 && n != 2) return cb_fail(r->err, CB_STATUS_PARSE, r->src, nm, "'tensor' must be [N, H, W, C] or [N, C]"), false;
        int64_t d[4];
        for (int i = 0; i < n; i++) {
            const cJSON *e = cJSON_GetArrayItem(t, i);
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble))
                return cb_fail(r->err, CB_STATUS_PARSE, r->src, nm, "'tensor' must hold integers"), false;
            if (e->valuedouble < 1 || e->valuedouble > (double)CB_MAX_DIM)
                return cb_fail(r->err, CB_STATUS_SHAPE, r->src, nm, "'tensor' dimension %d is %g; must be in [1, %d]", i,
                               e->valuedouble, CB_MAX_DIM), false;
            d[i] = (int64_t)e->valuedouble;
        }
        if (n == 4) L->out = (cb_shape){4, d[0], d[3], d[1], d[2]};
        else L->out = (cb_shape){2, d[0], d[1], 1, 1};
        return true;
    }
    case CB_OP_CONV: {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(obj, "filter");
        if (!cJSON_IsArray(f) || cJSON_GetArraySize(f) != 4)
            return cb_fail(r->err, CB_STATUS_PARSE, r->src, nm, "'filter' must be [H, W, Cin, Cout]"), false;
        int64_t d[4];
        for (int i = 0; i < 4; i++) {
            const cJSON *e = cJSON_GetArrayItem(f, i);
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble))
                return cb_fail(r->err, CB_STATUS_PARSE, r->src, nm, "'filter' must hold integers"), false;
            double x = e->valuedouble, hi = i < 2 ? CB_MAX_WINDOW : CB_MAX_CHANNELS;
            if (!((x >= 1 && x <= hi) || (i == 2 && x == -1))) // checked as a double: no cast of 1e30
                return cb_fail(r->err, CB_STATUS_SHAPE, r->src, nm, "'filter' dimension %d is %g; must be in [1, %.0f]%s", i,
                               x, hi, i == 2 ? " or -1" : ""), false;
            d[i] = (int64_t)x;
        }
        L->p.conv.win.r = (int)d[0];
        L->p.conv.win.s = (int)d[1];
        L->p.conv.cin = (int)d[2];
        L->p.conv.k = (int)d[3];
        if (splits > 1) {
            if (L->p.conv.k % splits)
                return cb_fail(r->err, CB_STATUS_SHAPE, r->src, nm, "%d filters do not split %d ways", L->p.conv.k, splits), false;
            L->p.conv.k /= splits; // Paleo's split_model
        }
        if (!get_pair(r, nm, obj, "strides", &L->p.conv.win.stride_h, &L->p.conv.win.stride_w, false, 1)) return false;
        if (!get_pair(r, nm, obj, "dilations", &L->p.conv.dil_h, &L->p.conv.dil_w, false, 1)) return false;
        if (!get_padding(r, nm, obj, &L->p.conv.win)) return false;
        if (!get_act(r, nm, obj, "activation_fn", CB_ACT_RELU, &L->act)) return false; // Paleo's default is relu
        // Paleo's overfeat.json writes "bias": [Cout], which Paleo ignores: a list means "has a bias"
        if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(obj, "bias"))) L->p.conv.bias = true;
        else if (!get_bool(r, nm, obj, "bias", true, &L->p.conv.bias)) return false;
        L->p.conv.groups = 1;
        if (cJSON_GetObjectItemCaseSensitive(obj, "groups")) {
            if (!get_int(r, nm, obj, "groups", 1, CB_MAX_GROUPS, &v)) return false;
            L->p.conv.groups = (int)v;
        }
        const cJSON *nf = cJSON_GetObjectItemCaseSensitive(obj, "normalizer_fn");
        if (nf && !cJSON_IsNull(nf)) {
            if (!cJSON_IsString(nf) || (strcmp(nf->valuestring, "batch_norm") && strcmp(nf->valuestring, "BatchNorm")))
                return cb_fail(r->err, CB_STATUS_PARSE, r->src, nm, "unknown normalizer_fn (batch_norm or null)"), false;
            L->bn = true;
            L->bn_eps = 1e-5f;
        }
        return true;
    }
    case CB_OP_POOL:
        L->p.pool.avg = strcmp(ti->type, "Pooling") != 0;
        if ((L->p.pool.global = strcmp(ti->type, "GlobalAvgPool") == 0)) return true; // the window: cb_net_infer
        if (!get_pair(r, nm, obj, "ksize", &L->p.pool.win.r, &L->p.pool.win.s, true, 1)) return false;
        if (!get_pair(r, nm, obj, "strides", &L->p.pool.win.stride_h, &L->p.pool.win.stride_w, false, 1)) return false;
        return get_padding(r, nm, obj, &L->p.pool.win);
    case CB_OP_FC:
        if (!get_int(r, nm, obj, "num_outputs", 1, CB_MAX_FC_OUTPUTS, &v)) return false;
        L->p.fc.k = (int)v;
        if (!get_bool(r, nm, obj, "bias", true, &L->p.fc.bias)) return false;
        return get_act(r, nm, obj, "activation_fn", CB_ACT_NONE, &L->act);
    case CB_OP_CONCAT:
        if (!get_int(r, nm, obj, "dim", -4, 3, &v)) return false;
        L->p.concat.dim = (int)v;
        return true;
    case CB_OP_ADD: {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, "operation");
        if (cJSON_IsString(o) && (strcmp(o->valuestring, "mul") == 0 || strcmp(o->valuestring, "prod") == 0)) L->op = CB_OP_MUL;
        else if (o && !(cJSON_IsString(o) && (strcmp(o->valuestring, "sum") == 0 || strcmp(o->valuestring, "add") == 0)))
            return cb_fail(r->err, CB_STATUS_UNSUPPORTED, r->src, nm, "Elementwise operation must be \"sum\" or \"mul\""), false;
        return get_act(r, nm, obj, "activation_fn", CB_ACT_NONE, &L->act);
    }
    case CB_OP_LAYERNORM:
        return get_float(r, nm, obj, "epsilon", 1e-12, 1.0, 1e-5, &L->p.ln.eps);
    case CB_OP_DROPOUT:
        return get_float(r, nm, obj, "dropout_keep_prob", 1e-6, 1.0, 0.5, &L->p.dropout.keep);
    case CB_OP_SOFTMAX:
        L->p.softmax.classes = 0;
        if (cJSON_GetObjectItemCaseSensitive(obj, "num_classes")) {
            if (!get_int(r, nm, obj, "num_classes", 1, CB_MAX_DIM, &v)) return false;
            L->p.softmax.classes = (int)v;
        }
        return true;
    case CB_OP_RESHAPE: {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, "output_shape");
        int n = cJSON_IsArray(s) ? cJSON_GetArraySize(s) : -1;
        if (n != 2 && n != 4) return cb_fail(r->err, CB_STATUS_PARSE, r->src, nm, "'output_shape' must be [N, H, W, C] or [N, C]"), false;
        int64_t d[4] = {1, 1, 1, 1};
        for (int i = 0; i < n; i++) {
            const cJSON *e = cJSON_GetArrayItem(s, i);
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < -1 || e->valuedouble == 0 ||
                e->valuedouble > (double)CB_MAX_DIM)
                return cb_fail(r->err, CB_STATUS_SHAPE, r->src, nm, "'output_shape' entries must be -1 or integers in [1, %d]",
                               CB_MAX_DIM), false;
            d[i] = (int64_t)e->valuedouble;
        }
        // stored in out, resolved against the input by cb_net_infer; -1 means "the rest"
        if (n == 4) L->out = (cb_shape){4, d[0], d[3], d[1], d[2]};
        else L->out = (cb_shape){2, d[0], d[1], 1, 1};
        return true;
    }
    case CB_OP_LRN:
        if (cJSON_GetObjectItemCaseSensitive(obj, "size")) {
            if (!get_int(r, nm, obj, "size", 1, 1023, &v)) return false;
            L->p.lrn.size = (int)v;
        } else L->p.lrn.size = 5;
        if (L->p.lrn.size % 2 == 0) return cb_fail(r->err, CB_STATUS_SHAPE, r->src, nm, "LRN size must be odd"), false;
        return get_float(r, nm, obj, "alpha", 0, 1e6, 1e-4, &L->p.lrn.alpha) &&
               get_float(r, nm, obj, "beta", 0, 1e3, 0.75, &L->p.lrn.beta) &&
               get_float(r, nm, obj, "k", 1e-9, 1e6, 2.0, &L->p.lrn.k);
    case CB_OP_BATCHNORM:
        return get_float(r, nm, obj, "epsilon", 1e-12, 1.0, 1e-5, &L->p.bn.eps);
    case CB_OP_ACT: // ReLU, or Activation with its "fn" (required)
        if (strcmp(ti->type, "ReLU") == 0) return L->p.act.fn = CB_ACT_RELU, true;
        if (!cJSON_GetObjectItemCaseSensitive(obj, "fn"))
            return cb_fail(r->err, CB_STATUS_PARSE, r->src, nm, "an Activation layer needs \"fn\""), false;
        if (!get_act(r, nm, obj, "fn", CB_ACT_NONE, &L->p.act.fn)) return false;
        if (L->p.act.fn == CB_ACT_NONE) return cb_fail(r->err, CB_STATUS_PARSE, r->src, nm, "\"fn\" names no function"), false;
        return true;
    case CB_OP_SCALE:
    case CB_OP_MUL: // from an Elementwise entry
        return true;
    case CB_OP_COUNT: break;
    }
    return false;
}

// ---- expansion of blocks ----------------------------------------------------------------------

static const char *endpoint_of(reader *r, const char *name) {
    int i = cb_strmap_get(&r->eps, name);
    return i < 0 ? name : r->ep_target[i];
}

static int splits_of(reader *r, const char *name) {
    int i = cb_strmap_get(&r->splitmap, name);
    return i < 0 ? 0 : r->split_count[i];
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = cb_xcalloc((size_t)n + 1, 1);
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return s;
}

static void push_parent(cb_raw_parents *p, char *name) {
    p->names = realloc(p->names, sizeof(char *) * (size_t)(p->n + 1));
    if (!p->names) abort();
    p->names[p->n++] = name;
}

// a layer's parents grow by k references: within CB_MAX_PARENT_REFS for the whole network?
static bool refs_ok(reader *r, const char *layer, int64_t k) {
    r->refs += k;
    if (r->refs <= CB_MAX_PARENT_REFS) return true;
    cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "more than %d parent references in the network (after \"@all\" expansion)",
            CB_MAX_PARENT_REFS);
    return false;
}

// Paleo's _parents(): block names become endpoints, @all and @self expand to splits.
static bool add_parent(reader *r, const char *layer, cb_raw_parents *out, const char *pname, int split) {
    size_t len = strlen(pname);
    if (len > 4 && strcmp(pname + len - 4, "@all") == 0) {
        char *base = fmt("%.*s", (int)(len - 4), pname);
        int s = splits_of(r, base);
        if (!s) {
            cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "parent '%s': '%s' is not a ModelParallel layer", pname, base);
            free(base);
            return false;
        }
        bool ok = refs_ok(r, layer, s);
        for (int i = 0; ok && i < s; i++) push_parent(out, fmt("%s@%d", endpoint_of(r, base), i));
        free(base);
        return ok;
    }
    if (len > 5 && strcmp(pname + len - 5, "@self") == 0) {
        char *base = fmt("%.*s", (int)(len - 5), pname);
        if (!splits_of(r, base) || split < 0) {
            cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "parent '%s': '%s' is not split", pname, base);
            free(base);
            return false;
        }
        bool ok = refs_ok(r, layer, 1);
        if (ok) push_parent(out, fmt("%s@%d", endpoint_of(r, base), split));
        free(base);
        return ok;
    }
    if (!refs_ok(r, layer, 1)) return false;
    push_parent(out, cb_strdup(endpoint_of(r, pname)));
    return true;
}

static bool read_parents(reader *r, const char *layer, const cJSON *obj, const char *prefix, const cb_raw_parents *block,
                         int split, cb_raw_parents *out) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(obj, "parents");
    if (!cJSON_IsArray(p)) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "'parents' must be an array of layer names");
        return false;
    }
    if (cJSON_GetArraySize(p) == 0 && block) {
        if (!refs_ok(r, layer, block->n)) return false;
        for (int i = 0; i < block->n; i++) push_parent(out, cb_strdup(block->names[i]));
        return true;
    }
    for (const cJSON *e = p->child; e; e = e->next) {
        if (!cJSON_IsString(e)) {
            cb_fail(r->err, CB_STATUS_PARSE, r->src, layer, "'parents' must hold strings");
            return false;
        }
        char *full = prefix ? fmt("%s/%s", prefix, e->valuestring) : cb_strdup(e->valuestring);
        bool ok = add_parent(r, layer, out, full, split);
        free(full);
        if (!ok) return false;
    }
    return true;
}

static bool add_layer(reader *r, char *name, const cJSON *obj, const char *prefix, const cb_raw_parents *block, int split,
                      int splits) {
    if (!cJSON_IsObject(obj)) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, name, "a layer must be a JSON object");
        free(name);
        return false;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "type");
    if (!cJSON_IsString(t)) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, name, "missing 'type'");
        free(name);
        return false;
    }
    const type_info *ti = find_type(t->valuestring);
    if (!ti) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, name, "unknown layer type '%s'", t->valuestring);
        free(name);
        return false;
    }
    if (cb_strmap_get(&r->names, name) >= 0) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, name, "duplicate layer name");
        free(name);
        return false;
    }
    if (r->n == CB_MAX_LAYERS) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, name, "more than %d layers (after Block and ModelParallel expansion)",
                CB_MAX_LAYERS);
        free(name);
        return false;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->layers = realloc(r->layers, sizeof(cb_layer) * (size_t)r->cap);
        r->parents = realloc(r->parents, sizeof(cb_raw_parents) * (size_t)r->cap);
        if (!r->layers || !r->parents) abort();
    }
    cb_layer *L = &r->layers[r->n];
    cb_raw_parents *P = &r->parents[r->n];
    memset(L, 0, sizeof *L);
    memset(P, 0, sizeof *P);
    L->name = name;
    cb_strmap_put(&r->names, name, r->n);
    L->split = split < 0 ? 0 : split;
    L->splits = 1;
    r->n++;
    if (!check_keys(r, name, obj, ti)) return false;
    if (!read_parents(r, name, obj, prefix, block, split, P)) return false;
    return parse_params(r, L, obj, ti, splits);
}

static bool add_block(reader *r, const char *bname, const cJSON *obj, bool model_parallel) {
    for (const cJSON *k = obj->child; k; k = k->next) {
        const char *ok[] = {"type", "parents", "layers", "endpoint", "splits"};
        bool good = false;
        for (int i = 0; i < (model_parallel ? 5 : 4); i++)
            if (strcmp(k->string, ok[i]) == 0) good = true;
        if (!good)
            return cb_fail(r->err, CB_STATUS_PARSE, r->src, bname, "unknown key '%s' for a %s", k->string,
                           model_parallel ? "ModelParallel block" : "Block"), false;
    }
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(obj, "layers");
    if (!cJSON_IsObject(subs) || !subs->child)
        return cb_fail(r->err, CB_STATUS_PARSE, r->src, bname, "a block needs a non-empty 'layers' object"), false;
    int64_t splits = 1;
    if (model_parallel && cJSON_GetObjectItemCaseSensitive(obj, "splits") &&
        !get_int(r, bname, obj, "splits", 1, CB_MAX_SPLITS, &splits))
        return false;
    int64_t nsub = 0;
    for (const cJSON *sub = subs->child; sub; sub = sub->next) nsub++;
    if (splits * nsub > CB_MAX_MP_LAYERS)
        return cb_fail(r->err, CB_STATUS_PARSE, r->src, bname, "%lld splits of %lld layers expand to %lld layers, more than %d",
                       (long long)splits, (long long)nsub, (long long)(splits * nsub), CB_MAX_MP_LAYERS), false;
    cb_raw_parents bp = {0};
    bool good = read_parents(r, bname, obj, NULL, NULL, -1, &bp);
    // sub-layers with "parents": [] take the block's parents, in every split: refused before
    // the copies are made when that alone passes CB_MAX_PARENT_REFS
    int64_t inherit = 0;
    for (const cJSON *sub = subs->child; sub; sub = sub->next) {
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(sub, "parents");
        if (cJSON_IsArray(sp) && !sp->child) inherit += (int64_t)bp.n * splits;
    }
    if (good && r->refs + inherit > CB_MAX_PARENT_REFS) {
        cb_fail(r->err, CB_STATUS_PARSE, r->src, bname, "more than %d parent references in the network (after \"@all\" expansion)",
                CB_MAX_PARENT_REFS);
        good = false;
    }
    for (int s = 0; good && s < splits; s++)
        for (const cJSON *sub = subs->child; good && sub; sub = sub->next) {
            char *nm = model_parallel ? fmt("%s/%s@%d", bname, sub->string, s) : fmt("%s/%s", bname, sub->string);
            if (cJSON_IsObject(sub) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(sub, "type")) &&
                (!strcmp(cJSON_GetObjectItemCaseSensitive(sub, "type")->valuestring, "Block") ||
                 !strcmp(cJSON_GetObjectItemCaseSensitive(sub, "type")->valuestring, "ModelParallel"))) {
                cb_fail(r->err, CB_STATUS_UNSUPPORTED, r->src, nm, "blocks inside blocks are not supported (nor by Paleo)");
                free(nm);
                good = false;
                break;
            }
            good = add_layer(r, nm, sub, bname, &bp, model_parallel ? s : -1, model_parallel ? (int)splits : 1);
        }
    for (int i = 0; i < bp.n; i++) free(bp.names[i]);
    free(bp.names);
    return good;
}

// First pass: endpoints and split counts, so that any layer may name a block before or after it.
static bool scan_blocks(reader *r, const cJSON *layers) {
    for (const cJSON *l = layers->child; l; l = l->next) {
        const cJSON *t = cJSON_IsObject(l) ? cJSON_GetObjectItemCaseSensitive(l, "type") : NULL;
        if (!cJSON_IsString(t)) continue;
        bool mp = strcmp(t->valuestring, "ModelParallel") == 0;
        if (!mp && strcmp(t->valuestring, "Block") != 0) continue;
        const cJSON *ep = cJSON_GetObjectItemCaseSensitive(l, "endpoint");
        if (ep) {
            if (!cJSON_IsString(ep)) return cb_fail(r->err, CB_STATUS_PARSE, r->src, l->string, "'endpoint' must be a string"), false;
            const cJSON *subs = cJSON_GetObjectItemCaseSensitive(l, "layers");
            if (!cJSON_GetObjectItemCaseSensitive(subs, ep->valuestring))
                return cb_fail(r->err, CB_STATUS_PARSE, r->src, l->string, "endpoint '%s' is not a layer of the block",
                               ep->valuestring), false;
            r->ep_block = realloc(r->ep_block, sizeof(char *) * (size_t)(r->nep + 1));
            r->ep_target = realloc(r->ep_target, sizeof(char *) * (size_t)(r->nep + 1));
            if (!r->ep_block || !r->ep_target) abort();
            r->ep_block[r->nep] = cb_strdup(l->string);
            r->ep_target[r->nep] = fmt("%s/%s", l->string, ep->valuestring);
            cb_strmap_put(&r->eps, r->ep_block[r->nep], r->nep);
            r->nep++;
        }
        if (mp) {
            const cJSON *sp = cJSON_GetObjectItemCaseSensitive(l, "splits");
            int s = cJSON_IsNumber(sp) && sp->valuedouble >= 1 && sp->valuedouble <= CB_MAX_SPLITS ? (int)sp->valuedouble : 1;
            const cJSON *subs = cJSON_GetObjectItemCaseSensitive(l, "layers");
            for (const cJSON *sub = cJSON_IsObject(subs) ? subs->child : NULL; sub; sub = sub->next) {
                r->split_name = realloc(r->split_name, sizeof(char *) * (size_t)(r->nsplit + 1));
                r->split_count = realloc(r->split_count, sizeof(int) * (size_t)(r->nsplit + 1));
                if (!r->split_name || !r->split_count) abort();
                r->split_name[r->nsplit] = fmt("%s/%s", l->string, sub->string);
                r->split_count[r->nsplit] = s;
                cb_strmap_put(&r->splitmap, r->split_name[r->nsplit], r->nsplit);
                r->nsplit++;
            }
            if (ep) { // the block's own name also splits, through its endpoint
                r->split_name = realloc(r->split_name, sizeof(char *) * (size_t)(r->nsplit + 1));
                r->split_count = realloc(r->split_count, sizeof(int) * (size_t)(r->nsplit + 1));
                if (!r->split_name || !r->split_count) abort();
                r->split_name[r->nsplit] = cb_strdup(l->string);
                r->split_count[r->nsplit] = s;
                cb_strmap_put(&r->splitmap, r->split_name[r->nsplit], r->nsplit);
                r->nsplit++;
            }
        }
    }
    return true;
}

static void reader_free(reader *r, bool keep_layers) {
    cb_strmap_free(&r->names);
    cb_strmap_free(&r->eps);
    cb_strmap_free(&r->splitmap);
    for (int i = 0; i < r->nep; i++) free(r->ep_block[i]), free(r->ep_target[i]);
    for (int i = 0; i < r->nsplit; i++) free(r->split_name[i]);
    free(r->ep_block);
    free(r->ep_target);
    free(r->split_name);
    free(r->split_count);
    if (!keep_layers) {
        for (int i = 0; i < r->n; i++) {
            free(r->layers[i].name);
            for (int j = 0; j < r->parents[i].n; j++) free(r->parents[i].names[j]);
            free(r->parents[i].names);
        }
        free(r->layers);
        free(r->parents);
    }
}

cb_net *cb_net_load_string(const char *json, const char *source, cb_error *err) {
    cJSON *root = cb_json_parse(json, source, err);
    if (!root) return NULL;
    reader r = {.src = source, .err = err};
    cb_net *net = NULL;
    if (!cJSON_IsObject(root)) {
        cb_fail(err, CB_STATUS_PARSE, source, NULL, "the top level must be an object with \"name\" and \"layers\"");
        goto done;
    }
    for (const cJSON *k = root->child; k; k = k->next)
        if (strcmp(k->string, "name") && strcmp(k->string, "layers")) {
            cb_fail(err, CB_STATUS_PARSE, source, NULL, "unknown top-level key '%s' (expected \"name\", \"layers\")", k->string);
            goto done;
        }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (name && !cJSON_IsString(name)) {
        cb_fail(err, CB_STATUS_PARSE, source, NULL, "\"name\" must be a string");
        goto done;
    }
    if (!cJSON_IsObject(layers) || !layers->child) {
        cb_fail(err, CB_STATUS_PARSE, source, NULL, "\"layers\" must be a non-empty object");
        goto done;
    }
    if (!scan_blocks(&r, layers)) goto fail;
    for (const cJSON *l = layers->child; l; l = l->next) {
        const cJSON *t = cJSON_IsObject(l) ? cJSON_GetObjectItemCaseSensitive(l, "type") : NULL;
        bool ok;
        if (cJSON_IsString(t) && strcmp(t->valuestring, "Block") == 0) ok = add_block(&r, l->string, l, false);
        else if (cJSON_IsString(t) && strcmp(t->valuestring, "ModelParallel") == 0) ok = add_block(&r, l->string, l, true);
        else ok = add_layer(&r, cb_strdup(l->string), l, NULL, NULL, -1, 1);
        if (!ok) goto fail;
    }
    reader_free(&r, true);
    net = cb_net_build(cb_strdup(name ? name->valuestring : source), source, r.layers, r.parents, r.n, err);
    goto done;
fail:
    reader_free(&r, false);
done:
    cJSON_Delete(root);
    return net;
}

static bool is_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

cb_net *cb_net_load(const char *spec, cb_error *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s", spec);
    if (!is_file(path) && !strchr(spec, '/')) { // a built-in name
        const char *dirs = cb_nets_path();
        const char *d = dirs;
        while (d && *d) {
            const char *c = strchr(d, ':');
            int len = c ? (int)(c - d) : (int)strlen(d);
            const char *ext = strstr(spec, ".json") ? "" : ".json";
            snprintf(path, sizeof path, "%.*s/%s%s", len, d, spec, ext);
            if (is_file(path)) break;
            d = c ? c + 1 : NULL;
            snprintf(path, sizeof path, "%s", spec);
        }
    }
    if (!is_file(path)) {
        cb_fail(err, CB_STATUS_IO, spec, NULL, "cannot open: %s (not a file, nor a built-in network in %s)", strerror(errno),
                cb_nets_path());
        return NULL;
    }
    size_t plen = strlen(path);
    if (plen > 5 && strcmp(path + plen - 5, ".onnx") == 0) return cb_onnx_load(path, err);
    char *buf = cb_read_text(path, err);
    if (!buf) return NULL;
    cb_net *net = cb_net_load_string(buf, path, err);
    free(buf);
    return net;
}
