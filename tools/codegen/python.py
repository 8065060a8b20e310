"""Python bindings: one CPython fastcall function per Python name, parsing
its arguments with ArgParser signatures written in PyTorch's notation."""

from __future__ import annotations

import keyword
from dataclasses import dataclass

from .cpp import Variant, variants_of
from .model import Argument, Operator, Type


@dataclass(frozen=True)
class PySignature:
    text: str  # for ArgParser, e.g. "add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)"
    variant: Variant
    out_variant: Variant | None  # chosen when out= is given
    params: tuple[Argument, ...]  # in parser order
    factory: bool


def _py_type(t: Type) -> str:
    s = t.base + ("?" if t.elem_optional else "")
    if t.is_list:
        s += f"[{t.list_size or ''}]"
    if t.optional:
        s += "?"
    return s


def _sig_text(name: str, args: list[Argument]) -> str:
    parts, star = [], False
    for a in args:
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        s = f"{_py_type(a.type)} {a.name}"
        if a.default is not None:
            s += f"={a.default}"
        parts.append(s)
    return f"{name}({', '.join(parts)})"


def _rename_self(args, method: bool) -> list[Argument]:
    if method:
        return list(args[1:])
    return [Argument("input", a.type, a.default, a.kwarg_only) if a.name == "self" else a for a in args]


def signatures(op: Operator, method: bool) -> dict[str, list[PySignature]]:
    """Python name -> signatures this op contributes (functions or methods)."""
    result: dict[str, list[PySignature]] = {}
    if not op.python:
        return result
    vs = {v.kind: v for v in variants_of(op)}
    func = vs["functional"]
    wants = "method" if method else "function"
    if wants in op.variants:
        args = _rename_self(op.schema.arguments, method)
        out_v = vs.get("out") if not method else None
        if out_v:
            args.append(Argument("out", Type("Tensor", optional=True), "None", True))
        if op.factory and not method:
            # PyTorch's factory keywords beyond the schema's dtype and device.
            args.append(Argument("layout", Type("Layout", optional=True), "None", True))
            args.append(Argument("pin_memory", Type("bool"), "False", True))
            args.append(Argument("requires_grad", Type("bool"), "False", True))
        result.setdefault(op.name, []).append(
            PySignature(_sig_text(op.name, args), func, out_v, tuple(args), op.factory and not method)
        )
    if method and "inplace" in vs:
        v = vs["inplace"]
        args = _rename_self(v.args, True)
        result.setdefault(v.name, []).append(PySignature(_sig_text(v.name, args), v, None, tuple(args), False))
    return result


def _tensor_over_scalar(a: PySignature, b: PySignature) -> bool:
    """a takes a Tensor where b takes a Scalar, and they agree otherwise."""
    if len(a.params) != len(b.params):
        return False
    found = False
    for pa, pb in zip(a.params, b.params):
        if pa.name != pb.name or pa.kwarg_only != pb.kwarg_only:
            return False
        if pa.type == pb.type:
            continue
        if pa.type.base == "Tensor" and pb.type.base == "Scalar" and not pa.type.is_list and not pb.type.is_list:
            found = True
            continue
        return False
    return found


def order_overloads(sigs: list[PySignature]) -> list[PySignature]:
    """PyTorch tries a Tensor overload before the Scalar one it shadows
    (fill_(Tensor value) before fill_(Scalar value)), so a 0-dim tensor picks
    the Tensor overload and a Python number the Scalar one."""
    out: list[PySignature] = []
    for s in sigs:
        at = next((i for i, r in enumerate(out) if _tensor_over_scalar(s, r)), len(out))
        out.insert(at, s)
    return out


def _getter(a: Argument, i: int) -> str:
    t = a.type
    if t.base == "Tensor" and t.is_list:
        return f"r.optional_tensorlist({i})" if t.elem_optional else f"r.tensorlist({i})"
    if t.base == "Tensor":
        return f"r.optional_tensor({i})" if t.optional else f"r.tensor({i})"
    if t.base == "float" and t.is_list:
        return f"r.doublelist_optional({i})" if t.optional else f"r.doublelist({i})"
    if t.base == "int":
        if t.is_list:
            return f"r.intlist_optional({i})" if t.optional else f"r.intlist({i})"
        return f"r.int64_optional({i})" if t.optional else f"r.int64({i})"
    table = {
        "float": "real",
        "bool": "boolean",
        "str": "string",
        "Scalar": "scalar",
        "ScalarType": "scalartype",
        "Device": "device",
        "Generator": "generator",
        "MemoryFormat": "memoryformat",
    }
    g = table[t.base]
    return f"r.{g}_optional({i})" if t.optional else f"r.{g}({i})"


def _call(sig: PySignature, method: bool, use_out: bool) -> str:
    idx = {a.name: i for i, a in enumerate(sig.params)}
    v = sig.out_variant if use_out else sig.variant
    exprs = []
    for k, a in enumerate(v.args):
        if method and k == 0:
            exprs.append("self")
            continue
        pname = "input" if (a.name == "self" and not method) else a.name
        if a.name == "out":
            exprs.append(f"r.tensor({idx['out']})")
        elif (
            sig.factory
            and a.type.base == "Device"
            and a.type.optional
            and not any(x.type.base == "Tensor" and x.name != "out" for x in v.args)
        ):
            exprs.append(f"r.factory_device({idx[pname]})")
        else:
            exprs.append(_getter(a, idx[pname]))
    return f"ember::{v.name}({', '.join(exprs)})"


def _wrap(sig: PySignature, expr: str, use_out: bool = False) -> str:
    """Wraps a C++ result: named tuples become torch.return_types.<name>."""
    rets = (sig.out_variant if use_out else sig.variant).returns
    if len(rets) > 1 and all(r.name for r in rets):
        names = ", ".join(f'"{r.name}"' for r in rets)
        base = sig.variant.op.name
        return f'wrap_named(return_type("{base}", {{{names}}}), {expr})'
    return f"wrap({expr})"


def binding_function(pyname: str, sigs: list[PySignature], method: bool) -> str:
    fn = f"{'method' if method else 'fn'}_{pyname}"
    texts = ",\n      ".join('"' + s.text.replace('"', '\\"') + '"' for s in sigs)
    maxp = max(len(s.params) for s in sigs)
    lines = [
        f"static PyObject* {fn}(PyObject* self_, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {{",
        "  EMBER_PY_TRY",
        f"  static ArgParser parser({{\n      {texts}}}, {'true' if method else 'false'});",
        f"  ParsedArgs<{maxp}> r;",
        "  const int _idx = parser.parse(self_, args, nargs, kwnames, r);",
        "  if (_idx < 0) return r.torch_function_result();",
    ]
    if method:
        lines.append("  const Tensor& self = unpack_tensor(self_);")
    lines.append("  switch (_idx) {")
    for i, s in enumerate(sigs):
        lines.append(f"    case {i}: {{")
        if s.out_variant is not None:
            out_i = [a.name for a in s.params].index("out")
            lines.append(f"      if (!r.is_none({out_i})) return {_wrap(s, _call(s, method, True), True)};")
        if s.factory:
            names = [a.name for a in s.params]
            rg = names.index("requires_grad")
            lines.append(
                f"      r.check_factory_layout_and_pinning({names.index('layout')}, {names.index('pin_memory')});"
            )
            lines.append(f"      Tensor _r = {_call(s, method, False)};")
            lines.append(f"      if (r.boolean({rg})) {{")
            lines.append(
                "        EMBER_CHECK(_r.is_floating_point() || _r.is_complex(), "
                '"Only Tensors of floating point and complex dtype can require gradients");'
            )
            lines.append("        _r.set_requires_grad(true);")
            lines.append("      }")
            lines.append("      return wrap(std::move(_r));")
        else:
            lines.append(f"      return {_wrap(s, _call(s, method, False))};")
        lines.append("    }")
    lines.append("  }")
    lines.append("  Py_RETURN_NONE;")
    lines.append("  EMBER_PY_CATCH")
    lines.append("}")
    return "\n".join(lines) + "\n"


_PYI_TYPES = {
    "Tensor": "Tensor",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "str": "str",
    "Scalar": "Number",
    "ScalarType": "dtype",
    "Device": "Device",
    "Generator": "Generator",
    "MemoryFormat": "memory_format",
    "Layout": "layout",
}


def pyi_def(pyname: str, sig: PySignature, method: bool) -> str:
    parts = ["self"] if method else []
    star = False
    for a in sig.params:
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        t = _PYI_TYPES[a.type.base]
        if a.type.base == "Tensor" and not a.type.optional and not a.type.is_list and a.name not in ("input", "self"):
            t = "Tensor | Number"
        if a.type.is_list:
            t = f"Sequence[{t}]" if a.type.base == "Tensor" else f"Sequence[{t}] | {t}"
        if a.type.optional:
            t += " | None"
        d = "" if a.default is None else " = ..."
        name = a.name + "_" if keyword.iskeyword(a.name) else a.name  # random_(from_=...), as torch's stubs
        parts.append(f"{name}: {t}{d}")
    return f"def {pyname}({', '.join(parts)}) -> Tensor: ..."
