#pragma once
// Factories that take TensorOptions, and ember::tensor / ember::from_blob, as
// PyTorch's C++ API has them. Included by Ops.h.

#include <initializer_list>
#include <type_traits>
#include <vector>

#include "ember/ops/Tensor.h"
#include "ember/ops/TensorOptions.h"
#include "ember/ops/generated/Functions.h"

namespace ember {

namespace detail {
inline Tensor apply_requires_grad(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) t.set_requires_grad(true);
  return t;
}
}  // namespace detail

#define EMBER_OPTIONS_FACTORY(NAME, PARAMS, ARGS)                                     \
  inline Tensor NAME(PARAMS, const TensorOptions& o) {                                \
    return detail::apply_requires_grad(NAME(ARGS, o.dtype_opt(), o.device_opt()), o); \
  }
#define EMBER_COMMA ,
EMBER_OPTIONS_FACTORY(zeros, IntArrayRef size, size)
EMBER_OPTIONS_FACTORY(ones, IntArrayRef size, size)
EMBER_OPTIONS_FACTORY(full, IntArrayRef size EMBER_COMMA const Scalar& value, size EMBER_COMMA value)
EMBER_OPTIONS_FACTORY(empty_strided, IntArrayRef size EMBER_COMMA IntArrayRef stride, size EMBER_COMMA stride)
EMBER_OPTIONS_FACTORY(arange, const Scalar& end, end)
EMBER_OPTIONS_FACTORY(arange, const Scalar& start EMBER_COMMA const Scalar& end, start EMBER_COMMA end EMBER_COMMA 1)
EMBER_OPTIONS_FACTORY(arange, const Scalar& start EMBER_COMMA const Scalar& end EMBER_COMMA const Scalar& step,
                      start EMBER_COMMA end EMBER_COMMA step)
EMBER_OPTIONS_FACTORY(linspace, const Scalar& start EMBER_COMMA const Scalar& end EMBER_COMMA int64_t steps,
                      start EMBER_COMMA end EMBER_COMMA steps)
EMBER_OPTIONS_FACTORY(eye, int64_t n, n)
EMBER_OPTIONS_FACTORY(eye, int64_t n EMBER_COMMA int64_t m, n EMBER_COMMA m)
EMBER_OPTIONS_FACTORY(scalar_tensor, const Scalar& s, s)
#undef EMBER_OPTIONS_FACTORY

// Factories whose generated form takes a generator before the dtype.
#define EMBER_RANDOM_OPTIONS_FACTORY(NAME, PARAMS, ARGS)                                            \
  inline Tensor NAME(PARAMS, const TensorOptions& o) {                                              \
    return detail::apply_requires_grad(NAME(ARGS, std::nullopt, o.dtype_opt(), o.device_opt()), o); \
  }                                                                                                 \
  inline Tensor NAME(PARAMS, ScalarType dtype) { return NAME(ARGS, std::nullopt, dtype); }
EMBER_RANDOM_OPTIONS_FACTORY(rand, IntArrayRef size, size)
EMBER_RANDOM_OPTIONS_FACTORY(randn, IntArrayRef size, size)
EMBER_RANDOM_OPTIONS_FACTORY(randint, int64_t high EMBER_COMMA IntArrayRef size, high EMBER_COMMA size)
EMBER_RANDOM_OPTIONS_FACTORY(randint, int64_t low EMBER_COMMA int64_t high EMBER_COMMA IntArrayRef size,
                             low EMBER_COMMA high EMBER_COMMA size)
EMBER_RANDOM_OPTIONS_FACTORY(randperm, int64_t n, n)
#undef EMBER_RANDOM_OPTIONS_FACTORY

inline Tensor empty(IntArrayRef size, const TensorOptions& o) {
  return detail::apply_requires_grad(empty(size, o.dtype_opt(), o.device_opt(), o.memory_format_opt()), o);
}
#define EMBER_LIKE_OPTIONS_FACTORY(NAME, PARAMS, ARGS)                                                       \
  inline Tensor NAME(PARAMS, const TensorOptions& o) {                                                       \
    return detail::apply_requires_grad(NAME(ARGS, o.dtype_opt(), o.device_opt(), o.memory_format_opt()), o); \
  }
EMBER_LIKE_OPTIONS_FACTORY(empty_like, const Tensor& self, self)
EMBER_LIKE_OPTIONS_FACTORY(zeros_like, const Tensor& self, self)
EMBER_LIKE_OPTIONS_FACTORY(ones_like, const Tensor& self, self)
EMBER_LIKE_OPTIONS_FACTORY(full_like, const Tensor& self EMBER_COMMA const Scalar& value, self EMBER_COMMA value)
#undef EMBER_LIKE_OPTIONS_FACTORY
#define EMBER_RANDOM_LIKE_OPTIONS_FACTORY(NAME)                                                                        \
  inline Tensor NAME(const Tensor& self, const TensorOptions& o) {                                                     \
    return detail::apply_requires_grad(NAME(self, std::nullopt, o.dtype_opt(), o.device_opt(), o.memory_format_opt()), \
                                       o);                                                                             \
  }
EMBER_RANDOM_LIKE_OPTIONS_FACTORY(rand_like)
EMBER_RANDOM_LIKE_OPTIONS_FACTORY(randn_like)
#undef EMBER_RANDOM_LIKE_OPTIONS_FACTORY
#undef EMBER_COMMA

namespace detail {
template <typename T>
Tensor tensor_of(const std::vector<T>& values, IntArrayRef sizes, const TensorOptions& o) {
  ScalarType natural = std::is_same_v<T, bool>       ? ScalarType::Bool
                       : std::is_floating_point_v<T> ? get_default_dtype()
                                                     : ScalarType::Long;
  Tensor t = empty(sizes, natural);
  EMBER_DISPATCH_ALL_TYPES(natural, "tensor", [&] {
    auto* out = t.data_ptr<scalar_t>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<scalar_t>(values[i]);
  });
  if (o.has_dtype() || o.has_device()) t = t.to(o.dtype_opt(), o.device_opt());
  return apply_requires_grad(t, o);
}
}  // namespace detail

// ember::tensor({1, 2, 3}) is int64, ember::tensor({1.5, 2.0}) the default
// floating dtype, ember::tensor({true, false}) bool, ember::tensor(5) a 0-dim
// int64, as in PyTorch.
template <typename T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& o = {}) {
  return detail::tensor_of(values, {static_cast<int64_t>(values.size())}, o);
}
template <typename T>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& o = {}) {
  return tensor(std::vector<T>(values), o);
}
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
Tensor tensor(T value, const TensorOptions& o = {}) {
  return detail::tensor_of(std::vector<T>{value}, {}, o);
}

// A tensor over memory the caller owns and keeps alive (nothing is copied).
inline Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& o = {}) {
  ScalarType dtype = o.dtype_opt().value_or(ScalarType::Float);
  int64_t extent = 1;
  bool empty_tensor = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) empty_tensor = true;
    extent += (sizes[d] - 1) * strides[d];
  }
  size_t nbytes = empty_tensor ? 0 : static_cast<size_t>(extent) * element_size(dtype);
  auto storage = make_intrusive<StorageImpl>(DataPtr(data, nullptr, nullptr, Device(DeviceType::CPU)), nbytes);
  Tensor t(make_intrusive<TensorImpl>(Storage(std::move(storage)), dtype, sizes, strides, 0));
  return detail::apply_requires_grad(t, o);
}
inline Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& o = {}) {
  DimVector strides = contiguous_strides(sizes);
  return from_blob(data, sizes, IntArrayRef(strides.data(), strides.size()), o);
}

}  // namespace ember
