#pragma once
// The 16-bit floating types, which PyTorch's CPU kernels compute in float.
#include "ember/core/ScalarType.h"

namespace ember {

inline bool is_reduced_float(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

}  // namespace ember
