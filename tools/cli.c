#include "cli.h"
#include "core/limits.h"
#include "core/net.h"
#include "bench/db.h"
#include "bench/stats.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double g_start_ms = -1; // the first cli_parse

static void print_help(const cli_cmd *cmd, const cli_opt *opts) {
    printf("usage: convbench %s %s\n\n%s\n\noptions:\n", cmd->name, cmd->usage, cmd->summary);
    for (const cli_opt *o = opts; o && o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        printf("  %-24s %s\n", left, o->help);
    }
    printf("  %-24s %s\n", "--help", "this text");
}

int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cb_msg_clean(msg); // an argument quoted back may hold a newline
    fprintf(stderr, "convbench %s: %s (see convbench %s --help)\n", cmd->name, msg, cmd->name);
    return 2;
}

int cli_parse(const cli_cmd *cmd, const cli_opt *opts, int argc, char **argv, const char **pos, int minpos, int maxpos) {
    int npos = 0;
    if (g_start_ms < 0) g_start_ms = cb_now_ms();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_help(cmd, opts);
            return 0;
        }
        if (a[0] != '-' || a[1] == 0 || (a[1] >= '0' && a[1] <= '9')) { // "-1": a negative number
            if (npos >= maxpos) return cli_usage_error(cmd, "unexpected argument '%s'", a);
            pos[npos++] = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const cli_opt *o = opts;
        for (; o && o->name; o++)
            if (strlen(o->name) == len && strncmp(o->name, a, len) == 0) break;
        if (!o || !o->name) return cli_usage_error(cmd, "unknown option '%.*s'", (int)len, a);
        if (o->kind == CLI_FLAG) {
            if (eq) return cli_usage_error(cmd, "%s takes no value", o->name);
            *(bool *)o->target = true;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) return cli_usage_error(cmd, "%s needs a value", o->name);
        char *end;
        errno = 0;
        switch (o->kind) {
        case CLI_STR:
            *(const char **)o->target = v;
            break;
        case CLI_INT: {
            long x = strtol(v, &end, 10);
            if (!*v || *end) return cli_usage_error(cmd, "%s: '%s' is not an integer", o->name, v);
            if (errno == ERANGE || x == CLI_UNSET) return cli_usage_error(cmd, "%s: %s is out of range", o->name, v);
            *(long *)o->target = x;
            break;
        }
        case CLI_FLOAT: {
            double x = strtod(v, &end);
            if (!*v || *end) return cli_usage_error(cmd, "%s: '%s' is not a number", o->name, v);
            if (errno == ERANGE || !isfinite(x)) return cli_usage_error(cmd, "%s: %s is out of range", o->name, v);
            *(double *)o->target = x;
            break;
        }
        case CLI_LIST: {
            cli_list *l = o->target;
            if (l->n == CLI_LIST_MAX) return cli_usage_error(cmd, "%s: at most %d times", o->name, CLI_LIST_MAX);
            l->v[l->n++] = v;
            break;
        }
        default:
            break;
        }
    }
    if (npos < minpos) return cli_usage_error(cmd, "missing argument: %s", cmd->usage);
    return -1;
}

int cli_status_exit(cb_status st) { return st == CB_STATUS_NOMEM || st == CB_STATUS_DEVICE ? 3 : st == CB_OK ? 0 : 2; }

int cli_fail(const cli_cmd *cmd, const cb_error *err) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    cb_msg_clean(msg);
    fprintf(stderr, "convbench %s: %s\n", cmd->name, msg);
    return cli_status_exit(err->status);
}

int cli_out_check(const cli_cmd *cmd, const cli_out *o, cb_format *fmt) {
    *fmt = CB_FORMAT_TABLE;
    if (o->format && !cb_format_parse(o->format, fmt))
        return cli_usage_error(cmd, "--format: '%s' is not one of table, csv, json, md", o->format);
    return -1;
}

int cli_emit(const cli_cmd *cmd, cb_report *r, const cli_out *o, cb_format fmt) {
    cb_error err = {0};
    if (fmt == CB_FORMAT_JSON || fmt == CB_FORMAT_CSV || o->db) cb_env_add(r); // the environment travels with every result file
    cb_status st = cb_report_write(r, fmt, o->output, &err);
    if (st != CB_OK) return cli_fail(cmd, &err);
    if (o->db) {
        char *json = cb_report_json(r);
        int64_t id = 0;
        st = cb_db_append(o->db, json, &id, &err);
        free(json);
        if (st != CB_OK) return cli_fail(cmd, &err);
        cli_progress(o, "%s: run %lld appended to %s", cmd->name, (long long)id, o->db);
    }
    return 0;
}

cb_net *cli_load_net(const cli_cmd *cmd, const char *spec, long batch, int *exit_status) {
    cb_error err = {0};
    cb_net *net = cb_net_load(spec, &err);
    if (!net) {
        *exit_status = cli_fail(cmd, &err);
        return NULL;
    }
    if (batch != CLI_UNSET) {
        if (batch < 1 || batch > CB_MAX_BATCH) {
            *exit_status = cli_usage_error(cmd, "--batch: %ld must be in [1, %d]", batch, CB_MAX_BATCH);
            cb_net_free(net);
            return NULL;
        }
        if (cb_net_set_batch(net, batch, &err) != CB_OK) {
            *exit_status = cli_fail(cmd, &err);
            cb_net_free(net);
            return NULL;
        }
    }
    return net;
}

static void progress_line(const cli_out *o, const char *tail, const char *fmt, va_list ap) {
    if (o->quiet) return;
    fprintf(stderr, "[%7.1f s] ", (cb_now_ms() - g_start_ms) / 1e3);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "%s\n", tail);
}

void cli_progress(const cli_out *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    progress_line(o, "", fmt, ap);
    va_end(ap);
}

void cli_progress_eta(const cli_out *o, double since_ms, double done, double total, const char *fmt, ...) {
    static double last_ms = -1e9; // a line a second at most, and the first and last ones
    double now = cb_now_ms();
    if (now - last_ms < 1e3 && done > 1 && done < total) return;
    last_ms = now;
    char tail[64] = "";
    double spent = (now - since_ms) / 1e3;
    if (done > 0 && total > done) {
        double eta = spent / done * (total - done);
        if (eta < 120) snprintf(tail, sizeof tail, ", ETA %.0f s", eta);
        else snprintf(tail, sizeof tail, ", ETA %.0f min %02.0f s", floor(eta / 60), fmod(eta, 60));
    }
    va_list ap;
    va_start(ap, fmt);
    progress_line(o, tail, fmt, ap);
    va_end(ap);
}


void cli_shape_str(cb_shape s, char *buf, size_t n) {
    if (s.rank == 4) snprintf(buf, n, "[%lld, %lld, %lld, %lld]", (long long)s.n, (long long)s.h, (long long)s.w, (long long)s.c);
    else snprintf(buf, n, "[%lld, %lld]", (long long)s.n, (long long)s.c);
}
