// Operators whose one native function serves every device: it checks
// arguments, builds a TensorIterator and calls stubs, whose CUDA entries
// libember_cuda fills (kernels/*.cu). ops.yaml names them for the CPU and
// Meta only, so their CUDA dispatch entry is the CPU one, set here when
// libember_cuda loads. tools/cuda_opdb_coverage.py checks that the stubs
// each one reaches have CUDA kernels.
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

template <typename Table>
void serve_cuda(Table& table) {
  table[static_cast<int>(DeviceType::CUDA)] = table[static_cast<int>(DeviceType::CPU)];
}

[[maybe_unused]] const bool g_served = [] {
  // fill and arithmetic (cpu/CopyOps.cpp, BinaryOps.cpp, BinaryMathOps.cpp); complex
  // operands reach the complex stubs (cpu/ComplexOps.cpp).
  serve_cuda(dispatch::fill__Scalar_kernels);
  serve_cuda(dispatch::zero__kernels);
  serve_cuda(dispatch::add_Tensor_kernels);
  serve_cuda(dispatch::sub_Tensor_kernels);
  serve_cuda(dispatch::mul_Tensor_kernels);
  serve_cuda(dispatch::neg_kernels);
  serve_cuda(dispatch::div_Tensor_mode_kernels);
  serve_cuda(dispatch::pow_Tensor_Scalar_kernels);
  serve_cuda(dispatch::pow_Scalar_kernels);
  // selection and clamping (cpu/SelectOps.cpp)
  serve_cuda(dispatch::lerp_Tensor_kernels);
  serve_cuda(dispatch::lerp_Scalar_kernels);
  serve_cuda(dispatch::where_self_kernels);
  serve_cuda(dispatch::clamp_kernels);
  serve_cuda(dispatch::clamp_Tensor_kernels);
  serve_cuda(dispatch::clamp_min_kernels);
  serve_cuda(dispatch::clamp_min_Tensor_kernels);
  serve_cuda(dispatch::clamp_max_kernels);
  serve_cuda(dispatch::clamp_max_Tensor_kernels);
  // fused pointwise and activations (cpu/FusedPointwiseOps.cpp, UnaryOps.cpp, Activation.cpp)
  serve_cuda(dispatch::addcmul_kernels);
  serve_cuda(dispatch::addcdiv_kernels);
  serve_cuda(dispatch::nan_to_num_kernels);
  serve_cuda(dispatch::round_decimals_kernels);
  serve_cuda(dispatch::gelu_backward_kernels);
  serve_cuda(dispatch::leaky_relu__kernels);
  serve_cuda(dispatch::elu__kernels);
  serve_cuda(dispatch::threshold__kernels);
  serve_cuda(dispatch::polygamma__kernels);
  // complex numbers (cpu/ComplexOps.cpp; kernels/ComplexKernels.cu)
  serve_cuda(dispatch::angle_kernels);
  serve_cuda(dispatch::sgn_kernels);
  serve_cuda(dispatch::conj_physical_kernels);
  serve_cuda(dispatch::complex_kernels);
  serve_cuda(dispatch::polar_kernels);
  return true;
}();

}  // namespace
}  // namespace ember::cuda
