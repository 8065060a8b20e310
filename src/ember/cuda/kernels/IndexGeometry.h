#pragma once
// The walk shared by the CUDA index kernels (index_select, gather, scatter,
// index_add, embedding backward, masked_fill): one thread per element of an
// iteration shape, each finding the element's offset in up to kOperands
// tensors from one linear index. Plain C++, so the host builds and tests it;
// the kernels call the same functions on the device.
#include <cstdint>

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

namespace ember::cuda {

// PyTorch's CUDA limit on tensor dimensions.
constexpr int kMaxIndexDims = 25;
constexpr int kOperands = 3;

// Iteration shape and, per operand, its strides in elements. Dimensions are
// stored innermost first, so the walk divides the linear index from the
// fastest-moving dimension outwards.
struct IndexGeometry {
  int dims = 0;
  int64_t numel = 1;
  int64_t sizes[kMaxIndexDims] = {};
  int64_t strides[kOperands][kMaxIndexDims] = {};

  // Offsets (in elements) of the element at `linear` (row-major order of the shape).
  EMBER_HOST_DEVICE void offsets(int64_t linear, int64_t (&out)[kOperands]) const {
    for (int k = 0; k < kOperands; ++k) out[k] = 0;
    for (int i = 0; i < dims; ++i) {
      const int64_t size = sizes[i];
      const int64_t coord = linear % size;
      linear /= size;
      for (int k = 0; k < kOperands; ++k) out[k] += coord * strides[k][i];
    }
  }
};

// Builds the geometry of `shape` (outermost first, as tensors store it) with
// each operand's strides (outermost first; a stride of 0 broadcasts). Size-1
// dimensions are dropped; adjacent dimensions that every operand walks
// contiguously are merged. Returns false for more than kMaxIndexDims dimensions.
inline bool make_index_geometry(const int64_t* shape, int ndim, const int64_t* const* operand_strides, int operands,
                                IndexGeometry& g) {
  g = IndexGeometry{};
  int64_t sizes[kMaxIndexDims * 2];
  int64_t strides[kOperands][kMaxIndexDims * 2];
  int n = 0;
  for (int i = ndim - 1; i >= 0; --i) {  // innermost first
    g.numel *= shape[i];
    if (shape[i] == 1) continue;
    if (n > 0) {
      // Merge with the previous (inner) dimension when stride[outer] == stride[inner] * size[inner] for all.
      bool merge = true;
      for (int k = 0; k < operands; ++k) {
        merge = merge && operand_strides[k][i] == strides[k][n - 1] * sizes[n - 1];
      }
      if (merge) {
        sizes[n - 1] *= shape[i];
        continue;
      }
    }
    if (n == kMaxIndexDims) return false;
    sizes[n] = shape[i];
    for (int k = 0; k < kOperands; ++k) strides[k][n] = k < operands ? operand_strides[k][i] : 0;
    ++n;
  }
  g.dims = n;
  for (int i = 0; i < n; ++i) {
    g.sizes[i] = sizes[i];
    for (int k = 0; k < kOperands; ++k) g.strides[k][i] = strides[k][i];
  }
  return true;
}

// Launch shape of a one-thread-per-element kernel: blocks of `threads`,
// at most `max_blocks` (a grid-stride loop covers the rest).
struct LaunchShape {
  int64_t blocks = 0;
  int threads = 0;
};

inline LaunchShape launch_shape(int64_t numel, int threads = 256, int64_t max_blocks = 65535LL * 8) {
  LaunchShape s;
  s.threads = threads;
  s.blocks = numel <= 0 ? 0 : (numel + threads - 1) / threads;
  if (s.blocks > max_blocks) s.blocks = max_blocks;
  return s;
}

}  // namespace ember::cuda
