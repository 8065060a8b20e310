// torch.mode (aten::_mode) on CUDA: the reduced dim is moved last and made
// contiguous, each line gets its mode and an index of it. Lines of up to
// 2048 elements run PyTorch's selection, ties included (one block per line:
// a bitonic network in shared memory, run lengths, a block maximum; Note
// [CUDA mode ties], ModeSelect.h). Longer lines are sorted (ember::sort)
// and one thread per line takes the first longest run of the sorted line
// (the smallest of the most frequent values) and the first position of the
// line holding it, as PyTorch's sort-and-count path for long lines does.
#include "ember/cuda/kernels/IndexCommon.cuh"
#include "ember/cuda/kernels/ModeSelect.h"

namespace ember::cuda {
namespace {

// An element compared as PyTorch compares it (16-bit floats as float).
template <typename T>
struct ModeKey {
  T v;
  __device__ friend bool operator<(ModeKey a, ModeKey b) { return widen(a.v) < widen(b.v); }
  __device__ friend bool operator==(ModeKey a, ModeKey b) { return widen(a.v) == widen(b.v); }
};

template <typename T, int kSlots>
__global__ void __launch_bounds__(kSlots / 2)
    mode_lines_kernel(const T* lines, T* values, int64_t* indices, int64_t count, int n) {
  using K = ModeKey<T>;
  __shared__ K keys[kSlots];
  __shared__ bool valid[kSlots];
  __shared__ int start[2][kSlots];
  __shared__ unsigned long long best;
  __shared__ unsigned last;
  const unsigned tid = threadIdx.x;
  for (int64_t line = blockIdx.x; line < count; line += gridDim.x) {
    const T* in = lines + line * n;
    for (unsigned i = tid; i < static_cast<unsigned>(kSlots); i += blockDim.x) {
      keys[i] = K{i < static_cast<unsigned>(n) ? in[i] : T{}};
      valid[i] = i < static_cast<unsigned>(n);
    }
    if (tid == 0) {
      best = 0;
      last = 0;
    }
    __syncthreads();
    // The network: bitonic sequences of doubling size, then the final merge.
    for (unsigned size = 2; size < static_cast<unsigned>(kSlots); size *= 2) {
      const bool dir = (tid & (size / 2)) != 0;
      for (unsigned stride = size / 2; stride > 0; stride /= 2) {
        mode_select::compare_swap(keys, valid, mode_select::stage_slot(tid, stride), stride, dir);
        __syncthreads();
      }
    }
    for (unsigned stride = kSlots / 2; stride > 0; stride /= 2) {
      mode_select::compare_swap(keys, valid, mode_select::stage_slot(tid, stride), stride, false);
      __syncthreads();
    }
    // Start of each slot's run of equal values: a running maximum of the run starts.
    for (unsigned i = tid; i < static_cast<unsigned>(kSlots); i += blockDim.x) {
      start[0][i] = (i == 0 || !(keys[i - 1] == keys[i])) ? static_cast<int>(i) : 0;
    }
    __syncthreads();
    int src = 0;
    for (unsigned off = 1; off < static_cast<unsigned>(kSlots); off *= 2) {
      for (unsigned i = tid; i < static_cast<unsigned>(kSlots); i += blockDim.x) {
        const int a = start[src][i], b = i >= off ? start[src][i - off] : 0;
        start[1 - src][i] = a > b ? a : b;
      }
      src = 1 - src;
      __syncthreads();
    }
    unsigned long long key = 0;
    for (unsigned i = tid; i < static_cast<unsigned>(n); i += blockDim.x) {
      const unsigned long long k = mode_select::slot_key(i - static_cast<unsigned>(start[src][i]), i);
      if (k > key) key = k;
    }
    atomicMax(&best, key);
    __syncthreads();
    const K mode = keys[mode_select::slot_of_key(best)];
    for (unsigned i = tid; i < static_cast<unsigned>(n); i += blockDim.x) {
      if (K{in[i]} == mode) atomicMax(&last, i);
    }
    __syncthreads();
    if (tid == 0) {
      values[line] = mode.v;
      indices[line] = last;
    }
    __syncthreads();
  }
}

// Lines longer than a block's slots: `sorted` holds each line sorted ascending.
template <typename T>
__global__ void mode_long_lines_kernel(const T* lines, const T* sorted, T* values, int64_t* indices, int64_t count,
                                       int64_t n) {
  using K = ModeKey<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < count; line += step) {
    const T* s = sorted + line * n;
    int64_t run = 0, longest = 0, at = 0;
    for (int64_t i = 0; i < n; ++i) {
      run = (i > 0 && K{s[i - 1]} == K{s[i]}) ? run + 1 : 1;
      if (run > longest) longest = run, at = i;
    }
    const K mode{s[at]};
    const T* in = lines + line * n;
    int64_t index = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (K{in[i]} == mode) {
        index = i;
        break;
      }
    }
    values[line] = mode.v;
    indices[line] = index;
  }
}

unsigned grid_for(int64_t blocks) { return static_cast<unsigned>(std::min<int64_t>(blocks, 65535)); }

std::tuple<Tensor, Tensor> mode_cuda(const Tensor& self, int64_t dim, bool keepdim) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.dim() > 0 ? self.size(d) : 1;
  EMBER_CHECK(n > 0, "mode(): Expected reduction dim ", d, " to have non-zero size.");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) shape.erase(shape.begin() + d);
  Tensor values = ember::empty(shape, self.dtype(), self.device());
  Tensor indices = ember::empty(shape, ScalarType::Long, self.device());
  const int64_t count = self.numel() / n;
  dispatch_device_types<kAllReal>(self.dtype(), "cuda_mode", [&](auto tag) {
    using T = decltype(tag);
    if (count == 0) return;
    const Tensor lines = self.dim() > 0 ? self.movedim(d, -1).contiguous().reshape({count, n}) : self.reshape({1, 1});
    const T* in = static_cast<const T*>(lines.data_ptr());
    T* out_v = static_cast<T*>(values.data_ptr());
    int64_t* out_i = static_cast<int64_t*>(indices.data_ptr());
    cudaStream_t stream = current_stream(self.device().index);
    const int m = static_cast<int>(std::min<int64_t>(n, mode_select::kMaxLine));
    const int slots = n <= mode_select::kMaxLine ? mode_select::slots_for(n) : 0;
    if (slots == 128) {
      mode_lines_kernel<T, 128><<<grid_for(count), 64, 0, stream>>>(in, out_v, out_i, count, m);
    } else if (slots == 1024) {
      mode_lines_kernel<T, 1024><<<grid_for(count), 512, 0, stream>>>(in, out_v, out_i, count, m);
    } else if (slots == 2048) {
      mode_lines_kernel<T, 2048><<<grid_for(count), 1024, 0, stream>>>(in, out_v, out_i, count, m);
    } else {
      const Tensor sorted = std::get<0>(ember::sort(lines, /*dim=*/1, /*descending=*/false)).contiguous();
      mode_long_lines_kernel<T><<<grid_for((count + 127) / 128), 128, 0, stream>>>(
          in, static_cast<const T*>(sorted.data_ptr()), out_v, out_i, count, n);
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  if (keepdim && self.dim() > 0) values = values.unsqueeze(d), indices = indices.unsqueeze(d);
  return {values, indices};
}

[[maybe_unused]] const bool g_registered = [] {
  dispatch::_mode_kernels[static_cast<int>(DeviceType::CUDA)] = &mode_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
