#pragma once
// Python objects for backward nodes (tensor.grad_fn) and the autograd functions.

#include <Python.h>

#include <memory>

#include "ember/autograd/Node.h"

namespace ember::python {

// The Python object for a node (one per node, of a type named like the node); None for null.
PyObject* wrap_node(const std::shared_ptr<autograd::Node>& node);
void init_autograd(PyObject* module);

}  // namespace ember::python
