#include "ember/python/PyTypes.h"

#include <string>

#include "ember/python/Exceptions.h"

namespace ember::python {

PyTypeObject* g_dtype_type = nullptr;
PyTypeObject* g_device_type = nullptr;
PyTypeObject* g_memory_format_type = nullptr;

namespace {

PyObject* g_dtypes[kNumAllScalarTypes] = {};

PyObject* dtype_repr(PyObject* self) {
  std::string s = "torch." + std::string(scalar_type_name(dtype_of(self)));
  return PyUnicode_FromString(s.c_str());
}
PyObject* dtype_is_floating_point(PyObject* self, void*) {
  return PyBool_FromLong(is_floating_type_any_tier(dtype_of(self)));
}
PyObject* dtype_is_complex(PyObject* self, void*) { return PyBool_FromLong(is_complex_type_any_tier(dtype_of(self))); }
PyObject* dtype_is_signed(PyObject* self, void*) {
  EMBER_PY_TRY
  ScalarType t = dtype_of(self);
  EMBER_CHECK(!is_bits_type(t), "Bits types are undefined");
  const bool is_unsigned = t == ScalarType::Byte || t == ScalarType::Bool || is_wide_unsigned_type(t) ||
                           t == ScalarType::Float8_e8m0fnu ||
                           (is_sub_byte_int_type(t) && static_cast<int>(t) <= static_cast<int>(ScalarType::UInt7));
  return PyBool_FromLong(!is_unsigned);
  EMBER_PY_CATCH
}
PyObject* dtype_itemsize(PyObject* self, void*) { return PyLong_FromSize_t(element_size(dtype_of(self))); }
PyObject* dtype_reduce(PyObject* self, PyObject*) {
  // Pickles as the attribute name on the ember module, like torch.float32.
  return PyUnicode_FromString(std::string(scalar_type_name(dtype_of(self))).c_str());
}

// dtype.to_complex(): the complex dtype of a floating dtype's parts (complex32 for float16).
PyObject* dtype_to_complex(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  const ScalarType t = dtype_of(self);
  if (is_complex_type_any_tier(t)) return Py_NewRef(self);
  switch (t) {
    case ScalarType::Half: return Py_NewRef(dtype_object(ScalarType::ComplexHalf));
    case ScalarType::Float:
    case ScalarType::BFloat16: return Py_NewRef(dtype_object(ScalarType::ComplexFloat));
    case ScalarType::Double: return Py_NewRef(dtype_object(ScalarType::ComplexDouble));
    default: throw Error(str_cat("Unknown Complex ScalarType for ", dtype_message_name(t)));
  }
  EMBER_PY_CATCH
}
// dtype.to_real(): the dtype of a complex dtype's parts; other dtypes themselves.
PyObject* dtype_to_real(PyObject* self, PyObject*) { return Py_NewRef(dtype_object(to_real_type(dtype_of(self)))); }

PyGetSetDef dtype_getset[] = {{"is_floating_point", dtype_is_floating_point, nullptr, nullptr, nullptr},
                              {"is_complex", dtype_is_complex, nullptr, nullptr, nullptr},
                              {"is_signed", dtype_is_signed, nullptr, nullptr, nullptr},
                              {"itemsize", dtype_itemsize, nullptr, nullptr, nullptr},
                              {nullptr, nullptr, nullptr, nullptr, nullptr}};
PyMethodDef dtype_methods[] = {{"__reduce__", dtype_reduce, METH_NOARGS, nullptr},
                               {"to_complex", dtype_to_complex, METH_NOARGS, nullptr},
                               {"to_real", dtype_to_real, METH_NOARGS, nullptr},
                               {nullptr, nullptr, 0, nullptr}};

PyObject* device_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  EMBER_PY_TRY
  static const char* kwlist[] = {"type", "index", nullptr};
  PyObject* type = nullptr;
  PyObject* index = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:device", const_cast<char**>(kwlist), &type, &index)) {
    return nullptr;
  }
  if (Py_TYPE(type) == g_device_type && index == Py_None) {
    Py_INCREF(type);
    return type;
  }
  Device d = parse_device(type);
  if (index != Py_None) {
    EMBER_CHECK(PyLong_Check(index), "device(): index must be an int");
    EMBER_CHECK(d.index < 0, "type (string) must not include an index because index was passed explicitly: ", d.str());
    long i = PyLong_AsLong(index);
    if (i == -1 && PyErr_Occurred()) throw python_error();
    EMBER_CHECK(i >= 0, "Device index must not be negative");
    d.index = static_cast<int8_t>(i);
  }
  return device_object(d);
  EMBER_PY_CATCH
}

Device& dev(PyObject* o) { return reinterpret_cast<PyDeviceObject*>(o)->device; }

PyObject* device_repr(PyObject* self) {
  const Device& d = dev(self);
  std::string s = std::string("device(type='") + device_type_name(d.type) + "'";
  if (d.index >= 0) s += ", index=" + std::to_string(d.index);
  return PyUnicode_FromString((s + ")").c_str());
}
PyObject* device_str(PyObject* self) { return PyUnicode_FromString(dev(self).str().c_str()); }
PyObject* device_type_get(PyObject* self, void*) { return PyUnicode_FromString(device_type_name(dev(self).type)); }
PyObject* device_index_get(PyObject* self, void*) {
  if (dev(self).index < 0) Py_RETURN_NONE;
  return PyLong_FromLong(dev(self).index);
}
PyObject* device_richcompare(PyObject* a, PyObject* b, int op) {
  if (Py_TYPE(b) != g_device_type || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
  bool eq = dev(a) == dev(b);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}
Py_hash_t device_hash(PyObject* self) {
  return static_cast<Py_hash_t>(static_cast<int>(dev(self).type) * 1000 + dev(self).index + 2);
}
PyObject* device_reduce(PyObject* self, PyObject*) {
  PyObject* args = dev(self).index >= 0 ? Py_BuildValue("(si)", device_type_name(dev(self).type), int(dev(self).index))
                                        : Py_BuildValue("(s)", device_type_name(dev(self).type));
  return Py_BuildValue("(ON)", reinterpret_cast<PyObject*>(g_device_type), args);
}

PyGetSetDef device_getset[] = {{"type", device_type_get, nullptr, nullptr, nullptr},
                               {"index", device_index_get, nullptr, nullptr, nullptr},
                               {nullptr, nullptr, nullptr, nullptr, nullptr}};
PyMethodDef device_methods[] = {{"__reduce__", device_reduce, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};

struct PyMemoryFormatObject {
  PyObject_HEAD MemoryFormat format;
};
PyObject* g_memory_formats[kNumMemoryFormats] = {};

PyObject* memory_format_repr(PyObject* self) {
  return PyUnicode_FromString((std::string("torch.") + memory_format_name(memory_format_of(self))).c_str());
}
PyObject* memory_format_reduce(PyObject* self, PyObject*) {
  // Pickles as the attribute name on the ember module, like torch.channels_last.
  return PyUnicode_FromString(memory_format_name(memory_format_of(self)));
}
PyMethodDef memory_format_methods[] = {{"__reduce__", memory_format_reduce, METH_NOARGS, nullptr},
                                       {nullptr, nullptr, 0, nullptr}};

}  // namespace

MemoryFormat memory_format_of(PyObject* o) { return reinterpret_cast<PyMemoryFormatObject*>(o)->format; }
PyObject* memory_format_object(MemoryFormat f) { return g_memory_formats[static_cast<int>(f)]; }

PyObject* dtype_object(ScalarType t) { return g_dtypes[static_cast<int>(t)]; }

bool is_dtype_like(PyObject* o) {
  return is_dtype(o) || o == reinterpret_cast<PyObject*>(&PyFloat_Type) ||
         o == reinterpret_cast<PyObject*>(&PyLong_Type) || o == reinterpret_cast<PyObject*>(&PyBool_Type);
}

ScalarType parse_dtype(PyObject* o) {
  if (is_dtype(o)) return dtype_of(o);
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return ScalarType::Double;
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return ScalarType::Long;
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return ScalarType::Bool;
  throw TypeError(str_cat("expected a dtype, got ", Py_TYPE(o)->tp_name));
}

PyObject* device_object(Device d) {
  auto* obj = PyObject_New(PyDeviceObject, g_device_type);
  if (!obj) throw python_error();
  obj->device = d;
  return reinterpret_cast<PyObject*>(obj);
}

bool is_device_like(PyObject* o) {
  return Py_TYPE(o) == g_device_type || PyUnicode_Check(o) || (PyLong_Check(o) && !PyBool_Check(o));
}

Device parse_device(PyObject* o) {
  if (Py_TYPE(o) == g_device_type) return dev(o);
  if (PyUnicode_Check(o)) return Device::parse(PyUnicode_AsUTF8(o));
  if (PyLong_Check(o) && !PyBool_Check(o)) {
    long i = PyLong_AsLong(o);
    if (i == -1 && PyErr_Occurred()) throw python_error();
    EMBER_CHECK(i >= 0, "Device index must not be negative");
    return Device(DeviceType::CUDA, static_cast<int8_t>(i));
  }
  throw TypeError(str_cat("expected a device, got ", Py_TYPE(o)->tp_name));
}

void init_dtype_and_device(PyObject* module) {
  static PyTypeObject dtype_type = {PyVarObject_HEAD_INIT(nullptr, 0)};
  dtype_type.tp_name = "ember.dtype";
  dtype_type.tp_basicsize = sizeof(PyDtypeObject);
  dtype_type.tp_flags = Py_TPFLAGS_DEFAULT;
  dtype_type.tp_repr = dtype_repr;
  dtype_type.tp_getset = dtype_getset;
  dtype_type.tp_methods = dtype_methods;
  if (PyType_Ready(&dtype_type) < 0) throw python_error();
  g_dtype_type = &dtype_type;
  PyModule_AddObjectRef(module, "dtype", reinterpret_cast<PyObject*>(&dtype_type));
  for (int i = 0; i < kNumAllScalarTypes; ++i) {
    if (i == static_cast<int>(ScalarType::Undefined)) continue;
    auto* obj = PyObject_New(PyDtypeObject, &dtype_type);
    obj->scalar_type = static_cast<ScalarType>(i);
    g_dtypes[i] = reinterpret_cast<PyObject*>(obj);
    std::string name(scalar_type_name(obj->scalar_type));
    PyModule_AddObjectRef(module, name.c_str(), g_dtypes[i]);
  }

  static PyTypeObject device_type = {PyVarObject_HEAD_INIT(nullptr, 0)};
  device_type.tp_name = "ember.device";
  device_type.tp_basicsize = sizeof(PyDeviceObject);
  device_type.tp_flags = Py_TPFLAGS_DEFAULT;
  device_type.tp_new = device_new;
  device_type.tp_repr = device_repr;
  device_type.tp_str = device_str;
  device_type.tp_richcompare = device_richcompare;
  device_type.tp_hash = device_hash;
  device_type.tp_getset = device_getset;
  device_type.tp_methods = device_methods;
  if (PyType_Ready(&device_type) < 0) throw python_error();
  g_device_type = &device_type;
  PyModule_AddObjectRef(module, "device", reinterpret_cast<PyObject*>(&device_type));

  static PyTypeObject memory_format_type = {PyVarObject_HEAD_INIT(nullptr, 0)};
  memory_format_type.tp_name = "ember.memory_format";
  memory_format_type.tp_basicsize = sizeof(PyMemoryFormatObject);
  memory_format_type.tp_flags = Py_TPFLAGS_DEFAULT;
  memory_format_type.tp_repr = memory_format_repr;
  memory_format_type.tp_methods = memory_format_methods;
  if (PyType_Ready(&memory_format_type) < 0) throw python_error();
  g_memory_format_type = &memory_format_type;
  PyModule_AddObjectRef(module, "memory_format", reinterpret_cast<PyObject*>(&memory_format_type));
  for (int i = 0; i < kNumMemoryFormats; ++i) {
    auto* obj = PyObject_New(PyMemoryFormatObject, &memory_format_type);
    obj->format = static_cast<MemoryFormat>(i);
    g_memory_formats[i] = reinterpret_cast<PyObject*>(obj);
    PyModule_AddObjectRef(module, memory_format_name(obj->format), g_memory_formats[i]);
  }
}

}  // namespace ember::python
