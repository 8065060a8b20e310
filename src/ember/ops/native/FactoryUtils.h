#pragma once
// Helpers shared by the factory kernels (ops/native/Factories.cpp,
// RangeFactories.cpp, cpu/Random.cpp).

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "ember/ops/Tensor.h"

namespace ember::native {

// A fresh uninitialised tensor (the allocation behind every factory).
Tensor empty(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device);

// out= of a factory (see Note [Factory out=]): allocates when out is
// undefined (dtype, else default_dtype), otherwise checks dtype= against out
// and resizes it.
void prepare_factory_out(Tensor& out, IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                         ScalarType default_dtype);

template <typename T>
constexpr bool is_16bit_float = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The C++ name PyTorch's Scalar conversions print ("value cannot be converted
// to type int64_t without overflow").
template <typename T>
const char* cpp_name() {
  if constexpr (std::is_same_v<T, uint8_t>)
    return "uint8_t";
  else if constexpr (std::is_same_v<T, int8_t>)
    return "int8_t";
  else if constexpr (std::is_same_v<T, int16_t>)
    return "int16_t";
  else if constexpr (std::is_same_v<T, int32_t>)
    return "int";
  else if constexpr (std::is_same_v<T, int64_t>)
    return "int64_t";
  else if constexpr (std::is_same_v<T, Half>)
    return "c10::Half";
  else if constexpr (std::is_same_v<T, BFloat16>)
    return "c10::BFloat16";
  else if constexpr (std::is_same_v<T, float>)
    return "float";
  else
    return "double";
}

template <typename T>
double max_of() {
  if constexpr (std::is_same_v<T, Half>)
    return 65504.0;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return 3.3895313892515355e38;
  else
    return static_cast<double>(std::numeric_limits<T>::max());
}

// A Scalar as T, refusing values T cannot hold as PyTorch's Scalar::to does
// (a negative integer may wrap into an unsigned type; floats may become inf).
template <typename T>
T checked_to(const Scalar& s) {
  bool overflow = false;
  if (s.is_complex()) {
    // A real dtype takes a complex number only when its imaginary part is 0.
    if (s.to_complex().imag() != 0) {
      throw Error(str_cat("value cannot be converted to type ", cpp_name<T>(), " without overflow"));
    }
    return checked_to<T>(Scalar(s.to_double()));
  }
  if (s.is_floating_point()) {
    const double v = s.to_double();
    if constexpr (std::is_integral_v<T>) {
      overflow = std::isnan(v) || v < static_cast<double>(std::numeric_limits<T>::lowest()) || v > max_of<T>();
    } else {
      overflow = !std::isinf(v) && !std::isnan(v) && (v < -max_of<T>() || v > max_of<T>());
    }
    if (overflow) throw Error(str_cat("value cannot be converted to type ", cpp_name<T>(), " without overflow"));
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(v);
    } else {
      return T(static_cast<std::conditional_t<std::is_same_v<T, double>, double, float>>(v));
    }
  }
  const int64_t v = s.to_long();
  if constexpr (std::is_integral_v<T>) {
    if (s.is_big_unsigned() && !std::is_same_v<T, bool>) {
      throw Error(str_cat("value cannot be converted to type ", cpp_name<T>(), " without overflow"));
    }
    if constexpr (std::is_unsigned_v<T>) {
      overflow = v > static_cast<int64_t>(std::numeric_limits<T>::max()) ||
                 (v < 0 && static_cast<uint64_t>(-v) > static_cast<uint64_t>(std::numeric_limits<T>::max()));
    } else {
      overflow = v < static_cast<int64_t>(std::numeric_limits<T>::lowest()) ||
                 v > static_cast<int64_t>(std::numeric_limits<T>::max());
    }
    if (overflow) throw Error(str_cat("value cannot be converted to type ", cpp_name<T>(), " without overflow"));
    return static_cast<T>(v);
  } else {
    return T(static_cast<std::conditional_t<std::is_same_v<T, double>, double, float>>(s.to_double()));
  }
}

// Throws PyTorch's overflow error when a fill value does not fit dtype t.
void check_fill_value(ScalarType t, const Scalar& value);

}  // namespace ember::native
