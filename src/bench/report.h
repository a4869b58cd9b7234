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

cb_report *cb_report_new(const char *command);
void cb_report_free(cb_report *r);
// metadata shown above tables and as top-level JSON keys
void cb_report_meta_str(cb_report *r, const char *key, const char *val);
void cb_report_meta_num(cb_report *r, const char *key, double val);
void cb_report_note(cb_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

cb_table *cb_report_table(cb_report *r, const char *name, int ncols, const char *const *cols);
void cb_table_row(cb_table *t);               // start a row; cells follow in column order
void cb_table_str(cb_table *t, const char *s);
void cb_table_num(cb_table *t, double v, int decimals); // JSON keeps full precision
void cb_table_int(cb_table *t, int64_t v);    // printed with thousands separators in tables
void cb_table_null(cb_table *t);              // an empty cell / JSON null
void cb_fmt_int(int64_t v, char *buf, size_t n); // 1234567 -> "1,234,567"

// Render to `path` (NULL or "-" for stdout). A file is written whole (cb_write_file).
// n bytes to `path` (NULL or "-": stdout); a file through cb_write_whole: whole or not at all,
// through a symbolic link to its target, a device, pipe or directory refused.
cb_status cb_write_file(const char *path, const void *p, size_t n, cb_error *err);
cb_status cb_report_write(const cb_report *r, cb_format fmt, const char *path, cb_error *err);

// environment: CPU model, threads, BLAS, cuDNN/CUDA versions, GPU, commit, date
void cb_env_add(cb_report *r);
const char *cb_env_cpu_model(void);
const char *cb_env_commit(void); // the convbench commit this binary was built from
int cb_env_threads(void);

#endif
