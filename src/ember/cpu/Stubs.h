#pragma once
// Kernels selected at run time by CPU capability (see DispatchStub.h). Each is
// defined in cpu/kernels/*.cpp, which is compiled once per capability.

#include "ember/core/Scalar.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

using BinaryScalarFn = void (*)(const TensorIterator&, const Scalar&);
using IterFn = void (*)(const TensorIterator&);

EMBER_DECLARE_DISPATCH(BinaryScalarFn, add_stub);  // out = a + alpha * b
EMBER_DECLARE_DISPATCH(IterFn, mul_stub);
EMBER_DECLARE_DISPATCH(IterFn, neg_stub);
EMBER_DECLARE_DISPATCH(BinaryScalarFn, fill_stub);  // nullary: out = value
EMBER_DECLARE_DISPATCH(IterFn, copy_stub);          // out = cast(in)
// 16-bit floats times (or divided by) a number kept in float: out = in * b or in / b.
using ScaleFn = void (*)(const TensorIterator&, float b, bool divide);
EMBER_DECLARE_DISPATCH(ScaleFn, scale_16bit_stub);

// Note [Scalar operand of 16-bit products]: x * s and x / s on float16 and
// bfloat16, with s a 0-dim tensor (or a Python number) of another dtype, use
// s rounded to float, not to x's dtype, as PyTorch's mul and div do. Returns
// false when the case does not apply.
bool scale_16bit(const Tensor& self, const Tensor& other, Tensor& out, bool divide);

}  // namespace ember::cpu
