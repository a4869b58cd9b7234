// The training loop: shuffle, batch, forward, criterion, backward, SGD update, with a learning-rate
// schedule; evaluation in inference mode (batch norm running statistics, no dropout).
#include "bench/train.h"
#include "bench/stats.h"
#include "core/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *SCHEDULES[] = {"none", "step", "cosine"};
_Static_assert(sizeof SCHEDULES / sizeof SCHEDULES[0] == CB_SCHEDULE_COUNT, "a schedule lacks a name");

bool cb_schedule_parse(const char *s, cb_schedule *out) {
    for (int i = 0; i < CB_SCHEDULE_COUNT; i++)
        if (strcmp(s, SCHEDULES[i]) == 0) return *out = (cb_schedule)i, true;
    return false;
}
const char *cb_schedule_name(cb_schedule s) { return (unsigned)s < CB_SCHEDULE_COUNT ? SCHEDULES[s] : "?"; }

static double lr_at(const cb_train_opts *o, int epoch, int64_t step, int64_t steps) {
    switch (o->schedule) {
    case CB_SCHEDULE_STEP: {
        double f = (double)epoch / o->epochs; // epoch is 0-based
        return o->lr * (f >= 0.75 ? 0.01 : f >= 0.5 ? 0.1 : 1.0);
    }
    case CB_SCHEDULE_COSINE: return o->lr * 0.5 * (1 + cos(3.14159265358979323846 * (double)step / (double)(steps ? steps : 1)));
    default: return o->lr;
    }
}

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

cb_status cb_check_input(const cb_net *net, const cb_dataset *d, cb_error *err) {
    cb_shape in = net->layers[0].out;
    if (in.rank != 4 || in.c != 1 || in.h != d->h || in.w != d->w)
        return cb_fail(err, CB_STATUS_SHAPE, net->path, NULL, "wants %lldx%lld inputs with %lld channel%s; the data are %dx%d, 1 channel%s",
                       (long long)in.h, (long long)in.w, (long long)in.c, in.c == 1 ? "" : "s", d->h, d->w,
                       in.c == 1 && in.rank == 4 ? "; pass --resize" : "");
    return CB_OK;
}

static int argmax(const float *p, int k) {
    int b = 0;
    for (int j = 1; j < k; j++)
        if (p[j] > p[b]) b = j;
    return b;
}

cb_status cb_evaluate(cb_exec *e, const cb_dataset *d, double *accuracy, cb_eval_times *times, cb_error *err) {
    const cb_net *net = cb_exec_net(e);
    cb_status st = cb_check_input(net, d, err);
    if (st != CB_OK) return st;
    int64_t B = cb_net_batch(net), px = (int64_t)d->h * d->w, k = cb_exec_output_classes(e);
    float *xb = calloc((size_t)(B * px), sizeof(float)), *prob = malloc((size_t)(B * k) * sizeof(float));
    cb_layer_times *lt = times && times->layers ? calloc((size_t)net->nlayers, sizeof *lt) : NULL;
    if (!xb || !prob || (times && times->layers && !lt)) {
        free(xb), free(prob), free(lt);
        return cb_fail(err, CB_STATUS_NOMEM, net->path, NULL, "out of memory for an evaluation batch");
    }
    int64_t correct = 0;
    for (int64_t at = 0; at < d->n; at += B) {
        int64_t m = d->n - at < B ? d->n - at : B; // rows that are real; the rest stay zero padding
        const float *src = d->x + at * px;
        if (m < B) {
            memcpy(xb, src, (size_t)(m * px) * sizeof(float));
            memset(xb + m * px, 0, (size_t)((B - m) * px) * sizeof(float));
            src = xb;
        }
        if (times) cb_exec_timer_start(e);
        cb_exec_set_input(e, src, NULL);
        if (times) times->copy_ms += cb_exec_timer_stop(e);
        double t0 = cb_now_ms();
        if ((st = cb_exec_forward(e, false, lt)) != CB_OK) break;
        if (times) {
            times->forward_ms += cb_now_ms() - t0;
            times->batches++;
            if (lt)
                for (int i = 0; i < net->nlayers; i++) times->layers[i].ms[CB_PHASE_FORWARD] += lt[i].ms[CB_PHASE_FORWARD];
        }
        if ((st = cb_exec_get_output(e, prob, (size_t)(B * k))) != CB_OK) break;
        for (int64_t i = 0; i < m; i++) correct += argmax(prob + i * k, (int)k) == d->y[at + i];
    }
    free(xb), free(prob), free(lt);
    if (st != CB_OK) return cb_fail(err, st, net->path, NULL, "evaluation failed (%s)", cb_status_name(st));
    *accuracy = d->n ? (double)correct / (double)d->n : 0;
    return CB_OK;
}

cb_status cb_train(cb_exec *e, const cb_dataset *train, const cb_dataset *test, const cb_train_opts *o,
                   cb_epoch_stats *stats, cb_error *err) {
    const cb_net *net = cb_exec_net(e);
    cb_status st = cb_check_input(net, train, err);
    if (st != CB_OK) return st;
    int64_t B = cb_net_batch(net), px = (int64_t)train->h * train->w, k = cb_exec_output_classes(e);
    int64_t per_epoch = train->n / B, steps = per_epoch * o->epochs;
    if (per_epoch == 0)
        return cb_fail(err, CB_STATUS_ARG, net->path, NULL, "%lld training images make no full batch of %lld",
                       (long long)train->n, (long long)B);
    int64_t *perm = malloc(sizeof *perm * (size_t)train->n);
    float *xb = malloc(sizeof *xb * (size_t)(B * px)), *prob = malloc(sizeof *prob * (size_t)(B * k));
    int32_t *yb = malloc(sizeof *yb * (size_t)B);
    if (!perm || !xb || !prob || !yb) {
        free(perm), free(xb), free(prob), free(yb);
        return cb_fail(err, CB_STATUS_NOMEM, net->path, NULL, "out of memory for a training batch");
    }
    for (int64_t i = 0; i < train->n; i++) perm[i] = i;
    uint64_t rng = o->seed;
    int64_t step = 0;
    for (int ep = 0; ep < o->epochs; ep++) {
        double t0 = cb_now_ms(), loss_sum = 0;
        int64_t correct = 0;
        for (int64_t i = train->n - 1; i > 0; i--) { // Fisher-Yates
            int64_t j = (int64_t)(splitmix(&rng) % (uint64_t)(i + 1)), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        stats[ep] = (cb_epoch_stats){.epoch = ep + 1, .lr = lr_at(o, ep, step, steps), .test_acc = NAN};
        for (int64_t b = 0; b < per_epoch; b++, step++) {
            for (int64_t i = 0; i < B; i++) {
                int64_t s = perm[b * B + i];
                memcpy(xb + i * px, train->x + s * px, sizeof *xb * (size_t)px);
                yb[i] = train->y[s];
            }
            // the engine reads its lr at every update; a schedule changes it between steps
            cb_exec_set_lr(e, (float)lr_at(o, ep, step, steps));
            double loss = 0;
            cb_exec_set_input(e, xb, yb);
            if ((st = cb_exec_forward(e, true, NULL)) != CB_OK || (st = cb_exec_criterion_forward(e, &loss, NULL)) != CB_OK ||
                (st = cb_exec_get_output(e, prob, (size_t)(B * k))) != CB_OK ||
                (st = cb_exec_criterion_backward(e, NULL)) != CB_OK || (st = cb_exec_backward(e, NULL)) != CB_OK ||
                (st = cb_exec_update(e, NULL)) != CB_OK) {
                cb_fail(err, st, net->path, NULL, "training step failed (%s)", cb_status_name(st));
                goto done;
            }
            loss_sum += loss;
            for (int64_t i = 0; i < B; i++) correct += argmax(prob + i * k, (int)k) == yb[i];
        }
        double t1 = cb_now_ms();
        stats[ep].loss = loss_sum / (double)per_epoch;
        stats[ep].train_acc = (double)correct / (double)(per_epoch * B);
        stats[ep].images_per_s = 1e3 * (double)(per_epoch * B) / (t1 - t0 > 0 ? t1 - t0 : 1e-9);
        if (test && (st = cb_evaluate(e, test, &stats[ep].test_acc, NULL, err)) != CB_OK) goto done;
        stats[ep].seconds = (cb_now_ms() - t0) / 1e3;
        if (o->on_epoch) o->on_epoch(o->ctx, &stats[ep]);
    }
    st = CB_OK;
done:
    free(perm), free(xb), free(prob), free(yb);
    return st;
}
