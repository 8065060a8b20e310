// Random-sampling kernels, compiled once per CPU capability. This file is
// built with -ffp-contract=off: every fused multiply-add below is written out
// (std::fma or an FMA intrinsic) because PyTorch's rounding depends on exactly
// where its compiler fused them. See Note [Random streams].
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define EMBER_RANDOM_AVX2 1
#endif

#include "ember/cpu/RandomStubs.h"
#include "ember/cpu/kernels/Loops.h"

// Note [Random streams]
// Every kernel draws from the generator's MT19937 stream in the order PyTorch
// does, element by element in memory order (PyTorch's TensorIterator sorts the
// dimensions by stride), with PyTorch's transforms:
//  - uniform: float/half/bfloat16 use 24 random bits (x = (r & 0xffffff)*2^-24,
//    computed in float), double 53 bits of a 64-bit draw; the value is
//    fma(x, to - from, from), and a result that rounds to `to` becomes `from`.
//  - normal: contiguous tensors of at least 16 elements use the block
//    Box-Muller fill of Note [Normal fill]; others draw one double sample per
//    element from the pair generator with the cached second value.
//  - exponential: -1/lambda * log1p(-u), u from 53 bits; bernoulli: u < p with
//    u from 53 bits (float p: 24 bits, compared in float).
//  - random_: draw % range + base, with a 64-bit draw for ranges of 2^28 or more.

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

constexpr double kPi = 3.14159265358979323846;

inline float uniform24(GeneratorImpl* g) { return static_cast<float>(g->random() & 0xffffffu) * (1.0f / 16777216.0f); }
inline double uniform53(GeneratorImpl* g) {
  return static_cast<double>(g->random64() & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}

// n uniforms in draw order, as uniform24 / uniform53 one by one, the
// engine's words generated a block at a time.
template <typename T>
void fill_uniforms(T* d, int64_t n, GeneratorImpl* g) {
  constexpr bool kDouble = std::is_same_v<T, double>;
  constexpr int64_t kBlock = 256;
  uint32_t w[(kDouble ? 2 : 1) * kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    g->engine().fill(w, (kDouble ? 2 : 1) * m);
    for (int64_t j = 0; j < m; ++j) {
      if constexpr (kDouble) {
        const uint64_t r = (uint64_t(w[2 * j]) << 32) | w[2 * j + 1];
        d[i0 + j] = static_cast<double>(r & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
      } else {
        d[i0 + j] = static_cast<float>(w[j] & 0xffffffu) * (1.0f / 16777216.0f);
      }
    }
  }
}

// ---- iteration in memory order ------------------------------------------------

// Calls run(p0, s0, p1, s1, n) over runs of elements of t0 (and, if given,
// the same positions of t1, which has t0's shape), in the order of PyTorch's
// TensorIterator: dimensions sorted by t0's strides, smallest innermost.
// Strides are in bytes.
template <typename F>
void for_each_run(const TensorBase& t0, const TensorBase* t1, const F& run) {
  if (t0.numel() == 0) return;
  const int64_t ndim = t0.dim();
  const int64_t e0 = static_cast<int64_t>(t0.element_size());
  const int64_t e1 = t1 ? static_cast<int64_t>(t1->element_size()) : 0;
  char* base0 = static_cast<char*>(t0.data_ptr());
  char* base1 = t1 ? static_cast<char*>(t1->data_ptr()) : nullptr;
  if (t0.is_contiguous() && (!t1 || t1->is_contiguous())) {
    run(base0, e0, base1, e1, t0.numel());
    return;
  }
  struct Dim {
    int64_t size, s0, s1;
  };
  // Innermost first; insertion sort keeps PyTorch's order for equal strides.
  std::vector<Dim> dims;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    if (t0.sizes()[d] == 1) continue;
    dims.push_back({t0.sizes()[d], t0.strides()[d] * e0, t1 ? t1->strides()[d] * e1 : 0});
  }
  for (size_t i = 1; i < dims.size(); ++i) {
    for (size_t j = i; j > 0; --j) {
      const Dim& a = dims[j - 1];
      const Dim& b = dims[j];
      bool swap = a.s0 > b.s0 || (a.s0 == b.s0 && a.size > b.size);
      if (!swap) break;
      std::swap(dims[j - 1], dims[j]);
    }
  }
  // Coalesce a dim into the one inside it when both operands step evenly.
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& in = merged.back();
      if (d.s0 == in.s0 * in.size && d.s1 == in.s1 * in.size) {
        in.size *= d.size;
        continue;
      }
    }
    merged.push_back(d);
  }
  if (merged.empty()) merged.push_back({1, e0, e1});
  const size_t nd = merged.size();
  std::vector<int64_t> counter(nd, 0);
  const Dim inner = merged[0];
  char* p0 = base0;
  char* p1 = base1;
  while (true) {
    run(p0, inner.s0, p1, inner.s1, inner.size);
    size_t d = 1;
    for (; d < nd; ++d) {
      p0 += merged[d].s0;
      p1 += merged[d].s1;
      if (++counter[d] < merged[d].size) break;
      p0 -= merged[d].s0 * merged[d].size;
      p1 -= merged[d].s1 * merged[d].size;
      counter[d] = 0;
    }
    if (d == nd) break;
  }
}

// Fills every element of t with gen() (a callable returning T), in order.
template <typename T, typename Gen>
void fill_serial(const TensorBase& t, Gen gen) {
  for_each_run(t, nullptr, [&](char* p, int64_t s, char*, int64_t, int64_t n) {
    if (s == static_cast<int64_t>(sizeof(T))) {
      T* out = reinterpret_cast<T*>(p);
      for (int64_t i = 0; i < n; ++i) out[i] = gen();
    } else {
      for (int64_t i = 0; i < n; ++i, p += s) *reinterpret_cast<T*>(p) = gen();
    }
  });
}

// As fill_serial with gen() = f(draw), one draw per element (a 32-bit
// random() or, with kDraw64, a random64()). The draws are taken from the
// stream in blocks, which lets the tempering and f vectorise.
template <typename T, bool kDraw64, typename F>
void fill_serial_draws(const TensorBase& t, GeneratorImpl* g, const F& f) {
  constexpr int64_t kBlock = 256;
  constexpr int kWords = kDraw64 ? 2 : 1;
  uint32_t w[kWords * kBlock];
  for_each_run(t, nullptr, [&](char* p, int64_t s, char*, int64_t, int64_t n) {
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const int64_t m = std::min(kBlock, n - i0);
      g->engine().fill(w, kWords * m);
      const auto draw = [&](int64_t j) {
        if constexpr (kDraw64) {
          return (uint64_t(w[2 * j]) << 32) | w[2 * j + 1];
        } else {
          return w[j];
        }
      };
      if (s == static_cast<int64_t>(sizeof(T))) {
        T* out = reinterpret_cast<T*>(p) + i0;
        for (int64_t j = 0; j < m; ++j) out[j] = f(draw(j));
      } else {
        for (int64_t j = 0; j < m; ++j) *reinterpret_cast<T*>(p + (i0 + j) * s) = f(draw(j));
      }
    }
  });
}

// Runs f.template operator()<T>() for the floating dtypes.
template <typename F>
void dispatch_floating(ScalarType t, const char* name, const F& f) {
  switch (t) {
    case ScalarType::Float: return f(float());
    case ScalarType::Double: return f(double());
    case ScalarType::Half: return f(Half());
    case ScalarType::BFloat16: return f(BFloat16());
    default:
      throw NotImplementedError(str_cat("\"", name, "\" not implemented for '",
                                        legacy_type_name(t).substr(0, legacy_type_name(t).size() - 6), "'"));
  }
}

template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---- uniform -------------------------------------------------------------------

void uniform_kernel(const TensorBase& self, double from_, double to_, GeneratorImpl* g) {
  dispatch_floating(self.dtype(), "uniform_kernel_cpu", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const A from = static_cast<A>(from_);
    const A to = static_cast<A>(to_);
    const A range = to - from;
    const T from_t = convert<T>(from);
    const T to_t = convert<T>(to);
    constexpr bool kDouble = std::is_same_v<T, double>;
    fill_serial_draws<T, kDouble>(self, g, [&](auto r) -> T {
      A x;
      if constexpr (kDouble) {
        x = static_cast<double>(r & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
      } else {
        x = static_cast<float>(r & 0xffffffu) * (1.0f / 16777216.0f);
      }
      T v = convert<T>(std::fma(x, range, from));
      if constexpr (kDouble || std::is_same_v<T, float>) {
        return v == to_t ? from_t : v;
      } else {
        return v.x == to_t.x ? from_t : v;  // 16-bit types: compare the bits
      }
    });
  });
}

// ---- normal --------------------------------------------------------------------

// One sample of N(mean, std) from the pair generator (Box-Muller in double,
// the second value of each pair cached on the generator).
inline double normal_sample(GeneratorImpl* g, double mean, double std) {
  if (g->next_double_normal_sample) {
    double cached = *g->next_double_normal_sample;
    g->next_double_normal_sample.reset();
    return std::fma(cached, std, mean);
  }
  const double u1 = uniform53(g);
  const double u2 = uniform53(g);
  const double r = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * kPi * u1;
  g->next_double_normal_sample = r * std::sin(theta);
  return std::fma(r * std::cos(theta), std, mean);
}

// Note [Normal fill]
// PyTorch fills a contiguous tensor of n >= 16 elements in blocks of 16: first
// uniforms, then for j < 8, u1 = 1 - d[j], u2 = d[j + 8]:
//   rho = sqrt(-2 log u1), theta = 2 pi u2,
//   d[j] = rho cos(theta) * std + mean, d[j + 8] = rho sin(theta) * std + mean.
// When n % 16 != 0 the last 16 slots get 16 fresh uniforms and are transformed
// again. float32 on x86 computes log, sin and cos with 8-lane polynomial
// approximations (Cephes coefficients, as in the well-known avx_mathfun), and
// the exact bits depend on each rounding step, so the steps below follow that
// evaluation order, including the multiply-adds the compiler fused in
// PyTorch's build. double uses libm. Half and bfloat16 run each block (fresh
// uniforms, also for full blocks) through the float path in a float buffer.

constexpr float kSqrtHalf = 0.707106781186547524f;
constexpr float kLogP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                            -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                            2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
constexpr float kLogQ1 = -2.12194440e-4f;
constexpr float kLogQ2 = 0.693359375f;
constexpr float kFourOverPi = 1.27323954473516f;
constexpr float kDP1 = -0.78515625f;
constexpr float kDP2 = -2.4187564849853515625e-4f;
constexpr float kDP3 = -3.77489497744594108e-8f;
constexpr float kCos[3] = {2.443315711809948E-005f, -1.388731625493765E-003f, 4.166664568298827E-002f};
constexpr float kSin[3] = {-1.9515295891E-4f, 8.3321608736E-3f, -1.6666654611E-1f};
const float kTwoPiF = static_cast<float>(2.0f * kPi);

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Scalar model of one lane (used without AVX2; identical results).
float log_lane(float x) {
  x = std::max(x, FLT_MIN);
  const int32_t ei = static_cast<int32_t>(bits_of(x) >> 23) - 0x7f;
  x = float_of((bits_of(x) & ~0x7f800000u) | bits_of(0.5f));
  float e = static_cast<float>(ei) + 1.0f;
  const bool small = x < kSqrtHalf;
  const float tmp = small ? x : 0.0f;
  x = x - 1.0f;
  e = e - (small ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  float y = kLogP[0];
  for (int k = 1; k < 9; ++k) y = std::fma(y, x, kLogP[k]);
  y = y * x;
  y = std::fma(y, z, e * kLogQ1);
  y = y - z * 0.5f;
  return std::fma(e, kLogQ2, x + y);
}

void sincos_lane(float xin, float* s, float* c) {
  uint32_t sign_sin = bits_of(xin) & 0x80000000u;
  float x = float_of(bits_of(xin) & 0x7fffffffu);
  float y = x * kFourOverPi;
  int32_t j = static_cast<int32_t>(y);
  j = (j + 1) & ~1;
  y = static_cast<float>(j);
  const uint32_t swap_sin = static_cast<uint32_t>(j & 4) << 29;
  const uint32_t sign_cos = static_cast<uint32_t>(~(j - 2) & 4) << 29;
  const bool sin_poly = (j & 2) == 0;
  sign_sin ^= swap_sin;
  x = std::fma(y, kDP1, x);
  x = std::fma(y, kDP2, x);
  x = std::fma(y, kDP3, x);
  const float z = x * x;
  float yc = kCos[0];
  yc = std::fma(yc, z, kCos[1]);
  yc = std::fma(yc, z, kCos[2]);
  yc = yc * z;
  yc = std::fma(yc, z, -(z * 0.5f));
  yc = yc + 1.0f;
  float ys = kSin[0];
  ys = std::fma(ys, z, kSin[1]);
  ys = std::fma(ys, z, kSin[2]);
  ys = ys * z;
  ys = std::fma(ys, x, x);
  const float sv = (sin_poly ? ys : yc) + 0.0f;
  const float cv = (sin_poly ? yc : ys) + 0.0f;
  *s = float_of(bits_of(sv) ^ sign_sin);
  *c = float_of(bits_of(cv) ^ sign_cos);
}

void normal_block16_scalar(float* d, float mean, float std) {
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - d[j];
    const float u2 = d[j + 8];
    const float radius = std::sqrt(-2.0f * log_lane(u1));
    const float theta = kTwoPiF * u2;
    float s, c;
    sincos_lane(theta, &s, &c);
    d[j] = std::fma(radius * c, std, mean);
    d[j + 8] = std::fma(radius * s, std, mean);
  }
}

#ifdef EMBER_RANDOM_AVX2
inline __m256 log_avx2(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  x = _mm256_max_ps(x, _mm256_set1_ps(FLT_MIN));
  __m256i ei = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
  x = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(~0x7f800000u))));
  x = _mm256_or_ps(x, _mm256_set1_ps(0.5f));
  ei = _mm256_sub_epi32(ei, _mm256_set1_epi32(0x7f));
  __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(ei), one);
  const __m256 small = _mm256_cmp_ps(x, _mm256_set1_ps(kSqrtHalf), _CMP_LT_OS);
  const __m256 tmp = _mm256_and_ps(x, small);
  x = _mm256_sub_ps(x, one);
  e = _mm256_sub_ps(e, _mm256_and_ps(one, small));
  x = _mm256_add_ps(x, tmp);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 y = _mm256_set1_ps(kLogP[0]);
  for (int k = 1; k < 9; ++k) y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(kLogP[k]));
  y = _mm256_mul_ps(y, x);
  y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, _mm256_set1_ps(kLogQ1)));
  y = _mm256_sub_ps(y, _mm256_mul_ps(z, _mm256_set1_ps(0.5f)));
  return _mm256_fmadd_ps(e, _mm256_set1_ps(kLogQ2), _mm256_add_ps(x, y));
}

inline void sincos_avx2(__m256 x, __m256* s, __m256* c) {
  const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
  __m256 sign_sin = _mm256_and_ps(x, sign_mask);
  x = _mm256_andnot_ps(sign_mask, x);
  __m256 y = _mm256_mul_ps(x, _mm256_set1_ps(kFourOverPi));
  __m256i j = _mm256_cvttps_epi32(y);
  j = _mm256_add_epi32(j, _mm256_set1_epi32(1));
  j = _mm256_and_si256(j, _mm256_set1_epi32(~1));
  y = _mm256_cvtepi32_ps(j);
  const __m256i four = _mm256_set1_epi32(4);
  const __m256 swap_sin = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, four), 29));
  const __m256 sign_cos =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_andnot_si256(_mm256_sub_epi32(j, _mm256_set1_epi32(2)), four), 29));
  const __m256 sin_poly =
      _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_setzero_si256()));
  sign_sin = _mm256_xor_ps(sign_sin, swap_sin);
  x = _mm256_fmadd_ps(y, _mm256_set1_ps(kDP1), x);
  x = _mm256_fmadd_ps(y, _mm256_set1_ps(kDP2), x);
  x = _mm256_fmadd_ps(y, _mm256_set1_ps(kDP3), x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 yc = _mm256_set1_ps(kCos[0]);
  yc = _mm256_fmadd_ps(yc, z, _mm256_set1_ps(kCos[1]));
  yc = _mm256_fmadd_ps(yc, z, _mm256_set1_ps(kCos[2]));
  yc = _mm256_mul_ps(yc, z);
  yc = _mm256_fmsub_ps(yc, z, _mm256_mul_ps(z, _mm256_set1_ps(0.5f)));
  yc = _mm256_add_ps(yc, _mm256_set1_ps(1.0f));
  __m256 ys = _mm256_set1_ps(kSin[0]);
  ys = _mm256_fmadd_ps(ys, z, _mm256_set1_ps(kSin[1]));
  ys = _mm256_fmadd_ps(ys, z, _mm256_set1_ps(kSin[2]));
  ys = _mm256_mul_ps(ys, z);
  ys = _mm256_fmadd_ps(ys, x, x);
  const __m256 zero = _mm256_setzero_ps();
  const __m256 sv = _mm256_add_ps(_mm256_blendv_ps(yc, ys, sin_poly), zero);
  const __m256 cv = _mm256_add_ps(_mm256_blendv_ps(ys, yc, sin_poly), zero);
  *s = _mm256_xor_ps(sv, sign_sin);
  *c = _mm256_xor_ps(cv, sign_cos);
}

inline void normal_block16_avx2(float* d, __m256 mean, __m256 std) {
  const __m256 u1 = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_loadu_ps(d));
  const __m256 u2 = _mm256_loadu_ps(d + 8);
  const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), log_avx2(u1)));
  const __m256 theta = _mm256_mul_ps(_mm256_set1_ps(kTwoPiF), u2);
  __m256 s, c;
  sincos_avx2(theta, &s, &c);
  _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, c), std, mean));
  _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, s), std, mean));
}
#endif

// Transforms nblocks consecutive blocks of 16 uniforms in place.
void normal_blocks_float(float* d, int64_t nblocks, float mean, float std) {
#ifdef EMBER_RANDOM_AVX2
  const __m256 m = _mm256_set1_ps(mean);
  const __m256 s = _mm256_set1_ps(std);
  for (int64_t b = 0; b < nblocks; ++b) normal_block16_avx2(d + 16 * b, m, s);
#else
  for (int64_t b = 0; b < nblocks; ++b) normal_block16_scalar(d + 16 * b, mean, std);
#endif
}

void normal_fill_float(float* d, int64_t n, float mean, float std, GeneratorImpl* g) {
  fill_uniforms(d, n, g);
  normal_blocks_float(d, n / 16, mean, std);
  if (n % 16 != 0) {
    float* tail = d + n - 16;
    fill_uniforms(tail, 16, g);
    normal_blocks_float(tail, 1, mean, std);
  }
}

void normal_fill_double(double* d, int64_t n, double mean, double std, GeneratorImpl* g) {
  auto block = [mean, std](double* b) {
    for (int j = 0; j < 8; ++j) {
      const double u1 = 1.0 - b[j];
      const double u2 = b[j + 8];
      const double radius = std::sqrt(-2.0 * std::log(u1));
      const double theta = 2.0 * kPi * u2;
      b[j] = std::fma(radius * std::cos(theta), std, mean);
      b[j + 8] = std::fma(radius * std::sin(theta), std, mean);
    }
  };
  fill_uniforms(d, n, g);
  for (int64_t i = 0; i + 16 <= n; i += 16) block(d + i);
  if (n % 16 != 0) {
    double* tail = d + n - 16;
    fill_uniforms(tail, 16, g);
    block(tail);
  }
}

template <typename T>
void normal_fill_reduced(T* d, int64_t n, float mean, float std, GeneratorImpl* g) {
  constexpr int64_t kChunkBlocks = 64;
  float buf[16 * kChunkBlocks];
  auto run = [&](T* out, int64_t nblocks) {
    fill_uniforms(buf, 16 * nblocks, g);
    normal_blocks_float(buf, nblocks, mean, std);
    for (int64_t i = 0; i < 16 * nblocks; ++i) out[i] = T(buf[i]);
  };
  const int64_t full = n / 16;
  for (int64_t b = 0; b < full; b += kChunkBlocks) run(d + 16 * b, std::min(kChunkBlocks, full - b));
  if (n % 16 != 0) run(d + n - 16, 1);
}

void normal_kernel(const TensorBase& self, double mean, double std, GeneratorImpl* g) {
  const int64_t n = self.numel();
  const bool fill = n >= 16 && self.is_contiguous();
  switch (self.dtype()) {
    case ScalarType::Float:
      if (fill)
        return normal_fill_float(static_cast<float*>(self.data_ptr()), n, static_cast<float>(mean),
                                 static_cast<float>(std), g);
      break;
    case ScalarType::Double:
      if (fill) return normal_fill_double(static_cast<double*>(self.data_ptr()), n, mean, std, g);
      break;
    case ScalarType::Half:
      if (fill)
        return normal_fill_reduced(static_cast<Half*>(self.data_ptr()), n, static_cast<float>(mean),
                                   static_cast<float>(std), g);
      break;
    case ScalarType::BFloat16:
      if (fill)
        return normal_fill_reduced(static_cast<BFloat16*>(self.data_ptr()), n, static_cast<float>(mean),
                                   static_cast<float>(std), g);
      break;
    default: break;
  }
  dispatch_floating(self.dtype(), "normal_kernel_cpu", [&](auto tag) {
    using T = decltype(tag);
    fill_serial<T>(self, [&]() -> T { return convert<T>(normal_sample(g, mean, std)); });
  });
}

// ---- random_ -------------------------------------------------------------------

template <typename F>
void dispatch_random_types(ScalarType t, const char* name, const F& f) {
  switch (t) {
#if EMBER_CPU_BASELINE_BUILD
    case ScalarType::Byte: return f(uint8_t());
    case ScalarType::Char: return f(int8_t());
    case ScalarType::Short: return f(int16_t());
    case ScalarType::Int: return f(int32_t());
    case ScalarType::Long: return f(int64_t());
    case ScalarType::Bool: return f(bool());
#endif
    case ScalarType::Half: return f(Half());
    case ScalarType::Float: return f(float());
    case ScalarType::Double: return f(double());
    case ScalarType::BFloat16: return f(BFloat16());
    default:
      throw NotImplementedError(str_cat("\"", name, "\" not implemented for '",
                                        legacy_type_name(t).substr(0, legacy_type_name(t).size() - 6), "'"));
  }
}

template <typename T>
constexpr int mantissa_digits() {
  if constexpr (std::is_same_v<T, Half>) {
    return 11;
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return 8;
  } else {
    return std::numeric_limits<T>::digits;
  }
}

template <typename T>
inline T from_int64(int64_t v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    return convert<T>(v);
  }
}

void random_from_to_kernel(const TensorBase& self, uint64_t range, int64_t base, GeneratorImpl* g) {
  EMBER_USE_BASELINE_KERNEL_FOR(self.dtype(), random_from_to_stub, self, range, base, g);
  dispatch_random_types(self.dtype(), "random_from_to_kernel_cpu", [&](auto tag) {
    using T = decltype(tag);
    // PyTorch 2.13 takes a 64-bit draw from a range of 2^28 on, for every dtype.
    const bool use64 = range >= (uint64_t(1) << 28);
    fill_serial<T>(self, [&]() -> T {
      const uint64_t v = use64 ? g->random64() : static_cast<uint64_t>(g->random());
      return from_int64<T>(static_cast<int64_t>(v % range + static_cast<uint64_t>(base)));
    });
  });
}

void random_full_range_kernel(const TensorBase& self, GeneratorImpl* g) {
  EMBER_USE_BASELINE_KERNEL_FOR(self.dtype(), random_full_range_stub, self, g);
  const ScalarType t = self.dtype();
  if (t == ScalarType::Bool || t == ScalarType::Half) {
    throw NotImplementedError(str_cat("\"random_full_64_bits_range_kernel_cpu\" not implemented for '",
                                      legacy_type_name(t).substr(0, legacy_type_name(t).size() - 6), "'"));
  }
  EMBER_CHECK(t == ScalarType::Long || t == ScalarType::Double || t == ScalarType::Float || t == ScalarType::BFloat16,
              "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16");
  dispatch_random_types(t, "random_full_64_bits_range_kernel_cpu", [&](auto tag) {
    using T = decltype(tag);
    fill_serial<T>(self, [&]() -> T { return from_int64<T>(static_cast<int64_t>(g->random64())); });
  });
}

void random_kernel(const TensorBase& self, GeneratorImpl* g) {
  EMBER_USE_BASELINE_KERNEL_FOR(self.dtype(), random_stub, self, g);
  dispatch_random_types(self.dtype(), "random_kernel_cpu", [&](auto tag) {
    using T = decltype(tag);
    fill_serial<T>(self, [&]() -> T {
      if constexpr (std::is_same_v<T, bool>) {
        return (g->random() & 1u) != 0;
      } else if constexpr (std::is_same_v<T, int64_t>) {
        return static_cast<int64_t>(g->random64() % (uint64_t(1) << 63));
      } else if constexpr (std::is_integral_v<T>) {
        const uint64_t m = static_cast<uint64_t>(std::numeric_limits<T>::max()) + 1;
        return static_cast<T>(static_cast<uint64_t>(g->random()) % m);
      } else {
        const uint64_t m = (uint64_t(1) << mantissa_digits<T>()) + 1;
        const uint64_t v = std::is_same_v<T, double> ? g->random64() : static_cast<uint64_t>(g->random());
        return convert<T>(static_cast<int64_t>(v % m));
      }
    });
  });
}

// ---- exponential, bernoulli ------------------------------------------------------

void exponential_kernel(const TensorBase& self, double lambda, GeneratorImpl* g) {
  dispatch_floating(self.dtype(), "exponential_cpu", [&](auto tag) {
    using T = decltype(tag);
    const double scale = -1.0 / lambda;
    fill_serial<T>(self, [&]() -> T { return convert<T>(scale * std::log1p(-uniform53(g))); });
  });
}

void bernoulli_scalar_kernel(const TensorBase& self, double p, GeneratorImpl* g) {
  EMBER_USE_BASELINE_KERNEL_FOR(self.dtype(), bernoulli_scalar_stub, self, p, g);
  dispatch_random_types(self.dtype(), "bernoulli_scalar_cpu_", [&](auto tag) {
    using T = decltype(tag);
    const T one = from_int64<T>(1), zero = from_int64<T>(0);
    // u < p for u = k / 2^53 is k < ceil(p 2^53): an integer compare.
    const uint64_t threshold = static_cast<uint64_t>(std::ceil(p * 9007199254740992.0));
    fill_serial_draws<T, true>(self, g, [threshold, one, zero](uint64_t r) -> T {
      return (r & ((uint64_t(1) << 53) - 1)) < threshold ? one : zero;
    });
  });
}

void bernoulli_tensor_kernel(const TensorBase& self, const TensorBase& p, GeneratorImpl* g) {
  EMBER_USE_BASELINE_KERNEL_FOR(self.dtype(), bernoulli_tensor_stub, self, p, g);
  dispatch_random_types(self.dtype(), "bernoulli_tensor_cpu_self_", [&](auto tag) {
    using T = decltype(tag);
    const T one = from_int64<T>(1), zero = from_int64<T>(0);
    dispatch_floating(p.dtype(), "bernoulli_tensor_cpu_p_", [&](auto ptag) {
      using P = decltype(ptag);
      for_each_run(self, &p, [&](char* o, int64_t so, char* q, int64_t sq, int64_t n) {
        for (int64_t i = 0; i < n; ++i, o += so, q += sq) {
          const P pv = *reinterpret_cast<const P*>(q);
          const double pd = static_cast<double>(pv);
          EMBER_CHECK(pd >= 0 && pd <= 1, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
          bool hit;
          if constexpr (std::is_same_v<P, double>) {
            hit = uniform53(g) < pv;
          } else {
            hit = uniform24(g) < static_cast<float>(pv);
          }
          *reinterpret_cast<T*>(o) = hit ? one : zero;
        }
      });
    });
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(uniform_stub, &uniform_kernel);
EMBER_REGISTER_DISPATCH(normal_stub, &normal_kernel);
EMBER_REGISTER_DISPATCH(random_from_to_stub, &random_from_to_kernel);
EMBER_REGISTER_DISPATCH(random_full_range_stub, &random_full_range_kernel);
EMBER_REGISTER_DISPATCH(random_stub, &random_kernel);
EMBER_REGISTER_DISPATCH(exponential_stub, &exponential_kernel);
EMBER_REGISTER_DISPATCH(bernoulli_scalar_stub, &bernoulli_scalar_kernel);
EMBER_REGISTER_DISPATCH(bernoulli_tensor_stub, &bernoulli_tensor_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
