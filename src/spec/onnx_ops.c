// ONNX import: one converter per operator, and the patterns that fold several nodes into one
// layer or epilogue (see src/spec/onnx.c for the whole).
#include "spec/onnx_imp.h"

// ---- operators --------------------------------------------------------------------------------

// An activation fn on value x, its result named out: fused into x's layer when it can be (x has
// `uses` consumers, all inside the activation's pattern).
static bool activation_n(imp *m, const node_t *nd, int index, ivalue *x, const char *fn, const char *out, int uses) {
    elayer *L = ox_fusible_n(m, x, uses);
    if (L && (L->kind == LK_CONV || L->kind == LK_FC || L->kind == LK_ELT) && !L->act) {
        ox_set_item(L->obj, "activation_fn", cJSON_CreateString(fn));
        L->act = true;
        ox_bind(m, out, x->layer, NULL, x->rank, x->nhwc);
        return true;
    }
    int k = ox_emit(m, nd, index, strcmp(fn, "relu") ? "Activation" : "ReLU", LK_OTHER, &x, 1);
    if (strcmp(fn, "relu")) cJSON_AddStringToObject(m->l[k].obj, "fn", fn);
    ox_bind(m, out, k, NULL, x->rank, x->nhwc);
    return true;
}
static bool activation(imp *m, const node_t *nd, int index, ivalue *x, const char *fn, const char *out) {
    return activation_n(m, nd, index, x, fn, out, 1);
}

// Pads, strides and dilations of a Conv or pooling node into Paleo's keys.
static bool window(imp *m, const node_t *nd, cJSON *obj, bool dilation) {
    int64_t pads[4], strides[2], dil[2];
    if (!ox_attr_ints(m, nd, "pads", 4, 0, pads) || !ox_attr_ints(m, nd, "strides", 2, 1, strides) ||
        !ox_attr_ints(m, nd, "dilations", 2, 1, dil))
        return false;
    if (strides[0] < 1 || strides[1] < 1) return ox_node_fail(m, nd, CB_STATUS_PARSE, "strides must be positive");
    if (dil[0] != 1 || dil[1] != 1) {
        if (!dilation) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "dilations other than 1 are not supported on pooling");
        if (dil[0] < 1 || dil[1] < 1) return ox_node_fail(m, nd, CB_STATUS_PARSE, "dilations must be positive");
        cJSON_AddItemToObject(obj, "dilations", ox_int_array(dil, 2));
    }
    int64_t st4[4] = {1, strides[0], strides[1], 1};
    cJSON_AddItemToObject(obj, "strides", ox_int_array(st4, 4));
    const Onnx__AttributeProto *ap = ox_attr(nd, "auto_pad");
    if (ap && ap->has_s && !ox_attr_str_is(nd, "auto_pad", "NOTSET", "NOTSET")) {
        if (ox_attr(nd, "pads")) return ox_node_fail(m, nd, CB_STATUS_PARSE, "both auto_pad and pads are given");
        if (ox_attr_str_is(nd, "auto_pad", "VALID", "")) cJSON_AddStringToObject(obj, "padding", "VALID");
        else if (ox_attr_str_is(nd, "auto_pad", "SAME_UPPER", "")) cJSON_AddStringToObject(obj, "padding", "SAME");
        else return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "auto_pad '%.*s' is not supported (NOTSET, VALID, SAME_UPPER)",
                              (int)ap->s.len, (const char *)ap->s.data);
        return true;
    }
    if (!pads[0] && !pads[1] && !pads[2] && !pads[3]) cJSON_AddStringToObject(obj, "padding", "VALID");
    else if (pads[0] == pads[2] && pads[1] == pads[3]) cJSON_AddItemToObject(obj, "padding", ox_int_array(pads, 2));
    else { // ONNX orders them [top, left, bottom, right], as convbench's 4-entry form
        cJSON_AddItemToObject(obj, "padding", ox_int_array(pads, 4));
    }
    return true;
}

static bool op_conv(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", NULL};
    if (!ox_attrs_known(m, nd, known)) return false;
    ivalue *x = ox_input_layer(m, nd, 0), *w = x ? ox_input_const(m, nd, 1, "weight") : NULL;
    ivalue *b = w && nd->n_input > 2 && *nd->input[2] ? ox_input_const(m, nd, 2, "bias") : NULL;
    if (!w || (nd->n_input > 2 && *nd->input[2] && !b)) return false;
    if (w->t->n_dims != 4) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "a %zu-d weight: only 2-d convolutions (4-d weights) are supported", w->t->n_dims);
    int64_t g = ox_attr_int(nd, "group", 1), K = w->t->dims[0];
    if (g < 1 || K % g) return ox_node_fail(m, nd, CB_STATUS_PARSE, "group %lld does not divide %lld filters", (long long)g, (long long)K);
    int64_t ks[2];
    if (!ox_attr_ints(m, nd, "kernel_shape", 2, 0, ks)) return false;
    if (ox_attr(nd, "kernel_shape") && (ks[0] != w->t->dims[2] || ks[1] != w->t->dims[3]))
        return ox_node_fail(m, nd, CB_STATUS_PARSE, "kernel_shape disagrees with the weight's dimensions");
    int k = ox_emit(m, nd, index, "Convolution", LK_CONV, &x, 1);
    elayer *L = &m->l[k];
    int64_t f[4] = {w->t->dims[2], w->t->dims[3], w->t->dims[1], K};
    cJSON_AddItemToObject(L->obj, "filter", ox_int_array(f, 4));
    if (!window(m, nd, L->obj, true)) return false;
    cJSON_AddNullToObject(L->obj, "activation_fn");
    if (g > 1) cJSON_AddNumberToObject(L->obj, "groups", (double)g);
    int64_t n;
    float *wd = ox_const_floats(m, nd, w->t, &n); // (K, C/g, R, S): the engine's layout
    if (!wd) return false;
    ox_add_weight(m, L->name, "weight", wd, n);
    if (b) {
        float *bd = ox_const_floats(m, nd, b->t, &n);
        if (!bd) return false;
        if (n != K) return free(bd), ox_node_fail(m, nd, CB_STATUS_SHAPE, "bias has %lld values for %lld filters", (long long)n, (long long)K);
        ox_add_weight(m, L->name, "bias", bd, n);
        L->bias = true;
    } else cJSON_AddFalseToObject(L->obj, "bias");
    ox_bind(m, nd->output[0], k, NULL, 4, false);
    return true;
}

static bool op_batchnorm(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"epsilon", "momentum", "training_mode", "spatial", NULL};
    if (!ox_attrs_known(m, nd, known)) return false;
    if (ox_attr_int(nd, "training_mode", 0) != 0 || nd->n_output > 1)
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "training mode (batch statistics as outputs) is not supported");
    if (ox_attr_int(nd, "spatial", 1) != 1) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "spatial=0 is not supported");
    ivalue *x = ox_input_layer(m, nd, 0);
    if (!x) return false;
    static const char *const what[4] = {"bn_scale", "bn_shift", "bn_mean", "bn_var"};
    float *d[4] = {0};
    int64_t n[4];
    for (int i = 0; i < 4; i++) {
        ivalue *c = ox_input_const(m, nd, (size_t)i + 1, what[i]);
        if (!c || !(d[i] = ox_const_floats(m, nd, c->t, &n[i]))) {
            for (int j = 0; j < i; j++) free(d[j]);
            return false;
        }
    }
    double eps = ox_attr_float(nd, "epsilon", 1e-5);
    elayer *L = ox_fusible(m, x);
    int k;
    if (L && L->kind == LK_CONV && !L->bn && !L->act && fabs(eps - 1e-5) < 1e-9) { // the engine's fused eps
        cJSON_AddStringToObject(L->obj, "normalizer_fn", "batch_norm");
        L->bn = true;
        k = x->layer;
    } else {
        k = ox_emit(m, nd, index, "BatchNorm", LK_OTHER, &x, 1);
        cJSON_AddItemToObject(m->l[k].obj, "epsilon", ox_float_num(eps));
    }
    for (int i = 0; i < 4; i++) ox_add_weight(m, m->l[k].name, what[i], d[i], n[i]);
    ox_bind(m, nd->output[0], k, NULL, x->rank, false);
    return true;
}

static bool op_pool(imp *m, const node_t *nd, int index, bool avg) {
    static const char *const known[] = {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads",
                                        "storage_order", "strides", NULL};
    if (!ox_attrs_known(m, nd, known)) return false;
    ivalue *x = ox_input_layer(m, nd, 0);
    if (!x) return false;
    if (nd->n_output > 1 && *nd->output[1]) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "the Indices output is not supported");
    if (ox_attr_int(nd, "ceil_mode", 0)) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "ceil_mode=1 is not supported");
    if (ox_attr_int(nd, "storage_order", 0)) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "storage_order=1 is not supported");
    int64_t ks[2], pads[4];
    if (!ox_attr(nd, "kernel_shape")) return ox_node_fail(m, nd, CB_STATUS_PARSE, "missing kernel_shape");
    if (!ox_attr_ints(m, nd, "kernel_shape", 2, 1, ks) || !ox_attr_ints(m, nd, "pads", 4, 0, pads)) return false;
    bool padded = pads[0] || pads[1] || pads[2] || pads[3] || (ox_attr(nd, "auto_pad") && !ox_attr_str_is(nd, "auto_pad", "VALID", "") &&
                                                                !ox_attr_str_is(nd, "auto_pad", "NOTSET", ""));
    if (avg && padded && ox_attr_int(nd, "count_include_pad", 0))
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "count_include_pad=1 with padding is not supported (the engine leaves pads out of the mean)");
    int k = ox_emit(m, nd, index, avg ? "AvgPool" : "Pooling", LK_OTHER, &x, 1);
    int64_t k4[4] = {1, ks[0], ks[1], 1};
    cJSON_AddItemToObject(m->l[k].obj, "ksize", ox_int_array(k4, 4));
    if (!window(m, nd, m->l[k].obj, false)) return false;
    ox_bind(m, nd->output[0], k, NULL, 4, false);
    return true;
}

static bool op_global_pool(imp *m, const node_t *nd, int index, bool keep4) {
    ivalue *x = ox_input_layer(m, nd, 0);
    if (!x) return false;
    if (x->rank != 4) return ox_node_fail(m, nd, CB_STATUS_SHAPE, "needs a 4-d input");
    int k = ox_emit(m, nd, index, "GlobalAvgPool", LK_OTHER, &x, 1);
    ox_bind(m, nd->output[0], k, NULL, keep4 ? 4 : 2, false);
    return true;
}

static bool op_reduce_mean(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"axes", "keepdims", NULL};
    if (!ox_attrs_known(m, nd, known)) return false;
    const Onnx__AttributeProto *a = ox_attr(nd, "axes");
    bool hw = a && a->n_ints == 2 && ((a->ints[0] == 2 && a->ints[1] == 3) || (a->ints[0] == -2 && a->ints[1] == -1));
    if (!hw || nd->n_input > 1) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a mean over the spatial axes [2, 3] is supported");
    return op_global_pool(m, nd, index, ox_attr_int(nd, "keepdims", 1) != 0);
}

// Weight (K, C) for an InnerProduct or a 1x1 convolution, from a 2-d constant; transposed when
// the constant is (C, K) (MatMul, Gemm with transB = 0).
static float *weight_kc(imp *m, const node_t *nd, const tensor_t *t, bool kc, int64_t *K, int64_t *n) {
    if (t->n_dims != 2) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "the weight must be a 2-d constant"), NULL;
    float *d = ox_const_floats(m, nd, t, n);
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
    if (!ox_attrs_known(m, nd, known)) return false;
    if (ox_attr_float(nd, "alpha", 1) != 1 || ox_attr_float(nd, "beta", 1) != 1 || ox_attr_int(nd, "transA", 0))
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "alpha, beta other than 1 or transA=1 are not supported");
    ivalue *x = ox_input_layer(m, nd, 0), *w = x ? ox_input_const(m, nd, 1, "weight") : NULL;
    if (!w) return false;
    ivalue *b = !matmul && nd->n_input > 2 && *nd->input[2] ? ox_input_const(m, nd, 2, "bias") : NULL;
    if (!matmul && nd->n_input > 2 && *nd->input[2] && !b) return false;
    if (x->rank == 4 && !x->nhwc && matmul)
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "MatMul of a 4-d NCHW tensor: flatten it first");
    int64_t K, n;
    float *wd = weight_kc(m, nd, w->t, !matmul && ox_attr_int(nd, "transB", 0), &K, &n);
    if (!wd) return false;
    int k;
    if (x->nhwc) { // a Linear over the channels of an NHWC tensor: a 1x1 convolution
        k = ox_emit(m, nd, index, "Convolution", LK_CONV, &x, 1);
        int64_t f[4] = {1, 1, n / K, K};
        cJSON_AddItemToObject(m->l[k].obj, "filter", ox_int_array(f, 4));
        cJSON_AddStringToObject(m->l[k].obj, "padding", "VALID");
        cJSON_AddNullToObject(m->l[k].obj, "activation_fn");
    } else {
        k = ox_emit(m, nd, index, "InnerProduct", LK_FC, &x, 1);
        cJSON_AddNumberToObject(m->l[k].obj, "num_outputs", (double)K);
        cJSON_AddNullToObject(m->l[k].obj, "activation_fn");
    }
    ox_add_weight(m, m->l[k].name, "weight", wd, n);
    if (b) {
        float *bd = ox_const_floats(m, nd, b->t, &n);
        if (!bd) return false;
        if (n != K) return free(bd), ox_node_fail(m, nd, CB_STATUS_SHAPE, "bias has %lld values for %lld outputs", (long long)n, (long long)K);
        ox_add_weight(m, m->l[k].name, "bias", bd, n);
        m->l[k].bias = true;
    } else cJSON_AddFalseToObject(m->l[k].obj, "bias");
    ox_bind(m, nd->output[0], k, NULL, x->nhwc ? 4 : 2, x->nhwc);
    return true;
}

// Flatten, Reshape to (N, -1): nothing when only InnerProducts consume it (they flatten their input).
static bool op_flatten(imp *m, const node_t *nd, int index) {
    ivalue *x = ox_input_layer(m, nd, 0);
    if (!x) return false;
    if (!strcmp(nd->op_type, "Flatten")) {
        static const char *const known[] = {"axis", NULL};
        if (!ox_attrs_known(m, nd, known)) return false;
        if (ox_attr_int(nd, "axis", 1) != 1) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only axis=1 is supported");
    } else {
        static const char *const known[] = {"allowzero", NULL};
        if (!ox_attrs_known(m, nd, known)) return false;
        ivalue *s = ox_input_const(m, nd, 1, "shape");
        int64_t n;
        float *d = s ? ox_const_floats(m, nd, s->t, &n) : NULL;
        if (!d) return false;
        bool flat = n == 2 && (d[1] == -1 || (d[0] != -1 && d[1] > 0));
        free(d);
        if (!flat) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a reshape to (batch, features) is supported");
    }
    bool all_fc = true;
    for (size_t i = 0; i < m->g->n_node; i++)
        for (size_t j = 0; j < m->g->node[i]->n_input; j++)
            if (!strcmp(m->g->node[i]->input[j], nd->output[0]) && strcmp(m->g->node[i]->op_type, "Gemm") &&
                strcmp(m->g->node[i]->op_type, "MatMul"))
                all_fc = false;
    if (x->rank == 2 || all_fc) {
        ox_bind(m, nd->output[0], x->layer, NULL, 2, false);
        m->l[x->layer].out = x->name; // an alias: the layer's output did not move
        return true;
    }
    int k = ox_emit(m, nd, index, "Reshape", LK_OTHER, &x, 1);
    int64_t s[2] = {1, -1};
    cJSON_AddItemToObject(m->l[k].obj, "output_shape", ox_int_array(s, 2));
    ox_bind(m, nd->output[0], k, NULL, 2, false);
    return true;
}

static bool op_concat(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"axis", NULL};
    if (!ox_attrs_known(m, nd, known)) return false;
    ivalue *ps[256];
    if (nd->n_input < 1 || nd->n_input > 256) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "%zu inputs", nd->n_input);
    for (size_t i = 0; i < nd->n_input; i++)
        if (!(ps[i] = ox_input_layer(m, nd, i))) return false;
    int64_t ax = ox_attr_int(nd, "axis", 1);
    int rank = ps[0]->rank;
    if (ax < 0) ax += rank;
    if (ax != 1) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "concatenation along axis %lld: only channels (1) are supported", (long long)ax);
    int k = ox_emit(m, nd, index, "Concatenate", LK_OTHER, ps, (int)nd->n_input);
    cJSON_AddNumberToObject(m->l[k].obj, "dim", -1); // NHWC's last: channels at rank 4 and 2
    ox_bind(m, nd->output[0], k, NULL, rank, false);
    return true;
}

// GELU's Erf form, as PyTorch exports it: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5).
static bool try_gelu(imp *m, const node_t *nd, int index) {
    if (nd->n_input != 2) return false;
    ivalue *x = ox_find_value(m, nd->input[0]), *c = nd->n_input > 1 ? ox_find_value(m, nd->input[1]) : NULL;
    if (!x || x->layer < 0 || !ox_const_is(m, nd, c, sqrt(2.0), 1e-3)) return false;
    int e = ox_sole_consumer(m, nd->output[0]);
    if (!ox_is_op(m, e, "Erf")) return false;
    int a = ox_sole_consumer(m, m->g->node[e]->output[0]);
    if (!ox_is_op(m, a, "Add") || m->g->node[a]->n_input != 2) return false;
    const node_t *an = m->g->node[a];
    ivalue *one = ox_find_value(m, strcmp(an->input[0], m->g->node[e]->output[0]) ? an->input[0] : an->input[1]);
    if (!ox_const_is(m, nd, one, 1.0, 1e-6)) return false;
    int m1 = ox_sole_consumer(m, an->output[0]);
    if (!ox_is_op(m, m1, "Mul") || m->g->node[m1]->n_input != 2) return false;
    const node_t *mn = m->g->node[m1];
    const char *other = strcmp(mn->input[0], an->output[0]) ? mn->input[0] : mn->input[1];
    if (strcmp(other, x->name)) return false;
    int m2 = ox_sole_consumer(m, mn->output[0]);
    if (!ox_is_op(m, m2, "Mul") || m->g->node[m2]->n_input != 2) return false;
    const node_t *hn = m->g->node[m2];
    ivalue *half = ox_find_value(m, strcmp(hn->input[0], mn->output[0]) ? hn->input[0] : hn->input[1]);
    if (!ox_const_is(m, nd, half, 0.5, 1e-6)) return false;
    m->done[e] = m->done[a] = m->done[m1] = m->done[m2] = true;
    return activation_n(m, nd, index, x, "gelu", hn->output[0], 2);
}

// x * act(x) as one activation: Sigmoid -> silu, HardSigmoid -> hardswish.
static bool try_gated(imp *m, const node_t *nd, int index, const char *fn) {
    if (nd->n_input != 1) return false;
    int c = ox_sole_consumer(m, nd->output[0]);
    if (!ox_is_op(m, c, "Mul") || m->g->node[c]->n_input != 2) return false;
    const node_t *mn = m->g->node[c];
    const char *other = strcmp(mn->input[0], nd->output[0]) ? mn->input[0] : mn->input[1];
    if (strcmp(other, nd->input[0])) return false;
    ivalue *x = ox_input_layer(m, nd, 0);
    if (!x) return false;
    m->done[c] = true;
    return activation_n(m, nd, index, x, fn, mn->output[0], 2);
}

static bool op_binary(imp *m, const node_t *nd, int index, bool mul) {
    ivalue *a = ox_input(m, nd, 0), *b = a ? ox_input(m, nd, 1) : NULL;
    if (!b) return false;
    if (a->layer >= 0 && b->layer >= 0) {
        if (a->nhwc != b->nhwc) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "one input is NHWC, the other NCHW");
        ivalue *ps[2] = {a, b};
        int k = ox_emit(m, nd, index, "Elementwise", LK_ELT, ps, 2);
        cJSON_AddStringToObject(m->l[k].obj, "operation", mul ? "mul" : "sum");
        cJSON_AddNullToObject(m->l[k].obj, "activation_fn");
        ox_bind(m, nd->output[0], k, NULL, a->rank > b->rank ? a->rank : b->rank, a->nhwc);
        return true;
    }
    ivalue *x = a->layer >= 0 ? a : b, *c = a->layer >= 0 ? b : a;
    if (x->layer < 0) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "both inputs are constants");
    // a constant per channel: [C], [C,1,1] or [1,C,1,1] (NCHW), [C] or [1,1,1,C] (NHWC, rank 2)
    int64_t per = 1, nd_ = (int64_t)c->t->n_dims;
    int nontrivial = 0;
    for (int64_t i = 0; i < nd_; i++)
        if (c->t->dims[i] != 1) nontrivial++, per = c->t->dims[i];
    // (a scalar or all-ones constant has no channel dimension to read: nontrivial == 0 fails first;
    // fuzz_onnx found the read of dims[-1] of a scalar)
    bool chan_ok = nontrivial == 1 && (x->nhwc || x->rank == 2 ? c->t->dims[nd_ - 1] == per : nd_ >= 3 && c->t->dims[nd_ - 3] == per);
    if (!chan_ok)
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "a constant operand must hold one value per channel (SE scales, layer scale, bias)");
    int64_t n;
    float *d = ox_const_floats(m, nd, c->t, &n);
    if (!d) return false;
    elayer *L = ox_fusible(m, x);
    if (!mul) { // a bias for the layer before
        if (!L || (L->kind != LK_CONV && L->kind != LK_FC) || L->bias || L->act || L->bn) {
            free(d);
            return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "adding a constant is supported only as the bias of a Conv, Gemm or MatMul");
        }
        ox_set_item(L->obj, "bias", cJSON_CreateTrue());
        L->bias = true;
        ox_add_weight(m, L->name, "bias", d, n);
        ox_bind(m, nd->output[0], x->layer, NULL, x->rank, x->nhwc);
        return true;
    }
    int k = ox_emit(m, nd, index, "Scale", LK_OTHER, &x, 1);
    ox_add_weight(m, m->l[k].name, "weight", d, n);
    ox_bind(m, nd->output[0], k, NULL, x->rank, x->nhwc);
    return true;
}

static bool op_layernorm(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"axis", "epsilon", "stash_type", NULL};
    if (!ox_attrs_known(m, nd, known)) return false;
    if (nd->n_output > 1) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "the Mean and InvStdDev outputs are not supported");
    ivalue *x = ox_input_layer(m, nd, 0);
    if (!x) return false;
    int64_t ax = ox_attr_int(nd, "axis", -1), rank = x->rank;
    if (ax < 0) ax += rank;
    if (ax != rank - 1 || (rank == 4 && !x->nhwc))
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a LayerNorm over the channels is supported (NHWC between Transposes, axis -1)");
    int k = ox_emit(m, nd, index, "LayerNorm", LK_OTHER, &x, 1);
    cJSON_AddItemToObject(m->l[k].obj, "epsilon", ox_float_num(ox_attr_float(nd, "epsilon", 1e-5)));
    static const char *const what[2] = {"weight", "bias"};
    for (size_t i = 0; i < 2; i++) {
        int64_t n;
        float *d;
        if (i == 1 && (nd->n_input < 3 || !*nd->input[2])) { // no bias: zeros
            n = 0;
            ivalue *s = ox_find_value(m, nd->input[1]);
            n = s && s->layer < 0 ? ox_numel(s->t) : 0;
            d = cb_xcalloc((size_t)(n ? n : 1), sizeof(float));
        } else {
            ivalue *c = ox_input_const(m, nd, i + 1, i ? "bias" : "scale");
            if (!c || !(d = ox_const_floats(m, nd, c->t, &n))) return false;
        }
        ox_add_weight(m, m->l[k].name, what[i], d, n);
    }
    ox_bind(m, nd->output[0], k, NULL, x->rank, x->nhwc);
    return true;
}

static bool op_transpose(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"perm", NULL};
    if (!ox_attrs_known(m, nd, known)) return false;
    ivalue *x = ox_input_layer(m, nd, 0);
    if (!x) return false;
    const Onnx__AttributeProto *a = ox_attr(nd, "perm");
    static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    bool ok = a && a->n_ints == 4 && x->rank == 4 && !memcmp(a->ints, x->nhwc ? to_nchw : to_nhwc, sizeof to_nhwc);
    if (!ok) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a Transpose between NCHW and NHWC around a LayerNorm is supported");
    ox_bind(m, nd->output[0], x->layer, NULL, 4, !x->nhwc);
    m->l[x->layer].out = x->name; // an alias: the layer's output did not move
    return true;
}

static bool op_clip(imp *m, const node_t *nd, int index) {
    static const char *const known[] = {"min", "max", NULL};
    if (!ox_attrs_known(m, nd, known)) return false;
    double lo = ox_attr_float(nd, "min", -INFINITY), hi = ox_attr_float(nd, "max", INFINITY);
    bool relu6 = ox_attr(nd, "min") ? lo == 0 && hi == 6
                                 : nd->n_input == 3 && ox_const_is(m, nd, ox_find_value(m, nd->input[1]), 0, 0) &&
                                       ox_const_is(m, nd, ox_find_value(m, nd->input[2]), 6, 0);
    if (!relu6) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only Clip(0, 6) (ReLU6) is supported");
    ivalue *x = ox_input_layer(m, nd, 0);
    return x && activation(m, nd, index, x, "relu6", nd->output[0]);
}

bool ox_op_node(imp *m, const node_t *nd, int index) {
    const char *op = nd->op_type ? nd->op_type : "";
    if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx"))
        return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "operator domain '%s' is not supported", nd->domain);
    if (nd->n_output < 1) return ox_node_fail(m, nd, CB_STATUS_PARSE, "no outputs");
    static const char *const none[] = {NULL};
    ivalue *x;
    if (!strcmp(op, "Conv")) return op_conv(m, nd, index);
    if (!strcmp(op, "BatchNormalization")) return op_batchnorm(m, nd, index);
    if (!strcmp(op, "MaxPool")) return op_pool(m, nd, index, false);
    if (!strcmp(op, "AveragePool")) return op_pool(m, nd, index, true);
    if (!strcmp(op, "GlobalAveragePool")) return ox_attrs_known(m, nd, none) && op_global_pool(m, nd, index, true);
    if (!strcmp(op, "ReduceMean")) return op_reduce_mean(m, nd, index);
    if (!strcmp(op, "Gemm")) return op_gemm(m, nd, index, false);
    if (!strcmp(op, "MatMul")) return ox_attrs_known(m, nd, none) && op_gemm(m, nd, index, true);
    if (!strcmp(op, "Flatten") || !strcmp(op, "Reshape")) return op_flatten(m, nd, index);
    if (!strcmp(op, "Concat")) return op_concat(m, nd, index);
    if (!strcmp(op, "Add")) return ox_attrs_known(m, nd, none) && op_binary(m, nd, index, false);
    if (!strcmp(op, "Mul")) return ox_attrs_known(m, nd, none) && op_binary(m, nd, index, true);
    if (!strcmp(op, "LayerNormalization")) return op_layernorm(m, nd, index);
    if (!strcmp(op, "Transpose")) return op_transpose(m, nd, index);
    if (!strcmp(op, "Clip")) return op_clip(m, nd, index);
    if (!strcmp(op, "Div")) {
        if (try_gelu(m, nd, index)) return true;
        return m->err->msg[0] ? false : ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "Div is supported only inside GELU's Erf form");
    }
    if (!strcmp(op, "Sigmoid") || !strcmp(op, "HardSigmoid")) {
        bool hard = op[0] == 'H';
        static const char *const hk[] = {"alpha", "beta", NULL};
        if (!ox_attrs_known(m, nd, hard ? hk : none)) return false;
        if (hard && (fabs(ox_attr_float(nd, "alpha", 0.2) - 1.0 / 6) > 1e-6 || fabs(ox_attr_float(nd, "beta", 0.5) - 0.5) > 1e-6))
            return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "alpha and beta must be 1/6 and 0.5 (PyTorch's hardsigmoid)");
        if (try_gated(m, nd, index, hard ? "hardswish" : "silu")) return true;
        if (m->err->msg[0]) return false;
        return (x = ox_input_layer(m, nd, 0)) && activation(m, nd, index, x, hard ? "hardsigmoid" : "sigmoid", nd->output[0]);
    }
    if (!strcmp(op, "Relu") || !strcmp(op, "HardSwish")) {
        if (!ox_attrs_known(m, nd, none)) return false;
        return (x = ox_input_layer(m, nd, 0)) && activation(m, nd, index, x, op[0] == 'R' ? "relu" : "hardswish", nd->output[0]);
    }
    if (!strcmp(op, "Gelu")) {
        static const char *const gk[] = {"approximate", NULL};
        if (!ox_attrs_known(m, nd, gk)) return false;
        if (!ox_attr_str_is(nd, "approximate", "none", "none")) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only approximate='none' is supported");
        return (x = ox_input_layer(m, nd, 0)) && activation(m, nd, index, x, "gelu", nd->output[0]);
    }
    if (!strcmp(op, "Dropout")) {
        static const char *const dk[] = {"ratio", "seed", NULL};
        if (!ox_attrs_known(m, nd, dk)) return false;
        if (nd->n_output > 1 && *nd->output[1]) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "the mask output is not supported");
        double ratio = ox_attr_float(nd, "ratio", 0.5);
        if (nd->n_input > 1 && *nd->input[1]) {
            ivalue *r = ox_input_const(m, nd, 1, "ratio");
            int64_t n;
            float *d = r ? ox_const_floats(m, nd, r->t, &n) : NULL;
            if (!d) return false;
            ratio = n == 1 ? d[0] : -1;
            free(d);
        }
        if (!(ratio >= 0 && ratio < 1)) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "ratio must be one value in [0, 1)");
        if (!(x = ox_input_layer(m, nd, 0))) return false;
        int k = ox_emit(m, nd, index, "Dropout", LK_OTHER, &x, 1);
        cJSON_AddItemToObject(m->l[k].obj, "dropout_keep_prob", ox_float_num(1 - ratio));
        ox_bind(m, nd->output[0], k, NULL, x->rank, x->nhwc);
        return true;
    }
    if (!strcmp(op, "Pad")) { // PyTorch writes a zero Pad before some pools
        static const char *const pk[] = {"mode", "pads", "value", NULL};
        if (!ox_attrs_known(m, nd, pk) || !(x = ox_input_layer(m, nd, 0))) return false;
        const Onnx__AttributeProto *a = ox_attr(nd, "pads");
        bool zero = true;
        for (size_t i = 0; a && i < a->n_ints; i++) zero &= a->ints[i] == 0;
        if (!a && nd->n_input > 1) {
            ivalue *pv = ox_input_const(m, nd, 1, "pads");
            int64_t n;
            float *d = pv ? ox_const_floats(m, nd, pv->t, &n) : NULL;
            if (!d) return false;
            for (int64_t i = 0; i < n; i++) zero &= d[i] == 0;
            free(d);
        }
        if (!zero) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only an all-zero Pad is supported (padding belongs to the Conv or pool)");
        ox_bind(m, nd->output[0], x->layer, NULL, x->rank, x->nhwc);
        m->l[x->layer].out = x->name;
        return true;
    }
    if (!strcmp(op, "Identity")) {
        if (!(x = ox_input(m, nd, 0))) return false;
        ox_bind(m, nd->output[0], x->layer, x->t, x->rank, x->nhwc);
        if (x->layer >= 0) m->l[x->layer].out = x->name;
        return true;
    }
    if (!strcmp(op, "Softmax")) {
        static const char *const sk[] = {"axis", NULL};
        if (!ox_attrs_known(m, nd, sk) || !(x = ox_input_layer(m, nd, 0))) return false;
        int64_t ax = ox_attr_int(nd, "axis", -1);
        if (x->rank != 2 || (ax != 1 && ax != -1)) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a softmax over the features of a 2-d tensor is supported");
        int k = ox_emit(m, nd, index, "Softmax", LK_OTHER, &x, 1);
        ox_bind(m, nd->output[0], k, NULL, 2, false);
        return true;
    }
    if (!strcmp(op, "Constant")) {
        static const char *const ck[] = {"value", NULL};
        if (!ox_attrs_known(m, nd, ck)) return false;
        const Onnx__AttributeProto *a = ox_attr(nd, "value");
        if (!a || !a->t) return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "only a tensor 'value' is supported");
        ox_bind(m, nd->output[0], -1, a->t, 0, false);
        return true;
    }
    return ox_node_fail(m, nd, CB_STATUS_UNSUPPORTED, "operator %s is not supported", op);
}

