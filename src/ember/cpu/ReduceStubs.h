#pragma once
// Reduction, scan, softmax and GEMM kernels selected by CPU capability. The
// kernels live in cpu/kernels/{Reduce,ReduceStats,Scan,SoftMax,Gemm}Kernel.cpp
// (the loop driver in cpu/kernels/ReduceEngine.h); the native functions that
// prepare their arguments in cpu/ReduceOps.cpp, cpu/SoftMax.cpp and
// cpu/LinearAlgebra.cpp.

#include <optional>

#include "ember/core/DimVector.h"
#include "ember/core/Scalar.h"
#include "ember/ops/Dispatch.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/Tensor.h"

namespace ember::cpu {

// The stub's kernel for the device `t` lives on (the CUDA entry is filled
// when libember_cuda loads); PyTorch's NotImplementedError naming `op`
// ("aten::cumsum") when it has none.
template <typename Fn>
Fn kernel_for(const DispatchStub<Fn>& stub, const TensorBase& t, const char* op) {
  Fn fn = stub.for_device(t.device().type);
  if (!fn) dispatch::missing_kernel(op, t.device().type);
  return fn;
}

// Note [Reduction plan]
// A reduction reads one input and writes a contiguous output with one element
// per combination of kept dims. The input's dims are split into kept dims and
// reduced dims; each group is coalesced (dims that step evenly merge) and
// size-1 dims are dropped. Strides are in elements.
//  - kept dims stay in output order (outermost first), so the output offset of
//    a kept index is its row-major linear index;
//  - reduced dims are sorted by decreasing stride (the innermost last).
// The kernels pick a loop from this shape: a contiguous innermost reduced dim
// gives row reductions; a contiguous innermost kept dim gives column
// reductions vectorised across the kept dim; anything else uses strided loops.
struct ReducePlan {
  DimVector out_sizes;  // kept dims
  DimVector out_strides;  // their input strides
  DimVector red_sizes;  // reduced dims, innermost last
  DimVector red_strides;  // their input strides
  int64_t num_outputs = 1;
  int64_t reduce_numel = 1;
  const void* in = nullptr;  // input element 0
  void* out = nullptr;  // contiguous output, num_outputs elements
  void* out2 = nullptr;  // second output (indices, or the mean of var_mean)
  std::optional<double> mean;  // var/std over everything: the input's mean (Note [Variance order])
  ScalarType in_dtype = ScalarType::Float;
  ScalarType out_dtype = ScalarType::Float;
};

// Which reduction a value kernel computes.
enum class ReduceOp : int8_t { Sum, NanSum, Prod, Max, Min, All, Any };

// out = reduce(in) for Sum/NanSum/Prod (out dtype = in dtype, or int64 for an
// integral input), Max/Min (same dtype) and All/Any (bool, or uint8 for a
// uint8 input). `divisor` != 1 divides the result (mean).
using ReduceFn = void (*)(const ReducePlan& p, ReduceOp op, double divisor);
// Vector norms: ord 0, 1, 2, inf, -inf or any p (floating input, out dtype
// = in dtype or a wider float given by the caller's conversion).
using NormFn = void (*)(const ReducePlan& p, double ord);
// Variance with the given correction (out = var or std); out2, when set,
// receives the mean. Accumulates in double (Note [Variance order]).
using VarFn = void (*)(const ReducePlan& p, double correction, bool take_sqrt);
// log(sum(exp(x))) with the max subtracted first (CUDA; the CPU composes
// PyTorch's steps in logsumexp_out).
using LogSumExpFn = void (*)(const ReducePlan& p);
// Max/min with the index along the single reduced dim (out2 is int64).
// is_max selects max; values may be null (argmax/argmin only).
using ArgReduceFn = void (*)(const ReducePlan& p, bool is_max);
// Sum of a complex input whose one reduced dim is contiguous, each output
// summed serially (Note [Complex sums]).
using ComplexRowSumFn = void (*)(const ReducePlan& p);

EMBER_DECLARE_DISPATCH(ReduceFn, reduce_stub);
EMBER_DECLARE_DISPATCH(NormFn, norm_stub);
EMBER_DECLARE_DISPATCH(VarFn, var_stub);
EMBER_DECLARE_DISPATCH(LogSumExpFn, logsumexp_stub);
EMBER_DECLARE_DISPATCH(ArgReduceFn, arg_reduce_stub);
EMBER_DECLARE_DISPATCH(ComplexRowSumFn, complex_row_sum_stub);

// Scans along one dim of a contiguous [outer, n, inner] tensor: out = cumsum
// (is_prod false) or cumprod, in and out of the same dtype.
using ScanFn = void (*)(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool is_prod);
EMBER_DECLARE_DISPATCH(ScanFn, scan_stub);

// Softmax family over the middle dim of a contiguous [outer, n, inner] view.
// out may be wider than in (half_to_float).
using SoftmaxFn = void (*)(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool log);
// grad_input from grad_output and the forward output (same layout, same dtype).
using SoftmaxBackwardFn = void (*)(const Tensor& grad, const Tensor& out, Tensor& grad_input, int64_t outer, int64_t n,
                                   int64_t inner, bool log);
EMBER_DECLARE_DISPATCH(SoftmaxFn, softmax_stub);
EMBER_DECLARE_DISPATCH(SoftmaxBackwardFn, softmax_backward_stub);

// C[b] = beta * C[b] + alpha * op(A[b]) @ op(B[b]) for dtypes BLAS does not
// cover (integers, bool, 16-bit floats). Strides in elements; any layout.
struct GemmArgs {
  int64_t batch, m, n, k;
  const void* a;
  int64_t a_bs, a_rs, a_cs;  // batch, row and column strides of op(A) (m x k)
  const void* b;
  int64_t b_bs, b_rs, b_cs;  // of op(B) (k x n)
  void* c;
  int64_t c_bs, c_rs, c_cs;  // of C (m x n)
  ScalarType dtype;
  Scalar alpha, beta;  // beta == 0 ignores C's old values (NaN included)
};
using GemmFn = void (*)(const GemmArgs& args);
EMBER_DECLARE_DISPATCH(GemmFn, gemm_stub);

}  // namespace ember::cpu
