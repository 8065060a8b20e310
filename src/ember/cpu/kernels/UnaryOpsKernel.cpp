// Unary math kernels, compiled once per CPU capability.
#include <cmath>
#include <limits>

#include "ember/cpu/MathStubs.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/VecMathErfD.h"

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

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2/pi)
// Floor, ceil and trunc: vector rounding for floating dtypes, f otherwise.
template <int kMode, typename F>
void round_unary(const TensorIterator& it, const F& f) {
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float || t == ScalarType::Half || t == ScalarType::BFloat16) {
    const auto vf = [](Vf x) { return vecmath::round_dir<kMode>(x); };
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      if (t == ScalarType::Float) vec_loop<float, 1>(d, s, n, vf);
      else if (t == ScalarType::Half) vec_loop<Half, 1>(d, s, n, vf);
      else vec_loop<BFloat16, 1>(d, s, n, vf);
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

constexpr double kGeluKappa = 0.044715;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2 pi)

void unary_math_kernel(const TensorIterator& it, UnaryOp op) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), unary_math_stub, it, op);
  switch (op) {
    // ---- floating ----------------------------------------------------------------
    case UnaryOp::Exp:
      return float_unary(it, [](Vf x) { return vecmath::exp(x); }, [](Vd x) { return vecmath::exp(x); });
    case UnaryOp::Log:
      return float_unary(it, [](Vf x) { return vecmath::log(x); }, [](double x) { return std::log(x); });
    case UnaryOp::Log1p:
      return float_unary(it, [](Vf x) { return vecmath::log1p(x); },
                         [](double x) { return std::log1p(x); });
    case UnaryOp::Expm1:
      return float_unary(it, [](Vf x) { return vecmath::expm1(x); },
                         [](double x) { return std::expm1(x); });
    case UnaryOp::Log2:
      return float_unary(it, [](Vf x) { return vecmath::log2(x); },
                         [](double x) { return std::log2(x); });
    case UnaryOp::Sqrt:
      return float_unary(it, [](Vf x) { return vecmath::sqrt(x); }, [](double x) { return std::sqrt(x); });
    case UnaryOp::Rsqrt:
      return float_unary(it, [](Vf x) { return 1.0f / vecmath::sqrt(x); }, [](double x) { return 1.0 / std::sqrt(x); });
    case UnaryOp::Reciprocal:
      return float_unary(it, [](Vf x) { return 1.0f / x; }, [](double x) { return 1.0 / x; });
    case UnaryOp::Sin:
      return float_unary(it, [](Vf x) { return vecmath::sin(x); }, [](double x) { return std::sin(x); });
    case UnaryOp::Cos:
      return float_unary(it, [](Vf x) { return vecmath::cos(x); }, [](double x) { return std::cos(x); });
    case UnaryOp::Tan:
      return float_unary(it, [](Vf x) { return vecmath::tan(x); },
                         [](double x) { return std::tan(x); });
    case UnaryOp::Tanh:
      return float_unary(it, [](Vf x) { return vecmath::tanh(x); }, [](double x) { return std::tanh(x); });
    case UnaryOp::Asin:
      return float_unary(it, [](Vf x) { return vecmath::asin(x); },
                         [](double x) { return std::asin(x); });
    case UnaryOp::Acos:
      return float_unary(it, [](Vf x) { return vecmath::acos(x); },
                         [](double x) { return std::acos(x); });
    case UnaryOp::Atan:
      return float_unary(it, [](Vf x) { return vecmath::atan(x); },
                         [](double x) { return std::atan(x); });
    case UnaryOp::Sinh:
      return float_unary(it, [](Vf x) { return vecmath::sinh(x); },
                         [](double x) { return std::sinh(x); });
    case UnaryOp::Cosh:
      return float_unary(it, [](Vf x) { return vecmath::cosh(x); },
                         [](double x) { return std::cosh(x); });
    case UnaryOp::Asinh:
      return float_unary(it, [](Vf x) { return vecmath::asinh(x); },
                         [](double x) { return std::asinh(x); });
    case UnaryOp::Acosh:
      return float_unary(it, [](Vf x) { return vecmath::acosh(x); },
                         [](double x) { return std::acosh(x); });
    case UnaryOp::Atanh:
      return float_unary(it, [](Vf x) { return vecmath::atanh(x); },
                         [](double x) { return std::atanh(x); });
    // Double: Note [Vectorised double erf] where the build has FMA (without
    // it, libm's scalar forms are faster).
#if EMBER_VEC_HAS_FMA
    case UnaryOp::Erf:
      return float_unary(it, [](Vf x) { return vecmath::erf_accurate(x); }, [](Vd x) { return vecmath::erf(x); });
    case UnaryOp::Erfc:
      return float_unary(it, [](Vf x) { return vecmath::erfc(x); }, [](Vd x) { return vecmath::erfc(x); });
#else
    case UnaryOp::Erf:
      return float_unary(it, [](Vf x) { return vecmath::erf_accurate(x); },
                         [](double x) { return std::erf(x); });
    case UnaryOp::Erfc:
      return float_unary(it, [](Vf x) { return vecmath::erfc(x); },
                         [](double x) { return std::erfc(x); });
#endif
    case UnaryOp::Exp2:
      return float_unary(it, [](Vf x) { return vecmath::exp2(x); },
                         [](double x) { return std::exp2(x); });
    case UnaryOp::Log10:
      return float_unary(it, [](Vf x) { return vecmath::log10(x); },
                         [](double x) { return std::log10(x); });
    case UnaryOp::Sigmoid:
      return float_unary(it, [](Vf x) { return vecmath::sigmoid(x); },
                         [](Vd x) { return 1.0 / (1.0 + vecmath::exp(-x)); });
    case UnaryOp::Silu:
      return float_unary(it, [](Vf x) { return x / (1.0f + vecmath::exp(-x)); },
                         [](Vd x) { return x / (1.0 + vecmath::exp(-x)); });
    case UnaryOp::GeluErf:
      return float_unary(
          it,
          [](Vf x) {
            // +inf gives NaN in PyTorch's float GELU; kept for identical results.
            Vf r = x * 0.5f * (1.0f + vecmath::erf(x * float(kSqrt1_2)));
            return vecmath::select(x == INFINITY, vecmath::splat(NAN), r);
          },
          [](double x) { return x * 0.5 * (1.0 + std::erf(x * kSqrt1_2)); });
    case UnaryOp::GeluTanh:
      return float_unary(
          it,
          [](Vf x) {
            Vf inner = float(kSqrt2OverPi) * (x + float(kGeluKappa) * (x * x * x));
            return 0.5f * x * (1.0f + vecmath::tanh(inner));
          },
          [](double x) {
            double inner = kSqrt2OverPi * (x + kGeluKappa * (x * x * x));
            return 0.5 * x * (1.0 + std::tanh(inner));
          });

    // ---- same dtype, every type the op accepts ---------------------------------
    case UnaryOp::Abs:
      return same_type_unary(it, [](auto x) { return abs_of(x); });
    case UnaryOp::Sign:
      return same_type_unary(it, [](auto x) { return sign_of(x); });
    case UnaryOp::Relu:
      return same_type_unary(it, [](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; });
    case UnaryOp::Floor:
      return round_unary<0>(it, [](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>) return std::floor(x); else return x;
      });
    case UnaryOp::Ceil:
      return round_unary<1>(it, [](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>) return std::ceil(x); else return x;
      });
    case UnaryOp::Trunc:
      return round_unary<2>(it, [](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>) return std::trunc(x); else return x;
      });
    case UnaryOp::Round:
      return same_type_unary(it, [](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>) return std::nearbyint(x); else return x;
      });
    case UnaryOp::BitwiseNot:
      return same_type_unary(it, [](auto x) {
        using T = decltype(x);
        if constexpr (std::is_same_v<T, bool>) {
          return !x;
        } else if constexpr (std::is_integral_v<T>) {
          return static_cast<T>(~x);
        } else {
          return x;  // unreachable: checked by the caller
        }
      });

    // ---- bool results ------------------------------------------------------------
    case UnaryOp::LogicalNot:
      return bool_unary(it, [](auto x) { return !(x != decltype(x)(0)); });
    case UnaryOp::IsNan:
      return bool_unary(it, [](auto x) { return x != x; });
    case UnaryOp::IsInf:
      return bool_unary(it, [](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>) return std::isinf(x); else return false;
      });
    case UnaryOp::IsFinite:
      return bool_unary(it, [](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>) return std::isfinite(x); else return true;
      });
  }
}

void round_decimals_kernel(const TensorIterator& it, int64_t decimals) {
  const bool neg = decimals < 0;
  const double ten_pow = std::pow(10.0, static_cast<double>(neg ? -decimals : decimals));
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      using acc_t = opmath_t<scalar_t>;
      const acc_t p = static_cast<acc_t>(ten_pow);
      run_acc<scalar_t, scalar_t, 1>(it, [&](acc_t v) {
        return neg ? std::nearbyint(v / p) * p : std::nearbyint(v * p) / p;
      });
    } else {
      EMBER_INTERNAL_ASSERT(false, "round(decimals) on ", scalar_type_name(it.common_dtype()));
    }
  });
}

// Float types take the vector path with the same arithmetic as PyTorch's
// vectorised GELU backward (including the erf of Note [Vectorised float math]).
void gelu_backward_kernel(const TensorIterator& it, bool tanh_approximation) {
  // Inputs: grad, x (both of the common dtype).
  if (tanh_approximation) {
    constexpr double kBeta = kSqrt2OverPi, kKappa = kGeluKappa;
    return float_map<2>(
        it,
        [](Vf dy, Vf x) {
          const Vf x_sq = x * x;
          const Vf t = vecmath::tanh(float(kBeta) * (x + float(kKappa) * (x_sq * x)));
          const Vf left = 0.5f * x;
          const Vf left_derivative = 0.5f * (1.0f + t);
          const Vf right_derivative = left * (1.0f - t * t) * (float(kBeta) * (1.0f + (3.0f * float(kKappa)) * x_sq));
          return dy * (left_derivative + right_derivative);
        },
        [](double dy, double x) {
          const double x_sq = x * x;
          const double t = std::tanh(kBeta * (x + kKappa * x_sq * x));
          const double left = 0.5 * x;
          const double left_derivative = 0.5 * (1.0 + t);
          const double right_derivative = left * (1.0 - t * t) * (kBeta * (1.0 + 3.0 * kKappa * x_sq));
          return dy * (left_derivative + right_derivative);
        });
  }
  float_map<2>(
      it,
      [](Vf dy, Vf x) {
        const Vf cdf = 0.5f * (1.0f + vecmath::erf(x * float(kSqrt1_2)));
        const Vf pdf = float(kInvSqrt2Pi) * vecmath::exp(x * x * -0.5f);
        return dy * (x * pdf + cdf);
      },
      [](double dy, double x) {
        const double cdf = 0.5 * (1.0 + std::erf(x * kSqrt1_2));
        const double pdf = kInvSqrt2Pi * std::exp(x * x * -0.5);
        return dy * (cdf + x * pdf);
      });
}

}  // namespace

EMBER_REGISTER_DISPATCH(unary_math_stub, &unary_math_kernel);
EMBER_REGISTER_DISPATCH(round_decimals_stub, &round_decimals_kernel);
EMBER_REGISTER_DISPATCH(gelu_backward_stub, &gelu_backward_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
