#pragma once
// A handle to a TensorImpl without the generated operator methods. Kernels and
// the core use it, so editing ops.yaml does not recompile them.

#include <string>

#include "ember/core/MemoryFormat.h"
#include "ember/core/TensorImpl.h"

namespace ember {

class EMBER_CORE_API TensorBase {
 public:
  TensorBase() = default;
  explicit TensorBase(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl() const { return impl_; }
  void reset() { impl_.reset(); }
  bool is_same(const TensorBase& o) const { return impl_ == o.impl_; }

  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  int64_t dim() const { return impl_->dim(); }
  int64_t ndimension() const { return dim(); }
  // size(d)/stride(d) accept negative d, as in PyTorch.
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  ScalarType dtype() const { return impl_->dtype(); }
  size_t element_size() const { return impl_->itemsize(); }
  Device device() const { return impl_->device(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_meta() const { return device().is_meta(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool is_non_overlapping_and_dense() const { return impl_->is_non_overlapping_and_dense(); }
  bool is_contiguous(MemoryFormat f) const {
    return f == MemoryFormat::Contiguous ? is_contiguous() : is_contiguous_as(sizes(), strides(), f);
  }
  MemoryFormat suggest_memory_format() const { return ember::suggest_memory_format(sizes(), strides()); }
  bool is_floating_point() const { return is_floating_type(dtype()); }
  bool is_complex() const { return is_complex_type(dtype()); }
  // Note [Conjugate and negative bits] (core/TensorImpl.h).
  bool is_conj() const { return impl_->is_conj(); }
  bool is_neg() const { return impl_->is_neg(); }
  bool has_math_bits() const { return impl_ && impl_->math_bits() != 0; }
  bool requires_grad() const { return impl_->requires_grad(); }

  void* data_ptr() const { return impl_->data(); }
  template <typename T>
  T* data_ptr() const;
  // Value of a one-element tensor.
  template <typename T>
  T item() const;

  // "torch.FloatTensor"-style name used in error messages.
  std::string type_name() const;

 protected:
  IntrusivePtr<TensorImpl> impl_;
};

// "[2, 3]": the shape notation of PyTorch's messages.
EMBER_CORE_API std::string shape_string(IntArrayRef s);

// The copy of a tensor of another device on the host, for item(); the ops
// layer sets it (core cannot copy between devices).
using HostCopyFn = TensorBase (*)(const TensorBase&);
EMBER_CORE_API void set_host_copy(HostCopyFn fn);
EMBER_CORE_API TensorBase host_copy(const TensorBase& t);

// Wraps a dimension index (negative counts from the end); throws IndexError
// with PyTorch's message when out of range.
EMBER_CORE_API int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, bool scalar_as_1d = true);

template <typename T>
T* TensorBase::data_ptr() const {
  EMBER_CHECK(CppTypeToScalarType<T>::value == dtype(), "expected scalar type ",
              scalar_type_name(CppTypeToScalarType<T>::value), " but found ", scalar_type_name(dtype()));
  return static_cast<T*>(impl_->data());
}

// An element as the tensor's conjugate and negative bits say it reads.
template <typename V>
V with_math_bits(V v, bool conj, bool neg) {
  if constexpr (!std::is_same_v<V, bool>) {
    if (neg) v = static_cast<V>(-v);
    if constexpr (is_complex_v<V>) {
      if (conj) v = V(v.real(), -v.imag());
    }
  }
  return v;
}

template <typename T>
T TensorBase::item() const {
  EMBER_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  EMBER_CHECK(!is_meta(), "Tensor.item() cannot be called on meta tensors");
  if (!is_cpu()) return host_copy(*this).item<T>();  // PyTorch's _local_scalar_dense: a copy, then a read
  return EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(dtype(), "item", [&]() -> T {
    return convert<T>(with_math_bits(*static_cast<const scalar_t*>(impl_->data()), is_conj(), is_neg()));
  });
}

}  // namespace ember
