// The host side of CUDA orders that follow PyTorch's CUDA kernels: the
// bitonic network of unstable sorts of short lines (cuda/kernels/SmallSort.h)
// and the threads per row of the scans (cuda/kernels/ScanPlan.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "ember/cuda/kernels/ScanPlan.h"
#include "ember/cuda/kernels/SmallSort.h"

namespace {

using ember::cuda::sklansky_log_threads;
using ember::cuda::small_sort::bitonic_sort;
using ember::cuda::small_sort::kSlots;

template <typename K>
std::vector<int64_t> sorted_positions(const std::vector<K>& line, bool descending) {
  std::array<K, kSlots> keys{};
  std::array<int64_t, kSlots> pos{};
  std::copy(line.begin(), line.end(), keys.begin());
  bitonic_sort(keys.data(), pos.data(), static_cast<int>(line.size()), descending);
  return {pos.begin(), pos.begin() + static_cast<int64_t>(line.size())};
}

// The indices torch 2.11's CUDA sort returned for the operator database's bool sample.
TEST(CudaSmallSort, BoolTiesInTorchsOrder) {
  EXPECT_EQ(sorted_positions<bool>({true, true, true, true, false}, false), (std::vector<int64_t>{4, 2, 3, 0, 1}));
  EXPECT_EQ(sorted_positions<bool>({true, true, true, true, true}, false), (std::vector<int64_t>{1, 0, 2, 4, 3}));
}

// Any line of up to 32 keys comes out ordered (NaN last ascending, first
// descending), each position once.
TEST(CudaSmallSort, OrdersEveryLine) {
  std::mt19937 gen(7);
  for (int n = 1; n <= kSlots; ++n) {
    for (bool descending : {false, true}) {
      std::vector<float> line(static_cast<size_t>(n));
      for (auto& v : line) v = static_cast<float>(static_cast<int>(gen() % 5)) - 2.0f;
      if (n > 3) line[2] = std::numeric_limits<float>::quiet_NaN();
      if (n > 5) line[4] = -0.0f;
      const std::vector<int64_t> pos = sorted_positions(line, descending);
      std::vector<int64_t> seen(pos);
      std::sort(seen.begin(), seen.end());
      std::vector<int64_t> all(static_cast<size_t>(n));
      std::iota(all.begin(), all.end(), 0);
      ASSERT_EQ(seen, all) << "n=" << n;
      for (int j = 1; j < n; ++j) {
        const float a = line[static_cast<size_t>(pos[static_cast<size_t>(j - 1)])];
        const float b = line[static_cast<size_t>(pos[static_cast<size_t>(j)])];
        if (descending) {
          ASSERT_TRUE(std::isnan(a) || (!std::isnan(b) && a >= b)) << "n=" << n << " j=" << j;
        } else {
          ASSERT_TRUE(std::isnan(b) || (!std::isnan(a) && a <= b)) << "n=" << n << " j=" << j;
        }
      }
    }
  }
}

// Unstable: equal keys do not keep their input order in general.
TEST(CudaSmallSort, TiesAreNotKeptInInputOrder) {
  const std::vector<int> line(8, 1);
  const std::vector<int64_t> pos = sorted_positions(line, false);
  std::vector<int64_t> identity(8);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(pos, identity);
}

TEST(CudaScanPlan, ThreadsPerRow) {
  EXPECT_EQ(sklansky_log_threads(6, 4), 4u);  // few short rows: the minimum, 16 threads
  EXPECT_EQ(sklansky_log_threads(1, 1 << 20), 9u);  // one long row: the maximum, 512
  EXPECT_EQ(sklansky_log_threads(3, 700), 8u);  // (9 + 10 - 2) / 2
  EXPECT_EQ(sklansky_log_threads(64, 64), 4u);  // (9 + 0) / 2
  EXPECT_EQ(sklansky_log_threads(4, 1024), 8u);  // (9 + 10 - 2) / 2
  EXPECT_EQ(sklansky_log_threads(1 << 9, 2), 4u);  // 9 + 1 - 9 = 1: 16 threads
  // A row count 2^10 times the row size or more wraps around in unsigned arithmetic.
  EXPECT_EQ(sklansky_log_threads(1 << 11, 2), 9u);
  EXPECT_EQ(sklansky_log_threads(5000, 3), 9u);
}

}  // namespace
