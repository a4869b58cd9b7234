// The engine at network level: the fast CPU backend against the reference backend on a net
// with every layer kind, whole-network gradients against finite differences, a net that learns
// a synthetic task, and the planned memory (no allocation after create). The "onednn" backend,
// where the build has it, against the reference the same way, and over several SGD steps.
#include "check.h"
#include "convbench.h"
#include "core/backend.h"
#include "core/clock.h"
#include "core/ops.h"
#include "core/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// every layer kind the engine runs; asymmetric SAME, stride 2, non-square filter, groups,
// concat of branches, elementwise sum, LRN, batch norm fused and standalone
static const char *NET_ALL =
    "{\"name\": \"all\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [3, 9, 11, 5]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 2, 5, 6], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1]},"
    "\"lrn\": {\"parents\": [\"c1\"], \"type\": \"LRN\", \"size\": 3, \"alpha\": 0.1, \"beta\": 0.75, \"k\": 2},"
    "\"inc\": {\"type\": \"Block\", \"parents\": [\"lrn\"], \"endpoint\": \"cat\", \"layers\": {"
    "  \"a\": {\"parents\": [], \"type\": \"Convolution\", \"filter\": [1, 1, 6, 4], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "  \"b\": {\"parents\": [], \"type\": \"Convolution\", \"filter\": [3, 3, 3, 6], \"groups\": 2, \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
    "  \"p\": {\"parents\": [], \"type\": \"AvgPool\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"},"
    "  \"cat\": {\"parents\": [\"a\", \"b\", \"p\"], \"type\": \"Concatenate\", \"dim\": 3}}},"
    "\"x\": {\"parents\": [\"inc\"], \"type\": \"Convolution\", \"filter\": [1, 1, 16, 16], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null},"
    "\"sum\": {\"parents\": [\"x\", \"inc\"], \"type\": \"Elementwise\", \"activation_fn\": \"relu\"},"
    "\"bn\": {\"parents\": [\"sum\"], \"type\": \"BatchNorm\"},"
    "\"mp\": {\"parents\": [\"bn\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"SAME\"},"
    "\"fc1\": {\"parents\": [\"mp\"], \"type\": \"InnerProduct\", \"num_outputs\": 12, \"activation_fn\": \"relu\"},"
    "\"fc2\": {\"parents\": [\"fc1\"], \"type\": \"InnerProduct\", \"num_outputs\": 7},"
    "\"sm\": {\"parents\": [\"fc2\"], \"type\": \"Softmax\"}}}";

// the layer kinds of today's convnets: dilated and asymmetrically padded convolutions, global
// average pooling, squeeze-excitation's broadcast product (either operand order), LayerNorm over
// channels, a per-channel scale
static const char *NET_MODERN =
    "{\"name\": \"modern\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 9, 7, 4]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 4, 8], \"dilations\": [2, 2], \"padding\": [2, 2]},"
    "\"dw\": {\"parents\": [\"c1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 1, 8], \"groups\": 8, \"padding\": [0, 1, 1, 0], \"strides\": [2, 2], \"activation_fn\": null},"
    "\"gap\": {\"parents\": [\"dw\"], \"type\": \"GlobalAvgPool\"},"
    "\"se\": {\"parents\": [\"gap\"], \"type\": \"Convolution\", \"filter\": [1, 1, 8, 8], \"activation_fn\": null},"
    "\"mul\": {\"parents\": [\"dw\", \"se\"], \"type\": \"Elementwise\", \"operation\": \"mul\"},"
    "\"ln\": {\"parents\": [\"mul\"], \"type\": \"LayerNorm\", \"epsilon\": 1e-5},"
    "\"sc\": {\"parents\": [\"ln\"], \"type\": \"Scale\"},"
    "\"sum\": {\"parents\": [\"sc\", \"dw\"], \"type\": \"Elementwise\"},"
    "\"mul2\": {\"parents\": [\"se\", \"sum\"], \"type\": \"Elementwise\", \"operation\": \"mul\"},"
    "\"mul3\": {\"parents\": [\"mul2\", \"sum\"], \"type\": \"Elementwise\", \"operation\": \"mul\"},"
    "\"gap2\": {\"parents\": [\"mul3\"], \"type\": \"GlobalAvgPool\"},"
    "\"fc\": {\"parents\": [\"gap2\"], \"type\": \"InnerProduct\", \"num_outputs\": 5}}}";

// sums every way the gradient routing (exec.c) meets them: an input summed twice, a chain of sums,
// a sum of three, a layer two sums read, a sum with ReLU, a sum of the input, a sum as the last layer
static const char *NET_SUMS =
    "{\"name\": \"sums\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 6, 5, 3]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 3, 3], \"padding\": [1, 1], \"activation_fn\": \"silu\"},"
    "\"s0\": {\"parents\": [\"c1\", \"data\"], \"type\": \"Elementwise\"},"
    "\"dbl\": {\"parents\": [\"s0\", \"s0\"], \"type\": \"Elementwise\"},"
    "\"c2\": {\"parents\": [\"dbl\"], \"type\": \"Convolution\", \"filter\": [3, 2, 3, 3], \"padding\": [1, 0, 1, 1], \"activation_fn\": null},"
    "\"s1\": {\"parents\": [\"c2\", \"dbl\"], \"type\": \"Elementwise\", \"activation_fn\": \"relu\"},"
    "\"c3\": {\"parents\": [\"s1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 3, 3], \"normalizer_fn\": \"batch_norm\", \"bias\": false, \"activation_fn\": null},"
    "\"s2\": {\"parents\": [\"c3\", \"s1\", \"c2\"], \"type\": \"Elementwise\"},"
    "\"s3\": {\"parents\": [\"s1\", \"s2\"], \"type\": \"Elementwise\", \"activation_fn\": \"relu\"},"
    "\"c4\": {\"parents\": [\"s3\"], \"type\": \"Convolution\", \"filter\": [3, 3, 3, 3], \"padding\": [1, 1], \"activation_fn\": null},"
    "\"s4\": {\"parents\": [\"c4\", \"s3\"], \"type\": \"Elementwise\", \"activation_fn\": \"sigmoid\"},"
    "\"fc\": {\"parents\": [\"s4\"], \"type\": \"InnerProduct\", \"num_outputs\": 6, \"activation_fn\": null},"
    "\"fc2\": {\"parents\": [\"s4\"], \"type\": \"InnerProduct\", \"num_outputs\": 6, \"activation_fn\": null},"
    "\"out\": {\"parents\": [\"fc\", \"fc2\"], \"type\": \"Elementwise\"}}}";

// max pools after ReLU layers, each way a pool may take a ReLU over (relu_by_pool): a convolution's
// under an overlapping SAME window with a trailing pad (windows partly in the padding), a 1x1
// window (each maximum the ReLU's own input: the mask is the ReLU's whole), a sum's, one with a
// batch norm (its backward reads the batch norm's input, pre); and a ReLU
// layer read by a max pool and a second layer (not taken over), a max pool after a ReLU6 (not)
static const char *NET_POOLS =
    "{\"name\": \"pools\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [3, 12, 11, 4]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 4, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"p1\": {\"parents\": [\"c1\"], \"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"SAME\"},"
    "\"c2\": {\"parents\": [\"p1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 6, 5], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"p2\": {\"parents\": [\"c2\"], \"type\": \"Pooling\", \"ksize\": [1, 1, 1, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"VALID\"},"
    "\"c3\": {\"parents\": [\"p1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 6, 5], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null},"
    "\"s\": {\"parents\": [\"p2\", \"c3\"], \"type\": \"Elementwise\", \"activation_fn\": \"relu\"},"
    "\"p3\": {\"parents\": [\"s\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"VALID\"},"
    "\"cb\": {\"parents\": [\"p3\"], \"type\": \"Convolution\", \"filter\": [3, 3, 5, 4], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"p4\": {\"parents\": [\"cb\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"VALID\"},"
    "\"c5\": {\"parents\": [\"p4\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"p5\": {\"parents\": [\"c5\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"},"
    "\"c6\": {\"parents\": [\"c5\"], \"type\": \"Convolution\", \"filter\": [1, 1, 6, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu6\"},"
    "\"p6\": {\"parents\": [\"c6\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"},"
    "\"cat\": {\"parents\": [\"p5\", \"p6\"], \"type\": \"Concatenate\", \"dim\": 3},"
    "\"fc\": {\"parents\": [\"cat\"], \"type\": \"InnerProduct\", \"num_outputs\": 7, \"activation_fn\": null}}}";

// concatenations that take over their inputs' ReLU (relu_by_concat): cat1's a1 (a ReLU), a2 (batch
// norm and ReLU) and a4 (after a pool) are taken over; a3 (no activation) and a5 (also read by cat2)
// are not; nor are cat2's inputs, since cat2's output is read by a sum alone (not kept to its
// backward), nor cat3's c9, which it names twice. Odd channel counts, a 3x3 window.
static const char *NET_CONCATS =
    "{\"name\": \"concats\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [3, 10, 9, 5]},"
    "\"a1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1, 1, 5, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"a2\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 5, 7], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"a3\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 5, 4], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null},"
    "\"pp\": {\"parents\": [\"data\"], \"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"},"
    "\"a4\": {\"parents\": [\"pp\"], \"type\": \"Convolution\", \"filter\": [1, 1, 5, 3], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"a5\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1, 1, 5, 2], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"cat1\": {\"parents\": [\"a1\", \"a2\", \"a3\", \"a4\", \"a5\"], \"type\": \"Concatenate\", \"dim\": 3},"
    "\"c6\": {\"parents\": [\"cat1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 22, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"c7\": {\"parents\": [\"cat1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 22, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"cat2\": {\"parents\": [\"c6\", \"a5\", \"c7\"], \"type\": \"Concatenate\", \"dim\": 3},"
    "\"c8\": {\"parents\": [\"cat1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 22, 14], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null},"
    "\"s\": {\"parents\": [\"cat2\", \"c8\"], \"type\": \"Elementwise\", \"activation_fn\": \"relu\"},"
    "\"c9\": {\"parents\": [\"s\"], \"type\": \"Convolution\", \"filter\": [3, 3, 14, 5], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\"},"
    "\"cat3\": {\"parents\": [\"c9\", \"c9\"], \"type\": \"Concatenate\", \"dim\": 3},"
    "\"fc\": {\"parents\": [\"cat3\"], \"type\": \"InnerProduct\", \"num_outputs\": 7, \"activation_fn\": null}}}";

static cb_exec *make(cb_net *net, const char *backend, float lr) {
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = backend;
    o.lr = lr;
    o.momentum = 0;
    o.weight_decay = 0;
    o.seed = 7;
    cb_error err = {0};
    cb_exec *e = cb_exec_create(net, &o, &err);
    CHECK(e != NULL, "create %s: %s", backend, err.msg);
    return e;
}

static double step_loss(cb_exec *e) {
    double loss = 0;
    cb_exec_forward(e, true, NULL);
    cb_exec_criterion_forward(e, &loss, NULL);
    return loss;
}

static double nrm_err(const float *a, const float *b, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

// a backend (cpu, onednn) against ref: loss, output, and every parameter gradient
static void backend_matches_ref(const char *backend, const char *json) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, "all.json", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    cb_exec *a = make(net, backend, 0.01f), *b = make(net, "ref", 0.01f);
    if (!a || !b) goto out;
    double la = step_loss(a), lb = step_loss(b);
    CHECK(fabs(la - lb) < 1e-4 * fabs(lb), "loss %s %.7f ref %.7f", backend, la, lb);
    cb_exec_criterion_backward(a, NULL);
    cb_exec_criterion_backward(b, NULL);
    cb_exec_backward(a, NULL);
    cb_exec_backward(b, NULL);
    for (int i = 0; i < net->nlayers; i++) {
        cb_param pa[6], pb[6];
        int n = cb_exec_params(a, i, pa, 6);
        CHECK(n == cb_exec_params(b, i, pb, 6), "param lists differ");
        for (int j = 0; j < n; j++) {
            if (!pa[j].grad) continue;
            float *ga = malloc((size_t)pa[j].count * 4), *gb = malloc((size_t)pa[j].count * 4);
            cb_param qa = {pa[j].what, pa[j].grad, NULL, pa[j].count}, qb = {pb[j].what, pb[j].grad, NULL, pb[j].count};
            cb_exec_param_get(a, &qa, ga);
            cb_exec_param_get(b, &qb, gb);
            double e = nrm_err(ga, gb, pa[j].count);
            CHECK(e < 1e-4, "layer %s %s grad: %s vs ref error %.2e", net->layers[i].name, pa[j].what, backend, e);
            free(ga);
            free(gb);
        }
    }
out:
    cb_exec_destroy(a);
    cb_exec_destroy(b);
    cb_net_free(net);
}

// whole-network gradient of the loss w.r.t. sampled parameters against central differences
// every activation function, fused (Convolution, InnerProduct, Elementwise, with and without a
// batch norm before it) and as an Activation layer
static const char *NET_ACTS =
    "{\"name\": \"acts\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [3, 7, 6, 4]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 4, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"silu\"},"
    "\"c2\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 4, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"gelu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"sum\": {\"parents\": [\"c1\", \"c2\"], \"type\": \"Elementwise\", \"activation_fn\": \"hardswish\"},"
    "\"a1\": {\"parents\": [\"sum\"], \"type\": \"Activation\", \"fn\": \"sigmoid\"},"
    "\"a3\": {\"parents\": [\"a1\"], \"type\": \"Activation\", \"fn\": \"gelu\"},"
    "\"c3\": {\"parents\": [\"sum\"], \"type\": \"Convolution\", \"filter\": [1, 1, 6, 5], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu6\"},"
    "\"a2\": {\"parents\": [\"c3\"], \"type\": \"Activation\", \"fn\": \"hardsigmoid\"},"
    "\"cat\": {\"parents\": [\"a2\", \"a3\"], \"type\": \"Concatenate\", \"dim\": 3},"
    "\"fc1\": {\"parents\": [\"cat\"], \"type\": \"InnerProduct\", \"num_outputs\": 9, \"activation_fn\": \"silu\"},"
    "\"fc2\": {\"parents\": [\"fc1\"], \"type\": \"InnerProduct\", \"num_outputs\": 5, \"activation_fn\": null},"
    "\"sm\": {\"parents\": [\"fc2\"], \"type\": \"Softmax\"}}}";

// every parameter gradient of the cpu backend against finite differences of the loss
static void gradients_finite_differences(const char *json, const char *label) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, label, &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    cb_exec *e = make(net, "cpu", 0);
    if (!e) {
        cb_net_free(net);
        return;
    }
    step_loss(e);
    cb_exec_criterion_backward(e, NULL);
    cb_exec_backward(e, NULL);
    int checked = 0;
    double worst = 0;
    for (int i = 0; i < net->nlayers; i++) {
        cb_param p[6];
        int n = cb_exec_params(e, i, p, 6);
        for (int j = 0; j < n; j++) {
            if (!p[j].grad) continue;
            int64_t cnt = p[j].count;
            float *w = malloc((size_t)cnt * 4), *g = malloc((size_t)cnt * 4);
            cb_param gp = {p[j].what, p[j].grad, NULL, cnt};
            cb_exec_param_get(e, &p[j], w);
            cb_exec_param_get(e, &gp, g);
            // a few entries per tensor; compared as a normalised error over the sample (float32 net,
            // step 1e-3: tolerance 0.1, where a wrong gradient gives ~1), which
            // keeps a single ReLU kink crossed by the step from deciding the case
            double num = 0, den = 0;
            for (int s = 0; s < 4; s++) {
                int64_t k = (int64_t)((s * 7919 + i * 31) % cnt);
                float orig = w[k];
                double h = 1e-3 * fmax(1.0, fabs(orig));
                w[k] = (float)(orig + h);
                cb_exec_param_set(e, &p[j], w);
                double lp = step_loss(e);
                w[k] = (float)(orig - h);
                cb_exec_param_set(e, &p[j], w);
                double lm = step_loss(e);
                w[k] = orig;
                cb_exec_param_set(e, &p[j], w);
                double fd = (lp - lm) / (2 * h);
                num += (fd - g[k]) * (fd - g[k]);
                den += fd * fd;
                checked++;
            }
            double rel = sqrt(num / fmax(den, 1e-8));
            if (rel > worst) worst = rel;
            CHECK(rel < 0.1, "layer %s %s: backward vs finite differences, normalised error %.3g", net->layers[i].name,
                  p[j].what, rel);
            free(w);
            free(g);
        }
    }
    CHECK(checked >= 30, "only %d gradients checked", checked);
    printf("  %s: %d gradients checked, worst normalised error %.3g\n", label, checked, worst);
    cb_exec_destroy(e);
    cb_net_free(net);
}

static void test_cpu_matches_ref(void) { backend_matches_ref("cpu", NET_ALL); }
static void test_gradients_finite_differences(void) {
    gradients_finite_differences(NET_ALL, "all.json");
    gradients_finite_differences(NET_ACTS, "acts.json");
}
static void test_modern_cpu_matches_ref(void) { backend_matches_ref("cpu", NET_MODERN); }
static void test_modern_gradients_finite_differences(void) {
    gradients_finite_differences(NET_MODERN, "modern.json");
    gradients_finite_differences(NET_SUMS, "sums.json"); // the gradients routed through sums (exec.c)
}

// the shapes of NET_MODERN's new kinds, and their parameters
static void test_modern_shapes(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(NET_MODERN, "modern.json", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    static const struct { const char *name; int64_t c, h, w; } want[] = {
        {"c1", 8, 9, 7},  // (9 + 4 - 5) + 1, (7 + 4 - 5) + 1: the dilated 3x3 spans 5
        {"dw", 8, 4, 3},  // (9 + 0 + 1 - 3) / 2 + 1, (7 + 1 + 0 - 3) / 2 + 1
        {"gap", 8, 1, 1}, {"mul", 8, 4, 3}, {"ln", 8, 4, 3}, {"mul2", 8, 4, 3}, {"gap2", 8, 1, 1}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int i = cb_net_find(net, want[k].name);
        CHECK(i >= 0, "no layer %s", want[k].name);
        if (i < 0) continue;
        cb_shape s = net->layers[i].out;
        CHECK(s.c == want[k].c && s.h == want[k].h && s.w == want[k].w, "%s: [%lld, %lld, %lld] (CHW), want [%lld, %lld, %lld]",
              want[k].name, (long long)s.c, (long long)s.h, (long long)s.w, (long long)want[k].c, (long long)want[k].h,
              (long long)want[k].w);
    }
    cb_cost c;
    cb_layer_cost(net, cb_net_find(net, "ln"), &c);
    CHECK(c.params == 16, "LayerNorm params %lld, want 16", (long long)c.params);
    cb_layer_cost(net, cb_net_find(net, "sc"), &c);
    CHECK(c.params == 8, "Scale params %lld, want 8", (long long)c.params);
    CHECK(cb_net_set_batch(net, 5, &err) == CB_OK && net->layers[cb_net_find(net, "gap")].out.n == 5, "batch 5: %s", err.msg);
    const char *bad = "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [1, 4, 4, 2]},"
                      "\"p\": {\"parents\": [\"data\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1]},"
                      "\"m\": {\"parents\": [\"data\", \"p\"], \"type\": \"Elementwise\", \"operation\": \"mul\"}}}";
    cb_net *b = cb_net_load_string(bad, "bad.json", &err);
    CHECK(!b && strstr(err.msg, "neither match nor broadcast"), "a [1, 2, 2, 2] operand was taken: %s", err.msg);
    cb_net_free(b);
    cb_net_free(net);
}

// four classes told apart by which quadrant is bright: the loss must fall
static void test_learns_synthetic_task(void) {
    const char *json =
        "{\"name\": \"tiny\", \"layers\": {"
        "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [32, 8, 8, 1]},"
        "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 1, 8], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]},"
        "\"p1\": {\"parents\": [\"c1\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"},"
        "\"fc\": {\"parents\": [\"p1\"], \"type\": \"InnerProduct\", \"num_outputs\": 4},"
        "\"sm\": {\"parents\": [\"fc\"], \"type\": \"Softmax\"}}}";
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, "tiny.json", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    cb_exec *e = make(net, "cpu", 0.1f);
    if (!e) {
        cb_net_free(net);
        return;
    }
    float x[32 * 64];
    int32_t y[32];
    uint64_t s = 12345;
    double first = 0, last = 0;
    for (int it = 0; it < 60; it++) {
        for (int n = 0; n < 32; n++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            y[n] = (int32_t)((s >> 33) % 4);
            for (int i = 0; i < 64; i++) {
                s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                int qy = (i / 8) / 4, qx = (i % 8) / 4;
                float noise = (float)((s >> 40) % 1000) / 1000.0f - 0.5f;
                x[n * 64 + i] = (qy * 2 + qx == y[n] ? 1.0f : 0.0f) + 0.3f * noise;
            }
        }
        cb_exec_set_input(e, x, y);
        double loss = step_loss(e);
        cb_exec_criterion_backward(e, NULL);
        cb_exec_backward(e, NULL);
        cb_exec_update(e, NULL);
        if (it == 0) first = loss;
        last = loss;
    }
    printf("  loss %.3f -> %.3f\n", first, last);
    CHECK(last < 0.5 * first, "loss did not fall enough: %.3f -> %.3f", first, last);
    cb_exec_destroy(e);
    cb_net_free(net);
}

static void test_unknown_backend(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(NET_ALL, "all.json", &err);
    if (!net) return;
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "nope";
    cb_exec *e = cb_exec_create(net, &o, &err);
    CHECK(!e && err.status == CB_STATUS_ARG && strstr(err.msg, "unknown backend 'nope'"), "%s", err.msg);
    cb_net_free(net);
}

// A backend's notes of its slow paths (cb_exec_note): none by default, each text once, at most
// CB_EXEC_MAX_NOTES kept, NULL beyond the count (what fullpass and profile print)
static void test_exec_notes(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(NET_ALL, "all.json", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "ref";
    cb_exec *e = cb_exec_create(net, &o, &err);
    CHECK(e, "%s", err.msg);
    if (e) {
        CHECK(cb_exec_note_count(e) == 0 && !cb_exec_note_at(e, 0), "ref took no slow path: %d notes", cb_exec_note_count(e));
        cb_exec_note(e, "layer %s: slow", "c1");
        cb_exec_note(e, "layer %s: slow", "c1");
        CHECK(cb_exec_note_count(e) == 1 && !strcmp(cb_exec_note_at(e, 0), "layer c1: slow"), "%d notes", cb_exec_note_count(e));
        for (int k = 0; k < 2 * CB_EXEC_MAX_NOTES; k++) cb_exec_note(e, "note %d", k);
        CHECK(cb_exec_note_count(e) == CB_EXEC_MAX_NOTES, "%d notes kept", cb_exec_note_count(e));
        CHECK(!cb_exec_note_at(e, CB_EXEC_MAX_NOTES) && !cb_exec_note_at(e, -1), "beyond the count");
        char longer[2 * CB_EXEC_NOTE_LEN];
        memset(longer, 'x', sizeof longer - 1);
        longer[sizeof longer - 1] = 0;
        cb_exec_destroy(e);
        e = cb_exec_create(net, &o, &err);
        if (e) {
            cb_exec_note(e, "%s", longer); // (cut to fit, terminated)
            CHECK(strlen(cb_exec_note_at(e, 0)) == CB_EXEC_NOTE_LEN - 1, "%zu", strlen(cb_exec_note_at(e, 0)));
        }
        cb_exec_destroy(e);
    }
    cb_net_free(net);
}

// Declines carry a reason code; the tests assert the code, the message names it.
static void test_declines_have_reasons(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(NET_ALL, "all.json", &err);
    if (!net) return;
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    CHECK(cb_backend_supports(net, &o, &err) == CB_REASON_NONE, "cpu declines all.json: %s", err.msg);
    o.precision = CB_PREC_BF16;
    CHECK(cb_backend_supports(net, &o, &err) == CB_REASON_PRECISION && err.reason == CB_REASON_PRECISION &&
              err.status == CB_STATUS_UNSUPPORTED, "cpu bf16: %s", err.msg);
    CHECK(!cb_exec_create(net, &o, &err) && err.reason == CB_REASON_PRECISION, "cpu bf16 created: %s", err.msg);
    o.precision = CB_PREC_FP32;
    o.layout = CB_LAYOUT_NHWC;
    CHECK(cb_backend_supports(net, &o, &err) == CB_REASON_LAYOUT, "ref nhwc: %s", err.msg);
    o.layout = CB_LAYOUT_NCHW;
    o.conv_algo = "igemm-simt";
    CHECK(cb_backend_supports(net, &o, &err) == CB_REASON_CONV_ALGO, "cpu --conv-algo: %s", err.msg);
    o.conv_algo = NULL;
    cb_net_free(net);
    // the engine's own limits, on every backend
    const char *mid_softmax = "{\"name\": \"s\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 1, 1, 4]},"
                              " \"sm\": {\"parents\": [\"data\"], \"type\": \"Softmax\", \"num_classes\": 4},"
                              " \"fc\": {\"parents\": [\"sm\"], \"type\": \"InnerProduct\", \"num_outputs\": 3}}}";
    net = cb_net_load_string(mid_softmax, "mid_softmax.json", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    CHECK(!cb_exec_create(net, &o, &err) && err.reason == CB_REASON_SOFTMAX_POSITION && strstr(err.msg, "[unsupported: softmax_position]"),
          "softmax in the middle: %s", err.msg);
    cb_net_free(net);
    // what each backend declares, asked by name (built or not)
    const cb_backend_caps *cpu = cb_backend_caps_of("cpu"), *cuda = cb_backend_caps_of("cuda"), *dnn = cb_backend_caps_of("cudnn");
    CHECK(cpu && cuda && dnn && !cb_backend_caps_of("tpu"), "caps of cpu, cuda, cudnn");
    CHECK(cpu && !cpu->device && !cpu->own_conv_algos && cpu->precisions == 1u << CB_PREC_FP32, "cpu caps");
    CHECK(cuda && cuda->device && cuda->own_conv_algos && !(cuda->layouts & (1u << CB_LAYOUT_NHWC)), "cuda caps");
    CHECK(dnn && dnn->conv_library && (dnn->layouts & (1u << CB_LAYOUT_NHWC)), "cudnn caps");
    for (int r = 0; r < CB_REASON_COUNT; r++) CHECK(strcmp(cb_reason_name((cb_reason)r), "?") != 0, "reason %d has a name", r);
}

// Choices are data: the CPU backends' choices by field, and the one printer on made-up choices.
static void test_choices_are_data(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(NET_ALL, "all.json", &err);
    if (!net) return;
    cb_exec *e = make(net, "cpu", 0.01f), *r = make(net, "ref", 0.01f);
    CHECK(e && r, "create");
    for (int i = 0; e && r && i < net->nlayers; i++)
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            const cb_choice *c = cb_exec_choice(e, i, (cb_phase)p), *cr = cb_exec_choice(r, i, (cb_phase)p);
            bool gemm = net->layers[i].op == CB_OP_CONV || net->layers[i].op == CB_OP_FC;
            CHECK(c->impl == (gemm ? CB_IMPL_CPU : CB_IMPL_NONE) && cr->impl == (gemm ? CB_IMPL_REF : CB_IMPL_NONE),
                  "layer %d phase %d: impl %d / %d", i, p, c->impl, cr->impl);
            CHECK(c->workspace == cb_exec_workspace(e, i, (cb_phase)p), "workspace of layer %d", i);
            CHECK(!gemm || *cb_exec_algo(e, i, (cb_phase)p), "layer %d prints its choice", i);
        }
    cb_exec_destroy(e);
    cb_exec_destroy(r);
    char buf[96];
    cb_choice c = {.impl = CB_IMPL_OWN, .algo = 3, .name = "igemm-tf32", .ms = 0.05, .rival_ms = 0.35, .flags = CB_CHOICE_RACED};
    cb_choice_format(&c, net, buf, sizeof buf);
    CHECK(!strcmp(buf, "own igemm-tf32 0.050<0.350"), "raced own: '%s'", buf);
    c = (cb_choice){.impl = CB_IMPL_CUDNN, .algo = 6, .name = "FWD_WINOGRAD", .flags = CB_CHOICE_CHANNEL_PAD | CB_CHOICE_SAME_COPY,
                    .pad_from = 3, .pad_to = 8};
    cb_choice_format(&c, net, buf, sizeof buf);
    CHECK(!strcmp(buf, "FWD_WINOGRAD (C 3->8, SAME)"), "padded: '%s'", buf);
    c = (cb_choice){.impl = CB_IMPL_OWN, .algo = -1, .name = "pool", .ms = 0.12, .rival_ms = 0.09,
                    .flags = CB_CHOICE_RELU_MASK | CB_CHOICE_PAIRED}; // (auto's own pool over a ReLU: both times, whichever is less)
    cb_choice_format(&c, net, buf, sizeof buf);
    CHECK(!strcmp(buf, "own pool f+b 0.120, cuDNN 0.090 (ReLU mask)"), "ReLU mask: '%s'", buf);
    c = (cb_choice){.impl = CB_IMPL_OWN, .algo = -1, .name = "", .flags = CB_CHOICE_IN_FUSED, .fused_with = 1};
    cb_choice_format(&c, net, buf, sizeof buf);
    CHECK(!strcmp(buf, "in c1"), "fused: '%s'", buf);
    c = (cb_choice){.impl = CB_IMPL_OWN, .algo = 0, .name = "igemm-simt", .flags = CB_CHOICE_FALLBACK | CB_CHOICE_ASYM_PAD};
    cb_choice_format(&c, net, buf, 12); // truncated, terminated
    CHECK(strlen(buf) == 11, "truncated: '%s'", buf);
    cb_net_free(net);
}

// A race's pick: the least workspace within the slack of the fastest; candidates that did not run
// (ms < 0) never; the fastest at slack 0; the faster of equal workspaces; none when nothing ran.
static void test_choice_pick(void) {
    const double ms[] = {0.100, 0.102, -1, 0.140, 0.101};
    const size_t ws[] = {200u << 20, 8u << 20, 0, 0, 8u << 20};
    CHECK(cb_choice_pick(ms, ws, 5, 0) == 0, "slack 0: the fastest (%d)", cb_choice_pick(ms, ws, 5, 0));
    CHECK(cb_choice_pick(ms, ws, 5, 0.03) == 4, "3%%: least workspace, then the faster (%d)", cb_choice_pick(ms, ws, 5, 0.03));
    CHECK(cb_choice_pick(ms, ws, 5, 0.5) == 3, "50%%: no workspace, 40%% slower (%d)", cb_choice_pick(ms, ws, 5, 0.5));
    CHECK(cb_choice_pick(ms, ws, 3, 1.0) == 1, "one that did not run is never taken (%d)", cb_choice_pick(ms, ws, 3, 1.0));
    const double none[] = {-1, -2};
    CHECK(cb_choice_pick(none, ws, 2, 0.03) == -1 && cb_choice_pick(ms, ws, 0, 0.03) == -1, "nothing ran: -1");
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    CHECK(o.workspace_slack == CB_WORKSPACE_SLACK_DEFAULT, "the default slack (%g)", o.workspace_slack);
}

// The graph rewrite into plan nodes: conv + ReLU + pool groups in inference, nothing in training,
// nor where the conv has a batch norm or another consumer; every layer in exactly one node.
static void test_plan_nodes(void) {
    const char *json =
        "{\"name\": \"p\", \"layers\": {"
        "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 12, 12, 3]},"
        "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 3, 4], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1]},"
        "\"p1\": {\"parents\": [\"c1\"], \"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"},"
        "\"c2\": {\"parents\": [\"p1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4, 4], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"normalizer_fn\": \"batch_norm\"},"
        "\"p2\": {\"parents\": [\"c2\"], \"type\": \"Pooling\", \"ksize\": [1, 1, 1, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"VALID\"},"
        "\"c3\": {\"parents\": [\"p2\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4, 4], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1]},"
        "\"p3\": {\"parents\": [\"c3\"], \"type\": \"Pooling\", \"ksize\": [1, 1, 1, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"VALID\"},"
        "\"s\": {\"parents\": [\"p3\", \"c3\"], \"type\": \"Elementwise\"}}}";
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, "plan.json", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    for (int train = 0; train < 2; train++) {
        cb_plan p;
        cb_plan_build(net, train, &p);
        int covered = 0, groups = 0;
        for (int k = 0; k < p.nnodes; k++) {
            covered += p.node[k].nlayers;
            groups += p.node[k].fusion != CB_FUSION_NONE;
            for (int m = 0; m < p.node[k].nlayers; m++) CHECK(p.node_of[p.node[k].layer[m]] == k, "node_of of layer %d", p.node[k].layer[m]);
        }
        CHECK(covered == net->nlayers, "train %d: %d of %d layers in nodes", train, covered, net->nlayers);
        // c1 + p1 only (c2 has a batch norm, c3 a second consumer)
        CHECK(groups == (train ? 0 : 1), "train %d: %d groups", train, groups);
        if (!train) {
            const cb_plan_node *g = &p.node[p.node_of[1]];
            CHECK(g->fusion == CB_FUSION_CONV_RELU_MAXPOOL && g->nlayers == 2 && g->layer[0] == 1 && g->layer[1] == 2,
                  "c1 + p1 grouped: %s", cb_fusion_name(g->fusion));
        }
        cb_plan_free(&p);
    }
    cb_net_free(net);
}

// CB_FUSION_BN_ADD: a batch norm without activation whose one consumer, the next layer, is a sum
// of it and one other input, without batch norm, whose activation reads only its output; in
// training and inference alike
static void test_plan_bn_add(void) {
    const char *json =
        "{\"name\": \"q\", \"layers\": {"
        "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 8, 8, 4]},"
        "\"a\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 4, 4], \"padding\": [1, 1], \"normalizer_fn\": \"batch_norm\", \"activation_fn\": null},"
        "\"s1\": {\"parents\": [\"a\", \"data\"], \"type\": \"Elementwise\", \"activation_fn\": \"relu\"},"
        "\"b\": {\"parents\": [\"s1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4, 4], \"normalizer_fn\": \"batch_norm\", \"activation_fn\": \"relu\"},"
        "\"s2\": {\"parents\": [\"b\", \"s1\"], \"type\": \"Elementwise\"},"
        "\"c\": {\"parents\": [\"s2\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4, 4], \"normalizer_fn\": \"batch_norm\", \"activation_fn\": null},"
        "\"s3\": {\"parents\": [\"c\", \"s2\"], \"type\": \"Elementwise\", \"activation_fn\": \"silu\"},"
        "\"d\": {\"parents\": [\"s3\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4, 4], \"normalizer_fn\": \"batch_norm\", \"activation_fn\": null},"
        "\"e\": {\"parents\": [\"s3\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4, 4], \"activation_fn\": null},"
        "\"s4\": {\"parents\": [\"d\", \"e\"], \"type\": \"Elementwise\"},"
        "\"f\": {\"parents\": [\"s4\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4, 4], \"normalizer_fn\": \"batch_norm\", \"activation_fn\": null},"
        "\"s5\": {\"parents\": [\"f\", \"s4\", \"e\"], \"type\": \"Elementwise\"},"
        "\"g\": {\"parents\": [\"s5\"], \"type\": \"Convolution\", \"filter\": [1, 1, 4, 4], \"normalizer_fn\": \"batch_norm\", \"activation_fn\": null},"
        "\"s6\": {\"parents\": [\"g\", \"s5\"], \"type\": \"Elementwise\", \"activation_fn\": \"relu6\"}}}";
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, "bnadd.json", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    for (int train = 0; train < 2; train++) {
        cb_plan p;
        cb_plan_build(net, train, &p);
        int groups = 0;
        for (int k = 0; k < p.nnodes; k++) {
            const cb_plan_node *g = &p.node[k];
            if (g->fusion == CB_FUSION_NONE) continue;
            groups++;
            const char *h = net->layers[g->layer[0]].name;
            CHECK(g->fusion == CB_FUSION_BN_ADD && g->nlayers == 2 && (!strcmp(h, "a") || !strcmp(h, "g")) && g->layer[1] == g->layer[0] + 1,
                  "train %d: group %s at %s", train, cb_fusion_name(g->fusion), h);
        }
        CHECK(groups == 2, "train %d: %d groups (a + s1 and g + s6; b has an activation, s3's SiLU reads its input, d's sum "
              "is not next, s5 sums three)", train, groups);
        cb_plan_free(&p);
    }
    cb_net_free(net);
}

// The cudnn backend's static declines (no GPU needed: supports() reads shapes and options), by code.
static void test_cudnn_declines_by_code(void) {
    if (!cb_backend_built("cudnn")) return; // a build without CUDA
    static const struct {
        const char *what, *layer;
        cb_precision prec;
        cb_layout layout;
        cb_reason want;
    } cases[] = {
        {"asymmetric SAME conv, bf16 NCHW (a padded copy)", "\"type\": \"Convolution\", \"filter\": [3, 3, 3, 5], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1]",
         CB_PREC_BF16, CB_LAYOUT_NCHW, CB_REASON_NONE},
        {"leading pads over trailing, bf16 NCHW", "\"type\": \"Convolution\", \"filter\": [3, 3, 3, 5], \"padding\": [2, 2, 0, 0], \"strides\": [1, 1, 1, 1]",
         CB_PREC_BF16, CB_LAYOUT_NCHW, CB_REASON_ASYM_PADDING},
        {"leading pads over trailing, fp32 NCHW (own kernels)", "\"type\": \"Convolution\", \"filter\": [3, 3, 3, 5], \"padding\": [2, 2, 0, 0], \"strides\": [1, 1, 1, 1]",
         CB_PREC_FP32, CB_LAYOUT_NCHW, CB_REASON_NONE},
        {"dilated conv (cuDNN alone)", "\"type\": \"Convolution\", \"filter\": [3, 3, 3, 5], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"dilations\": [2, 2]",
         CB_PREC_FP32, CB_LAYOUT_NCHW, CB_REASON_NONE},
        {"asymmetric SAME conv, fp32 NHWC (a padded copy)", "\"type\": \"Convolution\", \"filter\": [3, 3, 3, 5], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1]",
         CB_PREC_FP32, CB_LAYOUT_NHWC, CB_REASON_NONE},
        {"asymmetric SAME conv, fp32 NCHW (own kernels)", "\"type\": \"Convolution\", \"filter\": [3, 3, 3, 5], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1]",
         CB_PREC_FP32, CB_LAYOUT_NCHW, CB_REASON_NONE},
        {"LRN size 17, bf16 NHWC", "\"type\": \"LRN\", \"size\": 17", CB_PREC_BF16, CB_LAYOUT_NHWC, CB_REASON_LRN_RANGE},
        {"LRN size 17, fp32 NCHW", "\"type\": \"LRN\", \"size\": 17", CB_PREC_FP32, CB_LAYOUT_NCHW, CB_REASON_NONE},
        {"spatial Reshape, NHWC", "\"type\": \"Reshape\", \"output_shape\": [2, 48]", CB_PREC_FP32, CB_LAYOUT_NHWC, CB_REASON_NHWC_ORDER},
        {"silu, bf16 NHWC", "\"type\": \"Activation\", \"fn\": \"silu\"", CB_PREC_BF16, CB_LAYOUT_NHWC, CB_REASON_NONE},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char js[512];
        snprintf(js, sizeof js,
                 "{\"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 4, 4, 3]},"
                 " \"L\": {\"parents\": [\"data\"], %s}}}", cases[k].layer);
        cb_error err = {0};
        cb_net *net = cb_net_load_string(js, "declines.json", &err);
        CHECK(net, "%s: %s", cases[k].what, err.msg);
        if (!net) continue;
        for (int b = 0; b < 2; b++) {
            cb_exec_opts o;
            cb_exec_opts_default(&o);
            o.backend = b ? "auto" : "cudnn", o.precision = cases[k].prec, o.layout = cases[k].layout;
            cb_reason r = cb_backend_supports(net, &o, &err);
            CHECK(r == cases[k].want && (r == CB_REASON_NONE || err.reason == r), "%s %s: %s, want %s (%s)", o.backend,
                  cases[k].what, cb_reason_name(r), cb_reason_name(cases[k].want), err.msg);
        }
        if (net->layers[1].op == CB_OP_CONV && net->layers[1].p.conv.dil_h > 1) { // the cuda backend's own kernels lack dilation
            cb_exec_opts o;
            cb_exec_opts_default(&o);
            o.backend = "cuda";
            cb_reason r = cb_backend_supports(net, &o, &err);
            CHECK(r == CB_REASON_NO_GPU_KERNEL, "cuda, dilated conv: %s (%s)", cb_reason_name(r), err.msg);
        }
        cb_net_free(net);
    }
}

static void test_out_of_memory_is_clean(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load("vgg16", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    // 2^20 images of VGG-16 cannot fit in any host: the engine must say so, not crash
    CHECK(cb_net_set_batch(net, 1 << 20, &err) == CB_OK, "%s", err.msg);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    cb_exec *e = cb_exec_create(net, &o, &err);
    CHECK(!e && err.status == CB_STATUS_NOMEM && strstr(err.msg, "out of host memory"), "%s", err.msg);
    cb_exec_destroy(e);
    cb_net_free(net);
}

// onednn (and cpu-auto, below) against ref: every layer kind (NET_ALL, NET_MODERN's dilated, depthwise and
// asymmetrically padded convolutions), then the loss of each of 5 SGD steps (momentum 0.9) on
// NET_ALL (batch norm, LRN) and on fashion-lenet at batch 4 within 1e-4 of the reference's
static void onednn_sgd_matches_ref(const char *backend, const char *json, const char *name) {
    cb_error err = {0};
    cb_net *net = json ? cb_net_load_string(json, "all.json", &err) : cb_net_load(name, &err);
    CHECK(net && (json || cb_net_set_batch(net, 4, &err) == CB_OK), "%s", err.msg);
    if (!net) return;
    cb_exec *ex[2] = {make(net, backend, 0.05f), make(net, "ref", 0.05f)};
    for (int k = 0; k < 2 && ex[0] && ex[1]; k++) ex[k]->opts.momentum = 0.9f;
    for (int step = 0; step < 5 && ex[0] && ex[1]; step++) {
        double l[2];
        for (int k = 0; k < 2; k++) {
            l[k] = step_loss(ex[k]);
            cb_exec_criterion_backward(ex[k], NULL);
            cb_exec_backward(ex[k], NULL);
            cb_exec_update(ex[k], NULL);
        }
        printf("  %s step %d loss %s %.7f ref %.7f\n", name, step, backend, l[0], l[1]);
        CHECK(isfinite(l[0]) && fabs(l[0] - l[1]) < 1e-4 * fabs(l[1]), "%s step %d: loss %s %.7f ref %.7f", name, step, backend, l[0], l[1]);
    }
    cb_exec_destroy(ex[0]);
    cb_exec_destroy(ex[1]);
    cb_net_free(net);
}

// A plan made without an update (no_update) keeps no momentum buffer and refuses an update; the
// same plan with one has it, and both give the same loss and gradients.
static void test_no_update_no_momentum(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load("fashion-lenet", &err);
    CHECK(net && cb_net_set_batch(net, 4, &err) == CB_OK, "%s", err.msg);
    if (!net) return;
    cb_exec_opts o;
    cb_exec_opts_default(&o); // momentum 0.9
    cb_exec *with = cb_exec_create(net, &o, &err);
    o.no_update = true;
    cb_exec *without = cb_exec_create(net, &o, &err);
    CHECK(with && without, "%s", err.msg);
    if (with && without) {
        size_t p = (size_t)with->nparams * 4;
        CHECK(cb_exec_memory(with, CB_MEM_PARAMS) - cb_exec_memory(without, CB_MEM_PARAMS) == p,
              "momentum: %zu vs %zu bytes of parameters, want a difference of %zu", cb_exec_memory(with, CB_MEM_PARAMS),
              cb_exec_memory(without, CB_MEM_PARAMS), p);
        CHECK(without->moms == NULL && cb_exec_update(without, NULL) == CB_STATUS_ARG, "an update ran on a plan made without one");
        double a = step_loss(with), b = step_loss(without);
        CHECK(a == b, "loss %.9g with a momentum buffer, %.9g without", a, b);
        CHECK(cb_exec_update(with, NULL) == CB_OK, "the update failed");
    }
    cb_exec_destroy(with);
    cb_exec_destroy(without);
    cb_net_free(net);
}

// A plan-only exec (summary's planned memory) counts what a real one allocates, less the backend's
// workspace and copies, and allocates nothing; bf16 activations plan less than fp32; a bf16 plan
// places the GPU backends' bf16 weight copies (cb_weight_copy_bytes) in its arena unless
// CONVBENCH_WEIGHT_COPY=keep leaves them to the backend: more than without, less than with all whole.
// The cpu backend's max pools take over the ReLU before them (be->pool_relu_mask): on exactly the
// layers cb_pool_relu_input names, whose outputs are then not kept (a batch-normed one's too), with
// the gradients of the reference (which keeps every ReLU's pass: ref has no such pools; its max
// pool and ReLU gradients meet finite differences on NET_ALL; here a step of 1e-3 crosses ReLU
// kinks of the small net's dead channels); CONVBENCH_FUSE_EPILOGUE=off keeps the passes; VGG-A b64's bf16 plan is
// lower with the masks by at least the five outputs before its pools (their bytes stood at its
// peak, the backward of fc6).
static void grad_arena_case(const char *json, const char *name, int batch, bool run);
static void test_concat_relu_masks(void) {
    backend_matches_ref("cpu", NET_CONCATS);
    grad_arena_case(NET_CONCATS, "concats.json", 0, true);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(NET_CONCATS, "concats.json", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    cb_exec *e = make(net, "cpu", 0.01f);
    const char *taken[] = {"a1", "a2", "a4"};
    int ntaken = 0;
    for (int i = 0; e && i < net->nlayers; i++) {
        bool want = false;
        for (int k = 0; k < 3; k++) want |= !strcmp(net->layers[i].name, taken[k]);
        CHECK(e->lb[i].relu_by_concat == want, "layer %s: relu_by_concat %d", net->layers[i].name, e->lb[i].relu_by_concat);
        // a1 and a4 keep no output (a2's batch norm's reads pre, and its output is not read either)
        if (want) CHECK(!cb_exec_output_kept(e, i), "layer %s: output kept", net->layers[i].name);
        ntaken += e->lb[i].relu_by_concat;
    }
    CHECK(ntaken == 3, "%d ReLUs taken over, not 3", ntaken);
    bool noted = false;
    for (int k = 0; e && k < cb_exec_note_count(e); k++) noted |= strstr(cb_exec_note_at(e, k), "concatenations: 1 apply the ReLU gradient of 3 inputs") != NULL;
    CHECK(noted, "no note says a concatenation took 3 ReLUs over");
    cb_exec_destroy(e);
    cb_exec *r = make(net, "ref", 0.01f);
    for (int i = 0; r && i < net->nlayers; i++) CHECK(!r->lb[i].relu_by_concat, "ref: layer %s taken over", net->layers[i].name);
    cb_exec_destroy(r);
    setenv("CONVBENCH_FUSE_EPILOGUE", "off", 1);
    e = make(net, "cpu", 0.01f);
    for (int i = 0; e && i < net->nlayers; i++) CHECK(!e->lb[i].relu_by_concat, "FUSE_EPILOGUE=off: layer %s taken over", net->layers[i].name);
    cb_exec_destroy(e);
    unsetenv("CONVBENCH_FUSE_EPILOGUE");
    setenv("CONVBENCH_CONCAT_RELU", "off", 1); // the concatenations' takeover alone turned off
    e = make(net, "cpu", 0.01f);
    for (int i = 0; e && i < net->nlayers; i++) CHECK(!e->lb[i].relu_by_concat, "CONCAT_RELU=off: layer %s taken over", net->layers[i].name);
    cb_exec_destroy(e);
    setenv("CONVBENCH_CONCAT_RELU", "maybe", 1);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "cpu";
    e = cb_exec_create(net, &o, &err);
    CHECK(!e && err.status == CB_STATUS_ARG && strstr(err.msg, "CONVBENCH_CONCAT_RELU") && strstr(err.msg, "'maybe'"), "%s", err.msg);
    cb_exec_destroy(e);
    unsetenv("CONVBENCH_CONCAT_RELU");
    // the arena: googlenet's branches keep no output (each inception module's four), so less is planned
    cb_net *g = cb_net_load("googlenet", &err);
    CHECK(g && cb_net_set_batch(g, 2, &err) == CB_OK, "%s", err.msg);
    if (g) {
        cb_exec_opts_default(&o);
        o.plan_only = true, o.no_data_grad = true;
        cb_exec *on = cb_exec_create(g, &o, &err);
        setenv("CONVBENCH_FUSE_EPILOGUE", "off", 1);
        cb_exec *off = cb_exec_create(g, &o, &err);
        unsetenv("CONVBENCH_FUSE_EPILOGUE");
        int nc = 0;
        for (int i = 0; on && i < g->nlayers; i++) nc += on->lb[i].relu_by_concat;
        CHECK(nc == 36, "googlenet: %d ReLUs taken over by concatenations, not 36 (9 modules of 4 branches)", nc);
        CHECK(on && off && cb_exec_peak_bytes(on) < cb_exec_peak_bytes(off), "googlenet: the plan is not smaller");
        cb_exec_destroy(on);
        cb_exec_destroy(off);
        cb_net_free(g);
    }
    cb_net_free(net);
}

// the arena's placement order (exec.c arena_first_fit): ResNet-50 b8's plan takes an order other than
// largest first, smaller by at least a 400th, where CONVBENCH_ARENA_ORDER=size keeps largest first;
// a value other than size or best is refused by name
static void test_arena_order(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load("resnet50", &err);
    CHECK(net && cb_net_set_batch(net, 8, &err) == CB_OK, "%s", err.msg);
    if (!net) return;
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.plan_only = true, o.no_data_grad = true;
    cb_exec *best = cb_exec_create(net, &o, &err);
    setenv("CONVBENCH_ARENA_ORDER", "size", 1);
    cb_exec *size = cb_exec_create(net, &o, &err);
    setenv("CONVBENCH_ARENA_ORDER", "smallest", 1);
    cb_exec *bad = cb_exec_create(net, &o, &err);
    CHECK(!bad && err.status == CB_STATUS_ARG && strstr(err.msg, "CONVBENCH_ARENA_ORDER") && strstr(err.msg, "'smallest'"), "%s", err.msg);
    unsetenv("CONVBENCH_ARENA_ORDER");
    CHECK(best && size, "plans failed");
    if (best && size) {
        size_t a = cb_exec_arena_bytes(best), b = cb_exec_arena_bytes(size);
        CHECK(a + b / 400 <= b, "resnet50 b8: the arena %.2f MiB, largest first %.2f", a / 1048576.0, b / 1048576.0);
        printf("  resnet50 b8: arena %.2f MiB, largest first %.2f\n", a / 1048576.0, b / 1048576.0);
    }
    cb_exec_destroy(best);
    cb_exec_destroy(size);
    cb_exec_destroy(bad);
    cb_net_free(net);
}

static void test_pool_relu_masks(void) {
    backend_matches_ref("cpu", NET_POOLS);
    grad_arena_case(NET_POOLS, "pools.json", 0, true);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(NET_POOLS, "pools.json", &err);
    CHECK(net, "%s", err.msg);
    if (!net) return;
    cb_exec *e = make(net, "cpu", 0.01f);
    const char *taken[] = {"c1", "c2", "s", "cb"}, *gone[] = {"c1", "c2", "s", "cb"};
    int ntaken = 0;
    for (int i = 0; e && i < net->nlayers; i++) {
        bool want = false, unkept = false;
        for (int k = 0; k < 4; k++) want |= !strcmp(net->layers[i].name, taken[k]);
        for (int k = 0; k < 4; k++) unkept |= !strcmp(net->layers[i].name, gone[k]);
        unkept |= cb_exec_output_transient(net, i, true); // (c3: read by a sum alone)
        CHECK(e->lb[i].relu_by_pool == want, "layer %s: relu_by_pool %d", net->layers[i].name, e->lb[i].relu_by_pool);
        CHECK(cb_exec_output_kept(e, i) == !unkept, "layer %s: output kept %d", net->layers[i].name, cb_exec_output_kept(e, i));
        ntaken += e->lb[i].relu_by_pool;
    }
    CHECK(ntaken == 4, "%d ReLUs taken over, not 4", ntaken);
    bool noted = false;
    for (int k = 0; e && k < cb_exec_note_count(e); k++) noted |= strstr(cb_exec_note_at(e, k), "max pools: 4 apply") != NULL;
    CHECK(noted, "no note says the pools took 4 ReLUs over");
    cb_exec_destroy(e);
    cb_exec *r = make(net, "ref", 0.01f);
    for (int i = 0; r && i < net->nlayers; i++)
        CHECK(!r->lb[i].relu_by_pool && cb_exec_output_kept(r, i) == !cb_exec_output_transient(net, i, true), "ref: layer %s", net->layers[i].name);
    cb_exec_destroy(r);
    setenv("CONVBENCH_FUSE_EPILOGUE", "off", 1);
    e = make(net, "cpu", 0.01f);
    for (int i = 0; e && i < net->nlayers; i++) CHECK(!e->lb[i].relu_by_pool, "FUSE_EPILOGUE=off: layer %s taken over", net->layers[i].name);
    cb_exec_destroy(e);
    setenv("CONVBENCH_FUSE_EPILOGUE", "sometimes", 1);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "cpu";
    e = cb_exec_create(net, &o, &err);
    CHECK(!e && err.status == CB_STATUS_ARG && strstr(err.msg, "CONVBENCH_FUSE_EPILOGUE") && strstr(err.msg, "'sometimes'"), "%s", err.msg);
    cb_exec_destroy(e);
    unsetenv("CONVBENCH_FUSE_EPILOGUE");
    cb_net_free(net);
    // VGG-A b64, bf16 training plan (summary's)
    net = cb_net_load("vgg-a", &err);
    CHECK(net && cb_net_set_batch(net, 64, &err) == CB_OK, "%s", err.msg);
    if (!net) return;
    cb_exec_opts_default(&o);
    o.plan_only = true, o.no_data_grad = true, o.precision = CB_PREC_BF16;
    cb_exec *with = cb_exec_create(net, &o, &err);
    setenv("CONVBENCH_FUSE_EPILOGUE", "off", 1);
    cb_exec *without = cb_exec_create(net, &o, &err);
    unsetenv("CONVBENCH_FUSE_EPILOGUE");
    CHECK(with && without, "%s", err.msg);
    if (with && without) {
        size_t before_pools = 0;
        int n = 0;
        for (int i = 1; i < net->nlayers; i++)
            if (cb_pool_relu_input(net, i) > 0) before_pools += (size_t)cb_shape_count(net->layers[cb_pool_relu_input(net, i)].out) * 2, n++;
        CHECK(n == 5 && cb_exec_peak_bytes(with) + before_pools <= cb_exec_peak_bytes(without), "vgg-a: %d pools, %zu bytes before them; plan %zu with "
              "the masks, %zu without", n, before_pools, cb_exec_peak_bytes(with), cb_exec_peak_bytes(without));
        printf("  vgg-a b64 bf16 plan: %.1f MiB with the pools' masks, %.1f without (%.1f MiB of outputs before its %d pools)\n",
               cb_exec_peak_bytes(with) / 1048576.0, cb_exec_peak_bytes(without) / 1048576.0, before_pools / 1048576.0, n);
    }
    cb_exec_destroy(with);
    cb_exec_destroy(without);
    cb_net_free(net);
}

static void test_plan_only_counts(void) {
    const char *nets[] = {"fashion-lenet", "googlenet", "resnet50"};
    for (int k = 0; k < 3; k++) {
        cb_error err = {0};
        cb_net *net = cb_net_load(nets[k], &err);
        CHECK(net && cb_net_set_batch(net, 2, &err) == CB_OK, "%s", err.msg);
        if (!net) continue;
        cb_exec_opts o;
        cb_exec_opts_default(&o);
        o.no_data_grad = true;
        cb_exec *real = cb_exec_create(net, &o, &err);
        o.plan_only = true;
        cb_exec *plan = cb_exec_create(net, &o, &err);
        o.precision = CB_PREC_BF16;
        setenv("CONVBENCH_WEIGHT_COPY", "keep", 1); // (the copies left to the backend: activations alone)
        cb_exec *half = cb_exec_create(net, &o, &err);
        unsetenv("CONVBENCH_WEIGHT_COPY");
        cb_exec *copies = cb_exec_create(net, &o, &err); // with the GPU backends' bf16 weight copies in the arena
        CHECK(real && plan && half && copies, "%s: %s", nets[k], err.msg);
        if (real && plan && half && copies) {
            size_t all = 0;
            for (int i = 0; i < net->nlayers; i++) all += (cb_weight_copy_bytes(&net->layers[i], CB_PREC_BF16, CB_LAYOUT_NCHW) + 255) / 256 * 256;
            CHECK(all > 0 && cb_exec_peak_bytes(copies) > cb_exec_peak_bytes(half) && cb_exec_peak_bytes(copies) <= cb_exec_peak_bytes(half) + all &&
                      cb_exec_memory(copies, CB_MEM_BACKEND) >= all && cb_exec_memory(half, CB_MEM_BACKEND) == 0,
                  "%s: bf16 plan %zu bytes with the weight copies (%zu of them), %zu without", nets[k], cb_exec_peak_bytes(copies), all,
                  cb_exec_peak_bytes(half));
            size_t want = cb_exec_peak_bytes(real) - (cb_exec_memory(real, CB_MEM_WORKSPACE) - real->mem_arena[CB_MEM_WORKSPACE]) -
                          cb_exec_memory(real, CB_MEM_BACKEND); // (the workspace outside the arena: a plan has none)
            CHECK(cb_exec_peak_bytes(plan) == want, "%s: planned %zu bytes, the cpu exec allocated %zu", nets[k],
                  cb_exec_peak_bytes(plan), want);
            CHECK(plan->arena == NULL && plan->params == NULL && plan->lb[0].y == NULL, "%s: a plan-only exec allocated", nets[k]);
            CHECK(cb_exec_peak_bytes(half) < cb_exec_peak_bytes(plan), "%s: bf16 plans %zu bytes, fp32 %zu", nets[k],
                  cb_exec_peak_bytes(half), cb_exec_peak_bytes(plan));
            // what stands at the arena's busiest point: every kind at most its whole, the parameters
            // whole, the sum at most the plan and at least its bytes outside the arena (first-fit
            // leaves no holes on these chains and trees: the sum is the plan)
            size_t at = 0, outside = cb_exec_peak_bytes(real) - cb_exec_arena_bytes(real);
            for (int m = 0; m < CB_MEM_COUNT; m++) {
                size_t a = cb_exec_memory_at_peak(real, (cb_mem_kind)m), whole = cb_exec_memory(real, (cb_mem_kind)m);
                CHECK(a <= whole, "%s: %s at the peak %zu bytes, of %zu", nets[k], cb_mem_kind_name((cb_mem_kind)m), a, whole);
                at += a;
            }
            CHECK(cb_exec_memory_at_peak(real, CB_MEM_PARAMS) == cb_exec_memory(real, CB_MEM_PARAMS), "%s: parameters not whole at the peak", nets[k]);
            CHECK(at > outside && at <= cb_exec_peak_bytes(real), "%s: %zu bytes at the peak, %zu planned, %zu outside the arena", nets[k], at,
                  cb_exec_peak_bytes(real), outside);
            bool bwd;
            int layer = cb_exec_memory_peak_layer(real, &bwd);
            CHECK(layer >= -1 && layer < net->nlayers, "%s: the peak at layer %d", nets[k], layer);
        }
        cb_exec_destroy(real);
        cb_exec_destroy(plan);
        cb_exec_destroy(half);
        cb_exec_destroy(copies);
        cb_net_free(net);
    }
}

static void test_onednn_matches_ref(void) {
    if (!cb_backend_find("onednn")) { printf("  skip: this build has no backend onednn\n"); return; }
    backend_matches_ref("onednn", NET_ALL);
    backend_matches_ref("onednn", NET_MODERN);
    onednn_sgd_matches_ref("onednn", NET_ALL, "all");
    onednn_sgd_matches_ref("onednn", NULL, "fashion-lenet");
}

// cpu-auto (onednn with a per-layer choice of oneDNN, OpenBLAS or the own direct, blocked or Winograd forward) the
// same way: raced, then with each path forced for every convolution and FC ($CONVBENCH_CPU_AUTO)
static void test_cpu_auto_matches_ref(void) {
    if (!cb_backend_find("cpu-auto")) { printf("  skip: this build has no backend cpu-auto\n"); return; }
    const char *force[] = {NULL, "onednn", "onednn-plain", "gemm", "own", "own-blocked", "winograd"};
    for (int f = 0; f < 7; f++) {
        if (force[f]) setenv("CONVBENCH_CPU_AUTO", force[f], 1);
        printf("  CONVBENCH_CPU_AUTO=%s\n", force[f] ? force[f] : "(race)");
        backend_matches_ref("cpu-auto", NET_ALL);
        backend_matches_ref("cpu-auto", NET_MODERN);
        onednn_sgd_matches_ref("cpu-auto", NET_ALL, "all");
        onednn_sgd_matches_ref("cpu-auto", NULL, "fashion-lenet");
        unsetenv("CONVBENCH_CPU_AUTO");
    }
}

// The shared arena (exec.c): buffers live at the same point of the step never share bytes
// (intervals derived here, independently of the engine: forward of layer i at i, its backward at
// 2n-1-i), an output shares only where nothing reads it in backward (no activation; every
// consumer a sum or a concatenation), the arena plans fewer bytes than one buffer each, and one
// SGD step gives bit-identical gradients either way.
static bool live_overlap(int lo1, int hi1, int lo2, int hi2) { return lo1 <= hi2 && lo2 <= hi1; }

static void grad_arena_case(const char *json, const char *name, int batch, bool run) {
    cb_error err = {0};
    cb_net *net = json ? cb_net_load_string(json, name, &err) : cb_net_load(name, &err);
    CHECK(net && (json || cb_net_set_batch(net, batch, &err) == CB_OK), "%s", err.msg);
    if (!net) return;
    setenv("CONVBENCH_MEMORY", "separate", 1); // a: one buffer each, every sum's gradient copied (as before both)
    setenv("CONVBENCH_GRAD_ROUTE", "copy", 1);
    cb_exec *a = make(net, "cpu", 0.01f);
    unsetenv("CONVBENCH_MEMORY");
    unsetenv("CONVBENCH_GRAD_ROUTE");
    cb_exec *b = make(net, "cpu", 0.01f);
    setenv("CONVBENCH_MEMORY", "separate", 1); // c: one buffer each, the sums' gradients routed: a shared pointer is a routing
    cb_exec *c = make(net, "cpu", 0.01f);
    unsetenv("CONVBENCH_MEMORY");
    if (!a || !b || !c) goto out;
    int n = net->nlayers, hi[1024], low[1024], nb = 0, transient = 0, routed = 0, badroute = 0;
    CHECK(n <= 1024, "%s: %d layers", name, n);
    if (n > 1024) goto out;
    typedef struct { const char *p; size_t bytes; int lo, hi; bool ws; } live_buf;
    live_buf g[8 * 1024];
    for (int i = 0; i < n; i++) hi[i] = i;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < net->layers[j].nparents; k++)
            if (hi[net->layers[j].parents[k]] < j) hi[net->layers[j].parents[k]] = j;
    // A dy that is a later layer's (the routing through sums), seen in c, where only a routing
    // shares a pointer: that layer a, the nearest one sharing it, must be a sum without batch norm,
    // not the last layer, taking i once, and i's last consumer (its first gradient). Two inputs of
    // one sum may take its buffer only if the later, f, is a convolution or FC layer without
    // activation that the sum alone reads, and every other consumer of the earlier comes before f
    // (nothing writes the buffer before f has read it). In b the buffer then lives from its
    // owner's first gradient to the backward of its lowest holder.
    int taken[1024] = {0}, holder[1024];
    for (int i = 0; i < n; i++) low[i] = i;
    for (int i = n - 1; i >= 1; i--) {
        if (!c->lb[i].dy) continue;
        int a = i + 1, shares = 0; // (a sum's two inputs share the pointer too: a is the consumer)
        for (; a < n; a++) {
            if (c->lb[a].dy != c->lb[i].dy) continue;
            shares++;
            bool reads = false;
            for (int k = 0; k < net->layers[a].nparents; k++) reads |= net->layers[a].parents[k] == i;
            if (reads) break;
        }
        if (a == n) { // shared with later layers none of which consumes i
            badroute += shares > 0;
            continue;
        }
        routed++;
        const cb_layer *S = &net->layers[a];
        int once = 0;
        for (int k = 0; k < S->nparents; k++) once += S->parents[k] == i;
        bool ok = S->op == CB_OP_ADD && !S->bn && a != n - 1 && once == 1 && hi[i] == a;
        if (taken[a]) { // the second input of a: i is the earlier (the loop runs down), f the later one
            int f = holder[a];
            const cb_layer *F = &net->layers[f];
            ok &= taken[a] == 1 && f > i && F->act == CB_ACT_NONE && (F->op == CB_OP_CONV || F->op == CB_OP_FC) && F->nchildren == 1;
            for (int c2 = i + 1; c2 < n; c2++)
                for (int k = 0; k < net->layers[c2].nparents; k++)
                    if (net->layers[c2].parents[k] == i && c2 != a) ok &= c2 < f;
        }
        badroute += !ok;
        holder[a] = i, taken[a]++;
        CHECK(b->lb[i].dy == b->lb[a].dy, "%s: layer %d's gradient is routed without the arena but not with it", name, i);
        int r = a;
        while (r < n - 1) { // the chain's owner: the last layer sharing the pointer
            int q = r + 1;
            while (q < n && c->lb[q].dy != c->lb[r].dy) q++;
            if (q == n) break;
            r = q;
        }
        if (i < low[r]) low[r] = i;
        low[i] = -1; // (no buffer of its own)
    }
    CHECK(badroute == 0, "%s: %d gradient buffers passed on where the routing may not", name, badroute);
    // When each buffer must hold its bytes (independently of the engine's planner): an output from
    // its plan node's forward (a fused group writes it at its head) to its last reader: the backward
    // of the layer itself (its activation's mask, a pool's output) unless it is a Convolution, FC,
    // sum, concatenation, layer scale or product (without batch norm) without activation read only
    // by sums and concatenations (their backward reads no input), then its last consumer's forward; what a layer keeps for its backward (a
    // batch norm's input, an activation's input, argmax, masks) to that backward; gradients as
    // routed; a layer's accumulation scratch at its backward; the input, the last output and their
    // gradients throughout, from before the first step (-1).
    for (int i = 0; i < n; i++) {
        const cb_layer *L = &net->layers[i];
        size_t bytes = (size_t)cb_shape_count(L->out) * 4;
        int bw = 2 * n - 1 - i, T = 2 * n - 1, head = b->plan.node[b->plan.node_of[i]].layer[0];
        bool pinned = i == 0 || i == n - 1;
        bool unread = !pinned && L->nchildren > 0 && L->act == CB_ACT_NONE &&
                      (L->op == CB_OP_CONV || L->op == CB_OP_FC || L->op == CB_OP_ADD || L->op == CB_OP_CONCAT ||
                       ((L->op == CB_OP_SCALE || L->op == CB_OP_MUL) && !L->bn));
        for (int j = i + 1; j < n; j++)
            for (int k = 0; k < net->layers[j].nparents; k++)
                if (net->layers[j].parents[k] == i)
                    unread &= (net->layers[j].op == CB_OP_ADD || net->layers[j].op == CB_OP_CONCAT) && !net->layers[j].bn;
        // a ReLU layer whose one consumer is a max pool: the cpu backend's pool takes its ReLU over
        // (its argmax marks the windows not above 0), so nothing reads its output in the backward
        // (its batch norm's reads pre)
        int mp = -1;
        for (int j = i + 1; j < n && L->nchildren == 1; j++)
            for (int k = 0; k < net->layers[j].nparents; k++)
                if (net->layers[j].parents[k] == i) mp = j;
        bool by_pool = i > 0 && L->act == CB_ACT_RELU && mp > 0 && net->layers[mp].op == CB_OP_POOL && !net->layers[mp].p.pool.avg &&
                       net->layers[mp].nparents == 1;
        CHECK(b->lb[i].relu_by_pool == by_pool, "%s: layer %s's ReLU %s by the max pool after it", name, L->name,
              by_pool ? "is not taken over" : "is taken over");
        // a ReLU layer whose one consumer is a concatenation (no batch norm or activation of its
        // own) that names it once and whose output is kept to its backward (a consumer other than a
        // sum or concatenation, or it is the last layer): that concatenation's backward applies the
        // ReLU's gradient from its own output
        bool by_concat = false;
        if (i > 0 && L->act == CB_ACT_RELU && mp > 0 && net->layers[mp].op == CB_OP_CONCAT && !net->layers[mp].bn &&
            net->layers[mp].act == CB_ACT_NONE) {
            const cb_layer *M = &net->layers[mp];
            int once = 0;
            for (int k = 0; k < M->nparents; k++) once += M->parents[k] == i;
            bool kept = mp == n - 1 || M->nchildren == 0;
            for (int j = mp + 1; j < n; j++)
                for (int k = 0; k < net->layers[j].nparents; k++)
                    if (net->layers[j].parents[k] == mp) kept |= !((net->layers[j].op == CB_OP_ADD || net->layers[j].op == CB_OP_CONCAT) && !net->layers[j].bn);
            by_concat = once == 1 && kept && mp < n - 1;
        }
        CHECK(b->lb[i].relu_by_concat == by_concat, "%s: layer %s's ReLU %s by the concatenation after it", name, L->name,
              by_concat ? "is not taken over" : "is taken over");
        unread |= !pinned && (by_pool || by_concat) &&
                  (L->op == CB_OP_CONV || L->op == CB_OP_FC || L->op == CB_OP_ADD || L->op == CB_OP_CONCAT ||
                   ((L->op == CB_OP_SCALE || L->op == CB_OP_MUL) && !L->bn));
        CHECK(cb_exec_output_kept(b, i) == (pinned || !unread), "%s: layer %s's output %s", name, L->name, unread ? "is kept" : "is not kept");
        transient += unread;
        const char *y = (const char *)b->lb[i].y;
        g[nb++] = (live_buf){y, bytes, pinned ? -1 : head, pinned ? T : unread ? hi[i] : bw, false};
        if (b->lb[i].pre) g[nb++] = (live_buf){(const char *)b->lb[i].pre, bytes, head, bw, false};
        if (b->lb[i].act_in) g[nb++] = (live_buf){(const char *)b->lb[i].act_in, bytes, head, bw, false};
        size_t aux = L->op == CB_OP_LAYERNORM ? (size_t)(L->out.n * L->out.h * L->out.w) * 8
                     : L->op == CB_OP_POOL && !L->p.pool.avg && b->be->pool_argmax_item // (the backend's argmax item)
                         ? (size_t)cb_shape_count(L->out) * (size_t)b->be->pool_argmax_item(L)
                         : bytes;
        if (b->lb[i].aux) g[nb++] = (live_buf){(const char *)b->lb[i].aux, aux, head, bw, false};
        if (b->lb[i].dy && low[i] >= 0)
            g[nb++] = (live_buf){(const char *)b->lb[i].dy, bytes, pinned ? -1 : 2 * n - 1 - hi[i], pinned ? T : 2 * n - 1 - low[i], false};
        if (b->lb[i].dpre) g[nb++] = (live_buf){(const char *)b->lb[i].dpre, bytes, bw, bw, false};
        // the accumulation scratch: every parent's gradient may pass through it, and a batch norm's dx
        size_t acc = L->op == CB_OP_BATCHNORM ? bytes : 0;
        for (int k = 0; k < L->nparents; k++) {
            const cb_layer *P = &net->layers[L->parents[k]];
            bool later = i < P->last_child;
            for (int q = 0; q < k; q++) later |= L->parents[q] == L->parents[k];
            if (later && L->op != CB_OP_ADD && b->lb[L->parents[k]].dy && (size_t)cb_shape_count(P->out) * 4 > acc) acc = (size_t)cb_shape_count(P->out) * 4;
        }
        if (acc) {
            CHECK(b->lb[i].acc != NULL, "%s: layer %s may accumulate a gradient but has no scratch", name, L->name);
            if (b->lb[i].acc) g[nb++] = (live_buf){(const char *)b->lb[i].acc, acc, bw, bw, false};
        }
    }
    // a workspace in the arena: read by its own call alone, the forward at its plan node's head or
    // the backward (where the data and filter gradients' run one after the other: two workspaces
    // may share bytes); any other outside it (one buffer, not checked here)
    int in_arena = 0;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            if (!b->lb[i].wsp[p]) continue;
            int t = p == CB_PHASE_FORWARD ? b->plan.node[b->plan.node_of[i]].layer[0] : 2 * n - 1 - i;
            const char *w = (const char *)b->lb[i].wsp[p], *a0 = (const char *)b->arena;
            CHECK(w >= a0 && w + b->lb[i].ws[p] <= a0 + b->arena_bytes, "%s: layer %s's workspace lies outside the arena", name,
                  net->layers[i].name);
            g[nb++] = (live_buf){w, b->lb[i].ws[p], t, t, true};
            in_arena++;
        }
    int64_t maxact = 0;
    for (int i = 0; i < n; i++)
        if (cb_shape_count(net->layers[i].out) > maxact) maxact = cb_shape_count(net->layers[i].out);
    g[nb++] = (live_buf){(const char *)b->plan_scratch, (size_t)maxact * 4, -1, -1, false};
    CHECK(cb_exec_memory_reused(b) > 0 && cb_exec_memory_reused(a) == 0, "%s: the arena shares nothing, or one buffer each shares", name);
    int clashes = 0, shared = 0;
    for (int x = 0; x < nb; x++)
        for (int y = x + 1; y < nb; y++) {
            bool disjoint = g[x].p + g[x].bytes <= g[y].p || g[y].p + g[y].bytes <= g[x].p;
            if (!disjoint && live_overlap(g[x].lo, g[x].hi, g[y].lo, g[y].hi) && !(g[x].ws && g[y].ws)) clashes++;
            if (!disjoint) shared++;
        }
    CHECK(clashes == 0, "%s: %d pairs of buffers live at once share bytes", name, clashes);
    double sa = (double)cb_exec_peak_bytes(a) / (1 << 20), sb = (double)cb_exec_peak_bytes(b) / (1 << 20);
    printf("  %s: %d buffers (%d transient outputs, %d gradients passed on by a sum, %d workspaces), %d pairs share bytes; planned "
           "%.2f MiB (one buffer each %.2f)\n", name, nb, transient, routed, in_arena, shared, sb, sa);
    for (int a2 = 1; a2 < n - 1; a2++) { // every sum passes its buffer on where some input qualifies
        const cb_layer *S = &net->layers[a2];
        bool can = false;
        for (int k = 0; S->op == CB_OP_ADD && !S->bn && k < S->nparents; k++) {
            int p = S->parents[k], once = 0;
            for (int j = 0; j < S->nparents; j++) once += S->parents[j] == p;
            can |= p > 0 && once == 1 && hi[p] == a2;
        }
        CHECK(!can || taken[a2] >= 1, "%s: sum %s passes its gradient buffer to no input", name, S->name);
    }
    CHECK(sb < sa, "%s: the arena saves nothing (%.2f vs %.2f MiB)", name, sb, sa);
    if (!run) goto out;
    double la = 0, lb = 0, lc = 0;
    for (int step = 0; step < 2; step++) { // a second step on the first's leftovers; its gradients compared
        if (step) cb_exec_update(a, NULL), cb_exec_update(b, NULL), cb_exec_update(c, NULL);
        la = step_loss(a), lb = step_loss(b), lc = step_loss(c);
        cb_exec_criterion_backward(a, NULL), cb_exec_criterion_backward(b, NULL), cb_exec_criterion_backward(c, NULL);
        cb_exec_backward(a, NULL), cb_exec_backward(b, NULL), cb_exec_backward(c, NULL);
    }
    CHECK(la == lb && la == lc, "%s: loss %.9g vs %.9g vs %.9g", name, la, lb, lc);
    int64_t nin = cb_shape_count(net->layers[0].out);
    float *xa = malloc((size_t)nin * 4 + 4), *xb = malloc((size_t)nin * 4 + 4);
    cb_exec_act_download(a, 0, xa, a->lb[0].dy);
    cb_exec_act_download(b, 0, xb, b->lb[0].dy);
    CHECK(!memcmp(xa, xb, (size_t)nin * 4), "%s: the input's gradient differs", name);
    cb_exec_act_download(c, 0, xb, c->lb[0].dy);
    CHECK(!memcmp(xa, xb, (size_t)nin * 4), "%s: the input's gradient differs (one buffer each, routed)", name);
    free(xa), free(xb);
    int differ = 0;
    for (int i = 0; i < n; i++) {
        cb_param pa[6], pb[6], pc[6];
        int np = cb_exec_params(a, i, pa, 6);
        cb_exec_params(b, i, pb, 6);
        cb_exec_params(c, i, pc, 6);
        for (int j = 0; j < np; j++) {
            if (!pa[j].grad) continue;
            float *ga = malloc((size_t)pa[j].count * 4), *gb = malloc((size_t)pa[j].count * 4), *gc = malloc((size_t)pa[j].count * 4);
            cb_param qa = {pa[j].what, pa[j].grad, NULL, pa[j].count}, qb = {pb[j].what, pb[j].grad, NULL, pb[j].count},
                     qc = {pc[j].what, pc[j].grad, NULL, pc[j].count};
            cb_exec_param_get(a, &qa, ga);
            cb_exec_param_get(b, &qb, gb);
            cb_exec_param_get(c, &qc, gc);
            differ += memcmp(ga, gb, (size_t)pa[j].count * 4) != 0 || memcmp(ga, gc, (size_t)pa[j].count * 4) != 0;
            free(ga), free(gb), free(gc);
        }
    }
    CHECK(differ == 0, "%s: %d parameter gradients differ between the arena with routing and one buffer each with copies", name,
          differ);
out:
    cb_exec_destroy(a);
    cb_exec_destroy(b);
    cb_exec_destroy(c);
    cb_net_free(net);
}

// inference: every output but the input's and the last shares the arena; two forward passes give
// the very output of one buffer each
static void infer_arena_case(const char *name, int batch) {
    cb_error err = {0};
    cb_net *net = cb_net_load(name, &err);
    CHECK(net && cb_net_set_batch(net, batch, &err) == CB_OK, "%s", err.msg);
    if (!net) return;
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.train = false;
    setenv("CONVBENCH_MEMORY", "separate", 1);
    cb_exec *a = cb_exec_create(net, &o, &err);
    unsetenv("CONVBENCH_MEMORY");
    cb_exec *b = cb_exec_create(net, &o, &err);
    CHECK(a && b, "%s: %s", name, err.msg);
    if (a && b) {
        int64_t k = cb_exec_output_classes(b) * batch;
        float *ya = malloc((size_t)k * 4), *yb = malloc((size_t)k * 4), *yb2 = malloc((size_t)k * 4);
        cb_exec_forward(a, false, NULL);
        cb_exec_get_output(a, ya, (size_t)k);
        cb_exec_forward(b, false, NULL);
        cb_exec_get_output(b, yb, (size_t)k);
        cb_exec_forward(b, false, NULL);
        cb_exec_get_output(b, yb2, (size_t)k);
        CHECK(!memcmp(ya, yb, (size_t)k * 4) && !memcmp(yb, yb2, (size_t)k * 4), "%s: inference outputs differ", name);
        double sa = (double)cb_exec_peak_bytes(a) / (1 << 20), sb = (double)cb_exec_peak_bytes(b) / (1 << 20);
        printf("  %s inference b%d: planned %.2f MiB (one buffer each %.2f)\n", name, batch, sb, sa);
        CHECK(sb < sa, "%s: the inference arena saves nothing", name);
        free(ya), free(yb), free(yb2);
    }
    cb_exec_destroy(a);
    cb_exec_destroy(b);
    cb_net_free(net);
}

static void test_grad_arena(void) {
    infer_arena_case("googlenet", 2);
    infer_arena_case("fashion-lenet", 3);
    grad_arena_case(NET_ACTS, "acts.json", 0, true);
    grad_arena_case(NET_ALL, "all.json", 0, true);
    grad_arena_case(NET_MODERN, "modern.json", 0, true);
    grad_arena_case(NET_SUMS, "sums.json", 0, true);
    grad_arena_case(NULL, "googlenet", 1, false);
    grad_arena_case(NULL, "resnet50", 1, false);
    // a bad value is refused by name
    setenv("CONVBENCH_MEMORY", "shared", 1);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(NET_ACTS, "acts.json", &err);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    cb_exec *e = net ? cb_exec_create(net, &o, &err) : NULL;
    CHECK(!e && err.status == CB_STATUS_ARG && strstr(err.msg, "CONVBENCH_MEMORY") && strstr(err.msg, "'shared'"), "%s", err.msg);
    unsetenv("CONVBENCH_MEMORY");
    cb_exec_destroy(e);
    setenv("CONVBENCH_WORKSPACE", "shared", 1);
    e = net ? cb_exec_create(net, &o, &err) : NULL;
    CHECK(!e && err.status == CB_STATUS_ARG && strstr(err.msg, "CONVBENCH_WORKSPACE") && strstr(err.msg, "'shared'"), "%s", err.msg);
    unsetenv("CONVBENCH_WORKSPACE");
    cb_exec_destroy(e);
    setenv("CONVBENCH_GRAD_ROUTE", "alias", 1);
    e = net ? cb_exec_create(net, &o, &err) : NULL;
    CHECK(!e && err.status == CB_STATUS_ARG && strstr(err.msg, "CONVBENCH_GRAD_ROUTE") && strstr(err.msg, "'alias'"), "%s", err.msg);
    unsetenv("CONVBENCH_GRAD_ROUTE");
    cb_exec_destroy(e);
    // a CPU backend records no step graph: refused with the flag's name, nothing run
    o.backend = "cpu";
    e = net ? cb_exec_create(net, &o, &err) : NULL;
    CHECK(e && !cb_exec_can_graph(e), "the cpu backend says it can record a step graph");
    err = (cb_error){0};
    CHECK(e && cb_exec_graph_capture(e, true, true, &err) == CB_STATUS_ARG && strstr(err.msg, "--graph"), "%s", err.msg);
    CHECK(e && cb_exec_graph_replay(e) == CB_STATUS_ARG, "a replay with no graph was not refused");
    cb_exec_destroy(e);
    cb_net_free(net);
}

// A backend's weight copies in the arena (be->weight_copy, as the GPU backends' bf16 copies): the
// cpu backend wrapped to keep an fp32 copy of each conv and FC layer's weights there, made where
// cb_exec_copy_holds says the last one no longer holds (the backward's own, wcopy_bwd, where the
// engine planned one), and compared with the masters wherever it is read without being made again.
// In a step each copy is made once in the forward and once more in the backward where planned, and
// found whole where read again; nothing holds once the backward is over; no byte of a copy is taken
// by another buffer while it holds. On AlexNet b128 the copies raise the planned peak by less than
// the FC layers' copies alone, and by less than keeping every copy to the backward does.
enum { WC_MAX = 64 };
static uint64_t wc_pass[WC_MAX][2];
static bool wc_fwd[WC_MAX][2];
static int wc_made_fwd, wc_made_bwd, wc_clobbered;
static size_t wc_bytes(const cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    return e->opts.train && (L->op == CB_OP_CONV || L->op == CB_OP_FC) ? (size_t)e->lb[i].nw * 4 : 0;
}
static void wc_take(cb_exec *e, int i) {
    cb_lbuf *b = &e->lb[i];
    int k = e->in_backward && b->wcopy_bwd ? 1 : 0;
    void *w = k ? b->wcopy_bwd : b->wcopy;
    if (!w || i >= WC_MAX) return;
    if (!cb_exec_copy_holds(e, wc_pass[i][k], wc_fwd[i][k])) {
        memcpy(w, b->w, (size_t)b->nw * 4);
        wc_pass[i][k] = e->pass, wc_fwd[i][k] = !e->in_backward;
        ++*(e->in_backward ? &wc_made_bwd : &wc_made_fwd);
    } else if (memcmp(w, b->w, (size_t)b->nw * 4)) wc_clobbered++;
}
static void wc_forward(cb_exec *e, int i, bool train) {
    wc_take(e, i);
    cb_backend_cpu.forward(e, i, train);
}
static void wc_backward_data(cb_exec *e, int i, int slot, float *dx) {
    wc_take(e, i);
    cb_backend_cpu.backward_data(e, i, slot, dx);
}
static bool wc_backward_data_add(cb_exec *e, int i, int slot, float *dx) {
    wc_take(e, i);
    return cb_backend_cpu.backward_data_add(e, i, slot, dx);
}
static const char *wc_mode(void) { return getenv("CONVBENCH_WEIGHT_COPY") ? getenv("CONVBENCH_WEIGHT_COPY") : "plan"; }

static void weight_copy_case(const char *json, const char *name) {
    static cb_backend wc;
    wc = cb_backend_cpu;
    wc.weight_copy = wc_bytes, wc.forward = wc_forward, wc.backward_data = wc_backward_data;
    if (cb_backend_cpu.backward_data_add) wc.backward_data_add = wc_backward_data_add;
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, name, &err);
    CHECK(net && net->nlayers <= WC_MAX, "%s: %s", name, err.msg);
    if (!net || net->nlayers > WC_MAX) return cb_net_free(net);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.momentum = 0, o.weight_decay = 0, o.seed = 7;
    cb_exec *w = cb_exec_create_on(net, &o, &wc, &err), *p = cb_exec_create(net, &o, &err);
    CHECK(w && p, "%s: %s", name, err.msg);
    if (w && p) {
        int copies = 0, remade = 0, dgrads = 0;
        for (int i = 1; i < net->nlayers; i++) {
            copies += w->lb[i].wcopy != NULL;
            remade += w->lb[i].wcopy_bwd != NULL;
            dgrads += w->lb[i].wcopy && w->lb[net->layers[i].parents[0]].dy;
            wc_pass[i][0] = wc_pass[i][1] = UINT64_MAX;
        }
        CHECK(copies > 0, "%s: no layer has a weight copy in the arena", name);
        wc_made_fwd = wc_made_bwd = wc_clobbered = 0;
        double lw = 0, lp = 0;
        for (int step = 0; step < 2; step++) {
            if (step) cb_exec_update(w, NULL), cb_exec_update(p, NULL);
            lw = step_loss(w), lp = step_loss(p);
            cb_exec_criterion_backward(w, NULL), cb_exec_criterion_backward(p, NULL);
            cb_exec_backward(w, NULL), cb_exec_backward(p, NULL);
        }
        CHECK(lw == lp, "%s: loss %.9g with the copies, %.9g without", name, lw, lp);
        CHECK(wc_made_fwd == 2 * copies && wc_made_bwd == 2 * remade && wc_clobbered == 0,
              "%s: two steps made %d copies in forward (want %d), %d in backward (want %d); %d found overwritten", name, wc_made_fwd,
              2 * copies, wc_made_bwd, 2 * remade, wc_clobbered);
        if (!strcmp(wc_mode(), "remake")) CHECK(remade == dgrads, "%s: remake made %d copies again, %d take a data gradient", name, remade, dgrads);
        bool said = false; // the trade is said in a note wherever a copy is made again
        for (int k = 0; k < cb_exec_note_count(w); k++) said |= strstr(cb_exec_note_at(w, k), "made again in the backward") != NULL;
        CHECK(said == (remade > 0), "%s: %d copies made again, the note %s", name, remade, said ? "given" : "missing");
        if (!strcmp(wc_mode(), "step")) CHECK(remade == 0, "%s: step made %d copies again", name, remade);
        // after the backward nothing made in the step holds (the next use of the bytes is another
        // step's); between a forward and its backward, what the forward made does
        uint64_t fwd = w->pass - 2;
        CHECK(!cb_exec_copy_holds(w, fwd, true) && !cb_exec_copy_holds(w, fwd + 1, false), "%s: a copy holds after the backward", name);
        step_loss(w);
        CHECK(cb_exec_copy_holds(w, w->pass, true) && !cb_exec_copy_holds(w, w->pass - 1, true), "%s: after a forward", name);
        printf("  %s (CONVBENCH_WEIGHT_COPY=%s): %d weight copies, %d made again in the backward, %zu bytes, %zu at the peak\n", name,
               wc_mode(), copies, remade, cb_exec_memory(w, CB_MEM_BACKEND), cb_exec_memory_at_peak(w, CB_MEM_BACKEND));
    }
    cb_exec_destroy(w);
    cb_exec_destroy(p);
    cb_net_free(net);
}

static void test_weight_copies(void) {
    const char *modes[] = {NULL, "step", "remake"};
    for (int m = 0; m < 3; m++) {
        if (modes[m]) setenv("CONVBENCH_WEIGHT_COPY", modes[m], 1);
        weight_copy_case(NET_ALL, "all.json");
        weight_copy_case(NET_SUMS, "sums.json");
        unsetenv("CONVBENCH_WEIGHT_COPY");
    }
    // AlexNet b128 planned (nothing allocated): its FC layers' copies do not stand at the peak
    static cb_backend wc;
    wc = cb_backend_cpu;
    wc.weight_copy = wc_bytes;
    cb_error err = {0};
    cb_net *net = cb_net_load("alexnet", &err);
    CHECK(net && cb_net_set_batch(net, 128, &err) == CB_OK, "%s", err.msg);
    if (!net) return;
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.plan_only = true, o.no_data_grad = true;
    cb_exec *with = cb_exec_create_on(net, &o, &wc, &err), *without = cb_exec_create(net, &o, &err);
    setenv("CONVBENCH_WEIGHT_COPY", "step", 1);
    cb_exec *kept = cb_exec_create_on(net, &o, &wc, &err);
    unsetenv("CONVBENCH_WEIGHT_COPY");
    CHECK(with && without && kept, "%s", err.msg);
    if (with && without && kept) {
        size_t copies = 0, fc = 0; // (each copy once: one made again counts twice in the memory table)
        for (int i = 0; i < net->nlayers; i++) {
            copies += wc_bytes(with, i);
            if (net->layers[i].op == CB_OP_FC) fc += wc_bytes(with, i);
        }
        size_t grew = cb_exec_peak_bytes(with) - cb_exec_peak_bytes(without), grew_kept = cb_exec_peak_bytes(kept) - cb_exec_peak_bytes(without);
        CHECK(fc > 0 && grew < fc && grew < grew_kept, "alexnet: copies %zu bytes (FC %zu), the plan grew %zu (%zu with each kept)", copies, fc,
              grew, grew_kept);
        printf("  alexnet b128: copies %.1f MiB (FC layers' %.1f), the plan grew %.1f MiB (%.1f with each kept to the backward)\n",
               copies / 1048576.0, fc / 1048576.0, grew / 1048576.0, grew_kept / 1048576.0);
    }
    cb_exec_destroy(kept);
    cb_exec_destroy(with);
    cb_exec_destroy(without);
    cb_net_free(net);
}

// NET_ALL, and the default options with seed 5 (the step check's and the trim's tests)
static cb_net *all_net(cb_exec_opts *o) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(NET_ALL, "all.json", &err);
    CHECK(net != NULL, "%s", err.msg);
    cb_exec_opts_default(o);
    o->seed = 5;
    return net;
}

// The step check (cb_exec_opts.step_check, exec.c) on the cpu backend with a table of its own:
// layer "x" (a conv) reports a fast race (0.01 ms) but its first candidate spins SC_MS in each
// forward; revise switches it to a second candidate, fast (or, in the second case, slower);
// marks time the pieces on the host clock. The check must keep a switch that is faster in the
// step, undo one that is not, touch nothing where off, and put the running statistics back.
static int sc_variant, sc_switches, sc_undos;
static bool sc_second_slow;
static double sc_marks[4096];
static int sc_nmarks;
static void sc_mark_reset(cb_exec *e) { (void)e, sc_nmarks = 0; }
static int sc_mark(cb_exec *e) {
    (void)e;
    if (sc_nmarks >= 4096) return -1;
    sc_marks[sc_nmarks] = cb_now_ms();
    return sc_nmarks++;
}
static double sc_mark_ms(cb_exec *e, int a, int b) { return (void)e, a >= 0 && b >= 0 ? sc_marks[b] - sc_marks[a] : 0; }
static int sc_layer(const cb_exec *e) {
    for (int i = 0; i < e->net->nlayers; i++)
        if (!strcmp(e->net->layers[i].name, "x")) return i;
    return -1;
}
// The first candidate spins SC_MS, a slow second twice that: far apart, so that a loaded machine
// (CI runs the sanitizer build beside this one on two cores) cannot turn the order around in the
// least of the check's steps, as a second "as slow" as the first once did.
#define SC_MS 10.0
static void sc_forward(cb_exec *e, int i, bool train) {
    if (i == sc_layer(e) && (sc_variant == 0 || sc_second_slow)) {
        double ms = sc_variant == 0 ? SC_MS : 2 * SC_MS;
        for (double t0 = cb_now_ms(); cb_now_ms() - t0 < ms;) {
        }
    }
    cb_backend_cpu.forward(e, i, train);
}
static cb_status sc_plan(cb_exec *e, int i, cb_error *err) {
    cb_status st = cb_backend_cpu.plan ? cb_backend_cpu.plan(e, i, err) : CB_OK;
    if (i == sc_layer(e)) {
        e->lb[i].choice[CB_PHASE_FORWARD] = cb_choice_of(CB_IMPL_CPU, 0, "first");
        e->lb[i].choice[CB_PHASE_FORWARD].ms = 0.01;
    }
    return st;
}
static bool sc_revise(cb_exec *e, int i, cb_phase p, size_t max_ws, bool undo) {
    (void)max_ws;
    if (i != sc_layer(e) || p != CB_PHASE_FORWARD || (undo ? sc_variant != 1 : sc_variant != 0)) return false;
    sc_variant = undo ? 0 : 1;
    ++*(undo ? &sc_undos : &sc_switches);
    cb_choice *c = &e->lb[i].choice[p];
    c->algo = sc_variant, c->name = undo ? "first" : "second", c->ms = 0.01;
    return true;
}
static void test_step_check(void) {
    static cb_backend sc;
    sc = cb_backend_cpu;
    sc.mark_reset = sc_mark_reset, sc.mark = sc_mark, sc.mark_ms = sc_mark_ms;
    sc.forward = sc_forward, sc.plan = sc_plan, sc.revise = sc_revise;
    cb_error err = {0};
    cb_exec_opts o;
    cb_net *net = all_net(&o);
    if (!net) return;
    CHECK(!o.step_check, "the library's default leaves the check off");
    cb_exec *plain = cb_exec_create(net, &o, &err);
    CHECK(plain != NULL, "%s", err.msg);
    int x = sc_layer(plain);
    CHECK(x > 0, "layer x");
    float *want = malloc((size_t)plain->nstats * 4), *got = malloc((size_t)plain->nstats * 4);
    memcpy(want, plain->stats, (size_t)plain->nstats * 4);
    for (int slow = 0; slow < 3; slow++) { // 0: the second is fast; 1: slower; 2: the check off
        sc_variant = sc_switches = sc_undos = 0, sc_second_slow = slow == 1;
        o.step_check = slow != 2;
        cb_exec *e = cb_exec_create_on(net, &o, &sc, &err);
        CHECK(e != NULL, "%s", err.msg);
        if (!e) continue;
        const cb_choice *c = cb_exec_choice(e, x, CB_PHASE_FORWARD);
        bool noted = false;
        for (int k = 0; k < cb_exec_note_count(e); k++) noted |= strstr(cb_exec_note_at(e, k), "step check: 1 phases ran") && strstr(cb_exec_note_at(e, k), "'x' forward: first ");
        if (slow == 0) {
            CHECK(sc_switches == 1 && sc_undos == 0 && sc_variant == 1, "fast second: %d switches, %d undone", sc_switches, sc_undos);
            CHECK(!strcmp(c->name, "second") && (c->flags & CB_CHOICE_STEP_CHECKED) && c->ms >= 0 && c->rival_ms > 0.9 * SC_MS && c->ms < c->rival_ms,
                  "fast second: the choice %s, flags %x, %.3f<%.3f", c->name, c->flags, c->ms, c->rival_ms);
            CHECK(noted && strstr(cb_exec_algo(e, x, CB_PHASE_FORWARD), "(in step ") != NULL, "fast second: noted %d, '%s'", noted,
                  cb_exec_algo(e, x, CB_PHASE_FORWARD));
        } else {
            CHECK(sc_switches == (slow == 1) && sc_undos == (slow == 1) && sc_variant == 0, "case %d: %d switches, %d undone", slow,
                  sc_switches, sc_undos);
            CHECK(!strcmp(c->name, "first") && !(c->flags & CB_CHOICE_STEP_CHECKED) && !noted, "case %d: the choice %s, flags %x", slow,
                  c->name, c->flags);
        }
        // the steps the check ran moved no running statistic (bn and the fused one)
        memcpy(got, e->stats, (size_t)e->nstats * 4);
        CHECK(e->nstats == plain->nstats && e->nstats > 0 && !memcmp(got, want, (size_t)e->nstats * 4), "case %d: running statistics moved",
              slow);
        // and the loss of a step is the plain backend's
        double l1 = step_loss(e), l0 = step_loss(plain);
        CHECK(l1 == l0, "case %d: loss %.9g, %.9g without the table", slow, l1, l0);
        cb_exec_destroy(e);
    }
    // a bad $CONVBENCH_STEP_CHECK is refused by name
    setenv("CONVBENCH_STEP_CHECK", "always", 1);
    cb_exec *bad = cb_exec_create(net, &o, &err);
    CHECK(!bad && strstr(err.msg, "CONVBENCH_STEP_CHECK") && strstr(err.msg, "always"), "bad value: %s", err.msg);
    cb_exec_destroy(bad);
    // force keeps the switch whatever the times; undo switches back
    const char *modes[] = {"force", "undo"};
    for (int m = 0; m < 2; m++) {
        setenv("CONVBENCH_STEP_CHECK", modes[m], 1);
        sc_variant = sc_switches = sc_undos = 0, sc_second_slow = true;
        o.step_check = false;
        cb_exec *e = cb_exec_create_on(net, &o, &sc, &err);
        CHECK(e != NULL, "%s: %s", modes[m], err.msg);
        if (e) {
            const cb_choice *c = cb_exec_choice(e, x, CB_PHASE_FORWARD);
            CHECK(sc_switches == 1 && sc_undos == m && !strcmp(c->name, m ? "first" : "second") && !!(c->flags & CB_CHOICE_STEP_CHECKED) == !m,
                  "%s: %d switches, %d undone, the choice %s", modes[m], sc_switches, sc_undos, c->name);
        }
        cb_exec_destroy(e);
    }
    unsetenv("CONVBENCH_STEP_CHECK");
    free(want);
    free(got);
    cb_exec_destroy(plain);
    cb_net_free(net);
}

// The workspace trim (cb_exec_opts.memory_slack, exec.c) on the cpu backend with a table of its
// own: layer "x" asks 32 MiB of workspace for its forward (no gap of the small net's arena holds
// it, so it is a buffer of its own), race time 1 ms; revise offers one candidate of 1 MiB, wt_delta
// ms slower. Within the slack the switch is kept and the buffer shrinks; past it, or with the
// slack 0, nothing moves; the loss is the same either way.
static double wt_delta;
static int wt_variant, wt_undos;
static size_t wt_cap;
static cb_status wt_plan(cb_exec *e, int i, cb_error *err) {
    cb_status st = cb_backend_cpu.plan ? cb_backend_cpu.plan(e, i, err) : CB_OK;
    if (i == sc_layer(e)) {
        e->lb[i].choice[CB_PHASE_FORWARD] = cb_choice_of(CB_IMPL_CPU, 0, "big");
        e->lb[i].choice[CB_PHASE_FORWARD].ms = 1.0;
        e->lb[i].ws[CB_PHASE_FORWARD] = (size_t)32 << 20;
    }
    return st;
}
static cb_status wt_plan_first(cb_exec *e, int i, cb_error *err) { // the first conv's backward filter asks 128 MiB
    cb_status st = cb_backend_cpu.plan ? cb_backend_cpu.plan(e, i, err) : CB_OK;
    int first = -1;
    for (int j = 0; j < e->net->nlayers && first < 0; j++)
        if (e->net->layers[j].op == CB_OP_CONV) first = j;
    if (i == first) e->lb[i].ws[CB_PHASE_BWD_FILTER] = (size_t)128 << 20;
    return st;
}
static bool wt_revise(cb_exec *e, int i, cb_phase p, size_t max_ws, bool undo) {
    if (i != sc_layer(e) || p != CB_PHASE_FORWARD) return false;
    cb_choice *c = &e->lb[i].choice[p];
    if (undo) {
        if (wt_variant != 1) return false;
        wt_variant = 0, wt_undos++;
        *c = cb_choice_of(CB_IMPL_CPU, 0, "big"), c->ms = 1.0, c->workspace = (size_t)32 << 20;
        return true;
    }
    if (!wt_cap) wt_cap = max_ws; // (the first ask)
    if (wt_variant != 0 || max_ws < ((size_t)1 << 20)) return false;
    wt_variant = 1;
    unsigned flags = c->flags;
    *c = cb_choice_of(CB_IMPL_CPU, 1, "small"), c->ms = 1.0 + wt_delta, c->workspace = (size_t)1 << 20, c->flags = flags;
    return true;
}
static size_t wt_reserved;
static int wt_grows;
static void *wt_alloc_growable(cb_exec *e, size_t bytes, size_t reserve) {
    wt_reserved = reserve;
    return cb_backend_cpu.alloc(e, reserve);
}
static bool wt_grow(cb_exec *e, void *p, size_t bytes) {
    (void)e, (void)p;
    wt_grows++;
    return bytes <= wt_reserved;
}
static void test_workspace_trim(void) {
    static cb_backend wt;
    wt = cb_backend_cpu;
    wt.plan = wt_plan, wt.revise = wt_revise;
    cb_error err = {0};
    cb_exec_opts o;
    cb_net *net = all_net(&o);
    if (!net) return;
    CHECK(o.memory_slack == CB_MEMORY_SLACK_DEFAULT && o.memory_slack > 0, "the library's default: %g", o.memory_slack);
    cb_exec *plain = cb_exec_create(net, &o, &err);
    CHECK(plain != NULL, "%s", err.msg);
    if (!plain) return;
    int x = sc_layer(plain);
    double l0 = step_loss(plain);
    for (int c = 0; c < 3; c++) { // 0: 0.005 ms slower, within 1% of the step; 1: 0.5 ms slower; 2: the slack 0
        wt_delta = c == 1 ? 0.5 : 0.005, wt_variant = wt_undos = 0, wt_cap = 0;
        o.memory_slack = c == 2 ? 0 : 0.01;
        cb_exec *e = cb_exec_create_on(net, &o, &wt, &err);
        CHECK(e != NULL, "case %d: %s", c, err.msg);
        if (!e) continue;
        const cb_choice *ch = cb_exec_choice(e, x, CB_PHASE_FORWARD);
        const char *note = "";
        for (int k = 0; k < cb_exec_note_count(e); k++)
            if (strstr(cb_exec_note_at(e, k), "workspace beyond the arena")) note = cb_exec_note_at(e, k);
        if (c == 0) {
            CHECK(wt_cap == ((size_t)32 << 20) - 1, "asked for less than 32 MiB: %zu", wt_cap);
            CHECK(!strcmp(ch->name, "small") && (ch->flags & CB_CHOICE_LESS_WORKSPACE) && ch->rival_ms == 1.0 && wt_undos == 0,
                  "kept: %s, flags %x, rival %.3f, %d undone", ch->name, ch->flags, ch->rival_ms, wt_undos);
            CHECK(cb_exec_workspace(e, x, CB_PHASE_FORWARD) == (size_t)1 << 20 && e->ws_bytes <= (size_t)1 << 20,
                  "workspace %zu, outside %zu", cb_exec_workspace(e, x, CB_PHASE_FORWARD), e->ws_bytes);
            CHECK(strstr(note, "32.0 -> ") && strstr(note, "'x' forward") && strstr(cb_exec_algo(e, x, CB_PHASE_FORWARD), "less workspace"),
                  "note '%s', algo '%s'", note, cb_exec_algo(e, x, CB_PHASE_FORWARD));
        } else {
            CHECK(!strcmp(ch->name, "big") && !(ch->flags & CB_CHOICE_LESS_WORKSPACE) && e->ws_bytes == (size_t)32 << 20,
                  "case %d: %s, outside %zu", c, ch->name, e->ws_bytes);
            CHECK(c == 2 ? wt_cap == 0 && !*note : wt_undos == 1 && strstr(note, "kept for speed") && strstr(note, "0.500 ms more"),
                  "case %d: cap %zu, %d undone, note '%s'", c, wt_cap, wt_undos, note);
        }
        double l1 = step_loss(e);
        CHECK(l1 == l0, "case %d: loss %.9g, %.9g without the table", c, l1, l0);
        cb_exec_destroy(e);
    }
    // a growable arena (a host buffer of the reserved size; grow within it): the 32 MiB lie past the
    // arena's end, which grows by no more than them, nothing outside; CONVBENCH_WORKSPACE=arena
    // keeps them outside; the peak is no higher (lower by the bytes free at x's call), the loss the same
    wt.alloc_growable = wt_alloc_growable, wt.grow = wt_grow;
    o.memory_slack = 0, o.workspace_limit = (size_t)64 << 20;
    size_t peak[2] = {0, 0};
    for (int c = 0; c < 2; c++) {
        if (c) setenv("CONVBENCH_WORKSPACE", "arena", 1);
        wt_variant = wt_undos = 0, wt_cap = 0, wt_reserved = 0, wt_grows = 0;
        cb_exec *e = cb_exec_create_on(net, &o, &wt, &err);
        unsetenv("CONVBENCH_WORKSPACE");
        CHECK(e != NULL, "grow %d: %s", c, err.msg);
        if (!e) continue;
        peak[c] = cb_exec_peak_bytes(e);
        size_t arena = cb_exec_arena_bytes(e);
        if (c == 0) {
            CHECK(wt_reserved >= ((size_t)64 << 20) && e->ws_bytes == 0 && e->arena_grown > 0 && e->arena_grown <= ((size_t)32 << 20) &&
                      wt_grows == 1 && e->lb[x].wsp[CB_PHASE_FORWARD] != NULL &&
                      (char *)e->lb[x].wsp[CB_PHASE_FORWARD] + ((size_t)32 << 20) <= (char *)e->arena + arena,
                  "grown: reserved %zu, outside %zu, grown %zu (%d grows), the workspace at %p in [%p, +%zu)", wt_reserved, e->ws_bytes,
                  e->arena_grown, wt_grows, e->lb[x].wsp[CB_PHASE_FORWARD], e->arena, arena);
            CHECK(cb_exec_memory_at_peak(e, CB_MEM_WORKSPACE) >= ((size_t)32 << 20), "the busiest point holds the workspace: %zu",
                  cb_exec_memory_at_peak(e, CB_MEM_WORKSPACE));
        } else
            CHECK(e->ws_bytes == (size_t)32 << 20 && e->arena_grown == 0 && wt_grows == 0 && e->lb[x].wsp[CB_PHASE_FORWARD] == NULL,
                  "arena mode: outside %zu, grown %zu", e->ws_bytes, e->arena_grown);
        double l1 = step_loss(e);
        CHECK(l1 == l0, "grow %d: loss %.9g, %.9g", c, l1, l0);
        cb_exec_destroy(e);
    }
    CHECK(peak[0] > 0 && peak[0] <= peak[1], "the peak with growth %zu, without %zu", peak[0], peak[1]);
    cb_exec_destroy(plain);
    cb_net_free(net);
    // MobileNet-v2 b4 with 128 MiB (more than its arena) asked by its first convolution's backward filter, the step's last
    // call, where most of the arena is free: the arena (whose buffers live throughout lie at its
    // bottom) grows by less than the workspace, and the peak is that much below a buffer of its own
    net = cb_net_load("mobilenet-v2", &err);
    CHECK(net && cb_net_set_batch(net, 4, &err) == CB_OK, "%s", err.msg);
    wt.plan = wt_plan_first;
    for (int c = 0; c < 2 && net; c++) {
        if (c) setenv("CONVBENCH_WORKSPACE", "arena", 1);
        wt_reserved = 0, wt_grows = 0;
        cb_exec *e = cb_exec_create_on(net, &o, &wt, &err);
        unsetenv("CONVBENCH_WORKSPACE");
        CHECK(e != NULL, "mobilenet %d: %s", c, err.msg);
        if (!e) continue;
        peak[c] = cb_exec_peak_bytes(e);
        if (!c)
            CHECK(e->ws_bytes == 0 && e->arena_grown > 0 && e->arena_grown < ((size_t)128 << 20), "mobilenet: grown %.2f MiB for 128, outside %zu",
                  e->arena_grown / 1048576.0, e->ws_bytes);
        cb_exec_destroy(e);
    }
    CHECK(peak[0] + ((size_t)1 << 20) < peak[1], "mobilenet: the peak with growth %.2f MiB, without %.2f", peak[0] / 1048576.0, peak[1] / 1048576.0);
    printf("  mobilenet-v2 b4, 128 MiB at conv1's backward filter: planned %.2f MiB grown, %.2f outside\n", peak[0] / 1048576.0,
           peak[1] / 1048576.0);
    cb_net_free(net);
}

// Outputs made again in the backward (cb_recompute, exec.c) on the cpu backend with a table of its
// own: a convolution with batch norm and no activation (whose backward reads pre alone) may drop its
// output (c2's has two readers whose backwards read it, a convolution's and, later, a product's); the backend keeps a host copy of it after the forward and writes it back when the engine
// asks (rc_recompute), so any byte of it the arena gave another buffer in between, or a read of it
// outside the intervals the engine planned, shows in the loss or the gradients. Off against on, all
// and auto under a budget of 1 byte: equal losses and gradients bit for bit over 3 SGD steps,
// each made-again output written back once a step, the busiest point lower, notes; no two buffers
// of the placed arena share bytes while both are live; auto with no budget the host meets changes nothing.
#define RC_MAX 32
static float *rc_stash[RC_MAX];
static int rc_calls;
static bool rc_again(const cb_exec *e, int i) { return e->net->layers[i].bn && e->net->layers[i].act == CB_ACT_NONE; }
static void rc_epilogue(cb_exec *e, int i, bool train) {
    cb_backend_cpu.forward_epilogue(e, i, train);
    if (!train || !e->lb[i].y_again || i >= RC_MAX) return;
    size_t n = (size_t)cb_shape_count(e->net->layers[i].out);
    if (!rc_stash[i]) rc_stash[i] = malloc(n * 4);
    memcpy(rc_stash[i], e->lb[i].y, n * 4);
}
static void rc_recompute(cb_exec *e, int i) {
    rc_calls++;
    if (i < RC_MAX && rc_stash[i]) memcpy(e->lb[i].y, rc_stash[i], (size_t)cb_shape_count(e->net->layers[i].out) * 4);
}
static size_t rc_free_bytes;
static size_t rc_mem_free(cb_exec *e) { return (void)e, rc_free_bytes; }
static bool arena_disjoint(const cb_exec *e) {
    for (int a = 0; a < e->arena_nmap; a++)
        for (int b = a + 1; b < e->arena_nmap; b++) {
            const struct cb_arena_slot *x = &e->arena_map[a], *y = &e->arena_map[b];
            if (x->off < y->off + y->bytes && y->off < x->off + x->bytes && x->lo <= y->hi && y->lo <= x->hi) return false;
        }
    return true;
}
static double rc_peak(const cb_exec *e) {
    double b = 0;
    for (int k = 0; k < CB_MEM_COUNT; k++) b += (double)cb_exec_memory_at_peak(e, (cb_mem_kind)k);
    return b;
}
static void test_recompute(void) {
    static const char *json =
        "{\"name\": \"again\", \"layers\": {"
        "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [3, 8, 7, 4]},"
        "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 4, 8], \"padding\": \"SAME\", \"normalizer_fn\": \"batch_norm\", \"bias\": false, \"activation_fn\": null},"
        "\"c2\": {\"parents\": [\"c1\"], \"type\": \"Convolution\", \"filter\": [3, 2, 8, 8], \"padding\": \"SAME\", \"normalizer_fn\": \"batch_norm\", \"bias\": false, \"activation_fn\": null},"
        "\"c3\": {\"parents\": [\"c2\"], \"type\": \"Convolution\", \"filter\": [1, 1, 8, 8], \"normalizer_fn\": \"batch_norm\", \"bias\": false, \"activation_fn\": null},"
        "\"c4\": {\"parents\": [\"c3\"], \"type\": \"Convolution\", \"filter\": [3, 3, 8, 8], \"padding\": \"SAME\", \"normalizer_fn\": \"batch_norm\", \"bias\": false, \"activation_fn\": null},"
        "\"m\": {\"parents\": [\"c4\", \"c2\"], \"type\": \"Elementwise\", \"operation\": \"mul\"},"
        "\"c5\": {\"parents\": [\"m\"], \"type\": \"Convolution\", \"filter\": [3, 3, 8, 8], \"padding\": \"SAME\", \"normalizer_fn\": \"batch_norm\", \"bias\": false, \"activation_fn\": null},"
        "\"c6\": {\"parents\": [\"c5\"], \"type\": \"Convolution\", \"filter\": [1, 1, 8, 8], \"normalizer_fn\": \"batch_norm\", \"bias\": false, \"activation_fn\": null},"
        "\"c7\": {\"parents\": [\"c6\"], \"type\": \"Convolution\", \"filter\": [3, 3, 8, 6], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"normalizer_fn\": \"batch_norm\", \"bias\": false, \"activation_fn\": null},"
        "\"s\": {\"parents\": [\"c7\", \"c7\"], \"type\": \"Elementwise\", \"activation_fn\": \"relu\"},"
        "\"gp\": {\"parents\": [\"s\"], \"type\": \"GlobalAvgPool\"},"
        "\"fc\": {\"parents\": [\"gp\"], \"type\": \"InnerProduct\", \"num_outputs\": 5},"
        "\"sm\": {\"parents\": [\"fc\"], \"type\": \"Softmax\"}}}";
    static cb_backend rc;
    rc = cb_backend_cpu;
    rc.output_again = rc_again, rc.recompute_output = rc_recompute, rc.forward_epilogue = rc_epilogue;
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, "again.json", &err);
    CHECK(net && net->nlayers <= RC_MAX, "%s", err.msg);
    if (!net) return;
    cb_recompute modes[5] = {CB_RECOMPUTE_OFF, CB_RECOMPUTE_ON, CB_RECOMPUTE_AUTO, CB_RECOMPUTE_AUTO, CB_RECOMPUTE_ALL};
    size_t budgets[5] = {0, 0, 1, 0, 0};
    const char *names[5] = {"off", "on", "auto (1 byte)", "auto (no budget)", "all"};
    cb_exec *x[5];
    for (int m = 0; m < 5; m++) {
        cb_exec_opts o;
        cb_exec_opts_default(&o);
        o.seed = 11, o.recompute = modes[m], o.memory_budget = budgets[m];
        x[m] = cb_exec_create_on(net, &o, &rc, &err);
        CHECK(x[m] != NULL, "%s: %s", names[m], err.msg);
    }
    if (x[0] && x[1] && x[2] && x[3] && x[4]) {
        double loss[5] = {0};
        int again[5] = {0};
        for (int m = 0; m < 5; m++) {
            for (int i = 0; i < net->nlayers; i++) again[m] += x[m]->lb[i].y_again;
            CHECK(arena_disjoint(x[m]), "%s: two buffers share bytes while both are live", names[m]);
            bool said = false, over = false;
            for (int k = 0; k < cb_exec_note_count(x[m]); k++) {
                said |= strstr(cb_exec_note_at(x[m], k), "made again in the backward") != NULL;
                over |= strstr(cb_exec_note_at(x[m], k), "above what --max-memory leaves") != NULL;
            }
            CHECK(said == (again[m] > 0) && over == (m == 2), "%s: %d outputs made again, the note %s, the budget's %s", names[m], again[m],
                  said ? "given" : "missing", over ? "given" : "missing");
        }
        int c2 = 2; // (data, c1, c2, ...)
        CHECK(again[0] == 0 && again[3] == 0 && again[1] >= 2 && again[2] >= 2 && x[1]->lb[c2].y_again,
              "outputs made again: off %d, on %d (c2's %s), auto (1 byte) %d, auto %d", again[0], again[1], x[1]->lb[c2].y_again ? "too" : "not",
              again[2], again[3]);
        CHECK(again[4] == 6, "all: %d outputs made again, 6 can be (c1 to c6: c7's the sum alone reads, it lives to that forward)", again[4]);
        CHECK(rc_peak(x[1]) < rc_peak(x[0]) && rc_peak(x[3]) == rc_peak(x[0]), "the busiest point: on %.0f, off %.0f, auto %.0f bytes",
              rc_peak(x[1]), rc_peak(x[0]), rc_peak(x[3]));
        for (int step = 0; step < 3; step++)
            for (int m = 0; m < 5; m++) {
                if (m == 1) rc_calls = 0;
                if (step) cb_exec_update(x[m], NULL);
                loss[m] = step_loss(x[m]);
                cb_exec_criterion_backward(x[m], NULL);
                cb_exec_backward(x[m], NULL);
                if (m == 1) CHECK(rc_calls == again[1], "step %d: %d outputs written back, %d made again", step, rc_calls, again[1]);
            }
        for (int m = 1; m < 5; m++) {
            CHECK(loss[m] == loss[0], "%s: loss %.9g, off %.9g", names[m], loss[m], loss[0]);
            CHECK(!memcmp(x[m]->grads, x[0]->grads, (size_t)x[0]->nparams * 4), "%s: the parameter gradients differ from off's", names[m]);
        }
        printf("  %d outputs made again, the busiest point %.1f -> %.1f KiB\n", again[1], rc_peak(x[0]) / 1024, rc_peak(x[1]) / 1024);
    }
    for (int m = 0; m < 5; m++) cb_exec_destroy(x[m]);
    // auto with no budget given takes the device's free memory as its budget (be->mem_free, less 5% and
    // 256 MiB): 256 MiB free leaves this plan less than nothing, so it makes outputs again and says why
    rc.mem_free = rc_mem_free, rc_free_bytes = (size_t)256 << 20;
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.seed = 11;
    cb_exec *f = cb_exec_create_on(net, &o, &rc, &err);
    int made = 0;
    bool why = false;
    for (int i = 0; f && i < net->nlayers; i++) made += f->lb[i].y_again;
    for (int k = 0; f && k < cb_exec_note_count(f); k++) why |= strstr(cb_exec_note_at(f, k), "the device's free memory") != NULL;
    CHECK(f && made >= 2 && why, "auto on a full device: %d outputs made again, the device's memory %s", made, why ? "named" : "not named");
    cb_exec_destroy(f);
    rc_free_bytes = (size_t)64 << 30; // (64 GiB free: nothing made again)
    f = cb_exec_create_on(net, &o, &rc, &err);
    made = 0;
    for (int i = 0; f && i < net->nlayers; i++) made += f->lb[i].y_again;
    CHECK(f && made == 0, "auto on an empty device: %d outputs made again", made);
    cb_exec_destroy(f);
    for (int i = 0; i < RC_MAX; i++) free(rc_stash[i]), rc_stash[i] = NULL;
    cb_net_free(net);
}

int main(void) {
    RUN(test_choice_pick);
    RUN(test_grad_arena);
    RUN(test_plan_bn_add);
    RUN(test_cpu_matches_ref);
    RUN(test_gradients_finite_differences);
    RUN(test_modern_shapes);
    RUN(test_modern_cpu_matches_ref);
    RUN(test_onednn_matches_ref);
    RUN(test_cpu_auto_matches_ref);
    RUN(test_modern_gradients_finite_differences);
    RUN(test_learns_synthetic_task);
    RUN(test_unknown_backend);
    RUN(test_exec_notes);
    RUN(test_declines_have_reasons);
    RUN(test_choices_are_data);
    RUN(test_plan_nodes);
    RUN(test_cudnn_declines_by_code);
    RUN(test_out_of_memory_is_clean);
    RUN(test_no_update_no_momentum);
    RUN(test_plan_only_counts);
    RUN(test_weight_copies);
    RUN(test_pool_relu_masks);
    RUN(test_concat_relu_masks);
    RUN(test_arena_order);
    RUN(test_workspace_trim);
    RUN(test_step_check);
    RUN(test_recompute);
    return test_summary();
}
