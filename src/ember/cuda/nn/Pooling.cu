// CUDA kernels of 2-d pooling: max (with indices), average and adaptive
// average/max, forward and backward; 1-d and 3-d pooling are composed of
// these in Python (Note [3-d as 2-d passes]). Checks and output shapes come
// from the CPU functions run on meta tensors. Windows, NaN handling, divisors
// and summation orders follow PyTorch's CUDA kernels, so results match
// theirs: backward passes gather per input element (no atomics) except the
// adaptive max backward, which adds atomically as PyTorch's does.
#include <algorithm>
#include <array>
#include <cuda/std/limits>
#include <optional>

#include "ember/core/MemoryFormat.h"
#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/cuda/nn/PoolGeometry.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::nn {
namespace {

constexpr int kMeta = static_cast<int>(DeviceType::Meta);

template <typename T>
__device__ __forceinline__ bool is_nan(T v) {
  return widen(v) != widen(v);
}

template <typename T>
__global__ void max_pool2d_kernel(const T* x, T* y, int64_t* indices, int64_t total, PoolWindow2d g) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t ow = i % g.out_w, oh = (i / g.out_w) % g.out_h, plane = i / (g.out_w * g.out_h);
    int64_t hstart = oh * g.stride_h - g.pad_h, wstart = ow * g.stride_w - g.pad_w;
    const int64_t hend = std::min(hstart + (g.kernel_h - 1) * g.dil_h + 1, g.in_h);
    const int64_t wend = std::min(wstart + (g.kernel_w - 1) * g.dil_w + 1, g.in_w);
    while (hstart < 0) hstart += g.dil_h;
    while (wstart < 0) wstart += g.dil_w;
    const T* xp = x + plane * g.in_h * g.in_w;
    int64_t best = hstart * g.in_w + wstart;
    Acc<T> best_v = -::cuda::std::numeric_limits<Acc<T>>::infinity();
    for (int64_t h = hstart; h < hend; h += g.dil_h) {
      for (int64_t w = wstart; w < wend; w += g.dil_w) {
        const T v = xp[h * g.in_w + w];
        if (widen(v) > best_v || is_nan(v)) {
          best = h * g.in_w + w;
          best_v = widen(v);
        }
      }
    }
    y[i] = narrow<T>(best_v);
    indices[i] = best;
  }
}

// Each input element sums the gradients of the windows that chose it, in output order.
template <typename T>
__global__ void max_pool2d_backward_kernel(const T* gy, const int64_t* indices, T* gx, int64_t total, PoolWindow2d g) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t w = i % g.in_w, h = (i / g.in_w) % g.in_h, plane = i / (g.in_w * g.in_h);
    const PoolRange rh = max_pool_range(h, g.pad_h, g.kernel_h, g.dil_h, g.stride_h, g.out_h);
    const PoolRange rw = max_pool_range(w, g.pad_w, g.kernel_w, g.dil_w, g.stride_w, g.out_w);
    const int64_t base = plane * g.out_h * g.out_w, me = h * g.in_w + w;
    Acc<T> sum = 0;
    for (int64_t oh = rh.begin; oh < rh.end; ++oh) {
      for (int64_t ow = rw.begin; ow < rw.end; ++ow) {
        const int64_t o = base + oh * g.out_w + ow;
        if (indices[o] == me) sum += widen(gy[o]);
      }
    }
    gx[i] = narrow<T>(sum);
  }
}

template <typename T>
__global__ void avg_pool2d_kernel(const T* x, T* y, int64_t total, PoolWindow2d g, bool count_include_pad,
                                  int64_t divisor_override) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t ow = i % g.out_w, oh = (i / g.out_w) % g.out_h, plane = i / (g.out_w * g.out_h);
    const AvgWindow win = avg_window(oh, ow, g);
    if (win.empty) {
      y[i] = narrow<T>(Acc<T>(0));
      continue;
    }
    const T* xp = x + plane * g.in_h * g.in_w;
    Acc<T> sum = 0;
    for (int64_t h = win.h0; h < win.h1; ++h) {
      for (int64_t w = win.w0; w < win.w1; ++w) sum += widen(xp[h * g.in_w + w]);
    }
    const int64_t div = avg_divisor(win, count_include_pad, divisor_override);
    y[i] = narrow<T>(sum / static_cast<Acc<T>>(div));
  }
}

template <typename T>
__global__ void avg_pool2d_backward_kernel(const T* gy, T* gx, int64_t total, PoolWindow2d g, bool count_include_pad,
                                           int64_t divisor_override) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t w = i % g.in_w, h = (i / g.in_w) % g.in_h, plane = i / (g.in_w * g.in_h);
    const PoolRange rh = avg_pool_range(h, g.pad_h, g.kernel_h, g.stride_h, g.out_h);
    const PoolRange rw = avg_pool_range(w, g.pad_w, g.kernel_w, g.stride_w, g.out_w);
    const T* gp = gy + plane * g.out_h * g.out_w;
    Acc<T> sum = 0;
    for (int64_t oh = rh.begin; oh < rh.end; ++oh) {
      for (int64_t ow = rw.begin; ow < rw.end; ++ow) {
        const AvgWindow win = avg_window(oh, ow, g);
        if (win.empty) continue;
        const int64_t div = avg_divisor(win, count_include_pad, divisor_override);
        sum += widen(gp[oh * g.out_w + ow]) / static_cast<Acc<T>>(div);
      }
    }
    gx[i] = narrow<T>(sum);
  }
}

template <typename T>
__global__ void adaptive_avg_kernel(const T* x, T* y, int64_t total, int64_t in_h, int64_t in_w, int64_t out_h,
                                    int64_t out_w) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t ow = i % out_w, oh = (i / out_w) % out_h, plane = i / (out_w * out_h);
    const int64_t h0 = adaptive_start(oh, out_h, in_h), h1 = adaptive_end(oh, out_h, in_h);
    const int64_t w0 = adaptive_start(ow, out_w, in_w), w1 = adaptive_end(ow, out_w, in_w);
    const T* xp = x + plane * in_h * in_w;
    Acc<T> sum = 0;
    for (int64_t h = h0; h < h1; ++h) {
      for (int64_t w = w0; w < w1; ++w) sum += widen(xp[h * in_w + w]);
    }
    y[i] = narrow<T>(sum / static_cast<Acc<T>>(h1 - h0) / static_cast<Acc<T>>(w1 - w0));
  }
}

template <typename T>
__global__ void adaptive_avg_backward_kernel(const T* gy, T* gx, int64_t total, int64_t in_h, int64_t in_w,
                                             int64_t out_h, int64_t out_w) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t w = i % in_w, h = (i / in_w) % in_h, plane = i / (in_w * in_h);
    // The outputs whose windows hold (h, w).
    const int64_t oh0 = adaptive_start(h, in_h, out_h), oh1 = adaptive_end(h, in_h, out_h);
    const int64_t ow0 = adaptive_start(w, in_w, out_w), ow1 = adaptive_end(w, in_w, out_w);
    const T* gp = gy + plane * out_h * out_w;
    Acc<T> sum = 0;
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      const int64_t kh = adaptive_end(oh, out_h, in_h) - adaptive_start(oh, out_h, in_h);
      if (h < adaptive_start(oh, out_h, in_h) || h >= adaptive_end(oh, out_h, in_h)) continue;
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        if (w < adaptive_start(ow, out_w, in_w) || w >= adaptive_end(ow, out_w, in_w)) continue;
        const int64_t kw = adaptive_end(ow, out_w, in_w) - adaptive_start(ow, out_w, in_w);
        sum += widen(gp[oh * out_w + ow]) / static_cast<Acc<T>>(kh) / static_cast<Acc<T>>(kw);
      }
    }
    gx[i] = narrow<T>(sum);
  }
}

template <typename T>
__global__ void adaptive_max_kernel(const T* x, T* y, int64_t* indices, int64_t total, int64_t in_h, int64_t in_w,
                                    int64_t out_h, int64_t out_w) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t ow = i % out_w, oh = (i / out_w) % out_h, plane = i / (out_w * out_h);
    const int64_t h0 = adaptive_start(oh, out_h, in_h), h1 = adaptive_end(oh, out_h, in_h);
    const int64_t w0 = adaptive_start(ow, out_w, in_w), w1 = adaptive_end(ow, out_w, in_w);
    const T* xp = x + plane * in_h * in_w;
    int64_t best = h0 * in_w + w0;
    Acc<T> best_v = -::cuda::std::numeric_limits<Acc<T>>::infinity();
    for (int64_t h = h0; h < h1; ++h) {
      for (int64_t w = w0; w < w1; ++w) {
        const T v = xp[h * in_w + w];
        if (widen(v) > best_v || is_nan(v)) {
          best_v = widen(v);
          best = h * in_w + w;
        }
      }
    }
    y[i] = narrow<T>(best_v);
    indices[i] = best;
  }
}

template <typename T>
__global__ void adaptive_max_backward_kernel(const T* gy, const int64_t* indices, T* gx, int64_t total,
                                             int64_t in_plane, int64_t out_plane) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t plane = i / out_plane;
    atomic_add(gx + plane * in_plane + indices[i], gy[i]);
  }
}

// ---- host side ---------------------------------------------------------------------------

Tensor meta_of(const Tensor& t) {
  return ember::empty_strided(t.sizes(), t.strides(), t.dtype(), Device(DeviceType::Meta));
}

// Channels-last inputs give channels-last results, as PyTorch's CUDA kernels do.
Tensor in_layout_of(const Tensor& out, const Tensor& like) {
  if (like.dim() == 4 && !like.is_contiguous() && like.is_contiguous(MemoryFormat::ChannelsLast)) {
    return out.contiguous(MemoryFormat::ChannelsLast);
  }
  return out;
}

bool same_shape(IntArrayRef a, IntArrayRef b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

int64_t planes_of(const Tensor& t) {
  const int64_t hw = t.size(-1) * t.size(-2);
  return hw == 0 ? 0 : t.numel() / hw;
}

int64_t pair_at(IntArrayRef v, int i, int64_t dflt) { return v.empty() ? dflt : (v.size() == 1 ? v[0] : v[i]); }

PoolWindow2d window_of(const Tensor& input, const Tensor& output, IntArrayRef kernel, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation) {
  PoolWindow2d g;
  g.in_h = input.size(-2);
  g.in_w = input.size(-1);
  g.out_h = output.size(-2);
  g.out_w = output.size(-1);
  g.kernel_h = pair_at(kernel, 0, 1);
  g.kernel_w = pair_at(kernel, 1, 1);
  g.stride_h = pair_at(stride, 0, g.kernel_h);
  g.stride_w = pair_at(stride, 1, g.kernel_w);
  g.pad_h = pair_at(padding, 0, 0);
  g.pad_w = pair_at(padding, 1, 0);
  g.dil_h = pair_at(dilation, 0, 1);
  g.dil_w = pair_at(dilation, 1, 1);
  return g;
}

template <typename T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices_cuda(const Tensor& self, IntArrayRef kernel, IntArrayRef stride,
                                                        IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  auto [meta_out, meta_idx] =
      dispatch::max_pool2d_with_indices_kernels[kMeta](meta_of(self), kernel, stride, padding, dilation, ceil_mode);
  Tensor out = ember::empty(meta_out.sizes(), self.dtype(), self.device());
  Tensor idx = ember::empty(meta_out.sizes(), ScalarType::Long, self.device());
  const int64_t total = out.numel();
  if (total == 0) return {out, idx};
  const Tensor x = self.contiguous();
  const PoolWindow2d g = window_of(x, out, kernel, stride, padding, dilation);
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_floating(self.dtype(), "max_pool2d_with_indices_out_cuda_frame", [&](auto tag) {
    using T = decltype(tag);
    max_pool2d_kernel<T>
        <<<blocks_for(total), kThreads, 0, stream>>>(ptr<T>(x), ptr<T>(out), ptr<int64_t>(idx), total, g);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return {in_layout_of(out, self), in_layout_of(idx, self)};
}

Tensor max_pool2d_with_indices_backward_cuda(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel,
                                             IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                             bool ceil_mode, const Tensor& indices) {
  auto [meta_out, meta_idx] =
      dispatch::max_pool2d_with_indices_kernels[kMeta](meta_of(self), kernel, stride, padding, dilation, ceil_mode);
  EMBER_CHECK(same_shape(grad_output.sizes(), meta_out.sizes()) && same_shape(indices.sizes(), meta_out.sizes()),
              "max_pool2d_with_indices_backward: grad_output and indices must have the output's shape ",
              shape_string(meta_out.sizes()));
  Tensor gx = ember::empty(self.sizes(), self.dtype(), self.device());
  const int64_t total = gx.numel();
  if (total == 0) return gx;
  const Tensor gy = grad_output.to(self.dtype()).contiguous(), idx = indices.contiguous();
  const PoolWindow2d g = window_of(self, gy, kernel, stride, padding, dilation);
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_floating(self.dtype(), "max_pool2d_with_indices_backward_out_cuda_frame", [&](auto tag) {
    using T = decltype(tag);
    max_pool2d_backward_kernel<T>
        <<<blocks_for(total), kThreads, 0, stream>>>(ptr<T>(gy), ptr<int64_t>(idx), ptr<T>(gx), total, g);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return in_layout_of(gx, self);
}

Tensor avg_pool2d_cuda(const Tensor& self, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                       bool count_include_pad, std::optional<int64_t> divisor_override) {
  // The meta kernel's uint8 refusal is PyTorch's meta registration; its CUDA
  // kernel checks the shapes and then names itself in the dtype error.
  const Tensor probe =
      self.dtype() == ScalarType::Byte
          ? ember::empty_strided(self.sizes(), self.strides(), ScalarType::Float, Device(DeviceType::Meta))
          : meta_of(self);
  Tensor meta_out = dispatch::avg_pool2d_kernels[kMeta](probe, kernel, stride, padding, ceil_mode, count_include_pad,
                                                        divisor_override);
  Tensor out = ember::empty(meta_out.sizes(), self.dtype(), self.device());
  const int64_t total = out.numel();
  if (total == 0) return out;
  const Tensor x = self.contiguous();
  const PoolWindow2d g = window_of(x, out, kernel, stride, padding, IntArrayRef());
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_floating(self.dtype(), "avg_pool2d_out_cuda_frame", [&](auto tag) {
    using T = decltype(tag);
    avg_pool2d_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(ptr<T>(x), ptr<T>(out), total, g,
                                                                     count_include_pad, divisor_override.value_or(0));
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return in_layout_of(out, self);
}

Tensor avg_pool2d_backward_cuda(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel, IntArrayRef stride,
                                IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                std::optional<int64_t> divisor_override) {
  Tensor meta_out = dispatch::avg_pool2d_kernels[kMeta](meta_of(self), kernel, stride, padding, ceil_mode,
                                                        count_include_pad, divisor_override);
  EMBER_CHECK(same_shape(grad_output.sizes(), meta_out.sizes()),
              "avg_pool2d_backward: grad_output must have the shape ", shape_string(meta_out.sizes()));
  Tensor gx = ember::empty(self.sizes(), self.dtype(), self.device());
  const int64_t total = gx.numel();
  if (total == 0) return gx;
  const Tensor gy = grad_output.to(self.dtype()).contiguous();
  const PoolWindow2d g = window_of(self, gy, kernel, stride, padding, IntArrayRef());
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_floating(self.dtype(), "avg_pool2d_backward_out_cuda_frame", [&](auto tag) {
    using T = decltype(tag);
    avg_pool2d_backward_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
        ptr<T>(gy), ptr<T>(gx), total, g, count_include_pad, divisor_override.value_or(0));
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return in_layout_of(gx, self);
}

Tensor adaptive_avg_pool2d_cuda(const Tensor& self, IntArrayRef output_size) {
  Tensor meta_out = dispatch::_adaptive_avg_pool2d_kernels[kMeta](meta_of(self), output_size);
  Tensor out = ember::empty(meta_out.sizes(), self.dtype(), self.device());
  const int64_t total = out.numel();
  if (total == 0) return out;
  const Tensor x = self.contiguous();
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_floating(self.dtype(), "adaptive_avg_pool2d_cuda", [&](auto tag) {
    using T = decltype(tag);
    adaptive_avg_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(ptr<T>(x), ptr<T>(out), total, x.size(-2),
                                                                       x.size(-1), out.size(-2), out.size(-1));
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return in_layout_of(out, self);
}

Tensor adaptive_avg_pool2d_backward_cuda(const Tensor& grad_output, const Tensor& self) {
  Tensor gx = ember::empty(self.sizes(), self.dtype(), self.device());
  const int64_t total = gx.numel();
  if (total == 0) return gx;
  EMBER_CHECK(grad_output.dim() == self.dim() &&
                  planes_of(grad_output) * grad_output.size(-1) * grad_output.size(-2) == grad_output.numel(),
              "adaptive_avg_pool2d_backward: bad grad_output shape");
  const Tensor gy = grad_output.to(self.dtype()).contiguous();
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_floating(self.dtype(), "adaptive_avg_pool2d_backward_cuda", [&](auto tag) {
    using T = decltype(tag);
    adaptive_avg_backward_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
        ptr<T>(gy), ptr<T>(gx), total, self.size(-2), self.size(-1), gy.size(-2), gy.size(-1));
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return in_layout_of(gx, self);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_cuda(const Tensor& self, IntArrayRef output_size) {
  EMBER_CHECK(self.dim() == 3 || self.dim() == 4,
              "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: ", shape_string(self.sizes()));
  EMBER_CHECK(output_size.size() == 2, "adaptive_max_pool2d(): internal error: output_size.size() must be 2");
  for (int64_t d = 1; d < self.dim(); ++d) {
    EMBER_CHECK(self.size(d) > 0,
                "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                "dimensions, but input has sizes ",
                shape_string(self.sizes()), " with dimension ", d, " being empty");
  }
  DimVector shape(self.sizes());
  shape[shape.size() - 2] = output_size[0];
  shape[shape.size() - 1] = output_size[1];
  Tensor out = ember::empty(shape, self.dtype(), self.device());
  Tensor idx = ember::empty(shape, ScalarType::Long, self.device());
  const int64_t total = out.numel();
  if (total == 0) return {out, idx};
  const Tensor x = self.contiguous();
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_floating(self.dtype(), "adaptive_max_pool2d_cuda", [&](auto tag) {
    using T = decltype(tag);
    adaptive_max_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
        ptr<T>(x), ptr<T>(out), ptr<int64_t>(idx), total, x.size(-2), x.size(-1), output_size[0], output_size[1]);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return {in_layout_of(out, self), in_layout_of(idx, self)};
}

Tensor adaptive_max_pool2d_backward_cuda(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  Tensor gx = ember::zeros(self.sizes(), self.dtype(), self.device());
  const int64_t total = grad_output.numel();
  if (total == 0 || gx.numel() == 0) return gx;
  const Tensor gy = grad_output.to(self.dtype()).contiguous(), idx = indices.contiguous();
  const int64_t in_plane = self.size(-1) * self.size(-2), out_plane = gy.size(-1) * gy.size(-2);
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_floating(self.dtype(), "adaptive_max_pool2d_backward_cuda", [&](auto tag) {
    using T = decltype(tag);
    adaptive_max_backward_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(ptr<T>(gy), ptr<int64_t>(idx),
                                                                                ptr<T>(gx), total, in_plane, out_plane);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return in_layout_of(gx, self);
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::max_pool2d_with_indices_kernels[cuda] = &max_pool2d_with_indices_cuda;
  dispatch::max_pool2d_with_indices_backward_kernels[cuda] = &max_pool2d_with_indices_backward_cuda;
  dispatch::avg_pool2d_kernels[cuda] = &avg_pool2d_cuda;
  dispatch::avg_pool2d_backward_kernels[cuda] = &avg_pool2d_backward_cuda;
  dispatch::_adaptive_avg_pool2d_kernels[cuda] = &adaptive_avg_pool2d_cuda;
  dispatch::_adaptive_avg_pool2d_backward_kernels[cuda] = &adaptive_avg_pool2d_backward_cuda;
  dispatch::adaptive_max_pool2d_kernels[cuda] = &adaptive_max_pool2d_cuda;
  dispatch::adaptive_max_pool2d_backward_kernels[cuda] = &adaptive_max_pool2d_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::nn
