"""Family defaults: a new simple operator is one call of one of these."""

from __future__ import annotations

from . import samples as S
from .core import ALL_BUT_BOOL, ALL_DTYPES, FLOATS, INTS_AND_BOOL, OpInfo

POINTWISE = {
    "method": True,
    "supports_out": True,
    "supports_inplace": True,
    "supports_meta": True,
    "check_strides": True,
}
DIFFERENTIABLE = {"supports_grad": True, "supports_gradgrad": True}


def _row(name, family, defaults, samples, kw):
    fields = dict(defaults)
    fields.update(kw)
    merged = {**defaults.get("xfail", {}), **kw.get("xfail", {})}
    fields["xfail"] = {k: v for k, v in merged.items() if v is not None}  # None drops a default
    if callable(fields.get("call")) and "method" not in kw:
        fields["method"] = False  # a custom call has no plain x.name(...) form to compare
    return OpInfo(name=name, family=family, samples=samples, **fields)


def unary_float(name, low=-3.0, high=3.0, edge=True, **kw):
    """Integers and bool promote to the default float (sin, exp, ...)."""
    kw.setdefault("dtypes", ALL_DTYPES)
    return _row(
        name,
        "unary float",
        {**POINTWISE, **DIFFERENTIABLE},
        kw.pop("samples", S.unary(low, high, edge)),
        kw,
    )


def unary_same(name, low=-3.0, high=3.0, **kw):
    """The result keeps the input's dtype (abs, floor, ...)."""
    kw.setdefault("dtypes", ALL_BUT_BOOL)
    return _row(
        name,
        "unary same-dtype",
        {**POINTWISE, **DIFFERENTIABLE},
        kw.pop("samples", S.unary(low, high)),
        kw,
    )


def unary_predicate(name, **kw):
    """A bool result (isnan, signbit, logical_not, ...)."""
    kw.setdefault("dtypes", ALL_DTYPES)
    return _row(name, "unary predicate", dict(POINTWISE), kw.pop("samples", S.unary()), kw)


def binary(name, low=-3.0, high=3.0, **kw):
    """Two broadcast operands with type promotion (add, atan2, ...)."""
    kw.setdefault("dtypes", ALL_BUT_BOOL)
    opts = {
        k: kw.pop(k)
        for k in ("rhs_low", "rhs_high", "scalar", "scalar_first", "mixed", "edge")
        if k in kw
    }
    kw.setdefault("error_inputs", S.binary_errors)
    return _row(
        name,
        "binary",
        {**POINTWISE, **DIFFERENTIABLE},
        kw.pop("samples", S.binary(low, high, **opts)),
        kw,
    )


def bitwise(name, **kw):
    """Integers and bool only."""
    kw.setdefault("dtypes", INTS_AND_BOOL)
    opts = {
        k: kw.pop(k)
        for k in ("low", "high", "rhs_low", "rhs_high", "scalar", "scalar_first")
        if k in kw
    }
    opts.setdefault("low", 0.0)
    opts.setdefault("high", 3.0)
    kw.setdefault("error_inputs", S.binary_errors)
    return _row(
        name, "bitwise", dict(POINTWISE), kw.pop("samples", S.binary(mixed=False, **opts)), kw
    )


def comparison(name, **kw):
    """Two broadcast operands, a bool result."""
    kw.setdefault("dtypes", ALL_DTYPES)
    opts = {k: kw.pop(k) for k in ("scalar", "mixed") if k in kw}
    kw.setdefault("error_inputs", S.binary_errors)
    return _row(name, "comparison", dict(POINTWISE), kw.pop("samples", S.binary(**opts)), kw)


def reduction(name, **kw):
    kw.setdefault("dtypes", ALL_DTYPES)
    opts = {
        k: kw.pop(k)
        for k in ("low", "high", "dims", "keepdim", "full", "multi_dim", "empty")
        if k in kw
    }
    defaults = {
        "method": True,
        "supports_out": True,
        "supports_meta": True,
        "error_inputs": S.dim_out_of_range,
        **DIFFERENTIABLE,
    }
    return _row(name, "reduction", defaults, kw.pop("samples", S.reduction(**opts)), kw)


def view(name, samples, **kw):
    """Views and shape functions: exact values, PyTorch's strides."""
    kw.setdefault("dtypes", ALL_DTYPES)
    defaults = {"method": True, "supports_meta": True, "check_strides": True, **DIFFERENTIABLE}
    return _row(name, "views/shape", defaults, samples, kw)


def row(name, family, samples, **kw):
    """Any other operator: every flag stated in the row."""
    kw.setdefault("dtypes", FLOATS)
    return _row(name, family, {}, samples, kw)
