"""Reads ops.yaml into Operator records, checking every key."""

from __future__ import annotations

from pathlib import Path

import yaml

from . import pointwise as pointwise_mod
from .model import CodegenError, Derivative, Location, Operator, parse_schema

_KEYS = {
    "func",
    "variants",
    "structured",
    "inplace",
    "out",
    "dispatch",
    "derivatives",
    "factory",
    "python",
    "node",
    "output_differentiability",
    "pointwise",
    "autocast",
    "device_check",
    "cpp_no_default_args",
}
_AUTOCAST_POLICIES = {"lower_precision_fp", "fp32", "promote"}
_DEVICE_CHECKS = {"structured", "plain"}
_BACKENDS = {"CPU", "CUDA", "Meta", "CompositeExplicitAutograd", "CompositeImplicitAutograd"}


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that records each mapping's line as '__line__'."""

    def construct_mapping(self, node, deep=False):
        mapping = super().construct_mapping(node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


# The node PyTorch records for an operator without derivative formulas.
NOT_IMPLEMENTED_NODE = "torch::autograd::NotImplemented"


def _node_name(base: str) -> str:
    # PyTorch's rule: split the base name on '_', title-case each part, join.
    return "".join(p.title() for p in base.split("_"))


def _python_binding(value, loc: Location) -> bool:
    """Whether to generate the Python binding: true, false, or manual (public
    in Python through a hand-written binding, so none is generated)."""
    if value not in (True, False, "manual"):
        raise CodegenError(loc, f"python must be true, false or manual, got {value!r}")
    return value is True


def _output_names(schema) -> set[str]:
    """Keys of `derivatives` that name an output (forward-mode formulas)."""
    rets = schema.returns
    if len(rets) == 1:
        return {"result"}
    return {r.name or f"result{i}" for i, r in enumerate(rets)}


def load_operators(path: Path) -> list[Operator]:
    entries = yaml.load(path.read_text(), Loader=_LineLoader) or []
    ops: list[Operator] = []
    counters: dict[str, int] = {}
    seen: set[str] = set()
    for e in entries:
        loc = Location(path.name, e.pop("__line__"))
        unknown = set(e) - _KEYS
        if unknown:
            raise CodegenError(loc, f"unknown key(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}")
        if "func" not in e:
            raise CodegenError(loc, "entry has no 'func'")
        schema = parse_schema(e["func"], loc)
        if schema.full_name in seen:
            raise CodegenError(loc, f"operator {schema.full_name} declared twice")
        seen.add(schema.full_name)

        dispatch = e.get("dispatch") or {}
        dispatch.pop("__line__", None)
        pointwise = pointwise_mod.parse(e["pointwise"], schema.name, loc) if "pointwise" in e else None
        if pointwise and not pointwise.manual:
            if dispatch:
                raise CodegenError(loc, "a pointwise operator's kernels come from its stub; drop 'dispatch'")
            # One device-generic native function; the stub picks the kernel per device.
            native = schema.full_name.replace(".", "_") + "_out"
            dispatch = {"CPU": native, "CUDA": native, "Meta": native}
        elif pointwise and "CPU" in dispatch:
            # A hand-written pointwise function runs its stub on any device too.
            dispatch.setdefault("CUDA", dispatch["CPU"])
            dispatch.setdefault("Meta", dispatch["CPU"])
        for backend in dispatch:
            if backend not in _BACKENDS:
                raise CodegenError(loc, f"unknown backend {backend!r}; allowed: {sorted(_BACKENDS)}")
        if not dispatch:
            raise CodegenError(loc, "entry has no 'dispatch'")

        derivs_raw = e.get("derivatives") or {}
        derivs_raw.pop("__line__", None)
        arg_names = {a.name for a in schema.arguments}
        output_names = _output_names(schema)
        derivatives = []
        forward = []
        for key, formula in derivs_raw.items():
            if key in output_names and key not in arg_names:
                forward.append((key, str(formula).strip()))
                continue
            d = Derivative(input=key, formula=str(formula).strip())
            for name in d.names:
                if name not in arg_names:
                    raise CodegenError(loc, f"derivative for {name!r}, which is not an argument of {schema.full_name}")
            derivatives.append(d)
        if derivatives and "CompositeImplicitAutograd" in dispatch:
            raise CodegenError(loc, "CompositeImplicitAutograd ops get autograd from their parts; drop 'derivatives'")

        variants = frozenset(v.strip() for v in str(e.get("variants", "function")).split(","))
        if not variants <= {"function", "method"}:
            raise CodegenError(loc, f"variants must be function and/or method, got {sorted(variants)}")
        structured = bool(e.get("structured", False))
        autocast = e.get("autocast")
        if autocast is not None and autocast not in _AUTOCAST_POLICIES:
            raise CodegenError(loc, f"autocast must be one of {sorted(_AUTOCAST_POLICIES)}, got {autocast!r}")

        device_check = e.get("device_check")
        if device_check is not None and device_check not in _DEVICE_CHECKS:
            raise CodegenError(loc, f"device_check must be one of {sorted(_DEVICE_CHECKS)}, got {device_check!r}")

        cpp_no_default_args = tuple(e.get("cpp_no_default_args", ()))
        for name in cpp_no_default_args:
            if name not in arg_names:
                raise CodegenError(loc, f"cpp_no_default_args names {name!r}, which is not an argument")

        node_name = None
        if derivatives and all(d.formula == "no_formula" for d in derivatives) and "node" not in e:
            # No formula at all: PyTorch's fallback node, which takes no number.
            node_name = f"{NOT_IMPLEMENTED_NODE}@{schema.full_name}"
        elif derivatives:
            base = schema.name.rstrip("_")
            stem = _node_name(base)
            n = counters.get(stem, 0)
            counters[stem] = n + 1
            node_name = e.get("node") or f"{stem}Backward{n}"

        ops.append(
            Operator(
                schema=schema,
                loc=loc,
                variants=variants,
                structured=structured,
                inplace=structured and bool(e.get("inplace", True)),
                out=structured and bool(e.get("out", True)),
                dispatch=tuple(dispatch.items()),
                derivatives=tuple(derivatives),
                factory=bool(e.get("factory", False)),
                python=_python_binding(e.get("python", True), loc),
                node_name=node_name,
                output_differentiability=tuple(bool(x) for x in e["output_differentiability"])
                if "output_differentiability" in e
                else None,
                pointwise=pointwise,
                autocast=autocast,
                device_check=device_check,
                forward=tuple(forward),
                cpp_no_default_args=cpp_no_default_args,
            )
        )
        if pointwise:
            pointwise_mod.check(ops[-1])
    return ops
