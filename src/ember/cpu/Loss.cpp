// CPU loss kernels: the fused mse_loss (other cases and devices take the
// composite native::mse_loss), and the dispatch tables of cpu/LossStubs.h.
#include "ember/cpu/LossStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

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

}  // namespace ember::native
