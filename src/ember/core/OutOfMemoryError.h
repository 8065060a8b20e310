#pragma once
// The error a device allocator throws when the device is full.
#include "ember/core/Error.h"

namespace ember {

// Python: torch.OutOfMemoryError (a RuntimeError).
class EMBER_CORE_API OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

}  // namespace ember
