// CUDA kernels of advanced indexing, self[indices] (index.Tensor) and
// self[indices] = values (index_put_, also accumulating): boolean
// masks become their nonzero positions, the index tensors broadcast
// together, and one thread per result element reads every index tensor and
// gathers self's element. Any inconsistency (too many indices, shapes that do
// not broadcast, a bad dtype, an index out of range) is raised by the CPU
// function run on host copies, with its own exception and message.
#include <vector>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cuda {
namespace {

// Index tensors one kernel reads (after masks are expanded).
constexpr int kMaxIndexTensors = 8;

// Result shape innermost first; per result dimension, self's stride (0 for
// the broadcast dimensions) and each index tensor's stride (0 elsewhere).
struct AdvancedIndexPlan {
  int dims = 0;
  int num_indices = 0;
  int64_t numel = 1;
  int64_t sizes[kMaxIndexDims] = {};
  int64_t self_strides[kMaxIndexDims] = {};
  int64_t index_strides[kMaxIndexTensors][kMaxIndexDims] = {};
  const int64_t* index_data[kMaxIndexTensors] = {};
  int64_t indexed_size[kMaxIndexTensors] = {};  // self's size along the indexed dimension
  int64_t indexed_stride[kMaxIndexTensors] = {};  // self's stride along it
  int64_t value_strides[kMaxIndexDims] = {};  // index_put_: the values, broadcast to the result
};

// The offset in self of the result element at `linear`, and in the values;
// false when an index is out of range.
__device__ inline bool locate(const AdvancedIndexPlan& p, int64_t linear, int64_t& self_off, int64_t& value_off) {
  int64_t rest = linear;
  int64_t index_off[kMaxIndexTensors] = {};
  self_off = 0;
  value_off = 0;
  for (int i = 0; i < p.dims; ++i) {
    const int64_t c = rest % p.sizes[i];
    rest /= p.sizes[i];
    self_off += c * p.self_strides[i];
    value_off += c * p.value_strides[i];
    for (int j = 0; j < p.num_indices; ++j) index_off[j] += c * p.index_strides[j][i];
  }
  for (int j = 0; j < p.num_indices; ++j) {
    int64_t v = p.index_data[j][index_off[j]];
    if (v < 0) v += p.indexed_size[j];
    if (v < 0 || v >= p.indexed_size[j]) return false;
    self_off += v * p.indexed_stride[j];
  }
  return true;
}

template <typename T>
__global__ void advanced_index_kernel(AdvancedIndexPlan p, const T* self, T* out, unsigned long long* bad) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t linear = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; linear < p.numel; linear += step) {
    int64_t self_off, value_off;
    if (!locate(p, linear, self_off, value_off)) {
      atomicMin(bad, static_cast<unsigned long long>(linear));
      continue;
    }
    out[linear] = self[self_off];
  }
}

// index_put_: self[indices] = values (or += with accumulate, atomically).
template <typename T, bool Accumulate>
__global__ void advanced_put_kernel(AdvancedIndexPlan p, T* self, const T* values, unsigned long long* bad) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t linear = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; linear < p.numel; linear += step) {
    int64_t self_off, value_off;
    if (!locate(p, linear, self_off, value_off)) {
      atomicMin(bad, static_cast<unsigned long long>(linear));
      continue;
    }
    if constexpr (Accumulate) {
      atomic_add(self + self_off, values[value_off]);
    } else {
      self[self_off] = values[value_off];
    }
  }
}

[[noreturn]] void raise_as_cpu(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                               const char* fallback) {
  std::vector<std::optional<Tensor>> host;
  for (const auto& i : indices) host.push_back(i.has_value() && i->defined() ? std::optional<Tensor>(on_cpu(*i)) : i);
  dispatch::index_Tensor_kernels[kCpuKernel](on_cpu(self), host);
  throw IndexError(fallback);
}

// The walk of self[indices]: fills `planned`; false when the indices are
// inconsistent (the CPU function then raises its error).
struct Planned {
  AdvancedIndexPlan plan;
  std::vector<int64_t> result_shape;
  std::vector<Tensor> keep_alive;  // the index tensors the plan points into
  bool no_indices = false;
};

bool plan_advanced(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, Planned& out) {
  // Positions in self and the long index tensors that select along them.
  std::vector<int64_t> positions;
  std::vector<Tensor> index_tensors;
  int64_t dim = 0;
  bool consistent = true;
  for (const auto& opt : indices) {
    if (!opt.has_value() || !opt->defined()) {
      ++dim;
      continue;
    }
    const Tensor& idx = *opt;
    const ScalarType t = idx.dtype();
    if (t == ScalarType::Bool || t == ScalarType::Byte) {
      const int64_t k = idx.dim();
      if (dim + k > self.dim()) {
        consistent = false;
        break;
      }
      for (int64_t j = 0; j < k; ++j) consistent = consistent && idx.sizes()[j] == self.sizes()[dim + j];
      if (!consistent) break;
      Tensor nz = ember::nonzero(idx);  // (count, k)
      for (int64_t j = 0; j < k; ++j) {
        positions.push_back(dim + j);
        index_tensors.push_back(nz.select(1, j));
      }
      dim += k;
    } else if (t == ScalarType::Long || t == ScalarType::Int) {
      if (dim >= self.dim() && !(self.dim() == 0 && dim == 0)) {
        consistent = false;
        break;
      }
      positions.push_back(dim);
      index_tensors.push_back(t == ScalarType::Long ? idx : idx.to(ScalarType::Long));
      ++dim;
    } else {
      consistent = false;
      break;
    }
  }
  if (!consistent || dim > std::max<int64_t>(self.dim(), 1) || index_tensors.size() > kMaxIndexTensors) {
    return false;
  }
  if (index_tensors.empty()) {
    out.no_indices = true;
    out.result_shape.assign(self.sizes().begin(), self.sizes().end());
    return true;
  }
  DimVector broadcast(index_tensors[0].sizes());
  try {
    for (size_t j = 1; j < index_tensors.size(); ++j) {
      broadcast = infer_broadcast_size(broadcast, index_tensors[j].sizes());
    }
  } catch (const std::exception&) {
    return false;
  }
  bool adjacent = true;
  for (size_t j = 1; j < positions.size(); ++j) adjacent = adjacent && positions[j] == positions[j - 1] + 1;
  // Result dimensions (outermost first): each is either a broadcast dimension or one of self's.
  std::vector<int64_t> result_shape, self_dim_of;  // self_dim_of: -1 for a broadcast dimension
  std::vector<int64_t> broadcast_dim_of;  // index into `broadcast`, or -1
  auto add_self_dim = [&](int64_t d) {
    result_shape.push_back(self.sizes()[d]);
    self_dim_of.push_back(d);
    broadcast_dim_of.push_back(-1);
  };
  auto add_broadcast = [&] {
    for (size_t b = 0; b < broadcast.size(); ++b) {
      result_shape.push_back(broadcast[b]);
      self_dim_of.push_back(-1);
      broadcast_dim_of.push_back(static_cast<int64_t>(b));
    }
  };
  auto indexed = [&](int64_t d) {
    for (int64_t p : positions) {
      if (p == d) return true;
    }
    return false;
  };
  if (adjacent) {
    for (int64_t d = 0; d < positions.front(); ++d) add_self_dim(d);
    add_broadcast();
    for (int64_t d = positions.back() + 1; d < self.dim(); ++d) add_self_dim(d);
  } else {
    add_broadcast();
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!indexed(d)) add_self_dim(d);
    }
  }
  const int nd = static_cast<int>(result_shape.size());
  EMBER_CHECK(nd <= kMaxIndexDims, "index on CUDA supports results of at most ", kMaxIndexDims, " dimensions");
  AdvancedIndexPlan& plan = out.plan;
  plan.dims = nd;
  plan.num_indices = static_cast<int>(index_tensors.size());
  plan.numel = 1;
  for (int64_t size : result_shape) plan.numel *= size;
  std::vector<Tensor> expanded;
  for (size_t j = 0; j < index_tensors.size(); ++j) expanded.push_back(index_tensors[j].expand(broadcast));
  for (int r = 0; r < nd; ++r) {
    const int i = nd - 1 - r;  // innermost first
    plan.sizes[i] = result_shape[r];
    plan.self_strides[i] = self_dim_of[r] >= 0 ? self.strides()[self_dim_of[r]] : 0;
    for (size_t j = 0; j < expanded.size(); ++j) {
      plan.index_strides[j][i] = broadcast_dim_of[r] >= 0 ? expanded[j].strides()[broadcast_dim_of[r]] : 0;
    }
  }
  for (size_t j = 0; j < expanded.size(); ++j) {
    plan.index_data[j] = static_cast<const int64_t*>(expanded[j].data_ptr());
    plan.indexed_size[j] = self.dim() > 0 ? self.sizes()[positions[j]] : 1;
    plan.indexed_stride[j] = self.dim() > 0 ? self.strides()[positions[j]] : 0;
  }
  out.result_shape = result_shape;
  out.keep_alive = std::move(expanded);
  return true;
}

Tensor index_cuda(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  Planned planned;
  if (!plan_advanced(self, indices, planned)) raise_as_cpu(self, indices, "index: unsupported indices on CUDA");
  Tensor result = ember::empty(planned.result_shape, self.dtype(), self.device());
  if (planned.no_indices) {
    result.copy_(self);
    return result;
  }
  if (result.numel() == 0) return result;
  const AdvancedIndexPlan& plan = planned.plan;
  BadIndexFlag flag(self.device());
  const LaunchShape s = launch_shape(plan.numel);
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_device_types(self.dtype(), "index_cuda", [](auto) {});
  dispatch_by_size(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    advanced_index_kernel<T><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(
        plan, static_cast<const T*>(self.data_ptr()), static_cast<T*>(result.data_ptr()), flag.ptr);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  if (flag.raised()) raise_as_cpu(self, indices, "index out of range in self");
  return result;
}

[[noreturn]] void raise_put_as_cpu(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                                   const Tensor& values, bool accumulate, const char* fallback) {
  std::vector<std::optional<Tensor>> host;
  for (const auto& i : indices) host.push_back(i.has_value() && i->defined() ? std::optional<Tensor>(on_cpu(*i)) : i);
  Tensor cpu_out;
  dispatch::index_put_kernels[kCpuKernel](on_cpu(self), host, on_cpu(values), accumulate, cpu_out);
  throw IndexError(fallback);
}

Tensor& index_put_out_cuda(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                           bool accumulate, Tensor& out) {
  if (!out.defined()) {
    out = self.clone(MemoryFormat::Contiguous);
  } else if (!out.is_same(self)) {
    resize_output(out, self.sizes());
    out.copy_(self);
  }
  EMBER_CHECK_TYPE(IndexError, static_cast<int64_t>(indices.size()) <= std::max<int64_t>(out.dim(), 1),
                   "too many indices for tensor of dimension ", out.dim(), " (got ", indices.size(), ")");
  Planned planned;
  if (!plan_advanced(out, indices, planned)) raise_put_as_cpu(self, indices, values, accumulate, "index_put_");
  // values must broadcast to the indexed shape and share out's dtype (the CPU function's messages).
  bool fits = values.dim() <= static_cast<int64_t>(planned.result_shape.size()) && values.dtype() == out.dtype();
  const int64_t lead = static_cast<int64_t>(planned.result_shape.size()) - values.dim();
  for (int64_t i = 0; fits && i < values.dim(); ++i) {
    fits = values.sizes()[i] == 1 || values.sizes()[i] == planned.result_shape[lead + i];
  }
  if (!fits) raise_put_as_cpu(self, indices, values, accumulate, "index_put_: values do not fit");
  if (planned.no_indices) {
    out.copy_(values);
    return out;
  }
  AdvancedIndexPlan& plan = planned.plan;
  if (plan.numel == 0) return out;
  Tensor v = values.expand(planned.result_shape);
  const int nd = plan.dims;
  for (int r = 0; r < nd; ++r) plan.value_strides[nd - 1 - r] = v.strides()[r];
  BadIndexFlag flag(out.device());
  const LaunchShape s = launch_shape(plan.numel);
  cudaStream_t stream = current_stream(out.device().index);
  if (accumulate) {
    dispatch_device_types(out.dtype(), "index_put_with_sort_kernel", [&](auto tag) {
      using T = decltype(tag);
      advanced_put_kernel<T, true><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(
          plan, static_cast<T*>(out.data_ptr()), static_cast<const T*>(v.data_ptr()), flag.ptr);
    });
  } else {
    dispatch_device_types(out.dtype(), "index_put_cuda", [](auto) {});
    dispatch_by_size(out.dtype(), [&](auto tag) {
      using T = decltype(tag);
      advanced_put_kernel<T, false><<<static_cast<unsigned>(s.blocks), s.threads, 0, stream>>>(
          plan, static_cast<T*>(out.data_ptr()), static_cast<const T*>(v.data_ptr()), flag.ptr);
    });
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  if (flag.raised()) raise_put_as_cpu(self, indices, values, accumulate, "index out of range in self");
  return out;
}

// self[mask] after broadcasting the two: a 1-d result in row-major order.
Tensor& masked_select_out_cuda(const Tensor& self, const Tensor& mask, Tensor& out) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_select: expected BoolTensor for mask");
  EMBER_CHECK(!out.defined() || out.dtype() == self.dtype(),
              "masked_select(): self and result must have the same scalar type");
  DimVector shape = infer_broadcast_size(self.sizes(), mask.sizes());
  Tensor s = self.expand(shape), m = mask.expand(shape);
  if (shape.empty()) {  // 0-dim: a mask of one element
    s = s.reshape({1});
    m = m.reshape({1});
  }
  Tensor r = index_cuda(s, {std::optional<Tensor>(m)});
  if (!out.defined()) return out = r;
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

const bool registered = [] {
  dispatch::index_Tensor_kernels[static_cast<int>(DeviceType::CUDA)] = &index_cuda;
  dispatch::index_put_kernels[static_cast<int>(DeviceType::CUDA)] = &index_put_out_cuda;
  dispatch::masked_select_kernels[static_cast<int>(DeviceType::CUDA)] = &masked_select_out_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
