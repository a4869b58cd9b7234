// Choices as data (include/convbench.h cb_choice) and their one printer.
#include "core/backend.h"

#include <stdio.h>

void cb_choice_format(const cb_choice *c, const cb_net *net, char *buf, size_t n) {
    if (!n) return;
    buf[0] = 0;
    if (c->impl == CB_IMPL_NONE) return;
    if (c->flags & CB_CHOICE_IN_FUSED) {
        snprintf(buf, n, "in %s", net && c->fused_with >= 0 && c->fused_with < net->nlayers ? net->layers[c->fused_with].name : "?");
        return;
    }
    // own kernels where a library was the first call: say so
    bool own_beside = c->impl == CB_IMPL_OWN &&
                      (c->flags & (CB_CHOICE_RACED | CB_CHOICE_FORCED | CB_CHOICE_ASYM_PAD | CB_CHOICE_NO_LIB_FIT | CB_CHOICE_RELU_MASK));
    size_t k = 0;
#define PUT(...) (k += (size_t)snprintf(buf + (k < n ? k : n - 1), k < n ? n - k : 1, __VA_ARGS__))
    PUT("%s%s", own_beside ? "own " : "", c->name ? c->name : "");
    if (c->flags & CB_CHOICE_GRAPH_API) PUT(" %d", c->algo); // (the engine's global index)
    if ((c->flags & CB_CHOICE_GRAPH_API) && c->check_err >= 0) PUT(" (err %.0e)", c->check_err); // (graph.c's check)
    if (c->flags & CB_CHOICE_BN_PERSISTENT) PUT(" (persistent)");
    if (c->flags & CB_CHOICE_FALLBACK) PUT(" (fallback)");
    if (c->flags & CB_CHOICE_PAIRED) PUT(" f+b");
    if (c->flags & CB_CHOICE_RACED) PUT(" %.3f<%.3f", c->ms, c->rival_ms);
    if (c->flags & CB_CHOICE_RELU_MASK) PUT(" %.3f, cuDNN %.3f (ReLU mask)", c->ms, c->rival_ms);
    if (c->flags & CB_CHOICE_ASYM_PAD) PUT(" (asym. pad)");
    if (c->flags & CB_CHOICE_NO_LIB_FIT) PUT(" (no cuDNN fits)");
    if (c->flags & CB_CHOICE_CHANNEL_PAD)
        PUT(" (C %d->%d%s)", c->pad_from, c->pad_to, c->flags & CB_CHOICE_SAME_COPY ? ", SAME" : "");
    else if (c->flags & CB_CHOICE_SAME_COPY) PUT(" (SAME copy)");
    // (a forced choice that was timed beside the one it displaced, as auto's forced wgmma kernel: both times)
    if ((c->flags & CB_CHOICE_FORCED) && !(c->flags & CB_CHOICE_RACED) && c->ms > 0 && c->rival_ms > 0) PUT(" (forced %.3f, else %.3f)", c->ms, c->rival_ms);
    else if (c->flags & CB_CHOICE_FORCED) PUT(" (forced)");
    if (c->flags & CB_CHOICE_OWN_NCHW_ONLY) PUT(" (own: fp32 NCHW)");
    if (c->flags & CB_CHOICE_DILATED) PUT(" (dilated)");
    if ((c->flags & CB_CHOICE_STEP_CHECKED) && c->ms >= 0 && c->rival_ms >= 0) PUT(" (in step %.3f<%.3f)", c->ms, c->rival_ms);
    else if (c->flags & CB_CHOICE_STEP_CHECKED) PUT(" (step check)");
    if ((c->flags & CB_CHOICE_LESS_WORKSPACE) && !(c->flags & CB_CHOICE_STEP_CHECKED)) PUT(" (less workspace, %.3f>%.3f)", c->ms, c->rival_ms);
#undef PUT
}

int cb_choice_pick(const double *ms, const size_t *ws, int n, double slack) {
    int fast = -1, pick = -1;
    for (int j = 0; j < n; j++)
        if (ms[j] >= 0 && (fast < 0 || ms[j] < ms[fast])) fast = j;
    if (fast < 0) return -1;
    double bound = ms[fast] * (1 + (slack > 0 ? slack : 0));
    for (int j = 0; j < n; j++)
        if (ms[j] >= 0 && ms[j] <= bound && (pick < 0 || ws[j] < ws[pick] || (ws[j] == ws[pick] && ms[j] < ms[pick]))) pick = j;
    return pick;
}
