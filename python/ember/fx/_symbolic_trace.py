"""Symbolic tracing: run a module's forward on Proxies and record a Graph."""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import types
from collections.abc import Callable
from typing import Any

import ember

from .graph import Graph
from .graph_module import GraphModule
from .node import Argument
from .proxy import ParameterProxy, Proxy, Scope, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "ProxyableClassMeta"]

# (globals dict, name) pairs registered by wrap(): patched while tracing.
_wrapped_fns_to_patch: dict = {}
# Classes whose construction is recorded as a call (ProxyableClassMeta).
_proxyable_classes: dict = {}


class _PlaceholderHolder:
    def __repr__(self):
        return "PH"


PH = _PlaceholderHolder()


class ProxyableClassMeta(type):
    """A metaclass whose classes, constructed from Proxies, become graph calls."""

    def __init__(cls, name, bases, attrs):
        _proxyable_classes.setdefault(cls)
        super().__init__(name, bases, attrs)

    def __call__(cls, *args, **kwargs):
        instance = cls.__new__(cls)
        if not _any_proxy(args, kwargs):
            cls.__init__(instance, *args, **kwargs)
            return instance
        tracer = _first_proxy(args, kwargs).tracer
        return tracer.create_proxy("call_function", cls, args, kwargs)


def _any_proxy(args, kwargs) -> bool:
    return _first_proxy(args, kwargs) is not None


def _first_proxy(args, kwargs):
    from .node import map_aggregate

    found = []
    map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, Proxy) else a)
    return found[0] if found else None


def wrap(fn_or_name: str | Callable):
    """Record calls of a module-level function as leaf calls instead of tracing into it."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    if callable(fn_or_name):
        if isinstance(fn_or_name, str):
            raise AssertionError
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(frame.f_globals), fn_name)] = frame.f_globals
    return fn_or_name


def _make_recording_wrapper(orig_fn: Callable) -> Callable:
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _first_proxy(args, kwargs)
        if proxy is None:
            return orig_fn(*args, **kwargs)
        out = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
        out.node.meta["is_wrapped"] = True
        return out

    return wrapped


class _Patcher:
    """Swaps attributes for the duration of a trace and restores them after."""

    def __init__(self):
        self._undo: list = []

    def patch(self, owner, name: str, new) -> None:
        if isinstance(owner, dict):
            had, old = name in owner, owner.get(name)
            owner[name] = new
            self._undo.append(lambda: owner.__setitem__(name, old) if had else owner.pop(name, None))
        else:
            old = owner.__dict__[name] if name in owner.__dict__ else None
            had = name in owner.__dict__
            setattr(owner, name, new)
            self._undo.append(lambda: setattr(owner, name, old) if had else delattr(owner, name))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self._undo:
            self._undo.pop()()


class Tracer(TracerBase):
    """Turns a Module or function into a Graph by running it on Proxies.

    Modules of ``torch.nn`` (except Sequential) are leaves: recorded as
    ``call_module``; other modules are traced through."""

    def __init__(
        self,
        autowrap_modules: tuple = (math,),
        autowrap_functions: tuple = (),
        param_shapes_constant: bool = False,
    ) -> None:
        super().__init__()
        self._autowrap_modules = autowrap_modules
        self._autowrap_function_ids = {
            id(value)
            for mod in autowrap_modules
            for name, value in vars(mod).items()
            if not name.startswith("_") and callable(value) and isinstance(value, types.BuiltinFunctionType)
        } | {id(f) for f in autowrap_functions}
        self._autowrap_functions = autowrap_functions
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict | None = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        self.module_stack = {}
        self.num_calls: dict = {}

    # --- arguments -------------------------------------------------------
    def create_arg(self, a: Any) -> Argument:
        if isinstance(a, ember.nn.Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, ember.nn.Module):
            for n, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("module is not installed as a submodule")
        if isinstance(a, ember.Tensor):
            for n, t in self.root.named_buffers():
                if a is t:
                    return self.create_node("get_attr", n, (), {})
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                i = 0
                while True:
                    qualname = f"_tensor_constant{i}"
                    if not hasattr(self.root, qualname):
                        break
                    i += 1
                self.tensor_attrs[id(a)] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        if type(a) in _proxyable_classes:
            i = 0
            while True:
                qualname = f"_{a.__class__.__name__}_constant_{i}"
                if not hasattr(self.root, qualname):
                    break
                i += 1
            setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    # --- modules ---------------------------------------------------------
    def is_leaf_module(self, m: ember.nn.Module, module_qualified_name: str) -> bool:
        module = type(m).__module__
        return module.startswith(("ember.nn", "torch.nn", "ember.ao.nn", "torch.ao.nn")) and not isinstance(
            m, ember.nn.Sequential
        )

    def path_of_module(self, mod: ember.nn.Module) -> str:
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: ember.nn.Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        module_qualified_name = self.path_of_module(m)
        prev_scope = self.scope
        self.scope = Scope(module_qualified_name, type(m))
        self.module_stack[module_qualified_name] = (module_qualified_name, type(m))
        try:
            if not self.is_leaf_module(m, module_qualified_name):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", module_qualified_name, args, kwargs)
        finally:
            self.module_stack.pop(module_qualified_name, None)
            self.scope = prev_scope

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict):
        def lookup(val, collection, cache):
            for n, p in collection:
                if val is p:
                    if n not in cache:
                        kwargs = {}
                        if self.param_shapes_constant:
                            kwargs["proxy_factory_fn"] = lambda node, n=n: ParameterProxy(self, node, n, val)
                        cache[n] = self.create_proxy("get_attr", n, (), {}, **kwargs)
                    return cache[n]
            return None

        if isinstance(attr_val, ember.nn.Parameter):
            hit = lookup(attr_val, self.root.named_parameters(), parameter_proxy_cache)
            if hit is not None:
                return hit
        if self.proxy_buffer_attributes and isinstance(attr_val, ember.Tensor):
            hit = lookup(attr_val, self.root.named_buffers(), parameter_proxy_cache)
            if hit is not None:
                return hit
        return attr_val

    # --- the trace -------------------------------------------------------
    def create_args_for_root(self, root_fn, is_module: bool, concrete_args=None):
        """Create the placeholders; returns (function to call, its arguments).

        *args and **kwargs become plain parameters of a copy of the function,
        so that each is one Proxy (indexing it records getitem nodes)."""
        co = root_fn.__code__
        total = co.co_argcount + co.co_kwonlyargcount
        has_varargs = bool(co.co_flags & inspect.CO_VARARGS)
        has_varkw = bool(co.co_flags & inspect.CO_VARKEYWORDS)
        total += int(has_varargs) + int(has_varkw)
        names = list(co.co_varnames[:total])
        sig = inspect.signature(root_fn)
        skip = 1 if is_module else 0
        concrete_args = concrete_args or {}
        if not isinstance(concrete_args, dict):
            concrete_args = dict(zip(names[skip:], concrete_args))
        values = []
        for i, name in enumerate(names[skip:], start=skip):
            p = sig.parameters[name]
            if name in concrete_args and concrete_args[name] is not PH:
                value = concrete_args[name]
                self.create_proxy("placeholder", name, (value,), {})
                values.append(value)
                continue
            values.append(self._placeholder(p))
        if has_varargs or has_varkw or co.co_kwonlyargcount:
            flags = co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
            code = co.replace(co_flags=flags, co_argcount=total, co_kwonlyargcount=0, co_posonlyargcount=0)
            root_fn = types.FunctionType(
                code, root_fn.__globals__, root_fn.__name__, root_fn.__defaults__, root_fn.__closure__
            )
        return root_fn, values

    def _placeholder(self, p: inspect.Parameter) -> Proxy:
        name = p.name
        if p.kind == inspect.Parameter.VAR_POSITIONAL:
            name = "*" + name
        elif p.kind == inspect.Parameter.VAR_KEYWORD:
            name = "**" + name
        default = () if p.default is inspect.Parameter.empty else (p.default,)
        ann = None if p.annotation is inspect.Parameter.empty else p.annotation
        return self.create_proxy("placeholder", name, default, {}, type_expr=ann)

    def trace(self, root: ember.nn.Module | Callable, concrete_args: dict | None = None) -> Graph:
        if isinstance(root, ember.nn.Module):
            self.root = root
            fn = type(root).forward
            is_module = True
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
        else:
            self.root = ember.nn.Module()
            fn = root
            is_module = False
            self.submodule_paths = None
        tracer_cls = getattr(self, "__class__", None)
        self.graph = Graph(tracer_cls=tracer_cls)
        self.tensor_attrs: dict = {}

        def collect_tensor_attrs(m: ember.nn.Module, prefix: list):
            for k, v in m.__dict__.items():
                if isinstance(v, ember.Tensor) and not isinstance(v, ember.nn.Parameter):
                    self.tensor_attrs.setdefault(id(v), ".".join(prefix + [k]))
            for k, v in m.named_children():
                collect_tensor_attrs(v, prefix + [k])

        collect_tensor_attrs(self.root, [])
        fn_to_call, values = self.create_args_for_root(fn, is_module, concrete_args)
        parameter_proxy_cache: dict = {}
        tracer = self
        orig_call = ember.nn.Module.__call__
        orig_getattr = ember.nn.Module.__getattr__

        def module_getattr_wrapper(mod, attr):
            attr_val = orig_getattr(mod, attr)
            return tracer.getattr(attr, attr_val, parameter_proxy_cache)

        def module_call_wrapper(mod, *args, **kwargs):
            def forward(*args, **kwargs):
                return orig_call(mod, *args, **kwargs)

            return tracer.call_module(mod, forward, args, kwargs)

        with _Patcher() as patcher:
            patcher.patch(ember.nn.Module, "__getattr__", module_getattr_wrapper)
            patcher.patch(ember.nn.Module, "__call__", module_call_wrapper)
            self._patch_wrapped_functions(patcher, fn)
            result = fn_to_call(self.root, *values) if is_module else fn_to_call(*values)
            self.create_node(
                "output",
                "output",
                (self.create_arg(result),),
                {},
                type_expr=fn.__annotations__.get("return", None),
            )
        self.submodule_paths = None
        return self.graph

    def _patch_wrapped_functions(self, patcher: _Patcher, fn) -> None:
        for (_, name), frame_globals in _wrapped_fns_to_patch.items():
            if name not in frame_globals and hasattr(builtins, name):
                orig = getattr(builtins, name)
            else:
                orig = frame_globals[name]
            patcher.patch(frame_globals, name, _make_recording_wrapper(orig))
        fn_globals = getattr(fn, "__globals__", {})
        for name, value in list(fn_globals.items()):
            if not name.startswith("_") and id(value) in self._autowrap_function_ids:
                patcher.patch(fn_globals, name, _make_recording_wrapper(value))
        for mod in self._autowrap_modules:
            for name, value in list(vars(mod).items()):
                if not name.startswith("_") and id(value) in self._autowrap_function_ids:
                    patcher.patch(mod, name, _make_recording_wrapper(value))

    def __deepcopy__(self, memo):
        new_tracer = Tracer.__new__(Tracer)
        for k, v in self.__dict__.items():
            object.__setattr__(new_tracer, k, v)
        return new_tracer


def symbolic_trace(
    root: ember.nn.Module | Callable[..., Any],
    concrete_args: dict | None = None,
) -> GraphModule:
    """Trace ``root`` and return a GraphModule whose code is the recorded graph."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, ember.nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
