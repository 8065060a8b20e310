// CUDA kernels of arithmetic: add (with alpha), mul, the divisions (true,
// truncating, flooring), remainder, fmod and pow.
//
// As PyTorch's CUDA kernels: dividing by a number (a 0-dim CPU operand)
// multiplies by its reciprocal, and mul/div of float16/bfloat16 by a number
// use the number unrounded (TensorIterator::original_scalar).
#include <cmath>

#include "ember/cpu/FusedPointwiseStubs.h"
#include "ember/cpu/MathStubs.h"
#include "ember/cpu/Stubs.h"
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cuda {
namespace {

template <typename C>
struct AddOp {
  C alpha;
  __device__ C operator()(C a, C b) const { return a + alpha * b; }
};

template <typename C>
struct MulOp {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>)
      return a && b;
    else
      return a * b;
  }
};

// a * s or s * b, where the other operand is a number s.
template <typename C>
struct MulByNumberOp {
  C s;
  bool number_first;
  __device__ C operator()(C a, C b) const { return number_first ? s * b : a * s; }
};

template <typename C>
struct DivOp {
  __device__ C operator()(C a, C b) const { return a / b; }
};

template <typename C>
struct DivTruncOp {
  C inv_b;  // used when by_reciprocal
  bool by_reciprocal;
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      return dm::trunc(by_reciprocal ? a * inv_b : a / b);
    } else {
      return a / b;
    }
  }
};

template <typename C>
struct DivFloorOp {
  C inv_b;
  bool by_reciprocal;
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (!by_reciprocal && b == C(0)) return a / b;
      const C mod = dm::fmod(a, b);
      C div = by_reciprocal ? (a - mod) * inv_b : (a - mod) / b;
      if (mod != C(0) && (b < C(0)) != (mod < C(0))) div -= C(1);
      if (div != C(0)) {
        C floordiv = dm::floor(div);
        if (div - floordiv > C(0.5)) floordiv += C(1);
        return floordiv;
      }
      return dm::copysign(C(0), by_reciprocal ? a * inv_b : a / b);
    } else if constexpr (std::is_signed_v<C>) {
      if ((a < 0) != (b < 0)) {
        const C q = a / b;
        return a % b != 0 ? C(q - 1) : q;
      }
      return a / b;
    } else {
      return a / b;
    }
  }
};

template <typename C>
struct RemainderOp {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      C mod = dm::fmod(a, b);
      if (mod != C(0) && (b < C(0)) != (mod < C(0))) mod += b;
      return mod;
    } else if constexpr (std::is_signed_v<C>) {
      C r = a % b;
      if (r != 0 && (r < 0) != (b < 0)) r += b;
      return r;
    } else {
      return a % b;
    }
  }
};

template <typename C>
struct FmodOp {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>)
      return dm::fmod(a, b);
    else
      return a % b;
  }
};

// Integer power by squaring; negative exponents give 0 except for bases 1 and -1.
template <typename C>
__device__ C powi(C base, C exp) {
  if constexpr (std::is_signed_v<C>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? C(-1) : C(1);
      return 0;
    }
  }
  C result = 1;
  while (exp) {
    if (exp & 1) result = C(result * base);
    exp = C(exp / 2);
    base = C(base * base);
  }
  return result;
}

template <typename C>
struct PowOp {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>)
      return dm::pow(a, b);
    else
      return powi(a, b);
  }
};

// Special exponents take the cheaper forms PyTorch's kernel takes.
template <typename C>
struct PowScalarOp {
  C exp;
  int form;  // 0: pow, 1: sqrt, 2: square, 3: cube, 4: rsqrt, 5: reciprocal, 6: reciprocal square
  __device__ C operator()(C a) const {
    if constexpr (std::is_floating_point_v<C>) {
      switch (form) {
        case 1: return dm::sqrt(a);
        case 2: return a * a;
        case 3: return a * a * a;
        case 4: return dm::rsqrt(a);
        case 5: return C(1) / a;
        case 6: return C(1) / (a * a);
        default: return dm::pow(a, exp);
      }
    } else {
      return powi(a, exp);
    }
  }
};

// The value of operand k, a 0-dim CPU tensor, in compute type C: unrounded
// for float16/bfloat16 where the iterator kept the original number.
template <typename C>
C number_value(const TensorIterator& it, int k) {
  const std::optional<double> original = it.original_scalar(k);
  return static_cast<C>(original ? *original : it.operand(k).template item<double>());
}
bool is_number(const TensorIterator& it, int k) { return detail::is_cpu_number(it.operand(k)); }

void add_cuda_kernel(const TensorIterator& it, const Scalar& alpha) {
  dispatch_dtype<kAllReal>(it.common_dtype(), "add_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S, S>(it, AddOp<opmath_t<S>>{scalar_opmath<S>(alpha)});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(add_stub, &add_cuda_kernel);

void mul_cuda_kernel(const TensorIterator& it) {
  dispatch_dtype<kAllReal>(it.common_dtype(), "mul_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    if constexpr (!std::is_same_v<C, S>) {  // float16, bfloat16
      for (int k : {2, 1}) {
        if (is_number(it, k)) return gpu_kernel<S, S, S>(it, MulByNumberOp<C>{number_value<C>(it, k), k == 1});
      }
    }
    gpu_kernel<S, S, S>(it, MulOp<C>{});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(mul_stub, &mul_cuda_kernel);

void div_cuda_kernel(const TensorIterator& it) {
  dispatch_dtype<kAllFloating>(it.common_dtype(), "div_true_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    if (is_number(it, 2)) {
      return gpu_kernel<S, S, S>(it, MulByNumberOp<C>{C(1) / number_value<C>(it, 2), false});
    }
    gpu_kernel<S, S, S>(it, DivOp<C>{});
  });
}
EMBER_REGISTER_CUDA_POINTWISE(div, &div_cuda_kernel);

void div_trunc_cuda_kernel(const TensorIterator& it) {
  dispatch_dtype<kIntegral | kAllFloating>(it.common_dtype(), "div_trunc_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    const bool by_reciprocal = std::is_floating_point_v<C> && is_number(it, 2);
    const C inv_b = by_reciprocal ? C(1) / number_value<C>(it, 2) : C(0);
    gpu_kernel<S, S, S>(it, DivTruncOp<C>{inv_b, by_reciprocal});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(div_trunc_stub, &div_trunc_cuda_kernel);

void floor_divide_cuda_kernel(const TensorIterator& it) {
  dispatch_dtype<kIntegral | kAllFloating>(it.common_dtype(), "div_floor_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    bool by_reciprocal = false;
    C inv_b = C(0);
    if constexpr (std::is_floating_point_v<C>) {
      // A zero divisor falls back to the division's inf and nan.
      if (is_number(it, 2) && number_value<C>(it, 2) != C(0)) {
        by_reciprocal = true;
        inv_b = C(1) / number_value<C>(it, 2);
      }
    }
    gpu_kernel<S, S, S>(it, DivFloorOp<C>{inv_b, by_reciprocal});
  });
}
EMBER_REGISTER_CUDA_POINTWISE(floor_divide, &floor_divide_cuda_kernel);

// remainder, fmod and pow share a functor switching on the operator.
enum class Arith : int { remainder, fmod, pow };
template <typename C>
struct ArithOp {
  Arith op;
  __device__ C operator()(C a, C b) const {
    switch (op) {
      case Arith::remainder: return RemainderOp<C>{}(a, b);
      case Arith::fmod: return FmodOp<C>{}(a, b);
      default: return PowOp<C>{}(a, b);
    }
  }
};
#define EMBER_ARITH_KERNEL(op)                                                  \
  void op##_cuda_kernel(const TensorIterator& it) {                             \
    binary_same<ArithOp, kIntegral | kAllFloating>(it, #op "_cuda", Arith::op); \
  }                                                                             \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
EMBER_ARITH_KERNEL(remainder);
EMBER_ARITH_KERNEL(fmod);
EMBER_ARITH_KERNEL(pow);
#undef EMBER_ARITH_KERNEL

void pow_tensor_scalar_cuda_kernel(const TensorIterator& it, const Scalar& exponent) {
  dispatch_dtype<kIntegral | kAllFloating>(it.common_dtype(), "pow_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    const C e = scalar_as<S>(exponent);
    int form = 0;
    if constexpr (std::is_floating_point_v<C>) {
      const double d = static_cast<double>(e);
      form = d == 0.5 ? 1 : d == 2 ? 2 : d == 3 ? 3 : d == -0.5 ? 4 : d == -1 ? 5 : d == -2 ? 6 : 0;
    }
    gpu_kernel<S, S>(it, PowScalarOp<C>{e, form});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(pow_tensor_scalar_stub, &pow_tensor_scalar_cuda_kernel);

}  // namespace
}  // namespace ember::cuda
