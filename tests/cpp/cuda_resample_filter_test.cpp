// Host logic of the CUDA bicubic and antialiased resampling kernels
// (cuda/nn/UpsampleFilter.h): tap positions and weights checked against the
// filters' definitions and against bilinear interpolation.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/cuda/nn/ResampleIndex.h"
#include "ember/cuda/nn/UpsampleFilter.h"

namespace ember::cuda::nn {
namespace {

// Keys' cubic convolution kernel W(d), in double.
double keys(double d, double a) {
  d = std::abs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0;
}

TEST(CudaResampleFilter, CubicTapWeightsAreKeysKernelAtTheTapDistances) {
  for (bool align : {false, true}) {
    for (int64_t in : {3, 7}) {
      for (int64_t out : {2, 5, 13}) {
        const double ratio = area_scale<double>(in, out, align, std::nullopt);
        for (int64_t o = 0; o < out; ++o) {
          const CubicTap<double> tap = cubic_tap<double>(ratio, o, align);
          const double real = align ? ratio * o : ratio * (o + 0.5) - 0.5;
          EXPECT_EQ(tap.i0, static_cast<int64_t>(std::floor(real)));
          double sum = 0;
          for (int k = 0; k < 4; ++k) {
            EXPECT_NEAR(tap.c[k], keys(real - static_cast<double>(tap.i0 - 1 + k), -0.75), 1e-12);
            sum += tap.c[k];
          }
          EXPECT_NEAR(sum, 1.0, 1e-12);
        }
      }
    }
  }
}

TEST(CudaResampleFilter, CubicTapIsNotClampedAtTheLeftBorder) {
  // Upsampling 4 -> 8 without aligned corners: output 0 lies at -0.25.
  const float ratio = area_scale<float>(4, 8, false, std::nullopt);
  const CubicTap<float> tap = cubic_tap<float>(ratio, 0, false);
  EXPECT_EQ(tap.i0, -1);
  EXPECT_FLOAT_EQ(tap.c[1], static_cast<float>(keys(0.75, -0.75)));
}

TEST(CudaResampleFilter, CubicTapOnAnInputPixelIsThatPixel) {
  const CubicTap<float> tap = cubic_tap<float>(1.0f, 3, false);
  EXPECT_EQ(tap.i0, 3);
  EXPECT_EQ(tap.c[0], 0.0f);
  EXPECT_EQ(tap.c[1], 1.0f);
  EXPECT_EQ(tap.c[2], 0.0f);
  EXPECT_EQ(tap.c[3], 0.0f);
}

TEST(CudaResampleFilter, AntialiasFilters) {
  EXPECT_DOUBLE_EQ(aa_filter(0.25, false), 0.75);
  EXPECT_DOUBLE_EQ(aa_filter(-0.25, false), 0.75);
  EXPECT_DOUBLE_EQ(aa_filter(1.5, false), 0.0);
  for (double x : {-1.9, -1.2, -0.6, 0.0, 0.3, 0.99, 1.0, 1.4, 1.999, 2.0, 2.5}) {
    EXPECT_NEAR(aa_filter(x, true), keys(x, -0.5), 1e-12) << x;
  }
}

// Normalised weights of one output position, as the weights kernel makes them.
std::vector<double> aa_weights(int64_t o, int64_t in, double scale, bool cubic, AaSpan<double>* span) {
  const AaSupport<double> s = aa_support<double>(scale, cubic);
  *span = aa_span<double>(o, in, scale, s.support);
  std::vector<double> w(static_cast<size_t>(span->size));
  double total = 0;
  for (int64_t j = 0; j < span->size; ++j) {
    w[j] = aa_filter(aa_filter_arg<double>(j, span->min_minus_center, s.invscale), cubic);
    total += w[j];
  }
  for (double& v : w) v /= total;
  return w;
}

TEST(CudaResampleFilter, AntialiasWindowsCoverTheFilterAndFitTheSlots) {
  for (bool cubic : {false, true}) {
    for (int64_t in : {5, 12, 40}) {
      for (int64_t out : {2, 3, 7, 9, 19}) {
        const double scale = area_scale<double>(in, out, false, std::nullopt);
        const AaSupport<double> s = aa_support<double>(scale, cubic);
        for (int64_t o = 0; o < out; ++o) {
          AaSpan<double> span;
          const std::vector<double> w = aa_weights(o, in, scale, cubic, &span);
          ASSERT_GE(span.min, 0);
          ASSERT_GE(span.size, 1);
          ASSERT_LE(span.min + span.size, in);
          ASSERT_LE(span.size, s.width);
          double sum = 0;
          for (double v : w) sum += v;
          EXPECT_NEAR(sum, 1.0, 1e-12);
          // Source pixels just outside the window carry no filter weight.
          const double center = scale * (o + 0.5);
          for (int64_t j : {span.min - 1, span.min + span.size}) {
            if (j < 0 || j >= in) continue;
            EXPECT_NEAR(aa_filter((j - center + 0.5) * s.invscale, cubic), 0.0, 1e-9) << o << " " << j;
          }
        }
      }
    }
  }
}

TEST(CudaResampleFilter, AntialiasedBilinearUpsamplingIsBilinear) {
  // When enlarging, the triangle filter is not stretched: the weights are
  // plain bilinear interpolation's (without aligned corners).
  for (int64_t in : {4, 7}) {
    for (int64_t out : {9, 16}) {
      const double scale = area_scale<double>(in, out, false, std::nullopt);
      for (int64_t o = 0; o < out; ++o) {
        AaSpan<double> span;
        const std::vector<double> w = aa_weights(o, in, scale, false, &span);
        const LinearTap<double> tap = linear_tap<double>(scale, o, false, in);
        std::vector<double> dense(static_cast<size_t>(in), 0.0), ref(static_cast<size_t>(in), 0.0);
        for (int64_t j = 0; j < span.size; ++j) dense[span.min + j] += w[j];
        ref[tap.i0] += tap.l0;
        ref[tap.i0 + tap.step] += tap.l1;
        for (int64_t i = 0; i < in; ++i) EXPECT_NEAR(dense[i], ref[i], 1e-12) << in << " " << out << " " << o;
      }
    }
  }
}

}  // namespace
}  // namespace ember::cuda::nn
