"""C++ side of the generated code: the public API (free functions and Tensor
methods), device dispatch and the autograd wrappers around each kernel."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import MISSING, Argument, CodegenError, Operator, Return, Type

# ---------------------------------------------------------------------------
# Variants: one functional schema may give functional, in-place and out forms.


@dataclass(frozen=True)
class Variant:
    op: Operator
    kind: str  # "functional" | "inplace" | "out"
    name: str  # C++ name: add, add_, add_out

    @property
    def args(self) -> tuple[Argument, ...]:
        """Arguments in C++ order (out first for the out variant)."""
        base = self.op.schema.arguments
        if self.kind == "inplace":
            first = base[0]
            mutable_self = Argument(first.name, Type("Tensor", alias="a", mutable=True), None, False)
            return (mutable_self,) + base[1:]
        if self.kind == "out":
            return (Argument("out", Type("Tensor", alias="a", mutable=True), None, True),) + base
        return base

    @property
    def is_mutating(self) -> bool:
        return self.kind != "functional" or self.op.schema.is_inplace

    @property
    def returns(self) -> tuple[Return, ...]:
        if self.kind in ("inplace", "out"):
            return (Return(None, Type("Tensor", alias="a", mutable=True)),)
        return self.op.schema.returns


def variants_of(op: Operator) -> list[Variant]:
    out = [Variant(op, "functional", op.name)]
    if op.structured and op.inplace:
        out.append(Variant(op, "inplace", op.name + "_"))
    if op.structured and op.out:
        out.append(Variant(op, "out", op.name + "_out"))
    return out


# ---------------------------------------------------------------------------
# Types


def cpp_arg_type(t: Type, kernel: bool = False) -> str:
    if t.base == "Tensor":
        if t.is_list:
            return "const std::vector<std::optional<Tensor>>&" if t.elem_optional else "const TensorList&"
        if t.optional:
            return "const std::optional<Tensor>&"
        return "Tensor&" if (kernel and t.mutable) else "const Tensor&"
    if t.base == "int":
        if t.is_list:
            if t.optional:
                return "std::optional<std::vector<int64_t>>" if kernel else "OptionalIntArrayRef"
            return "IntArrayRef"
        return "std::optional<int64_t>" if t.optional else "int64_t"
    if t.base == "float" and t.is_list:
        return "std::optional<std::vector<double>>" if t.optional else "const std::vector<double>&"
    if t.base == "bool" and t.is_list and t.list_size and not t.optional:
        return f"std::array<bool, {t.list_size}>"
    simple = {
        "float": "double",
        "bool": "bool",
        "str": "const std::string&",
        "Scalar": "const Scalar&",
        "ScalarType": "ScalarType",
        "Device": "Device",
        "Generator": "Generator",
        "MemoryFormat": "MemoryFormat",
    }
    if t.base not in simple or t.is_list:
        raise CodegenError(None, f"type {t} has no C++ mapping yet")
    base = simple[t.base]
    if t.optional:
        inner = base.replace("const ", "").replace("&", "")
        return f"std::optional<{inner}>"
    return base


def cpp_storage_type(t: Type) -> str:
    """Type used to keep a non-tensor argument inside a backward node."""
    if t.base == "int" and t.is_list:
        return "std::optional<std::vector<int64_t>>" if t.optional else "std::vector<int64_t>"
    return cpp_arg_type(t).replace("const ", "").replace("&", "")


def cpp_default(a: Argument) -> str:
    d = a.default
    if d is None:
        return ""
    if d == "None":
        return "std::nullopt"
    if d in ("True", "False"):
        return d.lower()
    if d == "[]":
        return "{}"
    if a.type.base == "ScalarType":
        return f"ScalarType::{d}"
    if a.type.base == "MemoryFormat":
        return {"contiguous_format": "MemoryFormat::Contiguous", "preserve_format": "MemoryFormat::Preserve"}[d]
    if a.type.base == "str" and d[:1] in ("'", '"'):
        return '"' + d[1:-1] + '"'
    return d


def returns_type(rets) -> str:
    if len(rets) == 1:
        if rets[0].type.is_list:
            return "std::vector<Tensor>"
        return "const Tensor&" if rets[0].type.mutable else "Tensor"
    return "std::tuple<" + ", ".join("Tensor" for _ in rets) + ">"


def cpp_return_type(v: Variant) -> str:
    return returns_type(v.returns)


def params(args, with_defaults: bool, kernel: bool = False, no_defaults: tuple[str, ...] = ()) -> str:
    parts = []
    for a in args:
        s = f"{cpp_arg_type(a.type, kernel)} {a.name}"
        if with_defaults and a.default is not None and a.name not in no_defaults:
            s += f" = {cpp_default(a)}"
        parts.append(s)
    return ", ".join(parts)


# ---------------------------------------------------------------------------
# Declarations


def call_shapes(variants: list[Variant]) -> set[tuple]:
    """(name, argument types) of every full C++ call of these variants."""
    return {(v.name, tuple(cpp_arg_type(a.type) for a in v.args)) for v in variants}


def defaults_clash(v: Variant, shapes: set[tuple]) -> bool:
    """Whether v's call with its defaulted arguments left out is another
    overload's full call (any.dims(self) and any(self)): then, as PyTorch's
    C++ API does, v keeps no defaults."""
    required = tuple(cpp_arg_type(a.type) for a in v.args if a.default is None)
    full = tuple(cpp_arg_type(a.type) for a in v.args)
    return required != full and (v.name, required) in shapes


def declaration(v: Variant, with_defaults: bool = True) -> str:
    return f"EMBER_API {cpp_return_type(v)} {v.name}({params(v.args, with_defaults, no_defaults=v.op.cpp_no_default_args)});"


def method_variants(op: Operator) -> list[Variant]:
    """Variants exposed as Tensor methods."""
    vs = []
    for v in variants_of(op):
        if v.kind == "functional" and "method" in op.variants:
            vs.append(v)
        elif v.kind == "inplace":
            vs.append(v)
    return vs


def method_declaration(v: Variant, with_defaults: bool = True) -> str:
    args = v.args[1:]
    return f"{cpp_return_type(v)} {v.name}({params(args, with_defaults, no_defaults=v.op.cpp_no_default_args)}) const;"


def method_definition(v: Variant) -> str:
    args = v.args[1:]
    call = ", ".join(["*this"] + [a.name for a in args])
    return f"{cpp_return_type(v)} Tensor::{v.name}({params(args, False)}) const {{\n  return ember::{v.name}({call});\n}}\n"


# ---------------------------------------------------------------------------
# Definitions: dispatch + autograd


def kernel_call(v: Variant) -> str:
    """Expression that runs the kernel for this variant."""
    op = v.op
    if op.structured:
        base_args = [a.name for a in op.schema.arguments]
        if v.kind == "functional":
            out = "_out"
        elif v.kind == "inplace":
            out = f"const_cast<Tensor&>({op.schema.arguments[0].name})"
            base_args[0] = out
        else:
            out = "const_cast<Tensor&>(out)"
        return f"KERNEL({', '.join(base_args + [out])})"
    args = []
    for a in op.schema.arguments:
        args.append(f"const_cast<Tensor&>({a.name})" if a.type.mutable and a.type.is_tensor else a.name)
    return f"KERNEL({', '.join(args)})"


def dispatch_device_expr(op: Operator) -> str:
    """The device whose kernel runs: the first tensor's (else the Device
    argument's), or meta when any other tensor argument is meta (as in
    PyTorch, where the meta key outranks the others)."""
    tensors = [a.name for a in op.schema.arguments if a.type.base == "Tensor"]
    first = next((a.name for a in op.schema.arguments if a.type.is_tensor), None)
    if first is not None:
        base = f"{first}.device().type"
        tensors.remove(first)
    else:
        dev = next((a.name for a in op.schema.arguments if a.type.base == "Device"), None)
        base = f"({dev} ? {dev}->type : DeviceType::CPU)" if dev else "DeviceType::CPU"
    if not tensors:
        return base
    return f"dispatch::device_type({base}, {', '.join(tensors)})"


def device_check_line(op: Operator) -> str:
    """PyTorch's check that the tensors of a CUDA call share one device, naming
    the wrapper as its generated CUDA entry is named."""
    name, overload = op.schema.name, op.schema.overload
    if any(a.name == "out" and a.type.mutable for a in op.schema.arguments):
        name += "_out"
    if op.device_check == "structured":
        method = f"wrapper_CUDA_{name}" + (f"_{overload}" if overload else "")
    else:
        method = f"wrapper_CUDA_{overload}_{name}"
    args = []
    for a in op.schema.arguments:
        if not a.type.is_tensor:
            continue
        ptr = f"{a.name} ? &*{a.name} : nullptr" if a.type.optional else f"&{a.name}"
        args.append(f'{{"{a.name}", {ptr}}}')
    return f'  dispatch::check_same_device("{method}", {{{", ".join(args)}}});'


def kernel_fn_type(op: Operator) -> str:
    ps = [cpp_arg_type(a.type, kernel=True) for a in op.schema.arguments]
    if op.structured:
        ps.append("Tensor&")
        ret = "Tensor&"
    else:
        ret = returns_type(op.schema.returns).replace("const Tensor&", "Tensor&")
    return f"{ret} (*)({', '.join(ps)})"


def table_name(op: Operator) -> str:
    return f"{op.schema.full_name.replace('.', '_')}_kernels"


# The device types in the order of EMBER_FORALL_DEVICE_TYPES (core/Device.h;
# ops/Dispatch.cpp asserts the count).
DEVICE_TYPES = ("CPU", "CUDA", "Meta") + tuple(
    "IPU XPU MKLDNN OpenGL OpenCL IDEEP HIP VE FPGA MAIA XLA Lazy Vulkan MPS HPU MTIA PrivateUse1".split()
)


def backend_kernels(op: Operator) -> dict[str, str]:
    return {b: k for b, k in op.dispatch if b in DEVICE_TYPES}


_SIZE_ATTR_RE = re.compile(r"\b(\w+)\.(sizes|strides|storage_offset|scalar_type|dim|numel|device)\(\)")


def output_names(op: Operator) -> list[str]:
    """Names formulas use for the forward outputs: `result` for a single
    output, the declared names (or result0, result1, ...) otherwise."""
    rets = op.schema.returns
    if len(rets) == 1:
        return ["result"]
    return [r.name or f"result{i}" for i, r in enumerate(rets)]


def differentiable_outputs(op: Operator) -> list[int]:
    n = len(op.schema.returns)
    flags = op.output_differentiability or tuple([True] * n)
    return [i for i in range(n) if flags[i]]


@dataclass
class SavedInfo:
    tensors: list[tuple[str, bool]]  # (name, is_output)
    tensor_lists: list[str]  # saved Tensor[] inputs
    values: list[tuple[str, str, str]]  # (field, type, init expr)
    formulas: dict[str, str]  # input -> rewritten formula


def analyze_derivatives(op: Operator, inplace: bool) -> SavedInfo:
    tensor_args = {a.name for a in op.schema.arguments if a.type.is_tensor}
    list_args = {a.name for a in op.schema.arguments if a.type.is_tensor_list}
    other_args = {a.name: a for a in op.schema.arguments if a.type.base != "Tensor"}
    outs = output_names(op)
    tensors: list[tuple[str, bool]] = []
    lists: list[str] = []
    values: list[tuple[str, str, str]] = []
    formulas: dict[str, str] = {}
    attr_types = {
        "sizes": "std::vector<int64_t>",
        "strides": "std::vector<int64_t>",
        "storage_offset": "int64_t",
        "scalar_type": "ScalarType",
        "dim": "int64_t",
        "numel": "int64_t",
        "device": "Device",
    }
    for d in op.derivatives:
        f = d.formula
        if f in MISSING:
            formulas[d.input] = f
            continue

        def attr(m):
            name, what = m.group(1), m.group(2)
            if name not in tensor_args and name not in outs:
                return m.group(0)
            field = f"{name}_{what}"
            init = f"{name}.{what}()" + (".vec()" if what in ("sizes", "strides") else "")
            if (field, attr_types[what], init) not in values:
                values.append((field, attr_types[what], init))
            return field

        f = _SIZE_ATTR_RE.sub(attr, f)
        for name in sorted(tensor_args):
            # In a formula `grad` is always the incoming gradient, also where
            # an input (of a backward operator) bears that name.
            if name == "grad":
                continue
            if re.search(rf"\b{name}\b", f) and (name, False) not in tensors:
                tensors.append((name, False))
        for name in sorted(list_args):
            if re.search(rf"\b{name}\b", f) and name not in lists:
                lists.append(name)
        for name in outs:
            if re.search(rf"\b{name}\b", f) and (name, True) not in tensors:
                tensors.append((name, True))
        for name, a in other_args.items():
            if re.search(rf"\b{name}\b", f):
                init = name
                if a.type.base == "int" and a.type.is_list and not a.type.optional:
                    init = f"{name}.vec()"
                entry = (name, cpp_storage_type(a.type), init)
                if entry not in values:
                    values.append(entry)
        formulas[d.input] = f
    return SavedInfo(tensors=tensors, tensor_lists=lists, values=values, formulas=formulas)


def differentiable_inputs(op: Operator) -> list[Argument]:
    names = {n for d in op.derivatives for n in d.names}
    return [a for a in op.schema.arguments if a.type.base == "Tensor" and a.name in names]


def _output_exprs(op: Operator, result: str) -> list[str]:
    """C++ expressions for each forward output given the result variable."""
    rets = op.schema.returns
    if len(rets) == 1:
        return [result]
    return [f"std::get<{i}>({result})" for i in range(len(rets))]


def view_base_arg(v: Variant) -> str | None:
    """For a differentiable view operator (returns Tensor(a) aliasing a
    non-mutated input), the name of that input; the output is then tracked as
    a view of it (see Note [Views and in-place operations])."""
    op = v.op
    rets = op.schema.returns
    if v.kind != "functional" or not op.derivatives or len(rets) != 1:
        return None
    rt = rets[0].type
    if not rt.alias or rt.mutable:
        return None
    for a in op.schema.arguments:
        if a.type.is_tensor and a.type.alias == rt.alias and not a.type.mutable:
            return a.name
    return None


_AUTOCAST_POLICY = {
    "lower_precision_fp": "autocast::Policy::LowerPrecisionFp",
    "fp32": "autocast::Policy::Fp32",
    "promote": "autocast::Policy::Promote",
}


def autocast_prologue(v: Variant) -> str:
    """Casts the arguments and calls the operator again with autocast
    excluded, when autocast is active for its device (Note [Autocast])."""
    op = v.op
    if not op.autocast or v.kind != "functional" or op.schema.is_inplace:
        return ""
    first = next(a.name for a in op.schema.arguments if a.type.base == "Tensor")
    names = [a.name for a in op.schema.arguments]
    policy = _AUTOCAST_POLICY[op.autocast]
    casts = ", ".join(f"autocast::cast(_ac_type, {n}, _ac_device)" for n in names)
    return (
        "  if (autocast::any_active()) {\n"
        f"    const DeviceType _ac_device = autocast::device_of({first});\n"
        "    if (autocast::is_active(_ac_device)) {\n"
        f"      const ScalarType _ac_type = autocast::target_type({policy}, _ac_device, {', '.join(names)});\n"
        "      autocast::ExcludeGuard _ac_guard(_ac_device);\n"
        f"      return ember::{v.name}({casts});\n"
        "    }\n"
        "  }\n"
    )


# Operators that read the conjugate and negative bits themselves (copy_ and
# clone resolve them; the aliases flip them; the factories read only metadata).
MATH_BITS_AWARE = frozenset(
    "copy_ clone _conj _neg_view resize_ resize_as_ set_ empty_like zeros_like ones_like full_like rand_like "
    "randn_like randint_like".split()
)

# Operands a product takes with their conjugate bit (Note [Conjugate operands]
# in cpu/LinearAlgebra.cpp); a negative bit is still resolved.
CONJ_OPERANDS = {
    "mm": ("self", "mat2"),
    "addmm": ("mat1", "mat2"),
    "dot": ("self", "tensor"),
    "vdot": ("self", "other"),
}


def math_bits_prologue(v: Variant) -> str:
    """Note [Conjugate and negative bits]: an operator that does not read the
    bits runs again on resolved operands when any operand has one; a written
    operand with a bit is computed in a resolved copy and copied back. Views
    keep the bits (their output carries its base's)."""
    op = v.op
    if op.name in MATH_BITS_AWARE or any(r.type.alias and not r.type.mutable for r in v.returns):
        return ""
    tensors = [a for a in v.args if a.type.is_tensor]
    if not tensors:
        return ""
    conj_ok = CONJ_OPERANDS.get(op.name, ())
    body, call_args, written, tests = [], [], [], []
    for a in v.args:
        if not a.type.is_tensor:
            call_args.append(a.name)
            continue
        if a.name in conj_ok and not a.type.mutable:
            tests.append(f"dispatch::has_neg_bit({a.name})")
            call_args.append(f"dispatch::resolve_neg_bit({a.name})")
            continue
        tests.append(f"dispatch::has_math_bits({a.name})")
        if a.type.mutable:
            body.append(f'    const auto _mb_{a.name} = dispatch::resolve_written("{op.name}", {a.name});')
            call_args.append(f"_mb_{a.name}")
            written.append(a)
        else:
            call_args.append(f"dispatch::resolve_math_bits({a.name})")
    call = f"ember::{v.name}({', '.join(call_args)})"
    backs = [f"    dispatch::write_back({a.name}, _mb_{a.name});" for a in written]
    ret = cpp_return_type(v)
    if not written:
        body.append(f"    return {call};")
    elif ret == "const Tensor&":
        body.append(f"    {call};")
        body += backs
        body.append(f"    return {next(a.name for a in written if not a.type.is_list)};")
    else:
        body.append(f"    auto _mb_result = {call};")
        body += backs
        singles = [a for a in written if not a.type.is_list]
        if ret.startswith("std::tuple<Tensor") and singles:
            pairs = ", ".join(f"_mb_{a.name}, {a.name}" for a in singles)
            n = len(v.returns)
            items = ", ".join(f"dispatch::original_of(std::get<{i}>(_mb_result), {pairs})" for i in range(n))
            body.append(f"    return {ret}({items});")
        elif ret == "Tensor" and singles:
            pairs = ", ".join(f"_mb_{a.name}, {a.name}" for a in singles)
            body.append(f"    return dispatch::original_of(_mb_result, {pairs});")
        else:
            body.append("    return _mb_result;")
    return f"  if (EMBER_UNLIKELY({' || '.join(tests)})) {{\n" + "\n".join(body) + "\n  }\n"


def profiler_prologue(v: Variant) -> str:
    """Times the call as an event while the profiler is on (PyTorch's
    operator names: aten::add, aten::add_)."""
    name = v.op.name + ("_" if v.kind == "inplace" else "")
    shapes = ", ".join(a.name for a in v.args)
    return (
        "  std::optional<profiler::RecordScope> _prof;\n"
        "  if (profiler::is_active()) {\n"
        f'    _prof.emplace("aten::{name}");\n'
        f"    if (profiler::records_shapes()) _prof->set_input_shapes(profiler::shapes_of({shapes}));\n"
        "  }\n"
    )


def definition(v: Variant) -> str:
    op = v.op
    sig = f"{cpp_return_type(v)} {v.name}({params(v.args, False)})"
    prologue = autocast_prologue(v) + profiler_prologue(v)
    if op.composite_implicit:
        call = kernel_call(v).replace("KERNEL", f"native::{op.composite_implicit}")
        check = ""
        explicit_out = v.kind == "functional" and any(a.name == "out" and a.type.mutable for a in v.args)
        if v.kind == "out" or explicit_out:
            ins = ", ".join(a.name for a in op.schema.arguments if a.type.base == "Tensor" and a.name != "out")
            if ins:
                check = f'  autograd::check_no_grad_for_out("{op.name}", {ins});\n'
        return f"{sig} {{\n{prologue}{check}  return {call};\n}}\n"

    prologue = autocast_prologue(v) + math_bits_prologue(v) + profiler_prologue(v)
    lines = [sig + " {"]
    if prologue:
        lines.append(prologue.rstrip("\n"))
    view_of = view_base_arg(v)
    list_return = len(op.schema.returns) == 1 and op.schema.returns[0].type.is_list
    if view_of:
        # Read before the kernel runs below autograd (grad mode off there).
        lines.append(
            f"  const auto _creation_meta = autograd::view_creation_meta({'true' if list_return else 'false'});"
        )
    if op.device_check and v.kind == "functional":
        lines.append(device_check_line(op))
    # 1. the kernel expression (device dispatch; a CompositeExplicitAutograd
    # kernel serves the devices without their own entry)
    if op.composite_explicit and not backend_kernels(op):
        call = kernel_call(v).replace("KERNEL", f"native::{op.composite_explicit}")
    else:
        dev = dispatch_device_expr(op)
        lines.append(f"  auto _kernel = dispatch::{table_name(op)}[static_cast<int>({dev})];")
        if op.composite_explicit:
            lines.append(f"  if (!_kernel) _kernel = &native::{op.composite_explicit};")
        else:
            lines.append(f'  if (!_kernel) dispatch::missing_kernel("{op.schema.full_name}", {dev});')
        call = kernel_call(v).replace("KERNEL", "_kernel")

    mutated = [a.name for a in v.args if a.type.mutable and a.type.is_tensor]
    if "out" in mutated and not op.derivatives and v.kind == "functional":
        # An explicit `op.out` schema: out= never records autograd (as PyTorch).
        ins = ", ".join(a.name for a in op.schema.arguments if a.type.base == "Tensor" and a.name != "out")
        if ins:
            lines.append(f'  autograd::check_no_grad_for_out("{op.name}", {ins});')
    diff = [a.name for a in differentiable_inputs(op)] if op.derivatives else []
    list_inputs = {a.name for a in differentiable_inputs(op) if a.type.is_list} if op.derivatives else set()

    if v.kind == "out":
        if diff:
            ins = ", ".join(diff)
            lines.append(f'  autograd::check_no_grad_for_out("{op.name}", {ins});')
        lines.append("  const bool _top = autograd::at_top_level();")
        if op.structured:
            lines.append("  {")
            lines.append("    autograd::BelowAutogradGuard _guard;")
            lines.append(f"    {call};")
            lines.append("  }")
        lines.append("  if (_top) out.unsafeGetTensorImpl()->bump_version();")
        lines.append("  return out;")
        lines.append("}")
        return "\n".join(lines) + "\n"

    inplace = v.kind == "inplace" or op.schema.is_inplace
    info = analyze_derivatives(op, inplace) if diff else None
    optional_tensors = {a.name: a.type.optional for a in op.schema.arguments if a.type.is_tensor}
    if diff:
        ins = ", ".join(diff)
        lines.append(f"  const bool _requires_grad = autograd::compute_requires_grad({ins});")
        if inplace:
            lines.append(f"  autograd::check_inplace({mutated[0]}, _requires_grad);")
        lines.append(f"  std::shared_ptr<autograd::generated::{op.node_class}> _grad_fn;")
        lines.append("  if (_requires_grad) {")
        lines.append(f"    _grad_fn = std::make_shared<autograd::generated::{op.node_class}>();")
        lines.append(f"    _grad_fn->set_next_edges(autograd::collect_next_edges({ins}));")
        for name in sorted(list_inputs):
            lines.append(f"    _grad_fn->{name}_size_ = {name}.size();")
        outs = output_names(op)
        for field, _, init in info.values:
            if not any(init.startswith(o + ".") for o in outs):
                lines.append(f"    _grad_fn->{field} = {init};")
        diff_args = differentiable_inputs(op)
        # Saved in the order of their names, as PyTorch's generated code saves
        # them (the order saved-tensor hooks see).
        for name, is_out in sorted(info.tensors):
            if is_out:
                continue
            value = f"{name}.clone()" if inplace and name == mutated[0] else name
            if optional_tensors.get(name):
                value = f"{name}.value_or(Tensor())"
            save = f"_grad_fn->{name}_ = autograd::SavedVariable({value}, false);"

            # As PyTorch: save an input only when a gradient that needs it will be
            # computed, so that changing it in place later is no error otherwise.
            def formula_of(arg):  # a multi-input entry ("input, weight: f") covers several args
                for d in op.derivatives:
                    if arg.name in d.names:
                        return info.formulas.get(d.input, "")
                return info.formulas.get(arg.name, "")

            users = [i for i, a in enumerate(diff_args) if re.search(rf"\b{name}\b", formula_of(a))]
            if users and not any(a.type.is_list for a in diff_args):
                cond = " || ".join(f"_grad_fn->should_compute_output({i})" for i in users)
                lines.append(f"    if ({cond}) {save}")
            else:
                lines.append(f"    {save}")
        optional_lists = {a.name for a in op.schema.arguments if a.type.is_tensor_list and a.type.elem_optional}
        for name in info.tensor_lists:
            if name in optional_lists:  # Tensor?[]: None is saved as an undefined tensor
                lines.append(
                    f"    for (const auto& _t : {name}) _grad_fn->{name}_.emplace_back(_t ? *_t : Tensor(), false);"
                )
            else:
                lines.append(f"    for (const Tensor& _t : {name}) _grad_fn->{name}_.emplace_back(_t, false);")
        lines.append("  }")

    # Forward AD (tools/codegen/forward.py): an in-place form may keep its input's old value.
    from . import forward  # forward.py builds on this module

    fw_before, fw_after = forward.call_site(op, v.kind, "RESULT") if diff else ([], [])
    lines += fw_before

    # 2. run the kernel (below autograd; see Note [Below autograd])
    if inplace:
        lines.append("  const bool _top = autograd::at_top_level();")
    if v.kind == "functional" and op.structured:
        lines.append("  Tensor _out;")
        lines.append("  {")
        lines.append("    autograd::BelowAutogradGuard _guard;")
        lines.append(f"    {call};")
        lines.append("  }")
        result = "_out"
    elif inplace:
        lines.append("  {")
        lines.append("    autograd::BelowAutogradGuard _guard;")
        lines.append(f"    {call};")
        lines.append("  }")
        result = mutated[0]
    else:
        ret = cpp_return_type(v)
        lines.append(f"  {ret} _result = [&]() -> {ret} {{")
        lines.append("    autograd::BelowAutogradGuard _guard;")
        lines.append(f"    return {call};")
        lines.append("  }();")
        result = "_result"

    if inplace:
        for m in mutated:
            lines.append(f"  if (_top) {m}.unsafeGetTensorImpl()->bump_version();")
    if view_of:
        # Views made inside kernels are implementation details (Note [Below autograd]).
        lines.append("  if (autograd::at_top_level()) {")
        if list_return:
            lines.append(f"    for (const Tensor& _r : {result}) autograd::as_view({view_of}, _r, _creation_meta);")
        else:
            lines.append(f"    autograd::as_view({view_of}, {result}, _creation_meta);")
        lines.append("  }")
    if diff:
        outs = output_names(op)
        exprs = _output_exprs(op, result)
        lines.append("  if (_grad_fn) {")
        if inplace:
            lines.append(f"    autograd::rebase_history({result}, _grad_fn);")
        elif list_return:
            lines.append(f"    for (const Tensor& _r : {result}) autograd::set_history(_r, _grad_fn);")
        else:
            for i in differentiable_outputs(op):
                lines.append(f"    autograd::set_history({exprs[i]}, _grad_fn);")
        for field, _, init in info.values:
            for o, e in zip(outs, exprs):
                if init.startswith(o + "."):
                    lines.append(f"    _grad_fn->{field} = {e}{init[len(o) :]};")
        for name, is_out in sorted(info.tensors):
            if is_out:
                e = exprs[outs.index(name)]
                lines.append(f"    _grad_fn->{name}_ = autograd::SavedVariable({e}, true);")
        lines.append("  }")
    lines += [line.replace("RESULT", result) for line in fw_after]
    lines.append(f"  return {result};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def kernel_table_definition(op: Operator) -> str:
    ks = backend_kernels(op)

    # CUDA kernels live in libember_cuda.so, which fills its entry when loaded;
    # device-generic functions (pointwise ones, and those named for CUDA as for
    # the CPU, which call per-device stubs) live in this library and serve every device.
    def in_this_library(dev):
        return dev != "CUDA" or op.pointwise is not None or ks[dev] == ks.get("CPU")

    entries = [f"&native::{ks[dev]}" if dev in ks and in_this_library(dev) else "nullptr" for dev in DEVICE_TYPES]
    return f"{kernel_fn_type(op).replace('(*)', f'(*{table_name(op)}[kNumDeviceTypes])')} = {{{', '.join(entries)}}};\n"


def kernel_table_declaration(op: Operator) -> str:
    return f"extern EMBER_API {kernel_fn_type(op).replace('(*)', f'(*{table_name(op)}[kNumDeviceTypes])')};\n"


def native_declaration(op: Operator, kernel: str) -> str:
    ps = [f"{cpp_arg_type(a.type, kernel=True)} {a.name}" for a in op.schema.arguments]
    if op.structured:
        ps.append("Tensor& out")
        ret = "Tensor&"
    else:
        ret = returns_type(op.schema.returns).replace("const Tensor&", "Tensor&")
    return f"{ret} {kernel}({', '.join(ps)});"
