// Variance and index-returning reductions (max/min along a dim,
// argmax/argmin), compiled once per CPU capability.
#include "ember/cpu/kernels/ReduceEngine.h"
#include "ember/cpu/kernels/ReduceVec.h"
#include "ember/cpu/kernels/SumOrder.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// ---- variance ---------------------------------------------------------------------
// Note [Variance order]
// PyTorch computes a float or double variance over everything (one output,
// not var_mean) in two passes: the mean as mean() gives it, then the squared
// deviations (in double) summed one after the other within each 2-D block of
// the iteration (SumOrder.h's Geometry), each block's sum added to a running
// total; more than kReduceGrain elements on several threads split into one
// flat piece per thread, whose totals are added in order. Every other
// variance (dims, 16-bit types, var_mean) is Welford's one-pass update in
// double, folded as Note [Serial reductions] says.

struct Welford {
  double mean = 0, m2 = 0;
  int64_t n = 0;
  double nf = 0;
};

template <typename T>
struct WelfordOp {
  using in_t = T;
  using acc_t = Welford;
  T* out;
  T* mean_out;
  double correction;
  bool take_sqrt;

  acc_t identity() const { return Welford{}; }
  acc_t reduce(const acc_t& a, const T& v) const {
    const double x = static_cast<double>(load(v));
    const int64_t n = a.n + 1;
    const double nf = static_cast<double>(n);
    const double delta = x - a.mean;
    const double mean = a.mean + delta / nf;
    return {mean, a.m2 + delta * (x - mean), n, nf};
  }
  acc_t combine(const acc_t& a, const acc_t& b) const {
    if (a.nf == 0) return b;
    if (b.nf == 0) return a;
    const double delta = b.mean - a.mean;
    const double nf = a.nf + b.nf;
    const double nb_over_n = b.nf / nf;
#if defined(__FMA__)
    // PyTorch's AVX2 build fuses these two multiply-adds.
    return {std::fma(delta, nb_over_n, a.mean), std::fma(delta * delta * a.nf, nb_over_n, a.m2 + b.m2), -1, nf};
#else
    return {a.mean + delta * nb_over_n, a.m2 + b.m2 + delta * delta * a.nf * nb_over_n, -1, nf};
#endif
  }
  void write(int64_t o, const acc_t& a) const {
    // No element: NaN whatever the correction (PyTorch fills before reducing).
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double divisor = a.nf > correction ? a.nf - correction : 0;
    double var = a.nf == 0 ? nan : a.m2 / divisor;
    if (take_sqrt) var = std::sqrt(var);
    out[o] = static_cast<T>(var);
    if (mean_out) mean_out[o] = static_cast<T>(a.nf == 0 ? nan : a.mean);
  }
};

// Squared deviations from mean summed into *out block by block.
template <typename T>
struct DeviationBlocks {
  using in_t = T;
  using out_t = double;
  double mean;

  void block(const T* in, double* out, int64_t is0, int64_t is1, int64_t, int64_t, int64_t n0, int64_t n1) const {
    double local = 0;
    for (int64_t j = 0; j < n1; ++j) {
      const T* row = in + j * is1;
      for (int64_t i = 0; i < n0; ++i) {
        const double d = static_cast<double>(row[i * is0]) - mean;
        local += d * d;
      }
    }
    *out += local;
  }
};

template <typename T>
void var_all(const ReducePlan& p, double correction, bool take_sqrt) {
  const sum_order::Geometry g = sum_order::geometry_of(p);
  const T* in = static_cast<const T*>(p.in);
  const DeviationBlocks<T> k{*p.mean};
  const int64_t n = g.numel;
  const int nthreads = get_num_threads();
  double total = 0;
  if (n > kReduceGrain && nthreads > 1 && !in_parallel_region()) {
    const int64_t pieces = std::min<int64_t>(nthreads, (n + kReduceGrain - 1) / kReduceGrain);
    const int64_t chunk = (n + pieces - 1) / pieces;
    std::vector<double> partial(static_cast<size_t>(pieces), 0.0);
    parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t s = t * chunk, end = std::min(n, s + chunk);
        if (s < end) sum_order::run_range(k, g, in, &partial[t], s, end);
      }
    });
    for (double v : partial) total += v;
  } else {
    sum_order::run_range(k, g, in, &total, 0, n);
  }
  double var = total / std::max(0.0, static_cast<double>(n) - correction);
  if (take_sqrt) var = std::sqrt(var);
  static_cast<T*>(p.out)[0] = static_cast<T>(var);
}

void var_kernel(const ReducePlan& p, double correction, bool take_sqrt) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (p.mean && p.num_outputs == 1 && p.reduce_numel > 0) return var_all<T>(p, correction, take_sqrt);
    }
    run_serial_reduction(p, WelfordOp<T>{static_cast<T*>(p.out), static_cast<T*>(p.out2), correction, take_sqrt});
  };
  switch (p.in_dtype) {
    case ScalarType::Float: return run(float{});
    case ScalarType::Double: return run(double{});
    case ScalarType::Half: return run(Half{});
    case ScalarType::BFloat16: return run(BFloat16{});
    default: throw Error(str_cat("\"var\" not implemented for '", scalar_type_name(p.in_dtype), "'"));
  }
}

// ---- max/min with indices ------------------------------------------------------------
// The first extreme value wins ties; a NaN beats everything and the first NaN
// is kept, as in PyTorch.

template <typename V, bool kMax>
inline bool better(V v, V best) {
  if constexpr (std::is_floating_point_v<V>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  if constexpr (kMax) {
    return v > best;
  } else {
    return v < best;
  }
}

template <typename T, bool kMax>
void arg_reduce_typed(const ReducePlan& p) {
  using V = opmath_t<T>;
  const T* in = static_cast<const T*>(p.in);
  T* vals = static_cast<T*>(p.out);
  int64_t* idx = static_cast<int64_t*>(p.out2);
  EMBER_INTERNAL_ASSERT(p.red_sizes.size() <= 1, "arg reductions take one reduced dim");
  const int no = static_cast<int>(p.out_sizes.size());
  const int64_t L = p.red_sizes.empty() ? 1 : p.red_sizes[0];
  const int64_t Ls = p.red_sizes.empty() ? 1 : p.red_strides[0];
  const int64_t nout = p.num_outputs;
  if (nout == 0) return;

  if (Ls != 1 && no > 0 && p.out_strides[no - 1] == 1 && p.out_sizes[no - 1] >= 4) {
    const int64_t ncols = p.out_sizes[no - 1];
    const int64_t nblocks = (ncols + kColBlock - 1) / kColBlock;
    const int64_t tasks = (nout / ncols) * nblocks;
    const int64_t grain = std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(L * kColBlock, 1));
    parallel_for(0, tasks, grain, [&](int64_t b, int64_t e) {
      V best[kColBlock];
      int64_t bi[kColBlock];
      for (int64_t t = b; t < e; ++t) {
        const int64_t ok = t / nblocks, c0 = (t % nblocks) * kColBlock;
        const int64_t nc = std::min(kColBlock, ncols - c0);
        DimWalker ow(p.out_sizes.data(), p.out_strides.data(), no - 1, ok);
        const T* base = in + ow.offset + c0;
        for (int64_t c = 0; c < nc; ++c) {
          best[c] = load(base[c]);
          bi[c] = 0;
        }
        for (int64_t r = 1; r < L; ++r) {
          const T* row = base + r * Ls;
          for (int64_t c = 0; c < nc; ++c) {
            const V v = load(row[c]);
            if (better<V, kMax>(v, best[c])) {
              best[c] = v;
              bi[c] = r;
            }
          }
        }
        const int64_t o0 = ok * ncols + c0;
        for (int64_t c = 0; c < nc; ++c) {
          if (vals) vals[o0 + c] = static_cast<T>(best[c]);
          idx[o0 + c] = bi[c];
        }
      }
    });
    return;
  }

  const int64_t grain = std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(L, 1));
  parallel_for(0, nout, grain, [&](int64_t b, int64_t e) {
    DimWalker ow(p.out_sizes.data(), p.out_strides.data(), no, b);
    for (int64_t o = b; o < e; ++o, ow.next()) {
      const T* x = in + ow.offset;
      if constexpr (has_vec_leaf_v<T>) {
        if (Ls == 1) {
          // The extreme value by vector passes, then its first position
          // (the first NaN if any); the value written is that element.
          const T m = vec_extreme<kMax>(x, L);
          int64_t i = 0;
          if (m != m) {
            while (x[i] == x[i]) ++i;
          } else {
            while (x[i] != m) ++i;
          }
          if (vals) vals[o] = x[i];
          idx[o] = i;
          continue;
        }
      }
      V best = load(x[0]);
      int64_t bi = 0;
      for (int64_t i = 1; i < L; ++i) {
        const V v = load(x[i * Ls]);
        if (better<V, kMax>(v, best)) {
          best = v;
          bi = i;
        }
      }
      if (vals) vals[o] = static_cast<T>(best);
      idx[o] = bi;
    }
  });
}

void arg_reduce_kernel(const ReducePlan& p, bool is_max) {
  EMBER_USE_BASELINE_KERNEL_FOR(p.in_dtype, arg_reduce_stub, p, is_max);
  EMBER_DISPATCH_KERNEL_TYPES(p.in_dtype, is_max ? "max" : "min", [&] {
    if (is_max) {
      arg_reduce_typed<scalar_t, true>(p);
    } else {
      arg_reduce_typed<scalar_t, false>(p);
    }
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(var_stub, &var_kernel);
EMBER_REGISTER_DISPATCH(arg_reduce_stub, &arg_reduce_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
