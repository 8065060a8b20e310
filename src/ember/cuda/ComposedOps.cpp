// CUDA entries of operators whose CPU functions loop over host memory,
// composed here of operators with CUDA kernels: fill_ with a tensor, tril and
// triu (a where over a diagonal mask), flip (index_select with reversed
// positions) and trace (the diagonal's sum). Checks and result layouts come
// from the CPU functions run on meta copies.
#include "ember/cuda/CudaContext.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {

// kernels/IndexKernels.cu: a meta tensor of t's sizes, strides and dtype.
Tensor meta_copy(const Tensor& t);

namespace {

constexpr int kCpu = static_cast<int>(DeviceType::CPU);

// fill_ with a 0-dim tensor: its value is read (one copy from the device) and filled as a number.
Tensor& fill_tensor_cuda(Tensor& self, const Tensor& value) {
  return dispatch::fill__Tensor_kernels[kCpu](self, value.dim() == 0 ? value.to(Device(DeviceType::CPU)) : value);
}

// self with the elements outside the band zeroed: tril keeps j - i <= diagonal, triu j - i >= diagonal.
Tensor& tri_cuda(Tensor& (*cpu_fn)(const Tensor&, int64_t, Tensor&), const Tensor& self, int64_t diagonal, bool lower,
                 Tensor& out) {
  Tensor meta_out = out.defined() ? meta_copy(out) : Tensor();
  cpu_fn(meta_copy(self), diagonal, meta_out);  // the CPU function's checks
  const int64_t nd = self.dim(), rows = self.sizes()[nd - 2], cols = self.sizes()[nd - 1];
  const Tensor i = ember::arange(Scalar(rows), ScalarType::Long, self.device()).reshape({rows, 1});
  const Tensor j = ember::arange(Scalar(cols), ScalarType::Long, self.device()).reshape({1, cols});
  const Tensor offset = ember::sub(j, i);
  const Tensor band = lower ? ember::le(offset, Scalar(diagonal)) : ember::ge(offset, Scalar(diagonal));
  const Tensor result = ember::where(band, self, ember::zeros({}, self.dtype(), self.device()));
  if (!out.defined()) {
    out = ember::empty(self.sizes(), self.dtype(), self.device());
  } else if (!out.is_same(self)) {
    resize_output(out, self.sizes());
  }
  out.copy_(result);
  return out;
}

Tensor& tril_cuda(const Tensor& self, int64_t diagonal, Tensor& out) {
  return tri_cuda(dispatch::tril_kernels[kCpu], self, diagonal, true, out);
}
Tensor& triu_cuda(const Tensor& self, int64_t diagonal, Tensor& out) {
  return tri_cuda(dispatch::triu_kernels[kCpu], self, diagonal, false, out);
}

Tensor flip_cuda(const Tensor& self, IntArrayRef dims) {
  const Tensor meta = dispatch::flip_kernels[kCpu](meta_copy(self), dims);  // checks the dims
  Tensor out = ember::empty_strided(meta.sizes(), meta.strides(), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  Tensor r = self;
  for (int64_t d : dims) {
    const int64_t w = maybe_wrap_dim(d, self.dim());
    const int64_t n = self.dim() == 0 ? 1 : self.sizes()[w];
    if (n > 1)
      r = ember::index_select(r, w,
                              ember::arange(Scalar(n - 1), Scalar(-1), Scalar(-1), ScalarType::Long, self.device()));
  }
  out.copy_(r);
  return out;
}

// PyTorch's CUDA trace sums the diagonal for every dtype (bool included, as int64).
Tensor trace_cuda(const Tensor& self) {
  EMBER_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return ember::sum(self.diagonal(0, 0, 1), std::optional<ScalarType>{});
}

[[maybe_unused]] const bool g_registered = [] {
  constexpr int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::fill__Tensor_kernels[cuda] = &fill_tensor_cuda;
  dispatch::tril_kernels[cuda] = &tril_cuda;
  dispatch::triu_kernels[cuda] = &triu_cuda;
  dispatch::flip_kernels[cuda] = &flip_cuda;
  dispatch::trace_kernels[cuda] = &trace_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda
