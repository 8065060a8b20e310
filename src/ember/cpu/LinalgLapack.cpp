// CPU kernels of ember.linalg over LAPACK (cpu/Lapack.h), float32, float64,
// complex64 and complex128 (Note [Complex LAPACK]). Each kernel takes matrices with equal batch dims (the Python
// layer broadcasts and checks), loops over the batch, and returns its
// matrices column-major, as LAPACK writes them (and as PyTorch's are).
//
// Note [LAPACK batches]
// Small matrices run one matrix per thread with single-threaded BLAS; large
// ones run in turn with BLAS threaded, so both fill the cores. With MKL all
// run in turn, MKL threaded, for PyTorch's bits, except LU factorizations:
// PyTorch splits a batch of them between its threads (grain: the thread count
// for ranks below 15, none above), each calling MKL single-threaded, and so
// does Ember (for_each_lu).
//
// Note [Complex LAPACK]
// Complex matrices go to LAPACK's c/z routines with the same calls PyTorch's
// CPU kernels make: ?ungqr/?unmqr for orgqr/ormqr (a transposed Q is Q^H),
// ?heevd for eigh (real eigenvalues), ?gesdd/?gels* with their real
// workspaces (singular values real), ?geev with complex eigenvalues, ?hetrf
// for a Hermitian LDL. Real results of complex inputs take the real dtype.
#include <algorithm>
#include <numeric>
#include <vector>

#include "ember/cpu/Blas.h"
#include "ember/cpu/Lapack.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

constexpr int64_t kSmallMatrix = 128;

template <typename F>
void dispatch_lapack(ScalarType t, const char* name, const F& f) {
  if (t == ScalarType::Float) {
    f(float{});
  } else if (t == ScalarType::Double) {
    f(double{});
  } else if (t == ScalarType::ComplexFloat) {
    f(std::complex<float>{});
  } else if (t == ScalarType::ComplexDouble) {
    f(std::complex<double>{});
  } else {
    throw Error(str_cat("\"", name, "\" not implemented for '", scalar_type_name(t), "'"));
  }
}

// The real type of an element type (float for complex<float>).
template <typename T>
struct real_of {
  using type = T;
};
template <typename T>
struct real_of<std::complex<T>> {
  using type = T;
};
template <typename T>
using real_t = typename real_of<T>::type;

// The conjugate of a complex element; a real one unchanged.
template <typename T>
T conj_if_complex(const T& v) {
  if constexpr (is_complex_v<T>) {
    return std::conj(v);
  } else {
    return v;
  }
}

// A workspace size LAPACK returned in an element of work (its real part).
template <typename T>
int lwork_of(T query) {
  return std::max(1, static_cast<int>(std::real(query)));
}

template <typename F>
void for_each_matrix(int64_t batch, int64_t n, const F& f) {
  if (blas::is_mkl()) {
    // MKL's LAPACK rounds differently with another thread count: the matrices
    // run in turn on all threads, as PyTorch runs them (Note [MKL for LAPACK]).
    f(int64_t(0), batch);
    return;
  }
  if (batch > 1 && n <= kSmallMatrix && get_num_threads() > 1 && !in_parallel_region()) {
    blas::set_num_threads(1);
    parallel_for(0, batch, 1, f);
  } else {
    blas::set_num_threads(in_parallel_region() ? 1 : get_num_threads());
    f(int64_t(0), batch);
  }
}

// PyTorch's split of a batch of LU factorizations (Note [LAPACK batches]).
template <typename F>
void for_each_lu(int64_t batch, int64_t m, int64_t n, const F& f) {
  if (!blas::is_mkl()) {
    for_each_matrix(batch, std::max(m, n), f);
    return;
  }
  const double r = static_cast<double>(std::min(m, n));
  const int64_t grain = static_cast<int64_t>(std::min(1.0, 3200.0 / (r * r * r))) * get_num_threads();
  if (batch > 1 && batch > grain) {
    parallel_for(0, batch, grain, f);  // MKL runs single-threaded inside (blas::sync_mkl_threads)
  } else {
    f(int64_t(0), batch);
  }
}

std::vector<int64_t> batch_sizes(const Tensor& t) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - 2);
}

int64_t batch_count(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::vector<int64_t> with(std::vector<int64_t> v, std::initializer_list<int64_t> tail) {
  v.insert(v.end(), tail.begin(), tail.end());
  return v;
}

// A fresh column-major copy of the matrices of A, batches packed.
Tensor colmajor_copy(const Tensor& A) { return A.transpose(-2, -1).clone(MemoryFormat::Contiguous).transpose(-2, -1); }

// The matrices of A column-major and batches packed, for reading only: A
// itself when it is laid out so (a factorization's result), else a copy.
Tensor colmajor_input(const Tensor& A) { return A.transpose(-2, -1).is_contiguous() ? A : colmajor_copy(A); }

// An uninitialised column-major batch of rows x cols matrices.
Tensor colmajor_empty(const std::vector<int64_t>& batch, int64_t rows, int64_t cols, const Tensor& like) {
  return ember::empty(with(batch, {cols, rows}), like.dtype(), like.device()).transpose(-2, -1);
}

Tensor int_tensor(const std::vector<int64_t>& sizes, const Tensor& like) {
  return ember::zeros(sizes, ScalarType::Int, like.device());
}

int ld(int64_t rows) { return static_cast<int>(std::max<int64_t>(1, rows)); }

void check_matrix(const Tensor& A, const char* name) {
  EMBER_CHECK(A.dim() >= 2, name, ": The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(!A.is_meta(), name, ": meta tensors are not supported");
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_lapack_getrf(const Tensor& A) {
  check_matrix(A, "lu_factor");
  const auto bs = batch_sizes(A);
  const int64_t batch = batch_count(bs), m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  Tensor LU = colmajor_copy(A);
  Tensor piv = int_tensor(with(bs, {k}), A), info = int_tensor(bs, A);
  if (k == 0) return {LU, piv, info};
  dispatch_lapack(A.dtype(), "lu_factor", [&](auto zero) {
    using T = decltype(zero);
    T* a = LU.data_ptr<T>();
    int* p = piv.data_ptr<int>();
    int* inf = info.data_ptr<int>();
    for_each_lu(batch, m, n, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) lapack::getrf(int(m), int(n), a + b * m * n, ld(m), p + b * k, inf + b);
    });
  });
  return {LU, piv, info};
}

Tensor linalg_lapack_getrs(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool trans, bool conj) {
  check_matrix(LU, "lu_solve");
  const auto bs = batch_sizes(B);
  const int64_t batch = batch_count(bs), n = LU.size(-1), k = B.size(-1);
  Tensor X = colmajor_copy(B);
  if (n == 0 || k == 0 || batch == 0) return X;
  Tensor lu = colmajor_input(LU);
  Tensor piv = pivots.contiguous();
  dispatch_lapack(B.dtype(), "lu_solve", [&](auto zero) {
    using T = decltype(zero);
    const T* a = lu.data_ptr<T>();
    T* x = X.data_ptr<T>();
    const int* p = piv.data_ptr<int>();
    const char op = trans ? (conj && is_complex_v<T> ? 'C' : 'T') : 'N';
    for_each_matrix(batch, n, [&](int64_t b0, int64_t b1) {
      int info = 0;
      for (int64_t b = b0; b < b1; ++b) {
        lapack::getrs(op, int(n), int(k), a + b * n * n, ld(n), p + b * n, x + b * n * k, ld(n), &info);
      }
    });
  });
  return X;
}

std::tuple<Tensor, Tensor> linalg_lapack_potrf(const Tensor& A, bool upper) {
  check_matrix(A, "cholesky");
  const auto bs = batch_sizes(A);
  const int64_t batch = batch_count(bs), n = A.size(-1);
  Tensor L = colmajor_copy(A), info = int_tensor(bs, A);
  if (n == 0 || batch == 0) return {L, info};
  dispatch_lapack(A.dtype(), "cholesky", [&](auto zero) {
    using T = decltype(zero);
    T* a = L.data_ptr<T>();
    int* inf = info.data_ptr<int>();
    for_each_matrix(batch, n, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        T* m = a + b * n * n;
        lapack::potrf(upper ? 'U' : 'L', int(n), m, ld(n), inf + b);
        // clear the triangle LAPACK leaves as it was
        for (int64_t j = 0; j < n; ++j) {
          if (upper) {
            std::fill(m + j * n + j + 1, m + (j + 1) * n, T(0));
          } else {
            std::fill(m + j * n, m + j * n + j, T(0));
          }
        }
      }
    });
  });
  return {L, info};
}

// (L L^H)^-1 or (U^H U)^-1 from the factor's triangle, as PyTorch's
// cholesky_inverse: LAPACK's potri writes that triangle of the inverse (its
// diagonal as computed, also for a complex factor whose diagonal is not
// real), and the other triangle is its conjugate mirror.
std::tuple<Tensor, Tensor> linalg_lapack_potri(const Tensor& L, bool upper) {
  check_matrix(L, "cholesky_inverse");
  const auto bs = batch_sizes(L);
  const int64_t batch = batch_count(bs), n = L.size(-1);
  Tensor X = colmajor_copy(L), info = int_tensor(bs, L);
  if (n == 0 || batch == 0) return {X, info};
  dispatch_lapack(L.dtype(), "cholesky_inverse_out_cpu", [&](auto zero) {
    using T = decltype(zero);
    T* x = X.data_ptr<T>();
    int* inf = info.data_ptr<int>();
    for_each_matrix(batch, n, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        T* m = x + b * n * n;
        lapack::potri(upper ? 'U' : 'L', int(n), m, ld(n), inf + b);
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t i = j + 1; i < n; ++i) {
            // column-major: (i, j) is m[i + j * n]; the written triangle is below (lower) or above (upper)
            if (upper) {
              m[i + j * n] = conj_if_complex(m[j + i * n]);
            } else {
              m[j + i * n] = conj_if_complex(m[i + j * n]);
            }
          }
        }
      }
    });
  });
  return {X, info};
}

Tensor linalg_lapack_trsm(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  check_matrix(A, "solve_triangular");
  const auto bs = batch_sizes(B);
  const int64_t batch = batch_count(bs), m = B.size(-2), k = B.size(-1), n = A.size(-1);
  Tensor X = colmajor_copy(B);
  if (m == 0 || k == 0 || batch == 0) return X;
  // A row-major is A^T column-major: solve with the transpose of the other triangle.
  Tensor a_rm = A.contiguous();
  dispatch_lapack(B.dtype(), "solve_triangular", [&](auto zero) {
    using T = decltype(zero);
    const T* a = a_rm.data_ptr<T>();
    T* x = X.data_ptr<T>();
    for_each_matrix(batch, std::max(m, k), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        lapack::trsm(left, !upper, true, unitriangular, int(m), int(k), T(1), a + b * n * n, ld(n), x + b * m * k,
                     ld(m));
      }
    });
  });
  return X;
}

std::tuple<Tensor, Tensor> linalg_lapack_geqrf(const Tensor& A) {
  check_matrix(A, "geqrf");
  const auto bs = batch_sizes(A);
  const int64_t batch = batch_count(bs), m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  Tensor QR = colmajor_copy(A);
  Tensor tau = ember::zeros(with(bs, {k}), A.dtype(), A.device());
  if (k == 0 || batch == 0) return {QR, tau};
  dispatch_lapack(A.dtype(), "geqrf", [&](auto zero) {
    using T = decltype(zero);
    T* a = QR.data_ptr<T>();
    T* t = tau.data_ptr<T>();
    T query{};
    int info = 0;
    lapack::geqrf(int(m), int(n), a, ld(m), t, &query, -1, &info);
    const int lwork = lwork_of(query);
    for_each_matrix(batch, std::max(m, n), [&](int64_t b0, int64_t b1) {
      std::vector<T> work(lwork);
      int inf = 0;
      for (int64_t b = b0; b < b1; ++b) {
        lapack::geqrf(int(m), int(n), a + b * m * n, ld(m), t + b * k, work.data(), lwork, &inf);
      }
    });
  });
  return {QR, tau};
}

Tensor linalg_lapack_orgqr(const Tensor& A, const Tensor& tau) {
  check_matrix(A, "householder_product");
  const auto bs = batch_sizes(A);
  const int64_t batch = batch_count(bs), m = A.size(-2), n = A.size(-1), k = tau.size(-1);
  Tensor Q = colmajor_copy(A);
  if (n == 0 || batch == 0) return Q;
  Tensor t = tau.contiguous();
  dispatch_lapack(A.dtype(), "householder_product", [&](auto zero) {
    using T = decltype(zero);
    T* q = Q.data_ptr<T>();
    const T* tp = t.data_ptr<T>();
    T query{};
    int info = 0;
    lapack::orgqr(int(m), int(n), int(k), q, ld(m), tp, &query, -1, &info);
    const int lwork = lwork_of(query);
    for_each_matrix(batch, m, [&](int64_t b0, int64_t b1) {
      std::vector<T> work(lwork);
      int inf = 0;
      for (int64_t b = b0; b < b1; ++b) {
        lapack::orgqr(int(m), int(n), int(k), q + b * m * n, ld(m), tp + b * k, work.data(), lwork, &inf);
      }
    });
  });
  return Q;
}

Tensor linalg_lapack_ormqr(const Tensor& A, const Tensor& tau, const Tensor& C, bool left, bool transpose) {
  check_matrix(A, "ormqr");
  const auto bs = batch_sizes(C);
  const int64_t batch = batch_count(bs), m = C.size(-2), n = C.size(-1), k = tau.size(-1);
  const int64_t ar = A.size(-2), ac = A.size(-1);
  Tensor X = colmajor_copy(C);
  if (m == 0 || n == 0 || batch == 0) return X;
  Tensor a_cm = colmajor_input(A), t = tau.contiguous();
  dispatch_lapack(C.dtype(), "ormqr", [&](auto zero) {
    using T = decltype(zero);
    const T* a = a_cm.data_ptr<T>();
    const T* tp = t.data_ptr<T>();
    T* x = X.data_ptr<T>();
    const char side = left ? 'L' : 'R', tr = transpose ? (is_complex_v<T> ? 'C' : 'T') : 'N';
    T query{};
    int info = 0;
    lapack::ormqr(side, tr, int(m), int(n), int(k), a, ld(ar), tp, x, ld(m), &query, -1, &info);
    const int lwork = lwork_of(query);
    for_each_matrix(batch, std::max(m, n), [&](int64_t b0, int64_t b1) {
      std::vector<T> work(lwork);
      int inf = 0;
      for (int64_t b = b0; b < b1; ++b) {
        lapack::ormqr(side, tr, int(m), int(n), int(k), a + b * ar * ac, ld(ar), tp + b * k, x + b * m * n, ld(m),
                      work.data(), lwork, &inf);
      }
    });
  });
  return X;
}

std::tuple<Tensor, Tensor, Tensor> linalg_lapack_syevd(const Tensor& A, bool upper, bool compute_v) {
  check_matrix(A, "eigh");
  const auto bs = batch_sizes(A);
  const int64_t batch = batch_count(bs), n = A.size(-1);
  Tensor V = colmajor_copy(A), info = int_tensor(bs, A);
  Tensor w = ember::empty(with(bs, {n}), to_real_type(A.dtype()), A.device());
  if (n == 0 || batch == 0) return {w, V, info};
  dispatch_lapack(A.dtype(), "eigh", [&](auto zero) {
    using T = decltype(zero);
    using R = real_t<T>;
    T* v = V.data_ptr<T>();
    R* wp = w.data_ptr<R>();
    int* inf = info.data_ptr<int>();
    const char jobz = compute_v ? 'V' : 'N', uplo = upper ? 'U' : 'L';
    T query{};
    int iquery = 0, qinfo = 0;
    if constexpr (is_complex_v<T>) {
      R rquery{};
      lapack::heevd(jobz, uplo, int(n), v, ld(n), wp, &query, -1, &rquery, -1, &iquery, -1, &qinfo);
      const int lwork = lwork_of(query), lrwork = lwork_of(rquery), liwork = std::max(1, iquery);
      for_each_matrix(batch, n, [&](int64_t b0, int64_t b1) {
        std::vector<T> work(lwork);
        std::vector<R> rwork(lrwork);
        std::vector<int> iwork(liwork);
        for (int64_t b = b0; b < b1; ++b) {
          lapack::heevd(jobz, uplo, int(n), v + b * n * n, ld(n), wp + b * n, work.data(), lwork, rwork.data(), lrwork,
                        iwork.data(), liwork, inf + b);
        }
      });
    } else {
      lapack::syevd(jobz, uplo, int(n), v, ld(n), wp, &query, -1, &iquery, -1, &qinfo);
      const int lwork = lwork_of(query), liwork = std::max(1, iquery);
      for_each_matrix(batch, n, [&](int64_t b0, int64_t b1) {
        std::vector<T> work(lwork);
        std::vector<int> iwork(liwork);
        for (int64_t b = b0; b < b1; ++b) {
          lapack::syevd(jobz, uplo, int(n), v + b * n * n, ld(n), wp + b * n, work.data(), lwork, iwork.data(), liwork,
                        inf + b);
        }
      });
    }
  });
  return {w, V, info};
}

namespace {
// The real workspace of complex ?gesdd, as LAPACK documents it (with SciPy's
// size when no vectors are computed), as PyTorch sizes it.
int64_t gesdd_lrwork(char jobz, int64_t m, int64_t n) {
  const int64_t mn = std::min(m, n), mx = std::max(m, n);
  if (jobz == 'N') return 7 * mn;
  if (mx > 10 * mn) return 5 * mn * mn + 5 * mn;
  return std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lapack_gesdd(const Tensor& A, bool full_matrices, bool compute_uv) {
  check_matrix(A, "svd");
  const auto bs = batch_sizes(A);
  const int64_t batch = batch_count(bs), m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  Tensor a_cm = colmajor_copy(A), info = int_tensor(bs, A);
  Tensor S = ember::empty(with(bs, {k}), to_real_type(A.dtype()), A.device());
  Tensor U = compute_uv ? colmajor_empty(bs, m, ucols, A) : ember::empty({0}, A.dtype(), A.device());
  Tensor Vh = compute_uv ? colmajor_empty(bs, vrows, n, A) : ember::empty({0}, A.dtype(), A.device());
  if (batch == 0) return {U, S, Vh, info};
  if (k == 0) {
    // no singular values: the full bases are identities
    if (compute_uv) {
      U.zero_();
      Vh.zero_();
      if (ucols > 0) U.diagonal(0, -2, -1).fill_(1);
      if (vrows > 0) Vh.diagonal(0, -2, -1).fill_(1);
    }
    return {U, S, Vh, info};
  }
  dispatch_lapack(A.dtype(), "svd", [&](auto zero) {
    using T = decltype(zero);
    using R = real_t<T>;
    T* a = a_cm.data_ptr<T>();
    R* s = S.data_ptr<R>();
    T* u = compute_uv ? U.data_ptr<T>() : nullptr;
    T* vt = compute_uv ? Vh.data_ptr<T>() : nullptr;
    int* inf = info.data_ptr<int>();
    const char jobz = compute_uv ? (full_matrices ? 'A' : 'S') : 'N';
    const int64_t lrwork = is_complex_v<T> ? std::max<int64_t>(1, gesdd_lrwork(jobz, m, n)) : 1;
    // one call of the real or the complex routine (the complex one takes a real workspace)
    auto gesdd = [&](T* ab, R* sb, T* ub, T* vb, T* work, int lwork, R* rwork, int* iwork, int* infob) {
      if constexpr (is_complex_v<T>) {
        lapack::gesdd(jobz, int(m), int(n), ab, ld(m), sb, ub, ld(m), vb, ld(vrows), work, lwork, rwork, iwork, infob);
      } else {
        (void)rwork;
        lapack::gesdd(jobz, int(m), int(n), ab, ld(m), sb, ub, ld(m), vb, ld(vrows), work, lwork, iwork, infob);
      }
    };
    T dummy{};
    T query{};
    int qinfo = 0;
    std::vector<int> qiwork(8 * k);
    std::vector<R> qrwork(lrwork);
    gesdd(a, s, compute_uv ? u : &dummy, compute_uv ? vt : &dummy, &query, -1, qrwork.data(), qiwork.data(), &qinfo);
    const int lwork = lwork_of(query);
    for_each_matrix(batch, std::max(m, n), [&](int64_t b0, int64_t b1) {
      std::vector<T> work(lwork);
      std::vector<R> rwork(lrwork);
      std::vector<int> iwork(8 * k);
      T du{}, dv{};
      for (int64_t b = b0; b < b1; ++b) {
        gesdd(a + b * m * n, s + b * k, compute_uv ? u + b * m * ucols : &du, compute_uv ? vt + b * vrows * n : &dv,
              work.data(), lwork, rwork.data(), iwork.data(), inf + b);
      }
    });
  });
  return {U, S, Vh, info};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lapack_gels(const Tensor& A, const Tensor& B, double rcond,
                                                              const std::string& driver) {
  check_matrix(A, "lstsq");
  const auto bs = batch_sizes(A);
  const int64_t batch = batch_count(bs), m = A.size(-2), n = A.size(-1), k = B.size(-1), rows = std::max(m, n);
  const int64_t mn = std::min(m, n);
  Tensor a_cm = colmajor_copy(A);
  // B padded to max(m, n) rows: LAPACK writes the n-row solution over it
  Tensor X = colmajor_empty(bs, rows, k, A);
  X.zero_();
  X.narrow(-2, 0, m).copy_(B);
  Tensor rank = ember::zeros(bs, ScalarType::Long, A.device());
  Tensor sv = ember::zeros(with(bs, {mn}), to_real_type(A.dtype()), A.device());
  Tensor info = int_tensor(bs, A);
  if (batch == 0 || mn == 0) return {X.narrow(-2, 0, n), rank, sv, info};
  dispatch_lapack(A.dtype(), "lstsq", [&](auto zero) {
    using T = decltype(zero);
    using R = real_t<T>;
    T* a = a_cm.data_ptr<T>();
    T* x = X.data_ptr<T>();
    R* s = sv.data_ptr<R>();
    int64_t* r = rank.data_ptr<int64_t>();
    int* inf = info.data_ptr<int>();
    const R rc = static_cast<R>(rcond);
    // One call of the chosen driver; lwork = -1 queries the workspaces into
    // work[0] (and, for complex gelsd, rwork[0] and iwork[0]).
    auto call = [&](T* ab, T* xb, R* sb, int* jpvt, int* rk, T* work, int lwork, R* rwork, int* iwork, int* infob) {
      if (driver == "gels") {
        lapack::gels('N', int(m), int(n), int(k), ab, ld(m), xb, ld(rows), work, lwork, infob);
      } else if constexpr (is_complex_v<T>) {
        if (driver == "gelsy") {
          lapack::gelsy(int(m), int(n), int(k), ab, ld(m), xb, ld(rows), jpvt, rc, rk, work, lwork, rwork, infob);
        } else if (driver == "gelsd") {
          lapack::gelsd(int(m), int(n), int(k), ab, ld(m), xb, ld(rows), sb, rc, rk, work, lwork, rwork, iwork, infob);
        } else {
          lapack::gelss(int(m), int(n), int(k), ab, ld(m), xb, ld(rows), sb, rc, rk, work, lwork, rwork, infob);
        }
      } else {
        (void)rwork;
        if (driver == "gelsy") {
          lapack::gelsy(int(m), int(n), int(k), ab, ld(m), xb, ld(rows), jpvt, rc, rk, work, lwork, infob);
        } else if (driver == "gelsd") {
          lapack::gelsd(int(m), int(n), int(k), ab, ld(m), xb, ld(rows), sb, rc, rk, work, lwork, iwork, infob);
        } else {
          lapack::gelss(int(m), int(n), int(k), ab, ld(m), xb, ld(rows), sb, rc, rk, work, lwork, infob);
        }
      }
    };
    T query{};
    R rquery{};
    int qinfo = 0, qrank = 0, iquery = 1;
    std::vector<int> jq(n);
    call(a, x, s, jq.data(), &qrank, &query, -1, &rquery, &iquery, &qinfo);
    const int lwork = lwork_of(query), liwork = std::max(1, iquery);
    // complex rwork: gelsy 2n, gelss 5 min(m, n), gelsd as queried
    int64_t lrwork = 1;
    if constexpr (is_complex_v<T>) {
      if (driver == "gelsy") lrwork = 2 * n;
      if (driver == "gelss") lrwork = 5 * mn;
      if (driver == "gelsd") lrwork = lwork_of(rquery);
    }
    for_each_matrix(batch, rows, [&](int64_t b0, int64_t b1) {
      std::vector<T> work(lwork);
      std::vector<R> rwork(std::max<int64_t>(1, lrwork));
      std::vector<int> iwork(liwork), jpvt(n);
      for (int64_t b = b0; b < b1; ++b) {
        int rk = 0;
        // gelsy: every column marked fixed (no column pivoting): what PyTorch's
        // CPU kernel hands gelsy, whose pivot array keeps the previous matrix's
        // permutation, all nonzero (measured: its solutions are exactly these).
        std::iota(jpvt.begin(), jpvt.end(), 1);
        call(a + b * m * n, x + b * rows * k, s + b * mn, jpvt.data(), &rk, work.data(), lwork, rwork.data(),
             iwork.data(), inf + b);
        r[b] = rk;
      }
    });
  });
  return {X.narrow(-2, 0, n), rank, sv, info};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lapack_geev(const Tensor& A, bool compute_v) {
  // Real A: eigenvalues as (real, imag) parts and LAPACK's packed real
  // eigenvectors. Complex A: the complex eigenvalues in `real`, `imag` empty.
  check_matrix(A, "eig");
  const auto bs = batch_sizes(A);
  const int64_t batch = batch_count(bs), n = A.size(-1);
  const bool complex_input = is_complex_type(A.dtype());
  Tensor a_cm = colmajor_copy(A), info = int_tensor(bs, A);
  Tensor wr = ember::empty(with(bs, {n}), A.dtype(), A.device());
  Tensor wi = ember::empty(complex_input ? std::vector<int64_t>{0} : with(bs, {n}), A.dtype(), A.device());
  Tensor V = compute_v ? colmajor_empty(bs, n, n, A) : ember::empty({0}, A.dtype(), A.device());
  if (n == 0 || batch == 0) return {wr, wi, V, info};
  dispatch_lapack(A.dtype(), "eig", [&](auto zero) {
    using T = decltype(zero);
    using R = real_t<T>;
    T* a = a_cm.data_ptr<T>();
    T* pr = wr.data_ptr<T>();
    T* pi = complex_input ? nullptr : wi.data_ptr<T>();
    T* v = compute_v ? V.data_ptr<T>() : nullptr;
    int* inf = info.data_ptr<int>();
    const char jobvr = compute_v ? 'V' : 'N';
    auto geev = [&](T* ab, T* wrb, T* wib, T* vl, T* vr, T* work, int lwork, R* rwork, int* infob) {
      if constexpr (is_complex_v<T>) {
        (void)wib;
        lapack::geev('N', jobvr, int(n), ab, ld(n), wrb, vl, 1, vr, ld(n), work, lwork, rwork, infob);
      } else {
        (void)rwork;
        lapack::geev('N', jobvr, int(n), ab, ld(n), wrb, wib, vl, 1, vr, ld(n), work, lwork, infob);
      }
    };
    T query{}, dummy{};
    int qinfo = 0;
    std::vector<R> qrwork(2 * n);
    geev(a, pr, pi, &dummy, compute_v ? v : &dummy, &query, -1, qrwork.data(), &qinfo);
    const int lwork = lwork_of(query);
    for_each_matrix(batch, n, [&](int64_t b0, int64_t b1) {
      std::vector<T> work(lwork);
      std::vector<R> rwork(2 * n);
      T dl{}, dr{};
      for (int64_t b = b0; b < b1; ++b) {
        geev(a + b * n * n, pr + b * n, complex_input ? nullptr : pi + b * n, &dl, compute_v ? v + b * n * n : &dr,
             work.data(), lwork, rwork.data(), inf + b);
      }
    });
  });
  return {wr, wi, V, info};
}

std::tuple<Tensor, Tensor, Tensor> linalg_lapack_sytrf(const Tensor& A, bool upper, bool hermitian) {
  check_matrix(A, "ldl_factor");
  const auto bs = batch_sizes(A);
  const int64_t batch = batch_count(bs), n = A.size(-1);
  Tensor LD = colmajor_copy(A), piv = int_tensor(with(bs, {n}), A), info = int_tensor(bs, A);
  if (n == 0 || batch == 0) return {LD, piv, info};
  dispatch_lapack(A.dtype(), "ldl_factor", [&](auto zero) {
    using T = decltype(zero);
    T* a = LD.data_ptr<T>();
    int* p = piv.data_ptr<int>();
    int* inf = info.data_ptr<int>();
    const char uplo = upper ? 'U' : 'L';
    auto sytrf = [&](T* ab, int* pb, T* work, int lwork, int* infob) {
      if constexpr (is_complex_v<T>) {
        if (hermitian) {
          lapack::hetrf(uplo, int(n), ab, ld(n), pb, work, lwork, infob);
          return;
        }
      }
      lapack::sytrf(uplo, int(n), ab, ld(n), pb, work, lwork, infob);
    };
    T query{};
    int qinfo = 0;
    sytrf(a, p, &query, -1, &qinfo);
    const int lwork = lwork_of(query);
    for_each_matrix(batch, n, [&](int64_t b0, int64_t b1) {
      std::vector<T> work(lwork);
      for (int64_t b = b0; b < b1; ++b) sytrf(a + b * n * n, p + b * n, work.data(), lwork, inf + b);
    });
  });
  return {LD, piv, info};
}

Tensor linalg_lapack_sytrs(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool upper, bool hermitian) {
  check_matrix(LD, "ldl_solve");
  const auto bs = batch_sizes(B);
  const int64_t batch = batch_count(bs), n = LD.size(-1), k = B.size(-1);
  Tensor X = colmajor_copy(B);
  if (n == 0 || k == 0 || batch == 0) return X;
  Tensor ld_cm = colmajor_input(LD), piv = pivots.contiguous();
  dispatch_lapack(B.dtype(), "ldl_solve", [&](auto zero) {
    using T = decltype(zero);
    const T* a = ld_cm.data_ptr<T>();
    const int* p = piv.data_ptr<int>();
    T* x = X.data_ptr<T>();
    const char uplo = upper ? 'U' : 'L';
    for_each_matrix(batch, n, [&](int64_t b0, int64_t b1) {
      int info = 0;
      for (int64_t b = b0; b < b1; ++b) {
        if constexpr (is_complex_v<T>) {
          if (hermitian) {
            lapack::hetrs(uplo, int(n), int(k), a + b * n * n, ld(n), p + b * n, x + b * n * k, ld(n), &info);
            continue;
          }
        }
        lapack::sytrs(uplo, int(n), int(k), a + b * n * n, ld(n), p + b * n, x + b * n * k, ld(n), &info);
      }
    });
  });
  return X;
}

}  // namespace ember::native
