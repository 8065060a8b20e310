#pragma once
// The hand-written stubs the CUDA pointwise kernels fill. They are defined
// by the CPU library and declared in cpu/Stubs.h, cpu/MathStubs.h and
// cpu/FusedPointwiseStubs.h, which the cuda layer does not include
// (tools/check_layers.py); the declarations below repeat theirs exactly.
#include <cstdint>
#include <optional>

#include "ember/core/Scalar.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

using BinaryScalarFn = void (*)(const TensorIterator&, const Scalar&);
using IterFn = void (*)(const TensorIterator&);
EMBER_DECLARE_DISPATCH(BinaryScalarFn, add_stub);
EMBER_DECLARE_DISPATCH(IterFn, mul_stub);
EMBER_DECLARE_DISPATCH(IterFn, neg_stub);
EMBER_DECLARE_DISPATCH(BinaryScalarFn, fill_stub);
EMBER_DECLARE_DISPATCH(IterFn, copy_stub);

using PowScalarFn = void (*)(const TensorIterator&, const Scalar& exponent);
using RoundDecimalsFn = void (*)(const TensorIterator&, int64_t decimals);
using ClampScalarFn = void (*)(const TensorIterator&, const std::optional<Scalar>& min,
                               const std::optional<Scalar>& max);
using LerpScalarFn = void (*)(const TensorIterator&, const Scalar& weight);
using GeluBackwardFn = void (*)(const TensorIterator&, bool tanh_approximation);
EMBER_DECLARE_DISPATCH(IterFn, div_trunc_stub);
EMBER_DECLARE_DISPATCH(PowScalarFn, pow_tensor_scalar_stub);
EMBER_DECLARE_DISPATCH(RoundDecimalsFn, round_decimals_stub);
EMBER_DECLARE_DISPATCH(ClampScalarFn, clamp_scalar_stub);
EMBER_DECLARE_DISPATCH(IterFn, clamp_tensor_stub);
EMBER_DECLARE_DISPATCH(IterFn, where_stub);
EMBER_DECLARE_DISPATCH(LerpScalarFn, lerp_scalar_stub);
EMBER_DECLARE_DISPATCH(IterFn, lerp_tensor_stub);
EMBER_DECLARE_DISPATCH(GeluBackwardFn, gelu_backward_stub);

using AddcFn = void (*)(const TensorIterator& it, const Scalar& value, bool divide);
using NanToNumFn = void (*)(const TensorIterator& it, double nan, double posinf, double neginf);
EMBER_DECLARE_DISPATCH(AddcFn, addc_stub);
EMBER_DECLARE_DISPATCH(NanToNumFn, nan_to_num_stub);

}  // namespace ember::cpu
