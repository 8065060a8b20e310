#pragma once
// Opening a CUDA library at run time (cuDNN, cuFFT) from a list of candidate paths.
#include <dlfcn.h>

#include <string>
#include <vector>

namespace ember::cuda {

// The handle of the first candidate dlopen loads (RTLD_NOW | RTLD_LOCAL), or nullptr; each
// failure is appended to `tried` as "\n  <path>: <reason>".
inline void* open_first_library(const std::vector<std::string>& candidates, std::string& tried) {
  for (const std::string& c : candidates) {
    dlerror();
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* why = dlerror();
    tried += "\n  " + c + ": " + (why ? why : "not found");
  }
  return nullptr;
}

}  // namespace ember::cuda
