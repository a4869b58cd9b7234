#include "model_cli.h"
#ifdef CB_HAVE_CUDA
#include "gpu/gpu.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int resolve(const cli_cmd *cmd, const char *name, const char *calibration, cb_devdb *db, cb_device *dev) {
    cb_error err = {0};
    if (!name && !calibration) return cli_usage_error(cmd, "--device NAME (or --calibration FILE) is required");
    if (name) {
        const cb_device *d = cb_devdb_device(db, name);
        if (!d) {
            char list[1024] = "";
            for (int i = 0; i < db->ndev; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", db->dev[i].name);
            return cli_usage_error(cmd, "--device: unknown device '%s' (known: %s)", name, list);
        }
        *dev = *d;
    }
    if (calibration) {
        cb_device c;
        if (cb_device_load_file(calibration, &c, &err) != CB_OK) return cli_fail(cmd, &err);
        if (!name) *dev = c;
        else { // the calibration's measurements on the named device's datasheet figures
            memcpy(dev->meas_gemm, c.meas_gemm, sizeof c.meas_gemm);
            if (c.meas_copy_bw > 0) dev->meas_copy_bw = c.meas_copy_bw;
            memcpy(dev->algo_eff, c.algo_eff, sizeof c.algo_eff);
            dev->calibrated = c.calibrated;
            dev->cal = c.cal;
            if (c.launch_s > 0) dev->launch_s = c.launch_s;
            snprintf(dev->meas_source, sizeof dev->meas_source, "%s", calibration);
        }
    }
    return -1;
}

int model_cli_device(const cli_cmd *cmd, const char *db_path, const char *name, const char *calibration, cb_devdb *db,
                     cb_device *dev) {
    cb_error err = {0};
    if (name && !calibration && (strchr(name, '/') || strstr(name, ".json"))) // --device FILE: a saved entry
        calibration = name, name = NULL;
    if (cb_devdb_load(db_path, db, &err) != CB_OK) return cli_fail(cmd, &err);
    int rc = resolve(cmd, name, calibration, db, dev);
    if (rc >= 0) cb_devdb_free(db);
    return rc;
}

static bool contains_nocase(const char *hay, const char *needle) {
    for (size_t n = strlen(needle); *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return true;
    return false;
}

const cb_device *model_cli_gpu_entry(const cb_devdb *db, const char *gpu) {
    for (int i = 0; gpu && *gpu && i < db->ndev; i++)
        if (!strcmp(db->dev[i].kind, "gpu") && contains_nocase(gpu, db->dev[i].name)) return &db->dev[i];
    return NULL;
}

const char *model_cli_default_device(const cb_devdb *db, char *why, size_t n) {
    char gpu[256] = "";
#ifdef CB_HAVE_CUDA
    const cb_device *d = cb_gpu_name(gpu, sizeof gpu) ? model_cli_gpu_entry(db, gpu) : NULL;
    if (d) {
        snprintf(why, n, "--device %s: this machine's GPU (%s)", d->name, gpu);
        return d->name;
    }
#endif
    for (int i = 0; i < db->ndev; i++)
        if (!strcmp(db->dev[i].kind, "gpu")) {
            snprintf(why, n, "--device %s: the database's first GPU (%s%s%s)", db->dev[i].name,
                     gpu[0] ? "this machine's " : "no GPU here", gpu, gpu[0] ? " is not in it" : "");
            return db->dev[i].name;
        }
    snprintf(why, n, "no GPU in the device database");
    return NULL;
}

const char *model_cli_default_link(const cb_devdb *db, const char *device) {
    const char *want = "pcie3";
    if (device && (!strcasecmp(device, "h100") || !strcasecmp(device, "h200"))) want = "nvlink4";
    else if (device && !strcasecmp(device, "a100")) want = "nvlink3";
    if (cb_devdb_link(db, want)) return want;
    return db->nlink ? db->link[0].name : NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *v, int n, double q) {
    if (n == 0) return 0;
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i + 1 >= n) return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

void model_cli_percentiles(double *v, int n, double *median, double *p90) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *median = pct(v, n, 0.5);
    *p90 = pct(v, n, 0.9);
}
