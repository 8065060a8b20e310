#pragma once
// Derivative helpers for view and indexing operators (used by formulas in
// ops.yaml; included through FunctionsManual.h).

#include <optional>
#include <vector>

#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

// Zeros of the input's shape with grad written at [dim][index].
Tensor select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index);
// Gradient of as_strided: grad scattered (added where the view overlaps
// itself) into the storage span, read back with the input's geometry.
Tensor as_strided_backward(const Tensor& grad, IntArrayRef in_sizes, IntArrayRef in_strides, int64_t in_offset,
                           IntArrayRef out_sizes, IntArrayRef out_strides, std::optional<int64_t> out_offset);
// The pieces' gradients joined along dim (zeros for pieces without one).
Tensor split_backward(const std::vector<Tensor>& grads, int64_t split_size, int64_t dim, IntArrayRef sizes,
                      ScalarType dtype);
Tensor split_with_sizes_backward(const std::vector<Tensor>& grads, IntArrayRef split_sizes, int64_t dim,
                                 IntArrayRef sizes, ScalarType dtype);
Tensor unfold_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t size, int64_t step);
Tensor diagonal_backward(const Tensor& grad, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2);
// Zeros of the input's shape with grad added at the indexed positions.
Tensor index_backward(const Tensor& grad, IntArrayRef sizes, const std::vector<Tensor>& indices);
Tensor index_put_self_backward(const Tensor& grad, const std::vector<Tensor>& indices, bool accumulate);
Tensor index_put_values_backward(const Tensor& grad, const std::vector<Tensor>& indices);
Tensor index_select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, const Tensor& index);
// Sum of grad over the positions where mask (broadcast to grad) is true.
Tensor masked_fill_value_backward(const Tensor& grad, const Tensor& mask);

}  // namespace ember::autograd::generated
