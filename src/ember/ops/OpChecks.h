#pragma once
// Argument checks and PyTorch messages shared by the native functions.

#include <string>

#include "ember/core/Macros.h"
#include "ember/core/Scalar.h"
#include "ember/ops/Tensor.h"

namespace ember::native {

// f(T{}) for the floating dtypes (float, double, Half, BFloat16); PyTorch's
// NotImplementedError naming the kernel for any other.
template <typename F>
void dispatch_floating_types(ScalarType t, const char* kernel_name, const F& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    case ScalarType::Half: return f(Half{});
    case ScalarType::BFloat16: return f(BFloat16{});
    default:
      throw NotImplementedError(str_cat("\"", kernel_name, "\" not implemented for '", dtype_message_name(t), "'"));
  }
}

}  // namespace ember::native

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

// segment_reduce's offsets (one row of segments + 1 per index of data's dims
// before axis) as contiguous int64 on the CPU, checked: PyTorch's error for a
// negative length, and a RuntimeError for a segment outside the data (where
// PyTorch's kernel would read past it). Note [Segment reductions].
EMBER_API Tensor checked_segment_offsets(const Tensor& data, const Tensor& offsets, int64_t axis);

}  // namespace ember::native::math
