// libember_cuda: registers the CUDA backend with the CPU library on load.
// Kernels arrive with later work; today it reports the runtime and devices.
#include <cuda_runtime_api.h>

#include "ember/core/Error.h"
#include "ember/ops/BuildInfo.h"

namespace ember::cuda {
namespace {

void check(cudaError_t err) {
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error
    throw Error(std::string(cudaGetErrorString(err)));
  }
}

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
  std::string init_error() const override {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaSuccess) return n > 0 ? "" : "No CUDA GPUs are available";
    cudaGetLastError();
    switch (err) {
      case cudaErrorNoDevice: return "No CUDA GPUs are available";
      case cudaErrorInsufficientDriver: {
        int driver = -1;
        if (cudaDriverGetVersion(&driver) != cudaSuccess) cudaGetLastError();
        if (driver <= 0) {
          return "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
                 "driver from http://www.nvidia.com/Download/index.aspx";
        }
        return "The NVIDIA driver on your system is too old (found version " + std::to_string(driver) +
               "). Please update your GPU driver by downloading and installing a new version from the URL: "
               "http://www.nvidia.com/Download/index.aspx";
      }
      case cudaErrorInitializationError: return "CUDA driver initialization failed, you might not have a CUDA gpu.";
      default:
        return std::string("Unexpected error from cudaGetDeviceCount(). Error ") + std::to_string(int(err)) + ": " +
               cudaGetErrorString(err);
    }
  }
  int current_device() const override {
    int index = 0;
    check(cudaGetDevice(&index));
    return index;
  }
  void set_device(int index) const override { check(cudaSetDevice(index)); }
  void synchronize() const override { check(cudaDeviceSynchronize()); }
  CudaDeviceProperties device_properties(int index) const override {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, index));
    return {prop.name, prop.major, prop.minor, static_cast<long long>(prop.totalGlobalMem), prop.multiProcessorCount};
  }
};

Hooks g_hooks;
const bool g_registered = [] {
  register_cuda_hooks(&g_hooks);
  return true;
}();

}  // namespace
}  // namespace ember::cuda
