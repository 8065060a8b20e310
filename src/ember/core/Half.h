#pragma once
// 16-bit floating point storage types. Arithmetic goes through float; the
// conversions round to nearest even, as IEEE 754 and PyTorch do.

#include <cstdint>
#include <cstring>

namespace ember {

namespace detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace detail

struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) : x(from_float(f)) {}  // NOLINT: implicit like a builtin type
  operator float() const { return to_float(x); }

  static uint16_t from_float(float f) {
    uint32_t u = detail::float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u >= 0x7f800000u) return uint16_t(sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (u >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to infinity
    if (u < 0x38800000u) {  // subnormal half or zero
      float a = detail::bits_float(u) + 0.5f;  // lets the FPU round to nearest even
      return uint16_t(sign | (detail::float_bits(a) - 0x3f000000u));
    }
    uint32_t mant_odd = (u >> 13) & 1u;
    u += 0xc8000fffu + mant_odd;  // rebias exponent and round to nearest even
    return uint16_t(sign | (u >> 13));
  }
  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    if (em >= 0x7c00u) return detail::bits_float(sign | 0x7f800000u | (uint32_t(em & 0x3ffu) << 13));
    if (em < 0x0400u) return detail::bits_float(sign) + (sign ? -1.f : 1.f) * float(em) * 5.9604644775390625e-08f;
    return detail::bits_float(sign | ((em << 13) + 0x38000000u));
  }
};

struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) : x(from_float(f)) {}  // NOLINT
  operator float() const { return detail::bits_float(uint32_t(x) << 16); }

  static uint16_t from_float(float f) {
    uint32_t u = detail::float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;  // NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
  }
};

}  // namespace ember
