// softmax and log_softmax: argument checks and the [outer, n, inner] view
// the kernels take (cpu/kernels/SoftMaxKernel.cpp).
#include "ember/cpu/OpMessages.h"
#include "ember/cpu/ReduceStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(SoftmaxFn, softmax_stub);
EMBER_DEFINE_DISPATCH(SoftmaxBackwardFn, softmax_backward_stub);
}  // namespace ember::cpu

namespace ember::native {

namespace {

// False for a meta result (Note [Meta tensors]); a result with data may not
// be computed from a meta operand.
bool has_data(const Tensor& result, const Tensor& a, const Tensor& b) {
  if (result.is_meta()) return false;
  if (a.is_meta() || b.is_meta()) {
    throw Error(str_cat("Attempting to copy from device meta to device ", result.device().str(),
                        ", but cross-device copies are not allowed!"));
  }
  return true;
}

void split_dims(const Tensor& t, int64_t d, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1;
  inner = 1;
  n = t.dim() > 0 ? t.sizes()[d] : 1;
  for (int64_t k = 0; k < d; ++k) outer *= t.sizes()[k];
  for (int64_t k = d + 1; k < t.dim(); ++k) inner *= t.sizes()[k];
}

Tensor& softmax_forward(const Tensor& self, int64_t dim, bool half_to_float, bool log, Tensor& out) {
  // On CUDA a half input may give a float result (PyTorch's half_to_float).
  EMBER_CHECK(!half_to_float || self.is_cuda(), log ? "log_softmax" : "softmax",
              " with half to float conversion is not supported on CPU");
  EMBER_CHECK(!half_to_float || self.dtype() == ScalarType::Half, "conversion is supported for Half type only");
  const ScalarType rtype = half_to_float ? ScalarType::Float : self.dtype();
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  check_out_dtype(out, rtype);
  Tensor in = self.contiguous();
  const bool direct = !out.defined();
  Tensor result = direct ? ember::empty(self.sizes(), rtype, self.device()) : out;
  if (!direct) {
    resize_output(result, self.sizes());
    if (!result.is_contiguous() || result.dtype() != rtype || result.is_same(self)) {
      result = ember::empty(self.sizes(), rtype, self.device());
    }
  }
  if (self.numel() > 0 && has_data(result, in, in)) {
    int64_t outer, n, inner;
    split_dims(in, d, outer, n, inner);
    cpu::kernel_for(cpu::softmax_stub, in, "aten::_softmax")(in, result, outer, n, inner, log);
  }
  if (direct) {
    out = result;
  } else if (!result.is_same(out)) {
    out.copy_(result);
  }
  return out;
}

Tensor& softmax_backward(const Tensor& grad_output, const Tensor& output, int64_t dim, ScalarType input_dtype, bool log,
                         Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, output.dim());
  EMBER_CHECK(grad_output.sizes().equals(output.sizes()), "grad_output and output must have the same shape, got ",
              shape_string(grad_output.sizes()), " and ", shape_string(output.sizes()));
  Tensor y = output.contiguous();
  Tensor g = grad_output.to(output.dtype()).contiguous();
  Tensor result = ember::empty(output.sizes(), output.dtype(), output.device());
  if (output.numel() > 0 && has_data(result, g, y)) {
    int64_t outer, n, inner;
    split_dims(y, d, outer, n, inner);
    cpu::kernel_for(cpu::softmax_backward_stub, y, "aten::_softmax_backward_data")(g, y, result, outer, n, inner, log);
  }
  if (input_dtype != result.dtype()) result = result.to(input_dtype);
  if (!out.defined()) {
    out = result;
    return out;
  }
  resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace

Tensor& softmax_cpu_out(const Tensor& self, int64_t dim, bool half_to_float, Tensor& out) {
  return softmax_forward(self, dim, half_to_float, false, out);
}

Tensor& log_softmax_cpu_out(const Tensor& self, int64_t dim, bool half_to_float, Tensor& out) {
  return softmax_forward(self, dim, half_to_float, true, out);
}

Tensor& softmax_backward_cpu_out(const Tensor& grad_output, const Tensor& output, int64_t dim, ScalarType input_dtype,
                                 Tensor& out) {
  return softmax_backward(grad_output, output, dim, input_dtype, false, out);
}

Tensor& log_softmax_backward_cpu_out(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                     ScalarType input_dtype, Tensor& out) {
  return softmax_backward(grad_output, output, dim, input_dtype, true, out);
}

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  Tensor in = dtype ? self.to(*dtype) : self;
  return ember::_softmax(in, dim, false);
}

Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  Tensor in = dtype ? self.to(*dtype) : self;
  return ember::_log_softmax(in, dim, false);
}

}  // namespace ember::native
