#pragma once
// Complex-number kernels (cpu/kernels/ComplexKernel.cpp). The pointwise
// operators that take complex dtypes have generated <op>_complex_stubs
// instead (ember/ops/generated/PointwiseStubs.h).

#include "ember/core/Scalar.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/TensorIterator.h"

namespace ember::cpu {

using ComplexIterFn = void (*)(const TensorIterator&);
using ComplexScalarFn = void (*)(const TensorIterator&, const Scalar&);

EMBER_DECLARE_DISPATCH(ComplexScalarFn, add_complex_stub);  // out = a + alpha * b
EMBER_DECLARE_DISPATCH(ComplexIterFn, mul_complex_stub);
// self + value * t1 * t2, or self + value * t1 / t2 (divide).
using ComplexAddcFn = void (*)(const TensorIterator&, const Scalar& value, bool divide);
EMBER_DECLARE_DISPATCH(ComplexAddcFn, addc_complex_stub);
// lerp(self, end, weight) with a number or (third input) a tensor weight.
EMBER_DECLARE_DISPATCH(ComplexScalarFn, lerp_scalar_complex_stub);
EMBER_DECLARE_DISPATCH(ComplexIterFn, lerp_tensor_complex_stub);
EMBER_DECLARE_DISPATCH(ComplexIterFn, neg_complex_stub);
// z * z, as pow(z, 2) computes it.
EMBER_DECLARE_DISPATCH(ComplexIterFn, square_complex_stub);
// log1p, expm1 and sinc of complex numbers (the other functions of
// cpu/ComplexMathStubs.h are the baseline build's).
EMBER_DECLARE_DISPATCH(ComplexIterFn, log1p_complex_stub);
EMBER_DECLARE_DISPATCH(ComplexIterFn, expm1_complex_stub);
EMBER_DECLARE_DISPATCH(ComplexIterFn, sinc_complex_stub);
EMBER_DECLARE_DISPATCH(ComplexIterFn, conj_complex_stub);
EMBER_DECLARE_DISPATCH(ComplexIterFn, sgn_complex_stub);
// Complex input, real output.
EMBER_DECLARE_DISPATCH(ComplexIterFn, abs_complex_stub);
// angle of complex (real output) or real (0, pi or nan) inputs.
EMBER_DECLARE_DISPATCH(ComplexIterFn, angle_stub);
// Real inputs, complex output: real + i imag and abs * e^(i angle).
EMBER_DECLARE_DISPATCH(ComplexIterFn, make_complex_stub);
EMBER_DECLARE_DISPATCH(ComplexIterFn, polar_stub);

}  // namespace ember::cpu
