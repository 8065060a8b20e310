#include "ember/cpu/Lapack.h"

#include <dlfcn.h>

#include <cstddef>

#include "ember/cpu/MklLibrary.h"

// Prefixed builds (scipy-openblas32) name every symbol scipy_...
#ifdef EMBER_BLAS_SYMBOL_PREFIX
#define EMBER_LAPACK_CONCAT2(a, b) a##b
#define EMBER_LAPACK_CONCAT(a, b) EMBER_LAPACK_CONCAT2(a, b)
#define EMBER_LAPACK(name) EMBER_LAPACK_CONCAT(EMBER_BLAS_SYMBOL_PREFIX, name)
#else
#define EMBER_LAPACK(name) name
#endif

// Fortran routines: every argument by pointer, each character argument
// followed by its hidden length at the end of the list.
using flen = std::size_t;

#define EMBER_LAPACK_EXTERN(p, T)                                                                                      \
  void EMBER_LAPACK(p##getrf_)(const int*, const int*, T*, const int*, int*, int*);                                    \
  void EMBER_LAPACK(p##getrs_)(const char*, const int*, const int*, const T*, const int*, const int*, T*, const int*,  \
                               int*, flen);                                                                            \
  void EMBER_LAPACK(p##potrf_)(const char*, const int*, T*, const int*, int*, flen);                                   \
  void EMBER_LAPACK(p##potri_)(const char*, const int*, T*, const int*, int*, flen);                                   \
  void EMBER_LAPACK(p##geqrf_)(const int*, const int*, T*, const int*, T*, T*, const int*, int*);                      \
  void EMBER_LAPACK(p##orgqr_)(const int*, const int*, const int*, T*, const int*, const T*, T*, const int*, int*);    \
  void EMBER_LAPACK(p##ormqr_)(const char*, const char*, const int*, const int*, const int*, const T*, const int*,     \
                               const T*, T*, const int*, T*, const int*, int*, flen, flen);                            \
  void EMBER_LAPACK(p##syevd_)(const char*, const char*, const int*, T*, const int*, T*, T*, const int*, int*,         \
                               const int*, int*, flen, flen);                                                          \
  void EMBER_LAPACK(p##gesdd_)(const char*, const int*, const int*, T*, const int*, T*, T*, const int*, T*,            \
                               const int*, T*, const int*, int*, int*, flen);                                          \
  void EMBER_LAPACK(p##gels_)(const char*, const int*, const int*, const int*, T*, const int*, T*, const int*, T*,     \
                              const int*, int*, flen);                                                                 \
  void EMBER_LAPACK(p##gelsy_)(const int*, const int*, const int*, T*, const int*, T*, const int*, int*, const T*,     \
                               int*, T*, const int*, int*);                                                            \
  void EMBER_LAPACK(p##gelsd_)(const int*, const int*, const int*, T*, const int*, T*, const int*, T*, const T*, int*, \
                               T*, const int*, int*, int*);                                                            \
  void EMBER_LAPACK(p##gelss_)(const int*, const int*, const int*, T*, const int*, T*, const int*, T*, const T*, int*, \
                               T*, const int*, int*);                                                                  \
  void EMBER_LAPACK(p##geev_)(const char*, const char*, const int*, T*, const int*, T*, T*, T*, const int*, T*,        \
                              const int*, T*, const int*, int*, flen, flen);                                           \
  void EMBER_LAPACK(p##sytrf_)(const char*, const int*, T*, const int*, int*, T*, const int*, int*, flen);             \
  void EMBER_LAPACK(p##sytrs_)(const char*, const int*, const int*, const T*, const int*, const int*, T*, const int*,  \
                               int*, flen);                                                                            \
  void EMBER_LAPACK(cblas_##p##trsm)(int, int, int, int, int, int, int, T, const T*, int, T*, int);

// The complex routines (C the element, R its real part); cblas takes alpha by address.
#define EMBER_LAPACK_EXTERN_COMPLEX(p, C, R)                                                                           \
  void EMBER_LAPACK(p##getrf_)(const int*, const int*, C*, const int*, int*, int*);                                    \
  void EMBER_LAPACK(p##getrs_)(const char*, const int*, const int*, const C*, const int*, const int*, C*, const int*,  \
                               int*, flen);                                                                            \
  void EMBER_LAPACK(p##potrf_)(const char*, const int*, C*, const int*, int*, flen);                                   \
  void EMBER_LAPACK(p##potri_)(const char*, const int*, C*, const int*, int*, flen);                                   \
  void EMBER_LAPACK(p##geqrf_)(const int*, const int*, C*, const int*, C*, C*, const int*, int*);                      \
  void EMBER_LAPACK(p##ungqr_)(const int*, const int*, const int*, C*, const int*, const C*, C*, const int*, int*);    \
  void EMBER_LAPACK(p##unmqr_)(const char*, const char*, const int*, const int*, const int*, const C*, const int*,     \
                               const C*, C*, const int*, C*, const int*, int*, flen, flen);                            \
  void EMBER_LAPACK(p##heevd_)(const char*, const char*, const int*, C*, const int*, R*, C*, const int*, R*,           \
                               const int*, int*, const int*, int*, flen, flen);                                        \
  void EMBER_LAPACK(p##gesdd_)(const char*, const int*, const int*, C*, const int*, R*, C*, const int*, C*,            \
                               const int*, C*, const int*, R*, int*, int*, flen);                                      \
  void EMBER_LAPACK(p##gels_)(const char*, const int*, const int*, const int*, C*, const int*, C*, const int*, C*,     \
                              const int*, int*, flen);                                                                 \
  void EMBER_LAPACK(p##gelsy_)(const int*, const int*, const int*, C*, const int*, C*, const int*, int*, const R*,     \
                               int*, C*, const int*, R*, int*);                                                        \
  void EMBER_LAPACK(p##gelsd_)(const int*, const int*, const int*, C*, const int*, C*, const int*, R*, const R*, int*, \
                               C*, const int*, R*, int*, int*);                                                        \
  void EMBER_LAPACK(p##gelss_)(const int*, const int*, const int*, C*, const int*, C*, const int*, R*, const R*, int*, \
                               C*, const int*, R*, int*);                                                              \
  void EMBER_LAPACK(p##geev_)(const char*, const char*, const int*, C*, const int*, C*, C*, const int*, C*,            \
                              const int*, C*, const int*, R*, int*, flen, flen);                                       \
  void EMBER_LAPACK(p##sytrf_)(const char*, const int*, C*, const int*, int*, C*, const int*, int*, flen);             \
  void EMBER_LAPACK(p##sytrs_)(const char*, const int*, const int*, const C*, const int*, const int*, C*, const int*,  \
                               int*, flen);                                                                            \
  void EMBER_LAPACK(p##hetrf_)(const char*, const int*, C*, const int*, int*, C*, const int*, int*, flen);             \
  void EMBER_LAPACK(p##hetrs_)(const char*, const int*, const int*, const C*, const int*, const int*, C*, const int*,  \
                               int*, flen);                                                                            \
  void EMBER_LAPACK(cblas_##p##trsm)(int, int, int, int, int, int, int, const void*, const void*, int, void*, int);

extern "C" {
EMBER_LAPACK_EXTERN(s, float)
EMBER_LAPACK_EXTERN(d, double)
EMBER_LAPACK_EXTERN_COMPLEX(c, std::complex<float>, float)
EMBER_LAPACK_EXTERN_COMPLEX(z, std::complex<double>, double)
}

namespace ember::lapack {

namespace {
// Note [MKL for LAPACK]
// PyTorch's CPU wheels factor and decompose with MKL's LAPACK. When MKL
// computes the products (Note [MKL for matrix products]) the routines below
// come from the same library, so the decompositions are PyTorch's bit for
// bit; otherwise from the build's BLAS package.
#define EMBER_MKL_ROUTINES(p)                  \
  decltype(&EMBER_LAPACK(p##getrf_)) p##getrf; \
  decltype(&EMBER_LAPACK(p##getrs_)) p##getrs; \
  decltype(&EMBER_LAPACK(p##potrf_)) p##potrf; \
  decltype(&EMBER_LAPACK(p##potri_)) p##potri; \
  decltype(&EMBER_LAPACK(p##geqrf_)) p##geqrf; \
  decltype(&EMBER_LAPACK(p##orgqr_)) p##orgqr; \
  decltype(&EMBER_LAPACK(p##ormqr_)) p##ormqr; \
  decltype(&EMBER_LAPACK(p##syevd_)) p##syevd; \
  decltype(&EMBER_LAPACK(p##gesdd_)) p##gesdd; \
  decltype(&EMBER_LAPACK(p##gels_)) p##gels;   \
  decltype(&EMBER_LAPACK(p##gelsy_)) p##gelsy; \
  decltype(&EMBER_LAPACK(p##gelsd_)) p##gelsd; \
  decltype(&EMBER_LAPACK(p##gelss_)) p##gelss; \
  decltype(&EMBER_LAPACK(p##geev_)) p##geev;   \
  decltype(&EMBER_LAPACK(p##sytrf_)) p##sytrf; \
  decltype(&EMBER_LAPACK(p##sytrs_)) p##sytrs; \
  decltype(&EMBER_LAPACK(cblas_##p##trsm)) p##trsm;

#define EMBER_MKL_ROUTINES_COMPLEX(p)          \
  decltype(&EMBER_LAPACK(p##getrf_)) p##getrf; \
  decltype(&EMBER_LAPACK(p##getrs_)) p##getrs; \
  decltype(&EMBER_LAPACK(p##potrf_)) p##potrf; \
  decltype(&EMBER_LAPACK(p##potri_)) p##potri; \
  decltype(&EMBER_LAPACK(p##geqrf_)) p##geqrf; \
  decltype(&EMBER_LAPACK(p##ungqr_)) p##ungqr; \
  decltype(&EMBER_LAPACK(p##unmqr_)) p##unmqr; \
  decltype(&EMBER_LAPACK(p##heevd_)) p##heevd; \
  decltype(&EMBER_LAPACK(p##gesdd_)) p##gesdd; \
  decltype(&EMBER_LAPACK(p##gels_)) p##gels;   \
  decltype(&EMBER_LAPACK(p##gelsy_)) p##gelsy; \
  decltype(&EMBER_LAPACK(p##gelsd_)) p##gelsd; \
  decltype(&EMBER_LAPACK(p##gelss_)) p##gelss; \
  decltype(&EMBER_LAPACK(p##geev_)) p##geev;   \
  decltype(&EMBER_LAPACK(p##sytrf_)) p##sytrf; \
  decltype(&EMBER_LAPACK(p##sytrs_)) p##sytrs; \
  decltype(&EMBER_LAPACK(p##hetrf_)) p##hetrf; \
  decltype(&EMBER_LAPACK(p##hetrs_)) p##hetrs; \
  decltype(&EMBER_LAPACK(cblas_##p##trsm)) p##trsm;

struct MklLapack {
  EMBER_MKL_ROUTINES(s)
  EMBER_MKL_ROUTINES(d)
  EMBER_MKL_ROUTINES_COMPLEX(c)
  EMBER_MKL_ROUTINES_COMPLEX(z)
  bool loaded = false;
};
#undef EMBER_MKL_ROUTINES
#undef EMBER_MKL_ROUTINES_COMPLEX

MklLapack load_mkl_lapack() {
  MklLapack m{};
  void* lib = blas::mkl_library();
  if (!lib) return m;
  bool ok = true;
#define EMBER_MKL_FIND(p)                                                                                          \
  ok = ok && blas::find_symbol(lib, #p "getrf_", m.p##getrf) && blas::find_symbol(lib, #p "getrs_", m.p##getrs) && \
       blas::find_symbol(lib, #p "potrf_", m.p##potrf) && blas::find_symbol(lib, #p "geqrf_", m.p##geqrf) &&       \
       blas::find_symbol(lib, #p "potri_", m.p##potri) && blas::find_symbol(lib, #p "orgqr_", m.p##orgqr) &&       \
       blas::find_symbol(lib, #p "ormqr_", m.p##ormqr) && blas::find_symbol(lib, #p "syevd_", m.p##syevd) &&       \
       blas::find_symbol(lib, #p "gesdd_", m.p##gesdd) && blas::find_symbol(lib, #p "gels_", m.p##gels) &&         \
       blas::find_symbol(lib, #p "gelsy_", m.p##gelsy) && blas::find_symbol(lib, #p "gelsd_", m.p##gelsd) &&       \
       blas::find_symbol(lib, #p "gelss_", m.p##gelss) && blas::find_symbol(lib, #p "geev_", m.p##geev) &&         \
       blas::find_symbol(lib, #p "sytrf_", m.p##sytrf) && blas::find_symbol(lib, #p "sytrs_", m.p##sytrs) &&       \
       blas::find_symbol(lib, "cblas_" #p "trsm", m.p##trsm);
#define EMBER_MKL_FIND_COMPLEX(p)                                                                                  \
  ok = ok && blas::find_symbol(lib, #p "getrf_", m.p##getrf) && blas::find_symbol(lib, #p "getrs_", m.p##getrs) && \
       blas::find_symbol(lib, #p "potrf_", m.p##potrf) && blas::find_symbol(lib, #p "geqrf_", m.p##geqrf) &&       \
       blas::find_symbol(lib, #p "potri_", m.p##potri) && blas::find_symbol(lib, #p "ungqr_", m.p##ungqr) &&       \
       blas::find_symbol(lib, #p "unmqr_", m.p##unmqr) && blas::find_symbol(lib, #p "heevd_", m.p##heevd) &&       \
       blas::find_symbol(lib, #p "gesdd_", m.p##gesdd) && blas::find_symbol(lib, #p "gels_", m.p##gels) &&         \
       blas::find_symbol(lib, #p "gelsy_", m.p##gelsy) && blas::find_symbol(lib, #p "gelsd_", m.p##gelsd) &&       \
       blas::find_symbol(lib, #p "gelss_", m.p##gelss) && blas::find_symbol(lib, #p "geev_", m.p##geev) &&         \
       blas::find_symbol(lib, #p "sytrf_", m.p##sytrf) && blas::find_symbol(lib, #p "sytrs_", m.p##sytrs) &&       \
       blas::find_symbol(lib, #p "hetrf_", m.p##hetrf) && blas::find_symbol(lib, #p "hetrs_", m.p##hetrs) &&       \
       blas::find_symbol(lib, "cblas_" #p "trsm", m.p##trsm);
  EMBER_MKL_FIND(s)
  EMBER_MKL_FIND(d)
  EMBER_MKL_FIND_COMPLEX(c)
  EMBER_MKL_FIND_COMPLEX(z)
#undef EMBER_MKL_FIND
#undef EMBER_MKL_FIND_COMPLEX
  m.loaded = ok;
  return m;
}

const MklLapack& mkl() {
  static const MklLapack m = load_mkl_lapack();
  return m;
}

// The routine from MKL when loaded (its threads synced to Ember's), else the build's.
#define EMBER_ROUTINE(p, name, fallback) (mkl().loaded ? (blas::sync_mkl_threads(), mkl().p##name) : &fallback)

enum Cblas { ColMajor = 102, NoTrans = 111, Trans = 112, Upper = 121, Lower = 122, NonUnit = 131, Unit = 132 };
enum CblasSide { Left = 141, Right = 142 };
}  // namespace

// The routines whose real and complex forms share one signature.
#define EMBER_LAPACK_DEFINE_SHARED(p, T)                                                                    \
  void getrf(int m, int n, T* a, int lda, int* ipiv, int* info) {                                           \
    EMBER_ROUTINE(p, getrf, EMBER_LAPACK(p##getrf_))(&m, &n, a, &lda, ipiv, info);                          \
  }                                                                                                         \
  void getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb, int* info) { \
    EMBER_ROUTINE(p, getrs, EMBER_LAPACK(p##getrs_))(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);   \
  }                                                                                                         \
  void potrf(char uplo, int n, T* a, int lda, int* info) {                                                  \
    EMBER_ROUTINE(p, potrf, EMBER_LAPACK(p##potrf_))(&uplo, &n, a, &lda, info, 1);                          \
  }                                                                                                         \
  void potri(char uplo, int n, T* a, int lda, int* info) {                                                  \
    EMBER_ROUTINE(p, potri, EMBER_LAPACK(p##potri_))(&uplo, &n, a, &lda, info, 1);                          \
  }                                                                                                         \
  void geqrf(int m, int n, T* a, int lda, T* tau, T* work, int lwork, int* info) {                          \
    EMBER_ROUTINE(p, geqrf, EMBER_LAPACK(p##geqrf_))(&m, &n, a, &lda, tau, work, &lwork, info);             \
  }

#define EMBER_LAPACK_DEFINE(p, T)                                                                                      \
  EMBER_LAPACK_DEFINE_SHARED(p, T)                                                                                     \
  void orgqr(int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork, int* info) {                        \
    EMBER_ROUTINE(p, orgqr, EMBER_LAPACK(p##orgqr_))(&m, &n, &k, a, &lda, tau, work, &lwork, info);                    \
  }                                                                                                                    \
  void ormqr(char side, char trans, int m, int n, int k, const T* a, int lda, const T* tau, T* c, int ldc, T* work,    \
             int lwork, int* info) {                                                                                   \
    EMBER_ROUTINE(p, ormqr, EMBER_LAPACK(p##ormqr_))(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork,   \
                                                     info, 1, 1);                                                      \
  }                                                                                                                    \
  void syevd(char jobz, char uplo, int n, T* a, int lda, T* w, T* work, int lwork, int* iwork, int liwork,             \
             int* info) {                                                                                              \
    EMBER_ROUTINE(p, syevd, EMBER_LAPACK(p##syevd_))(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, \
                                                     1, 1);                                                            \
  }                                                                                                                    \
  void gesdd(char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt, T* work, int lwork,         \
             int* iwork, int* info) {                                                                                  \
    EMBER_ROUTINE(p, gesdd, EMBER_LAPACK(p##gesdd_))(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork,      \
                                                     iwork, info, 1);                                                  \
  }                                                                                                                    \
  void gels(char trans, int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* work, int lwork, int* info) {         \
    EMBER_ROUTINE(p, gels, EMBER_LAPACK(p##gels_))(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);    \
  }                                                                                                                    \
  void gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, int* jpvt, T rcond, int* rank, T* work, int lwork,  \
             int* info) {                                                                                              \
    EMBER_ROUTINE(p, gelsy, EMBER_LAPACK(p##gelsy_))(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work,        \
                                                     &lwork, info);                                                    \
  }                                                                                                                    \
  void gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank, T* work, int lwork,       \
             int* iwork, int* info) {                                                                                  \
    EMBER_ROUTINE(p, gelsd, EMBER_LAPACK(p##gelsd_))(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork,   \
                                                     iwork, info);                                                     \
  }                                                                                                                    \
  void gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond, int* rank, T* work, int lwork,       \
             int* info) {                                                                                              \
    EMBER_ROUTINE(p, gelss, EMBER_LAPACK(p##gelss_))(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork,   \
                                                     info);                                                            \
  }                                                                                                                    \
  void geev(char jobvl, char jobvr, int n, T* a, int lda, T* wr, T* wi, T* vl, int ldvl, T* vr, int ldvr, T* work,     \
            int lwork, int* info) {                                                                                    \
    EMBER_ROUTINE(p, geev, EMBER_LAPACK(p##geev_))(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work,    \
                                                   &lwork, info, 1, 1);                                                \
  }                                                                                                                    \
  void sytrf(char uplo, int n, T* a, int lda, int* ipiv, T* work, int lwork, int* info) {                              \
    EMBER_ROUTINE(p, sytrf, EMBER_LAPACK(p##sytrf_))(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);                 \
  }                                                                                                                    \
  void sytrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb, int* info) {             \
    EMBER_ROUTINE(p, sytrs, EMBER_LAPACK(p##sytrs_))(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);               \
  }                                                                                                                    \
  void trsm(bool left, bool upper, bool trans, bool unit, int m, int n, T alpha, const T* a, int lda, T* b, int ldb) { \
    EMBER_ROUTINE(p, trsm, EMBER_LAPACK(cblas_##p##trsm))(ColMajor, left ? Left : Right, upper ? Upper : Lower,        \
                                                          trans ? Trans : NoTrans, unit ? Unit : NonUnit, m, n, alpha, \
                                                          a, lda, b, ldb);                                             \
  }

EMBER_LAPACK_DEFINE(s, float)
EMBER_LAPACK_DEFINE(d, double)

#define EMBER_LAPACK_DEFINE_COMPLEX(p, C, R)                                                                           \
  EMBER_LAPACK_DEFINE_SHARED(p, C)                                                                                     \
  void orgqr(int m, int n, int k, C* a, int lda, const C* tau, C* work, int lwork, int* info) {                        \
    EMBER_ROUTINE(p, ungqr, EMBER_LAPACK(p##ungqr_))(&m, &n, &k, a, &lda, tau, work, &lwork, info);                    \
  }                                                                                                                    \
  void ormqr(char side, char trans, int m, int n, int k, const C* a, int lda, const C* tau, C* c, int ldc, C* work,    \
             int lwork, int* info) {                                                                                   \
    EMBER_ROUTINE(p, unmqr, EMBER_LAPACK(p##unmqr_))(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork,   \
                                                     info, 1, 1);                                                      \
  }                                                                                                                    \
  void heevd(char jobz, char uplo, int n, C* a, int lda, R* w, C* work, int lwork, R* rwork, int lrwork, int* iwork,   \
             int liwork, int* info) {                                                                                  \
    EMBER_ROUTINE(p, heevd, EMBER_LAPACK(p##heevd_))(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork,       \
                                                     iwork, &liwork, info, 1, 1);                                      \
  }                                                                                                                    \
  void gesdd(char jobz, int m, int n, C* a, int lda, R* s, C* u, int ldu, C* vt, int ldvt, C* work, int lwork,         \
             R* rwork, int* iwork, int* info) {                                                                        \
    EMBER_ROUTINE(p, gesdd, EMBER_LAPACK(p##gesdd_))(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork,      \
                                                     rwork, iwork, info, 1);                                           \
  }                                                                                                                    \
  void gels(char trans, int m, int n, int nrhs, C* a, int lda, C* b, int ldb, C* work, int lwork, int* info) {         \
    EMBER_ROUTINE(p, gels, EMBER_LAPACK(p##gels_))(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);    \
  }                                                                                                                    \
  void gelsy(int m, int n, int nrhs, C* a, int lda, C* b, int ldb, int* jpvt, R rcond, int* rank, C* work, int lwork,  \
             R* rwork, int* info) {                                                                                    \
    EMBER_ROUTINE(p, gelsy, EMBER_LAPACK(p##gelsy_))(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work,        \
                                                     &lwork, rwork, info);                                             \
  }                                                                                                                    \
  void gelsd(int m, int n, int nrhs, C* a, int lda, C* b, int ldb, R* s, R rcond, int* rank, C* work, int lwork,       \
             R* rwork, int* iwork, int* info) {                                                                        \
    EMBER_ROUTINE(p, gelsd, EMBER_LAPACK(p##gelsd_))(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork,   \
                                                     rwork, iwork, info);                                              \
  }                                                                                                                    \
  void gelss(int m, int n, int nrhs, C* a, int lda, C* b, int ldb, R* s, R rcond, int* rank, C* work, int lwork,       \
             R* rwork, int* info) {                                                                                    \
    EMBER_ROUTINE(p, gelss, EMBER_LAPACK(p##gelss_))(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork,   \
                                                     rwork, info);                                                     \
  }                                                                                                                    \
  void geev(char jobvl, char jobvr, int n, C* a, int lda, C* w, C* vl, int ldvl, C* vr, int ldvr, C* work, int lwork,  \
            R* rwork, int* info) {                                                                                     \
    EMBER_ROUTINE(p, geev, EMBER_LAPACK(p##geev_))(&jobvl, &jobvr, &n, a, &lda, w, vl, &ldvl, vr, &ldvr, work, &lwork, \
                                                   rwork, info, 1, 1);                                                 \
  }                                                                                                                    \
  void sytrf(char uplo, int n, C* a, int lda, int* ipiv, C* work, int lwork, int* info) {                              \
    EMBER_ROUTINE(p, sytrf, EMBER_LAPACK(p##sytrf_))(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);                 \
  }                                                                                                                    \
  void sytrs(char uplo, int n, int nrhs, const C* a, int lda, const int* ipiv, C* b, int ldb, int* info) {             \
    EMBER_ROUTINE(p, sytrs, EMBER_LAPACK(p##sytrs_))(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);               \
  }                                                                                                                    \
  void hetrf(char uplo, int n, C* a, int lda, int* ipiv, C* work, int lwork, int* info) {                              \
    EMBER_ROUTINE(p, hetrf, EMBER_LAPACK(p##hetrf_))(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);                 \
  }                                                                                                                    \
  void hetrs(char uplo, int n, int nrhs, const C* a, int lda, const int* ipiv, C* b, int ldb, int* info) {             \
    EMBER_ROUTINE(p, hetrs, EMBER_LAPACK(p##hetrs_))(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);               \
  }                                                                                                                    \
  void trsm(bool left, bool upper, bool trans, bool unit, int m, int n, C alpha, const C* a, int lda, C* b, int ldb) { \
    EMBER_ROUTINE(p, trsm, EMBER_LAPACK(cblas_##p##trsm))(ColMajor, left ? Left : Right, upper ? Upper : Lower,        \
                                                          trans ? Trans : NoTrans, unit ? Unit : NonUnit, m, n,        \
                                                          &alpha, a, lda, b, ldb);                                     \
  }

EMBER_LAPACK_DEFINE_COMPLEX(c, std::complex<float>, float)
EMBER_LAPACK_DEFINE_COMPLEX(z, std::complex<double>, double)

}  // namespace ember::lapack
