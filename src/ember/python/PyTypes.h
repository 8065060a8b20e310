#pragma once
// ember.dtype, ember.device and ember.memory_format: small immutable Python objects.

#include <Python.h>

#include "ember/core/Device.h"
#include "ember/core/MemoryFormat.h"
#include "ember/core/ScalarType.h"

namespace ember::python {

struct PyDtypeObject {
  PyObject_HEAD ScalarType scalar_type;
};
struct PyDeviceObject {
  PyObject_HEAD Device device;
};

extern PyTypeObject* g_dtype_type;
extern PyTypeObject* g_device_type;

inline bool is_dtype(PyObject* o) { return Py_TYPE(o) == g_dtype_type; }
inline ScalarType dtype_of(PyObject* o) { return reinterpret_cast<PyDtypeObject*>(o)->scalar_type; }
// Borrowed reference to the singleton dtype object.
PyObject* dtype_object(ScalarType t);
// A dtype from a dtype object or the Python types float/int/bool; throws otherwise.
ScalarType parse_dtype(PyObject* o);
bool is_dtype_like(PyObject* o);

// New reference.
PyObject* device_object(Device d);
// A device from a device object, a string ("cuda:1") or an int (CUDA index).
Device parse_device(PyObject* o);
bool is_device_like(PyObject* o);

extern PyTypeObject* g_memory_format_type;
inline bool is_memory_format(PyObject* o) { return Py_TYPE(o) == g_memory_format_type; }
MemoryFormat memory_format_of(PyObject* o);
// Borrowed reference to the singleton memory_format object.
PyObject* memory_format_object(MemoryFormat f);

void init_dtype_and_device(PyObject* module);

}  // namespace ember::python
