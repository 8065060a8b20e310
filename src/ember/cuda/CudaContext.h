#pragma once
// What every CUDA source of libember_cuda needs: error checks, the current
// device and stream, and device properties. Streams and the caching
// allocator live behind these functions.
#include <cuda_runtime_api.h>

namespace ember::cuda {

// Throws ember::Error with the runtime's message, after clearing the sticky error.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

#define EMBER_CUDA_CHECK(expr)                                                     \
  do {                                                                             \
    const cudaError_t ember_cuda_err_ = (expr);                                    \
    if (ember_cuda_err_ != cudaSuccess) {                                          \
      ::ember::cuda::throw_cuda_error(ember_cuda_err_, #expr, __FILE__, __LINE__); \
    }                                                                              \
  } while (0)
// After every kernel launch.
#define EMBER_CUDA_KERNEL_LAUNCH_CHECK() EMBER_CUDA_CHECK(cudaGetLastError())

int current_device();
// The stream the calling thread launches work on, for `device` (-1: the current device).
cudaStream_t current_stream(int device = -1);
// Cached per device.
const cudaDeviceProp& device_properties(int device = -1);

}  // namespace ember::cuda
