// CUDA kernels of special functions: digamma, polygamma, Hurwitz zeta, the
// Bessel functions, Airy's Ai, entr, erfcx, log_ndtr, ndtri (CUDA's
// normcdfinv), spherical_bessel_j0, the incomplete gamma functions and the
// orthogonal polynomials. The formulas are the CPU kernels' (one header,
// ops/SpecialMath.h), evaluated in the compute type.
#include "ember/cuda/kernels/DeviceMath.cuh"
#include "ember/ops/SpecialMath.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cuda {
namespace {

namespace sm = special_math;

EMBER_CUDA_BINARY_OP(ZetaOp, (sm::hurwitz_zeta<C, C>(a, b)));

template <typename C>
struct IgammaOp {
  bool upper;
  __device__ C operator()(C a, C x) const {
    return static_cast<C>(sm::igamma(static_cast<double>(a), static_cast<double>(x), upper));
  }
};

template <typename C>
struct PolygammaOp {
  int n;
  C factorial;  // n!
  __device__ C operator()(C x) const {
    if (n == 0) return sm::digamma(x);
    if (n == 1) return sm::trigamma(x);
    return ((n % 2) ? C(1) : C(-1)) * factorial * sm::hurwitz_zeta<C, C>(C(n + 1), x);
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
  special_spherical_bessel_j0,
  special_airy_ai,
  special_bessel_j0,
  special_bessel_j1,
  special_bessel_y0,
  special_bessel_y1,
  special_modified_bessel_k0,
  special_modified_bessel_k1,
  special_scaled_modified_bessel_k0,
  special_scaled_modified_bessel_k1,  // float and double
};

template <typename C>
struct SpecialUnaryOp {
  Special op;
  int n;  // polygamma's order
  C factorial;  // n!
  __device__ C operator()(C x) const {
    switch (op) {
      case Special::digamma: return sm::digamma(x);
      case Special::polygamma: return PolygammaOp<C>{n, factorial}(x);
      case Special::i0:
      case Special::special_modified_bessel_i0: return sm::i0(x);
      case Special::special_i1: return sm::i1(x);
      case Special::special_modified_bessel_i1: return sm::modified_bessel_i1(x);
      case Special::special_i0e: return sm::i0e(x);
      case Special::special_i1e: return sm::i1e(x);
      case Special::special_entr: return sm::entr(x);
      case Special::special_erfcx: return dm::erfcx(x);
      case Special::special_ndtri: return dm::normcdfinv(x);
      case Special::special_log_ndtr: return LogNdtrOp<C>{}(x);
      case Special::special_spherical_bessel_j0: return sm::spherical_bessel_j0(x);
      case Special::special_airy_ai: return sm::airy_ai(x);
      case Special::special_bessel_j0: return sm::bessel_j0(x);
      case Special::special_bessel_j1: return sm::bessel_j1(x);
      case Special::special_bessel_y0: return sm::bessel_y0(x);
      case Special::special_bessel_y1: return sm::bessel_y1(x);
      case Special::special_modified_bessel_k0: return sm::bessel_k0<C, false>(x);
      case Special::special_modified_bessel_k1: return sm::bessel_k1<C, false>(x);
      case Special::special_scaled_modified_bessel_k0: return sm::bessel_k0<C, true>(x);
      case Special::special_scaled_modified_bessel_k1: return sm::bessel_k1<C, true>(x);
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
EMBER_SPECIAL_KERNEL(special_airy_ai, kFloating, "airy_ai_cuda");
EMBER_SPECIAL_KERNEL(special_bessel_j0, kFloating, "bessel_j0_cuda");
EMBER_SPECIAL_KERNEL(special_bessel_j1, kFloating, "bessel_j1_cuda");
EMBER_SPECIAL_KERNEL(special_bessel_y0, kFloating, "bessel_y0_cuda");
EMBER_SPECIAL_KERNEL(special_bessel_y1, kFloating, "bessel_y1_cuda");
EMBER_SPECIAL_KERNEL(special_modified_bessel_k0, kFloating, "modified_bessel_k0_cuda");
EMBER_SPECIAL_KERNEL(special_modified_bessel_k1, kFloating, "modified_bessel_k1_cuda");
EMBER_SPECIAL_KERNEL(special_scaled_modified_bessel_k0, kFloating, "scaled_modified_bessel_k0_cuda");
EMBER_SPECIAL_KERNEL(special_scaled_modified_bessel_k1, kFloating, "scaled_modified_bessel_k1_cuda");
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
// kind within a family: chebyshev 0 T, 1 U, 2 V, 3 W; classical 0 hermite
// H, 1 hermite He, 2 laguerre L, 3 legendre P.
template <typename C>
__device__ C chebyshev_value(C x, int64_t n, int kind) {
  switch (kind) {
    case 0: return sm::chebyshev_t(x, n);
    case 1: return sm::chebyshev_u(x, n);
    case 2: return sm::chebyshev_v(x, n);
    default: return sm::chebyshev_w(x, n);
  }
}

template <typename C>
__device__ C classical_value(C x, int64_t n, int kind) {
  switch (kind) {
    case 0: return sm::hermite_h(x, n);
    case 1: return sm::hermite_he(x, n);
    case 2: return sm::laguerre_l(x, n);
    default: return sm::legendre_p(x, n);
  }
}

// family: 0 chebyshev, 1 shifted chebyshev, 2 classical.
template <typename C>
struct PolynomialOp {
  int family, kind;
  __device__ C operator()(C x, C n_value) const {
    const int64_t n = sm::polynomial_degree(static_cast<double>(n_value));
    if (family == 0) return chebyshev_value(x, n, kind);
    if (family == 1) return sm::shifted_chebyshev(x, n, kind);
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
