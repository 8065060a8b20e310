#pragma once
// SIMD float math for the elementwise kernels, written once on GCC/Clang
// vector extensions and compiled per CPU capability (16, 32 or 64-byte
// vectors). See Note [Vectorised float math].
//
// Note [Vectorised float math]
// exp and log follow the classic Cephes single-precision designs (range
// reduction by ln 2, short minimax polynomials, exponent arithmetic on the
// bits); tanh uses a polynomial near zero and 1 - 2/(exp(2|x|)+1) elsewhere.
// Each is within about 1-2 ulp of the correctly rounded result, the same
// class of accuracy as the SLEEF routines PyTorch calls. erf (used by GELU
// only) is the Abramowitz-Stegun 7.1.26 rational form (absolute error below
// 1.5e-7), which is what a GELU in float32 needs. Special inputs (NaN, +-inf,
// overflow, underflow, subnormals) are handled by selects at the end, so the
// loops have no branches and every lane takes the same path.

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace vecmath {

#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX2__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif

typedef float Vf __attribute__((vector_size(kVecBytes)));
typedef int32_t Vi __attribute__((vector_size(kVecBytes)));
typedef double Vd __attribute__((vector_size(kVecBytes)));
typedef int64_t Vl __attribute__((vector_size(kVecBytes)));
constexpr int kLanesF = kVecBytes / 4;
constexpr int kLanesD = kVecBytes / 8;

inline Vf load(const float* p) {
  Vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vf v) { std::memcpy(p, &v, sizeof v); }
inline Vf splat(float x) { return Vf{} + x; }

// Lane-wise select: mask lanes are all ones (true) or all zeros.
inline Vf select(Vi mask, Vf a, Vf b) { return mask ? a : b; }

inline Vf abs(Vf x) { return (Vf)((Vi)x & 0x7fffffff); }
inline Vf copysign(Vf mag, Vf sign) {
  return (Vf)(((Vi)mag & 0x7fffffff) | ((Vi)sign & int32_t(0x80000000u)));
}
inline Vi isnan(Vf x) { return x != x; }

// Applies a scalar function to each lane (for functions without a vector form).
template <typename F>
inline Vf lanes(Vf x, F f) {
  Vf r;
  for (int i = 0; i < kLanesF; ++i) r[i] = f(x[i]);
  return r;
}

inline Vf sqrt(Vf x) {
#if defined(__AVX512F__)
  return (Vf)_mm512_sqrt_ps((__m512)x);
#elif defined(__AVX2__)
  return (Vf)_mm256_sqrt_ps((__m256)x);
#elif defined(__SSE2__)
  return (Vf)_mm_sqrt_ps((__m128)x);
#else
  return lanes(x, [](float v) { return std::sqrt(v); });
#endif
}

// Round to nearest even; exact for all floats.
inline Vf rint(Vf x) {
  // Adding and removing 1.5 * 2^23 rounds |x| < 2^22 in the current (nearest) mode;
  // larger magnitudes are already integers.
  const Vf magic = splat(12582912.0f);
  Vf r = (x + magic) - magic;
  return select(abs(x) < 4194304.0f, copysign(r, x), x);
}

inline Vf floor(Vf x) {
#if defined(__AVX512F__)
  return (Vf)_mm512_roundscale_ps((__m512)x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
#elif defined(__AVX2__)
  return (Vf)_mm256_floor_ps((__m256)x);
#else
  Vf r = rint(x);
  return select(r > x, r - 1.0f, r);
#endif
}

inline Vf exp(Vf x) {
  const Vf log2e = splat(1.44269504088896341f);
  // ln 2 split so that n * kLn2Hi is exact for the n that occur here.
  const float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  Vf xc = select(x > 89.0f, splat(89.0f), x);
  xc = select(xc < -104.0f, splat(-104.0f), xc);
  Vf n = rint(xc * log2e);
  Vf r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;
  Vf p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  // 2^n as two factors, so that results down into the subnormal range are exact.
  Vi ni = __builtin_convertvector(n, Vi);
  Vi n1 = ni >> 1;
  Vi n2 = ni - n1;
  Vf s1 = (Vf)((n1 + 127) << 23);
  Vf s2 = (Vf)((n2 + 127) << 23);
  Vf res = p * s1 * s2;
  res = select(x > 88.72283935546875f, splat(INFINITY), res);
  res = select(x < -103.97208404541015625f, splat(0.0f), res);
  return select(isnan(x), x, res);
}

inline Vf log(Vf x) {
  // Subnormals: scale into the normal range first.
  Vi tiny = x < 1.17549435e-38f;
  Vf xs = select(tiny, x * 8388608.0f, x);
  Vi bits = (Vi)xs;
  Vi e = ((bits >> 23) & 0xff) - 126;
  e = e - (tiny & 23);
  Vf m = (Vf)((bits & 0x007fffff) | 0x3f000000);  // mantissa in [0.5, 1)
  Vf ef = __builtin_convertvector(e, Vf);
  Vi lo = m < 0.707106781186547524f;
  ef = select(lo, ef - 1.0f, ef);
  m = select(lo, m + m - 1.0f, m - 1.0f);
  Vf z = m * m;
  Vf y = splat(7.0376836292e-2f);
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  y = y + ef * -2.12194440e-4f;
  y = y - 0.5f * z;
  Vf r = m + y;
  r = r + ef * 0.693359375f;
  r = select(x == INFINITY, splat(INFINITY), r);
  r = select(x == 0.0f, splat(-INFINITY), r);
  r = select(x < 0.0f, splat(NAN), r);
  return select(isnan(x), x, r);
}

// Odd: computed for |x| and given the sign of x (so tanh(-0) is -0).
inline Vf tanh(Vf x) {
  Vf ax = abs(x);
  Vf z = ax * ax;
  Vf p = splat(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  Vf small = p * z * ax + ax;
  Vf e = exp(ax + ax);
  Vf large = 1.0f - 2.0f / (e + 1.0f);
  return copysign(select(ax < 0.625f, small, large), x);
}

inline Vf sigmoid(Vf x) { return 1.0f / (1.0f + exp(-x)); }

// Abramowitz and Stegun 7.1.26.
inline Vf erf(Vf x) {
  Vf ax = abs(x);
  Vf t = 1.0f / (0.3275911f * ax + 1.0f);
  Vf p = splat(1.061405429f);
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  Vf y = 1.0f - p * t * exp(-(ax * ax));
  return select(isnan(x), x, copysign(y, x));
}

}  // namespace vecmath
}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
