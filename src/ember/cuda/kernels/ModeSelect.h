#pragma once
// Which value and index torch.mode returns on CUDA for a line of up to 2048
// elements, where equal counts tie (Note [CUDA mode ties]). Shared by the
// CUDA kernel (one block per line, cuda/kernels/Mode.cu) and the host tests,
// which run the same steps one thread after another.
#include <cstdint>

#if defined(__CUDACC__)
#define EMBER_MODE_HD __host__ __device__
#else
#define EMBER_MODE_HD
#endif

namespace ember::cuda::mode_select {

// Note [CUDA mode ties]
// PyTorch's CUDA mode of a line of n <= 2048 elements runs one block of
// slots / 2 threads per line over `slots` shared-memory slots (128 for
// n <= 128, 1024 for n <= 1024, else 2048): a bitonic network sorts the
// line ascending with a plain `a < b` (slots past n order last; NaNs stay
// where the comparisons leave them), c[i] counts the sorted elements equal
// (==) to slot i directly before it, and a block reduction of
// (c[i], i), thread t holding slots 2t and 2t+1, keeps the larger count
// and, on equal counts, the value it already holds. The reduction runs
// within each warp by shuffles down (lane l takes lane l + 16, 8, 4, 2, 1),
// then over the warps' results the same way, so among equal counts the slot
// that wins has the smallest (bit-reversed warp, bit-reversed lane, slot
// parity): `priority` below. The mode is the sorted value at that slot; its
// index is the largest position of the line holding an equal (==) value, 0
// when none does (a NaN mode). Observed: [1, 2, 3, 3, 2] -> (3, 3), where
// the CPU gives (2, 4).
constexpr int64_t kMaxLine = 2048;

EMBER_MODE_HD inline int slots_for(int64_t n) { return n <= 128 ? 128 : n <= 1024 ? 1024 : 2048; }

EMBER_MODE_HD inline unsigned bit_reverse5(unsigned v) {
  unsigned r = 0;
  for (int b = 0; b < 5; ++b) r |= ((v >> b) & 1u) << (4 - b);
  return r;
}

// Smaller wins among slots of equal count.
EMBER_MODE_HD inline unsigned priority(unsigned slot) {
  const unsigned thread = slot >> 1, lane = thread & 31u, warp = thread >> 5;
  return (bit_reverse5(warp) << 6) | (bit_reverse5(lane) << 1) | (slot & 1u);
}

// The key a block maximum picks the winning slot by: count, then priority,
// then the slot itself (to read it back).
EMBER_MODE_HD inline uint64_t slot_key(uint32_t count, unsigned slot) {
  return (static_cast<uint64_t>(count) << 32) | (static_cast<uint64_t>(0xFFFFu - priority(slot)) << 16) | slot;
}
EMBER_MODE_HD inline unsigned slot_of_key(uint64_t key) { return static_cast<unsigned>(key & 0xFFFFu); }

// One compare-exchange of the network: slots p < p + stride swap when `dir`
// equals "p's key is less (p valid) or p + stride is invalid". Less compares
// with the element type's `<` (16-bit floats as float: the caller's keys).
template <typename K>
EMBER_MODE_HD inline void compare_swap(K* keys, bool* valid, unsigned p, unsigned stride, bool dir) {
  const unsigned q = p + stride;
  const bool swap = (keys[p] < keys[q] && valid[p]) || !valid[q];
  if (swap == dir) {
    const K k = keys[p];
    keys[p] = keys[q];
    keys[q] = k;
    const bool v = valid[p];
    valid[p] = valid[q];
    valid[q] = v;
  }
}

// The slot thread `tid` compares at `stride`, and the stage's direction.
EMBER_MODE_HD inline unsigned stage_slot(unsigned tid, unsigned stride) { return 2 * tid - (tid & (stride - 1)); }

#if !defined(__CUDA_ARCH__)
// The whole selection on the host, thread by thread (tests): the mode of
// line[0, n) and its index.
template <typename K>
inline void select_host(const K* line, int64_t n, K* mode, int64_t* index) {
  const int slots = slots_for(n);
  K keys[kMaxLine];
  bool valid[kMaxLine];
  for (int i = 0; i < slots; ++i) {
    keys[i] = i < n ? line[i] : K(0);
    valid[i] = i < n;
  }
  const unsigned threads = static_cast<unsigned>(slots) / 2;
  for (unsigned size = 2; size < static_cast<unsigned>(slots); size *= 2) {
    for (unsigned stride = size / 2; stride > 0; stride /= 2) {
      for (unsigned t = 0; t < threads; ++t)
        compare_swap(keys, valid, stage_slot(t, stride), stride, (t & (size / 2)) != 0);
    }
  }
  for (unsigned stride = threads; stride > 0; stride /= 2) {
    for (unsigned t = 0; t < threads; ++t) compare_swap(keys, valid, stage_slot(t, stride), stride, false);
  }
  uint64_t best = 0;
  uint32_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    count = (i > 0 && keys[i - 1] == keys[i]) ? count + 1 : 0;
    const uint64_t k = slot_key(count, static_cast<unsigned>(i));
    if (k > best) best = k;
  }
  *mode = keys[slot_of_key(best)];
  *index = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (line[i] == *mode) *index = i;
  }
}
#endif

}  // namespace ember::cuda::mode_select
