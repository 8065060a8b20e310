#pragma once
// Source compatibility with PyTorch's C++ API: the at::, c10:: and torch::
// names that Ember provides, as aliases of ember::. What is covered is listed
// in docs/cpp_extensions.md.

#include <ostream>
#include <string>

#include "ember/autograd/CustomFunction.h"
#include "ember/autograd/Engine.h"
#include "ember/autograd/GradMode.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"

namespace ember {
// Shapes compare and print as PyTorch's IntArrayRef does ("[2, 3]").
inline bool operator==(IntArrayRef a, IntArrayRef b) { return a.equals(b); }
inline bool operator!=(IntArrayRef a, IntArrayRef b) { return !a.equals(b); }
inline std::ostream& operator<<(std::ostream& os, IntArrayRef s) { return os << shape_string(s); }
// dtypes print as PyTorch's C++ names them ("Float"), devices as "cpu", "cuda:0".
inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << dtype_message_name(t); }
inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }
inline std::ostream& operator<<(std::ostream& os, Layout) { return os << "Strided"; }
}  // namespace ember

namespace ember::compat {

// TORCH_CHECK's message: the given parts, or PyTorch's text when none.
inline std::string check_message(const char* condition) {
  return ::ember::str_cat("Expected ", condition,
                          " to be true, but got false.  (Could this error message be improved?  If so, please "
                          "report an enhancement request to PyTorch.)");
}
template <typename... Args>
std::string check_message(const char*, const Args&... parts) {
  return ::ember::str_cat(parts...);
}

template <ScalarType T>
struct ScalarTypeToCpp;
#define EMBER_COMPAT_ENUM_TO_CPP(cpp, name, py, legacy) \
  template <>                                           \
  struct ScalarTypeToCpp<ScalarType::name> {            \
    using type = cpp;                                   \
  };
EMBER_FORALL_SCALAR_TYPES(EMBER_COMPAT_ENUM_TO_CPP)
#undef EMBER_COMPAT_ENUM_TO_CPP

[[noreturn]] inline void dispatch_unsupported(const char* name, ScalarType t) {
  throw ::ember::NotImplementedError(
      ::ember::str_cat("\"", name, "\" not implemented for '", ::ember::dtype_message_name(t), "'"));
}

// c10::toString(dtype) ("Float"), c10::elementSize(dtype); x.dtype() is a
// ScalarType already, so typeMetaToScalarType returns it.
inline std::string toString(ScalarType t) { return dtype_message_name(t); }
inline size_t elementSize(ScalarType t) { return ::ember::element_size(t); }
inline ScalarType typeMetaToScalarType(ScalarType t) { return t; }

// Sets grad mode off for a scope (torch::NoGradGuard).
struct NoGradGuard {
  ::ember::autograd::GradModeGuard guard{false};
};
// Kernels below autograd: no graph, no version bumps (PyTorch's
// at::AutoDispatchBelowADInplaceOrView / AutoDispatchBelowAutograd).
struct AutoDispatchBelowADInplaceOrView {
  ::ember::autograd::BelowAutogradGuard guard;
};
// c10::InferenceMode guard: inference mode (and no grad) for a scope.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true)
      : prev_(::ember::autograd::InferenceMode::is_enabled()),
        grad_(!enabled && ::ember::autograd::GradMode::is_enabled()) {
    ::ember::autograd::InferenceMode::set_enabled(enabled);
  }
  ~InferenceMode() { ::ember::autograd::InferenceMode::set_enabled(prev_); }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled() { return ::ember::autograd::InferenceMode::is_enabled(); }

 private:
  bool prev_;
  ::ember::autograd::GradModeGuard grad_;
};
struct AutoGradMode {
  explicit AutoGradMode(bool enabled) : guard(enabled) {}
  ::ember::autograd::GradModeGuard guard;
};

}  // namespace ember::compat

namespace c10 {
using namespace ::ember;
template <typename T>
using optional = std::optional<T>;
using ::ember::BFloat16;
using ::ember::Half;
using ::ember::compat::AutoDispatchBelowADInplaceOrView;
using AutoDispatchBelowAutograd = ::ember::compat::AutoDispatchBelowADInplaceOrView;
using ::ember::compat::AutoGradMode;
using ::ember::compat::elementSize;
using ::ember::compat::InferenceMode;
using ::ember::compat::NoGradGuard;
using ::ember::compat::toString;
using ::ember::compat::typeMetaToScalarType;
}  // namespace c10
namespace at {
using namespace ::c10;
}  // namespace at
namespace torch {
using namespace ::at;
using Dtype = ::ember::ScalarType;
namespace autograd {
using ::ember::autograd::AutogradContext;
using ::ember::autograd::backward;
using ::ember::autograd::Function;
using ::ember::autograd::grad;
using ::ember::autograd::GradMode;
using ::ember::autograd::Node;
using ::ember::autograd::tensor_list;
using ::ember::autograd::variable_list;
using Variable = ::ember::Tensor;
}  // namespace autograd
// Extensions written for PyTorch wrap their functions with this; Ember's
// exception translation is registered for every extension module instead.
template <typename F>
F wrap_pybind_function(F f) {
  return f;
}
}  // namespace torch

#define TORCH_CHECK(cond, ...)                                                               \
  do {                                                                                       \
    if (!(cond)) throw ::ember::Error(::ember::compat::check_message(#cond, ##__VA_ARGS__)); \
  } while (0)
#define EMBER_COMPAT_CHECK_AS(KIND, cond, ...)                                              \
  do {                                                                                      \
    if (!(cond)) throw ::ember::KIND(::ember::compat::check_message(#cond, ##__VA_ARGS__)); \
  } while (0)
#define TORCH_CHECK_VALUE(cond, ...) EMBER_COMPAT_CHECK_AS(ValueError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) EMBER_COMPAT_CHECK_AS(TypeError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) EMBER_COMPAT_CHECK_AS(IndexError, cond, ##__VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) EMBER_COMPAT_CHECK_AS(NotImplementedError, cond, ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...) EMBER_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) EMBER_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
// The older spellings extensions still use.
#define AT_ERROR(...) throw ::ember::Error(::ember::str_cat(__VA_ARGS__))
#define AT_ASSERT(cond, ...) EMBER_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define AT_ASSERTM(cond, ...) EMBER_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
// TORCH_CHECK_EQ(a, b): "Check failed: a == b (1 vs. 2). "
#define EMBER_COMPAT_CHECK_OP(a, b, op)                                                                   \
  do {                                                                                                    \
    const auto& _ember_a = (a);                                                                           \
    const auto& _ember_b = (b);                                                                           \
    if (!(_ember_a op _ember_b)) {                                                                        \
      throw ::ember::Error(                                                                               \
          ::ember::str_cat("Check failed: " #a " " #op " " #b " (", _ember_a, " vs. ", _ember_b, "). ")); \
    }                                                                                                     \
  } while (0)
#define TORCH_CHECK_EQ(a, b) EMBER_COMPAT_CHECK_OP(a, b, ==)
#define TORCH_CHECK_NE(a, b) EMBER_COMPAT_CHECK_OP(a, b, !=)
#define TORCH_CHECK_LE(a, b) EMBER_COMPAT_CHECK_OP(a, b, <=)
#define TORCH_CHECK_LT(a, b) EMBER_COMPAT_CHECK_OP(a, b, <)
#define TORCH_CHECK_GE(a, b) EMBER_COMPAT_CHECK_OP(a, b, >=)
#define TORCH_CHECK_GT(a, b) EMBER_COMPAT_CHECK_OP(a, b, >)
#define TORCH_WARN(...) ::ember::warn(::ember::str_cat(__VA_ARGS__))

// AT_DISPATCH_*(dtype, "name", [&] { ... scalar_t ... }): the lambda runs with
// scalar_t bound to the C++ type of dtype; other dtypes raise PyTorch's
// NotImplementedError.
#define EMBER_COMPAT_CASE(ENUM, ...)                                        \
  case ENUM: {                                                              \
    using scalar_t = typename ::ember::compat::ScalarTypeToCpp<ENUM>::type; \
    return __VA_ARGS__();                                                   \
  }
#define EMBER_COMPAT_FLOATING_CASES(...)                      \
  EMBER_COMPAT_CASE(::ember::ScalarType::Double, __VA_ARGS__) \
  EMBER_COMPAT_CASE(::ember::ScalarType::Float, __VA_ARGS__)
#define EMBER_COMPAT_INTEGRAL_CASES(...)                    \
  EMBER_COMPAT_CASE(::ember::ScalarType::Byte, __VA_ARGS__) \
  EMBER_COMPAT_CASE(::ember::ScalarType::Char, __VA_ARGS__) \
  EMBER_COMPAT_CASE(::ember::ScalarType::Int, __VA_ARGS__)  \
  EMBER_COMPAT_CASE(::ember::ScalarType::Long, __VA_ARGS__) \
  EMBER_COMPAT_CASE(::ember::ScalarType::Short, __VA_ARGS__)
#define EMBER_COMPAT_COMPLEX_CASES(...)                              \
  EMBER_COMPAT_CASE(::ember::ScalarType::ComplexDouble, __VA_ARGS__) \
  EMBER_COMPAT_CASE(::ember::ScalarType::ComplexFloat, __VA_ARGS__)
#define EMBER_COMPAT_SWITCH(TYPE, NAME, CASES)                         \
  [&] {                                                                \
    const ::ember::ScalarType _ember_st = (TYPE);                      \
    switch (_ember_st) {                                               \
      CASES                                                            \
      default: ::ember::compat::dispatch_unsupported(NAME, _ember_st); \
    }                                                                  \
  }()

// AT_DISPATCH_SWITCH(dtype, "name", AT_DISPATCH_CASE(at::kFloat, [&] {...}) ...).
#define AT_DISPATCH_SWITCH(TYPE, NAME, ...) EMBER_COMPAT_SWITCH(TYPE, NAME, __VA_ARGS__)
#define AT_DISPATCH_CASE(ENUM, ...) EMBER_COMPAT_CASE(ENUM, __VA_ARGS__)
#define AT_DISPATCH_CASE_FLOATING_TYPES(...) EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__)
#define AT_DISPATCH_CASE_INTEGRAL_TYPES(...) EMBER_COMPAT_INTEGRAL_CASES(__VA_ARGS__)
#define AT_DISPATCH_CASE_ALL_TYPES(...) \
  EMBER_COMPAT_INTEGRAL_CASES(__VA_ARGS__) EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__)

#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  EMBER_COMPAT_SWITCH(TYPE, NAME, EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
  EMBER_COMPAT_SWITCH(                                       \
      TYPE, NAME, EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__) EMBER_COMPAT_CASE(::ember::ScalarType::Half, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND(T1, TYPE, NAME, ...) \
  EMBER_COMPAT_SWITCH(TYPE, NAME, EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__) EMBER_COMPAT_CASE(T1, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND2(T1, T2, TYPE, NAME, ...)                                  \
  EMBER_COMPAT_SWITCH(TYPE, NAME,                                                                 \
                      EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__) EMBER_COMPAT_CASE(T1, __VA_ARGS__) \
                          EMBER_COMPAT_CASE(T2, __VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  EMBER_COMPAT_SWITCH(TYPE, NAME, EMBER_COMPAT_INTEGRAL_CASES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  EMBER_COMPAT_SWITCH(TYPE, NAME, EMBER_COMPAT_INTEGRAL_CASES(__VA_ARGS__) EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND(T1, TYPE, NAME, ...)                                                  \
  EMBER_COMPAT_SWITCH(TYPE, NAME,                                                                       \
                      EMBER_COMPAT_INTEGRAL_CASES(__VA_ARGS__) EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__) \
                          EMBER_COMPAT_CASE(T1, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND2(T1, T2, TYPE, NAME, ...)                                             \
  EMBER_COMPAT_SWITCH(TYPE, NAME,                                                                       \
                      EMBER_COMPAT_INTEGRAL_CASES(__VA_ARGS__) EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__) \
                          EMBER_COMPAT_CASE(T1, __VA_ARGS__) EMBER_COMPAT_CASE(T2, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(TYPE, NAME, ...) \
  EMBER_COMPAT_SWITCH(TYPE, NAME, EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__) EMBER_COMPAT_COMPLEX_CASES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND_COMPLEX(TYPE, NAME, ...)                                              \
  EMBER_COMPAT_SWITCH(TYPE, NAME,                                                                       \
                      EMBER_COMPAT_INTEGRAL_CASES(__VA_ARGS__) EMBER_COMPAT_FLOATING_CASES(__VA_ARGS__) \
                          EMBER_COMPAT_COMPLEX_CASES(__VA_ARGS__))
#include "ember/extension/PythonOps.h"
