// Matrix products: mm, bmm, addmm, baddbmm, addbmm, mv, addmv, dot, vdot on
// CPU, and the device-generic matmul/outer built from them.
//
// Note [BLAS operands]
// float32/float64 products go to BLAS (cpu/Blas.h). A matrix view whose rows
// or columns are contiguous is passed as it is, with the transpose flag and
// leading dimension describing its layout, so transposed inputs (x.t(),
// x.mT) are never copied; only views with neither unit stride are. Other
// dtypes use the strided loops of gemm_stub, which take any layout.
#include <algorithm>
#include <climits>
#include <complex>
#include <vector>

#include "ember/autograd/Autograd.h"
#include "ember/autograd/ForwardAD.h"
#include "ember/cpu/Blas.h"
#include "ember/cpu/OneDnnMatmul.h"
#include "ember/cpu/OpMessages.h"
#include "ember/cpu/ReduceStubs.h"
#include "ember/ops/MemoryOverlap.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(GemmFn, gemm_stub);
}  // namespace ember::cpu

namespace ember::native {

namespace {

bool use_blas(ScalarType t) { return t == ScalarType::Float || t == ScalarType::Double || is_complex_type(t); }

// Products of 16-bit floats at least this large (m*n*k) go through float32 BLAS.
constexpr int64_t kReducedGemmThroughFloat = 4096;

bool fits_int(int64_t v) { return v <= INT_MAX; }

// A matrix operand for row-major BLAS (see Note [BLAS operands]).
struct BlasMat {
  const char* data = nullptr;
  bool trans = false;
  int64_t ld = 1;
  Tensor keep;  // owns a contiguous copy when one was needed
};

// Describes a rows x cols matrix with element strides (rs, cs) at data.
BlasMat blas_operand(const char* data, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  BlasMat m;
  m.data = data;
  if (cs == 1 && (rows == 1 || rs >= std::max<int64_t>(1, cols))) {
    m.ld = rows == 1 ? std::max<int64_t>(1, cols) : rs;
    return m;
  }
  if (rs == 1 && (cols == 1 || cs >= std::max<int64_t>(1, rows))) {
    m.trans = true;
    m.ld = cols == 1 ? std::max<int64_t>(1, rows) : cs;
    return m;
  }
  m.data = nullptr;  // caller copies
  return m;
}

// False for a meta result (Note [Meta tensors]): its sizes are all there is.
// A result with data may not read from a meta operand.
bool has_data(const Tensor& result, std::initializer_list<const Tensor*> operands) {
  if (result.is_meta()) return false;
  for (const Tensor* t : operands) {
    if (t->is_meta()) {
      throw Error(str_cat("Tensor on device ", t->device().str(), " is not on the expected device ",
                          result.device().str(), "!"));
    }
  }
  return true;
}

// The CUDA product (cuBLAS, see Note [cuBLAS products] in cuda/Blas.cpp): every
// operand needs a contiguous row or column, so others are copied first.
void gemm_cuda(ScalarType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const Tensor& a_t, int64_t a_bs,
               int64_t a_rs, int64_t a_cs, const Tensor& b_t, int64_t b_bs, int64_t b_rs, int64_t b_cs,
               const Tensor& c_t, const Scalar& alpha, const Scalar& beta) {
  auto gemm = cpu::kernel_for(cpu::gemm_stub, c_t, "aten::mm");
  Tensor a_copy, b_copy;
  if (!blas_operand(static_cast<const char*>(a_t.data_ptr()), m, k, a_rs, a_cs).data) {
    a_copy = native::as_strided(a_t, {batch, m, k}, {a_bs, a_rs, a_cs}, a_t.storage_offset()).contiguous();
    a_bs = m * k, a_rs = k, a_cs = 1;
  }
  if (!blas_operand(static_cast<const char*>(b_t.data_ptr()), k, n, b_rs, b_cs).data) {
    b_copy = native::as_strided(b_t, {batch, k, n}, {b_bs, b_rs, b_cs}, b_t.storage_offset()).contiguous();
    b_bs = k * n, b_rs = n, b_cs = 1;
  }
  const void* a = (a_copy.defined() ? a_copy : a_t).data_ptr();
  const void* b = (b_copy.defined() ? b_copy : b_t).data_ptr();
  cpu::GemmArgs g{batch,          m,     n, k, a,     a_bs,  a_rs, a_cs, b, b_bs, b_rs, b_cs,
                  c_t.data_ptr(), m * n, n, 1, dtype, alpha, beta};
  gemm(g);
}

// alpha and beta as the BLAS call of a dtype takes them ('s', 'd', 'c' or 'z').
struct BlasScalars {
  union Number {
    float f;
    double d;
    std::complex<float> c;
    std::complex<double> z;
  };
  char kind;
  Number alpha{}, beta{};
  BlasScalars(ScalarType dtype, const Scalar& a, const Scalar& b, bool beta_zero)
      : kind(dtype == ScalarType::Float          ? 's'
             : dtype == ScalarType::Double       ? 'd'
             : dtype == ScalarType::ComplexFloat ? 'c'
                                                 : 'z') {
    switch (kind) {
      case 's': alpha.f = float(a.to_double()), beta.f = beta_zero ? 0.0f : float(b.to_double()); break;
      case 'd': alpha.d = a.to_double(), beta.d = beta_zero ? 0.0 : b.to_double(); break;
      case 'c':
        alpha.c = a.to<std::complex<float>>();
        beta.c = beta_zero ? std::complex<float>() : b.to<std::complex<float>>();
        break;
      default:
        alpha.z = a.to<std::complex<double>>();
        beta.z = beta_zero ? std::complex<double>() : b.to<std::complex<double>>();
    }
  }
};

// Note [Products in PyTorch's order]
// With MKL (Note [MKL for matrix products]) each product is handed to it
// exactly as PyTorch's addmm hands it: C, row-major here, is read as a
// column-major matrix of its transpose (so A and B swap places) unless it has
// one column; each operand is passed transposed or not by its strides, or
// copied when neither fits, and the leading dimensions of single rows or
// columns are normalized as PyTorch's BLAS wrapper does. The same library
// given the same call returns the same bits.
struct TorchOperand {
  bool trans = false;
  int64_t ld = 1;
  bool copy = false;
};

// strides (s0, s1) of a rows x cols matrix; lead/other are the dimensions
// the leading dimension must cover untransposed/transposed.
TorchOperand torch_operand(int64_t s0, int64_t s1, int64_t lead, int64_t other, bool tc, int64_t cols) {
  TorchOperand op;
  const int64_t near = tc ? s1 : s0, far = tc ? s0 : s1;
  if (near == 1 && far >= std::max<int64_t>(1, lead)) {
    op.trans = false;
  } else if (far == 1 && near >= std::max<int64_t>(1, other)) {
    op.trans = true;
  } else {
    op.trans = !tc, op.copy = true;
    s0 = cols, s1 = 1;  // the row-major copy
  }
  op.ld = op.trans == tc ? s1 : s0;
  return op;
}

// Note [Conjugate operands]
// mm and addmm take their matrix operands with the conjugate bit (the
// generated fallback resolves only a negative bit there), as PyTorch's
// addmm does: an operand MKL reads transposed goes to it conjugate-transposed
// (CblasConjTrans); one it reads as it lies is resolved first into the same
// layout (PyTorch's resolve_conj, a clone that keeps the strides of a dense
// tensor); one it copies is resolved by the copy. Other products get
// resolved operands.
//
// A conjugate batch of matrices (rows x cols, strides bs, rs, cs) resolved in
// its layout: the same strides when dense, else dense in the same order.
Tensor resolve_conj_in_layout(const Tensor& t, int64_t batch, int64_t rows, int64_t cols, int64_t& bs, int64_t& rs,
                              int64_t& cs) {
  const Tensor view = native::as_strided(t, {batch, rows, cols}, {bs, rs, cs}, t.storage_offset());
  if (!view.unsafeGetTensorImpl()->is_non_overlapping_and_dense()) {
    const bool by_column = rs == 1 && cs != 1;
    bs = rows * cols;
    rs = by_column ? 1 : cols;
    cs = by_column ? rows : 1;
  }
  Tensor r = ember::empty_strided({batch, rows, cols}, {bs, rs, cs}, t.dtype(), t.device());
  r.copy_(view);
  return r;
}

void gemm_torch_order(ScalarType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const Tensor& a_t, int64_t a_bs,
                      int64_t a_rs, int64_t a_cs, const Tensor& b_t, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                      const Tensor& c_t, const Scalar& alpha, const Scalar& beta, bool beta_zero) {
  const bool tc = n != 1;  // PyTorch keeps C column-major only when it has one column
  // PyTorch's first operand is B when C is transposed.
  const int64_t gm = tc ? n : m, gn = tc ? m : n;
  Tensor first = tc ? b_t : a_t, second = tc ? a_t : b_t;
  int64_t first_bs = tc ? b_bs : a_bs, second_bs = tc ? a_bs : b_bs;
  int64_t f_rs = tc ? b_rs : a_rs, f_cs = tc ? b_cs : a_cs, s_rs = tc ? a_rs : b_rs, s_cs = tc ? a_cs : b_cs;
  const int64_t f_rows = tc ? k : m, f_cols = tc ? n : k, s_rows = tc ? m : k, s_cols = tc ? k : n;
  TorchOperand A = torch_operand(f_rs, f_cs, gm, k, tc, f_cols);
  TorchOperand B = torch_operand(s_rs, s_cs, k, gn, tc, s_cols);
  // Note [Conjugate operands]
  if (first.is_conj() && !A.trans && !A.copy) {
    first = resolve_conj_in_layout(first, batch, f_rows, f_cols, first_bs, f_rs, f_cs);
    A = torch_operand(f_rs, f_cs, gm, k, tc, f_cols);
  }
  if (second.is_conj() && !B.trans && !B.copy) {
    second = resolve_conj_in_layout(second, batch, s_rows, s_cols, second_bs, s_rs, s_cs);
    B = torch_operand(s_rs, s_cs, k, gn, tc, s_cols);
  }
  const bool conj_a = first.is_conj() && !A.copy, conj_b = second.is_conj() && !B.copy;
  if (A.copy) {  // the copy resolves a conjugate
    first =
        native::as_strided(first, {batch, f_rows, f_cols}, {first_bs, f_rs, f_cs}, first.storage_offset()).contiguous();
    first_bs = f_rows * f_cols;
  }
  if (B.copy) {
    second = native::as_strided(second, {batch, s_rows, s_cols}, {second_bs, s_rs, s_cs}, second.storage_offset())
                 .contiguous();
    second_bs = s_rows * s_cols;
  }
  int64_t lda = A.ld, ldb = B.ld, ldc = tc ? n : 1;
  // PyTorch's normalize_last_dims
  if (gn == 1) ldc = gm;
  if (A.trans) {
    if (gm == 1) lda = k;
  } else if (k == 1) {
    lda = gm;
  }
  if (B.trans) {
    if (k == 1) ldb = gn;
  } else if (gn == 1) {
    ldb = k;
  }
  const BlasScalars sc(dtype, alpha, beta, beta_zero);
  const char kind = sc.kind;
  const auto &al = sc.alpha, &be = sc.beta;
  const int64_t isz = static_cast<int64_t>(element_size(dtype));
  const char* pa = static_cast<const char*>(first.data_ptr());
  const char* pb = static_cast<const char*>(second.data_ptr());
  char* pc = static_cast<char*>(c_t.data_ptr());
  auto one = [&](int64_t i) {
    blas::gemm_column_major(kind, A.trans, B.trans, int(gm), int(gn), int(k), &al, pa + i * first_bs * isz, int(lda),
                            pb + i * second_bs * isz, int(ldb), &be, pc + i * m * n * isz, int(ldc), conj_a, conj_b);
  };
  const int nthreads = get_num_threads();
  if (batch > 1 && nthreads > 1 && m * n * k <= 128 * 128 * 128 && !in_parallel_region()) {
    parallel_for(0, batch, 1, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

// beta == 0 (false for a bool): the products then ignore the input's values.
// A complex beta is zero only with both parts zero.
bool scale_is_zero(const Scalar& beta) {
  if (beta.is_bool()) return !beta.to_bool();
  return beta.is_complex() ? beta.to_complex() == std::complex<double>(0) : beta.to_double() == 0;
}

// alpha 1 and beta 0 or 1: what the oneDNN route computes.
bool simple_scales(const Scalar& alpha, const Scalar& beta) {
  if (alpha.is_complex() || beta.is_complex() || alpha.to_double() != 1) return false;
  const double b = beta.is_bool() ? double(beta.to_bool()) : beta.to_double();
  return b == 0 || b == 1;
}

// C (m x n, row-major with leading dim ldc, data c) = alpha * A @ B + beta * C
// for batch matrices: A[b] at a + b*a_bs with strides (a_rs, a_cs), etc.
// beta == 0 ignores C. `a_t`/`b_t` hold the tensors the pointers come from.
void gemm_batched(ScalarType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const Tensor& a_t, int64_t a_bs,
                  int64_t a_rs, int64_t a_cs, const Tensor& b_t, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                  const Tensor& c_t, const Scalar& alpha, const Scalar& beta) {
  if (batch == 0 || m == 0 || n == 0 || !has_data(c_t, {&a_t, &b_t})) return;
  const int64_t c_bs = m * n;
  const bool beta_zero = scale_is_zero(beta);
  if (k == 0) {
    // No products: C = beta * C (or zeros).
    if (beta_zero) {
      const_cast<Tensor&>(c_t).zero_();
    } else if (!beta.equal(1.0)) {
      Tensor scaled = c_t * wrapped_scalar(beta);
      const_cast<Tensor&>(c_t).copy_(scaled);
    }
    return;
  }
  const bool mkl_product = c_t.is_cpu() && use_blas(dtype) && fits_int(m) && fits_int(n) && fits_int(k) &&
                           blas::is_mkl() && !(dtype == ScalarType::BFloat16 || dtype == ScalarType::Half);
  if (!mkl_product && (a_t.is_conj() || b_t.is_conj())) {
    // Note [Conjugate operands]: only MKL's product reads them.
    const Tensor a = a_t.is_conj() ? resolve_conj_in_layout(a_t, batch, m, k, a_bs, a_rs, a_cs) : a_t;
    const Tensor b = b_t.is_conj() ? resolve_conj_in_layout(b_t, batch, k, n, b_bs, b_rs, b_cs) : b_t;
    gemm_batched(dtype, batch, m, n, k, a, a_bs, a_rs, a_cs, b, b_bs, b_rs, b_cs, c_t, alpha, beta);
    return;
  }
  if (c_t.is_cuda()) {
    gemm_cuda(dtype, batch, m, n, k, a_t, a_bs, a_rs, a_cs, b_t, b_bs, b_rs, b_cs, c_t, alpha, beta);
    return;
  }
  const char* a = static_cast<const char*>(a_t.data_ptr());
  const char* b = static_cast<const char*>(b_t.data_ptr());
  char* c = static_cast<char*>(c_t.data_ptr());
  const int64_t isz = static_cast<int64_t>(element_size(dtype));
  const bool reduced_float = dtype == ScalarType::BFloat16 || dtype == ScalarType::Half;
  // Note [16-bit products through oneDNN]: one product (mm, addmm) above 16^3
  if (reduced_float && batch == 1 && m * n * k > 16 * 16 * 16 && simple_scales(alpha, beta) &&
      onednn_reduced_matmul(dtype, 1, m, n, k, a, a_bs, a_rs, a_cs, b, b_bs, b_rs, b_cs, c, !beta_zero)) {
    return;
  }
  if (reduced_float && m * n * k >= kReducedGemmThroughFloat && fits_int(m) && fits_int(n) && fits_int(k)) {
    // 16-bit floats: float32 operands through BLAS, one rounding of the
    // float32 accumulator at the end (what the row loop below computes, faster).
    auto as_float = [&](const Tensor& t, int64_t rows, int64_t cols, int64_t bs, int64_t rs, int64_t cs) {
      return native::as_strided(t, {batch, rows, cols}, {bs, rs, cs}, t.storage_offset()).to(ScalarType::Float);
    };
    Tensor af = as_float(a_t, m, k, a_bs, a_rs, a_cs).contiguous();
    Tensor bf = as_float(b_t, k, n, b_bs, b_rs, b_cs).contiguous();
    Tensor cf = beta_zero
                    ? ember::empty({batch, m, n}, ScalarType::Float)
                    : native::as_strided(c_t, {batch, m, n}, {c_bs, n, 1}, c_t.storage_offset()).to(ScalarType::Float);
    gemm_batched(ScalarType::Float, batch, m, n, k, af, m * k, k, 1, bf, k * n, n, 1, cf, alpha, beta);
    native::as_strided(c_t, {batch, m, n}, {c_bs, n, 1}, c_t.storage_offset()).copy_(cf);
    return;
  }
  if (!use_blas(dtype) || !fits_int(m) || !fits_int(n) || !fits_int(k)) {
    cpu::GemmArgs g{batch, m, n, k, a, a_bs, a_rs, a_cs, b, b_bs, b_rs, b_cs, c, c_bs, n, 1, dtype, alpha, beta};
    cpu::gemm_stub.get()(g);
    return;
  }
  if (blas::is_mkl()) {  // Note [Products in PyTorch's order]
    gemm_torch_order(dtype, batch, m, n, k, a_t, a_bs, a_rs, a_cs, b_t, b_bs, b_rs, b_cs, c_t, alpha, beta, beta_zero);
    return;
  }
  BlasMat A = blas_operand(a, m, k, a_rs, a_cs);
  BlasMat B = blas_operand(b, k, n, b_rs, b_cs);
  Tensor a_copy, b_copy;
  if (!A.data) {
    // Copy every batch matrix into a contiguous block.
    a_copy = native::as_strided(a_t, {batch, m, k}, {a_bs, a_rs, a_cs}, a_t.storage_offset()).contiguous();
    A = blas_operand(static_cast<const char*>(a_copy.data_ptr()), m, k, k, 1);
    a_bs = m * k;
  }
  if (!B.data) {
    b_copy = native::as_strided(b_t, {batch, k, n}, {b_bs, b_rs, b_cs}, b_t.storage_offset()).contiguous();
    B = blas_operand(static_cast<const char*>(b_copy.data_ptr()), k, n, n, 1);
    b_bs = k * n;
  }
  auto one = [&](int64_t i) {
    const char* ap = A.data + i * a_bs * isz;
    const char* bp = B.data + i * b_bs * isz;
    char* cp = c + i * c_bs * isz;
    if (dtype == ScalarType::ComplexFloat) {
      const auto al = alpha.to<std::complex<float>>(),
                 be = beta_zero ? std::complex<float>() : beta.to<std::complex<float>>();
      blas::cgemm(A.trans, B.trans, int(m), int(n), int(k), &al, ap, int(A.ld), bp, int(B.ld), &be, cp, int(n));
    } else if (dtype == ScalarType::ComplexDouble) {
      const auto al = alpha.to<std::complex<double>>(),
                 be = beta_zero ? std::complex<double>() : beta.to<std::complex<double>>();
      blas::zgemm(A.trans, B.trans, int(m), int(n), int(k), &al, ap, int(A.ld), bp, int(B.ld), &be, cp, int(n));
    } else if (dtype == ScalarType::Float) {
      blas::sgemm(A.trans, B.trans, int(m), int(n), int(k), float(alpha.to_double()),
                  reinterpret_cast<const float*>(ap), int(A.ld), reinterpret_cast<const float*>(bp), int(B.ld),
                  beta_zero ? 0.0f : float(beta.to_double()), reinterpret_cast<float*>(cp), int(n));
    } else {
      blas::dgemm(A.trans, B.trans, int(m), int(n), int(k), alpha.to_double(), reinterpret_cast<const double*>(ap),
                  int(A.ld), reinterpret_cast<const double*>(bp), int(B.ld), beta_zero ? 0.0 : beta.to_double(),
                  reinterpret_cast<double*>(cp), int(n));
    }
  };
  // Many small products: one BLAS thread each, in parallel over the batch.
  const int nthreads = get_num_threads();
  if (batch > 1 && nthreads > 1 && m * n * k <= 128 * 128 * 128 && !in_parallel_region()) {
    blas::set_num_threads(1);
    parallel_for(0, batch, 1, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

// The dtypes a product refuses, as PyTorch's kernels do, except where there
// is nothing to compute (empty result or empty inner dim): Bool on the CPU
// (cpu_name), every integral dtype on CUDA (cuBLAS has no integer products;
// cuda_name is the PyTorch CUDA kernel's name).
void check_product_dtype(const Tensor& t, const char* cpu_name, const char* cuda_name, bool has_work = true) {
  const ScalarType dt = t.dtype();
  if (!has_work || is_floating_type(dt) || is_complex_type(dt)) return;
  if (t.is_cuda()) {
    throw NotImplementedError(str_cat("\"", cuda_name, "\" not implemented for '", dtype_message_name(dt), "'"));
  }
  if (dt == ScalarType::Bool) throw NotImplementedError(str_cat("\"", cpu_name, "\" not implemented for 'Bool'"));
}

// addmm/baddbmm/addbmm without products compute beta * self as a tensor op,
// so a beta of a wider kind than the dtype fails to cast back, as in PyTorch.
void check_beta_cast(ScalarType t, const Scalar& beta) {
  if (beta.is_bool() || scale_is_zero(beta)) return;
  EMBER_CHECK(!beta.is_floating_point() || is_floating_type(t),
              "result type Float can't be cast to the desired output "
              "type ",
              dtype_message_name(t));
  EMBER_CHECK(t != ScalarType::Bool, "result type Long can't be cast to the desired output type Bool");
}

// Hands a freshly computed result to the caller (or into out=/in-place self).
Tensor& deliver(Tensor& out, const Tensor& result) {
  if (!out.defined()) {
    out = result;
    return out;
  }
  check_out_dtype(out, result.dtype());
  if (!out.is_same(result)) {
    resize_output(out, result.sizes());
    out.copy_(result);
  }
  return out;
}

void check_mm_args(const Tensor& mat1, const Tensor& mat2, const char* first_name) {
  EMBER_CHECK(mat1.dim() == 2, first_name, " must be a matrix",
              std::string(first_name) == "mat1" ? str_cat(", got ", mat1.dim(), "-D tensor") : std::string());
  EMBER_CHECK(mat2.dim() == 2, "mat2 must be a matrix",
              std::string(first_name) == "mat1" ? str_cat(", got ", mat2.dim(), "-D tensor") : std::string());
  EMBER_CHECK(mat1.sizes()[1] == mat2.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", mat1.sizes()[0], "x",
              mat1.sizes()[1], " and ", mat2.sizes()[0], "x", mat2.sizes()[1], ")");
}

// `out` itself where the product can be written there, as PyTorch's CPU
// addmm writes its result: a dense row-major (m, n) tensor of the product's
// dtype and device sharing no memory with the operands (self may be out
// itself: the in-place form). Otherwise undefined: a new tensor is filled.
Tensor product_destination(const Tensor& out, const Tensor* self, const Tensor& mat1, const Tensor& mat2) {
  if (!out.defined() || out.dtype() != mat1.dtype() || out.device() != mat1.device() || out.dim() != 2) return {};
  if (out.sizes()[0] != mat1.sizes()[0] || out.sizes()[1] != mat2.sizes()[1] || !out.is_contiguous()) return {};
  if (overlap_status(out, mat1) != MemOverlap::kNo || overlap_status(out, mat2) != MemOverlap::kNo) return {};
  if (self && !self->is_same(out) && overlap_status(out, *self) != MemOverlap::kNo) return {};
  return out;
}

// result (m x n, contiguous: out where product_destination allows, else
// fresh) = beta * self + alpha * mat1 @ mat2.
Tensor addmm_impl(const Tensor* self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
                  const Tensor& out = Tensor()) {
  const int64_t m = mat1.sizes()[0], k = mat1.sizes()[1], n = mat2.sizes()[1];
  Tensor result = product_destination(out, self, mat1, mat2);
  if (!result.defined()) result = ember::empty({m, n}, mat1.dtype(), mat1.device());
  Scalar b = beta;
  if (self) {
    const bool beta_zero = scale_is_zero(beta);
    if (!beta_zero && !self->is_same(result)) result.copy_(self->expand({m, n}));
  } else {
    b = Scalar(int64_t(0));
  }
  gemm_batched(mat1.dtype(), 1, m, n, k, mat1, 0, mat1.strides()[0], mat1.strides()[1], mat2, 0, mat2.strides()[0],
               mat2.strides()[1], result, alpha, b);
  return result;
}

void check_bmm_args(const Tensor& b1, const Tensor& b2) {
  EMBER_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  const int64_t bs = b1.sizes()[0], k = b1.sizes()[2];
  EMBER_CHECK(b2.sizes()[0] == bs && b2.sizes()[1] == k,
              "Expected size for first two dimensions of batch2 tensor to be: [", bs, ", ", k, "] but got: [",
              b2.sizes()[0], ", ", b2.sizes()[1], "].");
}

// Note [bmm in PyTorch's order]
// PyTorch's CPU bmm/baddbmm picks its method by size: below 400
// multiply-adds per matrix a plain loop (one accumulator per element, the
// products added in order of k, no fused multiply-add: this file is compiled
// without them); above, with MKL, one batched MKL call on the operands as they
// lie; otherwise a product per matrix. Each method rounds differently, so
// Ember takes the same one.
constexpr int64_t kSmallBmmWork = 400;
constexpr int64_t kBmmGrain = 32768;  // PyTorch's GRAIN_SIZE

template <typename T>
using small_bmm_acc_t =
    std::conditional_t<std::is_integral_v<T>, uint64_t,  // wraps as the dtype does, cut to it at the end
                       std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>>;

// x * y as PyTorch's scalar types multiply: a complex product part by part,
// without C99's inf/nan recovery (std::complex's operator* recovers).
template <typename T>
inline T plain_product(T x, T y) {
  if constexpr (is_complex_t<T>::value) {
    return T(x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real());
  } else {
    return x * y;
  }
}

template <typename T>
void small_baddbmm_typed(Tensor& result, const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha,
                         bool is_bmm) {
  using Acc = small_bmm_acc_t<T>;
  auto scalar = [](const Scalar& v) -> Acc {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<Acc>(v.to_long());
    } else if constexpr (is_complex_t<T>::value) {
      return static_cast<Acc>(v.to<std::complex<double>>());
    } else {
      return static_cast<Acc>(v.to_double());
    }
  };
  const Acc al = scalar(alpha), be = is_bmm ? Acc(0) : scalar(beta);
  const bool beta_zero = is_bmm || be == Acc(0);
  const int64_t bs = result.sizes()[0], m = result.sizes()[1], n = result.sizes()[2], k = b1.sizes()[2];
  const T* A = static_cast<const T*>(b1.data_ptr());
  const T* B = static_cast<const T*>(b2.data_ptr());
  T* C = static_cast<T*>(result.data_ptr());
  const auto as = b1.strides(), bst = b2.strides();
  const int64_t grain = std::max<int64_t>(kBmmGrain / std::max<int64_t>(m * n * k, 1), 1);
  parallel_for(0, bs, grain, [&](int64_t b0, int64_t b1_end) {
    for (int64_t b = b0; b < b1_end; ++b) {
      for (int64_t i = 0; i < m; ++i) {
        const T* a = A + b * as[0] + i * as[1];
        T* c = C + (b * m + i) * n;
        for (int64_t j = 0; j < n; ++j) {
          const T* bb = B + b * bst[0] + j * bst[2];
          Acc acc = Acc(0);
          for (int64_t p = 0; p < k; ++p) {
            acc += plain_product(static_cast<Acc>(a[p * as[2]]), static_cast<Acc>(bb[p * bst[1]]));
          }
          Acc r;
          if (is_bmm) {
            r = acc;
          } else if (beta_zero) {
            r = plain_product(al, acc);
          } else {
            r = plain_product(static_cast<Acc>(c[j]), be) + plain_product(al, acc);
          }
          c[j] = static_cast<T>(r);
        }
      }
    }
  });
}

void small_baddbmm(Tensor& result, const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha,
                   bool is_bmm) {
  EMBER_DISPATCH_ALL_TYPES_AND_COMPLEX(result.dtype(), is_bmm ? "bmm" : "baddbmm", [&] {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      throw NotImplementedError(str_cat("\"", is_bmm ? "bmm" : "baddbmm", "\" not implemented for 'Bool'"));
    } else {
      small_baddbmm_typed<scalar_t>(result, b1, b2, beta, alpha, is_bmm);
    }
  });
}

// PyTorch's batched MKL product (baddbmm_with_gemm_): each matrix's rows or
// columns contiguous. False when MKL or the call's preconditions are missing.
bool mkl_baddbmm(Tensor& result, const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha,
                 bool beta_zero) {
  const ScalarType dt = result.dtype();
  if (!blas::is_mkl() || !use_blas(dt) || !result.is_cpu()) return false;
  auto items_fit = [](const Tensor& t) {
    const auto sz = t.sizes(), st = t.strides();
    return (st[2] == 1 && (sz[1] == 1 || st[1] >= sz[2])) || (st[1] == 1 && (sz[2] == 1 || st[2] >= sz[1]));
  };
  if (!items_fit(b1) || !items_fit(b2)) return false;
  auto is_transposed = [](const Tensor& t) { return t.strides()[1] == 1 && t.strides()[2] >= t.sizes()[1]; };
  // Column-major: C^T (n x m) = op(b2^T) @ op(b1^T).
  const bool ta = is_transposed(b2), tb = is_transposed(b1);
  const int64_t batch = b1.sizes()[0], m = result.sizes()[2], n = result.sizes()[1], k = b2.sizes()[1];
  int64_t lda = b2.strides()[ta ? 2 : 1], ldb = b1.strides()[tb ? 2 : 1], ldc = result.strides()[1];
  // PyTorch's normalize_last_dims
  if (n == 1) ldc = m;
  if (ta) {
    if (m == 1) lda = k;
  } else if (k == 1) {
    lda = m;
  }
  if (tb) {
    if (k == 1) ldb = n;
  } else if (n == 1) {
    ldb = k;
  }
  const bool fits = fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) && fits_int(ldc) &&
                    fits_int(batch) && lda >= std::max<int64_t>(1, ta ? k : m) &&
                    ldb >= std::max<int64_t>(1, tb ? n : k) && ldc >= std::max<int64_t>(1, m);
  if (!fits) return false;
  const BlasScalars sc(dt, alpha, beta, beta_zero);
  const char kind = sc.kind;
  const auto &al = sc.alpha, &be = sc.beta;
  const int64_t isz = static_cast<int64_t>(element_size(dt));
  const char* pa = static_cast<const char*>(b2.data_ptr());
  const char* pb = static_cast<const char*>(b1.data_ptr());
  char* pc = static_cast<char*>(result.data_ptr());
  if (batch == 1) {
    blas::gemm_column_major(kind, ta, tb, int(m), int(n), int(k), &al, pa, int(lda), pb, int(ldb), &be, pc, int(ldc));
    return true;
  }
  std::vector<const void*> a_ptrs(batch), b_ptrs(batch);
  std::vector<void*> c_ptrs(batch);
  for (int64_t i = 0; i < batch; ++i) {
    a_ptrs[i] = pa + i * b2.strides()[0] * isz;
    b_ptrs[i] = pb + i * b1.strides()[0] * isz;
    c_ptrs[i] = pc + i * result.strides()[0] * isz;
  }
  return blas::gemm_batch_column_major(kind, ta, tb, int(m), int(n), int(k), &al, a_ptrs.data(), int(lda),
                                       b_ptrs.data(), int(ldb), &be, c_ptrs.data(), int(ldc), int(batch));
}

Tensor baddbmm_impl(const Tensor* self, const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) {
  const int64_t bs = b1.sizes()[0], m = b1.sizes()[1], k = b1.sizes()[2], n = b2.sizes()[2];
  Tensor result = ember::empty({bs, m, n}, b1.dtype(), b1.device());
  Scalar b = beta;
  const bool beta_zero = !self || scale_is_zero(beta);
  if (self) {
    if (!beta_zero) result.copy_(self->expand({bs, m, n}));
  } else {
    b = Scalar(int64_t(0));
  }
  // Note [bmm in PyTorch's order]
  if (result.numel() > 0 && k > 0 && result.is_cpu() && has_data(result, {&b1, &b2})) {
    const ScalarType dt = result.dtype();
    // Note [16-bit products through oneDNN]: checked first, over the whole batch
    if ((dt == ScalarType::BFloat16 || dt == ScalarType::Half) && bs * m * n * k > 16 * 16 * 16 &&
        simple_scales(alpha, b) &&
        onednn_reduced_matmul(dt, bs, m, n, k, b1.data_ptr(), b1.strides()[0], b1.strides()[1], b1.strides()[2],
                              b2.data_ptr(), b2.strides()[0], b2.strides()[1], b2.strides()[2], result.data_ptr(),
                              !beta_zero)) {
      return result;
    }
    if (k * m * n < kSmallBmmWork) {
      small_baddbmm(result, b1, b2, b, alpha, self == nullptr);
      return result;
    }
    if (mkl_baddbmm(result, b1, b2, b, alpha, beta_zero)) return result;
  }
  gemm_batched(b1.dtype(), bs, m, n, k, b1, b1.strides()[0], b1.strides()[1], b1.strides()[2], b2, b2.strides()[0],
               b2.strides()[1], b2.strides()[2], result, alpha, b);
  return result;
}

void check_mv_args(const Tensor& mat, const Tensor& vec, int64_t input_dim, int64_t input_size) {
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1 && input_dim <= 1, "vector + matrix @ vector expected, got ", input_dim,
              ", ", mat.dim(), ", ", vec.dim());
  EMBER_CHECK(mat.sizes()[1] == vec.sizes()[0] && (mat.sizes()[0] == input_size || input_size == 1),
              "size mismatch, got input (", input_size, "), mat (", mat.sizes()[0], "x", mat.sizes()[1], "), vec (",
              vec.sizes()[0], ")");
}

// result (m, fresh) = beta * self + alpha * mat @ vec.
Tensor addmv_impl(const Tensor* self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  const int64_t m = mat.sizes()[0], n = mat.sizes()[1];
  Tensor result = ember::empty({m}, mat.dtype(), mat.device());
  const bool beta_zero = !self || scale_is_zero(beta);
  if (!beta_zero) result.copy_(self->expand({m}));
  if (m == 0 || !has_data(result, {&mat, &vec})) return result;
  const ScalarType dt = mat.dtype();
  if (use_blas(dt) && !is_complex_type(dt) && n > 0 && fits_int(m) && fits_int(n) && mat.is_cpu()) {
    BlasMat A = blas_operand(static_cast<const char*>(mat.data_ptr()), m, n, mat.strides()[0], mat.strides()[1]);
    Tensor mc;
    if (!A.data) {
      mc = mat.contiguous();
      A = blas_operand(static_cast<const char*>(mc.data_ptr()), m, n, n, 1);
    }
    Tensor v = vec.strides()[0] == 0 ? vec.contiguous() : vec;
    // A one-element vector may keep a 0 stride (contiguous() leaves it): BLAS
    // refuses incx 0, and any increment reads the one element.
    const int incx = v.sizes()[0] == 1 ? 1 : int(v.strides()[0]);
    // A.trans: memory holds mat^T (n x m).
    const int rows = A.trans ? int(n) : int(m), cols = A.trans ? int(m) : int(n);
    if (dt == ScalarType::Float) {
      blas::sgemv(A.trans, rows, cols, float(alpha.to_double()), reinterpret_cast<const float*>(A.data), int(A.ld),
                  static_cast<const float*>(v.data_ptr()), incx, beta_zero ? 0.0f : float(beta.to_double()),
                  static_cast<float*>(result.data_ptr()), 1);
    } else {
      blas::dgemv(A.trans, rows, cols, alpha.to_double(), reinterpret_cast<const double*>(A.data), int(A.ld),
                  static_cast<const double*>(v.data_ptr()), incx, beta_zero ? 0.0 : beta.to_double(),
                  static_cast<double*>(result.data_ptr()), 1);
    }
    return result;
  }
  // Everything else: a gemm with one column.
  Tensor r2 = result.view({m, 1});
  gemm_batched(dt, 1, m, 1, n, mat, 0, mat.strides()[0], mat.strides()[1], vec, 0, vec.strides()[0], 1, r2, alpha,
               beta_zero ? Scalar(int64_t(0)) : beta);
  return result;
}

// conj_self: sum conj(self) * other (vdot).
Tensor dot_impl(const Tensor& self, const Tensor& other, const char* name, bool conj_self = false) {
  EMBER_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ", other.dim(),
              "D tensors");
  EMBER_CHECK(self.dtype() == other.dtype(), name, " : expected both vectors to have same dtype, but found ",
              dtype_message_name(self.dtype()), " and ", dtype_message_name(other.dtype()));
  EMBER_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [", self.numel(), "] and src [",
              other.numel(), "] to have the same number of elements, but got ", self.numel(), " and ", other.numel(),
              " elements respectively");
  check_product_dtype(self, name, "dot");
  const ScalarType dt = self.dtype();
  const int64_t n = self.numel();
  Tensor result = ember::empty({}, dt, self.device());
  if (!has_data(result, {&self, &other})) return result;
  if (use_blas(dt) && !is_complex_type(dt) && n > 0 && fits_int(n) && self.is_cpu()) {
    Tensor a = self.strides()[0] == 0 ? self.contiguous() : self;
    Tensor b = other.strides()[0] == 0 ? other.contiguous() : other;
    if (dt == ScalarType::Float) {
      *static_cast<float*>(result.data_ptr()) =
          blas::sdot(int(n), static_cast<const float*>(a.data_ptr()), int(a.strides()[0]),
                     static_cast<const float*>(b.data_ptr()), int(b.strides()[0]));
    } else {
      *static_cast<double*>(result.data_ptr()) =
          blas::ddot(int(n), static_cast<const double*>(a.data_ptr()), int(a.strides()[0]),
                     static_cast<const double*>(b.data_ptr()), int(b.strides()[0]));
    }
    return result;
  }
  if (is_complex_type(dt) && n > 0 && fits_int(n) && self.is_cpu()) {
    // PyTorch's complex dot and vdot: MKL's [cz]dotu / [cz]dotc.
    Tensor a = self.strides()[0] == 0 ? self.contiguous() : self;
    Tensor b = other.strides()[0] == 0 ? other.contiguous() : other;
    const int inca = n == 1 ? 1 : int(a.strides()[0]), incb = n == 1 ? 1 : int(b.strides()[0]);
    if (blas::complex_dot(dt == ScalarType::ComplexFloat ? 'c' : 'z', conj_self, int(n), a.data_ptr(), inca,
                          b.data_ptr(), incb, result.data_ptr())) {
      return result;
    }
  }
  const Tensor x = conj_self ? ember::conj_physical(self) : self;
  Tensor r2 = result.view({1, 1});
  gemm_batched(dt, 1, 1, 1, n, x, 0, 0, x.strides()[0], other, 0, other.strides()[0], 1, r2, Scalar(int64_t(1)),
               Scalar(int64_t(0)));
  return result;
}

// Swaps the last two dims (a view).
Tensor mT(const Tensor& t) {
  std::vector<int64_t> perm(static_cast<size_t>(t.dim()));
  for (int64_t i = 0; i < t.dim(); ++i) perm[i] = i;
  std::swap(perm[t.dim() - 1], perm[t.dim() - 2]);
  return t.permute(perm);
}

// Backward of removing dim 0 of size 1 from the 1-D @ 2-D product, named as
// PyTorch names the node of its in-place squeeze.
struct SqueezeDimBackward final : public autograd::Node {
  int64_t dim = 0;
  std::string name() const override { return "SqueezeBackward4"; }
  autograd::variable_list apply(autograd::variable_list&& grads) override {
    autograd::variable_list out(1);
    if (grads[0].defined() && should_compute_output(0)) out[0] = grads[0].unsqueeze(dim);
    return out;
  }
};

Tensor squeeze_dim0(const Tensor& t) {
  DimVector sizes(t.sizes()), strides(t.strides());
  sizes.erase(0);
  strides.erase(0);
  const bool requires_grad = autograd::compute_requires_grad(t);
  Tensor r;
  {
    // Below autograd: an alias that autograd does not track as a view, like
    // the result of PyTorch's in-place squeeze_ on a fresh tensor.
    autograd::BelowAutogradGuard below;
    r = ember::as_strided(t, sizes, strides, t.storage_offset());
  }
  if (requires_grad) {
    auto node = std::make_shared<SqueezeDimBackward>();
    node->set_next_edges(autograd::collect_next_edges(t));
    autograd::set_history(r, node);
  }
  if (autograd::forward_ad::is_active()) {
    Tensor t_tangent = autograd::forward_ad::fw_grad(t);
    if (t_tangent.defined()) {
      autograd::forward_ad::DisableGuard no_fw;
      autograd::forward_ad::set_result_tangent(r, t_tangent.squeeze(0));
    }
  }
  return r;
}

// Whether matmul folds the batch dims of the larger operand into the rows of
// one mm/mv instead of running bmm (PyTorch's rule, so graphs match).
bool should_fold(const Tensor& t1, const Tensor& t2) {
  const bool t1_larger = t1.dim() >= t2.dim();
  const Tensor& smaller = t1_larger ? t2 : t1;
  const Tensor larger = t1_larger ? t1 : mT(t2);
  if (!(larger.dim() >= 3 && smaller.dim() <= 2)) return false;
  if (smaller.requires_grad()) return true;
  if (t1.dim() == 2) return false;
  if (larger.numel() == 0) return true;
  for (int64_t i = 0; i + 2 < larger.dim(); ++i) {
    if (larger.strides()[i] != larger.strides()[i + 1] * larger.sizes()[i + 1]) return false;
  }
  return true;
}

DimVector concat(IntArrayRef a, std::initializer_list<int64_t> b) {
  DimVector r(a);
  for (int64_t v : b) r.push_back(v);
  return r;
}

}  // namespace

Tensor& mm_out(const Tensor& self, const Tensor& mat2, Tensor& out) {
  EMBER_CHECK(self.dim() == 2, "self must be a matrix");
  EMBER_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  EMBER_CHECK(self.sizes()[1] == mat2.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", self.sizes()[0], "x",
              self.sizes()[1], " and ", mat2.sizes()[0], "x", mat2.sizes()[1], ")");
  EMBER_CHECK(self.dtype() == mat2.dtype(),
              "expected m1 and m2 to have the same dtype, but got: ", cpp_type_name(self.dtype()),
              " != ", cpp_type_name(mat2.dtype()));
  check_product_dtype(self, "addmm_impl_cpu_", "addmm_cuda",
                      self.sizes()[1] > 0 && self.sizes()[0] * mat2.sizes()[1] > 0);
  return deliver(out, addmm_impl(nullptr, self, mat2, Scalar(int64_t(0)), Scalar(int64_t(1)), out));
}

Tensor& addmm_out(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
                  Tensor& out) {
  check_mm_args(mat1, mat2, "mat1");
  EMBER_CHECK(self.dtype() == mat2.dtype(), "self and mat2 must have the same dtype, but got ",
              dtype_message_name(self.dtype()), " and ", dtype_message_name(mat2.dtype()));
  EMBER_CHECK(mat1.dtype() == mat2.dtype(), "mat1 and mat2 must have the same dtype, but got ",
              dtype_message_name(mat1.dtype()), " and ", dtype_message_name(mat2.dtype()));
  const bool work = mat1.sizes()[1] > 0 && mat1.sizes()[0] * mat2.sizes()[1] > 0;
  check_product_dtype(mat1, "addmm_impl_cpu_", "addmm_cuda", work);
  if (mat1.sizes()[1] == 0) check_beta_cast(self.dtype(), beta);
  const DimVector want{mat1.sizes()[0], mat2.sizes()[1]};
  if (out.defined() && out.is_same(self)) {
    EMBER_CHECK(self.sizes().equals(want), "Bad in-place call: input tensor size ", shape_string(self.sizes()),
                " and output tensor size ", shape_string(want), " should match");
  }
  return deliver(out, addmm_impl(&self, mat1, mat2, beta, alpha, out));
}

Tensor& bmm_out(const Tensor& self, const Tensor& mat2, Tensor& out) {
  check_bmm_args(self, mat2);
  EMBER_CHECK(self.dtype() == mat2.dtype(), "expected scalar type ", dtype_message_name(self.dtype()), " but found ",
              dtype_message_name(mat2.dtype()));
  check_product_dtype(self, "bmm", "baddbmm_cuda", self.sizes()[2] > 0 && self.numel() > 0 && mat2.numel() > 0);
  return deliver(out, baddbmm_impl(nullptr, self, mat2, Scalar(int64_t(0)), Scalar(int64_t(1))));
}

// baddbmm and addbmm read the result's sizes first, as PyTorch does: a
// batch with too few dims is an IndexError there, not the 3-D check.
void read_result_sizes(const Tensor& batch1, const Tensor& batch2) {
  maybe_wrap_dim(1, batch1.dim());
  maybe_wrap_dim(2, batch2.dim());
}

Tensor& baddbmm_out(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                    const Scalar& alpha, Tensor& out) {
  read_result_sizes(batch1, batch2);
  check_bmm_args(batch1, batch2);
  EMBER_CHECK(self.dtype() == batch1.dtype() && batch1.dtype() == batch2.dtype(), "expected scalar type ",
              dtype_message_name(self.dtype()), " but found ",
              dtype_message_name(batch1.dtype() != self.dtype() ? batch1.dtype() : batch2.dtype()));
  check_product_dtype(batch1, "baddbmm", "baddbmm_cuda",
                      batch1.sizes()[2] > 0 && batch1.numel() > 0 && batch2.numel() > 0);
  if (batch1.sizes()[2] == 0) check_beta_cast(self.dtype(), beta);
  const DimVector want{batch1.sizes()[0], batch1.sizes()[1], batch2.sizes()[2]};
  if (out.defined() && out.is_same(self)) {
    EMBER_CHECK(self.sizes().equals(want), "Bad in-place call: input tensor size ", shape_string(self.sizes()),
                " and output tensor size ", shape_string(want), " should match");
  }
  return deliver(out, baddbmm_impl(&self, batch1, batch2, beta, alpha));
}

Tensor& addbmm_out(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                   const Scalar& alpha, Tensor& out) {
  read_result_sizes(batch1, batch2);
  EMBER_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  EMBER_CHECK(batch1.sizes()[0] == batch2.sizes()[0], "batch1 and batch2 must have same number of batches, got ",
              batch1.sizes()[0], " and ", batch2.sizes()[0]);
  EMBER_CHECK(batch1.sizes()[2] == batch2.sizes()[1], "Incompatible matrix sizes for bmm (", batch1.sizes()[1], "x",
              batch1.sizes()[2], " and ", batch2.sizes()[1], "x", batch2.sizes()[2], ")");
  EMBER_CHECK(self.dtype() == batch1.dtype() && batch1.dtype() == batch2.dtype(), "expected scalar type ",
              dtype_message_name(self.dtype()), " but found ",
              dtype_message_name(batch1.dtype() != self.dtype() ? batch1.dtype() : batch2.dtype()));
  check_product_dtype(batch1, "addmm_impl_cpu_", "addmm_cuda", batch1.numel() > 0 && batch2.numel() > 0);
  if (batch1.numel() == 0 || batch2.numel() == 0) check_beta_cast(self.dtype(), beta);
  const int64_t bs = batch1.sizes()[0], m = batch1.sizes()[1], k = batch1.sizes()[2], n = batch2.sizes()[2];
  const DimVector want{m, n};
  if (out.defined() && out.is_same(self)) {
    EMBER_CHECK(self.sizes().equals(want), "Bad in-place call: input tensor size ", shape_string(self.sizes()),
                " and output tensor size ", shape_string(want), " should match");
  }
  // Sum over the batch: view the batch as extra columns of A and rows of B,
  // accumulating one product per batch into the result.
  Tensor result = ember::empty({m, n}, self.dtype(), self.device());
  const bool beta_zero = scale_is_zero(beta);
  if (!beta_zero) result.copy_(self.expand({m, n}));
  if (bs == 0) {
    if (beta_zero) {
      result.zero_();
    } else if (!beta.equal(1.0)) {
      result = result * wrapped_scalar(beta);
    }
    return deliver(out, result);
  }
  for (int64_t b = 0; b < bs; ++b) {
    Tensor a = native::as_strided(batch1, {m, k}, {batch1.strides()[1], batch1.strides()[2]},
                                  batch1.storage_offset() + b * batch1.strides()[0]);
    Tensor bb = native::as_strided(batch2, {k, n}, {batch2.strides()[1], batch2.strides()[2]},
                                   batch2.storage_offset() + b * batch2.strides()[0]);
    gemm_batched(self.dtype(), 1, m, n, k, a, 0, a.strides()[0], a.strides()[1], bb, 0, bb.strides()[0],
                 bb.strides()[1], result, alpha, b == 0 ? (beta_zero ? Scalar(int64_t(0)) : beta) : Scalar(int64_t(1)));
  }
  return deliver(out, result);
}

Tensor& mv_out(const Tensor& self, const Tensor& vec, Tensor& out) {
  check_mv_args(self, vec, 1, self.dim() == 2 ? self.sizes()[0] : 0);
  EMBER_CHECK(self.dtype() == vec.dtype(), "expected scalar type ", dtype_message_name(self.dtype()), " but found ",
              dtype_message_name(vec.dtype()));
  check_product_dtype(self, "addmv_impl_cpu", "addmv_impl_cuda", self.numel() > 0);
  return deliver(out, addmv_impl(nullptr, self, vec, Scalar(int64_t(0)), Scalar(int64_t(1))));
}

Tensor& addmv_out(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha,
                  Tensor& out) {
  check_mv_args(mat, vec, self.dim(), self.dim() == 0 ? 1 : self.sizes()[0]);
  EMBER_CHECK(self.dtype() == mat.dtype() && mat.dtype() == vec.dtype(),
              "addmv input tensors must have the same dtype, but got ", dtype_message_name(self.dtype()), ", ",
              dtype_message_name(mat.dtype()), ", and ", dtype_message_name(vec.dtype()));
  check_product_dtype(mat, "addmv_impl_cpu", "addmv_impl_cuda", mat.numel() > 0);
  if (out.defined() && out.is_same(self)) {
    EMBER_CHECK(self.dim() == 1 && self.sizes()[0] == mat.sizes()[0], "Bad in-place call: input tensor size ",
                shape_string(self.sizes()), " and output tensor size [", mat.sizes()[0], "] should match");
  }
  return deliver(out, addmv_impl(&self, mat, vec, beta, alpha));
}

// dot and vdot of conjugate operands (Note [Conjugate operands]) as PyTorch
// computes them: the other product of the stored values, or its conjugate.
Tensor dot_of_conjugates(const Tensor& self, const Tensor& other, bool vdot) {
  const bool cs = self.is_conj(), co = other.is_conj();
  if (!vdot) {
    if (cs && co) return ember::dot(self.conj(), other.conj()).conj();
    return cs ? ember::vdot(self.conj(), other) : ember::vdot(other.conj(), self);
  }
  if (cs && co) return ember::vdot(other.conj(), self.conj());
  return cs ? ember::dot(self.conj(), other) : ember::dot(self, other.conj()).conj();
}

Tensor& dot_out(const Tensor& self, const Tensor& tensor, Tensor& out) {
  if (self.is_complex() && (self.is_conj() || tensor.is_conj())) {
    return deliver(out, dot_of_conjugates(self, tensor, /*vdot=*/false));
  }
  return deliver(out, dot_impl(self, tensor, "dot"));
}

Tensor& vdot_out(const Tensor& self, const Tensor& other, Tensor& out) {
  if (self.is_complex() && (self.is_conj() || other.is_conj())) {
    return deliver(out, dot_of_conjugates(self, other, /*vdot=*/true));
  }
  return deliver(out, dot_impl(self, other, "vdot", /*conj_self=*/true));
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  EMBER_CHECK(self.dim() == 1, "outer: Expected 1-D argument self, but got ", self.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, "outer: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  return self.reshape({-1, 1}) * vec2;
}

Tensor ger(const Tensor& self, const Tensor& vec2) { return ember::outer(self, vec2); }

Tensor matmul(const Tensor& t1, const Tensor& t2) {
  const int64_t d1 = t1.dim(), d2 = t2.dim();
  EMBER_CHECK(d1 != 0 && d2 != 0, "both arguments to matmul need to be at least 1D, but they are ", d1, "D and ", d2,
              "D");
  if (d1 == 1 && d2 == 1) return t1.dot(t2);
  if (d1 == 2 && d2 == 1) return t1.mv(t2);
  if (d1 == 1 && d2 == 2) return squeeze_dim0(t1.unsqueeze(0).mm(t2));
  if (d1 == 2 && d2 == 2) return t1.mm(t2);
  if (should_fold(t1, t2)) {
    // Fold the batch dims of the larger operand into matrix rows: one mm/mv.
    const bool transpose = d2 > d1;
    const Tensor a = transpose ? mT(t2) : t1;
    const Tensor b = transpose ? (d1 == 2 ? mT(t1) : t1) : t2;
    DimVector out_shape(a.sizes());
    const int64_t last = out_shape.back();
    out_shape.erase(out_shape.size() - 1);
    const int64_t folded = product(out_shape);
    Tensor a2 = a.reshape({folded, last});
    if (b.dim() == 2) {
      out_shape.push_back(b.sizes()[1]);
      Tensor r = ember::_unsafe_view(a2.mm(b), out_shape);
      return transpose ? mT(r).contiguous() : r;
    }
    return ember::_unsafe_view(a2.mv(b), out_shape);
  }
  // Broadcast the batch dims and run one bmm.
  const int64_t n = d1 > 1 ? t1.sizes()[d1 - 2] : 1;
  const int64_t m1 = t1.sizes()[d1 - 1];
  const int64_t m2 = d2 > 1 ? t2.sizes()[d2 - 2] : t2.sizes()[0];
  const int64_t p = d2 > 1 ? t2.sizes()[d2 - 1] : 1;
  IntArrayRef batch1(t1.sizes().data(), static_cast<size_t>(std::max<int64_t>(d1 - 2, 0)));
  IntArrayRef batch2(t2.sizes().data(), static_cast<size_t>(std::max<int64_t>(d2 - 2, 0)));
  DimVector out_shape = infer_broadcast_size(batch1, batch2);
  const int64_t bp = product(out_shape);
  Tensor a = t1.expand(concat(out_shape, {n, m1})).reshape({bp, n, m1});
  Tensor b = d2 == 1 ? t2.expand(concat(out_shape, {m2})).unsqueeze(-1) : t2.expand(concat(out_shape, {m2, p}));
  b = b.reshape({bp, m2, p});
  if (d1 > 1) out_shape.push_back(n);
  if (d2 > 1) out_shape.push_back(p);
  return ember::_unsafe_view(a.bmm(b), out_shape);
}

Tensor& matmul_out(const Tensor& self, const Tensor& other, Tensor& out) {
  autograd::check_no_grad_for_out("matmul", self, other);
  Tensor r;
  {
    // out= takes no part in autograd, as in PyTorch.
    autograd::GradModeGuard guard(false);
    r = ember::matmul(self, other);
  }
  check_out_dtype(out, r.dtype());
  resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

}  // namespace ember::native
