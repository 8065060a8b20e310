// Row loops of CSR times dense and of its values' gradient, compiled once per
// CPU capability (the inner loops over the dense columns vectorise).
#include "ember/cpu/SparseCompressedStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

template <typename T>
void mm_rows(const CsrRowsArgs& a, int64_t begin, int64_t end) {
  const T* __restrict vp = static_cast<const T*>(a.values);
  const T* __restrict bp = static_cast<const T*>(a.dense);
  T* __restrict op = static_cast<T*>(a.out);
  const int64_t n = a.n;
  for (int64_t r = begin; r < end; ++r) {
    T* __restrict dst = op + r * n;
    const int64_t last = a.crow[r + 1];
    int64_t e = a.crow[r];
    // eight, then four entries per pass over the result row: fewer of its loads and stores
    for (; e + 8 <= last; e += 8) {
      const T* __restrict s[8];
      T v[8];
      for (int q = 0; q < 8; ++q) {
        s[q] = bp + a.col[e + q] * n;
        v[q] = vp[e + q];
      }
      // the next group's rows start loading while this group computes
      if (e + 16 <= last) {
        for (int q = 0; q < 8; ++q) __builtin_prefetch(bp + a.col[e + 8 + q] * n);
      }
      for (int64_t j = 0; j < n; ++j) {
        dst[j] += (v[0] * s[0][j] + v[1] * s[1][j] + v[2] * s[2][j] + v[3] * s[3][j]) +
                  (v[4] * s[4][j] + v[5] * s[5][j] + v[6] * s[6][j] + v[7] * s[7][j]);
      }
    }
    for (; e + 4 <= last; e += 4) {
      const T v0 = vp[e], v1 = vp[e + 1], v2 = vp[e + 2], v3 = vp[e + 3];
      const T* __restrict s0 = bp + a.col[e] * n;
      const T* __restrict s1 = bp + a.col[e + 1] * n;
      const T* __restrict s2 = bp + a.col[e + 2] * n;
      const T* __restrict s3 = bp + a.col[e + 3] * n;
      for (int64_t j = 0; j < n; ++j) dst[j] += v0 * s0[j] + v1 * s1[j] + v2 * s2[j] + v3 * s3[j];
    }
    for (; e < last; ++e) {
      const T v = vp[e];
      const T* __restrict src = bp + a.col[e] * n;
      for (int64_t j = 0; j < n; ++j) dst[j] += v * src[j];
    }
  }
}

template <typename T>
void dot_rows(const CsrRowsArgs& a, int64_t begin, int64_t end) {
  const T* __restrict xp = static_cast<const T*>(a.values);
  const T* __restrict bp = static_cast<const T*>(a.dense);
  T* __restrict op = static_cast<T*>(a.out);
  const int64_t n = a.n;
  for (int64_t r = begin; r < end; ++r) {
    const T* __restrict x = xp + r * n;
    for (int64_t e = a.crow[r]; e < a.crow[r + 1]; ++e) {
      const T* __restrict y = bp + a.col[e] * n;
      T s = 0;
      for (int64_t j = 0; j < n; ++j) s += x[j] * y[j];
      op[e] = s;
    }
  }
}

void csr_dense_mm_kernel(const CsrRowsArgs& a, ScalarType t, int64_t begin, int64_t end) {
  if (t == ScalarType::Float) {
    mm_rows<float>(a, begin, end);
  } else {
    mm_rows<double>(a, begin, end);
  }
}

void csr_sampled_dot_kernel(const CsrRowsArgs& a, ScalarType t, int64_t begin, int64_t end) {
  if (t == ScalarType::Float) {
    dot_rows<float>(a, begin, end);
  } else {
    dot_rows<double>(a, begin, end);
  }
}

}  // namespace

EMBER_REGISTER_DISPATCH(csr_dense_mm_stub, &csr_dense_mm_kernel);
EMBER_REGISTER_DISPATCH(csr_sampled_dot_stub, &csr_sampled_dot_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
