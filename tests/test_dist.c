// Data-parallel training (src/dist): gradient buckets, all-reduce bandwidth figures and the
// launcher's environment and --grad-precision on the CPU; with NCCL and 2+ GPUs, N replicas each on
// its own part of a batch against 1 GPU on the whole batch (the same weights after SGD steps; bf16
// gradients within their tolerance), with 1 GPU one rank's bf16 step, else skipped.
#include "check.h"
#include "dist/dist.h"
#include "core/net.h"
#include "core/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int skipped;

static void test_buckets(void) {
    // layers 0 (input), 1 (100 params), 2 (none), 3 (50), 4 (300), 5 (10)
    int64_t off[] = {0, 0, 100, 100, 150, 450}, cnt[] = {0, 100, 0, 50, 300, 10};
    cb_bucket b[8];
    int n = cb_bucket_plan(off, cnt, 6, 0, 4, b, 8); // one per layer with parameters, backward order
    CHECK(n == 4, "%d buckets", n);
    if (n == 4) {
        CHECK(b[0].lo == 450 && b[0].hi == 460 && b[0].ready_after == 5, "first [%lld, %lld) after %d", (long long)b[0].lo, (long long)b[0].hi, b[0].ready_after);
        CHECK(b[3].lo == 0 && b[3].hi == 100 && b[3].ready_after == 1, "last");
    }
    n = cb_bucket_plan(off, cnt, 6, 1200, 4, b, 8); // 300 floats: 5+4 close one bucket, then 3+1
    CHECK(n == 2, "%d buckets", n);
    if (n == 2) {
        CHECK(b[0].lo == 150 && b[0].hi == 460 && b[0].ready_after == 4, "bucket 0 [%lld, %lld) after %d", (long long)b[0].lo, (long long)b[0].hi, b[0].ready_after);
        CHECK(b[1].lo == 0 && b[1].hi == 150 && b[1].ready_after == 1, "bucket 1 [%lld, %lld) after %d", (long long)b[1].lo, (long long)b[1].hi, b[1].ready_after);
    }
    n = cb_bucket_plan(off, cnt, 6, (size_t)1 << 40, 4, b, 8); // everything in one
    CHECK(n == 1 && b[0].lo == 0 && b[0].hi == 460 && b[0].ready_after == 1, "one bucket: %d", n);
    // the buckets tile the arena exactly, whatever the size
    for (size_t bytes = 4; bytes < 4000; bytes = bytes * 3 + 1) {
        n = cb_bucket_plan(off, cnt, 6, bytes, 4, b, 8);
        int64_t hi = 460;
        for (int k = 0; k < n; k++) {
            CHECK(b[k].hi == hi && b[k].lo < b[k].hi, "bucket %d of size %zu", k, bytes);
            hi = b[k].lo;
        }
        CHECK(n > 0 && hi == 0, "size %zu: the buckets stop at %lld", bytes, (long long)hi);
    }
    int64_t gap_off[] = {0, 0, 120}, gap_cnt[] = {0, 100, 10}; // not contiguous
    CHECK(cb_bucket_plan(gap_off, gap_cnt, 3, 0, 4, b, 8) == -1, "a gap is refused");
    CHECK(cb_bucket_plan(off, cnt, 6, 0, 4, b, 2) == -1, "too many buckets for max is refused");
}

static void test_busbw(void) {
    // nccl-tests: 256 MiB in 1 ms over 8 ranks: algbw 268.4 GB/s, busbw 2 * 7/8 of it
    double bytes = 268435456.0;
    CHECK(fabs(cb_allreduce_algbw(bytes, 1e-3) - 268.435456) < 1e-9, "algbw %g", cb_allreduce_algbw(bytes, 1e-3));
    CHECK(fabs(cb_allreduce_busbw(bytes, 1e-3, 8) - 268.435456 * 1.75) < 1e-9, "busbw %g", cb_allreduce_busbw(bytes, 1e-3, 8));
    CHECK(cb_allreduce_busbw(bytes, 1e-3, 1) == 0, "one rank moves nothing");
    CHECK(fabs(cb_allreduce_busbw(bytes, 1e-3, 2) - 268.435456) < 1e-9, "two ranks: busbw = algbw");
    // the sweep: 8 B to 256 MiB in powers of two, 256 MiB itself the last (a sweep that started at
    // 8e-6 MiB once ended at 134.2 MB and was reported as 256 MiB's)
    size_t sz[64];
    int n = cb_allreduce_sizes(8, 268435456.0, 4, sz, 64);
    CHECK(n == 26 && sz[0] == 8 && sz[n - 1] == 268435456u, "8 B..256 MiB: %d sizes, last %zu", n, n ? sz[n - 1] : 0);
    for (int k = 1; k < n; k++) CHECK(sz[k] == 2 * sz[k - 1], "size %d doubles", k);
    n = cb_allreduce_sizes(1, 64, 2, sz, 64);
    CHECK(n == 6 && sz[0] == 2 && sz[5] == 64, "bf16 from 1 byte: starts at one element (%d sizes)", n);
    n = cb_allreduce_sizes(100, 1000, 4, sz, 64);
    CHECK(n == 4 && sz[0] == 100 && sz[3] == 800, "100..1000: 100, 200, 400, 800 (%d)", n);
    CHECK(cb_allreduce_sizes(64, 8, 4, sz, 64) == 0 && cb_allreduce_sizes(0, 8, 4, sz, 64) == 0, "empty or zero range: none");
    CHECK(cb_allreduce_sizes(8, 1e12, 4, sz, 3) == 3, "the cap holds");
}

static const char *fake_env[16][2];
static const char *fake_get(const char *name) {
    for (int i = 0; i < 16 && fake_env[i][0]; i++)
        if (!strcmp(fake_env[i][0], name)) return fake_env[i][1];
    return NULL;
}
static void set_env(const char *const *kv) {
    memset(fake_env, 0, sizeof fake_env);
    for (int i = 0; kv[2 * i]; i++) fake_env[i][0] = kv[2 * i], fake_env[i][1] = kv[2 * i + 1];
}

static void test_env(void) {
    cb_dist_env d;
    cb_error err = {0};
    set_env((const char *[]){NULL});
    CHECK(cb_dist_env_parse(fake_get, &d, &err) == CB_OK && d.rank == 0 && d.world == 1, "nothing set: one process");
    set_env((const char *[]){"RANK", "3", "WORLD_SIZE", "8", "LOCAL_RANK", "1", NULL});
    CHECK(cb_dist_env_parse(fake_get, &d, &err) == CB_OK && d.rank == 3 && d.world == 8 && d.local_rank == 1, "torchrun's");
    set_env((const char *[]){"OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4", "OMPI_COMM_WORLD_LOCAL_RANK", "2", NULL});
    CHECK(cb_dist_env_parse(fake_get, &d, &err) == CB_OK && d.rank == 2 && d.world == 4 && d.local_rank == 2, "Open MPI's");
    set_env((const char *[]){"SLURM_PROCID", "5", "SLURM_NTASKS", "6", NULL});
    CHECK(cb_dist_env_parse(fake_get, &d, &err) == CB_OK && d.rank == 5 && d.world == 6 && d.local_rank == 5, "Slurm's (no local id: the rank)");
    set_env((const char *[]){"RANK", "8", "WORLD_SIZE", "8", NULL});
    CHECK(cb_dist_env_parse(fake_get, &d, &err) == CB_STATUS_ARG && strstr(err.msg, "RANK=8"), "rank out of range: %s", err.msg);
    set_env((const char *[]){"RANK", "x1", "WORLD_SIZE", "2", NULL});
    CHECK(cb_dist_env_parse(fake_get, &d, &err) == CB_STATUS_ARG && strstr(err.msg, "RANK='x1'"), "malformed: %s", err.msg);
    set_env((const char *[]){"RANK", "1", NULL});
    CHECK(cb_dist_env_parse(fake_get, &d, &err) == CB_STATUS_ARG && strstr(err.msg, "WORLD_SIZE"), "half set: %s", err.msg);
    set_env((const char *[]){"WORLD_SIZE", "0", "RANK", "0", NULL});
    CHECK(cb_dist_env_parse(fake_get, &d, &err) == CB_STATUS_ARG, "world 0: %s", err.msg);
}

// world processes exchange a 128-byte id through spec; true when every rank got rank 0's
static bool exchange(const char *spec, int world) {
    pid_t pid[8];
    for (int r = 0; r < world; r++) {
        if ((pid[r] = fork()) == 0) {
            unsigned char id[128], want[128];
            for (int j = 0; j < 128; j++) want[j] = (unsigned char)(j * 7 + 3);
            if (r == 0) memcpy(id, want, sizeof id);
            else memset(id, 0, sizeof id);
            cb_error err = {0};
            cb_status st = cb_rendezvous(spec, r, world, id, sizeof id, 10, &err);
            if (st != CB_OK) printf("  rank %d: %s\n", r, err.msg);
            fflush(stdout);
            _exit(st == CB_OK && !memcmp(id, want, sizeof id) ? 0 : 1);
        }
    }
    bool ok = true;
    for (int r = 0; r < world; r++) {
        int status = 0;
        waitpid(pid[r], &status, 0);
        ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    return ok;
}

static void test_rendezvous(void) {
    char path[128], spec[160];
    snprintf(path, sizeof path, "/tmp/cb-rdv-%ld", (long)getpid());
    snprintf(spec, sizeof spec, "file:%s", path);
    CHECK(exchange(spec, 3), "three processes through %s", spec);
    remove(path);
    bool tcp = false;
    for (int k = 0; k < 5 && !tcp; k++) { // a port another program holds: the next
        snprintf(spec, sizeof spec, "tcp://127.0.0.1:%d", 20000 + (int)((getpid() * 7 + k * 977) % 20000));
        tcp = exchange(spec, 4);
    }
    CHECK(tcp, "four processes through TCP");
    cb_error err = {0};
    unsigned char id[16] = {0};
    snprintf(spec, sizeof spec, "file:%s.never", path);
    CHECK(cb_rendezvous(spec, 1, 2, id, sizeof id, 0.2, &err) == CB_STATUS_IO && strstr(err.msg, "did not write the file within"),
          "a file that never comes times out: %s", err.msg);
    CHECK(cb_rendezvous("tcp://127.0.0.1:1", 1, 2, id, sizeof id, 0.2, &err) == CB_STATUS_IO && strstr(err.msg, "did not answer"),
          "a rank 0 that never listens times out: %s", err.msg);
    CHECK(cb_rendezvous("udp://x", 0, 2, id, sizeof id, 1, &err) == CB_STATUS_ARG && strstr(err.msg, "expected file:PATH"), "bad spec: %s", err.msg);
    CHECK(cb_rendezvous("tcp://nohost", 0, 2, id, sizeof id, 1, &err) == CB_STATUS_ARG, "no port: %s", err.msg);
    CHECK(cb_rendezvous(NULL, 0, 2, id, sizeof id, 1, &err) == CB_STATUS_ARG && strstr(err.msg, "--rendezvous"), "none: %s", err.msg);
    CHECK(cb_rendezvous(NULL, 0, 1, id, sizeof id, 1, &err) == CB_OK, "one process needs none");
}

// one SGD step loop on one GPU over the whole batch: the reference for the replicas
static float *single(const char *spec, int64_t batch, const cb_exec_opts *eo, const float *x, const int32_t *lab, int steps, int64_t *np) {
    cb_error err = {0};
    cb_net *net = cb_net_load(spec, &err);
    if (!net || cb_net_set_batch(net, batch, &err) != CB_OK) return NULL;
    cb_exec *e = cb_exec_create(net, eo, &err);
    float *p = NULL;
    if (e && cb_exec_set_input(e, x, lab) == CB_OK) {
        double loss;
        for (int s = 0; s < steps; s++) {
            cb_exec_forward(e, true, NULL);
            cb_exec_criterion_forward(e, &loss, NULL);
            cb_exec_criterion_backward(e, NULL);
            cb_exec_backward(e, NULL);
            cb_exec_update(e, NULL);
        }
        *np = 0; // the learnable tensors (those with a gradient), in the arena's order
        int64_t total = 0;
        for (int i = 0; i < net->nlayers; i++) {
            cb_param ps[6];
            int k = cb_exec_params(e, i, ps, 6);
            for (int j = 0; j < k; j++) total += ps[j].grad ? ps[j].count : 0;
        }
        p = malloc((size_t)total * sizeof *p + 1);
        int64_t at = 0;
        for (int i = 0; p && i < net->nlayers; i++) {
            cb_param ps[6];
            int k = cb_exec_params(e, i, ps, 6);
            for (int j = 0; j < k; j++)
                if (ps[j].grad) cb_exec_param_get(e, &ps[j], p + at), at += ps[j].count;
        }
        *np = total;
    } else {
        printf("  single: %s\n", err.msg);
    }
    cb_exec_destroy(e);
    cb_net_free(net);
    return p;
}

// N replicas (n 1: one rank of its own), each on its own part of the data, against one GPU on
// all of it, with the gradients all-reduced in grad's type. After three SGD steps the weights
// agree to fp32 rounding (the mean over the batch = the mean of the replicas' means) in fp32.
// In bf16 every gradient is rounded to 8 significant bits (relative 2^-9) before the average, in
// NCCL's partial sums (n - 1 of them) and after: with n <= 4 at most 5 roundings, about 1% of a
// gradient, which three steps with momentum carry into the updates in the same proportion. The
// test allows 1/32 (3%) of the largest weight change over the steps, the room left for the
// trajectories drifting apart, and asks the weights to differ from fp32's at all (the casts ran).
// A network without batch norm, whose statistics would differ per replica.
// compute: the backend and precision the replicas run (cudnn fp32, or the own kernels named by
// conv_algo in tf32, whose raised shared-memory limit must hold on every replica's GPU)
static void replicas_on(int n, cb_precision grad, const char *backend, cb_precision compute, const char *conv_algo) {
    const char *spec = "fashion-lenet";
    const int64_t per = 16, steps = 3;
    cb_error err = {0};
    cb_net *probe = cb_net_load(spec, &err);
    CHECK(probe != NULL, "%s", err.msg);
    if (!probe) return;
    int64_t img = cb_shape_count(probe->layers[0].out) / probe->layers[0].out.n;
    int64_t classes = probe->layers[probe->nlayers - 1].out.c;
    cb_net_free(probe);
    float *x = malloc(sizeof(float) * (size_t)(img * per * n));
    int32_t *lab = malloc(sizeof(int32_t) * (size_t)(per * n));
    uint64_t s = 1234567;
    for (int64_t j = 0; j < img * per * n; j++) x[j] = cb_rng_uniform(&s);
    for (int64_t j = 0; j < per * n; j++) lab[j] = (int32_t)(cb_rng_lcg(&s) % (uint64_t)classes);
    cb_exec_opts eo;
    cb_exec_opts_default(&eo);
    eo.backend = backend;
    eo.precision = compute;
    eo.conv_algo = conv_algo;
    eo.train = true;
    eo.momentum = 0.9f;
    eo.lr = 0.05f;
    int64_t np = 0, np0 = 0;
    float *ref = single(spec, per * n, &eo, x, lab, (int)steps, &np);
    float *init = single(spec, per * n, &eo, x, lab, 0, &np0); // the weights before the steps
    CHECK(ref != NULL, "the 1-GPU reference failed");
    cb_net *nets[CB_DIST_MAX_GPUS];
    for (int r = 0; r < n; r++) {
        nets[r] = cb_net_load(spec, &err);
        if (nets[r]) cb_net_set_batch(nets[r], per, &err);
    }
    cb_dist_opts d = {.ngpus = n, .bucket_bytes = 4096, .overlap = true, .comm = true, .criterion = true, .update = true,
                      .grad_precision = grad, .warmup = 0, .iters = (int)steps, .x = x, .labels = lab};
    for (int r = 0; r < n; r++) d.devices[r] = r;
    cb_dist_result res = {0};
    float *got = malloc(sizeof(float) * (size_t)(np + 1));
    cb_status st = cb_dist_fullpass(nets, &eo, &d, &res, got, np, &err);
    CHECK(st == CB_OK, "%s", err.msg);
    if (st == CB_OK && ref && init && np0 == np) {
        double worst = 0, scale = 0, moved = 0;
        for (int64_t j = 0; j < np; j++) {
            double dd = fabs((double)got[j] - ref[j]);
            if (!(dd <= worst)) worst = dd;
            if (fabs(ref[j]) > scale) scale = fabs(ref[j]);
            if (init && fabs((double)ref[j] - init[j]) > moved) moved = fabs((double)ref[j] - init[j]);
        }
        printf("  %d GPU%s x batch %lld vs 1 GPU x %lld, %s %s%s%s, %s gradients: %lld parameters, %d buckets, largest difference %.3g "
               "(largest weight %.3g, largest change %.3g), between GPUs %.3g\n",
               n, n == 1 ? "" : "s", (long long)per, (long long)(per * n), backend, cb_precision_name(compute), conv_algo ? " " : "",
               conv_algo ? conv_algo : "", cb_precision_name(grad), (long long)np, res.buckets, worst, scale, moved, res.max_param_diff);
        if (compute != CB_PREC_FP32) { // tf32 products: the batch split's sums round differently, as bf16 gradients do
            CHECK(moved > 0 && worst <= moved / 32, "weights differ by %g, more than 1/32 of the largest change %g", worst, moved);
        } else if (grad == CB_PREC_BF16) {
            CHECK(moved > 0 && worst <= moved / 32, "weights differ by %g, more than 1/32 of the largest change %g", worst, moved);
            CHECK(worst > 0, "the weights equal fp32's exactly: were the gradients cast to bf16?");
        } else {
            CHECK(worst <= 1e-4 * (scale > 1 ? scale : 1), "weights differ by %g", worst);
            CHECK(moved > 1e-3, "the steps moved the weights (largest change %g)", moved);
        }
        CHECK(res.max_param_diff == 0, "the replicas' weights differ by %g", res.max_param_diff);
        CHECK(res.buckets > 1, "several buckets were planned (%d)", res.buckets);
    }
    for (int r = 0; r < n; r++) cb_net_free(nets[r]);
    free(got);
    free(ref);
    free(init);
    free(x);
    free(lab);
}

static void replicas(int n, cb_precision grad) { replicas_on(n, grad, "cudnn", CB_PREC_FP32, NULL); }

// whether this machine can run n replicas; else counts the case as skipped
static bool have_gpus(const char *name, int n) {
    if (cb_dist_have_nccl() && cb_dist_device_count() >= n) return true;
    printf("skip %s: %s\n", name, !cb_dist_have_nccl() ? "this build has no NCCL" : n == 1 ? "no GPU" : "fewer than 2 GPUs");
    skipped++;
    return false;
}

static void test_replicas(void) {
    if (!have_gpus("test_replicas", 2)) return;
    int gpus = cb_dist_device_count();
    replicas(gpus < 4 ? gpus : 4, CB_PREC_FP32);
}

// --grad-precision bf16: N replicas against 1 GPU with N times the batch
static void test_replicas_bf16(void) {
    if (!have_gpus("test_replicas_bf16", 2)) return;
    int gpus = cb_dist_device_count();
    replicas(gpus < 4 ? gpus : 4, CB_PREC_BF16);
}

// the own tensor-core kernels (igemm-tf32: over 48 KiB of shared memory a block) on every replica's
// GPU: the limit raised on each device, not only the first (until 2026-11-28 it was raised once per
// process; by CUDA's rules a second GPU's launches would then fail, never seen in a run), and the
// replicas against one GPU
static void test_replicas_own(void) {
    if (!have_gpus("test_replicas_own", 2)) return;
    int gpus = cb_dist_device_count();
    replicas_on(gpus < 4 ? gpus : 4, CB_PREC_FP32, "cuda", CB_PREC_TF32, "igemm-tf32");
}

// --grad-precision bf16 on one rank (fullpass --gpus 1, or one process of a launcher's): the
// casts and a one-rank all-reduce against the plain fp32 step
static void test_one_rank_bf16(void) {
    if (!have_gpus("test_one_rank_bf16", 1)) return;
    replicas(1, CB_PREC_BF16);
}

static void test_grad_precision(void) {
    cb_precision p = CB_PREC_TF32;
    CHECK(cb_grad_precision_parse("fp32", &p) && p == CB_PREC_FP32, "fp32");
    CHECK(cb_grad_precision_parse("bf16", &p) && p == CB_PREC_BF16, "bf16");
    const char *bad[] = {"tf32", "fp16", "BF16", "", "bf16 ", NULL};
    for (int k = 0; bad[k]; k++) CHECK(!cb_grad_precision_parse(bad[k], &p) && p == CB_PREC_BF16, "'%s' is refused, p untouched", bad[k]);
    CHECK(!cb_grad_precision_parse(NULL, &p), "NULL is refused");
    // a library caller's out-of-range type is refused before any GPU is touched
    cb_dist_opts d = {.ngpus = 1, .grad_precision = CB_PREC_TF32, .iters = 1};
    cb_dist_result res = {0};
    cb_error err = {0};
    cb_status st = cb_dist_fullpass(NULL, NULL, &d, &res, NULL, 0, &err);
    CHECK(st == (cb_dist_have_nccl() ? CB_STATUS_ARG : CB_STATUS_UNSUPPORTED), "tf32 gradients: %s", err.msg);
    if (cb_dist_have_nccl()) CHECK(strstr(err.msg, "--grad-precision") != NULL, "names the flag: %s", err.msg);
}

int main(void) {
    RUN(test_buckets);
    RUN(test_busbw);
    RUN(test_env);
    RUN(test_rendezvous);
    RUN(test_grad_precision);
    RUN(test_replicas);
    RUN(test_replicas_bf16);
    RUN(test_replicas_own);
    RUN(test_one_rank_bf16);
    printf("%d passed, %d failed, %d skipped\n", tests_passed, tests_failed, skipped);
    return tests_failed ? 1 : 0;
}
