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
  Vf y = madd(-(p * t), exp(-(ax * ax)), splat(1.0f));
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
  Vi ix = bits - 0x3f3504f3;
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

// 2^x: x = n + r with |r| <= 1/2, 2^r = 1 + r P(r).
EMBER_VEC_INLINE Vf exp2(Vf x) {
  Vf xc = detail::clamp(x, -151.0f, 129.0f);
  Vf n = detail::round_small(xc);
  Vf r = xc - n;  // exact
  Vf p = madd(r, 0x1.41bc06p-13f, 0x1.5eeedap-10f);
  p = madd(p, r, splat(0x1.3b2cfep-7f));
  p = madd(p, r, splat(0x1.c6afa8p-5f));
  p = madd(p, r, splat(0x1.ebfbdep-3f));
  p = madd(p, r, splat(0x1.62e430p-1f));
  p = madd(p, r, splat(1.0f));
  return detail::ldexp(p, n);
}

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
  Vf s = (Vf)((ni + 126) << 23);
  Vi k = 127 - ni;
  Vi big = (ni > 24) & (k > 0);
  Vf inv = (Vf)(big & (k << 23));  // 2^-n where n >= 25, else 0
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

namespace detail {
// f * C + small, with C = c + cc (FMA builds) = ch + cl (ch with 11 fraction
// bits, so that ch times the top 12 bits of f is exact without FMA): the
// product's rounding is the sum's single rounding.
EMBER_VEC_INLINE Vf mul_const_add(Vf f, float c, float cc, float ch, float cl, Vf small) {
#if EMBER_VEC_HAS_FMA
  (void)ch, (void)cl;
  return madd(f, c, madd(f, cc, small));
#else
  (void)c, (void)cc;
  Vf fh = (Vf)((Vi)f & int32_t(0xfffff000u));
  return fh * ch + madd(f - fh, ch, madd(f, cl, small));
#endif
}
}  // namespace detail

// log2(x) = e + log(1 + f) log2(e), with f log2(e) rounded once.
EMBER_VEC_INLINE Vf log2(Vf x) {
  Vf e;
  Vf f = detail::log_reduce<true>(x, e);
  Vf t = detail::log1p_tail(f);
  // log2(e) = 0x1.715476p0 + 1.9259630e-8 = 0x1.716p0 - 1.7605286e-4
  Vf v = detail::mul_const_add(f, 0x1.715476p0f, 1.92596299112661746887e-8f, 0x1.716p0f, -1.76052861036592640e-4f,
                               t * 0x1.715476p0f);
  return detail::log_fixup(e + v, x);
}

// log10(x) = e log10(2) + log(1 + f) log10(e); e * kA is exact.
EMBER_VEC_INLINE Vf log10(Vf x) {
  const float kA = 0x1.344p-2f, kAc = 4.60503898119521373889e-6f;  // log10(2)
  Vf e;
  Vf f = detail::log_reduce<true>(x, e);
  Vf t = detail::log1p_tail(f);
  // log10(e) = 0x1.bcb7b2p-2 - 1.0103050e-8 = 0x1.bc8p-2 + 2.1245065e-4
  Vf v = detail::mul_const_add(f, 0x1.bcb7b2p-2f, -1.01030500522316835811e-8f, 0x1.bc8p-2f, 2.12450653251827651e-4f,
                               madd(t, 0x1.bcb7b2p-2f, e * kAc));
  return detail::log_fixup(madd(e, kA, v), x);
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

// tan: reduction by pi/2 (three-part constant; the last product's error and
// the subtraction's rounding are carried in rlo), tan(r) = r + r^3 P(r^2) on
// [-pi/4, pi/4]; odd quadrants give -1/tan(r), the reciprocal corrected by one
// Newton step on the two-part tan(r). |x| > 8192 and non-finite lanes call libm.
namespace detail {
// Lanes of x beyond the vector reduction's range (and inf, NaN) through libm.
__attribute__((noinline, cold)) inline Vf tan_big_lanes(Vf x, Vf res, Vi big) {
  for (int i = 0; i < kLanesF; ++i) {
    if (big[i]) res[i] = static_cast<float>(std::tan(static_cast<double>(x[i])));
  }
  return res;
}
}  // namespace detail

EMBER_VEC_INLINE Vf tan(Vf x) {
  const float kC1 = 0x1.92p+0f, kC2 = 0x1.fb4p-12f, kC3 = 0x1.4442d2p-24f, kC4 = -0x1.ee59dap-50f;
  const float kMagic = 12582912.0f;
  Vi big = !(abs(x) <= 8192.0f);  // also true for inf and nan; their lanes' values are replaced
  Vf k = madd(x, 0x1.45f306p-1f, kMagic);  // x * 2/pi rounded, in the low bits
  Vf n = k - kMagic;
  Vf r2 = madd(n, -kC1, x);  // exact
  r2 = madd(n, -kC2, r2);    // exact
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
// e^x / 4 = s (1 + q + qlo) with s = 2^(n-2), for x in [0, 89.5] (sinh, cosh).
EMBER_VEC_INLINE Vf exp_quarter_parts(Vf x, Vf& s, Vf& qlo) {
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0x1.62e4p-1f, kLn2Lo = 0x1.7f7d1cp-20f;
  Vf n = round_mul(x, kLog2e);
  Vf rh = madd(n, -kLn2Hi, x);  // exact
  Vf rl = n * -kLn2Lo;
  s = (Vf)((__builtin_convertvector(n, Vi) + 125) << 23);
  return expm1_reduced(rh, rl, qlo);
}
}  // namespace detail

// sinh: |x| < 1 as x + x^3 P(x^2); above, e^a/2 - e^-a/2 = 2 (s + (s q - t))
// with e^a/4 = s (1 + q) and t = 1/(16 s (1 + q)) (the terms do not cancel for a >= 1).
EMBER_VEC_INLINE Vf sinh(Vf x) {
  Vf a = abs(x);
  Vf z = a * a;
  Vf p = madd(z, 0x1.756c1ep-19f, 0x1.a022bcp-13f);
  p = madd(p, z, splat(0x1.1110e0p-7f));
  p = madd(p, z, splat(0x1.555556p-3f));
  Vf small = madd(p * z, a, a);
  Vf s, qlo;
  Vf ac = detail::clamp(a, 0.0f, 89.5f);
  Vf q = detail::exp_quarter_parts(ac, s, qlo);
  Vf t = 0.0625f / madd(s, q, s);
  Vf large = (s + madd(s, q, madd(s, qlo, -t))) * 2.0f;
  return copysign(select(a < 1.0f, small, large), x);
}

// cosh = 2 (s + (s q + t)), as in sinh.
EMBER_VEC_INLINE Vf cosh(Vf x) {
  Vf a = detail::clamp(abs(x), 0.0f, 89.5f);
  Vf s, qlo;
  Vf q = detail::exp_quarter_parts(a, s, qlo);
  Vf t = 0.0625f / madd(s, q, s);
  return (s + madd(s, q, madd(s, qlo, t))) * 2.0f;
}

// atanh(x) = log1p(2a / (1 - a)) / 2 with the sign of x; 1 - a = d + dlo
// exactly, and the quotient's error goes to log1p_core as its correction.
EMBER_VEC_INLINE Vf atanh(Vf x) {
  Vf a = abs(x);
  Vf d = 1.0f - a;
  Vf dlo = (1.0f - d) - a;  // 1 - a - d, exact
  Vf num = a + a;
  Vf w = num / d;
  Vf c = madd(-w, dlo, detail::residual(w, d, num)) * detail::rcp_approx(d);
  Vf u;
  Vf r = detail::log1p_core(w, c, u);
  // u = 1 + w is +inf at |x| = 1, negative above, NaN at inf and NaN.
  return copysign(detail::log_fixup(r, u) * 0.5f, x);
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
#else
  lo = (Vd)_mm_cvtps_pd((__m128)x);
  hi = (Vd)_mm_cvtps_pd(_mm_movehl_ps((__m128)x, (__m128)x));
#endif
}

EMBER_VEC_INLINE Vf narrow(Vd lo, Vd hi) {
#if defined(__AVX512F__)
  return (Vf)_mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps((__m512d)lo)), _mm512_cvtpd_ps((__m512d)hi), 1);
#elif defined(__AVX2__)
  return (Vf)_mm256_set_m128(_mm256_cvtpd_ps((__m256d)hi), _mm256_cvtpd_ps((__m256d)lo));
#else
  return (Vf)_mm_movelh_ps(_mm_cvtpd_ps((__m128d)lo), _mm_cvtpd_ps((__m128d)hi));
#endif
}

EMBER_VEC_INLINE Vd sqrt_d(Vd x) {
#if defined(__AVX512F__)
  return (Vd)_mm512_sqrt_pd((__m512d)x);
#elif defined(__AVX2__)
  return (Vd)_mm256_sqrt_pd((__m256d)x);
#else
  return (Vd)_mm_sqrt_pd((__m128d)x);
#endif
}

// log(u) for finite u >= 1 in double, relative error about 2^-30 (for float
// results): u = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), log(1 + f) =
// f - f^2/2 + f^3 P(f).
EMBER_VEC_INLINE Vd log_d(Vd u) {
  const int64_t kSqrtHalf = 0x3fe6a09e667f3bcdLL;
  Vl bits = (Vl)u - kSqrtHalf;
  Vl e = bits >> 52;
  Vd f = (Vd)((bits & 0x000fffffffffffffLL) + kSqrtHalf) - 1.0;
  Vd ed = (Vd)(e + 0x4338000000000000LL) - 6755399441055744.0;  // e as a double (via 1.5 * 2^52)
  Vd p = madd(f, 0.06752880282465627, -0.116706553927175);
  p = madd(p, f, splatd(0.11882209931126238));
  p = madd(p, f, splatd(-0.12406063965980312));
  p = madd(p, f, splatd(0.14220522776541186));
  p = madd(p, f, splatd(-0.16668002461798767));
  p = madd(p, f, splatd(0.20002063510195903));
  p = madd(p, f, splatd(-0.2500000866996725));
  p = madd(p, f, splatd(0.33333313592753744));
  Vd z = f * f;
  Vd r = f + madd(p * f, z, z * -0.5);
  return madd(ed, 0.69314718055994530942, r);
}

}  // namespace detail

// asinh: |x| < 1/2 as x + x^3 P(x^2); above, log(a + sqrt(a^2 + 1)) in double.
EMBER_VEC_INLINE Vf asinh(Vf x) {
  Vf a = abs(x);
  Vf z = a * a;
  Vf p = madd(z, -0x1.b14332p-7f, 0x1.cd625ap-6f);
  p = madd(p, z, splat(-0x1.6b95c0p-5f));
  p = madd(p, z, splat(0x1.3324f2p-4f));
  p = madd(p, z, splat(-0x1.555536p-3f));
  Vf small = madd(a * z, p, a);
  Vd lo, hi;
  detail::widen(a, lo, hi);
  lo = detail::log_d(lo + detail::sqrt_d(madd(lo, lo, splatd(1.0))));
  hi = detail::log_d(hi + detail::sqrt_d(madd(hi, hi, splatd(1.0))));
  Vf r = select(a < 0.5f, small, detail::narrow(lo, hi));
  r = select(a == INFINITY, a, r);
  return select(isnan(x), x, copysign(r, x));
}

// acosh(x) = log(x + sqrt((x - 1)(x + 1))) in double (no cancellation near 1 there).
EMBER_VEC_INLINE Vf acosh(Vf x) {
  Vd lo, hi;
  detail::widen(x, lo, hi);
  lo = detail::log_d(lo + detail::sqrt_d((lo - 1.0) * (lo + 1.0)));
  hi = detail::log_d(hi + detail::sqrt_d((hi - 1.0) * (hi + 1.0)));
  Vf r = detail::narrow(lo, hi);
  r = select(x == INFINITY, x, r);
  r = select(x < 1.0f, splat(NAN), r);
  return select(isnan(x), x, r);
}

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


// Piecewise minimax polynomials (Note [Vectorised float math]): erf on
// [k/4, (k+1)/4), k < 16, in v = x - center; the value at the center is
// hi + lo. Interval 0 is x + x Q(x) (hi = lo = 0, center 0).
// erf: worst fit error 0.05071152844857541
alignas(64) constexpr float kErfTable[9][16] = {
    {0.0f, 0x1.8000000000000p-2f, 0x1.4000000000000p-1f, 0x1.c000000000000p-1f, 0x1.2000000000000p+0f, 0x1.6000000000000p+0f, 0x1.a000000000000p+0f, 0x1.e000000000000p+0f, 0x1.1000000000000p+1f, 0x1.3000000000000p+1f, 0x1.5000000000000p+1f, 0x1.7000000000000p+1f, 0x1.9000000000000p+1f, 0x1.b000000000000p+1f, 0x1.d000000000000p+1f, 0x1.f000000000000p+1f},  // center
    {0.0f, 0x1.9dd0d20000000p-2f, 0x1.3f196e0000000p-1f, 0x1.91724a0000000p-1f, 0x1.c6dad20000000p-1f, 0x1.e5768c0000000p-1f, 0x1.f4f6940000000p-1f, 0x1.fbe61e0000000p-1f, 0x1.fea4220000000p-1f, 0x1.ff99600000000p-1f, 0x1.ffe5140000000p-1f, 0x1.fff9ba0000000p-1f, 0x1.fffeb40000000p-1f, 0x1.ffffc40000000p-1f, 0x1.fffff60000000p-1f, 0x1.fffffe0000000p-1f},  // hi
    {0.0f, 0x1.6d78020000000p-27f, -0x1.96dcd80000000p-28f, -0x1.5c53560000000p-26f, 0x1.0564560000000p-26f, 0x1.da90ee0000000p-28f, -0x1.260ffe0000000p-27f, 0x1.de93700000000p-26f, -0x1.ca752a0000000p-27f, 0x1.e7d4340000000p-26f, 0x1.77b80c0000000p-26f, 0x1.083b280000000p-27f, -0x1.44d5e00000000p-29f, -0x1.d24bec0000000p-26f, 0x1.8c3e500000000p-29f, 0x1.259db80000000p-26f},  // lo
    {0x1.06eba80000000p-3f, 0x1.f5f0ce0000000p-1f, 0x1.86e96a0000000p-1f, 0x1.0cab620000000p-1f, 0x1.45e99c0000000p-2f, 0x1.5ce5960000000p-3f, 0x1.499d460000000p-4f, 0x1.12ceb20000000p-5f, 0x1.94624c0000000p-7f, 0x1.06918c0000000p-8f, 0x1.2ce89e0000000p-10f, 0x1.30539e0000000p-12f, 0x1.0f9e3a0000000p-14f, 0x1.abe0fc0000000p-17f, 0x1.296ae60000000p-19f, 0x1.6ce2980000000p-22f},  // c1
    {-0x1.0f237c0000000p-21f, -0x1.7874980000000p-2f, -0x1.e8a3c20000000p-2f, -0x1.d62bec0000000p-2f, -0x1.6ea6d00000000p-2f, -0x1.dfbbae0000000p-3f, -0x1.0bcfca0000000p-3f, -0x1.01a1c80000000p-4f, -0x1.ada8720000000p-6f, -0x1.37ccd40000000p-7f, -0x1.8af1480000000p-9f, -0x1.b578260000000p-11f, -0x1.a867220000000p-13f, -0x1.6905b20000000p-15f, -0x1.0d88b80000000p-17f, -0x1.617b360000000p-20f},  // c2
    {-0x1.811eea0000000p-2f, -0x1.e107aa0000000p-3f, -0x1.c8201a0000000p-5f, 0x1.7c9aa40000000p-4f, 0x1.4cb2d60000000p-3f, 0x1.4374b40000000p-3f, 0x1.d6657c0000000p-4f, 0x1.143e780000000p-4f, 0x1.0ea58c0000000p-5f, 0x1.c1eba00000000p-7f, 0x1.407d1a0000000p-8f, 0x1.89da160000000p-10f, 0x1.a3642a0000000p-12f, 0x1.843ab60000000p-14f, 0x1.392dee0000000p-16f, 0x1.b9241c0000000p-19f},  // c3
    {-0x1.410ade0000000p-11f, 0x1.5524a00000000p-3f, 0x1.695fec0000000p-3f, 0x1.cc62a80000000p-4f, 0x1.ca5be40000000p-6f, -0x1.f3b5e00000000p-6f, -0x1.974c360000000p-5f, -0x1.5a32080000000p-5f, -0x1.afe6c60000000p-6f, -0x1.ae5b040000000p-7f, -0x1.62d4e00000000p-8f, -0x1.ed470a0000000p-10f, -0x1.244e480000000p-11f, -0x1.2983fa0000000p-13f, -0x1.0564f80000000p-15f, -0x1.8df7a40000000p-18f},  // c4
    {0x1.e2ea8e0000000p-4f, 0x1.747d7c0000000p-5f, -0x1.b6edc80000000p-6f, -0x1.117bc60000000p-4f, -0x1.f4493e0000000p-5f, -0x1.f59bbe0000000p-6f, -0x1.34cbbe0000000p-9f, 0x1.72b5620000000p-7f, 0x1.978ab40000000p-7f, 0x1.1202660000000p-7f, 0x1.15b07a0000000p-8f, 0x1.c4e0a60000000p-10f, 0x1.3252840000000p-11f, 0x1.5d55ac0000000p-13f, 0x1.5367180000000p-15f, 0x1.1adf5e0000000p-17f},  // c5
    {-0x1.372bac0000000p-6f, -0x1.94e27c0000000p-5f, -0x1.4e9f740000000p-5f, -0x1.585dc80000000p-7f, 0x1.f5b1cc0000000p-7f, 0x1.69494a0000000p-6f, 0x1.d817e60000000p-7f, 0x1.0f72f40000000p-8f, -0x1.d37d080000000p-10f, -0x1.95ade60000000p-9f, -0x1.26639a0000000p-9f, -0x1.2c217a0000000p-10f, -0x1.de6c360000000p-12f, -0x1.3712860000000p-13f, -0x1.5184940000000p-15f, -0x1.35a4360000000p-17f},  // c6
};
// erfc: worst fit error 0.03474886464842772
alignas(64) constexpr float kErfcxTable[11][16] = {
    {0.0f, 0x1.4000000000000p-2f, 0x1.c000000000000p-2f, 0x1.4000000000000p-1f, 0x1.c000000000000p-1f, 0x1.4000000000000p+0f, 0x1.c000000000000p+0f, 0x1.4000000000000p+1f, 0x1.c000000000000p+1f, 0x1.4000000000000p+2f, 0x1.c000000000000p+2f, 0x1.4000000000000p+3f, 0x1.4000000000000p+3f, 0x1.4000000000000p+3f, 0x1.4000000000000p+3f, 0x1.4000000000000p+3f},  // center
    {0x1.0000000000000p+0f, 0x1.73c18a0000000p-1f, 0x1.4c630e0000000p-1f, 0x1.1d16b60000000p-1f, 0x1.db747e0000000p-2f, 0x1.78a6920000000p-2f, 0x1.23cfc20000000p-2f, 0x1.afbb400000000p-3f, 0x1.3e0a9a0000000p-3f, 0x1.c5723a0000000p-4f, 0x1.46dc6c0000000p-4f, 0x1.cbe8320000000p-5f, 0x1.cbe8320000000p-5f, 0x1.cbe8320000000p-5f, 0x1.cbe8320000000p-5f, 0x1.cbe8320000000p-5f},  // hi
    {-0x1.a3a0000000000p-42f, -0x1.8a892a0000000p-28f, 0x1.870faa0000000p-26f, -0x1.fd85480000000p-27f, 0x1.c813580000000p-27f, 0x1.386c400000000p-30f, 0x1.e3b8ce0000000p-27f, -0x1.89358a0000000p-28f, -0x1.7c48980000000p-29f, -0x1.6e53f00000000p-32f, -0x1.bffc200000000p-34f, -0x1.a10e080000000p-35f, -0x1.a10e080000000p-35f, -0x1.a10e080000000p-35f, -0x1.a10e080000000p-35f, -0x1.a10e080000000p-35f},  // lo
    {-0x1.20dd760000000p+0f, -0x1.5961f40000000p-1f, -0x1.1ee43e0000000p-1f, -0x1.babd0e0000000p-2f, -0x1.4369f60000000p-2f, -0x1.abaace0000000p-3f, -0x1.0c3d540000000p-3f, -0x1.3086d80000000p-4f, -0x1.5285d20000000p-5f, -0x1.5d84340000000p-6f, -0x1.6e4b460000000p-7f, -0x1.6c55c60000000p-8f, -0x1.6c55c60000000p-8f, -0x1.6c55c60000000p-8f, -0x1.6c55c60000000p-8f, -0x1.6c55c60000000p-8f},  // c1
    {0x1.0000620000000p+0f, 0x1.07d2ee0000000p-1f, 0x1.9dbe6a0000000p-2f, 0x1.2577420000000p-2f, 0x1.80ef900000000p-3f, 0x1.b56f460000000p-4f, 0x1.c8d0d00000000p-5f, 0x1.98958a0000000p-6f, 0x1.5d58100000000p-7f, 0x1.08cf820000000p-8f, 0x1.96a3e00000000p-10f, 0x1.1f3df00000000p-11f, 0x1.1f3df00000000p-11f, 0x1.1f3df00000000p-11f, 0x1.1f3df00000000p-11f, 0x1.1f3df00000000p-11f},  // c2
    {-0x1.8141300000000p-1f, -0x1.5e93ce0000000p-2f, -0x1.05ca980000000p-2f, -0x1.59c49c0000000p-3f, -0x1.9d587a0000000p-4f, -0x1.9b62de0000000p-5f, -0x1.6cb3420000000p-6f, -0x1.06321a0000000p-7f, -0x1.5e5f660000000p-9f, -0x1.8abd600000000p-11f, -0x1.bf4ee20000000p-13f, -0x1.c2cc7e0000000p-15f, -0x1.c2cc7e0000000p-15f, -0x1.c2cc7e0000000p-15f, -0x1.c2cc7e0000000p-15f, -0x1.c2cc7e0000000p-15f},  // c3
    {0x1.01a1020000000p-1f, 0x1.a20e020000000p-3f, 0x1.2b13060000000p-3f, 0x1.72d5800000000p-4f, 0x1.982dd20000000p-5f, 0x1.68a20c0000000p-6f, 0x1.13628e0000000p-7f, 0x1.435c540000000p-9f, 0x1.56345c0000000p-11f, 0x1.21a0240000000p-13f, 0x1.e7acca0000000p-16f, 0x1.6015240000000p-18f, 0x1.6015240000000p-18f, 0x1.6015240000000p-18f, 0x1.6015240000000p-18f, 0x1.6015240000000p-18f},  // c4
    {-0x1.5036640000000p-2f, -0x1.d5213a0000000p-4f, -0x1.abd0fe0000000p-4f, -0x1.6d4ad20000000p-5f, -0x1.7775680000000p-6f, -0x1.29d0780000000p-7f, -0x1.8de1f40000000p-9f, -0x1.8076800000000p-11f, -0x1.450ac40000000p-13f, -0x1.a2063e0000000p-16f, -0x1.07de680000000p-18f, -0x1.10f9800000000p-21f, -0x1.10f9800000000p-21f, -0x1.10f9800000000p-21f, -0x1.10f9800000000p-21f, -0x1.10f9800000000p-21f},  // c5
    {0x1.2fcb1e0000000p-2f, 0x1.052b060000000p-4f, 0x1.0761560000000p-4f, 0x1.5287fa0000000p-6f, 0x1.4b49260000000p-7f, 0x1.d212e60000000p-9f, 0x1.12583e0000000p-10f, 0x1.ba53be0000000p-13f, 0x1.2e5e340000000p-15f, 0x1.29d1e20000000p-18f, 0x1.1af6800000000p-21f, 0x1.a6ab160000000p-25f, 0x1.a6ab160000000p-25f, 0x1.a6ab160000000p-25f, 0x1.a6ab160000000p-25f, 0x1.a6ab160000000p-25f},  // c6
    {-0x1.9dfa320000000p-2f, 0x1.b7713e0000000p-2f, 0x1.0294ba0000000p+2f, -0x1.4e1a740000000p-6f, -0x1.24ea920000000p-8f, -0x1.4e62f00000000p-10f, -0x1.bd8be00000000p-13f, -0x1.ff0e680000000p-15f, -0x1.3d8ff20000000p-17f, -0x1.bf408c0000000p-21f, -0x1.2751600000000p-24f, -0x1.642acc0000000p-28f, -0x1.642acc0000000p-28f, -0x1.642acc0000000p-28f, -0x1.642acc0000000p-28f, -0x1.642acc0000000p-28f},  // c7
    {0x1.6782c20000000p-2f, -0x1.dbb4760000000p-1f, -0x1.e9f79a0000000p+1f, 0x1.51ebf40000000p-7f, -0x1.0d71c20000000p-8f, 0x1.d8415e0000000p-12f, 0x1.7326ec0000000p-15f, 0x1.1537020000000p-16f, 0x1.23b1300000000p-19f, 0x1.3585620000000p-23f, 0x1.31912e0000000p-27f, 0x1.0fde1a0000000p-31f, 0x1.0fde1a0000000p-31f, 0x1.0fde1a0000000p-31f, 0x1.0fde1a0000000p-31f, 0x1.0fde1a0000000p-31f},  // c8
};
#if defined(__AVX512F__)
// erfcx on [0, 1/4) and quarter-octaves up to 12 (AVX-512: 32-entry permutes); worst fit error 0.049 units of 2^-24
alignas(64) constexpr float kErfcxTable32[9][32] = {
    {0.0f, 0x1.2000000000000p-2f, 0x1.6000000000000p-2f, 0x1.a000000000000p-2f, 0x1.e000000000000p-2f, 0x1.2000000000000p-1f, 0x1.6000000000000p-1f, 0x1.a000000000000p-1f, 0x1.e000000000000p-1f, 0x1.2000000000000p+0f, 0x1.6000000000000p+0f, 0x1.a000000000000p+0f, 0x1.e000000000000p+0f, 0x1.2000000000000p+1f, 0x1.6000000000000p+1f, 0x1.a000000000000p+1f, 0x1.e000000000000p+1f, 0x1.2000000000000p+2f, 0x1.6000000000000p+2f, 0x1.a000000000000p+2f, 0x1.e000000000000p+2f, 0x1.2000000000000p+3f, 0x1.6000000000000p+3f, 0x1.6000000000000p+3f, 0x1.6000000000000p+3f, 0x1.6000000000000p+3f, 0x1.6000000000000p+3f, 0x1.6000000000000p+3f, 0x1.6000000000000p+3f, 0x1.6000000000000p+3f, 0x1.6000000000000p+3f, 0x1.6000000000000p+3f},  // center
    {0x1.0000000000000p+0f, 0x1.7ecff40000000p-1f, 0x1.6937160000000p-1f, 0x1.558ef40000000p-1f, 0x1.439ea40000000p-1f, 0x1.2b84f00000000p-1f, 0x1.0fce4e0000000p-1f, 0x1.f072400000000p-2f, 0x1.c7f8140000000p-2f, 0x1.9531e00000000p-2f, 0x1.5f88f60000000p-2f, 0x1.3583f60000000p-2f, 0x1.13e5740000000p-2f, 0x1.d944460000000p-3f, 0x1.8c9eb60000000p-3f, 0x1.54a7a00000000p-3f, 0x1.2a2af20000000p-3f, 0x1.f5b2a00000000p-4f, 0x1.9d8a900000000p-4f, 0x1.5f75c40000000p-4f, 0x1.3174300000000p-4f, 0x1.fe6cc40000000p-5f, 0x1.a273c60000000p-5f, 0x1.a273c60000000p-5f, 0x1.a273c60000000p-5f, 0x1.a273c60000000p-5f, 0x1.a273c60000000p-5f, 0x1.a273c60000000p-5f, 0x1.a273c60000000p-5f, 0x1.a273c60000000p-5f, 0x1.a273c60000000p-5f, 0x1.a273c60000000p-5f},  // hi
    {-0x1.f564e80000000p-32f, -0x1.37ef0e0000000p-26f, 0x1.83822c0000000p-26f, -0x1.da28300000000p-26f, -0x1.2f85660000000p-26f, 0x1.db85620000000p-27f, 0x1.2dbace0000000p-26f, -0x1.4a63480000000p-31f, -0x1.f637760000000p-28f, 0x1.362cde0000000p-27f, -0x1.a1859e0000000p-27f, 0x1.910dd40000000p-28f, 0x1.db034e0000000p-29f, 0x1.ac79720000000p-28f, 0x1.1fef180000000p-28f, 0x1.1a9a2a0000000p-28f, -0x1.8fac080000000p-29f, 0x1.27ec480000000p-30f, -0x1.bae8ac0000000p-29f, 0x1.74c3440000000p-31f, -0x1.64e4c40000000p-29f, 0x1.4225520000000p-30f, -0x1.036b000000000p-30f, -0x1.036b000000000p-30f, -0x1.036b000000000p-30f, -0x1.036b000000000p-30f, -0x1.036b000000000p-30f, -0x1.036b000000000p-30f, -0x1.036b000000000p-30f, -0x1.036b000000000p-30f, -0x1.036b000000000p-30f, -0x1.036b000000000p-30f},  // lo
    {-0x1.20dd720000000p+0f, -0x1.6a65f20000000p-1f, -0x1.49650a0000000p-1f, -0x1.2c36c40000000p-1f, -0x1.1256300000000p-1f, -0x1.e18ab80000000p-2f, -0x1.97fe7c0000000p-2f, -0x1.5cbc2c0000000p-2f, -0x1.2c84b00000000p-2f, -0x1.e78b360000000p-3f, -0x1.797a640000000p-3f, -0x1.2b11e60000000p-3f, -0x1.e365800000000p-4f, -0x1.6a70d40000000p-4f, -0x1.0305780000000p-4f, -0x1.82a8520000000p-5f, -0x1.2aa6500000000p-5f, -0x1.aa3eba0000000p-6f, -0x1.238ca80000000p-6f, -0x1.a6e2d00000000p-7f, -0x1.4044560000000p-7f, -0x1.c0466e0000000p-8f, -0x1.2ddd3e0000000p-8f, -0x1.2ddd3e0000000p-8f, -0x1.2ddd3e0000000p-8f, -0x1.2ddd3e0000000p-8f, -0x1.2ddd3e0000000p-8f, -0x1.2ddd3e0000000p-8f, -0x1.2ddd3e0000000p-8f, -0x1.2ddd3e0000000p-8f, -0x1.2ddd3e0000000p-8f, -0x1.2ddd3e0000000p-8f},  // c1
    {0x1.fffe820000000p-1f, 0x1.18e3480000000p-1f, 0x1.eff8b60000000p-2f, 0x1.b731660000000p-2f, 0x1.860c780000000p-2f, 0x1.482bda0000000p-2f, 0x1.071da80000000p-2f, 0x1.aa32b80000000p-3f, 0x1.5c775e0000000p-3f, 0x1.05e7260000000p-3f, 0x1.7013440000000p-4f, 0x1.0a15ac0000000p-4f, 0x1.8a6efe0000000p-5f, 0x1.0615680000000p-5f, 0x1.43b98c0000000p-6f, 0x1.a7eddc0000000p-7f, 0x1.22f0660000000p-7f, 0x1.62c12e0000000p-8f, 0x1.95252c0000000p-9f, 0x1.f75ef80000000p-10f, 0x1.4d07bc0000000p-10f, 0x1.8763780000000p-11f, 0x1.b1c8940000000p-12f, 0x1.b1c8940000000p-12f, 0x1.b1c8940000000p-12f, 0x1.b1c8940000000p-12f, 0x1.b1c8940000000p-12f, 0x1.b1c8940000000p-12f, 0x1.b1c8940000000p-12f, 0x1.b1c8940000000p-12f, 0x1.b1c8940000000p-12f, 0x1.b1c8940000000p-12f},  // c2
    {-0x1.81039a0000000p-1f, -0x1.79c1520000000p-2f, -0x1.4594cc0000000p-2f, -0x1.1967740000000p-2f, -0x1.e7fe640000000p-3f, -0x1.8be5760000000p-3f, -0x1.2eccfc0000000p-3f, -0x1.d440e40000000p-4f, -0x1.6dc44e0000000p-4f, -0x1.0132c00000000p-4f, -0x1.4bcbe60000000p-5f, -0x1.ba05fc0000000p-6f, -0x1.2efc2c0000000p-6f, -0x1.687fb80000000p-7f, -0x1.84e8c80000000p-8f, -0x1.c24b0a0000000p-9f, -0x1.1435340000000p-9f, -0x1.21886a0000000p-10f, -0x1.1594120000000p-11f, -0x1.2875c20000000p-12f, -0x1.5781d60000000p-13f, -0x1.53b79a0000000p-14f, -0x1.366f4e0000000p-15f, -0x1.366f4e0000000p-15f, -0x1.366f4e0000000p-15f, -0x1.366f4e0000000p-15f, -0x1.366f4e0000000p-15f, -0x1.366f4e0000000p-15f, -0x1.366f4e0000000p-15f, -0x1.366f4e0000000p-15f, -0x1.366f4e0000000p-15f, -0x1.366f4e0000000p-15f},  // c3
    {0x1.fcc9d80000000p-2f, 0x1.c75bac0000000p-3f, 0x1.8021b00000000p-3f, 0x1.44fac00000000p-3f, 0x1.13dec60000000p-3f, 0x1.b19d3a0000000p-4f, 0x1.3e0d840000000p-4f, 0x1.d7f58a0000000p-5f, 0x1.61fab60000000p-5f, 0x1.d4e1060000000p-6f, 0x1.17e7b20000000p-6f, 0x1.5a168a0000000p-7f, 0x1.b99c120000000p-8f, 0x1.da53560000000p-9f, 0x1.c2c57a0000000p-10f, 0x1.d0867e0000000p-11f, 0x1.fff1c60000000p-12f, 0x1.cfffb00000000p-13f, 0x1.774c240000000p-14f, 0x1.59b0560000000p-15f, 0x1.5f88560000000p-16f, 0x1.253b460000000p-17f, 0x1.ba9bc80000000p-19f, 0x1.ba9bc80000000p-19f, 0x1.ba9bc80000000p-19f, 0x1.ba9bc80000000p-19f, 0x1.ba9bc80000000p-19f, 0x1.ba9bc80000000p-19f, 0x1.ba9bc80000000p-19f, 0x1.ba9bc80000000p-19f, 0x1.ba9bc80000000p-19f, 0x1.ba9bc80000000p-19f},  // c4
    {-0x1.20b9220000000p-2f, -0x1.aeac540000000p-3f, -0x1.0070b20000000p-4f, -0x1.f450f60000000p-6f, 0x1.c5b5820000000p-7f, -0x1.d035540000000p-5f, -0x1.3756a60000000p-5f, -0x1.b43cce0000000p-6f, -0x1.5aacf20000000p-6f, -0x1.947d780000000p-7f, -0x1.c1f0380000000p-8f, -0x1.fc94e20000000p-9f, -0x1.2eebd60000000p-9f, -0x1.2f5f920000000p-10f, -0x1.fccac40000000p-12f, -0x1.d46e040000000p-13f, -0x1.d080f40000000p-14f, -0x1.7383360000000p-15f, -0x1.fb31de0000000p-17f, -0x1.938dfa0000000p-18f, -0x1.67f7f20000000p-19f, -0x1.00aeac0000000p-20f, -0x1.3e68100000000p-22f, -0x1.3e68100000000p-22f, -0x1.3e68100000000p-22f, -0x1.3e68100000000p-22f, -0x1.3e68100000000p-22f, -0x1.3e68100000000p-22f, -0x1.3e68100000000p-22f, -0x1.3e68100000000p-22f, -0x1.3e68100000000p-22f, -0x1.3e68100000000p-22f},  // c5
    {0x1.b730c20000000p-4f, 0x1.02c0960000000p-3f, 0x1.811dca0000000p-6f, 0x1.7cde720000000p-8f, -0x1.c4fdbc0000000p-6f, 0x1.b416e00000000p-6f, 0x1.1c27580000000p-6f, 0x1.7bfe0c0000000p-7f, 0x1.23178c0000000p-7f, 0x1.4994d00000000p-8f, 0x1.57fd300000000p-9f, 0x1.69742a0000000p-10f, 0x1.9070920000000p-11f, 0x1.7200480000000p-12f, 0x1.14ece80000000p-13f, 0x1.c9ac480000000p-15f, 0x1.9b6f240000000p-16f, 0x1.1f28740000000p-17f, 0x1.4db7ae0000000p-19f, 0x1.ccda6c0000000p-21f, 0x1.6af68e0000000p-22f, 0x1.b629220000000p-24f, 0x1.c2bad40000000p-26f, 0x1.c2bad40000000p-26f, 0x1.c2bad40000000p-26f, 0x1.c2bad40000000p-26f, 0x1.c2bad40000000p-26f, 0x1.c2bad40000000p-26f, 0x1.c2bad40000000p-26f, 0x1.c2bad40000000p-26f, 0x1.c2bad40000000p-26f, 0x1.c2bad40000000p-26f},  // c6
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
  Vf v = a - lookup16(kErfTable[0], k);
  Vf p = madd(v, lookup16(kErfTable[8], k), lookup16(kErfTable[7], k));
  p = madd(p, v, lookup16(kErfTable[6], k));
  p = madd(p, v, lookup16(kErfTable[5], k));
  p = madd(p, v, lookup16(kErfTable[4], k));
  p = madd(p, v, lookup16(kErfTable[3], k));
  Vf r = madd(v, p, lookup16(kErfTable[2], k)) + lookup16(kErfTable[1], k);
  r = select(a < 0.5f, small, r);
  r = select(a >= 4.0f, splat(1.0f), r);
  return copysign(r, x);
}

// erfc(a) = e^(-a^2) Q(a) for a >= 0 with Q = erfcx tabulated on [0, 1/4) and
// half-octaves [1/4, 3/8), [3/8, 1/2), ..., [8, 12), Q = hi + w; e^(-a^2) =
// 2^n (1 + e) from the exact two-part square, and erfc(a) = 2^n (hi + (w + Q e)),
// scaled last (results into the subnormal range round once). erfc(x) =
// 2 - erfc(-x) for x < 0.
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
  Vf v = a - lookup32(kErfcxTable32[0], k);
  Vf q = madd(v, lookup32(kErfcxTable32[8], k), lookup32(kErfcxTable32[7], k));
  q = madd(q, v, lookup32(kErfcxTable32[6], k));
  q = madd(q, v, lookup32(kErfcxTable32[5], k));
  q = madd(q, v, lookup32(kErfcxTable32[4], k));
  q = madd(q, v, lookup32(kErfcxTable32[3], k));
  Vf hi = lookup32(kErfcxTable32[1], k);
  Vf w = madd(v, q, lookup32(kErfcxTable32[2], k));
#else
  Vi k = ((Vi)a >> 22) - 249;  // exponent and first mantissa bit: <= 11 (NaN: out of range, harmless)
  k = k < 0 ? 0 : k;
  Vf v = a - lookup16(kErfcxTable[0], k);
  Vf q = madd(v, lookup16(kErfcxTable[10], k), lookup16(kErfcxTable[9], k));
  q = madd(q, v, lookup16(kErfcxTable[8], k));
  q = madd(q, v, lookup16(kErfcxTable[7], k));
  q = madd(q, v, lookup16(kErfcxTable[6], k));
  q = madd(q, v, lookup16(kErfcxTable[5], k));
  q = madd(q, v, lookup16(kErfcxTable[4], k));
  q = madd(q, v, lookup16(kErfcxTable[3], k));
  Vf hi = lookup16(kErfcxTable[1], k);
  Vf w = madd(v, q, lookup16(kErfcxTable[2], k));
#endif
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
