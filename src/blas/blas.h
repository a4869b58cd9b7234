// cuBLAS GEMMs of the library backends (cudnn, auto): fully connected layers on cuBLAS in every
// storage, and the 1x1 convolutions of stride 1 without padding: under NHWC a GEMM over the N*H*W
// pixel rows, under fp32 NCHW one per image. fp32 storage: cublasSgemm (tf32 by the handle's math mode outside --precision
// fp32); bf16: cublasGemmEx, bf16 in, fp32 accumulation. Private to the GPU backends.
#ifndef CB_BLAS_BLAS_H
#define CB_BLAS_BLAS_H

#include "storage/storage.h"

#include <cublas_v2.h>

typedef struct cb_blas {
    cublasHandle_t h;
} cb_blas;

cb_status cb_blas_init(cb_exec *e, cb_error *err);
void cb_blas_destroy(cb_exec *e);

// FC layer i: its storage buffers and cuBLAS as the choice of every phase
cb_status cb_blas_plan_fc(cb_exec *e, int i, cb_error *err);
// under NHWC an FC layer with a spatial input reads a permuted copy of it (cb_lbuf xcopy)
bool cb_blas_fc_permutes(const cb_exec *e, int i);
// one phase of FC layer i (bias and fused ReLU with the forward, bias gradient with the filter's)
void cb_blas_fc(cb_exec *e, int i, cb_phase ph);
void cb_blas_fc_data(cb_exec *e, int i, const float *dy, float *dx);
double cb_blas_time_fc(cb_exec *e, int i, cb_phase p); // mean ms of 3 after a warm-up, -1 on failure

// is conv layer i a GEMM under this storage (1x1, stride 1, no padding, ungrouped; NHWC with
// aligned channels, or fp32 NCHW: one GEMM per image)?
bool cb_blas_conv_is_gemm(const cb_exec *e, const cb_layer *L);
// one phase of such a convolution; dx: where the input gradient goes
void cb_blas_conv(cb_exec *e, int i, int ph, void *dx);
// its data gradient added into dx (dx += it, beta 1)
void cb_blas_conv_data_add(cb_exec *e, int i, void *dx);
double cb_blas_time_conv(cb_exec *e, int i, int ph); // mean ms of 3 after a warm-up, -1 on failure

#endif
