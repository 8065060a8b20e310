// CPU pointwise operators with their own kernels (cpu/kernels/FusedPointwiseKernel.cpp):
// addcmul, addcdiv, addr and nan_to_num; and isclose, built from other operators.
#include <complex>
#include <limits>

#include "ember/cpu/ComplexStubs.h"
#include "ember/cpu/FusedPointwiseStubs.h"
#include "ember/cpu/OpMessages.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(AddcFn, addc_stub);
EMBER_DEFINE_DISPATCH(AddrFn, addr_stub);
EMBER_DEFINE_DISPATCH(NanToNumFn, nan_to_num_stub);
}  // namespace ember::cpu

namespace ember::native {

// ---- addcmul / addcdiv ----------------------------------------------------------------------------

namespace {
// complex32 rounds after each complex operation (PyTorch's scalar loop):
// value * t1, then times t2, then plus self.
Tensor& addcmul_complex32(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value, Tensor& out) {
  const auto wide = [](const Tensor& z) { return z.to(ScalarType::ComplexFloat); };
  const auto round = [&](const Tensor& z) { return wide(z.to(ScalarType::ComplexHalf)); };
  const Tensor v = round(ember::scalar_tensor(value, ScalarType::ComplexFloat, self.device()));
  const Tensor r = ember::add(wide(self), round(ember::mul(round(ember::mul(v, wide(t1))), wide(t2))));
  if (!out.defined()) return out = r.to(ScalarType::ComplexHalf);
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor& addc_impl(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value, bool divide,
                  Tensor& out) {
  if (result_type({&self, &t1, &t2}) == ScalarType::ComplexHalf) {
    if (divide) throw NotImplementedError("\"addcdiv_cpu_out\" not implemented for 'ComplexHalf'");
    return addcmul_complex32(self, t1, t2, value, out);
  }
  if (divide && is_integral_type(t1.dtype(), true) && is_integral_type(t2.dtype(), true)) {
    throw Error(
        "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
        "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value "
        "* torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
        "tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value "
        "* tensor1 / tensor2), for all dtypes.");
  }
  TensorIterator::Config c;
  c.allow_cpu_scalars = !divide;  // as PyTorch's iterators of addcmul and addcdiv
  auto it = TensorIterator::op(out, {self, t1, t2}, c);
  if (!divide && it.output().device().is_cuda()) {
    // PyTorch's CUDA addcmul takes a CPU number as tensor2 only.
    const auto cpu_scalar = [](const Tensor& t) { return t.dim() == 0 && t.is_cpu(); };
    EMBER_CHECK(!cpu_scalar(self),
                "CPU Scalar support for self argument is not supported when calling addcmul on CUDA "
                "tensors.");
    EMBER_CHECK(!cpu_scalar(t1),
                "CPU Scalar support for tensor1 argument is not supported when calling addcmul on "
                "CUDA tensors. However, CPU Scalar support for tensor2 is supported, please swap your "
                "tensor1 and tensor2 terms.");
  }
  if (it.common_dtype() == ScalarType::Bool) {
    throw NotImplementedError(
        str_cat("\"", divide ? "addcdiv_cpu_out" : "addcmul_cpu_out", "\" not implemented for 'Bool'"));
  }
  check_pointwise_scalar(it, value, /*opmath=*/true);
  if (is_complex_type(it.common_dtype())) {
    cpu::addc_complex_stub(it, value, divide);
  } else {
    cpu::addc_stub(it, value, divide);
  }
  it.finish();
  return out;
}
}  // namespace

Tensor& addcmul_out(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                    Tensor& out) {
  return addc_impl(self, tensor1, tensor2, value, false, out);
}

Tensor& addcdiv_out(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                    Tensor& out) {
  return addc_impl(self, tensor1, tensor2, value, true, out);
}

// ---- addr -----------------------------------------------------------------------------------------

// beta * self + alpha * vec1 * vec2, self already (n, m) and all three of one
// dtype: float and double on the CPU by PyTorch's loops (Note [addr in
// PyTorch's forms]); other dtypes and devices op by op in the dtype, as
// PyTorch's scalar loop (a beta of 0 ignores self, NaN included).
Tensor addr_arithmetic(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
                       const Scalar& alpha) {
  const ScalarType dtype = self.dtype();
  const Tensor col = vec1.unsqueeze(1), row = vec2.unsqueeze(0);
  if (self.is_cpu() && (dtype == ScalarType::Float || dtype == ScalarType::Double)) {
    Tensor out = ember::empty(self.sizes(), dtype);  // contiguous, as PyTorch's result
    auto it = TensorIterator::op(out, {self, col, row}, TensorIterator::Config{});
    cpu::addr_stub(it, beta.to_double(), alpha.to_double());
    it.finish();
    return out;
  }
  const auto number = [&](const Scalar& v) { return ember::full({}, v, dtype, self.device()); };
  const Tensor product = (number(alpha) * col) * row;
  const bool beta_zero = beta.is_complex() ? beta.to_complex() == std::complex<double>(0) : beta.to_double() == 0;
  return beta_zero ? product : number(beta) * self + product;
}

// ---- isclose, nan_to_num ---------------------------------------------------------------------------

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(self.dtype() == other.dtype(), dtype_message_name(self.dtype()), " did not match ",
              dtype_message_name(other.dtype()));
  EMBER_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  EMBER_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  // A tolerance is a Python number: a double that takes the tensor's dtype
  // without a range check (a huge rtol gives inf, not an error).
  auto weak = [&](const Tensor& like, double v) {
    Tensor t = ember::scalar_tensor(Scalar(v), ScalarType::Double, like.device());
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
    return t;
  };
  Tensor close = ember::eq(self, other);
  const bool inexact = is_floating_type(self.dtype()) || self.is_complex();
  if (equal_nan && inexact) {
    close = ember::logical_or(close, ember::logical_and(ember::isnan(self), ember::isnan(other)));
  }
  if (rtol == 0 && atol == 0) return close;
  if (!inexact) {
    // Integers and bools compare in the default float type, as PyTorch.
    Tensor a = self.to(ScalarType::Float), b = other.to(ScalarType::Float);
    Tensor diff = ember::abs(ember::sub(a, b));
    Tensor allowed = ember::add(ember::abs(ember::mul(b, weak(b, rtol))), weak(b, atol));
    return ember::logical_or(close, ember::le(diff, allowed));
  }
  Tensor diff = ember::abs(ember::sub(self, other));
  Tensor allowed = ember::add(ember::abs(ember::mul(other, weak(other, rtol))), weak(other, atol));
  Tensor finite = ember::logical_and(ember::isfinite(diff), ember::le(diff, allowed));
  return ember::logical_or(close, finite);
}

Tensor& nan_to_num_out(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                       std::optional<double> neginf, Tensor& out) {
  // In place on an integer tensor there is nothing to write: no overlap check.
  if (out.is_same(self) && !self.is_complex() && !is_floating_type(self.dtype())) return out;
  auto it = TensorIterator::unary_op(out, self);
  if (self.is_complex()) {
    // The real and imaginary parts each, as PyTorch.
    if (it.is_meta()) return out;
    Tensor parts = ember::nan_to_num(ember::view_as_real(self.resolve_conj().contiguous()), nan, posinf, neginf);
    out.copy_(ember::view_as_complex(parts));
    return out;
  }
  if (!is_floating_type(self.dtype())) {
    if (!out.is_same(self)) out.copy_(self);
    return out;
  }
  double big = 0;
  switch (self.dtype()) {
    case ScalarType::Half: big = 65504.0; break;
    case ScalarType::BFloat16: big = 3.3895313892515355e38; break;
    case ScalarType::Float: big = std::numeric_limits<float>::max(); break;
    default: big = std::numeric_limits<double>::max(); break;
  }
  cpu::nan_to_num_stub(it, nan.value_or(0.0), posinf.value_or(big), neginf.value_or(-big));
  it.finish();
  return out;
}

}  // namespace ember::native
