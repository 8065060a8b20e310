// CPU fill and copy.
#include "ember/cpu/Stubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

Tensor& fill_(Tensor& self, const Scalar& value) {
  auto it = TensorIterator::nullary_op(self);
  cpu::fill_stub(it, value);
  return self;
}

Tensor& zero_(Tensor& self) { return fill_(self, Scalar(int64_t(0))); }

Tensor& copy_(Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  EMBER_CHECK(self.device().is_cpu() && src.device().is_cpu(), "copy_ between devices needs the CUDA backend");
  if (self.is_same(src)) return self;
  auto it = TensorIterator::copy_op(self, src);
  cpu::copy_stub(it);
  return self;
}

}  // namespace ember::native
