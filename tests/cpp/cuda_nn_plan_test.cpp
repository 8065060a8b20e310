// Host logic of the CUDA nn kernels: the cuDNN convolution's algorithm-cache
// key and shapes (cuda/nn/ConvPlan.h) and the pooling window arithmetic
// (cuda/nn/PoolGeometry.h), checked against direct enumeration.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "ember/cuda/nn/ConvPlan.h"
#include "ember/cuda/nn/PoolGeometry.h"
#include "ember/cuda/nn/ResampleIndex.h"

namespace ember::cuda {
namespace {

using conv::ConvArgs;
using conv::ConvKey;
using conv::NdShape;

ConvArgs args2d(int64_t pad, int64_t stride, int64_t dil, int64_t groups) {
  ConvArgs a;
  a.spatial = 2;
  for (int i = 0; i < 2; ++i) {
    a.padding[i] = pad;
    a.stride[i] = stride;
    a.dilation[i] = dil;
  }
  a.groups = groups;
  return a;
}

NdShape contiguous(std::vector<int64_t> sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= sizes[i];
  }
  return conv::as_cudnn_shape(sizes.data(), strides.data(), static_cast<int>(sizes.size()));
}

TEST(CudaConvPlan, OutputSizesMatchDirectWindowCount) {
  for (int64_t in = 1; in < 12; ++in) {
    for (int64_t k = 1; k < 4; ++k) {
      for (int64_t pad = 0; pad < 3; ++pad) {
        for (int64_t stride = 1; stride < 4; ++stride) {
          for (int64_t dil = 1; dil < 3; ++dil) {
            const int64_t span = dil * (k - 1) + 1;
            if (in + 2 * pad < span) continue;
            int64_t windows = 0;
            for (int64_t start = -pad; start + span <= in + pad; start += stride) ++windows;
            EXPECT_EQ(conv::conv_output_size(in, k, pad, stride, dil), windows);
            // The transposed convolution maps that output size back onto the input (output_padding fills the rest).
            const int64_t out = windows;
            const int64_t back = conv::conv_transpose_output_size(out, k, pad, stride, dil, 0);
            EXPECT_LE(back, in);
            EXPECT_GT(back + stride, in);
          }
        }
      }
    }
  }
}

TEST(CudaConvPlan, OneDimensionalConvolutionGainsUnitHeight) {
  const int64_t sizes[3] = {2, 3, 7}, strides[3] = {21, 7, 1};
  const NdShape s = conv::as_cudnn_shape(sizes, strides, 3);
  ASSERT_EQ(s.dims, 4);
  EXPECT_EQ(s.sizes[2], 1);
  EXPECT_EQ(s.sizes[3], 7);
  EXPECT_EQ(s.strides[3], 1);
  EXPECT_EQ(s.strides[2], 7);
  ConvArgs a;
  a.spatial = 1;
  a.padding[0] = 2;
  a.stride[0] = 3;
  a.dilation[0] = 4;
  const conv::CudnnConvParams p = conv::cudnn_params(a);
  EXPECT_EQ(p.spatial, 2);
  EXPECT_EQ(p.pad[0], 0);
  EXPECT_EQ(p.stride[0], 1);
  EXPECT_EQ(p.dilation[0], 1);
  EXPECT_EQ(p.pad[1], 2);
  EXPECT_EQ(p.stride[1], 3);
  EXPECT_EQ(p.dilation[1], 4);
}

TEST(CudaConvPlan, KeyDistinguishesEveryParameter) {
  const NdShape x = contiguous({2, 4, 8, 8}), w = contiguous({6, 2, 3, 3}), y = contiguous({2, 6, 8, 8});
  const ConvArgs a = args2d(1, 1, 1, 2);
  const ConvKey base = conv::make_key(x, w, y, a, 6, false, true, false, false, 0);
  EXPECT_EQ(base, conv::make_key(x, w, y, a, 6, false, true, false, false, 0));
  EXPECT_EQ(conv::ConvKeyHash()(base),
            conv::ConvKeyHash()(conv::make_key(x, w, y, a, 6, false, true, false, false, 0)));
  std::vector<ConvKey> variants = {
      conv::make_key(x, w, y, a, 5, false, true, false, false, 0),  // dtype
      conv::make_key(x, w, y, a, 6, true, true, false, false, 0),  // layout
      conv::make_key(x, w, y, a, 6, false, false, false, false, 0),  // tf32
      conv::make_key(x, w, y, a, 6, false, true, true, false, 0),  // deterministic
      conv::make_key(x, w, y, a, 6, false, true, false, true, 0),  // benchmark
      conv::make_key(x, w, y, a, 6, false, true, false, false, 1),  // device
      conv::make_key(x, w, y, args2d(0, 1, 1, 2), 6, false, true, false, false, 0),
      conv::make_key(x, w, y, args2d(1, 2, 1, 2), 6, false, true, false, false, 0),
      conv::make_key(x, w, y, args2d(1, 1, 2, 2), 6, false, true, false, false, 0),
      conv::make_key(x, w, y, args2d(1, 1, 1, 1), 6, false, true, false, false, 0),
      conv::make_key(contiguous({3, 4, 8, 8}), w, y, a, 6, false, true, false, false, 0),
      conv::make_key(x, contiguous({6, 2, 5, 5}), y, a, 6, false, true, false, false, 0),
  };
  for (size_t i = 0; i < variants.size(); ++i) {
    EXPECT_FALSE(variants[i] == base) << "variant " << i;
    for (size_t j = i + 1; j < variants.size(); ++j) EXPECT_FALSE(variants[i] == variants[j]) << i << " vs " << j;
  }
}

TEST(CudaConvPlan, CacheStoresPerKeyAndIsThreadSafe) {
  conv::AlgoCache cache;
  const NdShape x = contiguous({1, 1, 4, 4}), w = contiguous({1, 1, 3, 3}), y = contiguous({1, 1, 2, 2});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const ConvKey k = conv::make_key(x, w, y, args2d(i, 1, 1, 1), t, false, true, false, false, 0);
        cache.insert(k, conv::AlgoChoice{i, t, static_cast<size_t>(i * t)});
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(cache.size(), 200u);
  const ConvKey k = conv::make_key(x, w, y, args2d(7, 1, 1, 1), 3, false, true, false, false, 0);
  auto hit = cache.find(k);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->algo, 7);
  EXPECT_EQ(hit->math_type, 3);
  EXPECT_EQ(hit->workspace, 21u);
  cache.erase(k);
  EXPECT_FALSE(cache.find(k).has_value());
}

TEST(CudaConvPlan, PickCandidateHonoursStatusDeterminismAndMemory) {
  std::vector<conv::AlgoCandidate> c = {
      {0, 1, true, 0, 0},  // failed
      {1, 0, false, 0, 10},  // nondeterministic
      {2, 0, true, 0, 1000},  // too much memory when capped
      {3, 0, true, 0, 5},
  };
  EXPECT_EQ(conv::pick_candidate(c.data(), 4, false, 1 << 20), 1);
  EXPECT_EQ(conv::pick_candidate(c.data(), 4, true, 1 << 20), 2);
  EXPECT_EQ(conv::pick_candidate(c.data(), 4, true, 100), 3);
  EXPECT_EQ(conv::pick_candidate(c.data(), 1, false, 100), -1);
}

// Every (output, input) pair of a max pooling window, enumerated directly.
TEST(CudaPoolGeometry, MaxPoolRangesHoldExactlyTheWindowsThatReachAnInput) {
  for (int64_t in = 1; in < 10; ++in) {
    for (int64_t k = 1; k < 4; ++k) {
      for (int64_t pad = 0; pad <= k / 2; ++pad) {
        for (int64_t stride = 1; stride < 4; ++stride) {
          for (int64_t dil = 1; dil < 3; ++dil) {
            const int64_t span = dil * (k - 1) + 1;
            if (in + 2 * pad < span) continue;
            const int64_t out = (in + 2 * pad - span) / stride + 1;
            for (int64_t i = 0; i < in; ++i) {
              const nn::PoolRange r = nn::max_pool_range(i, pad, k, dil, stride, out);
              for (int64_t o = 0; o < out; ++o) {
                bool reaches = false;
                for (int64_t t = 0; t < k; ++t) reaches = reaches || (o * stride - pad + t * dil == i);
                if (reaches) EXPECT_TRUE(o >= r.begin && o < r.end) << in << " " << k << " " << i << " " << o;
              }
            }
          }
        }
      }
    }
  }
}

TEST(CudaPoolGeometry, AvgPoolRangesAndDivisors) {
  for (int64_t in = 1; in < 10; ++in) {
    for (int64_t k = 1; k < 4; ++k) {
      for (int64_t pad = 0; pad <= k / 2; ++pad) {
        for (int64_t stride = 1; stride < 4; ++stride) {
          const int64_t out = (in + 2 * pad - k) / stride + 1;
          if (out <= 0) continue;
          nn::PoolWindow2d g;
          g.in_h = 1;
          g.in_w = in;
          g.out_h = 1;
          g.out_w = out;
          g.kernel_w = k;
          g.stride_w = stride;
          g.pad_w = pad;
          for (int64_t o = 0; o < out; ++o) {
            const nn::AvgWindow w = nn::avg_window(0, o, g);
            const int64_t lo = std::max<int64_t>(o * stride - pad, 0);
            const int64_t hi = std::min<int64_t>(o * stride - pad + k, in);
            EXPECT_EQ(w.w0, lo);
            EXPECT_EQ(w.w1, hi);
            EXPECT_EQ(nn::avg_divisor(w, false, 0), hi - lo);
            EXPECT_EQ(nn::avg_divisor(w, true, 0),
                      std::min<int64_t>(o * stride - pad + k, in + pad) - (o * stride - pad));
            EXPECT_EQ(nn::avg_divisor(w, true, 5), 5);
            for (int64_t i = lo; i < hi; ++i) {
              const nn::PoolRange r = nn::avg_pool_range(i, pad, k, stride, out);
              EXPECT_TRUE(o >= r.begin && o < r.end) << in << " " << k << " " << i << " " << o;
            }
          }
        }
      }
    }
  }
}

TEST(CudaPoolGeometry, AdaptiveWindowsCoverTheInput) {
  for (int64_t in = 1; in < 20; ++in) {
    for (int64_t out = 1; out < 20; ++out) {
      std::vector<int> covered(in, 0);
      for (int64_t o = 0; o < out; ++o) {
        const int64_t s = nn::adaptive_start(o, out, in), e = nn::adaptive_end(o, out, in);
        EXPECT_LT(s, e);
        EXPECT_LE(e, in);
        for (int64_t i = s; i < e; ++i) ++covered[i];
        // The backward's output range for each of these inputs holds o.
        for (int64_t i = s; i < e; ++i) {
          EXPECT_LE(nn::adaptive_start(i, in, out), o);
          EXPECT_GT(nn::adaptive_end(i, in, out), o);
        }
      }
      for (int64_t i = 0; i < in; ++i) EXPECT_GE(covered[i], 1);
    }
  }
}

}  // namespace
}  // namespace ember::cuda

// Linear taps: in range, weights summing to one, corners exact with align_corners.
namespace ember::cuda {
namespace {
TEST(CudaResampleIndex, LinearTapsStayInRange) {
  for (int64_t in = 1; in < 9; ++in) {
    for (int64_t out = 1; out < 17; ++out) {
      for (bool align : {false, true}) {
        const float r = nn::area_scale<float>(in, out, align, std::nullopt);
        for (int64_t d = 0; d < out; ++d) {
          const nn::LinearTap<float> t = nn::linear_tap<float>(r, d, align, in);
          EXPECT_GE(t.i0, 0);
          EXPECT_LT(t.i0 + t.step, in);
          EXPECT_FLOAT_EQ(t.l0 + t.l1, 1.f);
          EXPECT_GE(t.l1, 0.f);
          EXPECT_LT(t.l1, 1.f);
        }
        if (align && out > 1) {
          const nn::LinearTap<float> last = nn::linear_tap<float>(r, out - 1, align, in);
          // (in - 1) / (out - 1) * (out - 1) lands within float rounding of the last input.
          EXPECT_NEAR(static_cast<float>(last.i0) + last.l1, static_cast<float>(in - 1), 1e-5f);
        }
      }
    }
  }
  // A given scale factor sets the ratio (1 / scale), not in / out.
  EXPECT_FLOAT_EQ(nn::area_scale<float>(5, 12, false, 2.5), 0.4f);
  EXPECT_FLOAT_EQ(nn::area_scale<float>(5, 12, false, std::nullopt), 5.f / 12.f);
}
}  // namespace
}  // namespace ember::cuda

namespace ember::cuda::conv {
namespace {

TEST(CudaConvGraph, PointerAlignmentIsTheLargestPowerOfTwoUpTo16) {
  EXPECT_EQ(pointer_alignment(0x1000), 16);
  EXPECT_EQ(pointer_alignment(0x1008), 8);
  EXPECT_EQ(pointer_alignment(0x1004), 4);
  EXPECT_EQ(pointer_alignment(0x1002), 2);
  EXPECT_EQ(pointer_alignment(0x1001), 1);
  EXPECT_EQ(pointer_alignment(0x1030), 16);
}

TEST(CudaConvGraph, EngineNotesFilterConfigurations) {
  const int tensor_core[1] = {kNoteTensorCore};
  const int down_convert[2] = {kNoteTensorCore, kNoteDownConvertInputs};
  const int reduced[1] = {kNoteReducedPrecisionReduction};
  const int nondeterministic[1] = {kNoteNondeterministic};
  const int winograd[1] = {5};
  EXPECT_TRUE(engine_admitted(nullptr, 0, true, false, true));
  // float32 on tensor cores is TF32: only when allowed; other dtypes always.
  EXPECT_TRUE(engine_admitted(tensor_core, 1, true, true, false));
  EXPECT_FALSE(engine_admitted(tensor_core, 1, true, false, false));
  EXPECT_TRUE(engine_admitted(tensor_core, 1, false, false, false));
  EXPECT_FALSE(engine_admitted(down_convert, 2, false, true, false));
  EXPECT_FALSE(engine_admitted(reduced, 1, false, true, false));
  EXPECT_TRUE(engine_admitted(nondeterministic, 1, true, true, false));
  EXPECT_FALSE(engine_admitted(nondeterministic, 1, true, true, true));
  EXPECT_TRUE(engine_admitted(winograd, 1, true, false, true));
}

}  // namespace
}  // namespace ember::cuda::conv
