// Complex-number loops, compiled once per CPU capability: arithmetic, the
// elementwise functions PyTorch defines for complex inputs, comparisons and
// the complex-to-real maps (abs, angle). Products and quotients follow
// PyTorch's vector and scalar forms (Note [Complex products and quotients]);
// the functions are std::complex's.
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "ember/cpu/ComplexStubs.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/ops/generated/PointwiseStubs.h"

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

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

// Note [Complex products and quotients]
// PyTorch's complex loops take contiguous rows (and rows with one broadcast
// operand) two vectors at a time and leave the remainder, and every other
// row, to the scalar form; the AVX2 and AVX-512 vectors hold 32 and 64
// bytes. The vector product rounds every step, (ac - bd) + (ad + bc)i. The
// scalar form is c10::complex's, which GCC compiles with FMA in those builds:
// fma(a, c, -bd) + fma(a, d, bc)i, though not everywhere (Note [Complex
// product remainders]). Quotients are c10::complex's in both forms (numpy's
// algorithm: the smaller part of the divisor over the larger), fused the
// same way, except the last complex64 of an odd row, whose numerators are
// rounded before the sum. This file is compiled without contraction, so each
// form fuses exactly where written; the DEFAULT build fuses nothing.
#if defined(__FMA__)
constexpr bool kScalarFma = true;
#else
constexpr bool kScalarFma = false;
#endif

// a * b + c, fused where PyTorch's scalar complex arithmetic is.
template <typename R>
inline R scalar_fma(R a, R b, R c) {
  if constexpr (kScalarFma) {
    return std::fma(a, b, c);
  } else {
    return a * b + c;
  }
}

// The forms of the scalar product x * y that PyTorch's builds compute
// (Note [Complex products and quotients]): every step rounded, or one of two
// products of each part fused.
enum class Product { Rounded, Fused };

template <Product form, typename C>
inline C mul_form(C x, C y) {
  if constexpr (form == Product::Rounded) {
    return C(x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real());
  } else {
    return C(scalar_fma(x.real(), y.real(), -(x.imag() * y.imag())),
             scalar_fma(x.real(), y.imag(), x.imag() * y.real()));
  }
}

// c10::complex's quotient (numpy's algorithm: the smaller part of the
// divisor over the larger), fused as PyTorch's builds are; for complex64
// numbers: the numerators rounded before the sum (a lone last complex64
// of a row in PyTorch's FMA builds) or fused.
template <bool fused_numerators = true, typename C>
inline C div_form(C x, C y) {
  using R = typename C::value_type;
  const auto num = [](R p, R q, R r) { return fused_numerators ? scalar_fma(p, q, r) : p * q + r; };
  const R a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  const R abs_c = std::abs(c), abs_d = std::abs(d);
  if (abs_c >= abs_d) {
    if (abs_c == R(0) && abs_d == R(0)) return C(a / abs_c, b / abs_d);
    const R rat = d / c, scl = R(1) / scalar_fma(d, rat, c);
    return C(num(b, rat, a) * scl, num(-a, rat, b) * scl);
  }
  const R rat = c / d, scl = R(1) / scalar_fma(c, rat, d);
  return C(num(a, rat, b) * scl, num(b, rat, -a) * scl);
}

#if defined(__AVX512F__) || defined(__AVX2__)
#define EMBER_COMPLEX_LANES 1
// One PyTorch vector of complex numbers, parts interleaved. The product is
// written with intrinsics: GCC turns a scalar complex product it vectorises
// into fused multiply-adds (vfmaddsub) even without contraction.
template <typename R>
struct Lanes;

#if defined(__AVX512F__)
template <>
struct Lanes<float> {
  using V = __m512;
  static constexpr int64_t size = 8;
  static V load(const void* p) { return _mm512_loadu_ps(p); }
  static void store(void* p, V v) { _mm512_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V real_of_a_imag_of_b(V a, V b) { return _mm512_mask_blend_ps(0xAAAA, a, b); }
  static V negate_imag(V a) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi64(0x8000000000000000)));
  }
  static V real_twice(V a) { return _mm512_moveldup_ps(a); }
  static V imag_twice(V a) { return _mm512_movehdup_ps(a); }
  static V swap_parts(V a) { return _mm512_permute_ps(a, 0xB1); }
};
template <>
struct Lanes<double> {
  using V = __m512d;
  static constexpr int64_t size = 4;
  static V load(const void* p) { return _mm512_loadu_pd(p); }
  static void store(void* p, V v) { _mm512_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V real_of_a_imag_of_b(V a, V b) { return _mm512_mask_blend_pd(0xAA, a, b); }
  static V negate_imag(V a) {
    return _mm512_castsi512_pd(_mm512_xor_si512(
        _mm512_castpd_si512(a), _mm512_castpd_si512(_mm512_setr_pd(0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0))));
  }
  static V real_twice(V a) { return _mm512_movedup_pd(a); }
  static V imag_twice(V a) { return _mm512_permute_pd(a, 0xFF); }
  static V swap_parts(V a) { return _mm512_permute_pd(a, 0x55); }
};
#else
template <>
struct Lanes<float> {
  using V = __m256;
  static constexpr int64_t size = 4;
  static V load(const void* p) { return _mm256_loadu_ps(static_cast<const float*>(p)); }
  static void store(void* p, V v) { _mm256_storeu_ps(static_cast<float*>(p), v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V real_of_a_imag_of_b(V a, V b) { return _mm256_blend_ps(a, b, 0xAA); }
  static V negate_imag(V a) { return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi64x(0x8000000000000000))); }
  static V real_twice(V a) { return _mm256_moveldup_ps(a); }
  static V imag_twice(V a) { return _mm256_movehdup_ps(a); }
  static V swap_parts(V a) { return _mm256_permute_ps(a, 0xB1); }
};
template <>
struct Lanes<double> {
  using V = __m256d;
  static constexpr int64_t size = 2;
  static V load(const void* p) { return _mm256_loadu_pd(static_cast<const double*>(p)); }
  static void store(void* p, V v) { _mm256_storeu_pd(static_cast<double*>(p), v); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V real_of_a_imag_of_b(V a, V b) { return _mm256_blend_pd(a, b, 0xA); }
  static V negate_imag(V a) { return _mm256_xor_pd(a, _mm256_setr_pd(0.0, -0.0, 0.0, -0.0)); }
  static V real_twice(V a) { return _mm256_movedup_pd(a); }
  static V imag_twice(V a) { return _mm256_permute_pd(a, 0xF); }
  static V swap_parts(V a) { return _mm256_permute_pd(a, 0x5); }
};
#endif

// (ac - bd) + (ad - b(-c))i lane by lane, each step rounded, in PyTorch's
// order of operands (which decides the sign of a nan).
template <typename L>
inline typename L::V mul_vector_form(typename L::V x, typename L::V y) {
  const auto ac_bd = L::mul(x, y);
  const auto ad_bc = L::mul(x, L::negate_imag(L::swap_parts(y)));  // ad, -bc
  return L::sub(L::real_of_a_imag_of_b(ac_bd, L::real_twice(ad_bc)),
                L::real_of_a_imag_of_b(L::imag_twice(ac_bd), ad_bc));
}
#else
#define EMBER_COMPLEX_LANES 0
#endif

// Note [Complex product remainders]
// After the whole vector pairs, PyTorch's remainder loop is GCC's
// vectorisation of the scalar op, which rounds or fuses the product by
// position: 64-byte blocks are rounded, and so is every complex128 after
// them. For complex64, the rest r < 8 of a product of two contiguous
// operands is fused in pairs, a last lone element rounded; of a sum
// x + alpha * y, the first four are fused if r >= 4, the rest rounded; with
// a broadcast operand, elements 1 to 4 are fused if r > 4, the rest
// rounded. Strided rows fuse all but a last lone complex64. Measured
// against PyTorch 2.13's AVX2 and AVX-512 kernels.
enum class Remainder { Pairs, Quad, Broadcast };

template <typename C>
inline Product remainder_form(int64_t pos, int64_t len, Remainder kind) {
  const int64_t blocks = len - len % (64 / static_cast<int64_t>(sizeof(C)));
  if (pos < blocks || sizeof(C) == 16) return pos < blocks ? Product::Rounded : Product::Fused;
  const int64_t p = pos - blocks, r = len - blocks;
  bool fused = false;
  switch (kind) {
    case Remainder::Pairs: fused = r % 2 == 0 || p < r - 1; break;
    case Remainder::Quad: fused = r >= 4 && p < 4; break;
    case Remainder::Broadcast: fused = r > 4 && p >= 1 && p <= 4; break;
  }
  return fused ? Product::Fused : Product::Rounded;
}

// out[i] = op(a[i], b[i]) over complex C, PyTorch's way: vec(x, y) on the
// whole vector pairs of contiguous rows (one operand may be broadcast), on
// Lanes<R>::V; scalar(form, x, y) on the rest, form a
// std::integral_constant of Product (Note
// [Complex product remainders]). The DEFAULT build rounds every step.
template <typename C, typename VecOp, typename ScalarOp>
void complex_binary(const TensorIterator& it, Remainder contiguous, [[maybe_unused]] VecOp vec, ScalarOp scalar) {
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    constexpr int64_t c = sizeof(C);
    int64_t i = 0;
#if EMBER_COMPLEX_LANES
    using L = Lanes<typename C::value_type>;
    // The first count values of p[0], p[step], ..., the other lanes 0.
    const auto lanes_of = [](const C* p, int64_t step, int64_t count) {
      C lanes[L::size] = {};
      for (int64_t j = 0; j < count; ++j) lanes[j] = p[j * step];
      return L::load(lanes);
    };
    // The vector form for one element.
    const auto rounded = [&](C x, C y) {
      C lanes[L::size];
      L::store(lanes, vec(lanes_of(&x, 0, 1), lanes_of(&y, 0, 1)));
      return lanes[0];
    };
    if (s[0] == c && (s[1] == c || s[1] == 0) && (s[2] == c || s[2] == 0) && (s[1] != 0 || s[2] != 0)) {
      const int64_t whole = n - n % (2 * L::size);
      const C* a = reinterpret_cast<const C*>(d[1]);
      const C* b = reinterpret_cast<const C*>(d[2]);
      C* out = reinterpret_cast<C*>(d[0]);
      const int64_t sa = s[1] ? 1 : 0, sb = s[2] ? 1 : 0;
      const auto av = lanes_of(a, 0, L::size), bv = lanes_of(b, 0, L::size);
      for (; i < whole; i += L::size) L::store(out + i, vec(sa ? L::load(a + i) : av, sb ? L::load(b + i) : bv));
      const Remainder kind = sa && sb ? contiguous : Remainder::Broadcast;
      for (; i < n; ++i) {
        const C x = a[i * sa], y = b[i * sb];
        out[i] = remainder_form<C>(i - whole, n - whole, kind) == Product::Rounded
                     ? rounded(x, y)
                     : scalar(std::integral_constant<Product, Product::Fused>{}, x, y);
      }
      return;
    }
    for (; i < n; ++i) {
      const C x = *reinterpret_cast<const C*>(d[1] + i * s[1]), y = *reinterpret_cast<const C*>(d[2] + i * s[2]);
      C* o = reinterpret_cast<C*>(d[0] + i * s[0]);
      const bool lone = c == 8 && n % 2 == 1 && i == n - 1;
      *o = lone ? rounded(x, y) : scalar(std::integral_constant<Product, Product::Fused>{}, x, y);
    }
#else
    for (; i < n; ++i) {
      *reinterpret_cast<C*>(d[0] + i * s[0]) =
          scalar(std::integral_constant<Product, Product::Rounded>{}, *reinterpret_cast<const C*>(d[1] + i * s[1]),
                 *reinterpret_cast<const C*>(d[2] + i * s[2]));
    }
#endif
  });
}

// Runs f.template operator()<C>() with C the iterator's complex type.
#define EMBER_COMPLEX_LOOP(it, name, ...) EMBER_DISPATCH_COMPLEX_TYPES((it).common_dtype(), name, __VA_ARGS__)

// x + alpha * y: a complex product even for alpha = 1, as in PyTorch (an
// infinite part of y makes the other part nan: inf * 0).
void add_kernel(const TensorIterator& it, const Scalar& alpha) {
  EMBER_COMPLEX_LOOP(it, "add_cpu", [&] {
    using C = scalar_t;
    const C a = alpha.to<C>();
#if EMBER_COMPLEX_LANES
    using L = Lanes<typename C::value_type>;
    C lanes[L::size];
    for (auto& z : lanes) z = a;
    const auto av = L::load(lanes);
    const auto vec = [av](auto x, auto y) { return L::add(x, mul_vector_form<L>(y, av)); };
#else
    const int vec = 0;
#endif
    complex_binary<C>(it, Remainder::Quad, vec,
                      [a](auto form, C x, C y) { return x + mul_form<decltype(form)::value>(a, y); });
  });
}

void mul_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "mul_cpu", [&] {
    using C = scalar_t;
#if EMBER_COMPLEX_LANES
    const auto vec = mul_vector_form<Lanes<typename C::value_type>>;
#else
    const int vec = 0;
#endif
    complex_binary<C>(it, Remainder::Pairs, vec,
                      [](auto form, C x, C y) { return mul_form<decltype(form)::value>(x, y); });
  });
}

// z * z as PyTorch's pow(z, 2): its vector product on the whole vector pairs
// of contiguous rows, its scalar product (fused in FMA builds) on the
// remainder and on strided rows (measured: no remainder pattern, unlike mul).
void square_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "pow", [&] {
    using C = scalar_t;
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      int64_t i = 0;
#if EMBER_COMPLEX_LANES
      if (s[0] == sizeof(C) && s[1] == sizeof(C)) {
        using L = Lanes<typename C::value_type>;
        const C* a = reinterpret_cast<const C*>(d[1]);
        C* out = reinterpret_cast<C*>(d[0]);
        const int64_t whole = n - n % (2 * L::size);
        for (; i < whole; i += L::size) L::store(out + i, mul_vector_form<L>(L::load(a + i), L::load(a + i)));
      }
#endif
      for (; i < n; ++i) {
        const C z = *reinterpret_cast<const C*>(d[1] + i * s[1]);
        *reinterpret_cast<C*>(d[0] + i * s[0]) = mul_form<kScalarFma ? Product::Fused : Product::Rounded>(z, z);
      }
    });
  });
}

void div_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "div_cpu", [&] {
    using C = scalar_t;
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      const auto at = [&](int k, int64_t i) { return reinterpret_cast<C*>(d[k] + i * s[k]); };
      const bool lone = kScalarFma && sizeof(C) == 8 && n % 2 == 1;
      const int64_t m = lone ? n - 1 : n;
      for (int64_t i = 0; i < m; ++i) *at(0, i) = div_form(*at(1, i), *at(2, i));
      if (lone) *at(0, m) = div_form<false>(*at(1, m), *at(2, m));
    });
  });
}

// Note [Complex addcmul and addcdiv]
// PyTorch computes self + (value * t1) * t2 and self + (value * t1) / t2
// with its complex vector type on whole vector pairs of contiguous rows
// (every product step rounded, the quotient c10::complex's) and its scalar
// form on the rest. In the remainder, value * t1 is fused past the 64-byte
// blocks and the second product follows the rule of a sum's remainder
// (Note [Complex product remainders]); every other row is fused throughout.
// Measured against PyTorch 2.13's AVX2 and AVX-512 kernels; a complex64
// quotient after the first four of a remainder still differs now and then.
// PyTorch's compiled remainder checks its operands for overlap: when an
// input begins fewer than 64 bytes before the output, its complex64
// addcmul rows of four or five take another form (not reproduced).
template <typename C>
void complex_addc(const TensorIterator& it, C value, bool divide) {
  const auto combine = [divide](auto second, C self, C p, C y) {
    if (divide) return self + div_form(p, y);
    return self + mul_form<decltype(second)::value>(p, y);
  };
  using Fused = std::integral_constant<Product, Product::Fused>;
  using Rounded = std::integral_constant<Product, Product::Rounded>;
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    const auto at = [&](int k, int64_t i) { return reinterpret_cast<C*>(d[k] + i * s[k]); };
    int64_t i = 0;
#if EMBER_COMPLEX_LANES
    using L = Lanes<typename C::value_type>;
    constexpr int64_t c = sizeof(C);
    int64_t broadcast = 0;
    for (int k = 1; k < 4; ++k) broadcast += s[k] == 0;
    bool contiguous = s[0] == c && broadcast <= 1;
    for (int k = 1; k < 4; ++k) contiguous = contiguous && (s[k] == c || s[k] == 0);
    if (contiguous) {
      const int64_t whole = n - n % (2 * L::size);
      C lanes[L::size];
      for (auto& z : lanes) z = value;
      const auto v = L::load(lanes);
      const auto load = [&](int k, int64_t j) {
        if (s[k] != 0) return L::load(at(k, j));
        for (auto& z : lanes) z = *at(k, 0);
        return L::load(lanes);
      };
      for (; i < whole; i += L::size) {
        const auto p = mul_vector_form<L>(v, load(2, i));
        if (divide) {
          C ps[L::size], ys[L::size];
          L::store(ps, p);
          L::store(ys, load(3, i));
          for (int64_t j = 0; j < L::size; ++j) *at(0, i + j) = *at(1, i + j) + div_form(ps[j], ys[j]);
        } else {
          L::store(at(0, i), L::add(load(1, i), mul_vector_form<L>(p, load(3, i))));
        }
      }
      const int64_t r = n - whole, blocks = whole + r - r % (64 / c);
      for (; i < n; ++i) {
        const C p =
            i < blocks ? mul_form<Product::Rounded>(value, *at(2, i)) : mul_form<Product::Fused>(value, *at(2, i));
        *at(0, i) = remainder_form<C>(i - whole, r, Remainder::Quad) == Product::Fused
                        ? combine(Fused{}, *at(1, i), p, *at(3, i))
                        : combine(Rounded{}, *at(1, i), p, *at(3, i));
      }
      return;
    }
    // Strided rows: all fused, but the second product of a last lone complex64.
    const int64_t m = c == 8 && n % 2 == 1 ? n - 1 : n;
    for (; i < m; ++i) *at(0, i) = combine(Fused{}, *at(1, i), mul_form<Product::Fused>(value, *at(2, i)), *at(3, i));
    if (m < n) *at(0, m) = combine(Rounded{}, *at(1, m), mul_form<Product::Fused>(value, *at(2, m)), *at(3, m));
#else
    for (; i < n; ++i) {
      *at(0, i) = combine(Rounded{}, *at(1, i), mul_form<Product::Rounded>(value, *at(2, i)), *at(3, i));
    }
#endif
  });
}

void addc_kernel(const TensorIterator& it, const Scalar& value, bool divide) {
  EMBER_COMPLEX_LOOP(it, divide ? "addcdiv_cpu_out" : "addcmul_cpu_out",
                     [&] { complex_addc<scalar_t>(it, value.to<scalar_t>(), divide); });
}

// Note [Complex lerp]
// PyTorch's scalar lerp is start + w (end - start) where |w|^2 < 1/4 and
// end - (end - start)(1 - w) elsewhere. Its AVX2 and AVX-512 vector form,
// on the whole vector pairs of contiguous rows, picks per lane between
// start + w (end - start) and end + (w - 1)(end - start), products rounded;
// its generic vectors take the scalar form. Remainders and strided rows take
// the scalar form with fused products.
template <Product form, typename C>
inline C lerp_scalar_form(C start, C end, C w, C mask_w) {
  using R = typename C::value_type;
  const C diff = end - start;
  const R norm = form == Product::Fused ? scalar_fma(mask_w.real(), mask_w.real(), mask_w.imag() * mask_w.imag())
                                        : mask_w.real() * mask_w.real() + mask_w.imag() * mask_w.imag();
  if (norm < R(0.25)) return start + mul_form<form>(w, diff);
  return end - mul_form<form>(diff, C(R(1) - w.real(), R(0) - w.imag()));
}

template <typename C>
void complex_lerp(const TensorIterator& it, const C* weight) {
  using R = typename C::value_type;
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    const auto at = [&](int k, int64_t i) { return reinterpret_cast<C*>(d[k] + i * s[k]); };
    const auto w_at = [&](int64_t i) { return weight ? *weight : *at(3, i); };
    int64_t i = 0;
#if EMBER_COMPLEX_LANES
    using L = Lanes<R>;
    constexpr int64_t c = sizeof(C);
    const int nin = weight ? 2 : 3;
    int64_t broadcast = 0;
    bool contiguous = s[0] == c;
    for (int k = 1; k <= nin; ++k) {
      broadcast += s[k] == 0;
      contiguous = contiguous && (s[k] == c || s[k] == 0);
    }
    if (contiguous && broadcast <= 1) {
      const int64_t whole = n - n % (2 * L::size);
      for (; i < whole; ++i) {
        // Each lane alone: the blends and the product are lane-wise, but
        // PyTorch's complex64 blend reads the mask of an even lane for the
        // odd lane after it too.
        const C start = *at(1, i), end = *at(2, i), w = w_at(i);
        const C mask_w = c == 8 ? w_at(i & ~int64_t(1)) : w;
        const R norm = mask_w.real() * mask_w.real() + mask_w.imag() * mask_w.imag();
        C lanes[L::size] = {};
        const bool small = norm < R(0.25);
        lanes[0] = small ? w : C(w.real() - R(1), w.imag() - R(0));
        C diff[L::size] = {};
        diff[0] = end - start;
        C prod[L::size];
        L::store(prod, mul_vector_form<L>(L::load(lanes), L::load(diff)));
        *at(0, i) = (small ? start : end) + prod[0];
      }
      // The 64-byte blocks of the rest rounded, with the vector form's
      // masks; the others fused.
      const int64_t blocks = whole + (n - whole) - (n - whole) % (64 / c);
      for (; i < blocks; ++i) {
        const C w = w_at(i), mask_w = c == 8 ? w_at(i & ~int64_t(1)) : w;
        *at(0, i) = lerp_scalar_form<Product::Rounded>(*at(1, i), *at(2, i), w, mask_w);
      }
    }
    for (; i < n; ++i) *at(0, i) = lerp_scalar_form<Product::Fused>(*at(1, i), *at(2, i), w_at(i), w_at(i));
#else
    for (; i < n; ++i) *at(0, i) = lerp_scalar_form<Product::Rounded>(*at(1, i), *at(2, i), w_at(i), w_at(i));
#endif
  });
}

void lerp_scalar_kernel(const TensorIterator& it, const Scalar& weight) {
  EMBER_COMPLEX_LOOP(it, "lerp_kernel_scalar", [&] {
    const scalar_t w = weight.to<scalar_t>();
    complex_lerp<scalar_t>(it, &w);
  });
}

void lerp_tensor_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "lerp_kernel_tensor", [&] { complex_lerp<scalar_t>(it, nullptr); });
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

// PyTorch's AVX2 and AVX-512 complex128 acos, which runs every element
// through its vector form: pi/2 - asin(z) part by part.
template <typename C>
inline C acos_value(C z) {
  using R = typename C::value_type;
  if constexpr (EMBER_COMPLEX_LANES && std::is_same_v<R, double>) {
    const C s = std::asin(z);
    return C(R(1.57079632679489661923) - s.real(), R(0) - s.imag());
  } else {
    return std::acos(z);
  }
}

// e^z - 1 = (e^x cos y - 1) + i e^x sin y, the real part as c10's
// expm1(x) cos y - 2 sin^2(y / 2) (its digits near 0), which PyTorch's FMA
// builds contract to one fused multiply-add.
template <typename C>
inline C expm1_value(C z) {
  using R = typename C::value_type;
  const R x = z.real(), y = z.imag();
  const R half_sin = std::sin(y / R(2));
  return C(scalar_fma(std::expm1(x), std::cos(y), -(R(2) * half_sin * half_sin)), std::exp(x) * std::sin(y));
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
EMBER_COMPLEX_UNARY(expm1, expm1_value(z))
EMBER_COMPLEX_UNARY(log, std::log(z))
EMBER_COMPLEX_UNARY(sqrt, std::sqrt(z))
EMBER_COMPLEX_UNARY(sin, std::sin(z))
EMBER_COMPLEX_UNARY(cos, std::cos(z))
EMBER_COMPLEX_UNARY(tan, std::tan(z))
EMBER_COMPLEX_UNARY(sinh, std::sinh(z))
EMBER_COMPLEX_UNARY(cosh, std::cosh(z))
EMBER_COMPLEX_UNARY(tanh, std::tanh(z))
EMBER_COMPLEX_UNARY(asin, std::asin(z))
EMBER_COMPLEX_UNARY(acos, acos_value(z))
EMBER_COMPLEX_UNARY(atan, std::atan(z))
// 1 / z by c10::complex's quotient, as both of PyTorch's forms compute it;
// GCC folds the quotient by zero of PyTorch's constant 1 + 0i to inf + nan i.
template <typename C>
inline C reciprocal_value(C z) {
  using R = typename C::value_type;
  if (z.real() == R(0) && z.imag() == R(0))
    return C(std::numeric_limits<R>::infinity(), std::numeric_limits<R>::quiet_NaN());
  return div_form(C(1), z);
}

EMBER_COMPLEX_UNARY(reciprocal, reciprocal_value(z))
EMBER_COMPLEX_UNARY(rsqrt, reciprocal_value(std::sqrt(z)))
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

// out = f(z, -z) for sigmoid and silu. PyTorch's vector form negates as
// 0 - z, which keeps a nan's sign, on the whole vector pairs of contiguous
// rows (its generic vectors too); its scalar form as -z.
template <typename C, typename F>
void map_with_negation(const TensorIterator& it, F f) {
  using R = typename C::value_type;
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
  // PyTorch's vectors hold 64 bytes in its AVX-512 build, 32 in the others.
#if defined(__AVX512F__)
    constexpr int64_t pair = 128 / sizeof(C);
#else
    constexpr int64_t pair = 64 / sizeof(C);
#endif
    const int64_t whole = s[0] == sizeof(C) && s[1] == sizeof(C) ? n - n % pair : 0;
    for (int64_t i = 0; i < n; ++i) {
      const C z = *reinterpret_cast<const C*>(d[1] + i * s[1]);
      *reinterpret_cast<C*>(d[0] + i * s[0]) =
          i < whole ? f(z, C(R(0) - z.real(), R(0) - z.imag()), std::true_type{}) : f(z, -z, std::false_type{});
    }
  });
}

// 1 / (1 + e^-z)
void sigmoid_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "sigmoid_cpu", [&] {
    using C = scalar_t;
    map_with_negation<C>(it, [](C, C minus_z, auto) { return reciprocal_value(C(1) + std::exp(minus_z)); });
  });
}

// z / (1 + e^-z)
void silu_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "silu_cpu", [&] {
    using C = scalar_t;
    // PyTorch's scalar complex64 quotient rounds its numerators (as the
    // last complex64 of an odd row of div).
    map_with_negation<C>(it, [](C z, C minus_z, auto vector) {
      return div_form < decltype(vector)::value || sizeof(C) == 16 > (z, C(1) + std::exp(minus_z));
    });
  });
}

// Note [Complex log1p and sinc]
// PyTorch's CPU log1p of a complex z is log(u) * (z / (u - 1)) with u = 1 + z
// (z itself where u is 1, log(u) where u - 1 is z); its sinc is
// sin(pi z) / (pi z), pi z a complex product. Both are its scalar functions,
// compiled with the capability's fused multiply-adds: the quotient is
// div_form and the product fused, but in strided rows of the AVX-512
// build's log1p only the 64-byte blocks are; after them the product is rounded, and so are a
// complex64 quotient's numerators (measured: a complex128 there still
// differs in about one element of ten).
template <Product product, bool fused_numerators, typename C>
inline C log1p_value(C z) {
  using R = typename C::value_type;
  const C u(z.real() + R(1), z.imag());
  if (u == C(1)) return z;
  const C log_u = std::log(u), u_minus_1(u.real() - R(1), u.imag() - R(0));
  if (u_minus_1 == z) return log_u;
  return mul_form<product>(log_u, div_form<fused_numerators>(z, u_minus_1));
}

void log1p_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "log1p_cpu", [&] {
    using C = scalar_t;
    constexpr Product fused = kScalarFma ? Product::Fused : Product::Rounded;
    it.for_each([](char** d, const int64_t* s, int64_t n) {
#if defined(__AVX512F__)
      const bool contiguous = s[0] == int64_t(sizeof(C)) && s[1] == int64_t(sizeof(C));
      const int64_t blocks = contiguous ? n : n - n % (64 / int64_t(sizeof(C)));
#else
      const int64_t blocks = n;
#endif
      for (int64_t i = 0; i < n; ++i) {
        const C z = *reinterpret_cast<const C*>(d[1] + i * s[1]);
        *reinterpret_cast<C*>(d[0] + i * s[0]) =
            i < blocks ? log1p_value<fused, true>(z) : log1p_value<Product::Rounded, sizeof(C) == 16>(z);
      }
    });
  });
}

// log(e^x + e^y) as PyTorch's CPU helper: nan if either is nan, the
// smaller (by real part) where both real parts are -inf, log(e^x + e^y)
// where both are +inf, log1p(e^(min - max)) + max otherwise.
template <typename C>
C log_add_exp(C x, C y) {
  using R = typename C::value_type;
  const auto nan = [](C z) { return std::isnan(z.real()) || std::isnan(z.imag()); };
  const bool x_smaller = !nan(y) && !nan(x) && x.real() < y.real();
  const C lo = nan(y) ? y : (nan(x) ? x : (x_smaller ? x : y)), hi = nan(y) ? y : (nan(x) ? x : (x_smaller ? y : x));
  if (nan(lo)) return C(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  if (!std::isfinite(lo.real()) && lo.real() == hi.real())
    return lo.real() < 0 ? lo : std::log(std::exp(lo) + std::exp(hi));
  return log1p_value<kScalarFma ? Product::Fused : Product::Rounded, true>(std::exp(lo - hi)) + hi;
}

void logaddexp_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "logaddexp_cpu", [&] { map2<scalar_t, scalar_t>(it, log_add_exp<scalar_t>); });
}

void sinc_kernel(const TensorIterator& it) {
  EMBER_COMPLEX_LOOP(it, "sinc_cpu", [&] {
    using C = scalar_t;
    using R = typename C::value_type;
    map1<C, C>(it, [](C z) {
      if (z == C(0)) return C(1);
      const C pi_z = mul_form<kScalarFma ? Product::Fused : Product::Rounded>(C(R(3.14159265358979323846), R(0)), z);
      return div_form(std::sin(pi_z), pi_z);
    });
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
#if EMBER_SLEEF_LOOPS
      if (sleefvec::complex_angle<R>(it)) return;
#endif
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
EMBER_REGISTER_DISPATCH(addc_complex_stub, &addc_kernel);
EMBER_REGISTER_DISPATCH(log1p_complex_stub, &log1p_kernel);
EMBER_REGISTER_DISPATCH(expm1_complex_stub, &expm1_kernel);
EMBER_REGISTER_DISPATCH(sinc_complex_stub, &sinc_kernel);
EMBER_REGISTER_DISPATCH(lerp_scalar_complex_stub, &lerp_scalar_kernel);
EMBER_REGISTER_DISPATCH(lerp_tensor_complex_stub, &lerp_tensor_kernel);
EMBER_REGISTER_DISPATCH(neg_complex_stub, &neg_kernel);
EMBER_REGISTER_DISPATCH(square_complex_stub, &square_kernel);
EMBER_REGISTER_DISPATCH(conj_complex_stub, &conj_kernel);
EMBER_REGISTER_DISPATCH(sgn_complex_stub, &sgn_kernel);
EMBER_REGISTER_DISPATCH(abs_complex_stub, &abs_kernel);
EMBER_REGISTER_DISPATCH(angle_stub, &angle_kernel);
EMBER_REGISTER_DISPATCH(make_complex_stub, &make_complex_kernel);
EMBER_REGISTER_DISPATCH(polar_stub, &polar_kernel);
EMBER_REGISTER_POINTWISE(div_complex, &div_kernel);
EMBER_REGISTER_POINTWISE(eq_complex, &eq_kernel);
EMBER_REGISTER_POINTWISE(pow_complex, &pow_kernel);
EMBER_REGISTER_POINTWISE(logaddexp_complex, &logaddexp_kernel);
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
EMBER_REGISTER_POINTWISE(silu_complex, &silu_kernel);
EMBER_REGISTER_POINTWISE(reciprocal_complex, &reciprocal_kernel);
EMBER_REGISTER_POINTWISE(isnan_complex, &isnan_kernel);
EMBER_REGISTER_POINTWISE(isinf_complex, &isinf_kernel);
EMBER_REGISTER_POINTWISE(isfinite_complex, &isfinite_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
