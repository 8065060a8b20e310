#pragma once
// Bindings for data exchange: NumPy arrays sharing memory with tensors
// (PyNumpy.cpp), and raw storages and shared memory for ember.save and the
// DataLoader's worker processes (PyStorage.cpp).

#include <Python.h>

#include "ember/ops/Tensor.h"

namespace ember::python {

// ember.from_numpy: a tensor over the array's memory (the tensor keeps the array alive).
Tensor tensor_from_numpy(PyObject* array);
// An ndarray over t's memory (the array keeps the tensor alive). t must be a
// CPU tensor that does not require grad.
PyObject* tensor_to_numpy(const Tensor& t);

void init_numpy(PyObject* module);
// ember._C._to_dlpack / _from_dlpack: DLPack capsules (PyDLPack.cpp).
void init_dlpack(PyObject* module);
void init_storage(PyObject* module);
// ember._C._extension_api (PyExtensionApi.cpp).
void init_extension_api(PyObject* module);

}  // namespace ember::python
