#pragma once
// The host side of the CUDA scans over rows (kernels/Scan.cu): how many
// threads scan one row, chosen as PyTorch's CUDA scan chooses them, since
// the chunk of 2 * threads elements decides where 16-bit sums round.
#include <algorithm>
#include <cstdint>

namespace ember::cuda {

// log2 of the threads per row for `rows` rows of `row_size` elements: about
// sqrt(512 * row_size / rows), 16 to 512, in PyTorch's unsigned arithmetic
// (a row count 2^10 times the row size or more wraps around to 512).
inline unsigned sklansky_log_threads(uint32_t rows, uint32_t row_size) {
  uint32_t log_x = 0, log_y = 0;
  while (log_x < 31 && (uint32_t(1) << log_x) < row_size) ++log_x;
  while (log_y < 31 && (uint32_t(1) << log_y) < rows) ++log_y;
  const uint32_t diff = log_x - log_y;
  const uint32_t log_threads = (uint32_t(9) + diff) / uint32_t(2);
  return std::min<uint32_t>(std::max<uint32_t>(4, log_threads), 9);
}

}  // namespace ember::cuda
