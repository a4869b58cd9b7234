// Result documents for history, compare and report: JSON files, or runs of a --db database.
#ifndef CB_TOOLS_RUNS_COMMON_H
#define CB_TOOLS_RUNS_COMMON_H

#include "cli.h"

#include <cjson/cJSON.h>

// A run: `spec` is a run id when db is set ("12", or "-1" for the newest, "-2" the one before),
// else a JSON result file. NULL after a one-line message (*rc: the exit status).
cJSON *runs_load(const cli_cmd *cmd, const char *db, const char *spec, int *rc);
// Its verb: "verb" (schema 2), else "command" (the older files)
const char *runs_verb(const cJSON *doc);
// A short label: "#ID" or the file's name, then the commit (+ "-dirty") and the date
void runs_label(const cJSON *doc, const char *spec, bool from_db, char *out, size_t n);
const char *runs_str(const cJSON *o, const char *key); // "" when absent
double runs_num(const cJSON *o, const char *key);      // NAN when absent or not a number

#endif
