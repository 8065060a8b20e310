#pragma once
// Python indexing of tensors (x[i], x[i] = v) and the view attributes
// (_base, _is_view), hooked into _C.TensorBase by PyTensor.cpp.

#include <Python.h>

#include <vector>

namespace ember::python {

// mp_subscript: basic indexing gives views (select, slice, unsqueeze,
// alias); tensors and lists as indices give copies (index).
PyObject* tensor_getitem(PyObject* self, PyObject* index);
// mp_ass_subscript: copy_/fill_ into the selected view, or index_put_.
int tensor_setitem(PyObject* self, PyObject* index, PyObject* value);
// The getter of Tensor._base.
PyObject* tensor_get_base(PyObject* self, void*);
// Adds _is_view() to the tensor methods.
void add_view_methods(std::vector<PyMethodDef>& methods);

}  // namespace ember::python
