#pragma once
// Pieces of PyTorch's error messages shared by the reduction, softmax and
// matrix-product kernels' argument checks.

#include <string>

#include "ember/ops/Tensor.h"

namespace ember::native {

using ::ember::cpp_type_name;  // core/ScalarType.h

// out= must have exactly this dtype (when given).
inline void check_out_dtype(const Tensor& out, ScalarType want) {
  EMBER_CHECK(!out.defined() || out.dtype() == want, "Expected out tensor to have dtype ", cpp_type_name(want),
              ", but got ", cpp_type_name(out.dtype()), " instead");
}

}  // namespace ember::native
