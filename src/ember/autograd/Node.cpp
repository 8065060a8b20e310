#include "ember/autograd/Node.h"

#include <atomic>
#include <limits>

#include "ember/autograd/GradMode.h"
#include "ember/ops/Ops.h"

namespace ember::autograd {

void (*g_node_pyobj_release)(void*) = nullptr;

namespace {
thread_local uint64_t t_next_sequence_nr = 0;
}

Node::Node() : sequence_nr_(t_next_sequence_nr++) {}

Node::~Node() {
  if (pyobj && g_node_pyobj_release) g_node_pyobj_release(pyobj);
}

uint32_t Node::add_input_metadata(const TensorBase& t) {
  input_metadata_.push_back(InputMetadata{DimVector(t.sizes()), t.dtype(), t.device()});
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  // Leaves run as soon as they are ready.
  sequence_nr_ = std::numeric_limits<uint64_t>::max();
  add_input_metadata(variable_);
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor new_grad = std::move(grads[0]);
  if (!new_grad.defined()) return {};
  Tensor& grad = variable_.mutable_grad();
  if (!grad.defined()) {
    if (GradMode::is_enabled()) {
      grad = new_grad;  // create_graph: keep the graph of the gradient
    } else if (new_grad.unsafeGetTensorImpl()->use_count() == 1 && new_grad.is_contiguous() &&
               new_grad.unsafeGetTensorImpl()->autograd_meta() == nullptr) {
      grad = std::move(new_grad);  // nobody else holds it: steal
    } else {
      grad = new_grad.detach().clone();
    }
  } else if (GradMode::is_enabled()) {
    grad = grad + new_grad;
  } else {
    grad.add_(new_grad);
  }
  return {};
}

}  // namespace ember::autograd
