// var/std (+ mean), vector norms and logsumexp on CUDA. They accumulate in
// the opmath type (float for float32 and 16-bit floats, double for double),
// as PyTorch's CUDA kernels do.
#include <cuda/std/limits>

#include "ember/cuda/kernels/Reduce.cuh"
#include "ember/cuda/kernels/ReduceKernels.h"

namespace ember::cuda {
namespace {

// ---- var / std: Welford per thread, Chan's merge between threads ----------------

template <typename acc_t>
struct WelfordAcc {
  acc_t mean;
  acc_t m2;
  int64_t n;
};

template <typename T>
struct VarOp {
  using in_t = T;
  using acc_t = WelfordAcc<opmath_t<T>>;
  using V = opmath_t<T>;
  T* out;
  T* mean_out;  // may be null
  V correction;
  bool take_sqrt;

  __device__ acc_t identity() const { return {V(0), V(0), 0}; }
  __device__ acc_t reduce(acc_t a, T v, int64_t) const {
    const V x = convert<V>(v);
    a.n += 1;
    const V delta = x - a.mean;
    a.mean += delta / static_cast<V>(a.n);
    a.m2 += delta * (x - a.mean);
    return a;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    const V delta = b.mean - a.mean;
    const V nb_over_n = static_cast<V>(b.n) / static_cast<V>(n);
    return {a.mean + delta * nb_over_n, a.m2 + b.m2 + delta * delta * static_cast<V>(a.n) * nb_over_n, n};
  }
  __device__ void write(int64_t o, acc_t a) const {
    const V nf = static_cast<V>(a.n);
    const V divisor = nf > correction ? nf - correction : V(0);
    V var = a.m2 / divisor;
    if (take_sqrt) var = math_sqrt(var);
    out[o] = convert<T>(var);
    if (mean_out) mean_out[o] = convert<T>(a.n == 0 ? ::cuda::std::numeric_limits<V>::quiet_NaN() : a.mean);
  }
};

// ---- vector norms -------------------------------------------------------------------

enum class NormKind : int { Zero, One, Two, Inf, NegInf, P };

template <typename T>
struct NormOp {
  using in_t = T;
  using acc_t = opmath_t<T>;
  T* out;
  NormKind kind;
  acc_t p;

  __device__ acc_t identity() const {
    return kind == NormKind::NegInf ? ::cuda::std::numeric_limits<acc_t>::infinity() : acc_t(0);
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    switch (kind) {
      case NormKind::Inf: return is_nan(a) || a > b ? a : b;
      case NormKind::NegInf: return is_nan(a) || a < b ? a : b;
      default: return a + b;
    }
  }
  __device__ acc_t reduce(acc_t a, T v, int64_t) const {
    const acc_t x = convert<acc_t>(v);
    const acc_t ax = x < acc_t(0) ? -x : x;
    switch (kind) {
      case NormKind::Zero: return a + (x != acc_t(0) ? acc_t(1) : acc_t(0));
      case NormKind::One: return a + ax;
      case NormKind::Two: return a + x * x;
      case NormKind::P: return a + math_pow(ax, p);
      default: return combine(a, is_nan(x) ? x : ax);
    }
  }
  __device__ void write(int64_t o, acc_t a) const {
    if (kind == NormKind::Two) a = math_sqrt(a);
    if (kind == NormKind::P) a = math_pow(a, acc_t(1) / p);
    out[o] = convert<T>(a);
  }
};

// ---- logsumexp: a running (max, sum of math_exp(x - max)) pair -----------------------------

template <typename V>
struct MaxSum {
  V max;
  V sum;
};

template <typename T>
struct LogSumExpOp {
  using in_t = T;
  using V = opmath_t<T>;
  using acc_t = MaxSum<V>;
  T* out;

  __device__ acc_t identity() const { return {-::cuda::std::numeric_limits<V>::infinity(), V(0)}; }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (is_nan(a.max) || is_nan(b.max)) return {::cuda::std::numeric_limits<V>::quiet_NaN(), V(0)};
    const V inf = ::cuda::std::numeric_limits<V>::infinity();
    if (a.max == -inf) return {b.max, a.sum + b.sum};
    if (b.max == -inf) return {a.max, a.sum + b.sum};
    if (a.max == inf || b.max == inf) return {inf, V(1)};  // PyTorch's result: +inf
    if (a.max >= b.max) return {a.max, a.sum + b.sum * math_exp(b.max - a.max)};
    return {b.max, b.sum + a.sum * math_exp(a.max - b.max)};
  }
  __device__ acc_t reduce(acc_t a, T v, int64_t) const { return combine(a, acc_t{convert<V>(v), V(1)}); }
  __device__ void write(int64_t o, acc_t a) const {
    const V inf = ::cuda::std::numeric_limits<V>::infinity();
    const V shift = (a.max == inf || a.max == -inf) ? V(0) : a.max;
    V r = is_nan(a.max) ? a.max : math_log(a.sum) + shift;
    if (a.max == inf) r = inf;
    out[o] = convert<T>(r);
  }
};

}  // namespace

void var_kernel(const cpu::ReducePlan& p, double correction, bool take_sqrt) {
  EMBER_CUDA_DISPATCH_FLOATING(p.in_dtype, take_sqrt ? "std_cuda" : "var_cuda", [&] {
    using V = opmath_t<scalar_t>;
    run_reduce(p, VarOp<scalar_t>{static_cast<scalar_t*>(p.out), static_cast<scalar_t*>(p.out2),
                                  static_cast<V>(correction), take_sqrt});
  });
}

void norm_kernel(const cpu::ReducePlan& p, double ord) {
  NormKind kind = NormKind::P;
  if (ord == 0) {
    kind = NormKind::Zero;
  } else if (ord == 1) {
    kind = NormKind::One;
  } else if (ord == 2) {
    kind = NormKind::Two;
  } else if (std::isinf(ord)) {
    kind = ord > 0 ? NormKind::Inf : NormKind::NegInf;
  }
  EMBER_CUDA_DISPATCH_FLOATING(p.in_dtype, "norm_cuda", [&] {
    using V = opmath_t<scalar_t>;
    run_reduce(p, NormOp<scalar_t>{static_cast<scalar_t*>(p.out), kind, static_cast<V>(ord)});
  });
}

void logsumexp_kernel(const cpu::ReducePlan& p) {
  EMBER_CUDA_DISPATCH_FLOATING(p.in_dtype, "logsumexp_cuda",
                               [&] { run_reduce(p, LogSumExpOp<scalar_t>{static_cast<scalar_t*>(p.out)}); });
}

}  // namespace ember::cuda
