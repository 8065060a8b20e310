// CUDA kernels of the unary floating operators (integral inputs reach them
// as the default float dtype): CUDA's math library in the compute type.
//
// One functor serves them all, switching on the operator (the same for every
// thread): 8 kernels (4 dtypes, 2 paths) instead of 8 per operator, which
// keeps this file's compile time to a fraction.
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cuda {
namespace {

#define EMBER_UNARY_MATH_OPS(_)           \
  _(exp, dm::exp(x))                      \
  _(exp2, dm::exp2(x))                    \
  _(expm1, dm::expm1(x))                  \
  _(log, dm::log(x))                      \
  _(log1p, dm::log1p(x))                  \
  _(log2, dm::log2(x))                    \
  _(log10, dm::log10(x))                  \
  _(sqrt, dm::sqrt(x))                    \
  _(rsqrt, dm::rsqrt(x))                  \
  _(sin, dm::sin(x))                      \
  _(cos, dm::cos(x))                      \
  _(tan, dm::tan(x))                      \
  _(asin, dm::asin(x))                    \
  _(acos, dm::acos(x))                    \
  _(atan, dm::atan(x))                    \
  _(sinh, dm::sinh(x))                    \
  _(cosh, dm::cosh(x))                    \
  _(tanh, dm::tanh(x))                    \
  _(asinh, dm::asinh(x))                  \
  _(acosh, dm::acosh(x))                  \
  _(atanh, dm::atanh(x))                  \
  _(erf, dm::erf(x))                      \
  _(erfc, dm::erfc(x))                    \
  _(erfinv, dm::erfinv(x))                \
  _(lgamma, dm::lgamma(x))                \
  _(sigmoid, C(1) / (C(1) + dm::exp(-x))) \
  _(reciprocal, C(1) / x)                 \
  _(deg2rad, x* C(0.017453292519943295))  \
  _(rad2deg, x* C(57.29577951308232))     \
  _(frac, x - dm::trunc(x))

enum class UnaryMath : int {
#define EMBER_ENUM_ENTRY(name, expr) name,
  EMBER_UNARY_MATH_OPS(EMBER_ENUM_ENTRY) sinc,
#undef EMBER_ENUM_ENTRY
};

template <typename C>
struct UnaryMathOp {
  UnaryMath op;
  __device__ C operator()(C x) const {
    switch (op) {
#define EMBER_CASE(name, expr) \
  case UnaryMath::name: return expr;
      EMBER_UNARY_MATH_OPS(EMBER_CASE)
#undef EMBER_CASE
      case UnaryMath::sinc: {
        if (x == C(0)) return C(1);
        const C product = C(dm::kPi) * x;
        return dm::sin(product) / product;
      }
    }
    return x;
  }
};

#define EMBER_KERNEL(name, expr)                                               \
  void name##_cuda_kernel(const TensorIterator& it) {                          \
    unary_same<UnaryMathOp, kAllFloating>(it, #name "_cuda", UnaryMath::name); \
  }                                                                            \
  EMBER_REGISTER_CUDA_POINTWISE(name, &name##_cuda_kernel);
EMBER_UNARY_MATH_OPS(EMBER_KERNEL)
EMBER_KERNEL(sinc, x)
#undef EMBER_KERNEL

// logit with eps < 0 (or none) takes no clamp.
template <typename C>
struct LogitOp {
  C lo, hi;
  bool clamp;
  __device__ C operator()(C x) const {
    const C z = clamp ? (x < lo ? lo : (x > hi ? hi : x)) : x;
    return dm::log(z / (C(1) - z));
  }
};

void logit_cuda_kernel(const TensorIterator& it, std::optional<double> eps) {
  dispatch_dtype<kAllFloating>(it.common_dtype(), "logit_cuda", [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    const bool clamp = eps.has_value() && *eps >= 0;
    const C lo = clamp ? static_cast<C>(*eps) : C(0);
    gpu_kernel<S, S>(it, LogitOp<C>{lo, C(1) - lo, clamp});
  });
}
EMBER_REGISTER_CUDA_POINTWISE(logit, &logit_cuda_kernel);

}  // namespace
}  // namespace ember::cuda
