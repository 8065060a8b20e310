// Derivative helpers for gather, scatter, index_add/index_copy, sort and topk.
#include "ember/autograd/TensorOpsBackward.h"

#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"

namespace ember::autograd::generated {

Tensor gather_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index) {
  return zeros(self.sizes(), grad.dtype(), grad.device()).scatter_add(dim, index, grad);
}

Tensor sort_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes) {
  if (sizes.empty()) return grad.reshape({});
  return zeros(sizes, grad.dtype(), grad.device()).scatter(dim, indices, grad);
}

Tensor index_source_backward(const Tensor& grad, int64_t dim, const Tensor& index, const Tensor& source,
                             const Scalar& alpha) {
  Tensor g = grad.dim() == 0 ? grad : grad.index_select(dim, index.reshape({-1}));
  // PyTorch multiplies by alpha itself, complex or not (no conjugate).
  if (!(alpha.is_integral() && alpha.to_long() == 1)) g = g * alpha;
  return g.reshape(source.sizes());
}

namespace {
Tensor forget_self(const Tensor& g, int64_t dim, const Tensor& index, bool include_self) {
  return include_self ? g : g.scatter(dim, index, 0);
}
Tensor mean_counts(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool include_self,
                   ScalarType dtype) {
  Tensor n = full(self.sizes(), include_self ? 1.0 : 0.0, dtype, self.device());
  n = n.scatter_add(dim, index, ones(src.sizes(), dtype, src.device()));
  return n.masked_fill(eq(n, 0), 1);
}
}  // namespace

Tensor scatter_reduce_self_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                    const Tensor& src, const std::string& reduce, bool include_self,
                                    const Tensor& result) {
  Tensor g;
  if (reduce == "sum") {
    g = grad;
  } else if (reduce == "mean") {
    g = div(grad, mean_counts(self, dim, index, src, include_self, grad.dtype()));
  } else if (reduce == "prod") {
    g = div(grad * result, self);
  } else {
    Tensor value = result.gather(dim, index);
    Tensor self_is = eq(self, result).to(grad.dtype());
    Tensor n = self_is.scatter_add(dim, index, eq(src, value).to(grad.dtype()));
    g = self_is * div(grad, n);
  }
  return forget_self(g, dim, index, include_self);
}

Tensor scatter_reduce_src_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                   const Tensor& src, const std::string& reduce, bool include_self,
                                   const Tensor& result) {
  if (reduce == "sum") return grad.gather(dim, index);
  if (reduce == "mean") {
    return div(grad.gather(dim, index),
               mean_counts(self, dim, index, src, include_self, grad.dtype()).gather(dim, index));
  }
  if (reduce == "prod") return div((grad * result).gather(dim, index), src);
  Tensor value = result.gather(dim, index);
  Tensor self_is = eq(self, result).to(grad.dtype());
  Tensor src_is = eq(src, value).to(grad.dtype());
  Tensor n = self_is.scatter_add(dim, index, src_is);
  return src_is * div(grad, n).gather(dim, index);
}

Tensor masked_select_backward(const Tensor& grad, const Tensor& self, const Tensor& mask) {
  DimVector shape = infer_broadcast_size(self.sizes(), mask.sizes());
  return zeros(shape, grad.dtype(), grad.device()).masked_scatter(mask, grad);
}

Tensor masked_scatter_source_backward(const Tensor& grad, const Tensor& mask, IntArrayRef source_sizes) {
  int64_t n = 1;
  for (int64_t s : source_sizes) n *= s;
  Tensor picked = grad.masked_select(mask);
  const int64_t k = picked.numel();
  if (k < n) picked = cat({picked, zeros({n - k}, grad.dtype(), grad.device())}, 0);
  return picked.reshape(source_sizes);
}

Tensor repeat_backward(const Tensor& grad, IntArrayRef repeats, IntArrayRef sizes) {
  const int64_t extra = static_cast<int64_t>(repeats.size() - sizes.size());
  // grad viewed as (r0, s0, r1, s1, ...) summed over the r dims.
  DimVector split;
  std::vector<int64_t> sum_dims;
  for (size_t i = 0; i < repeats.size(); ++i) {
    const int64_t s = static_cast<int64_t>(i) < extra ? 1 : sizes[i - extra];
    sum_dims.push_back(static_cast<int64_t>(split.size()));
    split.push_back(repeats[i]);
    split.push_back(s);
  }
  Tensor g = grad.reshape(split).sum(sum_dims, false, std::nullopt);
  return g.reshape(sizes);
}

Tensor roll_backward(const Tensor& grad, IntArrayRef shifts, IntArrayRef dims) {
  std::vector<int64_t> neg;
  for (int64_t s : shifts) neg.push_back(-s);
  return grad.roll(neg, dims);
}

Tensor trace_backward(const Tensor& grad, IntArrayRef sizes) {
  Tensor g = zeros(sizes, grad.dtype(), grad.device());
  g.diagonal(0, 0, 1).fill_(grad);
  return g;
}

// The products conjugated for complex tensors, as PyTorch's formulas.
Tensor addcmul_tensor_backward(const Tensor& grad, const Tensor& other, const Scalar& value) {
  return grad * (other * value).conj();
}

Tensor addcdiv_tensor1_backward(const Tensor& grad, const Tensor& tensor2, const Scalar& value) {
  return grad * div(full_like(tensor2, value), tensor2).conj();
}

Tensor addcdiv_tensor2_backward(const Tensor& grad, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return -grad * div(tensor1 * value, tensor2 * tensor2).conj();
}
}  // namespace ember::autograd::generated
