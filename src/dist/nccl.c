// Data-parallel training and all-reduce bandwidth with NCCL (src/dist/dist.h): one host thread,
// one cb_exec and one NCCL rank per GPU.
//
// The engine works on each device's legacy default stream. A replica's all-reduces run on a
// stream of their own created non-blocking (so it does not synchronise with the default stream):
// once the backward pass has completed a bucket's gradients, an event on the default stream
// gates that bucket's all-reduce on the communication stream, while the backward pass goes on;
// the update waits for the last all-reduce. Gradients are averaged (ncclAvg), as the mean loss
// over the whole batch on one GPU would give them. With bf16 gradients (--grad-precision bf16)
// each bucket goes through a bf16 staging buffer of the largest bucket's size on the
// communication stream: cast, all-reduce, cast back; the stream orders the buckets' use of it.
#include "dist/dist.h"
#include "core/backend.h"
#include "core/net.h"
#include "core/rng.h"
#include "storage/format.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUCKETS 512

typedef struct shared shared;

typedef struct replica {
    int rank, dev;
    shared *sh;
    cb_exec *e;
    ncclComm_t comm;
    cudaStream_t cs;
    cudaEvent_t ready[MAX_BUCKETS], start[MAX_BUCKETS], end[MAX_BUCKETS], done;
    int nevents; // buckets whose events exist
    cb_bucket b[MAX_BUCKETS];
    int nb, next;
    void *stage; // (largest bucket) bf16: the gradients as all-reduced under grad_precision bf16, else NULL
    float *params_host;
    double *step_ms, *comm_ms, *compute_ms;
    double loss;
    cb_status st;
    cb_error err;
} replica;

struct shared {
    pthread_barrier_t bar;
    pthread_mutex_t mu;
    const cb_dist_opts *o;
    const cb_exec_opts *eo;
    cb_net *const *nets;
    ncclUniqueId id;
    int failed;
};

bool cb_dist_have_nccl(void) { return true; }


int cb_dist_device_count(void) {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

static cb_status cuda_fail(cb_error *err, const char *what, cudaError_t c) {
    return cb_fail(err, c == cudaErrorMemoryAllocation ? CB_STATUS_NOMEM : CB_STATUS_DEVICE, NULL, NULL, "%s: CUDA %s", what, cudaGetErrorString(c));
}
static cb_status nccl_fail(cb_error *err, const char *what, ncclResult_t r) {
    return cb_fail(err, CB_STATUS_DEVICE, NULL, NULL, "%s: NCCL %s", what, ncclGetErrorString(r));
}

_Static_assert(sizeof(ncclUniqueId) == CB_DIST_ID_BYTES, "NCCL's unique id is not CB_DIST_ID_BYTES");
cb_status cb_dist_unique_id(void *id, cb_error *err) {
    ncclResult_t nr = ncclGetUniqueId((ncclUniqueId *)id);
    return nr == ncclSuccess ? CB_OK : nccl_fail(err, "ncclGetUniqueId", nr);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// bucket k's all-reduce: after the default stream's work so far, on the communication stream
static void post(replica *r, int k) {
    const cb_bucket *b = &r->b[k];
    cudaEventRecord(r->ready[k], 0);
    cudaStreamWaitEvent(r->cs, r->ready[k], 0);
    cudaEventRecord(r->start[k], r->cs);
    float *g = r->e->grads + b->lo;
    size_t n = (size_t)(b->hi - b->lo);
    if (r->stage) {
        cb_fmt_cast(n, g, 0, r->stage, CB_FMT_BF16, r->cs);
        ncclAllReduce(r->stage, r->stage, n, ncclBfloat16, ncclAvg, r->comm, r->cs);
        cb_fmt_cast(n, r->stage, CB_FMT_BF16, g, 0, r->cs);
    } else {
        ncclAllReduce(g, g, n, ncclFloat, ncclAvg, r->comm, r->cs);
    }
    cudaEventRecord(r->end[k], r->cs);
}

// the engine's grad_hook: every bucket the backward pass has now completed
static void grad_hook(cb_exec *e, int layer, void *ctx) {
    replica *r = ctx;
    while (r->next < r->nb && layer <= r->b[r->next].ready_after) post(r, r->next++);
}

// layer i's slice of the gradient arena: its first gradient and the floats of w, b, gamma, beta
// with the gaps after each (cb_param_slot: consecutive layers' slices meet)
static void slice_of(const cb_exec *e, int i, int64_t *off, int64_t *count) {
    const cb_lbuf *b = &e->lb[i];
    *count = cb_param_slot(b->nw) + cb_param_slot(b->nb) + 2 * cb_param_slot(b->nbn);
    const float *first = b->dw ? b->dw : b->db ? b->db : b->dgamma;
    *off = *count && first ? first - e->grads : 0;
}

// the learnable tensors (weights, biases, batch-norm scale and shift) in the engine's order, packed
// (the parameter arena keeps each on 256 bytes): their count, and with out their values from
// host, a copy of the whole arena
static int64_t learnable(cb_exec *e, const float *host, float *out) {
    int64_t n = 0;
    for (int i = 0; i < e->net->nlayers; i++) {
        cb_param ps[6];
        int k = cb_exec_params(e, i, ps, 6);
        for (int j = 0; j < k && j < 6; j++) {
            if (!ps[j].grad) continue;
            if (out) memcpy(out + n, host + (ps[j].data - e->params), (size_t)ps[j].count * sizeof(float));
            n += ps[j].count;
        }
    }
    return n;
}

// one training step; comm: all-reduce the gradients (overlapped with backward under o->overlap)
static void step(replica *r, bool comm, double *ms, double *cms) {
    const cb_dist_opts *o = r->sh->o;
    cb_exec *e = r->e;
    r->next = 0;
    e->grad_hook = comm && o->overlap ? grad_hook : NULL;
    e->grad_hook_ctx = r;
    if (!o->criterion) cb_exec_set_output_grad(e, 1.0f);
    cb_exec_timer_start(e);
    cb_exec_forward(e, true, NULL);
    if (o->criterion) {
        cb_exec_criterion_forward(e, &r->loss, NULL);
        cb_exec_criterion_backward(e, NULL);
    }
    cb_exec_backward(e, NULL);
    if (comm) {
        while (r->next < r->nb) post(r, r->next++); // what the hook left, or all of it without overlap
        cudaEventRecord(r->done, r->cs);
        cudaStreamWaitEvent(0, r->done, 0);
    }
    if (o->update) cb_exec_update(e, NULL);
    *ms = cb_exec_timer_stop(e);
    e->grad_hook = NULL;
    double c = 0;
    for (int k = 0; comm && k < r->nb; k++) {
        float t = 0;
        cudaEventElapsedTime(&t, r->start[k], r->end[k]);
        c += t;
    }
    *cms = c;
}

// all replicas agree that none failed (after each one's setup)
static bool all_ok(replica *r) {
    shared *sh = r->sh;
    if (r->st != CB_OK) {
        pthread_mutex_lock(&sh->mu);
        sh->failed = 1;
        pthread_mutex_unlock(&sh->mu);
    }
    pthread_barrier_wait(&sh->bar);
    pthread_mutex_lock(&sh->mu);
    bool ok = !sh->failed;
    pthread_mutex_unlock(&sh->mu);
    pthread_barrier_wait(&sh->bar);
    return ok;
}

static cb_status setup(replica *r) {
    shared *sh = r->sh;
    const cb_dist_opts *o = sh->o;
    cudaError_t c = cudaSetDevice(r->dev);
    if (c != cudaSuccess) return cuda_fail(&r->err, "cudaSetDevice", c);
    r->e = cb_exec_create(sh->nets[r->rank], sh->eo, &r->err);
    if (!r->e) return r->err.status;
    cb_exec *e = r->e;
    int n = e->net->nlayers;
    int64_t *off = calloc((size_t)n, sizeof *off), *cnt = calloc((size_t)n, sizeof *cnt);
    if (!off || !cnt) abort();
    for (int i = 0; i < n; i++) slice_of(e, i, &off[i], &cnt[i]);
    r->nb = cb_bucket_plan(off, cnt, n, o->bucket_bytes, 4, r->b, MAX_BUCKETS);
    free(off);
    free(cnt);
    if (r->nb < 0) return cb_fail(&r->err, CB_STATUS_ARG, NULL, NULL, "gradient buckets: more than %d, or the arena is not contiguous (--bucket-mb larger)", MAX_BUCKETS);
    if ((c = cudaStreamCreateWithFlags(&r->cs, cudaStreamNonBlocking)) != cudaSuccess) return cuda_fail(&r->err, "cudaStreamCreate", c);
    if ((c = cudaEventCreateWithFlags(&r->done, cudaEventDisableTiming)) != cudaSuccess) return cuda_fail(&r->err, "cudaEventCreate", c);
    for (; r->nevents < r->nb; r->nevents++) {
        int k = r->nevents;
        if ((c = cudaEventCreateWithFlags(&r->ready[k], cudaEventDisableTiming)) != cudaSuccess ||
            (c = cudaEventCreate(&r->start[k])) != cudaSuccess || (c = cudaEventCreate(&r->end[k])) != cudaSuccess)
            return cuda_fail(&r->err, "cudaEventCreate", c);
    }
    if (o->grad_precision == CB_PREC_BF16) {
        int64_t most = 0;
        for (int k = 0; k < r->nb; k++) most = r->b[k].hi - r->b[k].lo > most ? r->b[k].hi - r->b[k].lo : most;
        if ((c = cudaMalloc(&r->stage, (size_t)(most > 0 ? most : 1) * 2)) != cudaSuccess) {
            r->stage = NULL;
            char what[96];
            snprintf(what, sizeof what, "GPU %d: the bf16 gradient staging buffer (%.1f MiB, --grad-precision bf16)", r->dev, (double)most * 2 / 1048576.0);
            return cuda_fail(&r->err, what, c);
        }
    }
    // the input: the caller's batch for this replica, or seeded random images and labels of its own
    const cb_layer *in = &e->net->layers[0], *last = &e->net->layers[n - 1];
    int64_t per = cb_shape_count(in->out), batch = in->out.n, classes = last->out.c * last->out.h * last->out.w;
    float *x = malloc((size_t)per * sizeof *x);
    int32_t *lab = malloc((size_t)batch * sizeof *lab);
    if (!x || !lab) abort();
    if (o->x) {
        memcpy(x, o->x + (size_t)r->rank * (size_t)per, (size_t)per * sizeof *x);
        memcpy(lab, o->labels + (size_t)r->rank * (size_t)batch, (size_t)batch * sizeof *lab);
    } else {
        uint64_t s = 0x5EEDull + 7919ull * (uint64_t)r->rank;
        for (int64_t j = 0; j < per; j++) x[j] = cb_rng_uniform(&s);
        for (int64_t j = 0; j < batch; j++) lab[j] = (int32_t)(cb_rng_lcg(&s) % (uint64_t)(classes > 0 ? classes : 1));
    }
    cb_status st = cb_exec_set_input(e, x, lab);
    free(x);
    free(lab);
    if (st != CB_OK) return cb_fail(&r->err, st, NULL, NULL, "replica %d: cannot set its input", r->rank);
    return CB_OK;
}

static void *replica_main(void *arg) {
    replica *r = arg;
    shared *sh = r->sh;
    const cb_dist_opts *o = sh->o;
    r->st = setup(r);
    if (!all_ok(r)) return NULL;
    ncclResult_t nr = o->nccl_id ? ncclCommInitRank(&r->comm, o->world, sh->id, o->rank_base + r->rank)
                                 : ncclCommInitRank(&r->comm, o->ngpus, sh->id, r->rank);
    if (nr != ncclSuccess) r->st = nccl_fail(&r->err, "ncclCommInitRank", nr);
    if (!all_ok(r)) return NULL;
    cb_exec *e = r->e;
    // replica 0's parameters and running statistics everywhere
    if ((nr = ncclGroupStart()) == ncclSuccess) {
        ncclBroadcast(e->params, e->params, (size_t)e->nparams, ncclFloat, 0, r->comm, r->cs);
        if (e->nstats) ncclBroadcast(e->stats, e->stats, (size_t)e->nstats, ncclFloat, 0, r->comm, r->cs);
        nr = ncclGroupEnd();
    }
    cudaError_t c = cudaStreamSynchronize(r->cs);
    if (nr != ncclSuccess) r->st = nccl_fail(&r->err, "ncclBroadcast", nr);
    else if (c != cudaSuccess) r->st = cuda_fail(&r->err, "broadcast", c);
    e->param_version++;
    if (!all_ok(r)) return NULL;
    // with the all-reduce: warm-up, then the timed steps
    for (int it = 0; it < o->warmup + o->iters; it++) {
        pthread_barrier_wait(&sh->bar);
        double ms, cms;
        step(r, o->comm, &ms, &cms);
        if (it >= o->warmup) r->step_ms[it - o->warmup] = ms, r->comm_ms[it - o->warmup] = cms;
    }
    c = cudaDeviceSynchronize();
    if (c != cudaSuccess) r->st = cuda_fail(&r->err, "training steps", c);
    r->params_host = malloc((size_t)e->nparams * sizeof(float) + 1);
    if (!r->params_host) abort();
    cudaMemcpy(r->params_host, e->params, (size_t)e->nparams * sizeof(float), cudaMemcpyDeviceToHost);
    // the replicas' compute alone (no all-reduce): as many steps again
    for (int it = 0; o->comm && it < o->warmup + o->iters && r->st == CB_OK; it++) {
        pthread_barrier_wait(&sh->bar);
        double ms, cms;
        step(r, false, &ms, &cms);
        if (it >= o->warmup) r->compute_ms[it - o->warmup] = ms;
    }
    return NULL;
}

cb_status cb_dist_fullpass(cb_net *const *nets, const cb_exec_opts *eo, const cb_dist_opts *o, cb_dist_result *res, float *params_out,
                           int64_t nparams_out, cb_error *err) {
    int n = o->ngpus;
    if (n < 1 || n > CB_DIST_MAX_GPUS) return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "--gpus: %d is not in [1, %d]", n, CB_DIST_MAX_GPUS);
    if (o->grad_precision != CB_PREC_FP32 && o->grad_precision != CB_PREC_BF16)
        return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "--grad-precision: %s is not fp32 or bf16", cb_precision_name(o->grad_precision));
    if (o->iters < 1 || o->warmup < 0) return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "--iters must be at least 1");
    int have = cb_dist_device_count();
    for (int r = 0; r < n; r++)
        if (o->devices[r] < 0 || o->devices[r] >= have)
            return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "GPU %d does not exist: this machine has %d", o->devices[r], have);
    shared sh = {.o = o, .eo = eo, .nets = nets};
    if (o->nccl_id) {
        if (o->world < n || o->rank_base < 0 || o->rank_base + n > o->world)
            return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "ranks %d..%d are not within a world of %d", o->rank_base, o->rank_base + n - 1, o->world);
        memcpy(&sh.id, o->nccl_id, sizeof sh.id);
    } else {
        ncclResult_t nr = ncclGetUniqueId(&sh.id);
        if (nr != ncclSuccess) return nccl_fail(err, "ncclGetUniqueId", nr);
    }
    pthread_barrier_init(&sh.bar, NULL, (unsigned)n);
    pthread_mutex_init(&sh.mu, NULL);
    replica *rs = calloc((size_t)n, sizeof *rs);
    double *buf = calloc((size_t)n * 3 * (size_t)o->iters, sizeof *buf);
    if (!rs || !buf) abort();
    pthread_t th[CB_DIST_MAX_GPUS];
    for (int r = 0; r < n; r++) {
        rs[r] = (replica){.rank = r, .dev = o->devices[r], .sh = &sh};
        rs[r].step_ms = buf + (size_t)(3 * r) * (size_t)o->iters;
        rs[r].comm_ms = rs[r].step_ms + o->iters;
        rs[r].compute_ms = rs[r].comm_ms + o->iters;
    }
    int64_t np = 0;
    cb_status st = CB_OK;
    for (int r = 0; r < n; r++) {
        if (pthread_create(&th[r], NULL, replica_main, &rs[r]) != 0) {
            fprintf(stderr, "convbench: cannot start a thread for GPU %d\n", o->devices[r]);
            abort(); // the others wait at a barrier for it
        }
    }
    for (int r = 0; r < n; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < n && st == CB_OK; r++)
        if (rs[r].st != CB_OK) *err = rs[r].err, st = rs[r].st;
    if (st == CB_OK) {
        np = rs[0].e->nparams;
        double *step = malloc(sizeof(double) * (size_t)o->iters), *comp = malloc(sizeof(double) * (size_t)o->iters);
        if (!step || !comp) abort();
        for (int it = 0; it < o->iters; it++) {
            step[it] = comp[it] = 0;
            for (int r = 0; r < n; r++) {
                if (rs[r].step_ms[it] > step[it]) step[it] = rs[r].step_ms[it];
                if (rs[r].compute_ms[it] > comp[it]) comp[it] = rs[r].compute_ms[it];
            }
        }
        res->step_ms = median(step, o->iters);
        res->compute_ms = o->comm ? median(comp, o->iters) : res->step_ms;
        res->comm_ms = median(rs[0].comm_ms, o->iters);
        res->loss = rs[0].loss;
        res->buckets = rs[0].nb;
        int64_t learn = learnable(rs[0].e, NULL, NULL);
        res->params = learn;
        // every replica's parameters after the steps with the all-reduce: they must be equal
        res->max_param_diff = 0;
        for (int r = 1; r < n; r++)
            for (int64_t j = 0; j < np; j++) {
                double d = fabs((double)rs[r].params_host[j] - rs[0].params_host[j]);
                if (!(d <= res->max_param_diff)) res->max_param_diff = d; // NaN counts as the largest
            }
        if (params_out) {
            if (nparams_out != learn)
                st = cb_fail(err, CB_STATUS_ARG, NULL, NULL, "parameters: %lld asked for, the network has %lld", (long long)nparams_out, (long long)learn);
            else learnable(rs[0].e, rs[0].params_host, params_out);
        }
        free(step);
        free(comp);
    }
    for (int r = 0; r < n; r++) {
        if (rs[r].e) {
            cudaSetDevice(rs[r].dev);
            for (int k = 0; k < rs[r].nevents; k++) cudaEventDestroy(rs[r].ready[k]), cudaEventDestroy(rs[r].start[k]), cudaEventDestroy(rs[r].end[k]);
            if (rs[r].done) cudaEventDestroy(rs[r].done);
            if (rs[r].cs) cudaStreamDestroy(rs[r].cs);
            cudaFree(rs[r].stage);
            if (rs[r].comm) ncclCommDestroy(rs[r].comm);
            cb_exec_destroy(rs[r].e);
        }
        free(rs[r].params_host);
    }
    pthread_barrier_destroy(&sh.bar);
    pthread_mutex_destroy(&sh.mu);
    free(rs);
    free(buf);
    return st;
}

cb_status cb_dist_allreduce_bench(int n, const int *devices, const size_t *bytes, int nsizes, bool bf16, int warmup, int iters, double *sec,
                                  cb_error *err) {
    if (n < 1 || n > CB_DIST_MAX_GPUS) return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "--gpus: %d is not in [1, %d]", n, CB_DIST_MAX_GPUS);
    int have = cb_dist_device_count();
    for (int r = 0; r < n; r++)
        if (devices[r] < 0 || devices[r] >= have)
            return cb_fail(err, CB_STATUS_ARG, NULL, NULL, "GPU %d does not exist: this machine has %d", devices[r], have);
    size_t most = 0, es = bf16 ? 2 : 4;
    for (int k = 0; k < nsizes; k++) most = bytes[k] > most ? bytes[k] : most;
    ncclComm_t comm[CB_DIST_MAX_GPUS] = {0};
    cudaStream_t s[CB_DIST_MAX_GPUS] = {0};
    // iters all-reduces back to back, an event after each on every GPU: one all-reduce's time is the
    // gap between its event and the one before (nccl-tests times such a loop). The first gap starts
    // at an event recorded after the warm-up's all-reduces, so the host's launch skew between the
    // GPUs falls in the warm-up and not in a timed all-reduce.
    int ne = (iters > 0 ? iters : 1) + 1;
    cudaEvent_t *ev = calloc((size_t)n * (size_t)ne, sizeof *ev);
    void *buf[CB_DIST_MAX_GPUS] = {0};
    if (!ev) abort();
    cb_status st = CB_OK;
    ncclResult_t nr = ncclCommInitAll(comm, n, devices);
    if (nr != ncclSuccess) {
        free(ev);
        return nccl_fail(err, "ncclCommInitAll", nr);
    }
    for (int r = 0; r < n && st == CB_OK; r++) {
        cudaError_t c = cudaSetDevice(devices[r]);
        if (c == cudaSuccess) c = cudaMalloc(&buf[r], most ? most : es);
        if (c == cudaSuccess) c = cudaMemset(buf[r], 0, most ? most : es); // sums of zeros: no overflow at any size
        if (c == cudaSuccess) c = cudaStreamCreateWithFlags(&s[r], cudaStreamNonBlocking);
        for (int i = 0; i < ne && c == cudaSuccess; i++) c = cudaEventCreate(&ev[r * ne + i]);
        if (c != cudaSuccess) st = cuda_fail(err, "all-reduce buffers", c);
    }
    double *v = malloc(sizeof(double) * (size_t)ne);
    if (!v) abort();
    for (int k = 0; k < nsizes && st == CB_OK; k++) {
        size_t count = bytes[k] / es;
        for (int it = 0; it < warmup + iters && st == CB_OK; it++) {
            if (it == warmup)
                for (int r = 0; r < n; r++) cudaSetDevice(devices[r]), cudaEventRecord(ev[r * ne], s[r]);
            ncclGroupStart();
            for (int r = 0; r < n; r++) ncclAllReduce(buf[r], buf[r], count, bf16 ? ncclBfloat16 : ncclFloat, ncclSum, comm[r], s[r]);
            nr = ncclGroupEnd();
            if (nr != ncclSuccess) st = nccl_fail(err, "ncclAllReduce", nr);
            if (it >= warmup)
                for (int r = 0; r < n; r++) cudaSetDevice(devices[r]), cudaEventRecord(ev[r * ne + it - warmup + 1], s[r]);
        }
        for (int r = 0; r < n && st == CB_OK; r++) {
            cudaSetDevice(devices[r]);
            cudaError_t c = cudaEventSynchronize(ev[r * ne + ne - 1]);
            if (c != cudaSuccess) st = cuda_fail(err, "all-reduce", c);
        }
        for (int i = 0; i < iters && st == CB_OK; i++) {
            double worst = 0;
            for (int r = 0; r < n; r++) {
                float ms = 0;
                cudaEventElapsedTime(&ms, ev[r * ne + i], ev[r * ne + i + 1]);
                if (ms > worst) worst = ms;
            }
            v[i] = worst * 1e-3;
        }
        if (st == CB_OK) sec[k] = median(v, iters);
    }
    free(v);
    for (int r = 0; r < n; r++) {
        cudaSetDevice(devices[r]);
        for (int i = 0; i < ne; i++)
            if (ev[r * ne + i]) cudaEventDestroy(ev[r * ne + i]);
        if (s[r]) cudaStreamDestroy(s[r]);
        cudaFree(buf[r]);
        if (comm[r]) ncclCommDestroy(comm[r]);
    }
    free(ev);
    return st;
}
