// Binary math, comparison, logical and bitwise kernels, compiled once per CPU
// capability (logaddexp and logaddexp2 are with the exponentials, in
// ExpLogKernel.cpp).
#include <cmath>
#include <limits>

#include "ember/cpu/MathStubs.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/cpu/kernels/VecMathBinary.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// Runs f(a, b) over every type the iterator may hold: a and b arrive in
// their computation type (float for Half/BFloat16), the result is stored
// as the output type (bool for comparisons, else the common dtype).
template <bool BoolOut, typename F>
void binary(const TensorIterator& it, const F& f) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    using out_t = std::conditional_t<BoolOut, bool, scalar_t>;
    run_acc<out_t, scalar_t, 2>(it, f);
  });
}

// Rounds a computation-type value to the element type T and back. PyTorch
// computes floor and trunc division of float16/bfloat16 in their own
// precision, each step rounded; identity for other types.
template <typename T>
struct RoundToElement {
  template <typename V>
  V operator()(V v) const {
    if constexpr (is_16bit_float_v<T>)
      return static_cast<V>(static_cast<float>(T(v)));
    else
      return v;
  }
};

// binary() for kernels that round intermediate steps: f(a, b, round).
// PyTorch computes in float, without the rounding, when the divisor is a
// single number (0-dim or one element).
template <typename F>
void binary_rounded(const TensorIterator& it, const F& f) {
  const bool round_steps = it.operand(2).numel() != 1;
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if (round_steps) {
      run_acc<scalar_t, scalar_t, 2>(it, [&](auto a, auto b) { return f(a, b, RoundToElement<scalar_t>{}); });
    } else {
      run_acc<scalar_t, scalar_t, 2>(it, [&](auto a, auto b) { return f(a, b, RoundToElement<float>{}); });
    }
  });
}

// Integer division helpers; a zero divisor sets the flag and gives 0.
template <typename T>
T int_div_trunc(T a, T b, KernelFlags& flags) {
  if (b == 0) {
    flags.zero_division.store(true, std::memory_order_relaxed);
    return 0;
  }
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
  }
  return static_cast<T>(a / b);
}

template <typename T>
T int_div_floor(T a, T b, KernelFlags& flags) {
  if (b == 0) {
    flags.zero_division.store(true, std::memory_order_relaxed);
    return 0;
  }
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
    T q = static_cast<T>(a / b);
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) --q;
    return q;
  } else {
    return static_cast<T>(a / b);
  }
}

template <typename T>
T int_remainder(T a, T b, bool python_sign, KernelFlags& flags) {
  if (b == 0) {
    flags.zero_division.store(true, std::memory_order_relaxed);
    return 0;
  }
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (python_sign && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

// Python's float floor division: the quotient of the exact remainder
// identity a = b * q + mod, rounded down, with IEEE results for b == 0.
template <typename T, typename R>
T float_div_floor(T a, T b, const R& r) {
  if (b == 0) return r(a / b);
  T mod = r(std::fmod(a, b));
  T div = r(r(a - mod) / b);
  if (mod != 0 && ((b < 0) != (mod < 0))) div = r(div - T(1));
  T q;
  if (div != 0) {
    q = std::floor(div);
    if (r(div - q) > T(0.5)) q = r(q + T(1));
  } else {
    q = std::copysign(T(0), r(a / b));
  }
  return q;
}

template <typename T>
T float_remainder(T a, T b) {
  T mod = std::fmod(a, b);
  if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;
  return mod;
}

// Integer power with wrap-around; negative exponents give 1/a truncated.
template <typename T>
T int_pow(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  using U = wrap_uint_t<T>;
  U base = static_cast<U>(a), result = 1;
  auto e = b;
  while (e) {
    if (e & 1) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
    e = static_cast<T>(e >> 1);
  }
  return static_cast<T>(result);
}

template <typename T>
T max_propagate(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? b : a;
}

template <typename T>
T min_propagate(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return b < a ? b : a;
}

template <typename T>
T shift_left(T a, T b) {
  constexpr int bits = sizeof(T) * 8;
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) return 0;
  }
  if (b >= bits) return 0;
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<std::make_unsigned_t<T>>(a)) << b);
}

template <typename T>
T shift_right(T a, T b) {
  constexpr int bits = sizeof(T) * 8;
  bool out_of_range = b >= bits;
  if constexpr (std::is_signed_v<T>) out_of_range = out_of_range || b < 0;
  if (out_of_range) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    return 0;
  }
  return static_cast<T>(a >> b);
}

// Vector loops for float (and, with with_16bit, float16/bfloat16 computed in
// float) through ff, and for double through fd where the build has FMA.
// False for other dtypes: the caller runs the scalar loop.
template <typename FF, typename FD>
bool binary_vec(const TensorIterator& it, bool with_16bit, const FF& ff, const FD& fd) {
  const ScalarType t = it.common_dtype();
  switch (t) {
    case ScalarType::Float:
      it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop<float, 2>(d, s, n, ff); });
      return true;
    case ScalarType::Half:
      if (!with_16bit) return false;
      it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop<Half, 2>(d, s, n, ff); });
      return true;
    case ScalarType::BFloat16:
      if (!with_16bit) return false;
      it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop<BFloat16, 2>(d, s, n, ff); });
      return true;
    case ScalarType::Double:
#if EMBER_VEC_HAS_FMA
      it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop2_double(d, s, n, fd); });
      return true;
#else
      (void)fd;
      return false;
#endif
    default: return false;
  }
}

// Integer division by zero: the loops set a flag (kernels never throw inside
// a parallel region); the kernel raises after the loop.
void throw_if_zero_division(const KernelFlags& flags) { EMBER_CHECK(!flags.zero_division.load(), "ZeroDivisionError"); }

// Kernels that may see integral dtypes start with this: integral loops are
// compiled into the baseline build only (Note [Kernels per CPU capability]).
#define EMBER_BASELINE_FOR_INTEGRAL(op) EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::op##_stub, it)

void div_kernel(const TensorIterator& it) {
  if (run_16bit_by_original_scalar(it, [](float a, float b) { return a / b; })) return;
  binary<false>(it, [](auto a, auto b) { return a / b; });
}
EMBER_REGISTER_POINTWISE(div, &div_kernel);

void div_trunc_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), div_trunc_stub, it);
  if (run_16bit_by_original_scalar(it, [](float a, float b) { return std::trunc(a / b); })) return;
  KernelFlags flags;
  binary_rounded(it, [&](auto a, auto b, const auto& round) {
    using T = decltype(a);
    if constexpr (is_int_v<T>)
      return int_div_trunc(a, b, flags);
    else if constexpr (std::is_floating_point_v<T>)
      return std::trunc(round(a / b));
    else
      return a;
  });
  throw_if_zero_division(flags);
}

void floor_divide_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(floor_divide);
  if (run_16bit_by_original_scalar(it,
                                   [](float a, float b) { return float_div_floor(a, b, RoundToElement<float>{}); })) {
    return;
  }
  // float16/bfloat16 round each step unless the divisor is one number.
  const bool with_16bit = it.operand(2).numel() == 1;
  if (binary_vec(
          it, with_16bit, [](vecmath::Vf a, vecmath::Vf b) { return vecmath::div_floor(a, b); },
          [](vecmath::Vd a, vecmath::Vd b) { return vecmath::div_floor(a, b); })) {
    return;
  }
  KernelFlags flags;
  binary_rounded(it, [&](auto a, auto b, const auto& round) {
    using T = decltype(a);
    if constexpr (is_int_v<T>)
      return int_div_floor(a, b, flags);
    else if constexpr (std::is_floating_point_v<T>)
      return float_div_floor(a, b, round);
    else
      return a;
  });
  throw_if_zero_division(flags);
}
EMBER_REGISTER_POINTWISE(floor_divide, &floor_divide_kernel);

void remainder_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(remainder);
  if (binary_vec(
          it, true, [](vecmath::Vf a, vecmath::Vf b) { return vecmath::remainder(a, b); },
          [](vecmath::Vd a, vecmath::Vd b) { return vecmath::remainder(a, b); })) {
    return;
  }
  KernelFlags flags;
  binary<false>(it, [&](auto a, auto b) {
    using T = decltype(a);
    if constexpr (is_int_v<T>)
      return int_remainder(a, b, true, flags);
    else if constexpr (std::is_floating_point_v<T>)
      return float_remainder(a, b);
    else
      return a;
  });
  throw_if_zero_division(flags);
}
EMBER_REGISTER_POINTWISE(remainder, &remainder_kernel);

void fmod_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(fmod);
  if (binary_vec(
          it, true, [](vecmath::Vf a, vecmath::Vf b) { return vecmath::fmod(a, b); },
          [](vecmath::Vd a, vecmath::Vd b) { return vecmath::fmod(a, b); })) {
    return;
  }
  KernelFlags flags;
  binary<false>(it, [&](auto a, auto b) {
    using T = decltype(a);
    if constexpr (is_int_v<T>)
      return int_remainder(a, b, false, flags);
    else if constexpr (std::is_floating_point_v<T>)
      return std::fmod(a, b);
    else
      return a;
  });
  throw_if_zero_division(flags);
}
EMBER_REGISTER_POINTWISE(fmod, &fmod_kernel);

void pow_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(pow);
  if (sleefvec::binary(
          it, sleef::Pow, [](float a, float b) { return std::pow(a, b); },
          [](double a, double b) { return std::pow(a, b); })) {
    return;
  }
  if (it.common_dtype() != ScalarType::Double &&
      binary_vec(
          it, true, [](vecmath::Vf a, vecmath::Vf b) { return vecmath::pow(a, b); },
          [](vecmath::Vd a, vecmath::Vd) { return a; })) {
    return;
  }
  binary<false>(it, [](auto a, auto b) {
    using T = decltype(a);
    if constexpr (is_int_v<T>)
      return int_pow(a, b);
    else if constexpr (std::is_floating_point_v<T>)
      return std::pow(a, b);
    else
      return a;
  });
}
EMBER_REGISTER_POINTWISE(pow, &pow_kernel);

void maximum_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(maximum);
  binary<false>(it, [](auto a, auto b) { return max_propagate(a, b); });
}
EMBER_REGISTER_POINTWISE(maximum, &maximum_kernel);

void minimum_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(minimum);
  binary<false>(it, [](auto a, auto b) { return min_propagate(a, b); });
}
EMBER_REGISTER_POINTWISE(minimum, &minimum_kernel);

void fmax_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(fmax);
  binary<false>(it, [](auto a, auto b) {
    if constexpr (std::is_floating_point_v<decltype(a)>)
      return std::fmax(a, b);
    else
      return a < b ? b : a;
  });
}
EMBER_REGISTER_POINTWISE(fmax, &fmax_kernel);

void fmin_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(fmin);
  binary<false>(it, [](auto a, auto b) {
    if constexpr (std::is_floating_point_v<decltype(a)>)
      return std::fmin(a, b);
    else
      return b < a ? b : a;
  });
}
EMBER_REGISTER_POINTWISE(fmin, &fmin_kernel);

void atan2_kernel(const TensorIterator& it) {
  if (sleefvec::binary(
          it, sleef::Atan2, [](float a, float b) { return std::atan2(a, b); },
          [](double a, double b) { return std::atan2(a, b); })) {
    return;
  }
  if (binary_vec(
          it, true, [](vecmath::Vf a, vecmath::Vf b) { return vecmath::atan2(a, b); },
          [](vecmath::Vd a, vecmath::Vd b) { return vecmath::atan2(a, b); })) {
    return;
  }
  binary<false>(it, [](auto a, auto b) {
    if constexpr (std::is_floating_point_v<decltype(a)>)
      return std::atan2(a, b);
    else
      return a;
  });
}
EMBER_REGISTER_POINTWISE(atan2, &atan2_kernel);

// ---- bitwise (bool and integral) --------------------------------------------------

void bitwise_and_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(bitwise_and);
  binary<false>(it, [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return static_cast<decltype(a)>(a & b);
    else
      return a;
  });
}
EMBER_REGISTER_POINTWISE(bitwise_and, &bitwise_and_kernel);

void bitwise_or_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(bitwise_or);
  binary<false>(it, [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return static_cast<decltype(a)>(a | b);
    else
      return a;
  });
}
EMBER_REGISTER_POINTWISE(bitwise_or, &bitwise_or_kernel);

void bitwise_xor_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(bitwise_xor);
  binary<false>(it, [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return static_cast<decltype(a)>(a ^ b);
    else
      return a;
  });
}
EMBER_REGISTER_POINTWISE(bitwise_xor, &bitwise_xor_kernel);

void bitwise_left_shift_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(bitwise_left_shift);
  binary<false>(it, [](auto a, auto b) {
    if constexpr (is_int_v<decltype(a)>)
      return shift_left(a, b);
    else
      return a;
  });
}
EMBER_REGISTER_POINTWISE(bitwise_left_shift, &bitwise_left_shift_kernel);

void bitwise_right_shift_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(bitwise_right_shift);
  binary<false>(it, [](auto a, auto b) {
    if constexpr (is_int_v<decltype(a)>)
      return shift_right(a, b);
    else
      return a;
  });
}
EMBER_REGISTER_POINTWISE(bitwise_right_shift, &bitwise_right_shift_kernel);

// ---- comparisons and logical ops (bool results) -----------------------------------

void eq_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(eq);
  binary<true>(it, [](auto a, auto b) { return a == b; });
}
EMBER_REGISTER_POINTWISE(eq, &eq_kernel);

void ne_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(ne);
  binary<true>(it, [](auto a, auto b) { return a != b; });
}
EMBER_REGISTER_POINTWISE(ne, &ne_kernel);

void lt_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(lt);
  binary<true>(it, [](auto a, auto b) { return a < b; });
}
EMBER_REGISTER_POINTWISE(lt, &lt_kernel);

void le_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(le);
  binary<true>(it, [](auto a, auto b) { return a <= b; });
}
EMBER_REGISTER_POINTWISE(le, &le_kernel);

void gt_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(gt);
  binary<true>(it, [](auto a, auto b) { return a > b; });
}
EMBER_REGISTER_POINTWISE(gt, &gt_kernel);

void ge_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(ge);
  binary<true>(it, [](auto a, auto b) { return a >= b; });
}
EMBER_REGISTER_POINTWISE(ge, &ge_kernel);

void logical_and_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(logical_and);
  binary<true>(it, [](auto a, auto b) { return (a != decltype(a)(0)) && (b != decltype(b)(0)); });
}
EMBER_REGISTER_POINTWISE(logical_and, &logical_and_kernel);

void logical_or_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(logical_or);
  binary<true>(it, [](auto a, auto b) { return (a != decltype(a)(0)) || (b != decltype(b)(0)); });
}
EMBER_REGISTER_POINTWISE(logical_or, &logical_or_kernel);

void logical_xor_kernel(const TensorIterator& it) {
  EMBER_BASELINE_FOR_INTEGRAL(logical_xor);
  binary<true>(it, [](auto a, auto b) { return (a != decltype(a)(0)) != (b != decltype(b)(0)); });
}
EMBER_REGISTER_POINTWISE(logical_xor, &logical_xor_kernel);

#undef EMBER_BASELINE_FOR_INTEGRAL

// ---- pow with a scalar exponent ----------------------------------------------------

// f takes and returns the computation type (float for 16-bit floats).
template <typename T, typename F>
void same_type_loop(const TensorIterator& it, const F& f) {
  run_acc<T, T, 1>(it, f);
}

void pow_tensor_scalar_kernel(const TensorIterator& it, const Scalar& exponent) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), pow_tensor_scalar_stub, it, exponent);
  const ScalarType t = it.common_dtype();
  const double e = exponent.to_double();
  // float, double and bfloat16 have exact shortcuts for these exponents, as PyTorch does.
  if (t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::BFloat16) {
    if (e == 0.5 || e == -0.5 || e == -1.0) {
      dispatch_types(t, [&](auto tag_) {
        using scalar_t = typename decltype(tag_)::type;
        if constexpr (is_float_like_v<scalar_t>) {
          using acc_t = opmath_t<scalar_t>;
          // One loop per exponent, so each vectorises.
          if (e == 0.5 && !std::is_same_v<scalar_t, BFloat16>) {
            // A negative base gives +NaN (the hardware square root's is -NaN).
            same_type_loop<scalar_t>(
                it, [](acc_t v) { return v < acc_t(0) ? std::numeric_limits<acc_t>::quiet_NaN() : std::sqrt(v); });
          } else if (e == 0.5) {
            same_type_loop<scalar_t>(it, [](acc_t v) { return std::sqrt(v); });
          } else if (e == -0.5) {
            same_type_loop<scalar_t>(it, [](acc_t v) { return acc_t(1) / std::sqrt(v); });
          } else {
            same_type_loop<scalar_t>(it, [](acc_t v) { return acc_t(1) / v; });
          }
        }
      });
      return;
    }
  }
  switch (t) {
    case ScalarType::Float:
    case ScalarType::Double:
      dispatch_types(t, [&](auto tag_) {
        using scalar_t = typename decltype(tag_)::type;
        if constexpr (std::is_floating_point_v<scalar_t>) {
          const scalar_t ex = static_cast<scalar_t>(e);
          if (e == 2.0) {
            same_type_loop<scalar_t>(it, [](scalar_t x) { return x * x; });
          } else if (e == 3.0) {
            same_type_loop<scalar_t>(it, [](scalar_t x) { return x * x * x; });
          } else if (e == -2.0) {
            same_type_loop<scalar_t>(it, [](scalar_t x) { return scalar_t(1) / (x * x); });
          } else if (!sleefvec::pow_scalar(it, e)) {
            same_type_loop<scalar_t>(it, [ex](scalar_t x) { return std::pow(x, ex); });
          }
        }
      });
      return;
    case ScalarType::BFloat16: {
      // Products round to bfloat16 at each step, as bfloat16 arithmetic does.
      auto bf = [](float v) { return static_cast<float>(BFloat16(v)); };
      const float ex = bf(static_cast<float>(e));
      if (e == 2.0) {
        same_type_loop<BFloat16>(it, [](float x) { return x * x; });
      } else if (e == 3.0) {
        same_type_loop<BFloat16>(it, [bf](float x) { return bf(x * x) * x; });
      } else if (e == -2.0) {
        same_type_loop<BFloat16>(it, [bf](float x) { return 1.0f / bf(x * x); });
      } else {
        same_type_loop<BFloat16>(it, [ex](float x) { return std::pow(x, ex); });
      }
      return;
    }
    case ScalarType::Half: {
      const float ex = static_cast<float>(Half(static_cast<float>(e)));
      same_type_loop<Half>(it, [ex](float x) { return std::pow(x, ex); });
      return;
    }
    default:
      dispatch_types(t, [&](auto tag_) {
        using scalar_t = typename decltype(tag_)::type;
        if constexpr (is_int_v<scalar_t>) {
          const scalar_t ex = static_cast<scalar_t>(exponent.to_long());
          same_type_loop<scalar_t>(it, [ex](scalar_t x) { return int_pow(x, ex); });
        } else {
          EMBER_INTERNAL_ASSERT(false, "pow kernel on ", scalar_type_name(t));
        }
      });
  }
}

// ---- clamp, where, lerp ------------------------------------------------------------

void clamp_scalar_kernel(const TensorIterator& it, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), clamp_scalar_stub, it, min, max);
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    using acc_t = opmath_t<scalar_t>;
    // Bounds are first converted to the element type, as PyTorch does.
    auto bound = [](const Scalar& s) {
      if constexpr (is_float_like_v<scalar_t>) {
        return static_cast<acc_t>(static_cast<scalar_t>(s.to<acc_t>()));
      } else {
        return s.to<scalar_t>();
      }
    };
    const bool has_lo = min.has_value(), has_hi = max.has_value();
    const acc_t lo = has_lo ? bound(*min) : acc_t(0);
    const acc_t hi = has_hi ? bound(*max) : acc_t(0);
    // One loop per combination of bounds, so each vectorises.
    if (has_lo && has_hi) {
      same_type_loop<scalar_t>(it, [=](acc_t x) {
        x = x < lo ? lo : x;
        return x > hi ? hi : x;
      });
    } else if (has_lo) {
      same_type_loop<scalar_t>(it, [=](acc_t x) { return x < lo ? lo : x; });
    } else {
      same_type_loop<scalar_t>(it, [=](acc_t x) { return x > hi ? hi : x; });
    }
  });
}

void clamp_tensor_kernel(const TensorIterator& it) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), clamp_tensor_stub, it);
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    using acc_t = opmath_t<scalar_t>;
    run_acc<scalar_t, scalar_t, 3>(it,
                                   [](acc_t x, acc_t lo, acc_t hi) { return min_propagate(max_propagate(x, lo), hi); });
  });
}

template <typename T>
void where_loop(const TensorIterator& it) {
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    loop3<T, uint8_t, T, T>(d, s, n, [](uint8_t c, T a, T b) { return c ? a : b; });
  });
}

void where_kernel(const TensorIterator& it) {
  // Only moves values: dispatch on the element size.
  switch (element_size(it.dtype(0))) {
    case 1: return where_loop<uint8_t>(it);
    case 2: return where_loop<uint16_t>(it);
    case 4: return where_loop<uint32_t>(it);
    case 8: return where_loop<uint64_t>(it);
    case 16: return where_loop<std::complex<double>>(it);
    default: EMBER_INTERNAL_ASSERT(false, "where on an element of unexpected size");
  }
}

template <typename T, typename W>
T lerp_value(T self, T end, W weight) {
  return std::abs(weight) < W(0.5) ? self + weight * (end - self) : end - (end - self) * (W(1) - weight);
}

void lerp_scalar_kernel(const TensorIterator& it, const Scalar& weight) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      using acc_t = opmath_t<scalar_t>;
      const acc_t w = weight.to<acc_t>();
      run_acc<scalar_t, scalar_t, 2>(it, [w](acc_t a, acc_t b) { return lerp_value(a, b, w); });
    }
  });
}

void lerp_tensor_kernel(const TensorIterator& it) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      using acc_t = opmath_t<scalar_t>;
      run_acc<scalar_t, scalar_t, 3>(it, [](acc_t a, acc_t b, acc_t w) { return lerp_value(a, b, w); });
    }
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(div_trunc_stub, &div_trunc_kernel);
EMBER_REGISTER_DISPATCH(pow_tensor_scalar_stub, &pow_tensor_scalar_kernel);
EMBER_REGISTER_DISPATCH(clamp_scalar_stub, &clamp_scalar_kernel);
EMBER_REGISTER_DISPATCH(clamp_tensor_stub, &clamp_tensor_kernel);
EMBER_REGISTER_DISPATCH(where_stub, &where_kernel);
EMBER_REGISTER_DISPATCH(lerp_scalar_stub, &lerp_scalar_kernel);
EMBER_REGISTER_DISPATCH(lerp_tensor_stub, &lerp_tensor_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
