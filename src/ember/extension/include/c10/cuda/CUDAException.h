#pragma once
// C10_CUDA_CHECK / C10_CUDA_KERNEL_LAUNCH_CHECK for CUDA extension sources:
// a failed CUDA call raises RuntimeError("CUDA error: <text>").

#include <cuda_runtime_api.h>

#include <torch/types.h>

#define C10_CUDA_CHECK(EXPR)                                                                              \
  do {                                                                                                    \
    const cudaError_t _ember_cuda_error = (EXPR);                                                         \
    TORCH_CHECK(_ember_cuda_error == cudaSuccess, "CUDA error: ", cudaGetErrorString(_ember_cuda_error)); \
  } while (0)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
#define AT_CUDA_CHECK(EXPR) C10_CUDA_CHECK(EXPR)
