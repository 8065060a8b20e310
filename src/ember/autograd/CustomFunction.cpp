// C++ custom autograd functions (autograd/CustomFunction.h).
#include "ember/autograd/CustomFunction.h"

#include <cxxabi.h>

#include <cstdlib>

#include "ember/ops/Ops.h"

namespace ember::autograd {

namespace {
bool contains(const variable_list& ts, const Tensor& t) {
  for (const Tensor& x : ts) {
    if (x.defined() && x.is_same(t)) return true;
  }
  return false;
}
}  // namespace

std::string demangle(const char* mangled) {
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || readable == nullptr) return mangled;
  std::string name(readable);
  std::free(readable);
  return name;
}

variable_list AutogradContext::get_saved_variables() const {
  std::shared_ptr<Node> node = grad_fn_.lock();
  variable_list out;
  out.reserve(saved_.size());
  for (const SavedVariable& s : saved_) out.push_back(s.unpack(node));
  return out;
}

bool AutogradContext::needs_input_grad(size_t index) const {
  std::shared_ptr<Node> node = grad_fn_.lock();
  EMBER_CHECK(node && index < node->num_outputs(), "Index out of range");
  return node->should_compute_output(index);
}

void CppNodeBase::set_inputs(const variable_list& inputs, std::vector<bool> is_tensor_argument, bool executable) {
  is_tensor_argument_ = std::move(is_tensor_argument);
  set_next_edges(collect_next_edges(inputs));
  if (!executable) {
    // Without a graph, no input's gradient is needed.
    for (Edge& e : next_edges_) e = Edge();
  }
  ctx_.grad_fn_ = shared_from_this();
}

void CppNodeBase::wrap_outputs(const variable_list& inputs, variable_list& outputs, bool executable) {
  for (const Tensor& d : ctx_.dirty_) {
    EMBER_CHECK(contains(outputs, d),
                "Some elements marked as dirty during the forward method were not returned as output. The inputs "
                "that are modified inplace must all be outputs of the Function.");
    d.unsafeGetTensorImpl()->bump_version();
  }
  std::shared_ptr<Node> self = executable ? shared_from_this() : nullptr;
  for (Tensor& t : outputs) {
    if (!t.defined()) {
      if (self) (void)add_input_metadata(t);
      continue;
    }
    const bool is_dirty = contains(ctx_.dirty_, t);
    const bool differentiable =
        self && !contains(ctx_.non_differentiable_, t) && (is_floating_type(t.dtype()) || is_complex_type(t.dtype()));
    if (is_dirty) {
      if (self) {
        EMBER_CHECK(!(t.is_leaf() && t.requires_grad()),
                    "a leaf Variable that requires grad has been used in an in-place operation.");
        check_inplace(t, true);
      }
    } else if (contains(inputs, t)) {
      GradModeGuard no_grad(false);
      t = t.view_as(t);  // an input returned as-is becomes a view of it
    }
    if (!self) continue;
    if (!differentiable) {
      (void)add_input_metadata(t);
    } else if (is_dirty) {
      rebase_history(t, self);
    } else {
      set_history(t, self);
    }
  }
  if (self) {
    for (const Tensor& t : ctx_.to_save_) {
      ctx_.saved_.emplace_back(t, t.defined() && contains(outputs, t) && grad_fn(t) == self);
    }
  }
  ctx_.to_save_.clear();
  ctx_.dirty_.clear();
  ctx_.non_differentiable_.clear();
}

variable_list CppNodeBase::apply(variable_list&& grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined() && ctx_.materialize_grads_ && i < num_inputs()) {
      const InputMetadata& m = input_metadata(i);
      grads[i] = zeros(m.shape, m.dtype, m.device);
    }
  }
  variable_list outputs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    outputs = call_backward(&ctx_, std::move(grads));
  }
  const size_t expected = is_tensor_argument_.size();
  size_t got = outputs.size();
  // More results than arguments are accepted when the extra ones are undefined.
  while (got > expected && !outputs[got - 1].defined()) --got;
  if (got != expected) {
    throw Error(str_cat("function ", name(), " returned an incorrect number of gradients (expected ", expected,
                        ", got ", outputs.size(), ")"));
  }
  variable_list result;
  result.reserve(next_edges_.size());
  for (size_t i = 0; i < expected; ++i) {
    if (!is_tensor_argument_[i]) {
      EMBER_CHECK(!outputs[i].defined(), "function ", name(),
                  " returned a gradient different that is defined at position ", i + 1,
                  ", std the corresponding forward input is not a Variable");
      continue;
    }
    result.push_back(std::move(outputs[i]));
  }
  return result;
}

void CppNodeBase::release_variables() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (SavedVariable& s : ctx_.saved_) s.reset_data();
}

}  // namespace ember::autograd
