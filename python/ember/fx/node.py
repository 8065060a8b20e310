"""Node: one operation of a Graph (placeholder, get_attr, call_function,
call_method, call_module or output), linked into the graph's node list."""

from __future__ import annotations

import builtins
import types
from collections.abc import Callable
from typing import Any

from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect", "Argument", "Target"]

Target = Callable[..., Any] | str
Argument = Any

_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root")

# Functions whose calls are kept by dead-code elimination even when unused.
_side_effectful_functions: set = set()


def has_side_effect(fn):
    """Mark ``fn`` as side-effectful: its calls survive eliminate_dead_code."""
    _side_effectful_functions.add(fn)
    return fn


# --- names of targets ------------------------------------------------------

_torch_names_cache: dict = {}


def _torch_names() -> dict:
    """id(function) -> its public name as PyTorch spells it ('torch.relu')."""
    if not _torch_names_cache:
        import ember

        spaces = [("torch", ember)]
        for sub in ("nn.functional", "linalg", "fft", "nn.init"):  # special: ember._C._special
            mod = ember
            for part in sub.split("."):
                mod = getattr(mod, part)
            spaces.append((f"torch.{sub}", mod))
        for prefix, mod in spaces:
            for name in dir(mod):
                if name.startswith("__"):
                    continue
                obj = getattr(mod, name, None)
                if callable(obj) and not isinstance(obj, type) and not isinstance(obj, types.ModuleType):
                    _torch_names_cache.setdefault(id(obj), (f"{prefix}.{name}", obj))
        for name in ember.special.__all__:  # builtins of torch._C._special, as PyTorch's
            obj = getattr(ember.special, name)
            _torch_names_cache.setdefault(id(obj), (f"torch._C._special.{obj.__name__}", obj))
    return _torch_names_cache


def _torch_name(func) -> str | None:
    hit = _torch_names().get(id(func))
    return hit[0] if hit is not None and hit[1] is func else None


def _get_qualified_name(func: Callable) -> str:
    name = getattr(func, "__name__", None)
    if name is not None and getattr(builtins, name, None) is func:
        return f"builtins.{name}"
    torch_name = _torch_name(func)
    if torch_name is not None:
        return torch_name
    if name == "<lambda>":
        raise RuntimeError("Unable to represent lambda")
    module = getattr(func, "__module__", None) or ""
    if module == "_operator":
        module = "operator"
    elif module == "ember" or module.startswith("ember."):
        module = "torch" + module[len("ember") :]
    return f"{module}.{name}"


def _type_repr(obj) -> str:
    """How a type annotation is written in printed graphs and code."""
    import typing

    import ember

    if obj is ember.Tensor:
        return "torch.Tensor"
    if isinstance(obj, type) and not getattr(obj, "__args__", None):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        module = obj.__module__
        if module == "ember" or module.startswith("ember."):
            module = "torch" + module[len("ember") :]
        return f"{module}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    if isinstance(obj, str):
        return repr(obj)
    text = repr(obj)
    return text.replace("typing.", "") if obj.__module__ == typing.__name__ else text


def _format_target_name(target) -> str:
    return target if isinstance(target, str) else _get_qualified_name(target)


def _format_arg(arg, max_list_len=float("inf")) -> str:
    if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        shown = arg if len(arg) <= max_list_len else arg[: int(max_list_len)]
        items = ", ".join(_format_arg(a) for a in shown)
        more = "" if len(arg) <= max_list_len else f", ...[total_len={len(arg)}]"
        return f"[{items}{more}]"
    if isinstance(arg, dict):
        items = ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items())
        return "{" + items + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


# --- argument traversal ------------------------------------------------------


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply ``fn`` to every leaf of ``a`` (tuples, lists, dicts and slices are walked)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(elem, fn) for elem in a)
        return type(a)(*t) if hasattr(a, "_fields") else t
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply ``fn`` to every Node inside ``a``."""
    if not callable(fn):
        raise TypeError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _collect_nodes(a: Argument) -> dict:
    found: dict = {}
    map_arg(a, lambda n: found.setdefault(n))
    return found


# --- Node ----------------------------------------------------------------------


class Node:
    """One operation in a Graph. ``users`` are the nodes that read its value."""

    def __init__(
        self,
        graph,
        name: str,
        op: str,
        target: Target,
        args: tuple,
        kwargs: dict,
        return_type: Any | None = None,
    ) -> None:
        if op not in _OPS:
            raise ValueError(f"Unknown node op {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(
                f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                f"{type(target)} but a Callable is expected"
            )
        if op in ("placeholder", "call_method", "call_module", "get_attr") and not isinstance(target, str):
            raise ValueError(
                f"Node [graph = {graph}, name = '{name}'] target {target} has type {type(target)} but a str is expected"
            )
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self.users: dict = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._repr_fn = None
        self.meta: dict = {}
        self._update_args_kwargs(args, kwargs)

    # linked list
    @property
    def next(self) -> Node:
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    def prepend(self, x: Node) -> None:
        """Insert ``x`` right before this node."""
        if x is self:
            return
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Insert ``x`` right after this node."""
        self._next.prepend(x)

    def __gt__(self, other):
        return self._position() > other._position()

    def __lt__(self, other):
        return self._position() < other._position()

    def _position(self) -> int:
        for i, n in enumerate(self.graph.nodes):
            if n is self:
                return i
        return -1

    # arguments
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, a) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list:
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg: Argument) -> None:
        if not 0 <= idx <= len(self.args):
            raise AssertionError(f"insert_args index must be between 0 (inclusive) and {len(self.args)} (inclusive)")
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args = map_aggregate(tuple(new_args), lambda x: x)
        self._kwargs = map_aggregate(dict(new_kwargs), lambda x: x)
        self._input_nodes = {}
        map_arg(self._args, self._input_nodes.setdefault)
        map_arg(self._kwargs, self._input_nodes.setdefault)
        for n in self._input_nodes:
            n.users.setdefault(self)

    @property
    def stack_trace(self) -> str | None:
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    def __repr__(self) -> str:
        return self._repr_fn(self) if self._repr_fn else self.name

    def format_node(self, placeholder_names: list | None = None, maybe_return_typename: list | None = None):
        """The line that describes this node in the printed graph."""
        if self.op == "placeholder":
            arg_str = self.target
            arg_str += f": {_type_repr(self.type)}" if self.type else ""
            if placeholder_names is not None:
                placeholder_names.append(arg_str)
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            typ = f"{_type_repr(self.type)} " if self.type else ""
            return f"%{self.name} : {typ}[num_users={len(self.users)}] = {self.op}[target={self.target}]{default}"
        if self.op == "get_attr":
            typ = f"{_type_repr(self.type)} " if self.type is not None else ""
            target = _format_target_name(self.target)
            return f"%{self.name} : {typ}[num_users={len(self.users)}] = {self.op}[target={target}]"
        if self.op == "output":
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        typ = f"{_type_repr(self.type)} " if self.type is not None else ""
        return (
            f"%{self.name} : {typ}[num_users={len(self.users)}] = "
            f"{self.op}[target={_format_target_name(self.target)}]("
            f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"
        )

    # rewriting
    def replace_all_uses_with(
        self,
        replace_with: Node,
        delete_user_cb: Callable[[Node], bool] = lambda user: True,
        *,
        propagate_meta: bool = False,
    ) -> list:
        """Make every user of this node read ``replace_with`` instead; returns the changed users."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError(
                    "Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                    "but replace_with already has .meta keys"
                )
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user._replace_input(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Replace every use of ``old_input`` among this node's arguments."""
        self._replace_input(old_input, new_input)

    def _replace_input(self, old: Node, new: Node) -> None:
        swap = lambda n: new if n is old else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether dead-code elimination must keep this node."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions
        if self.op == "call_method":
            return isinstance(self.target, str) and self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_module":
            root = self.graph.owning_module
            if root is None:
                return False
            mod = root.get_submodule(self.target)
            return bool(getattr(mod, "_is_impure", False))
        return False

    # Functions of the ember namespace pickle by their public name.
    def __getstate__(self):
        state = self.__dict__.copy()
        # Module types of the trace (often local classes) stay behind.
        state["meta"] = {k: v for k, v in self.meta.items() if k != "nn_module_stack"}
        name = _torch_name(self.target) if callable(self.target) else None
        if name is not None:
            state["target"] = _PublicName(name)
        return state

    def __setstate__(self, state):
        target = state.get("target")
        if isinstance(target, _PublicName):
            state["target"] = target.resolve()
        self.__dict__.update(state)


class _PublicName(str):
    def resolve(self):
        import ember

        obj = ember
        for part in self.split(".")[1:]:
            obj = getattr(obj, part)
        return obj
