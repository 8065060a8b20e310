// Forward-mode formulas too long for one line of ops.yaml.
#include "ember/autograd/ForwardFormulasManual.h"

#include "ember/autograd/ForwardAD.h"
#include "ember/ops/Ops.h"

namespace ember::autograd::forward_ad {

namespace {
std::vector<int64_t> all_dims(const Tensor& t) {
  std::vector<int64_t> dims(static_cast<size_t>(t.dim()));
  for (int64_t i = 0; i < t.dim(); ++i) dims[static_cast<size_t>(i)] = i;
  return dims;
}

// Shape that broadcasts a per-channel vector against an (N, C, ...) tensor.
std::vector<int64_t> channel_shape(const Tensor& like) {
  std::vector<int64_t> shape(static_cast<size_t>(like.dim()), 1);
  if (like.dim() > 1) shape[1] = like.size(1);
  return shape;
}

// Normalizes x over `dims`, returning (x - mean) * rstd and rstd.
std::pair<Tensor, Tensor> normalized(const Tensor& x, const std::vector<int64_t>& dims, double eps) {
  Tensor mean = ember::mean(x, dims, true);
  Tensor centered = x - mean;
  Tensor rstd = ember::rsqrt(ember::mean(centered * centered, dims, true) + eps);
  return {centered * rstd, rstd};
}

// Tangent of (x - mean) * rstd over `dims`, for x's tangent x_t.
Tensor normalized_jvp(const Tensor& xhat, const Tensor& rstd, const Tensor& x_t, const std::vector<int64_t>& dims) {
  Tensor centered_t = x_t - ember::mean(x_t, dims, true);
  return rstd * (centered_t - xhat * ember::mean(xhat * centered_t, dims, true));
}

Tensor product(Product kind, const Tensor& a, const Tensor& b) {
  switch (kind) {
    case Product::MM: return a.mm(b);
    case Product::BMM: return a.bmm(b);
    case Product::MV: return a.mv(b);
    case Product::DOT: return a.dot(b);
    case Product::VDOT: return a.vdot(b);
    case Product::OUTER: return ember::outer(a, b);
  }
  return Tensor();
}
}  // namespace

Tensor sum_over(const Tensor& t, const std::optional<std::vector<int64_t>>& dim, bool keepdim) {
  if (!dim || dim->empty()) return ember::sum(t, all_dims(t), keepdim);
  return ember::sum(t, *dim, keepdim);
}

Tensor sum_over(const Tensor& t, IntArrayRef dim, bool keepdim) {
  return sum_over(t, std::optional<std::vector<int64_t>>(dim.vec()), keepdim);
}

Tensor sum_over(const Tensor& t, int64_t dim, bool keepdim) {
  return ember::sum(t, std::vector<int64_t>{dim}, keepdim);
}

Tensor weighted(const Tensor& t, const std::optional<Tensor>& weight) {
  return weight && weight->defined() ? t * *weight : t;
}

Tensor apply_loss_reduction(const Tensor& t, int64_t reduction) {
  if (reduction == 1) return ember::mean(t);
  if (reduction == 2) return ember::sum(t);
  return t;
}

Tensor gather_values(const Tensor& self_t, int64_t dim, const Tensor& indices, bool keepdim) {
  if (self_t.dim() == 0) return self_t.clone();
  if (keepdim) return self_t.gather(dim, indices);
  return self_t.gather(dim, indices.unsqueeze(dim)).squeeze(dim);
}

Tensor pool_values(const Tensor& self_t, const Tensor& indices) {
  Tensor flat = self_t.flatten(-2);
  return flat.gather(-1, indices.flatten(-2)).view(indices.sizes());
}

namespace {
Tensor product_terms(Product kind, const Tensor& a, const Tensor& a_t, const Tensor& b, const Tensor& b_t) {
  Tensor out;
  if (a_t.defined()) out = product(kind, a_t, b);
  if (b_t.defined()) out = accumulate(out, product(kind, a, b_t));
  return out;
}
}  // namespace

// The product rule a_t b + a b_t (and for the add-products beta self_t +
// alpha (...)) ends in an add, whichever tangents exist (Note [Zero tangents]).
Tensor product_jvp(Product kind, const Tensor& a, const Tensor& a_t, const Tensor& b, const Tensor& b_t) {
  return as_sum(product_terms(kind, a, a_t, b, b_t));
}

Tensor add_product_jvp(Product kind, const Tensor& self_t, const Tensor& a, const Tensor& a_t, const Tensor& b,
                       const Tensor& b_t, const Scalar& beta, const Scalar& alpha, bool sum_batch) {
  Tensor out = product_terms(kind, a, a_t, b, b_t);
  if (out.defined()) {
    if (sum_batch) out = out.sum(std::vector<int64_t>{0});
    if (!alpha.equal(1.0)) out = out * alpha;
  }
  if (self_t.defined()) out = accumulate(out, beta.equal(1.0) ? self_t : self_t * beta);
  return as_sum(out);
}

Tensor convolution_jvp(const Tensor& input, const Tensor& input_t, const Tensor& weight, const Tensor& weight_t,
                       const Tensor& bias_t, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                       bool transposed, IntArrayRef output_padding, int64_t groups) {
  Tensor out;
  if (input_t.defined()) {
    out = ember::convolution(input_t, weight, std::nullopt, stride, padding, dilation, transposed, output_padding,
                             groups);
  }
  if (weight_t.defined()) {
    out = accumulate(out, ember::convolution(input, weight_t, std::nullopt, stride, padding, dilation, transposed,
                                             output_padding, groups));
  }
  if (bias_t.defined()) {
    std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
    shape[1] = bias_t.numel();
    out = accumulate(out, bias_t.reshape(shape));
  }
  return as_sum(out);  // conv(input_t, W) + conv(input, W_t, b_t)
}

Tensor layer_norm_jvp(const Tensor& input, const Tensor& input_t, IntArrayRef normalized_shape,
                      const std::optional<Tensor>& weight, const Tensor& weight_t, const Tensor& bias_t, double eps) {
  std::vector<int64_t> dims;
  for (int64_t i = input.dim() - static_cast<int64_t>(normalized_shape.size()); i < input.dim(); ++i) {
    dims.push_back(i);
  }
  auto [xhat, rstd] = normalized(input, dims, eps);
  Tensor out = input_t.defined() ? normalized_jvp(xhat, rstd, input_t, dims) : ember::zeros_like(xhat);
  if (weight && weight->defined()) out = out * *weight;
  if (weight_t.defined()) out = out + xhat * weight_t;
  if (bias_t.defined()) out = out + bias_t;
  return as_sum(out);  // PyTorch's formula ends in an add
}

Tensor batch_norm_jvp(const Tensor& input, const Tensor& input_t, const std::optional<Tensor>& weight,
                      const Tensor& weight_t, const Tensor& bias_t, const std::optional<Tensor>& running_mean,
                      const std::optional<Tensor>& running_var, bool training, double eps) {
  const std::vector<int64_t> shape = channel_shape(input);
  Tensor xhat, out;
  if (training || !running_mean || !running_mean->defined()) {
    std::vector<int64_t> dims = all_dims(input);
    dims.erase(dims.begin() + (input.dim() > 1 ? 1 : 0));
    auto [normed, rstd] = normalized(input, dims, eps);
    xhat = normed;
    out = input_t.defined() ? normalized_jvp(xhat, rstd, input_t, dims) : ember::zeros_like(xhat);
  } else {
    Tensor rstd = ember::rsqrt(running_var->reshape(shape) + eps);
    xhat = (input - running_mean->reshape(shape)) * rstd;
    out = input_t.defined() ? input_t * rstd : ember::zeros_like(xhat);
  }
  if (weight && weight->defined()) out = out * weight->reshape(shape);
  if (weight_t.defined()) out = out + xhat * weight_t.reshape(shape);
  if (bias_t.defined()) out = out + bias_t.reshape(shape);
  return as_sum(out);  // PyTorch's formula ends in an add
}

Tensor group_norm_jvp(const Tensor& input, const Tensor& input_t, const std::optional<Tensor>& weight,
                      const Tensor& weight_t, const Tensor& bias_t, int64_t group, double eps) {
  const int64_t n = input.size(0);
  Tensor grouped = input.reshape({n, group, -1});
  auto [xhat_g, rstd] = normalized(grouped, {2}, eps);
  Tensor xhat = xhat_g.reshape(input.sizes());
  Tensor out = input_t.defined()
                   ? normalized_jvp(xhat_g, rstd, input_t.reshape({n, group, -1}), {2}).reshape(input.sizes())
                   : ember::zeros_like(xhat);
  const std::vector<int64_t> shape = channel_shape(input);
  if (weight && weight->defined()) out = out * weight->reshape(shape);
  if (weight_t.defined()) out = out + xhat * weight_t.reshape(shape);
  if (bias_t.defined()) out = out + bias_t.reshape(shape);
  return as_sum(out);  // PyTorch's formula ends in an add
}

Tensor norm_stat_jvp(const Tensor& input, const Tensor& input_t, const Tensor& stat, bool is_rstd, const Tensor& rstd) {
  if (!input_t.defined()) return ember::zeros_like(stat);
  const int64_t rows = stat.numel();
  Tensor x_t = input_t.reshape({rows, -1});
  if (!is_rstd) return ember::mean(x_t, std::vector<int64_t>{1}).view(stat.sizes());
  Tensor x = input.reshape({rows, -1});
  Tensor centered = x - ember::mean(x, std::vector<int64_t>{1}, true);
  Tensor r = rstd.reshape({rows});
  return (-(r * r * r) * ember::mean(centered * x_t, std::vector<int64_t>{1})).view(stat.sizes());
}

Tensor cumprod_jvp(const Tensor& self, const Tensor& self_t, int64_t dim, const Tensor& result) {
  if (self.numel() == 0) return ember::zeros_like(result);
  if (self.dim() == 0) return self_t.clone();
  if (!ember::eq(self, 0).any().to(Device(DeviceType::CPU)).item<bool>())
    return result * ember::cumsum(self_t.div(self), dim);
  // With zeros: output i is the sum over k <= i of t_k times the product of
  // the other x_j (j <= i), that is cumprod of x with x_k replaced by t_k.
  const int64_t n = self.size(dim);
  Tensor out = ember::zeros_like(result);
  for (int64_t k = 0; k < n; ++k) {
    Tensor replaced = self.clone();
    replaced.narrow(dim, k, 1).copy_(self_t.narrow(dim, k, 1));
    Tensor term = ember::cumprod(replaced, dim);
    if (k > 0) term.narrow(dim, 0, k).zero_();
    out = out + term;
  }
  return out;
}

Tensor glu_jvp(const Tensor& self, const Tensor& self_t, int64_t dim) {
  const int64_t half = self.size(dim) / 2;
  Tensor a = self.narrow(dim, 0, half), b = self.narrow(dim, half, half);
  Tensor a_t = self_t.narrow(dim, 0, half), b_t = self_t.narrow(dim, half, half);
  Tensor sb = b.sigmoid();
  return a_t * sb + a * sb * (-sb + 1) * b_t;
}

Tensor scatter_reduce_jvp(const Tensor& self, const Tensor& self_t, int64_t dim, const Tensor& index, const Tensor& src,
                          const Tensor& src_t, const std::string& reduce, bool include_self, const Tensor& result) {
  const Tensor st = self_t.defined() ? self_t : zeros_like(self);
  const Tensor rt = src_t.defined() ? src_t : zeros_like(src);
  if (reduce == "sum" || reduce == "mean") return st.scatter_reduce(dim, index, rt, reduce, include_self);
  if (reduce != "amax" && reduce != "amin") return Tensor();
  // The elements that reach the extremum share its tangent equally.
  const Tensor src_hit = src.eq(result.gather(dim, index)).to(self.scalar_type());
  Tensor self_hit = self.eq(result).to(self.scalar_type());
  if (!include_self) {
    // without include_self, self only survives where nothing was scattered
    self_hit = ones_like(self).scatter(dim, index, zeros_like(src));
  }
  const Tensor total = (st * self_hit).scatter_add(dim, index, rt * src_hit);
  const Tensor count = self_hit.scatter_add(dim, index, src_hit);
  return total.div(count);
}

}  // namespace ember::autograd::forward_ad
