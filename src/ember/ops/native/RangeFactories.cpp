// arange, linspace, logspace and eye. Built with -ffp-contract=off: the value
// arithmetic below spells out each fused multiply-add (see Note [Range values]).
#include <cmath>
#include <limits>
#include <vector>

#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/FactoryUtils.h"

// Note [Range values]
// PyTorch's CPU range kernels fix the last bit of every element, so Ember
// repeats their arithmetic:
//  - arange computes in double (float for half/bfloat16, int64 for integer
//    types). Its loop is vectorised over 32-byte vectors, two per step: each
//    vector's first value is start + step * idx (one fused multiply-add) and
//    lane k adds k * step to that value rounded to the output type (again
//    fused); the elements after the last full pair of vectors are
//    start + step * idx each. The loop restarts at each thread's chunk
//    (PyTorch's parallel_for split with grain 32768), so chunks matter too.
//  - linspace computes in the output type (double for integer outputs):
//    step = (end - start) / (steps - 1); the first half is start + step * i,
//    the second end - step * (steps - 1 - i), each fused. Half and bfloat16
//    round after every operation instead.
//  - logspace raises base to start + step * i computed in double, unfused.

namespace ember::native {

namespace {

constexpr int64_t kGrain = 32768;

std::string enum_name(ScalarType t) {
  std::string s(legacy_type_name(t));
  return s.substr(0, s.size() - 6);
}

[[noreturn]] void not_implemented(const char* op, ScalarType t) {
  throw NotImplementedError(str_cat("\"", op, "\" not implemented for '", enum_name(t), "'"));
}

// Runs f(T()) for every dtype except bool.
template <typename F>
void dispatch_numeric(ScalarType t, const char* name, const F& f) {
  switch (t) {
    case ScalarType::Byte: return f(uint8_t());
    case ScalarType::Char: return f(int8_t());
    case ScalarType::Short: return f(int16_t());
    case ScalarType::Int: return f(int32_t());
    case ScalarType::Long: return f(int64_t());
    case ScalarType::Half: return f(Half());
    case ScalarType::Float: return f(float());
    case ScalarType::Double: return f(double());
    case ScalarType::BFloat16: return f(BFloat16());
    default: not_implemented(name, t);
  }
}

// Calls f(begin, end) over PyTorch's per-thread chunks of [0, n).
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

// Writes the values of a contiguous tensor computed in a contiguous buffer
// back when the destination is not contiguous.
template <typename F>
void fill_contiguous(Tensor& out, const F& fill) {
  if (out.is_contiguous()) {
    fill(out);
  } else {
    Tensor r = out.contiguous();
    fill(r);
    out.copy_(r);
  }
}

void check_out_dtype(const Tensor& out, std::optional<ScalarType> dtype) {
  if (dtype && *dtype != out.dtype()) {
    throw Error(str_cat("dtype ", enum_name(*dtype), " does not match dtype of out parameter (", enum_name(out.dtype()),
                        ")"));
  }
}

// ---- arange ------------------------------------------------------------------------

template <typename T>
using arange_acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, std::conditional_t<is_16bit_float<T>, float, double>>;

template <typename T>
void arange_values(T* d, int64_t n, arange_acc_t<T> s, arange_acc_t<T> st) {
  using acc = arange_acc_t<T>;
  if constexpr (std::is_integral_v<T>) {
    for_each_chunk(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const uint64_t v = static_cast<uint64_t>(s) + static_cast<uint64_t>(st) * static_cast<uint64_t>(i);
        d[i] = static_cast<T>(static_cast<int64_t>(v));
      }
    });
  } else {
    constexpr int64_t lanes = 32 / static_cast<int64_t>(sizeof(T));
    for_each_chunk(n, [&](int64_t b, int64_t e) {
      int64_t i = b;
      for (; i + 2 * lanes <= e; i += 2 * lanes) {
        for (int64_t idx = i; idx < i + 2 * lanes; idx += lanes) {
          const T base = T(std::fma(st, static_cast<acc>(idx), s));
          for (int64_t k = 0; k < lanes; ++k) {
            d[idx + k] = T(std::fma(static_cast<acc>(k), st, static_cast<acc>(base)));
          }
        }
      }
      for (; i < e; ++i) d[i] = T(std::fma(st, static_cast<acc>(i), s));
    });
  }
}

}  // namespace

Tensor& arange_out(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<ScalarType> dtype,
                   std::optional<Device> device, Tensor& out) {
  ScalarType t;
  if (out.defined()) {
    check_out_dtype(out, dtype);
    t = out.dtype();
  } else {
    // Integral (or bool) start, end and step give int64; otherwise the default dtype.
    const bool integral = !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
    t = dtype.value_or(integral ? ScalarType::Long : get_default_dtype());
  }
  if (t == ScalarType::Bool) not_implemented("arange_cpu", t);
  const double ds = start.to_double(), de = end.to_double(), dst = step.to_double();
  EMBER_CHECK(dst > 0 || dst < 0, "step must be nonzero");
  EMBER_CHECK(std::isfinite(ds) && std::isfinite(de), "unsupported range: ", ds, " -> ", de);
  EMBER_CHECK((dst > 0 && de >= ds) || (dst < 0 && de <= ds), "upper bound and lower bound inconsistent with step sign");
  double size_d;
  if (t == ScalarType::Long) {
    const int64_t xs = checked_to<int64_t>(start), xe = checked_to<int64_t>(end), xst = checked_to<int64_t>(step);
    EMBER_CHECK_TYPE(ValueError, xst != 0, "step must be nonzero");
    const int64_t sgn = (xst > 0) - (xst < 0);
    size_d = static_cast<double>(static_cast<int64_t>(static_cast<uint64_t>(xe) - static_cast<uint64_t>(xs) +
                                                      static_cast<uint64_t>(xst) - static_cast<uint64_t>(sgn)) /
                                 xst);
  } else {
    size_d = std::ceil((de - ds) / dst);
  }
  EMBER_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
              "invalid size, possible overflow?");
  const int64_t n = static_cast<int64_t>(size_d);
  if (!out.defined()) {
    out = native::empty({n}, t, device);
  } else if (out.numel() != n) {
    resize_output(out, {n});
  }
  fill_contiguous(out, [&](Tensor& r) {
    dispatch_numeric(t, "arange_cpu", [&](auto tag) {
      using T = decltype(tag);
      using acc = arange_acc_t<T>;
      arange_values(static_cast<T*>(r.data_ptr()), n, checked_to<acc>(start), checked_to<acc>(step));
    });
  });
  return out;
}

Tensor& arange_end_out(const Scalar& end, std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  return arange_out(Scalar(int64_t(0)), end, Scalar(int64_t(1)), dtype, device, out);
}

// ---- linspace, logspace ---------------------------------------------------------------

namespace {

template <typename T>
void linspace_values(T* d, int64_t steps, const Scalar& start, const Scalar& end) {
  const int64_t halfway = steps / 2;
  if constexpr (std::is_integral_v<T>) {
    const T a = checked_to<T>(start), b = checked_to<T>(end);
    const double st = (static_cast<double>(b) - static_cast<double>(a)) / static_cast<double>(steps - 1);
    for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        d[i] = static_cast<T>(i < halfway ? std::fma(st, static_cast<double>(i), static_cast<double>(a))
                                          : std::fma(-st, static_cast<double>(steps - i - 1), static_cast<double>(b)));
      }
    });
  } else if constexpr (is_16bit_float<T>) {
    // 16-bit arithmetic: every operation rounds to T.
    const T a = checked_to<T>(start), b = checked_to<T>(end);
    const T diff = T(static_cast<float>(b) - static_cast<float>(a));
    const T st = T(static_cast<float>(diff) / static_cast<float>(T(static_cast<float>(steps - 1))));
    auto mul = [&](int64_t k) { return T(static_cast<float>(st) * static_cast<float>(T(static_cast<float>(k)))); };
    for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        d[i] = i < halfway ? T(static_cast<float>(a) + static_cast<float>(mul(i)))
                           : T(static_cast<float>(b) - static_cast<float>(mul(steps - i - 1)));
      }
    });
  } else {
    const T a = checked_to<T>(start), b = checked_to<T>(end);
    const T st = (b - a) / static_cast<T>(steps - 1);
    for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        d[i] = i < halfway ? std::fma(st, static_cast<T>(i), a) : std::fma(-st, static_cast<T>(steps - i - 1), b);
      }
    });
  }
}

template <typename T>
void logspace_values(T* d, int64_t steps, const Scalar& start, const Scalar& end, double base) {
  const int64_t halfway = steps / 2;
  if constexpr (std::is_integral_v<T>) {
    const double fb = base;
    const T a = checked_to<T>(start), b = checked_to<T>(end);
    const double st = static_cast<double>(b - a) / static_cast<double>(steps - 1);
    for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const double x = i < halfway ? static_cast<double>(a) + st * static_cast<double>(i)
                                     : static_cast<double>(b) - st * static_cast<double>(steps - i - 1);
        d[i] = static_cast<T>(std::pow(fb, x));
      }
    });
  } else {
    using acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T a = checked_to<T>(start), b = checked_to<T>(end);
    const double st = static_cast<double>(static_cast<acc>(T(static_cast<acc>(b) - static_cast<acc>(a)))) /
                      static_cast<double>(steps - 1);
    for_each_chunk(steps, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const double x = i < halfway ? static_cast<double>(a) + st * static_cast<double>(i)
                                     : static_cast<double>(b) - st * static_cast<double>(steps - i - 1);
        d[i] = T(static_cast<acc>(std::pow(base, x)));
      }
    });
  }
}

ScalarType space_dtype(const Tensor& out, std::optional<ScalarType> dtype) {
  if (out.defined()) {
    check_out_dtype(out, dtype);
    return out.dtype();
  }
  return dtype.value_or(get_default_dtype());
}

}  // namespace

Tensor& linspace_out(const Scalar& start, const Scalar& end, int64_t steps, std::optional<ScalarType> dtype,
                     std::optional<Device> device, Tensor& out) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  const ScalarType t = space_dtype(out, dtype);
  if (!out.defined()) {
    out = native::empty({steps}, t, device);
  } else if (out.numel() != steps) {
    resize_output(out, {steps});
  }
  if (steps == 0) return out;
  if (steps == 1) {
    if (t != ScalarType::Bool) dispatch_numeric(t, "linspace_cpu", [&](auto tag) { (void)checked_to<decltype(tag)>(start); });
    out.fill_(start);
    return out;
  }
  if (t == ScalarType::Bool) not_implemented("linspace_cpu", t);
  fill_contiguous(out, [&](Tensor& r) {
    dispatch_numeric(t, "linspace_cpu", [&](auto tag) {
      using T = decltype(tag);
      linspace_values(static_cast<T*>(r.data_ptr()), steps, start, end);
    });
  });
  return out;
}

Tensor& logspace_out(const Scalar& start, const Scalar& end, int64_t steps, double base,
                     std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  const ScalarType t = space_dtype(out, dtype);
  if (!out.defined()) {
    out = native::empty({steps}, t, device);
  } else if (out.numel() != steps) {
    resize_output(out, {steps});
  }
  if (steps == 0) return out;
  if (steps == 1) {
    const Scalar v(std::pow(base, start.to_double()));
    if (t != ScalarType::Bool) dispatch_numeric(t, "logspace_cpu", [&](auto tag) { (void)checked_to<decltype(tag)>(v); });
    out.fill_(v);
    return out;
  }
  if (t == ScalarType::Bool) not_implemented("logspace_cpu", t);
  fill_contiguous(out, [&](Tensor& r) {
    dispatch_numeric(t, "logspace_cpu", [&](auto tag) {
      using T = decltype(tag);
      logspace_values(static_cast<T*>(r.data_ptr()), steps, start, end, base);
    });
  });
  return out;
}

// ---- eye -----------------------------------------------------------------------------

Tensor& eye_m_out(int64_t n, int64_t m, std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  EMBER_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  prepare_factory_out(out, {n, m}, dtype, device, get_default_dtype());
  out.zero_();
  const int64_t k = std::min(n, m);
  if (k == 0) return out;
  // The diagonal as a strided view, filled with ones.
  Tensor diag = out.as_strided({k}, {out.stride(0) + out.stride(1)}, out.storage_offset());
  diag.fill_(Scalar(int64_t(1)));
  return out;
}

Tensor& eye_out(int64_t n, std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  EMBER_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  return eye_m_out(n, n, dtype, device, out);
}

}  // namespace ember::native
