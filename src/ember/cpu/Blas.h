#pragma once
// The CBLAS entry points Ember uses, whichever library provides them.

#include "ember/core/Macros.h"

namespace ember::blas {

// C = alpha * op(A) @ op(B) + beta * C, row-major float32.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);
void dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
           int ldb, double beta, double* c, int ldc);
// The same for complex64 and complex128 (alpha and beta point at one element).
void cgemm(bool trans_a, bool trans_b, int m, int n, int k, const void* alpha, const void* a, int lda, const void* b,
           int ldb, const void* beta, void* c, int ldc);
void zgemm(bool trans_a, bool trans_b, int m, int n, int k, const void* alpha, const void* a, int lda, const void* b,
           int ldb, const void* beta, void* c, int ldc);
// y = alpha * op(A) @ x + beta * y, row-major A (m x n before op).
void sgemv(bool trans_a, int m, int n, float alpha, const float* a, int lda, const float* x, int incx, float beta,
           float* y, int incy);
void dgemv(bool trans_a, int m, int n, double alpha, const double* a, int lda, const double* x, int incx, double beta,
           double* y, int incy);
float sdot(int n, const float* x, int incx, const float* y, int incy);
double ddot(int n, const double* x, int incx, const double* y, int incy);
// The same product through oneDNN's own sgemm, as oneDNN's primitives call it
// internally (the LSTM layer op mirrors its RNN; Note [LSTM layer op]); sgemm
// when the build has no oneDNN.
void onednn_sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                  float beta, float* c, int ldc);
// Whether oneDNN's CPU ISA (after ONEDNN_MAX_CPU_ISA) includes AVX2, which its
// brgemm-based RNN needs; false without oneDNN.
bool onednn_has_avx2();
// Whether MKL computes the products (Note [MKL for matrix products]).
bool is_mkl();
// Column-major C = alpha * op(A) @ op(B) + beta * C through MKL, PyTorch's own
// call; kind 's', 'd', 'c' or 'z'; alpha and beta point at one element. A
// conj_ operand (transposed) is read conjugate-transposed.
void gemm_column_major(char kind, bool trans_a, bool trans_b, int m, int n, int k, const void* alpha, const void* a,
                       int lda, const void* b, int ldb, const void* beta, void* c, int ldc, bool conj_a = false,
                       bool conj_b = false);
// MKL's batched product (cblas_?gemm_batch, one group, as PyTorch's bmm calls
// it): C[i] = alpha * op(A[i]) @ op(B[i]) + beta * C[i], column-major. False,
// with nothing done, without MKL.
bool gemm_batch_column_major(char kind, bool trans_a, bool trans_b, int m, int n, int k, const void* alpha,
                             const void** a, int lda, const void** b, int ldb, const void* beta, void** c, int ldc,
                             int batch);
// MKL's complex dot product (kind 'c' or 'z'; conj_x: sum conj(x) * y) into
// out. False, with nothing done, without MKL.
bool complex_dot(char kind, bool conj_x, int n, const void* x, int incx, const void* y, int incy, void* out);
// MKL's elementwise (VML) function `name` ("Exp", "Ln", ...): out[i] = f(in[i])
// for n elements in PyTorch's accuracy mode, or null without MKL (Note [MKL
// for elementwise functions]).
struct VmlFunction {
  void (*f)(int n, const float* in, float* out, long long mode);
  void (*d)(int n, const double* in, double* out, long long mode);
};
const VmlFunction* vml(const char* name);
constexpr long long kVmlMode = 0x2 | 0x100 | 0x140000;  // high accuracy, errors ignored, denormals kept
// Sets the BLAS library's thread count now (see Note [BLAS threads]); each
// call above otherwise follows ember.set_num_threads by itself.
void set_num_threads(int n);

}  // namespace ember::blas
