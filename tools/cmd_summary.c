// convbench summary NET: Paleo's static summary plus FLOPs per direction and training memory.
#include "cli.h"
#include "core/act.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pad_str(const cb_window *w, char *buf, size_t n) {
    const char *mode = w->mode == CB_PAD_SAME ? "SAME" : w->mode == CB_PAD_VALID ? "VALID" : "EXPLICIT";
    if (w->pad_top == w->pad_bottom && w->pad_left == w->pad_right)
        snprintf(buf, n, "%s (%d, %d)", mode, w->pad_top, w->pad_left);
    else // asymmetric: leading+trailing
        snprintf(buf, n, "%s (%d+%d, %d+%d)", mode, w->pad_top, w->pad_bottom, w->pad_left, w->pad_right);
}

// the engine's plan of a training step (fullpass --update --no-data-grad): every buffer by
// liveness, activations of precision p's storage, fp32 weights, gradients and momentum, and on bf16
// the GPU backends' bf16 weight copies as they place them in the arena, and the max pools that take
// over the ReLU before them (cpu, cuda, auto: that ReLU's output is not kept for the backward), and
// the concatenations that take over their inputs'; no other backend copies or workspace. -1: the plan failed.
static int64_t planned_bytes(cb_net *net, cb_precision p) {
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.plan_only = true, o.precision = p, o.no_data_grad = true;
    cb_error err = {0};
    cb_exec *e = cb_exec_create(net, &o, &err);
    int64_t b = e ? (int64_t)cb_exec_peak_bytes(e) : -1;
    cb_exec_destroy(e);
    return b;
}

// --graph: every layer after the parse, Block and ModelParallel expanded, with what a framework
// needs to build the same network (bench/peer_pytorch.py builds a PyTorch module from it): parents
// by name ('|'-separated), input and output (n, c, h, w), the window with all four pads, groups,
// dilation, bias, the fused batch norm and activation, the pool's kind, FC outputs, dropout's keep
static void graph_table(cb_report *r, const cb_net *net) {
    const char *cols[] = {"layer", "op", "parents", "in", "out", "r", "s", "stride_h", "stride_w", "pad_top", "pad_bottom", "pad_left",
                          "pad_right", "groups", "dil_h", "dil_w", "outputs", "bias", "batch_norm", "bn_eps", "activation", "pool", "keep"}; // (keep: LayerNorm's eps)
    enum { NC = sizeof cols / sizeof cols[0] };
    cb_table *t = cb_report_table(r, "graph", NC, cols);
    for (int i = 0; i < net->nlayers; i++) {
        const cb_layer *L = &net->layers[i];
        char in[96], out[96];
        size_t need = 1, at = 0;
        for (int k = 0; k < L->nparents; k++) need += strlen(net->layers[L->parents[k]].name) + 1;
        char *par = malloc(need); // (every parent: a sum or concat of '@all' may have thousands)
        if (!par) abort();
        par[0] = 0;
        for (int k = 0; k < L->nparents; k++) at += (size_t)snprintf(par + at, need - at, "%s%s", k ? "|" : "", net->layers[L->parents[k]].name);
        snprintf(in, sizeof in, "%lld,%lld,%lld,%lld", (long long)L->in.n, (long long)L->in.c, (long long)L->in.h, (long long)L->in.w);
        snprintf(out, sizeof out, "%lld,%lld,%lld,%lld", (long long)L->out.n, (long long)L->out.c, (long long)L->out.h, (long long)L->out.w);
        cb_table_row(t);
        cb_table_str(t, L->name);
        cb_table_str(t, L->op == CB_OP_MUL ? "Product" : cb_op_name(L->op)); // (Paleo calls both sum and product Elementwise)
        cb_table_str(t, par);
        free(par);
        cb_table_str(t, in);
        cb_table_str(t, out);
        const cb_window *w = L->op == CB_OP_CONV ? &L->p.conv.win : L->op == CB_OP_POOL ? &L->p.pool.win : NULL;
        if (w) {
            int v[] = {w->r, w->s, w->stride_h, w->stride_w, w->pad_top, w->pad_bottom, w->pad_left, w->pad_right};
            for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) cb_table_int(t, v[k]);
        } else
            for (int k = 0; k < 8; k++) cb_table_null(t);
        if (L->op == CB_OP_CONV) {
            cb_table_int(t, L->p.conv.groups);
            cb_table_int(t, L->p.conv.dil_h > 1 ? L->p.conv.dil_h : 1);
            cb_table_int(t, L->p.conv.dil_w > 1 ? L->p.conv.dil_w : 1);
            cb_table_int(t, L->p.conv.k);
            cb_table_str(t, L->p.conv.bias ? "yes" : "no");
        } else if (L->op == CB_OP_FC) {
            cb_table_null(t), cb_table_null(t), cb_table_null(t);
            cb_table_int(t, L->p.fc.k);
            cb_table_str(t, L->p.fc.bias ? "yes" : "no");
        } else
            for (int k = 0; k < 5; k++) cb_table_null(t);
        bool norm = L->bn || L->op == CB_OP_BATCHNORM;
        cb_table_str(t, norm ? "yes" : "no");
        if (norm) cb_table_num(t, L->op == CB_OP_BATCHNORM ? L->p.bn.eps : L->bn_eps, 9);
        else cb_table_null(t);
        cb_act a = L->op == CB_OP_ACT ? L->p.act.fn : L->act;
        cb_table_str(t, a == CB_ACT_NONE ? "none" : cb_act_name(a));
        if (L->op == CB_OP_POOL) cb_table_str(t, L->p.pool.global ? "global avg" : L->p.pool.avg ? "avg" : "max");
        else cb_table_null(t);
        if (L->op == CB_OP_DROPOUT) cb_table_num(t, L->p.dropout.keep, 6);
        else if (L->op == CB_OP_LAYERNORM) cb_table_num(t, L->p.ln.eps, 9);
        else cb_table_null(t);
    }
}

static int run(int argc, char **argv) {
    long batch = CLI_UNSET;
    bool graph = false;
    cli_out o = {0};
    const cli_opt opts[] = {
        {"--batch", CLI_INT, &batch, "N", "override the batch size"},
        {"--graph", CLI_FLAG, &graph, NULL, "add the expanded layer graph (parents, shapes, windows with all four pads, fused ops): "
                                            "what another framework needs to build the same network"},
        CLI_OUT_OPTS(o),
        {0},
    };
    const char *pos[1];
    int rc = cli_parse(&cmd_summary, opts, argc, argv, pos, 1, 1);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_summary, &o, &fmt)) >= 0) return rc;
    cb_net *net = cli_load_net(&cmd_summary, pos[0], batch, &rc);
    if (!net) return rc;

    cb_report *r = cb_report_new("summary");
    cb_report_meta_str(r, "network", net->name);
    cb_report_meta_str(r, "file", net->path);
    cb_report_meta_num(r, "batch", (double)cb_net_batch(net));
    const char *cols[] = {"layer", "type", "output", "filters", "pad", "stride", "params", "fwd_gflop", "bwd_data_gflop",
                          "bwd_filter_gflop"};
    cb_table *t = cb_report_table(r, "layers", 10, cols);
    for (int i = 0; i < net->nlayers; i++) {
        const cb_layer *L = &net->layers[i];
        cb_cost c;
        cb_layer_cost(net, i, &c);
        char buf[128];
        cb_table_row(t);
        cb_table_str(t, L->name);
        cb_table_str(t, cb_op_name(L->op));
        cli_shape_str(L->out, buf, sizeof buf);
        cb_table_str(t, buf);
        const cb_window *w = L->op == CB_OP_CONV ? &L->p.conv.win : L->op == CB_OP_POOL ? &L->p.pool.win : NULL;
        if (L->op == CB_OP_CONV) {
            snprintf(buf, sizeof buf, "[%d, %d, %d, %d]%s", w->r, w->s, L->p.conv.cin, L->p.conv.k,
                     L->p.conv.groups > 1 ? " grouped" : "");
            cb_table_str(t, buf);
        } else if (L->op == CB_OP_POOL) {
            snprintf(buf, sizeof buf, "%s [%d, %d]", L->p.pool.avg ? "avg" : "max", w->r, w->s);
            cb_table_str(t, buf);
        } else if (L->op == CB_OP_FC) {
            snprintf(buf, sizeof buf, "[%lld, %d]", (long long)L->in.c, L->p.fc.k);
            cb_table_str(t, buf);
        } else if (L->op == CB_OP_DROPOUT) {
            snprintf(buf, sizeof buf, "keep %.2f", L->p.dropout.keep);
            cb_table_str(t, buf);
        } else cb_table_null(t);
        if (w) {
            pad_str(w, buf, sizeof buf);
            cb_table_str(t, buf);
            snprintf(buf, sizeof buf, "%d, %d", w->stride_h, w->stride_w);
            cb_table_str(t, buf);
        } else {
            cb_table_null(t);
            cb_table_null(t);
        }
        cb_table_int(t, c.params);
        cb_table_num(t, c.fwd_flops / 1e9, 3);
        cb_table_num(t, c.bwd_data_flops / 1e9, 3);
        cb_table_num(t, c.bwd_filter_flops / 1e9, 3);
    }
    cb_net_cost tot;
    cb_net_cost_total(net, &tot);
    cb_table_row(t);
    cb_table_str(t, "Sum");
    cb_table_null(t);
    cb_table_null(t);
    cb_table_null(t);
    cb_table_null(t);
    cb_table_null(t);
    cb_table_int(t, tot.total.params);
    cb_table_num(t, tot.total.fwd_flops / 1e9, 3);
    cb_table_num(t, tot.total.bwd_data_flops / 1e9, 3);
    cb_table_num(t, tot.total.bwd_filter_flops / 1e9, 3);

    const char *mcols[] = {"quantity", "value", "bytes"};
    cb_table *m = cb_report_table(r, "totals", 3, mcols);
    struct { const char *what; double v; int64_t bytes; bool gflop; } rows[] = {
        {"parameters", (double)tot.total.params, tot.total.weight_bytes, false},
        {"  of which batch-norm scale and shift", (double)tot.total.bn_params, 4 * tot.total.bn_params, false},
        {"activations", (double)(tot.activation_bytes / 4), tot.activation_bytes, false},
        {"forward GFLOP", tot.total.fwd_flops / 1e9, -1, true},
        {"backward-data GFLOP", tot.total.bwd_data_flops / 1e9, -1, true},
        {"backward-filter GFLOP", tot.total.bwd_filter_flops / 1e9, -1, true},
        {"training step GFLOP", (tot.total.fwd_flops + tot.total.bwd_data_flops + tot.total.bwd_filter_flops) / 1e9, -1, true},
        {"train memory: weights", (double)tot.total.params, tot.total.weight_bytes, false},
        {"train memory: gradients", (double)tot.total.params, tot.total.weight_bytes, false},
        {"train memory: momentum", (double)tot.total.params, tot.total.weight_bytes, false},
        {"train memory: activations, their gradients, saved state", -1, tot.train_bytes - 3 * tot.total.weight_bytes, false},
        {"train memory: total", -1, tot.train_bytes, false},
        {"train memory planned by liveness, fp32 activations", -1, planned_bytes(net, CB_PREC_FP32), false},
        {"train memory planned by liveness, bf16 activations", -1, planned_bytes(net, CB_PREC_BF16), false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cb_table_row(m);
        cb_table_str(m, rows[i].what);
        if (rows[i].v < 0) cb_table_null(m);
        else if (rows[i].gflop) cb_table_num(m, rows[i].v, 3);
        else cb_table_int(m, (int64_t)rows[i].v);
        if (rows[i].bytes < 0) cb_table_null(m);
        else cb_table_int(m, rows[i].bytes);
    }
    // Paleo's own closing lines, in its words
    char p1[48], p2[48], p3[48];
    // Paleo counts weights and biases only, never batch-norm scale and shift
    cb_fmt_int(tot.total.params - tot.total.bn_params, p1, sizeof p1);
    cb_fmt_int(4 * (tot.total.params - tot.total.bn_params), p2, sizeof p2);
    cb_fmt_int(tot.activation_bytes, p3, sizeof p3);
    cb_report_note(r, "train memory: every buffer held for the whole step; planned by liveness: the engine's plan of a "
                      "training step (fullpass --update --no-data-grad), buffers that live at different times sharing "
                      "bytes, fp32 weights, gradients and momentum (bf16: with the GPU backends' bf16 weight copies in "
                      "the arena), a ReLU layer's output freed after the max pool or concatenation that alone reads it "
                      "(as the cpu, cuda and auto backends' pools, and every backend's concatenations but the reference's, "
                      "take its ReLU over), without a backend's other copies and workspace");
    if (graph) graph_table(r, net);
    cb_report_note(r, "Number of params: %s (%s Bytes)", p1, p2);
    cb_report_note(r, "Activation: %s Bytes", p3);
    rc = cli_emit(&cmd_summary, r, &o, fmt);
    cb_report_free(r);
    cb_net_free(net);
    return rc;
}

const cli_cmd cmd_summary = {"summary", "static summary: shapes, parameters, bytes, FLOPs per direction, training memory",
                             "NET [--batch N] [--graph]", run};
