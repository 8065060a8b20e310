#pragma once
// The CUDA kernel of a full (two-sided) R2C spectrum's second half
// (FftFill.cu), called by cuda/fft/SpectralOps.cpp.
#include <cstdint>
#include <vector>

#include "ember/ops/Ops.h"

namespace ember::cuda::fft {

// Fills the entries of `out` (complex64 or complex128 on CUDA) whose index
// along dims.back() is n / 2 + 1 or more with the conjugates of their
// partners: the index mirrored (i -> (size - i) % size) along every dim of
// `dims`, which lies in the first half.
void fill_conjugate_symmetry(const Tensor& out, const std::vector<int64_t>& dims);

}  // namespace ember::cuda::fft
