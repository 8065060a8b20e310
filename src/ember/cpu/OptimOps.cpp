// Element loops of the optimisers' update arithmetic (see ops.yaml, _fused_addcmul_).
#include <cmath>

#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

template <typename T, typename Acc>
void fused_addcmul_loop(T* self, const T* a, const T* b, int64_t n, Acc value) {
  for (int64_t i = 0; i < n; ++i) {
    const Acc scaled = value * static_cast<Acc>(a[i]);
    self[i] = static_cast<T>(std::fma(scaled, static_cast<Acc>(b[i]), static_cast<Acc>(self[i])));
  }
}

}  // namespace

Tensor& fused_addcmul_cpu_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, double value) {
  EMBER_CHECK(self.sizes().vec() == tensor1.sizes().vec() && self.sizes().vec() == tensor2.sizes().vec(),
              "_fused_addcmul_: tensors must have the same shape");
  if (self.is_meta() || tensor1.is_meta() || tensor2.is_meta()) {
    // Note [Meta tensors]: a meta self has no values to update.
    if (!self.is_meta()) throw NotImplementedError("Cannot inplace into non-meta tensor with meta tensor argument");
    for (const Tensor* t : {&tensor1, &tensor2}) {
      EMBER_CHECK(t->is_meta(), "Tensor on device ", t->device().str(), " is not on the expected device meta!");
    }
    return self;
  }
  Tensor a = tensor1.to(self.dtype()).contiguous(), b = tensor2.to(self.dtype()).contiguous();
  Tensor dst = self.is_contiguous() ? self : self.contiguous();
  const int64_t n = dst.numel();
  switch (self.dtype()) {
    case ScalarType::Float:
      fused_addcmul_loop<float, float>(static_cast<float*>(dst.data_ptr()), static_cast<const float*>(a.data_ptr()),
                                       static_cast<const float*>(b.data_ptr()), n, static_cast<float>(value));
      break;
    case ScalarType::Double:
      fused_addcmul_loop<double, double>(static_cast<double*>(dst.data_ptr()), static_cast<const double*>(a.data_ptr()),
                                         static_cast<const double*>(b.data_ptr()), n, value);
      break;
    case ScalarType::Half:
      fused_addcmul_loop<Half, float>(static_cast<Half*>(dst.data_ptr()), static_cast<const Half*>(a.data_ptr()),
                                      static_cast<const Half*>(b.data_ptr()), n, static_cast<float>(value));
      break;
    case ScalarType::BFloat16:
      fused_addcmul_loop<BFloat16, float>(static_cast<BFloat16*>(dst.data_ptr()),
                                          static_cast<const BFloat16*>(a.data_ptr()),
                                          static_cast<const BFloat16*>(b.data_ptr()), n, static_cast<float>(value));
      break;
    default:
      throw NotImplementedError(
          str_cat("\"_fused_addcmul_\" not implemented for '", dtype_message_name(self.dtype()), "'"));
  }
  if (!dst.is_same(self)) self.copy_(dst);
  return self;
}

}  // namespace ember::native
