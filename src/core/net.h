// Internals shared by the description readers (src/spec) and the graph code (src/core).
#ifndef CB_CORE_NET_H
#define CB_CORE_NET_H

#include "convbench.h"

#include <stdarg.h>

// A layer as read, before its parents are resolved: names, in file order.
typedef struct cb_raw_parents {
    int n;
    char **names;
} cb_raw_parents;

// Set err to "SOURCE: layer 'NAME': message" (layer may be NULL). Returns status.
cb_status cb_fail(cb_error *err, cb_status st, const char *source, const char *layer, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

// A declined layer or option: status CB_STATUS_UNSUPPORTED, err->reason = r, and the message
// ends "[unsupported: NAME]" (cb_reason_name). Returns r.
cb_reason cb_decline(cb_error *err, cb_reason r, const char *source, const char *layer, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

// Messages stay one line: control characters (a newline in a quoted layer name) become '?'.
void cb_msg_clean(char *s);

// Resolve parent names, order the layers topologically (file order among ready layers), reject
// cycles and unknown parents, then infer every shape. Takes ownership of layers and parents.
cb_net *cb_net_build(char *name, const char *source, cb_layer *layers, cb_raw_parents *parents, int n, cb_error *err);

// Infer every shape from the layer parameters and the input's shape (layers[0].out).
cb_status cb_net_infer(cb_net *net, cb_error *err);

// Starting values of a network's parameters, read with its description (ONNX initializers):
// tensors named by layer and cb_param "what", set by cb_exec_create after its own initialisation.
typedef struct cb_init_tensor {
    char *layer;
    char what[16];
    int64_t count;
    float *data;
} cb_init_tensor;
struct cb_net_weights {
    int n, cap;
    cb_init_tensor *t;
};
typedef struct cb_net_weights cb_net_weights;
void cb_net_weights_free(cb_net_weights *w);
// Sets every tensor of net->weights in e (checking layer, kind and size first); CB_OK without any.
cb_status cb_net_weights_apply(cb_exec *e, cb_error *err);

// ONNX (src/spec/onnx.c): the description as Paleo JSON and the initializers as weights. batch > 0
// replaces the input's batch dimension (a symbolic one is 1 otherwise).
struct cJSON *cb_onnx_read(const char *path, int64_t batch, cb_net_weights **weights, cb_error *err);
cb_net *cb_onnx_load(const char *path, cb_error *err);

// The first layer whose costs or share of the network's totals (cb_net_cost_total,
// src/layers/cost.c) overflow int64; -1 when all fit.
int cb_net_cost_overflow(const cb_net *net);

char *cb_strdup(const char *s);
void *cb_xcalloc(size_t n, size_t size); // aborts on failure: small, bounded host structures only
// Write a result file whole or not at all: PATH.tmp.PID beside the destination, synced, renamed
// over it. A symbolic link PATH is written through: its target is replaced, the link stays. A
// PATH (or link target) that is a device, pipe, socket or directory is refused (CB_STATUS_IO).
cb_status cb_write_whole(const char *path, const void *data, size_t n, cb_error *err);
// The whole of a text file, plain or gzip-compressed, NUL-terminated (free it); NULL with err set
// ("PATH: cannot open/read": a truncated or corrupt gzip stream too)
char *cb_read_text(const char *path, cb_error *err); // plain or gzip-compressed

// The inputs of sum a (layers[a], an Elementwise sum) whose gradient buffer is the sum's own in
// training (the engine's gradient routing, src/core/exec.c): their count (0 to 2), the layers in
// out; the sum's backward moves nothing to those (CONVBENCH_GRAD_ROUTE=copy turns the routing off).
int cb_sum_routes(const cb_net *net, int a, int out[2]);

#endif
