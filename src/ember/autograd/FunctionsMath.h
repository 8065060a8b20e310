#pragma once
// Derivative helpers of the elementwise math ops in ops.yaml (included by
// FunctionsManual.h, so the generated backward nodes see them). Each builds
// the gradient from differentiable ops, so double backward works.

#include <optional>
#include <string>

#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

Tensor tanh_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& output);
Tensor sigmoid_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& output);
Tensor silu_gradient(const Tensor& grad, const Tensor& self);
Tensor silu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);

// The activation backwards differentiated in self: grad * grad_output times
// the activation's second derivative, from differentiable ops.
Tensor gelu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                            const std::string& approximate);
Tensor elu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self, const Scalar& alpha,
                           const Scalar& scale, const Scalar& input_scale);
Tensor softplus_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self, const Scalar& beta,
                                const Scalar& threshold);
Tensor log_sigmoid_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);
Tensor mish_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);
// mish's gradient: the fused op, or the composite while grad mode records a graph.
Tensor mish_gradient(const Tensor& grad, const Tensor& self);

Tensor div_other_backward(const Tensor& grad, const Tensor& self, const Tensor& other,
                          const std::optional<std::string>& rounding_mode = std::nullopt);
Tensor div_self_backward(const Tensor& grad, const Tensor& other, const std::optional<std::string>& rounding_mode);

Tensor pow_backward(const Tensor& grad, const Tensor& self, const Scalar& exponent);
Tensor pow_backward_self(const Tensor& grad, const Tensor& self, const Tensor& exponent);
Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result);
Tensor pow_backward_exponent(const Tensor& grad, const Scalar& base, const Tensor& exponent, const Tensor& result);

// Gradient for a of maximum(a, b) (is_max) or minimum(a, b): ties share it.
Tensor max_min_self_backward(const Tensor& grad, const Tensor& a, const Tensor& b, bool is_max);
Tensor fmax_fmin_backward(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_max, bool for_self);
Tensor atan2_backward(const Tensor& grad, const Tensor& self, const Tensor& other, bool for_self);

Tensor lerp_self_backward(const Tensor& grad, const Scalar& weight);
Tensor lerp_self_backward(const Tensor& grad, const Tensor& weight);
Tensor lerp_end_backward(const Tensor& grad, const Scalar& weight);
Tensor lerp_end_backward(const Tensor& grad, const Tensor& weight);

Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max);
// Tensor bounds; an undefined tensor is an absent bound.
Tensor clamp_backward(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max);
Tensor clamp_backward_min(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max);
Tensor clamp_backward_max(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max);

}  // namespace ember::autograd::generated
