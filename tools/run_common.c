#include "run_common.h"
#ifdef CB_HAVE_CUDA
#include "cuda/conv_algo.h"
#endif

#include <string.h>

void run_opts_default(run_opts *r) {
    memset(r, 0, sizeof *r);
    r->backend = "cpu";
    r->batch = CLI_UNSET;
    r->max_memory_mb = CLI_UNSET;
    r->warmup = 2;
    r->iters = 10;
    r->seed = 42;
    r->workspace_mb = 4096;
    r->workspace_slack_pct = CB_WORKSPACE_SLACK_DEFAULT * 100;
    r->memory_slack_pct = CB_MEMORY_SLACK_DEFAULT * 100;
    r->lr = 0.01;
    r->momentum = 0.9;
    r->weight_decay = 5e-4;
}

int conv_algo_check(const cli_cmd *cmd, const char *backend, const char *algo) {
    const cb_backend_caps *caps = cb_backend_caps_of(backend);
    if (caps && !caps->own_conv_algos) return cli_usage_error(cmd, "--conv-algo: backend %s has no own GPU algorithms", backend);
#ifdef CB_HAVE_CUDA
    if (strcmp(algo, "auto") && !cb_cuda_conv_algo_find(algo))
        return cli_usage_error(cmd, "--conv-algo: '%s' is not auto or a name `convbench algos` lists", algo);
    return -1;
#else
    return cli_usage_error(cmd, "--conv-algo: this build has no CUDA");
#endif
}

int backend_opts_check(const cli_cmd *cmd, const cb_exec_opts *eo) {
    cb_error err = {0};
    cb_reason why = cb_backend_supports(NULL, eo, &err);
    if (why == CB_REASON_PRECISION || why == CB_REASON_LAYOUT) return cli_usage_error(cmd, "%s", err.msg);
    return -1; // an unknown backend or a layer declined: cb_exec_create says so
}

int run_opts_check(const cli_cmd *cmd, const run_opts *r, cb_exec_opts *eo) {
    int rc;
    cb_exec_opts_default(eo);
    eo->backend = r->backend;
    if (r->precision && !cb_precision_parse(r->precision, &eo->precision))
        return cli_usage_error(cmd, "--precision: '%s' is not one of fp32, tf32, bf16", r->precision);
    if (r->layout && !cb_layout_parse(r->layout, &eo->layout))
        return cli_usage_error(cmd, "--layout: '%s' is not one of nchw, nhwc", r->layout);
    if (r->warmup < 0 || r->warmup > 100000) return cli_usage_error(cmd, "--warmup: %ld must be in [0, 100000]", r->warmup);
    if (r->threads < 0 || r->threads > 4096) return cli_usage_error(cmd, "--threads: %ld must be in [1, 4096]", r->threads);
    cb_set_threads((int)r->threads); // 0: as they are
    if (r->iters < 1 || r->iters > 100000) return cli_usage_error(cmd, "--iters: %ld must be in [1, 100000]", r->iters);
    if (r->workspace_mb < 0 || r->workspace_mb > (1L << 24))
        return cli_usage_error(cmd, "--workspace-mb: %ld must be in [0, %ld]", r->workspace_mb, 1L << 24);
    if (!(r->workspace_slack_pct >= 0 && r->workspace_slack_pct <= 100))
        return cli_usage_error(cmd, "--workspace-slack: %g must be in [0, 100]", r->workspace_slack_pct);
    if (!(r->memory_slack_pct >= 0 && r->memory_slack_pct <= 100))
        return cli_usage_error(cmd, "--memory-slack: %g must be in [0, 100]", r->memory_slack_pct);
    if (r->recompute && strcmp(r->recompute, "auto") && strcmp(r->recompute, "on") && strcmp(r->recompute, "off") && strcmp(r->recompute, "all"))
        return cli_usage_error(cmd, "--recompute: '%s' is not one of auto, on, all, off", r->recompute);
    if (r->max_memory_mb != CLI_UNSET && (r->max_memory_mb < 1 || r->max_memory_mb > (1L << 30)))
        return cli_usage_error(cmd, "--max-memory: %ld must be in [1, %ld] MiB", r->max_memory_mb, 1L << 30);
    if (!(r->lr >= 0 && r->lr < 1e6)) return cli_usage_error(cmd, "--lr must be a non-negative number");
    if (!(r->momentum >= 0 && r->momentum < 1)) return cli_usage_error(cmd, "--momentum must be in [0, 1)");
    if (!(r->weight_decay >= 0 && r->weight_decay < 1)) return cli_usage_error(cmd, "--weight-decay must be in [0, 1)");
    if ((rc = backend_opts_check(cmd, eo)) >= 0) return rc;
    eo->seed = (uint64_t)r->seed;
    eo->workspace_limit = (size_t)r->workspace_mb << 20;
    eo->workspace_slack = r->workspace_slack_pct / 100;
    eo->memory_slack = r->memory_slack_pct / 100;
    eo->lr = (float)r->lr;
    eo->momentum = (float)r->momentum;
    eo->weight_decay = (float)r->weight_decay;
    eo->no_data_grad = r->no_data_grad;
    eo->verbose = r->verbose;
    eo->step_check = !r->no_step_check;
    eo->conv_algo = r->conv_algo;
    eo->recompute = !r->recompute || !strcmp(r->recompute, "auto") ? CB_RECOMPUTE_AUTO : !strcmp(r->recompute, "on") ? CB_RECOMPUTE_ON
                   : !strcmp(r->recompute, "all")                  ? CB_RECOMPUTE_ALL
                                                                   : CB_RECOMPUTE_OFF;
    eo->memory_budget = r->max_memory_mb == CLI_UNSET ? 0 : (size_t)r->max_memory_mb << 20;
    if (r->conv_algo && (rc = conv_algo_check(cmd, r->backend, r->conv_algo)) >= 0) return rc;
    return -1;
}
