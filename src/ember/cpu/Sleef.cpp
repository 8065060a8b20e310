#include "ember/cpu/Sleef.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace ember::sleef {

namespace {
// Note [SLEEF for vector math]
// PyTorch's AVX2 kernels compute exp (inside softmax, log_softmax, sigmoid,
// GELU and the log-softmax gradient), expm1, log1p, sinh, cosh, exp2, lgamma,
// atanh, pow, atan2, hypot and GELU's tanh with SLEEF 3.x
// (`Vectorized<float>::exp` is `Sleef_expf8_u10`), 8 floats or 4 doubles at
// a time, and their scalar remainders with libm. Measured against torch
// 2.13, Debian's libsleef 3.5.1 gives the same bits in every element (its
// erf, which these kernels do not take, differs from PyTorch's 3.6 in 1-3 %
// of doubles). So when `libsleef.so.3` can be
// loaded (EMBER_SLEEF_LIBRARY names another file; EMBER_SLEEF=0 turns it
// off), the AVX2 kernels call its `*avx2` functions; without it they keep
// Ember's own vector math (docs/decisions/0075-sleef-vector-math.md).
// Its AVX512 kernels take the same functions' `*avx512f` forms, 16 floats or
// 8 doubles at a time, from the same library, and the AVX512 kernels call
// those in the same loops (Note [SLEEF loops]).
struct Names {
  const char* f;
  const char* d;
};
constexpr Names kNames[kFnCount] = {
    {"Sleef_expf8_u10avx2", "Sleef_expd4_u10avx2"},     {"Sleef_logf8_u10avx2", "Sleef_logd4_u10avx2"},
    {"Sleef_expm1f8_u10avx2", "Sleef_expm1d4_u10avx2"}, {"Sleef_log1pf8_u10avx2", "Sleef_log1pd4_u10avx2"},
    {"Sleef_sinhf8_u10avx2", "Sleef_sinhd4_u10avx2"},   {"Sleef_coshf8_u10avx2", "Sleef_coshd4_u10avx2"},
    {"Sleef_exp2f8_u10avx2", "Sleef_exp2d4_u10avx2"},   {"Sleef_lgammaf8_u10avx2", "Sleef_lgammad4_u10avx2"},
    {"Sleef_atanhf8_u10avx2", "Sleef_atanhd4_u10avx2"}, {"Sleef_powf8_u10avx2", "Sleef_powd4_u10avx2"},
    {"Sleef_atan2f8_u10avx2", "Sleef_atan2d4_u10avx2"}, {"Sleef_hypotf8_u05avx2", "Sleef_hypotd4_u05avx2"},
    {"Sleef_tanhf8_u10avx2", "Sleef_tanhd4_u10avx2"},
};
constexpr Names kNames512[kFnCount] = {
    {"Sleef_expf16_u10avx512f", "Sleef_expd8_u10avx512f"},
    {"Sleef_logf16_u10avx512f", "Sleef_logd8_u10avx512f"},
    {"Sleef_expm1f16_u10avx512f", "Sleef_expm1d8_u10avx512f"},
    {"Sleef_log1pf16_u10avx512f", "Sleef_log1pd8_u10avx512f"},
    {"Sleef_sinhf16_u10avx512f", "Sleef_sinhd8_u10avx512f"},
    {"Sleef_coshf16_u10avx512f", "Sleef_coshd8_u10avx512f"},
    {"Sleef_exp2f16_u10avx512f", "Sleef_exp2d8_u10avx512f"},
    {"Sleef_lgammaf16_u10avx512f", "Sleef_lgammad8_u10avx512f"},
    {"Sleef_atanhf16_u10avx512f", "Sleef_atanhd8_u10avx512f"},
    {"Sleef_powf16_u10avx512f", "Sleef_powd8_u10avx512f"},
    {"Sleef_atan2f16_u10avx512f", "Sleef_atan2d8_u10avx512f"},
    {"Sleef_hypotf16_u05avx512f", "Sleef_hypotd8_u05avx512f"},
    {"Sleef_tanhf16_u10avx512f", "Sleef_tanhd8_u10avx512f"},
};

struct Loaded {
  Table table{};
  std::string info;
};

Loaded load() {
  Loaded l;
  const char* off = std::getenv("EMBER_SLEEF");
  if (off && std::string(off) == "0") return l;
  // EMBER_SLEEF_LIBRARY, else the copy the package carries beside this
  // library, else the loader's search path.
  std::string name;
  const char* path = std::getenv("EMBER_SLEEF_LIBRARY");
  void* lib = nullptr;
  if (path && *path) {
    name = path;
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  } else {
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&sleef_info), &self) && self.dli_fname) {
      const std::string here(self.dli_fname);
      const std::string beside = here.substr(0, here.find_last_of('/') + 1) + "libsleef.so.3";
      lib = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib) name = beside;
    }
    if (!lib) {
      name = "libsleef.so.3";
      lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
  }
  if (!lib) return l;
  for (int i = 0; i < kFnCount; ++i) {
    l.table.f[i] = dlsym(lib, kNames[i].f);
    l.table.d[i] = dlsym(lib, kNames[i].d);
    if (!l.table.f[i] || !l.table.d[i]) {
      dlclose(lib);
      return Loaded{};
    }
  }
  // The AVX-512 forms are all there or unused.
  l.table.loaded512 = true;
  for (int i = 0; i < kFnCount; ++i) {
    l.table.f512[i] = dlsym(lib, kNames512[i].f);
    l.table.d512[i] = dlsym(lib, kNames512[i].d);
    l.table.loaded512 = l.table.loaded512 && l.table.f512[i] && l.table.d512[i];
  }
  l.info = name;
  l.table.loaded = true;
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}
}  // namespace

const Table& table() { return loaded().table; }
const char* info() { return loaded().info.c_str(); }

}  // namespace ember::sleef

namespace ember {
std::string sleef_info() {
  return sleef::table().loaded ? std::string("SLEEF: ") + sleef::info() : std::string("SLEEF: not loaded");
}
}  // namespace ember
