// CPU activations of torch.nn.functional (leaky_relu, elu, softplus, hardtanh,
// hardsigmoid, hardswish, mish, log_sigmoid, threshold) and their gradient.
#include "ember/cpu/ActivationStubs.h"
#include "ember/cpu/MathHelpers.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(ActivationFn, activation_stub);
EMBER_DEFINE_DISPATCH(ActivationFn, activation_backward_stub);
}  // namespace ember::cpu

namespace ember::native {

namespace {

using cpu::ActivationOp;

Tensor& activation(const Tensor& self, Tensor& out, ActivationOp op, const char* kernel, bool allow_int,
                   double a = 0, double b = 0, double c = 0) {
  auto it = TensorIterator::unary_op(out, self);
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Bool || (!allow_int && !is_floating_type(t))) math::not_implemented_for(kernel, t);
  cpu::activation_stub(it, op, a, b, c);
  it.finish();
  return out;
}

}  // namespace

Tensor& leaky_relu_out(const Tensor& self, const Scalar& negative_slope, Tensor& out) {
  return activation(self, out, ActivationOp::LeakyRelu, "leaky_relu_cpu", false, negative_slope.to_double());
}

Tensor& elu_out(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale, Tensor& out) {
  return activation(self, out, ActivationOp::Elu, "elu_cpu", false, alpha.to_double(), scale.to_double(),
                    input_scale.to_double());
}

Tensor& leaky_relu_cpu_(Tensor& self, const Scalar& negative_slope) {
  return leaky_relu_out(self, negative_slope, self);
}

Tensor& elu_cpu_(Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return elu_out(self, alpha, scale, input_scale, self);
}

Tensor& threshold_cpu_(Tensor& self, const Scalar& threshold, const Scalar& value) {
  return threshold_out(self, threshold, value, self);
}

Tensor& softplus_out(const Tensor& self, const Scalar& beta, const Scalar& threshold, Tensor& out) {
  return activation(self, out, ActivationOp::Softplus, "softplus_cpu", false, beta.to_double(), threshold.to_double());
}

Tensor& hardtanh_out(const Tensor& self, const Scalar& min_val, const Scalar& max_val, Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "Bool inputs not supported for hardtanh");
  EMBER_CHECK(self.dtype() != ScalarType::Byte || min_val.to_double() >= 0,
              "cannot do hardtanh on an unsigned type with negative limits");
  return activation(self, out, ActivationOp::Hardtanh, "hardtanh_cpu", true, min_val.to_double(), max_val.to_double());
}

Tensor& hardsigmoid_out(const Tensor& self, Tensor& out) {
  return activation(self, out, ActivationOp::Hardsigmoid, "hardsigmoid_cpu", false);
}

Tensor& hardswish_out(const Tensor& self, Tensor& out) {
  return activation(self, out, ActivationOp::Hardswish, "hardswish_cpu", false);
}

Tensor& mish_out(const Tensor& self, Tensor& out) { return activation(self, out, ActivationOp::Mish, "mish_cpu", false); }

Tensor& log_sigmoid_out(const Tensor& self, Tensor& out) {
  return activation(self, out, ActivationOp::LogSigmoid, "log_sigmoid_cpu", false);
}

Tensor& threshold_out(const Tensor& self, const Scalar& threshold, const Scalar& value, Tensor& out) {
  return activation(self, out, ActivationOp::Threshold, "threshold_cpu", true, threshold.to_double(),
                    value.to_double());
}

Tensor& erfinv_out(const Tensor& self, Tensor& out) {
  auto it = TensorIterator::unary_float_op(out, self);
  cpu::activation_stub(it, ActivationOp::Erfinv, 0, 0, 0);
  it.finish();
  return out;
}

Tensor activation_backward_cpu(const Tensor& grad_output, const Tensor& self, int64_t op, double a, double b, double c) {
  Tensor out;
  auto it = TensorIterator::binary_op(out, grad_output, self);
  if (!is_floating_type(it.common_dtype())) math::not_implemented_for("activation_backward", it.common_dtype());
  cpu::activation_backward_stub(it, static_cast<ActivationOp>(op), a, b, c);
  it.finish();
  return out;
}

Tensor threshold_backward_cpu(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  return activation_backward_cpu(grad_output, self, static_cast<int64_t>(ActivationOp::Threshold),
                                 threshold.to<double>(), 0, 0);
}

Tensor tanh_backward_cpu(const Tensor& grad_output, const Tensor& output) {
  return activation_backward_cpu(grad_output, output, static_cast<int64_t>(ActivationOp::TanhGrad), 0, 0, 0);
}

Tensor sigmoid_backward_cpu(const Tensor& grad_output, const Tensor& output) {
  return activation_backward_cpu(grad_output, output, static_cast<int64_t>(ActivationOp::SigmoidGrad), 0, 0, 0);
}

Tensor silu_backward_cpu(const Tensor& grad_output, const Tensor& self) {
  return activation_backward_cpu(grad_output, self, static_cast<int64_t>(ActivationOp::SiluGrad), 0, 0, 0);
}

// selu and celu are elu with fixed coefficients (autograd records EluBackward0).
namespace {
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
}  // namespace

Tensor selu(const Tensor& self) { return ember::elu(self, Scalar(kSeluAlpha), Scalar(kSeluScale), Scalar(1.0)); }
Tensor& selu_(Tensor& self) {
  ember::elu_(self, Scalar(kSeluAlpha), Scalar(kSeluScale), Scalar(1.0));
  return self;
}

Tensor celu(const Tensor& self, const Scalar& alpha) {
  EMBER_CHECK(alpha.to_double() != 0, "ZeroDivisionError in celu: alpha cannot be 0");
  return ember::elu(self, alpha, Scalar(1.0), Scalar(1.0 / alpha.to_double()));
}
Tensor& celu_(Tensor& self, const Scalar& alpha) {
  EMBER_CHECK(alpha.to_double() != 0, "ZeroDivisionError in celu: alpha cannot be 0");
  return elu_cpu_(self, alpha, Scalar(1.0), Scalar(1.0 / alpha.to_double()));
}

// glu: the first half of dim gated by the sigmoid of the second half.
Tensor glu(const Tensor& self, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.sizes()[d];
  EMBER_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  Tensor first = self.narrow(d, 0, n / 2), second = self.narrow(d, n / 2, n / 2);
  return first * second.sigmoid();
}

Tensor glu_backward(const Tensor& grad_output, const Tensor& self, int64_t dim) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.sizes()[d];
  Tensor first = self.narrow(d, 0, n / 2), second = self.narrow(d, n / 2, n / 2);
  Tensor s = second.sigmoid();
  Tensor grad_first = grad_output * s;
  Tensor grad_second = grad_first * first * ember::sub(wrapped_scalar(Scalar(1.0)), s);
  Tensor out = ember::empty_like(self, std::nullopt, std::nullopt);
  out.narrow(d, 0, n / 2).copy_(grad_first);
  out.narrow(d, n / 2, n / 2).copy_(grad_second);
  return out;
}

}  // namespace ember::native
