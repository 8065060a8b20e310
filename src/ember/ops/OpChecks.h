#pragma once
// Argument checks and PyTorch messages shared by the native functions.

#include <string>

#include "ember/core/Macros.h"
#include "ember/core/Scalar.h"
#include "ember/ops/Tensor.h"

namespace ember::native::math {

// Throws PyTorch's NotImplementedError for a kernel without this dtype:
// "abs_cpu" not implemented for 'Bool'.
[[noreturn]] EMBER_API void not_implemented_for(const char* kernel, ScalarType t);

// A 0-dim tensor of dtype t holding s; throws PyTorch's overflow error when
// s does not fit ("value cannot be converted to type int8_t without overflow").
// float16/bfloat16 overflow to inf, as in torch.where.
Tensor scalar_tensor_checked(const Scalar& s, ScalarType t);

// Throws when s does not fit in dtype t. Integral types are always checked;
// float16/bfloat16 and float32 only when asked (PyTorch checks them in some
// ops and not in others).
void check_scalar_fits(const Scalar& s, ScalarType t, bool reduced_floats, bool float32);

}  // namespace ember::native::math
