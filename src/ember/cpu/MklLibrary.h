#pragma once
// MKL's single dynamic library as Blas.cpp loads it (Note [MKL for matrix
// products]), for the other MKL domains Ember calls: DFTI and LAPACK.

#include <dlfcn.h>

namespace ember::blas {

// The loaded library (dlsym its entry points from it), or null without MKL.
void* mkl_library();
// Brings MKL's thread count for the calling thread in line with Ember's (one
// inside a parallel region); no-op without MKL.
void sync_mkl_threads();

// out = the entry point `name` of lib; whether it was found.
template <typename F>
bool find_symbol(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

}  // namespace ember::blas
