#pragma once
// Kernels of the sparse compressed layouts (ember/_sparse_compressed.py),
// bound as private functions of ember._C.

#include "ember/core/Macros.h"
#include "ember/ops/Tensor.h"

namespace ember::native {

// The product of a CSR matrix (crow_indices: rows + 1, col_indices and
// values: nnz; row r holds entries crow[r] .. crow[r + 1]) with a dense
// matrix (K x N, K above every column index): a dense rows x N result.
// values and dense share a floating dtype; the indices are int32 or int64.
// Indices out of range raise RuntimeError (the layout's invariants are not
// checked when the tensor is made, as in PyTorch).
EMBER_API Tensor csr_dense_mm(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& values,
                              const Tensor& dense);

// For every stored entry k of row r and column c: the dot product of row r
// of a (rows x N) with row c of b (K x N), the gradient of a CSR product's
// values (a is the result's gradient, b the dense operand).
EMBER_API Tensor csr_sampled_dot(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& a,
                                 const Tensor& b);

}  // namespace ember::native
