#pragma once
// The __torch_function__ protocol: a call whose arguments include a Tensor
// subclass or another object defining __torch_function__ (or that runs under
// a TorchFunctionMode) goes to ember.overrides instead of the kernel.

#include <Python.h>
#include <nanobind/nanobind.h>

namespace ember::python::torch_function {

// Thread-local: 0 enabled, 1 subclasses disabled (DisableTorchFunctionSubclass),
// 2 all disabled (DisableTorchFunction).
enum class State : int { Enabled = 0, SubclassesDisabled = 1, AllDisabled = 2 };

// Whether a call with these arguments (self first for a method) is handled by
// __torch_function__.
bool wants_dispatch(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
// Whether a binary operator's operands are.
bool wants_dispatch(PyObject* a, PyObject* b);
// Hands the call to ember.overrides; a new reference (throws python_error on error).
PyObject* dispatch(const char* name, bool is_method, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                   PyObject* kwnames);

// Hands a property read (value null) or write of self to ember.overrides as
// Tensor.<name>.__get__ / __set__; a new reference (throws python_error).
PyObject* dispatch_property(const char* name, PyObject* self, PyObject* value);

void init(nanobind::module_& m);

}  // namespace ember::python::torch_function
