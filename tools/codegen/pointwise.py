"""Pointwise operators (`pointwise:` in ops.yaml): the generator writes their
stub (one per operator, a kernel per device and CPU capability), the native
`_out` function that builds the elementwise iterator, checks dtypes and runs
the stub, and the device table entries. A kernel file then only defines the
loop and registers it with EMBER_REGISTER_POINTWISE(op, kernel)."""

from __future__ import annotations

from dataclasses import dataclass

from .model import CodegenError, Location, Operator

# Iterator kind -> (TensorIterator builder, number of tensor operands).
ITERATORS = {
    "unary": ("unary_op", 1),  # result keeps the input dtype
    "unary_float": ("unary_float_op", 1),  # integral inputs compute in the default float dtype
    "unary_bool": ("unary_bool_op", 1),  # bool result, input not promoted
    "binary": ("binary_op", 2),  # result of the common dtype
    "binary_float": ("binary_float_op", 2),  # common dtype, integral promoted to float
    "comparison": ("comparison_op", 2),  # bool result computed in the common dtype
}
DTYPE_CLASSES = {
    "bool": "kBoolDtypes",
    "int": "kIntegralDtypes",
    "float": "kFloatingDtypes",
    "complex": "kComplexDtypes",
}


@dataclass(frozen=True)
class Pointwise:
    iterator: str
    dtypes: tuple[str, ...]  # dtype classes the kernel accepts (others: NotImplementedError)
    error_name: str  # the kernel name in "<name>" not implemented for '<dtype>'
    manual: bool  # the native function is hand-written; only the stub is generated
    operands: tuple[str, ...] | None  # operand names, when not the leading arguments
    # dtype classes PyTorch's meta function accepts (default: all), or ("kernel",):
    # on meta too the kernel's check applies (PyTorch's meta result is one Ember does not compute)
    meta_dtypes: tuple[str, ...]
    # computed on contiguous inputs off CUDA, so the result is contiguous there (no layout
    # propagation); on CUDA the layout propagates, as PyTorch's CUDA kernels are elementwise loops
    contiguous: bool
    # PyTorch's own refusal of complex operands, checked before anything else
    # (RuntimeError with this text) instead of the kernel's "not implemented for".
    complex_error: str | None = None
    # the class of that refusal: RuntimeError, or NotImplementedError (ceil, floor, trunc, sign)
    complex_error_type: str = "RuntimeError"
    # number arguments the kernel converts to the type it computes in (float for
    # float16/bfloat16) and to the element type: an overflow is PyTorch's error
    opmath_scalars: tuple[str, ...] = ()
    self_scalars: tuple[str, ...] = ()


def parse(raw, op_name: str, loc: Location) -> Pointwise:
    if isinstance(raw, str):
        raw = {"iter": raw}
    raw = {k: v for k, v in raw.items() if k != "__line__"}
    allowed = {
        "iter",
        "dtypes",
        "error_name",
        "native",
        "operands",
        "meta_dtypes",
        "layout",
        "complex_error",
        "complex_error_type",
        "opmath_scalars",
        "self_scalars",
    }
    unknown = set(raw) - allowed
    if unknown:
        raise CodegenError(loc, f"unknown pointwise key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")
    it = raw.get("iter")
    if it not in ITERATORS:
        raise CodegenError(loc, f"pointwise iter must be one of {sorted(ITERATORS)}, got {it!r}")
    dtypes = tuple(str(raw.get("dtypes", "bool int float")).split())
    meta_dtypes = tuple(str(raw.get("meta_dtypes", "bool int float complex")).split())
    for d in dtypes + (() if meta_dtypes == ("kernel",) else meta_dtypes):
        if d not in DTYPE_CLASSES:
            raise CodegenError(loc, f"pointwise dtypes are among {sorted(DTYPE_CLASSES)}, got {d!r}")
    native = raw.get("native", "generated")
    if native not in ("generated", "manual"):
        raise CodegenError(loc, f"pointwise native must be generated or manual, got {native!r}")
    operands = tuple(str(raw["operands"]).split()) if "operands" in raw else None
    layout = raw.get("layout", "propagate")
    if layout not in ("propagate", "contiguous"):
        raise CodegenError(loc, f"pointwise layout must be propagate or contiguous, got {layout!r}")
    error_name = str(raw.get("error_name", f"{op_name}_cpu"))
    complex_error = raw.get("complex_error")
    if complex_error is not None and ("complex" in dtypes or '"' in str(complex_error)):
        raise CodegenError(loc, "complex_error is for operators without complex kernels, a text without quotes")
    complex_error_type = str(raw.get("complex_error_type", "RuntimeError"))
    if complex_error_type not in ("RuntimeError", "NotImplementedError"):
        raise CodegenError(
            loc, f"complex_error_type is RuntimeError or NotImplementedError, got {complex_error_type!r}"
        )
    opmath_scalars = tuple(str(raw.get("opmath_scalars", "")).split())
    self_scalars = tuple(str(raw.get("self_scalars", "")).split())
    return Pointwise(
        it,
        dtypes,
        error_name,
        native == "manual",
        operands,
        meta_dtypes,
        layout == "contiguous",
        complex_error,
        complex_error_type,
        opmath_scalars,
        self_scalars,
    )


def cuda_error_name(cpu_name: str) -> str:
    """The kernel name PyTorch's CUDA build reports: sign_cpu -> sign_cuda,
    floor_vml_cpu -> floor_cuda; names without a device suffix stay."""
    for suffix in ("_vml_cpu", "_cpu"):
        if cpu_name.endswith(suffix):
            return cpu_name[: -len(suffix)] + "_cuda"
    return cpu_name


def stub_base(op: Operator) -> str:
    """Overloads share one stub: copysign.Tensor and copysign.Scalar run copysign_stub."""
    return op.schema.name


def native_name(op: Operator) -> str:
    return f"{op.schema.full_name.replace('.', '_')}_out"


def _operands(op: Operator):
    names = op.pointwise.operands
    if names is None:
        return op.schema.arguments[: ITERATORS[op.pointwise.iterator][1]]
    return tuple(a for a in op.schema.arguments if a.name in names)


def _params(op: Operator, cpp) -> list[tuple[str, str]]:
    """The other arguments, passed to the stub as they are."""
    operands = {a.name for a in _operands(op)}
    return [(cpp.cpp_arg_type(a.type, kernel=True), a.name) for a in op.schema.arguments if a.name not in operands]


def check(op: Operator) -> None:
    pw = op.pointwise
    if not op.structured:
        raise CodegenError(op.loc, "pointwise operators are structured (functional, in-place and out= forms)")
    n = ITERATORS[pw.iterator][1]
    operands = _operands(op)
    if len(operands) != n or any(
        a.type.base not in ("Tensor", "Scalar") or a.type.optional or a.type.is_list for a in operands
    ):
        raise CodegenError(op.loc, f"pointwise iter {pw.iterator}: {n} operand(s), each a tensor or a number")
    if not any(a.type.base == "Tensor" for a in operands):
        raise CodegenError(op.loc, "a pointwise operator has a tensor operand")
    if any(a.type.base == "Tensor" for a in op.schema.arguments if a not in operands):
        raise CodegenError(op.loc, "a pointwise operator's arguments after its operands are not tensors")
    scalars = {a.name for a in op.schema.arguments if a.type.base == "Scalar" and not a.type.optional}
    for name in pw.opmath_scalars + pw.self_scalars:
        if name not in scalars:
            raise CodegenError(op.loc, f"pointwise scalars: {name!r} is not a Scalar argument")


def stub_declarations(ops: list[Operator], cpp) -> str:
    lines, seen = [], {}
    for op in ops:
        base = stub_base(op)
        ps = "".join(f", {t}" for t, _ in _params(op, cpp))
        if base in seen:
            if seen[base] != ps:
                raise CodegenError(op.loc, f"overloads of {base} share its stub: same arguments after the operands")
            continue
        seen[base] = ps
        lines.append(f"using {base}_fn = void (*)(const TensorIterator&{ps});")
        lines.append(f"EMBER_DECLARE_DISPATCH({base}_fn, {base}_stub);")
        if _has_complex(ops, base):
            lines.append(f"EMBER_DECLARE_DISPATCH({base}_fn, {base}_complex_stub);")
    return (
        "#pragma once\n// One stub per pointwise operator: its kernel per device and CPU capability.\n"
        '#include "ember/ops/DispatchStub.h"\n#include "ember/ops/TensorIterator.h"\n\n'
        "namespace ember::native {\n" + "\n".join(lines) + "\n}  // namespace ember::native\n"
    )


def _has_complex(ops: list[Operator], base: str) -> bool:
    """Whether an overload of base takes complex dtypes: their loops have a stub of their own."""
    return any(stub_base(op) == base and "complex" in op.pointwise.dtypes for op in ops)


def _dtype_mask(dtypes: tuple[str, ...]) -> str:
    if set(dtypes) == set(DTYPE_CLASSES):
        return ""
    return " | ".join(DTYPE_CLASSES[d] for d in dtypes)


def definitions(ops: list[Operator], cpp) -> str:
    out, defined = [], set()
    for op in ops:
        pw = op.pointwise
        base = stub_base(op)
        if base not in defined:
            defined.add(base)
            out.append(f"EMBER_DEFINE_DISPATCH({base}_fn, {base}_stub);")
            if _has_complex(ops, base):
                out.append(f"EMBER_DEFINE_DISPATCH({base}_fn, {base}_complex_stub);")
        if pw.manual:
            continue
        operands = _operands(op)
        params = _params(op, cpp)
        sig = ", ".join(
            [f"{cpp.cpp_arg_type(a.type)} {a.name}" for a in operands]
            + [f"{t} {n}" for t, n in params]
            + ["Tensor& out"]
        )
        # Numbers join as weak 0-dim tensors, so promotion treats them as PyTorch does.
        tensor = "contiguous_off_cuda({})" if pw.contiguous else "{}"
        ins = ", ".join(
            tensor.format(a.name) if a.type.base == "Tensor" else f"wrapped_scalar({a.name})" for a in operands
        )
        device = next(a.name for a in operands if a.type.base == "Tensor")
        builder = ITERATORS[pw.iterator][0]
        body = [f"Tensor& {native_name(op)}({sig}) {{"]
        if pw.complex_error:
            tensors = [a.name for a in operands if a.type.base == "Tensor"]
            test = " || ".join(f"{t}.is_complex()" for t in tensors)
            if pw.complex_error_type == "NotImplementedError":
                body.append(f'  EMBER_CHECK_TYPE(NotImplementedError, !({test}), "{pw.complex_error}");')
            else:
                body.append(f'  EMBER_CHECK(!({test}), "{pw.complex_error}");')
        body.append(f"  auto it = TensorIterator::{builder}(out, {ins});")
        mask = _dtype_mask(pw.dtypes)
        on_meta = pw.meta_dtypes == ("kernel",)
        if mask:
            names = f'"{pw.error_name}"'
            cuda_name = cuda_error_name(pw.error_name)
            if cuda_name != pw.error_name:
                names = f'pointwise_error_name(it, "{pw.error_name}", "{cuda_name}")'
            body.append(f"  check_pointwise_dtype(it, {mask}, {names}{', true' if on_meta else ''});")
        meta_mask = "" if on_meta else _dtype_mask(pw.meta_dtypes)
        if meta_mask:
            body.append(f'  check_meta_dtype(it, {meta_mask}, "{op.schema.name}");')
        for name in pw.opmath_scalars:
            body.append(f"  check_pointwise_scalar(it, {name}, /*opmath=*/true);")
        for name in pw.self_scalars:
            body.append(f"  check_pointwise_scalar(it, {name}, /*opmath=*/false);")
        extra = "".join(f", {n}" for _, n in params)
        stub = f"{base}_stub"
        if "complex" in pw.dtypes:
            stub = f"(is_complex_type(it.common_dtype()) ? {base}_complex_stub : {base}_stub)"
        body.append(f'  run_pointwise({stub}, {device}.device().type, "{op.schema.full_name}", it{extra});')
        body.append("  return out;")
        body.append("}")
        out.append("\n".join(body))
    return (
        '#include "ember/ops/Ops.h"\n#include "ember/ops/Pointwise.h"\n#include "ember/ops/generated/NativeFunctions.h"\n'
        '#include "ember/ops/generated/PointwiseStubs.h"\n\n'
        "namespace ember::native {\n\n" + "\n\n".join(out) + "\n\n}  // namespace ember::native\n"
    )
