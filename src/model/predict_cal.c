// Prediction on a GPU calibrated with convbench calibrate --backend cuda|cudnn: what the cudnn
// backend runs for one layer and phase, as convbench profile times it (events around the layer):
//   convolution  the fastest calibrated algorithm the shape allows (cudnnFind picks the measured
//                fastest, so the model picks the predicted fastest), each priced by its fit
//                (src/model/fit.c), plus the passes the backend runs beside it: bias add, batch
//                norm and ReLU forward; ReLU and batch-norm backward (timed with the data
//                gradient, even for a layer fed by the input); bias gradient with the filter
//                gradient; an add where a gradient accumulates into one already written.
//   FC           the calibrated cuBLAS GEMM of the phase, bias and ReLU passes as above.
//   others       memory-bound passes (pooling, copies, adds, batch norm, ReLU), each
//                overhead + bytes / bw as calibrated (the copy figures for any not measured).
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static cb_conv_params tensor_of(cb_shape s) {
    return (cb_conv_params){.n = (int)s.n, .c = (int)s.c, .h = (int)s.h, .w = (int)s.w, .p = (int)s.h, .q = (int)s.w};
}

// seconds of one memory-bound pass; the roofline on the copy bandwidth when nothing is calibrated
static double mop_s(const cb_device *d, cb_mop m, const cb_conv_params *t) {
    double s = cb_cal_mop_s(&d->cal, m, t);
    if (s >= 0) return s;
    double bw = d->meas_copy_bw > 0 ? d->meas_copy_bw : 0.8 * d->mem_bw;
    return d->launch_s + cb_mop_bytes(m, t) / bw;
}

// does a layer after i (backward runs before i) also consume parent p? then i's gradient adds
static bool accumulates(const cb_net *net, int i, int p) {
    for (int j = i + 1; j < net->nlayers; j++)
        for (int k = 0; k < net->layers[j].nparents; k++)
            if (net->layers[j].parents[k] == p) return true;
    return false;
}

// data gradients into the parents: the op's own time is `core`; adds where gradients accumulate
static double parents_s(const cb_device *d, const cb_net *net, int i, cb_mop direct) {
    const cb_layer *L = &net->layers[i];
    double s = 0;
    for (int k = 0; k < L->nparents; k++) {
        const cb_layer *P = &net->layers[L->parents[k]];
        if (P->op == CB_OP_INPUT) continue;
        cb_conv_params t = tensor_of(P->out);
        if (direct < CB_MOP_COUNT) s += mop_s(d, direct, &t);
        if (accumulates(net, i, L->parents[k])) s += mop_s(d, CB_MOP_ADD, &t);
    }
    return s;
}

// (here, not in predict.c: predict.c calls this file, never the reverse)
bool cb_model_needs_data_grad(const cb_net *net, int i) {
    const cb_layer *L = &net->layers[i];
    if (L->op == CB_OP_INPUT) return false;
    for (int p = 0; p < L->nparents; p++)
        if (net->layers[L->parents[p]].op != CB_OP_INPUT) return true;
    return false;
}

// what the calibrated backend declares (a calibration from elsewhere: nothing)
static const cb_backend_caps *cal_caps(const cb_device *d) {
    static const cb_backend_caps none = {0};
    const cb_backend_caps *c = cb_backend_caps_of(d->cal.backend);
    return c ? c : &none;
}

// the fastest calibrated algorithm of phase ph and precision p for a convolution (fc: a GEMM)
static const cb_cal_algo *best_algo(const cb_device *d, const cb_conv_params *p, cb_phase ph, cb_precision prec, bool fc,
                                    double ws_limit, double *best_s, cb_algo_cost *best_c) {
    const cb_cal_algo *best = NULL;
    for (int j = 0; j < d->cal.nalgo; j++) {
        const cb_cal_algo *a = &d->cal.algo[j];
        if (a->phase != ph || a->prec != prec || a->fc != fc) continue;
        if (fc && cal_caps(d)->own_conv_algos && !cal_caps(d)->fc_on_library && a->form.blas) continue; // its FC runs the own GEMM
        cb_algo_cost c;
        double s = cb_cal_algo_s(&d->cal, a, p, fc, &c);
        if (s < 0 || (ws_limit > 0 && c.workspace > ws_limit)) continue;
        if (!best || s < *best_s) best = a, *best_s = s, *best_c = c;
    }
    return best;
}

void cb_predict_layer_cal(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *o, cb_pred *out) {
    memset(out, 0, sizeof *out);
    out->algo = CB_ALGO_COUNT;
    const cb_layer *L = &net->layers[i];
    if (L->op == CB_OP_INPUT || L->op == CB_OP_RESHAPE) return;
    bool dgrad = cb_model_needs_data_grad(net, i), relu = L->act != CB_ACT_NONE; // any activation: a ReLU-like pass
    cb_conv_params y = tensor_of(L->out), x = tensor_of(L->in);
    double core = 0, extra = 0;
    if (L->op == CB_OP_CONV || L->op == CB_OP_FC) {
        bool fc = L->op == CB_OP_FC, bias = fc ? L->p.fc.bias : L->p.conv.bias;
        if (ph != CB_PHASE_BWD_DATA || dgrad) {
            cb_conv_params p;
            cb_conv_params_of(L, &p);
            double s = 0;
            cb_algo_cost c;
            const cb_cal_algo *a = best_algo(d, &p, ph, o->precision, fc, o->workspace_limit, &s, &c);
            if (!a && o->precision != CB_PREC_FP32) a = best_algo(d, &p, ph, CB_PREC_FP32, fc, o->workspace_limit, &s, &c);
            if (a) {
                core = s;
                out->algo = a->form.family;
                snprintf(out->name, sizeof out->name, "%s", a->name);
                out->flops = c.flops;
                out->bytes = c.bytes;
                out->workspace = c.workspace;
                out->memory_bound = a->bw > 0 && c.bytes / a->bw > (a->rate > 0 ? c.flops / a->rate : 0);
            }
        }
        bool fused_relu = cal_caps(d)->conv_fuses_relu && !fc; // the forward kernels apply the ReLU
        if (ph == CB_PHASE_FORWARD) {
            if (bias) extra += mop_s(d, CB_MOP_BIAS_ADD, &y);
            if (L->bn) extra += mop_s(d, o->inference ? CB_MOP_BN_FWD : CB_MOP_BN_FWD_TRAIN, &y);
            if (relu && !fused_relu) extra += mop_s(d, CB_MOP_RELU_FWD, &y);
        } else if (ph == CB_PHASE_BWD_DATA) {
            if (relu) extra += mop_s(d, CB_MOP_RELU_BWD, &y);
            if (L->bn) extra += mop_s(d, CB_MOP_BN_BWD, &y);
            if (dgrad) extra += parents_s(d, net, i, CB_MOP_COUNT);
        } else if (bias) extra += mop_s(d, CB_MOP_BIAS_GRAD, &y);
    } else {
        if (ph == CB_PHASE_BWD_FILTER && L->op != CB_OP_BATCHNORM) return;
        switch (L->op) {
        case CB_OP_POOL:
            x.p = y.h, x.q = y.w;
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, CB_MOP_POOL_FWD, &x);
            else if (dgrad) core = mop_s(d, CB_MOP_POOL_BWD, &x) + parents_s(d, net, i, CB_MOP_COUNT);
            break;
        case CB_OP_BATCHNORM:
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, o->inference ? CB_MOP_BN_FWD : CB_MOP_BN_FWD_TRAIN, &y);
            else if (ph == CB_PHASE_BWD_DATA) core = mop_s(d, CB_MOP_BN_BWD, &y) + (dgrad ? parents_s(d, net, i, CB_MOP_COUNT) : 0);
            break;
        case CB_OP_ACT:
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, CB_MOP_RELU_FWD, &y);
            else if (dgrad) core = mop_s(d, CB_MOP_RELU_BWD, &y) + parents_s(d, net, i, CB_MOP_COUNT);
            break;
        case CB_OP_ADD: // forward: read both, write one; backward: dy copied to each input
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, CB_MOP_ADD, &y) + (relu ? mop_s(d, CB_MOP_RELU_FWD, &y) : 0);
            else core = (relu ? mop_s(d, CB_MOP_RELU_BWD, &y) : 0) + (dgrad ? parents_s(d, net, i, CB_MOP_COPY) : 0);
            break;
        case CB_OP_CONCAT: // one copy per input, forward and backward
            if (ph == CB_PHASE_FORWARD) {
                for (int k = 0; k < L->nparents; k++) {
                    cb_conv_params t = tensor_of(net->layers[L->parents[k]].out);
                    core += mop_s(d, CB_MOP_COPY, &t);
                }
            } else if (dgrad) core = parents_s(d, net, i, CB_MOP_COPY);
            break;
        case CB_OP_DROPOUT: // mask and scale: x (or dy), mask in, y out
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, o->inference ? CB_MOP_COPY : CB_MOP_RELU_BWD, &y);
            else if (dgrad) core = mop_s(d, CB_MOP_RELU_BWD, &y) + parents_s(d, net, i, CB_MOP_COUNT);
            break;
        default: // LRN, softmax and the rest: one pass over input and output per direction
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, CB_MOP_COPY, &x) + mop_s(d, CB_MOP_COPY, &y) - d->cal.mop[CB_MOP_COPY].overhead_s;
            else if (dgrad) core = mop_s(d, CB_MOP_RELU_BWD, &x) + parents_s(d, net, i, CB_MOP_COUNT);
            break;
        }
        if (core > 0) out->algo = CB_ALGO_DIRECT, out->memory_bound = true;
    }
    out->extra_ms = extra * 1e3;
    out->ms = (core + extra) * 1e3;
}
