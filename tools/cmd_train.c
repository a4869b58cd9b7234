// convbench train NET: train a classifier on Fashion-MNIST with SGD on any backend; progress per
// epoch on stderr, a table of epochs as the report, and the weights in a CBWT file.
#include "fashion_common.h"
#include "run_common.h"
#include "bench/stats.h"
#include "bench/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct progress_ctx { const cli_out *o; int epochs; double t0; } progress_ctx;

static void on_epoch(void *ctx, const cb_epoch_stats *s) {
    const progress_ctx *p = ctx;
    cli_progress_eta(p->o, p->t0, s->epoch, p->epochs, "train: epoch %d/%d: lr %.4g, loss %.4f, train acc %.4f, test acc %.4f, %.0f images/s, %.1f s",
                 s->epoch, p->epochs, s->lr, s->loss, s->train_acc, s->test_acc, s->images_per_s, s->seconds);
}

static int run(int argc, char **argv) {
    const char *backend = "cpu", *conv_algo = NULL, *schedule = "cosine", *weights_out = NULL;
    long epochs = 5, batch = 64, seed = 42, limit = 0;
    double lr = 0.05, momentum = 0.9, weight_decay = 5e-4;
    data_opts d = {0};
    cli_out o = {0};
    const cli_opt opts[] = {
        DATA_OPTS(d),
        {"--epochs", CLI_INT, &epochs, "E", "passes over the training set (default 5)"},
        {"--batch", CLI_INT, &batch, "B", "batch size (default 64); the last partial batch of an epoch is dropped"},
        {"--lr", CLI_FLOAT, &lr, "LR", "base learning rate (default 0.05)"},
        {"--momentum", CLI_FLOAT, &momentum, "M", "SGD momentum (default 0.9)"},
        {"--weight-decay", CLI_FLOAT, &weight_decay, "WD", "L2 weight decay (default 5e-4)"},
        {"--schedule", CLI_STR, &schedule, "S", "cosine (default, per step), step (x0.1 at 50% and 75%) or none"},
        {"--seed", CLI_INT, &seed, "S", "seed for the initial weights and the shuffling (default 42)"},
        {"--backend", CLI_STR, &backend, "B", "cpu (default), ref, onednn, cpu-auto, cuda or cudnn"},
        {"--conv-algo", CLI_STR, &conv_algo, "A", "own GPU convolution algorithm (cuda backend): auto (default) or a name from `convbench algos`"},
        {"--weights-out", CLI_STR, &weights_out, "FILE", "write the trained weights (docs/weights-format.md)"},
        {"--limit", CLI_INT, &limit, "N", "train on the first N training images only (tests)"},
        CLI_OUT_OPTS(o),
        {0},
    };
    const char *pos[1];
    int rc = cli_parse(&cmd_train, opts, argc, argv, pos, 1, 1);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_train, &o, &fmt)) >= 0) return rc;
    cb_schedule sched;
    if (!cb_schedule_parse(schedule, &sched))
        return cli_usage_error(&cmd_train, "--schedule: '%s' is not one of step, cosine, none", schedule);
    if (epochs < 1 || epochs > 10000) return cli_usage_error(&cmd_train, "--epochs: %ld must be in [1, 10000]", epochs);
    if (batch < 1) return cli_usage_error(&cmd_train, "--batch: %ld must be at least 1", batch);
    if (limit < 0) return cli_usage_error(&cmd_train, "--limit: %ld must be positive", limit);
    if (!(lr > 0 && lr < 1e3)) return cli_usage_error(&cmd_train, "--lr must be a positive number");
    if (!(momentum >= 0 && momentum < 1)) return cli_usage_error(&cmd_train, "--momentum must be in [0, 1)");
    if (!(weight_decay >= 0 && weight_decay < 1)) return cli_usage_error(&cmd_train, "--weight-decay must be in [0, 1)");
    cb_net *net = cli_load_net(&cmd_train, pos[0], batch, &rc);
    if (!net) return rc;
    cb_dataset tr = {0}, te = {0};
    if ((rc = data_load(&cmd_train, &d, net, "train", limit, &tr)) >= 0 ||
        (rc = data_load(&cmd_train, &d, net, "t10k", 0, &te)) >= 0) {
        cb_dataset_free(&tr);
        cb_net_free(net);
        return rc;
    }
    cb_exec_opts eo;
    cb_exec_opts_default(&eo);
    eo.backend = backend;
    eo.conv_algo = conv_algo;
    if (conv_algo && (rc = conv_algo_check(&cmd_train, backend, conv_algo)) >= 0) return rc;
    eo.train = true;
    eo.no_data_grad = true;
    eo.lr = (float)lr;
    eo.momentum = (float)momentum;
    eo.weight_decay = (float)weight_decay;
    eo.seed = (uint64_t)seed;
    cb_error err = {0};
    cb_exec *e = cb_exec_create(net, &eo, &err);
    cb_epoch_stats *stats = calloc((size_t)epochs, sizeof *stats);
    if (!e || !stats) {
        rc = e ? 3 : cli_fail(&cmd_train, &err);
        goto done;
    }
    cli_progress(&o, "train: %s on %s, %lld training and %lld test images of %dx%d, batch %ld, %ld epochs", net->name,
                 cb_exec_backend_name(e), (long long)tr.n, (long long)te.n, tr.h, tr.w, batch, epochs);
    progress_ctx pc = {&o, (int)epochs, cb_now_ms()};
    cb_train_opts to = {.epochs = (int)epochs, .lr = (float)lr, .schedule = sched, .seed = (uint64_t)seed * 2 + 1,
                        .on_epoch = on_epoch, .ctx = &pc};
    double t0 = cb_now_ms();
    if (cb_train(e, &tr, &te, &to, stats, &err) != CB_OK) {
        rc = cli_fail(&cmd_train, &err);
        goto done;
    }
    double secs = (cb_now_ms() - t0) / 1e3;
    if (weights_out && cb_exec_save_weights(e, weights_out, &err) != CB_OK) {
        rc = cli_fail(&cmd_train, &err);
        goto done;
    }
    cb_report *r = cb_report_new("train");
    cb_report_meta_str(r, "network", net->name);
    cb_report_meta_str(r, "backend", cb_exec_backend_name(e));
    cb_report_meta_str(r, "data", d.dir ? d.dir : CB_FASHION_DIR);
    cb_report_meta_num(r, "train_images", (double)tr.n);
    cb_report_meta_num(r, "test_images", (double)te.n);
    cb_report_meta_num(r, "input_size", tr.h);
    cb_report_meta_str(r, "normalise", d.no_normalise ? "none" : "(x - 0.2860) / 0.3530");
    cb_report_meta_num(r, "batch", (double)batch);
    cb_report_meta_num(r, "epochs", (double)epochs);
    cb_report_meta_num(r, "lr", lr);
    cb_report_meta_str(r, "schedule", cb_schedule_name(sched));
    cb_report_meta_num(r, "momentum", momentum);
    cb_report_meta_num(r, "weight_decay", weight_decay);
    cb_report_meta_num(r, "seed", (double)seed);
    cb_report_meta_num(r, "test_accuracy", stats[epochs - 1].test_acc);
    cb_report_meta_num(r, "seconds", secs);
    if (weights_out) cb_report_meta_str(r, "weights", weights_out);
    const char *cols[] = {"epoch", "lr", "loss", "train_acc", "test_acc", "images_per_s", "seconds"};
    cb_table *t = cb_report_table(r, "epochs", 7, cols);
    for (long i = 0; i < epochs; i++) {
        cb_table_row(t);
        cb_table_int(t, stats[i].epoch);
        cb_table_num(t, stats[i].lr, 5);
        cb_table_num(t, stats[i].loss, 4);
        cb_table_num(t, stats[i].train_acc, 4);
        cb_table_num(t, stats[i].test_acc, 4);
        cb_table_num(t, stats[i].images_per_s, 0);
        cb_table_num(t, stats[i].seconds, 1);
    }
    cb_report_note(r, "lr: at the epoch's first step; train_acc: training mode, over the epoch's batches as they were "
                      "trained; test_acc: inference mode, all test images (last batch zero-padded, padding ignored); "
                      "images_per_s: training only; seconds: training plus evaluation");
    rc = cli_emit(&cmd_train, r, &o, fmt);
    cb_report_free(r);
done:
    free(stats);
    cb_exec_destroy(e);
    cb_dataset_free(&tr);
    cb_dataset_free(&te);
    cb_net_free(net);
    return rc;
}

const cli_cmd cmd_train = {"train", "train a network on Fashion-MNIST (SGD, any backend) and save its weights",
                           "NET [--data DIR] [--epochs E] [--batch B] [--lr LR] [--momentum M] [--weight-decay WD] "
                           "[--schedule step|cosine|none] [--seed S] [--resize N] [--backend B] [--weights-out FILE] "
                           "[--limit N]",
                           run};
