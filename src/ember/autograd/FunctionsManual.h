#pragma once
// Helpers used by derivative formulas in ops.yaml.

#include <optional>
#include <vector>

#include "ember/autograd/FunctionsMath.h"
#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

// grad * s, skipping the multiply when s == 1.
Tensor maybe_multiply(const Tensor& grad, const Scalar& s);
// Sums grad down to shape (the inverse of broadcasting/expand).
Tensor sum_to(const Tensor& grad, IntArrayRef shape);
// Backward of sum over dims: re-insert reduced dims and expand.
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dims,
                    bool keepdim);
Tensor permute_backwards(const Tensor& grad, IntArrayRef dims);

}  // namespace ember::autograd::generated
