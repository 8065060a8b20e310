// CPU (and meta) native functions of the complex-number operators: complex,
// polar, abs, angle, sgn, conj_physical. Their loops are in
// cpu/kernels/ComplexKernel.cpp.
#include "ember/cpu/ComplexStubs.h"
#include "ember/cpu/Stubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/generated/PointwiseStubs.h"
#include "ember/ops/native/LimitedTypes.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(ComplexScalarFn, add_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, mul_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexAddcFn, addc_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexScalarFn, lerp_scalar_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, lerp_tensor_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, neg_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, square_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, log1p_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, expm1_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, sinc_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, conj_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, sgn_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, abs_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, angle_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, make_complex_stub);
EMBER_DEFINE_DISPATCH(ComplexIterFn, polar_stub);
}  // namespace ember::cpu

namespace ember::native {

namespace {
// An iterator whose result is `result` whatever the inputs' dtype.
TensorIterator fixed_result_op(Tensor& out, std::initializer_list<Tensor> inputs, ScalarType result) {
  TensorIterator::Config c;
  c.out_dtype = result;
  return TensorIterator::op(out, inputs, c);
}

// abs and angle of a complex tensor are real: an out= tensor of a lower
// category (an integer for a float result) is an error, as in PyTorch.
void check_real_result_cast(const Tensor& out, ScalarType result) {
  EMBER_CHECK(!out.defined() || can_cast(result, out.dtype()), "result type ", dtype_message_name(result),
              " can't be cast to the desired output type ", dtype_message_name(out.dtype()));
}

// complex() and polar() take two float tensors of one dtype (PyTorch's checks).
void check_parts(const Tensor& a, const Tensor& b) {
  const ScalarType t = a.dtype(), u = b.dtype();
  const bool floating = (t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half) &&
                        (u == ScalarType::Float || u == ScalarType::Double || u == ScalarType::Half);
  EMBER_CHECK(floating, "Expected both inputs to be Half, Float or Double tensors but got ", dtype_message_name(t),
              " and ", dtype_message_name(u));
  EMBER_CHECK(t == u, "Expected object of scalar type ", dtype_message_name(t), " but got scalar type ",
              dtype_message_name(u), " for second argument");
}

// complex() and polar() write only the complex type of their parts.
void check_complex_out(const Tensor& part, const Tensor& out) {
  if (!out.defined()) return;
  const ScalarType want = part.dtype() == ScalarType::Half ? ScalarType::ComplexHalf : to_complex_type(part.dtype());
  EMBER_CHECK(out.dtype() == want, "Expected object of scalar type ", dtype_message_name(want), " but got scalar type ",
              dtype_message_name(out.dtype()), " for argument 'out'");
}
}  // namespace

Tensor& abs_out(const Tensor& self, Tensor& out) {
  if (self.is_complex()) {
    EMBER_CHECK(!out.is_same(self), "In-place abs is not supported for complex tensors.");
    check_real_result_cast(out, to_real_type(self.dtype()));
    auto it = fixed_result_op(out, {self}, to_real_type(self.dtype()));
    cpu::abs_complex_stub(it);
    it.finish();
    return out;
  }
  if (self.dtype() == ScalarType::ComplexHalf) return limited::abs_out(self, out);  // Note [Limited dtypes]
  auto it = TensorIterator::unary_op(out, self);
  check_pointwise_dtype(it, kIntegralDtypes | kFloatingDtypes, pointwise_error_name(it, "abs_cpu", "abs_cuda"));
  run_pointwise(abs_stub, self.device().type, "abs", it);
  return out;
}

Tensor& angle_out(const Tensor& self, Tensor& out) {
  if (self.is_complex()) {
    check_real_result_cast(out, to_real_type(self.dtype()));
    // As PyTorch's: computed in the input's layout (its vector rows), then
    // copied into the result, a contiguous one unless out= is given.
    Tensor arg;
    auto it = fixed_result_op(arg, {self}, to_real_type(self.dtype()));
    cpu::angle_stub(it);
    it.finish();
    if (!out.defined()) return out = arg.contiguous();
    resize_output(out, arg.sizes());
    out.copy_(arg);
    return out;
  }
  if (self.dtype() == ScalarType::Half || self.dtype() == ScalarType::BFloat16) {
    check_real_result_cast(out, self.dtype());
    // computed in float32, rounded once
    Tensor r = ember::angle(self.to(ScalarType::Float)).to(self.dtype());
    if (!out.defined()) return out = r;
    resize_output(out, r.sizes());
    out.copy_(r);
    return out;
  }
  auto it = TensorIterator::unary_float_op(out, self);
  const ScalarType t = it.common_dtype();
  if (t != ScalarType::Float && t != ScalarType::Double) math::not_implemented_for("angle_cpu", t);
  cpu::angle_stub(it);
  it.finish();
  return out;
}

Tensor& sgn_out(const Tensor& self, Tensor& out) {
  if (self.dtype() == ScalarType::ComplexHalf) return limited::sgn_out(self, out);  // Note [Limited dtypes]
  auto it = TensorIterator::unary_op(out, self);
  if (is_complex_type(it.common_dtype())) {
    cpu::sgn_complex_stub(it);
    it.finish();
    return out;
  }
  run_pointwise(sign_stub, self.device().type, "sgn", it);
  return out;
}

Tensor& conj_physical_out(const Tensor& self, Tensor& out) {
  if (self.dtype() == ScalarType::ComplexHalf) return limited::conj_physical_out(self, out);
  // In place on a real tensor there is nothing to write: no overlap check.
  if (out.is_same(self) && !self.is_complex()) return out;
  // PyTorch's conjugate of a wrapped number is a view of its dtype (a
  // wrapped complex128 would otherwise compute in the default complex64).
  if (!out.defined() && self.unsafeGetTensorImpl()->is_wrapped_number() && !self.is_meta()) {
    Tensor plain = ember::empty_like(self);
    plain.copy_(self);
    return conj_physical_out(plain, out);
  }
  // PyTorch's conjugate keeps the strides of a dense input exactly (its lazy
  // view, or empty_like), size-1 dims included; products read them.
  if (!out.defined() && self.is_complex() && self.is_non_overlapping_and_dense()) out = ember::empty_like(self);
  auto it = TensorIterator::unary_op(out, self);
  if (is_complex_type(it.common_dtype())) {
    cpu::conj_complex_stub(it);
  } else {
    cpu::copy_stub(it);
  }
  it.finish();
  return out;
}

Tensor& complex_out(const Tensor& real, const Tensor& imag, Tensor& out) {
  check_parts(real, imag);
  check_complex_out(real, out);
  if (real.dtype() == ScalarType::Half) {
    // complex32 (Note [Limited dtypes]): built in complex64, whose parts hold float16's exactly
    const Tensor r = ember::complex(real.to(ScalarType::Float), imag.to(ScalarType::Float));
    if (!out.defined()) return out = r.to(ScalarType::ComplexHalf);
    resize_output(out, r.sizes());
    out.copy_(r);
    return out;
  }
  auto it = fixed_result_op(out, {real, imag}, to_complex_type(real.dtype()));
  cpu::make_complex_stub(it);
  it.finish();
  return out;
}

Tensor& polar_out(const Tensor& abs, const Tensor& angle, Tensor& out) {
  check_parts(abs, angle);
  check_complex_out(abs, out);
  if (abs.dtype() == ScalarType::Half) math::not_implemented_for("polar_cpu", ScalarType::Half);
  auto it = fixed_result_op(out, {abs, angle}, to_complex_type(abs.dtype()));
  cpu::polar_stub(it);
  it.finish();
  return out;
}

// ---- logical operators ----------------------------------------------------------------------
// PyTorch's logical operators take complex operands as their truth values
// (nonzero): the real loops run on those.
namespace {
Tensor truth_value(const Tensor& t) { return is_complex_type(t.dtype()) && !t.is_meta() ? ember::ne(t, Scalar(0)) : t; }
constexpr unsigned kLogicalDtypes = kBoolDtypes | kIntegralDtypes | kFloatingDtypes;
}  // namespace

Tensor& logical_not_out(const Tensor& self, Tensor& out) {
  auto it = TensorIterator::unary_bool_op(out, truth_value(self));
  check_pointwise_dtype(it, kLogicalDtypes, pointwise_error_name(it, "logical_not_cpu", "logical_not_cuda"));
  run_pointwise(logical_not_stub, self.device().type, "logical_not", it);
  return out;
}

Tensor& logical_and_out(const Tensor& self, const Tensor& other, Tensor& out) {
  auto it = TensorIterator::comparison_op(out, truth_value(self), truth_value(other));
  check_pointwise_dtype(it, kLogicalDtypes, pointwise_error_name(it, "logical_and_cpu", "logical_and_cuda"));
  run_pointwise(logical_and_stub, self.device().type, "logical_and", it);
  return out;
}

Tensor& logical_or_out(const Tensor& self, const Tensor& other, Tensor& out) {
  auto it = TensorIterator::comparison_op(out, truth_value(self), truth_value(other));
  check_pointwise_dtype(it, kLogicalDtypes, pointwise_error_name(it, "logical_or_cpu", "logical_or_cuda"));
  run_pointwise(logical_or_stub, self.device().type, "logical_or", it);
  return out;
}

Tensor& logical_xor_out(const Tensor& self, const Tensor& other, Tensor& out) {
  auto it = TensorIterator::comparison_op(out, truth_value(self), truth_value(other));
  check_pointwise_dtype(it, kLogicalDtypes, pointwise_error_name(it, "logical_xor_cpu", "logical_xor_cuda"));
  run_pointwise(logical_xor_stub, self.device().type, "logical_xor", it);
  return out;
}

}  // namespace ember::native
