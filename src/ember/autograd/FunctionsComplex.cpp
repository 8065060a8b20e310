#include "ember/autograd/FunctionsComplex.h"

#include <complex>

#include "ember/ops/Ops.h"

namespace ember::autograd::generated {

namespace {
const Scalar kI(std::complex<double>(0.0, 1.0));
}  // namespace

Tensor abs_backward(const Tensor& grad, const Tensor& self) { return grad * self.sgn(); }

Tensor angle_backward(const Tensor& grad, const Tensor& self) {
  if (!self.is_complex()) return zeros_like(self);
  // d angle: i z / |z|^2 (0 where z = 0)
  Tensor g = (grad * self).div(self.abs().pow(2)) * kI;
  return where(self.eq(Scalar(0.0)), zeros_like(g), g);
}

Tensor sgn_backward(const Tensor& self, const Tensor& grad, const Tensor& result) {
  if (!self.is_complex()) return zeros_like(self);
  Tensor a = self.abs();
  Tensor g = (grad - result * real(result.conj() * grad)).div(a);
  return where(a.eq(Scalar(0.0)), zeros_like(g), g);
}

Tensor to_copy_backward(const Tensor& grad, Device device, ScalarType dtype) {
  const Tensor g = !is_complex_type_any_tier(dtype) && grad.is_complex() ? real(grad) : grad;
  return g.to(device, dtype);
}

Tensor tanh_backward_of(const Tensor& grad, const Tensor& result) {
  if (!result.is_complex()) return tanh_backward(grad, result);
  return grad * (1 - result * result).conj();
}

Tensor sigmoid_backward_of(const Tensor& grad, const Tensor& result) {
  if (!result.is_complex()) return sigmoid_backward(grad, result);
  return grad * ((1 - result) * result).conj();
}

std::tuple<Tensor, Tensor> polar_backward(const Tensor& grad, const Tensor& result) {
  Tensor grad_conj = grad.conj();
  Tensor grad_abs = real(grad_conj * result.sgn());
  Tensor grad_angle = real(grad_conj * (result * kI));
  return {grad_abs, grad_angle};
}

}  // namespace ember::autograd::generated
