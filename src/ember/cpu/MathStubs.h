#pragma once
// Kernels of the elementwise math ops (binary, comparison, logical,
// bitwise, where, clamp), selected at run time by CPU capability. The native
// functions check dtypes before calling a stub; a stub may assume a
// supported dtype.

#include <atomic>
#include <optional>

#include "ember/core/Scalar.h"
#include "ember/cpu/Stubs.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

// Set by integer division kernels that met a zero divisor; the caller throws
// after the loop (kernels never throw inside a parallel region).
struct KernelFlags {
  std::atomic<bool> zero_division{false};
};

using PowScalarFn = void (*)(const TensorIterator&, const Scalar& exponent);
using RoundDecimalsFn = void (*)(const TensorIterator&, int64_t decimals);
using ClampScalarFn = void (*)(const TensorIterator&, const std::optional<Scalar>& min,
                               const std::optional<Scalar>& max);
using LerpScalarFn = void (*)(const TensorIterator&, const Scalar& weight);
using GeluBackwardFn = void (*)(const TensorIterator&, bool tanh_approximation);

EMBER_DECLARE_DISPATCH(IterFn, div_trunc_stub);  // out = trunc(a / b), inputs of the common dtype
EMBER_DECLARE_DISPATCH(PowScalarFn, pow_tensor_scalar_stub);
EMBER_DECLARE_DISPATCH(RoundDecimalsFn, round_decimals_stub);
EMBER_DECLARE_DISPATCH(ClampScalarFn, clamp_scalar_stub);  // at least one bound
EMBER_DECLARE_DISPATCH(IterFn, clamp_tensor_stub);  // out = clamp(in, min, max), NaN bounds propagate
EMBER_DECLARE_DISPATCH(IterFn, where_stub);  // out = cond ? a : b (cond is bool or uint8)
EMBER_DECLARE_DISPATCH(LerpScalarFn, lerp_scalar_stub);  // out = lerp(self, end, weight)
EMBER_DECLARE_DISPATCH(IterFn, lerp_tensor_stub);
EMBER_DECLARE_DISPATCH(GeluBackwardFn, gelu_backward_stub);  // out = d gelu(x) * grad, inputs (grad, x)

}  // namespace ember::cpu
