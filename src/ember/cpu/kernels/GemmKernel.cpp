// Matrix products for the dtypes BLAS does not cover (integers, bool, 16-bit
// floats), compiled once per CPU capability. Row-of-C loops: for each row of
// A, rows of B are scaled and added into a row accumulator, which keeps the
// innermost loop contiguous when B and C are row-major.
#include <vector>

#include "ember/cpu/kernels/ReduceEngine.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

template <typename T>
using gemm_acc_t = std::conditional_t<std::is_integral_v<T>, uint64_t, opmath_t<T>>;

template <typename T>
void gemm_typed(const GemmArgs& g) {
  using Acc = gemm_acc_t<T>;
  const T* A = static_cast<const T*>(g.a);
  const T* B = static_cast<const T*>(g.b);
  T* Cm = static_cast<T*>(g.c);
  auto to = [](const T& v) { return to_acc<Acc>(v); };
  auto from = [](Acc a) { return from_acc<T>(a); };
  Acc alpha, beta;
  if constexpr (std::is_integral_v<T>) {
    alpha = static_cast<Acc>(g.alpha.to_long());
    beta = static_cast<Acc>(g.beta.to_long());
  } else {
    alpha = static_cast<Acc>(g.alpha.to_double());
    beta = static_cast<Acc>(g.beta.to_double());
  }
  const bool beta_zero = g.beta.to_double() == 0 && !g.beta.is_bool();
  const bool beta_false = g.beta.is_bool() && !g.beta.to_bool();
  const int64_t rows = g.batch * g.m;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(g.n * std::max<int64_t>(g.k, 1), 1));
  parallel_for(0, rows, grain, [&](int64_t b0, int64_t e0) {
    std::vector<Acc> acc(static_cast<size_t>(g.n));
    for (int64_t t = b0; t < e0; ++t) {
      const int64_t bi = t / g.m, i = t % g.m;
      const T* a = A + bi * g.a_bs + i * g.a_rs;
      const T* bb = B + bi * g.b_bs;
      T* c = Cm + bi * g.c_bs + i * g.c_rs;
      for (int64_t j = 0; j < g.n; ++j) acc[j] = Acc(0);
      for (int64_t p = 0; p < g.k; ++p) {
        const Acc av = to(a[p * g.a_cs]);
        const T* brow = bb + p * g.b_rs;
        if (g.b_cs == 1) {
          for (int64_t j = 0; j < g.n; ++j) acc[j] += av * to(brow[j]);
        } else {
          for (int64_t j = 0; j < g.n; ++j) acc[j] += av * to(brow[j * g.b_cs]);
        }
      }
      for (int64_t j = 0; j < g.n; ++j) {
        T& cv = c[j * g.c_cs];
        Acc r;
        if constexpr (std::is_same_v<T, bool>) {
          // bool: alpha/beta act as logical and/or.
          r = (alpha != 0 && acc[j] != 0) || (!beta_zero && !beta_false && beta != 0 && cv) ? 1 : 0;
        } else {
          r = alpha * acc[j];
          if (!beta_zero) r += beta * to(cv);
        }
        cv = from(r);
      }
    }
  });
}

void gemm_kernel(const GemmArgs& g) {
  EMBER_USE_BASELINE_KERNEL_FOR(g.dtype, gemm_stub, g);
  EMBER_DISPATCH_KERNEL_TYPES(g.dtype, "addmm_impl_cpu_", [&] { gemm_typed<scalar_t>(g); });
}

}  // namespace

EMBER_REGISTER_DISPATCH(gemm_stub, &gemm_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
