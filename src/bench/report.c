#include "bench/report.h"

#include "core/net.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum { CELL_NULL, CELL_STR, CELL_NUM, CELL_INT, CELL_BOOL } cell_kind;

typedef struct cell {
    cell_kind kind;
    char *text;                   // as shown in table/csv/md
    double num;
} cell;

struct cb_table {
    char *name;
    int ncols;
    char **cols;
    int nrows, cap;
    cell *cells;                  // nrows * ncols
    int cur;                      // cells filled in the current row
};

struct cb_report {
    char *command;
    cJSON *meta;                  // object
    int nmeta;
    char **meta_keys, **meta_text;
    int nnotes;
    char **notes;
    int ntables;
    cb_table **tables;
};

static const char *FORMAT_NAMES[] = {"table", "csv", "json", "md"};
_Static_assert(sizeof FORMAT_NAMES / sizeof FORMAT_NAMES[0] == CB_FORMAT_COUNT, "a format lacks a name");

bool cb_format_parse(const char *s, cb_format *out) {
    for (int i = 0; i < CB_FORMAT_COUNT; i++)
        if (strcmp(s, FORMAT_NAMES[i]) == 0) {
            *out = (cb_format)i;
            return true;
        }
    return false;
}

static char *g_command_line;  // shell-quoted, for reading
static cJSON *g_argv;          // array of strings

void cb_report_set_argv(int argc, char **argv) {
    free(g_command_line);
    cJSON_Delete(g_argv);
    g_argv = cJSON_CreateArray();
    size_t cap = 1;
    for (int i = 0; i < argc; i++) cap += 3 + 4 * strlen(argv[i]);
    g_command_line = cb_xcalloc(cap, 1);
    char *o = g_command_line;
    for (int i = 0; i < argc; i++) {
        const char *a = i == 0 ? "convbench" : argv[i];
        cJSON_AddItemToArray(g_argv, cJSON_CreateString(a));
        if (i) *o++ = ' ';
        bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%") == strlen(a);
        if (plain) o += sprintf(o, "%s", a);
        else {
            *o++ = '\'';
            for (const char *p = a; *p; p++) o += *p == '\'' ? sprintf(o, "'\\''") : sprintf(o, "%c", *p);
            *o++ = '\'';
        }
    }
}

cb_report *cb_report_new(const char *command) {
    cb_report *r = cb_xcalloc(1, sizeof *r);
    r->command = cb_strdup(command);
    r->meta = cJSON_CreateObject();
    return r;
}

void cb_report_free(cb_report *r) {
    if (!r) return;
    for (int t = 0; t < r->ntables; t++) {
        cb_table *tb = r->tables[t];
        for (int i = 0; i < tb->nrows * tb->ncols; i++) free(tb->cells[i].text);
        for (int i = 0; i < tb->ncols; i++) free(tb->cols[i]);
        free(tb->cols);
        free(tb->cells);
        free(tb->name);
        free(tb);
    }
    for (int i = 0; i < r->nmeta; i++) free(r->meta_keys[i]), free(r->meta_text[i]);
    for (int i = 0; i < r->nnotes; i++) free(r->notes[i]);
    free(r->meta_keys);
    free(r->meta_text);
    free(r->notes);
    free(r->tables);
    cJSON_Delete(r->meta);
    free(r->command);
    free(r);
}

static void push_str(char ***arr, int n, char *s) {
    *arr = realloc(*arr, sizeof(char *) * (size_t)(n + 1));
    if (!*arr) abort();
    (*arr)[n] = s;
}

static void meta_text(cb_report *r, const char *key, const char *text) {
    for (int i = 0; i < r->nmeta; i++)
        if (strcmp(r->meta_keys[i], key) == 0) {
            free(r->meta_text[i]);
            r->meta_text[i] = cb_strdup(text);
            return;
        }
    push_str(&r->meta_keys, r->nmeta, cb_strdup(key));
    push_str(&r->meta_text, r->nmeta, cb_strdup(text));
    r->nmeta++;
}

void cb_report_meta_str(cb_report *r, const char *key, const char *val) {
    cJSON_DeleteItemFromObjectCaseSensitive(r->meta, key);
    cJSON_AddStringToObject(r->meta, key, val ? val : "");
    meta_text(r, key, val ? val : "");
}

void cb_report_meta_num(cb_report *r, const char *key, double val) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.6g", val);
    cJSON_DeleteItemFromObjectCaseSensitive(r->meta, key);
    cJSON_AddNumberToObject(r->meta, key, val);
    meta_text(r, key, buf);
}

void cb_report_meta_bool(cb_report *r, const char *key, bool val) {
    cJSON_DeleteItemFromObjectCaseSensitive(r->meta, key);
    cJSON_AddBoolToObject(r->meta, key, val);
    meta_text(r, key, val ? "yes" : "no");
}

void cb_report_note(cb_report *r, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    push_str(&r->notes, r->nnotes++, cb_strdup(buf));
}

cb_table *cb_report_table(cb_report *r, const char *name, int ncols, const char *const *cols) {
    cb_table *t = cb_xcalloc(1, sizeof *t);
    t->name = cb_strdup(name);
    t->ncols = ncols;
    t->cols = cb_xcalloc((size_t)ncols, sizeof(char *));
    for (int i = 0; i < ncols; i++) t->cols[i] = cb_strdup(cols[i]);
    r->tables = realloc(r->tables, sizeof(cb_table *) * (size_t)(r->ntables + 1));
    if (!r->tables) abort();
    r->tables[r->ntables++] = t;
    return t;
}

void cb_table_row(cb_table *t) {
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 32;
        t->cells = realloc(t->cells, sizeof(cell) * (size_t)t->cap * (size_t)t->ncols);
        if (!t->cells) abort();
    }
    memset(&t->cells[(size_t)t->nrows * (size_t)t->ncols], 0, sizeof(cell) * (size_t)t->ncols);
    t->nrows++;
    t->cur = 0;
}

static cell *next_cell(cb_table *t) {
    if (t->nrows == 0 || t->cur >= t->ncols) {
        fprintf(stderr, "convbench: internal error: table '%s' row overflow\n", t->name);
        abort();
    }
    return &t->cells[(size_t)(t->nrows - 1) * (size_t)t->ncols + (size_t)t->cur++];
}

void cb_table_str(cb_table *t, const char *s) {
    cell *c = next_cell(t);
    c->kind = CELL_STR;
    c->text = cb_strdup(s ? s : "");
}

void cb_table_num(cb_table *t, double v, int decimals) {
    cell *c = next_cell(t);
    char buf[64];
    if (!isfinite(v)) snprintf(buf, sizeof buf, "%s", isnan(v) ? "nan" : "inf");
    else snprintf(buf, sizeof buf, "%.*f", decimals, v);
    c->kind = CELL_NUM;
    c->num = v;
    c->text = cb_strdup(buf);
}

void cb_fmt_int(int64_t v, char *out, size_t n) {
    char raw[32], buf[48];
    snprintf(raw, sizeof raw, "%lld", (long long)(v < 0 ? -v : v));
    int len = (int)strlen(raw), o = 0;
    if (v < 0) buf[o++] = '-';
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = 0;
    snprintf(out, n, "%s", buf);
}

void cb_table_int(cb_table *t, int64_t v) {
    cell *c = next_cell(t);
    char buf[48];
    cb_fmt_int(v, buf, sizeof buf);
    c->kind = CELL_INT;
    c->num = (double)v;
    c->text = cb_strdup(buf);
}

void cb_table_bool(cb_table *t, bool v) {
    cell *c = next_cell(t);
    c->kind = CELL_BOOL;
    c->num = v;
    c->text = cb_strdup(v ? "yes" : "-");
}

void cb_table_null(cb_table *t) {
    cell *c = next_cell(t);
    c->kind = CELL_NULL;
    c->text = cb_strdup("");
}

// ---- rendering ----------------------------------------------------------------------------------

void cb_sbuf_add(cb_sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)need + 1 > b->cap) {
        b->cap = (b->n + (size_t)need + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)need;
}

static void csv_field(cb_sbuf *b, const char *s) {
    if (strpbrk(s, ",\"\n")) {
        cb_sbuf_add(b, "\"");
        for (const char *p = s; *p; p++) cb_sbuf_add(b, *p == '"' ? "\"\"" : "%c", *p);
        cb_sbuf_add(b, "\"");
    } else cb_sbuf_add(b, "%s", s);
}

static const cell *at(const cb_table *t, int r, int c) { return &t->cells[(size_t)r * (size_t)t->ncols + (size_t)c]; }

static void render_text(const cb_report *r, cb_format fmt, cb_sbuf *b) {
    for (int i = 0; i < r->nmeta; i++)
        cb_sbuf_add(b, fmt == CB_FORMAT_MD ? "- **%s**: %s\n" : "%s: %s\n", r->meta_keys[i], r->meta_text[i]);
    if (r->nmeta) cb_sbuf_add(b, "\n");
    for (int ti = 0; ti < r->ntables; ti++) {
        const cb_table *t = r->tables[ti];
        int w[64] = {0};
        int nc = t->ncols < 64 ? t->ncols : 64;
        for (int c = 0; c < nc; c++) {
            w[c] = (int)strlen(t->cols[c]);
            for (int row = 0; row < t->nrows; row++) {
                int l = (int)strlen(at(t, row, c)->text ? at(t, row, c)->text : "");
                if (l > w[c]) w[c] = l;
            }
        }
        if (fmt == CB_FORMAT_MD) {
            cb_sbuf_add(b, "### %s\n\n|", t->name);
            for (int c = 0; c < nc; c++) cb_sbuf_add(b, " %s |", t->cols[c]);
            cb_sbuf_add(b, "\n|");
            for (int c = 0; c < nc; c++) cb_sbuf_add(b, c ? "---:|" : "---|");
            cb_sbuf_add(b, "\n");
            for (int row = 0; row < t->nrows; row++) {
                cb_sbuf_add(b, "|");
                for (int c = 0; c < nc; c++) cb_sbuf_add(b, " %s |", at(t, row, c)->text ? at(t, row, c)->text : "");
                cb_sbuf_add(b, "\n");
            }
        } else {
            // numbers right-aligned; text columns (the first non-empty cell is text) left-aligned
            bool left[64];
            for (int c = 0; c < nc; c++) {
                left[c] = c == 0;
                for (int row = 0; row < t->nrows && c; row++)
                    if (at(t, row, c)->kind != CELL_NULL && (at(t, row, c)->text[0] || row == t->nrows - 1)) {
                        left[c] = at(t, row, c)->kind == CELL_STR || at(t, row, c)->kind == CELL_BOOL;
                        break;
                    }
            }
            if (r->ntables > 1 || t->name[0]) cb_sbuf_add(b, "%s\n", t->name);
            for (int c = 0; c < nc; c++) cb_sbuf_add(b, left[c] ? "%s%-*s" : "%s%*s", c ? "  " : "", c == nc - 1 && left[c] ? 0 : w[c], t->cols[c]);
            cb_sbuf_add(b, "\n");
            for (int row = 0; row < t->nrows; row++) {
                for (int c = 0; c < nc; c++) {
                    const cell *x = at(t, row, c);
                    cb_sbuf_add(b, left[c] ? "%s%-*s" : "%s%*s", c ? "  " : "", c == nc - 1 && left[c] ? 0 : w[c], x->text ? x->text : "");
                }
                cb_sbuf_add(b, "\n");
            }
        }
        cb_sbuf_add(b, "\n");
    }
    for (int i = 0; i < r->nnotes; i++) {
        if (fmt == CB_FORMAT_MD) {
            cb_sbuf_add(b, "- note: %s\n", r->notes[i]);
            continue;
        }
        // wrapped at 100 columns, continuation lines indented under the text
        const char *p = r->notes[i];
        for (bool first = true; *p; first = false) {
            int len = (int)strlen(p);
            if (len > 94) {
                len = 94;
                while (len > 0 && p[len] != ' ') len--;
                if (len == 0) len = 94;
            }
            cb_sbuf_add(b, "%s%.*s\n", first ? "note: " : "      ", len, p);
            p += len;
            while (*p == ' ') p++;
        }
    }
}

static void csv_cell(cb_sbuf *b, const cell *x) {
    if (x->kind == CELL_INT) cb_sbuf_add(b, "%lld", (long long)x->num);
    else if (x->kind == CELL_NUM) cb_sbuf_add(b, "%.9g", x->num);
    else if (x->kind == CELL_BOOL) cb_sbuf_add(b, "%s", x->num ? "true" : "false");
    else csv_field(b, x->text ? x->text : "");
}

static bool has_col(const cb_report *r, const char *name) {
    for (int ti = 0; ti < r->ntables; ti++)
        for (int c = 0; c < r->tables[ti]->ncols; c++)
            if (strcmp(r->tables[ti]->cols[c], name) == 0) return true;
    return false;
}

// long CSV: table, the header fields, the union of the tables' columns (see report.h)
static void render_csv(const cb_report *r, cb_sbuf *b) {
    char **cols = NULL; // the union, in first-seen order
    int ncols = 0;
    for (int ti = 0; ti < r->ntables; ti++)
        for (int c = 0; c < r->tables[ti]->ncols; c++) {
            int k = 0;
            while (k < ncols && strcmp(cols[k], r->tables[ti]->cols[c])) k++;
            if (k == ncols) push_str(&cols, ncols++, r->tables[ti]->cols[c]);
        }
    cb_sbuf_add(b, "table,command");
    for (const cJSON *m = r->meta->child; m; m = m->next) {
        char name[256];
        snprintf(name, sizeof name, "%s%s", has_col(r, m->string) || !strcmp(m->string, "table") || !strcmp(m->string, "command") ? "run_" : "", m->string);
        cb_sbuf_add(b, ",");
        csv_field(b, name);
    }
    for (int k = 0; k < ncols; k++) cb_sbuf_add(b, ","), csv_field(b, cols[k]);
    cb_sbuf_add(b, "\n");
    cb_sbuf meta = {0}; // the header fields' values, the same on every row
    for (const cJSON *m = r->meta->child; m; m = m->next) {
        cb_sbuf_add(&meta, ",");
        if (cJSON_IsNumber(m)) cb_sbuf_add(&meta, "%.9g", m->valuedouble);
        else if (cJSON_IsBool(m)) cb_sbuf_add(&meta, "%s", cJSON_IsTrue(m) ? "true" : "false");
        else if (cJSON_IsString(m)) csv_field(&meta, m->valuestring);
    }
    for (int ti = 0; ti < r->ntables; ti++) {
        const cb_table *t = r->tables[ti];
        for (int row = 0; row < t->nrows; row++) {
            csv_field(b, t->name);
            cb_sbuf_add(b, ",");
            csv_field(b, g_command_line ? g_command_line : r->command);
            cb_sbuf_add(b, "%s", meta.p ? meta.p : "");
            for (int k = 0; k < ncols; k++) {
                cb_sbuf_add(b, ",");
                for (int c = 0; c < t->ncols; c++)
                    if (strcmp(t->cols[c], cols[k]) == 0) csv_cell(b, at(t, row, c));
            }
            cb_sbuf_add(b, "\n");
        }
    }
    free(meta.p);
    free(cols);
}

char *cb_report_json(const cb_report *r) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema_version", CB_REPORT_SCHEMA_VERSION);
    cJSON_AddStringToObject(root, "verb", r->command);
    cJSON_AddStringToObject(root, "command", g_command_line ? g_command_line : r->command);
    cJSON_AddItemToObject(root, "argv", g_argv ? cJSON_Duplicate(g_argv, 1) : cJSON_CreateArray());
    for (const cJSON *m = r->meta->child; m; m = m->next) cJSON_AddItemToObject(root, m->string, cJSON_Duplicate(m, 1));
    cJSON *tables = cJSON_AddObjectToObject(root, "tables");
    for (int ti = 0; ti < r->ntables; ti++) {
        const cb_table *t = r->tables[ti];
        cJSON *rows = cJSON_AddArrayToObject(tables, t->name);
        for (int row = 0; row < t->nrows; row++) {
            cJSON *o = cJSON_CreateObject();
            for (int c = 0; c < t->ncols; c++) {
                const cell *x = at(t, row, c);
                if (x->kind == CELL_BOOL) cJSON_AddBoolToObject(o, t->cols[c], x->num != 0);
                else if (x->kind == CELL_NUM || x->kind == CELL_INT) {
                    if (isfinite(x->num)) cJSON_AddNumberToObject(o, t->cols[c], x->num);
                    else cJSON_AddNullToObject(o, t->cols[c]);
                } else if (x->kind == CELL_STR) cJSON_AddStringToObject(o, t->cols[c], x->text);
                else cJSON_AddNullToObject(o, t->cols[c]);
            }
            cJSON_AddItemToArray(rows, o);
        }
    }
    cJSON *notes = cJSON_AddArrayToObject(root, "notes");
    for (int i = 0; i < r->nnotes; i++) cJSON_AddItemToArray(notes, cJSON_CreateString(r->notes[i]));
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

cb_status cb_write_file(const char *path, const void *p, size_t n, cb_error *err) {
    if (path && strcmp(path, "-") != 0) return cb_write_whole(path, p ? p : "", n, err);
    cb_status st = CB_OK;
    if (n && fwrite(p, 1, n, stdout) != n) st = cb_fail(err, CB_STATUS_IO, "stdout", NULL, "write failed");
    fflush(stdout);
    return st;
}

cb_status cb_report_write(const cb_report *r, cb_format fmt, const char *path, cb_error *err) {
    char *text;
    cb_sbuf b = {0};
    if (fmt == CB_FORMAT_JSON) {
        text = cb_report_json(r);
        if (!text) return cb_fail(err, CB_STATUS_NOMEM, path, NULL, "out of memory rendering JSON");
        size_t n = strlen(text);
        b.p = malloc(n + 2);
        if (!b.p) abort();
        memcpy(b.p, text, n);
        b.p[n] = '\n';
        b.p[n + 1] = 0;
        b.n = n + 1;
        cJSON_free(text);
    } else if (fmt == CB_FORMAT_CSV) {
        render_csv(r, &b);
    } else {
        render_text(r, fmt, &b);
    }
    cb_status st = cb_write_file(path, b.p, b.n, err);
    free(b.p);
    return st;
}
