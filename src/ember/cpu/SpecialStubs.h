#pragma once
// Kernels of the special functions (lgamma, digamma, polygamma, i0, sinc,
// logit, hypot, copysign, xlogy, ...), selected at run time by CPU
// capability. The native functions (cpu/SpecialOps.cpp) check dtypes first.

#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

enum class SpecialUnaryOp : uint8_t {
  // floating in and out (integral inputs were promoted)
  Lgamma, Digamma, Trigamma, Polygamma, I0, I1, Sinc, Frac, Logit, Scale,
  // bool result, any real input
  Signbit,
};

enum class SpecialBinaryOp : uint8_t { Hypot, Copysign, Xlogy, Xlog1py };

// param: the order n for Polygamma (n >= 2), eps for Logit (< 0: none), the
// factor for Scale (x * param, the factor rounded to the computation type).
using SpecialUnaryFn = void (*)(const TensorIterator&, SpecialUnaryOp, double param);
using SpecialBinaryFn = void (*)(const TensorIterator&, SpecialBinaryOp);

EMBER_DECLARE_DISPATCH(SpecialUnaryFn, special_unary_stub);    // out = op(in)
EMBER_DECLARE_DISPATCH(SpecialBinaryFn, special_binary_stub);  // out = op(a, b), floating

}  // namespace ember::cpu
