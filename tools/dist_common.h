// --gpus N and --devices LIST, shared by `allreduce` and `fullpass --gpus` (src/dist)
#ifndef CB_TOOLS_DIST_COMMON_H
#define CB_TOOLS_DIST_COMMON_H
#include "cli.h"
#include "dist/dist.h"

// The GPUs to use: devices "0,1,3" (each once, each below the machine's count) or the first
// gpus ones. Returns -1 and fills n / dev, else the usage error's exit status.
int dist_devices(const cli_cmd *cmd, long gpus, const char *devices, int *n, int dev[CB_DIST_MAX_GPUS]);
// the fullpass --gpus part (tools/fullpass_dist.c)
typedef struct run_opts run_opts;
int fullpass_dist(const char *spec, const run_opts *ro, const cb_exec_opts *eo, const cli_out *o, cb_format fmt, int n, const int *dev,
                  const char *scaling, double bucket_mb, bool overlap, bool update, bool criterion, cb_precision grad);
int fullpass_dist_procs(const char *spec, const run_opts *ro, const cb_exec_opts *eo, const cli_out *o, cb_format fmt, const cb_dist_env *env,
                        const char *rendezvous, double bucket_mb, bool overlap, bool update, bool criterion, cb_precision grad);
#endif
