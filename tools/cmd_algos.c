// convbench algos: the convolution algorithms of convbench's own GPU backend (src/cuda/conv_algo.h),
// with the arithmetic each uses and the phases it implements; --conv-algo takes these names.
#include "cli.h"
#ifdef CB_HAVE_CUDA
#include "cuda/conv_algo.h"
#endif

#include <stdio.h>
#include <string.h>

#ifdef CB_HAVE_CUDA
// table and md: name, arithmetic, phases ("F D W", "-" where missing), and the about text
// wrapped at ABOUT_WIDTH over continuation rows, so that a line fits 100 columns
enum { ABOUT_WIDTH = 58 };
static void compact_rows(cb_table *t, const cb_cuda_conv_algo *a) {
    char ph[8];
    snprintf(ph, sizeof ph, "%c %c %c", a->forward ? 'F' : '-', a->backward_data ? 'D' : '-', a->backward_filter ? 'W' : '-');
    const char *p = a->about;
    bool first = true;
    while (*p || first) {
        int len = (int)strlen(p);
        if (len > ABOUT_WIDTH) { // break at the last space that fits
            len = ABOUT_WIDTH;
            while (len > 0 && p[len] != ' ') len--;
            if (len == 0) len = ABOUT_WIDTH;
        }
        char line[ABOUT_WIDTH + 1];
        snprintf(line, sizeof line, "%.*s", len, p);
        cb_table_row(t);
        cb_table_str(t, first ? a->name : "");
        cb_table_str(t, first ? cb_precision_name(a->prec) : "");
        cb_table_str(t, first ? ph : "");
        cb_table_str(t, line);
        p += len;
        while (*p == ' ') p++;
        first = false;
    }
}
#endif

static int run(int argc, char **argv) {
    cli_out o = {0};
    const cli_opt opts[] = {CLI_OUT_OPTS(o), {0}};
    int rc = cli_parse(&cmd_algos, opts, argc, argv, NULL, 0, 0);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_algos, &o, &fmt)) >= 0) return rc;
    cb_report *r = cb_report_new("algos");
    bool compact = fmt == CB_FORMAT_TABLE || fmt == CB_FORMAT_MD;
    const char *cols[] = {"name", "arithmetic", "forward", "backward_data", "backward_filter", "about"};
    const char *ccols[] = {"name", "arithmetic", "phases", "about"};
    cb_table *t = compact ? cb_report_table(r, "algorithms", 4, ccols) : cb_report_table(r, "algorithms", 6, cols);
#ifdef CB_HAVE_CUDA
    for (int i = 0; cb_cuda_conv_algos[i]; i++) {
        const cb_cuda_conv_algo *a = cb_cuda_conv_algos[i];
        if (compact) {
            compact_rows(t, a);
            continue;
        }
        cb_table_row(t);
        cb_table_str(t, a->name);
        cb_table_str(t, cb_precision_name(a->prec));
        cb_table_bool(t, a->forward);
        cb_table_bool(t, a->backward_data);
        cb_table_bool(t, a->backward_filter);
        cb_table_str(t, a->about);
    }
    if (compact) cb_report_note(r, "phases: F forward, D backward data, W backward filter");
    cb_report_note(r, "--precision fp32 allows fp32 algorithms; tf32 adds tf32 ones; bf16 allows all. "
                      "Unsupported shapes fall back to %s.", cb_cuda_conv_algos[0]->name);
#else
    (void)t;
    cb_report_note(r, "this build has no CUDA: no GPU algorithms");
#endif
    rc = cli_emit(&cmd_algos, r, &o, fmt);
    cb_report_free(r);
    return rc;
}

const cli_cmd cmd_algos = {"algos", "list convbench's own GPU convolution algorithms (--conv-algo names)", "[--format F]", run};
