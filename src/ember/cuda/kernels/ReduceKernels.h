#pragma once
// The CUDA reduction, softmax, norm and GEMM kernels (host entry points).
// Each has the signature of the CPU stub it fills (cpu/ReduceStubs.h,
// cpu/NNStubs.h); RegisterReduce.cpp assigns them when libember_cuda loads.
#include "ember/cpu/NNStubs.h"
#include "ember/cpu/ReduceStubs.h"

namespace ember::cuda {

// sum, nansum, mean, prod (ReduceSum.cu); max, min, all, any (ReduceMinMax.cu).
void sum_prod_kernel(const cpu::ReducePlan& p, cpu::ReduceOp op, double divisor);
void minmax_all_any_kernel(const cpu::ReducePlan& p, cpu::ReduceOp op);
// max/min with indices, argmax/argmin (ReduceMinMax.cu).
void arg_reduce_kernel(const cpu::ReducePlan& p, bool is_max);
// var/std (Welford), vector norms, logsumexp (ReduceStats.cu).
void var_kernel(const cpu::ReducePlan& p, double correction, bool take_sqrt);
void norm_kernel(const cpu::ReducePlan& p, double ord);
void logsumexp_kernel(const cpu::ReducePlan& p);
// cumsum / cumprod (Scan.cu).
void scan_kernel(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool is_prod);
// softmax / log_softmax forward and backward (SoftMax.cu).
void softmax_kernel(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool log);
void softmax_backward_kernel(const Tensor& grad, const Tensor& out, Tensor& grad_input, int64_t outer, int64_t n,
                             int64_t inner, bool log);
// layer norm forward and backward (LayerNorm.cu).
void layer_norm_kernel(ScalarType dtype, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                       void* rstd, int64_t M, int64_t D, double eps);
// x and y in the 16-bit dtype, the parameters and statistics float (layer_norm_16bit_stub).
void layer_norm_16bit_kernel(ScalarType dtype, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                             void* rstd, int64_t M, int64_t D, double eps);
void layer_norm_backward_kernel(ScalarType dtype, const void* dy, const void* x, const void* mean, const void* rstd,
                                const void* gamma, void* dx, void* dgamma, void* dbeta, int64_t M, int64_t D);
// C = beta * C + alpha * A @ B through cuBLAS (Blas.cpp).
void gemm_kernel(const cpu::GemmArgs& g);

}  // namespace ember::cuda
