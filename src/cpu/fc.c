// Fast CPU fully connected layer: one sgemm per pass.
//   x (N,C)  w (K,C)  b (K)  y (N,K)
//   forward          y  = x * w^T (+ b)
//   backward_data    dx = dy * w
//   backward_filter  dw = dy^T * x,  db = column sums of dy
#include <cblas.h>

#include "cpu/kernels.h"

void cb_cpu_fc_forward(int n, int c, int k, const float *x, const float *w, const float *b, float *y)
{
    // prefill y with the bias so the GEMM adds onto it (beta = 1): one pass over y, not two
    if (b)
        for (int i = 0; i < n; i++)
            for (int o = 0; o < k; o++) y[(size_t)i * k + o] = b[o];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, k, c, 1.0f, x, c, w, c, b ? 1.0f : 0.0f, y, k);
}

void cb_cpu_fc_backward_data(int n, int c, int k, const float *dy, const float *w, float *dx)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, c, k, 1.0f, dy, k, w, c, 0.0f, dx, c);
}

void cb_cpu_fc_backward_filter(int n, int c, int k, const float *x, const float *dy, float *dw, float *db)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, c, n, 1.0f, dy, k, x, c, 0.0f, dw, c);
    if (db) {
        for (int o = 0; o < k; o++) db[o] = 0.0f;
        for (int i = 0; i < n; i++)
            for (int o = 0; o < k; o++) db[o] += dy[(size_t)i * k + o];
    }
}
