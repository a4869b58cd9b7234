// Private to the cudnn backend's files (backend.c: state, batch norm, the passes; plan.c: the
// choice of algorithms per layer and what the backend supports): shared helpers.
#ifndef CB_CUDNN_BACKEND_IMPL_H
#define CB_CUDNN_BACKEND_IMPL_H
#include "cudnn/dnn.h"
#include "core/net.h"

static const float one = 1.f, zero = 0.f;
static inline dnn_state *dnn(const cb_exec *e) { return ((cb_cuda_state *)e->state)->lib; }
static inline dnn_layer *lay(const cb_exec *e, int i) { return e->lb[i].priv; }
static inline bool native(const cb_exec *e) { return cb_store_native(e); } // fp32 NCHW: the code paths of before
static inline bool is_bf16(const cb_exec *e) { return cb_store_bf16(e); }
static inline bool is_nhwc(const cb_exec *e) { return cb_store_nhwc(e); }
static inline const char *fmt_name(const cb_exec *e) { return cb_store_fmt_label(cb_store_of(e)->fmt); }

#define DNN_TRY(call)                                                                                                  \
    do {                                                                                                               \
        cudnnStatus_t st_ = (call);                                                                                    \
        if (st_ != CUDNN_STATUS_SUCCESS)                                                                               \
            return cb_fail(err, CB_STATUS_DEVICE, e->net->path, L ? L->name : NULL, "%s: %s", #call,                  \
                           cudnnGetErrorString(st_));                                                                  \
    } while (0)

// A layer the storage (other than fp32 NCHW) cannot run: declined, with the reason. Own kernels,
// the fallback of fp32 NCHW, compute fp32 NCHW only.
#define OWN_NCHW "; own kernels run fp32 NCHW only"
static inline cb_status decline(const cb_exec *e, const cb_layer *L, cb_error *err, cb_reason r, const char *why) {
    cb_decline(err, r, e->net->path, L->name, "backend %s, %s tensors: %s", e->be->name, fmt_name(e), why);
    return CB_STATUS_UNSUPPORTED;
}

// batch norm (backend.c), which plan asks about
bool cb_dnn_part_reserve(cb_exec *e, size_t floats);
bool cb_dnn_bn_own_ok(const cb_layer *L);
cb_status cb_dnn_plan_bn(cb_exec *e, int i, cb_error *err);
#endif
