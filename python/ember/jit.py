"""ember.jit: PyTorch's TorchScript entry points, as PyTorch answers them with
the compiler switched off (PYTORCH_JIT=0).

Ember runs every module eagerly and has no TorchScript compiler or
interpreter (docs/decisions/0096-jit-eager.md). `script` and `trace` hand
back what they are given, `is_scripting()` and `is_tracing()` are False, and
the decorators (`ignore`, `unused`, `export`, `interface`) and type helpers
(`Final`, `annotate`, `Attribute`, `isinstance`) mean what they mean in
eager PyTorch, so code written for TorchScript runs and gives eager
PyTorch's numbers. Reading a TorchScript archive (`load`) raises."""

from __future__ import annotations

import builtins
import contextlib
import types
import typing
import warnings

from .futures import Future

__all__ = [
    "Attribute",
    "CompilationUnit",
    "Error",
    "Final",
    "Future",
    "Iterator",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "ScriptWarning",
    "TopLevelTracedModule",
    "TracedModule",
    "TracerWarning",
    "TracingCheckError",
    "annotate",
    "enable_onednn_fusion",
    "export",
    "fork",
    "freeze",
    "fuser",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "isinstance",
    "load",
    "onednn_fusion_enabled",
    "optimize_for_inference",
    "optimized_execution",
    "save",
    "script",
    "script_if_tracing",
    "script_method",
    "set_fusion_strategy",
    "strict_fusion",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

Final = typing.Final
Iterator = typing.Iterator


class Error(RuntimeError):
    """An error of the TorchScript compiler."""


class ScriptWarning(Warning):
    pass


class TracerWarning(Warning):
    pass


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n" + graph_diff_error + "\n"
        if tensor_compare_error is not None:
            self.message += tensor_compare_error
        super().__init__(self.message)


def _module_base():
    from .nn import Module

    return Module


class ScriptModule(_module_base()):
    """The type of compiled modules; nothing Ember builds is one."""


class RecursiveScriptModule(ScriptModule):
    pass


class TracedModule(ScriptModule):
    pass


class TopLevelTracedModule(TracedModule):
    pass


class ScriptFunction:
    """The type of compiled functions; nothing Ember builds is one."""


class CompilationUnit:
    """A unit of TorchScript source; Ember cannot compile one."""

    def __init__(self, lang=None, _frames_up=0):
        if lang is not None:
            raise RuntimeError("ember.jit.CompilationUnit: Ember has no TorchScript compiler")


def is_scripting() -> bool:
    """False: Ember code always runs eagerly."""
    return False


def is_tracing() -> bool:
    """False: Ember records no trace."""
    return False


def _deprecated_optimize(optimize):
    if optimize is not None:
        warnings.warn(
            "`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` instead",
            FutureWarning,
            stacklevel=3,
        )


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """The module, function or class itself, run eagerly."""
    _deprecated_optimize(optimize)
    return obj


def trace(func, example_inputs=None, optimize=None, *options, **keywords):
    """The function or module itself, run eagerly (nothing is recorded; the
    tracer's options, PyTorch's positional order, change nothing)."""
    _deprecated_optimize(optimize)
    return func


def trace_module(mod, inputs, optimize=None, *options, **keywords):
    _deprecated_optimize(optimize)
    return mod


def script_method(fn):
    return fn


def script_if_tracing(fn):
    return fn


def _marked(fn, modifier):
    try:
        fn._torchscript_modifier = modifier
    except (AttributeError, TypeError):
        pass  # builtins and properties take no attributes
    return fn


def export(fn):
    """Marks a method to compile as an entry point; eager code calls it as is."""
    return _marked(fn, "export")


def unused(fn):
    """Marks a function or property the compiler skips; eager code runs it."""
    if builtins.isinstance(fn, property):
        return fn
    return _marked(fn, "unused")


def ignore(drop=False, **kwargs):
    """@ignore or @ignore(drop=...): the compiler leaves the function to
    Python; eager code runs it."""
    if callable(drop):
        return _marked(drop, "ignore")
    if "drop_on_export" in kwargs:
        warnings.warn(
            "ignore(drop_on_export=True) has been deprecated. TorchScript will now drop the function "
            "call on compilation. Use torch.jit.unused now. {}",
            category=FutureWarning,
            stacklevel=2,
        )
        drop = kwargs.pop("drop_on_export")
    elif drop:
        warnings.warn(
            "ignore(True) has been deprecated. TorchScript will now drop the function "
            "call on compilation. Use torch.jit.unused now. {}",
            category=FutureWarning,
            stacklevel=2,
        )
    return lambda fn: _marked(fn, "unused" if drop else "ignore")


def interface(obj):
    return obj


def annotate(the_type, the_value):
    """the_value: the type only guides the compiler."""
    return the_value


def Attribute(value, type):  # noqa: N802 - PyTorch's name
    return value


def _contained_type_missing(name):
    raise RuntimeError(
        f"Attempted to use {name} without a contained type. Please add a contained type, e.g. {name}[int]"
    )


def _check_args(target_type):
    for bare, name in ((list, "list"), (typing.List, "List"), (dict, "dict"), (typing.Dict, "Dict")):  # noqa: UP006
        if target_type is bare:
            _contained_type_missing(name)
    if target_type is tuple or target_type is typing.Tuple:  # noqa: UP006
        _contained_type_missing("tuple" if target_type is tuple else "Tuple")
    if target_type is typing.Optional:
        _contained_type_missing("Optional")


def isinstance(obj, target_type) -> bool:
    """Whether obj is of target_type, container element types included (the
    check TorchScript refines types with)."""
    _check_args(target_type)
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin in (typing.Union, types.UnionType):
        return any(isinstance(obj, t) for t in args)
    if origin is list:
        return builtins.isinstance(obj, list) and all(isinstance(v, args[0]) for v in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(
            isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items()
        )
    if origin is tuple:
        if not builtins.isinstance(obj, tuple):
            return False
        return len(obj) == len(args) and all(isinstance(v, t) for v, t in zip(obj, args))
    return builtins.isinstance(obj, origin)


def fork(func, *args, **kwargs):
    """Runs func now; its result comes back through the Future."""
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    return future.wait()


def save(m, f, _extra_files=None):
    """TorchScript archives come from compiled modules; Ember's modules have
    no `save` (PyTorch's AttributeError for a plain module)."""
    m.save(f, _extra_files=_extra_files)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise RuntimeError(
        "ember.jit.load: Ember has no TorchScript interpreter and cannot run a TorchScript archive; "
        "load a state_dict saved with torch.save / ember.save instead"
    )


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """The module itself; as in PyTorch, only a module in eval mode."""
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. "
            "Please call .eval() on your module before freezing."
        )
    return mod


def optimize_for_inference(mod, other_methods=None):
    return freeze(mod.eval()) if mod.training else mod


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    return None


_fusion = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled: bool):
    _fusion["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _fusion["onednn"]


def set_fusion_strategy(strategy):
    """Records the strategy and returns the previous one, as PyTorch."""
    old, _fusion["strategy"] = _fusion["strategy"], list(strategy)
    return old


@contextlib.contextmanager
def optimized_execution(should_optimize):
    yield


@contextlib.contextmanager
def fuser(name):
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002 - PyTorch's type
    yield


class strict_fusion:  # noqa: N801 - PyTorch's name
    """A context the compiler checks fusion in; eager code ignores it."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None
