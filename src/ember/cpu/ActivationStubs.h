#pragma once
// Kernels of the nn activations (leaky_relu, elu, softplus, ...), selected at
// run time by CPU capability. One forward stub and one gradient stub serve all
// activations; ActivationOp picks the formula and a, b, c carry its parameters.

#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

// The numbers are part of ops.yaml (the `op` argument of _activation_backward).
enum class ActivationOp : int64_t {
  LeakyRelu = 0,    // a: negative slope
  Elu = 1,          // a: alpha, b: scale, c: input scale
  Softplus = 2,     // a: beta, b: threshold
  Hardtanh = 3,     // a: min, b: max
  Hardsigmoid = 4,
  Hardswish = 5,
  Mish = 6,
  LogSigmoid = 7,
  Threshold = 8,    // a: threshold, b: value
  Erfinv = 9,       // forward only
  // Gradient stub only, inputs (target, input): the elementwise binary cross
  // entropy, with libm's log and log1p as PyTorch's scalar loop.
  BinaryCrossEntropy = 10,
  // Gradient stub only, fused forms of the derivative formulas: inputs
  // (grad, result) for tanh and sigmoid, (grad, self) for silu.
  TanhGrad = 11,
  SigmoidGrad = 12,
  SiluGrad = 13,
};

using ActivationFn = void (*)(const TensorIterator&, ActivationOp, double a, double b, double c);

// Forward: one input x. Backward: inputs (grad, x), out = grad * d op / dx.
EMBER_DECLARE_DISPATCH(ActivationFn, activation_stub);
EMBER_DECLARE_DISPATCH(ActivationFn, activation_backward_stub);

}  // namespace ember::cpu
