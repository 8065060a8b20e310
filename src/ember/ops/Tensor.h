#pragma once
// The user-facing tensor: TensorBase plus one method per operator variant
// declared in ops.yaml (generated into TensorMethods.h in the build folder).

#include <optional>
#include <vector>

#include "ember/core/Generator.h"
#include "ember/core/Scalar.h"
#include "ember/core/TensorBase.h"

namespace ember {

class Tensor;
using TensorList = std::vector<Tensor>;

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
