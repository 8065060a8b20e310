// CUDA kernels of the other binary operators: maximum/minimum (NaN
// propagating) and fmax/fmin (NaN ignoring), atan2, copysign, hypot,
// logaddexp(2), xlogy, xlog1py, and the bitwise operators and shifts.
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cuda {
namespace {

template <typename C>
struct MaximumOp {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) {
      return a || b;
    } else {
      if (dm::isnan(a)) return a;
      if (dm::isnan(b)) return b;
      return a < b ? b : a;
    }
  }
};
template <typename C>
struct MinimumOp {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) {
      return a && b;
    } else {
      if (dm::isnan(a)) return a;
      if (dm::isnan(b)) return b;
      return b < a ? b : a;
    }
  }
};
template <typename C>
struct FmaxOp {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>)
      return dm::fmax(a, b);
    else if constexpr (std::is_same_v<C, bool>)
      return a || b;
    else
      return a < b ? b : a;
  }
};
template <typename C>
struct FminOp {
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>)
      return dm::fmin(a, b);
    else if constexpr (std::is_same_v<C, bool>)
      return a && b;
    else
      return b < a ? b : a;
  }
};

template <typename C>
struct LogaddexpOp {
  __device__ C operator()(C a, C b) const {
    if ((a == dm::inf<C>() || a == -dm::inf<C>()) && a == b) return a;
    const C m = a < b ? b : a;
    return m + dm::log1p(dm::exp(-dm::fabs(a - b)));
  }
};
template <typename C>
struct Logaddexp2Op {
  __device__ C operator()(C a, C b) const {
    if ((a == dm::inf<C>() || a == -dm::inf<C>()) && a == b) return a;
    const C m = a < b ? b : a;
    return m + dm::log1p(dm::exp2(-dm::fabs(a - b))) * C(1.4426950408889634);  // 1 / ln 2
  }
};
template <typename C>
struct XlogyOp {
  __device__ C operator()(C x, C y) const {
    if (dm::isnan(y)) return dm::nan<C>();
    if (x == C(0)) return C(0);
    return x * dm::log(y);
  }
};
template <typename C>
struct Xlog1pyOp {
  __device__ C operator()(C x, C y) const {
    if (dm::isnan(y)) return dm::nan<C>();
    if (x == C(0)) return C(0);
    return x * dm::log1p(y);
  }
};

// Shifts by a negative or too large amount give 0 (left) or the sign fill (right).
template <typename C>
struct LeftShiftOp {
  __device__ C operator()(C a, C b) const {
    constexpr int bits = sizeof(C) * 8;
    if ((std::is_signed_v<C> && b < 0) || b >= bits) return 0;
    return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) << b);
  }
};
template <typename C>
struct RightShiftOp {
  __device__ C operator()(C a, C b) const {
    constexpr int max_shift = sizeof(C) * 8 - static_cast<int>(std::is_signed_v<C>);
    if ((std::is_signed_v<C> && b < 0) || b > max_shift) return C(a >> max_shift);
    return C(a >> b);
  }
};

// Operators of one dtype set share a functor that switches on the operator
// (uniform per launch), so each set compiles 2 kernels per dtype in all.
enum class Binary : int {
  maximum,
  minimum,
  fmax,
  fmin,  // every real dtype
  atan2,
  copysign,
  hypot,
  logaddexp,
  logaddexp2,
  xlogy,
  special_xlog1py,  // floating
  bitwise_and,
  bitwise_or,
  bitwise_xor,  // bool and integral
  bitwise_left_shift,
  bitwise_right_shift,  // integral
};

template <typename C>
struct MinMaxOp {
  Binary op;
  __device__ C operator()(C a, C b) const {
    switch (op) {
      case Binary::maximum: return MaximumOp<C>{}(a, b);
      case Binary::minimum: return MinimumOp<C>{}(a, b);
      case Binary::fmax: return FmaxOp<C>{}(a, b);
      default: return FminOp<C>{}(a, b);
    }
  }
};
template <typename C>
struct FloatBinaryOp {
  Binary op;
  __device__ C operator()(C a, C b) const {
    switch (op) {
      case Binary::atan2: return dm::atan2(a, b);
      case Binary::copysign: return dm::copysign(a, b);
      case Binary::hypot: return dm::hypot(a, b);
      case Binary::logaddexp: return LogaddexpOp<C>{}(a, b);
      case Binary::logaddexp2: return Logaddexp2Op<C>{}(a, b);
      case Binary::xlogy: return XlogyOp<C>{}(a, b);
      default: return Xlog1pyOp<C>{}(a, b);
    }
  }
};
template <typename C>
struct BitwiseOp {
  Binary op;
  __device__ C operator()(C a, C b) const {
    switch (op) {
      case Binary::bitwise_and: return a & b;
      case Binary::bitwise_or: return a | b;
      default: return a ^ b;
    }
  }
};
template <typename C>
struct ShiftOp {
  Binary op;
  __device__ C operator()(C a, C b) const {
    return op == Binary::bitwise_left_shift ? LeftShiftOp<C>{}(a, b) : RightShiftOp<C>{}(a, b);
  }
};

#define EMBER_BINARY_KERNEL(op, Op, set)                                                                 \
  void op##_cuda_kernel(const TensorIterator& it) { binary_same<Op, set>(it, #op "_cuda", Binary::op); } \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
EMBER_BINARY_KERNEL(maximum, MinMaxOp, kAllReal);
EMBER_BINARY_KERNEL(minimum, MinMaxOp, kAllReal);
EMBER_BINARY_KERNEL(fmax, MinMaxOp, kAllReal);
EMBER_BINARY_KERNEL(fmin, MinMaxOp, kAllReal);
EMBER_BINARY_KERNEL(atan2, FloatBinaryOp, kAllFloating);
EMBER_BINARY_KERNEL(copysign, FloatBinaryOp, kAllFloating);
EMBER_BINARY_KERNEL(hypot, FloatBinaryOp, kAllFloating);
EMBER_BINARY_KERNEL(logaddexp, FloatBinaryOp, kAllFloating);
EMBER_BINARY_KERNEL(logaddexp2, FloatBinaryOp, kAllFloating);
EMBER_BINARY_KERNEL(xlogy, FloatBinaryOp, kAllFloating);
EMBER_BINARY_KERNEL(special_xlog1py, FloatBinaryOp, kAllFloating);
EMBER_BINARY_KERNEL(bitwise_and, BitwiseOp, kBool | kIntegral);
EMBER_BINARY_KERNEL(bitwise_or, BitwiseOp, kBool | kIntegral);
EMBER_BINARY_KERNEL(bitwise_xor, BitwiseOp, kBool | kIntegral);
EMBER_BINARY_KERNEL(bitwise_left_shift, ShiftOp, kIntegral);
EMBER_BINARY_KERNEL(bitwise_right_shift, ShiftOp, kIntegral);
#undef EMBER_BINARY_KERNEL

}  // namespace
}  // namespace ember::cuda
