#pragma once
// Per-tensor autograd state, created only for tensors that take part in
// autograd (requires_grad, grad_fn, .grad, hooks).

#include <memory>

#include "ember/autograd/Node.h"

namespace ember::autograd {

struct AutogradMeta;
// Drops a dying meta from the open dual level's list (ForwardAD.cpp).
EMBER_API void forget_fw_grad(AutogradMeta* meta);

struct EMBER_API AutogradMeta final : AutogradMetaInterface {
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;
  uint32_t output_nr = 0;
  bool leaf_requires_grad = false;
  bool retains_grad = false;
  // Hooks registered on a leaf before its AccumulateGrad exists.
  std::vector<TensorHook> leaf_hooks;
  // Run on a leaf after its .grad was accumulated (register_post_accumulate_grad_hook).
  std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;
  // Weak handle to the owning tensor for retain_grad hooks (nulled on destruction).
  std::shared_ptr<TensorImpl*> self_slot;
  // View tracking (ViewAutograd.h): for outputs of view operators, the root
  // base (never itself a view), the version at which grad_fn was last set,
  // and how the view was made (CreationMeta).
  Tensor view_base;
  uint32_t attr_version = 0;
  uint8_t creation_meta = 0;
  bool is_view = false;
  // Forward AD (ForwardAD.h): the tangent at the dual level numbered
  // fw_grad_epoch; stale (ignored) once that level has closed.
  Tensor fw_grad;
  uint64_t fw_grad_epoch = 0;

  ~AutogradMeta() override {
    if (self_slot) *self_slot = nullptr;
    if (fw_grad_epoch) forget_fw_grad(this);
  }

  bool requires_grad() const override {
    return leaf_requires_grad || grad_fn != nullptr || (is_view && view_base.requires_grad());
  }
};

// The tensor's meta, or nullptr.
inline AutogradMeta* get_meta(const TensorBase& t) {
  return static_cast<AutogradMeta*>(t.unsafeGetTensorImpl()->autograd_meta());
}
// The tensor's meta, created if absent.
EMBER_API AutogradMeta* materialize_meta(const TensorBase& t);

// The edge through which a gradient reaches t: its grad_fn, or the
// accumulator of a leaf that requires grad, or an invalid edge.
EMBER_API Edge gradient_edge(const Tensor& t);
EMBER_API std::shared_ptr<Node> grad_accumulator(const Tensor& t);
EMBER_API const std::shared_ptr<Node>& grad_fn(const TensorBase& t);

}  // namespace ember::autograd
