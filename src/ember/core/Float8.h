#pragma once
// The 8-bit floating formats of the limited tier (Note [Limited dtypes]):
// bytes to float exactly, float to bytes rounded to nearest, ties to even,
// with each format's rules for overflow, NaN and zero (Note [Float8 rounding]).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ember/core/ScalarType.h"

namespace ember::float8 {

// Note [Float8 rounding]
// e5m2 is IEEE-like: infinities, NaN 0x7F, overflow rounds to infinity.
// e4m3fn has no infinity: its NaN is S.1111.111 and every finite value or
// infinity beyond 448 saturates to +-448 (PyTorch's conversion does so).
// The "fnuz" forms have one NaN, 0x80, no negative zero (a negative value
// that rounds to zero is +0) and NaN for every overflow and infinity.
// e8m0fnu is an unsigned exponent: 2^(byte - 127), 0xFF is NaN, the sign is
// dropped, and a value rounds up from 1.5 * 2^e (half way in the linear
// scale); at or below 2^-127 it is 2^-127, and float32's subnormals above
// 2^-127 round up to 2^-126.
struct Format {
  int mant_bits;
  int bias;
  bool has_inf;  // e5m2
  bool fnuz;  // one NaN at 0x80, no negative zero
  bool saturate;  // e4m3fn: overflow gives the largest finite value
  double max_value;  // largest finite magnitude
};

inline Format format_of(ScalarType t) {
  switch (t) {
    case ScalarType::Float8_e5m2: return {2, 15, true, false, false, 57344.0};
    case ScalarType::Float8_e4m3fn: return {3, 7, false, false, true, 448.0};
    case ScalarType::Float8_e5m2fnuz: return {2, 16, false, true, false, 57344.0};
    case ScalarType::Float8_e4m3fnuz: return {3, 8, false, true, false, 240.0};
    default: break;
  }
  EMBER_INTERNAL_ASSERT(false, "float8::format_of: ", scalar_type_name(t));
  return {};
}

// A float from its bits (PyTorch's NaNs carry payloads; they are reproduced).
inline float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline float to_float(uint8_t b, ScalarType t) {
  constexpr uint32_t kOneNan = 0x7F800001u;  // the fnuz forms' and e8m0fnu's NaN, as PyTorch decodes it
  if (t == ScalarType::Float8_e8m0fnu) {
    if (b == 0xFF) return float_from_bits(kOneNan);
    return std::ldexp(1.0f, static_cast<int>(b) - 127);
  }
  const Format f = format_of(t);
  const int exp_bits = 7 - f.mant_bits;
  const int exp_field = (b >> f.mant_bits) & ((1 << exp_bits) - 1);
  const int mant = b & ((1 << f.mant_bits) - 1);
  const bool negative = (b & 0x80) != 0;
  const uint32_t sign = negative ? 0x80000000u : 0u;
  if (f.fnuz && b == 0x80) return float_from_bits(kOneNan);
  if (f.has_inf && exp_field == (1 << exp_bits) - 1) {
    // e5m2 as the top byte of a float16: a NaN keeps its payload and is quieted
    if (mant != 0) return float_from_bits(sign | 0x7FC00000u | (static_cast<uint32_t>(mant) << 21));
    return negative ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  if (!f.has_inf && !f.fnuz && (b & 0x7F) == 0x7F) return float_from_bits(sign | 0x7FF00000u);
  double v = exp_field == 0
                 ? std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mant_bits)
                 : std::ldexp(static_cast<double>(mant + (1 << f.mant_bits)), exp_field - f.bias - f.mant_bits);
  return static_cast<float>(negative ? -v : v);
}

inline uint8_t from_float(float x, ScalarType t) {
  if (t == ScalarType::Float8_e8m0fnu) {
    if (std::isnan(x) || std::isinf(x)) return 0xFF;
    const double a = std::fabs(static_cast<double>(x));
    if (a <= std::ldexp(1.0, -127)) return 0;
    if (a < std::ldexp(1.0, -126)) return 1;  // float32's subnormals above 2^-127 round up
    int k;
    std::frexp(a, &k);  // a = m * 2^k, m in [0.5, 1)
    int e = k - 1;
    if (a >= 1.5 * std::ldexp(1.0, e)) ++e;
    if (e > 127) return 0xFF;
    return static_cast<uint8_t>(e + 127);
  }
  const Format f = format_of(t);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const uint8_t nan = f.fnuz ? 0x80 : static_cast<uint8_t>(0x7F | sign);
  if (std::isnan(x)) return nan;
  const double a = std::fabs(static_cast<double>(x));
  const int emin = 1 - f.bias;  // exponent of the smallest normal
  double v = 0;
  if (!std::isinf(a) && a != 0) {
    int k;
    std::frexp(a, &k);
    const int e = std::max(k - 1, emin);
    const double quantum = std::ldexp(1.0, e - f.mant_bits);
    v = std::nearbyint(a / quantum) * quantum;  // ties to even in the default rounding mode
  } else if (std::isinf(a)) {
    v = a;
  }
  if (v > f.max_value) {
    if (f.saturate)
      v = f.max_value;
    else if (f.has_inf)
      return sign | 0x7C;
    else
      return nan;
  }
  if (v == 0) return f.fnuz ? 0 : sign;
  int k;
  std::frexp(v, &k);
  const int e = k - 1;
  int exp_field, mant;
  if (e < emin) {
    exp_field = 0;
    mant = static_cast<int>(std::ldexp(v, f.mant_bits - emin));
  } else {
    exp_field = e + f.bias;
    mant = static_cast<int>(std::ldexp(v, f.mant_bits - e)) - (1 << f.mant_bits);
  }
  return static_cast<uint8_t>(sign | (exp_field << f.mant_bits) | mant);
}

}  // namespace ember::float8
