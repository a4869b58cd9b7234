// Each op's parameters, derived once from a layer (src/core/ops.h).
#include "core/ops.h"

void cb_conv_params_of(const cb_layer *L, cb_conv_params *p) {
    if (L->op == CB_OP_FC) {
        *p = (cb_conv_params){.n = (int)L->in.n, .c = (int)L->in.c, .h = 1, .w = 1, .k = L->p.fc.k, .r = 1, .s = 1, .p = 1,
                              .q = 1, .stride_h = 1, .stride_w = 1, .pad_top = 0, .pad_left = 0, .groups = 1};
        return;
    }
    const cb_window *w = &L->p.conv.win;
    *p = (cb_conv_params){.n = (int)L->in.n, .c = (int)L->in.c, .h = (int)L->in.h, .w = (int)L->in.w,
                          .k = L->p.conv.k, .r = w->r, .s = w->s, .p = (int)L->out.h, .q = (int)L->out.w,
                          .stride_h = w->stride_h, .stride_w = w->stride_w, .pad_top = w->pad_top,
                          .pad_left = w->pad_left, .groups = L->p.conv.groups, .dil_h = L->p.conv.dil_h,
                          .dil_w = L->p.conv.dil_w};
}

void cb_pool_params_of(const cb_layer *L, cb_pool_params *p) {
    const cb_window *w = &L->p.pool.win;
    *p = (cb_pool_params){.n = (int)L->in.n, .c = (int)L->in.c, .h = (int)L->in.h, .w = (int)L->in.w, .r = w->r,
                          .s = w->s, .p = (int)L->out.h, .q = (int)L->out.w, .stride_h = w->stride_h,
                          .stride_w = w->stride_w, .pad_top = w->pad_top, .pad_left = w->pad_left,
                          .is_avg = L->p.pool.avg};
}

void cb_lrn_params_of(const cb_layer *L, cb_lrn_params *p) {
    *p = (cb_lrn_params){(int)L->out.n, (int)L->out.c, (int)L->out.h, (int)L->out.w, L->p.lrn.size, L->p.lrn.alpha,
                         L->p.lrn.beta, L->p.lrn.k};
}

void cb_bn_params_of(const cb_layer *L, cb_bn_params *p) {
    *p = (cb_bn_params){(int)L->out.n, (int)L->out.c, (int)L->out.h, (int)L->out.w,
                        L->op == CB_OP_BATCHNORM ? L->p.bn.eps : L->bn_eps};
}

size_t cb_weight_copy_bytes(const cb_layer *L, cb_precision p, cb_layout l) {
    bool bf16 = p == CB_PREC_BF16;
    if (L->op == CB_OP_FC) return bf16 ? (size_t)(L->in.c * L->p.fc.k) * 2 : 0;
    if (L->op != CB_OP_CONV || (l != CB_LAYOUT_NHWC && !bf16)) return 0;
    cb_conv_params q;
    cb_conv_params_of(L, &q);
    int64_t c = q.groups > 1 ? q.c / q.groups : l == CB_LAYOUT_NHWC && cb_conv_cpad_default(p) ? cb_conv_cpad_to(q.c, bf16) : q.c;
    return (size_t)((int64_t)q.k * c * q.r * q.s) * (bf16 ? 2 : 4);
}

bool cb_pool_pads_symmetric(const cb_layer *L) {
    const cb_window *w = &L->p.pool.win;
    int sh = w->stride_h > 0 ? w->stride_h : 1, sw = w->stride_w > 0 ? w->stride_w : 1;
    return (L->in.h + 2 * w->pad_top - w->r) / sh + 1 == L->out.h && (L->in.w + 2 * w->pad_left - w->s) / sw + 1 == L->out.w;
}
