// CUDA kernels of nll_loss (the class-index gather behind cross_entropy):
// forward for (N, C) and (C,) inputs, backward for every input shape.
// Checks and result shapes come from the CPU function run on meta copies;
// a target out of range raises the CPU's exception after one read-back.
// Also the elementwise binary cross entropy (cpu/ActivationStubs.h).
#include "ember/cpu/ActivationStubs.h"
#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cuda {
namespace {

// PyTorch's CUDA kernel reduces with one block of this many threads, each
// summing a strided share in the accumulate type, then thread 0 adds the shares
// in order; the same order gives the same float.
constexpr int kNllThreads = 32;

template <typename T>
using Acc = device_acc_t<T>;

// x * w rounded to T, as the element type's product.
template <typename T>
__device__ Acc<T> product(T x, T w) {
  return widen(narrow<T>(widen(x) * widen(w)));
}

template <typename T>
__global__ void nll_loss_reduce_kernel(const T* x, const int64_t* target, const T* weight, T* out, T* total_weight,
                                       int64_t n, int64_t classes, int64_t ignore_index, bool mean,
                                       unsigned long long* bad) {
  __shared__ Acc<T> loss_share[kNllThreads];
  __shared__ Acc<T> weight_share[kNllThreads];
  Acc<T> loss = 0, weight_sum = 0;
  for (int64_t i = threadIdx.x; i < n; i += kNllThreads) {
    const int64_t c = target[i];
    if (c == ignore_index) continue;
    if (c < 0 || c >= classes) {
      atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    if (weight) {
      loss -= product(x[i * classes + c], weight[c]);
      weight_sum += widen(weight[c]);
    } else {
      loss -= widen(x[i * classes + c]);
      weight_sum += 1;
    }
  }
  loss_share[threadIdx.x] = loss;
  weight_share[threadIdx.x] = weight_sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    Acc<T> total_loss = 0, total = 0;
    for (int k = 0; k < kNllThreads; ++k) {
      total_loss += loss_share[k];
      total += weight_share[k];
    }
    *total_weight = narrow<T>(total);
    *out = narrow<T>(mean ? total_loss / total : total_loss);
  }
}

template <typename T>
__global__ void nll_loss_none_kernel(const T* x, const int64_t* target, const T* weight, T* out, int64_t n,
                                     int64_t classes, int64_t ignore_index, unsigned long long* bad) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t c = target[i];
    if (c == ignore_index) {
      out[i] = narrow<T>(0);
      continue;
    }
    if (c < 0 || c >= classes) {
      atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    out[i] = narrow<T>(weight ? -product(x[i * classes + c], weight[c]) : -widen(x[i * classes + c]));
  }
}

// grad_input[n, target, s] = -(weight[target] * grad (/ total_weight for the mean)).
template <typename T>
__global__ void nll_loss_backward_kernel(const T* grad, const int64_t* target, const T* weight, const T* total_weight,
                                         T* grad_input, int64_t n, int64_t classes, int64_t spatial,
                                         int64_t ignore_index, int reduction) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n * spatial; i += stride) {
    const int64_t c = target[i];
    if (c == ignore_index || c < 0 || c >= classes) continue;
    Acc<T> g = widen(reduction == 0 ? grad[i] : grad[0]);
    if (reduction == 1) g = g / widen(*total_weight);
    g = -g;
    const int64_t row = i / spatial, s = i % spatial;
    grad_input[(row * classes + c) * spatial + s] = narrow<T>(weight ? widen(weight[c]) * g : g);
  }
}

std::tuple<Tensor, Tensor> nll_loss_forward_cuda(const Tensor& self, const Tensor& target,
                                                 const std::optional<Tensor>& weight_, int64_t reduction,
                                                 int64_t ignore_index) {
  std::optional<Tensor> meta_weight;
  if (weight_.has_value()) meta_weight = meta_copy(*weight_);
  auto [meta_out, meta_total] = dispatch::nll_loss_forward_kernels[kCpuKernel](meta_copy(self), meta_copy(target),
                                                                               meta_weight, reduction, ignore_index);
  const Device device = self.device();
  Tensor out = ember::empty(meta_out.sizes(), self.dtype(), device);
  Tensor total = ember::empty({}, self.dtype(), device);
  const int64_t n = self.dim() == 2 ? self.sizes()[0] : 1;
  const int64_t classes = self.sizes()[self.dim() - 1];
  Tensor x = self.contiguous(), t = target.to(ScalarType::Long).contiguous();
  Tensor weight = weight_.has_value() && weight_->defined() ? weight_->to(self.dtype()).contiguous() : Tensor();
  BadIndexFlag flag(device);
  cudaStream_t stream = current_stream(device.index);
  dispatch_device_types<kAllFloating>(self.dtype(), "nll_loss_forward_reduce_cuda_kernel_2d_index", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    const int64_t* tp = static_cast<const int64_t*>(t.data_ptr());
    const T* wp = weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr;
    if (reduction == 0) {
      EMBER_CUDA_CHECK(cudaMemsetAsync(total.data_ptr(), 0, sizeof(T), stream));
      if (n == 0) return;
      const LaunchShape s = launch_shape(n);
      nll_loss_none_kernel<T><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(
          xp, tp, wp, static_cast<T*>(out.data_ptr()), n, classes, ignore_index, flag.ptr);
    } else {
      nll_loss_reduce_kernel<T><<<1, kNllThreads, 0, stream>>>(xp, tp, wp, static_cast<T*>(out.data_ptr()),
                                                               static_cast<T*>(total.data_ptr()), n, classes,
                                                               ignore_index, reduction == 1, flag.ptr);
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  if (flag.raised()) {
    dispatch::nll_loss_forward_kernels[kCpuKernel](
        on_cpu(self), on_cpu(target), weight_.has_value() ? std::optional<Tensor>(on_cpu(*weight_)) : std::nullopt,
        reduction, ignore_index);
    throw IndexError("Target is out of bounds.");
  }
  return {out, total};
}

Tensor nll_loss_backward_cuda(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                              const std::optional<Tensor>& weight_, int64_t reduction, int64_t ignore_index,
                              const Tensor& total_weight) {
  const int64_t classes = self.dim() == 1 ? self.sizes()[0] : self.sizes()[1];
  const int64_t n = self.dim() == 1 ? 1 : self.sizes()[0];
  const int64_t spatial = self.numel() / std::max<int64_t>(n * classes, 1);
  Tensor weight = weight_.has_value() && weight_->defined() ? weight_->to(self.dtype()).contiguous() : Tensor();
  Tensor g = grad_output.to(self.dtype()).contiguous(), t = target.to(ScalarType::Long).contiguous();
  Tensor tw = total_weight.to(self.dtype()).contiguous();
  Tensor grad_input = ember::zeros(self.sizes(), self.dtype(), self.device());
  if (n * spatial == 0 || classes == 0) return grad_input;
  cudaStream_t stream = current_stream(self.device().index);
  const LaunchShape s = launch_shape(n * spatial);
  dispatch_device_types<kAllFloating>(self.dtype(), "nll_loss_backward_reduce_cuda_kernel_2d_index", [&](auto tag) {
    using T = decltype(tag);
    nll_loss_backward_kernel<T><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(
        static_cast<const T*>(g.data_ptr()), static_cast<const int64_t*>(t.data_ptr()),
        weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr, static_cast<const T*>(tw.data_ptr()),
        static_cast<T*>(grad_input.data_ptr()), n, classes, spatial, ignore_index, static_cast<int>(reduction));
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return grad_input;
}

// A value of compute type rounded to storage type S and back: PyTorch's CUDA
// loss keeps each step in scalar_t, so 16-bit floats round after every step.
template <typename S>
__device__ __forceinline__ opmath_t<S> as_storage(opmath_t<S> v) {
  if constexpr (std::is_same_v<opmath_t<S>, S>) {
    return v;
  } else {
    return load_as_opmath(store_from<S>(v));
  }
}

// (target, input) -> (target - 1) * max(log1p(-input), -100) - target * max(log(input), -100).
template <typename S>
struct BinaryCrossEntropyOp {
  using C = opmath_t<S>;
  __device__ C operator()(C target, C input) const {
    C log_input = as_storage<S>(dm::log(input));
    C log_1m_input = as_storage<S>(dm::log1p(-input));
    if (log_input < C(-100)) log_input = C(-100);
    if (log_1m_input < C(-100)) log_1m_input = C(-100);
    const C left = as_storage<S>(as_storage<S>(target - C(1)) * log_1m_input);
    const C right = as_storage<S>(target * log_input);
    return left - right;
  }
};

void binary_cross_entropy_cuda_kernel(const TensorIterator& it) {
  dispatch_dtype<kAllFloating>(it.common_dtype(), "binary_cross_entropy_out_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<S, S, S>(it, BinaryCrossEntropyOp<S>{});
  });
}
EMBER_REGISTER_CUDA_DISPATCH(binary_cross_entropy_stub, &binary_cross_entropy_cuda_kernel);

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::nll_loss_forward_kernels[cuda] = &nll_loss_forward_cuda;
  dispatch::nll_loss_backward_kernels[cuda] = &nll_loss_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
