#pragma once
// Device helpers of the CUDA nn kernels (pooling, normalisation): the
// accumulate type of PyTorch's CUDA kernels (float for 16-bit floats),
// conversions, the floating dtype switch and one-thread-per-element launches.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "ember/core/Error.h"
#include "ember/core/ScalarType.h"
#include "ember/cuda/CudaContext.h"

namespace ember::cuda::nn {

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
__host__ __device__ __forceinline__ Acc<T> widen(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}

template <typename T>
__host__ __device__ __forceinline__ T narrow(Acc<T> v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16(v);
  } else {
    return static_cast<T>(v);
  }
}

// f(T{}) for the floating dtypes PyTorch's CUDA nn kernels take; PyTorch's
// NotImplementedError naming the kernel otherwise.
template <typename F>
void dispatch_floating(ScalarType t, const char* kernel_name, F&& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    case ScalarType::Half: return f(__half{});
    case ScalarType::BFloat16: return f(__nv_bfloat16{});
    default: break;
  }
  throw NotImplementedError(str_cat("\"", kernel_name, "\" not implemented for '", dtype_message_name(t), "'"));
}

constexpr int kThreads = 256;

// Blocks for n elements, one thread each (grid-stride loops cover the rest).
inline unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

#define EMBER_NN_GRID_LOOP(i, n)                                                         \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

}  // namespace ember::cuda::nn
