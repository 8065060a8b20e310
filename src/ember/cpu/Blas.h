#pragma once
// The CBLAS entry points Ember uses, whichever library provides them.

#include "ember/core/Macros.h"

namespace ember::blas {

// C = alpha * op(A) @ op(B) + beta * C, row-major float32.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);
void dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
           int ldb, double beta, double* c, int ldc);
// Sets the BLAS library's thread count now (see Note [BLAS threads]); each
// call above otherwise follows ember.set_num_threads by itself.
void set_num_threads(int n);

}  // namespace ember::blas
