// The backend registry: every backend's name, what it declares it can do, and the questions asked
// before one runs (cb_backend_supports). The one place that compares a backend's name; tools and
// the model ask the capabilities.
#include "core/backend.h"
#include "core/net.h"

#include <stdio.h>
#include <string.h>

static const char *const REASON_NAMES[] = {"none",           "precision",          "layout",       "conv_algo",
                                           "concat_axis",    "softmax_position",   "asymmetric_padding",
                                           "lrn_range",      "bn_epsilon",         "nhwc_order",   "library_refuses",
                                           "no_algorithm",   "activation",         "no_gpu_kernel"};
_Static_assert(sizeof REASON_NAMES / sizeof REASON_NAMES[0] == CB_REASON_COUNT, "a reason lacks a name");
const char *cb_reason_name(cb_reason r) { return (unsigned)r < CB_REASON_COUNT ? REASON_NAMES[r] : "?"; }

static const char *const PREC_NAMES[] = {"fp32", "tf32", "bf16"};
_Static_assert(sizeof PREC_NAMES / sizeof PREC_NAMES[0] == CB_PREC_COUNT, "a precision lacks a name");
static const char *const LAYOUT_NAMES[] = {"nchw", "nhwc"};
_Static_assert(sizeof LAYOUT_NAMES / sizeof LAYOUT_NAMES[0] == CB_LAYOUT_COUNT, "a layout lacks a name");

const char *cb_precision_name(cb_precision p) { return (unsigned)p < CB_PREC_COUNT ? PREC_NAMES[p] : "?"; }
const char *cb_layout_name(cb_layout l) { return (unsigned)l < CB_LAYOUT_COUNT ? LAYOUT_NAMES[l] : "?"; }
bool cb_precision_parse(const char *s, cb_precision *p) {
    for (int i = 0; i < CB_PREC_COUNT; i++)
        if (strcmp(s, PREC_NAMES[i]) == 0) return *p = (cb_precision)i, true;
    return false;
}
bool cb_layout_parse(const char *s, cb_layout *l) {
    for (int i = 0; i < CB_LAYOUT_COUNT; i++)
        if (strcmp(s, LAYOUT_NAMES[i]) == 0) return *l = (cb_layout)i, true;
    return false;
}

#define ALL_PREC ((1u << CB_PREC_FP32) | (1u << CB_PREC_TF32) | (1u << CB_PREC_BF16))
#define ALL_LAYOUT ((1u << CB_LAYOUT_NCHW) | (1u << CB_LAYOUT_NHWC))
// Every backend, built or not (a calibration saved on a GPU machine names its backend, and the
// model reads it anywhere); `be` is NULL where this build lacks it.
static const struct {
    const char *name;
    cb_backend_caps caps;
    const cb_backend *be;
} BACKENDS[] = {
    {"cpu", {.precisions = 1u << CB_PREC_FP32, .layouts = 1u << CB_LAYOUT_NCHW, .calibrates = true}, &cb_backend_cpu},
    {"ref", {.precisions = 1u << CB_PREC_FP32, .layouts = 1u << CB_LAYOUT_NCHW}, &cb_backend_ref},
#ifdef CB_HAVE_ONEDNN
    {"onednn", {.precisions = 1u << CB_PREC_FP32, .layouts = 1u << CB_LAYOUT_NCHW}, &cb_backend_onednn},
    {"cpu-auto", {.precisions = 1u << CB_PREC_FP32, .layouts = 1u << CB_LAYOUT_NCHW}, &cb_backend_cpu_auto},
#else
    {"onednn", {.precisions = 1u << CB_PREC_FP32, .layouts = 1u << CB_LAYOUT_NCHW}, NULL},
    {"cpu-auto", {.precisions = 1u << CB_PREC_FP32, .layouts = 1u << CB_LAYOUT_NCHW}, NULL},
#endif
#ifdef CB_HAVE_CUDA
#define BE(x) &x
#else
#define BE(x) NULL
#endif
    {"cuda",
     {.precisions = ALL_PREC, .layouts = 1u << CB_LAYOUT_NCHW, .device = true, .own_conv_algos = true, .calibrates = true,
      .conv_fuses_relu = true},
     BE(cb_backend_cuda)},
    {"cudnn",
     {.precisions = ALL_PREC, .layouts = ALL_LAYOUT, .device = true, .own_conv_algos = true, .conv_library = true,
      .calibrates = true, .fc_on_library = true},
     BE(cb_backend_cudnn)},
    {"auto",
     {.precisions = ALL_PREC, .layouts = ALL_LAYOUT, .device = true, .own_conv_algos = true, .conv_library = true,
      .fc_on_library = true, .races_own_conv = true},
     BE(cb_backend_auto)},
#undef BE
};
enum { NBACKENDS = sizeof BACKENDS / sizeof BACKENDS[0] };

static int backend_index(const char *name) {
    for (int i = 0; name && i < NBACKENDS; i++)
        if (strcmp(BACKENDS[i].name, name) == 0) return i;
    return -1;
}
const cb_backend *cb_backend_find(const char *name) {
    int i = backend_index(name);
    return i < 0 ? NULL : BACKENDS[i].be;
}
const cb_backend_caps *cb_backend_caps_of(const char *name) {
    int i = backend_index(name);
    return i < 0 ? NULL : &BACKENDS[i].caps;
}
bool cb_backend_built(const char *name) { return cb_backend_find(name) != NULL; }
const char *cb_backend_name(int i) {
    for (int k = 0; k < NBACKENDS; k++)
        if (BACKENDS[k].be && i-- == 0) return BACKENDS[k].name;
    return NULL;
}

// What the engine itself cannot run, whatever the backend.
static cb_reason engine_supports(const cb_net *net, int i, char *why, size_t n) {
    const cb_layer *L = &net->layers[i];
    if (L->op == CB_OP_CONCAT) {
        int d = L->p.concat.dim < 0 ? L->p.concat.dim + L->out.rank : L->p.concat.dim;
        if (d != L->out.rank - 1 && !(L->out.rank == 4 && L->out.h == 1 && L->out.w == 1))
            return snprintf(why, n, "the engine concatenates along channels only"), CB_REASON_CONCAT_AXIS;
    }
    if (L->op == CB_OP_SOFTMAX && i != net->nlayers - 1)
        return snprintf(why, n, "Softmax is supported as the last layer only"), CB_REASON_SOFTMAX_POSITION;
    return CB_REASON_NONE;
}

cb_reason cb_backend_supports(const cb_net *net, const cb_exec_opts *o, cb_error *err) {
    int k = backend_index(o->backend);
    if (k < 0 || !BACKENDS[k].be) {
        char names[128] = "";
        for (int i = 0; i < NBACKENDS; i++)
            if (BACKENDS[i].be) snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", *names ? ", " : "", BACKENDS[i].name);
        cb_fail(err, CB_STATUS_ARG, "--backend", NULL, "%s backend '%s' (%s%s)", k < 0 ? "unknown" : "this build has no",
                o->backend ? o->backend : "(null)", names,
#ifdef CB_HAVE_CUDA
                ""
#else
                "; this build has no CUDA"
#endif
        );
        return CB_REASON_COUNT;
    }
    const cb_backend_caps *c = &BACKENDS[k].caps;
    const char *be = BACKENDS[k].name;
    if (!(c->precisions & (1u << o->precision)))
        return cb_decline(err, CB_REASON_PRECISION, "--precision", NULL, "backend %s does not compute in %s", be,
                          cb_precision_name(o->precision));
    if (!(c->layouts & (1u << o->layout)))
        return cb_decline(err, CB_REASON_LAYOUT, "--layout", NULL, "backend %s stores %s only, not %s", be,
                          cb_layout_name(CB_LAYOUT_NCHW), cb_layout_name(o->layout));
    if (o->conv_algo && strcmp(o->conv_algo, "auto") != 0 && !c->own_conv_algos)
        return cb_decline(err, CB_REASON_CONV_ALGO, "--conv-algo", NULL, "backend %s has no own GPU algorithms", be);
    for (int i = 0; net && i < net->nlayers; i++) {
        char why[256] = "";
        cb_reason r = engine_supports(net, i, why, sizeof why);
        if (r == CB_REASON_NONE && BACKENDS[k].be->supports) r = BACKENDS[k].be->supports(net, i, o, why, sizeof why);
        if (r != CB_REASON_NONE) return cb_decline(err, r, net->path, net->layers[i].name, "backend %s: %s", be, why);
    }
    return CB_REASON_NONE;
}
