// Complex-number loops, compiled once per CPU capability: arithmetic, the
// elementwise functions PyTorch defines for complex inputs, comparisons and
// the complex-to-real maps (abs, angle). Products are the plain
// (ac - bd) + (ad + bc)i that PyTorch's CPU kernels compute, so they
// vectorise; quotients and functions are std::complex's.
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "ember/cpu/ComplexStubs.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {

inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// out[i] = op(a[i]) for element types Out and In.
template <typename Out, typename In, typename Op>
void map1(const TensorIterator& it, Op op) {
  it.for_each([&op](char** d, const int64_t* s, int64_t n) { unary_loop<Out, In>(d, s, n, op); });
}

// out[i] = op(a[i], b[i]) for element types Out and In (both inputs In).
template <typename Out, typename In, typename Op>
void map2(const TensorIterator& it, Op op) {
  it.for_each([&op](char** d, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == sizeof(In)) {
      Out* o = reinterpret_cast<Out*>(d[0]);
      const In* a = reinterpret_cast<const In*>(d[1]);
      const In* b = reinterpret_cast<const In*>(d[2]);
      for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], b[i]);
    } else if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == 0) {
      Out* o = reinterpret_cast<Out*>(d[0]);
      const In* a = reinterpret_cast<const In*>(d[1]);
      const In bv = *reinterpret_cast<const In*>(d[2]);
      for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], bv);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(d[0] + i * s[0]) =
            op(*reinterpret_cast<const In*>(d[1] + i * s[1]), *reinterpret_cast<const In*>(d[2] + i * s[2]));
      }
    }
  });
}

template <typename C>
inline C cmul(C a, C b) {
  return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}

// Runs f.template operator()<C>() with C the iterator's complex type.
#define EMBER_COMPLEX_LOOP(it, name, ...) EMBER_DISPATCH_COMPLEX_TYPES((it).common_dtype(), name, __VA_ARGS__)

void add_kernel(const TensorIterator& it, const Scalar& alpha) {
  EMBER_COMPLEX_LOOP(it, "add_cpu", [&] {
    using C = scalar_t;
    // alpha * y is a complex product even for alpha = 1, as in PyTorch: an
    // infinite part of y makes the other part nan (inf * 0).
    const C a = alpha.to<C>();
    map2<C, C>(it, [a](C x, C y) {
      const C p = cmul(a, y);
      return C(x.real() + p.real(), x.imag() + p.imag());
    });
  });
}

void mul_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "mul_cpu",
                     [&] { map2<scalar_t, scalar_t>(it, [](scalar_t x, scalar_t y) { return cmul(x, y); }); });
}

void div_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "div_cpu",
                     [&] { map2<scalar_t, scalar_t>(it, [](scalar_t x, scalar_t y) { return x / y; }); });
}

// std::complex's pow, as PyTorch's complex type computes it.
void pow_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "pow_cpu",
                     [&] { map2<scalar_t, scalar_t>(it, [](scalar_t x, scalar_t y) { return std::pow(x, y); }); });
}

void eq_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "eq_cpu", [&] { map2<bool, scalar_t>(it, [](scalar_t x, scalar_t y) { return x == y; }); });
}

void ne_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "ne_cpu", [&] { map2<bool, scalar_t>(it, [](scalar_t x, scalar_t y) { return x != y; }); });
}

// z / |z|; PyTorch divides complex64 values by |z| + 0i as complex numbers
// (an infinite part gives nan + nan i) and complex128 ones part by part.
template <typename C>
inline C sgn_value(C z) {
  if (z == C(0)) return C(0);
  using R = typename C::value_type;
  if constexpr (std::is_same_v<R, float>) {
    return z / C(std::abs(z), R(0));
  } else {
    return z / std::abs(z);
  }
}

// Unary complex -> complex maps.
#define EMBER_COMPLEX_UNARY(name, expr)          \
  void name##_kernel(const TensorIterator& it) { \
    EMBER_COMPLEX_LOOP(it, #name "_cpu", [&] {   \
      using C = scalar_t;                        \
      using R = typename C::value_type;          \
      (void)sizeof(R);                           \
      map1<C, C>(it, [](C z) { return expr; });  \
    });                                          \
  }

EMBER_COMPLEX_UNARY(neg, C(-z.real(), -z.imag()))
EMBER_COMPLEX_UNARY(conj, C(z.real(), -z.imag()))
EMBER_COMPLEX_UNARY(exp, std::exp(z))
EMBER_COMPLEX_UNARY(log, std::log(z))
EMBER_COMPLEX_UNARY(sqrt, std::sqrt(z))
EMBER_COMPLEX_UNARY(rsqrt, C(1) / std::sqrt(z))
EMBER_COMPLEX_UNARY(sin, std::sin(z))
EMBER_COMPLEX_UNARY(cos, std::cos(z))
EMBER_COMPLEX_UNARY(tan, std::tan(z))
EMBER_COMPLEX_UNARY(sinh, std::sinh(z))
EMBER_COMPLEX_UNARY(cosh, std::cosh(z))
EMBER_COMPLEX_UNARY(tanh, std::tanh(z))
EMBER_COMPLEX_UNARY(asin, std::asin(z))
EMBER_COMPLEX_UNARY(acos, std::acos(z))
EMBER_COMPLEX_UNARY(atan, std::atan(z))
EMBER_COMPLEX_UNARY(sigmoid, C(1) / (C(1) + std::exp(-z)))
EMBER_COMPLEX_UNARY(reciprocal, C(1) / z)
#undef EMBER_COMPLEX_UNARY

// PyTorch's scalar sgn: z / (|z|, 0) by its complex division (numpy's
// algorithm), with |z| libm's hypot; 0 for 0.
template <typename R>
void sgn_scalar(R a, R b, R* out) {
  if (a == R(0) && b == R(0)) {
    out[0] = out[1] = R(0);
    return;
  }
  const R c = std::hypot(a, b), d = R(0);
  const R abs_c = std::abs(c), abs_d = std::abs(d);
  if (abs_c >= abs_d) {
    if (abs_c == R(0) && abs_d == R(0)) {
      out[0] = a / abs_c;
      out[1] = b / abs_d;
    } else {
      const R rat = d / c, scl = R(1) / (c + d * rat);
      out[0] = (a + b * rat) * scl;
      out[1] = (b - a * rat) * scl;
    }
  } else {
    const R rat = c / d, scl = R(1) / (d + c * rat);
    out[0] = (a * rat + b) * scl;
    out[1] = (b * rat - a) * scl;
  }
}

// sgn (Note [Complex abs and sgn with SLEEF]): with SLEEF the vector form on
// contiguous rows and sgn_scalar elsewhere; the DEFAULT build's vector form
// is the scalar one element by element, as PyTorch's.
void sgn_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "sgn_cpu", [&] {
    using C = scalar_t;
    using R = typename C::value_type;
    if (sleefvec::complex_sgn<R>(it, [](R a, R b, R* out) { sgn_scalar(a, b, out); })) return;
#if EMBER_SLEEF_LOOPS
    map1<C, C>(it, [](C z) { return sgn_value(z); });
#else
    map1<C, C>(it, [](C z) {
      R out[2];
      sgn_scalar(z.real(), z.imag(), out);
      return C(out[0], out[1]);
    });
#endif
  });
}

// Complex -> bool tests of both parts.
#define EMBER_COMPLEX_TEST(name, expr)                            \
  void name##_kernel(const TensorIterator& it) {                  \
    EMBER_DISPATCH_COMPLEX_TYPES(it.dtype(1), #name "_cpu", [&] { \
      using C = scalar_t;                                         \
      map1<bool, C>(it, [](C z) { return expr; });                \
    });                                                           \
  }
EMBER_COMPLEX_TEST(isnan, std::isnan(z.real()) || std::isnan(z.imag()))
EMBER_COMPLEX_TEST(isinf, std::isinf(z.real()) || std::isinf(z.imag()))
EMBER_COMPLEX_TEST(isfinite, std::isfinite(z.real()) && std::isfinite(z.imag()))
#undef EMBER_COMPLEX_TEST

void abs_kernel(const TensorIterator& it) {
  EMBER_DISPATCH_COMPLEX_TYPES(it.dtype(1), "abs_cpu", [&] {
    using C = scalar_t;
    if constexpr (std::is_same_v<C, std::complex<float>>) {
      // In double, |z|^2 cannot overflow and its square root rounds once.
      map1<float, C>(it, [](C z) {
        const double x = z.real(), y = z.imag();
        if (std::isinf(x) || std::isinf(y)) return std::numeric_limits<float>::infinity();
        return static_cast<float>(std::sqrt(x * x + y * y));
      });
    } else {
      // SLEEF's hypot on the contiguous part (Note [Complex abs and sgn with SLEEF]).
      if (sleefvec::complex_abs<double>(it)) return;
      map1<double, C>(it, [](C z) { return std::hypot(z.real(), z.imag()); });
    }
  });
}

void angle_kernel(const TensorIterator& it) {
  const ScalarType in = it.dtype(1);
  if (is_complex_type(in)) {
    EMBER_DISPATCH_COMPLEX_TYPES(in, "angle_cpu", [&] {
      using C = scalar_t;
      using R = typename C::value_type;
      map1<R, C>(it, [](C z) { return std::atan2(z.imag(), z.real()); });
    });
    return;
  }
  switch (in) {
    case ScalarType::Float:
      return map1<float, float>(it, [](float x) { return std::isnan(x) ? x : (x < 0 ? float(M_PI) : 0.0f); });
    case ScalarType::Double:
      return map1<double, double>(it, [](double x) { return std::isnan(x) ? x : (x < 0 ? M_PI : 0.0); });
    default: EMBER_INTERNAL_ASSERT(false, "angle: float or double input expected");
  }
}

void make_complex_kernel(const TensorIterator& it) {
  EMBER_DISPATCH_COMPLEX_TYPES(it.dtype(0), "complex_cpu", [&] {
    using C = scalar_t;
    using R = typename C::value_type;
    map2<C, R>(it, [](R re, R im) { return C(re, im); });
  });
}

void polar_kernel(const TensorIterator& it) {
  EMBER_DISPATCH_COMPLEX_TYPES(it.dtype(0), "polar_cpu", [&] {
    using C = scalar_t;
    using R = typename C::value_type;
    map2<C, R>(it, [](R r, R t) { return C(r * std::cos(t), r * std::sin(t)); });
  });
}

#undef EMBER_COMPLEX_LOOP

}  // namespace

EMBER_REGISTER_DISPATCH(add_complex_stub, &add_kernel);
EMBER_REGISTER_DISPATCH(mul_complex_stub, &mul_kernel);
EMBER_REGISTER_DISPATCH(neg_complex_stub, &neg_kernel);
EMBER_REGISTER_DISPATCH(conj_complex_stub, &conj_kernel);
EMBER_REGISTER_DISPATCH(sgn_complex_stub, &sgn_kernel);
EMBER_REGISTER_DISPATCH(abs_complex_stub, &abs_kernel);
EMBER_REGISTER_DISPATCH(angle_stub, &angle_kernel);
EMBER_REGISTER_DISPATCH(make_complex_stub, &make_complex_kernel);
EMBER_REGISTER_DISPATCH(polar_stub, &polar_kernel);
EMBER_REGISTER_POINTWISE(div_complex, &div_kernel);
EMBER_REGISTER_POINTWISE(eq_complex, &eq_kernel);
EMBER_REGISTER_POINTWISE(pow_complex, &pow_kernel);
EMBER_REGISTER_POINTWISE(ne_complex, &ne_kernel);
EMBER_REGISTER_POINTWISE(exp_complex, &exp_kernel);
EMBER_REGISTER_POINTWISE(log_complex, &log_kernel);
EMBER_REGISTER_POINTWISE(sqrt_complex, &sqrt_kernel);
EMBER_REGISTER_POINTWISE(rsqrt_complex, &rsqrt_kernel);
EMBER_REGISTER_POINTWISE(sin_complex, &sin_kernel);
EMBER_REGISTER_POINTWISE(cos_complex, &cos_kernel);
EMBER_REGISTER_POINTWISE(tan_complex, &tan_kernel);
EMBER_REGISTER_POINTWISE(sinh_complex, &sinh_kernel);
EMBER_REGISTER_POINTWISE(cosh_complex, &cosh_kernel);
EMBER_REGISTER_POINTWISE(tanh_complex, &tanh_kernel);
EMBER_REGISTER_POINTWISE(asin_complex, &asin_kernel);
EMBER_REGISTER_POINTWISE(acos_complex, &acos_kernel);
EMBER_REGISTER_POINTWISE(atan_complex, &atan_kernel);
EMBER_REGISTER_POINTWISE(sigmoid_complex, &sigmoid_kernel);
EMBER_REGISTER_POINTWISE(reciprocal_complex, &reciprocal_kernel);
EMBER_REGISTER_POINTWISE(isnan_complex, &isnan_kernel);
EMBER_REGISTER_POINTWISE(isinf_complex, &isinf_kernel);
EMBER_REGISTER_POINTWISE(isfinite_complex, &isfinite_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
