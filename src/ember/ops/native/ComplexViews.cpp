// Views between complex and real tensors (view_as_real, view_as_complex,
// real, imag) and the lazy conjugate and negative views (Note [Conjugate and
// negative bits], docs/decisions/0029-conj-bit.md).
#include <atomic>

#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {
Tensor view_with_dtype(const Tensor& self, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  TensorImpl* base = self.unsafeGetTensorImpl();
  auto impl = make_intrusive<TensorImpl>(base->storage(), dtype, sizes, strides, offset);
  impl->set_version_counter(base->shared_version_counter());
  impl->set_math_bits(base->math_bits());  // a view of a conjugate is conjugate
  return Tensor(std::move(impl));
}

// An alias of self with `bit` flipped.
Tensor flipped_bit_alias(const Tensor& self, uint8_t bit) {
  Tensor r = view_with_dtype(self, self.dtype(), self.sizes(), self.strides(), self.storage_offset());
  TensorImpl* impl = r.unsafeGetTensorImpl();
  impl->set_math_bits(impl->math_bits() ^ bit);
  return r;
}
}  // namespace

// complex32 (a limited-tier dtype) has views too: its parts are float16.
Tensor view_as_real(const Tensor& self) {
  EMBER_CHECK(!self.is_conj(),
              "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you "
              "can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT "
              "alias the original.");
  EMBER_CHECK(is_complex_type_any_tier(self.dtype()), "view_as_real is only supported for complex tensors");
  DimVector sizes(self.sizes()), strides(self.strides());
  for (auto& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return view_with_dtype(self, to_real_type(self.dtype()), sizes, strides, self.storage_offset() * 2);
}

Tensor view_as_complex(const Tensor& self) {
  const ScalarType t = self.dtype();
  EMBER_CHECK(t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half,
              "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar "
              "type: ",
              dtype_message_name(t));
  EMBER_CHECK(self.dim() != 0, "Input tensor must have one or more dimensions");
  EMBER_CHECK(self.sizes().back() == 2, "Tensor must have a last dimension of size 2");
  EMBER_CHECK(self.strides().back() == 1, "Tensor must have a last dimension with stride 1");
  const size_t n = static_cast<size_t>(self.dim() - 1);
  DimVector sizes(IntArrayRef(self.sizes().data(), n)), strides(IntArrayRef(self.strides().data(), n));
  for (auto& s : strides) {
    EMBER_CHECK(s % 2 == 0, "Tensor must have a stride divisible by 2 for all but last dimension");
    s /= 2;
  }
  EMBER_CHECK(self.storage_offset() % 2 == 0, "Tensor must have a storage_offset divisible by 2");
  const ScalarType complex = t == ScalarType::Half ? ScalarType::ComplexHalf : to_complex_type(t);
  return view_with_dtype(self, complex, sizes, strides, self.storage_offset() / 2);
}

// The real part of a conjugate is the stored one; its imaginary part is the
// stored one negated (a negative view).
Tensor real(const Tensor& self) {
  if (!is_complex_type_any_tier(self.dtype())) return self;
  if (self.is_conj()) return ember::view_as_real(ember::_conj(self)).select(-1, 0);
  return ember::view_as_real(self).select(-1, 0);
}

Tensor imag(const Tensor& self) {
  EMBER_CHECK(is_complex_type_any_tier(self.dtype()), "imag is not implemented for tensors with non-complex dtypes.");
  if (self.is_conj()) return ember::_neg_view(ember::view_as_real(ember::_conj(self)).select(-1, 1));
  return ember::view_as_real(self).select(-1, 1);
}

Tensor conj(const Tensor& self) {
  if (!is_complex_type_any_tier(self.dtype())) return self;
  return ember::_conj(self);
}

Tensor adjoint(const Tensor& self) {
  const int64_t dim = self.dim();
  if (dim == 0) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().");
    return ember::conj(self);
  }
  EMBER_CHECK(dim >= 2, "tensor.adjoint() is only supported on matrices or batches of matrices. Got ", dim,
              "-D tensor.");
  return ember::conj(self.transpose(-2, -1));
}

Tensor isreal(const Tensor& self) {
  if (!is_complex_type_any_tier(self.dtype())) return ember::ones_like(self, ScalarType::Bool);
  return ember::eq(ember::imag(self), Scalar(int64_t(0)));
}

Tensor _conj(const Tensor& self) { return flipped_bit_alias(self, TensorImpl::kConjBit); }
Tensor _neg_view(const Tensor& self) { return flipped_bit_alias(self, TensorImpl::kNegBit); }

// clone() materialises every bit (copy_ reads them); a tensor without the
// bit is its own resolution.
Tensor resolve_conj(const Tensor& self) { return self.is_conj() ? ember::clone(self) : self; }
Tensor resolve_neg(const Tensor& self) { return self.is_neg() ? ember::clone(self) : self; }

}  // namespace ember::native
