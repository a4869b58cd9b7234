// Timing statistics and clocks.
#ifndef CB_BENCH_STATS_H
#define CB_BENCH_STATS_H

#include "core/clock.h" // cb_now_ms

typedef struct cb_stats {
    double median, min, max, mean, spread; // spread: (max - min) / median, as a fraction
    int n;
} cb_stats;

// sorts a copy; n may be 0 (all zero)
cb_stats cb_stats_of(const double *v, int n);

#endif
