#pragma once
// Helpers used by derivative formulas in ops.yaml.

#include <optional>
#include <vector>

#include "ember/autograd/FunctionsComplex.h"
#include "ember/autograd/FunctionsDoubleBackward.h"
#include "ember/autograd/FunctionsFFT.h"
#include "ember/autograd/FunctionsMath.h"
#include "ember/autograd/FunctionsSpecial.h"
#include "ember/autograd/TensorOpsBackward.h"
#include "ember/autograd/ViewsBackward.h"
#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

// grad * s, skipping the multiply when s == 1.
Tensor maybe_multiply(const Tensor& grad, const Scalar& s);
// grad * conj(s) (s itself when real), as PyTorch's formulas with beta.conj().
Tensor maybe_multiply_conj(const Tensor& grad, const Scalar& s);
// PyTorch's not_implemented("name") of a derivative formula: raises its NotImplementedError.
[[noreturn]] Tensor not_implemented(const char* name);
// Sums grad down to shape (the inverse of broadcasting/expand).
Tensor sum_to(const Tensor& grad, IntArrayRef shape);
// Backward of sum over dims: re-insert reduced dims and expand.
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dims,
                    bool keepdim);
Tensor permute_backwards(const Tensor& grad, IntArrayRef dims);
// Zeros of the input's shape with grad written into the sliced region.
Tensor slice_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step);
// Stacks the outputs' gradients back along dim (undefined ones as zeros).
Tensor unbind_backward(const std::vector<Tensor>& grads, int64_t dim, IntArrayRef sizes, ScalarType dtype);
// Splits grad along dim into pieces the sizes of the inputs.
std::vector<Tensor> cat_tensors_backward(const Tensor& grad, const std::vector<Tensor>& tensors, int64_t dim);
// d/d(self) of mse_loss (for target, call with self and target swapped).
Tensor mse_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction);
std::vector<Tensor> stack_tensors_backward(const Tensor& grad, int64_t dim, size_t n);

}  // namespace ember::autograd::generated

#include "ember/autograd/FunctionsManualReduce.h"
