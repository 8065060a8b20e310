#pragma once
// Vector forms of fmod, remainder, floor division, atan2, pow and erfinv
// (see docs/decisions/0012-vector-binary-math.md), and a two-input loop for
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
  const double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  Vd r = (x + kMagic) - kMagic;
  r = select(r > x, r - 1.0, r);
  return select(abs(x) < 4503599627370496.0, copysign(r, x), x);
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
    if constexpr (kFma) rem = madd(-q, d, r);
    else rem = r - q * d;
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
