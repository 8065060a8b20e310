// Loss functions built from other operators (device-generic).
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LossChecks.h"

namespace ember::native {

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  EMBER_CHECK(reduction >= 0 && reduction <= 2, reduction, " is not a valid value for reduction");
  check_float_loss("mse_cpu", self, target);
  Tensor diff = self - target;
  Tensor sq = diff * diff;
  if (reduction == 0) return sq;
  // PyTorch's reductions: mean() sums 16-bit floats in float (no overflow).
  return reduction == 2 ? sq.sum() : sq.mean();
}

}  // namespace ember::native
