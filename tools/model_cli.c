#include "model_cli.h"
#include "core/json.h"
#include "runs_common.h"
#ifdef CB_HAVE_CUDA
#include "gpu/gpu.h"
#endif

#include "core/net.h"

#include <cjson/cJSON.h>
#include <math.h>
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
        else cb_device_transfer_calibration(dev, &c, calibration); // on the named device's datasheet figures
    }
    return -1;
}

int model_cli_device(const cli_cmd *cmd, const char *db_path, const char *name, const char *calibration, bool links,
                     cb_devdb *db, cb_device *dev) {
    cb_error err = {0};
    if (name && !calibration && (strchr(name, '/') || strstr(name, ".json"))) // --device FILE: a saved entry
        calibration = name, name = NULL;
    memset(db, 0, sizeof *db);
    if ((name || links || db_path) && cb_devdb_load(db_path, db, &err) != CB_OK) return cli_fail(cmd, &err);
    int rc = resolve(cmd, name, calibration, db, dev);
    if (rc >= 0) {
        cb_devdb_free(db);
        return rc;
    }
    model_cli_fill_l2(db_path, dev);
    return rc;
}

void model_cli_fill_l2(const char *db_path, cb_device *dev) {
    if (dev->l2_bytes > 0 || !dev->model[0]) return;
    cb_devdb db = {0};
    cb_error err = {0};
    if (cb_devdb_load(db_path, &db, &err) != CB_OK) return;
    for (int i = 0; i < db.ndev; i++)
        if (!strcmp(db.dev[i].model, dev->model) && db.dev[i].l2_bytes > 0) {
            dev->l2_bytes = db.dev[i].l2_bytes;
            break;
        }
    cb_devdb_free(&db);
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

const char *model_cli_default_link(const cb_devdb *db, const cb_device *device) {
    // the entry's own word, else that of the database's entry of the same GPU model (a calibration
    // saved before entries carried it), else PCIe 3
    const char *want = device && device->link[0] ? device->link : NULL;
    for (int i = 0; device && !want && i < db->ndev; i++)
        if (db->dev[i].link[0] && device->model[0] && !strcmp(db->dev[i].model, device->model)) want = db->dev[i].link;
    if (!want) want = "pcie3";
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

// the parsed profile and its header fields; NULL after a one-line message (*rc its status)
static cJSON *profile_open(const cli_cmd *cmd, const char *path, const char **network, long *batch, cb_precision *prec, int *rc) {
    cb_error err = {0};
    cJSON *root = cb_json_read(path, &err); // strict JSON, as every reader's
    if (!root && err.status == CB_STATUS_IO) return *rc = cli_usage_error(cmd, "cannot read the profile '%s'", path), NULL;
    const cJSON *net = cJSON_GetObjectItemCaseSensitive(root, "network"), *b = cJSON_GetObjectItemCaseSensitive(root, "batch");
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(root, "precision");
    if (!root || !cJSON_IsString(net) || !cJSON_IsNumber(b) || !cJSON_IsString(pr) || strcmp(runs_verb(root), "profile") ||
        !cb_precision_parse(pr->valuestring, prec)) {
        cJSON_Delete(root);
        return *rc = cli_usage_error(cmd, "'%s' is not the JSON of convbench profile", path), NULL;
    }
    *network = net->valuestring;
    *batch = (long)b->valuedouble;
    return root;
}

// a result's layout: its "layout" (written since 2026-11-27), else its argv's --layout, else NCHW
cb_layout model_cli_json_layout(const struct cJSON *root) {
    cb_layout l = CB_LAYOUT_NCHW;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "layout"), *a = cJSON_GetObjectItemCaseSensitive(root, "argv");
    if (cJSON_IsString(v) && cb_layout_parse(v->valuestring, &l)) return l;
    const cJSON *x;
    bool next = false;
    cJSON_ArrayForEach(x, a) {
        if (!cJSON_IsString(x)) continue;
        if (next && cb_layout_parse(x->valuestring, &l)) return l;
        next = !strcmp(x->valuestring, "--layout");
        if (!strncmp(x->valuestring, "--layout=", 9) && cb_layout_parse(x->valuestring + 9, &l)) return l;
    }
    return CB_LAYOUT_NCHW;
}

int model_cli_profile_header(const cli_cmd *cmd, const char *path, char *network, size_t cap, long *batch, cb_precision *prec,
                             cb_layout *layout) {
    int rc = -1;
    const char *name;
    cJSON *root = profile_open(cmd, path, &name, batch, prec, &rc);
    if (!root) return rc;
    snprintf(network, cap, "%s", name);
    *layout = model_cli_json_layout(root);
    cJSON_Delete(root);
    return -1;
}

// one table's rows: each layer's "<backend>_ms" column (the first "_ms" column where the profile
// has no such backend) and the "<backend>_alg" after it
static void read_rows(const cJSON *rows, const cb_net *net, const char *backend, model_measure *m) {
    m->ms = malloc(sizeof(double) * (size_t)net->nlayers);
    m->alg = calloc((size_t)net->nlayers, sizeof *m->alg);
    if (!m->ms || !m->alg) abort();
    for (int i = 0; i < net->nlayers; i++) m->ms[i] = NAN;
    char want[64];
    snprintf(want, sizeof want, "%s_ms", backend ? backend : "");
    const cJSON *row = rows ? rows->child : NULL;
    bool has = backend && row && cJSON_GetObjectItemCaseSensitive(row, want);
    cJSON_ArrayForEach(row, rows) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "layer");
        int i = cJSON_IsString(name) ? cb_net_find(net, name->valuestring) : -1;
        if (i < 0) continue;
        const cJSON *c;
        cJSON_ArrayForEach(c, row) {
            size_t n = strlen(c->string);
            if (n > 3 && !strcmp(c->string + n - 3, "_ms") && cJSON_IsNumber(c) && (!has || !strcmp(c->string, want))) {
                m->ms[i] = c->valuedouble;
                snprintf(m->backend, sizeof m->backend, "%.*s", (int)(n - 3), c->string);
                const cJSON *a = c->next;
                if (a && cJSON_IsString(a) && strlen(a->string) > 4 && !strcmp(a->string + strlen(a->string) - 4, "_alg"))
                    snprintf(m->alg[i], sizeof m->alg[i], "%s", a->valuestring);
                break;
            }
        }
    }
}

int model_cli_load_measure(const cli_cmd *cmd, const char *path, const cb_net *net, cb_precision prec, cb_layout layout,
                           const char *backend, model_measure *m, int *n, int cap) {
    int rc = -1;
    const char *name;
    long batch;
    cb_precision p;
    cJSON *root = profile_open(cmd, path, &name, &batch, &p, &rc);
    if (!root) return rc;
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(root, "direction"), *wrt = cJSON_GetObjectItemCaseSensitive(root, "wrt");
    const cJSON *tables = cJSON_GetObjectItemCaseSensitive(root, "tables");
    if (strcmp(name, net->name)) rc = cli_usage_error(cmd, "profile '%s' is of network '%s', not '%s'", path, name, net->name);
    else if (batch != (long)cb_net_batch(net))
        rc = cli_usage_error(cmd, "profile '%s' was measured at batch %ld, the prediction is for batch %lld", path, batch,
                             (long long)cb_net_batch(net));
    else if (p != prec)
        rc = cli_usage_error(cmd, "profile '%s' was measured in %s, the prediction is for %s", path, cb_precision_name(p),
                             cb_precision_name(prec));
    else if (model_cli_json_layout(root) != layout)
        rc = cli_usage_error(cmd, "profile '%s' was measured on %s storage, the prediction is for %s (--layout)", path,
                             cb_layout_name(model_cli_json_layout(root)), cb_layout_name(layout));
    else if (!cJSON_IsString(dir)) rc = cli_usage_error(cmd, "'%s' is not the JSON of convbench profile", path);
    else {
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(root, "recompute"); // (outputs made again: in no price of the model)
        if (cJSON_IsString(rec) && (!strcmp(rec->valuestring, "on") || !strcmp(rec->valuestring, "all")))
            rc = cli_usage_error(cmd, "profile '%s' was measured with --recompute %s: its backward times hold outputs made again, which the "
                                      "model does not price (measure with --recompute auto or off)",
                                 path, rec->valuestring);
    }
    if (rc >= 0) goto out;
    static const char *const ALL[CB_PHASE_COUNT] = {"forward", "bwd_data", "bwd_filter"};
    bool all = !strcmp(dir->valuestring, "all");
    for (int q = 0; q < CB_PHASE_COUNT; q++) {
        cb_phase ph = !strcmp(dir->valuestring, "forward")                        ? CB_PHASE_FORWARD
                      : cJSON_IsString(wrt) && !strcmp(wrt->valuestring, "filter") ? CB_PHASE_BWD_FILTER
                                                                                   : CB_PHASE_BWD_DATA;
        const cJSON *rows = cJSON_GetObjectItemCaseSensitive(tables, all ? ALL[q] : "layers");
        if (all) ph = (cb_phase)q;
        else if (q) break;
        if (!cJSON_IsArray(rows)) {
            rc = cli_usage_error(cmd, "profile '%s' has no table '%s'", path, all ? ALL[q] : "layers");
            goto out;
        }
        if (*n == cap) {
            rc = cli_usage_error(cmd, "more than %d profiled directions in all", cap);
            goto out;
        }
        model_measure *d = &m[(*n)++];
        d->phase = ph;
        d->train_fwd = all;
        const cJSON *hold = cJSON_GetObjectItemCaseSensitive(root, "hold");
        d->held = cJSON_IsString(hold) && !strcmp(hold->valuestring, "on");
        read_rows(rows, net, backend, d);
    }
out:
    cJSON_Delete(root);
    return rc;
}

void model_cli_measure_free(model_measure *m) {
    free(m->ms);
    free(m->alg);
    m->ms = NULL, m->alg = NULL;
}

static const char *kind_of(cb_op op) { return op == CB_OP_CONV ? "conv" : op == CB_OP_FC ? "fc" : op == CB_OP_POOL ? "pool" : "other"; }

bool model_cli_kind_selected(const char *kinds, cb_op op) {
    if (!kinds || !strcmp(kinds, "all")) return true;
    for (const char *k = kinds; *k;) {
        size_t n = strcspn(k, ",");
        if (strlen(kind_of(op)) == n && !strncmp(k, kind_of(op), n)) return true;
        k += n + (k[n] == ',');
    }
    return false;
}

int model_cli_kinds_check(const cli_cmd *cmd, const char *kinds) {
    static const char *const NAMES[] = {"conv", "fc", "pool", "other", "all"};
    for (const char *k = kinds; *k;) {
        size_t n = strcspn(k, ",");
        bool known = false;
        for (int j = 0; j < 5; j++) known |= strlen(NAMES[j]) == n && !strncmp(k, NAMES[j], n);
        if (!known) return cli_usage_error(cmd, "--kinds: '%.*s' is not conv, fc, pool, other or all", (int)n, k);
        k += n + (k[n] == ',');
    }
    return -1;
}

void model_cli_predict_row(const cb_device *d, const cb_net *net, int i, cb_phase ph, const cb_model_opts *mo, bool held, cb_pred *out) {
    cb_predict_layer(d, net, i, ph, mo, out);
    for (int b = 0; !held && b < 2; b++) { // the pass's first piece waits for the idle GPU's first call (unless the pass was held)
        cb_phase first_ph;
        if (i == cb_pass_first(net, b, &first_ph) && ph == first_ph) out->ms += 1e3 * cb_pass_start_s(d);
    }
}

model_row *model_cli_compare(const cb_device *d, const cb_net *net, const model_measure *m, int nm, const char *kinds,
                             cb_model_opts mo, int *n, int *skipped) {
    model_row *rows = malloc(sizeof *rows * (size_t)(net->nlayers * nm + 1));
    if (!rows) abort();
    *n = 0, *skipped = 0;
    for (int k = 0; k < nm; k++) {
        cb_phase ph = m[k].phase;
        mo.inference = !m[k].train_fwd;
        mo.weights_fixed = true; // (profile's steps: no update, its weight copies made once)
        for (int i = 1; i < net->nlayers; i++) {
            double mv = m[k].ms[i];
            if (!(mv > 0) || !model_cli_kind_selected(kinds, net->layers[i].op)) continue;
            if (ph == CB_PHASE_BWD_DATA && !cb_model_needs_data_grad(net, i)) {
                ++*skipped;
                continue;
            }
            model_row *r = &rows[(*n)++];
            r->layer = i, r->phase = ph, r->measured_ms = mv, r->measured_alg = m[k].alg[i];
            r->held = m[k].held;
            model_cli_predict_row(d, net, i, ph, &mo, r->held, &r->pred);
            r->paleo_ms = cb_paleo_layer_ms(d, net, i, ph);
            r->err_pct = 100 * fabs(r->pred.ms - mv) / mv;
            r->paleo_err_pct = 100 * fabs(r->paleo_ms - mv) / mv;
        }
    }
    return rows;
}
