// CPU implementations of the binary math, comparison, logical and bitwise
// ops. Scalar overloads wrap the number as a weak 0-dim tensor and share the
// tensor path, so promotion follows PyTorch's rules for Python numbers.
#include <cmath>

#include "ember/cpu/MathHelpers.h"
#include "ember/cpu/MathStubs.h"
#include "ember/cpu/Stubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

using cpu::BinaryOp;
using math::not_implemented_for;

enum Allow : unsigned { kBool = 1, kInt = 2, kFloat = 4, kAll = 7 };

Tensor& run(TensorIterator& it, BinaryOp op, Tensor& out) {
  cpu::KernelFlags flags;
  cpu::binary_math_stub(it, op, flags);
  EMBER_CHECK(!flags.zero_division.load(), "ZeroDivisionError");
  it.finish();
  return out;
}

void check_dtype(ScalarType t, unsigned allow, const char* kernel) {
  const unsigned kind = t == ScalarType::Bool ? kBool : (is_floating_type(t) ? kFloat : kInt);
  if (!(kind & allow)) not_implemented_for(kernel, t);
}

// Same-dtype result of the common dtype.
Tensor& arith(const Tensor& a, const Tensor& b, Tensor& out, BinaryOp op, unsigned allow, const char* kernel) {
  auto it = TensorIterator::binary_op(out, a, b);
  check_dtype(it.common_dtype(), allow, kernel);
  return run(it, op, out);
}

// Bool result computed in the common dtype.
Tensor& compare(const Tensor& a, const Tensor& b, Tensor& out, BinaryOp op) {
  auto it = TensorIterator::comparison_op(out, a, b);
  return run(it, op, out);
}

Tensor wrap(const Scalar& s) { return wrapped_scalar(s); }

}  // namespace

// ---- division ----------------------------------------------------------------------

Tensor& div_out(const Tensor& self, const Tensor& other, Tensor& out) {
  auto it = TensorIterator::binary_float_op(out, self, other);
  return run(it, BinaryOp::Div, out);
}

Tensor& div_mode_out(const Tensor& self, const Tensor& other, std::optional<std::string> rounding_mode, Tensor& out) {
  if (!rounding_mode) return div_out(self, other, out);
  if (*rounding_mode == "trunc") return arith(self, other, out, BinaryOp::DivTrunc, kInt | kFloat, "div_trunc_cpu");
  if (*rounding_mode == "floor") return arith(self, other, out, BinaryOp::DivFloor, kInt | kFloat, "div_floor_cpu");
  throw Error(str_cat("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *rounding_mode,
                      "'"));
}

Tensor true_divide(const Tensor& self, const Tensor& other) { return ember::div(self, other); }
Tensor& true_divide_out(const Tensor& self, const Tensor& other, Tensor& out) {
  ember::div_out(out, self, other);
  return out;
}
Tensor& true_divide_(Tensor& self, const Tensor& other) {
  ember::div_(self, other);
  return self;
}

Tensor& floor_divide_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::DivFloor, kInt | kFloat, "div_floor_cpu");
}

Tensor& remainder_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::Remainder, kInt | kFloat, "remainder_cpu");
}
Tensor& remainder_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return remainder_out(self, wrap(other), out);
}
Tensor& remainder_scalar_tensor_out(const Scalar& self, const Tensor& other, Tensor& out) {
  return remainder_out(wrap(self), other, out);
}

Tensor& fmod_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::Fmod, kInt | kFloat, "fmod_cpu");
}
Tensor& fmod_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { return fmod_out(self, wrap(other), out); }

// ---- powers ------------------------------------------------------------------------

Tensor& pow_out(const Tensor& self, const Tensor& exponent, Tensor& out) {
  return arith(self, exponent, out, BinaryOp::Pow, kInt | kFloat, "pow");
}

Tensor& pow_tensor_scalar_out(const Tensor& self, const Scalar& exponent, Tensor& out) {
  EMBER_CHECK(!(is_integral_type(self.dtype(), true) && !exponent.is_floating_point() && exponent.to_long() < 0),
              "Integers to negative integer powers are not allowed.");
  Tensor wrapped = wrap(exponent);
  const ScalarType common = result_type({&self, &wrapped});
  // The exponent joins promotion but not the loop: the iterator sees only the base.
  Tensor base = self.dtype() == common ? self : self.to(common);
  auto it = TensorIterator::op(out, {base}, TensorIterator::Config{});
  if (exponent.equal(0.0)) {
    it.output().fill_(Scalar(int64_t(1)));
  } else if (exponent.equal(1.0)) {
    it.output().copy_(base);
  } else {
    if (common == ScalarType::Bool) not_implemented_for("pow", common);
    math::check_scalar_fits(exponent, common, /*reduced_floats=*/true, /*float32=*/false);
    cpu::pow_tensor_scalar_stub(it, exponent);
  }
  it.finish();
  return out;
}

Tensor& pow_scalar_out(const Scalar& self, const Tensor& exponent, Tensor& out) {
  Tensor base = wrap(self);
  const ScalarType common = result_type({&base, &exponent});
  if (common == ScalarType::Bool) not_implemented_for("pow", common);
  if (self.equal(1.0)) {
    auto it = TensorIterator::op(out, {exponent.to(common)}, TensorIterator::Config{});
    it.output().fill_(Scalar(int64_t(1)));
    it.finish();
    return out;
  }
  return pow_out(base, exponent, out);
}

// ---- maximum, minimum, atan2 ----------------------------------------------------------

Tensor& maximum_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::Maximum, kAll, "maximum_cpu");
}
Tensor& minimum_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::Minimum, kAll, "minimum_cpu");
}
Tensor& fmax_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::Fmax, kAll, "fmax_cpu");
}
Tensor& fmin_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::Fmin, kAll, "fmin_cpu");
}
Tensor& atan2_out(const Tensor& self, const Tensor& other, Tensor& out) {
  auto it = TensorIterator::binary_float_op(out, self, other);
  return run(it, BinaryOp::Atan2, out);
}

// ---- comparisons and logical ops ----------------------------------------------------------

Tensor& eq_out(const Tensor& self, const Tensor& other, Tensor& out) { return compare(self, other, out, BinaryOp::Eq); }
Tensor& ne_out(const Tensor& self, const Tensor& other, Tensor& out) { return compare(self, other, out, BinaryOp::Ne); }
Tensor& lt_out(const Tensor& self, const Tensor& other, Tensor& out) { return compare(self, other, out, BinaryOp::Lt); }
Tensor& le_out(const Tensor& self, const Tensor& other, Tensor& out) { return compare(self, other, out, BinaryOp::Le); }
Tensor& gt_out(const Tensor& self, const Tensor& other, Tensor& out) { return compare(self, other, out, BinaryOp::Gt); }
Tensor& ge_out(const Tensor& self, const Tensor& other, Tensor& out) { return compare(self, other, out, BinaryOp::Ge); }
Tensor& eq_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { return eq_out(self, wrap(other), out); }
Tensor& ne_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { return ne_out(self, wrap(other), out); }
Tensor& lt_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { return lt_out(self, wrap(other), out); }
Tensor& le_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { return le_out(self, wrap(other), out); }
Tensor& gt_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { return gt_out(self, wrap(other), out); }
Tensor& ge_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { return ge_out(self, wrap(other), out); }

Tensor& logical_and_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return compare(self, other, out, BinaryOp::LogicalAnd);
}
Tensor& logical_or_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return compare(self, other, out, BinaryOp::LogicalOr);
}
Tensor& logical_xor_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return compare(self, other, out, BinaryOp::LogicalXor);
}

// ---- bitwise ---------------------------------------------------------------------------------

Tensor& bitwise_and_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::BitAnd, kBool | kInt, "bitwise_and_cpu");
}
Tensor& bitwise_or_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::BitOr, kBool | kInt, "bitwise_or_cpu");
}
Tensor& bitwise_xor_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::BitXor, kBool | kInt, "bitwise_xor_cpu");
}
Tensor& bitwise_left_shift_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::Lshift, kInt, "lshift_cpu");
}
Tensor& bitwise_right_shift_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return arith(self, other, out, BinaryOp::Rshift, kInt, "rshift_cpu");
}

Tensor& bitwise_and_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return bitwise_and_out(self, wrap(other), out);
}
Tensor& bitwise_or_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return bitwise_or_out(self, wrap(other), out);
}
Tensor& bitwise_xor_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return bitwise_xor_out(self, wrap(other), out);
}
Tensor& bitwise_left_shift_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return bitwise_left_shift_out(self, wrap(other), out);
}
Tensor& bitwise_right_shift_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return bitwise_right_shift_out(self, wrap(other), out);
}
Tensor& bitwise_and_scalar_tensor_out(const Scalar& self, const Tensor& other, Tensor& out) {
  return bitwise_and_out(wrap(self), other, out);
}
Tensor& bitwise_or_scalar_tensor_out(const Scalar& self, const Tensor& other, Tensor& out) {
  return bitwise_or_out(wrap(self), other, out);
}
Tensor& bitwise_xor_scalar_tensor_out(const Scalar& self, const Tensor& other, Tensor& out) {
  return bitwise_xor_out(wrap(self), other, out);
}
Tensor& bitwise_left_shift_scalar_tensor_out(const Scalar& self, const Tensor& other, Tensor& out) {
  return bitwise_left_shift_out(wrap(self), other, out);
}
Tensor& bitwise_right_shift_scalar_tensor_out(const Scalar& self, const Tensor& other, Tensor& out) {
  return bitwise_right_shift_out(wrap(self), other, out);
}

}  // namespace ember::native
