#pragma once
// Thread-local switches: whether autograd records (grad mode) and whether
// inference mode is on.

#include <string>

#include "ember/core/Macros.h"

namespace ember::autograd {

struct EMBER_API GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

struct EMBER_API InferenceMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Anomaly detection (ember.autograd.detect_anomaly): nodes remember the
// forward call that made them, and backward checks node outputs for NaN.
struct EMBER_API AnomalyMode {
  static bool is_enabled();
  static bool should_check_nan();
  static void set_enabled(bool enabled, bool check_nan = true);
  // Set by the Python layer: returns the current Python stack as text.
  static void set_trace_capture(std::string (*capture)());
  static std::string capture_trace();
};

// Sets grad mode for a scope and restores it afterwards.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~GradModeGuard() { GradMode::set_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

// Note [Below autograd]
// Operators called by a kernel (a native function calling ember::copy_, say)
// are implementation details: like PyTorch's dispatch below the Autograd
// key, they record no graph and bump no version counter. Generated wrappers
// hold a BelowAutogradGuard around their kernel; an operator sees it is
// nested through at_top_level().
namespace detail {
extern EMBER_API thread_local int t_kernel_depth;
}
inline bool at_top_level() { return detail::t_kernel_depth == 0; }

class BelowAutogradGuard {
 public:
  BelowAutogradGuard() { ++detail::t_kernel_depth; }
  ~BelowAutogradGuard() { --detail::t_kernel_depth; }
  BelowAutogradGuard(const BelowAutogradGuard&) = delete;
  BelowAutogradGuard& operator=(const BelowAutogradGuard&) = delete;
};

// The engine runs backward formulas as top-level calls even when it was
// itself reached from inside a kernel.
class TopLevelGuard {
 public:
  TopLevelGuard() : saved_(detail::t_kernel_depth) { detail::t_kernel_depth = 0; }
  ~TopLevelGuard() { detail::t_kernel_depth = saved_; }
  TopLevelGuard(const TopLevelGuard&) = delete;
  TopLevelGuard& operator=(const TopLevelGuard&) = delete;

 private:
  int saved_;
};

}  // namespace ember::autograd
