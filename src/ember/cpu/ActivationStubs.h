#pragma once
// The elementwise binary cross entropy (inputs: target, input), computed with
// libm's log and log1p as PyTorch's scalar loop; the activation loops
// themselves are pointwise kernels of ops.yaml.

#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

using BinaryCrossEntropyFn = void (*)(const TensorIterator&);
EMBER_DECLARE_DISPATCH(BinaryCrossEntropyFn, binary_cross_entropy_stub);

}  // namespace ember::cpu
