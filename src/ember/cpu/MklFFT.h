#pragma once
// The FFT primitives through MKL's DFTI, called as PyTorch's CPU build calls
// it (Note [FFT through MKL] in MklFFT.cpp).

#include <cstdint>
#include <vector>

#include "ember/ops/Ops.h"

namespace ember::native::mkl_fft {

// Whether MKL's DFTI computes the transforms (MKL loaded, EMBER_FFT not "ember").
bool available();

// Transforms `self` along `dims` (in that order, the last one innermost) into
// a new tensor of `out_sizes` and `out_dtype`: c2c, one-sided r2c (forward)
// or one-sided c2r (backward). `out_sizes` may hold the full length of the
// last dim of an r2c; only its first n / 2 + 1 entries are written then.
Tensor exec(const Tensor& self, const std::vector<int64_t>& out_sizes, const std::vector<int64_t>& dims,
            ScalarType out_dtype, int64_t normalization, bool forward);

// Fills the entries of a full r2c spectrum beyond n / 2 + 1 along dims.back()
// from their conjugate-symmetric partners.
void fill_conjugate_symmetry(const Tensor& out, const std::vector<int64_t>& dims);

}  // namespace ember::native::mkl_fft
