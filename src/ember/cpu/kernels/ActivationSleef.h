#pragma once
// Activations in PyTorch's loops on SLEEF's functions (Note [Activations on
// SLEEF] in ActivationSleefKernel.cpp). Each returns false, computing
// nothing, where it does not apply (no SLEEF, the Default kernels, another
// dtype); the caller then runs its own loop.
#include "ember/core/Scalar.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {
inline namespace EMBER_CPU_CAPABILITY_NS {

bool silu_sleef(const TensorIterator& it);
bool silu_backward_sleef(const TensorIterator& it);  // inputs (grad, self)
bool mish_sleef(const TensorIterator& it);
bool mish_backward_sleef(const TensorIterator& it);
bool softplus_sleef(const TensorIterator& it, const Scalar& beta, const Scalar& threshold);
bool softplus_backward_sleef(const TensorIterator& it, const Scalar& beta, const Scalar& threshold);
bool elu_sleef(const TensorIterator& it, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale);
bool elu_backward_sleef(const TensorIterator& it, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale);
bool log_sigmoid_sleef(const TensorIterator& it);
bool log_sigmoid_backward_sleef(const TensorIterator& it);
bool logaddexp_sleef(const TensorIterator& it);
bool logaddexp2_sleef(const TensorIterator& it);

}  // namespace EMBER_CPU_CAPABILITY_NS
}  // namespace ember::cpu
