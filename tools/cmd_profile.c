// convbench profile NET: per-layer times for one direction, one column group per backend, with
// the algorithm each picked, its workspace and its rate, and a Sum row (Paleo's tables).
#include "run_common.h"
#include "bench/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BACKENDS 8

static int run(int argc, char **argv) {
    run_opts ro;
    run_opts_default(&ro);
    cli_out o = {0};
    const char *direction = "forward", *wrt = "data", *hold = "on";
    const cli_opt opts[] = {
        RUN_OPTS(ro),
        {"--direction", CLI_STR, &direction, "D", "forward (default), backward, or all (three tables from one plan)"},
        {"--wrt", CLI_STR, &wrt, "W", "with --direction backward: data (default) or filter"},
        {"--hold", CLI_STR, &hold, "on|off",
         "GPU: on (default): each timed pass waits on the device until it is queued, so a layer's time is the device's work alone; off: "
         "host launch gaps count in the layers they delay (as fullpass --per-layer shows them in a step)"},
        CLI_OUT_OPTS(o),
        {0},
    };
    const char *pos[1];
    int rc = cli_parse(&cmd_profile, opts, argc, argv, pos, 1, 1);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_profile, &o, &fmt)) >= 0) return rc;
    cb_phase phase = CB_PHASE_FORWARD;
    bool all = false; // every direction from one plan: three tables
    if (!strcmp(direction, "forward")) phase = CB_PHASE_FORWARD;
    else if (!strcmp(direction, "all")) all = true, phase = CB_PHASE_BWD_DATA;
    else if (!strcmp(direction, "backward")) {
        if (!strcmp(wrt, "data")) phase = CB_PHASE_BWD_DATA;
        else if (!strcmp(wrt, "filter")) phase = CB_PHASE_BWD_FILTER;
        else return cli_usage_error(&cmd_profile, "--wrt: '%s' is not data or filter", wrt);
    } else return cli_usage_error(&cmd_profile, "--direction: '%s' is not forward, backward or all", direction);
    if (strcmp(hold, "on") && strcmp(hold, "off")) return cli_usage_error(&cmd_profile, "--hold: '%s' is not on or off", hold);
    bool holding = !strcmp(hold, "on");
    int held = -1, hold_timeouts = 0; // (-1: no backend held: a CPU run)
    int ph0 = all ? 0 : (int)phase, ph1 = all ? CB_PHASE_COUNT : (int)phase + 1;
    // the backend list: "cpu,ref"
    char list[256];
    snprintf(list, sizeof list, "%s", ro.backend);
    const char *names[MAX_BACKENDS];
    int nb = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (nb == MAX_BACKENDS) return cli_usage_error(&cmd_profile, "--backend: at most %d backends", MAX_BACKENDS);
        names[nb++] = tok;
    }
    if (!nb) return cli_usage_error(&cmd_profile, "--backend: empty list");
    cb_exec_opts eo;
    double t_start = cb_now_ms();
    for (int b = 0; b < nb; b++) {
        ro.backend = names[b];
        if ((rc = run_opts_check(&cmd_profile, &ro, &eo)) >= 0) return rc;
    }
    cb_net *net = cli_load_net(&cmd_profile, pos[0], ro.batch, &rc);
    if (!net) return rc;
    int n = net->nlayers, iters = (int)ro.iters;
    // [phase][backend][layer]
    size_t cells = (size_t)CB_PHASE_COUNT * (size_t)nb * (size_t)n;
    double *med = calloc(cells, sizeof(double));
    char (*alg)[48] = calloc(cells, 48);
    double *ws = calloc(cells, sizeof(double));
    double *samples = calloc((size_t)CB_PHASE_COUNT * (size_t)n * (size_t)iters, sizeof(double));
    cb_layer_times *lf = calloc((size_t)n, sizeof *lf);
    cb_layer_times *lt = calloc((size_t)n, sizeof *lt);
    // the backends' notes of their slow paths (cb_exec_note), kept past each exec
    char (*bnote)[CB_EXEC_NOTE_LEN] = calloc((size_t)nb * CB_EXEC_MAX_NOTES, CB_EXEC_NOTE_LEN);
    int nbnote = 0;
    if (!med || !alg || !ws || !samples || !lt || !lf || !bnote) abort();
    for (int b = 0; b < nb; b++) {
        ro.backend = names[b];
        run_opts_check(&cmd_profile, &ro, &eo);
        eo.train = phase != CB_PHASE_FORWARD;
        eo.no_data_grad = true; // as Paleo: no gradient w.r.t. the input images
        eo.no_update = true;    // (per-layer times only: no momentum buffer)
        cb_error err = {0};
        cli_progress(&o, "profile: %s, batch %lld, backend %s: planning", net->name, (long long)cb_net_batch(net), names[b]);
        cb_exec *e = cb_exec_create(net, &eo, &err);
        if (!e) {
            rc = cli_fail(&cmd_profile, &err);
            goto out;
        }
        int h0 = -1; // the backend's timeouts before its timed iterations
        for (int it = 0; it < ro.warmup + iters; it++) {
            bool fwd = phase == CB_PHASE_FORWARD && !all;
            // (the warm-up unheld: its first pass makes plans and workspaces, and may wait for the device)
            if (it == ro.warmup && holding) h0 = cb_exec_hold(e, true);
            cb_exec_forward(e, !fwd, fwd || all ? lf : NULL);
            if (!fwd) {
                cb_exec_criterion_forward(e, NULL, NULL);
                cb_exec_criterion_backward(e, NULL);
                cb_exec_backward(e, lt);
            }
            if (it >= ro.warmup)
                for (int q = ph0; q < ph1; q++)
                    for (int i = 0; i < n; i++)
                        samples[((size_t)q * n + i) * iters + it - ro.warmup] = q == CB_PHASE_FORWARD ? lf[i].ms[q] : lt[i].ms[q];
            cli_progress_eta(&o, t_start, (double)b * (ro.warmup + iters) + it + 1, (double)nb * (ro.warmup + iters),
                             "profile: %s %s %d/%ld", names[b], it < ro.warmup ? "warm-up" : "iteration",
                             it < ro.warmup ? it + 1 : it - (int)ro.warmup + 1, it < ro.warmup ? ro.warmup : ro.iters);
        }
        if (h0 >= 0) {
            held = held < 0 ? 1 : held + 1;
            hold_timeouts += cb_exec_hold(e, false) - h0;
        }
        for (int q = ph0; q < ph1; q++)
            for (int i = 0; i < n; i++) {
                size_t c = ((size_t)q * nb + b) * n + i;
                med[c] = cb_stats_of(samples + ((size_t)q * n + i) * iters, iters).median;
                snprintf(alg[c], 48, "%s", cb_exec_algo(e, i, (cb_phase)q));
                ws[c] = (double)cb_exec_workspace(e, i, (cb_phase)q) / 1e6;
            }
        for (int k = 0; k < cb_exec_note_count(e); k++) snprintf(bnote[nbnote++], CB_EXEC_NOTE_LEN, "%s", cb_exec_note_at(e, k));
        cb_exec_destroy(e);
    }
    cb_report *r = cb_report_new("profile");
    cb_report_meta_str(r, "network", net->name);
    cb_report_meta_str(r, "direction", direction);
    if (phase != CB_PHASE_FORWARD && !all) cb_report_meta_str(r, "wrt", wrt);
    cb_report_meta_num(r, "batch", (double)cb_net_batch(net));
    cb_report_meta_str(r, "precision", cb_precision_name(eo.precision));
    cb_report_meta_str(r, "layout", cb_layout_name(eo.layout));
    cb_report_meta_str(r, "recompute", ro.recompute ? ro.recompute : "auto");
    cb_report_meta_num(r, "iterations", (double)iters);
    cb_report_meta_str(r, "hold", held > 0 ? "on" : holding ? "none" : "off");
    if (held > 0)
        cb_report_note(r, "hold: each timed pass waited on the device until the host had queued it, so the layers' times are the device's "
                          "work alone, not launch gaps (--hold off keeps them; fullpass --per-layer shows them in a step)");
    if (hold_timeouts > 0)
        cb_report_note(r, "hold: %d of the timed passes' waits ended by their 100 ms timeout (a call in the pass waited for the device, or "
                          "its launch queue filled): their first layers may include the host's time",
                       hold_timeouts);
    const char **cols = calloc((size_t)(1 + 4 * nb), sizeof(char *));
    char (*cn)[64] = calloc((size_t)(4 * nb), 64);
    if (!cols || !cn) abort();
    cols[0] = "layer";
    for (int b = 0; b < nb; b++) {
        snprintf(cn[4 * b], 64, "%s_ms", names[b]);
        snprintf(cn[4 * b + 1], 64, "%s_alg", names[b]);
        snprintf(cn[4 * b + 2], 64, "%s_ws_mb", names[b]);
        snprintf(cn[4 * b + 3], 64, "%s_gflops", names[b]);
        for (int k = 0; k < 4; k++) cols[1 + 4 * b + k] = cn[4 * b + k];
    }
    double *sum = calloc((size_t)nb, sizeof(double));
    if (!sum) abort();
    // one table for one direction ("layers", as Paleo's); with --direction all, one per direction
    static const char *const TABLE[CB_PHASE_COUNT] = {"forward", "bwd_data", "bwd_filter"};
    for (int q = ph0; q < ph1; q++) {
        cb_table *t = cb_report_table(r, all ? TABLE[q] : "layers", 1 + 4 * nb, cols);
        memset(sum, 0, sizeof(double) * (size_t)nb);
        for (int i = 1; i < n; i++) {
            cb_cost c;
            cb_layer_cost(net, i, &c);
            double fl = q == CB_PHASE_FORWARD ? c.fwd_flops : q == CB_PHASE_BWD_DATA ? c.bwd_data_flops : c.bwd_filter_flops;
            cb_table_row(t);
            cb_table_str(t, net->layers[i].name);
            for (int b = 0; b < nb; b++) {
                size_t k = ((size_t)q * nb + b) * n + i;
                double m = med[k];
                sum[b] += m;
                cb_table_num(t, m, 3);
                cb_table_str(t, alg[k]);
                if (ws[k] > 0) cb_table_num(t, ws[k], 3);
                else cb_table_null(t);
                if (m > 0 && fl > 0) cb_table_num(t, fl / m / 1e6, 1);
                else cb_table_null(t);
            }
        }
        cb_table_row(t);
        cb_table_str(t, "Sum");
        for (int b = 0; b < nb; b++) {
            cb_table_num(t, sum[b], 3);
            cb_table_null(t);
            cb_table_null(t);
            cb_table_null(t);
        }
    }
    for (int k = 0; k < nbnote; k++) cb_report_note(r, "%s", bnote[k]);
    rc = cli_emit(&cmd_profile, r, &o, fmt);
    cb_report_free(r);
    free(cols);
    free(cn);
    free(sum);
out:
    free(bnote);
    free(med);
    free(alg);
    free(ws);
    free(samples);
    free(lt);
    free(lf);
    cb_net_free(net);
    return rc;
}

const cli_cmd cmd_profile = {"profile", "per-layer times for one direction, side by side for several backends",
                             "NET [--backend B1,B2] [--direction forward|backward|all] [--wrt data|filter]", run};
