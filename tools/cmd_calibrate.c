// convbench calibrate: measure a machine and save a device entry for the model.
//   --backend cpu: this CPU's GEMM rate (cblas_sgemm, fp32), copy bandwidth (memcpy, read + write
//     counted) and the fraction of peak the CPU backend's convolution (im2col + GEMM) reaches per
//     direction on real layer shapes.
//   --backend cudnn|cuda: on the GPU (src/cudnn/calibrate.c), cuBLAS GEMM rates per precision, the
//     memory-bound passes, the launch latency, and every convolution algorithm of the backend on
//     the calibration grid; each algorithm's time is fitted (src/model/fit.c) and the entry keeps
//     the samples, so --refit FILE redoes the fit without a GPU.
//   --allreduce FILE (a result of `convbench allreduce --format json`) or --allreduce-gpus N (that
//     sweep run here): the interconnect fitted to it is stored in the entry, the link `simulate
//     --calibration` takes when it names none.
#include "model_cli.h"
#include "core/json.h"
#include "dist/dist.h"
#include "core/net.h"
#include "bench/stats.h"
#include "cpu/kernels.h"
#ifdef CB_HAVE_CUDA
#include "cudnn/calibrate.h"
#endif

#include <cblas.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *alloc_fill(size_t n, unsigned seed) {
    float *p = malloc(n * sizeof(float));
    if (!p) return NULL;
    for (size_t i = 0; i < n; i++) p[i] = (float)((i * 2654435761u + seed) % 1000) / 1000.0f - 0.5f;
    return p;
}

static double gemm_rate(int n, int reps) {
    float *a = alloc_fill((size_t)n * n, 1), *b = alloc_fill((size_t)n * n, 2), *c = alloc_fill((size_t)n * n, 3);
    if (!a || !b || !c) abort();
    double t[16];
    for (int i = 0; i <= reps; i++) { // the first is a warm-up
        double t0 = cb_now_ms();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        if (i) t[i - 1] = cb_now_ms() - t0;
    }
    free(a), free(b), free(c);
    return 2.0 * n * n * (double)n / (cb_stats_of(t, reps).median / 1e3);
}

static double copy_bw(size_t bytes, int reps) {
    char *s = malloc(bytes), *d = malloc(bytes);
    if (!s || !d) abort();
    memset(s, 1, bytes);
    memset(d, 2, bytes);
    double t[16];
    for (int i = 0; i <= reps; i++) {
        double t0 = cb_now_ms();
        memcpy(d, s, bytes);
        if (i) t[i - 1] = cb_now_ms() - t0;
    }
    volatile char sink = d[bytes / 2];
    (void)sink;
    free(s), free(d);
    return 2.0 * (double)bytes / (cb_stats_of(t, reps).median / 1e3); // read + write
}

typedef struct shape { const char *name; int n, c, h, w, k, r, s, stride, pad; } shape;

// real layers: AlexNet conv1, conv2, conv3; VGG-16 conv3-2; ResNet-50 1x1 expansion
static const shape SHAPES[] = {
    {"alexnet conv1", 8, 3, 224, 224, 64, 11, 11, 4, 2},
    {"alexnet conv2", 8, 64, 27, 27, 192, 5, 5, 1, 2},
    {"alexnet conv3", 8, 192, 13, 13, 384, 3, 3, 1, 1},
    {"vgg16 conv3-2", 2, 256, 56, 56, 256, 3, 3, 1, 1},
    {"resnet50 1x1", 8, 64, 56, 56, 256, 1, 1, 1, 0},
};

// ms of one direction of the CPU backend's convolution: median of reps after a warm-up
static double conv_ms(const cb_conv_params *p, cb_phase ph, int reps) {
    size_t nx = (size_t)p->n * p->c * p->h * p->w, nw = (size_t)p->k * p->c * p->r * p->s,
           ny = (size_t)p->n * p->k * p->p * p->q;
    float *x = alloc_fill(nx, 1), *w = alloc_fill(nw, 2), *y = alloc_fill(ny, 3), *b = alloc_fill((size_t)p->k, 4);
    void *ws = malloc(cb_cpu_conv_workspace(p) + 64);
    if (!x || !w || !y || !b || !ws) abort();
    double t[16];
    for (int i = 0; i <= reps; i++) {
        double t0 = cb_now_ms();
        if (ph == CB_PHASE_FORWARD) cb_cpu_conv_forward(p, x, w, b, y, ws);
        else if (ph == CB_PHASE_BWD_DATA) cb_cpu_conv_backward_data(p, y, w, x, ws);
        else cb_cpu_conv_backward_filter(p, x, y, w, b, ws);
        if (i) t[i - 1] = cb_now_ms() - t0;
    }
    free(x), free(w), free(y), free(b), free(ws);
    return cb_stats_of(t, reps).median;
}

// --allreduce FILE or --allreduce-gpus N: the interconnect to store, fitted as simulate
// --interconnect fits it. Returns -1 (link->bw 0 when neither is named) or an exit status.
static int measure_link(const char *file, long gpus, const cli_out *o, cb_link *link) {
    memset(link, 0, sizeof *link);
    cb_error err = {0};
    if (file && gpus != CLI_UNSET) return cli_usage_error(&cmd_calibrate, "--allreduce and --allreduce-gpus: name one");
    if (file) return cb_link_from_allreduce(file, link, &err) == CB_OK ? -1 : cli_fail(&cmd_calibrate, &err);
    if (gpus == CLI_UNSET) return -1;
    int have = cb_dist_device_count();
    if (!cb_dist_have_nccl()) return cli_usage_error(&cmd_calibrate, "--allreduce-gpus: this build has no NCCL (CUDA with nccl.h is needed)");
    if (gpus < 2 || gpus > CB_DIST_MAX_GPUS) return cli_usage_error(&cmd_calibrate, "--allreduce-gpus: %ld is not in [2, %d]", gpus, CB_DIST_MAX_GPUS);
    if (gpus > have) return cli_usage_error(&cmd_calibrate, "--allreduce-gpus %ld: this machine has %d GPU%s", gpus, have, have == 1 ? "" : "s");
    // allreduce's default sweep: fp32, 8 B to 256 MiB, doubling
    int n = (int)gpus, dev[CB_DIST_MAX_GPUS];
    size_t sizes[32];
    double bytes[32], sec[32];
    for (int k = 0; k < n; k++) dev[k] = k;
    int ns = cb_allreduce_sizes(8, 268435456.0, 4, sizes, 32);
    for (int k = 0; k < ns; k++) bytes[k] = (double)sizes[k];
    cli_progress(o, "calibrate: all-reduce on %d GPUs, %d sizes from 8 B to 256 MiB", n, ns);
    if (cb_dist_allreduce_bench(n, dev, sizes, ns, false, 5, 20, sec, &err) != CB_OK) return cli_fail(&cmd_calibrate, &err);
    char source[256];
    snprintf(source, sizeof source, "fitted to %d all-reduce sizes on %d GPUs, calibrate --allreduce-gpus %d (commit %s)", ns, n, n,
             cb_env_commit());
    return cb_link_fit(bytes, sec, ns, n, "--allreduce-gpus", source, link, &err) == CB_OK ? -1 : cli_fail(&cmd_calibrate, &err);
}

// the interconnect the entry stores, in the report
static void link_report(cb_report *r, const cb_device *d) {
    const cb_link *l = &d->interconnect;
    if (!(l->bw > 0)) return;
    cb_report_meta_num(r, "interconnect_gbs", l->bw / 1e9);
    cb_report_meta_num(r, "interconnect_latency_us", l->latency_s * 1e6);
    cb_report_note(r, "interconnect %s stored: %.3g GB/s per direction, %.3g us latency (%s); simulate --calibration takes it", l->name,
                   l->bw / 1e9, l->latency_s * 1e6, l->source);
}

// writes the entry (plus the samples of a GPU calibration) whole or not at all
static int save_entry(const char *save, const cb_device *d, const cb_cal_sample *smp, int ns, char **text_out) {
    *text_out = cb_device_entry_text(d, smp, ns);
    if (!save) return 0;
    cb_error err = {0};
    return cb_write_whole(save, *text_out, strlen(*text_out), &err) == CB_OK ? 0 : cli_fail(&cmd_calibrate, &err);
}

// the report of a GPU calibration: the fitted algorithms, the passes, the GEMM ceilings
static void gpu_report(cb_report *r, const cb_device *d) {
    const char *phn[] = {"forward", "bwd_data", "bwd_filter"};
    cb_report_meta_num(r, "sms", d->cal.sms);
    cb_report_meta_num(r, "launch_us", d->cal.launch_s * 1e6);
    if (d->cal.host_call_s > 0) cb_report_meta_num(r, "host_call_us", d->cal.host_call_s * 1e6);
    if (d->cal.host_graph_call_s > 0) cb_report_meta_num(r, "host_graph_call_us", d->cal.host_graph_call_s * 1e6);
    if (d->cal.host_engine_call_s > 0) cb_report_meta_num(r, "host_engine_call_us", d->cal.host_engine_call_s * 1e6);
    cb_report_meta_str(r, "cache", d->cal.cache_step ? "step (each call also timed after an L2 flush, the larger kept)" : "hot (back to back)");
    const char *gc[] = {"precision", "peak_tflops", "measured_tflops", "fraction_of_peak"};
    cb_table *g = cb_report_table(r, "gemm", 4, gc);
    for (int p = 0; p < CB_PREC_COUNT; p++) {
        if (!(d->meas_gemm[p] > 0)) continue;
        cb_table_row(g);
        cb_table_str(g, cb_precision_name((cb_precision)p));
        cb_table_num(g, d->peak[p] / 1e12, 1);
        cb_table_num(g, d->meas_gemm[p] / 1e12, 1);
        cb_table_num(g, d->peak[p] > 0 ? d->meas_gemm[p] / d->peak[p] : 0, 3);
    }
    const char *ac[] = {"algorithm", "direction", "precision", "family", "samples", "fraction_of_peak", "rate_tflops",
                        "bw_gbs", "overhead_us", "fit_median_pct", "fit_p90_pct"};
    cb_table *t = cb_report_table(r, "algorithms", 11, ac);
    for (int i = 0; i < d->cal.nalgo; i++) {
        const cb_cal_algo *a = &d->cal.algo[i];
        cb_table_row(t);
        cb_table_str(t, a->name);
        cb_table_str(t, phn[a->phase]);
        cb_table_str(t, cb_precision_name(a->prec));
        cb_table_str(t, a->fc ? "fc gemm" : cb_algo_name(a->form.family));
        cb_table_int(t, a->n);
        cb_table_num(t, a->eff, 3);
        cb_table_num(t, a->rate / 1e12, 2);
        if (a->bw > 0) cb_table_num(t, a->bw / 1e9, 0);
        else cb_table_null(t);
        cb_table_num(t, a->overhead_s * 1e6, 1);
        cb_table_num(t, a->err_median_pct, 1);
        cb_table_num(t, a->err_p90_pct, 1);
    }
    const char *oc[] = {"pass",      "storage",  "samples",       "bw_gbs",           "overhead_us", "plane_ns",
                        "window_ps", "tiled_ps", "tiled_line_ps", "spill_ps_per_byte", "fit_median_pct"};
    cb_table *ot = cb_report_table(r, "passes", 11, oc);
    for (int m = 0; m < 2 * CB_MOP_COUNT; m++) { // fp32 NCHW, then bf16 NHWC (bw per fp32 byte of the tensor)
        const cb_cal_mop *o = m < CB_MOP_COUNT ? &d->cal.mop[m] : &d->cal.mop16[m - CB_MOP_COUNT];
        if (o->n <= 0) continue;
        cb_table_row(ot);
        cb_table_str(ot, cb_mop_name((cb_mop)(m % CB_MOP_COUNT)));
        cb_table_str(ot, m < CB_MOP_COUNT ? "fp32 NCHW" : "bf16 NHWC");
        cb_table_int(ot, o->n);
        cb_table_num(ot, o->bw / 1e9, 0);
        cb_table_num(ot, o->overhead_s * 1e6, 1);
        cb_table_num(ot, o->plane_s * 1e9, 3);
        cb_table_num(ot, o->win_s * 1e12, 3);
        cb_table_num(ot, o->tile_s * 1e12, 3);
        cb_table_num(ot, o->tile_line_s * 1e12, 3); // (x the line fraction: cb_mop_tiled_line)
        cb_table_num(ot, o->spill_s * 1e12, 3);
        cb_table_num(ot, o->err_median_pct, 1);
    }
    cb_report_note(r, "per algorithm: time = overhead + FLOPs / (rate x wave utilisation) + bytes / bw, fitted to minimise the "
                      "relative error on the calibration shapes (src/model/calshapes.c); fraction_of_peak = rate / datasheet peak");
}

// the ceilings from the samples: best square GEMM per precision
static void gemm_ceilings(const cb_cal_sample *s, int n, cb_device *d) {
    memset(d->meas_gemm, 0, sizeof d->meas_gemm);
    for (int i = 0; i < n; i++) {
        const cb_cal_sample *q = &s[i];
        if (q->kind != CB_SAMPLE_FC || !(q->ms > 0) || q->p.n != q->p.c || q->p.c != q->p.k) continue;
        double rate = 2.0 * q->p.n * q->p.c * q->p.k / (q->ms / 1e3);
        if (rate > d->meas_gemm[q->prec]) d->meas_gemm[q->prec] = rate;
    }
}

static int finish_gpu(const char *save, cb_device *d, const cb_cal_sample *s, int ns, cli_out *o, cb_format fmt, cb_report *r) {
    cb_error err = {0};
    d->cal.wave_fill = 1; // (a fit now counts the tensor-core tiles' padding: cb_conv_fill; --refit of an older file too)
    d->cal.pool_lines = 1; // (and the bf16 NHWC tiled pools' line term: cb_mop_tiled_line)
    if (cb_cal_fit(s, ns, d, &err) != CB_OK) {
        cb_report_free(r);
        return cli_fail(&cmd_calibrate, &err);
    }
    gemm_ceilings(s, ns, d);
    if (d->cal.mop[CB_MOP_COPY].bw > 0) d->meas_copy_bw = d->cal.mop[CB_MOP_COPY].bw;
    if (d->cal.launch_s > 0) d->launch_s = d->cal.launch_s;
    gpu_report(r, d);
    link_report(r, d);
    char *text = NULL;
    int rc = save_entry(save, d, s, ns, &text);
    if (rc == 0 && save) cb_report_note(r, "device entry saved to %s (predict --calibration %s)", save, save);
    if (rc == 0) rc = cli_emit(&cmd_calibrate, r, o, fmt);
    free(text);
    cb_report_free(r);
    return rc;
}

// --refit F1,F2,...: the fit again on the samples saved GPU calibrations hold, together (the
// first file gives the device; sections or shape ranges measured apart are merged). No GPU needed.
static int run_refit(const char *paths, const char *save, const cb_link *link, cli_out *o, cb_format fmt) {
    cb_error err = {0};
    char list[4096];
    snprintf(list, sizeof list, "%s", paths);
    cb_device d;
    cb_cal_sample *all = NULL;
    int nall = 0, nfiles = 0, rc = -1;
    double launch = 0, host_call = 0, host_graph = 0, host_engine = 0;
    bool stream = true, held = true, fused = true, step = true, concat_relu = true; // every file's samples timed as a pass sees them; its epilogue fused; the step's cache
    for (char *save_ptr = NULL, *path = strtok_r(list, ",", &save_ptr); path && rc < 0; path = strtok_r(NULL, ",", &save_ptr)) {
        cJSON *root = cb_json_read(path, &err);
        if (!root) {
            rc = cli_fail(&cmd_calibrate, &err);
            break;
        }
        cb_device di;
        cb_cal_sample *s = NULL;
        int ns = 0;
        if (cb_device_from_json(root, &di, path, &err) != CB_OK ||
            cb_cal_samples_from_json(cJSON_GetObjectItemCaseSensitive(root, "samples"), &s, &ns, path, &err) != CB_OK) {
            cJSON_Delete(root);
            rc = cli_fail(&cmd_calibrate, &err);
            break;
        }
        cJSON_Delete(root);
        if (!ns || !di.cal.backend[0]) {
            free(s);
            rc = cli_usage_error(&cmd_calibrate, "--refit: '%s' holds no GPU calibration samples (save one with calibrate --backend cudnn --save)", path);
            break;
        }
        if (!nfiles++) d = di;
        if (di.cal.launch_s > launch) launch = di.cal.launch_s;
        if (di.cal.host_call_s > host_call) host_call = di.cal.host_call_s; // (0 in files calibrated before it)
        // a graph execution's host time: the least of the parts' (each measures it on its first shape
        // with a plan; more is a larger shape's GPU catching up, not the host)
        if (di.cal.host_graph_call_s > 0 && (host_graph == 0 || di.cal.host_graph_call_s < host_graph)) host_graph = di.cal.host_graph_call_s;
        if (di.cal.host_engine_call_s > host_engine) host_engine = di.cal.host_engine_call_s; // (the part with the passes)
        stream &= di.cal.stream_timed;
        held &= di.cal.held_timed;
        fused &= di.cal.act_bias_fused;
        concat_relu &= di.cal.concat_relu;
        step &= di.cal.cache_step;
        all = realloc(all, sizeof *all * (size_t)(nall + ns));
        if (!all) abort();
        memcpy(all + nall, s, sizeof *s * (size_t)ns);
        nall += ns;
        free(s);
    }
    if (rc >= 0) {
        free(all);
        return rc;
    }
    if (!nfiles) return cli_usage_error(&cmd_calibrate, "--refit: no file named");
    model_cli_fill_l2(NULL, &d);
    d.cal.launch_s = launch;
    d.cal.host_call_s = host_call;
    d.cal.host_graph_call_s = host_graph;
    d.cal.host_engine_call_s = host_engine;
    d.cal.stream_timed = stream;
    d.cal.held_timed = held;
    d.cal.act_bias_fused = fused;
    d.cal.concat_relu = concat_relu;
    d.cal.cache_step = step;
    if (link->bw > 0) d.interconnect = *link; // else the first file's, if it stores one
    cb_report *r = cb_report_new("calibrate");
    cb_report_meta_str(r, "backend", d.cal.backend);
    cb_report_meta_str(r, "refit", paths);
    cb_report_meta_num(r, "samples", nall);
    rc = finish_gpu(save, &d, all, nall, o, fmt, r);
    free(all);
    return rc;
}

#ifdef CB_HAVE_CUDA
// the database entry whose name the GPU's name contains ("NVIDIA H200" -> h200)
static const cb_device *guess_base(const cb_devdb *db, const char *gpu) {
    char low[128];
    size_t i = 0;
    for (; gpu[i] && i + 1 < sizeof low; i++) low[i] = (char)(gpu[i] >= 'A' && gpu[i] <= 'Z' ? gpu[i] + 32 : gpu[i]);
    low[i] = 0;
    const cb_device *best = NULL;
    for (int k = 0; k < db->ndev; k++)
        if (!strcmp(db->dev[k].kind, "gpu") && strstr(low, db->dev[k].name) &&
            (!best || strlen(db->dev[k].name) > strlen(best->name)))
            best = &db->dev[k];
    return best;
}
#endif

#ifdef CB_HAVE_CUDA
static void gpu_progress(void *ctx, const char *msg) { cli_progress(ctx, "%s", msg); }

// The engine's host time per call as a training step issues them: a small network of the usual
// layers (3x3 and 1x1 convolutions with bias and ReLU, channels 8 apart or not, a residual sum,
// pooling, an FC head) at batch 1 on backend's storage, so that every call's GPU work is a few
// microseconds. Each pass's issuing is timed on the host from an idle GPU to the return of its
// last call, without a sync between, and divided by the calls the model counts for it
// (cb_predict_layer_calls). That holds what the back-to-back cuDNN calls of host_call_s leave out:
// the engine's own work between calls (descriptors, choices, weight copies' bookkeeping, the
// storage's padded copies). Seconds, the median over reps steps; -1 where the network does not run.
// Recorded beside host_call_s, not priced (src/model/predict_cal.c, cb_cal_host_call_s says why).
// (The four batch-1 random networks of the 2026-11-28 H200 profiles took 1.6-2.0x their calls x
// host_call_s a step, and the model put them 14-32% short.)
static const char HOST_NET[] =
    "{\"name\": \"calibrate: host time per call\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [1, 16, 16, 16]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 16, 24], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"c2\": {\"parents\": [\"c1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 24, 37], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"c3\": {\"parents\": [\"c2\"], \"type\": \"Convolution\", \"filter\": [3, 3, 37, 24], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
    "\"sum\": {\"parents\": [\"c3\", \"c1\"], \"type\": \"Elementwise\", \"operation\": \"sum\", \"activation_fn\": \"relu\"},"
    "\"pool1\": {\"parents\": [\"sum\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"},"
    "\"c4\": {\"parents\": [\"pool1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 24, 32], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"c5\": {\"parents\": [\"c4\"], \"type\": \"Convolution\", \"filter\": [1, 1, 32, 32], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"c6\": {\"parents\": [\"c5\"], \"type\": \"Convolution\", \"filter\": [3, 3, 32, 48], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"pool2\": {\"parents\": [\"c6\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"},"
    "\"fc\": {\"parents\": [\"pool2\"], \"type\": \"InnerProduct\", \"num_outputs\": 10},"
    "\"softmax\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 10}}}";

static void exec_sync(cb_exec *e) { // (a timer stopped waits for the stream)
    cb_exec_timer_start(e);
    (void)cb_exec_timer_stop(e);
}

static double engine_host_call_s(const cb_device *d, const char *backend, cb_precision prec, int reps, cli_out *o) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(HOST_NET, "calibrate", &err);
    if (!net) return -1;
    cb_exec_opts eo;
    cb_exec_opts_default(&eo);
    eo.backend = backend, eo.precision = prec, eo.layout = prec == CB_PREC_BF16 ? CB_LAYOUT_NHWC : CB_LAYOUT_NCHW;
    eo.train = true, eo.no_data_grad = true;
    cb_exec *e = cb_exec_create(net, &eo, &err);
    double s = -1;
    if (e) {
        cb_model_opts mo = {prec, (double)eo.workspace_limit, false, eo.layout, false, false};
        int calls = 0;
        for (int i = 1; i < net->nlayers; i++)
            for (int p = 0; p < CB_PHASE_COUNT; p++) calls += cb_predict_layer_calls(d, net, i, (cb_phase)p, &mo);
        double t[32], loss = 0;
        int n = reps < 3 ? 3 : reps > 32 ? 32 : reps;
        bool ok = calls > 0;
        for (int r = -3; r < n && ok; r++) { // (three warm-up steps)
            exec_sync(e);
            double t0 = cb_now_ms();
            ok &= cb_exec_forward(e, true, NULL) == CB_OK;
            double t1 = cb_now_ms();
            ok &= cb_exec_criterion_forward(e, &loss, NULL) == CB_OK && cb_exec_criterion_backward(e, NULL) == CB_OK;
            exec_sync(e);
            double t2 = cb_now_ms();
            ok &= cb_exec_backward(e, NULL) == CB_OK;
            double t3 = cb_now_ms();
            ok &= cb_exec_update(e, NULL) == CB_OK;
            if (r >= 0) t[r] = (t1 - t0 + t3 - t2) / 1e3 / calls;
        }
        exec_sync(e);
        if (ok) {
            s = cb_stats_of(t, n).median;
            cli_progress(o, "calibrate: the engine's host time per call %.2f us (%d calls a step, %s)", s * 1e6, calls, cb_precision_name(prec));
        } else cli_progress(o, "calibrate: the engine's host time per call: a step of its network failed (not recorded)");
        cb_exec_destroy(e);
    } else cli_progress(o, "calibrate: the engine's host time per call: its network did not plan (%s; not recorded)", err.msg);
    cb_net_free(net);
    return s;
}
#endif

typedef struct gpu_args {
    const char *backend, *base, *db_path, *precs, *save;
    long reps, ws_mb;
    cb_link link;                       // the interconnect to store (bw 0: none)
    unsigned sections;                  // CB_GPU_CAL_* bits (0 = all)
    int shape_lo, shape_hi;
    const cb_conv_params *shapes;       // --shapes-from's convolutions (nshapes), instead of the grid
    int nshapes;
    bool verbose, cache_hot, held;
} gpu_args;

enum { SECTION_MOPS = 1, SECTION_GEMM = 2, SECTION_CONV = 4 }; // as CB_GPU_CAL_* (src/cudnn/calibrate.h)

// --sections and --shapes, checked in every build
static int parse_gpu_args(const char *sections, const char *shapes, gpu_args *ga) {
    ga->shape_lo = 0, ga->shape_hi = -1;
    if (sections) {
        char sl[128];
        snprintf(sl, sizeof sl, "%s", sections);
        for (char *sp = NULL, *tok = strtok_r(sl, ",", &sp); tok; tok = strtok_r(NULL, ",", &sp)) {
            if (!strcmp(tok, "mops")) ga->sections |= SECTION_MOPS;
            else if (!strcmp(tok, "gemm")) ga->sections |= SECTION_GEMM;
            else if (!strcmp(tok, "conv")) ga->sections |= SECTION_CONV;
            else return cli_usage_error(&cmd_calibrate, "--sections: '%s' is not mops, gemm or conv", tok);
        }
    }
    if (shapes) {
        char *end;
        long lo = strtol(shapes, &end, 10), hi = lo;
        if (*end == '-') hi = strtol(end + 1, &end, 10);
        if (*end || end == shapes || lo < 0 || hi < lo) return cli_usage_error(&cmd_calibrate, "--shapes: '%s' is not A or A-B (grid indices)", shapes);
        ga->shape_lo = (int)lo, ga->shape_hi = (int)hi;
    }
    return -1;
}

// --shapes-from F1,F2 (repeatable): the convolutions of these networks (files or built-in names)
// that calibrate measures as they are (cb_cal_net_conv_shapes), into *out (malloc'd); -1 when done
static int shapes_from(const cli_list *nets, cb_conv_params **out, int *n) {
    *out = cb_xcalloc(CB_CAL_MAX_NET_SHAPES, sizeof **out), *n = 0;
    int rc = -1;
    for (int j = 0; j < nets->n && rc < 0; j++)
        for (const char *f = nets->v[j]; *f && rc < 0;) {
            size_t len = strcspn(f, ",");
            char path[2048];
            snprintf(path, sizeof path, "%.*s", (int)len, f);
            f += len + (f[len] == ',');
            if (!len) continue;
            cb_error err = {0};
            cb_net *net = cb_net_load(path, &err);
            if (!net) {
                rc = cli_fail(&cmd_calibrate, &err);
                break;
            }
            *n = cb_cal_net_conv_shapes(net, *out, *n, CB_CAL_MAX_NET_SHAPES);
            cb_net_free(net);
        }
    if (rc < 0 && !*n) rc = cli_usage_error(&cmd_calibrate, "--shapes-from: no convolution in '%s' that calibrate measures as it is", nets->v[0]);
    if (rc >= 0) free(*out), *out = NULL, *n = 0;
    return rc;
}

static int run_gpu(const gpu_args *ga, cli_out *o, cb_format fmt) {
    const char *backend = ga->backend, *base = ga->base, *precs = ga->precs;
    long reps = ga->reps;
#ifndef CB_HAVE_CUDA
    (void)base, (void)precs, (void)reps, (void)o, (void)fmt;
    fprintf(stderr, "convbench calibrate: --backend %s: this build has no CUDA (nvcc was not found at build time)\n", backend);
    return 3;
#else
    _Static_assert((int)SECTION_MOPS == (int)CB_GPU_CAL_MOPS && (int)SECTION_GEMM == (int)CB_GPU_CAL_GEMM &&
                       (int)SECTION_CONV == (int)CB_GPU_CAL_CONV,
                   "sections");
    cb_gpu_cal_opts go = {.backend = backend, .reps = (int)reps, .workspace_limit = (double)ga->ws_mb * (1 << 20),
                          .sections = ga->sections, .shape_lo = ga->shape_lo, .shape_hi = ga->shape_hi, .shapes = ga->shapes,
                          .nshapes = ga->nshapes, .verbose = ga->verbose, .cache_hot = ga->cache_hot, .held = ga->held};
    char list[256];
    snprintf(list, sizeof list, "%s", precs);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        cb_precision p;
        if (!cb_precision_parse(tok, &p)) return cli_usage_error(&cmd_calibrate, "--precision: '%s' is not fp32, tf32 or bf16", tok);
        if (go.nprec < CB_PREC_COUNT) go.precs[go.nprec++] = p;
    }
    if (!go.nprec) return cli_usage_error(&cmd_calibrate, "--precision: empty list");
    cb_devdb db;
    cb_error err = {0};
    if (cb_devdb_load(ga->db_path, &db, &err) != CB_OK) return cli_fail(&cmd_calibrate, &err);
    const cb_device *named = base ? cb_devdb_device(&db, base) : NULL;
    if (base && !named) {
        cb_devdb_free(&db);
        return cli_usage_error(&cmd_calibrate, "--device: unknown device '%s'", base);
    }
    go.progress = gpu_progress;
    go.ctx = o;
    cb_gpu_cal gc;
    cb_status st = cb_gpu_calibrate(&go, &gc, &err);
    if (st != CB_OK) {
        cb_devdb_free(&db);
        return cli_fail(&cmd_calibrate, &err);
    }
    if (!named) named = guess_base(&db, gc.gpu);
    if (!named) {
        cb_devdb_free(&db);
        cb_gpu_cal_free(&gc);
        return cli_usage_error(&cmd_calibrate, "no database entry matches GPU '%s': name one with --device", gc.gpu);
    }
    cb_device d = *named; // named points into db: nothing reads it after the free
    cb_devdb_free(&db);
    char base_name[64];
    snprintf(base_name, sizeof base_name, "%s", d.name);
    snprintf(d.name, sizeof d.name, "%.40s-%s", base_name, backend);
    memset(d.algo_eff, 0, sizeof d.algo_eff);
    d.calibrated = false;
    memset(&d.cal, 0, sizeof d.cal);
    d.interconnect = ga->link;
    snprintf(d.cal.backend, sizeof d.cal.backend, "%s", backend);
    d.cal.sms = gc.sms;
    if (gc.l2_bytes > 0) d.l2_bytes = gc.l2_bytes; // the device's own (the database's is its datasheet's)
    d.cal.launch_s = gc.launch_s;
    d.cal.host_call_s = gc.host_call_s;
    d.cal.host_graph_call_s = gc.host_graph_call_s;
    d.cal.stream_timed = true; // src/cudnn/calibrate.c times calls as a pass sees them
    d.cal.held_timed = ga->held; // (--timing held: as a held profile sees them)
    d.cal.act_bias_fused = true; // this build's backward epilogue (cb_fmt_act_bias_grad)
    d.cal.concat_relu = true;    // and its concatenations' ReLU takeover (relu_by_concat)
    d.cal.cache_step = !ga->cache_hot;
    if (!ga->sections || (ga->sections & SECTION_MOPS)) { // (with the passes: once a calibration)
        double h = engine_host_call_s(&d, backend, go.precs[0], (int)reps, o);
        if (h > 0) d.cal.host_engine_call_s = h;
    }
    snprintf(d.meas_source, sizeof d.meas_source, "convbench calibrate --backend %s (commit %s) on %s: median of %ld",
             backend, cb_env_commit(), gc.gpu, reps);
    cb_report *r = cb_report_new("calibrate");
    cb_report_meta_str(r, "backend", backend);
    cb_report_meta_str(r, "base_device", base_name);
    cb_report_meta_str(r, "precisions", precs);
    cb_report_meta_num(r, "samples", gc.n);
    cb_report_meta_str(r, "timing", ga->held ? "held" : "stream");
    if (gc.hold_timeouts > 0)
        cb_report_note(r, "--timing held: %d timed series waited out the hold's 100 ms timeout (a call that waits for the device): their "
                          "calls were not back to back", gc.hold_timeouts);
    int rc = finish_gpu(ga->save, &d, gc.s, gc.n, o, fmt, r);
    cb_gpu_cal_free(&gc);
    return rc;
#endif
}

static int run(int argc, char **argv) {
    const char *backend = "cpu", *save = NULL, *base = NULL, *db_path = NULL, *precs = "fp32", *refit = NULL;
    const char *sections = NULL, *shapes = NULL, *allreduce = NULL, *cache = "step", *timing = "stream";
    cli_list shapes_net = {0};
    long size = 2048, reps = 5, ws_mb = 4096, allreduce_gpus = CLI_UNSET;
    bool verbose = false;
    cli_out o = {0};
    const cli_opt opts[] = {
        {"--backend", CLI_STR, &backend, "B", "cpu (default), cudnn or cuda (on the GPU: cuBLAS, passes, every convolution algorithm)"},
        {"--device", CLI_STR, &base, "NAME", "database entry whose datasheet peaks the fractions refer to (CPU default: this CPU, detected; GPU: by its name)"},
        {"--save", CLI_STR, &save, "FILE", "write the device entry (JSON) to FILE, whole or not at all"},
        {"--precision", CLI_STR, &precs, "P1,P2", "GPU: convolution precisions to calibrate, fp32 (default), tf32, bf16 (cuDNN: on NHWC storage)"},
        {"--size", CLI_INT, &size, "N", "CPU: GEMM size N x N x N (default 2048)"},
        {"--reps", CLI_INT, &reps, "K", "timed repetitions per measurement, median taken (default 5)"},
        {"--workspace-mb", CLI_INT, &ws_mb, "MB", "GPU: workspace limit, as profile's (default 4096)"},
        {"--sections", CLI_STR, &sections, "S1,S2", "GPU: measure only these of mops, gemm, conv (default all)"},
        {"--shapes", CLI_STR, &shapes, "A-B", "GPU: only the convolution shapes A to B of the grid, or of --shapes-from's (0-based)"},
        {"--shapes-from", CLI_LIST, &shapes_net, "F1,F2", "GPU: measure these networks' convolutions instead of the grid (never the networks the model is evaluated on; repeatable)"},
        {"--cache", CLI_STR, &cache, "C", "GPU: step (default: each call also timed after an L2 flush with its input written again, as a step leaves them; the larger time kept) or hot (back to back only)"},
        {"--timing", CLI_STR, &timing, "T", "GPU: stream (default: each call queued behind one more, max(host, device) per call) or held (each series "
                                            "queued behind a hold released once queued: the device's time alone, as profile --hold measures layers)"},
        {"--verbose", CLI_FLAG, &verbose, NULL, "GPU: progress for every measurement"},
        {"--refit", CLI_STR, &refit, "F1,F2", "fit again the samples of saved GPU calibrations, merged (no GPU needed)"},
        {"--allreduce", CLI_STR, &allreduce, "FILE", "store the interconnect fitted to `convbench allreduce --format json` (simulate's link)"},
        {"--allreduce-gpus", CLI_INT, &allreduce_gpus, "N", "measure that all-reduce sweep on GPUs 0..N-1 (NCCL) and store its interconnect"},
        {"--devices", CLI_STR, &db_path, "FILE", "device database (default data/devices.json)"},
        CLI_OUT_OPTS(o),
        {0},
    };
    int rc = cli_parse(&cmd_calibrate, opts, argc, argv, NULL, 0, 0);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_calibrate, &o, &fmt)) >= 0) return rc;
    if (reps < 1 || reps > 16) return cli_usage_error(&cmd_calibrate, "--reps: %ld must be in [1, 16]", reps);
    if (ws_mb < 0 || ws_mb > (1L << 24)) return cli_usage_error(&cmd_calibrate, "--workspace-mb: %ld must be in [0, %ld]", ws_mb, 1L << 24);
    if (strcmp(cache, "step") && strcmp(cache, "hot")) return cli_usage_error(&cmd_calibrate, "--cache: '%s' is not step or hot", cache);
    if (strcmp(timing, "stream") && strcmp(timing, "held")) return cli_usage_error(&cmd_calibrate, "--timing: '%s' is not stream or held", timing);
    cb_link link;
    if (refit) {
        if ((rc = measure_link(allreduce, allreduce_gpus, &o, &link)) >= 0) return rc;
        return run_refit(refit, save, &link, &o, fmt);
    }
    const cb_backend_caps *caps = cb_backend_caps_of(backend);
    if (!caps || !caps->calibrates) return cli_usage_error(&cmd_calibrate, "--backend: '%s' is not cpu, cuda or cudnn", backend);
    if (caps->device) {
        gpu_args ga = {.backend = backend, .base = base, .db_path = db_path, .precs = precs, .save = save, .reps = reps,
                       .ws_mb = ws_mb, .verbose = verbose, .cache_hot = !strcmp(cache, "hot"), .held = !strcmp(timing, "held")};
        if ((rc = parse_gpu_args(sections, shapes, &ga)) >= 0) return rc;
        cb_conv_params *extra = NULL, grid[CB_CAL_MAX_SHAPES];
        if (shapes_net.n && (rc = shapes_from(&shapes_net, &extra, &ga.nshapes)) >= 0) return rc;
        ga.shapes = extra;
        int ns = extra ? ga.nshapes : cb_cal_conv_shapes(grid, CB_CAL_MAX_SHAPES);
        if (ga.shape_lo >= ns) { // (a script's loop over the parts stops here)
            free(extra);
            return cli_usage_error(&cmd_calibrate, "--shapes: %d is past the last of the %d %s", ga.shape_lo, ns,
                                   extra ? "shapes of --shapes-from" : "grid shapes");
        }
        if ((rc = measure_link(allreduce, allreduce_gpus, &o, &ga.link)) < 0) rc = run_gpu(&ga, &o, fmt);
        free(extra);
        return rc;
    }
    if (size < 64 || size > 16384) return cli_usage_error(&cmd_calibrate, "--size: %ld must be in [64, 16384]", size);
    if ((rc = measure_link(allreduce, allreduce_gpus, &o, &link)) >= 0) return rc;
    cb_device dev;
    cb_cpu_info cpu;
    cli_progress(&o, "calibrate: detecting the CPU");
    cb_cpu_detect(&cpu);
    if (base) {
        cb_devdb db;
        if ((rc = model_cli_device(&cmd_calibrate, db_path, base, NULL, false, &db, &dev)) >= 0) return rc;
        cb_devdb_free(&db);
    } else cb_cpu_device(&cpu, &dev);
    double peak = dev.peak[CB_PREC_FP32];

    cli_progress(&o, "calibrate: sgemm %ld^3", size);
    double gemm = gemm_rate((int)size, (int)reps);
    cli_progress(&o, "calibrate: memcpy 256 MiB");
    double bw = copy_bw((size_t)256 << 20, (int)reps);

    if (!base) dev.mem_bw = bw; // no datasheet: the measured copy is the device's bandwidth
    cb_report *r = cb_report_new("calibrate");
    char isa[96];
    cb_cpu_isa(&cpu, isa, sizeof isa);
    cb_report_meta_str(r, "backend", backend);
    cb_report_meta_str(r, "cpu_vendor", cpu.vendor);
    cb_report_meta_str(r, "cpu_model", cpu.model);
    cb_report_meta_str(r, "cpu_isa", isa);
    cb_report_meta_num(r, "cpu_cores", cpu.cores);
    cb_report_meta_num(r, "clock_mhz", cpu.clock_mhz);
    cb_report_meta_str(r, "clock_source", cpu.clock_source);
    cb_report_meta_num(r, "clock_measured_mhz", cpu.clock_measured_mhz);
    cb_report_meta_num(r, "fp32_flops_per_cycle_per_core", cpu.flops_per_cycle);
    cb_report_meta_str(r, "base_device", base ? dev.name : "this CPU (detected)");
    cb_report_meta_num(r, "peak_fp32_gflops", peak / 1e9);
    const char *cc[] = {"layer", "direction", "ms", "gflops", "fraction_of_peak"};
    cb_table *ct = cb_report_table(r, "conv", 5, cc);
    const char *phn[] = {"forward", "bwd_data", "bwd_filter"};
    double eff[CB_PHASE_COUNT][8];
    int ns = (int)(sizeof SHAPES / sizeof SHAPES[0]);
    for (int k = 0; k < ns; k++) {
        const shape *s = &SHAPES[k];
        cb_conv_params p = {s->n, s->c, s->h, s->w, s->k, s->r, s->s, 0, 0, s->stride, s->stride, s->pad, s->pad, 1, 1, 1};
        p.p = (s->h + 2 * s->pad - s->r) / s->stride + 1;
        p.q = (s->w + 2 * s->pad - s->s) / s->stride + 1;
        double flops = 2.0 * s->n * s->k * p.p * p.q * s->c * s->r * s->s;
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
            cli_progress(&o, "calibrate: %s %s", s->name, phn[ph]);
            double ms = conv_ms(&p, (cb_phase)ph, (int)reps);
            eff[ph][k] = flops / (ms / 1e3) / peak;
            cb_table_row(ct);
            cb_table_str(ct, s->name);
            cb_table_str(ct, phn[ph]);
            cb_table_num(ct, ms, 3);
            cb_table_num(ct, flops / ms / 1e6, 1);
            cb_table_num(ct, eff[ph][k], 3);
        }
    }
    // the device entry: datasheet figures of the base device, measured ceilings, fractions
    cb_device out = dev;
    snprintf(out.name, sizeof out.name, "%.48s-calibrated", dev.name);
    if (!base) snprintf(out.source, sizeof out.source, "%s", dev.source);
    memset(out.meas_gemm, 0, sizeof out.meas_gemm);
    memset(out.algo_eff, 0, sizeof out.algo_eff);
    out.meas_gemm[CB_PREC_FP32] = gemm;
    out.meas_copy_bw = bw;
    snprintf(out.meas_source, sizeof out.meas_source, "convbench calibrate --backend cpu (commit %s): sgemm %ld^3, memcpy 256 MiB x2, median of %ld",
             cb_env_commit(), size, reps);
    for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
        double m, p90;
        model_cli_percentiles(eff[ph], ns, &m, &p90);
        out.algo_eff[CB_ALGO_GEMM][ph] = m; // median over the shapes
    }
    out.calibrated = true;
    if (link.bw > 0) out.interconnect = link;

    const char *sc[] = {"quantity", "value", "unit", "fraction_of_peak"};
    cb_table *st = cb_report_table(r, "calibration", 4, sc);
    struct { const char *q; double v; const char *u; double f; } rows[] = {
        {"sgemm fp32", gemm / 1e9, "GFLOP/s", gemm / peak},
        {"memcpy (read + write)", bw / 1e9, "GB/s", dev.mem_bw > 0 ? bw / dev.mem_bw : 0},
        {"conv gemm forward (median)", out.algo_eff[CB_ALGO_GEMM][0] * peak / 1e9, "GFLOP/s", out.algo_eff[CB_ALGO_GEMM][0]},
        {"conv gemm bwd_data (median)", out.algo_eff[CB_ALGO_GEMM][1] * peak / 1e9, "GFLOP/s", out.algo_eff[CB_ALGO_GEMM][1]},
        {"conv gemm bwd_filter (median)", out.algo_eff[CB_ALGO_GEMM][2] * peak / 1e9, "GFLOP/s", out.algo_eff[CB_ALGO_GEMM][2]},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cb_table_row(st);
        cb_table_str(st, rows[i].q);
        cb_table_num(st, rows[i].v, 2);
        cb_table_str(st, rows[i].u);
        if (i == 1 && !base) cb_table_null(st); // the measured copy is the bandwidth itself
        else cb_table_num(st, rows[i].f, 3);
    }
    link_report(r, &out);
    if (base) cb_report_note(r, "peak %.1f GFLOP/s is the datasheet-style figure of '%s' (%s)", peak / 1e9, dev.name, dev.source);
    else cb_report_note(r, "peak %.1f GFLOP/s: %s", peak / 1e9, dev.source);
    cb_report_note(r, "only im2col + GEMM exists in the CPU backend: Winograd, FFT and implicit GEMM get no fraction and are not predicted for this device");

    char *text = NULL;
    if ((rc = save_entry(save, &out, NULL, 0, &text)) != 0) {
        free(text);
        cb_report_free(r);
        return rc;
    }
    if (save) cb_report_note(r, "device entry saved to %s", save);
    rc = cli_emit(&cmd_calibrate, r, &o, fmt);
    if (!save && rc == 0 && fmt != CB_FORMAT_JSON) printf("\ndevice entry (save with --save FILE):\n%s\n", text);
    free(text);
    cb_report_free(r);
    return rc;
}

const cli_cmd cmd_calibrate = {"calibrate", "measure this machine's GEMM rate, copy bandwidth and per-algorithm fraction of peak",
                               "[--backend cpu|cudnn|cuda] [--precision fp32,tf32,bf16] [--save FILE] [--refit FILE] [--allreduce FILE | --allreduce-gpus N]", run};
