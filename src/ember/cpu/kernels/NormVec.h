#pragma once
// PyTorch's 32-byte vectors as GCC vectors, for the normalisation kernels
// (Note [PyTorch's row moments] in NormalizationKernel.cpp): its AVX2
// Vectorized, whose normalisation kernels also run on AVX-512 CPUs. The
// kernels that include this compile without contraction and spell each
// fused step.
#include <algorithm>
#include <cstdint>
#include <cstring>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ember/core/ScalarType.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

constexpr int64_t kVecBytes = 32;

// PyTorch's scalar code in a capability build: the compiler fuses a * b + c.
template <typename T>
inline T smadd(T a, T b, T c) {
  return capability_fma(a, b, c);
}

// PyTorch's 32-byte vector as a GCC vector: its lanewise steps are the same
// instructions in the AVX2 build and a pair of SSE ones in the DEFAULT build.
template <typename T>
struct Vec32Of;
template <>
struct Vec32Of<float> {
  typedef float type __attribute__((vector_size(kVecBytes)));
};
template <>
struct Vec32Of<double> {
  typedef double type __attribute__((vector_size(kVecBytes)));
};
template <typename T>
using Vec = typename Vec32Of<T>::type;

template <typename T>
inline Vec<T> vload(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A float vector of 16-bit values (exact).
inline Vec<float> vload(const BFloat16* p) {
#if defined(__AVX2__)
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
#else
  Vec<float> v;
  for (int l = 0; l < static_cast<int>(kVecBytes / sizeof(float)); ++l) v[l] = static_cast<float>(p[l]);
  return v;
#endif
}

inline Vec<float> vload(const Half* p) {
#if defined(__F16C__)
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#else
  Vec<float> v;
  for (int l = 0; l < static_cast<int>(kVecBytes / sizeof(float)); ++l) v[l] = static_cast<float>(p[l]);
  return v;
#endif
}

// Rounds a float vector to 16-bit values at p, to nearest even, as
// PyTorch's Vectorized conversions do: in the AVX2 build a bfloat16 NaN
// becomes 0xffff (its scalar conversion gives 0x7fc0).
#if defined(__AVX2__)
// The 16-bit patterns of v rounded to bfloat16, one in each 32-bit lane.
inline __m256i bfloat16_bits(Vec<float> v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
  const __m256i nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
  return _mm256_blendv_epi8(rounded, _mm256_set1_epi32(0xffff), nan);
}
#endif

inline void vstore(BFloat16* p, Vec<float> v) {
#if defined(__AVX2__)
  const __m256i r = bfloat16_bits(v);
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xd8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
#else
  for (int l = 0; l < static_cast<int>(kVecBytes / sizeof(float)); ++l) p[l] = BFloat16(v[l]);
#endif
}

// Two float vectors rounded to the 16 values at p (as two vstores, packed
// together).
inline void vstore2(BFloat16* p, Vec<float> lo, Vec<float> hi) {
#if defined(__AVX2__)
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(bfloat16_bits(lo), bfloat16_bits(hi)), 0xd8);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), packed);
#else
  vstore(p, lo);
  vstore(p + kVecBytes / sizeof(float), hi);
#endif
}

inline void vstore(Half* p, Vec<float> v) {
#if defined(__F16C__)
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  for (int l = 0; l < static_cast<int>(kVecBytes / sizeof(float)); ++l) p[l] = Half(v[l]);
#endif
}

inline void vstore2(Half* p, Vec<float> lo, Vec<float> hi) {
  vstore(p, lo);
  vstore(p + kVecBytes / sizeof(float), hi);
}

inline Vec<float> vmadd(Vec<float> a, Vec<float> b, Vec<float> c) {
#if defined(__FMA__)
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;
#endif
}

inline Vec<double> vmadd(Vec<double> a, Vec<double> b, Vec<double> c) {
#if defined(__FMA__)
  return _mm256_fmadd_pd(a, b, c);
#else
  return a * b + c;
#endif
}

// PyTorch's parallel_for(0, rows, 1) blocks, which its channels-last norm
// kernels sum into per-thread buffers: of get_num_threads() threads, thread t
// takes rows [t * chunk, min(rows, (t + 1) * chunk)) with chunk = ceil(rows /
// threads); f(t, begin, end) for each thread.
template <typename F>
inline void for_each_thread_block(int64_t rows, const F& f) {
  const int64_t threads = get_num_threads();
  const int64_t chunk = (rows + threads - 1) / threads;
  parallel_for(0, threads, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) f(t, t * chunk, std::min(rows, (t + 1) * chunk));
  });
}

// The first n lanes of v added in lane order.
template <typename T>
inline T fold_in_order(Vec<T> v, int64_t n) {
  T s = v[0];
  for (int64_t l = 1; l < n; ++l) s += v[l];
  return s;
}

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
