// Activation loops and their gradients (pointwise kernels of ops.yaml),
// compiled once per CPU capability.
// Half and bfloat16 compute in float, as PyTorch.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/cpu/ActivationStubs.h"
#include "ember/cpu/kernels/ActivationSleef.h"
#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/VecMathBinary.h"
#include "ember/cpu/kernels/VecMathErfD.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// The activation a loop computes: a template argument of the loops below.
// a, b, c carry its parameters.
enum class ActivationOp {
  LeakyRelu,  // a: negative slope
  Elu,  // a: alpha, b: scale, c: input scale
  Softplus,  // a: beta, b: threshold
  Hardtanh,  // a: min, b: max
  Hardsigmoid,
  Hardswish,
  Mish,
  LogSigmoid,
  Threshold,  // a: threshold, b: value
  Erfinv,  // forward only
  // Gradient loops only, inputs (target, input): the elementwise binary cross
  // entropy, with libm's log and log1p as PyTorch's scalar loop.
  BinaryCrossEntropy,
  // Gradient loops only, fused forms of the derivative formulas: inputs
  // (grad, result) for tanh and sigmoid, (grad, self) for silu.
  TanhGrad,
  SigmoidGrad,
  SiluGrad,
};

// Note [Unfused products]: this file is compiled with the fused multiply-add
// instructions of its capability, and the compiler may fuse a * b + c. Where
// PyTorch's loop is compiled without (binary cross entropy lives outside its
// per-capability kernels), `rounded` forces a product to be rounded first.
template <typename T>
inline T rounded(T v) {
#if defined(__x86_64__) && defined(__SSE2__)
  asm volatile("" : "+x"(v));
#endif
  return v;
}

constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

// Pavlis' rational first guess of erfinv (1996; central range |y| <= 0.7,
// tails through sqrt(-log((1-|y|)/2))), about 1e-6 relative off.
template <typename T>
T erfinv_guess(T y) {
  const T ay = std::abs(y);
  if (ay <= T(0.7)) {
    const T z = y * y;
    const T num =
        std::fma(std::fma(std::fma(T(-0.140543331), z, T(0.914624893)), z, T(-1.645349621)), z, T(0.886226899));
    const T den = std::fma(
        std::fma(std::fma(std::fma(T(0.012229801), z, T(-0.329097515)), z, T(1.442710462)), z, T(-2.118377725)), z,
        T(1));
    return y * num / den;
  }
  const T z = std::sqrt(-std::log((T(1) - ay) / T(2)));
  const T num = std::fma(std::fma(std::fma(T(1.641345311), z, T(3.429567803)), z, T(-1.624906493)), z, T(-1.970840454));
  const T den = std::fma(std::fma(T(1.637067800), z, T(3.543889200)), z, T(1));
  return std::copysign(num, y) / den;
}

// Note [erfinv of double]: the first guess is the float polynomial
// (vecmath::detail::erfinv_half with the full log, about 6e-10 relative up
// to |y| = 1 - 5.6e-8; Pavlis' guess beyond), refined by Newton steps on
// x = erfinv(|y|) whose residual erf(x) - |y| is (1 - |y|) - erfc(x) from
// |y| = 0.5 up: 1 - |y| is exact there, so the residual stays accurate near
// +-1, where erf(x) - |y| cancels. One step (four after Pavlis' guess)
// leaves about 1 ulp, as PyTorch's result. (Pavlis' guess and two steps on
// erf(x) - y, the usual form, were 1e5 ulp off at |y| = 1 - 1e-3.) Builds
// with FMA take erf and erfc from Note [Vectorised double erf].
double erfinv_residual(double ay, double x) { return ay < 0.5 ? std::erf(x) - ay : (1.0 - ay) - std::erfc(x); }

double erfinv_newton(double ay, double x, int steps) {
  for (int i = 0; i < steps; ++i) x -= erfinv_residual(ay, x) / (kTwoOverSqrtPi * std::exp(-x * x));
  return x;
}

double erfinv_double(double y) {
  const double ay = std::abs(y);
  if (!(ay < 1.0)) return ay == 1.0 ? std::copysign(std::numeric_limits<double>::infinity(), y) : std::nan("");
  if (ay == 0.0) return y;
  return std::copysign(erfinv_newton(ay, erfinv_guess(ay), 4), y);
}

EMBER_VEC_INLINE vecmath::Vd erfinv_double(vecmath::Vd y) {
  constexpr int W = vecmath::kLanesD;
  constexpr double kGuessLimit = 0.999999;  // erfinv_half's range, with margin
  const vecmath::Vd ay = vecmath::abs(y);
  const vecmath::Vd guess = vecmath::detail::erfinv_half<true>(ay < kGuessLimit ? ay : vecmath::splatd(0.5));
  // The step's slope at the guess (its 6e-10 error does not reach the result).
  const vecmath::Vd slope = kTwoOverSqrtPi * vecmath::exp(-guess * guess);
  double in[W], out[W];
  vecmath::store(in, y);
#if EMBER_VEC_HAS_FMA
  // The residual from the vector erf and erfc (Note [Vectorised double erf]).
  const vecmath::Vd r = vecmath::select(ay < 0.5, vecmath::erf(guess) - ay, (1.0 - ay) - vecmath::erfc(guess));
  const vecmath::Vd step = vecmath::copysign(guess - r / slope, y);
  if (__builtin_expect(!vecmath::any(~((ay < kGuessLimit) & (ay != 0.0))), 1)) return step;
  vecmath::store(out, step);
#else
  double g[W], d[W];
  vecmath::store(g, guess);
  vecmath::store(d, slope);
  for (int j = 0; j < W; ++j) out[j] = std::copysign(g[j] - erfinv_residual(std::abs(in[j]), g[j]) / d[j], in[j]);
#endif
  // Zeros, |y| from kGuessLimit on, +-1 and NaN.
  for (int j = 0; j < W; ++j) {
    const double a = std::abs(in[j]);
    if (!(a < kGuessLimit && a != 0.0)) out[j] = erfinv_double(in[j]);
  }
  return vecmath::load(out);
}

// Note [Activation loops]: the activation is a template argument, so each
// loop is specialised (and the simple ones vectorised by the compiler); each
// operator's kernel picks its loop once per call, not per element.
template <ActivationOp op, typename acc_t>
inline acc_t forward_value(acc_t x, acc_t a, acc_t b, acc_t c) {
  const acc_t zero(0), three(3), six(6);
  switch (op) {
    case ActivationOp::LeakyRelu: return x > zero ? x : x * a;
    case ActivationOp::Elu:
      // a*b precomputed by the caller into `a` (negative coefficient). Zero
      // takes the linear branch, so a NaN alpha leaves it zero.
      return x < zero ? std::expm1(x * c) * a : x * b;
    case ActivationOp::Softplus: return x * a > b ? x : std::log1p(std::exp(x * a)) / a;
    case ActivationOp::Hardtanh:
      // As clamp: NaN passes through, and max_val wins over a larger min_val.
      return (x < a ? a : x) > b ? b : (x < a ? a : x);
    case ActivationOp::Hardsigmoid: return std::min(std::max(x + three, zero), six) / six;
    case ActivationOp::Hardswish: return x * std::min(std::max(x + three, zero), six) / six;
    case ActivationOp::Mish: return x * std::tanh(std::log1p(std::exp(x)));
    case ActivationOp::LogSigmoid: return std::min(x, zero) - std::log1p(std::exp(-std::abs(x)));
    case ActivationOp::Threshold: return x <= a ? b : x;
    case ActivationOp::Erfinv:
      if constexpr (std::is_same_v<acc_t, double>) {
        return erfinv_double(x);
      } else {
        return x;  // float types take the vector loop
      }
    case ActivationOp::BinaryCrossEntropy:
    case ActivationOp::TanhGrad:
    case ActivationOp::SigmoidGrad:
    case ActivationOp::SiluGrad: break;
  }
  return x;
}

template <ActivationOp op, typename acc_t>
inline acc_t backward_value(acc_t g, acc_t x, acc_t a, acc_t b, acc_t c) {
  const acc_t zero(0), one(1), three(3);
  switch (op) {
    case ActivationOp::LeakyRelu: return x > zero ? g : g * a;
    case ActivationOp::Elu:
      // a: alpha*scale, b: scale, c: input scale.
      return x <= zero ? g * c * a * std::exp(x * c) : g * b;
    case ActivationOp::Softplus: {
      const acc_t z = std::exp(x * a);
      return x * a > b ? g : g * z / (z + one);
    }
    case ActivationOp::Hardtanh: return (x <= a || x >= b) ? zero : g;
    case ActivationOp::Hardsigmoid:
      return (x > -three && x < three) ? g * acc_t(1.0f / 6.0f) : zero;  // a float constant, as PyTorch
    case ActivationOp::Hardswish:
      // Both kinks take the outer side, as PyTorch.
      if (x <= -three) return zero;
      if (x < three) return g * ((x / three) + acc_t(0.5));
      return g;
    case ActivationOp::Mish: {
      const acc_t sig = one / (one + std::exp(-x));
      const acc_t t = std::tanh(std::log1p(std::exp(x)));
      return g * (t + x * sig * (one - t * t));
    }
    case ActivationOp::LogSigmoid: {
      const bool neg = x < zero;
      const acc_t max_deriv = neg ? one : zero;
      const acc_t sign = neg ? one : -one;
      const acc_t z = std::exp(-std::abs(x));
      return g * (max_deriv - sign * (z / (one + z)));
    }
    case ActivationOp::Threshold: return x <= a ? zero : g;
    case ActivationOp::Erfinv: break;
    case ActivationOp::TanhGrad: return g * (one - x * x);
    case ActivationOp::SigmoidGrad: return g * (one - x) * x;
    case ActivationOp::SiluGrad: {
      const acc_t s = one / (one + std::exp(-x));
      return g * s * (one + x * (one - s));
    }
    case ActivationOp::BinaryCrossEntropy: {
      // g is the target, x the input probability.
      const acc_t hundred(-100);
      // See Note [Unfused products].
      const acc_t first = rounded((g - one) * std::max(acc_t(std::log1p(-x)), hundred));
      const acc_t second = rounded(g * std::max(acc_t(std::log(x)), hundred));
      return first - second;
    }
  }
  return g;
}

// Vector forms of the forwards on floats (float, Half and BFloat16 storage),
// the formulas of forward_value with the vector functions of VecMath.h and
// VecMathBinary.h.
template <ActivationOp op>
constexpr bool kHasVectorForward = op != ActivationOp::BinaryCrossEntropy && op != ActivationOp::TanhGrad &&
                                   op != ActivationOp::SigmoidGrad && op != ActivationOp::SiluGrad;

// min(max(x + 3, 0), 6), NaN passing through as in std::min/std::max.
EMBER_VEC_INLINE vecmath::Vf relu6_of_shift(vecmath::Vf x) {
  const vecmath::Vf y = x + 3.0f;
  const vecmath::Vf lo = vecmath::select(y < 0.0f, vecmath::splat(0.0f), y);
  return vecmath::select(lo > 6.0f, vecmath::splat(6.0f), lo);
}

template <ActivationOp op>
EMBER_VEC_INLINE vecmath::Vf forward_vector(vecmath::Vf x, float a, float b, float c) {
  using vecmath::select;
  using vecmath::splat;
  if constexpr (op == ActivationOp::LeakyRelu) {
    return select(x > 0.0f, x, x * a);
  } else if constexpr (op == ActivationOp::Elu) {
    return select(x < 0.0f, vecmath::expm1(x * c) * a, x * b);
  } else if constexpr (op == ActivationOp::Softplus) {
    return select(x * a > b, x, vecmath::log1p(vecmath::exp(x * a)) / a);
  } else if constexpr (op == ActivationOp::Hardtanh) {
    const vecmath::Vf lo = select(x < a, splat(a), x);
    return select(lo > b, splat(b), lo);
  } else if constexpr (op == ActivationOp::Hardsigmoid) {
    return relu6_of_shift(x) / 6.0f;
  } else if constexpr (op == ActivationOp::Hardswish) {
    return x * relu6_of_shift(x) / 6.0f;
  } else if constexpr (op == ActivationOp::Mish) {
    return x * vecmath::tanh(vecmath::log1p(vecmath::exp(x)));
  } else if constexpr (op == ActivationOp::LogSigmoid) {
    return select(x > 0.0f, splat(0.0f), x) - vecmath::log1p(vecmath::exp(-vecmath::abs(x)));
  } else if constexpr (op == ActivationOp::Erfinv) {
    return vecmath::erfinv(x);  // computed in double
  } else {
    static_assert(op == ActivationOp::Threshold, "no vector form");
    return select(x <= a, splat(b), x);
  }
}

template <ActivationOp op>
void forward_loop(const TensorIterator& it, double a, double b, double c) {
  if constexpr (op == ActivationOp::Erfinv) {
    if (it.common_dtype() == ScalarType::Double) {
      const auto f = [](vecmath::Vd y) { return erfinv_double(y); };
      it.for_each([&](char** d, const int64_t* s, int64_t n) { vec_loop1_double(d, s, n, f); });
      return;
    }
  }
  if constexpr (kHasVectorForward<op>) {
    const ScalarType t = it.common_dtype();
    if (t == ScalarType::Float || t == ScalarType::Half || t == ScalarType::BFloat16) {
      const float pa = op == ActivationOp::Elu ? float(a) * float(b) : float(a), pb = float(b), pc = float(c);
      const auto f = [=](vecmath::Vf x) { return forward_vector<op>(x, pa, pb, pc); };
      it.for_each([&](char** d, const int64_t* s, int64_t n) {
        if (t == ScalarType::Float)
          vec_loop<float, 1>(d, s, n, f);
        else if (t == ScalarType::Half)
          vec_loop<Half, 1>(d, s, n, f);
        else
          vec_loop<BFloat16, 1>(d, s, n, f);
      });
      return;
    }
  }
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (std::is_same_v<scalar_t, bool>) {
      EMBER_INTERNAL_ASSERT(false, "activation on bool");
    } else {
      using acc_t = opmath_t<scalar_t>;
      acc_t pa = static_cast<acc_t>(a), pb = static_cast<acc_t>(b), pc = static_cast<acc_t>(c);
      if constexpr (op == ActivationOp::Elu) pa = static_cast<acc_t>(a) * static_cast<acc_t>(b);
      if constexpr (is_float_like_v<scalar_t>) {
        run_acc<scalar_t, scalar_t, 1>(it, [=](acc_t x) { return forward_value<op, acc_t>(x, pa, pb, pc); });
      } else if constexpr (op == ActivationOp::Threshold) {
        run_acc<scalar_t, scalar_t, 1>(it, [=](acc_t x) -> acc_t { return x <= pa ? pb : x; });
      } else if constexpr (op == ActivationOp::Hardtanh) {
        run_acc<scalar_t, scalar_t, 1>(it, [=](acc_t x) -> acc_t {
          const acc_t lo = x < pa ? pa : x;
          return lo > pb ? pb : lo;
        });
      } else {
        EMBER_INTERNAL_ASSERT(false, "activation on an integral dtype");
      }
    }
  });
}

// Vector forms of the gradients on floats (float, Half and BFloat16 storage),
// in the same arithmetic order as backward_value.
template <ActivationOp op>
constexpr bool kHasVectorBackward =
    op == ActivationOp::LeakyRelu || op == ActivationOp::Elu || op == ActivationOp::Softplus ||
    op == ActivationOp::Hardtanh || op == ActivationOp::Threshold || op == ActivationOp::TanhGrad ||
    op == ActivationOp::SigmoidGrad || op == ActivationOp::SiluGrad || op == ActivationOp::Hardsigmoid ||
    op == ActivationOp::Hardswish || op == ActivationOp::Mish || op == ActivationOp::LogSigmoid;

template <ActivationOp op>
EMBER_VEC_INLINE vecmath::Vf backward_vector(vecmath::Vf g, vecmath::Vf x, float a, float b, float c) {
  using vecmath::select;
  using vecmath::Vf;
  const Vf zero = vecmath::splat(0.0f);
  if constexpr (op == ActivationOp::LeakyRelu) {
    return select(x > 0.0f, g, g * a);
  } else if constexpr (op == ActivationOp::Elu) {
    return select(x <= 0.0f, g * c * a * vecmath::exp(x * c), g * b);
  } else if constexpr (op == ActivationOp::Softplus) {
    const Vf z = vecmath::exp(x * a);
    return select(x * a > b, g, g * z / (z + 1.0f));
  } else if constexpr (op == ActivationOp::Hardtanh) {
    return select((x <= a) | (x >= b), zero, g);
  } else if constexpr (op == ActivationOp::Threshold) {
    return select(x <= a, zero, g);
  } else if constexpr (op == ActivationOp::Hardsigmoid) {
    return select((x > -3.0f) & (x < 3.0f), g * (1.0f / 6.0f), zero);
  } else if constexpr (op == ActivationOp::Hardswish) {
    return select(x <= -3.0f, zero, select(x < 3.0f, g * ((x / 3.0f) + 0.5f), g));
  } else if constexpr (op == ActivationOp::Mish) {
    const Vf sig = 1.0f / (1.0f + vecmath::exp(-x));
    const Vf t = vecmath::tanh(vecmath::log1p(vecmath::exp(x)));
    return g * (t + x * sig * (1.0f - t * t));
  } else if constexpr (op == ActivationOp::LogSigmoid) {
    const vecmath::Vi neg = x < 0.0f;
    const Vf z = vecmath::exp(-vecmath::abs(x));
    const Vf q = z / (1.0f + z);
    return g * select(neg, 1.0f - q, q);
  } else if constexpr (op == ActivationOp::TanhGrad) {
    return g * (1.0f - x * x);
  } else if constexpr (op == ActivationOp::SigmoidGrad) {
    return g * (1.0f - x) * x;
  } else {
    static_assert(op == ActivationOp::SiluGrad, "no vector form");
    const Vf s = 1.0f / (1.0f + vecmath::exp(-x));
    return g * s * (1.0f + x * (1.0f - s));
  }
}

template <ActivationOp op>
void backward_loop(const TensorIterator& it, double a, double b, double c) {
  if constexpr (kHasVectorBackward<op>) {
    const ScalarType t = it.common_dtype();
    if (t == ScalarType::Float || t == ScalarType::Half || t == ScalarType::BFloat16) {
      const float pa = op == ActivationOp::Elu ? float(a) * float(b) : float(a), pb = float(b), pc = float(c);
      const auto f = [=](vecmath::Vf g, vecmath::Vf x) { return backward_vector<op>(g, x, pa, pb, pc); };
      it.for_each([&](char** d, const int64_t* s, int64_t n) {
        if (t == ScalarType::Float)
          vec_loop<float, 2>(d, s, n, f);
        else if (t == ScalarType::Half)
          vec_loop<Half, 2>(d, s, n, f);
        else
          vec_loop<BFloat16, 2>(d, s, n, f);
      });
      return;
    }
  }
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (!is_float_like_v<scalar_t>) {
      EMBER_INTERNAL_ASSERT(false, "activation backward on ", scalar_type_name(it.common_dtype()));
    } else {
      using acc_t = opmath_t<scalar_t>;
      acc_t pa = static_cast<acc_t>(a), pb = static_cast<acc_t>(b), pc = static_cast<acc_t>(c);
      if constexpr (op == ActivationOp::Elu) pa = static_cast<acc_t>(a) * static_cast<acc_t>(b);
      run_acc<scalar_t, scalar_t, 2>(it, [=](acc_t g, acc_t x) { return backward_value<op, acc_t>(g, x, pa, pb, pc); });
    }
  });
}

// ---- forward -------------------------------------------------------------------

void leaky_relu_kernel(const TensorIterator& it, const Scalar& negative_slope) {
  forward_loop<ActivationOp::LeakyRelu>(it, negative_slope.to_double(), 0, 0);
}
EMBER_REGISTER_POINTWISE(leaky_relu, &leaky_relu_kernel);

void elu_kernel(const TensorIterator& it, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  if (elu_sleef(it, alpha, scale, input_scale)) return;
  forward_loop<ActivationOp::Elu>(it, alpha.to_double(), scale.to_double(), input_scale.to_double());
}
EMBER_REGISTER_POINTWISE(elu, &elu_kernel);

void softplus_kernel(const TensorIterator& it, const Scalar& beta, const Scalar& threshold) {
  if (softplus_sleef(it, beta, threshold)) return;
  forward_loop<ActivationOp::Softplus>(it, beta.to_double(), threshold.to_double(), 0);
}
EMBER_REGISTER_POINTWISE(softplus, &softplus_kernel);

void hardtanh_kernel(const TensorIterator& it, const Scalar& min_val, const Scalar& max_val) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::hardtanh_stub, it, min_val, max_val);
  forward_loop<ActivationOp::Hardtanh>(it, min_val.to_double(), max_val.to_double(), 0);
}
EMBER_REGISTER_POINTWISE(hardtanh, &hardtanh_kernel);

void hardsigmoid_kernel(const TensorIterator& it) { forward_loop<ActivationOp::Hardsigmoid>(it, 0, 0, 0); }
EMBER_REGISTER_POINTWISE(hardsigmoid, &hardsigmoid_kernel);

void hardswish_kernel(const TensorIterator& it) { forward_loop<ActivationOp::Hardswish>(it, 0, 0, 0); }
EMBER_REGISTER_POINTWISE(hardswish, &hardswish_kernel);

void mish_kernel(const TensorIterator& it) {
  if (!mish_sleef(it)) forward_loop<ActivationOp::Mish>(it, 0, 0, 0);
}
EMBER_REGISTER_POINTWISE(mish, &mish_kernel);

void log_sigmoid_kernel(const TensorIterator& it) {
  if (!log_sigmoid_sleef(it)) forward_loop<ActivationOp::LogSigmoid>(it, 0, 0, 0);
}
EMBER_REGISTER_POINTWISE(log_sigmoid, &log_sigmoid_kernel);

void threshold_kernel(const TensorIterator& it, const Scalar& threshold, const Scalar& value) {
  EMBER_USE_BASELINE_KERNEL_FOR(it.common_dtype(), native::threshold_stub, it, threshold, value);
  forward_loop<ActivationOp::Threshold>(it, threshold.to_double(), value.to_double(), 0);
}
EMBER_REGISTER_POINTWISE(threshold, &threshold_kernel);

// float32/float64 through MKL's VML as PyTorch (Note [MKL for elementwise functions]).
void erfinv_kernel(const TensorIterator& it) {
  if (!try_vml(it, "ErfInv")) forward_loop<ActivationOp::Erfinv>(it, 0, 0, 0);
}
EMBER_REGISTER_POINTWISE(erfinv, &erfinv_kernel);

// ---- gradients (inputs: grad, x) ---------------------------------------------------

void leaky_relu_backward_kernel(const TensorIterator& it, const Scalar& negative_slope) {
  backward_loop<ActivationOp::LeakyRelu>(it, negative_slope.to_double(), 0, 0);
}
EMBER_REGISTER_POINTWISE(leaky_relu_backward, &leaky_relu_backward_kernel);

void elu_backward_kernel(const TensorIterator& it, const Scalar& alpha, const Scalar& scale,
                         const Scalar& input_scale) {
  if (elu_backward_sleef(it, alpha, scale, input_scale)) return;
  backward_loop<ActivationOp::Elu>(it, alpha.to_double(), scale.to_double(), input_scale.to_double());
}
EMBER_REGISTER_POINTWISE(elu_backward, &elu_backward_kernel);

void softplus_backward_kernel(const TensorIterator& it, const Scalar& beta, const Scalar& threshold) {
  if (softplus_backward_sleef(it, beta, threshold)) return;
  backward_loop<ActivationOp::Softplus>(it, beta.to_double(), threshold.to_double(), 0);
}
EMBER_REGISTER_POINTWISE(softplus_backward, &softplus_backward_kernel);

void hardtanh_backward_kernel(const TensorIterator& it, const Scalar& min_val, const Scalar& max_val) {
  backward_loop<ActivationOp::Hardtanh>(it, min_val.to_double(), max_val.to_double(), 0);
}
EMBER_REGISTER_POINTWISE(hardtanh_backward, &hardtanh_backward_kernel);

void hardsigmoid_backward_kernel(const TensorIterator& it) { backward_loop<ActivationOp::Hardsigmoid>(it, 0, 0, 0); }
EMBER_REGISTER_POINTWISE(hardsigmoid_backward, &hardsigmoid_backward_kernel);

void hardswish_backward_kernel(const TensorIterator& it) { backward_loop<ActivationOp::Hardswish>(it, 0, 0, 0); }
EMBER_REGISTER_POINTWISE(hardswish_backward, &hardswish_backward_kernel);

void mish_backward_kernel(const TensorIterator& it) {
  if (!mish_backward_sleef(it)) backward_loop<ActivationOp::Mish>(it, 0, 0, 0);
}
EMBER_REGISTER_POINTWISE(mish_backward, &mish_backward_kernel);

void log_sigmoid_backward_kernel(const TensorIterator& it) {
  if (!log_sigmoid_backward_sleef(it)) backward_loop<ActivationOp::LogSigmoid>(it, 0, 0, 0);
}
EMBER_REGISTER_POINTWISE(log_sigmoid_backward, &log_sigmoid_backward_kernel);

void threshold_backward_kernel(const TensorIterator& it, const Scalar& threshold) {
  backward_loop<ActivationOp::Threshold>(it, threshold.to_double(), 0, 0);
}
EMBER_REGISTER_POINTWISE(threshold_backward, &threshold_backward_kernel);

// Fused forms of the derivative formulas: inputs (grad, result) for tanh and
// sigmoid, (grad, self) for silu.
void tanh_backward_kernel(const TensorIterator& it) { backward_loop<ActivationOp::TanhGrad>(it, 0, 0, 0); }
EMBER_REGISTER_POINTWISE(tanh_backward, &tanh_backward_kernel);

void sigmoid_backward_kernel(const TensorIterator& it) { backward_loop<ActivationOp::SigmoidGrad>(it, 0, 0, 0); }
EMBER_REGISTER_POINTWISE(sigmoid_backward, &sigmoid_backward_kernel);

void silu_backward_kernel(const TensorIterator& it) {
  if (!silu_backward_sleef(it)) backward_loop<ActivationOp::SiluGrad>(it, 0, 0, 0);
}
EMBER_REGISTER_POINTWISE(silu_backward, &silu_backward_kernel);

// Inputs (target, input).
void binary_cross_entropy_kernel(const TensorIterator& it) {
  backward_loop<ActivationOp::BinaryCrossEntropy>(it, 0, 0, 0);
}

}  // namespace

EMBER_REGISTER_DISPATCH(binary_cross_entropy_stub, &binary_cross_entropy_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
