// CUDA kernel of advanced indexing, self[indices] (index.Tensor): boolean
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
};

template <typename T>
__global__ void advanced_index_kernel(AdvancedIndexPlan p, const T* self, T* out, unsigned long long* bad) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t linear = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; linear < p.numel; linear += step) {
    int64_t rest = linear, self_off = 0;
    int64_t index_off[kMaxIndexTensors] = {};
    for (int i = 0; i < p.dims; ++i) {
      const int64_t c = rest % p.sizes[i];
      rest /= p.sizes[i];
      self_off += c * p.self_strides[i];
      for (int j = 0; j < p.num_indices; ++j) index_off[j] += c * p.index_strides[j][i];
    }
    bool ok = true;
    for (int j = 0; j < p.num_indices; ++j) {
      int64_t v = p.index_data[j][index_off[j]];
      if (v < 0) v += p.indexed_size[j];
      if (v < 0 || v >= p.indexed_size[j]) {
        ok = false;
        break;
      }
      self_off += v * p.indexed_stride[j];
    }
    if (!ok) {
      atomicMin(bad, static_cast<unsigned long long>(linear));
      continue;
    }
    out[linear] = self[self_off];
  }
}

Tensor on_cpu(const Tensor& t) { return t.defined() ? t.to(Device(DeviceType::CPU)) : Tensor(); }

[[noreturn]] void raise_as_cpu(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                               const char* fallback) {
  std::vector<std::optional<Tensor>> host;
  for (const auto& i : indices) host.push_back(i.has_value() && i->defined() ? std::optional<Tensor>(on_cpu(*i)) : i);
  native::index(on_cpu(self), host);
  throw IndexError(fallback);
}

Tensor index_cuda(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
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
    raise_as_cpu(self, indices, "index: unsupported indices on CUDA");
  }
  if (index_tensors.empty()) {
    Tensor result = ember::empty(self.sizes(), self.dtype(), self.device());
    result.copy_(self);
    return result;
  }
  DimVector broadcast(index_tensors[0].sizes());
  try {
    for (size_t j = 1; j < index_tensors.size(); ++j) {
      broadcast = infer_broadcast_size(broadcast, index_tensors[j].sizes());
    }
  } catch (const std::exception&) {
    raise_as_cpu(self, indices, "shape mismatch: indexing tensors could not be broadcast together");
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
  Tensor result = ember::empty(result_shape, self.dtype(), self.device());
  if (result.numel() == 0) return result;
  const int nd = static_cast<int>(result_shape.size());
  EMBER_CHECK(nd <= kMaxIndexDims, "index on CUDA supports results of at most ", kMaxIndexDims, " dimensions");
  AdvancedIndexPlan plan;
  plan.dims = nd;
  plan.num_indices = static_cast<int>(index_tensors.size());
  plan.numel = result.numel();
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

const bool registered = [] {
  dispatch::index_Tensor_kernels[static_cast<int>(DeviceType::CUDA)] = &index_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
