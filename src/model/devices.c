// The device database: data/devices.json read with cJSON, and the device objects that
// calibrate writes. Figures are kept in SI units (FLOP/s, bytes/s, seconds).
#include "model/model.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifndef CB_DATA_DIR
#define CB_DATA_DIR "data"
#endif

static const char *const ALGO_NAMES[] = {"gemm", "implicit_gemm", "winograd", "fft", "direct"};
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
    FILE *f = fopen("data/devices.json", "r");
    if (f) {
        fclose(f);
        return "data/devices.json";
    }
    return CB_DATA_DIR "/devices.json";
}

static char *slurp(const char *path, cb_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        err->status = CB_STATUS_IO;
        snprintf(err->msg, sizeof err->msg, "%s: cannot open", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        err->status = CB_STATUS_IO;
        snprintf(err->msg, sizeof err->msg, "%s: cannot read", path);
        return NULL;
    }
    buf[n] = 0;
    fclose(f);
    return buf;
}

static double num(const cJSON *o, const char *k, double dflt) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(x) ? x->valuedouble : dflt;
}

static void str(const cJSON *o, const char *k, char *dst, size_t n) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsString(x)) snprintf(dst, n, "%s", x->valuestring);
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
    str(o, "source", d->source, sizeof d->source);
    d->clock_mhz = num(o, "clock_mhz", 1000);
    d->mem_bytes = num(o, "mem_bytes", 0);
    d->mem_bw = num(o, "mem_bw", 0);
    d->launch_s = num(o, "launch_s", 0);
    d->cores = (int)num(o, "cores", 0);
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(o, "peak");
    for (int p = 0; p <= CB_PREC_COUNT; p++) d->peak[p] = num(pk, PREC_KEYS[p], 0);
    if (d->peak[CB_PREC_FP32] <= 0 || d->mem_bw <= 0) {
        err->status = CB_STATUS_PARSE;
        snprintf(err->msg, sizeof err->msg, "%s: device '%s': needs peak.fp32 and mem_bw > 0", src, d->name);
        return err->status;
    }
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "measured");
    for (int p = 0; p <= CB_PREC_COUNT; p++) d->meas_gemm[p] = num(m, PREC_KEYS[p], 0);
    d->meas_copy_bw = num(m, "copy_bw", 0);
    str(m, "source", d->meas_source, sizeof d->meas_source);
    const cJSON *ae = cJSON_GetObjectItemCaseSensitive(o, "algo_eff");
    for (int a = 0; a < CB_ALGO_COUNT; a++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(ae, ALGO_NAMES[a]);
        for (int ph = 0; ph < CB_PHASE_COUNT; ph++) {
            d->algo_eff[a][ph] = num(x, PHASE_KEYS[ph], 0);
            if (d->algo_eff[a][ph] > 0) d->calibrated = true;
        }
    }
    return CB_OK;
}

cJSON *cb_device_to_json(const cb_device *d) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON_AddStringToObject(o, "kind", d->kind);
    cJSON_AddStringToObject(o, "model", d->model);
    cJSON_AddNumberToObject(o, "clock_mhz", d->clock_mhz);
    cJSON_AddNumberToObject(o, "mem_bytes", d->mem_bytes);
    cJSON_AddNumberToObject(o, "mem_bw", d->mem_bw);
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
    return o;
}

cb_status cb_device_load_file(const char *path, cb_device *d, cb_error *err) {
    char *text = slurp(path, err);
    if (!text) return err->status;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root) {
        err->status = CB_STATUS_PARSE;
        snprintf(err->msg, sizeof err->msg, "%s: not valid JSON", path);
        return err->status;
    }
    cb_status st = cb_device_from_json(root, d, path, err);
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
    char *text = slurp(path, err);
    if (!text) return err->status;
    cJSON *root = cJSON_Parse(text);
    free(text);
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
        l->bw = num(x, "bw", 0);
        l->latency_s = num(x, "latency_s", 0);
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
