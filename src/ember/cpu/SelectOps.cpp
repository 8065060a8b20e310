// CPU implementations of where, clamp (and clamp_min/clamp_max) and lerp.
#include <cmath>

#include "ember/cpu/ComplexStubs.h"
#include "ember/cpu/MathStubs.h"
#include "ember/cpu/OpMessages.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::native {

namespace {

using math::not_implemented_for;

bool is_nan_scalar(const std::optional<Scalar>& s) { return s && s->is_floating_point() && std::isnan(s->to_double()); }

}  // namespace

// ---- where -------------------------------------------------------------------------

Tensor& where_out(const Tensor& condition, const Tensor& self, const Tensor& other, Tensor& out) {
  EMBER_CHECK(condition.dtype() == ScalarType::Bool || condition.dtype() == ScalarType::Byte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              dtype_message_name(condition.dtype()));
  if (out.defined()) {
    Tensor a = self, b = other;
    const ScalarType t = result_type({&a, &b});
    EMBER_CHECK(out.dtype() == t, "Expected out type to be ", dtype_message_name(t), " but got ",
                dtype_message_name(out.dtype()));
  }
  TensorIterator::Config c;
  c.num_unpromoted = 1;  // the condition keeps its dtype
  auto it = TensorIterator::op(out, {condition, self, other}, c);
  cpu::where_stub(it);
  it.finish();
  return out;
}

// Python numbers take the promoted dtype of both operands, as weak scalars.
Tensor where_scalar_other(const Tensor& condition, const Tensor& self, const Scalar& other) {
  Tensor w = wrapped_scalar(other);
  return ember::where(condition, self, math::scalar_tensor_checked(other, result_type({&self, &w})));
}

Tensor where_scalar_self(const Tensor& condition, const Scalar& self, const Tensor& other) {
  Tensor w = wrapped_scalar(self);
  return ember::where(condition, math::scalar_tensor_checked(self, result_type({&w, &other})), other);
}

Tensor where_scalar(const Tensor& condition, const Scalar& self, const Scalar& other) {
  Tensor a = wrapped_scalar(self), b = wrapped_scalar(other);
  const ScalarType t = result_type({&a, &b});
  return ember::where(condition, math::scalar_tensor_checked(self, t), math::scalar_tensor_checked(other, t));
}

// ---- clamp -----------------------------------------------------------------------

namespace {

// clamp with scalar bounds (one may be absent). Bounds join type promotion
// as weak scalars; an in-place clamp may not change the dtype, and an out=
// tensor must have the result dtype.
// named: clamp_min/clamp_max, whose complex bound is refused as complex
// (clamp converts a complex bound of a floating tensor to double first).
Tensor& clamp_scalar_impl(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                          Tensor& out, bool named = false) {
  if (self.is_complex()) throw NotImplementedError("clamp is not supported for complex types");
  EMBER_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  for (const auto* bound : {&min, &max}) {
    if (!*bound || !(*bound)->is_complex()) continue;
    if (!named && is_floating_type(self.dtype())) {
      EMBER_CHECK((*bound)->to_complex().imag() == 0, "value cannot be converted to type double without overflow");
      continue;
    }
    throw NotImplementedError("clamp is not supported for complex types");
  }
  ScalarType t = self.dtype();
  if (!is_floating_type(t)) {
    Tensor lo = min ? wrapped_scalar(*min) : Tensor(), hi = max ? wrapped_scalar(*max) : Tensor();
    t = result_type({&self, &lo, &hi});
    EMBER_CHECK(t == self.dtype() || !out.defined() || !out.is_same(self), "result type ", dtype_message_name(t),
                " can't be cast to the desired output type ", cpp_type_name(self.dtype()));
  }
  EMBER_CHECK(!out.defined() || out.dtype() == t, "Found dtype ", dtype_message_name(out.defined() ? out.dtype() : t),
              " but expected ", dtype_message_name(t));
  Tensor base = self.dtype() == t ? self : self.to(t);
  auto it = TensorIterator::unary_op(out, base);
  if (t == ScalarType::Bool && !it.is_meta()) {  // the CPU kernel's check
    not_implemented_for(
        pointwise_error_name(
            it, min && max ? "clamp_scalar_cpu" : (min ? "clamp_min_scalar_cpu" : "clamp_max_scalar_cpu"),
            min && max ? "clamp_scalar_cuda" : (min ? "clamp_min_scalar_cuda" : "clamp_max_scalar_cuda")),
        t);
  }
  // The bounds convert to the result's type (PyTorch's overflow error).
  if (min) check_pointwise_scalar(it, *min, /*opmath=*/false);
  if (max) check_pointwise_scalar(it, *max, /*opmath=*/false);
  if (is_nan_scalar(min) || is_nan_scalar(max)) {
    it.output().fill_(Scalar(std::nan("")));
  } else {
    cpu::clamp_scalar_stub(it, min, max);
  }
  it.finish();
  return out;
}

// One tensor bound: PyTorch's maximum/minimum loop, whose complex refusal
// names the loop ("maximum_cpu" not implemented for 'ComplexFloat'), not
// maximum's own message.
Tensor& bound_tensor_out(const Tensor& self, const Tensor& bound, Tensor& out, bool lower, const char* name) {
  auto it = TensorIterator::binary_op(out, self, bound);
  if (is_complex_type(it.common_dtype()) && !it.is_meta()) {
    not_implemented_for(lower ? pointwise_error_name(it, "maximum_cpu", "maximum_cuda")
                              : pointwise_error_name(it, "minimum_cpu", "minimum_cuda"),
                        it.common_dtype());
  }
  run_pointwise(lower ? maximum_stub : minimum_stub, self.device().type, name, it);
  return out;
}

}  // namespace

Tensor& clamp_out(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max, Tensor& out) {
  return clamp_scalar_impl(self, min, max, out);
}
Tensor& clamp_min_out(const Tensor& self, const Scalar& min, Tensor& out) {
  return clamp_scalar_impl(self, min, std::nullopt, out, /*named=*/true);
}
Tensor& clamp_max_out(const Tensor& self, const Scalar& max, Tensor& out) {
  return clamp_scalar_impl(self, std::nullopt, max, out, /*named=*/true);
}

Tensor& clamp_tensor_out(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max,
                         Tensor& out) {
  EMBER_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  if (self.is_complex()) throw NotImplementedError("clamp is not supported for complex types");
  if (min && max) {
    auto it = TensorIterator::op(out, {self, *min, *max}, TensorIterator::Config{});
    const ScalarType t = it.common_dtype();
    if ((t == ScalarType::Bool || is_complex_type(t)) && !it.is_meta())
      not_implemented_for(pointwise_error_name(it, "clamp_cpu", "clamp_cuda"), t);
    cpu::clamp_tensor_stub(it);
    it.finish();
    return out;
  }
  return min ? bound_tensor_out(self, *min, out, true, "clamp.Tensor")
             : bound_tensor_out(self, *max, out, false, "clamp.Tensor");
}

Tensor& clamp_min_tensor_out(const Tensor& self, const Tensor& min, Tensor& out) {
  return bound_tensor_out(self, min, out, true, "clamp_min.Tensor");
}

Tensor& clamp_max_tensor_out(const Tensor& self, const Tensor& max, Tensor& out) {
  return bound_tensor_out(self, max, out, false, "clamp_max.Tensor");
}

Tensor clip(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  return ember::clamp(self, min, max);
}
Tensor clip_tensor(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return ember::clamp(self, min, max);
}
Tensor& clip_(Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  ember::clamp_(self, min, max);
  return self;
}
Tensor& clip_tensor_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  ember::clamp_(self, min, max);
  return self;
}

// ---- lerp ------------------------------------------------------------------------

namespace {
void check_same_dtype(const Tensor& self, const Tensor& t, const char* what) {
  EMBER_CHECK(self.dtype() == t.dtype(), "expected dtype ", cpp_type_name(self.dtype()), " for `", what,
              "` but got dtype ", cpp_type_name(t.dtype()));
}
}  // namespace

Tensor& lerp_scalar_out(const Tensor& self, const Tensor& end, const Scalar& weight, Tensor& out) {
  check_same_dtype(self, end, "end");
  auto it = TensorIterator::binary_op(out, self, end);
  if (is_complex_type(it.common_dtype())) {
    cpu::lerp_scalar_complex_stub(it, weight);
    it.finish();
    return out;
  }
  if (!is_floating_type(it.common_dtype())) not_implemented_for("lerp_kernel_scalar", it.common_dtype());
  check_pointwise_scalar(it, weight, /*opmath=*/true);
  cpu::lerp_scalar_stub(it, weight);
  it.finish();
  return out;
}

Tensor& lerp_tensor_out(const Tensor& self, const Tensor& end, const Tensor& weight, Tensor& out) {
  check_same_dtype(self, end, "end");
  check_same_dtype(self, weight, "weight");
  TensorIterator::Config c;
  c.exact_out_dtype = true;
  auto it = TensorIterator::op(out, {self, end, weight}, c);
  if (is_complex_type(it.common_dtype())) {
    cpu::lerp_tensor_complex_stub(it);
  } else {
    if (!is_floating_type(it.common_dtype())) not_implemented_for("lerp_kernel_tensor", it.common_dtype());
    cpu::lerp_tensor_stub(it);
  }
  it.finish();
  return out;
}

}  // namespace ember::native
