// CUDA kernels of im2col (F.unfold) and col2im (F.fold). Shapes and argument
// errors come from the CPU functions run on meta tensors.
//
// im2col copies: one thread per (channel, block row, block column) writes
// that block's kernel_h * kernel_w column entries (zero where the window
// reaches into the padding). col2im gathers instead of scattering, as
// PyTorch's CUDA kernel does: one thread per image element sums, in the
// accumulate type, the column entries whose window covers it, block rows
// outer and block columns inner, then rounds once.
#include <vector>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::nn {
namespace {

constexpr int kMeta = static_cast<int>(DeviceType::Meta);

struct FoldGeometry {
  int64_t channels, height, width, kh, kw, ph, pw, sh, sw, dh, dw, col_h, col_w;
};

Tensor meta_of(const Tensor& t) {
  return ember::empty_strided(t.sizes(), t.strides(), t.dtype(), Device(DeviceType::Meta));
}

FoldGeometry geometry(int64_t channels, int64_t height, int64_t width, IntArrayRef kernel_size, IntArrayRef dilation,
                      IntArrayRef padding, IntArrayRef stride) {
  FoldGeometry g{channels,    height,     width,     kernel_size[0], kernel_size[1],
                 padding[0],  padding[1], stride[0], stride[1],      dilation[0],
                 dilation[1], 0,          0};
  g.col_h = (height + 2 * g.ph - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
  g.col_w = (width + 2 * g.pw - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
  return g;
}

// E: an element of the dtype's size (a pure copy).
template <typename E>
__global__ void im2col_kernel(const E* im, E* col, int64_t total, FoldGeometry g) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t bx = i % g.col_w, by = (i / g.col_w) % g.col_h, rest = i / (g.col_w * g.col_h);
    const int64_t channel = rest % g.channels, batch = rest / g.channels;
    const int64_t y0 = by * g.sh - g.ph, x0 = bx * g.sw - g.pw;
    const E* src = im + (batch * g.channels + channel) * g.height * g.width;
    const int64_t plane = g.col_h * g.col_w;
    E* dst = col + (batch * g.channels + channel) * g.kh * g.kw * plane + by * g.col_w + bx;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int64_t y = y0 + ky * g.dh, x = x0 + kx * g.dw;
        *dst = (y >= 0 && x >= 0 && y < g.height && x < g.width) ? src[y * g.width + x] : E{};
        dst += plane;
      }
    }
  }
}

// Accumulate type and addition of col2im's sums (bool sums are logical or).
template <typename T>
struct FoldAcc {
  using type = Acc<T>;
  static __device__ type zero() { return type(0); }
  static __device__ type add(type a, T v) { return a + widen(v); }
  static __device__ T store(type a) { return narrow<T>(a); }
};
template <>
struct FoldAcc<bool> {
  using type = bool;
  static __device__ bool zero() { return false; }
  static __device__ bool add(bool a, bool v) { return a || v; }
  static __device__ bool store(bool a) { return a; }
};
template <typename R>
struct FoldAcc<DeviceComplex<R>> {
  using type = DeviceComplex<R>;
  static __device__ type zero() { return {R(0), R(0)}; }
  static __device__ type add(type a, type v) { return {a.re + v.re, a.im + v.im}; }
  static __device__ type store(type a) { return a; }
};

template <typename T>
__global__ void col2im_kernel(const T* col, T* im, int64_t total, FoldGeometry g) {
  using F = FoldAcc<T>;
  const int64_t extent_h = (g.kh - 1) * g.dh + 1, extent_w = (g.kw - 1) * g.dw + 1;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t x = i % g.width + g.pw, y = (i / g.width) % g.height + g.ph;
    const int64_t plane = i / (g.width * g.height);  // batch * channels + channel
    const int64_t bx0 = x < extent_w ? 0 : (x - extent_w) / g.sw + 1;
    const int64_t bx1 = x / g.sw + 1 < g.col_w ? x / g.sw + 1 : g.col_w;
    const int64_t by0 = y < extent_h ? 0 : (y - extent_h) / g.sh + 1;
    const int64_t by1 = y / g.sh + 1 < g.col_h ? y / g.sh + 1 : g.col_h;
    const T* src = col + plane * g.kh * g.kw * g.col_h * g.col_w;
    typename F::type sum = F::zero();
    for (int64_t by = by0; by < by1; ++by) {
      for (int64_t bx = bx0; bx < bx1; ++bx) {
        int64_t ky = y - by * g.sh, kx = x - bx * g.sw;
        if (ky % g.dh == 0 && kx % g.dw == 0) {
          ky /= g.dh;
          kx /= g.dw;
          sum = F::add(sum, src[((ky * g.kw + kx) * g.col_h + by) * g.col_w + bx]);
        }
      }
    }
    im[i] = F::store(sum);
  }
}

// f(T{}) for the dtypes of PyTorch's CUDA im2col and col2im: floating,
// complex and bool; its NotImplementedError otherwise.
template <typename F>
void dispatch_fold(ScalarType t, const char* name, F&& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    case ScalarType::Half: return f(__half{});
    case ScalarType::BFloat16: return f(__nv_bfloat16{});
    case ScalarType::Bool: return f(bool{});
    case ScalarType::ComplexFloat: return f(DeviceComplex<float>{});
    case ScalarType::ComplexDouble: return f(DeviceComplex<double>{});
    default: break;
  }
  throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
}

Tensor im2col_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                   IntArrayRef stride) {
  const Tensor meta = dispatch::im2col_kernels[kMeta](meta_of(self), kernel_size, dilation, padding, stride);
  Tensor out = ember::empty(meta.sizes(), self.dtype(), self.device());
  dispatch_fold(self.dtype(), "im2col_out_cuda", [](auto) {});
  const bool batched = self.dim() == 4;
  const int64_t batch = batched ? self.size(0) : 1;
  const FoldGeometry g = geometry(self.size(-3), self.size(-2), self.size(-1), kernel_size, dilation, padding, stride);
  const int64_t total = batch * g.channels * g.col_h * g.col_w;
  if (out.numel() == 0 || total == 0) return out;
  const Tensor x = self.contiguous();
  dispatch_by_size(self.dtype(), [&](auto tag) {
    using E = decltype(tag);
    im2col_kernel<E><<<blocks_for(total), kThreads, 0, current_stream(self.device().index)>>>(
        static_cast<const E*>(x.data_ptr()), static_cast<E*>(out.data_ptr()), total, g);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

Tensor col2im_cuda(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
                   IntArrayRef padding, IntArrayRef stride) {
  const Tensor meta =
      dispatch::col2im_kernels[kMeta](meta_of(self), output_size, kernel_size, dilation, padding, stride);
  Tensor out = ember::empty(meta.sizes(), self.dtype(), self.device());
  const bool batched = self.dim() == 3;
  const int64_t batch = batched ? self.size(0) : 1;
  const FoldGeometry g =
      geometry(meta.size(-3), output_size[0], output_size[1], kernel_size, dilation, padding, stride);
  const int64_t total = batch * g.channels * g.height * g.width;
  dispatch_fold(self.dtype(), "col2im_out_cuda", [&](auto tag) {
    using T = decltype(tag);
    if (total == 0) return;
    const Tensor x = self.contiguous();
    col2im_kernel<T><<<blocks_for(total), kThreads, 0, current_stream(self.device().index)>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(out.data_ptr()), total, g);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::im2col_kernels[cuda] = &im2col_cuda;
  dispatch::col2im_kernels[cuda] = &col2im_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::nn
