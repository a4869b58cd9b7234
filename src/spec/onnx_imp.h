// Internals of the ONNX importer, shared by src/spec/onnx.c (the model, its values, constants,
// attributes, emitted layers) and src/spec/onnx_ops.c (one converter per operator).
#ifndef CB_SPEC_ONNX_IMP_H
#define CB_SPEC_ONNX_IMP_H

#include "core/net.h"
#include "onnx.pb-c.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef Onnx__NodeProto node_t;
typedef Onnx__TensorProto tensor_t;

typedef enum lkind { LK_OTHER, LK_CONV, LK_FC, LK_ELT } lkind;

typedef struct elayer {           // an emitted Paleo layer
    char *name;
    cJSON *obj;
    lkind kind;
    bool act, bn, bias;           // has a fused activation, batch norm, bias
    const char *out;              // the ONNX tensor that holds its output now (fusions move it)
} elayer;

typedef struct ivalue {           // what an ONNX tensor name stands for
    const char *name;
    int layer;                    // emitted layer, or -1 for a constant
    const tensor_t *t;            // the constant
    int rank;                     // 4 or 2, as the engine sees it
    bool nhwc;                    // ONNX sees it transposed to NHWC (around a LayerNorm)
} ivalue;

typedef struct imp {
    const char *src;
    cb_error *err;
    const Onnx__GraphProto *g;
    ivalue *v;
    int nv, capv;
    elayer *l;
    int nl, capl;
    cJSON *layers;
    cb_net_weights *w;
    bool *done;                   // per node: absorbed into a pattern
} imp;

// Helpers of src/spec/onnx.c (each described there). The ONNX tensor names, values and layers:
void ox_add_weight(imp *m, const char *layer, const char *what, float *data, int64_t count);
ivalue *ox_find_value(imp *m, const char *name);
void ox_bind(imp *m, const char *name, int layer, const tensor_t *t, int rank, bool nhwc);
ivalue *ox_input(imp *m, const node_t *nd, size_t i);
ivalue *ox_input_layer(imp *m, const node_t *nd, size_t i);
ivalue *ox_input_const(imp *m, const node_t *nd, size_t i, const char *what);
int64_t ox_numel(const tensor_t *t);
float *ox_const_floats(imp *m, const node_t *nd, const tensor_t *t, int64_t *count);
bool ox_const_is(imp *m, const node_t *nd, const ivalue *v, double want, double tol);
const Onnx__AttributeProto *ox_attr(const node_t *nd, const char *name);
bool ox_attrs_known(imp *m, const node_t *nd, const char *const *known);
int64_t ox_attr_int(const node_t *nd, const char *name, int64_t def);
double ox_attr_float(const node_t *nd, const char *name, double def);
bool ox_attr_ints(imp *m, const node_t *nd, const char *name, size_t n, int64_t def, int64_t *out);
bool ox_attr_str_is(const node_t *nd, const char *name, const char *want, const char *def);
int ox_emit(imp *m, const node_t *nd, int index, const char *type, lkind kind, ivalue **parents, int np);
cJSON *ox_int_array(const int64_t *v, int n);
cJSON *ox_float_num(double v);
void ox_set_item(cJSON *obj, const char *key, cJSON *item);
int ox_consumers(const imp *m, const char *t);
int ox_sole_consumer(const imp *m, const char *t);
elayer *ox_fusible_n(imp *m, const ivalue *v, int uses);
bool ox_is_op(const imp *m, int i, const char *op);
elayer *ox_fusible(imp *m, const ivalue *v);
bool ox_node_fail(imp *m, const node_t *nd, cb_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
// Converts one node (or the pattern it starts); false with err set.
bool ox_op_node(imp *m, const node_t *nd, int index);

#endif
