// convbench infer NET --weights W: inference over the whole Fashion-MNIST test set at several
// batch sizes, reported as ECE408's project did (seed 004) per convolution layer:
//   Op Time     the layer's forward kernels: its cb_exec_forward per-layer time (backend clock:
//               CUDA events on a GPU), summed over every batch of the test set.
//   Layer Time  Op Time + copy + setup, where
//                 copy  = copying every input batch into the exec (cb_exec_set_input, backend
//                         clock), summed over the batches: the same figure for every layer;
//                 setup = creating the exec for this batch size (cb_exec_create: every buffer of
//                         the network allocated and every layer planned) plus loading the weights
//                         (cb_exec_load_weights), host wall clock: also shared by every layer.
//               The engine plans the whole network at once, so set-up and copy cannot be split by
//               layer; they are charged in full to each layer, and Layer Times must not be summed.
//   Total       host wall time for the batch size: setup + all batches (copy, forward, read-back of
//               the probabilities, argmax).
// A last partial batch is padded with zero images whose rows are ignored in the accuracy.
#include "fashion_common.h"
#include "run_common.h"
#include "bench/stats.h"
#include "bench/train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BATCHES 16

static int parse_batches(const char *s, long *out) {
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 1000000 || n == MAX_BATCHES || (*end && *end != ',')) return -1;
        out[n++] = v;
        s = *end ? end + 1 : end;
    }
    return n;
}

static int run(int argc, char **argv) {
    const char *backend = "cpu", *conv_algo = NULL, *weights = NULL, *batches = "100,1000,10000", *precision = "fp32";
    data_opts d = {0};
    cli_out o = {0};
    const cli_opt opts[] = {
        {"--weights", CLI_STR, &weights, "FILE", "trained weights (convbench train --weights-out); an ONNX NET brings its own"},
        {"--batch", CLI_STR, &batches, "B,B,...", "batch sizes, comma-separated (default 100,1000,10000)"},
        {"--backend", CLI_STR, &backend, "B", "cpu (default), ref, onednn, cpu-auto, cuda or cudnn"},
        {"--conv-algo", CLI_STR, &conv_algo, "A", "own GPU convolution algorithm (cuda backend): auto (default) or a name from `convbench algos`"},
        {"--precision", CLI_STR, &precision, "P", "fp32 (default), tf32 or bf16 (GPU backends)"},
        DATA_OPTS(d),
        CLI_OUT_OPTS(o),
        {0},
    };
    const char *pos[1];
    int rc = cli_parse(&cmd_infer, opts, argc, argv, pos, 1, 1);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_infer, &o, &fmt)) >= 0) return rc;
    long bs[MAX_BATCHES];
    int nb = parse_batches(batches, bs);
    if (nb < 1) return cli_usage_error(&cmd_infer, "--batch: '%s' is not a list of 1 to %d sizes in [1, 1000000]", batches, MAX_BATCHES);
    cb_precision prec;
    if (!cb_precision_parse(precision, &prec))
        return cli_usage_error(&cmd_infer, "--precision: '%s' is not one of fp32, tf32, bf16", precision);
    cb_exec_opts bo;
    cb_exec_opts_default(&bo);
    bo.backend = backend, bo.precision = prec;
    if ((rc = backend_opts_check(&cmd_infer, &bo)) >= 0) return rc;
    cb_net *net = cli_load_net(&cmd_infer, pos[0], bs[0], &rc); // set again per batch size
    if (!net) return rc;
    if (!weights && !net->weights) { // an ONNX model carries its own
        cb_net_free(net);
        return cli_usage_error(&cmd_infer, "--weights FILE is required (the network has no weights of its own)");
    }
    cb_dataset te = {0};
    if ((rc = data_load(&cmd_infer, &d, net, "t10k", 0, &te)) >= 0) {
        cb_net_free(net);
        return rc;
    }
    int nl = net->nlayers;
    cb_report *r = cb_report_new("infer");
    cb_report_meta_str(r, "network", net->name);
    cb_report_meta_str(r, "backend", backend);
    cb_report_meta_str(r, "precision", precision);
    cb_report_meta_str(r, "weights", weights ? weights : "the model's own");
    cb_report_meta_str(r, "data", d.dir ? d.dir : CB_FASHION_DIR);
    cb_report_meta_num(r, "test_images", (double)te.n);
    cb_report_meta_num(r, "input_size", te.h);
    const char *lcols[] = {"batch", "layer", "op_ms", "copy_ms", "setup_ms", "layer_ms", "algo"};
    const char *bcols[] = {"batch", "batches", "setup_ms", "copy_ms", "forward_ms", "total_ms", "test_accuracy"};
    cb_table *lt = cb_report_table(r, "conv layers", 7, lcols);
    cb_table *bt = cb_report_table(r, "batch sizes", 7, bcols);
    cb_layer_times *sum = calloc((size_t)nl, sizeof *sum);
    if (!sum) abort();
    cb_error err = {0};
    cb_exec_opts eo;
    cb_exec_opts_default(&eo);
    eo.backend = backend;
    eo.conv_algo = conv_algo;
    eo.precision = prec;
    char(*algo)[48] = calloc((size_t)nl, sizeof *algo); // each conv layer's forward algorithm
    bool pool_fused = false;
    if (!algo) abort();
    if (conv_algo && (rc = conv_algo_check(&cmd_infer, backend, conv_algo)) >= 0) return rc;
    eo.train = false;
    for (int bi = 0; bi < nb; bi++) {
        memset(sum, 0, sizeof *sum * (size_t)nl);
        double t0 = cb_now_ms();
        cb_exec *e = NULL;
        if (cb_net_set_batch(net, bs[bi], &err) != CB_OK || !(e = cb_exec_create(net, &eo, &err)) ||
            (weights && cb_exec_load_weights(e, weights, &err) != CB_OK)) {
            cb_exec_destroy(e);
            rc = cli_fail(&cmd_infer, &err);
            goto done;
        }
        double setup = cb_now_ms() - t0, acc = 0;
        cb_eval_times et = {.layers = sum};
        if (cb_evaluate(e, &te, &acc, &et, &err) != CB_OK) {
            cb_exec_destroy(e);
            rc = cli_fail(&cmd_infer, &err);
            goto done;
        }
        double total = cb_now_ms() - t0;
        for (int i = 0; i < nl; i++) {
            snprintf(algo[i], sizeof algo[i], "%s", cb_exec_algo(e, i, CB_PHASE_FORWARD));
            if (cb_exec_choice(e, i, CB_PHASE_FORWARD)->flags & CB_CHOICE_FUSED) pool_fused = true;
        }
        cb_exec_destroy(e);
        cli_progress(&o, "===========Batch Size: %ld============", bs[bi]);
        for (int i = 0; i < nl; i++) {
            if (net->layers[i].op != CB_OP_CONV) continue;
            double op = sum[i].ms[CB_PHASE_FORWARD];
            cli_progress(&o, "Conv-%s== %s\nLayer Time: %g ms\nOp Time: %g ms", backend, net->layers[i].name,
                         op + et.copy_ms + setup, op);
            cb_table_row(lt);
            cb_table_int(lt, bs[bi]);
            cb_table_str(lt, net->layers[i].name);
            cb_table_num(lt, op, 3);
            cb_table_num(lt, et.copy_ms, 3);
            cb_table_num(lt, setup, 3);
            cb_table_num(lt, op + et.copy_ms + setup, 3);
            cb_table_str(lt, algo[i]);
        }
        cli_progress(&o, "Test Accuracy: %.4g\nTotal: %.1f ms\n", acc, total);
        cb_table_row(bt);
        cb_table_int(bt, bs[bi]);
        cb_table_int(bt, et.batches);
        cb_table_num(bt, setup, 3);
        cb_table_num(bt, et.copy_ms, 3);
        cb_table_num(bt, et.forward_ms, 3);
        cb_table_num(bt, total, 3);
        cb_table_num(bt, acc, 4);
    }
    cb_report_note(r, "op_ms: the layer's forward time (backend clock), summed over all batches of the test set");
    cb_report_note(r, "copy_ms: copying every input batch in; setup_ms: creating the exec for this batch size and "
                      "loading the weights; both are whole-network figures charged in full to every layer");
    cb_report_note(r, "layer_ms = op_ms + copy_ms + setup_ms (do not sum over layers); total_ms: host wall time of the "
                      "batch size, setup included; a partial last batch is zero-padded, padding ignored");
    if (pool_fused)
        cb_report_note(r, "algo '...+pool': the conv kernel also computes the ReLU and the max pool after it (fused at "
                          "inference), so that conv's op_ms covers conv + ReLU + pool and the pool layer takes no time");
    rc = cli_emit(&cmd_infer, r, &o, fmt);
done:
    free(sum);
    free(algo);
    cb_report_free(r);
    cb_dataset_free(&te);
    cb_net_free(net);
    return rc;
}

const cli_cmd cmd_infer = {"infer", "test-set accuracy and per-conv-layer Op/Layer Time at several batch sizes (ECE408)",
                           "NET --weights FILE [--data DIR] [--batch 100,1000,10000] [--backend B] [--resize N]", run};
