#pragma once
// Thread-local switches: whether autograd records (grad mode) and whether
// inference mode is on.

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

// Used by generated code around a kernel whose autograd is recorded by the
// caller: disables grad mode only when active, so the common path costs nothing.
class GradModeBelowAutograd {
 public:
  explicit GradModeBelowAutograd(bool active) : active_(active) {
    if (active_) GradMode::set_enabled(false);
  }
  ~GradModeBelowAutograd() {
    if (active_) GradMode::set_enabled(true);
  }
  GradModeBelowAutograd(const GradModeBelowAutograd&) = delete;
  GradModeBelowAutograd& operator=(const GradModeBelowAutograd&) = delete;

 private:
  bool active_;
};

}  // namespace ember::autograd
