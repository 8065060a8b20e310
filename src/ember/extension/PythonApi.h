#pragma once
// The functions ember._C exports (as the capsule ember._C._extension_api) so
// that separately built extension modules can pass tensors and dtypes to and
// from Python without linking Ember's bindings library.

#include <Python.h>

#include "ember/ops/Tensor.h"

namespace ember::extension {

constexpr int kPythonApiVersion = 1;

struct PythonApi {
  int version;
  // A new reference to t's Python object, or nullptr with a Python error set.
  PyObject* (*wrap_tensor)(const Tensor& t);
  // 1 when obj is an ember tensor, else 0.
  int (*is_tensor)(PyObject* obj);
  // The tensor held by obj, which must be a tensor (borrowed).
  const Tensor* (*unpack_tensor)(PyObject* obj);
  // A borrowed reference to the dtype object of t.
  PyObject* (*dtype_object)(ScalarType t);
  // 1 and *out set when obj is an ember dtype, else 0.
  int (*unpack_dtype)(PyObject* obj, ScalarType* out);
};

// The table, imported from ember._C on first use; nullptr with a Python error
// set when ember cannot be imported or is too old.
inline const PythonApi* python_api() {
  static const PythonApi* api = []() -> const PythonApi* {
    auto* table = static_cast<const PythonApi*>(PyCapsule_Import("ember._C._extension_api", 0));
    if (table && table->version < kPythonApiVersion) {
      PyErr_SetString(PyExc_ImportError, "this extension needs a newer ember");
      return nullptr;
    }
    return table;
  }();
  return api;
}

}  // namespace ember::extension
