#pragma once
// Index arithmetic of the CUDA elementwise loops, usable from host and
// device code: the iteration space of a TensorIterator (innermost dim
// first, byte strides per operand), its split into pieces that 32-bit
// offsets can address, and the per-operand byte offsets of a linear index
// computed with division by multiplication (magic numbers).

#include <cstdint>
#include <cstdlib>

#include "ember/ops/TensorIterator.h"

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

namespace ember::cuda {

constexpr int kMaxIterDims = 25;  // as PyTorch's MAX_DIMS
constexpr int kMaxIterArgs = 4;  // TensorIterator::kMaxOperands

// Unsigned 32-bit division by a fixed divisor: q = (umulhi(n, m) + n) >> s
// with s = ceil(log2 d) and m = floor(2^32 (2^s - d) / d) + 1 (Granlund and
// Montgomery). Exact for n < 2^31, which 32-bit indexing guarantees.
struct IntDivider {
  uint32_t divisor = 1;
  uint32_t magic = 0;
  uint32_t shift = 0;

  IntDivider() = default;
  explicit IntDivider(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint64_t{1} << shift) < d) ++shift;
    const uint64_t one = 1;
    magic = static_cast<uint32_t>(((one << 32) * ((one << shift) - d)) / d + 1);
  }
  EMBER_HOST_DEVICE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, magic);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic) >> 32);
#endif
    return (hi + n) >> shift;
  }
  EMBER_HOST_DEVICE uint32_t mod(uint32_t n) const { return n - div(n) * divisor; }
};

// The iteration space: sizes innermost first, byte strides per operand, and
// each operand's byte offset from its data pointer (non-zero in the pieces of
// a split).
struct IterGeometry {
  int ndim = 0;
  int nargs = 0;
  int64_t sizes[kMaxIterDims] = {};
  int64_t strides[kMaxIterDims][kMaxIterArgs] = {};
  int64_t base_offsets[kMaxIterArgs] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= sizes[d];
    return n;
  }
  // Largest byte offset operand k reaches, relative to its base offset.
  int64_t max_offset(int k) const {
    int64_t m = 0;
    for (int d = 0; d < ndim; ++d) m += (sizes[d] - 1) * std::llabs(strides[d][k]);
    return m;
  }
  // Whether linear indices and every operand's offsets fit in int32.
  bool can_use_32bit_indexing() const {
    constexpr int64_t kMax = INT32_MAX;
    if (numel() > kMax) return false;
    for (int k = 0; k < nargs; ++k) {
      if (max_offset(k) > kMax) return false;
    }
    return true;
  }
  // Whether every operand steps by elem_size[k] bytes along a single dim
  // (stride-0 operands, broadcast numbers, are allowed where zero_ok[k]).
  bool is_contiguous(const int64_t* elem_size, unsigned stride0_mask) const {
    if (ndim > 1) return false;
    for (int k = 0; k < nargs; ++k) {
      const int64_t s = ndim == 0 ? elem_size[k] : strides[0][k];
      if (!(s == elem_size[k] || ((stride0_mask >> k & 1u) && s == 0))) return false;
    }
    return true;
  }
  // Halves the dim with the largest byte extent: *this keeps the first half,
  // the second half is returned.
  IterGeometry split_largest() {
    int best = -1;
    int64_t best_extent = -1;
    for (int d = 0; d < ndim; ++d) {
      if (sizes[d] < 2) continue;
      int64_t extent = sizes[d];  // numel alone can be too large
      for (int k = 0; k < nargs; ++k) {
        const int64_t e = sizes[d] * std::llabs(strides[d][k]);
        if (e > extent) extent = e;
      }
      if (extent > best_extent) best_extent = extent, best = d;
    }
    IterGeometry second = *this;
    if (best < 0) return second;
    const int64_t half = sizes[best] / 2;
    sizes[best] = half;
    second.sizes[best] -= half;
    for (int k = 0; k < nargs; ++k) second.base_offsets[k] += half * strides[best][k];
    return second;
  }
};

// The geometry of an iterator's operands (outputs first).
inline IterGeometry make_geometry(const TensorIterator& it) {
  IterGeometry g;
  const IntArrayRef shape = it.iter_shape();
  const int ndim = static_cast<int>(shape.size());
  EMBER_CHECK(ndim <= kMaxIterDims, "CUDA elementwise kernels take at most ", kMaxIterDims, " dims, got ", ndim);
  g.ndim = ndim;
  g.nargs = it.ntensors();
  for (int d = 0; d < ndim; ++d) {
    const int outer = ndim - 1 - d;  // iter_shape is outermost first
    g.sizes[d] = shape[outer];
    for (int k = 0; k < g.nargs; ++k) g.strides[d][k] = it.iter_stride(outer, k);
  }
  return g;
}

// Calls fn(piece) for pieces of g that each can use 32-bit indexing.
template <typename Fn>
void for_each_32bit_piece(IterGeometry g, const Fn& fn) {
  if (g.numel() == 0) return;
  if (g.can_use_32bit_indexing()) {
    fn(g);
    return;
  }
  IterGeometry second = g.split_largest();
  for_each_32bit_piece(g, fn);
  for_each_32bit_piece(second, fn);
}

// Byte offsets of operands for a linear index of a 32-bit piece.
template <int NARGS>
struct OffsetCalculator {
  int ndim = 0;
  IntDivider sizes[kMaxIterDims];
  uint32_t strides[kMaxIterDims][NARGS > 0 ? NARGS : 1] = {};

  OffsetCalculator() = default;
  // Strides must fit 32-bit indexing (g.can_use_32bit_indexing()); stride
  // signs are kept as their two's complement, which the wrapping sums undo.
  explicit OffsetCalculator(const IterGeometry& g) : ndim(g.ndim) {
    for (int d = 0; d < g.ndim; ++d) {
      sizes[d] = IntDivider(static_cast<uint32_t>(g.sizes[d]));
      for (int k = 0; k < NARGS; ++k) strides[d][k] = static_cast<uint32_t>(g.strides[d][k]);
    }
  }
  struct Offsets {
    uint32_t v[NARGS > 0 ? NARGS : 1];
  };
  EMBER_HOST_DEVICE Offsets get(uint32_t linear) const {
    Offsets o{};
    for (int d = 0; d < ndim; ++d) {  // not unrolled: compile time over a few cycles
      const uint32_t q = sizes[d].div(linear);
      const uint32_t r = linear - q * sizes[d].divisor;
      linear = q;
      for (int k = 0; k < NARGS; ++k) o.v[k] += r * strides[d][k];
    }
    return o;
  }
};

}  // namespace ember::cuda
