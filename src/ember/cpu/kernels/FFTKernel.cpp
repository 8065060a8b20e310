// The packed FFT transform (cpu/FFTStubs.h), compiled once per CPU
// capability so that the butterflies on Pack vectors use its instructions.
#include <complex>
#include <cstdint>

#include "ember/cpu/FFTStages.h"
#include "ember/cpu/FFTStubs.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {
namespace {

template <typename T>
void packed(const void* stages, int count, int64_t n, const void* const* in, int64_t in_stride, void* const* out,
            int64_t out_stride, void* work, bool inverse, double scale, const void* split_tw) {
  auto addr = reinterpret_cast<std::uintptr_t>(work);
  auto* x = reinterpret_cast<fft::Pack<T>*>((addr + fft::kPackBytes - 1) / fft::kPackBytes * fft::kPackBytes);
  fft::run_packed_lines(static_cast<const fft::StageView<T>*>(stages), count, n,
                        reinterpret_cast<const std::complex<T>* const*>(in), in_stride,
                        reinterpret_cast<std::complex<T>* const*>(out), out_stride, x, x + n, inverse,
                        static_cast<T>(scale), static_cast<const std::complex<T>*>(split_tw));
}

void fft_packed_kernel(bool is_double, const void* stages, int count, int64_t n, const void* const* in,
                       int64_t in_stride, void* const* out, int64_t out_stride, void* work, bool inverse, double scale,
                       const void* split_tw) {
  if (is_double) {
    packed<double>(stages, count, n, in, in_stride, out, out_stride, work, inverse, scale, split_tw);
  } else {
    packed<float>(stages, count, n, in, in_stride, out, out_stride, work, inverse, scale, split_tw);
  }
}

template <typename T>
void bluestein(const void* stages, int count, int64_t m, int64_t n, const void* chirp, const void* spectrum,
               const void* const* in, int64_t in_stride, void* const* out, int64_t out_stride, void* work, bool inverse,
               double scale) {
  auto addr = reinterpret_cast<std::uintptr_t>(work);
  auto* x = reinterpret_cast<fft::Pack<T>*>((addr + fft::kPackBytes - 1) / fft::kPackBytes * fft::kPackBytes);
  fft::bluestein_packed_lines(
      static_cast<const fft::StageView<T>*>(stages), count, m, n, static_cast<const std::complex<T>*>(chirp),
      static_cast<const std::complex<T>*>(spectrum), reinterpret_cast<const std::complex<T>* const*>(in), in_stride,
      reinterpret_cast<std::complex<T>* const*>(out), out_stride, x, x + m, inverse, static_cast<T>(scale));
}

void fft_bluestein_packed_kernel(bool is_double, const void* stages, int count, int64_t m, int64_t n, const void* chirp,
                                 const void* spectrum, const void* const* in, int64_t in_stride, void* const* out,
                                 int64_t out_stride, void* work, bool inverse, double scale) {
  if (is_double) {
    bluestein<double>(stages, count, m, n, chirp, spectrum, in, in_stride, out, out_stride, work, inverse, scale);
  } else {
    bluestein<float>(stages, count, m, n, chirp, spectrum, in, in_stride, out, out_stride, work, inverse, scale);
  }
}

}  // namespace

EMBER_REGISTER_DISPATCH(fft_packed_stub, &fft_packed_kernel);
EMBER_REGISTER_DISPATCH(fft_bluestein_packed_stub, &fft_bluestein_packed_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
