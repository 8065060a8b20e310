// Note [Fused LSTM cell]
// The LSTM layers (python/ember/nn/modules/rnn.py) project the whole input
// sequence once and then, per time step, add h W_hh^T + b_hh and apply the
// cell: i, f, o = sigmoid, g = tanh of the four gate blocks, c' = f c + i g,
// h' = o tanh(c'). Done as separate operators that is a dozen small kernels
// and graph nodes per step; _lstm_cell_fused does it in one pass with one
// backward node, whose gradient recomputes the gates from their
// pre-activations and c' (saved as the second output).
#include "ember/cpu/RecurrentStubs.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace cpu {
EMBER_DEFINE_DISPATCH(LstmCellFn, lstm_cell_stub);
EMBER_DEFINE_DISPATCH(LstmCellFn, lstm_cell_backward_stub);
}  // namespace cpu

namespace native {
namespace {

void check_cell_args(const Tensor& gates, const Tensor& cx) {
  EMBER_CHECK(
      gates.dim() == 2 && cx.dim() == 2 && gates.sizes()[0] == cx.sizes()[0] && gates.sizes()[1] == 4 * cx.sizes()[1],
      "_lstm_cell_fused: expected gates of shape [B, 4H] and cx of shape [B, H], got ", shape_string(gates.sizes()),
      " and ", shape_string(cx.sizes()));
  EMBER_CHECK(
      gates.dtype() == cx.dtype() && (gates.dtype() == ScalarType::Float || gates.dtype() == ScalarType::Double),
      "_lstm_cell_fused: expected float or double tensors of one dtype");
}

// The CPU kernel over rows (the operators are CPU-only).
void run_rows(DispatchStub<cpu::LstmCellFn>& stub, const cpu::LstmCellArgs& args, ScalarType t, int64_t rows) {
  const int64_t per_row = 4 * args.hidden;
  const auto kernel = stub.get();
  parallel_for(0, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(per_row, 1)),
               [&](int64_t b, int64_t e) { kernel(args, t, b, e); });
}

const void* data_or_null(const std::optional<Tensor>& t, Tensor& keep) {
  if (!t || !t->defined()) return nullptr;
  keep = t->contiguous();
  return keep.data_ptr();
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell_fused_cpu(const Tensor& gates_in, const Tensor& cx_in) {
  check_cell_args(gates_in, cx_in);
  Tensor gates = gates_in.contiguous(), cx = cx_in.contiguous();
  Tensor hy = ember::empty(cx.sizes(), cx.dtype(), cx.device());
  Tensor cy = ember::empty(cx.sizes(), cx.dtype(), cx.device());
  cpu::LstmCellArgs args{cx.sizes()[1], gates.data_ptr(), cx.data_ptr(), hy.data_ptr(), cy.data_ptr(),
                         nullptr,       nullptr,          nullptr,       nullptr,       nullptr};
  run_rows(cpu::lstm_cell_stub, args, cx.dtype(), cx.sizes()[0]);
  return {hy, cy};
}

std::tuple<Tensor, Tensor> lstm_cell_fused_backward_cpu(const Tensor& gates_in, const Tensor& cx_in,
                                                        const Tensor& cy_in, const std::optional<Tensor>& grad_h,
                                                        const std::optional<Tensor>& grad_c) {
  check_cell_args(gates_in, cx_in);
  Tensor gates = gates_in.contiguous(), cx = cx_in.contiguous(), cy = cy_in.contiguous(), gh, gc;
  Tensor grad_gates = ember::empty(gates.sizes(), gates.dtype(), gates.device());
  Tensor grad_cx = ember::empty(cx.sizes(), cx.dtype(), cx.device());
  cpu::LstmCellArgs args{cx.sizes()[1],
                         gates.data_ptr(),
                         cx.data_ptr(),
                         nullptr,
                         nullptr,
                         data_or_null(grad_h, gh),
                         data_or_null(grad_c, gc),
                         cy.data_ptr(),
                         grad_gates.data_ptr(),
                         grad_cx.data_ptr()};
  run_rows(cpu::lstm_cell_backward_stub, args, cx.dtype(), cx.sizes()[0]);
  return {grad_gates, grad_cx};
}

}  // namespace native
}  // namespace ember
