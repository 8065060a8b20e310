// bernoulli_ with a scalar p (the grid-stride sampler) and with a tensor of
// probabilities (PyTorch's four-per-thread apply kernel).
#include "ember/cuda/random/RandomDevice.cuh"

namespace ember::cuda {
namespace {

// u < p, both in float (double for double elements).
template <typename T, typename Acc>
struct BernoulliOp {
  Acc p;
  __device__ T operator()(Acc u) const { return Elem<T>::from_int(u < p ? 1 : 0); }
};

template <typename T>
void bernoulli_typed(const RandomCall& c, double p) {
  if constexpr (std::is_same_v<T, double>) {
    launch_distribution<T, 2>(c, Uniform2Double{}, BernoulliOp<T, double>{p});
  } else {
    launch_distribution<T, 4>(c, Uniform4{}, BernoulliOp<T, float>{static_cast<float>(p)});
  }
}

// Four elements per thread; every thread starts its stream afresh at the
// call's offset, and element 4t + k takes word k of thread t's first draw:
// u <= p with p rounded to float (to double for double elements), as
// PyTorch converts the probabilities first.
template <typename Acc>
__device__ __forceinline__ Acc read_probability(const char* at, RandomType type) {
  switch (type) {
    case RandomType::Double: return static_cast<Acc>(*reinterpret_cast<const double*>(at));
    case RandomType::Half: return Elem<__half>::to_float(*reinterpret_cast<const __half*>(at));
    case RandomType::BFloat16: return Elem<__nv_bfloat16>::to_float(*reinterpret_cast<const __nv_bfloat16*>(at));
    default: return *reinterpret_cast<const float*>(at);
  }
}

template <typename T>
__global__ void __launch_bounds__(512)
    bernoulli_tensor_kernel(RandomCall c, const char* p, RandomType p_type, ElementIndexer p_index) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t threads = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t first = thread * 4; first < c.numel; first += threads * 4) {
    philox::State state = philox::init(c.seed, static_cast<uint64_t>(thread), c.offset);
    const philox::F4 u = philox::uniform4(state);
    const int n = c.numel - first < 4 ? static_cast<int>(c.numel - first) : 4;
    for (int k = 0; k < n; ++k) {
      const int64_t i = first + k;
      const Acc pk = read_probability<Acc>(p + element_offset(p_index, i), p_type);
      *reinterpret_cast<T*>(c.data + element_offset(c.out, i)) =
          Elem<T>::from_int(static_cast<Acc>(lane(u, k)) <= pk ? 1 : 0);
    }
  }
}

template <typename T>
void bernoulli_tensor_typed(const RandomCall& c, RandomType p_type, const char* p, const ElementIndexer& p_index) {
  bernoulli_tensor_kernel<T><<<c.grid, 512, 0, c.stream>>>(c, p, p_type, p_index);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void launch_bernoulli_scalar(const RandomCall& c, double p) { EMBER_RANDOM_ALL_SWITCH(c.type, bernoulli_typed, c, p) }

void launch_bernoulli_tensor(const RandomCall& c, RandomType p_type, const char* p, const ElementIndexer& p_index) {
  EMBER_RANDOM_ALL_SWITCH(c.type, bernoulli_tensor_typed, c, p_type, p, p_index)
}

}  // namespace ember::cuda
