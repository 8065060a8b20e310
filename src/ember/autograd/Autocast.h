#pragma once
// Automatic mixed precision (ember.autocast): thread-local state and the casts
// that generated operators apply on entry (Note [Autocast]).

#include <optional>
#include <vector>

#include "ember/ops/Tensor.h"

namespace ember::autocast {

// Note [Autocast]
// An operator with an `autocast:` policy in ops.yaml (and a Python function
// in ember/amp/_policies.py) checks on entry whether autocast is active for
// its first tensor's device. If so it casts its floating-point arguments
// - lower_precision_fp: to the autocast dtype (bfloat16/float16),
// - fp32: to float32,
// - promote: to the widest floating type among them,
// and calls itself again with autocast excluded for that device, so the ops
// it runs inside are not cast again. float64 arguments are never cast. Casts
// of float32 leaf parameters to the low precision type are cached until the
// outermost autocast region exits, as in PyTorch.

enum class Policy { LowerPrecisionFp, Fp32, Promote };

namespace detail {
// Bit d set: autocast is enabled for DeviceType d and not excluded.
extern EMBER_API thread_local unsigned t_active_mask;
}  // namespace detail

inline bool any_active() { return detail::t_active_mask != 0; }
inline bool is_active(DeviceType d) { return (detail::t_active_mask >> static_cast<unsigned>(d)) & 1u; }

EMBER_API bool is_enabled(DeviceType d);
EMBER_API void set_enabled(DeviceType d, bool enabled);
EMBER_API ScalarType get_dtype(DeviceType d);
EMBER_API void set_dtype(DeviceType d, ScalarType t);
EMBER_API bool is_cache_enabled();
EMBER_API void set_cache_enabled(bool enabled);
EMBER_API int increment_nesting();
EMBER_API int decrement_nesting();
EMBER_API void clear_cache();
// Excludes (or re-admits) one device; returns the previous exclusion.
EMBER_API bool set_excluded(DeviceType d, bool excluded);

class ExcludeGuard {
 public:
  explicit ExcludeGuard(DeviceType d) : device_(d), prev_(set_excluded(d, true)) {}
  ~ExcludeGuard() { set_excluded(device_, prev_); }
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;

 private:
  DeviceType device_;
  bool prev_;
};

// The device an operator's autocast check looks at: its first tensor's.
inline DeviceType device_of(const Tensor& t) { return t.defined() ? t.device().type : DeviceType::CPU; }
inline DeviceType device_of(const std::optional<Tensor>& t) { return t ? device_of(*t) : DeviceType::CPU; }
inline DeviceType device_of(const TensorList& ts) { return ts.empty() ? DeviceType::CPU : device_of(ts[0]); }

// Floating, not float64, on the autocast device: the arguments a cast touches.
EMBER_API bool is_eligible(const Tensor& t, DeviceType d);

EMBER_API Tensor cast(ScalarType to, const Tensor& t, DeviceType d);
inline std::optional<Tensor> cast(ScalarType to, const std::optional<Tensor>& t, DeviceType d) {
  if (!t) return t;
  return cast(to, *t, d);
}
EMBER_API TensorList cast(ScalarType to, const TensorList& ts, DeviceType d);
// Non-tensor arguments pass through.
template <typename T>
const T& cast(ScalarType, const T& value, DeviceType) {
  return value;
}

// The dtype a policy casts to; for Promote, the widest eligible input type.
namespace detail {
EMBER_API void widen(ScalarType& current, const Tensor& t, DeviceType d);
inline void widen(ScalarType& current, const std::optional<Tensor>& t, DeviceType d) {
  if (t) widen(current, *t, d);
}
inline void widen(ScalarType& current, const TensorList& ts, DeviceType d) {
  for (const Tensor& t : ts) widen(current, t, d);
}
template <typename T>
void widen(ScalarType&, const T&, DeviceType) {}
}  // namespace detail

template <typename... Args>
ScalarType target_type(Policy policy, DeviceType d, const Args&... args) {
  if (policy == Policy::LowerPrecisionFp) return get_dtype(d);
  if (policy == Policy::Fp32) return ScalarType::Float;
  ScalarType widest = get_dtype(d);
  (detail::widen(widest, args, d), ...);
  return widest;
}

}  // namespace ember::autocast
