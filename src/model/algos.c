// FLOP, multiply, byte and workspace counts of each convolution algorithm, per direction.
//
// Notation: input (N, C, H, W), filters (K, C/g, R, S), output (N, K, P, Q), e bytes per element.
// X = N*C*H*W, Wt = K*(C/g)*R*S, Y = N*K*P*Q elements; macs = Y * (C/g) * R * S.
//   GEMM (im2col)   2*macs FLOPs; the column matrix (C*R*S, P*Q) of one image is the workspace,
//                   written and read once per image: bytes = e*(X + Wt + Y) + 2*e*N*C*R*S*P*Q.
//                   A 1x1, stride-1, unpadded convolution needs no column matrix.
//   implicit GEMM   2*macs FLOPs, e*(X + Wt + Y) bytes, no workspace.
//   Winograd F(m x m, r x r), stride 1 ungrouped, r = 3 (cuDNN's non-fused: 3 or 5), a = m + r - 1:
//                   T = N*ceil(P/m)*ceil(Q/m) output tiles of m x m, each an a x a input tile.
//                   Multiplies: a^2*T*C*K (direct: r^2*m^2 per tile, channel pair). Transforms as
//                   dense matrix products:
//                     input  B^T d B   (a x a)(a x a)(a x a)   2*(a^3 + a^3)        per tile and channel
//                     filter G g G^T   (a x r)(r x r)(r x a)   2*(r^2 a + r a^2)    per (C, K) pair
//                     output A^T m A   (m x a)(a x a)(a x m)   2*(m a^2 + m^2 a)    per tile and filter
//                   (m = 4, r = 3: 864, 324, 480.) Workspace: the three transformed tensors,
//                   e*a^2*(T*C + C*K + T*K), written and read; none when fused (cuDNN's WINOGRAD,
//                   m = 2, transforms in shared memory). Backward data is the same with C and K
//                   swapped and tiles over (H, W); backward filter transforms x, dy and the a x a
//                   sums back to 3x3: the same three terms.
//   FFT             stride 1, ungrouped, filter larger than 1x1. Each plane is padded to
//                   Hf x Wf, the powers of two at or above (P+R-1) x (Q+S-1); a real 2D FFT costs 2.5*n*log2(n) FLOPs (n = Hf*Wf),
//                   the half spectrum has Hf*(Wf/2+1) complex points. Transforms: N*C inputs,
//                   C*K filters, N*K inverse; pointwise: N*C*K*Hf*(Wf/2+1) complex multiply-adds
//                   (4 multiplies, 8 FLOPs). Workspace: the three spectra, 2*e per point.
//   FFT tiling      the same on t x t tiles (t = 32) that each give (t-R+1) x (t-S+1) outputs
//                   (overlap-save): Nt = ceil(P/(t-R+1))*ceil(Q/(t-S+1)) tiles per plane, so
//                   N*C*Nt input and N*K*Nt output transforms, C*K filter transforms, and
//                   N*Nt*C*K*t*(t/2+1) complex multiply-adds.
//   direct          every other layer: cb_layer_cost's FLOPs; bytes in + out (+ dy, y backward).
#include "model/model.h"

#include <math.h>
#include <string.h>

static double ceil_div(double a, double b) { return ceil(a / b); }

static bool has_phase(const cb_cost *c, cb_phase ph) {
    return (ph == CB_PHASE_FORWARD ? c->fwd_flops : ph == CB_PHASE_BWD_DATA ? c->bwd_data_flops : c->bwd_filter_flops) > 0;
}

static double phase_flops(const cb_cost *c, cb_phase ph) {
    return ph == CB_PHASE_FORWARD ? c->fwd_flops : ph == CB_PHASE_BWD_DATA ? c->bwd_data_flops : c->bwd_filter_flops;
}

// cuDNN's whole-image FFT transforms planes padded to powers of two: that form fits the
// calibration shapes' times with half the error of exact or 7-smooth sizes (41% -> 24% median).
static double fft_size(double n) {
    double p = 1;
    while (p < n) p *= 2;
    return p;
}

// the FFT terms on planes of hf x wf, nt planes per (image, channel)
static void fft_cost(double N, double C, double K, double hf, double wf, double nt, int e, cb_algo_cost *c) {
    double n = hf * wf, hs = hf * (floor(wf / 2) + 1), fft = 2.5 * n * log2(n);
    c->applicable = true;
    c->mults = 4 * N * nt * C * K * hs;
    c->flops = fft * (N * C * nt + C * K + N * K * nt) + 8 * N * nt * C * K * hs;
    c->workspace = 2.0 * e * hs * (N * C * nt + C * K + N * K * nt);
}

void cb_conv_cost(const cb_conv_params *p, cb_phase ph, const cb_algo_form *f, int e, double epi, cb_algo_cost *c) {
    memset(c, 0, sizeof *c);
    if (f->graph && p->groups > 1) return; // (the backend races no graph plan for a grouped convolution)
    double N = p->n, C = p->c, H = p->h, W = p->w, K = p->k, P = p->p, Q = p->q, R = p->r, S = p->s;
    double g = p->groups > 0 ? p->groups : 1, cg = C / g;
    double X = N * C * H * W, Y = N * K * P * Q, Wt = K * cg * R * S, macs = Y * cg * R * S;
    double io = e * (X + Wt + Y);
    bool s1 = p->stride_h == 1 && p->stride_w == 1;
    switch (f->family) {
    case CB_ALGO_GEMM: {
        bool no_col = R == 1 && S == 1 && s1 && p->pad_top == 0 && p->pad_left == 0 && P == H && Q == W;
        double col = no_col ? 0 : C * R * S * P * Q; // one image
        c->applicable = true;
        c->mults = macs;
        c->flops = 2 * macs + epi;
        c->workspace = e * col;
        c->bytes = io + 2.0 * e * N * col;
        return;
    }
    case CB_ALGO_IMPLICIT_GEMM:
        c->applicable = true;
        c->mults = macs;
        c->flops = 2 * macs + epi;
        c->bytes = io;
        return;
    case CB_ALGO_WINOGRAD: {
        int fmax = f->max_filter ? f->max_filter : 3;
        if (R != S || R < 3 || R > fmax || p->r % 2 == 0 || !s1 || g != 1) return;
        double m = f->tile > 0 ? f->tile : 4, a = m + R - 1;
        double T = ph == CB_PHASE_BWD_DATA ? N * ceil_div(H, m) * ceil_div(W, m) : N * ceil_div(P, m) * ceil_div(Q, m);
        double Cin = ph == CB_PHASE_BWD_DATA ? K : C, Kout = ph == CB_PHASE_BWD_DATA ? C : K;
        c->applicable = true;
        c->mults = a * a * T * Cin * Kout;
        c->flops = 2 * c->mults + 4 * a * a * a * T * Cin + 2 * (R * R * a + R * a * a) * Cin * Kout +
                   2 * (m * a * a + m * m * a) * T * Kout + epi;
        c->workspace = f->fused ? 0 : e * a * a * (T * Cin + Cin * Kout + T * Kout);
        c->bytes = io + 2 * c->workspace;
        return;
    }
    case CB_ALGO_FFT: {
        if (!s1 || g != 1 || (R == 1 && S == 1)) return;
        if (f->max_padded && (H + 2 * p->pad_top > f->max_padded || W + 2 * p->pad_left > f->max_padded)) return;
        if (f->cudnn && (R <= p->pad_top || S <= p->pad_left)) return;
        fft_cost(N, C, K, fft_size(P + R - 1), fft_size(Q + S - 1), 1, e, c);
        c->flops += epi;
        c->bytes = io + 2 * c->workspace;
        return;
    }
    case CB_ALGO_FFT_TILING: {
        double t = f->tile > 0 ? f->tile : 32;
        if (!s1 || g != 1 || (R == 1 && S == 1) || R > t || S > t) return;
        if (f->cudnn && (R <= p->pad_top || S <= p->pad_left)) return;
        double nt = ceil_div(P, t - R + 1) * ceil_div(Q, t - S + 1);
        fft_cost(N, C, K, t, t, nt, e, c);
        c->flops += epi;
        c->bytes = io + 2 * c->workspace;
        return;
    }
    default:
        return;
    }
}

double cb_conv_util(const cb_conv_params *p, cb_phase ph, const cb_algo_form *f, const cb_calibration *cal) {
    int sms = cal->sms, t = cal->wave_tile ? cal->wave_tile : 64;
    if (sms <= 0 || t < 0 || (f->family != CB_ALGO_IMPLICIT_GEMM && f->family != CB_ALGO_GEMM)) return 1;
    if (ph == CB_PHASE_BWD_FILTER && !cal->wave_wgrad) return 1;
    double m = ph == CB_PHASE_FORWARD ? (double)p->n * p->p * p->q : ph == CB_PHASE_BWD_DATA ? (double)p->n * p->h * p->w : p->k;
    double n = ph == CB_PHASE_FORWARD ? p->k : ph == CB_PHASE_BWD_DATA ? p->c : (double)p->c * p->r * p->s;
    double tiles = ceil(m / t) * ceil(n / t);
    if (ph == CB_PHASE_BWD_FILTER && cal->wave_wgrad == 2) {
        double red = (double)p->n * p->p * p->q, split = fmax(1, fmin(floor(sms / tiles), ceil(red / 4096)));
        tiles *= split;
    }
    double waves = ceil(tiles / sms);
    return tiles / (waves * sms);
}

// channels n in whole units of u
static double padded(double n, double u) { return ceil_div(n, u) * u; }

double cb_conv_fill(const cb_conv_params *p, cb_phase ph, cb_precision prec, const cb_algo_form *f, const cb_calibration *cal) {
    bool gemm = f->family == CB_ALGO_IMPLICIT_GEMM || f->family == CB_ALGO_GEMM;
    if (!cal->wave_fill || cal->wave_tile < 0 || prec == CB_PREC_FP32 || !gemm || p->groups > 1 || ph == CB_PHASE_BWD_FILTER)
        return 1;
    double t = cal->wave_tile ? cal->wave_tile : 64, slab = CB_CONV_SLAB_BYTES / (prec == CB_PREC_BF16 ? 2.0 : 4.0);
    double red = ph == CB_PHASE_FORWARD ? p->c : p->k, n = ph == CB_PHASE_FORWARD ? p->k : p->c;
    if (!(red > 0) || !(n > 0)) return 1;
    return red / padded(red, slab) * n / padded(n, t);
}

void cb_algo_cost_of(const cb_net *net, int i, cb_phase ph, cb_algo a, int e, cb_algo_cost *c) {
    memset(c, 0, sizeof *c);
    const cb_layer *L = &net->layers[i];
    cb_cost lc;
    cb_layer_cost(net, i, &lc);
    double X = 0, Y = (double)cb_shape_count(L->out);
    for (int p = 0; p < L->nparents; p++) X += (double)cb_shape_count(net->layers[L->parents[p]].out);
    if (L->op == CB_OP_CONV) {
        if (a == CB_ALGO_DIRECT) return;
        cb_conv_params p;
        cb_conv_params_of(L, &p);
        double macs = Y * L->p.conv.cin * p.r * p.s;
        double epi = phase_flops(&lc, ph) - 2 * macs; // bias, batch norm, ReLU folded in
        cb_algo_form f = {.family = a};
        cb_conv_cost(&p, ph, &f, e, epi < 0 ? 0 : epi, c);
        return;
    }
    if (L->op == CB_OP_FC) {
        if (a != CB_ALGO_GEMM) return;
        double N = (double)L->in.n, Ci = (double)L->in.c, K = (double)L->p.fc.k;
        c->applicable = true;
        c->mults = N * Ci * K;
        c->flops = phase_flops(&lc, ph);
        c->bytes = e * (N * Ci + Ci * K + N * K);
        return;
    }
    if (a != CB_ALGO_DIRECT || L->op == CB_OP_INPUT || L->op == CB_OP_RESHAPE) return;
    bool copy = L->op == CB_OP_CONCAT; // no arithmetic, only data movement
    if (!copy && !has_phase(&lc, ph)) return;
    if (copy && ph == CB_PHASE_BWD_FILTER) return;
    c->applicable = true;
    c->flops = phase_flops(&lc, ph);
    if (ph == CB_PHASE_FORWARD) c->bytes = e * (X + Y + (double)lc.params);
    else if (ph == CB_PHASE_BWD_DATA) c->bytes = e * (X + (copy ? Y : 2 * Y)); // dy and y or the saved state in, dx out
    else c->bytes = e * (X + Y + (double)lc.params);
}

// ---- named forms ------------------------------------------------------------------------------
static const struct { const char *name; cb_algo_form f; } CUDNN_FORMS[] = {
    {"FWD_IMPLICIT_GEMM", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"FWD_IMPLICIT_PRECOMP_GEMM", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"FWD_GEMM", {.family = CB_ALGO_GEMM}},
    {"FWD_FFT", {.family = CB_ALGO_FFT, .max_padded = 256, .cudnn = true}},
    {"FWD_FFT_TILING", {.family = CB_ALGO_FFT_TILING, .tile = 32, .cudnn = true}},
    {"FWD_WINOGRAD", {.family = CB_ALGO_WINOGRAD, .tile = 2, .fused = true, .max_filter = 3, .cudnn = true}},
    {"FWD_WINOGRAD_NONFUSED", {.family = CB_ALGO_WINOGRAD, .tile = 4, .max_filter = 5, .cudnn = true}},
    {"BWD_DATA_ALGO_0", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"BWD_DATA_ALGO_1", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"BWD_DATA_FFT", {.family = CB_ALGO_FFT, .max_padded = 256, .cudnn = true}},
    {"BWD_DATA_FFT_TILING", {.family = CB_ALGO_FFT_TILING, .tile = 32, .cudnn = true}},
    {"BWD_DATA_WINOGRAD", {.family = CB_ALGO_WINOGRAD, .tile = 2, .fused = true, .max_filter = 3, .cudnn = true}},
    {"BWD_DATA_WINOGRAD_NONFUSED", {.family = CB_ALGO_WINOGRAD, .tile = 4, .max_filter = 5, .cudnn = true}},
    {"BWD_FILTER_ALGO_0", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"BWD_FILTER_ALGO_1", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"BWD_FILTER_ALGO_3", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"BWD_FILTER_FFT", {.family = CB_ALGO_FFT, .max_padded = 256, .cudnn = true}},
    {"BWD_FILTER_FFT_TILING", {.family = CB_ALGO_FFT_TILING, .tile = 32, .cudnn = true}},
    {"BWD_FILTER_WINOGRAD", {.family = CB_ALGO_WINOGRAD, .tile = 2, .fused = true, .max_filter = 3, .cudnn = true}},
    {"BWD_FILTER_WINOGRAD_NONFUSED", {.family = CB_ALGO_WINOGRAD, .tile = 4, .max_filter = 5, .cudnn = true}},
    // the graph API's race (src/cudnn/graph.c): implicit-GEMM kernels, whichever engine wins
    {"FWD_GRAPH", {.family = CB_ALGO_IMPLICIT_GEMM, .graph = true}},
    {"BWD_DATA_GRAPH", {.family = CB_ALGO_IMPLICIT_GEMM, .graph = true}},
    {"BWD_FILTER_GRAPH", {.family = CB_ALGO_IMPLICIT_GEMM, .graph = true}},
    // the fastest of all the above per calibrated shape (src/model/fit.c, with_best), priced where
    // the calibration's form says "best"
    {"FWD_BEST", {.family = CB_ALGO_IMPLICIT_GEMM, .best = true}},
    {"BWD_DATA_BEST", {.family = CB_ALGO_IMPLICIT_GEMM, .best = true}},
    {"BWD_FILTER_BEST", {.family = CB_ALGO_IMPLICIT_GEMM, .best = true}},
};

// convbench's own algorithms (src/cuda/conv_algo.c's table; test_model checks that every one is
// here) and cuBLAS's GEMMs as calibrate names them: by exact name, as cuDNN's
static const struct { const char *name; cb_algo_form f; } OWN_FORMS[] = {
    {"igemm-simt", {.family = CB_ALGO_IMPLICIT_GEMM}},      {"igemm-simt-128", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"igemm-tf32", {.family = CB_ALGO_IMPLICIT_GEMM}},      {"igemm-bf16", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"igemm-wgmma-bf16", {.family = CB_ALGO_IMPLICIT_GEMM, .store_cmul = 64}},
    {"igemm-wgmma-tf32", {.family = CB_ALGO_IMPLICIT_GEMM, .store_cmul = 32}},
    {"igemm-wgmma-3xtf32", {.family = CB_ALGO_IMPLICIT_GEMM, .store_cmul = 32}},
    {"direct-const", {.family = CB_ALGO_IMPLICIT_GEMM}},    {"direct-const+pool", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"direct-smem", {.family = CB_ALGO_IMPLICIT_GEMM}},     {"direct-smem+pool", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"unroll-smem", {.family = CB_ALGO_IMPLICIT_GEMM}},     {"direct-tf32", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"direct-tf32+pool", {.family = CB_ALGO_IMPLICIT_GEMM}}, {"direct-bf16", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"direct-bf16+pool", {.family = CB_ALGO_IMPLICIT_GEMM}}, {"bwd-data-direct", {.family = CB_ALGO_IMPLICIT_GEMM}},
    {"fft-cufft", {.family = CB_ALGO_FFT}},                  {"winograd-f2x2", {.family = CB_ALGO_WINOGRAD, .max_filter = 3}},
    {"depthwise", {.family = CB_ALGO_DIRECT}}, // memory-bound: bytes in and out
    {"cublas_fp32", {.family = CB_ALGO_GEMM, .blas = true}}, {"cublas_tf32", {.family = CB_ALGO_GEMM, .blas = true}},
    {"cublas_bf16", {.family = CB_ALGO_GEMM, .blas = true}},
};

bool cb_algo_form_known(const char *name) {
    cb_algo_form f;
    for (size_t i = 0; i < sizeof OWN_FORMS / sizeof OWN_FORMS[0]; i++)
        if (!strcmp(name, OWN_FORMS[i].name)) return true;
    return cb_algo_form_of(name, &f) && (!strncmp(name, "FWD_", 4) || !strncmp(name, "BWD_", 4));
}

bool cb_algo_form_of(const char *name, cb_algo_form *f) {
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < sizeof CUDNN_FORMS / sizeof CUDNN_FORMS[0]; i++)
        if (!strcmp(name, CUDNN_FORMS[i].name)) return *f = CUDNN_FORMS[i].f, true;
    if (!strncmp(name, "FWD_", 4) || !strncmp(name, "BWD_", 4)) return false;
    for (size_t i = 0; i < sizeof OWN_FORMS / sizeof OWN_FORMS[0]; i++)
        if (!strcmp(name, OWN_FORMS[i].name)) return *f = OWN_FORMS[i].f, true;
    f->family = CB_ALGO_IMPLICIT_GEMM; // an own algorithm this table lacks (a newer build's): the generic form
    return true;
}

// ---- memory-bound operations --------------------------------------------------------------------
static const char *const MOP_NAMES[] = {"copy",   "bias_add",  "relu_fwd", "relu_bwd", "bn_fwd",  "bn_fwd_train",
                                        "bn_bwd", "bias_grad", "add",      "pool_fwd", "pool_bwd", "avgpool_fwd",
                                        "avgpool_bwd", "own_pool_fwd", "own_pool_bwd", "bn_fwd_train_odd", "bn_bwd_odd",
                                        "act_bias_grad", "concat", "concat_narrow"};
_Static_assert(sizeof MOP_NAMES / sizeof MOP_NAMES[0] == CB_MOP_COUNT, "memory-bound op names");

const char *cb_mop_name(cb_mop m) { return m < CB_MOP_COUNT ? MOP_NAMES[m] : "?"; }

// (src/storage/format.cu, cb_fmt_concat_copy: the row, both pitches and the offset in 16-byte
// units, the buffers being aligned to more)
cb_mop cb_mop_concat(int64_t c, int64_t c_dst, int64_t off, int elem) {
    return (c * elem) % 16 == 0 && (c_dst * elem) % 16 == 0 && (off * elem) % 16 == 0 ? CB_MOP_CONCAT : CB_MOP_CONCAT_NARROW;
}

bool cb_mop_parse(const char *s, cb_mop *m) {
    for (int i = 0; i < CB_MOP_COUNT; i++)
        if (!strcmp(s, MOP_NAMES[i])) return *m = (cb_mop)i, true;
    return false;
}

// fp32 bytes per call, counting each tensor read or written once per pass:
//   copy, bias add, relu forward, BN forward (inference): read + write (2T); relu backward: y, dy
//   in, dy out (3T); BN forward (training): statistics pass (T), normalise (2T); BN backward: reduction pass over
//   x and dy (2T), then x, dy in and dx out (3T); bias grad: T; add: dst, src in, dst out (3T);
//   the activation's and the bias's gradients in one pass: y, dy in, dy out (3T);
//   pooling: in + out forward, in + out + dy + dx backward.
double cb_mop_bytes(cb_mop m, const cb_conv_params *t) {
    double T = 4.0 * t->n * t->c * t->h * t->w, O = 4.0 * t->n * t->c * t->p * t->q;
    switch (m) {
    case CB_MOP_COPY:
    case CB_MOP_CONCAT: // (the input read, its slice of the output written)
    case CB_MOP_CONCAT_NARROW:
    case CB_MOP_BIAS_ADD:
    case CB_MOP_RELU_FWD:
    case CB_MOP_BN_FWD:
        return 2 * T;
    case CB_MOP_RELU_BWD:
    case CB_MOP_ACT_BIAS_GRAD:
    case CB_MOP_ADD:
    case CB_MOP_BN_FWD_TRAIN:
    case CB_MOP_BN_FWD_TRAIN_ODD:
        return 3 * T;
    case CB_MOP_BN_BWD:
    case CB_MOP_BN_BWD_ODD:
        return 5 * T;
    case CB_MOP_BIAS_GRAD:
        return T;
    case CB_MOP_POOL_FWD:
    case CB_MOP_AVGPOOL_FWD:
    case CB_MOP_OWNPOOL_FWD:
        return T + O;
    case CB_MOP_POOL_BWD:
    case CB_MOP_AVGPOOL_BWD:
    case CB_MOP_OWNPOOL_BWD:
        return 2 * T + 2 * O;
    default:
        return 0;
    }
}

bool cb_mop_is_pool(cb_mop m) { return m >= CB_MOP_POOL_FWD && m <= CB_MOP_OWNPOOL_BWD; }

double cb_mop_window(cb_mop m, const cb_conv_params *t) {
    if (!cb_mop_is_pool(m) || t->r <= 0 || t->s <= 0) return 0;
    double sh = t->stride_h > 0 ? t->stride_h : 1, sw = t->stride_w > 0 ? t->stride_w : 1;
    return (double)t->n * t->c * t->h * t->w * (t->r / sh + t->s / sw) / 2;
}

double cb_mop_tiled(cb_mop m, const cb_conv_params *t) {
    if (!cb_mop_is_pool(m) || t->r <= 1 || t->s <= 1 || t->r != t->stride_h || t->s != t->stride_w) return 0;
    return (double)t->n * t->c * t->h * t->w;
}

double cb_mop_tiled_line(cb_mop m, const cb_conv_params *t, double elem) {
    double f = elem * t->c / CB_POOL_LINE_BYTES;
    return cb_mop_tiled(m, t) * (f < 1 ? f : 1);
}

double cb_mop_spill(cb_mop m, const cb_conv_params *t, double elem, double l2) {
    if (!(l2 > 0)) return 0;
    double b = cb_mop_bytes(m, t) * elem / 4;
    return b > l2 ? b - l2 : 0;
}

double cb_mop_visits(cb_mop m, const cb_conv_params *t) {
    if (!cb_mop_is_pool(m) || t->r <= 0 || t->s <= 0) return 0;
    return (double)t->n * t->c * t->p * t->q * t->r * t->s;
}
