#pragma once
// The LAPACK routines Ember's linear algebra uses, from the library that
// provides BLAS (scipy-openblas32 ships LAPACK too). Column-major matrices,
// 32-bit integers; each routine has float, double, complex<float> and
// complex<double> overloads (the complex ones call LAPACK's c/z routines:
// orgqr is ?ungqr, ormqr is ?unmqr, syevd is ?heevd). Routines with a
// workspace take lwork = -1 to query its size into work[0]. potri inverts A
// from its Cholesky factor (one triangle written).

#include <complex>

namespace ember::lapack {

#define EMBER_LAPACK_DECLARE(T)                                                                                        \
  void getrf(int m, int n, T* a, int lda, int* ipiv, int* info);                                                       \
  void getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb, int* info);             \
  void potrf(char uplo, int n, T* a, int lda, int* info);                                                              \
  void potri(char uplo, int n, T* a, int lda, int* info);                                                              \
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

// The complex routines: C the element, R its real part. Where LAPACK's
// complex form takes a real workspace (rwork) or returns real values
// (eigenvalues, singular values) the signature says so. ormqr's and getrs's
// trans may be 'C' (conjugate transpose); trsm's trans is the plain transpose.
#define EMBER_LAPACK_DECLARE_COMPLEX(C, R)                                                                            \
  void getrf(int m, int n, C* a, int lda, int* ipiv, int* info);                                                      \
  void getrs(char trans, int n, int nrhs, const C* a, int lda, const int* ipiv, C* b, int ldb, int* info);            \
  void potrf(char uplo, int n, C* a, int lda, int* info);                                                             \
  void potri(char uplo, int n, C* a, int lda, int* info);                                                             \
  void geqrf(int m, int n, C* a, int lda, C* tau, C* work, int lwork, int* info);                                     \
  void orgqr(int m, int n, int k, C* a, int lda, const C* tau, C* work, int lwork, int* info);                        \
  void ormqr(char side, char trans, int m, int n, int k, const C* a, int lda, const C* tau, C* c, int ldc, C* work,   \
             int lwork, int* info);                                                                                   \
  void heevd(char jobz, char uplo, int n, C* a, int lda, R* w, C* work, int lwork, R* rwork, int lrwork, int* iwork,  \
             int liwork, int* info);                                                                                  \
  void gesdd(char jobz, int m, int n, C* a, int lda, R* s, C* u, int ldu, C* vt, int ldvt, C* work, int lwork,        \
             R* rwork, int* iwork, int* info);                                                                        \
  void gels(char trans, int m, int n, int nrhs, C* a, int lda, C* b, int ldb, C* work, int lwork, int* info);         \
  void gelsy(int m, int n, int nrhs, C* a, int lda, C* b, int ldb, int* jpvt, R rcond, int* rank, C* work, int lwork, \
             R* rwork, int* info);                                                                                    \
  void gelsd(int m, int n, int nrhs, C* a, int lda, C* b, int ldb, R* s, R rcond, int* rank, C* work, int lwork,      \
             R* rwork, int* iwork, int* info);                                                                        \
  void gelss(int m, int n, int nrhs, C* a, int lda, C* b, int ldb, R* s, R rcond, int* rank, C* work, int lwork,      \
             R* rwork, int* info);                                                                                    \
  void geev(char jobvl, char jobvr, int n, C* a, int lda, C* w, C* vl, int ldvl, C* vr, int ldvr, C* work, int lwork, \
            R* rwork, int* info);                                                                                     \
  void sytrf(char uplo, int n, C* a, int lda, int* ipiv, C* work, int lwork, int* info);                              \
  void sytrs(char uplo, int n, int nrhs, const C* a, int lda, const int* ipiv, C* b, int ldb, int* info);             \
  /* the Hermitian forms of sytrf/sytrs (Bunch-Kaufman on A = L D L^H) */                                             \
  void hetrf(char uplo, int n, C* a, int lda, int* ipiv, C* work, int lwork, int* info);                              \
  void hetrs(char uplo, int n, int nrhs, const C* a, int lda, const int* ipiv, C* b, int ldb, int* info);             \
  void trsm(bool left, bool upper, bool trans, bool unit, int m, int n, C alpha, const C* a, int lda, C* b, int ldb);

EMBER_LAPACK_DECLARE_COMPLEX(std::complex<float>, float)
EMBER_LAPACK_DECLARE_COMPLEX(std::complex<double>, double)
#undef EMBER_LAPACK_DECLARE_COMPLEX

}  // namespace ember::lapack
