#pragma once
// Helpers shared by the factory kernels (ops/native/Factories.cpp,
// RangeFactories.cpp, cpu/Random.cpp).

#include <optional>

#include "ember/ops/Tensor.h"

namespace ember::native {

// A fresh uninitialised tensor (the allocation behind every factory).
Tensor empty(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device);

// out= of a factory (see Note [Factory out=]): allocates when out is
// undefined (dtype, else default_dtype), otherwise checks dtype= against out
// and resizes it.
void prepare_factory_out(Tensor& out, IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                         ScalarType default_dtype);

}  // namespace ember::native
