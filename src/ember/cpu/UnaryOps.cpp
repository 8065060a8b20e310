// Unary math ops whose native functions are written by hand (extra checks or
// parameters); the others are generated from ops.yaml (`pointwise:`).
#include <cmath>
#include <limits>

#include "ember/cpu/MathStubs.h"
#include "ember/cpu/OneDnnEltwise.h"
#include "ember/cpu/OneDnnMatmul.h"
#include "ember/cpu/OpMessages.h"
#include "ember/ops/CudnnSettings.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::native {

Tensor& relu_out(const Tensor& self, Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "Boolean inputs not supported for relu");
  if (self.is_complex()) throw NotImplementedError("clamp is not supported for complex types");  // PyTorch's clamp_min
  auto it = TensorIterator::unary_op(out, self);
  check_pointwise_dtype(it, kIntegralDtypes | kFloatingDtypes,
                        pointwise_error_name(it, "clamp_min_cpu", "clamp_min_cuda"));
  run_pointwise(relu_stub, self.device().type, "relu", it);
  return out;
}

namespace {
// PyTorch's use_mkldnn(self) for GELU's erf form (Note [GELU through oneDNN]).
bool gelu_takes_onednn(const Tensor& self, const std::string& approximate) {
  if (approximate != "none" || self.device().type != DeviceType::CPU || !user_enabled_onednn()) return false;
  if (self.numel() <= 1 || !self.is_contiguous()) return false;
  const ScalarType t = self.dtype();
  return t == ScalarType::Float || ((t == ScalarType::BFloat16 || t == ScalarType::Half) && onednn_takes_reduced(t));
}

// The result through oneDNN into out (through a contiguous buffer where out
// is strided otherwise); false where oneDNN did not run.
template <typename Run>
bool into_contiguous(const Tensor& like, Tensor& out, const Run& run) {
  if (out.is_contiguous()) return run(out.data_ptr());
  Tensor buffer = empty_like(like);
  if (!run(buffer.data_ptr())) return false;
  out.copy_(buffer);
  return true;
}
}  // namespace

Tensor& gelu_out(const Tensor& self, const std::string& approximate, Tensor& out) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  auto it = TensorIterator::unary_op(out, self);
  check_pointwise_dtype(it, kFloatingDtypes, "GeluKernelImpl");
  if (!it.is_meta() && gelu_takes_onednn(self, approximate) && out.dtype() == self.dtype() &&
      into_contiguous(self, out,
                      [&](void* y) { return onednn_gelu_erf(self.dtype(), self.numel(), self.data_ptr(), y); }))
    return out;
  run_pointwise(gelu_stub, self.device().type, "gelu", it, approximate);
  return out;
}

Tensor& gelu_backward_out(const Tensor& grad_output, const Tensor& self, const std::string& approximate, Tensor& out) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  auto it = TensorIterator::binary_op(out, grad_output, self);
  if (!is_floating_type(it.common_dtype())) math::not_implemented_for("GeluBackwardKernelImpl", it.common_dtype());
  if (!it.is_meta() && gelu_takes_onednn(self, approximate) && grad_output.dtype() == self.dtype() &&
      out.dtype() == self.dtype() && grad_output.sizes().vec() == self.sizes().vec()) {
    Tensor dy = grad_output.contiguous();
    if (into_contiguous(self, out, [&](void* dx) {
          return onednn_gelu_erf_backward(self.dtype(), self.numel(), self.data_ptr(), dy.data_ptr(), dx);
        }))
      return out;
  }
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
Tensor positive(const Tensor& self) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "The `+` operator, on a bool tensor is not supported.");
  return self;
}
Tensor& square_out(const Tensor& self, Tensor& out) {
  ember::pow_out(out, self, Scalar(int64_t(2)));
  return out;
}
Tensor& square_(Tensor& self) {
  ember::pow_(self, Scalar(int64_t(2)));
  return self;
}

}  // namespace ember::native
