// CUDA kernels of special functions: digamma, polygamma, Hurwitz zeta,
// Bessel functions (CUDA's cyl_bessel_i0/i1), entr, erfcx, log_ndtr, ndtri
// (CUDA's normcdfinv), spherical_bessel_j0 and the orthogonal polynomials.
// The series and recurrences are Cephes' and PyTorch's, as in the CPU
// kernels (cpu/kernels/SpecialKernel.cpp), evaluated in the compute type.
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cuda {
namespace {

template <typename C>
__device__ C digamma_value(C x) {
  if (x == C(0)) return dm::copysign(dm::inf<C>(), -x);
  C acc = 0;
  if (x < C(0)) {
    if (x == dm::trunc(x)) return dm::nan<C>();
    // Reflection; tan of pi times the fractional part keeps the argument small.
    const double frac = static_cast<double>(x) - ::trunc(static_cast<double>(x));
    acc = -static_cast<C>(dm::kPi / ::tan(dm::kPi * frac));
    x = C(1) - x;
  }
  while (x < C(10)) {
    acc -= C(1) / x;
    x += C(1);
  }
  if (x == C(10)) return acc + C(2.25175258906672110764);  // psi(10)
  C tail = 0;
  if (x < C(1.0e17)) {
    const C z = C(1) / (x * x);
    const C c[7] = {C(8.33333333333333333333E-2),  C(-2.10927960927960927961E-2), C(7.57575757575757575758E-3),
                    C(-4.16666666666666666667E-3), C(3.96825396825396825397E-3),  C(-8.33333333333333333333E-3),
                    C(8.33333333333333333333E-2)};
    C r = 0;
    for (int i = 0; i < 7; ++i) r = r * z + c[i];
    tail = z * r;
  }
  return acc + dm::log(x) - (C(0.5) / x) - tail;
}

template <typename C>
__device__ C trigamma_value(C x) {
  C sign = 1, acc = 0;
  if (x < C(0.5)) {
    sign = -1;
    const C s = dm::sin(C(dm::kPi) * x);
    acc -= (C(dm::kPi) * C(dm::kPi)) / (s * s);
    x = C(1) - x;
  }
  for (int i = 0; i < 6; ++i) {
    acc += C(1) / (x * x);
    x += C(1);
  }
  const C ixx = C(1) / (x * x);
  acc += (C(1) + C(1) / (C(2) * x) + ixx * (C(1) / C(6) - ixx * (C(1) / C(30) - ixx * (C(1) / C(42))))) / x;
  return sign * acc;
}

// Hurwitz zeta(s, q) by Euler-Maclaurin summation (Cephes zeta).
template <typename C>
__device__ C hurwitz_zeta(C s, C q) {
  const C kB[12] = {C(12.0),
                    C(-720.0),
                    C(30240.0),
                    C(-1209600.0),
                    C(47900160.0),
                    C(-1.8924375803183791606e9),
                    C(7.47242496e10),
                    C(-2.950130727918164224e12),
                    C(1.1646782814350067249e14),
                    C(-4.5979787224074726105e15),
                    C(1.8152105401943546773e17),
                    C(-7.1661652561756670113e18)};
  const C eps = C(1.11022302462515654042E-16);
  if (s == C(1)) return dm::inf<C>();
  if (s < C(1)) return dm::nan<C>();
  if (q <= C(0)) {
    if (q == dm::floor(q)) return dm::inf<C>();
    if (s != dm::floor(s)) return dm::nan<C>();
  }
  C sum = dm::pow(q, -s), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= C(9)) {
    ++i;
    a += C(1);
    b = dm::pow(a, -s);
    sum += b;
    if (-eps * sum < b && b < eps * sum) return sum;
  }
  const C w = a;
  sum += b * w / (s - C(1));
  sum -= C(0.5) * b;
  C fac = 1, k = 0;
  for (i = 0; i < 12; ++i) {
    fac *= s + k;
    b /= w;
    C t = fac * b / kB[i];
    sum = sum + t;
    t = dm::fabs(t / sum);
    if (t < eps) return sum;
    k += C(1);
    fac *= s + k;
    b /= w;
    k += C(1);
  }
  return sum;
}

EMBER_CUDA_BINARY_OP(ZetaOp, hurwitz_zeta(a, b));

// exp(-|x|) I_nu(x) for nu = 0, 1: the product below |x| = 50, the
// asymptotic series e^-x I_nu(x) ~ (2 pi x)^-1/2 sum_k t_k above, with
// t_k = -t_{k-1} (4 nu^2 - (2k - 1)^2) / (8 k x) (20 terms: below double's
// rounding from x = 50 on).
template <typename C>
__device__ C scaled_bessel_i(C x, int nu) {
  const C ax = dm::fabs(x);
  C r;
  if (ax < C(50)) {
    r = dm::exp(-ax) * (nu == 0 ? dm::cyl_bessel_i0(ax) : dm::cyl_bessel_i1(ax));
  } else {
    C term = 1, sum = 1;
    for (int k = 1; k <= 20; ++k) {
      term = -term * (C(4 * nu * nu) - C((2 * k - 1) * (2 * k - 1))) / (C(8 * k) * ax);
      sum += term;
    }
    r = sum / dm::sqrt(C(2 * dm::kPi) * ax);
  }
  return (nu == 1 && x < C(0)) ? -r : r;
}

template <typename C>
struct ScaledBesselOp {
  int nu;
  __device__ C operator()(C x) const { return x != x ? x : scaled_bessel_i(x, nu); }
};

// ---- the regularized incomplete gamma functions, in double: P(a, x) by its
// series below x = a + 1, Q(a, x) by its continued fraction above (the CPU
// kernel's method, cpu/kernels/SpecialKernel.cpp).
__device__ double log1p_minus(double d) {  // log(1 + d) - d without cancellation
  if (::fabs(d) > 0.5) return ::log1p(d) - d;
  double power = d, sum = 0;
  for (int k = 2; k < 200; ++k) {
    power *= -d;
    const double term = power / k;
    sum += term;
    if (::fabs(term) <= 1e-18 * ::fabs(sum)) break;
  }
  return sum;
}
__device__ double igamma_log_factor(double a, double x) {  // log(x^a e^-x / Gamma(a))
  if (a < 20.0) return a * ::log(x) - x - ::lgamma(a);
  constexpr double kLogTwoPi = 1.83787706640934548356;
  const double r = 1.0 / (a * a);
  const double stirling_correction =
      (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r * (1.0 / 1188 - r * (691.0 / 360360)))))) / a;
  return a * log1p_minus((x - a) / a) + 0.5 * (::log(a) - kLogTwoPi) - stirling_correction;
}
__device__ double igamma_double(double a, double x, bool upper) {
  const double nan = dm::nan<double>();
  if (a < 0.0 || x < 0.0) return nan;
  if (a == 0.0) return x > 0.0 ? (upper ? 0.0 : 1.0) : nan;
  if (x == 0.0) return upper ? 1.0 : 0.0;
  if (::isinf(a)) return ::isinf(x) ? nan : (upper ? 1.0 : 0.0);
  if (::isinf(x)) return upper ? 0.0 : 1.0;
  if (x < a + 1.0) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 100000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (::fabs(term) < ::fabs(sum) * 1e-17) break;
    }
    const double p = sum * ::exp(igamma_log_factor(a, x));
    return upper ? 1.0 - p : p;
  }
  constexpr double kTiny = 1e-300;  // modified Lentz
  double b = x + 1.0 - a, c = 1.0 / kTiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (::fabs(delta - 1.0) < 1e-17) break;
  }
  const double q = ::exp(igamma_log_factor(a, x)) * h;
  return upper ? q : 1.0 - q;
}

template <typename C>
struct IgammaOp {
  bool upper;
  __device__ C operator()(C a, C x) const {
    return static_cast<C>(igamma_double(static_cast<double>(a), static_cast<double>(x), upper));
  }
};

template <typename C>
struct PolygammaOp {
  int n;
  C factorial;  // n!
  __device__ C operator()(C x) const {
    if (n == 0) return digamma_value(x);
    if (n == 1) return trigamma_value(x);
    return ((n % 2) ? C(1) : C(-1)) * factorial * hurwitz_zeta(C(n + 1), x);
  }
};

template <typename C>
struct EntrOp {
  __device__ C operator()(C x) const {
    if (x != x) return x;
    if (x > C(0)) return -x * dm::log(x);
    if (x == C(0)) return C(0);
    return -dm::inf<C>();
  }
};

// log of the standard normal distribution function (through erfcx below -1).
template <typename C>
struct LogNdtrOp {
  __device__ C operator()(C x) const {
    const C t = x * C(0.70710678118654752440);
    if (x < C(-1)) return dm::log(dm::erfcx(-t) / C(2)) - t * t;
    return dm::log1p(-dm::erfc(t) / C(2));
  }
};

template <typename C>
struct SphericalBesselJ0Op {
  __device__ C operator()(C x) const {
    if (x == dm::inf<C>() || x == -dm::inf<C>()) return C(0);
    if (dm::fabs(x) < C(0.5)) {
      const C x2 = x * x;
      return C(1) +
             x2 * (C(-1) / C(6) +
                   x2 * (C(1) / C(120) +
                         x2 * (C(-1) / C(5040) +
                               x2 * (C(1) / C(362880) + x2 * (C(-1) / C(39916800) + x2 * (C(1) / C(6227020800.0)))))));
    }
    return dm::sin(x) / x;
  }
};

// The unary special functions share one functor switching on the function
// (uniform per launch): 8 kernels for all of them. Float-only functions
// dispatch float and double only, reusing those instantiations.
enum class Special : int {
  digamma,
  polygamma,
  i0,
  special_i1,
  special_i0e,
  special_i1e,
  special_entr,  // every floating dtype
  special_modified_bessel_i0,
  special_modified_bessel_i1,
  special_erfcx,
  special_ndtri,
  special_log_ndtr,
  special_spherical_bessel_j0,  // float and double
};

template <typename C>
struct SpecialUnaryOp {
  Special op;
  int n;  // polygamma's order
  C factorial;  // n!
  __device__ C operator()(C x) const {
    switch (op) {
      case Special::digamma: return digamma_value(x);
      case Special::polygamma: return PolygammaOp<C>{n, factorial}(x);
      case Special::i0:
      case Special::special_modified_bessel_i0: return dm::cyl_bessel_i0(x);
      case Special::special_i1:
      case Special::special_modified_bessel_i1: return dm::cyl_bessel_i1(x);
      case Special::special_i0e: return ScaledBesselOp<C>{0}(x);
      case Special::special_i1e: return ScaledBesselOp<C>{1}(x);
      case Special::special_entr: return EntrOp<C>{}(x);
      case Special::special_erfcx: return dm::erfcx(x);
      case Special::special_ndtri: return dm::normcdfinv(x);
      case Special::special_log_ndtr: return LogNdtrOp<C>{}(x);
      case Special::special_spherical_bessel_j0: return SphericalBesselJ0Op<C>{}(x);
    }
    return x;
  }
};

template <unsigned Set>
void run_special(const TensorIterator& it, const char* name, Special op, int64_t n = 0) {
  double factorial = 1;
  for (int64_t k = 2; k <= n; ++k) factorial *= static_cast<double>(k);
  dispatch_dtype<Set>(it.common_dtype(), name, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = opmath_t<S>;
    gpu_kernel<S, S>(it, SpecialUnaryOp<C>{op, static_cast<int>(n), static_cast<C>(factorial)});
  });
}

#define EMBER_SPECIAL_KERNEL(op, set, error_name)                                                    \
  void op##_cuda_kernel(const TensorIterator& it) { run_special<set>(it, error_name, Special::op); } \
  EMBER_REGISTER_CUDA_POINTWISE(op, &op##_cuda_kernel)
EMBER_SPECIAL_KERNEL(digamma, kAllFloating, "digamma_cuda");
EMBER_SPECIAL_KERNEL(i0, kAllFloating, "i0_cuda");
EMBER_SPECIAL_KERNEL(special_i1, kAllFloating, "i1_cuda");
EMBER_SPECIAL_KERNEL(special_i0e, kAllFloating, "i0e_cuda");
EMBER_SPECIAL_KERNEL(special_i1e, kAllFloating, "i1e_cuda");
EMBER_SPECIAL_KERNEL(special_entr, kAllFloating, "entr_cuda");
EMBER_SPECIAL_KERNEL(special_modified_bessel_i0, kFloating, "modified_bessel_i0_cuda");
EMBER_SPECIAL_KERNEL(special_modified_bessel_i1, kFloating, "modified_bessel_i1_cuda");
EMBER_SPECIAL_KERNEL(special_erfcx, kFloating, "erfcx_cuda");
EMBER_SPECIAL_KERNEL(special_ndtri, kFloating, "ndtri_cuda");
EMBER_SPECIAL_KERNEL(special_log_ndtr, kFloating, "log_ndtr_cuda");
EMBER_SPECIAL_KERNEL(special_spherical_bessel_j0, kFloating, "spherical_bessel_j0_cuda");
#undef EMBER_SPECIAL_KERNEL

void polygamma_cuda_kernel(const TensorIterator& it, int64_t n) {
  run_special<kAllFloating>(it, "polygamma_cuda", Special::polygamma, n);
}
EMBER_REGISTER_CUDA_POINTWISE(polygamma, &polygamma_cuda_kernel);

void special_zeta_cuda_kernel(const TensorIterator& it) { binary_same<ZetaOp, kFloating>(it, "zeta_cuda"); }
EMBER_REGISTER_CUDA_POINTWISE(special_zeta, &special_zeta_cuda_kernel);

void igamma_cuda_kernel(const TensorIterator& it) { binary_same<IgammaOp, kAllFloating>(it, "igamma_cuda", false); }
void igammac_cuda_kernel(const TensorIterator& it) { binary_same<IgammaOp, kAllFloating>(it, "igammac_cuda", true); }
EMBER_REGISTER_CUDA_POINTWISE(igamma, &igamma_cuda_kernel);
EMBER_REGISTER_CUDA_POINTWISE(igammac, &igammac_cuda_kernel);

// ---- orthogonal polynomials: (x, n), the degree n truncated to an integer.
__device__ __forceinline__ int64_t polynomial_degree(double n) {
  if (!(n > -9.2e18 && n < 9.2e18)) return INT64_MIN;
  return static_cast<int64_t>(n);
}

// kind: 0 T, 1 U, 2 V, 3 W.
template <typename C>
__device__ C chebyshev_value(C x, int64_t n, int kind) {
  if (n < 0) return C(0);
  if (dm::fabs(x) == C(1)) {
    switch (kind) {
      case 0: return (x > C(0) || n % 2 == 0) ? C(1) : C(-1);
      case 1: return (x > C(0) || n % 2 == 0) ? C(n + 1) : -C(n + 1);
      case 2:
        if (x > C(0)) return C(1);
        return n % 2 == 0 ? C(n + n + 1) : -C(n + n + 1);
      default:
        if (x > C(0)) return C(n + n + 1);
        return n % 2 == 0 ? C(1) : C(-1);
    }
  }
  if (n > (kind == 0 ? 6 : 8) && dm::fabs(x) < C(1)) {
    const C theta = dm::acos(x);
    switch (kind) {
      case 0: return dm::cos(C(n) * theta);
      case 1:
        if (dm::sin(theta) != C(0)) return dm::sin(C(n + 1) * theta) / dm::sin(theta);
        return C(n + 1) * dm::cos(C(n + 1) * theta) / x;
      case 2:
        if (dm::sin(theta / C(2)) != C(1)) return dm::cos(C(n + 0.5) * theta) / dm::cos(theta / C(2));
        return n % 2 == 0 ? C(n + n + 1) : -C(n + n + 1);
      default:
        if (dm::cos(theta / C(2)) != C(1)) return dm::sin(C(n + 0.5) * theta) / dm::sin(theta / C(2));
        if (x > C(0)) return C(n + n + 1);
        return n % 2 == 0 ? C(1) : C(-1);
    }
  }
  const C first = kind == 0 ? x : (kind == 1 ? x + x : (kind == 2 ? x + x - C(1) : x + x + C(1)));
  if (n == 0) return C(1);
  if (n == 1) return first;
  C p = 1, q = first, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return r;
}

template <typename C>
__device__ C shifted_chebyshev_value(C x, int64_t n, int kind) {
  if (n < 0) return C(0);
  const C y = x + x - C(1);
  if (x == C(1)) return kind == 0 || kind == 2 ? C(1) : (kind == 1 ? C(n + 1) : C(n + n + 1));
  if (x == C(0)) {
    const C at_minus_one = kind == 0 || kind == 3 ? C(1) : (kind == 1 ? C(n + 1) : C(n + n + 1));
    return n % 2 == 0 ? at_minus_one : -at_minus_one;
  }
  const int64_t trig_from = kind == 3 ? 4 : 6;
  if (n > trig_from && dm::fabs(y) < C(1)) {
    const C theta = dm::acos(y);
    switch (kind) {
      case 0: return dm::cos(C(n) * theta);
      case 1:
        if (dm::sin(theta) != C(0)) return dm::sin(C(n + 1) * theta) / dm::sin(theta);
        return C(n + 1) * dm::cos(C(n + 1) * theta) / y;
      case 2:
        if (dm::sin(theta / C(2)) != C(1)) return dm::cos(C(n + 0.5) * theta) / dm::cos(theta / C(2));
        return n % 2 == 0 ? C(n + n + 1) : -C(n + n + 1);
      default:
        if (dm::cos(theta / C(2)) != C(1)) return dm::sin(C(n + 0.5) * theta) / dm::sin(theta / C(2));
        return n % 2 == 0 ? C(1) : C(-1);
    }
  }
  const C first = kind == 0 ? y : (kind == 1 ? y + y : (kind == 2 ? y + y - C(1) : y + y + C(1)));
  if (n == 0) return C(1);
  if (n == 1) return first;
  C p = 1, q = first, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    r = (y + y) * q - p;
    p = q;
    q = r;
  }
  return r;
}

// kind: 0 hermite H, 1 hermite He, 2 laguerre L, 3 legendre P.
template <typename C>
__device__ C classical_value(C x, int64_t n, int kind) {
  if (n < 0) return C(0);
  if (kind == 2 && dm::fabs(x) == C(0)) return C(1);
  if (kind == 3 && dm::fabs(x) == C(1)) return (x > C(0) || n % 2 == 0) ? C(1) : C(-1);
  const C first = kind == 0 ? x + x : (kind == 2 ? C(1) - x : x);
  if (n == 0) return C(1);
  if (n == 1) return first;
  C p = 1, q = first, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    switch (kind) {
      case 0: r = (x + x) * q - C(k + k) * p; break;
      case 1: r = x * q - C(k) * p; break;
      case 2: r = ((C(k + k) + (C(1) - x)) * q - C(k) * p) / C(k + 1); break;
      default: r = (C(k + k + 1) * x * q - C(k) * p) / C(k + 1); break;
    }
    p = q;
    q = r;
  }
  return r;
}

// family: 0 chebyshev, 1 shifted chebyshev, 2 classical.
template <typename C>
struct PolynomialOp {
  int family, kind;
  __device__ C operator()(C x, C n_value) const {
    const int64_t n = polynomial_degree(static_cast<double>(n_value));
    if (family == 0) return chebyshev_value(x, n, kind);
    if (family == 1) return shifted_chebyshev_value(x, n, kind);
    return classical_value(x, n, kind);
  }
};

#define EMBER_POLYNOMIAL_KERNEL(op, family, kind)                        \
  void special_##op##_cuda_kernel(const TensorIterator& it) {            \
    binary_same<PolynomialOp, kFloating>(it, #op "_cuda", family, kind); \
  }                                                                      \
  EMBER_REGISTER_CUDA_POINTWISE(special_##op, &special_##op##_cuda_kernel)
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_t, 0, 0);
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_u, 0, 1);
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_v, 0, 2);
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_w, 0, 3);
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_t, 1, 0);
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_u, 1, 1);
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_v, 1, 2);
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_w, 1, 3);
EMBER_POLYNOMIAL_KERNEL(hermite_polynomial_h, 2, 0);
EMBER_POLYNOMIAL_KERNEL(hermite_polynomial_he, 2, 1);
EMBER_POLYNOMIAL_KERNEL(laguerre_polynomial_l, 2, 2);
EMBER_POLYNOMIAL_KERNEL(legendre_polynomial_p, 2, 3);
#undef EMBER_POLYNOMIAL_KERNEL

}  // namespace
}  // namespace ember::cuda
