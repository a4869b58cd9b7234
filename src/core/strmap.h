// A string -> int map (open addressing, FNV-1a), so that name lookups over a network of many
// layers stay linear overall. Keys are borrowed: they must outlive the map.
#ifndef CB_CORE_STRMAP_H
#define CB_CORE_STRMAP_H

#include <stddef.h>

typedef struct cb_strmap {
    const char **keys;            // NULL: an empty slot
    int *vals;
    size_t cap, n;                // cap a power of two, n < cap / 2
} cb_strmap;

// Insert key -> val unless the key is there; returns the value stored for key (val when new).
int cb_strmap_put(cb_strmap *m, const char *key, int val);
int cb_strmap_get(const cb_strmap *m, const char *key); // -1 when absent
void cb_strmap_free(cb_strmap *m);

#endif
