// Continuous samplers: uniform_, normal_, exponential_, with PyTorch's CUDA
// transforms (computed in float for half/bfloat16, in the element type
// otherwise; multiply-adds fuse as the device compiler fuses them).
#include <cfloat>

#include "ember/cuda/random/RandomDevice.cuh"

namespace ember::cuda {
namespace {

// from + u * (to - from); a value that rounds to `to` becomes `from`, since
// the draws lie in (0, 1].
template <typename T, typename Acc>
struct UniformOp {
  Acc range;
  Acc from;
  Acc to;
  __device__ T operator()(Acc u) const {
    const T v = from_acc(u * range + from);
    return to_acc(v) == to ? from_acc(from) : v;
  }
  __device__ static T from_acc(Acc v) {
    if constexpr (sizeof(Acc) == sizeof(double)) {
      return Elem<T>::from_double(v);
    } else {
      return Elem<T>::from_float(v);
    }
  }
  __device__ static Acc to_acc(T v) {
    if constexpr (sizeof(Acc) == sizeof(double)) {
      return v;
    } else {
      return Elem<T>::to_float(v);
    }
  }
};

template <typename T, typename Acc>
struct NormalOp {
  Acc mean;
  Acc std;
  __device__ T operator()(Acc z) const {
    if constexpr (sizeof(Acc) == sizeof(double)) {
      return Elem<T>::from_double(z * std + mean);
    } else {
      return Elem<T>::from_float(z * std + mean);
    }
  }
};

// -1/lambda * log(u); u within half an epsilon (of the compute type) of 1
// takes log = -eps/2, so that no sample is 0.
template <typename T, typename Acc>
struct ExponentialOp {
  Acc lambda;
  Acc half_eps;
  __device__ T operator()(Acc u) const {
    Acc l;
    if constexpr (sizeof(Acc) == sizeof(double)) {
      l = u >= 1.0 - half_eps ? -half_eps : ::log(u);
      return Elem<T>::from_double(static_cast<Acc>(-1.0) / lambda * l);
    } else {
      l = u >= 1.0f - half_eps ? -half_eps : ::logf(u);
      return Elem<T>::from_float(static_cast<Acc>(-1.0) / lambda * l);
    }
  }
};

// Rounds x to T and back, as PyTorch's static_cast<scalar_t> of the bounds.
template <typename T>
float round_to(double x);
template <>
float round_to<float>(double x) {
  return static_cast<float>(x);
}
template <>
float round_to<__half>(double x) {
  return __half2float(__float2half_rn(static_cast<float>(x)));
}
template <>
float round_to<__nv_bfloat16>(double x) {
  return __bfloat162float(__float2bfloat16_rn(static_cast<float>(x)));
}

template <typename T>
void uniform_typed(const RandomCall& c, double from, double to) {
  if constexpr (std::is_same_v<T, double>) {
    launch_distribution<T, 2>(c, Uniform2Double{}, UniformOp<T, double>{to - from, from, to});
  } else {
    const float f = round_to<T>(from);
    const float t = round_to<T>(to);
    // (to - from) in the element type, then in float.
    const float range = round_to<T>(static_cast<double>(t - f));
    launch_distribution<T, 4>(c, Uniform4{}, UniformOp<T, float>{range, f, t});
  }
}

template <typename T>
void normal_typed(const RandomCall& c, double mean, double std) {
  if constexpr (std::is_same_v<T, double>) {
    launch_distribution<T, 2>(c, Normal2Double{}, NormalOp<T, double>{mean, std});
  } else {
    launch_distribution<T, 4>(c, Normal4{}, NormalOp<T, float>{static_cast<float>(mean), static_cast<float>(std)});
  }
}

template <typename T>
void exponential_typed(const RandomCall& c, double lambda) {
  if constexpr (std::is_same_v<T, double>) {
    launch_distribution<T, 2>(c, Uniform2Double{}, ExponentialOp<T, double>{lambda, DBL_EPSILON / 2});
  } else {
    launch_distribution<T, 4>(c, Uniform4{}, ExponentialOp<T, float>{static_cast<float>(lambda), FLT_EPSILON / 2});
  }
}

#define EMBER_RANDOM_FLOAT_SWITCH(type, NAME, ...)                               \
  switch (type) {                                                                \
    case RandomType::Float: NAME<float>(__VA_ARGS__); break;                     \
    case RandomType::Double: NAME<double>(__VA_ARGS__); break;                   \
    case RandomType::Half: NAME<__half>(__VA_ARGS__); break;                     \
    case RandomType::BFloat16: NAME<__nv_bfloat16>(__VA_ARGS__); break;          \
    default: throw_cuda_error(cudaErrorInvalidValue, #NAME, __FILE__, __LINE__); \
  }

}  // namespace

void launch_uniform(const RandomCall& c, double from, double to) {
  EMBER_RANDOM_FLOAT_SWITCH(c.type, uniform_typed, c, from, to)
}
void launch_normal(const RandomCall& c, double mean, double std) {
  EMBER_RANDOM_FLOAT_SWITCH(c.type, normal_typed, c, mean, std)
}
void launch_exponential(const RandomCall& c, double lambda) {
  EMBER_RANDOM_FLOAT_SWITCH(c.type, exponential_typed, c, lambda)
}

}  // namespace ember::cuda
