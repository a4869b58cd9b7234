// SVG plot of predicted against measured times (predict --measure --plot, model-eval --plot).
#ifndef CB_TOOLS_MODEL_PLOT_H
#define CB_TOOLS_MODEL_PLOT_H

#include "convbench.h"

typedef struct model_point {
    double measured_ms, model_ms;
    cb_phase phase;
} model_point;

// Writes the scatter (log-log, the diagonal and the +-10% / +-25% bands) to path, whole or not at
// all. Returns 0, or -1 when the file cannot be written.
int model_plot_svg(const char *path, const char *title, const model_point *p, int n);

#endif
