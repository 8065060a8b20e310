// Registers the CUDA reductions, softmax, layer norm and matrix products
// when libember_cuda loads. Their operators name the same device-generic
// native functions for CUDA as for the CPU (ops.yaml); those prepare shapes
// and dtypes and call the stubs filled here (cpu/ReduceStubs.h, cpu/NNStubs.h).
#include "ember/cuda/kernels/ReduceKernels.h"

namespace ember::cuda {
namespace {

void reduce_kernel(const cpu::ReducePlan& p, cpu::ReduceOp op, double divisor) {
  switch (op) {
    case cpu::ReduceOp::Sum:
    case cpu::ReduceOp::NanSum:
    case cpu::ReduceOp::Prod: sum_prod_kernel(p, op, divisor); return;
    default: minmax_all_any_kernel(p, op); return;
  }
}

[[maybe_unused]] const bool registered = [] {
  cpu::reduce_stub.cuda = &reduce_kernel;
  cpu::arg_reduce_stub.cuda = &arg_reduce_kernel;
  cpu::var_stub.cuda = &var_kernel;
  cpu::norm_stub.cuda = &norm_kernel;
  cpu::logsumexp_stub.cuda = &logsumexp_kernel;
  cpu::scan_stub.cuda = &scan_kernel;
  cpu::softmax_stub.cuda = &softmax_kernel;
  cpu::softmax_backward_stub.cuda = &softmax_backward_kernel;
  cpu::layer_norm_stub.cuda = &layer_norm_kernel;
  cpu::layer_norm_16bit_stub.cuda = &layer_norm_16bit_kernel;
  cpu::layer_norm_backward_stub.cuda = &layer_norm_backward_kernel;
#ifndef EMBER_NO_CUBLAS
  cpu::gemm_stub.cuda = &gemm_kernel;
#endif

  return true;
}();

}  // namespace
}  // namespace ember::cuda
