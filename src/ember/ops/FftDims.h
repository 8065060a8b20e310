#pragma once
// The dims of an FFT operator (_fft_c2c/_fft_r2c/_fft_c2r), shared by the CPU and CUDA kernels.
#include <algorithm>
#include <vector>

#include "ember/ops/Ops.h"

namespace ember {

// dim wrapped to ndim, in order; repeated dims raise PyTorch's error.
inline std::vector<int64_t> fft_wrap_dims(IntArrayRef dim, int64_t ndim) {
  std::vector<int64_t> out;
  for (int64_t d : dim) out.push_back(maybe_wrap_dim(d, ndim, false));
  auto sorted = out;
  std::sort(sorted.begin(), sorted.end());
  EMBER_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "FFT dims must be unique");
  return out;
}

}  // namespace ember
