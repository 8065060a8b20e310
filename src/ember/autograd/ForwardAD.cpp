// Forward-mode AD: dual levels and per-tensor tangents.
#include "ember/autograd/ForwardAD.h"

#include <mutex>
#include <string>
#include <unordered_set>

#include "ember/autograd/AutogradMeta.h"
#include "ember/autograd/ViewAutograd.h"
#include "ember/ops/Ops.h"

// Note [Forward AD]
// As in PyTorch, one dual level may be open at a time (index 0). Each
// opening gets a fresh epoch number; a tensor's tangent lives in its
// AutogradMeta together with the epoch it was set at, so a tangent left over
// from a closed level is never read. Closing a level also drops the tangents
// it set (the metas carrying one are listed; a dying meta removes itself).
// Generated operators compute their outputs' tangents from the formulas of
// ops.yaml after the kernel runs, with propagation switched off while the
// formula runs (DisableGuard): formulas see primals only, so a tangent never
// carries a tangent of its own. Reverse mode still records through them.

namespace ember::autograd {

namespace forward_ad::detail {
std::atomic<bool> g_level_open{false};
thread_local int t_disabled = 0;
}  // namespace forward_ad::detail

namespace {
std::mutex g_mutex;
uint64_t g_next_epoch = 1;
uint64_t g_open_epoch = 0;  // 0: no level open
std::unordered_set<AutogradMeta*> g_with_tangent;
}  // namespace

void forget_fw_grad(AutogradMeta* meta) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_with_tangent.erase(meta);
}

namespace forward_ad {

int64_t enter_dual_level() {
  std::lock_guard<std::mutex> lock(g_mutex);
  EMBER_CHECK(g_open_epoch == 0, "Nested forward mode AD is not supported at the moment");
  g_open_epoch = g_next_epoch++;
  detail::g_level_open.store(true);
  return 0;
}

void exit_dual_level(int64_t level) {
  std::vector<Tensor> dropped;  // released after the lock
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    EMBER_CHECK(level >= 0, "Dual level must be a positive number.");
    EMBER_CHECK(g_open_epoch != 0 && level == 0,
                "Trying to exit a forward AD level that was not the last one that was created. This is not "
                "supported.");
    for (AutogradMeta* m : g_with_tangent) {
      dropped.push_back(std::move(m->fw_grad));
      m->fw_grad = Tensor();
      m->fw_grad_epoch = 0;
    }
    g_with_tangent.clear();
    g_open_epoch = 0;
    detail::g_level_open.store(false);
  }
}

int64_t current_level() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_open_epoch ? 0 : -1;
}

Tensor fw_grad(const TensorBase& t) {
  AutogradMeta* m = get_meta(t);
  if (!m || !m->fw_grad_epoch || !detail::g_level_open.load(std::memory_order_relaxed)) return Tensor();
  std::lock_guard<std::mutex> lock(g_mutex);
  return m->fw_grad_epoch == g_open_epoch ? m->fw_grad : Tensor();
}

void set_fw_grad(const TensorBase& t, const Tensor& tangent) {
  AutogradMeta* m = materialize_meta(t);
  Tensor previous;  // released after the lock (its meta's destructor takes it)
  std::lock_guard<std::mutex> lock(g_mutex);
  EMBER_CHECK(g_open_epoch != 0, "forward AD: no dual level is open (this is a bug)");
  previous = std::move(m->fw_grad);
  m->fw_grad = tangent;
  m->fw_grad_epoch = g_open_epoch;
  g_with_tangent.insert(m);
}

namespace {

void check_level(int64_t level, const char* what) {
  const int64_t open = current_level();
  EMBER_CHECK(open >= 0,
              "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
              "enter_dual_level() first.");
  EMBER_CHECK(level == open, "Invalid level given to ", what);
}

std::string size_text(IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

// The tangent with the primal's strides (PyTorch keeps the two layouts equal).
Tensor with_layout_of(const Tensor& primal, const Tensor& tangent) {
  if (tangent.strides().equals(primal.strides()) && tangent.storage_offset() == 0) return tangent;
  Tensor out = ember::empty_strided(primal.sizes(), primal.strides(), tangent.scalar_type(), tangent.device());
  out.copy_(tangent);
  return out;
}

}  // namespace

Tensor make_dual(const Tensor& primal, const Tensor& tangent, int64_t level) {
  check_level(level, "_make_dual");
  EMBER_CHECK(!fw_grad(primal).defined(),
              "Making a dual Tensor based on a Tensor that already has a forward "
              "gradient at the same level ",
              level, " is not supported.");
  EMBER_CHECK(!fw_grad(tangent).defined(),
              "Setting a forward grad that itself has a forward gradient at the same level", level,
              " is not supported.");
  EMBER_CHECK(tangent.sizes().equals(primal.sizes()),
              "Trying to set a forward gradient that has a different size than that of the original Tensor, this "
              "is not supported. Tensor is of size ",
              size_text(primal.sizes()), " while the given forward gradient is of size ", size_text(tangent.sizes()),
              ".");
  Tensor dual;
  Tensor stored;
  {
    DisableGuard no_fw;
    // A view of the whole primal, recorded as PyTorch records it (ViewBackward0).
    dual = primal.view(primal.sizes());
    stored = with_layout_of(primal, tangent);
  }
  set_fw_grad(dual, stored);
  return dual;
}

Tensor fw_primal(const Tensor& t, int64_t level) {
  DisableGuard no_fw;
  return ember::_fw_primal(t, level);
}

std::vector<Tensor> tangent_of(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(tangent_of(t));
  return out;
}

Tensor or_zeros(const Tensor& tangent, const Tensor& primal) {
  if (tangent.defined()) return tangent;
  return ember::zeros_like(primal);
}

std::optional<Tensor> or_zeros(const Tensor& tangent, const std::optional<Tensor>& primal) {
  if (!primal) return std::nullopt;
  return or_zeros(tangent, *primal);
}

std::vector<Tensor> or_zeros(const std::vector<Tensor>& tangents, const std::vector<Tensor>& primals) {
  std::vector<Tensor> out;
  out.reserve(primals.size());
  for (size_t i = 0; i < primals.size(); ++i) out.push_back(or_zeros(tangents[i], primals[i]));
  return out;
}

Tensor copy_of(const Tensor& t) {
  DisableGuard no_fw;
  return t.clone();
}

Tensor conj(const Tensor& t) {
  if (!t.defined() || !t.is_complex()) return t;
  return t.conj_physical();
}

Tensor accumulate(const Tensor& acc, const Tensor& term) {
  if (!acc.defined()) return term;
  if (!term.defined()) return acc;
  return acc + term;
}

// Note [Zero tangents]
// PyTorch's forward formulas see a missing tangent of a defined input as an
// efficient zero tensor, so a sum of terms such as mm's a_t.mm(b) + a.mm(b_t)
// is still computed as a sum: when the tangent records a graph (parameters
// that require grad), its grad_fn is AddBackward0 whichever tangents exist.
// Here a missing tangent drops its term, so where the sum lost its add,
// as_sum adds -0.0: x + -0.0 is x for every x (-0.0 and NaN included), and
// the add is recorded. Without a graph to show, nothing is computed.
Tensor as_sum(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return t;
  const AutogradMeta* meta = get_meta(t);
  if (meta && meta->grad_fn && meta->grad_fn->name() == "AddBackward0") return t;
  // (-0.0 - 0.0i for complex tangents, keeping a -0.0 imaginary part too)
  return t + wrapped_scalar(t.is_complex() ? Scalar(std::complex<double>(-0.0, -0.0)) : Scalar(-0.0));
}

namespace {

// Whether writing a tensor of t's layout touches each element once (no
// broadcast dimension).
bool writable_layout(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) == 0 && t.size(d) > 1) return false;
  }
  return true;
}

// The tangent broadcast and cast to the result's shape and dtype, with the
// result's strides (as PyTorch keeps them: a view of the result and the same
// view of its tangent then agree).
Tensor fit_to(const Tensor& result, const Tensor& tangent) {
  Tensor t = tangent;
  if (!t.sizes().equals(result.sizes())) t = t.expand(result.sizes());
  if (t.scalar_type() != result.scalar_type()) t = t.to(result.scalar_type());
  if (!t.strides().equals(result.strides()) && writable_layout(result)) {
    Tensor same = ember::empty_strided(result.sizes(), result.strides(), t.scalar_type(), t.device());
    same.copy_(t);
    t = same;
  }
  return t;
}

bool carries_tangent(const Tensor& result) {
  return result.defined() && (result.is_floating_point() || result.is_complex());
}

}  // namespace

void set_result_tangent(const Tensor& result, const Tensor& tangent) {
  if (!tangent.defined() || !carries_tangent(result)) return;
  Tensor t;
  {
    DisableGuard no_fw;
    t = fit_to(result, tangent);
  }
  set_fw_grad(result, t);
}

void set_inplace_tangent(const Tensor& self, const Tensor& tangent) {
  if (!tangent.defined() || !carries_tangent(self)) return;
  DisableGuard no_fw;
  Tensor existing = fw_grad(self);
  if (existing.defined()) {
    if (!existing.is_same(tangent)) existing.copy_(tangent);
    return;
  }
  if (is_view(self)) {
    // The base gets a zero tangent, and the view's tangent is the matching view of it.
    const Tensor& base = view_base(self);
    Tensor base_tangent = fw_grad(base);
    if (!base_tangent.defined()) {
      base_tangent = ember::zeros(base.sizes(), self.scalar_type(), base.device());
      if (base.strides().equals(base_tangent.strides())) set_fw_grad(base, base_tangent);
    }
    if (base.strides().equals(base_tangent.strides())) {
      Tensor view_tangent = base_tangent.as_strided(self.sizes(), self.strides(), self.storage_offset());
      view_tangent.copy_(tangent);
      set_fw_grad(self, view_tangent);
      return;
    }
  }
  Tensor own = ember::empty_strided(self.sizes(), self.strides(), self.scalar_type(), self.device());
  own.copy_(tangent);
  set_fw_grad(self, own);
}

void throw_not_implemented(const char* op) {
  throw NotImplementedError(str_cat(
      "Trying to use forward AD with ", op,
      " that does not support it because it has not been implemented yet.\nPlease file an issue to PyTorch at "
      "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize its "
      "implementation or submit a PR adding the implementation to derivatives.yaml"));
}

}  // namespace forward_ad
}  // namespace ember::autograd
