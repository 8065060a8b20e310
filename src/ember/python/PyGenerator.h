#pragma once
// ember.Generator: a Python handle on a GeneratorImpl.

#include <Python.h>

#include "ember/core/Generator.h"

namespace ember::python {

struct PyGeneratorObject {
  PyObject_HEAD Generator generator;
  bool device_without_index;  // Generator(device="cuda"): `device` prints as given, as PyTorch's
};

extern PyTypeObject* g_generator_type;

inline bool is_generator(PyObject* o) { return PyObject_TypeCheck(o, g_generator_type); }
inline const Generator& unpack_generator(PyObject* o) { return reinterpret_cast<PyGeneratorObject*>(o)->generator; }
void init_generator(PyObject* module);

}  // namespace ember::python
