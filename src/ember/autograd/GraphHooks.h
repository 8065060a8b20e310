#pragma once
// Graph tools of torch.autograd.graph that the engine consults: hooks on a
// node that may replace gradients (node.register_prehook, node.register_hook),
// the running graph task (will_engine_execute_node, its id) and the gradient
// layout policy (enforce_grad_layout_policy).

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ember/autograd/Node.h"

namespace ember::autograd {

// Note [Node hooks]: a pre hook sees the gradients of a node's outputs before
// apply, a post hook the gradients it computed (and those it was given); each
// may return replacements (an empty list keeps them). They live in a table
// beside the node, emptied when the node dies, so a node without hooks pays
// one relaxed load.
using NodePreHook = std::function<variable_list(const variable_list& grad_outputs)>;
using NodePostHook = std::function<variable_list(const variable_list& grad_inputs, const variable_list& grad_outputs)>;
struct NodeHooks {
  std::vector<NodePreHook> pre;
  std::vector<NodePostHook> post;
};
EMBER_API void add_node_pre_hook(const Node& n, NodePreHook hook);
EMBER_API void add_node_post_hook(const Node& n, NodePostHook hook);
// A copy of n's hooks, or nullopt when it has none.
EMBER_API std::optional<NodeHooks> node_hooks(const Node& n);
// Called by ~Node.
void forget_node_hooks(const Node* n);

// During backward on this thread: whether the running graph task will execute
// node n (it is reachable and, for autograd.grad, leads to an input). Empty
// outside backward.
EMBER_API std::optional<bool> will_engine_execute_node(const Node* n);
// The id of the graph task running on this thread; -1 outside backward.
EMBER_API int64_t current_graph_task_id();

// enforce_grad_layout_policy: when off, a leaf's first gradient is stolen
// even if its strides differ from the leaf's (Note [Gradient layout]).
struct EMBER_API GradLayoutPolicy {
  static bool is_enforced();
  static void set_enforced(bool enforced);
};

}  // namespace ember::autograd
