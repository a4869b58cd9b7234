// convbench compare RUN1 RUN2 ...: runs side by side (result files, or run ids with --db), with
// each run's ratio to the first and a flag where the change is beyond the noise both runs
// measured (their interquartile ranges), as torch.utils.benchmark's Compare does.
#include "runs_common.h"
#include "bench/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 16
#define MAX_METRICS 8

// the row's key: its text cells joined
static void row_key(const cJSON *row, char *out, size_t n) {
    out[0] = 0;
    for (const cJSON *c = row->child; c; c = c->next)
        if (cJSON_IsString(c)) {
            const char *v = c->valuestring + strspn(c->valuestring, " ");
            snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? " / " : "", v);
        }
}

static const cJSON *find_row(const cJSON *rows, const char *key) {
    char k[512];
    for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
        row_key(r, k, sizeof k);
        if (!strcmp(k, key)) return r;
    }
    return NULL;
}

static bool ends_with(const char *s, const char *t) { return strlen(s) >= strlen(t) && !strcmp(s + strlen(s) - strlen(t), t); }

static int run(int argc, char **argv) {
    cli_out o = {0};
    const char *table = NULL, *metric = NULL;
    double threshold = 2;
    const cli_opt opts[] = {
        {"--table", CLI_STR, &table, "NAME", "the table to compare (default: the first run's first, samples aside)"},
        {"--metric", CLI_STR, &metric, "COL", "the column to compare (default median_ms, else every *_ms column)"},
        {"--threshold", CLI_FLOAT, &threshold, "PCT", "smallest change flagged, in percent (default 2), besides the noise"},
        {"--db", CLI_STR, &o.db, "FILE", "read the runs (ids: 12, or -1 for the newest) from this database"},
        CLI_OUT_FORMAT_OPTS(o),
        {0},
    };
    const char *pos[MAX_RUNS] = {0};
    int npos = 0;
    int rc = cli_parse(&cmd_compare, opts, argc, argv, pos, 2, MAX_RUNS);
    if (rc >= 0) return rc;
    npos = 0;
    while (npos < MAX_RUNS && pos[npos]) npos++;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_compare, &o, &fmt)) >= 0) return rc;
    if (!(threshold >= 0 && threshold < 1e6)) return cli_usage_error(&cmd_compare, "--threshold must be a percentage >= 0");
    cJSON *doc[MAX_RUNS] = {0};
    char label[MAX_RUNS][128];
    int n = 0;
    for (; n < npos; n++) {
        if (!(doc[n] = runs_load(&cmd_compare, o.db, pos[n], &rc))) goto out;
        runs_label(doc[n], pos[n], o.db != NULL, label[n], sizeof label[n]);
    }
    const cJSON *t0 = cJSON_GetObjectItemCaseSensitive(doc[0], "tables");
    if (!table)
        for (const cJSON *t = t0->child; t && !table; t = t->next)
            if (strcmp(t->string, "samples")) table = t->string;
    const cJSON *rows[MAX_RUNS];
    for (int k = 0; k < n; k++) {
        rows[k] = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc[k], "tables"), table ? table : "");
        if (!cJSON_IsArray(rows[k]) || !rows[k]->child) {
            rc = cli_usage_error(&cmd_compare, "%s: no table '%s'", pos[k], table ? table : "");
            goto out;
        }
    }
    // the metrics: --metric, else median_ms, else the *_ms columns of the first row
    const char *metrics[MAX_METRICS];
    int nm = 0;
    const cJSON *first = rows[0]->child;
    if (metric) metrics[nm++] = metric;
    else if (cJSON_GetObjectItemCaseSensitive(first, "median_ms")) metrics[nm++] = "median_ms";
    else
        for (const cJSON *c = first->child; c && nm < MAX_METRICS; c = c->next)
            if (ends_with(c->string, "_ms") && !cJSON_IsString(c)) metrics[nm++] = c->string;
    if (!nm)
        for (const cJSON *c = first->child; c && nm < MAX_METRICS; c = c->next)
            if (cJSON_IsNumber(c)) metrics[nm++] = c->string;
    if (!nm) {
        rc = cli_usage_error(&cmd_compare, "table '%s' has no numeric column (--metric COL)", table);
        goto out;
    }
    cb_report *r = cb_report_new("compare");
    cb_report_meta_str(r, "table", table);
    for (int k = 0; k < n; k++) {
        char key[16];
        snprintf(key, sizeof key, "run%d", k + 1);
        char desc[1024];
        snprintf(desc, sizeof desc, "%.127s: %.32s %.200s, batch %g, %.32s %.16s %.8s on %.64s%s%.64s", label[k], runs_verb(doc[k]),
                 runs_str(doc[k], "network"), runs_num(doc[k], "batch"), runs_str(doc[k], "backend"),
                 runs_str(doc[k], "precision"), runs_str(doc[k], "layout"), runs_str(doc[k], "host"),
                 *runs_str(doc[k], "gpu") ? ", " : "", runs_str(doc[k], "gpu"));
        cb_report_meta_str(r, key, desc);
    }
    int ncols = 2 + 1 + 3 * (n - 1);
    const char **cols = calloc((size_t)ncols, sizeof *cols);
    char (*names)[24] = calloc((size_t)ncols, 24);
    if (!cols || !names) abort();
    cols[0] = "row", cols[1] = "metric", cols[2] = "run1";
    for (int k = 1; k < n; k++) {
        snprintf(names[3 * k - 1], 24, "run%d", k + 1);
        snprintf(names[3 * k], 24, "ratio%d", k + 1);
        snprintf(names[3 * k + 1], 24, "change%d", k + 1);
        cols[3 * k] = names[3 * k - 1], cols[3 * k + 1] = names[3 * k], cols[3 * k + 2] = names[3 * k + 1];
    }
    cb_table *t = cb_report_table(r, table, ncols, cols);
    int flagged = 0, unmeasured = 0;
    for (const cJSON *row = rows[0]->child; row; row = row->next) {
        char key[512];
        row_key(row, key, sizeof key);
        for (int m = 0; m < nm; m++) {
            // noise: the interquartile range beside a median
            const char *noise_col = !strcmp(metrics[m], "median_ms") ? "iqr_ms" : NULL;
            double v0 = runs_num(row, metrics[m]), n0 = noise_col ? runs_num(row, noise_col) : NAN;
            cb_table_row(t);
            cb_table_str(t, key);
            cb_table_str(t, metrics[m]);
            if (isnan(v0)) cb_table_null(t);
            else cb_table_num(t, v0, 3);
            for (int k = 1; k < n; k++) {
                const cJSON *rk = find_row(rows[k], key);
                double v = rk ? runs_num(rk, metrics[m]) : NAN, nk = rk && noise_col ? runs_num(rk, noise_col) : NAN;
                if (isnan(v)) {
                    cb_table_null(t), cb_table_null(t), cb_table_null(t);
                    continue;
                }
                cb_table_num(t, v, 3);
                if (isnan(v0) || v0 == 0) {
                    cb_table_null(t), cb_table_null(t);
                    continue;
                }
                cb_table_num(t, v / v0, 3);
                double d = v - v0, noise = fmax(n0, nk);
                bool time = ends_with(metrics[m], "_ms");
                if (time && fmax(v0, v) < CB_STATS_MIN_MS) cb_table_str(t, "~"); // below the clock's resolution
                else if (isnan(noise)) {
                    cb_table_str(t, "?");
                    unmeasured++;
                } else if (fabs(d) > noise && fabs(d) > threshold / 100 * fabs(v0)) {
                    cb_table_str(t, d > 0 ? (time ? "slower" : "higher") : (time ? "faster" : "lower"));
                    flagged++;
                } else cb_table_str(t, "~");
            }
        }
    }
    cb_report_note(r, "ratioK = runK / run1; changeK: slower/faster (higher/lower) where |runK - run1| exceeds "
                      "both runs' IQR and %g%% of run1, ~ within the noise (or both under %.2f ms), ? where a run "
                      "measured no IQR",
                   threshold, CB_STATS_MIN_MS);
    cb_report_note(r, "%d change%s beyond the noise; %d without a noise measure", flagged, flagged == 1 ? "" : "s", unmeasured);
    cli_out out = o;
    out.db = NULL;
    rc = cli_emit(&cmd_compare, r, &out, fmt);
    cb_report_free(r);
    free(cols);
    free(names);
out:
    for (int k = 0; k < n; k++) cJSON_Delete(doc[k]);
    return rc;
}

const cli_cmd cmd_compare = {"compare", "runs side by side (files, or ids with --db) with ratios, flagging changes beyond the noise",
                             "RUN1 RUN2 [RUN3 ...] [--db FILE] [--table NAME] [--metric COL]", run};
