// nll_loss2d's forward on CUDA ((N, C, H, W) inputs, (N, H, W) targets; the
// backward is nll_loss's, which handles spatial inputs). Per element the
// loss is -x[n, target, h, w] * weight[target] (a product in the dtype); the
// sums run in the accumulate type, per block then over the blocks in order
// (deterministic; PyTorch's kernel adds its blocks atomically). Checks and
// shapes come from the CPU function on meta copies; a target out of range
// raises the CPU's exception after one read-back.
#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1024;

template <typename T>
using Acc = device_acc_t<T>;

// -x * w in the dtype (16-bit products round), as a loss term.
template <typename T>
__device__ T term(T x, const T* weight, int64_t c) {
  if (!weight) return narrow<T>(-widen(x));
  return narrow<T>(-widen(x) * widen(weight[c]));
}

template <typename T>
__global__ void nll2d_none_kernel(const T* x, const int64_t* target, const T* weight, T* out, int64_t total,
                                  int64_t classes, int64_t spatial, int64_t ignore_index, unsigned long long* bad) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t c = target[i];
    if (c == ignore_index) {
      out[i] = narrow<T>(0);
      continue;
    }
    if (c < 0 || c >= classes) {
      atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    out[i] = term(x[((i / spatial) * classes + c) * spatial + i % spatial], weight, c);
  }
}

// Per block: the sum of the loss terms and of the weights of its elements.
template <typename T>
__global__ void nll2d_partial_kernel(const T* x, const int64_t* target, const T* weight, Acc<T>* partial, int64_t total,
                                     int64_t classes, int64_t spatial, int64_t ignore_index, unsigned long long* bad) {
  __shared__ Acc<T> loss_share[kThreads];
  __shared__ Acc<T> weight_share[kThreads];
  Acc<T> loss = 0, weight_sum = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t c = target[i];
    if (c == ignore_index) continue;
    if (c < 0 || c >= classes) {
      atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    loss += widen(term(x[((i / spatial) * classes + c) * spatial + i % spatial], weight, c));
    weight_sum += weight ? widen(weight[c]) : Acc<T>(1);
  }
  loss_share[threadIdx.x] = loss;
  weight_share[threadIdx.x] = weight_sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      loss_share[threadIdx.x] += loss_share[threadIdx.x + half];
      weight_share[threadIdx.x] += weight_share[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = loss_share[0];
    partial[2 * blockIdx.x + 1] = weight_share[0];
  }
}

template <typename T>
__global__ void nll2d_finish_kernel(const Acc<T>* partial, int64_t blocks, T* out, T* total_weight, bool mean) {
  Acc<T> loss = 0, weight_sum = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    loss += partial[2 * b];
    weight_sum += partial[2 * b + 1];
  }
  const T total = narrow<T>(weight_sum), summed = narrow<T>(loss);
  *total_weight = total;
  *out = mean ? narrow<T>(widen(summed) / widen(total)) : summed;
}

std::tuple<Tensor, Tensor> nll_loss2d_forward_cuda(const Tensor& self, const Tensor& target,
                                                   const std::optional<Tensor>& weight_, int64_t reduction,
                                                   int64_t ignore_index) {
  std::optional<Tensor> meta_weight;
  if (weight_.has_value()) meta_weight = meta_copy(*weight_);
  auto [meta_out, meta_total] = dispatch::nll_loss2d_forward_kernels[kCpuKernel](meta_copy(self), meta_copy(target),
                                                                                 meta_weight, reduction, ignore_index);
  const Device device = self.device();
  Tensor out = ember::empty(meta_out.sizes(), self.dtype(), device);
  Tensor total = ember::zeros({}, self.dtype(), device);
  const int64_t classes = self.sizes()[1], spatial = self.sizes()[2] * self.sizes()[3];
  const int64_t count = self.sizes()[0] * spatial;
  Tensor x = self.contiguous(), t = target.to(ScalarType::Long).contiguous();
  Tensor weight = weight_.has_value() && weight_->defined() ? weight_->to(self.dtype()).contiguous() : Tensor();
  BadIndexFlag flag(device);
  cudaStream_t stream = current_stream(device.index);
  dispatch_device_types<kAllFloating>(self.dtype(), "nll_loss2d_forward_out_frame", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    const int64_t* tp = static_cast<const int64_t*>(t.data_ptr());
    const T* wp = weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr;
    if (reduction == 0) {
      if (count == 0) return;
      const LaunchShape s = launch_shape(count);
      nll2d_none_kernel<T><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(
          xp, tp, wp, static_cast<T*>(out.data_ptr()), count, classes, spatial, ignore_index, flag.ptr);
    } else {
      const int64_t blocks = std::max<int64_t>(1, std::min(kMaxBlocks, (count + kThreads - 1) / kThreads));
      const ScalarType acc_type = self.dtype() == ScalarType::Double ? ScalarType::Double : ScalarType::Float;
      Tensor partial = ember::empty({2 * blocks}, acc_type, device);
      nll2d_partial_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
          xp, tp, wp, static_cast<Acc<T>*>(partial.data_ptr()), count, classes, spatial, ignore_index, flag.ptr);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      nll2d_finish_kernel<T><<<1, 1, 0, stream>>>(static_cast<const Acc<T>*>(partial.data_ptr()), blocks,
                                                  static_cast<T*>(out.data_ptr()), static_cast<T*>(total.data_ptr()),
                                                  reduction == 1);
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  if (flag.raised()) {
    dispatch::nll_loss2d_forward_kernels[kCpuKernel](
        on_cpu(self), on_cpu(target), weight_.has_value() ? std::optional<Tensor>(on_cpu(*weight_)) : std::nullopt,
        reduction, ignore_index);
    throw IndexError("Target is out of bounds.");
  }
  return {out, total};
}

const bool registered = [] {
  dispatch::nll_loss2d_forward_kernels[static_cast<int>(DeviceType::CUDA)] = &nll_loss2d_forward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
