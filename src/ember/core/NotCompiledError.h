#pragma once
// The error for a device this build has no backend for.
#include "ember/core/Error.h"

namespace ember {

// Python: AssertionError, as PyTorch's "Torch not compiled with CUDA enabled".
class EMBER_CORE_API NotCompiledError : public Error {
 public:
  using Error::Error;
};

// Python: ModuleNotFoundError (a device type whose module is not installed).
class EMBER_CORE_API MissingModuleError : public Error {
 public:
  using Error::Error;
};

}  // namespace ember
