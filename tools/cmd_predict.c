// convbench predict NET --device NAME: per-layer predicted times for forward, backward-data and
// backward-filter with the algorithm assumed and the bound, totals for a training step; or,
// with --paleo, Paleo's uncalibrated method; with --measure, predicted vs measured.
#include "model_cli.h"
#include "core/net.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const PHASE_COL[CB_PHASE_COUNT] = {"fwd", "bwd_data", "bwd_filter"};

typedef struct measured {
    cb_phase phase;
    double *ms;                         // per layer index, NAN where absent
    char (*alg)[48];                    // the algorithm the backend picked ("" where absent)
} measured;

// layer kinds --kinds selects: conv, fc, pool, other
static const char *kind_of(cb_op op) { return op == CB_OP_CONV ? "conv" : op == CB_OP_FC ? "fc" : op == CB_OP_POOL ? "pool" : "other"; }

static bool kind_selected(const char *kinds, cb_op op) {
    if (!kinds || !strcmp(kinds, "all")) return true;
    char list[256];
    snprintf(list, sizeof list, "%s", kinds);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (!strcmp(tok, kind_of(op))) return true;
    return false;
}


// One `convbench profile --format json` document: its direction and each layer's <backend>_ms.
static int load_measure(const char *path, const cb_net *net, measured *m) {
    cb_error err = {0};
    char *text = cb_read_text(path, &err);
    if (!text) return cli_usage_error(&cmd_predict, "--measure: cannot read '%s'", path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    int rc = -1;
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(root, "direction");
    const cJSON *wrt = cJSON_GetObjectItemCaseSensitive(root, "wrt");
    const cJSON *tables = cJSON_GetObjectItemCaseSensitive(root, "tables");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(tables, "layers");
    if (!root || !cJSON_IsString(dir) || !cJSON_IsArray(rows)) {
        rc = cli_usage_error(&cmd_predict, "--measure: '%s' is not the JSON of convbench profile", path);
        goto out;
    }
    if (!strcmp(dir->valuestring, "forward")) m->phase = CB_PHASE_FORWARD;
    else if (cJSON_IsString(wrt) && !strcmp(wrt->valuestring, "filter")) m->phase = CB_PHASE_BWD_FILTER;
    else m->phase = CB_PHASE_BWD_DATA;
    m->ms = malloc(sizeof(double) * (size_t)net->nlayers);
    m->alg = calloc((size_t)net->nlayers, sizeof *m->alg);
    if (!m->ms || !m->alg) abort();
    for (int i = 0; i < net->nlayers; i++) m->ms[i] = NAN;
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "layer");
        if (!cJSON_IsString(name)) continue;
        int i = cb_net_find(net, name->valuestring);
        if (i < 0) continue;
        const cJSON *c;
        cJSON_ArrayForEach(c, row) { // the first backend's "<backend>_ms" column, and its "<backend>_alg"
            size_t n = strlen(c->string);
            if (n > 3 && !strcmp(c->string + n - 3, "_ms") && cJSON_IsNumber(c)) {
                m->ms[i] = c->valuedouble;
                const cJSON *a = c->next;
                if (a && cJSON_IsString(a) && strlen(a->string) > 4 && !strcmp(a->string + strlen(a->string) - 4, "_alg"))
                    snprintf(m->alg[i], sizeof m->alg[i], "%s", a->valuestring);
                break;
            }
        }
    }
out:
    cJSON_Delete(root);
    return rc;
}

static void cell_ms(cb_table *t, double ms) {
    if (ms > 0) cb_table_num(t, ms, 4);
    else cb_table_null(t);
}

static int run(int argc, char **argv) {
    long batch = -1, ws_mb = 4096;
    const char *device = NULL, *precision = "fp32", *calibration = NULL, *measure = NULL, *db_path = NULL, *kinds = "all";
    bool paleo = false;
    cli_out o = {0};
    const cli_opt opts[] = {
        {"--device", CLI_STR, &device, "NAME", "device from the database (h200, a100, titanx-maxwell, xeon-2c, ...)"},
        {"--batch", CLI_INT, &batch, "N", "batch size (default: the network's)"},
        {"--precision", CLI_STR, &precision, "P", "fp32 (default), tf32 or bf16"},
        {"--calibration", CLI_STR, &calibration, "FILE", "device entry written by convbench calibrate --save"},
        {"--paleo", CLI_FLAG, &paleo, NULL, "Paleo's uncalibrated method: GEMM FLOPs over peak, platform percent 1.0"},
        {"--measure", CLI_STR, &measure, "F1,F2", "convbench profile --format json outputs (one per direction) to compare"},
        {"--kinds", CLI_STR, &kinds, "K1,K2", "with --measure: layer kinds compared, conv, fc, pool, other or all (default)"},
        {"--workspace-mb", CLI_INT, &ws_mb, "MB", "calibrated GPU: algorithms may use this much workspace, as profile's (default 4096)"},
        {"--devices", CLI_STR, &db_path, "FILE", "device database (default $CONVBENCH_DEVICES or data/devices.json)"},
        CLI_OUT_OPTS(o),
        {0},
    };
    const char *pos[1];
    int rc = cli_parse(&cmd_predict, opts, argc, argv, pos, 1, 1);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_predict, &o, &fmt)) >= 0) return rc;
    cb_model_opts mo = {CB_PREC_FP32, 0, false};
    if (ws_mb < 0) return cli_usage_error(&cmd_predict, "--workspace-mb: %ld must not be negative", ws_mb);
    mo.workspace_limit = (double)ws_mb * (1 << 20);
    for (const char *k = kinds; *k;) { // every item a known kind
        size_t n = strcspn(k, ",");
        bool known = false;
        const char *names[] = {"conv", "fc", "pool", "other", "all"};
        for (int j = 0; j < 5; j++) known |= strlen(names[j]) == n && !strncmp(k, names[j], n);
        if (!known) return cli_usage_error(&cmd_predict, "--kinds: '%.*s' is not conv, fc, pool, other or all", (int)n, k);
        k += n + (k[n] == ',');
    }
    if (!cb_precision_parse(precision, &mo.precision))
        return cli_usage_error(&cmd_predict, "--precision: '%s' is not fp32, tf32 or bf16", precision);
    cb_devdb db;
    cb_device dev;
    if ((rc = model_cli_device(&cmd_predict, db_path, device, calibration, &db, &dev)) >= 0) return rc;
    cb_devdb_free(&db);
    cb_net *net = cli_load_net(&cmd_predict, pos[0], batch, &rc);
    if (!net) return rc;
    int n = net->nlayers;
    measured meas[8];
    int nmeas = 0;
    if (measure) {
        char list[2048];
        snprintf(list, sizeof list, "%s", measure);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            if (nmeas == 8) {
                rc = cli_usage_error(&cmd_predict, "--measure: at most 8 files");
                goto out;
            }
            if ((rc = load_measure(tok, net, &meas[nmeas])) >= 0) goto out;
            nmeas++;
        }
    }

    cb_report *r = cb_report_new("predict");
    cb_report_meta_str(r, "network", net->name);
    cb_report_meta_num(r, "batch", (double)cb_net_batch(net));
    cb_report_meta_str(r, "device", dev.name);
    cb_report_meta_str(r, "precision", cb_precision_name(mo.precision));
    cb_report_meta_str(r, "method", paleo ? "paleo" : dev.cal.nalgo ? "calibrated GPU (per-algorithm fit)" : dev.calibrated ? "roofline, calibrated" : "roofline");
    if (calibration) cb_report_meta_str(r, "calibration", calibration);
    double tot[CB_PHASE_COUNT] = {0};
    if (!nmeas) {
        const char *cols[] = {"layer", "type", "fwd_ms", "fwd_alg", "fwd_bound", "bwd_data_ms", "bwd_data_alg",
                              "bwd_data_bound", "bwd_filter_ms", "bwd_filter_alg", "bwd_filter_bound", "ws_mb"};
        cb_table *t = cb_report_table(r, "layers", 12, cols);
        for (int i = 1; i < n; i++) {
            cb_table_row(t);
            cb_table_str(t, net->layers[i].name);
            cb_table_str(t, cb_op_name(net->layers[i].op));
            double ws = 0;
            for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
                if (paleo) {
                    double ms = cb_paleo_layer_ms(&dev, net, i, (cb_phase)ph);
                    tot[ph] += ms;
                    cell_ms(t, ms);
                    if (ms > 0) cb_table_str(t, "gemm (paleo)");
                    else cb_table_null(t);
                    cb_table_null(t);
                    continue;
                }
                cb_pred p;
                cb_predict_layer(&dev, net, i, (cb_phase)ph, &mo, &p);
                tot[ph] += p.ms;
                cell_ms(t, p.ms);
                if (p.algo < CB_ALGO_COUNT) {
                    cb_table_str(t, p.name[0] ? p.name : cb_algo_name(p.algo));
                    cb_table_str(t, p.memory_bound ? "memory" : "compute");
                } else {
                    cb_table_null(t);
                    cb_table_null(t);
                }
                if (p.workspace > ws) ws = p.workspace;
            }
            if (ws > 0) cb_table_num(t, ws / 1e6, 3);
            else cb_table_null(t);
        }
        double upd;
        if (paleo) upd = cb_paleo_update_ms(&dev, net);
        else {
            cb_pred u;
            cb_predict_update(&dev, net, &mo, &u);
            upd = u.ms;
        }
        const char *tc[] = {"quantity", "ms"};
        cb_table *tt = cb_report_table(r, "totals", 2, tc);
        const char *names[] = {"forward", "backward data", "backward filter"};
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
            cb_table_row(tt);
            cb_table_str(tt, names[ph]);
            cb_table_num(tt, tot[ph], 3);
        }
        cb_table_row(tt);
        cb_table_str(tt, "update (weights, gradients, momentum)");
        cb_table_num(tt, upd, 3);
        cb_table_row(tt);
        cb_table_str(tt, "training step");
        cb_table_num(tt, tot[0] + tot[1] + tot[2] + upd, 3);
        if (!paleo)
            cb_report_note(r, "rates: gemm %.1f GFLOP/s, bandwidth %.1f GB/s%s", cb_model_rate(&dev, mo.precision, CB_ALGO_GEMM, CB_PHASE_FORWARD) / 1e9,
                           cb_model_bw(&dev) / 1e9, dev.calibrated ? " (calibrated)" : "");
    } else {
        // predicted vs measured, ours and Paleo's, per layer and direction
        mo.inference = true; // profile times the forward as inference, the backward after a training forward
        const char *cols[] = {"layer", "direction", "measured_ms", "measured_alg", "model_ms", "model_alg", "model_err_pct", "paleo_ms", "paleo_err_pct"};
        cb_table *t = cb_report_table(r, "compare", 9, cols);
        int skipped = 0;
        int cap = n * nmeas;
        int ne[CB_PHASE_COUNT + 1] = {0};
        double *bym[CB_PHASE_COUNT + 1], *byp[CB_PHASE_COUNT + 1];
        for (int k = 0; k <= CB_PHASE_COUNT; k++) {
            bym[k] = malloc(sizeof(double) * (size_t)cap);
            byp[k] = malloc(sizeof(double) * (size_t)cap);
        }
        for (int k = 0; k < nmeas; k++) {
            cb_phase ph = meas[k].phase;
            for (int i = 1; i < n; i++) {
                double mv = meas[k].ms[i];
                if (!(mv > 0) || !kind_selected(kinds, net->layers[i].op)) continue;
                if (ph == CB_PHASE_BWD_DATA && !cb_model_needs_data_grad(net, i)) { // only its activation's gradient
                    skipped++;
                    continue;
                }
                cb_pred p;
                cb_predict_layer(&dev, net, i, ph, &mo, &p);
                double pp = cb_paleo_layer_ms(&dev, net, i, ph);
                double e1 = 100 * fabs(p.ms - mv) / mv, e2 = 100 * fabs(pp - mv) / mv;
                cb_table_row(t);
                cb_table_str(t, net->layers[i].name);
                cb_table_str(t, PHASE_COL[ph]);
                cb_table_num(t, mv, 4);
                if (meas[k].alg[i][0]) cb_table_str(t, meas[k].alg[i]);
                else cb_table_null(t);
                cb_table_num(t, p.ms, 4);
                if (p.algo < CB_ALGO_COUNT) cb_table_str(t, p.name[0] ? p.name : cb_algo_name(p.algo));
                else cb_table_null(t);
                cb_table_num(t, e1, 1);
                cb_table_num(t, pp, 4);
                cb_table_num(t, e2, 1);
                bym[ph][ne[ph]] = e1;
                byp[ph][ne[ph]++] = e2;
                bym[CB_PHASE_COUNT][ne[CB_PHASE_COUNT]] = e1;
                byp[CB_PHASE_COUNT][ne[CB_PHASE_COUNT]++] = e2;
            }
        }
        const char *sc[] = {"direction", "layers", "model_median_pct", "model_p90_pct", "paleo_median_pct", "paleo_p90_pct"};
        cb_table *s = cb_report_table(r, "error", 6, sc);
        for (int k = 0; k <= CB_PHASE_COUNT; k++) {
            if (!ne[k]) continue;
            double m1, p1, m2, p2;
            model_cli_percentiles(bym[k], ne[k], &m1, &p1);
            model_cli_percentiles(byp[k], ne[k], &m2, &p2);
            cb_table_row(s);
            cb_table_str(s, k == CB_PHASE_COUNT ? "all" : PHASE_COL[k]);
            cb_table_int(s, ne[k]);
            cb_table_num(s, m1, 1);
            cb_table_num(s, p1, 1);
            cb_table_num(s, m2, 1);
            cb_table_num(s, p2, 1);
        }
        cb_report_note(r, "error: |predicted - measured| / measured per layer with a measured time; Paleo's method ignores "
                          "layers it does not model (0 ms, 100%% error)");
        if (skipped)
            cb_report_note(r, "%d backward-data rows left out: layers fed by the input compute no data gradient (their time is "
                              "only the activation's gradient)", skipped);
        if (strcmp(kinds, "all")) cb_report_note(r, "layer kinds compared: %s", kinds);
        for (int k = 0; k <= CB_PHASE_COUNT; k++) free(bym[k]), free(byp[k]);
    }
    rc = cli_emit(&cmd_predict, r, &o, fmt);
    cb_report_free(r);
out:
    for (int k = 0; k < nmeas; k++) free(meas[k].ms), free(meas[k].alg);
    cb_net_free(net);
    return rc;
}

const cli_cmd cmd_predict = {"predict", "predicted per-layer times (roofline over algorithms, or Paleo's method) and a training step",
                             "NET --device NAME|FILE [--batch N] [--precision P] [--calibration FILE] [--paleo] [--measure F1,F2 [--kinds K]]", run};
