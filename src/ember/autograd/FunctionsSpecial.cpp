#include "ember/autograd/FunctionsSpecial.h"

#include <cmath>
#include <limits>

#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"

namespace ember::autograd::generated {

namespace {
constexpr double kPi = 3.14159265358979323846;
Tensor zero_like_scalar(const Tensor& t) { return ember::zeros({}, t.scalar_type(), t.device()); }
}  // namespace

// d/dx sin(pi x) / (pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2), evaluated
// in that form as PyTorch (its rounding near 0 included), and 0 where pi x^2
// is 0 (conjugated for complex x).
Tensor sinc_backward(const Tensor& grad, const Tensor& self) {
  const Tensor pi_x = self * Scalar(kPi);
  const Tensor pi_x2 = self * self * Scalar(kPi);
  const Tensor slope = grad * ((pi_x * pi_x.cos()) - pi_x.sin()).div(pi_x2).conj();
  return ember::where(ember::eq(pi_x2, Scalar(0.0)), zero_like_scalar(slope), slope);
}

Tensor logit_backward(const Tensor& grad, const Tensor& self, std::optional<double> eps) {
  // |x| so that x = -0 gives +inf, as x = +0 (outside [0, 1] is masked below).
  const Tensor g = grad.div(self.abs() * (-self + Scalar(1.0)));
  if (eps && *eps >= 0) {  // a negative eps is no eps, as in PyTorch's kernel
    const double lo = *eps, hi = 1.0 - *eps;
    const Tensor outside = ember::logical_or(ember::lt(self, Scalar(lo)), ember::gt(self, Scalar(hi)));
    return ember::where(outside, zero_like_scalar(g), g);
  }
  const Tensor outside = ember::logical_or(ember::lt(self, Scalar(0.0)), ember::gt(self, Scalar(1.0)));
  return ember::where(outside, ember::full({}, Scalar(std::nan("")), g.scalar_type(), g.device()), g);
}

// i0(x) - i1(x) / x, and 1/2 for |x| up to the dtype's epsilon (the limit at
// 0; the quotient loses it for subnormal x), as PyTorch, which has this
// gradient for float and double only.
Tensor i1_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  const ScalarType t = self.scalar_type();
  if (t != ScalarType::Float && t != ScalarType::Double) {
    throw NotImplementedError(str_cat("\"i1_backward\" not implemented for '", dtype_message_name(t), "'"));
  }
  const double eps =
      t == ScalarType::Float ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const Tensor not_tiny = ember::gt(self.abs(), Scalar(eps));
  const Tensor safe = ember::where(not_tiny, self, ember::full({}, Scalar(eps), t, self.device()));
  const Tensor d = ember::i0(safe) - result * safe.reciprocal();
  return grad * ember::where(not_tiny, d, ember::full({}, Scalar(0.5), t, self.device()));
}

// As i1_backward, with the exponentially scaled functions.
Tensor i1e_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  const ScalarType t = self.scalar_type();
  if (t != ScalarType::Float && t != ScalarType::Double) {
    throw NotImplementedError(str_cat("\"i1e_backward\" not implemented for '", dtype_message_name(t), "'"));
  }
  const double eps =
      t == ScalarType::Float ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const Tensor not_tiny = ember::gt(self.abs(), Scalar(eps));
  const Tensor safe = ember::where(not_tiny, self, ember::full({}, Scalar(eps), t, self.device()));
  const Tensor d = ember::special_i0e(safe) - result * (safe.sgn() + safe.reciprocal());
  return grad * ember::where(not_tiny, d, ember::full({}, Scalar(0.5), t, self.device()));
}

Tensor zeta_scalar_self_backward(const Tensor& grad, const Scalar& self, const Tensor& other) {
  const double s = self.to_double();
  return grad * (ember::special_zeta(Scalar(s + 1.0), other) * Scalar(-s));
}

Tensor copysign_tensor_self_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  const Tensor ratio = result.div(self);
  return grad * ember::where(ember::eq(self, Scalar(0.0)), zero_like_scalar(ratio), ratio);
}

Tensor xlogy_self_backward(const Tensor& grad, const Tensor& self, const Tensor& other) {
  const Tensor g = ember::xlogy(grad, other);
  const Tensor zero = ember::logical_and(ember::eq(self, Scalar(0.0)), ember::le(other, Scalar(0.0)));
  return ember::where(zero, zero_like_scalar(g), g);
}

Tensor xlogy_scalar_other_backward(const Tensor& grad, const Tensor& self, const Scalar& other) {
  const Tensor g = ember::xlogy(grad, other);
  if (other.to_double() > 0.0) return g;
  return ember::where(ember::eq(self, Scalar(0.0)), zero_like_scalar(g), g);
}

Tensor xlog1py_self_backward(const Tensor& grad, const Tensor& self, const Tensor& other) {
  const Tensor g = ember::special_xlog1py(grad, other);
  const Tensor zero = ember::logical_and(ember::eq(self, Scalar(0.0)), ember::le(other, Scalar(-1.0)));
  return ember::where(zero, zero_like_scalar(g), g);
}

Tensor xlog1py_scalar_other_backward(const Tensor& grad, const Tensor& self, const Scalar& other) {
  const Tensor g = ember::special_xlog1py(grad, other);
  if (other.to_double() > -1.0) return g;
  return ember::where(ember::eq(self, Scalar(0.0)), zero_like_scalar(g), g);
}

// d/dx sum_{j<p} lgamma(x - j/2) = sum_{j<p} digamma(x - j/2), summed as
// the forward's terms (largest offset first, in float for 16-bit types).
Tensor mvlgamma_backward(const Tensor& grad, const Tensor& self, int64_t p) {
  const ScalarType t = self.scalar_type();
  const ScalarType acc = (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
  auto term = [&](int64_t j) { return ember::digamma(self - Scalar(0.5 * static_cast<double>(j))).to(acc); };
  Tensor slope = term(p - 1);
  for (int64_t j = p - 2; j >= 0; --j) slope = slope + term(j);
  return grad * slope.to(t);
}

}  // namespace ember::autograd::generated
