#pragma once
// Kernels of addcmul/addcdiv and nan_to_num (cpu/kernels/FusedPointwiseKernel.cpp),
// selected by CPU capability like those in Stubs.h.

#include "ember/core/Scalar.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

// out = self + value * t1 * t2 (or * t1 / t2 when divide) over an iterator
// (out, self, t1, t2) of one dtype.
using AddcFn = void (*)(const TensorIterator& it, const Scalar& value, bool divide);
// out = self with NaN, +inf and -inf replaced (floating dtypes).
using NanToNumFn = void (*)(const TensorIterator& it, double nan, double posinf, double neginf);

EMBER_DECLARE_DISPATCH(AddcFn, addc_stub);
EMBER_DECLARE_DISPATCH(NanToNumFn, nan_to_num_stub);

}  // namespace ember::cpu
