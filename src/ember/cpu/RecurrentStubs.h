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
  const void* gates;   // rows x 4*hidden: i, f, g, o pre-activations
  const void* cx;      // rows x hidden
  void* hy;            // forward outputs
  void* cy;
  const void* grad_h;  // backward inputs (either may be null)
  const void* grad_c;
  const void* cy_in;   // the forward's cy
  void* grad_gates;    // backward outputs
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

}  // namespace ember::cpu
