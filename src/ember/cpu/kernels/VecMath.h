#pragma once
// SIMD float math for the elementwise kernels, written once on GCC/Clang
// vector extensions and compiled per CPU capability (16, 32 or 64-byte
// vectors). See Note [Vectorised float math].
//
// Note [Vectorised float math]
// exp follows the classic Cephes single-precision design (range reduction by
// ln 2, a short minimax polynomial, exponent arithmetic on the bits); tanh
// uses a polynomial near zero and 1 - 2/(exp(2|x|)+1) elsewhere. erf (used by
// GELU only) is the Abramowitz-Stegun 7.1.26 rational form (absolute error
// below 1.5e-7), which is what PyTorch's float32 GELU computes; Tensor.erf
// uses erf_accurate.
// The other functions here (log, log1p, expm1, tan, atan, asin, acos,
// erf_accurate, erfc), and those that a kernel file defines for its own use
// from the pieces here (ExpLogKernel.cpp, HyperbolicKernel.cpp; decision
// 0018), use our own minimax polynomials (Remez fits, float coefficients)
// after a range reduction, and keep in two parts (hi + lo) the few
// intermediate values whose rounding would cost more than a fraction of an
// ulp: reduced arguments (tan, expm1, erfc's e^(-x^2) from the exact two-part
// x^2), reciprocals and square roots with their exact residuals (atan, asin,
// acos), sums with pi/2 split exactly (Fast2Sum), products with constants
// that are not floats (mul_const_add in ExpLogKernel.cpp), so each result is
// rounded about once. erf and erfc evaluate per-interval polynomials whose
// coefficients are looked up per lane (permutes). Measured over every float
// against the correctly rounded results, all are within 1.3 ulp (1.41
// without FMA), most within 1 (docs/decisions/0010-vector-math-functions.md,
// tests/cpp/math_test.cpp).
// Special inputs (NaN, +-inf, overflow, underflow, subnormals, -0) come out
// of clamps that NaN passes through, selects at the end, or one AVX-512
// fixupimm, so the loops have no branches and every lane takes the same path
// (tan sends lanes beyond 8192 to libm on a cold path).

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

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
// Unsigned lanes: integer arithmetic on float bits that may wrap.
typedef uint32_t Vui __attribute__((vector_size(kVecBytes)));
typedef uint64_t Vul __attribute__((vector_size(kVecBytes)));
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
// x - 0 (not 0 + x, which is +0 for x = -0): every lane x, signed zeros kept.
EMBER_VEC_INLINE Vf splat(float x) { return x - Vf{}; }

// a * b + c, fused where the capability has FMA. Written out so the fusion
// does not depend on the compiler: GCC contracts plain a * b + c too (its
// default -ffp-contract=fast holds under -std=c++17), so kernels that must
// round a product first are built with -ffp-contract=off (src/ember/CMakeLists.txt).
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
EMBER_VEC_INLINE bool any(Vi mask) {
#if defined(__AVX512F__)
  return _mm512_movepi32_mask((__m512i)mask) != 0;
#elif defined(__AVX2__)
  return _mm256_movemask_ps((__m256)mask) != 0;
#elif defined(__SSE2__)
  return _mm_movemask_ps((__m128)mask) != 0;
#else
  uint64_t w[kVecBytes / 8];
  std::memcpy(w, &mask, sizeof mask);
  uint64_t acc = 0;
  for (int i = 0; i < kVecBytes / 8; ++i) acc |= w[i];
  return acc != 0;
#endif
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
  // Adding and removing 2^23 rounds |x| < 2^23 in the current (nearest) mode;
  // larger magnitudes are already integers. (A signed 1.5 * 2^23 shift only
  // covers |x| < 2^22 and missed the halves between 2^22 and 2^23.)
  const Vf a = abs(x);
  Vf r = (a + 8388608.0f) - 8388608.0f;
  return select(a < 8388608.0f, copysign(r, x), x);
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

// Rounds toward -inf (kMode 0), +inf (1) or zero (2) with the vector
// rounding instructions where the build has them (std::floor and friends
// are not vectorised by GCC).
#if defined(__AVX2__)
template <int kMode>
constexpr int kRoundImm = (kMode == 0   ? _MM_FROUND_TO_NEG_INF
                           : kMode == 1 ? _MM_FROUND_TO_POS_INF
                                        : _MM_FROUND_TO_ZERO) |
                          _MM_FROUND_NO_EXC;
#endif

template <int kMode>
EMBER_VEC_INLINE Vf round_dir(Vf x) {
#if defined(__AVX512F__)
  return (Vf)_mm512_roundscale_ps((__m512)x, kRoundImm<kMode>);
#elif defined(__AVX2__)
  return (Vf)_mm256_round_ps((__m256)x, kRoundImm<kMode>);
#else
  if constexpr (kMode == 0)
    return floor(x);
  else if constexpr (kMode == 1)
    return -floor(-x);
  else
    return copysign(floor(abs(x)), x);
#endif
}

#if defined(__AVX2__)
template <int kMode>
EMBER_VEC_INLINE Vd round_dir(Vd x) {
#if defined(__AVX512F__)
  return (Vd)_mm512_roundscale_pd((__m512d)x, kRoundImm<kMode>);
#else
  return (Vd)_mm256_round_pd((__m256d)x, kRoundImm<kMode>);
#endif
}
#endif

namespace detail {
// p * 2^n for integral n in [-151, 129]: rounds once, into the subnormal
// range or to inf as the exact product would.
EMBER_VEC_INLINE Vf ldexp(Vf p, Vf n) {
#if defined(__AVX512F__)
  return (Vf)_mm512_scalef_ps((__m512)p, (__m512)n);
#else
  Vi ni = __builtin_convertvector(n, Vi);
  Vi n1 = ni >> 1;
  Vi n2 = ni - n1;
  return p * (Vf)((n1 + 127) << 23) * (Vf)((n2 + 127) << 23);
#endif
}

// min(x, hi); NaN passes through (min returns its second operand for a NaN).
EMBER_VEC_INLINE Vf min(Vf x, float hi) {
#if defined(__AVX512F__)
  return (Vf)_mm512_min_ps((__m512)splat(hi), (__m512)x);
#elif defined(__AVX2__)
  return (Vf)_mm256_min_ps((__m256)splat(hi), (__m256)x);
#elif defined(__SSE2__)
  return (Vf)_mm_min_ps((__m128)splat(hi), (__m128)x);
#else
  return select(x > hi, splat(hi), x);
#endif
}

// x clamped to [lo, hi]; NaN passes through (max/min return their second
// operand for a NaN).
EMBER_VEC_INLINE Vf clamp(Vf x, float lo, float hi) {
#if defined(__AVX512F__)
  return (Vf)_mm512_min_ps((__m512)splat(hi), _mm512_max_ps((__m512)splat(lo), (__m512)x));
#elif defined(__AVX2__)
  return (Vf)_mm256_min_ps((__m256)splat(hi), _mm256_max_ps((__m256)splat(lo), (__m256)x));
#elif defined(__SSE2__)
  return (Vf)_mm_min_ps((__m128)splat(hi), _mm_max_ps((__m128)splat(lo), (__m128)x));
#else
  Vf r = select(x > hi, splat(hi), x);
  return select(r < lo, splat(lo), r);
#endif
}

}  // namespace detail

EMBER_VEC_INLINE Vf exp(Vf x) {
  const float kLog2e = 1.44269504088896341f;
  // ln 2 split so that n * kLn2Hi is exact for the n that occur here.
  const float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  const float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  // Past the clamps the result overflows to inf or rounds to 0 by itself, and
  // NaN passes through every step: no selects at the end.
  Vf xc = detail::clamp(x, -104.0f, 89.0f);
  Vf n = madd(xc, kLog2e, kMagic) - kMagic;
  Vf r = madd(n, -kLn2Hi, xc);
  r = madd(n, -kLn2Lo, r);
  Vf p = madd(r, 1.9875691500e-4f, 1.3981999507e-3f);
  p = madd(p, r, splat(8.3334519073e-3f));
  p = madd(p, r, splat(4.1665795894e-2f));
  p = madd(p, r, splat(1.6666665459e-1f));
  p = madd(p, r, splat(5.0000001201e-1f));
  p = madd(p, r * r, r) + 1.0f;
  return detail::ldexp(p, n);
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
EMBER_VEC_INLINE Vd splatd(double x) { return x - Vd{}; }

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

// c0 + x (c1 + x (c2 + ...)) by Horner's rule.
EMBER_VEC_INLINE Vd poly_d(Vd, double c) { return splatd(c); }
template <typename... Rest>
EMBER_VEC_INLINE Vd poly_d(Vd x, double c, Rest... rest) {
  return madd(poly_d(x, rest...), x, splatd(c));
}

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
  // sum r^j / j! for j <= 13: the terms from r^5 on (scaled by r^5, so their
  // rounding does not reach the result) by Estrin's scheme, a short
  // dependency chain; the last five by Horner's, for accuracy.
  const Vd r2 = r * r, r4 = r2 * r2;
  const Vd e0 = madd(r, 1.0 / 720.0, 1.0 / 120.0), e1 = madd(r, 1.0 / 40320.0, 1.0 / 5040.0);
  const Vd e2 = madd(r, 1.0 / 3628800.0, 1.0 / 362880.0), e3 = madd(r, 1.0 / 479001600.0, 1.0 / 39916800.0);
  const Vd high = madd(r4 * r4, splatd(1.0 / 6227020800.0), madd(madd(e3, r2, e2), r4, madd(e1, r2, e0)));
  Vd p = madd(high, r, splatd(1.0 / 24.0));
  p = madd(p, r, splatd(1.0 / 6.0));
  p = madd(p, r, splatd(0.5));
  p = madd(p, r, splatd(1.0));
  p = madd(p, r, splatd(1.0));
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

// ---- more float functions (Note [Vectorised float math]) ----------------------------------

namespace detail {

#if defined(__AVX512F__) || (defined(__FMA__) && defined(__AVX2__))
#define EMBER_VEC_HAS_FMA 1
#else
#define EMBER_VEC_HAS_FMA 0
#endif

// a * b - p exactly, for p = RN(a * b) (Veltkamp/Dekker without FMA).
EMBER_VEC_INLINE Vf mul_err(Vf a, Vf b, Vf p) {
#if EMBER_VEC_HAS_FMA
  return madd(a, b, -p);
#else
  const float kSplit = 4097.0f;  // 2^12 + 1
  Vf ta = a * kSplit, tb = b * kSplit;
  Vf ah = ta - (ta - a), bh = tb - (tb - b);
  Vf al = a - ah, bl = b - bh;
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
}

// c - a * b exactly where that is representable (division and square-root residuals).
EMBER_VEC_INLINE Vf residual(Vf a, Vf b, Vf c) {
#if EMBER_VEC_HAS_FMA
  return madd(-a, b, c);
#else
  Vf p = a * b;
  return (c - p) - mul_err(a, b, p);
#endif
}

// About 12 bits of 1/x (enough for correction terms).
EMBER_VEC_INLINE Vf rcp_approx(Vf x) {
#if defined(__AVX512F__)
  return (Vf)_mm512_rcp14_ps((__m512)x);
#elif defined(__AVX2__)
  return (Vf)_mm256_rcp_ps((__m256)x);
#elif defined(__SSE2__)
  return (Vf)_mm_rcp_ps((__m128)x);
#else
  return 1.0f / x;
#endif
}

// hi + v + lo with hi the larger in magnitude (or zero): hi + v is split exactly
// (Fast2Sum) and lo added to its tail, so the result is rounded once.
EMBER_VEC_INLINE Vf sum3(Vf hi, Vf v, Vf lo) {
  Vf h = hi + v;
  Vf l = (hi - h) + v;
  return h + (l + lo);
}

// Round to an integer (nearest even) for |x| < 2^22.
EMBER_VEC_INLINE Vf round_small(Vf x) {
  const float kMagic = 12582912.0f;  // 1.5 * 2^23
  return (x + kMagic) - kMagic;
}

// x * c rounded to an integer, for |x * c| < 2^22.
EMBER_VEC_INLINE Vf round_mul(Vf x, float c) {
  const float kMagic = 12582912.0f;
  return madd(x, c, kMagic) - kMagic;
}

// e^r - 1 for r = rh + rl, |r| <= ln2/2 + small, as the unevaluated sum
// hi + lo (returns hi): rh + (rl + r^2 P(r)).
EMBER_VEC_INLINE Vf expm1_reduced(Vf rh, Vf rl, Vf& lo) {
  Vf r = rh + rl;
  Vf p = madd(r, 0x1.a26890p-13f, 0x1.6d26d0p-10f);
  p = madd(p, r, splat(0x1.110ff2p-7f));
  p = madd(p, r, splat(0x1.555508p-5f));
  p = madd(p, r, splat(0x1.555556p-3f));
  p = madd(p, r, splat(0.5f));
  Vf t = madd(p, r * r, rl);
  Vf hi = rh + t;
  lo = (rh - hi) + t;
  return hi;
}

// x = 2^e * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), for finite x > 0
// (subnormal x too when kSubnormal). Returns f (exact) and sets e.
template <bool kSubnormal>
EMBER_VEC_INLINE Vf log_reduce(Vf x, Vf& e) {
#if defined(__AVX512F__)
  if (kSubnormal) {
    // Mantissa in [1, 2) and exponent from the hardware (subnormals included).
    Vf m = (Vf)_mm512_getmant_ps((__m512)x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);
    Vf ex = (Vf)_mm512_getexp_ps((__m512)x);
    Vi big = m > 1.41421356f;
    e = select(big, ex + 1.0f, ex);
    return select(big, m * 0.5f, m) - 1.0f;
  }
#endif
  Vi bits = (Vi)x;
  Vi eadj = Vi{};
  if (kSubnormal) {
    Vi tiny = x < 1.17549435e-38f;
    bits = (Vi)select(tiny, x * 8388608.0f, x);
    eadj = tiny & 23;
  }
  // Offsetting by the bits of sqrt(1/2) moves the exponent boundary there.
  Vi ix = (Vi)((Vui)bits - 0x3f3504f3u);
  e = __builtin_convertvector((ix >> 23) - eadj, Vf);
  Vf m = (Vf)((ix & 0x007fffff) + 0x3f3504f3);
  return m - 1.0f;
}

// log(1 + f) - f for f in [sqrt(1/2) - 1, sqrt(2) - 1], as -f^2/2 + f^3 P(f)
// with a minimax P (relative error of log(1 + f) about 2^-28).
EMBER_VEC_INLINE Vf log1p_tail(Vf f) {
  Vf z = f * f;
  Vf p = madd(f, -0x1.390aacp-4f, 0x1.055194p-3f);
  p = madd(p, f, splat(-0x1.0d6ec4p-3f));
  p = madd(p, f, splat(0x1.22da38p-3f));
  p = madd(p, f, splat(-0x1.5474e2p-3f));
  p = madd(p, f, splat(0x1.99a01cp-3f));
  p = madd(p, f, splat(-0x1.00021cp-2f));
  p = madd(p, f, splat(0x1.555554p-2f));
  return madd(p * f, z, z * -0.5f);
}

}  // namespace detail

// e^x - 1 = 2^n (e^r - 1) + (2^n - 1) with n = trunc(x / ln 2), so r has the
// sign of x and the two terms never cancel. With s = 2^(n-1) it is evaluated
// as 2 (s e + (s - 1/2)), where s - 1/2 is exact (n <= 24); for n >= 25 the -1
// is folded into the small term instead: 2 (s (e - 2^-n) + s). The factor 2
// lets n reach 128. Tiny x (zeros, subnormals) return x.
EMBER_VEC_INLINE Vf expm1(Vf x) {
  const float kLog2e = 1.44269504088896341f;
  // ln 2 = kLn2Hi + kLn2Lo; n * kLn2Hi is exact.
  const float kLn2Hi = 0x1.62e4p-1f, kLn2Lo = 0x1.7f7d1cp-20f;
  Vf xc = detail::clamp(x, -30.0f, 89.0f);
  Vi ni = __builtin_convertvector(xc * kLog2e, Vi);  // truncates
  Vf n = __builtin_convertvector(ni, Vf);
  Vf rhi = madd(n, -kLn2Hi, xc);  // exact
  Vf rlo = n * -kLn2Lo;
  Vf r = rhi + rlo;
  // e^r - 1 = r + r^2 P(r), |r| < ln 2, summed as rhi + (rlo + r^2 P(r)).
  Vf p = madd(r, 0x1.a0e6dcp-16f, 0x1.a55ab6p-13f);
  p = madd(p, r, splat(0x1.6c1c50p-10f));
  p = madd(p, r, splat(0x1.110b6ap-7f));
  p = madd(p, r, splat(0x1.55554ap-5f));
  p = madd(p, r, splat(0x1.55555cp-3f));
  p = madd(p, r, splat(0.5f));
  Vf em = rhi + madd(p, madd(rhi, rhi, (rhi + r) * rlo), rlo);
  // In unsigned lanes: a NaN lane has ni = INT_MIN (its result is NaN anyway).
  Vf s = (Vf)(((Vui)ni + 126u) << 23);
  Vi k = (Vi)(127u - (Vui)ni);
  Vi big = (ni > 24) & (k > 0);
  Vf inv = (Vf)(big & (Vi)((Vui)k << 23));  // 2^-n where n >= 25, else 0
  Vf half = (Vf)((ni <= 24) & (Vi)splat(0.5f));
  Vf res = madd(em - inv, s, s - half) * 2.0f;
  return select(abs(x) < 0x1p-25f, x, res);
}

namespace detail {
// The results of the log functions at the special values of their argument
// u: -inf at 0, NaN below 0 (and at -inf), +inf at +inf, NaN for NaN; other
// lanes keep r.
EMBER_VEC_INLINE Vf log_fixup(Vf r, Vf u) {
#if defined(__AVX512F__)
  // One fixupimm: per class of u (QNaN, SNaN, 0, +1, -inf, +inf, <0, >0) the
  // nibbles pick u, QNaN(u), -inf, r, NaN, +inf, NaN, r.
  return (Vf)_mm512_fixupimm_ps((__m512)r, (__m512)u, _mm512_set1_epi32(0x03530421), 0);
#else
  r = select(u == INFINITY, splat(INFINITY), r);
  r = select(u == 0.0f, splat(-INFINITY), r);
  r = select(u < 0.0f, splat(NAN), r);
  return select(isnan(u), u, r);
#endif
}
}  // namespace detail

// log(x) = e ln 2 + log(1 + f). With FMA, e times the float ln 2 (off by
// 2^-26 relative) costs at most about 0.07 ulp, |log(1 + f)| being at most half
// the result for e != 0; without, ln 2 is split so that e * kLn2Hi is exact.
EMBER_VEC_INLINE Vf log(Vf x) {
  Vf e;
  Vf f = detail::log_reduce<true>(x, e);
#if EMBER_VEC_HAS_FMA
  Vf r = madd(e, 0.693147180559945309f, f + detail::log1p_tail(f));
#else
  const float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  Vf r = madd(e, kLn2Hi, f + madd(e, kLn2Lo, detail::log1p_tail(f)));
#endif
  return detail::log_fixup(r, x);
}

namespace detail {
// log(1 + x + c) for x > -1 and a small correction c (|c| below an ulp of x),
// without the special inputs (callers select those). With u = RN(1 + x) =
// 2^e (1 + f): e = 0 takes f = x itself (so f + c is the argument exactly);
// otherwise the rounding error of 1 + x (exact below 2^24) joins c, and
// (c')/u, whose relative accuracy hardly matters, uses an approximate 1/u.
EMBER_VEC_INLINE Vf log1p_core(Vf x, Vf c, Vf& u) {
  const float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  u = x + 1.0f;
  Vf e;
  Vf f = log_reduce<false>(u, e);
  Vi e0 = e == 0.0f;
  f = select(e0, x, f);
  Vf corr = select(e0, c, (x - (u - 1.0f)) + c) * rcp_approx(u);
  Vf t = log1p_tail(f);
  Vf r = f + madd(e, kLn2Lo, t + corr);
  return madd(e, kLn2Hi, r);
}
}  // namespace detail

EMBER_VEC_INLINE Vf log1p(Vf x) {
  Vf u;
  Vf r = detail::log1p_core(x, Vf{}, u);
  return select(x == 0.0f, x, detail::log_fixup(r, u));  // -0 as well
}

// atan: |x| > 1 uses atan(x) = pi/2 - atan(1/x), with 1/x carried as t + tlo;
// atan(t) = t + t^3 P(t^2) on [0, 1].
EMBER_VEC_INLINE Vf atan(Vf x) {
  const float kPio2Hi = 0x1.921fb6p+0f, kPio2Lo = -0x1.777a5cp-25f;
  Vf a = abs(x);
  Vi big = a > 1.0f;
  Vf ac = detail::min(a, 0x1p64f);  // keeps the residual finite
  Vf inv = 1.0f / ac;
  Vf t = select(big, inv, a);
  Vf tlo = select(big, detail::residual(inv, ac, splat(1.0f)) * inv, Vf{});
  Vf z = t * t;
  Vf p = madd(z, -0x1.d32dacp-10f, 0x1.6410e4p-7f);
  p = madd(p, z, splat(-0x1.fd6fbcp-6f));
  p = madd(p, z, splat(0x1.da24cap-5f));
  p = madd(p, z, splat(-0x1.580814p-4f));
  p = madd(p, z, splat(0x1.c08c1ap-4f));
  p = madd(p, z, splat(-0x1.242084p-3f));
  p = madd(p, z, splat(0x1.9991e4p-3f));
  p = madd(p, z, splat(-0x1.55553ep-2f));
  Vf w = madd(t * z, p, tlo);
  // big: pi/2 - (t + w), with pi/2 - t split exactly (Fast2Sum); else t + w.
  Vf h = kPio2Hi - t;
  Vf l = (kPio2Hi - h) - t;
  Vf r = select(big, h + (l + (kPio2Lo - w)), t + w);
  return copysign(r, x);
}

namespace detail {
// asin(a) = s + w for a = |x| in [0, 1] (big: a > 1/2), s the leading term:
// a <= 1/2: s = a, w = a z P(z) with z = a^2;
// a > 1/2: asin(a) = pi/2 - 2 asin(sqrt(z)), z = (1 - a)/2 (exact), and s + w is
// asin(sqrt(z)) with s = RN(sqrt(z)) and w including sqrt(z) - s.
EMBER_VEC_INLINE Vf asin_parts(Vf a, Vi big, Vf& w) {
  Vf z = select(big, madd(a, -0.5f, 0.5f), a * a);  // NaN above 1 via sqrt
  Vf sq = sqrt(z);
  Vf s = select(big, sq, a);
  Vf slo = (Vf)(big & (Vi)(residual(sq, sq, z) * (0.5f * rcp_approx(sq + 0x1p-100f))));
  Vf p = madd(z, 0x1.595c8cp-5f, 0x1.8c3e2ap-6f);
  p = madd(p, z, splat(0x1.747bbap-5f));
  p = madd(p, z, splat(0x1.330204p-4f));
  p = madd(p, z, splat(0x1.5555c8p-3f));
  w = madd(s * z, p, slo);
  return s;
}
}  // namespace detail

EMBER_VEC_INLINE Vf asin(Vf x) {
  const float kPio2Hi = 0x1.921fb6p+0f, kPio2Lo = -0x1.777a5cp-25f;
  Vf a = abs(x);
  Vi big = a > 0.5f;
  Vf w;
  Vf s = detail::asin_parts(a, big, w);
  Vf lo = s + w;
  Vf hi = detail::sum3(splat(kPio2Hi), -(s + s), madd(w, -2.0f, kPio2Lo));
  return copysign(select(big, hi, lo), x);
}

// acos: pi/2 - asin(x) for |x| <= 1/2; 2 asin(sqrt((1 - x)/2)) for x > 1/2 and
// pi - 2 asin(sqrt((1 + x)/2)) for x < -1/2.
EMBER_VEC_INLINE Vf acos(Vf x) {
  const float kPio2Hi = 0x1.921fb6p+0f, kPio2Lo = -0x1.777a5cp-25f;
  const float kPiHi = 0x1.921fb6p+1f, kPiLo = -0x1.777a5cp-24f;
  Vf a = abs(x);
  Vi big = a > 0.5f;
  Vi neg = x < 0.0f;
  Vf w;
  Vf s = detail::asin_parts(a, big, w);
  // r = c + m (s + w) + clo, with m = -sign(x) (|x| <= 1/2) or 2 / -2 (big).
  Vf c = select(big, (Vf)(neg & (Vi)splat(kPiHi)), splat(kPio2Hi));
  Vf clo = select(big, (Vf)(neg & (Vi)splat(kPiLo)), splat(kPio2Lo));
  Vf m = select(big, splat(2.0f), splat(-1.0f));
  m = select(neg, -m, m);
  return detail::sum3(c, m * s, madd(m, w, clo));
}

namespace detail {
// Lanes of x beyond the vector reduction's range (and inf, NaN) through libm.
__attribute__((noinline, cold)) inline Vf tan_big_lanes(Vf x, Vf res, Vi big) {
  for (int i = 0; i < kLanesF; ++i) {
    if (big[i]) res[i] = static_cast<float>(std::tan(static_cast<double>(x[i])));
  }
  return res;
}
}  // namespace detail

// tan: reduction by pi/2 (three-part constant; the last product's error and
// the subtraction's rounding are carried in a second part), tan(r) = r + r^3
// P(r^2) on [-pi/4, pi/4]; odd quadrants give -1/tan(r), the reciprocal
// corrected by one Newton step on the two-part tan(r). |x| > 8192 and
// non-finite lanes call libm.
EMBER_VEC_INLINE Vf tan(Vf x) {
  const float kC1 = 0x1.92p+0f, kC2 = 0x1.fb4p-12f, kC3 = 0x1.4442d2p-24f, kC4 = -0x1.ee59dap-50f;
  const float kMagic = 12582912.0f;
  Vi big = !(abs(x) <= 8192.0f);  // also true for inf and nan; their lanes' values are replaced
  Vf k = madd(x, 0x1.45f306p-1f, kMagic);  // x * 2/pi rounded, in the low bits
  Vf n = k - kMagic;
  Vf r2 = madd(n, -kC1, x);  // exact
  r2 = madd(n, -kC2, r2);  // exact
  Vf ch = n * kC3;
  Vf cl = madd(n, kC4, detail::mul_err(n, splat(kC3), ch));
  // r = rhi - nlo: rhi = r2 - ch, nlo = (rhi - r2) + ch + cl its error plus the
  // tail (Fast2Sum; exact unless |r| < 2 |ch|, where tests show no loss). The
  // negated form keeps tan(-0) = -0 through the sums below.
  Vf rhi = r2 - ch;
  Vf nlo = ((rhi - r2) + ch) + cl;
  Vf z = rhi * rhi;
  Vf p = madd(z, 0x1.1e8f6ap-8f, 0x1.9d0d86p-14f);
  p = madd(p, z, splat(0x1.62c9f4p-7f));
  p = madd(p, z, splat(0x1.5cc0fep-6f));
  p = madd(p, z, splat(0x1.bad9c0p-5f));
  p = madd(p, z, splat(0x1.110d9ep-3f));
  p = madd(p, z, splat(0x1.555560p-2f));
  Vf w = madd(rhi * z, p, -madd(nlo, z, nlo));
  Vf thi = rhi + w;
  Vf tlo = (rhi - thi) + w;
  // -1/(thi + tlo) = nq (1 + e), nq = -1/thi, e = 1 + nq thi + nq tlo.
  Vf nq = -1.0f / thi;
  Vf e = madd(nq, tlo, detail::residual(-nq, thi, splat(1.0f)));
  Vf res = select((Vi)k << 31, madd(nq, e, nq), thi);  // odd quadrant
  if (__builtin_expect(any(big), 0)) res = detail::tan_big_lanes(x, res, big);
  return res;
}

namespace detail {

// The two halves of x as double vectors, and back (rounding to nearest).
EMBER_VEC_INLINE void widen(Vf x, Vd& lo, Vd& hi) {
#if defined(__AVX512F__)
  lo = (Vd)_mm512_cvtps_pd(_mm512_castps512_ps256((__m512)x));
  hi = (Vd)_mm512_cvtps_pd(_mm512_extractf32x8_ps((__m512)x, 1));
#elif defined(__AVX2__)
  lo = (Vd)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)x));
  hi = (Vd)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)x, 1));
#elif defined(__SSE2__)
  lo = (Vd)_mm_cvtps_pd((__m128)x);
  hi = (Vd)_mm_cvtps_pd(_mm_movehl_ps((__m128)x, (__m128)x));
#else
  for (int j = 0; j < kLanesD; ++j) {
    lo[j] = x[j];
    hi[j] = x[j + kLanesD];
  }
#endif
}

EMBER_VEC_INLINE Vf narrow(Vd lo, Vd hi) {
#if defined(__AVX512F__)
  return (Vf)_mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps((__m512d)lo)), _mm512_cvtpd_ps((__m512d)hi), 1);
#elif defined(__AVX2__)
  return (Vf)_mm256_set_m128(_mm256_cvtpd_ps((__m256d)hi), _mm256_cvtpd_ps((__m256d)lo));
#elif defined(__SSE2__)
  return (Vf)_mm_movelh_ps(_mm_cvtpd_ps((__m128d)lo), _mm_cvtpd_ps((__m128d)hi));
#else
  Vf r;
  for (int j = 0; j < kLanesD; ++j) {
    r[j] = static_cast<float>(lo[j]);
    r[j + kLanesD] = static_cast<float>(hi[j]);
  }
  return r;
#endif
}

EMBER_VEC_INLINE Vd sqrt_d(Vd x) {
#if defined(__AVX512F__)
  return (Vd)_mm512_sqrt_pd((__m512d)x);
#elif defined(__AVX2__)
  return (Vd)_mm256_sqrt_pd((__m256d)x);
#elif defined(__SSE2__)
  return (Vd)_mm_sqrt_pd((__m128d)x);
#else
  for (int j = 0; j < kLanesD; ++j) x[j] = std::sqrt(x[j]);
  return x;
#endif
}

// The reduction of the double logs: u = 2^e m with m in [sqrt(1/2), sqrt(2)),
// f = m - 1 (exact) and e as a double; u finite, > 0, with a normal exponent.
EMBER_VEC_INLINE Vd log_reduce(Vd u, Vd& e) {
  const int64_t kSqrtHalf = 0x3fe6a09e667f3bcdLL;
  const Vl bits = (Vl)((Vul)u - (uint64_t)kSqrtHalf);  // unsigned lanes: u may be negative
  e = (Vd)((bits >> 52) + 0x4338000000000000LL) - 6755399441055744.0;  // via 1.5 * 2^52
  return (Vd)((bits & 0x000fffffffffffffLL) + kSqrtHalf) - 1.0;
}

// log(u) for finite u >= 1 in double, relative error about 2^-30 (for float
// results): log(1 + f) = f - f^2/2 + f^3 P(f) after log_reduce.
EMBER_VEC_INLINE Vd log_d(Vd u) {
  Vd ed;
  const Vd f = log_reduce(u, ed);
  const Vd p =
      poly_d(f, 0.33333313592753744, -0.2500000866996725, 0.20002063510195903, -0.16668002461798767,
             0.14220522776541186, -0.12406063965980312, 0.11882209931126238, -0.116706553927175, 0.06752880282465627);
  const Vd z = f * f;
  const Vd r = f + madd(p * f, z, z * -0.5);
  return madd(ed, 0.69314718055994530942, r);
}

}  // namespace detail

namespace detail {

#if defined(__AVX512F__)
// row[idx] per lane for a 32-entry row (idx in [0, 31]).
EMBER_VEC_INLINE Vf lookup32(const float* row, Vi idx) {
  return (Vf)_mm512_permutex2var_ps(_mm512_load_ps(row), (__m512i)idx, _mm512_load_ps(row + 16));
}
#endif

// row[idx] per lane for a 16-entry row (idx in [0, 15]).
EMBER_VEC_INLINE Vf lookup16(const float* row, Vi idx) {
#if defined(__AVX512F__)
  return (Vf)_mm512_permutexvar_ps((__m512i)idx, _mm512_load_ps(row));
#elif defined(__AVX2__)
  Vf lo = (Vf)_mm256_permutevar8x32_ps(_mm256_load_ps(row), (__m256i)idx);
  Vf hi = (Vf)_mm256_permutevar8x32_ps(_mm256_load_ps(row + 8), (__m256i)idx);
  return select(idx > 7, hi, lo);
#else
  Vf r;
  for (int i = 0; i < kLanesF; ++i) r[i] = row[idx[i] & 15];
  return r;
#endif
}

// Horner's rule down the rows kHi..kLo of a table: row(kHi) v^(kHi-kLo) +
// ... + row(kLo), row(r) being row r looked up per lane.
template <int kLo, int kHi, typename Row, int... I>
EMBER_VEC_INLINE Vf table_poly_rows(Vf v, const Row& row, std::integer_sequence<int, I...>) {
  Vf p = madd(v, row(kHi), row(kHi - 1));
  ((p = madd(p, v, row(kHi - 2 - I))), ...);
  return p;
}
template <int kLo, int kHi, typename Row>
EMBER_VEC_INLINE Vf table_poly(Vf v, const Row& row) {
  return table_poly_rows<kLo, kHi>(v, row, std::make_integer_sequence<int, kHi - kLo - 1>{});
}

// Piecewise minimax polynomials (Note [Vectorised float math]), one column per
// interval: rows center, hi, lo, c1, c2, ...; on the interval f(center + v) =
// hi + lo + v (c1 + v (c2 + ...)). Fit errors below 0.06 of 2^-24 relative.
// erf on [k/4, (k+1)/4), k < 16 (columns 0 and 1 are unused: below 1/2 erf
// has its own odd polynomial).
alignas(64) constexpr float kErfTable[9][16] = {
    {0.0f, 0x1.8p-2f, 0x1.4p-1f, 0x1.cp-1f, 0x1.2p+0f, 0x1.6p+0f, 0x1.ap+0f, 0x1.ep+0f, 0x1.1p+1f, 0x1.3p+1f, 0x1.5p+1f,
     0x1.7p+1f, 0x1.9p+1f, 0x1.bp+1f, 0x1.dp+1f, 0x1.fp+1f},  // center
    {0.0f, 0x1.9dd0d2p-2f, 0x1.3f196ep-1f, 0x1.91724ap-1f, 0x1.c6dad2p-1f, 0x1.e5768cp-1f, 0x1.f4f694p-1f,
     0x1.fbe61ep-1f, 0x1.fea422p-1f, 0x1.ff996p-1f, 0x1.ffe514p-1f, 0x1.fff9bap-1f, 0x1.fffeb4p-1f, 0x1.ffffc4p-1f,
     0x1.fffff6p-1f, 0x1.fffffep-1f},  // hi
    {0.0f, 0x1.6d7802p-27f, -0x1.96dcd8p-28f, -0x1.5c5356p-26f, 0x1.056456p-26f, 0x1.da90eep-28f, -0x1.260ffep-27f,
     0x1.de937p-26f, -0x1.ca752ap-27f, 0x1.e7d434p-26f, 0x1.77b80cp-26f, 0x1.083b28p-27f, -0x1.44d5ep-29f,
     -0x1.d24becp-26f, 0x1.8c3e5p-29f, 0x1.259db8p-26f},  // lo
    {0x1.06eba8p-3f, 0x1.f5f0cep-1f, 0x1.86e96ap-1f, 0x1.0cab62p-1f, 0x1.45e99cp-2f, 0x1.5ce596p-3f, 0x1.499d46p-4f,
     0x1.12ceb2p-5f, 0x1.94624cp-7f, 0x1.06918cp-8f, 0x1.2ce89ep-10f, 0x1.30539ep-12f, 0x1.0f9e3ap-14f, 0x1.abe0fcp-17f,
     0x1.296ae6p-19f, 0x1.6ce298p-22f},  // c1
    {-0x1.0f237cp-21f, -0x1.787498p-2f, -0x1.e8a3c2p-2f, -0x1.d62becp-2f, -0x1.6ea6dp-2f, -0x1.dfbbaep-3f,
     -0x1.0bcfcap-3f, -0x1.01a1c8p-4f, -0x1.ada872p-6f, -0x1.37ccd4p-7f, -0x1.8af148p-9f, -0x1.b57826p-11f,
     -0x1.a86722p-13f, -0x1.6905b2p-15f, -0x1.0d88b8p-17f, -0x1.617b36p-20f},  // c2
    {-0x1.811eeap-2f, -0x1.e107aap-3f, -0x1.c8201ap-5f, 0x1.7c9aa4p-4f, 0x1.4cb2d6p-3f, 0x1.4374b4p-3f, 0x1.d6657cp-4f,
     0x1.143e78p-4f, 0x1.0ea58cp-5f, 0x1.c1ebap-7f, 0x1.407d1ap-8f, 0x1.89da16p-10f, 0x1.a3642ap-12f, 0x1.843ab6p-14f,
     0x1.392deep-16f, 0x1.b9241cp-19f},  // c3
    {-0x1.410adep-11f, 0x1.5524ap-3f, 0x1.695fecp-3f, 0x1.cc62a8p-4f, 0x1.ca5be4p-6f, -0x1.f3b5ep-6f, -0x1.974c36p-5f,
     -0x1.5a3208p-5f, -0x1.afe6c6p-6f, -0x1.ae5b04p-7f, -0x1.62d4ep-8f, -0x1.ed470ap-10f, -0x1.244e48p-11f,
     -0x1.2983fap-13f, -0x1.0564f8p-15f, -0x1.8df7a4p-18f},  // c4
    {0x1.e2ea8ep-4f, 0x1.747d7cp-5f, -0x1.b6edc8p-6f, -0x1.117bc6p-4f, -0x1.f4493ep-5f, -0x1.f59bbep-6f,
     -0x1.34cbbep-9f, 0x1.72b562p-7f, 0x1.978ab4p-7f, 0x1.120266p-7f, 0x1.15b07ap-8f, 0x1.c4e0a6p-10f, 0x1.325284p-11f,
     0x1.5d55acp-13f, 0x1.536718p-15f, 0x1.1adf5ep-17f},  // c5
    {-0x1.372bacp-6f, -0x1.94e27cp-5f, -0x1.4e9f74p-5f, -0x1.585dc8p-7f, 0x1.f5b1ccp-7f, 0x1.69494ap-6f, 0x1.d817e6p-7f,
     0x1.0f72f4p-8f, -0x1.d37d08p-10f, -0x1.95ade6p-9f, -0x1.26639ap-9f, -0x1.2c217ap-10f, -0x1.de6c36p-12f,
     -0x1.371286p-13f, -0x1.518494p-15f, -0x1.35a436p-17f},  // c6
};
// erfcx(x) = e^(x^2) erfc(x) on [0, 1/4) and half-octaves [1/4, 3/8), ..., [8, 12).
alignas(64) constexpr float kErfcxTable[11][16] = {
    {0.0f, 0x1.4p-2f, 0x1.cp-2f, 0x1.4p-1f, 0x1.cp-1f, 0x1.4p+0f, 0x1.cp+0f, 0x1.4p+1f, 0x1.cp+1f, 0x1.4p+2f, 0x1.cp+2f,
     0x1.4p+3f, 0x1.4p+3f, 0x1.4p+3f, 0x1.4p+3f, 0x1.4p+3f},  // center
    {0x1p+0f, 0x1.73c18ap-1f, 0x1.4c630ep-1f, 0x1.1d16b6p-1f, 0x1.db747ep-2f, 0x1.78a692p-2f, 0x1.23cfc2p-2f,
     0x1.afbb4p-3f, 0x1.3e0a9ap-3f, 0x1.c5723ap-4f, 0x1.46dc6cp-4f, 0x1.cbe832p-5f, 0x1.cbe832p-5f, 0x1.cbe832p-5f,
     0x1.cbe832p-5f, 0x1.cbe832p-5f},  // hi
    {-0x1.a3ap-42f, -0x1.8a892ap-28f, 0x1.870faap-26f, -0x1.fd8548p-27f, 0x1.c81358p-27f, 0x1.386c4p-30f,
     0x1.e3b8cep-27f, -0x1.89358ap-28f, -0x1.7c4898p-29f, -0x1.6e53fp-32f, -0x1.bffc2p-34f, -0x1.a10e08p-35f,
     -0x1.a10e08p-35f, -0x1.a10e08p-35f, -0x1.a10e08p-35f, -0x1.a10e08p-35f},  // lo
    {-0x1.20dd76p+0f, -0x1.5961f4p-1f, -0x1.1ee43ep-1f, -0x1.babd0ep-2f, -0x1.4369f6p-2f, -0x1.abaacep-3f,
     -0x1.0c3d54p-3f, -0x1.3086d8p-4f, -0x1.5285d2p-5f, -0x1.5d8434p-6f, -0x1.6e4b46p-7f, -0x1.6c55c6p-8f,
     -0x1.6c55c6p-8f, -0x1.6c55c6p-8f, -0x1.6c55c6p-8f, -0x1.6c55c6p-8f},  // c1
    {0x1.000062p+0f, 0x1.07d2eep-1f, 0x1.9dbe6ap-2f, 0x1.257742p-2f, 0x1.80ef9p-3f, 0x1.b56f46p-4f, 0x1.c8d0dp-5f,
     0x1.98958ap-6f, 0x1.5d581p-7f, 0x1.08cf82p-8f, 0x1.96a3ep-10f, 0x1.1f3dfp-11f, 0x1.1f3dfp-11f, 0x1.1f3dfp-11f,
     0x1.1f3dfp-11f, 0x1.1f3dfp-11f},  // c2
    {-0x1.81413p-1f, -0x1.5e93cep-2f, -0x1.05ca98p-2f, -0x1.59c49cp-3f, -0x1.9d587ap-4f, -0x1.9b62dep-5f,
     -0x1.6cb342p-6f, -0x1.06321ap-7f, -0x1.5e5f66p-9f, -0x1.8abd6p-11f, -0x1.bf4ee2p-13f, -0x1.c2cc7ep-15f,
     -0x1.c2cc7ep-15f, -0x1.c2cc7ep-15f, -0x1.c2cc7ep-15f, -0x1.c2cc7ep-15f},  // c3
    {0x1.01a102p-1f, 0x1.a20e02p-3f, 0x1.2b1306p-3f, 0x1.72d58p-4f, 0x1.982dd2p-5f, 0x1.68a20cp-6f, 0x1.13628ep-7f,
     0x1.435c54p-9f, 0x1.56345cp-11f, 0x1.21a024p-13f, 0x1.e7accap-16f, 0x1.601524p-18f, 0x1.601524p-18f,
     0x1.601524p-18f, 0x1.601524p-18f, 0x1.601524p-18f},  // c4
    {-0x1.503664p-2f, -0x1.d5213ap-4f, -0x1.abd0fep-4f, -0x1.6d4ad2p-5f, -0x1.777568p-6f, -0x1.29d078p-7f,
     -0x1.8de1f4p-9f, -0x1.80768p-11f, -0x1.450ac4p-13f, -0x1.a2063ep-16f, -0x1.07de68p-18f, -0x1.10f98p-21f,
     -0x1.10f98p-21f, -0x1.10f98p-21f, -0x1.10f98p-21f, -0x1.10f98p-21f},  // c5
    {0x1.2fcb1ep-2f, 0x1.052b06p-4f, 0x1.076156p-4f, 0x1.5287fap-6f, 0x1.4b4926p-7f, 0x1.d212e6p-9f, 0x1.12583ep-10f,
     0x1.ba53bep-13f, 0x1.2e5e34p-15f, 0x1.29d1e2p-18f, 0x1.1af68p-21f, 0x1.a6ab16p-25f, 0x1.a6ab16p-25f,
     0x1.a6ab16p-25f, 0x1.a6ab16p-25f, 0x1.a6ab16p-25f},  // c6
    {-0x1.9dfa32p-2f, 0x1.b7713ep-2f, 0x1.0294bap+2f, -0x1.4e1a74p-6f, -0x1.24ea92p-8f, -0x1.4e62fp-10f,
     -0x1.bd8bep-13f, -0x1.ff0e68p-15f, -0x1.3d8ff2p-17f, -0x1.bf408cp-21f, -0x1.27516p-24f, -0x1.642accp-28f,
     -0x1.642accp-28f, -0x1.642accp-28f, -0x1.642accp-28f, -0x1.642accp-28f},  // c7
    {0x1.6782c2p-2f, -0x1.dbb476p-1f, -0x1.e9f79ap+1f, 0x1.51ebf4p-7f, -0x1.0d71c2p-8f, 0x1.d8415ep-12f,
     0x1.7326ecp-15f, 0x1.153702p-16f, 0x1.23b13p-19f, 0x1.358562p-23f, 0x1.31912ep-27f, 0x1.0fde1ap-31f,
     0x1.0fde1ap-31f, 0x1.0fde1ap-31f, 0x1.0fde1ap-31f, 0x1.0fde1ap-31f},  // c8
};
#if defined(__AVX512F__)
// erfcx on [0, 1/4) and quarter-octaves [1/4, 5/16), ..., [10, 12), for AVX-512's
// 32-entry permutes (degree 6 instead of 8).
alignas(64) constexpr float kErfcxTable32[9][32] = {
    {0.0f,      0x1.2p-2f, 0x1.6p-2f, 0x1.ap-2f, 0x1.ep-2f, 0x1.2p-1f, 0x1.6p-1f, 0x1.ap-1f,
     0x1.ep-1f, 0x1.2p+0f, 0x1.6p+0f, 0x1.ap+0f, 0x1.ep+0f, 0x1.2p+1f, 0x1.6p+1f, 0x1.ap+1f,
     0x1.ep+1f, 0x1.2p+2f, 0x1.6p+2f, 0x1.ap+2f, 0x1.ep+2f, 0x1.2p+3f, 0x1.6p+3f, 0x1.6p+3f,
     0x1.6p+3f, 0x1.6p+3f, 0x1.6p+3f, 0x1.6p+3f, 0x1.6p+3f, 0x1.6p+3f, 0x1.6p+3f, 0x1.6p+3f},  // center
    {0x1p+0f,        0x1.7ecff4p-1f, 0x1.693716p-1f, 0x1.558ef4p-1f, 0x1.439ea4p-1f, 0x1.2b84fp-1f,  0x1.0fce4ep-1f,
     0x1.f0724p-2f,  0x1.c7f814p-2f, 0x1.9531ep-2f,  0x1.5f88f6p-2f, 0x1.3583f6p-2f, 0x1.13e574p-2f, 0x1.d94446p-3f,
     0x1.8c9eb6p-3f, 0x1.54a7ap-3f,  0x1.2a2af2p-3f, 0x1.f5b2ap-4f,  0x1.9d8a9p-4f,  0x1.5f75c4p-4f, 0x1.31743p-4f,
     0x1.fe6cc4p-5f, 0x1.a273c6p-5f, 0x1.a273c6p-5f, 0x1.a273c6p-5f, 0x1.a273c6p-5f, 0x1.a273c6p-5f, 0x1.a273c6p-5f,
     0x1.a273c6p-5f, 0x1.a273c6p-5f, 0x1.a273c6p-5f, 0x1.a273c6p-5f},  // hi
    {-0x1.f564e8p-32f, -0x1.37ef0ep-26f, 0x1.83822cp-26f,  -0x1.da283p-26f, -0x1.2f8566p-26f, 0x1.db8562p-27f,
     0x1.2dbacep-26f,  -0x1.4a6348p-31f, -0x1.f63776p-28f, 0x1.362cdep-27f, -0x1.a1859ep-27f, 0x1.910dd4p-28f,
     0x1.db034ep-29f,  0x1.ac7972p-28f,  0x1.1fef18p-28f,  0x1.1a9a2ap-28f, -0x1.8fac08p-29f, 0x1.27ec48p-30f,
     -0x1.bae8acp-29f, 0x1.74c344p-31f,  -0x1.64e4c4p-29f, 0x1.422552p-30f, -0x1.036bp-30f,   -0x1.036bp-30f,
     -0x1.036bp-30f,   -0x1.036bp-30f,   -0x1.036bp-30f,   -0x1.036bp-30f,  -0x1.036bp-30f,   -0x1.036bp-30f,
     -0x1.036bp-30f,   -0x1.036bp-30f},  // lo
    {-0x1.20dd72p+0f, -0x1.6a65f2p-1f, -0x1.49650ap-1f, -0x1.2c36c4p-1f, -0x1.12563p-1f,  -0x1.e18ab8p-2f,
     -0x1.97fe7cp-2f, -0x1.5cbc2cp-2f, -0x1.2c84bp-2f,  -0x1.e78b36p-3f, -0x1.797a64p-3f, -0x1.2b11e6p-3f,
     -0x1.e3658p-4f,  -0x1.6a70d4p-4f, -0x1.030578p-4f, -0x1.82a852p-5f, -0x1.2aa65p-5f,  -0x1.aa3ebap-6f,
     -0x1.238ca8p-6f, -0x1.a6e2dp-7f,  -0x1.404456p-7f, -0x1.c0466ep-8f, -0x1.2ddd3ep-8f, -0x1.2ddd3ep-8f,
     -0x1.2ddd3ep-8f, -0x1.2ddd3ep-8f, -0x1.2ddd3ep-8f, -0x1.2ddd3ep-8f, -0x1.2ddd3ep-8f, -0x1.2ddd3ep-8f,
     -0x1.2ddd3ep-8f, -0x1.2ddd3ep-8f},  // c1
    {0x1.fffe82p-1f,  0x1.18e348p-1f,  0x1.eff8b6p-2f,  0x1.b73166p-2f,  0x1.860c78p-2f,  0x1.482bdap-2f,
     0x1.071da8p-2f,  0x1.aa32b8p-3f,  0x1.5c775ep-3f,  0x1.05e726p-3f,  0x1.701344p-4f,  0x1.0a15acp-4f,
     0x1.8a6efep-5f,  0x1.061568p-5f,  0x1.43b98cp-6f,  0x1.a7eddcp-7f,  0x1.22f066p-7f,  0x1.62c12ep-8f,
     0x1.95252cp-9f,  0x1.f75ef8p-10f, 0x1.4d07bcp-10f, 0x1.876378p-11f, 0x1.b1c894p-12f, 0x1.b1c894p-12f,
     0x1.b1c894p-12f, 0x1.b1c894p-12f, 0x1.b1c894p-12f, 0x1.b1c894p-12f, 0x1.b1c894p-12f, 0x1.b1c894p-12f,
     0x1.b1c894p-12f, 0x1.b1c894p-12f},  // c2
    {-0x1.81039ap-1f,  -0x1.79c152p-2f,  -0x1.4594ccp-2f,  -0x1.196774p-2f,  -0x1.e7fe64p-3f,  -0x1.8be576p-3f,
     -0x1.2eccfcp-3f,  -0x1.d440e4p-4f,  -0x1.6dc44ep-4f,  -0x1.0132cp-4f,   -0x1.4bcbe6p-5f,  -0x1.ba05fcp-6f,
     -0x1.2efc2cp-6f,  -0x1.687fb8p-7f,  -0x1.84e8c8p-8f,  -0x1.c24b0ap-9f,  -0x1.143534p-9f,  -0x1.21886ap-10f,
     -0x1.159412p-11f, -0x1.2875c2p-12f, -0x1.5781d6p-13f, -0x1.53b79ap-14f, -0x1.366f4ep-15f, -0x1.366f4ep-15f,
     -0x1.366f4ep-15f, -0x1.366f4ep-15f, -0x1.366f4ep-15f, -0x1.366f4ep-15f, -0x1.366f4ep-15f, -0x1.366f4ep-15f,
     -0x1.366f4ep-15f, -0x1.366f4ep-15f},  // c3
    {0x1.fcc9d8p-2f,  0x1.c75bacp-3f,  0x1.8021bp-3f,   0x1.44facp-3f,   0x1.13dec6p-3f,  0x1.b19d3ap-4f,
     0x1.3e0d84p-4f,  0x1.d7f58ap-5f,  0x1.61fab6p-5f,  0x1.d4e106p-6f,  0x1.17e7b2p-6f,  0x1.5a168ap-7f,
     0x1.b99c12p-8f,  0x1.da5356p-9f,  0x1.c2c57ap-10f, 0x1.d0867ep-11f, 0x1.fff1c6p-12f, 0x1.cfffbp-13f,
     0x1.774c24p-14f, 0x1.59b056p-15f, 0x1.5f8856p-16f, 0x1.253b46p-17f, 0x1.ba9bc8p-19f, 0x1.ba9bc8p-19f,
     0x1.ba9bc8p-19f, 0x1.ba9bc8p-19f, 0x1.ba9bc8p-19f, 0x1.ba9bc8p-19f, 0x1.ba9bc8p-19f, 0x1.ba9bc8p-19f,
     0x1.ba9bc8p-19f, 0x1.ba9bc8p-19f},  // c4
    {-0x1.20b922p-2f,  -0x1.aeac54p-3f,  -0x1.0070b2p-4f,  -0x1.f450f6p-6f,  0x1.c5b582p-7f,   -0x1.d03554p-5f,
     -0x1.3756a6p-5f,  -0x1.b43ccep-6f,  -0x1.5aacf2p-6f,  -0x1.947d78p-7f,  -0x1.c1f038p-8f,  -0x1.fc94e2p-9f,
     -0x1.2eebd6p-9f,  -0x1.2f5f92p-10f, -0x1.fccac4p-12f, -0x1.d46e04p-13f, -0x1.d080f4p-14f, -0x1.738336p-15f,
     -0x1.fb31dep-17f, -0x1.938dfap-18f, -0x1.67f7f2p-19f, -0x1.00aeacp-20f, -0x1.3e681p-22f,  -0x1.3e681p-22f,
     -0x1.3e681p-22f,  -0x1.3e681p-22f,  -0x1.3e681p-22f,  -0x1.3e681p-22f,  -0x1.3e681p-22f,  -0x1.3e681p-22f,
     -0x1.3e681p-22f,  -0x1.3e681p-22f},  // c5
    {0x1.b730c2p-4f,  0x1.02c096p-3f,  0x1.811dcap-6f,  0x1.7cde72p-8f,  -0x1.c4fdbcp-6f, 0x1.b416ep-6f,
     0x1.1c2758p-6f,  0x1.7bfe0cp-7f,  0x1.23178cp-7f,  0x1.4994dp-8f,   0x1.57fd3p-9f,   0x1.69742ap-10f,
     0x1.907092p-11f, 0x1.720048p-12f, 0x1.14ece8p-13f, 0x1.c9ac48p-15f, 0x1.9b6f24p-16f, 0x1.1f2874p-17f,
     0x1.4db7aep-19f, 0x1.ccda6cp-21f, 0x1.6af68ep-22f, 0x1.b62922p-24f, 0x1.c2bad4p-26f, 0x1.c2bad4p-26f,
     0x1.c2bad4p-26f, 0x1.c2bad4p-26f, 0x1.c2bad4p-26f, 0x1.c2bad4p-26f, 0x1.c2bad4p-26f, 0x1.c2bad4p-26f,
     0x1.c2bad4p-26f, 0x1.c2bad4p-26f},  // c6
};
#endif

}  // namespace detail

// erf to about 1 ulp (Tensor.erf); GELU keeps the cheaper erf above.
// |x| < 1/2: x + x Q(x^2); below 4 the table; 1 above.
EMBER_VEC_INLINE Vf erf_accurate(Vf x) {
  using detail::kErfTable;
  using detail::lookup16;
  Vf a = abs(x);
  Vf z = a * a;
  Vf s = madd(z, 0x1.35465ep-8f, -0x1.b66846p-6f);
  s = madd(s, z, splat(0x1.ce2544p-4f));
  s = madd(s, z, splat(-0x1.812734p-2f));
  s = madd(s, z, splat(0x1.06eba8p-3f));
  Vf small = madd(a, s, a);
  Vi k = __builtin_convertvector(a * 4.0f, Vi);  // NaN and huge: INT_MIN (selected away below)
  k = k > 15 ? 15 : k;
  const auto row = [&](int r) { return lookup16(kErfTable[r], k); };
  Vf v = a - row(0);
  Vf p = detail::table_poly<3, 8>(v, row);
  Vf r = madd(v, p, row(2)) + row(1);
  r = select(a < 0.5f, small, r);
  r = select(a >= 4.0f, splat(1.0f), r);
  return copysign(r, x);
}

// erfc(a) = e^(-a^2) Q(a) for a >= 0 with Q = erfcx from the tables, Q = hi + w;
// e^(-a^2) = 2^n (1 + e) from the exact two-part square, and erfc(a) =
// 2^n (hi + (w + Q e)), scaled last (results into the subnormal range round
// once). erfc(x) = 2 - erfc(-x) for x < 0.
EMBER_VEC_INLINE Vf erfc(Vf x) {
  using detail::kErfcxTable;
  using detail::lookup16;
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0x1.62e4p-1f, kLn2Lo = 0x1.7f7d1cp-20f;
  Vf a = detail::min(abs(x), 10.125f);
#if defined(__AVX512F__)
  // Quarter-octaves (two-register permutes): degree 6.
  using detail::kErfcxTable32;
  using detail::lookup32;
  Vi k = ((Vi)a >> 21) - 499;  // exponent and two mantissa bits: <= 22 (NaN: out of range, harmless)
  k = k < 0 ? 0 : k;
  const auto row = [&](int r) { return lookup32(kErfcxTable32[r], k); };
  Vf v = a - row(0);
  Vf q = detail::table_poly<3, 8>(v, row);
#else
  Vi k = ((Vi)a >> 22) - 249;  // exponent and first mantissa bit: <= 11 (NaN: out of range, harmless)
  k = k < 0 ? 0 : k;
  const auto row = [&](int r) { return lookup16(kErfcxTable[r], k); };
  Vf v = a - row(0);
  Vf q = detail::table_poly<3, 10>(v, row);
#endif
  Vf hi = row(1);
  Vf w = madd(v, q, row(2));
  // e^(-a^2) = 2^n (1 + e): a^2 = sh + sl exactly, and with n = rint(-a^2 / ln 2),
  // -a^2 - n ln 2 = -(rh + rl) where rh is exact.
  Vf sh = a * a;
  Vf sl = detail::mul_err(a, a, sh);
  Vf n = detail::round_mul(sh, -kLog2e);
  Vf rh = madd(n, kLn2Hi, sh);
  Vf rl = madd(n, kLn2Lo, sl);
  // e = e^-(rh + rl) - 1 = -rh + (-rl + r^2 P(-r)), P as in expm1_reduced.
  Vf rr = rh + rl;
  Vf p = madd(rr, -0x1.a26890p-13f, 0x1.6d26d0p-10f);
  p = madd(p, rr, splat(-0x1.110ff2p-7f));
  p = madd(p, rr, splat(0x1.555508p-5f));
  p = madd(p, rr, splat(-0x1.555556p-3f));
  p = madd(p, rr, splat(0.5f));
  Vf e = madd(p, rr * rr, -rl) - rh;
  // Q (1 + e) - hi with Q = hi + w; rounded once more in the sum with hi.
  Vf tail = madd(hi, e, madd(w, e, w));
  Vf r = detail::ldexp(hi + tail, n);
  return select(x < 0.0f, 2.0f - r, r);  // NaN propagates
}

}  // namespace vecmath
}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
