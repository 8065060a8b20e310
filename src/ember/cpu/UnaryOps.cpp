// CPU implementations of the unary math ops (structured: out may be
// undefined, the input itself, or a user tensor).
#include <cmath>
#include <limits>

#include "ember/cpu/MathHelpers.h"
#include "ember/cpu/MathStubs.h"
#include "ember/cpu/OpMessages.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace math {

void not_implemented_for(const char* kernel, ScalarType t) {
  throw NotImplementedError(str_cat("\"", kernel, "\" not implemented for '", dtype_message_name(t), "'"));
}

void check_scalar_fits(const Scalar& s, ScalarType t, bool reduced_floats, bool float32) {
  const char* name = nullptr;
  double lo = 0, hi = 0;
  switch (t) {
    // Unsigned types accept negative values down to -max, which wrap.
    case ScalarType::Byte: name = "uint8_t"; lo = -255; hi = 255; break;
    case ScalarType::Char: name = "int8_t"; lo = -128; hi = 127; break;
    case ScalarType::Short: name = "int16_t"; lo = -32768; hi = 32767; break;
    case ScalarType::Int: name = "int"; lo = -2147483648.0; hi = 2147483647.0; break;
    case ScalarType::Half:
      if (!reduced_floats) return;
      name = "c10::Half"; lo = -65504; hi = 65504; break;
    case ScalarType::BFloat16:
      if (!reduced_floats) return;
      name = "c10::BFloat16"; lo = -3.3895313892515355e38; hi = 3.3895313892515355e38; break;
    case ScalarType::Float:
      if (!float32) return;
      name = "float"; lo = -3.4028234663852886e38; hi = 3.4028234663852886e38; break;
    default: return;
  }
  const double v = s.to_double();
  if (is_floating_type(t) && !std::isfinite(v)) return;  // inf and nan convert
  EMBER_CHECK(v >= lo && v <= hi, "value cannot be converted to type ", name, " without overflow");
}

Tensor scalar_tensor_checked(const Scalar& s, ScalarType t) {
  check_scalar_fits(s, t, /*reduced_floats=*/false, /*float32=*/true);
  return full({}, s, t);
}

}  // namespace math

namespace {

using cpu::UnaryOp;
using math::not_implemented_for;

Tensor& run(TensorIterator& it, UnaryOp op, Tensor& out) {
  cpu::unary_math_stub(it, op);
  it.finish();
  return out;
}

// Integral and bool inputs compute in the default float dtype.
Tensor& float_op(const Tensor& self, Tensor& out, UnaryOp op) {
  auto it = TensorIterator::unary_float_op(out, self);
  return run(it, op, out);
}

// The result keeps the input dtype; kernel names the PyTorch kernel for the
// error on an unsupported dtype.
Tensor& same_op(const Tensor& self, Tensor& out, UnaryOp op, const char* kernel, bool allow_bool, bool allow_int,
                bool allow_float) {
  auto it = TensorIterator::unary_op(out, self);
  const ScalarType t = it.common_dtype();
  const bool ok = t == ScalarType::Bool ? allow_bool : (is_floating_type(t) ? allow_float : allow_int);
  if (!ok) not_implemented_for(kernel, t);
  return run(it, op, out);
}

Tensor& bool_op(const Tensor& self, Tensor& out, UnaryOp op) {
  TensorIterator::Config c;
  c.promote_inputs = false;
  c.out_dtype = ScalarType::Bool;
  auto it = TensorIterator::op(out, {self}, c);
  return run(it, op, out);
}

}  // namespace

Tensor& abs_out(const Tensor& self, Tensor& out) { return same_op(self, out, UnaryOp::Abs, "abs_cpu", false, true, true); }
Tensor& sign_out(const Tensor& self, Tensor& out) { return same_op(self, out, UnaryOp::Sign, "sign_cpu", true, true, true); }

Tensor& relu_out(const Tensor& self, Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "Boolean inputs not supported for relu");
  return same_op(self, out, UnaryOp::Relu, "clamp_min_cpu", false, true, true);
}

Tensor& gelu_out(const Tensor& self, const std::string& approximate, Tensor& out) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  return same_op(self, out, approximate == "tanh" ? UnaryOp::GeluTanh : UnaryOp::GeluErf, "GeluKernelImpl", false,
                 false, true);
}

Tensor& gelu_backward_out(const Tensor& grad_output, const Tensor& self, const std::string& approximate, Tensor& out) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  auto it = TensorIterator::binary_op(out, grad_output, self);
  if (!is_floating_type(it.common_dtype())) not_implemented_for("GeluBackwardKernelImpl", it.common_dtype());
  cpu::gelu_backward_stub(it, approximate == "tanh");
  it.finish();
  return out;
}

Tensor& silu_out(const Tensor& self, Tensor& out) { return same_op(self, out, UnaryOp::Silu, "silu_cpu", false, false, true); }

Tensor& floor_out(const Tensor& self, Tensor& out) {
  return same_op(self, out, UnaryOp::Floor, "floor_vml_cpu", false, true, true);
}
Tensor& ceil_out(const Tensor& self, Tensor& out) { return same_op(self, out, UnaryOp::Ceil, "ceil_vml_cpu", false, true, true); }
Tensor& trunc_out(const Tensor& self, Tensor& out) {
  return same_op(self, out, UnaryOp::Trunc, "trunc_vml_cpu", false, true, true);
}
Tensor& round_out(const Tensor& self, Tensor& out) {
  return same_op(self, out, UnaryOp::Round, "round_vml_cpu", false, true, true);
}

Tensor& round_decimals_out(const Tensor& self, int64_t decimals, Tensor& out) {
  if (decimals == 0) return same_op(self, out, UnaryOp::Round, "round_vml_cpu", false, false, true);
  auto it = TensorIterator::unary_op(out, self);
  if (!is_floating_type(it.common_dtype())) not_implemented_for("round_cpu", it.common_dtype());
  cpu::round_decimals_stub(it, decimals);
  it.finish();
  return out;
}

Tensor& bitwise_not_out(const Tensor& self, Tensor& out) {
  return same_op(self, out, UnaryOp::BitwiseNot, "bitwise_not_cpu", true, true, false);
}

Tensor& logical_not_out(const Tensor& self, Tensor& out) { return bool_op(self, out, UnaryOp::LogicalNot); }
Tensor& isnan_out(const Tensor& self, Tensor& out) { return bool_op(self, out, UnaryOp::IsNan); }
Tensor& isinf_out(const Tensor& self, Tensor& out) { return bool_op(self, out, UnaryOp::IsInf); }
Tensor& isfinite_out(const Tensor& self, Tensor& out) { return bool_op(self, out, UnaryOp::IsFinite); }

Tensor& exp_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Exp); }
Tensor& log_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Log); }
Tensor& log1p_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Log1p); }
Tensor& expm1_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Expm1); }
Tensor& log2_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Log2); }
Tensor& sqrt_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Sqrt); }
Tensor& rsqrt_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Rsqrt); }
Tensor& sin_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Sin); }
Tensor& cos_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Cos); }
Tensor& tan_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Tan); }
Tensor& tanh_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Tanh); }
Tensor& sigmoid_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Sigmoid); }
Tensor& reciprocal_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Reciprocal); }
Tensor& asin_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Asin); }
Tensor& acos_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Acos); }
Tensor& atan_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Atan); }
Tensor& sinh_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Sinh); }
Tensor& cosh_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Cosh); }
Tensor& asinh_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Asinh); }
Tensor& acosh_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Acosh); }
Tensor& atanh_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Atanh); }
Tensor& erf_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Erf); }
Tensor& erfc_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Erfc); }
Tensor& exp2_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Exp2); }
Tensor& log10_out(const Tensor& self, Tensor& out) { return float_op(self, out, UnaryOp::Log10); }

Tensor square(const Tensor& self) { return ember::pow(self, Scalar(int64_t(2))); }
Tensor& square_out(const Tensor& self, Tensor& out) {
  ember::pow_out(out, self, Scalar(int64_t(2)));
  return out;
}
Tensor& square_(Tensor& self) {
  ember::pow_(self, Scalar(int64_t(2)));
  return self;
}

}  // namespace ember::native
