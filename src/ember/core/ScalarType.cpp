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

ScalarType promote_types(ScalarType a, ScalarType b) {
  EMBER_INTERNAL_ASSERT(a != S::Undefined && b != S::Undefined, "promote_types on undefined dtype");
  return kPromote[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace ember
