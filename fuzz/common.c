#define _XOPEN_SOURCE 700 // mkdtemp
#include "common.h"
#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void cleanup(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0) fprintf(stderr, "fuzz: could not remove %s\n", dir);
}

const char *fuzz_dir(void) {
    if (!dir[0]) {
        // memory-backed where there is one: a harness writes its input to a file on every run
        const char *t = getenv("TMPDIR");
        if (!t || !*t || strlen(t) >= 40) t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/cbfuzz.XXXXXX", t);
        if (!mkdtemp(dir)) abort();
        atexit(cleanup);
    }
    return dir;
}

const char *fuzz_file(const char *name, const uint8_t *data, size_t n) {
    static char paths[4][128];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(p, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) abort();
    return p;
}

static bool sane(double x) { return x >= 0 && !isnan(x); }

void fuzz_predict(const cb_device *d, const cb_net *net) {
    cb_model_opts o = {.precision = CB_PREC_FP32};
    for (int i = 0; i < net->nlayers; i++)
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
            cb_pred p;
            cb_predict_layer(d, net, i, (cb_phase)ph, &o, &p);
            FUZZ_ASSERT(sane(p.ms));
            FUZZ_ASSERT(sane(cb_paleo_layer_ms(d, net, i, (cb_phase)ph)));
        }
    cb_pred u;
    cb_predict_update(d, net, &o, &u);
    FUZZ_ASSERT(sane(u.ms));
}

const cb_device *fuzz_device(void) {
    static cb_device d;
    static bool made;
    if (!made) {
        cb_error err = {0};
        cJSON *j = cb_json_parse("{\"name\": \"fuzz-gpu\", \"clock_mhz\": 1980, \"mem_bytes\": 141e9, \"mem_bw\": 4.8e12, "
                                 "\"launch_s\": 4e-6, \"peak\": {\"fp32\": 67e12, \"tf32\": 495e12, \"bf16\": 990e12}}",
                                 "fuzz", &err);
        if (!j || cb_device_from_json(j, &d, "fuzz", &err) != CB_OK) abort();
        cJSON_Delete(j);
        made = true;
    }
    return &d;
}

const cb_device *fuzz_cal_device(void) {
    static cb_device d;
    static bool made;
    if (!made) {
        const char *path = "tests/data/h200-cal-subset.json"; // harnesses run from the repository root
        cb_error err = {0};
        cJSON *j = cb_json_read(path, &err);
        cb_cal_sample *s = NULL;
        int n = 0;
        if (!j || cb_device_from_json(j, &d, path, &err) != CB_OK ||
            cb_cal_samples_from_json(cJSON_GetObjectItemCaseSensitive(j, "samples"), &s, &n, path, &err) != CB_OK ||
            cb_cal_fit(s, n, &d, &err) != CB_OK) {
            fprintf(stderr, "fuzz: %s (run from the repository root)\n", err.msg);
            abort();
        }
        free(s);
        cJSON_Delete(j);
        made = true;
    }
    return &d;
}

cb_net *fuzz_net(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(
        "{\"name\": \"fuzz\", \"layers\": {"
        "\"data\": {\"type\": \"Input\", \"parents\": [], \"tensor\": [2, 8, 8, 3]},"
        "\"conv\": {\"type\": \"Convolution\", \"parents\": [\"data\"], \"filter\": [3, 3, 3, 4], \"padding\": \"SAME\","
        " \"normalizer_fn\": \"batch_norm\"},"
        "\"pool\": {\"type\": \"Pooling\", \"parents\": [\"conv\"], \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1]},"
        "\"bn\": {\"type\": \"BatchNorm\", \"parents\": [\"pool\"]},"
        "\"fc\": {\"type\": \"InnerProduct\", \"parents\": [\"bn\"], \"num_outputs\": 10}}}",
        "fuzz-net", &err);
    if (!net) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
    return net;
}
