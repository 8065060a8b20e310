// Convolution, pooling and normalisation through the C++ API, checked
// against plain reference loops (the Python tests compare with PyTorch).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "ember/ops/Ops.h"

using namespace ember;

namespace {

Tensor random_tensor(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return from_vector(v, shape).to(ScalarType::Double);
}

// out[n][o][oh][ow] = b[o] + sum w[o][c][i][j] * x[n][g*C + c][oh*s - p + i*d][ow*s - p + j*d]
std::vector<double> reference_conv(const std::vector<double>& x, const std::vector<double>& w,
                                   const std::vector<double>& b, int64_t N, int64_t Cin, int64_t H, int64_t W,
                                   int64_t Cout, int64_t k, int64_t s, int64_t p, int64_t d, int64_t groups,
                                   int64_t& OH, int64_t& OW) {
  OH = (H + 2 * p - d * (k - 1) - 1) / s + 1;
  OW = (W + 2 * p - d * (k - 1) - 1) / s + 1;
  const int64_t cg = Cin / groups, og = Cout / groups;
  std::vector<double> out(N * Cout * OH * OW);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < Cout; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b.empty() ? 0.0 : b[o];
          const int64_t g = o / og;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < k; ++i)
              for (int64_t j = 0; j < k; ++j) {
                const int64_t h = oh * s - p + i * d, ww = ow * s - p + j * d;
                if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
                acc += w[((o * cg + c) * k + i) * k + j] * x[((n * Cin + g * cg + c) * H + h) * W + ww];
              }
          out[((n * Cout + o) * OH + oh) * OW + ow] = acc;
        }
  return out;
}

}  // namespace

TEST(NN, Conv2dMatchesReferenceLoops) {
  struct Case {
    int64_t N, Cin, H, W, Cout, k, s, p, d, groups;
  };
  // Small images (wide im2col), strided (banded im2col), 1x1 (direct), groups.
  for (const Case& c : {Case{2, 4, 7, 6, 6, 3, 1, 1, 1, 2}, Case{2, 3, 9, 8, 4, 3, 2, 1, 1, 1},
                        Case{1, 6, 5, 40, 4, 1, 1, 0, 1, 1}, Case{3, 2, 8, 8, 2, 3, 1, 2, 2, 2},
                        Case{2, 5, 36, 36, 3, 5, 1, 2, 1, 1}}) {
    Tensor x = random_tensor({c.N, c.Cin, c.H, c.W}, 1);
    Tensor w = random_tensor({c.Cout, c.Cin / c.groups, c.k, c.k}, 2);
    Tensor b = random_tensor({c.Cout}, 3);
    const DimVector stride{c.s}, padding{c.p}, dilation{c.d};  // not strings: the "same"/"valid" overload
    Tensor y = conv2d(x, w, b, stride, padding, dilation, c.groups);
    int64_t OH = 0, OW = 0;
    std::vector<double> ref = reference_conv(to_vector(x), to_vector(w), to_vector(b), c.N, c.Cin, c.H, c.W, c.Cout,
                                             c.k, c.s, c.p, c.d, c.groups, OH, OW);
    ASSERT_EQ(y.sizes().vec(), (std::vector<int64_t>{c.N, c.Cout, OH, OW}));
    std::vector<double> got = to_vector(y);
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-9) << "element " << i;
  }
}

TEST(NN, Conv2dInputGradientIsTheAdjoint) {
  // <conv(x), g> == <x, conv_backward_input(g)> for any x and g.
  Tensor x = random_tensor({2, 4, 9, 7}, 4);
  Tensor w = random_tensor({6, 2, 3, 2}, 5);
  x.set_requires_grad(true);
  const DimVector stride{2, 1}, padding{1, 1}, dilation{1, 2};
  Tensor y = conv2d(x, w, std::nullopt, stride, padding, dilation, 2);
  Tensor g = random_tensor(y.sizes().vec(), 6);
  y.backward(g);
  std::vector<double> yv = to_vector(y), gv = to_vector(g), xv = to_vector(x), gx = to_vector(x.grad());
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < yv.size(); ++i) lhs += yv[i] * gv[i];
  for (size_t i = 0; i < xv.size(); ++i) rhs += xv[i] * gx[i];
  EXPECT_NEAR(lhs, rhs, 1e-9 * std::abs(lhs) + 1e-9);
}

TEST(NN, TransposedConvolutionIsTheInputGradientOfConvolution) {
  Tensor x = random_tensor({1, 3, 5, 5}, 7);
  Tensor w = random_tensor({3, 2, 3, 3}, 8);  // conv: 2 -> 3 channels
  Tensor big = random_tensor({1, 2, 11, 11}, 9);
  big.set_requires_grad(true);
  const DimVector two{2}, one{1};
  Tensor y = conv2d(big, w, std::nullopt, two, one, one, 1);
  ASSERT_EQ(y.sizes().vec(), (std::vector<int64_t>{1, 3, 6, 6}));
  Tensor g = random_tensor({1, 3, 6, 6}, 10);
  y.backward(g);
  Tensor t = conv_transpose2d(g, w, std::nullopt, {2}, {1}, {0}, 1, {1});
  std::vector<double> a = to_vector(t), b = to_vector(big.grad());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-9);
}

TEST(NN, MaxPoolIndicesAndAvgPool) {
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[i] = (i * 7) % 16;
  Tensor x = from_vector(v, {1, 1, 4, 4});
  auto [out, idx] = max_pool2d_with_indices(x, {2}, {}, {0}, {1}, false);
  EXPECT_EQ(to_vector(out), (std::vector<double>{12, 14, 15, 13}));
  EXPECT_EQ(idx.dtype(), ScalarType::Long);
  EXPECT_EQ(to_vector(idx), (std::vector<double>{4, 2, 9, 11}));
  Tensor avg = avg_pool2d(x, {2}, {}, {0}, false, true, std::nullopt);
  EXPECT_EQ(to_vector(avg), (std::vector<double>{5.5, 7.5, 9.5, 7.5}));
}

TEST(NN, BatchNormTrainingStatisticsAndRunningUpdate) {
  Tensor x = random_tensor({4, 3, 5}, 11);
  Tensor rm = zeros({3}, ScalarType::Double), rv = ones({3}, ScalarType::Double);
  auto [y, mean, invstd] = native_batch_norm(x, std::nullopt, std::nullopt, rm, rv, true, 0.25, 1e-5);
  std::vector<double> xv = to_vector(x), yv = to_vector(y), m = to_vector(mean), rmv = to_vector(rm),
                      rvv = to_vector(rv);
  for (int64_t c = 0; c < 3; ++c) {
    double s = 0, q = 0, ys = 0, yq = 0;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t i = 0; i < 5; ++i) {
        s += xv[(n * 3 + c) * 5 + i];
        ys += yv[(n * 3 + c) * 5 + i];
      }
    const double mu = s / 20;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t i = 0; i < 5; ++i) {
        q += std::pow(xv[(n * 3 + c) * 5 + i] - mu, 2);
        yq += std::pow(yv[(n * 3 + c) * 5 + i], 2);
      }
    EXPECT_NEAR(m[c], mu, 1e-12);
    EXPECT_NEAR(ys / 20, 0.0, 1e-12);                 // normalised: mean 0
    EXPECT_NEAR(yq / 20, q / 20 / (q / 20 + 1e-5), 1e-9);  // and variance var/(var+eps)
    EXPECT_NEAR(rmv[c], 0.25 * mu, 1e-12);
    EXPECT_NEAR(rvv[c], 0.75 + 0.25 * q / 19, 1e-12);  // unbiased variance
  }
}

TEST(NN, LayerAndGroupNormAgreeOnOneGroup) {
  // group_norm with one group normalises each sample like layer_norm over (C, H, W).
  Tensor x = random_tensor({3, 4, 2, 5}, 12);
  std::vector<double> a = to_vector(layer_norm(x, {4, 2, 5}, std::nullopt, std::nullopt, 1e-5, true));
  std::vector<double> b = to_vector(group_norm(x, 1, std::nullopt, std::nullopt, 1e-5, true));
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-12);
}

TEST(NN, BadShapesThrow) {
  Tensor x = random_tensor({2, 4, 6, 6}, 13);
  const DimVector one{1}, zero{0};
  EXPECT_THROW(conv2d(x, random_tensor({4, 3, 3, 3}, 1), std::nullopt, one, zero, one, 1), Error);
  EXPECT_THROW(max_pool2d(x, {7}, {}, {0}, {1}, false), Error);
  EXPECT_THROW(group_norm(x, 3, std::nullopt, std::nullopt, 1e-5, true), Error);
  EXPECT_THROW(conv2d(x.to(ScalarType::Bool), random_tensor({4, 4, 3, 3}, 1).to(ScalarType::Bool), std::nullopt,
                      one, zero, one, 1),
               NotImplementedError);
}
