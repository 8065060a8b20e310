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

// oneDNN's float32 LSTM cell (Note [oneDNN LSTM arithmetic]) on rows
// [b0, b1) of H units. Forward: pre (rows x 4H, the gates' products) gets the
// activated gates; bias is b_ih + b_hh. Backward: act holds the activated
// gates; dh_out, dh_next, dc_next may be null (zero); dc may be dc_next.
using OnednnLstmCellFn = void (*)(int64_t H, int64_t b0, int64_t b1, float* pre, const float* bias, const float* c_prev,
                                  float* c, float* h);
using OnednnLstmCellBackwardFn = void (*)(int64_t H, int64_t b0, int64_t b1, const float* act, const float* c_prev,
                                          const float* c, const float* dh_out, const float* dh_next,
                                          const float* dc_next, float* dG, float* dc);
EMBER_DECLARE_DISPATCH(OnednnLstmCellFn, onednn_lstm_cell_stub);
EMBER_DECLARE_DISPATCH(OnednnLstmCellBackwardFn, onednn_lstm_cell_backward_stub);

}  // namespace ember::cpu
