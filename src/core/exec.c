// The execution engine: plans every buffer once, then runs forward, criterion, backward and
// update on a backend, timing each layer and phase. No allocation happens after cb_exec_create.
#include "core/backend.h"
#include "core/net.h"
#include "core/ops.h"
#include "core/rng.h"
#include "core/act.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cb_layer_cpu_only(const cb_layer *L) {
    return L->op == CB_OP_MUL         ? "an Elementwise mul"
           : L->op == CB_OP_LAYERNORM ? "LayerNorm"
           : L->op == CB_OP_SCALE     ? "Scale"
           : L->op == CB_OP_CONV && (L->p.conv.dil_h > 1 || L->p.conv.dil_w > 1) ? "a dilated convolution"
                                                                                  : NULL;
}

cb_reason cb_layer_gpu_supports(const cb_layer *L, char *why, size_t n) {
    const char *what = cb_layer_cpu_only(L);
    if (!what) return CB_REASON_NONE;
    snprintf(why, n, "%s has no GPU kernel yet (backends cpu and ref run it)", what);
    return CB_REASON_NO_GPU_KERNEL;
}

void cb_exec_opts_default(cb_exec_opts *o) {
    memset(o, 0, sizeof *o);
    o->backend = "cpu";
    o->precision = CB_PREC_FP32;
    o->layout = CB_LAYOUT_NCHW;
    o->train = true;
    o->lr = 0.01f;
    o->momentum = 0.9f;
    o->weight_decay = 5e-4f;
    o->seed = 42;
    o->workspace_limit = (size_t)4096 << 20;
    o->workspace_slack = CB_WORKSPACE_SLACK_DEFAULT;
    o->memory_slack = CB_MEMORY_SLACK_DEFAULT;
}

// the machine's physical memory in bytes (0: unknown). A host backend's buffers past it are refused
// before they are taken: where the kernel overcommits (vm.overcommit_memory=1, common on GPU hosts)
// malloc grants any size and the first pass over it swaps or meets the OOM killer (on an H200
// host, `fullpass vgg16 --batch 1000000` ran past cli_test's 180 s instead of failing at once)
static double host_ram(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : 0;
}

// an allocation of the engine's, counted as kind k (CB_MEM_COUNT: counted by the caller)
static void *take_kind(cb_exec *e, size_t bytes, bool *ok, cb_mem_kind k) {
    e->planned += (double)bytes; // counted on after a failure: the message gives the whole plan
    if (!*ok || bytes == 0) return NULL;
    if (e->opts.plan_only) { // (counted as if allocated)
        e->allocated += bytes, e->engine_bytes += bytes;
        if (k < CB_MEM_COUNT) e->mem[k] += bytes;
        return NULL;
    }
    double ram = e->be->device ? 0 : host_ram();
    if (ram > 0 && (double)e->allocated + (double)bytes > ram) {
        e->past_ram = true, *ok = false;
        return NULL;
    }
    void *p = e->be->alloc(e, bytes);
    if (!p) *ok = false;
    else {
        e->allocated += bytes, e->engine_bytes += bytes;
        if (k < CB_MEM_COUNT) e->mem[k] += bytes;
    }
    return p;
}

// $CONVBENCH_WORKSPACE: unset or grow (the default), arena or separate (workspace_place); -1: another value
enum { WS_GROW, WS_ARENA, WS_SEPARATE };
static int ws_mode(void) {
    const char *m = getenv("CONVBENCH_WORKSPACE");
    return !m || !*m || !strcmp(m, "grow") ? WS_GROW : !strcmp(m, "arena") ? WS_ARENA : !strcmp(m, "separate") ? WS_SEPARATE : -1;
}

// the arena: growable where the backend can (be->alloc_growable), with addresses reserved for the
// largest workspace a plan may ask past its end (opts.workspace_limit), so that workspace_place
// may grow it
static void *take_arena(cb_exec *e, size_t bytes, bool *ok) {
    if (!e->be->alloc_growable || e->opts.plan_only || !*ok || !bytes || ws_mode() != WS_GROW)
        return take_kind(e, bytes, ok, CB_MEM_COUNT);
    size_t room = e->opts.workspace_limit < ((size_t)1 << 40) ? e->opts.workspace_limit : (size_t)1 << 40;
    e->planned += (double)bytes;
    void *p = e->be->alloc_growable(e, bytes, bytes + room);
    if (!p) *ok = false;
    else e->allocated += bytes, e->engine_bytes += bytes;
    return p;
}

static const char *const MEM_NAMES[] = {"parameters", "layer outputs", "saved for backward", "activation gradients",
                                        "accumulation scratch", "workspace", "criterion", "backend copies"};
_Static_assert(sizeof MEM_NAMES / sizeof MEM_NAMES[0] == CB_MEM_COUNT, "a memory kind lacks a name");
const char *cb_mem_kind_name(cb_mem_kind k) { return (unsigned)k < CB_MEM_COUNT ? MEM_NAMES[k] : "?"; }

bool cb_exec_memory_shared(const cb_exec *e) { return e->arena != NULL || (e->opts.plan_only && e->arena_bytes); }
size_t cb_exec_arena_bytes(const cb_exec *e) { return e->arena_bytes; }
size_t cb_exec_arena_grown(const cb_exec *e) { return e->arena_grown; }

size_t cb_exec_memory(const cb_exec *e, cb_mem_kind k) {
    if (k != CB_MEM_BACKEND) return (unsigned)k < CB_MEM_COUNT ? e->mem[k] : 0;
    // (its copies placed in the arena, and what it allocated itself)
    return e->mem[k] + (e->allocated > e->engine_bytes ? e->allocated - e->engine_bytes : 0);
}

size_t cb_exec_memory_at_peak(const cb_exec *e, cb_mem_kind k) {
    if ((unsigned)k >= CB_MEM_COUNT) return 0;
    return cb_exec_memory(e, k) - e->mem_arena[k] + (e->arena_bytes ? e->mem_peak[k] : e->mem_arena[k]);
}
int cb_exec_memory_peak_layer(const cb_exec *e, bool *backward) {
    int n = e->net->nlayers;
    *backward = e->peak_at >= n;
    return e->peak_at < 0 ? -1 : e->peak_at < n ? e->peak_at : 2 * n - 1 - e->peak_at;
}

size_t cb_exec_memory_reused(const cb_exec *e) {
    size_t all = 0;
    for (int k = 0; k < CB_MEM_COUNT; k++) all += cb_exec_memory(e, (cb_mem_kind)k);
    return all > e->allocated ? all - e->allocated : 0;
}

// Does layer i keep extra state for backward, and how big is its auxiliary buffer (bytes)?
static size_t aux_bytes(const cb_exec *e, const cb_layer *L, bool train) {
    size_t out = (size_t)cb_shape_count(L->out) * 4;
    if (L->op == CB_OP_POOL && !L->p.pool.avg) // argmax: an int32, or the backend's item
        return (size_t)cb_shape_count(L->out) * (size_t)(e->be->pool_argmax_item ? e->be->pool_argmax_item(L) : 4);
    if (L->op == CB_OP_LRN) return out;                    // scale
    if (L->op == CB_OP_DROPOUT && train) return out;       // mask
    if (L->op == CB_OP_LAYERNORM && train) return (size_t)(L->out.n * L->out.h * L->out.w) * 8; // per-pixel mean, 1/std (GPU backends)
    return 0;
}

// ---- the shared arena -----------------------------------------------------------------------------
// Every activation-sized buffer of a step shares one arena, placed by liveness. One timeline covers
// the step: layer i's forward at t = i, its backward at t = 2n-1-i (the backward runs from layer
// n-1 down to 1); a buffer holds its bytes from its first write to its last read:
//   - an output y[i] from its plan node's forward (a fused group writes it at its head's, while the
//     head's inputs are read) to its own backward, the last to read it (its consumers' backward
//     comes first): [head, 2n-1-i]. A transient output, one that no backward reads, only to its
//     last consumer's forward: [head, h]. In training that is a layer without activation whose own
//     backward reads only its input and dy (Convolution, InnerProduct, with or without batch norm;
//     a sum; a concatenation) and whose every consumer is a sum or a concatenation (their backward
//     reads no input): the last convolution of a residual block, a projection shortcut. In
//     inference every output but the input's and the last layer's is transient;
//   - what a layer keeps for its backward (a batch norm's input pre[i], an activation's input, pool
//     argmax, dropout mask, LRN scale, LayerNorm statistics): [head, 2n-1-i]; in inference [head, i];
//   - dy[i] (its output's gradient) from its first write, the backward of its highest consumer h
//     (the criterion for the last layer), to its own backward: [2n-1-h, 2n-1-i]; dpre[i] (a
//     batch-normed layer's gradient before the batch norm): [2n-1-i, 2n-1-i];
//   - acc[i], the accumulation scratch of layer i's backward (a parent's gradient computed apart,
//     then added; cuDNN's batch norm's unused dx), where it may be needed: [2n-1-i, 2n-1-i];
//   - the plan's scratch, used by races while the engine plans (t = -1), before any step.
// So the bytes a layer kept for its backward serve, once that backward is done, the gradients of
// the layers before it, as a framework's allocator frees them. The input, the last output and their
// gradients stay live throughout, from before the first step (-1): a caller sets the input and the
// last gradient once and runs many steps, and reads the output and the input's gradient after.
// Buffers whose intervals meet never share bytes; they are placed largest first at the lowest
// offset that overlaps no placed buffer live at the same time (first fit, as TFLite's arena
// planner does). $CONVBENCH_MEMORY=separate gives every buffer its own allocation and one
// accumulation scratch for all (the old plan, for A/B runs).
typedef struct arena_buf {
    void **slot;      // &lb[i].y, .pre, .act_in, .aux, .dy, .dpre, .acc or &e->scratch
    size_t bytes;     // aligned
    int lo, hi;       // live over lo..hi of the timeline
    int lo2, hi2;     // and over lo2..hi2 too where lo2 <= hi2, in the same bytes: an output made again for the
                      // backward (cb_recompute), free between its last forward reader and that
    cb_mem_kind kind; // what it is, for the report
    size_t off;
    bool whole;       // live over the whole timeline (placed first, at the bottom)
} arena_buf;

// Orders of placement, each after the buffers live throughout (placed first, at the bottom):
// largest first (TFLite's greedy by size), longest lived first, earliest first, and by bytes times
// lifetime; ties by size, then by start. First fit leaves holes that depend on the order (ResNet-50
// b64 tf32 on the H200, 2026-11-29: 18 MiB above the busiest point's bytes, the one order
// tried then), so the arena takes the smallest of them.
enum { ORDER_SIZE, ORDER_LIFE, ORDER_START, ORDER_AREA, ORDER_COUNT };
static int order_of_sort; // (qsort takes no context)
static bool spans_meet(int a0, int a1, int b0, int b1) { return a0 <= b1 && b0 <= a1; }
static bool has_second(const arena_buf *b) { return b->lo2 <= b->hi2; }
// are two buffers ever live at the same time (so that their bytes may not meet)?
static bool bufs_meet(const arena_buf *a, const arena_buf *b) {
    bool a2 = has_second(a), b2 = has_second(b);
    return spans_meet(a->lo, a->hi, b->lo, b->hi) || (a2 && spans_meet(a->lo2, a->hi2, b->lo, b->hi)) ||
           (b2 && spans_meet(a->lo, a->hi, b->lo2, b->hi2)) || (a2 && b2 && spans_meet(a->lo2, a->hi2, b->lo2, b->hi2));
}
static bool buf_live(const arena_buf *b, int t) { return (b->lo <= t && t <= b->hi) || (b->lo2 <= t && t <= b->hi2); }
static int64_t buf_life(const arena_buf *b) { return (int64_t)b->hi - b->lo + 1 + (has_second(b) ? (int64_t)b->hi2 - b->lo2 + 1 : 0); }
static int arena_buf_cmp(const void *a, const void *b) {
    const arena_buf *x = a, *y = b;
    if (x->whole != y->whole) return x->whole ? -1 : 1;
    double kx = 0, ky = 0; // the order's key, larger first
    int64_t lx = buf_life(x), ly = buf_life(y);
    switch (order_of_sort) {
    case ORDER_LIFE: kx = (double)lx, ky = (double)ly; break;
    case ORDER_START: kx = -x->lo, ky = -y->lo; break;
    case ORDER_AREA: kx = (double)x->bytes * (double)lx, ky = (double)y->bytes * (double)ly; break;
    default: break;
    }
    if (kx != ky) return kx < ky ? 1 : -1;
    return x->bytes != y->bytes ? (x->bytes < y->bytes ? 1 : -1) : (x->lo > y->lo) - (x->lo < y->lo);
}
static int off_cmp(const void *a, const void *b) {
    const arena_buf *x = *(arena_buf *const *)a, *y = *(arena_buf *const *)b;
    return (x->off > y->off) - (x->off < y->off);
}

// offsets for bufs[0..nb) in one order (sorted here); returns the arena's size
static size_t first_fit_in(arena_buf *bufs, int nb, int order) {
    order_of_sort = order;
    qsort(bufs, (size_t)nb, sizeof *bufs, arena_buf_cmp);
    arena_buf **live = cb_xcalloc((size_t)nb + 1, sizeof *live);
    size_t total = 0;
    for (int k = 0; k < nb; k++) {
        int nl = 0;
        for (int j = 0; j < k; j++) // the placed buffers live at the same time, by offset
            if (bufs_meet(&bufs[j], &bufs[k])) live[nl++] = &bufs[j];
        qsort(live, (size_t)nl, sizeof *live, off_cmp);
        size_t off = 0;
        for (int j = 0; j < nl && live[j]->off < off + bufs[k].bytes; j++)
            if (live[j]->off + live[j]->bytes > off) off = live[j]->off + live[j]->bytes;
        bufs[k].off = off;
        if (off + bufs[k].bytes > total) total = off + bufs[k].bytes;
    }
    free(live);
    return total;
}

// offsets for bufs[0..nb): the smallest arena of the orders, another than largest first only
// where it saves at least a 400th of the arena (the gaps the workspaces take later, placed after
// the races, depend on the order too: a MobileNet-v2 b4 arena 0.02 MiB smaller by another order
// left its first convolution's 128 MiB filter-gradient workspace no gap); a network of many
// layers, largest first alone (the placement's cost is quadratic). $CONVBENCH_ARENA_ORDER=size:
// largest first always (A/B; best, the default: this). *order: the order taken.
static const char *const ORDER_NAMES[ORDER_COUNT] = {"largest first", "longest-lived first", "earliest first", "bytes x lifetime first"};
static size_t arena_first_fit(arena_buf *bufs, int nb, int *order, size_t *by_size) {
    size_t best = first_fit_in(bufs, nb, ORDER_SIZE);
    const char *env = getenv("CONVBENCH_ARENA_ORDER");
    *order = ORDER_SIZE, *by_size = best;
    if (nb > 20000 || (env && !strcmp(env, "size"))) return best;
    arena_buf *keep = cb_xcalloc((size_t)nb + 1, sizeof *keep);
    memcpy(keep, bufs, sizeof *bufs * (size_t)nb);
    for (int o = ORDER_SIZE + 1; o < ORDER_COUNT; o++) {
        size_t t = first_fit_in(bufs, nb, o);
        if (t + *by_size / 400 <= best && t < best) best = t, *order = o, memcpy(keep, bufs, sizeof *bufs * (size_t)nb);
    }
    memcpy(bufs, keep, sizeof *bufs * (size_t)nb);
    free(keep);
    return best;
}

// What reads no output of its own in its backward but its activation (whose mask reads y): a
// convolution, an FC layer, a sum, a concatenation, with or without batch norm (that reads its
// input, pre); a layer scale or a product without batch norm (they read their inputs alone:
// ConvNeXt's gamma before the residual sum, a C-channel activation per block that PyTorch's
// autograd does not keep either). An activation (its mask), pooling, LRN, softmax and a standalone
// batch norm read their own output.
static bool own_output_unread(const cb_layer *L) {
    return L->op == CB_OP_CONV || L->op == CB_OP_FC || L->op == CB_OP_ADD || L->op == CB_OP_CONCAT ||
           ((L->op == CB_OP_SCALE || L->op == CB_OP_MUL) && !L->bn);
}

bool cb_exec_output_transient(const cb_net *net, int i, bool train) {
    int n = net->nlayers;
    const cb_layer *L = &net->layers[i];
    if (i == 0 || i == n - 1 || L->nchildren == 0) return false;
    if (!train) return true;
    if (L->act != CB_ACT_NONE || !own_output_unread(L)) return false;
    for (int j = i + 1; j <= L->last_child; j++) {
        const cb_layer *C = &net->layers[j];
        for (int k = 0; k < C->nparents; k++)
            if (C->parents[k] == i && ((C->op != CB_OP_ADD && C->op != CB_OP_CONCAT) || C->bn)) return false;
    }
    return true;
}

// Layer i's output in training where the max pool or concatenation after it applies its ReLU's
// gradient (relu_by_pool, relu_by_concat): no backward reads it (a fused batch norm's reads its
// input, pre, and the own kernels that apply the activation there recompute it from pre), so it
// lives only to that consumer's forward. On VGG-A b64 that is every convolution before a pool, 747
// MiB in bf16 at the step's busiest point, and ResNet-50's first convolution (98 MiB at b64); the
// pool's argmax, one byte an output there, carries the mask instead. In an Inception module every
// branch's last convolution: the concatenation's output, kept for the convolutions after it, holds
// the same values.
static bool relu_taken_transient(const cb_exec *e, int i) {
    return e->opts.train && cb_relu_taken(&e->lb[i]) && own_output_unread(&e->net->layers[i]) && i < e->net->nlayers - 1;
}

bool cb_exec_output_kept(const cb_exec *e, int i) {
    return !cb_exec_output_transient(e->net, i, e->opts.train) && !relu_taken_transient(e, i);
}

// Each max pool that takes over the ReLU of the layer it alone reads, where the backend agrees
// (be->pool_relu_mask), then each concatenation that takes over its inputs' (be->concat_relu_mask),
// before the arena is placed. A concatenation does so only where its output is kept to its
// backward anyway; its inputs are not pools' (a pool reads one input), so the two never meet.
static void relu_takeover_plan(cb_exec *e) {
    const cb_net *net = e->net;
    int masked = 0, concats = 0, inputs = 0;
    int64_t freed = 0, cfreed = 0;
    for (int i = 1; i < net->nlayers && e->opts.train && e->be->pool_relu_mask; i++) {
        int j = cb_pool_relu_input(net, i);
        if (j < 0 || !e->be->pool_relu_mask(e, i)) continue;
        e->lb[j].relu_by_pool = true;
        masked++;
        if (relu_taken_transient(e, j)) freed += cb_shape_count(net->layers[j].out) * (int64_t)e->act_bytes;
    }
    for (int i = 1; i < net->nlayers - 1 && e->opts.train && e->be->concat_relu_mask; i++) {
        if (net->layers[i].op != CB_OP_CONCAT || !cb_exec_output_kept(e, i)) continue;
        bool any = false;
        for (int k = 0; k < net->layers[i].nparents; k++) any |= cb_concat_relu_input(net, i, k);
        if (!any || !e->be->concat_relu_mask(e, i)) continue;
        concats++;
        for (int k = 0; k < net->layers[i].nparents; k++) {
            int j = net->layers[i].parents[k];
            if (!cb_concat_relu_input(net, i, k)) continue;
            e->lb[j].relu_by_concat = true;
            inputs++;
            if (relu_taken_transient(e, j)) cfreed += cb_shape_count(net->layers[j].out) * (int64_t)e->act_bytes;
        }
    }
    if (masked && !e->opts.plan_only)
        cb_exec_note(e, "max pools: %d apply the ReLU gradient of the layer they read from their argmax (its output, %.1f MiB, is kept "
                        "only to the pool's forward; CONVBENCH_FUSE_EPILOGUE=off keeps it and runs the ReLU's pass)",
                     masked, freed / 1048576.0);
    if (concats && !e->opts.plan_only)
        cb_exec_note(e, "concatenations: %d apply the ReLU gradient of %d inputs from their own output (those inputs' outputs, %.1f MiB, "
                        "are kept only to the concatenation's forward; CONVBENCH_CONCAT_RELU=off keeps them and runs the ReLU's pass)",
                     concats, inputs, cfreed / 1048576.0);
}

// ---- gradient routing through sums ----------------------------------------------------------------
// A sum passes its gradient to each input unchanged. An input whose first gradient in the backward
// pass comes from the sum (the sum is its last consumer) takes the sum's gradient buffer as its
// own dy instead of a copy: the latest layer among those that qualify (its backward comes
// soonest), and a second one where that is safe (below). The sum's gradient is dead once its
// backward has copied it to its other inputs, so the buffer passes on whole; a chain of sums
// passes it along. An input that already holds a gradient gets the sum's added straight in, not
// through the scratch. Not the last layer (its gradient is the caller's, pinned over the step) nor
// the input.
// $CONVBENCH_GRAD_ROUTE=copy: every input gets its own copy (A/B runs).
int cb_sum_routes(const cb_net *net, int a, int out[2]) {
    const cb_layer *L = &net->layers[a];
    if (a < 1 || a >= net->nlayers - 1 || L->op != CB_OP_ADD || L->bn) return 0;
    int best = -1, second = -1;
    for (int k = 0; k < L->nparents; k++) {
        int p = L->parents[k], seen = 0;
        for (int j = 0; j < L->nparents; j++) seen += L->parents[j] == p;
        if (p <= 0 || seen != 1 || net->layers[p].last_child != a) continue;
        if (p > best) second = best, best = p;
        else if (p > second) second = p;
    }
    if (best < 0) return 0;
    out[0] = best;
    // A second input shares the buffer too where nothing can write it before the first has
    // read it: the first (the later layer, whose backward comes first) is a convolution or FC
    // layer without activation read by this sum alone (its backward only reads dy: the batch
    // norm's writes dpre), every other consumer of the second comes before the first (their
    // gradients are added after its read). (The buffer is this sum's alone by its backward
    // even if a later sum passed it on: that sum's holders were later layers, done reading.) A
    // residual block's sum then moves no gradient at all.
    const cb_layer *B = &net->layers[best];
    if (second < 0 || B->act != CB_ACT_NONE || (B->op != CB_OP_CONV && B->op != CB_OP_FC) || B->nchildren != 1) return 1;
    bool early = true;
    for (int c = second + 1; c < net->layers[second].last_child; c++)
        for (int k = 0; k < net->layers[c].nparents; k++) early &= net->layers[c].parents[k] != second || c < best;
    if (!early) return 1;
    out[1] = second;
    return 2;
}

static void grad_alias_plan(cb_exec *e) {
    const cb_net *net = e->net;
    int n = net->nlayers;
    for (int i = 0; i < n; i++) e->grad_alias[i] = -1;
    if (!e->opts.train || e->grad_copy) return;
    for (int a = n - 2; a >= 1; a--) {
        int to[2], k = cb_sum_routes(net, a, to);
        for (int j = 0; j < k; j++) e->grad_alias[to[j]] = a;
    }
}
static int grad_root(const cb_exec *e, int i) {
    while (e->grad_alias[i] >= 0) i = e->grad_alias[i];
    return i;
}

// bytes of layer i's accumulation scratch (0: none): a parent's gradient that its backward may
// compute apart and add (the parent holds a gradient already from a later consumer, or is read
// twice; a sum adds its own straight in unless $CONVBENCH_GRAD_ROUTE=copy), and a batch-norm
// layer's own shape (cuDNN's backward writes a dx even where the input takes no gradient)
static size_t acc_bytes(const cb_exec *e, int i) {
    const cb_layer *L = &e->net->layers[i];
    int64_t need = L->op == CB_OP_BATCHNORM ? cb_shape_count(L->out) : 0;
    for (int j = 0; j < L->nparents; j++) {
        int p = L->parents[j];
        bool later = i < e->net->layers[p].last_child;
        for (int k = 0; k < j; k++) later |= L->parents[k] == p;
        if ((p == 0 && e->opts.no_data_grad) || e->grad_alias[p] == i || !later || (L->op == CB_OP_ADD && !e->grad_copy)) continue;
        if (cb_shape_count(e->net->layers[p].out) > need) need = cb_shape_count(e->net->layers[p].out);
    }
    return (size_t)need * e->act_bytes;
}

static bool arena_separate(void) {
    const char *mode = getenv("CONVBENCH_MEMORY");
    return mode && !strcmp(mode, "separate");
}

static void add_buf(arena_buf *bufs, int *nb, void **slot, size_t bytes, int lo, int hi, cb_mem_kind k) {
    if (bytes) bufs[(*nb)++] = (arena_buf){.slot = slot, .bytes = (bytes + 255) & ~(size_t)255, .lo = lo, .hi = hi, .lo2 = 0, .hi2 = -1, .kind = k};
}

// the point of the step (-1 .. T) where the arena's buffers hold the most bytes, and those bytes
static int64_t live_peak(const arena_buf *bufs, int nb, int T, int *at) {
    int64_t *d = cb_xcalloc((size_t)T + 3, sizeof *d); // d[t + 1]: the change in live bytes at t
    for (int k = 0; k < nb; k++) {
        d[bufs[k].lo + 1] += (int64_t)bufs[k].bytes, d[bufs[k].hi + 2] -= (int64_t)bufs[k].bytes;
        if (has_second(&bufs[k])) d[bufs[k].lo2 + 1] += (int64_t)bufs[k].bytes, d[bufs[k].hi2 + 2] -= (int64_t)bufs[k].bytes;
    }
    int64_t live = 0, most = -1;
    *at = -1;
    for (int t = -1; t <= T; t++) {
        live += d[t + 1];
        if (live > most) most = live, *at = t;
    }
    free(d);
    return most;
}

// that point, and what the peak is made of by kind (the placement's total can exceed it where
// first-fit left holes)
static void arena_peak(cb_exec *e, const arena_buf *bufs, int nb, int T) {
    int at;
    live_peak(bufs, nb, T, &at);
    e->peak_at = at;
    memset(e->mem_peak, 0, sizeof e->mem_peak);
    for (int k = 0; k < nb; k++)
        if (buf_live(&bufs[k], at)) e->mem_peak[bufs[k].kind] += bufs[k].bytes;
}

// The backend's weight copies (be->weight_copy) are kept from the forward to the data gradient,
// except where that raises the peak: while the busiest point of the step falls between a copy's
// forward and its backward, the largest such copy is made again in the backward instead (its
// forward bytes then live over the forward alone, a second buffer at the backward), as long as
// that lowers the peak by 1% or more: each costs one more conversion of those weights per step
// and a launch (on the H200, 2026-11-27, splitting every copy that lowered ResNet-50 b64 bf16's peak
// at all saved 44 MiB of 2,897 for 0.3 ms of 12.4; AlexNet's and VGG-A's FC layers save 77 and 98
// MiB). CONVBENCH_WEIGHT_COPY=remake makes every copy again, step keeps each (=keep leaves the
// copies to the backend: cb_store_weight_copy).
static int split_weight_copies(cb_exec *e, arena_buf *bufs, int nb, int T, const int *wbuf, const int *wend) {
    const char *mode = getenv("CONVBENCH_WEIGHT_COPY");
    bool all = mode && !strcmp(mode, "remake"), none = mode && !strcmp(mode, "step");
    int n = e->net->nlayers, again = 0, copies = 0, at;
    int64_t before = live_peak(bufs, nb, T, &at), bytes = 0;
    for (int i = 1; i < n; i++) copies += wbuf[i] >= 0;
    for (;;) {
        int best = -1;
        int64_t most = live_peak(bufs, nb, T, &at);
        for (int i = 1; i < n && !none; i++) {
            int k = wbuf[i];
            if (k < 0 || bufs[k].hi == wend[i]) continue; // (none, or made again already / no backward read)
            if (!all && !(wend[i] < at && at < bufs[k].hi)) continue;
            if (best < 0 || bufs[k].bytes > bufs[wbuf[best]].bytes) best = i;
        }
        if (best < 0) break;
        arena_buf *f = &bufs[wbuf[best]];
        int hi = f->hi;
        bufs[nb] = (arena_buf){.slot = (void **)&e->lb[best].wcopy_bwd, .bytes = f->bytes, .lo = hi, .hi = hi, .lo2 = 0, .hi2 = -1, .kind = f->kind};
        f->hi = wend[best];
        if (!all && live_peak(bufs, nb + 1, T, &at) > most - most / 100) { // not 1% lower: as it was, and done
            f->hi = hi;
            break;
        }
        e->lb[best].wcopy_again = true;
        again++, bytes += (int64_t)f->bytes;
        nb++;
    }
    // (a time-for-memory trade the plan made: said, as a slow path is)
    if (again)
        cb_exec_note(e, "weight copies: %d of %d made again in the backward (%.1f MiB of copies; the planned peak %.1f MiB lower), one "
                        "more conversion each a step (CONVBENCH_WEIGHT_COPY=step keeps them)",
                     again, copies, bytes / 1048576.0, (before - live_peak(bufs, nb, T, &at)) / 1048576.0);
    return nb;
}

// Outputs made again in the backward (cb_recompute): a candidate (ybuf[i] >= 0, its output's
// buffer, live from its forward to its backward; be->output_again agreed) is live then over its
// forward readers' time alone and again from its last consumer's backward, where the backend makes
// it again, to its first consumer's, in the same bytes. The one taken each time is the largest whose
// gap holds the step's busiest point, while that point is above the budget (AUTO) or at all (ON), and
// as long as each takes the busiest point lower. Returns the bytes the peak is above the budget
// after (AUTO; else 0), *count, *bytes: the outputs taken and their bytes.
static int64_t recompute_plan(cb_exec *e, arena_buf *bufs, int nb, int T, const int *ybuf, const int *first_child, bool limited,
                              int64_t budget, int *count, double *bytes) {
    const cb_net *net = e->net;
    int n = net->nlayers, at;
    *count = 0, *bytes = 0;
    if (e->opts.recompute == CB_RECOMPUTE_OFF) return 0;
    bool on = e->opts.recompute == CB_RECOMPUTE_ON, all = e->opts.recompute == CB_RECOMPUTE_ALL;
    for (;;) {
        int64_t most = live_peak(bufs, nb, T, &at);
        if (!on && !all && (!limited || most <= budget)) return 0;
        int best = -1;
        for (int i = 1; i < n; i++) {
            int k = ybuf[i], c = net->layers[i].last_child;
            if (k < 0 || e->lb[i].y_again || !(all || (c < at && at < 2 * n - 1 - c))) continue;
            if (best < 0 || bufs[k].bytes > bufs[ybuf[best]].bytes) best = i;
        }
        if (best < 0) return on || all || most <= budget ? 0 : most - budget;
        arena_buf *b = &bufs[ybuf[best]], was = *b;
        int c = net->layers[best].last_child;
        b->hi = c, b->lo2 = 2 * n - 1 - c, b->hi2 = 2 * n - 1 - first_child[best];
        if (!all && live_peak(bufs, nb, T, &at) >= most) { // (the busiest point stays as high, elsewhere: as it was, and done)
            *b = was;
            return on || most <= budget ? 0 : most - budget;
        }
        e->lb[best].y_again = true;
        ++*count, *bytes += (double)b->bytes;
    }
}

// Every activation-sized buffer: placed in the arena (or allocated one each under
// CONVBENCH_MEMORY=separate) and set; *ok false when an allocation failed. maxact: the largest
// activation's element count (the plan's scratch).
static void arena_place(cb_exec *e, size_t maxact, bool *ok) {
    const cb_net *net = e->net;
    int n = net->nlayers, nb = 0;
    bool train = e->opts.train;
    arena_buf *bufs = cb_xcalloc((size_t)n * 9 + 1, sizeof *bufs);
    int *wbuf = cb_xcalloc((size_t)n, sizeof *wbuf), *wend = cb_xcalloc((size_t)n, sizeof *wend); // a weight copy's buffer, its last forward read
    int *lowest = cb_xcalloc((size_t)n, sizeof *lowest); // a routed gradient buffer lives to its lowest holder's backward
    for (int i = 0; i < n; i++) lowest[i] = i;
    for (int i = 0; i < n; i++)
        if (e->grad_alias[i] >= 0 && i < lowest[grad_root(e, i)]) lowest[grad_root(e, i)] = i;
    const int T = 2 * n - 1;
    int act_recomputed = 0; // (be->act_input_kept: layers whose activation's input is recomputed, not kept)
    double act_recomputed_bytes = 0;
    int *ybuf = cb_xcalloc((size_t)n, sizeof *ybuf), *first_child = cb_xcalloc((size_t)n, sizeof *first_child); // (cb_recompute)
    for (int i = 0; i < n; i++) first_child[i] = -1;
    for (int j = n - 1; j > 0; j--)
        for (int k = 0; k < net->layers[j].nparents; k++) first_child[net->layers[j].parents[k]] = j;
#define BWD(i) (2 * n - 1 - (i))
#define BUF(field, nbytes, from, to, k) add_buf(bufs, &nb, (void **)&e->lb[i].field, nbytes, from, to, k)
    for (int i = 0; i < n; i++) {
        const cb_layer *L = &net->layers[i];
        size_t bytes = (size_t)cb_shape_count(L->out) * e->act_bytes;
        bool pinned = i == 0 || i == n - 1;
        int hi = L->last_child >= 0 ? L->last_child : i; // its last consumer
        int lo = e->plan.node[e->plan.node_of[i]].layer[0];
        int kept = train ? BWD(i) : i;                  // the last read of what a layer keeps for backward
        ybuf[i] = -1;
        if (pinned) BUF(y, bytes, -1, T, CB_MEM_OUTPUTS);
        else if (cb_exec_output_transient(net, i, train) || relu_taken_transient(e, i)) BUF(y, bytes, lo, hi, CB_MEM_OUTPUTS);
        else {
            if (train && e->be->output_again && e->be->recompute_output && first_child[i] > i &&
                e->plan.node[e->plan.node_of[i]].nlayers == 1 && e->be->output_again(e, i))
                ybuf[i] = nb;
            BUF(y, bytes, lo, kept, CB_MEM_OUTPUTS);
        }
        if (L->bn) BUF(pre, bytes, lo, kept, CB_MEM_SAVED);
        if (train && cb_act_needs_input(L->act)) {
            if (!e->be->act_input_kept || e->be->act_input_kept(e, i)) BUF(act_in, bytes, lo, kept, CB_MEM_SAVED);
            else act_recomputed++, act_recomputed_bytes += bytes;
        }
        BUF(aux, aux_bytes(e, L, train), lo, kept, CB_MEM_SAVED);
        if (train && (i > 0 || !e->opts.no_data_grad) && e->grad_alias[i] < 0)
            BUF(dy, bytes, pinned ? -1 : BWD(hi), pinned ? T : BWD(lowest[i]), CB_MEM_GRADS);
        if (train && L->bn) BUF(dpre, bytes, BWD(i), BWD(i), CB_MEM_GRADS);
        if (train && i > 0 && !arena_separate()) BUF(acc, acc_bytes(e, i), BWD(i), BWD(i), CB_MEM_ACC);
        if (i > 0 && e->be->input_copy) { // (the backend's bytes, placed here as its own)
            size_t xc = e->be->input_copy(e, i);
            BUF(xcopy, xc, lo, lo, CB_MEM_BACKEND);
            if (train) BUF(xcopy_bwd, xc, BWD(i), BWD(i), CB_MEM_BACKEND);
            if (train && (L->parents[0] > 0 || !e->opts.no_data_grad)) BUF(dxcopy, xc, BWD(i), BWD(i), CB_MEM_BACKEND);
        }
        wbuf[i] = -1;
        if (i > 0 && e->be->weight_copy) { // read by the forward and, where a parent takes a gradient, the data gradient
            bool dgrad = train && (L->parents[0] > 0 || !e->opts.no_data_grad);
            int k = nb;
            wend[i] = i;
            BUF(wcopy, e->be->weight_copy(e, i), lo, dgrad ? BWD(i) : i, CB_MEM_BACKEND);
            if (nb > k) wbuf[i] = k;
        }
    }
    if (train) add_buf(bufs, &nb, (void **)&e->scratch, maxact * e->act_bytes, -1, -1, CB_MEM_ACC);
    if (act_recomputed)
        cb_exec_note(e, "memory: %d layers keep no input of their activation (SiLU, hardswish or GELU) for the backward, %.1f MiB "
                        "counted whole: their batch norm's backward recomputes it from its own input and statistics",
                     act_recomputed, act_recomputed_bytes / (1 << 20));
#undef BUF
#undef BWD
    if (train) { // the outputs made again in the backward (before the weight copies: the busiest point is theirs)
        int64_t budget = 0;
        bool limited = false;
        int at;
        if (e->opts.memory_budget) budget = (int64_t)e->opts.memory_budget - (int64_t)e->allocated, limited = true; // (what the arena may take)
        else if (e->be->mem_free && !e->opts.plan_only) {
            size_t fr = e->be->mem_free(e); // (less room for the workspaces and the libraries' own)
            if (fr) budget = (int64_t)fr - (int64_t)(fr / 20) - ((int64_t)256 << 20), limited = true;
        }
        int count;
        double again;
        int64_t before = live_peak(bufs, nb, T, &at), over = recompute_plan(e, bufs, nb, T, ybuf, first_child, limited, budget, &count, &again);
        e->again_saved = before - live_peak(bufs, nb, T, &at);
        if (count)
            cb_exec_note(e, "memory: %d layer outputs dropped after the forward and made again in the backward from their batch norm's input "
                            "(%.1f MiB counted whole; the activations' busiest point %.1f -> %.1f MiB%s%s), one more pass over that input each "
                            "(--recompute off keeps them)",
                         count, again / 1048576.0, before / 1048576.0, live_peak(bufs, nb, T, &at) / 1048576.0,
                         e->opts.recompute == CB_RECOMPUTE_AUTO ? ", to fit " : "",
                         e->opts.recompute != CB_RECOMPUTE_AUTO ? "" : e->opts.memory_budget ? "--max-memory" : "the device's free memory");
        if (over > 0)
            cb_exec_note(e, "memory: the activations' busiest point is %.1f MiB above what %s leaves them, and no more outputs can be made again",
                         over / 1048576.0, e->opts.memory_budget ? "--max-memory" : "the device's free memory");
        e->again_at = cb_xcalloc((size_t)n, sizeof *e->again_at);
        for (int j = 0; j < n; j++) e->again_at[j] = -1;
        for (int i = n - 1; i > 0; i--)
            if (e->lb[i].y_again) {
                int c = net->layers[i].last_child;
                e->lb[i].again_next = e->again_at[c], e->again_at[c] = i;
            }
        nb = split_weight_copies(e, bufs, nb, T, wbuf, wend);
    }
    free(ybuf);
    free(first_child);
    free(wbuf);
    free(wend);
    for (int k = 0; k < nb; k++) e->mem[bufs[k].kind] += bufs[k].bytes, e->mem_arena[bufs[k].kind] += bufs[k].bytes;
    arena_peak(e, bufs, nb, T);
    if (arena_separate()) { // (one scratch serves every layer's accumulation, as before the arena)
        for (int k = 0; k < nb; k++) *bufs[k].slot = take_kind(e, bufs[k].bytes, ok, CB_MEM_COUNT);
        for (int i = 1; i < n && train; i++) e->lb[i].acc = e->scratch;
    } else {
        for (int k = 0; k < nb; k++) bufs[k].whole = bufs[k].lo <= -1 && bufs[k].hi >= T;
        int order;
        size_t by_size, total = arena_first_fit(bufs, nb, &order, &by_size);
        if (order != ORDER_SIZE && !e->opts.plan_only)
            cb_exec_note(e, "arena: its buffers placed %s, %.1f MiB less than largest first (CONVBENCH_ARENA_ORDER=size keeps that)",
                         ORDER_NAMES[order], (by_size - total) / 1048576.0);
        e->arena = take_arena(e, total, ok);
        e->arena_bytes = e->arena || e->opts.plan_only ? total : 0;
        for (int k = 0; k < nb && e->arena; k++) *bufs[k].slot = (char *)e->arena + bufs[k].off;
        e->arena_map = cb_xcalloc((size_t)nb * 2 + 1, sizeof *e->arena_map); // (the workspaces' placement reads it)
        int m = 0;
        for (int k = 0; k < nb; k++) {
            e->arena_map[m++] = (struct cb_arena_slot){bufs[k].off, bufs[k].bytes, bufs[k].lo, bufs[k].hi, bufs[k].kind};
            if (has_second(&bufs[k])) e->arena_map[m++] = (struct cb_arena_slot){bufs[k].off, bufs[k].bytes, bufs[k].lo2, bufs[k].hi2, bufs[k].kind};
        }
        e->arena_nmap = m;
    }
    e->plan_scratch = e->scratch;
    for (int i = 0; i < n; i++)
        if (e->grad_alias[i] >= 0) e->lb[i].dy = e->lb[grad_root(e, i)].dy;
    free(lowest);
    free(bufs);
}

// ---- the workspaces in the arena ------------------------------------------------------------------
// A layer's workspace is read by its own call alone: its forward (at t = its plan node's head) or
// its backward (t = 2n-1-i). Where the arena has bytes that no buffer live at that t uses (the
// step's busiest point is elsewhere: the backward of the first layers, where most outputs are
// gone, is where cuDNN's largest workspaces are asked), the workspace takes them, placed largest
// first at the lowest such offset; only those that fit nowhere share one buffer outside the arena,
// sized by the largest of them. On the H200 (2026-11-27) that took ResNet-50 b64 bf16's small
// workspaces in (6 MiB off its plan), while AlexNet b128 tf32's 207 MiB and VGG-A b64 fp32's
// 1,324 MiB found no gap that large and stayed outside. $CONVBENCH_WORKSPACE=separate: one buffer
// for all, as before; arena: this placement in the arena's gaps only; unset or grow: where the
// backend's arena can grow (be->grow, the GPU backends), a workspace that fits no gap lies at the
// lowest offset free at its call, past the arena's end if need be, and the arena grows to hold it
// (AlexNet b128 tf32 NHWC on the H200, 2026-11-28: conv1's backward filter's 206.8 MiB grow the
// arena by 140.2 MiB, where a buffer of its own took 206.8). Returns the bytes outside the
// arena; top: the end of the highest placed (the arena's size, or what it must grow to). dry:
// places nothing (wsp, the memory counts and the busiest point untouched); out (n *
// CB_PHASE_COUNT, or NULL): 1 for each phase that sets the bytes added (the largest outside, the
// highest past the end).
static int ws_item_cmp(const void *a, const void *b) {
    const struct cb_arena_slot *x = a, *y = b;
    return x->bytes != y->bytes ? (x->bytes < y->bytes ? 1 : -1) : (x->lo > y->lo) - (x->lo < y->lo);
}
static int size_cmp(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}
// the arena's busiest point again, with the workspaces placed in it (each live at its own call; of
// those that share a t, the backward data and filter of a layer, one at a time: the largest counts)
static void arena_repeak(cb_exec *e, const struct cb_arena_slot *ws, int nws) {
    int T = 2 * e->net->nlayers - 1, at = -1;
    int64_t *d = cb_xcalloc((size_t)T + 3, sizeof *d), live = 0, most = -1;
    size_t *wmax = cb_xcalloc((size_t)T + 3, sizeof *wmax);
    for (int m = 0; m < e->arena_nmap; m++) {
        const struct cb_arena_slot *s = &e->arena_map[m];
        d[s->lo + 1] += (int64_t)s->bytes, d[s->hi + 2] -= (int64_t)s->bytes;
    }
    for (int m = 0; m < nws; m++)
        if (ws[m].bytes > wmax[ws[m].lo + 1]) wmax[ws[m].lo + 1] = ws[m].bytes;
    for (int t = -1; t <= T; t++) {
        live += d[t + 1];
        if (live + (int64_t)wmax[t + 1] > most) most = live + (int64_t)wmax[t + 1], at = t;
    }
    e->peak_at = at;
    memset(e->mem_peak, 0, sizeof e->mem_peak);
    for (int m = 0; m < e->arena_nmap; m++) {
        const struct cb_arena_slot *s = &e->arena_map[m];
        if (s->lo <= at && at <= s->hi && (unsigned)s->kind < CB_MEM_COUNT) e->mem_peak[s->kind] += s->bytes;
    }
    e->mem_peak[CB_MEM_WORKSPACE] += wmax[at + 1];
    free(wmax);
    free(d);
}

// May the workspaces lie past the arena's end, growing it (be->grow)? Not under
// $CONVBENCH_WORKSPACE=arena (the arena's gaps only) or separate.
static bool ws_grow(const cb_exec *e) { return e->arena && e->arena_map && e->be->grow && !e->opts.plan_only && ws_mode() == WS_GROW; }

static size_t workspace_place(cb_exec *e, bool dry, unsigned char *out, bool grow, size_t *top) {
    int n = e->net->nlayers, ni = 0;
    bool place = e->arena && e->arena_map && ws_mode() != WS_SEPARATE;
    // items: off holds the layer and phase (i * CB_PHASE_COUNT + p) until placed
    struct cb_arena_slot *it = cb_xcalloc((size_t)n * CB_PHASE_COUNT + 1, sizeof *it);
    for (int i = 0; i < n; i++)
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            if (!dry) e->lb[i].wsp[p] = NULL;
            if (out) out[i * CB_PHASE_COUNT + p] = 0;
            if (!e->lb[i].ws[p]) continue;
            int t = p == CB_PHASE_FORWARD ? e->plan.node[e->plan.node_of[i]].layer[0] : 2 * n - 1 - i;
            it[ni++] = (struct cb_arena_slot){(size_t)(i * CB_PHASE_COUNT + p), (e->lb[i].ws[p] + 255) / 256 * 256, t, t, CB_MEM_WORKSPACE};
        }
    qsort(it, (size_t)ni, sizeof *it, ws_item_cmp);
    struct cb_arena_slot *done = cb_xcalloc((size_t)ni + 1, sizeof *done); // the workspaces placed
    int *key = cb_xcalloc((size_t)ni + 1, sizeof *key), *left = cb_xcalloc((size_t)ni + 1, sizeof *left); // their phases; those outside
    const struct cb_arena_slot **live = cb_xcalloc((size_t)e->arena_nmap + 1, sizeof *live);
    size_t outside = 0, end = e->arena_bytes, *cand = cb_xcalloc((size_t)e->arena_nmap + 2, sizeof *cand);
    int nd = 0, nleft = 0;
    for (int k = 0; k < ni; k++) {
        int i = (int)(it[k].off / CB_PHASE_COUNT), p = (int)(it[k].off % CB_PHASE_COUNT), t = it[k].lo, nc = 0, nl = 0;
        size_t bytes = it[k].bytes, best = SIZE_MAX;
        cand[nc++] = 0; // the lowest offset: 0 or the end of a buffer live at t
        // the arena's buffers live at t; not the other workspaces: one call at a time reads one
        // (the backward data and filter of a layer share t, and run one after the other)
        for (int m = 0; place && m < e->arena_nmap; m++) {
            const struct cb_arena_slot *s = &e->arena_map[m];
            if (s->lo <= t && t <= s->hi) live[nl++] = s, cand[nc++] = s->off + s->bytes;
        }
        qsort(cand, (size_t)nc, sizeof *cand, size_cmp);
        for (int c = 0; place && c < nc && best == SIZE_MAX; c++) { // (ascending: the first that fits is the lowest)
            size_t off = cand[c];
            if (!grow && off + bytes > e->arena_bytes) break; // (growing: past the end too)
            bool clash = false;
            for (int m = 0; m < nl && !clash; m++) clash = off < live[m]->off + live[m]->bytes && live[m]->off < off + bytes;
            if (!clash) best = off;
        }
        if (best == SIZE_MAX) {
            if (bytes > outside) outside = bytes;
            left[nleft++] = (int)it[k].off;
            continue;
        }
        if (best + bytes > end) end = best + bytes;
        key[nd] = (int)it[k].off;
        done[nd++] = (struct cb_arena_slot){best, bytes, t, t, CB_MEM_WORKSPACE};
        if (dry) continue;
        e->lb[i].wsp[p] = (char *)e->arena + best;
        e->mem[CB_MEM_WORKSPACE] += bytes, e->mem_arena[CB_MEM_WORKSPACE] += bytes;
    }
    // the phases that set the bytes the workspaces add: the largest outside, the highest past the end
    for (int k = 0; out && k < nleft; k++)
        if ((e->lb[left[k] / CB_PHASE_COUNT].ws[left[k] % CB_PHASE_COUNT] + 255) / 256 * 256 == outside) out[left[k]] = 1;
    for (int k = 0; out && k < nd && end > e->arena_bytes; k++)
        if (done[k].off + done[k].bytes == end) out[key[k]] = 1;
    if (!dry && place) arena_repeak(e, done, nd);
    if (top) *top = end;
    free(cand);
    free(live);
    free(left);
    free(key);
    free(done);
    free(it);
    return outside;
}

// the phases as the notes name them (the trim's and the step check's)
static const char *const PH[CB_PHASE_COUNT] = {"forward", "backward-data", "backward-filter"};

// ---- workspace against time (cb_exec_opts.memory_slack) ------------------------------------------
// The workspaces that fit no gap of the arena add to the device's peak: the arena's growth past
// its end, or (where it cannot grow) one buffer of their own as large as the largest (AlexNet b128
// tf32 NHWC on the H200: one backward filter's 206.8 MiB put its peak above torch.compile's). The
// races kept each phase's fastest candidate (of least workspace within --workspace-slack of its
// layer's time); here the phases whose workspace sets those added bytes (workspace_place's out)
// give way to their fastest candidate of less workspace (be->revise with a cap), tied phases
// together, for as long as the added bytes fall and the races' times lost add up to at most
// memory_slack of the planned step (the sum of every phase's race time). One note says what
// switched and, where the next switch would cost more than is left, what it would have cost
// (GoogLeNet b128 fp32 on the H200: four phases, 204.3 to 142.0 MiB, +0.22 ms of race time).
static void workspace_trim(cb_exec *e) {
    const cb_backend *be = e->be;
    int n = e->net->nlayers, nk = n * CB_PHASE_COUNT;
    if (!be->revise || !(e->opts.memory_slack > 0) || !e->arena || !e->arena_map) return;
    double step = 0;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < CB_PHASE_COUNT; p++)
            if (e->lb[i].choice[p].impl != CB_IMPL_NONE && e->lb[i].choice[p].ms > 0) step += e->lb[i].choice[p].ms;
    unsigned char *out = cb_xcalloc((size_t)nk + 1, 1);
    int *group = cb_xcalloc((size_t)nk + 1, sizeof *group);
    size_t *was_ws = cb_xcalloc((size_t)nk + 1, sizeof *was_ws);
    double budget = e->opts.memory_slack * step, spent = 0;
    bool grow = ws_grow(e);
    size_t top = 0, outside = workspace_place(e, true, out, grow, &top);
    outside += top - e->arena_bytes; // (the bytes the workspaces add: the buffer outside, the arena's growth)
    size_t first = outside;
    char note[CB_EXEC_NOTE_LEN] = "", why[200] = "";
    size_t len = 0;
    int kept = 0;
    for (int round = 0; round < 64 && outside > 0; round++) {
        int ng = 0;
        bool all = true;
        double cost = 0;
        for (int k = 0; k < nk && all; k++) { // the phases of the buffer's size switch together
            int i = k / CB_PHASE_COUNT, p = k % CB_PHASE_COUNT;
            cb_lbuf *b = &e->lb[i];
            if (!out[k]) continue;
            double was_ms = b->choice[p].ms;
            if (b->choice[p].flags & (CB_CHOICE_FORCED | CB_CHOICE_IN_FUSED) || !be->revise(e, i, (cb_phase)p, b->ws[p] - 1, false)) {
                all = false;
                break;
            }
            group[ng++] = k, was_ws[k] = b->ws[p];
            b->ws[p] = b->choice[p].workspace;
            cost += b->choice[p].ms - was_ms;
            b->choice[p].rival_ms = was_ms;
        }
        size_t now = outside;
        if (all && ng) now = workspace_place(e, true, out, grow, &top), now += top - e->arena_bytes;
        bool keep = all && ng && now < outside && spent + cost <= budget;
        if (!keep && all && ng && now < outside && !*why) {
            const cb_layer *L = &e->net->layers[group[0] / CB_PHASE_COUNT];
            snprintf(why, sizeof why, "; '%s' %s%s would take it to %.1f MiB for %.3f ms more", L->name, PH[group[0] % CB_PHASE_COUNT],
                     ng > 1 ? " and its peers" : "", now / 1048576.0, cost);
        }
        for (int g = 0; g < ng; g++) {
            int k = group[g], i = k / CB_PHASE_COUNT, p = k % CB_PHASE_COUNT;
            cb_lbuf *b = &e->lb[i];
            if (!keep) {
                be->revise(e, i, (cb_phase)p, 0, true);
                b->ws[p] = was_ws[k];
                continue;
            }
            b->choice[p].flags |= CB_CHOICE_LESS_WORKSPACE;
            char item[200];
            int w = snprintf(item, sizeof item, "%s'%s' %s: %s %.1f -> %.1f MiB, %+.3f ms", kept ? "; " : "", e->net->layers[i].name, PH[p],
                             b->algo[p], was_ws[k] / 1048576.0, b->ws[p] / 1048576.0, b->choice[p].ms - b->choice[p].rival_ms);
            if (w > 0 && len + (size_t)w < 160) memcpy(note + len, item, (size_t)w + 1), len += (size_t)w;
            else if (len + 6 < 170 && !strstr(note, "; ...")) memcpy(note + len, "; ...", 6), len += 5;
            kept++;
            b->choice[p].workspace = b->ws[p];
            cb_choice_format(&b->choice[p], e->net, b->algo[p], sizeof b->algo[p]);
        }
        if (!keep) break;
        spent += cost, outside = now;
    }
    if (kept || *why) {
        note[len] = 0;
        if (kept)
            cb_exec_note(e, "workspace beyond the arena %.1f -> %.1f MiB: %d phases on less workspace, %+.3f ms of the %.3f that "
                            "--memory-slack allows (%.3f ms planned): %s%s",
                         first / 1048576.0, outside / 1048576.0, kept, spent, budget, step, note, why);
        else
            cb_exec_note(e, "workspace beyond the arena %.1f MiB, kept for speed (--memory-slack allows %.3f ms of the %.3f planned)%s",
                         outside / 1048576.0, budget, step, why);
    }
    free(was_ws);
    free(group);
    free(out);
}

// the workspace of layer i's phase p (the engine sets e->ws to it before each call)
static void *ws_of(const cb_exec *e, int i, int p) { return e->lb[i].wsp[p] ? e->lb[i].wsp[p] : e->ws_all; }

static void param_counts(const cb_layer *L, int64_t *nw, int64_t *nb, int64_t *nbn) {
    *nw = *nb = *nbn = 0;
    if (L->op == CB_OP_CONV) {
        *nw = (int64_t)L->p.conv.k * L->p.conv.cin * L->p.conv.win.r * L->p.conv.win.s;
        *nb = L->p.conv.bias ? L->p.conv.k : 0;
    } else if (L->op == CB_OP_FC) {
        *nw = L->in.c * L->p.fc.k;
        *nb = L->p.fc.bias ? L->p.fc.k : 0;
    } else if (L->op == CB_OP_BATCHNORM) {
        *nbn = L->out.c;
    } else if (L->op == CB_OP_LAYERNORM || L->op == CB_OP_SCALE) { // per-channel weight (and LayerNorm's bias)
        *nw = L->out.c;
        *nb = L->op == CB_OP_LAYERNORM ? L->out.c : 0;
    }
    if (L->bn) *nbn = L->out.c;
}

static void init_params(cb_exec *e, float *host_params, float *host_stats) {
    uint64_t s = e->opts.seed ? e->opts.seed : 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < e->net->nlayers; i++) {
        const cb_layer *L = &e->net->layers[i];
        cb_lbuf *b = &e->lb[i];
        double fan_in = L->op == CB_OP_CONV ? (double)L->p.conv.cin * L->p.conv.win.r * L->p.conv.win.s : (double)L->in.c;
        if (b->nw && (L->op == CB_OP_LAYERNORM || L->op == CB_OP_SCALE)) { // PyTorch's: weight 1, bias 0
            for (int64_t j = 0; j < b->nw; j++) host_params[(b->w - e->params) + j] = 1;
            for (int64_t j = 0; j < b->nb; j++) host_params[(b->b - e->params) + j] = 0;
        } else if (b->nw) {
            // PyTorch's default for Conv2d and Linear (kaiming_uniform with a = sqrt(5)), weights and
            // bias alike U(-1/sqrt(fan_in), 1/sqrt(fan_in)): the peers start from the same scale
            float wb = (float)(1.0 / sqrt(fan_in)), bb = wb;
            float *w = host_params + (b->w - e->params);
            for (int64_t j = 0; j < b->nw; j++) w[j] = wb * cb_rng_uniform(&s);
            if (b->nb) {
                float *bias = host_params + (b->b - e->params);
                for (int64_t j = 0; j < b->nb; j++) bias[j] = bb * cb_rng_uniform(&s);
            }
        }
        if (b->nbn) {
            float *g = host_params + (b->gamma - e->params), *be = host_params + (b->beta - e->params);
            float *rm = host_stats + (b->rmean - e->stats), *rv = host_stats + (b->rvar - e->stats);
            for (int64_t j = 0; j < b->nbn; j++) g[j] = 1, be[j] = 0, rm[j] = 0, rv[j] = 1;
        }
    }
}

void cb_exec_destroy(cb_exec *e) {
    if (!e) return;
    if (e->lb) {
        for (int i = 0; i < e->net->nlayers; i++) {
            cb_lbuf *b = &e->lb[i];
            bool own = !e->arena; // (else every activation-sized buffer lies in the arena)
            bool dy_own = own && (!e->grad_alias || e->grad_alias[i] < 0); // (a routed dy is its sum's)
            void *bufs[] = {own ? b->y : NULL, dy_own ? b->dy : NULL, own ? b->pre : NULL, own ? b->dpre : NULL,
                            own ? b->act_in : NULL, own ? b->aux : NULL, own ? b->xcopy : NULL, own ? b->xcopy_bwd : NULL,
                            own ? b->dxcopy : NULL, own ? b->wcopy : NULL, own ? b->wcopy_bwd : NULL, b->bn_mean, b->bn_invstd}; // (acc: the scratch, once)
            for (size_t j = 0; j < sizeof bufs / sizeof bufs[0]; j++)
                if (bufs[j]) e->be->release(e, bufs[j]);
        }
    }
    void *bufs[] = {e->params, e->grads, e->moms, e->stats, e->ws_all, e->arena ? NULL : e->plan_scratch, e->prob, e->labels, e->arena};
    for (size_t j = 0; j < sizeof bufs / sizeof bufs[0]; j++)
        if (bufs[j]) e->be->release(e, bufs[j]);
    if (e->be->destroy) e->be->destroy(e);
    cb_plan_free(&e->plan);
    free(e->lb);
    free(e->grad_ready);
    free(e->grad_alias);
    free(e->span);
    free(e->again_at);
    free(e->arena_map);
    free(e);
}

// opts.plan_only: nothing runs. Where the plan updates the weights, the GPU backends' storage copies
// of them (bf16, NHWC) join its arena as those backends place them (cb_store_weight_copy), unless
// CONVBENCH_WEIGHT_COPY=keep leaves them the backend's own
static size_t plan_only_weight_copy(const cb_exec *e, int i) {
    const char *mode = getenv("CONVBENCH_WEIGHT_COPY");
    bool keep = (mode && !strcmp(mode, "keep")) || ((!mode || !*mode) && e->opts.no_update);
    return e->opts.train && !keep ? cb_weight_copy_bytes(&e->net->layers[i], e->opts.precision, e->opts.layout) : 0;
}
cb_status cb_env_on_off(const char *var, int *on, cb_error *err) {
    const char *v = getenv(var);
    *on = -1;
    if (!v || !*v) return CB_OK;
    if (!strcmp(v, "on") || !strcmp(v, "1")) return *on = 1, CB_OK;
    if (!strcmp(v, "off") || !strcmp(v, "0")) return *on = 0, CB_OK;
    return err ? cb_fail(err, CB_STATUS_ARG, var, NULL, "'%s' is not on, off, 1 or 0", v) : CB_STATUS_ARG;
}
cb_status cb_env_fuse_epilogue(bool *on, cb_error *err) {
    int v;
    cb_status st = cb_env_on_off("CONVBENCH_FUSE_EPILOGUE", &v, err);
    *on = v != 0;
    return st;
}
cb_status cb_env_concat_relu(bool *on, cb_error *err) {
    bool fuse;
    int v;
    cb_status st = cb_env_fuse_epilogue(&fuse, err);
    if (st == CB_OK) st = cb_env_on_off("CONVBENCH_CONCAT_RELU", &v, err);
    *on = st == CB_OK && fuse && v != 0;
    return st;
}

// and its max pools take over the ReLU before them as the cpu, cuda and auto backends' do (not
// cudnn's cuDNN pools), unless CONVBENCH_FUSE_EPILOGUE=off, and its concatenations their inputs' as
// every backend but the reference's do, unless that or CONVBENCH_CONCAT_RELU=off
static bool plan_only_relu_mask(const cb_exec *e, int i) {
    bool on;
    cb_env_fuse_epilogue(&on, NULL);
    return on;
}
static bool plan_only_concat_relu_mask(const cb_exec *e, int i) {
    bool on;
    cb_env_concat_relu(&on, NULL);
    return on;
}
const cb_backend cb_backend_plan_only = {.name = "plan only", .weight_copy = plan_only_weight_copy, .pool_relu_mask = plan_only_relu_mask,
                                         .concat_relu_mask = plan_only_concat_relu_mask};

// The step check (cb_exec_opts.step_check): a choice raced alone, on its layer's buffers, can run
// far slower inside the step (on the H200, cuDNN's BWD_FILTER_ALGO_0 took 0.13 ms in its race and
// 0.90-0.97 ms in each step of a bf16 NHWC network, on three 1x1 layers, where the graph engine
// it beat took 0.15). So after the plan, whole training steps (forward, criterion, backward, no
// update) are timed layer by layer; each phase whose time there exceeds twice its race's plus
// STEP_CHECK_SLACK_MS is switched to its next candidate (be->revise), the steps are timed again,
// and the switch is kept only where that phase got faster by a fifth, else undone. A kept switch
// is marked on its choice (CB_CHOICE_STEP_CHECKED) and said in a note. The running statistics the
// steps moved are put back.
#define STEP_CHECK_SLACK_MS 0.05
// $CONVBENCH_STEP_CHECK (tests): unset or timed, as above (where opts.step_check asks); force: in
// every training exec, each phase the backend can switch is switched and kept, whatever the times
// (its next candidate then runs every step, against the reference in the tests); undo: each is
// switched and undone (the choice must come back whole). -1: a bad value.
enum { STEP_TIMED, STEP_FORCE, STEP_UNDO };
static int step_check_mode(void) {
    const char *m = getenv("CONVBENCH_STEP_CHECK");
    return !m || !*m || !strcmp(m, "timed") ? STEP_TIMED : !strcmp(m, "force") ? STEP_FORCE : !strcmp(m, "undo") ? STEP_UNDO : -1;
}
static double piece_ms(const cb_layer_times *t, int i, int p) {
    return p == CB_PHASE_FORWARD ? t[i].ms[p] - t[i].epilogue_ms[0] : p == CB_PHASE_BWD_DATA ? t[i].ms[p] - t[i].epilogue_ms[1] : t[i].ms[p];
}
// the least time of each layer's phases over `reps` steps after one untimed (into best)
static void step_times(cb_exec *e, cb_layer_times *t, double *best, int reps) {
    int n = e->net->nlayers;
    for (int k = 0; k < n * CB_PHASE_COUNT; k++) best[k] = -1;
    for (int r = 0; r <= reps; r++) {
        cb_exec_forward(e, true, r ? t : NULL);
        cb_exec_criterion_forward(e, NULL, NULL);
        cb_exec_criterion_backward(e, NULL);
        cb_exec_backward(e, r ? t : NULL);
        for (int i = 1; r && i < n; i++)
            for (int p = 0; p < CB_PHASE_COUNT; p++) {
                double ms = piece_ms(t, i, p), *b = &best[i * CB_PHASE_COUNT + p];
                if (*b < 0 || ms < *b) *b = ms;
            }
    }
}
static void step_check(cb_exec *e, int mode) {
    const cb_backend *be = e->be;
    int n = e->net->nlayers;
    if (!be->revise || !be->mark) return;
    cb_layer_times *t = calloc((size_t)n, sizeof *t);
    double *before = malloc(sizeof(double) * (size_t)n * CB_PHASE_COUNT), *after = malloc(sizeof(double) * (size_t)n * CB_PHASE_COUNT);
    bool *switched = calloc((size_t)n * CB_PHASE_COUNT, 1);
    float *stats = e->nstats ? malloc((size_t)e->nstats * 4) : NULL;
    if (!t || !before || !after || !switched || (e->nstats && !stats)) abort();
    if (stats) be->download(e, stats, e->stats, (size_t)e->nstats * 4);
    step_times(e, t, before, mode == STEP_TIMED ? 2 : 0);
    int nsw = 0;
    for (int i = 1; i < n; i++)
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            const cb_choice *c = &e->lb[i].choice[p];
            double m = before[i * CB_PHASE_COUNT + p];
            if (c->impl == CB_IMPL_NONE || (c->flags & (CB_CHOICE_FORCED | CB_CHOICE_IN_FUSED)) ||
                (mode == STEP_TIMED && (c->ms <= 0 || m <= 2 * c->ms + STEP_CHECK_SLACK_MS)))
                continue;
            if (be->revise(e, i, (cb_phase)p, e->lb[i].ws[p], false)) switched[i * CB_PHASE_COUNT + p] = true, nsw++;
        }
    if (nsw) {
        step_times(e, t, after, mode == STEP_TIMED ? 2 : 0);
        // one note for all: each kept switch, as many as fit, then how many more
        char note[CB_EXEC_NOTE_LEN];
        size_t len = 0, room = sizeof note - 40;
        int kept = 0, said = 0;
        for (int i = 1; i < n; i++)
            for (int p = 0; p < CB_PHASE_COUNT; p++) {
                int k = i * CB_PHASE_COUNT + p;
                if (!switched[k]) continue;
                cb_lbuf *b = &e->lb[i];
                if (mode == STEP_FORCE || (mode == STEP_TIMED && after[k] >= 0 && after[k] < 0.8 * before[k])) {
                    char item[240], now[64];
                    b->choice[p].flags &= ~(unsigned)CB_CHOICE_RACED;
                    cb_choice_format(&b->choice[p], e->net, now, sizeof now); // (before the mark: the name alone)
                    b->choice[p].flags |= CB_CHOICE_STEP_CHECKED;
                    b->choice[p].ms = after[k], b->choice[p].rival_ms = before[k];
                    int w = mode == STEP_FORCE ? snprintf(item, sizeof item, "%s'%s' %s: %s -> %s", kept ? "; " : "", e->net->layers[i].name,
                                                          PH[p], b->algo[p], now)
                                               : snprintf(item, sizeof item, "%s'%s' %s: %s %.3f -> %s %.3f ms", kept ? "; " : "",
                                                          e->net->layers[i].name, PH[p], b->algo[p], before[k], now, after[k]);
                    if (w > 0 && len + (size_t)w < room) memcpy(note + len, item, (size_t)w + 1), len += (size_t)w, said++;
                    kept++;
                    cb_choice_format(&b->choice[p], e->net, b->algo[p], sizeof b->algo[p]);
                } else be->revise(e, i, (cb_phase)p, 0, true);
            }
        if (kept) {
            note[len] = 0;
            if (mode == STEP_FORCE)
                cb_exec_note(e, "step check (CONVBENCH_STEP_CHECK=force): %d phases switched: %s%s", kept, note, said < kept ? "; ..." : "");
            else
                cb_exec_note(e, "step check: %d phases ran at over twice their race's time in whole steps; %d replaced by a candidate "
                                "faster there (time in the step): %s%s", nsw, kept, note, said < kept ? "; ..." : "");
        }
    }
    if (stats) be->upload(e, e->stats, stats, (size_t)e->nstats * 4);
    free(stats);
    free(switched);
    free(after);
    free(before);
    free(t);
}

cb_exec *cb_exec_create(cb_net *net, const cb_exec_opts *opts, cb_error *err) {
    if (!opts->plan_only && cb_backend_supports(net, opts, err) != CB_REASON_NONE) return NULL;
    return cb_exec_create_on(net, opts, opts->plan_only ? &cb_backend_plan_only : cb_backend_find(opts->backend), err);
}

cb_exec *cb_exec_create_on(cb_net *net, const cb_exec_opts *opts, const cb_backend *be, cb_error *err) {
    const char *mem = getenv("CONVBENCH_MEMORY");
    if (mem && *mem && strcmp(mem, "reuse") && strcmp(mem, "separate")) {
        cb_fail(err, CB_STATUS_ARG, "CONVBENCH_MEMORY", NULL, "'%s' is not reuse or separate", mem);
        return NULL;
    }
    if (ws_mode() < 0) {
        cb_fail(err, CB_STATUS_ARG, "CONVBENCH_WORKSPACE", NULL, "'%s' is not grow, arena or separate", getenv("CONVBENCH_WORKSPACE"));
        return NULL;
    }
    const char *order = getenv("CONVBENCH_ARENA_ORDER");
    if (order && *order && strcmp(order, "size") && strcmp(order, "best")) {
        cb_fail(err, CB_STATUS_ARG, "CONVBENCH_ARENA_ORDER", NULL, "'%s' is not size or best", order);
        return NULL;
    }
    const char *route = getenv("CONVBENCH_GRAD_ROUTE");
    if (route && *route && strcmp(route, "direct") && strcmp(route, "copy")) {
        cb_fail(err, CB_STATUS_ARG, "CONVBENCH_GRAD_ROUTE", NULL, "'%s' is not direct or copy", route);
        return NULL;
    }
    int check_mode = step_check_mode();
    if (check_mode < 0) {
        cb_fail(err, CB_STATUS_ARG, "CONVBENCH_STEP_CHECK", NULL, "'%s' is not timed, force or undo", getenv("CONVBENCH_STEP_CHECK"));
        return NULL;
    }
    cb_exec *e = cb_xcalloc(1, sizeof *e);
    e->grad_copy = route && !strcmp(route, "copy");
    e->net = net;
    e->opts = *opts;
    e->be = be;
    e->rng = opts->seed * 0x9E3779B97F4A7C15ULL + 1;
    int n = net->nlayers;
    e->lb = cb_xcalloc((size_t)n, sizeof(cb_lbuf));
    e->act_bytes = opts->plan_only && opts->precision == CB_PREC_BF16 ? 2 : 4; // a backend storing bf16 activations sets 2 in init
    e->grad_ready = cb_xcalloc((size_t)n, sizeof(bool));
    e->grad_alias = cb_xcalloc((size_t)n, sizeof(int));
    grad_alias_plan(e);
    e->span = cb_xcalloc((size_t)n * CB_SPAN_COUNT * 2, sizeof(int));
    if (be->init && be->init(e, err) != CB_OK) {
        e->be = be;
        free(e->lb);
        e->lb = NULL;
        cb_exec_destroy(e);
        return NULL;
    }
    const cb_layer *last = &net->layers[n - 1];
    // parameters: one arena each for values, gradients, momentum; every tensor in them starts on
    // a 256-byte boundary (cb_param_slot), as a buffer of its own would: cuDNN's graph engines and
    // vector loads read them (a weight gradient 4-byte aligned after an odd channel count's batch
    // norm took a tf32 backward-filter engine down with a misaligned address). The gaps stay 0.
    int64_t np = 0, ns = 0;
    for (int i = 0; i < n; i++) {
        cb_lbuf *b = &e->lb[i];
        param_counts(&net->layers[i], &b->nw, &b->nb, &b->nbn);
        np += cb_param_slot(b->nw) + cb_param_slot(b->nb) + 2 * cb_param_slot(b->nbn);
        ns += 2 * cb_param_slot(b->nbn);
    }
    e->nparams = np;
    e->nstats = ns;
    bool ok = true, train = opts->train;
    e->params = take_kind(e, (size_t)np * 4, &ok, CB_MEM_PARAMS);
    if (train) e->grads = take_kind(e, (size_t)np * 4, &ok, CB_MEM_PARAMS);
    if (train && opts->momentum != 0 && !opts->no_update) e->moms = take_kind(e, (size_t)np * 4, &ok, CB_MEM_PARAMS);
    e->stats = take_kind(e, (size_t)ns * 4, &ok, CB_MEM_PARAMS);
    int64_t off = 0, soff = 0, maxact = 0;
    for (int i = 0; i < n && ok; i++) {
        cb_lbuf *b = &e->lb[i];
        const cb_layer *L = &net->layers[i];
        float *pw = e->params, *pg = e->grads;
#define SLICE(field, gfield, count)                                                                                    \
    if (count && pw) { /* (no parameters allocated: plan_only) */                                                      \
        b->field = pw + off;                                                                                           \
        if (pg) b->gfield = pg + off;                                                                                  \
        off += cb_param_slot(count);                                                                                      \
    }
        SLICE(w, dw, b->nw)
        SLICE(b, db, b->nb)
        SLICE(gamma, dgamma, b->nbn)
        SLICE(beta, dbeta, b->nbn)
#undef SLICE
        if (b->nbn && e->stats) {
            b->rmean = e->stats + soff;
            b->rvar = e->stats + soff + cb_param_slot(b->nbn);
            soff += 2 * cb_param_slot(b->nbn);
        }
        if (cb_shape_count(L->out) > maxact) maxact = cb_shape_count(L->out);
        if (L->bn || L->op == CB_OP_BATCHNORM) { // (y, pre, act_in, aux: the arena)
            b->bn_mean = take_kind(e, (size_t)L->out.c * 4, &ok, CB_MEM_SAVED);
            b->bn_invstd = take_kind(e, (size_t)L->out.c * 4, &ok, CB_MEM_SAVED);
        }
    }
    cb_plan_build(net, opts->train, &e->plan); // (the arena reads it)
    relu_takeover_plan(e);
    if (ok) arena_place(e, (size_t)maxact, &ok);
    int64_t classes = last->out.c * last->out.h * last->out.w;
    e->labels = take_kind(e, (size_t)last->out.n * 4, &ok, CB_MEM_CRITERION);
    if (last->op != CB_OP_SOFTMAX) e->prob = take_kind(e, (size_t)last->out.n * (size_t)classes * 4, &ok, CB_MEM_CRITERION);
    if (opts->plan_only) return e; // (counted: nothing allocated, initialised or planned by a backend)
    if (!ok) {
        char why[200] = "";
        bool lost = be->alloc_why && be->alloc_why(e, why, sizeof why);
        if (!lost && e->past_ram) snprintf(why, sizeof why, "this machine has %.1f MiB", host_ram() / (1 << 20));
        cb_fail(err, lost ? CB_STATUS_DEVICE : CB_STATUS_NOMEM, net->path, NULL,
                "%s %s memory: the buffers at batch %lld need %.1f MiB (%s after %.1f MiB)%s%s",
                lost ? "no" : "out of", be->device ? "device" : "host", (long long)cb_net_batch(net), e->planned / (1 << 20),
                e->past_ram ? "refused" : "an allocation failed", (double)e->allocated / (1 << 20), *why ? ": " : "", why);
        cb_exec_destroy(e);
        return NULL;
    }
    // parameters and labels, initialised on the host and copied in once
    float *hp = calloc((size_t)(np ? np : 1), 4), *hs = calloc((size_t)(ns ? ns : 1), 4); // (hp's gaps between tensors: 0)
    int32_t *hl = malloc((size_t)last->out.n * 4);
    if (!hp || !hs || !hl) abort();
    init_params(e, hp, hs);
    for (int64_t j = 0; j < last->out.n; j++) hl[j] = (int32_t)(cb_rng_next(&e->rng) % (uint64_t)classes);
    if (np) be->upload(e, e->params, hp, (size_t)np * 4);
    if (ns) be->upload(e, e->stats, hs, (size_t)ns * 4);
    be->upload(e, e->labels, hl, (size_t)last->out.n * 4);
    if (e->moms) be->fill(e, e->moms, 0, (size_t)np);
    if (e->grads) be->fill(e, e->grads, 0, (size_t)np); // (no backward writes the gaps)
    e->param_version = 1;
    // a deterministic, non-zero input
    int64_t nin = cb_shape_count(net->layers[0].out);
    float *hx = malloc((size_t)nin * 4);
    if (!hx) abort();
    for (int64_t j = 0; j < nin; j++) hx[j] = cb_rng_uniform(&e->rng);
    cb_exec_act_upload(e, 0, e->lb[0].y, hx);
    free(hx);
    free(hp);
    free(hs);
    free(hl);
    if (cb_net_weights_apply(e, err) != CB_OK) { // the description's own weights (ONNX)
        cb_exec_destroy(e);
        return NULL;
    }
    // algorithms and workspace, node by node of the plan (a group's head plans it; the plan was
    // built before the arena)
    for (int i = 0; i < n; i++)
        for (int p = 0; p < CB_PHASE_COUNT; p++) e->lb[i].choice[p] = cb_choice_of(CB_IMPL_NONE, -1, "");
    for (int i = 0; i < n; i++) {
        if (be->plan && be->plan(e, i, err) != CB_OK) {
            cb_exec_destroy(e);
            return NULL;
        }
        char why[200];
        if (be->plan && be->device_ok && !be->device_ok(e, why, sizeof why)) { // (a kernel of its plan failed)
            cb_fail(err, CB_STATUS_DEVICE, net->path, net->layers[i].name, "while planning this layer, %s", why);
            cb_exec_destroy(e);
            return NULL;
        }
        for (int p = 0; p < CB_PHASE_COUNT; p++)
            if (e->lb[i].ws[p] > e->ws_bytes) e->ws_bytes = e->lb[i].ws[p];
    }
    for (int i = 0; i < n; i++) // (a fused layer's choice is set by its partner's plan: printed once all are planned)
        for (int p = 0; p < CB_PHASE_COUNT; p++) {
            cb_lbuf *b = &e->lb[i];
            b->choice[p].workspace = b->ws[p];
            cb_choice_format(&b->choice[p], net, b->algo[p], sizeof b->algo[p]);
        }
    ok = true;
    workspace_trim(e);
    bool grow = ws_grow(e);
    size_t top = 0;
    if (grow) { // the arena grows to hold the workspaces past its end
        workspace_place(e, true, NULL, true, &top);
        size_t apart = top > e->arena_bytes ? workspace_place(e, true, NULL, false, NULL) : 0; // (without growing)
        if (top > e->arena_bytes && e->be->grow(e, e->arena, top)) {
            size_t more = top - e->arena_bytes;
            e->planned += (double)more, e->allocated += more, e->engine_bytes += more, e->arena_grown = more;
            cb_exec_note(e, "workspace: the arena grew %.1f MiB (to %.1f) to hold the workspaces no gap of it held, where a buffer of "
                            "their own would take %.1f MiB ($CONVBENCH_WORKSPACE=arena)",
                         more / 1048576.0, top / 1048576.0, apart / 1048576.0);
            e->arena_bytes = top;
        } else if (top > e->arena_bytes) grow = false; // (out of memory: the buffer outside, as without)
    }
    e->ws_bytes = workspace_place(e, false, NULL, grow, &top);
    e->ws = e->ws_all = take_kind(e, e->ws_bytes, &ok, CB_MEM_WORKSPACE);
    if (!ok) {
        char why[200] = "";
        bool lost = be->alloc_why && be->alloc_why(e, why, sizeof why);
        cb_fail(err, lost ? CB_STATUS_DEVICE : CB_STATUS_NOMEM, net->path, NULL, "%s %s memory for a %.1f MiB workspace%s%s",
                lost ? "no" : "out of", be->device ? "device" : "host", (double)e->ws_bytes / (1 << 20), *why ? ": " : "", why);
        cb_exec_destroy(e);
        return NULL;
    }
    if (opts->train && (opts->step_check || check_mode != STEP_TIMED)) step_check(e, check_mode);
    return e;
}

void cb_exec_act_upload(cb_exec *e, int layer, void *dev, const float *host) {
    if (e->be->act_upload) e->be->act_upload(e, layer, dev, host);
    else e->be->upload(e, dev, host, (size_t)cb_shape_count(e->net->layers[layer].out) * 4);
}

void cb_exec_act_download(cb_exec *e, int layer, float *host, const void *dev) {
    if (e->be->act_download) e->be->act_download(e, layer, host, dev);
    else e->be->download(e, host, dev, (size_t)cb_shape_count(e->net->layers[layer].out) * 4);
}

// fill n elements of an activation-typed buffer (a gradient dy)
static void act_fill(cb_exec *e, void *dst, float v, size_t n) {
    if (e->be->act_fill) e->be->act_fill(e, dst, v, n);
    else e->be->fill(e, dst, v, n);
}

cb_status cb_exec_set_input(cb_exec *e, const float *x, const int32_t *labels) {
    if (x) cb_exec_act_upload(e, 0, e->lb[0].y, x);
    if (labels) e->be->upload(e, e->labels, labels, (size_t)cb_net_batch(e->net) * 4);
    return CB_OK;
}

// Per-layer timing of a pass. With the backend's marks, each piece of a layer's work (the op, its
// epilogue, its gradients) runs between two marks and nothing waits between layers: the pieces add
// up to the pass, launch gaps included in the piece they delay. Without marks (the CPU), each
// piece is timed on its own. span keeps each piece's first and last mark, read after the pass.
typedef struct pass_clock {
    cb_exec *e;
    bool on, marks, held;
    int last; // the latest mark
} pass_clock;

static pass_clock clock_begin(cb_exec *e, cb_layer_times *t) {
    pass_clock c = {e, t != NULL, t && e->be->mark, false, -1};
    if (!c.on) return c;
    for (int j = 0; j < e->net->nlayers * CB_SPAN_COUNT * 2; j++) e->span[j] = -1;
    if (c.marks) {
        c.held = e->hold && e->be->hold && e->be->hold(e, true) >= 0;
        e->be->mark_reset(e);
        c.last = e->be->mark(e);
    }
    return c;
}
static void clock_start(pass_clock *c) {
    if (c->on && !c->marks) c->e->be->timer_start(c->e);
}
// piece p of layer i ends: its time adds to *ms (timed alone) or its marks go to span
static void clock_stop(pass_clock *c, int i, int p, double *ms) {
    if (!c->on) return;
    if (!c->marks) {
        *ms += c->e->be->timer_stop(c->e);
        return;
    }
    int *s = c->e->span + ((size_t)i * CB_SPAN_COUNT + p) * 2, m = c->e->be->mark(c->e);
    if (s[0] < 0) s[0] = c->last;
    s[1] = m;
    c->last = m;
}
// the pass is queued: the device may run it (cb_exec_hold)
static void clock_queued(pass_clock *c) {
    if (c->held) c->e->be->hold(c->e, false);
    c->held = false;
}
// with marks: the time of piece p of layer i (0 where it did not run)
static double clock_span(const pass_clock *c, int i, int p) {
    const int *s = c->e->span + ((size_t)i * CB_SPAN_COUNT + p) * 2;
    return c->marks && s[0] >= 0 && s[1] >= 0 ? c->e->be->mark_ms(c->e, s[0], s[1]) : 0;
}

cb_status cb_exec_forward(cb_exec *e, bool train, cb_layer_times *t) {
    if (train && !e->opts.train) return CB_STATUS_ARG;
    if (train && e->be->step_begin) e->be->step_begin(e);
    e->pass++, e->in_backward = false;
    pass_clock c = clock_begin(e, t);
    for (int i = 0; t && i < e->net->nlayers; i++) t[i].ms[CB_PHASE_FORWARD] = t[i].epilogue_ms[0] = 0;
    for (int i = 1; i < e->net->nlayers; i++) {
        const cb_layer *L = &e->net->layers[i];
        clock_start(&c);
        e->ws = ws_of(e, i, CB_PHASE_FORWARD);
        e->be->forward(e, i, train);
        e->ws = e->ws_all;
        clock_stop(&c, i, CB_SPAN_FWD_OP, t ? &t[i].ms[CB_PHASE_FORWARD] : NULL);
        if (!e->be->forward_epilogue || (!L->bn && L->act == CB_ACT_NONE)) continue;
        clock_start(&c);
        e->be->forward_epilogue(e, i, train);
        clock_stop(&c, i, CB_SPAN_FWD_EPI, t ? &t[i].epilogue_ms[0] : NULL);
    }
    clock_queued(&c);
    for (int i = 1; c.marks && i < e->net->nlayers; i++) {
        t[i].epilogue_ms[0] = clock_span(&c, i, CB_SPAN_FWD_EPI);
        t[i].ms[CB_PHASE_FORWARD] = clock_span(&c, i, CB_SPAN_FWD_OP);
    }
    for (int i = 1; t && i < e->net->nlayers; i++) t[i].ms[CB_PHASE_FORWARD] += t[i].epilogue_ms[0];
    return CB_OK;
}

static const float *probabilities(cb_exec *e, int *n, int *k) {
    const cb_layer *last = &e->net->layers[e->net->nlayers - 1];
    *n = (int)last->out.n;
    *k = (int)(last->out.c * last->out.h * last->out.w);
    return last->op == CB_OP_SOFTMAX ? e->lb[e->net->nlayers - 1].y : e->prob;
}

cb_status cb_exec_criterion_forward(cb_exec *e, double *loss, double *ms) {
    int n, k;
    int last = e->net->nlayers - 1;
    if (ms) e->be->timer_start(e);
    if (e->net->layers[last].op != CB_OP_SOFTMAX) e->be->softmax(e, e->lb[last].y, e->prob, (int)cb_net_batch(e->net),
                                                                 (int)(cb_shape_count(e->net->layers[last].out) / cb_net_batch(e->net)));
    const float *prob = probabilities(e, &n, &k);
    double l = e->be->xent_forward(e, prob, e->labels, n, k);
    if (ms) *ms = e->be->timer_stop(e);
    if (loss) *loss = l;
    return CB_OK;
}

cb_status cb_exec_criterion_backward(cb_exec *e, double *ms) {
    if (!e->opts.train) return CB_STATUS_ARG;
    int n, k;
    const float *prob = probabilities(e, &n, &k);
    if (ms) e->be->timer_start(e);
    // the gradient w.r.t. the logits; a final Softmax layer passes it through unchanged
    e->be->xent_backward(e, prob, e->labels, n, k, e->lb[e->net->nlayers - 1].dy);
    if (ms) *ms = e->be->timer_stop(e);
    return CB_OK;
}

cb_status cb_exec_backward(cb_exec *e, cb_layer_times *t) {
    if (!e->opts.train) return CB_STATUS_ARG;
    int n = e->net->nlayers;
    memset(e->grad_ready, 0, sizeof(bool) * (size_t)n);
    e->grad_ready[n - 1] = true;
    e->pass++, e->in_backward = true;
    pass_clock c = clock_begin(e, t);
    for (int i = 0; t && i < n; i++) t[i].ms[CB_PHASE_BWD_DATA] = t[i].ms[CB_PHASE_BWD_FILTER] = t[i].epilogue_ms[1] = t[i].recompute_ms = 0;
    for (int i = n - 1; i >= 1; i--) {
        const cb_layer *L = &e->net->layers[i];
        cb_lbuf *b = &e->lb[i];
        cb_layer_times *ti = t ? &t[i] : NULL;
        for (int a = e->again_at ? e->again_at[i] : -1; a >= 0; a = e->lb[a].again_next) { // (outputs its backward reads first)
            clock_start(&c);
            e->be->recompute_output(e, a);
            clock_stop(&c, a, CB_SPAN_RECOMPUTE, t ? &t[a].recompute_ms : NULL);
        }
        clock_start(&c);
        if (!e->grad_ready[i]) { // nothing consumes this layer: its gradient is zero
            act_fill(e, b->dy, 0, (size_t)cb_shape_count(L->out));
            e->grad_ready[i] = true;
        }
        e->scratch = b->acc; // (the arena's bytes for this layer's accumulation, or NULL: none needed)
        if (L->act != CB_ACT_NONE || L->bn) e->be->backward_epilogue(e, i);
        clock_stop(&c, i, CB_SPAN_BWD_EPI, ti ? &ti->epilogue_ms[1] : NULL);
        if (b->nw || b->nbn) {
            clock_start(&c);
            e->ws = ws_of(e, i, CB_PHASE_BWD_FILTER);
            if (e->be->backward_filter) e->be->backward_filter(e, i);
            e->ws = e->ws_all;
            clock_stop(&c, i, CB_SPAN_BWD_FILTER, ti ? &ti->ms[CB_PHASE_BWD_FILTER] : NULL);
            if (e->grad_hook) e->grad_hook(e, i, e->grad_hook_ctx);
        }
        for (int j = 0; j < L->nparents; j++) {
            int p = L->parents[j];
            cb_lbuf *pb = &e->lb[p];
            if (!pb->dy) continue; // the input, with --no-data-grad
            if (e->grad_alias[p] == i) { // its dy is this sum's gradient buffer: nothing to move
                e->grad_ready[p] = true;
                continue;
            }
            bool direct = !e->grad_ready[p];
            size_t count = (size_t)cb_shape_count(e->net->layers[p].out);
            clock_start(&c);
            e->ws = ws_of(e, i, CB_PHASE_BWD_DATA);
            if (direct) e->be->backward_data(e, i, j, pb->dy);
            else if (L->op == CB_OP_ADD && !e->grad_copy) e->be->add(e, pb->dy, cb_exec_op_grad(e, i), count); // a sum's, as is
            else if (e->grad_copy || !e->be->backward_data_add || !e->be->backward_data_add(e, i, j, pb->dy)) {
                e->be->backward_data(e, i, j, e->scratch);
                e->be->add(e, pb->dy, e->scratch, count);
            }
            e->ws = e->ws_all;
            clock_stop(&c, i, CB_SPAN_BWD_DATA, ti ? &ti->ms[CB_PHASE_BWD_DATA] : NULL);
            e->grad_ready[p] = true;
        }
    }
    e->scratch = e->plan_scratch;
    e->pass++, e->in_backward = false; // (no weight copy made in either pass holds now: the backward reused its bytes)
    clock_queued(&c);
    for (int i = 1; t && i < n; i++) {
        if (c.marks) {
            t[i].epilogue_ms[1] = clock_span(&c, i, CB_SPAN_BWD_EPI);
            t[i].ms[CB_PHASE_BWD_FILTER] = clock_span(&c, i, CB_SPAN_BWD_FILTER);
            t[i].ms[CB_PHASE_BWD_DATA] = clock_span(&c, i, CB_SPAN_BWD_DATA);
            t[i].recompute_ms = clock_span(&c, i, CB_SPAN_RECOMPUTE);
        }
        t[i].epilogue_ms[1] += t[i].recompute_ms; // (the batch norm's pass again, where its output was made again)
        t[i].ms[CB_PHASE_BWD_DATA] += t[i].epilogue_ms[1];
    }
    return CB_OK;
}

int cb_exec_hold(cb_exec *e, bool on) {
    if (!e->be->hold || !e->be->mark) return -1;
    e->hold = on;
    return e->be->hold(e, false); // (releases nothing: no pass is queued now; the count of timeouts)
}

bool cb_exec_copy_holds(const cb_exec *e, uint64_t made, bool made_forward) {
    return made == e->pass || (made_forward && e->in_backward && made + 1 == e->pass);
}

cb_status cb_exec_update(cb_exec *e, double *ms) {
    if (!e->opts.train || e->opts.no_update) return CB_STATUS_ARG;
    if (ms) e->be->timer_start(e);
    if (e->nparams)
        e->be->sgd(e, (size_t)e->nparams, e->opts.lr, e->opts.momentum, e->opts.weight_decay, e->params, e->grads, e->moms);
    e->param_version++;
    if (ms) *ms = e->be->timer_stop(e);
    return CB_OK;
}

int64_t cb_exec_output_classes(const cb_exec *e) {
    const cb_layer *last = &e->net->layers[e->net->nlayers - 1];
    return last->out.c * last->out.h * last->out.w;
}

cb_status cb_exec_get_output(cb_exec *e, float *out, size_t count) {
    int n, k;
    const float *prob = probabilities(e, &n, &k);
    if (count > (size_t)n * (size_t)k) return CB_STATUS_ARG;
    const cb_layer *last = &e->net->layers[e->net->nlayers - 1];
    if (last->op != CB_OP_SOFTMAX) e->be->softmax(e, e->lb[e->net->nlayers - 1].y, e->prob, n, k);
    if (last->op == CB_OP_SOFTMAX && e->be->act_download) { // the Softmax layer's output, in the backend's storage
        float *all = malloc((size_t)n * (size_t)k * 4);
        if (!all) return CB_STATUS_NOMEM;
        e->be->act_download(e, e->net->nlayers - 1, all, prob);
        memcpy(out, all, count * 4);
        free(all);
    } else e->be->download(e, out, prob, count * 4);
    return CB_OK;
}

const char *cb_exec_algo(const cb_exec *e, int layer, cb_phase ph) { return e->lb[layer].algo[ph]; }
const cb_choice *cb_exec_choice(const cb_exec *e, int layer, cb_phase ph) { return &e->lb[layer].choice[ph]; }
int cb_exec_note_count(const cb_exec *e) { return e->nnotes; }
const char *cb_exec_note_at(const cb_exec *e, int k) { return k >= 0 && k < e->nnotes ? e->notes[k] : NULL; }
void cb_exec_note(cb_exec *e, const char *fmt, ...) {
    char buf[CB_EXEC_NOTE_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (int k = 0; k < e->nnotes; k++)
        if (!strcmp(e->notes[k], buf)) return;
    if (e->nnotes < CB_EXEC_MAX_NOTES) memcpy(e->notes[e->nnotes++], buf, sizeof buf);
}
size_t cb_exec_workspace(const cb_exec *e, int layer, cb_phase ph) { return e->lb[layer].ws[ph]; }
size_t cb_exec_peak_bytes(const cb_exec *e) { return e->allocated; }
const cb_net *cb_exec_net(const cb_exec *e) { return e->net; }
const char *cb_exec_backend_name(const cb_exec *e) { return e->be->name; }

int cb_exec_params(cb_exec *e, int layer, cb_param *out, int max) {
    cb_lbuf *b = &e->lb[layer];
    cb_param all[6] = {{"weight", b->w, b->dw, b->nw}, {"bias", b->b, b->db, b->nb},
                       {"bn_scale", b->gamma, b->dgamma, b->nbn}, {"bn_shift", b->beta, b->dbeta, b->nbn},
                       {"bn_mean", b->rmean, NULL, b->nbn}, {"bn_var", b->rvar, NULL, b->nbn}};
    int k = 0;
    for (int j = 0; j < 6; j++)
        if (all[j].count && all[j].data) {
            if (k < max) out[k] = all[j];
            k++;
        }
    return k;
}

cb_status cb_exec_param_get(cb_exec *e, const cb_param *p, float *host) {
    e->be->download(e, host, p->data, (size_t)p->count * 4);
    return CB_OK;
}

cb_status cb_exec_param_set(cb_exec *e, const cb_param *p, const float *host) {
    e->be->upload(e, p->data, host, (size_t)p->count * 4);
    e->param_version++;
    return CB_OK;
}

cb_status cb_exec_set_output_grad(cb_exec *e, float v) {
    if (!e->opts.train) return CB_STATUS_ARG;
    const cb_layer *last = &e->net->layers[e->net->nlayers - 1];
    act_fill(e, e->lb[e->net->nlayers - 1].dy, v, (size_t)cb_shape_count(last->out));
    return CB_OK;
}

bool cb_exec_can_graph(const cb_exec *e) { return e->opts.train && e->be->graph_begin && !e->grad_hook; }

cb_status cb_exec_graph_capture(cb_exec *e, bool criterion, bool update, cb_error *err) {
    if (!cb_exec_can_graph(e))
        return cb_fail(err, CB_STATUS_ARG, "--graph", NULL, "backend %s cannot record a training step as a graph%s", e->be->name,
                       e->grad_hook ? " with data-parallel training" : "");
    char why[256] = "";
    e->graph_ready = false;
    // a backend's converted copy of the weights (bf16 storage) is refreshed in the forward pass
    // after an update: make this forward record the refresh, as every step after an update needs it
    if (update && e->opts.no_update) return cb_fail(err, CB_STATUS_ARG, "--graph", NULL, "an update was asked of a plan made without one");
    if (update) e->param_version++;
    if (!e->be->graph_begin(e, why, sizeof why)) return cb_fail(err, CB_STATUS_DEVICE, "--graph", NULL, "%s", why);
    if (!criterion) cb_exec_set_output_grad(e, 1.0f);
    cb_exec_forward(e, true, NULL);
    if (criterion) {
        cb_exec_criterion_forward(e, NULL, NULL);
        cb_exec_criterion_backward(e, NULL);
    }
    cb_exec_backward(e, NULL);
    if (update) cb_exec_update(e, NULL);
    if (!e->be->graph_end(e, why, sizeof why)) return cb_fail(err, CB_STATUS_DEVICE, "--graph", NULL, "%s", why);
    e->graph_ready = true;
    return CB_OK;
}

cb_status cb_exec_graph_replay(cb_exec *e) {
    if (!e->graph_ready) return CB_STATUS_ARG;
    e->be->graph_launch(e);
    return CB_OK;
}

void cb_exec_timer_start(cb_exec *e) { e->be->timer_start(e); }
double cb_exec_timer_stop(cb_exec *e) { return e->be->timer_stop(e); }
bool cb_exec_on_device(const cb_exec *e) { return e->be->device; }

cb_status cb_exec_set_lr(cb_exec *e, float lr) {
    if (!(lr >= 0)) return CB_STATUS_ARG;
    if (lr != e->opts.lr) e->graph_ready = false; // the graph holds the old one
    e->opts.lr = lr;
    return CB_OK;
}
