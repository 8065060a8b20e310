// sort, topk and kthvalue on CUDA through one stable segmented sort (cub):
// the sorted dim is moved last and made contiguous, each line is a segment,
// the payload is the position in the line, the keys are unsigned integers of
// the element's size ordered as the elements (NaN above +inf, as PyTorch
// orders it; descending inverts them), so the sort is instantiated once per
// key size. The values are gathered from the input by the sorted positions.
// topk takes the first k of a descending (largest) or ascending sort;
// kthvalue the k-th of an ascending one. Checks and result layouts come from
// the CPU functions run on meta copies. Unstable sorts of lines of up to 32
// elements run PyTorch's bitonic network instead (SmallSort.h), for its
// order of ties.
#include <cub/device/device_segmented_sort.cuh>

#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/cuda/kernels/SmallSort.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kComparisonSortMax = 4096;

// The unsigned integer of T's size whose order is T's order (NaN above +inf).
template <typename T>
using KeyBits = std::conditional_t<
    sizeof(T) == 1, uint8_t,
    std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

template <typename T>
__device__ KeyBits<T> order_key(T v, bool merge_zeros, bool descending) {
  using K = KeyBits<T>;
  constexpr K kSign = K(1) << (8 * sizeof(T) - 1);
  K bits;
  if constexpr (std::is_same_v<T, bool>) {
    bits = v ? 1 : 0;
  } else if constexpr (std::is_integral_v<T>) {
    memcpy(&bits, &v, sizeof(T));
    if constexpr (std::is_signed_v<T>) bits ^= kSign;
  } else {
    if (widen(v) != widen(v)) v = narrow<T>(dm::nan<float>());  // one positive NaN
    if (merge_zeros && widen(v) == 0) v = narrow<T>(0.0f);  // -0 as +0
    memcpy(&bits, &v, sizeof(T));
    bits = (bits & kSign) ? K(~bits) : K(bits | kSign);
  }
  return descending ? K(~bits) : bits;
}

// keys = the order keys of the lines, positions = the index in the line,
// offsets[j] = j * n for j in [0, lines].
template <typename T>
__global__ void prepare_lines_kernel(const T* in, KeyBits<T>* keys, int64_t* positions, int64_t* offsets, int64_t total,
                                     int64_t n, int64_t lines, bool merge_zeros, bool descending) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t end = total > lines ? total : lines + 1;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < end; i += step) {
    if (i < total) {
      keys[i] = order_key(in[i], merge_zeros, descending);
      positions[i] = i % n;
    }
    if (i <= lines) offsets[i] = i * n;
  }
}

// The key a line's element compares by in the small sort: 16-bit floats as
// float (the same order, NaN included), other types as themselves.
template <typename T>
__device__ auto small_sort_key(T v) {
  if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T> || std::is_same_v<T, float> ||
                std::is_same_v<T, double>) {
    return v;
  } else {
    return widen(v);
  }
}

// PyTorch's unstable sort of lines of up to 32 elements (small_sort::bitonic_sort),
// one thread per line: positions[line, j] = the input position of the j-th result.
template <typename T>
__global__ void small_sort_lines_kernel(const T* in, int64_t* positions, int64_t count, int n, bool descending) {
  using K = decltype(small_sort_key(T()));
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < count; line += step) {
    K keys[small_sort::kSlots];
    int64_t pos[small_sort::kSlots];
    for (int j = 0; j < n; ++j) keys[j] = small_sort_key(in[line * n + j]);
    small_sort::bitonic_sort(keys, pos, n, descending);
    for (int j = 0; j < n; ++j) positions[line * n + j] = pos[j];
  }
}

// A stable sort of every segment of keys (ascending) with the positions as payload.
template <typename K>
void sort_keys(const K* k_in, K* k_out, const int64_t* p_in, int64_t* p_out, int64_t total, int64_t count,
               const int64_t* begin, const Device& device, cudaStream_t stream) {
  size_t bytes = 0;
  EMBER_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, k_in, k_out, p_in, p_out, total, count,
                                                             begin, begin + 1, stream));
  Tensor temp = ember::empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, ScalarType::Byte, device);
  EMBER_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(temp.data_ptr(), bytes, k_in, k_out, p_in, p_out, total,
                                                             count, begin, begin + 1, stream));
}

ScalarType unsigned_of_size(int64_t size) {
  // Storage for the keys only (their values are never read as these dtypes).
  switch (size) {
    case 1: return ScalarType::Byte;
    case 2: return ScalarType::Short;
    case 4: return ScalarType::Int;
    default: return ScalarType::Long;
  }
}

unsigned blocks_for(int64_t total) {
  return static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65535));
}

// Sorts every line of `lines` ([count, n], contiguous, on CUDA): (values, positions).
// PyTorch sorts lines of up to 4096 elements by comparison (-0 equals +0, ties
// keep their order when stable) and longer ones by radix (-0 before +0); the
// values are gathered from the input, so they keep their signs and NaN bits.
// Bool sorts (as PyTorch's CUDA sort) unless `with_bool` is false (topk, kthvalue).
// An unstable sort of lines of 2 to 32 elements takes PyTorch's bitonic
// network, whose order of ties is its own.
std::pair<Tensor, Tensor> sort_lines(const Tensor& lines, bool descending, const char* name, bool with_bool,
                                     bool stable = true) {
  if (!with_bool && lines.dtype() == ScalarType::Bool) native::math::not_implemented_for(name, ScalarType::Bool);
  const int64_t count = lines.sizes()[0], n = lines.sizes()[1], total = count * n;
  if (!stable && n > 1 && n <= small_sort::kSlots) {
    Tensor positions = ember::empty({count, n}, ScalarType::Long, lines.device());
    cudaStream_t stream = current_stream(lines.device().index);
    dispatch_device_types<kAllReal>(lines.dtype(), name, [&](auto tag) {
      using T = decltype(tag);
      small_sort_lines_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
          static_cast<const T*>(lines.data_ptr()), static_cast<int64_t*>(positions.data_ptr()), count,
          static_cast<int>(n), descending);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    });
    return {ember::gather(lines, 1, positions), positions};
  }
  Tensor keys = ember::empty({2, total}, unsigned_of_size(lines.element_size()), lines.device());
  Tensor pos = ember::empty({2, total}, ScalarType::Long, lines.device());
  Tensor offsets = ember::empty({count + 1}, ScalarType::Long, lines.device());
  cudaStream_t stream = current_stream(lines.device().index);
  dispatch_device_types<kAllReal>(lines.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using K = KeyBits<T>;
    K* k_in = static_cast<K*>(keys.data_ptr());
    int64_t* p_in = static_cast<int64_t*>(pos.data_ptr());
    int64_t* begin = static_cast<int64_t*>(offsets.data_ptr());
    prepare_lines_kernel<T><<<blocks_for(std::max(total, count + 1)), kThreads, 0, stream>>>(
        static_cast<const T*>(lines.data_ptr()), k_in, p_in, begin, total, n, count, n <= kComparisonSortMax,
        descending);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    sort_keys(k_in, k_in + total, p_in, p_in + total, total, count, begin, lines.device(), stream);
  });
  const Tensor sorted_positions = pos.select(0, 1).view({count, n});
  return {ember::gather(lines, 1, sorted_positions), sorted_positions};
}

// self's dim d as the lines of a [count, n] contiguous tensor.
Tensor as_lines(const Tensor& self, int64_t d) {
  if (self.dim() == 0) return self.reshape({1, 1});
  Tensor moved = self.movedim(d, -1).contiguous();
  const int64_t n = self.sizes()[d];
  return moved.reshape({n == 0 ? 0 : moved.numel() / n, n});
}

// Lines [count, m] back into `out` (whose dim d has m elements).
void store_lines(const Tensor& lines, Tensor& out, int64_t d) {
  if (out.dim() == 0) {
    out.copy_(lines.reshape({}));
    return;
  }
  DimVector moved;
  for (int64_t k = 0; k < out.dim(); ++k) {
    if (k != d) moved.push_back(out.sizes()[k]);
  }
  moved.push_back(out.sizes()[d]);
  out.copy_(lines.reshape(moved).movedim(-1, d));
}

Tensor empty_like_meta(const Tensor& meta, const Device& device) {
  return ember::empty_strided(meta.sizes(), meta.strides(), meta.dtype(), device);
}

std::tuple<Tensor, Tensor> sort_stable_cuda(const Tensor& self, std::optional<bool> stable, int64_t dim,
                                            bool descending) {
  auto [mv, mi] = dispatch::sort_stable_kernels[kCpuKernel](meta_copy(self), stable, dim, descending);
  Tensor values = empty_like_meta(mv, self.device()), indices = empty_like_meta(mi, self.device());
  if (self.numel() == 0) return {values, indices};
  const int64_t d = self.dim() == 0 ? 0 : maybe_wrap_dim(dim, self.dim());
  auto [v, i] = sort_lines(as_lines(self, d), descending, "sort", true, stable.value_or(false));
  store_lines(v, values, d);
  store_lines(i, indices, d);
  return {values, indices};
}

std::tuple<Tensor, Tensor> sort_cuda(const Tensor& self, int64_t dim, bool descending) {
  return sort_stable_cuda(self, false, dim, descending);
}

std::tuple<Tensor, Tensor> topk_cuda(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  auto [mv, mi] = dispatch::topk_kernels[kCpuKernel](meta_copy(self), k, dim, largest, sorted);
  Tensor values = empty_like_meta(mv, self.device()), indices = empty_like_meta(mi, self.device());
  if (values.numel() == 0) return {values, indices};
  const int64_t d = self.dim() == 0 ? 0 : maybe_wrap_dim(dim, self.dim());
  auto [v, i] = sort_lines(as_lines(self, d), largest, "topk_out_cuda", false);
  store_lines(v.narrow(1, 0, k), values, d);
  store_lines(i.narrow(1, 0, k), indices, d);
  return {values, indices};
}

std::tuple<Tensor, Tensor> kthvalue_cuda(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  auto [mv, mi] = dispatch::kthvalue_kernels[kCpuKernel](meta_copy(self), k, dim, keepdim);
  Tensor values = empty_like_meta(mv, self.device()), indices = empty_like_meta(mi, self.device());
  if (values.numel() == 0) return {values, indices};
  const int64_t d = self.dim() == 0 ? 0 : maybe_wrap_dim(dim, self.dim());
  auto [v, i] = sort_lines(as_lines(self, d), false, "kthvalue_cuda", false);
  // One element per line, in the result's (keepdim or reduced) shape.
  values.copy_(v.select(1, k - 1).reshape(values.sizes()));
  indices.copy_(i.select(1, k - 1).reshape(indices.sizes()));
  return {values, indices};
}

[[maybe_unused]] const bool g_registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::sort_stable_kernels[cuda] = &sort_stable_cuda;
  dispatch::sort_kernels[cuda] = &sort_cuda;
  dispatch::topk_kernels[cuda] = &topk_cuda;
  dispatch::kthvalue_kernels[cuda] = &kthvalue_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
