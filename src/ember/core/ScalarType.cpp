#include "ember/core/ScalarType.h"

namespace ember {

namespace {
// Index order of the promotion table; matches the enum order above.
constexpr int kTable = kNumScalarTypes;
static_assert(kTable == 12, "update the promotion table when adding a dtype");

using S = ScalarType;
constexpr S u1 = S::Byte, i1 = S::Char, i2 = S::Short, i4 = S::Int, i8 = S::Long, f2 = S::Half, f4 = S::Float,
            f8 = S::Double, b1 = S::Bool, bf = S::BFloat16, c4 = S::ComplexFloat, c8 = S::ComplexDouble;

// Row/column order: u1 i1 i2 i4 i8 f2 f4 f8 b1 bf c4 c8.
constexpr S kPromote[kTable][kTable] = {
    /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, u1, bf, c4, c8},
    /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, i1, bf, c4, c8},
    /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, i2, bf, c4, c8},
    /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, i4, bf, c4, c8},
    /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, i8, bf, c4, c8},
    /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, f2, f4, c4, c8},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, f4, f4, c4, c8},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c8, c8},
    /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, b1, bf, c4, c8},
    /* bf */ {bf, bf, bf, bf, bf, f4, f4, f8, bf, bf, c4, c8},
    /* c4 */ {c4, c4, c4, c4, c4, c4, c4, c8, c4, c4, c4, c8},
    /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
};
}  // namespace

// Promotion where one side is a limited dtype (PyTorch's rules): a dtype with
// itself is itself; float8 promotes with nothing else; uint16/32/64 give way
// to floating dtypes only; complex32 is complex float16; the others promote
// with nothing else.
static ScalarType promote_limited(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (is_float8_type(a) || is_float8_type(b)) {
    throw Error(str_cat("Promotion for Float8 Types is not supported, attempted to promote ", dtype_message_name(a),
                        " and ", dtype_message_name(b)));
  }
  if (is_wide_unsigned_type(a) || is_wide_unsigned_type(b)) {
    const ScalarType other = is_wide_unsigned_type(a) ? b : a;
    if (is_floating_type(other)) return other;
    throw Error(str_cat("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote ",
                        dtype_message_name(a), " and ", dtype_message_name(b)));
  }
  if (a == S::ComplexHalf || b == S::ComplexHalf) {
    const ScalarType other = a == S::ComplexHalf ? b : a;
    if (!is_limited_type(other)) {
      const bool half_wide = promote_types(S::Half, other) == S::Half;  // bool, integers, float16
      return half_wide ? S::ComplexHalf : promote_types(S::ComplexFloat, other);
    }
  }
  throw Error(str_cat("Promotion from ", dtype_message_name(a), " and ", dtype_message_name(b), " is unsupported."));
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  EMBER_INTERNAL_ASSERT(a != S::Undefined && b != S::Undefined, "promote_types on undefined dtype");
  if (is_limited_type(a) || is_limited_type(b)) return promote_limited(a, b);
  return kPromote[static_cast<int>(a)][static_cast<int>(b)];
}

void dispatch_type_error(ScalarType t, const char* opname) {
  if (is_limited_type(t)) {
    throw NotImplementedError(str_cat("\"", opname, "\" not implemented for '", dtype_message_name(t), "'"));
  }
  throw Error(str_cat("\"", opname, "\" not implemented for '", scalar_type_name(t), "'"));
}

}  // namespace ember
