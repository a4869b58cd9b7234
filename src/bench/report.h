// Reports: tables of typed cells rendered as an aligned table, CSV, Markdown or JSON, with the
// run's environment in every JSON document. Files are written whole or not at all.
#ifndef CB_BENCH_REPORT_H
#define CB_BENCH_REPORT_H

#include "convbench.h"

#include <stdio.h>

typedef enum cb_format { CB_FORMAT_TABLE, CB_FORMAT_CSV, CB_FORMAT_JSON, CB_FORMAT_MD, CB_FORMAT_COUNT } cb_format;
bool cb_format_parse(const char *s, cb_format *out);

typedef struct cb_report cb_report;
typedef struct cb_table cb_table;

// The version of the JSON layout: top-level keys (schema_version, command, argv, verb, the
// environment, the command's header fields), "tables" (name -> rows as objects) and "notes".
#define CB_REPORT_SCHEMA_VERSION 2

cb_report *cb_report_new(const char *command);
// The process's command line, recorded once (main) and written into every JSON and CSV result.
void cb_report_set_argv(int argc, char **argv);
void cb_report_free(cb_report *r);
// metadata shown above tables and as top-level JSON keys
void cb_report_meta_str(cb_report *r, const char *key, const char *val);
void cb_report_meta_num(cb_report *r, const char *key, double val);
void cb_report_meta_bool(cb_report *r, const char *key, bool val);
void cb_report_note(cb_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

cb_table *cb_report_table(cb_report *r, const char *name, int ncols, const char *const *cols);
void cb_table_row(cb_table *t);               // start a row; cells follow in column order
void cb_table_str(cb_table *t, const char *s);
void cb_table_num(cb_table *t, double v, int decimals); // JSON keeps full precision
void cb_table_int(cb_table *t, int64_t v);    // printed with thousands separators in tables
void cb_table_null(cb_table *t);              // an empty cell / JSON null
void cb_table_bool(cb_table *t, bool v);      // "yes" / "-" in tables, true / false in JSON and CSV
void cb_fmt_int(int64_t v, char *buf, size_t n); // 1234567 -> "1,234,567"

// A growing string (p NUL-terminated once anything was added; free p).
typedef struct cb_sbuf {
    char *p;
    size_t n, cap;
} cb_sbuf;
void cb_sbuf_add(cb_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// n bytes to `path` (NULL or "-": stdout); a file through cb_write_whole: whole or not at all,
// through a symbolic link to its target, a device, pipe or directory refused.
cb_status cb_write_file(const char *path, const void *p, size_t n, cb_error *err);

// The JSON document (free it).
char *cb_report_json(const cb_report *r);
// Render to `path` (NULL or "-" for stdout). A file is written to PATH.tmp and renamed. CSV is
// long: one header, a first column `table` naming each row's table, then the header fields (as
// columns repeated on every row; `run_KEY` where a table has a column KEY), then the union of the
// tables' columns, empty where a row's table lacks one.
cb_status cb_report_write(const cb_report *r, cb_format fmt, const char *path, cb_error *err);

// environment: CPU model, threads, BLAS, cuDNN/CUDA versions, GPU, commit, date
void cb_env_add(cb_report *r);
const char *cb_env_cpu_model(void);
const char *cb_env_commit(void); // the convbench commit this binary was built from
bool cb_env_dirty(void);         // built from a tree with uncommitted changes to tracked files
int cb_env_threads(void);
double cb_env_max_rss_mb(void); // the process's peak resident memory so far (getrusage), MiB

#endif
