// sum, nansum, mean and prod on CUDA: one kernel per input dtype (the op
// picks sum or product, NaN skipping and the output dtype at run time).
#include "ember/cuda/kernels/Reduce.cuh"
#include "ember/cuda/kernels/ReduceKernels.h"

namespace ember::cuda {
namespace {

// Integers (and bool) accumulate in uint64, which wraps as int64 does;
// floats in their opmath type (float for 16-bit floats), as PyTorch's CUDA sum.
template <typename T>
using sum_acc_t = std::conditional_t<std::is_integral_v<T>, uint64_t, opmath_t<T>>;

enum class Mode { Sum, NanSum, Prod };

// The mode is a template argument: the per-element work is one add or
// multiply, without branches on run-time flags.
template <typename T, Mode kMode>
struct SumProdOp {
  using in_t = T;
  using acc_t = sum_acc_t<T>;
  static constexpr bool kVectorizeOutputs = true;  // Note [Column reductions, several outputs per thread]
  void* out;
  bool out_long;  // integral input summed into int64
  acc_t factor;  // mean: 1 / reduce_numel (PyTorch multiplies by this factor)

  __device__ acc_t identity() const { return kMode == Mode::Prod ? acc_t(1) : acc_t(0); }
  __device__ acc_t reduce(acc_t a, T v, int64_t) const {
    acc_t x = convert<acc_t>(v);
    if constexpr (kMode == Mode::NanSum) {
      if (is_nan(x)) x = acc_t(0);
    }
    return kMode == Mode::Prod ? a * x : a + x;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return kMode == Mode::Prod ? a * b : a + b; }
  __device__ void write(int64_t o, acc_t a) const {
    if constexpr (!std::is_integral_v<T>) {
      if (factor != acc_t(1)) a *= factor;
    }
    if (out_long) {
      static_cast<int64_t*>(out)[o] = static_cast<int64_t>(a);
    } else {
      static_cast<T*>(out)[o] = convert<T>(a);
    }
  }
};

template <typename T, Mode kMode>
void run_sum_prod(const cpu::ReducePlan& p, double divisor) {
  using acc_t = sum_acc_t<T>;
  const bool out_long = p.out_dtype != p.in_dtype;
  EMBER_INTERNAL_ASSERT(!out_long || (p.out_dtype == ScalarType::Long && std::is_integral_v<T>),
                        "sum: unexpected dtypes");
  SumProdOp<T, kMode> f{p.out, out_long, acc_t(1)};
  if constexpr (!std::is_integral_v<T>) {
    if (divisor != 1) f.factor = acc_t(1) / static_cast<acc_t>(divisor);
  }
  run_reduce(p, f);
}

}  // namespace

void sum_prod_kernel(const cpu::ReducePlan& p, cpu::ReduceOp op, double divisor) {
  const bool prod = op == cpu::ReduceOp::Prod;
  EMBER_CUDA_DISPATCH_ALL(p.in_dtype, prod ? "prod_cuda" : "sum_cuda", [&] {
    if (prod) {
      run_sum_prod<scalar_t, Mode::Prod>(p, divisor);
    } else if (op == cpu::ReduceOp::NanSum && !std::is_integral_v<scalar_t>) {
      // Integers have no NaN: nansum is their sum.
      run_sum_prod<scalar_t, std::is_integral_v<scalar_t> ? Mode::Sum : Mode::NanSum>(p, divisor);
    } else {
      run_sum_prod<scalar_t, Mode::Sum>(p, divisor);
    }
  });
}

}  // namespace ember::cuda
