#include "ember/autograd/GradMode.h"

#include "ember/autograd/GraphHooks.h"
#include "ember/core/Storage.h"

#include <atomic>

namespace ember::autograd {

namespace detail {
thread_local int t_kernel_depth = 0;
}

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_layout_enforced = true;
// Process-wide, as PyTorch's anomaly mode.
std::atomic<bool> g_anomaly{false};
std::atomic<bool> g_anomaly_check_nan{true};
std::string (*g_trace_capture)() = nullptr;
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }
bool InferenceMode::is_enabled() { return inference_mode_enabled(); }
void InferenceMode::set_enabled(bool enabled) { set_inference_mode_enabled(enabled); }

bool GradLayoutPolicy::is_enforced() { return t_layout_enforced; }
void GradLayoutPolicy::set_enforced(bool enforced) { t_layout_enforced = enforced; }
bool AnomalyMode::is_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
bool AnomalyMode::should_check_nan() { return g_anomaly_check_nan.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled, bool check_nan) {
  g_anomaly = enabled;
  g_anomaly_check_nan = check_nan;
}
void AnomalyMode::set_trace_capture(std::string (*capture)()) { g_trace_capture = capture; }
std::string AnomalyMode::capture_trace() { return g_trace_capture ? g_trace_capture() : std::string(); }

}  // namespace ember::autograd
