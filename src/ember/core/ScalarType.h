#pragma once
// The one list of element types. Every table indexed by ScalarType is built
// from EMBER_FORALL_SCALAR_TYPES so it cannot fall out of step.

#include <complex>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "ember/core/Error.h"
#include "ember/core/Half.h"

namespace ember {

// _(C++ type, enum name, Python name, PyTorch legacy storage name)
#define EMBER_FORALL_SCALAR_TYPES(_)                            \
  _(uint8_t, Byte, uint8, Byte)                                 \
  _(int8_t, Char, int8, Char)                                   \
  _(int16_t, Short, int16, Short)                               \
  _(int32_t, Int, int32, Int)                                   \
  _(int64_t, Long, int64, Long)                                 \
  _(::ember::Half, Half, float16, Half)                         \
  _(float, Float, float32, Float)                               \
  _(double, Double, float64, Double)                            \
  _(bool, Bool, bool, Bool)                                     \
  _(::ember::BFloat16, BFloat16, bfloat16, BFloat16)            \
  _(std::complex<float>, ComplexFloat, complex64, ComplexFloat) \
  _(std::complex<double>, ComplexDouble, complex128, ComplexDouble)

// Note [Limited dtypes]
// PyTorch's dtypes with little CPU support (unsigned 16/32/64-bit integers,
// the float8 formats, complex32, float4 pairs, bit containers, sub-byte
// integers) form a second tier. They are not in EMBER_FORALL_SCALAR_TYPES, so
// no kernel is instantiated for them and every dtype dispatch refuses them
// with PyTorch's NotImplementedError (dispatch_type_error). What PyTorch does
// support for them (storage, fill, conversion, comparison, cat, and a few
// arithmetic operators) is written once in cpu/LimitedTypes.cpp, through a
// full-tier carrier dtype that holds every value exactly. Their enum values
// follow Undefined, so tables of kNumScalarTypes entries never see them.
// _(bytes per element, enum name = PyTorch's message name, Python name)
#define EMBER_FORALL_LIMITED_SCALAR_TYPES(_) \
  _(2, UInt16, uint16)                       \
  _(4, UInt32, uint32)                       \
  _(8, UInt64, uint64)                       \
  _(1, Float8_e5m2, float8_e5m2)             \
  _(1, Float8_e4m3fn, float8_e4m3fn)         \
  _(1, Float8_e5m2fnuz, float8_e5m2fnuz)     \
  _(1, Float8_e4m3fnuz, float8_e4m3fnuz)     \
  _(1, Float8_e8m0fnu, float8_e8m0fnu)       \
  _(4, ComplexHalf, complex32)               \
  _(1, Float4_e2m1fn_x2, float4_e2m1fn_x2)   \
  _(1, Bits1x8, bits1x8)                     \
  _(1, Bits2x4, bits2x4)                     \
  _(1, Bits4x2, bits4x2)                     \
  _(1, Bits8, bits8)                         \
  _(2, Bits16, bits16)                       \
  _(1, UInt1, uint1)                         \
  _(1, UInt2, uint2)                         \
  _(1, UInt3, uint3)                         \
  _(1, UInt4, uint4)                         \
  _(1, UInt5, uint5)                         \
  _(1, UInt6, uint6)                         \
  _(1, UInt7, uint7)                         \
  _(1, Int1, int1)                           \
  _(1, Int2, int2)                           \
  _(1, Int3, int3)                           \
  _(1, Int4, int4)                           \
  _(1, Int5, int5)                           \
  _(1, Int6, int6)                           \
  _(1, Int7, int7)

enum class ScalarType : int8_t {
#define EMBER_ENUM_ENTRY(cpp, name, py, legacy) name,
  EMBER_FORALL_SCALAR_TYPES(EMBER_ENUM_ENTRY)
#undef EMBER_ENUM_ENTRY
      Undefined,
#define EMBER_LIMITED_ENUM_ENTRY(size, name, py) name,
  EMBER_FORALL_LIMITED_SCALAR_TYPES(EMBER_LIMITED_ENUM_ENTRY)
#undef EMBER_LIMITED_ENUM_ENTRY
      EndOfLimited,
};

// Dtypes of the full tier: the size of every table indexed by ScalarType.
constexpr int kNumScalarTypes = static_cast<int>(ScalarType::Undefined);
// Every dtype object, both tiers (Undefined's slot included, never used).
constexpr int kNumAllScalarTypes = static_cast<int>(ScalarType::EndOfLimited);

// A dtype of the limited tier (Note [Limited dtypes]).
constexpr bool is_limited_type(ScalarType t) {
  return static_cast<int>(t) > static_cast<int>(ScalarType::Undefined) &&
         static_cast<int>(t) < static_cast<int>(ScalarType::EndOfLimited);
}
constexpr bool is_float8_type(ScalarType t) {
  return t == ScalarType::Float8_e5m2 || t == ScalarType::Float8_e4m3fn || t == ScalarType::Float8_e5m2fnuz ||
         t == ScalarType::Float8_e4m3fnuz || t == ScalarType::Float8_e8m0fnu;
}
constexpr bool is_wide_unsigned_type(ScalarType t) {
  return t == ScalarType::UInt16 || t == ScalarType::UInt32 || t == ScalarType::UInt64;
}
// Limited dtypes whose values convert to and from the full tier (the others,
// bit containers, float4 pairs and sub-byte integers, hold only their bytes).
constexpr bool is_convertible_limited_type(ScalarType t) {
  return is_float8_type(t) || is_wide_unsigned_type(t) || t == ScalarType::ComplexHalf;
}
constexpr bool is_sub_byte_int_type(ScalarType t) {
  return static_cast<int>(t) >= static_cast<int>(ScalarType::UInt1) &&
         static_cast<int>(t) <= static_cast<int>(ScalarType::Int7);
}
constexpr bool is_bits_type(ScalarType t) {
  return static_cast<int>(t) >= static_cast<int>(ScalarType::Bits1x8) &&
         static_cast<int>(t) <= static_cast<int>(ScalarType::Bits16);
}

// Bytes per element.
inline size_t element_size(ScalarType t) {
  switch (t) {
#define EMBER_SIZE_CASE(cpp, name, py, legacy) \
  case ScalarType::name: return sizeof(cpp);
    EMBER_FORALL_SCALAR_TYPES(EMBER_SIZE_CASE)
#undef EMBER_SIZE_CASE
#define EMBER_LIMITED_SIZE_CASE(size, name, py) \
  case ScalarType::name: return size;
    EMBER_FORALL_LIMITED_SCALAR_TYPES(EMBER_LIMITED_SIZE_CASE)
#undef EMBER_LIMITED_SIZE_CASE
    default: break;
  }
  throw Error("element_size: undefined dtype");
}

// Python-facing name without the module prefix, e.g. "float32".
inline std::string_view scalar_type_name(ScalarType t) {
  switch (t) {
#define EMBER_NAME_CASE(cpp, name, py, legacy) \
  case ScalarType::name: return #py;
    EMBER_FORALL_SCALAR_TYPES(EMBER_NAME_CASE)
#undef EMBER_NAME_CASE
#define EMBER_LIMITED_NAME_CASE(size, name, py) \
  case ScalarType::name: return #py;
    EMBER_FORALL_LIMITED_SCALAR_TYPES(EMBER_LIMITED_NAME_CASE)
#undef EMBER_LIMITED_NAME_CASE
    default: return "undefined";
  }
}

// The C++ element type name PyTorch prints in messages (out= dtypes,
// masked_fill values, random bounds: "from is out of bounds for float").
inline const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "unsigned char";
    case ScalarType::Char: return "signed char";
    case ScalarType::Short: return "short int";
    case ScalarType::Int: return "int";
    case ScalarType::Long: return "long int";
    case ScalarType::Half: return "c10::Half";
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
    case ScalarType::Bool: return "bool";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::ComplexFloat: return "c10::complex<float>";
    case ScalarType::ComplexDouble: return "c10::complex<double>";
    default: return "undefined";
  }
}

// Legacy tensor type name used in some messages, e.g. "FloatTensor".
inline std::string_view legacy_type_name(ScalarType t) {
  switch (t) {
#define EMBER_LEGACY_CASE(cpp, name, py, legacy) \
  case ScalarType::name: return #legacy "Tensor";
    EMBER_FORALL_SCALAR_TYPES(EMBER_LEGACY_CASE)
#undef EMBER_LEGACY_CASE
#define EMBER_LIMITED_LEGACY_CASE(size, name, py) \
  case ScalarType::name: return #name "Tensor";
    EMBER_FORALL_LIMITED_SCALAR_TYPES(EMBER_LIMITED_LEGACY_CASE)
#undef EMBER_LIMITED_LEGACY_CASE
    default: return "UndefinedTensor";
  }
}

// PyTorch's name of a dtype in messages ("Float", "Long", "BFloat16").
inline std::string dtype_message_name(ScalarType t) {
  const std::string_view n = legacy_type_name(t);
  return std::string(n.substr(0, n.size() - 6));  // drop "Tensor"
}

inline bool is_floating_type(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half || t == ScalarType::BFloat16;
}
// is_floating_type with the limited tier's floats (float8, float4 pairs), as dtype.is_floating_point.
inline bool is_floating_type_any_tier(ScalarType t) {
  return is_floating_type(t) || is_float8_type(t) || t == ScalarType::Float4_e2m1fn_x2;
}
inline bool is_complex_type(ScalarType t) { return t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble; }
// is_complex_type with complex32, as dtype.is_complex (full-tier code keeps seeing complex64/128 only).
inline bool is_complex_type_any_tier(ScalarType t) { return is_complex_type(t) || t == ScalarType::ComplexHalf; }
// complex64 for float32 and narrower floats, complex128 for float64.
inline ScalarType to_complex_type(ScalarType t) {
  if (is_complex_type(t)) return t;
  return t == ScalarType::Double ? ScalarType::ComplexDouble : ScalarType::ComplexFloat;
}
// float32 for complex64, float64 for complex128; other dtypes unchanged.
inline ScalarType to_real_type(ScalarType t) {
  if (t == ScalarType::ComplexHalf) return ScalarType::Half;
  if (t == ScalarType::ComplexFloat) return ScalarType::Float;
  if (t == ScalarType::ComplexDouble) return ScalarType::Double;
  return t;
}
inline bool is_integral_type(ScalarType t, bool include_bool) {
  return (include_bool && t == ScalarType::Bool) || t == ScalarType::Byte || t == ScalarType::Char ||
         t == ScalarType::Short || t == ScalarType::Int || t == ScalarType::Long;
}

template <typename T>
struct CppTypeToScalarType;
#define EMBER_CPP_TO_ENUM(cpp, name, py, legacy)          \
  template <>                                             \
  struct CppTypeToScalarType<cpp> {                       \
    static constexpr ScalarType value = ScalarType::name; \
  };
EMBER_FORALL_SCALAR_TYPES(EMBER_CPP_TO_ENUM)
#undef EMBER_CPP_TO_ENUM

// Value conversion between real element types (16-bit floats go through float).
template <typename To, typename From>
inline To convert_real(From v) {
  constexpr bool from16 = std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>;
  constexpr bool to16 = std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>;
  if constexpr (from16 && to16) {
    return To(static_cast<float>(v));
  } else if constexpr (from16) {
    return static_cast<To>(static_cast<float>(v));
  } else if constexpr (to16) {
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <typename T>
struct is_complex_t : std::false_type {};
template <typename T>
struct is_complex_t<std::complex<T>> : std::true_type {};
template <typename T>
constexpr bool is_complex_v = is_complex_t<T>::value;

// Value conversion between element types: complex to real keeps the real
// part, complex to bool tests both parts, real to complex has imaginary 0.
template <typename To, typename From>
inline To convert(From v) {
  if constexpr (is_complex_v<From> && is_complex_v<To>) {
    return To(static_cast<typename To::value_type>(v.real()), static_cast<typename To::value_type>(v.imag()));
  } else if constexpr (is_complex_v<From> && std::is_same_v<To, bool>) {
    return v.real() != 0 || v.imag() != 0;
  } else if constexpr (is_complex_v<From>) {
    return convert_real<To>(v.real());
  } else if constexpr (is_complex_v<To>) {
    return To(convert_real<typename To::value_type>(v), 0);
  } else {
    return convert_real<To>(v);
  }
}

// Type promotion between two dtypes of the same category (PyTorch's lattice).
EMBER_CORE_API ScalarType promote_types(ScalarType a, ScalarType b);

// The error of a dtype dispatch that has no case for `t`: PyTorch's
// NotImplementedError for limited dtypes, the internal RuntimeError otherwise.
[[noreturn]] EMBER_CORE_API void dispatch_type_error(ScalarType t, const char* opname);

}  // namespace ember

// EMBER_DISPATCH_ALL_TYPES(dtype, "op", [&]{ ... scalar_t ... }): runs the
// lambda with scalar_t bound to the C++ type of dtype. The lambda text is
// repeated per case so that scalar_t is a real type in each instantiation.
#define EMBER_DISPATCH_CASE(NAME, CPP, ...) \
  case ::ember::ScalarType::NAME: {         \
    using scalar_t = CPP;                   \
    return __VA_ARGS__();                   \
  }
// A real-only dispatch given a complex dtype raises PyTorch's NotImplementedError.
#define EMBER_DISPATCH_COMPLEX_UNSUPPORTED(DTYPE, OPNAME) \
  case ::ember::ScalarType::ComplexFloat:                 \
  case ::ember::ScalarType::ComplexDouble:                \
    throw ::ember::NotImplementedError(                   \
        ::ember::str_cat("\"", OPNAME, "\" not implemented for '", ::ember::dtype_message_name(DTYPE), "'"));
#define EMBER_DISPATCH_COMPLEX_CASES(...)                             \
  EMBER_DISPATCH_CASE(ComplexFloat, std::complex<float>, __VA_ARGS__) \
  EMBER_DISPATCH_CASE(ComplexDouble, std::complex<double>, __VA_ARGS__)
#define EMBER_DISPATCH_REAL_CASES(...)                  \
  EMBER_DISPATCH_CASE(Byte, uint8_t, __VA_ARGS__)       \
  EMBER_DISPATCH_CASE(Char, int8_t, __VA_ARGS__)        \
  EMBER_DISPATCH_CASE(Short, int16_t, __VA_ARGS__)      \
  EMBER_DISPATCH_CASE(Int, int32_t, __VA_ARGS__)        \
  EMBER_DISPATCH_CASE(Long, int64_t, __VA_ARGS__)       \
  EMBER_DISPATCH_CASE(Half, ::ember::Half, __VA_ARGS__) \
  EMBER_DISPATCH_CASE(Float, float, __VA_ARGS__)        \
  EMBER_DISPATCH_CASE(Double, double, __VA_ARGS__)      \
  EMBER_DISPATCH_CASE(Bool, bool, __VA_ARGS__)          \
  EMBER_DISPATCH_CASE(BFloat16, ::ember::BFloat16, __VA_ARGS__)
#define EMBER_DISPATCH_DEFAULT_ERROR(DTYPE, OPNAME) \
  default: ::ember::dispatch_type_error(DTYPE, OPNAME);
static_assert(::ember::kNumScalarTypes == 12, "add the new dtype to EMBER_DISPATCH_REAL_CASES or _COMPLEX_CASES");
// Every real dtype; complex ones raise.
#define EMBER_DISPATCH_ALL_TYPES(DTYPE, OPNAME, ...)    \
  [&] {                                                 \
    switch (DTYPE) {                                    \
      EMBER_DISPATCH_REAL_CASES(__VA_ARGS__)            \
      EMBER_DISPATCH_COMPLEX_UNSUPPORTED(DTYPE, OPNAME) \
      EMBER_DISPATCH_DEFAULT_ERROR(DTYPE, OPNAME)       \
    }                                                   \
  }()
// Every dtype, complex64 and complex128 included.
#define EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(DTYPE, OPNAME, ...) \
  [&] {                                                          \
    switch (DTYPE) {                                             \
      EMBER_DISPATCH_REAL_CASES(__VA_ARGS__)                     \
      EMBER_DISPATCH_COMPLEX_CASES(__VA_ARGS__)                  \
      EMBER_DISPATCH_DEFAULT_ERROR(DTYPE, OPNAME)                \
    }                                                            \
  }()
// complex64 and complex128 only.
#define EMBER_DISPATCH_COMPLEX_TYPES(DTYPE, OPNAME, ...) \
  [&] {                                                  \
    switch (DTYPE) {                                     \
      EMBER_DISPATCH_COMPLEX_CASES(__VA_ARGS__)          \
      EMBER_DISPATCH_DEFAULT_ERROR(DTYPE, OPNAME)        \
    }                                                    \
  }()
