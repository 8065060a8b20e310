// Dispatch tables of the fused loss kernels (cpu/LossStubs.h).
#include "ember/cpu/LossStubs.h"

namespace ember::cpu {
EMBER_DEFINE_DISPATCH(SquaredDiffSumFn, squared_diff_sum_stub);
}  // namespace ember::cpu
