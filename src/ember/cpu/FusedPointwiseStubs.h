#pragma once
// Kernels of addcmul/addcdiv and nan_to_num (cpu/kernels/FusedPointwiseKernel.cpp) and addr
// (cpu/kernels/LinearAlgebraKernel.cpp),
// selected by CPU capability like those in Stubs.h.

#include "ember/core/Scalar.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

// out = self + value * t1 * t2 (or * t1 / t2 when divide) over an iterator
// (out, self, t1, t2) of one dtype.
using AddcFn = void (*)(const TensorIterator& it, const Scalar& value, bool divide);
// out = beta * self + alpha * vec1 * vec2 over an iterator (out, self, vec1
// as a column, vec2 as a row) of float or double (Note [addr in PyTorch's forms]).
using AddrFn = void (*)(const TensorIterator& it, double beta, double alpha);
// out = self with NaN, +inf and -inf replaced (floating dtypes).
using NanToNumFn = void (*)(const TensorIterator& it, double nan, double posinf, double neginf);

EMBER_DECLARE_DISPATCH(AddcFn, addc_stub);
EMBER_DECLARE_DISPATCH(AddrFn, addr_stub);
EMBER_DECLARE_DISPATCH(NanToNumFn, nan_to_num_stub);

}  // namespace ember::cpu
