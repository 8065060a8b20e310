// arange, linspace and logspace values, compiled once per CPU capability and
// with -ffp-contract=off: the fused multiply-adds PyTorch's kernels perform
// are written out as std::fma (one instruction where FMA is available), so
// every capability gives the same bits. See Note [Range values].
#include <algorithm>
#include <cmath>
#include <complex>
#include <type_traits>

#include "ember/core/ScalarType.h"
#include "ember/cpu/kernels/Loops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/native/RangeStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

constexpr int64_t kGrain = 32768;

template <typename T>
constexpr bool is_16bit_float = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Calls f(begin, end) over PyTorch's per-thread chunks of [0, n) (its
// parallel_for split), in parallel.
template <typename F>
void for_each_chunk(int64_t n, const F& f) {
  int64_t nt = 1;
  if (n > kGrain && get_num_threads() > 1 && !in_parallel_region()) {
    nt = std::min<int64_t>(get_num_threads(), (n + kGrain - 1) / kGrain);
  }
  const int64_t chunk = (n + nt - 1) / nt;
  parallel_for(0, nt, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t lo = c * chunk, hi = std::min(n, lo + chunk);
      if (lo < hi) f(lo, hi);
    }
  });
}

template <typename F>
void dispatch_numeric(ScalarType t, const F& f) {
  switch (t) {
#if EMBER_CPU_BASELINE_BUILD
    case ScalarType::Byte: return f(uint8_t());
    case ScalarType::Char: return f(int8_t());
    case ScalarType::Short: return f(int16_t());
    case ScalarType::Int: return f(int32_t());
    case ScalarType::Long: return f(int64_t());
#endif
    case ScalarType::Half: return f(Half());
    case ScalarType::Float: return f(float());
    case ScalarType::Double: return f(double());
    case ScalarType::BFloat16: return f(BFloat16());
    default: return;
  }
}

template <typename T>
void arange_typed(T* d, int64_t n, const RangeBounds& a) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t s = static_cast<uint64_t>(a.i0), st = static_cast<uint64_t>(a.i1);
    for_each_chunk(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) d[i] = static_cast<T>(static_cast<int64_t>(s + st * static_cast<uint64_t>(i)));
    });
  } else {
    // Vector loop of 32-byte vectors, two per step, then single elements.
    using acc = std::conditional_t<is_16bit_float<T>, float, double>;
    const acc s = static_cast<acc>(a.d0), st = static_cast<acc>(a.d1);
    constexpr int64_t lanes = 32 / static_cast<int64_t>(sizeof(T));
    for_each_chunk(n, [&](int64_t b, int64_t e) {
      int64_t i = b;
      for (; i + 2 * lanes <= e; i += 2 * lanes) {
        for (int64_t idx = i; idx < i + 2 * lanes; idx += lanes) {
          const acc base = static_cast<acc>(T(std::fma(st, static_cast<acc>(idx), s)));
          for (int64_t k = 0; k < lanes; ++k) d[idx + k] = T(std::fma(static_cast<acc>(k), st, base));
        }
      }
      for (; i < e; ++i) d[i] = T(std::fma(st, static_cast<acc>(i), s));
    });
  }
}

template <typename T>
void linspace_typed(T* d, int64_t steps, const RangeBounds& a) {
  const int64_t half = steps / 2;
  if constexpr (is_complex_v<T>) {
    // Each part as a real linspace of the part's type (PyTorch's complex step is (end - start) / (steps - 1),
    // each part divided by the real count).
    using R = typename T::value_type;
    const R sr = static_cast<R>(a.d0), si = static_cast<R>(a.d0_imag);
    const R er = static_cast<R>(a.d1), ei = static_cast<R>(a.d1_imag);
    const R n = static_cast<R>(steps - 1);
    const R str = (er - sr) / n, sti = (ei - si) / n;
    for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        if (i < half) {
          const R k = static_cast<R>(i);
          d[i] = T(std::fma(str, k, sr), std::fma(sti, k, si));
        } else {
          const R k = static_cast<R>(steps - i - 1);
          d[i] = T(std::fma(-str, k, er), std::fma(-sti, k, ei));
        }
      }
    });
  } else if constexpr (std::is_integral_v<T>) {
    const double da = static_cast<double>(static_cast<T>(a.i0)), db = static_cast<double>(static_cast<T>(a.i1));
    const double st = (db - da) / static_cast<double>(steps - 1);
    for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < std::min(hi, half); ++i) d[i] = static_cast<T>(std::fma(st, static_cast<double>(i), da));
      for (int64_t i = std::max(lo, half); i < hi; ++i) {
        d[i] = static_cast<T>(std::fma(-st, static_cast<double>(steps - i - 1), db));
      }
    });
  } else if constexpr (is_16bit_float<T>) {
    // 16-bit arithmetic: every operation rounds to T.
    const float fa = static_cast<float>(a.d0), fb = static_cast<float>(a.d1);
    const float diff = static_cast<float>(T(fb - fa));
    const float st = static_cast<float>(T(diff / static_cast<float>(T(static_cast<float>(steps - 1)))));
    auto mul = [st](int64_t k) { return static_cast<float>(T(st * static_cast<float>(T(static_cast<float>(k))))); };
    for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) d[i] = i < half ? T(fa + mul(i)) : T(fb - mul(steps - i - 1));
    });
  } else {
    const T ta = static_cast<T>(a.d0), tb = static_cast<T>(a.d1);
    const T st = (tb - ta) / static_cast<T>(steps - 1);
    for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < std::min(hi, half); ++i) d[i] = std::fma(st, static_cast<T>(i), ta);
      for (int64_t i = std::max(lo, half); i < hi; ++i) d[i] = std::fma(-st, static_cast<T>(steps - i - 1), tb);
    });
  }
}

// PyTorch's complex logspace: step = (end - start) / (steps - 1) as a complex
// division (numpy's algorithm: each part times 1 / (steps - 1)), exponents
// start + step * i unfused, and the complex power of the base in T (cpow).
template <typename T>
void complex_logspace(T* d, int64_t steps, const RangeBounds& a, double base) {
  using R = typename T::value_type;
  const int64_t half = steps / 2;
  const R sr = static_cast<R>(a.d0), si = static_cast<R>(a.d0_imag);
  const R er = static_cast<R>(a.d1), ei = static_cast<R>(a.d1_imag);
  const R scale = R(1) / static_cast<R>(steps - 1);
  const R str = (er - sr) * scale, sti = (ei - si) * scale;
  const T b(static_cast<R>(base));
  for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      T x;
      if (i < half) {
        const R k = static_cast<R>(i);
        x = T(sr + str * k, si + sti * k);
      } else {
        const R k = static_cast<R>(steps - i - 1);
        x = T(er - str * k, ei - sti * k);
      }
      d[i] = std::pow(b, x);
    }
  });
}

template <typename T>
void real_logspace(T* d, int64_t steps, const RangeBounds& a, double base) {
  const int64_t half = steps / 2;
  double da, db, st;
  if constexpr (std::is_integral_v<T>) {
    const T ta = static_cast<T>(a.i0), tb = static_cast<T>(a.i1);
    da = static_cast<double>(ta);
    db = static_cast<double>(tb);
    st = static_cast<double>(tb - ta) / static_cast<double>(steps - 1);
  } else {
    using acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const acc ta = static_cast<acc>(a.d0), tb = static_cast<acc>(a.d1);
    da = static_cast<double>(ta);
    db = static_cast<double>(tb);
    st = static_cast<double>(static_cast<acc>(T(tb - ta))) / static_cast<double>(steps - 1);
  }
  for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const double x = i < half ? da + st * static_cast<double>(i) : db - st * static_cast<double>(steps - i - 1);
      const double v = std::pow(base, x);
      if constexpr (std::is_integral_v<T> || std::is_same_v<T, double>) {
        d[i] = static_cast<T>(v);
      } else {
        d[i] = T(static_cast<float>(v));
      }
    }
  });
}

template <typename T>
void logspace_typed(T* d, int64_t steps, const RangeBounds& a, double base) {
  if constexpr (is_complex_v<T>) {
    complex_logspace(d, steps, a, base);
  } else {
    real_logspace(d, steps, a, base);
  }
}

void arange_kernel(const TensorBase& out, const RangeBounds& a) {
  EMBER_USE_BASELINE_KERNEL_FOR(out.dtype(), arange_stub, out, a);
  dispatch_numeric(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    arange_typed(static_cast<T*>(out.data_ptr()), out.numel(), a);
  });
}

// dispatch_numeric with complex64 and complex128 (linspace, logspace).
template <typename F>
void dispatch_space(ScalarType t, const F& f) {
#if EMBER_CPU_BASELINE_BUILD
  if (t == ScalarType::ComplexFloat) return f(std::complex<float>());
  if (t == ScalarType::ComplexDouble) return f(std::complex<double>());
#endif
  dispatch_numeric(t, f);
}

void linspace_kernel(const TensorBase& out, const RangeBounds& a) {
  EMBER_USE_BASELINE_KERNEL_FOR(out.dtype(), linspace_stub, out, a);
  dispatch_space(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    linspace_typed(static_cast<T*>(out.data_ptr()), out.numel(), a);
  });
}

void logspace_kernel(const TensorBase& out, const RangeBounds& a, double base) {
  EMBER_USE_BASELINE_KERNEL_FOR(out.dtype(), logspace_stub, out, a, base);
  dispatch_space(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    logspace_typed(static_cast<T*>(out.data_ptr()), out.numel(), a, base);
  });
}

}  // namespace

EMBER_REGISTER_DISPATCH(arange_stub, &arange_kernel);
EMBER_REGISTER_DISPATCH(linspace_stub, &linspace_kernel);
EMBER_REGISTER_DISPATCH(logspace_stub, &logspace_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
