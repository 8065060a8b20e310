#include "ember/autograd/Node.h"

#include <atomic>
#include <limits>
#include <mutex>
#include <unordered_map>

#include "ember/autograd/AutogradMeta.h"
#include "ember/autograd/GradMode.h"
#include "ember/autograd/GraphHooks.h"
#include "ember/ops/Ops.h"

namespace ember::autograd {

void (*g_node_pyobj_release)(void*) = nullptr;

namespace {
thread_local uint64_t t_next_sequence_nr = 0;
}

Node::Node() : sequence_nr_(t_next_sequence_nr++) {
  if (AnomalyMode::is_enabled()) forward_trace = AnomalyMode::capture_trace();
}

Node::~Node() {
  if (pyobj && g_node_pyobj_release) g_node_pyobj_release(pyobj);
  forget_node_hooks(this);
}

// Note [Node hooks]
namespace {
std::mutex g_hooks_mutex;
std::unordered_map<const Node*, NodeHooks> g_hooks;
std::atomic<size_t> g_hooked_nodes{0};

NodeHooks& hooks_of(const Node& n) {
  auto [it, inserted] = g_hooks.try_emplace(&n);
  if (inserted) g_hooked_nodes.fetch_add(1, std::memory_order_relaxed);
  return it->second;
}
}  // namespace

void add_node_pre_hook(const Node& n, NodePreHook hook) {
  std::lock_guard<std::mutex> lock(g_hooks_mutex);
  hooks_of(n).pre.push_back(std::move(hook));
}

void add_node_post_hook(const Node& n, NodePostHook hook) {
  std::lock_guard<std::mutex> lock(g_hooks_mutex);
  hooks_of(n).post.push_back(std::move(hook));
}

std::optional<NodeHooks> node_hooks(const Node& n) {
  if (g_hooked_nodes.load(std::memory_order_relaxed) == 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(g_hooks_mutex);
  auto it = g_hooks.find(&n);
  if (it == g_hooks.end()) return std::nullopt;
  return it->second;
}

void forget_node_hooks(const Node* n) {
  if (g_hooked_nodes.load(std::memory_order_relaxed) == 0) return;
  NodeHooks dropped;  // destroyed after the lock is released (a hook may own Python objects)
  {
    std::lock_guard<std::mutex> lock(g_hooks_mutex);
    auto it = g_hooks.find(n);
    if (it == g_hooks.end()) return;
    dropped = std::move(it->second);
    g_hooks.erase(it);
    g_hooked_nodes.fetch_sub(1, std::memory_order_relaxed);
  }
}

uint32_t Node::add_input_metadata(const TensorBase& t) {
  // An undefined output (a backward operator's masked-out gradient) keeps its
  // slot, so the outputs after it keep their numbers; no gradient reaches it.
  if (!t.defined()) {
    input_metadata_.push_back(InputMetadata{});
    return static_cast<uint32_t>(input_metadata_.size() - 1);
  }
  input_metadata_.push_back(InputMetadata{DimVector(t.sizes()), t.dtype(), t.device()});
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  // Leaves run as soon as they are ready.
  sequence_nr_ = std::numeric_limits<uint64_t>::max();
  add_input_metadata(variable_);
}

namespace {

// Note [Gradient layout]: as PyTorch, a leaf's .grad takes the leaf's strides
// when the leaf is dense and non-overlapping, else it is contiguous.
bool obeys_layout(const Tensor& grad, const Tensor& variable) {
  if (!variable.is_non_overlapping_and_dense()) return grad.is_contiguous();
  for (int64_t d = 0; d < variable.dim(); ++d) {
    if (variable.sizes()[d] != 1 && grad.strides()[d] != variable.strides()[d]) return false;
  }
  return true;
}

Tensor clone_with_layout(const Tensor& grad, const Tensor& variable) {
  if (!variable.is_non_overlapping_and_dense()) return grad.clone(MemoryFormat::Contiguous);
  Tensor out = ember::empty_strided(variable.sizes(), variable.strides(), grad.dtype(), grad.device());
  out.copy_(grad);
  return out;
}

}  // namespace

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor new_grad = std::move(grads[0]);
  if (!new_grad.defined()) return {};
  Tensor& grad = variable_.mutable_grad();
  if (!grad.defined()) {
    if (GradMode::is_enabled()) {
      grad = new_grad;  // create_graph: keep the graph of the gradient
    } else if (new_grad.unsafeGetTensorImpl()->use_count() == 1 &&
               (!GradLayoutPolicy::is_enforced() || obeys_layout(new_grad, variable_)) &&
               new_grad.unsafeGetTensorImpl()->autograd_meta() == nullptr) {
      grad = std::move(new_grad);  // nobody else holds it: steal
    } else {
      grad = clone_with_layout(new_grad.detach(), variable_);
    }
  } else if (GradMode::is_enabled()) {
    grad = grad + new_grad;
  } else {
    grad.add_(new_grad);
  }
  if (AutogradMeta* m = get_meta(variable_)) {
    for (const auto& hook : m->post_accumulate_hooks) hook(variable_);
  }
  return {};
}

}  // namespace ember::autograd
