// The host side of torch.mode on CUDA (cuda/kernels/ModeSelect.h): which of
// equally frequent values PyTorch's CUDA kernel returns, and which index.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "ember/cuda/kernels/ModeSelect.h"

namespace {

namespace ms = ember::cuda::mode_select;

template <typename K>
std::pair<K, int64_t> mode_of(const std::vector<K>& line) {
  K mode{};
  int64_t index = -1;
  ms::select_host(line.data(), static_cast<int64_t>(line.size()), &mode, &index);
  return {mode, index};
}

TEST(CudaMode, TiesAsPyTorchCuda) {
  // torch.mode(torch.tensor([1, 2, 3, 3, 2]).cuda()) is (3, 3); the CPU gives (2, 4).
  EXPECT_EQ(mode_of<int64_t>({1, 2, 3, 3, 2}), std::make_pair(int64_t{3}, int64_t{3}));
  // torch.tensor([0, 2, 1, 1, 1, 3, 3]).cuda().mode() is (1, 4).
  EXPECT_EQ(mode_of<int64_t>({0, 2, 1, 1, 1, 3, 3}), std::make_pair(int64_t{1}, int64_t{4}));
}

TEST(CudaMode, IndexIsTheLastOccurrence) {
  EXPECT_EQ(mode_of<int64_t>({7, 4, 7, 1, 7, 4}), std::make_pair(int64_t{7}, int64_t{4}));
  EXPECT_EQ(mode_of<float>({-0.0f, 1.0f, 0.0f}), std::make_pair(0.0f, int64_t{2}));  // -0 == +0
}

TEST(CudaMode, DistinctValuesGiveTheSmallest) {
  EXPECT_EQ(mode_of<int64_t>({5, 3, 9}), std::make_pair(int64_t{3}, int64_t{1}));
  EXPECT_EQ(mode_of<int64_t>({42}), std::make_pair(int64_t{42}, int64_t{0}));
}

TEST(CudaMode, LinesOf2048Slots) {
  std::vector<int64_t> line;
  for (int i = 0; i < 1500; ++i) line.push_back((i * 37) % 11);  // 11 values, 136 or 137 each
  const auto [mode, index] = mode_of(line);
  int64_t count = 0, most = 0;
  for (int v = 0; v < 11; ++v) {
    int64_t c = 0;
    for (int64_t x : line) c += x == v;
    most = std::max(most, c);
    if (v == mode) count = c;
  }
  EXPECT_EQ(count, most);
  EXPECT_EQ(line[index], mode);
  for (int64_t i = index + 1; i < static_cast<int64_t>(line.size()); ++i) EXPECT_NE(line[i], mode);
}

TEST(CudaMode, SlotsAndPriorities) {
  EXPECT_EQ(ms::slots_for(1), 128);
  EXPECT_EQ(ms::slots_for(128), 128);
  EXPECT_EQ(ms::slots_for(129), 1024);
  EXPECT_EQ(ms::slots_for(1025), 2048);
  EXPECT_EQ(ms::priority(0), 0u);
  // Even slots before odd ones of the same thread; lane 2 before lane 1 (shuffles down).
  EXPECT_LT(ms::priority(4), ms::priority(2));
  EXPECT_LT(ms::priority(0), ms::priority(1));
  std::set<unsigned> seen;
  for (unsigned s = 0; s < 2048; ++s) seen.insert(ms::priority(s));
  EXPECT_EQ(seen.size(), 2048u);
  EXPECT_EQ(ms::slot_of_key(ms::slot_key(5, 1234)), 1234u);
  EXPECT_GT(ms::slot_key(2, 7), ms::slot_key(1, 0));
}

}  // namespace
