// Fused loss kernels (see cpu/LossStubs.h), compiled once per CPU capability.
// No AVX-512 build, like ReduceKernel, whose summation order they share.
#include "ember/cpu/LossStubs.h"
#include "ember/cpu/kernels/ReduceEngine.h"
#include "ember/cpu/kernels/SumOrder.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// sum((a - b)^2) with the squares stored first, then added in the order of
// sum (Note [Sum order]), so it equals the unfused loss bit for bit (this
// file is compiled without FMA contraction).
template <typename S>
S sq_diff_sum(const S* a, const S* b, int64_t n) {
  std::vector<S> sq(static_cast<size_t>(n));
  parallel_for(0, n, kReduceGrain, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      const S d = a[i] - b[i];
      sq[i] = d * d;
    }
  });
  ReducePlan p;
  p.red_sizes.push_back(n);
  p.red_strides.push_back(1);
  p.reduce_numel = n;
  p.in = sq.data();
  S out = S(0);
  sum_order::sum_in_torch_order<S, S, false, false>(p, &out);
  return out;
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
