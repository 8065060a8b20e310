// CUDA kernels of the unary operators that keep integral dtypes (abs, sign,
// rounding, bitwise_not, neg), the bool-valued tests (isnan, isinf,
// isfinite, signbit, logical_not), round(decimals) and nan_to_num.
#include <cmath>

#include "ember/cpu/FusedPointwiseStubs.h"
#include "ember/cpu/MathStubs.h"
#include "ember/cpu/Stubs.h"
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cuda {
namespace {

template <typename C>
struct AbsOp {
  __device__ C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      return dm::fabs(x);
    } else if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return x < 0 ? C(-x) : x;
    }
  }
};

template <typename C>
struct SignOp {
  __device__ C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>) {
      return x;
    } else if constexpr (std::is_unsigned_v<C>) {
      return C(x > 0);
    } else {
      return C((C(0) < x) - (x < C(0)));
    }
  }
};

template <typename C>
struct NegOp {
  __device__ C operator()(C x) const { return C(-x); }
};

// Rounding functions; integral values are already whole.
#define EMBER_ROUNDING_OP(Name, fn)              \
  template <typename C>                          \
  struct Name {                                  \
    __device__ C operator()(C x) const {         \
      if constexpr (std::is_floating_point_v<C>) \
        return dm::fn(x);                        \
      else                                       \
        return x;                                \
    }                                            \
  }
EMBER_ROUNDING_OP(FloorOp, floor);
EMBER_ROUNDING_OP(CeilOp, ceil);
EMBER_ROUNDING_OP(RoundOp, nearbyint);  // half to even
EMBER_ROUNDING_OP(TruncOp, trunc);
#undef EMBER_ROUNDING_OP

template <typename C>
struct BitwiseNotOp {
  __device__ C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>)
      return !x;
    else
      return C(~x);
  }
};

template <typename C>
struct LogicalNotOp {
  __device__ bool operator()(C x) const { return !(x != C(0)); }
};
template <typename C>
struct IsNanOp {
  __device__ bool operator()(C x) const { return dm::isnan(x); }
};
template <typename C>
struct IsInfOp {
  __device__ bool operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>)
      return x == dm::inf<C>() || x == -dm::inf<C>();
    else
      return false;
  }
};
template <typename C>
struct IsFiniteOp {
  __device__ bool operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>)
      return x == x && x != dm::inf<C>() && x != -dm::inf<C>();
    else
      return true;
  }
};
template <typename C>
struct SignbitOp {
  __device__ bool operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>)
      return ::signbit(x);
    else if constexpr (std::is_unsigned_v<C> || std::is_same_v<C, bool>)
      return false;
    else
      return x < 0;
  }
};

// As PyTorch's CUDA kernel, whose scalar_t product (or quotient) rounds to
// the 16-bit type before nearbyint; the last step is in float.
template <typename S>
struct RoundDecimalsOp {
  using C = opmath_t<S>;
  C ten_pow;
  bool negative;
  __device__ static C in_storage(C v) {
    if constexpr (std::is_same_v<C, S>) {
      return v;
    } else {
      return load_as_opmath(store_from<S>(v));
    }
  }
  __device__ C operator()(C x) const {
    return negative ? dm::nearbyint(in_storage(x / ten_pow)) * ten_pow
                    : dm::nearbyint(in_storage(x * ten_pow)) / ten_pow;
  }
};

template <typename C>
struct NanToNumOp {
  C nan, posinf, neginf;
  __device__ C operator()(C x) const {
    if (x != x) return nan;
    if (x == dm::inf<C>()) return posinf;
    if (x == -dm::inf<C>()) return neginf;
    return x;
  }
};

// Operators of one result kind share a functor switching on the operator
// (uniform per launch): 2 kernels per dtype for each kind.
enum class Unary : int {
  abs,
  sign,
  floor,
  ceil,
  round,
  trunc,
  bitwise_not,
  neg,  // same dtype out
  logical_not,
  isnan,
  isinf,
  isfinite,
  signbit,  // bool out
};

template <typename C>
struct SameDtypeOp {
  Unary op;
  __device__ C operator()(C x) const {
    switch (op) {
      case Unary::abs: return AbsOp<C>{}(x);
      case Unary::sign: return SignOp<C>{}(x);
      case Unary::floor: return FloorOp<C>{}(x);
      case Unary::ceil: return CeilOp<C>{}(x);
      case Unary::round: return RoundOp<C>{}(x);
      case Unary::trunc: return TruncOp<C>{}(x);
      case Unary::bitwise_not:
        if constexpr (std::is_integral_v<C>) return BitwiseNotOp<C>{}(x);
        break;
      case Unary::neg:
        if constexpr (!std::is_same_v<C, bool>) return NegOp<C>{}(x);
        break;
      default: break;
    }
    return x;
  }
};

template <typename C>
struct ToBoolOp {
  Unary op;
  __device__ bool operator()(C x) const {
    switch (op) {
      case Unary::logical_not: return LogicalNotOp<C>{}(x);
      case Unary::isnan: return IsNanOp<C>{}(x);
      case Unary::isinf: return IsInfOp<C>{}(x);
      case Unary::isfinite: return IsFiniteOp<C>{}(x);
      default: return SignbitOp<C>{}(x);
    }
  }
};

#define EMBER_UNARY_KERNEL(op, set)                                                                             \
  void op##_cuda_kernel(const TensorIterator& it) { unary_same<SameDtypeOp, set>(it, #op "_cuda", Unary::op); } \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
EMBER_UNARY_KERNEL(abs, kIntegral | kAllFloating);
EMBER_UNARY_KERNEL(sign, kAllReal);
EMBER_UNARY_KERNEL(floor, kIntegral | kAllFloating);
EMBER_UNARY_KERNEL(ceil, kIntegral | kAllFloating);
EMBER_UNARY_KERNEL(round, kIntegral | kAllFloating);
EMBER_UNARY_KERNEL(trunc, kIntegral | kAllFloating);
EMBER_UNARY_KERNEL(bitwise_not, kBool | kIntegral);
#undef EMBER_UNARY_KERNEL

void neg_cuda_kernel(const TensorIterator& it) {
  unary_same<SameDtypeOp, kIntegral | kAllFloating>(it, "neg_cuda", Unary::neg);
}
EMBER_REGISTER_CUDA_DISPATCH(neg_stub, &neg_cuda_kernel);

// Bool result from the input's own dtype.
void to_bool(const TensorIterator& it, const char* name, Unary op) {
  dispatch_dtype<kAllReal>(it.dtype(1), name, [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<bool, S>(it, ToBoolOp<opmath_t<S>>{op});
  });
}
#define EMBER_TO_BOOL_KERNEL(op)                                                           \
  void op##_cuda_kernel(const TensorIterator& it) { to_bool(it, #op "_cuda", Unary::op); } \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
EMBER_TO_BOOL_KERNEL(logical_not);
EMBER_TO_BOOL_KERNEL(isnan);
EMBER_TO_BOOL_KERNEL(isinf);
EMBER_TO_BOOL_KERNEL(isfinite);
EMBER_TO_BOOL_KERNEL(signbit);
#undef EMBER_TO_BOOL_KERNEL

void round_decimals_cuda_kernel(const TensorIterator& it, int64_t decimals) {
  dispatch_dtype<kAllFloating>(it.common_dtype(), "round_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    const bool negative = decimals < 0;
    const double p = std::pow(10.0, static_cast<double>(negative ? -decimals : decimals));
    gpu_kernel<S, S>(it, RoundDecimalsOp<S>{scalar_as<S>(Scalar(p)), negative});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(round_decimals_stub, &round_decimals_cuda_kernel);

void nan_to_num_cuda_kernel(const TensorIterator& it, double nan, double posinf, double neginf) {
  dispatch_dtype<kAllFloating>(it.common_dtype(), "nan_to_num_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S>(it, NanToNumOp<opmath_t<S>>{scalar_as<S>(Scalar(nan)), scalar_as<S>(Scalar(posinf)),
                                                 scalar_as<S>(Scalar(neginf))});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(nan_to_num_stub, &nan_to_num_cuda_kernel);

}  // namespace
}  // namespace ember::cuda
