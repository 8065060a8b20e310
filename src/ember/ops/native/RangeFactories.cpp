// arange, linspace, logspace and eye: sizes, dtypes and checks. The value
// loops are cpu/kernels/RangeKernel.cpp (see Note [Range values]).
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/DispatchTables.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/FactoryUtils.h"
#include "ember/ops/native/RangeStubs.h"

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

namespace ember {
namespace cpu {
EMBER_DEFINE_DISPATCH(ArangeFn, arange_stub);
EMBER_DEFINE_DISPATCH(LinspaceFn, linspace_stub);
EMBER_DEFINE_DISPATCH(LogspaceFn, logspace_stub);
}  // namespace cpu

namespace native {

namespace {

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

// Runs the stub's kernel for r's device (libember_cuda registers CUDA's).
template <typename Stub, typename... Args>
void run_range_stub(const Stub& stub, const char* op, Tensor& r, const Args&... args) {
  const DeviceType device = r.device().type;
  if (device == DeviceType::CPU) return stub(r, args...);
  auto kernel = stub.for_device(device);
  if (!kernel) dispatch::missing_kernel(op, device);
  kernel(r, args...);
}

// Writes the values of a contiguous tensor computed in a contiguous buffer
// back when the destination is not contiguous.
template <typename F>
void fill_contiguous(Tensor& out, const F& fill) {
  if (out.is_meta()) return;  // no values to write (Note [Meta tensors])
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
    throw Error(
        str_cat("dtype ", enum_name(*dtype), " does not match dtype of out parameter (", enum_name(out.dtype()), ")"));
  }
}

// Bounds for the range kernels: int64 for integer outputs, else the exact
// double of the value in T (or in the accumulation type, for arange).
template <typename V>
cpu::RangeBounds bounds(V a, V b) {
  cpu::RangeBounds r;
  if constexpr (std::is_integral_v<V>) {
    r.i0 = static_cast<int64_t>(a);
    r.i1 = static_cast<int64_t>(b);
  } else {
    r.d0 = static_cast<double>(static_cast<std::conditional_t<std::is_same_v<V, double>, double, float>>(a));
    r.d1 = static_cast<double>(static_cast<std::conditional_t<std::is_same_v<V, double>, double, float>>(b));
  }
  return r;
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
  EMBER_CHECK((dst > 0 && de >= ds) || (dst < 0 && de <= ds),
              "upper bound and lower bound inconsistent with step sign");
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
  cpu::RangeBounds b;
  dispatch_numeric(t, "arange_cpu", [&](auto tag) {
    using T = decltype(tag);
    using acc =
        std::conditional_t<std::is_integral_v<T>, int64_t, std::conditional_t<is_16bit_float<T>, float, double>>;
    b = bounds(checked_to<acc>(start), checked_to<acc>(step));
  });
  fill_contiguous(out, [&](Tensor& r) { run_range_stub(cpu::arange_stub, "arange", r, b); });
  return out;
}

Tensor& arange_end_out(const Scalar& end, std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  return arange_out(Scalar(int64_t(0)), end, Scalar(int64_t(1)), dtype, device, out);
}

// ---- linspace, logspace ---------------------------------------------------------------

namespace {

// PyTorch's linspace_logspace_infer_options: complex bounds make the default
// complex dtype, and refuse a real one.
ScalarType space_dtype(const Tensor& out, std::optional<ScalarType> dtype, const Scalar& start, const Scalar& end,
                       const char* fn) {
  if (out.defined()) {
    check_out_dtype(out, dtype);
    return out.dtype();
  }
  if (start.is_complex() || end.is_complex()) {
    const ScalarType inferred =
        get_default_dtype() == ScalarType::Half ? ScalarType::ComplexHalf : to_complex_type(get_default_dtype());
    if (!dtype) return inferred;
    const char* name = inferred == ScalarType::ComplexHalf ? "c10::complex<c10::Half>" : cpp_type_name(inferred);
    EMBER_CHECK(is_complex_type_any_tier(*dtype), fn, ": inferred dtype ", name,
                " can't be safely cast to passed dtype ", enum_name(*dtype));
  }
  return dtype.value_or(get_default_dtype());
}

// dispatch_numeric with complex64 and complex128.
template <typename F>
void dispatch_space(ScalarType t, const char* name, const F& f) {
  if (t == ScalarType::ComplexFloat) return f(std::complex<float>());
  if (t == ScalarType::ComplexDouble) return f(std::complex<double>());
  dispatch_numeric(t, name, f);
}

// Bounds of complex outputs: each part rounded to the part's type.
template <typename C>
cpu::RangeBounds complex_bounds(const Scalar& start, const Scalar& end) {
  using R = typename C::value_type;
  const C a = start.to<C>(), b = end.to<C>();
  cpu::RangeBounds r;
  r.d0 = static_cast<double>(static_cast<R>(a.real()));
  r.d0_imag = static_cast<double>(static_cast<R>(a.imag()));
  r.d1 = static_cast<double>(static_cast<R>(b.real()));
  r.d1_imag = static_cast<double>(static_cast<R>(b.imag()));
  return r;
}

}  // namespace

Tensor& linspace_out(const Scalar& start, const Scalar& end, int64_t steps, std::optional<ScalarType> dtype,
                     std::optional<Device> device, Tensor& out) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  const ScalarType t = space_dtype(out, dtype, start, end, "torch.linspace()");
  if (!out.defined()) {
    out = native::empty({steps}, t, device);
  } else if (out.numel() != steps) {
    resize_output(out, {steps});
  }
  if (steps == 0) return out;
  if (steps == 1) {
    if (t != ScalarType::Bool && !is_complex_type(t))
      dispatch_numeric(t, "linspace_cpu", [&](auto tag) { (void)checked_to<decltype(tag)>(start); });
    out.fill_(start);
    return out;
  }
  if (t == ScalarType::Bool) not_implemented("linspace_cpu", t);
  cpu::RangeBounds b;
  dispatch_space(t, "linspace_cpu", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_complex_v<T>) {
      b = complex_bounds<T>(start, end);
    } else {
      b = bounds(checked_to<T>(start), checked_to<T>(end));
    }
  });
  fill_contiguous(out, [&](Tensor& r) { run_range_stub(cpu::linspace_stub, "linspace", r, b); });
  return out;
}

Tensor& logspace_out(const Scalar& start, const Scalar& end, int64_t steps, double base,
                     std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  const ScalarType t = space_dtype(out, dtype, start, end, "torch.logspace()");
  if (!out.defined()) {
    out = native::empty({steps}, t, device);
  } else if (out.numel() != steps) {
    resize_output(out, {steps});
  }
  if (steps == 0) return out;
  if (steps == 1) {
    if (is_complex_type_any_tier(t)) {
      out.fill_(Scalar(std::pow(std::complex<double>(base), start.to_complex())));
      return out;
    }
    const Scalar v(std::pow(base, start.to_double()));
    if (t != ScalarType::Bool)
      dispatch_numeric(t, "logspace_cpu", [&](auto tag) { (void)checked_to<decltype(tag)>(v); });
    out.fill_(v);
    return out;
  }
  if (t == ScalarType::Bool) not_implemented("logspace_cpu", t);
  cpu::RangeBounds b;
  dispatch_space(t, "logspace_cpu", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_complex_v<T>) {
      b = complex_bounds<T>(start, end);
    } else {
      b = bounds(checked_to<T>(start), checked_to<T>(end));
    }
  });
  fill_contiguous(out, [&](Tensor& r) { run_range_stub(cpu::logspace_stub, "logspace", r, b, base); });
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

}  // namespace native
}  // namespace ember
