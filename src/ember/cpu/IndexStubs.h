#pragma once
// Kernels for advanced indexing (index, index_put_, index_select) and
// masked_fill, selected by CPU capability like those in Stubs.h.

#include <cstdint>
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
struct IndexGeometry {
  DimVector a_sizes, a_stride_idx, a_stride_lin;
  std::vector<int64_t> b_off_idx, b_off_lin;
  // When >= 0, b_off_lin[b] == b * b_lin_stride and b_off_lin may be empty.
  int64_t b_lin_stride = -1;
  DimVector c_sizes, c_stride_idx, c_stride_lin;
};

enum class IndexMode : int { Gather = 0, Put = 1, Accumulate = 2 };

// Gather: lin = idx[...]; Put: idx[...] = lin; Accumulate: idx[...] += lin.
using IndexFn = void (*)(const IndexGeometry& g, char* idx_base, char* lin_base, ScalarType dtype, IndexMode mode);
// In place: self[i] = value where mask[i] (an iterator over self and a bool mask).
using MaskedFillFn = void (*)(const TensorIterator& it, const Scalar& value);

// Throws PyTorch's "value cannot be converted to type ... without overflow"
// when value does not fit dtype (as its checked conversions do). Python
// assignment skips the check for float16/bfloat16, as PyTorch does.
EMBER_API void check_value_fits(ScalarType dtype, const Scalar& value, bool check_16bit_floats = true);

EMBER_DECLARE_DISPATCH(IndexFn, index_stub);
EMBER_DECLARE_DISPATCH(MaskedFillFn, masked_fill_stub);

}  // namespace ember::cpu
