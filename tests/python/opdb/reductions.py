"""Rows of the reductions, scans, softmax and sorting operators."""

from __future__ import annotations

import torch

from .core import (
    ALL_BUT_BOOL,
    ALL_DTYPES,
    FLOATS,
    INTS_AND_BOOL,
    SampleInput,
    Tol,
    make,
    transposed,
)
from .families import reduction, row

NO_GRAD = {"supports_grad": False, "supports_gradgrad": False}
SUM_TOL = Tol(
    {
        **{d: (1e-6, 1e-6) for d in INTS_AND_BOOL},  # their float32 results
        "float16": (1e-3, 1e-3),
        "bfloat16": (8e-3, 8e-3),
        "float32": (1e-6, 1e-6),
        "float64": (1e-15, 1e-15),
    },
    "sums and products: Ember and PyTorch accumulate in different orders (an ulp or two)",
)
FULL_OUT = "{}(x, out=o) over all elements: torch raises TypeError (no out= form), ember accepts"
NO_OUT = "ember.{}(x, dim, out=...) raises TypeError (no out= form); torch accepts it"


def _vector_norm(m, x, dim=None, **kw):
    return m.linalg.vector_norm(x, dim=dim, **kw)


def _ord(order):
    return lambda m, x, dim=None, **kw: m.linalg.vector_norm(x, order, dim=dim, **kw)


def distinct(shape, dtype, seed):
    """Values without ties, so that indices are unambiguous."""
    n = 1
    for d in shape:
        n *= d
    gen = torch.Generator().manual_seed(seed)
    return (torch.randperm(n, generator=gen) - (0 if dtype == torch.uint8 else n // 2)).to(dtype).reshape(shape)


def _topk_samples(dtype):
    a = distinct((3, 5), dtype, 1)
    return [
        SampleInput((a, 2), name="k2"),
        SampleInput((a, 2, 0), name="dim0"),
        SampleInput((a, 3), {"largest": False}, name="smallest"),
        SampleInput((distinct((5, 4), dtype, 2).t(), 1), name="transposed"),
        SampleInput((make((0, 4), dtype), 0), name="empty"),
    ]


def _kth_samples(dtype):
    a = distinct((3, 5), dtype, 1)
    return [
        SampleInput((a, 2), name="k2"),
        SampleInput((a, 1, 0), name="dim0"),
        SampleInput((a, 3, 1, True), name="keepdim"),
        SampleInput((make((), dtype, seed=2), 1), name="0-dim"),
    ]


def _sort_samples(dtype):
    a = distinct((3, 5), dtype, 1)
    return [
        SampleInput((a,), name="last-dim"),
        SampleInput((a, 0), name="dim0"),
        SampleInput((a,), {"descending": True}, name="descending"),
        SampleInput((distinct((5, 4), dtype, 2).t(),), name="transposed"),
        SampleInput((make((), dtype, seed=3),), name="0-dim"),
        SampleInput((make((0, 3), dtype),), name="empty"),
    ]


def _msort_samples(dtype):
    return [
        SampleInput((distinct((3, 5), dtype, 1),), name="2-d"),
        SampleInput((distinct((5, 4), dtype, 2).t(),), name="transposed"),
    ]


def _scan_samples(dtype):
    return [
        SampleInput((make((2, 3, 4), dtype, seed=1, low=-2, high=2), 1), name="dim1"),
        SampleInput((make((2, 3), dtype, seed=2, low=-2, high=2), -1), name="last"),
        SampleInput((transposed((3, 4), dtype, seed=3, low=-2, high=2), 0), name="transposed"),
        SampleInput((make((), dtype, seed=4), 0), name="0-dim"),
        SampleInput((make((0, 3), dtype), 1), name="empty"),
    ]


def _trace_samples(dtype):
    return [
        SampleInput((make((3, 3), dtype, seed=1),), name="square"),
        SampleInput((make((2, 4), dtype, seed=2),), name="wide"),
        SampleInput((transposed((3, 2), dtype, seed=3),), name="transposed"),
    ]


ROWS = [
    reduction("sum", tol=SUM_TOL),
    reduction("nansum", dtypes=ALL_DTYPES, tol=SUM_TOL),
    reduction("mean", dtypes=FLOATS, tol=SUM_TOL),
    reduction("prod", multi_dim=False, tol=SUM_TOL),
    reduction("max", multi_dim=False),
    reduction("min", multi_dim=False),
    reduction("amax"),
    reduction("amin"),
    reduction("argmax", multi_dim=False, **NO_GRAD),
    reduction("argmin", multi_dim=False, **NO_GRAD),
    reduction("hash_tensor", **NO_GRAD),
    reduction("all", **NO_GRAD),
    reduction("any", **NO_GRAD),
    reduction("var", dtypes=FLOATS, tol=SUM_TOL),
    reduction(
        "var",
        variant="correction",
        dtypes=FLOATS,
        method=False,
        tol=SUM_TOL,
        call=lambda m, x, *a, **k: m.var(x, *a, correction=0, **k),
    ),
    reduction("std", dtypes=FLOATS, tol=SUM_TOL),
    reduction("var_mean", dtypes=FLOATS, method=False, tol=SUM_TOL),
    reduction("std_mean", dtypes=FLOATS, method=False, tol=SUM_TOL),
    reduction("logsumexp", dtypes=ALL_DTYPES, full=False, tol=SUM_TOL),
    reduction("linalg_vector_norm", dtypes=FLOATS, call=_vector_norm, method=False, tol=SUM_TOL),
    reduction("linalg_vector_norm", variant="ord1", dtypes=FLOATS, call=_ord(1), method=False, tol=SUM_TOL),
    reduction("linalg_vector_norm", variant="inf", dtypes=FLOATS, call=_ord(float("inf")), method=False),
    reduction("median", multi_dim=False, dtypes=ALL_BUT_BOOL),
    reduction("nanmedian", multi_dim=False, dtypes=ALL_BUT_BOOL),
    reduction("cumsum", dtypes=ALL_DTYPES, samples=_scan_samples),
    reduction(
        "cumprod",
        dtypes=ALL_DTYPES,
        samples=_scan_samples,
        tol=SUM_TOL,
    ),
    reduction("softmax", dtypes=FLOATS, samples=_scan_samples, tol=SUM_TOL),
    reduction("log_softmax", dtypes=FLOATS, samples=_scan_samples, tol=SUM_TOL),
    reduction("trace", dtypes=ALL_BUT_BOOL, samples=_trace_samples),
    row(
        "topk",
        "sorting",
        _topk_samples,
        dtypes=ALL_BUT_BOOL,
        method=True,
        supports_grad=True,
        supports_meta=True,
    ),
    row(
        "kthvalue",
        "sorting",
        _kth_samples,
        dtypes=ALL_BUT_BOOL,
        method=True,
        supports_grad=True,
        supports_meta=True,
    ),
    row(
        "sort",
        "sorting",
        _sort_samples,
        dtypes=ALL_DTYPES,
        method=True,
        supports_grad=True,
        supports_meta=True,
    ),
    row(
        "sort",
        "sorting",
        _sort_samples,
        variant="stable",
        dtypes=ALL_DTYPES,
        supports_grad=True,
        call=lambda m, x, dim=-1, **k: m.sort(x, stable=True, dim=dim, **k),
    ),
    row("argsort", "sorting", _sort_samples, dtypes=ALL_DTYPES, method=True, supports_meta=True),
    row("msort", "sorting", _msort_samples, dtypes=ALL_DTYPES, method=True, supports_grad=True),
]

KNOWN = {
    "sum": {"out:all": FULL_OUT.format("sum"), "out:0-dim": FULL_OUT.format("sum")},
    "prod": {"out:all": FULL_OUT.format("prod"), "out:0-dim": FULL_OUT.format("prod")},
    **{name: {"out": NO_OUT.format(name)} for name in ("max", "min", "median", "nanmedian", "softmax", "log_softmax")},
}
for _row in ROWS:
    _row.xfail.update(KNOWN.get(_row.id, {}))
