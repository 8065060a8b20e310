#pragma once
// A value of one of the types operators and custom functions pass around
// (PyTorch's IValue, for what C++ code keeps in ctx->saved_data): none, a
// tensor, a float, an int, a bool, a string, or a list of ints, floats or
// tensors.

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ember/core/Error.h"
#include "ember/ops/Tensor.h"

namespace ember {

class IValue {
 public:
  IValue() = default;
  IValue(Tensor t) : v_(std::move(t)) {}  // NOLINT
  template <typename F, std::enable_if_t<std::is_floating_point_v<F>, int> = 0>
  IValue(F d) : v_(static_cast<double>(d)) {}  // NOLINT
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  IValue(I i) : v_(static_cast<int64_t>(i)) {}  // NOLINT
  template <typename B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  IValue(B b) : v_(b) {}  // NOLINT
  IValue(std::string s) : v_(std::move(s)) {}  // NOLINT
  IValue(const char* s) : v_(std::string(s)) {}  // NOLINT
  IValue(std::vector<int64_t> l) : v_(std::move(l)) {}  // NOLINT
  IValue(IntArrayRef l) : v_(l.vec()) {}  // NOLINT
  IValue(std::vector<double> l) : v_(std::move(l)) {}  // NOLINT
  IValue(std::vector<Tensor> l) : v_(std::move(l)) {}  // NOLINT
  IValue(const Scalar& s) {  // NOLINT
    if (s.is_bool()) {
      v_ = s.to_bool();
    } else if (s.is_integral()) {
      v_ = s.to_long();
    } else {
      v_ = s.to_double();
    }
  }

  bool isNone() const { return v_.index() == 0; }
  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  bool isDouble() const { return std::holds_alternative<double>(v_); }
  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isIntList() const { return std::holds_alternative<std::vector<int64_t>>(v_); }
  bool isDoubleList() const { return std::holds_alternative<std::vector<double>>(v_); }
  bool isTensorList() const { return std::holds_alternative<std::vector<Tensor>>(v_); }

  Tensor toTensor() const { return get<Tensor>("Tensor"); }
  double toDouble() const { return get<double>("Double"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  bool toBool() const { return get<bool>("Bool"); }
  const std::string& toStringRef() const { return get_ref<std::string>("String"); }
  std::vector<int64_t> toIntVector() const { return get<std::vector<int64_t>>("IntList"); }
  std::vector<double> toDoubleVector() const { return get<std::vector<double>>("DoubleList"); }
  std::vector<Tensor> toTensorVector() const { return get<std::vector<Tensor>>("TensorList"); }
  // An int, float or bool as a Scalar.
  Scalar toScalar() const {
    if (isDouble()) return Scalar(toDouble());
    if (isInt()) return Scalar(toInt());
    if (isBool()) return Scalar(toBool());
    throw Error(str_cat("IValue is not a Scalar, it is a ", tag_name()));
  }

  // The kind of value held, as PyTorch names it in messages ("Double").
  const char* tag_name() const {
    static const char* names[] = {"None",   "Tensor",  "Double",     "Int",       "Bool",
                                  "String", "IntList", "DoubleList", "TensorList"};
    return names[v_.index()];
  }

 private:
  template <typename T>
  const T& get_ref(const char* expected) const {
    if (!std::holds_alternative<T>(v_)) throw Error(str_cat("Expected ", expected, " but got ", tag_name()));
    return std::get<T>(v_);
  }
  template <typename T>
  T get(const char* expected) const {
    return get_ref<T>(expected);
  }

  std::variant<std::monostate, Tensor, double, int64_t, bool, std::string, std::vector<int64_t>, std::vector<double>,
               std::vector<Tensor>>
      v_;
};

}  // namespace ember
