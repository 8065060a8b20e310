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
void packed(const void* stages, int count, int64_t n, void* data, int64_t dist, void* work, bool inverse) {
  auto addr = reinterpret_cast<std::uintptr_t>(work);
  auto* x = reinterpret_cast<fft::Pack<T>*>((addr + fft::kPackBytes - 1) / fft::kPackBytes * fft::kPackBytes);
  fft::run_packed_lines(static_cast<const fft::StageView<T>*>(stages), count, n, static_cast<std::complex<T>*>(data),
                        dist, x, x + n, inverse);
}

void fft_packed_kernel(bool is_double, const void* stages, int count, int64_t n, void* data, int64_t dist, void* work,
                       bool inverse) {
  if (is_double) {
    packed<double>(stages, count, n, data, dist, work, inverse);
  } else {
    packed<float>(stages, count, n, data, dist, work, inverse);
  }
}

}  // namespace

EMBER_REGISTER_DISPATCH(fft_packed_stub, &fft_packed_kernel);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
