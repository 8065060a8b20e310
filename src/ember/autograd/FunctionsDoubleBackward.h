#pragma once
// Derivatives of the backward operators of convolution, pooling, padding,
// upsampling and the norms, so their gradients can be differentiated again
// (included by FunctionsManual.h).

#include <array>
#include <optional>
#include <tuple>
#include <vector>

#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

// The last n entries of sizes (the spatial sizes of a pooled or upsampled grad).
std::vector<int64_t> trailing_sizes(IntArrayRef sizes, int64_t n);

// convolution_backward differentiated: ggI, ggW, ggb are the gradients of its
// three outputs (any may be undefined); returns those of grad_output, input, weight.
std::tuple<Tensor, Tensor, Tensor> convolution_double_backward(const Tensor& ggI, const Tensor& ggW, const Tensor& ggb,
                                                               const Tensor& grad_output, const Tensor& input,
                                                               const Tensor& weight, IntArrayRef stride,
                                                               IntArrayRef padding, IntArrayRef dilation,
                                                               bool transposed, IntArrayRef output_padding,
                                                               int64_t groups, std::array<bool, 3> grad_input_mask);

// The gradients (gates, cx) of _lstm_cell_fused: its fused kernel, or, when a
// graph is recorded (create_graph), the same formula as differentiable
// operators on the gates recomputed from their pre-activations.
std::tuple<Tensor, Tensor> lstm_cell_fused_gradient(const Tensor& gates, const Tensor& cx, const Tensor& cy,
                                                    const Tensor& grad_h, const Tensor& grad_c);

// _pad_backward is linear in its gradient: its derivative pads again (mode 0
// reflection, 1 replication).
Tensor pad_double_backward(const Tensor& grad, IntArrayRef padding, int64_t mode);

// The upsampling backwards are linear: their derivative upsamples grad to the
// size of the forward output (grad_output_sizes), with the same scale factors.
Tensor upsample_nearest_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes, int64_t k,
                                        const std::optional<std::vector<double>>& scale_factors, bool exact);
Tensor upsample_linear_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes, int64_t k, bool align_corners,
                                       const std::optional<std::vector<double>>& scale_factors);
// Bicubic, or with antialias bilinear or bicubic.
Tensor upsample_2d_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes, bool align_corners,
                                   const std::optional<std::vector<double>>& scale_factors, bool antialias, bool cubic);

// nll_loss's backward is linear in its gradient: its derivative is the loss
// of grad (nll_loss2d_forward for (N, C, H, W)).
Tensor nll_loss_double_backward(const Tensor& grad, const Tensor& target, const std::optional<Tensor>& weight,
                                int64_t reduction, int64_t ignore_index);

// The derivatives of native_layer_norm_backward and native_batch_norm_backward
// (so a first-order gradient is the fused kernel's, as in PyTorch): given the
// gradients ggI, ggG, ggB of their (input, weight, bias) gradients, they
// return the gradients of (input, weight, grad_out); any gg may be undefined.
// Note [Norm double backward]: the terms follow PyTorch's expansion of the
// second derivative operator by operator, so the bits are PyTorch's.
std::tuple<Tensor, Tensor, Tensor> layer_norm_double_backward(const Tensor& input, const std::optional<Tensor>& gamma,
                                                              const Tensor& ggI, const Tensor& ggG, const Tensor& ggB,
                                                              const Tensor& gO, const Tensor& save_mean,
                                                              const Tensor& save_invstd, IntArrayRef normalized_shape,
                                                              std::array<bool, 3> output_mask);
std::tuple<Tensor, Tensor, Tensor> batch_norm_double_backward(
    const Tensor& input, const std::optional<Tensor>& gamma, const Tensor& ggI, const Tensor& ggG, const Tensor& ggB,
    const Tensor& gO, const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    bool training, double eps, const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd,
    std::array<bool, 3> output_mask);
// group norm's also takes the gradients of its mean and rstd outputs (used
// when both are defined, as PyTorch does); any of the three may be undefined.
std::tuple<Tensor, Tensor, Tensor> group_norm_gradient(const Tensor& grad, const Tensor& grad_mean,
                                                       const Tensor& grad_rstd, const Tensor& input, const Tensor& mean,
                                                       const Tensor& rstd, const std::optional<Tensor>& weight,
                                                       int64_t N, int64_t C, int64_t HxW, int64_t group, double eps,
                                                       std::array<bool, 3> grad_input_mask);

// embedding's backward differentiated in its gradient: the rows of grad
// picked by indices, zero where the index is padding_idx.
Tensor embedding_dense_double_backward(const Tensor& grad, const Tensor& indices, int64_t padding_idx);

// embedding_bag max's backward differentiated in its gradient: grad (of the
// weight's shape) gathered at the rows each bag element came from, 0 for empty bags.
Tensor embedding_bag_max_double_backward(const Tensor& grad, const Tensor& max_indices);

// binary_cross_entropy_backward differentiated in grad_output, self and
// target, with PyTorch's formulas (1e-12 keeps the denominators off zero).
Tensor binary_cross_entropy_double_backward_grad_output(const Tensor& grad, const Tensor& self, const Tensor& target,
                                                        const std::optional<Tensor>& weight, int64_t reduction);
Tensor binary_cross_entropy_double_backward(const Tensor& grad_output, const Tensor& grad, const Tensor& self,
                                            const Tensor& target, const std::optional<Tensor>& weight,
                                            int64_t reduction);
Tensor binary_cross_entropy_double_backward_target(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                                                   const Tensor& target, const std::optional<Tensor>& weight,
                                                   int64_t reduction);

// The losses' gradients in their target, composed of differentiable
// operators (so they have second derivatives): -w logit(self) for BCE,
// w (log_sigmoid(-self) - pos_weight log_sigmoid(self)) with logits.
Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction);
Tensor binary_cross_entropy_with_logits_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                                        const std::optional<Tensor>& weight,
                                                        const std::optional<Tensor>& pos_weight, int64_t reduction);

// grid_sampler_2d/3d's gradient in input and grid: the kernel, or while grad
// mode records a graph, a composite of gather/scatter_add and pointwise
// operators (FunctionsGridSampler.cpp), so it has derivatives of its own.
std::tuple<Tensor, Tensor> grid_sampler_gradient(const Tensor& grad, const Tensor& input, const Tensor& grid,
                                                 int64_t interpolation_mode, int64_t padding_mode, bool align_corners,
                                                 std::array<bool, 2> grad_input_mask);

}  // namespace ember::autograd::generated
