#pragma once
// <ATen/cuda/CUDAContext.h> for CUDA extension sources: the current stream,
// device properties and the CUDA error checks.

#include <cuda_runtime_api.h>

#include <vector>

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace at::cuda {

// The properties of a device (-1: the current one), read once per device.
inline cudaDeviceProp* getDeviceProperties(int device) {
  static std::vector<cudaDeviceProp> props;
  static std::vector<bool> read;
  int count = 0;
  C10_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (props.empty()) {
    props.resize(count);
    read.assign(count, false);
  }
  const int index = device < 0 ? current_device() : device;
  TORCH_CHECK(index >= 0 && index < count, "device=", index, ", num_gpus=", count);
  if (!read[index]) {
    C10_CUDA_CHECK(cudaGetDeviceProperties(&props[index], index));
    read[index] = true;
  }
  return &props[index];
}
inline cudaDeviceProp* getCurrentDeviceProperties() { return getDeviceProperties(-1); }

}  // namespace at::cuda
