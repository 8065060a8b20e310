#pragma once
// Kernels of the elementwise math ops (unary, binary, comparison, logical,
// bitwise, where, clamp), selected at run time by CPU capability. The native
// functions check dtypes before calling a stub; a stub may assume a
// supported dtype.

#include <atomic>
#include <optional>

#include "ember/core/Scalar.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

enum class UnaryOp : uint8_t {
  // same dtype in and out
  Abs, Sign, Relu, Silu, GeluErf, GeluTanh, Floor, Ceil, Round, Trunc, BitwiseNot,
  // floating only (integral inputs were promoted)
  Exp, Log, Log1p, Expm1, Log2, Sqrt, Rsqrt, Sin, Cos, Tan, Tanh, Sigmoid, Reciprocal,
  Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Erf, Erfc, Exp2, Log10,
  // bool results
  LogicalNot, IsNan, IsInf, IsFinite,
};

enum class BinaryOp : uint8_t {
  // same dtype in and out
  Div, DivTrunc, DivFloor, Remainder, Fmod, Pow, Maximum, Minimum, Fmax, Fmin, Atan2,
  BitAnd, BitOr, BitXor, Lshift, Rshift,
  // bool results
  Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr, LogicalXor,
};

inline bool has_bool_result(UnaryOp op) { return op >= UnaryOp::LogicalNot; }
inline bool has_bool_result(BinaryOp op) { return op >= BinaryOp::Eq; }

// Set by integer division kernels that met a zero divisor; the caller throws
// after the loop (kernels never throw inside a parallel region).
struct KernelFlags {
  std::atomic<bool> zero_division{false};
};

using UnaryMathFn = void (*)(const TensorIterator&, UnaryOp);
using BinaryMathFn = void (*)(const TensorIterator&, BinaryOp, KernelFlags&);
using PowScalarFn = void (*)(const TensorIterator&, const Scalar& exponent);
using RoundDecimalsFn = void (*)(const TensorIterator&, int64_t decimals);
using ClampScalarFn = void (*)(const TensorIterator&, const std::optional<Scalar>& min,
                               const std::optional<Scalar>& max);
using TernaryFn = void (*)(const TensorIterator&);
using LerpScalarFn = void (*)(const TensorIterator&, const Scalar& weight);
using GeluBackwardFn = void (*)(const TensorIterator&, bool tanh_approximation);

EMBER_DECLARE_DISPATCH(UnaryMathFn, unary_math_stub);    // out = op(in)
EMBER_DECLARE_DISPATCH(BinaryMathFn, binary_math_stub);  // out = op(a, b)
EMBER_DECLARE_DISPATCH(PowScalarFn, pow_tensor_scalar_stub);
EMBER_DECLARE_DISPATCH(RoundDecimalsFn, round_decimals_stub);
EMBER_DECLARE_DISPATCH(ClampScalarFn, clamp_scalar_stub);  // at least one bound
EMBER_DECLARE_DISPATCH(TernaryFn, clamp_tensor_stub);      // out = clamp(in, min, max), NaN bounds propagate
EMBER_DECLARE_DISPATCH(TernaryFn, where_stub);             // out = cond ? a : b (cond is bool or uint8)
EMBER_DECLARE_DISPATCH(LerpScalarFn, lerp_scalar_stub);    // out = lerp(self, end, weight)
EMBER_DECLARE_DISPATCH(TernaryFn, lerp_tensor_stub);
EMBER_DECLARE_DISPATCH(GeluBackwardFn, gelu_backward_stub);  // out = d gelu(x) * grad, inputs (grad, x)

}  // namespace ember::cpu
