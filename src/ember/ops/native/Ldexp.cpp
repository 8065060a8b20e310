// ldexp(self, other) = self * 2**other, with PyTorch's two routes: a floating
// self with an integral exponent is scaled exactly on devices with a kernel
// (no overflow or underflow of 2**other on the way, inf * 2**-n stays inf);
// everything else multiplies by pow(2, other) in PyTorch's dtypes.
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/LdexpStub.h"

namespace ember::native {

EMBER_DEFINE_DISPATCH(LdexpIntExponentFn, ldexp_int_exponent_stub);

namespace {

// 2**other: a number for integral and float32 selves (the default float
// dtype for an integral exponent), else a 0-dim tensor of self's dtype, so
// that ordinary promotion picks the dtype.
Tensor pow2(const Tensor& self, const Tensor& other) {
  const ScalarType st = self.dtype();
  const bool number_base = is_integral_type(st, /*include_bool=*/true) || st == ScalarType::Float;
  const Tensor base = number_base ? Tensor() : ember::full({}, Scalar(2.0), st, self.device());
  // A complex power of two is pow(2, other) in the complex dtype (2**(inf+0j) is inf+nanj; exp2 gives inf+0j).
  const ScalarType dtype = number_base ? other.dtype() : result_type({&base, &other});
  if (is_complex_type(dtype)) return ember::pow(Scalar(2.0), other.to(dtype));
  return number_base ? ember::pow(Scalar(2.0), other) : base.pow(other);
}

bool exact_route(const Tensor& self, const Tensor& other) {
  return is_integral_type(other.dtype(), /*include_bool=*/true) && is_floating_type(self.dtype()) &&
         ldexp_int_exponent_stub.for_device(self.device().type) != nullptr;
}

void run_exact(const Tensor& self, const Tensor& other, Tensor& out) {
  if (other.dtype() == ScalarType::Bool) math::not_implemented_for("ldexp_cpu_exp", ScalarType::Bool);
  TensorIterator::Config config;
  config.promote_inputs = false;
  config.out_dtype = self.dtype();
  TensorIterator it = TensorIterator::op(out, {self, other}, config);
  ldexp_int_exponent_stub(it);
}

}  // namespace

Tensor& ldexp_out(const Tensor& self, const Tensor& other, Tensor& out) {
  if (!out.defined()) {
    if (!exact_route(self, other)) {
      out = ember::mul(self, pow2(self, other));
      return out;
    }
    // PyTorch writes into empty_like(self), resized (with its warning) when
    // the exponent broadcasts self to a larger shape.
    out = ember::empty_like(self);
    run_exact(self, other, out);
    return out;
  }
  EMBER_CHECK(!is_integral_type(out.dtype(), /*include_bool=*/true), "ldexp can't be cast to the desired output type ",
              dtype_message_name(out.dtype()));
  if (exact_route(self, other)) {
    // PyTorch's kernel writes the input's dtype only (it fails an internal
    // check for any other out= dtype).
    if (other.dtype() != ScalarType::Bool) {
      EMBER_CHECK(out.dtype() == self.dtype(), "ldexp: out= of dtype ", dtype_message_name(out.dtype()),
                  " for an input of dtype ", dtype_message_name(self.dtype()), " and an integral exponent");
    }
    run_exact(self, other, out);
  } else {
    ember::mul_out(out, self, pow2(self, other));
  }
  return out;
}

}  // namespace ember::native
