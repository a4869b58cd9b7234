// The graph rewrite into plan nodes (src/core/plan.h): the one place where layers are grouped.
#include "core/plan.h"
#include "core/act.h"
#include "core/net.h"

#include <stdlib.h>

static const char *const FUSION_NAMES[] = {"none", "conv+relu+maxpool", "bn+add"};
_Static_assert(sizeof FUSION_NAMES / sizeof FUSION_NAMES[0] == CB_FUSION_COUNT, "a fusion lacks a name");
const char *cb_fusion_name(cb_fusion f) { return (unsigned)f < CB_FUSION_COUNT ? FUSION_NAMES[f] : "?"; }

// the one consumer of layer i (its index), or -1
static int only_child(const cb_net *net, int i) {
    if (net->layers[i].nchildren != 1) return -1;
    for (int j = i + 1; j < net->nlayers; j++)
        for (int k = 0; k < net->layers[j].nparents; k++)
            if (net->layers[j].parents[k] == i) return j;
    return -1;
}

int cb_pool_relu_input(const cb_net *net, int i) {
    const cb_layer *L = &net->layers[i];
    if (L->op != CB_OP_POOL || L->p.pool.avg || L->nparents != 1 || L->parents[0] < 1) return -1;
    int j = L->parents[0];
    return net->layers[j].act == CB_ACT_RELU && only_child(net, j) == i ? j : -1;
}

bool cb_concat_relu_input(const cb_net *net, int i, int k) {
    const cb_layer *L = &net->layers[i];
    if (L->op != CB_OP_CONCAT || L->bn || L->act != CB_ACT_NONE || k < 0 || k >= L->nparents || L->parents[k] < 1) return false;
    int j = L->parents[k];
    for (int q = 0; q < L->nparents; q++)
        if (q != k && L->parents[q] == j) return false;
    return net->layers[j].act == CB_ACT_RELU && only_child(net, j) == i;
}

// Inference only: the conv's output is not kept, so nothing may read it but the pool.
static bool conv_relu_pool(const cb_net *net, int i, bool train, int *j) {
    const cb_layer *L = &net->layers[i];
    if (train || L->op != CB_OP_CONV || L->act != CB_ACT_RELU || L->bn) return false;
    *j = only_child(net, i);
    return *j > i && net->layers[*j].nparents == 1 && net->layers[*j].op == CB_OP_POOL;
}

// Training and inference: layer i's batch norm output (no activation) is read by the next layer
// alone, a sum of it and one other input (computed earlier), without batch norm, whose activation
// reads only its output (the backward's ReLU mask reads y): i's output need not exist, as no
// backward reads it (a sum's backward reads no input; i's reads its batch norm's input).
static bool bn_add(const cb_net *net, int i, int *j) {
    const cb_layer *L = &net->layers[i];
    if (!L->bn || L->act != CB_ACT_NONE || (L->op != CB_OP_CONV && L->op != CB_OP_FC)) return false;
    *j = only_child(net, i);
    if (*j != i + 1) return false;
    const cb_layer *S = &net->layers[*j];
    return S->op == CB_OP_ADD && !S->bn && S->nparents == 2 && S->parents[0] != S->parents[1] && !cb_act_needs_input(S->act);
}

void cb_plan_build(const cb_net *net, bool train, cb_plan *p) {
    int n = net->nlayers;
    p->node = cb_xcalloc((size_t)n, sizeof *p->node);
    p->node_of = cb_xcalloc((size_t)n, sizeof *p->node_of);
    for (int i = 0; i < n; i++) p->node_of[i] = -1;
    p->nnodes = 0;
    for (int i = 0; i < n; i++) {
        if (p->node_of[i] >= 0) continue; // already in a group
        cb_plan_node *nd = &p->node[p->nnodes];
        int j;
        if (conv_relu_pool(net, i, train, &j) && p->node_of[j] < 0) {
            *nd = (cb_plan_node){CB_FUSION_CONV_RELU_MAXPOOL, 2, {i, j}};
            p->node_of[j] = p->nnodes;
        } else if (bn_add(net, i, &j) && p->node_of[j] < 0) {
            *nd = (cb_plan_node){CB_FUSION_BN_ADD, 2, {i, j}};
            p->node_of[j] = p->nnodes;
        } else *nd = (cb_plan_node){CB_FUSION_NONE, 1, {i}};
        p->node_of[i] = p->nnodes++;
    }
}

void cb_plan_free(cb_plan *p) {
    free(p->node);
    free(p->node_of);
    p->node = NULL, p->node_of = NULL, p->nnodes = 0;
}
