#pragma once
// SLEEF's vector functions, loaded at run time (Note [SLEEF for vector
// math] in Sleef.cpp).

#include <string>

#include "ember/core/Macros.h"

namespace ember::sleef {

// The functions PyTorch's AVX2 kernels take from SLEEF.
enum Fn : int { Exp, Log, Expm1, Log1p, Sinh, Cosh, Exp2, Lgamma, Atanh, Pow, Atan2, Hypot, kFnCount };

// Eight-float and four-double AVX2 forms of each function (`Sleef_expf8_u10avx2`
// and `Sleef_expd4_u10avx2` for Exp), as untyped pointers: the kernels built
// for AVX2 cast them to their vector signatures. Null without the library.
struct Table {
  const void* f[kFnCount];
  const void* d[kFnCount];
  bool loaded;
};

const Table& table();
// The file name the library was loaded from, or "" without it.
const char* info();

}  // namespace ember::sleef

namespace ember {
// "SLEEF: <path>" when the library was loaded, else "SLEEF: not loaded" (show_config).
EMBER_API std::string sleef_info();
}  // namespace ember
