// What `simulate` takes from measurements (issue 15): an interconnect fitted to `convbench
// allreduce`'s results, and the measured steps of `fullpass --gpus` to print beside its own.
#include "model/model.h"
#include "core/json.h"
#include "core/net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *rows_of(const cJSON *root, const char *table) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "tables"), table);
    return cJSON_IsArray(t) ? t : NULL;
}
static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static const char *str(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

// The ring all-reduce model of simulate (time = 2(n-1)/n m/B + 2(n-1) a) fitted to the measured
// times by least squares on relative error: time = c0 + c1 m, B = 2(n-1) / (n c1), a = c0 / 2(n-1).
cb_status cb_link_fit(const double *bytes, const double *sec, int k, int n, const char *src, const char *source, cb_link *out,
                      cb_error *err) {
    if (n < 2) return cb_fail(err, CB_STATUS_PARSE, src, NULL, "measured on %d GPU(s): an interconnect needs at least 2", n);
    // weighted least squares, weight 1/t^2 (each size counts by its relative error)
    double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int j = 0; j < k; j++) {
        double m = bytes[j], t = sec[j];
        if (!(m > 0 && t > 0 && isfinite(m) && isfinite(t)))
            return cb_fail(err, CB_STATUS_PARSE, src, NULL, "size %d: bytes and time must be positive numbers", j + 1);
        double w = 1 / (t * t);
        s += w, sx += w * m, sy += w * t, sxx += w * m * m, sxy += w * m * t;
    }
    double det = s * sxx - sx * sx;
    if (k < 2 || !(det > 0)) return cb_fail(err, CB_STATUS_PARSE, src, NULL, "needs at least two message sizes to fit bandwidth and latency");
    double c1 = (s * sxy - sx * sy) / det, c0 = (sy - c1 * sx) / s;
    if (!(c1 > 0)) return cb_fail(err, CB_STATUS_PARSE, src, NULL, "the times do not grow with the message size: no bandwidth to fit");
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "measured");
    out->bw = 2.0 * (n - 1) / (n * c1);
    out->latency_s = c0 > 0 ? c0 / (2.0 * (n - 1)) : 0;
    snprintf(out->source, sizeof out->source, "%s", source);
    return CB_OK;
}

cb_status cb_link_from_allreduce(const char *path, cb_link *out, cb_error *err) {
    cJSON *root = cb_json_read(path, err);
    if (!root) return err->status;
    cb_status st = CB_OK;
    const char *verb = str(root, "verb");
    const cJSON *rows = rows_of(root, "allreduce");
    double n = num(root, "gpus");
    int k = 0, cap = rows ? cJSON_GetArraySize(rows) : 0;
    double *m = malloc(sizeof(double) * (size_t)(cap + 1)), *t = malloc(sizeof(double) * (size_t)(cap + 1));
    if (!m || !t) abort();
    if (!verb || strcmp(verb, "allreduce") || !rows) {
        st = cb_fail(err, CB_STATUS_PARSE, path, NULL, "not a result of convbench allreduce --format json");
    } else if (!(n >= 2 && n <= 1 << 20 && n == floor(n))) {
        st = cb_fail(err, CB_STATUS_PARSE, path, NULL, "measured on %g GPU(s): an interconnect needs at least 2", n);
    } else {
        const cJSON *r;
        cJSON_ArrayForEach(r, rows) {
            m[k] = num(r, "bytes"), t[k] = num(r, "time_us") * 1e-6;
            if (!(m[k] > 0 && t[k] > 0 && isfinite(m[k]) && isfinite(t[k]))) {
                st = cb_fail(err, CB_STATUS_PARSE, path, NULL, "row %d: 'bytes' and 'time_us' must be positive numbers", k + 1);
                break;
            }
            k++;
        }
        char source[256];
        snprintf(source, sizeof source, "fitted to %d all-reduce sizes on %g GPUs in %.150s", k, n, path);
        if (st == CB_OK) st = cb_link_fit(m, t, k, (int)n, path, source, out, err);
    }
    free(m);
    free(t);
    cJSON_Delete(root);
    return st;
}

cb_status cb_measured_steps(const char *path, const char *network, int64_t batch, bool strong, cb_precision grad, cb_measured_step *out,
                            int max, int *n, cb_error *err) {
    cJSON *root = cb_json_read(path, err);
    if (!root) return err->status;
    cb_status st = CB_OK;
    const char *verb = str(root, "verb"), *net = str(root, "network"), *sc = str(root, "scaling"), *gp = str(root, "grad_precision");
    cb_precision mg = CB_PREC_FP32; // before --grad-precision, fullpass all-reduced fp32
    const cJSON *rows = rows_of(root, "scaling");
    double per = num(root, "batch_per_gpu"), global = num(root, "global_batch");
    *n = 0;
    if (!verb || strcmp(verb, "fullpass") || !rows || !sc)
        st = cb_fail(err, CB_STATUS_PARSE, path, NULL, "not a result of convbench fullpass --gpus --format json");
    else if (!net || strcmp(net, network))
        st = cb_fail(err, CB_STATUS_ARG, path, NULL, "measured network '%s' is not the simulated '%s'", net ? net : "?", network);
    else if (strcmp(sc, strong ? "strong" : "weak"))
        st = cb_fail(err, CB_STATUS_ARG, path, NULL, "measured with --scaling %s, simulated with %s", sc, strong ? "strong" : "weak");
    else if (gp && (!cb_precision_parse(gp, &mg) || (mg != CB_PREC_FP32 && mg != CB_PREC_BF16)))
        st = cb_fail(err, CB_STATUS_PARSE, path, NULL, "'grad_precision' is '%.20s', not fp32 or bf16", gp);
    else if (mg != grad)
        st = cb_fail(err, CB_STATUS_ARG, path, NULL, "measured with --grad-precision %s, simulated with %s", cb_precision_name(mg),
                     cb_precision_name(grad));
    else if ((strong ? global : per) != (double)batch)
        st = cb_fail(err, CB_STATUS_ARG, path, NULL, "measured batch %g %s, simulated %lld", strong ? global : per, strong ? "in all" : "per GPU",
                     (long long)batch);
    const cJSON *r;
    if (st == CB_OK) cJSON_ArrayForEach(r, rows) {
            double g = num(r, "gpus"), ms = num(r, "step_ms");
            if (!(g >= 1 && g <= 1 << 20 && ms > 0 && isfinite(ms))) {
                st = cb_fail(err, CB_STATUS_PARSE, path, NULL, "a row without positive 'gpus' and 'step_ms'");
                break;
            }
            if (*n < max) out[(*n)++] = (cb_measured_step){(int)g, ms};
        }
    cJSON_Delete(root);
    return st;
}
