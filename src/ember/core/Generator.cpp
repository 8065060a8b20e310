#include "ember/core/Generator.h"

#include <chrono>
#include <cstring>
#include <random>

namespace ember {

namespace {
constexpr uint32_t kMatrixA = 0x9908b0dfU;
constexpr uint32_t kUpperMask = 0x80000000U;
constexpr uint32_t kLowerMask = 0x7fffffffU;
constexpr int kM = 397;

inline uint32_t mix(uint32_t u, uint32_t v) {
  uint32_t y = (u & kUpperMask) | (v & kLowerMask);
  return (y >> 1) ^ ((v & 1U) ? kMatrixA : 0U);
}
}  // namespace

void MT19937::seed_with(uint64_t seed) {
  state_[0] = static_cast<uint32_t>(seed & 0xffffffffU);
  for (int i = 1; i < kN; ++i) {
    state_[i] = 1812433253U * (state_[i - 1] ^ (state_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  }
  left_ = 1;
  next_ = 0;
}

// The standard recurrence, split at the wrap-around points so the loops need
// no modulo.
void MT19937::twist() {
  int i = 0;
  for (; i < kN - kM; ++i) state_[i] = state_[i + kM] ^ mix(state_[i], state_[i + 1]);
  for (; i < kN - 1; ++i) state_[i] = state_[i + kM - kN] ^ mix(state_[i], state_[i + 1]);
  state_[kN - 1] = state_[kM - 1] ^ mix(state_[kN - 1], state_[0]);
  left_ = kN;
  next_ = 0;
}

void MT19937::set_state(const uint32_t* s, int left, int next) {
  for (int i = 0; i < kN; ++i) state_[i] = s[i];
  left_ = left;
  next_ = next;
}

GeneratorImpl::GeneratorImpl(uint64_t seed, Device d) : device(d), seed_(seed), engine_(seed) {}

void GeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  philox_offset_ = 0;
  engine_ = MT19937(seed);
  next_double_normal_sample.reset();
  next_float_normal_sample.reset();
}

namespace {
uint64_t nondeterministic_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
         static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
}
}  // namespace

uint64_t GeneratorImpl::seed() {
  const uint64_t s = nondeterministic_seed();
  set_current_seed(s);
  return s;
}

// Note [Generator state layout]
// PyTorch's CPU generator serialises a plain struct (x86-64 alignment):
//   0    u64  initial seed            5016 f64  unused (0)
//   8    i32  left                    5024 f64  cached normal sample
//   12   i32  seeded (1)              5032 f64  unused (0)
//   16   u64  next                    5040 i32  cached normal sample valid
//   24   u64  state[624], one word    5044 f32  cached float normal sample
//             per 32-bit state word   5048 u8   its valid flag, 7 bytes padding
namespace {
template <typename T>
void put(std::vector<uint8_t>& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof(T));
}
template <typename T>
T get(const uint8_t* b, size_t at) {
  T v;
  std::memcpy(&v, b + at, sizeof(T));
  return v;
}
}  // namespace

GeneratorImpl::PhiloxState GeneratorImpl::philox_cuda_state(uint64_t increment) {
  increment = (increment + 3) / 4 * 4;
  const PhiloxState s{seed_, philox_offset_};
  philox_offset_ += increment;
  return s;
}

void GeneratorImpl::set_philox_offset_per_thread(uint64_t offset) {
  EMBER_CHECK(offset % 4 == 0, "offset must be a multiple of 4");
  philox_offset_ = offset;
}

// A CUDA generator's state: the seed, then the Philox offset.
std::vector<uint8_t> GeneratorImpl::get_state() const {
  if (device.is_cuda()) {
    std::vector<uint8_t> b(kCudaStateSize);
    put<uint64_t>(b, 0, seed_);
    put<int64_t>(b, 8, static_cast<int64_t>(philox_offset_));
    return b;
  }
  std::vector<uint8_t> b(kStateSize, 0);
  put<uint64_t>(b, 0, seed_);
  put<int32_t>(b, 8, engine_.left());
  put<int32_t>(b, 12, 1);
  put<uint64_t>(b, 16, static_cast<uint64_t>(engine_.next()));
  for (int i = 0; i < MT19937::kN; ++i) put<uint64_t>(b, 24 + 8 * i, engine_.state()[i]);
  if (next_double_normal_sample) {
    put<double>(b, 5024, *next_double_normal_sample);
    put<int32_t>(b, 5040, 1);
  }
  if (next_float_normal_sample) {
    put<float>(b, 5044, *next_float_normal_sample);
    b[5048] = 1;
  }
  return b;
}

void GeneratorImpl::set_state(const uint8_t* b, size_t nbytes) {
  if (device.is_cuda()) {
    // A state without the offset (the seed alone) is accepted and means offset 0.
    EMBER_CHECK(nbytes == kCudaStateSize || nbytes == kCudaStateSize - 8, "RNG state is wrong size");
    const uint64_t seed = get<uint64_t>(b, 0);
    const int64_t offset = nbytes == kCudaStateSize ? get<int64_t>(b, 8) : 0;
    EMBER_CHECK(offset % 4 == 0, "offset must be a multiple of 4");
    seed_ = seed;
    philox_offset_ = static_cast<uint64_t>(offset);
    return;
  }
  EMBER_CHECK(nbytes == kStateSize, "Expected a CPUGeneratorImplState of size ", kStateSize,
              " but found the input RNG state size to be ", nbytes);
  int32_t left = get<int32_t>(b, 8);
  int32_t seeded = get<int32_t>(b, 12);
  uint64_t next = get<uint64_t>(b, 16);
  EMBER_CHECK(seeded != 0 && left > 0 && left <= MT19937::kN && next <= static_cast<uint64_t>(MT19937::kN),
              "Invalid mt19937 state");
  uint32_t words[MT19937::kN];
  for (int i = 0; i < MT19937::kN; ++i) words[i] = static_cast<uint32_t>(get<uint64_t>(b, 24 + 8 * i));
  std::optional<double> normal;
  std::optional<float> normal_f;
  if (get<int32_t>(b, 5040)) normal = get<double>(b, 5024);
  if (b[5048]) normal_f = get<float>(b, 5044);
  seed_ = get<uint64_t>(b, 0);
  engine_.set_state(words, left, static_cast<int>(next));
  next_double_normal_sample = normal;
  next_float_normal_sample = normal_f;
}

// As PyTorch's: a new Generator starts from a fixed seed, the default one
// from a nondeterministic seed, so unseeded programs differ run to run.
Generator& default_cpu_generator() {
  static Generator g(make_intrusive<GeneratorImpl>(nondeterministic_seed()));
  return g;
}

Generator& default_cuda_generator(int index) {
  constexpr int kMaxDevices = 64;
  EMBER_CHECK(index >= 0 && index < kMaxDevices, "Invalid device index ", index);
  static std::mutex mutex;
  static Generator generators[kMaxDevices];
  std::lock_guard<std::mutex> lock(mutex);
  Generator& g = generators[index];
  if (!g.defined()) {
    g = Generator(
        make_intrusive<GeneratorImpl>(67280421310721ULL, Device(DeviceType::CUDA, static_cast<int8_t>(index))));
  }
  return g;
}

GeneratorImpl* generator_or_default(const std::optional<Generator>& gen) {
  if (gen && gen->defined()) return gen->get();
  return default_cpu_generator().get();
}

}  // namespace ember
