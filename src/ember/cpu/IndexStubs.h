#pragma once
// Kernels for advanced indexing (index, index_put_, index_select), masked_fill
// and the dim-wise indexing family (gather, scatter*, index_add/copy/fill),
// selected by CPU capability like those in Stubs.h.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "ember/core/Scalar.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

// Note [Advanced indexing geometry]
// An advanced-indexing result is walked as three nested groups of dimensions:
// outer dims A, one indirect dim B (the broadcast index tensors, flattened)
// and inner dims C. Element (a, b, c) lives at
//   indexed operand: a . a_stride_idx + b_off_idx[b] + c . c_stride_idx
//   linear operand:  a . a_stride_lin + b_off_lin[b] + c . c_stride_lin
// (strides and offsets in elements). The indexed operand is the tensor being
// indexed (read by index, written by index_put_); the linear operand is the
// result (index) or the broadcast values (index_put_).
// An allocator that leaves new elements uninitialised: offset tables are
// written in full right after they are sized.
template <typename T>
struct UninitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <typename U>
  UninitAllocator(const UninitAllocator<U>&) {}  // NOLINT
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using OffsetVector = std::vector<int64_t, UninitAllocator<int64_t>>;

struct IndexGeometry {
  DimVector a_sizes, a_stride_idx, a_stride_lin;
  OffsetVector b_off_idx, b_off_lin;
  // When >= 0, b_off_lin[b] == b * b_lin_stride and b_off_lin may be empty.
  int64_t b_lin_stride = -1;
  DimVector c_sizes, c_stride_idx, c_stride_lin;
};

enum class IndexMode : int { Gather = 0, Put = 1, Accumulate = 2 };

// Gather: lin = idx[...]; Put: idx[...] = lin; Accumulate: idx[...] += lin.
using IndexFn = void (*)(const IndexGeometry& g, char* idx_base, char* lin_base, ScalarType dtype, IndexMode mode);
// In place: self[i] = value where mask[i] (an iterator over self and a bool mask).
using MaskedFillFn = void (*)(const TensorIterator& it, const Scalar& value);

// Note [Scatter/gather geometry]
// gather, scatter (value, src, reductions) and index_add/copy/fill share one
// walk over the positions p of the index tensor. With p split into outer
// dims A, the indexed dim J (position j) and inner dims C, and x = index[p],
//   indirect operand X: a . a_x + x * j_x + c . c_x   (self of gather, out of scatter)
//   direct operand Y:   a . a_y + j * j_y + c . c_y   (out of gather, src of scatter)
//   index:              a . a_i + j * j_i + c . c_i   (int64; 0 strides where expanded)
// (strides in elements; A and C already coalesced, C innermost last). Each
// X element only receives from one (a, c) line, in increasing j: scatters
// split work over A, over the innermost C dim or over target rows (Note
// [Rows grouped by target] in cpu/kernels/IndexKernel.cpp), never over the
// j of one element, so results do not depend on the thread count; gathers
// may split J too. index_add/copy/fill pass a checked index vector with
// a_i = c_i = 0: the C rows then move whole.
// FloatSum: Sum of 16-bit floats accumulated in float, for an index that is
// one vector along J (a_i = c_i = 0) and C not empty (Note [Float sums of
// 16-bit rows] in cpu/kernels/IndexKernel.cpp).
enum class ScatterOp : int { Gather = 0, Assign, Sum, SumAlpha, Prod, Max, Min, FloatSum };

struct ScatterGeometry {
  DimVector a_sizes, a_x, a_y, a_i;
  int64_t nj = 0, j_x = 0, j_y = 0, j_i = 0;
  DimVector c_sizes, c_x, c_y, c_i;
  int64_t bound = 0;  // index values must lie in [0, bound)
  bool checked = false;  // the caller has checked every index value
  bool parallel = true;  // false when X may overlap itself (written serially)
};

// The index is one vector along J, the same at every outer and inner
// position, and C is not empty: ScatterOp::FloatSum applies.
inline bool index_is_one_vector(const ScatterGeometry& g) {
  auto zero = [](const DimVector& v) { return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; }); };
  return !g.c_sizes.empty() && zero(g.a_i) && zero(g.c_i);
}

// X op= Y (or Y = X for Gather) over g; alpha scales Y for SumAlpha. Returns
// false, having stopped early, when an index value is out of [0, bound).
using ScatterGatherFn = bool (*)(const ScatterGeometry& g, char* x, char* y, const int64_t* index, ScalarType dtype,
                                 ScatterOp op, const Scalar& alpha);

// Throws PyTorch's "value cannot be converted to type ... without overflow"
// when value does not fit dtype (as its checked conversions do). Python
// assignment skips the check for float16/bfloat16, as PyTorch does.
EMBER_API void check_value_fits(ScalarType dtype, const Scalar& value, bool check_16bit_floats = true);

EMBER_DECLARE_DISPATCH(IndexFn, index_stub);
EMBER_DECLARE_DISPATCH(MaskedFillFn, masked_fill_stub);
EMBER_DECLARE_DISPATCH(ScatterGatherFn, scatter_gather_stub);
// flip along a contiguous last dim, for `rows` rows of n elements of elem_size
// bytes (1, 2, 4, 8 or 16), row r starting at row + r * row_step elements and
// written to out + r * n: out[r * n + j] = row_r[n - 1 - j].
using FlipRowFn = void (*)(const void* row, int64_t rows, int64_t row_step, int64_t n, void* out, int64_t elem_size);
EMBER_DECLARE_DISPATCH(FlipRowFn, flip_row_stub);

}  // namespace ember::cpu
