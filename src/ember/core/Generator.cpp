#include "ember/core/Generator.h"

#include <chrono>
#include <random>

namespace ember {

namespace {
constexpr uint32_t kMatrixA = 0x9908b0dfU;
constexpr uint32_t kUpperMask = 0x80000000U;
constexpr uint32_t kLowerMask = 0x7fffffffU;
constexpr int kM = 397;
}  // namespace

void MT19937::seed_with(uint64_t seed) {
  state_[0] = static_cast<uint32_t>(seed & 0xffffffffU);
  for (int i = 1; i < kN; ++i) {
    state_[i] = 1812433253U * (state_[i - 1] ^ (state_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  }
  left_ = 1;
  next_ = 0;
}

void MT19937::twist() {
  for (int i = 0; i < kN; ++i) {
    uint32_t y = (state_[i] & kUpperMask) | (state_[(i + 1) % kN] & kLowerMask);
    state_[i] = state_[(i + kM) % kN] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
  }
  left_ = kN;
  next_ = 0;
}

uint32_t MT19937::operator()() {
  if (--left_ <= 0) twist();
  uint32_t y = state_[next_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

void MT19937::set_state(const uint32_t* s, int left, int next) {
  for (int i = 0; i < kN; ++i) state_[i] = s[i];
  left_ = left;
  next_ = next;
}

GeneratorImpl::GeneratorImpl(uint64_t seed, Device d) : device(d), seed_(seed), engine_(seed) {}

void GeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  engine_ = MT19937(seed);
  next_double_normal_sample.reset();
  next_float_normal_sample.reset();
}

uint64_t GeneratorImpl::seed() {
  std::random_device rd;
  uint64_t s = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
               static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  set_current_seed(s);
  return s;
}

Generator& default_cpu_generator() {
  static Generator g(make_intrusive<GeneratorImpl>());
  return g;
}

GeneratorImpl* generator_or_default(const std::optional<Generator>& gen) {
  if (gen && gen->defined()) return gen->get();
  return default_cpu_generator().get();
}

}  // namespace ember
