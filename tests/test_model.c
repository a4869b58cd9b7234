// The analytical model: FLOP and byte counts per algorithm against hand counts, roofline
// arithmetic, Paleo's uncalibrated VGG-16 predictions (seed 002, "Heuristic disabled" tables),
// the device database, simulation invariants, and what simulate takes from measurements.
#include "check.h"
#include "model/model.h"
#ifdef CB_HAVE_CUDA
#include "cuda/conv_algo.h"
#endif

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool close_rel(double a, double b, double tol) { return fabs(a - b) <= tol * fabs(b); }

// A one-convolution net in Paleo format.
static cb_net *conv_net(int n, int h, int c, int k, int r, int stride, const char *pad) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [%d, %d, %d, %d]},"
             "\"conv\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [%d, %d, %d, %d], \"padding\": %s,"
             "\"strides\": [1, %d, %d, 1], \"activation_fn\": null, \"bias\": false}}}",
             n, h, h, c, r, r, c, k, pad, stride, stride);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, "test", &err);
    if (!net) printf("  load: %s\n", err.msg);
    return net;
}
// a net from Paleo JSON text (NULL, and the reason printed, if it does not load)
static cb_net *json_net(const char *json) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, "test", &err);
    if (!net) printf("  load: %s\n", err.msg);
    return net;
}
// d's calibrated algorithms: the n of list, each with the form its name gives
static void set_algos(cb_device *d, const cb_cal_algo *list, int n) {
    for (int k = 0; k < n; k++) {
        d->cal.algo[k] = list[k];
        cb_algo_form_of(list[k].name, &d->cal.algo[k].form);
    }
    d->cal.nalgo = n;
}
// d's calibrated algorithms: one bf16 entry per phase, these names, 30 TFLOP/s and 10 us each
static void set_bf16_algos(cb_device *d, const char *fwd, const char *bwd_data, const char *bwd_filter) {
    const char *names[3] = {fwd, bwd_data, bwd_filter};
    cb_cal_algo list[3];
    for (int k = 0; k < 3; k++) {
        list[k] = (cb_cal_algo){.phase = (cb_phase)k, .prec = CB_PREC_BF16, .rate = 30e12, .overhead_s = 10e-6};
        snprintf(list[k].name, sizeof list[k].name, "%s", names[k]);
    }
    set_algos(d, list, 3);
}

// direct vs Winograd multiplies for a 3x3 convolution: 56x56 output, 64 -> 64 channels
static void winograd_multiplies(void) {
    cb_net *net = conv_net(1, 56, 64, 64, 3, 1, "[1, 1]");
    CHECK(net, "load");
    if (!net) return;
    cb_algo_cost g, w;
    cb_algo_cost_of(net, 1, CB_PHASE_FORWARD, CB_ALGO_GEMM, 4, &g);
    cb_algo_cost_of(net, 1, CB_PHASE_FORWARD, CB_ALGO_WINOGRAD, 4, &w);
    double direct = 56.0 * 56 * 64 * 64 * 9;    // one multiply per output, channel and tap
    double wino = 36.0 * (14 * 14) * 64 * 64;   // 36 per 4x4 tile, channel pair
    CHECK(g.mults == direct, "gemm %g vs %g", g.mults, direct);
    CHECK(w.applicable && w.mults == wino, "winograd %g vs %g", w.mults, wino);
    CHECK(direct / wino == 4.0, "ratio %g", direct / wino);
    // transforms: 864 per tile and channel, 324 per filter pair, 480 per tile and filter
    double fl = 2 * wino + 864.0 * 196 * 64 + 324.0 * 64 * 64 + 480.0 * 196 * 64;
    CHECK(w.flops == fl, "winograd flops %g vs %g", w.flops, fl);
    double ws = 4.0 * 36 * (196 * 64 + 64 * 64 + 196 * 64);
    CHECK(w.workspace == ws, "winograd workspace %g vs %g", w.workspace, ws);
    CHECK(w.bytes == 4.0 * (56 * 56 * 64 * 2 + 64 * 64 * 9) + 2 * ws, "winograd bytes %g", w.bytes);
    cb_net_free(net);
}

// one 4x4 output tile, one channel: 36 multiplies, 2*36 + 864 + 324 + 480 FLOPs
static void winograd_single_tile(void) {
    cb_net *net = conv_net(1, 4, 1, 1, 3, 1, "\"SAME\"");
    if (!net) {
        CHECK(0, "load");
        return;
    }
    cb_algo_cost w;
    cb_algo_cost_of(net, 1, CB_PHASE_FORWARD, CB_ALGO_WINOGRAD, 4, &w);
    CHECK(w.mults == 36 && w.flops == 72 + 864 + 324 + 480, "mults %g flops %g", w.mults, w.flops);
    cb_net_free(net);
}

// im2col GEMM: FLOPs, column-matrix workspace and bytes; applicability of Winograd and FFT
static void gemm_fft_counts(void) {
    cb_net *net = conv_net(2, 27, 64, 192, 5, 1, "[2, 2]"); // AlexNet conv2
    if (!net) {
        CHECK(0, "load");
        return;
    }
    cb_algo_cost g, f, w, i;
    cb_algo_cost_of(net, 1, CB_PHASE_FORWARD, CB_ALGO_GEMM, 4, &g);
    cb_algo_cost_of(net, 1, CB_PHASE_FORWARD, CB_ALGO_FFT, 4, &f);
    cb_algo_cost_of(net, 1, CB_PHASE_FORWARD, CB_ALGO_WINOGRAD, 4, &w);
    cb_algo_cost_of(net, 1, CB_PHASE_FORWARD, CB_ALGO_IMPLICIT_GEMM, 4, &i);
    double macs = 2.0 * 192 * 27 * 27 * 64 * 25, col = 64.0 * 25 * 27 * 27;
    double io = 4.0 * (2 * 64 * 27 * 27 + 192 * 64 * 25 + 2 * 192 * 27 * 27);
    CHECK(g.flops == 2 * macs, "gemm flops %g", g.flops);
    CHECK(g.workspace == 4 * col && g.bytes == io + 2 * 4 * 2 * col, "gemm ws %g bytes %g", g.workspace, g.bytes);
    CHECK(i.flops == 2 * macs && i.bytes == io && i.workspace == 0, "implicit %g %g", i.bytes, i.workspace);
    CHECK(!w.applicable, "winograd is 3x3 only");
    // FFT on 31x31 planes padded to 32x32 (powers of two, as cuDNN's): 2.5 n log2 n per
    // transform, 32 x 17 half spectrum
    double n = 32.0 * 32, hs = 32.0 * 17, tr = 2.0 * 64 + 64 * 192 + 2.0 * 192;
    CHECK(f.applicable && close_rel(f.flops, 2.5 * n * log2(n) * tr + 8 * 2.0 * 64 * 192 * hs, 1e-12), "fft %g", f.flops);
    cb_net_free(net);
    net = conv_net(2, 28, 16, 16, 3, 2, "\"SAME\"");
    if (!net) {
        CHECK(0, "load");
        return;
    }
    cb_algo_cost_of(net, 1, CB_PHASE_FORWARD, CB_ALGO_FFT, 4, &f);
    cb_algo_cost_of(net, 1, CB_PHASE_FORWARD, CB_ALGO_WINOGRAD, 4, &w);
    CHECK(!f.applicable && !w.applicable, "stride 2: no FFT, no Winograd");
    cb_net_free(net);
}

static void roofline_arithmetic(void) {
    bool mb;
    double t = cb_roofline_s(2e9, 1e12, 1e6, 1e9, 5e-6, &mb); // 2 ms compute, 1 ms memory
    CHECK(close_rel(t, 2e-3 + 5e-6, 1e-12) && !mb, "compute bound %g", t);
    t = cb_roofline_s(1e6, 1e12, 4e9, 2e12, 0, &mb);            // 1 us compute, 2 ms memory
    CHECK(close_rel(t, 2e-3, 1e-12) && mb, "memory bound %g", t);
}

static void device_database(void) {
    cb_devdb db;
    cb_error err = {0};
    const char *path = getenv("CONVBENCH_DEVICES") ? NULL : "data/devices.json";
    CHECK(cb_devdb_load(path, &db, &err) == CB_OK, "%s", err.msg);
    if (err.status) return;
    const char *need[] = {"h200", "h100", "a100", "v100", "titanx-maxwell", "titanx-pascal", "k20", "k40", "k80", "xeon-2c"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) CHECK(cb_devdb_device(&db, need[i]), "device %s", need[i]);
    const char *links[] = {"pcie3", "pcie4", "pcie5", "nvlink3", "nvlink4", "ethernet10", "ethernet25", "ethernet100",
                           "ib-edr", "ib-hdr", "ib-ndr"};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) CHECK(cb_devdb_link(&db, links[i]), "link %s", links[i]);
    const cb_device *h = cb_devdb_device(&db, "H200");
    if (h) {
        CHECK(close_rel(h->meas_gemm[CB_PREC_FP32], 50.7e12, 1e-3) && close_rel(h->meas_gemm[CB_PREC_BF16], 780.4e12, 1e-3) &&
                  close_rel(h->meas_copy_bw, 4.25e12, 2e-3),
              "h200 measured block");
        CHECK(cb_model_rate(h, CB_PREC_TF32, CB_ALGO_GEMM, CB_PHASE_FORWARD) == h->meas_gemm[CB_PREC_TF32], "measured rate used");
    }
    const cb_device *t = cb_devdb_device(&db, "titanx-maxwell");
    if (t) CHECK(t->peak[CB_PREC_FP32] == 6144e9 && t->mem_bw == 336.5e9, "Titan X as Paleo");
    // each GPU's usual interconnect, a link the database holds, kept through a saved entry
    for (int i = 0; i < db.ndev; i++)
        if (db.dev[i].link[0]) CHECK(cb_devdb_link(&db, db.dev[i].link), "%s: link '%s' is in the database", db.dev[i].name, db.dev[i].link);
    if (h) {
        CHECK(!strcmp(h->link, "nvlink4"), "h200's link: '%s'", h->link);
        cJSON *j = cb_device_to_json(h);
        cb_device back;
        CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && !strcmp(back.link, "nvlink4"), "the link survives a saved entry");
        cJSON_Delete(j);
        char *text = cb_device_entry_text(h, NULL, 0);
        size_t len = strlen(text);
        CHECK(len > 2 && text[len - 1] == '\n' && text[len - 2] == '}', "a saved entry's text ends in one newline");
        free(text);
    }
    CHECK(!cb_devdb_device(&db, "no-such-gpu"), "unknown device");
    cb_devdb_free(&db);
}

// Paleo's own VGG-16 (fc as convolutions), batch 64: seed 002's "Heuristic disabled" tables
static const char *VGG_PALEO_LAYERS[][2] = {
    {"conv1-1", "3,64"}, {"conv1-2", "64,64"}, {"pool1", ""}, {"conv2-1", "64,128"}, {"conv2-2", "128,128"}, {"pool2", ""},
    {"conv3-1", "128,256"}, {"conv3-2", "256,256"}, {"conv3-3", "256,256"}, {"pool3", ""}, {"conv4-1", "256,512"},
    {"conv4-2", "512,512"}, {"conv4-3", "512,512"}, {"pool4", ""}, {"conv5-1", "512,512"}, {"conv5-2", "512,512"},
    {"conv5-3", "512,512"}, {"pool5", ""},
};
static const double SEED_FWD[] = {4.19018099061, 43.1269071954, 2.91097637048, 20.9953414468, 40.8530528788, 1.45548818524,
                                  20.1447489796, 39.7206829517, 39.7206829517, 0.72774409262, 19.7282951348, 39.172182766,
                                  39.172182766, 0.36387204631, 9.82388068871, 9.82388068871, 9.82388068871, 0.0909680115775,
                                  3.29915026789, 0.00584690143635, 0.541065080733, 0.00584690143635, 0.134289559609};
static const double SEED_BWD_DATA[] = {0, 43.1269071954, 2.91097637048, 21.0158376509, 40.8530528788, 1.45548818524,
                                       20.1654265659, 39.7206829517, 39.7206829517, 0.72774409262, 19.7493354859,
                                       39.172182766, 39.172182766, 0.36387204631, 9.82388068871, 9.82388068871,
                                       9.82388068871, 0.0909680115775, 106.547153989, 0.00584690143635, 0.541065080733,
                                       0.00584690143635, 0.134289559609};

static const double SEED_BWD_FILTER[] = {4.19018099061, 43.1269071954, 0, 20.9953414468, 40.8530528788, 0, 20.1447489796,
                                         39.7206829517, 39.7206829517, 0, 19.7282951348, 39.172182766, 39.172182766, 0,
                                         9.82388068871, 9.82388068871, 9.82388068871, 0, 3.29915026789, 0, 0.541065080733, 0,
                                         0.134289559609};

static cb_net *vgg16_paleo(void) {
    static char json[8192];
    size_t o = 0;
    o += (size_t)snprintf(json + o, sizeof json - o,
                          "{\"name\": \"VGG 16 - FROM SLIM\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\","
                          " \"tensor\": [64, 224, 224, 3]}");
    const char *prev = "data";
    for (size_t i = 0; i < sizeof VGG_PALEO_LAYERS / sizeof VGG_PALEO_LAYERS[0]; i++) {
        const char *nm = VGG_PALEO_LAYERS[i][0], *ch = VGG_PALEO_LAYERS[i][1];
        if (*ch)
            o += (size_t)snprintf(json + o, sizeof json - o,
                                  ", \"%s\": {\"parents\": [\"%s\"], \"type\": \"Convolution\", \"filter\": [3, 3, %s],"
                                  " \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"}",
                                  nm, prev, ch);
        else
            o += (size_t)snprintf(json + o, sizeof json - o,
                                  ", \"%s\": {\"parents\": [\"%s\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1],"
                                  " \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"}",
                                  nm, prev);
        prev = nm;
    }
    o += (size_t)snprintf(json + o, sizeof json - o,
        ", \"fc6\": {\"parents\": [\"pool5\"], \"type\": \"Convolution\", \"filter\": [7, 7, 512, 4096], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"}"
        ", \"dropout6\": {\"parents\": [\"fc6\"], \"type\": \"Dropout\", \"dropout_keep_prob\": 0.5}"
        ", \"fc7\": {\"parents\": [\"dropout6\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4096, 4096], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"}"
        ", \"dropout7\": {\"parents\": [\"fc7\"], \"type\": \"Dropout\", \"dropout_keep_prob\": 0.5}"
        ", \"fc8\": {\"parents\": [\"dropout7\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4096, 1000], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null}"
        ", \"softmax\": {\"parents\": [\"fc8\"], \"type\": \"Softmax\", \"num_classes\": 1000}}}");
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, "vgg16-paleo", &err);
    if (!net) printf("  load: %s\n", err.msg);
    return net;
}

// Paleo's Titan X (device.py): clock 1000 MHz, 6144 GFLOP/s, 336.5 GB/s
static cb_device titan_x_paleo(void) {
    cb_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "titanx-paleo");
    snprintf(d.kind, sizeof d.kind, "gpu");
    d.clock_mhz = 1000;
    d.peak[CB_PREC_FP32] = 6144e9;
    d.mem_bw = 336.5e9;
    return d;
}

static void paleo_vgg16(const double *seed, cb_phase ph, const char *what) {
    cb_net *net = vgg16_paleo();
    if (!net) {
        CHECK(0, "load");
        return;
    }
    cb_device d = titan_x_paleo();
    int n = (int)(sizeof SEED_FWD / sizeof SEED_FWD[0]), worst = 1;
    double worst_err = 0;
    CHECK(net->nlayers == n + 2, "layers %d", net->nlayers);
    for (int i = 1; i <= n && i < net->nlayers; i++) {
        double ms = cb_paleo_layer_ms(&d, net, i, ph), want = seed[i - 1];
        double e = want > 0 ? fabs(ms - want) / want : ms;
        if (e > worst_err) worst_err = e, worst = i;
        CHECK(want > 0 ? e < 0.01 : ms == 0, "%s %s: %.6f ms, Paleo %.6f ms", what, net->layers[i].name, ms, want);
    }
    printf("  %s: worst layer %s, relative error %.2e\n", what, net->layers[worst].name, worst_err);
    cb_net_free(net);
}

static void paleo_vgg16_forward(void) { paleo_vgg16(SEED_FWD, CB_PHASE_FORWARD, "forward"); }
static void paleo_vgg16_backward_data(void) { paleo_vgg16(SEED_BWD_DATA, CB_PHASE_BWD_DATA, "backward data"); }
static void paleo_vgg16_backward_filter(void) { paleo_vgg16(SEED_BWD_FILTER, CB_PHASE_BWD_FILTER, "backward filter"); }

static cb_device h200_like(void) {
    cb_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "gpu");
    snprintf(d.kind, sizeof d.kind, "gpu");
    d.clock_mhz = 1980;
    d.peak[CB_PREC_FP32] = 67e12;
    d.mem_bw = 4.8e12;
    d.launch_s = 5e-6;
    return d;
}

// algorithm choice: Winograd for a big 3x3 on a GPU; only GEMM on an uncalibrated CPU
static void algorithm_choice(void) {
    cb_net *net = conv_net(32, 56, 256, 256, 3, 1, "[1, 1]");
    if (!net) {
        CHECK(0, "load");
        return;
    }
    cb_device g = h200_like(), c = h200_like();
    snprintf(c.kind, sizeof c.kind, "cpu");
    cb_model_opts mo = {CB_PREC_FP32};
    cb_pred p;
    cb_predict_layer(&g, net, 1, CB_PHASE_FORWARD, &mo, &p);
    CHECK(p.algo == CB_ALGO_WINOGRAD, "gpu picks %s", cb_algo_name(p.algo));
    cb_predict_layer(&c, net, 1, CB_PHASE_FORWARD, &mo, &p);
    CHECK(p.algo == CB_ALGO_GEMM, "cpu picks %s", cb_algo_name(p.algo));
    cb_predict_layer(&g, net, 1, CB_PHASE_BWD_DATA, &mo, &p);
    CHECK(p.ms == 0, "no data gradient for a layer fed by the input");
    cb_net_free(net);
}

static void allreduce_schemes(void) {
    cb_link l = {"l", "", 10e9, 1e-6};
    CHECK(cb_allreduce_s(CB_AR_RING, 1, 1e9, &l) == 0, "one worker: no communication");
    CHECK(close_rel(cb_allreduce_s(CB_AR_RING, 4, 1e9, &l), 2 * 0.75 * 0.1 + 6e-6, 1e-12), "ring");
    CHECK(close_rel(cb_allreduce_s(CB_AR_TREE, 8, 1e9, &l), 2 * cb_allreduce_s(CB_AR_BUTTERFLY, 8, 1e9, &l), 1e-12), "tree = 2 x butterfly");
    CHECK(close_rel(cb_allreduce_s(CB_AR_BUTTERFLY, 5, 1e9, &l), 3 * (0.1 + 1e-6), 1e-12), "butterfly ceil(log2 5) = 3");
}

static void simulation_invariants(void) {
    cb_net *net = vgg16_paleo();
    if (!net) {
        CHECK(0, "load");
        return;
    }
    cb_device d = h200_like();
    cb_link slow = {"slow", "", 1.25e9, 20e-6}, fast = {"fast", "", 50e9, 0.6e-6};
    int w[] = {1, 2, 4, 8, 16, 128};
    cb_sim_step a[6], b[6];
    cb_error err = {0};
    for (int par = 0; par < CB_PAR_COUNT; par++)
        for (int ar = 0; ar < CB_AR_COUNT; ar++)
            for (int strong = 0; strong < 2; strong++) {
                cb_sim_opts o = {(cb_parallel)par, (cb_allreduce)ar, strong, false, false, {CB_PREC_FP32}, CB_PREC_FP32};
                CHECK(cb_simulate(net, &d, &slow, &o, w, 6, a, &err) == CB_OK, "%s", err.msg);
                CHECK(cb_simulate(net, &d, &fast, &o, w, 6, b, &err) == CB_OK, "%s", err.msg);
                for (int k = 0; k < 6; k++)
                    CHECK(b[k].total_ms <= a[k].total_ms * (1 + 1e-12), "par %d ar %d workers %d: faster link slower %g > %g", par,
                          ar, w[k], b[k].total_ms, a[k].total_ms);
            }
    // one worker equals the single-device training step
    cb_sim_opts o = {CB_PAR_DATA, CB_AR_RING, false, false, false, {CB_PREC_FP32}, CB_PREC_FP32};
    cb_simulate(net, &d, &slow, &o, w, 1, a, &err);
    double step = 0;
    for (int i = 1; i < net->nlayers; i++)
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
            cb_pred p;
            cb_predict_layer(&d, net, i, (cb_phase)ph, &o.model, &p);
            step += p.ms;
        }
    cb_pred u;
    cb_predict_update(&d, net, &o.model, &u);
    step += u.ms;
    CHECK(close_rel(a[0].total_ms, step, 1e-12) && a[0].comm_ms == 0 && a[0].speedup == 1, "one worker %g vs %g", a[0].total_ms, step);
    CHECK(cb_net_batch(net) == 64, "batch restored");
    // overlap never slower
    o.overlap = true;
    cb_simulate(net, &d, &slow, &o, w, 6, b, &err);
    o.overlap = false;
    cb_simulate(net, &d, &slow, &o, w, 6, a, &err);
    for (int k = 0; k < 6; k++) CHECK(b[k].total_ms <= a[k].total_ms, "overlap workers %d", w[k]);
    cb_net_free(net);
}

// --grad-precision bf16: half the bytes all-reduced, plus each worker's casts there and back
static void simulation_grad_precision(void) {
    cb_net *net = vgg16_paleo();
    if (!net) {
        CHECK(0, "load");
        return;
    }
    cb_device d = h200_like();
    cb_link l = {"l", "", 50e9, 1e-6};
    int w[] = {1, 4};
    cb_sim_step a[2], b[2];
    cb_error err = {0};
    cb_sim_opts o = {CB_PAR_DATA, CB_AR_RING, false, false, false, {CB_PREC_FP32}, CB_PREC_FP32};
    CHECK(cb_simulate(net, &d, &l, &o, w, 2, a, &err) == CB_OK, "%s", err.msg);
    o.grad_precision = CB_PREC_BF16;
    CHECK(cb_simulate(net, &d, &l, &o, w, 2, b, &err) == CB_OK, "%s", err.msg);
    double g = 0; // gradients all-reduced
    for (int i = 1; i < net->nlayers; i++) {
        cb_cost c;
        cb_layer_cost(net, i, &c);
        g += (double)(c.params - c.bn_params);
    }
    CHECK(close_rel(a[1].comm_ms, cb_allreduce_s(CB_AR_RING, 4, 4 * g, &l) * 1e3, 1e-12), "fp32: 4 bytes a gradient, %g ms", a[1].comm_ms);
    double want = cb_allreduce_s(CB_AR_RING, 4, 2 * g, &l) * 1e3 + 12 * g / cb_model_bw(&d) * 1e3;
    CHECK(close_rel(b[1].comm_ms, want, 1e-12), "bf16: 2 bytes a gradient and the casts, %g ms vs %g", b[1].comm_ms, want);
    CHECK(b[1].comm_ms < a[1].comm_ms && b[1].compute_ms == a[1].compute_ms, "bf16 all-reduces faster, computes the same");
    CHECK(a[0].comm_ms == 0 && b[0].comm_ms == 0 && a[0].total_ms == b[0].total_ms, "one worker: no all-reduce, no casts");
    cb_net_free(net);
}

// a small JSON file in /tmp for the readers below; false when it cannot be written
static bool write_tmp(char *path, size_t n, const char *tag, const char *text) {
    snprintf(path, n, "/tmp/cb-test-model-%s-%ld.json", tag, (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fputs(text, f);
    return fclose(f) == 0;
}

// the interconnect calibrate stores: fitted as simulate --interconnect fits it, written into the
// device entry and read back exactly, malformed ones refused naming the file, carried by transfer
static void stored_interconnect(void) {
    // a fake `allreduce --format json` on 4 GPUs over 100 GB/s and 3 us: t = 2(n-1)/n m/B + 2(n-1) a
    const double bw = 100e9, lat = 3e-6;
    const int n = 4;
    double m[6], t[6];
    char text[2048], path[128];
    int len = snprintf(text, sizeof text, "{\"verb\": \"allreduce\", \"gpus\": %d, \"tables\": {\"allreduce\": [", n);
    for (int k = 0; k < 6; k++) {
        m[k] = 1024.0 * (1 << (3 * k));
        t[k] = 2.0 * (n - 1) / n * m[k] / bw + 2.0 * (n - 1) * lat;
        len += snprintf(text + len, sizeof text - (size_t)len, "%s{\"bytes\": %.17g, \"time_us\": %.17g}", k ? ", " : "", m[k], t[k] * 1e6);
    }
    snprintf(text + len, sizeof text - (size_t)len, "]}}");
    CHECK(write_tmp(path, sizeof path, "ar", text), "cannot write %s", path);
    cb_link l, fit;
    cb_error err = {0};
    CHECK(cb_link_from_allreduce(path, &l, &err) == CB_OK, "%s", err.msg);
    CHECK(close_rel(l.bw, bw, 1e-9) && close_rel(l.latency_s, lat, 1e-6), "fitted %g B/s, %g s", l.bw, l.latency_s);
    CHECK(strstr(l.source, path) != NULL, "the source names the file: %s", l.source);
    CHECK(cb_link_fit(m, t, 6, n, NULL, "sweep", &fit, &err) == CB_OK && close_rel(fit.bw, l.bw, 1e-9) && close_rel(fit.latency_s, l.latency_s, 1e-6) &&
              !strcmp(fit.source, "sweep"),
          "the same fit (the file's times went through microseconds)");
    CHECK(cb_link_fit(m, t, 1, n, "src", "x", &fit, &err) == CB_STATUS_PARSE && strstr(err.msg, "src: needs at least two"), "%s", err.msg);
    CHECK(cb_link_fit(m, t, 6, 1, "src", "x", &fit, &err) == CB_STATUS_PARSE && strstr(err.msg, "at least 2"), "%s", err.msg);
    remove(path);
    // into a device entry, through its text, and back
    cb_device dv = h200_like(), back;
    cJSON *j = cb_device_to_json(&dv);
    CHECK(!cJSON_GetObjectItemCaseSensitive(j, "interconnect"), "none stored without one");
    cJSON_Delete(j);
    dv.interconnect = l;
    j = cb_device_to_json(&dv);
    char *printed = cJSON_Print(j);
    cJSON_Delete(j);
    j = printed ? cJSON_Parse(printed) : NULL;
    free(printed);
    CHECK(j && cb_device_from_json(j, &back, "cal.json", &err) == CB_OK, "%s", err.msg);
    cJSON_Delete(j);
    CHECK(back.interconnect.bw == l.bw && back.interconnect.latency_s == l.latency_s && !strcmp(back.interconnect.name, "measured") &&
              !strcmp(back.interconnect.source, l.source),
          "read back: %.17g B/s, %.17g s, '%s'", back.interconnect.bw, back.interconnect.latency_s, back.interconnect.name);
    const char *bad[] = {"\"interconnect\": {\"bw\": 0, \"latency_s\": 1e-6}", "\"interconnect\": \"nvlink4\"",
                         "\"interconnect\": {\"latency_s\": 1e-6}", "\"interconnect\": {\"bw\": 1e9, \"latency_s\": -1}",
                         "\"interconnect\": {\"bw\": \"fast\"}"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(text, sizeof text, "{\"name\": \"x\", \"peak\": {\"fp32\": 1e12}, \"mem_bw\": 1e11, %s}", bad[k]);
        j = cJSON_Parse(text);
        err = (cb_error){0};
        CHECK(j && cb_device_from_json(j, &back, "cal.json", &err) == CB_STATUS_PARSE && strstr(err.msg, "cal.json: ") &&
                  strstr(err.msg, "interconnect") && !strchr(err.msg, '\n'),
              "%s: %s", bad[k], err.msg);
        cJSON_Delete(j);
    }
    // a named device with the calibration carried onto it keeps the machine's link
    cb_device named = h200_like();
    cb_device_transfer_calibration(&named, &dv, "c.json");
    CHECK(named.interconnect.bw == l.bw && named.interconnect.latency_s == l.latency_s, "transferred");
}

// simulate --measure refuses a fullpass result of the other gradient precision
static void measured_grad_precision(void) {
    const char *head = "{\"verb\": \"fullpass\", \"network\": \"resnet50\", \"scaling\": \"weak\", \"batch_per_gpu\": 64, "
                       "\"global_batch\": 128, %s\"tables\": {\"scaling\": [{\"gpus\": 1, \"step_ms\": 10}, {\"gpus\": 2, \"step_ms\": 11}]}}";
    char text[512], path[128];
    cb_measured_step st[4];
    int n = 0;
    cb_error err = {0};
    snprintf(text, sizeof text, head, "\"grad_precision\": \"bf16\", ");
    CHECK(write_tmp(path, sizeof path, "fp", text), "cannot write %s", path);
    CHECK(cb_measured_steps(path, "resnet50", 64, false, CB_PREC_BF16, st, 4, &n, &err) == CB_OK && n == 2, "%s", err.msg);
    CHECK(cb_measured_steps(path, "resnet50", 64, false, CB_PREC_FP32, st, 4, &n, &err) == CB_STATUS_ARG &&
              strstr(err.msg, "measured with --grad-precision bf16, simulated with fp32"),
          "%s", err.msg);
    snprintf(text, sizeof text, head, ""); // written before --grad-precision: fp32
    CHECK(write_tmp(path, sizeof path, "fp", text), "cannot write %s", path);
    CHECK(cb_measured_steps(path, "resnet50", 64, false, CB_PREC_FP32, st, 4, &n, &err) == CB_OK && n == 2, "%s", err.msg);
    CHECK(cb_measured_steps(path, "resnet50", 64, false, CB_PREC_BF16, st, 4, &n, &err) == CB_STATUS_ARG, "%s", err.msg);
    snprintf(text, sizeof text, head, "\"grad_precision\": \"tf32\", ");
    CHECK(write_tmp(path, sizeof path, "fp", text), "cannot write %s", path);
    CHECK(cb_measured_steps(path, "resnet50", 64, false, CB_PREC_FP32, st, 4, &n, &err) == CB_STATUS_PARSE && strstr(err.msg, path),
          "%s", err.msg);
    remove(path);
}

// ---- GPU calibration: forms, fit, prediction ---------------------------------------------------

// cuDNN's names map to forms; the non-fused Winograd takes 5x5 (a = 8 for F(4x4, 5x5))
static void named_forms(void) {
    cb_algo_form f;
    CHECK(cb_algo_form_of("FWD_FFT_TILING", &f) && f.family == CB_ALGO_FFT_TILING && f.tile == 32, "fft tiling");
    CHECK(cb_algo_form_of("BWD_FILTER_ALGO_3", &f) && f.family == CB_ALGO_IMPLICIT_GEMM, "wgrad algo 3");
    CHECK(cb_algo_form_of("FWD_WINOGRAD", &f) && f.fused && f.tile == 2, "fused winograd");
    CHECK(!cb_algo_form_of("FWD_NO_SUCH", &f), "unknown cuDNN name");
    CHECK(cb_algo_form_of("igemm-simt", &f) && f.family == CB_ALGO_IMPLICIT_GEMM, "own igemm");
    CHECK(cb_algo_form_of("cublas_fp32", &f) && f.family == CB_ALGO_GEMM, "cublas");
    CHECK(cb_algo_form_of("winograd-f2x2", &f) && f.family == CB_ALGO_WINOGRAD && f.max_filter == 3, "own winograd");
    CHECK(cb_algo_form_of("fft-cufft", &f) && f.family == CB_ALGO_FFT, "own fft");
#ifdef CB_HAVE_CUDA
    for (int j = 0; cb_cuda_conv_algos[j]; j++)
        CHECK(cb_algo_form_known(cb_cuda_conv_algos[j]->name), "own algorithm %s lacks a form in model/algos.c", cb_cuda_conv_algos[j]->name);
#endif
    cb_conv_params p = {.n = 2, .c = 8, .h = 16, .w = 16, .k = 4, .r = 5, .s = 5, .p = 16, .q = 16, .stride_h = 1, .stride_w = 1,
                        .pad_top = 2, .pad_left = 2, .groups = 1};
    cb_algo_cost c;
    cb_algo_form_of("FWD_WINOGRAD_NONFUSED", &f);
    cb_conv_cost(&p, CB_PHASE_FORWARD, &f, 4, 0, &c);
    double T = 2.0 * 4 * 4; // 2 images of 4 x 4 tiles of 4 x 4
    CHECK(c.applicable && c.mults == 64 * T * 8 * 4, "winograd 5x5 mults %g", c.mults);
    cb_algo_form_of("FWD_WINOGRAD", &f);
    cb_conv_cost(&p, CB_PHASE_FORWARD, &f, 4, 0, &c);
    CHECK(!c.applicable, "the fused Winograd takes 3x3 only");
    cb_algo_form_of("FWD_FFT", &f);
    p.h = p.w = 300, p.p = p.q = 300;
    cb_conv_cost(&p, CB_PHASE_FORWARD, &f, 4, 0, &c);
    CHECK(!c.applicable, "cuDNN's whole-image FFT stops at 256");
}

// wave quantisation: 64 x 64 output tiles over the SMs (the default form), and the other forms
static void wave_util(void) {
    cb_algo_form f = {.family = CB_ALGO_IMPLICIT_GEMM};
    cb_calibration cal = {.sms = 132};
    cb_conv_params p = {.n = 1, .c = 64, .h = 64, .w = 64, .k = 64, .r = 1, .s = 1, .p = 64, .q = 64, .stride_h = 1, .stride_w = 1, .groups = 1};
    // M = 4096, N = 64: 64 tiles on 132 SMs
    CHECK(close_rel(cb_conv_util(&p, CB_PHASE_FORWARD, &f, &cal), 64.0 / 132, 1e-12), "one partial wave");
    p.n = 3; // 192 tiles: two waves, the second 60 of 132
    CHECK(close_rel(cb_conv_util(&p, CB_PHASE_FORWARD, &f, &cal), 192.0 / 264, 1e-12), "two waves");
    CHECK(cb_conv_util(&p, CB_PHASE_BWD_FILTER, &f, &cal) == 1, "no wave term for the filter gradient");
    cal.wave_tile = 128; // M = 12288, N = 64: 96 x 1 tiles
    CHECK(close_rel(cb_conv_util(&p, CB_PHASE_FORWARD, &f, &cal), 96.0 / 132, 1e-12), "128 x 128 tiles");
    cal.wave_wgrad = 1; // K = 64, C*R*S = 64: one tile
    CHECK(close_rel(cb_conv_util(&p, CB_PHASE_BWD_FILTER, &f, &cal), 1.0 / 132, 1e-12), "the filter gradient's tiles");
    cal.wave_wgrad = 2; // the reduction N*P*Q = 3 * 4096 allows 3 splits of the one tile
    CHECK(close_rel(cb_conv_util(&p, CB_PHASE_BWD_FILTER, &f, &cal), 3.0 / 132, 1e-12), "split-K");
    cal.wave_tile = -1;
    CHECK(cb_conv_util(&p, CB_PHASE_FORWARD, &f, &cal) == 1, "no wave term at all");
    cal.wave_tile = 0;
    f.family = CB_ALGO_FFT;
    CHECK(cb_conv_util(&p, CB_PHASE_FORWARD, &f, &cal) == 1, "none for FFT");
}

// the fit recovers coefficients that generated the data, with and without its second term
static void nnls_recovers(void) {
    enum { N = 12 };
    double t[N], x1[N], x2[N], a, b1, b2;
    for (int i = 0; i < N; i++) {
        x1[i] = 1e9 * (1 + i * i);              // FLOPs
        x2[i] = 1e7 * (1 + (i * 7) % 5) * (i + 1); // bytes
        t[i] = 6e-6 + x1[i] / 40e12 + x2[i] / 2e12;
    }
    CHECK(cb_fit_nnls(t, x1, x2, N, &a, &b1, &b2), "fit");
    CHECK(close_rel(a, 6e-6, 1e-6) && close_rel(1 / b1, 40e12, 1e-6) && close_rel(1 / b2, 2e12, 1e-6), "a %g rate %g bw %g", a,
          1 / b1, 1 / b2);
    for (int i = 0; i < N; i++) t[i] = 3e-6 + x1[i] / 50e12; // no memory term: b2 must come out 0, not negative
    cb_fit_nnls(t, x1, x2, N, &a, &b1, &b2);
    CHECK(b2 == 0 && close_rel(a, 3e-6, 1e-6) && close_rel(1 / b1, 50e12, 1e-6), "a %g b1 %g b2 %g", a, b1, b2);
}

static cb_device gpu_device(void) {
    cb_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "gpu");
    snprintf(d.kind, sizeof d.kind, "gpu");
    d.clock_mhz = 1980;
    d.peak[CB_PREC_FP32] = 67e12;
    d.mem_bw = 4.8e12;
    d.launch_s = 5e-6;
    snprintf(d.cal.backend, sizeof d.cal.backend, "cudnn");
    d.cal.sms = 132;
    return d;
}

// samples made by a known model on the calibration grid; cb_cal_fit must give the model back
static void calibration_fit(void) {
    cb_conv_params sh[CB_CAL_MAX_SHAPES], ms[CB_CAL_MAX_SHAPES];
    int ns = cb_cal_conv_shapes(sh, CB_CAL_MAX_SHAPES), nm = cb_cal_mop_shapes(ms, CB_CAL_MAX_SHAPES), ng = 0, nu = 0;
    cb_cal_sample *s = calloc((size_t)(2 * ns + 3 * nm), sizeof *s);
    if (!s) abort();
    cb_device d = gpu_device();
    // dense shapes: 35 TFLOP/s; grouped ones (their own entry): 4 TFLOP/s; unaligned channels (their own,
    // with the dense entry's fixed cost): 20 TFLOP/s
    cb_cal_algo truth = {.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .rate = 35e12, .bw = 2.5e12, .overhead_s = 20e-6};
    cb_cal_algo truth_g = truth, truth_u = truth;
    truth_g.rate = 4e12, truth_g.overhead_s = 12e-6;
    truth_u.rate = 20e12;
    cb_algo_form_of(truth.name, &truth_u.form);
    cb_algo_form_of(truth.name, &truth.form);
    cb_algo_form_of(truth.name, &truth_g.form);
    int n = 0;
    for (int i = 0; i < ns; i++) {
        s[n] = (cb_cal_sample){.kind = CB_SAMPLE_CONV, .phase = CB_PHASE_FORWARD, .p = sh[i]};
        snprintf(s[n].name, sizeof s[n].name, "%s", truth.name);
        ng += sh[i].groups > 1, nu += cb_conv_unaligned(&sh[i]);
        s[n++].ms = 1e3 * cb_cal_algo_s(&d.cal, sh[i].groups > 1 ? &truth_g : cb_conv_unaligned(&sh[i]) ? &truth_u : &truth, &sh[i], false, NULL);
        s[n] = s[n - 1]; // an algorithm that never ran: no entry
        snprintf(s[n].name, sizeof s[n].name, "FWD_WINOGRAD");
        s[n++].ms = -1;
    }
    for (int i = 0; i < nm; i++) { // bn_bwd: 8 us + 5T / 2 TB/s + 1.5 ns per element of the plane
        s[n] = (cb_cal_sample){.kind = CB_SAMPLE_MOP, .name = "bn_bwd", .p = ms[i]};
        s[n++].ms = 1e3 * (8e-6 + cb_mop_bytes(CB_MOP_BN_BWD, &ms[i]) / 2e12 + 1.5e-9 * ms[i].n * ms[i].h * ms[i].w);
    }
    for (int i = 0; i < nm; i++) { // the same pass on bf16 NHWC storage: 5 us + its fp32 bytes / 3.5 TB/s + 0.5 ns a pixel
        s[n] = (cb_cal_sample){.kind = CB_SAMPLE_MOP, .name = "bn_bwd", .prec = CB_PREC_BF16, .p = ms[i]};
        s[n++].ms = 1e3 * (5e-6 + cb_mop_bytes(CB_MOP_BN_BWD, &ms[i]) / 3.5e12 + 0.5e-9 * ms[i].n * ms[i].h * ms[i].w);
    }
    cb_error err = {0};
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK, "%s", err.msg);
    CHECK(ng >= 6 && nu >= CB_CAL_MIN_UNALIGNED && d.cal.nalgo == 3, "a dense, an unaligned and a grouped entry, got %d (%d grouped, %d unaligned shapes)",
          d.cal.nalgo, ng, nu);
    const cb_cal_algo *a = &d.cal.algo[0], *g = &d.cal.algo[1], *u = &d.cal.algo[2]; // the unaligned entries last
    CHECK(!strcmp(a->name, truth.name) && !a->grouped && !a->unaligned && a->n == ns - ng - nu && a->excluded == 0, "entry %s n %d", a->name, a->n);
    CHECK(u->unaligned && !u->grouped && u->n == nu && close_rel(u->rate, truth_u.rate, 1e-6) && close_rel(u->overhead_s, truth_u.overhead_s, 1e-6),
          "unaligned entry n %d rate %g overhead %g", u->n, u->rate, u->overhead_s);
    CHECK(close_rel(a->rate, truth.rate, 1e-6) && close_rel(a->bw, truth.bw, 1e-6) && close_rel(a->overhead_s, truth.overhead_s, 1e-6),
          "rate %g bw %g overhead %g", a->rate, a->bw, a->overhead_s);
    CHECK(!strcmp(g->name, truth.name) && g->grouped && g->n == ng && close_rel(g->rate, truth_g.rate, 1e-6) &&
              close_rel(g->overhead_s, truth_g.overhead_s, 1e-6),
          "grouped entry n %d rate %g overhead %g", g->n, g->rate, g->overhead_s);
    CHECK(close_rel(a->eff, 35.0 / 67, 1e-6) && a->err_p90_pct < 1e-3, "eff %g p90 %g", a->eff, a->err_p90_pct);
    const cb_cal_mop *o = &d.cal.mop[CB_MOP_BN_BWD];
    CHECK(o->n == nm && close_rel(o->bw, 2e12, 1e-6) && close_rel(o->overhead_s, 8e-6, 1e-6) && close_rel(o->plane_s, 1.5e-9, 1e-6),
          "bn_bwd bw %g overhead %g plane %g", o->bw, o->overhead_s, o->plane_s);
    // the bf16 samples fit their own entry (mop16), apart from fp32's; a pass without one has none
    const cb_cal_mop *o16 = &d.cal.mop16[CB_MOP_BN_BWD];
    CHECK(o16->n == nm && close_rel(o16->bw, 3.5e12, 1e-6) && close_rel(o16->overhead_s, 5e-6, 1e-6) && close_rel(o16->plane_s, 0.5e-9, 1e-6) &&
              d.cal.mop16[CB_MOP_BN_FWD].n == 0 && cb_cal_mop16_s(&d.cal, CB_MOP_BN_FWD, &ms[0]) == -1,
          "bf16 bn_bwd n %d bw %g overhead %g plane %g", o16->n, o16->bw, o16->overhead_s, o16->plane_s);
    // a batch norm layer on bf16 storage is priced from that entry; fp32 NHWC from fp32's
    {
        cb_net *bn = json_net("{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [16, 30, 30, 48]},"
                              "\"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1, 1, 48, 48], \"padding\": \"SAME\","
                              "\"activation_fn\": null, \"bias\": false},"
                              "\"bn\": {\"parents\": [\"c\"], \"type\": \"BatchNorm\"},"
                              "\"c2\": {\"parents\": [\"bn\"], \"type\": \"Convolution\", \"filter\": [1, 1, 48, 8], \"padding\": \"SAME\","
                              "\"activation_fn\": null, \"bias\": false}}}");
        cb_model_opts b16 = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false}, f32 = {CB_PREC_FP32, 0, false, CB_LAYOUT_NHWC, false, false};
        cb_pred pb, pf;
        int i = bn ? cb_net_find(bn, "bn") : -1;
        if (i > 0) {
            cb_predict_layer(&d, bn, i, CB_PHASE_BWD_DATA, &b16, &pb);
            cb_predict_layer(&d, bn, i, CB_PHASE_BWD_DATA, &f32, &pf);
            cb_conv_params t = {.n = 16, .c = 48, .h = 30, .w = 30, .p = 30, .q = 30};
            double want16 = cb_cal_mop16_s(&d.cal, CB_MOP_BN_BWD, &t), want32 = cb_cal_mop_s(&d.cal, CB_MOP_BN_BWD, &t);
            CHECK(close_rel(pb.ms, 1e3 * want16, 1e-6) && close_rel(pf.ms, 1e3 * want32, 1e-6), "bn backward: bf16 %g ms (want %g), fp32 %g (want %g)",
                  pb.ms, 1e3 * want16, pf.ms, 1e3 * want32);
        } else CHECK(0, "bn net");
        cb_net_free(bn);
    }
    // the entry and the samples survive JSON
    cJSON *j = cb_device_to_json(&d), *arr = cb_cal_samples_to_json(s, n);
    cb_device back;
    cb_cal_sample *s2 = NULL;
    int n2 = 0;
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.nalgo == 3 && back.cal.sms == 132 &&
              close_rel(back.cal.algo[0].rate, a->rate, 1e-12) && close_rel(back.cal.mop[CB_MOP_BN_BWD].plane_s, o->plane_s, 1e-12) &&
              !back.cal.algo[0].grouped && back.cal.algo[1].grouped && back.cal.algo[2].unaligned &&
              close_rel(back.cal.mop16[CB_MOP_BN_BWD].bw, o16->bw, 1e-12) && back.cal.mop16[CB_MOP_BN_BWD].n == nm && back.cal.mop16[CB_MOP_COPY].n == 0,
          "device round trip: %s", err.msg);
    CHECK(cb_cal_samples_from_json(arr, &s2, &n2, "test", &err) == CB_OK && n2 == n && s2 && s2[0].p.k == s[0].p.k &&
              s2[0].ms == s[0].ms && s2[1].ms == -1 && s2[n - 1].prec == CB_PREC_BF16,
          "samples round trip");
    free(s2);
    cJSON_Delete(j);
    cJSON_Delete(arr);
    free(s);
}

// the local form: samples of a known model, slowed 2.5x where a filter tap has 16 channels or fewer
// (what a roofline over FLOPs and bytes cannot express); the fit misses those shapes, the nearest
// samples' residuals correct them, a shape far from every sample keeps its fitted time, the form is
// off by default, and the residuals come back from the file's samples when it asks for the form
static void calibration_local(void) {
    cb_conv_params sh[CB_CAL_MAX_SHAPES];
    int ns = cb_cal_conv_shapes(sh, CB_CAL_MAX_SHAPES), n = 0;
    cb_cal_sample *s = calloc((size_t)ns, sizeof *s);
    if (!s) abort();
    cb_device d = gpu_device();
    cb_cal_algo truth = {.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .rate = 35e12, .bw = 2.5e12, .overhead_s = 20e-6};
    cb_algo_form_of(truth.name, &truth.form);
    const double slow = 2.5;
    for (int i = 0; i < ns; i++) {
        if (sh[i].groups > 1 || cb_conv_unaligned(&sh[i])) continue; // the dense entry alone
        s[n] = (cb_cal_sample){.kind = CB_SAMPLE_CONV, .phase = CB_PHASE_FORWARD, .p = sh[i]};
        snprintf(s[n].name, sizeof s[n].name, "%s", truth.name);
        s[n++].ms = 1e3 * cb_cal_algo_s(&d.cal, &truth, &sh[i], false, NULL) * (sh[i].c <= 16 ? slow : 1);
    }
    cb_error err = {0};
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK && d.cal.nalgo == 1, "%s", err.msg);
    CHECK(d.cal.nres == n, "a residual per sample: %d of %d", d.cal.nres, n);
    const cb_cal_algo *a = &d.cal.algo[0];
    // a narrow layer between the grid's: the first narrow sample at twice its batch
    int k = -1;
    for (int i = 0; i < n && k < 0; i++)
        if (s[i].p.c <= 16) k = i;
    CHECK(k >= 0, "the grid holds a narrow shape");
    if (k < 0) goto out;
    cb_conv_params p = s[k].p;
    p.n *= 2;
    double want = cb_cal_algo_s(&d.cal, &truth, &p, false, NULL) * slow; // (truth: local off in d.cal)
    double off = cb_cal_algo_s(&d.cal, a, &p, false, NULL);
    CHECK(cb_cal_local(&d.cal, a, &p, false) == 1, "the form is off by default");
    d.cal.local = 1;
    double on = cb_cal_algo_s(&d.cal, a, &p, false, NULL);
    CHECK(fabs(log(on / want)) < 0.8 * fabs(log(off / want)), "narrow layer: fitted %.4g ms, local %.4g, measured %.4g", 1e3 * off, 1e3 * on,
          1e3 * want);
    // far from every sample (2^20 times the rows): the fitted time
    cb_conv_params far = p;
    far.n *= 1 << 20;
    CHECK(fabs(cb_cal_local(&d.cal, a, &far, false) - 1) < 1e-6, "far shape: factor %g", cb_cal_local(&d.cal, a, &far, false));
    // the file: the form and the samples; the residuals made again on reading
    {
        cJSON *j = cb_device_to_json(&d);
        cJSON_AddItemToObject(j, "samples", cb_cal_samples_to_json(s, n));
        cb_device back;
        CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.local == 1 && back.cal.nres == n, "round trip: local %d, %d residuals, %s",
              back.cal.local, back.cal.nres, err.msg);
        CHECK(close_rel(cb_cal_algo_s(&back.cal, &back.cal.algo[0], &p, false, NULL), on, 1e-5), "the same prediction after the round trip");
        cJSON_Delete(j);
    }
out:
    free(s);
}

// cuDNN's fastest per calibrated shape (fit.c's with_best): two forward algorithms, each the faster
// on half the grid; the FWD_BEST entry holds the lesser time of each shape, the "best" form prices a
// layer by it alone (the default takes the least of the two fits), it survives the file, and a
// phase calibrated with one algorithm gets none (its fastest is itself)
static void calibration_best(void) {
    cb_conv_params sh[CB_CAL_MAX_SHAPES];
    int ns = cb_cal_conv_shapes(sh, CB_CAL_MAX_SHAPES), n = 0, nshape = 0;
    cb_cal_sample *s = calloc(3 * (size_t)ns, sizeof *s);
    if (!s) abort();
    cb_device d = gpu_device();
    cb_cal_algo t[2] = {{.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .rate = 30e12, .bw = 2e12, .overhead_s = 10e-6},
                        {.name = "FWD_GRAPH", .phase = CB_PHASE_FORWARD, .rate = 60e12, .bw = 3e12, .overhead_s = 12e-6}};
    for (int a = 0; a < 2; a++) cb_algo_form_of(t[a].name, &t[a].form);
    for (int i = 0; i < ns; i++) {
        if (sh[i].groups > 1 || cb_conv_unaligned(&sh[i])) continue; // the dense entries alone
        for (int a = 0; a < 2; a++) {
            s[n] = (cb_cal_sample){.kind = CB_SAMPLE_CONV, .phase = CB_PHASE_FORWARD, .p = sh[i]};
            snprintf(s[n].name, sizeof s[n].name, "%s", t[a].name);
            // the legacy algorithm three times faster on every other shape: each wins half
            s[n++].ms = 1e3 * cb_cal_algo_s(&d.cal, &t[a], &sh[i], false, NULL) * (a == 0 && nshape % 2 ? 1.0 / 6 : 1);
        }
        // one backward-data algorithm alone
        s[n] = (cb_cal_sample){.kind = CB_SAMPLE_CONV, .phase = CB_PHASE_BWD_DATA, .p = sh[i], .ms = s[n - 1].ms};
        snprintf(s[n++].name, sizeof s[n].name, "BWD_DATA_ALGO_1");
        nshape++;
    }
    cb_error err = {0};
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK, "%s", err.msg);
    const cb_cal_algo *best = NULL;
    bool bwd_best = false;
    for (int j = 0; j < d.cal.nalgo; j++) {
        if (!strcmp(d.cal.algo[j].name, "FWD_BEST")) best = &d.cal.algo[j];
        bwd_best |= !strcmp(d.cal.algo[j].name, "BWD_DATA_BEST");
    }
    CHECK(best && best->n == nshape && best->form.best && !best->form.graph, "FWD_BEST: %d samples of %d shapes", best ? best->n : -1, nshape);
    CHECK(!bwd_best, "no BWD_DATA_BEST from one algorithm");
    cb_net *net = conv_net(32, 28, 64, 64, 3, 1, "\"SAME\"");
    CHECK(net, "load");
    if (!net || !best) goto out;
    cb_model_opts mo = {CB_PREC_FP32, 0, true, CB_LAYOUT_NCHW, false, false};
    cb_pred p0, p1;
    cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &mo, &p0);
    CHECK(strcmp(p0.name, "FWD_BEST"), "the default form prices each algorithm: %s", p0.name);
    d.cal.best = 1;
    cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &mo, &p1);
    cb_conv_params cp;
    cb_conv_params_of(&net->layers[1], &cp);
    CHECK(!strcmp(p1.name, "FWD_BEST") && close_rel(p1.ms, 1e3 * cb_cal_algo_s(&d.cal, best, &cp, false, NULL), 1e-12),
          "the best form: %s %g ms", p1.name, p1.ms);
    {
        cJSON *j = cb_device_to_json(&d);
        cb_device back;
        CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.best == 1, "round trip: best %d, %s", back.cal.best, err.msg);
        cJSON_Delete(j);
    }
out:
    cb_net_free(net);
    free(s);
}

// the wave_both form: a throughput term on the FLOPs and a wave term on FLOPs / util, each with its
// own rate, both recovered from samples made by that model on the calibration grid
static void calibration_fit_apart(void) {
    cb_conv_params sh[CB_CAL_MAX_SHAPES];
    int ns = cb_cal_conv_shapes(sh, CB_CAL_MAX_SHAPES);
    cb_cal_sample *s = calloc((size_t)ns, sizeof *s);
    if (!s) abort();
    cb_device d = gpu_device();
    d.cal.wave_both = 1;
    cb_cal_algo truth = {.name = "BWD_DATA_ALGO_0", .phase = CB_PHASE_BWD_DATA, .rate = 40e12, .wave_rate = 90e12, .bw = 3e12,
                         .overhead_s = 15e-6};
    cb_algo_form_of(truth.name, &truth.form);
    int n = 0;
    for (int i = 0; i < ns; i++) {
        if (sh[i].groups > 1 || cb_conv_unaligned(&sh[i])) continue; // one dense entry
        s[n] = (cb_cal_sample){.kind = CB_SAMPLE_CONV, .phase = CB_PHASE_BWD_DATA, .p = sh[i]};
        snprintf(s[n].name, sizeof s[n].name, "%s", truth.name);
        s[n++].ms = 1e3 * cb_cal_algo_s(&d.cal, &truth, &sh[i], false, NULL);
    }
    cb_error err = {0};
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK && d.cal.nalgo == 1, "%s", err.msg);
    const cb_cal_algo *a = &d.cal.algo[0];
    CHECK(close_rel(a->rate, truth.rate, 1e-4) && close_rel(a->wave_rate, truth.wave_rate, 1e-4) && close_rel(a->bw, truth.bw, 1e-4) &&
              close_rel(a->overhead_s, truth.overhead_s, 1e-4),
          "rate %g wave rate %g bw %g overhead %g", a->rate, a->wave_rate, a->bw, a->overhead_s);
    // a problem of one tile runs at the wave rate's pace, far slower than the throughput term says
    cb_conv_params one = {.n = 1, .c = 64, .h = 8, .w = 8, .k = 64, .r = 3, .s = 3, .p = 8, .q = 8, .stride_h = 1, .stride_w = 1,
                          .pad_top = 1, .pad_left = 1, .groups = 1};
    cb_algo_cost c;
    double t = cb_cal_algo_s(&d.cal, a, &one, false, &c), util = cb_conv_util(&one, CB_PHASE_BWD_DATA, &a->form, &d.cal);
    CHECK(util < 0.01 && close_rel(t, a->overhead_s + c.flops / a->rate + c.flops / (a->wave_rate * util) + c.bytes / a->bw, 1e-12),
          "one tile: util %g, %g s", util, t);
    cJSON *j = cb_device_to_json(&d);
    cb_device back;
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.wave_both == 1 && back.cal.algo[0].wave_rate == a->wave_rate,
          "round trip: %s", err.msg);
    cJSON_Delete(j);
    free(s);
}

// the wave_fill form (cb_conv_fill): the tensor-core tiles' padded work, the reduction channels in
// slabs of CB_CONV_SLAB_BYTES and the tile's channels in whole wave tiles; then a bf16 forward entry
// whose samples on the calibration grid were made with that padding: fitted in the form, the stem
// shapes (C 8) are priced at their time; fitted on the useful FLOPs alone (the form before), they
// come out far short, as the H200's cuDNN stems did (0.17-0.30x in sample)
static void wave_fill(void) {
    cb_algo_form f;
    cb_algo_form_of("FWD_GRAPH", &f);
    cb_device d = gpu_device();
    d.cal.wave_fill = 1;
    cb_conv_params p = {.n = 32, .c = 8, .h = 64, .w = 64, .k = 64, .r = 7, .s = 7, .p = 32, .q = 32, .stride_h = 2, .stride_w = 2,
                        .pad_top = 3, .pad_left = 3, .groups = 1};
    CHECK(close_rel(cb_conv_fill(&p, CB_PHASE_FORWARD, CB_PREC_BF16, &f, &d.cal), 8.0 / 64, 1e-12), "bf16 forward: 8 of a 64-channel slab");
    CHECK(close_rel(cb_conv_fill(&p, CB_PHASE_FORWARD, CB_PREC_TF32, &f, &d.cal), 8.0 / 32, 1e-12), "tf32 forward: 8 of a 32-channel slab");
    CHECK(close_rel(cb_conv_fill(&p, CB_PHASE_BWD_DATA, CB_PREC_BF16, &f, &d.cal), 8.0 / 64, 1e-12), "backward data: 8 of a tile's 64 channels");
    p.c = 96, p.k = 48; // forward: 96 of 128 reduced, 48 of 64 in the tile; backward data: 48 of 64, 96 of 128
    CHECK(close_rel(cb_conv_fill(&p, CB_PHASE_FORWARD, CB_PREC_BF16, &f, &d.cal), 0.75 * 0.75, 1e-12), "both paddings");
    CHECK(close_rel(cb_conv_fill(&p, CB_PHASE_BWD_DATA, CB_PREC_BF16, &f, &d.cal), 0.75 * 0.75, 1e-12), "both paddings, backward data");
    CHECK(cb_conv_fill(&p, CB_PHASE_FORWARD, CB_PREC_FP32, &f, &d.cal) == 1, "none for fp32");
    CHECK(cb_conv_fill(&p, CB_PHASE_BWD_FILTER, CB_PREC_BF16, &f, &d.cal) == 1, "none for the filter gradient");
    d.cal.wave_tile = -1;
    CHECK(cb_conv_fill(&p, CB_PHASE_FORWARD, CB_PREC_BF16, &f, &d.cal) == 1, "none without a wave term");
    d.cal.wave_tile = 0, d.cal.wave_fill = 0;
    CHECK(cb_conv_fill(&p, CB_PHASE_FORWARD, CB_PREC_BF16, &f, &d.cal) == 1, "none in the form before");
    d.cal.wave_fill = 1;

    cb_conv_params sh[CB_CAL_MAX_SHAPES];
    int ns = cb_cal_conv_shapes(sh, CB_CAL_MAX_SHAPES), n = 0, stem = -1;
    cb_cal_sample *s = calloc((size_t)ns, sizeof *s);
    if (!s) abort();
    cb_cal_algo truth = {.name = "FWD_GRAPH", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_BF16, .wave_rate = 700e12, .bw = 4e12,
                         .overhead_s = 6e-6};
    truth.form = f;
    for (int i = 0; i < ns; i++) {
        if (sh[i].c < 8) sh[i].c = 8; // (the stems as bf16 NHWC storage runs them: on the channel-padded copy)
        if (sh[i].groups > 1 || cb_conv_unaligned(&sh[i])) continue; // one dense entry
        if (sh[i].c == 8 && stem < 0) stem = i;
        s[n] = (cb_cal_sample){.kind = CB_SAMPLE_CONV, .phase = CB_PHASE_FORWARD, .prec = CB_PREC_BF16, .p = sh[i]};
        snprintf(s[n].name, sizeof s[n].name, "%s", truth.name);
        s[n++].ms = 1e3 * cb_cal_algo_s(&d.cal, &truth, &sh[i], false, NULL);
    }
    CHECK(stem >= 0, "the grid holds a stem of 8 channels");
    if (stem < 0) goto out;
    cb_error err = {0};
    double want = 1e3 * cb_cal_algo_s(&d.cal, &truth, &sh[stem], false, NULL);
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK && d.cal.nalgo == 1, "%s", err.msg);
    double got = 1e3 * cb_cal_algo_s(&d.cal, &d.cal.algo[0], &sh[stem], false, NULL);
    CHECK(close_rel(got, want, 1e-3) && d.cal.algo[0].err_p90_pct < 0.1, "in the form: the stem %g ms of %g, p90 %g%%", got, want,
          d.cal.algo[0].err_p90_pct);
    {
        cJSON *j = cb_device_to_json(&d);
        cb_device back;
        CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.wave_fill == 1, "round trip: wave_fill %d, %s",
              back.cal.wave_fill, err.msg);
        cJSON_Delete(j);
    }
    d.cal.wave_fill = 0; // the form before: the useful FLOPs
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK && d.cal.nalgo == 1, "%s", err.msg);
    got = 1e3 * cb_cal_algo_s(&d.cal, &d.cal.algo[0], &sh[stem], false, NULL);
    CHECK(got < 0.5 * want, "without it the stem comes out short: %g ms of %g", got, want);
out:
    free(s);
}

// the fixed cost per call as a pass sees it: idle-timed samples lose the idle launch latency
// (launch_overlap 1), keep it in the default form (0), and stream-timed ones need nothing taken off
static void launch_overlap(void) {
    cb_device d = gpu_device();
    d.cal.launch_s = 8e-6;
    d.cal.launch_overlap = 1;
    CHECK(close_rel(cb_cal_fixed_s(&d.cal, 20e-6), 12e-6, 1e-12), "idle: 20 - 8 us, got %g", cb_cal_fixed_s(&d.cal, 20e-6));
    CHECK(cb_cal_fixed_s(&d.cal, 5e-6) == 0, "never below 0");
    cb_cal_algo a = {.name = "FWD_IMPLICIT_GEMM", .phase = CB_PHASE_FORWARD, .rate = 20e12, .overhead_s = 20e-6};
    cb_algo_form_of(a.name, &a.form);
    cb_conv_params p = {.n = 1, .c = 16, .h = 8, .w = 8, .k = 16, .r = 1, .s = 1, .p = 8, .q = 8, .stride_h = 1, .stride_w = 1, .groups = 1};
    double hidden = cb_cal_algo_s(&d.cal, &a, &p, false, NULL);
    d.cal.mop[CB_MOP_COPY] = (cb_cal_mop){.bw = 2e12, .overhead_s = 9e-6, .n = 1};
    double mop_hidden = cb_cal_mop_s(&d.cal, CB_MOP_COPY, &p);
    d.cal.launch_overlap = 0; // the default: the idle fixed costs whole
    double whole = cb_cal_algo_s(&d.cal, &a, &p, false, NULL), mop_whole = cb_cal_mop_s(&d.cal, CB_MOP_COPY, &p);
    CHECK(close_rel(whole - hidden, 8e-6, 1e-9) && close_rel(mop_whole - mop_hidden, 8e-6, 1e-9), "conv %g - %g, copy %g - %g", whole,
          hidden, mop_whole, mop_hidden);
    d.cal.launch_overlap = 1, d.cal.stream_timed = true;
    CHECK(cb_cal_algo_s(&d.cal, &a, &p, false, NULL) == whole, "stream-timed samples: the fitted fixed cost as it is");
    // both survive JSON (the old entries have neither: idle timing, launch not hidden)
    cJSON *j = cb_device_to_json(&d);
    cb_device back;
    cb_error err = {0};
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.stream_timed && back.cal.launch_overlap == 1, "round trip: %s",
          err.msg);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "calibration"), "timing");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "calibration"), "launch_hidden");
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && !back.cal.stream_timed && back.cal.launch_overlap == 0, "old entry");
    cJSON_Delete(j);
}

// a grouped (depthwise) convolution is priced by the grouped entries when there are any, else by the dense ones
static void grouped_entries(void) {
    const char *json = "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 20, 20, 64]},"
                       "\"dw\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 1, 64], \"padding\": [1, 1],"
                       "\"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"bias\": false, \"groups\": 64},"
                       "\"pw\": {\"parents\": [\"dw\"], \"type\": \"Convolution\", \"filter\": [1, 1, 64, 64], \"padding\": [0, 0],"
                       "\"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"bias\": false}}}";
    cb_net *net = json_net(json);
    CHECK(net, "load");
    if (!net) return;
    cb_device d = gpu_device();
    const cb_cal_algo algos[] = {{.name = "FWD_IMPLICIT_GEMM", .phase = CB_PHASE_FORWARD, .rate = 30e12, .overhead_s = 10e-6},
                                 {.name = "FWD_GEMM", .phase = CB_PHASE_FORWARD, .rate = 2e12, .overhead_s = 7e-6, .grouped = true}};
    set_algos(&d, algos, 2);
    cb_cal_algo *a = d.cal.algo;
    cb_model_opts mo = {CB_PREC_FP32, 0, true, CB_LAYOUT_NCHW, false, false};
    cb_pred dw, pw;
    cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &mo, &dw);
    cb_predict_layer(&d, net, 2, CB_PHASE_FORWARD, &mo, &pw);
    CHECK(!strcmp(dw.name, "FWD_GEMM") && !strcmp(pw.name, "FWD_IMPLICIT_GEMM"), "depthwise %s, pointwise %s", dw.name, pw.name);
    cb_conv_params p;
    cb_conv_params_of(&net->layers[1], &p);
    CHECK(p.groups == 64 && close_rel(dw.ms, 1e3 * cb_cal_algo_s(&d.cal, &a[1], &p, false, NULL), 1e-12), "depthwise %g ms", dw.ms);
    a[1].grouped = false, a[1].rate = 1e12; // no grouped entry: the dense ones, fastest first
    cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &mo, &dw);
    CHECK(!strcmp(dw.name, "FWD_IMPLICIT_GEMM"), "dense entries for a grouped layer without its own: %s", dw.name);
    // the calibration grid's grouped shapes are valid: channels and filters divide by the groups
    cb_conv_params sh[CB_CAL_MAX_SHAPES];
    int ns = cb_cal_conv_shapes(sh, CB_CAL_MAX_SHAPES), ng = 0;
    for (int i = 0; i < ns; i++) {
        CHECK(sh[i].groups >= 1 && sh[i].c % sh[i].groups == 0 && sh[i].k % sh[i].groups == 0, "shape %d groups %d", i, sh[i].groups);
        ng += sh[i].groups > 1;
    }
    CHECK(ng >= 6 && ns <= CB_CAL_MAX_SHAPES, "%d grouped of %d shapes", ng, ns);
    cb_net_free(net);
}

// cuDNN's graph-API race (calibrate's FWD_GRAPH, ... in tf32 and bf16): an entry the model races
// against the legacy algorithms, as the backend does, for an ungrouped convolution; a grouped one
// keeps the legacy entries (the backend builds no graph plan for it)
static void graph_entries(void) {
    cb_algo_form f;
    CHECK(cb_algo_form_of("FWD_GRAPH", &f) && f.graph && f.family == CB_ALGO_IMPLICIT_GEMM && cb_algo_form_known("BWD_FILTER_GRAPH"),
          "graph forms");
    const char *json = "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 20, 20, 64]},"
                       "\"g\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 16, 64], \"padding\": [1, 1],"
                       "\"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"bias\": false, \"groups\": 4},"
                       "\"pw\": {\"parents\": [\"g\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 64], \"padding\": [1, 1],"
                       "\"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"bias\": false}}}";
    cb_net *net = json_net(json);
    CHECK(net, "load");
    if (!net) return;
    cb_device d = gpu_device();
    const cb_cal_algo algos[] = {
        {.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_TF32, .rate = 30e12, .overhead_s = 10e-6},
        {.name = "FWD_GRAPH", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_TF32, .rate = 90e12, .overhead_s = 8e-6}};
    set_algos(&d, algos, 2);
    cb_model_opts mo = {CB_PREC_TF32, 0, true, CB_LAYOUT_NCHW, false, false};
    cb_pred g, pw;
    cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &mo, &g);
    cb_predict_layer(&d, net, 2, CB_PHASE_FORWARD, &mo, &pw);
    CHECK(!strcmp(pw.name, "FWD_GRAPH") && !strcmp(g.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "ungrouped %s, grouped %s", pw.name, g.name);
    cb_conv_params p;
    cb_conv_params_of(&net->layers[2], &p);
    CHECK(close_rel(pw.ms, 1e3 * cb_cal_algo_s(&d.cal, &d.cal.algo[1], &p, false, NULL), 1e-12), "graph entry's price %g ms", pw.ms);
    d.cal.algo[1].rate = 3e12; // slower than the legacy pick: the race keeps the legacy algorithm
    cb_predict_layer(&d, net, 2, CB_PHASE_FORWARD, &mo, &pw);
    CHECK(!strcmp(pw.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "the faster wins: %s", pw.name);
    cb_net_free(net);
}

// channels that are not multiples of 4: priced by the unaligned entries where the calibration has
// them, else by the dense ones; an algorithm with fewer than CB_CAL_MIN_UNALIGNED unaligned
// samples gets no entry of its own (they join its dense fit)
static void unaligned_entries(void) {
    cb_net *odd = conv_net(8, 28, 61, 96, 3, 1, "[1, 1]"), *even = conv_net(8, 28, 64, 96, 3, 1, "[1, 1]");
    CHECK(odd && even, "load");
    if (!odd || !even) return;
    cb_device d = gpu_device();
    cb_cal_algo *a = d.cal.algo;
    a[0] = (cb_cal_algo){.name = "FWD_IMPLICIT_GEMM", .phase = CB_PHASE_FORWARD, .rate = 30e12, .overhead_s = 10e-6};
    a[1] = (cb_cal_algo){.name = "FWD_IMPLICIT_GEMM", .phase = CB_PHASE_FORWARD, .rate = 10e12, .overhead_s = 10e-6, .unaligned = true};
    for (int k = 0; k < 2; k++) cb_algo_form_of(a[k].name, &a[k].form);
    d.cal.nalgo = 2;
    cb_model_opts mo = {CB_PREC_FP32, 0, true, CB_LAYOUT_NCHW, false, false};
    cb_pred po, pe;
    cb_predict_layer(&d, odd, 1, CB_PHASE_FORWARD, &mo, &po);
    cb_predict_layer(&d, even, 1, CB_PHASE_FORWARD, &mo, &pe);
    cb_conv_params p;
    cb_conv_params_of(&odd->layers[1], &p);
    CHECK(cb_conv_unaligned(&p) && close_rel(po.ms, 1e3 * cb_cal_algo_s(&d.cal, &a[1], &p, false, NULL), 1e-12), "odd channels: %g ms", po.ms);
    cb_conv_params_of(&even->layers[1], &p);
    CHECK(!cb_conv_unaligned(&p) && close_rel(pe.ms, 1e3 * cb_cal_algo_s(&d.cal, &a[0], &p, false, NULL), 1e-12), "aligned: %g ms", pe.ms);
    d.cal.nalgo = 1; // no unaligned entry: the dense one
    cb_predict_layer(&d, odd, 1, CB_PHASE_FORWARD, &mo, &po);
    cb_conv_params_of(&odd->layers[1], &p);
    CHECK(close_rel(po.ms, 1e3 * cb_cal_algo_s(&d.cal, &a[0], &p, false, NULL), 1e-12), "odd channels, dense entry: %g ms", po.ms);
    // a fit: 11 unaligned samples join the dense fit, 12 make an entry
    cb_cal_sample s[40];
    for (int nu = CB_CAL_MIN_UNALIGNED - 1; nu <= CB_CAL_MIN_UNALIGNED; nu++) {
        int n = 0;
        for (int i = 0; i < 20 + nu; i++) {
            cb_conv_params q = {.n = 8 + i, .c = i < 20 ? 64 : 61, .h = 20, .w = 20, .k = 96 + 8 * (i % 5), .r = 3, .s = 3, .p = 20, .q = 20,
                                .stride_h = 1, .stride_w = 1, .pad_top = 1, .pad_left = 1, .groups = 1};
            s[n] = (cb_cal_sample){.kind = CB_SAMPLE_CONV, .phase = CB_PHASE_FORWARD, .p = q, .name = "FWD_IMPLICIT_GEMM"};
            s[n++].ms = 1e3 * (cb_cal_algo_s(&d.cal, &a[i < 20 ? 0 : 1], &q, false, NULL) + (i < 20 ? 0 : 20e-6));
        }
        cb_device f = gpu_device();
        cb_error err = {0};
        CHECK(cb_cal_fit(s, n, &f, &err) == CB_OK, "%s", err.msg);
        bool apart = nu >= CB_CAL_MIN_UNALIGNED;
        CHECK(f.cal.nalgo == (apart ? 2 : 1) && f.cal.algo[0].n == (apart ? 20 : n) && (!apart || (f.cal.algo[1].unaligned && f.cal.algo[1].n == nu)),
              "%d unaligned samples: %d entries", nu, f.cal.nalgo);
        // the unaligned entry keeps the dense entry's fixed cost, though its samples had 30 us
        CHECK(!apart || (close_rel(f.cal.algo[0].overhead_s, 10e-6, 1e-6) && f.cal.algo[1].overhead_s == f.cal.algo[0].overhead_s),
              "fixed costs %g, %g", f.cal.algo[0].overhead_s, apart ? f.cal.algo[1].overhead_s : 0);
    }
    // the grid has enough unaligned shapes for entries of their own
    cb_conv_params sh[CB_CAL_MAX_SHAPES];
    int ns = cb_cal_conv_shapes(sh, CB_CAL_MAX_SHAPES), nu = 0;
    for (int i = 0; i < ns; i++) nu += cb_conv_unaligned(&sh[i]);
    CHECK(nu >= 2 * CB_CAL_MIN_UNALIGNED, "%d unaligned shapes", nu);
    cb_net_free(odd);
    cb_net_free(even);
}

// the calibrated prediction: the faster algorithm, plus the passes the cudnn backend adds
static void calibrated_prediction(void) {
    cb_net *net = conv_net(8, 28, 64, 96, 3, 1, "[1, 1]");
    if (!net) {
        CHECK(0, "load");
        return;
    }
    cb_device d = gpu_device();
    cb_cal_algo *a = d.cal.algo;
    a[0] = (cb_cal_algo){.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .rate = 30e12, .overhead_s = 10e-6};
    a[1] = (cb_cal_algo){.name = "FWD_WINOGRAD_NONFUSED", .phase = CB_PHASE_FORWARD, .rate = 50e12, .overhead_s = 40e-6};
    a[2] = (cb_cal_algo){.name = "BWD_DATA_ALGO_1", .phase = CB_PHASE_BWD_DATA, .rate = 30e12, .overhead_s = 10e-6};
    for (int k = 0; k < 3; k++) cb_algo_form_of(a[k].name, &a[k].form);
    d.cal.nalgo = 3;
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 5e-6, .n = 1};
    cb_model_opts mo = {CB_PREC_FP32, 0, true, CB_LAYOUT_NCHW, false, false};
    cb_pred p;
    cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &mo, &p);
    cb_conv_params cp = {.n = 8, .c = 64, .h = 28, .w = 28, .k = 96, .r = 3, .s = 3, .p = 28, .q = 28, .stride_h = 1, .stride_w = 1,
                         .pad_top = 1, .pad_left = 1, .groups = 1};
    double t0 = cb_cal_algo_s(&d.cal, &a[0], &cp, false, NULL), t1 = cb_cal_algo_s(&d.cal, &a[1], &cp, false, NULL);
    CHECK(!strcmp(p.name, t0 < t1 ? a[0].name : a[1].name), "picked %s (%g vs %g s)", p.name, t0, t1);
    CHECK(close_rel(p.ms, 1e3 * fmin(t0, t1), 1e-12) && p.extra_ms == 0, "no bias, no activation: %g ms", p.ms);
    cb_predict_layer(&d, net, 1, CB_PHASE_BWD_DATA, &mo, &p);
    CHECK(p.ms == 0, "fed by the input: no data gradient");
    cb_predict_layer(&d, net, 1, CB_PHASE_BWD_FILTER, &mo, &p);
    CHECK(p.ms == 0 && p.algo == CB_ALGO_COUNT, "no calibrated filter algorithm: nothing predicted");
    mo.workspace_limit = 1; // every algorithm with workspace is out: the implicit GEMM stays
    cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &mo, &p);
    CHECK(!strcmp(p.name, a[0].name), "workspace limit: %s", p.name);
    cb_net_free(net);
    // a bias and a ReLU: two passes of 2Y bytes each in the forward for a calibration of code
    // before the fused epilogues, one (the bias's applies the ReLU, cb_store_bias_act) for one of
    // code after (act_bias_fused); a ReLU gradient in backward data
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 28, 28, 64]},"
             "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 96], \"padding\": [1, 1],"
             "\"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"}}}");
    cb_error err = {0};
    net = cb_net_load_string(json, "test", &err);
    CHECK(net, "load: %s", err.msg);
    if (!net) return;
    double Y = 8.0 * 96 * 28 * 28 * 4, pass = 5e-6 + 2 * Y / 2e12;
    mo.workspace_limit = 0;
    cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &mo, &p);
    CHECK(close_rel(p.extra_ms, 2e3 * pass, 1e-12) && close_rel(p.ms, 1e3 * fmin(t0, t1) + p.extra_ms, 1e-12), "extras %g", p.extra_ms);
    d.cal.act_bias_fused = true;
    cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &mo, &p);
    CHECK(close_rel(p.extra_ms, 1e3 * pass, 1e-12), "fused: extras %g", p.extra_ms);
    d.cal.act_bias_fused = false;
    cb_predict_layer(&d, net, 1, CB_PHASE_BWD_DATA, &mo, &p);
    CHECK(close_rel(p.ms, 1e3 * (5e-6 + 3 * Y / 2e12), 1e-12), "relu gradient only: %g ms", p.ms);
    cb_net_free(net);
}

// The backward epilogue as the backends run it since 2026-11-27 (a calibration that says so,
// act_bias_fused): c1 -> c2 -> max pool p1, each conv with a bias and a ReLU. The activation's and
// the bias's gradients are one pass, priced as the ReLU's in backward data, so backward filter
// loses the bias pass; where the pool runs on the own kernels (a "cuda" calibration: no cuDNN
// pooling) c2's ReLU gradient is the pool's and backward data loses that pass too; c1, read by a
// convolution, keeps it. An older calibration keeps the separate passes.
// the device of the epilogue tests: one backward data and one backward filter algorithm at 30
// TFLOP/s, every pass at 2 TB/s with 5 us a call
static cb_device epilogue_device(void) {
    cb_device d = gpu_device();
    const cb_cal_algo algos[] = {{.name = "BWD_DATA_ALGO_1", .phase = CB_PHASE_BWD_DATA, .rate = 30e12, .overhead_s = 10e-6},
                                 {.name = "BWD_FILTER_ALGO_1", .phase = CB_PHASE_BWD_FILTER, .rate = 30e12, .overhead_s = 10e-6}};
    set_algos(&d, algos, 2);
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 5e-6, .n = 1};
    return d;
}

static void epilogue_prediction(void) {
    const char *json = "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 28, 28, 64]},"
                       "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 96], \"padding\": [1, 1],"
                       "\"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
                       "\"c2\": {\"parents\": [\"c1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 96, 96], \"padding\": [0, 0],"
                       "\"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
                       "\"p1\": {\"parents\": [\"c2\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"}}}";
    cb_net *net = json_net(json);
    CHECK(net, "load");
    if (!net) return;
    cb_device d = epilogue_device();
    cb_model_opts mo = {CB_PREC_FP32, 0, true, CB_LAYOUT_NCHW, false, false};
    double Y = 8.0 * 96 * 28 * 28 * 4, relu = 1e3 * (5e-6 + 3 * Y / 2e12), bias = 1e3 * (5e-6 + Y / 2e12);
    cb_pred p[2][3][2]; // [fused][layer c1, c2][phase: data, filter]
    for (int f = 0; f < 2; f++) {
        d.cal.act_bias_fused = f;
        for (int i = 1; i <= 2; i++) {
            cb_predict_layer(&d, net, i, CB_PHASE_BWD_DATA, &mo, &p[f][i][0]);
            cb_predict_layer(&d, net, i, CB_PHASE_BWD_FILTER, &mo, &p[f][i][1]);
        }
    }
    for (int i = 1; i <= 2; i++) {
        CHECK(close_rel(p[0][i][1].extra_ms - p[1][i][1].extra_ms, bias, 1e-9), "c%d: the bias pass leaves backward filter (%g -> %g ms)", i,
              p[0][i][1].extra_ms, p[1][i][1].extra_ms);
        CHECK(close_rel(p[1][i][0].ms, p[0][i][0].ms, 1e-12), "c%d under cuDNN pooling: backward data as before (%g, %g ms)", i, p[1][i][0].ms,
              p[0][i][0].ms);
    }
    snprintf(d.cal.backend, sizeof d.cal.backend, "cuda"); // the own pool kernels
    cb_pred q;
    cb_predict_layer(&d, net, 2, CB_PHASE_BWD_DATA, &mo, &q);
    CHECK(close_rel(p[1][2][0].ms - q.ms, relu, 1e-9), "c2 under an own max pool: no ReLU pass (%g -> %g ms)", p[1][2][0].ms, q.ms);
    cb_predict_layer(&d, net, 2, CB_PHASE_BWD_FILTER, &mo, &q);
    CHECK(close_rel(q.extra_ms, bias, 1e-9), "c2 under an own max pool: the bias pass stays with the filter's (%g ms)", q.extra_ms);
    cb_predict_layer(&d, net, 1, CB_PHASE_BWD_DATA, &mo, &q);
    CHECK(close_rel(q.ms, p[1][1][0].ms, 1e-12), "c1, read by a convolution: its pass stays (%g ms)", q.ms);
    cb_net_free(net);
}

// The concatenations' ReLU takeover as the backends run it since 2026-11-29 (a calibration that
// says so, concat_relu): c1 and c2 (bias, ReLU) -> cat -> c3. c1's and c2's backward data lose their
// ReLU pass (the bias pass goes to the filter's), and the concatenation's backward reads its output
// beside the gradient (priced as a ReLU's gradient per input, more than the copy). Without the flag,
// as before.
static void concat_relu_prediction(void) {
    const char *json = "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 28, 28, 64]},"
                       "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 96], \"padding\": [1, 1],"
                       "\"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
                       "\"c2\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1, 1, 64, 96], \"padding\": [0, 0],"
                       "\"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
                       "\"cat\": {\"parents\": [\"c1\", \"c2\"], \"type\": \"Concatenate\", \"dim\": 3},"
                       "\"c3\": {\"parents\": [\"cat\"], \"type\": \"Convolution\", \"filter\": [1, 1, 192, 32], \"padding\": [0, 0],"
                       "\"strides\": [1, 1, 1, 1], \"activation_fn\": null}}}";
    cb_net *net = json_net(json);
    CHECK(net, "load");
    if (!net) return;
    cb_device d = epilogue_device();
    d.cal.act_bias_fused = true;
    cb_model_opts mo = {CB_PREC_FP32, 0, true, CB_LAYOUT_NCHW, false, false};
    double Y = 8.0 * 96 * 28 * 28 * 4, relu = 1e3 * (5e-6 + 3 * Y / 2e12);
    cb_pred p[2][4]; // [concat_relu][c1 data, c1 filter, cat data, c3 data]
    for (int f = 0; f < 2; f++) {
        d.cal.concat_relu = f;
        cb_predict_layer(&d, net, 1, CB_PHASE_BWD_DATA, &mo, &p[f][0]);
        cb_predict_layer(&d, net, 1, CB_PHASE_BWD_FILTER, &mo, &p[f][1]);
        cb_predict_layer(&d, net, 3, CB_PHASE_BWD_DATA, &mo, &p[f][2]);
        cb_predict_layer(&d, net, 4, CB_PHASE_BWD_DATA, &mo, &p[f][3]);
    }
    CHECK(close_rel(p[0][0].ms - p[1][0].ms, relu, 1e-9), "c1: no ReLU pass under the takeover (%g -> %g ms)", p[0][0].ms, p[1][0].ms);
    CHECK(p[1][1].ms > p[0][1].ms, "c1: the bias pass joins the filter's (%g -> %g ms)", p[0][1].ms, p[1][1].ms);
    CHECK(p[1][2].ms > p[0][2].ms, "cat: its backward reads its output too (%g -> %g ms)", p[0][2].ms, p[1][2].ms);
    CHECK(close_rel(p[1][3].ms, p[0][3].ms, 1e-12), "c3: as before (%g, %g ms)", p[0][3].ms, p[1][3].ms);
    cb_net_free(net);
}

// TF SAME padding that cuDNN cannot express: the cudnn backend's own fallback is what is predicted
static void cudnn_fallback(void) {
    // trailing padding larger (SAME, stride 2, even plane): cuDNN on a copy with a zero row and
    // column added; leading padding larger ([top, left, bottom, right] = [2, 2, 0, 0]): the fallback
    cb_net *same = conv_net(8, 28, 64, 96, 3, 2, "\"SAME\""), *sym = conv_net(8, 28, 64, 96, 3, 2, "[1, 1]");
    cb_net *lead = conv_net(8, 28, 64, 96, 3, 2, "[2, 2, 0, 0]");
    cb_device d = gpu_device();
    cb_cal_algo *a = d.cal.algo;
    a[0] = (cb_cal_algo){.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .rate = 30e12, .overhead_s = 10e-6};
    a[1] = (cb_cal_algo){.name = "igemm-simt", .phase = CB_PHASE_FORWARD, .rate = 20e12, .overhead_s = 5e-6};
    a[2] = (cb_cal_algo){.name = "wino-simt", .phase = CB_PHASE_FORWARD, .rate = 90e12, .overhead_s = 1e-6};
    a[3] = (cb_cal_algo){.name = "BWD_FILTER_ALGO_0", .phase = CB_PHASE_BWD_FILTER, .rate = 20e12, .overhead_s = 10e-6};
    for (int k = 0; k < 4; k++) cb_algo_form_of(a[k].name, &a[k].form);
    d.cal.nalgo = 4;
    d.cal.mop[CB_MOP_COPY] = (cb_cal_mop){.bw = 2e12, .overhead_s = 4e-6, .n = 1};
    cb_model_opts mo = {CB_PREC_FP32, 0, true, CB_LAYOUT_NCHW, false, false};
    cb_pred p;
    if (same && sym && lead) {
        cb_predict_layer(&d, same, 1, CB_PHASE_FORWARD, &mo, &p);
        cb_conv_params xs = {.n = 8, .c = 64, .h = 29, .w = 29, .k = 96, .r = 3, .s = 3, .p = 14, .q = 14, .stride_h = 2, .stride_w = 2,
                             .groups = 1}, t = {.n = 8, .c = 64, .h = 29, .w = 29, .p = 29, .q = 29};
        double conv = cb_cal_algo_s(&d.cal, &a[0], &xs, false, NULL), copy = cb_cal_mop_s(&d.cal, CB_MOP_COPY, &t);
        CHECK(!strcmp(p.name, "FWD_IMPLICIT_PRECOMP_GEMM") && close_rel(p.ms, 1e3 * (conv + copy), 1e-12) &&
                  close_rel(p.extra_ms, 1e3 * copy, 1e-12),
              "SAME, stride 2, even plane: %s %g ms, want cuDNN on 29x29 (%g) + the copy (%g)", p.name, p.ms, 1e3 * conv, 1e3 * copy);
        cb_predict_layer(&d, same, 1, CB_PHASE_BWD_FILTER, &mo, &p);
        CHECK(close_rel(p.ms, 1e3 * (cb_cal_algo_s(&d.cal, &a[3], &xs, false, NULL) + copy), 1e-12),
              "filter gradient on the copy, made again (the backend keeps none from the forward): %g ms", p.ms);
        cb_predict_layer(&d, lead, 1, CB_PHASE_FORWARD, &mo, &p);
        CHECK(!strcmp(p.name, "igemm-simt"), "leading padding larger: the fallback, got %s", p.name);
        cb_predict_layer(&d, sym, 1, CB_PHASE_FORWARD, &mo, &p);
        CHECK(!strcmp(p.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "symmetric: cuDNN's, never an own one (%s)", p.name);
        d.cal.nalgo = 1; // no own calibration: cuDNN's algorithms as before
        cb_predict_layer(&d, lead, 1, CB_PHASE_FORWARD, &mo, &p);
        CHECK(!strcmp(p.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "no fallback calibrated: %s", p.name);
    } else CHECK(0, "load");
    cb_net_free(same);
    cb_net_free(sym);
    cb_net_free(lead);
}

// NHWC storage: a convolution whose input channels are not a multiple of 16 bytes' worth runs on a
// channel-padded copy under cudnn (bf16, fp32), the copy made forward and again for the filter's
// gradient and cut back for the data gradient; tf32's graph engines take the channels as they are.
// On NHWC or bf16 storage the filter gradient also comes back to the fp32 masters, and a training
// forward makes the storage's weights from them (inference keeps its copy).
static cb_net *two_conv(int c) { // data -> pre (1x1, c channels) -> conv (3x3 SAME, 96): conv has a data gradient
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 28, 28, 16]},"
             "\"pre\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1, 1, 16, %d], \"padding\": \"SAME\","
             "\"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"bias\": false},"
             "\"conv\": {\"parents\": [\"pre\"], \"type\": \"Convolution\", \"filter\": [3, 3, %d, 96], \"padding\": \"SAME\","
             "\"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"bias\": false}}}",
             c, c);
    return json_net(json);
}
static void channel_pad(void) {
    cb_net *odd = two_conv(57), *even = two_conv(64);
    cb_device d = gpu_device();
    cb_cal_algo *a = d.cal.algo;
    static const cb_phase ph[3] = {CB_PHASE_FORWARD, CB_PHASE_BWD_DATA, CB_PHASE_BWD_FILTER};
    static const char *const names[3] = {"FWD_IMPLICIT_PRECOMP_GEMM", "BWD_DATA_ALGO_1", "BWD_FILTER_ALGO_1"};
#define ENTRY(nm, p, pr) {.name = nm, .phase = p, .prec = pr, .rate = 30e12, .overhead_s = 10e-6}
    const cb_cal_algo list[6] = {ENTRY("FWD_IMPLICIT_PRECOMP_GEMM", CB_PHASE_FORWARD, CB_PREC_FP32), ENTRY("BWD_DATA_ALGO_1", CB_PHASE_BWD_DATA, CB_PREC_FP32),
                                 ENTRY("BWD_FILTER_ALGO_1", CB_PHASE_BWD_FILTER, CB_PREC_FP32), ENTRY("FWD_IMPLICIT_PRECOMP_GEMM", CB_PHASE_FORWARD, CB_PREC_BF16),
                                 ENTRY("BWD_DATA_ALGO_1", CB_PHASE_BWD_DATA, CB_PREC_BF16), ENTRY("BWD_FILTER_ALGO_1", CB_PHASE_BWD_FILTER, CB_PREC_BF16)};
#undef ENTRY
    set_algos(&d, list, 6); // each phase in fp32 and bf16
    d.cal.mop[CB_MOP_COPY] = (cb_cal_mop){.bw = 2e12, .overhead_s = 4e-6, .n = 1};
    if (odd && even) {
        cb_conv_params xs = {.n = 8, .c = 64, .h = 28, .w = 28, .k = 96, .r = 3, .s = 3, .p = 28, .q = 28, .stride_h = 1, .stride_w = 1,
                             .pad_top = 1, .pad_left = 1, .groups = 1},
                       t = {.n = 8, .c = 64, .h = 28, .w = 28, .p = 28, .q = 28}, wt = {.n = 96, .c = 64, .h = 3, .w = 3, .p = 3, .q = 3};
        double fixed = 4e-6, copy = cb_cal_mop_s(&d.cal, CB_MOP_COPY, &t), wcopy = cb_cal_mop_s(&d.cal, CB_MOP_COPY, &wt);
        double copy16 = fixed + 0.5 * (copy - fixed), wcopy16 = fixed + 0.5 * (wcopy - fixed);
        // a training forward makes the bf16 KRSC weights from the fp32 masters: 6 bytes a weight of a copy's 8
        cb_conv_params wt57 = wt;
        wt57.c = 57;
        double cast16 = fixed + 0.75 * (wcopy - fixed), cast_tf = cb_cal_mop_s(&d.cal, CB_MOP_COPY, &wt57);
        for (int k = 0; k < 3; k++) {
            cb_model_opts bf = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false}, nchw = {CB_PREC_BF16, 0, false, CB_LAYOUT_NCHW, false, false};
            cb_model_opts tf = {CB_PREC_TF32, 0, false, CB_LAYOUT_NHWC, false, false};
            cb_pred p, q, r, e;
            cb_predict_layer(&d, odd, 2, ph[k], &bf, &p);
            double conv = cb_cal_algo_s(&d.cal, &a[3 + k], &xs, false, NULL), cast = k == 0 ? cast16 : 0;
            double want = conv + copy16 + cast + (k == 2 ? wcopy16 : 0);
            CHECK(conv > 0 && close_rel(p.ms, 1e3 * want, 1e-9),
                  "bf16 NHWC, 57 channels, %s: %g ms, want the convolution on 64 channels %g + the copy %g%s", names[k], p.ms, 1e3 * conv,
                  1e3 * copy16, k == 2 ? " + the gradient's return" : k == 0 ? " + the weights' cast" : "");
            cb_predict_layer(&d, even, 2, ph[k], &bf, &e);
            CHECK(close_rel(e.ms, 1e3 * (conv + cast + (k == 2 ? wcopy16 : 0)), 1e-9), "bf16 NHWC, 64 channels, %s: no copy (%g ms)", names[k], e.ms);
            cb_model_opts inf = bf;
            inf.inference = true;
            cb_pred pi;
            cb_predict_layer(&d, even, 2, ph[k], &inf, &pi);
            CHECK(k != 0 || close_rel(e.ms - pi.ms, 1e3 * cast16, 1e-9), "bf16 NHWC forward: training %g ms, inference %g, want the cast %g between",
                  e.ms, pi.ms, 1e3 * cast16);
            // a training forward without an update between steps (profile): the backend's copy kept, no cast
            cb_model_opts fixed = bf;
            fixed.weights_fixed = true;
            cb_pred pw;
            cb_predict_layer(&d, even, 2, ph[k], &fixed, &pw);
            CHECK(close_rel(e.ms - pw.ms, k == 0 ? 1e3 * cast16 : 0, 1e-9) && (k != 0 || pw.ms > pi.ms - 1e-12),
                  "bf16 NHWC %s, weights fixed: %g ms against %g training, want the cast %g between", names[k], pw.ms, e.ms, k == 0 ? 1e3 * cast16 : 0);
            cb_predict_layer(&d, odd, 2, ph[k], &nchw, &q);
            CHECK(q.ms < p.ms - 1e3 * copy16 * 0.5, "bf16 NCHW, %s: no channel copy (%g ms against NHWC's %g)", names[k], q.ms, p.ms);
            cb_predict_layer(&d, odd, 2, ph[k], &tf, &r);
            CHECK(r.extra_ms - (k == 0 ? 1e3 * cast_tf : 0) < 1e3 * copy * 0.5 || k == 2, "tf32 NHWC, %s: the channels as they are (%g ms of passes)",
                  names[k], r.extra_ms);
            // the host's calls: the copy one more, the filter gradient's return one more on NHWC
            int c_odd = cb_predict_layer_calls(&d, odd, 2, ph[k], &bf), c_even = cb_predict_layer_calls(&d, even, 2, ph[k], &bf);
            int c_plain = cb_predict_layer_calls(&d, odd, 2, ph[k], NULL);
            CHECK(c_odd == c_even + 1 && c_even == c_plain + (k != 1), "%s calls: %d padded, %d unpadded, %d fp32 NCHW", names[k], c_odd,
                  c_even, c_plain);
        }
    } else CHECK(0, "load");
    cb_net_free(odd);
    cb_net_free(even);
}

// bf16 storage: a memory-bound pass moves half fp32's bytes for the same fixed and per-plane costs
// (the passes are calibrated on fp32); the step's criterion and update stay fp32
static void bf16_passes(void) {
    cb_net *net = json_net("{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 28, 28, 64]},"
                           "\"pool\": {\"parents\": [\"data\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1],"
                           "\"padding\": \"VALID\"}}}");
    cb_device d = gpu_device();
    const cb_cal_algo conv = {.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .rate = 30e12, .overhead_s = 10e-6};
    set_algos(&d, &conv, 1);
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 4e-6, .plane_s = 1e-9, .n = 1};
    if (net) {
        cb_model_opts f = {CB_PREC_FP32, 0, false, CB_LAYOUT_NHWC, false, false}, b = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false};
        cb_pred pf, pb;
        cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &f, &pf);
        cb_predict_layer(&d, net, 1, CB_PHASE_FORWARD, &b, &pb);
        cb_conv_params x = {.n = 8, .c = 64, .h = 28, .w = 28, .p = 14, .q = 14};
        cb_mop m = CB_MOP_COUNT;
        for (int k = 0; k < CB_MOP_COUNT; k++)
            if (close_rel(pf.ms, 1e3 * cb_cal_mop_s(&d.cal, (cb_mop)k, &x), 1e-12)) m = (cb_mop)k;
        CHECK(m < CB_MOP_COUNT, "fp32: the pool's pass as calibrated (%g ms)", pf.ms);
        if (m < CB_MOP_COUNT)
            CHECK(close_rel(pb.ms, pf.ms - 1e3 * 0.5 * cb_mop_bytes(m, &x) / 2e12, 1e-9), "bf16: %g ms, want fp32's %g less half its bytes' time",
                  pb.ms, pf.ms);
        cb_step_pred sf, sb;
        cb_predict_step(&d, net, &f, &sf);
        cb_predict_step(&d, net, &b, &sb);
        CHECK(sf.criterion_ms == sb.criterion_ms, "the criterion is fp32 in both: %g vs %g ms", sf.criterion_ms, sb.criterion_ms);
    } else CHECK(0, "load");
    cb_net_free(net);
}

// a pass starts on an idle GPU: its first piece waits one launch_s (the forward's first layer; the
// backward's last layer, in the phase that runs first), and each pass of a step carries it once
static void pass_start(void) {
    cb_net *sm = json_net("{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 8, 8, 16]},"
                          "\"fc\": {\"parents\": [\"data\"], \"type\": \"InnerProduct\", \"num_outputs\": 10, \"activation_fn\": null},"
                          "\"prob\": {\"parents\": [\"fc\"], \"type\": \"Softmax\"}}}");
    cb_net *fc = json_net("{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 8, 8, 16]},"
                          "\"fc\": {\"parents\": [\"data\"], \"type\": \"InnerProduct\", \"num_outputs\": 10, \"activation_fn\": null}}}");
    cb_net *relu = json_net("{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 8, 8, 16]},"
                            "\"fc\": {\"parents\": [\"data\"], \"type\": \"InnerProduct\", \"num_outputs\": 10, \"activation_fn\": \"relu\"}}}");
    if (!sm || !fc || !relu) {
        CHECK(0, "load");
        goto out;
    }
    cb_phase ph;
    CHECK(cb_pass_first(sm, false, &ph) == 1 && ph == CB_PHASE_FORWARD, "forward: the first layer");
    CHECK(cb_pass_first(sm, true, &ph) == 2 && ph == CB_PHASE_BWD_DATA, "backward ending in a softmax: its data gradient");
    CHECK(cb_pass_first(fc, true, &ph) == 1 && ph == CB_PHASE_BWD_FILTER, "backward ending in a plain FC layer: its weights' gradient");
    CHECK(cb_pass_first(relu, true, &ph) == 1 && ph == CB_PHASE_BWD_DATA, "an FC layer with its activation: the activation's gradient first");
    cb_device d = gpu_device();
    const cb_cal_algo gemm = {.name = "cublasSgemm", .phase = CB_PHASE_FORWARD, .rate = 30e12, .overhead_s = 10e-6, .fc = true};
    set_algos(&d, &gemm, 1);
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 4e-6, .n = 1};
    d.cal.launch_s = 6e-6;
    CHECK(cb_pass_start_s(&d) == 6e-6, "a GPU calibration's launch_s");
    cb_model_opts o = {CB_PREC_FP32, 0, false, CB_LAYOUT_NCHW, false, false};
    cb_step_pred a, b;
    cb_predict_step(&d, sm, &o, &a);
    d.cal.launch_s = 0;
    cb_predict_step(&d, sm, &o, &b);
    CHECK(close_rel(a.total_ms - b.total_ms, 2 * 6e-3, 1e-9) && close_rel(a.fwd_pass_ms - b.fwd_pass_ms, 6e-3, 1e-9),
          "each pass one launch_s: step %g vs %g ms", a.total_ms, b.total_ms);
    cb_device none = {0};
    CHECK(cb_pass_start_s(&none) == 0, "no calibration: nothing");
out:
    cb_net_free(sm), cb_net_free(fc), cb_net_free(relu);
}

// cuDNN's batch norm on NHWC storage whose channels are not a multiple of 8 is the cudnn backend's
// legacy call: priced from its own bf16 entries where the calibration has them (a conv's fused batch
// norm and a BatchNorm layer, forward in training and backward), and only there: not with 64
// channels, not on NCHW, not in inference, not without the entries (the Ex entries then)
static cb_net *bn_net(int c) { // data -> conv (3x3 SAME, c channels, batch norm) -> a BatchNorm layer
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 28, 28, 16]},"
             "\"conv\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 16, %d], \"padding\": \"SAME\","
             "\"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
             "\"bn\": {\"parents\": [\"conv\"], \"type\": \"BatchNorm\"}}}",
             c);
    return json_net(json);
}
// The epilogues of a conv with a bias and a ReLU, no batch norm, as the backends run them: forward,
// the bias's pass applies the ReLU (cb_store_bias_act), so the layer costs what the same conv
// without the ReLU costs, one pass; backward, the ReLU's and the bias's gradients are one pass
// (cb_fmt_act_bias_grad), priced from its own entry where the calibration has one (exactly its
// price more than the ReLU gradient's), else as the ReLU's gradient; a batch-normed layer has its
// ReLU pass either way and never that entry.
static cb_net *epi_net(const char *act, const char *norm, int bias) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 28, 28, 16]},"
             "\"c0\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 16, 32], \"padding\": \"SAME\"},"
             "\"conv\": {\"parents\": [\"c0\"], \"type\": \"Convolution\", \"filter\": [3, 3, 32, 64], \"padding\": \"SAME\","
             "\"strides\": [1, 1, 1, 1], \"activation_fn\": %s, \"normalizer_fn\": %s, \"bias\": %s}}}",
             act, norm, bias ? "true" : "false");
    return json_net(json);
}
static void conv_epilogues(void) {
    cb_net *relu = epi_net("\"relu\"", "null", 1), *plain = epi_net("null", "null", 1), *bn = epi_net("\"relu\"", "\"batch_norm\"", 0);
    cb_device d = gpu_device();
    set_bf16_algos(&d, "FWD_IMPLICIT_PRECOMP_GEMM", "BWD_DATA_ALGO_1", "BWD_FILTER_ALGO_1");
    d.cal.act_bias_fused = true;
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = d.cal.mop16[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 4e-6, .n = 1};
    cb_device none = d;
    none.cal.mop[CB_MOP_ACT_BIAS_GRAD].n = none.cal.mop16[CB_MOP_ACT_BIAS_GRAD].n = 0;
    d.cal.mop[CB_MOP_ACT_BIAS_GRAD] = d.cal.mop16[CB_MOP_ACT_BIAS_GRAD] = (cb_cal_mop){.bw = 5e11, .overhead_s = 9e-6, .n = 1};
    if (relu && plain && bn) {
        cb_model_opts opts[2] = {{CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false}, {CB_PREC_FP32, 0, false, CB_LAYOUT_NCHW, false, false}};
        cb_conv_params y = {.n = 8, .c = 64, .h = 28, .w = 28, .p = 28, .q = 28};
        for (int k = 0; k < 2; k++) {
            const cb_model_opts *o = &opts[k];
            cb_pred p, q;
            cb_predict_layer(&d, relu, 2, CB_PHASE_FORWARD, o, &p);
            cb_predict_layer(&d, plain, 2, CB_PHASE_FORWARD, o, &q);
            CHECK(p.ms > 0 && p.ms == q.ms, "%s forward: bias + ReLU %g ms, bias alone %g (one pass each)", k ? "fp32" : "bf16", p.ms, q.ms);
            double with = k ? cb_cal_mop_es_s(&d.cal, CB_MOP_ACT_BIAS_GRAD, &y, 1) : cb_cal_mop16_s(&d.cal, CB_MOP_ACT_BIAS_GRAD, &y);
            double relu_s = k ? cb_cal_mop_es_s(&d.cal, CB_MOP_RELU_BWD, &y, 1) : cb_cal_mop16_s(&d.cal, CB_MOP_RELU_BWD, &y);
            cb_predict_layer(&d, relu, 2, CB_PHASE_BWD_DATA, o, &p);
            cb_predict_layer(&none, relu, 2, CB_PHASE_BWD_DATA, o, &q);
            CHECK(with > relu_s && close_rel(p.ms - q.ms, 1e3 * (with - relu_s), 1e-9), "%s backward: %g ms with the entry, %g without (want %g more)",
                  k ? "fp32" : "bf16", p.ms, q.ms, 1e3 * (with - relu_s));
            cb_predict_layer(&d, bn, 2, CB_PHASE_BWD_DATA, o, &p);
            cb_predict_layer(&none, bn, 2, CB_PHASE_BWD_DATA, o, &q);
            CHECK(p.ms == q.ms, "%s, batch-normed: no fused epilogue (%g against %g ms)", k ? "fp32" : "bf16", p.ms, q.ms);
            cb_predict_layer(&d, bn, 2, CB_PHASE_FORWARD, o, &p);
            CHECK(p.ms > 0, "batch-normed forward");
        }
        cb_mop m;
        CHECK(cb_mop_parse("act_bias_grad", &m) && m == CB_MOP_ACT_BIAS_GRAD && !strcmp(cb_mop_name(m), "act_bias_grad"), "the entry's name");
    } else CHECK(0, "load");
    cb_net_free(relu);
    cb_net_free(plain);
    cb_net_free(bn);
}

// A residual sum with its ReLU: one pass (the add's entry) where a library backend runs it on its
// storage (bf16 or NHWC: src/storage/storage.c), and on fp32 NCHW (src/cuda/backend.c) a copy of the
// first parent, the add and the ReLU apart; the calls follow (cb_predict_layer_calls)
static void sum_passes(void) {
    cb_net *net = json_net("{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 28, 28, 64]},"
                           "\"a\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 64], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
                           "\"sum\": {\"parents\": [\"a\", \"data\"], \"type\": \"Elementwise\", \"operation\": \"sum\", \"activation_fn\": \"relu\"}}}");
    cb_device d = gpu_device();
    set_bf16_algos(&d, "FWD_IMPLICIT_PRECOMP_GEMM", "BWD_DATA_ALGO_1", "BWD_FILTER_ALGO_1");
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = d.cal.mop16[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = (3 + m) * 1e-6, .n = 1};
    if (net) {
        cb_model_opts b = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false}, f = {CB_PREC_FP32, 0, false, CB_LAYOUT_NCHW, false, false};
        cb_conv_params y = {.n = 8, .c = 64, .h = 28, .w = 28, .p = 28, .q = 28};
        cb_pred pb, pf;
        cb_predict_layer(&d, net, 2, CB_PHASE_FORWARD, &b, &pb);
        cb_predict_layer(&d, net, 2, CB_PHASE_FORWARD, &f, &pf);
        double add16 = cb_cal_mop16_s(&d.cal, CB_MOP_ADD, &y);
        double three = cb_cal_mop_s(&d.cal, CB_MOP_COPY, &y) + cb_cal_mop_s(&d.cal, CB_MOP_ADD, &y) + cb_cal_mop_s(&d.cal, CB_MOP_RELU_FWD, &y);
        CHECK(close_rel(pb.ms, 1e3 * add16, 1e-9), "bf16 NHWC: the sum and its ReLU one pass, %g ms (want %g)", pb.ms, 1e3 * add16);
        CHECK(close_rel(pf.ms, 1e3 * three, 1e-9), "fp32 NCHW: copy, add, ReLU, %g ms (want %g)", pf.ms, 1e3 * three);
        int cb = cb_predict_layer_calls(&d, net, 2, CB_PHASE_FORWARD, &b), cf = cb_predict_layer_calls(&d, net, 2, CB_PHASE_FORWARD, &f);
        CHECK(cb == 1 && cf == 3, "calls: %d on the storage (want 1), %d on fp32 NCHW (want 3)", cb, cf);
    } else CHECK(0, "load");
    cb_net_free(net);
}

// An FC layer on a spatial input under NHWC storage: its GEMMs read the input in the masters' (c, h, w)
// order, so each phase converts it (src/blas/blas.c): a copy's time and one call more than on NCHW
static void fc_permute(void) {
    cb_net *net = json_net("{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 7, 7, 64]},"
                           "\"a\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 64], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
                           "\"fc\": {\"parents\": [\"a\"], \"type\": \"InnerProduct\", \"num_outputs\": 100}}}");
    cb_device d = gpu_device();
    set_bf16_algos(&d, "FWD_IMPLICIT_PRECOMP_GEMM", "BWD_DATA_ALGO_1", "BWD_FILTER_ALGO_1");
    const cb_cal_algo gemm[3] = {{.name = "cublas_tf32", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_TF32, .fc = true, .rate = 100e12, .overhead_s = 5e-6},
                                 {.name = "cublas_tf32", .phase = CB_PHASE_BWD_DATA, .prec = CB_PREC_TF32, .fc = true, .rate = 100e12, .overhead_s = 5e-6},
                                 {.name = "cublas_tf32", .phase = CB_PHASE_BWD_FILTER, .prec = CB_PREC_TF32, .fc = true, .rate = 100e12, .overhead_s = 5e-6}};
    for (int k = 0; k < 3; k++) d.cal.algo[d.cal.nalgo++] = gemm[k];
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 4e-6, .n = 1};
    if (net) {
        cb_model_opts nhwc = {CB_PREC_TF32, 0, false, CB_LAYOUT_NHWC, false, false}, nchw = {CB_PREC_TF32, 0, false, CB_LAYOUT_NCHW, false, false};
        cb_conv_params x = {.n = 8, .c = 7 * 7 * 64, .h = 1, .w = 1, .p = 1, .q = 1};
        double copy = 1e3 * cb_cal_mop_s(&d.cal, CB_MOP_COPY, &x);
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
            cb_pred a, b;
            cb_predict_layer(&d, net, 2, (cb_phase)ph, &nhwc, &a);
            cb_predict_layer(&d, net, 2, (cb_phase)ph, &nchw, &b);
            CHECK(b.ms > 0 && close_rel(a.ms - b.ms, copy, 1e-9), "phase %d: NHWC %g ms, NCHW %g (want a copy, %g, more)", ph, a.ms, b.ms, copy);
            int ca = cb_predict_layer_calls(&d, net, 2, (cb_phase)ph, &nhwc), cn = cb_predict_layer_calls(&d, net, 2, (cb_phase)ph, &nchw);
            CHECK(ca == cn + 1, "phase %d: %d calls on NHWC, %d on NCHW (want one more)", ph, ca, cn);
        }
    } else CHECK(0, "load");
    cb_net_free(net);
}

// An NHWC concatenation: each input's copy into its channel slice is priced by the calibration's
// concatenation entry for its rows' copy unit (16-byte rows: concat; else concat_narrow), forward
// and backward; without those entries, and on NCHW storage, by the copy's as before
static cb_net *concat_net(int k1, int k2) {
    char js[1024];
    snprintf(js, sizeof js,
             "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 14, 14, 64]},"
             "\"a\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1, 1, 64, %d], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
             "\"b\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1, 1, 64, %d], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
             "\"cat\": {\"parents\": [\"a\", \"b\"], \"type\": \"Concatenate\", \"dim\": 3}}}",
             k1, k2);
    return json_net(js);
}
static void concat_entries(void) {
    cb_net *wide = concat_net(32, 48), *narrow = concat_net(37, 40);
    cb_device d = gpu_device();
    set_bf16_algos(&d, "FWD_IMPLICIT_PRECOMP_GEMM", "BWD_DATA_ALGO_1", "BWD_FILTER_ALGO_1");
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = d.cal.mop16[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 4e-6, .n = 1};
    d.cal.mop[CB_MOP_CONCAT].n = d.cal.mop16[CB_MOP_CONCAT].n = d.cal.mop[CB_MOP_CONCAT_NARROW].n = d.cal.mop16[CB_MOP_CONCAT_NARROW].n = 0;
    cb_device none = d; // the same without the concatenation entries
    d.cal.mop16[CB_MOP_CONCAT] = (cb_cal_mop){.bw = 1e12, .overhead_s = 3e-6, .plane_s = 1e-11, .n = 1};
    d.cal.mop16[CB_MOP_CONCAT_NARROW] = (cb_cal_mop){.bw = 2e11, .overhead_s = 5e-6, .plane_s = 4e-11, .n = 1};
    CHECK(cb_mop_concat(32, 80, 0, 2) == CB_MOP_CONCAT && cb_mop_concat(48, 80, 32, 2) == CB_MOP_CONCAT &&
              cb_mop_concat(37, 77, 0, 2) == CB_MOP_CONCAT_NARROW && cb_mop_concat(40, 77, 37, 2) == CB_MOP_CONCAT_NARROW &&
              cb_mop_concat(36, 72, 36, 4) == CB_MOP_CONCAT && cb_mop_concat(36, 72, 36, 2) == CB_MOP_CONCAT_NARROW,
          "the copy unit's classes");
    if (wide && narrow) {
        cb_model_opts bf = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false}, nchw = {CB_PREC_FP32, 0, false, CB_LAYOUT_NCHW, false, false};
        const cb_net *nets[2] = {wide, narrow};
        for (int w = 0; w < 2; w++) {
            const cb_net *net = nets[w];
            CHECK(net->nlayers == 4 && net->layers[3].op == CB_OP_CONCAT, "the network: %d layers", net->nlayers);
            cb_pred past;
            cb_predict_layer(&d, net, 4, CB_PHASE_FORWARD, &bf, &past); // (no layer 4: nothing, not another's bytes)
            CHECK(past.ms == 0 && past.algo == CB_ALGO_COUNT, "past the last layer: %g ms", past.ms);
            cb_mop m = w ? CB_MOP_CONCAT_NARROW : CB_MOP_CONCAT;
            double want = 0, copy = 0, fp = 0;
            for (int k = 0; k < 2; k++) {
                cb_conv_params t = {.n = 8, .c = (int)net->layers[1 + k].out.c, .h = 14, .w = 14, .p = 14, .q = 14};
                copy += 1e3 * cb_cal_mop16_s(&d.cal, CB_MOP_COPY, &t);
                fp += 1e3 * cb_cal_mop_s(&d.cal, CB_MOP_COPY, &t);
                t.k = (int)net->layers[3].out.c;
                want += 1e3 * cb_cal_mop16_s(&d.cal, m, &t);
            }
            for (int ph = 0; ph < 2; ph++) { // forward, backward data
                cb_pred a, b, c;
                cb_predict_layer(&d, net, 3, (cb_phase)ph, &bf, &a);
                cb_predict_layer(&none, net, 3, (cb_phase)ph, &bf, &b);
                cb_predict_layer(&d, net, 3, (cb_phase)ph, &nchw, &c);
                CHECK(close_rel(a.ms, want, 1e-9) && close_rel(b.ms, copy, 1e-9) && close_rel(c.ms, fp, 1e-9),
                      "%s rows, phase %d: %g ms with the entries (want %g), %g without (want the copy's %g), %g on fp32 NCHW (want %g)",
                      w ? "narrow" : "16-byte", ph, a.ms, want, b.ms, copy, c.ms, fp);
            }
        }
    } else CHECK(0, "load");
    cb_net_free(wide);
    cb_net_free(narrow);
}

// The step's update: one pass over the parameters' flat arrays, 20 bytes a parameter (weight,
// gradient and momentum read, weight and momentum written), at the copy's calibrated bandwidth and
// fixed cost; the copy's per-plane term (one plane here) does not scale with the parameter count
static void update_pass(void) {
    cb_net *net = json_net("{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 7, 7, 64]},"
                           "\"fc\": {\"parents\": [\"data\"], \"type\": \"InnerProduct\", \"num_outputs\": 1000}}}");
    cb_device d = gpu_device();
    set_bf16_algos(&d, "FWD_IMPLICIT_PRECOMP_GEMM", "BWD_DATA_ALGO_1", "BWD_FILTER_ALGO_1");
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = d.cal.mop16[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 4e-6, .n = 1};
    if (net) {
        cb_model_opts o = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false};
        cb_net_cost c;
        cb_net_cost_total(net, &c);
        double P = (double)c.total.params, want = 1e3 * (4e-6 + 20 * P / 2e12);
        cb_step_pred a, b;
        cb_predict_step(&d, net, &o, &a);
        d.cal.mop[CB_MOP_COPY].plane_s = 1e-9; // a per-plane cost, as the H200's copy entry has (5e-12)
        cb_predict_step(&d, net, &o, &b);
        CHECK(close_rel(a.update_ms, want, 1e-9), "update %g ms for %.0f parameters (want %g)", a.update_ms, P, want);
        CHECK(close_rel(b.update_ms, a.update_ms, 1e-3), "update with a per-plane copy term %g ms (want %g)", b.update_ms, a.update_ms);
    } else CHECK(0, "load");
    cb_net_free(net);
}

static void bn_legacy_nhwc(void) {
    cb_net *odd = bn_net(57), *even = bn_net(64);
    cb_device d = gpu_device();
    set_bf16_algos(&d, "FWD_IMPLICIT_PRECOMP_GEMM", "BWD_DATA_ALGO_1", "BWD_FILTER_ALGO_1");
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = d.cal.mop16[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 4e-6, .n = 1};
    cb_device none = d; // the same without the legacy entries
    none.cal.mop16[CB_MOP_BN_FWD_TRAIN_ODD].n = none.cal.mop16[CB_MOP_BN_BWD_ODD].n = 0;
    d.cal.mop16[CB_MOP_BN_FWD_TRAIN_ODD] = (cb_cal_mop){.bw = 2e10, .overhead_s = 30e-6, .n = 1}; // a hundredth of the Ex's bandwidth
    d.cal.mop16[CB_MOP_BN_BWD_ODD] = (cb_cal_mop){.bw = 1e10, .overhead_s = 50e-6, .n = 1};
    if (odd && even) {
        cb_model_opts bf = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false}, nchw = {CB_PREC_BF16, 0, false, CB_LAYOUT_NCHW, false, false}, inf = bf;
        inf.inference = true;
        cb_conv_params y = {.n = 8, .c = 57, .h = 28, .w = 28, .p = 28, .q = 28};
        const cb_mop fast[2] = {CB_MOP_BN_FWD_TRAIN, CB_MOP_BN_BWD}, slow[2] = {CB_MOP_BN_FWD_TRAIN_ODD, CB_MOP_BN_BWD_ODD};
        for (int k = 0; k < 2; k++) { // forward, backward data
            cb_phase ph = k ? CB_PHASE_BWD_DATA : CB_PHASE_FORWARD;
            double more = 1e3 * (cb_cal_mop16_s(&d.cal, slow[k], &y) - cb_cal_mop16_s(&d.cal, fast[k], &y));
            for (int i = 1; i <= 2; i++) { // the conv's batch norm, the BatchNorm layer
                cb_pred p, q;
                cb_predict_layer(&d, odd, i, ph, &bf, &p);
                cb_predict_layer(&none, odd, i, ph, &bf, &q);
                CHECK(more > 0 && close_rel(p.ms - q.ms, more, 1e-9), "57 channels, layer %d, %s: %g ms with the legacy entries, %g without "
                      "(want %g more)", i, k ? "backward" : "forward", p.ms, q.ms, more);
                cb_predict_layer(&d, even, i, ph, &bf, &p);
                cb_predict_layer(&none, even, i, ph, &bf, &q);
                CHECK(p.ms == q.ms, "64 channels, layer %d: the Ex entries (%g against %g ms)", i, p.ms, q.ms);
                cb_predict_layer(&d, odd, i, ph, &nchw, &p);
                cb_predict_layer(&none, odd, i, ph, &nchw, &q);
                CHECK(p.ms == q.ms, "NCHW, layer %d: cuDNN's one batch norm (%g against %g ms)", i, p.ms, q.ms);
                if (k) continue;
                cb_predict_layer(&d, odd, i, ph, &inf, &p);
                cb_predict_layer(&none, odd, i, ph, &inf, &q);
                CHECK(p.ms == q.ms, "inference, layer %d: the inference entry (%g against %g ms)", i, p.ms, q.ms);
            }
        }
    } else CHECK(0, "load");
    cb_net_free(odd);
    cb_net_free(even);
}

// A training step on bf16 storage prices each weight copy the engine makes again in the backward
// (AlexNet b128: FC layers', kept off the peak; src/core/exec.c): against the same step with every
// copy kept to the backward (CONVBENCH_WEIGHT_COPY=step) its backward has one cast and one call more
// per such layer, at least fc6's 37.7M weights' 6 bytes each at the memory's bandwidth; fp32 NCHW
// storage reads the masters and makes no copy either way.
static void weight_copies_again(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load("alexnet", &err);
    if (!net || cb_net_set_batch(net, 128, &err) != CB_OK) {
        CHECK(0, "alexnet: %s", err.msg);
        cb_net_free(net);
        return;
    }
    cb_device d = gpu_device();
    cb_model_opts bf = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false}, f32 = {CB_PREC_FP32, 0, false, CB_LAYOUT_NCHW, false, false};
    cb_step_pred plan, kept, p32, k32;
    cb_predict_step(&d, net, &bf, &plan);
    cb_predict_step(&d, net, &f32, &p32);
    setenv("CONVBENCH_WEIGHT_COPY", "step", 1);
    cb_predict_step(&d, net, &bf, &kept);
    cb_predict_step(&d, net, &f32, &k32);
    unsetenv("CONVBENCH_WEIGHT_COPY");
    int more = plan.calls_bwd - kept.calls_bwd;
    double fc6 = 1e3 * 4096.0 * 9216 * 6 / d.mem_bw;
    CHECK(more >= 1 && more <= 3 && plan.bwd_data_ms - kept.bwd_data_ms >= fc6 && plan.fwd_ms == kept.fwd_ms,
          "bf16 NHWC: %d more calls, backward data %g ms against %g kept (want at least fc6's cast, %g)", more, plan.bwd_data_ms,
          kept.bwd_data_ms, fc6);
    CHECK(p32.total_ms == k32.total_ms && p32.calls_bwd == k32.calls_bwd, "fp32 NCHW: %g against %g ms", p32.total_ms, k32.total_ms);
    cb_net_free(net);
}

// a calibration carried onto another GPU: rates with the peak, bandwidths with the memory's
static void calibration_transfer(void) {
    cb_device c = gpu_device(), d = gpu_device(), same = gpu_device();
    c.cal.algo[0] = (cb_cal_algo){.name = "FWD_IMPLICIT_PRECOMP_GEMM", .prec = CB_PREC_FP32, .rate = 30e12, .wave_rate = 60e12, .bw = 2e12,
                                  .overhead_s = 1e-5};
    c.cal.nalgo = 1;
    c.cal.mop[CB_MOP_COPY] = (cb_cal_mop){.bw = 4e12, .overhead_s = 5e-6, .plane_s = 1e-12, .n = 3};
    d.peak[CB_PREC_FP32] = 33.5e12, d.mem_bw = 2.4e12, d.cores = 114;
    cb_device_transfer_calibration(&d, &c, "c.json");
    CHECK(close_rel(d.cal.algo[0].rate, 15e12, 1e-12) && close_rel(d.cal.algo[0].wave_rate, 30e12, 1e-12) &&
              close_rel(d.cal.algo[0].bw, 1e12, 1e-12),
          "algorithm scaled");
    CHECK(d.cal.algo[0].overhead_s == 1e-5 && d.cal.mop[CB_MOP_COPY].overhead_s == 5e-6, "fixed costs carried as they are");
    CHECK(close_rel(d.cal.mop[CB_MOP_COPY].bw, 2e12, 1e-12) && close_rel(d.cal.mop[CB_MOP_COPY].plane_s, 2e-12, 1e-12), "passes scaled");
    CHECK(d.cal.sms == 114, "the target's SMs: %d", d.cal.sms);
    cb_device chip = gpu_device(); // the bw_onchip form: conv bandwidth with SMs x clock (same here), passes with the memory's
    c.cal.bw_onchip = 1, chip.peak[CB_PREC_FP32] = 67e12, chip.mem_bw = 2.4e12, chip.cores = 132, chip.clock_mhz = 1980;
    c.cores = 132, c.clock_mhz = 1980, c.mem_bw = 4.8e12;
    cb_device_transfer_calibration(&chip, &c, "c.json");
    CHECK(chip.cal.algo[0].bw == 2e12 && close_rel(chip.cal.mop[CB_MOP_COPY].bw, 2e12, 1e-12), "on-chip: conv bw %g, copy %g",
          chip.cal.algo[0].bw, chip.cal.mop[CB_MOP_COPY].bw);
    c.cal.bw_onchip = 0;
    cb_device_transfer_calibration(&same, &c, "c.json");
    CHECK(same.cal.algo[0].rate == 30e12 && same.cal.mop[CB_MOP_COPY].bw == 4e12 && same.cal.sms == 132, "same GPU: unchanged");
}

// the spill beyond the L2: samples of a known model (6 us + fp32-sized bytes / 20 TB/s + 1/4 ns per
// storage byte past a 50 MiB L2) on the calibration's tensors give it back, in fp32 and bf16; a
// device without l2_bytes fits none; the fp32 entry prices bf16 storage at its bytes (spill too);
// l2_bytes and spill_s round-trip and a carried calibration takes the target's L2
static void spill_entries(void) {
    cb_conv_params sh[CB_CAL_MAX_SHAPES];
    int nm = cb_cal_mop_shapes(sh, CB_CAL_MAX_SHAPES), n = 0;
    const double L2 = 50.0 * (1 << 20), spill = 0.25e-9;
    cb_cal_sample *s = calloc(2 * (size_t)nm, sizeof *s);
    if (!s) abort();
    int past = 0;
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < nm; i++) {
            double elem = b ? 2 : 4;
            s[n] = (cb_cal_sample){.kind = CB_SAMPLE_MOP, .name = "relu_bwd", .prec = b ? CB_PREC_BF16 : CB_PREC_FP32, .p = sh[i]};
            s[n++].ms = 1e3 * (6e-6 + cb_mop_bytes(CB_MOP_RELU_BWD, &sh[i]) / 20e12 + spill * cb_mop_spill(CB_MOP_RELU_BWD, &sh[i], elem, L2));
            past += cb_mop_spill(CB_MOP_RELU_BWD, &sh[i], elem, L2) > 0;
        }
    CHECK(past >= 3 && past < n - 6, "%d of %d samples past the L2", past, n);
    cb_device d = gpu_device();
    d.l2_bytes = L2;
    cb_error err = {0};
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK && d.cal.mop[CB_MOP_RELU_BWD].spill_s == 0, "the default form: no spill term (%g)",
          d.cal.mop[CB_MOP_RELU_BWD].spill_s);
    d.cal.spill = 1;
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK && d.cal.l2_bytes == L2, "%s", err.msg);
    for (int b = 0; b < 2; b++) {
        const cb_cal_mop *o = b ? &d.cal.mop16[CB_MOP_RELU_BWD] : &d.cal.mop[CB_MOP_RELU_BWD];
        CHECK(close_rel(o->spill_s, spill, 1e-6) && close_rel(o->bw, 20e12, 1e-6) && o->err_median_pct < 1e-3,
              "%s: spill %g s/B, bw %g", b ? "bf16" : "fp32", o->spill_s, o->bw);
    }
    // the fp32 entry on bf16 storage: half the bytes, the spill at 2-byte elements
    cb_conv_params big = {.n = 64, .c = 64, .h = 100, .w = 100, .k = 64};
    double want = 6e-6 + 0.5 * cb_mop_bytes(CB_MOP_RELU_BWD, &big) / 20e12 + spill * cb_mop_spill(CB_MOP_RELU_BWD, &big, 2, L2);
    CHECK(cb_mop_spill(CB_MOP_RELU_BWD, &big, 2, L2) > 0 && close_rel(cb_cal_mop_es_s(&d.cal, CB_MOP_RELU_BWD, &big, 0.5), want, 1e-6),
          "fp32 entry on bf16: %g s, want %g", cb_cal_mop_es_s(&d.cal, CB_MOP_RELU_BWD, &big, 0.5), want);
    cJSON *j = cb_device_to_json(&d);
    cb_device back;
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.l2_bytes == L2 && back.cal.l2_bytes == L2 && back.cal.spill == 1 &&
              close_rel(back.cal.mop16[CB_MOP_RELU_BWD].spill_s, d.cal.mop16[CB_MOP_RELU_BWD].spill_s, 1e-12),
          "l2_bytes and spill_s round trip: %s", err.msg);
    cJSON_Delete(j);
    cb_device h = gpu_device(); // a GPU of half the bandwidth and a 25 MiB L2: the spill costs twice
    h.mem_bw = 2.4e12, h.l2_bytes = L2 / 2;
    cb_device_transfer_calibration(&h, &d, "test");
    CHECK(h.cal.l2_bytes == L2 / 2 && close_rel(h.cal.mop[CB_MOP_RELU_BWD].spill_s, 2 * spill, 1e-9), "carried: L2 %g, spill %g",
          h.cal.l2_bytes, h.cal.mop[CB_MOP_RELU_BWD].spill_s);
    d = gpu_device(); // no L2 known: no spill term, as before
    d.cal.spill = 1;
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK && d.cal.mop[CB_MOP_RELU_BWD].spill_s == 0, "without l2_bytes: spill %g",
          d.cal.mop[CB_MOP_RELU_BWD].spill_s);
    free(s);
    cb_conv_params t = {.n = 1, .c = 1, .h = 1024, .w = 1024};
    CHECK(cb_mop_spill(CB_MOP_COPY, &t, 4, 0) == 0 && cb_mop_spill(CB_MOP_COPY, &t, 4, 1e12) == 0 &&
              cb_mop_spill(CB_MOP_COPY, &t, 4, 1024) == cb_mop_bytes(CB_MOP_COPY, &t) - 1024,
          "spill of a copy: %g", cb_mop_spill(CB_MOP_COPY, &t, 4, 1024));
}

// the pool_lines form (cb_mop_tiled_line): on bf16 NHWC storage the tiled windows' elements cost more
// the more of a 128-byte line one pixel's channels fill (cuDNN's 2x2 max pooling backward, H200:
// 0.014 ns an element at 32 channels, 0.024 from 72 up); the term recovered from samples made by a
// known model on the calibration's pooling tensors, fitted only in that form, only for bf16, and
// saved with its form (a file without "pool_lines" keeps the form before)
static void pool_lines(void) {
    cb_conv_params sh[2 * CB_CAL_MAX_SHAPES];
    int nm = cb_cal_mop_shapes(sh, CB_CAL_MAX_SHAPES), np = cb_cal_pool_shapes(sh + nm, CB_CAL_MAX_SHAPES), n = nm + np;
    // the line fraction: min(1, C x elem / 128) of the tiled elements, nothing where windows overlap
    cb_conv_params tt = {.n = 2, .c = 32, .h = 10, .w = 10, .r = 2, .s = 2, .p = 5, .q = 5, .stride_h = 2, .stride_w = 2};
    CHECK(cb_mop_tiled_line(CB_MOP_POOL_BWD, &tt, 2) == 0.5 * 6400 && cb_mop_tiled_line(CB_MOP_POOL_BWD, &tt, 4) == 6400 &&
              cb_mop_tiled_line(CB_MOP_RELU_BWD, &tt, 2) == 0,
          "C 32: %g bf16, %g fp32", cb_mop_tiled_line(CB_MOP_POOL_BWD, &tt, 2), cb_mop_tiled_line(CB_MOP_POOL_BWD, &tt, 4));
    tt.c = 200;
    CHECK(cb_mop_tiled_line(CB_MOP_POOL_BWD, &tt, 2) == cb_mop_tiled(CB_MOP_POOL_BWD, &tt), "C 200: a whole line %g",
          cb_mop_tiled_line(CB_MOP_POOL_BWD, &tt, 2));
    tt.r = tt.s = 3, tt.p = tt.q = 4;
    CHECK(cb_mop_tiled_line(CB_MOP_POOL_BWD, &tt, 2) == 0, "3x3 at stride 2 overlaps: %g", cb_mop_tiled_line(CB_MOP_POOL_BWD, &tt, 2));
    int nsmall = 0, nfull = 0; // tiled tensors whose pixels fill part of a bf16 line, and a whole one
    for (int i = 0; i < n; i++)
        if (cb_mop_tiled(CB_MOP_POOL_BWD, &sh[i]) > 0) nsmall += sh[i].c * 2 < CB_POOL_LINE_BYTES, nfull += sh[i].c * 2 >= CB_POOL_LINE_BYTES;
    CHECK(nsmall >= 3 && nfull >= 3, "tiled calibration tensors: %d of part a line, %d of a whole one", nsmall, nfull);
    // pool_bwd on bf16 and on fp32: 6 us + bytes / 3 TB/s + 5 ps a window element + 4 ps a tiled one + 16 ps x its line fraction
    cb_cal_sample *s = calloc((size_t)(2 * n), sizeof *s);
    if (!s) abort();
    for (int i = 0; i < 2 * n; i++) {
        const cb_conv_params *q = &sh[i % n];
        s[i] = (cb_cal_sample){.kind = CB_SAMPLE_MOP, .name = "pool_bwd", .prec = i < n ? CB_PREC_BF16 : CB_PREC_FP32, .p = *q};
        s[i].ms = 1e3 * (6e-6 + cb_mop_bytes(CB_MOP_POOL_BWD, q) / 3e12 + 5e-12 * cb_mop_window(CB_MOP_POOL_BWD, q) +
                         4e-12 * cb_mop_tiled(CB_MOP_POOL_BWD, q) + 16e-12 * cb_mop_tiled_line(CB_MOP_POOL_BWD, q, 2));
    }
    cb_device d = gpu_device();
    cb_error err = {0};
    d.cal.pool_lines = 0; // the form before: no line term, and its price misses the small or the large channel counts
    CHECK(cb_cal_fit(s, 2 * n, &d, &err) == CB_OK, "%s", err.msg);
    CHECK(d.cal.mop16[CB_MOP_POOL_BWD].tile_line_s == 0 && d.cal.mop16[CB_MOP_POOL_BWD].n == n, "pool_lines 0: tile_line_s %g",
          d.cal.mop16[CB_MOP_POOL_BWD].tile_line_s);
    cb_conv_params c32 = {.n = 64, .c = 32, .h = 112, .w = 112, .r = 2, .s = 2, .p = 56, .q = 56, .stride_h = 2, .stride_w = 2};
    cb_conv_params c64 = c32;
    c64.c = 64;
    double want32 = 6e-6 + cb_mop_bytes(CB_MOP_POOL_BWD, &c32) / 3e12 + 5e-12 * cb_mop_window(CB_MOP_POOL_BWD, &c32) +
                    4e-12 * cb_mop_tiled(CB_MOP_POOL_BWD, &c32) + 16e-12 * cb_mop_tiled_line(CB_MOP_POOL_BWD, &c32, 2);
    double want64 = 6e-6 + cb_mop_bytes(CB_MOP_POOL_BWD, &c64) / 3e12 + 5e-12 * cb_mop_window(CB_MOP_POOL_BWD, &c64) +
                    20e-12 * cb_mop_tiled(CB_MOP_POOL_BWD, &c64);
    double old32 = cb_cal_mop16_s(&d.cal, CB_MOP_POOL_BWD, &c32), old64 = cb_cal_mop16_s(&d.cal, CB_MOP_POOL_BWD, &c64);
    CHECK(!close_rel(old32, want32, 0.05) || !close_rel(old64, want64, 0.05), "without the term: C 32 %g (want %g), C 64 %g (want %g)",
          old32, want32, old64, want64);
    d.cal.pool_lines = 1;
    CHECK(cb_cal_fit(s, 2 * n, &d, &err) == CB_OK, "%s", err.msg);
    const cb_cal_mop *o = &d.cal.mop16[CB_MOP_POOL_BWD];
    CHECK(close_rel(o->tile_line_s, 16e-12, 1e-6) && close_rel(o->tile_s, 4e-12, 1e-6) && close_rel(o->win_s, 5e-12, 1e-6) &&
              close_rel(o->bw, 3e12, 1e-6) && o->err_median_pct < 1e-3,
          "pool_lines 1: line %g, tiled %g, window %g, bw %g, median error %g%%", o->tile_line_s, o->tile_s, o->win_s, o->bw, o->err_median_pct);
    CHECK(close_rel(cb_cal_mop16_s(&d.cal, CB_MOP_POOL_BWD, &c32), want32, 1e-6) && close_rel(cb_cal_mop16_s(&d.cal, CB_MOP_POOL_BWD, &c64), want64, 1e-6),
          "priced: C 32 %g (want %g), C 64 %g (want %g)", cb_cal_mop16_s(&d.cal, CB_MOP_POOL_BWD, &c32), want32,
          cb_cal_mop16_s(&d.cal, CB_MOP_POOL_BWD, &c64), want64);
    // fp32 NCHW's entry: never the line term (its samples here carry it, and the fit leaves it out)
    CHECK(d.cal.mop[CB_MOP_POOL_BWD].tile_line_s == 0 && d.cal.mop[CB_MOP_POOL_BWD].n == n, "fp32: tile_line_s %g",
          d.cal.mop[CB_MOP_POOL_BWD].tile_line_s);
    // saved and read back with its form; a file without "pool_lines" reads as the form before
    cJSON *j = cb_device_to_json(&d);
    cb_device back;
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.pool_lines == 1 &&
              close_rel(back.cal.mop16[CB_MOP_POOL_BWD].tile_line_s, o->tile_line_s, 1e-12),
          "round trip: pool_lines %d, tile_line_s %g, %s", back.cal.pool_lines, back.cal.mop16[CB_MOP_POOL_BWD].tile_line_s, err.msg);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "calibration"), "pool_lines");
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.pool_lines == 0, "without the field: pool_lines %d, %s",
          back.cal.pool_lines, err.msg);
    cJSON_Delete(j);
    free(s);
}

// pooling: each kind's entry with a window term, recovered from samples made by a known model on
// the calibration's pooling tensors; a layer priced by the entry of what the backend runs (cuDNN
// max or average, the own kernels for padding cuDNN cannot express; max when no entry), the
// window term growing with the window over the stride
static void pool_entries(void) {
    cb_conv_params sh[2 * CB_CAL_MAX_SHAPES];
    int nm = cb_cal_mop_shapes(sh, CB_CAL_MAX_SHAPES), np = cb_cal_pool_shapes(sh + nm, CB_CAL_MAX_SHAPES), n = 0;
    int ns1 = 0, nglobal = 0;
    for (int i = nm; i < nm + np; i++) ns1 += sh[i].stride_h == 1, nglobal += sh[i].p == 1 && sh[i].r == sh[i].h;
    CHECK(np >= 12 && ns1 >= 8 && nglobal >= 5, "%d pooling tensors, %d at stride 1, %d global", np, ns1, nglobal);
    cb_cal_sample *s = calloc((size_t)(nm + np), sizeof *s);
    if (!s) abort();
    cb_device d = gpu_device();
    for (int i = 0; i < nm + np; i++) { // avgpool_bwd: 6 us + bytes / 3 TB/s + 5 ps per window element
        s[n] = (cb_cal_sample){.kind = CB_SAMPLE_MOP, .name = "avgpool_bwd", .p = sh[i]};
        s[n++].ms = 1e3 * (6e-6 + cb_mop_bytes(CB_MOP_AVGPOOL_BWD, &sh[i]) / 3e12 + 5e-12 * cb_mop_window(CB_MOP_AVGPOOL_BWD, &sh[i]));
    }
    cb_error err = {0};
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK, "%s", err.msg);
    const cb_cal_mop *o = &d.cal.mop[CB_MOP_AVGPOOL_BWD];
    CHECK(o->n == n && close_rel(o->win_s, 5e-12, 1e-6) && close_rel(o->bw, 3e12, 1e-6) && close_rel(o->overhead_s, 6e-6, 1e-6) &&
              o->err_median_pct < 1e-3,
          "avgpool_bwd n %d win %g bw %g overhead %g", o->n, o->win_s, o->bw, o->overhead_s);
    cJSON *j = cb_device_to_json(&d);
    cb_device back;
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && close_rel(back.cal.mop[CB_MOP_AVGPOOL_BWD].win_s, o->win_s, 1e-12),
          "win_s round trip: %s", err.msg);
    cJSON_Delete(j);
    // windows that tile the input (2x2 at stride 2) cost more per element on cuDNN's bf16 NHWC
    // backward: the same samples with 20 ps per such element recover it; a fit whose samples are all
    // of one kind (here: fp32's, unchanged above) leaves it at 0
    int ntiled = 0;
    for (int i = 0; i < n; i++) {
        s[i].prec = CB_PREC_BF16;
        s[i].ms += 1e3 * 20e-12 * cb_mop_tiled(CB_MOP_AVGPOOL_BWD, &s[i].p);
        ntiled += cb_mop_tiled(CB_MOP_AVGPOOL_BWD, &s[i].p) > 0;
    }
    CHECK(ntiled >= 4 && ntiled < n / 2, "%d of %d pooling tensors tiled", ntiled, n);
    CHECK(cb_cal_fit(s, n, &d, &err) == CB_OK, "%s", err.msg);
    o = &d.cal.mop16[CB_MOP_AVGPOOL_BWD];
    CHECK(close_rel(o->tile_s, 20e-12, 1e-6) && close_rel(o->win_s, 5e-12, 1e-6) && close_rel(o->bw, 3e12, 1e-6) && d.cal.mop[CB_MOP_AVGPOOL_BWD].tile_s == 0,
          "tiled: %g per element, window %g, bw %g", o->tile_s, o->win_s, o->bw);
    j = cb_device_to_json(&d);
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && close_rel(back.cal.mop16[CB_MOP_AVGPOOL_BWD].tile_s, o->tile_s, 1e-12),
          "tile_s round trip: %s", err.msg);
    cJSON_Delete(j);
    free(s);
    // the tiled elements: N*C*H*W where the window equals the stride on both axes (and exceeds 1)
    cb_conv_params tt = {.n = 2, .c = 3, .h = 10, .w = 10, .r = 2, .s = 2, .p = 5, .q = 5, .stride_h = 2, .stride_w = 2};
    CHECK(cb_mop_tiled(CB_MOP_POOL_BWD, &tt) == 600 && cb_mop_tiled(CB_MOP_RELU_BWD, &tt) == 0, "tiled %g", cb_mop_tiled(CB_MOP_POOL_BWD, &tt));
    tt.r = tt.s = 3, tt.p = tt.q = 4;
    CHECK(cb_mop_tiled(CB_MOP_POOL_BWD, &tt) == 0, "3x3 at stride 2 overlaps: %g", cb_mop_tiled(CB_MOP_POOL_BWD, &tt));
    tt.r = tt.s = tt.stride_h = tt.stride_w = 1;
    CHECK(cb_mop_tiled(CB_MOP_POOL_FWD, &tt) == 0, "a 1x1 window: %g", cb_mop_tiled(CB_MOP_POOL_FWD, &tt));
    // the window term: N*C*H*W x (R / stride_h + S / stride_w) / 2; nothing for other passes
    cb_conv_params t = {.n = 2, .c = 3, .h = 10, .w = 10, .r = 3, .s = 3, .p = 10, .q = 10, .stride_h = 1, .stride_w = 1};
    CHECK(cb_mop_window(CB_MOP_POOL_BWD, &t) == 600 * 3.0 && cb_mop_window(CB_MOP_COPY, &t) == 0, "window %g", cb_mop_window(CB_MOP_POOL_BWD, &t));
    CHECK(cb_mop_visits(CB_MOP_AVGPOOL_FWD, &t) == 600 * 9.0 && cb_mop_visits(CB_MOP_BN_BWD, &t) == 0, "visits %g", cb_mop_visits(CB_MOP_AVGPOOL_FWD, &t));
    t.stride_h = t.stride_w = 2, t.p = t.q = 5;
    CHECK(cb_mop_window(CB_MOP_POOL_FWD, &t) == 600 * 1.5 && cb_mop_visits(CB_MOP_POOL_FWD, &t) == 150 * 9.0, "strided window %g, visits %g",
          cb_mop_window(CB_MOP_POOL_FWD, &t), cb_mop_visits(CB_MOP_POOL_FWD, &t));

    // a layer: global average, 3x3 max at stride 1, TF SAME 3x3 max at stride 2 (trailing pad larger)
    const char *json = "{\"name\": \"p\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [8, 28, 28, 64]},"
                       "\"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1, 1, 64, 64], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1]},"
                       "\"m1\": {\"parents\": [\"c\"], \"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"},"
                       "\"m2\": {\"parents\": [\"m1\"], \"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"SAME\"},"
                       "\"g\": {\"parents\": [\"m2\"], \"type\": \"AvgPool\", \"ksize\": [1, 14, 14, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"VALID\"}}}";
    cb_net *net = cb_net_load_string(json, "test", &err);
    CHECK(net, "load: %s", err.msg);
    if (!net) return;
    CHECK(net->nlayers == 5 && net->layers[4].p.pool.avg && net->layers[3].out.h == 14, "the net as meant");
    cb_device e = gpu_device();
    e.cal.algo[0] = (cb_cal_algo){.name = "FWD_IMPLICIT_GEMM", .phase = CB_PHASE_FORWARD, .rate = 30e12}; // calibrated: the model of cb_predict_layer_cal
    cb_algo_form_of(e.cal.algo[0].name, &e.cal.algo[0].form);
    e.cal.nalgo = 1;
    for (int m = 0; m < CB_MOP_COUNT; m++) e.cal.mop[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 5e-6, .n = 1};
    e.cal.mop[CB_MOP_POOL_BWD].win_s = 1e-12;      // cuDNN max
    e.cal.mop[CB_MOP_AVGPOOL_BWD].win_s = 4e-12;   // cuDNN average
    e.cal.mop[CB_MOP_OWNPOOL_BWD].win_s = 0.25e-12; // the own kernels
    cb_model_opts mo = {CB_PREC_FP32, 0, false, CB_LAYOUT_NCHW, false, false};
    double base = 0, got[5] = {0}, X[5] = {0}, R[5] = {0};
    for (int i = 2; i <= 4; i++) {
        const cb_layer *L = &net->layers[i];
        cb_conv_params x = {.n = (int)L->in.n, .c = (int)L->in.c, .h = (int)L->in.h, .w = (int)L->in.w, .p = (int)L->out.h, .q = (int)L->out.w};
        base = 5e-6 + cb_mop_bytes(CB_MOP_POOL_BWD, &x) / 2e12;
        X[i] = base, R[i] = (double)x.n * x.c * x.h * x.w * L->p.pool.win.r / L->p.pool.win.stride_h;
        cb_pred p;
        cb_predict_layer(&e, net, i, CB_PHASE_BWD_DATA, &mo, &p);
        got[i] = p.ms / 1e3;
    }
    CHECK(close_rel(got[2], X[2] + 1e-12 * R[2], 1e-9), "3x3 stride 1 max: cuDNN's max entry (%g s)", got[2]);
    CHECK(close_rel(got[3], X[3] + 0.25e-12 * R[3], 1e-9), "SAME at stride 2: the own kernels' entry (%g s)", got[3]);
    CHECK(close_rel(got[4], X[4] + 4e-12 * R[4], 1e-9), "global average: the average entry (%g s)", got[4]);
    e.cal.mop[CB_MOP_AVGPOOL_FWD].n = e.cal.mop[CB_MOP_AVGPOOL_BWD].n = 0; // an older calibration: max pooling's entry
    cb_pred p;
    cb_predict_layer(&e, net, 4, CB_PHASE_BWD_DATA, &mo, &p);
    CHECK(close_rel(p.ms / 1e3, X[4] + 1e-12 * R[4], 1e-9), "no average entry: the max entry (%g s)", p.ms / 1e3);
    // carried to a GPU with twice the SMs x clock: the window term halves
    cb_device f = gpu_device();
    f.cores = 264;
    e.cores = 132;
    cb_device_transfer_calibration(&f, &e, "e.json");
    CHECK(close_rel(f.cal.mop[CB_MOP_OWNPOOL_BWD].win_s, 0.125e-12, 1e-12), "window term carried: %g", f.cal.mop[CB_MOP_OWNPOOL_BWD].win_s);
    cb_net_free(net);
}

// auto's race of the own wgmma kernel (cb_model_opts.own_race): on NHWC storage in bf16 (tf32), a
// convolution phase is priced at the faster of the libraries' best and the calibration's
// igemm-wgmma-bf16 (-tf32) entry, where the shape takes the kernel (C a multiple of 64, resp. 32; the
// backward data at stride 1 with K a multiple of 64, resp. 32); never under cudnn's pricing
// (own_race off), on NCHW, or where the entry is the slower.
static void own_race_entries(void) {
    cb_net *n64 = conv_net(8, 28, 64, 128, 3, 1, "[1, 1]"), *n48 = conv_net(8, 28, 48, 128, 3, 1, "[1, 1]"), *two = two_conv(64);
    cb_device d = gpu_device();
    cb_cal_algo list[10] = {
        {.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_BF16, .rate = 30e12, .overhead_s = 10e-6},
        {.name = "igemm-wgmma-bf16", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_BF16, .rate = 60e12, .overhead_s = 10e-6},
        {.name = "BWD_DATA_ALGO_1", .phase = CB_PHASE_BWD_DATA, .prec = CB_PREC_BF16, .rate = 30e12, .overhead_s = 10e-6},
        {.name = "igemm-wgmma-bf16", .phase = CB_PHASE_BWD_DATA, .prec = CB_PREC_BF16, .rate = 60e12, .overhead_s = 10e-6},
        {.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_TF32, .rate = 20e12, .overhead_s = 10e-6},
        {.name = "igemm-wgmma-tf32", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_TF32, .rate = 40e12, .overhead_s = 10e-6},
        {.name = "BWD_DATA_ALGO_1", .phase = CB_PHASE_BWD_DATA, .prec = CB_PREC_TF32, .rate = 20e12, .overhead_s = 10e-6},
        {.name = "igemm-wgmma-tf32", .phase = CB_PHASE_BWD_DATA, .prec = CB_PREC_TF32, .rate = 40e12, .overhead_s = 10e-6},
        {.name = "FWD_IMPLICIT_PRECOMP_GEMM", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_FP32, .rate = 15e12, .overhead_s = 10e-6},
        {.name = "igemm-wgmma-3xtf32", .phase = CB_PHASE_FORWARD, .prec = CB_PREC_FP32, .rate = 45e12, .overhead_s = 10e-6},
    };
    set_algos(&d, list, 10);
    cb_model_opts lib = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false}, race = lib;
    race.own_race = true;
    cb_pred p, q;
    if (n64 && n48 && two) {
        cb_predict_layer(&d, n64, 1, CB_PHASE_FORWARD, &lib, &p);
        CHECK(!strcmp(p.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "cudnn's pricing: the library's, not the own kernel (%s)", p.name);
        cb_predict_layer(&d, n64, 1, CB_PHASE_FORWARD, &race, &q);
        CHECK(!strcmp(q.name, "igemm-wgmma-bf16") && q.ms < p.ms, "auto's race, C 64: the faster own kernel (%s, %g < %g ms)", q.name, q.ms, p.ms);
        cb_predict_layer(&d, n48, 1, CB_PHASE_FORWARD, &race, &q);
        CHECK(!strcmp(q.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "C 48, not a multiple of 64: the library's (%s)", q.name);
        cb_predict_layer(&d, two, 2, CB_PHASE_BWD_DATA, &race, &q);
        CHECK(!strcmp(q.name, "BWD_DATA_ALGO_1"), "backward data over K 96 (not a multiple of 64): the library's (%s)", q.name);
        cb_model_opts nchw = race;
        nchw.layout = CB_LAYOUT_NCHW;
        cb_predict_layer(&d, n64, 1, CB_PHASE_FORWARD, &nchw, &q);
        CHECK(!strcmp(q.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "bf16 NCHW storage: the library's (%s)", q.name);
        cb_model_opts t = race;
        t.precision = CB_PREC_TF32;
        cb_predict_layer(&d, two, 2, CB_PHASE_BWD_DATA, &t, &q);
        CHECK(!strcmp(q.name, "igemm-wgmma-tf32"), "tf32, backward data over K 96 (a multiple of 32): the own kernel (%s)", q.name);
        cb_predict_layer(&d, n48, 1, CB_PHASE_FORWARD, &t, &q);
        CHECK(!strcmp(q.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "tf32, C 48 (not a multiple of 32): the library's (%s)", q.name);
        cb_model_opts f = race; // strict fp32: the 3xTF32 entry, at its own precision only
        f.precision = CB_PREC_FP32;
        cb_predict_layer(&d, n64, 1, CB_PHASE_FORWARD, &f, &q);
        CHECK(!strcmp(q.name, "igemm-wgmma-3xtf32"), "fp32, C 64: the faster 3xTF32 entry (%s)", q.name);
        cb_predict_layer(&d, n48, 1, CB_PHASE_FORWARD, &f, &q);
        CHECK(!strcmp(q.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "fp32, C 48 (not a multiple of 32): the library's (%s)", q.name);
        f.own_race = false;
        cb_predict_layer(&d, n64, 1, CB_PHASE_FORWARD, &f, &q);
        CHECK(!strcmp(q.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "fp32 under cudnn: the library's (%s)", q.name);
        const cb_backend_caps *ac = cb_backend_caps_of("auto"), *dc = cb_backend_caps_of("cudnn");
        CHECK(ac && ac->races_own_conv && dc && !dc->races_own_conv, "auto declares the race of its own storage kernels, cudnn does not");
        d.cal.algo[1].rate = 10e12; // the own kernel the slower: the race keeps the library's
        cb_predict_layer(&d, n64, 1, CB_PHASE_FORWARD, &race, &q);
        CHECK(!strcmp(q.name, "FWD_IMPLICIT_PRECOMP_GEMM"), "the slower own entry loses the race (%s)", q.name);
    } else CHECK(0, "load");
    cb_net_free(n64);
    cb_net_free(n48);
    cb_net_free(two);
}


// The host floor (cb_predict_step): c1 -> c2, 3x3 convolutions with a bias and a ReLU. At batch 1
// the host's calls (40 us each here) outlast the GPU's work: a pass takes the host's time (per
// pass), or each layer its own larger side (per layer, never below per pass); at batch 256 the GPU
// sets every pass and no form changes the step. The calls are the cudnn backend's: per conv,
// forward the convolution and the bias pass with the ReLU; backward data the ReLU's gradient and
// the data gradient (none for c1, fed by the input); backward filter the filter's and the bias's.
static cb_net *two_convs(int n, int hw) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [%d, %d, %d, 64]},"
             "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 64], \"padding\": [1, 1],"
             "\"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
             "\"c2\": {\"parents\": [\"c1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 64], \"padding\": [1, 1],"
             "\"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"}}}",
             n, hw, hw);
    return json_net(json);
}

static void host_floor(void) {
    cb_net *small = two_convs(1, 16), *large = two_convs(256, 56);
    CHECK(small && large, "load");
    if (!small || !large) {
        cb_net_free(small);
        cb_net_free(large);
        return;
    }
    cb_device d = gpu_device();
    const cb_cal_algo algos[] = {{.name = "FWD_IMPLICIT_GEMM", .phase = CB_PHASE_FORWARD, .rate = 30e12, .overhead_s = 10e-6},
                                 {.name = "BWD_DATA_ALGO_1", .phase = CB_PHASE_BWD_DATA, .rate = 30e12, .overhead_s = 10e-6},
                                 {.name = "BWD_FILTER_ALGO_1", .phase = CB_PHASE_BWD_FILTER, .rate = 30e12, .overhead_s = 10e-6}};
    set_algos(&d, algos, 3);
    for (int m = 0; m < CB_MOP_COUNT; m++) d.cal.mop[m] = (cb_cal_mop){.bw = 2e12, .overhead_s = 5e-6, .n = 1};
    d.cal.host_call_s = 40e-6;
    cb_model_opts mo = {CB_PREC_FP32, 0, false, CB_LAYOUT_NCHW, false, false};
    int calls[2][CB_PHASE_COUNT] = {{2, 1, 2}, {2, 2, 2}}; // c1, c2: forward, backward data, backward filter
    for (int i = 1; i <= 2; i++)
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++)
            CHECK(cb_predict_layer_calls(&d, small, i, (cb_phase)ph, NULL) == calls[i - 1][ph], "c%d phase %d: %d calls, want %d", i, ph,
                  cb_predict_layer_calls(&d, small, i, (cb_phase)ph, NULL), calls[i - 1][ph]);
    cb_step_pred s[2][CB_HOST_FLOOR_COUNT]; // [small, large][form]
    for (int f = 0; f < CB_HOST_FLOOR_COUNT; f++) {
        d.cal.host_floor = f;
        cb_predict_step(&d, small, &mo, &s[0][f]);
        cb_predict_step(&d, large, &mo, &s[1][f]);
    }
    const cb_step_pred *n0 = &s[0][CB_HOST_FLOOR_NONE], *p0 = &s[0][CB_HOST_FLOOR_PASS], *l0 = &s[0][CB_HOST_FLOOR_LAYER];
    CHECK(p0->calls_fwd == 4 && p0->calls_bwd == 7 && close_rel(p0->host_fwd_ms, 0.16, 1e-9) && close_rel(p0->host_bwd_ms, 0.28, 1e-9),
          "calls %d + %d, host %g + %g ms", p0->calls_fwd, p0->calls_bwd, p0->host_fwd_ms, p0->host_bwd_ms);
    CHECK(n0->fwd_ms < p0->host_fwd_ms && n0->total_ms < 0.5 * p0->total_ms, "batch 1: the host's time dominates (GPU %g ms, step %g -> %g ms)",
          n0->fwd_ms, n0->total_ms, p0->total_ms);
    CHECK(p0->host_bound_fwd && p0->host_bound_bwd && close_rel(p0->fwd_pass_ms, p0->host_fwd_ms, 1e-12) &&
              close_rel(p0->total_ms, p0->host_fwd_ms + p0->host_bwd_ms + p0->criterion_ms + p0->update_ms, 1e-12),
          "per pass: the host's time (%g ms)", p0->total_ms);
    CHECK(l0->total_ms >= p0->total_ms - 1e-12 && close_rel(n0->fwd_ms, p0->fwd_ms, 1e-12), "per layer %g >= per pass %g; GPU times kept",
          l0->total_ms, p0->total_ms);
    for (int f = 0; f < CB_HOST_FLOOR_COUNT; f++)
        CHECK(s[1][f].total_ms == s[1][CB_HOST_FLOOR_NONE].total_ms && !s[1][f].host_bound_fwd && !s[1][f].host_bound_bwd &&
                  s[1][f].total_ms > 20 * (s[1][f].host_fwd_ms + s[1][f].host_bwd_ms),
              "batch 256, %s: the GPU's (%g ms against none's %g)", cb_host_floor_name((cb_host_floor)f), s[1][f].total_ms,
              s[1][CB_HOST_FLOOR_NONE].total_ms);
    // no host_call_s (a calibration before it): launch_s x CB_HOST_CALL_PER_LAUNCH
    bool measured = true;
    d.cal.host_call_s = 0, d.cal.launch_s = 6e-6;
    CHECK(close_rel(cb_cal_host_call_s(&d.cal, &measured), 6e-6 * CB_HOST_CALL_PER_LAUNCH, 1e-12) && !measured, "fallback %g",
          cb_cal_host_call_s(&d.cal, NULL));
    cb_net_free(small);
    cb_net_free(large);
}

// host_call_s and host_floor survive JSON; an entry without them (the committed H200 calibration
// of 2026-11-25) loads with neither: no floor by default, launch_s for the host's time
static void host_call_json(void) {
    cb_device d = gpu_device(), back;
    cb_error err = {0};
    d.cal.launch_s = 6e-6, d.cal.host_call_s = 7.5e-6, d.cal.host_graph_call_s = 19e-6, d.cal.host_floor = CB_HOST_FLOOR_PASS;
    cJSON *j = cb_device_to_json(&d);
    memset(&back, 0, sizeof back);
    CHECK(j && cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.host_call_s == 7.5e-6 &&
              back.cal.host_graph_call_s == 19e-6 && back.cal.host_floor == CB_HOST_FLOOR_PASS,
          "round trip: %g s, graph %g s, form %d (%s)", back.cal.host_call_s, back.cal.host_graph_call_s, back.cal.host_floor, err.msg);
    bool measured = false;
    CHECK(cb_cal_host_call_s(&back.cal, &measured) == 7.5e-6 && measured, "the measured host time is used");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "calibration"), "host_call_s");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "calibration"), "host_floor");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "calibration"), "host_graph_call_s");
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.host_call_s == 0 && back.cal.host_floor == CB_HOST_FLOOR_NONE &&
              back.cal.host_graph_call_s == 0,
          "without the fields: %g s, form %d", back.cal.host_call_s, back.cal.host_floor);
    cJSON_Delete(j);
    // the engine's own time per call in a step (calibrate since 2026-11-28): saved and loaded; recorded,
    // not priced (host_call_s stays the step's)
    d.cal.host_engine_call_s = 9.25e-6;
    j = cb_device_to_json(&d);
    CHECK(j && cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.host_engine_call_s == 9.25e-6 &&
              cb_cal_host_call_s(&back.cal, &measured) == 7.5e-6 && measured,
          "the engine's host time: %g s round trip, %g s priced", back.cal.host_engine_call_s, cb_cal_host_call_s(&back.cal, NULL));
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "calibration"), "host_engine_call_s");
    CHECK(cb_device_from_json(j, &back, "test", &err) == CB_OK && back.cal.host_engine_call_s == 0 && cb_cal_host_call_s(&back.cal, NULL) == 7.5e-6,
          "without it: %g s, host_call_s priced", back.cal.host_engine_call_s);
    cJSON_Delete(j);
    const char *old = "docs/results/2026-11-25-h200-bias/call4/h200-cal.json.gz";
    CHECK(cb_device_load_file(old, &back, &err) == CB_OK && back.cal.nalgo > 0 && back.cal.host_call_s == 0 &&
              back.cal.host_floor == CB_HOST_FLOOR_NONE && close_rel(cb_cal_host_call_s(&back.cal, &measured), back.cal.launch_s, 1e-12) &&
              !measured,
          "%s: %s", old, err.msg);
}

// A convolution that the graph race runs (a *_GRAPH entry) costs the host a graph execution's time
// (host_graph_call_s) instead of a call's; the step's host time grows by the difference per such
// call and by nothing without the field
static void host_graph_calls(void) {
    cb_net *net = two_conv(64);
    cb_device d = gpu_device();
    set_bf16_algos(&d, "FWD_GRAPH", "BWD_DATA_GRAPH", "BWD_FILTER_GRAPH");
    d.cal.host_call_s = 5e-6;
    if (net) {
        cb_model_opts bf = {CB_PREC_BF16, 0, false, CB_LAYOUT_NHWC, false, false};
        cb_step_pred a, b;
        cb_predict_step(&d, net, &bf, &a);
        d.cal.host_graph_call_s = 20e-6;
        cb_predict_step(&d, net, &bf, &b);
        // graph executions, 15 us more each: forward pre's and conv's; backward pre's filter gradient (its
        // input takes none) and conv's two
        double want[2] = {1e3 * 15e-6 * 2, 1e3 * 15e-6 * 3};
        CHECK(a.host_graph_ms[0] == 0 && a.host_graph_ms[1] == 0 && close_rel(b.host_graph_ms[0], want[0], 1e-9) &&
                  close_rel(b.host_graph_ms[1], want[1], 1e-9) &&
                  close_rel(b.host_fwd_ms - a.host_fwd_ms, b.host_graph_ms[0], 1e-9) && close_rel(b.host_bwd_ms - a.host_bwd_ms, b.host_graph_ms[1], 1e-9),
              "graph executions' host time: forward %g ms, backward %g (without the field %g, %g)", b.host_graph_ms[0], b.host_graph_ms[1],
              a.host_graph_ms[0], a.host_graph_ms[1]);
        // the engine's recorded time per call changes nothing priced
        cb_step_pred c;
        d.cal.host_engine_call_s = 9e-6;
        cb_predict_step(&d, net, &bf, &c);
        CHECK(c.host_fwd_ms == b.host_fwd_ms && c.host_bwd_ms == b.host_bwd_ms && c.total_ms == b.total_ms,
              "with the engine's time per call recorded: host %g, %g ms (want %g, %g)", c.host_fwd_ms, c.host_bwd_ms, b.host_fwd_ms, b.host_bwd_ms);
    } else CHECK(0, "load");
    cb_net_free(net);
}

// the calibration grid holds none of the evaluation networks' convolutions (batch aside)
static void calibration_not_circular(void) {
    cb_conv_params sh[CB_CAL_MAX_SHAPES];
    int ns = cb_cal_conv_shapes(sh, CB_CAL_MAX_SHAPES), convs = 0;
    const char *nets[] = {"nets/alexnet.json", "nets/vgg16.json", "nets/googlenet.json", "nets/resnet50.json"};
    for (int k = 0; k < 4; k++) {
        cb_error err = {0};
        cb_net *net = cb_net_load(nets[k], &err);
        CHECK(net, "%s: %s", nets[k], err.msg);
        if (!net) continue;
        for (int i = 0; i < net->nlayers; i++) {
            if (net->layers[i].op != CB_OP_CONV) continue;
            cb_conv_params p;
            cb_conv_params_of(&net->layers[i], &p);
            convs++;
            for (int j = 0; j < ns; j++)
                CHECK(!(sh[j].c == p.c && sh[j].h == p.h && sh[j].w == p.w && sh[j].k == p.k && sh[j].r == p.r &&
                        sh[j].stride_h == p.stride_h),
                      "calibration shape %d is %s layer %s", j, nets[k], net->layers[i].name);
        }
        cb_net_free(net);
    }
    CHECK(convs > 120 && ns >= 30, "%d convolutions, %d shapes", convs, ns);
}

// calibrate --shapes-from: a network's convolutions that calibrate measures as they are, once each
static void calibration_net_shapes(void) {
    const char *js =
        "{\"name\": \"cal\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [4, 20, 20, 16]},"
        "\"a\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 16, 32], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1]},"
        "\"b\": {\"parents\": [\"a\"], \"type\": \"Convolution\", \"filter\": [3, 3, 32, 32], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1]},"
        "\"c\": {\"parents\": [\"b\"], \"type\": \"Convolution\", \"filter\": [3, 3, 32, 32], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1]},"
        "\"same\": {\"parents\": [\"c\"], \"type\": \"Convolution\", \"filter\": [3, 3, 32, 32], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1]},"
        "\"dil\": {\"parents\": [\"same\"], \"type\": \"Convolution\", \"filter\": [3, 3, 32, 32], \"padding\": [2, 2], \"dilations\": [2, 2], \"strides\": [1, 1, 1, 1]},"
        "\"grp\": {\"parents\": [\"dil\"], \"type\": \"Convolution\", \"filter\": [3, 3, 16, 32], \"padding\": [1, 1], \"groups\": 2, \"strides\": [1, 1, 1, 1]},"
        "\"dw\": {\"parents\": [\"grp\"], \"type\": \"Convolution\", \"filter\": [3, 5, 1, 32], \"padding\": [1, 2], \"groups\": 32, \"strides\": [1, 1, 1, 1]},"
        "\"fc\": {\"parents\": [\"dw\"], \"type\": \"InnerProduct\", \"num_outputs\": 10}}}";
    cb_error err = {0};
    cb_net *net = cb_net_load_string(js, "cal.json", &err);
    CHECK(net != NULL, "%s", err.msg);
    if (!net) return;
    cb_conv_params out[8];
    int n = cb_cal_net_conv_shapes(net, out, 0, 8);
    // a, b (c repeats b), the TF SAME stride-2 layer as cuDNN runs it (20 px padded to 21: pads 0 and 1
    // on 20 px, symmetric 0 on 21), dw; not the dilated or the grouped one
    CHECK(n == 4, "4 shapes (a, b, same, dw), got %d", n);
    if (n == 4) {
        CHECK(out[0].c == 16 && out[0].k == 32 && out[1].c == 32 && out[1].groups == 1, "a then b, got C %d -> %d, C %d", out[0].c, out[0].k,
              out[1].c);
        CHECK(out[2].h == 21 && out[2].w == 21 && out[2].pad_top == 0 && out[2].p == 10 && out[2].stride_h == 2,
              "the SAME layer on its padded copy, got %dx%d pad %d -> %d", out[2].h, out[2].w, out[2].pad_top, out[2].p);
        CHECK(out[3].groups == 32 && out[3].r == 3 && out[3].s == 5 && out[3].pad_left == 2, "the depthwise 3x5, got groups %d %dx%d",
              out[3].groups, out[3].r, out[3].s);
    }
    CHECK(cb_cal_net_conv_shapes(net, out, n, 8) == n, "a second pass adds nothing");
    CHECK(cb_cal_net_conv_shapes(net, out, 0, 2) == 2, "the cap holds");
    cb_net_free(net);
}

int main(void) {
    RUN(winograd_multiplies);
    RUN(winograd_single_tile);
    RUN(gemm_fft_counts);
    RUN(roofline_arithmetic);
    RUN(device_database);
    RUN(paleo_vgg16_forward);
    RUN(paleo_vgg16_backward_data);
    RUN(paleo_vgg16_backward_filter);
    RUN(algorithm_choice);
    RUN(allreduce_schemes);
    RUN(simulation_invariants);
    RUN(simulation_grad_precision);
    RUN(stored_interconnect);
    RUN(measured_grad_precision);
    RUN(named_forms);
    RUN(wave_util);
    RUN(nnls_recovers);
    RUN(calibration_fit);
    RUN(calibration_net_shapes);
    RUN(calibration_fit_apart);
    RUN(calibration_local);
    RUN(calibration_best);
    RUN(wave_fill);
    RUN(pass_start);
    RUN(launch_overlap);
    RUN(grouped_entries);
    RUN(graph_entries);
    RUN(unaligned_entries);
    RUN(calibrated_prediction);
    RUN(epilogue_prediction);
    RUN(concat_relu_prediction);
    RUN(cudnn_fallback);
    RUN(own_race_entries);
    RUN(channel_pad);
    RUN(bf16_passes);
    RUN(bn_legacy_nhwc);
    RUN(conv_epilogues);
    RUN(sum_passes);
    RUN(fc_permute);
    RUN(update_pass);
    RUN(concat_entries);
    RUN(weight_copies_again);
    RUN(calibration_transfer);
    RUN(pool_entries);
    RUN(pool_lines);
    RUN(spill_entries);
    RUN(calibration_not_circular);
    RUN(host_floor);
    RUN(host_call_json);
    RUN(host_graph_calls);
    return test_summary();
}
