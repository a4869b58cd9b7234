// Timing statistics and clocks.
#ifndef CB_BENCH_STATS_H
#define CB_BENCH_STATS_H

#include "core/clock.h" // cb_now_ms

typedef struct cb_stats {
    double median, min, max, mean;
    double stddev;                // sample standard deviation (n - 1); 0 for n < 2
    double q1, q3;                // quartiles (linear interpolation between order statistics)
    double spread;                // (max - min) / median, as a fraction
    int n;
} cb_stats;

static inline double cb_stats_iqr(const cb_stats *s) { return s->q3 - s->q1; }
// The relative IQR when it means something: at least 4 samples and a median far above the clock's
// resolution (CB_STATS_MIN_MS), else a negative number (shown as an empty cell).
#define CB_STATS_MIN_MS 0.05
double cb_stats_rel_iqr(const cb_stats *s);

// sorts a copy; n may be 0 (all zero)
cb_stats cb_stats_of(const double *v, int n);

#endif
