#include "ember/autograd/FunctionsManual.h"

#include <algorithm>
#include <complex>

#include "ember/ops/Ops.h"

namespace ember::autograd::generated {

Tensor maybe_multiply(const Tensor& grad, const Scalar& s) {
  if (s.equal(1.0) && !s.is_bool()) return grad;
  Tensor wrapped = full({}, s, grad.dtype(), grad.device());
  wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
  return grad * wrapped;
}

Tensor not_implemented(const char* name) {
  throw NotImplementedError(str_cat("the derivative for '", name, "' is not implemented."));
}

Tensor maybe_multiply_conj(const Tensor& grad, const Scalar& s) {
  return maybe_multiply(grad, s.is_complex() ? Scalar(std::conj(s.to_complex())) : s);
}

Tensor sum_to(const Tensor& grad, IntArrayRef shape) {
  if (grad.sizes().equals(shape)) return grad;
  int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1 && grad.sizes()[lead + i] != 1) dims.push_back(lead + static_cast<int64_t>(i));
  }
  Tensor r = dims.empty() ? grad : grad.sum(dims, /*keepdim=*/true);
  if (lead > 0 || !r.sizes().equals(shape)) r = r.reshape(shape);
  return r;
}

Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dims,
                    bool keepdim) {
  int64_t nd = static_cast<int64_t>(sizes.size());
  if (!keepdim && nd > 0 && dims && !dims->empty()) {
    std::vector<int64_t> wrapped;
    for (int64_t d : *dims) wrapped.push_back(maybe_wrap_dim(d, nd));
    std::sort(wrapped.begin(), wrapped.end());
    Tensor g = grad;
    for (int64_t d : wrapped) g = g.unsqueeze(d);
    return g.expand(sizes);
  }
  if (!keepdim && nd > 0) return grad.reshape(DimVector(nd, 1)).expand(sizes);
  return grad.expand(sizes);
}

Tensor permute_backwards(const Tensor& grad, IntArrayRef dims) {
  int64_t nd = static_cast<int64_t>(dims.size());
  std::vector<int64_t> inverse(nd);
  for (int64_t i = 0; i < nd; ++i) inverse[maybe_wrap_dim(dims[i], nd)] = i;
  return grad.permute(inverse);
}

Tensor slice_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step) {
  Tensor g = zeros(sizes, grad.dtype(), grad.device());
  ember::slice(g, dim, start, end, step).copy_(grad);
  return g;
}

Tensor unbind_backward(const std::vector<Tensor>& grads, int64_t dim, IntArrayRef sizes, ScalarType dtype) {
  int64_t d = maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  DimVector piece(sizes);
  piece.erase(d);
  std::vector<Tensor> parts;
  for (const Tensor& g : grads) parts.push_back(g.defined() ? g : zeros(piece, dtype));
  return stack(parts, d);
}

std::vector<Tensor> cat_tensors_backward(const Tensor& grad, const std::vector<Tensor>& tensors, int64_t dim) {
  std::vector<Tensor> out;
  int64_t d = -1;
  for (const Tensor& t : tensors) {
    if (!(t.dim() == 1 && t.numel() == 0)) {
      d = maybe_wrap_dim(dim, t.dim());
      break;
    }
  }
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (d < 0 || (t.dim() == 1 && t.numel() == 0)) {
      out.push_back(zeros(t.sizes(), grad.dtype(), grad.device()));
      continue;
    }
    int64_t len = t.sizes()[d];
    out.push_back(grad.narrow(d, offset, len));
    offset += len;
  }
  return out;
}

Tensor mse_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction) {
  double norm = reduction == 1 ? 2.0 / static_cast<double>(self.numel()) : 2.0;
  return (self - target) * Scalar(norm) * grad;
}

std::vector<Tensor> stack_tensors_backward(const Tensor& grad, int64_t dim, size_t n) {
  int64_t d = maybe_wrap_dim(dim, grad.dim());
  std::vector<Tensor> out = grad.unbind(d);
  out.resize(n);
  return out;
}

}  // namespace ember::autograd::generated
