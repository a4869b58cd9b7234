// cuBLAS GEMMs of the library backends (src/blas/blas.h): fully connected layers, and 1x1
// convolutions under NHWC and fp32 NCHW, on the storage's element type.
#include "blas/blas.h"
#include "core/net.h"
#include "cuda/launch.h"

#include <stdlib.h>

static const float one = 1.f, zero = 0.f;
static cublasHandle_t blas_of(const cb_exec *e) { return ((cb_cuda_state *)e->state)->blas->h; }

// Under NHWC a 1x1 convolution of stride 1 without padding is a GEMM over the N*H*W pixel rows,
// as an FC layer's: "auto" races cuBLAS against cuDNN on it (GoogLeNet's 1x1 layers: cuDNN's
// legacy algorithms ran them at 9 TFLOP/s in bf16).
// Under fp32 NCHW it is one GEMM per image (y_n (K, HW) = w (K, C) x_n (C, HW)), run batched.
bool cb_blas_conv_is_gemm(const cb_exec *e, const cb_layer *L) {
    const cb_window *w = &L->p.conv.win;
    bool geom = w->r == 1 && w->s == 1 && w->stride_h == 1 && w->stride_w == 1 && w->pad_top == 0 && w->pad_left == 0 &&
                L->p.conv.groups == 1 && L->out.h == L->in.h && L->out.w == L->in.w;
    if (!geom) return false;
    return cb_store_nhwc(e) ? cb_store_conv_cpad(e, L) == L->p.conv.cin : !cb_store_bf16(e);
}
double cb_blas_time_conv(cb_exec *e, int i, int ph) {
    void *dx = e->lb[e->net->layers[i].parents[0]].dy;
    cb_blas_conv(e, i, ph, dx);
    cb_cuda_timer_start(e);
    for (int r = 0; r < 3; r++) cb_blas_conv(e, i, ph, dx);
    double ms = cb_cuda_timer_stop(e) / 3;
    return cudaGetLastError() == cudaSuccess ? ms : -1;
}

// C = op(A) op(B), column-major, on the storage type: cublasSgemm on fp32 (tf32 by the handle's
// math mode), cublasGemmEx on bf16 with fp32 accumulation
// (C = op(A) op(B) + beta C with gemm_beta)
static void gemm_beta(cb_exec *e, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *a, int lda,
                      const void *bm, int ldb, const float *beta, void *c, int ldc) {
    cublasHandle_t h = blas_of(e);
    if (cb_store_bf16(e))
        cublasGemmEx(h, ta, tb, m, n, k, &one, a, CUDA_R_16BF, lda, bm, CUDA_R_16BF, ldb, beta, c, CUDA_R_16BF, ldc,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else cublasSgemm(h, ta, tb, m, n, k, &one, a, lda, bm, ldb, beta, c, ldc);
}
static void gemm(cb_exec *e, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *a, int lda,
                 const void *bm, int ldb, void *c, int ldc) {
    gemm_beta(e, ta, tb, m, n, k, a, lda, bm, ldb, &zero, c, ldc);
}

// one phase of a 1x1 convolution (cb_blas_conv_is_gemm) on cuBLAS, as cb_blas_fc with N*H*W rows: x (M, C),
// w (K, C), y (M, K) row-major; dx: where the input gradient goes
// the same under fp32 NCHW: per image n, column-major, y_n^T (HW, K) = x_n^T (HW, C) w^T (C, K),
// dx_n^T = dy_n^T w, and dw^T (C, K) = the sum over images of x_n dy_n^T (one GEMM per image,
// accumulating: the images' pixels are not contiguous per channel)
static void conv_nchw(cb_exec *e, int i, int ph, void *dx, const float *beta) {
    const cb_layer *L = &e->net->layers[i];
    cublasHandle_t h = blas_of(e);
    int n = (int)L->in.n, hw = (int)(L->in.h * L->in.w), c = L->p.conv.cin, k = L->p.conv.k;
    const float *x = e->lb[L->parents[0]].y, *w = cb_store_weights(e, i);
    float *y = cb_exec_op_out(e, i);
    const float *dy = cb_exec_op_grad(e, i) ? cb_exec_op_grad(e, i) : y; // (plan: y stands in)
    if (ph == CB_PHASE_FORWARD)
        cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, hw, k, c, &one, x, hw, (long long)c * hw, w, c, 0, &zero, y, hw,
                                  (long long)k * hw, n);
    else if (ph == CB_PHASE_BWD_DATA)
        cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, hw, c, k, &one, dy, hw, (long long)k * hw, w, c, 0, beta, (float *)dx,
                                  hw, (long long)c * hw, n);
    else {
        float *dw = cb_store_wgrad(e, i);
        for (int j = 0; j < n; j++)
            cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, c, k, hw, &one, x + (size_t)j * c * hw, hw, dy + (size_t)j * k * hw, hw,
                        j ? &one : &zero, dw, c);
    }
}

// (beta: the data gradient's, 1 to add into dx)
static void conv_phase(cb_exec *e, int i, int ph, void *dx, const float *beta) {
    if (!cb_store_nhwc(e)) {
        conv_nchw(e, i, ph, dx, beta);
        return;
    }
    const cb_layer *L = &e->net->layers[i];
    int m = (int)(L->in.n * L->in.h * L->in.w), c = L->p.conv.cin, k = L->p.conv.k;
    const void *x = e->lb[L->parents[0]].y;
    void *y = cb_exec_op_out(e, i);
    const void *dy = cb_exec_op_grad(e, i) ? (const void *)cb_exec_op_grad(e, i) : y; // (plan: y stands in)
    if (ph == CB_PHASE_FORWARD) gemm(e, CUBLAS_OP_T, CUBLAS_OP_N, k, m, c, cb_store_weights(e, i), c, x, c, y, k);
    else if (ph == CB_PHASE_BWD_DATA) gemm_beta(e, CUBLAS_OP_N, CUBLAS_OP_N, c, m, k, cb_store_weights(e, i), c, dy, k, beta, dx, c);
    else gemm(e, CUBLAS_OP_N, CUBLAS_OP_T, c, k, m, x, c, dy, k, cb_store_wgrad(e, i), c);
}
void cb_blas_conv(cb_exec *e, int i, int ph, void *dx) { conv_phase(e, i, ph, dx, &zero); }
void cb_blas_conv_data_add(cb_exec *e, int i, void *dx) { conv_phase(e, i, CB_PHASE_BWD_DATA, dx, &one); }

// fully connected layers on cuBLAS: y (N,K) = x (N,C) w (K,C)^T + b; dx = dy w; dw = dy^T x
// (under NHWC, x's C is (h, w, c)-ordered and so are the columns of the layer's weight copy)
// An FC layer's input as its GEMM reads it, (N, C*H*W) in (c, h, w) order, the masters' column
// order: under NHWC a spatial input is permuted into l->xperm (N*C*H*W elements, small next to
// the weights: VGG-16's fc6 reads 16 x 25088 of them against 103 M weights, which are therefore
// never permuted). With fp32 storage the GEMMs read the fp32 masters themselves and write the
// weight gradient in place; on bf16 storage the weights' bf16 copy is a plain cast and cuBLAS
// writes the gradient as fp32 straight into the master gradient.
bool cb_blas_fc_permutes(const cb_exec *e, int i) {
    cb_shape in = e->net->layers[e->net->layers[i].parents[0]].out;
    return e->net->layers[i].op == CB_OP_FC && cb_store_nhwc(e) && in.h * in.w > 1;
}
// the input as the GEMMs read it: permuted into to (the forward's copy or the backward's: none is
// kept from forward to backward, the engine's arena places each where it is used)
static const void *fc_input(cb_exec *e, int i, void *to) {
    const cb_layer *L = &e->net->layers[i];
    const void *x = e->lb[L->parents[0]].y;
    if (!to) return x;
    cb_shape in = e->net->layers[L->parents[0]].out;
    cb_fmt_convert(in.n, in.c, in.h, in.w, x, cb_store_of(e)->fmt, to, cb_store_of(e)->fmt & CB_FMT_BF16);
    return to;
}

void cb_blas_fc_data(cb_exec *e, int i, const float *dy, float *dx) {
    const cb_layer *L = &e->net->layers[i];
    cb_store_layer *l = cb_store_layer_of(e, i);
    int n = (int)L->in.n, c = (int)L->in.c, k = L->p.fc.k;
    gemm(e, CUBLAS_OP_N, CUBLAS_OP_N, c, n, k, cb_store_weights(e, i), c, dy, k, l->dxperm ? l->dxperm : (void *)dx, c);
    if (l->dxperm) { // back to the input's NHWC
        cb_shape in = e->net->layers[L->parents[0]].out;
        cb_fmt_convert(in.n, in.c, in.h, in.w, l->dxperm, cb_store_of(e)->fmt & CB_FMT_BF16, dx, cb_store_of(e)->fmt);
    }
}
void cb_blas_fc(cb_exec *e, int i, cb_phase ph) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    int n = (int)L->in.n, c = (int)L->in.c, k = L->p.fc.k;
    const float *dy = cb_exec_op_grad(e, i) ? cb_exec_op_grad(e, i) : cb_exec_op_out(e, i);
    if (ph == CB_PHASE_FORWARD) {
        float *out = cb_exec_op_out(e, i);
        gemm(e, CUBLAS_OP_T, CUBLAS_OP_N, k, n, c, cb_store_weights(e, i), c, fc_input(e, i, cb_store_layer_of(e, i)->xperm), c, out, k);
        if (b->b) cb_store_bias_act(e, i, b->b, out);
    } else if (ph == CB_PHASE_BWD_DATA) {
        cb_blas_fc_data(e, i, dy, e->lb[L->parents[0]].dy);
    } else {
        cb_store_layer *l = cb_store_layer_of(e, i);
        const void *x = fc_input(e, i, l->xperm_bwd ? l->xperm_bwd : l->xperm);
        if (cb_store_bf16(e))
            cublasGemmEx(blas_of(e), CUBLAS_OP_N, CUBLAS_OP_T, c, k, n, &one, x, CUDA_R_16BF, c, dy, CUDA_R_16BF, k, &zero, b->dw,
                         CUDA_R_32F, c, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        else gemm(e, CUBLAS_OP_N, CUBLAS_OP_T, c, k, n, x, c, dy, k, b->dw, c);
        if (b->db) cb_store_bias_grad(e, i, dy, b->db);
    }
}

// cuBLAS for every phase of FC layer i: the storage's buffers and the choice (auto may race it)
cb_status cb_blas_plan_fc(cb_exec *e, int i, cb_error *err) {
    const cb_layer *L = &e->net->layers[i];
    cb_lbuf *b = &e->lb[i];
    cb_store_layer *l = cb_store_layer_of(e, i);
    const char *blas = cb_store_bf16(e) ? "cublasGemmEx bf16" : e->opts.precision == CB_PREC_FP32 ? "cublasSgemm" : "cublasSgemm tf32";
    if (!cb_store_native(e)) {
        cb_status st = cb_store_plan_weights(e, i, err);
        if (st != CB_OK) return st;
        if (cb_blas_fc_permutes(e, i)) { // the arena's copies (cb_dnn_input_copy)
            l->xperm = b->xcopy, l->xperm_bwd = b->xcopy_bwd;
            l->dxperm = e->lb[L->parents[0]].dy ? b->dxcopy : NULL;
            if (!l->xperm || (e->opts.train && !l->xperm_bwd) || (e->lb[L->parents[0]].dy && !l->dxperm))
                return cb_fail(err, CB_STATUS_UNSUPPORTED, e->net->path, L->name, "internal: its permuted input was not planned");
        }
    }
    for (int p = 0; p < CB_PHASE_COUNT; p++) b->choice[p] = cb_choice_of(CB_IMPL_CUBLAS, 0, blas);
    return CB_OK;
}

double cb_blas_time_fc(cb_exec *e, int i, cb_phase p) {
    for (int r = 0; r < 4; r++) {
        if (r == 1) cb_cuda_timer_start(e);
        cb_blas_fc(e, i, p);
    }
    double ms = cb_cuda_timer_stop(e) / 3;
    return cudaGetLastError() == cudaSuccess ? ms : -1;
}

cb_status cb_blas_init(cb_exec *e, cb_error *err) {
    cb_cuda_state *s = e->state;
    s->blas = cb_xcalloc(1, sizeof *s->blas);
    if (cublasCreate(&s->blas->h) != CUBLAS_STATUS_SUCCESS) {
        s->blas->h = NULL;
        return cb_fail(err, CB_STATUS_DEVICE, "--backend", NULL, "cublasCreate failed");
    }
    cublasSetStream(s->blas->h, cudaStreamPerThread); // the stream a step graph captures (Makefile)
    cublasSetMathMode(s->blas->h, e->opts.precision != CB_PREC_FP32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
    return CB_OK;
}

void cb_blas_destroy(cb_exec *e) {
    cb_cuda_state *s = e->state;
    if (!s || !s->blas) return;
    if (s->blas->h) cublasDestroy(s->blas->h);
    free(s->blas);
    s->blas = NULL;
}
