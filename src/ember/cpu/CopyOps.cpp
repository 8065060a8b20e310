// CPU fill and copy (also the meta kernels: their iterators skip the loops).
#include <atomic>

#include "ember/cpu/Stubs.h"
#include "ember/ops/MathBits.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/FactoryUtils.h"
#include "ember/ops/native/LimitedTypes.h"

namespace ember::native {

Tensor& fill_(Tensor& self, const Scalar& value) {
  if (is_limited_type(self.dtype())) {
    limited::fill(self, value);
    return self;
  }
  check_fill_value(self.dtype(), value);  // PyTorch's checked conversion: int8.fill_(300) raises
  auto it = TensorIterator::nullary_op(self);
  cpu::fill_stub(it, value);
  return self;
}

Tensor& zero_(Tensor& self) { return fill_(self, Scalar(int64_t(0))); }

Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking) {
  if (src.is_meta() && !self.is_meta()) throw NotImplementedError("Cannot copy out of meta tensor; no data!");
  if ((self.has_math_bits() || src.has_math_bits()) && !self.is_same(src)) {
    return dispatch::copy_with_math_bits(self, src, non_blocking);
  }
  if (!self.is_meta() && src.is_cuda()) {
    // Device to host: the CUDA backend's transfer (Note [Cross-device copies]).
    auto* cuda_copy = dispatch::copy__kernels[static_cast<int>(DeviceType::CUDA)];
    EMBER_CHECK(cuda_copy != nullptr, "copy_ between devices needs the CUDA backend");
    return cuda_copy(self, src, non_blocking);
  }
  const bool cpu_or_meta = (self.is_cpu() || self.is_meta()) && (src.is_cpu() || src.is_meta());
  // Within one CUDA device the CUDA backend's copy kernel runs (copy_stub.cuda).
  const bool same_cuda = self.is_cuda() && src.device() == self.device();
  EMBER_CHECK(cpu_or_meta || same_cuda, "copy_ between devices needs the CUDA backend");
  if (self.is_same(src)) return self;
  // A bool takes a complex number's truth value: nothing is discarded.
  if (is_complex_type_any_tier(src.dtype()) && !is_complex_type_any_tier(self.dtype()) &&
      self.dtype() != ScalarType::Bool) {
    static std::atomic<bool> warned{false};  // once per process, as PyTorch warns
    if (!warned.exchange(true)) warn("Casting complex values to real discards the imaginary part");
  }
  const ScalarType dst_type = self.dtype(), src_type = src.dtype();
  if (dst_type != src_type && (is_limited_type(dst_type) || is_limited_type(src_type))) {
    limited::convert_copy(self, src);
    return self;
  }
  // Sub-byte integers have no copy kernel in PyTorch; the other limited dtypes copy their bytes.
  if (is_sub_byte_int_type(dst_type)) {
    throw NotImplementedError(str_cat("\"copy_kernel\" not implemented for '", dtype_message_name(dst_type), "'"));
  }
  auto it = TensorIterator::copy_op(self, src);
  cpu::copy_stub(it);
  return self;
}

}  // namespace ember::native
