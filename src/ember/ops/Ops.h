#pragma once
// Everything a C++ user of Ember needs: the Tensor class, every generated
// operator as a free function (ember::add, ember::sum, ...) and autograd.

#include "ember/ops/Tensor.h"
#include "ember/ops/generated/Functions.h"

namespace ember {

// C++ operators, with Python's meaning (numbers are weak scalars).
EMBER_API Tensor wrapped_scalar(const Scalar& s);
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, wrapped_scalar(b)); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, wrapped_scalar(b)); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, wrapped_scalar(b)); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(wrapped_scalar(a), b); }

// Builds a float32 or int64 tensor from a flat list of values and a shape.
EMBER_API Tensor from_vector(const std::vector<double>& values, IntArrayRef sizes,
                             ScalarType dtype = ScalarType::Float);
// Copies a tensor's values out as doubles (row-major).
EMBER_API std::vector<double> to_vector(const Tensor& t);
// A short, human-readable rendering for C++ users (Python prints PyTorch's format).
EMBER_API std::string to_string(const Tensor& t);
}  // namespace ember
