// The execution engine's view of a backend: a table of operations. The engine (src/core/exec.c)
// plans memory, orders the work, routes gradients between layers, runs the criterion and the
// update; a backend computes one layer at a time on buffers the engine allocated through it.
#ifndef CB_CORE_BACKEND_H
#define CB_CORE_BACKEND_H

#include "convbench.h"
#include "core/plan.h"
#include "core/rng.h"

// Buffers of one layer. Shapes: y, dy (N, C, H, W) as layer.out; w (K, C/g, R, S) or (K, C).
typedef struct cb_lbuf {
    float *y;                     // output, after the fused batch norm and activation
    float *dy;                    // gradient w.r.t. y (NULL when not training)
    float *pre, *dpre;            // op output before the fused batch norm, and its gradient (bn only)
    float *act_in;                // the fused activation's input, when its gradient reads it (cb_act_needs_input)
    float *bn_mean, *bn_invstd;   // (C) batch statistics saved for backward
    void *aux;                    // max-pool argmax (int32), dropout mask, LRN scale: out-sized
    float *acc;                   // the accumulation scratch of this layer's backward (e->scratch then), or NULL
    // a backend's copy of the layer's input in its own shape (a padded or permuted input;
    // be->input_copy), placed in the arena: the forward's, the backward's (made again there, so
    // that no copy is held from forward to backward), and the input gradient's (NULL: none)
    void *xcopy, *xcopy_bwd, *dxcopy;
    // a backend's copy of the layer's weights in its storage format (be->weight_copy), placed in
    // the arena: made in each forward and kept to the data gradient, or, where keeping it would
    // raise the peak, made again in the backward into wcopy_bwd (NULL: none)
    void *wcopy, *wcopy_bwd;
    bool wcopy_again;             // the plan makes the weight copy again in the backward (set in a plan-only exec too)
    // its ReLU's gradient is applied by the max pool that alone reads it (cb_pool_relu_input, where
    // be->pool_relu_mask agrees; set before the arena is placed, in a plan-only exec too): its
    // backward runs no ReLU pass, and no backward reads its output (a batch norm's reads pre)
    bool relu_by_pool;
    // its ReLU's gradient is applied by the concatenation that alone reads it, from that
    // concatenation's output (cb_concat_relu_input, where be->concat_relu_mask agrees; set before
    // the arena is placed, in a plan-only exec too): as relu_by_pool, its backward runs no ReLU
    // pass and no backward reads its output, which lives only to the concatenation's forward
    bool relu_by_concat;
    // its output is dropped after its last forward reader and made again (be->recompute_output)
    // before the backward of its last consumer, the first to read it there (cb_recompute; set
    // before the arena is placed, in the same bytes); again_next: the next layer made again there (-1)
    bool y_again;
    int again_next;
    float *w, *b, *gamma, *beta;  // parameters (slices of the parameter arena)
    float *dw, *db, *dgamma, *dbeta;
    float *rmean, *rvar;          // running statistics (bn)
    int64_t nw, nb, nbn;          // element counts of w, b, gamma (= beta)
    size_t ws[CB_PHASE_COUNT];    // workspace bytes each phase needs
    void *wsp[CB_PHASE_COUNT];    // that workspace where the arena holds it, in bytes no buffer live then uses (NULL: e->ws_all)
    cb_choice choice[CB_PHASE_COUNT]; // what plan chose (its workspace is ws[]); impl CB_IMPL_NONE: nothing
    char algo[CB_PHASE_COUNT][64];    // cb_choice_format of choice, set after plan (cb_exec_algo)
    void *priv;                   // backend's per-layer state
} cb_lbuf;

// the pieces of a layer's work that per-layer timing tells apart (cb_exec's span)
enum { CB_SPAN_FWD_OP, CB_SPAN_FWD_EPI, CB_SPAN_BWD_EPI, CB_SPAN_BWD_FILTER, CB_SPAN_BWD_DATA, CB_SPAN_RECOMPUTE, CB_SPAN_COUNT };

typedef struct cb_backend {
    const char *name;
    bool device;                  // buffers live in GPU memory
    cb_status (*init)(cb_exec *e, cb_error *err);
    void (*destroy)(cb_exec *e);
    void *(*alloc)(cb_exec *e, size_t bytes); // NULL when out of memory
    // Optional (device backends): an allocation of `bytes` that grow can extend in place (every
    // address in it kept) up to `reserve` bytes: the activation arena, so that a workspace may lie
    // past its end (exec.c workspace_place). It may return an ordinary allocation, which grow refuses.
    void *(*alloc_growable)(cb_exec *e, size_t bytes, size_t reserve);
    bool (*grow)(cb_exec *e, void *p, size_t bytes); // false: not grown (nothing changed)
    // Optional (device backends): why the last alloc failed, one line into why (the device's
    // error, and the memory free when it was out of memory); true when the device itself has
    // failed (an error no later call survives, left by a kernel that failed), not its memory
    bool (*alloc_why)(cb_exec *e, char *why, size_t n);
    // Optional: bytes of one item of a max pool's argmax as the backend keeps it (NULL: 4, an
    // int32 index); the arena reserves that many per output. The GPU backends keep a window
    // offset in one byte where the window has at most 255 taps (src/cuda/pool.cu, pool_fmt.cu).
    int (*pool_argmax_item)(const cb_layer *L);
    // Optional: will max pool layer i's backward (training) apply the ReLU gradient of the layer it
    // alone reads (cb_pool_relu_input), from its argmax, reading neither that layer's output nor
    // its own? Asked after init, before the arena is placed, for each such pool; where true the
    // engine sets that layer's relu_by_pool, and the backend must run the pool so (its argmax
    // marking the windows whose maximum is not above 0, its backward skipping them) and skip the
    // layer's ReLU pass, and read no output of that layer in its backward (its batch norm's reads
    // pre; one that applies the activation too recomputes it from pre): that output is then kept
    // only to the pool's forward. NULL: never.
    bool (*pool_relu_mask)(const cb_exec *e, int i);
    // Optional: will concatenation i's backward (training) apply, from its own output, the ReLU
    // gradient of each input that cb_concat_relu_input names? Asked after init, before the arena is
    // placed, for each concatenation whose output is kept to its backward anyway (something after it
    // keeps it: a convolution's filter gradient reads it); where true the engine sets those inputs'
    // relu_by_concat, and the backend must write each such input's gradient as the slice of the
    // concatenation's gradient where the concatenation's output is above 0, and 0 elsewhere (that
    // output's slice is the input's ReLU output: y > 0, the reference's mask), skip those inputs'
    // ReLU passes, and read no output of theirs in their backward. An Inception module's branches
    // then keep no output for the backward: the concatenation holds the same values. NULL: never.
    bool (*concat_relu_mask)(const cb_exec *e, int i);
    // Optional: does layer i keep its fused activation's input (cb_lbuf.act_in) for the backward
    // where that activation's gradient reads it (cb_act_needs_input: SiLU, hardswish, GELU)? Asked
    // after init, before the arena is placed, for each training layer with such an activation;
    // where false the engine places no act_in, and the backend must take that gradient without it
    // (the own batch-norm kernels recompute the activation's input from the batch norm's input and
    // statistics, which their backward reads anyway). NULL: always kept.
    bool (*act_input_kept)(const cb_exec *e, int i);
    // Optional, for cb_recompute: may layer i's output be dropped after the forward and made again
    // for its consumers' backward from what the layer keeps anyway (its batch norm's input and
    // statistics), its own backward reading none of it? Asked before the arena is placed, where
    // the output is kept to the backward; where the engine takes it up it sets lb[i].y_again, and
    // the backend must then run that layer so (the own batch-norm kernels). recompute_output writes
    // lb[i].y again, as the training forward did, in the backward. NULL: never.
    bool (*output_again)(const cb_exec *e, int i);
    void (*recompute_output)(cb_exec *e, int i);
    // Optional (device backends): the device's free bytes now (before the arena is taken), the
    // budget of CB_RECOMPUTE_AUTO where the options give none; 0: unknown
    size_t (*mem_free)(cb_exec *e);
    // Optional (device backends): true while the device works; else false and one line into why.
    // Asked after each layer's plan, so that a kernel that failed there is named by its layer,
    // not taken later for an allocation that failed.
    bool (*device_ok)(cb_exec *e, char *why, size_t n);
    void (*release)(cb_exec *e, void *p);
    void (*upload)(cb_exec *e, void *dst, const void *src, size_t bytes);
    void (*download)(cb_exec *e, void *dst, const void *src, size_t bytes);
    void (*timer_start)(cb_exec *e);
    double (*timer_stop)(cb_exec *e);        // ms since timer_start, after the work completed
    // Optional (device backends): per-layer times without a synchronisation per layer, so that
    // the layers' times add up to the pass's. mark records a point in the device's work and
    // returns its index (-1: none), counting from 0 after mark_reset; mark_ms is the time from
    // mark a to mark b, once b completed.
    void (*mark_reset)(cb_exec *e);
    int (*mark)(cb_exec *e);
    double (*mark_ms)(cb_exec *e, int a, int b);
    // Optional (device backends, with marks): hold(e, true) makes the device's queue wait until
    // hold(e, false), so that a pass queued meanwhile runs back to back and its marks time the
    // device's work alone, not the host's launches into an idle device (cb_exec_hold). A wait ends
    // by itself after a timeout (a call in the pass that waits for the device, a full launch queue)
    // and counts; returns the waits that timed out so far, -1 where it cannot hold.
    int (*hold)(cb_exec *e, bool on);
    // Can it run layer `layer` of net with options o? CB_REASON_NONE, or the code with the detail
    // in why. Asked before init (cb_backend_supports), from the shapes and options alone; NULL:
    // every layer. What only the library can tell (a refused descriptor, no algorithm within the
    // workspace) plan declines with cb_decline.
    cb_reason (*supports)(const cb_net *net, int layer, const cb_exec_opts *o, char *why, size_t n);
    // Optional: bytes of the copy of layer `layer`'s input that the backend's kernels read in
    // their own shape (cb_lbuf's xcopy), 0 for none; asked before the arena is placed
    size_t (*input_copy)(const cb_exec *e, int layer);
    // Optional: bytes of the backend's copy of layer `layer`'s weights in its own storage format
    // (cb_lbuf's wcopy: bf16, KRSC), 0 for none. Placed in the arena, so it holds nothing from one
    // step to the next: the backend makes it in every forward (a training step's update changes the
    // weights anyway) and reads it again in the data gradient, or makes it again there in wcopy_bwd
    // where the engine found that keeping it would raise the peak (cb_exec_copy_holds tells the
    // backend whether a copy it made still holds). Asked before the arena is placed.
    size_t (*weight_copy)(const cb_exec *e, int layer);
    // choose algorithms and workspace for a layer; buffers exist already
    cb_status (*plan)(cb_exec *e, int layer, cb_error *err);
    void (*forward)(cb_exec *e, int layer, bool train);
    // Optional: the fused batch norm and activation after forward (a layer with bn or act); where
    // NULL, forward applies them itself. Kept apart so that a step's time splits by layer kind.
    void (*forward_epilogue)(cb_exec *e, int layer, bool train);
    // undo the fused activation and batch norm: leaves the gradient w.r.t. the op's output in
    // cb_exec_op_grad(e, layer) and computes dgamma, dbeta
    void (*backward_epilogue)(cb_exec *e, int layer);
    // gradient w.r.t. parent slot j, written (not added) into dx, shaped as that parent's output
    void (*backward_data)(cb_exec *e, int layer, int slot, float *dx);
    // Optional: the same gradient added into dx (dx += it) in the same pass, where the layer's
    // implementation can (a convolution's library call with beta = 1); false: nothing was done, and
    // the engine writes it to the accumulation scratch and adds that
    bool (*backward_data_add)(cb_exec *e, int layer, int slot, float *dx);
    void (*backward_filter)(cb_exec *e, int layer); // dw, db (overwritten)
    void (*add)(cb_exec *e, float *dst, const float *src, size_t n); // dst += src
    void (*fill)(cb_exec *e, float *dst, float v, size_t n);
    void (*sgd)(cb_exec *e, size_t n, float lr, float momentum, float wd, float *w, const float *g, float *v);
    // softmax cross-entropy on logits (N, K) (or on probabilities when the last layer is Softmax)
    double (*xent_forward)(cb_exec *e, const float *prob, const int32_t *labels, int n, int k);
    void (*xent_backward)(cb_exec *e, const float *prob, const int32_t *labels, int n, int k, float *dlogits);
    void (*softmax)(cb_exec *e, const float *x, float *prob, int n, int k);
    // Optional, for a backend whose activations (y, dy, pre, dpre, scratch) are not fp32 NCHW (the
    // cudnn backends with --layout nhwc or bf16 storage); NULL: plain copies of count * 4 bytes.
    // A layer-shaped tensor to or from host fp32 NCHW, and a fill of n activation elements.
    void (*act_upload)(cb_exec *e, int layer, void *dst, const float *host);
    void (*act_download)(cb_exec *e, int layer, float *host, const void *src);
    void (*act_fill)(cb_exec *e, void *dst, float v, size_t n);
    // Optional (device backends): a training forward pass starts (the device's dropout step counter)
    void (*step_begin)(cb_exec *e);
    // Optional (device backends): a whole step as one graph (cb_exec_graph_capture). graph_begin
    // records the device work that follows instead of running it; graph_end stops recording and
    // makes the graph replayable (false: the device refused it, why says what); graph_launch
    // queues one replay. Between begin and end nothing may wait for the device.
    bool (*graph_begin)(cb_exec *e, char *why, size_t n);
    bool (*graph_end)(cb_exec *e, char *why, size_t n);
    void (*graph_launch)(cb_exec *e);
    // Optional: the plan's step check (cb_exec_opts.step_check) and workspace trim
    // (cb_exec_opts.memory_slack), exec.c. Switch phase p of layer `layer` to the fastest other
    // candidate its plan timed that needs at most max_ws bytes of workspace (the step check: the
    // workspace placed for it; the trim: less than it has), or (undo) back to the choice before that
    // switch; lb[layer].choice[p] follows (its workspace the candidate's), its flags kept. The engine
    // sets lb[layer].ws[p]. False: nothing to switch to, or nothing to undo.
    bool (*revise)(cb_exec *e, int layer, cb_phase p, size_t max_ws, bool undo);
} cb_backend;

// A backend's note of a slow path it took (once per text; beyond CB_EXEC_MAX_NOTES, dropped)
void cb_exec_note(cb_exec *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct cb_exec {
    cb_net *net;
    cb_exec_opts opts;
    const cb_backend *be;
    cb_plan plan;                 // the layers as plan nodes (one layer or a fused group), built before be->plan
    void *state;                  // backend-wide state (handles, streams, events)
    cb_lbuf *lb;                  // per layer
    float *params, *grads, *moms; // flat arenas of every learnable parameter
    float *stats;                 // running statistics arena
    int64_t nparams, nstats;
    // the workspace of the layer and phase under way: set by the engine before each forward,
    // data-gradient and filter-gradient call (lb[i].wsp[p] where the arena holds it, else ws_all);
    // backends read e->ws with lb[i].ws[p] bytes
    void *ws;
    void *ws_all;                 // the workspace outside the arena, max over the layers and phases it serves
    size_t ws_bytes;              // its bytes
    // the arena's buffers as placed (offset, bytes, live interval), kept for the workspaces' placement
    struct cb_arena_slot { size_t off, bytes; int lo, hi, kind; } *arena_map; // (kind: a cb_mem_kind)
    int arena_nmap;
    float *scratch;               // accumulation scratch: the current layer's acc in backward, else plan_scratch
    float *plan_scratch;          // the largest activation's size, for the races while planning (before any step)
    void *arena;                  // every activation-sized buffer, placed by liveness (exec.c); NULL: one buffer each
    size_t arena_bytes;
    size_t arena_grown;           // of those, what the workspaces past its first end added (ws_grow, exec.c)
    float *prob;                  // (N, K) criterion probabilities when the net has no Softmax layer
    int32_t *labels;              // (N)
    bool *grad_ready;             // per layer, during backward
    int *grad_alias;              // per layer: the sum whose gradient buffer is this layer's dy (exec.c), or -1
    bool grad_copy;               // CONVBENCH_GRAD_ROUTE=copy: every input of a sum gets a copy of its gradient
    int *span;                    // (nlayers, CB_SPAN_COUNT, 2) per-layer timing: first and last mark of each piece
    int *again_at;                // (nlayers) the first layer whose output is made again before this one's backward, or -1
    int64_t again_saved;          // bytes the outputs made again took off the activations' busiest point (cb_recompute)
    size_t allocated;             // bytes taken through be->alloc (and a backend's own copies)
    double planned;               // bytes the plan asked for, allocated or not (for the out-of-memory message)
    bool past_ram;                // a host allocation refused: the buffers would pass the machine's memory
    size_t mem[CB_MEM_COUNT];     // bytes of the engine's buffers by kind, in the arena or not (CB_MEM_BACKEND: unused here)
    size_t mem_arena[CB_MEM_COUNT]; // of those, the arena's buffers
    size_t mem_peak[CB_MEM_COUNT];  // the arena's buffers live at its busiest point of the step, by kind
    int peak_at;                  // that point: -1 before the step, t < n forward of layer t, else backward of 2n-1-t
    size_t engine_bytes;          // bytes the engine allocated (the arena once); the rest of allocated is the backend's
    uint64_t rng;
    size_t act_bytes;             // bytes per activation element: 4, or 2 where the backend stores bf16 (set in init)
    uint64_t param_version;       // changes whenever the parameters do: backends keeping converted copies refresh them
    uint64_t pass;                // counts the passes: each forward, each backward, and the end of each backward
    bool in_backward;             // a backward pass is under way: pass - 1 was the forward it follows
    bool hold;                    // timed passes hold the device's queue while they are queued (cb_exec_hold)
    bool graph_ready;             // a step graph was recorded (cb_exec_graph_capture) and still holds
    // what the backend said at plan of its own slow paths (cb_exec_note): results print them
    char notes[CB_EXEC_MAX_NOTES][CB_EXEC_NOTE_LEN];
    int nnotes;
    // Optional: called by cb_exec_backward once layer `layer`'s parameter gradients are complete
    // in the device's work queue (data-parallel training starts their all-reduce there)
    void (*grad_hook)(cb_exec *e, int layer, void *ctx);
    void *grad_hook_ctx;
};

// A choice of implementation impl, algorithm id algo (-1: none) named name, nothing measured.
static inline cb_choice cb_choice_of(cb_impl impl, int algo, const char *name) {
    cb_choice c = {.impl = impl, .algo = algo, .name = name ? name : "", .ms = -1, .rival_ms = -1, .fused_with = -1, .check_err = -1};
    return c;
}

// the next seed of the run's sequence for a GPU kernel's own generator (dropout)
static inline uint64_t cb_exec_next_seed(cb_exec *e) { return cb_rng_lcg(&e->rng); }

// What opts.plan_only plans on (cb_exec_create): no backend runs; its hooks place what the GPU
// backends' arena holds (their bf16 weight copies, the max pools that take over ReLUs as cuda and
// auto do). A caller that plans another backend's way starts from a copy of it (the model's plan
// of the cudnn backend, whose pools are cuDNN's).
extern const cb_backend cb_backend_plan_only;

// An on/off switch in the environment, var: *on = 1 for on or 1, 0 for off or 0, -1 unset or empty;
// another value is refused by name (err may be NULL: then CB_STATUS_ARG alone, *on -1).
cb_status cb_env_on_off(const char *var, int *on, cb_error *err);

// $CONVBENCH_FUSE_EPILOGUE (on, off, 1 or 0; unset: on): whether a backend fuses its epilogues (the
// activation's gradient with the bias's, max pools that take over ReLUs); off runs the separate
// passes, to compare. Another value is refused by name (err may be NULL: then read as on).
cb_status cb_env_fuse_epilogue(bool *on, cb_error *err);
// $CONVBENCH_CONCAT_RELU (on, the default, or off; off as well where CONVBENCH_FUSE_EPILOGUE is):
// whether concatenations take over their inputs' ReLU (be->concat_relu_mask; off to compare)
cb_status cb_env_concat_relu(bool *on, cb_error *err);

// The engine on backend be, which opts->backend names (cb_exec_create finds it by that name and asks
// cb_backend_supports first): for a backend of the caller's own, as the tests' wrappers.
cb_exec *cb_exec_create_on(cb_net *net, const cb_exec_opts *opts, const cb_backend *be, cb_error *err);

// Does a copy made in pass `made` (made_forward: a forward pass; e->pass then) still hold? Made in
// this pass, or in the forward that the backward under way follows: what a layer's weight copy
// (be->weight_copy) may be read in, its arena bytes being its own from the forward to the backward.
bool cb_exec_copy_holds(const cb_exec *e, uint64_t made, bool made_forward);

// Layer i's output y is transient (no backward reads it): it shares the arena (exec.c).
bool cb_exec_output_transient(const cb_net *net, int i, bool train);
// Does layer i's output hold its values from its forward to its backward? False where it is
// transient: cb_exec_output_transient, or no backward reads it since the max pool or concatenation
// after it applies its ReLU's gradient (relu_by_pool, relu_by_concat). What reads outputs between the passes (a test) asks first.
bool cb_exec_output_kept(const cb_exec *e, int i);

// Is layer b's ReLU gradient applied by the layer that alone reads it (a max pool from its argmax,
// a concatenation from its output), so that its own backward runs no ReLU pass?
static inline bool cb_relu_taken(const cb_lbuf *b) { return b->relu_by_pool || b->relu_by_concat; }

// Gradient w.r.t. the op's own output (before batch norm and activation): dpre or dy.
static inline float *cb_exec_op_grad(const cb_exec *e, int i) { return e->lb[i].dpre ? e->lb[i].dpre : e->lb[i].dy; }
// The op's own output: pre when a batch norm follows, else y.
static inline float *cb_exec_op_out(const cb_exec *e, int i) { return e->lb[i].pre ? e->lb[i].pre : e->lb[i].y; }

// Layer `layer`'s output-shaped device tensor (its y, dy, or a gradient into it) to or from host
// fp32 NCHW, whatever the backend's storage (be->act_upload / act_download).
void cb_exec_act_download(cb_exec *e, int layer, float *host, const void *dev);
void cb_exec_act_upload(cb_exec *e, int layer, void *dev, const float *host);

// the backend of that name in this build, or NULL (src/core/registry.c)
const cb_backend *cb_backend_find(const char *name);
// The layer kinds only the CPU backends run yet (dilated convolution, Elementwise mul, LayerNorm,
// Scale): what the layer is ("a dilated convolution"), or NULL when a GPU backend may run it.
const char *cb_layer_cpu_only(const cb_layer *L);
// What the GPU backends' supports() ask first: CB_REASON_NO_GPU_KERNEL, with the reason, for those.
cb_reason cb_layer_gpu_supports(const cb_layer *L, char *why, size_t n);

// floats a parameter tensor of n elements takes in the parameter arenas (e->params, grads, moms):
// n rounded up to 256 bytes, so that every tensor starts aligned; the gaps hold 0
static inline int64_t cb_param_slot(int64_t n) { return (n + 63) / 64 * 64; }

extern const cb_backend cb_backend_cpu, cb_backend_ref;
#ifdef CB_HAVE_ONEDNN
extern const cb_backend cb_backend_onednn, cb_backend_cpu_auto; // src/onednn/backend.c
#endif
#ifdef CB_HAVE_CUDA
extern const cb_backend cb_backend_cuda, cb_backend_cudnn, cb_backend_auto;
#endif

#endif
