// Reader for Paleo's JSON network descriptions (github.com/TalwalkarLab/paleo, nets/*.json),
// with convbench's extensions: LRN, BatchNorm, ReLU, Reshape, GlobalAvgPool, LayerNorm, Scale
// layers; "bias", "groups", "dilations" on Convolution; "activation_fn" on InnerProduct and
// Elementwise; Elementwise "operation": "mul"; padding [top, left, bottom, right].
//
// Blocks and ModelParallel are expanded as Paleo does: a sub-layer is named "block/sub", a
// ModelParallel copy "block/sub@i"; a block name used as a parent means its endpoint; "x@self"
// is the same split of x, "x@all" every split of x.
#include "spec/paleo_reader.h"
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
    const type_info *ti = paleo_find_type(t->valuestring);
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
    if (!paleo_check_keys(r, name, obj, ti)) return false;
    if (!read_parents(r, name, obj, prefix, block, split, P)) return false;
    return paleo_parse_params(r, L, obj, ti, splits);
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
        !paleo_get_int(r, bname, obj, "splits", 1, CB_MAX_SPLITS, &splits))
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
