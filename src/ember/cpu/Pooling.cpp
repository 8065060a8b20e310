// 2-d pooling on the CPU: argument checks (PyTorch's messages), output shapes,
// and the calls into the per-capability kernels of cpu/kernels/PoolingKernel.cpp.
#include <limits>

#include "ember/cpu/NNStubs.h"
#include "ember/cpu/ReducedFloat.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace cpu {
EMBER_DEFINE_DISPATCH(MaxPool2dFn, max_pool2d_stub);
EMBER_DEFINE_DISPATCH(MaxPool2dBackwardFn, max_pool2d_backward_stub);
EMBER_DEFINE_DISPATCH(AvgPool2dFn, avg_pool2d_stub);
EMBER_DEFINE_DISPATCH(AvgPool2dBackwardFn, avg_pool2d_backward_stub);
EMBER_DEFINE_DISPATCH(AdaptiveAvgPool2dFn, adaptive_avg_pool2d_stub);
EMBER_DEFINE_DISPATCH(AdaptiveAvgPool2dBackwardFn, adaptive_avg_pool2d_backward_stub);
}  // namespace cpu

namespace native {
namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Output length of one pooled dimension; with ceil_mode the last window must
// start inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  EMBER_CHECK(stride != 0, "stride should not be zero");
  EMBER_CHECK(pad >= 0, "pad must be non-negative, but got pad: ", pad);
  EMBER_CHECK(pad <= ((k - 1) * dil + 1) / 2, "pad should be at most half of effective kernel size, but got pad=", pad,
              ", kernel_size=", k, " and dilation=", dil);
  int64_t out = floor_div(in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

int64_t pick(IntArrayRef v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

// PyTorch keeps each window parameter in an int, refusing larger values
// before any shape check.
void check_fits_int(IntArrayRef v) {
  for (int64_t x : v) {
    EMBER_CHECK(x >= std::numeric_limits<int32_t>::min() && x <= std::numeric_limits<int32_t>::max(),
                "value cannot be converted to type int without overflow");
  }
}

// The parameters of one 2-d pooling call, checked.
struct Pool2d {
  cpu::Pool2dArgs a;
  int64_t batch, channels;
  bool batched;
};

void shape_check(const Tensor& input, const cpu::Pool2dArgs& a, int64_t channels) {
  EMBER_CHECK(a.kw > 0 && a.kh > 0, "kernel size should be greater than zero, but got kH: ", a.kh, " kW: ", a.kw);
  EMBER_CHECK(a.sw > 0 && a.sh > 0, "stride should be greater than zero, but got dH: ", a.sh, " dW: ", a.sw);
  EMBER_CHECK(a.dh > 0 && a.dw > 0, "dilation should be greater than zero, but got dilationH: ", a.dh,
              " dilationW: ", a.dw);
  const int64_t nd = input.dim();
  const bool valid = input.size(1) != 0 && input.size(2) != 0;
  EMBER_CHECK((nd == 3 && input.size(0) != 0 && valid) || (nd == 4 && valid && input.size(3) != 0),
              "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:",
              shape_string(input.sizes()));
  EMBER_CHECK(a.kw / 2 >= a.pw && a.kh / 2 >= a.ph,
              "pad should be smaller than or equal to half of kernel size, but got padW = ", a.pw, ", padH = ", a.ph,
              ", kW = ", a.kw, ", kH = ", a.kh);
  EMBER_CHECK(a.OW >= 1 && a.OH >= 1, "Given input size: (", channels, "x", a.H, "x", a.W,
              "). Calculated output size: (", channels, "x", a.OH, "x", a.OW, "). Output size is too small");
}

Pool2d max_pool_params(const Tensor& input, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                       IntArrayRef dilation, bool ceil_mode) {
  EMBER_CHECK(kernel.size() == 1 || kernel.size() == 2,
              "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  check_fits_int(kernel);
  EMBER_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2,
              "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
  check_fits_int(stride);
  EMBER_CHECK(padding.size() == 1 || padding.size() == 2,
              "max_pool2d: padding must either be a single int, or a tuple of two ints");
  check_fits_int(padding);
  EMBER_CHECK(dilation.size() == 1 || dilation.size() == 2,
              "max_pool2d: dilation must be either a single int, or a tuple of two ints");
  check_fits_int(dilation);
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4, "non-empty 3D or 4D (batch mode) tensor expected for input");
  cpu::Pool2dArgs a{};
  a.kh = pick(kernel, 0);
  a.kw = pick(kernel, 1);
  a.sh = stride.empty() ? a.kh : pick(stride, 0);
  a.sw = stride.empty() ? a.kw : pick(stride, 1);
  a.ph = pick(padding, 0);
  a.pw = pick(padding, 1);
  a.dh = pick(dilation, 0);
  a.dw = pick(dilation, 1);
  const bool batched = input.dim() == 4;
  const int64_t batch = batched ? input.size(0) : 1, channels = input.size(-3);
  a.H = input.size(-2);
  a.W = input.size(-1);
  a.OH = pooled_size(a.H, a.kh, a.ph, a.sh, a.dh, ceil_mode);
  a.OW = pooled_size(a.W, a.kw, a.pw, a.sw, a.dw, ceil_mode);
  shape_check(input, a, channels);
  a.planes = batch * channels;
  return {a, batch, channels, batched};
}

Pool2d avg_pool_params(const Tensor& input, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                       std::optional<int64_t> divisor_override) {
  EMBER_CHECK(kernel.size() == 1 || kernel.size() == 2,
              "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  check_fits_int(kernel);
  EMBER_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2,
              "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
  check_fits_int(stride);
  EMBER_CHECK(padding.size() == 1 || padding.size() == 2,
              "avg_pool2d: padding must either be a single int, or a tuple of two ints");
  check_fits_int(padding);
  EMBER_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  cpu::Pool2dArgs a{};
  a.kh = pick(kernel, 0);
  a.kw = pick(kernel, 1);
  a.sh = stride.empty() ? a.kh : pick(stride, 0);
  a.sw = stride.empty() ? a.kw : pick(stride, 1);
  a.ph = pick(padding, 0);
  a.pw = pick(padding, 1);
  a.dh = a.dw = 1;
  const bool batched = input.dim() == 4;
  const int64_t batch = batched ? input.size(-4) : 1, channels = input.size(-3);
  a.H = input.size(-2);
  a.W = input.size(-1);
  a.OH = pooled_size(a.H, a.kh, a.ph, a.sh, 1, ceil_mode);
  a.OW = pooled_size(a.W, a.kw, a.pw, a.sw, 1, ceil_mode);
  shape_check(input, a, channels);
  a.planes = batch * channels;
  return {a, batch, channels, batched};
}

DimVector pooled_shape(const Pool2d& p) {
  if (p.batched) return {p.batch, p.channels, p.a.OH, p.a.OW};
  return {p.channels, p.a.OH, p.a.OW};
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                       IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  Pool2d p = max_pool_params(self, kernel_size, stride, padding, dilation, ceil_mode);
  const ScalarType dtype = self.dtype();
  Tensor x = (is_reduced_float(dtype) ? self.to(ScalarType::Float) : self).contiguous();
  Tensor out = ember::empty(pooled_shape(p), x.dtype(), self.device());
  Tensor idx = ember::empty(pooled_shape(p), ScalarType::Long, self.device());
  if (out.numel() > 0 && !out.is_meta()) {  // a meta result has no values to compute
    cpu::max_pool2d_stub.get()(x.dtype(), x.data_ptr(), out.data_ptr(), idx.data_ptr<int64_t>(), p.a);
  }
  return {is_reduced_float(dtype) ? out.to(dtype) : out, idx};
}

Tensor max_pool2d_with_indices_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                            IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                            bool ceil_mode, const Tensor& indices) {
  Pool2d p = max_pool_params(self, kernel_size, stride, padding, dilation, ceil_mode);
  const ScalarType dtype = self.dtype();
  const ScalarType compute = is_reduced_float(dtype) ? ScalarType::Float : dtype;
  Tensor g = grad_output.to(compute).contiguous(), ix = indices.contiguous();
  EMBER_CHECK(g.numel() == p.a.planes * p.a.OH * p.a.OW && ix.numel() == g.numel(),
              "max_pool2d_with_indices_backward: grad_output and indices must have the output's shape");
  Tensor gin = ember::zeros(self.sizes(), compute, self.device());
  if (g.numel() > 0) {
    cpu::max_pool2d_backward_stub.get()(compute, g.data_ptr(), ix.data_ptr<int64_t>(), gin.data_ptr(), p.a);
  }
  return compute != dtype ? gin.to(dtype) : gin;
}

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(ember::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool2d_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  Pool2d p = avg_pool_params(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  const ScalarType dtype = self.dtype();
  // PyTorch's meta function rejects unsigned dtypes (with this text); the CPU kernel's dtype checks come later.
  EMBER_CHECK(!self.is_meta() || dtype != ScalarType::Byte, "\"avg_pool2d\" not implemented for 'torch.uint8'");
  Tensor x = (is_reduced_float(dtype) ? self.to(ScalarType::Float) : self).contiguous();
  Tensor out = ember::empty(pooled_shape(p), x.dtype(), self.device());
  if (out.numel() > 0 && !out.is_meta()) {
    cpu::avg_pool2d_stub.get()(x.dtype(), x.data_ptr(), out.data_ptr(), p.a, count_include_pad,
                               divisor_override.value_or(0));
  }
  return is_reduced_float(dtype) ? out.to(dtype) : out;
}

Tensor avg_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                               IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  Pool2d p = avg_pool_params(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  const ScalarType dtype = self.dtype();
  const ScalarType compute = is_reduced_float(dtype) ? ScalarType::Float : dtype;
  Tensor g = grad_output.to(compute).contiguous();
  EMBER_CHECK(g.numel() == p.a.planes * p.a.OH * p.a.OW,
              "avg_pool2d_backward: grad_output must have the output's shape");
  Tensor gin = ember::zeros(self.sizes(), compute, self.device());
  if (g.numel() > 0) {
    cpu::avg_pool2d_backward_stub.get()(compute, g.data_ptr(), gin.data_ptr(), p.a, count_include_pad,
                                        divisor_override.value_or(0));
  }
  return compute != dtype ? gin.to(dtype) : gin;
}

namespace {
cpu::Pool2dArgs adaptive_params(const Tensor& input, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ",
              shape_string(input.sizes()));
  for (int64_t d = input.dim() - 2; d < input.dim(); ++d) {
    EMBER_CHECK(input.size(d) > 0,
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input "
                "has sizes ",
                shape_string(input.sizes()), " with dimension ", d, " being empty");
  }
  EMBER_CHECK(output_size[0] >= 0 && output_size[1] >= 0,
              "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {",
              output_size[0], ", ", output_size[1], "}");
  cpu::Pool2dArgs a{};
  a.planes = input.numel() / (input.size(-1) * input.size(-2));
  a.H = input.size(-2);
  a.W = input.size(-1);
  a.OH = output_size[0];
  a.OW = output_size[1];
  return a;
}
}  // namespace

Tensor adaptive_avg_pool2d_cpu(const Tensor& self, IntArrayRef output_size) {
  cpu::Pool2dArgs a = adaptive_params(self, output_size);
  const ScalarType dtype = self.dtype();
  Tensor x = (is_reduced_float(dtype) ? self.to(ScalarType::Float) : self).contiguous();
  DimVector shape(self.sizes());
  shape[shape.size() - 2] = a.OH;
  shape[shape.size() - 1] = a.OW;
  Tensor out = ember::empty(shape, x.dtype(), self.device());
  if (out.numel() > 0 && !out.is_meta())
    cpu::adaptive_avg_pool2d_stub.get()(x.dtype(), x.data_ptr(), out.data_ptr(), a);
  return is_reduced_float(dtype) ? out.to(dtype) : out;
}

Tensor adaptive_avg_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self) {
  EMBER_CHECK(grad_output.dim() == self.dim(),
              "adaptive_avg_pool2d_backward(): grad_output and input must have the "
              "same number of dimensions");
  cpu::Pool2dArgs a = adaptive_params(self, {grad_output.size(-2), grad_output.size(-1)});
  const ScalarType dtype = self.dtype();
  const ScalarType compute = is_reduced_float(dtype) ? ScalarType::Float : dtype;
  Tensor g = grad_output.to(compute).contiguous();
  Tensor gin = ember::zeros(self.sizes(), compute, self.device());
  if (g.numel() > 0) cpu::adaptive_avg_pool2d_backward_stub.get()(compute, g.data_ptr(), gin.data_ptr(), a);
  return compute != dtype ? gin.to(dtype) : gin;
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
  if (output_size[0] == 1 && output_size[1] == 1 && (self.dim() == 3 || self.dim() == 4)) {
    // A global average is a mean over the last two dims (as in PyTorch, also for its grad_fn).
    return ember::mean(self, std::vector<int64_t>{-1, -2}, /*keepdim=*/true, std::nullopt);
  }
  return ember::_adaptive_avg_pool2d(self, output_size);
}

}  // namespace native
}  // namespace ember
