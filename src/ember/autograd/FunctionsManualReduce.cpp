// Derivative helpers of the reductions, softmax and matrix products.
//
// Note [Fused backward loops]
// Most formulas are PyTorch's, written with differentiable ops in the input's
// dtype: the same roundings as PyTorch's, parallel vector kernels, and a
// graph for higher-order gradients (max/min ties, norms, std, logsumexp).
// A few (scans, log_softmax's second derivatives) run a
// fused loop here instead: inputs are broadcast to the input shape, computed
// in double and cast back. Their results carry no graph of their own.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/autograd/FunctionsManual.h"
#include "ember/autograd/GradMode.h"
#include "ember/ops/Ops.h"

namespace ember::autograd::generated {

namespace {

// A 0-dim bool read on the host (copied there from another device).
bool host_flag(const Tensor& t) { return t.to(Device(DeviceType::CPU)).item<bool>(); }

std::vector<bool> reduced_mask(IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dims) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  std::vector<bool> mask(static_cast<size_t>(std::max<int64_t>(nd, 1)), !dims || dims->empty());
  if (dims) {
    for (int64_t d : *dims) mask[maybe_wrap_dim(d, nd)] = true;
  }
  return mask;
}

int64_t reduced_count(IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dims) {
  std::vector<bool> mask = reduced_mask(sizes, dims);
  int64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (mask[d]) n *= sizes[d];
  }
  return n;
}

std::optional<std::vector<int64_t>> as_dims(IntArrayRef dims) { return dims.vec(); }

// t broadcast to sizes as a contiguous double tensor.
Tensor dense(const Tensor& t, IntArrayRef sizes) { return t.expand(sizes).to(ScalarType::Double).contiguous(); }

// out[i] = f(a[i], b[i], c[i]) over double copies, cast to dtype (a host
// loop: CPU tensors only; callers compose operators for other devices).
template <typename F>
Tensor map3(IntArrayRef sizes, ScalarType dtype, const Tensor& a, const Tensor& b, const Tensor& c, const F& f) {
  Tensor da = dense(a, sizes), db = dense(b, sizes), dc = dense(c, sizes);
  Tensor out = empty(sizes, ScalarType::Double, a.device());
  const double* pa = da.data_ptr<double>();
  const double* pb = db.data_ptr<double>();
  const double* pc = dc.data_ptr<double>();
  double* po = out.data_ptr<double>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i], pc[i]);
  return out.to(dtype);
}

// Views of a contiguous tensor of `sizes` as [outer, n, inner] around dim.
void split_at(IntArrayRef sizes, int64_t dim, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1;
  inner = 1;
  n = sizes.empty() ? 1 : sizes[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= sizes[d];
  for (size_t d = dim + 1; d < sizes.size(); ++d) inner *= sizes[d];
}

}  // namespace

Tensor restore_reduced_dims(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dims,
                            bool keepdim) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (keepdim || nd == 0) return grad;
  if (!dims || dims->empty()) return grad.reshape(DimVector(nd, 1));
  std::vector<int64_t> wrapped;
  for (int64_t d : *dims) wrapped.push_back(maybe_wrap_dim(d, nd));
  std::sort(wrapped.begin(), wrapped.end());
  Tensor g = grad;
  for (int64_t d : wrapped) g = g.unsqueeze(d);
  return g;
}

Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, const std::optional<std::vector<int64_t>>& dims,
                     bool keepdim) {
  const int64_t n = reduced_count(sizes, dims);
  Tensor g = restore_reduced_dims(grad, sizes, dims, keepdim).expand(sizes);
  return maybe_multiply(g, Scalar(1.0 / static_cast<double>(n)));
}

Tensor nansum_backward(const Tensor& grad, const Tensor& self, const std::optional<std::vector<int64_t>>& dims,
                       bool keepdim) {
  Tensor g = restore_reduced_dims(grad, self.sizes(), dims, keepdim);
  return g.expand(self.sizes()) * self.isnan().logical_not();
}

namespace {
// Gradient of a product along d where inputs may be zero: the product of
// everything before (exclusive cumprod) times everything after, both
// differentiable (PyTorch's prod_safe_zeros_backward).
Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& input, int64_t d) {
  if (input.numel() == 0) return grad.expand_as(input);
  DimVector ones_size(input.sizes());
  ones_size[d] = 1;
  Tensor ones = ember::ones(ones_size, grad.dtype(), grad.device());
  const int64_t n = input.size(d);
  Tensor before = ember::cat({ones, input.narrow(d, 0, n - 1)}, d).cumprod(d);
  Tensor after = ember::cat({ones, input.narrow(d, 1, n - 1).flip({d})}, d).cumprod(d).flip({d});
  Tensor others = before * after;
  return grad * (is_complex_type(others.dtype()) ? others.conj() : others);
}
}  // namespace

// PyTorch's formulas: grad * result / input without zeros, else the
// zero-safe products above; both differentiable, in the input's dtype
// (conjugated for complex inputs: the conjugate Wirtinger derivative).
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<int64_t> dim,
                     bool keepdim) {
  if (self.dim() == 0) return grad;
  const Tensor x = self.to(grad.dtype());  // prod(int_tensor, dtype=float) differentiates in float
  const Tensor zero = x.eq(0);
  auto conj_if_complex = [](const Tensor& t) { return is_complex_type(t.dtype()) ? t.conj() : t; };
  if (!dim) {
    if (!host_flag(zero.any())) return grad * conj_if_complex(result.div(x));
    if (!GradMode::is_enabled() && zero.sum().to(Device(DeviceType::CPU)).item<int64_t>() > 1) return zeros_like(x);
    return prod_safe_zeros_backward(grad, x.contiguous().view({-1}), 0).view_as(x);
  }
  const int64_t d = maybe_wrap_dim(*dim, x.dim());
  Tensor g = keepdim ? grad : grad.unsqueeze(d);
  Tensor r = keepdim ? result : result.unsqueeze(d);
  if (!host_flag(zero.any())) return g * conj_if_complex(r.div(x));
  return prod_safe_zeros_backward(g, x, d);
}

// The gradient scattered to the selected positions: a scatter of grad into
// zeros, so it is differentiable in grad and runs on any device.
Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                          bool keepdim) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd == 0) return grad.reshape(sizes);
  const int64_t d = maybe_wrap_dim(dim, nd);
  Tensor g = keepdim ? grad : grad.unsqueeze(d);
  Tensor idx = keepdim ? indices : indices.unsqueeze(d);
  return ember::zeros(sizes, grad.dtype(), grad.device()).scatter(d, idx, g);
}

Tensor amax_amin_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims,
                          bool keepdim) {
  std::optional<std::vector<int64_t>> d = as_dims(dims);
  Tensor g = restore_reduced_dims(grad, self.sizes(), d, keepdim);
  Tensor r = restore_reduced_dims(result, self.sizes(), d, keepdim);
  Tensor mask = r.eq(self);
  return div(g, mask.sum(d, /*keepdim=*/true)) * mask;
}

Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  const bool nan = std::isnan(result.to(Device(DeviceType::CPU)).item<double>());
  Tensor mask = nan ? self.isnan() : self.eq(result);
  Tensor out = zeros(self.sizes(), grad.dtype(), grad.device());
  out.masked_fill_(mask, div(grad, mask.sum()));
  return out;
}

Tensor var_backward(const Tensor& grad, const Tensor& self, const std::optional<std::vector<int64_t>>& dims,
                    const std::optional<Scalar>& correction, bool keepdim) {
  const double c = correction ? correction->to_double() : 1.0;
  const double dof = static_cast<double>(reduced_count(self.sizes(), dims)) - c;
  Tensor g = restore_reduced_dims(grad, self.sizes(), dims, keepdim);
  Tensor mean = ember::mean(self, dims, /*keepdim=*/true, std::nullopt);
  if ((!dims || self.dim() == 0) && dof <= 0) {
    // PyTorch's rule for a variance over everything with no degrees of freedom left: an
    // infinite slope, NaN where an element equals the mean (inf * 0). Over given dims the
    // factor 2 / dof is used as it is (negative, or infinite at zero).
    Tensor slope = ember::full_like(self, std::numeric_limits<double>::infinity());
    slope.masked_fill_(self.eq(mean), std::numeric_limits<double>::quiet_NaN());
    return g * slope;
  }
  return maybe_multiply(g, Scalar(2.0 / dof)) * (self - mean);
}

Tensor std_backward(const Tensor& result, const Tensor& grad, const Tensor& self,
                    const std::optional<std::vector<int64_t>>& dims, const std::optional<Scalar>& correction,
                    bool keepdim) {
  Tensor gvar = div(grad, result * 2);
  gvar.masked_fill_(result.eq(0), 0);
  return var_backward(gvar, self, dims, correction, keepdim);
}

Tensor var_mean_backward(const Tensor& gvar, const Tensor& gmean, const Tensor& self,
                         const std::optional<std::vector<int64_t>>& dims, const std::optional<Scalar>& correction,
                         bool keepdim) {
  Tensor r;
  if (gvar.defined()) r = var_backward(gvar, self, dims, correction, keepdim);
  if (gmean.defined()) {
    Tensor m = mean_backward(gmean, self.sizes(), dims, keepdim);
    r = r.defined() ? r + m : m;
  }
  return r;
}

Tensor std_mean_backward(const Tensor& gstd, const Tensor& gmean, const Tensor& self, const Tensor& std,
                         const std::optional<std::vector<int64_t>>& dims, const std::optional<Scalar>& correction,
                         bool keepdim) {
  Tensor r;
  if (gstd.defined()) r = std_backward(std, gstd, self, dims, correction, keepdim);
  if (gmean.defined()) {
    Tensor m = mean_backward(gmean, self.sizes(), dims, keepdim);
    r = r.defined() ? r + m : m;
  }
  return r;
}

Tensor linalg_vector_norm_backward(const Tensor& grad, const Tensor& self, const Scalar& ord, const Tensor& result,
                                   const std::optional<std::vector<int64_t>>& dims, bool keepdim) {
  const double p = ord.to_double();
  IntArrayRef sizes = self.sizes();
  const ScalarType dtype = self.dtype();
  Tensor g = restore_reduced_dims(grad, sizes, dims, keepdim);
  Tensor nrm = restore_reduced_dims(result, sizes, dims, keepdim);
  if (p == 0) return Tensor();  // no gradient flows, as in PyTorch
  // With a dtype argument the norm (and its grad) may be wider than self.
  auto in_dtype = [dtype](const Tensor& t) { return t.dtype() == dtype ? t : t.to(dtype); };
  // the sign of a complex element is its unit phase (PyTorch's sgn)
  const bool complex = is_complex_type(dtype);
  auto sign_of = [complex](const Tensor& t) { return complex ? t.sgn() : t.sign(); };
  if (p == 1) return in_dtype(sign_of(self) * g);
  if (p == 2) {
    Tensor q = div(self, nrm);
    q.masked_fill_(nrm.eq(0), 0);
    return in_dtype(g * q);
  }
  Tensor self_scaled, scale;
  if (std::isinf(p)) {
    Tensor mask = self.abs().eq(nrm).logical_or(self.isnan().logical_and(nrm.isnan()));
    self_scaled = sign_of(self) * mask.to(nrm.dtype());
    scale = div(g, mask.sum(dims, /*keepdim=*/true));
  } else if (p < 1.0) {
    Tensor a = self.abs().pow(Scalar(p - 1));
    a.masked_fill_(self.eq(0), 0);
    self_scaled = sign_of(self) * a;
    scale = g * nrm.pow(Scalar(1 - p));
  } else {
    self_scaled = p < 2.0 ? sign_of(self) * self.abs().pow(Scalar(p - 1)) : self * self.abs().pow(Scalar(p - 2));
    scale = div(g, nrm.pow(Scalar(p - 1)));
    scale.masked_fill_(nrm.eq(0), 0);
  }
  return in_dtype(self_scaled * scale);
}

Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims,
                          bool keepdim) {
  std::optional<std::vector<int64_t>> d = as_dims(dims);
  Tensor g = restore_reduced_dims(grad, self.sizes(), d, keepdim);
  Tensor r = restore_reduced_dims(result, self.sizes(), d, keepdim);
  return self.is_complex() ? g * (self - r).exp().conj() : g * (self - r).exp();
}

Tensor cumsum_backward(const Tensor& grad, int64_t dim, ScalarType dtype) {
  Tensor g = grad.to(dtype);
  if (g.dim() == 0 || g.numel() == 0) return g;
  const int64_t d = maybe_wrap_dim(dim, g.dim());
  // A reversed cumulative sum; through operators when it must be
  // differentiable (create_graph) or complex, else summed in double below.
  // The loop below runs on the host: other devices take the operators too.
  if (GradMode::is_enabled() || g.is_complex() || !g.is_cpu()) return g.flip({d}).cumsum(d).flip({d});
  int64_t outer, n, inner;
  split_at(g.sizes(), d, outer, n, inner);
  Tensor gd = g.to(ScalarType::Double).contiguous();
  Tensor out = empty(g.sizes(), ScalarType::Double, g.device());
  const double* pg = gd.data_ptr<double>();
  double* po = out.data_ptr<double>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < inner; ++c) {
      double acc = 0;
      for (int64_t i = n - 1; i >= 0; --i) {
        const int64_t k = (o * n + i) * inner + c;
        acc += pg[k];
        po[k] = acc;
      }
    }
  }
  return out.to(dtype);
}

// Note [cumprod gradient]
// PyTorch's formula, step by step (its bits): with w = conj(y) * g, a slice
// without zeros takes reversed_cumsum(w) / conj(x). With zeros: elements
// before the first zero the same over w masked to them, the first zero the
// products that skip it (the cumulative product between the first and second
// zero times y before it), later elements 0. A gradient to be differentiated
// again (create_graph) and holding zeros takes the O(n^2) products of the
// inputs around each k, whose own derivative is cumprod's second derivative.
Tensor cumprod_backward(const Tensor& grad_in, const Tensor& self, int64_t dim, const Tensor& result) {
  const Tensor grad = grad_in.to(self.dtype());
  if (self.numel() <= 1) return grad;
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(d);
  if (n == 1) return grad;
  const auto reversed_cumsum = [d](const Tensor& t) { return t.flip({d}).cumsum(d).flip({d}); };
  const Tensor input_conj = self.conj(), output_conj = result.conj();
  const Tensor w = output_conj * grad;
  const Tensor is_zero = self.eq(Scalar(int64_t(0)));
  if (!is_zero.any().item<bool>()) return reversed_cumsum(w).div(input_conj);
  if (!GradMode::is_enabled()) {
    Tensor grad_input = zeros(self.sizes(), grad.dtype(), grad.device());
    const Tensor zeros_so_far = is_zero.cumsum(d);
    Tensor mask = zeros_so_far.eq(Scalar(int64_t(0)));  // before the first zero
    grad_input.masked_scatter_(
        mask, reversed_cumsum(w.masked_fill(mask.logical_not(), Scalar(0.0))).div_(input_conj).masked_select(mask));
    mask = zeros_so_far.eq(Scalar(int64_t(1)));  // from the first zero to the second
    const Tensor first_zero = std::get<1>(mask.max(d, /*keepdim=*/true));
    const Tensor first_zero_mask = zeros_like(mask).scatter_(d, first_zero, Scalar(int64_t(1))).logical_and_(mask);
    mask.logical_and_(first_zero_mask.logical_not());  // strictly between them
    const Tensor before = output_conj.gather(d, (first_zero - Scalar(int64_t(1))).relu_())
                              .masked_fill_(first_zero.eq(Scalar(int64_t(0))), Scalar(1.0));
    const Tensor at_zero = input_conj.masked_fill(mask.logical_not(), Scalar(1.0))
                               .cumprod(d)
                               .mul_(grad.masked_fill(zeros_so_far.ne(Scalar(int64_t(1))), Scalar(0.0)))
                               .sum(std::vector<int64_t>{d}, /*keepdim=*/true)
                               .mul_(before);
    grad_input.masked_scatter_(first_zero_mask, at_zero.masked_select(first_zero_mask));
    return grad_input;
  }
  // Differentiable: for each k, the products of x_i over i <= j, i != k.
  Tensor grad_input = zeros(self.sizes(), grad.dtype(), grad.device());
  std::vector<int64_t> ones_size(self.sizes().begin(), self.sizes().end());
  ones_size[static_cast<size_t>(d)] = 1;
  const Tensor ones = ember::ones({1}, grad.dtype(), grad.device()).expand(ones_size);
  for (int64_t k = 0; k < n; ++k) {
    Tensor omitted;
    if (k == 0) {
      omitted = cat({ones, ember::slice(input_conj, d, 1).cumprod(d)}, d);
    } else if (k == n - 1) {
      omitted = ember::slice(input_conj, d, 0, k).prod(d, true);
    } else {
      const Tensor until_k = ember::slice(input_conj, d, 0, k).prod(d, true);
      const Tensor from_k_plus_1 = ember::slice(input_conj, d, k + 1).cumprod(d);
      omitted = cat({until_k, until_k.expand(from_k_plus_1.sizes()) * from_k_plus_1}, d);
    }
    grad_input.select(d, k).copy_((ember::slice(grad, d, k) * omitted).sum(std::vector<int64_t>{d}, false));
  }
  return grad_input;
}

// Complex matrices: the gradient goes through the conjugate transpose (Note [Complex gradients]).
Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2) { return grad.mm(mat2.permute({1, 0}).conj()); }

Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, IntArrayRef mat2_sizes, IntArrayRef mat2_strides) {
  if (mat2_sizes.size() == 2 && mat2_sizes[0] > 1 && mat2_sizes[1] > 1 && mat2_strides[0] == 1 &&
      mat2_strides[1] == mat2_sizes[0]) {
    return grad.permute({1, 0}).mm(mat1.conj()).permute({1, 0});
  }
  return mat1.permute({1, 0}).conj().mm(grad);
}

Tensor bmm_backward_self(const Tensor& grad, const Tensor& mat2) { return grad.bmm(mat2.permute({0, 2, 1}).conj()); }

Tensor bmm_backward_mat2(const Tensor& grad, const Tensor& self) { return self.permute({0, 2, 1}).conj().bmm(grad); }

Tensor addbmm_backward_batch1(const Tensor& grad, const Tensor& batch2, int64_t batch) {
  return grad.unsqueeze(0).expand({batch, grad.size(0), grad.size(1)}).bmm(batch2.permute({0, 2, 1}).conj());
}

Tensor addbmm_backward_batch2(const Tensor& grad, const Tensor& batch1, int64_t batch) {
  return batch1.permute({0, 2, 1}).conj().bmm(grad.unsqueeze(0).expand({batch, grad.size(0), grad.size(1)}));
}

Tensor mv_mat_backward(const Tensor& grad, const Tensor& vec) { return grad.reshape({-1, 1}) * vec.conj(); }

Tensor mv_vec_backward(const Tensor& grad, const Tensor& mat) { return mat.permute({1, 0}).conj().mv(grad); }

Tensor softmax_double_backward(const Tensor& gg, const Tensor& grad_output, const Tensor& output, int64_t dim) {
  Tensor g = grad_output.to(output.dtype());
  Tensor gy = (g * output).sum(std::vector<int64_t>{dim}, true);
  Tensor ggy = (gg * output).sum(std::vector<int64_t>{dim}, true);
  return gg * (g - gy) - g * ggy;
}

Tensor log_softmax_double_backward(const Tensor& gg, const Tensor& grad_output, const Tensor& output, int64_t dim) {
  Tensor gsum = grad_output.to(output.dtype()).sum(std::vector<int64_t>{dim}, true);
  if (!output.is_cpu()) {
    const IntArrayRef sizes = output.sizes();
    return (-dense(gsum, sizes) * dense(output, sizes).exp() * dense(gg, sizes)).to(output.dtype());
  }
  return map3(output.sizes(), output.dtype(), gg, output, gsum,
              [](double ggv, double y, double s) { return -s * std::exp(y) * ggv; });
}

Tensor log_softmax_backward_data_grad(const Tensor& gg, const Tensor& output, int64_t dim) {
  if (!output.is_cpu()) {
    const IntArrayRef sizes = output.sizes();
    Tensor e = (dense(gg, sizes) * dense(output, sizes).exp()).to(output.dtype());
    return gg.to(output.dtype()) - e.sum(std::vector<int64_t>{dim}, true);
  }
  Tensor e = map3(output.sizes(), output.dtype(), gg, output, output,
                  [](double ggv, double y, double) { return ggv * std::exp(y); });
  return gg.to(output.dtype()) - e.sum(std::vector<int64_t>{dim}, true);
}

}  // namespace ember::autograd::generated
