// The CPU generator and the samplers from C++.
#include <gtest/gtest.h>

#include <cstring>

#include "ember/core/Generator.h"
#include "ember/ops/Ops.h"

using namespace ember;

TEST(MT19937, ReferenceOutputs) {
  // The published test values of the 32-bit Mersenne Twister (seed 5489).
  MT19937 mt(5489);
  EXPECT_EQ(mt(), 3499211612u);
  for (int i = 1; i < 9999; ++i) mt();
  EXPECT_EQ(mt(), 4123659995u);
}

TEST(MT19937, SeedUsesLow32Bits) {
  MT19937 a(7), b((uint64_t(1) << 40) + 7);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(a(), b());
}

TEST(Generator, StateRoundTripIncludingCachedNormal) {
  Generator g(make_intrusive<GeneratorImpl>(42));
  Tensor warm = randn({3}, g);  // odd count: a cached sample stays behind
  std::vector<uint8_t> state = g->get_state();
  ASSERT_EQ(state.size(), GeneratorImpl::kStateSize);
  Tensor a = randn({5}, g);
  g->set_state(state.data(), state.size());
  Tensor b = randn({5}, g);
  EXPECT_EQ(to_vector(a), to_vector(b));
  uint64_t seed;
  std::memcpy(&seed, state.data(), 8);
  EXPECT_EQ(seed, 42u);
}

TEST(Generator, RejectsBadState) {
  Generator g(make_intrusive<GeneratorImpl>(1));
  std::vector<uint8_t> state = g->get_state();
  EXPECT_THROW(g->set_state(state.data(), 100), Error);
  std::vector<uint8_t> zeros(GeneratorImpl::kStateSize, 0);
  EXPECT_THROW(g->set_state(zeros.data(), zeros.size()), Error);
}

TEST(Random, KnownValues) {
  Generator g(make_intrusive<GeneratorImpl>(0));
  std::vector<double> r = to_vector(rand({5}, g));
  // PyTorch's torch.manual_seed(0); torch.rand(5), as float32 bits.
  EXPECT_EQ(static_cast<float>(r[0]), 0.49625658988952637f);
  EXPECT_EQ(static_cast<float>(r[1]), 0.76822179555892944f);
  Generator h(make_intrusive<GeneratorImpl>(0));
  std::vector<double> n = to_vector(randn({5}, h));
  EXPECT_NEAR(n[0], 1.5410, 1e-4);
  EXPECT_NEAR(n[4], -1.0845, 1e-4);
}

TEST(Random, SameGeneratorSameStream) {
  Generator a(make_intrusive<GeneratorImpl>(9)), b(make_intrusive<GeneratorImpl>(9));
  EXPECT_EQ(to_vector(randint(0, 100, {50}, a)), to_vector(randint(0, 100, {50}, b)));
  EXPECT_EQ(to_vector(randperm(20, a)), to_vector(randperm(20, b)));
}

TEST(Factories, ArangeAndLinspace) {
  EXPECT_EQ(to_vector(arange(5)), (std::vector<double>{0, 1, 2, 3, 4}));
  Tensor r = arange(Scalar(1.0), Scalar(2.0), Scalar(0.25));
  EXPECT_EQ(r.dtype(), ScalarType::Float);
  EXPECT_EQ(to_vector(r), (std::vector<double>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(to_vector(linspace(0, 1, 5)), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(to_vector(eye(2, 3)), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  EXPECT_THROW(arange(Scalar(0), Scalar(5), Scalar(0)), Error);
}
