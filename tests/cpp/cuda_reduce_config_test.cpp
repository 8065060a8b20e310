// The host-side arithmetic of the CUDA reduction engine (cuda/kernels/ReduceConfig.h):
// index maps and the launch's thread -> (output, reduced elements) assignment,
// checked by enumerating every thread of small and large launches.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "ember/cpu/ReduceStubs.h"
#include "ember/cuda/kernels/ReduceConfig.h"

namespace ember::cuda {
namespace {

TEST(CudaReduceConfig, IndexMapMatchesNestedLoops) {
  const int64_t sizes[3] = {3, 4, 5};
  const int64_t strides[3] = {100, -7, 2};
  IndexMap m;
  ASSERT_TRUE(make_index_map(m, sizes, strides, 3));
  int64_t linear = 0;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(m.offset(linear++), i * 100 - j * 7 + k * 2);
    }
  }
  IndexMap one;
  const int64_t s1[1] = {9}, st1[1] = {3};
  ASSERT_TRUE(make_index_map(one, s1, st1, 1));
  EXPECT_EQ(one.offset(4), 12);
  IndexMap none;
  ASSERT_TRUE(make_index_map(none, nullptr, nullptr, 0));
  EXPECT_EQ(none.offset(0), 0);
  std::vector<int64_t> many(kMaxReduceDims + 1, 2);
  IndexMap too_many;
  EXPECT_FALSE(make_index_map(too_many, many.data(), many.data(), kMaxReduceDims + 1));
}

// Enumerates the launch as the kernel runs it and checks that every
// (output, reduced index) pair is visited exactly once.
void check_cover(int64_t outputs, int64_t reduce, bool rows, int vec, int64_t target) {
  SCOPED_TRACE(testing::Message() << "outputs=" << outputs << " reduce=" << reduce << " rows=" << rows
                                  << " vec=" << vec);
  const ReduceLaunch l = plan_reduce_launch(outputs, reduce, rows, vec, target);
  const int threads = l.block_x * l.block_y;
  EXPECT_GE(threads, 32);
  EXPECT_LE(threads, kReduceMaxThreads);
  EXPECT_EQ(l.block_y & (l.block_y - 1), 0) << "block_y must be a power of two";
  if (l.reduce_on_x && l.block_x > 32) EXPECT_EQ(l.block_x % 32, 0);
  if (l.reduce_on_x && l.block_x < 32) EXPECT_EQ(32 % l.block_x, 0);
  EXPECT_LE(l.grid_y, kReduceMaxSlices);
  EXPECT_EQ(l.split_len % l.step(), 0);
  EXPECT_GE(l.grid_x * l.outputs_per_block(), outputs);
  EXPECT_GE(l.grid_y * l.split_len, reduce);
  EXPECT_LT((l.grid_y - 1) * l.split_len, std::max<int64_t>(reduce, 1));
  if (!l.reduce_on_x) EXPECT_EQ(l.vec, 1);
  std::vector<int> seen(static_cast<size_t>(outputs * reduce), 0);
  for (int64_t bx = 0; bx < l.grid_x; ++bx) {
    for (int64_t by = 0; by < l.grid_y; ++by) {
      for (int ty = 0; ty < l.block_y; ++ty) {
        for (int tx = 0; tx < l.block_x; ++tx) {
          const ThreadWork w = thread_work(l, bx, by, tx, ty, reduce);
          if (w.output >= outputs) continue;
          const int64_t nvec = w.num_vectors(l.vec);
          for (int64_t i = w.tid; i < nvec; i += w.threads) {
            for (int j = 0; j < l.vec; ++j) ++seen[w.output * reduce + w.begin + i * l.vec + j];
          }
          for (int64_t r = w.tail_begin(l.vec) + w.tid; r < w.end; r += w.threads) ++seen[w.output * reduce + r];
        }
      }
    }
  }
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "pair " << i;
}

TEST(CudaReduceConfig, EveryPairOnceRows) {
  for (int64_t outputs : {1, 3, 32, 257}) {
    for (int64_t reduce : {1, 2, 31, 100, 4097}) {
      for (int vec : {1, 4}) check_cover(outputs, reduce, true, vec, 8);
    }
  }
}

TEST(CudaReduceConfig, EveryPairOnceColumns) {
  for (int64_t outputs : {1, 31, 32, 100, 300}) {
    for (int64_t reduce : {1, 7, 64, 3000}) check_cover(outputs, reduce, false, 1, 8);
  }
}

TEST(CudaReduceConfig, EveryPairOnceWithSlices) {
  // Few outputs and long reductions: the reduced range is split into slices.
  EXPECT_GT(plan_reduce_launch(2, 200000, true, 4, 8).grid_y, 1);
  check_cover(2, 200000, true, 4, 8);
  check_cover(3, 100003, true, 1, 8);
  EXPECT_GT(plan_reduce_launch(40, 100000, false, 1, 8).grid_y, 1);
  check_cover(40, 100000, false, 1, 8);
}

TEST(CudaReduceConfig, EmptyReductionStillWritesEachOutput) {
  // reduce_numel 0: one slice of nothing, so every output is written once (its identity).
  const ReduceLaunch l = plan_reduce_launch(10, 0, true, 1, 8);
  EXPECT_EQ(l.grid_y, 1);
  const ThreadWork w = thread_work(l, 0, 0, 0, 3, 0);
  EXPECT_EQ(w.begin, 0);
  EXPECT_EQ(w.end, 0);
}

TEST(CudaReduceConfig, LargeReductionsSplitIntoSlices) {
  // One output of 2^28 elements on a device wanting 528 blocks: many slices, each
  // thread still loading at least kReduceMinLoadsPerThread vectors.
  const ReduceLaunch full = plan_reduce_launch(1, int64_t(1) << 28, true, 4, 528);
  EXPECT_TRUE(full.reduce_on_x);
  EXPECT_EQ(full.block_x, kReduceMaxThreads);
  EXPECT_GT(full.grid_y, 100);
  EXPECT_GE(full.split_len / full.step(), kReduceMinLoadsPerThread);
  // Many outputs fill the device without slicing.
  const ReduceLaunch many = plan_reduce_launch(1 << 20, 1024, true, 4, 528);
  EXPECT_EQ(many.grid_y, 1);
  // A small reduction is never split.
  EXPECT_EQ(plan_reduce_launch(1, 1000, true, 4, 528).grid_y, 1);
  // Many short rows (8192 x 4096 floats): 64 threads per row, 16 vector loads
  // each, 8 rows per block, still 1024 blocks.
  const ReduceLaunch short_rows = plan_reduce_launch(8192, 4096, true, 4, 528);
  EXPECT_EQ(short_rows.block_x, 64);
  EXPECT_EQ(short_rows.block_y, 8);
  EXPECT_EQ(short_rows.grid_x, 1024);
  EXPECT_EQ(short_rows.grid_y, 1);
  // ... but not when that would leave the device short of blocks.
  EXPECT_EQ(plan_reduce_launch(600, 4096, true, 4, 528).block_x, 512);
  check_cover(2048, 1024, true, 4, 64);
  EXPECT_EQ(plan_reduce_launch(2048, 1024, true, 4, 64).block_x, 32);
  // Column reductions with many outputs walk the outputs along x.
  const ReduceLaunch cols = plan_reduce_launch(4096, 512, false, 1, 528);
  EXPECT_FALSE(cols.reduce_on_x);
  EXPECT_EQ(cols.block_x, 256);
}

TEST(CudaReduceConfig, PartialsLaunchCoversEveryOutputAndSlice) {
  // Each output is owned by one x thread of one block; the y threads (a power
  // of two, as the tree combine needs) stride through all the slices.
  for (int64_t outputs : {1, 3, 32, 33, 1000}) {
    for (int64_t slices : {2, 3, 100, 528, 1024}) {
      const PartialsLaunch l = plan_partials_launch(outputs, slices);
      EXPECT_LE(l.block_x * l.block_y, kReduceMaxThreads);
      EXPECT_EQ(l.block_y & (l.block_y - 1), 0);
      EXPECT_LE(l.block_y, slices);
      EXPECT_GE(l.grid_x * l.block_x, outputs);
      EXPECT_LT((l.grid_x - 1) * l.block_x, outputs);
    }
  }
  EXPECT_EQ(plan_partials_launch(1, 528).block_x, 1);
  EXPECT_EQ(plan_partials_launch(1, 528).block_y, 512);
}

TEST(CudaReduceConfig, RowLaunchHoldsEachRowOnce) {
  // Thread t of the block holds vectors t, t + threads, ...: vecs * threads
  // covers the row, with less than one vector per thread to spare.
  for (int64_t nvec : {int64_t(1), int64_t(5), int64_t(31), int64_t(32), int64_t(100), int64_t(1024), int64_t(1025),
                       int64_t(4095), int64_t(4096), kRowMaxVecs}) {
    const RowLaunch l = plan_row_launch(nvec);
    ASSERT_GT(l.vecs, 0) << nvec;
    EXPECT_EQ(l.threads % 32, 0);
    EXPECT_LE(l.threads, kRowMaxThreads);
    EXPECT_GE(int64_t(l.vecs) * l.threads, nvec);
    EXPECT_TRUE(l.vecs == 1 || l.vecs == 2 || l.vecs == 4 || l.vecs == 8);
  }
  // 4096 floats: 1024 vectors of 4, 256 threads holding 4 each.
  EXPECT_EQ(plan_row_launch(1024).threads, 256);
  EXPECT_EQ(plan_row_launch(1024).vecs, 4);
  EXPECT_EQ(plan_row_launch(kRowMaxVecs + 1).vecs, 0);
  EXPECT_EQ(plan_row_launch(0).vecs, 0);
}

// A plan whose every (output, reduced index) element offset is compared with
// its vector plan's: element o * n + j at reduced index r lies j past vector
// o's element at r, in vector units times n.
void check_output_vectors(std::vector<int64_t> out_sizes, std::vector<int64_t> out_strides,
                          std::vector<int64_t> red_sizes, std::vector<int64_t> red_strides, int n, bool want) {
  SCOPED_TRACE(testing::Message() << "n=" << n << " out innermost " << out_sizes.back());
  cpu::ReducePlan p;
  p.out_sizes = DimVector(out_sizes);
  p.out_strides = DimVector(out_strides);
  p.red_sizes = DimVector(red_sizes);
  p.red_strides = DimVector(red_strides);
  p.num_outputs = 1;
  for (int64_t s : out_sizes) p.num_outputs *= s;
  p.reduce_numel = 1;
  for (int64_t s : red_sizes) p.reduce_numel *= s;
  alignas(64) static float storage[16];
  p.in = storage;
  cpu::ReducePlan q = p;
  ASSERT_EQ(plan_output_vectors(q, n, sizeof(float)), want);
  if (!want) {
    EXPECT_EQ(q.num_outputs, p.num_outputs);
    return;
  }
  EXPECT_EQ(q.num_outputs * n, p.num_outputs);
  EXPECT_EQ(q.reduce_numel, p.reduce_numel);
  IndexMap po, pr, qo, qr;
  ASSERT_TRUE(make_index_map(po, p.out_sizes.data(), p.out_strides.data(), int(p.out_sizes.size())));
  ASSERT_TRUE(make_index_map(pr, p.red_sizes.data(), p.red_strides.data(), int(p.red_sizes.size())));
  ASSERT_TRUE(make_index_map(qo, q.out_sizes.data(), q.out_strides.data(), int(q.out_sizes.size())));
  ASSERT_TRUE(make_index_map(qr, q.red_sizes.data(), q.red_strides.data(), int(q.red_sizes.size())));
  for (int64_t o = 0; o < p.num_outputs; ++o) {
    for (int64_t r = 0; r < p.reduce_numel; r += 7) {
      ASSERT_EQ(po.offset(o) + pr.offset(r), (qo.offset(o / n) + qr.offset(r)) * n + o % n) << o << " " << r;
    }
  }
}

TEST(CudaReduceConfig, ColumnPlansInVectorsOfOutputs) {
  // sum(dim=0) of 64 x 256: 256 outputs, reduced stride 256.
  check_output_vectors({256}, {1}, {64}, {256}, 4, true);
  // sum over dims 0 and 2 of [3, 5, 8, 128] viewed as kept (5, 128), reduced (3, 8).
  check_output_vectors({5, 128}, {1024, 1}, {3, 8}, {5120, 128}, 4, true);
  check_output_vectors({256}, {1}, {64}, {-256}, 2, true);
  // Not a multiple of n, too few outputs, a row reduction, or an odd stride: unchanged.
  check_output_vectors({258}, {1}, {64}, {258}, 4, false);
  check_output_vectors({64}, {1}, {64}, {64}, 4, false);
  check_output_vectors({256}, {64}, {64}, {1}, 4, false);
  check_output_vectors({2, 256}, {257, 1}, {64}, {514}, 4, false);
  check_output_vectors({256}, {1}, {64}, {258}, 4, false);
}

}  // namespace
}  // namespace ember::cuda
