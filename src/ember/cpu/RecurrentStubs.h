#pragma once
// Kernels of the fused LSTM cell (see Note [Fused LSTM cell] in
// cpu/RecurrentCell.cpp), selected at run time by CPU capability.

#include <cstdint>

#include "ember/core/ScalarType.h"
#include "ember/ops/DispatchStub.h"

namespace ember::cpu {

// One batch row range [begin, end) of `hidden` units; float32 or float64.
struct LstmCellArgs {
  int64_t hidden;
  const void* gates;  // rows x 4*hidden: i, f, g, o pre-activations
  const void* cx;  // rows x hidden
  void* hy;  // forward outputs
  void* cy;
  const void* grad_h;  // backward inputs (either may be null)
  const void* grad_c;
  const void* cy_in;  // the forward's cy
  void* grad_gates;  // backward outputs
  void* grad_cx;
  // Forward: also write the activated gates (sigmoid i, f, o; tanh g) here;
  // may be null, or equal to gates (in place).
  void* gates_act = nullptr;
  // Backward: gates holds activated gates (as gates_act wrote them), not
  // pre-activations.
  bool activated = false;
};

using LstmCellFn = void (*)(const LstmCellArgs&, ScalarType, int64_t begin, int64_t end);

EMBER_DECLARE_DISPATCH(LstmCellFn, lstm_cell_stub);
EMBER_DECLARE_DISPATCH(LstmCellFn, lstm_cell_backward_stub);

// C (m x n) = A (m x k) B (k x n) (FMA chains over k), plus C when
// accumulate, plus the column bias (n values) when not null, in that order; float32, row-major with leading dimensions.
// The small per-step products of the LSTM layer op, columns [n_begin, n_end)
// only (see Note [Recurrent step GEMM]).
using RecurrentGemmFn = void (*)(int64_t m, int64_t n_begin, int64_t n_end, int64_t k, const float* a, int64_t lda,
                                 const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate,
                                 const float* bias);
EMBER_DECLARE_DISPATCH(RecurrentGemmFn, recurrent_gemm_stub);

}  // namespace ember::cpu
