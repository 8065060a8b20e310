// Unary math kernels, compiled once per CPU capability. Exponentials and
// logarithms are in ExpLogKernel.cpp, hyperbolic functions in
// HyperbolicKernel.cpp.
#include <cmath>
#include <limits>

#include "ember/cpu/MathStubs.h"
#include "ember/cpu/kernels/ActivationSleef.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/cpu/kernels/VecMathErfD.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

using vecmath::Vd;
using vecmath::Vf;

// Same-dtype ops over every type; f is called with the value in its
// computation type (float for Half/BFloat16) and returns that type.
template <typename F>
void same_type_unary(const TensorIterator& it, const F& f) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    run_acc<scalar_t, scalar_t, 1>(it, f);
  });
}

// Ops writing bool from any input type.
template <typename F>
void bool_unary(const TensorIterator& it, const F& f) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    run_acc<bool, scalar_t, 1>(it, [&](auto x) { return static_cast<bool>(f(x)); });
  });
}

template <typename T>
T sign_of(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return x;
  } else if constexpr (std::is_unsigned_v<T>) {
    return static_cast<T>(x > 0);
  } else {
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
}

template <typename T>
T abs_of(T x) {
  if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>) {
    return x;
  } else if constexpr (std::is_integral_v<T>) {
    // Wraps for the most negative value, as two's complement does.
    using U = std::make_unsigned_t<T>;
    return x < 0 ? static_cast<T>(U(0) - static_cast<U>(x)) : x;
  } else {
    return std::fabs(x);
  }
}

// Floor, ceil and trunc: vector rounding for floating dtypes, f otherwise.
template <int kMode, typename F>
void round_unary(const TensorIterator& it, const F& f) {
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float || t == ScalarType::Half || t == ScalarType::BFloat16) {
    const auto vf = [](Vf x) { return vecmath::round_dir<kMode>(x); };
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      if (t == ScalarType::Float)
        vec_loop<float, 1>(d, s, n, vf);
      else if (t == ScalarType::Half)
        vec_loop<Half, 1>(d, s, n, vf);
      else
        vec_loop<BFloat16, 1>(d, s, n, vf);
    });
    return;
  }
#if defined(__AVX2__)
  if (t == ScalarType::Double) {
    const auto vd = [](Vd x) { return vecmath::round_dir<kMode>(x); };
    it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop1_double(d, s, n, vd); });
    return;
  }
#endif
  same_type_unary(it, f);
}

// ---- floating ----------------------------------------------------------------

void sqrt_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Sqrt", [](Vf x) { return vecmath::sqrt(x); }, [](double x) { return std::sqrt(x); });
}
EMBER_REGISTER_POINTWISE(sqrt, &sqrt_kernel);

// Note [16-bit rsqrt]
// PyTorch's vectorized loop (pytorch_vector_body) computes a float16/bfloat16
// rsqrt as 1 / sqrt(x) in float, rounded once; its scalar loop (the blocks'
// tail, strided loops, a build without vector kernels) rounds sqrt(x) to the
// dtype before dividing.
template <typename T>
void rsqrt_16bit(const TensorIterator& it) {
  const auto vf = [](Vf x) { return 1.0f / vecmath::sqrt(x); };
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    const int64_t body = pytorch_vector_body<T, 1>(s, n);
    if (body > 0) vec_loop<T, 1>(d, s, body, vf);
    for (int64_t i = body; i < n; ++i) {
      const float root = static_cast<float>(T(std::sqrt(static_cast<float>(at<T>(d[1], s[1], i)))));
      at<T>(d[0], s[0], i) = T(1.0f / root);
    }
  });
}

void rsqrt_kernel(const TensorIterator& it) {
  if (it.common_dtype() == ScalarType::Half) return rsqrt_16bit<Half>(it);
  if (it.common_dtype() == ScalarType::BFloat16) return rsqrt_16bit<BFloat16>(it);
  float_unary(it, [](Vf x) { return 1.0f / vecmath::sqrt(x); }, [](double x) { return 1.0 / std::sqrt(x); });
}
EMBER_REGISTER_POINTWISE(rsqrt, &rsqrt_kernel);

void reciprocal_kernel(const TensorIterator& it) {
  float_unary(it, [](Vf x) { return 1.0f / x; }, [](double x) { return 1.0 / x; });
}
EMBER_REGISTER_POINTWISE(reciprocal, &reciprocal_kernel);

void sin_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Sin", [](Vf x) { return vecmath::sin(x); }, [](double x) { return std::sin(x); });
}
EMBER_REGISTER_POINTWISE(sin, &sin_kernel);

void cos_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Cos", [](Vf x) { return vecmath::cos(x); }, [](double x) { return std::cos(x); });
}
EMBER_REGISTER_POINTWISE(cos, &cos_kernel);

void tan_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Tan", [](Vf x) { return vecmath::tan(x); }, [](double x) { return std::tan(x); });
}
EMBER_REGISTER_POINTWISE(tan, &tan_kernel);

void asin_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Asin", [](Vf x) { return vecmath::asin(x); }, [](double x) { return std::asin(x); });
}
EMBER_REGISTER_POINTWISE(asin, &asin_kernel);

void acos_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Acos", [](Vf x) { return vecmath::acos(x); }, [](double x) { return std::acos(x); });
}
EMBER_REGISTER_POINTWISE(acos, &acos_kernel);

void atan_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Atan", [](Vf x) { return vecmath::atan(x); }, [](double x) { return std::atan(x); });
}
EMBER_REGISTER_POINTWISE(atan, &atan_kernel);

// Double: Note [Vectorised double erf] where the build has FMA (without
// it, libm's scalar forms are faster).
#if EMBER_VEC_HAS_FMA

#if EMBER_SLEEF_LOOPS
// PyTorch's float vectors' erf, which its float16 and bfloat16 erf map
// through: Abramowitz and Stegun 7.1.26 with SLEEF's exp, fused where it
// fuses, the sign of x xored onto 1 - r t exp(-x^2).
bool erf_16bit(const TensorIterator& it) {
  using W = sleefvec::Vec<float>;
  using V = W::V;
  typedef int32_t Bits __attribute__((vector_size(sizeof(V))));
  if (!W::loaded()) return false;
  const auto exp = W::unary(sleef::Exp);
  return sleefvec::map_unary_16bit(it, [exp](V x) {
    const Bits sign = reinterpret_cast<Bits&>(x) & int32_t(0x80000000u);
    const Bits abs_bits = reinterpret_cast<Bits&>(x) & int32_t(0x7fffffff);
    const V ax = reinterpret_cast<const V&>(abs_bits);
    const V one = W::set1(1.0f);
    const V t = W::div(one, W::fmadd(W::set1(0.3275911f), ax, one));
    V r = W::fmadd(W::set1(1.061405429f), t, W::set1(-1.453152027f));
    r = W::fmadd(r, t, W::set1(1.421413741f));
    r = W::fmadd(r, t, W::set1(-0.284496736f));
    r = W::fmadd(r, t, W::set1(0.254829592f));
    const V e = exp(W::sub(V{}, W::mul(x, x)));
    const V y = W::fmadd(W::mul(W::sub(V{}, e), t), r, one);
    const Bits out = reinterpret_cast<const Bits&>(y) ^ sign;
    return reinterpret_cast<const V&>(out);
  });
}
#endif

void erf_kernel(const TensorIterator& it) {
#if EMBER_SLEEF_LOOPS
  if (erf_16bit(it)) return;
#endif
  float_unary_vml(it, "Erf", [](Vf x) { return vecmath::erf_accurate(x); }, [](Vd x) { return vecmath::erf(x); });
}
EMBER_REGISTER_POINTWISE(erf, &erf_kernel);

void erfc_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Erfc", [](Vf x) { return vecmath::erfc(x); }, [](Vd x) { return vecmath::erfc(x); });
}
EMBER_REGISTER_POINTWISE(erfc, &erfc_kernel);

#else

void erf_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Erf", [](Vf x) { return vecmath::erf_accurate(x); }, [](double x) { return std::erf(x); });
}
EMBER_REGISTER_POINTWISE(erf, &erf_kernel);

void erfc_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Erfc", [](Vf x) { return vecmath::erfc(x); }, [](double x) { return std::erfc(x); });
}
EMBER_REGISTER_POINTWISE(erfc, &erfc_kernel);

#endif

void sigmoid_kernel(const TensorIterator& it) {
  if (sleefvec::sigmoid(it)) return;
  float_unary(it, [](Vf x) { return vecmath::sigmoid(x); }, [](Vd x) { return 1.0 / (1.0 + vecmath::exp(-x)); });
}
EMBER_REGISTER_POINTWISE(sigmoid, &sigmoid_kernel);

void silu_kernel(const TensorIterator& it) {
  if (silu_sleef(it)) return;
  float_unary(
      it, [](Vf x) { return x / (1.0f + vecmath::exp(-x)); }, [](Vd x) { return x / (1.0 + vecmath::exp(-x)); });
}
EMBER_REGISTER_POINTWISE(silu, &silu_kernel);

// ---- same dtype, every type the op accepts ---------------------------------

void abs_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::abs_stub, it);
  same_type_unary(it, [](auto x) { return abs_of(x); });
}
EMBER_REGISTER_POINTWISE(abs, &abs_kernel);

void sign_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::sign_stub, it);
  same_type_unary(it, [](auto x) { return sign_of(x); });
}
EMBER_REGISTER_POINTWISE(sign, &sign_kernel);

void relu_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::relu_stub, it);
  same_type_unary(it, [](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; });
}
EMBER_REGISTER_POINTWISE(relu, &relu_kernel);

void floor_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::floor_stub, it);
  round_unary<0>(it, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return std::floor(x);
    else
      return x;
  });
}
EMBER_REGISTER_POINTWISE(floor, &floor_kernel);

void ceil_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::ceil_stub, it);
  round_unary<1>(it, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return std::ceil(x);
    else
      return x;
  });
}
EMBER_REGISTER_POINTWISE(ceil, &ceil_kernel);

void trunc_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::trunc_stub, it);
  round_unary<2>(it, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return std::trunc(x);
    else
      return x;
  });
}
EMBER_REGISTER_POINTWISE(trunc, &trunc_kernel);

void round_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::round_stub, it);
  same_type_unary(it, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return std::nearbyint(x);
    else
      return x;
  });
}
EMBER_REGISTER_POINTWISE(round, &round_kernel);

void bitwise_not_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::bitwise_not_stub, it);
  same_type_unary(it, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) {
      return !x;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(~x);
    } else {
      return x;  // unreachable: checked by the caller
    }
  });
}
EMBER_REGISTER_POINTWISE(bitwise_not, &bitwise_not_kernel);

// ---- bool results ------------------------------------------------------------

void logical_not_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::logical_not_stub, it);
  bool_unary(it, [](auto x) { return !(x != decltype(x)(0)); });
}
EMBER_REGISTER_POINTWISE(logical_not, &logical_not_kernel);

void isnan_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::isnan_stub, it);
  bool_unary(it, [](auto x) { return x != x; });
}
EMBER_REGISTER_POINTWISE(isnan, &isnan_kernel);

void isinf_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::isinf_stub, it);
  bool_unary(it, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return std::isinf(x);
    else
      return false;
  });
}
EMBER_REGISTER_POINTWISE(isinf, &isinf_kernel);

void isfinite_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::isfinite_stub, it);
  bool_unary(it, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return std::isfinite(x);
    else
      return true;
  });
}
EMBER_REGISTER_POINTWISE(isfinite, &isfinite_kernel);

void round_decimals_kernel(const TensorIterator& it, int64_t decimals) {
  const bool neg = decimals < 0;
  const double ten_pow = std::pow(10.0, static_cast<double>(neg ? -decimals : decimals));
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      using acc_t = opmath_t<scalar_t>;
      const acc_t p = static_cast<acc_t>(ten_pow);
      run_acc<scalar_t, scalar_t, 1>(
          it, [&](acc_t v) { return neg ? std::nearbyint(v / p) * p : std::nearbyint(v * p) / p; });
    } else {
      EMBER_INTERNAL_ASSERT(false, "round(decimals) on ", scalar_type_name(it.common_dtype()));
    }
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(round_decimals_stub, &round_decimals_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
