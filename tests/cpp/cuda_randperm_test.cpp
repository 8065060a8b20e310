// Host logic of randperm on CUDA (cuda/kernels/RandpermIslands.h): the key
// width and the shuffle of runs of equal keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "ember/cuda/kernels/RandpermIslands.h"

namespace ember::cuda {
namespace {

TEST(CudaRandperm, KeyBits) {
  EXPECT_EQ(randperm_key_bits(1), 3);
  EXPECT_EQ(randperm_key_bits(2), 5);
  EXPECT_EQ(randperm_key_bits(10), 9);
  EXPECT_EQ(randperm_key_bits(1000), 23);
  EXPECT_EQ(randperm_key_bits(30000), 32);  // the last int32 keys
  EXPECT_EQ(randperm_key_bits(40000), 33);
  EXPECT_EQ(randperm_key_bits(int64_t(1) << 40), 64);
  int previous = 0;
  for (int64_t n = 1; n < (int64_t(1) << 40); n = n * 3 + 1) {
    const int bits = randperm_key_bits(n);
    EXPECT_GE(bits, previous);
    // n keys of `bits` bits are all distinct with probability about
    // exp(-n^2 / 2^(bits + 1)): at least 90% below the 64-bit cap.
    const double nd = static_cast<double>(n);
    if (bits < 64) EXPECT_GE(std::exp(-nd * nd / std::ldexp(1.0, bits + 1)), 0.9 - 1e-3) << n;
    previous = bits;
  }
}

// Runs every position's thread of the islands kernel, in order.
std::vector<int64_t> shuffled(const std::vector<int64_t>& keys, uint64_t seed, uint64_t offset) {
  std::vector<int64_t> values(keys.size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i);
  const int64_t n = static_cast<int64_t>(keys.size());
  for (int64_t i = 0; i < n; ++i) shuffle_island_at(keys.data(), values.data(), n, i, seed, offset);
  return values;
}

TEST(CudaRandperm, IslandsArePermutedInPlaceAndNothingElseMoves) {
  const std::vector<int64_t> keys = {1, 2, 2, 2, 2, 2, 2, 5, 7, 7, 9, 9, 9, 9, 9, 9, 9, 9};
  std::set<std::vector<int64_t>> seen;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<int64_t> v = shuffled(keys, seed, 4 * seed);
    EXPECT_EQ(v[0], 0);
    EXPECT_EQ(v[7], 7);
    for (auto [lo, hi] : {std::pair<int, int>{1, 7}, {8, 10}, {10, 18}}) {
      std::vector<int64_t> part(v.begin() + lo, v.begin() + hi);
      std::sort(part.begin(), part.end());
      for (int i = lo; i < hi; ++i) EXPECT_EQ(part[i - lo], i);
    }
    seen.insert(v);
  }
  EXPECT_GT(seen.size(), 15u);  // the seed changes the shuffle
}

TEST(CudaRandperm, AnIslandDrawsFromItsFirstPositionsSubsequence) {
  const std::vector<int64_t> keys = {0, 4, 4, 4};
  const uint64_t seed = 1234, offset = 8;
  // Fisher-Yates from the back with curand words of subsequence 1.
  std::vector<int64_t> want = {1, 2, 3};
  philox::State s = philox::init(seed, 1, offset);
  for (int j = 2; j > 0; --j) std::swap(want[j], want[s.next() % static_cast<uint32_t>(j + 1)]);
  const std::vector<int64_t> got = shuffled(keys, seed, offset);
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(std::vector<int64_t>(got.begin() + 1, got.end()), want);
}

}  // namespace
}  // namespace ember::cuda
