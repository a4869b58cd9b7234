// convbench's direct convolution algorithms for layers with few channels (kernels and their
// limits in conv_direct.cuh). Forward only: the backward phases fall back to igemm-simt. Each
// "+pool" twin also runs, at inference, conv + bias + ReLU + the max pool that follows as one
// kernel (the engine's hook in backend.c); its plain forward is its twin's.
#include "cuda/conv_algo.h"
#include "cuda/conv_direct.cuh"

#include <mutex>
#include <string.h>

// Plans cost CUDA attribute queries and, for large batches, timing the candidates (conv_direct.cuh);
// the engine runs the same layer batch after batch, so they are kept: a small table keyed by
// device, shape, fused pool and kind. The multi-GPU replicas plan and run from one thread per
// device: the table is read and filled under a lock, and each caller gets its own copy of the entry.
enum { KIND_CONST, KIND_SMEM, KIND_UNROLL, KIND_TF32, KIND_BF16, KIND_COUNT };
typedef struct plan_entry {
    int dev;  // the CUDA device planned on: planning raises each kernel's shared-memory limit there
    cb_conv_params p;
    int pool, kind;
    bool ok;
    cd_direct_plan direct;
    cd_unroll_plan unroll;
    cd_tc_plan tc;
} plan_entry;
#define PLAN_CACHE 64
static plan_entry cache[PLAN_CACHE];
static int cache_used, cache_next;
static std::mutex cache_mutex;

static plan_entry plan_of(const cb_conv_params *p, int pool, int kind) {
    std::lock_guard<std::mutex> lock(cache_mutex);
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) cudaGetLastError();
    for (int i = 0; i < cache_used; i++)
        if (cache[i].dev == dev && cache[i].pool == pool && cache[i].kind == kind && memcmp(&cache[i].p, p, sizeof *p) == 0) return cache[i];
    plan_entry *e = &cache[cache_next];
    cache_next = (cache_next + 1) % PLAN_CACHE;
    if (cache_used < PLAN_CACHE) cache_used++;
    memset(e, 0, sizeof *e);
    e->dev = dev, e->p = *p, e->pool = pool, e->kind = kind;
    if (p->groups == 1) {
        cd_shape g = cd_shape_of(p, pool, pool > 1);
        switch (kind) {
        case KIND_CONST: e->ok = cd_direct_plan_make(g, true, -1, &e->direct); break;
        case KIND_SMEM: e->ok = cd_direct_plan_make(g, false, -1, &e->direct); break;
        case KIND_UNROLL: e->ok = cd_unroll_plan_make(g, &e->unroll); break;
        case KIND_TF32: e->ok = cd_tc_plan_best(g, false, &e->tc); break;
        case KIND_BF16: e->ok = cd_tc_plan_best(g, true, &e->tc); break;
        }
    }
    return *e;
}

static void run(const plan_entry *e, const float *x, const float *w, const float *b, float *y, bool relu, void *ws) {
    if (e->kind == KIND_CONST || e->kind == KIND_SMEM) cd_direct_run(e->direct, x, w, b, y, relu, ws);
    else if (e->kind == KIND_UNROLL) cd_unroll_run(e->unroll, x, w, b, y, relu);
    else cd_tc_run(e->tc, x, w, b, y, relu);
}

// the window of a VALID max pool of window = stride = 2 or 4 that reads all of p's output, else 0
static int pool_window(const cb_conv_params *p, const cb_pool_params *pp) {
    if (pp->is_avg || pp->r != pp->s || pp->stride_h != pp->r || pp->stride_w != pp->s || pp->pad_top || pp->pad_left) return 0;
    if (pp->r != 2 && pp->r != 4) return 0;
    if (pp->n != p->n || pp->c != p->k || pp->h != p->p || pp->w != p->q || pp->p != p->p / pp->r || pp->q != p->q / pp->s)
        return 0;
    return pp->r;
}

#define ALGO(fname, KIND)                                                                                              \
    static bool fname##_supports(const cb_conv_params *p, cb_phase ph) {                                               \
        return ph == CB_PHASE_FORWARD && plan_of(p, 1, KIND).ok;                                                       \
    }                                                                                                                  \
    static void fname##_forward(const cb_conv_params *p, const float *x, const float *w, const float *b, float *y,     \
                                bool relu, void *ws) {                                                                 \
        plan_entry e = plan_of(p, 1, KIND);                                                                            \
        run(&e, x, w, b, y, relu, ws);                                                                                 \
    }
#define ALGO_POOL(fname, KIND)                                                                                         \
    static bool fname##_supports_pool(const cb_conv_params *p, const cb_pool_params *pp) {                             \
        int pw = pool_window(p, pp);                                                                                   \
        return pw && plan_of(p, pw, KIND).ok;                                                                          \
    }                                                                                                                  \
    static void fname##_forward_pool(const cb_conv_params *p, const float *x, const float *w, const float *b,          \
                                     const cb_pool_params *pp, float *yp, void *ws) {                                  \
        plan_entry e = plan_of(p, pool_window(p, pp), KIND);                                                           \
        run(&e, x, w, b, yp, true, ws);                                                                                \
    }
ALGO(dconst, KIND_CONST)
ALGO(dsmem, KIND_SMEM)
ALGO(unroll, KIND_UNROLL)
ALGO(dtf32, KIND_TF32)
ALGO(dbf16, KIND_BF16)
ALGO_POOL(dconst, KIND_CONST)
ALGO_POOL(dsmem, KIND_SMEM)
ALGO_POOL(dtf32, KIND_TF32)
ALGO_POOL(dbf16, KIND_BF16)

static size_t dconst_workspace(const cb_conv_params *p, cb_phase ph) {
    return ph == CB_PHASE_FORWARD ? cd_direct_const_workspace(p) : 0;
}

#define DIRECT_LIMITS "groups 1, C*R*S*K <= 16384, the image in shared memory; forward"
#define TC_LIMITS "stride 1, R and S <= 7, C <= 4, K <= 16, the image in shared memory; forward"

extern "C" const cb_cuda_conv_algo cb_conv_algo_direct_const = {
    "direct-const", CB_PREC_FP32,
    "direct, weights in constant memory, input in shared memory, rows x cols x 4 channels per thread, bias+ReLU fused "
    "(fp32 FMA; " DIRECT_LIMITS ")",
    dconst_supports, dconst_workspace, dconst_forward, NULL, NULL, NULL, NULL};
extern "C" const cb_cuda_conv_algo cb_conv_algo_direct_const_pool = {
    "direct-const+pool", CB_PREC_FP32, "direct-const; at inference also the following max pool 2 or 4 (window = stride)",
    dconst_supports, dconst_workspace, dconst_forward, NULL, NULL, dconst_supports_pool, dconst_forward_pool};
extern "C" const cb_cuda_conv_algo cb_conv_algo_direct_smem = {
    "direct-smem", CB_PREC_FP32,
    "direct, weights and input in shared memory, rows x cols x 4 channels per thread, bias+ReLU fused (fp32 FMA; " DIRECT_LIMITS ")",
    dsmem_supports, NULL, dsmem_forward, NULL, NULL, NULL, NULL};
extern "C" const cb_cuda_conv_algo cb_conv_algo_direct_smem_pool = {
    "direct-smem+pool", CB_PREC_FP32, "direct-smem; at inference also the following max pool 2 or 4 (window = stride)",
    dsmem_supports, NULL, dsmem_forward, NULL, NULL, dsmem_supports_pool, dsmem_forward_pool};
extern "C" const cb_cuda_conv_algo cb_conv_algo_unroll_smem = {
    "unroll-smem", CB_PREC_FP32,
    "the course's fused unroll + matrix multiply: unrolled input tiles and all weights in shared memory, 4x4 per thread "
    "(fp32 FMA; groups 1, K <= 32, C*R*S*K <= 8192; forward)",
    unroll_supports, NULL, unroll_forward, NULL, NULL, NULL, NULL};
extern "C" const cb_cuda_conv_algo cb_conv_algo_direct_tf32 = {
    "direct-tf32", CB_PREC_TF32,
    "direct on tensor cores, mma.sync tf32 m16n8k8, fp32 accumulation, weights in registers (" TC_LIMITS ")",
    dtf32_supports, NULL, dtf32_forward, NULL, NULL, NULL, NULL};
extern "C" const cb_cuda_conv_algo cb_conv_algo_direct_tf32_pool = {
    "direct-tf32+pool", CB_PREC_TF32, "direct-tf32; at inference also the following max pool 2 or 4 (window = stride)",
    dtf32_supports, NULL, dtf32_forward, NULL, NULL, dtf32_supports_pool, dtf32_forward_pool};
extern "C" const cb_cuda_conv_algo cb_conv_algo_direct_bf16 = {
    "direct-bf16", CB_PREC_BF16,
    "direct on tensor cores, mma.sync bf16 m16n8k16, fp32 accumulation, weights in registers (" TC_LIMITS ")",
    dbf16_supports, NULL, dbf16_forward, NULL, NULL, NULL, NULL};
extern "C" const cb_cuda_conv_algo cb_conv_algo_direct_bf16_pool = {
    "direct-bf16+pool", CB_PREC_BF16, "direct-bf16; at inference also the following max pool 2 or 4 (window = stride)",
    dbf16_supports, NULL, dbf16_forward, NULL, NULL, dbf16_supports_pool, dbf16_forward_pool};
