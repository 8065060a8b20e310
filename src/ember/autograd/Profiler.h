#pragma once
// The operator profiler (ember.profiler, ember.autograd.profiler): while it is
// on, every operator call and backward node records a timed event.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ember/ops/Tensor.h"

namespace ember::profiler {

struct Event {
  std::string name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread = 0;
  std::vector<std::vector<int64_t>> input_shapes;
};

namespace detail {
extern EMBER_API std::atomic<bool> g_active;
extern EMBER_API std::atomic<bool> g_record_shapes;
}  // namespace detail

inline bool is_active() { return detail::g_active.load(std::memory_order_relaxed); }
inline bool records_shapes() { return detail::g_record_shapes.load(std::memory_order_relaxed); }

// Starts a fresh recording; stop() returns its events in start order.
EMBER_API void start(bool record_shapes);
EMBER_API std::vector<Event> stop();
EMBER_API int64_t now_ns();

// Times the enclosing scope as one event.
class EMBER_API RecordScope {
 public:
  explicit RecordScope(std::string name);
  ~RecordScope();
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;
  void set_input_shapes(std::vector<std::vector<int64_t>> shapes) { event_.input_shapes = std::move(shapes); }

 private:
  Event event_;
};

// One entry per argument: a tensor's sizes, [] for anything else.
inline std::vector<int64_t> shape_of(const Tensor& t) {
  return t.defined() ? std::vector<int64_t>(t.sizes().begin(), t.sizes().end()) : std::vector<int64_t>{};
}
inline std::vector<int64_t> shape_of(const std::optional<Tensor>& t) {
  return t ? shape_of(*t) : std::vector<int64_t>{};
}
template <typename T>
std::vector<int64_t> shape_of(const T&) {
  return {};
}
template <typename... Args>
std::vector<std::vector<int64_t>> shapes_of(const Args&... args) {
  return {shape_of(args)...};
}

}  // namespace ember::profiler
