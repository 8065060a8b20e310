// fractional_max_pool2d on CUDA, forward and backward, as PyTorch's CUDA
// kernels: per plane the window starts come from its two samples (width
// first) in the accumulate type (float for float32 too, unlike the CPU's
// double), the last window ending at the border; the maximum keeps the first
// largest value and takes every NaN it meets; the backward adds each
// gradient at its recorded index atomically.
#include <tuple>
#include <vector>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::nn {
namespace {

template <typename A>
__device__ __forceinline__ int64_t window_start(A sample, int64_t index, int64_t in, int64_t out, int64_t pool) {
  if (index == out - 1) return in - pool;
  const A alpha = static_cast<A>(in - pool) / static_cast<A>(out - 1);
  return static_cast<int64_t>((static_cast<A>(index) + sample) * alpha) - static_cast<int64_t>(sample * alpha);
}

template <typename T>
__global__ void fractional_max_kernel(const T* in, const T* samples, T* out, int64_t* indices, int64_t planes,
                                      int64_t ih, int64_t iw, int64_t oh, int64_t ow, int64_t kh, int64_t kw) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, planes * oh * ow) {
    const int64_t x = i % ow, y = (i / ow) % oh, p = i / (ow * oh);
    const int64_t x0 = window_start<A>(widen(samples[2 * p]), x, iw, ow, kw);
    const int64_t y0 = window_start<A>(widen(samples[2 * p + 1]), y, ih, oh, kh);
    const T* plane = in + p * ih * iw;
    A best = -INFINITY;
    int64_t best_index = y0 * iw + x0;
    for (int64_t h = y0; h < y0 + kh; ++h) {
      for (int64_t w = x0; w < x0 + kw; ++w) {
        const A v = widen(plane[h * iw + w]);
        if (v > best || v != v) {  // v != v: NaN
          best = v;
          best_index = h * iw + w;
        }
      }
    }
    out[i] = narrow<T>(best);
    indices[i] = best_index;
  }
}

template <typename T>
__global__ void fractional_max_backward_kernel(const T* grad, const int64_t* indices, T* grad_in, int64_t total,
                                               int64_t out_plane, int64_t in_plane) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t index = indices[i];
    if (index >= 0 && index < in_plane) atomic_add(grad_in + (i / out_plane) * in_plane + index, grad[i]);
  }
}

std::vector<int64_t> pooled_shape(const Tensor& self, int64_t oh, int64_t ow) {
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - 2);
  shape.push_back(oh);
  shape.push_back(ow);
  return shape;
}

std::tuple<Tensor, Tensor> fractional_max_pool2d_cuda(const Tensor& self, IntArrayRef kernel_size,
                                                      IntArrayRef output_size, const Tensor& random_samples) {
  EMBER_CHECK(kernel_size.size() == 2,
              "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints");
  EMBER_CHECK(output_size.size() == 2,
              "fractional_max_pool2d: output_size must either be a single Int or tuple of Ints");
  const int64_t nd = self.dim();
  EMBER_CHECK(nd == 3 || nd == 4,
              "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: ", shape_string(self.sizes()));
  for (int64_t i = 1; i < nd; ++i) {
    EMBER_CHECK(self.size(i) > 0,
                "fractional_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but got",
                shape_string(self.sizes()), " with dimension ", i, " being empty.");
  }
  const int64_t kh = kernel_size[0], kw = kernel_size[1], oh = output_size[0], ow = output_size[1];
  const int64_t ih = self.size(-2), iw = self.size(-1);
  EMBER_CHECK(oh + kh - 1 <= ih, "fractional_max_pool2d_out(): pool height ", kh,
              " too large relative to input height ", ih, " and output height ", oh);
  EMBER_CHECK(ow + kw - 1 <= iw, "fractional_max_pool2d_out(): pool width ", kw, " too large relative to input width ",
              iw, " and output width ", ow);
  const int64_t planes = self.numel() / (ih * iw);
  EMBER_CHECK(random_samples.numel() == 2 * planes, "fractional_max_pool2d(): expected _random_samples of ", 2 * planes,
              " elements, but got ", random_samples.numel());
  const std::vector<int64_t> shape = pooled_shape(self, oh, ow);
  Tensor out = ember::empty(shape, self.dtype(), self.device());
  Tensor indices = ember::empty(shape, ScalarType::Long, self.device());
  const int64_t total = out.numel();
  dispatch_floating(self.dtype(), "fractional_max_pool2d_out_cuda_frame", [&](auto tag) {
    using T = decltype(tag);
    if (total == 0) return;
    const Tensor x = self.contiguous();
    const Tensor samples = random_samples.to(self.device()).to(self.dtype()).contiguous();
    fractional_max_kernel<T><<<blocks_for(total), kThreads, 0, current_stream(self.device().index)>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<const T*>(samples.data_ptr()), static_cast<T*>(out.data_ptr()),
        static_cast<int64_t*>(indices.data_ptr()), planes, ih, iw, oh, ow, kh, kw);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return {out, indices};
}

Tensor fractional_max_pool2d_backward_cuda(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                           IntArrayRef output_size, const Tensor& indices) {
  (void)kernel_size;
  (void)output_size;
  Tensor grad_in = ember::zeros(self.sizes(), grad_output.dtype(), self.device());
  const int64_t total = grad_output.numel();
  dispatch_floating(grad_output.dtype(), "fractional_max_pool2d_backward_out_cuda_frame", [&](auto tag) {
    using T = decltype(tag);
    if (total == 0 || grad_in.numel() == 0) return;
    const Tensor g = grad_output.contiguous(), ix = indices.contiguous();
    const int64_t out_plane = g.size(-2) * g.size(-1), in_plane = self.size(-2) * self.size(-1);
    fractional_max_backward_kernel<T><<<blocks_for(total), kThreads, 0, current_stream(self.device().index)>>>(
        static_cast<const T*>(g.data_ptr()), static_cast<const int64_t*>(ix.data_ptr()),
        static_cast<T*>(grad_in.data_ptr()), total, out_plane, in_plane);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return grad_in;
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::fractional_max_pool2d_kernels[cuda] = &fractional_max_pool2d_cuda;
  dispatch::fractional_max_pool2d_backward_kernels[cuda] = &fractional_max_pool2d_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::nn
