#include "ember/cpu/Blas.h"
#include "ember/cpu/MklLibrary.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

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

namespace {
// Note [MKL for matrix products]
// PyTorch's CPU wheels compute matrix products with MKL 2024.2; the same
// library, called the way PyTorch calls it (column-major, the operands
// swapped), gives bit-identical products, which no other BLAS does. So when
// MKL's single dynamic library can be loaded (the `mkl` package from the
// index installs it; EMBER_MKL_LIBRARY names it; EMBER_BLAS=openblas turns it
// off), every float32/float64/complex product, matrix-vector product and dot
// goes to it on the GNU OpenMP runtime Ember's own loops use. Otherwise the
// build's BLAS (and oneDNN's sgemm) computes them.
struct Mkl {
  using Gemm = void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*,
                        void*, int);
  void (*sgemm)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
  void (*dgemm)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
  Gemm cgemm, zgemm;
  void (*sgemv)(int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
  void (*dgemv)(int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
  float (*sdot)(int, const float*, int, const float*, int);
  double (*ddot)(int, const double*, int, const double*, int);
  // cblas_[cz]dot[uc]_sub: n, x, incx, y, incy, result
  using ComplexDot = void (*)(int, const void*, int, const void*, int, void*);
  ComplexDot cdotu = nullptr, cdotc = nullptr, zdotu = nullptr, zdotc = nullptr;
  // cblas_?gemm_batch: layout, per-group transposes, m, n, k, alpha, A[], lda,
  // B[], ldb, beta, C[], ldc, group count, group sizes
  using GemmBatch = void (*)(int, const int*, const int*, const int*, const int*, const int*, const void*, const void**,
                             const int*, const void**, const int*, const void*, void**, const int*, int, const int*);
  GemmBatch gemm_batch[4] = {};  // s, d, c, z
  int (*set_num_threads_local)(int);
  void* handle;
  std::string version;
  bool loaded = false;
};

template <typename F>
bool find(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

Mkl load_mkl() {
  Mkl m;
  m.handle = nullptr;
  const char* choice = std::getenv("EMBER_BLAS");
  if (choice && std::string(choice) != "mkl") return m;
  const char* path = std::getenv("EMBER_MKL_LIBRARY");
  void* lib = dlopen(path && *path ? path : "libmkl_rt.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return m;
  int (*set_threading_layer)(int) = nullptr;
  int (*set_interface_layer)(int) = nullptr;
  void (*get_version_string)(char*, int) = nullptr;
  bool ok = find(lib, "MKL_Set_Threading_Layer", set_threading_layer) &&
            find(lib, "MKL_Set_Interface_Layer", set_interface_layer) &&
            find(lib, "MKL_Get_Version_String", get_version_string) && find(lib, "cblas_sgemm", m.sgemm) &&
            find(lib, "cblas_dgemm", m.dgemm) && find(lib, "cblas_cgemm", m.cgemm) &&
            find(lib, "cblas_zgemm", m.zgemm) && find(lib, "cblas_sgemv", m.sgemv) &&
            find(lib, "cblas_dgemv", m.dgemv) && find(lib, "cblas_sdot", m.sdot) && find(lib, "cblas_ddot", m.ddot) &&
            find(lib, "MKL_Set_Num_Threads_Local", m.set_num_threads_local);
  if (!ok) return m;
  // Optional entry points: without them the callers fall back (complex dots
  // to the product loops, batched products to one call per matrix).
  find(lib, "cblas_cdotu_sub", m.cdotu), find(lib, "cblas_cdotc_sub", m.cdotc);
  find(lib, "cblas_zdotu_sub", m.zdotu), find(lib, "cblas_zdotc_sub", m.zdotc);
  const char* batch_names[4] = {"cblas_sgemm_batch", "cblas_dgemm_batch", "cblas_cgemm_batch", "cblas_zgemm_batch"};
  for (int i = 0; i < 4; ++i) find(lib, batch_names[i], m.gemm_batch[i]);
  set_interface_layer(0);  // LP64
  set_threading_layer(3);  // GNU OpenMP
  char text[256] = {};
  get_version_string(text, sizeof(text));
  m.version = text;
  m.handle = lib;
  m.loaded = true;
  return m;
}

const Mkl& mkl() {
  static const Mkl m = load_mkl();
  return m;
}

constexpr int kColMajor = 102;
int cblas_trans(bool t) { return t ? 112 : 111; }
int cblas_op(bool t, bool conj) { return conj ? 113 : cblas_trans(t); }  // CblasConjTrans
}  // namespace

const char* blas_info() {
  if (mkl().loaded) return mkl().version.c_str();
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
  if (mkl().loaded) {
    mkl().set_num_threads_local(in_parallel_region() ? 1 : get_num_threads());
    return;
  }
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

bool is_mkl() { return mkl().loaded; }

void* mkl_library() { return mkl().loaded ? mkl().handle : nullptr; }

void sync_mkl_threads() {
  if (mkl().loaded) mkl().set_num_threads_local(in_parallel_region() ? 1 : get_num_threads());
}

// Note [MKL for elementwise functions]
// PyTorch computes sqrt, exp, log, the trigonometric functions, tanh, erf and
// erfc of contiguous float32/float64 data with MKL's VML in high-accuracy
// mode; with MKL loaded Ember calls the same functions, so their results are
// PyTorch's to the bit.
const VmlFunction* vml(const char* name) {
  if (!mkl().loaded) return nullptr;
  static std::mutex mutex;
  static std::map<std::string, VmlFunction> table;
  std::lock_guard<std::mutex> g(mutex);
  auto it = table.find(name);
  if (it == table.end()) {
    VmlFunction fn{};
    const std::string base(name);
    find(mkl().handle, ("vms" + base).c_str(), fn.f);
    find(mkl().handle, ("vmd" + base).c_str(), fn.d);
    it = table.emplace(base, fn).first;
  }
  return it->second.f && it->second.d ? &it->second : nullptr;
}

void gemm_column_major(char kind, bool ta, bool tb, int m, int n, int k, const void* alpha, const void* a, int lda,
                       const void* b, int ldb, const void* beta, void* c, int ldc, bool conj_a, bool conj_b) {
  sync_threads();
  const Mkl& l = mkl();
  const int op_a = cblas_op(ta, conj_a), op_b = cblas_op(tb, conj_b);
  switch (kind) {
    case 's':
      l.sgemm(kColMajor, op_a, op_b, m, n, k, *static_cast<const float*>(alpha), static_cast<const float*>(a), lda,
              static_cast<const float*>(b), ldb, *static_cast<const float*>(beta), static_cast<float*>(c), ldc);
      break;
    case 'd':
      l.dgemm(kColMajor, op_a, op_b, m, n, k, *static_cast<const double*>(alpha), static_cast<const double*>(a), lda,
              static_cast<const double*>(b), ldb, *static_cast<const double*>(beta), static_cast<double*>(c), ldc);
      break;
    case 'c': l.cgemm(kColMajor, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); break;
    default: l.zgemm(kColMajor, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); break;
  }
}

bool gemm_batch_column_major(char kind, bool ta, bool tb, int m, int n, int k, const void* alpha, const void** a,
                             int lda, const void** b, int ldb, const void* beta, void** c, int ldc, int batch) {
  const Mkl& l = mkl();
  const int index = kind == 's' ? 0 : kind == 'd' ? 1 : kind == 'c' ? 2 : 3;
  if (!l.loaded || !l.gemm_batch[index]) return false;
  sync_threads();
  const int op_a = cblas_trans(ta), op_b = cblas_trans(tb);
  l.gemm_batch[index](kColMajor, &op_a, &op_b, &m, &n, &k, alpha, a, &lda, b, &ldb, beta, c, &ldc, 1, &batch);
  return true;
}

bool complex_dot(char kind, bool conj_x, int n, const void* x, int incx, const void* y, int incy, void* out) {
  const Mkl& l = mkl();
  if (!l.loaded) return false;
  Mkl::ComplexDot f = kind == 'c' ? (conj_x ? l.cdotc : l.cdotu) : (conj_x ? l.zdotc : l.zdotu);
  if (!f) return false;
  sync_threads();
  f(n, x, incx, y, incy, out);
  return true;
}

// Note [float32 GEMM]: with oneDNN in the build, float32 matrix products go
// to its sgemm: it measured 1-13% faster than OpenBLAS here and runs on
// OpenMP, the runtime of Ember's own loops, so the two never compete for
// cores (docs/decisions/0008-gemm.md).
void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
  if (mkl().loaded) {  // as PyTorch calls it: C^T = op(B)^T op(A)^T, column-major
    sync_threads();
    mkl().sgemm(kColMajor, cblas_trans(tb), cblas_trans(ta), n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
    return;
  }
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

void onednn_sgemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
                  float* c, int ldc) {
#ifdef EMBER_USE_ONEDNN
  if (m > 0 && n > 0 && k > 0) {
    sync_openmp_threads(in_parallel_region());
    if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc) == dnnl_success) return;
  }
#endif
  sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

bool onednn_has_avx2() {
#ifdef EMBER_USE_ONEDNN
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return (isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2;
#else
  return false;
#endif
}

void dgemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
           double beta, double* c, int ldc) {
  sync_threads();
  if (mkl().loaded) {
    mkl().dgemm(kColMajor, cblas_trans(tb), cblas_trans(ta), n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
    return;
  }
  EMBER_BLAS(cblas_dgemm)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, tb ? EmberTrans : EmberNoTrans, m, n, k, alpha,
                          a, lda, b, ldb, beta, c, ldc);
}

void cgemm(bool ta, bool tb, int m, int n, int k, const void* alpha, const void* a, int lda, const void* b, int ldb,
           const void* beta, void* c, int ldc) {
  sync_threads();
  if (mkl().loaded) {
    mkl().cgemm(kColMajor, cblas_trans(tb), cblas_trans(ta), n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
    return;
  }
  EMBER_BLAS(cblas_cgemm)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, tb ? EmberTrans : EmberNoTrans, m, n, k, alpha,
                          a, lda, b, ldb, beta, c, ldc);
}

void zgemm(bool ta, bool tb, int m, int n, int k, const void* alpha, const void* a, int lda, const void* b, int ldb,
           const void* beta, void* c, int ldc) {
  sync_threads();
  if (mkl().loaded) {
    mkl().zgemm(kColMajor, cblas_trans(tb), cblas_trans(ta), n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
    return;
  }
  EMBER_BLAS(cblas_zgemm)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, tb ? EmberTrans : EmberNoTrans, m, n, k, alpha,
                          a, lda, b, ldb, beta, c, ldc);
}

void sgemv(bool ta, int m, int n, float alpha, const float* a, int lda, const float* x, int incx, float beta, float* y,
           int incy) {
  sync_threads();
  if (mkl().loaded) {
    mkl().sgemv(kColMajor, cblas_trans(!ta), n, m, alpha, a, lda, x, incx, beta, y, incy);
    return;
  }
  EMBER_BLAS(cblas_sgemv)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

void dgemv(bool ta, int m, int n, double alpha, const double* a, int lda, const double* x, int incx, double beta,
           double* y, int incy) {
  sync_threads();
  if (mkl().loaded) {
    mkl().dgemv(kColMajor, cblas_trans(!ta), n, m, alpha, a, lda, x, incx, beta, y, incy);
    return;
  }
  EMBER_BLAS(cblas_dgemv)(EmberRowMajor, ta ? EmberTrans : EmberNoTrans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

float sdot(int n, const float* x, int incx, const float* y, int incy) {
  sync_threads();
  if (mkl().loaded) return mkl().sdot(n, x, incx, y, incy);
  return EMBER_BLAS(cblas_sdot)(n, x, incx, y, incy);
}

double ddot(int n, const double* x, int incx, const double* y, int incy) {
  sync_threads();
  if (mkl().loaded) return mkl().ddot(n, x, incx, y, incy);
  return EMBER_BLAS(cblas_ddot)(n, x, incx, y, incy);
}

}  // namespace blas
}  // namespace ember
