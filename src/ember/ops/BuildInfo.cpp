#include "ember/ops/BuildInfo.h"

namespace ember {

namespace {
CudaHooks* g_cuda_hooks = nullptr;
}

std::string openmp_info() {
#ifdef _OPENMP
  const int v = _OPENMP;
  const char* name = v >= 202011 ? "5.1" : v >= 201811 ? "5.0" : v >= 201511 ? "4.5" : v >= 201307 ? "4.0" : "3.x";
  return "OpenMP " + std::to_string(v) + " (a.k.a. OpenMP " + name + ")";
#else
  return "";
#endif
}

void register_cuda_hooks(CudaHooks* hooks) { g_cuda_hooks = hooks; }
std::string cuda_version() { return g_cuda_hooks ? g_cuda_hooks->runtime_version() : std::string(); }
int cuda_device_count() { return g_cuda_hooks ? g_cuda_hooks->device_count() : 0; }
const CudaHooks* cuda_hooks() { return g_cuda_hooks; }

}  // namespace ember
