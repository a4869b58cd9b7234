// Convolutions through cuDNN's graph API, raced against the legacy algorithms (src/cudnn/graph.c).
// Private to src/cudnn.
#ifndef CB_CUDNN_GRAPH_H
#define CB_CUDNN_GRAPH_H

#include "cudnn/dnn.h"

typedef enum { CB_DNN_GRAPH_RACE, CB_DNN_GRAPH_OFF, CB_DNN_GRAPH_FORCE, CB_DNN_GRAPH_BAD } cb_dnn_graph_mode;
// $CONVBENCH_DNN_GRAPH for precision prec: race (the default: unset or empty), off, force; anything
// else CB_DNN_GRAPH_BAD; the same in every precision (each plan taken is checked first: graph.c).
cb_dnn_graph_mode cb_dnn_graph_mode_of(cb_precision prec);
// $CONVBENCH_DNN_GRAPH_PLANS: plans the race times per phase, over the heuristics' and the fallback
// list (16 when unset; 0 for "first": the first of each list that finalises; -1: not a number in 1..48)
int cb_dnn_graph_plans(void);
// the most a plan's result may differ from a legacy FMA algorithm's, ||plan - legacy|| / ||legacy||,
// on random operands (graph.c); $CONVBENCH_DNN_GRAPH_TOL replaces it (-1: not a number in 0..1)
double cb_dnn_graph_tol(cb_precision prec);
// $CONVBENCH_DNN_GRAPH_RTC: where engines compiled at run time (NVRTC) may race: grouped (and
// depthwise) convolutions' (unset, or grouped), every convolution's (on, 1), none (off, 0); -1: another value
enum { CB_DNN_RTC_NONE, CB_DNN_RTC_GROUPED, CB_DNN_RTC_ALL };
int cb_dnn_graph_rtc(void);
// $CONVBENCH_DNN_GRAPH_PLANS is given (a grouped convolution times fewer plans where it is not)
bool cb_dnn_graph_plans_set(void);

// Phase p of conv layer i (its legacy descriptors l->xd, l->wd, l->yd, l->cd[p]; grouped too) as a
// graph operation: every engine config the heuristics list whose numerics e's precision allows
// and whose workspace fits wsz and the limit, timed on X (x, or dx for the data gradient), W (w,
// or dw) and Y (y, or dy) with workspace ws; *best gets the plan cb_choice_pick takes (the fastest,
// or one of less workspace within e's workspace slack; NULL: none ran) among those whose result on
// random operands is within the precision's bound of a legacy FMA algorithm's (graph.c). Returns
// its ms (mean of 3 after one), -1 when none ran. *lost: the engine whose plan took the device
// down (an error no later call survives: the race stops there, *best NULL), else -1.
double cb_dnn_graph_race(cb_exec *e, int i, cb_phase p, const void *x, const void *w, const void *y, void *ws, size_t wsz,
                         dnn_gplan **best, int64_t *lost);
// How a race picks: workspace within ws_limit (bytes); pick, the index $CONVBENCH_DNN_PICK names
// (-1: by time); slack, cb_choice_pick's (the least workspace among those this much slower than
// the fastest at most); trace, when not NULL, every timed candidate printed to stderr after it
// left_out, when not NULL, gets how many plans the check dropped, and left_why the first one's reason
// (static text: over the bound, or why it could not be checked)
typedef struct cb_dnn_race_opts {
    double ws_limit;
    int pick;
    double slack;
    const char *trace;
    int *left_out;
    const char **left_why;
} cb_dnn_race_opts;
// The race itself, on a handle and legacy descriptors (a layer's, or calibrate's): the engines
// whose numerics precision prec allows, workspace within wsz and ro->ws_limit; timed with events on
// the handle's stream; *best is the one ro says (cb_choice_pick), its ms returned.
double cb_dnn_graph_race_desc(cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t yd,
                              cudnnConvolutionDescriptor_t cd, cb_phase p, cb_precision prec, const cb_dnn_race_opts *ro, const void *x,
                              const void *w, const void *y, void *ws, size_t wsz, dnn_gplan **best, int64_t *lost);
// one run of the plan on handle h (cb_dnn_graph_run's, without an executor)
bool cb_dnn_graph_exec(cudnnHandle_t h, dnn_gplan *g, const void *x, const void *w, const void *y, void *ws);
// One run of the plan on these buffers (the race's roles); false when it cannot run on them (a
// pointer less aligned than the plan was built for, or cuDNN refused): the caller falls back.
bool cb_dnn_graph_run(cb_exec *e, dnn_gplan *g, const void *x, const void *w, const void *y, void *ws);
int64_t cb_dnn_graph_engine(const dnn_gplan *g); // the engine's global index
// ||its result - a legacy FMA algorithm's|| / ||legacy's|| on random operands, measured before the
// race returned it (-1: not checked)
double cb_dnn_graph_check_err(const dnn_gplan *g);
// the graph operation of phase p built from these legacy descriptors and finalised: what the race
// builds before it needs a handle (no GPU needed; a test of the descriptors' attributes)
bool cb_dnn_graph_op_ok(cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd, cudnnTensorDescriptor_t yd,
                        cudnnConvolutionDescriptor_t cd, cb_phase p);
size_t cb_dnn_graph_workspace(const dnn_gplan *g);
void cb_dnn_graph_free(dnn_gplan *g);

#endif
