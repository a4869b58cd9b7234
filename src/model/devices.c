// The device database: data/devices.json read with cJSON, and the device objects that
// calibrate writes. Figures are kept in SI units (FLOP/s, bytes/s, seconds).
#include "model/model.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/net.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const ALGO_NAMES[] = {"gemm", "implicit_gemm", "winograd", "fft", "direct", "fft_tiling"};
_Static_assert(sizeof ALGO_NAMES / sizeof ALGO_NAMES[0] == CB_ALGO_COUNT, "algorithm names");
static const char *const PREC_KEYS[] = {"fp32", "tf32", "bf16", "fp16"};
_Static_assert(sizeof PREC_KEYS / sizeof PREC_KEYS[0] == CB_PREC_COUNT + 1, "precision keys");
static const char *const PHASE_KEYS[] = {"forward", "bwd_data", "bwd_filter"};
_Static_assert(sizeof PHASE_KEYS / sizeof PHASE_KEYS[0] == CB_PHASE_COUNT, "phase keys");

const char *cb_algo_name(cb_algo a) { return a < CB_ALGO_COUNT ? ALGO_NAMES[a] : "?"; }

bool cb_algo_parse(const char *s, cb_algo *a) {
    for (int i = 0; i < CB_ALGO_COUNT; i++)
        if (strcmp(s, ALGO_NAMES[i]) == 0) return *a = (cb_algo)i, true;
    return false;
}

const char *cb_devdb_path(void) {
    const char *e = getenv("CONVBENCH_DEVICES");
    if (e && *e) return e;
    static char path[4096];
    cb_data_file("data/devices.json", path, sizeof path);
    return path;
}


// Numbers of a device entry, checked as read: finite and in range (CB_DEV_* in core/limits.h),
// so that nothing infinite, negative or too large for an int reaches the model. The first bad
// one is reported: "SRC: device 'NAME': 'peak.fp32' is 0; must be in (0, 1e+21]".
typedef struct chk {
    const char *src, *dev, *sect; // file, device name, "peak." etc. for messages
    cb_error *err;
    bool ok;
} chk;
typedef enum num_kind { NUM_NONNEG, NUM_POS, NUM_COUNT, NUM_POSCOUNT } num_kind;

static double num(chk *c, const cJSON *o, const char *k, double dflt, num_kind kind) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!x) return dflt;
    double v = cJSON_IsNumber(x) ? x->valuedouble : NAN;
    bool count = kind == NUM_COUNT || kind == NUM_POSCOUNT, pos = kind == NUM_POS || kind == NUM_POSCOUNT;
    double hi = count ? CB_DEV_MAX_COUNT : CB_DEV_MAX_RATE;
    bool good = isfinite(v) && (pos ? v > 0 : v >= 0) && v <= hi && (!count || v == floor(v));
    if (!good && c->ok) {
        c->ok = false;
        c->err->status = CB_STATUS_PARSE;
        char shown[32];
        if (cJSON_IsNumber(x)) snprintf(shown, sizeof shown, "%g", v);
        else snprintf(shown, sizeof shown, "not a number");
        snprintf(c->err->msg, sizeof c->err->msg, "%s: device '%s': '%s%s' is %s; must be %s in %s0, %g]", c->src, c->dev,
                 c->sect ? c->sect : "", k, shown, count ? "an integer" : "a number", pos ? "(" : "[", hi);
        cb_msg_clean(c->err->msg);
    }
    return good ? v : dflt;
}

static void str(const cJSON *o, const char *k, char *dst, size_t n) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsString(x)) snprintf(dst, n, "%s", x->valuestring);
}

static int key_index(const char *const *keys, int n, const cJSON *x) {
    if (!cJSON_IsString(x)) return -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(x->valuestring, keys[i])) return i;
    return -1;
}

static cb_status bad_entry(cb_error *err, const char *src, const char *what, int i) {
    err->status = CB_STATUS_PARSE;
    snprintf(err->msg, sizeof err->msg, "%s: calibration %s %d: needs a known name, phase and precision", src, what, i);
    return err->status;
}

// "calibration": {"backend", "sms", "launch_s", "host_call_s", "algos": [...], "ops": {"copy": {...}, ...}}
// ("host_call_s" and "host_floor" since 2026-11-27: an entry without them loads with 0, the
// model then prices a call's host time from launch_s, cb_cal_host_call_s; "host_graph_call_s"
// since that evening, 0 without: a graph execution then costs what any call does; "host_engine_call_s"
// since 2026-11-28, 0 without: recorded for reports, not priced)
static cb_status cal_from_json(const cJSON *c, cb_calibration *cal, chk *k, const char *src, cb_error *err) {
    memset(cal, 0, sizeof *cal);
    if (!cJSON_IsObject(c)) return CB_OK;
    k->sect = "calibration.";
    str(c, "backend", cal->backend, sizeof cal->backend);
    cal->sms = (int)num(k, c, "sms", 0, NUM_POSCOUNT);
    cal->launch_s = num(k, c, "launch_s", 0, NUM_NONNEG);
    cal->host_call_s = num(k, c, "host_call_s", 0, NUM_NONNEG);
    cal->host_graph_call_s = num(k, c, "host_graph_call_s", 0, NUM_NONNEG);
    cal->host_engine_call_s = num(k, c, "host_engine_call_s", 0, NUM_NONNEG);
    cal->host_floor = (int)num(k, c, "host_floor", 0, NUM_COUNT);
    if (cal->host_floor >= CB_HOST_FLOOR_COUNT) cal->host_floor = CB_HOST_FLOOR_NONE; // (a later form: the default)
    cal->wave_tile = (int)num(k, c, "wave_tile", 0, NUM_COUNT);
    cal->wave_wgrad = (int)num(k, c, "wave_wgrad", 0, NUM_COUNT);
    cal->wave_both = (int)num(k, c, "wave_both", 0, NUM_COUNT);
    cal->wave_fill = (int)num(k, c, "wave_fill", 0, NUM_COUNT);
    cal->pool_lines = (int)num(k, c, "pool_lines", 0, NUM_COUNT);
    cal->bw_onchip = (int)num(k, c, "bw_onchip", 0, NUM_COUNT);
    cal->l2_bytes = num(k, c, "l2_bytes", 0, NUM_NONNEG);
    cal->spill = (int)num(k, c, "spill", 0, NUM_COUNT);
    cal->local = (int)num(k, c, "local", 0, NUM_COUNT);
    cal->best = (int)num(k, c, "best", 0, NUM_COUNT);
    cal->launch_overlap = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "launch_hidden"));
    const cJSON *timing = cJSON_GetObjectItemCaseSensitive(c, "timing");
    cal->held_timed = cJSON_IsString(timing) && !strcmp(timing->valuestring, "held");
    cal->stream_timed = cal->held_timed || (cJSON_IsString(timing) && !strcmp(timing->valuestring, "stream"));
    const cJSON *cache = cJSON_GetObjectItemCaseSensitive(c, "cache");
    cal->cache_step = cJSON_IsString(cache) && !strcmp(cache->valuestring, "step");
    const cJSON *epi = cJSON_GetObjectItemCaseSensitive(c, "epilogue");
    cal->act_bias_fused = cJSON_IsString(epi) && !strcmp(epi->valuestring, "act_bias");
    cal->concat_relu = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "concat_relu"));
    const cJSON *x;
    int i = 0;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(c, "algos")) {
        if (cal->nalgo == CB_CAL_MAX_ALGOS) {
            err->status = CB_STATUS_PARSE;
            snprintf(err->msg, sizeof err->msg, "%s: more than %d calibrated algorithms", src, CB_CAL_MAX_ALGOS);
            return err->status;
        }
        cb_cal_algo *a = &cal->algo[cal->nalgo];
        str(x, "name", a->name, sizeof a->name);
        int ph = key_index(PHASE_KEYS, CB_PHASE_COUNT, cJSON_GetObjectItemCaseSensitive(x, "phase"));
        int pr = key_index(PREC_KEYS, CB_PREC_COUNT, cJSON_GetObjectItemCaseSensitive(x, "precision"));
        if (!a->name[0] || ph < 0 || pr < 0 || !cb_algo_form_of(a->name, &a->form)) return bad_entry(err, src, "algorithm", i);
        a->phase = (cb_phase)ph;
        a->prec = (cb_precision)pr;
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(x, "kind");
        a->fc = cJSON_IsString(kind) && !strcmp(kind->valuestring, "fc");
        a->grouped = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "grouped"));
        a->unaligned = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "unaligned"));
        k->sect = "calibration.algos[].";
        a->rate = num(k, x, "rate", 0, NUM_NONNEG);
        a->wave_rate = num(k, x, "wave_rate", 0, NUM_NONNEG);
        a->bw = num(k, x, "bw", 0, NUM_NONNEG);
        a->overhead_s = num(k, x, "overhead_s", 0, NUM_NONNEG);
        a->eff = num(k, x, "eff", 0, NUM_NONNEG);
        a->n = (int)num(k, x, "n", 0, NUM_COUNT);
        a->excluded = (int)num(k, x, "excluded", 0, NUM_COUNT);
        a->err_median_pct = num(k, x, "err_median_pct", 0, NUM_NONNEG);
        a->err_p90_pct = num(k, x, "err_p90_pct", 0, NUM_NONNEG);
        cal->nalgo++, i++;
    }
    for (int t = 0; t < 2; t++) { // "ops": fp32 NCHW; "ops_bf16": bf16 NHWC storage (older files: none)
        k->sect = t ? "calibration.ops_bf16." : "calibration.ops.";
        const cJSON *ops = cJSON_GetObjectItemCaseSensitive(c, t ? "ops_bf16" : "ops");
        cb_cal_mop *tab = t ? cal->mop16 : cal->mop;
        for (int m = 0; m < CB_MOP_COUNT; m++) {
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(ops, cb_mop_name((cb_mop)m));
            if (!y) continue;
            tab[m].bw = num(k, y, "bw", 0, NUM_NONNEG);
            tab[m].overhead_s = num(k, y, "overhead_s", 0, NUM_NONNEG);
            tab[m].plane_s = num(k, y, "plane_s", 0, NUM_NONNEG);
            tab[m].win_s = num(k, y, "win_s", 0, NUM_NONNEG);
            tab[m].visit_s = num(k, y, "visit_s", 0, NUM_NONNEG);
            tab[m].tile_s = num(k, y, "tile_s", 0, NUM_NONNEG);
            tab[m].tile_line_s = num(k, y, "tile_line_s", 0, NUM_NONNEG);
            tab[m].spill_s = num(k, y, "spill_s", 0, NUM_NONNEG);
            tab[m].n = (int)num(k, y, "n", 0, NUM_COUNT);
            tab[m].err_median_pct = num(k, y, "err_median_pct", 0, NUM_NONNEG);
        }
    }
    k->sect = NULL;
    return k->ok ? CB_OK : err->status;
}

static cJSON *cal_to_json(const cb_calibration *cal) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "backend", cal->backend);
    cJSON_AddNumberToObject(c, "sms", cal->sms);
    cJSON_AddNumberToObject(c, "launch_s", cal->launch_s);
    if (cal->host_call_s > 0) cJSON_AddNumberToObject(c, "host_call_s", cal->host_call_s);
    if (cal->host_graph_call_s > 0) cJSON_AddNumberToObject(c, "host_graph_call_s", cal->host_graph_call_s);
    if (cal->host_engine_call_s > 0) cJSON_AddNumberToObject(c, "host_engine_call_s", cal->host_engine_call_s);
    if (cal->host_floor) cJSON_AddNumberToObject(c, "host_floor", cal->host_floor);
    if (cal->wave_tile) cJSON_AddNumberToObject(c, "wave_tile", cal->wave_tile);
    if (cal->wave_wgrad) cJSON_AddNumberToObject(c, "wave_wgrad", cal->wave_wgrad);
    if (cal->wave_both) cJSON_AddNumberToObject(c, "wave_both", cal->wave_both);
    if (cal->wave_fill) cJSON_AddNumberToObject(c, "wave_fill", cal->wave_fill);
    if (cal->pool_lines) cJSON_AddNumberToObject(c, "pool_lines", cal->pool_lines);
    if (cal->bw_onchip) cJSON_AddNumberToObject(c, "bw_onchip", cal->bw_onchip);
    if (cal->l2_bytes > 0) cJSON_AddNumberToObject(c, "l2_bytes", cal->l2_bytes);
    if (cal->spill) cJSON_AddNumberToObject(c, "spill", cal->spill);
    if (cal->local) cJSON_AddNumberToObject(c, "local", cal->local);
    if (cal->best) cJSON_AddNumberToObject(c, "best", cal->best);
    if (cal->launch_overlap) cJSON_AddBoolToObject(c, "launch_hidden", true);
    cJSON_AddStringToObject(c, "timing", cal->held_timed ? "held" : cal->stream_timed ? "stream" : "idle");
    cJSON_AddStringToObject(c, "cache", cal->cache_step ? "step" : "hot"); // (a passes-only part too: a refit ANDs them)
    if (cal->act_bias_fused) cJSON_AddStringToObject(c, "epilogue", "act_bias");
    if (cal->concat_relu) cJSON_AddBoolToObject(c, "concat_relu", true);
    cJSON *arr = cJSON_AddArrayToObject(c, "algos");
    for (int i = 0; i < cal->nalgo; i++) {
        const cb_cal_algo *a = &cal->algo[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", a->name);
        cJSON_AddStringToObject(x, "kind", a->fc ? "fc" : "conv");
        if (a->grouped) cJSON_AddBoolToObject(x, "grouped", true);
        if (a->unaligned) cJSON_AddBoolToObject(x, "unaligned", true);
        cJSON_AddStringToObject(x, "family", cb_algo_name(a->form.family));
        cJSON_AddStringToObject(x, "phase", PHASE_KEYS[a->phase]);
        cJSON_AddStringToObject(x, "precision", PREC_KEYS[a->prec]);
        cJSON_AddNumberToObject(x, "rate", a->rate);
        if (a->wave_rate > 0) cJSON_AddNumberToObject(x, "wave_rate", a->wave_rate);
        cJSON_AddNumberToObject(x, "bw", a->bw);
        cJSON_AddNumberToObject(x, "overhead_s", a->overhead_s);
        cJSON_AddNumberToObject(x, "eff", a->eff);
        cJSON_AddNumberToObject(x, "n", a->n);
        cJSON_AddNumberToObject(x, "excluded", a->excluded);
        cJSON_AddNumberToObject(x, "err_median_pct", a->err_median_pct);
        cJSON_AddNumberToObject(x, "err_p90_pct", a->err_p90_pct);
        cJSON_AddItemToArray(arr, x);
    }
    for (int t = 0; t < 2; t++) {
        const cb_cal_mop *tab = t ? cal->mop16 : cal->mop;
        bool any = false;
        for (int m = 0; m < CB_MOP_COUNT; m++) any |= tab[m].n > 0;
        if (t && !any) break; // (no bf16 passes measured: no "ops_bf16")
        cJSON *ops = cJSON_AddObjectToObject(c, t ? "ops_bf16" : "ops");
        for (int m = 0; m < CB_MOP_COUNT; m++) {
        const cb_cal_mop *o = &tab[m];
        if (o->n <= 0) continue;
        cJSON *y = cJSON_AddObjectToObject(ops, cb_mop_name((cb_mop)m));
        cJSON_AddNumberToObject(y, "bw", o->bw);
        cJSON_AddNumberToObject(y, "overhead_s", o->overhead_s);
        cJSON_AddNumberToObject(y, "plane_s", o->plane_s);
        if (o->win_s > 0) cJSON_AddNumberToObject(y, "win_s", o->win_s);
        if (o->visit_s > 0) cJSON_AddNumberToObject(y, "visit_s", o->visit_s);
        if (o->tile_s > 0) cJSON_AddNumberToObject(y, "tile_s", o->tile_s);
        if (o->tile_line_s > 0) cJSON_AddNumberToObject(y, "tile_line_s", o->tile_line_s);
        if (o->spill_s > 0) cJSON_AddNumberToObject(y, "spill_s", o->spill_s);
        cJSON_AddNumberToObject(y, "n", o->n);
        cJSON_AddNumberToObject(y, "err_median_pct", o->err_median_pct);
        }
    }
    return c;
}

static const char *const SAMPLE_KINDS[] = {"conv", "fc", "op"};
_Static_assert(sizeof SAMPLE_KINDS / sizeof SAMPLE_KINDS[0] == CB_SAMPLE_KIND_COUNT, "sample kinds");

// one sample: {"kind", "name", "phase", "precision", "shape": [n,c,h,w,k,r,s,p,q,sh,sw,pt,pl,g], "ms", "ws"}
cb_status cb_cal_samples_from_json(const cJSON *arr, cb_cal_sample **out, int *nout, const char *src, cb_error *err) {
    *out = NULL, *nout = 0;
    if (!cJSON_IsArray(arr)) return CB_OK;
    int n = cJSON_GetArraySize(arr), i = 0;
    cb_cal_sample *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    if (!s) abort();
    const cJSON *x;
    cJSON_ArrayForEach(x, arr) {
        cb_cal_sample *q = &s[i];
        int k = key_index(SAMPLE_KINDS, CB_SAMPLE_KIND_COUNT, cJSON_GetObjectItemCaseSensitive(x, "kind"));
        int ph = key_index(PHASE_KEYS, CB_PHASE_COUNT, cJSON_GetObjectItemCaseSensitive(x, "phase"));
        int pr = key_index(PREC_KEYS, CB_PREC_COUNT, cJSON_GetObjectItemCaseSensitive(x, "precision"));
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(x, "shape");
        str(x, "name", q->name, sizeof q->name);
        if (k < 0 || ph < 0 || pr < 0 || !q->name[0] || !cJSON_IsArray(sh) || cJSON_GetArraySize(sh) != 14) {
            free(s);
            err->status = CB_STATUS_PARSE;
            snprintf(err->msg, sizeof err->msg, "%s: calibration sample %d: needs kind, name, phase, precision, 14 shape numbers", src, i);
            return err->status;
        }
        q->kind = (cb_sample_kind)k;
        q->phase = (cb_phase)ph;
        q->prec = (cb_precision)pr;
        // entries that must be >= 1: conv n c h w k r s p q sh sw g; fc n c k; op n c h w
        static const unsigned POSITIVE[CB_SAMPLE_KIND_COUNT] = {0x27ff, 0x13, 0xf};
        int v[14], j = 0;
        const cJSON *y;
        cJSON_ArrayForEach(y, sh) {
            double d = cJSON_IsNumber(y) ? y->valuedouble : -1;
            if (!(d >= ((POSITIVE[k] >> j) & 1) && d <= CB_MAX_DIM && d == floor(d))) {
                free(s);
                return cb_fail(err, CB_STATUS_PARSE, src, NULL, "calibration sample %d: shape entry %d must be an integer in [%u, %d]",
                               i, j, (POSITIVE[k] >> j) & 1, CB_MAX_DIM);
            }
            v[j++] = (int)d;
        }
        q->p = (cb_conv_params){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], 1, 1};
        const cJSON *ms = cJSON_GetObjectItemCaseSensitive(x, "ms"), *ws = cJSON_GetObjectItemCaseSensitive(x, "ws");
        q->ms = cJSON_IsNumber(ms) ? ms->valuedouble : -1;
        q->workspace = cJSON_IsNumber(ws) ? ws->valuedouble : 0;
        if (!(q->ms >= -2 && q->ms <= 1e9 && q->workspace >= 0 && q->workspace <= CB_DEV_MAX_RATE)) {
            free(s);
            return cb_fail(err, CB_STATUS_PARSE, src, NULL, "calibration sample %d: ms must be in [-2, 1e9] and ws in [0, %g]", i,
                           CB_DEV_MAX_RATE);
        }
        i++;
    }
    *out = s, *nout = i;
    return CB_OK;
}

cJSON *cb_cal_samples_to_json(const cb_cal_sample *s, int n) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        const cb_cal_sample *q = &s[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "kind", SAMPLE_KINDS[q->kind]);
        cJSON_AddStringToObject(x, "name", q->name);
        cJSON_AddStringToObject(x, "phase", PHASE_KEYS[q->phase]);
        cJSON_AddStringToObject(x, "precision", PREC_KEYS[q->prec]);
        const cb_conv_params *p = &q->p;
        int v[14] = {p->n, p->c, p->h, p->w, p->k, p->r, p->s, p->p, p->q, p->stride_h, p->stride_w, p->pad_top, p->pad_left, p->groups};
        cJSON_AddItemToObject(x, "shape", cJSON_CreateIntArray(v, 14));
        cJSON_AddNumberToObject(x, "ms", q->ms);
        cJSON_AddNumberToObject(x, "ws", q->workspace);
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

// "interconnect": {"name", "bw", "latency_s", "source"}, the measured link calibrate stores
static cb_status link_from_json(const cJSON *x, cb_link *l, chk *k, const char *src, cb_error *err) {
    memset(l, 0, sizeof *l);
    if (!x) return CB_OK;
    if (!cJSON_IsObject(x) || !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(x, "bw")))
        return cb_fail(err, CB_STATUS_PARSE, src, NULL, "device '%s': 'interconnect' must be an object with bw (bytes/s) and latency_s", k->dev);
    k->sect = "interconnect.";
    l->bw = num(k, x, "bw", 0, NUM_POS);
    l->latency_s = num(k, x, "latency_s", 0, NUM_NONNEG);
    k->sect = NULL;
    if (!k->ok) return err->status;
    snprintf(l->name, sizeof l->name, "measured");
    str(x, "name", l->name, sizeof l->name);
    str(x, "source", l->source, sizeof l->source);
    return CB_OK;
}

cb_status cb_device_from_json(const cJSON *o, cb_device *d, const char *src, cb_error *err) {
    memset(d, 0, sizeof *d);
    str(o, "name", d->name, sizeof d->name);
    if (!cJSON_IsObject(o) || !d->name[0]) {
        err->status = CB_STATUS_PARSE;
        snprintf(err->msg, sizeof err->msg, "%s: a device entry without a \"name\"", src);
        return err->status;
    }
    snprintf(d->kind, sizeof d->kind, "gpu");
    str(o, "kind", d->kind, sizeof d->kind);
    str(o, "model", d->model, sizeof d->model);
    str(o, "link", d->link, sizeof d->link);
    str(o, "source", d->source, sizeof d->source);
    chk k = {src, d->name, NULL, err, true};
    d->clock_mhz = num(&k, o, "clock_mhz", 1000, NUM_POS);
    d->mem_bytes = num(&k, o, "mem_bytes", 0, NUM_NONNEG);
    d->mem_bw = num(&k, o, "mem_bw", 0, NUM_POS);
    d->launch_s = num(&k, o, "launch_s", 0, NUM_NONNEG);
    d->l2_bytes = num(&k, o, "l2_bytes", 0, NUM_NONNEG);
    d->cores = (int)num(&k, o, "cores", 0, NUM_POSCOUNT);
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(o, "peak");
    k.sect = "peak.";
    for (int p = 0; p <= CB_PREC_COUNT; p++) d->peak[p] = num(&k, pk, PREC_KEYS[p], 0, p == CB_PREC_FP32 ? NUM_POS : NUM_NONNEG);
    if (!k.ok) return err->status;
    if (d->peak[CB_PREC_FP32] <= 0 || d->mem_bw <= 0) {
        err->status = CB_STATUS_PARSE;
        snprintf(err->msg, sizeof err->msg, "%s: device '%s': needs peak.fp32 and mem_bw > 0", src, d->name);
        cb_msg_clean(err->msg);
        return err->status;
    }
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "measured");
    k.sect = "measured.";
    for (int p = 0; p <= CB_PREC_COUNT; p++) d->meas_gemm[p] = num(&k, m, PREC_KEYS[p], 0, NUM_POS);
    d->meas_copy_bw = num(&k, m, "copy_bw", 0, NUM_POS);
    str(m, "source", d->meas_source, sizeof d->meas_source);
    const cJSON *ae = cJSON_GetObjectItemCaseSensitive(o, "algo_eff");
    for (int a = 0; a < CB_ALGO_COUNT; a++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(ae, ALGO_NAMES[a]);
        k.sect = "algo_eff.*.";
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
            d->algo_eff[a][ph] = num(&k, x, PHASE_KEYS[ph], 0, NUM_NONNEG);
            if (d->algo_eff[a][ph] > 0) d->calibrated = true;
        }
    }
    if (!k.ok) return err->status;
    if (link_from_json(cJSON_GetObjectItemCaseSensitive(o, "interconnect"), &d->interconnect, &k, src, err) != CB_OK) return err->status;
    if (cal_from_json(cJSON_GetObjectItemCaseSensitive(o, "calibration"), &d->cal, &k, src, err) != CB_OK) return err->status;
    // the local form's residuals: from the entry's samples, against the fit the file holds
    d->cal.nres = 0;
    if (d->cal.local) {
        cb_cal_sample *smp = NULL;
        int nsmp = 0;
        if (cb_cal_samples_from_json(cJSON_GetObjectItemCaseSensitive(o, "samples"), &smp, &nsmp, src, err) != CB_OK) return err->status;
        cb_cal_residuals(&d->cal, smp, nsmp);
        free(smp);
    }
    return CB_OK;
}

char *cb_device_entry_text(const cb_device *d, const cb_cal_sample *s, int n) {
    cJSON *j = cb_device_to_json(d);
    if (s && n) cJSON_AddItemToObject(j, "samples", cb_cal_samples_to_json(s, n));
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    if (!text) abort();
    size_t len = strlen(text);
    char *line = realloc(text, len + 2);
    if (!line) abort();
    line[len] = '\n', line[len + 1] = 0;
    return line;
}

cJSON *cb_device_to_json(const cb_device *d) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON_AddStringToObject(o, "kind", d->kind);
    cJSON_AddStringToObject(o, "model", d->model);
    if (d->link[0]) cJSON_AddStringToObject(o, "link", d->link);
    cJSON_AddNumberToObject(o, "clock_mhz", d->clock_mhz);
    cJSON_AddNumberToObject(o, "mem_bytes", d->mem_bytes);
    cJSON_AddNumberToObject(o, "mem_bw", d->mem_bw);
    if (d->l2_bytes > 0) cJSON_AddNumberToObject(o, "l2_bytes", d->l2_bytes);
    if (d->cores) cJSON_AddNumberToObject(o, "cores", d->cores);
    cJSON *pk = cJSON_AddObjectToObject(o, "peak");
    for (int p = 0; p <= CB_PREC_COUNT; p++) cJSON_AddNumberToObject(pk, PREC_KEYS[p], d->peak[p]);
    cJSON_AddNumberToObject(o, "launch_s", d->launch_s);
    cJSON_AddStringToObject(o, "source", d->source);
    cJSON *m = cJSON_AddObjectToObject(o, "measured");
    for (int p = 0; p <= CB_PREC_COUNT; p++)
        if (d->meas_gemm[p] > 0) cJSON_AddNumberToObject(m, PREC_KEYS[p], d->meas_gemm[p]);
    if (d->meas_copy_bw > 0) cJSON_AddNumberToObject(m, "copy_bw", d->meas_copy_bw);
    cJSON_AddStringToObject(m, "source", d->meas_source);
    cJSON *ae = cJSON_AddObjectToObject(o, "algo_eff");
    for (int a = 0; a < CB_ALGO_COUNT; a++) {
        bool any = false;
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) any |= d->algo_eff[a][ph] > 0;
        if (!any) continue;
        cJSON *x = cJSON_AddObjectToObject(ae, ALGO_NAMES[a]);
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) cJSON_AddNumberToObject(x, PHASE_KEYS[ph], d->algo_eff[a][ph]);
    }
    if (d->interconnect.bw > 0) {
        cJSON *l = cJSON_AddObjectToObject(o, "interconnect");
        cJSON_AddStringToObject(l, "name", d->interconnect.name);
        cJSON_AddNumberToObject(l, "bw", d->interconnect.bw);
        cJSON_AddNumberToObject(l, "latency_s", d->interconnect.latency_s);
        cJSON_AddStringToObject(l, "source", d->interconnect.source);
    }
    if (d->cal.backend[0]) cJSON_AddItemToObject(o, "calibration", cal_to_json(&d->cal));
    return o;
}

cb_status cb_device_load_file(const char *path, cb_device *d, cb_error *err) {
    cJSON *root = cb_json_read(path, err);
    if (!root) return err->status;
    cb_status st = cb_device_from_json(root, d, path, err);
    cJSON_Delete(root);
    return st;
}

void cb_device_transfer_calibration(cb_device *d, const cb_device *c, const char *source) {
    double bw = c->mem_bw > 0 ? d->mem_bw / c->mem_bw : 1, pk[CB_PREC_COUNT + 1];
    for (int p = 0; p <= CB_PREC_COUNT; p++) pk[p] = c->peak[p] > 0 && d->peak[p] > 0 ? d->peak[p] / c->peak[p] : 1;
    for (int p = 0; p <= CB_PREC_COUNT; p++) d->meas_gemm[p] = c->meas_gemm[p] * pk[p];
    if (c->meas_copy_bw > 0) d->meas_copy_bw = c->meas_copy_bw * bw;
    memcpy(d->algo_eff, c->algo_eff, sizeof c->algo_eff);
    d->calibrated = c->calibrated;
    d->cal = c->cal;
    bool chip = c->cores > 0 && c->clock_mhz > 0 && d->cores > 0 && d->clock_mhz > 0;
    double sm_clock = chip ? d->cores * d->clock_mhz / (c->cores * c->clock_mhz) : 1; // the on-chip bandwidths' ratio
    for (int i = 0; i < d->cal.nalgo; i++) {
        cb_cal_algo *a = &d->cal.algo[i];
        a->rate *= pk[a->prec];
        a->wave_rate *= pk[a->prec];
        a->bw *= d->cal.bw_onchip ? sm_clock : bw;
    }
    for (int m = 0; m < 2 * CB_MOP_COUNT; m++) { // (fp32's passes, then bf16's)
        cb_cal_mop *o = m < CB_MOP_COUNT ? &d->cal.mop[m] : &d->cal.mop16[m - CB_MOP_COUNT];
        o->bw *= bw, o->plane_s /= bw;
        o->win_s /= sm_clock, o->visit_s /= sm_clock, o->tile_s /= sm_clock, o->tile_line_s /= sm_clock; // pooling's window terms are the SMs' work (reads of a window, compares)
        o->spill_s /= bw; // (the bytes past the L2 go to the memory)
    }
    if (d->cores > 0 && d->cal.sms > 0) d->cal.sms = d->cores;
    d->cal.l2_bytes = d->l2_bytes > 0 ? d->l2_bytes : c->cal.l2_bytes; // (the spill starts at the target's L2)
    if (c->launch_s > 0) d->launch_s = c->launch_s;
    if (c->interconnect.bw > 0) d->interconnect = c->interconnect; // the machine's link, whatever its GPU
    snprintf(d->meas_source, sizeof d->meas_source, "%s", source);
}

cb_status cb_cal_samples_load_file(const char *path, cb_cal_sample **s, int *n, cb_error *err) {
    *s = NULL, *n = 0;
    cJSON *root = cb_json_read(path, err);
    if (!root) return err->status;
    cb_status st = cb_cal_samples_from_json(cJSON_GetObjectItemCaseSensitive(root, "samples"), s, n, path, err);
    cJSON_Delete(root);
    return st;
}

void cb_devdb_free(cb_devdb *db) {
    free(db->dev);
    free(db->link);
    memset(db, 0, sizeof *db);
}

cb_status cb_devdb_load(const char *path, cb_devdb *db, cb_error *err) {
    memset(db, 0, sizeof *db);
    if (!path) path = cb_devdb_path();
    cJSON *root = cb_json_read(path, err);
    if (!root) {
        if (err->status == CB_STATUS_IO) { // say which file this is and how to name another
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof err->msg - n, " (the device database; --devices FILE or CONVBENCH_DEVICES names another)");
        }
        return err->status;
    }
    cb_status st = CB_OK;
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(root, "devices");
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "interconnects");
    if (!root || !cJSON_IsArray(devs) || !cJSON_IsArray(links)) {
        err->status = st = CB_STATUS_PARSE;
        snprintf(err->msg, sizeof err->msg, "%s: expected {\"devices\": [...], \"interconnects\": [...]}", path);
        goto done;
    }
    db->dev = calloc((size_t)cJSON_GetArraySize(devs) + 1, sizeof *db->dev);
    db->link = calloc((size_t)cJSON_GetArraySize(links) + 1, sizeof *db->link);
    if (!db->dev || !db->link) {
        err->status = st = CB_STATUS_NOMEM;
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", path);
        goto done;
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, devs) {
        if ((st = cb_device_from_json(x, &db->dev[db->ndev], path, err)) != CB_OK) goto done;
        db->ndev++;
    }
    cJSON_ArrayForEach(x, links) {
        cb_link *l = &db->link[db->nlink];
        str(x, "name", l->name, sizeof l->name);
        str(x, "source", l->source, sizeof l->source);
        chk k = {path, l->name, NULL, err, true};
        l->bw = num(&k, x, "bw", 0, NUM_POS);
        l->latency_s = num(&k, x, "latency_s", 0, NUM_NONNEG);
        if (!k.ok) {
            st = err->status;
            snprintf(err->msg, sizeof err->msg, "%s: interconnect %d needs a name, bw in (0, %g] and latency_s in [0, %g]", path,
                     db->nlink, CB_DEV_MAX_RATE, CB_DEV_MAX_RATE);
            goto done;
        }
        if (!l->name[0] || l->bw <= 0) {
            err->status = st = CB_STATUS_PARSE;
            snprintf(err->msg, sizeof err->msg, "%s: interconnect %d needs a name and bw > 0", path, db->nlink);
            goto done;
        }
        db->nlink++;
    }
done:
    cJSON_Delete(root);
    if (st != CB_OK) cb_devdb_free(db);
    return st;
}

const cb_device *cb_devdb_device(const cb_devdb *db, const char *name) {
    for (int i = 0; i < db->ndev; i++)
        if (strcasecmp(db->dev[i].name, name) == 0) return &db->dev[i];
    return NULL;
}

const cb_link *cb_devdb_link(const cb_devdb *db, const char *name) {
    for (int i = 0; i < db->nlink; i++)
        if (strcasecmp(db->link[i].name, name) == 0) return &db->link[i];
    return NULL;
}
