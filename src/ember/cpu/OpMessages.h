#pragma once
// Pieces of PyTorch's error messages shared by the reduction, softmax and
// matrix-product kernels' argument checks.

#include <string>

#include "ember/ops/Tensor.h"

namespace ember::native {

// The C++ element type name PyTorch prints in messages (out= dtypes,
// masked_fill values, random bounds: "from is out of bounds for float").
inline const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "unsigned char";
    case ScalarType::Char: return "signed char";
    case ScalarType::Short: return "short int";
    case ScalarType::Int: return "int";
    case ScalarType::Long: return "long int";
    case ScalarType::Half: return "c10::Half";
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
    case ScalarType::Bool: return "bool";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::ComplexFloat: return "c10::complex<float>";
    case ScalarType::ComplexDouble: return "c10::complex<double>";
    default: return "undefined";
  }
}

// out= must have exactly this dtype (when given).
inline void check_out_dtype(const Tensor& out, ScalarType want) {
  EMBER_CHECK(!out.defined() || out.dtype() == want, "Expected out tensor to have dtype ", cpp_type_name(want),
              ", but got ", cpp_type_name(out.dtype()), " instead");
}

}  // namespace ember::native
