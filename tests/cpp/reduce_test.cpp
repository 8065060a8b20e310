// Reductions, softmax and matrix products through the C++ API: every loop of
// the reduction engine (rows, columns, strided, split across threads) against
// a plain double-precision reference.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"

using namespace ember;

namespace {

// A [rows, cols] float tensor with values that make sums exact in double.
Tensor grid(int64_t rows, int64_t cols) {
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<int64_t>(i % 7) - 3) * 0.5;
  return from_vector(v, {rows, cols});
}

std::vector<double> ref_sum(const std::vector<double>& v, int64_t rows, int64_t cols, int dim) {
  std::vector<double> out(static_cast<size_t>(dim == 0 ? cols : rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[dim == 0 ? c : r] += v[r * cols + c];
  }
  return out;
}

}  // namespace

TEST(Reduce, RowsColumnsAndStridedLayouts) {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {300, 257}, {70000, 3}, {2, 40000}}) {
      Tensor x = grid(rows, cols);
      std::vector<double> v = to_vector(x);
      for (int dim : {0, 1}) {
        std::vector<double> want = ref_sum(v, rows, cols, dim);
        EXPECT_EQ(to_vector(x.sum(std::vector<int64_t>{dim})), want);
        // The transposed view reduces the other dim: column loops become row loops.
        EXPECT_EQ(to_vector(x.permute({1, 0}).sum(std::vector<int64_t>{1 - dim})), want);
      }
      double total = 0;
      for (double d : v) total += d;
      EXPECT_EQ(x.sum().item<double>(), total);
    }
  }
}

TEST(Reduce, MaxMinArgAndNaN) {
  Tensor x = from_vector({1, 7, 3, 7, -2, 0}, {2, 3});
  auto [values, indices] = x.max(1);
  EXPECT_EQ(to_vector(values), (std::vector<double>{7, 7}));
  EXPECT_EQ(to_vector(indices), (std::vector<double>{1, 0}));  // first of ties
  EXPECT_EQ(to_vector(x.argmin(std::optional<int64_t>(0))), (std::vector<double>{0, 1, 1}));
  Tensor n = from_vector({1, NAN, 3}, {3});
  EXPECT_TRUE(std::isnan(n.amax({}).item<double>()));
  EXPECT_EQ(n.argmax().item<int64_t>(), 1);
}

TEST(Reduce, MeanVarAndEmpty) {
  Tensor x = from_vector({1, 2, 3, 4}, {4});
  EXPECT_DOUBLE_EQ(x.mean().item<double>(), 2.5);
  EXPECT_NEAR(x.var(std::nullopt, Scalar(int64_t(1)), false).item<double>(), 5.0 / 3.0, 1e-6);
  Tensor e = zeros({0});
  EXPECT_TRUE(std::isnan(e.mean().item<double>()));
  EXPECT_EQ(e.sum().item<double>(), 0.0);
  EXPECT_THROW(e.max(), Error);
  EXPECT_THROW(from_vector({1, 2}, {2}, ScalarType::Long).mean(), Error);
}

TEST(Reduce, SoftmaxRowsSumToOne) {
  Tensor x = grid(4, 1000);
  Tensor y = x.softmax(1);
  std::vector<double> s = to_vector(y.sum(std::vector<int64_t>{1}));
  for (double d : s) EXPECT_NEAR(d, 1.0, 1e-5);
  std::vector<double> l = to_vector(x.log_softmax(0).sum(std::vector<int64_t>{0}));
  EXPECT_EQ(l.size(), 1000u);
}

TEST(Linalg, MatmulShapesAndTransposes) {
  Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = from_vector({1, 0, 0, 1, 1, 1}, {3, 2});
  EXPECT_EQ(to_vector(a.mm(b)), (std::vector<double>{4, 5, 10, 11}));
  // a @ a^T through the transpose flag (no copy) and as doubles.
  EXPECT_EQ(to_vector(a.matmul(a.permute({1, 0}))), (std::vector<double>{14, 32, 32, 77}));
  Tensor ad = a.to(ScalarType::Double);
  EXPECT_EQ(to_vector(ad.permute({1, 0}).mm(ad)), (std::vector<double>{17, 22, 27, 22, 29, 36, 27, 36, 45}));
  Tensor v = from_vector({1, 1, 1}, {3});
  EXPECT_EQ(to_vector(a.matmul(v)), (std::vector<double>{6, 15}));
  EXPECT_EQ(a.unsqueeze(0).expand({4, 2, 3}).matmul(b).sizes().vec(), (std::vector<int64_t>{4, 2, 2}));
  Tensor ai = a.to(ScalarType::Long);
  EXPECT_EQ(to_vector(ai.mm(b.to(ScalarType::Long))), (std::vector<double>{4, 5, 10, 11}));
  EXPECT_THROW(a.mm(a), Error);
}
