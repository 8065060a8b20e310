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
EMBER_DECLARE_DISPATCH(IterFn, copy_stub);  // out = cast(in)

}  // namespace ember::cpu
