#include "ember/autograd/FunctionsMath.h"

#include <cmath>
#include <complex>

#include "ember/autograd/GradMode.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"

namespace ember::autograd::generated {

namespace {
Tensor one_minus(const Tensor& t) { return ember::sub(wrapped_scalar(Scalar(int64_t(1))), t); }
Tensor masked_zero(const Tensor& mask, const Tensor& t) { return ember::where(mask, Scalar(int64_t(0)), t); }
Tensor keep_where(const Tensor& mask, const Tensor& grad) { return ember::where(mask, grad, Scalar(int64_t(0))); }
}  // namespace

// Second derivatives of the fused activation gradients (d/d output or self).
Tensor tanh_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& output) {
  return grad * (output * Scalar(int64_t(-2)) * grad_output);
}

Tensor sigmoid_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& output) {
  return grad * grad_output * (output * Scalar(int64_t(-2)) + 1);
}

// silu's gradient: the fused op, or while grad mode records a graph (a
// gradient that will be differentiated) the composite, as PyTorch.
Tensor silu_gradient(const Tensor& grad, const Tensor& self) {
  if (!GradMode::is_enabled()) return ember::silu_backward(grad, self);
  Tensor s = ember::sigmoid(self);
  return grad * s * (self * one_minus(s) + 1);
}

Tensor silu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self) {
  Tensor s = ember::sigmoid(self);
  Tensor ds = s * one_minus(s);
  return grad * grad_output * (ds * (self * one_minus(s * Scalar(int64_t(2))) + 2));
}

// gelu'' = (2 - x^2) pdf(x); with tanh, gelu = x (1 + t) / 2, t = tanh(u),
// u = b (x + k x^3): gelu'' = (1 - t^2) (u' + x (u'' - 2 t u'^2) / 2).
Tensor gelu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                            const std::string& approximate) {
  Tensor x2 = self * self;
  Tensor second;
  if (approximate == "tanh") {
    const double b = M_SQRT2 * M_2_SQRTPI * 0.5, k = 0.044715;
    Tensor t = ember::tanh((self + self * x2 * Scalar(k)) * Scalar(b));
    Tensor du = (x2 * Scalar(3.0 * k) + 1) * Scalar(b);
    Tensor d2u = self * Scalar(6.0 * k * b);
    Tensor curve = d2u - t * du * du * Scalar(2.0);
    second = one_minus(t * t) * (du + self * Scalar(0.5) * curve);
  } else {
    const double b = M_2_SQRTPI * M_SQRT1_2 * 0.5;
    Tensor pdf = ember::exp(x2 * Scalar(-0.5)) * Scalar(b);
    second = (Scalar(2.0) - x2) * pdf;
  }
  return grad * grad_output * second;
}

// For x < 0, elu' = s a c exp(c x), so elu'' = c elu'; zero above.
Tensor elu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self, const Scalar& alpha,
                           const Scalar& scale, const Scalar& input_scale) {
  Tensor d = ember::elu_backward(grad * grad_output * input_scale, self, alpha, scale, input_scale);
  return keep_where(self.lt(Scalar(int64_t(0))), d);
}

// softplus' = sigmoid(b x) below the threshold, so softplus'' = b sigmoid'(b x).
Tensor softplus_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self, const Scalar& beta,
                                const Scalar& threshold) {
  Tensor x = self * beta;
  Tensor d = ember::sigmoid_backward(grad * grad_output, ember::sigmoid(x)) * beta;
  return keep_where(x.lt(threshold), d);
}

// log_sigmoid' = 1 - s, log_sigmoid'' = (s - 1) s with s = sigmoid(x).
Tensor log_sigmoid_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self) {
  Tensor s = ember::sigmoid(self);
  return grad * grad_output * ((s - Scalar(int64_t(1))) * s);
}

// mish = x t, t = tanh(softplus(x)), t' = (1 - t^2) s with s = sigmoid(x):
// mish' = t + x s (1 - t^2), mish'' = (1 - t^2) s (2 + x (1 - s) - 2 x s t).
Tensor mish_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self) {
  Tensor s = ember::sigmoid(self);
  Tensor t = ember::tanh(ember::softplus(self));
  Tensor inner = self * (one_minus(s) - s * t * Scalar(int64_t(2))) + Scalar(int64_t(2));
  return grad * grad_output * (one_minus(t * t) * s * inner);
}

Tensor mish_gradient(const Tensor& grad, const Tensor& self) {
  if (!GradMode::is_enabled()) return ember::mish_backward(grad, self);
  Tensor s = ember::sigmoid(self);
  Tensor t = ember::tanh(ember::softplus(self));
  return grad * (t + self * s * one_minus(t * t));
}

Tensor div_other_backward(const Tensor& grad, const Tensor& self, const Tensor& other,
                          const std::optional<std::string>& rounding_mode) {
  if (rounding_mode) return ember::zeros_like(grad);
  return -grad * self.div(other).div(other).conj();
}

Tensor div_self_backward(const Tensor& grad, const Tensor& other, const std::optional<std::string>& rounding_mode) {
  if (rounding_mode) return ember::zeros_like(grad);
  return grad.div(other);
}

Tensor pow_backward(const Tensor& grad, const Tensor& self, const Scalar& exponent) {
  if (exponent.equal(0.0)) return ember::zeros_like(self);
  const double e = exponent.to_double();
  return grad * (Scalar(e) * self.pow(Scalar(e - 1.0))).conj();
}

namespace {
// The gradient of a real input whose path went through complex numbers: its real part (PyTorch's handle_r_to_c).
Tensor real_for_real_input(const Tensor& input, const Tensor& g) {
  return !input.is_complex() && g.is_complex() ? ember::real(g) : g;
}
// exponent >= 0; for complex exponents, real and >= 0.
Tensor real_nonnegative(const Tensor& exponent) {
  if (!exponent.is_complex()) return exponent.ge(Scalar(int64_t(0)));
  return ember::imag(exponent).eq(Scalar(int64_t(0))).logical_and(ember::real(exponent).ge(Scalar(int64_t(0))));
}
}  // namespace

Tensor pow_backward_self(const Tensor& grad, const Tensor& self, const Tensor& exponent) {
  Tensor d = grad * (exponent * self.pow(exponent - Scalar(int64_t(1)))).conj();
  return real_for_real_input(self, masked_zero(exponent.eq(Scalar(0.0)), d));
}

Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result) {
  Tensor cond = self.eq(Scalar(int64_t(0))).logical_and(real_nonnegative(exponent));
  const ScalarType promoted = result_type({&self, &exponent});
  Tensor self_ = self.dtype() == promoted ? self : self.to(promoted);
  return real_for_real_input(exponent, grad * masked_zero(cond, (result * self_.log()).conj()));
}

Tensor pow_backward_exponent(const Tensor& grad, const Scalar& base, const Tensor& exponent, const Tensor& result) {
  // A complex exponent takes the complex logarithm of a real base (i pi for a negative one).
  Tensor d = exponent.is_complex() || base.is_complex() ? (result * Scalar(std::log(base.to_complex()))).conj()
                                                        : result * Scalar(std::log(base.to_double()));
  if (base.equal(0.0)) d = masked_zero(real_nonnegative(exponent), d);
  return real_for_real_input(exponent, grad * d);
}

Tensor max_min_self_backward(const Tensor& grad, const Tensor& a, const Tensor& b, bool is_max) {
  Tensor shared = ember::where(a.eq(b), grad.div(wrapped_scalar(Scalar(int64_t(2)))), grad);
  return masked_zero(is_max ? a.lt(b) : a.gt(b), shared);
}

Tensor fmax_fmin_backward(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_max, bool for_self) {
  Tensor wins = (is_max ? self.ge(other) : self.le(other)).logical_or(other.isnan());
  return masked_zero(for_self ? wins.logical_not() : wins, grad);
}

Tensor atan2_backward(const Tensor& grad, const Tensor& self, const Tensor& other, bool for_self) {
  Tensor denom = self * self + other * other;
  // At the origin atan2 has no derivative; the gradient there is 0, as in PyTorch.
  Tensor recip = masked_zero(denom.eq(Scalar(int64_t(0))), denom.reciprocal());
  return for_self ? grad * other * recip : grad * -self * recip;
}

// grad * conj(1 - weight) and grad * conj(weight), as PyTorch's formulas.
Tensor lerp_self_backward(const Tensor& grad, const Scalar& weight) {
  if (weight.is_complex()) return grad * Scalar(std::conj(1.0 - weight.to_complex()));
  return grad * Scalar(1.0 - weight.to_double());
}
Tensor lerp_self_backward(const Tensor& grad, const Tensor& weight) { return grad * one_minus(weight).conj(); }
Tensor lerp_end_backward(const Tensor& grad, const Scalar& weight) {
  return weight.is_complex() ? grad * Scalar(std::conj(weight.to_complex())) : grad * weight;
}
Tensor lerp_end_backward(const Tensor& grad, const Tensor& weight) { return grad * weight.conj(); }

Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max) {
  if (min && max) return keep_where(self.ge(*min).logical_and(self.le(*max)), grad);
  if (min) return keep_where(self.ge(*min), grad);
  if (max) return keep_where(self.le(*max), grad);
  return grad;
}

Tensor clamp_backward(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max) {
  if (min.defined() && max.defined()) return keep_where(self.ge(min).logical_and(self.le(max)), grad);
  if (min.defined()) return keep_where(self.ge(min), grad);
  if (max.defined()) return keep_where(self.le(max), grad);
  return grad;
}

Tensor clamp_backward_min(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max) {
  if (max.defined()) return keep_where(self.lt(min).logical_and(min.lt(max)), grad);
  return keep_where(self.lt(min), grad);
}

Tensor clamp_backward_max(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max) {
  if (min.defined()) return keep_where(self.gt(max).logical_or(max.lt(min)), grad);
  return keep_where(self.gt(max), grad);
}

}  // namespace ember::autograd::generated
