#pragma once
// Derivative helpers of the reductions, softmax and matrix products in
// ops.yaml (included by FunctionsManual.h).

#include <optional>
#include <vector>

#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

// grad with the reduced dims re-inserted (size 1) when keepdim was false.
Tensor restore_reduced_dims(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dims,
                            bool keepdim);
// mean: grad expanded over the reduced dims, divided by their element count.
Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dims,
                     bool keepdim);
// nansum: grad expanded, zero where self is NaN.
Tensor nansum_backward(const Tensor& grad, const Tensor& self, const std::optional<std::vector<int64_t>>& dims,
                       bool keepdim);
// prod over all elements (dim unset) or one dim; exact when self has zeros.
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<int64_t> dim,
                     bool keepdim);
// max/min along a dim: grad goes to the selected index.
Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                          bool keepdim);
// Full max/min (and amax/amin): grad shared evenly by the elements equal to the result.
Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
Tensor amax_amin_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims, bool keepdim);
// var/std with a correction (default 1); the var_mean/std_mean forms take
// either gradient possibly undefined.
Tensor var_backward(const Tensor& grad, const Tensor& self, const std::optional<std::vector<int64_t>>& dims,
                    const std::optional<Scalar>& correction, bool keepdim);
Tensor std_backward(const Tensor& result, const Tensor& grad, const Tensor& self,
                    const std::optional<std::vector<int64_t>>& dims, const std::optional<Scalar>& correction,
                    bool keepdim);
Tensor var_mean_backward(const Tensor& gvar, const Tensor& gmean, const Tensor& self,
                         const std::optional<std::vector<int64_t>>& dims, const std::optional<Scalar>& correction,
                         bool keepdim);
Tensor std_mean_backward(const Tensor& gstd, const Tensor& gmean, const Tensor& self, const Tensor& std,
                         const std::optional<std::vector<int64_t>>& dims, const std::optional<Scalar>& correction,
                         bool keepdim);
Tensor linalg_vector_norm_backward(const Tensor& grad, const Tensor& self, const Scalar& ord, const Tensor& result,
                                   const std::optional<std::vector<int64_t>>& dims, bool keepdim);
Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims, bool keepdim);
// Reverse cumulative sum of grad along dim, cast to dtype.
Tensor cumsum_backward(const Tensor& grad, int64_t dim, ScalarType dtype);
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result);
// Matrix products: d(A @ B)/dA = grad @ B^T, d/dB = A^T @ grad (batched for bmm).
Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2);
// Takes mat2's layout when mat2 is a transposed matrix (a Linear weight used
// as w.t()), so the gradient reaches the weight contiguous, as in PyTorch.
Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, IntArrayRef mat2_sizes, IntArrayRef mat2_strides);
Tensor bmm_backward_self(const Tensor& grad, const Tensor& mat2);
Tensor bmm_backward_mat2(const Tensor& grad, const Tensor& self);
// addbmm: grad of the batch-summed product, per batch.
Tensor addbmm_backward_batch1(const Tensor& grad, const Tensor& batch2, int64_t batch);
Tensor addbmm_backward_batch2(const Tensor& grad, const Tensor& batch1, int64_t batch);
// mv: d/dmat = outer(grad, vec), d/dvec = mat^T @ grad.
Tensor mv_mat_backward(const Tensor& grad, const Tensor& vec);
Tensor mv_vec_backward(const Tensor& grad, const Tensor& mat);
// Second derivative of softmax/log_softmax with respect to the forward output.
Tensor softmax_double_backward(const Tensor& gg, const Tensor& grad_output, const Tensor& output, int64_t dim);
Tensor log_softmax_double_backward(const Tensor& gg, const Tensor& grad_output, const Tensor& output, int64_t dim);
// Derivative of _log_softmax_backward_data with respect to its grad_output.
Tensor log_softmax_backward_data_grad(const Tensor& gg, const Tensor& output, int64_t dim);

}  // namespace ember::autograd::generated
