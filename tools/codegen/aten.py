"""ember.ops.aten: PyTorch's torch.ops.aten for every operator of ops.yaml,
including those without a public Python name (the *_backward functions).
One binding per packet (all its overloads, matched as PyTorch's packet call
matches them) and one per overload of packets with several; the arguments
keep the schema's names (self, not input)."""

from __future__ import annotations

from dataclasses import dataclass

from .cpp import Variant, variants_of
from .model import Argument, Operator, Type
from .python import PySignature, _getter, _sig_text, order_overloads


@dataclass(frozen=True)
class AtenOverload:
    packet: str  # "add", "add_"
    overload: str  # "Tensor", "out", "default"
    schema: str  # PyTorch's schema text, for _schema and the docstring
    sig: PySignature
    alias: bool = False  # a second name only (left out of the packet's own matching)


def _supported(op: Operator, args: list[Argument]) -> bool:
    if not op.schema.returns or not all(r.type.base == "Tensor" for r in op.schema.returns):
        return False
    return all(not a.type.is_list or a.type.base in ("Tensor", "int", "float") for a in args)


def _schema_text(name: str, overload: str, args: list[Argument], returns: str) -> str:
    full = name if overload == "default" else f"{name}.{overload}"
    return f"aten::{_sig_text(full, args)} -> {returns}"


def overloads(op: Operator) -> list[AtenOverload]:
    vs = {v.kind: v for v in variants_of(op)}
    args = list(op.schema.arguments)
    if not _supported(op, args):
        return []
    ov = op.schema.overload
    rets = ", ".join(str(r.type.base) + ("[]" if r.type.is_list else "") for r in op.schema.returns)
    rets = rets if len(op.schema.returns) == 1 else f"({rets})"
    forms: list[tuple[str, str, Variant, list[Argument]]] = [(op.name, ov or "default", vs["functional"], args)]
    if "inplace" in vs:
        forms.append((op.name + "_", ov or "default", vs["inplace"], args))
    if "out" in vs:
        out = Argument("out", Type("Tensor", alias="a", mutable=True), None, True)
        forms.append((op.name, f"{ov}_out" if ov else "out", vs["out"], [*args, out]))
    found = [
        AtenOverload(
            packet,
            name,
            _schema_text(packet, name, a, rets),
            PySignature(_sig_text(packet, a), v, None, tuple(a), False),
        )
        for packet, name, v, a in forms
    ]
    if ov == "Tensor" and "out" in vs:  # PyTorch names add.Tensor's out form add.out (mul, sub, div too)
        o = found[-1]
        found.append(AtenOverload(o.packet, "out", o.schema.replace(".Tensor_out(", ".out("), o.sig, alias=True))
    return found


def _call(sig: PySignature) -> str:
    idx = {a.name: i for i, a in enumerate(sig.params)}
    exprs = [f"r.tensor({idx['out']})" if a.name == "out" else _getter(a, idx[a.name]) for a in sig.variant.args]
    return f"ember::{sig.variant.name}({', '.join(exprs)})"


def binding(fn: str, sigs: list[PySignature]) -> str:
    texts = ",\n      ".join('"' + s.text.replace('"', '\\"') + '"' for s in sigs)
    lines = [
        f"static PyObject* {fn}(PyObject* self_, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {{",
        "  EMBER_PY_TRY",
        f"  static ArgParser parser({{\n      {texts}}}, false);",
        f"  ParsedArgs<{max(len(s.params) for s in sigs)}> r;",
        "  const int _idx = parser.parse(self_, args, nargs, kwnames, r);",
        "  if (_idx < 0) return r.torch_function_result();",
        "  switch (_idx) {",
    ]
    for i, s in enumerate(sigs):
        lines.append(f"    case {i}: return wrap({_call(s)});")
    lines += ["  }", "  Py_RETURN_NONE;", "  EMBER_PY_CATCH", "}"]
    return "\n".join(lines) + "\n"


def c_name(text: str) -> str:
    return "aten_" + text.replace(".", "_dot_")


def packets(ops: list[Operator]) -> dict[str, list[AtenOverload]]:
    """Packet name -> its overloads, in the order PyTorch's packet call tries them."""
    table: dict[str, list[AtenOverload]] = {}
    for op in ops:
        for o in overloads(op):
            table.setdefault(o.packet, []).append(o)
    for name, found in table.items():
        own = [o for o in found if not o.alias]
        ordered = order_overloads([o.sig for o in own])
        names = {o.overload for o in own}
        aliases = [o for o in found if o.alias and o.overload not in names]
        table[name] = [next(o for o in own if o.sig is s) for s in ordered] + aliases
    return table


def functions(name: str, found: list[AtenOverload]) -> list[tuple[str, str, str]]:
    """(Python name, C function, docstring) of the packet and, when it has several, each overload."""
    out = [(name, c_name(name), "\n".join(o.schema for o in found if not o.alias))]
    if len(found) == 1:
        return [*out, (f"{name}.{found[0].overload}", c_name(name), found[0].schema)]
    return out + [(f"{name}.{o.overload}", c_name(f"{name}.{o.overload}"), o.schema) for o in found]


def binding_sources(name: str, found: list[AtenOverload]) -> list[str]:
    srcs = [binding(c_name(name), [o.sig for o in found if not o.alias])]
    if len(found) > 1:
        srcs += [binding(c_name(f"{name}.{o.overload}"), [o.sig]) for o in found]
    return srcs
