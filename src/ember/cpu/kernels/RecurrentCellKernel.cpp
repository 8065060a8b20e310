// Fused LSTM cell, forward and backward, compiled once per CPU capability.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
// stays the same for the whole sequence: h W_hh^T (k = H, n = 4H). This
// kernel computes it in the float32 forward without grad, where oneDNN's
// brgemm RNN runs plain FMA chains (with grad, and in the backward, oneDNN's
// sgemm gives PyTorch's bits and is called instead; Note [oneDNN LSTM
// arithmetic]). A BLAS call packs the matrix again on every step: oneDNN's
// sgemm ran 16 x 128 x 512 at about 52 GFLOP/s on the AVX-512 machine of
// BENCHMARKS.md, this kernel at about 160 in the layer loop. It reads B in
// place (row-major, k x n: the caller passes W_hh^T made once per sequence)
// and keeps an R x NV tile of C in vector registers while it walks k, one
// FMA chain per element from zero; C (when accumulating) and then the bias
// are added to the chain's sum, oneDNN's order. Column tiles are the outer
// loop so one tile's panel of B (k x NV vectors) serves every row block from
// L1.
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

// a b + c rounded once, as oneDNN's kernels compute it (lane by lane through
// libm where FMA is not an instruction of this capability).
inline Vf fused_madd(Vf a, Vf b, Vf c) {
#if defined(__FMA__) || defined(__AVX512F__)
  return vecmath::madd(a, b, c);
#else
  Vf r;
  for (int l = 0; l < kW; ++l) r[l] = std::fma(a[l], b[l], c[l]);
  return r;
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
      for (int v = 0; v < NV; ++v) s[r][v] = fused_madd(av, bv[v], s[r][v]);
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
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a[r * lda + p], b[p * ldb + j], acc);
      if (accumulate) acc += c[r * ldc + j];
      if (bias) acc += bias[j];
      c[r * ldc + j] = acc;
    }
  }
}

// oneDNN's float32 LSTM cell (Note [oneDNN LSTM arithmetic] in
// cpu/RecurrentLayer.cpp), written once for one float and for a vector of
// them (the vector only where FMA is an instruction, so that fused steps stay
// fused); std::fma / madd where oneDNN fuses, nothing fused elsewhere.
namespace onednn_math {

inline uint32_t to_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline vecmath::Vui to_bits(Vf x) { return (vecmath::Vui)x; }
inline float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
inline Vf from_bits(vecmath::Vui u) { return (Vf)u; }
inline float fused(float a, float b, float c) { return std::fma(a, b, c); }
inline Vf fused(Vf a, Vf b, Vf c) { return vecmath::madd(a, b, c); }
inline float floor_of(float x) { return std::floor(x); }
inline Vf floor_of(Vf x) { return vecmath::floor(x); }
inline int32_t to_int(float x) { return int32_t(x); }
inline vecmath::Vi to_int(Vf x) { return __builtin_convertvector(x, vecmath::Vi); }
inline uint32_t to_unsigned(int32_t v) { return uint32_t(v); }
inline vecmath::Vui to_unsigned(vecmath::Vi v) { return (vecmath::Vui)v; }
template <typename V>
inline V splat(float x) {
  return V{} + x;
}

// Coefficients of degree 0..6 of the 32 tanh polynomials.
constexpr uint32_t kTanhTable[7][32] = {
    {0x00000000, 0x39bfffff, 0x39ffffff, 0x3a3ffffe, 0x3a7ffffb, 0x3abffff7, 0x3affffeb, 0x3b3fffdc,
     0x3b7fffab, 0x3bbfff70, 0x3bfffeab, 0x3c3ffdc0, 0x3c7ffaab, 0x3cbff701, 0x3cffeaad, 0x3d3fdc08,
     0x3d7faacd, 0x3dbf7081, 0x3dfeacc9, 0x3e3dc7fd, 0x3e7acbf5, 0x3eb77a9f, 0x3eec9a9f, 0x3f22991f,
     0x3f42f7d6, 0x3f67b7cc, 0x3f76ca83, 0x3f7ebbe9, 0x3f7fd40c, 0x3f7fff32, 0x3f7ffffc, 0x3f800000},
    {0x3f800000, 0x3f800018, 0x3f7fffe8, 0x3f7fffda, 0x3f7fffdc, 0x3f7fffdc, 0x3f7fffac, 0x3f7fff70,
     0x3f7ffeec, 0x3f7ffdc0, 0x3f7ffbed, 0x3f7ff704, 0x3f7feff5, 0x3f7fdbca, 0x3f7fbfff, 0x3f7f7041,
     0x3f7f009b, 0x3f7dc36c, 0x3f7c0aa8, 0x3f7734b8, 0x3f70a4de, 0x3f5f1fd8, 0x3f495493, 0x3f18b9ec,
     0x3ed706cb, 0x3e390b06, 0x3d90b11f, 0x3c21a053, 0x3aaf7fdb, 0x37ccc1a3, 0x355c6733, 0x00000000},
    {0x00000000, 0xbe4e0ff1, 0x3d25b1b1, 0x3d6b6dab, 0x3c9fb1d5, 0xbabff06f, 0x3c07b3f6, 0xbb3fc1bc,
     0x3a9f5921, 0xbbbf06f2, 0xbbb0f402, 0xbc47db9e, 0xbc73d5e7, 0xbca25bda, 0xbcfca780, 0xbd40e07c,
     0xbd7dab03, 0xbdbe4a0f, 0xbdfb14a5, 0xbe36cc8d, 0xbe6bd102, 0xbe9fe7c5, 0xbeba0f10, 0xbec206a8,
     0xbea3c388, 0xbe277d62, 0xbd8b7960, 0xbc209f49, 0xbaad44ca, 0xb7c6eeac, 0xb663aa41, 0x00000000},
    {0x00000000, 0x45b3ae96, 0xc414eb20, 0xc450e02e, 0xc3152b4e, 0xbead2f56, 0xc2162e02, 0xbeb4bd5a,
     0xc11a59a4, 0xbed2f507, 0xc020d32c, 0x3dd0f506, 0xbf2a75e2, 0xbff950e3, 0xbed47334, 0xbe809b8c,
     0xbeb64532, 0xbe961a5b, 0xbe9b63ac, 0xbea0d4b2, 0xbe828a77, 0xbe378612, 0xbdc20908, 0x3d2d3957,
     0x3dd46e89, 0x3db3f629, 0x3d2c5e7b, 0x3bd20403, 0x3a59dfae, 0x3770af45, 0x372cc014, 0x00000000},
    {0x00000000, 0xcc981a1b, 0x4a7edd3d, 0x4ab1007c, 0x48fedd9c, 0x41a557b5, 0x477ee32a, 0x422557f5,
     0x45ff3ce4, 0x42a55641, 0x446e0867, 0xc33dc19a, 0x42915214, 0x43af4fad, 0x4110fe88, 0xc1099b75,
     0x3fc8a8dc, 0xbfbeaef5, 0xbe365aad, 0x3f4d9652, 0x3ddfa08f, 0x3e34e9b8, 0x3e2d07a6, 0x3dc63567,
     0x3cdaeb78, 0xbcd17537, 0xbc92829c, 0xbb43ab99, 0xb9b471dd, 0xb6baad5a, 0xb78bafc7, 0x00000000},
    {0x00000000, 0x52f688d5, 0xd0505c72, 0xd08f98e3, 0xce505cc9, 0xc7162b8a, 0xcc5061d6, 0xc7162bdf,
     0xca50b37f, 0xc7162a3a, 0xc8422086, 0x471a714e, 0xc5ece1f1, 0xc70e3d90, 0xc3eba94a, 0x43e0c424,
     0xc21f4552, 0x42217cc8, 0x405e7dc4, 0xc10dd401, 0x3e96b602, 0xbd1a6d2f, 0xbd393883, 0xbd674682,
     0xbd310016, 0xb961e269, 0x3ba32495, 0x3a7680d5, 0x38b3173c, 0x35a9deea, 0x375c3f2a, 0x00000000},
    {0x00000000, 0xd8995ed1, 0x558285ea, 0x55b2cd69, 0x53028625, 0x4bc9991f, 0x5082898a, 0x4b4999b3,
     0x4e02c07c, 0x4ac99764, 0x4b72c822, 0xca40c0e1, 0x489413e4, 0x49b12224, 0x46134c4e, 0xc60c2d57,
     0x43c83910, 0xc3c872d1, 0xc186bc9e, 0x42325bc3, 0xbf2ffa4a, 0x3d9a203c, 0xbc545a43, 0xbae08fee,
     0x3c80225d, 0x3b1fd1df, 0xba36b9d1, 0xb91de544, 0xb71f100f, 0xb408e2ed, 0xb685fec8, 0x00000000}};

inline uint32_t coefficient(int d, uint32_t idx) { return kTanhTable[d][idx]; }
inline vecmath::Vui coefficient(int d, vecmath::Vui idx) {
  vecmath::Vui c;
  for (int l = 0; l < kW; ++l) c[l] = kTanhTable[d][idx[l]];
  return c;
}

template <typename V>
inline V tanh(V x) {
  const V ax = from_bits(to_bits(x) & 0x7fffffffu);
  const auto idx = (((to_bits(ax) - 0x39800000u) & 0xffc00000u) >> 22) & 31u;
  const V r = ax - from_bits(to_bits(ax) & 0xffc00000u);
  V p = from_bits(coefficient(6, idx));
  for (int d = 5; d >= 0; --d) p = fused(p, r, from_bits(coefficient(d, idx)));
  V y = ax < from_bits(0x41102cb3u) ? p : splat<V>(1.0f);  // below saturation
  y = ax < from_bits(0x39ddb3d7u) ? ax : y;  // tanh(x) = x
  return from_bits(to_bits(y) ^ (to_bits(x) & 0x80000000u));
}

template <typename V>
inline V exp(V x) {
  const V lo = splat<V>(from_bits(0xc2aeac50u)), hi = splat<V>(from_bits(0x42b17218u));
  const auto underflow = x < lo;
  x = x < hi ? x : hi;
  x = x > lo ? x : lo;
  V fx = x * from_bits(0x3fb8aa3bu);  // log2(e)
  fx = fx + 0.5f;
  const V n = floor_of(fx);
  const V r = fused(-n, splat<V>(from_bits(0x3f317218u)), x);  // x - n ln 2
  const V two_n1 = from_bits(to_unsigned(to_int(n - 1.0f) + 127) << 23);  // 2^(n-1)
  const V scale = underflow ? V{} : two_n1;
  V p = splat<V>(from_bits(0x3c07cfceu));
  for (uint32_t c : {0x3d2b9d0du, 0x3e2aad40u, 0x3efffee3u, 0x3f7ffffbu, 0x3f800000u})
    p = fused(p, r, splat<V>(from_bits(c)));
  return p * scale * 2.0f;
}

template <typename V>
inline V sigmoid(V x) {
  const V e = exp(from_bits(to_bits(x) | 0x80000000u));
  const V y = e / (e + 1.0f);
  return (to_bits(x) & 0x80000000u) != 0 ? y : 1.0f - y;
}

template <typename V>
inline void forward_at(int64_t H, float* g, const float* bias, const float* c_prev, float* c, float* h, int64_t j) {
  const V i = sigmoid(ld<V>(g + j) + ld<V>(bias + j)), f = sigmoid(ld<V>(g + H + j) + ld<V>(bias + H + j));
  const V gg = tanh(ld<V>(g + 2 * H + j) + ld<V>(bias + 2 * H + j));
  const V o = sigmoid(ld<V>(g + 3 * H + j) + ld<V>(bias + 3 * H + j));
  st<V>(g + j, i), st<V>(g + H + j, f), st<V>(g + 2 * H + j, gg), st<V>(g + 3 * H + j, o);
  const V cf = ld<V>(c_prev + j) * f;
  const V cy = fused(i, gg, cf);
  st<V>(c + j, cy);
  st<V>(h + j, tanh(cy) * o);
}

template <typename V>
inline void backward_at(int64_t H, const float* g, const float* c_prev, const float* c, const float* dh_out,
                        const float* dh_next, const float* dc_next, float* d, float* dc, int64_t j) {
  const V zero{}, one = splat<V>(1.0f);
  const V i = ld<V>(g + j), f = ld<V>(g + H + j), gg = ld<V>(g + 2 * H + j), o = ld<V>(g + 3 * H + j);
  const V tc = tanh(ld<V>(c + j));
  const V dh = (dh_out ? ld<V>(dh_out + j) : zero) + (dh_next ? ld<V>(dh_next + j) : zero);
  V t = fused(-tc, tc, one) * dh;
  t = t * o;
  const V dcy = (dc_next ? ld<V>(dc_next + j) : zero) + t;
  st<V>(d + 3 * H + j, fused(-o, o, o) * dh * tc);
  st<V>(d + j, fused(-i, i, i) * dcy * gg);
  st<V>(d + H + j, fused(-f, f, f) * dcy * ld<V>(c_prev + j));
  st<V>(d + 2 * H + j, fused(-gg, gg, one) * (i * dcy));
  st<V>(dc + j, dcy * f);
}

#if defined(__FMA__) || defined(__AVX512F__)
constexpr int64_t kCellLanes = kW;
#else
constexpr int64_t kCellLanes = 1 << 30;  // madd is not fused here: one float at a time
#endif

// The forward cell on rows [b0, b1): pre holds the gates' products and gets
// the activated gates; bias is b_ih + b_hh.
void onednn_lstm_cell_kernel(int64_t H, int64_t b0, int64_t b1, float* pre, const float* bias, const float* c_prev,
                             float* c, float* h) {
  for (int64_t b = b0; b < b1; ++b) {
    float* g = pre + b * 4 * H;
    int64_t j = 0;
    for (; j + kCellLanes <= H; j += kCellLanes) forward_at<Vf>(H, g, bias, c_prev + b * H, c + b * H, h + b * H, j);
    for (; j < H; ++j) forward_at<float>(H, g, bias, c_prev + b * H, c + b * H, h + b * H, j);
  }
}

// The backward cell on rows [b0, b1): act holds the activated gates; dh_out
// (the output's gradient) and dh_next (h's through the next step), dc_next
// may be null (zero); dc gets c_prev's gradient (it may be dc_next).
void onednn_lstm_cell_backward_kernel(int64_t H, int64_t b0, int64_t b1, const float* act, const float* c_prev,
                                      const float* c, const float* dh_out, const float* dh_next, const float* dc_next,
                                      float* dG, float* dc) {
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t o = b * H;
    const float *ho = dh_out ? dh_out + o : nullptr, *hn = dh_next ? dh_next + o : nullptr,
                *cn = dc_next ? dc_next + o : nullptr;
    const float* g = act + b * 4 * H;
    float* d = dG + b * 4 * H;
    int64_t j = 0;
    for (; j + kCellLanes <= H; j += kCellLanes) backward_at<Vf>(H, g, c_prev + o, c + o, ho, hn, cn, d, dc + o, j);
    for (; j < H; ++j) backward_at<float>(H, g, c_prev + o, c + o, ho, hn, cn, d, dc + o, j);
  }
}

}  // namespace onednn_math

void lstm_cell_kernel(const LstmCellArgs& a, ScalarType t, int64_t begin, int64_t end) { run<false>(a, t, begin, end); }
void lstm_cell_backward_kernel(const LstmCellArgs& a, ScalarType t, int64_t begin, int64_t end) {
  run<true>(a, t, begin, end);
}

}  // namespace

EMBER_REGISTER_DISPATCH(lstm_cell_stub, &lstm_cell_kernel);
EMBER_REGISTER_DISPATCH(lstm_cell_backward_stub, &lstm_cell_backward_kernel);
EMBER_REGISTER_DISPATCH(recurrent_gemm_stub, &recurrent_gemm_kernel);
EMBER_REGISTER_DISPATCH(onednn_lstm_cell_stub, &onednn_math::onednn_lstm_cell_kernel);
EMBER_REGISTER_DISPATCH(onednn_lstm_cell_backward_stub, &onednn_math::onednn_lstm_cell_backward_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
