// GPU backends against the CPU reference: every op of "cuda", "cudnn" and "auto" on fresh random
// inputs and odd shapes, one large real layer, and a whole small network. Each case is a net of
// one layer after the input, run on the GPU backend and on "ref" (the cb_ref_* kernels) from the
// same parameters, input and output gradient; outputs, input gradient and parameter gradients
// are compared by normalised error ||gpu - ref|| / ||ref||. Tolerances (stated per precision):
//   fp32, own kernels: 1e-5    fp32, cuDNN: 1e-4, and 3e-3 where cuDNN picked an FFT or a
//   non-fused Winograd algorithm (the transforms' rounding grows with the tile and the filter:
//   1e-3 to 1.5e-3 measured on the H200 for AlexNet conv2's 5x5)
//   tf32: 5e-3                 bf16: 1.5e-2 (8-bit mantissa inputs, fp32 accumulation)
//   a whole network: 10x the layer's (errors compound through its 8 layers); 0.25 on bf16 storage
// "cudnn" and "auto" also run with --layout nhwc (fp32, tf32, bf16) and with bf16 storage (NCHW
// and NHWC) at the same tolerances (bf16 storage rounds every activation to 8 bits: within
// 1.5e-2 per layer). Activations cross through cb_exec_act_upload / download (host fp32 NCHW).
// There a layer case, or the small net with batch norm and LRN, may be declined (UNSUPPORTED) for
// the backend's documented reasons: a convolution's asymmetric padding (own kernels only), or a
// cuDNN routine that refuses the layout or type when probed in plan; printed and counted as
// skipped. Pools are never declined: they have own kernels in every storage, checked forced and
// measured through "auto". Under NHWC a convolution with unaligned input channels must say that it
// ran channel-padded, and the small net runs once more without the input's gradient. The small net
// without batch norm and LRN (conv, pool, concat, sum, FC after a 2x2 input, softmax) must run.
// Every own convolution algorithm (src/cuda/conv_algo.h) runs the convolution cases at its own
// precision; a case it does not support is skipped.
// Pooling runs also with inputs of five values (ties everywhere: the first maximum in window order
// must win, in the forward and in where the backward routes dy) where the own kernels run, and
// through "auto" three times: measured, and forced to each path by $CONVBENCH_AUTO_POOL, with a
// check that the layer's algorithm name says which path ran.
// The storage pooling kernels (cb_fmt_pool_forward / _backward) also run directly in the four
// storages against the reference loops on the same bf16-rounded inputs: max and argmax exact.
// Without a GPU (or without CUDA in the build) it prints a skip line and exits 0.
// `test_gpu --backends cpu` runs the same harness on the CPU backend (a check of the harness), and
// `test_gpu --backends onednn` on the oneDNN backend (fp32 at 1e-4, as cuDNN), where the build has it.
#include "core/act.h"
#include "core/backend.h"
#include "convbench.h"
#ifdef CB_HAVE_CUDA
#include "cpu/kernels.h"
#include "cuda/conv_algo.h"
#include "cuda/launch.h"
#include "storage/format.h"
#ifdef CB_HAVE_CUDA
#include "cudnn/dnn.h"
#include "cudnn/graph.h"
#endif
#include "gpu/gpu.h"

#include <cuda_runtime.h>
#include <cudnn.h>
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int passed, failed, skipped;
static const char *conv_algo; // own convolution algorithm under test (NULL: the backend's choice)
static bool small_only; // --backends X-small: the small cases alone (for racecheck)
static cb_layout test_layout = CB_LAYOUT_NCHW; // layout of the "cudnn" / "auto" exec under test
static char pick_tag[40]; // "pick K[ graph]" under pick_cases: a part of every label (prec_name)
static bool may_decline; // the case may be declined (UNSUPPORTED, a known reason): a skip, not a failure
static bool tie_inputs; // inputs of five values, -1 to 1 by 0.5
static const char *force_pool; // $CONVBENCH_AUTO_POOL as set for "auto": "own", "cudnn" or NULL
static bool expect_blas; // the case must run every phase on cuBLAS (auto's 1x1 GEMM forced)
static int graph_grouped;  // (expect_graph 1) the grouped convolution cases that ran a phase on a graph-API plan
static int expect_graph;  // 1: a conv (groups 1) that cuDNN computes must run its phases on graph-API plans ($CONVBENCH_DNN_GRAPH=force),
                          // each checked against the legacy algorithm within its bound; -1: none; 2: those it runs within
                          // the bound, and graph_kept_out counts its cuDNN phases on legacy algorithms
static int graph_kept_out, graph_noted; // (and graph_noted its execs that noted a plan left out)
static bool expect_dw;   // the case must run every phase on the own depthwise kernels (auto's forced)
static bool expect_wg;   // the case's conv must run on the own wgmma kernel (auto's forced, bf16 NHWC): every phase but a strided backward data
static bool no_data_grad; // the execs skip the input's gradient (a channel-padded first conv then pads no gradient)
static uint64_t rng_state;

static float urand(void) {
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return (float)((rng_state * 2685821657736338717ULL) >> 40) / 16777216.0f * 2.f - 1.f;
}

static double nerr(const float *a, const float *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i])) return INFINITY;
        double d = (double)a[i] - b[i];
        num += d * d;
        den += (double)b[i] * b[i];
    }
    // a floor for gradients that vanish in exact arithmetic (a bias before batch norm)
    double floor = 1e-4 * sqrt((double)n);
    return sqrt(num) / (sqrt(den) > floor ? sqrt(den) : floor);
}

static void check(const char *what, double err, double tol) {
    bool ok = err <= tol;
    printf("%s %-60s err %.2e tol %.0e\n", ok ? "ok  " : "FAIL", what, err, tol);
    ok ? passed++ : failed++;
}

static float *download(cb_exec *e, const float *dev, size_t n) {
    float *h = malloc(n * 4 + 4);
    e->be->download(e, h, dev, n * 4);
    return h;
}

// layer `layer`'s output-shaped activation (y or dy) as host fp32 NCHW, whatever the storage
static float *download_act(cb_exec *e, int layer, const void *dev) {
    float *h = malloc((size_t)cb_shape_count(e->net->layers[layer].out) * 4 + 4);
    cb_exec_act_download(e, layer, h, dev);
    return h;
}

// A bias gradient is a sum over the batch and positions of the layer's output gradient, which can
// cancel to near 0 (the small net's c1: its gradient comes back through a batch norm, whose input
// gradient sums to 0 per channel) where each term is large. Measured against its own size such a
// sum is ill-conditioned: in bf16 the H200 gave 0.163 (5c10d69, seed 3054580563342043935, 7 ReLU
// mask flips in c1) and 0.654 (2026-11-25) on c1's bias, where every other gradient stayed within
// 0.06. So its error is measured against the larger of its own norm and kappa times the norm of
// the per-channel sums of the terms' magnitudes (sum |dy| where the reference's activation passes
// it), kappa 25 units in the last place of the precision (bf16 0.098, tf32 0.012, fp32 3e-6): the
// rounding a bf16 sum of such terms can carry. A broken bias gradient on a layer whose sum does
// not cancel still fails at the usual tolerance; cb_fmt_bias_grad alone is checked against float64
// sums in bias_grad_cases.
static double nerr_bias(const float *a, const float *b, size_t n, cb_exec *r, int li, cb_precision prec) {
    const cb_layer *L = &r->net->layers[li];
    cb_shape o = L->out;
    // (the scale below holds for a ReLU or no activation: any other, the plain measure)
    bool relu = L->act == CB_ACT_RELU || L->act == CB_ACT_RELU6;
    if ((size_t)o.c != n || !r->lb[li].dy || (!relu && L->act != CB_ACT_NONE)) return nerr(a, b, n);
    float *dy = download_act(r, li, r->lb[li].dy), *y = download_act(r, li, r->lb[li].y);
    size_t hw = (size_t)(o.h * o.w);
    double s2 = 0, num = 0, den = 0;
    for (size_t c = 0; c < n; c++) {
        double sc = 0;
        for (size_t q = 0; q < (size_t)o.n; q++)
            for (size_t j = 0; j < hw; j++) {
                size_t at = (q * n + c) * hw + j;
                if (!relu || y[at] > 0) sc += fabs(dy[at]);
            }
        s2 += sc * sc;
        if (!isfinite(a[c])) num = NAN; // (fails any tolerance)
        double d = (double)a[c] - b[c];
        num += d * d, den += (double)b[c] * b[c];
    }
    free(dy), free(y);
    double u = prec == CB_PREC_BF16 ? 0x1p-8 : prec == CB_PREC_TF32 ? 0x1p-11 : 0x1p-23;
    double scale = fmax(sqrt(den), 25 * u * sqrt(s2));
    return scale > 0 ? sqrt(num) / scale : nerr(a, b, n);
}

// an fp32 tensor (n, c, h, w) stored NHWC, to NCHW in place (the dropout mask under NHWC)
static void nhwc_to_nchw(float *a, cb_shape s) {
    size_t hw = (size_t)(s.h * s.w), c = (size_t)s.c, all = (size_t)cb_shape_count(s);
    float *t = malloc(all * 4 + 4);
    for (size_t n = 0; n < (size_t)s.n; n++)
        for (size_t q = 0; q < hw; q++)
            for (size_t k = 0; k < c; k++) t[(n * c + k) * hw + q] = a[(n * hw + q) * c + k];
    memcpy(a, t, all * 4);
    free(t);
}

static double tol_for(const char *backend, cb_precision prec) {
    if (prec == CB_PREC_TF32) return 5e-3;
    if (prec == CB_PREC_BF16) return 1.5e-2;
    return strcmp(backend, "cuda") == 0 || strcmp(backend, "cpu") == 0 ? 1e-5 : 1e-4;
}

static const char *prec_name(cb_precision p) {
    static char buf[96];
    snprintf(buf, sizeof buf, "%s%s%s%s", test_layout == CB_LAYOUT_NHWC ? cb_layout_name(test_layout) : "",
             test_layout == CB_LAYOUT_NHWC ? " " : "", cb_precision_name(p), pick_tag);
    return buf;
}

// the tolerance for one phase of the layer: cuDNN's FFT and non-fused Winograd algorithms round
// more in fp32 (the choice's algorithm id is cuDNN's enum value of the phase)
static bool cudnn_transform_algo(const cb_choice *c, cb_phase ph) {
#ifdef CB_HAVE_CUDA
    if (c->impl != CB_IMPL_CUDNN) return false;
    if (ph == CB_PHASE_FORWARD)
        return c->algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || c->algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
               c->algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
    if (ph == CB_PHASE_BWD_DATA)
        return c->algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT || c->algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
               c->algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
    return c->algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT || c->algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
           c->algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
#else
    return false;
#endif
}
// (a graph-API plan in fp32: its engine's method is not known, so the bound src/cudnn/graph.c admits
// it under, checked against a legacy FMA algorithm, which is the transforms' bound)
static double tol_phase(const cb_exec *g, int layer, cb_phase ph, const char *backend, cb_precision prec) {
    double t = tol_for(backend, prec);
    const cb_choice *c = cb_exec_choice(g, layer, ph);
    if (prec == CB_PREC_FP32 && (cudnn_transform_algo(c, ph) || (c->flags & CB_CHOICE_GRAPH_API))) t = 3e-3;
    return t;
}

// The GPU exec under test (backend, precision, the algorithm under test) and the float64-checked
// "ref" exec of the same net and seed; false (a FAIL counted, the net freed) when either fails.
static bool exec_pair(cb_net *net, const char *backend, cb_precision prec, const char *name, cb_exec **g, cb_exec **r) {
    cb_error err = {0};
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.precision = prec;
    o.seed = rng_state | 1;
    o.backend = backend;
    o.conv_algo = conv_algo;
    o.layout = test_layout;
    o.no_data_grad = no_data_grad;
    *g = cb_exec_create(net, &o, &err);
    o.backend = "ref";
    o.conv_algo = NULL;
    o.precision = CB_PREC_FP32;
    o.layout = CB_LAYOUT_NCHW;
    // the reference's buffers each their own (CONVBENCH_MEMORY=separate), so that every gradient
    // stays readable after the pass (nerr_bias reads a layer's output gradient)
    const char *mem = getenv("CONVBENCH_MEMORY");
    char *saved = mem ? strdup(mem) : NULL;
    setenv("CONVBENCH_MEMORY", "separate", 1);
    *r = *g ? cb_exec_create(net, &o, &err) : NULL;
    if (saved) setenv("CONVBENCH_MEMORY", saved, 1);
    else unsetenv("CONVBENCH_MEMORY");
    free(saved);
    if (*g && *r) return true;
    if (!*g && may_decline && err.status == CB_STATUS_UNSUPPORTED &&
        (err.reason == CB_REASON_ASYM_PADDING || err.reason == CB_REASON_LIBRARY_REFUSES || err.reason == CB_REASON_BN_EPSILON)) {
        printf("skip %s: declined: %s\n", name, err.msg);
        skipped++;
    } else {
        printf("FAIL %s: %s\n", name, err.msg);
        failed++;
    }
    cb_exec_destroy(*g);
    cb_net_free(net);
    return false;
}

// "auto" names its pool choice in both phases: own where cuDNN cannot express the padding (its
// output size differs), else what $CONVBENCH_AUTO_POOL forces, else the measured winner.
static void check_auto_pool(const cb_exec *g, int i, const char *name) {
    const cb_layer *L = &g->net->layers[i];
    const cb_window *w = &L->p.pool.win;
    bool asym = (L->in.h + 2 * w->pad_top - w->r) / w->stride_h + 1 != L->out.h ||
                (L->in.w + 2 * w->pad_left - w->s) / w->stride_w + 1 != L->out.w;
    bool ok = true;
    for (int p = 0; p < 2; p++) {
        const cb_choice *c = cb_exec_choice(g, i, (cb_phase)p);
        if (asym) ok = ok && c->impl == CB_IMPL_OWN && (c->flags & CB_CHOICE_ASYM_PAD);
        else if (force_pool)
            ok = ok && c->impl == (!strcmp(force_pool, "own") ? CB_IMPL_OWN : CB_IMPL_CUDNN) && (c->flags & CB_CHOICE_FORCED);
        else ok = ok && (c->impl == CB_IMPL_OWN || c->impl == CB_IMPL_CUDNN) && (c->flags & CB_CHOICE_RACED) && (c->flags & CB_CHOICE_PAIRED);
    }
    char what[320];
    snprintf(what, sizeof what, "%.150s algorithm [%.47s | %.47s]", name, g->lb[i].algo[0], g->lb[i].algo[1]);
    check(what, ok ? 0 : 1, 0);
}

// One layer "L" after an input of (n, h, w, c) (Paleo order); body is the layer's JSON fields.
static void layer_case(const char *backend, cb_precision prec, const char *label, int n, int h, int w, int c, const char *body) {
    char json[2048], name[160];
    snprintf(json, sizeof json,
             "{\"name\": \"case\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [%d, %d, %d, %d]},"
             " \"L\": {\"parents\": [\"data\"], %s}}}", n, h, w, c, body);
    snprintf(name, sizeof name, "%s%s%s%s%s %s %s%s", backend, conv_algo ? ":" : "", conv_algo ? conv_algo : "",
             force_pool && !strcmp(backend, "auto") ? " pool=" : "", force_pool && !strcmp(backend, "auto") ? force_pool : "",
             prec_name(prec), label, tie_inputs ? " ties" : "");
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, label, &err);
    if (!net) {
        printf("FAIL %s: %s\n", name, err.msg);
        failed++;
        return;
    }
    cb_exec *g, *r;
    // another storage than fp32 NCHW (cudnn, auto) may decline what needs own kernels, except a
    // pool: those have own kernels in every storage
    may_decline = strcmp(backend, "cuda") && strcmp(backend, "cpu") && (test_layout != CB_LAYOUT_NCHW || prec == CB_PREC_BF16) &&
                  net->layers[net->nlayers - 1].op != CB_OP_POOL;
    bool ok = exec_pair(net, backend, prec, name, &g, &r);
    may_decline = false;
    if (!ok) return;
    int last = net->nlayers - 1;
    const cb_layer *L = &net->layers[last];
    char what[256];
    if (L->op == CB_OP_POOL && !strcmp(backend, "auto")) check_auto_pool(g, last, name);
    // under NHWC, cudnn and auto pad a convolution's unaligned input channels (and say so) but in
    // bf16, or without cuDNN's graph race (CONVBENCH_DNN_GRAPH=off), or as CONVBENCH_DNN_CPAD says
    if (L->op == CB_OP_CONV && test_layout == CB_LAYOUT_NHWC && strcmp(backend, "cuda") && L->p.conv.groups == 1 &&
        L->p.conv.cin % (prec == CB_PREC_BF16 ? 8 : 4) != 0) {
        const char *cp = getenv("CONVBENCH_DNN_CPAD"), *gm = getenv("CONVBENCH_DNN_GRAPH");
        bool want = cp && *cp ? !strcmp(cp, "on") : prec == CB_PREC_BF16 || (gm && !strcmp(gm, "off"));
        bool padded = cb_exec_choice(g, last, CB_PHASE_FORWARD)->flags & CB_CHOICE_CHANNEL_PAD;
        snprintf(what, sizeof what, "%s channels %s [%s]", name, want ? "padded" : "as they are", g->lb[last].algo[0]);
        check(what, padded == want ? 0 : 1, 0);
    }
    bool all_blas = true, all_fallback = true, all_dw = true;
    for (int p = 0; p < CB_PHASE_COUNT; p++) {
        const cb_choice *c = cb_exec_choice(g, last, (cb_phase)p);
        all_blas = all_blas && c->impl == CB_IMPL_CUBLAS;
#ifdef CB_HAVE_CUDA
        all_dw = all_dw && c->impl == CB_IMPL_OWN && c->algo == cb_cuda_conv_algo_index(&cb_conv_algo_depthwise);
#else
        all_dw = false;
#endif
        all_fallback = all_fallback && (c->flags & CB_CHOICE_FALLBACK);
    }
    if (expect_graph > 0 && L->op == CB_OP_CONV && L->p.conv.groups > 1) { // (grouped: where cuDNN's engines take it)
        bool any = false;
        for (int p = 0; p < CB_PHASE_COUNT; p++) any = any || (cb_exec_choice(g, last, (cb_phase)p)->flags & CB_CHOICE_GRAPH_API);
        graph_grouped += any;
        if (any) printf("  %s: grouped, on graph-API plans [%.40s | %.40s | %.40s]\n", name, g->lb[last].algo[0], g->lb[last].algo[1], g->lb[last].algo[2]);
    }
    if (expect_graph && L->op == CB_OP_CONV && L->p.conv.groups == 1) {
        bool all = true, any = false;
        double worst = 0; // (the largest check_err of the graph plans; INFINITY where one was not checked)
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            const cb_choice *c = cb_exec_choice(g, last, (cb_phase)p);
            if (c->impl != CB_IMPL_CUDNN) continue; // (a phase not run, or an own kernel for padding cuDNN lacks)
            bool gr = c->flags & CB_CHOICE_GRAPH_API;
            all = all && gr, any = any || gr;
            if (gr) worst = fmax(worst, c->check_err >= 0 ? c->check_err : INFINITY);
            graph_kept_out += !gr;
        }
        for (int k = 0; expect_graph == 2 && k < cb_exec_note_count(g); k++) graph_noted += strstr(cb_exec_note_at(g, k), "left out of the race") != NULL;
        snprintf(what, sizeof what, "%.100s runs %sgraph-API plans [%.40s]", name, expect_graph > 0 ? "" : "no ", g->lb[last].algo[0]);
        if (expect_graph != 2) check(what, (expect_graph > 0 ? all && any : !any) ? 0 : 1, 0);
        if (any) { // each checked against the legacy FMA algorithm at plan time, within the bound
            snprintf(what, sizeof what, "%.100s graph plans checked against the legacy algorithm", name);
#ifdef CB_HAVE_CUDA
            check(what, worst, cb_dnn_graph_tol(prec));
#endif
        }
    }
    if (expect_blas) {
        snprintf(what, sizeof what, "%.100s runs on cuBLAS [%.40s]", name, g->lb[last].algo[0]);
        check(what, all_blas ? 0 : 1, 0);
    }
    if (expect_dw) {
        snprintf(what, sizeof what, "%.100s runs the own depthwise kernels [%.40s]", name, g->lb[last].algo[0]);
        check(what, all_dw ? 0 : 1, 0);
    }
#ifdef CB_HAVE_CUDA
    if (expect_wg && L->op == CB_OP_CONV) {
        bool as_wanted = true;
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            const cb_choice *c = cb_exec_choice(g, last, (cb_phase)p);
            if (c->impl == CB_IMPL_NONE) continue;
            // every phase; the backward data at stride 1 with K a multiple of 64 (tf32 and strict fp32's
            // 3xTF32 on fp32 NHWC: 32)
            const cb_cuda_conv_algo *want_algo = prec == CB_PREC_BF16   ? &cb_conv_algo_igemm_wgmma_bf16
                                                 : prec == CB_PREC_TF32 ? &cb_conv_algo_igemm_wgmma_tf32
                                                                        : &cb_conv_algo_igemm_wgmma_x3;
            bool wg = c->impl == CB_IMPL_OWN && c->algo == cb_cuda_conv_algo_index(want_algo);
            bool want = p == CB_PHASE_FORWARD || p == CB_PHASE_BWD_FILTER ||
                        (p == CB_PHASE_BWD_DATA && L->p.conv.win.stride_h == 1 && L->p.conv.win.stride_w == 1 &&
                         L->p.conv.k % (prec == CB_PREC_BF16 ? 64 : 32) == 0);
            as_wanted = as_wanted && wg == want;
        }
        snprintf(what, sizeof what, "%.100s runs the own wgmma kernel where it can [%.30s | %.30s | %.30s]", name, g->lb[last].algo[0],
                 g->lb[last].algo[1], g->lb[last].algo[2]);
        check(what, as_wanted ? 0 : 1, 0);
    }
#endif
    // the algorithm runs none of this shape's phases (one that runs some is checked on those)
    if (conv_algo && all_fallback) {
        printf("skip %s: %s does not run it\n", name, conv_algo);
        skipped++;
        cb_exec_destroy(g);
        cb_exec_destroy(r);
        cb_net_free(net);
        return;
    }
    size_t nin = (size_t)cb_shape_count(net->layers[0].out), nout = (size_t)cb_shape_count(L->out);
    float *x = malloc(nin * 4), *dy = malloc(nout * 4);
    // Max pooling on bf16 storage: random inputs rounded to bf16 tie within a window where the
    // float64 reference sees distinct values, and the gradient goes elsewhere. So there the inputs
    // are exact in bf16 and distinct within any 9x9 window: (17h + w + a random offset per plane)
    // mod 256, over 256.
    const cb_shape xs = net->layers[0].out;
    bool bf16_max = prec == CB_PREC_BF16 && L->op == CB_OP_POOL && !L->p.pool.avg && strcmp(backend, "cuda");
    int off = (int)(urand() * 256);
    for (size_t i = 0; i < nin; i++) {
        if (bf16_max) {
            int w_ = (int)(i % xs.w), h_ = (int)(i / xs.w % xs.h);
            if (w_ == 0 && h_ == 0) off = (int)(urand() * 256);
            x[i] = (float)((17 * h_ + w_ + off) % 256) / 256.f;
        } else {
            x[i] = tie_inputs ? roundf(urand() * 2.f) * 0.5f : urand();
        }
    }
    for (size_t i = 0; i < nout; i++) dy[i] = urand();
    cb_exec_set_input(g, x, NULL);
    cb_exec_set_input(r, x, NULL);
    cb_exec_forward(g, true, NULL);
    cb_exec_forward(r, true, NULL);
    float *yg = download_act(g, last, g->lb[last].y), *yr = download_act(r, last, r->lb[last].y);
    bool dropout = L->op == CB_OP_DROPOUT;
    if (dropout) { // different generators: check the mask's values and rate, and y = x * mask
        float *m = download(g, g->lb[last].aux, nout);
        if (g->opts.layout == CB_LAYOUT_NHWC) nhwc_to_nchw(m, L->out); // the mask follows the storage
        double bad = 0, kept = 0;
        // bf16 storage rounds x, then y (relative 2^-9 each)
        float rel = g->act_bytes == 2 ? 1.f / 128 : 0.f;
        for (size_t i = 0; i < nout; i++) {
            if (m[i] != 0.f && fabsf(m[i] - 1.f / L->p.dropout.keep) > 1e-6f) bad++;
            if (m[i] != 0.f) kept++;
            bad += fabsf(yg[i] - x[i] * m[i]) > 1e-6f + rel * fabsf(x[i] * m[i]);
        }
        snprintf(what, sizeof what, "%s forward (mask values, y = x*mask)", name);
        check(what, bad, 0);
        snprintf(what, sizeof what, "%s keep rate %.3f vs %.3f", name, kept / nout, L->p.dropout.keep);
        check(what, fabs(kept / nout - L->p.dropout.keep), 0.02);
        free(m);
    } else {
        snprintf(what, sizeof what, "%s forward [%s]", name, g->lb[last].algo[0]);
        check(what, nerr(yg, yr, nout), tol_phase(g, last, CB_PHASE_FORWARD, backend, prec));
    }
    // a fused ReLU's mask differs from the reference's where rounding moves y across 0, which
    // says nothing of the backward kernels: the output gradient is zeroed there for both. Every
    // precision: fp32's FFT and Winograd algorithms round y by ~1e-6 of its norm, and one flipped
    // element of ~1e5 moves dx and dw by ~5e-3 (seen once in ~20 runs of ECE408 conv2 b5).
    size_t flipped = 0;
    if (!dropout)
        for (size_t i = 0; i < nout; i++)
            if ((yg[i] > 0.f) != (yr[i] > 0.f)) dy[i] = 0.f, flipped++;
    if (flipped && prec == CB_PREC_FP32) printf("note %s: %zu of %zu outputs crossed 0 (fp32)\n", name, flipped, nout);
    cb_exec_act_upload(g, last, g->lb[last].dy, dy);
    cb_exec_act_upload(r, last, r->lb[last].dy, dy);
    cb_exec_backward(g, NULL);
    cb_exec_backward(r, NULL);
    float *dxg = download_act(g, 0, g->lb[0].dy), *dxr = download_act(r, 0, r->lb[0].dy);
    if (dropout) {
        float *m = download(g, g->lb[last].aux, nout);
        if (g->opts.layout == CB_LAYOUT_NHWC) nhwc_to_nchw(m, L->out);
        for (size_t i = 0; i < nout; i++) dxr[i] = dy[i] * m[i];
        free(m);
    }
    snprintf(what, sizeof what, "%s backward data [%s]", name, g->lb[last].algo[1]);
    check(what, nerr(dxg, dxr, nin), tol_phase(g, last, CB_PHASE_BWD_DATA, backend, prec));
    cb_param pg[6], pr[6];
    int np = cb_exec_params(g, last, pg, 6);
    cb_exec_params(r, last, pr, 6);
    for (int j = 0; j < np; j++) {
        if (!pg[j].grad || (L->bn && !strcmp(pg[j].what, "bias"))) continue; // zero in exact arithmetic
        float *a = download(g, pg[j].grad, (size_t)pg[j].count), *b = download(r, pr[j].grad, (size_t)pr[j].count);
        snprintf(what, sizeof what, "%s backward %s [%s]", name, pg[j].what, g->lb[last].algo[2]);
        // (a bias gradient's sums cancel: measured against the scale of its terms, nerr_bias)
        bool bias = !strcmp(pg[j].what, "bias");
        check(what, bias ? nerr_bias(a, b, (size_t)pg[j].count, r, last, prec) : nerr(a, b, (size_t)pg[j].count),
              tol_phase(g, last, CB_PHASE_BWD_FILTER, backend, prec));
        free(a);
        free(b);
    }
    free(x), free(dy), free(yg), free(yr), free(dxg), free(dxr);
    cb_exec_destroy(g);
    cb_exec_destroy(r);
    cb_net_free(net);
}

// depthwise (groups = C = K): the own "depthwise" algorithm, and the own storage kernels under auto
static void conv_dw_cases(const char *be, cb_precision prec) {
    layer_case(be, prec, "conv dw 3x3 s1 pad 1 C12 b2", 2, 9, 8, 12,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 1, 12], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"groups\": 12, \"activation_fn\": \"relu\"");
    layer_case(be, prec, "conv dw 5x5 s2 SAME (asymmetric) C6 b1", 1, 12, 11, 6,
               "\"type\": \"Convolution\", \"filter\": [5, 5, 1, 6], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"groups\": 6, \"activation_fn\": null");
    layer_case(be, prec, "conv dw 7x7 pad 3 C40 b2 (ConvNeXt)", 2, 10, 9, 40,
               "\"type\": \"Convolution\", \"filter\": [7, 7, 1, 40], \"padding\": [3, 3], \"strides\": [1, 1, 1, 1], \"groups\": 40, \"activation_fn\": null");
    layer_case(be, prec, "conv dw 3x5 s(2,1) C3 b3", 3, 9, 10, 3,
               "\"type\": \"Convolution\", \"filter\": [3, 5, 1, 3], \"padding\": [1, 2], \"strides\": [1, 2, 1, 1], \"groups\": 3, \"activation_fn\": null");
    // rows wide enough that the stride-1 kernels' middle strips lie wholly inside (no column test there)
    layer_case(be, prec, "conv dw 3x3 pad 1 C24 b2 W29 (inner strips)", 2, 5, 29, 24,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 1, 24], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"groups\": 24, \"activation_fn\": \"relu\"");
    layer_case(be, prec, "conv dw 5x5 pad 2 C10 b2 W27 (inner strips)", 2, 6, 27, 10,
               "\"type\": \"Convolution\", \"filter\": [5, 5, 1, 10], \"padding\": [2, 2], \"strides\": [1, 1, 1, 1], \"groups\": 10, \"activation_fn\": null");
    layer_case(be, prec, "conv dw 7x7 pad 3 C18 b1 W31 (inner strips)", 1, 9, 31, 18,
               "\"type\": \"Convolution\", \"filter\": [7, 7, 1, 18], \"padding\": [3, 3], \"strides\": [1, 1, 1, 1], \"groups\": 18, \"activation_fn\": null");
}

// convolutions of every odd kind, then (without small_only) large layers of real networks
static void conv_cases(const char *be, cb_precision prec) {
    layer_case(be, prec, "conv 3x3 s1 SAME C3->5 b2", 2, 13, 11, 3,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 3, 5], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    layer_case(be, prec, "conv 20x5 s2 SAME (asymmetric) C5->13 b1", 1, 37, 23, 5,
               "\"type\": \"Convolution\", \"filter\": [20, 5, 5, 13], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": null");
    layer_case(be, prec, "conv 4x4 s2 SAME even (asymmetric) C13->5", 2, 16, 16, 13,
               "\"type\": \"Convolution\", \"filter\": [4, 4, 13, 5], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\"");
    layer_case(be, prec, "conv 5x5 s2 VALID C5->13 relu", 3, 19, 17, 5,
               "\"type\": \"Convolution\", \"filter\": [5, 5, 5, 13], \"padding\": \"VALID\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\"");
    layer_case(be, prec, "conv 3x3 groups 2 C6->10 pad 1", 2, 9, 9, 6,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 3, 10], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"groups\": 2, \"activation_fn\": null");
    conv_dw_cases(be, prec);
    layer_case(be, prec, "conv 1x1 C64->96", 4, 14, 14, 64,
               "\"type\": \"Convolution\", \"filter\": [1, 1, 64, 96], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    // channels in multiples of 64 (what the wgmma kernel takes): stride 2 with asymmetric SAME
    // padding and a non-square filter at batch 1, an even filter's trailing pad, a 1x3 filter
    layer_case(be, prec, "conv 3x5 s2 SAME (asymmetric) C64->40 b1 relu", 1, 15, 12, 64,
               "\"type\": \"Convolution\", \"filter\": [3, 5, 64, 40], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\"");
    layer_case(be, prec, "conv 2x2 s1 SAME (trailing pad) C64->64 b2", 2, 7, 7, 64,
               "\"type\": \"Convolution\", \"filter\": [2, 2, 64, 64], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    layer_case(be, prec, "conv 1x3 s1 SAME C128->64 b3 on 9x10", 3, 9, 10, 128,
               "\"type\": \"Convolution\", \"filter\": [1, 3, 128, 64], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    layer_case(be, prec, "conv 3x3 + batch_norm + relu C5->13", 3, 10, 10, 5,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 5, 13], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\"");
    // fully connected layers run on the convolution algorithms too (a 1x1 convolution) in "cuda"
    layer_case(be, prec, "fc 300->13 relu b5", 5, 1, 1, 300, "\"type\": \"InnerProduct\", \"num_outputs\": 13, \"activation_fn\": \"relu\"");
    layer_case(be, prec, "fc 5x5x13->1000 b3", 3, 5, 5, 13, "\"type\": \"InnerProduct\", \"num_outputs\": 1000, \"activation_fn\": null");
    layer_case(be, prec, "conv 3x3 s1 pad 1 C16->32 b3 (Winograd-able)", 3, 12, 10, 16,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 16, 32], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    layer_case(be, prec, "conv 3x3 s1 VALID C7->9 b1 (Winograd-able, odd)", 1, 11, 9, 7,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 7, 9], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
    layer_case(be, prec, "conv 9x9 s1 VALID C5->12 b2 (FFT-able)", 2, 24, 20, 5,
               "\"type\": \"Convolution\", \"filter\": [9, 9, 5, 12], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    layer_case(be, prec, "ECE408 conv1 b3 (7x7 1->4 on 86x86, relu)", 3, 86, 86, 1,
               "\"type\": \"Convolution\", \"filter\": [7, 7, 1, 4], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
    layer_case(be, prec, "ECE408 conv2 b5 (7x7 4->16 on 40x40, relu)", 5, 40, 40, 4,
               "\"type\": \"Convolution\", \"filter\": [7, 7, 4, 16], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
    layer_case(be, prec, "ECE408 conv2 b1 no relu", 1, 40, 40, 4,
               "\"type\": \"Convolution\", \"filter\": [7, 7, 4, 16], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    if (small_only) return;
    // no fused relu here: a relu mask flips where rounding moves y across 0, which says nothing of the conv
    layer_case(be, prec, "AlexNet conv2 b16 (5x5 64->192 pad 2)", 16, 27, 27, 64,
               "\"type\": \"Convolution\", \"filter\": [5, 5, 64, 192], \"padding\": [2, 2], \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    layer_case(be, prec, "VGG conv 3x3 256->256 b2 on 28x28", 2, 28, 28, 256,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 256, 256], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    layer_case(be, prec, "AlexNet conv1 b4 (11x11 s4 3->64 pad 2)", 4, 224, 224, 3,
               "\"type\": \"Convolution\", \"filter\": [11, 11, 3, 64], \"padding\": [2, 2], \"strides\": [1, 4, 4, 1], \"activation_fn\": null");
}

// Max and average pools: odd sizes, batch 1, padding that cuDNN cannot express (TF SAME with a
// larger trailing pad: the own kernels then run in cudnn and auto), and two GoogLeNet-like shapes;
// the max pools again on inputs with ties where the own kernels run (cuDNN may route a tie's
// gradient to another of the equal inputs).
static void pool_cases(const char *be, cb_precision prec) {
    static const struct { const char *label; int n, h, w, c; const char *body; bool max; } cases[] = {
        {"maxpool 3x3 s2 VALID", 2, 13, 15, 5, "\"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"", true},
        {"maxpool 3x3 s2 SAME (asymmetric)", 2, 12, 12, 3, "\"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"SAME\"", true},
        {"maxpool 3x3 s1 SAME", 1, 7, 9, 13, "\"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"", true},
        {"maxpool 3x3 s1 pad 1 b1 11x13 C7", 1, 11, 13, 7, "\"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": [1, 1]", true},
        {"maxpool 3x3 s2 pad 1 14x14 b2 C4", 2, 14, 14, 4, "\"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": [1, 1]", true},
        {"maxpool 2x2 s2 VALID 9x11 b3 C6", 3, 9, 11, 6, "\"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"", true},
        {"maxpool 2x2 s2 SAME 7x9 b1 (asymmetric)", 1, 7, 9, 5, "\"type\": \"Pooling\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"SAME\"", true},
        {"maxpool 5x3 s(2,1) SAME 11x10 C3", 2, 11, 10, 3, "\"type\": \"Pooling\", \"ksize\": [1, 5, 3, 1], \"strides\": [1, 2, 1, 1], \"padding\": \"SAME\"", true},
        {"maxpool 3x3 s2 SAME b4 C64 56x56 (GoogLeNet pool2)", 4, 56, 56, 64, "\"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"SAME\"", true},
        {"maxpool 3x3 s1 SAME b4 C48 28x28 (inception)", 4, 28, 28, 48, "\"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"", true},
        {"avgpool 3x3 s1 SAME (exclude pad)", 2, 8, 7, 5, "\"type\": \"AvgPool\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"SAME\"", false},
        {"avgpool 2x2 s2 SAME odd", 2, 9, 9, 3, "\"type\": \"AvgPool\", \"ksize\": [1, 2, 2, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"SAME\"", false},
        {"avgpool 3x3 s2 VALID b1 15x13", 1, 15, 13, 6, "\"type\": \"AvgPool\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"", false},
        {"avgpool 7x7 s1 VALID b3 C32 (global)", 3, 7, 7, 32, "\"type\": \"AvgPool\", \"ksize\": [1, 7, 7, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"VALID\"", false},
    };
    int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int j = 0; j < ncases; j++)
        if (!small_only || cases[j].n * cases[j].h * cases[j].w * cases[j].c < 100000)
            layer_case(be, prec, cases[j].label, cases[j].n, cases[j].h, cases[j].w, cases[j].c, cases[j].body);
    bool own = !strcmp(be, "cuda") || !strcmp(be, "cpu") || (!strcmp(be, "auto") && force_pool && !strcmp(force_pool, "own"));
    tie_inputs = true;
    for (int j = 0; own && j < ncases; j++)
        if (cases[j].max && (!small_only || cases[j].n * cases[j].h * cases[j].w * cases[j].c < 100000))
            layer_case(be, prec, cases[j].label, cases[j].n, cases[j].h, cases[j].w, cases[j].c, cases[j].body);
    tie_inputs = false;
}

#ifdef CB_HAVE_CUDA // (the GPU backends alone use it)
// auto's pooling forced to each path (layer_cases_rest runs it measured)
static void auto_pool_cases(void) {
    const char *force[] = {"own", "cudnn"};
    for (int k = 0; k < 2; k++) {
        setenv("CONVBENCH_AUTO_POOL", force[k], 1);
        force_pool = force[k];
        pool_cases("auto", CB_PREC_FP32);
    }
    force_pool = NULL;
    // a value that is neither: exec creation fails with a message that names the variable
    setenv("CONVBENCH_AUTO_POOL", "fastest", 1);
    cb_error err = {0};
    cb_net *net = cb_net_load_string("{\"name\": \"n\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [1, 4, 4, 1]},"
                                     " \"L\": {\"parents\": [\"data\"], \"type\": \"ReLU\"}}}",
                                     "env", &err);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "auto";
    cb_exec *g = net ? cb_exec_create(net, &o, &err) : NULL;
    check("auto CONVBENCH_AUTO_POOL=fastest is refused by name", !g && strstr(err.msg, "CONVBENCH_AUTO_POOL") ? 0 : 1, 0);
    cb_exec_destroy(g);
    unsetenv("CONVBENCH_AUTO_POOL");
    setenv("CONVBENCH_AUTO_GEMM", "fastest", 1);
    g = net ? cb_exec_create(net, &o, &err) : NULL;
    check("auto CONVBENCH_AUTO_GEMM=fastest is refused by name", !g && strstr(err.msg, "CONVBENCH_AUTO_GEMM") ? 0 : 1, 0);
    cb_exec_destroy(g);
    unsetenv("CONVBENCH_AUTO_GEMM");
    cb_net_free(net);
    unsetenv("CONVBENCH_AUTO_POOL");
}
#endif

// every other layer kind
static void layer_cases_rest(const char *be, cb_precision prec) {
    pool_cases(be, prec);
    layer_case(be, prec, "LRN size 5 C13", 2, 6, 7, 13, "\"type\": \"LRN\", \"size\": 5, \"alpha\": 0.0001, \"beta\": 0.75, \"k\": 2.0");
    layer_case(be, prec, "LRN size 3 alpha 0.5 C5", 1, 5, 5, 5, "\"type\": \"LRN\", \"size\": 3, \"alpha\": 0.5, \"beta\": 0.75, \"k\": 1.0");
    layer_case(be, prec, "BatchNorm C13", 4, 5, 6, 13, "\"type\": \"BatchNorm\", \"epsilon\": 0.001");
    layer_case(be, prec, "ReLU", 2, 5, 6, 13, "\"type\": \"ReLU\"");
    // every activation function (src/core/act.h), as a layer and fused after a convolution
    for (int ai = CB_ACT_RELU + 1; ai < CB_ACT_COUNT; ai++) {
        const char *fn = cb_act_name((cb_act)ai);
        char label[64], body[256];
        snprintf(label, sizeof label, "Activation %s", fn);
        snprintf(body, sizeof body, "\"type\": \"Activation\", \"fn\": \"%s\"", fn);
        layer_case(be, prec, label, 2, 5, 6, 13, body);
        snprintf(label, sizeof label, "conv 3x3 C5->7 %s", fn);
        snprintf(body, sizeof body, "\"type\": \"Convolution\", \"filter\": [3, 3, 5, 7], \"padding\": \"SAME\", "
                                    "\"strides\": [1, 1, 1, 1], \"activation_fn\": \"%s\"", fn);
        layer_case(be, prec, label, 2, 9, 8, 5, body);
        // 16 output channels: the bias and activation pass on 16-byte vectors
        snprintf(label, sizeof label, "conv 3x3 C8->16 %s (vectors)", fn);
        snprintf(body, sizeof body, "\"type\": \"Convolution\", \"filter\": [3, 3, 8, 16], \"padding\": \"SAME\", "
                                    "\"strides\": [1, 1, 1, 1], \"activation_fn\": \"%s\"", fn);
        layer_case(be, prec, label, 2, 6, 5, 8, body);
    }
    layer_case(be, prec, "Softmax 1000 b3", 3, 1, 1, 1000, "\"type\": \"Softmax\", \"num_classes\": 1000");
    layer_case(be, prec, "Dropout keep 0.5", 4, 16, 16, 13, "\"type\": \"Dropout\", \"dropout_keep_prob\": 0.5");
}

static void layer_cases(const char *be, cb_precision prec) {
    conv_cases(be, prec);
    layer_cases_rest(be, prec);
}

#ifdef CB_HAVE_CUDA
// every own convolution algorithm on the convolution cases, at its precision
// $CB_TEST_ALGOS (names, comma-separated) limits the own algorithms tested, for a quick run
static bool algo_selected(const char *name) {
    const char *sel = getenv("CB_TEST_ALGOS");
    size_t n = strlen(name);
    for (const char *p = sel; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == 0)) return true;
    return !sel || !*sel;
}

static void own_algo_cases(bool small) {
    for (int j = 0; cb_cuda_conv_algos[j]; j++) {
        if (!algo_selected(cb_cuda_conv_algos[j]->name)) continue;
        conv_algo = cb_cuda_conv_algos[j]->name;
        conv_cases("cuda", cb_cuda_conv_algos[j]->prec);
        (void)small;
    }
    conv_algo = NULL;
}

// Inference with a conv + ReLU followed by a VALID max pool of window = stride: every own algorithm
// with a "+pool" entry must run both as one kernel (the pool layer's algorithm then reads "in L")
// and give the reference's pool output.
static void pool_fusion_case(const cb_cuda_conv_algo *a, const char *label, int n, int h, int w, int c, const char *conv,
                             int pool) {
    char json[2048], name[160], what[256];
    snprintf(json, sizeof json,
             "{\"name\": \"fuse\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [%d, %d, %d, %d]},"
             " \"L\": {\"parents\": [\"data\"], \"type\": \"Convolution\", %s, \"activation_fn\": \"relu\"},"
             " \"P\": {\"parents\": [\"L\"], \"type\": \"Pooling\", \"ksize\": [1, %d, %d, 1], \"strides\": [1, %d, %d, 1], \"padding\": \"VALID\"}}}",
             n, h, w, c, conv, pool, pool, pool, pool);
    snprintf(name, sizeof name, "cuda:%s %s %s", a->name, prec_name(a->prec), label);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, label, &err);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.precision = a->prec;
    o.seed = rng_state | 1;
    o.backend = "cuda";
    o.conv_algo = a->name;
    o.train = false;
    cb_exec *g = net ? cb_exec_create(net, &o, &err) : NULL;
    o.backend = "ref";
    o.conv_algo = NULL;
    o.precision = CB_PREC_FP32;
    cb_exec *r = g ? cb_exec_create(net, &o, &err) : NULL;
    if (!g || !r) {
        printf("FAIL %s: %s\n", name, err.msg);
        failed++;
    } else {
        size_t nin = (size_t)cb_shape_count(net->layers[0].out), nout = (size_t)cb_shape_count(net->layers[2].out);
        float *x = malloc(nin * 4);
        for (size_t i = 0; i < nin; i++) x[i] = urand();
        cb_exec_set_input(g, x, NULL);
        cb_exec_set_input(r, x, NULL);
        cb_exec_forward(g, false, NULL);
        cb_exec_forward(r, false, NULL);
        float *yg = download(g, g->lb[2].y, nout), *yr = download(r, r->lb[2].y, nout);
        bool fused = (cb_exec_choice(g, 2, CB_PHASE_FORWARD)->flags & CB_CHOICE_IN_FUSED) != 0;
        snprintf(what, sizeof what, "%s conv+relu+maxpool %d [%s]%s", name, pool, g->lb[1].algo[0], fused ? "" : " NOT FUSED");
        check(what, fused ? nerr(yg, yr, nout) : INFINITY, tol_for("cuda", a->prec));
        free(x), free(yg), free(yr);
    }
    cb_exec_destroy(g);
    cb_exec_destroy(r);
    cb_net_free(net);
}

static void pool_fusion_cases(void) {
    for (int j = 0; cb_cuda_conv_algos[j]; j++) {
        const cb_cuda_conv_algo *a = cb_cuda_conv_algos[j];
        if (!a->forward_relu_maxpool) continue;
        pool_fusion_case(a, "ECE408 conv1 b3 + maxpool 2", 3, 86, 86, 1, "\"filter\": [7, 7, 1, 4], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1]", 2);
        pool_fusion_case(a, "ECE408 conv2 b5 + maxpool 4", 5, 40, 40, 4, "\"filter\": [7, 7, 4, 16], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1]", 4);
        pool_fusion_case(a, "5x5 SAME C3->6 b2 on 23x19 + maxpool 2 (odd)", 2, 23, 19, 3, "\"filter\": [5, 5, 3, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1]", 2);
        pool_fusion_case(a, "3x3 VALID C2->5 b1 on 18x21 + maxpool 4 (odd)", 1, 18, 21, 2, "\"filter\": [3, 3, 2, 5], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1]", 4);
    }
}
#endif

static const char *small_net =
    "{\"name\": \"small\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [4, 23, 23, 3]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [5, 5, 3, 13], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\"},"
    "\"n1\": {\"parents\": [\"c1\"], \"type\": \"LRN\", \"size\": 5, \"alpha\": 0.0001, \"beta\": 0.75, \"k\": 2.0},"
    "\"p1\": {\"parents\": [\"n1\"], \"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"},"
    "\"a\": {\"parents\": [\"p1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 13, 8], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\"},"
    "\"b\": {\"parents\": [\"p1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 13, 8], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"cat\": {\"parents\": [\"a\", \"b\"], \"type\": \"Concatenate\", \"dim\": 3},"
    "\"sum\": {\"parents\": [\"a\", \"b\"], \"type\": \"Elementwise\", \"operation\": \"sum\", \"activation_fn\": null},"
    "\"c2\": {\"parents\": [\"sum\"], \"type\": \"Convolution\", \"filter\": [3, 3, 8, 16], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"cat2\": {\"parents\": [\"cat\", \"c2\"], \"type\": \"Concatenate\", \"dim\": 3},"
    "\"gp\": {\"parents\": [\"cat2\"], \"type\": \"AvgPool\", \"ksize\": [1, 5, 5, 1], \"strides\": [1, 1, 1, 1], \"padding\": \"VALID\"},"
    "\"fc\": {\"parents\": [\"gp\"], \"type\": \"InnerProduct\", \"num_outputs\": 10, \"activation_fn\": null},"
    "\"softmax\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 10}}}";

// the same without batch norm and LRN (which cuDNN may refuse in NHWC or bf16 storage) and with an
// FC layer after a 2x2 input (under NHWC its weight columns are permuted)
static const char *small_nobn_net =
    "{\"name\": \"small-nobn\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [4, 23, 23, 3]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [5, 5, 3, 13], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\"},"
    "\"p1\": {\"parents\": [\"c1\"], \"type\": \"Pooling\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"},"
    "\"a\": {\"parents\": [\"p1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 13, 8], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"b\": {\"parents\": [\"p1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 13, 8], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"cat\": {\"parents\": [\"a\", \"b\"], \"type\": \"Concatenate\", \"dim\": 3},"
    "\"sum\": {\"parents\": [\"a\", \"b\"], \"type\": \"Elementwise\", \"operation\": \"sum\", \"activation_fn\": null},"
    "\"c2\": {\"parents\": [\"sum\"], \"type\": \"Convolution\", \"filter\": [3, 3, 8, 16], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"cat2\": {\"parents\": [\"cat\", \"c2\"], \"type\": \"Concatenate\", \"dim\": 3},"
    "\"gp\": {\"parents\": [\"cat2\"], \"type\": \"AvgPool\", \"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], \"padding\": \"VALID\"},"
    "\"fc\": {\"parents\": [\"gp\"], \"type\": \"InnerProduct\", \"num_outputs\": 10, \"activation_fn\": null},"
    "\"softmax\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 10}}}";

// two residual blocks, one with an identity shortcut, one projected and strided, batch norm and
// ReLU after each sum: the gradients the engine routes through sums (one input takes the sum's
// buffer, a convolution adds its input gradient into one already there) in every storage
static const char *small_res_net =
    "{\"name\": \"small-res\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [3, 12, 11, 5]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 5, 12], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"r1a\": {\"parents\": [\"c1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 12, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"r1b\": {\"parents\": [\"r1a\"], \"type\": \"Convolution\", \"filter\": [3, 3, 6, 12], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"s1\": {\"parents\": [\"r1b\", \"c1\"], \"type\": \"Elementwise\", \"operation\": \"sum\", \"activation_fn\": \"relu\"},"
    "\"r2a\": {\"parents\": [\"s1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 12, 7], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"r2b\": {\"parents\": [\"r2a\"], \"type\": \"Convolution\", \"filter\": [3, 3, 7, 16], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"sc2\": {\"parents\": [\"s1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 12, 16], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": null, \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"s2\": {\"parents\": [\"r2b\", \"sc2\"], \"type\": \"Elementwise\", \"operation\": \"sum\", \"activation_fn\": \"relu\"},"
    "\"gp\": {\"parents\": [\"s2\"], \"type\": \"GlobalAvgPool\"},"
    "\"fc\": {\"parents\": [\"gp\"], \"type\": \"InnerProduct\", \"num_outputs\": 10, \"activation_fn\": null},"
    "\"softmax\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 10}}}";

enum { SMALL_NOBN, SMALL_BN, SMALL_RES }; // network_case_of's nets (true / false: the first two)
// Where rounding moved a ReLU's pre-activation across 0 (the GPU's output > 0 and the reference's
// not, or the reverse), the reference's gradient is that of another function: its mask passes
// what the GPU's stops, or the reverse, and every gradient upstream of the layer moves by far more than the precision's tolerance (the SE net in
// bf16 NHWC, seed 11006429852255896803: 7 flips put dse 0.31 off, the same on every path auto
// and cudnn can take; 6e-3 once adopted: 2026-11-27). Both are right for their own forward pass.
// So, after the forward passes and before the backward ones, the reference adopts the GPU's
// outputs of each ReLU layer with a flip: the gradients are then taken at the same activation
// pattern, and what differs is rounding (the adopted outputs differ from its own by the
// storage's rounding, and by the flipped elements, which are near 0); the layers without a flip
// keep their own outputs. Returns the flips (the first layer with one in *at).
// A flip that rounding explains is near 0 on both sides: the side that passed holds at most a
// quarter of the layer's RMS output. One larger is no rounding (a wrong sign, a wrong value): its
// layer is not adopted, and *large counts it (adopt_relu_masks_checked fails on any).
// A layer whose output the GPU's plan does not keep to its backward (cb_exec_output_kept: the max
// pool after it took its ReLU over, relu_by_pool) is passed over: its bytes served later layers,
// and its mask is the pool's (a flip matters there only at a window's maximum). One whose ReLU the
// concatenation after it took over (relu_by_concat) is read from that concatenation's output, whose
// slice holds its values and is its mask.
static float *concat_slice_of(cb_exec *g, int i) {
    const cb_net *net = g->net;
    int m = -1;
    for (int j = i + 1; j < net->nlayers && m < 0; j++)
        for (int k = 0; k < net->layers[j].nparents; k++)
            if (net->layers[j].parents[k] == i) m = j;
    const cb_layer *M = &net->layers[m], *L = &net->layers[i];
    int64_t off = 0, hw = L->out.h * L->out.w;
    for (int k = 0; M->parents[k] != i; k++) off += net->layers[M->parents[k]].out.c;
    float *all = download_act(g, m, g->lb[m].y), *a = malloc((size_t)cb_shape_count(L->out) * 4 + 4);
    for (int64_t b = 0; b < L->out.n; b++)
        memcpy(a + b * L->out.c * hw, all + (b * M->out.c + off) * hw, (size_t)(L->out.c * hw) * 4);
    free(all);
    return a;
}
static int adopt_relu_masks_of(cb_exec *g, cb_exec *r, int *at, size_t *large_out) {
    int flips = 0;
    size_t large = 0;
    *at = -1;
    for (int i = 1; i < g->net->nlayers; i++) {
        const cb_layer *L = &g->net->layers[i];
        bool by_concat = g->lb[i].relu_by_concat;
        if ((L->act != CB_ACT_RELU && L->act != CB_ACT_RELU6) || (!cb_exec_output_kept(g, i) && !by_concat)) continue;
        size_t n = (size_t)cb_shape_count(L->out), f = 0, big = 0;
        float *a = by_concat ? concat_slice_of(g, i) : download_act(g, i, g->lb[i].y), *b = download_act(r, i, r->lb[i].y);
        double ss = 0;
        for (size_t j = 0; j < n; j++) ss += (double)b[j] * b[j];
        double lim = 0.25 * sqrt(ss / (double)n);
        for (size_t j = 0; j < n; j++)
            if ((a[j] > 0) != (b[j] > 0)) f++, big += fmax(a[j], b[j]) > lim;
        if (f && !big) cb_exec_act_upload(r, i, r->lb[i].y, a); // (only where a mask differs, and rounding explains it)
        if (f && *at < 0) *at = i;
        flips += (int)f, large += big;
        free(a), free(b);
    }
    *large_out = large;
    return flips;
}
static int adopt_relu_masks(cb_exec *g, cb_exec *r, int *at, const char *what) {
    size_t large;
    int flips = adopt_relu_masks_of(g, r, at, &large);
    char label[320];
    snprintf(label, sizeof label, "%.250s: ReLU mask flips far from 0 (not rounding)", what);
    check(label, (double)large, 0);
    return flips;
}

// the guard itself: a ReLU output set far from 0 where the reference's is 0 (what a wrong sign
// would give) is counted and not adopted; one set just above 0 is adopted (on a CPU backend)
static void adopt_guard_case(const char *backend) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(small_nobn_net, "small-nobn", &err);
    cb_exec *g, *r;
    if (!net || !exec_pair(net, backend, CB_PREC_FP32, "adopt guard", &g, &r)) return;
    cb_exec_forward(g, true, NULL);
    cb_exec_forward(r, true, NULL);
    int li = -1;
    for (int i = 1; i < net->nlayers && li < 0; i++)
        if (net->layers[i].act == CB_ACT_RELU && cb_exec_output_kept(g, i)) li = i; // (c1's: its pool took it over)
    size_t n = (size_t)cb_shape_count(net->layers[li].out), z = 0, pos = 0;
    float *y = download_act(r, li, r->lb[li].y);
    double ss = 0;
    for (size_t j = 0; j < n; j++) ss += (double)y[j] * y[j];
    while (z < n && y[z] > 0) z++; // an element the reference's ReLU stopped
    while (pos < n && !(y[pos] > 0)) pos++;
    float *a = download_act(g, li, g->lb[li].y);
    bool ok_setup = z < n && pos < n;
    int at;
    size_t large = 0, small_large = 1;
    if (ok_setup) {
        a[z] = (float)sqrt(ss / (double)n); // far: the RMS itself
        cb_exec_act_upload(g, li, g->lb[li].y, a);
        adopt_relu_masks_of(g, r, &at, &large);
        a[z] = (float)(1e-3 * sqrt(ss / (double)n)); // near 0: rounding's size
        cb_exec_act_upload(g, li, g->lb[li].y, a);
        adopt_relu_masks_of(g, r, &at, &small_large);
    }
    float *b = download_act(r, li, r->lb[li].y);
    char what[160];
    snprintf(what, sizeof what, "%s adopt_relu_masks: a far flip counted (%zu), a near one adopted (%zu, %g)", backend, large, small_large,
             ok_setup ? b[z] : -1.0);
    check(what, ok_setup && large == 1 && small_large == 0 && b[z] == a[z] ? 0 : 1, 0);
    free(y), free(a), free(b);
    cb_exec_destroy(g);
    cb_exec_destroy(r);
    cb_net_free(net);
}

// fullpass of a small net: loss and the gradients of a few layers' parameters; which: SMALL_BN
// small_net (in another storage than fp32 NCHW its batch norm or LRN may be declined: a skip),
// SMALL_NOBN small_nobn_net, SMALL_RES small_res_net (batch norm: may be declined as well)
static void network_case_of(const char *backend, cb_precision prec, int which) {
    cb_error err = {0};
    static const char *const labels[] = {"-nobn", "", "-res"};
    const char *json = which == SMALL_RES ? small_res_net : which == SMALL_BN ? small_net : small_nobn_net;
    bool with_bn = which != SMALL_NOBN;
    cb_net *net = cb_net_load_string(json, which == SMALL_RES ? "small-res" : which == SMALL_BN ? "small" : "small-nobn", &err);
    char what[256];
    if (!net) {
        printf("FAIL network: %s\n", err.msg);
        failed++;
        return;
    }
    cb_exec *g, *r;
    snprintf(what, sizeof what, "network %s %s%s%s", backend, prec_name(prec), which == SMALL_RES ? " (residual)" : with_bn ? "" : " (no batch norm)",
             no_data_grad ? " (no data grad)" : "");
    may_decline = with_bn && strcmp(backend, "cuda") && strcmp(backend, "cpu") && (test_layout != CB_LAYOUT_NCHW || prec == CB_PREC_BF16);
    bool ok = exec_pair(net, backend, prec, what, &g, &r);
    may_decline = false;
    if (!ok) return;
    cb_exec *ex[2] = {g, r};
    double loss[2];
    for (int k = 0; k < 2; k++) {
        cb_exec_forward(ex[k], true, NULL);
        cb_exec_criterion_forward(ex[k], &loss[k], NULL);
    }
    // A ReLU mask that differs from the reference's: in tf32 and bf16 most of these inputs have a
    // few (1-12 in 2026-11-25's call 9: redrawing the inputs does not avoid them); the rare one
    // that moved a gradient past the tolerance was the known flake (seed 5548941647073566923 on
    // the H200). The reference takes its backward at the GPU's masks (adopt_relu_masks), and a
    // note names them.
    int at, flips = adopt_relu_masks(g, r, &at, what);
    if (flips)
        printf("note %s %s small%s net: %d ReLU mask flips from layer %s on (rounding moved outputs across 0): the reference's backward at "
               "the GPU's masks\n", backend, prec_name(prec), labels[which], flips, net->layers[at].name);
    for (int k = 0; k < 2; k++) {
        cb_exec_criterion_backward(ex[k], NULL);
        cb_exec_backward(ex[k], NULL);
    }
    // errors compound through 8 layers: 10x a layer's tolerance; on bf16 storage (cudnn, auto: every
    // activation and gradient rounded to 8 bits between layers) 0.25, for the first conv's weight
    // gradient (a sum with much cancellation at the end of the chain): 0.055 NCHW and 0.11-0.16
    // NHWC measured on the H200, where every other gradient was within 0.025. tf32's gradients: up
    // to 0.095 (the own kernels' dc1, 0.063 da; cuDNN NHWC small-nobn dc2 0.061; H200 2026-11-25,
    // with ReLU mask flips), so 0.15 for them; the loss keeps 10x a layer's tolerance
    double tol = prec == CB_PREC_BF16 && strcmp(backend, "cuda") ? 0.25 : tol_for(backend, prec) * 10;
    double gtol = prec == CB_PREC_TF32 ? 0.15 : tol;
    const char *ndg = no_data_grad ? " (no data grad)" : "";
    snprintf(what, sizeof what, "%s %s small%s net%s loss %.6f vs %.6f", backend, prec_name(prec), labels[which], ndg,
             loss[0], loss[1]);
    check(what, fabs(loss[0] - loss[1]) / fabs(loss[1]), tol);
    // small-res in tf32 and bf16: every gradient but the FC layer's reaches its layer through batch
    // norms whose backward leaves sums with much cancellation (bn_shift is such a sum), which
    // amplifies the inputs' rounding some 100x. Measured on the H200 against the fp32 reference:
    // bf16 0.06-0.33 (010a2e8, 38d6601), tf32 on the own kernels 0.014-0.15 (38d6601; cuDNN's tf32
    // 2e-4: its algorithms for these small shapes compute in fp32), the same with every sum's
    // gradient copied and with the sums unfused. So in tf32 and bf16 small-res checks its loss
    // and the FC layer; every layer in fp32 (1e-4), where the routing and fusion are exact.
    const char *names_small[] = {"c1", "a", "b", "c2", "fc"}, *names_res[] = {"c1", "r1a", "r1b", "r2a", "sc2", "fc"};
    const char *const *names = which == SMALL_RES ? names_res : names_small;
    int first = which == SMALL_RES && prec != CB_PREC_FP32 ? 5 : 0;
    for (int j = first; j < (which == SMALL_RES ? 6 : 5); j++) {
        int li = cb_net_find(net, names[j]);
        cb_param pg[6], pr[6];
        int np = cb_exec_params(g, li, pg, 6);
        cb_exec_params(r, li, pr, 6);
        for (int q = 0; q < np; q++) {
            if (!pg[q].grad || (net->layers[li].bn && !strcmp(pg[q].what, "bias"))) continue;
            float *a = download(g, pg[q].grad, (size_t)pg[q].count), *b = download(r, pr[q].grad, (size_t)pr[q].count);
            bool bias = !strcmp(pg[q].what, "bias");
            double plain = nerr(a, b, (size_t)pg[q].count);
            char rel[40] = "";
            if (bias) snprintf(rel, sizeof rel, " (of itself %.1e)", plain);
            snprintf(what, sizeof what, "%s %s small%s net%s d%s/%s%s", backend, prec_name(prec), labels[which], ndg, names[j],
                     pg[q].what, rel);
            check(what, bias ? nerr_bias(a, b, (size_t)pg[q].count, r, li, prec) : plain, gtol);
            free(a), free(b);
        }
    }
    cb_exec_destroy(g);
    cb_exec_destroy(r);
    cb_net_free(net);
}
#ifdef CB_HAVE_CUDA // (the GPU backends alone use it)
// CB_FUSION_BN_ADD on auto with the own batch norm forced: each residual block's last batch norm
// computes the sum (with its ReLU) in its pass. The sums must show as fused; inference's output
// (running statistics, every transient output in the arena) and a training step's loss and
// gradients (network_case_of) must match the float64-checked reference.
static void bn_add_cases(void) {
    setenv("CONVBENCH_AUTO_BN", "own", 1);
    cb_layout lays[] = {CB_LAYOUT_NCHW, CB_LAYOUT_NHWC};
    cb_precision precs[] = {CB_PREC_FP32, CB_PREC_BF16};
    for (int li = 0; li < 2; li++)
        for (int q = 0; q < 2; q++) {
            test_layout = lays[li];
            char what[256];
            snprintf(what, sizeof what, "auto %s%s small-res bn+add inference", prec_name(precs[q]), li ? "" : " nchw"); // (prec_name names nhwc)
            cb_error err = {0};
            cb_net *net = cb_net_load_string(small_res_net, "small-res", &err);
            cb_exec_opts o;
            cb_exec_opts_default(&o);
            o.train = false, o.backend = "auto", o.precision = precs[q], o.layout = lays[li], o.seed = rng_state | 1;
            cb_exec *g = net ? cb_exec_create(net, &o, &err) : NULL;
            o.backend = "ref", o.precision = CB_PREC_FP32, o.layout = CB_LAYOUT_NCHW;
            cb_exec *r = g ? cb_exec_create(net, &o, &err) : NULL;
            if (!g || !r) {
                printf("FAIL %s: %s\n", what, err.msg);
                failed++;
            } else {
                int s1 = cb_net_find(net, "s1"), s2 = cb_net_find(net, "s2"), last = net->nlayers - 1;
                bool fused = (cb_exec_choice(g, s1, CB_PHASE_FORWARD)->flags & CB_CHOICE_IN_FUSED) &&
                             (cb_exec_choice(g, s2, CB_PHASE_FORWARD)->flags & CB_CHOICE_IN_FUSED);
                size_t nin = (size_t)cb_shape_count(net->layers[0].out), nout = (size_t)cb_shape_count(net->layers[last].out);
                float *x = malloc(nin * 4);
                for (size_t i = 0; i < nin; i++) x[i] = urand();
                cb_exec_set_input(g, x, NULL), cb_exec_set_input(r, x, NULL);
                for (int rep = 0; rep < 2; rep++) cb_exec_forward(g, false, NULL); // twice: the arena's leftovers
                cb_exec_forward(r, false, NULL);
                float *yg = malloc(nout * 4), *yr = malloc(nout * 4);
                cb_exec_get_output(g, yg, nout), cb_exec_get_output(r, yr, nout);
                if (!fused) strcat(what, " NOT FUSED");
                check(what, fused ? nerr(yg, yr, nout) : INFINITY, precs[q] == CB_PREC_BF16 ? 0.05 : 1e-4);
                free(x), free(yg), free(yr);
            }
            cb_exec_destroy(g);
            cb_exec_destroy(r);
            cb_net_free(net);
            network_case_of("auto", precs[q], SMALL_RES);
            // in training both sums' ReLU gradients are taken by their heads' batch norms
            // (cb_fmt_bn_backward_relu_mask; the step above checks the gradients), and not with
            // CONVBENCH_FUSE_EPILOGUE=off (the separate pass)
            for (int off = 0; off < 2; off++) {
                if (off) setenv("CONVBENCH_FUSE_EPILOGUE", "off", 1);
                net = cb_net_load_string(small_res_net, "small-res", &err);
                o.train = true, o.backend = "auto", o.precision = precs[q], o.layout = lays[li];
                g = net ? cb_exec_create(net, &o, &err) : NULL;
                int s1 = net ? cb_net_find(net, "s1") : -1, s2 = net ? cb_net_find(net, "s2") : -1;
                bool in_bn = g && cb_dnn_layer(g, s1)->relu_in_bn && cb_dnn_layer(g, s2)->relu_in_bn;
                snprintf(what, sizeof what, "auto %s%s small-res training: the sums' ReLU gradients %s", prec_name(precs[q]),
                         li ? "" : " nchw", off ? "in passes of their own with FUSE_EPILOGUE=off" : "in the batch norms' passes");
                check(what, g && in_bn == !off ? 0 : 1, 0);
                cb_exec_destroy(g);
                cb_net_free(net);
                unsetenv("CONVBENCH_FUSE_EPILOGUE");
            }
        }
    test_layout = CB_LAYOUT_NCHW;
    unsetenv("CONVBENCH_AUTO_BN");
}
#endif

static void network_case(const char *backend, cb_precision prec) {
    network_case_of(backend, prec, SMALL_BN);
    network_case_of(backend, prec, SMALL_RES);
}

#ifdef CB_HAVE_CUDA
// cb_fmt_pool_forward / _backward (src/storage/pool_fmt.cu) called directly in the four storages
// (fp32 NCHW is pool.cu) on inputs converted by cb_fmt_convert, against the reference loops on
// the same values (rounded to bf16 for the bf16 storages, to nearest even as the conversion):
// max outputs and the saved window offsets exactly, average outputs and input gradients within
// 1e-6 (fp32, normalised) or half a bf16 step per element (bf16: reported as the count of elements
// off). C multiples of 8 take the 16-byte paths, the other C the scalar one.
typedef struct fmt_pool_case {
    const char *label;
    int n, c, h, w, r, s, sh, sw, pt, pb, pl, pr, avg; // pads: top, bottom, left, right
} fmt_pool_case;

static float bf16_round(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    u += 0x7fffu + ((u >> 16) & 1);
    u &= 0xffff0000u;
    memcpy(&v, &u, 4);
    return v;
}

// elements further than half a bf16 step (2^-9 relative, doubled for slack) plus abs from ref
static double bf16_bad(const float *a, const float *ref, size_t n, double abs) {
    double bad = 0;
    for (size_t i = 0; i < n; i++) bad += !(fabs((double)a[i] - ref[i]) <= ldexp(fabs(ref[i]), -8) + abs);
    return bad;
}

// fp32 NCHW host a (n, c, h, w) -> device storage dst (in fmt), through a device fp32 staging buffer
static void fmt_upload(const float *a, int n, int c, int h, int w, int fmt, float *stage, void *dst) {
    size_t cnt = (size_t)n * c * h * w;
    cudaMemcpy(stage, a, cnt * 4, cudaMemcpyHostToDevice);
    cb_fmt_convert(n, c, h, w, stage, 0, dst, fmt);
}
static void fmt_download(float *a, int n, int c, int h, int w, int fmt, const void *src, float *stage) {
    size_t cnt = (size_t)n * c * h * w;
    cb_fmt_convert(n, c, h, w, src, fmt, stage, 0);
    cudaMemcpy(a, stage, cnt * 4, cudaMemcpyDeviceToHost);
}

static void fmt_pool_case_run(const fmt_pool_case *k) {
    static const char *fmt_names[4] = {"fp32 nchw", "fp32 nhwc", "bf16 nchw", "bf16 nhwc"};
    cb_pool_params p = {k->n, k->c, k->h, k->w, k->r, k->s, (k->h + k->pt + k->pb - k->r) / k->sh + 1,
                        (k->w + k->pl + k->pr - k->s) / k->sw + 1, k->sh, k->sw, k->pt, k->pl, k->avg, 0};
    size_t nx = (size_t)p.n * p.c * p.h * p.w, ny = (size_t)p.n * p.c * p.p * p.q;
    bool byte = p.r * p.s <= 255;
    float *x = malloc(nx * 4), *dy = malloc(ny * 4), *yr = malloc(ny * 4), *dxr = malloc(nx * 4);
    float *y = malloc(ny * 4), *dx = malloc(nx * 4);
    int32_t *amr = malloc(ny * 4);
    uint8_t *am = malloc(ny * 4);
    void *dxs = NULL, *dys = NULL, *dxd = NULL, *dyd = NULL, *amd = NULL; // storages, fp32 staging, argmax
    bool ok = x && dy && yr && dxr && y && dx && amr && am && cudaMalloc(&dxs, nx * 4) == cudaSuccess &&
              cudaMalloc(&dys, ny * 4) == cudaSuccess && cudaMalloc(&dxd, nx * 4) == cudaSuccess &&
              cudaMalloc(&dyd, ny * 4) == cudaSuccess && cudaMalloc(&amd, ny * 4) == cudaSuccess;
    if (!ok) {
        printf("FAIL fmt pool %s: out of memory\n", k->label);
        failed++;
        goto done;
    }
    // mode 1: ties; mode 2 (max): relu_mask on a ReLU's output (half its values 0, whole windows
    // of zeros), against the reference with no maximum where it is <= 0 and dx masked by x > 0
    for (int fmt = 0; fmt < 4; fmt++)
        for (int mode = 0; mode < (k->avg ? 2 : 3); mode++) {
            bool bf = fmt & CB_FMT_BF16, ties = mode == 1, mask = mode == 2;
            char name[256];
            snprintf(name, sizeof name, "fmt pool %s %s%s", fmt_names[fmt], k->label, ties ? " (ties)" : mask ? " (relu mask)" : "");
            for (size_t i = 0; i < nx; i++) {
                x[i] = ties ? (float)((int)((urand() + 1.f) * 2.5f) - 2) * 0.5f : urand();
                if (mask && x[i] < 0) x[i] = 0.f;
                if (bf) x[i] = bf16_round(x[i]);
            }
            for (size_t i = 0; i < ny; i++) dy[i] = bf ? bf16_round(urand()) : urand();
            p.relu_mask = mask;
            cb_ref_pool_forward(&p, x, yr, amr);
            for (size_t o = 0; mask && o < ny; o++)
                if (!(yr[o] > 0)) amr[o] = -1;
            cb_ref_pool_backward(&p, x, dy, k->avg ? NULL : amr, dxr);
            for (size_t i = 0; mask && i < nx; i++)
                if (!(x[i] > 0)) dxr[i] = 0.f;

            fmt_upload(x, p.n, p.c, p.h, p.w, fmt, dxd, dxs);
            cudaMemset(dys, 0xff, ny * 4); // NaN in fp32 and bf16: an output left unwritten fails
            cudaMemset(amd, 0x7f, ny * 4);
            cb_fmt_pool_forward(&p, fmt, dxs, dys, k->avg ? NULL : amd);
            fmt_download(y, p.n, p.c, p.p, p.q, fmt, dys, dyd);
            cudaMemcpy(am, amd, ny * 4, cudaMemcpyDeviceToHost);
            char what[300];
            snprintf(what, sizeof what, "%s forward%s", name, bf && k->avg ? " (elements off)" : "");
            if (!k->avg) {
                double bad = 0;
                for (size_t i = 0; i < ny; i++) bad += !(y[i] == yr[i]);
                check(what, bad, 0);
            } else {
                check(what, bf ? bf16_bad(y, yr, ny, 1e-6) : nerr(y, yr, ny), bf ? 0 : 1e-6);
            }
            if (!k->avg) { // the saved window offset, at the output's flat index in the storage, names the reference's maximum
                double bad = 0;
                size_t o = 0;
                for (int n = 0; n < p.n; n++)
                    for (int c = 0; c < p.c; c++)
                        for (int oh = 0; oh < p.p; oh++)
                            for (int ow = 0; ow < p.q; ow++, o++) {
                                size_t so = fmt & CB_FMT_NHWC ? (((size_t)n * p.p + oh) * p.q + ow) * p.c + c : o;
                                int off = byte ? am[so] : ((const int32_t *)am)[so];
                                if (byte && off == 255) off = -1;
                                int got = off < 0 ? -1 : (oh * p.stride_h - p.pad_top + off / p.s) * p.w + (ow * p.stride_w - p.pad_left + off % p.s);
                                bad += got != amr[o];
                            }
                snprintf(what, sizeof what, "%s argmax", name);
                check(what, bad, 0);
            }
            fmt_upload(dy, p.n, p.c, p.p, p.q, fmt, dyd, dys);
            cudaMemset(dxs, 0xff, nx * 4);
            cb_fmt_pool_backward(&p, fmt, dys, k->avg ? NULL : amd, dxs);
            fmt_download(dx, p.n, p.c, p.h, p.w, fmt, dxs, dxd);
            cudaError_t rc = cudaDeviceSynchronize();
            snprintf(what, sizeof what, "%s backward%s", name, bf ? " (elements off)" : "");
            if (rc != cudaSuccess) {
                printf("FAIL %s: %s\n", what, cudaGetErrorString(rc));
                failed++;
                goto done;
            }
            check(what, bf ? bf16_bad(dx, dxr, nx, 1e-5) : nerr(dx, dxr, nx), bf ? 0 : 1e-6);
        }
done:
    free(x), free(dy), free(yr), free(dxr), free(y), free(dx), free(amr), free(am);
    cudaFree(dxs), cudaFree(dys), cudaFree(dxd), cudaFree(dyd), cudaFree(amd);
}

static void fmt_pool_cases(void) {
    static const fmt_pool_case cases[] = {
        {"max 2x2 s2 b2 C64 224x224 (VGG pool1)", 2, 64, 224, 224, 2, 2, 2, 2, 0, 0, 0, 0, 0},
        {"max 3x3 s2 SAME b4 C64 56x56 (GoogLeNet pool2)", 4, 64, 56, 56, 3, 3, 2, 2, 0, 1, 0, 1, 0},
        {"max 3x3 s1 SAME b2 C48 28x28", 2, 48, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 0},
        {"max 3x3 s2 VALID b2 C3 13x15", 2, 3, 13, 15, 3, 3, 2, 2, 0, 0, 0, 0, 0},
        {"max 3x2 s(1,3) pads 2/0 1/1 C5 8x10", 2, 5, 8, 10, 3, 2, 1, 3, 2, 0, 1, 1, 0},
        {"max 3x3 s2 pad 1 b1 C13 15x15", 1, 13, 15, 15, 3, 3, 2, 2, 1, 1, 1, 1, 0},
        {"max 2x2 s2 pad top 2 C8 (window all pad)", 1, 8, 5, 6, 2, 2, 2, 2, 2, 0, 0, 0, 0},
        {"max 17x17 s3 b2 C16 20x21 (int32 offsets)", 2, 16, 20, 21, 17, 17, 3, 3, 0, 0, 0, 0, 0},
        {"avg 3x3 s1 SAME b2 C16 14x14", 2, 16, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1},
        {"avg 2x2 s2 SAME C5 9x9", 2, 5, 9, 9, 2, 2, 2, 2, 0, 1, 0, 1, 1},
        {"avg 7x7 s1 VALID b3 C32 (global)", 3, 32, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 1},
        {"avg 2x2 s2 pad top 2 C8 (window all pad)", 1, 8, 5, 6, 2, 2, 2, 2, 2, 0, 0, 0, 1},
        {"max 3x3 s1 SAME b3 C37 36x36 (odd C)", 3, 37, 36, 36, 3, 3, 1, 1, 1, 1, 1, 1, 0},
        {"max 3x3 s2 pads 3/0 1/2 C16 (window all pad)", 2, 16, 6, 7, 3, 3, 2, 2, 3, 0, 1, 2, 0},
        {"avg 3x3 s1 pads 3/1 2/2 C3 (window all pad)", 1, 3, 5, 6, 3, 3, 1, 1, 3, 1, 2, 2, 1},
        {"max 2x2 s1 VALID b2 C24 9x8", 2, 24, 9, 8, 2, 2, 1, 1, 0, 0, 0, 0, 0},
        // C past 32 channel groups (C 322 at V 1, C 264 at V 4 and 8), windows at the edges, several
        // images; square windows covered by 2 x 2 and 3 x 3 windows (3x3 and 5x5 at stride 2)
        {"max 3x3 s1 SAME b2 C322 36x36", 2, 322, 36, 36, 3, 3, 1, 1, 1, 1, 1, 1, 0},
        {"avg 3x3 s1 SAME b2 C40 21x37", 2, 40, 21, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1},
        {"max 5x3 s(2,1) pads 2/2 1/1 C33 17x19", 2, 33, 17, 19, 5, 3, 2, 1, 2, 2, 1, 1, 0},
        {"max 17x17 s3 C40 20x21 (int32 offsets)", 1, 40, 20, 21, 17, 17, 3, 3, 0, 0, 0, 0, 0},
        {"max 3x3 s2 pad 1 b3 C264 15x17", 3, 264, 15, 17, 3, 3, 2, 2, 1, 1, 1, 1, 0},
        {"avg 3x3 s2 pad 1 b2 C264 9x11", 2, 264, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1},
        {"max 5x5 s2 pads 2/1 2/1 b2 C35 13x12", 2, 35, 13, 12, 5, 5, 2, 2, 2, 1, 2, 1, 0},
        {"avg 5x5 s2 VALID b2 C8 11x13", 2, 8, 11, 13, 5, 5, 2, 2, 0, 0, 0, 0, 1},
    };
    // the NHWC kernels each setting takes (every case runs under each): a 2x2 or 3x3 window's
    // forward known at compile time (cb_fmt_pool_rs(1), CONVBENCH_POOL_RS=on; by default where V =
    // 1) or in runtime loops (0, off); the fp32 max backward as a scatter of atomic adds at V = 1
    // and with the ReLU mask at stride 2 (the default), at every width (cb_fmt_pool_scatter(1),
    // CONVBENCH_POOL_SCATTER=on) or nowhere (0, off: the gather); the scatter within 1e-6 as the gather
    static const struct { int rs, scatter; const char *label; } modes[] = {
        {1, -1, "CONVBENCH_POOL_RS=on"}, {0, 0, "CONVBENCH_POOL_RS=off CONVBENCH_POOL_SCATTER=off"}, {-1, 1, "CONVBENCH_POOL_SCATTER=on"}};
    for (int m = 0; m < 3; m++) {
        cb_fmt_pool_rs(modes[m].rs), cb_fmt_pool_scatter(modes[m].scatter);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) { // small_only (compute-sanitizer): the small ones
            fmt_pool_case k = cases[i];
            char label[160];
            snprintf(label, sizeof label, "%s (%s)", k.label, modes[m].label);
            k.label = label;
            if (!small_only || (size_t)k.n * k.c * k.h * k.w < 100000) fmt_pool_case_run(&k);
        }
    }
    cb_fmt_pool_rs(-1), cb_fmt_pool_scatter(-1);
}

// cb_fmt_bias_grad (every backend's bias gradient) called directly: db against float64 sums of
// the same values (fp32 and bf16 storage, the bf16 values exact), relative to the sum of |dy| per
// channel within 1e-6; with the scratch (the chunked kernels: whole planes per block, planes split
// where the rows are few, the flat walk of small planes, NHWC rows) and without (one block per
// channel); two runs bit-identical (partial sums added in a fixed order).
static const struct {
    const char *label;
    int64_t rows;
    int k;
    int64_t inner;
} bias_cases[] = {
        {"NCHW b128 K64 75x75 (planes per block)", 128, 64, 75 * 75},
        {"NCHW b1 K3 300x300 (a plane split)", 1, 3, 300 * 300},
        {"NCHW b2 K64 112x112 (planes split)", 2, 64, 112 * 112},
        {"NCHW b5 K7 7x7 (small planes: flat walk)", 5, 7, 49},
        {"NCHW b33 K129 13x13", 33, 129, 169},
        {"NCHW b1 K5 3x3 (no chunks: too small)", 1, 5, 9},
        {"NHWC rows 50000 K33", 50000, 33, 1},
        {"NHWC rows 20000 K384 (vectors of 4)", 20000, 384, 1},
        {"NHWC rows 3001 K96 (bf16 vectors of 8, lanes idle)", 3001, 96, 1},
        {"NHWC rows 7003 K64 (fp32 vectors of 2)", 7003, 64, 1},
        {"FC b128 K4096", 128, 4096, 1},
};
#define bias_ncases (sizeof bias_cases / sizeof bias_cases[0])
// cb_fmt_concat_copy against a host loop, bit for bit: NHWC rows (inner 1) of 2- and 4-byte
// elements into and out of a channel slice, with channel counts and offsets that allow each copy
// unit (16, 8, 4 bytes, the element) and pointers offset by an element; NCHW (inner > 1) too.
// Bytes outside the slice must stay as they were (the destination starts from other random bytes).
// Units of 2, 4 and 8 bytes run over the flat index in tiles of 8 x 256 units
// (src/storage/format.cu): rows of 1 unit, of widths prime to 32 and past 256, totals off the tile
// and on it, one row, and millions (past the grid: its stride; left out under small_only).
// $CONVBENCH_CONCAT is read once a process: these check the kernels its value picks (the default
// unless set; =rows, the warp per row for every unit).
static void concat_copy_cases(void) {
    static const struct { int64_t n, c_dst, c_src, c_off, inner; } cc[] = {
        {51, 275, 74, 0, 1}, {51, 275, 74, 74, 1}, {7, 275, 127, 148, 1}, {33, 256, 64, 128, 1}, {9, 12, 5, 7, 1},
        {300, 18, 6, 12, 1}, {1, 3, 1, 2, 1}, {5, 40, 16, 8, 1}, {4, 20, 7, 13, 9}, {2, 16, 8, 8, 49},
        // the unit in bytes, bf16 / fp32, pointers as allocated (shifted by one: the element): rows of
        // 1 channel (2 / 4), of 4 at 36 (8 / 16, a unit a row: 2048 rows, one whole tile), of 8 (16 / 16)
        {1000, 5, 1, 3, 1}, {4097, 2, 1, 0, 1}, {2048, 40, 4, 36, 1}, {4000, 24, 8, 16, 1},
        // 37 channels at 33 and 601 at 301 (2 / 4), 1028 at 4 (8 / 16: 257 units), 1000 at 8 (16 / 16),
        // 12 at 4 (8 / 16)
        {3001, 101, 37, 33, 1}, {70, 1203, 601, 301, 1}, {40, 2052, 1028, 4, 1}, {40, 2048, 1000, 8, 1}, {2000, 20, 12, 4, 1},
        // one row (2 / 4), whole rows (pitch = width: both sides flat), 2.5 M rows of 3 channels (2 / 4)
        {1, 700, 555, 77, 1}, {1000, 37, 37, 0, 1}, {2500000, 5, 3, 1, 1},
    };
    for (size_t c = 0; c < sizeof cc / sizeof cc[0]; c++)
        for (int bytes = 2; bytes <= 4 && (!small_only || cc[c].n * cc[c].c_dst < 1000000); bytes += 2)
            for (int to_slice = 0; to_slice < 2; to_slice++)
                for (int shift = 0; shift < 2; shift++) {
                    size_t big = (size_t)(cc[c].n * cc[c].c_dst * cc[c].inner) * bytes, small = (size_t)(cc[c].n * cc[c].c_src * cc[c].inner) * bytes;
                    size_t nd = to_slice ? small : big, ns = to_slice ? big : small, sh = (size_t)shift * bytes;
                    unsigned char *hs = malloc(ns), *hd = malloc(nd), *got = malloc(nd), *want = malloc(nd);
                    for (size_t i = 0; i < ns; i++) hs[i] = (unsigned char)(urand() * 256);
                    for (size_t i = 0; i < nd; i++) hd[i] = (unsigned char)(urand() * 256);
                    memcpy(want, hd, nd);
                    size_t row = (size_t)(cc[c].c_src * cc[c].inner) * bytes, pitch = (size_t)(cc[c].c_dst * cc[c].inner) * bytes,
                           off = (size_t)(cc[c].c_off * cc[c].inner) * bytes;
                    for (int64_t r = 0; r < cc[c].n; r++)
                        if (to_slice) memcpy(want + r * row, hs + r * pitch + off, row);
                        else memcpy(want + r * pitch + off, hs + r * row, row);
                    unsigned char *ds = NULL, *dd = NULL;
                    cudaMalloc((void **)&ds, ns + sh), cudaMalloc((void **)&dd, nd + sh);
                    cudaMemcpy(ds + sh, hs, ns, cudaMemcpyHostToDevice), cudaMemcpy(dd + sh, hd, nd, cudaMemcpyHostToDevice);
                    cb_fmt_concat_copy(cc[c].n, cc[c].c_dst, cc[c].c_src, cc[c].c_off, cc[c].inner, (size_t)bytes, dd + sh, ds + sh, to_slice);
                    cudaError_t rc = cudaMemcpy(got, dd + sh, nd, cudaMemcpyDeviceToHost);
                    char what[160];
                    snprintf(what, sizeof what, "concat copy %s %d-byte n %lld C %lld<-%lld at %lld inner %lld%s", to_slice ? "out of" : "into",
                             bytes, (long long)cc[c].n, (long long)cc[c].c_dst, (long long)cc[c].c_src, (long long)cc[c].c_off,
                             (long long)cc[c].inner, shift ? " (pointers +1 element)" : "");
                    check(what, rc == cudaSuccess && !memcmp(got, want, nd) ? 0 : 1, 0);
                    cudaFree(ds), cudaFree(dd);
                    free(hs), free(hd), free(got), free(want);
                }
}

// cb_fmt_concat_slice_masked (the backward of a concatenation that takes over its inputs' ReLU,
// relu_by_concat) against a host loop, bit for bit: the gradient's slice where the mask (the
// concatenation's output: both signs, exact zeros, -0) is above 0, else +0; fp32 and bf16, NHWC rows
// with each unit the kernel takes (16, 8, 4 bytes, the element), NCHW blocks, pointers offset by an
// element, and rows past the grid (millions)
static void concat_masked_cases(void) {
    static const struct { int64_t n, c_dst, c_src, c_off, inner; } cc[] = {
        {51, 275, 74, 0, 1}, {51, 275, 74, 74, 1}, {7, 275, 127, 148, 1}, {33, 256, 64, 128, 1}, {9, 12, 5, 7, 1},
        {300, 18, 6, 12, 1}, {1, 3, 1, 2, 1}, {40, 2048, 1000, 8, 1}, {4, 20, 7, 13, 9}, {2, 16, 8, 8, 49},
        {1000, 37, 37, 0, 1}, {3, 40, 16, 24, 1}, {2500000, 5, 3, 1, 1}, {200000, 96, 32, 64, 1},
    };
    for (size_t c = 0; c < sizeof cc / sizeof cc[0]; c++)
        for (int bf = 0; bf < 2 && (!small_only || cc[c].n * cc[c].c_dst < 1000000); bf++)
            for (int shift = 0; shift < 2; shift++) {
                size_t es = bf ? 2 : 4, nb = (size_t)(cc[c].n * cc[c].c_dst * cc[c].inner), ns = (size_t)(cc[c].n * cc[c].c_src * cc[c].inner);
                float *g = malloc(nb * 4), *m = malloc(nb * 4);
                unsigned char *hg = malloc(nb * es), *hm = malloc(nb * es), *got = malloc(ns * es), *want = malloc(ns * es);
                for (size_t i = 0; i < nb; i++) {
                    g[i] = bf16_round(urand() - 0.5f);
                    float u = urand();
                    m[i] = u < 0.1f ? 0.f : u < 0.15f ? -0.f : bf16_round(u - 0.55f);
                }
                for (size_t i = 0; i < nb; i++) {
                    uint32_t ug, um;
                    memcpy(&ug, &g[i], 4), memcpy(&um, &m[i], 4);
                    if (bf) {
                        uint16_t a = (uint16_t)(ug >> 16), b = (uint16_t)(um >> 16);
                        memcpy(hg + 2 * i, &a, 2), memcpy(hm + 2 * i, &b, 2);
                    } else memcpy(hg + 4 * i, &ug, 4), memcpy(hm + 4 * i, &um, 4);
                }
                int64_t row = cc[c].c_src * cc[c].inner, pitch = cc[c].c_dst * cc[c].inner, off = cc[c].c_off * cc[c].inner;
                for (int64_t r = 0; r < cc[c].n; r++)
                    for (int64_t k = 0; k < row; k++) {
                        size_t at = (size_t)(r * pitch + off + k), o = (size_t)(r * row + k);
                        if (m[at] > 0) memcpy(want + o * es, hg + at * es, es);
                        else memset(want + o * es, 0, es);
                    }
                size_t sh = (size_t)shift * es;
                unsigned char *dg = NULL, *dm = NULL, *dd = NULL;
                cudaMalloc((void **)&dg, nb * es + sh), cudaMalloc((void **)&dm, nb * es + sh), cudaMalloc((void **)&dd, ns * es + sh);
                cudaMemcpy(dg + sh, hg, nb * es, cudaMemcpyHostToDevice), cudaMemcpy(dm + sh, hm, nb * es, cudaMemcpyHostToDevice);
                cudaMemset(dd, 0xff, ns * es + sh);
                cb_fmt_concat_slice_masked(cc[c].n, cc[c].c_dst, cc[c].c_src, cc[c].c_off, cc[c].inner, bf, dd + sh, dg + sh, dm + sh);
                cudaError_t rc = cudaMemcpy(got, dd + sh, ns * es, cudaMemcpyDeviceToHost);
                char what[160];
                snprintf(what, sizeof what, "concat masked %s n %lld C %lld<-%lld at %lld inner %lld%s", bf ? "bf16" : "fp32", (long long)cc[c].n,
                         (long long)cc[c].c_dst, (long long)cc[c].c_src, (long long)cc[c].c_off, (long long)cc[c].inner,
                         shift ? " (pointers +1 element)" : "");
                check(what, rc == cudaSuccess && !memcmp(got, want, ns * es) ? 0 : 1, 0);
                cudaFree(dg), cudaFree(dm), cudaFree(dd);
                free(g), free(m), free(hg), free(hm), free(got), free(want);
            }
}

// cb_fmt_concat_gather (the one-pass NHWC concatenation forward) against a host loop, bit for bit:
// odd channel counts as an Inception-like random network's, one row, one input, eight inputs (nine:
// not taken), 16-byte rows (not taken unless one input is narrow), fp32 and bf16 elements, and 2.5 M
// rows (left out under small_only)
static void concat_gather_cases(void) {
    static const struct { int64_t rows; int k; int64_t c[9]; int taken; } cc[] = {
        {4001, 4, {69, 101, 33, 74}, 1}, {1, 2, {3, 1}, 1}, {300, 1, {5}, 1}, {20, 8, {1, 2, 3, 4, 5, 6, 7, 9}, 1},
        {20, 9, {1, 2, 3, 4, 5, 6, 7, 9, 3}, 0}, {9, 4, {64, 128, 32, 32}, 0}, {9, 4, {64, 127, 33, 32}, 1}, {2500000, 3, {3, 5, 2}, 1},
    };
    for (size_t t = 0; t < sizeof cc / sizeof cc[0]; t++)
        for (int bytes = 2; bytes <= 4 && (!small_only || cc[t].rows < 100000); bytes += 2) {
            int64_t cd = 0;
            for (int q = 0; q < cc[t].k; q++) cd += cc[t].c[q];
            size_t nd = (size_t)(cc[t].rows * cd) * bytes;
            unsigned char *expect = malloc(nd), *got = malloc(nd), *dd = NULL, *hs[9], *ds[9];
            const void *srcs[9];
            cudaMalloc((void **)&dd, nd);
            cudaMemset(dd, 0xff, nd);
            memset(expect, 0xff, nd);
            // taken by default for narrow fp32 rows; under $CONVBENCH_CONCAT=gather wherever k <= 8; never under the others
            const char *mode = getenv("CONVBENCH_CONCAT");
            bool gather = mode && !strcmp(mode, "gather"), other = mode && *mode && !gather && strcmp(mode, "kernel");
            int want = other ? 0 : gather ? cc[t].k <= 8 : cc[t].taken && bytes == 4;
            for (int q = 0, off = 0; q < cc[t].k; off += (int)cc[t].c[q], q++) {
                size_t ns = (size_t)(cc[t].rows * cc[t].c[q]) * bytes;
                hs[q] = malloc(ns);
                for (size_t i = 0; i < ns; i++) hs[q][i] = (unsigned char)(urand() * 256);
                cudaMalloc((void **)&ds[q], ns);
                cudaMemcpy(ds[q], hs[q], ns, cudaMemcpyHostToDevice);
                srcs[q] = ds[q];
                for (int64_t r = 0; r < cc[t].rows && want; r++)
                    memcpy(expect + (size_t)(r * cd + off) * bytes, hs[q] + (size_t)(r * cc[t].c[q]) * bytes, (size_t)cc[t].c[q] * bytes);
            }
            int taken = cb_fmt_concat_gather(cc[t].rows, cd, cc[t].k, cc[t].c, srcs, (size_t)bytes, dd);
            cudaError_t rc = cudaMemcpy(got, dd, nd, cudaMemcpyDeviceToHost);
            char what[160];
            snprintf(what, sizeof what, "concat gather %d-byte rows %lld, %d inputs, C %lld (%s)", bytes, (long long)cc[t].rows, cc[t].k,
                     (long long)cd, want ? "taken" : "not taken");
            check(what, rc == cudaSuccess && taken == want && !memcmp(got, expect, nd) ? 0 : 1, 0);
            for (int q = 0; q < cc[t].k; q++) free(hs[q]), cudaFree(ds[q]);
            cudaFree(dd);
            free(expect), free(got);
        }
}

static void bias_grad_cases(void) {
    for (size_t c = 0; c < bias_ncases; c++)
        for (int bf = 0; bf < 2; bf++) {
            int64_t rows = bias_cases[c].rows, inner = bias_cases[c].inner;
            int k = bias_cases[c].k;
            size_t n = (size_t)rows * k * inner;
            float *h = malloc(n * 4), *db = malloc((size_t)k * 4), *db2 = malloc((size_t)k * 4), *db0 = malloc((size_t)k * 4);
            uint16_t *hb = malloc(n * 2);
            double *ref = calloc((size_t)k, sizeof *ref), *mag = calloc((size_t)k, sizeof *mag);
            for (size_t i = 0; i < n; i++) {
                h[i] = bf16_round(urand() - 0.3f); // (bf16-exact in both storages: one reference)
                uint32_t u;
                memcpy(&u, &h[i], 4);
                hb[i] = (uint16_t)(u >> 16);
                int ch = (int)(i / (size_t)inner % (size_t)k);
                ref[ch] += h[i], mag[ch] += fabs(h[i]);
            }
            void *d;
            float *dd, *part;
            size_t pf = cb_fmt_bias_part_floats(k);
            cudaMalloc(&d, n * 4), cudaMalloc((void **)&dd, (size_t)k * 4), cudaMalloc((void **)&part, pf * 4);
            cudaMemcpy(d, bf ? (void *)hb : (void *)h, n * (bf ? 2 : 4), cudaMemcpyHostToDevice);
            cb_fmt_bias_grad(rows, k, inner, d, bf, dd, part);
            cudaMemcpy(db, dd, (size_t)k * 4, cudaMemcpyDeviceToHost);
            cb_fmt_bias_grad(rows, k, inner, d, bf, dd, part);
            cudaMemcpy(db2, dd, (size_t)k * 4, cudaMemcpyDeviceToHost);
            cb_fmt_bias_grad(rows, k, inner, d, bf, dd, NULL);
            cudaError_t rc = cudaMemcpy(db0, dd, (size_t)k * 4, cudaMemcpyDeviceToHost);
            double err = rc == cudaSuccess ? 0 : INFINITY, err0 = err;
            for (int ch = 0; ch < k; ch++) {
                double den = mag[ch] > 0 ? mag[ch] : 1, e1 = fabs(db[ch] - ref[ch]) / den, e0 = fabs(db0[ch] - ref[ch]) / den;
                if (!(e1 <= err)) err = isnan(e1) ? INFINITY : e1 > err ? e1 : err;
                if (!(e0 <= err0)) err0 = isnan(e0) ? INFINITY : e0 > err0 ? e0 : err0;
            }
            char what[160];
            snprintf(what, sizeof what, "bias grad %s %s", bf ? "bf16" : "fp32", bias_cases[c].label);
            check(what, err, 1e-6);
            snprintf(what, sizeof what, "bias grad %s %s, no scratch", bf ? "bf16" : "fp32", bias_cases[c].label);
            check(what, err0, 1e-6);
            snprintf(what, sizeof what, "bias grad %s %s, run to run", bf ? "bf16" : "fp32", bias_cases[c].label);
            check(what, memcmp(db, db2, (size_t)k * 4) ? 1.0 : 0.0, 0);
            cudaFree(d), cudaFree(dd), cudaFree(part);
            free(h), free(hb), free(db), free(db2), free(db0), free(ref), free(mag);
        }
}

// a tensor of n values in the storage (bf16 or fp32) from the host floats h, bf16-exact
static void *dev_values(const float *h, size_t n, int bf) {
    void *d = NULL;
    cudaMalloc(&d, n * (bf ? 2 : 4));
    if (!bf) cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice);
    else {
        uint16_t *hb = malloc(n * 2);
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &h[i], 4);
            hb[i] = (uint16_t)(u >> 16);
        }
        cudaMemcpy(d, hb, n * 2, cudaMemcpyHostToDevice);
        free(hb);
    }
    return d;
}

// cb_fmt_act_bias_grad (the backward epilogue of a conv or FC layer with a bias and an
// activation): dy and db against the separate passes (cb_fmt_act_backward, then cb_fmt_bias_grad)
// on the same inputs, with and without the scratch: a ReLU's bit for bit (the same sums in the same
// order), GELU's (its input saved) within 1e-6 of the magnitude (1e-2 in bf16: one rounding apart); and db against float64 sums of the
// separate pass's dy, within 1e-6 of the sum of |dy| per channel. y has a third of its values <= 0.
static void act_bias_grad_cases(void) {
    const cb_act acts[] = {CB_ACT_RELU, CB_ACT_GELU};
    for (size_t c = 0; c < bias_ncases; c++)
        for (int bf = 0; bf < 2; bf++)
            for (int a = 0; a < 2; a++)
                for (int scratch = 0; scratch < 2; scratch++) {
                    int64_t rows = bias_cases[c].rows, inner = bias_cases[c].inner;
                    int k = bias_cases[c].k;
                    size_t n = (size_t)rows * k * inner, es = bf ? 2 : 4;
                    float *h = malloc(n * 4), *hy = malloc(n * 4), *hx = malloc(n * 4);
                    for (size_t i = 0; i < n; i++) {
                        h[i] = bf16_round(urand() - 0.5f);
                        hx[i] = bf16_round(2.f * urand() - 0.7f);
                        hy[i] = acts[a] == CB_ACT_RELU ? (hx[i] > 0 ? hx[i] : 0.f) : hx[i]; // (GELU reads x; y is what it would be)
                    }
                    void *dy1 = dev_values(h, n, bf), *dy2 = dev_values(h, n, bf), *y = dev_values(hy, n, bf);
                    void *x = acts[a] == CB_ACT_RELU ? NULL : dev_values(hx, n, bf);
                    float *dd1, *dd2, *part = NULL;
                    cudaMalloc((void **)&dd1, (size_t)k * 4), cudaMalloc((void **)&dd2, (size_t)k * 4);
                    if (scratch) cudaMalloc((void **)&part, cb_fmt_bias_part_floats(k) * 4);
                    cb_fmt_act_backward(n, acts[a], x, y, dy1, dy1, bf);
                    cb_fmt_bias_grad(rows, k, inner, dy1, bf, dd1, part);
                    cb_fmt_act_bias_grad(rows, k, inner, acts[a], x, y, dy2, bf, dd2, part);
                    char *g1 = malloc(n * es), *g2 = malloc(n * es);
                    float *db1 = malloc((size_t)k * 4), *db2 = malloc((size_t)k * 4);
                    cudaMemcpy(g1, dy1, n * es, cudaMemcpyDeviceToHost), cudaMemcpy(g2, dy2, n * es, cudaMemcpyDeviceToHost);
                    cudaMemcpy(db1, dd1, (size_t)k * 4, cudaMemcpyDeviceToHost);
                    cudaError_t rc = cudaMemcpy(db2, dd2, (size_t)k * 4, cudaMemcpyDeviceToHost);
                    double *ref = calloc((size_t)k, sizeof *ref), *mag = calloc((size_t)k, sizeof *mag);
                    double gerr = rc == cudaSuccess ? 0 : INFINITY, derr = gerr, rerr = gerr;
                    for (size_t i = 0; i < n; i++) {
                        float v1, v2;
                        if (bf) {
                            uint32_t u1 = (uint32_t)((uint16_t *)g1)[i] << 16, u2 = (uint32_t)((uint16_t *)g2)[i] << 16;
                            memcpy(&v1, &u1, 4), memcpy(&v2, &u2, 4);
                        } else v1 = ((float *)g1)[i], v2 = ((float *)g2)[i];
                        double e1 = fabs((double)v1 - v2) / (fabs(v1) > 1e-3 ? fabs(v1) : 1e-3);
                        if (!(e1 <= gerr)) gerr = isnan(e1) ? INFINITY : e1;
                        int ch = (int)(i / (size_t)inner % (size_t)k);
                        ref[ch] += v1, mag[ch] += fabs(v1);
                    }
                    for (int ch = 0; ch < k; ch++) {
                        double den = mag[ch] > 0 ? mag[ch] : 1, e1 = fabs((double)db2[ch] - db1[ch]) / den, e2 = fabs(db2[ch] - ref[ch]) / den;
                        if (!(e1 <= derr)) derr = isnan(e1) ? INFINITY : e1;
                        if (!(e2 <= rerr)) rerr = isnan(e2) ? INFINITY : e2;
                    }
                    bool relu = acts[a] == CB_ACT_RELU;
                    char what[200];
                    snprintf(what, sizeof what, "act+bias grad %s %s %s%s: dy, fused against separate", relu ? "relu" : "gelu", bf ? "bf16" : "fp32",
                             bias_cases[c].label, scratch ? "" : ", no scratch");
                    check(what, relu ? (memcmp(g1, g2, n * es) ? 1.0 : 0.0) : gerr, relu ? 0 : bf ? 1e-2 : 1e-6);
                    snprintf(what, sizeof what, "act+bias grad %s %s %s%s: db, fused against separate", relu ? "relu" : "gelu", bf ? "bf16" : "fp32",
                             bias_cases[c].label, scratch ? "" : ", no scratch");
                    check(what, relu ? (memcmp(db1, db2, (size_t)k * 4) ? 1.0 : 0.0) : derr, relu ? 0 : bf ? 1e-2 : 1e-6);
                    snprintf(what, sizeof what, "act+bias grad %s %s %s%s: db against float64", relu ? "relu" : "gelu", bf ? "bf16" : "fp32",
                             bias_cases[c].label, scratch ? "" : ", no scratch");
                    check(what, rerr, 1e-6);
                    cudaFree(dy1), cudaFree(dy2), cudaFree(y), cudaFree(x), cudaFree(dd1), cudaFree(dd2), cudaFree(part);
                    free(h), free(hy), free(hx), free(g1), free(g2), free(db1), free(db2), free(ref), free(mag);
                }
}

// cb_fmt_bn_backward_relu_mask (a residual block's last batch norm, its sum's ReLU gradient taken
// in the batch norm's first pass) against the separate passes (cb_fmt_act_backward's ReLU from
// the sum's output m, then cb_fmt_bn_backward without activation) on the same inputs: dy (now the
// ReLU's input gradient), dx, dgamma and dbeta bit for bit (the same sums in the same order); and
// against float64 (g = m > 0 ? dy : 0; dbeta = sum g, dgamma = sum g (x - mean) invstd, dx = gamma
// invstd (g - dbeta / M - (x - mean) invstd^2 sum g (x - mean) / M)): the sums within 1e-5 of the
// sum of |g| (|g (x - mean) invstd|) per channel, dx within 1e-5 normalised (fp32) or 1e-2 (bf16:
// rounded on store). Every storage; C odd (the scalar path), C 64 (16-byte vectors), batch 1, and
// dx NULL (the sums and the stored dy only). A third of m is 0.
static void bn_relu_mask_cases(void) {
    static const struct { int n, c, h, w; } shapes[] = {{2, 13, 5, 7}, {3, 64, 8, 8}, {1, 24, 7, 7}, {4, 8, 3, 5}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (int fmt_i = 0; fmt_i < 4; fmt_i++)
            for (int with_dx = 1; with_dx >= (sh == 3 ? 0 : 1); with_dx--) {
                int n = shapes[sh].n, c = shapes[sh].c, h = shapes[sh].h, w = shapes[sh].w;
                int nhwc = fmt_i & 1, bf = fmt_i >> 1, fmt = (nhwc ? CB_FMT_NHWC : 0) | (bf ? CB_FMT_BF16 : 0);
                size_t cnt = (size_t)n * c * h * w, hw = (size_t)h * w, es = bf ? 2 : 4;
                cb_bn_params bp = {.n = n, .c = c, .h = h, .w = w, .eps = 1e-3f};
                float *hx = malloc(cnt * 4), *hm = malloc(cnt * 4), *hdy = malloc(cnt * 4);
                float *hg = malloc((size_t)c * 4), *hmean = malloc((size_t)c * 4), *his = malloc((size_t)c * 4);
                for (size_t i = 0; i < cnt; i++) {
                    hx[i] = bf16_round(2.f * urand() - 0.8f);
                    float v = bf16_round(1.5f * urand() - 0.5f);
                    hm[i] = v > 0 ? v : 0.f;
                    hdy[i] = bf16_round(urand() - 0.5f);
                }
                for (int k = 0; k < c; k++) hg[k] = 0.5f + urand(), hmean[k] = 0.4f * urand() - 0.2f, his[k] = 0.5f + 2.f * urand();
                void *x = dev_values(hx, cnt, bf), *m = dev_values(hm, cnt, bf), *dy1 = dev_values(hdy, cnt, bf), *dy2 = dev_values(hdy, cnt, bf);
                float *gamma = dev_values(hg, (size_t)c, 0), *mean = dev_values(hmean, (size_t)c, 0), *invstd = dev_values(his, (size_t)c, 0);
                void *dx1 = NULL, *dx2 = NULL;
                float *dg1, *dg2, *db1, *db2, *part;
                if (with_dx) cudaMalloc(&dx1, cnt * es), cudaMalloc(&dx2, cnt * es);
                cudaMalloc((void **)&dg1, (size_t)c * 4), cudaMalloc((void **)&dg2, (size_t)c * 4);
                cudaMalloc((void **)&db1, (size_t)c * 4), cudaMalloc((void **)&db2, (size_t)c * 4);
                cudaMalloc((void **)&part, cb_fmt_bn_scratch(c) * 4);
                cb_fmt_act_backward(cnt, CB_ACT_RELU, NULL, m, dy1, dy1, bf);
                cb_fmt_bn_backward(&bp, fmt, x, gamma, NULL, mean, invstd, CB_ACT_NONE, dy1, dx1, dg1, db1, part);
                cb_fmt_bn_backward_relu_mask(&bp, fmt, x, gamma, mean, invstd, m, dy2, dx2, dg2, db2, part);
                char *gy1 = malloc(cnt * es), *gy2 = malloc(cnt * es), *gx1 = malloc(cnt * es), *gx2 = malloc(cnt * es);
                float *a1 = malloc((size_t)c * 16), *a2 = a1 + c, *b1 = a2 + c, *b2 = b1 + c;
                cudaMemcpy(gy1, dy1, cnt * es, cudaMemcpyDeviceToHost), cudaMemcpy(gy2, dy2, cnt * es, cudaMemcpyDeviceToHost);
                if (with_dx) cudaMemcpy(gx1, dx1, cnt * es, cudaMemcpyDeviceToHost), cudaMemcpy(gx2, dx2, cnt * es, cudaMemcpyDeviceToHost);
                cudaMemcpy(a1, dg1, (size_t)c * 4, cudaMemcpyDeviceToHost), cudaMemcpy(a2, dg2, (size_t)c * 4, cudaMemcpyDeviceToHost);
                cudaMemcpy(b1, db1, (size_t)c * 4, cudaMemcpyDeviceToHost);
                cudaError_t rc = cudaMemcpy(b2, db2, (size_t)c * 4, cudaMemcpyDeviceToHost);
                // float64, element i of the storage order: its channel
                double *s1 = calloc((size_t)c * 4, sizeof(double)), *s2 = s1 + c, *m1 = s2 + c, *m2 = m1 + c;
                for (size_t i = 0; i < cnt; i++) {
                    int k = (int)(nhwc ? i % (size_t)c : i / hw % (size_t)c);
                    double g = hm[i] > 0 ? hdy[i] : 0, xc = (double)hx[i] - hmean[k];
                    s1[k] += g, s2[k] += g * xc, m1[k] += fabs(g), m2[k] += fabs(g * xc * his[k]);
                }
                double serr = rc == cudaSuccess ? 0 : INFINITY;
                for (int k = 0; k < c; k++) {
                    double e1 = fabs(b2[k] - s1[k]) / (m1[k] > 0 ? m1[k] : 1), e2 = fabs(a2[k] - s2[k] * his[k]) / (m2[k] > 0 ? m2[k] : 1);
                    if (!(e1 <= serr)) serr = isnan(e1) ? INFINITY : e1;
                    if (!(e2 <= serr)) serr = isnan(e2) ? INFINITY : e2;
                }
                float *dxf = malloc(cnt * 4), *dxr = malloc(cnt * 4);
                double M = (double)n * hw;
                for (size_t i = 0; with_dx && i < cnt; i++) {
                    int k = (int)(nhwc ? i % (size_t)c : i / hw % (size_t)c);
                    double g = hm[i] > 0 ? hdy[i] : 0, xc = (double)hx[i] - hmean[k], is = his[k];
                    dxr[i] = (float)(hg[k] * is * (g - s1[k] / M - xc * is * is * s2[k] / M));
                    if (bf) {
                        uint32_t u = (uint32_t)((uint16_t *)gx2)[i] << 16;
                        memcpy(&dxf[i], &u, 4);
                    } else dxf[i] = ((float *)gx2)[i];
                }
                char what[200];
                snprintf(what, sizeof what, "bn relu-mask backward %s %s n%d c%d %dx%d%s: fused against separate", bf ? "bf16" : "fp32",
                         nhwc ? "nhwc" : "nchw", n, c, h, w, with_dx ? "" : ", no dx");
                bool same = !memcmp(gy1, gy2, cnt * es) && (!with_dx || !memcmp(gx1, gx2, cnt * es)) && !memcmp(a1, a2, (size_t)c * 4) &&
                            !memcmp(b1, b2, (size_t)c * 4);
                check(what, same ? 0 : 1, 0);
                snprintf(what, sizeof what, "bn relu-mask backward %s %s n%d c%d %dx%d%s: sums against float64", bf ? "bf16" : "fp32",
                         nhwc ? "nhwc" : "nchw", n, c, h, w, with_dx ? "" : ", no dx");
                check(what, serr, 1e-5);
                if (with_dx) {
                    snprintf(what, sizeof what, "bn relu-mask backward %s %s n%d c%d %dx%d: dx against float64", bf ? "bf16" : "fp32",
                             nhwc ? "nhwc" : "nchw", n, c, h, w);
                    check(what, nerr(dxf, dxr, cnt), bf ? 1e-2 : 1e-5);
                }
                cudaFree(x), cudaFree(m), cudaFree(dy1), cudaFree(dy2), cudaFree(gamma), cudaFree(mean), cudaFree(invstd);
                cudaFree(dx1), cudaFree(dx2), cudaFree(dg1), cudaFree(dg2), cudaFree(db1), cudaFree(db2), cudaFree(part);
                free(hx), free(hm), free(hdy), free(hg), free(hmean), free(his), free(gy1), free(gy2), free(gx1), free(gx2);
                free(a1), free(s1), free(dxf), free(dxr);
            }
}

// "cudnn" and "auto" in the other storages: NHWC fp32, tf32, bf16 and bf16 NCHW; both small nets
// Batch norm on auto's own storage kernels (src/storage/norm_fmt.cu) and on cuDNN, forced each way
// and measured, in every storage: standalone layers (C odd: the scalar paths; C 64 and h*w 8x8:
// the 16-byte paths), fused after a convolution with the ReLU (whose mask the own backward
// applies), an epsilon under cuDNN's minimum (own kernels in every storage), and the running
// statistics after one training forward pass against the reference's.
static void bn_running_check(const char *backend, cb_precision prec, const char *label, int n, int h, int w, int c, const char *body) {
    char json[1024], what[256];
    snprintf(json, sizeof json,
             "{\"name\": \"case\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [%d, %d, %d, %d]},"
             " \"L\": {\"parents\": [\"data\"], %s}}}", n, h, w, c, body);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, label, &err);
    cb_exec *g, *r;
    snprintf(what, sizeof what, "%s %s %s running statistics", backend, prec_name(prec), label);
    if (!net) {
        printf("FAIL %s: %s\n", what, err.msg);
        failed++;
        return;
    }
    if (!exec_pair(net, backend, prec, what, &g, &r)) return;
    int last = net->nlayers - 1;
    size_t nin = (size_t)cb_shape_count(net->layers[0].out), k = (size_t)net->layers[last].out.c;
    float *x = malloc(nin * 4);
    for (size_t i = 0; i < nin; i++) x[i] = urand() * 2.f + 3.f; // a mean away from 0
    cb_exec_set_input(g, x, NULL);
    cb_exec_set_input(r, x, NULL);
    cb_exec_forward(g, true, NULL);
    cb_exec_forward(r, true, NULL);
    float *mg = download(g, g->lb[last].rmean, k), *mr = download(r, r->lb[last].rmean, k);
    float *vg = download(g, g->lb[last].rvar, k), *vr = download(r, r->lb[last].rvar, k);
    double tol = tol_for(backend, prec) * 4;
    snprintf(what, sizeof what, "%s %s %s running mean [%s]", backend, prec_name(prec), label, g->lb[last].algo[0]);
    check(what, nerr(mg, mr, k), tol);
    snprintf(what, sizeof what, "%s %s %s running variance [%s]", backend, prec_name(prec), label, g->lb[last].algo[0]);
    check(what, nerr(vg, vr, k), tol);
    free(x), free(mg), free(mr), free(vg), free(vr);
    cb_exec_destroy(g);
    cb_exec_destroy(r);
    cb_net_free(net);
}

static void bn_cases(void) {
    static const struct { const char *label; int n, h, w, c; const char *body; } cases[] = {
        {"BatchNorm C13 b4 5x6", 4, 5, 6, 13, "\"type\": \"BatchNorm\", \"epsilon\": 0.001"},
        {"BatchNorm C64 b3 8x8", 3, 8, 8, 64, "\"type\": \"BatchNorm\", \"epsilon\": 0.00001"},
        {"BatchNorm C24 b1 7x7", 1, 7, 7, 24, "\"type\": \"BatchNorm\", \"epsilon\": 0.001"},
        {"BatchNorm eps 1e-7 C5 (under cuDNN's minimum)", 2, 6, 5, 5, "\"type\": \"BatchNorm\", \"epsilon\": 0.0000001"},
        {"conv 3x3 C16->24 + bn + relu b2 9x10", 2, 9, 10, 16,
         "\"type\": \"Convolution\", \"filter\": [3, 3, 16, 24], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false"},
        {"conv 1x1 C32->64 s2 + bn b4 12x12", 4, 12, 12, 32,
         "\"type\": \"Convolution\", \"filter\": [1, 1, 32, 64], \"padding\": \"VALID\", \"strides\": [1, 2, 2, 1], \"activation_fn\": null, \"normalizer_fn\": \"batch_norm\", \"bias\": false"},
        {"conv 3x3 C8->7 + bn + relu b3 6x5 (odd K)", 3, 6, 5, 8,
         "\"type\": \"Convolution\", \"filter\": [3, 3, 8, 7], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false"},
        // activations whose gradient reads their input: under auto (unless cuDNN's batch norm is
        // forced) the layer keeps no such input, the own backward recomputes it (be->act_input_kept)
        {"conv 3x3 C16->13 + bn + silu b2 7x9", 2, 7, 9, 16,
         "\"type\": \"Convolution\", \"filter\": [3, 3, 16, 13], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"silu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false"},
        {"conv 1x1 C8->24 + bn + gelu b1 6x6", 1, 6, 6, 8,
         "\"type\": \"Convolution\", \"filter\": [1, 1, 8, 24], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"gelu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false"},
        // hardswish's gradient jumps by half at -3 and 3, so a bf16 rounding of its input across one of
        // them moves that element's gradient by dy / 2 (on the H200, 2026-11-29, 6 of 4,570 checks of
        // b3 9x8 failed so, on a cuDNN graph engine's rounding; the same checks had passed in the call
        // before): in bf16 a batch-1 case whose 9 values a channel stay within +-2.83 (as many as 9
        // normalised values can: gamma 1, beta 0) checks it, the clamps in fp32
        {"conv 3x3 s2 C8->16 + bn + hardswish b3 9x8 (fp32)", 3, 9, 8, 8,
         "\"type\": \"Convolution\", \"filter\": [3, 3, 8, 16], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"hardswish\", \"normalizer_fn\": \"batch_norm\", \"bias\": false"},
        {"conv 3x3 s2 C8->16 + bn + hardswish b1 5x6 (asymmetric SAME)", 1, 5, 6, 8,
         "\"type\": \"Convolution\", \"filter\": [3, 3, 8, 16], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"hardswish\", \"normalizer_fn\": \"batch_norm\", \"bias\": false"},
    };
    int ncases = (int)(sizeof cases / sizeof cases[0]);
    const char *force[] = {"own", "cudnn", NULL};
    cb_layout lays[] = {CB_LAYOUT_NCHW, CB_LAYOUT_NHWC};
    cb_precision precs[] = {CB_PREC_FP32, CB_PREC_BF16};
    for (int f = 0; f < 3; f++) {
        if (force[f]) setenv("CONVBENCH_AUTO_BN", force[f], 1);
        else unsetenv("CONVBENCH_AUTO_BN");
        for (int l = 0; l < 2; l++)
            for (int p = 0; p < 2; p++) {
                test_layout = lays[l];
                for (int j = 0; j < ncases; j++) {
                    if (precs[p] == CB_PREC_BF16 && strstr(cases[j].label, "(fp32)")) continue;
                    layer_case("auto", precs[p], cases[j].label, cases[j].n, cases[j].h, cases[j].w, cases[j].c, cases[j].body);
                    if (j < 2) bn_running_check("auto", precs[p], cases[j].label, cases[j].n, cases[j].h, cases[j].w, cases[j].c, cases[j].body);
                }
                if (!small_only) network_case_of("auto", precs[p], true);
            }
    }
    // the own kernels' choice is named in a standalone layer's algorithm
    setenv("CONVBENCH_AUTO_BN", "own", 1);
    test_layout = CB_LAYOUT_NHWC;
    cb_error err = {0};
    cb_net *net = cb_net_load_string("{\"name\": \"n\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 4, 4, 8]},"
                                     " \"L\": {\"parents\": [\"data\"], \"type\": \"BatchNorm\", \"epsilon\": 0.001}}}", "bn", &err);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "auto";
    o.layout = CB_LAYOUT_NHWC;
    cb_exec *g = net ? cb_exec_create(net, &o, &err) : NULL;
    const cb_choice *bc = g ? cb_exec_choice(g, 1, CB_PHASE_FORWARD) : NULL;
    check("auto CONVBENCH_AUTO_BN=own records its choice", bc && bc->impl == CB_IMPL_OWN && (bc->flags & CB_CHOICE_FORCED) ? 0 : 1, 0);
    cb_exec_destroy(g);
    setenv("CONVBENCH_AUTO_BN", "fastest", 1);
    g = net ? cb_exec_create(net, &o, &err) : NULL;
    check("auto CONVBENCH_AUTO_BN=fastest is refused by name", !g && strstr(err.msg, "CONVBENCH_AUTO_BN") ? 0 : 1, 0);
    cb_exec_destroy(g);
    unsetenv("CONVBENCH_AUTO_BN");
    // a SiLU after a batch norm keeps no input for its gradient under auto (the own kernels
    // recompute it), and keeps it where a test forces cuDNN's batch norm (its separate pass reads it)
    {
        cb_net *sn = cb_net_load_string(
            "{\"name\": \"s\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, 6, 6, 8]},"
            " \"c\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 8, 16], \"padding\": [1, 1],"
            " \"strides\": [1, 1, 1, 1], \"activation_fn\": \"silu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
            " \"p\": {\"parents\": [\"c\"], \"type\": \"GlobalAvgPool\"},"
            " \"fc\": {\"parents\": [\"p\"], \"type\": \"InnerProduct\", \"num_outputs\": 4, \"activation_fn\": null},"
            " \"softmax\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 4}}}", "silu", &err);
        for (int f = 0; f < 2 && sn; f++) {
            if (f) setenv("CONVBENCH_AUTO_BN", "cudnn", 1);
            else unsetenv("CONVBENCH_AUTO_BN");
            cb_exec_opts so;
            cb_exec_opts_default(&so);
            so.backend = "auto", so.layout = CB_LAYOUT_NHWC, so.train = true;
            cb_exec *sg = cb_exec_create(sn, &so, &err);
            bool noted = false;
            for (int k = 0; sg && k < sg->nnotes; k++) noted |= strstr(sg->notes[k], "keep no input of their activation") != NULL;
            char what[160];
            snprintf(what, sizeof what, "auto conv + bn + silu %s: the activation's input %s", f ? "(cuDNN's bn forced)" : "",
                     f ? "kept" : "not kept, noted");
            check(what, sg && (f ? sg->lb[1].act_in != NULL && !noted : sg->lb[1].act_in == NULL && noted) ? 0 : 1, 0);
            cb_exec_destroy(sg);
        }
        unsetenv("CONVBENCH_AUTO_BN");
        cb_net_free(sn);
    }
    setenv("CONVBENCH_AUTO_DW", "fastest", 1); // the depthwise override refuses a bad value the same way
    g = net ? cb_exec_create(net, &o, &err) : NULL;
    check("auto CONVBENCH_AUTO_DW=fastest is refused by name", !g && strstr(err.msg, "CONVBENCH_AUTO_DW") ? 0 : 1, 0);
    cb_exec_destroy(g);
    unsetenv("CONVBENCH_AUTO_DW");
    setenv("CONVBENCH_BN_ACT", "both", 1); // the batch norm's activation: fused or separate, by name
    g = net ? cb_exec_create(net, &o, &err) : NULL;
    check("auto CONVBENCH_BN_ACT=both is refused by name", !g && strstr(err.msg, "CONVBENCH_BN_ACT") ? 0 : 1, 0);
    cb_exec_destroy(g);
    unsetenv("CONVBENCH_BN_ACT");
    setenv("CONVBENCH_BN_ADD", "both", 1); // the sum in the batch norm's pass: fused or separate, by name
    g = net ? cb_exec_create(net, &o, &err) : NULL;
    check("auto CONVBENCH_BN_ADD=both is refused by name", !g && strstr(err.msg, "CONVBENCH_BN_ADD") ? 0 : 1, 0);
    cb_exec_destroy(g);
    unsetenv("CONVBENCH_BN_ADD");
    cb_net_free(net);
    test_layout = CB_LAYOUT_NCHW;
}

// Today's layer kinds on cudnn and auto in every storage (src/cudnn/chan_fmt.cu and cuDNN's
// dilation): layer scale, LayerNorm over channels (ConvNeXt), a dilated convolution, and a small
// net with a squeeze-excitation product (an (N, C, 1, 1) branch broadcast over the pixels), the
// global average pool and a residual sum, its loss and parameter gradients against the reference.
static const char *se_net =
    "{\"name\": \"se\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [3, 9, 11, 8]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 8, 24], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"gp\": {\"parents\": [\"c1\"], \"type\": \"GlobalAvgPool\"},"
    "\"se\": {\"parents\": [\"gp\"], \"type\": \"Convolution\", \"filter\": [1, 1, 24, 24], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"},"
    "\"mul\": {\"parents\": [\"c1\", \"se\"], \"type\": \"Elementwise\", \"operation\": \"mul\"},"
    "\"d2\": {\"parents\": [\"mul\"], \"type\": \"Convolution\", \"filter\": [3, 3, 24, 24], \"padding\": [2, 2], \"dilations\": [2, 2], \"strides\": [1, 1, 1, 1], \"activation_fn\": null},"
    "\"ln\": {\"parents\": [\"d2\"], \"type\": \"LayerNorm\", \"epsilon\": 1e-06},"
    "\"sc\": {\"parents\": [\"ln\"], \"type\": \"Scale\"},"
    "\"sum\": {\"parents\": [\"sc\", \"mul\"], \"type\": \"Elementwise\", \"operation\": \"sum\", \"activation_fn\": null},"
    "\"p\": {\"parents\": [\"sum\"], \"type\": \"GlobalAvgPool\"},"
    "\"fc\": {\"parents\": [\"p\"], \"type\": \"InnerProduct\", \"num_outputs\": 10, \"activation_fn\": null},"
    "\"softmax\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 10}}}";

// After a failing net case: the case again (the same seed) with every buffer its own
// (CONVBENCH_MEMORY=separate), each layer's output gradient against the reference's, last layer
// first, so that the first one off names where the gradients part. With the names of the
// product's inputs (a, s: full-size and (N, C, 1, 1)): how much the reference's sums over pixels
// of dy(product) * a cancel, per image and channel, sum |terms| / |sum| (the conditioning of the
// (N, C, 1, 1) input's gradient).
static void grad_trace(const char *json, const char *backend, cb_precision prec, uint64_t state, const char *prod, const char *full) {
    uint64_t saved = rng_state;
    rng_state = state;
    const char *mem = getenv("CONVBENCH_MEMORY");
    char *keep = mem ? strdup(mem) : NULL;
    setenv("CONVBENCH_MEMORY", "separate", 1);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(json, "trace", &err);
    cb_exec *g = NULL, *r = NULL;
    if (net && exec_pair(net, backend, prec, "trace", &g, &r)) {
        cb_exec *ex[2] = {g, r};
        for (int k = 0; k < 2; k++) {
            cb_exec_forward(ex[k], true, NULL);
            cb_exec_criterion_forward(ex[k], NULL, NULL);
            cb_exec_criterion_backward(ex[k], NULL);
            cb_exec_backward(ex[k], NULL);
        }
        printf("     output gradients, every buffer its own, against the reference:");
        for (int i = net->nlayers - 1; i >= 1; i--) {
            if (!g->lb[i].dy || !r->lb[i].dy) continue;
            size_t n = (size_t)cb_shape_count(net->layers[i].out);
            float *a = download_act(g, i, g->lb[i].dy), *b = download_act(r, i, r->lb[i].dy);
            printf(" %s %.2e", net->layers[i].name, nerr(a, b, n));
            free(a), free(b);
        }
        printf("\n");
        int pi = prod ? cb_net_find(net, prod) : -1, fi = full ? cb_net_find(net, full) : -1;
        if (pi > 0 && fi > 0 && r->lb[pi].dy) {
            cb_shape o = net->layers[pi].out;
            size_t hw = (size_t)(o.h * o.w);
            float *dy = download_act(r, pi, r->lb[pi].dy), *y = download_act(r, fi, r->lb[fi].y);
            double abs2 = 0, sum2 = 0, worst = 0;
            for (size_t q = 0; q < (size_t)(o.n * o.c); q++) {
                double sa = 0, st = 0;
                for (size_t j = 0; j < hw; j++) sa += fabs((double)dy[q * hw + j] * y[q * hw + j]), st += (double)dy[q * hw + j] * y[q * hw + j];
                abs2 += sa * sa, sum2 += st * st;
                if (fabs(st) > 0 && sa / fabs(st) > worst) worst = sa / fabs(st);
            }
            printf("     %s's sums over pixels of d%s * %s: ||sum |terms| || / ||sum|| %.2f, worst image and channel %.1f\n", prod, prod, full,
                   sum2 > 0 ? sqrt(abs2 / sum2) : INFINITY, worst);
            free(dy), free(y);
        }
        cb_exec_destroy(g);
        cb_exec_destroy(r);
        cb_net_free(net);
    } else if (net == NULL) printf("     trace: %s\n", err.msg);
    if (keep) setenv("CONVBENCH_MEMORY", keep, 1);
    else unsetenv("CONVBENCH_MEMORY");
    free(keep);
    rng_state = saved;
}

// every parameter gradient of the named layers, exec g against the reference r (but a batch-normed
// layer's bias, which no step moves), relative error within tol; a batch norm's scale and shift bn_tol
static void check_grads(cb_exec *g, cb_exec *r, const cb_net *net, const char *const *names, int nn, const char *label, double tol,
                        double bn_tol) {
    char what[256];
    for (int j = 0; j < nn; j++) {
        int li = cb_net_find(net, names[j]);
        cb_param pg[6], pr[6];
        int np = cb_exec_params(g, li, pg, 6);
        cb_exec_params(r, li, pr, 6);
        for (int q = 0; q < np; q++) {
            if (!pg[q].grad || (net->layers[li].bn && !strcmp(pg[q].what, "bias"))) continue;
            float *a = download(g, pg[q].grad, (size_t)pg[q].count), *b = download(r, pr[q].grad, (size_t)pr[q].count);
            snprintf(what, sizeof what, "%s d%s/%s", label, names[j], pg[q].what);
            bool bn_param = !strcmp(pg[q].what, "bn_scale") || !strcmp(pg[q].what, "bn_shift");
            check(what, nerr(a, b, (size_t)pg[q].count), bn_param ? bn_tol : tol);
            free(a), free(b);
        }
    }
}

static void se_net_case(const char *backend, cb_precision prec) {
    uint64_t state = rng_state;
    cb_error err = {0};
    cb_net *net = cb_net_load_string(se_net, "se", &err);
    char what[256];
    snprintf(what, sizeof what, "se net %s %s", backend, prec_name(prec));
    if (!net) {
        printf("FAIL %s: %s\n", what, err.msg);
        failed++;
        return;
    }
    cb_exec *g, *r;
    if (!exec_pair(net, backend, prec, what, &g, &r)) return;
    cb_exec *ex[2] = {g, r};
    double loss[2];
    for (int k = 0; k < 2; k++) {
        cb_exec_forward(ex[k], true, NULL);
        cb_exec_criterion_forward(ex[k], &loss[k], NULL);
    }
    int at, flips = adopt_relu_masks(g, r, &at, what); // (before the backward: its buffers may take the outputs' bytes)
    if (flips)
        printf("note se net %s %s: %d ReLU mask flips from layer %s on: the reference's backward at the GPU's masks\n", backend,
               prec_name(prec), flips, net->layers[at].name);
    for (int k = 0; k < 2; k++) {
        cb_exec_criterion_backward(ex[k], NULL);
        cb_exec_backward(ex[k], NULL);
    }
    double tol = prec == CB_PREC_BF16 ? 0.25 : tol_for(backend, prec) * 10;
    int failed_before = failed;
    snprintf(what, sizeof what, "se net %s %s loss %.6f vs %.6f", backend, prec_name(prec), loss[0], loss[1]);
    check(what, fabs(loss[0] - loss[1]) / fabs(loss[1]), tol);
    const char *names[] = {"c1", "se", "d2", "ln", "sc", "fc"};
    // bf16: the first batch norm's scale and shift gradients are 24 sums over every pixel of
    // gradients rounded to 8 bits through 8 layers, with cancellation: 0.269 seen once on the
    // H200 (under memcheck, 93c28ef+), every other run within 0.25
    snprintf(what, sizeof what, "se net %s %s", backend, prec_name(prec));
    check_grads(g, r, net, names, 6, what, tol, prec == CB_PREC_BF16 ? 0.4 : tol);
    // a failure names what the backend chose for every layer and phase (auto's races run on
    // timings), then traces the gradients (grad_trace). The SE gradients 0.3 off in bf16 NHWC
    // (2026-11-27) were one ReLU mask flip at the SE layer, the same on every path: adopt_relu_masks.
    for (int i = 1; failed > failed_before && i < net->nlayers; i++)
        printf("     %s: %s | %s | %s\n", net->layers[i].name, g->lb[i].algo[CB_PHASE_FORWARD], g->lb[i].algo[CB_PHASE_BWD_DATA],
               g->lb[i].algo[CB_PHASE_BWD_FILTER]);
    if (failed > failed_before) grad_trace(se_net, backend, prec, state, "mul", "c1");
    cb_exec_destroy(g);
    cb_exec_destroy(r);
    cb_net_free(net);
}

static void modern_cases(void) {
    cb_layout lays[] = {CB_LAYOUT_NCHW, CB_LAYOUT_NHWC};
    cb_precision precs[] = {CB_PREC_FP32, CB_PREC_BF16};
    const char *bes[] = {"cudnn", "auto"};
    for (int l = 0; l < 2; l++)
        for (int p = 0; p < 2; p++)
            for (int k = 0; k < 2; k++) {
                test_layout = lays[l];
                layer_case(bes[k], precs[p], "Scale C13", 2, 5, 6, 13, "\"type\": \"Scale\"");
                layer_case(bes[k], precs[p], "LayerNorm C24 b3 7x5", 3, 7, 5, 24, "\"type\": \"LayerNorm\", \"epsilon\": 1e-06");
                layer_case(bes[k], precs[p], "LayerNorm C5 b1 4x4", 1, 4, 4, 5, "\"type\": \"LayerNorm\", \"epsilon\": 1e-05");
                // NHWC in vectors, a row in registers (chan_fmt.cu, ln_rows): C 96 four lanes a row
                // (bf16) and eight (fp32), C 768 32 lanes of 3 vectors and of 6
                layer_case(bes[k], precs[p], "LayerNorm C96 b2 5x3", 2, 5, 3, 96, "\"type\": \"LayerNorm\", \"epsilon\": 1e-06");
                layer_case(bes[k], precs[p], "LayerNorm C768 b1 3x2", 1, 3, 2, 768, "\"type\": \"LayerNorm\", \"epsilon\": 1e-06");
                layer_case(bes[k], precs[p], "conv 3x3 dilation 2 C8->16 b2 13x11", 2, 13, 11, 8,
                           "\"type\": \"Convolution\", \"filter\": [3, 3, 8, 16], \"padding\": [2, 2], \"dilations\": [2, 2], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
                layer_case(bes[k], precs[p], "conv 3x3 dilation (2,3) s2 SAME C8->8 b1 15x16", 1, 15, 16, 8,
                           "\"type\": \"Convolution\", \"filter\": [3, 3, 8, 8], \"padding\": \"SAME\", \"dilations\": [2, 3], \"strides\": [1, 2, 2, 1], \"activation_fn\": null");
                layer_case(bes[k], precs[p], "GlobalAvgPool C16 b2 7x7", 2, 7, 7, 16, "\"type\": \"GlobalAvgPool\"");
                se_net_case(bes[k], precs[p]);
            }
    test_layout = CB_LAYOUT_NCHW;
}

// depthwise convolutions on the own storage kernels (auto, $CONVBENCH_AUTO_DW=own) in the four
// storages, each phase's choice checked to be "depthwise"; a dilated one too (cuDNN's otherwise)
static void dw_cases(void) {
    cb_layout lays[] = {CB_LAYOUT_NCHW, CB_LAYOUT_NHWC};
    cb_precision precs[] = {CB_PREC_FP32, CB_PREC_BF16};
    setenv("CONVBENCH_AUTO_DW", "own", 1);
    expect_dw = true;
    for (int l = 0; l < 2; l++)
        for (int p = 0; p < 2; p++) {
            if (lays[l] == CB_LAYOUT_NCHW && precs[p] == CB_PREC_FP32) continue; // the own-algorithm table's (own_algo_cases)
            test_layout = lays[l];
            conv_dw_cases("auto", precs[p]);
            if (lays[l] == CB_LAYOUT_NHWC) { // each stride-1 kernel forced, not only the race's pick
                setenv("CONVBENCH_DW_PAIR", "on", 1);
                conv_dw_cases("auto", precs[p]);
                setenv("CONVBENCH_DW_PAIR", "off", 1);
                conv_dw_cases("auto", precs[p]);
                unsetenv("CONVBENCH_DW_PAIR");
            }
            layer_case("auto", precs[p], "conv dw 3x3 dilation 2 C16 b2", 2, 11, 9, 16,
                       "\"type\": \"Convolution\", \"filter\": [3, 3, 1, 16], \"padding\": [2, 2], \"dilations\": [2, 2], \"strides\": [1, 1, 1, 1], \"groups\": 16, \"activation_fn\": \"relu\"");
            layer_case("auto", precs[p], "conv dw 3x3 s2 C600 b1 (channel slices)", 1, 7, 6, 600,
                       "\"type\": \"Convolution\", \"filter\": [3, 3, 1, 600], \"padding\": [1, 1], \"strides\": [1, 2, 2, 1], \"groups\": 600, \"activation_fn\": null");
        }
    expect_dw = false;
    unsetenv("CONVBENCH_AUTO_DW");
    test_layout = CB_LAYOUT_NCHW;
}

// The own wgmma implicit GEMM on bf16 NHWC storage as it is (auto, $CONVBENCH_AUTO_WGMMA=own), on
// an H100 or H200 (compute capability 9.0; elsewhere it declines and the cases check that nothing
// took it): convolutions with channels in multiples of 64, each phase's choice checked; then a
// residual network of 64 and 128 channels whose wide layers run on it (a stride-2 TF SAME layer's
// backward data on cuDNN's padded copy beside it), its loss and every gradient against the reference.
// Its backward data runs at stride 1 where K (its k-steps' channels) is a multiple of 64.
static const char *wg_net =
    "{\"name\": \"wg\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [3, 10, 12, 8]},"
    "\"c0\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 8, 64], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"r1a\": {\"parents\": [\"c0\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 64], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"r1b\": {\"parents\": [\"r1a\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 64], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"s1\": {\"parents\": [\"r1b\", \"c0\"], \"type\": \"Elementwise\", \"operation\": \"sum\", \"activation_fn\": \"relu\"},"
    "\"r2\": {\"parents\": [\"s1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 64, 128], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\"},"
    "\"r3\": {\"parents\": [\"r2\"], \"type\": \"Convolution\", \"filter\": [1, 1, 128, 64], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"silu\"},"
    "\"gp\": {\"parents\": [\"r3\"], \"type\": \"GlobalAvgPool\"},"
    "\"fc\": {\"parents\": [\"gp\"], \"type\": \"InnerProduct\", \"num_outputs\": 10, \"activation_fn\": null},"
    "\"softmax\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 10}}}";

// spare: the way the trim and the step check reach the own kernel where it lost auto's race
// (cb_dnn_revise): each wide phase is sent back to the cuDNN choice it beat, made to have lost to it
// (its wg_lost_ms set, smaller than any candidate's so that a switch takes it), switched to it under
// a cap of its own workspace, back (undo: cuDNN's choice and workspace again) and to it again; the
// steps below then run the phases that came to the kernel this way.
static int wg_spare_switch(cb_exec *g, const cb_net *net, const char *const *wide, int nwide, const char *tag) {
    int to_wg = 0, bad = 0;
    for (int j = 0; j < nwide; j++) {
        int li = cb_net_find(net, wide[j]);
        dnn_layer *l = cb_dnn_layer(g, li);
        cb_conv_params cp;
        cb_conv_params_of(&net->layers[li], &cp);
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            if (!l->wg[p] || l->wg_rival[p].impl != CB_IMPL_CUDNN) continue;
            cb_lbuf *b = &g->lb[li];
            size_t wg_ws = cb_cuda_wg_store_workspace(&cp, (cb_phase)p, cb_dnn_wg_mode(g)), rival_ws = l->wg_rival[p].workspace;
            // (b->ws as the trim keeps it: from the choice after a switch, back after an undo; a
            // switch leaves it alone)
            bool ok = cb_dnn_revise(g, li, (cb_phase)p, (size_t)-1, false) && !l->wg[p] && b->choice[p].impl == CB_IMPL_CUDNN;
            b->ws[p] = b->choice[p].workspace;
            l->wg_lost_ms[p] = 1e-6;
            ok = ok && b->ws[p] == rival_ws && cb_dnn_revise(g, li, (cb_phase)p, wg_ws, false) && l->wg[p] && b->ws[p] == rival_ws &&
                 b->choice[p].impl == CB_IMPL_OWN && b->choice[p].workspace == wg_ws;
            b->ws[p] = b->choice[p].workspace;
            ok = ok && cb_dnn_revise(g, li, (cb_phase)p, 0, true) && !l->wg[p] && b->choice[p].impl == CB_IMPL_CUDNN &&
                 b->choice[p].workspace == rival_ws;
            b->ws[p] = rival_ws;
            ok = ok && cb_dnn_revise(g, li, (cb_phase)p, wg_ws, false) && l->wg[p] && b->choice[p].workspace == wg_ws;
            b->ws[p] = b->choice[p].workspace;
            if (!ok) printf("FAIL %s: layer %s phase %d: the switches to and from the spare own kernel\n", tag, wide[j], p), bad++;
            to_wg += ok;
        }
    }
    failed += bad;
    return bad ? -1 : to_wg;
}

static void wg_net_case(cb_precision prec, bool spare) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(wg_net, "wg", &err);
    char what[256];
    if (!net) {
        printf("FAIL wg net: %s\n", err.msg);
        failed++;
        return;
    }
    cb_exec *g, *r;
    const bool bf = prec == CB_PREC_BF16, x3 = prec == CB_PREC_FP32;
    char tag[80];
    snprintf(tag, sizeof tag, "%s%s", bf ? "wg net auto bf16" : x3 ? "wg net auto fp32 (3xTF32)" : "wg net auto tf32",
             spare ? ", the kernel as the spare candidate" : "");
    if (!exec_pair(net, "auto", prec, tag, &g, &r)) return;
    bool hopper = cb_exec_choice(g, cb_net_find(net, "r1a"), CB_PHASE_FORWARD)->impl == CB_IMPL_OWN;
    const char *wide[] = {"r1a", "r1b", "r2", "r3"};
    if (spare && hopper) {
        int n = wg_spare_switch(g, net, wide, 4, tag);
        snprintf(what, sizeof what, "%s: %d phases switched to the kernel from cuDNN's choice, and back, and to it", tag, n);
        check(what, n > 0 ? 0 : 1, 0);
    }
    int on_wg = 0, want = 0;
    for (int j = 0; j < 4; j++) {
        int li = cb_net_find(net, wide[j]);
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            const cb_choice *c = cb_exec_choice(g, li, (cb_phase)p);
            bool strided_dgrad = p == CB_PHASE_BWD_DATA && (net->layers[li].p.conv.win.stride_h > 1 || net->layers[li].p.conv.k % (bf ? 64 : 32));
            want += !strided_dgrad;
            on_wg += c->impl == CB_IMPL_OWN &&
                     c->algo == cb_cuda_conv_algo_index(bf ? &cb_conv_algo_igemm_wgmma_bf16 : x3 ? &cb_conv_algo_igemm_wgmma_x3 : &cb_conv_algo_igemm_wgmma_tf32);
        }
    }
    snprintf(what, sizeof what, "%s: %d of the wide layers' %d phases on the wgmma kernel (%s)", tag, on_wg, want,
             hopper ? "compute capability 9.0" : "another GPU: none");
    check(what, on_wg == (hopper ? want : 0) ? 0 : 1, 0);
    cb_exec *ex[2] = {g, r};
    double loss[2];
    for (int step = 0; step < 3; step++) { // SGD steps: the later losses read the updated weights
        for (int k = 0; k < 2; k++) {
            cb_exec_forward(ex[k], true, NULL);
            cb_exec_criterion_forward(ex[k], &loss[k], NULL);
        }
        int at, flips = adopt_relu_masks(g, r, &at, tag);
        if (flips) printf("note wg net step %d: %d ReLU mask flips from layer %s on\n", step, flips, net->layers[at].name);
        for (int k = 0; k < 2; k++) {
            cb_exec_criterion_backward(ex[k], NULL);
            cb_exec_backward(ex[k], NULL);
        }
        snprintf(what, sizeof what, "%s step %d loss %.6f vs %.6f", tag, step, loss[0], loss[1]);
        check(what, fabs(loss[0] - loss[1]) / fabs(loss[1]), x3 ? 1e-4 : 0.25); // (fp32: the precision's own tolerance)
        if (step == 0) { // (batch norms' scale and shift: se_net_case's reason)
            const char *names[] = {"c0", "r1a", "r1b", "r2", "r3", "fc"};
            check_grads(g, r, net, names, 6, tag, x3 ? 1e-3 : 0.25, x3 ? 1e-3 : 0.4);
        }
        for (int k = 0; k < 2; k++) cb_exec_update(ex[k], NULL);
    }
    cb_exec_destroy(g);
    cb_exec_destroy(r);
    cb_net_free(net);
}

static void wg_cases(void) {
    setenv("CONVBENCH_AUTO_WGMMA", "own", 1);
    test_layout = CB_LAYOUT_NHWC;
    int d = 0, maj = 0, min = 0;
    bool hopper = cudaGetDevice(&d) == cudaSuccess && cudaDeviceGetAttribute(&maj, cudaDevAttrComputeCapabilityMajor, d) == cudaSuccess &&
                  cudaDeviceGetAttribute(&min, cudaDevAttrComputeCapabilityMinor, d) == cudaSuccess && maj == 9 && min == 0;
    expect_wg = hopper;
    static const struct { const char *label; int n, h, w, c; const char *body; } cases[] = {
        {"wg conv 3x5 s2 SAME (asymmetric) C64->40 b1 relu", 1, 15, 12, 64,
         "\"filter\": [3, 5, 64, 40], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\""},
        {"wg conv 2x2 s1 SAME (trailing pad) C64->64 b2", 2, 7, 7, 64,
         "\"filter\": [2, 2, 64, 64], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null"},
        {"wg conv 1x3 s1 SAME C128->64 b3 on 9x10", 3, 9, 10, 128,
         "\"filter\": [1, 3, 128, 64], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null"},
        {"wg conv 3x3 pad 1 C64->72 + batch_norm + relu b2", 2, 9, 7, 64,
         "\"filter\": [3, 3, 64, 72], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\""},
        {"wg conv 1x1 C64->24 gelu (the storage's bias pass)", 2, 6, 5, 64,
         "\"filter\": [1, 1, 64, 24], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"gelu\""},
        // leading pads over trailing ([top, left, bottom, right]), which cuDNN lacks: the kernel takes it
        {"wg conv 3x3 pads [2, 1, 0, 1] C64->64 b2", 2, 8, 9, 64,
         "\"filter\": [3, 3, 64, 64], \"padding\": [2, 1, 0, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\""},
        {"wg conv 1x1 s2 C192->256 b1 on 7x7", 1, 7, 7, 192,
         "\"filter\": [1, 1, 192, 256], \"padding\": \"VALID\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char body[400];
        snprintf(body, sizeof body, "\"type\": \"Convolution\", %s", cases[k].body);
        layer_case("auto", CB_PREC_BF16, cases[k].label, cases[k].n, cases[k].h, cases[k].w, cases[k].c, body);
    }
    // three blocks for every tile: each block's pipeline runs on into its next tiles (the 1x1 layer's
    // single k-step each, so the loads ahead span several tiles), and the backward filter's units
    setenv("CONVBENCH_WG_BLOCKS", "3", 1);
    layer_case("auto", CB_PREC_BF16, "wg conv 1x1 C64->64 b3 on 20x20, 3 blocks", 3, 20, 20, 64,
               "\"type\": \"Convolution\", \"filter\": [1, 1, 64, 64], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
    layer_case("auto", CB_PREC_BF16, "wg conv 3x3 s2 SAME (asymmetric) C64->72 b2 on 30x25, 3 blocks", 2, 30, 25, 64,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 64, 72], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": null");
    layer_case("auto", CB_PREC_BF16, "wg conv 3x3 s1 pad 1 C128->128 b2 on 16x16, 3 blocks", 2, 16, 16, 128,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 128, 128], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
    // the same on the cp.async tiles (CONVBENCH_WG_TMA=off), which run where the TMA maps are refused
    setenv("CONVBENCH_WG_TMA", "off", 1);
    layer_case("auto", CB_PREC_BF16, "wg conv 3x3 s2 SAME (asymmetric) C64->72 b2 on 30x25, 3 blocks, cp.async tiles", 2, 30, 25, 64,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 64, 72], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": null");
    layer_case("auto", CB_PREC_BF16, "wg conv 3x3 s1 pad 1 C128->128 b2 on 16x16, 3 blocks, cp.async tiles", 2, 16, 16, 128,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 128, 128], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
    unsetenv("CONVBENCH_WG_TMA");
    unsetenv("CONVBENCH_WG_BLOCKS");
    // a 3x3 64 -> 256 layer of 2 x 32 x 32 pixels: the engine's glue on a multi-tile K (the picker takes
    // 128x128 here; every TMA tile, 256-wide ones included, is checked against float64 by the lab,
    // dev/cuda/wgmma_lab.cu, on odd and real shapes with 3 blocks crossing tile boundaries)
    layer_case("auto", CB_PREC_BF16, "wg conv 3x3 pad 1 C64->256 b2 on 32x32 relu", 2, 32, 32, 64,
               "\"type\": \"Convolution\", \"filter\": [3, 3, 64, 256], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
    // fp32 NHWC storage, each case and the 3-block ones (a block running every tile) in both forms: tf32
    // products under tf32, fp32-accurate 3xTF32 ones under fp32 (within fp32's tolerance of the float64
    // reference, on inputs off any tf32 grid); the kernels' 32-channel (the backward filter's 32-pixel)
    // k-steps, every phase checked against the reference
    static const struct { const char *label; int n, h, w, c, blocks3; const char *body; } tcases[] = {
        {"conv 3x5 s2 SAME (asymmetric) C32->40 b1 relu", 1, 15, 12, 32, 0,
         "\"filter\": [3, 5, 32, 40], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\""},
        {"conv 3x3 pad 1 C96->64 + batch_norm + relu b2", 2, 9, 7, 96, 0,
         "\"filter\": [3, 3, 96, 64], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\""},
        {"conv 2x2 s1 SAME (trailing pad) C64->32 b2", 2, 7, 7, 64, 0,
         "\"filter\": [2, 2, 64, 32], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null"},
        {"conv 1x1 C32->24 gelu (the storage's bias pass)", 2, 6, 5, 32, 0,
         "\"filter\": [1, 1, 32, 24], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"gelu\""},
        {"conv 1x3 s1 SAME C160->96 b3 on 9x10", 3, 9, 10, 160, 0,
         "\"filter\": [1, 3, 160, 96], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null"},
        {"conv 3x3 s1 pad 1 C128->128 b2 on 16x16, 3 blocks", 2, 16, 16, 128, 1,
         "\"filter\": [3, 3, 128, 128], \"padding\": [1, 1], \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\""},
        {"conv 1x1 C64->64 b3 on 20x20, 3 blocks", 3, 20, 20, 64, 1,
         "\"filter\": [1, 1, 64, 64], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\""},
    };
    const cb_precision fprecs[] = {CB_PREC_TF32, CB_PREC_FP32};
    for (int fp = 0; fp < 2; fp++)
        for (size_t k = 0; k < sizeof tcases / sizeof tcases[0]; k++) {
            char body[400], label[160];
            snprintf(body, sizeof body, "\"type\": \"Convolution\", %s", tcases[k].body);
            snprintf(label, sizeof label, "wg %s %s", fprecs[fp] == CB_PREC_TF32 ? "tf32" : "fp32 (3xTF32)", tcases[k].label);
            if (tcases[k].blocks3) setenv("CONVBENCH_WG_BLOCKS", "3", 1);
            layer_case("auto", fprecs[fp], label, tcases[k].n, tcases[k].h, tcases[k].w, tcases[k].c, body);
            unsetenv("CONVBENCH_WG_BLOCKS");
        }
    expect_wg = false;
    wg_net_case(CB_PREC_BF16, false);
    wg_net_case(CB_PREC_TF32, false);
    wg_net_case(CB_PREC_FP32, false);
    wg_net_case(CB_PREC_BF16, true);
    wg_net_case(CB_PREC_TF32, true);
    setenv("CONVBENCH_AUTO_WGMMA", "fastest", 1); // a bad value is refused by name
    cb_error err = {0};
    cb_net *net = cb_net_load_string(wg_net, "wg", &err);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "auto", o.precision = CB_PREC_BF16, o.layout = CB_LAYOUT_NHWC;
    cb_exec *x = net ? cb_exec_create(net, &o, &err) : NULL;
    check("auto CONVBENCH_AUTO_WGMMA=fastest is refused by name", !x && strstr(err.msg, "CONVBENCH_AUTO_WGMMA") ? 0 : 1, 0);
    cb_exec_destroy(x);
    unsetenv("CONVBENCH_AUTO_WGMMA");
    setenv("CONVBENCH_WG_SPARE", "sometimes", 1);
    err = (cb_error){0};
    x = net ? cb_exec_create(net, &o, &err) : NULL;
    check("auto CONVBENCH_WG_SPARE=sometimes is refused by name", !x && strstr(err.msg, "CONVBENCH_WG_SPARE") ? 0 : 1, 0);
    cb_exec_destroy(x);
    unsetenv("CONVBENCH_WG_SPARE");
    cb_net_free(net);
    unsetenv("CONVBENCH_AUTO_WGMMA");
    test_layout = CB_LAYOUT_NCHW;
}

// small-res with dropout before its FC layer: batch norms, routed sums and a mask drawn each step
static const char *graph_net =
    "{\"name\": \"graph\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [5, 12, 11, 5]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [3, 3, 5, 12], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"r1a\": {\"parents\": [\"c1\"], \"type\": \"Convolution\", \"filter\": [1, 1, 12, 6], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"r1b\": {\"parents\": [\"r1a\"], \"type\": \"Convolution\", \"filter\": [3, 3, 6, 12], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"s1\": {\"parents\": [\"r1b\", \"c1\"], \"type\": \"Elementwise\", \"operation\": \"sum\", \"activation_fn\": \"relu\"},"
    "\"r2\": {\"parents\": [\"s1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 12, 16], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"activation_fn\": \"relu\"},"
    "\"gp\": {\"parents\": [\"r2\"], \"type\": \"GlobalAvgPool\"},"
    "\"drop\": {\"parents\": [\"gp\"], \"type\": \"Dropout\", \"dropout_keep_prob\": 0.5},"
    "\"fc\": {\"parents\": [\"drop\"], \"type\": \"InnerProduct\", \"num_outputs\": 10, \"activation_fn\": null},"
    "\"softmax\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 10}}}";

static void launched_step(cb_exec *e, bool criterion) {
    if (!criterion) cb_exec_set_output_grad(e, 1.0f);
    cb_exec_forward(e, true, NULL);
    if (criterion) cb_exec_criterion_forward(e, NULL, NULL), cb_exec_criterion_backward(e, NULL);
    cb_exec_backward(e, NULL);
    cb_exec_update(e, NULL);
}

// A training step recorded as a CUDA graph and replayed (cb_exec_graph_capture) against the same
// steps launched: two execs from one seed take one launched step and an inference forward each
// (which leaves bf16 storage's weight copy current, so the recording must refresh it on purpose),
// then one takes 3 more launched steps and the other 3 replays. Every parameter's change over those
// 3 steps (weights, batch norm's scale, shift and running statistics) must agree. It fails where
// the graph misses work a launched step does: dropout's mask moving on each step (a frozen mask
// changes the FC layer's gradients by O(1)), the update, the sums' routed gradients. Whether it
// catches a missed refresh of the bf16 weight copy is what dev/gpu-graph-mutant.sh asks.
// Tolerance on the change, relative: 1e-4 fp32 (2e-3 where the two execs' choices differ); tf32 and bf16 0.15: "auto" may race other
// algorithms for the two execs, which round differently (auto tf32 measured 1.0-1.6e-2 on the H200
// at 6042e2d, up to 3.24e-2 on a later seed at c148e4e, 6.03e-2 on a batch norm's shift at
// 3d37d0c); what the test is for moves it by O(1).
// Learning rate $CB_TEST_GRAPH_LR (default 0.01).
static void graph_case(const char *backend, cb_precision prec, cb_layout lay, bool criterion) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(graph_net, "graph", &err);
    char what[256];
    snprintf(what, sizeof what, "graph %s %s %s%s", backend, prec_name(prec), lay == CB_LAYOUT_NHWC ? "nhwc" : "nchw",
             criterion ? "" : " (no criterion)");
    if (!net) {
        printf("FAIL %s: %s\n", what, err.msg);
        failed++;
        return;
    }
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.precision = prec, o.seed = rng_state | 1, o.backend = backend, o.layout = lay;
    const char *lr = getenv("CB_TEST_GRAPH_LR");
    if (lr && atof(lr) > 0) o.lr = (float)atof(lr);
    cb_exec *x[2] = {cb_exec_create(net, &o, &err), NULL};
    if (x[0]) x[1] = cb_exec_create(net, &o, &err);
    if (!x[0] || !x[1]) {
        printf("FAIL %s: %s\n", what, err.msg);
        failed++;
    } else if (!cb_exec_can_graph(x[1])) {
        printf("FAIL %s: cb_exec_can_graph is false\n", what);
        failed++;
    } else {
        for (int k = 0; k < 2; k++) launched_step(x[k], criterion), cb_exec_forward(x[k], false, NULL);
        int n = net->nlayers;
        float **before = calloc((size_t)n * 6, sizeof *before);
        for (int i = 1; i < n; i++) {
            cb_param p[6];
            int np = cb_exec_params(x[1], i, p, 6);
            for (int q = 0; q < np; q++) before[i * 6 + q] = download(x[1], p[q].data, (size_t)p[q].count);
        }
        for (int k = 0; k < 3; k++) launched_step(x[0], criterion);
        cb_status st = cb_exec_graph_capture(x[1], criterion, true, &err);
        if (st != CB_OK) {
            printf("FAIL %s: capture: %s\n", what, err.msg);
            failed++;
        } else {
            for (int k = 0; k < 3; k++) st |= cb_exec_graph_replay(x[1]);
            cb_exec_timer_start(x[1]);
            cb_exec_timer_stop(x[1]); // waits for the replays
            char w2[320];
            snprintf(w2, sizeof w2, "%s: 3 replays ran", what);
            check(w2, st == CB_OK && cudaGetLastError() == cudaSuccess ? 0 : 1, 0);
            // fp32: 1e-4 where both execs run the same algorithms; where auto's races chose differently (fp32
            // NCHW, H200 at e6f9c61: 1.6-4.9e-4 on the first layers' changes, each exec's choices its own), 2e-3
            int differ = 0;
            for (int i = 1; i < n; i++)
                for (int p = 0; p < CB_PHASE_COUNT; p++) {
                    const cb_choice *ca = cb_exec_choice(x[0], i, (cb_phase)p), *cb = cb_exec_choice(x[1], i, (cb_phase)p);
                    if (ca->impl != cb->impl || ca->algo != cb->algo) {
                        if (!differ++) printf("note %s: the two execs' choices differ, first at '%s' phase %d: %s | %s\n", what, net->layers[i].name, p,
                                               x[0]->lb[i].algo[p], x[1]->lb[i].algo[p]);
                    }
                }
            double tol = prec == CB_PREC_FP32 ? (differ ? 2e-3 : 1e-4) : 0.15;
            for (int i = 1; i < n; i++) {
                cb_param pa[6], pb[6];
                int np = cb_exec_params(x[0], i, pa, 6);
                cb_exec_params(x[1], i, pb, 6);
                for (int q = 0; q < np; q++) {
                    size_t c = (size_t)pa[q].count;
                    float *a = download(x[0], pa[q].data, c), *b = download(x[1], pb[q].data, c), *b0 = before[i * 6 + q];
                    double moved = 0;
                    for (size_t j = 0; j < c; j++) moved += fabs((double)a[j] - b0[j]);
                    for (size_t j = 0; j < c; j++) a[j] -= b0[j], b[j] -= b0[j];
                    snprintf(w2, sizeof w2, "%s %s/%s change over 3 steps", what, net->layers[i].name, pa[q].what);
                    if (moved > 0) check(w2, nerr(b, a, c), tol); // a parameter no step moves (bias before a batch norm)
                    free(a), free(b);
                }
            }
            // another learning rate drops the graph: a replay is refused, not run with the old one
            cb_exec_set_lr(x[1], o.lr * 0.5f);
            snprintf(w2, sizeof w2, "%s: a replay refused after set_lr", what);
            check(w2, cb_exec_graph_replay(x[1]) == CB_STATUS_ARG ? 0 : 1, 0);
        }
        for (int i = 0; i < n * 6; i++) free(before[i]);
        free(before);
    }
    cb_exec_destroy(x[0]);
    cb_exec_destroy(x[1]);
    cb_net_free(net);
}

// cuDNN's training batch norm through the Ex API in persistent mode ($CONVBENCH_DNN_BN=ex, NHWC):
// every batch-norm case (layers, fused after a convolution with and without ReLU, the running
// statistics, the small network; auto forced to cuDNN, to the own kernels and raced) against the
// reference with it on; then a standalone layer must record it (CB_CHOICE_BN_PERSISTENT) on auto's
// forced cuDNN path and on the cudnn backend by default ($CONVBENCH_DNN_BN unset), with 32 channels,
// and must not with 6 (its kernels fault on them: the legacy call); the small networks on the
// cudnn backend by default (the residual one has 6 and 7 channels); a bad value refused by name (and
// one of CONVBENCH_WEIGHT_COPY's).
static const cb_choice *bn_choice_of(cb_net **net, cb_exec **g, const char *backend, cb_precision prec, int c, cb_error *err) {
    char json[256];
    snprintf(json, sizeof json, "{\"name\": \"n\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [4, 6, 6, %d]},"
             " \"L\": {\"parents\": [\"data\"], \"type\": \"BatchNorm\", \"epsilon\": 0.001}}}", c);
    *net = cb_net_load_string(json, "bn", err);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = backend, o.layout = CB_LAYOUT_NHWC, o.precision = prec;
    *g = *net ? cb_exec_create(*net, &o, err) : NULL;
    if (!*g) printf("note bn_choice_of %s C%d: %s\n", backend, c, err->msg);
    return *g ? cb_exec_choice(*g, 1, CB_PHASE_FORWARD) : NULL;
}

static void dnn_bn_cases(void) {
    setenv("CONVBENCH_DNN_BN", "ex", 1);
    bn_cases();
    cb_precision precs[] = {CB_PREC_FP32, CB_PREC_BF16};
    for (int pass = 0; pass < 2; pass++) { // auto forced to cuDNN under ex; the cudnn backend by default
        if (pass == 0) setenv("CONVBENCH_AUTO_BN", "cudnn", 1);
        else unsetenv("CONVBENCH_AUTO_BN"), unsetenv("CONVBENCH_DNN_BN");
        const char *be = pass ? "cudnn" : "auto";
        for (int p = 0; p < 2; p++)
            for (int c = 6; c <= 32; c += 26) {
                cb_net *net;
                cb_exec *g;
                cb_error err = {0};
                const cb_choice *bc = bn_choice_of(&net, &g, be, precs[p], c, &err);
                char what[160];
                bool want = c % 8 == 0;
                test_layout = CB_LAYOUT_NHWC;
                snprintf(what, sizeof what, "%s %s C%d %s %s the persistent batch norm [%s]", be, prec_name(precs[p]), c,
                         pass ? "by default" : "CONVBENCH_DNN_BN=ex", want ? "runs" : "does not run", bc && bc->name ? bc->name : "?");
                check(what, bc && bc->impl == CB_IMPL_CUDNN && !(bc->flags & CB_CHOICE_BN_PERSISTENT) == !want ? 0 : 1, 0);
                cb_exec_destroy(g);
                cb_net_free(net);
            }
    }
    test_layout = CB_LAYOUT_NHWC;
    network_case_of("cudnn", CB_PREC_FP32, SMALL_RES);
    network_case_of("cudnn", CB_PREC_BF16, SMALL_RES);
    network_case_of("cudnn", CB_PREC_TF32, SMALL_BN);
    setenv("CONVBENCH_DNN_BN", "sometimes", 1);
    cb_net *net;
    cb_exec *g;
    cb_error err = {0};
    bn_choice_of(&net, &g, "auto", CB_PREC_FP32, 32, &err);
    check("CONVBENCH_DNN_BN=sometimes refused by name", !g && net && strstr(err.msg, "CONVBENCH_DNN_BN") ? 0 : 1, 0);
    cb_exec_destroy(g);
    unsetenv("CONVBENCH_DNN_BN");
    cb_net_free(net);
    setenv("CONVBENCH_WEIGHT_COPY", "sometimes", 1); // (the storage's weight copies: src/storage/storage.c)
    err = (cb_error){0};
    bn_choice_of(&net, &g, "cudnn", CB_PREC_BF16, 32, &err);
    check("CONVBENCH_WEIGHT_COPY=sometimes refused by name", !g && net && strstr(err.msg, "CONVBENCH_WEIGHT_COPY") ? 0 : 1, 0);
    cb_exec_destroy(g);
    unsetenv("CONVBENCH_WEIGHT_COPY");
    cb_net_free(net);
    test_layout = CB_LAYOUT_NCHW;
}

// The graph operations src/cudnn/graph.c builds from the cudnn backend's legacy descriptors, every
// phase, finalised without a GPU (cuDNN checks the attributes, shapes and types there): fp32 NCHW
// and NHWC, bf16 NHWC; 3x3 stride 1 and 2, 1x1, 7x7 stride 2 on 3 channels, dilation 2, batch 1;
// grouped and depthwise ones (the groups implied by the filter's channels). Runs under --part dnngraph-desc,
// in CI too.
static void dnn_graph_desc_cases(void) {
    static const struct { const char *label; int n, c, h, w, k, r, s, pad, stride, dil, groups; } cases[] = {
        {"3x3 s1 C64->64 b2", 2, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1},   {"3x3 s2 C32->48 b1", 1, 32, 15, 15, 48, 3, 3, 1, 2, 1, 1},
        {"1x1 C256->64 b4", 4, 256, 7, 7, 64, 1, 1, 0, 1, 1, 1},       {"7x7 s2 C3->64 b2", 2, 3, 30, 30, 64, 7, 7, 3, 2, 1, 1},
        {"3x3 dil 2 C16->16 b1", 1, 16, 12, 12, 16, 3, 3, 2, 1, 2, 1}, {"5x3 C8->12 b3", 3, 8, 9, 11, 12, 5, 3, 1, 1, 1, 1},
        {"3x3 grouped 2", 2, 16, 8, 8, 16, 3, 3, 1, 1, 1, 2},         {"5x5 depthwise C33 b2", 2, 33, 12, 12, 33, 5, 5, 2, 1, 1, 33},
        {"3x3 s2 depthwise C64 b1", 1, 64, 15, 15, 64, 3, 3, 1, 2, 1, 64},
    };
    static const struct { const char *name; cudnnTensorFormat_t f; cudnnDataType_t t; } fmts[] = {
        {"fp32 nchw", CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT}, {"fp32 nhwc", CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT},
        {"bf16 nhwc", CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16}};
    static const char *phases[3] = {"forward", "backward data", "backward filter"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int f = 0; f < 3; f++) {
            cudnnTensorDescriptor_t xd = NULL, yd = NULL;
            cudnnFilterDescriptor_t wd = NULL;
            cudnnConvolutionDescriptor_t cd = NULL;
            int er = (cases[c].r - 1) * cases[c].dil + 1, es = (cases[c].s - 1) * cases[c].dil + 1;
            int p = (cases[c].h + 2 * cases[c].pad - er) / cases[c].stride + 1, q = (cases[c].w + 2 * cases[c].pad - es) / cases[c].stride + 1;
            bool made = cudnnCreateTensorDescriptor(&xd) == 0 && cudnnCreateTensorDescriptor(&yd) == 0 &&
                        cudnnCreateFilterDescriptor(&wd) == 0 && cudnnCreateConvolutionDescriptor(&cd) == 0 &&
                        cudnnSetTensor4dDescriptor(xd, fmts[f].f, fmts[f].t, cases[c].n, cases[c].c, cases[c].h, cases[c].w) == 0 &&
                        cudnnSetTensor4dDescriptor(yd, fmts[f].f, fmts[f].t, cases[c].n, cases[c].k, p, q) == 0 &&
                        cudnnSetFilter4dDescriptor(wd, fmts[f].t, fmts[f].f, cases[c].k, cases[c].c / cases[c].groups, cases[c].r,
                                                   cases[c].s) == 0 &&
                        cudnnSetConvolution2dDescriptor(cd, cases[c].pad, cases[c].pad, cases[c].stride, cases[c].stride, cases[c].dil,
                                                        cases[c].dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) == 0 &&
                        cudnnSetConvolutionGroupCount(cd, cases[c].groups) == 0;
            for (int ph = 0; ph < 3; ph++) {
                char what[160];
                snprintf(what, sizeof what, "graph op %s %s %s%s", fmts[f].name, cases[c].label, phases[ph], made ? "" : " (legacy descriptors failed)");
                bool ok = made && cb_dnn_graph_op_ok(xd, wd, yd, cd, (cb_phase)ph);
                check(what, ok ? 0 : 1, 0);
            }
            if (xd) cudnnDestroyTensorDescriptor(xd);
            if (yd) cudnnDestroyTensorDescriptor(yd);
            if (wd) cudnnDestroyFilterDescriptor(wd);
            if (cd) cudnnDestroyConvolutionDescriptor(cd);
        }
}

// backend cudnn refuses setting var to value by name (no executor made); var unset after
static void env_refused(cb_net *net, const char *var, const char *value) {
    setenv(var, value, 1);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "cudnn";
    cb_error err = {0};
    cb_exec *x = net ? cb_exec_create(net, &o, &err) : NULL;
    char what[120];
    snprintf(what, sizeof what, "%s=%s refused by name", var, value);
    check(what, !x && strstr(err.msg, var) ? 0 : 1, 0);
    cb_exec_destroy(x);
    unsetenv(var);
}

// cuDNN's graph API forced on the cudnn backend ($CONVBENCH_DNN_GRAPH=force: the fastest graph
// plan wherever one runs): the conv cases in fp32 NCHW (no graph plan: fp32 keeps the legacy ones), tf32 and
// bf16 NHWC against the reference, each convolution cuDNN computes having run its phases on graph
// plans; then the small networks' SGD steps against the reference; and a bad value refused by name.
// The plan-time check's kernels (src/cuda/elementwise.cu): random operands in [-1, 1), fp32 and bf16,
// neither constant nor all of one sign; ||a - b|| / ||b|| against the host's, 0 for a buffer and
// itself, INFINITY where a holds a NaN
static void check_kernel_cases(void) {
    enum { N = 4099 };
    float *d = NULL, h[2][N];
    uint16_t hb[N];
    bool ok = cudaMalloc((void **)&d, 2 * N * sizeof(float)) == cudaSuccess;
    ok = ok && cb_cuda_fill_uniform(N, d, 0, 11) == 0 && cb_cuda_fill_uniform(N, d + N, 0, 12) == 0 &&
         cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess;
    double num = 0, den = 0, lo = 1, hi = -1, mean = 0;
    for (int i = 0; ok && i < N; i++) {
        lo = fmin(lo, h[0][i]), hi = fmax(hi, h[0][i]), mean += h[0][i] / N;
        num += ((double)h[0][i] - h[1][i]) * ((double)h[0][i] - h[1][i]), den += (double)h[1][i] * h[1][i];
    }
    printf("  plan-time check: uniform fp32 in [%.3f, %.3f], mean %.3f\n", lo, hi, mean);
    check("plan-time check: fp32 values uniform in [-1, 1)", ok && lo >= -1 && hi < 1 && lo < -0.9 && hi > 0.9 && fabs(mean) < 0.05 ? 0 : 1, 0);
    double want = sqrt(num / den), got = ok ? cb_cuda_nerr(N, d, d + N, 0) : -1;
    check("plan-time check: ||a - b|| / ||b|| as the host's", fabs(got - want) / want, 1e-12);
    check("plan-time check: a buffer against itself", ok ? cb_cuda_nerr(N, d, d, 0) : 1, 0);
    float nan = NAN;
    ok = ok && cudaMemcpy(d + 17, &nan, 4, cudaMemcpyHostToDevice) == cudaSuccess;
    check("plan-time check: a NaN is off by any bound", ok && isinf(cb_cuda_nerr(N, d, d + N, 0)) ? 0 : 1, 0);
    ok = ok && cb_cuda_fill_uniform(N, d, 1, 13) == 0 && cudaMemcpy(hb, d, sizeof hb, cudaMemcpyDeviceToHost) == cudaSuccess;
    int neg = 0, distinct = 0;
    bool in = true;
    for (int i = 0; ok && i < N; i++) {
        uint32_t u = (uint32_t)hb[i] << 16;
        float v;
        memcpy(&v, &u, 4);
        in = in && v >= -1 && v < 1, neg += v < 0, distinct += i > 0 && hb[i] != hb[i - 1];
    }
    check("plan-time check: bf16 values in [-1, 1), of both signs", ok && in && neg > N / 3 && neg < 2 * N / 3 && distinct > N / 2 ? 0 : 1, 0);
    cudaFree(d);
}

static void dnn_graph_cases(void) {
    check_kernel_cases();
    setenv("CONVBENCH_DNN_GRAPH", "force", 1);
    cb_layout saved = test_layout;
    test_layout = CB_LAYOUT_NCHW;
    expect_graph = 1; // (fp32 too: each plan checked against the legacy FMA algorithm, src/cudnn/graph.c)
    conv_cases("cudnn", CB_PREC_FP32);
    conv_cases("cudnn", CB_PREC_TF32);
    test_layout = CB_LAYOUT_NHWC;
    conv_cases("cudnn", CB_PREC_FP32);
    conv_cases("cudnn", CB_PREC_TF32);
    graph_grouped = 0;
    conv_cases("cudnn", CB_PREC_BF16);
    // (depthwise and grouped convolutions race cuDNN's graph engines too: some of bf16 NHWC's must take them)
    printf("  bf16 NHWC grouped convolution cases on graph-API plans: %d\n", graph_grouped);
    check("bf16 NHWC grouped convolutions: some on graph-API plans (forced)", graph_grouped > 0 ? 0 : 1, 0);
    // the check keeps out what is off: under a bound of 0, forced, a tf32 phase runs a graph plan
    // only where its result equals the legacy FMA algorithm's (an FMA engine), and the tensor-core
    // engines' phases go back to the legacy algorithms (some must)
    setenv("CONVBENCH_DNN_GRAPH_TOL", "0", 1);
    bool saved_small = small_only;
    small_only = true;
    expect_graph = 2, graph_kept_out = 0, graph_noted = 0;
    snprintf(pick_tag, sizeof pick_tag, " graph tol 0");
    conv_cases("cudnn", CB_PREC_TF32);
    printf("  graph plans forced under a bound of 0: %d cuDNN phases on legacy algorithms\n", graph_kept_out);
    check("graph plans forced under a bound of 0: phases kept out", graph_kept_out > 0 ? 0 : 1, 0);
    check("graph plans forced under a bound of 0: the plans left out noted", graph_noted > 0 ? 0 : 1, 0);
    pick_tag[0] = 0;
    small_only = saved_small;
    unsetenv("CONVBENCH_DNN_GRAPH_TOL");
    expect_graph = 0;
    network_case_of("cudnn", CB_PREC_BF16, SMALL_RES);
    network_case_of("cudnn", CB_PREC_TF32, SMALL_BN);
    test_layout = CB_LAYOUT_NCHW;
    network_case_of("cudnn", CB_PREC_FP32, SMALL_BN);
    network_case_of("auto", CB_PREC_FP32, SMALL_RES);
    test_layout = saved;
    cb_error err = {0};
    cb_net *net = cb_net_load_string(graph_net, "graph", &err);
    env_refused(net, "CONVBENCH_DNN_GRAPH", "sometimes");
    env_refused(net, "CONVBENCH_CONCAT", "memcpy");
    const char *bad_plans[] = {"0", "49", "6x", "-1", "firsts"};
    for (int k = 0; k < 5; k++) env_refused(net, "CONVBENCH_DNN_GRAPH_PLANS", bad_plans[k]);
    const char *bad_tol[] = {"-1e-3", "2", "1e-3x", "loose"};
    for (int k = 0; k < 4; k++) env_refused(net, "CONVBENCH_DNN_GRAPH_TOL", bad_tol[k]);
    env_refused(net, "CONVBENCH_DNN_CPAD", "sometimes");
    env_refused(net, "CONVBENCH_DNN_GRAPH_RTC", "grouped-only");
    env_refused(net, "CONVBENCH_BN_PERIODIC", "sometimes");
    env_refused(net, "CONVBENCH_POOL_RS", "sometimes");
    env_refused(net, "CONVBENCH_CHAN_VEC", "wide");
    env_refused(net, "CONVBENCH_DW_PAIR", "yes");
    env_refused(net, "CONVBENCH_POOL_SCATTER", "atomics");
    env_refused(net, "CONVBENCH_FUSE_EPILOGUE", "sometimes");
    cb_net_free(net);
}

// Every algorithm cuDNN offers these shapes, not only the fastest: a race decided by timings can
// take any of them (compute-sanitizer's timings once gave the SE net's gradients 0.3 off in bf16
// NHWC under auto, 2026-11-27, a path the plain runs never took). $CONVBENCH_DNN_PICK=K makes
// each convolution phase take the K-th of cudnnFind's list that runs, and, with
// $CONVBENCH_DNN_GRAPH=force, the K-th graph plan that ran (the last where fewer): the odd small
// convolutions, the SE net and the small residual net against the reference, for K from 0 to
// $CB_TEST_PICKS - 1 (default 6), in fp32 NCHW, tf32 NHWC and bf16 NHWC and NCHW.
// The step check's switches (cb_dnn_revise) forced: $CONVBENCH_STEP_CHECK=force switches every
// convolution phase on cuDNN that has another candidate within its workspace (legacy or graph, either
// way) and keeps it, so the layer and network cases run the next candidates against the reference;
// undo switches each and back. In fp32 NCHW, tf32 and bf16 NHWC on cudnn, and bf16 on auto. The
// graph net under force must have switched some phase, and said so in one note.
static void step_check_cases(void) {
    struct { cb_layout lay; cb_precision prec; } st[] = {{CB_LAYOUT_NCHW, CB_PREC_FP32}, {CB_LAYOUT_NHWC, CB_PREC_TF32}, {CB_LAYOUT_NHWC, CB_PREC_BF16}};
    bool saved_small = small_only;
    cb_layout saved_layout = test_layout;
    small_only = true;
    const char *modes[] = {"force", "undo"};
    for (int m = 0; m < 2; m++) {
        setenv("CONVBENCH_STEP_CHECK", modes[m], 1);
        snprintf(pick_tag, sizeof pick_tag, " step-check %s", modes[m]);
        for (int s = 0; s < 3; s++) {
            test_layout = st[s].lay;
            if (m == 0) conv_cases("cudnn", st[s].prec);
            network_case_of("cudnn", st[s].prec, SMALL_RES);
        }
        test_layout = CB_LAYOUT_NHWC;
        network_case_of("auto", CB_PREC_BF16, SMALL_RES);
    }
    pick_tag[0] = 0;
    small_only = saved_small;
    test_layout = saved_layout;
    setenv("CONVBENCH_STEP_CHECK", "force", 1);
    cb_error err = {0};
    cb_net *net = cb_net_load_string(graph_net, "graph", &err);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "cudnn", o.precision = CB_PREC_BF16, o.layout = CB_LAYOUT_NHWC, o.train = true;
    cb_exec *e = net ? cb_exec_create(net, &o, &err) : NULL;
    int sw = 0, noted = 0;
    for (int i = 1; e && i < net->nlayers; i++)
        for (int p = 0; p < CB_PHASE_COUNT; p++) sw += (cb_exec_choice(e, i, (cb_phase)p)->flags & CB_CHOICE_STEP_CHECKED) != 0;
    for (int k = 0; e && k < cb_exec_note_count(e); k++) noted += strstr(cb_exec_note_at(e, k), "step check") != NULL;
    printf("  step check forced on the graph net (cudnn bf16 NHWC): %d phases switched, %d notes\n", sw, noted);
    check("step check force: phases switched and noted", e && sw > 0 && noted == 1 ? 0 : 1, 0);
    cb_exec_destroy(e);
    unsetenv("CONVBENCH_STEP_CHECK");
    env_refused(net, "CONVBENCH_STEP_CHECK", "always");
    cb_net_free(net);
}

static void pick_cases(void) {
    const char *np = getenv("CB_TEST_PICKS");
    int picks = np && atoi(np) > 0 ? atoi(np) : 6;
    struct { cb_layout lay; cb_precision prec; } st[] = {
        {CB_LAYOUT_NCHW, CB_PREC_FP32}, {CB_LAYOUT_NHWC, CB_PREC_TF32}, {CB_LAYOUT_NHWC, CB_PREC_BF16}, {CB_LAYOUT_NCHW, CB_PREC_BF16}};
    bool saved_small = small_only;
    cb_layout saved_layout = test_layout;
    small_only = true;
    for (int s = 0; s < 4; s++)
        for (int graph = 0; graph < 2; graph++)
            for (int k = 0; k < picks; k++) {
                char v[16];
                snprintf(v, sizeof v, "%d", k);
                setenv("CONVBENCH_DNN_PICK", v, 1);
                setenv("CONVBENCH_DNN_GRAPH", graph ? "force" : "off", 1);
                // (every plan picked timed: the race times the first of each list by default)
                char np_s[16];
                snprintf(np_s, sizeof np_s, "%d", picks < 48 ? picks : 48);
                setenv("CONVBENCH_DNN_GRAPH_PLANS", np_s, 1);
                snprintf(pick_tag, sizeof pick_tag, " pick %d%s", k, graph ? " graph" : "");
                test_layout = st[s].lay;
                expect_graph = graph ? 1 : -1;
                conv_cases("cudnn", st[s].prec);
                expect_graph = 0;
                se_net_case("cudnn", st[s].prec);
                network_case_of("cudnn", st[s].prec, SMALL_RES);
            }
    unsetenv("CONVBENCH_DNN_PICK");
    unsetenv("CONVBENCH_DNN_GRAPH");
    unsetenv("CONVBENCH_DNN_GRAPH_PLANS");
    pick_tag[0] = 0;
    small_only = saved_small;
    test_layout = saved_layout;
    cb_error err = {0};
    cb_net *net = cb_net_load_string(graph_net, "graph", &err);
    const char *bad[] = {"-1", "48", "2x", "first"};
    for (int k = 0; k < 4; k++) env_refused(net, "CONVBENCH_DNN_PICK", bad[k]);
    cb_net_free(net);
    step_check_cases();
}

// A net too large for the GPU is refused in one line that says so and how much memory was free
// (cb_cuda_alloc_why), a NOMEM status, and no crash: VGG-16 at batch 2^16 on each GPU backend.
static void oom_cases(void) {
    const char *bes[] = {"cuda", "cudnn", "auto"};
    for (int k = 0; k < 3; k++) {
        cb_error err = {0};
        cb_net *net = cb_net_load("vgg16", &err);
        if (!net || cb_net_set_batch(net, 1 << 16, &err) != CB_OK) {
            printf("FAIL out of memory %s: %s\n", bes[k], err.msg);
            failed++;
            cb_net_free(net);
            continue;
        }
        cb_exec_opts o;
        cb_exec_opts_default(&o);
        o.backend = bes[k];
        cb_exec *e = cb_exec_create(net, &o, &err);
        char what[200];
        snprintf(what, sizeof what, "VGG-16 b65536 on %s refused: %.120s", bes[k], err.msg);
        check(what, !e && err.status == CB_STATUS_NOMEM && strstr(err.msg, "out of device memory") && strstr(err.msg, "GiB free") ? 0 : 1, 0);
        cb_exec_destroy(e);
        cb_net_free(net);
    }
}

// The growable arena (src/cuda/vmm.c): a buffer grown in place keeps its address and its bytes and
// holds what is written past its first end; growing past the reserve is refused. Then AlexNet b16
// tf32 NHWC on cudnn and auto, three SGD steps with the workspaces placed as by default (past the
// arena's end where no gap holds one, the arena grown) and with CONVBENCH_WORKSPACE=arena (a
// buffer outside): the same losses (the same seed and, but for the races' timing, the same
// algorithms: within tf32's tolerance), the default's planned peak no higher.
static void ws_grow_cases(void) {
    cb_error err = {0};
    cb_net *small = cb_net_load_string(graph_net, "graph", &err);
    cb_exec_opts o;
    cb_exec_opts_default(&o);
    o.backend = "cudnn";
    setenv("CONVBENCH_WORKSPACE", "arena", 1); // (its own arena an ordinary buffer: the one growable mapping is the test's)
    cb_exec *e = small ? cb_exec_create(small, &o, &err) : NULL;
    unsetenv("CONVBENCH_WORKSPACE");
    if (!e) {
        printf("FAIL growable arena: %s\n", err.msg);
        failed++;
        cb_net_free(small);
        return;
    }
    size_t a = (size_t)3 << 20, r = (size_t)64 << 20, b = (size_t)40 << 20;
    unsigned char *h = malloc(b), *back = malloc(b);
    for (size_t k = 0; k < b; k++) h[k] = (unsigned char)(urand() * 255);
    char *p = e->be->alloc_growable(e, a, r);
    bool grew = false, refused = false, same = false;
    if (p) {
        cudaMemcpy(p, h, a, cudaMemcpyHostToDevice);
        grew = e->be->grow(e, p, b);
        if (grew) {
            cudaMemcpy(p + a, h + a, b - a, cudaMemcpyHostToDevice);
            cudaMemcpy(back, p, b, cudaMemcpyDeviceToHost);
            same = cudaGetLastError() == cudaSuccess && !memcmp(back, h, b);
        }
        refused = !e->be->grow(e, p, r + ((size_t)64 << 20));
        e->be->release(e, p);
    }
    check("growable arena: 3 MiB grown to 40 in place, every byte kept and written, past the reserve refused",
          p && grew && same && refused && cudaGetLastError() == cudaSuccess ? 0 : 1, 0);
    free(h);
    free(back);
    cb_exec_destroy(e);
    cb_net_free(small);
    cb_net *net = cb_net_load("alexnet", &err);
    if (!net || cb_net_set_batch(net, 16, &err) != CB_OK) {
        printf("FAIL growable arena, alexnet: %s\n", err.msg);
        failed++;
        cb_net_free(net);
        return;
    }
    const char *bes[] = {"cudnn", "auto"};
    for (int k = 0; k < 2; k++) {
        double loss[2][3] = {{0}};
        size_t peak[2] = {0, 0}, grown = 0, outside[2] = {0, 0};
        for (int m = 0; m < 2; m++) {
            if (m) setenv("CONVBENCH_WORKSPACE", "arena", 1);
            cb_exec_opts_default(&o);
            o.backend = bes[k], o.precision = CB_PREC_TF32, o.layout = CB_LAYOUT_NHWC, o.seed = 9, o.memory_slack = 0;
            cb_exec *x = cb_exec_create(net, &o, &err);
            unsetenv("CONVBENCH_WORKSPACE");
            if (!x) {
                printf("FAIL growable arena, alexnet %s: %s\n", bes[k], err.msg);
                failed++;
                break;
            }
            for (int s = 0; s < 3; s++) {
                cb_exec_forward(x, true, NULL);
                cb_exec_criterion_forward(x, &loss[m][s], NULL);
                cb_exec_criterion_backward(x, NULL);
                cb_exec_backward(x, NULL);
                cb_exec_update(x, NULL);
            }
            peak[m] = cb_exec_peak_bytes(x), outside[m] = x->ws_bytes;
            if (!m) grown = x->arena_grown;
            cb_exec_destroy(x);
        }
        double worst = 0;
        for (int s = 0; s < 3; s++) worst = fmax(worst, fabs(loss[0][s] - loss[1][s]) / fmax(fabs(loss[1][s]), 1e-6));
        char what[300];
        snprintf(what, sizeof what,
                 "alexnet b16 tf32 nhwc %s: grown arena %.1f MiB (outside %.1f) vs outside %.1f MiB: peak %.1f vs %.1f MiB, losses %.6f %.6f %.6f, worst %.1e",
                 bes[k], grown / 1048576.0, outside[0] / 1048576.0, outside[1] / 1048576.0, peak[0] / 1048576.0, peak[1] / 1048576.0,
                 loss[0][0], loss[0][1], loss[0][2], worst);
        check(what, peak[0] > 0 && peak[0] <= peak[1] + ((size_t)2 << 20) && worst < 2e-3 && isfinite(loss[0][2]) ? 0 : 1, 0);
    }
    cb_net_free(net);
}

// A max pool's argmax as the GPU backends keep it: one byte an output where the window has at
// most 255 taps, 4 above (cb_cuda_pool_argmax_item); the arena reserves that and no more, and
// the pool's gradient stays the reference's (its cases run on these buffers)
static void argmax_bytes_cases(void) {
    const char *bes[] = {"cuda", "cudnn", "auto"};
    struct { int hw, win, stride; size_t item; } cs[] = {{9, 3, 2, 1}, {40, 17, 1, 4}}; // (outputs: 160 and 5,760)
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 2; c++) {
            char json[512];
            snprintf(json, sizeof json,
                     "{\"name\": \"am\", \"layers\": {\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [2, %d, %d, 5]},"
                     "\"p\": {\"parents\": [\"data\"], \"type\": \"Pooling\", \"ksize\": [1, %d, %d, 1],"
                     " \"strides\": [1, %d, %d, 1], \"padding\": \"VALID\"}}}",
                     cs[c].hw, cs[c].hw, cs[c].win, cs[c].win, cs[c].stride, cs[c].stride);
            cb_error err = {0};
            cb_net *net = cb_net_load_string(json, "am", &err);
            cb_exec_opts o;
            cb_exec_opts_default(&o);
            o.backend = bes[k];
            cb_exec *e = net ? cb_exec_create(net, &o, &err) : NULL;
            size_t want = e ? (((size_t)cb_shape_count(net->layers[1].out) * cs[c].item + 255) & ~(size_t)255) : 0;
            char what[160];
            snprintf(what, sizeof what, "%s max pool %dx%d: argmax %zu bytes an output, %zu planned (%.60s)", bes[k], cs[c].win, cs[c].win, cs[c].item,
                     e ? e->mem[CB_MEM_SAVED] : 0, e ? "" : err.msg);
            check(what, e && e->mem[CB_MEM_SAVED] == want ? 0 : 1, 0);
            cb_exec_destroy(e);
            cb_net_free(net);
        }
}

static void graph_cases(void) {
    const char *bes[] = {"cuda", "cudnn", "auto"};
    for (int b = 0; b < 3; b++) {
        graph_case(bes[b], CB_PREC_FP32, CB_LAYOUT_NCHW, true);
        graph_case(bes[b], CB_PREC_FP32, CB_LAYOUT_NCHW, false);
        graph_case(bes[b], CB_PREC_TF32, CB_LAYOUT_NCHW, true);
        if (b) graph_case(bes[b], CB_PREC_BF16, CB_LAYOUT_NHWC, true);
    }
}

// Outputs made again in the backward (cb_recompute) on an EfficientNet-like block: a 1x1
// expansion and a depthwise convolution, each with batch norm and SiLU, a squeeze-excitation
// product, a projection with batch norm. Under auto, in every storage, recompute off, all (every
// output that can be: this small net's busiest point lies where no output's gap does, so on took
// none on the H200) and auto with a budget no plan meets (1 byte), from the same seed: all makes
// the expansion's and the depthwise's outputs again and says so, auto says what its budget lacks; after 3 SGD steps the losses and every parameter
// gradient agree with recompute off (the output made again is within an fp32 rounding of the
// forward's coefficients: bf16 stores may round it to the next value, so 2e-2 there, 1e-4 in fp32);
// the backward's per-layer times hold the recompute (recompute_ms). With cuDNN's batch norm forced,
// and on the cudnn backend, nothing is made again. (tests/test_engine.c checks the arena's
// placement and the choice of outputs on the host.)
static const char *again_net =
    "{\"name\": \"again\", \"layers\": {"
    "\"data\": {\"parents\": [], \"type\": \"Input\", \"tensor\": [4, 10, 9, 16]},"
    "\"c1\": {\"parents\": [\"data\"], \"type\": \"Convolution\", \"filter\": [1, 1, 16, 24], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"silu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"dw\": {\"parents\": [\"c1\"], \"type\": \"Convolution\", \"filter\": [3, 3, 1, 24], \"padding\": \"SAME\", \"strides\": [1, 2, 2, 1], \"groups\": 24, \"activation_fn\": \"silu\", \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"gp\": {\"parents\": [\"dw\"], \"type\": \"GlobalAvgPool\"},"
    "\"se_r\": {\"parents\": [\"gp\"], \"type\": \"Convolution\", \"filter\": [1, 1, 24, 6], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"silu\"},"
    "\"se_e\": {\"parents\": [\"se_r\"], \"type\": \"Convolution\", \"filter\": [1, 1, 6, 24], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"sigmoid\"},"
    "\"mul\": {\"parents\": [\"dw\", \"se_e\"], \"type\": \"Elementwise\", \"operation\": \"mul\"},"
    "\"proj\": {\"parents\": [\"mul\"], \"type\": \"Convolution\", \"filter\": [1, 1, 24, 16], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null, \"normalizer_fn\": \"batch_norm\", \"bias\": false},"
    "\"p\": {\"parents\": [\"proj\"], \"type\": \"GlobalAvgPool\"},"
    "\"fc\": {\"parents\": [\"p\"], \"type\": \"InnerProduct\", \"num_outputs\": 5, \"activation_fn\": null},"
    "\"softmax\": {\"parents\": [\"fc\"], \"type\": \"Softmax\", \"num_classes\": 5}}}";

static bool noted(const cb_exec *e, const char *text) {
    for (int k = 0; e && k < e->nnotes; k++)
        if (strstr(e->notes[k], text)) return true;
    return false;
}

// again_net loaded, or NULL after a failure named for `what`
static cb_net *load_again_net(const char *what) {
    cb_error err = {0};
    cb_net *net = cb_net_load_string(again_net, "again", &err);
    if (!net) printf("FAIL %s net: %s\n", what, err.msg), failed++;
    return net;
}

static void recompute_cases(void) {
    cb_error err = {0};
    cb_net *net = load_again_net("recompute");
    if (!net) return;
    int n = net->nlayers, c1 = -1, dw = -1;
    for (int i = 0; i < n; i++) {
        if (!strcmp(net->layers[i].name, "c1")) c1 = i;
        if (!strcmp(net->layers[i].name, "dw")) dw = i;
    }
    cb_layout lays[] = {CB_LAYOUT_NCHW, CB_LAYOUT_NHWC};
    cb_precision precs[] = {CB_PREC_FP32, CB_PREC_BF16};
    for (int l = 0; l < 2; l++)
        for (int p = 0; p < 2; p++) {
            cb_exec *x[3] = {NULL, NULL, NULL};
            cb_recompute modes[3] = {CB_RECOMPUTE_OFF, CB_RECOMPUTE_ALL, CB_RECOMPUTE_AUTO};
            char what[200];
            const char *st = lays[l] == CB_LAYOUT_NHWC ? "nhwc" : "nchw";
            for (int m = 0; m < 3; m++) {
                cb_exec_opts o;
                cb_exec_opts_default(&o);
                o.backend = "auto", o.layout = lays[l], o.precision = precs[p], o.seed = 7;
                o.recompute = modes[m], o.memory_budget = m == 2 ? 1 : 0;
                if (!(x[m] = cb_exec_create(net, &o, &err))) {
                    snprintf(what, sizeof what, "auto %s %s recompute mode %d: %.120s", st, prec_name(precs[p]), m, err.msg);
                    check(what, 1, 0);
                }
            }
            if (x[0] && x[1] && x[2]) {
                snprintf(what, sizeof what, "auto %s %s recompute all: c1's and dw's outputs made again, noted (%.1f KiB off the busiest point)",
                         st, prec_name(precs[p]), x[1]->again_saved / 1024.0);
                check(what, x[1]->lb[c1].y_again && x[1]->lb[dw].y_again && !x[0]->lb[c1].y_again && !x[0]->lb[dw].y_again &&
                                    noted(x[1], "made again in the backward")
                                ? 0 : 1, 0);
                snprintf(what, sizeof what, "auto %s %s recompute auto (1 byte): what the budget lacks noted", st, prec_name(precs[p]));
                check(what, noted(x[2], "above what --max-memory leaves") ? 0 : 1, 0);
                double loss[3] = {0, 0, 0};
                cb_layer_times *t = calloc((size_t)n, sizeof *t);
                for (int step = 0; step < 3; step++)
                    for (int m = 0; m < 3; m++) {
                        cb_exec_forward(x[m], true, NULL);
                        cb_exec_criterion_forward(x[m], &loss[m], NULL);
                        cb_exec_criterion_backward(x[m], NULL);
                        cb_exec_backward(x[m], step == 2 && m == 1 ? t : NULL);
                        if (step < 2) cb_exec_update(x[m], NULL);
                    }
                double tol = precs[p] == CB_PREC_BF16 ? 2e-2 : 1e-4;
                for (int m = 1; m < 3; m++) {
                    snprintf(what, sizeof what, "auto %s %s recompute %s: loss after 3 steps %.6f vs %.6f", st, prec_name(precs[p]),
                             m == 1 ? "all" : "auto", loss[m], loss[0]);
                    check(what, fabs(loss[m] - loss[0]) / fabs(loss[0]), tol);
                    float *gm = download(x[m], x[m]->grads, (size_t)x[m]->nparams), *g0 = download(x[0], x[0]->grads, (size_t)x[0]->nparams);
                    snprintf(what, sizeof what, "auto %s %s recompute %s: every parameter gradient", st, prec_name(precs[p]), m == 1 ? "all" : "auto");
                    check(what, nerr(gm, g0, (size_t)x[0]->nparams), tol);
                    free(gm), free(g0);
                }
                snprintf(what, sizeof what, "auto %s %s recompute all: c1's and dw's recompute timed (%.4f, %.4f ms) within their backward", st,
                         prec_name(precs[p]), t[c1].recompute_ms, t[dw].recompute_ms);
                check(what, t[c1].recompute_ms > 0 && t[dw].recompute_ms > 0 && t[c1].epilogue_ms[1] >= t[c1].recompute_ms &&
                                    t[c1].ms[CB_PHASE_BWD_DATA] >= t[c1].recompute_ms
                                ? 0 : 1, 0);
                free(t);
            }
            for (int m = 0; m < 3; m++) cb_exec_destroy(x[m]);
        }
    // nothing made again where cuDNN's batch norm runs: forced under auto, and the cudnn backend
    for (int f = 0; f < 2; f++) {
        if (!f) setenv("CONVBENCH_AUTO_BN", "cudnn", 1);
        cb_exec_opts o;
        cb_exec_opts_default(&o);
        o.backend = f ? "cudnn" : "auto", o.layout = CB_LAYOUT_NHWC, o.precision = CB_PREC_BF16, o.recompute = CB_RECOMPUTE_ALL;
        cb_exec *g = cb_exec_create(net, &o, &err);
        char what[160];
        snprintf(what, sizeof what, "%s recompute all: nothing made again%s", o.backend, f ? "" : " (CONVBENCH_AUTO_BN=cudnn)");
        check(what, g && !g->lb[c1].y_again && !g->lb[dw].y_again && !noted(g, "made again in the backward") ? 0 : 1, 0);
        cb_exec_destroy(g);
        unsetenv("CONVBENCH_AUTO_BN");
    }
    test_layout = CB_LAYOUT_NHWC;
    cb_net_free(net);
}

// The queue's hold (cb_exec_hold, profile's default): a hold keeps the device's queue waiting while
// the host sleeps, so marks around the sleep time the device alone; a call that waits for the device
// inside a hold ends it by the timeout, counted; a held profile's passes compute what unheld ones do.
static void hold_cases(void) {
    cb_error err = {0};
    cb_net *net = load_again_net("hold");
    if (!net) return;
    int n = net->nlayers;
    const char *backends[] = {"auto", "cudnn"}; // (the cuda backend has no Elementwise mul: auto runs the net on it and cuDNN)
    for (int b = 0; b < 2; b++) {
        cb_exec_opts o;
        cb_exec_opts_default(&o);
        o.backend = backends[b], o.seed = 5;
        cb_exec *e = cb_exec_create(net, &o, &err);
        char what[200];
        snprintf(what, sizeof what, "hold %s: exec (%.120s)", o.backend, e ? "" : err.msg);
        check(what, e ? 0 : 1, 0);
        if (!e) continue;
        size_t nx = (size_t)cb_shape_count(net->layers[0].out);
        float *x = malloc(nx * sizeof *x);
        int32_t lab[4] = {1, 4, 0, 2};
        uint32_t r = 12345;
        for (size_t i = 0; i < nx; i++) r = r * 1664525u + 1013904223u, x[i] = (float)(r >> 8) / 8388608.0f - 1;
        cb_exec_set_input(e, x, lab);
        free(x);
        snprintf(what, sizeof what, "hold %s: the backend holds, no timeout yet", o.backend);
        check(what, cb_exec_hold(e, false) == 0 ? 0 : 1, 0);
        // the mechanism: a 30 ms sleep of the host between two marks, held and not
        double gap[2] = {0, 0};
        for (int h = 0; h < 2; h++) {
            if (h) e->be->hold(e, true);
            e->be->mark_reset(e);
            int m0 = e->be->mark(e);
            struct timespec ts = {0, 30 * 1000 * 1000};
            nanosleep(&ts, NULL);
            int m1 = e->be->mark(e);
            if (h) e->be->hold(e, false);
            gap[h] = e->be->mark_ms(e, m0, m1);
        }
        snprintf(what, sizeof what, "hold %s: marks around a 30 ms host sleep: %.3f ms unheld, %.3f ms held", o.backend, gap[0], gap[1]);
        check(what, gap[0] > 25 && gap[1] < 1 ? 0 : 1, 0);
        // a call that waits for the device inside a hold: the wait ends by its timeout, counted
        float one = 0;
        e->be->hold(e, true);
        e->be->download(e, &one, e->grads, 4);
        int to = e->be->hold(e, false);
        snprintf(what, sizeof what, "hold %s: a download inside a hold returns after the timeout, counted (%d)", o.backend, to);
        check(what, to == 1 ? 0 : 1, 0);
        // held and unheld timed passes: the same loss, every layer timed, no timeout
        cb_layer_times *t = calloc((size_t)n, sizeof *t);
        double loss[2] = {0, 0};
        for (int h = 0; h < 2; h++) {
            cb_exec_hold(e, h == 1);
            for (int r = 0; r < 2; r++) {
                cb_exec_forward(e, true, t);
                cb_exec_criterion_forward(e, &loss[h], NULL);
                cb_exec_criterion_backward(e, NULL);
                cb_exec_backward(e, t);
            }
        }
        to = cb_exec_hold(e, false);
        bool timed = true;
        for (int i = 1; i < n; i++) timed &= t[i].ms[CB_PHASE_FORWARD] > 0;
        snprintf(what, sizeof what, "hold %s: held passes' loss %.7f = unheld %.7f, each layer's forward timed, no new timeout (%d)", o.backend, loss[1],
                 loss[0], to);
        check(what, loss[0] == loss[1] && timed && to == 1 ? 0 : 1, 0);
        free(t);
        cb_exec_destroy(e);
    }
    cb_net_free(net);
}

static void storage_cases(void) {
    wg_cases();
    hold_cases();
    dw_cases();
    modern_cases();
    bn_cases();
    recompute_cases();
    fmt_pool_cases();
    concat_copy_cases();
    concat_masked_cases();
    concat_gather_cases();
    bias_grad_cases();
    act_bias_grad_cases();
    bn_relu_mask_cases();
    test_layout = CB_LAYOUT_NHWC;
    layer_cases("cudnn", CB_PREC_FP32);
    network_case_of("cudnn", CB_PREC_FP32, true);
    network_case_of("cudnn", CB_PREC_FP32, false);
    conv_cases("cudnn", CB_PREC_TF32);
    network_case_of("cudnn", CB_PREC_TF32, false);
    layer_cases("cudnn", CB_PREC_BF16);
    network_case_of("cudnn", CB_PREC_BF16, true);
    network_case_of("cudnn", CB_PREC_BF16, false);
    conv_cases("auto", CB_PREC_BF16);
    network_case_of("auto", CB_PREC_BF16, false);
    network_case_of("auto", CB_PREC_FP32, false);
    network_case_of("auto", CB_PREC_BF16, SMALL_RES);
    network_case_of("cudnn", CB_PREC_TF32, SMALL_RES);
    bn_add_cases();
    test_layout = CB_LAYOUT_NHWC;
    // auto's pooling measured, then forced to the own kernels of these storages
    pool_cases("auto", CB_PREC_BF16);
    setenv("CONVBENCH_AUTO_POOL", "own", 1);
    force_pool = "own";
    pool_cases("auto", CB_PREC_BF16);
    pool_cases("auto", CB_PREC_FP32);
    test_layout = CB_LAYOUT_NCHW;
    pool_cases("auto", CB_PREC_BF16);
    test_layout = CB_LAYOUT_NHWC;
    force_pool = NULL;
    unsetenv("CONVBENCH_AUTO_POOL");
    // a 1x1 convolution under NHWC: auto's cuBLAS GEMM forced, in fp32, tf32 and bf16
    setenv("CONVBENCH_AUTO_GEMM", "cublas", 1);
    expect_blas = true;
    cb_precision precs[] = {CB_PREC_FP32, CB_PREC_TF32, CB_PREC_BF16};
    for (int p = 0; p < 3; p++) {
        layer_case("auto", precs[p], "conv 1x1 C64->96 as GEMM", 4, 14, 14, 64,
                   "\"type\": \"Convolution\", \"filter\": [1, 1, 64, 96], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
        layer_case("auto", precs[p], "conv 1x1 C16->24 b1 as GEMM", 1, 5, 7, 16,
                   "\"type\": \"Convolution\", \"filter\": [1, 1, 16, 24], \"padding\": \"SAME\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    }
    // and under fp32 NCHW (one GEMM per image; tf32 by the handle's math mode)
    test_layout = CB_LAYOUT_NCHW;
    for (int p = 0; p < 2; p++) {
        layer_case("auto", precs[p], "conv 1x1 C64->96 b3 as batched GEMM", 3, 14, 13, 64,
                   "\"type\": \"Convolution\", \"filter\": [1, 1, 64, 96], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": \"relu\"");
        layer_case("auto", precs[p], "conv 1x1 C5->7 b1 as batched GEMM", 1, 5, 3, 5,
                   "\"type\": \"Convolution\", \"filter\": [1, 1, 5, 7], \"padding\": \"VALID\", \"strides\": [1, 1, 1, 1], \"activation_fn\": null");
    }
    test_layout = CB_LAYOUT_NHWC;
    unsetenv("CONVBENCH_AUTO_GEMM");
    expect_blas = false;
    // the first conv (C = 3) runs channel-padded in NHWC: here without the input's gradient too
    no_data_grad = true;
    network_case_of("auto", CB_PREC_BF16, false);
    network_case_of("cudnn", CB_PREC_TF32, false);
    no_data_grad = false;
    test_layout = CB_LAYOUT_NCHW;
    layer_cases("cudnn", CB_PREC_BF16);
    network_case_of("cudnn", CB_PREC_BF16, true);
    network_case_of("cudnn", CB_PREC_BF16, false);
    network_case_of("auto", CB_PREC_BF16, false);
    network_case_of("auto", CB_PREC_BF16, SMALL_RES);
}
#endif

int main(int argc, char **argv) {
    // --backends B[-small]: one backend in fp32 (for compute-sanitizer); --part own|storage|rest: the
    // full run's own-algorithm cases ($CB_TEST_ALGOS picks which), the cudnn/auto NHWC and bf16
    // storage cases, or everything else, so that a GPU machine can run the full suite as parallel
    // processes; --part net: the small networks on cuda, cudnn and auto in fp32, tf32 and bf16
    // (NCHW), $CB_TEST_REPEAT times, for a rate of rare failures; --part graph: graph_cases alone;
    // --part pick: every algorithm cuDNN offers the small cases (pick_cases); --part wg: the own wgmma
    // kernel on bf16 NHWC storage (wg_cases, part of storage); --part bias: the bias gradients alone; --part hold: the queue's hold (profile's timing)
    const char *only = argc > 2 && strcmp(argv[1], "--backends") == 0 ? argv[2] : NULL;
    const char *part = argc > 2 && strcmp(argv[1], "--part") == 0 ? argv[2] : NULL;
    if (part && strcmp(part, "own") && strcmp(part, "rest") && strcmp(part, "storage") && strcmp(part, "storage-small") &&
        strcmp(part, "net") && strcmp(part, "graph") && strcmp(part, "dnngraph") && strcmp(part, "dnngraph-desc") && strcmp(part, "dnnbn") && strcmp(part, "pick") &&
        strcmp(part, "wg") && strcmp(part, "concat") && strcmp(part, "bias") && strcmp(part, "hold")) {
        fprintf(stderr, "test_gpu: --part: '%s' is not own, rest, storage, storage-small, net, graph, dnngraph, dnngraph-desc, dnnbn, pick, wg, concat, bias or hold\n",
                part);
        return 2;
    }
    if (part && !strcmp(part, "storage-small")) part = "storage", small_only = true; // for compute-sanitizer
    // fresh inputs each run; $CB_TEST_SEED (the number a run printed) repeats one
    const char *seed = getenv("CB_TEST_SEED");
    rng_state = seed && *seed ? strtoull(seed, NULL, 10) | 1 : (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL | 1;
    printf("test_gpu: seed %llu\n", (unsigned long long)rng_state);
    if (only && (!strncmp(only, "cpu", 3) || !strncmp(only, "onednn", 6)) && (!strchr(only, '-') || !strcmp(strchr(only, '-'), "-small"))) {
        char be[32]; // "-small": the small cases alone (under the sanitizers)
        snprintf(be, sizeof be, "%s", only);
        if (strchr(be, '-')) *strchr(be, '-') = 0, small_only = true;
        if (!cb_backend_find(be)) {
            printf("skip: this build has no backend %s\n0 passed, 0 failed, 1 skipped\n", be);
            return 0;
        }
        layer_cases(be, CB_PREC_FP32);
        network_case(be, CB_PREC_FP32);
        network_case_of(be, CB_PREC_FP32, false);
        adopt_guard_case(be);
    } else {
#ifndef CB_HAVE_CUDA
        printf("skip: this build has no CUDA\n0 passed, 0 failed, 1 skipped\n");
        return 0;
#else
        if (part && !strcmp(part, "dnngraph-desc")) { // (no GPU needed)
            dnn_graph_desc_cases();
            goto done;
        }
        if (!cb_gpu_available()) {
            printf("skip: no CUDA device visible\n0 passed, 0 failed, 1 skipped\n");
            return 0;
        }
        if (only) { // one backend, fp32: for compute-sanitizer runs
            char be[32];
            snprintf(be, sizeof be, "%s", only);
            char *dash = strchr(be, '-');
            if (dash) *dash = 0, small_only = true;
            if (strcmp(be, "cuda") == 0) own_algo_cases(small_only), pool_fusion_cases(); // conv cases once per algorithm
            else conv_cases(be, CB_PREC_FP32);
            layer_cases_rest(be, CB_PREC_FP32);
            if (strcmp(be, "auto") == 0) auto_pool_cases();
            if (!small_only) network_case(be, CB_PREC_FP32);
        } else if (part && !strcmp(part, "graph")) { // the step graph's cases alone
            graph_cases();
        } else if (part && !strcmp(part, "dnngraph")) { // cuDNN's graph API forced
            dnn_graph_cases();
        } else if (part && !strcmp(part, "pick")) { // every algorithm cuDNN offers, not only the fastest
            pick_cases();
        } else if (part && !strcmp(part, "wg")) { // the own wgmma kernel on bf16 NHWC storage (also in storage)
            wg_cases();
        } else if (part && !strcmp(part, "dnnbn")) { // cuDNN's Ex batch norm on
            dnn_bn_cases();
        } else if (part && !strcmp(part, "hold")) { // the queue's hold (profile's timing; also in storage)
            hold_cases();
        } else if (part && !strcmp(part, "bias")) { // the bias gradients, alone and with the activation's (also in storage)
            bias_grad_cases();
            act_bias_grad_cases();
        } else if (part && !strcmp(part, "concat")) { // the concatenation kernels alone (also in storage)
            concat_copy_cases();
            concat_masked_cases();
            concat_gather_cases();
        } else if (part && !strcmp(part, "net")) { // the small networks alone, $CB_TEST_REPEAT times (fresh inputs each)
            const char *rep = getenv("CB_TEST_REPEAT");
            int reps = rep && atoi(rep) > 0 ? atoi(rep) : 1;
            const char *bes[] = {"cuda", "cudnn", "auto"};
            cb_precision precs[] = {CB_PREC_FP32, CB_PREC_TF32, CB_PREC_BF16};
            for (int k = 0; k < reps; k++)
                for (int b = 0; b < 3; b++)
                    for (int q = 0; q < 3; q++)
                        for (int w = SMALL_NOBN; w <= SMALL_RES; w++) network_case_of(bes[b], precs[q], w);
            graph_cases();
        } else {
            if (!part || !strcmp(part, "own")) own_algo_cases(false);
            if (part && !strcmp(part, "own")) goto done;
            if (!part || !strcmp(part, "storage")) storage_cases();
            if (part && !strcmp(part, "storage")) goto done;
            pool_fusion_cases();
            layer_cases_rest("cuda", CB_PREC_FP32);
            oom_cases();
            ws_grow_cases();
            argmax_bytes_cases();
            network_case("cuda", CB_PREC_FP32);
            network_case("cuda", CB_PREC_TF32);
            network_case("cuda", CB_PREC_BF16);
            const char *bes[] = {"cudnn", "auto"};
            for (int b = 0; b < 2; b++) {
                layer_cases(bes[b], CB_PREC_FP32);
                network_case(bes[b], CB_PREC_FP32);
            }
            auto_pool_cases();
            layer_cases("cudnn", CB_PREC_TF32);
            network_case("cudnn", CB_PREC_TF32);
            conv_cases("auto", CB_PREC_TF32);
            network_case("auto", CB_PREC_BF16);
            graph_cases();
        }
#endif
    }
#ifdef CB_HAVE_CUDA
done:
#endif
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
