#include "ember/autograd/SavedVariable.h"

#include "ember/autograd/AutogradMeta.h"
#include "ember/autograd/GradMode.h"
#include "ember/ops/TensorIterator.h"

namespace ember::autograd {

namespace {
thread_local std::vector<PackHook> t_pack_hooks;
}

void push_saved_tensor_hooks(PackHook hook) { t_pack_hooks.push_back(std::move(hook)); }
void pop_saved_tensor_hooks() {
  EMBER_INTERNAL_ASSERT(!t_pack_hooks.empty(), "no saved tensor hooks to pop");
  t_pack_hooks.pop_back();
}
bool has_saved_tensor_hooks() { return !t_pack_hooks.empty(); }

SavedVariable::SavedVariable(const Tensor& t, bool is_output) : was_defined_(t.defined()), is_output_(is_output) {
  if (!t.defined()) return;
  TensorImpl* impl = t.unsafeGetTensorImpl();
  EMBER_CHECK(!impl->is_inference(),
              "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
              "in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor "
              "and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.");
  version_counter_ = impl->shared_version_counter();
  saved_version_ = impl->version();
  if (is_output) {
    // Keeping the output itself would make a cycle node -> tensor -> node:
    // keep a plain alias and rebuild the history on unpack.
    data_ = t.detach();
    output_nr_ = get_meta(t) ? get_meta(t)->output_nr : 0;
    output_has_history_ = get_meta(t) && get_meta(t)->grad_fn;
  } else {
    data_ = t;
    if (AutogradMeta* m = get_meta(t)) {
      input_grad_fn_ = m->grad_fn;
      output_nr_ = m->output_nr;
    }
  }
  // A wrapped number (the 2 of x * 2) is not shown to the hooks, as in PyTorch.
  if (!t_pack_hooks.empty() && !impl->is_wrapped_number()) {
    // The hook keeps the tensor its own way; a copy of the hook runs so that it may register hooks itself.
    PackHook hook = t_pack_hooks.back();
    const uint32_t before = impl->version();
    packed_ = hook(data_);
    EMBER_CHECK(impl->version() == before,
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                "can not be modified by in-place operations as this can lead to unexpected side-effects. Please "
                "open an issue if you need to perform in-place operations on the input to a pack hook.");
    data_.reset();
  }
}

void SavedVariable::reset_data() {
  data_.reset();
  packed_.reset();
  released_ = true;
}

void SavedVariable::register_hooks(const PackHook& pack) {
  EMBER_CHECK(!released_,
              "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
              "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
              "to backward through the graph a second time or if you need to access saved variables after calling "
              "backward.");
  EMBER_CHECK(was_defined_, "Calling register_hooks on a saved tensor with value None is forbidden");
  EMBER_CHECK(!packed_,
              "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair of "
              "hooks is allowed at a time.");
  packed_ = pack(data_);
  data_.reset();
}

namespace {
std::string short_node_name(std::string name) {
  const std::string suffix = "Backward0";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return name.substr(0, name.size() - suffix.size());
  }
  auto pos = name.find("Backward");
  if (pos != std::string::npos) name.erase(pos, 8);
  return name;
}
}  // namespace

Tensor SavedVariable::unpack(std::shared_ptr<Node> saved_for) const {
  if (!was_defined_) return Tensor();
  if (released_) {
    throw Error(
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
        "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
        "you need to access saved tensors after calling backward.");
  }
  // With hooks the tensor is theirs to keep: versions cannot be tracked through them (as PyTorch).
  uint32_t current = version_counter_->version.load();
  if (!packed_ && current != saved_version_) {
    std::string msg = str_cat(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [",
        data_.type_name(), " ", shape_string(data_.sizes()), "]");
    // Named: the node that saved an output, or an input's current history,
    // without "Backward" ("Add" for AddBackward0, "Fill2" for FillBackward2).
    std::shared_ptr<Node> fn;
    uint32_t nr = output_nr_;
    if (is_output_) {
      fn = saved_for;
    } else if (AutogradMeta* m = get_meta(data_)) {
      fn = m->grad_fn;
      nr = m->output_nr;
    }
    if (fn) msg += str_cat(", which is output ", nr, " of ", short_node_name(fn->name()), ",");
    msg += str_cat(" is at version ", current, "; expected version ", saved_version_,
                   " instead. Hint: enable anomaly detection to find the operation that failed to compute its "
                   "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).");
    throw Error(msg);
  }
  const Tensor data = packed_ ? packed_->unpack() : data_;
  if (is_output_ && output_has_history_ && saved_for && GradMode::is_enabled()) {
    // Double backward needs the output connected to its node again.
    Tensor alias = data.detach();
    AutogradMeta* m = materialize_meta(alias);
    m->grad_fn = std::move(saved_for);
    m->output_nr = output_nr_;
    return alias;
  }
  return data;
}

}  // namespace ember::autograd
