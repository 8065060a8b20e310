#pragma once
// The user-facing tensor: TensorBase plus one method per operator variant
// declared in ops.yaml (generated into TensorMethods.h in the build folder).

#include <optional>
#include <vector>

#include "ember/core/Generator.h"
#include "ember/core/Scalar.h"
#include "ember/core/TensorBase.h"
#include "ember/ops/TensorAccessor.h"
#include "ember/ops/TensorOptions.h"

namespace ember {

class Tensor;
using TensorList = std::vector<Tensor>;
// A number as a 0-dim "wrapped number" tensor (Python's weak scalars).
EMBER_API Tensor wrapped_scalar(const Scalar& s);

class EMBER_API Tensor : public TensorBase {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : TensorBase(std::move(impl)) {}
  Tensor(const TensorBase& base) : TensorBase(base) {}  // NOLINT: same object, more methods

  // Autograd accessors (implemented in the autograd layer).
  const Tensor& grad() const;
  Tensor& mutable_grad();
  bool is_leaf() const;
  void set_requires_grad(bool value);
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
  // Arithmetic with a number, as PyTorch's Scalar overloads (x.mul_(2.0)).
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const { return add(wrapped_scalar(other), alpha); }
  const Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const { return add_(wrapped_scalar(other), alpha); }
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const { return sub(wrapped_scalar(other), alpha); }
  const Tensor& sub_(const Scalar& other, const Scalar& alpha = 1) const { return sub_(wrapped_scalar(other), alpha); }
  Tensor mul(const Scalar& other) const { return mul(wrapped_scalar(other)); }
  const Tensor& mul_(const Scalar& other) const { return mul_(wrapped_scalar(other)); }
  Tensor div(const Scalar& other) const { return div(wrapped_scalar(other)); }
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
