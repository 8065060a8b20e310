#pragma once
// Derivative helpers of the special functions in ops.yaml (included by
// FunctionsManual.h). Each builds the gradient from differentiable ops, so
// double backward works.

#include <optional>

#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

// d sinc(x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0.
Tensor sinc_backward(const Tensor& grad, const Tensor& self);
// d logit(x) = 1 / (x (1 - x)); 0 outside [eps, 1 - eps] with eps, NaN outside [0, 1] without.
Tensor logit_backward(const Tensor& grad, const Tensor& self, std::optional<double> eps);
// d i1(x) = i0(x) - i1(x) / x, 1/2 at x = 0.
Tensor i1_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
// d i1e(x) = i0e(x) - sgn(x) i1e(x) - i1e(x) / x, 1/2 at x = 0.
Tensor i1e_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
// d zeta(s, q) / dq = -s zeta(s + 1, q), for a number s.
Tensor zeta_scalar_self_backward(const Tensor& grad, const Scalar& self, const Tensor& other);
// d copysign(x, y) / dx = copysign(x, y) / x, 0 at x = 0.
Tensor copysign_tensor_self_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
// d xlogy(x, y) / dx = log(y), taken as 0 where x == 0 and y <= 0 (xlogy(0, y) is 0 there).
Tensor xlogy_self_backward(const Tensor& grad, const Tensor& self, const Tensor& other);
Tensor xlogy_scalar_other_backward(const Tensor& grad, const Tensor& self, const Scalar& other);
// d xlog1py(x, y) / dx = log1p(y), taken as 0 where x == 0 and y <= -1.
Tensor xlog1py_self_backward(const Tensor& grad, const Tensor& self, const Tensor& other);
Tensor xlog1py_scalar_other_backward(const Tensor& grad, const Tensor& self, const Scalar& other);

// d mvlgamma(x, p) = sum_{j<p} digamma(x - j/2).
Tensor mvlgamma_backward(const Tensor& grad, const Tensor& self, int64_t p);

}  // namespace ember::autograd::generated
