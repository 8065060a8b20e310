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

template <typename T>
struct SumProdOp {
  using in_t = T;
  using acc_t = sum_acc_t<T>;
  void* out;
  bool prod;
  bool skip_nan;
  bool out_long;  // integral input summed into int64
  acc_t factor;  // mean: 1 / reduce_numel (PyTorch multiplies by this factor)

  __device__ acc_t identity() const { return prod ? acc_t(1) : acc_t(0); }
  __device__ acc_t reduce(acc_t a, T v, int64_t) const {
    acc_t x = convert<acc_t>(v);
    if (skip_nan && is_nan(x)) x = acc_t(0);
    return prod ? a * x : a + x;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return prod ? a * b : a + b; }
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

}  // namespace

void sum_prod_kernel(const cpu::ReducePlan& p, cpu::ReduceOp op, double divisor) {
  const bool prod = op == cpu::ReduceOp::Prod;
  EMBER_CUDA_DISPATCH_ALL(p.in_dtype, prod ? "prod_cuda" : "sum_cuda", [&] {
    using acc_t = sum_acc_t<scalar_t>;
    const bool out_long = p.out_dtype != p.in_dtype;
    EMBER_INTERNAL_ASSERT(!out_long || (p.out_dtype == ScalarType::Long && std::is_integral_v<scalar_t>),
                          "sum: unexpected dtypes");
    SumProdOp<scalar_t> f{p.out, prod, op == cpu::ReduceOp::NanSum, out_long, acc_t(1)};
    if constexpr (!std::is_integral_v<scalar_t>) {
      if (divisor != 1) f.factor = acc_t(1) / static_cast<acc_t>(divisor);
    }
    run_reduce(p, f);
  });
}

}  // namespace ember::cuda
