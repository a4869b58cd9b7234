// convbench fullpass NET: a whole training step timed by phase, as convnet-benchmarks does:
// net forward, criterion forward and backward, net backward split into grad-input and
// grad-weight, update, total; median, mean, standard deviation, IQR, min and max over K
// iterations (or as many as --min-time needs), with every sample in JSON and CSV.
#include "run_common.h"
#include "dist_common.h"
#include "bench/stats.h"
#ifdef CB_HAVE_CUDA
#include "gpu/gpu.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PH_FWD, PH_CRIT_F, PH_CRIT_B, PH_BWD, PH_BWD_DATA, PH_BWD_FILTER, PH_UPDATE, PH_TOTAL, PH_GRAPH, PH_COUNT };
static const char *PH_NAMES[] = {"net forward",  "criterion forward", "criterion backward", "net backward",
                                 "  grad-input", "  grad-weight",     "update",             "total",
                                 "total, one graph (--graph)"};
_Static_assert(sizeof PH_NAMES / sizeof PH_NAMES[0] == PH_COUNT, "a phase lacks a name");

static const char *getenv_str(const char *name) { return getenv(name); }

static size_t gpu_mem_used(void) {
#ifdef CB_HAVE_CUDA
    return cb_gpu_mem_used();
#else
    return 0;
#endif
}

// samples of every phase, PH_COUNT rows of cap each
typedef struct samples { double *ms; int n, cap; } samples;

static void samples_grow(samples *s, int need) {
    if (need <= s->cap) return;
    int cap = s->cap ? s->cap : 16;
    while (cap < need) cap *= 2;
    double *ms = calloc((size_t)PH_COUNT * (size_t)cap, sizeof(double));
    if (!ms) abort();
    for (int p = 0; p < PH_COUNT && s->ms; p++) memcpy(ms + (size_t)p * cap, s->ms + (size_t)p * s->cap, sizeof(double) * (size_t)s->n);
    free(s->ms);
    s->ms = ms;
    s->cap = cap;
}

// Where the step goes: the per-layer steps' times summed by layer kind (the op's Paleo type, and
// the fused batch norm / activation apart where the backend runs them apart), the criterion and
// the update; what the parts leave of the measured step is the time between kernels.
// A batch norm that also computes the sum after it (a `bn+add` fused group) is a part of its own,
// so that the sums' time shows where it went.
enum { PART_EPI_BN = CB_OP_COUNT, PART_EPI_BN_ADD, PART_EPI_ACT, PART_AGAIN, PART_CRITERION, PART_UPDATE, PART_COUNT };
typedef struct breakdown {
    double fwd[PART_COUNT], bwd[PART_COUNT];
    cb_layer_times *layer; // (nlayers) summed over the steps, for --per-layer
    bool *bn_add;          // (nlayers) the layer's batch norm computes the next layer's sum (fused)
    int steps;
} breakdown;

static const char *part_name(int k) {
    return k < CB_OP_COUNT             ? cb_op_name((cb_op)k)
           : k == PART_EPI_BN        ? "batch norm (+act), fused"
           : k == PART_EPI_BN_ADD    ? "batch norm + sum (+act), fused"
           : k == PART_EPI_ACT       ? "activation, fused"
           : k == PART_AGAIN         ? "outputs made again (--recompute)"
           : k == PART_CRITERION     ? "criterion"
                                     : "update";
}

static void breakdown_add(breakdown *b, const cb_net *net, const cb_layer_times *lt, const double *ph) {
    for (int i = 1; i < net->nlayers; i++) {
        const cb_layer *L = &net->layers[i];
        int epi = L->bn ? (b->bn_add[i] ? PART_EPI_BN_ADD : PART_EPI_BN) : PART_EPI_ACT;
        b->fwd[L->op] += lt[i].ms[CB_PHASE_FORWARD] - lt[i].epilogue_ms[0];
        b->fwd[epi] += lt[i].epilogue_ms[0];
        b->bwd[L->op] += lt[i].ms[CB_PHASE_BWD_DATA] - lt[i].epilogue_ms[1] + lt[i].ms[CB_PHASE_BWD_FILTER];
        b->bwd[epi] += lt[i].epilogue_ms[1] - lt[i].recompute_ms;
        b->bwd[PART_AGAIN] += lt[i].recompute_ms;
        for (int p = 0; p < CB_PHASE_COUNT; p++) b->layer[i].ms[p] += lt[i].ms[p];
        for (int p = 0; p < 2; p++) b->layer[i].epilogue_ms[p] += lt[i].epilogue_ms[p];
        b->layer[i].recompute_ms += lt[i].recompute_ms;
    }
    b->fwd[PART_CRITERION] += ph[PH_CRIT_F];
    b->bwd[PART_CRITERION] += ph[PH_CRIT_B];
    b->bwd[PART_UPDATE] += ph[PH_UPDATE];
    b->steps++;
}

// the breakdown table: parts by total time, then the gaps and the measured step (median of the
// steps timed without per-layer synchronisation); returns the parts' share of the step
// where the planned bytes go (cb_mem_kind), largest first, then what the arena's buffers share
// (at_peak_mib: each kind as it stands at the arena's busiest point, the parameters and the
// backend's own buffers whole; "arena beyond its busiest point": what first-fit placement left between)
static void memory_table(cb_report *r, const cb_exec *e) {
    const char *cols[] = {"kind", "mib", "pct", "at_peak_mib"};
    cb_table *t = cb_report_table(r, "memory", 4, cols);
    double at_peak = 0;
    double all = (double)cb_exec_peak_bytes(e);
    bool done[CB_MEM_COUNT] = {0};
    for (int n = 0; n < CB_MEM_COUNT; n++) {
        int best = -1;
        for (int k = 0; k < CB_MEM_COUNT; k++)
            if (!done[k] && (best < 0 || cb_exec_memory(e, (cb_mem_kind)k) > cb_exec_memory(e, (cb_mem_kind)best))) best = k;
        done[best] = true;
        double b = (double)cb_exec_memory(e, (cb_mem_kind)best);
        if (b == 0) continue;
        double p = (double)cb_exec_memory_at_peak(e, (cb_mem_kind)best);
        at_peak += p;
        cb_table_row(t);
        cb_table_str(t, cb_mem_kind_name((cb_mem_kind)best));
        cb_table_num(t, b / (1 << 20), 1);
        cb_table_num(t, all > 0 ? 100 * b / all : 0, 1);
        cb_table_num(t, p / (1 << 20), 1);
    }
    double reused = (double)cb_exec_memory_reused(e);
    if (reused > 0) {
        cb_table_row(t);
        cb_table_str(t, "shared by liveness (arena)");
        cb_table_num(t, -reused / (1 << 20), 1);
        cb_table_num(t, all > 0 ? -100 * reused / all : 0, 1);
        cb_table_null(t);
        cb_table_row(t);
        cb_table_str(t, "arena beyond its busiest point");
        cb_table_null(t);
        cb_table_null(t);
        cb_table_num(t, (all > at_peak ? all - at_peak : 0) / (1 << 20), 1);
    }
    if (cb_exec_arena_grown(e) > 0) { // (within the kinds above: the workspaces' share of the arena)
        cb_table_row(t);
        cb_table_str(t, "arena grown for workspaces");
        cb_table_num(t, (double)cb_exec_arena_grown(e) / (1 << 20), 1);
        cb_table_num(t, all > 0 ? 100 * (double)cb_exec_arena_grown(e) / all : 0, 1);
        cb_table_null(t);
    }
    cb_table_row(t);
    cb_table_str(t, "total planned");
    cb_table_num(t, all / (1 << 20), 1);
    cb_table_num(t, 100, 1);
    cb_table_num(t, all / (1 << 20), 1);
}

static double breakdown_table(cb_report *r, const breakdown *b, double step) {
    const char *cols[] = {"part", "forward_ms", "backward_ms", "total_ms", "share_pct"};
    cb_table *t = cb_report_table(r, "breakdown", 5, cols);
    int order[PART_COUNT], n = 0;
    double sum = 0, k = b->steps ? 1.0 / b->steps : 0;
    for (int p = 0; p < PART_COUNT; p++)
        if (b->fwd[p] + b->bwd[p] > 0) order[n++] = p;
    for (int a = 1; a < n; a++) // by total time, largest first
        for (int j = a; j > 0 && b->fwd[order[j]] + b->bwd[order[j]] > b->fwd[order[j - 1]] + b->bwd[order[j - 1]]; j--) {
            int tmp = order[j];
            order[j] = order[j - 1], order[j - 1] = tmp;
        }
    for (int j = 0; j < n; j++) {
        int p = order[j];
        double f = b->fwd[p] * k, bw = b->bwd[p] * k;
        sum += f + bw;
        cb_table_row(t);
        cb_table_str(t, part_name(p));
        cb_table_num(t, f, 3);
        cb_table_num(t, bw, 3);
        cb_table_num(t, f + bw, 3);
        cb_table_num(t, step > 0 ? 100 * (f + bw) / step : 0, 1);
    }
    const char *tail[] = {"gaps (launches, syncs; step - parts)", "step (measured)"};
    double v[] = {step - sum, step};
    for (int j = 0; j < 2; j++) {
        cb_table_row(t);
        cb_table_str(t, tail[j]);
        cb_table_str(t, "");
        cb_table_str(t, "");
        cb_table_num(t, v[j], 3);
        cb_table_num(t, step > 0 ? 100 * v[j] / step : 0, 1);
    }
    return step > 0 ? sum / step : 0;
}

// --per-layer: each layer's mean times per step and the algorithm of each phase
static void layer_table(cb_report *r, const breakdown *b, const cb_exec *e) {
    const char *cols[] = {"layer", "kind", "fwd_ms", "fwd_epilogue_ms", "bwd_data_ms", "bwd_epilogue_ms", "bwd_filter_ms",
                          "algo_fwd", "algo_bwd_data", "algo_bwd_filter"};
    cb_table *t = cb_report_table(r, "layers", 10, cols);
    double k = b->steps ? 1.0 / b->steps : 0;
    const cb_net *net = cb_exec_net(e);
    for (int i = 1; i < net->nlayers; i++) {
        const cb_layer_times *l = &b->layer[i];
        cb_table_row(t);
        cb_table_str(t, net->layers[i].name);
        cb_table_str(t, cb_op_name(net->layers[i].op));
        double v[] = {l->ms[CB_PHASE_FORWARD] - l->epilogue_ms[0], l->epilogue_ms[0], l->ms[CB_PHASE_BWD_DATA] - l->epilogue_ms[1],
                      l->epilogue_ms[1], l->ms[CB_PHASE_BWD_FILTER]};
        for (int j = 0; j < 5; j++) cb_table_num(t, v[j] * k, 3);
        for (int p = 0; p < CB_PHASE_COUNT; p++) cb_table_str(t, cb_exec_algo(e, i, (cb_phase)p));
    }
}

static int run(int argc, char **argv) {
    run_opts ro;
    run_opts_default(&ro);
    cli_out o = {0};
    bool update = false, no_criterion = false, per_layer = false, no_overlap = false, graph = false;
    long gpus = CLI_UNSET;
    const char *devices = NULL, *scaling = "weak", *rendezvous = NULL, *grad_precision = NULL;
    double bucket_mb = 25;
    double min_time = 0;
    const cli_opt opts[] = {
        RUN_OPTS(ro),
        {"--min-time", CLI_FLOAT, &min_time, "S", "time more steps than --iters until the timed steps add up to S seconds"},
        {"--update", CLI_FLAG, &update, NULL, "include the SGD update (momentum 0.9, weight decay 5e-4)"},
        {"--no-data-grad", CLI_FLAG, &ro.no_data_grad, NULL, "skip the gradient w.r.t. the input images"},
        {"--no-criterion", CLI_FLAG, &no_criterion, NULL, "skip softmax cross-entropy; backward starts from ones"},
        {"--per-layer", CLI_FLAG, &per_layer, NULL, "add a table of every layer's times and algorithms"},
        {"--graph", CLI_FLAG, &graph, NULL, "GPU: also time the whole step recorded once as a CUDA graph and replayed"},
        {"--lr", CLI_FLOAT, &ro.lr, "LR", "learning rate for --update (default 0.01)"},
        {"--gpus", CLI_INT, &gpus, "N", "data-parallel on GPUs 0..N-1 with NCCL, against 1 GPU in the same call"},
        {"--devices", CLI_STR, &devices, "LIST", "data-parallel on these GPUs, e.g. 0,1"},
        {"--scaling", CLI_STR, &scaling, "S", "with --gpus: weak (default: --batch per GPU) or strong (--batch split)"},
        {"--bucket-mb", CLI_FLOAT, &bucket_mb, "MB", "with --gpus: gradient all-reduce bucket size (default 25)"},
        {"--no-overlap", CLI_FLAG, &no_overlap, NULL, "with --gpus: all-reduce after the backward pass, not during it"},
        {"--grad-precision", CLI_STR, &grad_precision, "P", "with --gpus: gradients all-reduced in fp32 (default) or bf16 (cast and back; the update stays fp32)"},
        {"--rendezvous", CLI_STR, &rendezvous, "SPEC", "one process per GPU (RANK/WORLD_SIZE, OMPI_COMM_WORLD_*, SLURM_* set): file:PATH or tcp://HOST:PORT"},
        CLI_OUT_OPTS(o),
        {0},
    };
    const char *pos[1];
    int rc = cli_parse(&cmd_fullpass, opts, argc, argv, pos, 1, 1);
    if (rc >= 0) return rc;
    cb_format fmt;
    cb_exec_opts eo;
    if ((rc = cli_out_check(&cmd_fullpass, &o, &fmt)) >= 0) return rc;
    if ((rc = run_opts_check(&cmd_fullpass, &ro, &eo)) >= 0) return rc;
    eo.no_update = !update; // (no momentum buffer, as PyTorch's SGD makes none before its first step)
    if (!(min_time >= 0 && min_time <= 86400)) return cli_usage_error(&cmd_fullpass, "--min-time: must be in [0, 86400] seconds");
    cb_dist_env denv;
    cb_error env_err = {0};
    if (cb_dist_env_parse(getenv_str, &denv, &env_err) != CB_OK) return cli_usage_error(&cmd_fullpass, "%s", env_err.msg);
    cb_precision grad = CB_PREC_FP32;
    if (grad_precision && !cb_grad_precision_parse(grad_precision, &grad))
        return cli_usage_error(&cmd_fullpass, "--grad-precision: '%s' is not fp32 or bf16", grad_precision);
    if (grad_precision && denv.world == 1 && !rendezvous && gpus == CLI_UNSET && !devices)
        return cli_usage_error(&cmd_fullpass, "--grad-precision: only with --gpus, --devices or a multi-process run (gradients are all-reduced there)");
    if (denv.world > 1 || rendezvous) {
        if (denv.world == 1) return cli_usage_error(&cmd_fullpass, "--rendezvous: no launcher's RANK and WORLD_SIZE (or OMPI_COMM_WORLD_*, SLURM_*) set");
        if (gpus != CLI_UNSET || devices) return cli_usage_error(&cmd_fullpass, "%s set: one GPU per process (LOCAL_RANK), not --gpus/--devices", denv.source);
        if (per_layer || min_time > 0 || graph)
            return cli_usage_error(&cmd_fullpass, "a multi-process run: --per-layer, --min-time and --graph are for one GPU");
        return fullpass_dist_procs(pos[0], &ro, &eo, &o, fmt, &denv, rendezvous, bucket_mb, !no_overlap, update, !no_criterion, grad);
    }
    if (gpus != CLI_UNSET || devices) {
        if (per_layer || min_time > 0 || graph) return cli_usage_error(&cmd_fullpass, "--gpus: --per-layer, --min-time and --graph are for one GPU");
        int n, dev[CB_DIST_MAX_GPUS];
        if ((rc = dist_devices(&cmd_fullpass, gpus, devices, &n, dev)) >= 0) return rc;
        return fullpass_dist(pos[0], &ro, &eo, &o, fmt, n, dev, scaling, bucket_mb, !no_overlap, update, !no_criterion, grad);
    }
    cb_net *net = cli_load_net(&cmd_fullpass, pos[0], ro.batch, &rc);
    if (!net) return rc;
    cli_progress(&o, "fullpass: %s, batch %lld, backend %s: planning buffers", net->name, (long long)cb_net_batch(net),
                 ro.backend);
    cb_error err = {0};
    bool on_gpu = strcmp(ro.backend, "cpu") && strcmp(ro.backend, "ref");
    size_t dev_base = on_gpu ? gpu_mem_used() : 0, dev_peak = dev_base;
    double t_plan = cb_now_ms(); // (planning: the buffers, every race and check, the step check)
    cb_exec *e = cb_exec_create(net, &eo, &err);
    t_plan = (cb_now_ms() - t_plan) / 1e3;
    if (!e) {
        cb_net_free(net);
        return cli_fail(&cmd_fullpass, &err);
    }
    if (graph && !cb_exec_can_graph(e)) {
        cb_exec_destroy(e);
        cb_net_free(net);
        return cli_usage_error(&cmd_fullpass, "--graph: backend %s does not record steps as graphs (a GPU backend does)", ro.backend);
    }
    int n = net->nlayers;
    breakdown bd = {.layer = calloc((size_t)n, sizeof(cb_layer_times)), .bn_add = calloc((size_t)n, sizeof(bool))};
    cb_layer_times *lt = calloc((size_t)n, sizeof *lt);
    if (!lt || !bd.layer || !bd.bn_add) abort();
    for (int i = 1; i < n; i++) { // the sums a batch norm computes (their choice names the head)
        const cb_choice *c = cb_exec_choice(e, i, CB_PHASE_FORWARD);
        if ((c->flags & CB_CHOICE_IN_FUSED) && c->fused_with >= 0 && c->fused_with < n && net->layers[c->fused_with].bn)
            bd.bn_add[c->fused_with] = true;
    }
    samples sm = {0};
    double loss = 0;
    // On a GPU, timing each layer adds a synchronisation per layer; the step's phases are timed
    // without them, and the backward pass's grad-input / grad-weight split comes from as many
    // further steps timed per layer. On the CPU one set of steps gives both.
    bool device = cb_exec_on_device(e);
    int rounds = device ? 2 : 1;
    double t_start = cb_now_ms(), timed_ms = 0;
    int iters = (int)ro.iters; // grows under --min-time in the first round
    for (int round = 0; round < rounds; round++) {
        bool split = round == rounds - 1;
        for (int it = 0; it < ro.warmup + iters || (round == 0 && timed_ms < 1e3 * min_time && iters < 100000); it++) {
            if (it >= ro.warmup + iters) iters++; // --min-time: one more
            bool timed = it >= ro.warmup;
            double ph[PH_COUNT] = {0}, t0, t1;
            if (no_criterion) cb_exec_set_output_grad(e, 1.0f); // untimed
            t0 = cb_now_ms();
            cb_exec_timer_start(e); // the whole step
            cb_exec_timer_start(e);
            cb_exec_forward(e, true, split ? lt : NULL);
            ph[PH_FWD] = cb_exec_timer_stop(e);
            if (!no_criterion) {
                cb_exec_criterion_forward(e, &loss, &ph[PH_CRIT_F]);
                cb_exec_criterion_backward(e, &ph[PH_CRIT_B]);
            }
            cb_exec_timer_start(e);
            cb_exec_backward(e, split ? lt : NULL);
            ph[PH_BWD] = cb_exec_timer_stop(e);
            for (int i = 0; split && i < n; i++) {
                ph[PH_BWD_DATA] += lt[i].ms[CB_PHASE_BWD_DATA];
                ph[PH_BWD_FILTER] += lt[i].ms[CB_PHASE_BWD_FILTER];
            }
            if (update) cb_exec_update(e, &ph[PH_UPDATE]);
            double step = cb_exec_timer_stop(e);
            t1 = cb_now_ms();
            ph[PH_TOTAL] = device ? step : t1 - t0;
            if (timed && split) breakdown_add(&bd, net, lt, ph);
            if (on_gpu) {
                size_t used = gpu_mem_used();
                if (used > dev_peak) dev_peak = used;
            }
            if (timed) {
                int k = it - (int)ro.warmup;
                samples_grow(&sm, k + 1);
                if (k + 1 > sm.n) sm.n = k + 1;
                for (int p = 0; p < PH_COUNT; p++) {
                    bool mine = p == PH_BWD_DATA || p == PH_BWD_FILTER ? split : round == 0;
                    if (mine) sm.ms[(size_t)p * sm.cap + k] = ph[p];
                }
                if (round == 0) timed_ms += ph[PH_TOTAL];
            }
            double per_round = (double)(ro.warmup + iters);
            if (round == 0 && min_time > 0 && timed && timed_ms > 0) { // steps --min-time will need
                double need = ro.warmup + 1e3 * min_time / (timed_ms / (it - (int)ro.warmup + 1));
                if (need > per_round) per_round = need < 100000 ? need : 100000;
            }
            cli_progress_eta(&o, t_start, round * per_round + it + 1, rounds * per_round, "fullpass: %s%s %d/%d: total %.2f ms", device && split ? "per-layer " : "",
                             timed ? "iteration" : "warm-up", timed ? it - (int)ro.warmup + 1 : it + 1,
                             timed ? iters : (int)ro.warmup, ph[PH_TOTAL]);
        }
    }
    // --graph: the same step recorded once (after the launched steps above, so every lazy setup is
    // done) and replayed: warm-up replays, then iters timed one by one
    for (int it = 0; graph && it < ro.warmup + iters; it++) {
        if (it == 0 && cb_exec_graph_capture(e, !no_criterion, update, &err) != CB_OK) {
            free(lt), free(bd.layer), free(bd.bn_add), free(sm.ms);
            cb_exec_destroy(e);
            cb_net_free(net);
            return cli_fail(&cmd_fullpass, &err);
        }
        cb_exec_timer_start(e);
        cb_exec_graph_replay(e);
        double ms = cb_exec_timer_stop(e);
        if (it >= ro.warmup) sm.ms[(size_t)PH_GRAPH * sm.cap + it - ro.warmup] = ms;
        cli_progress_eta(&o, t_start, it + 1, ro.warmup + iters, "fullpass: graph %s %d: %.2f ms", it >= ro.warmup ? "iteration" : "warm-up",
                         it + 1, ms);
    }
    cb_report *r = cb_report_new("fullpass");
    cb_report_meta_str(r, "network", net->name);
    cb_report_meta_str(r, "backend", ro.backend);
    cb_report_meta_num(r, "batch", (double)cb_net_batch(net));
    cb_report_meta_str(r, "precision", cb_precision_name(eo.precision));
    cb_report_meta_str(r, "layout", cb_layout_name(eo.layout));
    cb_report_meta_num(r, "warmup", (double)ro.warmup);
    cb_report_meta_num(r, "iterations", (double)iters);
    if (min_time > 0) cb_report_meta_num(r, "min_time_s", min_time);
    cb_report_meta_bool(r, "update", update);
    cb_report_meta_str(r, "criterion", no_criterion ? "none" : "softmax cross-entropy");
    cb_report_meta_bool(r, "data_grad", !ro.no_data_grad);
    cb_report_meta_str(r, "recompute", ro.recompute ? ro.recompute : "auto");
    if (eo.memory_budget) cb_report_meta_num(r, "max_memory_mb", (double)(eo.memory_budget >> 20));
    cb_report_meta_num(r, "plan_s", t_plan);
    cb_report_meta_num(r, "memory_mb", (double)cb_exec_peak_bytes(e) / (1 << 20));
    cb_report_meta_num(r, "host_max_rss_mb", cb_env_max_rss_mb());
    if (on_gpu && dev_peak > dev_base) cb_report_meta_num(r, "device_peak_mb", (double)(dev_peak - dev_base) / (1 << 20));
    const char *cols[] = {"phase", "median_ms", "mean_ms", "stddev_ms", "iqr_ms", "min_ms", "max_ms", "iqr_pct"};
    cb_table *t = cb_report_table(r, "fullpass", 8, cols);
    cb_stats total = {0}, graph_total = {0};
    bool skip[PH_COUNT] = {0};
    for (int p = 0; p < PH_COUNT; p++) {
        skip[p] = ((p == PH_CRIT_F || p == PH_CRIT_B) && no_criterion) || (p == PH_UPDATE && !update) || (p == PH_GRAPH && !graph);
        if (skip[p]) continue;
        cb_stats s = cb_stats_of(sm.ms + (size_t)p * sm.cap, iters);
        if (p == PH_TOTAL) total = s;
        if (p == PH_GRAPH) graph_total = s;
        cb_table_row(t);
        cb_table_str(t, PH_NAMES[p]);
        cb_table_num(t, s.median, 3);
        cb_table_num(t, s.mean, 3);
        cb_table_num(t, s.stddev, 3);
        cb_table_num(t, cb_stats_iqr(&s), 3);
        cb_table_num(t, s.min, 3);
        cb_table_num(t, s.max, 3);
        double rel = cb_stats_rel_iqr(&s);
        if (rel >= 0) cb_table_num(t, 100 * rel, 1);
        else cb_table_null(t);
    }
    if (fmt == CB_FORMAT_JSON || fmt == CB_FORMAT_CSV) { // every timed step, for your own statistics
        const char *scols[] = {"phase", "iteration", "ms"};
        cb_table *st = cb_report_table(r, "samples", 3, scols);
        for (int p = 0; p < PH_COUNT; p++)
            for (int k = 0; k < iters && !skip[p]; k++) {
                cb_table_row(st);
                cb_table_str(st, PH_NAMES[p] + strspn(PH_NAMES[p], " "));
                cb_table_int(st, k);
                cb_table_num(st, sm.ms[(size_t)p * sm.cap + k], 6);
            }
    }
    cb_report_meta_num(r, "images_per_s", total.median > 0 ? 1e3 * (double)cb_net_batch(net) / total.median : 0);
    if (graph) {
        cb_report_meta_num(r, "graph_images_per_s", graph_total.median > 0 ? 1e3 * (double)cb_net_batch(net) / graph_total.median : 0);
        cb_report_meta_num(r, "graph_speedup", graph_total.median > 0 ? total.median / graph_total.median : 0);
        cb_report_note(r, "total, one graph: the same step (%s) recorded once as a CUDA graph and replayed, %ld warm-up "
                          "replays then %d timed; images_per_s is the launched steps', graph_images_per_s the graph's",
                       update ? (no_criterion ? "the output gradient's fill, forward, backward, update" : "forward, criterion, backward, update")
                              : (no_criterion ? "the output gradient's fill, forward, backward" : "forward, criterion, backward"),
                       ro.warmup, iters);
    }
    if (!no_criterion) cb_report_meta_num(r, "loss", loss);
    cb_report_note(r, "%ld untimed warm-up step%s, then %d timed%s; iqr: the interquartile range (q3 - q1); iqr_pct: "
                      "iqr / median, shown for 4 or more steps and phases of %.2f ms or more",
                   ro.warmup, ro.warmup == 1 ? "" : "s", iters,
                   min_time > 0 ? " (at least --iters, until they add up to --min-time)" : "", CB_STATS_MIN_MS);
    cb_report_note(r, "grad-input and grad-weight are sums of per-layer times within the backward pass%s",
                   device ? " (from separate steps timed per layer; the other phases are timed without per-layer syncs)" : "");
    // the slow paths the backend took where a faster one exists (cb_exec_note), never silently
    for (int k = 0; k < cb_exec_note_count(e); k++) cb_report_note(r, "%s", cb_exec_note_at(e, k));
    double cover = breakdown_table(r, &bd, total.median);
    cb_report_meta_num(r, "breakdown_coverage", cover);
    memory_table(r, e);
    if (per_layer) layer_table(r, &bd, e);
    cb_report_note(r, "breakdown: mean per step of %d steps timed layer by layer%s; a conv or FC layer's part includes its bias, "
                      "padded input copy and weight cast (bf16 storage, after an update)%s; the parts cover %.1f%% of the step",
                   bd.steps, device ? " (separate from the steps of the phase table)" : "",
                   device ? ", its bias gradient too but where it comes with its activation's in one pass (then in 'activation, fused'); "
                            "'batch norm + sum' holds the sum's ReLU gradient where that batch norm's backward takes it" : "",
                   100 * cover);
    bool shared = cb_exec_memory_shared(e);
    cb_report_meta_str(r, "memory_mode", shared ? "reuse" : "separate");
    cb_report_note(r, "memory: the planned buffers by kind; %s", shared
                   ? "each kind's buffers counted whole; the activation-sized ones (outputs, what backward reads, gradients, "
                     "accumulation) share one arena placed by liveness over the step, a buffer's bytes serving another "
                     "once its last reader is done (row 'shared by liveness'; $CONVBENCH_MEMORY=separate: one buffer each)"
                   : "memory_mode separate ($CONVBENCH_MEMORY): every buffer its own allocation, no arena");
    if (shared) {
        bool bwd;
        int at = cb_exec_memory_peak_layer(e, &bwd);
        cb_report_note(r, "memory at_peak_mib: the buffers live at the arena's busiest point, %s%s%s (parameters and the "
                          "backend's buffers outside the arena whole)",
                       at < 0 ? "before the step" : bwd ? "the backward of layer '" : "the forward of layer '", at < 0 ? "" : cb_exec_net(e)->layers[at].name,
                       at < 0 ? "" : "'");
    }
    cb_report_note(r, "plan_s: the seconds planning took (buffers, the races of algorithms and their checks, the step check), "
                      "before the warm-up; memory_mb: the planned buffers; host_max_rss_mb: the process's measured peak resident memory%s",
                   on_gpu ? "; device_peak_mb: the measured high-water mark of device memory in use (cudaMemGetInfo "
                            "after start-up and after each step) above what was in use before" : "");
    rc = cli_emit(&cmd_fullpass, r, &o, fmt);
    cb_report_free(r);
    free(lt);
    free(bd.layer);
    free(bd.bn_add);
    free(sm.ms);
    cb_exec_destroy(e);
    cb_net_free(net);
    return rc;
}

const cli_cmd cmd_fullpass = {"fullpass", "time a training step by phase (forward, criterion, backward split, update)",
                              "NET [--backend B] [--batch N] [--warmup W] [--iters K] [--min-time S] [--update] "
                              "[--no-data-grad] [--no-criterion] [--per-layer] [--gpus N [--scaling weak|strong] [--grad-precision fp32|bf16]]",
                              run};
