// The results database: every run appended to an SQLite file (`--db FILE`), read back by
// `convbench history`, `compare` and `report`.
//
//   runs(id, date, verb, command, network, backend, precision, layout, batch, commit_id, dirty,
//        host, cpu, gpu, json)       one row per run; json: the whole result document
//   fields(run, key, value)          every header field (options and environment), typed
//   cells(run, tbl, row, col, num, text)   every table cell, long (num for numbers, text else)
#ifndef CB_BENCH_DB_H
#define CB_BENCH_DB_H

#include "convbench.h"

// Appends the run whose JSON document (as cb_report renders it) is `json`, in one transaction:
// whole or not at all. *id: the new run's id.
cb_status cb_db_append(const char *path, const char *json, int64_t *id, cb_error *err);

typedef struct cb_db_run {
    int64_t id;
    char date[32], verb[32], network[96], backend[32], precision[16], layout[8], commit[24], host[64], gpu[64];
    int64_t batch;
    bool dirty;
} cb_db_run;

// The runs, oldest first; verb NULL for all; limit > 0 keeps the newest `limit`. Free *runs.
cb_status cb_db_list(const char *path, const char *verb, int limit, cb_db_run **runs, int *n, cb_error *err);
// The JSON document of run `id` (free it); NULL with err set when there is no such run.
char *cb_db_json(const char *path, int64_t id, cb_error *err);

#endif
