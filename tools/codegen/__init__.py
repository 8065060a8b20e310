"""Ember's code generator: ops.yaml -> C++ API, autograd nodes, Python bindings, .pyi."""
