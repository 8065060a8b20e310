// Activations of torch.nn.functional written by hand: in-place forms,
// hardtanh's checks, selu/celu through elu, glu. The others are generated from
// ops.yaml (`pointwise:`), their loops in cpu/kernels/ActivationKernel.cpp.
#include <cmath>
#include <limits>

#include "ember/cpu/ActivationStubs.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(BinaryCrossEntropyFn, binary_cross_entropy_stub);
}  // namespace ember::cpu

namespace ember::native {

Tensor& leaky_relu_cpu_(Tensor& self, const Scalar& negative_slope) {
  return leaky_relu_out(self, negative_slope, self);
}

Tensor& elu_cpu_(Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return elu_out(self, alpha, scale, input_scale, self);
}

Tensor& threshold_cpu_(Tensor& self, const Scalar& threshold, const Scalar& value) {
  return threshold_out(self, threshold, value, self);
}

// Integer bounds go through int64_t first (then the element type).
static void check_fits_int64(const Scalar& bound) {
  if (bound.is_integral() && !bound.is_big_unsigned()) return;  // 2**63-1 is no double
  const double v = bound.to_double();
  EMBER_CHECK(v >= -9223372036854775808.0 && v < 9223372036854775808.0,
              "value cannot be converted to type int64_t without overflow");
}

Tensor& hardtanh_out(const Tensor& self, const Scalar& min_val, const Scalar& max_val, Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "Bool inputs not supported for hardtanh");
  if (self.is_complex()) throw NotImplementedError("clamp is not supported for complex types");  // PyTorch's clamp
  if (self.dtype() == ScalarType::Byte) {
    check_fits_int64(min_val);
    check_fits_int64(max_val);
    EMBER_CHECK(min_val.to_double() >= 0, "cannot do hardtanh on an unsigned type with negative limits");
  }
  auto it = TensorIterator::unary_op(out, self);
  check_pointwise_dtype(it, kIntegralDtypes | kFloatingDtypes,
                        pointwise_error_name(it, "hardtanh_cpu", "hardtanh_cuda"));
  // The bounds convert to the element type (integers through int64_t).
  const bool integral = is_integral_type(it.common_dtype(), /*include_bool=*/false);
  for (const Scalar* bound : {&min_val, &max_val}) {
    if (integral && !it.is_meta()) check_fits_int64(*bound);
    check_pointwise_scalar(it, *bound, /*opmath=*/false);
  }
  if (integral && !it.is_meta()) {
    // Integer bounds as int64_t (truncated), exact up to 2**63-1: clamp's loop.
    auto as_int = [](const Scalar& b) { return b.is_integral() ? b : Scalar(static_cast<int64_t>(b.to_double())); };
    ember::clamp_out(out, self, std::optional<Scalar>(as_int(min_val)), std::optional<Scalar>(as_int(max_val)));
    return out;
  }
  run_pointwise(hardtanh_stub, self.device().type, "hardtanh", it, min_val, max_val);
  // A NaN bound gives NaN everywhere, as PyTorch's clamp does.
  if (is_floating_type(out.dtype()) && (std::isnan(min_val.to_double()) || std::isnan(max_val.to_double()))) {
    out.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
  }
  return out;
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

// celu's alpha as a double (PyTorch converts it first: a complex alpha with an
// imaginary part overflows), never 0.
static double celu_alpha(const Scalar& alpha) {
  EMBER_CHECK(!alpha.is_complex() || alpha.to_complex().imag() == 0,
              "value cannot be converted to type double without overflow");
  EMBER_CHECK(alpha.to_double() != 0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  return alpha.to_double();
}

Tensor celu(const Tensor& self, const Scalar& alpha) {
  const double a = celu_alpha(alpha);
  return ember::elu(self, alpha, Scalar(1.0), Scalar(1.0 / a));
}
Tensor& celu_(Tensor& self, const Scalar& alpha) {
  const double a = celu_alpha(alpha);
  return elu_cpu_(self, alpha, Scalar(1.0), Scalar(1.0 / a));
}

// glu: the first half of dim gated by the sigmoid of the second half.
Tensor glu(const Tensor& self, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.sizes()[d];
  EMBER_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  if (!is_floating_type(self.dtype()) && !self.is_meta()) math::not_implemented_for("glu_cpu", self.dtype());
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
  // Composed of differentiable operators: glu's gradient has a derivative.
  return ember::cat({grad_first, grad_second}, d);
}

}  // namespace ember::native
