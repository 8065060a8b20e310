#pragma once
// Vector forms of fmod, remainder, floor division, atan2, pow and erfinv
// (see docs/decisions/0014-vector-binary-math.md), and a two-input loop for
// double.

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/VecMath.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace vecmath {

EMBER_VEC_INLINE Vd select(Vl mask, Vd a, Vd b) { return mask ? a : b; }
EMBER_VEC_INLINE Vd abs(Vd x) { return (Vd)((Vl)x & 0x7fffffffffffffffLL); }
EMBER_VEC_INLINE Vd copysign(Vd mag, Vd sign) {
  return (Vd)(((Vl)mag & 0x7fffffffffffffffLL) | ((Vl)sign & (int64_t)0x8000000000000000ULL));
}

EMBER_VEC_INLINE bool any(Vl mask) { return vecmath::any((Vi)mask); }

// floor(x) for 0 <= x < 2^52 (adding and removing 2^52 rounds to nearest).
EMBER_VEC_INLINE Vd floor_small(Vd x) {
  const double kMagic = 4503599627370496.0;
  Vd r = (x + kMagic) - kMagic;
  return select(r > x, r - 1.0, r);
}

EMBER_VEC_INLINE Vd floor(Vd x) {
#if defined(__AVX512F__)
  return (Vd)_mm512_roundscale_pd((__m512d)x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
#elif defined(__AVX2__)
  return (Vd)_mm256_floor_pd((__m256d)x);
#else
  const Vd a = abs(x);
  Vd r = copysign((a + 4503599627370496.0) - 4503599627370496.0, x);  // nearest, for |x| < 2^52
  r = select(r > x, r - 1.0, r);
  return select(a < 4503599627370496.0, r, x);
#endif
}

// Note [Exact vector fmod]
// fmod(a, b) is exactly representable, and so is every partial remainder of
// long division: with r = |a| and d = |b| * 2^k (exact), q = floor(r / d)
// and r - q d are computed so that they are exact, and k is lowered step by
// step to 0. The quotient r / d is kept below 2^(c+1) by the choice of k,
// where c bits per step fit the arithmetic:
// - float (c = 26, computed in double): q has at most 28 bits and d 24, so
//   q * d is an exact double, and r - q * d is exact because its value is a
//   multiple of d's last bit and smaller than 2d. No FMA needed.
// - double (c = 50): r - q * d is a single FMA, exact for the same reason.
// The rounded quotient is never below floor(r / d) and at most one above it,
// so one conditional add of d fixes a negative remainder. Exponents come
// from the bits, so the double version needs a normal |b| (subnormal
// divisors take the scalar loop). Lanes with small quotients finish after
// one step; the loop runs until every lane has k = 0 (at most 11 steps for
// float, 42 for double).
template <int kBits, bool kFma>
EMBER_VEC_INLINE Vd fmod_abs(Vd r, Vd d0) {
  const Vl eb = (Vl)d0 >> 52;
  for (;;) {
    Vl k = ((Vl)r >> 52) - eb - kBits;
    k = k < 0 ? Vl{} : k;
    const Vd d = (Vd)((Vl)d0 + (k << 52));
    const Vd q = floor_small(r / d);
    Vd rem;
    if constexpr (kFma)
      rem = madd(-q, d, r);
    else
      rem = r - q * d;
    r = select(rem < 0.0, rem + d, rem);
    if (!any(k > 0)) return r;
  }
}

// fmod for float: NaN for a non-finite a, a NaN b or b == 0; a for an
// infinite b; else the exact remainder with the sign of a.
EMBER_VEC_INLINE Vf fmod(Vf a, Vf b) {
  const Vf aa = abs(a), ab = abs(b);
  const Vi nan_lane = (aa == INFINITY) | (a != a) | (b != b) | (b == 0.0f);
  const Vi ok = ~nan_lane & (ab != INFINITY);
  const Vf ra = select(ok, aa, splat(0.0f)), rb = select(ok, ab, splat(1.0f));
  Vd alo, ahi, blo, bhi;
  detail::widen(ra, alo, ahi);
  detail::widen(rb, blo, bhi);
  alo = fmod_abs<26, false>(alo, blo);
  ahi = fmod_abs<26, false>(ahi, bhi);
  Vf r = copysign(detail::narrow(alo, ahi), a);
  r = select(ok, r, a);
  return select(nan_lane, splat(std::numeric_limits<float>::quiet_NaN()), r);
}

// fmod for double; lanes with a subnormal divisor go through libm, as does
// every lane without FMA (the kernels then keep their scalar loops).
EMBER_VEC_INLINE Vd fmod(Vd a, Vd b) {
#if !EMBER_VEC_HAS_FMA
  Vd r;
  for (int i = 0; i < kLanesD; ++i) r[i] = std::fmod(a[i], b[i]);
  return r;
#else
  const Vd aa = abs(a), ab = abs(b);
  const Vl nan_lane = (aa == INFINITY) | (a != a) | (b != b) | (b == 0.0);
  const Vl ok = ~nan_lane & (ab != INFINITY);
  if (__builtin_expect(any(ok & (ab < 2.2250738585072014e-308)), 0)) {
    Vd r;
    for (int i = 0; i < kLanesD; ++i) r[i] = std::fmod(a[i], b[i]);
    return r;
  }
  Vd r = fmod_abs<50, true>(select(ok, aa, splatd(0.0)), select(ok, ab, splatd(1.0)));
  r = select(ok, copysign(r, a), a);
  return select(nan_lane, splatd(std::numeric_limits<double>::quiet_NaN()), r);
#endif
}

// Python's remainder: fmod moved into the sign of b (one rounding of mod + b).
template <typename V>
EMBER_VEC_INLINE V remainder(V a, V b) {
  const V mod = fmod(a, b);
  const auto fix = (mod != 0) & ((b < 0) != (mod < 0));
  return fix ? mod + b : mod;
}

// Python's floor division (as the scalar float_div_floor): the quotient of
// a - fmod(a, b), moved down by one where the remainder's sign differs from
// b's and rounded to the nearest integer; a / b for b == 0, a signed zero
// for a zero quotient.
template <typename V>
EMBER_VEC_INLINE V div_floor(V a, V b) {
  const V basic = a / b;
  const V mod = fmod(a, b);
  V div = (a - mod) / b;
  const auto fix = (mod != 0) & ((b < 0) != (mod < 0));
  div = fix ? div - 1 : div;
  V q = floor(div);
  q = (div - q > V{} + 0.5) ? q + 1 : q;
  q = (div == 0) ? copysign(V{}, basic) : q;
  return (b == 0) ? basic : q;
}

// ---- float functions computed in double (Note [Float functions through double]) ----
// Note [Float functions through double]
// atan2, pow and erfinv of float (and float16/bfloat16) run on the two
// double halves of the vector with errors near 1e-10 relative, so that the
// one rounding to float at the end is the only visible error: results are
// the correctly rounded ones except where the exact value lies within
// about 1e-3 ulp of a rounding boundary (measured maxima in decision 0014).

namespace detail {

// 1/d to about 1e-16 relative without a division (a division of double
// vectors costs about as much as the rest of these functions): an
// approximate reciprocal refined by Newton steps, each doubling its bits.
// kFull: to about 1e-16; else to about 4e-9.
template <bool kFull>
EMBER_VEC_INLINE Vd recip_d(Vd d) {
#if defined(__AVX512F__)
  Vd r = (Vd)_mm512_rcp14_pd((__m512d)d);  // 14 bits
  constexpr int kSteps = kFull ? 2 : 1;
#elif defined(__AVX2__)
  Vd r = (Vd)_mm256_cvtps_pd(_mm_rcp_ps(_mm256_cvtpd_ps((__m256d)d)));  // 12 bits
  constexpr int kSteps = kFull ? 3 : 2;
#elif defined(__SSE2__)
  Vd r = (Vd)_mm_cvtps_pd(_mm_rcp_ps(_mm_cvtpd_ps((__m128d)d)));
  constexpr int kSteps = kFull ? 3 : 2;
#else
  Vd r = 1.0 / d;
  constexpr int kSteps = 0;
#endif
  for (int i = 0; i < kSteps; ++i) r = madd(r, madd(-d, r, splatd(1.0)), r);
  return r;
}

// log(u) for finite u > 0 with a normal exponent: u = 2^e m with m in
// [sqrt(1/2), sqrt(2)), log(m) = 2 s + s z Q(z) with s = (m - 1) / (m + 1),
// z = s^2, |s| < 0.1716, Q our fit (error 4e-19 of log m), so the result is
// within about 1 ulp. kFull false: absolute error about 2e-9 (1/(m + 1) to
// 4e-9, the atanh series to s^11), enough for float erfinv.
template <bool kFull = true>
EMBER_VEC_INLINE Vd log_accurate_d(Vd u) {
  Vd e;
  const Vd f = log_reduce(u, e);
#if EMBER_VEC_HAS_FMA
  const Vd s = f * recip_d<kFull>(f + 2.0);
#else
  const Vd s = kFull ? f / (f + 2.0) : f * recip_d<false>(f + 2.0);  // without FMA a division is cheaper
#endif
  const Vd z = s * s;
  if constexpr (!kFull) {
    const Vd p = poly_d(z, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11);
    return madd(e, 0.69314718055994530942, madd(s * z, p, s + s));
  }
  const Vd q = poly_d(z, 0.666666666666681, 0.3999999999901436, 0.28571428818475675, 0.22222191647392284,
                      0.18183891215094503, 0.15306331307486368, 0.14868079918568436);
  const Vd logm = madd(s * z, q, s + s);
  return madd(e, 6.93147180369123816490e-01, madd(e, 1.90821492927058770002e-10, logm));
}

// e^x in double to about 1e-14 relative (for float results): reduction by
// ln 2, degree-10 Taylor polynomial on |r| <= ln2/2 (truncation 7e-12), 2^n
// applied in two factors; +-inf, NaN and the range limits as vecmath::exp.
EMBER_VEC_INLINE Vd exp_for_float(Vd x) {
  const double kMagic = 6755399441055744.0;
  const Vd xc = select(x > 200.0, splatd(200.0), select(x < -200.0, splatd(-200.0), x));
  const Vd t = madd(xc, 1.4426950408889634074, kMagic);
  const Vd n = t - kMagic;
  Vd r = madd(n, -6.93147180369123816490e-01, xc);
  r = madd(n, -1.90821492927058770002e-10, r);
  Vd p = madd(r, 1.0 / 3628800.0, 1.0 / 362880.0);
  p = madd(p, r, splatd(1.0 / 40320.0));
  p = madd(p, r, splatd(1.0 / 5040.0));
  p = madd(p, r, splatd(1.0 / 720.0));
  p = madd(p, r, splatd(1.0 / 120.0));
  p = madd(p, r, splatd(1.0 / 24.0));
  p = madd(p, r, splatd(1.0 / 6.0));
  p = madd(p, r, splatd(0.5));
  p = madd(p, r, splatd(1.0));
  p = madd(p, r, splatd(1.0));
  const Vl ni = (Vl)t - (Vl)splatd(kMagic);
  const Vl n1 = ni >> 1;
  const Vd res = p * (Vd)((n1 + 1023) << 52) * (Vd)((ni - n1 + 1023) << 52);
  return select(x != x, x, res);
}

// atan(y, x) for one double half: the ratio of the smaller to the larger
// magnitude, reduced by pi/4 above tan(pi/8) (one division either way),
// an odd polynomial on |u| <= tan(pi/8) (relative error 3e-12), then the
// octant moves.
EMBER_VEC_INLINE Vd atan2_half(Vd y, Vd x) {
  const double kPi = 3.14159265358979323846, kPi2 = 1.57079632679489661923, kPi4 = 0.78539816339744830962;
  const Vd ax = abs(x), ay = abs(y);
  const Vl swap = ay > ax;
  const Vd num = select(swap, ax, ay), den = select(swap, ay, ax);
  const Vl big = (num > den * 0.41421356237309503) | (num == INFINITY);  // both infinite: pi/4
  Vd u = select(big, num - den, num) / select(big, num + den, den);
  u = select((den == 0.0) | (num == INFINITY), splatd(0.0), u);
  const Vd z = u * u;
  const Vd p = poly_d(z, -0.33333333331504367, 0.1999999894359839, -0.14285614280228706, 0.11107538716060847,
                      -0.09029469483722348, 0.0713782527094078, -0.04048051304859524);
  Vd r = madd(u * z, p, u) + select(big, splatd(kPi4), splatd(0.0));
  r = select(swap, kPi2 - r, r);
  r = select((Vl)x < 0, kPi - r, r);
  r = copysign(r, y);
  return select((x != x) | (y != y), x + y, r);
}

// x^y for one double half holding float values: exp(y log|x|) in double,
// the special cases of C's pow settled by selects.
EMBER_VEC_INLINE Vd pow_half(Vd x, Vd y) {
  const Vd ax = abs(x);
  // Common case first: x > 0 and y finite in every lane need no fixing.
  if (__builtin_expect(!any(~((x > 0.0) & (ax < INFINITY) & (abs(y) < INFINITY))), 1)) {
    return exp_for_float(y * log_accurate_d(x));
  }
  Vd lg = log_accurate_d(select((ax == 0.0) | (ax == INFINITY) | (ax != ax), splatd(1.0), ax));
  lg = select(ax == 0.0, splatd(-INFINITY), lg);
  lg = select(ax == INFINITY, splatd(INFINITY), lg);
  lg = select(ax != ax, ax, lg);
  Vd r = exp_for_float(y * lg);
  // 0 * inf cases: y == 0 (any x) and |x| == 1 with infinite y give 1.
  r = select((y == 0.0) | (x == 1.0) | ((ax == 1.0) & (abs(y) == INFINITY)), splatd(1.0), r);
  // Negative x (and -0): odd integral y negates, non-integral y gives NaN
  // for finite x < 0.
  const Vd fy = floor(y);
  const Vl integral = fy == y;
  const Vl odd = integral & (abs(y) < 9007199254740992.0) & (floor(y * 0.5) != y * 0.5);
  const Vl neg = (Vl)x < 0;
  r = select(neg & odd, -r, r);
  return select((x < 0.0) & (ax != INFINITY) & ~integral & (y == y), splatd(std::numeric_limits<double>::quiet_NaN()),
                r);
}

// erfinv for one double half holding float values in (-1, 1): with
// w = -log(1 - y^2) (the product (1 - y)(1 + y) is exact), erfinv(y) / y is
// a polynomial in w below 6.25 (|y| < 0.998) and in sqrt(w) above, up to
// w = 16 (|y| = 1 - 5.6e-8); our fits, relative errors 5.7e-10 and 8.7e-11.
// kFullLog: the log to 1e-15 (for double y, whose 1 - y^2 is rounded).
template <bool kFullLog = false>
EMBER_VEC_INLINE Vd erfinv_half(Vd y) {
  const Vd w = -log_accurate_d<kFullLog>((1.0 - y) * (1.0 + y));
  const Vd c = w - 3.125;
  Vd p = madd(c, -1.3302182950832073e-11, 5.371648125443379e-12);
  p = madd(p, c, splatd(1.057881528833795e-09));
  p = madd(p, c, splatd(-4.74423432468846e-09));
  p = madd(p, c, splatd(-2.9195994781701194e-08));
  p = madd(p, c, splatd(4.2690190393833956e-07));
  p = madd(p, c, splatd(-1.3646157040448646e-06));
  p = madd(p, c, splatd(-1.389178499711204e-05));
  p = madd(p, c, splatd(0.000186731882766503));
  p = madd(p, c, splatd(-0.0007406916552173552));
  p = madd(p, c, splatd(-0.006033668687340885));
  p = madd(p, c, splatd(0.2401581787523201));
  p = madd(p, c, splatd(1.6536545623611494));
  const Vl tail = w >= 6.25;
  if (__builtin_expect(any(tail), 0)) {
    const Vd t = sqrt_d(w) - 3.25;
    Vd q = madd(t, -4.0568059242945736e-05, 8.148797658423246e-05);
    q = madd(q, t, splatd(1.9680659595781715e-05));
    q = madd(q, t, splatd(-0.00036133078083479795));
    q = madd(q, t, splatd(0.0009544877542346994));
    q = madd(q, t, splatd(-0.001686866442067292));
    q = madd(q, t, splatd(0.0024913016591988223));
    q = madd(q, t, splatd(-0.0037513415160975016));
    q = madd(q, t, splatd(0.005370920046345481));
    q = madd(q, t, splatd(1.0052589712692648));
    q = madd(q, t, splatd(3.083885610464063));
    p = select(tail, q, p);
  }
  return y * p;
}

// atan2 for double (FMA builds): the reduction of atan2_half carried in two
// parts. num - den and num + den are split exactly (TwoSum), u = n / d gets
// its residual from an FMA, atan(u) = u + u^3 P10(u^2) (our fit, 7.7e-18),
// and the moves by pi/4, pi/2 and pi are Fast2Sums with two-part constants,
// so the result is rounded about once (measured in decision 0014).
EMBER_VEC_INLINE Vd atan2_double(Vd y, Vd x) {
  const double kPiH = 3.141592653589793116, kPiL = 1.2246467991473532072e-16;
  const double kPi2H = 1.5707963267948965580, kPi2L = 6.1232339957367660359e-17;
  const double kPi4H = 0.78539816339744827900, kPi4L = 3.0616169978683830180e-17;
  const Vd ax = abs(x), ay = abs(y);
  const Vl swap = ay > ax;
  Vd num = select(swap, ax, ay), den = select(swap, ay, ax);
  const Vl both_inf = num == INFINITY;
  const Vl zero_u = (den == 0.0) | ((den == INFINITY) & ~both_inf);
  num = select(both_inf, splatd(1.0), select(zero_u, splatd(0.0), num));
  den = select(both_inf | zero_u, splatd(1.0), den);
  const Vd sc = select(den > 1e300, splatd(0.25), splatd(1.0));  // num + den stays finite
  num *= sc;
  den *= sc;
  const Vl big = num > den * 0.41421356237309503;
  // n = num - den (big) or num, d = num + den (big) or den, each as hi + lo.
  const auto two_sum = [](Vd a, Vd b, Vd& err) {
    const Vd s = a + b, bb = s - a;
    err = (a - (s - bb)) + (b - bb);
    return s;
  };
  Vd nl, dl;
  const Vd nb = two_sum(num, -den, nl), db = two_sum(num, den, dl);
  const Vd nh = select(big, nb, num), dh = select(big, db, den);
  nl = select(big, nl, splatd(0.0));
  dl = select(big, dl, splatd(0.0));
  const Vd u = nh / dh;
  const Vd ul = (madd(-u, dh, nh) + madd(-u, dl, nl)) / dh;
  const Vd z = u * u;
  const Vd p = poly_d(z, -0.3333333333333333, 0.19999999999995516, -0.14285714284665682, 0.11111111015187018,
                      -0.0909090457530649, 0.07692183125376892, -0.06664510525508936, 0.05858140904866328,
                      -0.050854078345894844, 0.03923044778479309, -0.019175404711104935);
  const Vd t = madd(u * z, p, ul / (1.0 + z));
  Vd hi = u + t;
  Vd lo = t - (hi - u);
  // + pi/4
  Vd h2 = kPi4H + hi;
  Vd l2 = (hi - (h2 - kPi4H)) + lo + kPi4L;
  hi = select(big, h2, hi);
  lo = select(big, l2, lo);
  // pi/2 - r
  h2 = kPi2H - hi;
  l2 = ((kPi2H - h2) - hi) + (kPi2L - lo);
  hi = select(swap, h2, hi);
  lo = select(swap, l2, lo);
  // pi - r
  h2 = kPiH - hi;
  l2 = ((kPiH - h2) - hi) + (kPiL - lo);
  const Vl neg = (Vl)x < 0;
  hi = select(neg, h2, hi);
  lo = select(neg, l2, lo);
  const Vd r = copysign(hi + lo, y);
  return select((x != x) | (y != y), x + y, r);
}
}  // namespace detail

EMBER_VEC_INLINE Vd atan2(Vd y, Vd x) { return detail::atan2_double(y, x); }

EMBER_VEC_INLINE Vf atan2(Vf y, Vf x) {
  Vd ylo, yhi, xlo, xhi;
  detail::widen(y, ylo, yhi);
  detail::widen(x, xlo, xhi);
  return detail::narrow(detail::atan2_half(ylo, xlo), detail::atan2_half(yhi, xhi));
}

EMBER_VEC_INLINE Vf pow(Vf x, Vf y) {
  Vd ylo, yhi, xlo, xhi;
  detail::widen(y, ylo, yhi);
  detail::widen(x, xlo, xhi);
  return detail::narrow(detail::pow_half(xlo, ylo), detail::pow_half(xhi, yhi));
}

// erfinv: NaN outside [-1, 1], +-inf at +-1.
EMBER_VEC_INLINE Vf erfinv(Vf y) {
  const Vf ay = abs(y);
  const Vi inside = ay < 1.0f;
  Vd lo, hi;
  detail::widen(select(inside, y, splat(0.0f)), lo, hi);
  Vf r = detail::narrow(detail::erfinv_half(lo), detail::erfinv_half(hi));
  r = select(ay == 1.0f, copysign(splat(INFINITY), y), r);
  return select(inside | (ay == 1.0f), r, splat(std::numeric_limits<float>::quiet_NaN()));
}

}  // namespace vecmath

// out[i] = f(a[i], b[i]) for double with f mapping two vectors of doubles to
// one; contiguous and broadcast (stride 0) operands run whole vectors, other
// layouts (and the tail) go through a padded buffer.
template <typename F>
__attribute__((flatten)) inline void vec_loop2_double(char** data, const int64_t* strides, int64_t n, const F& f) {
  constexpr int W = vecmath::kLanesD;
  int64_t i = 0;
  const bool out_c = strides[0] == sizeof(double);
  const bool a_c = strides[1] == sizeof(double), b_c = strides[2] == sizeof(double);
  if (out_c && (a_c || strides[1] == 0) && (b_c || strides[2] == 0)) {
    double* out = reinterpret_cast<double*>(data[0]);
    const double* a = reinterpret_cast<const double*>(data[1]);
    const double* b = reinterpret_cast<const double*>(data[2]);
    const vecmath::Vd as = vecmath::splatd(*a), bs = vecmath::splatd(*b);
    for (; i + 2 * W <= n; i += 2 * W) {
      const vecmath::Vd a0 = a_c ? vecmath::load(a + i) : as, a1 = a_c ? vecmath::load(a + i + W) : as;
      const vecmath::Vd b0 = b_c ? vecmath::load(b + i) : bs, b1 = b_c ? vecmath::load(b + i + W) : bs;
      const vecmath::Vd r0 = f(a0, b0), r1 = f(a1, b1);
      vecmath::store(out + i, r0);
      vecmath::store(out + i + W, r1);
    }
  }
  double ba[W], bb[W], bo[W];
  for (; i < n; i += W) {
    const int m = static_cast<int>(std::min<int64_t>(W, n - i));
    for (int j = 0; j < m; ++j) {
      ba[j] = at<double>(data[1], strides[1], i + j);
      bb[j] = at<double>(data[2], strides[2], i + j);
    }
    for (int j = m; j < W; ++j) ba[j] = bb[j] = 1.0;
    vecmath::store(bo, f(vecmath::load(ba), vecmath::load(bb)));
    for (int j = 0; j < m; ++j) at<double>(data[0], strides[0], i + j) = bo[j];
  }
}

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
