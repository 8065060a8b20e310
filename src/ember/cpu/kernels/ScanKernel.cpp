// Cumulative sums and products, compiled once per CPU capability.
#include <complex>
#include <vector>

#include "ember/cpu/kernels/ReduceEngine.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

// Running value: double for float/double (as PyTorch's CPU scan), float for
// 16-bit floats, wrapping uint64 for integers.
template <typename T>
using scan_acc_t =
    std::conditional_t<std::is_integral_v<T>, uint64_t, std::conditional_t<sizeof(T) == 2, float, double>>;

template <typename T>
void scan_typed(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool is_prod) {
  using Acc = scan_acc_t<T>;
  const T* x = static_cast<const T*>(in.data_ptr());
  T* y = static_cast<T*>(out.data_ptr());
  auto to = [](const T& v) { return to_acc<Acc>(v); };
  auto from = [](Acc a) { return from_acc<T>(a); };
  const Acc init = is_prod ? Acc(1) : Acc(0);
  constexpr int64_t kCols = 1024;
  const int64_t nblocks = (inner + kCols - 1) / kCols;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n * std::min(inner, kCols), 1));
  parallel_for(0, outer * nblocks, grain, [&](int64_t b, int64_t e) {
    std::vector<Acc> acc(static_cast<size_t>(std::min(inner, kCols)));
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nblocks, c0 = (t % nblocks) * kCols;
      const int64_t nc = std::min(kCols, inner - c0);
      const T* xs = x + o * n * inner + c0;
      T* ys = y + o * n * inner + c0;
      if (inner == 1) {
        Acc a = init;
        if (is_prod) {
          for (int64_t i = 0; i < n; ++i) ys[i] = from(a *= to(xs[i]));
        } else {
          for (int64_t i = 0; i < n; ++i) ys[i] = from(a += to(xs[i]));
        }
        continue;
      }
      for (int64_t c = 0; c < nc; ++c) acc[c] = init;
      for (int64_t i = 0; i < n; ++i) {
        const T* row = xs + i * inner;
        T* yrow = ys + i * inner;
        if (is_prod) {
          for (int64_t c = 0; c < nc; ++c) yrow[c] = from(acc[c] *= to(row[c]));
        } else {
          for (int64_t c = 0; c < nc; ++c) yrow[c] = from(acc[c] += to(row[c]));
        }
      }
    }
  });
}

// cumsum/cumprod of complex numbers: a sequential loop that accumulates in
// complex<double> (PyTorch's accumulate type) and multiplies as its
// c10::complex product: part by part, without C99's inf/nan recovery, fused
// where this build has fused multiply-adds (as GCC contracts PyTorch's
// scalar code in its capability builds).
template <typename T>
void complex_scan(const Tensor& in, Tensor& result, int64_t outer, int64_t n, int64_t inner, bool is_prod) {
  const auto* src = reinterpret_cast<const std::complex<T>*>(in.data_ptr());
  auto* dst = reinterpret_cast<std::complex<T>*>(result.data_ptr());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double re = is_prod ? 1.0 : 0.0, im = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t k = (o * n + j) * inner + i;
        const double xr = src[k].real(), xi = src[k].imag();
        if (is_prod) {
          const double r = capability_fma(re, xr, -(im * xi));
          im = capability_fma(re, xi, im * xr);
          re = r;
        } else {
          re += xr;
          im += xi;
        }
        dst[k] = std::complex<T>(static_cast<T>(re), static_cast<T>(im));
      }
    }
  }
}

void scan_kernel(const Tensor& in, Tensor& out, int64_t outer, int64_t n, int64_t inner, bool is_prod) {
  if (out.dtype() == ScalarType::ComplexFloat) return complex_scan<float>(in, out, outer, n, inner, is_prod);
  if (out.dtype() == ScalarType::ComplexDouble) return complex_scan<double>(in, out, outer, n, inner, is_prod);
  EMBER_USE_BASELINE_KERNEL_FOR(out.dtype(), scan_stub, in, out, outer, n, inner, is_prod);
  EMBER_DISPATCH_KERNEL_TYPES(out.dtype(), is_prod ? "cumprod" : "cumsum",
                              [&] { scan_typed<scalar_t>(in, out, outer, n, inner, is_prod); });
}

}  // namespace

EMBER_REGISTER_DISPATCH(scan_stub, &scan_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
