#pragma once
// Derivative helpers of _fft_r2c and _fft_c2r (ops.yaml), PyTorch's formulas:
// the adjoint of a one-sided transform zero-fills (r2c) or folds the
// conjugate-symmetric half back (c2r).

#include "ember/ops/Tensor.h"

namespace ember::autograd::generated {

Tensor fft_r2c_backward(const Tensor& grad, const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided);
Tensor fft_c2r_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization);

}  // namespace ember::autograd::generated
