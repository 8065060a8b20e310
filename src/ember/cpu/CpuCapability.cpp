// Detects the CPU's vector extensions once and defines the dispatch stubs.
#include <cstdlib>
#include <cstring>

#include "ember/cpu/Stubs.h"

namespace ember {

namespace {

bool os_supports_avx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}
bool os_supports_avx2() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

CpuCapability detect() {
  CpuCapability best = CpuCapability::Default;
#ifdef EMBER_HAVE_AVX512_KERNELS
  if (os_supports_avx512()) best = CpuCapability::AVX512;
#endif
#ifdef EMBER_HAVE_AVX2_KERNELS
  if (best == CpuCapability::Default && os_supports_avx2()) best = CpuCapability::AVX2;
#endif
  if (const char* env = std::getenv("EMBER_CPU_CAPABILITY")) {
    CpuCapability asked = CpuCapability::Default;
    if (!strcasecmp(env, "avx512"))
      asked = CpuCapability::AVX512;
    else if (!strcasecmp(env, "avx2"))
      asked = CpuCapability::AVX2;
    if (static_cast<int>(asked) < static_cast<int>(best)) best = asked;
  }
  return best;
}

}  // namespace

CpuCapability cpu_capability() {
  static const CpuCapability c = detect();
  return c;
}

const char* cpu_capability_name(CpuCapability c) {
  switch (c) {
    case CpuCapability::AVX512: return "AVX512";
    case CpuCapability::AVX2: return "AVX2";
    default: return "DEFAULT";
  }
}

const char* compiled_cpu_capabilities() {
  return "DEFAULT"
#ifdef EMBER_HAVE_AVX2_KERNELS
         " AVX2"
#endif
#ifdef EMBER_HAVE_AVX512_KERNELS
         " AVX512"
#endif
      ;
}

namespace cpu {
EMBER_DEFINE_DISPATCH(BinaryScalarFn, add_stub);
EMBER_DEFINE_DISPATCH(IterFn, mul_stub);
EMBER_DEFINE_DISPATCH(IterFn, neg_stub);
EMBER_DEFINE_DISPATCH(BinaryScalarFn, fill_stub);
EMBER_DEFINE_DISPATCH(IterFn, copy_stub);
}  // namespace cpu

}  // namespace ember
