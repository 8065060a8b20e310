#include "ember/autograd/FunctionsSpecial.h"

#include <cmath>
#include <vector>

#include "ember/ops/Ops.h"

namespace ember::autograd::generated {

namespace {
constexpr double kPi = 3.14159265358979323846;
Tensor zero_like_scalar(const Tensor& t) { return ember::zeros({}, t.scalar_type(), t.device()); }
}  // namespace

Tensor sinc_backward(const Tensor& grad, const Tensor& self) {
  const Tensor self_pi = self * Scalar(kPi);
  const Tensor self_squared_pi = self * self * Scalar(kPi);
  const Tensor out = (grad * (self_pi * self_pi.cos() - self_pi.sin())).div(self_squared_pi);
  return ember::where(ember::eq(self_squared_pi, Scalar(0.0)), zero_like_scalar(out), out);
}

Tensor logit_backward(const Tensor& grad, const Tensor& self, std::optional<double> eps) {
  const Tensor g = grad.div(self * (-self + Scalar(1.0)));
  if (eps) {
    const double lo = *eps, hi = 1.0 - *eps;
    const Tensor outside = ember::logical_or(ember::lt(self, Scalar(lo)), ember::gt(self, Scalar(hi)));
    return ember::where(outside, zero_like_scalar(g), g);
  }
  const Tensor outside = ember::logical_or(ember::lt(self, Scalar(0.0)), ember::gt(self, Scalar(1.0)));
  return ember::where(outside, ember::full({}, Scalar(std::nan("")), g.scalar_type(), g.device()), g);
}

Tensor i1_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  const Tensor d = ember::i0(self) - result.div(self);
  const Tensor half = ember::full({}, Scalar(0.5), d.scalar_type(), d.device());
  return grad * ember::where(ember::eq(self, Scalar(0.0)), half, d);
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

Tensor mvlgamma_backward(const Tensor& grad, const Tensor& self, int64_t p) {
  Tensor args = ember::arange(Scalar(-static_cast<double>(p) * 0.5 + 0.5), Scalar(0.5), Scalar(0.5), self.scalar_type(),
                              self.device());
  args = args.add(self.unsqueeze(-1));
  return grad * ember::digamma(args).sum(std::vector<int64_t>{-1});
}

}  // namespace ember::autograd::generated
