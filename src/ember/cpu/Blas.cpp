#include "ember/cpu/Blas.h"

#include <atomic>

#include "ember/ops/BuildInfo.h"
#include "ember/ops/Parallel.h"

#ifdef EMBER_USE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

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
void EMBER_BLAS(cblas_sgemm)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                             int);
void EMBER_BLAS(cblas_dgemm)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                             double*, int);
void EMBER_BLAS(cblas_cgemm)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*,
                             void*, int);
void EMBER_BLAS(cblas_zgemm)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*,
                             void*, int);
void EMBER_BLAS(cblas_sgemv)(int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
void EMBER_BLAS(cblas_dgemv)(int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
float EMBER_BLAS(cblas_sdot)(int, const float*, int, const float*, int);
double EMBER_BLAS(cblas_ddot)(int, const double*, int, const double*, int);
#ifdef EMBER_BLAS_IS_OPENBLAS
char* EMBER_BLAS(openblas_get_config)(void);
void EMBER_BLAS(openblas_set_num_threads)(int);
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

namespace {
// Note [BLAS threads]
// OpenBLAS keeps its own thread pool. Before each call its size is brought in
// line with Ember's thread count, so ember.set_num_threads(1) also makes
// matrix products single-threaded. Code that calls BLAS from inside its own
// parallel region first calls set_num_threads(1) outside the region, so the
// workers find the pool already at one thread and never resize it.
std::atomic<int> g_blas_threads{-1};

void sync_threads() {
#ifdef EMBER_BLAS_IS_OPENBLAS
  const int want = in_parallel_region() ? 1 : get_num_threads();
  if (want != g_blas_threads.load(std::memory_order_relaxed)) {
    EMBER_BLAS(openblas_set_num_threads)(want);
    g_blas_threads.store(want, std::memory_order_relaxed);
  }
#endif
}
}  // namespace

void set_num_threads(int n) {
#ifdef EMBER_BLAS_IS_OPENBLAS
  if (n != g_blas_threads.load(std::memory_order_relaxed)) {
    EMBER_BLAS(openblas_set_num_threads)(n);
    g_blas_threads.store(n, std::memory_order_relaxed);
  }
#else
  (void)n;
#endif
}

// Note [float32 GEMM]: with oneDNN in the build, float32 matrix products go
// to its sgemm: it measured 1-13% faster than OpenBLAS here and runs on
// OpenMP, the runtime of Ember's own loops, so the two never compete for
// cores (docs/decisions/0008-gemm.md).
void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
#ifdef EMBER_USE_ONEDNN
  // Products below about 2^17 multiply-adds take a few microseconds: waking
  // a second thread costs as much, so they run on one.
  // The OpenMP thread count is per-thread state that other libraries in the
  // process (PyTorch's kernels, say) read too: it is restored afterwards.
  constexpr int64_t kSerialWork = int64_t(1) << 17;
  const bool serial = int64_t(m) * n * k < kSerialWork;
  sync_openmp_threads(serial);
  const bool done =
      m > 0 && n > 0 && k > 0 &&
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == dnnl_success;
  if (serial) sync_openmp_threads();
  if (done) return;
#endif
  sync_threads();
  EMBER_BLAS(cblas_sgemm)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, tb ? EmberTrans : EmberNoTrans, m, n, k, alpha,
                          a, lda, b, ldb, beta, c, ldc);
}

void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
           double beta, double* c, int ldc) {
  sync_threads();
  EMBER_BLAS(cblas_dgemm)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, tb ? EmberTrans : EmberNoTrans, m, n, k, alpha,
                          a, lda, b, ldb, beta, c, ldc);
}

void cgemm(bool ta, bool tb, int m, int n, int k, const void* alpha, const void* a, int lda, const void* b, int ldb,
           const void* beta, void* c, int ldc) {
  sync_threads();
  EMBER_BLAS(cblas_cgemm)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, tb ? EmberTrans : EmberNoTrans, m, n, k, alpha,
                          a, lda, b, ldb, beta, c, ldc);
}

void zgemm(bool ta, bool tb, int m, int n, int k, const void* alpha, const void* a, int lda, const void* b, int ldb,
           const void* beta, void* c, int ldc) {
  sync_threads();
  EMBER_BLAS(cblas_zgemm)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, tb ? EmberTrans : EmberNoTrans, m, n, k, alpha,
                          a, lda, b, ldb, beta, c, ldc);
}

void sgemv(bool ta, int m, int n, float alpha, const float* a, int lda, const float* x, int incx, float beta, float* y,
           int incy) {
  sync_threads();
  EMBER_BLAS(cblas_sgemv)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

void dgemv(bool ta, int m, int n, double alpha, const double* a, int lda, const double* x, int incx, double beta,
           double* y, int incy) {
  sync_threads();
  EMBER_BLAS(cblas_dgemv)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

float sdot(int n, const float* x, int incx, const float* y, int incy) {
  sync_threads();
  return EMBER_BLAS(cblas_sdot)(n, x, incx, y, incy);
}

double ddot(int n, const double* x, int incx, const double* y, int incy) {
  sync_threads();
  return EMBER_BLAS(cblas_ddot)(n, x, incx, y, incy);
}

}  // namespace blas
}  // namespace ember
