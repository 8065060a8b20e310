// Index arithmetic of the CUDA elementwise loops, checked on the host:
// fast division, offsets per linear index, and the split into pieces that
// 32-bit offsets can address.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "ember/cuda/kernels/OffsetCalculator.h"
#include "ember/ops/Ops.h"

using namespace ember;
using namespace ember::cuda;

TEST(CudaIntDivider, MatchesDivision) {
  std::mt19937 rng(7);
  std::vector<uint32_t> divisors = {
      1, 2, 3, 5, 7, 10, 64, 100, 127, 1000, 65535, 65536, 65537, 1u << 30, (1u << 31) - 1, 1u << 31};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % 100000);
  std::vector<uint32_t> numbers = {0, 1, 2, 3, 99, 100, 101, 65535, 65536, (1u << 31) - 1, (1u << 31) - 2};
  for (int i = 0; i < 2000; ++i) numbers.push_back(rng() & 0x7fffffffu);
  for (uint32_t d : divisors) {
    const IntDivider div(d);
    for (uint32_t n : numbers) {
      ASSERT_EQ(div.div(n), n / d) << n << " / " << d;
      ASSERT_EQ(div.mod(n), n % d) << n << " % " << d;
    }
  }
}

namespace {
using Triple = std::tuple<int64_t, int64_t, int64_t>;

// The (out, a, b) byte offsets the CPU loop visits.
std::multiset<Triple> cpu_offsets(const TensorIterator& it) {
  std::multiset<Triple> seen;
  char* base[3];
  for (int k = 0; k < 3; ++k) base[k] = static_cast<char*>(it.operand(k).data_ptr());
  it.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          seen.insert({data[0] + i * strides[0] - base[0], data[1] + i * strides[1] - base[1],
                       data[2] + i * strides[2] - base[2]});
        }
      },
      int64_t{1} << 40);
  return seen;
}

std::multiset<Triple> calculator_offsets(const IterGeometry& g) {
  std::multiset<Triple> seen;
  OffsetCalculator<3> calc(g);
  for (uint32_t i = 0; i < static_cast<uint32_t>(g.numel()); ++i) {
    const auto o = calc.get(i);
    seen.insert({g.base_offsets[0] + int32_t(o.v[0]), g.base_offsets[1] + int32_t(o.v[1]),
                 g.base_offsets[2] + int32_t(o.v[2])});
  }
  return seen;
}
}  // namespace

TEST(CudaOffsetCalculator, MatchesIteratorTraversal) {
  const Tensor a = ones({2, 3, 4, 5});
  const std::vector<std::pair<Tensor, Tensor>> cases = {
      {a, a},
      {a.permute({3, 1, 0, 2}), a.permute({3, 1, 0, 2})},
      {a.transpose(1, 3), ones({3})},
      {a.select(2, 1), a.select(2, 3).transpose(0, 1).contiguous().transpose(0, 1)},
      {a.narrow(3, 1, 3), full({}, Scalar(2.0), ScalarType::Float)},
      {ones({7, 1, 3}), ones({1, 5, 1})},
  };
  for (const auto& [x, y] : cases) {
    Tensor out;
    auto it = TensorIterator::binary_op(out, x, y);
    const IterGeometry g = make_geometry(it);
    EXPECT_EQ(g.numel(), it.numel());
    EXPECT_TRUE(g.can_use_32bit_indexing());
    EXPECT_EQ(calculator_offsets(g), cpu_offsets(it));
  }
}

TEST(CudaIterGeometry, ContiguousAndBroadcastDetection) {
  const Tensor a = ones({4, 6});
  Tensor out;
  auto it = TensorIterator::binary_op(out, a, full({}, Scalar(3.0), ScalarType::Float));
  const IterGeometry g = make_geometry(it);
  const int64_t sizes[3] = {4, 4, 4};
  EXPECT_TRUE(g.is_contiguous(sizes, 0b100));
  EXPECT_FALSE(g.is_contiguous(sizes, 0));
  Tensor out2;
  auto it2 = TensorIterator::binary_op(out2, a.t(), a.t().contiguous());
  EXPECT_FALSE(make_geometry(it2).is_contiguous(sizes, 0));
}

TEST(CudaIterGeometry, SplitsInto32BitPieces) {
  // 3 x 2^30 float elements, a transposed input: no piece may exceed int32
  // offsets, and the pieces cover every element exactly once.
  IterGeometry g;
  g.ndim = 2;
  g.nargs = 2;
  g.sizes[0] = int64_t{1} << 15;
  g.sizes[1] = 3 * (int64_t{1} << 15);
  g.strides[0][0] = 4;
  g.strides[1][0] = 4 * g.sizes[0];
  g.strides[0][1] = 4 * g.sizes[1];
  g.strides[1][1] = 4;
  EXPECT_FALSE(g.can_use_32bit_indexing());
  int64_t total = 0;
  std::set<std::pair<int64_t, int64_t>> bases;
  int pieces = 0;
  for_each_32bit_piece(g, [&](const IterGeometry& piece) {
    EXPECT_TRUE(piece.can_use_32bit_indexing());
    total += piece.numel();
    ++pieces;
    bases.insert({piece.base_offsets[0], piece.base_offsets[1]});
  });
  EXPECT_EQ(total, g.numel());
  EXPECT_EQ(static_cast<int>(bases.size()), pieces);  // distinct pieces
  // Each operand forces splits of another dim (the input is transposed).
  EXPECT_GE(pieces, 8);
  EXPECT_LE(pieces, 256);
  // Small pieces stay whole; an empty geometry yields none.
  IterGeometry small = g;
  small.sizes[0] = 2;
  small.sizes[1] = 2;
  int calls = 0;
  for_each_32bit_piece(small, [&](const IterGeometry&) { ++calls; });
  EXPECT_EQ(calls, 1);
  small.sizes[0] = 0;  // empty
  for_each_32bit_piece(small, [&](const IterGeometry&) { ++calls; });
  EXPECT_EQ(calls, 1);
}
