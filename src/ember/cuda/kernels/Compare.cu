// CUDA kernels of comparisons and logical operators: bool results from
// operands of the common dtype.
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cuda {
namespace {

// One functor for all of them, switching on the operator (uniform per
// launch): 20 kernels for 10 dtypes instead of 20 per operator.
enum class Compare : int { eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_xor };

template <typename C>
struct CompareOp {
  Compare op;
  __device__ bool operator()(C a, C b) const {
    switch (op) {
      case Compare::eq: return a == b;
      case Compare::ne: return a != b;
      case Compare::lt: return a < b;
      case Compare::le: return a <= b;
      case Compare::gt: return a > b;
      case Compare::ge: return a >= b;
      case Compare::logical_and: return a != C(0) && b != C(0);
      case Compare::logical_or: return a != C(0) || b != C(0);
      case Compare::logical_xor: return (a != C(0)) != (b != C(0));
    }
    return false;
  }
};

void compare(const TensorIterator& it, const char* name, Compare op) {
  dispatch_dtype<kAllReal>(it.common_dtype(), name, [&](auto tag) {
    using S = typename decltype(tag)::type;
    gpu_kernel<bool, S, S>(it, CompareOp<opmath_t<S>>{op});
  });
}

#define EMBER_COMPARE_KERNEL(op)                                                             \
  void op##_cuda_kernel(const TensorIterator& it) { compare(it, #op "_cuda", Compare::op); } \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
EMBER_COMPARE_KERNEL(eq);
EMBER_COMPARE_KERNEL(ne);
EMBER_COMPARE_KERNEL(lt);
EMBER_COMPARE_KERNEL(le);
EMBER_COMPARE_KERNEL(gt);
EMBER_COMPARE_KERNEL(ge);
EMBER_COMPARE_KERNEL(logical_and);
EMBER_COMPARE_KERNEL(logical_or);
EMBER_COMPARE_KERNEL(logical_xor);
#undef EMBER_COMPARE_KERNEL

}  // namespace
}  // namespace ember::cuda
