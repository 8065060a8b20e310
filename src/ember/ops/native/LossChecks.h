#pragma once
// The dtype check PyTorch's elementwise loss kernels make: a loss of two
// integer (or bool) tensors raises NotImplementedError naming the kernel.

#include <string_view>

#include "ember/ops/Tensor.h"

namespace ember::native {

inline void check_float_loss(const char* kernel, const Tensor& self, const Tensor& target) {
  const ScalarType common = promote_types(self.dtype(), target.dtype());
  if (!is_floating_type(common)) {
    const std::string_view name = legacy_type_name(common);
    throw NotImplementedError(str_cat("\"", kernel, "\" not implemented for '", name.substr(0, name.size() - 6), "'"));
  }
}

}  // namespace ember::native
