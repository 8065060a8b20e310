// CPU implementations of the structured elementwise ops.
#include "ember/cpu/ComplexStubs.h"
#include "ember/cpu/Stubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LimitedTypes.h"

namespace ember::native {

namespace {
void check_alpha(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ScalarType t = result_type({&self, &other});
  EMBER_CHECK(!alpha.is_bool() || t == ScalarType::Bool, "Boolean alpha only supported for Boolean results.");
  const bool complex = is_complex_type_any_tier(t);
  EMBER_CHECK(is_floating_type(t) || is_float8_type(t) || complex || alpha.is_integral() || alpha.is_bool(),
              "For integral input tensors, argument alpha must not be a floating point number.");
  EMBER_CHECK(complex || !alpha.is_complex(),
              "For non-complex input tensors, argument alpha must not be a complex number.");
}
}  // namespace

Tensor& add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  check_alpha(self, other, alpha);
  if (is_limited_type(result_type({&self, &other}))) return limited::add_out(self, other, alpha, out);
  auto it = TensorIterator::binary_op(out, self, other);
  if (!alpha.equal(1)) check_pointwise_scalar(it, alpha, /*opmath=*/false);
  if (is_complex_type(it.common_dtype())) {
    cpu::add_complex_stub(it, alpha);
  } else {
    cpu::add_stub(it, alpha);
  }
  it.finish();
  return out;
}

Tensor& sub_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool || other.dtype() != ScalarType::Bool,
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.");
  EMBER_CHECK(self.dtype() != ScalarType::Bool && other.dtype() != ScalarType::Bool,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
              "invert a mask, use the `~` or `logical_not()` operator instead.");
  check_alpha(self, other, alpha);
  if (is_limited_type(result_type({&self, &other}))) {
    const Scalar neg = alpha.is_complex()          ? Scalar(-alpha.to_complex())
                       : alpha.is_floating_point() ? Scalar(-alpha.to_double())
                                                   : Scalar(-alpha.to_long());
    return limited::add_out(self, other, neg, out);
  }
  auto it = TensorIterator::binary_op(out, self, other);
  if (!alpha.equal(1)) check_pointwise_scalar(it, alpha, /*opmath=*/false);
  if (is_complex_type(it.common_dtype())) {
    cpu::add_complex_stub(it, Scalar(-alpha.to_complex()));
    it.finish();
    return out;
  }
  Scalar neg = alpha.is_floating_point() ? Scalar(-alpha.to_double()) : Scalar(-alpha.to_long());
  cpu::add_stub(it, neg);
  it.finish();
  return out;
}

Tensor& mul_out(const Tensor& self, const Tensor& other, Tensor& out) {
  if (is_limited_type(result_type({&self, &other}))) return limited::mul_out(self, other, out);
  auto it = TensorIterator::binary_op(out, self, other);
  if (is_complex_type(it.common_dtype())) {
    cpu::mul_complex_stub(it);
  } else {
    cpu::mul_stub(it);
  }
  it.finish();
  return out;
}

Tensor& neg_out(const Tensor& self, Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.");
  if (is_limited_type(self.dtype())) return limited::neg_out(self, out);
  auto it = TensorIterator::unary_op(out, self);
  if (is_complex_type(it.common_dtype())) {
    cpu::neg_complex_stub(it);
  } else {
    cpu::neg_stub(it);
  }
  it.finish();
  return out;
}

}  // namespace ember::native
