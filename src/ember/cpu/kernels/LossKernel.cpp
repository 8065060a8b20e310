// Fused loss kernels (see cpu/LossStubs.h), compiled once per CPU capability.
// No AVX-512 build, like ReduceKernel, whose summation order they repeat.
#include <vector>

#include "ember/cpu/LossStubs.h"
#include "ember/cpu/kernels/ReduceEngine.h"
#include "ember/cpu/kernels/ReduceVec.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// vec_sum_block and vec_cascade_sum over d = a - b mapped to d * d: the same
// blocks, accumulators and order, so the sum equals the one of the squares
// stored first (this file is compiled without FMA contraction).
template <typename S>
S sq_diff_block(const S* a, const S* b, int64_t n) {
  using V = typename VecOf<S>::type;
  constexpr int64_t W = sizeof(V) / sizeof(S);
  auto sq = [](auto d) { return d * d; };
  V a0{}, a1{}, a2{}, a3{};
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    __builtin_prefetch(a + i + 512);
    __builtin_prefetch(b + i + 512);
    a0 += sq(vec_load<V>(a + i) - vec_load<V>(b + i));
    a1 += sq(vec_load<V>(a + i + W) - vec_load<V>(b + i + W));
    a2 += sq(vec_load<V>(a + i + 2 * W) - vec_load<V>(b + i + 2 * W));
    a3 += sq(vec_load<V>(a + i + 3 * W) - vec_load<V>(b + i + 3 * W));
  }
  for (; i + W <= n; i += W) a0 += sq(vec_load<V>(a + i) - vec_load<V>(b + i));
  S tail = S(0);
  for (; i < n; ++i) tail += sq(a[i] - b[i]);
  return lane_sum<S>((a0 + a1) + (a2 + a3)) + tail;
}

template <typename S>
S sq_diff_cascade(const S* a, const S* b, int64_t n) {
  if (n <= kSumBlock) return sq_diff_block(a, b, n);
  const int64_t half = (n / 2 + kSumBlock - 1) / kSumBlock * kSumBlock;
  return sq_diff_cascade(a, b, half) + sq_diff_cascade(a + half, b + half, n - half);
}

// The split of run_reduction for one output over a contiguous line.
template <typename S>
S sq_diff_sum(const S* a, const S* b, int64_t n) {
  const int nthreads = get_num_threads();
  if (!(nthreads > 1 && n >= 2 * kReduceGrain && !in_parallel_region())) return sq_diff_cascade(a, b, n);
  const int64_t chunks = std::min<int64_t>(nthreads, n / kReduceGrain);
  const int64_t chunk = (n + chunks - 1) / chunks;
  std::vector<S> partial(static_cast<size_t>(chunks), S(0));
  parallel_for(0, chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      const int64_t s = c * chunk, m = std::min(n, s + chunk) - s;
      if (m > 0) partial[c] = S(0) + sq_diff_cascade(a + s, b + s, m);
    }
  });
  S acc = S(0);
  for (const S& p : partial) acc = acc + p;
  return acc;
}

double squared_diff_sum_kernel(const void* a, const void* b, int64_t n, ScalarType t) {
  if (t == ScalarType::Float) {
    return sq_diff_sum(static_cast<const float*>(a), static_cast<const float*>(b), n);
  }
  EMBER_INTERNAL_ASSERT(t == ScalarType::Double, "squared_diff_sum on ", scalar_type_name(t));
  return sq_diff_sum(static_cast<const double*>(a), static_cast<const double*>(b), n);
}

}  // namespace

EMBER_REGISTER_DISPATCH(squared_diff_sum_stub, &squared_diff_sum_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
