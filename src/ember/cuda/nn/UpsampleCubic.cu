// CUDA kernels of bicubic upsampling and of the antialiased bilinear and
// bicubic interpolations (interpolate(antialias=True)), forward and backward.
// Note [CUDA cubic and antialiased resampling].
#include <cmath>
#include <optional>
#include <vector>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/cuda/nn/ResampleIndex.h"
#include "ember/cuda/nn/UpsampleFilter.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::nn {
namespace {

// Note [CUDA cubic and antialiased resampling]
// These follow PyTorch's CUDA kernels, whose arithmetic differs from the CPU
// kernels in small ways that change low bits:
// - bicubic: the source position is not clamped below zero (the four taps
//   are clamped to the border instead); the integer tap is floorf of the
//   position (float even for float64); each of the four rows is
//   interpolated along the width, then the four row values along the height,
//   all in the accumulate type. When the output has the input's size the
//   output is a copy, whatever the scale factors say.
// - backward of bicubic: each output gradient times its height then width
//   weight is rounded to the dtype and added atomically (16-bit gradients
//   accumulate in 16 bits, as PyTorch's do).
// - antialiased: the normalised filter weights are held in the dtype (a
//   16-bit weight is the rounded filter value divided by the rounded sum);
//   each output sums its rows along the width, rounds each row to the
//   dtype, then sums along the height. The backward adds
//   weight_x * weight_y * gradient (products in the dtype) atomically; an
//   output of the input's size copies the gradient.
// Output sizes and argument errors come from the CPU functions, which answer
// a meta input with the output's shape after their checks.

constexpr int kCpu = static_cast<int>(DeviceType::CPU);

Tensor meta_of(const Tensor& t) {
  return ember::empty_strided(t.sizes(), t.strides(), t.dtype(), Device(DeviceType::Meta));
}

std::optional<double> scale_at(const std::optional<std::vector<double>>& s, size_t i) {
  if (!s || s->size() <= i) return std::nullopt;
  return (*s)[i];
}

// T * T in the dtype's arithmetic: 16-bit floats multiply in float and round.
template <typename T>
__device__ __forceinline__ T mul_round(T a, T b) {
  return narrow<T>(widen(a) * widen(b));
}

// ---- bicubic -----------------------------------------------------------------------------

__device__ __forceinline__ int64_t clamp_tap(int64_t i, int64_t n) { return i < 0 ? 0 : (i > n - 1 ? n - 1 : i); }

template <typename T>
__device__ __forceinline__ Acc<T> cubic_row(const T* row, int64_t x0, int64_t iw, const Acc<T>* c) {
  using A = Acc<T>;
  const A v0 = widen(row[clamp_tap(x0 - 1, iw)]), v1 = widen(row[clamp_tap(x0, iw)]);
  const A v2 = widen(row[clamp_tap(x0 + 1, iw)]), v3 = widen(row[clamp_tap(x0 + 2, iw)]);
  return v0 * c[0] + v1 * c[1] + v2 * c[2] + v3 * c[3];
}

template <typename T>
__global__ void bicubic_kernel(const T* in, T* out, int64_t total, int64_t ih, int64_t iw, int64_t oh, int64_t ow,
                               Acc<T> rh, Acc<T> rw, bool align_corners) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t x = i % ow, y = (i / ow) % oh, plane = i / (ow * oh);
    const CubicTap<A> tx = cubic_tap<A>(rw, x, align_corners);
    const CubicTap<A> ty = cubic_tap<A>(rh, y, align_corners);
    const T* p = in + plane * ih * iw;
    A rows[4];
    for (int k = 0; k < 4; ++k) rows[k] = cubic_row(p + clamp_tap(ty.i0 - 1 + k, ih) * iw, tx.i0, iw, tx.c);
    out[i] = narrow<T>(rows[0] * ty.c[0] + rows[1] * ty.c[1] + rows[2] * ty.c[2] + rows[3] * ty.c[3]);
  }
}

template <typename T>
__global__ void bicubic_backward_kernel(const T* grad, T* gin, int64_t total, int64_t ih, int64_t iw, int64_t oh,
                                        int64_t ow, Acc<T> rh, Acc<T> rw, bool align_corners) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t x = i % ow, y = (i / ow) % oh, plane = i / (ow * oh);
    const CubicTap<A> tx = cubic_tap<A>(rw, x, align_corners);
    const CubicTap<A> ty = cubic_tap<A>(rh, y, align_corners);
    T* p = gin + plane * ih * iw;
    const A g = widen(grad[i]);
    for (int r = 0; r < 4; ++r) {
      const int64_t row = clamp_tap(ty.i0 - 1 + r, ih) * iw;
      for (int c = 0; c < 4; ++c) {
        atomic_add(p + row + clamp_tap(tx.i0 - 1 + c, iw), narrow<T>(g * ty.c[r] * tx.c[c]));
      }
    }
  }
}

// A fresh contiguous copy of src with the given shape (the same-size case).
Tensor copy_of(const Tensor& src, IntArrayRef shape) {
  Tensor out = ember::empty(shape, src.dtype(), src.device());
  if (out.numel() > 0) out.copy_(src.reshape(shape));
  return out;
}

Tensor bicubic_cuda(const Tensor& self, std::optional<std::vector<int64_t>> output_size, bool align_corners,
                    std::optional<std::vector<double>> scales) {
  const Tensor meta = dispatch::upsample_bicubic2d_kernels[kCpu](meta_of(self), output_size, align_corners, scales);
  const int64_t ih = self.size(2), iw = self.size(3), oh = meta.size(2), ow = meta.size(3);
  Tensor out = ember::empty(meta.sizes(), self.dtype(), self.device());
  const int64_t total = out.numel();
  dispatch_floating(self.dtype(), "upsample_bicubic2d_out_frame", [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    if (total == 0) return;
    if (ih == oh && iw == ow) {
      out.copy_(self);
      return;
    }
    const Tensor x = self.contiguous();
    const A rh = area_scale<A>(ih, oh, align_corners, scale_at(scales, 0));
    const A rw = area_scale<A>(iw, ow, align_corners, scale_at(scales, 1));
    bicubic_kernel<T><<<blocks_for(total), kThreads, 0, current_stream(self.device().index)>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(out.data_ptr()), total, ih, iw, oh, ow, rh, rw,
        align_corners);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

Tensor bicubic_backward_cuda(const Tensor& grad, IntArrayRef input_size, bool align_corners,
                             std::optional<std::vector<double>> scales) {
  EMBER_CHECK(input_size.size() == 4 && grad.dim() == 4, "upsample_bicubic2d_backward: expected 4D sizes");
  Tensor gin = ember::zeros(input_size, grad.dtype(), grad.device());
  const int64_t ih = input_size[2], iw = input_size[3], oh = grad.size(2), ow = grad.size(3);
  const int64_t total = grad.numel();
  dispatch_floating(grad.dtype(), "upsample_bicubic2d_backward_out_frame", [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    if (total == 0 || gin.numel() == 0) return;
    if (ih == oh && iw == ow) {
      gin.copy_(grad);
      return;
    }
    const Tensor g = grad.contiguous();
    const A rh = area_scale<A>(ih, oh, align_corners, scale_at(scales, 0));
    const A rw = area_scale<A>(iw, ow, align_corners, scale_at(scales, 1));
    bicubic_backward_kernel<T><<<blocks_for(total), kThreads, 0, current_stream(grad.device().index)>>>(
        static_cast<const T*>(g.data_ptr()), static_cast<T*>(gin.data_ptr()), total, ih, iw, oh, ow, rh, rw,
        align_corners);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return gin;
}

// ---- antialiased -------------------------------------------------------------------------

// One axis's filter: per output position its first source index, its tap
// count and `width` weights in the dtype (zero past the taps).
template <typename T>
__global__ void aa_weights_kernel(int64_t out_size, int64_t in_size, Acc<T> scale, Acc<T> support, Acc<T> invscale,
                                  int64_t width, bool cubic, int64_t* starts, int64_t* counts, T* weights) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(o, out_size) {
    const AaSpan<A> span = aa_span<A>(o, in_size, scale, support);
    T* w = weights + o * width;
    A total = 0;
    int64_t j = 0;
    for (; j < span.size; ++j) {
      const A v = aa_filter<A>(aa_filter_arg<A>(j, span.min_minus_center, invscale), cubic);
      w[j] = narrow<T>(v);
      total += v;
    }
    if (total != A(0)) {
      for (j = 0; j < span.size; ++j) {
        if constexpr (std::is_same_v<T, A>) {
          w[j] = w[j] / total;
        } else {
          w[j] = narrow<T>(widen(w[j]) / widen(narrow<T>(total)));  // dtype / dtype, as PyTorch's 16-bit path
        }
      }
    }
    for (j = span.size < 0 ? 0 : span.size; j < width; ++j) w[j] = narrow<T>(A(0));
    starts[o] = span.min;
    counts[o] = span.size;
  }
}

struct AaAxis {
  Tensor starts, counts, weights;
  int64_t width;
};

template <typename T>
AaAxis aa_axis(int64_t in_size, int64_t out_size, bool align_corners, std::optional<double> scale_opt, bool cubic,
               ScalarType dtype, const Device& device) {
  using A = Acc<T>;
  const A scale = area_scale<A>(in_size, out_size, align_corners, scale_opt);
  const AaSupport<A> s = aa_support<A>(scale, cubic);
  AaAxis ax{ember::empty({out_size}, ScalarType::Long, device), ember::empty({out_size}, ScalarType::Long, device),
            Tensor(), s.width};
  ax.weights = ember::empty({out_size, s.width}, dtype, device);
  aa_weights_kernel<T><<<blocks_for(out_size), kThreads, 0, current_stream(device.index)>>>(
      out_size, in_size, scale, s.support, s.invscale, s.width, cubic, static_cast<int64_t*>(ax.starts.data_ptr()),
      static_cast<int64_t*>(ax.counts.data_ptr()), static_cast<T*>(ax.weights.data_ptr()));
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return ax;
}

struct AaView {
  const int64_t *ys, *yn, *xs, *xn;
  int64_t yw, xw;
};

template <typename T>
__global__ void aa_kernel(const T* in, T* out, int64_t total, int64_t ih, int64_t iw, int64_t oh, int64_t ow, AaView v,
                          const T* wy, const T* wx) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t x = i % ow, y = (i / ow) % oh, plane = i / (ow * oh);
    const int64_t y0 = v.ys[y], ny = v.yn[y], x0 = v.xs[x], nx = v.xn[x];
    const T* wxs = wx + x * v.xw;
    const T* wys = wy + y * v.yw;
    const T* p = in + plane * ih * iw + x0;
    A acc = 0;
    for (int64_t r = 0; r < ny; ++r) {
      const T* row = p + (y0 + r) * iw;
      A s = widen(row[0]) * widen(wxs[0]);
      for (int64_t c = 1; c < nx; ++c) s += widen(row[c]) * widen(wxs[c]);
      const A rounded = widen(narrow<T>(s));  // each row is held in the dtype
      if (r == 0) {
        acc = rounded * widen(wys[0]);
      } else {
        acc += rounded * widen(wys[r]);
      }
    }
    out[i] = narrow<T>(acc);
  }
}

template <typename T>
__global__ void aa_backward_kernel(const T* grad, T* gin, int64_t total, int64_t ih, int64_t iw, int64_t oh, int64_t ow,
                                   AaView v, const T* wy, const T* wx) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t x = i % ow, y = (i / ow) % oh, plane = i / (ow * oh);
    const int64_t y0 = v.ys[y], ny = v.yn[y], x0 = v.xs[x], nx = v.xn[x];
    const T* wxs = wx + x * v.xw;
    const T* wys = wy + y * v.yw;
    T* p = gin + plane * ih * iw + x0;
    const T g = grad[i];
    for (int64_t r = 0; r < ny; ++r) {
      for (int64_t c = 0; c < nx; ++c) atomic_add(p + (y0 + r) * iw + c, mul_round(mul_round(wxs[c], wys[r]), g));
    }
  }
}

template <bool Backward>
void run_aa(const Tensor& src, const Tensor& dst, int64_t ih, int64_t iw, int64_t oh, int64_t ow, bool align_corners,
            const std::optional<std::vector<double>>& scales, bool cubic, const char* name) {
  const Device device = src.device();
  dispatch_floating(src.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    const AaAxis ay = aa_axis<T>(ih, oh, align_corners, scale_at(scales, 0), cubic, src.dtype(), device);
    const AaAxis ax = aa_axis<T>(iw, ow, align_corners, scale_at(scales, 1), cubic, src.dtype(), device);
    const AaView v{static_cast<const int64_t*>(ay.starts.data_ptr()),
                   static_cast<const int64_t*>(ay.counts.data_ptr()),
                   static_cast<const int64_t*>(ax.starts.data_ptr()),
                   static_cast<const int64_t*>(ax.counts.data_ptr()),
                   ay.width,
                   ax.width};
    const T* wy = static_cast<const T*>(ay.weights.data_ptr());
    const T* wx = static_cast<const T*>(ax.weights.data_ptr());
    cudaStream_t stream = current_stream(device.index);
    if constexpr (Backward) {
      const int64_t total = src.numel();
      aa_backward_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
          static_cast<const T*>(src.data_ptr()), static_cast<T*>(dst.data_ptr()), total, ih, iw, oh, ow, v, wy, wx);
    } else {
      const int64_t total = dst.numel();
      aa_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
          static_cast<const T*>(src.data_ptr()), static_cast<T*>(dst.data_ptr()), total, ih, iw, oh, ow, v, wy, wx);
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

template <bool Cubic>
Tensor aa_cuda(const Tensor& self, std::optional<std::vector<int64_t>> output_size, bool align_corners,
               std::optional<std::vector<double>> scales) {
  auto* table = Cubic ? dispatch::_upsample_bicubic2d_aa_kernels : dispatch::_upsample_bilinear2d_aa_kernels;
  const Tensor meta = table[kCpu](meta_of(self), output_size, align_corners, scales);
  Tensor out = ember::empty(meta.sizes(), self.dtype(), self.device());
  const char* name = "upsample_bilinear2d_out_frame";  // PyTorch's name for both filters' kernel
  if (out.numel() == 0) {
    dispatch_floating(self.dtype(), name, [](auto) {});
    return out;
  }
  run_aa<false>(self.contiguous(), out, self.size(2), self.size(3), out.size(2), out.size(3), align_corners, scales,
                Cubic, name);
  return out;
}

Tensor aa_backward_cuda(const Tensor& grad, IntArrayRef input_size, bool align_corners,
                        std::optional<std::vector<double>> scales, bool cubic) {
  EMBER_CHECK(input_size.size() == 4 && grad.dim() == 4, "upsample_aa2d_backward: expected 4D sizes");
  Tensor gin = ember::zeros(input_size, grad.dtype(), grad.device());
  const char* name = "upsample_gen2d_backward_out_frame";
  if (gin.numel() == 0 || grad.numel() == 0) {
    dispatch_floating(grad.dtype(), name, [](auto) {});
    return gin;
  }
  const int64_t ih = input_size[2], iw = input_size[3], oh = grad.size(2), ow = grad.size(3);
  if (ih == oh && iw == ow) return copy_of(grad, input_size);
  run_aa<true>(grad.contiguous(), gin, ih, iw, oh, ow, align_corners, scales, cubic, name);
  return gin;
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::upsample_bicubic2d_kernels[cuda] = &bicubic_cuda;
  dispatch::_upsample_bicubic2d_backward_kernels[cuda] = &bicubic_backward_cuda;
  dispatch::_upsample_bilinear2d_aa_kernels[cuda] = &aa_cuda<false>;
  dispatch::_upsample_bicubic2d_aa_kernels[cuda] = &aa_cuda<true>;
  dispatch::_upsample_aa2d_backward_kernels[cuda] = &aa_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::nn
