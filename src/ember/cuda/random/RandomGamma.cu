// _standard_gamma on CUDA, as PyTorch's CUDA sampler draws it: element i of
// the (logical-order) output starts Philox at (seed, subsequence i, offset),
// the call reserving 10 words of the generator's offset (12 after rounding);
// Marsaglia-Tsang (with the boost for alpha < 1) runs in the accumulation
// type (float for float and the 16-bit floats, double for double) on
// curand_uniform and curand_normal draws (one word, (0, 1]; Box-Muller on two
// words, the second normal kept for the next call); the sample is clamped
// below at the dtype's smallest normal number.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <limits>

#include "ember/core/Generator.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/Philox.h"
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

constexpr uint64_t kGammaIncrement = 10;
constexpr int kGammaThreads = 512;

// curand_uniform and curand_normal on one thread's state.
struct Draws {
  philox::State state;
  float extra = 0.0f;
  bool has_extra = false;
  __device__ float uniform() { return philox::to_uniform(state.next()); }
  __device__ float normal() {
    if (has_extra) {
      has_extra = false;
      return extra;
    }
    const uint32_t x = state.next(), y = state.next();
    float a, b;
    philox::box_muller(x, y, &a, &b);
    extra = b;
    has_extra = true;
    return a;
  }
};

template <typename T>
__device__ __forceinline__ float to_f(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return static_cast<float>(v);
  }
}

template <typename A>
__device__ __forceinline__ A acc_pow(A x, A y) {
  return ::pow(x, y);
}
template <typename A>
__device__ __forceinline__ A acc_log(A x) {
  return ::log(x);
}
template <typename A>
__device__ __forceinline__ A acc_sqrt(A x) {
  return ::sqrt(x);
}

// alpha in T (its arithmetic rounds to T, as the parameter's type), the rest in A.
template <typename T, typename A, typename Widen, typename Narrow>
__device__ A sample_gamma(T alpha, Draws& draws, Widen widen, Narrow narrow) {
  A scale = 1.0f;
  if (widen(alpha) < 1.0f) {
    if (widen(alpha) == 0.f) return A(0);
    scale *= acc_pow<A>(1 - static_cast<A>(draws.uniform()), static_cast<A>(1.0f / widen(alpha)));
    alpha = narrow(widen(alpha) + 1.0f);
  }
  const A d = static_cast<A>(widen(alpha) - 1.0f / 3.0f);
  const A c = 1.0f / acc_sqrt<A>(9.0f * d);
  for (;;) {
    A x, y;
    do {
      x = static_cast<A>(draws.normal());
      y = 1.0f + c * x;
    } while (y <= 0);
    const A v = y * y * y;
    const A u = 1 - static_cast<A>(draws.uniform());
    const A xx = x * x;
    if (u < 1.0f - 0.0331f * xx * xx) return scale * d * v;
    if (acc_log<A>(u) < 0.5f * xx + d * (1.0f - v + acc_log<A>(v))) return scale * d * v;
  }
}

template <typename T, typename A>
__global__ void __launch_bounds__(kGammaThreads)
    standard_gamma_kernel(const T* alpha, T* out, int64_t n, uint64_t seed, uint64_t offset, float min_value) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Draws draws{philox::init(seed, static_cast<uint64_t>(i), offset)};
  A sample;
  if constexpr (std::is_same_v<T, double>) {
    sample = sample_gamma<double, double>(alpha[i], draws, [](double v) { return v; }, [](double v) { return v; });
  } else if constexpr (std::is_same_v<T, float>) {
    sample = sample_gamma<float, float>(alpha[i], draws, [](float v) { return v; }, [](float v) { return v; });
  } else {
    sample = sample_gamma<T, float>(alpha[i], draws, [](T v) { return to_f(v); }, [](float v) { return narrow<T>(v); });
  }
  // The sampler returns T; values below the smallest normal number become it (NaN stays).
  const T s = narrow<T>(sample);
  if constexpr (std::is_same_v<T, double>) {
    out[i] = std::numeric_limits<double>::min() > s ? std::numeric_limits<double>::min() : s;
  } else {
    out[i] = min_value > to_f(s) ? narrow<T>(min_value) : s;
  }
}

GeneratorImpl* cuda_generator(const std::optional<Generator>& gen, Device device) {
  if (gen && gen->defined()) {
    const DeviceType have = gen->get()->device.type;
    EMBER_CHECK(have == DeviceType::CUDA, "Expected a 'cuda' device type for generator but found '",
                device_type_name(have), "'");
    return gen->get();
  }
  int index = device.index;
  if (index < 0) EMBER_CUDA_CHECK(cudaGetDevice(&index));
  return default_cuda_generator(index).get();
}

Tensor standard_gamma_cuda(const Tensor& self, std::optional<Generator> generator) {
  const ScalarType t = self.dtype();
  if (t != ScalarType::Float && t != ScalarType::Double && t != ScalarType::Half && t != ScalarType::BFloat16) {
    native::math::not_implemented_for("gamma_cuda", t);
  }
  Tensor out = ember::empty(self.sizes(), t, self.device());
  const int64_t n = self.numel();
  if (n == 0) return out;
  const Tensor alpha = self.contiguous();
  GeneratorImpl* g = cuda_generator(generator, self.device());
  GeneratorImpl::PhiloxState ph{};
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    ph = g->philox_cuda_state(kGammaIncrement);
  }
  int previous = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&previous));
  const int device = self.device().index >= 0 ? self.device().index : previous;
  if (device != previous) EMBER_CUDA_CHECK(cudaSetDevice(device));
  const unsigned blocks = static_cast<unsigned>((n + kGammaThreads - 1) / kGammaThreads);
  cudaStream_t stream = current_stream(device);
  auto launch = [&](auto tag, auto acc) {
    using T = decltype(tag);
    using A = decltype(acc);
    standard_gamma_kernel<T, A><<<blocks, kGammaThreads, 0, stream>>>(
        static_cast<const T*>(alpha.data_ptr()), static_cast<T*>(out.data_ptr()), n, ph.seed, ph.offset,
        t == ScalarType::Half ? 6.103515625e-05f : std::numeric_limits<float>::min());
  };
  switch (t) {
    case ScalarType::Double: launch(double{}, double{}); break;
    case ScalarType::Float: launch(float{}, float{}); break;
    case ScalarType::Half: launch(__half{}, float{}); break;
    default: launch(__nv_bfloat16{}, float{}); break;
  }
  const cudaError_t err = cudaGetLastError();
  if (device != previous) cudaSetDevice(previous);
  EMBER_CUDA_CHECK(err);
  return out;
}

[[maybe_unused]] const bool g_registered = [] {
  dispatch::_standard_gamma_kernels[static_cast<int>(DeviceType::CUDA)] = &standard_gamma_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
