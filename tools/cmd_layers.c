// convbench layers: convnet-benchmarks' layer-wise suite L1-L5 (batch 128 by default), forward,
// backward-data and backward-filter per backend, with the algorithm each picked and its rate,
// and a best-per-layer row ("cherry-picking": the fastest backend per layer and direction).
//   L1  3 -> 96,   11x11 on 128x128      L2  64 -> 128, 9x9 on 64x64     L3  128 -> 128, 9x9 on 32x32
//   L4  128 -> 128, 7x7 on 16x16         L5  384 -> 384, 3x3 on 13x13
// Every layer is stride 1 and unpadded, without bias, as the peer (bench/peer_pytorch.py) runs them.
#include "run_common.h"
#include "bench/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BACKENDS 8

typedef struct suite_layer { const char *name; int c, hw, k, rs, pad; } suite_layer;
static const suite_layer SUITE[] = {
    {"L1", 3, 128, 96, 11, 0}, {"L2", 64, 64, 128, 9, 0}, {"L3", 128, 32, 128, 9, 0},
    {"L4", 128, 16, 128, 7, 0}, {"L5", 384, 13, 384, 3, 0},
};
enum { NSUITE = sizeof SUITE / sizeof SUITE[0] };

static cb_net *suite_net(const suite_layer *s, long batch, cb_error *err) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"convnet-benchmarks %s\", \"layers\": {"
             "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [%ld, %d, %d, %d]},"
             "\"%s\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [%d, %d, %d, %d],"
             " \"padding\": [%d, %d], \"strides\": [1, 1, 1, 1], \"bias\": false, \"activation_fn\": null}}}",
             s->name, batch, s->hw, s->hw, s->c, s->name, s->rs, s->rs, s->c, s->k, s->pad, s->pad);
    return cb_net_load_string(json, s->name, err);
}

typedef struct cell { double ms[CB_PHASE_COUNT]; char alg[CB_PHASE_COUNT][48]; } cell;

// medians of each phase of the conv layer over iters steps (after warm-up steps)
static int measure(const cli_out *o, const char *backend, const suite_layer *s, cb_net *net, const cb_exec_opts *eo,
                   long warmup, long iters, cell *out) {
    cb_error err = {0};
    cb_exec *e = cb_exec_create(net, eo, &err);
    if (!e) return cli_fail(&cmd_layers, &err);
    cb_layer_times lt[2];
    double *t = calloc((size_t)iters * CB_PHASE_COUNT, sizeof(double));
    if (!t) abort();
    cb_exec_set_output_grad(e, 1.0f);
    for (long it = 0; it < warmup + iters; it++) {
        cb_exec_forward(e, true, lt);
        double f = lt[1].ms[CB_PHASE_FORWARD];
        cb_exec_backward(e, lt);
        if (it >= warmup)
            for (int p = 0; p < CB_PHASE_COUNT; p++) t[p * iters + it - warmup] = p ? lt[1].ms[p] : f;
    }
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        out->ms[p] = cb_stats_of(t + p * iters, (int)iters).median;
        snprintf(out->alg[p], sizeof out->alg[p], "%s", cb_exec_algo(e, 1, (cb_phase)p));
    }
    cli_progress(o, "layers: %s %s: %.3f / %.3f / %.3f ms", s->name, backend, out->ms[0], out->ms[1], out->ms[2]);
    free(t);
    cb_exec_destroy(e);
    return -1;
}

static int run(int argc, char **argv) {
    run_opts ro;
    run_opts_default(&ro);
    ro.batch = 128;
    cli_out o = {0};
    const char *only = NULL;
    const cli_opt opts[] = {
        RUN_OPTS_BATCH(ro, "batch size (default 128, as convnet-benchmarks)"),
        {"--layers", CLI_STR, &only, "L1,L3", "run these layers only (default all five)"},
        CLI_OUT_OPTS(o),
        {0},
    };
    int rc = cli_parse(&cmd_layers, opts, argc, argv, NULL, 0, 0);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_layers, &o, &fmt)) >= 0) return rc;
    if (ro.batch < 1 || ro.batch > 65536) return cli_usage_error(&cmd_layers, "--batch: %ld must be in [1, 65536]", ro.batch);
    bool want[NSUITE] = {0};
    if (only) {
        char list[128];
        snprintf(list, sizeof list, "%s", only);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            int j = 0;
            while (j < NSUITE && strcmp(tok, SUITE[j].name)) j++;
            if (j == NSUITE) return cli_usage_error(&cmd_layers, "--layers: '%s' is not one of L1, L2, L3, L4, L5", tok);
            want[j] = true;
        }
    } else
        for (int j = 0; j < NSUITE; j++) want[j] = true;
    char list[256];
    snprintf(list, sizeof list, "%s", ro.backend);
    const char *names[MAX_BACKENDS];
    int nb = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (nb == MAX_BACKENDS) return cli_usage_error(&cmd_layers, "--backend: at most %d backends", MAX_BACKENDS);
        names[nb++] = tok;
    }
    if (!nb) return cli_usage_error(&cmd_layers, "--backend: empty list");
    cb_exec_opts eo;
    for (int b = 0; b < nb; b++) {
        ro.backend = names[b];
        if ((rc = run_opts_check(&cmd_layers, &ro, &eo)) >= 0) return rc;
    }
    cell *cells = calloc((size_t)NSUITE * (size_t)nb, sizeof *cells);
    if (!cells) abort();
    for (int j = 0; j < NSUITE && rc < 0; j++) {
        if (!want[j]) continue;
        cb_error err = {0};
        cb_net *net = suite_net(&SUITE[j], ro.batch, &err);
        if (!net) {
            rc = cli_fail(&cmd_layers, &err);
            break;
        }
        for (int b = 0; b < nb && rc < 0; b++) {
            ro.backend = names[b];
            run_opts_check(&cmd_layers, &ro, &eo);
            eo.train = true;
            eo.no_data_grad = false; // convnet-benchmarks times updateGradInput on every layer, L1 too
            rc = measure(&o, names[b], &SUITE[j], net, &eo, ro.warmup, ro.iters, &cells[j * nb + b]);
        }
        cb_net_free(net);
    }
    if (rc >= 0) {
        free(cells);
        return rc;
    }
    cb_report *r = cb_report_new("layers");
    cb_report_meta_num(r, "batch", (double)ro.batch);
    cb_report_meta_str(r, "precision", cb_precision_name(eo.precision));
    cb_report_meta_num(r, "iterations", (double)ro.iters);
    const char *cols[] = {"layer", "backend", "fwd_ms", "bwd_data_ms", "bwd_filter_ms", "total_ms", "fwd_tflops",
                          "fwd_alg", "bwd_data_alg", "bwd_filter_alg"};
    cb_table *t = cb_report_table(r, "layers", 10, cols);
    for (int j = 0; j < NSUITE; j++) {
        if (!want[j]) continue;
        const suite_layer *s = &SUITE[j];
        int p = s->hw + 2 * s->pad - s->rs + 1;
        double flops = 2.0 * (double)ro.batch * s->k * p * p * s->c * s->rs * s->rs;
        cell best;
        memset(&best, 0, sizeof best);
        int from[CB_PHASE_COUNT] = {0};
        for (int b = 0; b < nb; b++) {
            const cell *c = &cells[j * nb + b];
            cb_table_row(t);
            cb_table_str(t, s->name);
            cb_table_str(t, names[b]);
            for (int q = 0; q < CB_PHASE_COUNT; q++) {
                cb_table_num(t, c->ms[q], 3);
                if (b == 0 || c->ms[q] < best.ms[q]) best.ms[q] = c->ms[q], from[q] = b;
            }
            cb_table_num(t, c->ms[0] + c->ms[1] + c->ms[2], 3);
            cb_table_num(t, c->ms[0] > 0 ? flops / c->ms[0] / 1e9 : 0, 1);
            for (int q = 0; q < CB_PHASE_COUNT; q++) cb_table_str(t, c->alg[q]);
        }
        if (nb > 1) { // cherry-picking: the fastest backend per direction
            cb_table_row(t);
            cb_table_str(t, s->name);
            cb_table_str(t, "best");
            for (int q = 0; q < CB_PHASE_COUNT; q++) cb_table_num(t, best.ms[q], 3);
            cb_table_num(t, best.ms[0] + best.ms[1] + best.ms[2], 3);
            cb_table_num(t, best.ms[0] > 0 ? flops / best.ms[0] / 1e9 : 0, 1);
            for (int q = 0; q < CB_PHASE_COUNT; q++) cb_table_str(t, names[from[q]]);
        }
    }
    cb_report_note(r, "stride 1, no padding, no bias; times are medians of per-layer backend-clock timings");
    rc = cli_emit(&cmd_layers, r, &o, fmt);
    cb_report_free(r);
    free(cells);
    return rc;
}

const cli_cmd cmd_layers = {"layers", "convnet-benchmarks' L1-L5 convolution suite per backend, with the best per layer",
                            "[--backend B1,B2] [--batch N] [--layers L1,L2] [--precision P]", run};
