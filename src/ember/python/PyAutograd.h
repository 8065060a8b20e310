#pragma once
// Python objects for backward nodes (tensor.grad_fn) and the autograd functions.

#include <Python.h>

#include <memory>

#include "ember/autograd/Node.h"
#include "ember/autograd/SavedVariable.h"

namespace ember::python {

// The Python object for a node (one per node, of a type named like the node); None for null.
PyObject* wrap_node(const std::shared_ptr<autograd::Node>& node);
void init_autograd(PyObject* module);

// The node behind a node object; a custom Function's ctx holds its node
// weakly (the node owns the ctx). Null when there is none (any more).
std::shared_ptr<autograd::Node> node_of(PyObject* obj);
void set_function_node(PyObject* ctx, const std::shared_ptr<autograd::Node>& node);
// _C._function_wrap and _C._function_saved_tensors (PyFunction.cpp).
void init_function(PyObject* module);
// A pack hook calling Python's pack(tensor), whose result unpack(packed)
// turns back into the tensor (PyFunction.cpp).
autograd::PackHook python_pack_hook(PyObject* pack, PyObject* unpack);

}  // namespace ember::python
