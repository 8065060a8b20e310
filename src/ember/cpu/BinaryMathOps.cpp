// Binary math ops with hand-written native functions (division with a
// rounding mode, powers by a number); the other binary, comparison, logical
// and bitwise ops are generated from ops.yaml (`pointwise:`).
#include <cmath>

#include "ember/cpu/ComplexStubs.h"
#include "ember/cpu/MathStubs.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

using math::not_implemented_for;

// ---- division ----------------------------------------------------------------------

Tensor& div_mode_out(const Tensor& self, const Tensor& other, std::optional<std::string> rounding_mode, Tensor& out) {
  if (!rounding_mode) return div_Tensor_out(self, other, out);
  if (*rounding_mode == "trunc") {
    auto it = TensorIterator::binary_op(out, self, other);
    check_pointwise_dtype(it, kIntegralDtypes | kFloatingDtypes,
                          pointwise_error_name(it, "div_trunc_cpu", "div_trunc_cuda"));
    run_pointwise(cpu::div_trunc_stub, self.device().type, "div.Tensor_mode", it);
    return out;
  }
  if (*rounding_mode == "floor") return floor_divide_out(self, other, out);
  throw Error(
      str_cat("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *rounding_mode, "'"));
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

// ---- powers ------------------------------------------------------------------------

namespace {
// PyTorch's complex z^w for a number w: its special exponents as the
// operators they are (z * z * z for 3, 1 / (z * z) for -2, sqrt, rsqrt,
// reciprocal), otherwise e^(w log z) as std::pow.
Tensor complex_pow_scalar(const Tensor& base, const Scalar& exponent) {
  if (exponent.equal(2.0)) return ember::mul(base, base);
  if (exponent.equal(3.0)) return ember::mul(ember::mul(base, base), base);
  if (exponent.equal(-2.0)) return ember::div(wrapped_scalar(Scalar(1.0)), ember::mul(base, base));
  if (exponent.equal(0.5)) return ember::sqrt(base);
  if (exponent.equal(-0.5)) return ember::rsqrt(base);
  if (exponent.equal(-1.0)) return ember::reciprocal(base);
  return ember::exp(ember::mul(ember::log(base), wrapped_scalar(exponent)));
}
}  // namespace

Tensor& pow_tensor_scalar_out(const Tensor& self, const Scalar& exponent, Tensor& out) {
  EMBER_CHECK(!(is_integral_type(self.dtype(), true) && !exponent.is_floating_point() && exponent.to_long() < 0),
              "Integers to negative integer powers are not allowed.");
  Tensor wrapped = wrapped_scalar(exponent);
  const ScalarType common = result_type({&self, &wrapped});
  // The exponent joins promotion but not the loop: the iterator sees only the base.
  Tensor base = self.dtype() == common ? self : self.to(common);
  auto it = TensorIterator::op(out, {base}, TensorIterator::Config{});
  if (exponent.equal(0.0)) {
    it.output().fill_(Scalar(int64_t(1)));
  } else if (exponent.equal(1.0)) {
    it.output().copy_(base);
  } else if (is_complex_type(common) && exponent.equal(2.0) && !it.is_meta()) {
    cpu::square_complex_stub(it);
  } else if (is_complex_type(common)) {
    it.output().copy_(complex_pow_scalar(base, exponent));
  } else {
    if (common == ScalarType::Bool) not_implemented_for("pow", common);
    math::check_scalar_fits(exponent, common, /*reduced_floats=*/true, /*float32=*/false);
    cpu::pow_tensor_scalar_stub(it, exponent);
  }
  it.finish();
  return out;
}

Tensor& pow_scalar_out(const Scalar& self, const Tensor& exponent, Tensor& out) {
  Tensor base = wrapped_scalar(self);
  const ScalarType common = result_type({&base, &exponent});
  if (common == ScalarType::Bool) not_implemented_for("pow", common);
  if (self.equal(1.0)) {
    auto it = TensorIterator::op(out, {exponent.to(common)}, TensorIterator::Config{});
    it.output().fill_(Scalar(int64_t(1)));
    it.finish();
    return out;
  }
  return pow_Tensor_Tensor_out(base, exponent, out);
}

}  // namespace ember::native
