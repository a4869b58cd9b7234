// One cross-backend test driver, in the style of ggml's test-backend-ops. Each case is one layer
// after an input: its shapes, and its own bound of the normalised error ||got - ref|| / ||ref||
// per precision. It runs on every backend this build has (the registry's list), in every
// precision and layout the backend declares, forward and backward, against the float64
// reference (src/cpu/ref_impl.h's cb_ref64_*, src/core/act.h's float64 activations): the output,
// the input gradient and every parameter gradient. A combination the backend declines
// (cb_backend_supports, or plan with a reason code) is counted as skipped and says its reason;
// so is a GPU backend without a device.
//
// Inputs and output gradients are multiples of 1/128 below 1 in magnitude (exact in bf16) and
// distinct within any 251 consecutive elements, so a max pool's window has one maximum in every
// storage and the reference sees the very values a bf16 backend stores.
//
// `test_ops BACKEND...` runs only those backends.
#include "check.h"
#include "core/act.h"
#include "core/backend.h"
#include "cpu/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int skipped;

typedef struct op_case {
    const char *label;
    int n, h, w, c;             // the input, in Paleo's order (N, H, W, C)
    const char *body;           // the layer's JSON fields
    double tol[CB_PREC_COUNT];  // fp32, tf32, bf16
    double tol_lib_fp32;        // fp32 on a vendor-library backend (cuDNN's FFT and Winograd round more)
} op_case;

#define TOL_CONV {1e-5, 5e-3, 2e-2}, 3e-3
#define TOL_EXACT {1e-6, 1e-6, 1.5e-2}, 1e-6 // pooling: comparisons and a division
#define TOL_ELEM {1e-5, 1e-5, 1.5e-2}, 1e-4  // activations, LRN, batch norm (fp32 exp, erf, pow, sqrt)

static const op_case CASES[] = {
    {"conv 3x3 s1 SAME C5->7 b2 relu", 2, 9, 8, 5,
     "\"type\": \"Convolution\", \"filter\": [3, 3, 5, 7], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]", TOL_CONV},
    {"conv 5x5 s2 VALID C3->6 no bias", 2, 13, 11, 3,
     "\"type\": \"Convolution\", \"filter\": [5, 5, 3, 6], \"padding\": \"VALID\", \"strides\": [1, 2, 2, 1], \"bias\": false, "
     "\"activation_fn\": null", TOL_CONV},
    {"conv 4x4 s2 SAME (asymmetric) C4->5", 1, 10, 9, 4,
     "\"type\": \"Convolution\", \"filter\": [4, 4, 4, 5], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": null", TOL_CONV},
    {"conv 3x3 groups 2 C4->6", 2, 7, 7, 4,
     "\"type\": \"Convolution\", \"filter\": [3, 3, 2, 6], \"groups\": 2, \"padding\": [1, 1], \"strides\": [1, 1, 1, 1]", TOL_CONV},
    {"conv 1x1 C8->12", 2, 5, 6, 8,
     "\"type\": \"Convolution\", \"filter\": [1, 1, 8, 12], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null", TOL_CONV},
    {"fc 5x5x3->11", 3, 5, 5, 3, "\"type\": \"InnerProduct\", \"num_outputs\": 11, \"activation_fn\": \"relu\"", TOL_CONV},
    {"fc 40->7 b1", 1, 1, 1, 40, "\"type\": \"InnerProduct\", \"num_outputs\": 7", TOL_CONV},
    {"maxpool 3x3 s2 VALID", 2, 9, 11, 5, "\"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"", TOL_EXACT},
    {"maxpool 2x2 s2 SAME (asymmetric) 7x9", 1, 7, 9, 3, "\"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"SAME\"", TOL_EXACT},
    {"maxpool 3x3 s1 pad 1", 2, 6, 7, 4, "\"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": [1, 1]", TOL_EXACT},
    {"avgpool 3x3 s1 SAME (exclude pad)", 2, 8, 7, 5, "\"type\": \"AvgPool\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"", TOL_EXACT},
    {"avgpool 2x2 s2 VALID", 1, 8, 6, 6, "\"type\": \"AvgPool\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"", TOL_EXACT},
    {"LRN size 5 C9", 2, 4, 5, 9, "\"type\": \"LRN\", \"size\": 5, \"alpha\": 0.0001, \"beta\": 0.75, \"k\": 2.0", TOL_ELEM},
    {"BatchNorm C6", 4, 5, 3, 6, "\"type\": \"BatchNorm\", \"epsilon\": 0.001", {1e-4, 1e-4, 2e-2}, 1e-4},
};
#define NCASES (int)(sizeof CASES / sizeof CASES[0])

// every activation function, as a layer, fused after a convolution, and after a convolution's
// batch norm (the GPU's own batch-norm kernels apply it in their passes): generated cases
#define NACT_CASES (3 * (CB_ACT_COUNT - 1))
static op_case act_case(int j, char *label, char *body, size_t n) {
    cb_act a = (cb_act)(1 + j / 3);
    if (j % 3 == 2) {
        snprintf(label, n, "conv 3x3 s2 C4->6 BN %s", cb_act_name(a));
        snprintf(body, 256, "\"type\": \"Convolution\", \"filter\": [3, 3, 4, 6], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], "
                            "\"bias\": false, \"normalizer_fn\": \"batch_norm\", \"activation_fn\": \"%s\"", cb_act_name(a));
        // the batch norm divides by the batch's spread and its gradient subtracts means: a looser bound
        return (op_case){label, 3, 9, 7, 4, body, {1e-4, 1e-2, 4e-2}, 3e-3};
    }
    if (j % 3 == 0) {
        snprintf(label, n, "Activation %s", cb_act_name(a));
        snprintf(body, 256, "\"type\": \"Activation\", \"fn\": \"%s\"", cb_act_name(a));
        return (op_case){label, 2, 5, 6, 7, body, {1e-5, 1e-5, 1.5e-2}, 1e-4};
    }
    snprintf(label, n, "conv 3x3 C4->5 %s", cb_act_name(a));
    snprintf(body, 256, "\"type\": \"Convolution\", \"filter\": [3, 3, 4, 5], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], "
                        "\"activation_fn\": \"%s\"", cb_act_name(a));
    return (op_case){label, 2, 6, 5, 4, body, TOL_CONV};
}

static double value(size_t i, int mult, int mod) { return (double)((long)((i * (size_t)mult) % (size_t)mod) - mod / 2) / 128.0; }

static double nerr(const float *a, const double *ref, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) num += (a[i] - ref[i]) * (a[i] - ref[i]), den += ref[i] * ref[i];
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static double *to64(const float *f, size_t n) {
    double *d = malloc(n * sizeof *d + 8);
    for (size_t i = 0; i < n; i++) d[i] = f[i];
    return d;
}

// The float64 reference of layer L (x, dy given; w, b, gamma, beta the exec's parameters): y, dx,
// and the parameter gradients g[k] in cb_exec_params' order.
static void reference(const cb_layer *L, const double *x, const double *dy, double *const *param, double *y, double *dx,
                      double **g) {
    size_t nout = (size_t)cb_shape_count(L->out);
    double *pre = calloc(nout + 1, sizeof *pre), *dpre = calloc(nout + 1, sizeof *dpre);
    switch (L->op) {
    case CB_OP_CONV:
    case CB_OP_FC: {
        cb_conv_params p;
        cb_conv_params_of(L, &p);
        const double *w = param[0], *b = L->op == CB_OP_CONV ? (L->p.conv.bias ? param[1] : NULL) : (L->p.fc.bias ? param[1] : NULL);
        double *db = b ? g[1] : NULL;
        if (L->op == CB_OP_CONV) cb_ref64_conv_forward(&p, x, w, b, pre);
        else cb_ref64_fc_forward(p.n, p.c, p.k, x, w, b, pre);
        // a convolution's batch norm (training: the batch's statistics) between it and the activation
        double *z = pre, *dz = dpre, *mean = NULL, *invstd = NULL;
        cb_bn_params bp;
        int ig = b ? 2 : 1; // bn_scale, bn_shift follow weight (and bias)
        if (L->bn) {
            cb_bn_params_of(L, &bp);
            z = calloc(nout + 1, sizeof *z), dz = calloc(nout + 1, sizeof *dz);
            mean = calloc((size_t)bp.c, sizeof *mean), invstd = calloc((size_t)bp.c, sizeof *invstd);
            cb_ref64_bn_forward_train(&bp, pre, param[ig], param[ig + 1], z, mean, invstd, NULL, NULL, 0.1);
        }
        for (size_t i = 0; i < nout; i++) {
            y[i] = cb_act_fwd_f64(L->act, z[i]);
            dz[i] = cb_act_bwd_f64(L->act, z[i], y[i], dy[i]);
        }
        if (L->bn) {
            cb_ref64_bn_backward(&bp, pre, param[ig], mean, invstd, dz, dpre, g[ig], g[ig + 1]);
            free(z), free(dz), free(mean), free(invstd);
        }
        if (L->op == CB_OP_CONV) {
            cb_ref64_conv_backward_data(&p, dpre, w, dx);
            cb_ref64_conv_backward_filter(&p, x, dpre, g[0], db);
        } else {
            cb_ref64_fc_backward_data(p.n, p.c, p.k, dpre, w, dx);
            cb_ref64_fc_backward_filter(p.n, p.c, p.k, x, dpre, g[0], db);
        }
        break;
    }
    case CB_OP_POOL: {
        cb_pool_params p;
        cb_pool_params_of(L, &p);
        int32_t *argmax = calloc(nout + 1, sizeof *argmax);
        cb_ref64_pool_forward(&p, x, y, argmax);
        cb_ref64_pool_backward(&p, x, dy, argmax, dx);
        free(argmax);
        break;
    }
    case CB_OP_ACT:
        for (size_t i = 0; i < nout; i++) {
            y[i] = cb_act_fwd_f64(L->p.act.fn, x[i]);
            dx[i] = cb_act_bwd_f64(L->p.act.fn, x[i], y[i], dy[i]);
        }
        break;
    case CB_OP_LRN: {
        cb_lrn_params p;
        cb_lrn_params_of(L, &p);
        cb_ref64_lrn_forward(&p, x, y, pre);
        cb_ref64_lrn_backward(&p, x, y, pre, dy, dx);
        break;
    }
    case CB_OP_BATCHNORM: {
        cb_bn_params p;
        cb_bn_params_of(L, &p);
        double *mean = calloc((size_t)p.c, sizeof *mean), *invstd = calloc((size_t)p.c, sizeof *invstd);
        cb_ref64_bn_forward_train(&p, x, param[0], param[1], y, mean, invstd, NULL, NULL, 0.1);
        cb_ref64_bn_backward(&p, x, param[0], mean, invstd, dy, dx, g[0], g[1]);
        free(mean), free(invstd);
        break;
    }
    default:
        break;
    }
    free(pre), free(dpre);
}

static bool no_device; // the backend under test found no GPU: its remaining cases are skipped unrun
static const char *cpu_auto_force; // $CONVBENCH_CPU_AUTO as set for "cpu-auto": onednn, onednn-plain, gemm, own, own-blocked, winograd, or NULL (race)

// cpu-auto's choice for a convolution or FC layer, every phase it ran: forced where the variable
// says so (and the path it names: the own direct, blocked or Winograd forward only where it applies, oneDNN's plain
// weights only on FC), else raced with
// both times; "" when right, else what is wrong
static const char *cpu_auto_choice_wrong(const cb_exec *e, const cb_layer *L) {
    if (L->op != CB_OP_CONV && L->op != CB_OP_FC) return "";
    bool own_ok = false, blocked_ok = false, winograd_ok = false, dgrad_ok[2] = {false, false}, wgrad_ok = false;
    if (L->op == CB_OP_CONV) {
        cb_conv_params cp;
        cb_conv_params_of(L, &cp);
        own_ok = cb_cpu_direct_supports(&cp);
        blocked_ok = cb_cpu_blocked_supports(&cp);
        winograd_ok = cb_cpu_winograd_supports(&cp);
        dgrad_ok[0] = cb_cpu_dgrad_applies(&cp, false), dgrad_ok[1] = cb_cpu_dgrad_applies(&cp, true);
        wgrad_ok = cb_cpu_wgrad_supports(&cp);
    }
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        const cb_choice *c = cb_exec_choice(e, 1, (cb_phase)p);
        if (!cpu_auto_force) {
            if (!(c->flags & CB_CHOICE_RACED) || c->ms < 0 || c->rival_ms < c->ms) return "not raced, or the loser faster";
            if (c->impl != CB_IMPL_ONEDNN && c->impl != CB_IMPL_CPU) return "raced to neither oneDNN nor cpu";
            continue;
        }
        if (!(c->flags & CB_CHOICE_FORCED)) return "not marked forced";
        bool want_own = !strcmp(cpu_auto_force, "own") && p == CB_PHASE_FORWARD && own_ok;
        // the blocked and Winograd kernels: the forward, and a stride-1 backward data as a forward;
        // the blocked backward filter
        bool want_blocked = !strcmp(cpu_auto_force, "own-blocked") &&
                            ((p == CB_PHASE_FORWARD && blocked_ok) || (p == CB_PHASE_BWD_DATA && dgrad_ok[0]) ||
                             (p == CB_PHASE_BWD_FILTER && wgrad_ok));
        bool want_winograd = !strcmp(cpu_auto_force, "winograd") &&
                             ((p == CB_PHASE_FORWARD && winograd_ok) || (p == CB_PHASE_BWD_DATA && dgrad_ok[1]));
        bool dnn = !strncmp(cpu_auto_force, "onednn", 6), plain = !strcmp(cpu_auto_force, "onednn-plain") && L->op == CB_OP_FC;
        if (dnn ? c->impl != CB_IMPL_ONEDNN || (c->algo == 1) != plain
                : c->impl != CB_IMPL_CPU || (c->algo == 2) != want_own || (c->algo == 3) != want_blocked ||
                      (c->algo == 4) != want_winograd)
            return "another path than the forced one";
    }
    return "";
}

// one case on one backend, precision and layout: pass, fail, or skip (declined)
static void run_case(const op_case *k, const char *backend, cb_precision prec, cb_layout layout) {
    char json[1024], name[256];
    snprintf(json, sizeof json,
             "{\"name\": \"op\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [%d, %d, %d, %d]},"
             " \"L\": {\"parents\": [\"data\"], %s}}}", k->n, k->h, k->w, k->c, k->body);
    bool cpu_auto = !strcmp(backend, "cpu-auto");
    snprintf(name, sizeof name, "%s%s%s%s %s %s %s", backend, cpu_auto ? "[" : "", cpu_auto ? (cpu_auto_force ? cpu_auto_force : "race") : "",
             cpu_auto ? "]" : "", cb_precision_name(prec), cb_layout_name(layout), k->label);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, k->label, &err);
    if (!net) {
        printf("FAIL %s: %s\n", name, err.msg);
        tests_failed++;
        return;
    }
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = backend, o.precision = prec, o.layout = layout, o.seed = 11, o.momentum = 0;
    cb_exec *e = no_device ? NULL : cb_exec_create(net, &o, &err);
    if (no_device) {
        skipped++;
        cb_net_free(net);
        return;
    }
    if (!e) {
        bool declined = err.status == CB_STATUS_UNSUPPORTED && err.reason != CB_REASON_NONE;
        if (err.status == CB_STATUS_DEVICE) {
            printf("skip %s and every further case of %s: %s\n", name, backend, err.msg);
            no_device = true;
            skipped++;
        } else if (declined) {
            printf("skip %s: %s\n", name, cb_reason_name(err.reason));
            skipped++;
        } else {
            printf("FAIL %s: %s\n", name, err.msg);
            tests_failed++;
        }
        cb_net_free(net);
        return;
    }
    const cb_layer *L = &net->layers[1];
    size_t nin = (size_t)cb_shape_count(net->layers[0].out), nout = (size_t)cb_shape_count(L->out);
    float *x = malloc(nin * 4), *dy = malloc(nout * 4), *y = malloc(nout * 4), *dx = malloc(nin * 4);
    double *x64 = malloc(nin * 8), *dy64 = malloc(nout * 8), *y64 = calloc(nout, 8), *dx64 = calloc(nin, 8);
    for (size_t i = 0; i < nin; i++) x64[i] = value(i, 97, 251), x[i] = (float)x64[i];
    for (size_t i = 0; i < nout; i++) dy64[i] = value(i, 89, 241), dy[i] = (float)dy64[i];
    cb_param pr[6];
    int np = cb_exec_params(e, 1, pr, 6);
    // a batch norm's scale and shift away from their initial 1 and 0, so that both reach the check
    for (int j = 0; j < np; j++)
        if (!strcmp(pr[j].what, "bn_scale") || !strcmp(pr[j].what, "bn_shift")) {
            double base = strcmp(pr[j].what, "bn_scale") ? 0.0 : 1.0;
            float *v = malloc((size_t)pr[j].count * 4);
            for (int64_t i = 0; i < pr[j].count; i++) v[i] = (float)(base + value((size_t)i, 37, 61));
            cb_exec_param_set(e, &pr[j], v);
            free(v);
        }
    cb_exec_set_input(e, x, NULL);
    cb_exec_forward(e, true, NULL);
    cb_exec_act_upload(e, 1, e->lb[1].dy, dy);
    cb_exec_backward(e, NULL);
    cb_exec_act_download(e, 1, y, e->lb[1].y);
    cb_exec_act_download(e, 0, dx, e->lb[0].dy);
    double *param[6] = {0}, *g64[6] = {0};
    float *g[6] = {0};
    for (int j = 0; j < np; j++) {
        float *v = malloc((size_t)pr[j].count * 4);
        cb_exec_param_get(e, &pr[j], v);
        param[j] = to64(v, (size_t)pr[j].count);
        free(v);
        g64[j] = calloc((size_t)pr[j].count + 1, 8);
        if (pr[j].grad) {
            g[j] = malloc((size_t)pr[j].count * 4);
            cb_param gp = {pr[j].what, pr[j].grad, NULL, pr[j].count};
            cb_exec_param_get(e, &gp, g[j]);
        }
    }
    reference(L, x64, dy64, param, y64, dx64, g64);
    double tol = k->tol[prec];
    // fp32 on a library backend: cuDNN's or cuBLAS's rounding (the choice names the convolutions'; its
    // LRN, batch norm and pools record none), as test_gpu bounds them
    if (prec == CB_PREC_FP32 && cb_backend_caps_of(backend)->conv_library) tol = fmax(tol, k->tol_lib_fp32);
    double ey = nerr(y, y64, nout), edx = nerr(dx, dx64, nin), worst = fmax(ey, edx);
    char detail[256];
    int at = snprintf(detail, sizeof detail, "y %.1e dx %.1e", ey, edx);
    for (int j = 0; j < np; j++)
        if (g[j]) {
            double eg = nerr(g[j], g64[j], (size_t)pr[j].count);
            worst = fmax(worst, eg);
            if (at > 0 && (size_t)at < sizeof detail) at += snprintf(detail + at, sizeof detail - (size_t)at, " %s %.1e", pr[j].what, eg);
        }
    bool ok = worst <= tol; // NaN fails
    const char *wrong = cpu_auto ? cpu_auto_choice_wrong(e, L) : "";
    ok = ok && !*wrong;
    printf("%s %s: %s (tol %.0e) [%s]%s%s\n", ok ? "ok  " : "FAIL", name, detail, tol, cb_exec_algo(e, 1, CB_PHASE_FORWARD),
           *wrong ? " choice: " : "", wrong);
    if (ok) tests_passed++;
    else tests_failed++;
    for (int j = 0; j < np; j++) free(param[j]), free(g64[j]), free(g[j]);
    free(x), free(dy), free(y), free(dx), free(x64), free(dy64), free(y64), free(dx64);
    cb_exec_destroy(e);
    cb_net_free(net);
}

static void run_backend(const char *backend) {
    const cb_backend_caps *caps = cb_backend_caps_of(backend);
    no_device = false;
    for (int p = 0; p < CB_PREC_COUNT; p++)
        for (int l = 0; l < CB_LAYOUT_COUNT; l++) {
            if (!(caps->precisions & (1u << p)) || !(caps->layouts & (1u << l))) continue;
            for (int j = 0; j < NCASES; j++) run_case(&CASES[j], backend, (cb_precision)p, (cb_layout)l);
            for (int j = 0; j < NACT_CASES; j++) {
                char label[64], body[256];
                op_case k = act_case(j, label, body, sizeof label);
                run_case(&k, backend, (cb_precision)p, (cb_layout)l);
            }
        }
}

int main(int argc, char **argv) {
    if (argc > 1)
        for (int i = 1; i < argc; i++) {
            if (!cb_backend_built(argv[i])) {
                printf("FAIL %s: not a backend of this build\n", argv[i]);
                tests_failed++;
            } else run_backend(argv[i]);
        }
    else
        for (int i = 0; cb_backend_name(i); i++) run_backend(cb_backend_name(i));
    // cpu-auto once more with each path forced ($CONVBENCH_CPU_AUTO), then a value it must refuse
    bool cpu_auto = cb_backend_built("cpu-auto");
    for (int i = 1; i < argc; i++) cpu_auto = cpu_auto && !strcmp(argv[i], "cpu-auto");
    const char *forces[] = {"onednn", "onednn-plain", "gemm", "own", "own-blocked", "winograd"};
    for (int f = 0; cpu_auto && f < 6; f++) {
        setenv("CONVBENCH_CPU_AUTO", forces[f], 1);
        cpu_auto_force = forces[f];
        run_backend("cpu-auto");
    }
    if (cpu_auto) {
        setenv("CONVBENCH_CPU_AUTO", "fastest", 1);
        cb_error err = {0};
        cb_net *net = cb_net_load_string("{\"name\": \"op\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", "
                                         "\"tensor\": [1, 4, 4, 3]}}}", "input", &err);
        cb_exec_opts o;
        cb_exec_opts_default(&o);
        o.backend = "cpu-auto";
        cb_exec *e = net ? cb_exec_create(net, &o, &err) : NULL;
        bool ok = net && !e && err.status == CB_STATUS_ARG && strstr(err.msg, "CONVBENCH_CPU_AUTO") && strstr(err.msg, "fastest");
        printf("%s cpu-auto refuses CONVBENCH_CPU_AUTO=fastest: %s\n", ok ? "ok  " : "FAIL", err.msg);
        ok ? tests_passed++ : tests_failed++;
        cb_exec_destroy(e);
        cb_net_free(net);
        unsetenv("CONVBENCH_CPU_AUTO");
        cpu_auto_force = NULL;
    }
    printf("%d passed, %d failed, %d skipped\n", tests_passed, tests_failed, skipped);
    return tests_failed ? 1 : 0;
}
