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

namespace {
// Sums every dim but 1: dim 0 first, then the trailing dims from the last.
Tensor sum_but_channels(const Tensor& t, bool keepdim = true) {
  Tensor r = t.sum(std::vector<int64_t>{0}, keepdim);
  const int64_t stop = keepdim ? 1 : 0;
  for (int64_t d = r.dim() - 1; d > stop; --d) r = r.sum(std::vector<int64_t>{d}, keepdim);
  return r;
}

// A per-channel vector shaped as a keepdim reduction of an (N, C, ...) tensor.
Tensor channels_as_reduced(const Tensor& v, const Tensor& like) {
  Tensor r = v;
  while (r.dim() < like.dim() - 1) r = r.unsqueeze(1);
  if (r.dim() == like.dim() - 1) r = r.unsqueeze(0);
  return r;
}

// A per-channel vector expanded to an (N, C, ...) tensor's shape.
Tensor channels_expanded(const Tensor& v, const Tensor& like) {
  Tensor r = v;
  while (r.dim() < like.dim() - 1) r = r.unsqueeze(1);
  return r.expand_as(like);
}

// The normalisation's input gradient for grad g over groups of n (keepdim
// sums by sum_group): gamma * rstd / n * (n g - sum(g) - (x - mu) rstd^2 sum(g (x - mu))).
template <typename Sum>
Tensor normalized_grad_input(const Tensor& g, const Tensor& gamma, const Tensor& x_mu, const Tensor& rstd,
                             const Tensor& rstd2, int64_t n, Sum sum_group) {
  Tensor h0 = gamma * rstd / Scalar(n);
  Tensor h1 = g * Scalar(n) - sum_group(g) - x_mu * rstd2 * sum_group(g * x_mu);
  return h0 * h1;
}

// The input gradient's terms from the input's grad-grad ggi, for a
// normalisation over groups of n whose normalised values receive g (g_sum,
// g_mu_sum: its group sums, alone and times x - mu), in PyTorch's order:
// layer_norm_double_backward and batchnorm_double_backward share it.
template <typename Sum>
Tensor input_terms_of_input_gradgrad(const Tensor& ggi, const Tensor& g, const Tensor& g_sum, const Tensor& g_mu_sum,
                                     const Tensor& x_mu, const Tensor& x_mu_rstd3, const Tensor& rstd2,
                                     const Tensor& rstd3, int64_t n, Sum sum_group) {
  const Tensor ggi_sum = sum_group(ggi);
  const Tensor ggi_mu_sum = sum_group(ggi * x_mu);
  const Tensor all_sub = ggi_sum * g_sum / Scalar(n) - sum_group(ggi * g) +
                         rstd2 * g_mu_sum * ggi_mu_sum * Scalar(3.0 / static_cast<double>(n));
  const Tensor t0 = x_mu_rstd3 * all_sub / Scalar(n);
  const Tensor t1 = ggi_mu_sum * rstd3 / Scalar(n) * (g_sum / Scalar(n) - g);
  const Tensor t2 = g_mu_sum * rstd3 / Scalar(n) * (ggi_sum / Scalar(n) - ggi);
  return t0 + t1 + t2;
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> layer_norm_double_backward(const Tensor& input, const std::optional<Tensor>& gamma,
                                                              const Tensor& ggI, const Tensor& ggG, const Tensor& ggB,
                                                              const Tensor& gO, const Tensor& save_mean,
                                                              const Tensor& save_invstd, IntArrayRef normalized_shape,
                                                              std::array<bool, 3> output_mask) {
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  int64_t M = 1, N = 1;
  for (int64_t d = 0; d < input.dim(); ++d) (d < axis ? M : N) *= input.size(d);
  // Everything as (M, N) rows, the statistics as (M, 1).
  const Tensor x = input.reshape({M, N});
  const Tensor g = gO.reshape({M, N});
  const bool affine = has(gamma);
  const Tensor gam = affine ? gamma->reshape({1, N}) : ember::ones({1}, input.scalar_type(), input.device());
  const Tensor ggi = ggI.defined() ? ggI.reshape({M, N}) : Tensor();
  const Tensor ggg = affine && ggG.defined() ? ggG.reshape({1, N}) : Tensor();
  const Tensor ggb = affine && ggB.defined() ? ggB.reshape({1, N}) : Tensor();
  auto row_sum = [](const Tensor& t) { return t.sum(std::vector<int64_t>{1}, true); };

  const Tensor x_mu = x - save_mean.reshape({M, 1}).to(input.scalar_type());
  const Tensor rstd = save_invstd.reshape({M, 1}).to(input.scalar_type());
  const Tensor rstd2 = rstd.pow(Scalar(int64_t(2)));
  const Tensor rstd3 = rstd.pow(Scalar(int64_t(3)));
  const Tensor x_mu_rstd3 = x_mu * rstd3;

  Tensor gI;
  if (ggi.defined()) {
    const Tensor gxhat = g * gam;
    gI = input_terms_of_input_gradgrad(ggi, gxhat, row_sum(gxhat), row_sum(gxhat * x_mu), x_mu, x_mu_rstd3, rstd2,
                                       rstd3, N, row_sum);
  }
  if (ggg.defined()) {
    const Tensor t0 = g * ggg * rstd;
    const Tensor t1 = rstd * row_sum(g * ggg) / Scalar(-N);
    const Tensor t2 = x_mu_rstd3 * row_sum(g * ggg * x_mu) / Scalar(-N);
    gI = accumulate(gI, t0 + t1 + t2);
  }
  if (gI.defined()) gI = gI.reshape_as(input);

  Tensor gG;
  if (affine && ggi.defined()) {
    const Tensor one = ember::ones({}, rstd.scalar_type(), rstd.device());
    gG = (g * normalized_grad_input(ggi, one, x_mu, rstd, rstd2, N, row_sum)).sum(std::vector<int64_t>{0}, false);
    gG = gG.reshape_as(*gamma);
  }

  Tensor ggO;
  if (ggi.defined()) ggO = normalized_grad_input(ggi, gam, x_mu, rstd, rstd2, N, row_sum);
  if (ggg.defined()) ggO = accumulate(ggO, ggg * x_mu * rstd);
  if (ggb.defined()) ggO = accumulate(ggO, ggb);
  if (ggO.defined()) ggO = ggO.expand({M, N}).reshape_as(input);
  EMBER_INTERNAL_ASSERT(!output_mask[1] || gG.defined() || affine,
                        "layer_norm_double_backward: weight gradient without weight");
  return {gI, gG, ggO};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_double_backward(
    const Tensor& input, const std::optional<Tensor>& gamma, const Tensor& ggI, const Tensor& ggG, const Tensor& ggB,
    const Tensor& gO, const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    bool training, double eps, const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd,
    std::array<bool, 3> output_mask) {
  (void)output_mask;
  const bool affine = has(gamma);
  const Tensor gam = affine ? channels_expanded(*gamma, input) : ember::ones({}, input.scalar_type(), input.device());
  const Tensor ggg = affine && ggG.defined() ? channels_expanded(ggG, input) : Tensor();
  const Tensor ggb = affine && ggB.defined() ? channels_expanded(ggB, input) : Tensor();
  int64_t M = input.size(0);
  for (int64_t d = 2; d < input.dim(); ++d) M *= input.size(d);
  auto sum_keep = [](const Tensor& t) { return sum_but_channels(t); };

  const Tensor mu = channels_as_reduced(training ? save_mean->to(input.scalar_type()) : *running_mean, input);
  const Tensor x_mu = input - mu;
  const Tensor rstd = channels_as_reduced(
      training ? save_invstd->to(input.scalar_type()) : (*running_var + Scalar(eps)).pow(Scalar(-0.5)), input);
  const Tensor rstd2 = rstd.pow(Scalar(int64_t(2)));
  const Tensor rstd3 = rstd.pow(Scalar(int64_t(3)));
  const Tensor x_mu_rstd3 = x_mu * rstd3;
  const Tensor gO_mu_sum = sum_keep(gO * x_mu);
  const Tensor gO_sum = sum_keep(gO);

  Tensor gI;
  if (ggI.defined() && training) {
    gI = gam * input_terms_of_input_gradgrad(ggI, gO, gO_sum, gO_mu_sum, x_mu, x_mu_rstd3, rstd2, rstd3, M, sum_keep);
  }
  if (ggg.defined()) {
    Tensor term;
    if (training) {
      const Tensor t0 = gO * rstd;
      const Tensor t1 = rstd * gO_sum / Scalar(-M);
      const Tensor t2 = x_mu_rstd3 * sum_keep(gO * x_mu) / Scalar(-M);
      term = ggg * (t0 + t1 + t2);
    } else {
      term = ggg * rstd * gO;
    }
    gI = accumulate(gI, term);
  }

  Tensor gG;
  if (affine && ggI.defined()) {
    if (training) {
      const Tensor one = ember::ones({}, rstd.scalar_type(), rstd.device());
      gG = sum_but_channels(ggI * normalized_grad_input(gO, one, x_mu, rstd, rstd2, M, sum_keep), false);
    } else {
      gG = sum_but_channels(ggI * gO * rstd, false);
    }
  }

  Tensor ggO;
  if (ggI.defined()) {
    ggO = training ? normalized_grad_input(ggI, gam, x_mu, rstd, rstd2, M, sum_keep) : ggI * rstd * gam;
  }
  if (ggg.defined()) ggO = accumulate(ggO, ggg * x_mu * rstd);
  if (ggb.defined()) ggO = accumulate(ggO, ggb);
  return {gI, gG, ggO};
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

std::tuple<Tensor, Tensor> lstm_cell_fused_gradient(const Tensor& gates, const Tensor& cx, const Tensor& cy,
                                                    const Tensor& grad_h, const Tensor& grad_c) {
  if (!GradMode::is_enabled()) {
    const auto opt = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
    return ember::_lstm_cell_fused_backward(gates, cx, cy, opt(grad_h), opt(grad_c));
  }
  const std::vector<Tensor> parts = gates.chunk(4, 1);
  const Tensor i = ember::sigmoid(parts[0]), f = ember::sigmoid(parts[1]), g = ember::tanh(parts[2]),
               o = ember::sigmoid(parts[3]);
  const Tensor c_next = f * cx + i * g;  // cy, with the graph of gates and cx
  const Tensor tanh_c = ember::tanh(c_next);
  Tensor dc = grad_c.defined() ? grad_c : ember::zeros_like(cx);
  Tensor d_o = ember::zeros_like(o);
  if (grad_h.defined()) {
    dc = dc + grad_h * o * (Scalar(1) - tanh_c * tanh_c);
    d_o = grad_h * tanh_c * o * (Scalar(1) - o);
  }
  const Tensor d_i = dc * g * i * (Scalar(1) - i), d_f = dc * cx * f * (Scalar(1) - f),
               d_g = dc * i * (Scalar(1) - g * g);
  return {ember::cat({d_i, d_f, d_g, d_o}, 1), dc * f};
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
