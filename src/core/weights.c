// Weights files: every learnable tensor and running statistic of an exec, in network order, as
// described in docs/weights-format.md. Little-endian throughout; a zlib CRC32 closes the file.
#include "core/net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define WT_MAGIC "CBWT"
#define WT_VERSION 1u
#define WT_MAX_PARAMS 8

// ---- a growable byte buffer for writing ----
typedef struct wbuf { unsigned char *p; size_t n, cap; bool oom; } wbuf;

static void put(wbuf *b, const void *src, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void put_u32(wbuf *b, uint32_t v) {
    unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    put(b, c, 4);
}
static void put_u64(wbuf *b, uint64_t v) {
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}
static void put_str(wbuf *b, const char *s) {
    put_u32(b, (uint32_t)strlen(s));
    put(b, s, strlen(s));
}
static void put_f32s(wbuf *b, const float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        put_u32(b, u);
    }
}

// ---- a bounded reader ----
typedef struct rbuf { const unsigned char *p; size_t n, at; bool overrun; } rbuf;

static bool take(rbuf *r, size_t n, const unsigned char **out) {
    if (r->overrun || r->at > r->n || n > r->n - r->at) return r->overrun = true, false;
    *out = r->p + r->at;
    r->at += n;
    return true;
}
static uint32_t get_u32(rbuf *r) {
    const unsigned char *c;
    if (!take(r, 4, &c)) return 0;
    return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
}
static uint64_t get_u64(rbuf *r) {
    uint64_t lo = get_u32(r);
    return lo | (uint64_t)get_u32(r) << 32;
}
// a length-prefixed string copied into buf (truncated to fit)
static void get_str(rbuf *r, char *buf, size_t cap) {
    uint32_t len = get_u32(r);
    const unsigned char *s;
    buf[0] = 0;
    if (!take(r, len, &s)) return;
    size_t k = len < cap - 1 ? len : cap - 1;
    memcpy(buf, s, k);
    buf[k] = 0;
}

static uint32_t crc_of(const unsigned char *p, size_t n) {
    uLong c = crc32(0L, Z_NULL, 0);
    while (n > 0) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

static int count_tensors(cb_exec *e) {
    int t = 0;
    for (int i = 0; i < cb_exec_net(e)->nlayers; i++) t += cb_exec_params(e, i, NULL, 0);
    return t;
}

cb_status cb_exec_save_weights(cb_exec *e, const char *path, cb_error *err) {
    const cb_net *net = cb_exec_net(e);
    wbuf b = {0};
    put(&b, WT_MAGIC, 4);
    put_u32(&b, WT_VERSION);
    put_str(&b, net->name ? net->name : "");
    put_u32(&b, (uint32_t)count_tensors(e));
    float *host = NULL;
    for (int i = 0; i < net->nlayers && !b.oom; i++) {
        cb_param ps[WT_MAX_PARAMS];
        int np = cb_exec_params(e, i, ps, WT_MAX_PARAMS);
        for (int j = 0; j < np && j < WT_MAX_PARAMS; j++) {
            float *h = realloc(host, (size_t)ps[j].count * 4);
            if (!h) {
                b.oom = true;
                break;
            }
            host = h;
            cb_exec_param_get(e, &ps[j], host);
            put_str(&b, net->layers[i].name);
            put_str(&b, ps[j].what);
            put_u64(&b, (uint64_t)ps[j].count);
            put_f32s(&b, host, ps[j].count);
        }
    }
    free(host);
    if (!b.oom) put_u32(&b, crc_of(b.p, b.n));
    if (b.oom) {
        free(b.p);
        return cb_fail(err, CB_STATUS_NOMEM, path, NULL, "out of memory building the weights file");
    }
    cb_status st = cb_write_whole(path, b.p, b.n, err);
    free(b.p);
    return st;
}

// The whole file, at most max bytes (a larger one, or an endless /dev/zero, is not this network's).
static cb_status read_all(const char *path, size_t max, unsigned char **out, size_t *n, cb_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return cb_fail(err, CB_STATUS_IO, path, NULL, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 12, len = 0;
    unsigned char *p = malloc(cap);
    bool big = false;
    while (p) {
        len += fread(p + len, 1, cap - len, f);
        if (len < cap) break;
        if (len > max) {
            big = true;
            break;
        }
        unsigned char *q = realloc(p, cap * 2);
        if (!q) {
            free(p);
            p = NULL;
            break;
        }
        p = q;
        cap *= 2;
    }
    bool bad = p && ferror(f);
    fclose(f);
    if (!p) return cb_fail(err, CB_STATUS_NOMEM, path, NULL, "out of memory reading the file");
    if (bad || big || len > max) {
        free(p);
        if (bad) return cb_fail(err, CB_STATUS_IO, path, NULL, "read error");
        return cb_fail(err, CB_STATUS_PARSE, path, NULL, "more than %zu bytes: larger than any weights file of this network", max);
    }
    *out = p;
    *n = len;
    return CB_OK;
}

// The largest weights file of this network: its records exactly, the header with a network name
// of up to 64 KiB (the file's name may differ from this network's).
static size_t max_file_bytes(cb_exec *e) {
    const cb_net *net = cb_exec_net(e);
    size_t n = 4 + 4 + 4 + 65536 + 4 + 4; // magic, version, name length and name, count, CRC
    for (int i = 0; i < net->nlayers; i++) {
        cb_param ps[WT_MAX_PARAMS];
        int np = cb_exec_params(e, i, ps, WT_MAX_PARAMS);
        for (int j = 0; j < np && j < WT_MAX_PARAMS; j++)
            n += 4 + strlen(net->layers[i].name) + 4 + strlen(ps[j].what) + 8 + 4 * (size_t)ps[j].count;
    }
    return n;
}

cb_status cb_exec_load_weights(cb_exec *e, const char *path, cb_error *err) {
    const cb_net *net = cb_exec_net(e);
    unsigned char *data = NULL;
    size_t n = 0;
    cb_status st = read_all(path, max_file_bytes(e), &data, &n, err);
    if (st != CB_OK) return st;
    float *host = NULL;
    st = CB_STATUS_PARSE;
    if (n < 4 || memcmp(data, WT_MAGIC, 4) != 0) {
        st = cb_fail(err, st, path, NULL, "not a convbench weights file (magic is not \"CBWT\")");
        goto done;
    }
    // the body lies between the magic and the 4-byte CRC: magic, version, name, count and CRC are 20 bytes at least
    if (n < 20) {
        st = cb_fail(err, st, path, NULL, "truncated: %zu bytes, a weights file has 20 at least", n);
        goto done;
    }
    rbuf r = {data, n - 4, 4, false};
    uint32_t version = get_u32(&r);
    if (!r.overrun && version != WT_VERSION) {
        st = cb_fail(err, st, path, NULL, "version %u, this build reads version %u", version, WT_VERSION);
        goto done;
    }
    char fname[256], lname[256], what[64];
    get_str(&r, fname, sizeof fname);
    uint32_t nt = get_u32(&r);
    // first pass: the structure must fit in the file before anything else is believed
    size_t body = r.at;
    for (uint32_t t = 0; t < nt && !r.overrun; t++) {
        get_str(&r, lname, sizeof lname);
        get_str(&r, what, sizeof what);
        uint64_t cnt = get_u64(&r);
        const unsigned char *d;
        if (r.at > r.n || cnt > (uint64_t)(r.n - r.at) / 4) r.overrun = true;
        else take(&r, (size_t)cnt * 4, &d);
    }
    if (r.overrun) {
        st = cb_fail(err, st, path, NULL, "truncated: %zu bytes, the header's %u tensors need more", n, nt);
        goto done;
    }
    if (r.at != r.n) {
        st = cb_fail(err, st, path, NULL, "%zu bytes after the last tensor before the checksum", r.n - r.at);
        goto done;
    }
    uint32_t want = crc_of(data, n - 4), have = (uint32_t)data[n - 4] | (uint32_t)data[n - 3] << 8 |
                                               (uint32_t)data[n - 2] << 16 | (uint32_t)data[n - 1] << 24;
    if (want != have) {
        st = cb_fail(err, st, path, NULL, "checksum mismatch (CRC32 0x%08x stored, 0x%08x computed): the file is damaged",
                have, want);
        goto done;
    }
    int need = count_tensors(e);
    if ((int64_t)nt != need) {
        st = cb_fail(err, CB_STATUS_SHAPE, path, NULL, "%u tensors (network '%s'), the network '%s' has %d", nt, fname,
                net->name ? net->name : "", need);
        goto done;
    }
    // second pass: check every tensor against the network, then set them all
    for (int pass = 0; pass < 2; pass++) {
        r.at = body;
        r.overrun = false;
        for (int i = 0; i < net->nlayers; i++) {
            cb_param ps[WT_MAX_PARAMS];
            int np = cb_exec_params(e, i, ps, WT_MAX_PARAMS);
            for (int j = 0; j < np && j < WT_MAX_PARAMS; j++) {
                get_str(&r, lname, sizeof lname);
                get_str(&r, what, sizeof what);
                uint64_t cnt = get_u64(&r);
                const unsigned char *d = NULL;
                if (!take(&r, (size_t)cnt * 4, &d)) continue; // cannot happen: the first pass checked the structure
                if (pass == 0) {
                    if (strcmp(lname, net->layers[i].name) != 0 || strcmp(what, ps[j].what) != 0) {
                        st = cb_fail(err, CB_STATUS_SHAPE, path, net->layers[i].name,
                                "the file has %s of layer '%s' where the network needs %s", what, lname, ps[j].what);
                        goto done;
                    }
                    if (cnt != (uint64_t)ps[j].count) {
                        st = cb_fail(err, CB_STATUS_SHAPE, path, lname, "%s has %llu values, the network needs %lld", what,
                                (unsigned long long)cnt, (long long)ps[j].count);
                        goto done;
                    }
                    continue;
                }
                float *h = realloc(host, (size_t)(cnt ? cnt : 1) * 4);
                if (!h) {
                    st = cb_fail(err, CB_STATUS_NOMEM, path, NULL, "out of memory");
                    goto done;
                }
                host = h;
                for (uint64_t k = 0; k < cnt; k++) {
                    uint32_t u = (uint32_t)d[4 * k] | (uint32_t)d[4 * k + 1] << 8 | (uint32_t)d[4 * k + 2] << 16 |
                                 (uint32_t)d[4 * k + 3] << 24;
                    memcpy(&host[k], &u, 4);
                }
                cb_exec_param_set(e, &ps[j], host);
            }
        }
    }
    st = CB_OK;
done:
    free(host);
    free(data);
    return st;
}

cb_status cb_net_weights_apply(cb_exec *e, cb_error *err) {
    const cb_net *net = cb_exec_net(e);
    const cb_net_weights *w = net->weights;
    for (int pass = 0; w && pass < 2; pass++) // check every tensor, then set them
        for (int t = 0; t < w->n; t++) {
            const cb_init_tensor *it = &w->t[t];
            int i = cb_net_find(net, it->layer);
            cb_param ps[WT_MAX_PARAMS];
            int np = i < 0 ? 0 : cb_exec_params(e, i, ps, WT_MAX_PARAMS), j = 0;
            while (j < np && strcmp(ps[j].what, it->what)) j++;
            if (j == np)
                return cb_fail(err, CB_STATUS_SHAPE, net->path, it->layer, "the file has a %s the layer does not have", it->what);
            if (ps[j].count != it->count)
                return cb_fail(err, CB_STATUS_SHAPE, net->path, it->layer, "%s has %lld values, the layer needs %lld", it->what,
                               (long long)it->count, (long long)ps[j].count);
            if (pass) cb_exec_param_set(e, &ps[j], it->data);
        }
    return CB_OK;
}
