#pragma once
// Same-device copy of the CUDA backend: dtype cast and any strides.
#include "ember/core/Macros.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cuda {

// Runs the copy of an iterator made by TensorIterator::copy_op(dst, src)
// whose operands are on one CUDA device (src may be a 0-dim CPU tensor).
// Defined in cuda/kernels/Copy.cu; it is also the CUDA kernel of copy_stub.
EMBER_EXPORT void copy_kernel_cuda(TensorIterator& iter);

}  // namespace ember::cuda
