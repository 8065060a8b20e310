// Unary math ops whose native functions are written by hand (extra checks or
// parameters); the others are generated from ops.yaml (`pointwise:`).
#include <cmath>
#include <limits>

#include "ember/cpu/MathStubs.h"
#include "ember/cpu/OpMessages.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::native {

Tensor& relu_out(const Tensor& self, Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "Boolean inputs not supported for relu");
  auto it = TensorIterator::unary_op(out, self);
  check_pointwise_dtype(it, kIntegralDtypes | kFloatingDtypes,
                        pointwise_error_name(it, "clamp_min_cpu", "clamp_min_cuda"));
  run_pointwise(relu_stub, self.device().type, "relu", it);
  return out;
}

Tensor& gelu_out(const Tensor& self, const std::string& approximate, Tensor& out) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  auto it = TensorIterator::unary_op(out, self);
  check_pointwise_dtype(it, kFloatingDtypes, "GeluKernelImpl");
  run_pointwise(gelu_stub, self.device().type, "gelu", it, approximate);
  return out;
}

Tensor& gelu_backward_out(const Tensor& grad_output, const Tensor& self, const std::string& approximate, Tensor& out) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  auto it = TensorIterator::binary_op(out, grad_output, self);
  if (!is_floating_type(it.common_dtype())) math::not_implemented_for("GeluBackwardKernelImpl", it.common_dtype());
  cpu::gelu_backward_stub(it, approximate == "tanh");
  it.finish();
  return out;
}

Tensor& round_decimals_out(const Tensor& self, int64_t decimals, Tensor& out) {
  auto it = TensorIterator::unary_op(out, self);
  if (decimals == 0) {
    check_pointwise_dtype(it, kFloatingDtypes, pointwise_error_name(it, "round_vml_cpu", "round_cuda"));
    run_pointwise(round_stub, self.device().type, "round.decimals", it);
    return out;
  }
  if (!is_floating_type(it.common_dtype()))
    math::not_implemented_for(pointwise_error_name(it, "round_cpu", "round_cuda"), it.common_dtype());
  cpu::round_decimals_stub(it, decimals);
  it.finish();
  return out;
}

Tensor square(const Tensor& self) { return ember::pow(self, Scalar(int64_t(2))); }
Tensor& square_out(const Tensor& self, Tensor& out) {
  ember::pow_out(out, self, Scalar(int64_t(2)));
  return out;
}
Tensor& square_(Tensor& self) {
  ember::pow_(self, Scalar(int64_t(2)));
  return self;
}

}  // namespace ember::native
