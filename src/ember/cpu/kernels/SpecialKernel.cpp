// Special-function loops (pointwise kernels of ops.yaml), compiled once per CPU
// capability. float16 and bfloat16 compute in float, as PyTorch.
//
// Note [Special functions follow PyTorch's CPU formulas]
// lgamma is libm's; digamma, trigamma, the Hurwitz zeta behind polygamma and
// the modified Bessel functions i0/i1 are the Cephes algorithms that
// PyTorch's CPU kernels evaluate (recurrence up to 10 plus an asymptotic
// series; Euler-Maclaurin summation; Chebyshev series on [0, 8] and on
// 8/x), evaluated in the same precision with the same constants, so the
// results agree to the last bit or within an ulp where the compiler fuses a
// multiply-add differently.
//
// Note [lgamma precision]
// PyTorch's lgamma is SLEEF's (within 1 ulp, nearly always correctly
// rounded). libm's lgammaf is off by up to a few ulps, so float inputs take
// vecmath::lgamma, computed in double and rounded once (correctly rounded
// for all but 2 floats; Note [Vector lgamma]); double inputs use libm's
// lgamma (within a few ulps of SLEEF's). SLEEF's float lgamma overflows from
// 4.0371103e36 on, a little before the true result passes FLT_MAX: float
// results follow it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/cpu/kernels/MathLoops.h"
#include "ember/cpu/kernels/VecMathBinary.h"
#include "ember/cpu/kernels/VecMathGamma.h"
#include "ember/ops/generated/PointwiseStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

// Vector math that only this file's kernels use (shared functions are in
// VecMath*.h).
namespace vecmath {
namespace {

// hypot of floats in double: the squares are exact there and cannot
// overflow or underflow, so the result is rounded by their sum, the square
// root and the conversion to float, as libm's hypotf; inf wins over NaN.
EMBER_VEC_INLINE Vf hypot(Vf a, Vf b) {
  Vd alo, ahi, blo, bhi;
  detail::widen(a, alo, ahi);
  detail::widen(b, blo, bhi);
  const Vf r = detail::narrow(detail::sqrt_d(alo * alo + blo * blo), detail::sqrt_d(ahi * ahi + bhi * bhi));
  return select((abs(a) == INFINITY) | (abs(b) == INFINITY), splat(INFINITY), r);
}

}  // namespace
}  // namespace vecmath

namespace {

constexpr double kPi = 3.14159265358979323846;

// ---- gamma family --------------------------------------------------------------------------

// Horner's rule over coefficients given from the highest power down.
template <typename T, size_t N>
inline T horner(T x, const T (&c)[N]) {
  T r = 0;
  for (size_t i = 0; i < N; ++i) r = r * x + c[i];
  return r;
}

// Asymptotic-series coefficients of digamma (Cephes psi), highest power first.
template <typename T>
struct PsiCoeffs {
  static constexpr T c[7] = {T(8.33333333333333333333E-2), T(-2.10927960927960927961E-2),
                             T(7.57575757575757575758E-3), T(-4.16666666666666666667E-3),
                             T(3.96825396825396825397E-3), T(-8.33333333333333333333E-3),
                             T(8.33333333333333333333E-2)};
};

template <typename T>
T digamma_value(T x) {
  if (x == T(0)) return std::copysign(std::numeric_limits<T>::infinity(), -x);
  if (x < T(0)) {
    if (x == std::trunc(x)) return std::numeric_limits<T>::quiet_NaN();
    // Reflection; tan of pi times the fractional part keeps the argument small.
    double whole;
    const double frac = std::modf(static_cast<double>(x), &whole);
    const T reflect = static_cast<T>(kPi / std::tan(kPi * frac));
    return digamma_value<T>(T(1) - x) - reflect;
  }
  T acc = 0;
  while (x < T(10)) {
    acc -= T(1) / x;
    x += T(1);
  }
  if (x == T(10)) return acc + T(2.25175258906672110764);  // psi(10)
  T tail = 0;
  if (x < T(1.0e17)) {
    const T z = T(1) / (x * x);
    tail = z * horner(z, PsiCoeffs<T>::c);
  }
  return acc + std::log(x) - (T(0.5) / x) - tail;
}

template <typename T>
T trigamma_value(T x) {
  T sign = 1, acc = 0;
  if (x < T(0.5)) {
    sign = -1;
    const T s = std::sin(static_cast<T>(kPi) * x);
    acc -= (static_cast<T>(kPi) * static_cast<T>(kPi)) / (s * s);
    x = T(1) - x;
  }
  for (int i = 0; i < 6; ++i) {
    acc += T(1) / (x * x);
    x += T(1);
  }
  const T ixx = T(1) / (x * x);
  acc += (T(1) + T(1) / (T(2) * x) + ixx * (T(1) / T(6) - ixx * (T(1) / T(30) - ixx * (T(1) / T(42))))) / x;
  return sign * acc;
}

// Hurwitz zeta(s, q) by Euler-Maclaurin summation (Cephes zeta), summed in
// Acc; the first term q^-s is taken in the arguments' type S, as PyTorch does.
template <typename Acc, typename S>
Acc hurwitz_zeta(S s_arg, S q_arg) {
  const Acc s = s_arg, q = q_arg;
  // (2k)! / B_2k for k = 1..12
  static constexpr Acc kB[12] = {12.0,
                                 -720.0,
                                 30240.0,
                                 -1209600.0,
                                 47900160.0,
                                 -1.8924375803183791606e9,
                                 7.47242496e10,
                                 -2.950130727918164224e12,
                                 1.1646782814350067249e14,
                                 -4.5979787224074726105e15,
                                 1.8152105401943546773e17,
                                 -7.1661652561756670113e18};
  const Acc eps = Acc(1.11022302462515654042E-16);
  if (s == Acc(1)) return std::numeric_limits<Acc>::infinity();
  if (s < Acc(1)) return std::numeric_limits<Acc>::quiet_NaN();
  if (q <= Acc(0)) {
    if (q == std::floor(q)) return std::numeric_limits<Acc>::infinity();
    if (s != std::floor(s)) return std::numeric_limits<Acc>::quiet_NaN();
  }
  Acc sum = static_cast<Acc>(std::pow(q_arg, -s_arg)), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= Acc(9)) {
    ++i;
    a += Acc(1);
    b = std::pow(a, -s);
    sum += b;
    if (-eps * sum < b && b < eps * sum) return sum;
  }
  const Acc w = a;
  sum += b * w / (s - Acc(1));
  sum -= Acc(0.5) * b;
  Acc fac = 1, k = 0;
  for (i = 0; i < 12; ++i) {
    fac *= s + k;
    b /= w;
    Acc t = fac * b / kB[i];
    sum = sum + t;
    t = std::fabs(t / sum);
    if (t < eps) return sum;
    k += Acc(1);
    fac *= s + k;
    b /= w;
    k += Acc(1);
  }
  return sum;
}

// polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x) for n >= 2. The zeta sum runs
// in double for float and double, in float (rounded to T) for 16-bit T.
// fact is n! in Acc (computed once per call).
template <typename T, typename Acc>
Acc polygamma_value(Acc x, int64_t n, Acc fact) {
  Acc z;
  if constexpr (is_16bit_float_v<T>) {
    z = static_cast<Acc>(T(hurwitz_zeta<float>(static_cast<float>(n + 1), static_cast<float>(x))));
  } else {
    z = static_cast<Acc>(hurwitz_zeta<double>(static_cast<Acc>(n + 1), x));
  }
  return ((n % 2) ? Acc(1) : Acc(-1)) * fact * z;
}

// ---- modified Bessel functions ---------------------------------------------------------------

// Chebyshev series sum_i c[i] T_i(x/2), coefficients from the highest order.
template <typename T>
inline T chebyshev(T x, const T* c, int len) {
  T b0 = c[0], b1 = 0, b2 = 0;
  for (int i = 1; i < len; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + c[i];
  }
  return T(0.5) * (b0 - b2);
}

// exp(-x) I0(x) on [0, 8] and exp(-x) sqrt(x) I0(x) on 8/x (Cephes i0).
template <typename T>
struct I0Coeffs {
  static constexpr T a[30] = {
      T(-4.41534164647933937950E-18), T(3.33079451882223809783E-17),  T(-2.43127984654795469359E-16),
      T(1.71539128555513303061E-15),  T(-1.16853328779934516808E-14), T(7.67618549860493561688E-14),
      T(-4.85644678311192946090E-13), T(2.95505266312963983461E-12),  T(-1.72682629144155570723E-11),
      T(9.67580903537323691224E-11),  T(-5.18979560163526290666E-10), T(2.65982372468238665035E-9),
      T(-1.30002500998624804212E-8),  T(6.04699502254191894932E-8),   T(-2.67079385394061173391E-7),
      T(1.11738753912010371815E-6),   T(-4.41673835845875056359E-6),  T(1.64484480707288970893E-5),
      T(-5.75419501008210370398E-5),  T(1.88502885095841655729E-4),   T(-5.76375574538582365885E-4),
      T(1.63947561694133579842E-3),   T(-4.32430999505057594430E-3),  T(1.05464603945949983183E-2),
      T(-2.37374148058994688156E-2),  T(4.93052842396707084878E-2),   T(-9.49010970480476444210E-2),
      T(1.71620901522208775349E-1),   T(-3.04682672343198398683E-1),  T(6.76795274409476084995E-1)};
  static constexpr T b[25] = {
      T(-7.23318048787475395456E-18), T(-4.83050448594418207126E-18), T(4.46562142029675999901E-17),
      T(3.46122286769746109310E-17),  T(-2.82762398051658348494E-16), T(-3.42548561967721913462E-16),
      T(1.77256013305652638360E-15),  T(3.81168066935262242075E-15),  T(-9.55484669882830764870E-15),
      T(-4.15056934728722208663E-14), T(1.54008621752140982691E-14),  T(3.85277838274214270114E-13),
      T(7.18012445138366623367E-13),  T(-1.79417853150680611778E-12), T(-1.32158118404477131188E-11),
      T(-3.14991652796324136454E-11), T(1.18891471078464383424E-11),  T(4.94060238822496958910E-10),
      T(3.39623202570838634515E-9),   T(2.26666899049817806459E-8),   T(2.04891858946906374183E-7),
      T(2.89137052083475648297E-6),   T(6.88975834691682398426E-5),   T(3.36911647825569408990E-3),
      T(8.04490411014108831608E-1)};
};

// exp(-x) I1(x) / x on [0, 8] and exp(-x) sqrt(x) I1(x) on 8/x (Cephes i1);
// float uses the shorter tails of the double series.
constexpr double kI1A[29] = {
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16, -1.10559694773538630805E-15,
    7.60068429473540693410E-15, -5.04218550472791168711E-14, 3.22379336594557470981E-13, -1.98397439776494371520E-12,
    1.17361862988909016308E-11, -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9,  -4.44505912879632808065E-8,  2.00329475355213526229E-7,  -8.56872026469545474066E-7,
    3.47025130813767847674E-6,  -1.32731636560394358279E-5,  4.78156510755005422638E-5,  -1.61760815825896745588E-4,
    5.12285956168575772895E-4,  -1.51357245063125314899E-3,  4.15642294431288815669E-3,  -1.05640848946261981558E-2,
    2.47264490306265168283E-2,  -5.29459812080949914269E-2,  1.02643658689847095384E-1,  -1.76416518357834055153E-1,
    2.52587186443633654823E-1};
constexpr double kI1B[25] = {
    7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17, -3.20952592199342395980E-17,
    2.96262899764595013876E-16,  3.30820231092092828324E-16,  -1.88035477551078244854E-15, -3.81440307243700780478E-15,
    1.04202769841288027642E-14,  4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,  3.25260358301548823856E-11,
    -1.89749581235054123450E-11, -5.58974346219658380687E-10, -3.83538038596423702205E-9,  -2.63146884688951950684E-8,
    -2.51223623787020892529E-7,  -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
    7.78576235018280120474E-1};

template <typename T>
struct I1Coeffs;
template <>
struct I1Coeffs<double> {
  static const double* a() { return kI1A; }
  static const double* b() { return kI1B; }
  static constexpr int na = 29, nb = 25;
};
template <>
struct I1Coeffs<float> {
  static const float* a() {
    static const float c[17] = {float(kI1A[12]), float(kI1A[13]), float(kI1A[14]), float(kI1A[15]), float(kI1A[16]),
                                float(kI1A[17]), float(kI1A[18]), float(kI1A[19]), float(kI1A[20]), float(kI1A[21]),
                                float(kI1A[22]), float(kI1A[23]), float(kI1A[24]), float(kI1A[25]), float(kI1A[26]),
                                float(kI1A[27]), float(kI1A[28])};
    return c;
  }
  static const float* b() {
    static const float c[7] = {float(kI1B[18]), float(kI1B[19]), float(kI1B[20]), float(kI1B[21]),
                               float(kI1B[22]), float(kI1B[23]), float(kI1B[24])};
    return c;
  }
  static constexpr int na = 17, nb = 7;
};

template <typename T>
T i0_value(T v) {
  const T x = std::abs(v);
  if (x <= T(8)) return std::exp(x) * chebyshev(x / T(2) - T(2), I0Coeffs<T>::a, 30);
  return std::exp(x) * chebyshev(T(32) / x - T(2), I0Coeffs<T>::b, 25) / std::sqrt(x);
}

template <typename T>
T i1_value(T v) {
  const T x = std::abs(v);
  T r;
  if (x <= T(8)) {
    r = std::exp(x) * x * chebyshev(x / T(2) - T(2), I1Coeffs<T>::a(), I1Coeffs<T>::na);
  } else {
    r = (std::exp(x) * chebyshev(T(32) / x - T(2), I1Coeffs<T>::b(), I1Coeffs<T>::nb)) / std::sqrt(x);
  }
  return v < T(0) ? -r : r;
}

// ---- loops -----------------------------------------------------------------------------------

// out = f(x) over the floating dtypes; f takes the computation type (float
// for 16-bit storage) and gets the storage type as its first template tag.
template <typename F>
void float_scalar_unary(const TensorIterator& it, const F& f) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      run_acc<scalar_t, scalar_t, 1>(it, [&](auto x) { return f(TypeTag<scalar_t>{}, x); });
    } else {
      EMBER_INTERNAL_ASSERT(false, "special kernel on ", scalar_type_name(it.common_dtype()));
    }
  });
}

template <typename F>
void float_scalar_binary(const TensorIterator& it, const F& f) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      run_acc<scalar_t, scalar_t, 2>(it, f);
    } else {
      EMBER_INTERNAL_ASSERT(false, "special kernel on ", scalar_type_name(it.common_dtype()));
    }
  });
}

template <typename T>
inline T logit_value(T x, T lo, T hi, bool clamp) {
  if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
  return x == T(1) ? std::numeric_limits<T>::infinity() : std::log(x / (T(1) - x));
}

void lgamma_kernel(const TensorIterator& it) {
  // See Note [lgamma precision] and Note [Vector lgamma].
  float_unary(
      it,
      [](vecmath::Vf x) { return vecmath::select(x >= 4.0371103e36f, vecmath::splat(INFINITY), vecmath::lgamma(x)); },
      [](double x) {
        int sign;  // lgamma_r: std::lgamma writes the global signgam, racing across threads
        return lgamma_r(x, &sign);
      });
}
EMBER_REGISTER_POINTWISE(lgamma, &lgamma_kernel);

void digamma_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return digamma_value(x); });
}
EMBER_REGISTER_POINTWISE(digamma, &digamma_kernel);

void polygamma_kernel(const TensorIterator& it, int64_t n) {
  if (n == 0) return digamma_kernel(it);
  if (n == 1) return float_scalar_unary(it, [](auto, auto x) { return trigamma_value(x); });
  // n! once, in each computation type (before the threads start).
  const float fact_f = std::exp(std::lgamma(static_cast<float>(n) + 1.0f));
  const double fact_d = std::exp(std::lgamma(static_cast<double>(n) + 1.0));
  float_scalar_unary(it, [n, fact_f, fact_d](auto tag, auto x) {
    using scalar_t = typename decltype(tag)::type;
    using acc_t = decltype(x);
    return polygamma_value<scalar_t>(x, n, static_cast<acc_t>(std::is_same_v<acc_t, float> ? fact_f : fact_d));
  });
}
EMBER_REGISTER_POINTWISE(polygamma, &polygamma_kernel);

void i0_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return i0_value(x); });
}
EMBER_REGISTER_POINTWISE(i0, &i0_kernel);

void special_i1_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return i1_value(x); });
}
EMBER_REGISTER_POINTWISE(special_i1, &special_i1_kernel);

void sinc_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) {
    using acc_t = decltype(x);
    if (x == acc_t(0)) return acc_t(1);
    const acc_t p = static_cast<acc_t>(kPi) * x;
    return std::sin(p) / p;
  });
}
EMBER_REGISTER_POINTWISE(sinc, &sinc_kernel);

// deg2rad / rad2deg: a multiply by pi/180 (180/pi) in the computation type
// (float for float16/bfloat16), as PyTorch's multiply by a Python number.
void scale_kernel(const TensorIterator& it, double factor) {
  float_scalar_unary(it, [factor](auto, auto x) { return x * static_cast<decltype(x)>(factor); });
}
void deg2rad_kernel(const TensorIterator& it) { scale_kernel(it, 0.017453292519943295769236907684886); }
void rad2deg_kernel(const TensorIterator& it) { scale_kernel(it, 57.295779513082320876798154814105); }
EMBER_REGISTER_POINTWISE(deg2rad, &deg2rad_kernel);
EMBER_REGISTER_POINTWISE(rad2deg, &rad2deg_kernel);

void frac_kernel(const TensorIterator& it) {
#if defined(__AVX2__)
  float_unary(
      it, [](vecmath::Vf x) { return x - vecmath::round_dir<2>(x); },
      [](vecmath::Vd x) { return x - vecmath::round_dir<2>(x); });
#else
  float_unary(
      it, [](vecmath::Vf x) { return x - vecmath::round_dir<2>(x); }, [](double x) { return x - std::trunc(x); });
#endif
}
EMBER_REGISTER_POINTWISE(frac, &frac_kernel);

void logit_kernel(const TensorIterator& it, std::optional<double> eps) {
  // Without eps: no clamping; inputs are divided then logged as PyTorch's loop.
  const bool clamp = eps.has_value();
  const double param = eps.value_or(0.0);
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      using acc_t = opmath_t<scalar_t>;
      if constexpr (is_16bit_float_v<scalar_t>) {
        // float16/bfloat16 round every step to their own type, as PyTorch's
        // arithmetic on them does (bfloat16 0.999 is 1: logit is inf).
        const float lo = static_cast<float>(static_cast<scalar_t>(param));
        const float hi = static_cast<float>(static_cast<scalar_t>(1.0f - lo));
        run_acc<scalar_t, scalar_t, 1>(it, [=](float x) {
          if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
          const float d = static_cast<float>(static_cast<scalar_t>(1.0f - x));
          return std::log(static_cast<float>(static_cast<scalar_t>(x / d)));
        });
      } else if constexpr (std::is_same_v<scalar_t, float>) {
        const acc_t lo = static_cast<acc_t>(param);
        const acc_t hi = acc_t(1) - lo;
        using vecmath::Vf;
        const Vf vlo = vecmath::splat(lo), vhi = vecmath::splat(hi), one = vecmath::splat(1.0f);
        it.for_each([&](char** d, const int64_t* s, int64_t n) {
          vec_loop<scalar_t, 1>(d, s, n, [=](Vf x) {
            if (clamp) x = vecmath::select(x < vlo, vlo, vecmath::select(x > vhi, vhi, x));
            return vecmath::log(x / (one - x));
          });
        });
      } else {
        const acc_t lo = static_cast<acc_t>(param);
        const acc_t hi = acc_t(1) - lo;
        run_acc<scalar_t, scalar_t, 1>(it, [=](acc_t x) { return logit_value(x, lo, hi, clamp); });
      }
    }
  });
}
EMBER_REGISTER_POINTWISE(logit, &logit_kernel);

void signbit_kernel(const TensorIterator& it) {
  const ScalarType in_t = it.operand(1).dtype();
  EMBER_USE_BASELINE_KERNEL_FOR(in_t, native::signbit_stub, it);
  // A float's sign bit is the sign of its bits read as a signed integer
  // of the same width (this also keeps GCC 12 from an internal error on
  // vectorised std::signbit).
  dispatch_types(in_t, [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    using bits_t = std::conditional_t<
        sizeof(scalar_t) == 2, int16_t,
        std::conditional_t<sizeof(scalar_t) == 4, int32_t, std::conditional_t<sizeof(scalar_t) == 8, int64_t, int8_t>>>;
    using read_t = std::conditional_t<is_float_like_v<scalar_t>, bits_t, scalar_t>;
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      loop1<bool, read_t>(d, s, n, [](read_t x) {
        if constexpr (std::is_signed_v<read_t>) {
          return x < 0;
        } else {
          return false;
        }
      });
    });
  });
}
EMBER_REGISTER_POINTWISE(signbit, &signbit_kernel);

// ---- binary (floating common dtype) ------------------------------------------------

void hypot_kernel(const TensorIterator& it) {
  float_map<2>(
      it, [](vecmath::Vf a, vecmath::Vf b) { return vecmath::hypot(a, b); },
      [](double a, double b) { return std::hypot(a, b); });
}
EMBER_REGISTER_POINTWISE(hypot, &hypot_kernel);

void copysign_kernel(const TensorIterator& it) {
  float_scalar_binary(it, [](auto a, auto b) { return std::copysign(a, b); });
}
EMBER_REGISTER_POINTWISE(copysign, &copysign_kernel);

// x * log(y) and x * log1p(y), 0 where x is 0 (unless y is NaN). float16 and
// bfloat16 round the logarithm to their type before the product, as
// PyTorch's math on them does.
template <bool kLog1p>
void xlogy_loop(const TensorIterator& it) {
  dispatch_types(it.common_dtype(), [&](auto tag_) {
    using scalar_t = typename decltype(tag_)::type;
    if constexpr (is_float_like_v<scalar_t>) {
      run_acc<scalar_t, scalar_t, 2>(it, [](auto x, auto y) {
        using acc_t = decltype(x);
        if (std::isnan(y)) return std::numeric_limits<acc_t>::quiet_NaN();
        if (x == acc_t(0)) return acc_t(0);
        const acc_t l = static_cast<acc_t>(static_cast<scalar_t>(kLog1p ? std::log1p(y) : std::log(y)));
        return x * l;
      });
    }
  });
}
EMBER_REGISTER_POINTWISE(xlogy, &xlogy_loop<false>);
EMBER_REGISTER_POINTWISE(special_xlog1py, &xlogy_loop<true>);

// ---- more of torch.special -------------------------------------------------------------------

// float and double only, as PyTorch's kernels for these functions; other
// floating dtypes raise its NotImplementedError.
template <int N, typename F>
void float_double_loop(const TensorIterator& it, const char* name, const F& f) {
  const ScalarType t = it.common_dtype();
  if (t == ScalarType::Float) return run_acc<float, float, N>(it, f);
  if (t == ScalarType::Double) return run_acc<double, double, N>(it, f);
  throw NotImplementedError(str_cat("\"", name, "\" not implemented for '", dtype_message_name(t), "'"));
}

// exp(-|x|) I0(x) and exp(-|x|) I1(x): the Chebyshev series of i0/i1 without
// the exponential (Cephes i0e, i1e).
template <typename T>
T i0e_value(T v) {
  const T x = std::abs(v);
  if (x <= T(8)) return chebyshev(x / T(2) - T(2), I0Coeffs<T>::a, 30);
  return chebyshev(T(32) / x - T(2), I0Coeffs<T>::b, 25) / std::sqrt(x);
}

template <typename T>
T i1e_value(T v) {
  const T x = std::abs(v);
  T r;
  if (x <= T(8)) {
    r = chebyshev(x / T(2) - T(2), I1Coeffs<T>::a(), I1Coeffs<T>::na) * x;
  } else {
    r = chebyshev(T(32) / x - T(2), I1Coeffs<T>::b(), I1Coeffs<T>::nb) / std::sqrt(x);
  }
  return v < T(0) ? -r : r;
}

// special.modified_bessel_i0/i1: the same series, with the full coefficient
// tables in float too.
template <typename T>
T full_chebyshev(T y, const double* c, int len) {
  T b0 = T(c[0]), b1 = 0, b2 = 0;
  for (int i = 1; i < len; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = y * b1 - b2 + T(c[i]);
  }
  return T(0.5) * (b0 - b2);
}

template <typename T>
T modified_bessel_i1_value(T v) {
  const T x = std::abs(v);
  T r;
  if (x <= T(8)) {
    r = full_chebyshev(x / T(2) - T(2), kI1A, 29) * x * std::exp(x);
  } else {
    r = std::exp(x) * full_chebyshev(T(32) / x - T(2), kI1B, 25) / std::sqrt(x);
  }
  return v < T(0) ? -r : r;
}

template <typename T>
T spherical_bessel_j0_value(T x) {
  if (std::isinf(x)) return T(0);
  if (std::abs(x) < T(0.5)) {
    const T x2 = x * x;
    return T(1) + x2 * (T(-1) / T(6) +
                        x2 * (T(1) / T(120) +
                              x2 * (T(-1) / T(5040) + x2 * (T(1) / T(362880) + x2 * (T(-1) / T(39916800) +
                                                                                     x2 * (T(1) / T(6227020800.0)))))));
  }
  return std::sin(x) / x;
}

template <typename T>
T entr_value(T x) {
  if (std::isnan(x)) return x;
  if (x > T(0)) return -x * std::log(x);
  if (x == T(0)) return T(0);
  return -std::numeric_limits<T>::infinity();
}

// exp(x^2) erfc(x) in double. x^2 is split into its rounded value and the
// rounding error so that exp(x^2) keeps full precision; from x = 5 on, the
// continued fraction erfc(x) exp(x^2) sqrt(pi) = 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))).
constexpr double kErfcxFractionFrom = 2.0;
constexpr int kErfcxFractionTerms = 160;
inline double erfcx_double(double x) {
  if (std::isnan(x)) return x;
  const auto exp_square = [](double v) {
    const double hi = v * v;
    const double lo = std::fma(v, v, -hi);
    return std::exp(hi) * (1.0 + lo);
  };
  if (x < 0) {
    if (x < -26.7) return std::numeric_limits<double>::infinity();
    return 2.0 * exp_square(x) - erfcx_double(-x);
  }
  if (x < kErfcxFractionFrom) return exp_square(x) * std::erfc(x);
  constexpr double kInvSqrtPi = 0.56418958354775628694807945156077259;
  if (x > 1e9) return kInvSqrtPi / x;
  double tail = x;
  for (int k = kErfcxFractionTerms; k >= 1; --k) tail = x + (0.5 * k) / tail;
  return kInvSqrtPi / tail;
}

// erfcx in T: for negative x PyTorch's 2 exp(x^2) - erfcx(-x) with x^2
// rounded to T, as its loop.
template <typename T>
T erfcx_value(T x) {
  if (x < T(0)) {
    if (x < T(-26.7)) return std::numeric_limits<T>::infinity();
    const T twice_exp = T(2) * std::exp(x * x);
    if (x < T(-6.1)) return twice_exp;
    return twice_exp - static_cast<T>(erfcx_double(-x));
  }
  return static_cast<T>(erfcx_double(x));
}

// log of the standard normal distribution function: through erfcx below -1
// (no underflow), log1p(-erfc(x / sqrt 2) / 2) above, as PyTorch.
template <typename T>
T log_ndtr_value(T x) {
  const T t = x * T(0.70710678118654752440);
  if (x < T(-1)) return std::log(erfcx_value(-t) / T(2)) - t * t;
  return std::log1p(-std::erfc(t) / T(2));
}

// ---- ndtri and the incomplete gamma functions ----------------------------------------------------
// Note [ndtri and igamma in double]
// PyTorch evaluates Cephes' rational fits (ndtri) and Cephes/SciPy's igam
// (series, continued fraction, Temme's expansion for large a). Ember solves
// ndtri by Newton's method on erf near the median and on log_ndtr in the
// tails, and evaluates P(a, x) and Q(a, x) by their power series and
// continued fraction, all in double; float results are rounded once.

// x with Phi(x) = p, Phi the standard normal distribution function.
inline double ndtri_double(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  if (p > 0.75) return -ndtri_double(1.0 - p);  // 1 - p is exact here
  constexpr double kSqrt2 = 1.41421356237309504880, kSqrtHalfPi = 1.25331413731550025121;
  if (p >= 0.25) {
    // erf(x / sqrt 2) = 2p - 1 (exact), from erf's slope at 0.
    const double q = 2.0 * p - 1.0;
    double x = q * kSqrtHalfPi;
    for (int i = 0; i < 40; ++i) {
      const double step = (std::erf(x / kSqrt2) - q) * kSqrtHalfPi * std::exp(0.5 * x * x);
      x -= step;
      if (std::abs(step) <= 1e-17 * std::abs(x)) break;
    }
    return x;
  }
  // log Phi(x) = log p from Abramowitz and Stegun 26.2.23 (error below 4.5e-4).
  const double t = std::sqrt(-2.0 * std::log(p));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  const double log_p = std::log(p);
  constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  for (int i = 0; i < 40; ++i) {
    const double log_phi = log_ndtr_value(x);
    const double slope = kInvSqrt2Pi * std::exp(-0.5 * x * x - log_phi);  // phi(x) / Phi(x)
    const double step = (log_phi - log_p) / slope;
    x -= step;
    if (std::abs(step) <= 1e-17 * std::abs(x)) break;
  }
  return x;
}

// log(1 + d) - d, without the cancellation for small d.
inline double log1p_minus(double d) {
  if (std::abs(d) > 0.5) return std::log1p(d) - d;
  double power = d, sum = 0;
  for (int k = 2; k < 200; ++k) {
    power *= -d;
    const double term = power / k;
    sum += term;
    if (std::abs(term) <= 1e-18 * std::abs(sum)) break;
  }
  return sum;
}

// log(x^a e^-x / Gamma(a)). For large a, Stirling's series for lgamma(a)
// lets a log(x / a) - (x - a) be formed as a log1p_minus((x - a) / a), which
// keeps the digits that a log x - x - lgamma(a) would cancel.
inline double igamma_log_factor(double a, double x) {
  if (a < 20.0) {
    int sign;
    return a * std::log(x) - x - lgamma_r(a, &sign);
  }
  constexpr double kLogTwoPi = 1.83787706640934548356;
  const double r = 1.0 / (a * a);
  const double stirling_correction =
      (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r * (1.0 / 1188 - r * (691.0 / 360360)))))) / a;
  return a * log1p_minus((x - a) / a) + 0.5 * (std::log(a) - kLogTwoPi) - stirling_correction;
}

// P(a, x) by its series, for x < a + 1.
inline double igamma_series(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int n = 1; n < 100000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::abs(term) < std::abs(sum) * 1e-17) break;
  }
  return sum * std::exp(igamma_log_factor(a, x));
}

// Q(a, x) by its continued fraction (modified Lentz), for x >= a + 1.
inline double igammac_fraction(double a, double x) {
  constexpr double kTiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / kTiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::abs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < 1e-17) break;
  }
  return std::exp(igamma_log_factor(a, x)) * h;
}

// The regularized incomplete gamma function: P(a, x) (upper = false) or Q(a, x).
inline double igamma_double(double a, double x, bool upper) {
  // PyTorch's order of the special cases (a NaN operand can give 0 or 1).
  if (a < 0.0 || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0.0) {
    if (x > 0.0) return upper ? 0.0 : 1.0;
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (x == 0.0) return upper ? 1.0 : 0.0;
  if (std::isinf(a)) {
    if (std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
    return upper ? 1.0 : 0.0;
  }
  if (std::isinf(x)) return upper ? 0.0 : 1.0;
  if (x < a + 1.0) {
    const double p = igamma_series(a, x);
    return upper ? 1.0 - p : p;
  }
  const double q = igammac_fraction(a, x);
  return upper ? q : 1.0 - q;
}

void special_ndtri_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "ndtri_cpu", [](auto p) { return static_cast<decltype(p)>(ndtri_double(p)); });
}
EMBER_REGISTER_POINTWISE(special_ndtri, &special_ndtri_kernel);

template <bool kUpper>
void igamma_loop(const TensorIterator& it) {
  float_scalar_binary(it, [](auto a, auto x) {
    return static_cast<decltype(a)>(igamma_double(static_cast<double>(a), static_cast<double>(x), kUpper));
  });
}
EMBER_REGISTER_POINTWISE(igamma, &igamma_loop<false>);
EMBER_REGISTER_POINTWISE(igammac, &igamma_loop<true>);

void special_i0e_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return i0e_value(x); });
}
EMBER_REGISTER_POINTWISE(special_i0e, &special_i0e_kernel);

void special_i1e_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return i1e_value(x); });
}
EMBER_REGISTER_POINTWISE(special_i1e, &special_i1e_kernel);

void special_entr_kernel(const TensorIterator& it) {
  float_scalar_unary(it, [](auto, auto x) { return entr_value(x); });
}
EMBER_REGISTER_POINTWISE(special_entr, &special_entr_kernel);

void special_erfcx_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "erfcx_cpu", [](auto x) { return erfcx_value(x); });
}
EMBER_REGISTER_POINTWISE(special_erfcx, &special_erfcx_kernel);

void special_log_ndtr_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "log_ndtr_cpu", [](auto x) { return log_ndtr_value(x); });
}
EMBER_REGISTER_POINTWISE(special_log_ndtr, &special_log_ndtr_kernel);

void special_modified_bessel_i0_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "modified_bessel_i0_cpu", [](auto x) { return i0_value(x); });
}
EMBER_REGISTER_POINTWISE(special_modified_bessel_i0, &special_modified_bessel_i0_kernel);

void special_modified_bessel_i1_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "modified_bessel_i1_cpu", [](auto x) { return modified_bessel_i1_value(x); });
}
EMBER_REGISTER_POINTWISE(special_modified_bessel_i1, &special_modified_bessel_i1_kernel);

void special_spherical_bessel_j0_kernel(const TensorIterator& it) {
  float_double_loop<1>(it, "spherical_bessel_j0_cpu", [](auto x) { return spherical_bessel_j0_value(x); });
}
EMBER_REGISTER_POINTWISE(special_spherical_bessel_j0, &special_spherical_bessel_j0_kernel);

// Hurwitz zeta summed in double, its first term in the input type (PyTorch's
// CPU accumulation type).
void special_zeta_kernel(const TensorIterator& it) {
  float_double_loop<2>(it, "zeta_cpu",
                       [](auto s, auto q) { return static_cast<decltype(s)>(hurwitz_zeta<double>(s, q)); });
}
EMBER_REGISTER_POINTWISE(special_zeta, &special_zeta_kernel);

// ---- orthogonal polynomials --------------------------------------------------------------------
// Note [Orthogonal polynomial degree]
// The degree n is a floating tensor truncated to an integer, as PyTorch's
// cast (NaN and out-of-range values become the most negative integer, so
// the result is 0). The values follow PyTorch's recurrences, with the closed
// trigonometric forms for high degrees inside (-1, 1).

inline int64_t polynomial_degree(double n) {
  if (!(n > -9.2e18 && n < 9.2e18)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(n);
}

// p_{k+1} = step(k, p_k, p_{k-1}) from p_0 = 1 and p_1 = first, up to p_n.
template <typename T, typename Step>
T three_term(int64_t n, T first, const Step& step) {
  if (n == 0) return T(1);
  if (n == 1) return first;
  T p = 1, q = first, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    r = step(k, q, p);
    p = q;
    q = r;
  }
  return r;
}

template <typename T>
T chebyshev_t_value(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) return (x > T(0) || n % 2 == 0) ? T(1) : T(-1);
  if (n > 6 && std::abs(x) < T(1)) return std::cos(T(n) * std::acos(x));
  return three_term<T>(n, x, [x](int64_t, T q, T p) { return (x + x) * q - p; });
}

template <typename T>
T chebyshev_u_value(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) return (x > T(0) || n % 2 == 0) ? T(n + 1) : -T(n + 1);
  if (n > 8 && std::abs(x) < T(1)) {
    const T theta = std::acos(x);
    if (std::sin(theta) != T(0)) return std::sin(T(n + 1) * theta) / std::sin(theta);
    return T(n + 1) * std::cos(T(n + 1) * theta) / x;
  }
  return three_term<T>(n, x + x, [x](int64_t, T q, T p) { return (x + x) * q - p; });
}

template <typename T>
T chebyshev_v_value(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) {
    if (x > T(0)) return T(1);
    return n % 2 == 0 ? T(n + n + 1) : -T(n + n + 1);
  }
  if (n > 8 && std::abs(x) < T(1)) {
    const T theta = std::acos(x);
    if (std::sin(theta / T(2)) != T(1)) return std::cos(T(n + 0.5) * theta) / std::cos(theta / T(2));
    return n % 2 == 0 ? T(n + n + 1) : -T(n + n + 1);
  }
  return three_term<T>(n, x + x - T(1), [x](int64_t, T q, T p) { return (x + x) * q - p; });
}

template <typename T>
T chebyshev_w_value(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) {
    if (x > T(0)) return T(n + n + 1);
    return n % 2 == 0 ? T(1) : T(-1);
  }
  if (n > 8 && std::abs(x) < T(1)) {
    const T theta = std::acos(x);
    if (std::cos(theta / T(2)) != T(1)) return std::sin(T(n + 0.5) * theta) / std::sin(theta / T(2));
    if (x > T(0)) return T(n + n + 1);
    return n % 2 == 0 ? T(1) : T(-1);
  }
  return three_term<T>(n, x + x + T(1), [x](int64_t, T q, T p) { return (x + x) * q - p; });
}

// The shifted polynomials are the ones above at 2x - 1 (kind: 0 t, 1 u, 2 v, 3 w).
template <typename T>
T shifted_chebyshev_value(T x, int64_t n, int kind) {
  if (n < 0) return T(0);
  const T y = x + x - T(1);
  if (x == T(1)) return kind == 0 || kind == 2 ? T(1) : (kind == 1 ? T(n + 1) : T(n + n + 1));
  if (x == T(0)) {
    const T at_minus_one = kind == 0 || kind == 3 ? T(1) : (kind == 1 ? T(n + 1) : T(n + n + 1));
    return n % 2 == 0 ? at_minus_one : -at_minus_one;
  }
  const int64_t trig_from = kind == 3 ? 4 : 6;
  if (n > trig_from && std::abs(y) < T(1)) {
    const T theta = std::acos(y);
    switch (kind) {
      case 0: return std::cos(T(n) * theta);
      case 1:
        if (std::sin(theta) != T(0)) return std::sin(T(n + 1) * theta) / std::sin(theta);
        return T(n + 1) * std::cos(T(n + 1) * theta) / y;
      case 2:
        if (std::sin(theta / T(2)) != T(1)) return std::cos(T(n + 0.5) * theta) / std::cos(theta / T(2));
        return n % 2 == 0 ? T(n + n + 1) : -T(n + n + 1);
      default:
        if (std::cos(theta / T(2)) != T(1)) return std::sin(T(n + 0.5) * theta) / std::sin(theta / T(2));
        return n % 2 == 0 ? T(1) : T(-1);
    }
  }
  const T first = kind == 0 ? y : (kind == 1 ? y + y : (kind == 2 ? y + y - T(1) : y + y + T(1)));
  return three_term<T>(n, first, [y](int64_t, T q, T p) { return (y + y) * q - p; });
}

template <typename T>
T hermite_h_value(T x, int64_t n) {
  if (n < 0) return T(0);
  return three_term<T>(n, x + x, [x](int64_t k, T q, T p) { return (x + x) * q - T(k + k) * p; });
}

template <typename T>
T hermite_he_value(T x, int64_t n) {
  if (n < 0) return T(0);
  return three_term<T>(n, x, [x](int64_t k, T q, T p) { return x * q - T(k) * p; });
}

template <typename T>
T laguerre_l_value(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(0)) return T(1);
  return three_term<T>(n, T(1) - x,
                       [x](int64_t k, T q, T p) { return ((T(k + k) + (T(1) - x)) * q - T(k) * p) / T(k + 1); });
}

template <typename T>
T legendre_p_value(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) return (x > T(0) || n % 2 == 0) ? T(1) : T(-1);
  return three_term<T>(n, x, [x](int64_t k, T q, T p) { return (T(k + k + 1) * x * q - T(k) * p) / T(k + 1); });
}

#define EMBER_POLYNOMIAL_KERNEL(NAME, EXPR)                              \
  void special_##NAME##_kernel(const TensorIterator& it) {               \
    float_double_loop<2>(it, #NAME "_cpu", [](auto x, auto n_value) {    \
      using T = decltype(x);                                             \
      const int64_t n = polynomial_degree(static_cast<double>(n_value)); \
      return static_cast<T>(EXPR);                                       \
    });                                                                  \
  }                                                                      \
  EMBER_REGISTER_POINTWISE(special_##NAME, &special_##NAME##_kernel);

EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_t, chebyshev_t_value<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_u, chebyshev_u_value<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_v, chebyshev_v_value<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(chebyshev_polynomial_w, chebyshev_w_value<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_t, shifted_chebyshev_value<T>(x, n, 0))
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_u, shifted_chebyshev_value<T>(x, n, 1))
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_v, shifted_chebyshev_value<T>(x, n, 2))
EMBER_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_w, shifted_chebyshev_value<T>(x, n, 3))
EMBER_POLYNOMIAL_KERNEL(hermite_polynomial_h, hermite_h_value<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(hermite_polynomial_he, hermite_he_value<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(laguerre_polynomial_l, laguerre_l_value<T>(x, n))
EMBER_POLYNOMIAL_KERNEL(legendre_polynomial_p, legendre_p_value<T>(x, n))
#undef EMBER_POLYNOMIAL_KERNEL

}  // namespace

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
