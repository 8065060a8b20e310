// Loss functions built from other operators (device-generic).
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  EMBER_CHECK(reduction >= 0 && reduction <= 2, reduction, " is not a valid value for reduction");
  const ScalarType common = promote_types(self.dtype(), target.dtype());
  if (!is_floating_type(common)) {
    const std::string_view name = legacy_type_name(common);
    throw NotImplementedError(str_cat("\"mse_cpu\" not implemented for '", name.substr(0, name.size() - 6), "'"));
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
