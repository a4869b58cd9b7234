// convbench calibrate --backend cpu: measure this machine's GEMM rate (cblas_sgemm, fp32),
// copy bandwidth (memcpy, read + write counted) and the fraction of peak the CPU backend's
// convolution (im2col + GEMM) reaches per direction on real layer shapes; save a device entry.
#include "model_cli.h"
#include "bench/stats.h"
#include "cpu/kernels.h"

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

static int run(int argc, char **argv) {
    const char *backend = "cpu", *save = NULL, *base = "xeon-2c", *db_path = NULL;
    long size = 2048, reps = 5;
    cli_out o = {0};
    const cli_opt opts[] = {
        {"--backend", CLI_STR, &backend, "B", "cpu (default); cuda and cudnn need a CUDA build (GPU calibration: later)"},
        {"--device", CLI_STR, &base, "NAME", "database entry whose datasheet peak the fractions refer to (default xeon-2c)"},
        {"--save", CLI_STR, &save, "FILE", "write the device entry (JSON) to FILE, whole or not at all"},
        {"--size", CLI_INT, &size, "N", "GEMM size N x N x N (default 2048)"},
        {"--reps", CLI_INT, &reps, "K", "timed repetitions per measurement, median taken (default 5)"},
        {"--devices", CLI_STR, &db_path, "FILE", "device database (default data/devices.json)"},
        CLI_OUT_OPTS(o),
        {0},
    };
    int rc = cli_parse(&cmd_calibrate, opts, argc, argv, NULL, 0, 0);
    if (rc >= 0) return rc;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_calibrate, &o, &fmt)) >= 0) return rc;
    if (!strcmp(backend, "cuda") || !strcmp(backend, "cudnn")) {
#ifdef CB_HAVE_CUDA
        fprintf(stderr, "convbench calibrate: GPU calibration (--backend %s) is not implemented yet\n", backend);
#else
        fprintf(stderr, "convbench calibrate: --backend %s: this build has no CUDA (nvcc was not found at build time)\n", backend);
#endif
        return 2;
    }
    if (strcmp(backend, "cpu")) return cli_usage_error(&cmd_calibrate, "--backend: '%s' is not cpu, cuda or cudnn", backend);
    if (size < 64 || size > 16384) return cli_usage_error(&cmd_calibrate, "--size: %ld must be in [64, 16384]", size);
    if (reps < 1 || reps > 16) return cli_usage_error(&cmd_calibrate, "--reps: %ld must be in [1, 16]", reps);
    cb_devdb db;
    cb_device dev;
    if ((rc = model_cli_device(&cmd_calibrate, db_path, base, NULL, &db, &dev)) >= 0) return rc;
    cb_devdb_free(&db);
    double peak = dev.peak[CB_PREC_FP32];

    cli_progress(&o, "calibrate: sgemm %ld^3", size);
    double gemm = gemm_rate((int)size, (int)reps);
    cli_progress(&o, "calibrate: memcpy 256 MiB");
    double bw = copy_bw((size_t)256 << 20, (int)reps);

    cb_report *r = cb_report_new("calibrate");
    cb_report_meta_str(r, "backend", backend);
    cb_report_meta_str(r, "base_device", dev.name);
    cb_report_meta_num(r, "peak_fp32_gflops", peak / 1e9);
    const char *cc[] = {"layer", "direction", "ms", "gflops", "fraction_of_peak"};
    cb_table *ct = cb_report_table(r, "conv", 5, cc);
    const char *phn[] = {"forward", "bwd_data", "bwd_filter"};
    double eff[CB_PHASE_COUNT][8];
    int ns = (int)(sizeof SHAPES / sizeof SHAPES[0]);
    for (int k = 0; k < ns; k++) {
        const shape *s = &SHAPES[k];
        cb_conv_params p = {s->n, s->c, s->h, s->w, s->k, s->r, s->s, 0, 0, s->stride, s->stride, s->pad, s->pad, 1};
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
        cb_table_num(st, rows[i].f, 3);
    }
    cb_report_note(r, "peak %.1f GFLOP/s is the datasheet-style figure of '%s' (%s)", peak / 1e9, dev.name, dev.source);
    cb_report_note(r, "only im2col + GEMM exists in the CPU backend: Winograd, FFT and implicit GEMM get no fraction and are not predicted for this device");

    cJSON *j = cb_device_to_json(&out);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    if (!text) abort();
    if (save) { // whole or not at all: a temporary file renamed over the target
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", save);
        FILE *f = fopen(tmp, "w");
        bool ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
        if (f && fclose(f) != 0) ok = false;
        if (!ok || rename(tmp, save) != 0) {
            remove(tmp);
            fprintf(stderr, "convbench calibrate: cannot write '%s'\n", save);
            free(text);
            cb_report_free(r);
            return 2;
        }
        cb_report_note(r, "device entry saved to %s", save);
    }
    rc = cli_emit(&cmd_calibrate, r, &o, fmt);
    if (!save && rc == 0 && fmt != CB_FORMAT_JSON) printf("\ndevice entry (save with --save FILE):\n%s\n", text);
    free(text);
    cb_report_free(r);
    return rc;
}

const cli_cmd cmd_calibrate = {"calibrate", "measure this machine's GEMM rate, copy bandwidth and per-algorithm fraction of peak",
                               "[--backend cpu] [--save FILE]", run};
