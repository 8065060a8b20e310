// libember_cuda: registers the CUDA backend with the CPU library on load.
// Kernels arrive with later work; today it reports the runtime and devices.
#include <cuda_runtime_api.h>

#include "ember/ops/BuildInfo.h"

namespace ember::cuda {
namespace {

class Hooks final : public CudaHooks {
 public:
  std::string runtime_version() const override {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  }
  int device_count() const override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no driver" error
      return 0;
    }
    return n;
  }
};

Hooks g_hooks;
const bool g_registered = [] {
  register_cuda_hooks(&g_hooks);
  return true;
}();

}  // namespace
}  // namespace ember::cuda
