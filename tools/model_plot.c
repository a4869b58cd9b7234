// Predicted against measured per layer-direction as an SVG scatter on log-log axes: the diagonal,
// the +-10% and +-25% bands (the targets), one colour per direction.
#include "model_plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 640
#define H 600
#define L 70 // margins
#define R 20
#define T 40
#define B 60

static const char *const COLOUR[CB_PHASE_COUNT] = {"#1f77b4", "#d62728", "#2ca02c"};
static const char *const LABEL[CB_PHASE_COUNT] = {"forward", "backward data", "backward filter"};

static double px(double v, double lo, double hi) { return L + (log10(v) - lo) / (hi - lo) * (W - L - R); }
static double py(double v, double lo, double hi) { return H - B - (log10(v) - lo) / (hi - lo) * (H - T - B); }

// the line predicted = measured * fct across the plot area (clipped to it)
static void band(FILE *f, double fct, double lo, double hi, const char *style) {
    double a = pow(10, lo), b = pow(10, hi);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" clip-path=\"url(#area)\" %s/>\n", px(a, lo, hi),
            py(a * fct, lo, hi), px(b, lo, hi), py(b * fct, lo, hi), style);
}

int model_plot_svg(const char *path, const char *title, const model_point *p, int n) {
    double vmin = INFINITY, vmax = 0;
    for (int i = 0; i < n; i++)
        if (p[i].measured_ms > 0 && p[i].model_ms > 0) {
            vmin = fmin(vmin, fmin(p[i].measured_ms, p[i].model_ms));
            vmax = fmax(vmax, fmax(p[i].measured_ms, p[i].model_ms));
        }
    if (!(vmax > 0)) vmin = 0.001, vmax = 1;
    double lo = floor(log10(vmin)), hi = ceil(log10(vmax));
    if (hi <= lo) hi = lo + 1;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
    fprintf(f, "<defs><clipPath id=\"area\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath></defs>\n", L, T, W - L - R,
            H - T - B);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n<text x=\"%d\" y=\"24\" font-size=\"14\">", W, H, L);
    for (const char *c = title; *c; c++) // the title, XML-escaped
        fputs(*c == '<' ? "&lt;" : *c == '>' ? "&gt;" : *c == '&' ? "&amp;" : (char[]){*c, 0}, f);
    fprintf(f, "</text>\n");
    for (double e = lo; e <= hi + 1e-9; e++) { // decades
        double v = pow(10, e);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", px(v, lo, hi), T, px(v, lo, hi), H - B);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, py(v, lo, hi), W - R, py(v, lo, hi));
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", px(v, lo, hi), H - B + 16, v);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, py(v, lo, hi) + 4, v);
    }
    band(f, 1.25, lo, hi, "stroke=\"#bbb\" stroke-dasharray=\"2,3\"");
    band(f, 1 / 1.25, lo, hi, "stroke=\"#bbb\" stroke-dasharray=\"2,3\"");
    band(f, 1.10, lo, hi, "stroke=\"#999\" stroke-dasharray=\"5,3\"");
    band(f, 1 / 1.10, lo, hi, "stroke=\"#999\" stroke-dasharray=\"5,3\"");
    band(f, 1, lo, hi, "stroke=\"black\"");
    for (int i = 0; i < n; i++)
        if (p[i].measured_ms > 0 && p[i].model_ms > 0 && p[i].phase < CB_PHASE_COUNT)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\" fill-opacity=\"0.6\"/>\n", px(p[i].measured_ms, lo, hi),
                    py(p[i].model_ms, lo, hi), COLOUR[p[i].phase]);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">measured ms (log)</text>\n", (L + W - R) / 2, H - 20);
    fprintf(f, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">predicted ms (log)</text>\n", (T + H - B) / 2,
            (T + H - B) / 2);
    for (int k = 0; k < CB_PHASE_COUNT; k++)
        fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n", L + 14, T + 14 + 16 * k, COLOUR[k],
                L + 24, T + 18 + 16 * k, LABEL[k]);
    fprintf(f, "<text x=\"%d\" y=\"%d\">lines: equal, +-10%% (dashed), +-25%% (dotted)</text>\n", L + 14, T + 18 + 16 * CB_PHASE_COUNT);
    fprintf(f, "</svg>\n");
    bool ok = !ferror(f);
    if (fclose(f) != 0) ok = false;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}
