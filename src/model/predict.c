// Roofline prediction per layer and direction, and Paleo's uncalibrated method.
//
// Ours: for every applicable algorithm, time = max(flops / rate, bytes / bw) + launches * launch_s,
// and the fastest wins. rate = peak(precision) * efficiency(algorithm, direction):
//   calibrated device: the measured fraction of peak; algorithms without one are not considered
//     (the backend that was calibrated does not have them).
//   measured ceilings only (h200): the measured GEMM rate, times the relative factors below.
//   datasheet only: 0.75 * peak, times the relative factors below.
// Relative factors (assumptions, no measurement behind them): GEMM 1.0, implicit GEMM 0.9,
// Winograd 0.7 (on its reduced FLOPs), FFT 0.5, direct (elementwise) 0.25.
// bw = measured copy bandwidth, else 0.8 * datasheet. CPU devices without calibration only get
// GEMM and direct: convbench's CPU backend has no other convolution.
#include "model/model.h"

#include <math.h>
#include <string.h>

// FFT tiling is only predicted from a GPU calibration (cuDNN's algorithm; no assumption here).
static const double REL[CB_ALGO_COUNT] = {[CB_ALGO_GEMM] = 1.0, [CB_ALGO_IMPLICIT_GEMM] = 0.9, [CB_ALGO_WINOGRAD] = 0.7,
                                          [CB_ALGO_FFT] = 0.5, [CB_ALGO_DIRECT] = 0.25, [CB_ALGO_FFT_TILING] = 0};
static const int LAUNCHES[CB_ALGO_COUNT] = {[CB_ALGO_GEMM] = 2, [CB_ALGO_IMPLICIT_GEMM] = 1, [CB_ALGO_WINOGRAD] = 4,
                                            [CB_ALGO_FFT] = 4, [CB_ALGO_DIRECT] = 1, [CB_ALGO_FFT_TILING] = 4};

static double peak_of(const cb_device *d, cb_precision p) { return d->peak[p] > 0 ? d->peak[p] : d->peak[CB_PREC_FP32]; }

double cb_model_rate(const cb_device *d, cb_precision p, cb_algo a, cb_phase ph) {
    double peak = peak_of(d, p);
    if (d->calibrated) {
        if (a == CB_ALGO_DIRECT) return d->algo_eff[a][ph] > 0 ? d->algo_eff[a][ph] * peak : REL[a] * peak;
        return d->algo_eff[a][ph] * peak; // 0: not available
    }
    if (!strcmp(d->kind, "cpu") && a != CB_ALGO_GEMM && a != CB_ALGO_DIRECT) return 0;
    double gemm = d->meas_gemm[p] > 0 ? d->meas_gemm[p] : d->peak[p] > 0 ? 0.75 * d->peak[p] : 0;
    if (gemm <= 0) gemm = d->meas_gemm[CB_PREC_FP32] > 0 ? d->meas_gemm[CB_PREC_FP32] : 0.75 * d->peak[CB_PREC_FP32];
    return gemm * REL[a];
}

double cb_model_bw(const cb_device *d) { return d->meas_copy_bw > 0 ? d->meas_copy_bw : 0.8 * d->mem_bw; }

double cb_roofline_s(double flops, double rate, double bytes, double bw, double launch_s, bool *memory_bound) {
    double tc = rate > 0 ? flops / rate : 0, tm = bw > 0 ? bytes / bw : 0;
    if (memory_bound) *memory_bound = tm > tc;
    return fmax(tc, tm) + launch_s;
}

static int elem_bytes(cb_precision p) { return p == CB_PREC_BF16 ? 2 : 4; }

void cb_predict_layer(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *o, cb_pred *out) {
    if (i < 1 || i >= net->nlayers) { // (the input, or no such layer: nothing to price; a test once asked past the end)
        memset(out, 0, sizeof *out);
        out->algo = CB_ALGO_COUNT;
        return;
    }
    if (d->cal.nalgo > 0) {
        cb_predict_layer_cal(d, net, i, ph, o, out);
        return;
    }
    memset(out, 0, sizeof *out);
    out->algo = CB_ALGO_COUNT;
    if (ph == CB_PHASE_BWD_DATA && !cb_model_needs_data_grad(net, i)) return;
    double bw = cb_model_bw(d);
    for (int a = 0; a < CB_ALGO_COUNT; a++) {
        cb_algo_cost c;
        cb_algo_cost_of(net, i, ph, (cb_algo)a, elem_bytes(o->precision), &c);
        if (!c.applicable) continue;
        double rate = cb_model_rate(d, o->precision, (cb_algo)a, ph);
        if (rate <= 0) continue;
        bool mb;
        double s = cb_roofline_s(c.flops, rate, c.bytes, bw, LAUNCHES[a] * d->launch_s, &mb);
        if (out->algo == CB_ALGO_COUNT || s * 1e3 < out->ms) {
            out->ms = s * 1e3;
            out->algo = (cb_algo)a;
            out->flops = c.flops;
            out->bytes = c.bytes;
            out->workspace = c.workspace;
            out->memory_bound = mb;
        }
    }
}

void cb_predict_update(const cb_device *d, const cb_net *net, const cb_model_opts *o, cb_pred *out) {
    memset(out, 0, sizeof *out);
    cb_net_cost t;
    cb_net_cost_total(net, &t);
    double P = (double)t.total.params;
    int tensors = 0;
    for (int i = 0; i < net->nlayers; i++) {
        cb_cost c;
        cb_layer_cost(net, i, &c);
        if (c.params) tensors += 2;
    }
    out->algo = CB_ALGO_DIRECT;
    out->flops = 4 * P;      // weight decay, momentum, step
    out->bytes = 4 * 5 * P;  // read w, g, v; write v, w (fp32 master weights)
    double s = cb_roofline_s(out->flops, cb_model_rate(d, CB_PREC_FP32, CB_ALGO_DIRECT, CB_PHASE_FORWARD), out->bytes,
                             cb_model_bw(d), tensors * d->launch_s, &out->memory_bound);
    out->ms = s * 1e3;
    (void)o;
}

// ---- Paleo ----------------------------------------------------------------------------------
// Paleo's FlopsProfiler (use_cudnn_heuristics off, ppp 1.0): every term is at least one clock
// tick; bytes are divided by GiB/s (bytes / 2^30 / bandwidth-in-GB/s); convolution inputs are
// counted padded (N, H + 2*pad, W + 2*pad, C); backward passes are convolutions of Paleo's
// "dummy layers" (TensorFlow's Conv2DBackprop* shapes), the zero-stuffed holes of strided
// layers discounted from FLOPs and filter bytes.
typedef struct paleo_dev { double peak_gflops, bw_gbs, tick_ms; } paleo_dev;

static double p_comp(const paleo_dev *d, double flops) {
    if (flops == 0) return 0;
    return fmax(d->tick_ms, flops / 1e9 / d->peak_gflops * 1e3);
}

static double p_comm(const paleo_dev *d, double bytes) { return fmax(d->tick_ms, bytes / 1073741824.0 / d->bw_gbs * 1e3); }

// inputs (n, h, w, c) padded by (ph, pw) each side; filters (r, s, fc, k); outputs (n, p, q, k)
static double p_conv(const paleo_dev *d, double n, double h, double w, double c, double r, double s, double fc, double k,
                     double p, double q, double ph, double pw, double holes) {
    double flops = 2 * r * s * fc * p * q * k * n * (1 - holes);
    return p_comp(d, flops) + p_comm(d, n * (h + 2 * ph) * (w + 2 * pw) * c * 4) +
           p_comm(d, r * s * fc * k * (1 - holes) * 4) + p_comm(d, n * p * q * k * 4);
}

static paleo_dev paleo_of(const cb_device *d) {
    paleo_dev p = {d->peak[CB_PREC_FP32] / 1e9, d->mem_bw / 1e9, 1.0 / d->clock_mhz / 1e3};
    return p;
}

double cb_paleo_layer_ms(const cb_device *dev, const cb_net *net, int i, cb_phase ph) {
    const cb_layer *L = &net->layers[i];
    paleo_dev d = paleo_of(dev);
    double N = (double)L->in.n, C = (double)L->in.c, H = (double)L->in.h, W = (double)L->in.w;
    double K = (double)L->out.c, P = (double)L->out.h, Q = (double)L->out.w;
    if (ph == CB_PHASE_BWD_DATA && !cb_model_needs_data_grad(net, i)) return 0;
    switch (L->op) {
    case CB_OP_CONV: {
        const cb_window *w = &L->p.conv.win;
        double R = w->r, S = w->s, fc = L->p.conv.cin, pt = w->pad_top, pl = w->pad_left;
        if (ph == CB_PHASE_FORWARD) return p_conv(&d, N, H, W, C, R, S, fc, K, P, Q, pt, pl, 0);
        // TensorFlow's ConvBackpropExtractAndVerifyDimension, as Paleo's Conv2d.gradients()
        double eh = (P - 1) * w->stride_h + 1, ew = (Q - 1) * w->stride_w + 1;
        double bh = R - 1 - pt, bw = S - 1 - pl;
        double ah = H + R - 1 - eh - bh, aw = W + S - 1 - ew - bw;
        if (fabs(bh - ah) == 1) eh += 1;
        if (fabs(bw - aw) == 1) ew += 1;
        double ph_ = fmin(bh, ah), pw_ = fmin(bw, aw);
        double holes = (eh * ew - P * Q) / eh / ew;
        if (ph == CB_PHASE_BWD_DATA) {
            double oh = eh + 2 * ph_ - R + 1, ow = ew + 2 * pw_ - S + 1;
            return p_conv(&d, N, eh, ew, K, R, S, K, C, oh, ow, ph_, pw_, holes);
        }
        bool valid = w->mode == CB_PAD_VALID;
        double qh = valid ? 0 : ph_, qw = valid ? 0 : pw_;
        double oh = valid ? ceil(H - eh + 1) : H + 2 * qh - eh + 1, ow = valid ? ceil(W - ew + 1) : W + 2 * qw - ew + 1;
        return p_conv(&d, C, H, W, N, eh, ew, N, K, oh, ow, qh, qw, holes);
    }
    case CB_OP_FC: {
        double Ci = C, Ko = L->p.fc.k;
        return p_comp(&d, 2 * N * Ci * Ko) + p_comm(&d, N * Ci * 4) + p_comm(&d, Ci * Ko * 4) + p_comm(&d, N * Ko * 4);
    }
    case CB_OP_POOL: {
        if (ph == CB_PHASE_BWD_FILTER) return 0;
        double flops = 2.0 * L->p.pool.win.r * L->p.pool.win.s * C * P * Q * N;
        return p_comp(&d, flops) + p_comm(&d, N * C * H * W * 4) + p_comm(&d, (double)cb_shape_count(L->out) * 4);
    }
    case CB_OP_DROPOUT: {
        if (ph == CB_PHASE_BWD_FILTER) return 0;
        double n = (double)cb_shape_count(L->in);
        return p_comp(&d, n) + p_comm(&d, n * 4) + p_comm(&d, (double)cb_shape_count(L->out) * 4);
    }
    default:
        return 0; // Paleo: "Unimplemented"
    }
}

double cb_paleo_update_ms(const cb_device *dev, const cb_net *net) {
    paleo_dev d = paleo_of(dev);
    cb_net_cost t;
    cb_net_cost_total(net, &t);
    double params = (double)(t.total.params - t.total.bn_params); // Paleo counts weights and biases
    return p_comp(&d, 2 * params) + 3 * p_comm(&d, params * 4);
}
