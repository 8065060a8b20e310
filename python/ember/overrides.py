"""ember.overrides: the __torch_function__ protocol for Python functions.

A type that defines __torch_function__ (usually a classmethod) takes over a
public function called with an instance of it: the function collects its
overridable arguments, and handle_torch_function offers the call to each
overriding type in turn (subclasses before their bases); the first result
other than NotImplemented is returned. Ember's operators bound in C++ do not
consult it; the Python functions that call has_torch_function do."""

from __future__ import annotations

import warnings

__all__ = ["handle_torch_function", "has_torch_function", "is_tensor_like"]


def _overrides(obj) -> bool:
    return hasattr(type(obj), "__torch_function__")


def is_tensor_like(inp) -> bool:
    """True for tensors and for objects whose type defines __torch_function__."""
    from ember import Tensor

    return type(inp) is Tensor or _overrides(inp)


def _overloaded_args(relevant_args):
    """The arguments whose types override, one per type, subclasses first."""
    types, args = [], []
    for arg in relevant_args:
        t = type(arg)
        if t in types or not _overrides(arg):
            continue
        index = len(args)
        for i, earlier in enumerate(args):
            if issubclass(t, type(earlier)):
                index = i
                break
        types.insert(index, t)
        args.insert(index, arg)
    return args


def has_torch_function(relevant_args) -> bool:
    """Whether any of relevant_args overrides through __torch_function__."""
    return any(_overrides(a) for a in relevant_args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Offers public_api(*args, **kwargs) to the __torch_function__ of each
    overriding argument's type; TypeError when every one declines."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        method = type(arg).__torch_function__
        if not hasattr(method, "__self__"):
            warnings.warn(
                "Defining your `__torch_function__ as a plain method is deprecated and will be an error in future, "
                "please define it as a classmethod.",
                DeprecationWarning,
                stacklevel=2,
            )
            result = method(arg, public_api, types, args, kwargs)
        else:
            result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: {list(types)}")
