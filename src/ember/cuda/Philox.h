#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3") with the state handling and int-to-float conversions of curand's
// curandStatePhilox4_32_10_t, which PyTorch's CUDA samplers use: a thread
// starts at (seed, subsequence = its index, offset = the generator's offset)
// and draws four 32-bit words per step. Usable from host code (tests) and
// device code; the integer stream and the uniform conversions are the same
// on both, the normal transform uses the device's fast sine and cosine only
// on the device, as curand does.
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define EMBER_PHILOX_FN __host__ __device__ __forceinline__
#else
#define EMBER_PHILOX_FN inline
#endif

namespace ember::cuda::philox {

constexpr uint32_t kW0 = 0x9E3779B9u;  // key bumps (golden ratio, sqrt(3) - 1)
constexpr uint32_t kW1 = 0xBB67AE85u;
constexpr uint32_t kM0 = 0xD2511F53u;  // round multipliers
constexpr uint32_t kM1 = 0xCD9E8D57u;

// The conversion constants of curand, as float and double literals.
constexpr float kTwoPow32Inv = 2.3283064e-10f;
constexpr float kTwoPi = 6.2831855f;
constexpr float kTwoPow32Inv2Pi = kTwoPow32Inv * kTwoPi;
constexpr double kTwoPow53InvDouble = 1.1102230246251565e-16;
constexpr double kPiDouble = 3.1415926535897932;

struct U4 {
  uint32_t x, y, z, w;
};
struct F4 {
  float x, y, z, w;
};
struct D2 {
  double x, y;
};

EMBER_PHILOX_FN uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
#if defined(__CUDA_ARCH__)
  *hi = __umulhi(a, b);
  return a * b;
#else
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  return static_cast<uint32_t>(p);
#endif
}

EMBER_PHILOX_FN U4 philox_round(U4 c, uint32_t k0, uint32_t k1) {
  uint32_t hi0, hi1;
  const uint32_t lo0 = mulhilo(kM0, c.x, &hi0);
  const uint32_t lo1 = mulhilo(kM1, c.z, &hi1);
  return U4{hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0};
}

// Ten rounds of the block function on counter c with key (k0, k1).
EMBER_PHILOX_FN U4 philox10(U4 c, uint32_t k0, uint32_t k1) {
  for (int i = 0; i < 9; ++i) {
    c = philox_round(c, k0, k1);
    k0 += kW0;
    k1 += kW1;
  }
  return philox_round(c, k0, k1);
}

// A thread's position in the stream: counter, key, the current block of
// four words and how many of them were used.
struct State {
  U4 ctr;
  U4 output;
  uint32_t key0, key1;
  uint32_t used;

  // Adds n to the low 64 bits of the counter (carrying into the high half).
  EMBER_PHILOX_FN void advance(uint64_t n) {
    const uint32_t lo = static_cast<uint32_t>(n);
    uint32_t hi = static_cast<uint32_t>(n >> 32);
    ctr.x += lo;
    if (ctr.x < lo) ++hi;
    ctr.y += hi;
    if (hi <= ctr.y) return;
    if (++ctr.z) return;
    ++ctr.w;
  }
  // Adds n to the high 64 bits of the counter: n subsequences of 2^64 blocks.
  EMBER_PHILOX_FN void advance_subsequence(uint64_t n) {
    const uint32_t lo = static_cast<uint32_t>(n);
    uint32_t hi = static_cast<uint32_t>(n >> 32);
    ctr.z += lo;
    if (ctr.z < lo) ++hi;
    ctr.w += hi;
  }
  EMBER_PHILOX_FN void step() {
    if (++ctr.x) return;
    if (++ctr.y) return;
    if (++ctr.z) return;
    ++ctr.w;
  }
  // Skips n 32-bit words.
  EMBER_PHILOX_FN void skip(uint64_t n) {
    used += static_cast<uint32_t>(n & 3);
    n /= 4;
    if (used > 3) {
      n += 1;
      used -= 4;
    }
    advance(n);
    output = philox10(ctr, key0, key1);
  }

  // One 32-bit word (curand()).
  EMBER_PHILOX_FN uint32_t next() {
    uint32_t r;
    switch (used++) {
      case 1: r = output.y; break;
      case 2: r = output.z; break;
      case 3: r = output.w; break;
      default: r = output.x; break;
    }
    if (used == 4) {
      step();
      output = philox10(ctr, key0, key1);
      used = 0;
    }
    return r;
  }

  // Four 32-bit words (curand4()).
  EMBER_PHILOX_FN U4 next4() {
    const U4 t = output;
    step();
    output = philox10(ctr, key0, key1);
    switch (used) {
      case 1: return U4{t.y, t.z, t.w, output.x};
      case 2: return U4{t.z, t.w, output.x, output.y};
      case 3: return U4{t.w, output.x, output.y, output.z};
      default: return t;
    }
  }
};

// curand_init(seed, subsequence, offset, &state).
EMBER_PHILOX_FN State init(uint64_t seed, uint64_t subsequence, uint64_t offset) {
  State s{};
  s.key0 = static_cast<uint32_t>(seed);
  s.key1 = static_cast<uint32_t>(seed >> 32);
  s.advance_subsequence(subsequence);
  s.skip(offset);
  return s;
}

// (0, 1]: the word times 2^-32 plus half a step.
EMBER_PHILOX_FN float to_uniform(uint32_t x) { return x * kTwoPow32Inv + (kTwoPow32Inv / 2.0f); }

// (0, 1] with 53 random bits from two words.
EMBER_PHILOX_FN double to_uniform_double(uint32_t x, uint32_t y) {
  const uint64_t z = static_cast<uint64_t>(x) ^ (static_cast<uint64_t>(y) << (53 - 32));
  return z * kTwoPow53InvDouble + (kTwoPow53InvDouble / 2.0);
}

EMBER_PHILOX_FN F4 uniform4(State& s) {
  const U4 r = s.next4();
  return F4{to_uniform(r.x), to_uniform(r.y), to_uniform(r.z), to_uniform(r.w)};
}

EMBER_PHILOX_FN D2 uniform2_double(State& s) {
  const U4 r = s.next4();
  return D2{to_uniform_double(r.x, r.y), to_uniform_double(r.z, r.w)};
}

// Box-Muller on two words: (sin, cos) of the angle, scaled by the radius.
// The angle's multiply-add is fused, as the device compiler fuses it.
EMBER_PHILOX_FN void box_muller(uint32_t x, uint32_t y, float* a, float* b) {
  const float u = x * kTwoPow32Inv + (kTwoPow32Inv / 2);
  const float v = fmaf(static_cast<float>(y), kTwoPow32Inv2Pi, kTwoPow32Inv2Pi / 2);
  const float s = sqrtf(-2.0f * logf(u));
#if defined(__CUDA_ARCH__)
  __sincosf(v, a, b);
#else
  *a = sinf(v);
  *b = cosf(v);
#endif
  *a *= s;
  *b *= s;
}

EMBER_PHILOX_FN void box_muller_double(uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1, double* a, double* b) {
  const uint64_t zx = static_cast<uint64_t>(x0) ^ (static_cast<uint64_t>(x1) << (53 - 32));
  const double u = zx * kTwoPow53InvDouble + (kTwoPow53InvDouble / 2.0);
  const uint64_t zy = static_cast<uint64_t>(y0) ^ (static_cast<uint64_t>(y1) << (53 - 32));
  const double v = zy * (kTwoPow53InvDouble * 2.0) + kTwoPow53InvDouble;
  const double s = sqrt(-2.0 * log(u));
#if defined(__CUDA_ARCH__)
  sincospi(v, a, b);
#else
  *a = sin(v * kPiDouble);
  *b = cos(v * kPiDouble);
#endif
  *a *= s;
  *b *= s;
}

EMBER_PHILOX_FN F4 normal4(State& s) {
  const U4 r = s.next4();
  F4 out;
  box_muller(r.x, r.y, &out.x, &out.y);
  box_muller(r.z, r.w, &out.z, &out.w);
  return out;
}

EMBER_PHILOX_FN D2 normal2_double(State& s) {
  const U4 r = s.next4();
  D2 out;
  box_muller_double(r.x, r.y, r.z, r.w, &out.x, &out.y);
  return out;
}

}  // namespace ember::cuda::philox
