// randperm on CUDA with PyTorch's CUDA algorithm and random stream (see
// RandpermIslands.h): random_ keys of the generator (int32 for up to 32 key
// bits, else int64), a stable sort of the positions by the keys' low bits,
// then the islands of equal keys shuffled with a Philox stream reserved
// from the generator (n words).
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>

#include "ember/core/Generator.h"
#include "ember/cpu/RandomStubs.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/kernels/RandpermIslands.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

__global__ void shuffle_islands_kernel(const int64_t* keys, int64_t* values, int64_t n, uint64_t seed,
                                       uint64_t offset) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) shuffle_island_at(keys, values, n, i, seed, offset);
}

GeneratorImpl* cuda_generator(const std::optional<Generator>& gen, const Device& device) {
  if (gen && gen->defined()) return gen->get();  // random_ has checked its device type
  return default_cuda_generator(device.index >= 0 ? device.index : current_device()).get();
}

void randperm_cuda(const TensorBase& out_base, int64_t n, std::optional<Generator> gen) {
  Tensor out(out_base);
  if (n == 0) return;
  const ScalarType t = out.dtype();
  // PyTorch's CUDA randperm starts from an arange (no bool or complex) and
  // then takes the integer types, float, double and half.
  if (t == ScalarType::Bool || is_complex_type(t)) {
    throw NotImplementedError(str_cat("\"arange_cuda\" not implemented for '", dtype_message_name(t), "'"));
  }
  if (t == ScalarType::BFloat16) {
    throw NotImplementedError(str_cat("\"randperm_out_cuda\" not implemented for '", dtype_message_name(t), "'"));
  }
  const Device device = out.device();
  const int bits = randperm_key_bits(n);
  Tensor keys;
  if (bits <= 32) {
    keys = ember::empty({n}, ScalarType::Int, device);
    ember::random_(keys, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), gen);
  } else {
    keys = ember::empty({n}, ScalarType::Long, device);
    ember::random_(keys, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), gen);
  }
  // The radix sort orders by the key's low `bits` bits; when that is every
  // bit, by the signed key.
  Tensor sort_keys = keys.to(ScalarType::Long);
  if (bits < (bits <= 32 ? 32 : 64)) {
    sort_keys = ember::bitwise_and(sort_keys, Scalar(static_cast<int64_t>((uint64_t(1) << bits) - 1)));
  }
  Tensor order = ember::argsort(sort_keys, /*stable=*/true).contiguous();
  const Tensor sorted = ember::index_select(sort_keys, 0, order).contiguous();
  GeneratorImpl* g = cuda_generator(gen, device);
  GeneratorImpl::PhiloxState ph;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    ph = g->philox_cuda_state(static_cast<uint64_t>(n));
  }
  const int64_t blocks = (n + 511) / 512;
  shuffle_islands_kernel<<<static_cast<unsigned>(blocks), 512, 0, current_stream(device.index)>>>(
      static_cast<const int64_t*>(sorted.data_ptr()), static_cast<int64_t*>(order.data_ptr()), n, ph.seed, ph.offset);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  out.copy_(t == ScalarType::Long ? order : order.to(t));
}

const bool registered = [] {
  cpu::randperm_device_stub.cuda = &randperm_cuda;
  // The checking front end serves CUDA and hands the sampling to the stub.
  dispatch::randperm_kernels[static_cast<int>(DeviceType::CUDA)] =
      dispatch::randperm_kernels[static_cast<int>(DeviceType::CPU)];
  return true;
}();

}  // namespace
}  // namespace ember::cuda
