#pragma once
// The unstable sort PyTorch's CUDA sort uses for lines of up to 32 elements:
// a bitonic network over 32 slots (the line, then invalid slots that order
// last), stage by stage as its 16 threads run it. Ties (equal keys, -0 and
// +0, two NaNs) come out in the network's order, not the input's, so the
// indices match PyTorch's only when the same network runs. Shared by the
// CUDA kernel (one thread per line) and the host tests.
#include <cstdint>

#if defined(__CUDACC__)
#define EMBER_SMALL_SORT_HD __host__ __device__
#else
#define EMBER_SMALL_SORT_HD
#endif

namespace ember::cuda::small_sort {

constexpr int kSlots = 32;

template <typename K>
EMBER_SMALL_SORT_HD inline bool is_nan_key(K v) {
  return v != v;  // NOLINT(misc-redundant-expression): true only for NaN
}

// a before b: ascending (NaN after numbers) or descending (NaN first).
template <typename K>
EMBER_SMALL_SORT_HD inline bool comes_before(K a, K b, bool descending) {
  if (descending) return (is_nan_key(a) && !is_nan_key(b)) || a > b;
  return (is_nan_key(b) && !is_nan_key(a)) || a < b;
}

// Slots p < q swap when `dir` equals "p's key comes first (p valid) or q is
// invalid": false orders the pair, true reverses it.
template <typename K>
EMBER_SMALL_SORT_HD inline void compare_swap(K* keys, int64_t* pos, bool* valid, int p, int q, bool dir,
                                             bool descending) {
  const bool swap = (comes_before(keys[p], keys[q], descending) && valid[p]) || !valid[q];
  if (swap == dir) {
    const K k = keys[p];
    keys[p] = keys[q];
    keys[q] = k;
    const int64_t i = pos[p];
    pos[p] = pos[q];
    pos[q] = i;
    const bool v = valid[p];
    valid[p] = valid[q];
    valid[q] = v;
  }
}

// Sorts keys[0, n) (n <= kSlots); pos[j] receives the input position of the
// j-th result. keys and pos must hold kSlots entries.
template <typename K>
EMBER_SMALL_SORT_HD inline void bitonic_sort(K* keys, int64_t* pos, int n, bool descending) {
  bool valid[kSlots];
  for (int j = 0; j < kSlots; ++j) {
    valid[j] = j < n;
    pos[j] = j < n ? j : 0;
    if (j >= n) keys[j] = K();
  }
  constexpr int kThreads = kSlots / 2;
  for (int size = 2; size < kSlots; size *= 2) {
    for (int stride = size / 2; stride > 0; stride /= 2) {
      for (int t = 0; t < kThreads; ++t) {
        const bool flag = (t & (size / 2)) != 0;
        const int p = 2 * t - (t & (stride - 1));
        compare_swap(keys, pos, valid, p, p + stride, flag, descending);
      }
    }
  }
  for (int stride = kSlots / 2; stride > 0; stride /= 2) {
    for (int t = 0; t < kThreads; ++t) {
      const int p = 2 * t - (t & (stride - 1));
      compare_swap(keys, pos, valid, p, p + stride, false, descending);
    }
  }
}

}  // namespace ember::cuda::small_sort
