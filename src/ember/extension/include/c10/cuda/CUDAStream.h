#pragma once
// at::cuda::getCurrentCUDAStream() for CUDA extension sources: the stream
// Ember's operators run on (torch.cuda.current_stream()), to launch on.

#include <cuda_runtime_api.h>

#include <torch/types.h>

#include "ember/ops/CudaRuntime.h"

namespace c10::cuda {

class CUDAStream {
 public:
  CUDAStream(cudaStream_t stream, int device) : stream_(stream), device_(device) {}
  cudaStream_t stream() const { return stream_; }
  operator cudaStream_t() const { return stream_; }  // NOLINT: kernel<<<g, b, 0, stream>>>
  int device_index() const { return device_; }
  void synchronize() const {
    const cudaError_t error = cudaStreamSynchronize(stream_);
    TORCH_CHECK(error == cudaSuccess, "CUDA error: ", cudaGetErrorString(error));
  }

 private:
  cudaStream_t stream_;
  int device_;
};

inline int current_device() {
  int device = 0;
  const cudaError_t error = cudaGetDevice(&device);
  TORCH_CHECK(error == cudaSuccess, "CUDA error: ", cudaGetErrorString(error));
  return device;
}

// The current stream of a device (-1: the current device).
inline CUDAStream getCurrentCUDAStream(int device = -1) {
  const int index = device < 0 ? current_device() : device;
  const uint64_t bits = ::ember::cuda_runtime().current_stream(index);
  return CUDAStream(reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(bits)), index);
}
inline CUDAStream getDefaultCUDAStream(int device = -1) {
  return CUDAStream(nullptr, device < 0 ? current_device() : device);
}

}  // namespace c10::cuda

namespace at::cuda {
using ::c10::cuda::CUDAStream;
using ::c10::cuda::current_device;
using ::c10::cuda::getCurrentCUDAStream;
using ::c10::cuda::getDefaultCUDAStream;
}  // namespace at::cuda
