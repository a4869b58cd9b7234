// convbench report RESULT.json ... --output page.html: one self-contained HTML page (inline SVG,
// no script, nothing fetched) from result files or --db runs: per-layer bars (own vs cuDNN vs
// predicted), a roofline of every layer, whole networks against the peer, simulate's scaling,
// train's curves and infer's Op Time against batch.
#include "model_cli.h"
#include "runs_common.h"
#include "svg.h"
#include "core/net.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_DOCS 256

typedef struct doc { cJSON *j; char label[160]; } doc;

static const char *PHASE_TABLES[] = {"forward", "bwd_data", "bwd_filter"};
static const char *PREDICT_COLS[] = {"fwd_ms", "bwd_data_ms", "bwd_filter_ms"};

// The built-in network (nets/NAME.json) whose description is called `desc`; "" when none.
static void builtin_of(const char *desc, char *out, size_t n) {
    out[0] = 0;
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s", cb_nets_path());
    for (char *d = strtok(dirs, ":"); d && !out[0]; d = strtok(NULL, ":")) {
        DIR *dir = opendir(d);
        struct dirent *e;
        while (dir && !out[0] && (e = readdir(dir))) {
            size_t l = strlen(e->d_name);
            if (l < 6 || strcmp(e->d_name + l - 5, ".json")) continue;
            char path[8400];
            snprintf(path, sizeof path, "%s/%s", d, e->d_name);
            cb_error err;
            cb_net *net = cb_net_load(path, &err);
            if (net && !strcmp(net->name, desc)) snprintf(out, n, "%.*s", (int)(l - 5), e->d_name);
            cb_net_free(net);
        }
        if (dir) closedir(dir);
    }
}

// a network's short name: the built-in's ("alexnet") where there is one, else its description
static const char *short_net(const cJSON *j, char *buf, size_t n) {
    builtin_of(runs_str(j, "network"), buf, n);
    return buf[0] ? buf : runs_str(j, "network");
}

static const cJSON *table_of(const cJSON *j, const char *name) {
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "tables"), name);
}

static void h2(cb_sbuf *b, const char *s) {
    cb_sbuf_add(b, "<h2>");
    svg_text(b, s);
    cb_sbuf_add(b, "</h2>\n");
}
static void para(cb_sbuf *b, const char *s) {
    cb_sbuf_add(b, "<p>");
    svg_text(b, s);
    cb_sbuf_add(b, "</p>\n");
}

// the series of a profile table: its *_ms columns ("cuda_ms" -> "own (cuda)")
static int backend_cols(const cJSON *rows, char cols[][32], char names[][48], int max) {
    int n = 0;
    for (const cJSON *c = rows && rows->child ? rows->child->child : NULL; c && n < max; c = c->next) {
        size_t l = strlen(c->string);
        if (l < 4 || strcmp(c->string + l - 3, "_ms")) continue;
        snprintf(cols[n], 32, "%s", c->string);
        int bl = (int)(l - 3);
        if (!strncmp(c->string, "cuda", 4) && bl == 4) snprintf(names[n], 48, "own (cuda)");
        else if (!strncmp(c->string, "cudnn", 5) && bl == 5) snprintf(names[n], 48, "cuDNN");
        else snprintf(names[n], 48, "%.*s", bl, c->string);
        n++;
    }
    return n;
}

static const cJSON *find_predict(doc *d, int nd, const char *network, const char *prec) {
    for (int k = 0; k < nd; k++)
        if (!strcmp(runs_verb(d[k].j), "predict") && !strcmp(runs_str(d[k].j, "network"), network) &&
            !strcmp(runs_str(d[k].j, "precision"), prec))
            return table_of(d[k].j, "layers");
    return NULL;
}

static double row_num_by(const cJSON *rows, const char *keycol, const char *key, const char *col) {
    for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next)
        if (!strcmp(runs_str(r, keycol), key)) return runs_num(r, col);
    return NAN;
}

enum { MAX_SER = 8, MAX_ROWS = 512 };

static int layer_bars(cb_sbuf *b, doc *d, int nd) {
    int charts = 0;
    for (int k = 0; k < nd; k++) {
        const cJSON *j = d[k].j;
        if (strcmp(runs_verb(j), "profile")) continue;
        for (int ph = 0; ph < 3; ph++) {
            const cJSON *rows = table_of(j, PHASE_TABLES[ph]);
            if (!cJSON_IsArray(rows)) continue;
            char cols[MAX_SER][32], names[MAX_SER][48];
            int ns = backend_cols(rows, cols, names, MAX_SER - 1);
            const cJSON *pred = find_predict(d, nd, runs_str(j, "network"), runs_str(j, "precision"));
            if (pred) snprintf(names[ns], 48, "predicted"), snprintf(cols[ns++], 32, "%s", PREDICT_COLS[ph]);
            static const char *cats[MAX_ROWS];
            static double v[MAX_SER * MAX_ROWS];
            int nc = 0;
            for (const cJSON *r = rows->child; r && nc < MAX_ROWS; r = r->next) {
                const char *layer = runs_str(r, "layer");
                bool any = false;
                for (int s = 0; s < ns; s++) {
                    bool p = pred && s == ns - 1;
                    double x = p ? row_num_by(pred, "layer", layer, cols[s]) : runs_num(r, cols[s]);
                    v[s * MAX_ROWS + nc] = x > 0 ? x : NAN;
                    any |= x > 0 && !p;
                }
                if (!any || !strcasecmp(layer, "sum") || !strcasecmp(layer, "total")) continue;
                cats[nc++] = layer;
            }
            if (!nc) continue;
            static double packed[MAX_SER * MAX_ROWS];
            for (int s = 0; s < ns; s++)
                for (int c = 0; c < nc; c++) packed[s * nc + c] = v[s * MAX_ROWS + c];
            const char *np[MAX_SER];
            for (int s = 0; s < ns; s++) np[s] = names[s];
            char title[256], sn[64];
            snprintf(title, sizeof title, "%s, batch %g, %s %s: ms per layer", short_net(j, sn, sizeof sn),
                     runs_num(j, "batch"), runs_str(j, "precision"), PHASE_TABLES[ph]);
            svg_bars(b, title, "ms", nc, cats, ns, np, packed, NAN);
            charts++;
        }
    }
    for (int k = 0; k < nd; k++) { // L1-L5: the total of the three directions per backend
        const cJSON *j = d[k].j, *rows = table_of(j, "layers");
        if (strcmp(runs_verb(j), "layers") || !cJSON_IsArray(rows)) continue;
        const char *layers[16], *backends[MAX_SER];
        int nl = 0, nb = 0;
        for (const cJSON *r = rows->child; r; r = r->next) {
            const char *l = runs_str(r, "layer"), *be = runs_str(r, "backend");
            int i = 0;
            while (i < nl && strcmp(layers[i], l)) i++;
            if (i == nl && nl < 16) layers[nl++] = l;
            for (i = 0; i < nb && strcmp(backends[i], be); i++) {}
            if (i == nb && nb < MAX_SER) backends[nb++] = be;
        }
        double v[MAX_SER * 16];
        for (int s = 0; s < nb; s++)
            for (int c = 0; c < nl; c++) {
                v[s * nl + c] = NAN;
                for (const cJSON *r = rows->child; r; r = r->next)
                    if (!strcmp(runs_str(r, "layer"), layers[c]) && !strcmp(runs_str(r, "backend"), backends[s]))
                        v[s * nl + c] = runs_num(r, "total_ms");
            }
        char title[256];
        snprintf(title, sizeof title, "convnet-benchmarks L1-L5, batch %g, %s: forward + backward", runs_num(j, "batch"),
                 runs_str(j, "precision"));
        svg_bars(b, title, "ms", nl, layers, nb, backends, v, NAN);
        charts++;
    }
    return charts;
}

static int roofline(cb_sbuf *b, doc *d, int nd, const char *device) {
    cb_devdb db;
    cb_error err = {0};
    if (cb_devdb_load(NULL, &db, &err) != CB_OK) return 0;
    int charts = 0;
    for (int k = 0; k < nd; k++) {
        const cJSON *j = d[k].j, *rows = table_of(j, "forward");
        if (strcmp(runs_verb(j), "profile") || !cJSON_IsArray(rows)) continue;
        const cb_device *dev = device ? cb_devdb_device(&db, device) : model_cli_gpu_entry(&db, runs_str(j, "gpu"));
        char spec[64];
        builtin_of(runs_str(j, "network"), spec, sizeof spec);
        cb_net *net = spec[0] ? cb_net_load(spec, &err) : NULL;
        if (!dev || !net || cb_net_set_batch(net, (int64_t)runs_num(j, "batch"), &err) != CB_OK) {
            cb_net_free(net);
            continue;
        }
        cb_precision prec = CB_PREC_FP32;
        cb_precision_parse(runs_str(j, "precision"), &prec);
        char cols[MAX_SER][32], names[MAX_SER][48];
        int ns = backend_cols(rows, cols, names, MAX_SER - 2);
        static double xs[MAX_SER][MAX_ROWS], ys[MAX_SER][MAX_ROWS];
        svg_series s[MAX_SER];
        for (int q = 0; q < ns; q++) {
            int n = 0;
            for (const cJSON *r = rows->child; r && n < MAX_ROWS; r = r->next) {
                int i = cb_net_find(net, runs_str(r, "layer"));
                double ms = runs_num(r, cols[q]);
                if (i < 0 || !(ms > 0)) continue;
                cb_cost c;
                cb_layer_cost(net, i, &c);
                if (!(c.fwd_flops > 0 && c.fwd_bytes > 0)) continue;
                xs[q][n] = c.fwd_flops / c.fwd_bytes;
                ys[q][n++] = c.fwd_flops / (ms / 1e3) / 1e12;
            }
            s[q] = (svg_series){names[q], n, xs[q], ys[q], true, false};
        }
        // the roof: min(peak, bandwidth x intensity), on a log grid from 0.1 to 10^4 FLOP/byte
        static double rx[64], ry[64];
        double peak = dev->peak[prec] > 0 ? dev->peak[prec] : dev->peak[CB_PREC_FP32];
        for (int i = 0; i < 64; i++) rx[i] = pow(10, -1 + 5.0 * i / 63), ry[i] = fmin(peak, dev->mem_bw * rx[i]) / 1e12;
        char roof[96];
        snprintf(roof, sizeof roof, "%s roof: %.0f TFLOP/s, %.2f TB/s", dev->name, peak / 1e12, dev->mem_bw / 1e12);
        s[ns] = (svg_series){roof, 64, rx, ry, false, true};
        char title[256];
        snprintf(title, sizeof title, "Roofline: %s, batch %g, %s forward, every layer", spec, runs_num(j, "batch"),
                 runs_str(j, "precision"));
        svg_xy(b, title, "arithmetic intensity (FLOP per byte moved at least)", "TFLOP/s", true, true, ns + 1, s);
        charts++;
        cb_net_free(net);
    }
    cb_devdb_free(&db);
    return charts;
}

// the peer's whole-network results: JSON lines ({"net", "mode", "layout", "total"}), others skipped
static cJSON *load_peer(const char *path, int *rc) {
    cb_error err = {0};
    char *text = cb_read_text(path, &err);
    if (!text) {
        *rc = cli_fail(&cmd_report, &err);
        return NULL;
    }
    cJSON *all = cJSON_CreateArray();
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = line[0] == '{' ? cJSON_Parse(line) : NULL;
        if (o && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "total"))) cJSON_AddItemToArray(all, o);
        else cJSON_Delete(o);
    }
    free(text);
    return all;
}

static int whole_networks(cb_sbuf *b, doc *d, int nd, const cJSON *peer) {
    // PyTorch's names for the built-in networks (bench/peer_pytorch.py)
    static const char *const PEER_NET[][2] = {{"alexnet", "alexnet"}, {"overfeat-fast", "overfeat"}, {"vgg-a", "vgg_a"},
                                              {"googlenet", "googlenet"}, {"vgg16", "vgg16"}, {"resnet50", "resnet50"}};
    static char labels[MAX_ROWS][96];
    static const char *cats[MAX_ROWS];
    static double ms[2 * MAX_ROWS], ratio[MAX_ROWS];
    int n = 0, with_peer = 0;
    for (int k = 0; k < nd && n < MAX_ROWS; k++) {
        const cJSON *j = d[k].j, *rows = table_of(j, "fullpass");
        if (strcmp(runs_verb(j), "fullpass") || !cJSON_IsArray(rows)) continue;
        char spec[64], layout[8];
        builtin_of(runs_str(j, "network"), spec, sizeof spec);
        snprintf(layout, sizeof layout, "%s", *runs_str(j, "layout") ? runs_str(j, "layout") : "nchw");
        for (char *c = layout; *c; c++) *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
        double total = NAN;
        for (const cJSON *r = rows->child; r; r = r->next)
            if (!strcmp(runs_str(r, "phase"), "total")) total = runs_num(r, "median_ms");
        snprintf(labels[n], sizeof labels[n], "%s b%g %s %s %s", spec[0] ? spec : runs_str(j, "network"), runs_num(j, "batch"),
                 runs_str(j, "backend"), runs_str(j, "precision"), layout);
        cats[n] = labels[n];
        ms[n] = total;
        ms[MAX_ROWS + n] = ratio[n] = NAN;
        const char *pn = NULL;
        for (size_t i = 0; i < sizeof PEER_NET / sizeof PEER_NET[0]; i++)
            if (!strcmp(spec, PEER_NET[i][0])) pn = PEER_NET[i][1];
        for (const cJSON *p = peer ? peer->child : NULL; p && pn; p = p->next)
            if (!strcmp(runs_str(p, "net"), pn) && !strcmp(runs_str(p, "mode"), runs_str(j, "precision")) &&
                !strcasecmp(runs_str(p, "layout"), layout) && runs_num(p, "batch") == runs_num(j, "batch")) {
                ms[MAX_ROWS + n] = runs_num(p, "total");
                ratio[n] = total / ms[MAX_ROWS + n];
                with_peer++;
            }
        n++;
    }
    if (!n) return 0;
    double packed[2 * MAX_ROWS];
    for (int i = 0; i < n; i++) packed[i] = ms[i], packed[n + i] = ms[MAX_ROWS + i];
    const char *names[] = {"convbench", "peer (PyTorch)"};
    svg_bars(b, "Whole networks: median ms per training step", "ms", n, cats, with_peer ? 2 : 1, names, packed, NAN);
    if (!with_peer) return 1;
    const char *rn[] = {"convbench / peer"};
    svg_bars(b, "Whole networks: time ratio to the peer (below 1: convbench faster)", "ratio", n, cats, 1, rn, ratio, 1.0);
    return 2;
}

static int scaling(cb_sbuf *b, doc *d, int nd) {
    static double xs[MAX_SER][64], ys[MAX_SER][64], ideal[64];
    static char names[MAX_SER][128];
    svg_series s[MAX_SER + 1];
    int ns = 0, maxw = 1;
    for (int k = 0; k < nd && ns < MAX_SER; k++) {
        const cJSON *j = d[k].j, *rows = table_of(j, "scaling");
        if (strcmp(runs_verb(j), "simulate") || !cJSON_IsArray(rows)) continue;
        int n = 0;
        for (const cJSON *r = rows->child; r && n < 64; r = r->next, n++) {
            xs[ns][n] = runs_num(r, "workers"), ys[ns][n] = runs_num(r, "speedup");
            if (xs[ns][n] > maxw) maxw = (int)xs[ns][n];
        }
        char sn[64];
        snprintf(names[ns], sizeof names[ns], "%s on %s, %s, %s scaling", short_net(j, sn, sizeof sn), runs_str(j, "device"),
                 runs_str(j, "interconnect"), runs_str(j, "scaling"));
        s[ns] = (svg_series){names[ns], n, xs[ns], ys[ns], false, false};
        ns++;
    }
    if (!ns) return 0;
    static double ix[64];
    int ni = 0;
    for (int w = 1; w <= maxw && ni < 64; w *= 2) ix[ni] = w, ideal[ni++] = w;
    s[ns++] = (svg_series){"ideal (linear)", ni, ix, ideal, false, true};
    svg_xy(b, "Simulated scaling: speed-up against workers", "workers", "speed-up", true, true, ns, s);
    return 1;
}

static int train_curves(cb_sbuf *b, doc *d, int nd) {
    static double xs[MAX_SER][1024], loss[MAX_SER][1024], acc[MAX_SER][1024];
    static char names[MAX_SER][128];
    svg_series sl[MAX_SER], sa[MAX_SER];
    int ns = 0;
    for (int k = 0; k < nd && ns < MAX_SER; k++) {
        const cJSON *j = d[k].j, *rows = table_of(j, "epochs");
        if (strcmp(runs_verb(j), "train") || !cJSON_IsArray(rows)) continue;
        int n = 0;
        for (const cJSON *r = rows->child; r && n < 1024; r = r->next, n++)
            xs[ns][n] = runs_num(r, "epoch"), loss[ns][n] = runs_num(r, "loss"), acc[ns][n] = runs_num(r, "test_acc");
        char sn[64];
        snprintf(names[ns], sizeof names[ns], "%s, %s, batch %g", short_net(j, sn, sizeof sn), runs_str(j, "backend"), runs_num(j, "batch"));
        sl[ns] = (svg_series){names[ns], n, xs[ns], loss[ns], false, false};
        sa[ns] = (svg_series){names[ns], n, xs[ns], acc[ns], false, false};
        ns++;
    }
    if (!ns) return 0;
    svg_xy(b, "Training loss per epoch", "epoch", "mean cross-entropy", false, false, ns, sl);
    svg_xy(b, "Test accuracy per epoch", "epoch", "accuracy", false, false, ns, sa);
    return 2;
}

static int infer_op_time(cb_sbuf *b, doc *d, int nd) {
    static double xs[MAX_SER][32], ys[MAX_SER][32];
    static char names[MAX_SER][128];
    svg_series s[MAX_SER];
    int ns = 0;
    for (int k = 0; k < nd && ns < MAX_SER; k++) {
        const cJSON *j = d[k].j, *bs = table_of(j, "batch sizes"), *conv = table_of(j, "conv layers");
        if (strcmp(runs_verb(j), "infer") || !cJSON_IsArray(bs) || !cJSON_IsArray(conv)) continue;
        int n = 0;
        for (const cJSON *r = bs->child; r && n < 32; r = r->next, n++) {
            double batch = runs_num(r, "batch"), op = 0;
            for (const cJSON *c = conv->child; c; c = c->next)
                if (runs_num(c, "batch") == batch) op += runs_num(c, "op_ms");
            xs[ns][n] = batch, ys[ns][n] = op;
        }
        const char *algo = runs_str(conv->child, "algo");
        snprintf(names[ns], sizeof names[ns], "%s %s%s%s", runs_str(j, "backend"), runs_str(j, "precision"),
                 *algo ? ", " : "", algo);
        s[ns] = (svg_series){names[ns], n, xs[ns], ys[ns], false, false};
        ns++;
    }
    if (!ns) return 0;
    svg_xy(b, "Inference: Op Time (the convolutions' kernels) against batch", "batch", "Op Time, ms", true, true, ns, s);
    return 1;
}

static int run(int argc, char **argv) {
    cli_out o = {0};
    const char *peer_path = NULL, *title = "convbench report", *device = NULL;
    const cli_opt opts[] = {
        {"--peer", CLI_STR, &peer_path, "FILE", "the peer's whole-network results (bench/peer_pytorch.py's JSON lines)"},
        {"--device", CLI_STR, &device, "NAME", "the roofline's device (default: the run's GPU in the database)"},
        {"--title", CLI_STR, &title, "T", "the page's title"},
        {"--output", CLI_STR, &o.output, "FILE", "write the page to FILE (whole or not at all; default stdout)"},
        {"--db", CLI_STR, &o.db, "FILE", "read the runs (ids: 12, or -1 for the newest) from this database"},
        {"--quiet", CLI_FLAG, &o.quiet, NULL, "no progress on stderr"},
        {0},
    };
    static const char *pos[MAX_DOCS];
    int rc = cli_parse(&cmd_report, opts, argc, argv, pos, 1, MAX_DOCS);
    if (rc >= 0) return rc;
    static doc d[MAX_DOCS];
    int nd = 0;
    cJSON *peer = NULL;
    for (; nd < MAX_DOCS && pos[nd]; nd++) {
        if (!(d[nd].j = runs_load(&cmd_report, o.db, pos[nd], &rc))) goto out;
        runs_label(d[nd].j, pos[nd], o.db != NULL, d[nd].label, sizeof d[nd].label);
    }
    if (peer_path && !(peer = load_peer(peer_path, &rc))) goto out;
    cb_sbuf b = {0};
    cb_sbuf_add(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
    svg_text(&b, title);
    cb_sbuf_add(&b, "</title>\n<style>body{font-family:sans-serif;margin:24px;max-width:960px}svg{display:block;margin:8px 0 24px}"
                    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
                    "</style></head><body>\n<h1>");
    svg_text(&b, title);
    cb_sbuf_add(&b, "</h1>\n<table><tr><th>input</th><th>command</th><th>network</th><th>backend</th><th>precision</th><th>gpu</th></tr>\n");
    for (int k = 0; k < nd; k++) {
        const char *cells[] = {d[k].label, runs_verb(d[k].j), runs_str(d[k].j, "network"), runs_str(d[k].j, "backend"),
                               runs_str(d[k].j, "precision"), runs_str(d[k].j, "gpu")};
        cb_sbuf_add(&b, "<tr>");
        for (int c = 0; c < 6; c++) {
            cb_sbuf_add(&b, "<td>");
            svg_text(&b, cells[c]);
            cb_sbuf_add(&b, "</td>");
        }
        cb_sbuf_add(&b, "</tr>\n");
    }
    cb_sbuf_add(&b, "</table>\n");
    if (peer_path) {
        char line[4200];
        snprintf(line, sizeof line, "peer: %s (%d results)", peer_path, cJSON_GetArraySize(peer));
        para(&b, line);
    }
    struct { const char *h; int n; } sec[6];
    cb_sbuf s1 = {0}, s2 = {0}, s3 = {0}, s4 = {0}, s5 = {0}, s6 = {0};
    sec[0].h = "Per-layer times (profile, layers; predicted from predict results of the same network)";
    sec[0].n = layer_bars(&s1, d, nd);
    sec[1].h = "Roofline: every layer's forward pass";
    sec[1].n = roofline(&s2, d, nd, device);
    sec[2].h = "Whole networks (fullpass)";
    sec[2].n = whole_networks(&s3, d, nd, peer);
    sec[3].h = "Distributed training (simulate)";
    sec[3].n = scaling(&s4, d, nd);
    sec[4].h = "Training (train)";
    sec[4].n = train_curves(&s5, d, nd);
    sec[5].h = "Inference (infer)";
    sec[5].n = infer_op_time(&s6, d, nd);
    cb_sbuf *parts[] = {&s1, &s2, &s3, &s4, &s5, &s6};
    int charts = 0;
    for (int i = 0; i < 6; i++) {
        h2(&b, sec[i].h);
        if (sec[i].n) cb_sbuf_add(&b, "%s", parts[i]->p);
        else para(&b, "No input of this kind.");
        charts += sec[i].n;
        free(parts[i]->p);
    }
    cb_sbuf_add(&b, "<p style=\"color:#666;font-size:12px\">convbench %s, commit %s%s</p>\n</body></html>\n", cb_version(),
                cb_env_commit(), cb_env_dirty() ? " (dirty)" : "");
    cb_error err = {0};
    if (cb_write_file(o.output, b.p, b.n, &err) != CB_OK) rc = cli_fail(&cmd_report, &err);
    else {
        rc = 0;
        cli_progress(&o, "report: %d charts from %d inputs%s%s", charts, nd, o.output ? " in " : "", o.output ? o.output : "");
    }
    free(b.p);
out:
    for (int k = 0; k < nd; k++) cJSON_Delete(d[k].j);
    cJSON_Delete(peer);
    return rc;
}

const cli_cmd cmd_report = {"report", "one self-contained HTML page of charts (inline SVG) from result files or --db runs",
                            "RESULT.json ... [--db FILE] [--peer FILE] [--output page.html]", run};
