#include "ember/cuda/CudaContext.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/Error.h"

namespace ember::cuda {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  cudaGetLastError();  // clear the sticky error so later calls can proceed
  (void)expr, (void)file, (void)line;
  throw Error(std::string("CUDA error: ") + cudaGetErrorString(err));
}

int current_device() {
  int index = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&index));
  return index;
}

cudaStream_t current_stream(int device) {
  (void)device;
  return nullptr;  // the legacy default stream, PyTorch's default
}

const cudaDeviceProp& device_properties(int device) {
  static std::once_flag once;
  static std::vector<std::unique_ptr<cudaDeviceProp>> props;
  static std::mutex mutex;
  std::call_once(once, [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      n = 0;
    }
    props.resize(n);
  });
  if (device < 0) device = current_device();
  if (device >= static_cast<int>(props.size())) throw Error("CUDA error: invalid device ordinal");
  std::lock_guard<std::mutex> lock(mutex);
  if (!props[device]) {
    auto p = std::make_unique<cudaDeviceProp>();
    EMBER_CUDA_CHECK(cudaGetDeviceProperties(p.get(), device));
    props[device] = std::move(p);
  }
  return *props[device];
}

}  // namespace ember::cuda
