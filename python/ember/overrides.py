"""ember.overrides: the __torch_function__ protocol.

A call of an Ember function or Tensor method whose arguments include a
Tensor subclass, or any object whose type defines ``__torch_function__``,
goes to that ``__torch_function__(func, types, args, kwargs)`` instead of the
kernel; so does every call inside a ``TorchFunctionMode``. The C++ argument
parser detects such calls and hands them to ``_dispatch_from_c``.
"""

from __future__ import annotations

import collections  # noqa: F401 - part of the namespace, as in PyTorch
import contextlib
import functools
import threading
import warnings

import ember
from ember import _C

__all__ = [
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "resolve_name",
    "wrap_torch_function",
    "TorchFunctionMode",
    "BaseTorchFunctionMode",
    "enable_reentrant_dispatch",
    "get_default_nowrap_functions",
]

_disabled_torch_function_impl = _C._disabled_torch_function_impl
_ENABLED, _SUBCLASSES_DISABLED, _ALL_DISABLED = 0, 1, 2

# ---- the mode stack (per thread) --------------------------------------------------

_modes = threading.local()


def _stack():
    stack = getattr(_modes, "stack", None)
    if stack is None:
        stack = _modes.stack = []
    return stack


def _get_current_function_mode_stack():
    return list(_stack())


def _len_torch_function_stack():
    return len(_stack())


def _get_current_function_mode():
    stack = _stack()
    return stack[-1] if stack else None


def _push_mode(mode):
    stack = _stack()
    stack.append(mode)
    _C._set_torch_function_mode_depth(len(stack))


def _pop_mode():
    stack = _stack()
    if not stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = stack.pop()
    _C._set_torch_function_mode_depth(len(stack))
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _is_torch_function_mode_enabled():
    return _C._get_torch_function_state() != _ALL_DISABLED and bool(_stack())


class TorchFunctionMode:
    """Overrides every overridable Ember function inside a ``with`` block:
    calls go to ``__torch_function__(func, types, args, kwargs)``; calls made
    from there go to the next mode down the stack."""

    inner: TorchFunctionMode

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`", stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


# ---- switching the protocol off ---------------------------------------------------


class _StateSwitch:
    _state = _ENABLED

    def __enter__(self):
        self._saved = _C._set_torch_function_state(max(self._state, _C._get_torch_function_state()))
        return self

    def __exit__(self, *exc):
        _C._set_torch_function_state(self._saved)
        return False


class DisableTorchFunctionSubclass(_StateSwitch):
    """Ignores arguments' __torch_function__ (modes still apply)."""

    _state = _SUBCLASSES_DISABLED


class DisableTorchFunction(_StateSwitch):
    """Ignores __torch_function__ entirely, modes included."""

    _state = _ALL_DISABLED


@contextlib.contextmanager
def _enable_torch_function():
    saved = _C._set_torch_function_state(_ENABLED)
    try:
        yield
    finally:
        _C._set_torch_function_state(saved)


@contextlib.contextmanager
def enable_reentrant_dispatch():
    yield


# ---- finding and calling the overrides --------------------------------------------


def _is_overloaded(arg):
    return _C._is_torch_function_overloaded(arg)


def _get_overloaded_args(relevant_args, get_type_fn=type):
    """The arguments whose __torch_function__ is tried, one per type, a
    subclass before its base classes and otherwise in argument order."""
    found = []
    seen = set()
    for arg in relevant_args:
        kind = get_type_fn(arg)
        if kind in seen or not _is_overloaded(arg):
            continue
        seen.add(kind)
        at = len(found)
        for i, other in enumerate(found):
            if issubclass(kind, get_type_fn(other)):
                at = i
                break
        found.insert(at, arg)
    return found


def _flat_args(args, kwargs):
    for value in (*args, *kwargs.values()):
        if isinstance(value, (list, tuple)):
            yield from value
        else:
            yield value


def has_torch_function(relevant_args):
    """Whether calling with these arguments would dispatch to __torch_function__."""
    state = _C._get_torch_function_state()
    if state == _ALL_DISABLED:
        return False
    if _stack():
        return True
    return state == _ENABLED and any(_is_overloaded(a) for a in relevant_args)


def has_torch_function_unary(arg):
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def _qualified_name(func):
    module = getattr(func, "__module__", None) or ""
    if module in ("ember._C._VariableFunctions", "ember._C"):
        module = "ember"
    if module.startswith("ember"):
        module = "torch" + module[len("ember") :]
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    return f"{module}.{name}" if module else name


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls the __torch_function__ overrides for `public_api` until one does
    not return NotImplemented: the innermost active mode first, then the
    overloaded arguments."""
    return _handle(public_api, relevant_args, args, kwargs, from_c=False)


def _handle(public_api, relevant_args, args, kwargs, from_c):
    overloaded = _get_overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    mode = None
    if _is_torch_function_mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if _C._get_torch_function_state() == _ENABLED:
        for arg in overloaded:
            method = arg.__torch_function__
            if getattr(method, "__self__", None) is arg and method is not _disabled_torch_function_impl:
                warnings.warn(
                    "Defining your `__torch_function__ as a plain method is deprecated and will be an error in "
                    "future, please define it as a classmethod.",
                    DeprecationWarning,
                    stacklevel=3,
                )
            result = method(public_api, types, args, kwargs)
            if result is not NotImplemented:
                return result
    name = resolve_name(public_api)
    if from_c:  # the C++ layer's message
        kinds = "\n".join(f"  - tensor subclass {type(a)}" for a in overloaded)
        if mode is not None:
            kinds += f"\n  - mode object {mode}"
        raise TypeError(
            f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned NotImplemented:"
            f"\n\n{kinds}\n\nFor more information, try re-running with TORCH_LOGS=not_implemented"
        )
    message = (
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{[type(a) for a in overloaded]}"
    )
    if mode is not None:
        message += f" nor in mode {mode}"
    raise TypeError(message)


_NAMESPACES = ("", "nn.functional", "special", "linalg", "fft")


@functools.cache
def _public_function(name):
    for prefix, space in (("special_", "special"), ("linalg_", "linalg"), ("fft_", "fft")):
        if name.startswith(prefix):
            found = getattr(getattr(ember, space), name[len(prefix) :], None)
            if found is not None:
                return found
    for space in _NAMESPACES:
        module = ember
        for part in filter(None, space.split(".")):
            module = getattr(module, part)
        found = getattr(module, name, None)
        if callable(found):
            return found
    return getattr(_C._VariableFunctions, name)


def _dispatch_from_c(name, is_method, self, args, kwargs):
    """What the C++ layer calls for a call that takes part in the protocol."""
    if is_method:
        func = getattr(ember.Tensor, name)
        args = (self, *args)
    else:
        func = _public_function(name)
    return _handle(func, tuple(_flat_args(args, kwargs)), args, kwargs, from_c=True)


def _dispatch_property(name, self, *value):
    """A property read (or, with a value, write) of a Tensor that takes part in
    the protocol: the function is Tensor.<name>.__get__ (or __set__)."""
    descriptor = getattr(ember.Tensor, name)
    func = descriptor.__set__ if value else descriptor.__get__
    args = (self, *value)
    return _handle(func, (self,), args, None, from_c=True)


_NO_KWARGS: dict = {}


def _install_property_dispatch(cls):
    """Python-level properties of ``cls`` dispatch as the C++ ones do."""
    properties = {}
    for klass in reversed(cls.__mro__):
        properties.update((n, v) for n, v in vars(klass).items() if isinstance(v, property))
    for name, prop in properties.items():
        if name.startswith("__"):
            continue

        def getter(self, _fget=prop.fget, _name=name):
            if _C._has_torch_function((self,), _NO_KWARGS):
                return _dispatch_property(_name, self)
            return _fget(self)

        setter = None
        if prop.fset is not None:

            def setter(self, value, _fset=prop.fset, _name=name):
                if _C._has_torch_function((self,), _NO_KWARGS):
                    _dispatch_property(_name, self, value)
                    return
                _fset(self, value)

        setattr(cls, name, property(getter, setter, prop.fdel, prop.__doc__))


# Python-level Tensor methods that PyTorch hands to __torch_function__ as
# Tensor.<name> before running them (its _tensor.py and sparse methods).
_DISPATCHING_METHODS = (
    "__rdiv__", "__array__", "backward", "register_hook", "register_post_accumulate_grad_hook",
    "storage", "storage_type", "share_memory_", "is_shared", "norm", "unique", "unique_consecutive",
    "lu", "__dlpack__", "__dlpack_device__", "to_sparse", "sparse_dim", "dense_dim", "coalesce",
    "indices", "values", "_indices", "_values", "_nnz", "is_coalesced",
)  # fmt: skip


# Of those, the ones that hand every parameter over by keyword, with its default.
_KEYWORD_DISPATCH = {
    "norm": {"p": "fro", "dim": None, "keepdim": False, "dtype": None},
    "unique": {"sorted": True, "return_inverse": False, "return_counts": False, "dim": None},
    "unique_consecutive": {"return_inverse": False, "return_counts": False, "dim": None},
    "backward": {"gradient": None, "retain_graph": None, "create_graph": False, "inputs": None},
    "lu": {"pivot": True, "get_infos": False},
    "__array__": {"dtype": None},
}


def _install_method_dispatch(cls):
    """The Python-level methods above dispatch as the C++ ones do."""
    for name in _DISPATCHING_METHODS:
        fn = vars(cls)[name]
        defaults = _KEYWORD_DISPATCH.get(name)

        @functools.wraps(fn)
        def method(self, *args, _fn=fn, _name=name, _defaults=defaults, **kwargs):
            if _C._has_torch_function((self,), _NO_KWARGS):
                if _defaults is not None:
                    kwargs = {**_defaults, **dict(zip(_defaults, args)), **kwargs}
                    args = args[len(_defaults) :]
                return handle_torch_function(getattr(cls, _name), (self,), self, *args, **kwargs)
            return _fn(self, *args, **kwargs)

        method.__name__, method.__qualname__ = name, f"{cls.__name__}.{name}"
        setattr(cls, name, method)


def wrap_torch_function(dispatcher):
    """Makes a Python function take part in the protocol; `dispatcher` gives
    its relevant arguments."""

    def decorate(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return decorate


def is_tensor_like(inp):
    """A Tensor, or an object whose type defines __torch_function__."""
    return type(inp) is ember.Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    return func in _get_tensor_methods() or getattr(func, "__name__", None) == "__get__"


@functools.cache
def _get_tensor_methods():
    return {getattr(ember.Tensor, name) for name in dir(ember.Tensor) if callable(getattr(ember.Tensor, name, None))}


def get_default_nowrap_functions():
    """Functions whose results Tensor.__torch_function__ returns unconverted."""
    return {ember.Tensor.grad.__get__}


def get_ignored_functions():
    """Public functions that do not take part in the protocol (they take no tensors)."""
    names = (
        "typename is_tensor is_storage set_default_tensor_type set_default_dtype get_default_dtype set_rng_state "
        "get_rng_state manual_seed initial_seed seed set_printoptions compiled_with_cxx11_abi "
        "set_num_threads get_num_threads set_num_interop_threads get_num_interop_threads is_grad_enabled "
        "set_grad_enabled promote_types result_type can_cast use_deterministic_algorithms "
        "are_deterministic_algorithms_enabled"
    ).split()
    return {getattr(ember, n) for n in names if hasattr(ember, n)}


def get_overridable_functions():
    """{namespace: [functions]} that take part in the protocol."""
    ignored = get_ignored_functions()
    out = {}
    for space in _NAMESPACES:
        module = ember
        for part in filter(None, space.split(".")):
            module = getattr(module, part)
        funcs = [
            getattr(module, n)
            for n in dir(module)
            if not n.startswith("_") and callable(getattr(module, n)) and not isinstance(getattr(module, n), type)
        ]
        out[module] = [f for f in funcs if f not in ignored]
    out[ember.Tensor] = sorted(_get_tensor_methods(), key=repr)
    return out


def get_testing_overrides():
    """{function: a lambda with its signature returning -1}, for tests of overrides."""
    import inspect

    out = {}
    for funcs in get_overridable_functions().values():
        for f in funcs:
            try:
                sig = inspect.signature(f)
            except (TypeError, ValueError):
                out[f] = lambda *args, **kwargs: -1
                continue
            out[f] = _returning_minus_one(sig)
    return out


def _returning_minus_one(sig):
    def stand_in(*args, **kwargs):
        sig.bind(*args, **kwargs)
        return -1

    stand_in.__signature__ = sig
    return stand_in


def resolve_name(f):
    """The dotted public name of an overridable function, e.g. 'torch.add'."""
    if getattr(f, "__objclass__", None) is not None or is_tensor_method_or_property(f):
        return f"torch.Tensor.{f.__name__}"
    return _qualified_name(f)
