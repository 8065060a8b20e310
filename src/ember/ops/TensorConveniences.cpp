// The hand-written methods of ember::Tensor (ops/Tensor.h) that PyTorch's C++
// API has besides one method per operator.
#include "ember/ops/Ops.h"

namespace ember {

namespace {
// Options with self's dtype and device where they name none (new_* factories).
TensorOptions merged_options(const Tensor& self, const TensorOptions& o) {
  TensorOptions merged = o;
  if (!o.has_dtype()) merged = merged.dtype(self.dtype());
  if (!o.has_device()) merged = merged.device(self.device());
  return merged;
}
}  // namespace

Scalar Tensor::item() const {
  EMBER_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  const ScalarType t = dtype();
  if (t == ScalarType::Bool) return Scalar(item<bool>());
  if (is_integral_type(t, /*include_bool=*/false)) return Scalar(item<int64_t>());
  if (is_complex_type(t)) return Scalar(item<std::complex<double>>());
  return Scalar(item<double>());
}

Tensor Tensor::data() const { return detach(); }

Tensor Tensor::toType(ScalarType t) const { return to(t); }

Tensor Tensor::to(const TensorOptions& options, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) const {
  return to(options.dtype_opt(), options.device_opt(), non_blocking, copy,
            memory_format ? memory_format : options.memory_format_opt());
}

Tensor Tensor::new_empty(IntArrayRef size, const TensorOptions& options) const {
  return ember::empty(size, merged_options(*this, options));
}
Tensor Tensor::new_zeros(IntArrayRef size, const TensorOptions& options) const {
  return ember::zeros(size, merged_options(*this, options));
}
Tensor Tensor::new_ones(IntArrayRef size, const TensorOptions& options) const {
  return ember::ones(size, merged_options(*this, options));
}
Tensor Tensor::new_full(IntArrayRef size, const Scalar& fill_value, const TensorOptions& options) const {
  return ember::full(size, fill_value, merged_options(*this, options));
}

bool Tensor::equal(const Tensor& other) const {
  if (!sizes().equals(other.sizes())) return false;
  return ember::eq(*this, other).all().item<bool>();
}

bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return isclose(other, rtol, atol, equal_nan).all().item<bool>();
}

Tensor Tensor::norm(const Scalar& p) const { return ember::linalg_vector_norm(*this, p); }

Tensor Tensor::norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) const {
  return ember::linalg_vector_norm(*this, p.value_or(Scalar(2)), dim, keepdim);
}

}  // namespace ember
