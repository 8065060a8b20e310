#include "ember/cpu/Blas.h"

#include "ember/ops/BuildInfo.h"

// Prefixed builds (scipy-openblas32) name every symbol scipy_...
#ifdef EMBER_BLAS_SYMBOL_PREFIX
#define EMBER_BLAS_CONCAT2(a, b) a##b
#define EMBER_BLAS_CONCAT(a, b) EMBER_BLAS_CONCAT2(a, b)
#define EMBER_BLAS(name) EMBER_BLAS_CONCAT(EMBER_BLAS_SYMBOL_PREFIX, name)
#else
#define EMBER_BLAS(name) name
#endif

extern "C" {
enum EmberCblasOrder { EmberRowMajor = 101 };
enum EmberCblasTranspose { EmberNoTrans = 111, EmberTrans = 112 };
void EMBER_BLAS(cblas_sgemm)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                             float*, int);
void EMBER_BLAS(cblas_dgemm)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                             double*, int);
#ifdef EMBER_BLAS_IS_OPENBLAS
char* EMBER_BLAS(openblas_get_config)(void);
#endif
}

namespace ember {

const char* blas_info() {
#ifdef EMBER_BLAS_IS_OPENBLAS
  return EMBER_BLAS(openblas_get_config)();
#else
  return EMBER_BLAS_NAME;
#endif
}

namespace blas {

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
  EMBER_BLAS(cblas_sgemm)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, tb ? EmberTrans : EmberNoTrans, m, n, k,
                          alpha, a, lda, b, ldb, beta, c, ldc);
}

void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
           double beta, double* c, int ldc) {
  EMBER_BLAS(cblas_dgemm)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, tb ? EmberTrans : EmberNoTrans, m, n, k,
                          alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace blas
}  // namespace ember
