"""Backward nodes, one class per operator with derivatives."""

from __future__ import annotations

from .cpp import analyze_derivatives, differentiable_inputs
from .model import Operator


def node_declaration(op: Operator) -> str:
    info = analyze_derivatives(op, inplace=False)
    fields = [f"  {typ} {field};" for field, typ, _ in info.values]
    fields += [f"  SavedVariable {name}_;" for name, _ in info.tensors]
    releases = [f"    {name}_.reset_data();" for name, _ in info.tensors]
    return "\n".join(
        [
            f"struct EMBER_API {op.node_name} final : public Node {{",
            f'  std::string name() const override {{ return "{op.node_name}"; }}',
            "  variable_list apply(variable_list&& grads) override;",
            "  void release_variables() override {",
            *releases,
            "  }",
            *fields,
            "};",
            "",
        ]
    )


def node_definition(op: Operator) -> str:
    info = analyze_derivatives(op, inplace=False)
    diff = differentiable_inputs(op)
    lines = [f"variable_list {op.node_name}::apply(variable_list&& grads) {{"]
    lines.append(f"  variable_list grad_inputs({len(diff)});")
    lines.append("  if (!grads[0].defined()) return grad_inputs;")
    lines.append("  const Tensor& grad = grads[0];")
    lines.append("  (void)grad;")
    for name, is_out in info.tensors:
        owner = "shared_from_this()" if is_out else "nullptr"
        lines.append(f"  Tensor {name} = {name}_.unpack({owner});")
    for i, name in enumerate(diff):
        formula = info.formulas[name]
        lines.append(f"  if (should_compute_output({i})) {{")
        if formula == "not_implemented":
            lines.append(f'    throw Error("the derivative for \'{op.name}\' is not implemented.");')
        else:
            lines.append(f"    grad_inputs[{i}] = {formula};")
        lines.append("  }")
    lines.append("  return grad_inputs;")
    lines.append("}")
    return "\n".join(lines) + "\n"
