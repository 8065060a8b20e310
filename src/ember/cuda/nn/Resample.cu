// CUDA kernels of reflection and replication padding, nearest upsampling and
// linear/bilinear upsampling, forward and backward; embedding's dense
// backward. Note [CUDA index tables].
#include <optional>
#include <vector>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/cuda/nn/ResampleIndex.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::nn {
namespace {

// Note [CUDA index tables]
// Padding and nearest upsampling read one input position per output
// position, chosen per dim by the CPU function's index rules (held to
// PyTorch's). The CUDA kernels take those rules from the CPU function itself:
// run once on a plane holding 0, 1, 2, ... (float64, exact), its result is the
// source offset of every output position of a plane. That table (one plane,
// not the batch) is copied to the device; the forward gathers through it
// (any dtype, by element size) and the backward adds each output gradient
// into its source atomically, as PyTorch's CUDA backward kernels do.

constexpr int kCpu = static_cast<int>(DeviceType::CPU);
constexpr int kMeta = static_cast<int>(DeviceType::Meta);

template <typename E>
__global__ void gather_table_kernel(const E* in, E* out, const int64_t* table, int64_t total, int64_t in_plane,
                                    int64_t out_plane) {
  EMBER_NN_GRID_LOOP(i, total) { out[i] = in[(i / out_plane) * in_plane + table[i % out_plane]]; }
}

template <typename T>
__global__ void scatter_table_kernel(const T* grad, T* gin, const int64_t* table, int64_t total, int64_t in_plane,
                                     int64_t out_plane) {
  EMBER_NN_GRID_LOOP(i, total) { atomic_add(gin + (i / out_plane) * in_plane + table[i % out_plane], grad[i]); }
}

Tensor meta_of(const Tensor& t) {
  return ember::empty_strided(t.sizes(), t.strides(), t.dtype(), Device(DeviceType::Meta));
}

int64_t prod_last(IntArrayRef s, int64_t k) {
  int64_t p = 1;
  for (size_t d = s.size() - static_cast<size_t>(k); d < s.size(); ++d) p *= s[d];
  return p;
}

// The index plane: `lead` leading unit dims, then the last k sizes of `sizes`.
Tensor index_plane(IntArrayRef sizes, int64_t k, int64_t lead) {
  DimVector shape(static_cast<size_t>(lead), 1);
  for (size_t d = sizes.size() - static_cast<size_t>(k); d < sizes.size(); ++d) shape.push_back(sizes[d]);
  return ember::arange(prod_last(sizes, k), ScalarType::Double).view(shape);
}

Tensor table_on(const Tensor& cpu_result, const Device& device) {
  return cpu_result.to(ScalarType::Long).contiguous().view({-1}).to(device);
}

// out (fresh, the meta result's shape) gathered from self through the table.
Tensor gather_through(const Tensor& self, IntArrayRef out_shape, const Tensor& table, int64_t k) {
  Tensor out = ember::empty(out_shape, self.dtype(), self.device());
  const int64_t total = out.numel();
  if (total == 0) return out;
  const Tensor x = self.contiguous();
  const int64_t in_plane = prod_last(x.sizes(), k), out_plane = prod_last(out.sizes(), k);
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_by_size(self.dtype(), [&](auto tag) {
    using E = decltype(tag);
    gather_table_kernel<E><<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const E*>(x.data_ptr()), static_cast<E*>(out.data_ptr()),
        static_cast<const int64_t*>(table.data_ptr()), total, in_plane, out_plane);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

Tensor scatter_through(const Tensor& grad, IntArrayRef input_size, const Tensor& table, int64_t k,
                       const char* kernel_name) {
  Tensor gin = ember::zeros(input_size, grad.dtype(), grad.device());
  const int64_t total = grad.numel();
  if (total == 0 || gin.numel() == 0) return gin;
  const Tensor g = grad.contiguous();
  const int64_t in_plane = prod_last(input_size, k), out_plane = prod_last(g.sizes(), k);
  cudaStream_t stream = current_stream(grad.device().index);
  dispatch_floating(grad.dtype(), kernel_name, [&](auto tag) {
    using T = decltype(tag);
    scatter_table_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const T*>(g.data_ptr()), static_cast<T*>(gin.data_ptr()),
        static_cast<const int64_t*>(table.data_ptr()), total, in_plane, out_plane);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return gin;
}

using PadKernel = Tensor (*)(const Tensor&, IntArrayRef);

PadKernel* pad_table(int64_t mode, int64_t k) {
  static PadKernel* reflection[3] = {dispatch::reflection_pad1d_kernels, dispatch::reflection_pad2d_kernels,
                                     dispatch::reflection_pad3d_kernels};
  static PadKernel* replication[3] = {dispatch::replication_pad1d_kernels, dispatch::replication_pad2d_kernels,
                                      dispatch::replication_pad3d_kernels};
  EMBER_CHECK(k >= 1 && k <= 3, "padding: expected 2, 4 or 6 padding values");
  if (mode == 0) return reflection[k - 1];
  if (mode == 1) return replication[k - 1];
  throw NotImplementedError(str_cat("pad_backward: mode ", mode, " has no CUDA kernel"));
}

Tensor pad_table_for(int64_t mode, IntArrayRef sizes, IntArrayRef padding, const Device& device) {
  const int64_t k = static_cast<int64_t>(padding.size()) / 2;
  return table_on(pad_table(mode, k)[kCpu](index_plane(sizes, k, 1), padding), device);
}

template <int Mode, int K>
Tensor pad_cuda(const Tensor& self, IntArrayRef padding) {
  Tensor meta = pad_table(Mode, K)[kMeta](meta_of(self), padding);
  if (meta.numel() == 0) return ember::empty(meta.sizes(), self.dtype(), self.device());
  return gather_through(self, meta.sizes(), pad_table_for(Mode, self.sizes(), padding, self.device()), K);
}

Tensor pad_backward_cuda(const Tensor& grad, IntArrayRef input_size, IntArrayRef padding, int64_t mode) {
  const int64_t k = static_cast<int64_t>(padding.size()) / 2;
  return scatter_through(grad, input_size, pad_table_for(mode, input_size, padding, grad.device()), k,
                         mode == 0 ? "reflection_pad_backward_cuda" : "replication_pad_backward_cuda");
}

using NearestKernel = Tensor (*)(const Tensor&, std::optional<std::vector<int64_t>>,
                                 std::optional<std::vector<double>>);

NearestKernel* nearest_table(int64_t k, bool exact) {
  static NearestKernel* plain[3] = {dispatch::upsample_nearest1d_kernels, dispatch::upsample_nearest2d_kernels,
                                    dispatch::upsample_nearest3d_kernels};
  static NearestKernel* exacts[3] = {dispatch::_upsample_nearest_exact1d_kernels,
                                     dispatch::_upsample_nearest_exact2d_kernels,
                                     dispatch::_upsample_nearest_exact3d_kernels};
  EMBER_CHECK(k >= 1 && k <= 3, "upsample_nearest: 1 to 3 spatial dims");
  return exact ? exacts[k - 1] : plain[k - 1];
}

Tensor nearest_table_for(int64_t k, bool exact, IntArrayRef in_sizes, IntArrayRef out_sizes,
                         const std::optional<std::vector<double>>& scales, const Device& device) {
  // Exactly one of output size and scale factors, as the operator takes them.
  std::optional<std::vector<int64_t>> out;
  if (!scales) out = std::vector<int64_t>(out_sizes.end() - k, out_sizes.end());
  return table_on(nearest_table(k, exact)[kCpu](index_plane(in_sizes, k, 2), out, scales), device);
}

template <int K, bool Exact>
Tensor nearest_cuda(const Tensor& self, std::optional<std::vector<int64_t>> output_size,
                    std::optional<std::vector<double>> scales) {
  Tensor meta = nearest_table(K, Exact)[kMeta](meta_of(self), output_size, scales);
  if (meta.numel() == 0) return ember::empty(meta.sizes(), self.dtype(), self.device());
  return gather_through(self, meta.sizes(),
                        nearest_table_for(K, Exact, self.sizes(), meta.sizes(), scales, self.device()), K);
}

Tensor nearest_backward_cuda(const Tensor& grad, IntArrayRef input_size, int64_t k,
                             std::optional<std::vector<double>> scales, bool exact) {
  return scatter_through(grad, input_size, nearest_table_for(k, exact, input_size, grad.sizes(), scales, grad.device()),
                         k, "upsample_nearest_backward_cuda");
}

// ---- linear and bilinear ----------------------------------------------------------------

template <typename T>
__global__ void bilinear_kernel(const T* in, T* out, int64_t total, int64_t ih, int64_t iw, int64_t oh, int64_t ow,
                                Acc<T> rh, Acc<T> rw, bool align_corners) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t x = i % ow, y = (i / ow) % oh, plane = i / (ow * oh);
    const LinearTap<A> th = linear_tap<A>(rh, y, align_corners, ih);
    const LinearTap<A> tw = linear_tap<A>(rw, x, align_corners, iw);
    const T* p = in + plane * ih * iw;
    const A v = th.l0 * (tw.l0 * widen(p[th.i0 * iw + tw.i0]) + tw.l1 * widen(p[th.i0 * iw + tw.i0 + tw.step])) +
                th.l1 * (tw.l0 * widen(p[(th.i0 + th.step) * iw + tw.i0]) +
                         tw.l1 * widen(p[(th.i0 + th.step) * iw + tw.i0 + tw.step]));
    out[i] = narrow<T>(v);
  }
}

template <typename T>
__global__ void bilinear_backward_kernel(const T* grad, T* gin, int64_t total, int64_t ih, int64_t iw, int64_t oh,
                                         int64_t ow, Acc<T> rh, Acc<T> rw, bool align_corners) {
  using A = Acc<T>;
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t x = i % ow, y = (i / ow) % oh, plane = i / (ow * oh);
    const LinearTap<A> th = linear_tap<A>(rh, y, align_corners, ih);
    const LinearTap<A> tw = linear_tap<A>(rw, x, align_corners, iw);
    T* p = gin + plane * ih * iw;
    const A g = widen(grad[i]);
    atomic_add(p + th.i0 * iw + tw.i0, narrow<T>(th.l0 * tw.l0 * g));
    atomic_add(p + th.i0 * iw + tw.i0 + tw.step, narrow<T>(th.l0 * tw.l1 * g));
    atomic_add(p + (th.i0 + th.step) * iw + tw.i0, narrow<T>(th.l1 * tw.l0 * g));
    atomic_add(p + (th.i0 + th.step) * iw + tw.i0 + tw.step, narrow<T>(th.l1 * tw.l1 * g));
  }
}

std::optional<double> scale_at(const std::optional<std::vector<double>>& s, size_t i) {
  if (!s || s->size() <= i) return std::nullopt;
  return (*s)[i];
}

// Runs the (bi)linear kernel on planes of (ih, iw) -> (oh, iw); 1-d calls have unit heights.
template <bool Backward>
void run_bilinear(const Tensor& src, const Tensor& dst, int64_t ih, int64_t iw, int64_t oh, int64_t ow,
                  std::optional<double> sh, std::optional<double> sw, bool align_corners, const char* name) {
  const int64_t total = Backward ? src.numel() : dst.numel();
  if (total == 0) return;
  cudaStream_t stream = current_stream(src.device().index);
  dispatch_floating(src.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    const A rh = area_scale<A>(ih, oh, align_corners, sh), rw = area_scale<A>(iw, ow, align_corners, sw);
    if constexpr (Backward) {
      bilinear_backward_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const T*>(src.data_ptr()),
                                                                              static_cast<T*>(dst.data_ptr()), total,
                                                                              ih, iw, oh, ow, rh, rw, align_corners);
    } else {
      bilinear_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const T*>(src.data_ptr()),
                                                                     static_cast<T*>(dst.data_ptr()), total, ih, iw, oh,
                                                                     ow, rh, rw, align_corners);
    }
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

template <int K>
Tensor linear_cuda(const Tensor& self, std::optional<std::vector<int64_t>> output_size, bool align_corners,
                   std::optional<std::vector<double>> scales) {
  Tensor meta = (K == 1 ? dispatch::upsample_linear1d_kernels : dispatch::upsample_bilinear2d_kernels)[kMeta](
      meta_of(self), output_size, align_corners, scales);
  Tensor out = ember::empty(meta.sizes(), self.dtype(), self.device());
  const Tensor x = self.contiguous();
  const int64_t iw = x.size(-1), ow = out.size(-1);
  const int64_t ih = K == 2 ? x.size(-2) : 1, oh = K == 2 ? out.size(-2) : 1;
  run_bilinear<false>(x, out, ih, iw, oh, ow, K == 2 ? scale_at(scales, 0) : std::nullopt,
                      scale_at(scales, K == 2 ? 1 : 0), align_corners,
                      K == 2 ? "upsample_bilinear2d_out_frame" : "upsample_linear1d_out_frame");
  return out;
}

Tensor linear_backward_cuda(const Tensor& grad, IntArrayRef input_size, int64_t k, bool align_corners,
                            std::optional<std::vector<double>> scales) {
  EMBER_CHECK(k == 1 || k == 2, "upsample_linear_backward: 1 or 2 spatial dims on CUDA");
  Tensor gin = ember::zeros(input_size, grad.dtype(), grad.device());
  const Tensor g = grad.contiguous();
  const int64_t iw = input_size.back(), ow = g.size(-1);
  const int64_t ih = k == 2 ? input_size[input_size.size() - 2] : 1, oh = k == 2 ? g.size(-2) : 1;
  if (gin.numel() == 0) return gin;
  run_bilinear<true>(g, gin, ih, iw, oh, ow, k == 2 ? scale_at(scales, 0) : std::nullopt,
                     scale_at(scales, k == 2 ? 1 : 0), align_corners,
                     k == 2 ? "upsample_bilinear2d_backward_out_frame" : "upsample_linear1d_backward_out_frame");
  return gin;
}

// ---- embedding backward ----------------------------------------------------------------------

__global__ void count_indices_kernel(const int64_t* idx, int64_t n, int64_t* counts) {
  EMBER_NN_GRID_LOOP(i, n) { atomicAdd(reinterpret_cast<unsigned long long*>(counts + idx[i]), 1ull); }
}

template <typename T>
__global__ void embedding_backward_kernel(const T* grad, const int64_t* idx, const int64_t* counts, T* gw, int64_t n,
                                          int64_t dim, int64_t padding_idx) {
  EMBER_NN_GRID_LOOP(i, n * dim) {
    const int64_t row = idx[i / dim];
    if (row == padding_idx) continue;
    Acc<T> g = widen(grad[i]);
    if (counts) g = g / static_cast<Acc<T>>(counts[row]);
    atomic_add(gw + row * dim + i % dim, narrow<T>(g));
  }
}

Tensor embedding_dense_backward_cuda(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                     int64_t padding_idx, bool scale_grad_by_freq) {
  const int64_t dim = grad_output.size(-1);
  const Device device = grad_output.device();
  Tensor gw = ember::zeros({num_weights, dim}, grad_output.dtype(), device);
  const Tensor idx = indices.to(ScalarType::Long).contiguous().view({-1});
  const int64_t n = idx.numel();
  if (n == 0 || dim == 0) return gw;
  const Tensor g = grad_output.contiguous().view({n, dim});
  cudaStream_t stream = current_stream(device.index);
  Tensor counts;
  if (scale_grad_by_freq) {
    counts = ember::zeros({num_weights}, ScalarType::Long, device);
    count_indices_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const int64_t*>(idx.data_ptr()), n,
                                                                 static_cast<int64_t*>(counts.data_ptr()));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
  dispatch_floating(grad_output.dtype(), "embedding_backward", [&](auto tag) {
    using T = decltype(tag);
    embedding_backward_kernel<T><<<blocks_for(n * dim), kThreads, 0, stream>>>(
        static_cast<const T*>(g.data_ptr()), static_cast<const int64_t*>(idx.data_ptr()),
        counts.defined() ? static_cast<const int64_t*>(counts.data_ptr()) : nullptr, static_cast<T*>(gw.data_ptr()), n,
        dim, padding_idx);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return gw;
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::reflection_pad1d_kernels[cuda] = &pad_cuda<0, 1>;
  dispatch::reflection_pad2d_kernels[cuda] = &pad_cuda<0, 2>;
  dispatch::reflection_pad3d_kernels[cuda] = &pad_cuda<0, 3>;
  dispatch::replication_pad1d_kernels[cuda] = &pad_cuda<1, 1>;
  dispatch::replication_pad2d_kernels[cuda] = &pad_cuda<1, 2>;
  dispatch::replication_pad3d_kernels[cuda] = &pad_cuda<1, 3>;
  dispatch::_pad_backward_kernels[cuda] = &pad_backward_cuda;
  dispatch::upsample_nearest1d_kernels[cuda] = &nearest_cuda<1, false>;
  dispatch::upsample_nearest2d_kernels[cuda] = &nearest_cuda<2, false>;
  dispatch::upsample_nearest3d_kernels[cuda] = &nearest_cuda<3, false>;
  dispatch::_upsample_nearest_exact1d_kernels[cuda] = &nearest_cuda<1, true>;
  dispatch::_upsample_nearest_exact2d_kernels[cuda] = &nearest_cuda<2, true>;
  dispatch::_upsample_nearest_exact3d_kernels[cuda] = &nearest_cuda<3, true>;
  dispatch::_upsample_nearest_backward_kernels[cuda] = &nearest_backward_cuda;
  dispatch::upsample_linear1d_kernels[cuda] = &linear_cuda<1>;
  dispatch::upsample_bilinear2d_kernels[cuda] = &linear_cuda<2>;
  dispatch::_upsample_linear_backward_kernels[cuda] = &linear_backward_cuda;
  dispatch::embedding_dense_backward_kernels[cuda] = &embedding_dense_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::nn
