#pragma once
// Explicit-vector reductions of contiguous float and double runs.
//
// Note [Vector reduction leaves]
// The reduction templates (ReduceEngine.h) leave their inner loops to the
// compiler's vectoriser, which keeps one vector accumulator per lane group
// at best and gives up on loops that also track NaNs. For the common case,
// a contiguous float or double run, these leaves use four independent
// vector accumulators (enough loads in flight to reach memory bandwidth):
//   vec_cascade_sum: sum of map(x) (or map(x, y, ...) over several inputs)
//     in blocks of kSumBlock elements, blocks added pairwise (the error
//     grows with log n, as cascade_sum);
//   vec_extreme: max or min, NaN if any element is NaN (as PyTorch).
// map is applied both to vectors and to scalars (tails).

#include <cstring>
#include <limits>
#include <type_traits>

#include "ember/cpu/kernels/VecMath.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

template <typename S>
struct VecOf;
template <>
struct VecOf<float> {
  using type = vecmath::Vf;
};
template <>
struct VecOf<double> {
  using type = vecmath::Vd;
};

template <typename S>
constexpr bool has_vec_leaf_v = std::is_same_v<S, float> || std::is_same_v<S, double>;

template <typename V, typename S>
inline V vec_load(const S* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// |x| for scalars and vectors (clears the sign bit: |-0| is +0).
inline float abs_any(float x) { return std::abs(x); }
inline double abs_any(double x) { return std::abs(x); }
inline vecmath::Vf abs_any(vecmath::Vf x) { return vecmath::abs(x); }
inline vecmath::Vd abs_any(vecmath::Vd x) { return (vecmath::Vd)((vecmath::Vl)x & INT64_MAX); }

// Lanes of v folded with f in registers, one shuffle per halving of the
// lanes (W/2 apart, then W/4, ..., 1); lane 0 holds the result.
template <int kShift, typename V, typename F>
inline V lane_fold_from(V v, const F& f) {
  if constexpr (kShift == 0) {
    return v;
  } else {
    using S = std::remove_reference_t<decltype(v[0])>;
    using I = std::conditional_t<sizeof(S) == 4, vecmath::Vi, vecmath::Vl>;
    constexpr int W = sizeof(V) / sizeof(S);
    I mask;
    for (int j = 0; j < W; ++j) mask[j] = (j + kShift) & (W - 1);
    return lane_fold_from<kShift / 2>(f(v, __builtin_shuffle(v, mask)), f);
  }
}

template <typename V, typename F>
inline V lane_fold(V v, const F& f) {
  return lane_fold_from<static_cast<int>(sizeof(V) / sizeof(v[0])) / 2>(v, f);
}

// Whether any lane of a comparison mask is set.
template <typename M>
inline bool any_lane(M m) {
  uint64_t w[sizeof(M) / 8];
  std::memcpy(w, &m, sizeof m);
  uint64_t r = 0;
  for (uint64_t x : w) r |= x;
  return r != 0;
}

// acc[c] = f(acc[c], x[r*rs + c]) for r = 0..rows-1 in order, c < nc: four
// vectors of columns stay in registers across the rows. f takes vectors and
// scalars (the last columns).
template <typename S, typename F>
inline void vec_column_pass(const S* x, int64_t rows, int64_t rs, int64_t nc, S* acc, const F& f) {
  using V = typename VecOf<S>::type;
  constexpr int64_t W = sizeof(V) / sizeof(S);
  int64_t c = 0;
  for (; c + 4 * W <= nc; c += 4 * W) {
    V a0 = vec_load<V>(acc + c), a1 = vec_load<V>(acc + c + W);
    V a2 = vec_load<V>(acc + c + 2 * W), a3 = vec_load<V>(acc + c + 3 * W);
    for (int64_t r = 0; r < rows; ++r) {
      const S* row = x + r * rs + c;
      a0 = f(a0, vec_load<V>(row));
      a1 = f(a1, vec_load<V>(row + W));
      a2 = f(a2, vec_load<V>(row + 2 * W));
      a3 = f(a3, vec_load<V>(row + 3 * W));
    }
    std::memcpy(acc + c, &a0, sizeof a0);
    std::memcpy(acc + c + W, &a1, sizeof a1);
    std::memcpy(acc + c + 2 * W, &a2, sizeof a2);
    std::memcpy(acc + c + 3 * W, &a3, sizeof a3);
  }
  for (; c + W <= nc; c += W) {
    V a = vec_load<V>(acc + c);
    for (int64_t r = 0; r < rows; ++r) a = f(a, vec_load<V>(x + r * rs + c));
    std::memcpy(acc + c, &a, sizeof a);
  }
  for (; c < nc; ++c) {
    S a = acc[c];
    for (int64_t r = 0; r < rows; ++r) a = f(a, x[r * rs + c]);
    acc[c] = a;
  }
}

// Lanes of v added pairwise: lane j takes lane j + w for w = W/2, ..., 1.
template <typename S, typename V>
inline S lane_sum(V v) {
  return lane_fold(v, [](V a, V b) { return a + b; })[0];
}

constexpr int64_t kSumBlock = 4096;

// map takes one element (vector or scalar) of x and of each further input
// in rest, at the same index.
template <typename S, typename Map, typename... Rest>
inline S vec_sum_block(const S* x, int64_t n, const Map& map, const Rest*... rest) {
  using V = typename VecOf<S>::type;
  constexpr int64_t W = sizeof(V) / sizeof(S);
  const auto at = [&](int64_t i) { return map(vec_load<V>(x + i), vec_load<V>(rest + i)...); };
  V a0{}, a1{}, a2{}, a3{};
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    __builtin_prefetch(x + i + 512);
    (__builtin_prefetch(rest + i + 512), ...);
    a0 += at(i);
    a1 += at(i + W);
    a2 += at(i + 2 * W);
    a3 += at(i + 3 * W);
  }
  for (; i + W <= n; i += W) a0 += at(i);
  S tail = S(0);
  for (; i < n; ++i) tail += map(x[i], rest[i]...);
  return lane_sum<S>((a0 + a1) + (a2 + a3)) + tail;
}

template <typename S, typename Map, typename... Rest>
S vec_cascade_sum(const S* x, int64_t n, const Map& map, const Rest*... rest) {
  if (n <= kSumBlock) return vec_sum_block(x, n, map, rest...);
  const int64_t half = (n / 2 + kSumBlock - 1) / kSumBlock * kSumBlock;
  return vec_cascade_sum(x, half, map, rest...) + vec_cascade_sum(x + half, n - half, map, (rest + half)...);
}

// Max (kMax) or min of x[0..n), n > 0; NaN if any element is NaN.
// The extreme is a max/min instruction chain; NaNs are tracked on the side
// (off the chain) and, when there is one, the first is returned.
template <bool kMax, typename S>
S vec_extreme(const S* x, int64_t n) {
  using V = typename VecOf<S>::type;
  using M = decltype(V{} != V{});
  constexpr int64_t W = sizeof(V) / sizeof(S);
  const auto ext = [](auto m, auto v) { return (kMax ? v > m : v < m) ? v : m; };
  const S start = kMax ? -std::numeric_limits<S>::infinity() : std::numeric_limits<S>::infinity();
  S r = start;
  bool nan = false;
  int64_t i = 0;
  if (n >= W) {
    V m0 = V{} + start, m1 = m0, m2 = m0, m3 = m0;
    M q0{}, q1{};
    for (; i + 4 * W <= n; i += 4 * W) {
      const V v0 = vec_load<V>(x + i), v1 = vec_load<V>(x + i + W);
      const V v2 = vec_load<V>(x + i + 2 * W), v3 = vec_load<V>(x + i + 3 * W);
      m0 = ext(m0, v0);
      m1 = ext(m1, v1);
      m2 = ext(m2, v2);
      m3 = ext(m3, v3);
      q0 |= (v0 != v0) | (v1 != v1);
      q1 |= (v2 != v2) | (v3 != v3);
    }
    for (; i + W <= n; i += W) {
      const V v = vec_load<V>(x + i);
      m0 = ext(m0, v);
      q0 |= v != v;
    }
    r = lane_fold(ext(ext(m0, m1), ext(m2, m3)), ext)[0];
    nan = any_lane(q0 | q1);
  }
  for (; i < n; ++i) {
    r = ext(r, x[i]);
    nan |= x[i] != x[i];
  }
  if (nan) {
    for (int64_t j = 0; j < n; ++j) {
      if (x[j] != x[j]) return x[j];
    }
  }
  return r;
}

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
