#pragma once
// Fused loss kernels selected by CPU capability (cpu/kernels/LossKernel.cpp).

#include <cstdint>

#include "ember/core/ScalarType.h"
#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

// sum((a[i] - b[i])^2) over n contiguous elements of float or double, each
// square rounded to the dtype, summed in the order of
// sum(self - target).pow(2) (so the fused mse_loss equals the unfused one).
// The result is exact in the returned double.
using SquaredDiffSumFn = double (*)(const void* a, const void* b, int64_t n, ScalarType t);
EMBER_DECLARE_DISPATCH(SquaredDiffSumFn, squared_diff_sum_stub);

}  // namespace ember::cpu
