#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { W = 920, H = 420, ML = 80, MR = 230, MT = 34, MB = 130 };
static const char *const COLORS[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
#define NCOLORS ((int)(sizeof COLORS / sizeof COLORS[0]))

void svg_text(cb_sbuf *b, const char *s) {
    for (; *s; s++) {
        if (*s == '&') cb_sbuf_add(b, "&amp;");
        else if (*s == '<') cb_sbuf_add(b, "&lt;");
        else if (*s == '>') cb_sbuf_add(b, "&gt;");
        else if (*s == '"') cb_sbuf_add(b, "&quot;");
        else cb_sbuf_add(b, "%c", *s);
    }
}

static void fmt_tick(double v, char *out, size_t n) {
    double a = fabs(v);
    if (a == 0) snprintf(out, n, "0");
    else if (a >= 1e6 || a < 1e-3) snprintf(out, n, "%.0e", v);
    else snprintf(out, n, "%g", v);
}

typedef struct axis {
    double lo, hi;                // data range (log10 of it for a log axis)
    bool log;
    int p0, p1;                   // pixels of lo and hi
} axis;

static double px(const axis *a, double v) {
    double t = a->log ? log10(v) : v;
    return a->p0 + (t - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

// ticks: 1-2-5 steps on a linear axis, decades on a log one
static int ticks(const axis *a, double *t, int max) {
    int n = 0;
    if (a->log) {
        for (double e = floor(a->lo); e <= ceil(a->hi) && n < max; e++)
            if (e >= a->lo - 1e-9 && e <= a->hi + 1e-9) t[n++] = pow(10, e);
        return n;
    }
    double span = a->hi - a->lo, step = pow(10, floor(log10(span / 5)));
    if (span / step > 10) step *= 2;
    if (span / step > 10) step *= 2.5;
    for (double v = ceil(a->lo / step) * step; v <= a->hi + 1e-9 * span && n < max; v += step) t[n++] = fabs(v) < 1e-12 * span ? 0 : v;
    return n;
}

static void range(axis *a, double lo, double hi, bool log, bool from_zero) {
    a->log = log;
    if (!(lo <= hi)) lo = 0, hi = 1;
    if (log) {
        if (lo <= 0) lo = hi > 0 ? hi / 1e3 : 1;
        if (hi <= 0) hi = 1;
        a->lo = log10(lo), a->hi = log10(hi);
        if (a->hi - a->lo >= 1) a->lo -= 0.06, a->hi += 0.06; // a point on a decade stays inside the frame
        else a->lo = floor(a->lo), a->hi = ceil(a->hi);     // at least one decade, with its ticks
        if (a->hi <= a->lo) a->hi = a->lo + 1;
        return;
    }
    if (from_zero && lo > 0) lo = 0;
    if (hi == lo) hi = lo + 1;
    double pad = (hi - lo) * 0.05;
    a->lo = lo < 0 || !from_zero ? lo - pad : lo;
    a->hi = hi + pad;
}

static void frame(cb_sbuf *b, const char *title, const char *xlabel, const char *ylabel) {
    cb_sbuf_add(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n", W, H, W, H);
    cb_sbuf_add(b, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n<text x=\"%d\" y=\"20\" font-size=\"15\" font-weight=\"bold\">", W, H, ML);
    svg_text(b, title);
    cb_sbuf_add(b, "</text>\n<text x=\"16\" y=\"%d\" font-size=\"12\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">", (MT + H - MB) / 2, (MT + H - MB) / 2);
    svg_text(b, ylabel);
    cb_sbuf_add(b, "</text>\n");
    if (xlabel) {
        cb_sbuf_add(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">", (ML + W - MR) / 2, H - MB + 40);
        svg_text(b, xlabel);
        cb_sbuf_add(b, "</text>\n");
    }
}

static void y_axis(cb_sbuf *b, const axis *y) {
    double t[32];
    int n = ticks(y, t, 32);
    for (int i = 0; i < n; i++) {
        char lab[32];
        fmt_tick(t[i], lab, sizeof lab);
        double p = px(y, t[i]);
        cb_sbuf_add(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
                    ML, W - MR, p, p, ML - 6, p + 4, lab);
    }
    cb_sbuf_add(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/><line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n",
                ML, ML, MT, H - MB, ML, W - MR, H - MB, H - MB);
}

// a legend entry; a long name goes on as many lines as it needs (36 characters each)
static int legend(cb_sbuf *b, int y, const char *name, const char *color, bool dashed) {
    cb_sbuf_add(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%d\"%s/>", W - MR + 12, W - MR + 30,
                y, y, color, dashed ? 1 : 6, dashed ? " stroke-dasharray=\"5 3\"" : "");
    for (const char *p = name; *p; y += 13) {
        int len = (int)strlen(p);
        if (len > 36) {
            len = 36;
            while (len > 0 && p[len] != ' ') len--;
            if (len == 0) len = 36;
        }
        char line[40];
        snprintf(line, sizeof line, "%.*s", len, p);
        cb_sbuf_add(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\">", W - MR + 36, y + 4);
        svg_text(b, line);
        cb_sbuf_add(b, "</text>");
        p += len;
        while (*p == ' ') p++;
    }
    cb_sbuf_add(b, "\n");
    return y + 6;
}

void svg_bars(cb_sbuf *b, const char *title, const char *ylabel, int ncat, const char *const *cats, int nser,
              const char *const *names, const double *v, double ref) {
    double hi = isnan(ref) ? 0 : ref;
    for (int i = 0; i < ncat * nser; i++)
        if (v[i] > hi) hi = v[i];
    axis y = {.p0 = H - MB, .p1 = MT};
    range(&y, 0, hi, false, true);
    frame(b, title, NULL, ylabel);
    y_axis(b, &y);
    double slot = (double)(W - MR - ML) / (ncat ? ncat : 1), bw = slot * 0.8 / (nser ? nser : 1);
    for (int c = 0; c < ncat; c++) {
        double x0 = ML + c * slot + slot * 0.1;
        for (int s = 0; s < nser; s++) {
            double val = v[s * ncat + c];
            if (isnan(val)) continue;
            double top = px(&y, val);
            cb_sbuf_add(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", x0 + s * bw, top,
                        bw * 0.95, (H - MB) - top, COLORS[s % NCOLORS]);
            svg_text(b, cats[c]);
            cb_sbuf_add(b, " ");
            svg_text(b, names[s]);
            cb_sbuf_add(b, ": %.4g</title></rect>\n", val);
        }
        double lx = ML + (c + 0.5) * slot;
        cb_sbuf_add(b, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" transform=\"rotate(35 %.1f %d)\">", lx - 4, H - MB + 12, lx - 4, H - MB + 12);
        svg_text(b, cats[c]);
        cb_sbuf_add(b, "</text>\n");
    }
    if (!isnan(ref))
        cb_sbuf_add(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-dasharray=\"6 4\"/>\n", ML, W - MR,
                    px(&y, ref), px(&y, ref));
    for (int s = 0, ly = MT + 8; s < nser; s++) ly = legend(b, ly, names[s], COLORS[s % NCOLORS], false);
    cb_sbuf_add(b, "</svg>\n");
}

void svg_xy(cb_sbuf *b, const char *title, const char *xlabel, const char *ylabel, bool logx, bool logy, int nser,
            const svg_series *s) {
    double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY;
    for (int k = 0; k < nser; k++)
        for (int i = 0; i < s[k].n; i++) {
            if (!isfinite(s[k].x[i]) || !isfinite(s[k].y[i]) || (logx && s[k].x[i] <= 0) || (logy && s[k].y[i] <= 0)) continue;
            if (s[k].dashed) continue; // reference lines do not set the range
            xl = fmin(xl, s[k].x[i]), xh = fmax(xh, s[k].x[i]), yl = fmin(yl, s[k].y[i]), yh = fmax(yh, s[k].y[i]);
        }
    for (int k = 0; k < nser; k++) // a roof above the points still shows
        for (int i = 0; i < s[k].n && s[k].dashed; i++)
            if (isfinite(s[k].y[i]) && s[k].y[i] > yh && s[k].y[i] < 20 * yh) yh = s[k].y[i];
    axis x = {.p0 = ML, .p1 = W - MR}, y = {.p0 = H - MB, .p1 = MT};
    range(&x, xl, xh, logx, false);
    range(&y, yl, yh, logy, !logy);
    frame(b, title, xlabel, ylabel);
    y_axis(b, &y);
    double t[32];
    int nt = ticks(&x, t, 32);
    for (int i = 0; i < nt; i++) {
        char lab[32];
        fmt_tick(t[i], lab, sizeof lab);
        cb_sbuf_add(b, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n", px(&x, t[i]), H - MB + 16, lab);
    }
    static int clip_id; // one id per chart in the page
    clip_id++;
    cb_sbuf_add(b, "<clipPath id=\"plot%d\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath><g clip-path=\"url(#plot%d)\">\n",
                clip_id, ML, MT, W - MR - ML, H - MB - MT, clip_id);
    int color = 0;
    for (int k = 0; k < nser; k++) {
        const char *col = s[k].dashed ? "#888" : COLORS[color++ % NCOLORS];
        if (!s[k].points) {
            cb_sbuf_add(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%d\"%s points=\"", col, s[k].dashed ? 1 : 2,
                        s[k].dashed ? " stroke-dasharray=\"5 3\"" : "");
            for (int i = 0; i < s[k].n; i++)
                if (isfinite(s[k].y[i]) && (!logx || s[k].x[i] > 0) && (!logy || s[k].y[i] > 0))
                    cb_sbuf_add(b, "%.1f,%.1f ", px(&x, s[k].x[i]), px(&y, s[k].y[i]));
            cb_sbuf_add(b, "\"/>\n");
        }
        for (int i = 0; i < s[k].n && !s[k].dashed; i++) {
            if (!isfinite(s[k].y[i]) || (logx && s[k].x[i] <= 0) || (logy && s[k].y[i] <= 0)) continue;
            cb_sbuf_add(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"><title>", px(&x, s[k].x[i]), px(&y, s[k].y[i]),
                        s[k].points ? 4 : 3, col);
            svg_text(b, s[k].name);
            cb_sbuf_add(b, ": (%.4g, %.4g)</title></circle>\n", s[k].x[i], s[k].y[i]);
        }
    }
    cb_sbuf_add(b, "</g>\n");
    color = 0;
    for (int k = 0, ly = MT + 8; k < nser; k++) ly = legend(b, ly, s[k].name, s[k].dashed ? "#888" : COLORS[color++ % NCOLORS], s[k].dashed);
    cb_sbuf_add(b, "</svg>\n");
}
