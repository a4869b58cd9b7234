#include "fashion_common.h"

#include <stdio.h>

int data_load(const cli_cmd *cmd, const data_opts *d, const cb_net *net, const char *split, int64_t limit,
              cb_dataset *out) {
    cb_shape in = net->layers[0].out;
    if (d->resize < 0 || d->resize > 4096) return cli_usage_error(cmd, "--resize: %ld must be in [1, 4096]", d->resize);
    if (in.rank != 4 || in.c != 1)
        return cli_usage_error(cmd, "%s takes %lld-channel inputs; Fashion-MNIST images have 1 channel", net->path,
                               (long long)in.c);
    if (d->resize ? (in.h != d->resize || in.w != d->resize) : (in.h != 28 || in.w != 28)) {
        if (in.h == in.w) return cli_usage_error(cmd, "%s wants %lldx%lld inputs; pass --resize %lld", net->path, (long long)in.h,
                                                 (long long)in.w, (long long)in.h);
        return cli_usage_error(cmd, "%s wants %lldx%lld inputs; --resize makes square images only", net->path,
                               (long long)in.h, (long long)in.w);
    }
    cb_error err = {0};
    cb_status st = cb_dataset_load(d->dir ? d->dir : CB_FASHION_DIR, split, !d->no_normalise, limit, out, &err);
    if (st == CB_OK && d->resize) st = cb_dataset_resize(out, (int)d->resize, (int)d->resize, &err);
    if (st != CB_OK) {
        cb_dataset_free(out);
        return cli_fail(cmd, &err);
    }
    return -1;
}
