// Network descriptions: every built-in network's parameters and shapes against the counts
// cross-checked with PyTorch (tests/data/nets_expected.json), Paleo-format features (Block,
// ModelParallel, Concatenate, Elementwise, padding rules), and every bad-input case with its
// status and message.
#include "check.h"
#include "core/act.h"
#include "convbench.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef CB_SOURCE_DIR
#define CB_SOURCE_DIR "."
#endif

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    return b;
}

// A built-in network by name (every activation the modern ones use is the engine's own now)
static cb_net *load_builtin(const char *name, cb_error *err) { return cb_net_load(name, err); }

static void check_expected(const char *file, int min_nets) {
    char *text = slurp(file);
    CHECK(text != NULL, "%s missing (run from the source root)", file);
    if (!text) return;
    cJSON *root = cJSON_Parse(text);
    free(text);
    CHECK(root != NULL, "nets_expected.json does not parse");
    int nets = 0;
    for (cJSON *n = root ? root->child : NULL; n; n = n->next) {
        cb_error err = {0};
        cb_net *net = load_builtin(n->string, &err);
        CHECK(net != NULL, "%s: %s", n->string, err.msg);
        if (!net) continue;
        nets++;
        cb_net_cost c;
        cb_net_cost_total(net, &c);
        double want = cJSON_GetObjectItem(n, "params")->valuedouble;
        CHECK(c.total.params == (int64_t)want, "%s: %lld params, want %.0f", n->string, (long long)c.total.params, want);
        cJSON *layers = cJSON_GetObjectItem(n, "layers");
        int checked = 0;
        for (cJSON *l = layers ? layers->child : NULL; l; l = l->next) {
            int i = cb_net_find(net, l->string);
            CHECK(i >= 0, "%s: layer %s not found", n->string, l->string);
            if (i < 0) continue;
            cb_shape s = net->layers[i].out;
            int k = cJSON_GetArraySize(l);
            int64_t got[4] = {s.n, s.h, s.w, s.c};
            if (s.rank == 2) got[1] = s.c;
            CHECK(k == s.rank, "%s/%s: rank %d, want %d", n->string, l->string, s.rank, k);
            for (int d = 0; d < k && k == s.rank; d++)
                CHECK(got[d] == (int64_t)cJSON_GetArrayItem(l, d)->valuedouble, "%s/%s dim %d: %lld", n->string, l->string,
                      d, (long long)got[d]);
            checked++;
        }
        CHECK(checked == net->nlayers, "%s: %d shapes checked of %d layers", n->string, checked, net->nlayers);
        cb_net_free(net);
    }
    CHECK(nets >= min_nets, "only %d networks checked", nets);
    cJSON_Delete(root);
}

static void test_builtin_nets(void) { check_expected("tests/data/nets_expected.json", 9); }
// MobileNetV2, EfficientNet-B0, ResNeXt-50, ConvNeXt-Tiny (checked against torchvision by tools/check_nets_torch.py)
static void test_builtin_modern_nets(void) { check_expected("tests/data/nets_expected_modern.json", 4); }

static cb_net *load(const char *json, cb_error *err) { return cb_net_load_string(json, "test.json", err); }

#define NET(layers) "{\"name\": \"t\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 8, 8, 3]}" layers "}}"

static void test_same_padding_asymmetric(void) {
    cb_error err = {0};
    // 8x8, 3x3 stride 2 SAME: out 4, total pad 1: none before, one after (TensorFlow)
    cb_net *net = load(NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 3, 5],"
                           " \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1]}"
                           ", \"d\": {\"parents\": [\"c\"], \"type\": \"Convolution\", \"filter\": [4, 2, -1, 7],"
                           " \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null}"),
                       &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    const cb_layer *c = &net->layers[1], *d = &net->layers[2];
    CHECK(c->out.h == 4 && c->out.w == 4 && c->out.c == 5, "c out %lldx%lld", (long long)c->out.h, (long long)c->out.w);
    CHECK(c->p.conv.win.pad_top == 0 && c->p.conv.win.pad_bottom == 1, "pads %d+%d", c->p.conv.win.pad_top,
          c->p.conv.win.pad_bottom);
    CHECK(d->p.conv.cin == 5, "cin -1 resolves to the input's channels: %d", d->p.conv.cin);
    CHECK(d->p.conv.win.pad_top == 1 && d->p.conv.win.pad_bottom == 2, "4-high SAME: %d+%d", d->p.conv.win.pad_top,
          d->p.conv.win.pad_bottom);
    CHECK(d->p.conv.win.pad_left == 0 && d->p.conv.win.pad_right == 1, "2-wide SAME: %d+%d", d->p.conv.win.pad_left,
          d->p.conv.win.pad_right);
    CHECK(d->act == CB_ACT_NONE && c->act == CB_ACT_RELU, "activation default relu, null none");
    // every activation by its lower-case name, fused and as an Activation layer (the names an
    // ONNX importer emits), and the errors
    for (int ai = CB_ACT_NONE + 1; ai < CB_ACT_COUNT; ai++) {
        cb_act want = (cb_act)ai;
        const char *fn = cb_act_name(want);
        char js[1024];
        snprintf(js, sizeof js,
                 "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 4, 4, 3]},"
                 " \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 3, 4], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"%s\"},"
                 " \"a\": {\"parents\": [\"c\"], \"type\": \"Activation\", \"fn\": \"%s\"},"
                 " \"s\": {\"parents\": [\"a\", \"c\"], \"type\": \"Elementwise\", \"activation_fn\": \"%s\"},"
                 " \"f\": {\"parents\": [\"s\"], \"type\": \"InnerProduct\", \"num_outputs\": 3, \"activation_fn\": \"%s\"}}}",
                 fn, fn, fn, fn);
        cb_net *an = cb_net_load_string(js, "acts.json", &err);
        CHECK(an && an->layers[1].act == want && an->layers[2].op == CB_OP_ACT && an->layers[2].p.act.fn == want &&
                  an->layers[2].act == CB_ACT_NONE && an->layers[3].act == want && an->layers[4].act == want,
              "activation %s: %s", fn, an ? "wrong fields" : err.msg);
        cb_net_free(an);
    }
    static const struct { const char *body, *needle; } bad_acts[] = {
        {"\"type\": \"Activation\", \"fn\": \"swishy\"", "unknown fn swishy"},
        {"\"type\": \"Activation\"", "needs \"fn\""},
        {"\"type\": \"Activation\", \"fn\": null", "names no function"},
        {"\"type\": \"InnerProduct\", \"num_outputs\": 3, \"activation_fn\": \"SiLU\"", "unknown activation_fn SiLU"},
    };
    for (size_t k = 0; k < sizeof bad_acts / sizeof bad_acts[0]; k++) {
        char js[512];
        snprintf(js, sizeof js,
                 "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 4, 4, 3]},"
                 " \"a\": {\"parents\": [\"data\"], %s}}}", bad_acts[k].body);
        cb_net *an = cb_net_load_string(js, "bad.json", &err);
        CHECK(!an && err.status == CB_STATUS_PARSE && strstr(err.msg, "layer 'a'") && strstr(err.msg, bad_acts[k].needle),
              "bad activation %zu: %s", k, an ? "accepted" : err.msg);
        cb_net_free(an);
    }
    CHECK(cb_net_set_batch(net, 7, &err) == CB_OK && net->layers[2].out.n == 7, "set_batch");
    cb_net_free(net);
}

static void test_block_concat_elementwise(void) {
    cb_error err = {0};
    cb_net *net = load(NET(
        ", \"inc\": {\"type\": \"Block\", \"parents\": [\"data\"], \"endpoint\": \"cat\", \"layers\": {"
        "   \"a\": {\"parents\": [], \"type\": \"Convolution\", \"filter\": [1, 1, 3, 4], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
        "   \"b\": {\"parents\": [], \"type\": \"Convolution\", \"filter\": [3, 3, 3, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
        "   \"p\": {\"parents\": [], \"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"},"
        "   \"cat\": {\"parents\": [\"a\", \"b\", \"p\"], \"type\": \"Concatenate\", \"dim\": 3}}}"
        ", \"x\": {\"parents\": [\"inc\"], \"type\": \"Convolution\", \"filter\": [1, 1, 13, 13], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1]}"
        ", \"sum\": {\"parents\": [\"x\", \"inc/cat\"], \"type\": \"Elementwise\", \"activation_fn\": \"relu\"}"
        ", \"fc\": {\"parents\": [\"sum\"], \"type\": \"InnerProduct\", \"num_outputs\": 10}"
        ", \"sm\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 10}"),
                       &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    int cat = cb_net_find(net, "inc/cat"), x = cb_net_find(net, "x"), sum = cb_net_find(net, "sum");
    CHECK(cat > 0 && net->layers[cat].out.c == 13, "concat channels 4+6+3");
    CHECK(x > cat && net->layers[x].parents[0] == cat, "block name resolves to its endpoint");
    CHECK(sum > x && net->layers[sum].nparents == 2, "elementwise parents");
    CHECK(net->layers[cat].nchildren == 2, "endpoint consumed twice: %d", net->layers[cat].nchildren);
    int fc = cb_net_find(net, "fc");
    CHECK(net->layers[fc].in.c == 13 * 64 && net->layers[fc].out.rank == 2, "fc flattens");
    cb_net_free(net);
}

static void test_model_parallel(void) {
    cb_error err = {0};
    cb_net *net = load(NET(
        ", \"mp\": {\"type\": \"ModelParallel\", \"splits\": 2, \"parents\": [\"data\"], \"layers\": {"
        "   \"c1\": {\"parents\": [], \"type\": \"Convolution\", \"filter\": [3, 3, 3, 8], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
        "   \"cat\": {\"parents\": [\"c1@all\"], \"type\": \"Concatenate\", \"dim\": 3},"
        "   \"c2\": {\"parents\": [\"cat@self\"], \"type\": \"Convolution\", \"filter\": [3, 3, 8, 4], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]}}}"
        ", \"join\": {\"parents\": [\"mp/c2@all\"], \"type\": \"Concatenate\", \"dim\": 3}"),
                       &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    int c10 = cb_net_find(net, "mp/c1@0"), c11 = cb_net_find(net, "mp/c1@1"), cat1 = cb_net_find(net, "mp/cat@1"),
        join = cb_net_find(net, "join");
    CHECK(c10 > 0 && c11 > 0 && cat1 > 0 && join > 0, "split names");
    if (c10 > 0) CHECK(net->layers[c10].out.c == 4, "filters divided among 2 splits: %lld", (long long)net->layers[c10].out.c);
    if (cat1 > 0) CHECK(net->layers[cat1].out.c == 8, "@all gathers both splits");
    if (join > 0) CHECK(net->layers[join].out.c == 4 && net->layers[join].nparents == 2, "join of both c2 splits");
    if (c11 > 0) CHECK(net->layers[c11].split == 1 && net->layers[c11].splits == 2, "split index");
    cb_net_free(net);
}

typedef struct bad_case {
    const char *what, *json, *needle;
    cb_status status;
} bad_case;

static void test_bad_descriptions(void) {
    static const bad_case cases[] = {
        {"syntax", "{\"name\": \"t\",\n \"layers\": {\"data\": [1,, 2]}}", "line 2, column", CB_STATUS_PARSE},
        {"unknown type", NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Frobnicate\"}"), "layer 'c': unknown layer type 'Frobnicate'", CB_STATUS_PARSE},
        {"unknown key", NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Pooling\", \"ksize\": [1,2,2,1], \"size\": 3}"), "layer 'c': unknown key 'size'", CB_STATUS_PARSE},
        {"unknown parent", NET(", \"c\": {\"parents\": [\"nope\"], \"type\": \"ReLU\"}"), "layer 'c': unknown parent 'nope'", CB_STATUS_PARSE},
        {"cycle", NET(", \"a\": {\"parents\": [\"b\"], \"type\": \"ReLU\"}, \"b\": {\"parents\": [\"a\"], \"type\": \"ReLU\"}"), "cyclic", CB_STATUS_PARSE},
        {"self parent", NET(", \"a\": {\"parents\": [\"a\"], \"type\": \"ReLU\"}"), "own parent", CB_STATUS_PARSE},
        {"concat mismatch", NET(", \"p\": {\"parents\": [\"data\"], \"type\": \"Pooling\", \"ksize\": [1,2,2,1], \"strides\": [1,2,2,1]}, \"c\": {\"parents\": [\"data\", \"p\"], \"type\": \"Concatenate\", \"dim\": 3}"), "layer 'c': input 'p'", CB_STATUS_SHAPE},
        {"elementwise mismatch", NET(", \"x\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1,1,3,4], \"strides\": [1,1,1,1]}, \"s\": {\"parents\": [\"data\", \"x\"], \"type\": \"Elementwise\"}"), "layer 's': Elementwise inputs differ", CB_STATUS_SHAPE},
        {"concat dim", NET(", \"c\": {\"parents\": [\"data\", \"data\"], \"type\": \"Concatenate\", \"dim\": 5}"), "outside", CB_STATUS_SHAPE},
        {"concat dim rank 2", "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 8]}, \"c\": {\"parents\": [\"data\", \"data\"], \"type\": \"Concatenate\", \"dim\": 3}}}", "dimension 3, but the inputs have 2", CB_STATUS_SHAPE},
        {"zero size", NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [0,3,3,4]}"), "layer 'c': 'filter' dimension 0", CB_STATUS_SHAPE},
        {"negative tensor", "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, -8, 8, 3]}}}", "layer 'data': 'tensor' dimension 1", CB_STATUS_SHAPE},
        {"absurd size", NET(", \"f\": {\"parents\": [\"data\"], \"type\": \"InnerProduct\", \"num_outputs\": 1e15}"), "layer 'f': 'num_outputs'", CB_STATUS_SHAPE},
        {"overflow", "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2147483647, 2147483647, 2147483647, 3]}}}", "overflow 64 bits", CB_STATUS_SHAPE},
        {"kernel too large", NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [9,3,3,4], \"padding\": \"VALID\"}"), "layer 'c': kernel height 9 is larger", CB_STATUS_SHAPE},
        {"kernel too large padded", NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3,12,3,4], \"padding\": [1,1]}"), "kernel width 12 is larger than the padded input's 10", CB_STATUS_SHAPE},
        {"channel mismatch", NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3,3,4,4]}"), "expects 4 input channels", CB_STATUS_SHAPE},
        {"no input", "{\"layers\": {\"c\": {\"parents\": [\"x\"], \"type\": \"ReLU\"}}}", "no Input layer", CB_STATUS_PARSE},
        {"top-level key", "{\"name\": \"t\", \"layers\": {}, \"extra\": 1}", "unknown top-level key 'extra'", CB_STATUS_PARSE},
        {"not an object", "[1, 2]", "top level must be an object", CB_STATUS_PARSE},
        {"bad padding", NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3,3,3,4], \"padding\": \"FULL\"}"), "padding 'FULL'", CB_STATUS_PARSE},
        {"bad activation", NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3,3,3,4], \"activation_fn\": \"tanh\"}"), "unknown activation_fn tanh", CB_STATUS_PARSE},
        {"unknown @all", NET(", \"c\": {\"parents\": [\"data@all\"], \"type\": \"ReLU\"}"), "not a ModelParallel layer", CB_STATUS_PARSE},
        {"bad endpoint", NET(", \"b\": {\"type\": \"Block\", \"parents\": [\"data\"], \"endpoint\": \"zz\", \"layers\": {\"r\": {\"parents\": [], \"type\": \"ReLU\"}}}"), "endpoint 'zz'", CB_STATUS_PARSE},
        {"elementwise one parent", NET(", \"s\": {\"parents\": [\"data\"], \"type\": \"Elementwise\"}"), "layer 's': an Elementwise layer needs two", CB_STATUS_SHAPE},
        {"duplicate key", NET(", \"s\": {\"parents\": [\"data\"], \"type\": \"ReLU\", \"parents\": []}"), "duplicate key 'parents' in layers > s", CB_STATUS_PARSE},
        {"duplicate layer", NET(", \"s\": {\"parents\": [\"data\"], \"type\": \"ReLU\"}, \"s\": {\"parents\": [\"data\"], \"type\": \"ReLU\"}"), "duplicate key 's' in layers", CB_STATUS_PARSE},
        {"filter 1e30", NET(", \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1e30,1,1,1]}"), "'filter' dimension 0 is 1e+30", CB_STATUS_SHAPE},
        {"reshape overflow", NET(", \"r\": {\"parents\": [\"data\"], \"type\": \"Reshape\", \"output_shape\": [1, 2147483647, 2147483647, 2147483647]}"), "layer 'r': output_shape's sizes overflow", CB_STATUS_SHAPE},
        {"dimension over 2^31", "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [1, 65536, 65536, 1]}, \"s\": {\"parents\": [\"data\"], \"type\": \"Softmax\"}}}", "layer 's': output [1, 1, 1, 4294967296] (NHWC) has a dimension over", CB_STATUS_SHAPE},
        {"fc input too wide", "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [1, 65536, 65536, 1024]}, \"f\": {\"parents\": [\"data\"], \"type\": \"InnerProduct\", \"num_outputs\": 268435456}}}", "layer 'f': 4398046511104 input values per example", CB_STATUS_SHAPE},
        {"fc params overflow", "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [1, 2147483647]}, \"f\": {\"parents\": [\"data\"], \"type\": \"InnerProduct\", \"num_outputs\": 268435456}}}", "layer 'f': its parameters", CB_STATUS_SHAPE},
        {"modelparallel expansion", NET(", \"m\": {\"type\": \"ModelParallel\", \"parents\": [\"data\"], \"splits\": 4096, \"layers\": {\"a\": {\"parents\": [], \"type\": \"ReLU\"}, \"b\": {\"parents\": [\"a\"], \"type\": \"ReLU\"}, \"c\": {\"parents\": [\"b\"], \"type\": \"ReLU\"}, \"d\": {\"parents\": [\"c\"], \"type\": \"ReLU\"}, \"e\": {\"parents\": [\"d\"], \"type\": \"ReLU\"}, \"f\": {\"parents\": [\"e\"], \"type\": \"ReLU\"}, \"g\": {\"parents\": [\"f\"], \"type\": \"ReLU\"}, \"h\": {\"parents\": [\"g\"], \"type\": \"ReLU\"}, \"i\": {\"parents\": [\"h\"], \"type\": \"ReLU\"}, \"j\": {\"parents\": [\"i\"], \"type\": \"ReLU\"}, \"k\": {\"parents\": [\"j\"], \"type\": \"ReLU\"}, \"l\": {\"parents\": [\"k\"], \"type\": \"ReLU\"}, \"m\": {\"parents\": [\"l\"], \"type\": \"ReLU\"}, \"n\": {\"parents\": [\"m\"], \"type\": \"ReLU\"}, \"o\": {\"parents\": [\"n\"], \"type\": \"ReLU\"}, \"p\": {\"parents\": [\"o\"], \"type\": \"ReLU\"}, \"q\": {\"parents\": [\"p\"], \"type\": \"ReLU\"}}}"), "layer 'm': 4096 splits of 17 layers", CB_STATUS_PARSE},
        {"softmax classes", NET(", \"s\": {\"parents\": [\"data\"], \"type\": \"Softmax\", \"num_classes\": 10}"), "num_classes 10", CB_STATUS_SHAPE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cb_error err = {0};
        cb_net *net = load(cases[i].json, &err);
        CHECK(net == NULL, "%s: loaded", cases[i].what);
        if (net) {
            cb_net_free(net);
            continue;
        }
        CHECK(err.status == cases[i].status, "%s: status %s, want %s (%s)", cases[i].what, cb_status_name(err.status),
              cb_status_name(cases[i].status), err.msg);
        CHECK(strstr(err.msg, cases[i].needle) != NULL, "%s: message '%s' lacks '%s'", cases[i].what, err.msg, cases[i].needle);
        CHECK(strncmp(err.msg, "test.json: ", 11) == 0, "%s: message names the file: %s", cases[i].what, err.msg);
        CHECK(strchr(err.msg, '\n') == NULL, "%s: one line", cases[i].what);
    }
}

static void test_missing_file(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load("/nonexistent/net.json", &err);
    CHECK(!net && err.status == CB_STATUS_IO && strstr(err.msg, "/nonexistent/net.json"), "%s", err.msg);
    net = cb_net_load("no-such-builtin", &err);
    CHECK(!net && err.status == CB_STATUS_IO && strstr(err.msg, "no-such-builtin"), "%s", err.msg);
}

// A network file gzip-compressed loads as the plain one (cb_read_text reads both); one cut short is
// refused, naming the file and the truncation
static void test_gzip_file(void) {
    cb_error err = {0};
    char plain[64], gz[80], cut[64], cmd[400];
    snprintf(plain, sizeof plain, "/tmp/cb_test_net_%d.json", (int)getpid());
    snprintf(gz, sizeof gz, "%s.gz", plain);
    snprintf(cut, sizeof cut, "/tmp/cb_test_net_cut_%d.json.gz", (int)getpid());
    snprintf(cmd, sizeof cmd, "cp nets/alexnet.json %s && gzip -kf %s && head -c 400 %s > %s", plain, plain, gz, cut);
    CHECK(system(cmd) == 0, "%s", cmd);
    cb_net *a = cb_net_load(plain, &err), *b = cb_net_load(gz, &err);
    CHECK(a && b && a->nlayers == b->nlayers && a->nlayers > 10, "%s", err.msg);
    for (int i = 0; a && b && i < a->nlayers && i < b->nlayers; i++)
        CHECK(!strcmp(a->layers[i].name, b->layers[i].name) && cb_shape_count(a->layers[i].out) == cb_shape_count(b->layers[i].out), "layer %d", i);
    cb_net *c = cb_net_load(cut, &err);
    CHECK(!c && strstr(err.msg, cut) && strstr(err.msg, "cannot read"), "%s", err.msg);
    cb_net_free(a), cb_net_free(b), cb_net_free(c);
    remove(plain), remove(gz), remove(cut);
}

// Loading is O(n log n): 100,000 layers (a chain, written in reverse file order so that the
// topological sort has work to do, plus a skip connection every 1,000 layers) load in under a
// second (10 s under the sanitizers), in the right order, with the right last consumers.
static void test_many_layers(void) {
    enum { N = 100000 };
    size_t cap = (size_t)N * 96 + 256, n = 0;
    char *j = malloc(cap);
    if (!j) return;
    n += (size_t)snprintf(j + n, cap - n, "{\"name\": \"big\", \"layers\": {");
    for (int i = N - 1; i >= 0; i--) {
        if (i % 1000 == 999)
            n += (size_t)snprintf(j + n, cap - n, "\"r%d\": {\"type\": \"Elementwise\", \"parents\": [\"r%d\", \"r%d\"]}, ", i, i - 1,
                                  i - 999);
        else if (i) n += (size_t)snprintf(j + n, cap - n, "\"r%d\": {\"type\": \"ReLU\", \"parents\": [\"r%d\"]}, ", i, i - 1);
    }
    snprintf(j + n, cap - n, "\"r0\": {\"type\": \"Input\", \"parents\": [], \"tensor\": [1, 2, 2, 1]}}}");
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0); // CPU time: the machine may be shared
    cb_error err = {0};
    cb_net *net = load(j, &err);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    free(j);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
#if defined(__SANITIZE_ADDRESS__)
    double limit = 10;
#else
    double limit = 1;
#endif
    CHECK(net != NULL, "%s", err.msg);
    if (!net) return;
    CHECK(s < limit, "100,000 layers took %.2f s to load (limit %.0f s)", s, limit);
    printf("  100,000 layers loaded in %.3f s of CPU time\n", s);
    CHECK(net->nlayers == N, "%d layers", net->nlayers);
    bool ordered = true;
    for (int i = 0; i < net->nlayers; i++) {
        char want[16];
        snprintf(want, sizeof want, "r%d", i);
        if (strcmp(net->layers[i].name, want) != 0) ordered = false;
    }
    CHECK(ordered, "layers in topological order");
    CHECK(net->layers[1000].last_child == 1999, "r1000's last consumer is r1999 (the skip), not %d", net->layers[1000].last_child);
    CHECK(net->layers[N - 1].last_child == -1, "the last layer has no consumer");
    cb_net_free(net);
}

int main(void) {
    RUN(test_builtin_nets);
    RUN(test_builtin_modern_nets);
    RUN(test_same_padding_asymmetric);
    RUN(test_block_concat_elementwise);
    RUN(test_model_parallel);
    RUN(test_bad_descriptions);
    RUN(test_missing_file);
    RUN(test_gzip_file);
    RUN(test_many_layers);
    return test_summary();
}
