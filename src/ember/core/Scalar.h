#pragma once
// A number that is not a tensor: Python's bool, int, float or complex, kept exactly.

#include <complex>
#include <cstdint>
#include <string>

#include "ember/core/ScalarType.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float, Complex };

  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool v) : kind_(Kind::Bool) { v_.i = v; }  // NOLINT
  Scalar(int v) : kind_(Kind::Int) { v_.i = v; }  // NOLINT
  Scalar(int64_t v) : kind_(Kind::Int) { v_.i = v; }  // NOLINT
  Scalar(double v) : kind_(Kind::Float) { v_.d = v; }  // NOLINT
  Scalar(float v) : kind_(Kind::Float) { v_.d = v; }  // NOLINT
  Scalar(std::complex<double> v) : kind_(Kind::Complex) {  // NOLINT
    v_.d = v.real();
    imag_ = v.imag();
  }
  Scalar(std::complex<float> v) : Scalar(std::complex<double>(v)) {}  // NOLINT

  // A Python int in [2**63, 2**64), which PyTorch keeps as uint64: integer
  // dtypes see it wrapped to int64 (to_long), floating ones its value.
  static Scalar from_uint64(uint64_t v) {
    Scalar s(static_cast<int64_t>(v));
    s.unsigned_ = v > static_cast<uint64_t>(INT64_MAX);
    return s;
  }
  bool is_big_unsigned() const { return unsigned_; }

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_complex() const { return kind_ == Kind::Complex; }
  // The value as a complex number (imaginary part 0 for real kinds).
  std::complex<double> to_complex() const { return {to_double(), kind_ == Kind::Complex ? imag_ : 0.0}; }

  double to_double() const {
    return has_double() ? v_.d : (unsigned_ ? double(static_cast<uint64_t>(v_.i)) : double(v_.i));
  }
  int64_t to_long() const { return has_double() ? int64_t(v_.d) : v_.i; }
  bool to_bool() const {
    if (kind_ == Kind::Complex) return v_.d != 0 || imag_ != 0;
    return kind_ == Kind::Float ? v_.d != 0 : v_.i != 0;
  }
  template <typename T>
  T to() const {
    if constexpr (is_complex_v<T>) {
      return convert<T>(to_complex());
    } else if constexpr (std::is_same_v<T, bool>) {
      return to_bool();
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(to_long());
    } else {
      return static_cast<T>(to_double());
    }
  }
  // PyTorch's C++ spellings (x.item().toDouble()).
  double toDouble() const { return to_double(); }
  float toFloat() const { return static_cast<float>(to_double()); }
  int64_t toLong() const { return to_long(); }
  int toInt() const { return static_cast<int>(to_long()); }
  bool toBool() const { return to_bool(); }
  std::complex<double> toComplexDouble() const { return to_complex(); }
  bool isFloatingPoint() const { return is_floating_point(); }
  bool isIntegral(bool include_bool) const { return is_integral() || (include_bool && is_bool()); }
  bool isBoolean() const { return is_bool(); }
  bool isComplex() const { return is_complex(); }
  // The dtype a tensor made from this number gets by default (float32 for
  // floats, complex64 for complex numbers, int64 for ints, bool for bools).
  ScalarType default_dtype() const {
    if (kind_ == Kind::Complex) return ScalarType::ComplexFloat;
    return kind_ == Kind::Float ? ScalarType::Float : (kind_ == Kind::Int ? ScalarType::Long : ScalarType::Bool);
  }
  bool equal(double v) const { return to_double() == v && (kind_ != Kind::Complex || imag_ == 0); }

 private:
  bool has_double() const { return kind_ == Kind::Float || kind_ == Kind::Complex; }

  Kind kind_;
  bool unsigned_ = false;
  double imag_ = 0;  // the imaginary part of a Complex; v_.d holds the real part
  union {
    int64_t i;
    double d;
  } v_;
};

}  // namespace ember
