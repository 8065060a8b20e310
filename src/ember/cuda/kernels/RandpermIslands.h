#pragma once
// randperm on CUDA, as PyTorch's: the positions 0..n-1 sorted (stably) by
// random keys of `randperm_key_bits(n)` bits, then every run of equal keys
// ("island") shuffled by its first position's thread with Fisher-Yates on
// curand words (subsequence = that position). Host and device; tested in
// tests/cpp/cuda_randperm_test.cpp.
#include <cmath>
#include <cstdint>

#include "ember/cuda/Philox.h"

namespace ember::cuda {

// Key bits keeping the chance of any two equal keys under 10%: at most 32
// bits are drawn as int32 keys, more as int64 keys.
inline int randperm_key_bits(int64_t n) {
  const double log_threshold_12 = std::log(0.9) * 12;
  const double nd = static_cast<double>(n);
  const int bits = static_cast<int>(std::ceil(std::log2(nd - (6 * nd * nd + 1) / log_threshold_12)));
  return bits < 64 ? bits : 64;
}

// Shuffles the island that starts at position i of the sorted keys (when
// one does: keys[i] == keys[i + 1] and i is its first position).
template <typename K, typename V>
EMBER_PHILOX_FN void shuffle_island_at(const K* keys, V* values, int64_t n, int64_t i, uint64_t seed, uint64_t offset) {
  if (i >= n - 1 || keys[i] != keys[i + 1]) return;
  if (i != 0 && keys[i] == keys[i - 1]) return;
  int64_t size = 0;
  do {
    ++size;
  } while (i + size < n && keys[i + size] == keys[i]);
  V* island = values + i;
  philox::State state = philox::init(seed, static_cast<uint64_t>(i), offset);
  for (int64_t j = size - 1; j > 0; --j) {
    const uint32_t r = state.next() % static_cast<uint32_t>(j + 1);
    if (static_cast<int64_t>(r) != j) {
      const V t = island[j];
      island[j] = island[r];
      island[r] = t;
    }
  }
}

}  // namespace ember::cuda
