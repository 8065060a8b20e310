#pragma once
// What the limited dtypes support (Note [Limited dtypes]): conversion, fill,
// and the few operators PyTorch runs on them, each through a carrier dtype.

#include "ember/ops/Tensor.h"
#include "ember/ops/TensorIterator.h"

namespace ember::native::limited {

// The full-tier dtype that holds every value of the limited dtype t exactly
// (int64 for uint16/32/64 — uint64 by its bits —, float32 for float8,
// complex64 for complex32). Only for convertible limited dtypes.
EMBER_API ScalarType carrier_of(ScalarType t);

// dst.copy_(src) where either side is a limited dtype and the dtypes differ.
EMBER_API void convert_copy(const Tensor& dst, const Tensor& src);

// dst.fill_(value) for a limited dtype.
EMBER_API void fill(const Tensor& dst, const Scalar& value);

// A pointwise operator whose common dtype is limited: eq/ne for every
// convertible limited dtype (and float4 pairs, by their bytes), bitwise
// and/or/xor for uint16/32/64, abs for float8 but e8m0fnu; the rest raise
// PyTorch's NotImplementedError.
EMBER_API void run_pointwise(const char* op, TensorIterator& it);

// out = self * other (uint16/32/64, float8, complex32), self + alpha * other
// (complex32): computed in the carrier dtype and rounded once.
EMBER_API Tensor& mul_out(const Tensor& self, const Tensor& other, Tensor& out);
// |self| of complex32 (a float16 result).
EMBER_API Tensor& abs_out(const Tensor& self, Tensor& out);
// -self for complex32; the other limited dtypes refuse it.
EMBER_API Tensor& neg_out(const Tensor& self, Tensor& out);
// sgn of complex32: z / (|z|, 0) divided as complex64 and rounded once, 0 at 0 (PyTorch's scalar loop).
EMBER_API Tensor& sgn_out(const Tensor& self, Tensor& out);
// The conjugate of complex32 (exact: only the imaginary signs change).
EMBER_API Tensor& conj_physical_out(const Tensor& self, Tensor& out);
EMBER_API Tensor& add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);

// A limited tensor's elements as integers of the same size (its bytes
// unchanged, conjugate resolved), for operators that only move, select or
// clear elements: complex32 as int32, float8 as uint8, uint16/32/64 as
// int16/32/64.
EMBER_API Tensor as_words(const Tensor& t);
// value stored as limited dtype t, read back as as_words(t)'s integer.
EMBER_API Scalar word_of(ScalarType t, const Scalar& value);

}  // namespace ember::native::limited
