"""Parsed, immutable records of ops.yaml. Each remembers its YAML line so that
an error points at the entry that caused it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .pointwise import Pointwise


@dataclass(frozen=True)
class Location:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class CodegenError(Exception):
    def __init__(self, loc: Location | None, msg: str):
        super().__init__(f"{loc}: {msg}" if loc else msg)


@dataclass(frozen=True)
class Type:
    base: str  # Tensor, int, float, bool, str, Scalar, ScalarType, Device, Generator, MemoryFormat
    optional: bool = False
    is_list: bool = False
    list_size: int | None = None
    alias: str | None = None  # "a" in Tensor(a) / Tensor(a!)
    mutable: bool = False  # the "!" in Tensor(a!)
    elem_optional: bool = False  # Tensor?[]: a list whose entries may be None

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and not self.is_list

    @property
    def is_tensor_list(self) -> bool:
        return self.base == "Tensor" and self.is_list

    def __str__(self) -> str:
        s = self.base + ("?" if self.elem_optional else "")
        if self.alias:
            s += f"({self.alias}{'!' if self.mutable else ''})"
        if self.is_list:
            s += f"[{self.list_size or ''}]"
        if self.optional:
            s += "?"
        return s


_TYPE_RE = re.compile(r"^(\w+)(\?)?(?:\((\w)(!?)\))?(?:\[(\d*)\])?(\?)?$")


def parse_type(text: str, loc: Location) -> Type:
    m = _TYPE_RE.match(text)
    if not m:
        raise CodegenError(loc, f"cannot parse type {text!r}")
    base, elem_opt, alias, bang, lsize, opt = m.groups()
    if elem_opt and lsize is None:  # "T?" : the ? marks the argument optional
        if opt:
            raise CodegenError(loc, f"cannot parse type {text!r}")
        elem_opt, opt = None, elem_opt
    known = {"Tensor", "int", "float", "bool", "str", "Scalar", "ScalarType", "Device", "Generator", "MemoryFormat"}
    if base not in known:
        raise CodegenError(loc, f"unknown type {base!r} (known: {', '.join(sorted(known))})")
    return Type(
        base=base,
        optional=bool(opt),
        is_list=lsize is not None,
        list_size=int(lsize) if lsize else None,
        alias=alias,
        mutable=bool(bang),
        elem_optional=bool(elem_opt),
    )


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: str | None
    kwarg_only: bool


@dataclass(frozen=True)
class Return:
    name: str | None
    type: Type


@dataclass(frozen=True)
class Schema:
    name: str  # base name, e.g. "add" or "fill_"
    overload: str  # "" or e.g. "Tensor"
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def is_inplace(self) -> bool:
        return self.name.endswith("_") and not self.name.endswith("__")

    @property
    def positional(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @property
    def tensor_args(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.type.is_tensor)

    def __str__(self) -> str:
        args = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            s = f"{a.type} {a.name}"
            if a.default is not None:
                s += f"={a.default}"
            args.append(s)
        rets = ", ".join(str(r.type) + (f" {r.name}" if r.name else "") for r in self.returns)
        if len(self.returns) != 1:
            rets = f"({rets})"
        return f"{self.full_name}({', '.join(args)}) -> {rets}"


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


_SCHEMA_RE = re.compile(r"^([\w]+)(?:\.(\w+))?\((.*)\)\s*->\s*(.+)$")


def parse_schema(text: str, loc: Location) -> Schema:
    m = _SCHEMA_RE.match(text.strip())
    if not m:
        raise CodegenError(loc, f"cannot parse schema {text!r}: expected name[.overload](args) -> returns")
    name, overload, args_text, rets_text = m.groups()
    args: list[Argument] = []
    kwarg_only = False
    for part in _split_top(args_text):
        if part == "*":
            kwarg_only = True
            continue
        decl, _, default = part.partition("=")
        tokens = decl.split()
        if len(tokens) != 2:
            raise CodegenError(loc, f"cannot parse argument {part!r}")
        args.append(
            Argument(
                name=tokens[1],
                type=parse_type(tokens[0], loc),
                default=default.strip() if default else None,
                kwarg_only=kwarg_only,
            )
        )
    rets_text = rets_text.strip()
    if rets_text.startswith("("):
        rets_text = rets_text[1:-1]
    returns = []
    for part in _split_top(rets_text):
        tokens = part.split()
        returns.append(Return(name=tokens[1] if len(tokens) > 1 else None, type=parse_type(tokens[0], loc)))
    return Schema(name=name, overload=overload or "", arguments=tuple(args), returns=tuple(returns))


# Formulas that mark a derivative PyTorch does not have: "not_implemented" is its
# not_implemented() (NotImplementedError), "no_formula" an operator without a
# derivatives.yaml entry (RuntimeError "derivative for aten::name is not implemented").
MISSING = ("not_implemented", "no_formula")


@dataclass(frozen=True)
class Derivative:
    input: str  # argument name, or several ("input, weight, bias") sharing one formula
    formula: str  # C++ expression, or one of MISSING

    @property
    def names(self) -> tuple[str, ...]:
        """The inputs this formula gives gradients for. With more than one, the
        formula returns a tuple (one entry per name) and may read
        `grad_input_mask`, a std::array<bool, N> of the gradients needed."""
        return tuple(n.strip() for n in self.input.split(","))


@dataclass(frozen=True)
class Operator:
    schema: Schema
    loc: Location
    variants: frozenset[str]
    structured: bool
    inplace: bool  # structured: also generate name_
    out: bool  # structured: also generate name.out
    dispatch: tuple[tuple[str, str], ...]  # (backend, kernel name)
    derivatives: tuple[Derivative, ...]
    factory: bool
    python: bool
    node_name: str | None = field(default=None)  # set after numbering
    # Per return: does it carry gradients (default: floating tensors do).
    output_differentiability: tuple[bool, ...] | None = None
    # Set for pointwise operators (tools/codegen/pointwise.py).
    pointwise: Pointwise | None = None
    # Autocast policy (Note [Autocast]): lower_precision_fp, fp32 or promote.
    autocast: str | None = None
    # PyTorch's device check of the CUDA entry (structured or plain: the
    # wrapper's name in its error); None where PyTorch's is NoCheck.
    device_check: str | None = None
    # Forward-mode formulas, (output name, formula): keys of `derivatives`
    # naming an output (`result`, or the declared return names), as in
    # PyTorch's derivatives.yaml; a formula may be auto_element_wise or
    # auto_linear (tools/codegen/forward.py).
    forward: tuple[tuple[str, str], ...] = ()
    # Arguments whose default the C++ API leaves out (PyTorch's
    # cpp_no_default_args), where it would make two overloads' calls ambiguous.
    cpp_no_default_args: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def node_class(self) -> str | None:
        """The node's C++ class: node_name without a namespace (`node:
        torch::autograd::Identity` names itself as PyTorch's C++ nodes do)."""
        if not self.node_name:
            return None
        if "@" in self.node_name:  # PyTorch's NotImplemented node: one class per operator
            return "NotImplemented_" + self.node_name.split("@", 1)[1].replace(".", "_")
        return self.node_name.rsplit("::", 1)[-1]

    @property
    def node_display_name(self) -> str | None:
        """What the node's name() returns."""
        return self.node_name.split("@", 1)[0] if self.node_name else None

    def kernel(self, backend: str) -> str | None:
        return dict(self.dispatch).get(backend)

    @property
    def composite_implicit(self) -> str | None:
        return self.kernel("CompositeImplicitAutograd")

    @property
    def composite_explicit(self) -> str | None:
        return self.kernel("CompositeExplicitAutograd")
