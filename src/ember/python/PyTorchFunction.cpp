#include "ember/python/PyTorchFunction.h"

#include "ember/ops/Ops.h"
#include "ember/python/PyTensor.h"

namespace nb = nanobind;

namespace ember::python::torch_function {
namespace {

thread_local State t_state = State::Enabled;
thread_local int t_mode_depth = 0;  // TorchFunctionModes on this thread's stack

PyObject* g_disabled_impl = nullptr;  // _C._disabled_torch_function_impl
PyObject* g_name = nullptr;  // "__torch_function__", interned

// An object whose type takes part in the protocol: not exactly ember.Tensor,
// defining __torch_function__, and not opting out with the disabled impl.
bool is_overloaded(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  if (reinterpret_cast<PyObject*>(type) == g_tensor_class || obj == Py_None || PyLong_CheckExact(obj) ||
      PyFloat_CheckExact(obj) || PyBool_Check(obj) || PyUnicode_CheckExact(obj)) {
    return false;
  }
  PyObject* attr = _PyType_Lookup(type, g_name);  // borrowed; no error set
  return attr && attr != g_disabled_impl;
}

bool any_overloaded(PyObject* obj) {
  if (is_overloaded(obj)) return true;
  if (PyList_CheckExact(obj) || PyTuple_CheckExact(obj)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    PyObject** items = PySequence_Fast_ITEMS(obj);
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (is_overloaded(items[i])) return true;
    }
  }
  return false;
}

PyObject* handler() {
  static PyObject* fn = [] {
    PyObject* mod = PyImport_ImportModule("ember.overrides");
    if (!mod) throw python_error();
    PyObject* f = PyObject_GetAttrString(mod, "_dispatch_from_c");
    Py_DECREF(mod);
    if (!f) throw python_error();
    return f;
  }();
  return fn;
}

PyObject* disabled_impl(PyObject*, PyObject* args, PyObject* kwargs) {
  // __torch_function__ = _disabled_torch_function_impl: run func without dispatch.
  PyObject *func, *types, *fargs = nullptr, *fkwargs = nullptr;
  static const char* kwlist[] = {"func", "types", "args", "kwargs", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OO", const_cast<char**>(kwlist), &func, &types, &fargs,
                                   &fkwargs)) {
    return nullptr;
  }
  const State saved = t_state;
  t_state = State::SubclassesDisabled;
  PyObject* empty = fargs ? nullptr : PyTuple_New(0);
  PyObject* out = PyObject_Call(func, fargs ? fargs : empty, fkwargs == Py_None ? nullptr : fkwargs);
  Py_XDECREF(empty);
  t_state = saved;
  return out;
}

PyMethodDef g_disabled_def = {"_disabled_torch_function_impl",
                              reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(disabled_impl)),
                              METH_VARARGS | METH_KEYWORDS, nullptr};

}  // namespace

bool wants_dispatch(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (t_state == State::AllDisabled) return false;
  if (t_mode_depth > 0) return true;
  if (t_state == State::SubclassesDisabled) return false;
  if (self && is_overloaded(self)) return true;
  const Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  for (Py_ssize_t i = 0; i < total; ++i) {
    if (any_overloaded(args[i])) return true;
  }
  return false;
}

bool wants_dispatch(PyObject* a, PyObject* b) {
  if (t_state == State::AllDisabled) return false;
  if (t_mode_depth > 0) return true;
  if (t_state == State::SubclassesDisabled) return false;
  return is_overloaded(a) || (b && is_overloaded(b));
}

PyObject* dispatch(const char* name, bool is_method, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                   PyObject* kwnames) {
  PyObject* pos = PyTuple_New(nargs);
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(pos, i, args[i]);
  }
  PyObject* kw = PyDict_New();
  if (kwnames) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); ++k) {
      PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]);
    }
  }
  PyObject* out = PyObject_CallFunction(handler(), "sOOOO", name, is_method ? Py_True : Py_False,
                                        is_method && self ? self : Py_None, pos, kw);
  Py_DECREF(pos);
  Py_DECREF(kw);
  if (!out) throw python_error();
  return out;
}

PyObject* dispatch_property(const char* name, PyObject* self, PyObject* value) {
  static PyObject* fn = [] {
    PyObject* mod = PyImport_ImportModule("ember.overrides");
    if (!mod) throw python_error();
    PyObject* f = PyObject_GetAttrString(mod, "_dispatch_property");
    Py_DECREF(mod);
    if (!f) throw python_error();
    return f;
  }();
  PyObject* out =
      value ? PyObject_CallFunction(fn, "sOO", name, self, value) : PyObject_CallFunction(fn, "sO", name, self);
  if (!out) throw python_error();
  return out;
}

void init(nb::module_& m) {
  g_name = PyUnicode_InternFromString("__torch_function__");
  g_disabled_impl = PyCFunction_New(&g_disabled_def, nullptr);
  m.attr("_disabled_torch_function_impl") = nb::handle(g_disabled_impl);
  m.def("_set_torch_function_state", [](int state) {
    const int old = static_cast<int>(t_state);
    t_state = static_cast<State>(state);
    return old;
  });
  m.def("_get_torch_function_state", [] { return static_cast<int>(t_state); });
  m.def("_set_torch_function_mode_depth", [](int depth) { t_mode_depth = depth; });
  m.def("_is_torch_function_overloaded", [](nb::handle obj) { return is_overloaded(obj.ptr()); });
  // Whether a Python-level function called with (args, kwargs) dispatches.
  m.def("_has_torch_function", [](nb::handle args, nb::handle kwargs) {
    if (t_state == State::AllDisabled) return false;
    if (t_mode_depth > 0) return true;
    if (t_state == State::SubclassesDisabled) return false;
    const Py_ssize_t n = PyTuple_GET_SIZE(args.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (any_overloaded(PyTuple_GET_ITEM(args.ptr(), i))) return true;
    }
    if (kwargs.ptr() != Py_None) {
      PyObject *key, *value;
      Py_ssize_t pos = 0;
      while (PyDict_Next(kwargs.ptr(), &pos, &key, &value)) {
        if (any_overloaded(value)) return true;
      }
    }
    return false;
  });
  m.def("_as_subclass", [](nb::handle self, nb::handle cls) -> nb::object {
    if (!is_tensor(self.ptr())) throw TypeError("as_subclass(): expected a Tensor");
    if (!PyType_Check(cls.ptr()) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), g_tensor_base_type)) {
      throw TypeError(std::string("as_subclass(): argument 'cls' must be a type that is a subclass of Tensor"));
    }
    return nb::steal(wrap_as(reinterpret_cast<PyTypeObject*>(cls.ptr()), ember::alias(unpack_tensor(self.ptr()))));
  });
}

}  // namespace ember::python::torch_function
