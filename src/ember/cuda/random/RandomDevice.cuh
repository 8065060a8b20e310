#pragma once
// The grid-stride sampling kernel of PyTorch's CUDA distributions: thread t
// starts Philox at (seed, subsequence t, offset) and, per loop step, makes
// one draw of kUnroll numbers that go to elements i, i + T, ..., i + (kUnroll-1) T
// (T = all threads). Element types, their conversions and the indexer.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ember/cuda/CudaContext.h"
#include "ember/cuda/Philox.h"
#include "ember/cuda/random/RandomKernels.h"

namespace ember::cuda {

__device__ __forceinline__ int64_t element_offset(const ElementIndexer& ix, int64_t i) {
  if (ix.ndim == 1) return i * ix.strides[0];
  int64_t off = 0;
  for (int d = 0; d < ix.ndim; ++d) {
    const int64_t q = i / ix.sizes[d];
    off += (i - q * ix.sizes[d]) * ix.strides[d];
    i = q;
  }
  return off;
}

// Conversions as static_cast to PyTorch's element types does them.
template <typename T>
struct Elem {
  using type = T;
  __device__ static T from_float(float v) { return static_cast<T>(v); }
  __device__ static T from_double(double v) { return static_cast<T>(v); }
  __device__ static T from_int(int64_t v) { return static_cast<T>(v); }
  __device__ static float to_float(T v) { return static_cast<float>(v); }
};
template <>
struct Elem<__half> {
  using type = __half;
  __device__ static __half from_float(float v) { return __float2half_rn(v); }
  __device__ static __half from_double(double v) { return __float2half_rn(static_cast<float>(v)); }
  __device__ static __half from_int(int64_t v) { return __float2half_rn(static_cast<float>(v)); }
  __device__ static float to_float(__half v) { return __half2float(v); }
};
template <>
struct Elem<__nv_bfloat16> {
  using type = __nv_bfloat16;
  __device__ static __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
  __device__ static __nv_bfloat16 from_double(double v) { return __float2bfloat16_rn(static_cast<float>(v)); }
  __device__ static __nv_bfloat16 from_int(int64_t v) { return __float2bfloat16_rn(static_cast<float>(v)); }
  __device__ static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
};
template <>
struct Elem<bool> {
  using type = bool;
  __device__ static bool from_float(float v) { return v != 0.0f; }
  __device__ static bool from_double(double v) { return v != 0.0; }
  __device__ static bool from_int(int64_t v) { return v != 0; }
  __device__ static float to_float(bool v) { return v ? 1.0f : 0.0f; }
};

// The draws: four floats, two doubles, four 32-bit or two 64-bit words.
struct Uniform4 {
  __device__ philox::F4 operator()(philox::State& s) const { return philox::uniform4(s); }
};
struct Uniform2Double {
  __device__ philox::D2 operator()(philox::State& s) const { return philox::uniform2_double(s); }
};
struct Normal4 {
  __device__ philox::F4 operator()(philox::State& s) const { return philox::normal4(s); }
};
struct Normal2Double {
  __device__ philox::D2 operator()(philox::State& s) const { return philox::normal2_double(s); }
};
struct Bits4 {
  __device__ philox::U4 operator()(philox::State& s) const { return s.next4(); }
};
struct Bits2x64 {
  struct Pair {
    uint64_t x, y;
  };
  __device__ Pair operator()(philox::State& s) const {
    const philox::U4 r = s.next4();
    return Pair{(static_cast<uint64_t>(r.x) << 32) | r.y, (static_cast<uint64_t>(r.z) << 32) | r.w};
  }
};

template <typename V>
__device__ __forceinline__ auto lane(const V& v, int k) -> decltype(v.x) {
  return (&v.x)[k];
}

// transform(number) gives the element value (of type T).
template <typename T, int kUnroll, typename Draw, typename Transform>
__global__ void __launch_bounds__(256) distribution_kernel(RandomCall c, Draw draw, Transform transform) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  philox::State state = philox::init(c.seed, static_cast<uint64_t>(idx), c.offset);
  const int64_t threads = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t rounded = ((c.numel - 1) / (threads * kUnroll) + 1) * threads * kUnroll;
  for (int64_t i = idx; i < rounded; i += threads * kUnroll) {
    const auto r = draw(state);
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t li = i + threads * k;
      if (li < c.numel) {
        *reinterpret_cast<T*>(c.data + element_offset(c.out, li)) = transform(lane(r, k));
      }
    }
    __syncthreads();
  }
}

template <typename T, int kUnroll, typename Draw, typename Transform>
void launch_distribution(const RandomCall& c, Draw draw, Transform transform) {
  distribution_kernel<T, kUnroll><<<c.grid, 256, 0, c.stream>>>(c, draw, transform);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// Runs NAME<element type>(args...) for each sampled dtype.
#define EMBER_RANDOM_ALL_SWITCH(type, NAME, ...)                                 \
  switch (type) {                                                                \
    case RandomType::Byte: NAME<uint8_t>(__VA_ARGS__); break;                    \
    case RandomType::Char: NAME<int8_t>(__VA_ARGS__); break;                     \
    case RandomType::Short: NAME<int16_t>(__VA_ARGS__); break;                   \
    case RandomType::Int: NAME<int32_t>(__VA_ARGS__); break;                     \
    case RandomType::Long: NAME<int64_t>(__VA_ARGS__); break;                    \
    case RandomType::Float: NAME<float>(__VA_ARGS__); break;                     \
    case RandomType::Double: NAME<double>(__VA_ARGS__); break;                   \
    case RandomType::Half: NAME<__half>(__VA_ARGS__); break;                     \
    case RandomType::BFloat16: NAME<__nv_bfloat16>(__VA_ARGS__); break;          \
    case RandomType::Bool: NAME<bool>(__VA_ARGS__); break;                       \
    default: throw_cuda_error(cudaErrorInvalidValue, #NAME, __FILE__, __LINE__); \
  }

}  // namespace ember::cuda
