// cauchy_ on CUDA: PyTorch's transform median + sigma * tan(pi * (u - 1/2))
// of one curand uniform per element (four floats per draw, or two doubles
// for float64), in the compute type, with the samplers' launch shape and
// element order (decision 0043).
#include <mutex>
#include <optional>
#include <vector>

#include "ember/core/Generator.h"
#include "ember/cuda/random/RandomDevice.cuh"
#include "ember/cuda/random/RandomLaunch.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

template <typename T, typename Acc>
struct CauchyOp {
  Acc median;
  Acc sigma;
  __device__ T operator()(Acc u) const {
    const Acc pi = static_cast<Acc>(3.14159265358979323846);
    const Acc v = median + sigma * ::tan(pi * (u - static_cast<Acc>(0.5)));
    if constexpr (sizeof(Acc) == sizeof(double)) {
      return Elem<T>::from_double(v);
    } else {
      return Elem<T>::from_float(v);
    }
  }
};

GeneratorImpl* cuda_generator(const std::optional<Generator>& gen, const Device& device) {
  if (gen && gen->defined()) {
    const DeviceType have = gen->get()->device.type;
    EMBER_CHECK(have == DeviceType::CUDA, "Expected a 'cuda' device type for generator but found '",
                device_type_name(have), "'");
    return gen->get();
  }
  return default_cuda_generator(device.index >= 0 ? device.index : current_device()).get();
}

ElementIndexer memory_order(const Tensor& t) {
  const std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  const std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  const OutputOrder o = output_order(sizes, strides, t.element_size());
  EMBER_CHECK(o.sizes.size() <= static_cast<size_t>(kMaxRandomDims), "sampling supports at most ", kMaxRandomDims,
              " dimensions");
  ElementIndexer ix;
  ix.ndim = static_cast<int>(o.sizes.size());
  for (size_t d = 0; d < o.sizes.size(); ++d) {
    ix.sizes[d] = o.sizes[d];
    ix.strides[d] = o.strides[d];
  }
  return ix;
}

template <typename T>
void launch_cauchy(RandomCall c, double median, double sigma) {
  if constexpr (std::is_same_v<T, double>) {
    launch_distribution<T, 2>(c, Uniform2Double{}, CauchyOp<T, double>{median, sigma});
  } else {
    launch_distribution<T, 4>(c, Uniform4{}, CauchyOp<T, float>{static_cast<float>(median), static_cast<float>(sigma)});
  }
}

Tensor& cauchy_cuda(Tensor& self, double median, double sigma, std::optional<Generator> generator) {
  EMBER_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  const ScalarType t = self.dtype();
  EMBER_CHECK(is_floating_type(t),
              "Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you "
              "specified ",
              cpp_type_name(t));
  RandomType type;
  switch (t) {
    case ScalarType::Float: type = RandomType::Float; break;
    case ScalarType::Double: type = RandomType::Double; break;
    case ScalarType::Half: type = RandomType::Half; break;
    case ScalarType::BFloat16: type = RandomType::BFloat16; break;
    default: throw NotImplementedError(str_cat("\"cauchy_cuda\" not implemented for '", dtype_message_name(t), "'"));
  }
  if (self.numel() == 0) return self;
  const Device device = self.device();
  GeneratorImpl* g = cuda_generator(generator, device);
  const cudaDeviceProp& prop = device_properties(device.index);
  const uint32_t unroll = t == ScalarType::Double ? 2 : 4;
  const RandomLaunch l =
      random_launch(self.numel(), unroll, prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor);
  GeneratorImpl::PhiloxState ph;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    ph = g->philox_cuda_state(l.offset_increment);
  }
  const RandomCall c{type,   static_cast<char*>(self.data_ptr()), memory_order(self), self.numel(), ph.seed, ph.offset,
                     l.grid, current_stream(device.index)};
  switch (type) {
    case RandomType::Float: launch_cauchy<float>(c, median, sigma); break;
    case RandomType::Double: launch_cauchy<double>(c, median, sigma); break;
    case RandomType::Half: launch_cauchy<__half>(c, median, sigma); break;
    default: launch_cauchy<__nv_bfloat16>(c, median, sigma); break;
  }
  return self;
}

const bool registered = [] {
  dispatch::cauchy__kernels[static_cast<int>(DeviceType::CUDA)] = &cauchy_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
