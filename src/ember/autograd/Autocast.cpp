#include "ember/autograd/Autocast.h"

#include <array>
#include <unordered_map>
#include <utility>

#include "ember/autograd/ViewAutograd.h"
#include "ember/ops/Ops.h"

namespace ember::autocast {

namespace detail {
thread_local unsigned t_active_mask = 0;
}  // namespace detail

namespace {

struct State {
  std::array<bool, kNumDeviceTypes> enabled{};
  std::array<bool, kNumDeviceTypes> excluded{};
  std::array<ScalarType, kNumDeviceTypes> dtype{};
  bool cache_enabled = true;
  int nesting = 0;
  // Source TensorImpl -> (source, cast). Holding the source keeps its address
  // from being reused by another tensor while the entry lives.
  std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>> cache;

  State() {
    dtype.fill(ScalarType::Half);
    dtype[static_cast<int>(DeviceType::CPU)] = ScalarType::BFloat16;
  }
};

thread_local State t_state;

void refresh_mask() {
  unsigned mask = 0;
  for (int d = 0; d < kNumDeviceTypes; ++d) {
    if (t_state.enabled[d] && !t_state.excluded[d]) mask |= 1u << d;
  }
  detail::t_active_mask = mask;
}

int index_of(DeviceType d) { return static_cast<int>(d); }

}  // namespace

bool is_enabled(DeviceType d) { return t_state.enabled[index_of(d)]; }

void set_enabled(DeviceType d, bool enabled) {
  t_state.enabled[index_of(d)] = enabled;
  refresh_mask();
}

ScalarType get_dtype(DeviceType d) { return t_state.dtype[index_of(d)]; }
void set_dtype(DeviceType d, ScalarType t) { t_state.dtype[index_of(d)] = t; }
bool is_cache_enabled() { return t_state.cache_enabled; }
void set_cache_enabled(bool enabled) { t_state.cache_enabled = enabled; }
int increment_nesting() { return ++t_state.nesting; }
int decrement_nesting() { return --t_state.nesting; }
void clear_cache() { t_state.cache.clear(); }

bool set_excluded(DeviceType d, bool excluded) {
  const bool prev = t_state.excluded[index_of(d)];
  t_state.excluded[index_of(d)] = excluded;
  refresh_mask();
  return prev;
}

bool is_eligible(const Tensor& t, DeviceType d) {
  return t.defined() && t.device().type == d && t.is_floating_point() && t.scalar_type() != ScalarType::Double;
}

Tensor cast(ScalarType to, const Tensor& t, DeviceType d) {
  if (!is_eligible(t, d) || t.scalar_type() == to) return t;
  const bool cacheable = t_state.cache_enabled && to == get_dtype(d) && t.scalar_type() == ScalarType::Float &&
                         t.requires_grad() && t.is_leaf() && !autograd::is_view(t);
  if (!cacheable) return ember::to(t, to);
  auto it = t_state.cache.find(t.unsafeGetTensorImpl());
  if (it != t_state.cache.end()) return it->second.second;
  Tensor result = ember::to(t, to);
  t_state.cache.emplace(t.unsafeGetTensorImpl(), std::make_pair(t, result));
  return result;
}

TensorList cast(ScalarType to, const TensorList& ts, DeviceType d) {
  TensorList out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(cast(to, t, d));
  return out;
}

// The widest type among the eligible arguments: equal types stay, float32
// beats the low precision types, and two different low precision types
// are an error (as PyTorch's).
void detail::widen(ScalarType& current, const Tensor& t, DeviceType d) {
  if (!is_eligible(t, d) || t.scalar_type() == current) return;
  if (current != ScalarType::Float && t.scalar_type() != ScalarType::Float) {
    throw Error("Unexpected floating ScalarType in at::autocast::prioritize");
  }
  current = ScalarType::Float;
}

}  // namespace ember::autocast
