#pragma once
// Autograd for views: which tensors are views of which base, and how an
// in-place operation on a view rewrites the base's history (CopySlices).
// See Note [Views and in-place operations] in ViewAutograd.cpp.

#include <cstdint>
#include <memory>

#include "ember/autograd/Node.h"

namespace ember::autograd {

struct AutogradMeta;

// How a view was made; anything but DEFAULT forbids in-place changes that
// autograd would have to track (PyTorch's CreationMeta).
enum class CreationMeta : uint8_t { DEFAULT, IN_CUSTOM_FUNCTION, MULTI_OUTPUT_NODE, NO_GRAD_MODE, INFERENCE_MODE };

// The creation meta for a view made now (grad mode, inference mode, and
// whether the operator returns several views).
EMBER_API CreationMeta view_creation_meta(bool multi_output);
// Records that `view` (output of a view operator) aliases `base`.
EMBER_API void as_view(const Tensor& base, const Tensor& view, CreationMeta creation_meta);

// True for outputs of view operators.
EMBER_API bool is_view(const TensorBase& t);
// The root base of a view (itself never a view), or an undefined tensor.
EMBER_API const Tensor& view_base(const TensorBase& t);

// Called by grad_fn(): after the base or another view of it changed in
// place, a view's history is rebuilt as AsStridedBackward0 of its base.
void refresh_view_grad_fn(const TensorBase& self, AutogradMeta* m);
// Called by check_inplace() for a view: throws PyTorch's errors for views
// that may not be modified in place.
void check_inplace_view(const Tensor& self, AutogradMeta* m);
// Called by rebase_history() for a view: the base's history becomes
// CopySlices(fn), and the view's history is rebuilt from it.
void rebase_view_history(const Tensor& self, AutogradMeta* m, const std::shared_ptr<Node>& fn);

// The gradient for an in-place operation on a view, as seen by the base:
// grad flows to the base everywhere except the view's elements, which get
// fn's gradient for the view before the operation.
class EMBER_API CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn);
  std::string name() const override { return "torch::autograd::CopySlices"; }
  variable_list apply(variable_list&& grads) override;
  void release_variables() override;

 private:
  DimVector base_sizes_, base_strides_;
  int64_t base_offset_;
  DimVector view_sizes_, view_strides_;
  int64_t view_offset_;
  uint8_t view_bits_;  // Note [Conjugate and negative bits]: the view's bits not on its base
  std::shared_ptr<Node> fn_;
};

}  // namespace ember::autograd
