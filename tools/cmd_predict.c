// convbench predict NET --device NAME: per-layer predicted times for forward, backward-data and
// backward-filter with the algorithm assumed and the bound, totals for a training step; or,
// with --paleo, Paleo's uncalibrated method; with --measure, predicted vs measured.
#include "model_cli.h"
#include "model_plot.h"
#include "core/json.h"
#include "core/net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MEASURE 12 // directions compared in all

static const char *const PHASE_COL[CB_PHASE_COUNT] = {"fwd", "bwd_data", "bwd_filter"};

static void cell_ms(cb_table *t, double ms) {
    if (ms > 0) cb_table_num(t, ms, 4);
    else cb_table_null(t);
}

static int run(int argc, char **argv) {
    long batch = CLI_UNSET, ws_mb = 4096;
    const char *device = NULL, *precision = "fp32", *layout = "nchw", *calibration = NULL, *db_path = NULL, *kinds = "all", *plot = NULL;
    bool paleo = false;
    cli_list measure = {0};
    cli_out o = {0};
    bool plot_failed = false;
    const cli_opt opts[] = {
        {"--device", CLI_STR, &device, "NAME", "device from the database (h200, a100, titanx-maxwell, xeon-2c, ...)"},
        {"--batch", CLI_INT, &batch, "N", "batch size (default: the network's)"},
        {"--precision", CLI_STR, &precision, "P", "fp32 (default), tf32 or bf16"},
        {"--layout", CLI_STR, &layout, "L", "nchw (default) or nhwc: the activations' storage, as fullpass and profile take it"},
        {"--calibration", CLI_STR, &calibration, "FILE", "device entry written by convbench calibrate --save"},
        {"--paleo", CLI_FLAG, &paleo, NULL, "Paleo's uncalibrated method: GEMM FLOPs over peak, platform percent 1.0"},
        {"--measure", CLI_LIST, &measure, "F1,F2", "convbench profile --format json outputs of this network, batch and precision to compare (repeatable)"},
        {"--kinds", CLI_STR, &kinds, "K1,K2", "with --measure: layer kinds compared, conv, fc, pool, other or all (default)"},
        {"--plot", CLI_STR, &plot, "FILE.svg", "with --measure: predicted against measured per layer-direction, as SVG"},
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
    cb_model_opts mo = {CB_PREC_FP32, 0, false, CB_LAYOUT_NCHW, false, false};
    if (ws_mb < 0) return cli_usage_error(&cmd_predict, "--workspace-mb: %ld must not be negative", ws_mb);
    mo.workspace_limit = (double)ws_mb * (1 << 20);
    if ((rc = model_cli_kinds_check(&cmd_predict, kinds)) >= 0) return rc;
    if (plot && !measure.n) return cli_usage_error(&cmd_predict, "--plot needs --measure");
    if (!cb_precision_parse(precision, &mo.precision))
        return cli_usage_error(&cmd_predict, "--precision: '%s' is not fp32, tf32 or bf16", precision);
    if (!cb_layout_parse(layout, &mo.layout)) return cli_usage_error(&cmd_predict, "--layout: '%s' is not nchw or nhwc", layout);
    cb_devdb db;
    cb_device dev;
    if ((rc = model_cli_device(&cmd_predict, db_path, device, calibration, false, &db, &dev)) >= 0) return rc;
    cb_devdb_free(&db);
    cb_net *net = cli_load_net(&cmd_predict, pos[0], batch, &rc);
    if (!net) return rc;
    int n = net->nlayers;
    model_measure meas[MAX_MEASURE];
    int nmeas = 0;
    for (int j = 0; j < measure.n; j++) { // each --measure, each a comma-separated list
        for (const char *f = measure.v[j]; *f;) {
            size_t len = strcspn(f, ",");
            char path[4096];
            snprintf(path, sizeof path, "%.*s", (int)len, f);
            f += len + (f[len] == ',');
            if (!len) continue;
            if ((rc = model_cli_load_measure(&cmd_predict, path, net, mo.precision, mo.layout, dev.cal.backend[0] ? dev.cal.backend : NULL, meas, &nmeas, MAX_MEASURE)) >= 0) goto out;
        }
    }
    const cb_backend_caps *mb = nmeas ? cb_backend_caps_of(meas[0].backend) : NULL;
    mo.own_race = mb && mb->races_own_conv; // measured on auto: its race of the own wgmma kernel priced too

    cb_report *r = cb_report_new("predict");
    cb_report_meta_str(r, "network", net->name);
    cb_report_meta_num(r, "batch", (double)cb_net_batch(net));
    cb_report_meta_str(r, "device", dev.name);
    cb_report_meta_str(r, "precision", cb_precision_name(mo.precision));
    cb_report_meta_str(r, "layout", cb_layout_name(mo.layout));
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
        const char *cols[] = {"layer", "direction", "measured_ms", "measured_alg", "model_ms", "model_alg", "model_err_pct", "paleo_ms", "paleo_err_pct"};
        cb_table *t = cb_report_table(r, "compare", 9, cols);
        int skipped = 0, nrow = 0;
        model_row *rows = model_cli_compare(&dev, net, meas, nmeas, kinds, mo, &nrow, &skipped);
        int ne[CB_PHASE_COUNT + 1] = {0};
        double *bym[CB_PHASE_COUNT + 1], *byp[CB_PHASE_COUNT + 1];
        for (int k = 0; k <= CB_PHASE_COUNT; k++) {
            bym[k] = malloc(sizeof(double) * (size_t)(nrow + 1));
            byp[k] = malloc(sizeof(double) * (size_t)(nrow + 1));
            if (!bym[k] || !byp[k]) abort();
        }
        for (int j = 0; j < nrow; j++) {
            const model_row *w = &rows[j];
            cb_table_row(t);
            cb_table_str(t, net->layers[w->layer].name);
            cb_table_str(t, PHASE_COL[w->phase]);
            cb_table_num(t, w->measured_ms, 4);
            if (w->measured_alg[0]) cb_table_str(t, w->measured_alg);
            else cb_table_null(t);
            cb_table_num(t, w->pred.ms, 4);
            if (w->pred.algo < CB_ALGO_COUNT) cb_table_str(t, w->pred.name[0] ? w->pred.name : cb_algo_name(w->pred.algo));
            else cb_table_null(t);
            cb_table_num(t, w->err_pct, 1);
            cb_table_num(t, w->paleo_ms, 4);
            cb_table_num(t, w->paleo_err_pct, 1);
            for (int k = w->phase; k <= CB_PHASE_COUNT; k += CB_PHASE_COUNT - w->phase) {
                bym[k][ne[k]] = w->err_pct;
                byp[k][ne[k]++] = w->paleo_err_pct;
            }
        }
        if (plot) {
            model_point *pts = malloc(sizeof *pts * (size_t)(nrow + 1));
            if (!pts) abort();
            for (int j = 0; j < nrow; j++) pts[j] = (model_point){rows[j].measured_ms, rows[j].pred.ms, rows[j].phase};
            char title[256];
            snprintf(title, sizeof title, "%.60s, batch %lld, %s", net->name, (long long)cb_net_batch(net), dev.name);
            plot_failed = model_plot_svg(plot, title, pts, nrow) != 0;
            free(pts);
        }
        free(rows);
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
    rc = plot_failed ? cli_usage_error(&cmd_predict, "--plot: cannot write '%s'", plot) : cli_emit(&cmd_predict, r, &o, fmt);
    cb_report_free(r);
out:
    for (int k = 0; k < nmeas; k++) model_cli_measure_free(&meas[k]);
    cb_net_free(net);
    return rc;
}

const cli_cmd cmd_predict = {"predict", "predicted per-layer times (roofline over algorithms, or Paleo's method) and a training step",
                             "NET --device NAME|FILE [--batch N] [--precision P] [--layout L] [--calibration FILE] [--paleo] [--measure F1,F2 ... [--kinds K] [--plot FILE.svg]]", run};
