// convbench fullpass NET --gpus N: data-parallel training steps on N GPUs of this machine with
// NCCL (src/dist/nccl.c), against 1 GPU measured in the same call. Weak scaling keeps --batch per
// GPU; strong scaling splits it over the GPUs. Per step: the slowest GPU's time with the
// all-reduces, the same steps without them (compute), the all-reduces' own time, the part of
// them the backward pass did not hide (exposed), images/s and the scaling efficiency.
#include "dist_common.h"
#include "run_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int one(const char *spec, long batch, const cb_exec_opts *eo, cb_dist_opts *d, cb_dist_result *res, int *rc) {
    cb_net *nets[CB_DIST_MAX_GPUS] = {0};
    for (int r = 0; r < d->ngpus; r++)
        if (!(nets[r] = cli_load_net(&cmd_fullpass, spec, batch, rc))) {
            for (int k = 0; k < r; k++) cb_net_free(nets[k]);
            return 0;
        }
    cb_error err = {0};
    cb_status st = cb_dist_fullpass(nets, eo, d, res, NULL, 0, &err);
    for (int r = 0; r < d->ngpus; r++) cb_net_free(nets[r]);
    if (st != CB_OK) {
        *rc = cli_fail(&cmd_fullpass, &err);
        return 0;
    }
    return 1;
}

// what both reports (one process, several) say of the run
static cb_report *dist_report(const char *name, const cb_exec_opts *eo, int gpus, long per, double bucket_mb, int buckets, bool overlap,
                              int64_t params, cb_precision grad) {
    cb_report *r = cb_report_new("fullpass");
    cb_report_meta_str(r, "network", name);
    cb_report_meta_str(r, "backend", eo->backend);
    cb_report_meta_str(r, "precision", cb_precision_name(eo->precision));
    cb_report_meta_str(r, "layout", eo->layout == CB_LAYOUT_NHWC ? "nhwc" : "nchw");
    cb_report_meta_num(r, "gpus", gpus);
    cb_report_meta_num(r, "batch_per_gpu", (double)per);
    cb_report_meta_num(r, "global_batch", (double)per * gpus);
    cb_report_meta_num(r, "bucket_mb", bucket_mb);
    cb_report_meta_num(r, "buckets", buckets);
    cb_report_meta_bool(r, "overlap", overlap);
    cb_report_meta_str(r, "grad_precision", cb_precision_name(grad));
    cb_report_meta_num(r, "params", (double)params);
    return r;
}

int fullpass_dist(const char *spec, const run_opts *ro, const cb_exec_opts *eo_in, const cli_out *o, cb_format fmt, int n, const int *dev,
                  const char *scaling, double bucket_mb, bool overlap, bool update, bool criterion, cb_precision grad) {
    bool strong = !strcmp(scaling, "strong");
    if (!strong && strcmp(scaling, "weak")) return cli_usage_error(&cmd_fullpass, "--scaling: '%s' is not weak or strong", scaling);
    if (!(bucket_mb >= 0 && bucket_mb <= 4096)) return cli_usage_error(&cmd_fullpass, "--bucket-mb: must be in [0, 4096]");
    cb_exec_opts eo = *eo_in;
    if (!cb_backend_caps_of(eo.backend) || !cb_backend_caps_of(eo.backend)->device)
        return cli_usage_error(&cmd_fullpass, "--gpus: backend '%s' does not run on a GPU (cuda, cudnn or auto)", eo.backend);
    eo.train = true;
    int rc = 0;
    cb_net *probe = cli_load_net(&cmd_fullpass, spec, ro->batch, &rc);
    if (!probe) return rc;
    long batch = (long)cb_net_batch(probe); // per GPU (weak) or in all (strong)
    char name[160];
    snprintf(name, sizeof name, "%s", probe->name);
    cb_net_free(probe);
    if (strong && batch % n) return cli_usage_error(&cmd_fullpass, "--scaling strong: batch %ld does not split over %d GPUs", batch, n);
    long per = strong ? batch / n : batch;
    cb_dist_opts d = {.bucket_bytes = (size_t)(bucket_mb * 1048576.0), .overlap = overlap, .comm = true, .criterion = criterion,
                      .update = update, .grad_precision = grad, .warmup = (int)ro->warmup, .iters = (int)ro->iters};
    // 1 GPU first (the whole batch under strong scaling), then N, in the same call
    cb_dist_result res[2] = {{0}};
    int gpus[2] = {1, n};
    long batches[2] = {strong ? batch : per, per};
    for (int k = 0; k < 2; k++) {
        if (k == 1 && n == 1) {
            res[1] = res[0];
            break;
        }
        d.ngpus = gpus[k];
        memcpy(d.devices, dev, sizeof(int) * (size_t)gpus[k]);
        d.comm = true;
        cli_progress(o, "fullpass: %s on %d GPU%s, batch %ld per GPU", name, gpus[k], gpus[k] == 1 ? "" : "s", batches[k]);
        if (!one(spec, batches[k], &eo, &d, &res[k], &rc)) return rc;
    }
    cb_report *r = dist_report(name, &eo, n, per, bucket_mb, res[1].buckets, overlap, res[1].params, grad);
    char list[128] = "";
    for (int k = 0; k < n; k++) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", k ? "," : "", dev[k]);
    cb_report_meta_str(r, "devices", list);
    cb_report_meta_str(r, "scaling", strong ? "strong" : "weak");
    cb_report_meta_bool(r, "update", update);
    cb_report_meta_str(r, "criterion", criterion ? "softmax cross-entropy" : "no");
    cb_report_meta_bool(r, "data_grad", !eo.no_data_grad);
    cb_report_meta_num(r, "warmup", (double)ro->warmup);
    cb_report_meta_num(r, "iterations", (double)ro->iters);
    cb_report_meta_num(r, "max_param_diff", res[1].max_param_diff);
    const char *cols[] = {"gpus", "batch_per_gpu", "step_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "images_per_s", "scaling_eff_pct"};
    cb_table *t = cb_report_table(r, "scaling", 8, cols);
    double ips1 = res[0].step_ms > 0 ? 1e3 * (double)batches[0] / res[0].step_ms : 0;
    for (int k = 0; k < (n == 1 ? 1 : 2); k++) {
        double ips = res[k].step_ms > 0 ? 1e3 * (double)batches[k] * gpus[k] / res[k].step_ms : 0;
        double exposed = res[k].step_ms - res[k].compute_ms;
        cb_table_row(t);
        cb_table_int(t, gpus[k]);
        cb_table_int(t, batches[k]);
        cb_table_num(t, res[k].step_ms, 3);
        cb_table_num(t, res[k].compute_ms, 3);
        cb_table_num(t, res[k].comm_ms, 3);
        cb_table_num(t, exposed > 0 ? exposed : 0, 3);
        cb_table_num(t, ips, 1);
        cb_table_num(t, ips1 > 0 ? 100 * ips / (ips1 * gpus[k]) : 0, 1); // throughput against N times one GPU's
    }
    cb_report_meta_num(r, "images_per_s", n == 1 || res[1].step_ms <= 0 ? ips1 : 1e3 * (double)per * n / res[1].step_ms);
    cb_report_note(r, "%s scaling: step = the slowest GPU's (median of %ld steps after %ld untimed); compute = the same steps without the "
                      "all-reduce; comm = the all-reduces' device time (GPU 0, with the bf16 casts under --grad-precision bf16); exposed = step - compute; efficiency against the 1-GPU row "
                      "(same call)%s",
                   strong ? "strong" : "weak", ro->iters, ro->warmup, strong ? ", which runs the whole batch" : "");
    cb_report_note(r, "gradients averaged with NCCL (ncclAvg, %s) in %d bucket%s of about %.0f MiB%s; parameters broadcast from GPU 0 first; "
                      "largest parameter difference between GPUs after the steps: %g",
                   grad == CB_PREC_BF16 ? "bf16: fp32 gradients cast to bf16 and back, the update in fp32" : "fp32", res[1].buckets,
                   res[1].buckets == 1 ? "" : "s", bucket_mb,
                   overlap ? ", each started as soon as the backward pass completes it" : ", after the backward pass", res[1].max_param_diff);
    rc = cli_emit(&cmd_fullpass, r, o, fmt);
    cb_report_free(r);
    if (rc == 0 && res[1].max_param_diff != 0) {
        fprintf(stderr, "convbench fullpass: the GPUs' parameters differ after the steps (%g): the all-reduce is wrong\n", res[1].max_param_diff);
        return 1;
    }
    return rc;
}

// One process of a multi-process run (RANK / WORLD_SIZE and the like set by the launcher): this
// process trains on GPU LOCAL_RANK as rank RANK; rank 0 passes NCCL's id through --rendezvous and
// prints the report (weak scaling: --batch per process; no 1-GPU row, which needs one process alone).
int fullpass_dist_procs(const char *spec, const run_opts *ro, const cb_exec_opts *eo_in, const cli_out *o, cb_format fmt, const cb_dist_env *env,
                        const char *rendezvous, double bucket_mb, bool overlap, bool update, bool criterion, cb_precision grad) {
    if (!cb_dist_have_nccl()) return cli_usage_error(&cmd_fullpass, "%s: a multi-process run needs NCCL, which this build lacks", env->source);
    if (!(bucket_mb >= 0 && bucket_mb <= 4096)) return cli_usage_error(&cmd_fullpass, "--bucket-mb: must be in [0, 4096]");
    cb_exec_opts eo = *eo_in;
    if (!cb_backend_caps_of(eo.backend) || !cb_backend_caps_of(eo.backend)->device)
        return cli_usage_error(&cmd_fullpass, "%s: backend '%s' does not run on a GPU (cuda, cudnn or auto)", env->source, eo.backend);
    int have = cb_dist_device_count();
    if (have < 1) return cli_usage_error(&cmd_fullpass, "%s: rank %d finds no GPU", env->source, env->rank);
    eo.train = true;
    unsigned char id[CB_DIST_ID_BYTES] = {0};
    cb_error err = {0};
    if (env->rank == 0 && cb_dist_unique_id(id, &err) != CB_OK) return cli_fail(&cmd_fullpass, &err);
    cli_progress(o, "fullpass: rank %d of %d (%s), GPU %d: rendezvous %s", env->rank, env->world, env->source, env->local_rank % have,
                 rendezvous ? rendezvous : "(none)");
    if (cb_rendezvous(rendezvous, env->rank, env->world, id, sizeof id, 300, &err) != CB_OK) return cli_fail(&cmd_fullpass, &err);
    int rc = 0;
    cb_net *net = cli_load_net(&cmd_fullpass, spec, ro->batch, &rc);
    if (!net) return rc;
    long per = (long)cb_net_batch(net);
    char name[160];
    snprintf(name, sizeof name, "%s", net->name);
    cb_dist_opts d = {.ngpus = 1, .devices = {env->local_rank % have}, .bucket_bytes = (size_t)(bucket_mb * 1048576.0), .overlap = overlap,
                      .comm = true, .criterion = criterion, .update = update, .grad_precision = grad, .warmup = (int)ro->warmup,
                      .iters = (int)ro->iters,
                      .nccl_id = id, .world = env->world, .rank_base = env->rank};
    cb_dist_result res = {0};
    cb_status st = cb_dist_fullpass(&net, &eo, &d, &res, NULL, 0, &err);
    cb_net_free(net);
    if (st != CB_OK) return cli_fail(&cmd_fullpass, &err);
    if (env->rank != 0) return 0;
    cb_report *r = dist_report(name, &eo, env->world, per, bucket_mb, res.buckets, overlap, res.params, grad);
    cb_report_meta_str(r, "launcher", env->source);
    cb_report_meta_str(r, "rendezvous", rendezvous);
    cb_report_meta_str(r, "scaling", "weak");
    const char *cols[] = {"gpus", "batch_per_gpu", "step_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "images_per_s"};
    cb_table *t = cb_report_table(r, "scaling", 7, cols);
    double exposed = res.step_ms - res.compute_ms;
    cb_table_row(t);
    cb_table_int(t, env->world);
    cb_table_int(t, per);
    cb_table_num(t, res.step_ms, 3);
    cb_table_num(t, res.compute_ms, 3);
    cb_table_num(t, res.comm_ms, 3);
    cb_table_num(t, exposed > 0 ? exposed : 0, 3);
    cb_table_num(t, res.step_ms > 0 ? 1e3 * (double)per * env->world / res.step_ms : 0, 1);
    cb_report_meta_num(r, "images_per_s", res.step_ms > 0 ? 1e3 * (double)per * env->world / res.step_ms : 0);
    cb_report_note(r, "one process per GPU (%s); rank 0's view: its step (median of %ld), its compute alone, its all-reduces; "
                      "efficiency needs the 1-GPU step: run fullpass --gpus 1 apart",
                   env->source, ro->iters);
    rc = cli_emit(&cmd_fullpass, r, o, fmt);
    cb_report_free(r);
    return rc;
}
