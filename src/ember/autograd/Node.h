#pragma once
// The backward graph: a Node computes gradients of its forward inputs from
// gradients of its forward outputs; Edges point to the nodes of the inputs.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ember/ops/Tensor.h"

namespace ember::autograd {

using variable_list = std::vector<Tensor>;
class Node;
class SavedVariable;

struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;

  Edge() = default;
  Edge(std::shared_ptr<Node> fn, uint32_t nr) : function(std::move(fn)), input_nr(nr) {}
  bool is_valid() const { return function != nullptr; }
};
using edge_list = std::vector<Edge>;

// Shape, dtype and device of a forward output, used to check and reduce the
// gradient that flows back into it (broadcasting is undone here).
struct InputMetadata {
  DimVector shape;
  ScalarType dtype = ScalarType::Float;
  Device device;
};

using TensorHook = std::function<Tensor(const Tensor&)>;
using PostHook = std::function<void(const variable_list& grad_inputs, const variable_list& grad_outputs)>;

class EMBER_API Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;
  // grads[i] is the gradient of forward output i; returns one gradient per next edge.
  virtual variable_list apply(variable_list&& grads) = 0;
  // Frees saved tensors once the graph is no longer needed.
  virtual void release_variables() {}
  // The tensors this node saved, by name ("self", "result"), as
  // grad_fn._saved_<name> and grad_fn._raw_saved_<name> show them.
  virtual std::vector<std::pair<const char*, SavedVariable*>> saved_tensors() { return {}; }
  // The other values it saved (dim, keepdim, alpha, sizes) under PyTorch's
  // names, as grad_fn._saved_<name> shows them; an absent optional is empty.
  using SavedValue = std::variant<std::monostate, int64_t, double, bool, Scalar, std::string, std::vector<int64_t>,
                                  std::vector<double>, ScalarType>;
  virtual std::vector<std::pair<const char*, SavedValue>> saved_values() const { return {}; }
  template <typename T>
  static SavedValue saved_value(const T& v) {
    return SavedValue(std::in_place_type<T>, v);
  }
  template <typename T>
  static SavedValue saved_value(const std::optional<T>& v) {
    return v ? saved_value(*v) : SavedValue();
  }

  const edge_list& next_edges() const { return next_edges_; }
  void set_next_edges(edge_list&& edges) { next_edges_ = std::move(edges); }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  size_t num_outputs() const { return next_edges_.size(); }
  bool should_compute_output(size_t i) const { return i < next_edges_.size() && next_edges_[i].is_valid(); }

  // Registers a forward output; returns its index (the output_nr).
  uint32_t add_input_metadata(const TensorBase& t);
  size_t num_inputs() const { return input_metadata_.size(); }
  const InputMetadata& input_metadata(size_t i) const { return input_metadata_[i]; }

  // Order of creation; the engine runs later nodes first.
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Hooks on the gradient arriving at input i (tensor.register_hook), and
  // after apply (node.register_hook).
  void add_tensor_pre_hook(uint32_t input_nr, TensorHook hook) { pre_hooks_.emplace_back(input_nr, std::move(hook)); }
  void add_post_hook(PostHook hook) { post_hooks_.push_back(std::move(hook)); }
  const std::vector<std::pair<uint32_t, TensorHook>>& tensor_pre_hooks() const { return pre_hooks_; }
  // retain_grad's hook: runs after every other hook on that input.
  void add_retains_grad_hook(uint32_t input_nr, TensorHook hook) {
    retains_grad_hooks_.emplace_back(input_nr, std::move(hook));
  }
  const std::vector<std::pair<uint32_t, TensorHook>>& retains_grad_hooks() const { return retains_grad_hooks_; }
  const std::vector<PostHook>& post_hooks() const { return post_hooks_; }

  // Borrowed pointer to the Python wrapper of this node, if one exists.
  void* pyobj = nullptr;
  // Node.metadata's dict, owned here so that it lives as long as the node.
  std::shared_ptr<void> metadata;
  // The Python stack of the forward call, kept in anomaly mode.
  std::string forward_trace;

 protected:
  edge_list next_edges_;
  std::vector<InputMetadata> input_metadata_;
  uint64_t sequence_nr_;
  std::vector<std::pair<uint32_t, TensorHook>> pre_hooks_;
  std::vector<std::pair<uint32_t, TensorHook>> retains_grad_hooks_;
  std::vector<PostHook> post_hooks_;
};

// Accumulates into a leaf tensor's .grad.
class EMBER_API AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  variable_list apply(variable_list&& grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// Hook for Python: called when a Node's wrapper must be released.
EMBER_API extern void (*g_node_pyobj_release)(void*);

}  // namespace ember::autograd
