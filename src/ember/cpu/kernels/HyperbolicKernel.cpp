// Hyperbolic functions and their inverses, compiled once per CPU capability.
// Their float vector forms (all but tanh, which GELU shares) live here, the
// only place that uses them, built from the shared pieces of VecMath.h in the
// way Note [Vectorised float math] describes: sinh and cosh keep the reduced
// argument of e^|x| in two parts, atanh the residual of its quotient; asinh
// and acosh take libm's scalar functions, as PyTorch.
#include <cmath>

#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/cpu/kernels/VecMath.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

namespace vecmath {
namespace {

// e^x / 4 = s (1 + q + qlo) with s = 2^(n-2), for x in [0, 89.5] (sinh, cosh).
EMBER_VEC_INLINE Vf exp_quarter_parts(Vf x, Vf& s, Vf& qlo) {
  const float kLog2e = 1.44269504088896341f;
  const float kLn2Hi = 0x1.62e4p-1f, kLn2Lo = 0x1.7f7d1cp-20f;
  Vf n = detail::round_mul(x, kLog2e);
  Vf rh = madd(n, -kLn2Hi, x);  // exact
  Vf rl = n * -kLn2Lo;
  s = (Vf)((__builtin_convertvector(n, Vi) + 125) << 23);
  return detail::expm1_reduced(rh, rl, qlo);
}

// sinh: |x| < 1 as x + x^3 P(x^2); above, e^a/2 - e^-a/2 = 2 (s + (s q - t))
// with e^a/4 = s (1 + q) and t = 1/(16 s (1 + q)) (the terms do not cancel for a >= 1).
EMBER_VEC_INLINE Vf sinh(Vf x) {
  Vf a = abs(x);
  Vf z = a * a;
  Vf p = madd(z, 0x1.756c1ep-19f, 0x1.a022bcp-13f);
  p = madd(p, z, splat(0x1.1110e0p-7f));
  p = madd(p, z, splat(0x1.555556p-3f));
  Vf small = madd(p * z, a, a);
  Vf s, qlo;
  Vf q = exp_quarter_parts(detail::min(a, 89.5f), s, qlo);
  Vf t = 0.0625f / madd(s, q, s);
  Vf large = (s + madd(s, q, madd(s, qlo, -t))) * 2.0f;
  return copysign(select(a < 1.0f, small, large), x);
}

// cosh = 2 (s + (s q + t)), as in sinh.
EMBER_VEC_INLINE Vf cosh(Vf x) {
  Vf a = detail::min(abs(x), 89.5f);
  Vf s, qlo;
  Vf q = exp_quarter_parts(a, s, qlo);
  Vf t = 0.0625f / madd(s, q, s);
  return (s + madd(s, q, madd(s, qlo, t))) * 2.0f;
}

// atanh(x) = log1p(2a / (1 - a)) / 2 with the sign of x; 1 - a = d + dlo
// exactly, and the quotient's error goes to log1p_core as its correction.
EMBER_VEC_INLINE Vf atanh(Vf x) {
  Vf a = abs(x);
  Vf d = 1.0f - a;
  Vf dlo = (1.0f - d) - a;  // 1 - a - d, exact
  Vf num = a + a;
  Vf w = num / d;
  Vf c = madd(-w, dlo, detail::residual(w, d, num)) * detail::rcp_approx(d);
  Vf u;
  Vf r = detail::log1p_core(w, c, u);
  // u = 1 + w is +inf at |x| = 1, negative above, NaN at inf and NaN.
  return copysign(detail::log_fixup(r, u) * 0.5f, x);
}

}  // namespace
}  // namespace vecmath

namespace {

using vecmath::Vf;

void tanh_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Tanh", [](Vf x) { return vecmath::tanh(x); }, [](double x) { return std::tanh(x); });
}
EMBER_REGISTER_POINTWISE(tanh, &tanh_kernel);

void sinh_kernel(const TensorIterator& it) {
  if (sleefvec::unary(it, sleef::Sinh, [](float x) { return std::sinh(x); }, [](double x) { return std::sinh(x); }))
    return;
  float_unary(it, [](Vf x) { return vecmath::sinh(x); }, [](double x) { return std::sinh(x); });
}
EMBER_REGISTER_POINTWISE(sinh, &sinh_kernel);

void cosh_kernel(const TensorIterator& it) {
  if (sleefvec::unary(it, sleef::Cosh, [](float x) { return std::cosh(x); }, [](double x) { return std::cosh(x); }))
    return;
  float_unary(it, [](Vf x) { return vecmath::cosh(x); }, [](double x) { return std::cosh(x); });
}
EMBER_REGISTER_POINTWISE(cosh, &cosh_kernel);

// asinh and acosh: libm's on every element, in the element's type (float
// for the 16-bit types), as PyTorch's kernels.
template <typename F>
void libm_unary(const TensorIterator& it, const F& f) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) run_acc<scalar_t, scalar_t, 1>(it, f);
  });
}

void asinh_kernel(const TensorIterator& it) {
  libm_unary(it, [](auto x) { return std::asinh(x); });
}
EMBER_REGISTER_POINTWISE(asinh, &asinh_kernel);

void acosh_kernel(const TensorIterator& it) {
  libm_unary(it, [](auto x) { return std::acosh(x); });
}
EMBER_REGISTER_POINTWISE(acosh, &acosh_kernel);

void atanh_kernel(const TensorIterator& it) {
  if (sleefvec::unary(it, sleef::Atanh, [](float x) { return std::atanh(x); }, [](double x) { return std::atanh(x); }))
    return;
  float_unary(it, [](Vf x) { return vecmath::atanh(x); }, [](double x) { return std::atanh(x); });
}
EMBER_REGISTER_POINTWISE(atanh, &atanh_kernel);

}  // namespace

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
