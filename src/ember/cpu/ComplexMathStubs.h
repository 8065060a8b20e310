#pragma once
// Complex loops of asinh, acosh, atanh, log10, log2, log1p, expm1, exp2 and
// sinc (cpu/kernels/ComplexMathKernel.cpp). Their native functions
// (cpu/ComplexMathOps.cpp) run the generated real stub for other dtypes.

#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

enum class ComplexMath { asinh, acosh, atanh, log10, log2, log1p, expm1, exp2, sinc };

using ComplexMathFn = void (*)(const TensorIterator&, ComplexMath);
EMBER_DECLARE_DISPATCH(ComplexMathFn, complex_math_stub);

}  // namespace ember::cpu
