// CUDA kernels of index_select, gather, scatter (src, value, add), index_add,
// masked_fill and embedding's backward. Argument checks and result shapes come
// from the CPU functions run on meta copies of the arguments (their messages,
// their order); the kernels walk one element per thread. An out-of-range index
// is flagged on the device and read back after the launch; the CPU function
// then runs on host copies to raise its own exception (PyTorch stops the
// process's CUDA context with a device-side assert instead).
#include <limits>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cuda {

// ---- host helpers ----------------------------------------------------------------------

Tensor meta_copy(const Tensor& t) {
  if (!t.defined()) return Tensor();
  return ember::empty_strided(t.sizes(), t.strides(), t.dtype(), Device(DeviceType::Meta));
}

BadIndexFlag::BadIndexFlag(const Device& device) {
  storage = ember::empty({1}, ScalarType::Long, device);
  ptr = static_cast<unsigned long long*>(storage.data_ptr());
  EMBER_CUDA_CHECK(cudaMemsetAsync(ptr, 0xff, sizeof(unsigned long long), current_stream(device.index)));
}

bool BadIndexFlag::raised() const {
  unsigned long long host = 0;
  cudaStream_t stream = current_stream(storage.device().index);
  EMBER_CUDA_CHECK(cudaMemcpyAsync(&host, ptr, sizeof(host), cudaMemcpyDeviceToHost, stream));
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host != std::numeric_limits<unsigned long long>::max();
}

IndexGeometry geometry_of(IntArrayRef shape, IntArrayRef target, IntArrayRef other, IntArrayRef index) {
  // A 0-dim operand (one element) stays put while the walk moves.
  const DimVector still(shape.size(), 0);
  auto fit = [&](IntArrayRef s) {
    EMBER_CHECK(s.size() == shape.size() || s.empty(), "internal error in a CUDA index kernel: operand of ", s.size(),
                " dimensions in a walk of ", shape.size(), "; this is a bug");
    return s.size() == shape.size() ? s.data() : still.data();
  };
  const int64_t* strides[kOperands] = {fit(target), fit(other), fit(index)};
  IndexGeometry g;
  if (!make_index_geometry(shape.data(), static_cast<int>(shape.size()), strides, kOperands, g)) {
    throw Error(str_cat("index kernels on CUDA support at most ", kMaxIndexDims, " dimensions, got ", shape.size()));
  }
  return g;
}

DimVector strides_without(const Tensor& t, int64_t d) {
  DimVector s(t.strides());
  if (t.dim() > 0) s[d] = 0;
  return s;
}

namespace {

DimVector zeros_like_shape(int64_t n) { return DimVector(n, 0); }

// The strides of a vector index laid along dimension d of an n-dim walk.
DimVector index_along(const Tensor& index, int64_t n, int64_t d) {
  DimVector s(n, 0);
  if (n > 0 && index.dim() > 0) s[d] = index.strides()[0];
  return s;
}

// ---- element operations (target offset, other offset, index value) ---------------------

template <typename T>
struct ReadTarget {  // out[other] = src[target]: index_select, gather
  const T* src;
  T* out;
  __device__ void operator()(int64_t t, int64_t o, int64_t) const { out[o] = src[t]; }
};

template <typename T>
struct WriteTarget {  // out[target] = src[other]: scatter
  T* out;
  const T* src;
  __device__ void operator()(int64_t t, int64_t o, int64_t) const { out[t] = src[o]; }
};

template <typename T>
struct FillTarget {  // out[target] = value: scatter with a number
  T* out;
  T value;
  __device__ void operator()(int64_t t, int64_t, int64_t) const { out[t] = value; }
};

template <typename T>
struct AddToTarget {  // out[target] += src[other] (* alpha): scatter_add, index_add
  T* out;
  const T* src;
  T alpha;
  bool scaled;
  __device__ void operator()(int64_t t, int64_t o, int64_t) const {
    atomic_add(out + t, scaled ? mul_in(src[o], alpha) : src[o]);
  }
};

template <typename Acc, typename T>
struct EmbeddingGradAdd {  // acc[row] += grad (/ count[row]), padding row skipped
  Acc* acc;
  const T* grad;
  const int64_t* counts;  // null unless scale_grad_by_freq
  int64_t padding_idx;
  int64_t row_stride;
  __device__ void operator()(int64_t t, int64_t o, int64_t v) const {
    if (v == padding_idx) return;
    Acc g = widen(grad[o]);
    if (counts) g = g / static_cast<Acc>(counts[v * row_stride]);
    atomic_add(acc + t, g);
  }
};

struct CountRows {  // counts[index] += 1
  int64_t* counts;
  __device__ void operator()(int64_t t, int64_t, int64_t) const { atomic_add(counts + t, int64_t(1)); }
};

template <typename T>
__global__ void masked_fill_kernel(IndexGeometry g, T* out, const bool* mask, T value) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t linear = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; linear < g.numel; linear += step) {
    int64_t off[kOperands];
    g.offsets(linear, off);
    if (mask[off[1]]) out[off[0]] = value;
  }
}

template <typename Op>
void launch_walk(const IndexGeometry& g, const Tensor& index, int64_t target_stride_d, int64_t size_d,
                 const BadIndexFlag& flag, const Op& op, bool wrap_negative = false) {
  if (g.numel == 0) return;
  const LaunchShape s = launch_shape(g.numel);
  cudaStream_t stream = current_stream(index.device().index);
  if (index.dtype() == ScalarType::Int) {
    index_walk_kernel<int32_t, Op><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(
        g, static_cast<const int32_t*>(index.data_ptr()), target_stride_d, size_d, wrap_negative, flag.ptr, op);
  } else {
    index_walk_kernel<int64_t, Op><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(
        g, static_cast<const int64_t*>(index.data_ptr()), target_stride_d, size_d, wrap_negative, flag.ptr, op);
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// The number a 0-dim tensor holds, read on the host.
Scalar scalar_of(const Tensor& t) {
  const Tensor c = on_cpu(t);
  if (c.is_complex()) return Scalar(c.item<std::complex<double>>());
  if (c.is_floating_point()) return Scalar(c.item<double>());
  if (c.dtype() == ScalarType::Bool) return Scalar(c.item<bool>());
  return Scalar(c.item<int64_t>());
}

// Raises the CPU function's exception for the bad index found on the device.
template <typename F>
[[noreturn]] void raise_cpu_error(F&& run_on_cpu) {
  run_on_cpu();
  throw IndexError("index out of range in self");
}

// The result of a scatter-like op starts as a copy of self (or is self).
void init_like_self(const Tensor& self, Tensor& out) {
  if (!out.defined()) {
    out = self.clone(MemoryFormat::Contiguous);
  } else if (!out.is_same(self)) {
    resize_output(out, self.sizes());
    out.copy_(self);
  }
}

// The output the meta run shaped: allocated, or out resized to it.
void shape_output(const Tensor& like, const Tensor& meta_out, Tensor& out) {
  if (!out.defined()) {
    out = ember::empty(meta_out.sizes(), meta_out.dtype(), like.device());
  } else {
    resize_output(out, meta_out.sizes());
  }
}

// A dtype's value as the device type's bits.
template <typename T>
T value_as(const Scalar& value, ScalarType dtype) {
  Tensor v = ember::scalar_tensor(value, dtype);
  T bits{};
  std::memcpy(&bits, v.data_ptr(), sizeof(T));
  return bits;
}

// Same-size dtypes through the copy kernels would accept any dtype: this is
// the list PyTorch's CUDA index kernels take (all, bool, 16-bit floats, complex).
void check_dtype(ScalarType t, const char* kernel_name) {
  dispatch_device_types(t, kernel_name, [](auto) {});
}

// ---- index_select ------------------------------------------------------------------------

Tensor& index_select_out_cuda(const Tensor& self, int64_t dim, const Tensor& index, Tensor& out) {
  Tensor meta_out = meta_copy(out);
  dispatch::index_select_kernels[kCpuKernel](meta_copy(self), dim, meta_copy(index), meta_out);
  check_dtype(self.dtype(), "index_select_cuda");
  shape_output(self, meta_out, out);
  if (out.numel() == 0) return out;
  const int64_t d = self.dim() > 0 ? maybe_wrap_dim(dim, self.dim()) : 0;
  const int64_t n = out.dim();
  IndexGeometry g = geometry_of(out.sizes(), strides_without(self, d), out.strides(), index_along(index, n, d));
  BadIndexFlag flag(self.device());
  const int64_t size_d = self.dim() > 0 ? self.sizes()[d] : 1;
  const int64_t stride_d = self.dim() > 0 ? self.strides()[d] : 0;
  dispatch_by_size(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_walk(g, index, stride_d, size_d, flag,
                ReadTarget<T>{static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr())});
  });
  if (flag.raised()) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::index_select_kernels[kCpuKernel](on_cpu(self), dim, on_cpu(index), cpu_out);
    });
  }
  return out;
}

// ---- gather ------------------------------------------------------------------------------

Tensor& gather_out_cuda(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad, Tensor& out) {
  Tensor meta_out = meta_copy(out);
  dispatch::gather_kernels[kCpuKernel](meta_copy(self), dim, meta_copy(index), sparse_grad, meta_out);
  check_dtype(self.dtype(), "gather_out_cuda");
  shape_output(self, meta_out, out);
  if (out.numel() == 0) return out;
  const int64_t d = self.dim() > 0 ? maybe_wrap_dim(dim, self.dim()) : 0;
  IndexGeometry g = geometry_of(index.sizes(), strides_without(self, d), out.strides(), index.strides());
  BadIndexFlag flag(self.device());
  const int64_t size_d = self.dim() > 0 ? self.sizes()[d] : 1;
  const int64_t stride_d = self.dim() > 0 ? self.strides()[d] : 0;
  dispatch_by_size(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_walk(g, index, stride_d, size_d, flag,
                ReadTarget<T>{static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr())});
  });
  if (flag.raised()) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::gather_kernels[kCpuKernel](on_cpu(self), dim, on_cpu(index), sparse_grad, cpu_out);
    });
  }
  return out;
}

// ---- scatter, scatter_add, index_add ------------------------------------------------------

// Runs the CPU function on meta copies; out == self stays one tensor.
template <typename F>
void meta_check_inplace(const Tensor& self, const Tensor& out, F&& run) {
  Tensor meta_self = meta_copy(self);
  Tensor meta_out = out.defined() ? (out.is_same(self) ? meta_self : meta_copy(out)) : Tensor();
  run(meta_self, meta_out);
}

enum class ScatterKind { Src, Value, Add };

// Writes into out (a copy of self, or self); true when an index was out of range.
bool scatter_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Scalar* value,
                  ScatterKind kind, Tensor& out) {
  init_like_self(self, out);
  if (index.numel() == 0) return false;
  const int64_t d = out.dim() > 0 ? maybe_wrap_dim(dim, out.dim()) : 0;
  const DimVector none = zeros_like_shape(index.dim());
  IndexGeometry g = geometry_of(index.sizes(), strides_without(out, d),
                                src.defined() ? src.strides() : IntArrayRef(none), index.strides());
  BadIndexFlag flag(out.device());
  const int64_t size_d = out.dim() > 0 ? out.sizes()[d] : 1;
  const int64_t stride_d = out.dim() > 0 ? out.strides()[d] : 0;
  if (kind == ScatterKind::Add) {
    dispatch_device_types(out.dtype(), "scatter_add_cuda_", [&](auto tag) {
      using T = decltype(tag);
      launch_walk(g, index, stride_d, size_d, flag,
                  AddToTarget<T>{static_cast<T*>(out.data_ptr()), static_cast<const T*>(src.data_ptr()), T{}, false});
    });
  } else {
    check_dtype(out.dtype(), "scatter_cuda_");
    dispatch_by_size(out.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if (kind == ScatterKind::Value) {
        launch_walk(g, index, stride_d, size_d, flag,
                    FillTarget<T>{static_cast<T*>(out.data_ptr()), value_as<T>(*value, out.dtype())});
      } else {
        launch_walk(g, index, stride_d, size_d, flag,
                    WriteTarget<T>{static_cast<T*>(out.data_ptr()), static_cast<const T*>(src.data_ptr())});
      }
    });
  }
  return flag.raised();
}

Tensor& scatter_src_out_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, Tensor& out) {
  meta_check_inplace(self, out, [&](const Tensor& ms, Tensor& mo) {
    dispatch::scatter_src_kernels[kCpuKernel](ms, dim, meta_copy(index), meta_copy(src), mo);
  });
  if (scatter_cuda(self, dim, index, src, nullptr, ScatterKind::Src, out)) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::scatter_src_kernels[kCpuKernel](on_cpu(self), dim, on_cpu(index), on_cpu(src), cpu_out);
    });
  }
  return out;
}

Tensor& scatter_value_out_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, Tensor& out) {
  meta_check_inplace(self, out, [&](const Tensor& ms, Tensor& mo) {
    dispatch::scatter_value_kernels[kCpuKernel](ms, dim, meta_copy(index), value, mo);
  });
  if (scatter_cuda(self, dim, index, Tensor(), &value, ScatterKind::Value, out)) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::scatter_value_kernels[kCpuKernel](on_cpu(self), dim, on_cpu(index), value, cpu_out);
    });
  }
  return out;
}

Tensor& scatter_add_out_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, Tensor& out) {
  meta_check_inplace(self, out, [&](const Tensor& ms, Tensor& mo) {
    dispatch::scatter_add_kernels[kCpuKernel](ms, dim, meta_copy(index), meta_copy(src), mo);
  });
  if (scatter_cuda(self, dim, index, src, nullptr, ScatterKind::Add, out)) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::scatter_add_kernels[kCpuKernel](on_cpu(self), dim, on_cpu(index), on_cpu(src), cpu_out);
    });
  }
  return out;
}

Tensor& index_add_out_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                           const Scalar& alpha, Tensor& out) {
  meta_check_inplace(self, out, [&](const Tensor& ms, Tensor& mo) {
    dispatch::index_add_kernels[kCpuKernel](ms, dim, meta_copy(index), meta_copy(source), alpha, mo);
  });
  init_like_self(self, out);
  if (index.numel() == 0 || source.numel() == 0) return out;
  const int64_t d = out.dim() > 0 ? maybe_wrap_dim(dim, out.dim()) : 0;
  // The walk runs over source; a 0-dim source adds one element.
  IndexGeometry g =
      geometry_of(source.sizes(), strides_without(out, d), source.strides(), index_along(index, source.dim(), d));
  BadIndexFlag flag(out.device());
  const int64_t size_d = out.dim() > 0 ? out.sizes()[d] : 1;
  const int64_t stride_d = out.dim() > 0 ? out.strides()[d] : 0;
  const bool scaled = !alpha.equal(1.0);
  dispatch_device_types(out.dtype(), "index_add_cuda_", [&](auto tag) {
    using T = decltype(tag);
    T a{};
    if (scaled) a = value_as<T>(alpha, out.dtype());
    launch_walk(g, index, stride_d, size_d, flag,
                AddToTarget<T>{static_cast<T*>(out.data_ptr()), static_cast<const T*>(source.data_ptr()), a, scaled});
  });
  if (flag.raised()) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::index_add_kernels[kCpuKernel](on_cpu(self), dim, on_cpu(index), on_cpu(source), alpha, cpu_out);
    });
  }
  return out;
}

// ---- take, index_fill ----------------------------------------------------------------------

Tensor& take_out_cuda(const Tensor& self, const Tensor& index, Tensor& out) {
  Tensor meta_out = meta_copy(out);
  dispatch::take_kernels[kCpuKernel](meta_copy(self), meta_copy(index), meta_out);
  check_dtype(self.dtype(), "take_cuda");
  shape_output(self, meta_out, out);
  if (out.numel() == 0) return out;
  // self read as its flat, contiguous elements; positions count from the end when negative.
  Tensor flat = self.contiguous();
  const DimVector none = zeros_like_shape(index.dim());
  IndexGeometry g = geometry_of(index.sizes(), none, out.strides(), index.strides());
  BadIndexFlag flag(self.device());
  dispatch_by_size(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_walk(g, index, 1, flat.numel(), flag,
                ReadTarget<T>{static_cast<const T*>(flat.data_ptr()), static_cast<T*>(out.data_ptr())}, true);
  });
  if (flag.raised()) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::take_kernels[kCpuKernel](on_cpu(self), on_cpu(index), cpu_out);
    });
  }
  return out;
}

// out[..., index[j], ...] = value along dim (negative positions count from the end).
bool index_fill_cuda(Tensor& out, int64_t dim, const Tensor& index, const Scalar& value) {
  if (index.numel() == 0 || out.numel() == 0) return false;
  const int64_t d = out.dim() > 0 ? maybe_wrap_dim(dim, out.dim()) : 0;
  DimVector shape(out.sizes());
  if (out.dim() > 0) shape[d] = index.numel();
  const DimVector none = zeros_like_shape(out.dim());
  IndexGeometry g = geometry_of(shape, strides_without(out, d), none, index_along(index, out.dim(), d));
  BadIndexFlag flag(out.device());
  const int64_t size_d = out.dim() > 0 ? out.sizes()[d] : 1;
  const int64_t stride_d = out.dim() > 0 ? out.strides()[d] : 0;
  check_dtype(out.dtype(), "index_fill_");
  dispatch_by_size(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_walk(g, index, stride_d, size_d, flag,
                FillTarget<T>{static_cast<T*>(out.data_ptr()), value_as<T>(value, out.dtype())}, true);
  });
  return flag.raised();
}

Tensor& index_fill_int_scalar_out_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                                       Tensor& out) {
  meta_check_inplace(self, out, [&](const Tensor& ms, Tensor& mo) {
    dispatch::index_fill_int_Scalar_kernels[kCpuKernel](ms, dim, meta_copy(index), value, mo);
  });
  init_like_self(self, out);
  if (index_fill_cuda(out, dim, index, value)) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::index_fill_int_Scalar_kernels[kCpuKernel](on_cpu(self), dim, on_cpu(index), value, cpu_out);
    });
  }
  return out;
}

Tensor& index_fill_int_tensor_out_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value,
                                       Tensor& out) {
  meta_check_inplace(self, out, [&](const Tensor& ms, Tensor& mo) {
    dispatch::index_fill_int_Tensor_kernels[kCpuKernel](ms, dim, meta_copy(index), meta_copy(value), mo);
  });
  const Scalar number = scalar_of(value);
  init_like_self(self, out);
  if (index_fill_cuda(out, dim, index, number)) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::index_fill_int_Tensor_kernels[kCpuKernel](on_cpu(self), dim, on_cpu(index), on_cpu(value), cpu_out);
    });
  }
  return out;
}

// ---- index_copy -------------------------------------------------------------------------------

Tensor& index_copy_out_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, Tensor& out) {
  meta_check_inplace(self, out, [&](const Tensor& ms, Tensor& mo) {
    dispatch::index_copy_kernels[kCpuKernel](ms, dim, meta_copy(index), meta_copy(source), mo);
  });
  init_like_self(self, out);
  if (index.numel() == 0 || source.numel() == 0) return out;
  const int64_t d = out.dim() > 0 ? maybe_wrap_dim(dim, out.dim()) : 0;
  // The walk runs over source, writing each slice to the position its index names.
  IndexGeometry g =
      geometry_of(source.sizes(), strides_without(out, d), source.strides(), index_along(index, source.dim(), d));
  BadIndexFlag flag(out.device());
  const int64_t size_d = out.dim() > 0 ? out.sizes()[d] : 1;
  const int64_t stride_d = out.dim() > 0 ? out.strides()[d] : 0;
  check_dtype(out.dtype(), "index_copy_cuda_");
  dispatch_by_size(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch_walk(g, index, stride_d, size_d, flag,
                WriteTarget<T>{static_cast<T*>(out.data_ptr()), static_cast<const T*>(source.data_ptr())});
  });
  if (flag.raised()) {
    raise_cpu_error([&] {
      Tensor cpu_out;
      dispatch::index_copy_kernels[kCpuKernel](on_cpu(self), dim, on_cpu(index), on_cpu(source), cpu_out);
    });
  }
  return out;
}

// ---- masked_fill ---------------------------------------------------------------------------

void masked_fill_cuda_inplace(Tensor& out, const Tensor& mask, const Scalar& value) {
  if (out.numel() == 0) return;
  check_dtype(out.dtype(), "masked_fill_");
  Tensor m = mask.expand(out.sizes());
  const DimVector none = zeros_like_shape(out.dim());
  IndexGeometry g = geometry_of(out.sizes(), out.strides(), m.strides(), none);
  const LaunchShape s = launch_shape(g.numel);
  cudaStream_t stream = current_stream(out.device().index);
  dispatch_by_size(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    masked_fill_kernel<T><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(
        g, static_cast<T*>(out.data_ptr()), static_cast<const bool*>(m.data_ptr()), value_as<T>(value, out.dtype()));
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

Tensor& masked_fill_out_cuda(const Tensor& self, const Tensor& mask, const Scalar& value, Tensor& out) {
  meta_check_inplace(self, out, [&](const Tensor& ms, Tensor& mo) {
    dispatch::masked_fill_Scalar_kernels[kCpuKernel](ms, meta_copy(mask), value, mo);
  });
  if (!out.defined()) {
    out = ember::empty(infer_broadcast_size(self.sizes(), mask.sizes()), self.dtype(), self.device());
    out.copy_(self);
  }
  masked_fill_cuda_inplace(out, mask, value);
  return out;
}

Tensor& masked_fill_tensor_out_cuda(const Tensor& self, const Tensor& mask, const Tensor& value, Tensor& out) {
  meta_check_inplace(self, out, [&](const Tensor& ms, Tensor& mo) {
    dispatch::masked_fill_Tensor_kernels[kCpuKernel](ms, meta_copy(mask), meta_copy(value), mo);
  });
  // The value's number is read on the host (one copy of a 0-dim tensor).
  const Scalar number = scalar_of(value);
  if (!out.defined()) {
    out = ember::empty(infer_broadcast_size(self.sizes(), mask.sizes()), self.dtype(), self.device());
    out.copy_(self);
  }
  masked_fill_cuda_inplace(out, mask, number);
  return out;
}

// ---- embedding backward ----------------------------------------------------------------------

Tensor embedding_dense_backward_cuda(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                     int64_t padding_idx, bool scale_grad_by_freq) {
  const int64_t width = grad_output.dim() > 0 ? grad_output.sizes()[grad_output.dim() - 1] : 1;
  const int64_t n = indices.numel();
  const ScalarType dtype = grad_output.dtype();
  // 16-bit gradients add up in float, as PyTorch's CUDA kernel does, then round once.
  const bool widen = dtype == ScalarType::Half || dtype == ScalarType::BFloat16;
  Tensor acc = ember::zeros({num_weights, width}, widen ? ScalarType::Float : dtype, grad_output.device());
  if (n == 0 || width == 0) return widen ? acc.to(dtype) : acc;
  Tensor idx = indices.reshape({n});
  Tensor grad = grad_output.reshape({n, width});
  BadIndexFlag flag(grad_output.device());
  Tensor counts;
  if (scale_grad_by_freq) {
    counts = ember::zeros({num_weights}, ScalarType::Long, grad_output.device());
    IndexGeometry cg = geometry_of(IntArrayRef({n}), IntArrayRef({int64_t(0)}), IntArrayRef({int64_t(0)}),
                                   IntArrayRef({idx.strides()[0]}));
    launch_walk(cg, idx, 1, num_weights, flag, CountRows{static_cast<int64_t*>(counts.data_ptr())});
  }
  const DimVector acc_strides{0, acc.strides()[1]};
  IndexGeometry g = geometry_of(grad.sizes(), acc_strides, grad.strides(), DimVector{idx.strides()[0], 0});
  const int64_t* count_ptr = counts.defined() ? static_cast<const int64_t*>(counts.data_ptr()) : nullptr;
  dispatch_device_types<kAllFloating>(dtype, "embedding_backward", [&](auto grad_tag) {
    using T = decltype(grad_tag);
    using Acc = device_acc_t<T>;
    launch_walk(g, idx, acc.strides()[0], num_weights, flag,
                EmbeddingGradAdd<Acc, T>{static_cast<Acc*>(acc.data_ptr()), static_cast<const T*>(grad.data_ptr()),
                                         count_ptr, padding_idx, 1});
  });
  if (flag.raised()) {
    raise_cpu_error([&] {
      dispatch::embedding_dense_backward_kernels[kCpuKernel](on_cpu(grad_output), on_cpu(indices), num_weights,
                                                             padding_idx, scale_grad_by_freq);
    });
  }
  return widen ? acc.to(dtype) : acc;
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::index_select_kernels[cuda] = &index_select_out_cuda;
  dispatch::gather_kernels[cuda] = &gather_out_cuda;
  dispatch::scatter_src_kernels[cuda] = &scatter_src_out_cuda;
  dispatch::scatter_value_kernels[cuda] = &scatter_value_out_cuda;
  dispatch::scatter_add_kernels[cuda] = &scatter_add_out_cuda;
  dispatch::index_add_kernels[cuda] = &index_add_out_cuda;
  dispatch::masked_fill_Scalar_kernels[cuda] = &masked_fill_out_cuda;
  dispatch::masked_fill_Tensor_kernels[cuda] = &masked_fill_tensor_out_cuda;
  dispatch::embedding_dense_backward_kernels[cuda] = &embedding_dense_backward_cuda;
  dispatch::take_kernels[cuda] = &take_out_cuda;
  dispatch::index_copy_kernels[cuda] = &index_copy_out_cuda;
  dispatch::index_fill_int_Scalar_kernels[cuda] = &index_fill_int_scalar_out_cuda;
  dispatch::index_fill_int_Tensor_kernels[cuda] = &index_fill_int_tensor_out_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
