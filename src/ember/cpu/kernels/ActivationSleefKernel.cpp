// Activations on SLEEF's functions, compiled once per CPU capability without
// multiply-add contraction (the fused steps are spelled out).
//
// Note [Activations on SLEEF]
// PyTorch computes silu, mish, softplus and elu (and their gradients) in
// cpu_kernel_vec: two vectors at a time with SLEEF's exp, expm1, log1p and
// tanh on contiguous rows, libm's on the remainder and on strided rows; the
// 16-bit types as float vectors (Note [GELU loops] for the loop). log_sigmoid
// runs on a contiguous copy, every element through the vector form (the last
// vector zero-padded), and its gradient reads the forward's exp(-|x|), which
// Ember recomputes with the same vector exp. Its GCC build fuses the
// multiply-adds marked below (found by trying each against torch 2.13).
#include "ember/cpu/kernels/ActivationSleef.h"

#include <cmath>
#include <limits>

#include "ember/cpu/kernels/SleefLoops.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

#if EMBER_SLEEF_LOOPS
namespace {

using sleefvec::compute_t;
using sleefvec::floating;
using sleefvec::Vec;

template <typename W>
typename W::V neg(typename W::V x) {
  return W::bit_xor(x, W::set1(-0.0f));
}

}  // namespace

bool silu_sleef(const TensorIterator& it) {
  return floating<1>(
      it,
      [](auto tag) {
        using T = compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto exp = W::unary(sleef::Exp);
        return [exp](typename W::V x) { return W::div(x, W::add(W::set1(T(1)), exp(neg<W>(x)))); };
      },
      [](auto x) {
        using T = decltype(x);
        return x / (T(1) + std::exp(-x));
      });
}

bool silu_backward_sleef(const TensorIterator& it) {
  return floating<2>(
      it,
      [](auto tag) {
        using T = compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto exp = W::unary(sleef::Exp);
        return [exp](typename W::V dy, typename W::V x) {
          const auto one = W::set1(T(1));
          const auto s = W::div(one, W::add(one, exp(neg<W>(x))));
          return W::mul(W::mul(dy, s), W::fmadd(x, W::sub(one, s), one));  // fused
        };
      },
      [](auto dy, auto x) {
        using T = decltype(x);
        const T s = T(1) / (T(1) + std::exp(-x));
        return dy * s * std::fma(x, T(1) - s, T(1));  // fused
      });
}

bool mish_sleef(const TensorIterator& it) {
  return floating<1>(
      it,
      [](auto tag) {
        using T = compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto exp = W::unary(sleef::Exp), log1p = W::unary(sleef::Log1p), tanh = W::unary(sleef::Tanh);
        return [=](typename W::V x) { return W::mul(x, tanh(log1p(exp(x)))); };
      },
      [](auto x) { return x * std::tanh(std::log1p(std::exp(x))); });
}

bool mish_backward_sleef(const TensorIterator& it) {
  return floating<2>(
      it,
      [](auto tag) {
        using T = compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto exp = W::unary(sleef::Exp), log1p = W::unary(sleef::Log1p), tanh = W::unary(sleef::Tanh);
        return [=](typename W::V dy, typename W::V x) {
          const auto one = W::set1(T(1));
          const auto s = W::div(one, W::add(one, exp(neg<W>(x))));
          const auto t = tanh(log1p(exp(x)));
          return W::mul(dy, W::fmadd(W::mul(x, s), W::fnmadd(t, t, one), t));  // fused
        };
      },
      [](auto dy, auto x) {
        using T = decltype(x);
        const T s = T(1) / (T(1) + std::exp(-x));
        const T t = std::tanh(std::log1p(std::exp(x)));
        return dy * std::fma(x * s, std::fma(-t, t, T(1)), t);  // fused
      });
}

bool softplus_sleef(const TensorIterator& it, const Scalar& beta_, const Scalar& threshold_) {
  const double beta = beta_.to_double(), threshold = threshold_.to_double();
  return floating<1>(
      it,
      [=](auto tag) {
        using T = compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto exp = W::unary(sleef::Exp), log1p = W::unary(sleef::Log1p);
        const auto b = W::set1(T(beta)), th = W::set1(T(threshold));
        return [=](typename W::V x) {
          const auto xb = W::mul(x, b);
          return W::select_gt(xb, th, x, W::div(log1p(exp(xb)), b));
        };
      },
      [=](auto x) {
        using T = decltype(x);
        const T b = T(beta);
        return x * b > T(threshold) ? x : T(std::log1p(std::exp(x * b))) / b;
      });
}

bool softplus_backward_sleef(const TensorIterator& it, const Scalar& beta_, const Scalar& threshold_) {
  const double beta = beta_.to_double(), threshold = threshold_.to_double();
  return floating<2>(
      it,
      [=](auto tag) {
        using T = compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto exp = W::unary(sleef::Exp);
        const auto b = W::set1(T(beta)), th = W::set1(T(threshold)), one = W::set1(T(1));
        return [=](typename W::V g, typename W::V x) {
          const auto z = exp(W::mul(x, b));
          return W::select_gt(W::mul(x, b), th, g, W::div(W::mul(g, z), W::add(z, one)));
        };
      },
      [=](auto g, auto x) {
        using T = decltype(x);
        const T z = std::exp(x * T(beta));
        return x * T(beta) > T(threshold) ? g : g * z / (z + T(1));
      });
}

bool elu_sleef(const TensorIterator& it, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  const double a = alpha.to_double(), s = scale.to_double(), c = input_scale.to_double();
  return floating<1>(
      it,
      [=](auto tag) {
        using T = compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto expm1 = W::unary(sleef::Expm1);
        const auto neg_coef = W::set1(T(a) * T(s)), pos_coef = W::set1(T(s)), in_coef = W::set1(T(c));
        return [=](typename W::V x) {
          // x >= 0 takes the linear branch (NaN the other).
          return W::select_ge(x, W::set1(T(0)), W::mul(x, pos_coef), W::mul(expm1(W::mul(x, in_coef)), neg_coef));
        };
      },
      [=](auto x) {
        using T = decltype(x);
        return x < T(0) ? std::expm1(x * T(c)) * (T(a) * T(s)) : x * T(s);
      });
}

bool elu_backward_sleef(const TensorIterator& it, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  const double a = alpha.to_double(), s = scale.to_double(), c = input_scale.to_double();
  return floating<2>(
      it,
      [=](auto tag) {
        using T = compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto exp = W::unary(sleef::Exp);
        const auto neg_coef = W::set1(T(a) * T(s)), pos_coef = W::set1(T(s)), in_coef = W::set1(T(c));
        return [=](typename W::V g, typename W::V x) {
          const auto negative = W::mul(W::mul(W::mul(g, in_coef), neg_coef), exp(W::mul(x, in_coef)));
          return W::select_gt(x, W::set1(T(0)), W::mul(g, pos_coef), negative);
        };
      },
      [=](auto g, auto x) {
        using T = decltype(x);
        return x <= T(0) ? g * T(c) * (T(a) * T(s)) * std::exp(x * T(c)) : g * T(s);
      });
}

namespace {
// exp(-|x|), the buffer of PyTorch's log_sigmoid.
// v rounded to the dtype Tag (PyTorch keeps log_sigmoid's buffer in the
// input's dtype).
template <typename Tag, typename W>
typename W::V round_as(typename W::V v) {
  if constexpr (is_16bit_float_v<Tag>) {
    alignas(64) float f[W::size];
    Tag t[W::size];
    W::store(f, v);
    cvt_from_float(f, t, W::size);
    cvt_to_float(t, f, W::size);
    return W::load(f);
  } else {
    return v;
  }
}

template <typename W>
typename W::V exp_neg_abs(typename W::V x, typename W::Unary exp) {
  const auto sign = W::set1(-0.0f);
  return exp(W::bit_xor(W::bit_xor(x, W::bit_and(x, sign)), sign));
}
}  // namespace

bool log_sigmoid_sleef(const TensorIterator& it) {
  const auto body = [](auto tag) {
    using T = compute_t<decltype(tag)>;
    using W = Vec<T>;
    const auto exp = W::unary(sleef::Exp), log1p = W::unary(sleef::Log1p);
    return [=](typename W::V x) { return W::sub(W::minimum(x, W::set1(T(0))), log1p(exp_neg_abs<W>(x, exp))); };
  };
  if (!Vec<float>::loaded()) return false;
  switch (it.common_dtype()) {
    case ScalarType::Float: return sleefvec::map_unary<float>(it, body(0.0f));
    case ScalarType::Double: return sleefvec::map_unary<double>(it, body(0.0));
    case ScalarType::Half:
    case ScalarType::BFloat16: return sleefvec::map_unary_16bit(it, body(0.0f));
    default: return false;
  }
}

bool log_sigmoid_backward_sleef(const TensorIterator& it) {
  const auto body = [](auto tag) {
    using Tag = decltype(tag);
    using T = compute_t<Tag>;
    using W = Vec<T>;
    const auto exp = W::unary(sleef::Exp);
    return [exp](typename W::V g, typename W::V x) {
      const auto zero = W::set1(T(0)), one = W::set1(T(1));
      const auto b = round_as<Tag, W>(exp_neg_abs<W>(x, exp));
      // x < 0: 1 - b / (1 + b); else 0 - (-1) (b / (1 + b)).
      const auto max_deriv = W::select_gt(zero, x, one, zero);
      const auto sign = W::select_gt(zero, x, one, neg<W>(one));
      return W::mul(W::fnmadd(sign, W::div(b, W::add(one, b)), max_deriv), g);  // fused
    };
  };
  const auto scalar = [](auto tag) {
    using Tag = decltype(tag);
    return [](auto g, auto x) {
      using T = decltype(x);
      using W = Vec<T>;
      alignas(64) T lanes[W::size];
      W::store(lanes, round_as<Tag, W>(exp_neg_abs<W>(W::set1(x), W::unary(sleef::Exp))));  // the forward's
      const T b = lanes[0];
      const bool negative = x < T(0);
      const T max_deriv = negative ? T(1) : T(0), sign = negative ? T(1) : T(-1);
      return std::fma(-sign, b / (T(1) + b), max_deriv) * g;  // fused
    };
  };
  if (!Vec<float>::loaded()) return false;
  switch (it.common_dtype()) {
    case ScalarType::Float: return sleefvec::elementwise<float, 2>(it, body(0.0f), scalar(0.0f));
    case ScalarType::Double: return sleefvec::elementwise<double, 2>(it, body(0.0), scalar(0.0));
    case ScalarType::Half: return sleefvec::elementwise_reduced<Half, 2>(it, body(Half{}), scalar(Half{}));
    case ScalarType::BFloat16:
      return sleefvec::elementwise_reduced<BFloat16, 2>(it, body(BFloat16{}), scalar(BFloat16{}));
    default: return false;
  }
}

// log(e^a + e^b) = max + log1p(e^-|a - b|) (log2: the base-2 forms times
// 1/ln 2, fused); equal infinities are returned as they are.
template <bool kBase2>
bool logaddexp_any(const TensorIterator& it) {
  constexpr double kInvLn2 = 1.44269504088896340736;
  return floating<2>(
      it,
      [](auto tag) {
        using T = compute_t<decltype(tag)>;
        using W = Vec<T>;
        const auto exp = W::unary(kBase2 ? sleef::Exp2 : sleef::Exp), log1p = W::unary(sleef::Log1p);
        return [=](typename W::V a, typename W::V b) {
          const auto m = W::maximum(a, b);
          const auto d = W::sub(a, b);
          const auto sign = W::set1(-0.0f);
          const auto l = log1p(exp(W::bit_xor(W::bit_xor(d, W::bit_and(d, sign)), sign)));
          const auto r = kBase2 ? W::fmadd(l, W::set1(T(kInvLn2)), m) : W::add(m, l);  // fused
          const auto inf = W::set1(std::numeric_limits<T>::infinity());
          const auto abs_a = W::bit_xor(a, W::bit_and(a, sign));
          // a where a == b and |a| == inf.
          return W::select_eq2(a, b, abs_a, inf, a, r);
        };
      },
      [](auto a, auto b) {
        using T = decltype(a);
        if (std::isinf(a) && a == b) return a;
        const T m = std::max(a, b);
        if constexpr (kBase2) {
          return std::fma(std::log1p(std::exp2(-std::abs(a - b))), T(kInvLn2), m);  // fused
        } else {
          return m + std::log1p(std::exp(-std::abs(a - b)));
        }
      });
}

bool logaddexp_sleef(const TensorIterator& it) { return logaddexp_any<false>(it); }
bool logaddexp2_sleef(const TensorIterator& it) { return logaddexp_any<true>(it); }

#else
bool logaddexp_sleef(const TensorIterator&) { return false; }
bool logaddexp2_sleef(const TensorIterator&) { return false; }
bool silu_sleef(const TensorIterator&) { return false; }
bool silu_backward_sleef(const TensorIterator&) { return false; }
bool mish_sleef(const TensorIterator&) { return false; }
bool mish_backward_sleef(const TensorIterator&) { return false; }
bool softplus_sleef(const TensorIterator&, const Scalar&, const Scalar&) { return false; }
bool softplus_backward_sleef(const TensorIterator&, const Scalar&, const Scalar&) { return false; }
bool elu_sleef(const TensorIterator&, const Scalar&, const Scalar&, const Scalar&) { return false; }
bool elu_backward_sleef(const TensorIterator&, const Scalar&, const Scalar&, const Scalar&) { return false; }
bool log_sigmoid_sleef(const TensorIterator&) { return false; }
bool log_sigmoid_backward_sleef(const TensorIterator&) { return false; }
#endif

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
