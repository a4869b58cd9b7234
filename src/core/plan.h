// The execution plan: nodes that each cover one layer or a fused group of layers a backend may
// compute together (conv + bias + activation + residual add + pool, ...). The graph rewrite that
// forms groups lives in cb_plan_build alone; a backend looks a layer's node up (node_of) and
// either runs the group as one or, where it cannot, runs its layers one by one as before.
#ifndef CB_CORE_PLAN_H
#define CB_CORE_PLAN_H

#include "convbench.h"

typedef enum cb_fusion {
    CB_FUSION_NONE,             // one layer
    CB_FUSION_CONV_RELU_MAXPOOL, // inference: a convolution with its ReLU (no batch norm), whose one consumer is a pool
    CB_FUSION_BN_ADD,            // a layer's batch norm (no activation) and the sum right after it, its one consumer, of it
                                 // and one other input, with the sum's activation: y = act(bn(x) + other) in one pass
    CB_FUSION_COUNT
} cb_fusion;

#define CB_PLAN_MAX_LAYERS 4
typedef struct cb_plan_node {
    cb_fusion fusion;
    int nlayers;
    int layer[CB_PLAN_MAX_LAYERS]; // in execution order; layer[0] is the head, whose inputs the group reads
} cb_plan_node;

typedef struct cb_plan {
    int nnodes;
    cb_plan_node *node;           // (nnodes) in execution order
    int *node_of;                 // (nlayers) the node covering each layer
} cb_plan;

// The rewrite: the net's layers into nodes, fusing where a rule matches (train: a training pass,
// which fuses nothing that would drop a tensor the backward pass reads).
void cb_plan_build(const cb_net *net, bool train, cb_plan *p);
void cb_plan_free(cb_plan *p);
const char *cb_fusion_name(cb_fusion f);

// The layer j whose ReLU a max pool i may take over in training: i is a max pool with one input,
// j (not the input layer), whose activation is a ReLU and whose one consumer is i. Where the
// backend agrees (be->pool_relu_mask), the pool's forward marks in its argmax the windows whose
// maximum is not above 0 and its backward passes no gradient there: that is the ReLU's gradient
// (a gradient reaches only the maximum of each window, and it passes the ReLU where that maximum,
// the pool's output, is above 0), so j's backward runs no ReLU pass. -1: none.
int cb_pool_relu_input(const cb_net *net, int i);

// Whether the k-th input j of concatenation i (without batch norm or activation of its own) is a
// layer whose ReLU the concatenation may take over in training: j (not the input layer) has a ReLU
// as its activation, i is its one consumer and names it once. The slice of i's output that holds j's
// values is then j's ReLU output, so where the backend agrees (be->concat_relu_mask) i's backward
// passes j the slice of its gradient where that output is above 0, and j runs no ReLU pass. The
// engine asks only where i's output is kept to i's backward anyway (src/core/exec.c).
bool cb_concat_relu_input(const cb_net *net, int i, int k);

#endif
