// Charts as inline SVG for convbench report: grouped bars and x-y plots (lines or points, linear
// or logarithmic axes), drawn with nothing but text: the page needs no script and no network.
#ifndef CB_TOOLS_SVG_H
#define CB_TOOLS_SVG_H

#include "bench/report.h"

#include <stdbool.h>

// Bars: ncat categories (x labels), nser series side by side in each; v[s * ncat + c], NAN =
// missing. ref: a dashed horizontal line at that value (NAN: none).
void svg_bars(cb_sbuf *b, const char *title, const char *ylabel, int ncat, const char *const *cats, int nser,
              const char *const *names, const double *v, double ref);

typedef struct svg_series {
    const char *name;
    int n;
    const double *x, *y;
    bool points;                  // markers only (else a line with markers)
    bool dashed;                  // a reference line (roofs, the ideal), drawn in grey
} svg_series;

void svg_xy(cb_sbuf *b, const char *title, const char *xlabel, const char *ylabel, bool logx, bool logy, int nser,
            const svg_series *s);

void svg_text(cb_sbuf *b, const char *s); // s with &, <, > and " escaped

#endif
