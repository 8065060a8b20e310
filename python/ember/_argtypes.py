"""PyTorch's TypeError for a non-Tensor argument given to a Python-level function.

PyTorch's functions are C++ with an argument parser: an int where a Tensor
belongs raises ``TypeError: f(): argument 'x' (position 2) must be Tensor,
not int`` before any work. Ember's functions written in Python duck-type
their arguments, so the same mistake surfaces later as an AttributeError
(``'int' object has no attribute 'dim'``). ``install`` wraps the public
Python functions of ``ember``, ``ember.Tensor``, ``ember.nn.functional`` and
``ember.linalg``: an AttributeError raised for an attribute that Tensor has,
on an object that was itself one of the call's arguments (not a Tensor),
becomes that TypeError. Any other AttributeError passes unchanged.
"""

from __future__ import annotations

import functools
import inspect
import types

from ember import _C


def _type_name(value):
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__name__
    return "torch." + kind.__name__.split(".")[-1]


def _argument_of(fn, args, kwargs, obj):
    """(name, position) of the argument that is `obj`, or None."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    for i, value in enumerate(args):
        if value is obj:
            name = params[i].name if i < len(params) and params[i].kind != params[i].VAR_POSITIONAL else f"arg{i}"
            return name, i + 1
    for name, value in kwargs.items():
        if value is obj:
            kinds = {p.name: (i + 1, p.kind) for i, p in enumerate(params)}
            position, kind = kinds.get(name, (None, None))
            # PyTorch names no position for a keyword-only argument.
            return name, (None if kind in (None, inspect.Parameter.KEYWORD_ONLY) else position)
    return None


def _guard(fn, public_name, tensor_attrs, method):
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            obj, attr = getattr(e, "obj", None), getattr(e, "name", None)
            if obj is None or isinstance(obj, _C.TensorBase) or attr not in tensor_attrs:
                raise
            found = _argument_of(fn, args, kwargs, obj)
            if found is None or (method and found[1] == 1):
                raise
            name, position = found
            where = ""
            if position is not None:
                # A method's self is not counted, as in PyTorch's messages.
                where = f" (position {position - 1 if method else position})"
            message = f"{public_name}(): argument '{name}'{where} must be Tensor, not {_type_name(obj)}"
            raise TypeError(message) from None

    checked.__ember_argtypes__ = True
    return checked


def _wrap_namespace(namespace, names, tensor_attrs, method=False):
    for name in names:
        if name.startswith("_"):
            continue
        fn = namespace.__dict__.get(name) if method else getattr(namespace, name, None)
        if not isinstance(fn, types.FunctionType) or getattr(fn, "__ember_argtypes__", False):
            continue
        if not (fn.__module__ or "").startswith("ember"):
            continue
        setattr(namespace, name, _guard(fn, name, tensor_attrs, method))


def install(ember):
    tensor_attrs = frozenset(dir(ember.Tensor))
    _wrap_namespace(ember.Tensor, list(vars(ember.Tensor)), tensor_attrs, method=True)
    for module in (ember, ember.nn.functional, ember.linalg):
        _wrap_namespace(module, list(vars(module)), tensor_attrs)
