// Value reductions (sum, mean, prod, max, min, all, any) and vector norms,
// compiled once per CPU capability. See Note [Reduction plan].
#include <complex>

#include "ember/cpu/kernels/ReduceEngine.h"
#include "ember/cpu/kernels/ReduceVec.h"
#include "ember/cpu/kernels/SumOrder.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// Accumulator of sums and products: integers wrap in uint64 (to_acc and
// from_acc in ReduceEngine.h), floats use their computation type.
template <typename T>
using int_or_opmath_t = std::conditional_t<std::is_integral_v<T>, uint64_t, opmath_t<T>>;

// ---- sum, nansum, mean ----------------------------------------------------------

template <typename T, typename Out, bool kNan>
struct SumOp {
  using in_t = T;
  using acc_t = int_or_opmath_t<T>;
  Out* out;
  acc_t divisor;

  static acc_t val(const T& v) {
    acc_t a = to_acc<acc_t>(v);
    if constexpr (kNan) return a != a ? acc_t(0) : a;
    return a;
  }
  acc_t identity() const { return acc_t(0); }
  acc_t contig(const T* x, int64_t n) const {
    if constexpr (has_vec_leaf_v<T> && !kNan) {
      return vec_cascade_sum(x, n, [](auto v) { return v; });  // Note [Vector reduction leaves]
    } else {
      return cascade_sum<acc_t>(0, n, [x](int64_t i) { return val(load_element(x + i)); });
    }
  }
  acc_t strided(const T* x, int64_t n, int64_t s) const {
    return cascade_sum<acc_t>(0, n, [x, s](int64_t i) { return val(load_element(x + i * s)); });
  }
  acc_t combine(acc_t a, acc_t b) const { return a + b; }
  void columns(const T* x, int64_t rows, int64_t rs, int64_t nc, acc_t* acc) const {
    if constexpr (has_vec_leaf_v<T> && !kNan) {
      // The same cascade, its leaves summed in registers (same order per column).
      cascade_column_tree<acc_t>(x, rows, rs, nc, acc, [&](const T* xs, int64_t n, acc_t* a) {
        vec_column_pass(xs, n, rs, nc, a, [](auto u, auto v) { return u + v; });
      });
    } else {
      cascade_columns<acc_t>(x, rows, rs, nc, acc, [](const T& v) { return val(v); });
    }
  }
  void write(int64_t o, acc_t a) const {
    if constexpr (!std::is_same_v<acc_t, uint64_t>) {
      if (divisor != acc_t(1)) a = a / divisor;
    }
    out[o] = from_acc<Out>(a);
  }
};

// ---- prod -----------------------------------------------------------------------------

// Integer products (exact modulo 2^64 in any order); floating ones follow
// Note [Product order].
template <typename T, typename Out>
struct ProdOp {
  using in_t = T;
  using acc_t = int_or_opmath_t<T>;
  Out* out;

  acc_t identity() const { return acc_t(1); }
  acc_t contig(const T* x, int64_t n) const {
    acc_t lanes[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) lanes[j] *= to_acc<acc_t>(x[i + j]);
    }
    acc_t r = acc_t(1);
    for (; i < n; ++i) r *= to_acc<acc_t>(load_element(x + i));
    return ((lanes[0] * lanes[1]) * (lanes[2] * lanes[3])) * ((lanes[4] * lanes[5]) * (lanes[6] * lanes[7])) * r;
  }
  acc_t strided(const T* x, int64_t n, int64_t s) const {
    acc_t r = acc_t(1);
    for (int64_t i = 0; i < n; ++i) r *= to_acc<acc_t>(load_element(x + i * s));
    return r;
  }
  acc_t combine(acc_t a, acc_t b) const { return a * b; }
  void columns(const T* x, int64_t rows, int64_t rs, int64_t nc, acc_t* acc) const {
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * rs;
      for (int64_t c = 0; c < nc; ++c) acc[c] *= to_acc<acc_t>(row[c]);
    }
  }
  void write(int64_t o, acc_t a) const { out[o] = from_acc<Out>(a); }
};

// Note [Product order]
// PyTorch multiplies floating elements in its vectorised reduction loop
// (32-byte vectors: 8 floats, 4 doubles, 16 halves or bfloat16s; a 16-bit
// product is rounded to its type after every step, in vectors as in
// scalars). Within one block of the iteration (SumOrder.h's Geometry):
//  - a contiguous reduced run: groups of 4 vectors, each of the 4 vector
//    accumulators starting from the group's first vector; the accumulators
//    multiplied as (a0 * a1) * (a2 * a3), its lanes one after the other,
//    into the output; the elements after the last group one by one;
//  - contiguous kept columns: groups of 4 vectors of columns multiplied down
//    the rows from the first row, then into the output; other columns one
//    element at a time;
//  - otherwise one element at a time into the output.
// The products of ProdBlocks: PyTorch's vector op and its scalar op. They
// differ for complex numbers only: the vector product rounds every step,
// the scalar one is c10::complex's, fused where the build has FMA (Note
// [Complex products and quotients]).
template <typename T>
struct RealProduct {
  static T vec(T a, T b) { return static_cast<T>(load(a) * load(b)); }
  static T scalar(T a, T b) { return vec(a, b); }
  static T packed(T a, T b) { return vec(a, b); }
  static T fold(T a, T b, bool) { return vec(a, b); }
};

template <typename C>
struct ComplexProduct {
  // Each product rounded: GCC fuses a complex product it vectorises
  // (vfmaddsub) even without contraction, unless the products are opaque.
  template <typename R>
  static R rounded(R v) {
#if defined(__x86_64__) && defined(__SSE2__)
    asm volatile("" : "+x"(v));
#endif
    return v;
  }
  static C vec(C a, C b) {
    return C(rounded(a.real() * b.real()) - rounded(a.imag() * b.imag()),
             rounded(a.real() * b.imag()) + rounded(a.imag() * b.real()));
  }
  static C scalar(C a, C b) {
#if defined(__FMA__)
    return C(std::fma(a.real(), b.real(), -(a.imag() * b.imag())), std::fma(a.real(), b.imag(), a.imag() * b.real()));
#else
    return vec(a, b);
#endif
  }
  // The scalar op of PyTorch's strided rows: fused for complex128, each
  // step rounded for complex64 (measured; GCC packs its parts into one
  // 8-byte vector, which has no fused multiply-add).
  static C packed(C a, C b) {
    if constexpr (sizeof(C) == 8) {
      return vec(a, b);
    } else {
      return scalar(a, b);
    }
  }
  // The fold of a vector's lanes into the first: fused, but for complex64
  // the last of the three products is rounded (measured).
  static C fold(C a, C b, bool last) { return sizeof(C) == 8 && last ? vec(a, b) : scalar(a, b); }
};

template <typename T, typename M = RealProduct<T>>
struct ProdBlocks {
  using in_t = T;
  using out_t = T;
  static constexpr int64_t W = 32 / static_cast<int64_t>(sizeof(T));
  static constexpr int64_t kGroup = 4 * W;

  static void inner(const T* x, int64_t n, T* out) {
    const int64_t count = n / kGroup;
    if (count > 0) {
      T acc[kGroup];
      for (int64_t k = 0; k < kGroup; ++k) acc[k] = x[k];
      for (int64_t i = 1; i < count; ++i) {
        const T* g = x + i * kGroup;
        for (int64_t k = 0; k < kGroup; ++k) acc[k] = M::vec(acc[k], g[k]);
      }
      T lanes[W];
      for (int64_t k = 0; k < W; ++k) {
        lanes[k] = M::vec(M::vec(acc[k], acc[W + k]), M::vec(acc[2 * W + k], acc[3 * W + k]));
      }
      T r = lanes[0];
      for (int64_t k = 1; k < W; ++k) r = M::fold(r, lanes[k], k == W - 1);
      *out = M::scalar(*out, r);
    }
    T r = *out;
    for (int64_t i = count * kGroup; i < n; ++i) r = M::scalar(r, x[i]);
    *out = r;
  }

  void block(const T* in, T* out, int64_t is0, int64_t is1, int64_t os0, int64_t os1, int64_t n0, int64_t n1) const {
    if (os0 == 0 && is0 == 1) {
      for (int64_t j = 0; j < n1; ++j) inner(in + j * is1, n0, out + j * os1);
    } else if (os0 == 0 && os1 == 1 && is1 == 1) {
      int64_t c = 0;
      for (; c + kGroup <= n1; c += kGroup) {
        T acc[kGroup];
        for (int64_t k = 0; k < kGroup; ++k) acc[k] = in[c + k];
        for (int64_t i = 1; i < n0; ++i) {
          const T* row = in + i * is0 + c;
          for (int64_t k = 0; k < kGroup; ++k) acc[k] = M::vec(acc[k], row[k]);
        }
        for (int64_t k = 0; k < kGroup; ++k) out[c + k] = M::vec(acc[k], out[c + k]);
      }
      for (; c < n1; ++c) {
        T r = out[c];
        for (int64_t i = 0; i < n0; ++i) r = M::scalar(r, in[i * is0 + c]);
        out[c] = r;
      }
    } else {
      for (int64_t j = 0; j < n1; ++j) {
        for (int64_t i = 0; i < n0; ++i) {
          T& o = out[j * os1 + i * os0];
          o = M::packed(o, in[j * is1 + i * is0]);
        }
      }
    }
  }
};

template <typename T>
void prod_floating(const ReducePlan& p) {
  T* out = static_cast<T*>(p.out);
  for (int64_t o = 0; o < p.num_outputs; ++o) out[o] = T(1);
  sum_order::reduce_in_torch_order(p, out, ProdBlocks<T>{}, ProdBlocks<T>{});
}

// Complex products in the same order (Note [Product order]), each in the form
// PyTorch's build gives it (ComplexProduct).
template <typename C>
void prod_complex(const ReducePlan& p) {
  C* out = static_cast<C*>(p.out);
  for (int64_t o = 0; o < p.num_outputs; ++o) out[o] = C(1);
  using K = ProdBlocks<C, ComplexProduct<C>>;
  sum_order::reduce_in_torch_order(p, out, K{}, K{});
}

// ---- max, min -------------------------------------------------------------------------

template <typename V>
inline V lowest_value() {
  if constexpr (std::is_floating_point_v<V>) {
    return -std::numeric_limits<V>::infinity();
  } else {
    return std::numeric_limits<V>::lowest();
  }
}
template <typename V>
inline V highest_value() {
  if constexpr (std::is_floating_point_v<V>) {
    return std::numeric_limits<V>::infinity();
  } else {
    return std::numeric_limits<V>::max();
  }
}

// Max (kMax) or min; a NaN anywhere makes the result NaN, as in PyTorch.
template <typename T, bool kMax>
struct MinMaxOp {
  using in_t = T;
  using acc_t = opmath_t<T>;
  T* out;

  static acc_t pick(acc_t a, acc_t b) {
    if constexpr (kMax) {
      return b > a ? b : a;
    } else {
      return b < a ? b : a;
    }
  }
  acc_t identity() const { return kMax ? lowest_value<acc_t>() : highest_value<acc_t>(); }
  acc_t contig(const T* x, int64_t n) const {
    if constexpr (has_vec_leaf_v<T>) return vec_extreme<kMax>(x, n);
    constexpr int kLanes = 16;
    acc_t lanes[kLanes];
    bool nan[kLanes] = {};
    for (int j = 0; j < kLanes; ++j) lanes[j] = identity();
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        acc_t v = load(x[i + j]);
        lanes[j] = pick(lanes[j], v);
        if constexpr (std::is_floating_point_v<acc_t>) nan[j] |= v != v;
      }
    }
    acc_t r = identity();
    bool any_nan = false;
    for (; i < n; ++i) {
      acc_t v = load(x[i]);
      r = pick(r, v);
      any_nan |= is_nan_value(v);
    }
    for (int j = 0; j < kLanes; ++j) {
      r = pick(r, lanes[j]);
      any_nan |= nan[j];
    }
    if constexpr (std::is_floating_point_v<acc_t>) {
      if (any_nan) return std::numeric_limits<acc_t>::quiet_NaN();
    }
    return r;
  }
  acc_t strided(const T* x, int64_t n, int64_t s) const {
    acc_t r = identity();
    for (int64_t i = 0; i < n; ++i) r = combine(r, load(x[i * s]));
    return r;
  }
  acc_t combine(acc_t a, acc_t b) const {
    if (is_nan_value(a)) return a;
    if (is_nan_value(b)) return b;
    return pick(a, b);
  }
  void columns(const T* x, int64_t rows, int64_t rs, int64_t nc, acc_t* acc) const {
    if constexpr (has_vec_leaf_v<T> && std::is_same_v<acc_t, T>) {
      // Groups of eight rows, their columns in registers; rows still in order.
      // A NaN accumulator stays NaN: v > NaN is false, and v != v only for a NaN v.
      const auto pick_nan = [](auto a, auto v) { return (kMax ? v > a : v < a) | (v != v) ? v : a; };
      constexpr int64_t kGroup = 8;
      for (int64_t r0 = 0; r0 < rows; r0 += kGroup) {
        vec_column_pass(x + r0 * rs, std::min(kGroup, rows - r0), rs, nc, acc, pick_nan);
      }
      return;
    }
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * rs;
#pragma omp simd
      for (int64_t c = 0; c < nc; ++c) {
        const acc_t v = load(row[c]);
        // A NaN v replaces acc; a NaN acc stays (comparisons with NaN are false).
        if constexpr (std::is_floating_point_v<acc_t>) {
          acc[c] = (v != v || (kMax ? v > acc[c] : v < acc[c])) ? v : acc[c];
        } else {
          acc[c] = pick(acc[c], v);
        }
      }
    }
  }
  void write(int64_t o, acc_t a) const { out[o] = static_cast<T>(a); }
};

// ---- all, any ---------------------------------------------------------------------------

template <typename T, bool kAll>
struct AllAnyOp {
  using in_t = T;
  using acc_t = bool;
  uint8_t* out;  // bool and uint8 results share the byte layout

  static bool truth(const T* p) { return load(load_element(p)) != opmath_t<T>(0); }
  acc_t identity() const { return kAll; }
  acc_t contig(const T* x, int64_t n) const {
    // Counts the deciding elements per chunk (a compare and an add, which
    // vectorise) and stops at the first chunk that has one.
    constexpr int64_t kChunk = 4096;
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t e = std::min(n, s + kChunk);
      int32_t deciding = 0;
      for (int64_t i = s; i < e; ++i) deciding += truth(x + i) != kAll;
      if (deciding) return !kAll;
    }
    return kAll;
  }
  acc_t strided(const T* x, int64_t n, int64_t s) const {
    for (int64_t i = 0; i < n; ++i) {
      if (truth(x + i * s) != kAll) return !kAll;
    }
    return kAll;
  }
  acc_t combine(acc_t a, acc_t b) const { return kAll ? (a && b) : (a || b); }
  void columns(const T* x, int64_t rows, int64_t rs, int64_t nc, acc_t* acc) const {
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * rs;
      for (int64_t c = 0; c < nc; ++c) {
        if constexpr (kAll) {
          acc[c] = acc[c] & truth(row + c);
        } else {
          acc[c] = acc[c] | truth(row + c);
        }
      }
    }
  }
  void write(int64_t o, acc_t a) const { out[o] = a ? 1 : 0; }
};

// Floating sum (mean when divisor != 1) in PyTorch's order (Note [Sum order]).
// A mean of 16-bit floats sums a float copy, divides, then rounds, as PyTorch.
template <typename T, bool kNan>
void sum_floating(const ReducePlan& p, double divisor) {
  using A = opmath_t<T>;
  T* out = static_cast<T*>(p.out);
  if constexpr (!std::is_same_v<T, A>) {
    // Also a sum whose two innermost iteration dims are both reduced: PyTorch
    // sums a float copy there rather than round the output after each block.
    if (divisor != 1.0 || (!kNan && p.red_sizes.size() >= 2)) {
      std::vector<A> sums(static_cast<size_t>(p.num_outputs));
      sum_order::sum_in_torch_order<T, A, kNan, true>(p, sums.data());
      for (int64_t o = 0; o < p.num_outputs; ++o) out[o] = static_cast<T>(sums[o] / static_cast<A>(divisor));
      return;
    }
  } else {
    sum_order::sum_in_torch_order<T, T, kNan, false>(p, out);
    if (divisor != 1.0) {
      for (int64_t o = 0; o < p.num_outputs; ++o) out[o] = out[o] / static_cast<A>(divisor);
    }
    return;
  }
  sum_order::sum_in_torch_order<T, T, kNan, false>(p, out);
}

template <typename T>
void reduce_typed(const ReducePlan& p, ReduceOp op, double divisor) {
  T* out_same = static_cast<T*>(p.out);
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::NanSum: {
      using Acc = int_or_opmath_t<T>;
      const bool nan = op == ReduceOp::NanSum && std::is_floating_point_v<Acc>;
      if constexpr (std::is_floating_point_v<Acc>) {
        if (p.out_dtype == p.in_dtype) {
          if (nan) {
            sum_floating<T, true>(p, divisor);
          } else {
            sum_floating<T, false>(p, divisor);
          }
          return;
        }
      }
      if (p.out_dtype == p.in_dtype) {
        if (nan) {
          run_reduction(p, SumOp<T, T, true>{out_same, static_cast<Acc>(divisor)});
        } else {
          run_reduction(p, SumOp<T, T, false>{out_same, static_cast<Acc>(divisor)});
        }
      } else {
        EMBER_INTERNAL_ASSERT(p.out_dtype == ScalarType::Long && std::is_integral_v<T>, "sum: unexpected dtypes");
        run_reduction(p, SumOp<T, int64_t, false>{static_cast<int64_t*>(p.out), Acc(1)});
      }
      return;
    }
    case ReduceOp::Prod:
      if constexpr (!std::is_integral_v<T>) {
        if (p.out_dtype == p.in_dtype) return prod_floating<T>(p);  // Note [Product order]
      }
      if (p.out_dtype == p.in_dtype) {
        run_reduction(p, ProdOp<T, T>{out_same});
      } else {
        EMBER_INTERNAL_ASSERT(p.out_dtype == ScalarType::Long && std::is_integral_v<T>, "prod: unexpected dtypes");
        run_reduction(p, ProdOp<T, int64_t>{static_cast<int64_t*>(p.out)});
      }
      return;
    case ReduceOp::Max: run_reduction(p, MinMaxOp<T, true>{out_same}); return;
    case ReduceOp::Min: run_reduction(p, MinMaxOp<T, false>{out_same}); return;
    case ReduceOp::All: run_reduction(p, AllAnyOp<T, true>{static_cast<uint8_t*>(p.out)}); return;
    case ReduceOp::Any: run_reduction(p, AllAnyOp<T, false>{static_cast<uint8_t*>(p.out)}); return;
  }
}

void reduce_kernel(const ReducePlan& p, ReduceOp op, double divisor) {
  if (is_complex_type(p.in_dtype)) {
    EMBER_INTERNAL_ASSERT(op == ReduceOp::Prod && p.out_dtype == p.in_dtype, "reduce: complex products only");
    if (p.in_dtype == ScalarType::ComplexFloat) return prod_complex<std::complex<float>>(p);
    return prod_complex<std::complex<double>>(p);
  }
  EMBER_USE_BASELINE_KERNEL_FOR(p.in_dtype, reduce_stub, p, op, divisor);
  EMBER_DISPATCH_KERNEL_TYPES(p.in_dtype, "reduce", [&] { reduce_typed<scalar_t>(p, op, divisor); });
}

// ---- vector norms -------------------------------------------------------------------------

enum class NormKind { Zero, One, Two, P };

// The largest (kMax) or smallest magnitude; NaN if any element is NaN.
template <typename T, bool kMax>
struct AbsExtremeOp {
  using in_t = T;
  using acc_t = opmath_t<T>;
  T* out;

  static acc_t val(const T& v) { return std::abs(load(v)); }
  static acc_t extreme(acc_t a, acc_t b) {
    if (a != a) return a;
    if (b != b) return b;
    return kMax ? (b > a ? b : a) : (b < a ? b : a);
  }
  acc_t identity() const { return kMax ? acc_t(0) : std::numeric_limits<acc_t>::infinity(); }
  acc_t contig(const T* x, int64_t n) const { return strided(x, n, 1); }
  acc_t strided(const T* x, int64_t n, int64_t s) const {
    acc_t r = identity();
    for (int64_t i = 0; i < n; ++i) r = extreme(r, val(x[i * s]));
    return r;
  }
  acc_t combine(acc_t a, acc_t b) const { return extreme(a, b); }
  void columns(const T* x, int64_t rows, int64_t rs, int64_t nc, acc_t* acc) const {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < nc; ++c) acc[c] = extreme(acc[c], val(x[r * rs + c]));
    }
  }
  void write(int64_t o, acc_t a) const { out[o] = static_cast<T>(a); }
};

// The accumulator of a norm: the real part's type for complex numbers.
template <typename T>
struct NormAcc {
  using type = opmath_t<T>;
  using out = T;
  static type value(const T& v) { return load(v); }
};
template <typename R>
struct NormAcc<std::complex<R>> {
  using type = R;
  using out = R;
  static R value(const std::complex<R>& z) { return std::abs(z); }  // libm's hypot, as std::abs of c10::complex
};

// A sum-like norm (ord 0, 1, 2 or p) folded one element at a time, as
// PyTorch's NormZeroOps, NormOneOps, NormTwoOps and NormOps (Note [Serial
// reductions]), over the magnitudes of complex numbers; no fused multiply-add.
template <typename T, NormKind K>
struct NormFoldOp {
  using in_t = T;
  using acc_t = typename NormAcc<T>::type;
  typename NormAcc<T>::out* out;
  acc_t p;

  acc_t identity() const { return acc_t(0); }
  acc_t reduce(acc_t acc, const T& v) const {
    const acc_t x = NormAcc<T>::value(v);
    if constexpr (K == NormKind::Zero) return acc + (x == acc_t(0) ? acc_t(0) : acc_t(1));
    if constexpr (K == NormKind::One) return acc + std::abs(x);
    if constexpr (K == NormKind::Two) return acc + x * x;
    if constexpr (K == NormKind::P) return acc + std::pow(std::abs(x), p);
    return acc;
  }
  acc_t combine(acc_t a, acc_t b) const { return a + b; }
  void write(int64_t o, acc_t a) const {
    if constexpr (K == NormKind::Two) a = std::sqrt(a);
    if constexpr (K == NormKind::P) a = std::pow(a, acc_t(1) / p);
    out[o] = static_cast<typename NormAcc<T>::out>(a);
  }
};

// Note [Two-norm of contiguous rows]
// For a 2-norm over one contiguous reduced dim (a whole contiguous tensor
// included) of float, double or bfloat16, PyTorch takes one 32-byte vector
// accumulator of squares (a bfloat16 vector adds its two float halves, low
// first), adds its lanes one after the other, then the remaining elements
// one by one, and takes the square root; rows are never split across
// threads. Its AVX2 build (which AVX-512 CPUs run too) fuses the remaining
// elements' multiply-add, except for float the first multiple of four of
// them, which the compiler vectorises without fusing; the default build
// fuses nothing.
template <typename T>
opmath_t<T> two_norm_row(const T* x, int64_t n) {
  using A = opmath_t<T>;
  constexpr int64_t W = 32 / static_cast<int64_t>(sizeof(A));  // accumulator lanes
  constexpr int64_t kStep = 32 / static_cast<int64_t>(sizeof(T));  // elements per vector
  A acc[W] = {};
  int64_t d = 0;
  for (; d + kStep <= n; d += kStep) {
    for (int64_t k = 0; k < W; ++k) {
      const A v = load(x[d + k]);
      acc[k] = acc[k] + v * v;
    }
    if constexpr (kStep == 2 * W) {
      for (int64_t k = 0; k < W; ++k) {
        const A v = load(x[d + W + k]);
        acc[k] = acc[k] + v * v;
      }
    }
  }
  A r = acc[0];
  for (int64_t k = 1; k < W; ++k) r = r + acc[k];
#if defined(__FMA__)
  if constexpr (std::is_same_v<A, float>) {
    for (const int64_t e = d + (n - d) / 4 * 4; d < e; ++d) {
      const A v = load(x[d]);
      r = r + v * v;
    }
  }
  for (; d < n; ++d) {
    const A v = load(x[d]);
    r = std::fma(v, v, r);
  }
#else
  for (; d < n; ++d) {
    const A v = load(x[d]);
    r = r + v * v;
  }
#endif
  return std::sqrt(r);
}

template <typename T>
void two_norm_rows(const ReducePlan& p) {
  const T* in = static_cast<const T*>(p.in);
  T* out = static_cast<T*>(p.out);
  const int no = static_cast<int>(p.out_sizes.size());
  const int64_t n = p.red_sizes[0];
  const int64_t grain = std::max<int64_t>(1, kReduceGrain / n);
  parallel_for(0, p.num_outputs, grain, [&](int64_t b, int64_t e) {
    DimWalker ow(p.out_sizes.data(), p.out_strides.data(), no, b);
    for (int64_t o = b; o < e; ++o, ow.next()) out[o] = static_cast<T>(two_norm_row(in + ow.offset, n));
  });
}

template <typename T>
void norm_typed(const ReducePlan& p, double ord) {
  using Acc = opmath_t<T>;
  T* out = static_cast<T*>(p.out);
  if (ord == 0) {
    run_serial_reduction(p, NormFoldOp<T, NormKind::Zero>{out, Acc(0)});
  } else if (ord == 1) {
    run_serial_reduction(p, NormFoldOp<T, NormKind::One>{out, Acc(1)});
  } else if (ord == 2) {
    if constexpr (!std::is_same_v<T, Half>) {
      if (p.red_sizes.size() == 1 && p.red_strides[0] == 1 && p.reduce_numel > 0) return two_norm_rows<T>(p);
    }
    run_serial_reduction(p, NormFoldOp<T, NormKind::Two>{out, Acc(2)});
  } else if (std::isinf(ord) && ord > 0) {
    run_reduction(p, AbsExtremeOp<T, true>{out});
  } else if (std::isinf(ord)) {
    run_reduction(p, AbsExtremeOp<T, false>{out});
  } else {
    run_serial_reduction(p, NormFoldOp<T, NormKind::P>{out, static_cast<Acc>(ord)});
  }
}

// Complex rows are folded one element at a time for every finite ord (no
// vector path), as PyTorch's NormOps over c10::complex; the infinite ords
// take the real path over abs(z).
template <typename R>
void norm_complex(const ReducePlan& p, double ord) {
  using C = std::complex<R>;
  R* out = static_cast<R*>(p.out);
  if (ord == 0) return run_serial_reduction(p, NormFoldOp<C, NormKind::Zero>{out, R(0)});
  if (ord == 1) return run_serial_reduction(p, NormFoldOp<C, NormKind::One>{out, R(1)});
  if (ord == 2) return run_serial_reduction(p, NormFoldOp<C, NormKind::Two>{out, R(2)});
  EMBER_INTERNAL_ASSERT(!std::isinf(ord), "norm: the infinite ords of complex numbers take their magnitudes");
  run_serial_reduction(p, NormFoldOp<C, NormKind::P>{out, static_cast<R>(ord)});
}

void norm_kernel(const ReducePlan& p, double ord) {
  switch (p.in_dtype) {
    case ScalarType::ComplexFloat: return norm_complex<float>(p, ord);
    case ScalarType::ComplexDouble: return norm_complex<double>(p, ord);
    case ScalarType::Float: return norm_typed<float>(p, ord);
    case ScalarType::Double: return norm_typed<double>(p, ord);
    case ScalarType::Half: return norm_typed<Half>(p, ord);
    case ScalarType::BFloat16: return norm_typed<BFloat16>(p, ord);
    default: throw Error(str_cat("\"norm\" not implemented for '", scalar_type_name(p.in_dtype), "'"));
  }
}

// Note [Complex sums]
// PyTorch sums a complex row as it sums a real one (Note [Sum order]) with
// complex elements: a vector holds 32 bytes of (re, im) pairs, so the vector
// accumulators are those of the row's parts read as one real row; the
// scalar tail is added to 0 one complex number after another, then the
// vector's complex lanes one by one, each part to its own. A row shorter
// than one vector is summed as four interleaved rows of complex numbers.
template <typename R>
void complex_row_sum_typed(const ReducePlan& p) {
  using C = std::complex<R>;
  using V = typename sum_order::Vec<R>::type;
  constexpr int64_t kLanes = sum_order::kVecBytes / static_cast<int64_t>(sizeof(R));
  constexpr int64_t kPerVec = kLanes / 2;
  const int64_t n = p.red_sizes[0];
  const int kept = static_cast<int>(p.out_sizes.size());
  const C* in = static_cast<const C*>(p.in);
  C* out = static_cast<C*>(p.out);
  const auto row_sum_of = [&](const C* x) {
    C acc(0, 0);
    if (n < kPerVec) {
      acc = sum_order::row_sum<C>(n, [&](int64_t i) { return x[i]; });
    } else {
      const int64_t vecs = n / kPerVec;
      const V lanes = sum_order::row_sum<V>(vecs, [&](int64_t i) {
        V v;
        std::memcpy(&v, x + i * kPerVec, sizeof v);
        return v;
      });
      for (int64_t k = vecs * kPerVec; k < n; ++k) acc += x[k];
      for (int64_t k = 0; k < kPerVec; ++k) acc += C(lanes[2 * k], lanes[2 * k + 1]);
    }
    return C(0, 0) + acc;
  };
  parallel_for(0, p.num_outputs, std::max<int64_t>(1, sum_order::kGrain / std::max<int64_t>(n, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t o = begin; o < end; ++o) {
                   int64_t rest = o, offset = 0;
                   for (int d = kept - 1; d >= 0; --d) {
                     offset += (rest % p.out_sizes[d]) * p.out_strides[d];
                     rest /= p.out_sizes[d];
                   }
                   out[o] = row_sum_of(in + offset);
                 }
               });
}

void complex_row_sum_kernel(const ReducePlan& p) {
  if (p.in_dtype == ScalarType::ComplexFloat) return complex_row_sum_typed<float>(p);
  EMBER_INTERNAL_ASSERT(p.in_dtype == ScalarType::ComplexDouble, "complex_row_sum: complex input expected");
  complex_row_sum_typed<double>(p);
}

}  // namespace

EMBER_REGISTER_DISPATCH(reduce_stub, &reduce_kernel);
EMBER_REGISTER_DISPATCH(complex_row_sum_stub, &complex_row_sum_kernel);
EMBER_REGISTER_DISPATCH(norm_stub, &norm_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
