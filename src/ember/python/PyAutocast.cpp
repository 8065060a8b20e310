// Autocast from Python: the state switches, and the wrapper that gives a
// Python-written operator its autocast policy at the cost of one flag test
// when autocast is off.
#include "ember/python/PyAutocast.h"

#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "ember/autograd/Autocast.h"
#include "ember/python/Exceptions.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

namespace nb = nanobind;

namespace ember::python {
namespace {

// The devices whose autocast state lives in the core; ember/amp keeps the others.
DeviceType autocast_device(const std::string& name) {
  if (name == "cpu") return DeviceType::CPU;
  if (name == "cuda") return DeviceType::CUDA;
  throw ValueError("autocast state for device type '" + name + "' is kept in Python");
}

// _autocast_wrap(fn, policy, slow): calls fn directly while no autocast is
// active, else slow(fn, policy, *args, **kwargs), which casts and excludes.
struct AutocastWrapper {
  PyObject_HEAD PyObject* fn;
  PyObject* policy;
  PyObject* slow;
  vectorcallfunc vectorcall;
};

PyObject* wrapper_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* w = reinterpret_cast<AutocastWrapper*>(self);
  if (!autocast::any_active()) return PyObject_Vectorcall(w->fn, args, nargsf, kwnames);
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  std::vector<PyObject*> full(static_cast<size_t>(n + nkw + 2));
  full[0] = w->fn;
  full[1] = w->policy;
  for (Py_ssize_t i = 0; i < n + nkw; ++i) full[static_cast<size_t>(i + 2)] = args[i];
  return PyObject_Vectorcall(w->slow, full.data(), static_cast<size_t>(n + 2), kwnames);
}

void wrapper_dealloc(PyObject* self) {
  auto* w = reinterpret_cast<AutocastWrapper*>(self);
  PyObject_GC_UnTrack(self);
  Py_CLEAR(w->fn);
  Py_CLEAR(w->policy);
  Py_CLEAR(w->slow);
  Py_TYPE(self)->tp_free(self);
}

int wrapper_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* w = reinterpret_cast<AutocastWrapper*>(self);
  Py_VISIT(w->fn);
  Py_VISIT(w->policy);
  Py_VISIT(w->slow);
  return 0;
}

// Attributes come from the wrapped function (its name, doc, signature).
PyObject* wrapper_getattr(PyObject* self, PyObject* name) {
  auto* w = reinterpret_cast<AutocastWrapper*>(self);
  if (PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0) return Py_NewRef(w->fn);
  if (PyUnicode_CompareWithASCIIString(name, "__wrapped_autocast_policy__") == 0) return Py_NewRef(w->policy);
  return PyObject_GetAttr(w->fn, name);
}

PyObject* wrapper_repr(PyObject* self) { return PyObject_Repr(reinterpret_cast<AutocastWrapper*>(self)->fn); }

PyTypeObject* wrapper_type() {
  static PyTypeObject type = {PyVarObject_HEAD_INIT(nullptr, 0)};
  if (type.tp_name) return &type;
  type.tp_name = "ember._C._AutocastWrapper";
  type.tp_basicsize = sizeof(AutocastWrapper);
  type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  type.tp_vectorcall_offset = offsetof(AutocastWrapper, vectorcall);
  type.tp_call = PyVectorcall_Call;
  type.tp_dealloc = wrapper_dealloc;
  type.tp_traverse = wrapper_traverse;
  type.tp_getattro = wrapper_getattr;
  type.tp_repr = wrapper_repr;
  if (PyType_Ready(&type) < 0) throw nb::python_error();
  return &type;
}

PyObject* make_wrapper(PyObject* fn, PyObject* policy, PyObject* slow) {
  auto* w = PyObject_GC_New(AutocastWrapper, wrapper_type());
  if (!w) return nullptr;
  w->fn = Py_NewRef(fn);
  w->policy = Py_NewRef(policy);
  w->slow = Py_NewRef(slow);
  w->vectorcall = wrapper_call;
  PyObject_GC_Track(w);
  return reinterpret_cast<PyObject*>(w);
}

}  // namespace

void init_autocast(nb::module_& m) {
  m.def("_autocast_wrap", [](nb::handle fn, nb::handle policy, nb::handle slow) {
    PyObject* w = make_wrapper(fn.ptr(), policy.ptr(), slow.ptr());
    if (!w) throw nb::python_error();
    return nb::steal(w);
  });
  m.def("_autocast_any_active", [] { return autocast::any_active(); });
  m.def("_autocast_is_active", [](const std::string& d) { return autocast::is_active(autocast_device(d)); });
  m.def("_autocast_is_enabled", [](const std::string& d) { return autocast::is_enabled(autocast_device(d)); });
  m.def("_autocast_set_enabled", [](const std::string& d, bool on) { autocast::set_enabled(autocast_device(d), on); });
  m.def("_autocast_get_dtype",
        [](const std::string& d) { return nb::borrow(dtype_object(autocast::get_dtype(autocast_device(d)))); });
  m.def("_autocast_set_dtype",
        [](const std::string& d, nb::handle t) { autocast::set_dtype(autocast_device(d), parse_dtype(t.ptr())); });
  m.def("_autocast_set_excluded",
        [](const std::string& d, bool excluded) { return autocast::set_excluded(autocast_device(d), excluded); });
  m.def("_autocast_cast", [](nb::handle t, nb::handle dtype, const std::string& d) {
    if (!is_tensor(t.ptr())) throw TypeError("_autocast_cast expects a tensor");
    return nb::steal(wrap(autocast::cast(parse_dtype(dtype.ptr()), unpack_tensor(t.ptr()), autocast_device(d))));
  });
  m.def("is_autocast_cache_enabled", &autocast::is_cache_enabled);
  m.def("set_autocast_cache_enabled", &autocast::set_cache_enabled);
  m.def("autocast_increment_nesting", &autocast::increment_nesting);
  m.def("autocast_decrement_nesting", &autocast::decrement_nesting);
  m.def("clear_autocast_cache", &autocast::clear_cache);
}

}  // namespace ember::python
