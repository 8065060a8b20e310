// Complex loops of asinh, acosh, atanh, log10, log2 and exp2 (log1p, expm1
// and sinc: cpu/kernels/ComplexKernel.cpp). Each element is a libm call
// (std::complex's functions), which no vector build speeds up: only the
// baseline build has the loops, and the stub hands every capability the
// baseline's kernel.
#include <cmath>
#include <complex>
#include <limits>

#include "ember/cpu/ComplexMathStubs.h"
#include "ember/cpu/kernels/Loops.h"

namespace ember::cpu {

#if EMBER_CPU_BASELINE_BUILD
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

template <typename C, typename Op>
void map(const TensorIterator& it, Op op) {
  it.for_each([&op](char** d, const int64_t* s, int64_t n) { unary_loop<C, C>(d, s, n, op); });
}

template <typename C>
void run(const TensorIterator& it, ComplexMath f) {
  using R = typename C::value_type;
  const R ln2 = R(0.693147180559945309417), ln10 = R(2.30258509299404568402);
  switch (f) {
    case ComplexMath::asinh: return map<C>(it, [](C z) { return std::asinh(z); });
    case ComplexMath::acosh: return map<C>(it, [](C z) { return std::acosh(z); });
    case ComplexMath::atanh: return map<C>(it, [](C z) { return std::atanh(z); });
    // Both parts of the logarithm divided by the real constant.
    case ComplexMath::log10:
      return map<C>(it, [ln10](C z) {
        const C l = std::log(z);
        return C(l.real() / ln10, l.imag() / ln10);
      });
    case ComplexMath::log2:
      return map<C>(it, [ln2](C z) {
        const C l = std::log(z);
        return C(l.real() / ln2, l.imag() / ln2);
      });
    case ComplexMath::log1p:  // log1p_complex_stub
    case ComplexMath::expm1:
    case ComplexMath::sinc: EMBER_INTERNAL_ASSERT(false, "complex log1p, expm1 and sinc have kernels of their own");
    // e^(z ln 2), both parts scaled by the real constant (no inf * 0 = nan).
    case ComplexMath::exp2: return map<C>(it, [ln2](C z) { return std::exp(C(ln2 * z.real(), ln2 * z.imag())); });
  }
}

void complex_math_kernel(const TensorIterator& it, ComplexMath f) {
  EMBER_DISPATCH_COMPLEX_TYPES(it.common_dtype(), "complex_math_cpu", [&] { run<scalar_t>(it, f); });
}

}  // namespace
}  // namespace EMBER_CPU_CAPABILITY_NS

EMBER_REGISTER_DISPATCH(complex_math_stub, &complex_math_kernel);
#endif

}  // namespace ember::cpu
