#pragma once
// Kernels for sort and topk (cpu/kernels/SortKernel.cpp), selected by CPU
// capability like those in Stubs.h.

#include <cstdint>

#include "ember/core/ScalarType.h"
#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

// One line of a sort: n values of dtype at `in` (element stride in_stride)
// written sorted to `values` / `indices` (strides in elements). Stable; NaN
// sorts above every number (last ascending, first descending).
struct SortLine {
  const char* in;
  int64_t in_stride;
  char* values;
  int64_t values_stride;
  int64_t* indices;
  int64_t indices_stride;
};

// Sorts `lines` lines of n elements each, described by per_line[l]; values
// may be null (argsort).
// stable=false reproduces PyTorch's introsort, whose order of equal values
// is that algorithm's.
using SortFn = void (*)(ScalarType dtype, int64_t n, int64_t lines, bool descending, bool stable,
                        const SortLine* per_line);
// The k largest (or smallest) of each line, in order when sorted is set.
using TopkFn = void (*)(ScalarType dtype, int64_t n, int64_t k, int64_t lines, bool largest, bool sorted,
                        const SortLine* per_line);

EMBER_DECLARE_DISPATCH(SortFn, sort_stub);
EMBER_DECLARE_DISPATCH(TopkFn, topk_stub);

}  // namespace ember::cpu
