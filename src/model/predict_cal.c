// Prediction on a GPU calibrated with convbench calibrate --backend cuda|cudnn: what the cudnn
// backend runs for one layer and phase, as convbench profile times it (events around the layer):
//   convolution  the fastest calibrated algorithm the shape allows (cudnnFind picks the measured
//                fastest, so the model picks the predicted fastest), each priced by its fit;
//                trailing padding larger than the leading: cuDNN on a zero-padded copy of the
//                input plus the copy (forward) and the gradient's copy back (backward data); the
//                leading larger: the own fallback kernel the backend runs (src/model/fit.c),
//                plus the passes the backend runs beside it: bias add, batch
//                norm and ReLU forward; ReLU and batch-norm backward (timed with the data
//                gradient, even for a layer fed by the input; none where an own max pool applied
//                it, the bias gradient with it where there is no batch norm: relu_masked); else the
//                bias gradient with the filter gradient; an add where a gradient accumulates into
//                one already written.
//   FC           the calibrated cuBLAS GEMM of the phase, bias and ReLU passes as above.
//   pooling      the entry of what runs (cuDNN max or average pooling, the own kernels for padding
//                cuDNN lacks): overhead + bytes / bw + the window terms (cb_mop_window, cb_mop_visits).
//   others       memory-bound passes (copies, adds, batch norm, ReLU), each overhead + bytes / bw
//                as calibrated (the copy figures for any not measured).
#include "model/model.h"
#include "core/backend.h"
#include "core/net.h"
#include "core/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cb_conv_params tensor_of(cb_shape s) {
    return (cb_conv_params){.n = (int)s.n, .c = (int)s.c, .h = (int)s.h, .w = (int)s.w, .p = (int)s.h, .q = (int)s.w};
}

// the copy bandwidth: calibrated, else measured, else 80% of the datasheet's
static double mop_bw(const cb_device *d) {
    if (d->cal.mop[CB_MOP_COPY].n > 0 && d->cal.mop[CB_MOP_COPY].bw > 0) return d->cal.mop[CB_MOP_COPY].bw;
    return d->meas_copy_bw > 0 ? d->meas_copy_bw : 0.8 * d->mem_bw;
}

// seconds of one memory-bound pass; the roofline on the copy bandwidth when nothing is calibrated
// a memory-bound pass m over tensor t whose elements are es times fp32's bytes: on bf16 storage
// (0.5) the calibration's bf16 NHWC entry where it has one, else fp32's with the bytes halved (the
// fixed and per-plane costs stay)
static double mop_s(const cb_device *d, cb_mop m, const cb_conv_params *t, double es) {
    double s16 = es == 0.5 ? cb_cal_mop16_s(&d->cal, m, t) : -1; // bf16 storage's own entry, where calibrated
    if (s16 >= 0) return s16;
    double s = cb_cal_mop_es_s(&d->cal, m, t, es);
    if (s >= 0) return s;
    return d->launch_s + es * cb_mop_bytes(m, t) / mop_bw(d);
}
// the storage's element bytes against fp32's
static double storage_es(const cb_model_opts *o) { return o->precision == CB_PREC_BF16 ? 0.5 : 1.0; }
// The backward epilogue's pass where the activation's and the bias's gradients are one pass
// (act_bias): its own entry where the calibration measured it (calibrate since 2026-11-27 night),
// else priced as the ReLU's gradient, the same bytes (the model before)
static cb_mop act_bias_mop(const cb_device *d, double es) {
    const cb_cal_mop *m = &d->cal.mop[CB_MOP_ACT_BIAS_GRAD], *m16 = &d->cal.mop16[CB_MOP_ACT_BIAS_GRAD];
    return m->n > 0 || (es == 0.5 && m16->n > 0) ? CB_MOP_ACT_BIAS_GRAD : CB_MOP_RELU_BWD;
}

// does a layer after i (backward runs before i) also consume parent p? then i's gradient adds
static bool accumulates(const cb_net *net, int i, int p) { return net->layers[p].last_child > i; }

// a sum's inputs that take its gradient buffer as their own (the engine's routing): no copy to them
static bool routed(const cb_net *net, int i, int p) {
    int to[2], k = cb_sum_routes(net, i, to);
    return (k > 0 && to[0] == p) || (k > 1 && to[1] == p);
}

// data gradients into the parents: the op's own time is `core`; adds where gradients accumulate
static double parents_s(const cb_device *d, const cb_net *net, int i, cb_mop direct, double es) {
    const cb_layer *L = &net->layers[i];
    double s = 0;
    for (int k = 0; k < L->nparents; k++) {
        const cb_layer *P = &net->layers[L->parents[k]];
        if (P->op == CB_OP_INPUT) continue;
        cb_conv_params t = tensor_of(P->out);
        if (direct < CB_MOP_COUNT && !(L->op == CB_OP_ADD && routed(net, i, L->parents[k]))) s += mop_s(d, direct, &t, es);
        if (accumulates(net, i, L->parents[k])) s += mop_s(d, CB_MOP_ADD, &t, es);
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

double cb_pass_start_s(const cb_device *d) { return d->cal.nalgo > 0 && d->cal.launch_s > 0 ? d->cal.launch_s : 0; }

int cb_pass_first(const cb_net *net, bool backward, cb_phase *ph) {
    *ph = backward ? CB_PHASE_BWD_DATA : CB_PHASE_FORWARD;
    if (net->nlayers < 2) return -1;
    if (!backward) return 1;
    const cb_layer *L = &net->layers[net->nlayers - 1];
    bool weights = L->op == CB_OP_CONV || L->op == CB_OP_FC || L->bn;
    if (L->act == CB_ACT_NONE && !L->bn && weights) *ph = CB_PHASE_BWD_FILTER;
    return net->nlayers - 1;
}

// what the calibrated backend declares (a calibration from elsewhere: nothing)
static const cb_backend_caps *cal_caps(const cb_device *d) {
    static const cb_backend_caps none = {0};
    const cb_backend_caps *c = cb_backend_caps_of(d->cal.backend);
    return c ? c : &none;
}

// The forward pass a pool layer runs (its backward is the next cb_mop) and its window in *x (the
// input tensor): under a library backend, the own kernels where cuDNN's symmetric padding gives
// another output size (src/cudnn/plan.c, plan_pool), else cuDNN's max or average pooling; each
// the calibration's entry when it has one, else the max-pooling entry (a calibration before
// 2026-11-25 measured cuDNN's max pooling alone).
static cb_mop pool_mop(const cb_device *d, const cb_layer *L, cb_conv_params *x) {
    const cb_window *w = &L->p.pool.win;
    x->p = (int)L->out.h, x->q = (int)L->out.w;
    x->r = w->r, x->s = w->s, x->stride_h = w->stride_h, x->stride_w = w->stride_w, x->pad_top = w->pad_top, x->pad_left = w->pad_left;
    bool own = cal_caps(d)->conv_library && !cb_pool_pads_symmetric(L);
    cb_mop m = own ? CB_MOP_OWNPOOL_FWD : L->p.pool.avg ? CB_MOP_AVGPOOL_FWD : CB_MOP_POOL_FWD;
    return d->cal.mop[m].n > 0 && d->cal.mop[m + 1].n > 0 ? m : CB_MOP_POOL_FWD;
}

// The backward epilogue of conv / FC layer i with an activation (src/cuda/backend.c): where the
// max pool that alone reads its output runs on the own kernels, that pool's backward has applied
// the ReLU's gradient and no pass runs (cb_cuda_plan_relu_mask); else, with a bias and no batch
// norm, the activation's gradient and the bias gradient are one pass (cb_fmt_act_bias_grad: the
// ReLU's pass's bytes, priced as it, in the data-gradient phase, and no bias pass with the filter's).
// Only for a calibration of code that does so (act_bias_fused).
// Where the concatenation after it takes its ReLU over (relu_by_concat, for a calibration of code
// that does so: concat_relu), likewise no pass runs; that concatenation's backward reads the
// input's slice of its output beside the gradient's (concat_takes_relu).
static bool concat_takes_relu(const cb_device *d, const cb_net *net, int c, int k) {
    return d->cal.concat_relu && c < net->nlayers - 1 && cb_concat_relu_input(net, c, k) && !cb_exec_output_transient(net, c, true);
}
static bool relu_masked(const cb_device *d, const cb_net *net, int i) {
    const cb_layer *L = &net->layers[i];
    if (!d->cal.act_bias_fused || L->act != CB_ACT_RELU || L->nchildren != 1) return false;
    for (int j = i + 1; j < net->nlayers; j++) {
        const cb_layer *C = &net->layers[j];
        if (C->op == CB_OP_CONCAT)
            for (int k = 0; k < C->nparents; k++)
                if (C->parents[k] == i) return concat_takes_relu(d, net, j, k);
        if (C->nparents != 1 || C->parents[0] != i) continue;
        if (C->op != CB_OP_POOL || C->p.pool.avg) return false;
        cb_conv_params x = tensor_of(C->in);
        return !cal_caps(d)->conv_library || pool_mop(d, C, &x) == CB_MOP_OWNPOOL_FWD;
    }
    return false;
}

// A training batch norm's pass m (CB_MOP_BN_FWD_TRAIN or CB_MOP_BN_BWD) over c channels as the
// cudnn backend runs it: on NHWC storage whose channels are not a multiple of 8 cuDNN's Ex API
// declines and the backend makes cuDNN's legacy call, far slower there (gen-mobile-s2 b256 bf16 on
// the H200, 2026-11-27: 224 ms of a 260 ms step, priced at 35 from the Ex entries); its own entry
// where the calibration measured it (bf16 NHWC, calibrate since 2026-11-27), else m
static cb_mop bn_pass(const cb_device *d, const cb_model_opts *o, int64_t c, cb_mop m) {
    cb_mop odd = m == CB_MOP_BN_FWD_TRAIN ? CB_MOP_BN_FWD_TRAIN_ODD : m == CB_MOP_BN_BWD ? CB_MOP_BN_BWD_ODD : CB_MOP_COUNT;
    bool legacy = odd < CB_MOP_COUNT && cal_caps(d)->conv_library && o->layout == CB_LAYOUT_NHWC && o->precision == CB_PREC_BF16 &&
                  c % 8 != 0 && d->cal.mop16[odd].n > 0;
    return legacy ? odd : m;
}

// an own algorithm of convbench's (not cuDNN's, not cuBLAS's)
// the library backends' storage passes (src/storage: NHWC or bf16 tensors) rather than fp32 NCHW's own
static bool on_storage(const cb_device *d, const cb_model_opts *o) {
    return cal_caps(d)->conv_library && o && (o->layout == CB_LAYOUT_NHWC || o->precision == CB_PREC_BF16);
}

static bool is_own(const char *name) { return strncmp(name, "FWD_", 4) && strncmp(name, "BWD_", 4) && strncmp(name, "cublas", 6); }

// The cudnn backend runs a convolution whose trailing padding differs from its leading padding
// (cuDNN's output size with symmetric padding differs) on its fallback, the first own algorithm
// (src/cudnn/plan.c, cb_cuda_conv_choose): predicted from that algorithm's calibration when
// the entry holds one (calibrate --refit of a cudnn and a cuda calibration together).
#define CUDNN_FALLBACK "igemm-simt"
static int dil(int d) { return d > 1 ? d : 1; }
static bool cudnn_asymmetric(const cb_conv_params *p) {
    int er = (p->r - 1) * dil(p->dil_h) + 1, es = (p->s - 1) * dil(p->dil_w) + 1;
    return (p->h + 2 * p->pad_top - er) / p->stride_h + 1 != p->p || (p->w + 2 * p->pad_left - es) / p->stride_w + 1 != p->q;
}

// Trailing padding larger than the leading (TF SAME at a stride or an even filter): the cudnn
// backend runs cuDNN on a copy of the input with the difference added as zero rows and columns
// at the end (src/cudnn/plan.c; the profile's "(SAME copy)"): *xs is that convolution. False when
// the leading padding is the larger (no copy helps: the own kernels run it).
static bool cudnn_same_copy(const cb_conv_params *p, cb_conv_params *xs) {
    *xs = *p;
    int eh = (p->p - 1) * p->stride_h + (p->r - 1) * dil(p->dil_h) + 1 - 2 * p->pad_top - p->h;
    int ew = (p->q - 1) * p->stride_w + (p->s - 1) * dil(p->dil_w) + 1 - 2 * p->pad_left - p->w;
    if (eh > 0) xs->h += eh;
    if (ew > 0) xs->w += ew;
    return !cudnn_asymmetric(xs);
}

// The cudnn backend's input-channel padding on NHWC storage (cb_store_conv_cpad): a dense
// convolution whose input channels are not a multiple of 16 bytes' worth runs on a zero-padded copy
// of its input in bf16 (cb_conv_cpad_default); fp32's and tf32's graph engines take them as they are.
static int model_cpad(const cb_model_opts *o, const cb_conv_params *p) {
    if (o->layout != CB_LAYOUT_NHWC || !cb_conv_cpad_default(o->precision) || p->groups != 1) return p->c;
    return (int)cb_conv_cpad_to(p->c, o->precision == CB_PREC_BF16);
}
// A training step's forward makes conv / FC layer L's weights again in the storage's format from the
// fp32 masters (src/storage/storage.c, cb_store_weights; which layers, and its bytes:
// cb_weight_copy_bytes); inference keeps the copy from one pass to the next, and so does a run
// without an update (profile: the backend's own copy, converted again only when the weights change).
static bool weight_cast(const cb_device *d, const cb_model_opts *o, const cb_layer *L) {
    return o && !o->inference && !o->weights_fixed && cal_caps(d)->conv_library && cb_weight_copy_bytes(L, o->precision, o->layout) > 0;
}
// that cast's time: the copy's elements read as fp32 and written in the storage's type (a copy's 8
// bytes each on fp32, 6 on bf16)
static double weight_cast_s(const cb_device *d, const cb_model_opts *o, const cb_layer *L) {
    bool bf16 = o->precision == CB_PREC_BF16;
    size_t elems = cb_weight_copy_bytes(L, o->precision, o->layout) / (bf16 ? 2 : 4);
    cb_conv_params t = tensor_of((cb_shape){.n = 1, .c = (int64_t)elems, .h = 1, .w = 1});
    return mop_s(d, CB_MOP_COPY, &t, bf16 ? 0.75 : 1.0);
}
// The engine's plan of a training step's weight copies on o's storage: the layers whose copy it
// makes again in the backward (src/core/exec.c, split_weight_copies), each one more cast there.
// A plan-only engine places the copies as the GPU backends' storage makes them (cb_weight_copy_bytes;
// its arena lacks the backend's input copies), and the cudnn backend's max pools: cuDNN's, which
// keep their input for the backward, but where cuDNN lacks the padding (cb_dnn_pool_relu_mask).
// NULL: none made again, or no plan.
static bool cudnn_pool_relu_mask(const cb_exec *e, int i) { return !cb_pool_pads_symmetric(&e->net->layers[i]); }
static bool *copies_made_again(const cb_device *d, const cb_net *net, const cb_model_opts *o) {
    if (!cal_caps(d)->conv_library || (o->layout != CB_LAYOUT_NHWC && o->precision != CB_PREC_BF16)) return NULL;
    cb_exec_opts eo;
    cb_exec_opts_default(&eo);
    eo.plan_only = true, eo.precision = o->precision, eo.layout = o->layout, eo.no_data_grad = true;
    cb_error err = {0};
    cb_backend be = cb_backend_plan_only;
    be.pool_relu_mask = cudnn_pool_relu_mask;
    cb_exec *e = cb_exec_create_on((cb_net *)net, &eo, &be, &err); // (a plan reads the network, never changes it)
    if (!e) return NULL;
    bool *again = cb_xcalloc((size_t)net->nlayers, sizeof *again);
    for (int i = 0; i < net->nlayers; i++) again[i] = e->lb[i].wcopy_again;
    cb_exec_destroy(e);
    return again;
}

// a copy of tensor t in the storage's element type
static double copy_s(const cb_device *d, const cb_model_opts *o, const cb_conv_params *t) { return mop_s(d, CB_MOP_COPY, t, storage_es(o)); }

// An FC layer on a library backend's NHWC storage whose input is spatial: its GEMMs read the input
// in the masters' (c, h, w) column order, so each phase converts it (src/blas/blas.c,
// cb_blas_fc_permutes): the forward's input and the filter's, and the data gradient back to NHWC.
// Priced as a copy of the input.
static bool fc_permutes(const cb_device *d, const cb_net *net, const cb_layer *L, const cb_model_opts *o) {
    if (L->op != CB_OP_FC || !cal_caps(d)->conv_library || !o || o->layout != CB_LAYOUT_NHWC || L->nparents < 1) return false;
    cb_shape in = net->layers[L->parents[0]].out; // (L->in is the flattened (N, C*H*W))
    return in.h * in.w > 1;
}

// An NHWC concatenation's copy of its k-th input into that input's channel slice (forward; the
// gradient comes back out of it the same way): the storage's kernel (cb_fmt_concat_copy), priced by
// its own entry for the rows' copy unit where the calibration measured it (calibrate since
// 2026-11-28: narrow rows, odd channel counts, ran at a third of the copy's bandwidth on the H200),
// else the copy's as before. NCHW storage copies whole channel blocks on the copy engine: the copy's.
static double concat_part_s(const cb_device *d, const cb_net *net, const cb_layer *L, int k, const cb_model_opts *o, double es) {
    cb_conv_params t = tensor_of(net->layers[L->parents[k]].out);
    if (!(cal_caps(d)->conv_library && o && o->layout == CB_LAYOUT_NHWC)) return mop_s(d, CB_MOP_COPY, &t, es);
    int64_t off = 0;
    for (int j = 0; j < k; j++) off += net->layers[L->parents[j]].out.c;
    cb_mop m = cb_mop_concat(t.c, L->out.c, off, es == 0.5 ? 2 : 4);
    bool have = d->cal.mop[m].n > 0 || (es == 0.5 && d->cal.mop16[m].n > 0);
    t.k = (int)L->out.c;
    return mop_s(d, have ? m : CB_MOP_COPY, &t, es);
}

// Whether auto's race can take entry a, an own storage kernel (its form's store_cmul), for phase ph of
// p on storage o (own_race): a's precision the storage's (bf16 NHWC, or on fp32 NHWC tf32, or fp32 by 3xTF32), and the
// shape the kernel takes, as cb_cuda_wg_store_supports rules (src/cuda/conv_igemm_wgmma.cu; the GPU's
// part, compute capability 9.0, is the calibration's: its entries exist only where it ran): groups 1,
// no dilation, C a multiple of store_cmul, K of 8; the backward data at stride 1 with K a multiple of store_cmul.
static bool wg_entry_takes(const cb_cal_algo *a, const cb_conv_params *p, cb_phase ph, const cb_model_opts *o) {
    const int cm = a->form.store_cmul;
    if (!o->own_race || !cm || o->layout != CB_LAYOUT_NHWC || a->prec != o->precision) return false;
    bool ok = p->groups <= 1 && p->dil_h <= 1 && p->dil_w <= 1 && p->c % cm == 0 && p->k % 8 == 0 && p->k > 0;
    return ok && (ph != CB_PHASE_BWD_DATA || (p->stride_h == 1 && p->stride_w == 1 && p->k % cm == 0 && p->c % 8 == 0));
}

// the fastest calibrated algorithm of phase ph and precision p for a convolution (fc: a GEMM);
// only: the one name allowed (NULL: any the backend runs; o: with o->own_race, the own wgmma entry
// where wg_entry_takes)
static const cb_cal_algo *best_algo(const cb_device *d, const cb_conv_params *p, cb_phase ph, cb_precision prec, bool fc,
                                    int cls, double ws_limit, const char *only, const cb_model_opts *o, double *best_s,
                                    cb_algo_cost *best_c) {
    const cb_cal_algo *best = NULL;
    bool cuda = cal_caps(d)->own_conv_algos && !cal_caps(d)->conv_library; // the own kernels' backend
    for (int j = 0; j < d->cal.nalgo; j++) {
        const cb_cal_algo *a = &d->cal.algo[j];
        if (a->phase != ph || a->prec != prec || a->fc != fc || (a->grouped ? 1 : a->unaligned ? 2 : 0) != cls) continue;
        if (only ? strcmp(a->name, only) : !fc && !cuda && is_own(a->name) && !(o && wg_entry_takes(a, p, ph, o)))
            continue; // cudnn runs own kernels only as fallback (auto races the wgmma kernel on the storage)
        if (fc && cuda && a->form.blas) continue; // its FC runs the own GEMM
        if (!only && !fc && !is_own(a->name) && a->form.best != (d->cal.best != 0)) continue; // (cuDNN's fastest, or each algorithm)
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
    double es = storage_es(o);
    double core = 0, extra = 0;
    if (L->op == CB_OP_CONV || L->op == CB_OP_FC) {
        bool fc = L->op == CB_OP_FC, bias = fc ? L->p.fc.bias : L->p.conv.bias;
        if (ph != CB_PHASE_BWD_DATA || dgrad) {
            cb_conv_params p, xs;
            cb_conv_params_of(L, &p);
            double s = 0;
            cb_algo_cost c = {0};
            const char *only = NULL;
            bool copied = false; // cuDNN on a padded copy (the own wgmma kernel is not priced there: it would take the layer uncopied)
            if (fc_permutes(d, net, L, o)) extra += copy_s(d, o, &x); // (the forward's and the filter's input; the data gradient back)
            if (!fc && cal_caps(d)->conv_library) {
                bool asym = cudnn_asymmetric(&p);
                if (asym && !cudnn_same_copy(&p, &xs)) only = CUDNN_FALLBACK;
                else {
                    if (!asym) xs = p;
                    xs.c = model_cpad(o, &p);
                    if (asym || xs.c != p.c) { // cuDNN on the padded copy: made forward and again for the
                        // filter's gradient (the forward's is not kept), the data gradient's cut back
                        cb_conv_params t = tensor_of((cb_shape){.n = xs.n, .c = xs.c, .h = xs.h, .w = xs.w});
                        extra += copy_s(d, o, &t);
                        p = xs, copied = true;
                    }
                }
                if (ph == CB_PHASE_BWD_FILTER && (o->layout == CB_LAYOUT_NHWC || o->precision == CB_PREC_BF16)) {
                    // the filter's gradient from the storage's (K, R, S, C) back to the fp32 masters
                    cb_conv_params t = tensor_of((cb_shape){.n = p.k, .c = p.c / (p.groups > 0 ? p.groups : 1), .h = p.r, .w = p.s});
                    extra += copy_s(d, o, &t);
                }
            }
            const cb_cal_algo *a = NULL;
            // the precision's entries, else fp32's; the fallback's, else cuDNN's; a grouped or
            // unaligned convolution's own entries (class 1, 2), else the dense ones
            int cls = fc ? 0 : p.groups > 1 ? 1 : cb_conv_unaligned(&p) ? 2 : 0;
            for (int k = 0; k < (cls ? 8 : 4) && !a; k++) {
                cb_precision pr = k % 2 ? CB_PREC_FP32 : o->precision;
                if (k % 2 && pr == o->precision) continue;
                a = best_algo(d, &p, ph, pr, fc, k < 4 ? cls : 0, o->workspace_limit, k % 4 < 2 ? only : NULL, only || copied ? NULL : o, &s, &c);
            }
            if (a) {
                core = s;
                out->algo = a->form.family;
                out->graph = a->form.graph;
                snprintf(out->name, sizeof out->name, "%s", a->name);
                out->flops = c.flops;
                out->bytes = c.bytes;
                out->workspace = c.workspace;
                out->memory_bound = a->bw > 0 && c.bytes / a->bw > (a->rate > 0 ? c.flops / a->rate : 0);
            }
        }
        bool fused_act = cal_caps(d)->conv_fuses_relu && !fc; // the forward kernels apply the ReLU
        bool masked = relu_masked(d, net, i), act_bias = d->cal.act_bias_fused && relu && bias && !L->bn && !masked;
        if (ph == CB_PHASE_FORWARD) {
            if (weight_cast(d, o, L)) extra += weight_cast_s(d, o, L);
            if (bias) extra += mop_s(d, CB_MOP_BIAS_ADD, &y, es);
            if (L->bn) extra += mop_s(d, o->inference ? CB_MOP_BN_FWD : bn_pass(d, o, y.c, CB_MOP_BN_FWD_TRAIN), &y, es);
            // a bias's pass applies the activation that follows it directly, no batch norm between
            // (cb_store_bias_act, in every storage since 2026-11-23), for a calibration of code that
            // does so: one whose backward epilogue is fused too (act_bias_fused, since 2026-11-27);
            // an older one's profiles ran the two passes (2026-11-21: cudnnAddTensor, then the ReLU)
            bool bias_act = d->cal.act_bias_fused && bias && !L->bn;
            if (relu && !fused_act && !bias_act) extra += mop_s(d, CB_MOP_RELU_FWD, &y, es);
        } else if (ph == CB_PHASE_BWD_DATA) {
            if (relu && !masked) extra += mop_s(d, act_bias ? act_bias_mop(d, es) : CB_MOP_RELU_BWD, &y, es); // (the bias's with it where act_bias)
            if (L->bn) extra += mop_s(d, bn_pass(d, o, y.c, CB_MOP_BN_BWD), &y, es);
            if (dgrad) extra += parents_s(d, net, i, CB_MOP_COUNT, es);
        } else if (bias && !act_bias) extra += mop_s(d, CB_MOP_BIAS_GRAD, &y, es);
    } else {
        if (ph == CB_PHASE_BWD_FILTER && L->op != CB_OP_BATCHNORM) return;
        switch (L->op) {
        case CB_OP_POOL: {
            cb_mop m = pool_mop(d, L, &x);
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, m, &x, es);
            else if (dgrad) core = mop_s(d, (cb_mop)(m + 1), &x, es) + parents_s(d, net, i, CB_MOP_COUNT, es);
            break;
        }
        case CB_OP_BATCHNORM:
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, o->inference ? CB_MOP_BN_FWD : bn_pass(d, o, y.c, CB_MOP_BN_FWD_TRAIN), &y, es);
            else if (ph == CB_PHASE_BWD_DATA)
                core = mop_s(d, bn_pass(d, o, y.c, CB_MOP_BN_BWD), &y, es) + (dgrad ? parents_s(d, net, i, CB_MOP_COUNT, es) : 0);
            break;
        case CB_OP_ACT:
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, CB_MOP_RELU_FWD, &y, es);
            else if (dgrad) core = mop_s(d, CB_MOP_RELU_BWD, &y, es) + parents_s(d, net, i, CB_MOP_COUNT, es);
            break;
        case CB_OP_ADD: // forward: read both, write one; backward: dy copied to each input that does not take its buffer
            if (ph == CB_PHASE_FORWARD) {
                // a library backend on its storage (NHWC or bf16: src/storage/storage.c) sums two
                // parents in one pass with the ReLU in the last; fp32 NCHW (src/cuda/backend.c) copies
                // the first parent, adds each other one, and the epilogue runs the ReLU apart
                // (ResNet-50 b64 bf16 NHWC's first sums, H200: 80 us measured, 141 priced as two passes)
                bool storage = on_storage(d, o);
                for (int k = 1; k < L->nparents; k++) core += mop_s(d, CB_MOP_ADD, &y, es);
                if (L->nparents < 2 || !storage) core += mop_s(d, CB_MOP_COPY, &y, es);
                if (relu && (!storage || L->bn || L->act != CB_ACT_RELU || L->nparents < 2)) core += mop_s(d, CB_MOP_RELU_FWD, &y, es);
            }
            else core = (relu ? mop_s(d, CB_MOP_RELU_BWD, &y, es) : 0) + (dgrad ? parents_s(d, net, i, CB_MOP_COPY, es) : 0);
            break;
        case CB_OP_CONCAT: // one copy per input, forward and backward (where the gradient accumulates, an add too)
            for (int k = 0; k < L->nparents; k++) {
                const cb_layer *P = &net->layers[L->parents[k]];
                if (ph == CB_PHASE_FORWARD) core += concat_part_s(d, net, L, k, o, es);
                else if (dgrad && P->op != CB_OP_INPUT) {
                    cb_conv_params t = tensor_of(P->out);
                    // (taking the input's ReLU over: the gradient's slice and the output's read, one written, as a ReLU's gradient)
                    double part = concat_takes_relu(d, net, i, k) ? mop_s(d, CB_MOP_RELU_BWD, &t, es) : concat_part_s(d, net, L, k, o, es);
                    core += part + (accumulates(net, i, L->parents[k]) ? mop_s(d, CB_MOP_ADD, &t, es) : 0);
                }
            }
            break;
        case CB_OP_DROPOUT: // mask and scale: x (or dy), mask in, y out
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, o->inference ? CB_MOP_COPY : CB_MOP_RELU_BWD, &y, es);
            else if (dgrad) core = mop_s(d, CB_MOP_RELU_BWD, &y, es) + parents_s(d, net, i, CB_MOP_COUNT, es);
            break;
        case CB_OP_SOFTMAX: // the criterion made the logits' gradient: the backward copies it to the input's
        case CB_OP_RESHAPE: // (and a reshape's forward is a copy too: src/storage/storage.c, src/cuda/backend.c)
            if (ph == CB_PHASE_FORWARD && L->op == CB_OP_RESHAPE) core = mop_s(d, CB_MOP_COPY, &y, es);
            else if (ph == CB_PHASE_FORWARD) core = mop_s(d, CB_MOP_COPY, &x, es) + mop_s(d, CB_MOP_COPY, &y, es) - cb_cal_fixed_s(&d->cal, d->cal.mop[CB_MOP_COPY].overhead_s);
            else if (dgrad) core = mop_s(d, CB_MOP_COPY, &x, es) + parents_s(d, net, i, CB_MOP_COUNT, es);
            break;
        default: // LRN, softmax and the rest: one pass over input and output per direction
            if (ph == CB_PHASE_FORWARD) core = mop_s(d, CB_MOP_COPY, &x, es) + mop_s(d, CB_MOP_COPY, &y, es) - cb_cal_fixed_s(&d->cal, d->cal.mop[CB_MOP_COPY].overhead_s);
            else if (dgrad) core = mop_s(d, CB_MOP_RELU_BWD, &x, es) + parents_s(d, net, i, CB_MOP_COUNT, es);
            break;
        }
        if (core > 0) out->algo = CB_ALGO_DIRECT, out->memory_bound = true;
    }
    out->extra_ms = extra * 1e3;
    out->ms = (core + extra) * 1e3;
}

// ---- the host's calls -----------------------------------------------------------------------
// What the cudnn backend issues for one layer and direction (src/cudnn/backend.c, src/storage),
// one call each: a cuDNN or cuBLAS call, a cudaMemcpyAsync, an own-kernel launcher (a launcher or a
// cuDNN call that runs several kernels counts one: the host's cost is the call's, not the kernels').
// OP_CALLS: forward / backward data (per parent that gets a gradient) / backward filter, and on top:
//   conv, FC   the padded copy where cuDNN runs a SAME copy (forward; backward data's copy back;
//              backward filter's copy again); the bias pass, which takes the ReLU where no batch
//              norm comes between, else batch norm and the activation one each; backward: the
//              activation's gradient (with the bias gradient where act_bias fuses them, none where
//              an own max pool masked it), the batch norm's; the bias gradient with the filter's
//   concat     a copy per input;  add: a pass per input after the first, with its ReLU (backward: a
//              copy per input after the first; the first takes the sum's gradient buffer)
//   others     their activation one pass each way (a layer's own ReLU); a batch-norm layer with no
//              data gradient still runs its backward in the filter phase
//   every op   an add per parent whose gradient accumulates onto one already written, unless the
//              call adds itself (cuDNN's dgrad with beta = 1)
static const int OP_CALLS[][CB_PHASE_COUNT] = {
    {0, 0, 0}, // input
    {1, 1, 1}, // conv
    {1, 1, 0}, // pool
    {1, 1, 1}, // FC
    {1, 1, 0}, // concat (per input)
    {1, 1, 0}, // add (per input after the first)
    {1, 1, 0}, // dropout
    {1, 1, 0}, // softmax
    {1, 1, 0}, // reshape (a copy)
    {1, 1, 0}, // LRN
    {1, 1, 0}, // batch norm
    {1, 1, 0}, // activation
    {1, 1, 0}, // mul
    {1, 1, 1}, // layer norm
    {1, 1, 1}, // scale
};
_Static_assert(sizeof OP_CALLS / sizeof OP_CALLS[0] == CB_OP_COUNT, "a call count per op kind");

static int host_calls(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *o) {
    const cb_layer *L = &net->layers[i];
    const int *k = OP_CALLS[L->op];
    bool dgrad = cb_model_needs_data_grad(net, i), relu = L->act != CB_ACT_NONE;
    int grads = 0, acc = 0; // parents that get a gradient; those whose gradient accumulates
    for (int j = 0; j < L->nparents; j++)
        if (net->layers[L->parents[j]].op != CB_OP_INPUT) grads++, acc += accumulates(net, i, L->parents[j]);
    if (L->op == CB_OP_CONV || L->op == CB_OP_FC) {
        bool fc = L->op == CB_OP_FC, bias = fc ? L->p.fc.bias : L->p.conv.bias, copy = false, own = false;
        if (!fc && cal_caps(d)->conv_library) {
            cb_conv_params p, xs;
            cb_conv_params_of(L, &p);
            own = cudnn_asymmetric(&p) && !cudnn_same_copy(&p, &xs);
            copy = (cudnn_asymmetric(&p) || (o && model_cpad(o, &p) != p.c)) && !own; // (the TF SAME or channel-padded copy)
        }
        // the filter gradient's return to the fp32 masters from a storage other than fp32 NCHW
        bool back = !fc && cal_caps(d)->conv_library && !own && o && (o->layout == CB_LAYOUT_NHWC || o->precision == CB_PREC_BF16);
        bool masked = relu_masked(d, net, i), act_bias = d->cal.act_bias_fused && relu && bias && !L->bn && !masked;
        copy |= fc_permutes(d, net, L, o);
        if (ph == CB_PHASE_FORWARD) return k[ph] + copy + weight_cast(d, o, L) + bias + L->bn + (relu && (!bias || L->bn));
        if (ph == CB_PHASE_BWD_DATA) return (relu && !masked) + L->bn + (dgrad ? k[ph] + copy + (fc || copy || own ? acc : 0) : 0);
        return k[ph] + copy + back + (bias && !act_bias);
    }
    int inputs = L->op == CB_OP_CONCAT ? L->nparents : L->op == CB_OP_ADD ? (L->nparents > 1 ? L->nparents - 1 : 1) : 1;
    if (ph == CB_PHASE_FORWARD && L->op == CB_OP_ADD) // (as cb_predict_layer_cal prices the sum)
        return inputs + (L->nparents < 2 || !on_storage(d, o)) + (relu && (!on_storage(d, o) || L->bn || L->act != CB_ACT_RELU || L->nparents < 2));
    if (ph == CB_PHASE_FORWARD) return k[ph] * inputs + (relu && L->op != CB_OP_ACT);
    if (ph == CB_PHASE_BWD_FILTER) return L->op == CB_OP_BATCHNORM ? !dgrad : k[ph];
    if (!dgrad) return relu && L->op != CB_OP_ACT;
    int to[2], routes = L->op == CB_OP_ADD ? cb_sum_routes(net, i, to) : 0; // (a sum: a copy or an add to each input not routed)
    int per = L->op == CB_OP_ADD ? grads - routes : L->op == CB_OP_CONCAT ? grads : k[ph] * grads;
    return per + (L->op == CB_OP_ADD ? 0 : acc) + (relu && L->op != CB_OP_ACT);
}

int cb_predict_layer_calls(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *o) {
    return host_calls(d, net, i, ph, o);
}

const char *cb_host_floor_name(cb_host_floor f) {
    static const char *const NAMES[] = {"none", "per pass", "per layer"};
    _Static_assert(sizeof NAMES / sizeof NAMES[0] == CB_HOST_FLOOR_COUNT, "host floor names");
    return (unsigned)f < CB_HOST_FLOOR_COUNT ? NAMES[f] : "?";
}

// A calibration before 2026-11-27 has no host_call_s. Its launch_s is the nearest quantity it
// holds: one fill kernel between two events from an idle GPU (calibrate.c, run_launch), which is
// the host's launch call plus the GPU picking the kernel up, so about one call's host time. The
// multiple (CB_HOST_CALL_PER_LAUNCH, 1) is not fitted to any step: the calibration's stream-timed
// fixed costs of the calls a small layer makes (its memory-bound passes' overhead_s, 2.2 to 6.8 us
// on the H200 against launch_s 5.9 us) bracket it, and a calibration that measured both on an
// H200 found host_call_s 5.19 us against launch_s 6.30 us (docs/results/2026-11-27-h200-host.md).
// The engine's own time per call in a small network's step (host_engine_call_s, calibrate since
// 2026-11-28) is recorded, not used: on two H200s it came to 1.01x and 1.28x host_call_s, and priced
// with it the held-out steps of eight stored sets were better on three and worse on two
// (docs/results/2026-11-28-hostcall.md; the batch-1 steps' spread is the machines', not the engine's).
double cb_cal_host_call_s(const cb_calibration *cal, bool *measured) {
    if (measured) *measured = cal->host_call_s > 0;
    return cal->host_call_s > 0 ? cal->host_call_s : CB_HOST_CALL_PER_LAUNCH * cal->launch_s;
}

void cb_predict_step(const cb_device *d, const cb_net *net, const cb_model_opts *o, cb_step_pred *out) {
    memset(out, 0, sizeof *out);
    cb_model_opts t = *o;
    t.inference = false, t.weights_fixed = false; // (a step with the update)
    double *ph[CB_PHASE_COUNT] = {&out->fwd_ms, &out->bwd_data_ms, &out->bwd_filter_ms};
    double h = 1e3 * cb_cal_host_call_s(&d->cal, NULL); // ms per call
    double hg = d->cal.host_call_s > 0 && d->cal.host_graph_call_s > 0 ? 1e3 * d->cal.host_graph_call_s : 0; // per graph execution
    cb_host_floor form = d->cal.nalgo > 0 && h > 0 ? (cb_host_floor)d->cal.host_floor : CB_HOST_FLOOR_NONE;
    double layer_max[2] = {0, 0}; // the passes in the per-layer form: forward, backward
    bool *again = copies_made_again(d, net, &t);
    for (int i = 1; i < net->nlayers; i++) {
        double gpu[2] = {0, 0}, host[2] = {0, 0};
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            cb_pred r;
            cb_predict_layer(d, net, i, (cb_phase)p, &t, &r);
            int calls = host_calls(d, net, i, (cb_phase)p, &t);
            if (p == CB_PHASE_BWD_DATA && again && again[i]) r.ms += 1e3 * weight_cast_s(d, &t, &net->layers[i]), calls++;
            *ph[p] += r.ms;
            if (p == CB_PHASE_FORWARD) out->calls_fwd += calls;
            else out->calls_bwd += calls;
            gpu[p > 0] += r.ms;
            host[p > 0] += calls * h;
            // a convolution on a graph engine: its execution's host time instead of a call's
            if (hg > 0 && calls > 0 && r.graph) host[p > 0] += hg - h, out->host_graph_ms[p > 0] += hg - h;
        }
        for (int k = 0; k < 2; k++) {
            layer_max[k] += fmax(gpu[k], host[k]);
            out->layer_passes += host[k] > 0;
            out->host_layers += host[k] > gpu[k];
        }
    }
    free(again);
    out->host_fwd_ms = out->calls_fwd * h + out->host_graph_ms[0];
    out->host_bwd_ms = out->calls_bwd * h + out->host_graph_ms[1];
    double gf = out->fwd_ms, gb = out->bwd_data_ms + out->bwd_filter_ms;
    out->host_bound_fwd = out->host_fwd_ms > gf, out->host_bound_bwd = out->host_bwd_ms > gb;
    if (form == CB_HOST_FLOOR_PASS) out->fwd_pass_ms = fmax(gf, out->host_fwd_ms), out->bwd_pass_ms = fmax(gb, out->host_bwd_ms);
    else if (form == CB_HOST_FLOOR_LAYER) out->fwd_pass_ms = layer_max[0], out->bwd_pass_ms = layer_max[1];
    else out->fwd_pass_ms = gf, out->bwd_pass_ms = gb;
    cb_shape last = net->layers[net->nlayers - 1].out;
    cb_conv_params logits = {.n = (int)last.n, .c = (int)(cb_shape_count(last) / last.n), .h = 1, .w = 1, .p = 1, .q = 1};
    cb_net_cost c;
    cb_net_cost_total(net, &c);
    double P = (double)c.total.params;
    if (d->cal.nalgo > 0) { // forward: probabilities and loss; backward: the gradient
        out->criterion_ms = 1e3 * (mop_s(d, CB_MOP_COPY, &logits, 1) + mop_s(d, CB_MOP_COPY, &logits, 1));
        // the update: one kernel over the parameters' flat arrays (cb_exec_update), reading the weight,
        // its gradient and momentum and writing two: 20 bytes a parameter, the copy's entry at 2.5x its
        // 8. The parameters lie on the channel axis: the copy's per-plane term (a cost per n*h*w
        // position, NCHW planes) does not apply to a flat array (laid on w, it once priced AlexNet's
        // update at 3.6x its measured 0.33 ms on an H200)
        cb_conv_params arena = {.n = 1, .c = (int)fmin(P, 2e9), .h = 1, .w = 1, .p = 1, .q = 1};
        out->update_ms = 1e3 * mop_s(d, CB_MOP_COPY, &arena, 2.5);
    } else {
        cb_pred u;
        cb_predict_update(d, net, o, &u);
        out->update_ms = u.ms;
        out->criterion_ms = 1e3 * 2 * (d->launch_s + 3.0 * 4 * logits.n * logits.c / cb_model_bw(d));
    }
    double start = 1e3 * cb_pass_start_s(d); // each pass from an idle GPU
    out->fwd_pass_ms += start, out->bwd_pass_ms += start;
    out->total_ms = out->fwd_pass_ms + out->bwd_pass_ms + out->criterion_ms + out->update_ms;
}
