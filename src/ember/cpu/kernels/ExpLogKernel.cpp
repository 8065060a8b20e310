// Exponentials and logarithms, compiled once per CPU capability, with
// logaddexp and logaddexp2. The float vector forms that only these kernels
// use (exp2, log2, log10) live here, built from the shared pieces of
// VecMath.h in the way Note [Vectorised float math] describes; log2 and
// log10 multiply by their constants (not floats) with one rounding
// (mul_const_add).
#include <algorithm>
#include <cmath>

#include "ember/cpu/kernels/ActivationSleef.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/cpu/kernels/VecMath.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

namespace vecmath {
namespace {

// 2^x: x = n + r with |r| <= 1/2, 2^r = 1 + r P(r).
EMBER_VEC_INLINE Vf exp2(Vf x) {
  Vf xc = detail::clamp(x, -151.0f, 129.0f);
  Vf n = detail::round_small(xc);
  Vf r = xc - n;  // exact
  Vf p = madd(r, 0x1.41bc06p-13f, 0x1.5eeedap-10f);
  p = madd(p, r, splat(0x1.3b2cfep-7f));
  p = madd(p, r, splat(0x1.c6afa8p-5f));
  p = madd(p, r, splat(0x1.ebfbdep-3f));
  p = madd(p, r, splat(0x1.62e430p-1f));
  p = madd(p, r, splat(1.0f));
  return detail::ldexp(p, n);
}

// f * C + small, with C = c + cc (FMA builds) = ch + cl (ch with 11 fraction
// bits, so that ch times the top 12 bits of f is exact without FMA): the
// product's rounding is the sum's single rounding.
EMBER_VEC_INLINE Vf mul_const_add(Vf f, float c, float cc, float ch, float cl, Vf small) {
#if EMBER_VEC_HAS_FMA
  (void)ch, (void)cl;
  return madd(f, c, madd(f, cc, small));
#else
  (void)c, (void)cc;
  Vf fh = (Vf)((Vi)f & int32_t(0xfffff000u));
  return fh * ch + madd(f - fh, ch, madd(f, cl, small));
#endif
}

// log2(x) = e + log(1 + f) log2(e), with f log2(e) rounded once.
EMBER_VEC_INLINE Vf log2(Vf x) {
  Vf e;
  Vf f = detail::log_reduce<true>(x, e);
  Vf t = detail::log1p_tail(f);
  // log2(e) = 0x1.715476p0 + 1.9259630e-8 = 0x1.716p0 - 1.7605286e-4
  Vf v = mul_const_add(f, 0x1.715476p0f, 1.92596299112661746887e-8f, 0x1.716p0f, -1.76052861036592640e-4f,
                       t * 0x1.715476p0f);
  return detail::log_fixup(e + v, x);
}

// log10(x) = e log10(2) + log(1 + f) log10(e); e * kA is exact.
EMBER_VEC_INLINE Vf log10(Vf x) {
  const float kA = 0x1.344p-2f, kAc = 4.60503898119521373889e-6f;  // log10(2)
  Vf e;
  Vf f = detail::log_reduce<true>(x, e);
  Vf t = detail::log1p_tail(f);
  // log10(e) = 0x1.bcb7b2p-2 - 1.0103050e-8 = 0x1.bc8p-2 + 2.1245065e-4
  Vf v = mul_const_add(f, 0x1.bcb7b2p-2f, -1.01030500522316835811e-8f, 0x1.bc8p-2f, 2.12450653251827651e-4f,
                       madd(t, 0x1.bcb7b2p-2f, e * kAc));
  return detail::log_fixup(madd(e, kA, v), x);
}

}  // namespace
}  // namespace vecmath

namespace {

using vecmath::Vd;
using vecmath::Vf;

void exp_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Exp", [](Vf x) { return vecmath::exp(x); }, [](Vd x) { return vecmath::exp(x); });
}
EMBER_REGISTER_POINTWISE(exp, &exp_kernel);

void log_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Ln", [](Vf x) { return vecmath::log(x); }, [](double x) { return std::log(x); });
}
EMBER_REGISTER_POINTWISE(log, &log_kernel);

void log1p_kernel(const TensorIterator& it) {
#if EMBER_SLEEF_AVX512
  // As below, 16 floats or 8 doubles at a time: lanes past where Debian's
  // SLEEF log1p overflows take libm's.
  if (sleefvec::Vec<float>::loaded() && it.common_dtype() == ScalarType::Float) {
    const auto f = sleefvec::Vec<float>::unary(sleef::Log1p);
    const auto g = [f](__m512 x) {
      const __mmask16 big = _mm512_cmp_ps_mask(x, _mm512_set1_ps(1e38f), _CMP_GT_OQ);
      const __m512 r = f(x);
      if (!big) return r;
      alignas(64) float xs[16], rs[16];
      _mm512_store_ps(xs, x);
      _mm512_store_ps(rs, r);
      for (int i = 0; i < 16; ++i) rs[i] = xs[i] > 1e38f ? std::log1p(xs[i]) : rs[i];
      return _mm512_load_ps(rs);
    };
    if (sleefvec::map_unary<float>(it, g)) return;
  }
  if (sleefvec::Vec<double>::loaded() && it.common_dtype() == ScalarType::Double) {
    const auto f = sleefvec::Vec<double>::unary(sleef::Log1p);
    const auto g = [f](__m512d x) {
      const __mmask8 big = _mm512_cmp_pd_mask(x, _mm512_set1_pd(1e307), _CMP_GT_OQ);
      const __m512d r = f(x);
      if (!big) return r;
      alignas(64) double xs[8], rs[8];
      _mm512_store_pd(xs, x);
      _mm512_store_pd(rs, r);
      for (int i = 0; i < 8; ++i) rs[i] = xs[i] > 1e307 ? std::log1p(xs[i]) : rs[i];
      return _mm512_load_pd(rs);
    };
    if (sleefvec::map_unary<double>(it, g)) return;
  }
#elif EMBER_SLEEF_LOOPS
  // Debian's SLEEF 3.5.1 log1pf overflows to inf above 1e38, PyTorch's does
  // not: vectors with such a lane take Ember's own log1p there.
  if (sleef::table().loaded && it.common_dtype() == ScalarType::Float) {
    const auto f = sleefvec::Vec<float>::unary(sleef::Log1p);
    const auto g = [f](__m256 x) {
      const __m256 big = _mm256_cmp_ps(x, _mm256_set1_ps(1e38f), _CMP_GT_OQ);
      const __m256 r = f(x);
      if (!_mm256_movemask_ps(big)) return r;
      return _mm256_blendv_ps(r, static_cast<__m256>(vecmath::log1p(static_cast<Vf>(x))), big);
    };
    if (sleefvec::map_unary<float>(it, g)) return;
  }
  // Its double log1p overflows above about 1e308 the same way: libm's there.
  if (sleef::table().loaded && it.common_dtype() == ScalarType::Double) {
    const auto f = sleefvec::Vec<double>::unary(sleef::Log1p);
    const auto g = [f](__m256d x) {
      const __m256d big = _mm256_cmp_pd(x, _mm256_set1_pd(1e307), _CMP_GT_OQ);
      __m256d r = f(x);
      if (!_mm256_movemask_pd(big)) return r;
      alignas(32) double xs[4], rs[4];
      _mm256_store_pd(xs, x);
      _mm256_store_pd(rs, r);
      for (int i = 0; i < 4; ++i) rs[i] = xs[i] > 1e307 ? std::log1p(xs[i]) : rs[i];
      return _mm256_load_pd(rs);
    };
    if (sleefvec::map_unary<double>(it, g)) return;
  }
#endif
  if (sleefvec::map_unary(it, sleef::Log1p)) return;
  float_unary(it, [](Vf x) { return vecmath::log1p(x); }, [](double x) { return std::log1p(x); });
}
EMBER_REGISTER_POINTWISE(log1p, &log1p_kernel);

void expm1_kernel(const TensorIterator& it) {
  if (sleefvec::map_unary(it, sleef::Expm1)) return;
  float_unary(it, [](Vf x) { return vecmath::expm1(x); }, [](double x) { return std::expm1(x); });
}
EMBER_REGISTER_POINTWISE(expm1, &expm1_kernel);

void log2_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Log2", [](Vf x) { return vecmath::log2(x); }, [](double x) { return std::log2(x); });
}
EMBER_REGISTER_POINTWISE(log2, &log2_kernel);

void exp2_kernel(const TensorIterator& it) {
  if (sleefvec::unary(it, sleef::Exp2, [](float x) { return std::exp2(x); }, [](double x) { return std::exp2(x); }))
    return;
  float_unary(it, [](Vf x) { return vecmath::exp2(x); }, [](double x) { return std::exp2(x); });
}
EMBER_REGISTER_POINTWISE(exp2, &exp2_kernel);

void log10_kernel(const TensorIterator& it) {
  float_unary_vml(it, "Log10", [](Vf x) { return vecmath::log10(x); }, [](double x) { return std::log10(x); });
}
EMBER_REGISTER_POINTWISE(log10, &log10_kernel);

// log(e^a + e^b) and log2(2^a + 2^b) as max + log1p(e^-|a - b|), equal
// infinities returned as they are (their difference is NaN).
void logaddexp_kernel(const TensorIterator& it) {
  if (logaddexp_sleef(it)) return;
  float_map<2>(
      it,
      [](vecmath::Vf a, vecmath::Vf b) {
        const vecmath::Vf r = vecmath::select(a > b, a, b) + vecmath::log1p(vecmath::exp(-vecmath::abs(a - b)));
        return vecmath::select((a == b) & (vecmath::abs(a) == INFINITY), a, r);
      },
      [](double a, double b) {
        if (std::isinf(a) && a == b) return a;
        return std::max(a, b) + std::log1p(std::exp(-std::abs(a - b)));
      });
}
EMBER_REGISTER_POINTWISE(logaddexp, &logaddexp_kernel);

void logaddexp2_kernel(const TensorIterator& it) {
  if (logaddexp2_sleef(it)) return;
  constexpr double kInvLn2 = 1.44269504088896340736;
  float_map<2>(
      it,
      [](vecmath::Vf a, vecmath::Vf b) {
        const vecmath::Vf r =
            vecmath::select(a > b, a, b) + vecmath::log1p(vecmath::exp2(-vecmath::abs(a - b))) * float(kInvLn2);
        return vecmath::select((a == b) & (vecmath::abs(a) == INFINITY), a, r);
      },
      [](double a, double b) {
        if (std::isinf(a) && a == b) return a;
        return std::max(a, b) + std::log1p(std::exp2(-std::abs(a - b))) * kInvLn2;
      });
}
EMBER_REGISTER_POINTWISE(logaddexp2, &logaddexp2_kernel);

}  // namespace

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
