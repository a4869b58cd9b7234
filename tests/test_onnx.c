// ONNX import: models built by tests/onnx_models.py (Debian's python3-onnx and python3-torch; a
// missing one fails the test, it is never skipped). Forward outputs against PyTorch's on the same
// weights, the emitted description, and the error paths (one line each, a status that exits 2).
#include "check.h"
#include "convbench.h"
#include "core/backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[] = "/tmp/convbench-onnx-XXXXXX";

static float *read_floats(const char *path, size_t n) {
    FILE *f = fopen(path, "rb");
    float *v = malloc(n * sizeof(float) + 4);
    size_t got = f ? fread(v, sizeof(float), n + 1, f) : 0;
    if (f) fclose(f);
    if (got != n) free(v), v = NULL;
    return v;
}

static void squeeze(char *s) { // drop whitespace: cJSON_Print's layout is not the point
    char *o = s;
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n') *o++ = *s;
    *o = 0;
}

// The output of the last layer on the model's own weights equals PyTorch's.
static void forward_case(const char *name, const char *backend) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
    cb_error err = {0};
    cb_net *net = cb_net_load(path, &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = backend;
    o.train = false;
    cb_exec *e = cb_exec_create(net, &o, &err);
    CHECK(e, "%s: %s", backend, err.msg);
    const cb_layer *last = &net->layers[net->nlayers - 1];
    size_t nin = (size_t)cb_shape_count(net->layers[0].out), nout = (size_t)cb_shape_count(last->out);
    snprintf(path, sizeof path, "%s/%s.in", dir, name);
    float *x = read_floats(path, nin);
    snprintf(path, sizeof path, "%s/%s.out", dir, name);
    float *want = read_floats(path, nout), *got = malloc(nout * sizeof(float));
    CHECK(x && want, "%s: input or output file does not hold %zu and %zu values", name, nin, nout);
    if (e && x && want) {
        cb_exec_set_input(e, x, NULL);
        cb_exec_forward(e, false, NULL);
        cb_exec_act_download(e, net->nlayers - 1, got, e->lb[net->nlayers - 1].y);
        double maxd = 0, maxv = 0;
        for (size_t i = 0; i < nout; i++) {
            maxd = fmax(maxd, fabs((double)got[i] - want[i]));
            maxv = fmax(maxv, fabs((double)want[i]));
        }
        CHECK(maxd <= 1e-4 * fmax(maxv, 1), "%s on %s: max |convbench - torch| = %g (max |torch| %g)", name, backend, maxd, maxv);
        printf("  %s on %s: max |convbench - torch| = %.3g (max |torch| %.3g)\n", name, backend, maxd, maxv);
    }
    free(x), free(want), free(got);
    cb_exec_destroy(e);
    cb_net_free(net);
}

static void test_forward(void) {
    char path[512], name[128], backends[64];
    snprintf(path, sizeof path, "%s/forward.txt", dir);
    FILE *f = fopen(path, "r");
    CHECK(f, "no %s", path);
    int n = 0;
    while (f && fscanf(f, "%127s %63s", name, backends) == 2) {
        n++;
        for (char *b = strtok(backends, ","); b && strcmp(b, "-"); b = strtok(NULL, ",")) forward_case(name, b);
    }
    if (f) fclose(f);
    CHECK(n >= 1, "no forward cases");
}

// Calls fn(model path, name, needle) for each "NAME<TAB>NEEDLE" line of DIR/list; the count.
static int each_case(const char *list, void (*fn)(const char *path, const char *name, const char *needle)) {
    char path[1024], line[600];
    snprintf(path, sizeof path, "%s/%s", dir, list);
    FILE *f = fopen(path, "r");
    CHECK(f, "no %s", path);
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        tab[strcspn(tab + 1, "\n") + 1] = 0;
        snprintf(path, sizeof path, "%s/%s.onnx", dir, line);
        fn(path, line, tab + 1);
        n++;
    }
    if (f) fclose(f);
    return n;
}

// The model imports, and its description contains the needle.
static void json_case(const char *path, const char *name, const char *needle) {
    cb_error err = {0};
    char *js = cb_onnx_import(path, 0, &err);
    CHECK(js, "%s", err.msg);
    if (js) {
        squeeze(js);
        CHECK(strstr(js, needle), "%s: the description lacks %s", name, needle);
    }
    free(js);
}

// The model fails to load with one line holding the needle, and a bad-input status (exit 2).
static void error_case(const char *path, const char *name, const char *needle) {
    cb_error err = {0};
    cb_net *net = cb_net_load(path, &err);
    CHECK(!net, "%s loaded", name);
    cb_net_free(net);
    CHECK(strstr(err.msg, needle), "%s: message '%s' lacks '%s'", name, err.msg, needle);
    CHECK(!strchr(err.msg, '\n'), "%s: more than one line", name);
    CHECK(err.status != CB_OK && err.status != CB_STATUS_NOMEM && err.status != CB_STATUS_DEVICE, "%s: status %s", name,
          cb_status_name(err.status));
}

static void test_json(void) {
    int n = each_case("json.txt", json_case);
    CHECK(n >= 10, "only %d description checks", n);
}

static void test_errors(void) {
    int n = each_case("errors.txt", error_case);
    CHECK(n >= 8, "only %d error checks", n);
}

// Damaged models: each loads or fails with one line; nothing crashes (ASan run in make test).
static void test_fuzz(void) {
    char path[1024], name[128];
    snprintf(path, sizeof path, "%s/fuzz.txt", dir);
    FILE *f = fopen(path, "r");
    CHECK(f, "no %s", path);
    int n = 0, loaded = 0;
    while (f && fscanf(f, "%127s", name) == 1) {
        snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
        cb_error err = {0};
        cb_net *net = cb_net_load(path, &err);
        if (net) loaded++;
        else CHECK(err.msg[0] && !strchr(err.msg, '\n'), "%s: no message or more than one line: %s", name, err.msg);
        cb_net_free(net);
        n++;
    }
    if (f) fclose(f);
    CHECK(n >= 20, "only %d damaged models", n);
    printf("  %d damaged models: %d still load, %d refused with one line\n", n, loaded, n - loaded);
}

// --batch replaces a symbolic batch; the weights survive it.
static void test_batch(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/asym_pads.onnx", dir);
    cb_error err = {0};
    char *js = cb_onnx_import(path, 5, &err);
    CHECK(js, "%s", err.msg);
    if (js) {
        squeeze(js);
        CHECK(strstr(js, "\"tensor\":[5,8,8,3]"), "batch 5 not in %s", js);
    }
    free(js);
}

int main(void) {
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/onnx_models.py %s 2>%s/python.log", dir, dir);
    int rc = system(cmd);
    case_begin();
    CHECK(rc == 0, "tests/onnx_models.py failed (exit %d; Debian's python3-onnx and python3-torch are needed: "
                   "scripts/install-deps.sh); see %s/python.log", rc, dir);
    case_end("build the models with /usr/bin/python3");
    if (rc == 0) {
        RUN(test_forward);
        RUN(test_json);
        RUN(test_errors);
        RUN(test_batch);
        RUN(test_fuzz);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    }
    return test_summary();
}
