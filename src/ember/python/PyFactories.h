#pragma once
// ember.tensor() from Python data (nested sequences, numbers, numpy scalars,
// tensors) with PyTorch's shape and dtype inference.

#include <Python.h>
#include <nanobind/nanobind.h>

#include <optional>

#include "ember/ops/Tensor.h"

namespace ember::python {

// A new tensor holding data; dtype=None infers it as PyTorch does.
Tensor tensor_from_data(PyObject* data, std::optional<ScalarType> dtype);
// Registers _tensor_from_data and _tensor_from_buffer on ember._C.
void init_factories(nanobind::module_& m);

}  // namespace ember::python
