#include "core/strmap.h"
#include "core/net.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash_of(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

static size_t slot_of(const cb_strmap *m, const char *key) {
    size_t i = hash_of(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
    return i;
}

int cb_strmap_get(const cb_strmap *m, const char *key) {
    if (!m->cap) return -1;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->vals[i] : -1;
}

int cb_strmap_put(cb_strmap *m, const char *key, int val) {
    if (2 * (m->n + 1) > m->cap) {
        cb_strmap old = *m;
        m->cap = old.cap ? 2 * old.cap : 64;
        m->keys = cb_xcalloc(m->cap, sizeof *m->keys);
        m->vals = cb_xcalloc(m->cap, sizeof *m->vals);
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i]) {
                size_t j = slot_of(m, old.keys[i]);
                m->keys[j] = old.keys[i];
                m->vals[j] = old.vals[i];
            }
        free(old.keys);
        free(old.vals);
    }
    size_t i = slot_of(m, key);
    if (m->keys[i]) return m->vals[i];
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return val;
}

void cb_strmap_free(cb_strmap *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
