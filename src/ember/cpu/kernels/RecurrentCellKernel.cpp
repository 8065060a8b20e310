// Fused LSTM cell, forward and backward, compiled once per CPU capability.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ember/cpu/RecurrentStubs.h"
#include "ember/cpu/kernels/VecMath.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

using vecmath::Vf;
constexpr int kW = static_cast<int>(sizeof(Vf) / sizeof(float));

// Elementwise math on a vector of floats or on one double.
inline Vf sigm(Vf x) { return vecmath::sigmoid(x); }
inline Vf tnh(Vf x) { return vecmath::tanh(x); }
inline double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double tnh(double x) { return std::tanh(x); }

template <typename V, typename T>
inline V ld(const T* p) {
  if constexpr (std::is_same_v<V, Vf>)
    return vecmath::load(p);
  else
    return *p;
}
template <typename V, typename T>
inline void st(T* p, V v) {
  if constexpr (std::is_same_v<V, Vf>)
    vecmath::store(p, v);
  else
    *p = v;
}

template <typename V, typename T, bool Act>
inline void forward_at(const LstmCellArgs& a, int64_t r, int64_t j) {
  const int64_t h = a.hidden;
  const T* g = static_cast<const T*>(a.gates) + r * 4 * h + j;
  const V i = sigm(ld<V>(g)), f = sigm(ld<V>(g + h)), c = tnh(ld<V>(g + 2 * h)), o = sigm(ld<V>(g + 3 * h));
  if constexpr (Act) {
    T* ga = static_cast<T*>(a.gates_act) + r * 4 * h + j;
    st<V>(ga, i);
    st<V>(ga + h, f);
    st<V>(ga + 2 * h, c);
    st<V>(ga + 3 * h, o);
  }
  const V cx = ld<V>(static_cast<const T*>(a.cx) + r * h + j);
  const V cy = f * cx + i * c;
  st<V>(static_cast<T*>(a.cy) + r * h + j, cy);
  st<V>(static_cast<T*>(a.hy) + r * h + j, o * tnh(cy));
}

template <typename V, typename T, bool Act>
inline void backward_at(const LstmCellArgs& a, int64_t r, int64_t j) {
  const int64_t h = a.hidden;
  const T* g = static_cast<const T*>(a.gates) + r * 4 * h + j;
  V i, f, c, o;
  if constexpr (Act) {
    i = ld<V>(g), f = ld<V>(g + h), c = ld<V>(g + 2 * h), o = ld<V>(g + 3 * h);
  } else {
    i = sigm(ld<V>(g)), f = sigm(ld<V>(g + h)), c = tnh(ld<V>(g + 2 * h)), o = sigm(ld<V>(g + 3 * h));
  }
  const V cx = ld<V>(static_cast<const T*>(a.cx) + r * h + j);
  const V tc = tnh(ld<V>(static_cast<const T*>(a.cy_in) + r * h + j));
  const V zero = V{} * 0, one = zero + 1;
  const V gh = a.grad_h ? ld<V>(static_cast<const T*>(a.grad_h) + r * h + j) : zero;
  const V gc = a.grad_c ? ld<V>(static_cast<const T*>(a.grad_c) + r * h + j) : zero;
  const V dcy = gc + gh * o * (one - tc * tc);
  T* dg = static_cast<T*>(a.grad_gates) + r * 4 * h + j;
  st<V>(dg, dcy * c * i * (one - i));
  st<V>(dg + h, dcy * cx * f * (one - f));
  st<V>(dg + 2 * h, dcy * i * (one - c * c));
  st<V>(dg + 3 * h, gh * tc * o * (one - o));
  st<V>(static_cast<T*>(a.grad_cx) + r * h + j, dcy * f);
}

// The last m < kW units of a row: copied into one-vector buffers, run
// through the vector code, copied back, so every unit sees the same math.
template <bool Backward, bool Act>
void tail(const LstmCellArgs& a, int64_t r, int64_t j) {
  const int64_t h = a.hidden, m = h - j;
  alignas(64) float g[4 * kW] = {}, cx[kW] = {}, cy[kW] = {}, hy[kW] = {}, gh[kW] = {}, gc[kW] = {}, dg[4 * kW],
                          dcx[kW];
  const float* src = static_cast<const float*>(a.gates) + r * 4 * h + j;
  for (int q = 0; q < 4; ++q) std::copy(src + q * h, src + q * h + m, g + q * kW);
  std::copy_n(static_cast<const float*>(a.cx) + r * h + j, m, cx);
  LstmCellArgs l{kW, g, cx, hy, cy, nullptr, nullptr, cy, dg, dcx};
  if constexpr (Backward) {
    std::copy_n(static_cast<const float*>(a.cy_in) + r * h + j, m, cy);
    if (a.grad_h) std::copy_n(static_cast<const float*>(a.grad_h) + r * h + j, m, gh), l.grad_h = gh;
    if (a.grad_c) std::copy_n(static_cast<const float*>(a.grad_c) + r * h + j, m, gc), l.grad_c = gc;
    backward_at<Vf, float, Act>(l, 0, 0);
    float* out = static_cast<float*>(a.grad_gates) + r * 4 * h + j;
    for (int q = 0; q < 4; ++q) std::copy_n(dg + q * kW, m, out + q * h);
    std::copy_n(dcx, m, static_cast<float*>(a.grad_cx) + r * h + j);
  } else {
    l.gates_act = g;  // in place in the buffer, copied out below
    forward_at<Vf, float, Act>(l, 0, 0);
    std::copy_n(cy, m, static_cast<float*>(a.cy) + r * h + j);
    std::copy_n(hy, m, static_cast<float*>(a.hy) + r * h + j);
    if constexpr (Act) {
      float* out = static_cast<float*>(a.gates_act) + r * 4 * h + j;
      for (int q = 0; q < 4; ++q) std::copy_n(g + q * kW, m, out + q * h);
    }
  }
}

template <bool Backward, bool Act>
void run_rows(const LstmCellArgs& a, ScalarType t, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    if (t == ScalarType::Float) {
      int64_t j = 0;
      for (; j + kW <= a.hidden; j += kW) {
        if constexpr (Backward)
          backward_at<Vf, float, Act>(a, r, j);
        else
          forward_at<Vf, float, Act>(a, r, j);
      }
      if (j < a.hidden) tail<Backward, Act>(a, r, j);
    } else {
      for (int64_t j = 0; j < a.hidden; ++j) {
        if constexpr (Backward) {
          backward_at<double, double, Act>(a, r, j);
        } else {
          forward_at<double, double, Act>(a, r, j);
        }
      }
    }
  }
}

template <bool Backward>
void run(const LstmCellArgs& a, ScalarType t, int64_t begin, int64_t end) {
  if (Backward ? a.activated : a.gates_act != nullptr) {
    run_rows<Backward, true>(a, t, begin, end);
  } else {
    run_rows<Backward, false>(a, t, begin, end);
  }
}

// Note [Recurrent step GEMM]
// Each LSTM step multiplies a few rows (the batch) by a weight matrix that
// stays the same for the whole sequence: h W_hh^T (k = H, n = 4H) forward,
// dgates W_hh (k = 4H, n = H) backward. A BLAS call packs that matrix again
// on every step: oneDNN's sgemm ran 16 x 128 x 512 at about 52 GFLOP/s on the
// AVX-512 machine of BENCHMARKS.md, this kernel at about 160 in the layer
// loop. It reads B in place (row-major, k x n: the caller passes W_hh^T made
// once per sequence, or W_hh itself) and keeps an R x NV tile of C in vector
// registers while it walks k, one FMA chain per element from zero; C (when
// accumulating) and then the bias are added to the chain's sum, the order of
// oneDNN's brgemm RNN (Note [oneDNN LSTM arithmetic]). Column tiles are the outer loop so one tile's
// panel of B (k x NV vectors) serves every row block from L1.
#if defined(__AVX512F__)
constexpr int kGemmRows = 8, kGemmCols = 3;  // 24 accumulators of 32 registers
#else
constexpr int kGemmRows = 4, kGemmCols = 2;
#endif

// One float broadcast to every lane, straight from memory.
inline Vf bcast(const float* p) {
#if defined(__AVX512F__)
  return (Vf)_mm512_set1_ps(*p);
#elif defined(__AVX2__)
  return (Vf)_mm256_set1_ps(*p);
#else
  return vecmath::splat(*p);
#endif
}

template <int R, int NV>
inline void gemm_tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                      bool accumulate, const float* bias) {
  Vf s[R][NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) s[r][v] = Vf{};
  }
  for (int64_t p = 0; p < k; ++p) {
    Vf bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = vecmath::load(b + p * ldb + v * kW);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const Vf av = bcast(a + r * lda + p);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) s[r][v] = vecmath::madd(av, bv[v], s[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      Vf out = s[r][v];
      if (accumulate) out = out + vecmath::load(c + r * ldc + v * kW);
      if (bias) out = out + vecmath::load(bias + v * kW);
      vecmath::store(c + r * ldc + v * kW, out);
    }
  }
}

// Row blocks of kGemmRows, then the remaining rows (R < kGemmRows).
template <int NV, int R = kGemmRows>
void gemm_rows(int64_t m, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
               bool accumulate, const float* bias) {
  if constexpr (R == kGemmRows) {
    int64_t r = 0;
    for (; r + R <= m; r += R) gemm_tile<R, NV>(k, a + r * lda, lda, b, ldb, c + r * ldc, ldc, accumulate, bias);
    if (r < m) gemm_rows<NV, R - 1>(m - r, k, a + r * lda, lda, b, ldb, c + r * ldc, ldc, accumulate, bias);
  } else if constexpr (R > 0) {
    if (m == R) {
      gemm_tile<R, NV>(k, a, lda, b, ldb, c, ldc, accumulate, bias);
    } else {
      gemm_rows<NV, R - 1>(m, k, a, lda, b, ldb, c, ldc, accumulate, bias);
    }
  }
}

void recurrent_gemm_kernel(int64_t m, int64_t n_begin, int64_t n_end, int64_t k, const float* a, int64_t lda,
                           const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate, const float* bias) {
  auto bias_at = [&](int64_t j) { return bias ? bias + j : nullptr; };
  int64_t j = n_begin;
  for (; j + kGemmCols * kW <= n_end; j += kGemmCols * kW) {
    gemm_rows<kGemmCols>(m, k, a, lda, b + j, ldb, c + j, ldc, accumulate, bias_at(j));
  }
  if constexpr (kGemmCols > 2) {
    if (j + 2 * kW <= n_end) {
      gemm_rows<2>(m, k, a, lda, b + j, ldb, c + j, ldc, accumulate, bias_at(j));
      j += 2 * kW;
    }
  }
  for (; j + kW <= n_end; j += kW) gemm_rows<1>(m, k, a, lda, b + j, ldb, c + j, ldc, accumulate, bias_at(j));
  for (; j < n_end; ++j) {  // the last n % kW columns
    for (int64_t r = 0; r < m; ++r) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
#if defined(__FMA__) || defined(__AVX512F__)
        acc = std::fma(a[r * lda + p], b[p * ldb + j], acc);  // as vecmath::madd
#else
        acc += a[r * lda + p] * b[p * ldb + j];
#endif
      }
      if (accumulate) acc += c[r * ldc + j];
      if (bias) acc += bias[j];
      c[r * ldc + j] = acc;
    }
  }
}

void lstm_cell_kernel(const LstmCellArgs& a, ScalarType t, int64_t begin, int64_t end) { run<false>(a, t, begin, end); }
void lstm_cell_backward_kernel(const LstmCellArgs& a, ScalarType t, int64_t begin, int64_t end) {
  run<true>(a, t, begin, end);
}

}  // namespace

EMBER_REGISTER_DISPATCH(lstm_cell_stub, &lstm_cell_kernel);
EMBER_REGISTER_DISPATCH(lstm_cell_backward_stub, &lstm_cell_backward_kernel);
EMBER_REGISTER_DISPATCH(recurrent_gemm_stub, &recurrent_gemm_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
