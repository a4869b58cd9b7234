// Gradient buckets, all-reduce bandwidth figures and the launcher's environment: the parts of
// data-parallel training that need no GPU (src/dist/dist.h).
#include "dist/dist.h"
#include "core/net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cb_bucket_plan(const int64_t *off, const int64_t *count, int nlayers, size_t bucket_bytes, size_t elem_bytes, cb_bucket *out, int max) {
    int64_t next = 0; // the slices must ascend and touch
    for (int i = 0; i < nlayers; i++) {
        if (count[i] < 0 || (count[i] && off[i] != next)) return -1;
        next += count[i];
    }
    int nb = 0;
    int64_t hi = -1;
    size_t bytes = 0;
    for (int i = nlayers - 1; i >= 0; i--) {
        if (!count[i]) continue;
        if (hi < 0) hi = off[i] + count[i], bytes = 0;
        bytes += (size_t)count[i] * elem_bytes;
        if (bytes >= bucket_bytes) {
            if (nb >= max) return -1;
            out[nb++] = (cb_bucket){off[i], hi, i};
            hi = -1;
        }
    }
    if (hi >= 0) { // the first layers' remainder
        int first = 0;
        while (!count[first]) first++;
        if (nb >= max) return -1;
        out[nb++] = (cb_bucket){off[first], hi, first};
    }
    return nb;
}

double cb_allreduce_algbw(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0; }

double cb_allreduce_busbw(double bytes, double seconds, int n) { return n > 0 ? cb_allreduce_algbw(bytes, seconds) * 2.0 * (n - 1) / n : 0; }

int cb_allreduce_sizes(double min_bytes, double max_bytes, size_t elem_bytes, size_t *sizes, int cap) {
    if (!(min_bytes > 0) || !(max_bytes >= min_bytes) || elem_bytes == 0 || max_bytes > 1e15) return 0;
    size_t s = (size_t)min_bytes / elem_bytes * elem_bytes;
    if (s < elem_bytes) s = elem_bytes;
    int n = 0;
    for (; n < cap && (double)s <= max_bytes; s *= 2) sizes[n++] = s;
    return n;
}

bool cb_grad_precision_parse(const char *s, cb_precision *p) {
    cb_precision q;
    if (!s || !cb_precision_parse(s, &q) || (q != CB_PREC_FP32 && q != CB_PREC_BF16)) return false;
    *p = q;
    return true;
}

// an integer variable in [lo, hi]; false with the message when set and malformed
static bool env_int(const char *(*get)(const char *), const char *name, int lo, int hi, int *out, bool *set, cb_error *err) {
    const char *v = get(name);
    *set = v != NULL;
    if (!v) return true;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi) {
        cb_fail(err, CB_STATUS_ARG, NULL, NULL, "environment variable %s='%.40s' is not an integer in [%d, %d]", name, v, lo, hi);
        return false;
    }
    *out = (int)x;
    return true;
}

cb_status cb_dist_env_parse(const char *(*get)(const char *), cb_dist_env *out, cb_error *err) {
    static const char *const sets[][4] = {
        {"RANK", "WORLD_SIZE", "LOCAL_RANK", "RANK/WORLD_SIZE"},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_*"},
        {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_*"},
    };
    *out = (cb_dist_env){0, 1, 0, "none"};
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        int rank = 0, world = 1, local = 0;
        bool has_rank, has_world, has_local;
        if (!env_int(get, sets[k][1], 1, 1 << 20, &world, &has_world, err)) return err->status;
        if (!env_int(get, sets[k][0], 0, (1 << 20) - 1, &rank, &has_rank, err)) return err->status;
        if (!env_int(get, sets[k][2], 0, (1 << 20) - 1, &local, &has_local, err)) return err->status;
        if (!has_rank && !has_world) continue;
        if (has_rank != has_world)
            return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "environment variable %s is set but %s is not", has_rank ? sets[k][0] : sets[k][1],
                           has_rank ? sets[k][1] : sets[k][0]);
        if (rank >= world)
            return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "environment variable %s=%d is not below %s=%d", sets[k][0], rank, sets[k][1], world);
        *out = (cb_dist_env){rank, world, has_local ? local : rank, sets[k][3]};
        return CB_OK;
    }
    return CB_OK;
}

#ifndef CB_HAVE_NCCL
cb_status cb_dist_fullpass(cb_net *const *nets, const cb_exec_opts *eo, const cb_dist_opts *opts, cb_dist_result *res, float *params_out,
                           int64_t nparams_out, cb_error *err) {
    return cb_fail(err, CB_STATUS_UNSUPPORTED, NULL, NULL, "this build has no NCCL (it needs CUDA with nccl.h; see README, Multi-GPU)");
}
cb_status cb_dist_allreduce_bench(int ngpus, const int *devices, const size_t *bytes, int nsizes, bool bf16, int warmup, int iters, double *sec,
                                  cb_error *err) {
    return cb_fail(err, CB_STATUS_UNSUPPORTED, NULL, NULL, "this build has no NCCL (it needs CUDA with nccl.h; see README, Multi-GPU)");
}
bool cb_dist_have_nccl(void) { return false; }
cb_status cb_dist_unique_id(void *id, cb_error *err) {
    return cb_fail(err, CB_STATUS_UNSUPPORTED, NULL, NULL, "this build has no NCCL (it needs CUDA with nccl.h; see README, Multi-GPU)");
}
#ifdef CB_HAVE_CUDA
#include <cuda_runtime_api.h>
int cb_dist_device_count(void) {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}
#else
int cb_dist_device_count(void) { return 0; }
#endif
#endif
