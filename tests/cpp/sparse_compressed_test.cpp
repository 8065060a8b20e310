// CSR times dense and the sampled dot products of its gradient, against a
// dense product; malformed indices raise instead of reading out of bounds.
#include <gtest/gtest.h>

#include <vector>

#include "ember/cpu/SparseCompressedOps.h"
#include "ember/ops/Ops.h"

using namespace ember;

namespace {

// [[1, 0, 2], [0, 0, 0], [0, 3, 4], [5, 6, 7]] as CSR (row 3 holds one entry
// more than the kernel takes per pass of four, row 1 none).
struct Csr {
  Tensor crow = from_vector({0, 2, 2, 4, 7}, {5}, ScalarType::Long);
  Tensor col = from_vector({0, 2, 1, 2, 0, 1, 2}, {7}, ScalarType::Long);
  Tensor values = from_vector({1, 2, 3, 4, 5, 6, 7}, {7}, ScalarType::Double);
  Tensor dense = from_vector({1, 0, 2, 0, 0, 0, 0, 3, 4, 5, 6, 7}, {4, 3}, ScalarType::Double);
};

}  // namespace

TEST(SparseCompressed, CsrTimesDenseMatchesDense) {
  Csr m;
  Tensor b = from_vector({1, 2, 3, 4, 5, 6}, {3, 2}, ScalarType::Double);
  Tensor got = native::csr_dense_mm(m.crow, m.col, m.values, b);
  EXPECT_TRUE(got.sizes().equals({4, 2}));
  EXPECT_EQ(to_vector(got), to_vector(matmul(m.dense, b)));
  // int32 indices and float values give the same numbers
  Tensor got32 = native::csr_dense_mm(m.crow.to(ScalarType::Int), m.col.to(ScalarType::Int),
                                      m.values.to(ScalarType::Float), b.to(ScalarType::Float));
  EXPECT_EQ(to_vector(got32), to_vector(got));
}

TEST(SparseCompressed, SampledDotIsTheValuesGradient) {
  Csr m;
  Tensor a = from_vector({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}, ScalarType::Double);
  Tensor b = from_vector({1, -1, 2, 0, 0.5, 3}, {3, 2}, ScalarType::Double);
  Tensor got = native::csr_sampled_dot(m.crow, m.col, a, b);
  // entry (r, c): <a[r], b[c]>
  const std::vector<std::pair<int, int>> entries{{0, 0}, {0, 2}, {2, 1}, {2, 2}, {3, 0}, {3, 1}, {3, 2}};
  std::vector<double> want;
  const std::vector<double> av = to_vector(a), bv = to_vector(b);
  for (auto [r, c] : entries) want.push_back(av[r * 2] * bv[c * 2] + av[r * 2 + 1] * bv[c * 2 + 1]);
  EXPECT_EQ(to_vector(got), want);
}

TEST(SparseCompressed, MalformedIndicesRaise) {
  Csr m;
  Tensor b = ones({3, 2}, ScalarType::Double);
  Tensor bad_col = from_vector({0, 2, 1, 3, 0, 1, 2}, {7}, ScalarType::Long);
  EXPECT_THROW(native::csr_dense_mm(m.crow, bad_col, m.values, b), Error);
  Tensor bad_crow = from_vector({0, 2, 1, 4, 7}, {5}, ScalarType::Long);
  EXPECT_THROW(native::csr_dense_mm(bad_crow, m.col, m.values, b), Error);
  Tensor short_crow = from_vector({0, 2, 2, 4, 6}, {5}, ScalarType::Long);
  EXPECT_THROW(native::csr_dense_mm(short_crow, m.col, m.values, b), Error);
  EXPECT_THROW(native::csr_dense_mm(m.crow, m.col, m.values, ones({3, 2}, ScalarType::Float)), Error);
  EXPECT_THROW(native::csr_dense_mm(m.crow, m.col, m.values.to(ScalarType::Long), b.to(ScalarType::Long)),
               NotImplementedError);
}
