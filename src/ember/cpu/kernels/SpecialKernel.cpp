// Special-function loops (pointwise kernels of ops.yaml), compiled once per CPU
// capability. float16 and bfloat16 compute in float, as PyTorch.
//
// The scalar formulas (digamma, the Bessel functions, zeta, the orthogonal
// polynomials, ...) are in ops/SpecialMath.h, shared with the CUDA kernels
// (Note [Special functions follow PyTorch's formulas]).
//
// Note [lgamma precision]
// PyTorch's lgamma is SLEEF's (within 1 ulp, nearly always correctly
// rounded). libm's lgammaf is off by up to a few ulps, so float inputs take
// vecmath::lgamma, computed in double and rounded once (correctly rounded
// for all but 2 floats; Note [Vector lgamma]); double inputs use libm's
// lgamma (within a few ulps of SLEEF's). SLEEF's float lgamma overflows from
// 4.0371103e36 on, a little before the true result passes FLT_MAX: float
// results follow it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/cpu/kernels/VecMathBinary.h"
#include "ember/cpu/kernels/VecMathErfD.h"
#include "ember/cpu/kernels/VecMathGamma.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/SpecialMath.h"
#include "ember/ops/generated/PointwiseStubs.h"
#include "ember/ops/native/LdexpStub.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

// Vector math that only this file's kernels use (shared functions are in
// VecMath*.h).
namespace vecmath {
namespace {

// hypot of floats in double: the squares are exact there and cannot
// overflow or underflow, so the result is rounded by their sum, the square
// root and the conversion to float, as libm's hypotf; inf wins over NaN.
EMBER_VEC_INLINE Vf hypot(Vf a, Vf b) {
  Vd alo, ahi, blo, bhi;
  detail::widen(a, alo, ahi);
  detail::widen(b, blo, bhi);
  const Vf r = detail::narrow(detail::sqrt_d(alo * alo + blo * blo), detail::sqrt_d(ahi * ahi + bhi * bhi));
  return select((abs(a) == INFINITY) | (abs(b) == INFINITY), splat(INFINITY), r);
}

// ---- Bessel functions on vectors ----------------------------------------------------------
// Note [Vector Bessel functions]
// j0 and the K functions evaluate PyTorch's scalar formulas (ops/SpecialMath.h)
// lane by lane in vectors: the same constants and the same roundings, each
// fused multiply-add spelled out where PyTorch's build fuses one, so the
// results are bit-identical to the scalar formulas. The polynomial and
// Chebyshev series run on whole vectors; exp, log and j0's asymptotic form
// (x > 5) call the scalar functions for the lanes that need them, since a
// vector exp or log would round differently from libm's.

template <typename T>
struct LaneTypes;
template <>
struct LaneTypes<float> {
  using V = Vf;
  using Mask = Vi;
  static constexpr int kCount = kLanesF;
};
template <>
struct LaneTypes<double> {
  using V = Vd;
  using Mask = Vl;
  static constexpr int kCount = kLanesD;
};
template <typename T>
using VecOf = typename LaneTypes<T>::V;
template <typename T>
using MaskOf = typename LaneTypes<T>::Mask;

template <typename T>
EMBER_VEC_INLINE VecOf<T> broadcast(T c) {
  return c - VecOf<T>{};
}
template <typename T>
EMBER_VEC_INLINE bool any_lane(MaskOf<T> m) {
  return any((Vi)m);
}
EMBER_VEC_INLINE Vf square_root(Vf x) { return sqrt(x); }
EMBER_VEC_INLINE Vd square_root(Vd x) { return detail::sqrt_d(x); }

// Horner's rule over len coefficients from the highest power down. The
// scalar loop starts from 0 * x + c[0], which is c[0] for finite x.
template <typename T>
EMBER_VEC_INLINE VecOf<T> horner(VecOf<T> x, const T* c, int len) {
  VecOf<T> r = broadcast(c[0]);
  for (int i = 1; i < len; ++i) r = madd(r, x, broadcast(c[i]));
  return r;
}

// Cephes' chbevl as special_math::chebyshev: b0 = y b1 - b2 + c[i], the
// product fused with the subtraction; coefficients rounded to T.
template <typename T, typename C>
EMBER_VEC_INLINE VecOf<T> chebyshev(VecOf<T> y, const C* c, int len) {
  using V = VecOf<T>;
  V b0 = broadcast(T(c[0])), b1{}, b2{};
  for (int i = 1; i < len; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = madd(y, b1, -b2) + T(c[i]);
  }
  return T(0.5) * (b0 - b2);
}

template <typename T>
EMBER_VEC_INLINE VecOf<T> bessel_j0(VecOf<T> x) {
  using V = VecOf<T>;
  using Mask = MaskOf<T>;
  x = x < T(0) ? -x : x;
  const V x2 = x * x;
  V r = (x2 - T(5.78318596294678452118e+00)) * (x2 - T(3.04712623436620863991e+01)) *
        horner<T>(x2, special_math::j0_table_rp<T>(), 4) / horner<T>(x2, special_math::j0_table_rq<T>(), 8);
  r = x < T(0.00001) ? T(1) - x2 * T(0.25) : r;
  const Mask far = !(x <= T(5));
  if (any_lane<T>(far)) {
    for (int j = 0; j < LaneTypes<T>::kCount; ++j) {
      if (far[j]) r[j] = special_math::bessel_asymptotic(0, false, x[j]);
    }
  }
  return r;
}

// K0 or K1 (kOrder), scaled by exp(x) or not. Zero, negative and NaN lanes
// take the scalar function.
template <typename T, int kOrder, bool kScaled>
EMBER_VEC_INLINE VecOf<T> bessel_k(VecOf<T> x) {
  using V = VecOf<T>;
  using Mask = MaskOf<T>;
  constexpr int kCount = LaneTypes<T>::kCount;
  const Mask near = (x > T(0)) & (x <= T(2));
  const Mask far = x > T(2);
  V r{};
  if (any_lane<T>(near)) {
    // The series in x^2 - 2 and I0 or I1's series in x/2 - 2, then per lane
    // log(x/2) I(x) + series (/ x for K1) with libm's exp and log.
    const V square = madd(x, x, broadcast(T(-2)));
    const V half = madd(x, broadcast(T(0.5)), broadcast(T(-2)));
    V series, i_series;
    if constexpr (kOrder == 0) {
      series = chebyshev<T>(square, special_math::k0_table_a<T>(), 10);
      i_series = chebyshev<T>(half, special_math::i0_table_a<T>(), 30);
    } else {
      series = chebyshev<T>(square, special_math::k1_table_a<T>(), 11) / x;
      i_series = chebyshev<T>(half, special_math::i1_table_a(), 29);
    }
    for (int j = 0; j < kCount; ++j) {
      if (!near[j]) continue;
      const T e = std::exp(x[j]);
      T value;
      if constexpr (kOrder == 0) {
        const T i0 = e * i_series[j];
        if constexpr (kScaled) {
          value = capability_fma(-std::log(T(0.5) * x[j]), i0, series[j]);
        } else {
          // The logarithm in double for float too (Note [Special functions follow PyTorch's formulas]).
          value = static_cast<T>(
              capability_fma(-std::log(0.5 * x[j]), static_cast<double>(i0), static_cast<double>(series[j])));
        }
      } else {
        const T i1 = i_series[j] * x[j] * e;
        value = capability_fma(std::log(T(0.5) * x[j]), i1, series[j]);
      }
      r[j] = kScaled ? value * e : value;
    }
  }
  if (any_lane<T>(far)) {
    const V series = kOrder == 0 ? chebyshev<T>(T(8) / x - T(2), special_math::k0_table_b<T>(), 25)
                                 : chebyshev<T>(T(8) / x - T(2), special_math::k1_table_b<T>(), 25);
    V value = series / square_root(x);
    if constexpr (!kScaled) {
      V e{};
      for (int j = 0; j < kCount; ++j) e[j] = far[j] ? std::exp(-x[j]) : T(0);
      value = e * series / square_root(x);
    }
    r = far ? value : r;
  }
  const Mask rest = ~(near | far);
  if (any_lane<T>(rest)) {
    for (int j = 0; j < kCount; ++j) {
      if (!rest[j]) continue;
      r[j] = kOrder == 0 ? special_math::bessel_k0<T, kScaled>(x[j]) : special_math::bessel_k1<T, kScaled>(x[j]);
    }
  }
  return r;
}
}  // namespace
}  // namespace vecmath

namespace {

using special_math::kPi;

// polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x) for n >= 2. The zeta sum runs
// in double for float and double, in float (rounded to T) for 16-bit T.
// fact is n! in Acc (computed once per call).
template <typename T, typename Acc>
Acc polygamma_value(Acc x, int64_t n, Acc fact) {
  Acc z;
  if constexpr (is_16bit_float_v<T>) {
    z = static_cast<Acc>(T(special_math::hurwitz_zeta<float>(static_cast<float>(n + 1), static_cast<float>(x))));
  } else {
    z = static_cast<Acc>(special_math::hurwitz_zeta<double>(static_cast<Acc>(n + 1), x));
  }
  return ((n % 2) ? Acc(1) : Acc(-1)) * fact * z;
}

// ---- loops -----------------------------------------------------------------------------------

// out = f(x) over the floating dtypes; f takes the computation type (float
// for 16-bit storage) and gets the storage type as its first template tag.
template <typename F>
void float_scalar_unary(const TensorIterator& it, const F& f) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      run_acc<scalar_t, scalar_t, 1>(it, [&](auto x) { return f(TypeTag<scalar_t>{}, x); });
    } else {
      EMBER_INTERNAL_ASSERT(false, "special kernel on ", scalar_type_name(it.common_dtype()));
    }
  });
}

template <typename F>
void float_scalar_binary(const TensorIterator& it, const F& f) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      run_acc<scalar_t, scalar_t, 2>(it, f);
    } else {
      EMBER_INTERNAL_ASSERT(false, "special kernel on ", scalar_type_name(it.common_dtype()));
    }
  });
}

template <typename T>
inline T logit_value(T x, T lo, T hi, bool clamp) {
  if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
  return x == T(1) ? std::numeric_limits<T>::infinity() : std::log(x / (T(1) - x));
}

void lgamma_kernel(const TensorIterator& it) {
  // See Note [lgamma precision] and Note [Vector lgamma]; with SLEEF, its own.
  if (sleefvec::map_unary(it, sleef::Lgamma) || sleefvec::map_unary_16bit(it, sleef::Lgamma)) return;
  float_unary(
      it,
      [](vecmath::Vf x) { return vecmath::select(x >= 4.0371103e36f, vecmath::splat(INFINITY), vecmath::lgamma(x)); },
      [](double x) {
        int sign;  // lgamma_r: std::lgamma writes the global signgam, racing across threads
        return lgamma_r(x, &sign);
      });
}
EMBER_REGISTER_POINTWISE(lgamma, &lgamma_kernel);

void digamma_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return special_math::digamma(x); });
}
EMBER_REGISTER_POINTWISE(digamma, &digamma_kernel);

void polygamma_kernel(const TensorIterator& it, int64_t n) {
  if (n == 0) return digamma_kernel(it);
  if (n == 1) return float_scalar_unary(it, [](auto, auto x) { return special_math::trigamma(x); });
  // n! once, in each computation type (before the threads start).
  const float fact_f = std::exp(std::lgamma(static_cast<float>(n) + 1.0f));
  const double fact_d = std::exp(std::lgamma(static_cast<double>(n) + 1.0));
  float_scalar_unary(it, [n, fact_f, fact_d](auto tag, auto x) {
    using scalar_t = typename decltype(tag)::type;
    using acc_t = decltype(x);
    return polygamma_value<scalar_t>(x, n, static_cast<acc_t>(std::is_same_v<acc_t, float> ? fact_f : fact_d));
  });
}
EMBER_REGISTER_POINTWISE(polygamma, &polygamma_kernel);

void i0_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return special_math::i0(x); });
}
EMBER_REGISTER_POINTWISE(i0, &i0_kernel);

void special_i1_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return special_math::i1(x); });
}
EMBER_REGISTER_POINTWISE(special_i1, &special_i1_kernel);

void sinc_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) {
    using acc_t = decltype(x);
    if (x == acc_t(0)) return acc_t(1);
    const acc_t p = static_cast<acc_t>(kPi) * x;
    return std::sin(p) / p;
  });
}
EMBER_REGISTER_POINTWISE(sinc, &sinc_kernel);

// deg2rad / rad2deg: a multiply by pi/180 (180/pi) in the computation type
// (float for float16/bfloat16), as PyTorch's multiply by a Python number.
void scale_kernel(const TensorIterator& it, double factor) {
  float_scalar_unary(it, [factor](auto, auto x) { return x * static_cast<decltype(x)>(factor); });
}
void deg2rad_kernel(const TensorIterator& it) { scale_kernel(it, 0.017453292519943295769236907684886); }
void rad2deg_kernel(const TensorIterator& it) { scale_kernel(it, 57.295779513082320876798154814105); }
EMBER_REGISTER_POINTWISE(deg2rad, &deg2rad_kernel);
EMBER_REGISTER_POINTWISE(rad2deg, &rad2deg_kernel);

void frac_kernel(const TensorIterator& it) {
#if defined(__AVX2__)
  float_unary(
      it, [](vecmath::Vf x) { return x - vecmath::round_dir<2>(x); },
      [](vecmath::Vd x) { return x - vecmath::round_dir<2>(x); });
#else
  float_unary(
      it, [](vecmath::Vf x) { return x - vecmath::round_dir<2>(x); }, [](double x) { return x - std::trunc(x); });
#endif
}
EMBER_REGISTER_POINTWISE(frac, &frac_kernel);

void logit_kernel(const TensorIterator& it, std::optional<double> eps) {
  // Without eps: no clamping; inputs are divided then logged as PyTorch's loop.
  const bool clamp = eps.has_value();
  const double param = eps.value_or(0.0);
  // PyTorch converts eps to the element type first, refusing one that overflows it.
  if (clamp) ::ember::native::math::check_scalar_fits(Scalar(param), it.common_dtype(), true, true);
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      using acc_t = opmath_t<scalar_t>;
      if constexpr (is_16bit_float_v<scalar_t>) {
        // float16/bfloat16 round every step to their own type, as PyTorch's
        // arithmetic on them does (bfloat16 0.999 is 1: logit is inf).
        const float lo = static_cast<float>(static_cast<scalar_t>(param));
        const float hi = static_cast<float>(static_cast<scalar_t>(1.0f - lo));
        run_acc<scalar_t, scalar_t, 1>(it, [=](float x) {
          if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
          const float d = static_cast<float>(static_cast<scalar_t>(1.0f - x));
          return std::log(static_cast<float>(static_cast<scalar_t>(x / d)));
        });
      } else if constexpr (std::is_same_v<scalar_t, float>) {
        const acc_t lo = static_cast<acc_t>(param);
        const acc_t hi = acc_t(1) - lo;
        using vecmath::Vf;
        const Vf vlo = vecmath::splat(lo), vhi = vecmath::splat(hi), one = vecmath::splat(1.0f);
        it.for_each([&](char** d, const int64_t* s, int64_t n) {
          vec_loop<scalar_t, 1>(d, s, n, [=](Vf x) {
            if (clamp) x = vecmath::select(x < vlo, vlo, vecmath::select(x > vhi, vhi, x));
            return vecmath::log(x / (one - x));
          });
        });
      } else {
        const acc_t lo = static_cast<acc_t>(param);
        const acc_t hi = acc_t(1) - lo;
        run_acc<scalar_t, scalar_t, 1>(it, [=](acc_t x) { return logit_value(x, lo, hi, clamp); });
      }
    }
  });
}
EMBER_REGISTER_POINTWISE(logit, &logit_kernel);

void signbit_kernel(const TensorIterator& it) {
  const ScalarType in_t = it.operand(1).dtype();
  EMBER_USE_BASELINE_KERNEL_FOR(in_t, native::signbit_stub, it);
  // A float's sign bit is the sign of its bits read as a signed integer
  // of the same width (this also keeps GCC 12 from an internal error on
  // vectorised std::signbit).
  dispatch_types(in_t, [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    using bits_t = std::conditional_t<
        sizeof(scalar_t) == 2, int16_t,
        std::conditional_t<sizeof(scalar_t) == 4, int32_t, std::conditional_t<sizeof(scalar_t) == 8, int64_t, int8_t>>>;
    using read_t = std::conditional_t<is_float_like_v<scalar_t>, bits_t, scalar_t>;
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      loop1<bool, read_t>(d, s, n, [](read_t x) {
        if constexpr (std::is_signed_v<read_t>) {
          return x < 0;
        } else {
          return false;
        }
      });
    });
  });
}
EMBER_REGISTER_POINTWISE(signbit, &signbit_kernel);

// ---- binary (floating common dtype) ------------------------------------------------

void hypot_kernel(const TensorIterator& it) {
  if (sleefvec::binary(
          it, sleef::Hypot, [](float a, float b) { return std::hypot(a, b); },
          [](double a, double b) { return std::hypot(a, b); })) {
    return;
  }
  float_map<2>(
      it, [](vecmath::Vf a, vecmath::Vf b) { return vecmath::hypot(a, b); },
      [](double a, double b) { return std::hypot(a, b); });
}
EMBER_REGISTER_POINTWISE(hypot, &hypot_kernel);

// ldexp's exact route: the exponent is converted to int (wrapping, as
// PyTorch's kernel does) and 16-bit floats are scaled in float32.
void ldexp_int_exponent_kernel(const TensorIterator& it) {
  const ScalarType e_t = it.operand(2).dtype();
  dispatch_types(it.operand(1).dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    using acc_t = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    auto run = [&](auto exp_tag) {
      using exp_t = typename decltype(exp_tag)::type;
      it.for_each([&](char** d, const int64_t* s, int64_t n) {
        loop2<scalar_t, scalar_t, exp_t>(d, s, n, [](scalar_t x, exp_t e) {
          return static_cast<scalar_t>(std::ldexp(static_cast<acc_t>(x), static_cast<int>(e)));
        });
      });
    };
    switch (e_t) {
      case ScalarType::Bool: return run(TypeTag<bool>{});
      case ScalarType::Byte: return run(TypeTag<uint8_t>{});
      case ScalarType::Char: return run(TypeTag<int8_t>{});
      case ScalarType::Short: return run(TypeTag<int16_t>{});
      case ScalarType::Int: return run(TypeTag<int32_t>{});
      case ScalarType::Long: return run(TypeTag<int64_t>{});
      default: EMBER_INTERNAL_ASSERT(false, "ldexp: integral exponent expected, got ", scalar_type_name(e_t));
    }
  });
}
EMBER_REGISTER_STUB_(ldexp, ::ember::native::ldexp_int_exponent_stub, &ldexp_int_exponent_kernel);

void copysign_kernel(const TensorIterator& it) {
  float_scalar_binary(it, [](auto a, auto b) { return std::copysign(a, b); });
}
EMBER_REGISTER_POINTWISE(copysign, &copysign_kernel);

// x * log(y) and x * log1p(y), 0 where x is 0 (unless y is NaN). float16 and
// bfloat16 round the logarithm to their type before the product, as
// PyTorch's math on them does.
template <bool kLog1p>
void xlogy_loop(const TensorIterator& it) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      run_acc<scalar_t, scalar_t, 2>(it, [](auto x, auto y) {
        using acc_t = decltype(x);
        if (std::isnan(y)) return std::numeric_limits<acc_t>::quiet_NaN();
        if (x == acc_t(0)) return acc_t(0);
        const acc_t l = static_cast<acc_t>(static_cast<scalar_t>(kLog1p ? std::log1p(y) : std::log(y)));
        return x * l;
      });
    }
  });
}
EMBER_REGISTER_POINTWISE(xlogy, &xlogy_loop<false>);
EMBER_REGISTER_POINTWISE(special_xlog1py, &xlogy_loop<true>);

// ---- more of torch.special -------------------------------------------------------------------

// float and double only, as PyTorch's kernels for these functions; other
// floating dtypes raise its NotImplementedError.
template <int N, typename F>
void float_double_loop(const TensorIterator& it, const char* name, const F& f) {
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float) return run_acc<float, float, N>(it, f);
  if (t == ScalarType::Double) return run_acc<double, double, N>(it, f);
  throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
}

// exp(x^2) erfc(x) in double. x^2 is split into its rounded value and the
// rounding error so that exp(x^2) keeps full precision; from x = 5 on, the
// continued fraction erfc(x) exp(x^2) sqrt(pi) = 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))).
constexpr double kErfcxFractionFrom = 2.0;
constexpr int kErfcxFractionTerms = 160;
inline double erfcx_double(double x) {
  if (std::isnan(x)) return x;
  const auto exp_square = [](double v) {
    const double hi = v * v;
    const double lo = std::fma(v, v, -hi);
    return std::exp(hi) * (1.0 + lo);
  };
  if (x < 0) {
    if (x < -26.7) return std::numeric_limits<double>::infinity();
    return 2.0 * exp_square(x) - erfcx_double(-x);
  }
  if (x < kErfcxFractionFrom) return exp_square(x) * std::erfc(x);
  constexpr double kInvSqrtPi = 0.56418958354775628694807945156077259;
  if (x > 1e9) return kInvSqrtPi / x;
  double tail = x;
  for (int k = kErfcxFractionTerms; k >= 1; --k) tail = x + (0.5 * k) / tail;
  return kInvSqrtPi / tail;
}

// erfcx in T: for negative x PyTorch's 2 exp(x^2) - erfcx(-x) with x^2
// rounded to T, as its loop.
template <typename T>
T erfcx_value(T x) {
  if (x < T(0)) {
    if (x < T(-26.7)) return std::numeric_limits<T>::infinity();
    const T twice_exp = T(2) * std::exp(x * x);
    if (x < T(-6.1)) return twice_exp;
    return twice_exp - static_cast<T>(erfcx_double(-x));
  }
  return static_cast<T>(erfcx_double(x));
}

// log of the standard normal distribution function: through erfcx below -1
// (no underflow), log1p(-erfc(x / sqrt 2) / 2) above, as PyTorch.
template <typename T>
T log_ndtr_value(T x) {
  const T t = x * T(0.70710678118654752440);
  if (x < T(-1)) return std::log(erfcx_value(-t) / T(2)) - t * t;
  return std::log1p(-std::erfc(t) / T(2));
}

// ---- ndtri and the incomplete gamma functions ----------------------------------------------------
// Note [ndtri and igamma in double]
// PyTorch evaluates Cephes' rational fits (ndtri) and Cephes/SciPy's igam
// (series, continued fraction, Temme's expansion for large a). Ember solves
// ndtri by Newton's method on erf near the median and on log_ndtr in the
// tails, and evaluates P(a, x) and Q(a, x) by their power series and
// continued fraction, all in double; float results are rounded once.

// x with Phi(x) = p, Phi the standard normal distribution function.
inline double ndtri_double(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  if (p > 0.75) return -ndtri_double(1.0 - p);  // 1 - p is exact here
  constexpr double kSqrt2 = 1.41421356237309504880, kSqrtHalfPi = 1.25331413731550025121;
  if (p >= 0.25) {
    // erf(x / sqrt 2) = 2p - 1 (exact), from erf's slope at 0.
    const double q = 2.0 * p - 1.0;
    double x = q * kSqrtHalfPi;
    for (int i = 0; i < 40; ++i) {
      const double step = (std::erf(x / kSqrt2) - q) * kSqrtHalfPi * std::exp(0.5 * x * x);
      x -= step;
      if (std::abs(step) <= 1e-17 * std::abs(x)) break;
    }
    return x;
  }
  // log Phi(x) = log p from Abramowitz and Stegun 26.2.23 (error below 4.5e-4).
  const double t = std::sqrt(-2.0 * std::log(p));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  const double log_p = std::log(p);
  constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  for (int i = 0; i < 40; ++i) {
    const double log_phi = log_ndtr_value(x);
    const double slope = kInvSqrt2Pi * std::exp(-0.5 * x * x - log_phi);  // phi(x) / Phi(x)
    const double step = (log_phi - log_p) / slope;
    x -= step;
    if (std::abs(step) <= 1e-17 * std::abs(x)) break;
  }
  return x;
}

void special_ndtri_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "ndtri_cpu", [](auto p) { return static_cast<decltype(p)>(ndtri_double(p)); });
}
EMBER_REGISTER_POINTWISE(special_ndtri, &special_ndtri_kernel);

template <bool kUpper>
void igamma_loop(const TensorIterator& it) {
  float_scalar_binary(it, [](auto a, auto x) {
    return static_cast<decltype(a)>(special_math::igamma(static_cast<double>(a), static_cast<double>(x), kUpper));
  });
}
EMBER_REGISTER_POINTWISE(igamma, &igamma_loop<false>);
EMBER_REGISTER_POINTWISE(igammac, &igamma_loop<true>);

void special_i0e_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return special_math::i0e(x); });
}
EMBER_REGISTER_POINTWISE(special_i0e, &special_i0e_kernel);

void special_i1e_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return special_math::i1e(x); });
}
EMBER_REGISTER_POINTWISE(special_i1e, &special_i1e_kernel);

// PyTorch's 16-bit entr rounds log(x) to the dtype (c10's log of a Half or
// BFloat16 returns one) before the product in float.
void special_entr_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto tag, auto x) {
    using scalar_t = typename decltype(tag)::type;
    using acc_t = decltype(x);
    if constexpr (is_16bit_float_v<scalar_t>) {
      if (x > acc_t(0)) return -x * static_cast<acc_t>(static_cast<scalar_t>(std::log(x)));
    }
    return special_math::entr(x);
  });
}
EMBER_REGISTER_POINTWISE(special_entr, &special_entr_kernel);

// erfcx on doubles holding values of T: vecmath's e^(a^2) erfc(a) for |x|
// up to 27.5 and, below 0, PyTorch's 2 exp(x^2) - erfcx(-x) with x^2 (square)
// rounded to T, as erfcx_value; other lanes (beyond 27.5, NaN) take erfcx_value.
template <typename T>
EMBER_VEC_INLINE vecmath::Vd erfcx_lanes(vecmath::Vd x, vecmath::Vd square) {
  using vecmath::Vd;
  const Vd a = x < 0.0 ? -x : x;
  const auto fitted = a <= 27.5;
  const Vd positive = vecmath::erfcx_nonnegative(fitted ? a : Vd{});
  const Vd twice_exp = 2.0 * vecmath::exp(square);
  Vd r = x < static_cast<double>(T(-6.1)) ? twice_exp : twice_exp - positive;
  r = x < 0.0 ? r : positive;
  if (vecmath::any((vecmath::Vi)~fitted)) {
    for (int j = 0; j < vecmath::kLanesD; ++j) {
      if (!fitted[j]) r[j] = erfcx_value(static_cast<T>(x[j]));
    }
  }
  return r;
}

void special_erfcx_kernel(const TensorIterator& it) {
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float) {
    return it.for_each([](char** d, const int64_t* s, int64_t n) {
      vec_loop<float, 1>(d, s, n, [](vecmath::Vf x) {
        vecmath::Vd lo, hi, square_lo, square_hi;
        vecmath::detail::widen(x, lo, hi);
        vecmath::detail::widen(x * x, square_lo, square_hi);
        return vecmath::detail::narrow(erfcx_lanes<float>(lo, square_lo), erfcx_lanes<float>(hi, square_hi));
      });
    });
  }
  if (t == ScalarType::Double) {
    return it.for_each([](char** d, const int64_t* s, int64_t n) {
      vec_loop1_double(d, s, n, [](vecmath::Vd x) { return erfcx_lanes<double>(x, x * x); });
    });
  }
  throw NotImplementedError(str_cat("\"erfcx_cpu\" not implemented for '", dtype_message_name(t), "'"));
}
EMBER_REGISTER_POINTWISE(special_erfcx, &special_erfcx_kernel);

void special_log_ndtr_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "log_ndtr_cpu", [](auto x) { return log_ndtr_value(x); });
}
EMBER_REGISTER_POINTWISE(special_log_ndtr, &special_log_ndtr_kernel);

void special_modified_bessel_i0_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "modified_bessel_i0_cpu", [](auto x) { return special_math::i0(x); });
}
EMBER_REGISTER_POINTWISE(special_modified_bessel_i0, &special_modified_bessel_i0_kernel);

void special_modified_bessel_i1_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "modified_bessel_i1_cpu", [](auto x) { return special_math::modified_bessel_i1(x); });
}
EMBER_REGISTER_POINTWISE(special_modified_bessel_i1, &special_modified_bessel_i1_kernel);

void special_spherical_bessel_j0_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "spherical_bessel_j0_cpu", [](auto x) { return special_math::spherical_bessel_j0(x); });
}
EMBER_REGISTER_POINTWISE(special_spherical_bessel_j0, &special_spherical_bessel_j0_kernel);

// Bessel functions of both kinds, the modified ones of the second kind and
// Airy's Ai: float and double, as PyTorch's kernels.
#define EMBER_SPECIAL_FLOAT_KERNEL(NAME, ...)              \
  void special_##NAME##_kernel(const TensorIterator& it) { \
    float_double_loop<1>(it, #NAME "_cpu", [](auto x) {    \
      using T = decltype(x);                               \
      return __VA_ARGS__(x);                               \
    });                                                    \
  }                                                        \
  EMBER_REGISTER_POINTWISE(special_##NAME, &special_##NAME##_kernel);

EMBER_SPECIAL_FLOAT_KERNEL(airy_ai, special_math::airy_ai<T>)
EMBER_SPECIAL_FLOAT_KERNEL(bessel_j1, special_math::bessel_j1<T>)
EMBER_SPECIAL_FLOAT_KERNEL(bessel_y0, special_math::bessel_y0<T>)
EMBER_SPECIAL_FLOAT_KERNEL(bessel_y1, special_math::bessel_y1<T>)
#undef EMBER_SPECIAL_FLOAT_KERNEL

// float and double only, each through its vector form (Note [Vector Bessel functions]).
template <typename VF, typename VD>
void float_double_vec(const TensorIterator& it, const char* name, const VF& vf, const VD& vd) {
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float) {
    return it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop<float, 1>(d, s, n, vf); });
  }
  if (t == ScalarType::Double) {
    return it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop1_double(d, s, n, vd); });
  }
  throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
}

#define EMBER_SPECIAL_VEC_KERNEL(NAME, FN)                                                                          \
  void special_##NAME##_kernel(const TensorIterator& it) {                                                          \
    float_double_vec(                                                                                               \
        it, #NAME "_cpu", [](vecmath::Vf x) { return FN<float>(x); }, [](vecmath::Vd x) { return FN<double>(x); }); \
  }                                                                                                                 \
  EMBER_REGISTER_POINTWISE(special_##NAME, &special_##NAME##_kernel);

template <typename T>
EMBER_VEC_INLINE vecmath::VecOf<T> k0_vec(vecmath::VecOf<T> x) {
  return vecmath::bessel_k<T, 0, false>(x);
}
template <typename T>
EMBER_VEC_INLINE vecmath::VecOf<T> k1_vec(vecmath::VecOf<T> x) {
  return vecmath::bessel_k<T, 1, false>(x);
}
template <typename T>
EMBER_VEC_INLINE vecmath::VecOf<T> scaled_k0_vec(vecmath::VecOf<T> x) {
  return vecmath::bessel_k<T, 0, true>(x);
}
template <typename T>
EMBER_VEC_INLINE vecmath::VecOf<T> scaled_k1_vec(vecmath::VecOf<T> x) {
  return vecmath::bessel_k<T, 1, true>(x);
}

EMBER_SPECIAL_VEC_KERNEL(bessel_j0, vecmath::bessel_j0)
EMBER_SPECIAL_VEC_KERNEL(modified_bessel_k0, k0_vec)
EMBER_SPECIAL_VEC_KERNEL(modified_bessel_k1, k1_vec)
EMBER_SPECIAL_VEC_KERNEL(scaled_modified_bessel_k0, scaled_k0_vec)
EMBER_SPECIAL_VEC_KERNEL(scaled_modified_bessel_k1, scaled_k1_vec)
#undef EMBER_SPECIAL_VEC_KERNEL

// Hurwitz zeta summed in double, its first term in the input type (PyTorch's
// CPU accumulation type).
void special_zeta_kernel(const TensorIterator& it) {
  float_double_loop<2>(it, "zeta_cpu", [](auto s, auto q) {
    return static_cast<decltype(s)>(special_math::hurwitz_zeta<double>(s, q));
  });
}
EMBER_REGISTER_POINTWISE(special_zeta, &special_zeta_kernel);

// ---- orthogonal polynomials --------------------------------------------------------------------
// Note [Orthogonal polynomial degree]
// The degree n is a floating tensor truncated to an integer, as PyTorch's
// cast (NaN and out-of-range values become the most negative integer, so
// the result is 0). The values follow PyTorch's recurrences, with the closed
// trigonometric forms for high degrees inside (-1, 1).

#define EMBER_POLYNOMIAL_KERNEL(NAME, EXPR)                                            \
  void special_##NAME##_kernel(const TensorIterator& it) {                             \
    float_double_loop<2>(it, #NAME "_cpu", [](auto x, auto n_value) {                  \
      using T = decltype(x);                                                           \
      const int64_t n = special_math::polynomial_degree(static_cast<double>(n_value)); \
      return static_cast<T>(EXPR);                                                     \
    });                                                                                \
  }                                                                                    \
  EMBER_REGISTER_POINTWISE(special_##NAME, &special_##NAME##_kernel);

EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_t, special_math::chebyshev_t<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_u, special_math::chebyshev_u<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_v, special_math::chebyshev_v<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_w, special_math::chebyshev_w<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_t, special_math::shifted_chebyshev<T>(x, n, 0))
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_u, special_math::shifted_chebyshev<T>(x, n, 1))
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_v, special_math::shifted_chebyshev<T>(x, n, 2))
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_w, special_math::shifted_chebyshev<T>(x, n, 3))
EMBER_POLYNOMIAL_KERNEL(hermite_polynomial_h, special_math::hermite_h<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(hermite_polynomial_he, special_math::hermite_he<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(laguerre_polynomial_l, special_math::laguerre_l<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(legendre_polynomial_p, special_math::legendre_p<T>(x, n))
#undef EMBER_POLYNOMIAL_KERNEL

}  // namespace

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
