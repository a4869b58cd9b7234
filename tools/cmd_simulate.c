// convbench simulate NET --workers 1,2,4 --network NAME --device NAME: Paleo's distributed
// training simulation: per worker count, compute, communication, step time, speed-up, efficiency.
// --interconnect FILE: the link fitted to `convbench allreduce` on this machine (or the one a
// calibration stores: calibrate --allreduce); --measure FILE: `fullpass --gpus` results printed
// beside the simulation, with the error per worker count; --grad-precision as fullpass's.
#include "model_cli.h"
#include "dist/dist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORKERS 64

static int run(int argc, char **argv) {
    long batch = CLI_UNSET;
    const char *device = NULL, *calibration = NULL, *network = NULL, *db_path = NULL, *precision = "fp32";
    const char *workers = "1,2,4,8,16,32,64,128", *scaling = "weak", *parallel = "data", *allreduce = "ring", *grad_precision = "fp32";
    bool overlap = false, paleo = false;
    const char *interconnect = NULL;
    cli_list measure = {0};
    cli_out o = {0};
    const cli_opt opts[] = {
        {"--device", CLI_STR, &device, "NAME", "device from the database (default: this machine's GPU, else the database's first)"},
        {"--network", CLI_STR, &network, "NAME", "interconnect: pcie3|4|5, nvlink3|4, ethernet10|25|100, ib-edr|hdr|ndr "
                                                 "(default: the device's usual one: nvlink4 for h100/h200, nvlink3 for a100, else pcie3)"},
        {"--workers", CLI_STR, &workers, "LIST", "worker counts, comma-separated (default 1,2,4,...,128)"},
        {"--scaling", CLI_STR, &scaling, "S", "weak (batch per worker, default) or strong (batch split)"},
        {"--parallel", CLI_STR, &parallel, "P", "data (default), model or hybrid"},
        {"--allreduce", CLI_STR, &allreduce, "A", "ring (default), tree or butterfly"},
        {"--overlap", CLI_FLAG, &overlap, NULL, "overlap the gradient all-reduce with the backward pass"},
        {"--grad-precision", CLI_STR, &grad_precision, "P", "gradients all-reduced in fp32 (default) or bf16 (half the bytes, plus the casts), as fullpass --gpus"},
        {"--batch", CLI_INT, &batch, "N", "batch size (default: the network's)"},
        {"--precision", CLI_STR, &precision, "P", "fp32 (default), tf32 or bf16"},
        {"--calibration", CLI_STR, &calibration, "FILE", "device entry written by convbench calibrate --save (its measured interconnect too, when it stores one)"},
        {"--paleo", CLI_FLAG, &paleo, NULL, "per-layer times by Paleo's uncalibrated method"},
        {"--devices", CLI_STR, &db_path, "FILE", "device database (default data/devices.json)"},
        {"--interconnect", CLI_STR, &interconnect, "FILE", "the link fitted to `convbench allreduce --format json` (instead of --network or a calibration's)"},
        {"--measure", CLI_LIST, &measure, "F1,F2", "`fullpass --gpus --format json` results to print beside the simulation (repeatable)"},
        CLI_OUT_OPTS(o),
        {0},
    };
    const char *pos[1];
    int rc = cli_parse(&cmd_simulate, opts, argc, argv, pos, 1, 1);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_simulate, &o, &fmt)) >= 0) return rc;
    cb_sim_opts so = {0};
    so.paleo = paleo;
    so.overlap = overlap;
    if (!cb_precision_parse(precision, &so.model.precision))
        return cli_usage_error(&cmd_simulate, "--precision: '%s' is not fp32, tf32 or bf16", precision);
    if (!cb_grad_precision_parse(grad_precision, &so.grad_precision))
        return cli_usage_error(&cmd_simulate, "--grad-precision: '%s' is not fp32 or bf16", grad_precision);
    if (!strcmp(scaling, "weak")) so.strong = false;
    else if (!strcmp(scaling, "strong")) so.strong = true;
    else return cli_usage_error(&cmd_simulate, "--scaling: '%s' is not weak or strong", scaling);
    const char *pn[] = {"data", "model", "hybrid"}, *an[] = {"ring", "tree", "butterfly"};
    so.parallel = CB_PAR_COUNT;
    for (int k = 0; k < CB_PAR_COUNT; k++)
        if (!strcmp(parallel, pn[k])) so.parallel = (cb_parallel)k;
    if (so.parallel == CB_PAR_COUNT) return cli_usage_error(&cmd_simulate, "--parallel: '%s' is not data, model or hybrid", parallel);
    so.allreduce = CB_AR_COUNT;
    for (int k = 0; k < CB_AR_COUNT; k++)
        if (!strcmp(allreduce, an[k])) so.allreduce = (cb_allreduce)k;
    if (so.allreduce == CB_AR_COUNT) return cli_usage_error(&cmd_simulate, "--allreduce: '%s' is not ring, tree or butterfly", allreduce);
    int w[MAX_WORKERS], nw = 0;
    char list[512];
    snprintf(list, sizeof list, "%s", workers);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        long v = strtol(tok, &end, 10);
        if (*end || v < 1 || v > 1 << 20) return cli_usage_error(&cmd_simulate, "--workers: '%s' is not a worker count", tok);
        if (nw == MAX_WORKERS) return cli_usage_error(&cmd_simulate, "--workers: at most %d counts", MAX_WORKERS);
        w[nw++] = (int)v;
    }
    if (!nw) return cli_usage_error(&cmd_simulate, "--workers: empty list");
    cb_devdb db;
    cb_device dev;
    char why_dev[384] = "", why_link[512] = "";
    const char *link_from = "default";
    if (!device && !calibration) { // the defaults, said in the report
        cb_error err = {0};
        if (cb_devdb_load(db_path, &db, &err) != CB_OK) return cli_fail(&cmd_simulate, &err);
        static char name[64];
        const char *d = model_cli_default_device(&db, why_dev, sizeof why_dev);
        if (d) snprintf(name, sizeof name, "%s", d), device = name;
        cb_devdb_free(&db);
    }
    if ((rc = model_cli_device(&cmd_simulate, db_path, device, calibration, true, &db, &dev)) >= 0) {
        cb_devdb_free(&db);
        return rc;
    }
    if (interconnect && network) {
        cb_devdb_free(&db);
        return cli_usage_error(&cmd_simulate, "--interconnect and --network: name one");
    }
    // the link: --network's, the one fitted to --interconnect's all-reduces, the one the
    // calibration stores (calibrate --allreduce), else the device's usual one
    cb_link measured_link;
    bool measured = false;
    if (network) link_from = "--network";
    if (interconnect) {
        cb_error err = {0};
        if (cb_link_from_allreduce(interconnect, &measured_link, &err) != CB_OK) {
            cb_devdb_free(&db);
            return cli_fail(&cmd_simulate, &err);
        }
        measured = true, link_from = "--interconnect";
    } else if (!network && dev.interconnect.bw > 0) {
        measured_link = dev.interconnect;
        measured = true, link_from = "calibration";
        snprintf(why_link, sizeof why_link, "interconnect: the one stored in the calibration %s", calibration ? calibration : device);
    }
    if (measured) {
        cb_devdb_free(&db);
        db.nlink = 1;
        db.link = &measured_link;
        network = measured_link.name;
    }
    if (!network) {
        static char lname[64];
        const char *l = model_cli_default_link(&db, &dev);
        if (!l) {
            cb_devdb_free(&db);
            return cli_usage_error(&cmd_simulate, "--network: the device database has no interconnect");
        }
        snprintf(lname, sizeof lname, "%s", l);
        network = lname;
        snprintf(why_link, sizeof why_link, "default --network %s: the usual interconnect of %s", network, dev.name);
    }
    const cb_link *lp = cb_devdb_link(&db, network);
    if (!lp) {
        char names[512] = "";
        for (int i = 0; i < db.nlink; i++) snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", db.link[i].name);
        cb_devdb_free(&db);
        return cli_usage_error(&cmd_simulate, "--network: unknown interconnect '%s' (known: %s)", network, names);
    }
    cb_link link = *lp;
    if (!measured) cb_devdb_free(&db);
    cb_net *net = cli_load_net(&cmd_simulate, pos[0], batch, &rc);
    if (!net) return rc;
    cb_sim_step steps[MAX_WORKERS];
    cb_error err = {0};
    if (cb_simulate(net, &dev, &link, &so, w, nw, steps, &err) != CB_OK) {
        rc = cli_fail(&cmd_simulate, &err);
        cb_net_free(net);
        return rc;
    }
    // --measure: the measured step per worker count; the simulation's prediction of it takes the
    // measured 1-GPU step as its compute (step_N = step_1 * (N if weak else 1) / speedup_N)
    cb_measured_step meas[MAX_WORKERS];
    int nmeas = 0;
    for (int f = 0; f < measure.n; f++) {
        char files[1024];
        snprintf(files, sizeof files, "%s", measure.v[f]);
        for (char *save = NULL, *p = strtok_r(files, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            int got = 0;
            if (cb_measured_steps(p, net->name, cb_net_batch(net), so.strong, so.grad_precision, meas + nmeas, MAX_WORKERS - nmeas, &got,
                                  &err) != CB_OK) {
                rc = cli_fail(&cmd_simulate, &err);
                cb_net_free(net);
                return rc;
            }
            nmeas += got;
        }
    }
    double meas1 = 0;
    for (int j = 0; j < nmeas; j++)
        if (meas[j].gpus == 1) meas1 = meas[j].step_ms;
    cb_report *r = cb_report_new("simulate");
    cb_report_meta_str(r, "network", net->name);
    cb_report_meta_num(r, "batch", (double)cb_net_batch(net));
    cb_report_meta_str(r, "device", dev.name);
    cb_report_meta_str(r, "interconnect", link.name);
    cb_report_meta_str(r, "interconnect_from", link_from);
    cb_report_meta_str(r, "scaling", scaling);
    cb_report_meta_str(r, "parallel", parallel);
    cb_report_meta_str(r, "allreduce", allreduce);
    cb_report_meta_bool(r, "overlap", overlap);
    cb_report_meta_str(r, "grad_precision", cb_precision_name(so.grad_precision));
    cb_report_meta_str(r, "method", paleo ? "paleo" : "roofline");
    const char *cols[] = {"workers", "batch_per_worker", "effective_batch", "fwd_ms", "bwd_ms", "update_ms",
                          "compute_ms", "comm_ms", "total_ms", "speedup", "efficiency"};
    const char *mcols[] = {"workers", "batch_per_worker", "effective_batch", "fwd_ms", "bwd_ms", "update_ms", "compute_ms", "comm_ms",
                           "total_ms", "speedup", "efficiency", "measured_ms", "predicted_ms", "error_pct"};
    cb_table *t = nmeas ? cb_report_table(r, "scaling", 14, mcols) : cb_report_table(r, "scaling", 11, cols);
    double worst = 0;
    for (int k = 0; k < nw; k++) {
        const cb_sim_step *s = &steps[k];
        cb_table_row(t);
        cb_table_int(t, s->workers);
        cb_table_int(t, s->batch_per_worker);
        cb_table_int(t, s->effective_batch);
        cb_table_num(t, s->fwd_ms, 3);
        cb_table_num(t, s->bwd_ms, 3);
        cb_table_num(t, s->update_ms, 3);
        cb_table_num(t, s->compute_ms, 3);
        cb_table_num(t, s->comm_ms, 3);
        cb_table_num(t, s->total_ms, 3);
        cb_table_num(t, s->speedup, 2);
        cb_table_num(t, s->efficiency, 3);
        if (!nmeas) continue;
        double m = 0;
        for (int j = 0; j < nmeas; j++)
            if (meas[j].gpus == s->workers) m = meas[j].step_ms;
        double p = meas1 > 0 && s->speedup > 0 ? meas1 * (so.strong ? 1 : s->workers) / s->speedup : 0;
        if (m > 0) cb_table_num(t, m, 3);
        else cb_table_str(t, "");
        if (p > 0) cb_table_num(t, p, 3);
        else cb_table_str(t, "");
        if (m > 0 && p > 0) {
            cb_table_num(t, 100 * (p - m) / m, 1);
            if (fabs(p - m) / m > worst) worst = fabs(p - m) / m;
        } else {
            cb_table_str(t, "");
        }
    }
    if (nmeas) {
        cb_report_meta_num(r, "measured_worst_error_pct", 100 * worst);
        cb_report_note(r, "measured_ms: fullpass --gpus (%d rows); predicted_ms: the measured 1-GPU step scaled by this simulation's "
                          "speed-up, so the error is the communication model's%s",
                       nmeas, meas1 > 0 ? "" : " (no 1-GPU row measured: no prediction)");
    }
    if (why_dev[0]) cb_report_note(r, "default %s", why_dev);
    if (why_link[0]) cb_report_note(r, "%s", why_link);
    cb_report_note(r, "interconnect %s: %.3g GB/s per direction, %.3g us latency (%s)", link.name, link.bw / 1e9,
                   link.latency_s * 1e6, link.source);
    rc = cli_emit(&cmd_simulate, r, &o, fmt);
    cb_report_free(r);
    cb_net_free(net);
    return rc;
}

const cli_cmd cmd_simulate = {"simulate", "Paleo's distributed training simulation: compute, all-reduce, speed-up per worker count",
                              "NET [--device NAME | --calibration FILE] [--network NAME | --interconnect FILE] [--workers 1,2,4] [--measure FILE] [--scaling weak|strong] "
                              "[--parallel data|model|hybrid] [--grad-precision fp32|bf16]",
                              run};
