#include "core/json.h"
#include "core/limits.h"
#include "core/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(CB_MAX_JSON_DEPTH == CJSON_NESTING_LIMIT, "the stated nesting limit is cJSON's");

static void line_col(const char *text, const char *at, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at && *p; p++) {
        if (*p == '\n') (*line)++, *col = 1;
        else (*col)++;
    }
}

// nesting depth of arrays and objects at `at` (brackets inside strings do not count)
static int depth_at(const char *text, const char *at) {
    int d = 0, max = 0;
    bool in_str = false;
    for (const char *p = text; p < at && *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') in_str = false;
        } else if (*p == '"') in_str = true;
        else if (*p == '[' || *p == '{') max = ++d > max ? d : max;
        else if (*p == ']' || *p == '}') d--;
    }
    return max;
}

static int cmp_key(const void *a, const void *b) {
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

// "layers > conv1" for messages, from the keys and indices on the way down
typedef struct path { char s[256]; size_t n; } path;

static void path_push(path *p, size_t *saved, const char *key, int index) {
    *saved = p->n;
    if (p->n >= sizeof p->s - 1) return;
    int w = key ? snprintf(p->s + p->n, sizeof p->s - p->n, "%s%s", p->n ? " > " : "", key)
                : snprintf(p->s + p->n, sizeof p->s - p->n, "%s[%d]", p->n ? " > " : "", index);
    p->n = w < 0 ? p->n : p->n + (size_t)w < sizeof p->s ? p->n + (size_t)w : sizeof p->s - 1;
}

// every object's keys sorted, neighbours compared: O(k log k) for an object of k keys
static bool unique_keys(const cJSON *o, path *p, const char *src, cb_error *err) {
    if (!cJSON_IsObject(o) && !cJSON_IsArray(o)) return true;
    size_t k = 0;
    for (const cJSON *c = o->child; c; c = c->next) k++;
    if (cJSON_IsObject(o) && k > 1) {
        const cJSON **keys = malloc(k * sizeof *keys);
        if (!keys) return cb_fail(err, CB_STATUS_NOMEM, src, NULL, "out of memory checking the keys"), false;
        size_t i = 0;
        for (const cJSON *c = o->child; c; c = c->next) keys[i++] = c;
        qsort(keys, k, sizeof *keys, cmp_key);
        for (i = 1; i < k; i++)
            if (strcmp(keys[i - 1]->string, keys[i]->string) == 0) {
                cb_fail(err, CB_STATUS_PARSE, src, NULL, "duplicate key '%s' in %s", keys[i]->string,
                        p->n ? p->s : "the top-level object");
                free(keys);
                return false;
            }
        free(keys);
    }
    int index = 0;
    for (const cJSON *c = o->child; c; c = c->next, index++) {
        size_t saved;
        path_push(p, &saved, cJSON_IsObject(o) ? c->string : NULL, index);
        bool ok = unique_keys(c, p, src, err);
        p->n = saved;
        p->s[saved] = 0;
        if (!ok) return false;
    }
    return true;
}

cJSON *cb_json_parse(const char *text, const char *src, cb_error *err) {
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line, col;
        const char *at = cJSON_GetErrorPtr();
        if (!at) at = text + strlen(text);
        line_col(text, at, &line, &col);
        if (depth_at(text, at) >= CB_MAX_JSON_DEPTH)
            cb_fail(err, CB_STATUS_PARSE, src, NULL, "JSON nested deeper than %d arrays and objects (at line %d, column %d)",
                    CB_MAX_JSON_DEPTH, line, col);
        else
            cb_fail(err, CB_STATUS_PARSE, src, NULL, "JSON syntax error at line %d, column %d", line, col);
        return NULL;
    }
    path p = {.n = 0};
    p.s[0] = 0;
    if (!unique_keys(root, &p, src, err)) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

cJSON *cb_json_read(const char *path, cb_error *err) {
    char *text = cb_read_text(path, err);
    if (!text) return NULL;
    cJSON *root = cb_json_parse(text, path, err);
    free(text);
    return root;
}
