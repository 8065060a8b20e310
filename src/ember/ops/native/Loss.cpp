// Loss functions built from other operators (device-generic).
#include "ember/cpu/LossStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/native/LossChecks.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  EMBER_CHECK(reduction >= 0 && reduction <= 2, reduction, " is not a valid value for reduction");
  check_float_loss("mse_cpu", self, target);
  // One pass for the common case: contiguous float/double operands of one
  // shape, reduced (the sum equals the unfused one; see cpu/LossStubs.h).
  const ScalarType t = self.scalar_type();
  if (reduction != 0 && self.is_cpu() && target.is_cpu() && (t == ScalarType::Float || t == ScalarType::Double) &&
      target.scalar_type() == t && self.sizes().equals(target.sizes()) && self.is_contiguous() &&
      target.is_contiguous()) {
    const int64_t n = self.numel();
    const double total = cpu::squared_diff_sum_stub(self.data_ptr(), target.data_ptr(), n, t);
    Tensor r = ember::empty({}, t);
    if (t == ScalarType::Float) {
      const float v = static_cast<float>(total);
      *static_cast<float*>(r.data_ptr()) = reduction == 2 ? v : v / static_cast<float>(static_cast<double>(n));
    } else {
      *static_cast<double*>(r.data_ptr()) = reduction == 2 ? total : total / static_cast<double>(n);
    }
    return r;
  }
  Tensor diff = self - target;
  Tensor sq = diff * diff;
  if (reduction == 0) return sq;
  Tensor total = sq.sum();
  if (reduction == 2) return total;
  // mean = sum / numel, divided in the result dtype (0/0 gives nan, as PyTorch).
  Tensor r = ember::empty_like(total);
  double n = static_cast<double>(sq.numel());
  EMBER_DISPATCH_ALL_TYPES(total.dtype(), "mse_loss", [&] {
    using acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    *static_cast<scalar_t*>(r.data_ptr()) =
        static_cast<scalar_t>(static_cast<acc>(*static_cast<const scalar_t*>(total.data_ptr())) / static_cast<acc>(n));
  });
  return r;
}

}  // namespace ember::native
