// Distributed training simulation after Paleo's simulation.py and comm.py.
//
// Per worker: forward, backward (data + filter) and update from the single-device model at the
// per-worker batch (weak scaling: the batch per worker; strong: ceil(batch / workers)).
// Communication per step:
//   data    all-reduce of every gradient (weights and biases; 4 bytes each, 2 with
//           grad_precision bf16, which adds each worker's casts to bf16 and back, 6 bytes read
//           and 6 written per gradient at the device's copy bandwidth) among the workers.
//   model   layers with ModelParallel copies (splits > 1) run concurrently, copy j on worker
//           j % workers; the input of a split block goes to every worker and the outputs are
//           gathered, forward and backward: (workers-1)/workers of those activations each way.
//   hybrid  "one weird trick": unsplit layers data-parallel (all-reduce of their gradients),
//           split layers model-parallel over all workers' examples (workers x batch per copy).
// All-reduce over a link of bandwidth B and latency a, n workers, m bytes:
//   ring       2*(n-1)/n * m/B + 2*(n-1)*a      (reduce-scatter then all-gather)
//   tree       2*ceil(log2 n) * (m/B + a)       (Paleo's TreeAllReduce: up then down)
//   butterfly  ceil(log2 n) * (m/B + a)         (Paleo's ButterflyAllReduce)
// --overlap: the all-reduce runs during the backward pass: max(bwd, comm) instead of bwd + comm
// (a lower bound: the last layer's gradient is ready only at the end).
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double cb_allreduce_s(cb_allreduce a, int n, double m, const cb_link *l) {
    if (n <= 1 || m <= 0) return 0;
    double h = ceil(log2((double)n));
    switch (a) {
    case CB_AR_RING:
        return 2.0 * (n - 1) / n * m / l->bw + 2.0 * (n - 1) * l->latency_s;
    case CB_AR_TREE:
        return 2 * h * (m / l->bw + l->latency_s);
    case CB_AR_BUTTERFLY:
        return h * (m / l->bw + l->latency_s);
    default:
        return 0;
    }
}

typedef struct net_times {
    double fwd, bwd, update;            // ms, whole net
    double split_fwd, split_bwd;        // ms of the layers in ModelParallel copies, max over workers
    double unsplit_fwd, unsplit_bwd;
    double grad_bytes, unsplit_grad_bytes, split_io_bytes; // all-reduced bytes (grad_precision's elements)
    double cast_ms, unsplit_cast_ms;    // grad_precision bf16: the casts of those gradients, there and back
} net_times;

static double layer_ms(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_sim_opts *o) {
    if (o->paleo) return cb_paleo_layer_ms(d, net, i, ph);
    cb_pred p;
    cb_predict_layer(d, net, i, ph, &o->model, &p);
    return p.ms;
}

// Times at the net's current batch; split copies assigned round-robin to `workers` workers.
static cb_status times_of(const cb_net *net, const cb_device *d, const cb_sim_opts *o, int workers, net_times *t) {
    memset(t, 0, sizeof *t);
    double *wf = calloc((size_t)workers, sizeof(double)), *wb = calloc((size_t)workers, sizeof(double));
    if (!wf || !wb) {
        free(wf);
        free(wb);
        return CB_STATUS_NOMEM;
    }
    double ge = o->grad_precision == CB_PREC_BF16 ? 2 : 4, unsplit = 0, all = 0; // bytes per gradient; gradients
    for (int i = 1; i < net->nlayers; i++) {
        const cb_layer *L = &net->layers[i];
        double f = layer_ms(d, net, i, CB_PHASE_FORWARD, o);
        double b = layer_ms(d, net, i, CB_PHASE_BWD_DATA, o) + layer_ms(d, net, i, CB_PHASE_BWD_FILTER, o);
        cb_cost c;
        cb_layer_cost(net, i, &c);
        t->fwd += f;
        t->bwd += b;
        all += (double)(c.params - c.bn_params);
        if (L->splits > 1) {
            wf[L->split % workers] += f;
            wb[L->split % workers] += b;
            // a split layer fed by an unsplit one: its input is scattered, its output gathered
            for (int p = 0; p < L->nparents; p++)
                if (net->layers[L->parents[p]].splits <= 1 && L->split == 0)
                    t->split_io_bytes += 4.0 * (double)cb_shape_count(net->layers[L->parents[p]].out);
        } else {
            t->unsplit_fwd += f;
            t->unsplit_bwd += b;
            unsplit += (double)(c.params - c.bn_params);
            for (int p = 0; p < L->nparents; p++)
                if (net->layers[L->parents[p]].splits > 1)
                    t->split_io_bytes += 4.0 * (double)cb_shape_count(net->layers[L->parents[p]].out);
        }
    }
    t->grad_bytes = ge * all, t->unsplit_grad_bytes = ge * unsplit;
    if (o->grad_precision == CB_PREC_BF16) {
        t->cast_ms = 12 * all / cb_model_bw(d) * 1e3;
        t->unsplit_cast_ms = 12 * unsplit / cb_model_bw(d) * 1e3;
    }
    for (int w = 0; w < workers; w++) {
        t->split_fwd = fmax(t->split_fwd, wf[w]);
        t->split_bwd = fmax(t->split_bwd, wb[w]);
    }
    free(wf);
    free(wb);
    if (o->paleo) t->update = cb_paleo_update_ms(d, net);
    else {
        cb_pred u;
        cb_predict_update(d, net, &o->model, &u);
        t->update = u.ms;
    }
    return CB_OK;
}

cb_status cb_simulate(cb_net *net, const cb_device *d, const cb_link *l, const cb_sim_opts *o, const int *workers, int n,
                      cb_sim_step *out, cb_error *err) {
    int64_t batch0 = cb_net_batch(net);
    cb_status st = CB_OK;
    double base_per_example = 0; // one worker's ms per example
    for (int k = 0; k < n; k++) {
        int W = workers[k];
        if (W < 1) {
            err->status = st = CB_STATUS_ARG;
            snprintf(err->msg, sizeof err->msg, "worker count %d: must be at least 1", W);
            break;
        }
        int64_t b = batch0;
        if (o->strong && o->parallel == CB_PAR_DATA) b = (batch0 + W - 1) / W;
        if ((st = cb_net_set_batch(net, b, err)) != CB_OK) break;
        net_times t;
        if ((st = times_of(net, d, o, W, &t)) != CB_OK) {
            err->status = st;
            snprintf(err->msg, sizeof err->msg, "out of memory");
            break;
        }
        cb_sim_step *s = &out[k];
        memset(s, 0, sizeof *s);
        s->workers = W;
        s->batch_per_worker = b;
        s->update_ms = t.update;
        double comm = 0, io_ms = l->latency_s * 1e3 + (W - 1.0) / W * t.split_io_bytes / l->bw * 1e3;
        switch (o->parallel) {
        case CB_PAR_DATA:
            s->effective_batch = o->strong ? batch0 : b * W;
            s->fwd_ms = t.fwd;
            s->bwd_ms = t.bwd;
            comm = W > 1 ? cb_allreduce_s(o->allreduce, W, t.grad_bytes, l) * 1e3 + t.cast_ms : 0;
            break;
        case CB_PAR_MODEL:
            s->effective_batch = b;
            s->fwd_ms = t.unsplit_fwd + t.split_fwd;
            s->bwd_ms = t.unsplit_bwd + t.split_bwd;
            comm = W > 1 && t.split_io_bytes > 0 ? 2 * io_ms : 0; // forward and backward
            break;
        case CB_PAR_HYBRID:
            s->effective_batch = b * W;
            // each worker runs its split copies for all W workers' examples
            s->fwd_ms = t.unsplit_fwd + W * t.split_fwd;
            s->bwd_ms = t.unsplit_bwd + W * t.split_bwd;
            comm = (W > 1 ? cb_allreduce_s(o->allreduce, W, t.unsplit_grad_bytes, l) * 1e3 + t.unsplit_cast_ms : 0) +
                   (W > 1 && t.split_io_bytes > 0 ? 2 * (W - 1.0) * t.split_io_bytes / l->bw * 1e3 : 0);
            break;
        default:
            break;
        }
        s->comm_ms = comm;
        s->compute_ms = s->fwd_ms + s->bwd_ms + s->update_ms;
        s->total_ms = o->overlap ? s->fwd_ms + fmax(s->bwd_ms, comm) + s->update_ms : s->compute_ms + comm;
        double per_example = s->total_ms / (double)s->effective_batch;
        if (W == 1) base_per_example = per_example;
        s->speedup = per_example; // ms per example until the speed-ups are known below
    }
    if (st == CB_OK) {
        // speed-up against one worker (simulated if 1 is not in the list)
        if (base_per_example == 0) {
            cb_sim_step one;
            int w1 = 1;
            cb_sim_opts o1 = *o;
            cb_net_set_batch(net, batch0, err);
            if ((st = cb_simulate(net, d, l, &o1, &w1, 1, &one, err)) != CB_OK) goto done;
            base_per_example = one.total_ms / (double)one.effective_batch;
        }
        for (int k = 0; k < n; k++) {
            out[k].speedup = out[k].speedup > 0 ? base_per_example / out[k].speedup : 0;
            out[k].efficiency = out[k].speedup / out[k].workers;
        }
    }
done:
    cb_net_set_batch(net, batch0, err);
    return st;
}
