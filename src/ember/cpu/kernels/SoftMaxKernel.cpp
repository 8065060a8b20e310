// Softmax and log-softmax (forward and backward), compiled once per CPU
// capability. Inputs are contiguous [outer, n, inner] views; the softmax dim
// is the middle one. Rows are shifted by their max before exp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ember/cpu/kernels/ReduceEngine.h"
#include "ember/cpu/kernels/SleefLoops.h"
#include "ember/cpu/kernels/SoftMaxStrided.h"
#include "ember/cpu/kernels/VecMath.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// Note [Vectorisable exp]
// exp(x) = 2^k * exp(r), k = round(x / ln 2), r = x - k ln 2 (split into two
// constants for exactness), exp(r) from a degree-6 minimax polynomial
// (Cephes' expf coefficients), 2^k built in the exponent bits. Written without
// calls or branches so the compiler vectorises loops over it; accurate to
// about 1 ulp on [-87.3, 88.7], 0 below, +inf above, NaN stays NaN.
inline float exp_approx(float x) {
  const float xc = x > 88.3762626647949f ? 88.3762626647949f : (x < -87.3365447505531f ? -87.3365447505531f : x);
  const float t = xc * 1.44269504088896341f;
  const float kf = (t + 12582912.0f) - 12582912.0f;  // round to nearest
  float r = xc - kf * 0.693359375f;
  r = r - kf * -2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.0f;
  const int32_t k = static_cast<int32_t>(kf);
  const uint32_t bits = static_cast<uint32_t>(k + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  float res = y * scale;
  res = x < -87.3365447505531f ? 0.0f : res;
  res = x > 88.7228391116729f ? std::numeric_limits<float>::infinity() : res;
  return x != x ? x : res;
}

template <typename C>
inline C fexp(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return exp_approx(x);
  } else {
    return std::exp(x);
  }
}

// One row. The loops carry `omp simd` reductions so that the max and the sum
// vectorise (they may reassociate; a NaN still reaches the result through exp).
template <typename T, typename U>
void softmax_lastdim(const T* x, U* y, int64_t n, bool log, float* buf) {
  using C = opmath_t<T>;
  C m = -std::numeric_limits<C>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) {
    const C v = load(x[i]);
    m = v > m ? v : m;
  }
  C s = 0;
  if (log) {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += fexp(C(load(x[i]) - m));
    // y = (x - max) - log(sum), as PyTorch orders it; a 16-bit output rounds
    // the sum and its log to the element type first.
    if constexpr (std::is_same_v<U, T> && !std::is_same_v<T, C>) {
      const C log_sum = C(T(std::log(C(T(s)))));
      for (int64_t i = 0; i < n; ++i) y[i] = T((load(x[i]) - m) - log_sum);
    } else {
      const C log_sum = std::log(s);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<U>((load(x[i]) - m) - log_sum);
    }
    return;
  }
  if constexpr (std::is_same_v<U, C>) {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) {
      const C e = fexp(C(load(x[i]) - m));
      y[i] = e;
      s += e;
    }
    const C inv = C(1) / s;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  } else {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) {
      const float e = fexp(C(load(x[i]) - m));
      buf[i] = e;
      s += e;
    }
    const C inv = C(1) / s;
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<U>(buf[i] * inv);
  }
}

#if EMBER_SLEEF_LOOPS
// Note [Softmax with SLEEF]
// PyTorch's last-dim softmax of float32/float64 rows, step by step: the row's
// maximum and sums in its vector order (sleefvec::reduce_all), exp(x - max)
// from SLEEF (zero-padded last vector), then y = e * (1 / sum); log_softmax
// sums exp(x - max) without storing it, takes SLEEF's log of the sum and
// writes (x - max) - log(sum). The gradients: g - exp(y) * sum(g) (one
// multiply-add, as PyTorch's build fuses it) and (g - sum(g y)) y (no fused
// step), exp again SLEEF's. With the same library every element is PyTorch's.
template <typename T>
void softmax_row_sleef(const T* x, T* y, int64_t n, bool log) {
  using W = sleefvec::Vec<T>;
  using V = typename W::V;
  const auto exp = W::unary(sleef::Exp);
  const auto max_op = [](V a, V b) { return W::maximum(a, b); };
  const auto add_op = [](V a, V b) { return W::add(a, b); };
  const T m = sleefvec::reduce_all(x, n, max_op);
  const V vm = W::set1(m);
  if (log) {
    const T s = sleefvec::map_reduce_all(x, n, [&](V v) { return exp(W::sub(v, vm)); }, add_op);
    T log_sum;
    W::store(&log_sum, W::unary(sleef::Log)(W::load(&s, 1)), 1);
    const V vl = W::set1(log_sum);
    sleefvec::map(x, y, n, [&](V v) { return W::sub(W::sub(v, vm), vl); });
    return;
  }
  sleefvec::map(x, y, n, [&](V v) { return exp(W::sub(v, vm)); });
  const T inv = T(1) / sleefvec::reduce_all(static_cast<const T*>(y), n, add_op);
  const V vi = W::set1(inv);
  sleefvec::map(static_cast<const T*>(y), y, n, [&](V v) { return W::mul(v, vi); });
}

// The sum of x * y over n elements in reduce_all's order, each product
// rounded before it is added; except that PyTorch's serial float32 path (one
// thread, or inside a parallel region) fuses the last partial vector's
// product into its sum: its build contracts that copy of the loop and not the
// one its threads run (measured).
template <typename T>
T dot_reduce_all(const T* x, const T* y, int64_t n, bool serial) {
  using W = sleefvec::Vec<T>;
  using V = typename W::V;
  const auto add = [](V a, V b) { return W::add(a, b); };
  if (!std::is_same_v<T, float> || !serial || n < W::size) {
    return sleefvec::map2_reduce_all(x, y, n, [](V a, V b) { return W::mul(a, b); }, add);
  }
  V acc = W::mul(W::load(x), W::load(y));
  int64_t d = W::size;
  for (; d < n - n % W::size; d += W::size) acc = W::add(acc, W::mul(W::load(x + d), W::load(y + d)));
  if (n - d > 0) acc = W::first_lanes(acc, W::fmadd(W::load(x + d, n - d), W::load(y + d, n - d), acc), n - d);
  return W::reduce(acc, add);
}

template <typename T>
void softmax_backward_row_sleef(const T* g, const T* y, T* r, int64_t n, bool log, bool serial) {
  using W = sleefvec::Vec<T>;
  using V = typename W::V;
  if (log) {
    const auto exp = W::unary(sleef::Exp);
    const V vs = W::set1(sleefvec::reduce_all(g, n, [](V a, V b) { return W::add(a, b); }));
    sleefvec::map2(g, y, r, n, [&](V gv, V yv) { return W::fnmadd(exp(yv), vs, gv); });
  } else {
    const V vs = W::set1(dot_reduce_all(g, y, n, serial));
    sleefvec::map2(g, y, r, n, [&](V gv, V yv) { return W::mul(W::sub(gv, vs), yv); });
  }
}
#endif

#if EMBER_SLEEF_LOOPS
// Note [16-bit softmax reductions]
// PyTorch reduces a float16/bfloat16 row in float over 16-bit vectors: two
// float vectors each, one accumulator per half, a last partial vector merged
// lane-wise, the halves combined, then folded (vec::map_reduce_all's reduced
// form). term(d, count) is the mapped float vector of lanes [d, d + count).
template <typename Term, typename Op>
float reduce_16bit_row(int64_t n, const Term& term, const Op& op) {
  using W = sleefvec::Vec<float>;
  using V = W::V;
  constexpr int64_t L = W::size;
  if (n < 2 * L) {
    V a0 = term(0, std::min(n, L));
    if (n <= L) return sleefvec::reduce_partial<float>(a0, n, op);
    a0 = W::first_lanes(a0, op(a0, term(L, n - L)), n - L);
    return sleefvec::reduce_partial<float>(a0, L, op);
  }
  V a0 = term(0, L), a1 = term(L, L);
  int64_t d = 2 * L;
  for (; d < n - n % (2 * L); d += 2 * L) {
    a0 = op(a0, term(d, L));
    a1 = op(a1, term(d + L, L));
  }
  const int64_t rest = n - d;
  if (rest > L) {
    a0 = op(a0, term(d, L));
    a1 = W::first_lanes(a1, op(a1, term(d + L, rest - L)), rest - L);
  } else if (rest > 0) {
    a0 = W::first_lanes(a0, op(a0, term(d, rest)), rest);
  }
  return W::reduce(op(a0, a1), op);
}

// Lanes [d, d + count) of a 16-bit row as floats, zero-padded.
template <typename T>
inline sleefvec::Vec<float>::V load_lanes(const T* p, int64_t d, int64_t count) {
  constexpr int64_t L = sleefvec::Vec<float>::size;
  if (count >= L) return strided_softmax::load_16bit(p + d);
  T part[L] = {};
  std::memcpy(part, p + d, static_cast<size_t>(count) * sizeof(T));
  return strided_softmax::load_16bit(part);
}

// out[i] = f(lanes of the inputs) rounded to T, over n elements.
template <typename T, typename F>
inline void map_16bit_row(T* out, int64_t n, const F& f) {
  constexpr int64_t L = sleefvec::Vec<float>::size;
  int64_t d = 0;
  for (; d + L <= n; d += L) strided_softmax::store_16bit(out + d, f(d, L));
  if (d < n) {
    T part[L];
    strided_softmax::store_16bit(part, f(d, n - d));
    std::memcpy(out + d, part, static_cast<size_t>(n - d) * sizeof(T));
  }
}

// 16-bit log_softmax of one row as PyTorch's: the sum of exp(x - max) and its
// log rounded to the element type, then (x - max) - log_sum in float.
template <typename T>
void log_softmax_row_16bit(const T* x, T* y, int64_t n) {
  using W = sleefvec::Vec<float>;
  using V = W::V;
  const float m = reduce_16bit_row(
      n, [&](int64_t d, int64_t c) { return load_lanes(x, d, c); }, [](V a, V b) { return W::maximum(a, b); });
  const V vm = W::set1(m);
  const auto exp = W::unary(sleef::Exp);
  const float s = reduce_16bit_row(
      n, [&](int64_t d, int64_t c) { return exp(W::sub(load_lanes(x, d, c), vm)); },
      [](V a, V b) { return W::add(a, b); });
  float log_sum = static_cast<float>(T(s));
  W::store(&log_sum, W::unary(sleef::Log)(W::load(&log_sum, 1)), 1);
  const V vl = W::set1(static_cast<float>(T(log_sum)));
  map_16bit_row(y, n, [&](int64_t d, int64_t c) { return W::sub(W::sub(load_lanes(x, d, c), vm), vl); });
}

// The 16-bit backward of one row (grad_input = g - exp(y) * sum(g), or
// y * (g - sum(g * y))), reduced as above, each element rounded once.
template <typename T>
void softmax_backward_row_16bit(const T* g, const T* y, T* r, int64_t n, bool log) {
  using W = sleefvec::Vec<float>;
  using V = W::V;
  const float s = reduce_16bit_row(
      n,
      [&](int64_t d, int64_t c) {
        const V gv = load_lanes(g, d, c);
        return log ? gv : W::mul(gv, load_lanes(y, d, c));
      },
      [](V a, V b) { return W::add(a, b); });
  const V vs = W::set1(s);
  if (log) {
    const auto exp = W::unary(sleef::Exp);
    map_16bit_row(r, n,
                  [&](int64_t d, int64_t c) { return W::fnmadd(exp(load_lanes(y, d, c)), vs, load_lanes(g, d, c)); });
  } else {
    map_16bit_row(r, n,
                  [&](int64_t d, int64_t c) { return W::mul(W::sub(load_lanes(g, d, c), vs), load_lanes(y, d, c)); });
  }
}
#endif

// Note [16-bit softmax]
// PyTorch's last-dim softmax of float16/bfloat16 rows works in float: the
// maximum over whole 16-bit vectors (two float vectors each, NaN-propagating
// lanes, reduced in its vector order), then the rest one by one (std::max,
// which skips a NaN); exp(x - max) on whole float vectors from its vector exp
// (SLEEF's; libm's lane by lane in the DEFAULT build), the rest from libm,
// added to the reduced vector sum one by one; every element times 1 / sum,
// rounded once to the 16-bit type. The DEFAULT build's float vectors hold
// 8 lanes and reduce lane by lane from the first.
template <typename T>
void softmax_row_16bit(const T* x, T* y, int64_t n, float* buf) {
#if EMBER_SLEEF_LOOPS
  using W = sleefvec::Vec<float>;
  using V = W::V;
  constexpr int64_t L = W::size;
  const auto exp = W::unary(sleef::Exp);
  const auto vmax = [](V a, V b) { return W::maximum(a, b); };
  const auto vadd = [](V a, V b) { return W::add(a, b); };
  V acc = W::set1(-std::numeric_limits<float>::infinity());
#else
  constexpr int64_t L = 8;
  struct V {
    float v[L];
  };
  const auto lanes = [](const auto& f) {
    V r;
    for (int64_t k = 0; k < L; ++k) r.v[k] = f(k);
    return r;
  };
  const auto vmax = [&](V a, V b) {
    return lanes([&](int64_t k) { return a.v[k] != a.v[k] ? a.v[k] : (a.v[k] > b.v[k] ? a.v[k] : b.v[k]); });
  };
  const auto vadd = [&](V a, V b) { return lanes([&](int64_t k) { return a.v[k] + b.v[k]; }); };
  V acc = lanes([](int64_t) { return -std::numeric_limits<float>::infinity(); });
#endif
  const auto load_lanes = [&](const float* p) {
#if EMBER_SLEEF_LOOPS
    return W::load(p);
#else
    return lanes([&](int64_t k) { return p[k]; });
#endif
  };
  const auto reduce = [&](V v, const auto& op) {
#if EMBER_SLEEF_LOOPS
    return W::reduce(v, op);
#else
    for (int64_t k = 1; k < L; ++k) {
      V next = lanes([](int64_t) { return 0.0f; });
      next.v[0] = v.v[k];
      v = op(v, next);
    }
    return v.v[0];
#endif
  };
  cvt_to_float(x, buf, n);
  int64_t i = 0;
  for (; i < n - n % (2 * L); i += 2 * L) acc = vmax(vmax(acc, load_lanes(buf + i)), load_lanes(buf + i + L));
  float m = reduce(acc, vmax);
  for (; i < n; ++i) m = std::max(m, buf[i]);
#if EMBER_SLEEF_LOOPS
  const V shift = W::set1(m);
  V sum = W::set1(0.0f);
#else
  V sum = lanes([](int64_t) { return 0.0f; });
#endif
  i = 0;
  for (; i < n - n % L; i += L) {
#if EMBER_SLEEF_LOOPS
    const V e = exp(W::sub(W::load(buf + i), shift));
    W::store(buf + i, e);
#else
    const V e = lanes([&](int64_t k) { return std::exp(buf[i + k] - m); });
    std::memcpy(buf + i, e.v, sizeof e.v);
#endif
    sum = vadd(sum, e);
  }
  float s = reduce(sum, vadd);
  for (; i < n; ++i) {
    buf[i] = std::exp(buf[i] - m);
    s += buf[i];
  }
  s = 1 / s;
  for (i = 0; i < n; ++i) buf[i] *= s;
  cvt_from_float(static_cast<const float*>(buf), y, n);
}

// A float32 row on Ember's own vector exp (without SLEEF): whole vectors,
// then the remainder zero-padded through the same exp.
void softmax_row_own(const float* x, float* y, int64_t n, bool log) {
  using vecmath::Vf;
  constexpr int64_t L = vecmath::kLanesF;
  const auto padded = [](const float* p, int64_t count) {
    float b[L] = {};
    std::memcpy(b, p, count * sizeof(float));
    return vecmath::load(b);
  };
  const auto store_part = [](float* p, Vf v, int64_t count) {
    float b[L];
    vecmath::store(b, v);
    std::memcpy(p, b, count * sizeof(float));
  };
  const int64_t whole = n - n % L;
  float m = -std::numeric_limits<float>::infinity();
  Vf vm = vecmath::splat(m);
  for (int64_t i = 0; i < whole; i += L) {
    const Vf v = vecmath::load(x + i);
    vm = v > vm ? v : vm;
  }
  for (int i = 0; i < L; ++i) m = vm[i] > m ? vm[i] : m;
  for (int64_t i = whole; i < n; ++i) m = x[i] > m ? x[i] : m;
  const Vf shift = vecmath::splat(m);
  Vf acc = vecmath::splat(0.0f);
  for (int64_t i = 0; i < whole; i += L) {
    const Vf e = vecmath::exp(vecmath::load(x + i) - shift);
    if (!log) vecmath::store(y + i, e);
    acc += e;
  }
  float s = 0;
  for (int i = 0; i < L; ++i) s += acc[i];
  if (whole < n) {
    const Vf e = vecmath::exp(padded(x + whole, n - whole) - shift);
    float b[L];
    vecmath::store(b, e);
    for (int64_t i = 0; i < n - whole; ++i) s += b[i];
    if (!log) store_part(y + whole, e, n - whole);
  }
  if (log) {
    const Vf sub = vecmath::splat(std::log(s));
    for (int64_t i = 0; i < whole; i += L) vecmath::store(y + i, (vecmath::load(x + i) - shift) - sub);
    for (int64_t i = whole; i < n; ++i) y[i] = (x[i] - m) - sub[0];
    return;
  }
  const Vf inv = vecmath::splat(1.0f / s);
  for (int64_t i = 0; i < whole; i += L) vecmath::store(y + i, vecmath::load(y + i) * inv);
  for (int64_t i = whole; i < n; ++i) y[i] *= inv[0];
}

template <typename T, typename U>
void softmax_typed(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool log) {
  using C = opmath_t<T>;
  const T* x = static_cast<const T*>(in.data_ptr());
  U* y = static_cast<U*>(out.data_ptr());
#if EMBER_SLEEF_LOOPS
  if constexpr (std::is_same_v<T, U> && std::is_floating_point_v<T>) {
    if (inner == 1 && sleefvec::Vec<T>::loaded()) {
      const int64_t grain = std::max<int64_t>(1, 32768 / (16 * std::max<int64_t>(n, 1)));
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) softmax_row_sleef<T>(x + o * n, y + o * n, n, log);
      });
      return;
    }
  }
#endif
  if constexpr (std::is_same_v<T, float> && std::is_same_v<U, float>) {
    if (inner == 1) {
      const int64_t grain = std::max<int64_t>(1, 32768 / (16 * std::max<int64_t>(n, 1)));
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) softmax_row_own(x + o * n, y + o * n, n, log);
      });
      return;
    }
  }
  if constexpr (std::is_same_v<T, U> && !std::is_floating_point_v<T>) {
#if EMBER_SLEEF_LOOPS
    const bool vector_exp = sleefvec::Vec<float>::loaded();
#else
    const bool vector_exp = true;
#endif
    if (inner == 1 && !log && vector_exp) {
      const int64_t grain = std::max<int64_t>(1, 32768 / (16 * std::max<int64_t>(n, 1)));
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
        std::vector<float> buf(static_cast<size_t>(n));
        for (int64_t o = b; o < e; ++o) softmax_row_16bit<T>(x + o * n, y + o * n, n, buf.data());
      });
      return;
    }
#if EMBER_SLEEF_LOOPS
    if (inner == 1 && log && vector_exp && n > 0) {  // Note [16-bit softmax reductions]
      const int64_t grain = std::max<int64_t>(1, 32768 / (16 * std::max<int64_t>(n, 1)));
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) log_softmax_row_16bit<T>(x + o * n, y + o * n, n);
      });
      return;
    }
#endif
  }
  if (inner == 1) {
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      std::vector<float> buf(std::is_same_v<U, C> ? 0 : static_cast<size_t>(n));
      for (int64_t o = b; o < e; ++o) softmax_lastdim<T, U>(x + o * n, y + o * n, n, log, buf.data());
    });
    return;
  }
#if EMBER_SLEEF_LOOPS
  if constexpr (std::is_same_v<T, U>) {
    if (n > 0 && sleefvec::Vec<float>::loaded()) {  // Note [Softmax along a strided dim]
      if (log) {
        strided_softmax::log_softmax<T>(x, y, outer, n, inner);
      } else {
        strided_softmax::softmax<T>(x, y, outer, n, inner);
      }
      return;
    }
  }
#endif
  // Softmax over a strided dim: vectorise across blocks of the inner dim.
  const int64_t nblocks = (inner + kColBlock - 1) / kColBlock;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n * std::min(inner, kColBlock), 1));
  parallel_for(0, outer * nblocks, grain, [&](int64_t b, int64_t e) {
    C m[kColBlock], s[kColBlock];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nblocks, c0 = (t % nblocks) * kColBlock;
      const int64_t nc = std::min(kColBlock, inner - c0);
      const T* xs = x + o * n * inner + c0;
      U* ys = y + o * n * inner + c0;
      for (int64_t c = 0; c < nc; ++c) {
        m[c] = -std::numeric_limits<C>::infinity();
        s[c] = C(0);
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t c = 0; c < nc; ++c) {
          const C v = load(xs[i * inner + c]);
          m[c] = v > m[c] ? v : m[c];
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t c = 0; c < nc; ++c) s[c] += fexp(C(load(xs[i * inner + c]) - m[c]));
      }
      if (log) {
        for (int64_t c = 0; c < nc; ++c) m[c] += std::log(s[c]);
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t c = 0; c < nc; ++c) ys[i * inner + c] = static_cast<U>(load(xs[i * inner + c]) - m[c]);
        }
      } else {
        for (int64_t c = 0; c < nc; ++c) s[c] = C(1) / s[c];
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t c = 0; c < nc; ++c) {
            ys[i * inner + c] = static_cast<U>(fexp(C(load(xs[i * inner + c]) - m[c])) * s[c]);
          }
        }
      }
    }
  });
}

void softmax_kernel(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool log) {
  const ScalarType it = in.dtype(), ot = out.dtype();
  if (it == ScalarType::Float) return softmax_typed<float, float>(in, out, outer, n, inner, log);
  if (it == ScalarType::Double) return softmax_typed<double, double>(in, out, outer, n, inner, log);
  if (it == ScalarType::Half && ot == ScalarType::Half) return softmax_typed<Half, Half>(in, out, outer, n, inner, log);
  if (it == ScalarType::Half) return softmax_typed<Half, float>(in, out, outer, n, inner, log);
  if (it == ScalarType::BFloat16 && ot == ScalarType::BFloat16) {
    return softmax_typed<BFloat16, BFloat16>(in, out, outer, n, inner, log);
  }
  if (it == ScalarType::BFloat16) return softmax_typed<BFloat16, float>(in, out, outer, n, inner, log);
  // PyTorch's kernels of the last dim and of the others name themselves.
  throw NotImplementedError(str_cat("\"", log ? "log_softmax" : "softmax", inner == 1 ? "_lastdim" : "",
                                    "_kernel_impl\" not implemented for '", dtype_message_name(it), "'"));
}

// grad_input = y * (g - sum(g * y))         (softmax)
// grad_input = g - exp(y) * sum(g)          (log_softmax)
// One contiguous row.
template <typename T>
void softmax_backward_lastdim(const T* g, const T* y, T* r, int64_t n, bool log) {
  using C = opmath_t<T>;
  C s = 0;
  if (log) {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += C(load(g[i]));
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) r[i] = static_cast<T>(C(load(g[i])) - fexp(C(load(y[i]))) * s);
  } else {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += C(load(g[i])) * C(load(y[i]));
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) r[i] = static_cast<T>((C(load(g[i])) - s) * C(load(y[i])));
  }
}

template <typename T>
void softmax_backward_typed(const Tensor& grad, const Tensor& out, Tensor& gin, int64_t outer, int64_t n, int64_t inner,
                            bool log) {
  using C = opmath_t<T>;
  const T* g = static_cast<const T*>(grad.data_ptr());
  const T* y = static_cast<const T*>(out.data_ptr());
  T* r = static_cast<T*>(gin.data_ptr());
#if EMBER_SLEEF_LOOPS
  if constexpr (std::is_floating_point_v<T>) {
    if (inner == 1 && sleefvec::Vec<T>::loaded()) {
      const int64_t grain = std::max<int64_t>(1, 32768 / (16 * std::max<int64_t>(n, 1)));
      const bool serial = get_num_threads() == 1 || in_parallel_region();
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) softmax_backward_row_sleef<T>(g + o * n, y + o * n, r + o * n, n, log, serial);
      });
      return;
    }
  }
  if constexpr (is_16bit_float_v<T>) {
    if (inner == 1 && sleefvec::Vec<float>::loaded()) {  // Note [16-bit softmax reductions]
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
      parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) softmax_backward_row_16bit<T>(g + o * n, y + o * n, r + o * n, n, log);
      });
      return;
    }
  }
#endif
  if (inner == 1) {
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) softmax_backward_lastdim<T>(g + o * n, y + o * n, r + o * n, n, log);
    });
    return;
  }
#if EMBER_SLEEF_LOOPS
  if (n > 0 && sleefvec::Vec<float>::loaded()) {  // Note [Softmax along a strided dim]
    strided_softmax::softmax_backward<T>(g, y, r, outer, n, inner, log);
    return;
  }
#endif
  // Over a strided dim: vectorise across blocks of the inner dim.
  const int64_t nblocks = (inner + kColBlock - 1) / kColBlock;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n * std::min(inner, kColBlock), 1));
  parallel_for(0, outer * nblocks, grain, [&](int64_t b, int64_t e) {
    C s[kColBlock];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nblocks, c0 = (t % nblocks) * kColBlock;
      const int64_t nc = std::min(kColBlock, inner - c0);
      const int64_t base = o * n * inner + c0;
      for (int64_t c = 0; c < nc; ++c) s[c] = C(0);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = base + i * inner;
        for (int64_t c = 0; c < nc; ++c) s[c] += log ? C(load(g[row + c])) : C(load(g[row + c])) * C(load(y[row + c]));
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = base + i * inner;
        for (int64_t c = 0; c < nc; ++c) {
          const C gv = load(g[row + c]), yv = load(y[row + c]);
          r[row + c] = static_cast<T>(log ? gv - std::exp(yv) * s[c] : yv * (gv - s[c]));
        }
      }
    }
  });
}

void softmax_backward_kernel(const Tensor& grad, const Tensor& out, Tensor& gin, int64_t outer, int64_t n,
                             int64_t inner, bool log) {
  switch (out.dtype()) {
    case ScalarType::Float: return softmax_backward_typed<float>(grad, out, gin, outer, n, inner, log);
    case ScalarType::Double: return softmax_backward_typed<double>(grad, out, gin, outer, n, inner, log);
    case ScalarType::Half: return softmax_backward_typed<Half>(grad, out, gin, outer, n, inner, log);
    case ScalarType::BFloat16: return softmax_backward_typed<BFloat16>(grad, out, gin, outer, n, inner, log);
    default:
      throw NotImplementedError(str_cat("\"", log ? "log_softmax" : "softmax", "_backward\" not implemented for '",
                                        dtype_message_name(out.dtype()), "'"));
  }
}

}  // namespace

EMBER_REGISTER_DISPATCH(softmax_stub, &softmax_kernel);
EMBER_REGISTER_DISPATCH(softmax_backward_stub, &softmax_backward_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
