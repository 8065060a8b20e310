#pragma once
// Derivative helpers for gather, scatter, index_add/index_copy, sort and topk
// (used by formulas in ops.yaml; included through FunctionsManual.h).

#include <string>

#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

// Zeros of self's shape with grad added at index along dim.
Tensor gather_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index);
// Zeros of self's shape with grad written where the sorted values came from.
Tensor sort_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes);
// grad rows at index along dim, times alpha, in source's shape.
Tensor index_source_backward(const Tensor& grad, int64_t dim, const Tensor& index, const Tensor& source,
                             const Scalar& alpha);
Tensor scatter_reduce_self_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                    const Tensor& src, const std::string& reduce, bool include_self,
                                    const Tensor& result);
Tensor scatter_reduce_src_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                   const Tensor& src, const std::string& reduce, bool include_self,
                                   const Tensor& result);
// Gradients of masked_select, masked_scatter's source, repeat, roll, trace.
Tensor masked_select_backward(const Tensor& grad, const Tensor& self, const Tensor& mask);
Tensor masked_scatter_source_backward(const Tensor& grad, const Tensor& mask, IntArrayRef source_sizes);
Tensor repeat_backward(const Tensor& grad, IntArrayRef repeats, IntArrayRef sizes);
Tensor roll_backward(const Tensor& grad, IntArrayRef shifts, IntArrayRef dims);
Tensor trace_backward(const Tensor& grad, IntArrayRef sizes);
Tensor addcmul_tensor_backward(const Tensor& grad, const Tensor& other, const Scalar& value);
Tensor addcdiv_tensor1_backward(const Tensor& grad, const Tensor& tensor2, const Scalar& value);
Tensor addcdiv_tensor2_backward(const Tensor& grad, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value);

}  // namespace ember::autograd::generated
