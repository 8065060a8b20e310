"""GraphModule: an nn.Module whose forward is generated from a Graph."""

from __future__ import annotations

import copy
import itertools
import linecache

import ember

from .graph import Graph, PythonCode

__all__ = ["GraphModule"]

_next_id = itertools.count()


def _exec_with_source(src: str, globals_: dict) -> None:
    # A distinct file name per source, registered with linecache, so that
    # tracebacks and inspect show the generated lines.
    key = f"<eval_with_key>.{next(_next_id)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)


def _forward_from_src(src: str, globals_: dict):
    globals_copy = dict(globals_)
    globals_copy.setdefault("torch", ember)
    _exec_with_source(src, globals_copy)
    return globals_copy["forward"]


def _copy_attr(from_module, to_module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = ember.nn.Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, ember.Tensor) and not isinstance(orig, ember.nn.Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = ember.nn.Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, ember.Tensor) and not isinstance(from_obj, ember.nn.Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


class GraphModule(ember.nn.Module):
    """A Module built from a Graph: ``code`` is the generated forward.

    Each instance has a class of its own, so recompiling one never changes another."""

    def __new__(cls, *args, **kwargs):
        for t in cls.__mro__:
            c = t.__qualname__.split(".")[-1]
            if c != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):  # type: ignore[valid-type, misc]
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: ember.nn.Module | dict, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, ember.nn.Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if not isinstance(node.target, str):
                        raise AssertionError
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(
                            f"Node {node} referenced target {node.target} but that target was not provided in ``root``!"
                        )
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self._tracer_cls = getattr(graph, "_tracer_cls", None)
        self.meta: dict = {}

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate ``code`` and ``forward`` from ``graph``."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        self._lineno_map = python_code._lineno_map
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(
        self,
        print_output: bool = True,
        include_stride: bool = False,
        include_device: bool = False,
        colored: bool = False,
        **kwargs,
    ) -> str:
        """The generated code as a class, the form a user can paste."""
        verbose_code = self._graph.python_code(root_module="self", verbose=True).src
        lines = verbose_code.lstrip("\n").split("\n")
        head = []
        while lines and not lines[0].startswith("def "):
            head.append(lines.pop(0))
        body = [f"class {type(self).__name__}(torch.nn.Module):"]
        body += ["    " + line if line else "" for line in head]
        body += ["    " + line if line.strip() else "" for line in lines]
        out = "\n".join(line.rstrip() for line in body)
        if not out.endswith("\n"):
            out += "\n"
        if print_output:
            print(out)
        return out

    def __str__(self) -> str:
        orig_str = super().__str__()
        return "\n".join([orig_str, self._code, "# To see more debug info, please use `graph_module.print_readable()`"])

    def _replicate_for_data_parallel(self):
        new_gm = self.__copy__()
        new_gm._is_replica = True
        return new_gm

    def __copy__(self):
        res = type(self).__new__(type(self))
        res.__dict__ = self.__dict__.copy()
        return res

    def __deepcopy__(self, memo):
        res = ember.nn.Module.__new__(type(self))
        memo[id(self)] = res
        fake_mod = ember.nn.Module()
        fake_mod.__dict__ = copy.deepcopy(self.__dict__, memo)
        GraphModule.__init__(res, fake_mod, fake_mod.__dict__["_graph"], type(self).__name__)
        for attr in ("meta", "_tracer_cls"):
            if attr in fake_mod.__dict__:
                setattr(res, attr, fake_mod.__dict__[attr])
        return res

    def __reduce__(self):
        state = self.__dict__.copy()
        graph = state.pop("_graph")
        state.pop("_code", None)
        state.pop("_lineno_map", None)
        return (_rebuild_graph_module, (state, graph, type(self).__name__))

    # --- submodules ---------------------------------------------------
    def add_submodule(self, target: str, m: ember.nn.Module) -> bool:
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = ember.nn.Module()
                setattr(mod, item, submod)
            if not isinstance(submod, ember.nn.Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, ember.nn.Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), ember.nn.Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self) -> None:
        used: list = []
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                for i in range(1, len(fullpath) + 1):
                    used.append(".".join(fullpath[:i]))
                if node.op == "call_module":
                    try:
                        submod = self.get_submodule(node.target)
                        for name, _ in submod.named_modules():
                            if name:
                                used.append(".".join([node.target, name]))
                    except AttributeError:
                        pass
        to_delete = [name for name, _ in self.named_modules() if name and name not in used]
        for name in to_delete:
            self.delete_submodule(name)


def _rebuild_graph_module(state: dict, graph: Graph, class_name: str) -> GraphModule:
    root = ember.nn.Module()
    root.__dict__.update(state)
    return GraphModule(root, graph, class_name)
