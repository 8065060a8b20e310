#pragma once
// Explicit-vector reductions of contiguous float and double runs.
//
// Note [Vector reduction leaves]
// The reduction templates (ReduceEngine.h) leave their inner loops to the
// compiler's vectoriser, which keeps one vector accumulator per lane group
// at best and gives up on loops that also track NaNs. For the common case,
// a contiguous float or double run, these leaves use four independent
// vector accumulators (enough loads in flight to reach memory bandwidth):
//   vec_cascade_sum: sum of map(x) in blocks of kSumBlock elements, blocks
//     added pairwise (the error grows with log n, as cascade_sum);
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

// Lanes of v added pairwise.
template <typename S, typename V>
inline S lane_sum(V v) {
  constexpr int W = sizeof(V) / sizeof(S);
  S l[W];
  std::memcpy(l, &v, sizeof v);
  for (int w = W / 2; w > 0; w /= 2) {
    for (int j = 0; j < w; ++j) l[j] += l[j + w];
  }
  return l[0];
}

constexpr int64_t kSumBlock = 4096;

template <typename S, typename Map>
inline S vec_sum_block(const S* x, int64_t n, const Map& map) {
  using V = typename VecOf<S>::type;
  constexpr int64_t W = sizeof(V) / sizeof(S);
  V a0{}, a1{}, a2{}, a3{};
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    __builtin_prefetch(x + i + 512);
    a0 += map(vec_load<V>(x + i));
    a1 += map(vec_load<V>(x + i + W));
    a2 += map(vec_load<V>(x + i + 2 * W));
    a3 += map(vec_load<V>(x + i + 3 * W));
  }
  for (; i + W <= n; i += W) a0 += map(vec_load<V>(x + i));
  S tail = S(0);
  for (; i < n; ++i) tail += map(x[i]);
  return lane_sum<S>((a0 + a1) + (a2 + a3)) + tail;
}

template <typename S, typename Map>
S vec_cascade_sum(const S* x, int64_t n, const Map& map) {
  if (n <= kSumBlock) return vec_sum_block(x, n, map);
  const int64_t half = (n / 2 + kSumBlock - 1) / kSumBlock * kSumBlock;
  return vec_cascade_sum(x, half, map) + vec_cascade_sum(x + half, n - half, map);
}

// Max (kMax) or min of x[0..n), n > 0; NaN if any element is NaN.
template <bool kMax, typename S>
S vec_extreme(const S* x, int64_t n) {
  using V = typename VecOf<S>::type;
  constexpr int64_t W = sizeof(V) / sizeof(S);
  // A lane takes v when v is beyond it or v is NaN; a NaN lane then stays NaN.
  auto pick = [](auto m, auto v) {
    if constexpr (std::is_floating_point_v<decltype(v)>) {
      return (kMax ? v > m : v < m) || v != v ? v : m;
    } else {
      return (kMax ? v > m : v < m) | (v != v) ? v : m;
    }
  };
  const S start = kMax ? -std::numeric_limits<S>::infinity() : std::numeric_limits<S>::infinity();
  S r = start;
  int64_t i = 0;
  if (n >= 4 * W) {
    V m0 = V{} + start, m1 = m0, m2 = m0, m3 = m0;
    for (; i + 4 * W <= n; i += 4 * W) {
      m0 = pick(m0, vec_load<V>(x + i));
      m1 = pick(m1, vec_load<V>(x + i + W));
      m2 = pick(m2, vec_load<V>(x + i + 2 * W));
      m3 = pick(m3, vec_load<V>(x + i + 3 * W));
    }
    V m = pick(pick(m0, m1), pick(m2, m3));
    S l[W];
    std::memcpy(l, &m, sizeof m);
    for (int64_t j = 0; j < W; ++j) r = pick(r, l[j]);
  }
  for (; i < n; ++i) r = pick(r, x[i]);
  return r;
}

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
