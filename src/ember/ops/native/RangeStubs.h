#pragma once
// Value loops of arange, linspace and logspace, declared for every device;
// the CPU's (cpu/kernels/RangeKernel.cpp) are chosen at run time by CPU
// capability; see Note [Range values] in ops/native/RangeFactories.cpp.
// `out` is contiguous and already sized.

#include <cstdint>

#include "ember/core/TensorBase.h"
#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

// Two bounds, already converted and range-checked by the caller: as int64 for
// integer outputs, as double for the others (exact values of the float or
// 16-bit float they were converted to).
struct RangeBounds {
  int64_t i0 = 0, i1 = 0;
  double d0 = 0, d1 = 0;
  double d0_imag = 0, d1_imag = 0;  // complex outputs: d0 + d0_imag i, d1 + d1_imag i
};

using ArangeFn = void (*)(const TensorBase& out, const RangeBounds& start_step);
using LinspaceFn = void (*)(const TensorBase& out, const RangeBounds& start_end);
using LogspaceFn = void (*)(const TensorBase& out, const RangeBounds& start_end, double base);

EMBER_DECLARE_DISPATCH(ArangeFn, arange_stub);
EMBER_DECLARE_DISPATCH(LinspaceFn, linspace_stub);
EMBER_DECLARE_DISPATCH(LogspaceFn, logspace_stub);

}  // namespace ember::cpu
