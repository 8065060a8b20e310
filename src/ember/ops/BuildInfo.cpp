#include "ember/ops/BuildInfo.h"


namespace ember {

namespace {
CudaHooks* g_cuda_hooks = nullptr;
}

void register_cuda_hooks(CudaHooks* hooks) { g_cuda_hooks = hooks; }
std::string cuda_version() { return g_cuda_hooks ? g_cuda_hooks->runtime_version() : std::string(); }
int cuda_device_count() { return g_cuda_hooks ? g_cuda_hooks->device_count() : 0; }

}  // namespace ember
