#pragma once
// Row loops of the CSR kernels (cpu/SparseCompressedOps.cpp), compiled once
// per CPU capability in cpu/kernels/SparseCompressedKernel.cpp.

#include <cstdint>

#include "ember/core/ScalarType.h"
#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

// A CSR matrix (rows + 1 row pointers, nnz column indices, both int64, already
// checked) and two dense row-major matrices of n columns, float32 or float64.
struct CsrRowsArgs {
  const int64_t* crow;
  const int64_t* col;
  int64_t n;  // columns of the dense matrices
  int64_t k;  // rows of dense
  const void* values;  // nnz values (mm), or the rows x n left operand (sampled dot)
  const void* dense;  // K x n
  void* out;  // rows x n (mm, zeroed), or nnz values (sampled dot)
};

// mm: out[r, :] += values[e] * dense[col[e], :] for the entries e of rows [begin, end).
// sampled dot: out[e] = <values[r, :], dense[col[e], :]> for those entries.
using CsrRowsFn = void (*)(const CsrRowsArgs&, ScalarType, int64_t begin, int64_t end);

EMBER_DECLARE_DISPATCH(CsrRowsFn, csr_dense_mm_stub);
EMBER_DECLARE_DISPATCH(CsrRowsFn, csr_sampled_dot_stub);

}  // namespace ember::cpu
