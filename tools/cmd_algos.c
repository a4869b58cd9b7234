// convbench algos: the convolution algorithms of convbench's own GPU backend (src/cuda/conv_algo.h),
// with the arithmetic each uses and the phases it implements; --conv-algo takes these names.
#include "cli.h"
#ifdef CB_HAVE_CUDA
#include "cuda/conv_algo.h"
#endif

#include <stdio.h>

static int run(int argc, char **argv) {
    cli_out o = {0};
    const cli_opt opts[] = {CLI_OUT_OPTS(o), {0}};
    int rc = cli_parse(&cmd_algos, opts, argc, argv, NULL, 0, 0);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_algos, &o, &fmt)) >= 0) return rc;
    cb_report *r = cb_report_new("algos");
    const char *cols[] = {"name", "arithmetic", "forward", "backward_data", "backward_filter", "about"};
    cb_table *t = cb_report_table(r, "algorithms", 6, cols);
#ifdef CB_HAVE_CUDA
    for (int i = 0; cb_cuda_conv_algos[i]; i++) {
        const cb_cuda_conv_algo *a = cb_cuda_conv_algos[i];
        cb_table_row(t);
        cb_table_str(t, a->name);
        cb_table_str(t, cb_precision_name(a->prec));
        cb_table_str(t, a->forward ? "yes" : "-");
        cb_table_str(t, a->backward_data ? "yes" : "-");
        cb_table_str(t, a->backward_filter ? "yes" : "-");
        cb_table_str(t, a->about);
    }
    cb_report_note(r, "--precision fp32 allows fp32 algorithms; tf32 adds tf32 ones; bf16 allows all. "
                      "Unsupported shapes fall back to %s.", cb_cuda_conv_algos[0]->name);
#else
    cb_report_note(r, "this build has no CUDA: no GPU algorithms");
#endif
    rc = cli_emit(&cmd_algos, r, &o, fmt);
    cb_report_free(r);
    return rc;
}

const cli_cmd cmd_algos = {"algos", "list convbench's own GPU convolution algorithms (--conv-algo names)", "[--format F]", run};
