#include "ember/autograd/FunctionsDoubleBackward.h"

#include "ember/autograd/GradMode.h"
#include "ember/core/Error.h"
#include "ember/ops/Ops.h"

namespace ember::autograd::generated {

namespace {
Tensor accumulate(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return a + b;
}

std::vector<int64_t> dims_range(int64_t from, int64_t to) {
  std::vector<int64_t> dims;
  for (int64_t d = from; d < to; ++d) dims.push_back(d);
  return dims;
}

// Every dim of an n-dim tensor but the channel dim 1.
std::vector<int64_t> all_but_channels(int64_t ndim) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < ndim; ++d) dims.push_back(d);
  return dims;
}

// A per-channel vector shaped to broadcast against an (N, C, ...) tensor.
Tensor per_channel(const Tensor& v, int64_t ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim), 1);
  shape[1] = v.numel();
  return v.reshape(shape);
}

// The gradient of a normalisation for x_hat = (x - mean) * rstd, the
// statistics taken over dims: rstd * (g - mean(g) - x_hat * mean(g * x_hat)).
Tensor normalized_input_grad(const Tensor& g, const Tensor& x_hat, const Tensor& rstd,
                             const std::vector<int64_t>& dims) {
  Tensor centred = g - g.mean(dims, true);
  return rstd * (centred - x_hat * (g * x_hat).mean(dims, true));
}

bool has(const std::optional<Tensor>& t) { return t.has_value() && t->defined(); }
}  // namespace

std::vector<int64_t> trailing_sizes(IntArrayRef sizes, int64_t n) {
  const int64_t total = static_cast<int64_t>(sizes.size());
  return std::vector<int64_t>(sizes.begin() + (total - n), sizes.end());
}

// <grad_input(gO, W), ggI> + <grad_weight(gO, I), ggW> + <grad_bias(gO), ggb>
// = <gO, conv(ggI, W) + conv(I, ggW) + ggb>: its derivative in gO is that sum,
// in I the input-gradient of conv(I, ggW), in W the weight-gradient of conv(ggI, W).
std::tuple<Tensor, Tensor, Tensor> convolution_double_backward(const Tensor& ggI, const Tensor& ggW, const Tensor& ggb,
                                                               const Tensor& grad_output, const Tensor& input,
                                                               const Tensor& weight, IntArrayRef stride,
                                                               IntArrayRef padding, IntArrayRef dilation,
                                                               bool transposed, IntArrayRef output_padding,
                                                               int64_t groups, std::array<bool, 3> grad_input_mask) {
  Tensor g_grad_output, g_input, g_weight;
  if (grad_input_mask[0]) {
    if (ggI.defined())
      g_grad_output =
          ember::convolution(ggI, weight, std::nullopt, stride, padding, dilation, transposed, output_padding, groups);
    if (ggW.defined())
      g_grad_output = accumulate(g_grad_output, ember::convolution(input, ggW, std::nullopt, stride, padding, dilation,
                                                                   transposed, output_padding, groups));
    if (ggb.defined()) {
      Tensor b = per_channel(ggb, grad_output.dim()).expand(grad_output.sizes());
      g_grad_output = accumulate(g_grad_output, b);
    }
  }
  if (grad_input_mask[1] && ggW.defined())
    g_input = std::get<0>(ember::convolution_backward(grad_output, input, ggW, stride, padding, dilation, transposed,
                                                      output_padding, groups, {true, false, false}));
  if (grad_input_mask[2] && ggI.defined())
    g_weight = std::get<1>(ember::convolution_backward(grad_output, ggI, weight, stride, padding, dilation, transposed,
                                                       output_padding, groups, {false, true, false}));
  return {g_grad_output, g_input, g_weight};
}

Tensor pad_double_backward(const Tensor& grad, IntArrayRef padding, int64_t mode) {
  const bool reflect = mode == 0;
  switch (padding.size()) {
    case 2: return reflect ? ember::reflection_pad1d(grad, padding) : ember::replication_pad1d(grad, padding);
    case 4: return reflect ? ember::reflection_pad2d(grad, padding) : ember::replication_pad2d(grad, padding);
    case 6: return reflect ? ember::reflection_pad3d(grad, padding) : ember::replication_pad3d(grad, padding);
    default: EMBER_INTERNAL_ASSERT(false, "pad_double_backward: padding of ", padding.size(), " entries");
  }
  return Tensor();
}

Tensor upsample_nearest_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes, int64_t k,
                                        const std::optional<std::vector<double>>& scale_factors, bool exact) {
  std::optional<std::vector<int64_t>> size;
  if (!scale_factors.has_value()) size = trailing_sizes(grad_output_sizes, k);
  switch (k) {
    case 1:
      return exact ? ember::_upsample_nearest_exact1d(grad, size, scale_factors)
                   : ember::upsample_nearest1d(grad, size, scale_factors);
    case 2:
      return exact ? ember::_upsample_nearest_exact2d(grad, size, scale_factors)
                   : ember::upsample_nearest2d(grad, size, scale_factors);
    default:
      return exact ? ember::_upsample_nearest_exact3d(grad, size, scale_factors)
                   : ember::upsample_nearest3d(grad, size, scale_factors);
  }
}

Tensor upsample_linear_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes, int64_t k, bool align_corners,
                                       const std::optional<std::vector<double>>& scale_factors) {
  std::optional<std::vector<int64_t>> size;
  if (!scale_factors.has_value()) size = trailing_sizes(grad_output_sizes, k);
  if (k == 1) return ember::upsample_linear1d(grad, size, align_corners, scale_factors);
  return ember::upsample_bilinear2d(grad, size, align_corners, scale_factors);
}

Tensor upsample_2d_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes, bool align_corners,
                                   const std::optional<std::vector<double>>& scale_factors, bool antialias,
                                   bool cubic) {
  std::optional<std::vector<int64_t>> size;
  if (!scale_factors.has_value()) size = trailing_sizes(grad_output_sizes, 2);
  if (!antialias) return ember::upsample_bicubic2d(grad, size, align_corners, scale_factors);
  if (!cubic) return ember::_upsample_bilinear2d_aa(grad, size, align_corners, scale_factors);
  return ember::_upsample_bicubic2d_aa(grad, size, align_corners, scale_factors);
}

Tensor nll_loss_double_backward(const Tensor& grad, const Tensor& target, const std::optional<Tensor>& weight,
                                int64_t reduction, int64_t ignore_index) {
  if (grad.dim() > 2) return std::get<0>(ember::nll_loss2d_forward(grad, target, weight, reduction, ignore_index));
  return std::get<0>(ember::nll_loss_forward(grad, target, weight, reduction, ignore_index));
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_gradient(const Tensor& grad, const Tensor& input,
                                                       IntArrayRef normalized_shape, const Tensor& mean,
                                                       const Tensor& rstd, const std::optional<Tensor>& weight,
                                                       double eps, std::array<bool, 3> grad_input_mask) {
  if (!GradMode::is_enabled())
    return ember::native_layer_norm_backward(grad, input, normalized_shape, mean, rstd, weight, grad_input_mask);
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  const std::vector<int64_t> norm_dims = dims_range(axis, input.dim());
  const std::vector<int64_t> outer_dims = dims_range(0, axis);
  Tensor centred = input - input.mean(norm_dims, true);
  Tensor r = ember::rsqrt((centred * centred).mean(norm_dims, true) + Scalar(eps));
  Tensor x_hat = centred * r;
  Tensor g_input, g_weight, g_bias;
  if (grad_input_mask[0]) {
    Tensor g = has(weight) ? grad * *weight : grad;
    g_input = normalized_input_grad(g, x_hat, r, norm_dims);
  }
  // An empty dim list would sum everything: without outer dims there is nothing to sum.
  auto over_outer = [&](const Tensor& t) { return outer_dims.empty() ? t : t.sum(outer_dims, false); };
  if (grad_input_mask[1] && has(weight)) g_weight = over_outer(grad * x_hat);
  if (grad_input_mask[2]) g_bias = over_outer(grad);
  return {g_input, g_weight, g_bias};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_gradient(const Tensor& grad, const Tensor& input,
                                                       const std::optional<Tensor>& weight,
                                                       const std::optional<Tensor>& running_mean,
                                                       const std::optional<Tensor>& running_var,
                                                       const Tensor& save_mean, const Tensor& save_invstd,
                                                       bool training, double eps, std::array<bool, 3> grad_input_mask) {
  if (!GradMode::is_enabled())
    return ember::native_batch_norm_backward(grad, input, weight, running_mean, running_var, save_mean, save_invstd,
                                             training, eps, grad_input_mask);
  const int64_t ndim = input.dim();
  const std::vector<int64_t> dims = all_but_channels(ndim);
  const bool batch_stats = training || !has(running_mean) || !has(running_var);
  Tensor centred, r;
  if (batch_stats) {
    centred = input - input.mean(dims, true);
    r = ember::rsqrt((centred * centred).mean(dims, true) + Scalar(eps));
  } else {
    centred = input - per_channel(*running_mean, ndim);
    r = per_channel(ember::rsqrt(*running_var + Scalar(eps)), ndim);
  }
  Tensor x_hat = centred * r;
  Tensor g_input, g_weight, g_bias;
  if (grad_input_mask[0]) {
    Tensor g = has(weight) ? grad * per_channel(*weight, ndim) : grad;
    g_input = batch_stats ? normalized_input_grad(g, x_hat, r, dims) : g * r;
  }
  if (grad_input_mask[1] && has(weight)) g_weight = (grad * x_hat).sum(dims, false);
  if (grad_input_mask[2]) g_bias = grad.sum(dims, false);
  return {g_input, g_weight, g_bias};
}

// The gradient in input of the group statistics (biased variance through
// rstd = (var + eps)^-1/2, and mean), over the (N, group, -1) view x:
// drstd * -rstd^3 (x - mean) / M + dmean / M.
static Tensor group_stats_input_grad(const Tensor& dmean, const Tensor& drstd, const Tensor& x, const Tensor& mean,
                                     const Tensor& rstd) {
  const double inv_count = 1.0 / static_cast<double>(x.size(2));
  const std::vector<int64_t> per_group{x.size(0), x.size(1), 1};
  Tensor r = rstd.reshape(per_group);
  return (x - mean.reshape(per_group)) * (r * r * r * drstd.reshape(per_group) * Scalar(-inv_count)) +
         dmean.reshape(per_group) * Scalar(inv_count);
}

std::tuple<Tensor, Tensor, Tensor> group_norm_gradient(const Tensor& grad, const Tensor& grad_mean,
                                                       const Tensor& grad_rstd, const Tensor& input, const Tensor& mean,
                                                       const Tensor& rstd, const std::optional<Tensor>& weight,
                                                       int64_t N, int64_t C, int64_t HxW, int64_t group, double eps,
                                                       std::array<bool, 3> grad_input_mask) {
  const std::vector<int64_t> grouped{N, group, -1};
  const std::vector<int64_t> within{2};
  // As PyTorch: the statistics' gradients count only when both are given.
  const bool stats = grad_input_mask[0] && grad_mean.defined() && grad_rstd.defined();
  const bool record = GradMode::is_enabled();
  Tensor g_input, g_weight, g_bias;
  if (grad.defined() && !record) {
    std::tie(g_input, g_weight, g_bias) =
        ember::native_group_norm_backward(grad, input, mean, rstd, weight, N, C, HxW, group, grad_input_mask);
  }
  Tensor x = input.reshape(grouped);
  Tensor mu = mean, r = rstd;
  if (record) {  // statistics recomputed from input, so they carry its graph
    mu = x.mean(within, true);
    Tensor centred = x - mu;
    r = ember::rsqrt((centred * centred).mean(within, true) + Scalar(eps));
  }
  if (grad.defined() && record) {
    Tensor x_hat = (x - mu) * r;
    const std::vector<int64_t> dims = all_but_channels(input.dim());
    if (grad_input_mask[0]) {
      Tensor g = has(weight) ? grad * per_channel(*weight, input.dim()) : grad;
      g_input = normalized_input_grad(g.reshape(grouped), x_hat, r, within).reshape(input.sizes());
    }
    Tensor x_hat_full = x_hat.reshape(input.sizes());
    if (grad_input_mask[1] && has(weight)) g_weight = (grad * x_hat_full).sum(dims, false);
    if (grad_input_mask[2]) g_bias = grad.sum(dims, false);
  }
  if (stats) {
    Tensor extra = group_stats_input_grad(grad_mean, grad_rstd, x, mu, r).reshape(input.sizes());
    g_input = g_input.defined() ? g_input + extra : extra;
  }
  return {g_input, g_weight, g_bias};
}

Tensor embedding_dense_double_backward(const Tensor& grad, const Tensor& indices, int64_t padding_idx) {
  std::vector<int64_t> shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(grad.size(-1));
  Tensor rows = grad.index_select(0, indices.reshape({-1})).view(shape);
  if (padding_idx < 0) return rows;
  return ember::where(indices.eq(Scalar(padding_idx)).unsqueeze(-1), Scalar(int64_t(0)), rows);
}

Tensor embedding_bag_max_double_backward(const Tensor& grad, const Tensor& max_indices) {
  Tensor empty_bag = max_indices.lt(Scalar(int64_t(0)));
  Tensor rows = ember::where(empty_bag, Scalar(int64_t(0)), max_indices);
  return ember::where(empty_bag, Scalar(int64_t(0)), grad.gather(0, rows));
}

namespace {
constexpr double kBceEps = 1e-12;

Tensor bce_weighted(const Tensor& t, const std::optional<Tensor>& weight) { return has(weight) ? t * *weight : t; }

Tensor one_minus(const Tensor& t) { return ember::sub(wrapped_scalar(Scalar(int64_t(1))), t); }
}  // namespace

Tensor binary_cross_entropy_double_backward_grad_output(const Tensor& grad, const Tensor& self, const Tensor& target,
                                                        const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor g = (self - target) / ((self + Scalar(kBceEps)) * (one_minus(self) + Scalar(kBceEps)));
  g = bce_weighted(g * grad, weight);
  if (reduction == 1) return g.sum() / Scalar(static_cast<double>(self.numel()));
  if (reduction == 2) return g.sum();
  return g;
}

Tensor binary_cross_entropy_double_backward(const Tensor& grad_output, const Tensor& grad, const Tensor& self,
                                            const Tensor& target, const std::optional<Tensor>& weight,
                                            int64_t reduction) {
  Tensor above = self + Scalar(kBceEps), below = one_minus(self) + Scalar(kBceEps);
  Tensor g = (self * self - self * target * Scalar(int64_t(2)) + target) / (above * above * below * below);
  g = bce_weighted(g * (grad * grad_output), weight);
  if (reduction == 1) return g / Scalar(static_cast<double>(self.numel()));
  return g;
}

Tensor binary_cross_entropy_double_backward_target(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                                                   const Tensor& target, const std::optional<Tensor>& weight,
                                                   int64_t reduction) {
  (void)target;
  Tensor g = bce_weighted(-grad * grad_output, weight);
  g = g / ember::clamp_min(one_minus(self) * self, Scalar(kBceEps));
  if (reduction == 1) return g / Scalar(static_cast<double>(self.numel()));
  return g;
}

Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor g = bce_weighted(-ember::logit(self) * grad, weight);
  if (reduction == 1) return g / Scalar(static_cast<double>(target.numel()));
  return g;
}

Tensor binary_cross_entropy_with_logits_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                                        const std::optional<Tensor>& weight,
                                                        const std::optional<Tensor>& pos_weight, int64_t reduction) {
  Tensor d = has(pos_weight) ? ember::log_sigmoid(-self) - ember::log_sigmoid(self) * *pos_weight : -self;
  Tensor g = bce_weighted(d * grad, weight);
  if (reduction == 1) return g / Scalar(static_cast<double>(target.numel()));
  return g;
}

}  // namespace ember::autograd::generated
