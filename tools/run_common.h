// Options and set-up shared by the commands that run a network (fullpass, profile, ...).
#ifndef CB_TOOLS_RUN_COMMON_H
#define CB_TOOLS_RUN_COMMON_H

#include "cli.h"

typedef struct run_opts {
    const char *backend;
    const char *precision, *layout, *conv_algo, *recompute;
    long batch, warmup, iters, seed, workspace_mb, threads, max_memory_mb;
    double lr, momentum, weight_decay, workspace_slack_pct, memory_slack_pct;
    bool no_data_grad, verbose, no_step_check;
} run_opts;

#define RUN_OPTS(r) RUN_OPTS_BATCH(r, "batch size (default: the network's)")
// the same with the --batch help of a command whose default batch is its own
#define RUN_OPTS_BATCH(r, batch_help)                                                                                  \
    {"--backend", CLI_STR, &(r).backend, "B", "cpu (default), ref, onednn, cpu-auto, cuda, cudnn or auto"},                     \
        {"--batch", CLI_INT, &(r).batch, "N", batch_help},                                                             \
        {"--warmup", CLI_INT, &(r).warmup, "W", "untimed iterations first (default 2)"},                               \
        {"--iters", CLI_INT, &(r).iters, "K", "timed iterations (default 10)"},                                        \
        {"--precision", CLI_STR, &(r).precision, "P", "fp32 (default), tf32 or bf16 (GPU backends)"},                 \
        {"--layout", CLI_STR, &(r).layout, "L", "nchw (default) or nhwc (GPU backends)"},                             \
        {"--conv-algo", CLI_STR, &(r).conv_algo, "A", "own GPU convolution algorithm (cuda, auto backends): auto (default: the fastest) or a name from `convbench algos`"}, \
        {"--workspace-mb", CLI_INT, &(r).workspace_mb, "MB", "workspace limit for algorithm choice (default 4096)"},  \
        {"--workspace-slack", CLI_FLOAT, &(r).workspace_slack_pct, "PCT", "cuDNN's algorithms: the least workspace among those at most PCT% slower than the fastest (default 3; 0: the fastest)"}, \
        {"--memory-slack", CLI_FLOAT, &(r).memory_slack_pct, "PCT", "a workspace that adds to the peak (no gap of the activation arena holds it) gives way to a candidate of less workspace while that costs at most PCT% of the planned step (default 1; 0: the fastest always; cudnn, auto)"}, \
        {"--recompute", CLI_STR, &(r).recompute, "R", "training: layer outputs dropped after the forward and made again in the backward from their batch norm's input (the auto backend): auto (default: only to fit --max-memory or the device), on (wherever that lowers the peak), all (every one that can be) or off"}, \
        {"--max-memory", CLI_INT, &(r).max_memory_mb, "MIB", "the memory the plan should fit in MiB (--recompute auto; default: the device's free memory)"}, \
        {"--seed", CLI_INT, &(r).seed, "S", "seed for weights and inputs (default 42)"},                               \
        {"--threads", CLI_INT, &(r).threads, "N", "CPU threads (OpenMP and OpenBLAS; default: every core)"},              \
        {"--verbose", CLI_FLAG, &(r).verbose, NULL, "the backend's planning on stderr (GPU: every algorithm raced, its time and workspace)"}, \
        {"--no-step-check", CLI_FLAG, &(r).no_step_check, NULL, "training on cudnn or auto: keep the raced choices as they are (default: a choice that runs far slower inside whole steps than in its race gives way to the next, if that is faster there)"}

void run_opts_default(run_opts *r);
// --conv-algo NAME for a backend: -1 when fine, else the usage error's exit status
int conv_algo_check(const cli_cmd *cmd, const char *backend, const char *algo);
// Does the backend compute in this precision and store this layout (its declared capabilities)?
// -1 when it does (or the name is not one backend: cb_exec_create says so), else the usage error's exit status
int backend_opts_check(const cli_cmd *cmd, const cb_exec_opts *eo);
// Validates the options and fills exec options. Returns -1 to go on or an exit status.
int run_opts_check(const cli_cmd *cmd, const run_opts *r, cb_exec_opts *eo);

#endif
