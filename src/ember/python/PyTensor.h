#pragma once
// The Python tensor type (_C.TensorBase); ember.Tensor subclasses it in Python.

#include <Python.h>

#include "ember/ops/Tensor.h"
#include "ember/python/Exceptions.h"

namespace ember::python {

struct PyTensorObject {
  PyObject_HEAD
  Tensor tensor;  // constructed in place; never undefined while the object lives
  PyObject* dict;
  PyObject* weakreflist;
};

extern PyTypeObject* g_tensor_base_type;  // _C.TensorBase
extern PyObject* g_tensor_class;           // ember.Tensor (set from Python)

inline bool is_tensor(PyObject* obj) { return PyObject_TypeCheck(obj, g_tensor_base_type); }
inline const Tensor& unpack_tensor(PyObject* obj) { return reinterpret_cast<PyTensorObject*>(obj)->tensor; }

// The Python object for t: the existing one if t already has one.
PyObject* wrap(Tensor t);
PyObject* wrap(const std::tuple<Tensor, Tensor>& t);
// Creates a new Python object of `type` (a TensorBase subclass) for t.
PyObject* wrap_as(PyTypeObject* type, Tensor t);

// A Python bool/int/float as a 0-dim "wrapped number" tensor.
Tensor scalar_to_tensor(PyObject* obj);
bool is_number(PyObject* obj);

void init_tensor_type(PyObject* module);

}  // namespace ember::python
