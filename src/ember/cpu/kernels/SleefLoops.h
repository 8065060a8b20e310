#pragma once
// SLEEF's AVX2 functions on 8 floats or 4 doubles, its AVX-512 functions on
// 16 floats or 8 doubles, and the loops PyTorch runs them in (Note [SLEEF
// loops]). The AVX2 and AVX512 kernels have them, each at its own vector
// width; the DEFAULT kernels have EMBER_SLEEF_LOOPS 0 and keep Ember's own
// vector math.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ember/cpu/Sleef.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/ops/TensorIterator.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__FMA__)
#include <immintrin.h>
#define EMBER_SLEEF_LOOPS 1
#define EMBER_SLEEF_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define EMBER_SLEEF_LOOPS 1
#define EMBER_SLEEF_AVX512 0
#else
#define EMBER_SLEEF_LOOPS 0
#define EMBER_SLEEF_AVX512 0
#endif

#if EMBER_SLEEF_LOOPS
namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace sleefvec {

// Note [SLEEF loops]
// PyTorch's vectorized loops (the elementwise kernels) take contiguous data
// two vectors at a time and leave the remainder, and every strided row, to
// the scalar form (libm); its softmax maps (vec::map, reduce_all) instead run
// the last partial vector through the vector form, zero-padded, and fold the
// partial accumulator lane by lane. These wrappers give both shapes the same
// vector primitives: loads, NaN-propagating maximum, and the horizontal
// reductions in PyTorch's lane order.
template <typename T>
struct Vec;

#if EMBER_SLEEF_AVX512
// PyTorch's AVX512 kernels: Vectorized<float> is 16 lanes, Vectorized<double>
// 8, and the functions are SLEEF's `*avx512f` forms.
template <>
struct Vec<float> {
  using V = __m512;
  using Unary = V (*)(V);
  using Binary = V (*)(V, V);
  static constexpr int64_t size = 16;
  static bool loaded() { return sleef::table().loaded512; }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load(const float* p, int64_t count) {
    alignas(64) float b[size] = {};
    std::memcpy(b, p, count * sizeof(float));
    return _mm512_load_ps(b);
  }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void store(float* p, V v, int64_t count) {
    alignas(64) float b[size];
    _mm512_store_ps(b, v);
    std::memcpy(p, b, count * sizeof(float));
  }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V bit_and(V a, V b) { return _mm512_and_ps(a, b); }
  static V bit_xor(V a, V b) { return _mm512_xor_ps(a, b); }
  static V minimum(V a, V b) {
    const __mmask16 nan = _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
    return _mm512_or_ps(_mm512_min_ps(a, b), _mm512_castsi512_ps(_mm512_maskz_set1_epi32(nan, -1)));
  }
  // t where a > b (a >= b), else f; NaN compares false.
  static V select_gt(V a, V b, V t, V f) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), f, t); }
  static V select_ge(V a, V b, V t, V f) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GE_OQ), f, t); }
  // t where a == b and c == d, else f.
  static V select_eq2(V a, V b, V c, V d, V t, V f) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ) & _mm512_cmp_ps_mask(c, d, _CMP_EQ_OQ), f, t);
  }
  static V maximum(V a, V b) {
    const __mmask16 nan = _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
    return _mm512_or_ps(_mm512_max_ps(a, b), _mm512_castsi512_ps(_mm512_maskz_set1_epi32(nan, -1)));
  }
  // Lanes below count from b, the rest from a.
  static V first_lanes(V a, V b, int64_t count) {
    return _mm512_mask_mov_ps(a, static_cast<__mmask16>((1u << count) - 1), b);
  }
  // All sixteen lanes: halves, quarters, then pairs, then neighbours.
  template <typename Op>
  static float reduce(V v, const Op& op) {
    v = op(v, _mm512_shuffle_f32x4(v, v, 0x4E));
    v = op(v, _mm512_shuffle_f32x4(v, v, 0xB1));
    v = op(v, _mm512_shuffle_ps(v, v, 0x4E));
    v = op(v, _mm512_shuffle_ps(v, v, 0xB1));
    return _mm512_cvtss_f32(v);
  }
  static Unary unary(sleef::Fn f) { return reinterpret_cast<Unary>(const_cast<void*>(sleef::table().f512[f])); }
  static Binary binary(sleef::Fn f) { return reinterpret_cast<Binary>(const_cast<void*>(sleef::table().f512[f])); }
};

template <>
struct Vec<double> {
  using V = __m512d;
  using Unary = V (*)(V);
  using Binary = V (*)(V, V);
  static constexpr int64_t size = 8;
  static bool loaded() { return sleef::table().loaded512; }
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V load(const double* p, int64_t count) {
    alignas(64) double b[size] = {};
    std::memcpy(b, p, count * sizeof(double));
    return _mm512_load_pd(b);
  }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static void store(double* p, V v, int64_t count) {
    alignas(64) double b[size];
    _mm512_store_pd(b, v);
    std::memcpy(p, b, count * sizeof(double));
  }
  static V set1(double x) { return _mm512_set1_pd(x); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V div(V a, V b) { return _mm512_div_pd(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_pd(a, b, c); }
  static V bit_and(V a, V b) { return _mm512_and_pd(a, b); }
  static V bit_xor(V a, V b) { return _mm512_xor_pd(a, b); }
  static V minimum(V a, V b) {
    const __mmask8 nan = _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q);
    return _mm512_or_pd(_mm512_min_pd(a, b), _mm512_castsi512_pd(_mm512_maskz_set1_epi64(nan, -1)));
  }
  static V select_gt(V a, V b, V t, V f) { return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_GT_OQ), f, t); }
  static V select_ge(V a, V b, V t, V f) { return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_GE_OQ), f, t); }
  static V select_eq2(V a, V b, V c, V d, V t, V f) {
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ) & _mm512_cmp_pd_mask(c, d, _CMP_EQ_OQ), f, t);
  }
  static V maximum(V a, V b) {
    const __mmask8 nan = _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q);
    return _mm512_or_pd(_mm512_max_pd(a, b), _mm512_castsi512_pd(_mm512_maskz_set1_epi64(nan, -1)));
  }
  static V first_lanes(V a, V b, int64_t count) {
    return _mm512_mask_mov_pd(a, static_cast<__mmask8>((1u << count) - 1), b);
  }
  // Lane by lane from the first (PyTorch has no shuffle order for doubles).
  template <typename Op>
  static double reduce(V v, const Op& op) {
    alignas(64) double a[size];
    _mm512_store_pd(a, v);
    V acc = v;
    for (int64_t i = 1; i < size; ++i) acc = op(acc, _mm512_setr_pd(a[i], 0, 0, 0, 0, 0, 0, 0));
    return _mm512_cvtsd_f64(acc);
  }
  static Unary unary(sleef::Fn f) { return reinterpret_cast<Unary>(const_cast<void*>(sleef::table().d512[f])); }
  static Binary binary(sleef::Fn f) { return reinterpret_cast<Binary>(const_cast<void*>(sleef::table().d512[f])); }
};
#else
template <>
struct Vec<float> {
  using V = __m256;
  using Unary = V (*)(V);
  using Binary = V (*)(V, V);
  static constexpr int64_t size = 8;
  static bool loaded() { return sleef::table().loaded; }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V load(const float* p, int64_t count) {
    alignas(32) float b[size] = {};
    std::memcpy(b, p, count * sizeof(float));
    return _mm256_load_ps(b);
  }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void store(float* p, V v, int64_t count) {
    alignas(32) float b[size];
    _mm256_store_ps(b, v);
    std::memcpy(p, b, count * sizeof(float));
  }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V bit_and(V a, V b) { return _mm256_and_ps(a, b); }
  static V bit_xor(V a, V b) { return _mm256_xor_ps(a, b); }
  static V minimum(V a, V b) { return _mm256_or_ps(_mm256_min_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q)); }
  // t where a > b (a >= b), else f; NaN compares false.
  static V select_gt(V a, V b, V t, V f) { return _mm256_blendv_ps(f, t, _mm256_cmp_ps(a, b, _CMP_GT_OQ)); }
  static V select_ge(V a, V b, V t, V f) { return _mm256_blendv_ps(f, t, _mm256_cmp_ps(a, b, _CMP_GE_OQ)); }
  // t where a == b and c == d, else f.
  static V select_eq2(V a, V b, V c, V d, V t, V f) {
    return _mm256_blendv_ps(f, t, _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ), _mm256_cmp_ps(c, d, _CMP_EQ_OQ)));
  }
  static V maximum(V a, V b) { return _mm256_or_ps(_mm256_max_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q)); }
  // Lanes below count from b, the rest from a.
  static V first_lanes(V a, V b, int64_t count) {
    alignas(32) float x[size], y[size];
    _mm256_store_ps(x, a);
    _mm256_store_ps(y, b);
    std::memcpy(x, y, count * sizeof(float));
    return _mm256_load_ps(x);
  }
  // All eight lanes: halves, then pairs, then neighbours.
  template <typename Op>
  static float reduce(V v, const Op& op) {
    v = op(v, _mm256_permute2f128_ps(v, v, 0x1));
    v = op(v, _mm256_shuffle_ps(v, v, 0x4E));
    v = op(v, _mm256_shuffle_ps(v, v, 0xB1));
    return _mm256_cvtss_f32(v);
  }
  static Unary unary(sleef::Fn f) { return reinterpret_cast<Unary>(const_cast<void*>(sleef::table().f[f])); }
  static Binary binary(sleef::Fn f) { return reinterpret_cast<Binary>(const_cast<void*>(sleef::table().f[f])); }
};

template <>
struct Vec<double> {
  using V = __m256d;
  using Unary = V (*)(V);
  using Binary = V (*)(V, V);
  static constexpr int64_t size = 4;
  static bool loaded() { return sleef::table().loaded; }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V load(const double* p, int64_t count) {
    alignas(32) double b[size] = {};
    std::memcpy(b, p, count * sizeof(double));
    return _mm256_load_pd(b);
  }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static void store(double* p, V v, int64_t count) {
    alignas(32) double b[size];
    _mm256_store_pd(b, v);
    std::memcpy(p, b, count * sizeof(double));
  }
  static V set1(double x) { return _mm256_set1_pd(x); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V div(V a, V b) { return _mm256_div_pd(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_pd(a, b, c); }
  static V bit_and(V a, V b) { return _mm256_and_pd(a, b); }
  static V bit_xor(V a, V b) { return _mm256_xor_pd(a, b); }
  static V minimum(V a, V b) { return _mm256_or_pd(_mm256_min_pd(a, b), _mm256_cmp_pd(a, b, _CMP_UNORD_Q)); }
  static V select_gt(V a, V b, V t, V f) { return _mm256_blendv_pd(f, t, _mm256_cmp_pd(a, b, _CMP_GT_OQ)); }
  static V select_ge(V a, V b, V t, V f) { return _mm256_blendv_pd(f, t, _mm256_cmp_pd(a, b, _CMP_GE_OQ)); }
  static V select_eq2(V a, V b, V c, V d, V t, V f) {
    return _mm256_blendv_pd(f, t, _mm256_and_pd(_mm256_cmp_pd(a, b, _CMP_EQ_OQ), _mm256_cmp_pd(c, d, _CMP_EQ_OQ)));
  }
  static V maximum(V a, V b) { return _mm256_or_pd(_mm256_max_pd(a, b), _mm256_cmp_pd(a, b, _CMP_UNORD_Q)); }
  static V first_lanes(V a, V b, int64_t count) {
    alignas(32) double x[size], y[size];
    _mm256_store_pd(x, a);
    _mm256_store_pd(y, b);
    std::memcpy(x, y, count * sizeof(double));
    return _mm256_load_pd(x);
  }
  // Lane by lane from the first (PyTorch has no shuffle order for doubles).
  template <typename Op>
  static double reduce(V v, const Op& op) {
    alignas(32) double a[size];
    _mm256_store_pd(a, v);
    V acc = v;
    for (int64_t i = 1; i < size; ++i) acc = op(acc, _mm256_setr_pd(a[i], 0, 0, 0));
    return _mm256_cvtsd_f64(acc);
  }
  static Unary unary(sleef::Fn f) { return reinterpret_cast<Unary>(const_cast<void*>(sleef::table().d[f])); }
  static Binary binary(sleef::Fn f) { return reinterpret_cast<Binary>(const_cast<void*>(sleef::table().d[f])); }
};

#endif

// The first `count` lanes of v folded in order (a partial vector).
template <typename T, typename Op>
T reduce_partial(typename Vec<T>::V v, int64_t count, const Op& op) {
  using W = Vec<T>;
  alignas(64) T a[W::size];
  W::store(a, v);
  typename W::V acc = v;
  for (int64_t i = 1; i < count; ++i) {
    alignas(64) T next[W::size] = {};
    next[0] = a[i];
    acc = op(acc, W::load(next));
  }
  W::store(a, acc);
  return a[0];
}

// op over all n elements of map(x): whole vectors into one accumulator, the
// last partial vector's lanes merged into it, then the lanes folded.
template <typename T, typename Map, typename Op>
T map_reduce_all(const T* x, int64_t n, const Map& map, const Op& op) {
  using W = Vec<T>;
  if (n < W::size) return reduce_partial<T>(map(W::load(x, n)), n, op);
  typename W::V acc = map(W::load(x));
  int64_t d = W::size;
  for (; d < n - n % W::size; d += W::size) acc = op(acc, map(W::load(x + d)));
  if (n - d > 0) acc = W::first_lanes(acc, op(acc, map(W::load(x + d, n - d))), n - d);
  return W::reduce(acc, op);
}

template <typename T, typename Op>
T reduce_all(const T* x, int64_t n, const Op& op) {
  return map_reduce_all(x, n, [](typename Vec<T>::V v) { return v; }, op);
}

// op over all n elements of map(x, y), as map_reduce_all.
template <typename T, typename Map, typename Op>
T map2_reduce_all(const T* x, const T* y, int64_t n, const Map& map, const Op& op) {
  using W = Vec<T>;
  if (n < W::size) return reduce_partial<T>(map(W::load(x, n), W::load(y, n)), n, op);
  typename W::V acc = map(W::load(x), W::load(y));
  int64_t d = W::size;
  for (; d < n - n % W::size; d += W::size) acc = op(acc, map(W::load(x + d), W::load(y + d)));
  if (n - d > 0) acc = W::first_lanes(acc, op(acc, map(W::load(x + d, n - d), W::load(y + d, n - d))), n - d);
  return W::reduce(acc, op);
}

// out = f(x, y) over n elements, the last partial vector zero-padded.
template <typename T, typename F>
void map2(const T* x, const T* y, T* out, int64_t n, const F& f) {
  using W = Vec<T>;
  int64_t d = 0;
  for (; d < n - n % W::size; d += W::size) W::store(out + d, f(W::load(x + d), W::load(y + d)));
  if (n - d > 0) W::store(out + d, f(W::load(x + d, n - d), W::load(y + d, n - d)), n - d);
}

// y = f(x) over n elements, the last partial vector zero-padded.
template <typename T, typename F>
void map(const T* x, T* y, int64_t n, const F& f) {
  using W = Vec<T>;
  int64_t d = 0;
  for (; d < n - n % W::size; d += W::size) W::store(y + d, f(W::load(x + d)));
  if (n - d > 0) W::store(y + d, f(W::load(x + d, n - d)), n - d);
}

// An elementwise loop as PyTorch's: vf on two vectors at a time where every
// operand is contiguous (or, for one input, a broadcast scalar), sf
// elsewhere. Returns false where the iterator's dtypes are not all T.
template <typename T, int N, typename VF, typename SF>
bool elementwise(const TensorIterator& it, const VF& vf, const SF& sf, int64_t grain_size = 32768) {
  for (int i = 0; i <= N; ++i) {
    if (it.dtype(i) != (std::is_same_v<T, float> ? ScalarType::Float : ScalarType::Double)) return false;
  }
  it.for_each(
      [&](char** d, const int64_t* s, int64_t n) {
        using W = Vec<T>;
        T* out = reinterpret_cast<T*>(d[0]);
        const T* a = reinterpret_cast<const T*>(d[1]);
        const T* b = N == 2 ? reinterpret_cast<const T*>(d[2]) : nullptr;
        bool vec = s[0] == sizeof(T) && s[1] == sizeof(T);
        if constexpr (N == 2)
          vec = (s[0] == sizeof(T)) && (s[1] == sizeof(T) || s[1] == 0) && (s[2] == sizeof(T) || s[2] == 0) &&
                (s[1] != 0 || s[2] != 0);
        int64_t i = 0;
        if (vec) {
          if constexpr (N == 1) {
            for (; i + 2 * W::size <= n; i += 2 * W::size) {
              W::store(out + i, vf(W::load(a + i)));
              W::store(out + i + W::size, vf(W::load(a + i + W::size)));
            }
          } else {
            const bool sa = s[1] == 0, sb = s[2] == 0;
            const typename W::V va = W::set1(*a), vb = W::set1(*b);
            for (; i + 2 * W::size <= n; i += 2 * W::size) {
              for (int64_t h = 0; h < 2 * W::size; h += W::size) {
                W::store(out + i + h, vf(sa ? va : W::load(a + i + h), sb ? vb : W::load(b + i + h)));
              }
            }
          }
        }
        for (; i < n; ++i) {
          const T x = *reinterpret_cast<const T*>(d[1] + i * s[1]);
          if constexpr (N == 1) {
            *reinterpret_cast<T*>(d[0] + i * s[0]) = sf(x);
          } else {
            *reinterpret_cast<T*>(d[0] + i * s[0]) = sf(x, *reinterpret_cast<const T*>(d[2] + i * s[2]));
          }
        }
      },
      grain_size);
  return true;
}

// elementwise for float16/bfloat16 (T) as PyTorch's reduced-float kernels:
// vf on float vectors over whole blocks of two Vectorized<T> (four float
// vectors) where every operand is contiguous (or one input a broadcast
// scalar), sf in float elsewhere; each result rounded to T once.
template <typename T, int N, typename VF, typename SF>
bool elementwise_reduced(const TensorIterator& it, const VF& vf, const SF& sf, int64_t grain_size = 32768) {
  static_assert(N == 1 || N == 2, "one or two inputs");
  constexpr ScalarType t = std::is_same_v<T, Half> ? ScalarType::Half : ScalarType::BFloat16;
  for (int i = 0; i <= N; ++i) {
    if (it.dtype(i) != t) return false;
  }
  using W = Vec<float>;
  constexpr int64_t kBlock = 4 * W::size;
  static_assert(kChunk % kBlock == 0, "chunks hold whole blocks");
  it.for_each(
      [&](char** d, const int64_t* s, int64_t n) {
        const int64_t body = pytorch_vector_body<T, N, kBlock>(s, n);
        alignas(64) float in[N][kChunk];
        alignas(64) float res[kChunk];
        for (int64_t i = 0; i < n; i += kChunk) {
          const int m = static_cast<int>(std::min<int64_t>(kChunk, n - i));
          for (int k = 0; k < N; ++k) gather_float<T>(d[k + 1], s[k + 1], i, m, in[k]);
          const int vec_end = static_cast<int>(std::clamp<int64_t>(body - i, 0, m));
          for (int j = 0; j < vec_end; j += W::size) {
            if constexpr (N == 1) {
              W::store(res + j, vf(W::load(in[0] + j)));
            } else {
              W::store(res + j, vf(W::load(in[0] + j), W::load(in[1] + j)));
            }
          }
          for (int j = vec_end; j < m; ++j) {
            if constexpr (N == 1) {
              res[j] = sf(in[0][j]);
            } else {
              res[j] = sf(in[0][j], in[1][j]);
            }
          }
          scatter_float<T>(d[0], s[0], i, m, res);
        }
      },
      grain_size);
  return true;
}

// The computation type of a floating dtype: float for float16/bfloat16.
template <typename T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// PyTorch's cpu_kernel_vec over any floating dtype T: body(T{}) gives the
// vector form on Vec<compute_t<T>>, scalar the scalar one (called with
// compute_t<T> values). False without SLEEF or for other dtypes.
template <int N, typename Body, typename Scalar>
bool floating(const TensorIterator& it, const Body& body, const Scalar& scalar, int64_t grain_size = 32768) {
  if (!Vec<float>::loaded()) return false;
  switch (it.common_dtype()) {
    case ScalarType::Float: return elementwise<float, N>(it, body(0.0f), scalar, grain_size);
    case ScalarType::Double: return elementwise<double, N>(it, body(0.0), scalar, grain_size);
    case ScalarType::Half: return elementwise_reduced<Half, N>(it, body(Half{}), scalar, grain_size);
    case ScalarType::BFloat16: return elementwise_reduced<BFloat16, N>(it, body(BFloat16{}), scalar, grain_size);
    default: return false;
  }
}

// out = vf(in) on whole vectors only, the last one zero-padded, strided rows
// through a buffer: PyTorch's loop for the functions its vml.h maps (expm1,
// log1p, lgamma).
template <typename T, typename VF>
bool map_unary(const TensorIterator& it, const VF& vf) {
  constexpr ScalarType t = std::is_same_v<T, float> ? ScalarType::Float : ScalarType::Double;
  if (it.dtype(0) != t || it.dtype(1) != t) return false;
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
      map(reinterpret_cast<const T*>(d[1]), reinterpret_cast<T*>(d[0]), n, vf);
      return;
    }
    constexpr int64_t kChunk = 2048;
    T buf[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t len = std::min(kChunk, n - i);
      for (int64_t j = 0; j < len; ++j) buf[j] = *reinterpret_cast<const T*>(d[1] + (i + j) * s[1]);
      map(static_cast<const T*>(buf), buf, len, vf);
      for (int64_t j = 0; j < len; ++j) *reinterpret_cast<T*>(d[0] + (i + j) * s[0]) = buf[j];
    }
  });
  return true;
}

inline bool map_unary(const TensorIterator& it, sleef::Fn fn) {
  if (!Vec<float>::loaded()) return false;
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float) return map_unary<float>(it, Vec<float>::unary(fn));
  if (t == ScalarType::Double) return map_unary<double>(it, Vec<double>::unary(fn));
  return false;
}

// out = vf(in) in float for float16/bfloat16: PyTorch's reduced-float
// vectors are converted to float vectors, mapped and rounded back, the last
// one zero-padded, so every element takes vf (strided rows through a
// buffer, as its vml.h loops).
template <typename VF>
bool map_unary_16bit(const TensorIterator& it, const VF& vf) {
  const ScalarType t = it.common_dtype();
  if ((t != ScalarType::Half && t != ScalarType::BFloat16) || it.dtype(0) != t || it.dtype(1) != t) return false;
  const auto run = [&](auto tag) {
    using T = decltype(tag);
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      alignas(64) float buf[kChunk];
      for (int64_t i = 0; i < n; i += kChunk) {
        const int len = static_cast<int>(std::min<int64_t>(kChunk, n - i));
        gather_float<T>(d[1], s[1], i, len, buf);
        map(static_cast<const float*>(buf), buf, len, vf);
        scatter_float<T>(d[0], s[0], i, len, buf);
      }
    });
  };
  if (t == ScalarType::Half) {
    run(Half{});
  } else {
    run(BFloat16{});
  }
  return true;
}

inline bool map_unary_16bit(const TensorIterator& it, sleef::Fn fn) {
  return Vec<float>::loaded() && map_unary_16bit(it, Vec<float>::unary(fn));
}

// out = SLEEF's fn(in), in PyTorch's elementwise loop, for float32/float64;
// false where it does not apply (no library, another dtype).
template <typename SF, typename DF>
bool unary(const TensorIterator& it, sleef::Fn fn, const SF& scalar_f, const DF& scalar_d) {
  if (!Vec<float>::loaded()) return false;
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float) return elementwise<float, 1>(it, Vec<float>::unary(fn), scalar_f);
  if (t == ScalarType::Double) return elementwise<double, 1>(it, Vec<double>::unary(fn), scalar_d);
  return false;
}

template <typename SF, typename DF>
bool binary(const TensorIterator& it, sleef::Fn fn, const SF& scalar_f, const DF& scalar_d) {
  if (!Vec<float>::loaded()) return false;
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float) return elementwise<float, 2>(it, Vec<float>::binary(fn), scalar_f);
  if (t == ScalarType::Double) return elementwise<double, 2>(it, Vec<double>::binary(fn), scalar_d);
  return false;
}

// Note [Complex abs and sgn with SLEEF]
// PyTorch's complex abs and sgn run the vector form on contiguous rows, two
// vectors (W::size complex numbers) a step: |z| is SLEEF's hypot u05 of the
// parts, and sgn divides each part by it (0 where |z| is 0). The remainder
// and strided rows take the scalar form: libm's hypot, and for sgn the
// complex quotient z / (|z|, 0) (Ember's sgn_scalar). hypot works lane by
// lane, so W::size numbers per call give PyTorch's lanes.
template <typename T>
void complex_hypot(const T* z, T* out, int64_t n) {
  using W = Vec<T>;
  const auto hypot = W::binary(sleef::Hypot);
  alignas(64) T re[W::size], im[W::size];
  for (int64_t i = 0; i + W::size <= n; i += W::size) {
    for (int64_t j = 0; j < W::size; ++j) {
      re[j] = z[2 * (i + j)];
      im[j] = z[2 * (i + j) + 1];
    }
    W::store(out + i, hypot(W::load(re), W::load(im)));
  }
}

// out[i] = |z[i]| over a complex<T> -> T iterator; false without SLEEF.
template <typename T>
bool complex_abs(const TensorIterator& it) {
  using W = Vec<T>;
  if (!W::loaded()) return false;
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    int64_t i = 0;
    if (s[0] == sizeof(T) && s[1] == 2 * sizeof(T)) {
      i = n - n % W::size;
      complex_hypot(reinterpret_cast<const T*>(d[1]), reinterpret_cast<T*>(d[0]), i);
    }
    for (; i < n; ++i) {
      const T* z = reinterpret_cast<const T*>(d[1] + i * s[1]);
      *reinterpret_cast<T*>(d[0] + i * s[0]) = std::hypot(z[0], z[1]);
    }
  });
  return true;
}

// out[i] = arg(z[i]) over a complex<T> -> T iterator, as PyTorch's angle,
// whose AVX2 kernel also runs on AVX-512 CPUs: SLEEF's atan2 u10 of
// (imaginary, real) on contiguous rows, two AVX2 vectors (64 bytes of
// complex numbers) a step; libm's atan2 on the remainder and on strided
// rows. SLEEF works lane by lane, so any vector width gives its lanes.
// False without SLEEF.
template <typename T>
bool complex_angle(const TensorIterator& it) {
  using W = Vec<T>;
  if (!W::loaded()) return false;
  const auto atan2 = W::binary(sleef::Atan2);
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    int64_t i = 0;
    if (s[0] == sizeof(T) && s[1] == 2 * sizeof(T)) {
      const T* z = reinterpret_cast<const T*>(d[1]);
      T* out = reinterpret_cast<T*>(d[0]);
      const int64_t whole = n - n % (32 / static_cast<int64_t>(sizeof(T)));
      alignas(64) T re[W::size], im[W::size], arg[W::size];
      for (; i < whole; i += W::size) {
        const int64_t len = std::min(W::size, whole - i);
        for (int64_t j = 0; j < W::size; ++j) {
          re[j] = j < len ? z[2 * (i + j)] : T(1);
          im[j] = j < len ? z[2 * (i + j) + 1] : T(0);
        }
        W::store(arg, atan2(W::load(im), W::load(re)));
        std::memcpy(out + i, arg, len * sizeof(T));
      }
      i = whole;
    }
    for (; i < n; ++i) {
      const T* z = reinterpret_cast<const T*>(d[1] + i * s[1]);
      *reinterpret_cast<T*>(d[0] + i * s[0]) = std::atan2(z[1], z[0]);
    }
  });
  return true;
}

// sgn over a complex<T> iterator: the vector form on the contiguous part,
// scalar(re, im, out) elsewhere; false without SLEEF.
template <typename T, typename Scalar>
bool complex_sgn(const TensorIterator& it, const Scalar& scalar) {
  using W = Vec<T>;
  if (!W::loaded()) return false;
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    int64_t i = 0;
    if (s[0] == 2 * sizeof(T) && s[1] == 2 * sizeof(T)) {
      const T* z = reinterpret_cast<const T*>(d[1]);
      T* out = reinterpret_cast<T*>(d[0]);
      const int64_t whole = n - n % W::size;
      constexpr int64_t kChunk = 16 * W::size;
      alignas(64) T abs[kChunk];
      for (; i < whole; i += kChunk) {
        const int64_t len = std::min(kChunk, whole - i);
        complex_hypot(z + 2 * i, abs, len);
        for (int64_t j = 0; j < len; ++j) {
          const T a = abs[j];
          out[2 * (i + j)] = a == T(0) ? T(0) : z[2 * (i + j)] / a;
          out[2 * (i + j) + 1] = a == T(0) ? T(0) : z[2 * (i + j) + 1] / a;
        }
      }
      i = whole;
    }
    for (; i < n; ++i) {
      const T* z = reinterpret_cast<const T*>(d[1] + i * s[1]);
      scalar(z[0], z[1], reinterpret_cast<T*>(d[0] + i * s[0]));
    }
  });
  return true;
}

// pow(x, e) for one exponent e (pow's general case with a scalar exponent).
inline bool pow_scalar(const TensorIterator& it, double e) {
  if (!Vec<float>::loaded()) return false;
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float) {
    const float ef = static_cast<float>(e);
    const auto pow = Vec<float>::binary(sleef::Pow);
    const auto ve = Vec<float>::set1(ef);
    // The scalar remainder raises to the exponent as a double, as PyTorch's does.
    return elementwise<float, 1>(
        it, [&](Vec<float>::V x) { return pow(x, ve); },
        [e](float x) { return static_cast<float>(std::pow(static_cast<double>(x), e)); });
  }
  if (t == ScalarType::Double) {
    const auto pow = Vec<double>::binary(sleef::Pow);
    const auto ve = Vec<double>::set1(e);
    return elementwise<double, 1>(
        it, [&](Vec<double>::V x) { return pow(x, ve); }, [e](double x) { return std::pow(x, e); });
  }
  return false;
}

// sigmoid: 1 / ((0 - x).exp() + 1), exp from SLEEF; the scalar remainder
// 1 / (1 + exp(-x)) with libm's exp.
inline bool sigmoid(const TensorIterator& it) {
  if (!Vec<float>::loaded()) return false;
  const auto body = [](auto tag) {
    using T = decltype(tag);
    using W = Vec<T>;
    const auto exp = W::unary(sleef::Exp);
    return
        [exp](typename W::V x) { return W::div(W::set1(T(1)), W::add(exp(W::sub(W::set1(T(0)), x)), W::set1(T(1)))); };
  };
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float) {
    return elementwise<float, 1>(it, body(0.0f), [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
  }
  if (t == ScalarType::Double) {
    return elementwise<double, 1>(it, body(0.0), [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  }
  return false;
}

}  // namespace sleefvec
}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu

#else
namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace sleefvec {
// The DEFAULT build keeps Ember's own vector math.
template <typename SF, typename DF>
bool unary(const TensorIterator&, sleef::Fn, const SF&, const DF&) {
  return false;
}
template <typename SF, typename DF>
bool binary(const TensorIterator&, sleef::Fn, const SF&, const DF&) {
  return false;
}
inline bool pow_scalar(const TensorIterator&, double) { return false; }
inline bool sigmoid(const TensorIterator&) { return false; }
template <int N, typename Body, typename Scalar>
bool floating(const TensorIterator&, const Body&, const Scalar&, int64_t = 32768) {
  return false;
}
inline bool map_unary(const TensorIterator&, sleef::Fn) { return false; }
inline bool map_unary_16bit(const TensorIterator&, sleef::Fn) { return false; }
template <typename T>
bool complex_abs(const TensorIterator&) {
  return false;
}
template <typename T, typename Scalar>
bool complex_sgn(const TensorIterator&, const Scalar&) {
  return false;
}
}  // namespace sleefvec
}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
#endif
