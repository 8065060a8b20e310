// Complex loops of asinh, acosh, atanh, log10, log2, log1p, expm1, exp2 and
// sinc. Each element is a libm call (std::complex's functions), which no
// vector build speeds up: only the baseline build has the loops, and the
// stub hands every capability the baseline's kernel.
#include <cmath>
#include <complex>
#include <limits>

#include "ember/cpu/ComplexMathStubs.h"
#include "ember/cpu/kernels/Loops.h"

namespace ember::cpu {

#if EMBER_CPU_BASELINE_BUILD
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// log(1 + z) without the cancellation of forming 1 + z near z = 0: the
// modulus' logarithm is log1p of |1 + z|^2 - 1 = x (x + 2) + y^2 there.
template <typename R>
std::complex<R> complex_log1p(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  const R arg = std::atan2(y, x + R(1));
  if (std::isnan(x) || std::isnan(y)) return {std::numeric_limits<R>::quiet_NaN(), arg};
  if (std::abs(z) < R(0.5)) {
    const R m = x * (x + R(2)) + y * y;
    if (m == R(0)) return {x, arg};  // |z|^2 underflowed: log|1 + z| ~ x
    return {R(0.5) * std::log1p(m), arg};
  }
  return {std::log(std::hypot(x + R(1), y)), arg};
}

// e^z - 1 = (e^x cos y - 1) + i e^x sin y, the real part as
// expm1(x) cos y - 2 sin^2(y / 2) so that it keeps its digits near 0.
template <typename R>
std::complex<R> complex_expm1(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  const R half_sin = std::sin(y / R(2));
  const R re = std::expm1(x) * std::cos(y) - R(2) * half_sin * half_sin;
  return {re, std::exp(x) * std::sin(y)};
}

// n / d by Smith's algorithm (scaled by the larger part of d), whose
// rounding and signed zeros PyTorch's complex division has.
template <typename R>
std::complex<R> smith_div(std::complex<R> n, std::complex<R> d) {
  const R a = n.real(), b = n.imag(), c = d.real(), e = d.imag();
  if (std::abs(c) >= std::abs(e)) {
    if (c == R(0) && e == R(0)) return {a / std::abs(c), b / std::abs(e)};
    const R r = e / c, s = R(1) / (c + e * r);
    return {(a + b * r) * s, (b - a * r) * s};
  }
  const R r = c / e, s = R(1) / (c * r + e);
  return {(a * r + b) * s, (b * r - a) * s};
}

template <typename R>
std::complex<R> complex_sinc(std::complex<R> z) {
  if (z == std::complex<R>(0)) return std::complex<R>(1);
  const R pi = R(3.14159265358979323846);
  const std::complex<R> w(pi * z.real(), pi * z.imag());
  return smith_div(std::sin(w), w);
}

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
    case ComplexMath::log1p: return map<C>(it, [](C z) { return complex_log1p(z); });
    case ComplexMath::expm1: return map<C>(it, [](C z) { return complex_expm1(z); });
    // e^(z ln 2), both parts scaled by the real constant (no inf * 0 = nan).
    case ComplexMath::exp2: return map<C>(it, [ln2](C z) { return std::exp(C(ln2 * z.real(), ln2 * z.imag())); });
    case ComplexMath::sinc: return map<C>(it, [](C z) { return complex_sinc(z); });
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
