#pragma once
// Forward-mode automatic differentiation: dual levels and the tangents that
// tensors carry at the open level (see Note [Forward AD] in ForwardAD.cpp).

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/autograd/GradMode.h"
#include "ember/ops/Tensor.h"

namespace ember::autograd::forward_ad {

namespace detail {
// True while a dual level is open (any thread).
extern EMBER_API std::atomic<bool> g_level_open;
// Depth of DisableGuard on this thread (formulas run with primals only).
extern EMBER_API thread_local int t_disabled;
}  // namespace detail

// Whether a generated operator should compute tangents now: a level is open,
// no tangent formula is running on this thread, and the call is not nested
// inside a kernel.
inline bool is_active() {
  return detail::g_level_open.load(std::memory_order_relaxed) && detail::t_disabled == 0 && at_top_level();
}

// Switches tangent propagation off for a scope (while a tangent formula runs).
class DisableGuard {
 public:
  DisableGuard() { ++detail::t_disabled; }
  ~DisableGuard() { --detail::t_disabled; }
  DisableGuard(const DisableGuard&) = delete;
  DisableGuard& operator=(const DisableGuard&) = delete;
};

// Opens the dual level (PyTorch allows one at a time) and returns its index.
EMBER_API int64_t enter_dual_level();
// Closes `level`, dropping every tangent recorded at it.
EMBER_API void exit_dual_level(int64_t level);
// The open level, or -1.
EMBER_API int64_t current_level();

// t's tangent at the open level, or an undefined tensor.
EMBER_API Tensor fw_grad(const TensorBase& t);
// Stores `tangent` as t's tangent at the open level (no checks).
EMBER_API void set_fw_grad(const TensorBase& t, const Tensor& tangent);

// make_dual: a view of primal carrying tangent at `level`, with PyTorch's checks.
EMBER_API Tensor make_dual(const Tensor& primal, const Tensor& tangent, int64_t level);
// A view of t without its tangent at `level` (Tensor._fw_primal).
EMBER_API Tensor fw_primal(const Tensor& t, int64_t level);

// ---- helpers of the generated operators ----------------------------------
inline Tensor tangent_of(const Tensor& t) { return t.defined() ? fw_grad(t) : Tensor(); }
inline Tensor tangent_of(const std::optional<Tensor>& t) { return t ? tangent_of(*t) : Tensor(); }
EMBER_API std::vector<Tensor> tangent_of(const std::vector<Tensor>& ts);
inline bool any_defined(const Tensor& t) { return t.defined(); }
inline bool any_defined(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) {
    if (t.defined()) return true;
  }
  return false;
}
// The tangent, or zeros shaped like the primal when it has none.
EMBER_API Tensor or_zeros(const Tensor& tangent, const Tensor& primal);
EMBER_API std::optional<Tensor> or_zeros(const Tensor& tangent, const std::optional<Tensor>& primal);
EMBER_API std::vector<Tensor> or_zeros(const std::vector<Tensor>& tangents, const std::vector<Tensor>& primals);
// Whether any argument (tensor, optional tensor, tensor list) has a tangent.
inline bool has_tangent(const Tensor& t) { return tangent_of(t).defined(); }
inline bool has_tangent(const std::optional<Tensor>& t) { return tangent_of(t).defined(); }
inline bool has_tangent(const std::vector<Tensor>& ts) { return any_defined(tangent_of(ts)); }
template <typename... Ts>
inline bool any_tangent(const Ts&... ts) {
  return (... || has_tangent(ts));
}
// A copy of t's value, made before an in-place kernel overwrites it.
EMBER_API Tensor copy_of(const Tensor& t);
// The complex conjugate of a complex tangent; others unchanged.
EMBER_API Tensor conj(const Tensor& t);
// acc + term, where an undefined acc counts as zero.
EMBER_API Tensor accumulate(const Tensor& acc, const Tensor& term);
// t as the result of an add, for a formula whose sum lost terms to missing
// tangents (Note [Zero tangents] in ForwardAD.cpp).
EMBER_API Tensor as_sum(const Tensor& t);
// Gives a fresh output its tangent, broadcast and cast to the output's shape and dtype.
EMBER_API void set_result_tangent(const Tensor& result, const Tensor& tangent);
// Updates the tangent of a tensor modified in place: written into its
// existing tangent (so views of it see the change), else into a view of its
// base's tangent when it is a view, else stored.
EMBER_API void set_inplace_tangent(const Tensor& self, const Tensor& tangent);
// PyTorch's NotImplementedError for an operator without a forward formula.
[[noreturn]] EMBER_API void throw_not_implemented(const char* op);

}  // namespace ember::autograd::forward_ad
