// Variance, logsumexp and index-returning reductions (max/min along a dim,
// argmax/argmin), compiled once per CPU capability.
#include "ember/cpu/kernels/ReduceEngine.h"
#include "ember/cpu/kernels/ReduceVec.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// ---- variance ---------------------------------------------------------------------
// Note [Variance accumulation]
// Each contiguous chunk gets its mean and sum of squared deviations in two
// passes over the (cached) chunk; chunks and strided elements are merged with
// Chan's parallel formula, all in double, so float32 inputs keep full
// precision like PyTorch's double Welford accumulator.

struct Welford {
  double mean = 0, m2 = 0, n = 0;
};

inline Welford merge(const Welford& a, const Welford& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  const double n = a.n + b.n;
  const double d = b.mean - a.mean;
  return {a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * b.n / n), n};
}

template <typename T>
struct VarOp {
  using in_t = T;
  using acc_t = Welford;
  T* out;
  T* mean_out;
  double correction;
  bool take_sqrt;

  template <typename F>
  static Welford chunks(int64_t n, const F& f) {
    constexpr int64_t kChunk = 2048;
    Welford r;
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t len = std::min(kChunk, n - s);
      const double mean = cascade_sum<double>(s, len, f) / double(len);
      const double m2 = cascade_sum<double>(s, len, [&](int64_t i) {
        const double d = f(i) - mean;
        return d * d;
      });
      r = merge(r, Welford{mean, m2, double(len)});
    }
    return r;
  }
  acc_t identity() const { return Welford{}; }
  acc_t contig(const T* x, int64_t n) const {
    return chunks(n, [x](int64_t i) { return static_cast<double>(load(x[i])); });
  }
  acc_t strided(const T* x, int64_t n, int64_t s) const {
    return chunks(n, [x, s](int64_t i) { return static_cast<double>(load(x[i * s])); });
  }
  acc_t combine(const acc_t& a, const acc_t& b) const { return merge(a, b); }
  void columns(const T* x, int64_t rows, int64_t rs, int64_t nc, acc_t* acc) const {
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * rs;
      for (int64_t c = 0; c < nc; ++c) {
        Welford& w = acc[c];
        const double v = static_cast<double>(load(row[c]));
        w.n += 1;
        const double d = v - w.mean;
        w.mean += d / w.n;
        w.m2 += d * (v - w.mean);
      }
    }
  }
  void write(int64_t o, const acc_t& a) const {
    // No element: NaN whatever the correction (a negative one would give 0).
    double var = a.n == 0 ? std::numeric_limits<double>::quiet_NaN() : a.m2 / std::max(0.0, a.n - correction);
    if (take_sqrt) var = std::sqrt(var);
    out[o] = static_cast<T>(var);
    if (mean_out) mean_out[o] = static_cast<T>(a.n == 0 ? std::numeric_limits<double>::quiet_NaN() : a.mean);
  }
};

void var_kernel(const ReducePlan& p, double correction, bool take_sqrt) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    run_reduction(p, VarOp<T>{static_cast<T*>(p.out), static_cast<T*>(p.out2), correction, take_sqrt});
  };
  switch (p.in_dtype) {
    case ScalarType::Float: return run(float{});
    case ScalarType::Double: return run(double{});
    case ScalarType::Half: return run(Half{});
    case ScalarType::BFloat16: return run(BFloat16{});
    default: throw Error(str_cat("\"var\" not implemented for '", scalar_type_name(p.in_dtype), "'"));
  }
}

// ---- logsumexp ---------------------------------------------------------------------

template <typename V>
struct Lse {
  V shift;  // subtracted before exp: the max, or 0 when the max is infinite; -inf marks "no data"
  V sum;
};

template <typename T>
struct LogSumExpOp {
  using in_t = T;
  using V = opmath_t<T>;
  using acc_t = Lse<V>;
  T* out;

  static V shift_of(V m) { return std::isinf(m) ? V(0) : m; }
  acc_t identity() const { return {-std::numeric_limits<V>::infinity(), V(0)}; }
  template <typename F>
  static acc_t line(int64_t n, const F& f) {
    V m = -std::numeric_limits<V>::infinity();
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
      const V v = f(i);
      m = v > m ? v : m;
      nan |= v != v;
    }
    if (nan) return {std::numeric_limits<V>::quiet_NaN(), std::numeric_limits<V>::quiet_NaN()};
    const V s = shift_of(m);
    return {s, cascade_sum<V>(0, n, [&](int64_t i) { return std::exp(f(i) - s); })};
  }
  // exp(v - s) on a vector or a scalar.
  static auto shifted_exp(V s) {
    return [s](auto v) {
      if constexpr (std::is_floating_point_v<decltype(v)>) {
        return std::exp(v - s);
      } else {
        return vecmath::exp(v - s);
      }
    };
  }
  acc_t contig(const T* x, int64_t n) const {
    if constexpr (has_vec_leaf_v<T>) {
      if (n > 0) {
        const T m = vec_extreme<true>(x, n);
        if (m != m) return {m, m};
        const V s = shift_of(m);
        return {s, vec_cascade_sum(x, n, shifted_exp(s))};
      }
    }
    return line(n, [x](int64_t i) { return load(x[i]); });
  }
  acc_t strided(const T* x, int64_t n, int64_t st) const {
    return line(n, [x, st](int64_t i) { return load(x[i * st]); });
  }
  acc_t combine(const acc_t& a, const acc_t& b) const {
    if (a.shift != a.shift) return a;
    if (b.shift != b.shift) return b;
    if (std::isinf(a.shift)) return b;
    if (std::isinf(b.shift)) return a;
    const V m = std::max(a.shift, b.shift);
    return {m, a.sum * std::exp(a.shift - m) + b.sum * std::exp(b.shift - m)};
  }
  void columns(const T* x, int64_t rows, int64_t rs, int64_t nc, acc_t* acc) const {
    V m[kColBlock], s[kColBlock];
    for (int64_t c = 0; c < nc; ++c) m[c] = -std::numeric_limits<V>::infinity();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < nc; ++c) {
        const V v = load(x[r * rs + c]);
        m[c] = (v > m[c] || v != v) ? v : m[c];
      }
    }
    for (int64_t c = 0; c < nc; ++c) {
      m[c] = shift_of(m[c]);
      s[c] = V(0);
    }
    for (int64_t r = 0; r < rows; ++r) {
      int64_t c = 0;
      if constexpr (has_vec_leaf_v<T>) {
        using Vec = typename VecOf<T>::type;
        constexpr int64_t W = sizeof(Vec) / sizeof(T);
        for (; c + W <= nc; c += W) {
          const Vec e = vecmath::exp(vec_load<Vec>(x + r * rs + c) - vec_load<Vec>(m + c)) + vec_load<Vec>(s + c);
          std::memcpy(s + c, &e, sizeof e);
        }
      }
      for (; c < nc; ++c) s[c] += std::exp(load(x[r * rs + c]) - m[c]);
    }
    for (int64_t c = 0; c < nc; ++c) {
      acc_t part = m[c] != m[c] ? acc_t{m[c], m[c]} : acc_t{m[c], s[c]};
      acc[c] = combine(acc[c], part);
    }
  }
  void write(int64_t o, const acc_t& a) const { out[o] = static_cast<T>(std::log(a.sum) + a.shift); }
};

void logsumexp_kernel(const ReducePlan& p) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    run_reduction(p, LogSumExpOp<T>{static_cast<T*>(p.out)});
  };
  switch (p.in_dtype) {
    case ScalarType::Float: return run(float{});
    case ScalarType::Double: return run(double{});
    case ScalarType::Half: return run(Half{});
    case ScalarType::BFloat16: return run(BFloat16{});
    default: throw Error(str_cat("\"logsumexp\" not implemented for '", scalar_type_name(p.in_dtype), "'"));
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
EMBER_REGISTER_DISPATCH(logsumexp_stub, &logsumexp_kernel);
EMBER_REGISTER_DISPATCH(arg_reduce_stub, &arg_reduce_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
