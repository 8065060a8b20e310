// Native functions of asinh, acosh, atanh, log10, log2, log1p, expm1, exp2
// and sinc: complex CPU tensors run cpu/kernels/ComplexMathKernel.cpp; every
// other dtype and device runs the generated stub (ops.yaml `native: manual`).
#include "ember/cpu/ComplexMathStubs.h"
#include "ember/cpu/ComplexStubs.h"
#include "ember/ops/Pointwise.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(ComplexMathFn, complex_math_stub);
}  // namespace ember::cpu

namespace ember::native {

namespace {
using RealFn = void (*)(const TensorIterator&);

Tensor& unary_float_with_complex(const Tensor& self, Tensor& out, const DispatchStub<RealFn>& stub, cpu::ComplexMath f,
                                 const char* op, const char* cpu_name, const char* cuda_name) {
  auto it = TensorIterator::unary_float_op(out, self);
  if (is_complex_type(it.common_dtype()) && !it.is_meta() && self.device().type == DeviceType::CPU) {
    // log1p, expm1 and sinc take the capability's fused multiply-adds (Note [Complex log1p and sinc]).
    if (f == cpu::ComplexMath::log1p) {
      cpu::log1p_complex_stub(it);
    } else if (f == cpu::ComplexMath::expm1) {
      cpu::expm1_complex_stub(it);
    } else if (f == cpu::ComplexMath::sinc) {
      cpu::sinc_complex_stub(it);
    } else {
      cpu::complex_math_stub(it, f);
    }
    it.finish();
    return out;
  }
  if (is_complex_type(it.common_dtype()) && self.is_cuda() && f == cpu::ComplexMath::sinc) {
    cpu::sinc_complex_stub(it);  // the CUDA kernel of cuda/kernels/ComplexKernels.cu
    it.finish();
    return out;
  }
  check_pointwise_dtype(it, kBoolDtypes | kIntegralDtypes | kFloatingDtypes,
                        pointwise_error_name(it, cpu_name, cuda_name));
  run_pointwise(stub, self.device().type, op, it);
  return out;
}
}  // namespace

#define EMBER_UNARY_FLOAT_WITH_COMPLEX(name)                                                             \
  Tensor& name##_out(const Tensor& self, Tensor& out) {                                                  \
    return unary_float_with_complex(self, out, name##_stub, cpu::ComplexMath::name, #name, #name "_cpu", \
                                    #name "_cuda");                                                      \
  }
EMBER_UNARY_FLOAT_WITH_COMPLEX(asinh)
EMBER_UNARY_FLOAT_WITH_COMPLEX(acosh)
EMBER_UNARY_FLOAT_WITH_COMPLEX(atanh)
EMBER_UNARY_FLOAT_WITH_COMPLEX(log10)
EMBER_UNARY_FLOAT_WITH_COMPLEX(log2)
EMBER_UNARY_FLOAT_WITH_COMPLEX(log1p)
EMBER_UNARY_FLOAT_WITH_COMPLEX(expm1)
EMBER_UNARY_FLOAT_WITH_COMPLEX(exp2)
EMBER_UNARY_FLOAT_WITH_COMPLEX(sinc)
#undef EMBER_UNARY_FLOAT_WITH_COMPLEX

}  // namespace ember::native
