// Shared command-line handling: options tables, --help, network loading, report output.
#ifndef CB_TOOLS_CLI_H
#define CB_TOOLS_CLI_H

#include "convbench.h"
#include "bench/report.h"

#include <limits.h>

// CLI_LIST: each occurrence of the flag appends its value to a cli_list (repeatable flags)
typedef enum cli_kind { CLI_FLAG, CLI_STR, CLI_INT, CLI_FLOAT, CLI_LIST, CLI_KIND_COUNT } cli_kind;
// A CLI_INT option's value when it is not given (no integer on a command line reads as this).
#define CLI_UNSET LONG_MIN

#define CLI_LIST_MAX 32
typedef struct cli_list {
    const char *v[CLI_LIST_MAX];
    int n;
} cli_list;

typedef struct cli_opt {
    const char *name;             // "--iters"
    cli_kind kind;
    void *target;                 // bool*, const char**, long*, double*, cli_list*
    const char *metavar;          // "K"
    const char *help;
} cli_opt;

typedef struct cli_cmd {
    const char *name;
    const char *summary;
    const char *usage;            // after "convbench NAME "
    int (*run)(int argc, char **argv);
} cli_cmd;

// Parses argv[1..] against opts plus the common --help. Positionals are collected in pos (up
// to maxpos). Returns -1 to go on, or an exit status (0 after --help, 2 on a bad flag).
int cli_parse(const cli_cmd *cmd, const cli_opt *opts, int argc, char **argv, const char **pos, int minpos, int maxpos);

// exit statuses: bad input (flags, files, descriptions) 2; out of memory or device failure 3
int cli_status_exit(cb_status st);
int cli_fail(const cli_cmd *cmd, const cb_error *err);
int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// The format and output options every command has.
typedef struct cli_out {
    const char *format;           // table|csv|json|md
    const char *output;           // file or "-"
    bool quiet;                   // no progress on stderr
    const char *db;               // SQLite results database to append the run to
} cli_out;
#define CLI_OUT_OPTS(o)                                                                                                \
    CLI_OUT_FORMAT_OPTS(o), {"--db", CLI_STR, &(o).db, "FILE", "append the run (environment, options, tables) to this SQLite database"}
// the same for the commands that read a database (history, compare): --db is theirs to define
#define CLI_OUT_FORMAT_OPTS(o)                                                                                         \
    {"--format", CLI_STR, &(o).format, "F", "table, csv, json or md (default table)"},                                 \
        {"--output", CLI_STR, &(o).output, "FILE", "write the report to FILE (whole or not at all; default stdout)"},  \
        {"--quiet", CLI_FLAG, &(o).quiet, NULL, "no progress on stderr"}
int cli_out_check(const cli_cmd *cmd, const cli_out *o, cb_format *fmt);
int cli_emit(const cli_cmd *cmd, cb_report *r, const cli_out *o, cb_format fmt);

// batch: CLI_UNSET keeps the network's own; else it must be in [1, CB_MAX_BATCH]
cb_net *cli_load_net(const cli_cmd *cmd, const char *spec, long batch, int *exit_status);
// A line on stderr (unless --quiet), after the time since the command started: "[  12.3 s] ...".
void cli_progress(const cli_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// The same with ", ETA X" appended: `done` of `total` steps finished since since_ms (cb_now_ms's
// clock); at most a line a second, besides the first and the last step's.
void cli_progress_eta(const cli_out *o, double since_ms, double done, double total, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

void cli_shape_str(cb_shape s, char *buf, size_t n); // Paleo's NHWC "[64, 224, 224, 3]"

extern const cli_cmd cmd_summary, cmd_fullpass, cmd_profile;
extern const cli_cmd cmd_train, cmd_infer;
extern const cli_cmd cmd_predict, cmd_simulate, cmd_calibrate, cmd_algos, cmd_layers, cmd_model_eval;
extern const cli_cmd cmd_allreduce;
extern const cli_cmd cmd_history, cmd_compare, cmd_report;
extern const cli_cmd cmd_import;

#endif
