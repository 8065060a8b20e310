#pragma once
// Random-number generators. The CPU generator is MT19937 seeded from the low
// 32 bits of the seed (initial_seed() keeps all 64), as in PyTorch, so the
// same seed gives the same stream.

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "ember/core/Device.h"
#include "ember/core/IntrusivePtr.h"

namespace ember {

// The 32-bit Mersenne Twister (Matsumoto & Nishimura), standard seeding.
class EMBER_CORE_API MT19937 {
 public:
  static constexpr int kN = 624;
  explicit MT19937(uint64_t seed = 5489) { seed_with(seed); }
  void seed_with(uint64_t seed);
  // One 32-bit draw. Inline: kernels call it once per element.
  uint32_t operator()() {
    if (EMBER_UNLIKELY(--left_ <= 0)) twist();
    uint32_t y = state_[next_++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
  }
  // The next n draws, in order, into out: the same values as n calls.
  void fill(uint32_t* out, int64_t n) {
    while (n > 0) {
      if (left_ <= 1) {
        twist();
        left_ = kN + 1;  // the draw that twists does not count itself
      }
      const int64_t m = n < left_ - 1 ? n : left_ - 1;
      const uint32_t* s = state_ + next_;
      for (int64_t i = 0; i < m; ++i) {
        uint32_t y = s[i];
        y ^= (y >> 11);
        y ^= (y << 7) & 0x9d2c5680U;
        y ^= (y << 15) & 0xefc60000U;
        y ^= (y >> 18);
        out[i] = y;
      }
      next_ += static_cast<int>(m);
      left_ -= static_cast<int>(m);
      out += m;
      n -= m;
    }
  }
  // Raw state (for get_state/set_state).
  const uint32_t* state() const { return state_; }
  int left() const { return left_; }
  int next() const { return next_; }
  void set_state(const uint32_t* s, int left, int next);

 private:
  void twist();
  uint32_t state_[kN];
  int left_ = 1;  // draws left before the next twist, plus one
  int next_ = 0;  // index of the next word to temper
};

struct EMBER_CORE_API GeneratorImpl final : RefCounted {
  explicit GeneratorImpl(uint64_t seed = 67280421310721ULL, Device device = Device(DeviceType::CPU));

  // Re-seeds; clears cached normal samples (a CUDA generator's offset restarts at 0).
  void set_current_seed(uint64_t seed);
  uint64_t current_seed() const { return seed_; }
  // A non-deterministic seed (from the clock and std::random_device), applied.
  uint64_t seed();

  uint32_t random() { return engine_(); }
  uint64_t random64() {
    uint64_t hi = engine_();
    uint64_t lo = engine_();
    return (hi << 32) | lo;
  }

  // A CUDA generator is a Philox key (the seed) and an offset: how many
  // 32-bit words every thread of a sampling kernel has used so far (a
  // multiple of 4). philox_cuda_state(n) returns the (seed, offset) a kernel
  // starts from and reserves n words, rounded up to a multiple of 4.
  struct PhiloxState {
    uint64_t seed;
    uint64_t offset;
  };
  PhiloxState philox_cuda_state(uint64_t increment);
  uint64_t philox_offset_per_thread() const { return philox_offset_; }
  // Throws unless offset is a multiple of 4.
  void set_philox_offset_per_thread(uint64_t offset);

  // The state as bytes, in the layout of PyTorch's CPU generator state
  // (see Note [Generator state layout]), so states move between the two.
  // A CUDA generator's state is PyTorch's: the seed and the Philox offset
  // (8 bytes each).
  static constexpr size_t kStateSize = 5056;
  static constexpr size_t kCudaStateSize = 16;
  std::vector<uint8_t> get_state() const;
  // Throws on a bad size or an invalid engine state, leaving the generator
  // unchanged.
  void set_state(const uint8_t* data, size_t nbytes);

  Device device;
  // Box-Muller produces pairs; the second value waits here for the next call.
  std::optional<double> next_double_normal_sample;
  std::optional<float> next_float_normal_sample;
  // Held by kernels while they draw, so concurrent users see whole streams.
  std::mutex mutex;
  MT19937& engine() { return engine_; }

 private:
  uint64_t seed_;
  uint64_t philox_offset_ = 0;
  MT19937 engine_;
};

class EMBER_CORE_API Generator {
 public:
  Generator() = default;
  explicit Generator(IntrusivePtr<GeneratorImpl> impl) : impl_(std::move(impl)) {}
  bool defined() const { return static_cast<bool>(impl_); }
  GeneratorImpl* get() const { return impl_.get(); }
  GeneratorImpl* operator->() const { return impl_.get(); }

 private:
  IntrusivePtr<GeneratorImpl> impl_;
};

// The process-wide default CPU generator (torch.default_generator).
EMBER_CORE_API Generator& default_cpu_generator();
// The generator to draw from: gen if given, else the default for the device.
EMBER_CORE_API GeneratorImpl* generator_or_default(const std::optional<Generator>& gen);
// The default generator of CUDA device `index` (torch.cuda.default_generators[index]),
// created on first use; index in [0, 64).
EMBER_CORE_API Generator& default_cuda_generator(int index);

}  // namespace ember
