// The CUDA random numbers' host-side parts: Philox4x32-10 and its stream
// handling, the launch arithmetic of the samplers, the CUDA generator's
// offset and state. Runs without a GPU.
#include <gtest/gtest.h>

#include <cstring>

#include "ember/core/Generator.h"
#include "ember/cpu/RandomStubs.h"
#include "ember/cuda/Philox.h"
#include "ember/cuda/random/RandomLaunch.h"

using namespace ember;
namespace px = ember::cuda::philox;

namespace {
void expect_u4(px::U4 got, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
  EXPECT_EQ(got.x, x);
  EXPECT_EQ(got.y, y);
  EXPECT_EQ(got.z, z);
  EXPECT_EQ(got.w, w);
}
}  // namespace

TEST(Philox, Random123KnownAnswers) {
  // philox4x32 with 10 rounds: the known-answer vectors of Random123.
  expect_u4(px::philox10(px::U4{0, 0, 0, 0}, 0, 0), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u);
  expect_u4(px::philox10(px::U4{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, 0xffffffffu, 0xffffffffu),
            0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
  expect_u4(px::philox10(px::U4{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0xa4093822u, 0x299f31d0u),
            0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

TEST(Philox, InitPlacesOffsetLowAndSubsequenceHigh) {
  const uint64_t seed = 0x0123456789abcdefULL;
  // Offset 8 words = 2 blocks; subsequence 5 in the high half of the counter.
  px::State s = px::init(seed, 5, 8);
  EXPECT_EQ(s.key0, 0x89abcdefu);
  EXPECT_EQ(s.key1, 0x01234567u);
  expect_u4(s.ctr, 2, 0, 5, 0);
  EXPECT_EQ(s.used, 0u);
  const px::U4 want = px::philox10(px::U4{2, 0, 5, 0}, 0x89abcdefu, 0x01234567u);
  const px::U4 got = s.next4();
  expect_u4(got, want.x, want.y, want.z, want.w);
  expect_u4(s.ctr, 3, 0, 5, 0);
  // Subsequences past 2^32 fill the top word; 2^36 words are 2^34 blocks.
  px::State t = px::init(seed, (uint64_t(3) << 32) | 7, uint64_t(1) << 36);
  expect_u4(t.ctr, 0, 4, 7, 3);
}

TEST(Philox, CounterCarries) {
  px::State s = px::init(1, 0, 0);
  s.ctr = px::U4{0xffffffffu, 0xffffffffu, 0xffffffffu, 0};
  s.step();
  expect_u4(s.ctr, 0, 0, 0, 1);
  s.ctr = px::U4{0xfffffffeu, 0, 0, 0};
  s.advance(3);
  expect_u4(s.ctr, 1, 1, 0, 0);
  s.ctr = px::U4{0, 0xffffffffu, 0, 0};
  s.advance(uint64_t(1) << 32);
  expect_u4(s.ctr, 0, 0, 1, 0);
}

TEST(Philox, WordsAndDrawsAgreeAtEveryAlignment) {
  // The stream from offset k is the stream from 0 without its first k words,
  // one word or four at a time.
  px::State ref = px::init(42, 3, 0);
  uint32_t words[40];
  for (uint32_t& w : words) w = ref.next();
  for (uint64_t k = 0; k < 8; ++k) {
    px::State a = px::init(42, 3, k);
    for (int i = 0; i < 12; ++i) EXPECT_EQ(a.next(), words[k + i]) << "offset " << k;
    px::State b = px::init(42, 3, k);
    for (int i = 0; i < 3; ++i) {
      const px::U4 r = b.next4();
      expect_u4(r, words[k + 4 * i], words[k + 4 * i + 1], words[k + 4 * i + 2], words[k + 4 * i + 3]);
    }
  }
}

TEST(Philox, UniformConversions) {
  // (0, 1]: the smallest value is half a step, the largest word rounds to 1.
  EXPECT_EQ(px::to_uniform(0), 1.1641532e-10f);
  EXPECT_EQ(px::to_uniform(0xffffffffu), 1.0f);
  EXPECT_EQ(px::to_uniform(0x80000000u), 0.5f);
  EXPECT_EQ(px::to_uniform_double(0, 0), 0x1p-54);
  // 53 bits: the low word XOR the high word shifted by 21.
  EXPECT_EQ(px::to_uniform_double(1, 0), 0x1p-53 + 0x1p-54);
  EXPECT_EQ(px::to_uniform_double(0, 1), 0x1p-32 + 0x1p-54);
  EXPECT_EQ(px::to_uniform_double(0, 0xffffffffu), 1.0 - 0x1p-32 + 0x1p-54);
  // Bits 21..31 of the two words cancel.
  EXPECT_EQ(px::to_uniform_double(0xffffffffu, 0xffffffffu), 1.0 - 0x1p-21 + 0x1p-32 - 0x1p-53 + 0x1p-54);
  px::State s = px::init(7, 0, 0);
  px::State t = s;
  const px::F4 f = px::uniform4(s);
  const px::U4 w = t.next4();
  EXPECT_EQ(f.x, px::to_uniform(w.x));
  EXPECT_EQ(f.w, px::to_uniform(w.w));
}

TEST(Philox, BoxMullerOnTheHost) {
  // The largest word gives u = 1, radius 0; word 0 for the angle gives a
  // tiny angle: sin ~ angle, cos ~ 1.
  float a, b;
  px::box_muller(0xffffffffu, 0, &a, &b);
  EXPECT_EQ(a, 0.0f);
  EXPECT_EQ(b, 0.0f);
  px::box_muller(0x80000000u, 0, &a, &b);  // u = 1/2: radius sqrt(2 ln 2)
  EXPECT_NEAR(b, 1.1774100f, 1e-6f);
  EXPECT_NEAR(a, 1.1774100f * 0.5f * 1.4629181e-9f, 1e-12f);
  double c, d;
  // 53-bit u = 1/2 (high word 2^31 lands on bit 52), angle pi * 2^-53.
  px::box_muller_double(0, 0x80000000u, 0, 0, &c, &d);
  EXPECT_NEAR(d, 1.1774100225154747, 1e-12);
  EXPECT_NEAR(c, 1.1774100225154747 * 3.141592653589793 * 0x1p-53, 1e-25);
}

TEST(RandomLaunch, GridAndOffsetIncrement) {
  // An H100: 132 multiprocessors, 2048 threads each: at most 1056 blocks.
  auto l = cuda::random_launch(1, 4, 132, 2048);
  EXPECT_EQ(l.grid, 1u);
  EXPECT_EQ(l.block, 256u);
  EXPECT_EQ(l.offset_increment, 4u);
  l = cuda::random_launch(1000, 4, 132, 2048);
  EXPECT_EQ(l.grid, 4u);
  EXPECT_EQ(l.offset_increment, 4u);
  l = cuda::random_launch(1000001, 4, 132, 2048);
  EXPECT_EQ(l.grid, 1056u);
  EXPECT_EQ(l.offset_increment, 4u);  // 1081344 numbers per step
  l = cuda::random_launch(1000001, 2, 132, 2048);
  EXPECT_EQ(l.offset_increment, 8u);  // 540672 per step: two steps
  l = cuda::random_launch(int64_t(1) << 24, 4, 132, 2048);
  EXPECT_EQ(l.offset_increment, 64u);  // 16 steps
  l = cuda::random_launch(257, 4, 80, 1024);  // 4 blocks per SM
  EXPECT_EQ(l.grid, 2u);
  EXPECT_EQ(cuda::round_offset_increment(10), 12u);
  EXPECT_EQ(cuda::round_offset_increment(4), 4u);
  EXPECT_EQ(cuda::round_offset_increment(0), 0u);
}

TEST(RandomLaunch, ElementSources) {
  const auto l = cuda::random_launch(int64_t(1) << 24, 4, 132, 2048);  // 270336 threads
  auto s = cuda::random_source(0, l, 4);
  EXPECT_EQ(s.thread, 0u);
  EXPECT_EQ(s.step, 0u);
  EXPECT_EQ(s.lane, 0u);
  s = cuda::random_source(270336 + 5, l, 4);
  EXPECT_EQ(s.thread, 5u);
  EXPECT_EQ(s.step, 0u);
  EXPECT_EQ(s.lane, 1u);
  s = cuda::random_source(4 * 270336 + 3 * 270336 + 9, l, 4);
  EXPECT_EQ(s.thread, 9u);
  EXPECT_EQ(s.step, 1u);
  EXPECT_EQ(s.lane, 3u);
}

TEST(RandomLaunch, BernoulliTensorGrid) {
  EXPECT_EQ(cuda::bernoulli_tensor_grid(1, 2147483647), 1u);
  EXPECT_EQ(cuda::bernoulli_tensor_grid(2048, 2147483647), 1u);
  EXPECT_EQ(cuda::bernoulli_tensor_grid(2049, 2147483647), 2u);
  EXPECT_EQ(cuda::bernoulli_tensor_grid(1 << 20, 100), 100u);
}

TEST(RandomLaunch, OutputOrder) {
  // A transposed contiguous 3x4 float tensor runs in memory order, one dim.
  auto o = cuda::output_order({4, 3}, {1, 4}, 4);
  EXPECT_EQ(o.sizes, (std::vector<int64_t>{12}));
  EXPECT_EQ(o.strides, (std::vector<int64_t>{4}));
  // Every other column of 3x4: rows coalesce with the even columns.
  o = cuda::output_order({3, 2}, {4, 2}, 4);
  EXPECT_EQ(o.sizes, (std::vector<int64_t>{6}));
  EXPECT_EQ(o.strides, (std::vector<int64_t>{8}));
  // A column slice 4x2 out of 4x3: two dims, inner first.
  o = cuda::output_order({4, 2}, {3, 1}, 8);
  EXPECT_EQ(o.sizes, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(o.strides, (std::vector<int64_t>{8, 24}));
  EXPECT_EQ(cuda::output_offset(o, 3), 8 + 24);
  // Size-1 dims drop out; a 1-element tensor is one dim of 1.
  o = cuda::output_order({1, 5, 1}, {5, 1, 1}, 2);
  EXPECT_EQ(o.sizes, (std::vector<int64_t>{5}));
  o = cuda::output_order({}, {}, 4);
  EXPECT_EQ(o.sizes, (std::vector<int64_t>{1}));
  EXPECT_EQ(o.strides, (std::vector<int64_t>{4}));
  // Equal strides: the smaller size goes inside (here 2 before 4).
  o = cuda::output_order({2, 4}, {64, 64}, 1);
  EXPECT_EQ(o.sizes, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(o.strides, (std::vector<int64_t>{64, 64}));
}

TEST(CudaGenerator, OffsetAdvancesInBlocksOfFour) {
  GeneratorImpl g(67280421310721ULL, Device(DeviceType::CUDA, 0));
  EXPECT_EQ(g.philox_offset_per_thread(), 0u);
  auto s = g.philox_cuda_state(4);
  EXPECT_EQ(s.seed, 67280421310721ULL);
  EXPECT_EQ(s.offset, 0u);
  s = g.philox_cuda_state(10);
  EXPECT_EQ(s.offset, 4u);
  EXPECT_EQ(g.philox_offset_per_thread(), 16u);
  g.set_current_seed(5);
  EXPECT_EQ(g.philox_offset_per_thread(), 0u);
  EXPECT_EQ(g.philox_cuda_state(1).seed, 5u);
  EXPECT_THROW(g.set_philox_offset_per_thread(6), Error);
  g.set_philox_offset_per_thread(8);
  EXPECT_EQ(g.philox_offset_per_thread(), 8u);
}

TEST(CudaGenerator, StateLayout) {
  GeneratorImpl g(0x1122334455667788ULL, Device(DeviceType::CUDA, 0));
  g.philox_cuda_state(20);
  std::vector<uint8_t> st = g.get_state();
  ASSERT_EQ(st.size(), GeneratorImpl::kCudaStateSize);
  uint64_t seed;
  int64_t offset;
  std::memcpy(&seed, st.data(), 8);
  std::memcpy(&offset, st.data() + 8, 8);
  EXPECT_EQ(seed, 0x1122334455667788ULL);
  EXPECT_EQ(offset, 20);

  GeneratorImpl h(1, Device(DeviceType::CUDA, 0));
  h.set_state(st.data(), st.size());
  EXPECT_EQ(h.current_seed(), 0x1122334455667788ULL);
  EXPECT_EQ(h.philox_offset_per_thread(), 20u);
  // Without the offset: offset 0.
  h.set_state(st.data(), st.size() - 8);
  EXPECT_EQ(h.philox_offset_per_thread(), 0u);
  EXPECT_THROW(h.set_state(st.data(), 12), Error);
  int64_t bad = 6;
  std::memcpy(st.data() + 8, &bad, 8);
  EXPECT_THROW(h.set_state(st.data(), st.size()), Error);
  EXPECT_EQ(h.philox_offset_per_thread(), 0u);  // unchanged by the failed call
}

TEST(CudaGenerator, DefaultGeneratorsPerDevice) {
  Generator& a = default_cuda_generator(0);
  Generator& b = default_cuda_generator(1);
  EXPECT_EQ(&a, &default_cuda_generator(0));
  EXPECT_NE(a.get(), b.get());
  EXPECT_TRUE(a->device.is_cuda());
  EXPECT_EQ(b->device.index, 1);
  EXPECT_THROW(default_cuda_generator(64), Error);
}
