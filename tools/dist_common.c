// --gpus N and --devices LIST (tools/dist_common.h)
#include "dist_common.h"

#include <stdlib.h>
#include <string.h>

int dist_devices(const cli_cmd *cmd, long gpus, const char *devices, int *n, int dev[CB_DIST_MAX_GPUS]) {
    if (!cb_dist_have_nccl()) return cli_usage_error(cmd, "--gpus/--devices: this build has no NCCL (CUDA with nccl.h is needed)");
    int have = cb_dist_device_count();
    *n = 0;
    if (devices) {
        const char *p = devices;
        while (*p) {
            char *end;
            long d = strtol(p, &end, 10);
            if (end == p || (*end && *end != ',') || d < 0 || d >= have)
                return cli_usage_error(cmd, "--devices: '%s' is not a list of GPU numbers below %d (this machine's count)", devices, have);
            for (int k = 0; k < *n; k++)
                if (dev[k] == d) return cli_usage_error(cmd, "--devices: GPU %ld is named twice", d);
            if (*n == CB_DIST_MAX_GPUS) return cli_usage_error(cmd, "--devices: at most %d GPUs", CB_DIST_MAX_GPUS);
            dev[(*n)++] = (int)d;
            p = *end ? end + 1 : end;
        }
        if (gpus != CLI_UNSET && gpus != *n) return cli_usage_error(cmd, "--gpus %ld and --devices %s (%d GPUs) disagree", gpus, devices, *n);
        return -1;
    }
    if (gpus == CLI_UNSET) gpus = 1;
    if (gpus < 1 || gpus > CB_DIST_MAX_GPUS) return cli_usage_error(cmd, "--gpus: %ld is not in [1, %d]", gpus, CB_DIST_MAX_GPUS);
    if (gpus > have) return cli_usage_error(cmd, "--gpus %ld: this machine has %d GPU%s", gpus, have, have == 1 ? "" : "s");
    for (int k = 0; k < gpus; k++) dev[k] = k;
    *n = (int)gpus;
    return -1;
}
