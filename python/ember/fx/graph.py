"""Graph: an ordered list of Nodes, and the Python source it stands for."""

from __future__ import annotations

import builtins
import copy
import inspect
import keyword
import operator
import re
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .node import Argument, Node, Target, _get_qualified_name, _torch_name, _type_repr, map_arg

__all__ = ["Graph", "CodeGen", "PythonCode"]

# Operators written infix in generated code.
_BINARY_FORMATS = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}",
    "le": "{} <= {}", "ge": "{} >= {}",
}  # fmt: skip
_UNARY_FORMATS = {"neg": "-{}", "pos": "+{}", "invert": "~{}"}

# Global names that generated code binds to fixed objects.
_CUSTOM_BUILTINS = {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree", "math"}


def _snake_case(s: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s).lower()


def _is_magic(x: str) -> bool:
    return x.startswith("__") and x.endswith("__")


def _format_target(base: str, target: str) -> str:
    r = base
    for elem in target.split("."):
        r = f"{r}.{elem}" if elem.isidentifier() else f'getattr({r}, "{elem}")'
    return r


class _Namespace:
    """Hands out unique, legal Python identifiers for nodes and globals."""

    def __init__(self):
        self._obj_to_name: dict = {}
        self._used_names: set = set()
        self._base_count: dict = {}

    def create_name(self, candidate: str, obj: Any | None) -> str:
        if obj is not None and id(obj) in self._obj_to_name:
            return self._obj_to_name[id(obj)][0]
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = re.match(r"(.*)_(\d+)$", candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num = match.group(1), int(match.group(2))
        if num is None:
            num = self._base_count.get(base, 0)
        while candidate in self._used_names or self._is_illegal_name(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[id(obj)] = (candidate, obj)
        return candidate

    def associate_name_with_obj(self, name: str, obj: Any) -> None:
        self._obj_to_name[id(obj)] = (name, obj)

    def _rename_object(self, obj: Any, name: str) -> None:
        self._obj_to_name[id(obj)] = (name, obj)

    @staticmethod
    def _is_illegal_name(name: str, obj: Any) -> bool:
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        if name in _CUSTOM_BUILTINS:
            return True
        return False


@dataclass
class PythonCode:
    """Source of a graph's function and the globals it needs."""

    src: str
    globals: dict
    _lineno_map: dict | None = None


class CodeGen:
    """Turns a Graph into the source of a Python function."""

    def __init__(self):
        self._body_transformer = None
        self._func_name = "forward"

    def gen_fn_def(self, free_vars: list, maybe_return_annotation: str) -> str:
        if len(free_vars) == 0 or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def {self._func_name}({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args: Argument) -> str:
        return f"return {output_args!r}"

    def process_inputs(self, *args):
        return args

    def process_outputs(self, outputs):
        return outputs

    def additional_globals(self) -> list:
        return []

    def _gen_python_code(self, nodes, root_module: str, namespace: _Namespace, *, verbose: bool = False) -> PythonCode:
        import ember

        free_vars: list = []
        body: list = []
        globals_: dict = {}
        wrapped_fns: dict = {}
        maybe_return_annotation = [""]

        def add_global(name_hint: str, obj: Any) -> str:
            if _torch_name(obj) is not None:
                globals_["torch"] = ember
                return _torch_name(obj)
            if obj is ember:
                globals_["torch"] = ember
                return "torch"
            if getattr(builtins, getattr(obj, "__name__", ""), None) is obj:
                return obj.__name__
            existing = globals_.get(name_hint)
            if existing is obj:
                return name_hint
            name = namespace.create_name(name_hint, obj)
            globals_[name] = obj
            return name

        def type_repr(o) -> str:
            if isinstance(o, str):
                # A string annotation is bound as a global of its own.
                return add_global(repr(o), o)
            text = _type_repr(o)
            if text.startswith("torch."):
                globals_["torch"] = ember
            return text

        def repr_arg(arg) -> str:
            if isinstance(arg, Node):
                return repr(arg)
            if isinstance(arg, tuple) and hasattr(arg, "_fields"):
                qual = add_global(type(arg).__name__, type(arg))
                return f"{qual}({', '.join(repr_arg(a) for a in arg)})"
            if isinstance(arg, (list, tuple)):
                items = ", ".join(repr_arg(a) for a in arg)
                if isinstance(arg, list):
                    return f"[{items}]"
                return f"({items},)" if len(arg) == 1 else f"({items})"
            if isinstance(arg, dict):
                return "{" + ", ".join(f"{k!r}: {repr_arg(v)}" for k, v in arg.items()) + "}"
            if isinstance(arg, slice):
                return f"slice({repr_arg(arg.start)}, {repr_arg(arg.stop)}, {repr_arg(arg.step)})"
            if isinstance(arg, ember.dtype) or isinstance(arg, ember.device) or isinstance(arg, ember.layout):
                globals_["torch"] = ember
                if isinstance(arg, ember.device):
                    return f"device({arg.type!r}{'' if arg.index is None else f', {arg.index}'})"
                return repr(arg)
            if isinstance(arg, ember.memory_format):
                globals_["torch"] = ember
                return repr(arg)
            if isinstance(arg, float) and arg != arg:
                globals_["nan"] = float("nan")
                return "nan"
            if isinstance(arg, float) and arg in (float("inf"), float("-inf")):
                globals_["inf"] = float("inf")
                return "inf" if arg > 0 else "-inf"
            if callable(arg) and not isinstance(arg, type(None)):
                return add_global(_get_qualified_name(arg), arg)
            return repr(arg)

        def fmt_args(args, kwargs) -> str:
            parts = [repr_arg(a) for a in args] + [f"{k} = {repr_arg(v)}" for k, v in kwargs.items()]
            return ", ".join(parts)

        # Each value is freed (`x = None`) right after its last use.
        last_use: dict = {}
        frees: dict = {}
        for node in reversed(list(nodes)):
            for inp in list(node._input_nodes):
                if inp not in last_use:
                    last_use[inp] = node
                    frees.setdefault(node, []).append(inp)

        def emit_frees(node) -> None:
            if node.op == "placeholder":
                return
            if node.op == "output":
                body.append("\n")
                return
            dead = list(frees.get(node, []))
            if not node.users and node.op != "output":
                dead.append(node)
            dead = [n for n in dead if n.op != "output"]
            if dead:
                body.append(";  " + " = ".join(repr(n) for n in dead) + " = None")
            body.append("\n")

        stack_comment_done = [False]
        for node in nodes:
            if verbose and node.op not in ("placeholder", "output") and not stack_comment_done[0]:
                if node.stack_trace is None:
                    body.append(("\n" if body else "") + "# No stacktrace found for following nodes\n")
                stack_comment_done[0] = True
            op = node.op
            if op == "placeholder":
                target = node.target
                ann = f" : {type_repr(node.type)}" if node.type else ""
                default = f" = {repr_arg(node.args[0])}" if node.args else ""
                free_vars.append(f"{target}{ann}{default}")
                raw = target.replace("*", "")
                if raw != repr(node):
                    body.append(f"{repr(node)} = {raw}\n")
                continue
            if op == "call_method":
                body.append(
                    f"{repr(node)} = {_format_target(repr(node.args[0]), node.target)}"
                    f"({fmt_args(node.args[1:], node.kwargs)})"
                )
            elif op == "call_function":
                target = node.target
                name = getattr(target, "__name__", None)
                if (
                    getattr(operator, str(name), None) is target
                    and name in _BINARY_FORMATS
                    and len(node.args) == 2
                    and not node.kwargs
                ):
                    body.append(f"{repr(node)} = " + _BINARY_FORMATS[name].format(*(repr_arg(a) for a in node.args)))
                elif (
                    getattr(operator, str(name), None) is target
                    and name in _UNARY_FORMATS
                    and len(node.args) == 1
                    and not node.kwargs
                ):
                    body.append(f"{repr(node)} = " + _UNARY_FORMATS[name].format(repr_arg(node.args[0])))
                elif (
                    target is builtins.getattr
                    and len(node.args) == 2
                    and isinstance(node.args[1], str)
                    and node.args[1].isidentifier()
                    and not node.kwargs
                ):
                    body.append(f"{repr(node)} = {_format_target(repr_arg(node.args[0]), node.args[1])}")
                else:
                    qual = _get_qualified_name(target)
                    global_name = add_global(qual, target)
                    if node.meta.get("is_wrapped", False):
                        wrapped_fns.setdefault(global_name)
                    body.append(f"{repr(node)} = {global_name}({fmt_args(node.args, node.kwargs)})")
            elif op == "call_module":
                body.append(
                    f"{repr(node)} = {_format_target(root_module, node.target)}({fmt_args(node.args, node.kwargs)})"
                )
            elif op == "get_attr":
                body.append(f"{repr(node)} = {_format_target(root_module, node.target)}")
            elif op == "output":
                if node.type is not None:
                    maybe_return_annotation[0] = f" -> {type_repr(node.type)}"
                body.append(self.generate_output(map_arg(node.args[0], lambda n: n)))
            else:
                raise NotImplementedError(f"node: {op} {node.target}")
            emit_frees(node)

        if not body or not any(line.strip() for line in body):
            body.append("pass\n")
        prologue = self.gen_fn_def(free_vars, maybe_return_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        wrap_stmts = "\n".join(f'torch.fx._symbolic_trace.wrap("{name}")' for name in wrapped_fns)
        fn_code = f"\n{wrap_stmts}\n\n{prologue}\n{code}"
        return PythonCode(fn_code, globals_)


class _node_list:
    def __init__(self, graph: Graph, direction: str = "_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            nxt = getattr(cur, self.direction)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return _node_list(self.graph, "_next" if self.direction == "_prev" else "_prev")


class _InsertPoint:
    def __init__(self, graph: Graph, new_insert: Callable):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


class Graph:
    """The operations of a traced program, in order, as Nodes."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()

    def __getstate__(self):
        # The owning GraphModule pickles this graph; it sets itself again on load.
        state = self.__dict__.copy()
        state["_owning_module"] = None
        return state

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _node_list:
        return _node_list(self)

    def find_nodes(self, *, op: str, target: Target | None = None, sort: bool = True) -> list:
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False):
        """Append copies of ``g``'s nodes; ``val_map`` maps its nodes to ours."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None) -> Graph:
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if output_vals is not None:
            output_val, old_output = output_vals
            new_output = g.output(output_val, type_expr=getattr(old_output, "type", None))
            new_output.meta = copy.copy(old_output.meta)
        return g

    def create_node(
        self,
        op: str,
        target: Target,
        args: tuple | None = None,
        kwargs: dict | None = None,
        name: str | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def process_inputs(self, *args):
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out):
        return self._codegen.process_outputs(out)

    def erase_node(self, to_erase: Node) -> None:
        if len(to_erase.users) > 0:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                f"users in the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def inserting_before(self, n: Node | None = None):
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None):
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    def placeholder(self, name: str, type_expr: Any | None = None, default_value: Any = inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any | None = None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args=None, kwargs=None, type_expr=None, name=None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, name=name, type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x) -> Node:
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def output(self, result: Argument, type_expr: Any | None = None) -> Node:
        return self.create_node(op="output", target="output", args=(result,), type_expr=type_expr)

    def _target_to_str(self, target: Target) -> str:
        if callable(target):
            op = target.__name__
        else:
            op = target
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    def python_code(self, root_module: str, *, verbose: bool = False, **kwargs) -> PythonCode:
        namespace = _Namespace()
        # Node names are taken first so that globals never shadow them.
        for node in self.nodes:
            namespace.create_name(node.name, node)
        return self._codegen._gen_python_code(self.nodes, root_module, namespace, verbose=verbose)

    def __str__(self) -> str:
        node_strs = [n.format_node() for n in self.nodes]
        lines = ["graph():"]
        for s in node_strs:
            if s:
                lines.append("    " + s)
        return "\n".join(lines)

    def print_tabular(self) -> None:
        try:
            from tabulate import tabulate
        except ImportError:
            print(
                "`print_tabular` relies on the library `tabulate`, which could not be found on this "
                "machine. Run `pip install tabulate` to install the library."
            )
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    def lint(self) -> None:
        """Check the graph's invariants; raise RuntimeError on the first broken one."""
        seen: set = set()
        names: set = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for inp in node._input_nodes:
                if inp.graph is not self:
                    raise RuntimeError(f"Argument '{inp}' of Node '{node}' does not belong to this Graph!")
                if inp not in seen:
                    raise RuntimeError(f"Argument '{inp}' of Node '{node}' was used before it has been defined!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
        mod = self.owning_module
        if mod is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module"):
                obj = mod
                for i, atom in enumerate(node.target.split(".")):
                    if not hasattr(obj, atom):
                        seen_qualname = ".".join(node.target.split(".")[:i])
                        raise RuntimeError(
                            f"Node {node} target {node.target} references nonexistent attribute "
                            f"{atom} of {seen_qualname}"
                        )
                    obj = getattr(obj, atom)

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Remove nodes nobody uses that have no side effects; True if any went."""
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def set_codegen(self, codegen: CodeGen) -> None:
        self._codegen = codegen

    @contextmanager
    def _override_codegen(self, codegen):
        old, self._codegen = self._codegen, codegen
        try:
            yield
        finally:
            self._codegen = old

    def on_generate_code(self, make_transformer):
        old = self._codegen._body_transformer

        @contextmanager
        def ctx():
            self._codegen._body_transformer = make_transformer(old)
            try:
                yield
            finally:
                self._codegen._body_transformer = old

        return ctx()
