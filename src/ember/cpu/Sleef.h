#pragma once
// SLEEF's vector functions, loaded at run time (Note [SLEEF for vector
// math] in Sleef.cpp).

#include <string>

#include "ember/core/Macros.h"

namespace ember::sleef {

// The functions PyTorch's AVX2 and AVX512 kernels take from SLEEF.
enum Fn : int { Exp, Log, Expm1, Log1p, Sinh, Cosh, Exp2, Lgamma, Atanh, Pow, Atan2, Hypot, Tanh, kFnCount };

// Eight-float and four-double AVX2 forms of each function (`Sleef_expf8_u10avx2`
// and `Sleef_expd4_u10avx2` for Exp), and the sixteen-float and eight-double
// AVX-512 forms (`Sleef_expf16_u10avx512f`, `Sleef_expd8_u10avx512f`), as
// untyped pointers: the kernels built for AVX2 or AVX512 cast them to their
// vector signatures. Null without the library; loaded512 is false where the
// library lacks the AVX-512 forms.
struct Table {
  const void* f[kFnCount];
  const void* d[kFnCount];
  const void* f512[kFnCount];
  const void* d512[kFnCount];
  bool loaded;
  bool loaded512;
};

const Table& table();
// The file name the library was loaded from, or "" without it.
const char* info();

}  // namespace ember::sleef

namespace ember {
// "SLEEF: <path>" when the library was loaded, else "SLEEF: not loaded" (show_config).
EMBER_API std::string sleef_info();
}  // namespace ember
