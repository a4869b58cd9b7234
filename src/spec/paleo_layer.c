// The Paleo reader's one-layer part: the layer types and their keys, the checked JSON accessors
// and each type's parameters. Blocks, parents and loading are in paleo.c.
#include "spec/paleo_reader.h"
#include "core/act.h"
#include "core/json.h"
#include "core/limits.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const type_info *paleo_find_type(const char *t) {
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (strcmp(TYPES[i].type, t) == 0) return &TYPES[i];
    return NULL;
}

// ---- small JSON accessors -------------------------------------------------------------------

bool paleo_get_int(reader *r, const char *layer, const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *out) {
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

bool paleo_check_keys(reader *r, const char *layer, const cJSON *obj, const type_info *ti) {
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

bool paleo_parse_params(reader *r, cb_layer *L, const cJSON *obj, const type_info *ti, int splits) {
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
            if (!paleo_get_int(r, nm, obj, "groups", 1, CB_MAX_GROUPS, &v)) return false;
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
        if (!paleo_get_int(r, nm, obj, "num_outputs", 1, CB_MAX_FC_OUTPUTS, &v)) return false;
        L->p.fc.k = (int)v;
        if (!get_bool(r, nm, obj, "bias", true, &L->p.fc.bias)) return false;
        return get_act(r, nm, obj, "activation_fn", CB_ACT_NONE, &L->act);
    case CB_OP_CONCAT:
        if (!paleo_get_int(r, nm, obj, "dim", -4, 3, &v)) return false;
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
            if (!paleo_get_int(r, nm, obj, "num_classes", 1, CB_MAX_DIM, &v)) return false;
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
            if (!paleo_get_int(r, nm, obj, "size", 1, 1023, &v)) return false;
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
