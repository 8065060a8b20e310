#include "ember/core/TensorBase.h"

namespace ember {

int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, bool scalar_as_1d) {
  if (ndim <= 0) {
    EMBER_CHECK_TYPE(IndexError, scalar_as_1d, "Dimension specified as ", dim, " but tensor has no dimensions");
    ndim = 1;
  }
  int64_t lo = -ndim, hi = ndim - 1;
  EMBER_CHECK_TYPE(IndexError, dim >= lo && dim <= hi, "Dimension out of range (expected to be in range of [", lo, ", ",
                   hi, "], but got ", dim, ")");
  return dim < 0 ? dim + ndim : dim;
}

std::string shape_string(IntArrayRef s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

int64_t TensorBase::size(int64_t d) const { return impl_->size(maybe_wrap_dim(d, dim(), false)); }
int64_t TensorBase::stride(int64_t d) const { return impl_->stride(maybe_wrap_dim(d, dim(), false)); }

std::string TensorBase::type_name() const {
  std::string prefix = device().is_cpu() ? "torch." : str_cat("torch.", device_type_name(device().type), ".");
  return prefix + std::string(legacy_type_name(dtype()));
}

namespace {
HostCopyFn host_copy_fn = nullptr;
}

void set_host_copy(HostCopyFn fn) { host_copy_fn = fn; }

TensorBase host_copy(const TensorBase& t) {
  EMBER_CHECK(host_copy_fn != nullptr, "item() of a ", device_type_name(t.device().type),
              " tensor needs the operators library loaded");
  return host_copy_fn(t);
}

}  // namespace ember
