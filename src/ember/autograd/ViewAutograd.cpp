// Note [Views and in-place operations]
// A view operator's output shares its input's storage and version counter.
// The generated wrapper of every differentiable view operator calls
// as_view(), which records the root base (the first tensor of the chain that
// is not a view), the version at which the view's grad_fn was set
// (attr_version) and how the view was made (CreationMeta).
//
// An in-place operation on a view changes the base's values, so it changes
// the base's history: rebase_history() gives the base a CopySlices node that
// wraps the operation's node fn. Backward through CopySlices passes the
// base's gradient through unchanged outside the view and, for the view's
// elements, replaces it with fn's gradient for the view's old value; fn's
// other inputs (for example `src` of copy_) get their gradients from fn.
//
// The view's own grad_fn is now stale, and so is that of every other view of
// the same base: all of them share the version counter, which the in-place
// operation bumped. grad_fn() compares the counter with attr_version and,
// when they differ, rebuilds the view's history as AsStridedBackward0 of the
// base (the view's sizes, strides and offset over the base's storage).
//
// Views that PyTorch does not let autograd track through an in-place change
// (made in no_grad mode, or one of the outputs of unbind/split/chunk) raise
// its errors, both when modified and when read after their base changed.
#include "ember/autograd/ViewAutograd.h"

#include <string>

#include "ember/autograd/Autograd.h"
#include "ember/autograd/generated/Nodes.h"
#include "ember/ops/Ops.h"

namespace ember::autograd {

CreationMeta view_creation_meta(bool multi_output) {
  if (InferenceMode::is_enabled()) return CreationMeta::INFERENCE_MODE;
  if (!GradMode::is_enabled()) return CreationMeta::NO_GRAD_MODE;
  return multi_output ? CreationMeta::MULTI_OUTPUT_NODE : CreationMeta::DEFAULT;
}

void as_view(const Tensor& base, const Tensor& view, CreationMeta creation_meta) {
  if (view.is_same(base)) return;
  AutogradMeta* bm = get_meta(base);
  AutogradMeta* m = materialize_meta(view);
  m->is_view = true;
  if (bm && bm->is_view) {
    m->view_base = bm->view_base;
    // A view of a restricted view stays restricted.
    auto prev = static_cast<CreationMeta>(bm->creation_meta);
    if (creation_meta == CreationMeta::DEFAULT || prev == CreationMeta::INFERENCE_MODE) creation_meta = prev;
  } else {
    m->view_base = base;
  }
  m->creation_meta = static_cast<uint8_t>(creation_meta);
  m->attr_version = view.unsafeGetTensorImpl()->version();
}

bool is_view(const TensorBase& t) {
  AutogradMeta* m = get_meta(t);
  return m && m->is_view;
}

const Tensor& view_base(const TensorBase& t) {
  static const Tensor none;
  AutogradMeta* m = get_meta(t);
  return m && m->is_view ? m->view_base : none;
}

namespace {

// "UnbindBackward0" -> "Unbind", as PyTorch names the op in its messages.
std::string op_name(const Node& fn) {
  std::string n = fn.name();
  size_t end = n.size();
  while (end > 0 && n[end - 1] >= '0' && n[end - 1] <= '9') --end;
  const std::string suffix = "Backward";
  if (end >= suffix.size() && n.compare(end - suffix.size(), suffix.size(), suffix) == 0) {
    return n.substr(0, end - suffix.size());
  }
  return n;
}

void handle_view_on_rebase(const AutogradMeta* m, bool indirect) {
  auto cm = static_cast<CreationMeta>(m->creation_meta);
  if (cm == CreationMeta::DEFAULT) return;
  const Node* fn = m->grad_fn.get();
  const char* modified = indirect ? "its base or another view of its base has been" : "is being";
  std::string msg;
  if (cm == CreationMeta::INFERENCE_MODE || cm == CreationMeta::NO_GRAD_MODE || !fn) {
    std::string prefix =
        fn ? str_cat("Output ", m->output_nr, " of ", op_name(*fn), " is a view of a view which was created in")
           : std::string("A view was created in");
    if (cm == CreationMeta::INFERENCE_MODE) {
      msg = str_cat(prefix, " inference mode and ", modified, " modified inplace in normal mode.");
    } else {
      msg = str_cat(prefix, " no_grad mode and ", modified, " modified inplace with grad mode enabled.");
    }
  } else {
    msg = str_cat("Output ", m->output_nr, " of ", op_name(*fn), " is a view and ", modified, " modified inplace.");
  }
  if (cm == CreationMeta::MULTI_OUTPUT_NODE) {
    msg +=
        " This view is the output of a function that returns multiple views. Such functions do not allow the "
        "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.";
  } else if (cm == CreationMeta::NO_GRAD_MODE) {
    msg +=
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
        "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
        "inplace to be tracked) or both outside (if you want the inplace to be tracked).";
  } else if (cm == CreationMeta::INFERENCE_MODE) {
    msg +=
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
        "moving both the view and the inplace either both inside the inference_mode block (if you don't want "
        "the inplace to be tracked) or both outside (if you want the inplace to be tracked).";
  }
  throw Error(msg);
}

}  // namespace

namespace {
// node(grad) feeds next: the gradient of a bit flipped on the view.
std::shared_ptr<Node> wrap_view_bit(std::shared_ptr<Node> node, std::shared_ptr<Node> next, const TensorBase& self) {
  node->set_next_edges({Edge(std::move(next), 0)});
  node->add_input_metadata(self);
  return node;
}

// The view's gradient from its base's (or back): conjugated and/or negated
// as the view reads its elements.
Tensor with_view_bits(const Tensor& grad, uint8_t bits) {
  Tensor g = grad;
  if ((bits & TensorImpl::kConjBit) && g.is_complex()) g = ember::conj_physical(g);
  if (bits & TensorImpl::kNegBit) g = ember::neg(g);
  return g;
}
}  // namespace

void refresh_view_grad_fn(const TensorBase& self, AutogradMeta* m) {
  if (!m->grad_fn && !m->view_base.requires_grad()) return;
  const uint32_t current = self.unsafeGetTensorImpl()->version();
  if (m->attr_version == current) return;
  handle_view_on_rebase(m, /*indirect=*/true);
  const Tensor& base = m->view_base;
  auto fn = std::make_shared<generated::AsStridedBackward0>();
  fn->self_sizes = base.sizes().vec();
  fn->self_strides = base.strides().vec();
  fn->self_storage_offset = base.storage_offset();
  fn->size = self.sizes().vec();
  fn->stride = self.strides().vec();
  fn->storage_offset = self.storage_offset();
  fn->set_next_edges(collect_next_edges(base));
  std::shared_ptr<Node> last = std::move(fn);
  last->add_input_metadata(self);
  // A conjugate or negative view reads the base's elements conjugated or negated.
  const uint8_t bits = self.unsafeGetTensorImpl()->math_bits() ^ base.unsafeGetTensorImpl()->math_bits();
  if (bits & TensorImpl::kConjBit) last = wrap_view_bit(std::make_shared<generated::ConjBackward0>(), last, self);
  if (bits & TensorImpl::kNegBit) last = wrap_view_bit(std::make_shared<generated::NegViewBackward0>(), last, self);
  m->output_nr = 0;
  m->grad_fn = std::move(last);
  m->attr_version = current;
}

void check_inplace_view(const Tensor& self, AutogradMeta* m) {
  handle_view_on_rebase(m, /*indirect=*/false);
  if (self.requires_grad() && m->view_base.is_leaf()) {
    throw Error("a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

void rebase_view_history(const Tensor& self, AutogradMeta* m, const std::shared_ptr<Node>& fn) {
  fn->add_input_metadata(self);
  auto copy_slices = std::make_shared<CopySlices>(m->view_base, self, fn);
  AutogradMeta* bm = materialize_meta(m->view_base);
  bm->grad_fn = std::move(copy_slices);
  bm->output_nr = 0;
  bm->grad_accumulator.reset();
  refresh_view_grad_fn(self, m);
}

CopySlices::CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn)
    : base_sizes_(base.sizes()),
      base_strides_(base.strides()),
      base_offset_(base.storage_offset()),
      view_sizes_(view.sizes()),
      view_strides_(view.strides()),
      view_offset_(view.storage_offset()),
      view_bits_(view.unsafeGetTensorImpl()->math_bits() ^ base.unsafeGetTensorImpl()->math_bits()),
      fn_(std::move(fn)) {
  add_input_metadata(base);
  edge_list edges;
  edges.reserve(fn_->num_outputs());
  edges.push_back(gradient_edge(base));
  for (size_t i = 1; i < fn_->num_outputs(); ++i) edges.push_back(fn_->next_edge(i));
  set_next_edges(std::move(edges));
}

variable_list CopySlices::apply(variable_list&& grads) {
  variable_list out(num_outputs());
  if (grads.empty() || !grads[0].defined()) return out;
  const Tensor& grad = grads[0];
  // The base's gradient, laid out like the base, and the view's part of it.
  Tensor result = empty_strided(base_sizes_, base_strides_, grad.dtype(), grad.device());
  result.copy_(grad);
  Tensor grad_slice = result.as_strided(view_sizes_, view_strides_, view_offset_ - base_offset_);
  variable_list res = fn_->apply({view_bits_ ? with_view_bits(grad_slice, view_bits_) : grad_slice.clone()});
  for (size_t i = 0; i < res.size() && i < out.size(); ++i) {
    if (!should_compute_output(i)) continue;
    if (i == 0) {
      if (res[0].defined()) {
        grad_slice.copy_(view_bits_ ? with_view_bits(res[0], view_bits_) : res[0]);
      } else {
        grad_slice.zero_();
      }
      out[0] = result;
    } else {
      out[i] = std::move(res[i]);
    }
  }
  return out;
}

void CopySlices::release_variables() { fn_->release_variables(); }

}  // namespace ember::autograd
