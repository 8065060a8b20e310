// GELU and its gradient, erf and tanh forms, compiled once per CPU capability
// without multiply-add contraction (the fused steps are spelled out).
//
// Note [GELU loops]
// PyTorch hands contiguous float32 GELU (erf form) to oneDNN (Note [GELU
// through oneDNN], UnaryOps.cpp); every other case runs cpu_kernel_vec: two
// vectors at a time on contiguous rows, the scalar form on the remainder and
// on strided rows, and float vectors (or scalars) for float16/bfloat16.
// Its vector erf for float is the Abramowitz-Stegun 7.1.26 form on SLEEF's
// exp, for double SLEEF's erf (Ember's here: see vector_erf); tanh is
// SLEEF's; the scalar forms take libm. Its GCC build fuses kappa x^3 + x,
// and in the tanh gradient 1 - t^2 and 1 + 3 kappa x^2, everywhere, and
// cdf + x pdf in the float and double vector erf gradient only (found by
// trying each against torch 2.13). Without SLEEF (the Default kernels, or no
// library) Ember's own vector math runs instead.
#include <cmath>
#include <cstring>

#include "ember/cpu/MathStubs.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/cpu/kernels/VecMathErfD.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

constexpr double kAlpha = M_SQRT1_2;
constexpr double kTanhBeta = M_SQRT2 * M_2_SQRTPI * 0.5;  // sqrt(2/pi)
constexpr double kErfBeta = M_2_SQRTPI * M_SQRT1_2 * 0.5;  // 1/sqrt(2 pi)
constexpr double kKappa = 0.044715;

// a * b + c, fused where the kernel is built for FMA (as PyTorch's GCC build
// fuses it), else rounded twice.
template <typename T>
T madd(T a, T b, T c) {
#if defined(__FMA__)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// The scalar forms (libm), in the computation type T (float for 16-bit).
template <typename T>
T gelu_erf_scalar(T x) {
  return x * T(0.5) * (T(1) + std::erf(x * T(kAlpha)));
}

template <typename T>
T gelu_tanh_scalar(T x) {
  const T cube = x * x * x;
  return T(0.5) * x * (T(1) + std::tanh(T(kTanhBeta) * madd(T(kKappa), cube, x)));
}

template <typename T>
T gelu_erf_grad_scalar(T dy, T x) {
  const T cdf = T(0.5) * (T(1) + std::erf(x * T(kAlpha)));
  const T pdf = T(kErfBeta) * std::exp(x * x * T(-0.5));
  return dy * (cdf + x * pdf);
}

template <typename T>
T gelu_tanh_grad_scalar(T dy, T x) {
  const T x_sq = x * x;
  const T t = std::tanh(T(kTanhBeta) * madd(T(kKappa), x_sq * x, x));
  const T left = T(0.5) * x;
  const T left_derivative = T(0.5) * (T(1) + t);
  const T tanh_derivative = madd(-t, t, T(1));
  const T inner_derivative = T(kTanhBeta) * madd(T(3) * T(kKappa), x_sq, T(1));
  return dy * (left_derivative + left * tanh_derivative * inner_derivative);
}

#if EMBER_SLEEF_LOOPS
using sleefvec::Vec;

// Vectorized<float>::erf: 1 - t p(t) exp(-x^2), t = 1 / (1 + 0.3275911 |x|),
// with the sign of x.
template <typename W>
typename W::V erf_as(typename W::V x, typename W::Unary exp) {
  using V = typename W::V;
  const V neg_zero = W::set1(-0.0f), one = W::set1(1.0f);
  const V sign = W::bit_and(neg_zero, x);
  const V ax = W::bit_xor(sign, x);
  const V t = W::div(one, W::fmadd(W::set1(0.3275911f), ax, one));
  V r = W::fmadd(W::set1(1.061405429f), t, W::set1(-1.453152027f));
  r = W::fmadd(r, t, W::set1(1.421413741f));
  r = W::fmadd(r, t, W::set1(-0.284496736f));
  r = W::fmadd(r, t, W::set1(0.254829592f));
  const V e = exp(W::bit_xor(neg_zero, W::mul(x, x)));
  const V y = W::fmadd(W::mul(W::bit_xor(neg_zero, e), t), r, one);
  return W::bit_xor(sign, y);
}

// The vector erf of Vec<T>: the form above for float; for double Ember's.
template <typename T>
auto vector_erf() {
  using W = Vec<T>;
  if constexpr (std::is_same_v<T, float>) {
    const auto exp = W::unary(sleef::Exp);
    return [exp](typename W::V x) { return erf_as<W>(x, exp); };
  } else {
    // Ember's own (Note [Vectorised double erf]): PyTorch's SLEEF 3.6 erf is
    // not in the library here (3.5's differs from it in 1-3 % of doubles,
    // and is half as fast); a correctly rounded erf differs in about 1.5 %.
    return [](typename W::V x) {
      vecmath::Vd v;
      std::memcpy(&v, &x, sizeof v);
      v = vecmath::erf(v);
      std::memcpy(&x, &v, sizeof v);
      return x;
    };
  }
}

// sqrt(2/pi) (x + kappa x^3), kappa x^3 + x fused.
template <typename W>
typename W::V tanh_inner(typename W::V x, typename W::V beta, typename W::V kappa) {
  const auto cube = W::mul(W::mul(x, x), x);
  return W::mul(beta, W::fmadd(kappa, cube, x));
}

bool gelu_sleef(const TensorIterator& it, bool tanh, int64_t grain) {
  if (tanh) {
    return sleefvec::floating<1>(
        it,
        [](auto tag) {
          using T = sleefvec::compute_t<decltype(tag)>;
          using W = Vec<T>;
          const auto th = W::unary(sleef::Tanh);
          return [th](typename W::V x) {
            const auto inner = tanh_inner<W>(x, W::set1(T(kTanhBeta)), W::set1(T(kKappa)));
            return W::mul(W::mul(W::set1(T(0.5)), x), W::add(W::set1(T(1)), th(inner)));
          };
        },
        [](auto x) { return gelu_tanh_scalar(x); }, grain);
  }
  return sleefvec::floating<1>(
      it,
      [](auto tag) {
        using T = sleefvec::compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto erf = vector_erf<T>();
        return [erf](typename W::V x) {
          const auto e = erf(W::mul(x, W::set1(T(kAlpha))));
          return W::mul(W::mul(x, W::set1(T(0.5))), W::add(W::set1(T(1)), e));
        };
      },
      [](auto x) { return gelu_erf_scalar(x); }, grain);
}

bool gelu_backward_sleef(const TensorIterator& it, bool tanh) {
  if (tanh) {
    return sleefvec::floating<2>(
        it,
        [](auto tag) {
          using T = sleefvec::compute_t<decltype(tag)>;
          using W = Vec<T>;
          const auto th = W::unary(sleef::Tanh);
          return [th](typename W::V dy, typename W::V x) {
            const auto beta = W::set1(T(kTanhBeta)), one = W::set1(T(1)), half = W::set1(T(0.5));
            const auto x_sq = W::mul(x, x);
            const auto t = th(tanh_inner<W>(x, beta, W::set1(T(kKappa))));
            const auto left = W::mul(half, x);
            const auto left_derivative = W::mul(half, W::add(one, t));
            const auto tanh_derivative = W::fnmadd(t, t, one);
            const auto three_kappa = W::mul(W::set1(T(3)), W::set1(T(kKappa)));
            const auto inner_derivative = W::mul(beta, W::fmadd(three_kappa, x_sq, one));
            const auto right_partial = W::mul(left, tanh_derivative);
            return W::mul(dy, W::add(left_derivative, W::mul(right_partial, inner_derivative)));
          };
        },
        [](auto dy, auto x) { return gelu_tanh_grad_scalar(dy, x); });
  }
  return sleefvec::floating<2>(
      it,
      [](auto tag) {
        using T = sleefvec::compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto erf = vector_erf<T>();
        const auto exp = W::unary(sleef::Exp);
        constexpr bool reduced = is_16bit_float_v<decltype(tag)>;
        return [erf, exp](typename W::V dy, typename W::V x) {
          const auto cdf = W::mul(W::set1(T(0.5)), W::add(W::set1(T(1)), erf(W::mul(x, W::set1(T(kAlpha))))));
          const auto pdf = W::mul(W::set1(T(kErfBeta)), exp(W::mul(W::mul(x, x), W::set1(T(-0.5)))));
          // Fused for float and double, not in the 16-bit kernel.
          return W::mul(dy, reduced ? W::add(cdf, W::mul(x, pdf)) : W::fmadd(x, pdf, cdf));
        };
      },
      [](auto dy, auto x) { return gelu_erf_grad_scalar(dy, x); });
}
#else
bool gelu_sleef(const TensorIterator&, bool, int64_t) { return false; }
bool gelu_backward_sleef(const TensorIterator&, bool) { return false; }
#endif

// PyTorch's GELU grain: the elements split evenly over the threads past
// 16384 of them.
int64_t gelu_grain(const TensorIterator& it) {
  return it.numel() > 16384 ? std::max<int64_t>(it.numel() / get_num_threads(), 1) : 32768;
}

// The scalar form f on every element, as PyTorch's Default kernels (whose
// vectors map libm's functions over their lanes); also the path without SLEEF.
template <int N, typename F>
void scalar_floating(const TensorIterator& it, const F& f, int64_t grain) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using T = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<T>) {
      it.for_each(
          [&](char** d, const int64_t* s, int64_t n) {
            if constexpr (is_16bit_float_v<T>) {
              f16_loop<T, T, N>(d, s, n, f);
            } else if constexpr (N == 1) {
              loop1<T, T>(d, s, n, f);
            } else {
              loop2<T, T, T>(d, s, n, f);
            }
          },
          grain);
    }
  });
}

void gelu_kernel(const TensorIterator& it, const std::string& approximate) {
  const bool tanh = approximate == "tanh";
  const int64_t grain = gelu_grain(it);
  if (gelu_sleef(it, tanh, grain)) return;
  if (tanh) {
    scalar_floating<1>(it, [](auto x) { return gelu_tanh_scalar(x); }, grain);
  } else {
    scalar_floating<1>(it, [](auto x) { return gelu_erf_scalar(x); }, grain);
  }
}

void gelu_backward_kernel(const TensorIterator& it, bool tanh) {
  // Inputs: grad, x (both of the common dtype).
  if (gelu_backward_sleef(it, tanh)) return;
  if (tanh) {
    scalar_floating<2>(it, [](auto dy, auto x) { return gelu_tanh_grad_scalar(dy, x); }, 32768);
  } else {
    scalar_floating<2>(it, [](auto dy, auto x) { return gelu_erf_grad_scalar(dy, x); }, 32768);
  }
}

}  // namespace

EMBER_REGISTER_POINTWISE(gelu, &gelu_kernel);
EMBER_REGISTER_DISPATCH(gelu_backward_stub, &gelu_backward_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
