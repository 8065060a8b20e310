"""Proxy: the stand-in a traced program computes with; every operation on
it appends a Node to the graph being built."""

from __future__ import annotations

import collections
import dis
import inspect
import operator
from typing import Any

from .graph import _BINARY_FORMATS, _UNARY_FORMATS, Graph
from .node import Argument, Node, map_aggregate

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute", "ParameterProxy", "Scope"]


class TraceError(ValueError):
    pass


class Scope:
    """Where tracing is: the qualified name and type of the module being called."""

    def __init__(self, module_path: str, module_type: Any):
        self.module_path = module_path
        self.module_type = module_type


_BASE_TYPES = (str, int, float, bool, complex, type(None), type(...), range)


class TracerBase:
    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"

    def __init__(self):
        self.scope = Scope("", None)
        self.module_stack: dict = {}
        self.node_name_to_scope: dict = {}

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None) -> Node:
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        self.node_name_to_scope[node.name] = (self.scope.module_path, self.scope.module_type)
        if self.module_stack:
            node.meta["nn_module_stack"] = collections.OrderedDict(self.module_stack)
        return node

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """Turn a Python value into something a Node may hold."""
        import ember

        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*(self.create_arg(e) for e in a))
            return tuple(self.create_arg(e) for e in a)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, _BASE_TYPES) or isinstance(
            a, (ember.dtype, ember.device, ember.layout, ember.memory_format, ember.Size)
        ):
            return a
        if callable(a) and not isinstance(a, ember.nn.Module):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy):
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or "
            "as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a more "
            "detailed explanation of what types of control flow can be traced, and check out the Proxy "
            "docstring for help troubleshooting Proxy iteration errors"
        )

    def keys(self, obj: Proxy):
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing graph (for building graphs by hand with Proxies)."""

    def __init__(self, graph: Graph):
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = {}
        self.node_name_to_scope = {}


def _find_tracer(args, kwargs):
    found = []

    def visit(a):
        if isinstance(a, Proxy):
            found.append(a.tracer)
        return a

    map_aggregate(args, visit)
    map_aggregate(kwargs, visit)
    return found[0] if found else None


class Proxy:
    """Records the operations applied to it as Nodes of ``tracer.graph``."""

    def __init__(self, node: Node, tracer: TracerBase | None = None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k) -> Attribute:
        if k in ("node", "tracer") or (k.startswith("__") and k.endswith("__")):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __deepcopy__(self, memo):
        import copy

        new_dict = {k: copy.deepcopy(v, memo) for k, v in self.__dict__.items()}
        new_obj = Proxy.__new__(Proxy)
        new_obj.__dict__ = new_dict
        return new_obj

    def __setstate__(self, d):
        self.__dict__ = d

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        code = frame.f_code
        offset = frame.f_lasti
        for inst in dis.get_instructions(code):
            if inst.offset == offset:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to be "
            "recorded, please call torch.fx.wrap('len') at module scope"
        )

    @classmethod
    def __torch_function__(cls, orig_method, types, args=(), kwargs=None):
        kwargs = kwargs if kwargs else {}
        tracer = _find_tracer(args, kwargs)
        if tracer is None:
            raise RuntimeError("no Proxy among the arguments")
        from ember.overrides import is_tensor_method_or_property

        if is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)


class Attribute(Proxy):
    """``proxy.attr``: becomes a method call when called, else a getattr node."""

    def __init__(self, root: Proxy, attr: str):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A Proxy for a parameter that answers shape questions from the real parameter."""

    def __init__(self, tracer: TracerBase, node: Node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


def _install_magic_methods() -> None:
    for name in list(_BINARY_FORMATS) + list(_UNARY_FORMATS):
        fn = getattr(operator, name, None)
        if fn is None:
            continue
        dunder = name.rstrip("_")

        def impl(*args, _fn=fn):
            tracer = args[0].tracer
            return tracer.create_proxy("call_function", _fn, args, {})

        impl.__name__ = f"__{dunder}__"
        setattr(Proxy, f"__{dunder}__", impl)
        if name in _BINARY_FORMATS and name not in ("getitem", "eq", "ne", "lt", "gt", "le", "ge"):

            def rimpl(self, rhs, _fn=fn):
                return self.tracer.create_proxy("call_function", _fn, (rhs, self), {})

            rimpl.__name__ = f"__r{dunder}__"
            setattr(Proxy, f"__r{dunder}__", rimpl)


_install_magic_methods()
