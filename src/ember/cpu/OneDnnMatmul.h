#pragma once
// bfloat16/float16 matrix products through oneDNN's matmul (Note [16-bit
// products through oneDNN] in OneDnnMatmul.cpp).
#include <cstdint>

#include "ember/core/ScalarType.h"

namespace ember::native {

// PyTorch's mkldnn_bf16_device_check / mkldnn_fp16_device_check: whether it
// hands bfloat16 (float16) products and convolutions to oneDNN on this CPU.
// False for other dtypes and in builds without oneDNN.
bool onednn_takes_reduced(ScalarType dtype);

// C[i] (m x n, row-major, contiguous) = A[i] @ B[i] (+ C[i] when accumulate)
// for i < batch, where A[i] starts at a + i * a_bs (element strides a_rs,
// a_cs) and B[i] likewise. False, with nothing written, where PyTorch would
// not take oneDNN for this dtype on this CPU or the build has no oneDNN; the
// caller checks PyTorch's size threshold.
bool onednn_reduced_matmul(ScalarType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const void* a,
                           int64_t a_bs, int64_t a_rs, int64_t a_cs, const void* b, int64_t b_bs, int64_t b_rs,
                           int64_t b_cs, void* c, bool accumulate);

}  // namespace ember::native
