"""Rows of the indexing operators: gather/scatter, index_*, masks, take/put,
searchsorted, bincount, histc, fill_/zero_/copy_."""

from __future__ import annotations

import torch

from .core import ALL_BUT_BOOL, ALL_DTYPES, COMPLEX, FLOATS, SampleInput, make, transposed
from .families import row

INDEX = torch.int64


def ints(*values):
    return torch.tensor(values, dtype=INDEX)


def mask(*shape, seed=0):
    return make(shape, torch.bool, seed=seed)


INDEXING = {"method": True, "supports_grad": True, "supports_meta": True}
NO_GRAD = {"supports_grad": False, "supports_gradgrad": False}


def indexing(name, samples, **kw):
    fields = {**INDEXING, **kw}
    fields.setdefault("dtypes", ALL_DTYPES)
    return row(name, "indexing", samples, **fields)


def _index_select(d):
    x = make((3, 4), d, seed=1)
    return [
        SampleInput((x, 0, ints(2, 0, 2)), name="dim0"),
        SampleInput((x, 1, ints(3, 1)), name="dim1"),
        SampleInput((transposed((3, 4), d, seed=2), 1, ints(0, 2)), name="transposed"),
        SampleInput((x, 0, ints()), name="empty-index"),
        SampleInput((make((), d, seed=3), 0, ints(0)), name="0-dim"),
        SampleInput((x, 0, ints(5)), grad=False, name="out-of-range"),
    ]


def _gather(d):
    x = make((3, 4), d, seed=1)
    return [
        SampleInput((x, 1, torch.tensor([[0, 3], [1, 1], [2, 0]])), name="dim1"),
        SampleInput((x, 0, torch.tensor([[2, 0, 1, 1]])), name="dim0"),
        SampleInput(
            (transposed((3, 4), d, seed=2), 1, torch.tensor([[3], [0], [1]])), name="transposed"
        ),
        SampleInput((x, 1, torch.tensor([[4]])), grad=False, name="out-of-range"),
    ]


def _scatter_src(d):
    x, src = make((3, 4), d, seed=1), make((2, 4), d, seed=2)
    return [
        SampleInput((x, 0, torch.tensor([[2, 0, 1, 2], [0, 1, 2, 1]]), src), name="dim0"),
        SampleInput(
            (x, 1, torch.tensor([[3, 0], [1, 2]]), src), grad=False, name="dim1"
        ),  # index smaller than src: no src gradient in torch
        SampleInput(
            (transposed((3, 4), d, seed=3), 1, torch.tensor([[1], [0]]), src),
            grad=False,
            name="transposed",
        ),
    ]


def _scatter_value(d):
    x = make((3, 4), d, seed=1)
    v = True if d == torch.bool else (1.5 if d.is_floating_point else 2)
    return [
        SampleInput((x, 0, torch.tensor([[2, 0, 1, 2]]), v), name="dim0"),
        SampleInput((x, 1, torch.tensor([[3, 0], [1, 2]]), v), name="dim1"),
    ]


def _with_reduce(gen, reduce):
    return lambda d: [SampleInput(s.args, {"reduce": reduce}, s.grad, s.name) for s in gen(d)]


def _scatter_reduce(d):
    x, src = make((3, 4), d, seed=1), make((2, 4), d, seed=2)
    index = torch.tensor([[2, 0, 2, 2], [2, 1, 0, 1]])
    out = [
        SampleInput((x, 0, index, src, r), name=r) for r in ("sum", "prod", "mean", "amax", "amin")
    ]
    out.append(
        SampleInput((x, 0, index, src, "amax"), {"include_self": False}, name="exclude-self")
    )
    return out


def _index_add(d):
    x, src = make((3, 4), d, seed=1), make((2, 4), d, seed=2)
    return [
        SampleInput((x, 0, ints(2, 0), src), name="dim0"),
        SampleInput((x, 1, ints(3, 3, 0), make((3, 3), d, seed=3)), name="dim1-repeat"),
        SampleInput((x, 0, ints(2, 2), src), name="repeat"),
    ]


def _index_copy(d):
    x, src = make((3, 4), d, seed=1), make((2, 4), d, seed=2)
    return [
        SampleInput((x, 0, ints(2, 0), src), name="dim0"),
        SampleInput((x, 1, ints(3, 0, 1), make((3, 3), d, seed=3)), name="dim1"),
    ]


def _index_fill(d, tensor_value=False):
    x = make((3, 4), d, seed=1)
    v = True if d == torch.bool else (1.5 if d.is_floating_point else 2)
    if tensor_value:
        v = torch.tensor(v, dtype=d)
    return [
        SampleInput((x, 0, ints(2, 0), v), name="dim0"),
        SampleInput(
            (x, 1, ints(3, -1), v), grad=False, name="dim1"
        ),  # torch's backward rejects index -1
    ]


def _masked_fill(d, tensor_value=False):
    x = make((3, 4), d, seed=1)
    v = True if d == torch.bool else (1.5 if d.is_floating_point else 2)
    if tensor_value:
        v = torch.tensor(v, dtype=d)
    return [
        SampleInput((x, mask(3, 4, seed=2), v), name="same"),
        SampleInput((x, mask(4, seed=3), v), name="broadcast"),
        SampleInput((transposed((3, 4), d, seed=4), mask(3, 4, seed=5), v), name="transposed"),
        SampleInput((make((), d, seed=6), torch.tensor(True), v), name="0-dim"),
    ]


def _masked_select(d):
    return [
        SampleInput((make((3, 4), d, seed=1), mask(3, 4, seed=2)), name="same"),
        SampleInput((make((3, 4), d, seed=3), mask(4, seed=4)), name="broadcast"),
        SampleInput((transposed((3, 4), d, seed=5), mask(3, 4, seed=6)), name="transposed"),
    ]


def _masked_scatter(d):
    return [
        SampleInput(
            (make((3, 4), d, seed=1), mask(3, 4, seed=2), make((12,), d, seed=3)), name="same"
        ),
        SampleInput(
            (make((3, 4), d, seed=4), mask(4, seed=5), make((3, 4), d, seed=6)), name="broadcast"
        ),
    ]


def _index_put(d):
    x = make((3, 4), d, seed=1)
    return [
        SampleInput((x, (ints(2, 0),), make((2, 4), d, seed=2)), name="rows"),
        SampleInput((x, (ints(2, 0), ints(1, 3)), make((2,), d, seed=3)), name="points"),
        SampleInput(
            (x, (ints(1, 1), ints(0, 0)), make((2,), d, seed=4)),
            {"accumulate": True},
            name="accumulate",
        ),
        SampleInput((x, (mask(3, 4, seed=5),), make((), d, seed=6)), name="mask"),
    ]


def _take(d):
    x = make((3, 4), d, seed=1)
    return [
        SampleInput((x, ints(0, 11, 5)), name="flat"),
        SampleInput((x, torch.tensor([[1, -1], [3, 4]])), name="2-d-negative"),
        SampleInput((transposed((3, 4), d, seed=2), ints(1, 2)), name="transposed"),
        SampleInput((x, ints(12)), grad=False, name="out-of-range"),
    ]


def _put(d):
    x = make((3, 4), d, seed=1)
    return [
        SampleInput((x, ints(0, 11, 5), make((3,), d, seed=2)), name="flat"),
        SampleInput((x, ints(1, 1), make((2,), d, seed=3), True), name="accumulate"),
    ]


def _take_along_dim(d):
    x = make((3, 4), d, seed=1)
    return [
        SampleInput((x, torch.tensor([[0, 3], [1, 1], [2, 0]]), 1), name="dim1"),
        SampleInput((x, ints(0, 11, 5)), name="flat"),
        SampleInput((x, torch.tensor([[2, 0, 1, 1]]), 0), name="dim0"),
    ]


def _one_tensor(d, shape=(3, 4)):
    return [
        SampleInput((make(shape, d, seed=1, low=-1, high=1),), name="2-d"),
        SampleInput((make((), d, seed=2),), name="0-dim"),
        SampleInput((make((0, 3), d),), name="empty"),
        SampleInput((transposed((3, 4), d, seed=3, low=-1, high=1),), name="transposed"),
    ]


def _searchsorted(d):
    seq = torch.arange(0, 10, 2).to(d)
    return [
        SampleInput((seq, make((2, 3), d, seed=1, low=0, high=10)), name="1-d"),
        SampleInput((seq, make((2, 3), d, seed=2, low=0, high=10)), {"right": True}, name="right"),
        SampleInput(
            (seq.expand(2, 5).contiguous(), make((2, 3), d, seed=3, low=0, high=10)), name="batched"
        ),
        SampleInput((seq, 4), name="scalar"),
        SampleInput(
            (seq, make((3,), d, seed=4, low=0, high=10)), {"out_int32": True}, name="int32"
        ),
    ]


def _bincount(d):
    return [
        SampleInput((ints(0, 1, 1, 4),), name="plain"),
        SampleInput((ints(2, 2),), {"minlength": 5}, name="minlength"),
        SampleInput((ints(0, 1, 1), make((3,), d, seed=1)), name="weights"),
        SampleInput((ints(),), name="empty"),
        SampleInput((ints(-1, 2),), grad=False, name="negative"),
    ]


def _histc(d):
    x = make((10,), d, seed=1)
    return [
        SampleInput((x,), name="default"),
        SampleInput((x, 4, -1, 1), name="range"),
        SampleInput((transposed((3, 4), d, seed=2), 5), name="transposed"),
    ]


def _fill(d, tensor_value=False):
    v = True if d == torch.bool else (2.5 if d.is_floating_point else 3)
    if tensor_value:
        v = torch.tensor(v, dtype=d)
    return [
        SampleInput((make((2, 3), d, seed=1), v), name="plain"),
        SampleInput((transposed((3, 4), d, seed=2), v), name="transposed"),
        SampleInput((make((), d, seed=3), v), name="0-dim"),
    ]


def _copy(d):
    return [
        SampleInput(
            (make((2, 3), d, seed=1), make((2, 3), torch.float64, seed=2)), name="float64-src"
        ),
        SampleInput((make((2, 3), d, seed=3), make((3,), d, seed=4)), name="broadcast"),
        SampleInput((transposed((3, 4), d, seed=5), make((4, 3), d, seed=6)), name="transposed"),
        SampleInput((make((2, 3), d, seed=7), make((4,), d, seed=8)), grad=False, name="mismatch"),
    ]


def _index(d):
    x = make((4, 3), d, seed=1)
    return [
        SampleInput((x, (ints(2, 0, 2),)), name="repeated"),
        SampleInput((x, (ints(3, 1), ints(0, 2))), name="two-dims"),
        SampleInput((x, (ints(1, 0), ints(2))), name="broadcast"),
        SampleInput((transposed((4, 3), d, seed=2), (mask(4, seed=3),)), name="mask"),
        SampleInput((x, (None, ints(-1, 1))), name="second-dim"),
    ]


def _slice(d):
    x = make((5, 4), d, seed=1)
    return [
        SampleInput((x, 0, 1, 4), name="rows"),
        SampleInput((x, 1, None, None, 2), name="step"),
        SampleInput((transposed((5, 4), d, seed=2), 1, -3, 10), name="clamped"),
        SampleInput((x, 0, 3, 1), name="empty"),
    ]


def _alias(d):
    return [
        SampleInput((make((2, 3), d, seed=1),), name="2x3"),
        SampleInput((make((), d, seed=2),), name="0-dim"),
        SampleInput((transposed((3, 4), d, seed=3),), name="transposed"),
        SampleInput((make((2, 3), d, seed=4, noncontig=True),), name="strided"),
    ]


def _index_call(m, x, indices):
    return x[tuple(slice(None) if i is None else i for i in indices)]


def _slice_call(m, x, dim, start=None, end=None, step=1):
    return x[(slice(None),) * dim + (slice(start, end, step),)]


ROWS = [
    # (PyTorch's meta device has no kernel for index.Tensor)
    indexing("index", _index, call=_index_call, method=False, supports_meta=False),
    indexing("slice", _slice, call=_slice_call, method=False, check_strides=True),
    indexing("alias", _alias, call=lambda m, x: x[...], method=False, check_strides=True),
    indexing("index_select", _index_select, supports_out=True),
    indexing("gather", _gather, supports_out=True),
    indexing("take_along_dim", _take_along_dim),
    indexing("take", _take),
    indexing("put", _put, supports_inplace=True),
    indexing("scatter", _scatter_src, supports_inplace=True),
    indexing("scatter", _scatter_value, variant="value", supports_inplace=True),
    indexing(
        "scatter",
        _with_reduce(_scatter_src, "add"),
        variant="reduce",
        **NO_GRAD,
    ),
    indexing(
        "scatter",
        _with_reduce(_scatter_value, "multiply"),
        variant="value_reduce",
        **NO_GRAD,
    ),
    indexing("scatter_add", _scatter_src, supports_inplace=True, dtypes=ALL_DTYPES + COMPLEX),
    indexing("scatter_reduce", _scatter_reduce, supports_inplace=True),
    indexing("index_add", _index_add, supports_inplace=True, dtypes=ALL_DTYPES + COMPLEX),
    indexing("index_copy", _index_copy, supports_inplace=True),
    indexing("index_fill", _index_fill, supports_inplace=True),
    indexing("index_fill", lambda d: _index_fill(d, True), variant="tensor", supports_inplace=True),
    indexing("masked_fill", _masked_fill, supports_inplace=True),
    indexing(
        "masked_fill", lambda d: _masked_fill(d, True), variant="tensor", supports_inplace=True
    ),
    indexing("masked_select", _masked_select, dtypes=ALL_DTYPES + COMPLEX),
    indexing("masked_scatter", _masked_scatter, supports_inplace=True),
    indexing("index_put", _index_put, supports_inplace=True),
    indexing("nonzero", _one_tensor, **NO_GRAD),
    indexing("argwhere", _one_tensor, **NO_GRAD),
    indexing("searchsorted", _searchsorted, dtypes=ALL_BUT_BOOL, method=False, **NO_GRAD),
    indexing("bincount", _bincount, **NO_GRAD),
    indexing("histc", _histc, dtypes=FLOATS, **NO_GRAD),
    indexing("fill_", _fill, call=".fill_", method=False, **NO_GRAD),
    indexing(
        "fill_", lambda d: _fill(d, True), variant="tensor", call=".fill_", method=False, **NO_GRAD
    ),
    indexing("zero_", _one_tensor, call=".zero_", method=False, **NO_GRAD),
    indexing("copy_", _copy, call=".copy_", method=False, **NO_GRAD),
]
