// CPU loss kernels: the fused mse_loss (other cases and devices take the
// composite native::mse_loss), binary_cross_entropy, and the dispatch tables
// of cpu/LossStubs.h.
#include "ember/cpu/ActivationStubs.h"
#include "ember/cpu/LossStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LossChecks.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(SquaredDiffSumFn, squared_diff_sum_stub);
}  // namespace ember::cpu

namespace ember::native {

// One pass for contiguous float/double operands of one shape, reduced; the
// sum equals the unfused one (see cpu/LossStubs.h).
Tensor mse_loss_cpu(const Tensor& self, const Tensor& target, int64_t reduction) {
  const ScalarType t = self.scalar_type();
  if (reduction <= 0 || reduction > 2 || (t != ScalarType::Float && t != ScalarType::Double) ||
      target.scalar_type() != t || !self.sizes().equals(target.sizes()) || !self.is_contiguous() ||
      !target.is_contiguous()) {
    return native::mse_loss(self, target, reduction);
  }
  const int64_t n = self.numel();
  const double total = cpu::squared_diff_sum_stub.get()(self.data_ptr(), target.data_ptr(), n, t);
  Tensor r = ember::empty({}, t);
  if (t == ScalarType::Float) {
    const float v = static_cast<float>(total);
    *static_cast<float*>(r.data_ptr()) = reduction == 2 ? v : v / static_cast<float>(static_cast<double>(n));
  } else {
    *static_cast<double*>(r.data_ptr()) = reduction == 2 ? total : total / static_cast<double>(n);
  }
  return r;
}

// The elementwise loss is the activation kernel's (a fused loop for one
// floating dtype and shape); other inputs take the formula.
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                            int64_t reduction) {
  // PyTorch's iterator sees the target's dtype first, then its floating
  // dispatch refuses other dtypes before the values are read.
  EMBER_CHECK(target.scalar_type() == self.scalar_type(), "Found dtype ", dtype_message_name(target.scalar_type()),
              " but expected ", dtype_message_name(self.scalar_type()));
  if (!is_floating_type(self.dtype())) {
    throw NotImplementedError(
        str_cat("\"binary_cross_entropy\" not implemented for '", dtype_message_name(self.scalar_type()), "'"));
  }
  // A meta input has no values to check.
  if (!self.is_meta()) {
    // The flag is read on the host (a CUDA input's is copied back first).
    const Tensor in_range =
        self.ge(Scalar(int64_t(0))).logical_and(self.le(Scalar(int64_t(1)))).all().to(Device(DeviceType::CPU));
    EMBER_CHECK(in_range.item<bool>(), "all elements of input should be between 0 and 1");
  }
  Tensor loss;
  if (is_floating_type(self.dtype()) && target.dtype() == self.dtype() && target.sizes().equals(self.sizes())) {
    auto it = TensorIterator::binary_op(loss, target, self);
    cpu::binary_cross_entropy_stub(it);
    it.finish();
  } else {
    loss = (target - Scalar(int64_t(1))) * ember::clamp_min(ember::log1p(self.neg()), Scalar(-100.0)) -
           target * ember::clamp_min(ember::log(self), Scalar(-100.0));
  }
  if (weight.has_value() && weight->defined()) loss = loss * *weight;
  return apply_reduction(loss, reduction);
}

}  // namespace ember::native
