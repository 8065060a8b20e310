// embedding_bag's max mode on CUDA: per bag and feature the largest value of
// the bag's rows (compared in float for 16-bit dtypes; the first maximum in
// index order wins a tie) and the row that gave it; an empty bag gives 0 and
// index -1. The positions are grouped by bag with a stable sort, so each
// (bag, feature) thread scans its bag's rows in their original order. The
// backward adds each gradient element to its row atomically, as PyTorch's.
#include <tuple>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/cuda/nn/NnCommon.cuh"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::nn {
namespace {

// starts[b], ends[b]: the range of bag b in the sorted bag numbers.
__global__ void bag_ranges_kernel(const int64_t* sorted_bags, int64_t n, int64_t* starts, int64_t* ends) {
  EMBER_NN_GRID_LOOP(k, n) {
    const int64_t b = sorted_bags[k];
    if (k == 0 || sorted_bags[k - 1] != b) starts[b] = k;
    if (k == n - 1 || sorted_bags[k + 1] != b) ends[b] = k + 1;
  }
}

template <typename T>
__global__ void bag_max_kernel(const T* weight, const int64_t* rows, const int64_t* order, const int64_t* starts,
                               const int64_t* ends, T* out, int64_t* arg, int64_t bags, int64_t dim) {
  EMBER_NN_GRID_LOOP(i, bags * dim) {
    const int64_t b = i / dim, d = i % dim;
    T best = narrow<T>(0.0f);
    int64_t best_row = -1;
    for (int64_t k = starts[b]; k < ends[b]; ++k) {
      const int64_t r = rows[order[k]];
      const T v = weight[r * dim + d];
      if (best_row < 0 || widen(v) > widen(best)) {
        best = v;
        best_row = r;
      }
    }
    out[i] = best;
    arg[i] = best_row;
  }
}

template <typename T>
__global__ void bag_max_backward_kernel(const T* grad, const int64_t* arg, T* grad_weight, int64_t total, int64_t dim) {
  EMBER_NN_GRID_LOOP(i, total) {
    const int64_t r = arg[i];
    if (r >= 0) atomic_add(grad_weight + r * dim + i % dim, grad[i]);
  }
}

std::tuple<Tensor, Tensor> embedding_bag_max_cuda(const Tensor& weight, const Tensor& indices, const Tensor& bag,
                                                  int64_t bags) {
  EMBER_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ", weight.dim());
  EMBER_CHECK(indices.numel() == bag.numel(), "embedding_bag: indices and bag numbers differ in length");
  const Device device = weight.device();
  const int64_t dim = weight.size(1), rows = weight.size(0);
  Tensor out = ember::empty({bags, dim}, weight.dtype(), device);
  Tensor arg = ember::empty({bags, dim}, ScalarType::Long, device);
  const Tensor idx = indices.to(ScalarType::Long).reshape({-1}).contiguous();
  const Tensor bg = bag.to(ScalarType::Long).reshape({-1}).contiguous();
  const int64_t n = idx.numel();
  if (n > 0) {
    const int64_t lo = ember::min(idx).item<int64_t>(), hi = ember::max(idx).item<int64_t>();
    EMBER_CHECK(lo >= 0 && hi < rows, "embedding_bag: index ", lo < 0 ? lo : hi, " out of range for ", rows, " rows");
    const int64_t blo = ember::min(bg).item<int64_t>(), bhi = ember::max(bg).item<int64_t>();
    EMBER_CHECK(blo >= 0 && bhi < bags, "embedding_bag: bag ", blo < 0 ? blo : bhi, " out of range for ", bags,
                " bags");
  }
  Tensor starts = ember::zeros({std::max<int64_t>(bags, 1)}, ScalarType::Long, device);
  Tensor ends = ember::zeros({std::max<int64_t>(bags, 1)}, ScalarType::Long, device);
  cudaStream_t stream = current_stream(device.index);
  Tensor order;
  if (n > 0) {
    order = ember::argsort(bg, /*stable=*/true).contiguous();
    const Tensor sorted = ember::index_select(bg, 0, order).contiguous();
    bag_ranges_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const int64_t*>(sorted.data_ptr()), n,
                                                              static_cast<int64_t*>(starts.data_ptr()),
                                                              static_cast<int64_t*>(ends.data_ptr()));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
  const int64_t total = bags * dim;
  dispatch_floating(weight.dtype(), "embedding_bag_cuda", [&](auto tag) {
    using T = decltype(tag);
    if (total == 0) return;
    const Tensor w = weight.contiguous();
    bag_max_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const T*>(w.data_ptr()), static_cast<const int64_t*>(idx.data_ptr()),
        n > 0 ? static_cast<const int64_t*>(order.data_ptr()) : nullptr, static_cast<const int64_t*>(starts.data_ptr()),
        static_cast<const int64_t*>(ends.data_ptr()), static_cast<T*>(out.data_ptr()),
        static_cast<int64_t*>(arg.data_ptr()), bags, dim);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return {out, arg};
}

Tensor embedding_bag_max_backward_cuda(const Tensor& grad, const Tensor& max_indices, const Tensor& weight) {
  Tensor grad_weight = ember::zeros(weight.sizes(), weight.dtype(), weight.device());
  const int64_t dim = weight.size(1), total = max_indices.numel();
  dispatch_floating(weight.dtype(), "embedding_bag_backward_cuda_max", [&](auto tag) {
    using T = decltype(tag);
    if (total == 0 || dim == 0) return;
    const Tensor g = grad.to(weight.dtype()).contiguous(), at = max_indices.contiguous();
    bag_max_backward_kernel<T><<<blocks_for(total), kThreads, 0, current_stream(weight.device().index)>>>(
        static_cast<const T*>(g.data_ptr()), static_cast<const int64_t*>(at.data_ptr()),
        static_cast<T*>(grad_weight.data_ptr()), total, dim);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return grad_weight;
}

const bool registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::_embedding_bag_max_kernels[cuda] = &embedding_bag_max_cuda;
  dispatch::_embedding_bag_max_backward_kernels[cuda] = &embedding_bag_max_backward_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::nn
