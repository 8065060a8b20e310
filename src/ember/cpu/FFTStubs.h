#pragma once
// The packed (several lines at once) mixed-radix transform, compiled once per
// CPU capability in cpu/kernels/FFTKernel.cpp.
#include <cstdint>

#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

// stages: StageView<float or double>[count]; data: complex lines, line k at
// data + k * dist; work: reals, packed_work_size() of them (ComplexPlan).
using FFTPackedFn = void (*)(bool is_double, const void* stages, int count, int64_t n, void* data, int64_t dist,
                             void* work, bool inverse);

EMBER_DECLARE_DISPATCH(FFTPackedFn, fft_packed_stub);

}  // namespace ember::cpu
