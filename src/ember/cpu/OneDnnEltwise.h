#pragma once
// GELU through oneDNN's eltwise primitive (Note [GELU through oneDNN] in
// OneDnnEltwise.cpp).
#include <cstdint>

#include "ember/core/ScalarType.h"

namespace ember::native {

// y = gelu(x) (erf form) over n contiguous elements of dtype; false, with
// nothing written, where the build has no oneDNN or oneDNN refuses.
bool onednn_gelu_erf(ScalarType dtype, int64_t n, const void* x, void* y);

// dx = gelu'(x) * dy over n contiguous elements of dtype; false as above.
bool onednn_gelu_erf_backward(ScalarType dtype, int64_t n, const void* x, const void* dy, void* dx);

}  // namespace ember::native
