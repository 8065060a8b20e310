"""Backward nodes, one class per operator with derivatives."""

from __future__ import annotations

import re

from .cpp import analyze_derivatives, differentiable_inputs
from .model import MISSING, Operator


def _pytorch_value_name(field: str, init: str) -> str:
    """PyTorch's name of a saved value: its formulas read sizes, strides, numel
    and storage offsets as symbolic (self.sym_sizes() is saved as self_sym_sizes)."""
    m = re.fullmatch(r"(\w+?)_(sizes|strides|numel|storage_offset)", field)
    if m and init.startswith(m.group(1) + "."):
        return f"{m.group(1)}_sym_{m.group(2)}"
    return field


def node_declaration(op: Operator) -> str:
    info = analyze_derivatives(op, inplace=False)
    fields = [f"  {typ} {field};" for field, typ, _ in info.values]
    fields += [f"  SavedVariable {name}_;" for name, _ in info.tensors]
    fields += [f"  std::vector<SavedVariable> {name}_;" for name in info.tensor_lists]
    fields += [f"  size_t {a.name}_size_ = 0;" for a in differentiable_inputs(op) if a.type.is_list]
    releases = [f"    {name}_.reset_data();" for name, _ in info.tensors]
    releases += [f"    for (auto& v : {name}_) v.reset_data();" for name in info.tensor_lists]
    saved = ", ".join(f'{{"{name}", &{name}_}}' for name, _ in info.tensors)
    listing = []
    if saved:
        listing = [
            "  std::vector<std::pair<const char*, SavedVariable*>> saved_tensors() override {",
            f"    return {{{saved}}};",
            "  }",
        ]
    # PyTorch shows no dtype or device a node saved
    shown = [(f, init) for f, typ, init in info.values if typ not in ("ScalarType", "Device")]
    if shown:
        entries = ", ".join(f'{{"{_pytorch_value_name(f, init)}", saved_value({f})}}' for f, init in shown)
        listing += [
            "  std::vector<std::pair<const char*, SavedValue>> saved_values() const override {",
            f"    return {{{entries}}};",
            "  }",
        ]
    return "\n".join(
        [
            f"struct EMBER_API {op.node_class} final : public Node {{",
            f'  std::string name() const override {{ return "{op.node_display_name}"; }}',
            "  variable_list apply(variable_list&& grads) override;",
            "  void release_variables() override {",
            *releases,
            "  }",
            *listing,
            *fields,
            "};",
            "",
        ]
    )


def node_definition(op: Operator) -> str:
    info = analyze_derivatives(op, inplace=False)
    diff = differentiable_inputs(op)
    lines = [f"variable_list {op.node_class}::apply(variable_list&& grads) {{"]
    # Slot layout: one per tensor input, <name>_size_ per Tensor[] input.
    lines.append("  size_t _n = 0;")
    for a in diff:
        lines.append(f"  const size_t {a.name}_ix = _n;")
        lines.append(f"  _n += {a.name + '_size_' if a.type.is_list else '1'};")
    lines.append("  variable_list grad_inputs(_n);")
    lines.append("  bool _any = false;")
    lines.append("  for (const Tensor& g : grads) _any = _any || g.defined();")
    lines.append("  if (!_any) return grad_inputs;")
    lines.append("  const Tensor& grad = grads[0];")
    lines.append("  (void)grad;")
    for name, is_out in info.tensors:
        owner = "shared_from_this()" if is_out else "nullptr"
        lines.append(f"  Tensor {name} = {name}_.unpack({owner});")
    for name in info.tensor_lists:
        lines.append(f"  std::vector<Tensor> {name};")
        lines.append(f"  for (const auto& v : {name}_) {name}.push_back(v.unpack());")
    for d in op.derivatives:
        if len(d.names) > 1:
            lines += _multi_input_formula(d, info.formulas[d.input])
    for a in diff:
        group = next(d for d in op.derivatives if a.name in d.names)
        if len(group.names) > 1:
            continue
        formula = info.formulas[a.name]
        if a.type.is_list:
            lines.append(f"  bool {a.name}_needed = false;")
            lines.append(
                f"  for (size_t i = 0; i < {a.name}_size_; ++i) "
                f"{a.name}_needed = {a.name}_needed || should_compute_output({a.name}_ix + i);"
            )
            lines.append(f"  if ({a.name}_needed) {{")
            if formula in MISSING:
                lines.append(_throw_missing(formula, op.name))
            else:
                lines.append(f"    std::vector<Tensor> _g = {formula};")
                lines.append(
                    f"    for (size_t i = 0; i < {a.name}_size_ && i < _g.size(); ++i) "
                    f"grad_inputs[{a.name}_ix + i] = std::move(_g[i]);"
                )
            lines.append("  }")
            continue
        lines.append(f"  if (should_compute_output({a.name}_ix)) {{")
        if formula in MISSING:
            lines.append(_throw_missing(formula, op.name))
        else:
            lines.append(f"    grad_inputs[{a.name}_ix] = {formula};")
        lines.append("  }")
    lines.append("  return grad_inputs;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _throw_missing(formula: str, name: str) -> str:
    """PyTorch's errors for a missing derivative: not_implemented("name") in its
    derivatives.yaml raises NotImplementedError; an operator without an entry
    there raises RuntimeError from its autograd kernel."""
    if formula == "no_formula":
        return f'    throw Error("derivative for aten::{name.split(".")[0]} is not implemented");'
    return f"    throw NotImplementedError(\"the derivative for '{name}' is not implemented.\");"


def _multi_input_formula(d, formula: str) -> list[str]:
    """One formula for several inputs: called once with grad_input_mask, it
    returns a tuple whose entries are taken for the inputs that need them."""
    n = len(d.names)
    needed = ", ".join(f"should_compute_output({name}_ix)" for name in d.names)
    lines = [f"  if ({' || '.join(f'should_compute_output({name}_ix)' for name in d.names)}) {{"]
    if formula in MISSING:
        lines.append(_throw_missing(formula, d.input))
    else:
        lines.append(f"    const std::array<bool, {n}> grad_input_mask = {{{needed}}};")
        lines.append(f"    auto _r = {formula};")
        for i, name in enumerate(d.names):
            lines.append(f"    if (grad_input_mask[{i}]) grad_inputs[{name}_ix] = std::get<{i}>(std::move(_r));")
    lines.append("  }")
    return lines
