// Host logic of the CUDA FFTs (cuda/fft/CufftPlan.h, cuda/fft/CufftApi.h):
// the batch-first permutation and the strides of the result, cuFFT's
// advanced layout of strided batches checked element by element against the
// tensors' strides, the plan key and the bounded plan cache, the C2C passes,
// the normalization, the cuFFT symbol table and the files tried for the
// library (and, where EMBER_CUFFT_LIBRARY names it, the real library's symbols).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ember/cuda/fft/CufftApi.h"
#include "ember/cuda/fft/CufftPlan.h"

namespace ember::cuda::fft {
namespace {

using V = std::vector<int64_t>;

TEST(CudaFftPlan, BatchDimsFirstByStride) {
  // (2, 3, 4) contiguous along dim 1: batch dims 0 (stride 12) then 2 (stride 1).
  EXPECT_EQ(batch_first_permutation({12, 4, 1}, {1}), (V{0, 2, 1}));
  // Transposed batch dims are read outer-first by stride; ties keep their order.
  EXPECT_EQ(batch_first_permutation({1, 5, 20}, {0}), (V{2, 1, 0}));
  EXPECT_EQ(batch_first_permutation({4, 4, 1}, {2}), (V{0, 1, 2}));
  // Signal dims keep the order given.
  EXPECT_EQ(batch_first_permutation({12, 4, 1}, {2, 0}), (V{1, 2, 0}));
}

TEST(CudaFftPlan, ResultStridesNestTheBatchDims) {
  // fft of a (2, 3, 4) tensor along dim 1: the output is [8, 3] contiguous.
  EXPECT_EQ(unbatched_strides({2, 3, 4}, {0, 2, 1}, {3, 1}, 1), (V{12, 1, 3}));
  // rfft along the last dim of (5, 8): [5, 5] contiguous.
  EXPECT_EQ(unbatched_strides({5, 5}, {0, 1}, {5, 1}, 1), (V{5, 1}));
  // Two signal dims, no batch dim.
  EXPECT_EQ(unbatched_strides({6, 7}, {0, 1}, {42, 7, 1}, 2), (V{7, 1}));
  // A full-length R2C output: the batch stride is the full length.
  EXPECT_EQ(unbatched_strides({3, 10}, {0, 1}, {10, 1}, 1), (V{10, 1}));
}

TEST(CudaFftPlan, PassesTakeTheInnermostThreeDims) {
  V remaining{0, 1, 2, 3, 4};
  const V strides{120, 60, 20, 5, 1};
  EXPECT_EQ(take_pass_dims(remaining, strides), (V{2, 3, 4}));
  EXPECT_EQ(remaining, (V{0, 1}));
  EXPECT_EQ(take_pass_dims(remaining, strides), (V{0, 1}));
  EXPECT_TRUE(remaining.empty());
  // Sorted by the strides of the tensor each pass reads.
  V dims{2, 0, 1};
  EXPECT_EQ(take_pass_dims(dims, {1, 12, 3}), (V{1, 2, 0}));
}

// cuFFT's address of element (b, x) on a side described by `l` (Note [cuFFT layouts]).
int64_t cufft_address(const Layout& l, int64_t b, const V& x) {
  int64_t nested = x[0];
  for (size_t j = 1; j < x.size(); ++j) nested = nested * l.embed[j] + x[j];
  return b * l.dist + l.stride * nested;
}

// Every element of a side of `sizes` ([batch, n...]) with `strides` is where cuFFT looks for it.
void expect_layout_addresses(const V& strides, const V& sizes, bool onesided) {
  const Layout l = strided_layout(strides, sizes, onesided);
  SCOPED_TRACE(::testing::PrintToString(strides) + " " + ::testing::PrintToString(sizes) +
               (onesided ? " onesided" : ""));
  const size_t rank = sizes.size() - 1;
  ASSERT_EQ(l.embed.size(), rank);
  V extent(sizes.begin() + 1, sizes.end());
  if (onesided) extent.back() = extent.back() / 2 + 1;
  if (l.must_clone) {
    // The contiguous layout of a clone.
    const Layout c = contiguous_layout(sizes, onesided);
    EXPECT_EQ(l.embed, c.embed);
    EXPECT_EQ(l.dist, c.dist);
    EXPECT_EQ(l.stride, 1);
    return;
  }
  int64_t numel = 1;
  for (int64_t e : extent) numel *= e;
  for (int64_t b = 0; b < sizes[0]; ++b) {
    V x(rank, 0);
    for (int64_t i = 0; i < numel; ++i) {
      int64_t rest = i;
      for (size_t j = rank; j-- > 0;) {
        x[j] = rest % extent[j];
        rest /= extent[j];
      }
      int64_t want = sizes[0] == 1 ? 0 : b * strides[0];
      for (size_t j = 0; j < rank; ++j) want += x[j] * strides[j + 1];
      ASSERT_EQ(cufft_address(l, b, x), want) << "b=" << b << " x=" << ::testing::PrintToString(x);
      if (l.simple) {
        ASSERT_EQ(cufft_address(l, b, x), b * numel + i);
      }
    }
  }
}

TEST(CudaFftPlan, StridedLayoutsAddressEveryElement) {
  expect_layout_addresses({8, 1}, {3, 8}, false);  // contiguous 1-D
  expect_layout_addresses({5, 1}, {3, 8}, true);  // one-sided output
  expect_layout_addresses({10, 1}, {3, 18}, true);  // one-sided in a full-length buffer
  expect_layout_addresses({1, 4}, {4, 6}, false);  // transposed: stride 4, distance 1
  expect_layout_addresses({60, 12, 2}, {2, 5, 6}, false);  // padded rows, stride 2
  expect_layout_addresses({105, 35, 7, 1}, {2, 3, 5, 7}, false);
  expect_layout_addresses({0, 1}, {1, 9}, false);  // one signal: the distance is free
  expect_layout_addresses({24, 4, 3}, {2, 1, 3}, false);  // a size-1 dim whose stride does not divide
  expect_layout_addresses({90, 30, 7, 1}, {3, 3, 1, 7}, false);
}

TEST(CudaFftPlan, LayoutsThatCannotBeDescribedAreCloned) {
  EXPECT_TRUE(strided_layout({0, 1}, {4, 8}, false).must_clone);  // expanded batch
  EXPECT_TRUE(strided_layout({8, 0}, {4, 8}, false).must_clone);  // expanded signal
  EXPECT_TRUE(strided_layout({30, 3, 2}, {2, 5, 3}, false).must_clone);  // 3 is no multiple of 2
  const Layout c = strided_layout({30, 3, 2}, {2, 5, 3}, false);
  EXPECT_EQ(c.embed, (std::vector<long long>{5, 3}));
  EXPECT_EQ(c.dist, 15);
  EXPECT_FALSE(strided_layout({15, 3, 1}, {2, 5, 3}, false).must_clone);
}

TEST(CudaFftPlan, ContiguousLayoutsAreSimple) {
  EXPECT_TRUE(strided_layout({8, 1}, {3, 8}, false).simple);
  EXPECT_TRUE(strided_layout({5, 1}, {3, 8}, true).simple);
  EXPECT_FALSE(strided_layout({8, 1}, {3, 8}, true).simple);  // padded to the full length
  EXPECT_TRUE(strided_layout({20, 5, 1}, {2, 4, 8}, true).simple);
  EXPECT_FALSE(strided_layout({24, 6, 1}, {2, 4, 5}, false).simple);  // padded rows
  EXPECT_FALSE(strided_layout({16, 2}, {3, 8}, false).simple);
}

TEST(CudaFftPlan, RandomStridedLayouts) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t rank = 1 + rng() % 3;
    V sizes{1 + static_cast<int64_t>(rng() % 3)};
    for (size_t i = 0; i < rank; ++i) sizes.push_back(1 + static_cast<int64_t>(rng() % 6));
    const bool onesided = rng() % 2 == 0;
    // Nested strides with random padding, then sometimes a random perturbation.
    V strides(rank + 1);
    int64_t inner = 1 + static_cast<int64_t>(rng() % 3);
    for (size_t j = rank + 1; j-- > 0;) {
      strides[j] = inner;
      const int64_t extent = j == rank && onesided ? sizes[j] / 2 + 1 : sizes[j];
      inner *= extent + static_cast<int64_t>(rng() % 2);
    }
    if (rng() % 4 == 0) strides[rng() % (rank + 1)] += 1 + static_cast<int64_t>(rng() % 3);
    expect_layout_addresses(strides, sizes, onesided);
  }
}

TEST(CudaFftPlan, PlanLayoutSidesFollowTheKind) {
  // R2C of 8 points: real input of 8, one-sided output of 5, both contiguous.
  const PlanKey r2c(0, FftKind::R2C, false, {3, 8}, {8, 1}, {5, 1});
  const PlanLayout p = plan_layout(r2c);
  EXPECT_TRUE(p.simple);
  EXPECT_EQ(p.in.dist, 8);
  EXPECT_EQ(p.out.dist, 5);
  EXPECT_FALSE(p.clone_input);
  // C2R: the one-sided side is the input.
  const PlanLayout q = plan_layout(PlanKey(0, FftKind::C2R, true, {3, 8}, {5, 1}, {8, 1}));
  EXPECT_TRUE(q.simple);
  EXPECT_EQ(q.in.dist, 5);
  EXPECT_EQ(q.out.dist, 8);
  // An expanded input is cloned.
  EXPECT_TRUE(plan_layout(PlanKey(0, FftKind::C2C, false, {4, 8}, {0, 1}, {8, 1})).clone_input);
}

TEST(CudaFftPlan, KeysTellConfigurationsApart) {
  const PlanKey a(0, FftKind::C2C, false, {4, 8}, {8, 1}, {8, 1});
  EXPECT_EQ(a, PlanKey(0, FftKind::C2C, false, {4, 8}, {8, 1}, {8, 1}));
  EXPECT_EQ(PlanKeyHash()(a), PlanKeyHash()(PlanKey(0, FftKind::C2C, false, {4, 8}, {8, 1}, {8, 1})));
  EXPECT_FALSE(a == PlanKey(1, FftKind::C2C, false, {4, 8}, {8, 1}, {8, 1}));  // device
  EXPECT_FALSE(a == PlanKey(0, FftKind::C2C, true, {4, 8}, {8, 1}, {8, 1}));  // precision
  EXPECT_FALSE(a == PlanKey(0, FftKind::R2C, false, {4, 8}, {8, 1}, {8, 1}));  // kind
  EXPECT_FALSE(a == PlanKey(0, FftKind::C2C, false, {2, 8}, {8, 1}, {8, 1}));  // batch
  EXPECT_FALSE(a == PlanKey(0, FftKind::C2C, false, {4, 8}, {16, 2}, {8, 1}));  // input strides
  EXPECT_FALSE(a == PlanKey(0, FftKind::C2C, false, {4, 8, 1}, {8, 1, 1}, {8, 1, 1}));  // rank
  EXPECT_EQ(a.sizes(), (V{4, 8}));
  EXPECT_EQ(a.in_strides(), (V{8, 1}));
  EXPECT_EQ(a.rank(), 1u);
  EXPECT_EQ(a.device(), 0);
}

struct FakePlan {
  int id;
  explicit FakePlan(int i) : id(i) {}
};

PlanKey key_of(int64_t n) { return PlanKey(0, FftKind::C2C, false, {1, n}, {n, 1}, {n, 1}); }

TEST(CudaFftPlan, CacheIsLeastRecentlyUsedAndBounded) {
  PlanCache<FakePlan> cache(2);
  int made = 0;
  auto make = [&] { return std::make_shared<FakePlan>(++made); };
  auto a = cache.lookup(key_of(1), make);
  auto b = cache.lookup(key_of(2), make);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(cache.lookup(key_of(1), make), a);  // a is now the most recent
  EXPECT_EQ(made, 2);
  cache.lookup(key_of(3), make);  // evicts b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.contains(key_of(1)));
  EXPECT_FALSE(cache.contains(key_of(2)));
  EXPECT_EQ(b->id, 2);  // an evicted plan still held stays valid
  cache.lookup(key_of(2), make);
  EXPECT_EQ(made, 4);
  cache.set_max_size(1);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.contains(key_of(2)));
  cache.set_max_size(0);  // no caching
  EXPECT_EQ(cache.size(), 0u);
  cache.lookup(key_of(5), make);
  EXPECT_EQ(cache.size(), 0u);
  cache.set_max_size(kDefaultPlanCacheSize);
  cache.lookup(key_of(5), make);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(PlanCache<FakePlan>().max_size(), 4096u);
}

TEST(CudaFftPlan, NormalizationScales) {
  EXPECT_EQ(normalization_scale(0, {3, 8}, {1}), 1.0);
  EXPECT_DOUBLE_EQ(normalization_scale(2, {3, 8}, {1}), 1.0 / 8);
  EXPECT_DOUBLE_EQ(normalization_scale(1, {3, 8}, {1}), 1.0 / std::sqrt(8.0));
  EXPECT_DOUBLE_EQ(normalization_scale(2, {3, 8, 5}, {0, 2}), 1.0 / 15);
}

TEST(CudaFftApi, TransformTypesAndNames) {
  EXPECT_EQ(kind_of(true, true), FftKind::C2C);
  EXPECT_EQ(kind_of(false, true), FftKind::R2C);
  EXPECT_EQ(kind_of(true, false), FftKind::C2R);
  EXPECT_EQ(cufft::transform_type(true, true, false), 0x29);
  EXPECT_EQ(cufft::transform_type(false, true, false), 0x2a);
  EXPECT_EQ(cufft::transform_type(true, false, false), 0x2c);
  EXPECT_EQ(cufft::transform_type(true, true, true), 0x69);
  EXPECT_EQ(cufft::transform_type(false, true, true), 0x6a);
  EXPECT_EQ(cufft::transform_type(true, false, true), 0x6c);
  EXPECT_STREQ(cufft::result_name(cufft::kInvalidSize), "CUFFT_INVALID_SIZE");
  EXPECT_STREQ(cufft::result_name(0x4), "CUFFT_INVALID_VALUE");
  EXPECT_STREQ(cufft::result_name(99), "<unknown>");
}

TEST(CudaFftApi, SymbolTable) {
  const auto names = cufft::symbol_names();
  ASSERT_EQ(names.size(), 13u);
  for (const auto& n : names) EXPECT_EQ(n.rfind("cufft", 0), 0u) << n;
  EXPECT_EQ(names[0], "cufftCreate");
  EXPECT_EQ(names[3], "cufftMakePlanMany64");
  // Every member is resolved from a library that has the symbols: here none
  // has, so all are reported missing.
  void* self = dlopen(nullptr, RTLD_NOW);
  cufft::Api api;
  const std::string missing = cufft::resolve(self, api);
  for (const auto& n : names) EXPECT_NE(missing.find(n), std::string::npos) << n;
  EXPECT_EQ(api.create, nullptr);
}

TEST(CudaFftApi, LibraryCandidates) {
  const auto c =
      cufft::library_candidates("/opt/x/libcufft.so.12", "/sp/nvidia/cu13/lib/libcublas.so.13", "/sp/ember/lib");
  EXPECT_EQ(c, (std::vector<std::string>{"/opt/x/libcufft.so.12", "/sp/nvidia/cu13/lib/libcufft.so.12",
                                         "/sp/ember/lib/../../nvidia/cu13/lib/libcufft.so.12", "libcufft.so.12"}));
  // No variable, no cuBLAS path: the wheel folder and the soname.
  EXPECT_EQ(cufft::library_candidates("", "", "/e"),
            (std::vector<std::string>{"/e/../../nvidia/cu13/lib/libcufft.so.12", "libcufft.so.12"}));
  EXPECT_EQ(cufft::library_candidates(nullptr, "libcublas.so.13", ""), (std::vector<std::string>{"libcufft.so.12"}));
  EXPECT_EQ(cufft::parent_dir("/a/b.so"), "/a");
  EXPECT_EQ(cufft::parent_dir("/b.so"), "/");
}

TEST(CudaFftApi, RealLibraryHasEverySymbol) {
  const char* path = std::getenv("EMBER_CUFFT_LIBRARY");
  if (path == nullptr || *path == '\0') GTEST_SKIP() << "EMBER_CUFFT_LIBRARY names no cuFFT library";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  cufft::Api api;
  EXPECT_EQ(cufft::resolve(lib, api), "");
  int version = 0;
  ASSERT_EQ(api.get_version(&version), cufft::kSuccess);
  EXPECT_GE(version, 12000);  // cuFFT 12, CUDA 13's
  EXPECT_LT(version, 13000);
}

}  // namespace
}  // namespace ember::cuda::fft
