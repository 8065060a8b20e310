// The CUDA samplers' host side: the generator's (seed, offset) for the call,
// PyTorch's launch shape, the output's iteration order; registers the
// kernels into the sampling stubs and the samplers into the CUDA entries of
// the dispatch tables (the checking front ends in cpu/Random.cpp serve both
// devices).
#include <cuda_runtime_api.h>

#include "ember/core/Error.h"
#include "ember/core/Generator.h"
#include "ember/core/TensorBase.h"
#include "ember/cpu/RandomStubs.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/random/RandomKernels.h"
#include "ember/cuda/random/RandomLaunch.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

RandomType random_type(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return RandomType::Byte;
    case ScalarType::Char: return RandomType::Char;
    case ScalarType::Short: return RandomType::Short;
    case ScalarType::Int: return RandomType::Int;
    case ScalarType::Long: return RandomType::Long;
    case ScalarType::Half: return RandomType::Half;
    case ScalarType::Float: return RandomType::Float;
    case ScalarType::Double: return RandomType::Double;
    case ScalarType::Bool: return RandomType::Bool;
    case ScalarType::BFloat16: return RandomType::BFloat16;
    default: break;
  }
  throw NotImplementedError(str_cat("sampling on CUDA is not implemented for '", scalar_type_name(t), "'"));
}

std::vector<int64_t> to_vector(IntArrayRef a) { return std::vector<int64_t>(a.begin(), a.end()); }

ElementIndexer indexer_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  EMBER_CHECK(sizes.size() <= static_cast<size_t>(kMaxRandomDims), "sampling supports at most ", kMaxRandomDims,
              " dimensions");
  ElementIndexer ix;
  ix.ndim = static_cast<int>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    ix.sizes[d] = sizes[d];
    ix.strides[d] = strides[d];
  }
  return ix;
}

// Iteration order as PyTorch's TensorIterator gives it (memory order).
ElementIndexer memory_order_indexer(const TensorBase& t) {
  const OutputOrder o = output_order(to_vector(t.sizes()), to_vector(t.strides()), t.element_size());
  return indexer_of(o.sizes, o.strides);
}

// Logical (row-major) order, innermost first: PyTorch's apply kernels.
ElementIndexer logical_indexer(const TensorBase& t) {
  std::vector<int64_t> sizes, strides;
  const int64_t e = static_cast<int64_t>(t.element_size());
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    if (t.sizes()[d] == 1) continue;
    sizes.push_back(t.sizes()[d]);
    strides.push_back(t.strides()[d] * e);
  }
  if (sizes.empty()) {
    sizes.push_back(1);
    strides.push_back(e);
  }
  return indexer_of(sizes, strides);
}

// Makes the tensor's device current for the call.
class DeviceScope {
 public:
  explicit DeviceScope(const TensorBase& t) {
    EMBER_CUDA_CHECK(cudaGetDevice(&previous_));
    device_ = t.device().index >= 0 ? t.device().index : previous_;
    if (device_ != previous_) EMBER_CUDA_CHECK(cudaSetDevice(device_));
  }
  ~DeviceScope() {
    if (device_ != previous_) cudaSetDevice(previous_);
  }
  int device() const { return device_; }

 private:
  int previous_ = 0;
  int device_ = 0;
};

// Reserves the call's words in the generator (whose mutex the caller holds)
// and fills in the launch.
RandomCall prepare(const TensorBase& self, GeneratorImpl* gen, uint32_t unroll, int device) {
  const cudaDeviceProp& prop = device_properties(device);
  const RandomLaunch l =
      random_launch(self.numel(), unroll, prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor);
  const GeneratorImpl::PhiloxState ph = gen->philox_cuda_state(l.offset_increment);
  return RandomCall{random_type(self.dtype()),
                    static_cast<char*>(self.data_ptr()),
                    memory_order_indexer(self),
                    self.numel(),
                    ph.seed,
                    ph.offset,
                    l.grid,
                    current_stream(device)};
}

bool is_double(const TensorBase& t) { return t.dtype() == ScalarType::Double; }

void uniform_cuda(const TensorBase& self, double from, double to, GeneratorImpl* gen) {
  if (self.numel() == 0) return;
  DeviceScope scope(self);
  launch_uniform(prepare(self, gen, is_double(self) ? 2 : 4, scope.device()), from, to);
}

void normal_cuda(const TensorBase& self, double mean, double std, GeneratorImpl* gen) {
  if (self.numel() == 0) return;
  DeviceScope scope(self);
  launch_normal(prepare(self, gen, is_double(self) ? 2 : 4, scope.device()), mean, std);
}

void exponential_cuda(const TensorBase& self, double lambda, GeneratorImpl* gen) {
  if (self.numel() == 0) return;
  DeviceScope scope(self);
  launch_exponential(prepare(self, gen, is_double(self) ? 2 : 4, scope.device()), lambda);
}

void random_from_to_cuda(const TensorBase& self, uint64_t range, int64_t base, GeneratorImpl* gen) {
  if (self.numel() == 0) return;
  // 64-bit draws from 2^28 on, keeping the modulo's skew small.
  const bool wide = range >= (uint64_t(1) << 28);
  DeviceScope scope(self);
  launch_random_from_to(prepare(self, gen, wide ? 2 : 4, scope.device()), range, base, wide);
}

void random_full_range_cuda(const TensorBase& self, GeneratorImpl* gen) {
  if (self.numel() == 0) return;
  DeviceScope scope(self);
  launch_random_full_range(prepare(self, gen, 2, scope.device()));
}

void random_cuda(const TensorBase& self, GeneratorImpl* gen) {
  if (self.numel() == 0) return;
  const bool wide = self.dtype() == ScalarType::Double || self.dtype() == ScalarType::Long;
  DeviceScope scope(self);
  launch_random(prepare(self, gen, wide ? 2 : 4, scope.device()));
}

void bernoulli_scalar_cuda(const TensorBase& self, double p, GeneratorImpl* gen) {
  if (self.numel() == 0) return;
  DeviceScope scope(self);
  launch_bernoulli_scalar(prepare(self, gen, is_double(self) ? 2 : 4, scope.device()), p);
}

void bernoulli_tensor_cuda(const TensorBase& self, const TensorBase& p, GeneratorImpl* gen) {
  if (self.numel() == 0) return;
  EMBER_CHECK(p.device().is_cuda(), "Expected all tensors to be on the same device, but found at least two devices, ",
              self.device().str(), " and ", p.device().str(), "!");
  DeviceScope scope(self);
  const GeneratorImpl::PhiloxState ph = gen->philox_cuda_state(kBernoulliTensorIncrement);
  const cudaDeviceProp& prop = device_properties(scope.device());
  RandomCall c{random_type(self.dtype()),
               static_cast<char*>(self.data_ptr()),
               logical_indexer(self),
               self.numel(),
               ph.seed,
               ph.offset,
               bernoulli_tensor_grid(self.numel(), prop.maxGridSize[0]),
               current_stream(scope.device())};
  launch_bernoulli_tensor(c, random_type(p.dtype()), static_cast<const char*>(p.data_ptr()), logical_indexer(p));
}

template <typename Table>
void serve_cuda(Table& table) {
  table[static_cast<int>(DeviceType::CUDA)] = table[static_cast<int>(DeviceType::CPU)];
}

const bool g_registered = [] {
  cpu::uniform_stub.cuda = &uniform_cuda;
  cpu::normal_stub.cuda = &normal_cuda;
  cpu::exponential_stub.cuda = &exponential_cuda;
  cpu::random_from_to_stub.cuda = &random_from_to_cuda;
  cpu::random_full_range_stub.cuda = &random_full_range_cuda;
  cpu::random_stub.cuda = &random_cuda;
  cpu::bernoulli_scalar_stub.cuda = &bernoulli_scalar_cuda;
  cpu::bernoulli_tensor_stub.cuda = &bernoulli_tensor_cuda;
  // The front ends check arguments, lock the generator and pick the stub's
  // kernel by device; the factories and functional forms build on them.
  serve_cuda(dispatch::uniform__kernels);
  serve_cuda(dispatch::normal__kernels);
  serve_cuda(dispatch::random__kernels);
  serve_cuda(dispatch::random__to_kernels);
  serve_cuda(dispatch::random__from_kernels);
  serve_cuda(dispatch::exponential__kernels);
  serve_cuda(dispatch::bernoulli__float_kernels);
  serve_cuda(dispatch::bernoulli__Tensor_kernels);
  serve_cuda(dispatch::bernoulli_kernels);
  serve_cuda(dispatch::bernoulli_p_kernels);
  serve_cuda(dispatch::rand_kernels);
  serve_cuda(dispatch::randn_kernels);
  serve_cuda(dispatch::randint_kernels);
  serve_cuda(dispatch::randint_low_kernels);
  serve_cuda(dispatch::normal_float_float_kernels);
  serve_cuda(dispatch::normal_Tensor_float_kernels);
  serve_cuda(dispatch::normal_float_Tensor_kernels);
  serve_cuda(dispatch::normal_Tensor_Tensor_kernels);
  serve_cuda(dispatch::rand_like_kernels);
  serve_cuda(dispatch::randn_like_kernels);
  serve_cuda(dispatch::randint_like_low_dtype_kernels);
  serve_cuda(dispatch::randint_like_kernels);
  return true;
}();

}  // namespace
}  // namespace ember::cuda
