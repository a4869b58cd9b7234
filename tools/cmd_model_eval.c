// convbench model-eval --device CAL.json PROFILE.json...: the calibrated model's held-out error,
// leave one network out.
//
// Every parameter of the model is fitted on the calibration shapes alone (the samples the device
// entry holds), never on a profiled network. What is left to choose is the model's form (the
// wave term's tile, and whether it covers backward filter: cb_calibration's wave_tile and
// wave_wgrad). For each network held out, the form is chosen on the other networks (lowest
// pooled median error over their layer-directions), the calibration is fitted again in that form,
// and the held-out network's layers are predicted: nothing about that network reaches its
// prediction. The report gives the held-out median and p90 per network and pooled (per
// direction), next to the default form (no selection) and Paleo's method.
//
// Whole steps: `convbench fullpass --update --no-data-grad --format json` outputs among the files
// are compared with cb_predict_step in the form held out for their network, and in the host-floor
// form (cb_host_floor: how the host's issuing of calls bounds a pass) chosen on the other
// networks' steps, leave one network out as the per-layer forms: the host's time per call itself
// is the calibration's (host_call_s, else launch_s), never fitted to a step.
//
// Profiles are `convbench profile --format json` outputs (one direction each, or --direction
// all); each names its network, batch and precision. The network is found by its name among the
// built-ins (nets/) and the files --nets names (generated ones: tools/gen_random_net.py).
#include "model_cli.h"
#include "runs_common.h"
#include "model_plot.h"
#include "core/net.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROFILES 512
#define MAX_CASES 128
#define MAX_SPECS 256

static const char *const PHASE_COL[CB_PHASE_COUNT] = {"fwd", "bwd_data", "bwd_filter"};

// one network at one batch and precision, with its measured directions
typedef struct ecase {
    char name[160];
    long batch;
    cb_precision prec;
    cb_layout layout;
    cb_net *net;
    model_measure m[12];
    int nm;
    int unit;                           // the network (by name) it belongs to: the unit held out
} ecase;

// the forms tried: the default first (ties keep it)
// (launch_overlap 1: each call's idle launch latency hidden by the pass; 0, the default: the
// idle-timed fixed costs kept whole, the form before 2026-11-25)
// (wave_both 1: the throughput and the wave terms apart, each with its own rate; bw_onchip 1:
// onto another GPU, the convolutions' bandwidth terms scale with SMs x clock, not the memory's)
// (spill 1: the passes' traffic past the L2 priced apart, cb_cal_mop's spill term; each base form
// is tried without it, then with it)
typedef struct base_form { int wave_tile, wave_wgrad, launch_overlap, wave_both, bw_onchip; } base_form;
typedef struct form { int wave_tile, wave_wgrad, launch_overlap, wave_both, bw_onchip, spill, local, best; } form;
static const base_form BASE_FORMS[] = {
    {0, 0, 0, 0, 0},   {-1, 0, 0, 0, 0},  {0, 1, 0, 0, 0},   {0, 2, 0, 0, 0},   {128, 2, 0, 0, 0}, {0, 0, 1, 0, 0},  {-1, 0, 1, 0, 0},
    {32, 0, 1, 0, 0},  {128, 0, 1, 0, 0}, {256, 0, 1, 0, 0}, {0, 1, 1, 0, 0},   {32, 1, 1, 0, 0},  {128, 1, 1, 0, 0}, {256, 1, 1, 0, 0},
    {0, 2, 1, 0, 0},   {32, 2, 1, 0, 0},  {128, 2, 1, 0, 0}, {256, 2, 1, 0, 0}, {0, 0, 1, 1, 0},  {32, 0, 1, 1, 0},  {128, 0, 1, 1, 0},
    {0, 1, 1, 1, 0},   {0, 2, 1, 1, 0},   {32, 2, 1, 1, 0},  {128, 2, 1, 1, 0}, {32, 1, 1, 1, 0},  {0, 0, 1, 0, 1},   {0, 2, 1, 0, 1},
    {32, 0, 1, 0, 1},  {0, 0, 1, 1, 1},   {0, 2, 1, 1, 1},
};
#define NBASE ((int)(sizeof BASE_FORMS / sizeof BASE_FORMS[0]))
#define NFORMS (8 * NBASE)
// the base forms without the spill term (the default, the first, among them), then with it; each of
// those without the local correction, then with it (cb_cal_local); all of those pricing each cuDNN
// algorithm, then cuDNN's fastest per calibrated shape (cb_calibration.best)
static form FORMS[NFORMS];
static void forms_init(void) {
    for (int k = 0; k < NFORMS; k++) {
        const base_form *b = &BASE_FORMS[k % NBASE];
        FORMS[k] = (form){b->wave_tile, b->wave_wgrad, b->launch_overlap, b->wave_both, b->bw_onchip, (k / NBASE) % 2, (k / (2 * NBASE)) % 2, k >= 4 * NBASE};
    }
}

// the device in form f: the calibration refitted in that form (when it has samples), carried
// onto the target GPU when transfer
static cb_status device_in_form(cb_device *out, const cb_device *dev, const cb_device *src, bool transfer, const form *f,
                                const cb_cal_sample *smp, int nsmp, const char *cal_path, cb_error *err) {
    cb_device *s = malloc(sizeof *s);
    if (!s) abort();
    *s = *src;
    s->cal.wave_tile = f->wave_tile, s->cal.wave_wgrad = f->wave_wgrad, s->cal.launch_overlap = f->launch_overlap;
    s->cal.wave_both = f->wave_both, s->cal.bw_onchip = f->bw_onchip, s->cal.spill = f->spill, s->cal.local = f->local, s->cal.best = f->best;
    s->cal.wave_fill = 1; // (in every form: the tiles' padding is chosen on the calibration shapes' fits, not here; cb_conv_fill)
    s->cal.pool_lines = 1; // (likewise the bf16 NHWC tiled pools' line term, cb_mop_tiled_line)
    cb_status st = nsmp ? cb_cal_fit(smp, nsmp, s, err) : CB_OK;
    if (transfer) {
        *out = *dev;
        cb_device_transfer_calibration(out, s, cal_path);
    } else *out = *s;
    free(s);
    return st;
}

static void form_name(const form *f, char *buf, size_t n) {
    const char *idle = f->launch_overlap ? ", launch hidden" : "", *both = f->wave_both ? ", apart" : "",
               *chip = f->bw_onchip ? ", bw on-chip" : "";
    const char *spill = f->spill ? ", spill past L2" : "", *local = f->local ? ", local" : "", *bst = f->best ? ", cuDNN's fastest" : "";
    if (f->wave_tile < 0) snprintf(buf, n, "no wave term%s%s%s%s", idle, spill, local, bst);
    else snprintf(buf, n, "wave %d%s%s%s%s%s%s%s", f->wave_tile ? f->wave_tile : 64, f->wave_wgrad == 2 ? " + wgrad split-K" : f->wave_wgrad ? " + wgrad" : "",
                  both, idle, chip, spill, local, bst);
}

// a row's network unit, direction and whether a fallback ran it (own kernel under cudnn)
typedef struct rowinfo { int unit, ecase, layer; cb_phase phase; bool fallback; const char *alg; double measured; } rowinfo;

typedef struct specs { int n; char *spec[MAX_SPECS]; char *name[MAX_SPECS]; } specs;

static void add_spec(specs *s, const char *spec) {
    if (s->n == MAX_SPECS) return;
    cb_error err = {0};
    cb_net *net = cb_net_load(spec, &err);
    if (!net) return; // a file that is not a network is no candidate
    s->spec[s->n] = cb_strdup(spec);
    s->name[s->n++] = cb_strdup(net->name);
    cb_net_free(net);
}

// the built-ins: every *.json of the directories cb_nets_path names
static void add_builtins(specs *s) {
    char dirs[1024];
    snprintf(dirs, sizeof dirs, "%s", cb_nets_path());
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        DIR *dir = opendir(d);
        if (!dir) continue;
        for (struct dirent *e; (e = readdir(dir));) {
            size_t n = strlen(e->d_name);
            if (n < 6 || strcmp(e->d_name + n - 5, ".json")) continue;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", d, e->d_name);
            add_spec(s, path);
        }
        closedir(dir);
    }
}

// a measured training step: `convbench fullpass --update --no-data-grad --format json`
typedef struct step {
    char name[160];
    long batch;
    cb_precision prec;
    cb_layout layout;
    bool update, data_grad;
    bool auto_race;                    // run on a backend that races its own storage kernels (auto: cb_backend_caps.races_own_conv)
    double fwd, crit, bwd, upd, total; // ms (median)
    const char *path;
} step;

// does backend name race its own storage kernels against the library's (the model then prices both)?
static bool races_own(const char *name) {
    const cb_backend_caps *c = cb_backend_caps_of(name);
    return c && c->races_own_conv;
}

static cJSON *read_json(const char *path) {
    cb_error err = {0};
    char *text = cb_read_text(path, &err);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    return root;
}

// a fullpass result's flag: a JSON boolean (fullpass), or "yes"/"no" (fullpass --gpus before 2026-11-28).
// (Reading only the string once left every single-GPU step's update out of its prediction.)
static bool json_yes(const cJSON *v) { return cJSON_IsTrue(v) || (cJSON_IsString(v) && !strcmp(v->valuestring, "yes")); }

// whether path holds a fullpass result; if so, *st filled (-1 returned) or an exit status
static int load_step(const char *path, bool *is, step *st) {
    cJSON *root = read_json(path);
    *is = root && !strcmp(runs_verb(root), "fullpass");
    int rc = -1;
    if (*is) {
        const cJSON *net = cJSON_GetObjectItemCaseSensitive(root, "network"), *b = cJSON_GetObjectItemCaseSensitive(root, "batch");
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(root, "precision"), *up = cJSON_GetObjectItemCaseSensitive(root, "update");
        const cJSON *dg = cJSON_GetObjectItemCaseSensitive(root, "data_grad");
        const cJSON *rows = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "tables"), "fullpass");
        memset(st, 0, sizeof *st);
        st->path = path;
        if (!cJSON_IsString(net) || !cJSON_IsNumber(b) || !cJSON_IsString(pr) || !cb_precision_parse(pr->valuestring, &st->prec) ||
            !cJSON_IsArray(rows))
            rc = cli_usage_error(&cmd_model_eval, "'%s' is not the JSON of convbench fullpass", path);
        else {
            snprintf(st->name, sizeof st->name, "%s", net->valuestring);
            st->batch = (long)b->valuedouble;
            st->layout = model_cli_json_layout(root);
            st->update = json_yes(up);
            st->data_grad = json_yes(dg);
            const cJSON *be = cJSON_GetObjectItemCaseSensitive(root, "backend");
            st->auto_race = cJSON_IsString(be) && races_own(be->valuestring);
            const cJSON *r;
            cJSON_ArrayForEach(r, rows) {
                const cJSON *ph = cJSON_GetObjectItemCaseSensitive(r, "phase"), *ms = cJSON_GetObjectItemCaseSensitive(r, "median_ms");
                if (!cJSON_IsString(ph) || !cJSON_IsNumber(ms)) continue;
                const char *n = ph->valuestring + strspn(ph->valuestring, " ");
                double v = ms->valuedouble;
                if (!strcmp(n, "net forward")) st->fwd = v;
                else if (!strcmp(n, "net backward")) st->bwd = v;
                else if (!strncmp(n, "criterion", 9)) st->crit += v;
                else if (!strcmp(n, "update")) st->upd = v;
                else if (!strcmp(n, "total")) st->total = v;
            }
            if (!(st->total > 0)) rc = cli_usage_error(&cmd_model_eval, "'%s': fullpass without a total", path);
        }
    }
    cJSON_Delete(root);
    return rc;
}

// n numbers with one decimal, in the row's next cells
static void cells_1(cb_table *t, const double *v, int n) {
    for (int k = 0; k < n; k++) cb_table_num(t, v[k], 1);
}

static double median_of(double *v, int n, double *p90) {
    double m = 0, p = 0;
    if (n) model_cli_percentiles(v, n, &m, &p);
    if (p90) *p90 = p;
    return m;
}

// median and p90 of err[rows where keep(row)]
// the rows a pooled line keeps: all, all but the fallbacks (an own kernel under cudnn), those cuDNN's
// graph-API race ran (tf32, bf16: engines the calibration prices only as its *_GRAPH entries), the
// rest of cuDNN's (its legacy algorithms)
enum { ROWS_ALL, ROWS_NO_FALLBACK, ROWS_GRAPH, ROWS_LEGACY };
static bool graph_row(const rowinfo *r) { return r->alg && strstr(r->alg, "graph engine"); }

static void stats(const double *err, const rowinfo *ri, int nrow, int unit, int phase, int rows, double *scratch, int *cnt,
                  double *med, double *p90) {
    int k = 0;
    for (int j = 0; j < nrow; j++) {
        if (unit >= 0 && ri[j].unit != unit) continue;
        if (phase >= 0 && (int)ri[j].phase != phase) continue;
        if (rows != ROWS_ALL && ri[j].fallback) continue;
        if ((rows == ROWS_GRAPH && !graph_row(&ri[j])) || (rows == ROWS_LEGACY && graph_row(&ri[j]))) continue;
        scratch[k++] = err[j];
    }
    *cnt = k;
    *med = median_of(scratch, k, p90);
}

// the median error of form f over the rows of every unit but `out`
static double form_median(double *const *err_f, int f, const rowinfo *ri, int nrow, int out, double *scratch) {
    int k = 0;
    for (int j = 0; j < nrow; j++)
        if (ri[j].unit != out) scratch[k++] = err_f[f][j];
    return k ? median_of(scratch, k, NULL) : 0;
}

// the form with the lowest median error over the rows of every unit but `out` (-1: all of them), in
// stages: the best of the forms without the local correction and pricing each cuDNN algorithm; then
// that one with the local correction where that is lower; then that one priced by cuDNN's fastest
// where that is lower
static int pick_form(double *const *err_f, int nforms, const rowinfo *ri, int nrow, int out, double *scratch) {
    int best = 0;
    double bestm = INFINITY;
    for (int f = 0; f < nforms && f < 2 * NBASE; f++) {
        double v = form_median(err_f, f, ri, nrow, out, scratch);
        if (v < bestm - 1e-9) bestm = v, best = f;
    }
    for (int stage = 2 * NBASE; stage < 8 * NBASE && best + stage < nforms; stage *= 2) {
        double v = form_median(err_f, best + stage, ri, nrow, out, scratch);
        if (v < bestm - 1e-9) bestm = v, best += stage;
    }
    return best;
}

static int run(int argc, char **argv) {
    forms_init();
    const char *device = NULL, *calibration = NULL, *db_path = NULL, *kinds = "conv", *precision = NULL, *plot = NULL, *save = NULL;
    long ws_mb = 4096;
    bool rows_out = false, default_only = false;
    cli_list nets = {0};
    cli_out o = {0};
    const cli_opt opts[] = {
        {"--device", CLI_STR, &device, "FILE|NAME", "the calibrated entry (calibrate --save) whose samples are refitted; or a database GPU"},
        {"--calibration", CLI_STR, &calibration, "FILE", "with --device NAME: a calibration taken on another GPU, carried onto NAME's datasheet"},
        {"--nets", CLI_LIST, &nets, "F1,F2", "network files besides the built-ins, matched to the profiles by name (repeatable)"},
        {"--kinds", CLI_STR, &kinds, "K1,K2", "layer kinds evaluated: conv (default), fc, pool, other or all"},
        {"--precision", CLI_STR, &precision, "P", "only the profiles and steps measured in P (fp32, tf32, bf16; default: all)"},
        {"--default-form", CLI_FLAG, &default_only, NULL, "no form selection: the default form for every network"},
        {"--plot", CLI_STR, &plot, "FILE.svg", "held-out predicted against measured per layer-direction, as SVG"},
        {"--save", CLI_STR, &save, "FILE", "the calibration in the form best on every network (rows; steps: the host floor), for predict --calibration FILE"},
        {"--rows", CLI_FLAG, &rows_out, NULL, "also every layer-direction's held-out prediction"},
        {"--workspace-mb", CLI_INT, &ws_mb, "MB", "algorithms may use this much workspace, as profile's (default 4096)"},
        {"--devices", CLI_STR, &db_path, "FILE", "device database (default $CONVBENCH_DEVICES or data/devices.json)"},
        CLI_OUT_OPTS(o),
        {0},
    };
    const char *pos[MAX_PROFILES] = {0};
    int rc = cli_parse(&cmd_model_eval, opts, argc, argv, pos, 1, MAX_PROFILES);
    if (rc >= 0) return rc;
    int npos = 0;
    while (npos < MAX_PROFILES && pos[npos]) npos++;
    cb_format fmt;
    if ((rc = cli_out_check(&cmd_model_eval, &o, &fmt)) >= 0) return rc;
    if ((rc = model_cli_kinds_check(&cmd_model_eval, kinds)) >= 0) return rc;
    if (ws_mb < 0) return cli_usage_error(&cmd_model_eval, "--workspace-mb: %ld must not be negative", ws_mb);
    cb_precision only_prec = CB_PREC_FP32;
    if (precision && !cb_precision_parse(precision, &only_prec))
        return cli_usage_error(&cmd_model_eval, "--precision: '%s' is not fp32, tf32 or bf16", precision);
    cb_devdb db;
    cb_device *dev = malloc(sizeof *dev), *fd = malloc(sizeof *fd), *src = malloc(sizeof *src);
    if (!dev || !fd || !src) abort();
    if ((rc = model_cli_device(&cmd_model_eval, db_path, device, calibration, false, &db, dev)) >= 0) {
        free(dev), free(fd), free(src);
        return rc;
    }
    cb_devdb_free(&db);
    // the calibration's own GPU (src), and whether it is carried onto another one (--device NAME --calibration FILE)
    const char *cal_path = calibration ? calibration : device;
    bool transfer = calibration && device;
    cb_error err = {0};
    if (!dev->cal.nalgo || cb_device_load_file(cal_path, src, &err) != CB_OK) {
        free(dev), free(fd), free(src);
        return cli_usage_error(&cmd_model_eval, "'%s' holds no GPU calibration (calibrate --backend cudnn --save)", cal_path);
    }
    model_cli_fill_l2(db_path, src);
    cb_cal_sample *smp = NULL;
    int nsmp = 0;
    cb_cal_samples_load_file(cal_path, &smp, &nsmp, &err);
    int nforms = nsmp && !default_only ? NFORMS : 1;

    specs sp = {0};
    for (int j = 0; j < nets.n; j++)
        for (const char *f = nets.v[j]; *f;) {
            size_t len = strcspn(f, ",");
            char path[2048];
            snprintf(path, sizeof path, "%.*s", (int)len, f);
            f += len + (f[len] == ',');
            if (!len) continue;
            int before = sp.n;
            add_spec(&sp, path);
            if (sp.n == before) {
                rc = cli_usage_error(&cmd_model_eval, "--nets: '%s' is not a network description convbench can load", path);
                goto out;
            }
        }
    add_builtins(&sp);

    ecase *cs = calloc(MAX_CASES, sizeof *cs);
    char (*units)[160] = calloc(MAX_CASES, sizeof *units);
    int ncase = 0, nunit = 0;
    if (!cs || !units) abort();
    step *steps = calloc((size_t)npos, sizeof *steps);
    int nstep = 0, nprof = 0;
    if (!steps) abort();
    for (int p = 0; p < npos; p++) {
        char name[160];
        long batch;
        cb_precision prec;
        bool is_step;
        if ((rc = load_step(pos[p], &is_step, &steps[nstep])) >= 0) goto out_cases;
        if (is_step) {
            if (!precision || steps[nstep].prec == only_prec) nstep++;
            continue;
        }
        cb_layout layout;
        if ((rc = model_cli_profile_header(&cmd_model_eval, pos[p], name, sizeof name, &batch, &prec, &layout)) >= 0) goto out_cases;
        if (precision && prec != only_prec) continue;
        nprof++;
        int c = 0;
        while (c < ncase && !(cs[c].batch == batch && cs[c].prec == prec && cs[c].layout == layout && !strcmp(cs[c].name, name))) c++;
        if (c == ncase) {
            int k = 0;
            while (k < sp.n && strcmp(sp.name[k], name)) k++;
            if (k == sp.n) {
                rc = cli_usage_error(&cmd_model_eval, "'%s': no built-in network or --nets file is named '%s'", pos[p], name);
                goto out_cases;
            }
            if (ncase == MAX_CASES) {
                rc = cli_usage_error(&cmd_model_eval, "more than %d networks and batches", MAX_CASES);
                goto out_cases;
            }
            ecase *e = &cs[ncase++];
            snprintf(e->name, sizeof e->name, "%s", name);
            e->batch = batch, e->prec = prec, e->layout = layout;
            if (!(e->net = cli_load_net(&cmd_model_eval, sp.spec[k], batch, &rc))) goto out_cases;
            e->unit = 0;
            while (e->unit < nunit && strcmp(units[e->unit], name)) e->unit++;
            if (e->unit == nunit) snprintf(units[nunit++], sizeof units[0], "%s", name);
        }
        if ((rc = model_cli_load_measure(&cmd_model_eval, pos[p], cs[c].net, cs[c].prec, cs[c].layout, dev->cal.backend, cs[c].m, &cs[c].nm, 12)) >= 0) goto out_cases;
    }

    // err[f][row]: every form's prediction of every row; the rows are the same in every form
    int nrow = 0, cap = 0, skipped = 0;
    rowinfo *ri = NULL;
    double *err_f[NFORMS] = {0}, *paleo = NULL;
    model_row *best = NULL;             // the held-out prediction of each row, for --rows
    for (int f = 0; f < nforms; f++) {
        if (device_in_form(fd, dev, src, transfer, &FORMS[f], smp, nsmp, cal_path, &err) != CB_OK) {
            rc = cli_fail(&cmd_model_eval, &err);
            goto out_rows;
        }
        int r = 0;
        for (int c = 0; c < ncase; c++) {
            cb_model_opts mo = {cs[c].prec, (double)ws_mb * (1 << 20), false, cs[c].layout, false, false};
            mo.own_race = cs[c].nm && races_own(cs[c].m[0].backend); // (auto's race of the own wgmma kernel)
            int n = 0, sk = 0;
            model_row *rows = model_cli_compare(fd, cs[c].net, cs[c].m, cs[c].nm, kinds, mo, &n, &sk);
            if (!f) {
                skipped += sk;
                if (nrow + n > cap) {
                    cap = 2 * (nrow + n);
                    ri = realloc(ri, sizeof *ri * (size_t)cap);
                    paleo = realloc(paleo, sizeof *paleo * (size_t)cap);
                    best = realloc(best, sizeof *best * (size_t)cap);
                    for (int g = 0; g < NFORMS; g++) err_f[g] = realloc(err_f[g], sizeof(double) * (size_t)cap);
                    if (!ri || !paleo || !best) abort();
                }
                for (int j = 0; j < n; j++) {
                    rowinfo *w = &ri[nrow + j];
                    *w = (rowinfo){cs[c].unit, c, rows[j].layer, rows[j].phase, !strncmp(rows[j].measured_alg, "own", 3),
                                   rows[j].measured_alg, rows[j].measured_ms};
                    paleo[nrow + j] = rows[j].paleo_err_pct;
                }
                nrow += n;
            }
            for (int j = 0; j < n; j++) err_f[f][r + j] = rows[j].err_pct;
            if (!f)
                for (int j = 0; j < n; j++) best[r + j] = rows[j];
            r += n;
            free(rows);
        }
    }
    if (!nrow && !nstep) {
        rc = cli_usage_error(&cmd_model_eval, "no layer of kind '%s' has a measured time in the profiles", kinds);
        goto out_rows;
    }

    // leave one network out: the form with the lowest pooled median on the others
    double *scratch = malloc(sizeof(double) * (size_t)(nrow + nstep + 1)), *held = malloc(sizeof(double) * (size_t)(nrow + 1));
    int *chosen = calloc((size_t)nunit + 1, sizeof(int));
    if (!scratch || !held || !chosen) abort();
    // in two stages, so that the local form adds one choice and not a second copy of every form: the
    // form without it, then that form with it where it is better on the same rows (over 124 forms at
    // once, four networks held out in turn chose local forms that failed on the one left out)
    for (int u = 0; u < nunit; u++) {
        chosen[u] = pick_form(err_f, nforms, ri, nrow, u, scratch);
        for (int j = 0; j < nrow; j++)
            if (ri[j].unit == u) held[j] = err_f[chosen[u]][j];
    }
    int all_best = pick_form(err_f, nforms, ri, nrow, -1, scratch); // the form for a network that has no profile: chosen on every profiled one
    int best_floor = -1; // the host floor best on every step (--save; -1: no steps)
    // the held-out rows' predictions under their chosen form, for --rows
    if (rows_out || plot)
        for (int u = 0; u < nunit; u++) {
            if (!chosen[u]) continue;
            device_in_form(fd, dev, src, transfer, &FORMS[chosen[u]], smp, nsmp, cal_path, &err);
            for (int j = 0; j < nrow; j++)
                if (ri[j].unit == u) {
                    cb_model_opts mo = {cs[ri[j].ecase].prec, (double)ws_mb * (1 << 20), false, cs[ri[j].ecase].layout, false, false};
                    const model_measure *m = cs[ri[j].ecase].m;
                    mo.own_race = races_own(m[0].backend);
                    int k = 0;
                    while (k + 1 < cs[ri[j].ecase].nm && (m[k].phase != ri[j].phase || !(m[k].ms[ri[j].layer] > 0))) k++;
                    mo.inference = !m[k].train_fwd, mo.weights_fixed = true; // (as model_cli_compare, the pass's start included)
                    model_cli_predict_row(fd, cs[ri[j].ecase].net, ri[j].layer, ri[j].phase, &mo, best[j].held, &best[j].pred);
                }
        }

    if (plot) {
        model_point *pts = malloc(sizeof *pts * (size_t)(nrow + 1));
        if (!pts) abort();
        for (int j = 0; j < nrow; j++) pts[j] = (model_point){ri[j].measured, best[j].pred.ms, ri[j].phase};
        char title[160];
        snprintf(title, sizeof title, "%d networks, leave one out: %s on %s", nunit, kinds, dev->name);
        int bad = model_plot_svg(plot, title, pts, nrow);
        free(pts);
        if (bad) {
            rc = cli_usage_error(&cmd_model_eval, "--plot: cannot write '%s'", plot);
            goto out_eval;
        }
    }
    cb_report *r = cb_report_new("model-eval");
    cb_report_meta_str(r, "device", dev->name);
    cb_report_meta_str(r, "calibration", cal_path);
    if (transfer) cb_report_meta_str(r, "transfer", "the calibration's efficiencies and passes carried onto the device's datasheet figures");
    cb_report_meta_num(r, "calibration_samples", nsmp);
    cb_report_meta_str(r, "calibration_cache", dev->cal.cache_step ? "step (timed as a step leaves the L2)" : "hot (timed back to back)");
    cb_report_meta_str(r, "kinds", kinds);
    cb_report_meta_num(r, "networks", nunit);
    cb_report_meta_num(r, "profiles", nprof);
    if (nstep) cb_report_meta_num(r, "steps", nstep);
    const char *nc[] = {"network", "batch", "precision", "rows", "fallback_rows", "form_chosen", "heldout_median_pct",
                        "heldout_p90_pct", "default_median_pct", "default_p90_pct", "paleo_median_pct"};
    cb_table *t = cb_report_table(r, "networks", 11, nc);
    for (int u = 0; u < nunit; u++) {
        int n = 0, fb = 0;
        double hm, hp, dm, dp, pm;
        for (int j = 0; j < nrow; j++) fb += ri[j].unit == u && ri[j].fallback;
        stats(held, ri, nrow, u, -1, ROWS_ALL, scratch, &n, &hm, &hp);
        stats(err_f[0], ri, nrow, u, -1, ROWS_ALL, scratch, &n, &dm, &dp);
        stats(paleo, ri, nrow, u, -1, ROWS_ALL, scratch, &n, &pm, NULL);
        char batches[64] = "", fname[128];
        for (int c = 0; c < ncase; c++)
            if (cs[c].unit == u)
                snprintf(batches + strlen(batches), sizeof batches - strlen(batches), "%s%ld", batches[0] ? "," : "", cs[c].batch);
        form_name(&FORMS[chosen[u]], fname, sizeof fname);
        int c0 = 0;
        while (cs[c0].unit != u) c0++;
        cb_table_row(t);
        cb_table_str(t, units[u]);
        cb_table_str(t, batches);
        cb_table_str(t, cb_precision_name(cs[c0].prec));
        cb_table_int(t, n);
        cb_table_int(t, fb);
        cb_table_str(t, fname);
        cells_1(t, (double[]){hm, hp, dm, dp, pm}, 5);
    }
    const char *pc[] = {"direction", "rows", "heldout_median_pct", "heldout_p90_pct", "default_median_pct", "default_p90_pct",
                        "paleo_median_pct", "paleo_p90_pct"};
    t = cb_report_table(r, "pooled", 8, pc);
    int ngraph = 0;
    for (int j = 0; j < nrow; j++) ngraph += !ri[j].fallback && graph_row(&ri[j]);
    for (int k = 0; k <= CB_PHASE_COUNT + 3; k++) {
        int rows = k <= CB_PHASE_COUNT ? ROWS_ALL : k == CB_PHASE_COUNT + 1 ? ROWS_NO_FALLBACK : k == CB_PHASE_COUNT + 2 ? ROWS_GRAPH : ROWS_LEGACY;
        if (rows >= ROWS_GRAPH && !ngraph) continue; // (the split only where the graph race ran some)
        int ph = k < CB_PHASE_COUNT ? k : -1, n;
        double hm, hp, dm, dp, pm, pp;
        stats(held, ri, nrow, -1, ph, rows, scratch, &n, &hm, &hp);
        if (!n) continue;
        stats(err_f[0], ri, nrow, -1, ph, rows, scratch, &n, &dm, &dp);
        stats(paleo, ri, nrow, -1, ph, rows, scratch, &n, &pm, &pp);
        cb_table_row(t);
        cb_table_str(t, ph >= 0              ? PHASE_COL[ph]
                        : rows == ROWS_ALL   ? "all"
                        : rows == ROWS_GRAPH ? "all, cuDNN graph engines"
                        : rows == ROWS_LEGACY ? "all, cuDNN legacy algorithms"
                                              : "all, no fallback rows");
        cb_table_int(t, n);
        cells_1(t, (double[]){hm, hp, dm, dp, pm, pp}, 6);
    }
    if (nforms > 1) {
        const char *fc[] = {"form", "chosen_for", "all_networks_median_pct", "all_networks_p90_pct"};
        t = cb_report_table(r, "forms", 4, fc);
        for (int f = 0; f < nforms; f++) {
            int n, times = 0;
            double m, p;
            for (int u = 0; u < nunit; u++) times += chosen[u] == f;
            stats(err_f[f], ri, nrow, -1, -1, ROWS_ALL, scratch, &n, &m, &p);
            char fname[128];
            form_name(&FORMS[f], fname, sizeof fname);
            cb_table_row(t);
            cb_table_str(t, fname);
            cb_table_int(t, times);
            cb_table_num(t, m, 1);
            cb_table_num(t, p, 1);
        }
    }
    if (rows_out) {
        const char *rc_[] = {"network", "batch", "layer", "direction", "measured_ms", "measured_alg", "model_ms", "model_alg", "heldout_err_pct"};
        t = cb_report_table(r, "rows", 9, rc_);
        for (int j = 0; j < nrow; j++) {
            const ecase *e = &cs[ri[j].ecase];
            cb_table_row(t);
            cb_table_str(t, e->name);
            cb_table_int(t, e->batch);
            cb_table_str(t, e->net->layers[ri[j].layer].name);
            cb_table_str(t, PHASE_COL[ri[j].phase]);
            cb_table_num(t, ri[j].measured, 4);
            cb_table_str(t, ri[j].alg);
            cb_table_num(t, best[j].pred.ms, 4);
            cb_table_str(t, best[j].pred.name[0] ? best[j].pred.name : best[j].pred.algo < CB_ALGO_COUNT ? cb_algo_name(best[j].pred.algo) : "");
            cb_table_num(t, held[j], 1);
        }
    }
    if (nstep) {
        // every step in every host form (the per-layer form held out as above); then each step's
        // host form chosen on the other networks' steps (lowest median error), as the per-layer forms
        cb_step_pred *spf = calloc((size_t)nstep * CB_HOST_FLOOR_COUNT, sizeof *spf);
        double *serr = calloc((size_t)nstep * CB_HOST_FLOOR_COUNT, sizeof(double));
        int *sform = calloc((size_t)nstep, sizeof(int));
        if (!spf || !serr || !sform) abort();
        for (int k = 0; k < nstep && rc < 0; k++) {
            const step *st = &steps[k];
            int sp_i = 0;
            while (sp_i < sp.n && strcmp(sp.name[sp_i], st->name)) sp_i++;
            if (sp_i == sp.n) {
                rc = cli_usage_error(&cmd_model_eval, "'%s': no built-in network or --nets file is named '%s'", st->path, st->name);
                break;
            }
            cb_net *net = cli_load_net(&cmd_model_eval, sp.spec[sp_i], st->batch, &rc);
            if (!net) break;
            int u = 0, f = all_best;
            while (u < nunit && strcmp(units[u], st->name)) u++;
            if (u < nunit) f = chosen[u];
            device_in_form(fd, dev, src, transfer, &FORMS[f], smp, nsmp, cal_path, &err);
            cb_model_opts mo = {st->prec, (double)ws_mb * (1 << 20), false, st->layout, false, false};
            mo.own_race = st->auto_race;
            for (int h = 0; h < CB_HOST_FLOOR_COUNT; h++) {
                cb_step_pred *q = &spf[k * CB_HOST_FLOOR_COUNT + h];
                fd->cal.host_floor = h;
                cb_predict_step(fd, net, &mo, q);
                if (!st->update) q->total_ms -= q->update_ms;
                serr[k * CB_HOST_FLOOR_COUNT + h] = 100 * fabs(q->total_ms - st->total) / st->total;
            }
            cb_net_free(net);
        }
        for (int k = 0; k < nstep && rc < 0; k++) {
            double bestm = INFINITY;
            for (int h = 0; h < CB_HOST_FLOOR_COUNT; h++) {
                int n = 0;
                for (int j = 0; j < nstep; j++)
                    if (strcmp(steps[j].name, steps[k].name)) scratch[n++] = serr[j * CB_HOST_FLOOR_COUNT + h];
                double m = n ? median_of(scratch, n, NULL) : 0;
                if (m < bestm - 1e-9) bestm = m, sform[k] = h;
            }
        }
        if (rc >= 0) {
            free(spf), free(serr), free(sform);
            cb_report_free(r);
            goto out_eval;
        }
        const char *sc[] = {"network", "batch", "forward_ms", "forward_model_ms", "backward_ms", "backward_model_ms", "update_ms",
                            "update_model_ms", "calls", "host_model_ms", "host_floor", "bound", "step_ms", "step_model_ms",
                            "step_err_pct", "no_floor_err_pct"};
        t = cb_report_table(r, "steps", 16, sc);
        int ne = 0;
        double *e0 = malloc(sizeof(double) * (size_t)nstep);
        if (!e0) abort();
        for (int k = 0; k < nstep; k++) {
            const step *st = &steps[k];
            const cb_step_pred *q = &spf[k * CB_HOST_FLOOR_COUNT + sform[k]];
            double e = serr[k * CB_HOST_FLOOR_COUNT + sform[k]];
            e0[k] = serr[k * CB_HOST_FLOOR_COUNT + CB_HOST_FLOOR_NONE];
            scratch[ne++] = e;
            char bound[48];
            snprintf(bound, sizeof bound, "%s, %d/%d layers",
                     q->host_bound_fwd && q->host_bound_bwd ? "host" : q->host_bound_fwd ? "host fwd" : q->host_bound_bwd ? "host bwd" : "gpu",
                     q->host_layers, q->layer_passes);
            cb_table_row(t);
            cb_table_str(t, st->name);
            cb_table_int(t, st->batch);
            cb_table_num(t, st->fwd, 3);
            cb_table_num(t, q->fwd_pass_ms, 3);
            cb_table_num(t, st->bwd, 3);
            cb_table_num(t, q->bwd_pass_ms, 3);
            cb_table_num(t, st->upd, 3);
            if (st->update) cb_table_num(t, q->update_ms, 3);
            else cb_table_null(t);
            cb_table_int(t, q->calls_fwd + q->calls_bwd);
            cb_table_num(t, q->host_fwd_ms + q->host_bwd_ms, 3);
            cb_table_str(t, cb_host_floor_name((cb_host_floor)sform[k]));
            cb_table_str(t, bound);
            cb_table_num(t, st->total, 3);
            cb_table_num(t, q->total_ms, 3);
            cb_table_num(t, e, 1);
            cb_table_num(t, e0[k], 1);
            if (st->data_grad) cb_report_note(r, "%s: measured with the input's gradient, which the model leaves out", st->path);
        }
        const char *hc[] = {"host_floor", "chosen_for", "all_steps_median_pct", "all_steps_p90_pct"};
        t = cb_report_table(r, "step_forms", 4, hc);
        for (int h = 0; h < CB_HOST_FLOOR_COUNT; h++) {
            int times = 0;
            for (int k = 0; k < nstep; k++) times += sform[k] == h, e0[k] = serr[k * CB_HOST_FLOOR_COUNT + h];
            double m, p90;
            m = median_of(e0, nstep, &p90);
            cb_table_row(t);
            cb_table_str(t, cb_host_floor_name((cb_host_floor)h));
            cb_table_int(t, times);
            cb_table_num(t, m, 1);
            cb_table_num(t, p90, 1);
        }
        free(e0);
        double m, p90, m0, p0;
        m = median_of(scratch, ne, &p90);
        for (int k = 0; k < nstep; k++) scratch[k] = serr[k * CB_HOST_FLOOR_COUNT + CB_HOST_FLOOR_NONE];
        m0 = median_of(scratch, nstep, &p0);
        bool measured;
        double hs = cb_cal_host_call_s(&dev->cal, &measured);
        double bestfm = INFINITY; // the host floor best on every step (--save)
        for (int h = 0; h < CB_HOST_FLOOR_COUNT; h++) {
            for (int k = 0; k < nstep; k++) scratch[k] = serr[k * CB_HOST_FLOOR_COUNT + h];
            double mh = median_of(scratch, nstep, NULL);
            if (mh < bestfm - 1e-9) bestfm = mh, best_floor = h;
        }
        cb_report_note(r, "whole steps (%d): held-out median error %.1f%%, p90 %.1f%% (no host floor: %.1f%%, p90 %.1f%%); predicted = "
                          "the per-layer predictions (training forward) + criterion + update, each pass at least its host time "
                          "in the host_floor form chosen on the other networks' steps (per pass: max(sum of GPU times, calls x "
                          "host time); per layer: the sum of each layer's max); bound: the larger side per pass, and the (layer, "
                          "pass) pairs whose host time is the larger",
                       ne, m, p90, m0, p0);
        if (measured) {
            cb_report_note(r, "host time per call: %.2f us, the calibration's host_call_s (calls: cb_predict_layer_calls)", 1e6 * hs);
            if (dev->cal.host_engine_call_s > 0)
                cb_report_note(r, "the engine's own host time per call in a small network's step: %.2f us (%.2fx; recorded, not priced)",
                               1e6 * dev->cal.host_engine_call_s, dev->cal.host_engine_call_s / hs);
        }
        else
            cb_report_note(r, "host time per call: %.2f us = %.1f x the calibration's launch_s (it has no host_call_s: calibrated "
                              "before 2026-11-27); calls: cb_predict_layer_calls",
                           1e6 * hs, CB_HOST_CALL_PER_LAUNCH);
        free(spf), free(serr), free(sform);
    }
    cb_report_note(r, "held out: each network's form (wave term, launch latency hidden or not) chosen on the other networks' rows, every coefficient fitted on the "
                      "calibration shapes alone; default: the default form for all; error |predicted - measured| / measured");
    if (nforms == 1) cb_report_note(r, "one form only (%s): held-out and default agree", nsmp ? "--default-form" : "the entry has no samples to refit");
    for (int c = 0; c < ncase; c++)
        if (cs[c].nm && strcmp(cs[c].m[0].backend, dev->cal.backend))
            cb_report_note(r, "%s: measured on backend '%s', the calibration is of '%s'", cs[c].name, cs[c].m[0].backend, dev->cal.backend);
    if (skipped) cb_report_note(r, "%d backward-data rows left out: layers fed by the input compute no data gradient", skipped);
    cb_report_note(r, "fallback rows: the backend ran its own kernel (measured algorithm 'own ...'), e.g. for asymmetric padding");
    if (save) { // refitted in that form (carried as the evaluation was), with the samples, whole or not at all
        device_in_form(fd, dev, src, transfer, &FORMS[all_best], smp, nsmp, cal_path, &err);
        if (best_floor >= 0) fd->cal.host_floor = best_floor;
        char *text = cb_device_entry_text(fd, smp, nsmp);
        cb_status ws = cb_write_whole(save, text, strlen(text), &err);
        free(text);
        if (ws != CB_OK) {
            rc = cli_fail(&cmd_model_eval, &err);
            cb_report_free(r);
            goto out_eval;
        }
        char fname[128];
        form_name(&FORMS[all_best], fname, sizeof fname);
        cb_report_note(r, "saved to %s: the calibration in the form '%s'%s%s (predict --calibration %s)", save, fname,
                       best_floor >= 0 ? ", host floor " : "", best_floor >= 0 ? cb_host_floor_name((cb_host_floor)best_floor) : "", save);
    }
    rc = cli_emit(&cmd_model_eval, r, &o, fmt);
    cb_report_free(r);
out_eval:
    free(scratch), free(held), free(chosen);
out_rows:
    for (int f = 0; f < NFORMS; f++) free(err_f[f]);
    free(ri), free(paleo), free(best);
out_cases:
    for (int c = 0; c < ncase; c++) {
        for (int k = 0; k < cs[c].nm; k++) model_cli_measure_free(&cs[c].m[k]);
        cb_net_free(cs[c].net);
    }
    free(cs), free(units), free(steps);
out:
    for (int k = 0; k < sp.n; k++) free(sp.spec[k]), free(sp.name[k]);
    free(smp), free(dev), free(fd), free(src);
    return rc;
}

const cli_cmd cmd_model_eval = {"model-eval", "the calibrated model's held-out per-layer error, leave one network out, from GPU profiles",
                                "--device CAL.json [--nets F1,F2] [--kinds K] PROFILE.json... [FULLPASS.json...]", run};
