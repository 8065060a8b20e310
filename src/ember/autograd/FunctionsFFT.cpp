#include "ember/autograd/FunctionsFFT.h"

#include <vector>

#include "ember/ops/Ops.h"

namespace ember::autograd::generated {

Tensor fft_r2c_backward(const Tensor& grad, const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  // r2c = C2C of the real input, half of the output kept: zero-fill the
  // dropped half, run the adjoint C2C (the inverse one), keep the real part.
  Tensor full = grad;
  if (onesided) {
    const int64_t last = maybe_wrap_dim(dim.back(), self.dim(), false);
    const int64_t n = self.size(last), half = grad.size(last);
    if (n > half) {
      std::vector<int64_t> sizes(grad.sizes().begin(), grad.sizes().end());
      sizes[last] = n;
      full = zeros(sizes, grad.dtype(), grad.device());
      full.narrow(last, 0, half).copy_(grad);
    }
  }
  return real(_fft_c2c(full, dim, normalization, false));
}

Tensor fft_c2r_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization) {
  // c2r = fill the other half by conjugate symmetry, inverse C2C, real part:
  // the adjoint is an r2c whose terms with a mirror outside the half count twice.
  Tensor g = _fft_r2c(grad, dim, normalization, true);
  const int64_t last = maybe_wrap_dim(dim.back(), grad.dim(), false);
  const int64_t doubled = grad.size(last) - g.size(last);
  if (doubled > 0) {
    Tensor middle = g.narrow(last, 1, doubled);
    middle.copy_(middle * Scalar(2.0));
  }
  return g;
}

}  // namespace ember::autograd::generated
