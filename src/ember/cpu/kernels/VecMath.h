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

// The math functions are forced inline: called out of line, each vector
// pays a call and reloads its constants, and a loop cannot overlap the long
// dependency chains of neighbouring vectors (exp measured 1.4x slower).
#define EMBER_VEC_INLINE inline __attribute__((always_inline))

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

EMBER_VEC_INLINE Vf load(const float* p) {
  Vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vf v) { std::memcpy(p, &v, sizeof v); }
EMBER_VEC_INLINE Vf splat(float x) { return Vf{} + x; }

// a * b + c, fused where the capability has FMA. Written out because
// -std=c++17 (ISO mode) keeps the compiler from contracting a * b + c.
EMBER_VEC_INLINE Vf madd(Vf a, Vf b, Vf c) {
#if defined(__AVX512F__)
  return (Vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__FMA__) && defined(__AVX2__)
  return (Vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
  return a * b + c;
#endif
}
EMBER_VEC_INLINE Vf madd(Vf a, float b, float c) { return madd(a, splat(b), splat(c)); }
EMBER_VEC_INLINE Vf madd(Vf a, float b, Vf c) { return madd(a, splat(b), c); }

// Lane-wise select: mask lanes are all ones (true) or all zeros.
EMBER_VEC_INLINE Vf select(Vi mask, Vf a, Vf b) { return mask ? a : b; }

EMBER_VEC_INLINE Vf abs(Vf x) { return (Vf)((Vi)x & 0x7fffffff); }
EMBER_VEC_INLINE Vf copysign(Vf mag, Vf sign) {
  return (Vf)(((Vi)mag & 0x7fffffff) | ((Vi)sign & int32_t(0x80000000u)));
}
EMBER_VEC_INLINE Vi isnan(Vf x) { return x != x; }

// True if any lane of the mask is set.
inline bool any(Vi mask) {
  uint64_t w[kVecBytes / 8];
  std::memcpy(w, &mask, sizeof mask);
  uint64_t acc = 0;
  for (int i = 0; i < kVecBytes / 8; ++i) acc |= w[i];
  return acc != 0;
}

// Applies a scalar function to each lane (for functions without a vector form).
template <typename F>
EMBER_VEC_INLINE Vf lanes(Vf x, F f) {
  Vf r;
  for (int i = 0; i < kLanesF; ++i) r[i] = f(x[i]);
  return r;
}

EMBER_VEC_INLINE Vf sqrt(Vf x) {
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
EMBER_VEC_INLINE Vf rint(Vf x) {
  // Adding and removing 1.5 * 2^23 rounds |x| < 2^22 in the current (nearest) mode;
  // larger magnitudes are already integers.
  const Vf magic = splat(12582912.0f);
  Vf r = (x + magic) - magic;
  return select(abs(x) < 4194304.0f, copysign(r, x), x);
}

EMBER_VEC_INLINE Vf floor(Vf x) {
#if defined(__AVX512F__)
  return (Vf)_mm512_roundscale_ps((__m512)x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
#elif defined(__AVX2__)
  return (Vf)_mm256_floor_ps((__m256)x);
#else
  Vf r = rint(x);
  return select(r > x, r - 1.0f, r);
#endif
}

EMBER_VEC_INLINE Vf exp(Vf x) {
  const float kLog2e = 1.44269504088896341f;
  // ln 2 split so that n * kLn2Hi is exact for the n that occur here.
  const float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  const float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
#if defined(__AVX512F__)
  // max/min return their second operand for a NaN, so NaN passes through.
  Vf xc = (Vf)_mm512_min_ps((__m512)splat(89.0f), _mm512_max_ps((__m512)splat(-104.0f), (__m512)x));
#else
  Vf xc = select(x > 89.0f, splat(89.0f), x);
  xc = select(xc < -104.0f, splat(-104.0f), xc);
#endif
  Vf n = madd(xc, kLog2e, kMagic) - kMagic;
  Vf r = madd(n, -kLn2Hi, xc);
  r = madd(n, -kLn2Lo, r);
  Vf p = madd(r, 1.9875691500e-4f, 1.3981999507e-3f);
  p = madd(p, r, splat(8.3334519073e-3f));
  p = madd(p, r, splat(4.1665795894e-2f));
  p = madd(p, r, splat(1.6666665459e-1f));
  p = madd(p, r, splat(5.0000001201e-1f));
  p = madd(p, r * r, r) + 1.0f;
#if defined(__AVX512F__)
  // p * 2^n with IEEE rounding into the subnormal range, inf above it.
  return (Vf)_mm512_scalef_ps((__m512)p, (__m512)n);
#else
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
#endif
}

EMBER_VEC_INLINE Vf log(Vf x) {
#if defined(__AVX512F__)
  // Exponent and mantissa in [0.5, 1) straight from the hardware (subnormals included).
  Vf ef = (Vf)_mm512_getexp_ps((__m512)x) + 1.0f;
  // Negative inputs give a NaN mantissa, so the result is NaN without a select.
  Vf m = (Vf)_mm512_getmant_ps((__m512)x, _MM_MANT_NORM_p5_1, _MM_MANT_SIGN_nan);
#else
  // Subnormals: scale into the normal range first.
  Vi tiny = x < 1.17549435e-38f;
  Vf xs = select(tiny, x * 8388608.0f, x);
  Vi bits = (Vi)xs;
  Vi e = ((bits >> 23) & 0xff) - 126;
  e = e - (tiny & 23);
  Vf m = (Vf)((bits & 0x007fffff) | 0x3f000000);  // mantissa in [0.5, 1)
  Vf ef = __builtin_convertvector(e, Vf);
#endif
  Vi lo = m < 0.707106781186547524f;
  ef = select(lo, ef - 1.0f, ef);
  m = select(lo, m + m - 1.0f, m - 1.0f);
  Vf z = m * m;
  Vf y = madd(m, 7.0376836292e-2f, -1.1514610310e-1f);
  y = madd(y, m, splat(1.1676998740e-1f));
  y = madd(y, m, splat(-1.2420140846e-1f));
  y = madd(y, m, splat(1.4249322787e-1f));
  y = madd(y, m, splat(-1.6668057665e-1f));
  y = madd(y, m, splat(2.0000714765e-1f));
  y = madd(y, m, splat(-2.4999993993e-1f));
  y = madd(y, m, splat(3.3333331174e-1f));
  y = y * m * z;
  y = madd(ef, -2.12194440e-4f, y);
  y = madd(z, -0.5f, y);
  Vf r = m + y;
  r = madd(ef, 0.693359375f, r);
#if defined(__AVX512F__)
  // NaN and negative inputs are NaN already (NaN mantissa); zeros and +inf need fixing.
  r = select(x == INFINITY, splat(INFINITY), r);
  return select(x == 0.0f, splat(-INFINITY), r);
#else
  r = select(x == INFINITY, splat(INFINITY), r);
  r = select(x == 0.0f, splat(-INFINITY), r);
  r = select(x < 0.0f, splat(NAN), r);
  return select(isnan(x), x, r);
#endif
}

// Odd: computed for |x| and given the sign of x (so tanh(-0) is -0).
EMBER_VEC_INLINE Vf tanh(Vf x) {
  Vf ax = abs(x);
  Vf z = ax * ax;
  Vf p = madd(z, -5.70498872745e-3f, 2.06390887954e-2f);
  p = madd(p, z, splat(-5.37397155531e-2f));
  p = madd(p, z, splat(1.33314422036e-1f));
  p = madd(p, z, splat(-3.33332819422e-1f));
  Vf small = madd(p * z, ax, ax);
  Vf e = exp(ax + ax);
  Vf large = 1.0f - 2.0f / (e + 1.0f);
  return copysign(select(ax < 0.625f, small, large), x);
}

// ---- double ---------------------------------------------------------------------------

EMBER_VEC_INLINE Vd load(const double* p) {
  Vd v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(double* p, Vd v) { std::memcpy(p, &v, sizeof v); }
EMBER_VEC_INLINE Vd splatd(double x) { return Vd{} + x; }

EMBER_VEC_INLINE Vd madd(Vd a, Vd b, Vd c) {
#if defined(__AVX512F__)
  return (Vd)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c);
#elif defined(__FMA__) && defined(__AVX2__)
  return (Vd)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
#else
  return a * b + c;
#endif
}
EMBER_VEC_INLINE Vd madd(Vd a, double b, double c) { return madd(a, splatd(b), splatd(c)); }
EMBER_VEC_INLINE Vd madd(Vd a, double b, Vd c) { return madd(a, splatd(b), c); }

// exp in double: reduction by ln 2 (two-part constant, exact products),
// degree-13 Taylor polynomial on |r| <= ln2/2 (truncation below 1e-17),
// scaling by 2^n as for float. Within about 1 ulp.
EMBER_VEC_INLINE Vd exp(Vd x) {
  const double kLog2e = 1.4426950408889634074;
  const double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
  const double kMagic = 6755399441055744.0;  // 1.5 * 2^52
#if defined(__AVX512F__)
  Vd xc = (Vd)_mm512_min_pd((__m512d)splatd(710.0), _mm512_max_pd((__m512d)splatd(-746.0), (__m512d)x));
#else
  Vd xc = (x > 710.0) ? splatd(710.0) : x;
  xc = (xc < -746.0) ? splatd(-746.0) : xc;
#endif
  Vd t = madd(xc, kLog2e, kMagic);
  Vd n = t - kMagic;
  Vd r = madd(n, -kLn2Hi, xc);
  r = madd(n, -kLn2Lo, r);
  static constexpr double kInvFact[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                                        1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,     1.0 / 120.0,
                                        1.0 / 24.0,        1.0 / 6.0,        0.5,             1.0,
                                        1.0};
  Vd p = madd(r, 1.0 / 6227020800.0, kInvFact[0]);  // 1/13!, 1/12!
  for (int k = 1; k < 13; ++k) p = madd(p, r, splatd(kInvFact[k]));
#if defined(__AVX512F__)
  return (Vd)_mm512_scalef_pd((__m512d)p, (__m512d)n);
#else
  Vl ni = (Vl)t - (Vl)splatd(kMagic);  // n as an integer, from the bits of t
  Vl n1 = ni >> 1;
  Vl n2 = ni - n1;
  Vd res = p * (Vd)((n1 + 1023) << 52) * (Vd)((n2 + 1023) << 52);
  res = (x > 709.782712893384) ? splatd(INFINITY) : res;
  res = (x < -745.1332191019412) ? splatd(0.0) : res;
  return (x != x) ? x : res;
#endif
}

namespace detail {
// sin (cosine = false) or cos of x: Cephes-style reduction by pi/4 in four
// parts (exact products with FMA) for |x| <= 8192 and minimax polynomials for sin and cos on
// [-pi/4, pi/4]; larger or non-finite inputs take the scalar libm path.
EMBER_VEC_INLINE Vf sin_or_cos(Vf x, bool cosine) {
  // pi/4 = kDP1 + kDP2 + kDP3 + kDP4 to about 2^-76.
  const float kDP1 = 0.78515625f, kDP2 = 2.4187564849853515625e-4f, kDP3 = 0x1.4442d2p-25f, kDP4 = -0x1.ee59dap-51f;
  Vf ax = abs(x);
  Vi big = !(ax <= 8192.0f);  // also true for inf and nan
  Vf axc = select(big, splat(0.0f), ax);
  Vi j = __builtin_convertvector(axc * 1.27323954473516f, Vi);
  j = (j + 1) & ~1;  // even: the nearest multiple of pi/2 below or above
  Vf y = __builtin_convertvector(j, Vf);
  Vf r = madd(y, -kDP1, axc);
  r = madd(y, -kDP2, r);
  r = madd(y, -kDP3, r);
  r = madd(y, -kDP4, r);
  Vf z = r * r;
  Vf ps = madd(z, -1.9515295891e-4f, 8.3321608736e-3f);
  ps = madd(ps, z, splat(-1.6666654611e-1f));
  ps = madd(ps * z, r, r);
  Vf pc = madd(z, 2.443315711809948e-5f, -1.388731625493765e-3f);
  pc = madd(pc, z, splat(4.166664568298827e-2f));
  pc = madd(pc * z, z, madd(z, -0.5f, 1.0f));
  Vi q = (j >> 1) + (cosine ? 1 : 0);
  Vf res = select((q & 1) != 0, pc, ps);
  Vi negate = (q & 2) << 30;  // sign bit where the quadrant flips the sign
  if (!cosine) negate = negate ^ ((Vi)x & int32_t(0x80000000u));
  res = (Vf)((Vi)res ^ negate);
  if (any(big)) {
    for (int i = 0; i < kLanesF; ++i) {
      if (big[i]) res[i] = cosine ? std::cos(x[i]) : std::sin(x[i]);
    }
  }
  return res;
}
}  // namespace detail

EMBER_VEC_INLINE Vf sin(Vf x) { return detail::sin_or_cos(x, false); }
EMBER_VEC_INLINE Vf cos(Vf x) { return detail::sin_or_cos(x, true); }

EMBER_VEC_INLINE Vf sigmoid(Vf x) { return 1.0f / (1.0f + exp(-x)); }

// Abramowitz and Stegun 7.1.26.
EMBER_VEC_INLINE Vf erf(Vf x) {
  Vf ax = abs(x);
  Vf t = 1.0f / madd(ax, 0.3275911f, 1.0f);
  Vf p = madd(t, 1.061405429f, -1.453152027f);
  p = madd(p, t, splat(1.421413741f));
  p = madd(p, t, splat(-0.284496736f));
  p = madd(p, t, splat(0.254829592f));
  // 1 - (exp(-x^2) t) p, rounded in this order (as PyTorch's vectorised erf).
  Vf y = madd(-(exp(-(x * x)) * t), p, splat(1.0f));
  return select(isnan(x), x, copysign(y, x));
}

}  // namespace vecmath
}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
