"""Reductions, scans and softmax against PyTorch: values, dtypes (promotion
and dtype=), shapes, keepdim and dim combinations, empty and 0-dim inputs,
non-contiguous views, exception types, gradients and grad_fn names."""

from __future__ import annotations

import ctypes
import math

import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, assert_same, dtypes, pair, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

INT_NAMES = ["uint8", "int8", "int16", "int32", "int64"]


def run_both(fn_e, fn_t):
    """Runs both; if torch raises, Ember must raise the same exception type."""
    try:
        expected = fn_t()
    except Exception as err:  # noqa: BLE001
        with pytest.raises(type(err)):
            fn_e()
        return None, None
    return fn_e(), expected


def tol(dname, loose=False):
    if dname == "bfloat16":
        return 2e-2
    if dname == "float16":
        return 4e-3 if loose else 2e-3
    if dname == "float32":
        return 2e-5 if loose else 2e-6
    return 1e-10


def same(e, t, dname, loose=False, tol_of=None):
    if isinstance(t, tuple):
        assert type(e).__name__ == type(t).__name__
        for a, b in zip(e, t):
            same(a, b, dname, loose)
        return
    if t.dtype.is_floating_point:
        name = tol_of or str(t.dtype).split(".")[1]  # tolerance of the result dtype
        assert_same(e, t, rtol=tol(name, loose), atol=tol(name, loose))
    else:
        assert_same(e, t)


def values(draw, dname, n, lo=-4, hi=4):
    if dname == "bool":
        return [draw(st.booleans()) for _ in range(n)]
    if dname in FLOAT_NAMES:
        return [draw(st.floats(lo, hi, allow_nan=False, width=16)) for _ in range(n)]
    if dname == "uint8":
        return [draw(st.integers(0, math.floor(hi) + (2 if hi >= 4 else 0))) for _ in range(n)]
    return [draw(st.integers(math.ceil(lo), math.floor(hi))) for _ in range(n)]


shape_st = st.lists(st.integers(0, 4), max_size=4).map(tuple)
nonempty_shape_st = st.lists(st.integers(1, 4), max_size=4).map(tuple)


def make(draw, dname, shape, lo=-4, hi=4):
    """An (ember, torch) pair with the given shape, sometimes as a
    non-contiguous (permuted or sliced) view."""
    layout = draw(st.sampled_from(["contig", "permuted", "sliced"])) if len(shape) >= 1 else "contig"
    if layout == "permuted" and len(shape) >= 2:
        rev = tuple(reversed(shape))
        e, t = pair(values(draw, dname, math.prod(rev), lo, hi), dname, rev)
        perm = tuple(reversed(range(len(shape))))
        return e.permute(*perm), t.permute(*perm)
    if layout == "sliced":
        wide = shape[:-1] + (shape[-1] * 2,)
        e, t = pair(values(draw, dname, math.prod(wide), lo, hi), dname, wide)
        return _every_other(e, t)
    return pair(values(draw, dname, math.prod(shape), lo, hi), dname, shape)


def _every_other(e, t):
    # Stride-2 view of the last dim via as_strided (indexing belongs elsewhere).
    n = t.shape[-1] // 2
    size = tuple(t.shape[:-1]) + (n,)
    stride = tuple(t.stride()[:-1]) + (2,)
    return e.as_strided(size, stride), t.as_strided(size, stride)


def dims_for(draw, ndim):
    """None, an int, or a tuple of distinct dims (possibly negative)."""
    if ndim == 0:
        return draw(st.sampled_from([None, 0, -1, (0,)]))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim, unique_by=lambda d: d % ndim)))


# ---- full reductions ------------------------------------------------------------------------

FULL_OPS = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any", "nansum", "var",
            "std", "norm"]


@pytest.mark.parametrize("op", FULL_OPS)
@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_full_reductions(op, dname, data):
    shape = data.draw(shape_st)
    # prod: |values| <= 1 keeps products from overflowing (where the order of
    # a zero and an overflow would decide between 0 and NaN).
    lo, hi = (-1, 1) if op == "prod" else (-4, 4)
    e, t = make(data.draw, dname, shape, lo, hi)
    got, want = run_both(lambda: getattr(e, op)(), lambda: getattr(t, op)())
    if want is not None:
        same(got, want, dname, loose=True)


# ---- dim lists and keepdim --------------------------------------------------------------------

DIM_LIST_OPS = {
    "sum": lambda lib, x, d, k: x.sum(d, keepdim=k),
    "mean": lambda lib, x, d, k: x.mean(d, keepdim=k),
    "nansum": lambda lib, x, d, k: lib.nansum(x, d, keepdim=k),
    "amax": lambda lib, x, d, k: x.amax(() if d is None else d, keepdim=k),
    "amin": lambda lib, x, d, k: x.amin(() if d is None else d, keepdim=k),
    "var": lambda lib, x, d, k: x.var(d, keepdim=k),
    "std_corr0": lambda lib, x, d, k: x.std(d, correction=0, keepdim=k),
    "var_mean": lambda lib, x, d, k: lib.var_mean(x, d, keepdim=k),
    "std_mean": lambda lib, x, d, k: lib.std_mean(x, d, correction=2, keepdim=k),
    "all": lambda lib, x, d, k: x.all(d, keepdim=k) if d is not None else x.all(),
    "any": lambda lib, x, d, k: x.any(d, keepdim=k) if d is not None else x.any(),
    "logsumexp": lambda lib, x, d, k: x.logsumexp(() if d is None else d, keepdim=k),
    "vector_norm": lambda lib, x, d, k: lib.linalg.vector_norm(x, 2, d, k),
    "norm1": lambda lib, x, d, k: lib.linalg.vector_norm(x, 1, d, k),
    "norm_inf": lambda lib, x, d, k: lib.linalg.vector_norm(x, float("inf"), d, k),
    "norm_-inf": lambda lib, x, d, k: lib.linalg.vector_norm(x, float("-inf"), d, k),
    "norm0": lambda lib, x, d, k: lib.linalg.vector_norm(x, 0, d, k),
    "norm3": lambda lib, x, d, k: lib.linalg.vector_norm(x, 3, d, k),
    "norm0.5": lambda lib, x, d, k: lib.linalg.vector_norm(x, 0.5, d, k),
}


@pytest.mark.parametrize("op", list(DIM_LIST_OPS))
@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_dim_list_reductions(op, dname, data):
    shape = data.draw(shape_st)
    e, t = make(data.draw, dname, shape)
    d = dims_for(data.draw, len(shape))
    k = data.draw(st.booleans())
    fn = DIM_LIST_OPS[op]
    got, want = run_both(lambda: fn(ember, e, d, k), lambda: fn(torch, t, d, k))
    if want is not None:
        same(got, want, dname, loose=True)


SINGLE_DIM_OPS = {
    "prod": lambda lib, x, d, k: x.prod(d, keepdim=k),
    "max": lambda lib, x, d, k: x.max(d, keepdim=k),
    "min": lambda lib, x, d, k: lib.min(x, d, k),
    "argmax": lambda lib, x, d, k: x.argmax(d, keepdim=k),
    "argmin": lambda lib, x, d, k: lib.argmin(x, dim=d, keepdim=k),
    "all": lambda lib, x, d, k: x.all(d, keepdim=k),
    "any": lambda lib, x, d, k: lib.any(x, d, keepdim=k),
    "cumsum": lambda lib, x, d, k: x.cumsum(d),
    "cumprod": lambda lib, x, d, k: lib.cumprod(x, d),
    "softmax": lambda lib, x, d, k: x.softmax(d),
    "log_softmax": lambda lib, x, d, k: lib.log_softmax(x, d),
    "logsumexp": lambda lib, x, d, k: lib.logsumexp(x, d, k),
}


@pytest.mark.parametrize("op", list(SINGLE_DIM_OPS))
@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_single_dim_reductions(op, dname, data):
    shape = data.draw(shape_st)
    lo, hi = (-1, 1) if op in ("prod", "cumprod") else (-4, 4)
    e, t = make(data.draw, dname, shape, lo, hi)
    nd = len(shape)
    d = data.draw(st.integers(-max(nd, 1) - 1, max(nd, 1)))  # sometimes out of range
    k = data.draw(st.booleans())
    fn = SINGLE_DIM_OPS[op]
    got, want = run_both(lambda: fn(ember, e, d, k), lambda: fn(torch, t, d, k))
    if want is not None:
        same(got, want, dname, loose=True)


# ---- dtype= and promotion ------------------------------------------------------------------------

DTYPE_OPS = {
    "sum": lambda lib, x, d, dt: x.sum(dtype=dt) if d is None else x.sum(d, dtype=dt),
    "mean": lambda lib, x, d, dt: x.mean(dtype=dt) if d is None else x.mean(d, dtype=dt),
    "prod": lambda lib, x, d, dt: x.prod(dtype=dt) if d is None else x.prod(d, dtype=dt),
    "nansum": lambda lib, x, d, dt: lib.nansum(x, d, dtype=dt),
    "cumsum": lambda lib, x, d, dt: x.cumsum(0 if d is None else d, dtype=dt),
    "cumprod": lambda lib, x, d, dt: x.cumprod(0 if d is None else d, dtype=dt),
    "softmax": lambda lib, x, d, dt: x.softmax(0 if d is None else d, dtype=dt),
    "log_softmax": lambda lib, x, d, dt: lib.log_softmax(x, 0 if d is None else d, dtype=dt),
    "vector_norm": lambda lib, x, d, dt: lib.linalg.vector_norm(x, dim=d, dtype=dt),
}


@pytest.mark.parametrize("op", list(DTYPE_OPS))
@pytest.mark.parametrize("dname", DTYPE_NAMES)
@pytest.mark.parametrize("target", ["int64", "float32", "float64", "bool"])
@settings(max_examples=3)
@given(data=st.data())
def test_dtype_argument(op, dname, target, data):
    shape = data.draw(nonempty_shape_st.filter(lambda s: len(s) >= 1))
    e, t = make(data.draw, dname, shape, -1, 1)
    d = data.draw(st.sampled_from([None, 0, -1]))
    ed, td = dtypes(target)
    fn = DTYPE_OPS[op]
    got, want = run_both(lambda: fn(ember, e, d, ed), lambda: fn(torch, t, d, td))
    if want is not None:
        same(got, want, target, loose=True)


@pytest.mark.parametrize("dname", DTYPE_NAMES)
def test_result_dtypes(dname):
    e, t = pair([1, 0, 1, 1], dname, (2, 2)) if dname != "bool" else pair([True, False, True, True], dname, (2, 2))
    for f in (lambda x: x.sum(), lambda x: x.sum(0), lambda x: x.prod(), lambda x: x.cumsum(0), lambda x: x.all(),
              lambda x: x.any(1), lambda x: x.max(), lambda x: x.amin(0), lambda x: x.logsumexp(1),
              lambda x: x.max(0).indices, lambda x: x.argmin()):
        got, want = run_both(lambda: f(e), lambda: f(t))
        if want is not None:
            assert str(got.dtype) == str(want.dtype)


# ---- out= ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "float16", "int64", "int32", "bool"])
def test_out_argument(out_dtype):
    e, t = pair([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], "float32")
    ed, td = dtypes(out_dtype)
    cases = [
        lambda lib, x, o: lib.sum(x, 0, out=o),
        lambda lib, x, o: lib.mean(x, 1, out=o),
        lambda lib, x, o: lib.amax(x, 0, out=o),
        lambda lib, x, o: lib.argmax(x, 1, out=o),
        lambda lib, x, o: lib.all(x, 1, out=o),
        lambda lib, x, o: lib.prod(x, 0, out=o),
        lambda lib, x, o: lib.logsumexp(x, 0, out=o),
        lambda lib, x, o: lib.cumsum(x, 1, out=o),
        lambda lib, x, o: lib.var(x, 1, out=o),
        lambda lib, x, o: lib.max(x, out=o),
        lambda lib, x, o: lib.linalg.vector_norm(x, out=o),
        lambda lib, x, o: lib._softmax(x, 1, False, out=o),
        lambda lib, x, o: lib.nansum(x, out=o),
        lambda lib, x, o: lib.std(x, 0, out=o),
    ]
    for case in cases:
        oe, ot = ember.empty(0, dtype=ed), torch.empty(0, dtype=td)
        got, want = run_both(lambda: case(ember, e, oe), lambda: case(torch, t, ot))
        if want is not None:
            assert got is oe
            # float32 inputs: float32 accuracy even when written to a float64 out.
            same(oe, ot, out_dtype, tol_of="float32" if out_dtype == "float64" else None)


# ---- errors and empty inputs ------------------------------------------------------------------------


def test_empty_and_error_messages():
    e, t = pair([], "float32", (0, 3))
    for op in ("max", "min", "amax", "amin", "argmax", "argmin"):
        for args in ((), (0,), (1,)):
            got, want = run_both(lambda: getattr(e, op)(*args), lambda: getattr(t, op)(*args))
            if want is not None:
                same(got, want, "float32")
    msgs = [
        (lambda lib: lib.tensor([]).max(), "max(): Expected reduction dim to be specified for input.numel() == 0."),
        (lambda lib: lib.tensor([1, 2]).mean(), "mean(): could not infer output dtype. Input dtype must be either a "
                                               "floating point or complex dtype. Got: Long"),
        (lambda lib: lib.ones(2).mean(dtype=lib.int32), "Optional dtype must be either a floating point or complex "
                                                        "dtype. Got: Int"),
        (lambda lib: lib.tensor([1, 2]).var(), "std and var only support floating point and complex dtypes"),
        (lambda lib: lib.tensor([True]).argmax(), "argmax(): does not support bool input"),
        (lambda lib: lib.ones(2, 2).sum((0, 0)), "dim 0 appears multiple times in the list of dims"),
        (lambda lib: lib.linalg.vector_norm(lib.tensor([1, 2])),
         "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
        (lambda lib: lib.linalg.vector_norm(lib.ones(0), float("inf")),
         "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does not have an "
         "identity"),
    ]
    for f, msg in msgs:
        with pytest.raises(RuntimeError) as te:
            f(torch)
        with pytest.raises(RuntimeError) as ee:
            f(ember)
        assert msg in str(te.value)
        assert str(ee.value) == str(te.value)
    for f in (lambda lib: lib.ones(2).sum(1), lambda lib: lib.ones(2).max(-2), lambda lib: lib.ones(0, 2).argmax(0),
              lambda lib: lib.ones(0).argmax(), lambda lib: lib.ones(0, 3).amax(0)):
        with pytest.raises(IndexError) as te:
            f(torch)
        with pytest.raises(IndexError) as ee:
            f(ember)
        assert str(ee.value) == str(te.value)
    with pytest.raises(NotImplementedError):
        ember.tensor([1, 2]).softmax(0)
    with pytest.raises(RuntimeError, match="half to float"):
        ember._softmax(ember.ones(2), 0, True)


def test_nan_and_inf_semantics():
    vals = [1.0, float("nan"), 3.0, float("inf"), -float("inf"), float("nan")]
    e, t = pair(vals, "float32", (2, 3))
    for f in (lambda x: x.max(), lambda x: x.min(1), lambda x: x.argmax(1), lambda x: x.argmin(0),
              lambda x: x.amax(0), lambda x: x.sum(1), lambda x: x.nansum(), lambda x: x.logsumexp(1),
              lambda x: x.softmax(1), lambda x: x.log_softmax(0), lambda x: x.var(1), lambda x: x.norm(),
              lambda x: x.all(), lambda x: x.any(1), lambda x: x.cumsum(1), lambda x: x.prod(0)):
        same(f(e), f(t), "float32")
    inf_e, inf_t = pair([float("-inf"), float("-inf"), 1.0, 2.0], "float32", (2, 2))
    same(inf_e.logsumexp(1), inf_t.logsumexp(1), "float32")
    same(inf_e.softmax(1), inf_t.softmax(1), "float32")


def test_named_tuples():
    e, t = pair([[3.0, 1.0], [2.0, 4.0]], "float32")
    for f in (lambda x: x.max(1), lambda x: x.min(0, keepdim=True), lambda lib_x: lib_x.max(dim=-1)):
        re, rt = f(e), f(t)
        assert repr(re) == repr(rt)
        assert type(re).__name__ == type(rt).__name__
        assert re._fields if hasattr(rt, "_fields") else True
        same(re.values, rt.values, "float32")
        same(re.indices, rt.indices, "int64")
        v, i = re
        same(v, rt[0], "float32")
    assert repr(ember.var_mean(e, 1)) == repr(torch.var_mean(t, 1))


# ---- big inputs: the parallel and vectorised paths ------------------------------------------------------


def from_torch(t):
    """Ember copy of a torch tensor, byte for byte (fast for big inputs)."""
    t = t.contiguous()
    e = ember.empty(tuple(t.shape), dtype=getattr(ember, str(t.dtype).split(".")[1]))
    ctypes.memmove(e.data_ptr(), t.data_ptr(), t.numel() * t.element_size())
    return e


def to_torch_fast(e):
    e = e.contiguous()
    t = torch.empty(tuple(e.shape), dtype=getattr(torch, str(e.dtype).split(".")[1]))
    ctypes.memmove(t.data_ptr(), e.data_ptr(), t.numel() * t.element_size())
    return t


def close(e, t, loose=True, tol_of=None):
    if isinstance(t, tuple):
        for a, b in zip(e, t):
            close(a, b, loose, tol_of)
        return
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    name = tol_of or str(t.dtype).split(".")[1]
    if t.dtype.is_floating_point:
        torch.testing.assert_close(to_torch_fast(e), t, rtol=tol(name, loose), atol=tol(name, loose), equal_nan=True)
    else:
        assert torch.equal(to_torch_fast(e), t)


@pytest.mark.parametrize("shape,dims", [((300, 257), 0), ((300, 257), 1), ((300, 257), None), ((4, 40000), 1),
                                        ((40000, 3), 0), ((5, 40, 600), (0, 2)), ((3, 200, 300), 1)])
def test_large_layouts(shape, dims):
    g = torch.Generator().manual_seed(0)
    t = torch.randn(*shape, generator=g, dtype=torch.float32)
    e = from_torch(t)
    rev = tuple(reversed(range(len(shape))))
    for x, y in ((e, t), (e.permute(*rev), t.permute(*rev))):
        close(x.sum(dims), y.sum(dims), tol_of="float32" if dims is None else None)
        close(x.amax(() if dims is None else dims), y.amax(() if dims is None else dims))
        close(x.var(dims), y.var(dims))
        if isinstance(dims, int):
            close(x.max(dims), y.max(dims))
            close(x.softmax(dims), y.softmax(dims))
    close(e.mean(dims), t.mean(dims))
    close(e.norm(dim=dims), t.norm(dim=dims))
    lse_dims = tuple(range(len(shape))) if dims is None else dims
    close(e.logsumexp(lse_dims), t.logsumexp(lse_dims))
    if isinstance(dims, int):
        close(e.argmin(dims), t.argmin(dims))
        close(e.log_softmax(dims), t.log_softmax(dims))
        close(e.cumsum(dims), t.cumsum(dims), tol_of="float16")


def test_float32_sum_accuracy():
    # The cascade keeps a long float32 sum close to the exact (float64) one.
    t = torch.full((1 << 22,), 0.1, dtype=torch.float32)
    e = ember.full((1 << 22,), 0.1, dtype=ember.float32)
    exact = t.double().sum().item()
    assert abs(e.sum().item() - exact) / exact < 1e-6
    assert abs(e.reshape(2048, 2048).sum(0).sum().item() - exact) / exact < 1e-6
    assert abs(e.reshape(2048, 2048).mean(1).mean().item() - 0.1) < 1e-7


# ---- gradients --------------------------------------------------------------------------------------------

GRAD_OPS = {
    "SumBackward0": lambda lib, x: x.sum(),
    "SumBackward1": lambda lib, x: x.sum((0,), keepdim=True),
    "MeanBackward0": lambda lib, x: x.mean(),
    "MeanBackward1": lambda lib, x: x.mean(-1),
    "NansumBackward0": lambda lib, x: lib.nansum(x, 0),
    "ProdBackward0": lambda lib, x: x.prod(),
    "ProdBackward1": lambda lib, x: x.prod(0, keepdim=True),
    "MaxBackward1": lambda lib, x: x.max(),
    "MaxBackward0": lambda lib, x: x.max(0)[0],
    "MinBackward1": lambda lib, x: x.min(),
    "MinBackward0": lambda lib, x: x.min(-1, keepdim=True).values,
    "AmaxBackward0": lambda lib, x: x.amax(0),
    "AminBackward0": lambda lib, x: x.amin((0, -1), keepdim=True),
    "VarBackward0": lambda lib, x: x.var(0),
    "StdBackward0": lambda lib, x: x.std(-1, correction=0),
    "VarMeanBackward0": lambda lib, x: lib.var_mean(x, 0)[0] * 2 + lib.var_mean(x, 0)[1],
    "StdMeanBackward0": lambda lib, x: lib.std_mean(x)[1],
    "LinalgVectorNormBackward0": lambda lib, x: x.norm(),
    "LogsumexpBackward0": lambda lib, x: x.logsumexp(-1),
    "CumsumBackward0": lambda lib, x: x.cumsum(0),
    "CumprodBackward0": lambda lib, x: x.cumprod(-1),
    "SoftmaxBackward0": lambda lib, x: x.softmax(-1),
    "LogSoftmaxBackward0": lambda lib, x: lib.log_softmax(x, 0),
}


@pytest.mark.parametrize("node", list(GRAD_OPS))
@given(data=st.data())
def test_gradients_match(node, data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple))
    e, t = make(data.draw, "float64", shape, -2, 2)
    # Sprinkle zeros (prod, norms) and ties (max/min) in.
    e, t = e.detach().clone().requires_grad_(True), t.detach().clone().requires_grad_(True)
    fn = GRAD_OPS[node]
    ye, yt = fn(ember, e), fn(torch, t)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__
    if node in ("VarMeanBackward0",):
        assert "VarMeanBackward0" in repr(ye.grad_fn.next_functions)
    else:
        assert type(ye.grad_fn).__name__ == node
    same(ye.detach(), yt.detach(), "float64")
    w = [data.draw(st.floats(-2, 2, width=16)) for _ in range(yt.numel())]
    we, wt = pair(w, "float64", tuple(yt.shape))
    (ye * we).sum().backward()
    (yt * wt).sum().backward()
    same(e.grad, t.grad, "float64")


@pytest.mark.parametrize("ord_", [0, 1, 2, 3, 0.5, float("inf"), float("-inf")])
def test_norm_gradients(ord_):
    vals = [[0.0, 1.5, -2.0, 2.0], [-2.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    e, t = pair(vals, "float64", requires_grad=True)
    ye, yt = ember.linalg.vector_norm(e, ord_, 1), torch.linalg.vector_norm(t, ord_, 1)
    same(ye.detach(), yt.detach(), "float64")
    ye.sum().backward()
    yt.sum().backward()
    if t.grad is None:
        assert e.grad is None
    else:
        same(e.grad, t.grad, "float64")


def test_prod_and_cumprod_gradients_with_zeros():
    vals = [[0.0, 2.0, 3.0, 0.5], [1.0, 0.0, 0.0, 2.0], [1.5, -2.0, 0.5, 3.0]]
    for f in (lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.prod(0), lambda x: x.cumprod(1),
              lambda x: x.cumprod(0)):
        e, t = pair(vals, "float64", requires_grad=True)
        (f(e) * 1.5).sum().backward()
        (f(t) * 1.5).sum().backward()
        same(e.grad, t.grad, "float64")


def test_softmax_double_backward():
    vals = [[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]]
    for name in ("softmax", "log_softmax"):
        e, t = pair(vals, "float64", requires_grad=True)
        res = []
        for lib, x in ((ember, e), (torch, t)):
            y = getattr(x, name)(1)
            (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
            (g * g).sum().backward()
            res.append(x.grad)
        same(res[0], res[1], "float64")


def test_reductions_of_half_compute_in_float():
    vals = [0.1 * i for i in range(200)]
    for dname in ("float16", "bfloat16"):
        e, t = pair(vals, dname, (20, 10))
        for f in (lambda x: x.sum(), lambda x: x.mean(0), lambda x: x.var(1), lambda x: x.norm(),
                  lambda x: x.softmax(0), lambda x: x.logsumexp(1), lambda x: x.cumsum(1)):
            same(f(e), f(t), dname, loose=True)


def test_norm_python_wrappers():
    e, t = pair([[3.0, -4.0, 0.5], [1.0, 2.0, -2.0]], "float32")
    cases = [
        lambda lib, x: x.norm(),
        lambda lib, x: x.norm(1),
        lambda lib, x: x.norm(p=float("inf"), dim=1),
        lambda lib, x: x.norm(dim=0, keepdim=True),
        lambda lib, x: lib.norm(x, "fro", dim=(0, 1)),
        lambda lib, x: lib.norm(x, dtype=lib.float64),
        lambda lib, x: lib.norm(x.unsqueeze(0), dim=(0, 1, 2)),
        lambda lib, x: lib.linalg.norm(x),
        lambda lib, x: lib.linalg.norm(x, 1),
        lambda lib, x: lib.linalg.norm(x, float("-inf")),
        lambda lib, x: lib.linalg.norm(x, dim=1),
        lambda lib, x: lib.linalg.norm(x.unsqueeze(0), 3),
        lambda lib, x: lib.linalg.matrix_norm(x, float("inf"), keepdim=True),
        lambda lib, x: lib.linalg.matrix_norm(x.reshape(-1)),
        lambda lib, x: lib.linalg.vector_norm(x, 0.5, (0, 1)),
    ]
    for case in cases:
        got, want = run_both(lambda: case(ember, e), lambda: case(torch, t))
        if want is not None:
            same(got, want, "float32")
            assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__ if want.grad_fn else True
