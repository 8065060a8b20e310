// Fused loss kernels (see cpu/LossStubs.h), compiled once per CPU capability.
// No AVX-512 build, like ReduceKernel, whose summation order they repeat.
#include "ember/cpu/LossStubs.h"
#include "ember/cpu/kernels/ReduceEngine.h"
#include "ember/cpu/kernels/ReduceVec.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// The cascade of sum((a - b)^2) with run_reduction's split: the same blocks,
// accumulators and order as the sum of the squares stored first (this file
// is compiled without FMA contraction).
template <typename S>
S sq_diff_sum(const S* a, const S* b, int64_t n) {
  const auto sq_diff = [](auto x, auto y) {
    const auto d = x - y;
    return d * d;
  };
  const auto cascade = [&](int64_t s, int64_t e) { return S(0) + vec_cascade_sum(a + s, e - s, sq_diff, b + s); };
  const int64_t pieces = reduction_split(n);
  if (pieces == 1) return cascade(0, n);
  return combine_pieces(n, pieces, S(0), cascade, [](S x, S y) { return x + y; });
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
