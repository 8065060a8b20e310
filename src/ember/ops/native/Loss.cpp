// Loss functions built from other operators (device-generic).
#include "ember/ops/Ops.h"
#include "ember/ops/native/LossChecks.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  EMBER_CHECK(reduction >= 0 && reduction <= 2, reduction, " is not a valid value for reduction");
  check_float_loss("mse_cpu", self, target);
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
