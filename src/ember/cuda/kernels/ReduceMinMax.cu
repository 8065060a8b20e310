// max, min, all, any, and max/min with indices (argmax, argmin) on CUDA. A
// NaN wins max and min, as in PyTorch; among equal values (and among NaNs)
// the first index wins, whatever the order the threads combine in.
#include <cuda/std/limits>

#include "ember/cuda/kernels/Reduce.cuh"
#include "ember/cuda/kernels/ReduceKernels.h"

namespace ember::cuda {
namespace {

template <typename acc_t>
__device__ __forceinline__ acc_t lowest() {
  if constexpr (std::is_floating_point_v<acc_t>) {
    return -::cuda::std::numeric_limits<acc_t>::infinity();
  } else {
    return ::cuda::std::numeric_limits<acc_t>::lowest();
  }
}
template <typename acc_t>
__device__ __forceinline__ acc_t highest() {
  if constexpr (std::is_floating_point_v<acc_t>) {
    return ::cuda::std::numeric_limits<acc_t>::infinity();
  } else {
    return ::cuda::std::numeric_limits<acc_t>::max();
  }
}

template <typename T>
struct MinMaxOp {
  using in_t = T;
  using acc_t = opmath_t<T>;
  T* out;
  bool is_max;

  __device__ acc_t identity() const { return is_max ? lowest<acc_t>() : highest<acc_t>(); }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return is_max ? (b > a ? b : a) : (b < a ? b : a);
  }
  __device__ acc_t reduce(acc_t a, T v, int64_t) const { return combine(a, convert<acc_t>(v)); }
  __device__ void write(int64_t o, acc_t a) const { out[o] = convert<T>(a); }
};

template <typename T>
struct AllAnyOp {
  using in_t = T;
  using acc_t = int;
  uint8_t* out;  // bool and uint8 results share the byte layout
  bool is_all;

  __device__ acc_t identity() const { return is_all ? 1 : 0; }
  __device__ acc_t combine(acc_t a, acc_t b) const { return is_all ? (a & b) : (a | b); }
  __device__ acc_t reduce(acc_t a, T v, int64_t) const {
    return combine(a, convert<opmath_t<T>>(v) != opmath_t<T>(0) ? 1 : 0);
  }
  __device__ void write(int64_t o, acc_t a) const { out[o] = a ? 1 : 0; }
};

template <typename V>
struct ValueIndex {
  V value;
  int64_t index;  // -1: nothing seen yet
};

template <typename T>
struct ArgOp {
  using in_t = T;
  using acc_t = ValueIndex<opmath_t<T>>;
  T* values;  // may be null (argmax/argmin)
  int64_t* indices;
  bool is_max;

  __device__ acc_t identity() const { return {opmath_t<T>(0), -1}; }
  // Whether b should replace a: larger (smaller) value, NaN first, ties to the lower index.
  __device__ bool better(const acc_t& a, const acc_t& b) const {
    if (a.index < 0) return true;
    if (b.index < 0) return false;
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    if (an || bn) return an && bn ? b.index < a.index : bn;
    if (a.value == b.value) return b.index < a.index;
    return is_max ? b.value > a.value : b.value < a.value;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return better(a, b) ? b : a; }
  __device__ acc_t reduce(acc_t a, T v, int64_t r) const { return combine(a, acc_t{convert<opmath_t<T>>(v), r}); }
  __device__ void write(int64_t o, acc_t a) const {
    if (values) values[o] = convert<T>(a.value);
    indices[o] = a.index < 0 ? 0 : a.index;
  }
};

}  // namespace

void minmax_all_any_kernel(const cpu::ReducePlan& p, cpu::ReduceOp op) {
  if (op == cpu::ReduceOp::All || op == cpu::ReduceOp::Any) {
    const bool is_all = op == cpu::ReduceOp::All;
    EMBER_CUDA_DISPATCH_ALL(p.in_dtype, is_all ? "all_cuda" : "any_cuda",
                            [&] { run_reduce(p, AllAnyOp<scalar_t>{static_cast<uint8_t*>(p.out), is_all}); });
    return;
  }
  const bool is_max = op == cpu::ReduceOp::Max;
  EMBER_CUDA_DISPATCH_ALL(p.in_dtype, is_max ? "max_cuda" : "min_cuda",
                          [&] { run_reduce(p, MinMaxOp<scalar_t>{static_cast<scalar_t*>(p.out), is_max}); });
}

void arg_reduce_kernel(const cpu::ReducePlan& p, bool is_max) {
  EMBER_CUDA_DISPATCH_ALL(p.in_dtype, is_max ? "argmax_cuda" : "argmin_cuda", [&] {
    run_reduce(p, ArgOp<scalar_t>{static_cast<scalar_t*>(p.out), static_cast<int64_t*>(p.out2), is_max});
  });
}

}  // namespace ember::cuda
