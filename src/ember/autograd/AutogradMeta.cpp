// Tensor's autograd methods and the graph-recording helpers.
#include "ember/autograd/AutogradMeta.h"

#include "ember/autograd/Autograd.h"
#include "ember/autograd/Engine.h"
#include "ember/autograd/ViewAutograd.h"
#include "ember/ops/Ops.h"

namespace ember {

using autograd::AutogradMeta;
using autograd::get_meta;
using autograd::materialize_meta;

namespace {
const Tensor& undefined_tensor() {
  static const Tensor t;
  return t;
}
}  // namespace

const Tensor& Tensor::grad() const {
  AutogradMeta* m = get_meta(*this);
  return m ? m->grad : undefined_tensor();
}

Tensor& Tensor::mutable_grad() { return materialize_meta(*this)->grad; }

bool Tensor::is_leaf() const { return !autograd::grad_fn(*this); }

const Tensor& Tensor::set_requires_grad(bool value) const {
  if (!value && !is_leaf()) {
    throw Error(
        "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
        "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  }
  if (value && !is_leaf()) return *this;
  EMBER_CHECK(!value || !unsafeGetTensorImpl()->is_inference() || inference_mode_enabled(),
              "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  EMBER_CHECK(!value || is_floating_point() || is_complex(),
              "Only Tensors of floating point and complex dtype can require gradients");
  if (!value && !get_meta(*this)) return *this;
  materialize_meta(*this)->leaf_requires_grad = value;
  return *this;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const { return autograd::grad_fn(*this); }

uint32_t Tensor::output_nr() const {
  AutogradMeta* m = get_meta(*this);
  return m && autograd::grad_fn(*this) ? m->output_nr : 0;
}

uint32_t Tensor::_version() const {
  EMBER_CHECK(!unsafeGetTensorImpl()->is_inference(), "Inference tensors do not track version counter.");
  return unsafeGetTensorImpl()->version();
}

bool Tensor::retains_grad() const {
  AutogradMeta* m = get_meta(*this);
  return m && m->retains_grad;
}

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  AutogradMeta* m = materialize_meta(*this);
  if (!autograd::grad_fn(*this) || m->retains_grad) return;
  m->retains_grad = true;
  // Store the gradient arriving at this output into .grad without keeping the tensor alive.
  m->self_slot = std::make_shared<TensorImpl*>(unsafeGetTensorImpl());
  std::shared_ptr<TensorImpl*> slot = m->self_slot;
  m->grad_fn->add_retains_grad_hook(m->output_nr, [slot](const Tensor& grad) -> Tensor {
    if (!*slot) return Tensor();
    Tensor target{IntrusivePtr<TensorImpl>(*slot)};
    Tensor& g = target.mutable_grad();
    g = g.defined() ? g + grad : grad.detach().clone();
    return Tensor();
  });
}

Tensor Tensor::detach() const {
  TensorImpl* self = unsafeGetTensorImpl();
  auto impl = make_intrusive<TensorImpl>(self->storage(), self->dtype(), self->sizes(), self->strides(),
                                         self->storage_offset());
  impl->set_version_counter(self->shared_version_counter());
  impl->set_math_bits(self->math_bits());
  return Tensor(std::move(impl));
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

namespace autograd {

AutogradMeta* materialize_meta(const TensorBase& t) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (!impl->autograd_meta()) impl->set_autograd_meta(std::make_unique<AutogradMeta>());
  return static_cast<AutogradMeta*>(impl->autograd_meta());
}

const std::shared_ptr<Node>& grad_fn(const TensorBase& t) {
  static const std::shared_ptr<Node> none;
  AutogradMeta* m = get_meta(t);
  if (!m) return none;
  if (m->is_view) refresh_view_grad_fn(t, m);
  return m->grad_fn;
}

std::shared_ptr<Node> grad_accumulator(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  if (!m || !m->leaf_requires_grad) return nullptr;
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    for (auto& hook : m->leaf_hooks) acc->add_tensor_pre_hook(0, hook);
    m->grad_accumulator = acc;
  }
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  if (!m) return Edge();
  if (const auto& fn = grad_fn(t)) return Edge(fn, m->output_nr);
  if (m->leaf_requires_grad) return Edge(grad_accumulator(t), 0);
  return Edge();
}

void set_history(const Tensor& result, const std::shared_ptr<Node>& fn) {
  if (!result.defined()) {
    fn->add_input_metadata(result);
    return;
  }
  // Integer and bool outputs (x.long(), argmax's indices) get no gradient:
  // their slot is kept so that the outputs after them keep their numbers.
  if (!result.is_floating_point() && !is_complex_type_any_tier(result.dtype())) {
    fn->add_input_metadata(result);
    return;
  }
  AutogradMeta* m = materialize_meta(result);
  m->grad_fn = fn;
  m->output_nr = fn->add_input_metadata(result);
}

void rebase_history(const Tensor& self, const std::shared_ptr<Node>& fn) {
  if (!self.is_floating_point() &&
      !is_complex_type_any_tier(self.dtype())) {  // an integer tensor written in place keeps no history
    fn->add_input_metadata(self);
    return;
  }
  AutogradMeta* m = materialize_meta(self);
  if (m->is_view) return rebase_view_history(self, m, fn);
  m->grad_fn = fn;
  m->output_nr = fn->add_input_metadata(self);
  m->grad_accumulator.reset();
}

void check_inplace(const Tensor& self, bool requires_grad) {
  AutogradMeta* m = requires_grad ? get_meta(self) : nullptr;
  if (m && m->is_view) check_inplace_view(self, m);
  if (requires_grad && self.is_leaf() && self.requires_grad()) {
    throw Error("a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

void throw_out_requires_grad(const char* op) {
  throw Error(str_cat(op,
                      "(): functions with out=... arguments don't support automatic differentiation, but one of "
                      "the arguments requires grad."));
}

}  // namespace autograd
}  // namespace ember
