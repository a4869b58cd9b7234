#include "bench/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// the q-quantile of sorted c[0..n) by linear interpolation (numpy's default)
static double quantile(const double *c, int n, double q) {
    double h = q * (n - 1);
    int lo = (int)floor(h);
    int hi = lo + 1 < n ? lo + 1 : lo;
    return c[lo] + (h - lo) * (c[hi] - c[lo]);
}

double cb_stats_rel_iqr(const cb_stats *s) {
    return s->n >= 4 && s->median >= CB_STATS_MIN_MS ? (s->q3 - s->q1) / s->median : -1;
}

cb_stats cb_stats_of(const double *v, int n) {
    cb_stats s = {0};
    if (n <= 0) return s;
    double buf[4096];
    double *c = n <= 4096 ? buf : malloc(sizeof(double) * (size_t)n);
    if (!c) return s;
    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), cmp_double);
    s.n = n;
    s.min = c[0];
    s.max = c[n - 1];
    s.median = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += c[i];
    s.mean = sum / n;
    s.spread = s.median > 0 ? (s.max - s.min) / s.median : 0;
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (c[i] - s.mean) * (c[i] - s.mean);
    s.stddev = n > 1 ? sqrt(ss / (n - 1)) : 0;
    s.q1 = quantile(c, n, 0.25);
    s.q3 = quantile(c, n, 0.75);
    if (c != buf) free(c);
    return s;
}

