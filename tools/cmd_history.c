// convbench history --db FILE: the runs a results database holds, oldest first.
#include "cli.h"
#include "bench/db.h"

#include <stdio.h>
#include <stdlib.h>

static int run(int argc, char **argv) {
    cli_out o = {0};
    const char *verb = NULL;
    long limit = 0;
    const cli_opt opts[] = {
        {"--verb", CLI_STR, &verb, "CMD", "only runs of this command (fullpass, layers, ...)"},
        {"--limit", CLI_INT, &limit, "N", "only the newest N runs"},
        {"--db", CLI_STR, &o.db, "FILE", "the results database to read"},
        CLI_OUT_FORMAT_OPTS(o),
        {0},
    };
    int rc = cli_parse(&cmd_history, opts, argc, argv, NULL, 0, 0);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_history, &o, &fmt)) >= 0) return rc;
    if (!o.db) return cli_usage_error(&cmd_history, "--db FILE is required");
    if (limit < 0 || limit > 1000000) return cli_usage_error(&cmd_history, "--limit: %ld must be in [0, 1000000]", limit);
    cb_db_run *runs = NULL;
    int n = 0;
    cb_error err = {0};
    if (cb_db_list(o.db, verb, (int)limit, &runs, &n, &err) != CB_OK) return cli_fail(&cmd_history, &err);
    cb_report *r = cb_report_new("history");
    cb_report_meta_str(r, "database", o.db);
    const char *cols[] = {"id", "date", "command", "network", "backend", "precision", "batch", "commit", "host", "gpu"};
    cb_table *t = cb_report_table(r, "runs", 10, cols);
    for (int i = 0; i < n; i++) {
        const cb_db_run *x = &runs[i];
        char commit[40], prec[24];
        snprintf(commit, sizeof commit, "%s%s", x->commit, x->dirty ? "-dirty" : "");
        snprintf(prec, sizeof prec, "%s%s%s", x->precision, x->layout[0] && x->precision[0] ? " " : "", x->layout);
        cb_table_row(t);
        cb_table_int(t, x->id);
        cb_table_str(t, x->date);
        cb_table_str(t, x->verb);
        cb_table_str(t, x->network);
        cb_table_str(t, x->backend);
        cb_table_str(t, prec);
        if (x->batch >= 0) cb_table_int(t, x->batch);
        else cb_table_null(t);
        cb_table_str(t, commit);
        cb_table_str(t, x->host);
        cb_table_str(t, x->gpu);
    }
    free(runs);
    cb_report_note(r, "%d run%s; compare some with convbench compare --db %s ID1 ID2 ...", n, n == 1 ? "" : "s", o.db);
    cli_out out = o;
    out.db = NULL; // reading the database does not add to it
    rc = cli_emit(&cmd_history, r, &out, fmt);
    cb_report_free(r);
    return rc;
}

const cli_cmd cmd_history = {"history", "list the runs of a results database (--db FILE)", "--db FILE [--verb CMD] [--limit N]", run};
