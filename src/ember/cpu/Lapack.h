#pragma once
// The LAPACK routines Ember's linear algebra uses, from the library that
// provides BLAS (scipy-openblas32 ships LAPACK too). Column-major matrices,
// 32-bit integers; each routine has a float and a double overload. Routines
// with a workspace take lwork = -1 to query its size into work[0].

namespace ember::lapack {

#define EMBER_LAPACK_DECLARE(T)                                                                                        \
  void getrf(int m, int n, T* a, int lda, int* ipiv, int* info);                                                       \
  void getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb, int* info);             \
  void potrf(char uplo, int n, T* a, int lda, int* info);                                                              \
  void geqrf(int m, int n, T* a, int lda, T* tau, T* work, int lwork, int* info);                                      \
  void orgqr(int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork, int* info);                         \
  void ormqr(char side, char trans, int m, int n, int k, const T* a, int lda, const T* tau, T* c, int ldc, T* work,    \
             int lwork, int* info);                                                                                    \
  void syevd(char jobz, char uplo, int n, T* a, int lda, T* w, T* work, int lwork, int* iwork, int liwork, int* info); \
  void gesdd(char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt, T* work, int lwork,         \
             int* iwork, int* info);                                                                                   \
  void gels(char trans, int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* work, int lwork, int* info);          \
  void gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, int* jpvt, T rcond, int* rank, T* work, int lwork,  \
             int* info);                                                                                               \
  void gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank, T* work, int lwork,       \
             int* iwork, int* info);                                                                                   \
  void gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank, T* work, int lwork,       \
             int* info);                                                                                               \
  void geev(char jobvl, char jobvr, int n, T* a, int lda, T* wr, T* wi, T* vl, int ldvl, T* vr, int ldvr, T* work,     \
            int lwork, int* info);                                                                                     \
  void sytrf(char uplo, int n, T* a, int lda, int* ipiv, T* work, int lwork, int* info);                               \
  void sytrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb, int* info);              \
  /* B = alpha * op(A)^-1 B (left) or B op(A)^-1 (right), A triangular: BLAS trsm, column-major */                     \
  void trsm(bool left, bool upper, bool trans, bool unit, int m, int n, T alpha, const T* a, int lda, T* b, int ldb);

EMBER_LAPACK_DECLARE(float)
EMBER_LAPACK_DECLARE(double)
#undef EMBER_LAPACK_DECLARE

}  // namespace ember::lapack
