#include "ember/autograd/GradMode.h"

namespace ember::autograd {

namespace detail {
thread_local int t_kernel_depth = 0;
}

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_inference = false;
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }
bool InferenceMode::is_enabled() { return t_inference; }
void InferenceMode::set_enabled(bool enabled) { t_inference = enabled; }

}  // namespace ember::autograd
