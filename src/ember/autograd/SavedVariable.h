#pragma once
// A tensor kept by a backward node, with the version it had when saved so
// that a later in-place change is detected instead of giving wrong gradients.

#include <functional>
#include <memory>
#include <optional>

#include "ember/ops/Tensor.h"

namespace ember::autograd {

class Node;

// A saved tensor handed to saved-tensor hooks (autograd.graph.saved_tensors_hooks):
// what the pack hook returned, turned back into a tensor by the unpack hook.
struct PackedTensor {
  virtual ~PackedTensor() = default;
  virtual Tensor unpack() const = 0;
};
using PackHook = std::function<std::shared_ptr<PackedTensor>(const Tensor&)>;

// The innermost registered hooks apply to every tensor saved on this thread.
EMBER_API void push_saved_tensor_hooks(PackHook hook);
EMBER_API void pop_saved_tensor_hooks();
EMBER_API bool has_saved_tensor_hooks();

class EMBER_API SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  // An absent optional tensor is saved as an undefined one.
  SavedVariable(const std::optional<Tensor>& t, bool is_output) : SavedVariable(t ? *t : Tensor(), is_output) {}

  // The saved tensor; saved_for is the node that owns an output saved here.
  // Throws if the graph was freed or the tensor was modified in place.
  Tensor unpack(std::shared_ptr<Node> saved_for = nullptr) const;
  void reset_data();
  // Hands the kept tensor to pack and keeps what it returns instead
  // (grad_fn._raw_saved_<name>.register_hooks); one pair of hooks at most.
  void register_hooks(const PackHook& pack);

 private:
  Tensor data_;
  std::shared_ptr<PackedTensor> packed_;  // set instead of data_ when hooks were active
  IntrusivePtr<VersionCounter> version_counter_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  std::weak_ptr<Node> input_grad_fn_;  // grad_fn of a saved non-leaf input (for messages)
  bool was_defined_ = false;
  bool is_output_ = false;
  // Whether a saved output had a node: a non-differentiable output (the
  // statistics of native_layer_norm) unpacks without one, as in PyTorch.
  bool output_has_history_ = false;
  bool released_ = false;
};

}  // namespace ember::autograd
