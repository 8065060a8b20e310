#pragma once
// Derivative helpers of the complex-number ops in ops.yaml, with PyTorch's
// convention: the gradient of a real loss L is dL/d(conj z) (conjugate
// Wirtinger), so a real input gets the real part.

#include <tuple>

#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

// grad * sgn(self): |z| for complex, sign for real inputs.
Tensor abs_backward(const Tensor& grad, const Tensor& self);
Tensor angle_backward(const Tensor& grad, const Tensor& self);
Tensor sgn_backward(const Tensor& self, const Tensor& grad, const Tensor& result);
// A dtype/device copy's gradient: converted back; the real part for a real
// input (no warning about discarding the imaginary part).
Tensor to_copy_backward(const Tensor& grad, Device device, ScalarType dtype);
// tanh's and sigmoid's gradients from their result: the pointwise kernels for
// real tensors; grad * conj(1 - y^2) and grad * conj((1 - y) y) for complex.
Tensor tanh_backward_of(const Tensor& grad, const Tensor& result);
Tensor sigmoid_backward_of(const Tensor& grad, const Tensor& result);
// Gradients of abs and angle of polar(abs, angle) = result.
std::tuple<Tensor, Tensor> polar_backward(const Tensor& grad, const Tensor& result);

}  // namespace ember::autograd::generated
