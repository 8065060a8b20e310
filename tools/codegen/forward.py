"""Forward-mode AD: one function per differentiable operator that computes
its outputs' tangents from its inputs' tangents (Note [Forward AD] in
src/ember/autograd/ForwardAD.cpp).

A formula comes from the operator's `derivatives` entry, under a key naming
an output (`result`, or a declared return name), as in PyTorch's
derivatives.yaml. Besides a C++ expression over the inputs (`self`, or
`self_p`), their tangents (`self_t`, zeros when absent) and the outputs, a
formula may be:
  auto_element_wise  derived from the backward formulas, which must be
                     elementwise and linear in `grad`: the tangent is the sum
                     over inputs of the backward formula with `grad` replaced
                     by that input's tangent (conjugated around it for
                     complex tangents)
  auto_linear        the operator is linear in its differentiable inputs
                     jointly: the tangent is the operator applied to the
                     tangents
Pointwise operators (`pointwise:`) without a forward key get
auto_element_wise. The others raise PyTorch's NotImplementedError when a
tangent reaches them.
"""

from __future__ import annotations

import re

from .cpp import cpp_arg_type, differentiable_inputs, output_names
from .model import MISSING, Operator

FW = "autograd::forward_ad"


def forward_formulas(op: Operator) -> dict[str, str]:
    """Output name -> formula; empty when the operator has none."""
    if op.forward:
        return dict(op.forward)
    if op.pointwise is not None and op.derivatives and len(op.schema.returns) == 1:
        return {"result": "auto_element_wise"}
    return {}


def has_forward(op: Operator) -> bool:
    return bool(op.derivatives) or bool(op.forward)


def _ident(op: Operator) -> str:
    return "fw_" + op.schema.full_name.replace(".", "_")


def _is_inplace_schema(op: Operator) -> bool:
    return op.schema.is_inplace


def _result_param(op: Operator) -> str:
    rets = op.schema.returns
    if len(rets) == 1:
        return "const std::vector<Tensor>& result" if rets[0].type.is_list else "const Tensor& result"
    return "const std::tuple<" + ", ".join("Tensor" for _ in rets) + ">& _results"


def declaration(op: Operator, inplace: bool) -> str:
    return _signature(op, inplace) + ";"


def _signature(op: Operator, inplace: bool) -> str:
    ps = [f"{cpp_arg_type(a.type)} {a.name}" for a in op.schema.arguments]
    if inplace:
        return f"EMBER_API void {_ident(op)}_inplace(const Tensor& _mutated, {', '.join(ps)})"
    return f"EMBER_API void {_ident(op)}({', '.join(ps)}, {_result_param(op)})"


def _sub_primals(formula: str, arg_names: set[str]) -> str:
    return re.sub(r"\b(\w+)_p\b", lambda m: m.group(1) if m.group(1) in arg_names else m.group(0), formula)


def body_uses_primal(op: Operator, name: str) -> bool:
    """Whether the formulas read input `name`'s value (an in-place variant
    then keeps a copy of it from before the kernel)."""
    text = " ".join(_body_lines(op, inplace=False, target="result"))
    text = re.sub(rf"\b{name}_t\b", "", text)
    text = re.sub(rf"\b{FW}::\w+\(\w+, {name}\)", "", text)
    return re.search(rf"\b{name}\b", text) is not None


def _body_lines(op: Operator, inplace: bool, target: str) -> list[str]:
    formulas = forward_formulas(op)
    arg_names = {a.name for a in op.schema.arguments}
    diff = differentiable_inputs(op)
    setter = f"{FW}::set_inplace_tangent" if inplace else f"{FW}::set_result_tangent"
    if not formulas:
        return [f'  {FW}::throw_not_implemented("{op.name}");']
    lines: list[str] = []
    outs = output_names(op)
    for out, formula in formulas.items():
        dest = target if (inplace or len(outs) == 1) else out
        if formula == "auto_element_wise":
            lines.append("  Tensor _t;")
            # Backward formulas see optional tensors as (maybe undefined) tensors.
            optional = [a.name for a in op.schema.arguments if a.type.is_tensor and a.type.optional]
            for name in optional:
                lines.append(f"  const Tensor {name}_v = {name} ? *{name} : Tensor();")
            for d in op.derivatives:
                if len(d.names) > 1 or d.formula in MISSING:
                    for n in d.names:
                        lines.append(f'  if ({FW}::any_defined({n}_t)) {FW}::throw_not_implemented("{op.name}");')
                    continue
                f = re.sub(r"\bgrad\b", f"{FW}::conj({d.input}_t)", d.formula)
                for name in optional:
                    f = re.sub(rf"\b{name}\b", f"{name}_v", f)
                lines.append(f"  if ({FW}::any_defined({d.input}_t)) _t = {FW}::accumulate(_t, {FW}::conj({f}));")
            lines.append(f"  {setter}({dest}, _t);")
        elif formula == "auto_linear":
            args = []
            diff_names = {a.name for a in diff}
            for a in op.schema.arguments:
                args.append(f"{FW}::or_zeros({a.name}_t, {a.name})" if a.name in diff_names else a.name)
            name = op.name[:-1] if inplace and op.name.endswith("_") else op.name
            call = f"ember::{name}({', '.join(args)})"
            if len(op.schema.returns) == 1 and op.schema.returns[0].type.is_list:
                lines.append(f"  std::vector<Tensor> _ts = {call};")
                lines.append(f"  for (size_t i = 0; i < _ts.size(); ++i) {setter}({dest}[i], _ts[i]);")
            else:
                lines.append(f"  {setter}({dest}, {call});")
        else:
            f = _sub_primals(formula, arg_names)
            # A `*_jvp` helper takes undefined tangents; other formulas see zeros.
            for a in diff if "_jvp(" not in f else []:
                if re.search(rf"\b{a.name}_t\b", f) and not a.type.optional:
                    f = re.sub(rf"\b{a.name}_t\b", f"{FW}::or_zeros({a.name}_t, {a.name})", f)
            for d in op.derivatives:  # inputs whose derivative is missing altogether
                if d.formula in MISSING and not re.search(rf"\b{d.input}_t\b", f):
                    lines.append(f'  if ({FW}::any_defined({d.input}_t)) {FW}::throw_not_implemented("{op.name}");')
            lines.append(f"  {setter}({dest}, {f});")
    return lines


def definition(op: Operator, inplace: bool) -> str:
    diff = differentiable_inputs(op)
    first = op.schema.arguments[0].name
    lines = [_signature(op, inplace).replace("EMBER_API ", "") + " {"]
    for a in diff:
        src = "_mutated" if inplace and a.name == first else a.name
        typ = "std::vector<Tensor>" if a.type.is_list else "Tensor"
        lines.append(f"  {typ} {a.name}_t = {FW}::tangent_of({src});")
    if diff:
        cond = " || ".join(f"{FW}::any_defined({a.name}_t)" for a in diff)
        lines.append(f"  if (!({cond})) return;")
    lines.append(f"  {FW}::DisableGuard _no_fw;")
    outs = output_names(op)
    if not inplace and len(outs) > 1:
        for i, name in enumerate(outs):
            lines.append(f"  const Tensor& {name} = std::get<{i}>(_results);")
            lines.append(f"  (void){name};")
    if inplace:
        lines.append("  const Tensor& result = _mutated;")
        lines.append("  (void)result;")
    lines += _body_lines(op, inplace, "_mutated" if inplace else "result")
    lines.append("}")
    return "\n".join(lines) + "\n"


def call_site(op: Operator, kind: str, result: str) -> tuple[list[str], list[str]]:
    """Lines for the generated operator before and after its kernel: the
    in-place forms keep the mutated input's old value when a formula needs it."""
    if not has_forward(op) or not differentiable_inputs(op):
        return [], []
    names = [a.name for a in op.schema.arguments]
    inplace = kind == "inplace" or op.schema.is_inplace
    if not inplace:
        return [], [f"  if ({FW}::is_active()) autograd::generated::{_ident(op)}({', '.join(names)}, {result});"]
    first = names[0]
    diff = ", ".join(a.name for a in differentiable_inputs(op))
    before = [f"  const bool _fw = {FW}::is_active();"]
    original = first
    if body_uses_primal(op, first):
        before.append("  Tensor _fw_original;")
        before.append(f"  if (_fw && {FW}::any_tangent({diff})) _fw_original = {FW}::copy_of({first});")
        original = f"(_fw_original.defined() ? _fw_original : {first})"
    args = [original] + names[1:]
    after = [f"  if (_fw) autograd::generated::{_ident(op)}_inplace({first}, {', '.join(args)});"]
    return before, after


def needs_inplace_function(op: Operator) -> bool:
    return op.schema.is_inplace or (op.structured and op.inplace)


def needs_functional_function(op: Operator) -> bool:
    return not op.schema.is_inplace
