// multinomial on CUDA with PyTorch's algorithms and random streams:
// - one sample, or samples without replacement: argmax / topk of p / q with
//   q ~ Exp(1) drawn by exponential_ (the Gumbel trick);
// - several samples with replacement: every row normalised to sum 1 (a
//   block reduction in the dtype, PyTorch's tree), its inclusive prefix sum,
//   then per sample the first bucket whose bound is not below a uniform draw
//   (curand_uniform4's first word; thread (sample, row block) of a grid of
//   128-thread blocks, subsequence = its global index), stepping back over
//   empty buckets.
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>

#include "ember/core/Generator.h"
#include "ember/cpu/RandomStubs.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/Philox.h"
#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

using nn::narrow;
using nn::widen;

constexpr int kWarp = 32;
constexpr int kSampleThreads = 128;

// a + b in the dtype's arithmetic (16-bit floats add in float and round).
template <typename T>
__device__ __forceinline__ T add_in(T a, T b) {
  return narrow<T>(widen(a) + widen(b));
}

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v = add_in(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// Each row divided by its sum (rows summing to zero stay as they are); one
// block per row, blockDim.x a multiple of the warp size.
template <typename T>
__global__ void renorm_rows_kernel(T* dist, int64_t rows, int64_t cols) {
  __shared__ T partial[1024 / kWarp];
  const int tid = static_cast<int>(threadIdx.x), lane = tid % kWarp, warp = tid / kWarp;
  const int warps = static_cast<int>(blockDim.x) / kWarp;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    T* r = dist + row * cols;
    T sum = narrow<T>(0.0f);
    for (int64_t c = tid; c < cols; c += blockDim.x) sum = add_in(sum, r[c]);
    sum = warp_sum(sum);
    __syncthreads();
    if (lane == 0) partial[warp] = sum;
    __syncthreads();
    sum = tid < warps ? partial[lane] : narrow<T>(0.0f);
    if (warp == 0) sum = warp_sum(sum);
    __syncthreads();
    if (tid == 0) partial[0] = sum;
    __syncthreads();
    sum = partial[0];
    if (widen(sum) > 0) {
      for (int64_t c = tid; c < cols; c += blockDim.x) r[c] = narrow<T>(widen(r[c]) / widen(sum));
    }
    __syncthreads();
  }
}

template <typename T>
__device__ int64_t bucket_of(const T* cum, const T* dist, int64_t size, T value) {
  int64_t start = 0, end = size;
  const auto v = widen(value);
  while (end - start > 0) {
    const int64_t mid = start + (end - start) / 2;
    if (widen(cum[mid]) < v) {
      start = mid + 1;
    } else {
      end = mid;
    }
  }
  if (start == size) start = size - 1;  // a draw above the last bound (rounding)
  while (start >= 1 && widen(dist[start]) == 0) --start;
  return start;
}

template <typename T>
__global__ void sample_with_replacement_kernel(uint64_t seed, uint64_t offset, int64_t n_sample, int64_t* dest,
                                               int64_t n_dist, int64_t n_cat, const T* cum, const T* dist) {
  const uint64_t idx = static_cast<uint64_t>(blockIdx.y) * gridDim.x * blockDim.x +
                       static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  philox::State state = philox::init(seed, idx, offset);
  for (int64_t d = blockIdx.y; d < n_dist; d += gridDim.y) {
    for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n_sample;
         k += static_cast<int64_t>(blockDim.x) * gridDim.x) {
      const T r = narrow<T>(philox::uniform4(state).x);  // three of the four words go unused
      dest[d * n_sample + k] = bucket_of(cum + d * n_cat, dist + d * n_cat, n_cat, r);
    }
  }
}

template <typename F>
void dispatch_multinomial(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    case ScalarType::Half: return f(__half{});
    case ScalarType::BFloat16: return f(__nv_bfloat16{});
    default: break;
  }
  throw NotImplementedError(str_cat("\"multinomial_kernel_cuda\" not implemented for '", dtype_message_name(t), "'"));
}

GeneratorImpl* cuda_generator(const std::optional<Generator>& gen, const Device& device) {
  if (gen && gen->defined()) {
    EMBER_CHECK(gen->get()->device.type == DeviceType::CUDA, "Expected a 'cuda' device type for generator but found '",
                device_type_name(gen->get()->device.type), "'");
    return gen->get();
  }
  return default_cuda_generator(device.index >= 0 ? device.index : current_device()).get();
}

// Whether some row of the (1-d or 2-d) probabilities sums to zero.
bool has_empty_row(const Tensor& p) {
  const Tensor sums = p.dim() == 1 ? ember::sum(p) : ember::sum(p, std::vector<int64_t>{1});
  return ember::min(sums).item<double>() == 0.0;
}

void with_replacement(const Tensor& self, int64_t n_sample, const std::optional<Generator>& gen, Tensor& out) {
  const int64_t n_dist = self.dim() == 1 ? 1 : self.size(0), n_cat = self.size(-1);
  // PyTorch's kernels assert on these; the CPU's messages instead.
  const double lo = ember::min(self).item<double>();  // NaN when some entry is NaN
  EMBER_CHECK(!(lo < 0), "invalid multinomial distribution (encountering probability entry < 0)");
  EMBER_CHECK(ember::all(ember::isfinite(self)).item<bool>(),
              "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
  EMBER_CHECK(!has_empty_row(self), "invalid multinomial distribution (sum of probabilities <= 0)");
  const Device device = self.device();
  Tensor dist = self.reshape({n_dist, n_cat}).contiguous().clone();
  cudaStream_t stream = current_stream(device.index);
  const cudaDeviceProp& prop = device_properties(device.index);
  dispatch_multinomial(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const int64_t threads = std::min<int64_t>(1024, kWarp * ((n_cat + kWarp - 1) / kWarp));
    const int64_t grid = std::min<int64_t>(n_dist, int64_t(prop.multiProcessorCount) * 4);
    renorm_rows_kernel<T><<<static_cast<unsigned>(grid), static_cast<unsigned>(threads), 0, stream>>>(
        static_cast<T*>(dist.data_ptr()), n_dist, n_cat);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  const Tensor cum = ember::cumsum(dist, 1).contiguous();
  const int64_t grid_y = std::min<int64_t>(n_dist, prop.maxGridSize[1]);
  const int64_t grid_x = (n_sample - 1) / kSampleThreads + 1;
  GeneratorImpl* g = cuda_generator(gen, device);
  GeneratorImpl::PhiloxState ph;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    ph = g->philox_cuda_state(static_cast<uint64_t>(((n_dist - 1) / grid_y + 1) * 4));
  }
  Tensor result = ember::empty({n_dist, n_sample}, ScalarType::Long, device);
  dispatch_multinomial(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const dim3 blocks(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
    sample_with_replacement_kernel<T><<<blocks, kSampleThreads, 0, stream>>>(
        ph.seed, ph.offset, n_sample, static_cast<int64_t*>(result.data_ptr()), n_dist, n_cat,
        static_cast<const T*>(cum.data_ptr()), static_cast<const T*>(dist.data_ptr()));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  out.copy_(result.reshape(out.sizes()));
}

void multinomial_cuda(const TensorBase& self_base, int64_t n_sample, bool replacement, std::optional<Generator> gen,
                      const TensorBase& out_base) {
  const Tensor self(self_base);
  Tensor out(out_base);
  if (replacement && n_sample > 1) return with_replacement(self, n_sample, gen, out);
  const double lo = ember::min(self).item<double>(), hi = ember::max(self).item<double>();
  EMBER_CHECK(hi < INFINITY && lo >= 0, "probability tensor contains either `inf`, `nan` or element < 0");
  EMBER_CHECK(!has_empty_row(self), "invalid multinomial distribution (sum of probabilities <= 0)");
  // argmax(p / q), q ~ Exp(1): the category of the largest p / q; the
  // n_sample largest without replacement.
  Tensor q = ember::empty_like(self);
  ember::exponential_(q, 1.0, gen);
  q = ember::div(self, q);
  if (n_sample == 1) {
    out.copy_(ember::argmax(q, -1, /*keepdim=*/true));
  } else {
    out.copy_(std::get<1>(ember::topk(q, n_sample)));
  }
}

const bool registered = [] {
  cpu::multinomial_device_stub.cuda = &multinomial_cuda;
  // The checking front end serves CUDA and hands the sampling to the stub.
  dispatch::multinomial_kernels[static_cast<int>(DeviceType::CUDA)] =
      dispatch::multinomial_kernels[static_cast<int>(DeviceType::CPU)];
  return true;
}();

}  // namespace
}  // namespace ember::cuda
