#pragma once
// Everything a C++ user of Ember needs: the Tensor class, every generated
// operator as a free function (ember::add, ember::sum, ...) and autograd.

#include "ember/ops/OptionsFactories.h"
#include "ember/ops/Tensor.h"
#include "ember/ops/TensorIndexing.h"
#include "ember/ops/generated/Functions.h"

namespace ember {

// C++ operators, with Python's meaning (numbers are weak scalars); a tensor
// and a number go through the .Scalar operators (MulBackward1), as in
// PyTorch's C++ API.
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return sub(wrapped_scalar(a), b); }
inline Tensor operator/(const Scalar& a, const Tensor& b) { return div(wrapped_scalar(a), b); }
inline Tensor& operator+=(Tensor& a, const Tensor& b) {
  a.add_(b);
  return a;
}
inline Tensor& operator-=(Tensor& a, const Tensor& b) {
  a.sub_(b);
  return a;
}
inline Tensor& operator*=(Tensor& a, const Tensor& b) {
  a.mul_(b);
  return a;
}
inline Tensor& operator/=(Tensor& a, const Tensor& b) {
  a.div_(b);
  return a;
}
inline Tensor& operator+=(Tensor& a, const Scalar& b) {
  a.add_(wrapped_scalar(b));
  return a;
}
inline Tensor& operator-=(Tensor& a, const Scalar& b) {
  a.sub_(wrapped_scalar(b));
  return a;
}
inline Tensor& operator*=(Tensor& a, const Scalar& b) {
  a.mul_(wrapped_scalar(b));
  return a;
}
inline Tensor& operator/=(Tensor& a, const Scalar& b) {
  a.div_(wrapped_scalar(b));
  return a;
}
// Comparisons give bool tensors, as in Python.
#define EMBER_COMPARISON_OPERATOR(OP, NAME)                                          \
  inline Tensor operator OP(const Tensor& a, const Tensor& b) { return NAME(a, b); } \
  inline Tensor operator OP(const Tensor& a, const Scalar& b) { return NAME(a, b); }
EMBER_COMPARISON_OPERATOR(<, lt)
EMBER_COMPARISON_OPERATOR(<=, le)
EMBER_COMPARISON_OPERATOR(>, gt)
EMBER_COMPARISON_OPERATOR(>=, ge)
EMBER_COMPARISON_OPERATOR(==, eq)
EMBER_COMPARISON_OPERATOR(!=, ne)
#undef EMBER_COMPARISON_OPERATOR

// The free forms of Tensor's hand-written methods (ember::equal(a, b)).
inline bool equal(const Tensor& a, const Tensor& b) { return a.equal(b); }
inline bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08,
                     bool equal_nan = false) {
  return a.allclose(b, rtol, atol, equal_nan);
}
inline Tensor norm(const Tensor& a, const Scalar& p = 2) { return a.norm(p); }
inline Tensor norm(const Tensor& a, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim = false) {
  return a.norm(p, dim, keepdim);
}

// Builds a float32 or int64 tensor from a flat list of values and a shape.
EMBER_API Tensor from_vector(const std::vector<double>& values, IntArrayRef sizes,
                             ScalarType dtype = ScalarType::Float);
// Copies a tensor's values out as doubles (row-major).
EMBER_API std::vector<double> to_vector(const Tensor& t);
// A short, human-readable rendering for C++ users (Python prints PyTorch's format).
EMBER_API std::string to_string(const Tensor& t);
}  // namespace ember
