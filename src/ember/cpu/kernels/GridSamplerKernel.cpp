// Bilinear 2-d grid sampling in the arithmetic of PyTorch's vectorised
// kernel, for the AVX2 and AVX-512 builds (built without contraction: every
// fused multiply-add is spelt out).
//
// Note [Vectorised bilinear grid sampling]
// On AVX2 and AVX-512 CPUs PyTorch samples bilinearly with vectors of points,
// and the compiler fuses its products and sums: a coordinate unnormalises
// as fma(c + 1, size / 2, -0.5) (align_corners: (c + 1) * ((size - 1) / 2)),
// border padding clamps it into [0, size - 1] (NaN to 0), the weights are
// products of e = 1 - (x - floor(x)) and the like, and a value is
// fma(se_v, se, fma(sw_v, sw, fma(ne_v, ne, nw_v * nw))) with 0 for a
// neighbour outside. Its scalar fallback, which the default capability
// gives, is cpu/GridSampler.cpp's.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/core/Error.h"
#include "ember/cpu/NNStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

#if defined(__AVX2__)

constexpr int64_t kBlock = 64;

// The points [p0, p0 + count) of one sample: weights and offsets first,
// then the channels one by one.
template <typename T>
void bilinear_block(const T* in, const T* grid, T* out, const GridSample2dArgs& a, int64_t p0, int64_t count) {
  const T sx = a.align ? static_cast<T>(a.W - 1) / 2 : static_cast<T>(a.W) / 2;
  const T sy = a.align ? static_cast<T>(a.H - 1) / 2 : static_cast<T>(a.H) / 2;
  const T max_x = static_cast<T>(a.W - 1), max_y = static_cast<T>(a.H - 1);
  alignas(64) T w_nw[kBlock], w_ne[kBlock], w_sw[kBlock], w_se[kBlock];
  alignas(64) int32_t o_nw[kBlock], o_ne[kBlock], o_sw[kBlock], o_se[kBlock];
  alignas(64) int32_t m_nw[kBlock], m_ne[kBlock], m_sw[kBlock], m_se[kBlock];  // -1 inside, 0 outside
  auto locate = [&](T c, T scale, T top) {
    T v = a.align ? (c + T(1)) * scale : std::fma(c + T(1), scale, T(-0.5));
    if (a.border) {
      v = v > T(0) ? v : T(0);
      v = v < top ? v : top;
    }
    return v;
  };
  int64_t j = 0;
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512 one = _mm512_set1_ps(1.f), zero = _mm512_setzero_ps();
    const __m512i W = _mm512_set1_epi32(static_cast<int32_t>(a.W)), all = _mm512_set1_epi32(-1);
    auto locate16 = [&](__m512 c, float scale, float top) {
      const __m512 c1 = _mm512_add_ps(c, one);
      __m512 v = a.align ? _mm512_mul_ps(c1, _mm512_set1_ps(scale))
                         : _mm512_fmadd_ps(c1, _mm512_set1_ps(scale), _mm512_set1_ps(-0.5f));
      if (a.border) v = _mm512_min_ps(_mm512_max_ps(v, zero), _mm512_set1_ps(top));  // NaN to 0
      return v;
    };
    // lo <= f < hi, false for NaN
    auto within = [](__m512 f, float lo, float hi) {
      return _mm512_cmp_ps_mask(f, _mm512_set1_ps(lo), _CMP_GE_OQ) &
             _mm512_cmp_ps_mask(f, _mm512_set1_ps(hi), _CMP_LT_OQ);
    };
    for (; j + 16 <= count; j += 16) {
      const float* gp = grid + 2 * (p0 + j);
      const __m512 x = locate16(_mm512_i32gather_ps(evens, gp, 4), sx, max_x);
      const __m512 y = locate16(_mm512_i32gather_ps(evens, gp + 1, 4), sy, max_y);
      const __m512 fx = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
      const __m512 fy = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
      const __m512 w = _mm512_sub_ps(x, fx), e = _mm512_sub_ps(one, w);
      const __m512 n = _mm512_sub_ps(y, fy), s = _mm512_sub_ps(one, n);
      _mm512_store_ps(w_nw + j, _mm512_mul_ps(s, e));
      _mm512_store_ps(w_ne + j, _mm512_mul_ps(s, w));
      _mm512_store_ps(w_sw + j, _mm512_mul_ps(n, e));
      _mm512_store_ps(w_se + j, _mm512_mul_ps(n, w));
      const __mmask16 west = within(fx, 0.f, float(a.W)), east = within(fx, -1.f, max_x);
      const __mmask16 north = within(fy, 0.f, float(a.H)), south = within(fy, -1.f, max_y);
      const __m512i nw = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_cvttps_epi32(fy), W), _mm512_cvttps_epi32(fx));
      const __m512i sw = _mm512_add_epi32(nw, W), unit = _mm512_set1_epi32(1);
      auto put = [&](int32_t* o, int32_t* m, __mmask16 k, __m512i off) {
        _mm512_store_si512(o + j, _mm512_maskz_mov_epi32(k, off));
        _mm512_store_si512(m + j, _mm512_maskz_mov_epi32(k, all));
      };
      put(o_nw, m_nw, north & west, nw);
      put(o_ne, m_ne, north & east, _mm512_add_epi32(nw, unit));
      put(o_sw, m_sw, south & west, sw);
      put(o_se, m_se, south & east, _mm512_add_epi32(sw, unit));
    }
  }
#endif
  for (; j < count; ++j) {
    const T x = locate(grid[2 * (p0 + j)], sx, max_x), y = locate(grid[2 * (p0 + j) + 1], sy, max_y);
    const T fx = std::floor(x), fy = std::floor(y);
    const T w = x - fx, e = T(1) - w, n = y - fy, s = T(1) - n;
    w_nw[j] = s * e;
    w_ne[j] = s * w;
    w_sw[j] = n * e;
    w_se[j] = n * w;
    // in bounds as integers; NaN is outside
    const bool west = fx >= T(0) && fx < static_cast<T>(a.W), east = fx >= T(-1) && fx < max_x;
    const bool north = fy >= T(0) && fy < static_cast<T>(a.H), south = fy >= T(-1) && fy < max_y;
    const int32_t ix = west || east ? static_cast<int32_t>(fx) : 0, iy = north || south ? static_cast<int32_t>(fy) : 0;
    const int32_t W = static_cast<int32_t>(a.W);
    m_nw[j] = -int32_t(north && west);
    m_ne[j] = -int32_t(north && east);
    m_sw[j] = -int32_t(south && west);
    m_se[j] = -int32_t(south && east);
    o_nw[j] = m_nw[j] ? iy * W + ix : 0;
    o_ne[j] = m_ne[j] ? iy * W + ix + 1 : 0;
    o_sw[j] = m_sw[j] ? (iy + 1) * W + ix : 0;
    o_se[j] = m_se[j] ? (iy + 1) * W + ix + 1 : 0;
  }
  const int64_t plane = a.H * a.W;
  for (int64_t c = 0; c < a.C; ++c) {
    const T* src = in + c * plane;
    T* dst = out + c * a.out_stride + p0;
    j = 0;
    if constexpr (std::is_same_v<T, float>) {
#if defined(__AVX512F__)
      for (; j + 16 <= count; j += 16) {
        auto at = [&](const int32_t* o, const int32_t* m) {
          const __mmask16 k = _mm512_cmpneq_epi32_mask(_mm512_load_si512(m + j), _mm512_setzero_si512());
          return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, _mm512_load_si512(o + j), src, 4);
        };
        __m512 v = _mm512_mul_ps(at(o_nw, m_nw), _mm512_load_ps(w_nw + j));
        v = _mm512_fmadd_ps(at(o_ne, m_ne), _mm512_load_ps(w_ne + j), v);
        v = _mm512_fmadd_ps(at(o_sw, m_sw), _mm512_load_ps(w_sw + j), v);
        v = _mm512_fmadd_ps(at(o_se, m_se), _mm512_load_ps(w_se + j), v);
        _mm512_storeu_ps(dst + j, v);
      }
#else
      for (; j + 8 <= count; j += 8) {
        auto at = [&](const int32_t* o, const int32_t* m) {
          const __m256 k = _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(m + j)));
          const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(o + j));
          return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), src, idx, k, 4);
        };
        __m256 v = _mm256_mul_ps(at(o_nw, m_nw), _mm256_load_ps(w_nw + j));
        v = _mm256_fmadd_ps(at(o_ne, m_ne), _mm256_load_ps(w_ne + j), v);
        v = _mm256_fmadd_ps(at(o_sw, m_sw), _mm256_load_ps(w_sw + j), v);
        v = _mm256_fmadd_ps(at(o_se, m_se), _mm256_load_ps(w_se + j), v);
        _mm256_storeu_ps(dst + j, v);
      }
#endif
    }
    for (; j < count; ++j) {
      const T nw = m_nw[j] ? src[o_nw[j]] : T(0), ne = m_ne[j] ? src[o_ne[j]] : T(0);
      const T sw = m_sw[j] ? src[o_sw[j]] : T(0), se = m_se[j] ? src[o_se[j]] : T(0);
      dst[j] = std::fma(se, w_se[j], std::fma(sw, w_sw[j], std::fma(ne, w_ne[j], nw * w_nw[j])));
    }
  }
}

void grid_sample_bilinear_2d_kernel(ScalarType dtype, const void* in, const void* grid, void* out,
                                    const GridSample2dArgs& a) {
  auto run = [&](auto zero) {
    using T = decltype(zero);
    for (int64_t p0 = 0; p0 < a.points; p0 += kBlock) {
      bilinear_block(static_cast<const T*>(in), static_cast<const T*>(grid), static_cast<T*>(out), a, p0,
                     std::min(kBlock, a.points - p0));
    }
  };
  if (dtype == ScalarType::Double) return run(double{});
  EMBER_CHECK(dtype == ScalarType::Float, "grid_sample_bilinear_2d: float or double expected");
  run(float{});
}

#endif

}  // namespace

#if defined(__AVX2__)
EMBER_REGISTER_DISPATCH(grid_sample_bilinear_2d_stub, &grid_sample_bilinear_2d_kernel);
#endif

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
