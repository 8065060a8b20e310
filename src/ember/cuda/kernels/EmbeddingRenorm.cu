// embedding_renorm_ on CUDA (embedding's max_norm), as PyTorch's kernel:
// one block per referenced row (indices sorted; a repeated row is done
// once) sums |x|, x^2 or x^p (no absolute value for other p) in the
// accumulate type, takes the 1/p power and, when the norm exceeds max_norm,
// multiplies the row by max_norm / (norm + 1e-7) rounded to the dtype.
#include <cmath>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cuda {
namespace {

constexpr int kThreads = 128;

template <typename T>
using Acc = device_acc_t<T>;

template <typename T>
__global__ void renorm_rows_kernel(T* weight, const int64_t* sorted, int64_t dim, int64_t stride0, int64_t stride1,
                                   Acc<T> max_norm, Acc<T> norm_type) {
  __shared__ Acc<T> share[kThreads];
  const int64_t b = blockIdx.x;
  if (b > 0 && sorted[b] == sorted[b - 1]) return;  // the row's first block renormalises it
  T* row = weight + sorted[b] * stride0;
  const int tid = static_cast<int>(threadIdx.x);
  Acc<T> v = 0;
  for (int64_t i = tid; i < dim; i += kThreads) {
    const Acc<T> x = widen(row[i * stride1]);
    if (norm_type == 1) {
      v += ::abs(x);
    } else if (norm_type == 2) {
      v += x * x;
    } else {
      v += ::pow(x, norm_type);
    }
  }
  share[tid] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (tid < half) share[tid] += share[tid + half];
    __syncthreads();
  }
  if (tid == 0) share[0] = ::pow(share[0], static_cast<Acc<T>>(1.0 / norm_type));
  __syncthreads();
  const Acc<T> norm = share[0];
  if (norm > max_norm) {
    const T factor = narrow<T>(static_cast<Acc<T>>(max_norm / (norm + 1e-7)));
    for (int64_t i = tid; i < dim; i += kThreads) row[i * stride1] = narrow<T>(widen(row[i * stride1]) * widen(factor));
  }
}

Tensor& embedding_renorm_cuda_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  Tensor meta_self = meta_copy(self);
  dispatch::embedding_renorm__kernels[kCpuKernel](meta_self, meta_copy(indices), max_norm, norm_type);
  if (indices.numel() == 0 || self.numel() == 0) return self;
  const Tensor sorted = std::get<0>(ember::sort(indices.to(ScalarType::Long).reshape({-1}))).contiguous();
  const int64_t rows = self.sizes()[0];
  const int64_t lo = ember::min(sorted).item<int64_t>(), hi = ember::max(sorted).item<int64_t>();
  if (lo < 0 || hi >= rows) {
    Tensor host = self.to(Device(DeviceType::CPU));
    dispatch::embedding_renorm__kernels[kCpuKernel](host, indices.to(Device(DeviceType::CPU)), max_norm, norm_type);
    throw IndexError(str_cat("index ", lo < 0 ? lo : hi, " is out of bounds for dimension 0 with size ", rows));
  }
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_device_types<kAllFloating>(self.dtype(), "embedding_renorm_cuda_", [&](auto tag) {
    using T = decltype(tag);
    renorm_rows_kernel<T><<<static_cast<unsigned>(sorted.numel()), kThreads, 0, stream>>>(
        static_cast<T*>(self.data_ptr()), static_cast<const int64_t*>(sorted.data_ptr()), self.sizes()[1],
        self.strides()[0], self.strides()[1], static_cast<Acc<T>>(max_norm), static_cast<Acc<T>>(norm_type));
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return self;
}

const bool registered = [] {
  dispatch::embedding_renorm__kernels[static_cast<int>(DeviceType::CUDA)] = &embedding_renorm_cuda_;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
