// convbench allreduce: NCCL all-reduce bandwidth over message sizes on the GPUs of this machine,
// the figures nccl-tests prints (algorithm and bus bandwidth), as the measured interconnect that
// `simulate` can take. One process; NCCL groups the ranks of every GPU.
#include "cli.h"
#include "dist_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv) {
    cli_out o = {0};
    long gpus = CLI_UNSET, warmup = 5, iters = 20;
    const char *devices = NULL, *dtype = "fp32";
    double min_mb = 8.0 / 1048576, max_mb = 256; // 8 B to 256 MiB, powers of two as nccl-tests sweeps
    const cli_opt opts[] = {
        {"--gpus", CLI_INT, &gpus, "N", "GPUs 0..N-1 (default 1)"},
        {"--devices", CLI_STR, &devices, "LIST", "the GPUs by number, e.g. 0,2"},
        {"--dtype", CLI_STR, &dtype, "T", "fp32 (default) or bf16"},
        {"--min-mb", CLI_FLOAT, &min_mb, "MB", "smallest message, MiB (default 8 bytes)"},
        {"--max-mb", CLI_FLOAT, &max_mb, "MB", "largest message, MiB (default 256); sizes double in between"},
        {"--warmup", CLI_INT, &warmup, "W", "untimed all-reduces per size (default 5)"},
        {"--iters", CLI_INT, &iters, "K", "timed all-reduces per size (default 20; the median is kept)"},
        CLI_OUT_OPTS(o),
        {0},
    };
    int rc = cli_parse(&cmd_allreduce, opts, argc, argv, NULL, 0, 0);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_allreduce, &o, &fmt)) >= 0) return rc;
    bool bf16 = !strcmp(dtype, "bf16");
    if (!bf16 && strcmp(dtype, "fp32")) return cli_usage_error(&cmd_allreduce, "--dtype: '%s' is not fp32 or bf16", dtype);
    if (!(min_mb > 0 && max_mb >= min_mb && max_mb <= 65536))
        return cli_usage_error(&cmd_allreduce, "--min-mb/--max-mb: need 0 < min <= max <= 65536");
    if (warmup < 0 || warmup > 1000 || iters < 1 || iters > 100000) return cli_usage_error(&cmd_allreduce, "--warmup in [0, 1000], --iters in [1, 100000]");
    int n, dev[CB_DIST_MAX_GPUS];
    if ((rc = dist_devices(&cmd_allreduce, gpus, devices, &n, dev)) >= 0) return rc;
    size_t es = bf16 ? 2 : 4, sizes[64];
    int ns = cb_allreduce_sizes(min_mb * 1048576.0, max_mb * 1048576.0, es, sizes, 64);
    double sec[64];
    cli_progress(&o, "allreduce: %d GPU%s, %d sizes up to %.0f MiB, %s", n, n == 1 ? "" : "s", ns, max_mb, dtype);
    cb_error err = {0};
    if (cb_dist_allreduce_bench(n, dev, sizes, ns, bf16, (int)warmup, (int)iters, sec, &err) != CB_OK) return cli_fail(&cmd_allreduce, &err);
    cb_report *r = cb_report_new("allreduce");
    cb_report_meta_num(r, "gpus", n);
    char list[128] = "";
    for (int k = 0; k < n; k++) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", k ? "," : "", dev[k]);
    cb_report_meta_str(r, "devices", list);
    cb_report_meta_str(r, "dtype", dtype);
    cb_report_meta_str(r, "op", "sum");
    const char *cols[] = {"bytes", "count", "time_us", "algbw_gbs", "busbw_gbs"};
    cb_table *t = cb_report_table(r, "allreduce", 5, cols);
    double sum_bus = 0;
    for (int k = 0; k < ns; k++) {
        cb_table_row(t);
        cb_table_int(t, (int64_t)sizes[k]);
        cb_table_int(t, (int64_t)(sizes[k] / es));
        cb_table_num(t, sec[k] * 1e6, 1);
        cb_table_num(t, cb_allreduce_algbw((double)sizes[k], sec[k]), 2);
        cb_table_num(t, cb_allreduce_busbw((double)sizes[k], sec[k], n), 2);
        sum_bus += cb_allreduce_busbw((double)sizes[k], sec[k], n);
    }
    cb_report_meta_num(r, "avg_busbw_gbs", sum_bus / ns);
    cb_report_meta_num(r, "busbw_largest_gbs", cb_allreduce_busbw((double)sizes[ns - 1], sec[ns - 1], n));
    cb_report_note(r, "median of %ld back-to-back all-reduces per size after %ld untimed; one's time: the gap between its CUDA event and the one before, the "
                      "slowest GPU's; "
                      "algbw = bytes / time, busbw = algbw * 2(n-1)/n (nccl-tests' definitions; 0 on one GPU)",
                   iters, warmup);
    rc = cli_emit(&cmd_allreduce, r, &o, fmt);
    cb_report_free(r);
    return rc;
}

const cli_cmd cmd_allreduce = {"allreduce", "NCCL all-reduce bus bandwidth over message sizes on this machine's GPUs",
                               "[--gpus N | --devices LIST] [--dtype fp32|bf16] [--max-mb MB] [--format F]", run};
