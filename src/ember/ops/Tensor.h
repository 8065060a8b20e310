#pragma once
// The user-facing tensor: TensorBase plus one method per operator variant
// declared in ops.yaml (generated into TensorMethods.h in the build folder).

#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/Generator.h"
#include "ember/core/Scalar.h"
#include "ember/core/TensorBase.h"
#include "ember/ops/TensorAccessor.h"
#include "ember/ops/TensorOptions.h"

namespace ember {

class Tensor;
namespace indexing {
class TensorIndex;
}  // namespace indexing
namespace autograd {
class Node;
}  // namespace autograd
using TensorList = std::vector<Tensor>;
// A number as a 0-dim "wrapped number" tensor (Python's weak scalars).
EMBER_API Tensor wrapped_scalar(const Scalar& s);

// x.type(): PyTorch's deprecated type properties, as older extension code
// uses them (AT_DISPATCH_FLOATING_TYPES(x.type(), ...), x.type().is_cuda()).
class DeprecatedTypeProperties {
 public:
  DeprecatedTypeProperties(ScalarType dtype, DeviceType device) : dtype_(dtype), device_(device) {}
  ScalarType scalarType() const { return dtype_; }
  operator ScalarType() const { return dtype_; }  // NOLINT: what AT_DISPATCH_* reads
  bool is_cuda() const { return device_ == DeviceType::CUDA; }
  bool is_sparse() const { return false; }
  // "CPUFloatType", "CUDADoubleType".
  std::string toString() const {
    return str_cat(device_ == DeviceType::CUDA ? "CUDA" : "CPU", dtype_message_name(dtype_), "Type");
  }

 private:
  ScalarType dtype_;
  DeviceType device_;
};

class EMBER_API Tensor : public TensorBase {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : TensorBase(std::move(impl)) {}
  Tensor(const TensorBase& base) : TensorBase(base) {}  // NOLINT: same object, more methods

  // Autograd accessors (implemented in the autograd layer).
  const Tensor& grad() const;
  Tensor& mutable_grad();
  bool is_leaf() const;
  const Tensor& set_requires_grad(bool value) const;
  const Tensor& requires_grad_(bool value = true) const { return set_requires_grad(value); }
  // The node that made this tensor (null for a leaf), as PyTorch's x.grad_fn().
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  uint32_t output_nr() const;
  uint32_t _version() const;
  // Keeps the gradient of a non-leaf in .grad after backward (x.retain_grad()).
  void retain_grad() const;
  bool retains_grad() const;
  Tensor detach() const;
  // Runs backward from this tensor (see ember::autograd::backward).
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;

  // PyTorch's C++ conveniences: x.options() for factories, x.accessor<float, 2>().
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  bool is_cuda() const { return device().is_cuda(); }
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() const& {
    EMBER_CHECK(dim() == static_cast<int64_t>(N), "TensorAccessor expected ", N, " dims but tensor has ", dim());
    return TensorAccessor<T, N>(data_ptr<T>(), sizes().data(), strides().data());
  }
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;
  // Sizes and strides copied into the accessor, for CUDA kernels.
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> generic_packed_accessor() const& {
    EMBER_CHECK(dim() == static_cast<int64_t>(N), "TensorAccessor expected ", N, " dims but tensor has ", dim());
    return GenericPackedTensorAccessor<T, N, PtrTraits, index_t>(
        static_cast<typename PtrTraits<T>::PtrType>(data_ptr<T>()), sizes().data(), strides().data());
  }
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() const& {
    EMBER_CHECK_TYPE(ValueError, numel() <= std::numeric_limits<int32_t>::max(),
                     "numel needs to be smaller than int32_t max; otherwise, please use packed_accessor64");
    return generic_packed_accessor<T, N, PtrTraits, int32_t>();
  }
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() const& {
    return generic_packed_accessor<T, N, PtrTraits, int64_t>();
  }
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() && = delete;
  template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() && = delete;
  // More of PyTorch's C++ Tensor API (ops/TensorConveniences.cpp).
  using TensorBase::item;
  Scalar item() const;
  Layout layout() const { return Layout::Strided; }
  DeprecatedTypeProperties type() const { return DeprecatedTypeProperties(dtype(), device().type); }
  Tensor data() const;
  Tensor toType(ScalarType t) const;
  Tensor to(const TensorOptions& options, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor new_empty(IntArrayRef size, const TensorOptions& options = {}) const;
  Tensor new_zeros(IntArrayRef size, const TensorOptions& options = {}) const;
  Tensor new_ones(IntArrayRef size, const TensorOptions& options = {}) const;
  Tensor new_full(IntArrayRef size, const Scalar& fill_value, const TensorOptions& options = {}) const;
  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  Tensor cpu() const { return to(Device(DeviceType::CPU)); }
  Tensor cuda() const { return to(Device(DeviceType::CUDA)); }
  Tensor ravel() const { return reshape({-1}); }
  Tensor broadcast_to(IntArrayRef size) const { return expand(size); }
  bool is_same_size(const Tensor& other) const { return sizes().equals(other.sizes()); }
  // std(0) and var(0) reduce dim 0 (a plain int would otherwise pick the
  // std(bool unbiased) overload), as in PyTorch.
  Tensor std(int dim) const { return std(OptionalIntArrayRef(dim)); }
  Tensor var(int dim) const { return var(OptionalIntArrayRef(dim)); }
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim = false) const;
  // x[i] selects along dim 0, as PyTorch's C++ operator[] (a number or a one-element tensor).
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor operator[](const Scalar& index) const { return select(0, index.to_long()); }
  Tensor operator[](const Tensor& index) const { return select(0, index.item<int64_t>()); }
  // Python indexing (ops/TensorIndexing.h): x.index({Slice(), 0}) is x[:, 0].
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  const Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value) const;
  const Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value) const;
  const Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& value) const;
  const Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Scalar& value) const;

  // In-place arithmetic with a number, as PyTorch's Scalar overloads (x.mul_(2.0)).
  const Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const { return add_(wrapped_scalar(other), alpha); }
  const Tensor& sub_(const Scalar& other, const Scalar& alpha = 1) const { return sub_(wrapped_scalar(other), alpha); }
  const Tensor& mul_(const Scalar& other) const { return mul_(wrapped_scalar(other)); }
  const Tensor& div_(const Scalar& other) const { return div_(wrapped_scalar(other)); }

#include "ember/ops/generated/TensorMethods.h"
};

// The default floating dtype (float32 unless changed).
EMBER_API ScalarType get_default_dtype();
EMBER_API void set_default_dtype(ScalarType t);
// ember.set_default_device: the device Python factory calls use when given
// none. C++ factories without a device always use the CPU.
EMBER_API Device get_default_device();
EMBER_API void set_default_device(Device d);

namespace dispatch {
// The device whose kernel an operator runs (generated functions): meta when
// any further tensor argument is meta, otherwise `first` (the first tensor's).
inline bool is_meta_arg(const Tensor& t) { return t.defined() && t.is_meta(); }
inline bool is_meta_arg(const std::optional<Tensor>& t) { return t && is_meta_arg(*t); }
template <typename T>
bool is_meta_arg(const std::vector<T>& ts) {
  for (const auto& t : ts) {
    if (is_meta_arg(t)) return true;
  }
  return false;
}
template <typename... Ts>
DeviceType device_type(DeviceType first, const Ts&... tensors) {
  return (is_meta_arg(tensors) || ...) ? DeviceType::Meta : first;
}
}  // namespace dispatch

}  // namespace ember
