// Fitting a GPU calibration: each algorithm's time on the calibration shapes as
//   t = overhead + flops / (rate * util) + bytes / bw
// (a fixed cost per call: launches, the event pair, pipeline fill and drain; a compute term on
// the algorithm's own FLOPs; a memory term on its DRAM traffic including workspace; util the
// wave quantisation of cb_conv_util), and each memory-bound operation as overhead + bytes / bw.
// The terms add rather than overlap (roofline max) because the algorithms that have both run
// them as separate kernels (transforms, then products), and fixed costs do not overlap work.
// Coefficients are non-negative and minimise the relative error: weighted least squares, then
// iteratively reweighted towards the least absolute relative error (the median is what the
// evaluation reports).
#include "model/model.h"
#include "core/net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOL_MAX 7 // the constant and up to 6 columns

// solve the k x k system A x = b (k <= NCOL_MAX) by Gaussian elimination with partial pivoting
static bool solve(double A[NCOL_MAX][NCOL_MAX], double b[NCOL_MAX], int k, double x[NCOL_MAX]) {
    for (int c = 0; c < k; c++) {
        int piv = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(A[r][c]) > fabs(A[piv][c])) piv = r;
        if (fabs(A[piv][c]) < 1e-300) return false;
        for (int j = 0; j < k; j++) {
            double t = A[c][j];
            A[c][j] = A[piv][j], A[piv][j] = t;
        }
        double t = b[c];
        b[c] = b[piv], b[piv] = t;
        for (int r = c + 1; r < k; r++) {
            double f = A[r][c] / A[c][c];
            for (int j = c; j < k; j++) A[r][j] -= f * A[c][j];
            b[r] -= f * b[c];
        }
    }
    for (int r = k - 1; r >= 0; r--) {
        double s = b[r];
        for (int j = r + 1; j < k; j++) s -= A[r][j] * x[j];
        x[r] = s / A[r][r];
    }
    return true;
}

// the prediction of row i: coef[0] + sum coef[j] * x[j-1][i]
static double model_at(const double *const *x, int nx, const double *coef, int i) {
    double v = coef[0];
    for (int j = 0; j < nx; j++) v += coef[j + 1] * x[j][i];
    return v;
}

// columns 1, x[0], x[1], ... divided by t (relative residuals), scaled to unit RMS; w: row weights;
// fixed >= 0: the constant is that, not fitted
static bool nnls_weighted(const double *t, const double *const *x, int nx, const double *w, int n, double fixed, double coef[NCOL_MAX]) {
    int ncol = nx + 1;
    double scale[NCOL_MAX] = {0};
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ncol; j++) {
            double v = (j ? x[j - 1][i] : 1) / t[i];
            scale[j] += v * v;
        }
    for (int j = 0; j < ncol; j++) scale[j] = scale[j] > 0 ? sqrt(scale[j] / n) : 1;
    double best = INFINITY;
    memset(coef, 0, sizeof(double) * (size_t)ncol); // (the caller's coef holds nx + 1)
    for (int mask = 1; mask < (1 << ncol); mask++) { // every non-empty set of free coefficients
        if (fixed >= 0 && (mask & 1)) continue;
        int idx[NCOL_MAX], k = 0;
        for (int j = 0; j < ncol; j++)
            if (mask >> j & 1) idx[k++] = j;
        double A[NCOL_MAX][NCOL_MAX] = {{0}}, b[NCOL_MAX] = {0}, sol[NCOL_MAX] = {0};
        for (int i = 0; i < n; i++) {
            double row[NCOL_MAX];
            for (int r = 0; r < k; r++) row[r] = (idx[r] ? x[idx[r] - 1][i] : 1) / t[i] / scale[idx[r]];
            double rhs = fixed >= 0 ? 1 - fixed / t[i] : 1;
            for (int r = 0; r < k; r++) {
                b[r] += w[i] * row[r] * rhs;
                for (int c = 0; c < k; c++) A[r][c] += w[i] * row[r] * row[c];
            }
        }
        if (!solve(A, b, k, sol)) continue;
        bool ok = true;
        for (int r = 0; r < k; r++) ok &= sol[r] >= 0;
        if (!ok) continue;
        double c[NCOL_MAX] = {fixed >= 0 ? fixed : 0}, res = 0;
        for (int r = 0; r < k; r++) c[idx[r]] = sol[r] / scale[idx[r]];
        for (int i = 0; i < n; i++) {
            double e = model_at(x, nx, c, i) / t[i] - 1;
            res += w[i] * e * e;
        }
        if (res < best) best = res, memcpy(coef, c, sizeof(double) * (size_t)ncol);
    }
    return isfinite(best);
}

bool cb_fit_nnls_n(const double *t, const double *const *x, int nx, int n, double *coef) { return cb_fit_nnls_fixed(t, x, nx, n, -1, coef); }

bool cb_fit_nnls_fixed(const double *t, const double *const *x, int nx, int n, double fixed, double *coef) {
    if (n < 1 || nx < 0 || nx >= NCOL_MAX || (fixed >= 0 && nx < 1)) return false;
    double *w = malloc(sizeof(double) * (size_t)n), c[NCOL_MAX];
    if (!w) abort();
    for (int i = 0; i < n; i++) w[i] = 1;
    bool ok = nnls_weighted(t, x, nx, w, n, fixed, c);
    for (int it = 0; ok && it < 20; it++) { // towards least absolute relative error
        for (int i = 0; i < n; i++) w[i] = 1 / fmax(fabs(model_at(x, nx, c, i) / t[i] - 1), 1e-3);
        double c2[NCOL_MAX];
        if (!nnls_weighted(t, x, nx, w, n, fixed, c2)) break;
        memcpy(c, c2, sizeof c2);
    }
    free(w);
    memcpy(coef, c, sizeof(double) * (size_t)(nx + 1));
    return ok;
}

bool cb_fit_nnls(const double *t, const double *x1, const double *x2, int n, double *a, double *b1, double *b2) {
    const double *x[2] = {x1, x2};
    double c[NCOL_MAX] = {0};
    bool ok = cb_fit_nnls_n(t, x, x2 ? 2 : 1, n, c);
    *a = c[0], *b1 = c[1];
    if (b2) *b2 = c[2];
    return ok;
}

static int elem_bytes(cb_precision p) { return p == CB_PREC_BF16 ? 2 : 4; }

static void fc_cost(const cb_conv_params *p, int e, cb_algo_cost *c) {
    memset(c, 0, sizeof *c);
    double n = p->n, ci = p->c, k = p->k;
    c->applicable = true;
    c->mults = n * ci * k;
    c->flops = 2 * n * ci * k;
    c->bytes = e * (n * ci + ci * k + n * k);
}

static void sample_classes(const cb_cal_sample *s, int n, unsigned char *cls);

// the implicit GEMM's coordinates of a convolution phase (an FC layer: its GEMM), log2: rows, columns,
// reduction, channels per filter tap
static void cal_coords(const cb_conv_params *p, cb_phase ph, bool fc, float f[4]) {
    double g = p->groups > 0 ? p->groups : 1, cg = p->c / g, kg = p->k / g, rs = (double)p->r * p->s;
    double m, n, k, tap = fc ? p->c : cg;
    if (fc) m = p->n, n = p->k, k = p->c;
    else if (ph == CB_PHASE_FORWARD) m = (double)p->n * p->p * p->q, n = p->k, k = cg * rs;
    else if (ph == CB_PHASE_BWD_DATA) m = (double)p->n * p->h * p->w, n = p->c, k = kg * rs;
    else m = p->k, n = cg * rs, k = (double)p->n * p->p * p->q;
    const double v[4] = {m, n, k, tap};
    for (int i = 0; i < 4; i++) f[i] = (float)log2(v[i] > 1 ? v[i] : 1);
}

static double algo_s(const cb_calibration *cal, const cb_cal_algo *a, const cb_conv_params *p, bool fc, cb_algo_cost *c, bool local);

double cb_cal_local(const cb_calibration *cal, const cb_cal_algo *a, const cb_conv_params *p, bool fc) {
    if (!cal->local || cal->nres <= 0 || a < cal->algo || a >= cal->algo + cal->nalgo) return 1;
    int ai = (int)(a - cal->algo);
    float f[4];
    cal_coords(p, a->phase, fc, f);
    double sw = 0, swr = 0;
    for (int i = cal->res_at[ai]; i < cal->res_at[ai + 1]; i++) {
        const cb_cal_resid *q = &cal->res[i];
        double d2 = 0;
        for (int j = 0; j < 4; j++) d2 += (double)(q->f[j] - f[j]) * (q->f[j] - f[j]);
        double w = exp(-0.5 * d2);
        sw += w, swr += w * q->r;
    }
    return exp(swr / (sw + 1.0));
}

static int cmp_resid(const void *a, const void *b) { return ((const cb_cal_resid *)a)->algo - ((const cb_cal_resid *)b)->algo; }

// cuDNN's fastest per measured shape: for each convolution shape, phase and precision that cuDNN's
// algorithms were timed on (legacy and the graph race, FWD_* / BWD_*), a sample of entry
// FWD_BEST, BWD_DATA_BEST or BWD_FILTER_BEST holding the least time among those that ran within
// the workspace limit, as the cudnn backend's own race picks. The model's "best" form prices a
// cuDNN convolution by that entry alone: the least of every algorithm's fitted time is biased low
// (each fit errs, and the least picks the one that errs short), where the fastest's own fit is not.
static int cmp_shape(const void *pa, const void *pb) { // (phase, precision, shape)
    const cb_cal_sample *a = pa, *b = pb;
    if (a->phase != b->phase) return a->phase < b->phase ? -1 : 1;
    if (a->prec != b->prec) return a->prec < b->prec ? -1 : 1;
    return memcmp(&a->p, &b->p, sizeof a->p);
}
// a timed sample of one of cuDNN's algorithms (its names: FWD_*, BWD_*), not of the fastest's entry
static bool cudnn_sample(const cb_cal_sample *q) {
    cb_algo_form f;
    return q->kind == CB_SAMPLE_CONV && q->ms > 0 && (unsigned)q->phase < CB_PHASE_COUNT && (unsigned)q->prec < CB_PREC_COUNT &&
           (!strncmp(q->name, "FWD_", 4) || !strncmp(q->name, "BWD_", 4)) && cb_algo_form_of(q->name, &f) && !f.best;
}
static const char *const BEST_NAME[CB_PHASE_COUNT] = {"FWD_BEST", "BWD_DATA_BEST", "BWD_FILTER_BEST"};
// s's samples followed by the best-of samples (*n grows); NULL where there are none to add
static cb_cal_sample *with_best(const cb_cal_sample *s, int *n) {
    // only where a phase and precision has two algorithms or more (the fastest of one is itself)
    const char *first[CB_PHASE_COUNT][CB_PREC_COUNT] = {{0}};
    bool several[CB_PHASE_COUNT][CB_PREC_COUNT] = {{0}};
    int m = 0;
    for (int i = 0; i < *n; i++) {
        const cb_cal_sample *q = &s[i];
        if (!cudnn_sample(q)) continue;
        const char **f = &first[q->phase][q->prec];
        if (!*f) *f = q->name;
        else if (strcmp(*f, q->name)) several[q->phase][q->prec] = true;
    }
    for (int i = 0; i < *n; i++) m += cudnn_sample(&s[i]) && several[s[i].phase][s[i].prec];
    if (!m) return NULL;
    // the samples, then those of cuDNN's algorithms sorted by shape, each shape's run made its least
    cb_cal_sample *out = malloc(sizeof *out * (size_t)(*n + m)), *t = out + *n;
    if (!out) abort();
    memcpy(out, s, sizeof *out * (size_t)*n);
    m = 0;
    for (int i = 0; i < *n; i++)
        if (cudnn_sample(&s[i]) && several[s[i].phase][s[i].prec]) t[m++] = s[i];
    qsort(t, (size_t)m, sizeof *t, cmp_shape);
    int k = 0;
    for (int a = 0, b; a < m; a = b) {
        cb_cal_sample lo = t[a];
        for (b = a + 1; b < m && !cmp_shape(&t[a], &t[b]); b++)
            if (t[b].ms < lo.ms) lo = t[b];
        snprintf(lo.name, sizeof lo.name, "%s", BEST_NAME[lo.phase]);
        t[k++] = lo; // (k <= a: the run is read whole before)
    }
    *n += k;
    return out;
}

// the residuals of the samples s (the best-of ones among them) against cal's entries
static void residuals_of(cb_calibration *cal, const cb_cal_sample *s, int n);
void cb_cal_residuals(cb_calibration *cal, const cb_cal_sample *s0, int n) {
    cb_cal_sample *sb = with_best(s0, &n);
    residuals_of(cal, sb ? sb : s0, n);
    free(sb);
}
static void residuals_of(cb_calibration *cal, const cb_cal_sample *s, int n) {
    cal->nres = 0;
    unsigned char *cls = calloc((size_t)(n > 0 ? n : 1), 1);
    if (!cls) abort();
    sample_classes(s, n, cls);
    for (int i = 0; i < n && cal->nres < CB_CAL_MAX_RESID; i++) {
        const cb_cal_sample *q = &s[i];
        if (q->kind == CB_SAMPLE_MOP || !(q->ms > 0)) continue;
        bool fc = q->kind == CB_SAMPLE_FC;
        for (int j = 0; j < cal->nalgo; j++) {
            const cb_cal_algo *a = &cal->algo[j];
            if (a->fc != fc || a->phase != q->phase || a->prec != q->prec || a->grouped != (cls[i] == 1) || a->unaligned != (cls[i] == 2) ||
                strcmp(a->name, q->name))
                continue;
            double t = algo_s(cal, a, &q->p, fc, NULL, false);
            if (t > 0) {
                cb_cal_resid *r = &cal->res[cal->nres++];
                r->algo = (short)j;
                cal_coords(&q->p, a->phase, fc, r->f);
                r->r = (float)log(q->ms / 1e3 / t);
            }
            break;
        }
    }
    free(cls);
    // grouped by entry, each entry's from res_at[j] (qsort is not stable; the order within an entry
    // does not matter: cb_cal_local sums over it)
    qsort(cal->res, (size_t)cal->nres, sizeof *cal->res, cmp_resid);
    for (int j = 0, i = 0; j <= CB_CAL_MAX_ALGOS; j++) {
        while (i < cal->nres && cal->res[i].algo < j) i++;
        cal->res_at[j] = (short)i;
    }
}

double cb_cal_algo_s(const cb_calibration *cal, const cb_cal_algo *a, const cb_conv_params *p, bool fc, cb_algo_cost *c) {
    return algo_s(cal, a, p, fc, c, true);
}

static double algo_s(const cb_calibration *cal, const cb_cal_algo *a, const cb_conv_params *p, bool fc, cb_algo_cost *c, bool local) {
    cb_algo_cost tmp;
    if (!c) c = &tmp;
    double util = 1, fill = 1; // (fill: the tiles' useful fraction, in both terms; util includes it)
    if (fc) fc_cost(p, elem_bytes(a->prec), c);
    else {
        cb_conv_cost(p, a->phase, &a->form, elem_bytes(a->prec), 0, c);
        if (!c->applicable) return -1;
        fill = cb_conv_fill(p, a->phase, a->prec, &a->form, cal);
        util = cb_conv_util(p, a->phase, &a->form, cal) * fill;
    }
    bool both = a->wave_rate > 0 || cal->wave_both; // the throughput term without the wave quantisation
    double work = a->rate > 0 ? c->flops / (a->rate * (both ? fill : util)) : 0;
    double t = cb_cal_fixed_s(cal, a->overhead_s) + work + (a->wave_rate > 0 ? c->flops / (a->wave_rate * util) : 0) +
               (a->bw > 0 ? c->bytes / a->bw : 0);
    return local && cal->local ? t * cb_cal_local(cal, a, p, fc) : t;
}

double cb_cal_fixed_s(const cb_calibration *cal, double overhead_s) {
    if (!cal->launch_overlap || cal->stream_timed) return overhead_s;
    return fmax(0, overhead_s - cal->launch_s);
}

// an entry's time for tensor t whose bytes term counts scale x fp32's bytes and whose storage has
// elem bytes an element (the spill term's bytes)
static double mop_entry_s(const cb_calibration *cal, const cb_cal_mop *o, cb_mop m, const cb_conv_params *t, double scale, double elem) {
    return cb_cal_fixed_s(cal, o->overhead_s) + (o->bw > 0 ? scale * cb_mop_bytes(m, t) / o->bw : 0) + o->plane_s * t->n * t->h * t->w +
           o->win_s * cb_mop_window(m, t) + o->visit_s * cb_mop_visits(m, t) + o->tile_s * cb_mop_tiled(m, t) +
           o->tile_line_s * cb_mop_tiled_line(m, t, elem) + o->spill_s * cb_mop_spill(m, t, elem, cal->l2_bytes);
}
double cb_cal_mop_s(const cb_calibration *cal, cb_mop m, const cb_conv_params *t) { return cb_cal_mop_es_s(cal, m, t, 1); }
double cb_cal_mop_es_s(const cb_calibration *cal, cb_mop m, const cb_conv_params *t, double es) {
    const cb_cal_mop *o = &cal->mop[m];
    if (o->n <= 0) o = &cal->mop[CB_MOP_COPY];
    if (o->n <= 0) return -1;
    return mop_entry_s(cal, o, m, t, es, 4 * es);
}
double cb_cal_mop16_s(const cb_calibration *cal, cb_mop m, const cb_conv_params *t) {
    return cal->mop16[m].n > 0 ? mop_entry_s(cal, &cal->mop16[m], m, t, 1, 2) : -1;
}

static double peak_of(const cb_device *d, cb_precision p) { return d->peak[p] > 0 ? d->peak[p] : d->peak[CB_PREC_FP32]; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void err_stats(double *e, int n, double *med, double *p90) {
    qsort(e, (size_t)n, sizeof *e, cmp_double);
    double pm = 0.5 * (n - 1), pn = 0.9 * (n - 1);
    int i = (int)pm, j = (int)pn;
    *med = i + 1 < n ? e[i] + (pm - i) * (e[i + 1] - e[i]) : e[n - 1];
    *p90 = j + 1 < n ? e[j] + (pn - j) * (e[j + 1] - e[j]) : e[n - 1];
}

// fit one algorithm entry on the samples of its group (ms > 0); fixed >= 0: the fixed cost is that
static void fit_algo(const cb_cal_sample *s, const int *idx, int n, const cb_device *d, cb_calibration *cal, cb_cal_algo *a, double fixed) {
    bool fc = s[idx[0]].kind == CB_SAMPLE_FC;
    double *t = malloc(sizeof(double) * 5 * (size_t)n), *x1 = t + n, *x2 = t + 2 * n, *e = t + 3 * n, *xw = t + 4 * n;
    bool both = cal->wave_both && !fc; // the throughput term on flops, the wave term on flops / util
    if (!t) abort();
    int m = 0; // samples the form applies to (a shape cuDNN runs that the form's rules exclude is left out)
    for (int k = 0; k < n; k++) {
        const cb_cal_sample *q = &s[idx[k]];
        cb_algo_cost c;
        double util = 1, fill = 1; // (as algo_s)
        if (fc) fc_cost(&q->p, elem_bytes(a->prec), &c);
        else {
            cb_conv_cost(&q->p, a->phase, &a->form, elem_bytes(a->prec), 0, &c);
            fill = cb_conv_fill(&q->p, a->phase, a->prec, &a->form, cal);
            util = cb_conv_util(&q->p, a->phase, &a->form, cal) * fill;
        }
        if (!c.applicable) continue;
        t[m] = q->ms / 1e3;
        x1[m] = both ? c.flops / fill : c.flops / util;
        xw[m] = c.flops / util;
        x2[m++] = c.bytes;
    }
    a->excluded = n - m;
    n = m;
    if (!n) {
        free(t);
        return;
    }
    double oh = 0, b1 = 0, b2 = 0, bw = 0;
    const double *x[3] = {x1, x2, xw};
    double c[4] = {0};
    cb_fit_nnls_fixed(t, x, both ? 3 : 2, n, fixed, c);
    oh = c[0], b1 = c[1], b2 = c[2], bw = both ? c[3] : 0;
    a->overhead_s = oh;
    a->rate = b1 > 0 ? 1 / b1 : 0;
    a->bw = b2 > 0 ? 1 / b2 : 0;
    a->wave_rate = bw > 0 ? 1 / bw : 0;
    a->eff = a->rate / peak_of(d, a->prec);
    a->n = n;
    for (int k = 0; k < n; k++) e[k] = 100 * fabs((oh + b1 * x1[k] + b2 * x2[k] + bw * xw[k]) / t[k] - 1);
    err_stats(e, n, &a->err_median_pct, &a->err_p90_pct);
    free(t);
}

static bool grouped_sample(const cb_cal_sample *s) { return s->kind == CB_SAMPLE_CONV && s->p.groups > 1; }

bool cb_conv_unaligned(const cb_conv_params *p) { return p->groups <= 1 && (p->c % 4 || p->k % 4); }

static bool same_algo(const cb_cal_sample *a, const cb_cal_sample *b) {
    return a->kind == b->kind && a->phase == b->phase && a->prec == b->prec && !strcmp(a->name, b->name);
}

// each sample's entry: 0 dense, 1 grouped (depthwise: kernels of their own), 2 unaligned channels
// where the algorithm has CB_CAL_MIN_UNALIGNED such measured samples (else dense)
static void sample_classes(const cb_cal_sample *s, int n, unsigned char *cls) {
    for (int i = 0; i < n; i++) cls[i] = grouped_sample(&s[i]) ? 1 : s[i].kind == CB_SAMPLE_CONV && cb_conv_unaligned(&s[i].p) ? 2 : 0;
    for (int i = 0; i < n; i++) {
        if (cls[i] != 2) continue;
        int m = 0;
        for (int j = 0; j < n; j++) m += cls[j] == 2 && s[j].ms > 0 && same_algo(&s[i], &s[j]);
        if (m < CB_CAL_MIN_UNALIGNED)
            for (int j = 0; j < n; j++)
                if (cls[j] == 2 && same_algo(&s[i], &s[j])) cls[j] = 0;
    }
}

cb_status cb_cal_fit(const cb_cal_sample *s0, int n, cb_device *d, cb_error *err) {
    cb_calibration *cal = &d->cal;
    cb_cal_sample *sb = with_best(s0, &n);
    const cb_cal_sample *s = sb ? sb : s0;
    cal->nalgo = 0;
    cal->l2_bytes = d->l2_bytes;
    memset(cal->mop, 0, sizeof cal->mop);
    int *idx = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    bool *done = calloc((size_t)(n > 0 ? n : 1), 1);
    unsigned char *cls = calloc((size_t)(n > 0 ? n : 1), 1);
    if (!idx || !done || !cls) abort();
    sample_classes(s, n, cls);
    cb_status st = CB_OK;
    // the unaligned entries last: each takes its dense twin's fixed cost (a call's launch and host
    // work do not depend on the channels; the 26 unaligned shapes hold only four latency-bound ones,
    // and a fixed cost of their own left the small unaligned layers 37% too fast)
    for (int pass = 0; pass < 2 && st == CB_OK; pass++) {
        for (int i = 0; i < n; i++) {
            if (done[i] || s[i].kind == CB_SAMPLE_MOP || (cls[i] == 2) != (pass == 1)) continue;
            int m = 0;
            for (int j = i; j < n; j++)
                if (!done[j] && same_algo(&s[i], &s[j]) && cls[i] == cls[j]) {
                    done[j] = true;
                    if (s[j].ms > 0) idx[m++] = j;
                }
            if (!m) continue; // never supported: not an algorithm of this device
            if (cal->nalgo == CB_CAL_MAX_ALGOS) {
                st = cb_fail(err, CB_STATUS_ARG, "calibration", NULL, "more than %d algorithm entries", CB_CAL_MAX_ALGOS);
                break;
            }
            cb_cal_algo *a = &cal->algo[cal->nalgo];
            memset(a, 0, sizeof *a);
            snprintf(a->name, sizeof a->name, "%s", s[i].name);
            if (!cb_algo_form_of(a->name, &a->form)) continue; // a cuDNN algorithm without a cost form: not modelled
            a->phase = s[i].phase;
            a->prec = s[i].prec;
            a->fc = s[i].kind == CB_SAMPLE_FC;
            a->grouped = cls[i] == 1;
            a->unaligned = cls[i] == 2;
            double fixed = -1;
            for (int j = 0; a->unaligned && j < cal->nalgo; j++) {
                const cb_cal_algo *b = &cal->algo[j];
                if (!b->unaligned && !b->grouped && b->fc == a->fc && b->phase == a->phase && b->prec == a->prec && !strcmp(b->name, a->name))
                    fixed = b->overhead_s;
            }
            fit_algo(s, idx, m, d, cal, a, fixed);
            if (a->n > 0) cal->nalgo++;
        }
    }
    // the passes: fp32 NCHW samples into mop, bf16 NHWC ones (marked bf16) into mop16
    for (int op = 0; st == CB_OK && op < 2 * CB_MOP_COUNT; op++) {
        int m = 0;
        bool b16 = op >= CB_MOP_COUNT;
        for (int j = 0; j < n; j++)
            if (s[j].kind == CB_SAMPLE_MOP && s[j].ms > 0 && (s[j].prec == CB_PREC_BF16) == b16 &&
                !strcmp(s[j].name, cb_mop_name((cb_mop)(op % CB_MOP_COUNT))))
                idx[m++] = j;
        if (!m) continue;
        cb_mop mo = (cb_mop)(op % CB_MOP_COUNT);
        double *t = malloc(sizeof(double) * 9 * (size_t)m), *x = t + m, *pl = t + 2 * m, *wn = t + 3 * m, *vs = t + 4 * m, *e = t + 5 * m,
               *tl = t + 6 * m, *sp = t + 7 * m, *tc = t + 8 * m;
        if (!t) abort();
        bool win = false; // pooling samples with windows: the window terms instead of the plane's
        int ntiled = 0, nspill = 0;
        for (int k = 0; k < m; k++) { // (bf16's bytes counted as fp32's: its bw is per fp32 byte, as cb_cal_mop16_s reads it)
            const cb_conv_params *q = &s[idx[k]].p;
            t[k] = s[idx[k]].ms / 1e3, x[k] = cb_mop_bytes(mo, q), pl[k] = (double)q->n * q->h * q->w;
            wn[k] = cb_mop_window(mo, q), vs[k] = cb_mop_visits(mo, q), tl[k] = cb_mop_tiled(mo, q), tc[k] = cb_mop_tiled_line(mo, q, 2);
            sp[k] = cal->spill ? cb_mop_spill(mo, q, b16 ? 2 : 4, d->l2_bytes) : 0;
            win |= wn[k] > 0;
            ntiled += tl[k] > 0, nspill += sp[k] > 0;
        }
        // pooling: bytes, visits, overlap (on the 2026-11-25 H200 calibration's pooling samples the
        // in-sample median error of the six pooling passes is 6-17%; 9-30% with the plane and
        // the overlap, 5-24% with the plane and the visits), and the tiled windows' elements where
        // the samples hold both kinds (cb_mop_tiled); the other passes: bytes, plane
        // and the spill beyond the L2 where some samples pass it and some do not (cb_mop_spill); bf16
        // NHWC pooling in the pool_lines form: the tiled elements times their line fraction too
        // (cb_mop_tiled_line: on the 2026-11-29 H200 calibration the max pooling backward's in-sample
        // median error 19% -> 5%, leaving one sample out 23% -> 8%; fp32 NCHW: no change, not fitted)
        bool tiles = win && ntiled > 0 && ntiled < m, spill = nspill > 0 && nspill < m, lines = tiles && b16 && cal->pool_lines;
        const double *cols[6] = {x, win ? vs : pl};
        int nc = 2, c_win = -1, c_tile = -1, c_line = -1, c_spill = -1;
        if (win) c_win = nc, cols[nc++] = wn;
        if (tiles) c_tile = nc, cols[nc++] = tl;
        if (lines) c_line = nc, cols[nc++] = tc;
        if (spill) c_spill = nc, cols[nc++] = sp;
        double coef[7] = {0}, p90;
        cb_fit_nnls_n(t, cols, nc, m, coef);
        cb_cal_mop *o = b16 ? &cal->mop16[mo] : &cal->mop[mo];
        o->overhead_s = coef[0];
        o->bw = coef[1] > 0 ? 1 / coef[1] : 0;
        o->plane_s = win ? 0 : coef[2];
        o->visit_s = win ? coef[2] : 0;
        o->win_s = c_win > 0 ? coef[1 + c_win] : 0;
        o->tile_s = c_tile > 0 ? coef[1 + c_tile] : 0;
        o->tile_line_s = c_line > 0 ? coef[1 + c_line] : 0;
        o->spill_s = c_spill > 0 ? coef[1 + c_spill] : 0;
        o->n = m;
        for (int k = 0; k < m; k++) {
            double f = coef[0];
            for (int c = 0; c < nc; c++) f += coef[1 + c] * cols[c][k];
            e[k] = 100 * fabs(f / t[k] - 1);
        }
        err_stats(e, m, &o->err_median_pct, &p90);
        free(t);
    }
    free(idx);
    free(done);
    free(cls);
    if (st == CB_OK) residuals_of(cal, s, n);
    free(sb);
    return st;
}
