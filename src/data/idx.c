// IDX reader. The format (yann.lecun.com/exdb/mnist): a big-endian header, then unsigned bytes.
//   images: magic 0x00000803, count, rows, cols, then count*rows*cols pixels (row-major)
//   labels: magic 0x00000801, count, then count labels
// gzopen/gzread read gzip-compressed and plain files alike.
#include "data/idx.h"
#include "core/limits.h"
#include "core/net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define IDX_IMAGES 0x00000803u
#define IDX_LABELS 0x00000801u

// Read exactly n bytes; returns the number read (short on end of file), or -1 on a zlib error.
static int64_t read_full(gzFile f, void *buf, int64_t n) {
    int64_t got = 0;
    while (got < n) {
        int64_t want = n - got > (1 << 30) ? (1 << 30) : n - got;
        int r = gzread(f, (char *)buf + got, (unsigned)want);
        if (r < 0) return got ? got : -1; // what came before the error counts: a short read reports it
        if (r == 0) break;
        got += r;
    }
    return got;
}

static int zcode(gzFile f) {
    int code = Z_OK;
    gzerror(f, &code);
    return code;
}

// zlib's message for the file's error, without the path it prefixes (the caller names the file)
static const char *zerr(gzFile f, const char *path) {
    int code;
    const char *m = gzerror(f, &code);
    if (code == Z_OK || !m || !*m) return "read error";
    size_t n = strlen(path);
    if (strncmp(m, path, n) == 0 && strncmp(m + n, ": ", 2) == 0) m += n + 2;
    return m;
}

// A short read: the end of a plain file, or of a gzip stream cut short (zlib says so)
static cb_status short_read(gzFile f, const char *path, int64_t got, int64_t need, const char *what, cb_error *err) {
    if (zcode(f) == Z_BUF_ERROR)
        return cb_fail(err, CB_STATUS_PARSE, path, NULL, "truncated gzip stream: it ends after %lld bytes of %s, %lld needed",
                       (long long)got, what, (long long)need);
    return cb_fail(err, CB_STATUS_PARSE, path, NULL, "truncated: %lld bytes of %s, %lld needed", (long long)got, what,
                   (long long)need);
}

// Open and read the header: magic then ndims big-endian uint32 sizes.
static cb_status open_header(const char *path, uint32_t want_magic, int ndims, gzFile *out, uint32_t *dims,
                             cb_error *err) {
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) return cb_fail(err, CB_STATUS_IO, path, NULL, "cannot open: %s", errno ? strerror(errno) : "out of memory");
    unsigned char h[16];
    int64_t hn = 4 + 4 * (int64_t)ndims, got = read_full(f, h, hn);
    if (got < 0 && zcode(f) == Z_BUF_ERROR) got = 0;
    if (got < 0) {
        cb_fail(err, CB_STATUS_IO, path, NULL, "cannot read: %s", zerr(f, path));
        gzclose(f);
        return CB_STATUS_IO;
    }
    if (got < 4) {
        short_read(f, path, got, hn, "header", err);
        gzclose(f);
        return CB_STATUS_PARSE;
    }
    uint32_t magic = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    if (magic != want_magic) {
        const char *what = magic == IDX_IMAGES ? " (an image file)" : magic == IDX_LABELS ? " (a label file)" : "";
        gzclose(f);
        return cb_fail(err, CB_STATUS_PARSE, path, NULL, "bad magic 0x%08x%s: expected 0x%08x (%s)", magic, what,
                       want_magic, want_magic == IDX_IMAGES ? "idx3-ubyte images" : "idx1-ubyte labels");
    }
    if (got < hn) {
        short_read(f, path, got, hn, "header", err);
        gzclose(f);
        return CB_STATUS_PARSE;
    }
    for (int i = 0; i < ndims; i++)
        dims[i] = (uint32_t)h[4 + 4 * i] << 24 | (uint32_t)h[5 + 4 * i] << 16 | (uint32_t)h[6 + 4 * i] << 8 | h[7 + 4 * i];
    *out = f;
    return CB_OK;
}

// The n bytes the header promises. The buffer grows with what the file really holds (at most
// twice that), so a short file claiming gigabytes allocates nothing near its claim.
static cb_status read_body(gzFile f, const char *path, int64_t n, uint8_t **data, cb_error *err) {
    uint8_t *p = NULL;
    int64_t got = 0, cap = 0;
    cb_status st = CB_OK;
    while (got < n) {
        if (got == cap) {
            int64_t c = cap ? 2 * cap : 1 << 16;
            if (c > n) c = n;
            uint8_t *q = realloc(p, (size_t)c);
            if (!q) {
                st = cb_fail(err, CB_STATUS_NOMEM, path, NULL, "out of memory for %lld bytes", (long long)c);
                break;
            }
            p = q, cap = c;
        }
        int64_t r = read_full(f, p + got, cap - got);
        if (r < 0 && zcode(f) == Z_BUF_ERROR) r = 0; // a gzip stream cut short: a short read
        if (r < 0) {
            st = cb_fail(err, CB_STATUS_IO, path, NULL, "cannot read: %s", zerr(f, path));
            break;
        }
        got += r;
        if (got < cap) {
            st = short_read(f, path, got, n, "data", err);
            break;
        }
    }
    gzclose(f);
    if (st != CB_OK) {
        free(p);
        return st;
    }
    *data = p ? p : malloc(1);
    if (!*data) return cb_fail(err, CB_STATUS_NOMEM, path, NULL, "out of memory");
    return CB_OK;
}

cb_status cb_idx_read_images(const char *path, uint8_t **pix, int64_t *n, int *h, int *w, cb_error *err) {
    gzFile f;
    uint32_t d[3];
    cb_status st = open_header(path, IDX_IMAGES, 3, &f, d, err);
    if (st != CB_OK) return st;
    if (d[0] > CB_IDX_MAX_COUNT || d[1] == 0 || d[2] == 0 || d[1] > CB_IDX_MAX_SIDE || d[2] > CB_IDX_MAX_SIDE) {
        gzclose(f);
        return cb_fail(err, CB_STATUS_PARSE, path, NULL,
                       "absurd dimensions %u x %u x %u (count up to %lld, sides 1 to %d)", d[0], d[1], d[2],
                       CB_IDX_MAX_COUNT, CB_IDX_MAX_SIDE);
    }
    *n = d[0];
    *h = (int)d[1];
    *w = (int)d[2];
    return read_body(f, path, (int64_t)d[0] * d[1] * d[2], pix, err);
}

cb_status cb_idx_read_labels(const char *path, uint8_t **lab, int64_t *n, cb_error *err) {
    gzFile f;
    uint32_t d[1];
    cb_status st = open_header(path, IDX_LABELS, 1, &f, d, err);
    if (st != CB_OK) return st;
    if (d[0] > CB_IDX_MAX_COUNT) {
        gzclose(f);
        return cb_fail(err, CB_STATUS_PARSE, path, NULL, "absurd count %u (at most %lld)", d[0], CB_IDX_MAX_COUNT);
    }
    *n = d[0];
    if ((st = read_body(f, path, d[0], lab, err)) != CB_OK) return st;
    for (int64_t i = 0; i < *n; i++)
        if ((*lab)[i] >= CB_IDX_CLASSES) {
            cb_fail(err, CB_STATUS_PARSE, path, NULL, "label %lld is %u; labels must be 0 to %d", (long long)i, (*lab)[i],
                    CB_IDX_CLASSES - 1);
            free(*lab);
            *lab = NULL;
            return CB_STATUS_PARSE;
        }
    return CB_OK;
}

// DIR/BASE if it exists, else DIR/BASE.gz; the plain name when neither does (its open fails).
static void find_file(const char *dir, const char *base, char *out, size_t n) {
    snprintf(out, n, "%s/%s", dir, base);
    FILE *f = fopen(out, "rb");
    if (f) {
        fclose(f);
        return;
    }
    char gz[4096];
    snprintf(gz, sizeof gz, "%s/%s.gz", dir, base);
    if ((f = fopen(gz, "rb"))) {
        fclose(f);
        snprintf(out, n, "%s", gz);
    } else {
        snprintf(out, n, "%s/%s(.gz)", dir, base); // named as searched in the error
    }
}

void cb_dataset_free(cb_dataset *d) {
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}

cb_status cb_dataset_load(const char *dir, const char *split, bool normalise, int64_t limit, cb_dataset *d,
                          cb_error *err) {
    memset(d, 0, sizeof *d);
    char ip[4096], lp[4096], base[256];
    snprintf(base, sizeof base, "%s-images-idx3-ubyte", split);
    find_file(dir, base, ip, sizeof ip);
    snprintf(base, sizeof base, "%s-labels-idx1-ubyte", split);
    find_file(dir, base, lp, sizeof lp);
    uint8_t *pix = NULL, *lab = NULL;
    int64_t ni = 0, nl = 0;
    int h = 0, w = 0;
    cb_status st = cb_idx_read_images(ip, &pix, &ni, &h, &w, err);
    if (st != CB_OK) return st;
    if ((st = cb_idx_read_labels(lp, &lab, &nl, err)) != CB_OK) {
        free(pix);
        return st;
    }
    if (ni != nl) {
        free(pix);
        free(lab);
        return cb_fail(err, CB_STATUS_PARSE, lp, NULL, "%lld labels, but %s has %lld images", (long long)nl, ip,
                       (long long)ni);
    }
    int64_t n = limit > 0 && limit < ni ? limit : ni, px = (int64_t)h * w;
    d->x = malloc((size_t)(n * px > 0 ? n * px : 1) * sizeof(float));
    d->y = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!d->x || !d->y) {
        free(pix);
        free(lab);
        cb_dataset_free(d);
        return cb_fail(err, CB_STATUS_NOMEM, ip, NULL, "out of memory for %lld images", (long long)n);
    }
    float scale = 1.0f / 255, shift = 0;
    if (normalise) { // (p/255 - mean) / std = p * scale + shift
        scale = 1.0f / (255 * CB_FASHION_STD);
        shift = -CB_FASHION_MEAN / CB_FASHION_STD;
    }
    for (int64_t i = 0; i < n * px; i++) d->x[i] = (float)pix[i] * scale + shift;
    for (int64_t i = 0; i < n; i++) d->y[i] = lab[i];
    d->n = n;
    d->h = h;
    d->w = w;
    free(pix);
    free(lab);
    return CB_OK;
}
