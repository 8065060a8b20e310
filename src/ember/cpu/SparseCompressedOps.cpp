// CPU kernels of the sparse compressed layouts: CSR times dense, and the
// sampled dot products of its values' gradient.
#include "ember/cpu/SparseCompressedOps.h"

#include <algorithm>
#include <cstdint>

#include "ember/cpu/OpMessages.h"
#include "ember/cpu/SparseCompressedStubs.h"
#include "ember/ops/Dispatch.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(CsrRowsFn, csr_dense_mm_stub);
EMBER_DEFINE_DISPATCH(CsrRowsFn, csr_sampled_dot_stub);
}  // namespace ember::cpu

namespace ember::native {

namespace {

// The indices as int64, checked: crow starts at 0, never falls, ends at nnz;
// every column index lies in [0, ncols).
// A view of int64 indices: the tensor itself, or its int64 copy, kept alive here.
struct Index {
  Tensor held;
  const int64_t* p = nullptr;
  int64_t n = 0;
  const int64_t* data() const { return p; }
  size_t size() const { return static_cast<size_t>(n); }
  bool empty() const { return n == 0; }
  int64_t front() const { return p[0]; }
  int64_t back() const { return p[n - 1]; }
  int64_t operator[](size_t i) const { return p[i]; }
  const int64_t* begin() const { return p; }
  const int64_t* end() const { return p + n; }
};

Index checked_index(const Tensor& t, const char* name) {
  EMBER_CHECK(t.device().type == DeviceType::CPU, name, ": expected a CPU tensor, got ", t.device().str());
  EMBER_CHECK(t.dim() == 1, name, ": expected a 1-D index tensor");
  EMBER_CHECK(t.dtype() == ScalarType::Long || t.dtype() == ScalarType::Int, name,
              ": expected int32 or int64 indices, got ", dtype_message_name(t.dtype()));
  Index out;
  out.held = t.to(ScalarType::Long).contiguous();
  out.p = out.held.data_ptr<int64_t>();
  out.n = out.held.numel();
  return out;
}

void check_structure(const Index& crow, const Index& col, int64_t ncols) {
  EMBER_CHECK(!crow.empty() && crow.front() == 0, "`crow_indices[..., 0] == 0` is not satisfied.");
  EMBER_CHECK(crow.back() == static_cast<int64_t>(col.size()), "`crow_indices[..., -1] == nnz` is not satisfied.");
  for (size_t r = 1; r < crow.size(); ++r) {
    EMBER_CHECK(crow[r - 1] <= crow[r],
                "`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.");
  }
  for (int64_t c : col) EMBER_CHECK(c >= 0 && c < ncols, "`0 <= col_indices < ncols` is not satisfied.");
}

void check_floating(ScalarType dt, const char* name) {
  if (dt != ScalarType::Float && dt != ScalarType::Double) {
    throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(dt), "'"));
  }
}

}  // namespace

Tensor csr_dense_mm(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& values, const Tensor& dense) {
  // A host loop over the indices and values: CPU tensors only.
  dispatch::check_cpu_only("aten::addmm", crow_indices, col_indices, values, dense);
  EMBER_CHECK(dense.dim() == 2 && values.dim() == 1, "csr_dense_mm: expected 1-D values and a 2-D dense matrix");
  EMBER_CHECK(values.dtype() == dense.dtype(), "expected scalar type ", dtype_message_name(values.dtype()),
              " but found ", dtype_message_name(dense.dtype()));
  const Index crow = checked_index(crow_indices, "csr_dense_mm");
  const Index col = checked_index(col_indices, "csr_dense_mm");
  EMBER_CHECK(values.numel() == static_cast<int64_t>(col.size()), "csr_dense_mm: values and col_indices differ in nnz");
  const int64_t k = dense.sizes()[0], n = dense.sizes()[1];
  check_structure(crow, col, k);
  const int64_t rows = static_cast<int64_t>(crow.size()) - 1;
  const Tensor b = dense.contiguous();
  const Tensor v = values.contiguous();
  Tensor out = ember::zeros({rows, n}, dense.dtype(), dense.device());
  if (rows == 0 || n == 0) return out;
  check_floating(dense.dtype(), "addmm_sparse_csr_dense");
  const cpu::CsrRowsArgs args{crow.data(), col.data(), n, k, v.data_ptr(), b.data_ptr(), out.data_ptr()};
  const int64_t nnz = static_cast<int64_t>(col.size());
  // rows in chunks of about the same work: grain by the average row length
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, (nnz / rows + 1) * n));
  const auto kernel = cpu::csr_dense_mm_stub.get();
  parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) { kernel(args, dense.dtype(), r0, r1); });
  return out;
}

Tensor csr_sampled_dot(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& a, const Tensor& b) {
  dispatch::check_cpu_only("aten::sparse_sampled_addmm", crow_indices, col_indices, a, b);
  EMBER_CHECK(a.dim() == 2 && b.dim() == 2 && a.sizes()[1] == b.sizes()[1],
              "csr_sampled_dot: expected two matrices with the same number of columns");
  EMBER_CHECK(a.dtype() == b.dtype(), "expected scalar type ", dtype_message_name(a.dtype()), " but found ",
              dtype_message_name(b.dtype()));
  const Index crow = checked_index(crow_indices, "csr_sampled_dot");
  const Index col = checked_index(col_indices, "csr_sampled_dot");
  EMBER_CHECK(static_cast<int64_t>(crow.size()) == a.sizes()[0] + 1, "csr_sampled_dot: rows differ");
  check_structure(crow, col, b.sizes()[0]);
  const int64_t rows = a.sizes()[0], n = a.sizes()[1];
  const int64_t nnz = static_cast<int64_t>(col.size());
  const Tensor ac = a.contiguous(), bc = b.contiguous();
  Tensor out = ember::zeros({nnz}, a.dtype(), a.device());
  if (nnz == 0) return out;
  check_floating(a.dtype(), "sampled_addmm");
  const cpu::CsrRowsArgs args{crow.data(), col.data(), n, b.sizes()[0], ac.data_ptr(), bc.data_ptr(), out.data_ptr()};
  const auto kernel = cpu::csr_sampled_dot_stub.get();
  parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) { kernel(args, a.dtype(), r0, r1); });
  return out;
}

}  // namespace ember::native
