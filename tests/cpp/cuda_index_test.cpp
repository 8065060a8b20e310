// The host side of the CUDA index kernels' walk (cuda/kernels/IndexGeometry.h):
// offsets per operand, merging of contiguous dimensions, launch shapes.
#include <gtest/gtest.h>

#include <vector>

#include "ember/cuda/kernels/IndexGeometry.h"

using ember::cuda::IndexGeometry;
using ember::cuda::kMaxIndexDims;
using ember::cuda::kOperands;
using ember::cuda::launch_shape;
using ember::cuda::make_index_geometry;

namespace {

// Reference: offsets of every element in row-major order, computed from coordinates.
std::vector<std::vector<int64_t>> reference(const std::vector<int64_t>& shape,
                                            const std::vector<std::vector<int64_t>>& strides) {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  std::vector<std::vector<int64_t>> out;
  for (int64_t linear = 0; linear < numel; ++linear) {
    std::vector<int64_t> offs(kOperands, 0);
    int64_t rest = linear;
    for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
      const int64_t c = rest % shape[i];
      rest /= shape[i];
      for (size_t k = 0; k < strides.size(); ++k) offs[k] += c * strides[k][i];
    }
    out.push_back(offs);
  }
  return out;
}

void expect_walk(const std::vector<int64_t>& shape, const std::vector<std::vector<int64_t>>& strides,
                 int expected_dims) {
  std::vector<const int64_t*> ptrs;
  for (const auto& s : strides) ptrs.push_back(s.data());
  IndexGeometry g;
  ASSERT_TRUE(make_index_geometry(shape.data(), static_cast<int>(shape.size()), ptrs.data(),
                                  static_cast<int>(strides.size()), g));
  EXPECT_EQ(g.dims, expected_dims);
  const auto want = reference(shape, strides);
  ASSERT_EQ(g.numel, static_cast<int64_t>(want.size()));
  for (int64_t linear = 0; linear < g.numel; ++linear) {
    int64_t offs[kOperands];
    g.offsets(linear, offs);
    for (int k = 0; k < kOperands; ++k) EXPECT_EQ(offs[k], want[linear][k]) << "element " << linear << " operand " << k;
  }
}

}  // namespace

TEST(CudaIndexGeometry, ContiguousDimensionsMerge) {
  // A contiguous 2x3x4 tensor walks as one dimension of 24.
  expect_walk({2, 3, 4}, {{12, 4, 1}, {12, 4, 1}, {0, 0, 0}}, 1);
}

TEST(CudaIndexGeometry, TransposedAndBroadcastOperands) {
  // Operand 0 transposed, operand 1 broadcast along dim 0, operand 2 a vector along dim 1.
  expect_walk({3, 5}, {{1, 3}, {0, 1}, {0, 2}}, 2);
}

TEST(CudaIndexGeometry, GatherAlongMiddleDimension) {
  // index_select of dim 1 of a (2, 4, 3) tensor: self's dim-1 stride zeroed, the index walks dim 1 only.
  expect_walk({2, 5, 3}, {{12, 0, 1}, {15, 3, 1}, {0, 1, 0}}, 3);
}

TEST(CudaIndexGeometry, SizeOneDimensionsDrop) {
  expect_walk({1, 4, 1, 2}, {{8, 2, 2, 1}, {100, 1, 7, 4}, {0, 0, 0, 0}}, 2);
}

TEST(CudaIndexGeometry, ZeroDimAndEmpty) {
  expect_walk({}, {{}, {}, {}}, 0);
  std::vector<int64_t> shape{3, 0};
  std::vector<int64_t> s{1, 1};
  const int64_t* ptrs[3] = {s.data(), s.data(), s.data()};
  IndexGeometry g;
  ASSERT_TRUE(make_index_geometry(shape.data(), 2, ptrs, 3, g));
  EXPECT_EQ(g.numel, 0);
}

TEST(CudaIndexGeometry, TooManyDimensions) {
  // 26 dimensions of size 2 that cannot merge (every operand's strides alternate).
  std::vector<int64_t> shape(kMaxIndexDims + 1, 2), strides(kMaxIndexDims + 1);
  int64_t st = 1;
  for (int i = kMaxIndexDims; i >= 0; --i, st *= 3) strides[i] = st;
  const int64_t* ptrs[3] = {strides.data(), strides.data(), strides.data()};
  IndexGeometry g;
  EXPECT_FALSE(make_index_geometry(shape.data(), kMaxIndexDims + 1, ptrs, 3, g));
  shape.pop_back();
  strides.pop_back();
  ptrs[0] = ptrs[1] = ptrs[2] = strides.data();
  EXPECT_TRUE(make_index_geometry(shape.data(), kMaxIndexDims, ptrs, 3, g));
  EXPECT_EQ(g.dims, kMaxIndexDims);
}

TEST(CudaIndexGeometry, LaunchShape) {
  EXPECT_EQ(launch_shape(0).blocks, 0);
  EXPECT_EQ(launch_shape(1).blocks, 1);
  EXPECT_EQ(launch_shape(256).blocks, 1);
  EXPECT_EQ(launch_shape(257).blocks, 2);
  EXPECT_EQ(launch_shape(257).threads, 256);
  // Huge sizes stop at the cap; the kernels' grid-stride loops cover the rest.
  EXPECT_EQ(launch_shape(int64_t(1) << 40).blocks, 65535LL * 8);
}
