#pragma once
// Shared by the loss operators: the dtype check PyTorch's elementwise loss
// kernels make, and the reduction of a loss.

#include <string_view>

#include "ember/ops/Tensor.h"

namespace ember::native {

// A loss of two integer (or bool) tensors raises NotImplementedError naming
// the kernel.
inline void check_float_loss(const char* kernel, const Tensor& self, const Tensor& target) {
  const ScalarType common = promote_types(self.dtype(), target.dtype());
  if (!is_floating_type(common)) {
    const std::string_view name = legacy_type_name(common);
    throw NotImplementedError(str_cat("\"", kernel, "\" not implemented for '", name.substr(0, name.size() - 6), "'"));
  }
}

// reduction: 0 none, 1 mean, 2 sum.
inline Tensor apply_reduction(const Tensor& loss, int64_t reduction) {
  if (reduction == 1) return loss.mean();
  if (reduction == 2) return loss.sum();
  return loss;
}

}  // namespace ember::native
