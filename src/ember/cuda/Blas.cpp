// Matrix products on CUDA through cuBLAS (see Note [cuBLAS products]).
//
// Note [cuBLAS products]
// LinearAlgebra.cpp hands a batch of row-major products C = beta*C + alpha*A@B
// whose operands each have a contiguous row or column (it copies the others).
// cuBLAS is column-major, so the row-major C (m x n) is computed as the
// column-major C^T = B^T A^T: B is cuBLAS's first operand, A its second, and
// an operand stored with contiguous rows needs no transpose. float32 uses the
// precision of torch.set_float32_matmul_precision (TF32 tensor cores unless
// 'highest'); float16 and bfloat16 accumulate in float32; float64 and complex
// types in their own precision. One handle per device and thread, with its own
// workspace, runs on the current stream.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <climits>
#include <complex>
#include <memory>
#include <unordered_map>

#include "ember/core/Error.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/kernels/ReduceKernels.h"
#include "ember/ops/MatmulPrecision.h"

namespace ember::cuda {
namespace {

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

// PyTorch's wording: "CUDA error: CUBLAS_STATUS_... when calling `cublasGemmEx(...)`".
void check_cublas(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw Error(str_cat("CUDA error: ", cublas_status_name(s), " when calling `", call, "`"));
  }
}

constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // PyTorch's size for Hopper

struct Handle {
  cublasHandle_t handle = nullptr;
  void* workspace = nullptr;
  ~Handle() {
    // At process exit the driver may already be gone; errors are ignored.
    if (handle) cublasDestroy(handle);
    if (workspace) cudaFree(workspace);
    cudaGetLastError();
  }
};

// The calling thread's handle for the current device, bound to the current stream.
cublasHandle_t handle_for_current_device() {
  thread_local std::unordered_map<int, std::unique_ptr<Handle>> handles;
  const int device = current_device();
  auto& h = handles[device];
  if (!h) {
    auto fresh = std::make_unique<Handle>();
    check_cublas(cublasCreate(&fresh->handle), "cublasCreate(&handle)");
    EMBER_CUDA_CHECK(cudaMalloc(&fresh->workspace, kWorkspaceBytes));
    check_cublas(cublasSetWorkspace(fresh->handle, fresh->workspace, kWorkspaceBytes),
                 "cublasSetWorkspace(handle, workspace, size)");
    h = std::move(fresh);
  }
  check_cublas(cublasSetStream(h->handle, current_stream(device)), "cublasSetStream(handle, stream)");
  return h->handle;
}

// One operand in cuBLAS terms: op and leading dimension of the row-major
// rows x cols matrix with element strides (rs, cs).
struct Operand {
  cublasOperation_t op;
  int64_t ld;
};

Operand describe(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (cs == 1 && (rows == 1 || rs >= std::max<int64_t>(1, cols))) {
    return {CUBLAS_OP_N, rows == 1 ? std::max<int64_t>(1, cols) : rs};
  }
  if (rs == 1 && (cols == 1 || cs >= std::max<int64_t>(1, rows))) {
    return {CUBLAS_OP_T, cols == 1 ? std::max<int64_t>(1, rows) : cs};
  }
  throw Error("gemm (CUDA): an operand has neither contiguous rows nor columns; this is a bug in Ember");
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace

void gemm_kernel(const cpu::GemmArgs& g) {
  cudaDataType_t type;
  cublasComputeType_t compute;
  // alpha/beta in the compute type's scalar (float for float32/16-bit, double, complex).
  union {
    float f;
    double d;
    std::complex<float> cf;
    std::complex<double> cd;
  } alpha{}, beta{};
  const bool beta_zero = g.beta.equal(0);  // then C's old values (NaN included) are ignored
  switch (g.dtype) {
    case ScalarType::Float:
      type = CUDA_R_32F;
      compute =
          float32_matmul_precision() == MatmulPrecision::Highest ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
      alpha.f = static_cast<float>(g.alpha.to_double());
      beta.f = beta_zero ? 0.0f : static_cast<float>(g.beta.to_double());
      break;
    case ScalarType::Half:
    case ScalarType::BFloat16:
      type = g.dtype == ScalarType::Half ? CUDA_R_16F : CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      alpha.f = static_cast<float>(g.alpha.to_double());
      beta.f = beta_zero ? 0.0f : static_cast<float>(g.beta.to_double());
      break;
    case ScalarType::Double:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      alpha.d = g.alpha.to_double();
      beta.d = beta_zero ? 0.0 : g.beta.to_double();
      break;
    case ScalarType::ComplexFloat:
      type = CUDA_C_32F;
      compute = CUBLAS_COMPUTE_32F;
      alpha.cf = g.alpha.to<std::complex<float>>();
      beta.cf = beta_zero ? std::complex<float>() : g.beta.to<std::complex<float>>();
      break;
    case ScalarType::ComplexDouble:
      type = CUDA_C_64F;
      compute = CUBLAS_COMPUTE_64F;
      alpha.cd = g.alpha.to<std::complex<double>>();
      beta.cd = beta_zero ? std::complex<double>() : g.beta.to<std::complex<double>>();
      break;
    default:
      throw NotImplementedError(str_cat("\"", g.batch > 1 ? "bmm_cuda" : "addmm_cuda", "\" not implemented for '",
                                        dtype_message_name(g.dtype), "'"));
  }
  if (g.batch == 0 || g.m == 0 || g.n == 0) return;
  EMBER_CHECK(g.c_cs == 1 && g.c_rs >= std::max<int64_t>(1, g.n), "gemm (CUDA): the result must have contiguous rows");
  // C^T (n x m) = op(B^T) (n x k) * op(A^T) (k x m), column-major.
  const Operand b = describe(g.k, g.n, g.b_rs, g.b_cs);
  const Operand a = describe(g.m, g.k, g.a_rs, g.a_cs);
  const int64_t ldc = g.m == 1 ? std::max<int64_t>(1, g.n) : g.c_rs;
  EMBER_CHECK(fits_int(g.m) && fits_int(g.n) && fits_int(g.k) && fits_int(a.ld) && fits_int(b.ld) && fits_int(ldc),
              "at::cuda::blas::gemm<float> argument m, n, k, lda, ldb or ldc exceeds the int range");
  cublasHandle_t h = handle_for_current_device();
  check_cublas(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH)");
  if (g.batch == 1) {
    check_cublas(cublasGemmEx(h, b.op, a.op, int(g.n), int(g.m), int(g.k), &alpha, g.b, type, int(b.ld), g.a, type,
                              int(a.ld), &beta, g.c, type, int(ldc), compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_32F, lda, b, CUDA_R_32F, ldb, &fbeta, c, "
                 "CUDA_R_32F, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)");
    return;
  }
  EMBER_CHECK(g.batch <= INT_MAX, "bmm (CUDA): batch size exceeds the int range");
  check_cublas(cublasGemmStridedBatchedEx(h, b.op, a.op, int(g.n), int(g.m), int(g.k), &alpha, g.b, type, int(b.ld),
                                          g.b_bs, g.a, type, int(a.ld), g.a_bs, &beta, g.c, type, int(ldc), g.c_bs,
                                          int(g.batch), compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx(handle, opa, opb, m, n, k, &falpha, a, CUDA_R_32F, lda, stridea, b, "
               "CUDA_R_32F, ldb, strideb, &fbeta, c, CUDA_R_32F, ldc, stridec, num_batches, compute_type, "
               "CUBLAS_GEMM_DEFAULT_TENSOR_OP)");
}

}  // namespace ember::cuda
