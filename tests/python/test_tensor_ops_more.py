"""Differential tests against PyTorch: masked_select, masked_scatter, nonzero,
argwhere, unique, unique_consecutive, tril/triu, repeat, tile,
repeat_interleave, roll, flip/fliplr/flipud, addcmul/addcdiv, searchsorted,
bincount, histc, isclose/allclose/equal, nan_to_num, trace, diag."""

from __future__ import annotations

import pytest
from _tensor_ops_helpers import ALL, NUMERIC, build, grad_check, index_pair, numel, run_both, same, shapes, values
from conftest import torch
from hypothesis import given
from hypothesis import strategies as st

import ember

FLOATS = ["float16", "bfloat16", "float32", "float64"]


@st.composite
def broadcast_pair(draw):
    n = draw(st.integers(0, 3))
    base = [draw(st.integers(0, 3)) for _ in range(n)]
    a = [d if draw(st.booleans()) else 1 for d in base]
    b = [d if draw(st.booleans()) else 1 for d in base]
    return tuple(a[draw(st.integers(0, n)):]), tuple(b)


# ---- masked_select / masked_scatter / nonzero / argwhere / unique ----------------------------


@pytest.mark.parametrize("dt", ALL)
@given(data=st.data())
def test_masked_select_scatter(dt, data):
    sa, sb = data.draw(broadcast_pair())
    xe, xt = build(values(data.draw, dt, numel(sa)), dt, sa, data.draw(st.booleans()))
    me, mt = build(values(data.draw, "bool", numel(sb)), "bool", sb)
    e, t = run_both(lambda: ember.masked_select(xe, me), lambda: torch.masked_select(xt, mt))
    if t is not None:
        same(e, t)
        same(xe.masked_select(me), t)
    n = max(numel(sa), numel(sb)) * 2
    se, st_ = build(values(data.draw, dt, n), dt, (n,))
    e, t = run_both(lambda: xe.masked_scatter(me, se), lambda: xt.masked_scatter(mt, st_))
    if t is not None:
        same(e, t)
    ye, yt = xe.clone(), xt.clone()
    # (PyTorch names the tensor type CPUBoolType in this expand message.)
    e, t = run_both(lambda: ye.masked_scatter_(me, se), lambda: yt.masked_scatter_(mt, st_), match=False)
    if t is not None:
        same(ye, yt)


@pytest.mark.parametrize("dt", ALL)
@given(data=st.data())
def test_nonzero_argwhere(dt, data):
    shape = data.draw(shapes())
    xe, xt = build(values(data.draw, dt, numel(shape)), dt, shape, data.draw(st.booleans()))
    same(ember.nonzero(xe), torch.nonzero(xt))
    same(xe.nonzero(), xt.nonzero())
    same(ember.argwhere(xe), torch.argwhere(xt))
    a, b = ember.nonzero(xe, as_tuple=True), torch.nonzero(xt, as_tuple=True)
    assert isinstance(a, tuple) and len(a) == len(b)
    for p, q in zip(a, b):
        same(p, q)
    a = xe.nonzero(as_tuple=True)
    assert len(a) == len(b)


@pytest.mark.parametrize("dt", ALL)
@given(data=st.data())
def test_unique(dt, data):
    shape = data.draw(shapes())
    xe, xt = build(values(data.draw, dt, numel(shape), nan=True), dt, shape, data.draw(st.booleans()))
    inv, cnt = data.draw(st.booleans()), data.draw(st.booleans())
    e = ember.unique(xe, return_inverse=inv, return_counts=cnt)
    t = torch.unique(xt, return_inverse=inv, return_counts=cnt)
    same(e, t)
    same(xe.unique(sorted=True, return_counts=cnt), xt.unique(sorted=True, return_counts=cnt))
    e = ember.unique_consecutive(xe, return_inverse=inv, return_counts=cnt)
    t = torch.unique_consecutive(xt, return_inverse=inv, return_counts=cnt)
    same(e, t)


def test_masked_grads_and_errors():
    xe, xt = build([0.5, 1, 2, 3, 4, 5], "float64", (2, 3), requires_grad=True)
    me, mt = build([True, False, True], "bool", (3,))
    grad_check(lambda x: x.masked_select(me), lambda x: x.masked_select(mt), [xe], [xt], "MaskedSelectBackward0")
    se, st_ = build([7.0, 8, 9, 10, 11, 12, 13], "float64", (7,), requires_grad=True)
    grad_check(lambda x, s: x.masked_scatter(me, s), lambda x, s: x.masked_scatter(mt, s), [xe, se], [xt, st_],
               "MaskedScatterBackward0")
    for fn in [
        lambda m, x: x.masked_select(x.to(m.int64)),
        lambda m, x: x.masked_scatter(x.to(m.int64), x),
        lambda m, x: x.masked_scatter(x > 1, x.to(m.int64)),
        lambda m, x: x.masked_scatter(x > -1, m.zeros(3, dtype=m.float64)),
        lambda m, x: m.masked_select(x, m.ones(3, dtype=m.bool), out=m.empty(0, dtype=m.long)),
    ]:
        run_both(lambda: fn(ember, xe.detach()), lambda: fn(torch, xt.detach()))
    oe, ot = ember.empty(0, dtype=ember.float64), torch.empty(0, dtype=torch.float64)
    ember.masked_select(xe.detach(), me, out=oe)
    torch.masked_select(xt.detach(), mt, out=ot)
    same(oe, ot)


# ---- tril / triu / repeat / tile / repeat_interleave / roll / flip ---------------------------------


@pytest.mark.parametrize("dt", ALL)
@given(data=st.data())
def test_tril_triu(dt, data):
    shape = data.draw(shapes(min_dims=0, max_dims=4))
    diag = data.draw(st.integers(-4, 4))
    xe, xt = build(values(data.draw, dt, numel(shape)), dt, shape, data.draw(st.booleans()))
    for name in ("tril", "triu"):
        e, t = run_both(lambda: getattr(ember, name)(xe, diag), lambda: getattr(torch, name)(xt, diag))
        if t is not None:
            same(e, t)
            ye, yt = xe.clone(), xt.clone()
            getattr(ye, name + "_")(diagonal=diag)
            getattr(yt, name + "_")(diagonal=diag)
            same(ye, yt)
            oe, ot = ember.empty(0, dtype=xe.dtype), torch.empty(0, dtype=xt.dtype)
            getattr(ember, name)(xe, diag, out=oe)
            getattr(torch, name)(xt, diag, out=ot)
            same(oe, ot)


@pytest.mark.parametrize("dt", ALL)
@given(data=st.data())
def test_repeat_tile_interleave(dt, data):
    shape = data.draw(shapes(max_dims=3, max_size=3))
    xe, xt = build(values(data.draw, dt, numel(shape)), dt, shape, data.draw(st.booleans()))
    reps = tuple(data.draw(st.integers(0, 3)) for _ in range(data.draw(st.integers(0, 4))))
    e, t = run_both(lambda: xe.repeat(*reps), lambda: xt.repeat(*reps), match=bool(reps))
    if t is not None:
        same(e, t)
    same(ember.tile(xe, reps), torch.tile(xt, reps))
    r = data.draw(st.integers(0, 3))
    same(xe.repeat_interleave(r), xt.repeat_interleave(r))
    if shape:
        d = data.draw(st.integers(-len(shape), len(shape) - 1))
        same(ember.repeat_interleave(xe, r, dim=d), torch.repeat_interleave(xt, r, dim=d))
        rv = [data.draw(st.integers(0, 3)) for _ in range(shape[d])]
        re_, rt = index_pair(rv, (len(rv),))
        same(xe.repeat_interleave(re_, dim=d), xt.repeat_interleave(rt, dim=d))
        same(ember.repeat_interleave(re_), torch.repeat_interleave(rt))


@pytest.mark.parametrize("dt", ALL)
@given(data=st.data())
def test_roll_flip(dt, data):
    shape = data.draw(shapes(max_dims=3))
    xe, xt = build(values(data.draw, dt, numel(shape)), dt, shape, data.draw(st.booleans()))
    nd = max(len(shape), 1)
    shift = data.draw(st.integers(-7, 7))
    same(xe.roll(shift), xt.roll(shift))
    dims = data.draw(st.lists(st.integers(-nd, nd - 1), max_size=3))
    shifts = [data.draw(st.integers(-5, 5)) for _ in dims]
    if dims:
        e, t = run_both(lambda: ember.roll(xe, shifts, dims), lambda: torch.roll(xt, shifts, dims))
        if t is not None:
            same(e, t)
    e, t = run_both(lambda: ember.flip(xe, dims), lambda: torch.flip(xt, dims))
    if t is not None:
        same(e, t)
    for name in ("fliplr", "flipud"):
        e, t = run_both(lambda: getattr(xe, name)(), lambda: getattr(xt, name)())
        if t is not None:
            same(e, t)


def test_shape_op_grads_and_errors():
    vals = [0.5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    for fn, node in [
        (lambda m, x: x.tril(), "TrilBackward0"),
        (lambda m, x: x.triu(1), "TriuBackward0"),
        (lambda m, x: x.repeat(2, 1, 3), "RepeatBackward0"),
        (lambda m, x: m.tile(x, (2,)), "RepeatBackward0"),
        (lambda m, x: x.roll(1), "RollBackward0"),
        (lambda m, x: x.roll((1, -2), (0, 1)), "RollBackward0"),
        (lambda m, x: x.flip(0, 1), "FlipBackward0"),
        (lambda m, x: x.fliplr(), "FlipBackward0"),
        (lambda m, x: x.repeat_interleave(m.tensor([1, 0, 2]), dim=0), "IndexSelectBackward0"),
        (lambda m, x: x.repeat_interleave(2), "ViewBackward0"),
        (lambda m, x: x.trace(), "TraceBackward0"),
        (lambda m, x: m.nan_to_num(x.log()), "NanToNumBackward0"),
    ]:
        xe, xt = build(vals, "float64", (3, 4), requires_grad=True)
        grad_check(lambda x: fn(ember, x), lambda x: fn(torch, x), [xe], [xt], node)
    xe, xt = build(vals, "float32", (3, 4))
    be, bt = build([1, 2, 3], "int64", (3,))
    for fn in [
        lambda m, x, b: m.tril(b),
        lambda m, x, b: x.repeat(2),
        lambda m, x, b: x.repeat(-1, 2),
        lambda m, x, b: b.repeat_interleave(-1),
        lambda m, x, b: b.repeat_interleave(m.tensor([[1]])),
        lambda m, x, b: b.repeat_interleave(m.tensor([1, 2])),
        lambda m, x, b: b.repeat_interleave(m.tensor([1.0, 2.0, 3.0])),
        lambda m, x, b: b.repeat_interleave(m.tensor([1, -2, 3])),
        lambda m, x, b: x.roll([]),
        lambda m, x, b: x.roll([1, 2], [0]),
        lambda m, x, b: x.flip(0, 0),
        lambda m, x, b: b.fliplr(),
        lambda m, x, b: m.tensor(1).flipud(),
        lambda m, x, b: m.trace(b),
        lambda m, x, b: m.trace(x > 1),
        lambda m, x, b: m.diag(m.zeros(2, 2, 2)),
    ]:
        run_both(lambda: fn(ember, xe, be), lambda: fn(torch, xt, bt))


# ---- addcmul / addcdiv ------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", NUMERIC)
@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@given(data=st.data())
def test_addcmul_addcdiv(dt, op, data):
    sa, sb = data.draw(broadcast_pair())
    xe, xt = build(values(data.draw, dt, numel(sa)), dt, sa, data.draw(st.booleans()))
    ae, at = build(values(data.draw, dt, numel(sb)), dt, sb)
    cvals = [v if v != 0 else 1 for v in values(data.draw, dt, numel(sb))]
    ce, ct = build(cvals, dt, sb, data.draw(st.booleans()))
    value = data.draw(st.sampled_from([1, 2, -0.5])) if dt in FLOATS else data.draw(st.sampled_from([1, 2, -3]))
    tol = {"rtol": 1e-2} if dt in ("float16", "bfloat16") else {}
    e, t = run_both(
        lambda: getattr(ember, op)(xe, ae, ce, value=value), lambda: getattr(torch, op)(xt, at, ct, value=value)
    )
    if t is not None:
        same(e, t, **tol)
        if tuple(t.shape) == tuple(xt.shape):
            ye, yt = xe.clone(), xt.clone()
            getattr(ye, op + "_")(ae, ce, value=value)
            getattr(yt, op + "_")(at, ct, value=value)
            same(ye, yt, **tol)
            oe, ot = ember.empty(0, dtype=xe.dtype), torch.empty(0, dtype=xt.dtype)
            getattr(ember, op)(xe, ae, ce, value=value, out=oe)
            getattr(torch, op)(xt, at, ct, value=value, out=ot)
            same(oe, ot, **tol)


def test_addc_grads_and_errors():
    for op, node in (("addcmul", "AddcmulBackward0"), ("addcdiv", "AddcdivBackward0")):
        xe, xt = build([0.5, 1, 2], "float64", (3,), requires_grad=True)
        ae, at = build([1.5, -1, 2, 3, 0.25, 5], "float64", (2, 3), requires_grad=True)
        ce, ct = build([2.0, 4, -8], "float64", (3,), requires_grad=True)
        grad_check(lambda x, a, c: getattr(x, op)(a, c, value=0.5), lambda x, a, c: getattr(x, op)(a, c, value=0.5),
                   [xe, ae, ce], [xt, at, ct], node)
    b = [1, 2, 3]
    for fn in [
        lambda m: m.tensor([True]).addcmul(m.tensor([True]), m.tensor([True])),
        lambda m: m.tensor(b).addcdiv(m.tensor(b), m.tensor(b)),
        lambda m: m.tensor(b).addcmul(m.tensor([1.0, 2, 3]), m.tensor(b)),
    ]:
        e, t = run_both(lambda: fn(ember), lambda: fn(torch))
        if t is not None:
            same(e, t)


# ---- searchsorted / bincount / histc -----------------------------------------------------------------


@pytest.mark.parametrize("dt", NUMERIC)
@given(data=st.data())
def test_searchsorted(dt, data):
    n = data.draw(st.integers(0, 6))
    bd = sorted(values(data.draw, dt, n))
    batched = data.draw(st.booleans())
    if batched:
        bd = sorted(values(data.draw, dt, n)) + bd
        be, bt = build(bd, dt, (2, n))
        vshape = (2, data.draw(st.integers(0, 4)))
    else:
        be, bt = build(bd, dt, (n,))
        vshape = data.draw(shapes(max_dims=2))
    ve, vt = build(values(data.draw, dt, numel(vshape), nan=True), dt, vshape)
    right, i32 = data.draw(st.booleans()), data.draw(st.booleans())
    e, t = run_both(lambda: ember.searchsorted(be, ve, right=right, out_int32=i32),
                    lambda: torch.searchsorted(bt, vt, right=right, out_int32=i32))
    if t is not None:
        same(e, t)
    side = "right" if right else "left"
    same(ember.searchsorted(be, ve, side=side), torch.searchsorted(bt, vt, side=side))
    if not batched:
        same(ember.searchsorted(be, 2), torch.searchsorted(bt, 2))


@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("wdt", [None, "float32", "float64", "int64", "float16"])
@given(data=st.data())
def test_bincount(dt, wdt, data):
    n = data.draw(st.integers(0, 8))
    vals = [data.draw(st.integers(0, 6)) for _ in range(n)]
    xe, xt = build(vals, dt, (n,))
    minlength = data.draw(st.integers(0, 9))
    if wdt is None:
        same(ember.bincount(xe, minlength=minlength), torch.bincount(xt, minlength=minlength))
    else:
        we, wt = build(values(data.draw, wdt, n), wdt, (n,))
        same(xe.bincount(we, minlength), xt.bincount(wt, minlength))


@pytest.mark.parametrize("dt", FLOATS)
@given(data=st.data())
def test_histc(dt, data):
    shape = data.draw(shapes())
    xe, xt = build(values(data.draw, dt, numel(shape)), dt, shape)
    bins = data.draw(st.integers(1, 7))
    lo, hi = data.draw(st.sampled_from([(0, 0), (-2, 2), (-1.25, 3.5)]))
    e, t = run_both(lambda: ember.histc(xe, bins, lo, hi), lambda: torch.histc(xt, bins, lo, hi))
    if t is not None:
        same(e, t)


def test_counting_errors():
    b = [1, 2, 3]
    for fn in [
        lambda m: m.searchsorted(m.tensor([1, 2]), m.tensor(b), right=True, side="left"),
        lambda m: m.searchsorted(m.tensor([1, 2]), m.tensor(b), side="foo"),
        lambda m: m.searchsorted(m.tensor([[1, 2]]), m.tensor(b)),
        lambda m: m.bincount(m.tensor([-1])),
        lambda m: m.bincount(m.tensor([1.0])),
        lambda m: m.bincount(m.tensor([[1]])),
        lambda m: m.bincount(m.tensor(b), m.tensor([1.0])),
        lambda m: m.bincount(m.tensor(b), minlength=-1),
        lambda m: m.histc(m.tensor(b)),
        lambda m: m.histc(m.tensor([1.0]), bins=0),
        lambda m: m.histc(m.tensor([1.0]), min=3, max=1),
    ]:
        run_both(lambda: fn(ember), lambda: fn(torch))


# ---- isclose / allclose / equal / nan_to_num / trace / diag ----------------------------------------


@pytest.mark.parametrize("dt", ALL)
@given(data=st.data())
def test_isclose_family(dt, data):
    sa, sb = data.draw(broadcast_pair())
    xe, xt = build(values(data.draw, dt, numel(sa), nan=True), dt, sa)
    ye, yt = build(values(data.draw, dt, numel(sb), nan=True), dt, sb, data.draw(st.booleans()))
    rtol, atol = data.draw(st.sampled_from([(1e-5, 1e-8), (0.1, 0.5), (0.0, 0.0)]))
    en = data.draw(st.booleans())
    e, t = run_both(lambda: ember.isclose(xe, ye, rtol, atol, en), lambda: torch.isclose(xt, yt, rtol, atol, en))
    if t is not None:
        same(e, t)
        assert ember.allclose(xe, ye, rtol, atol, en) == torch.allclose(xt, yt, rtol, atol, en)
    assert ember.equal(xe, ye) == torch.equal(xt, yt)
    assert xe.equal(xe) == xt.equal(xt)


@pytest.mark.parametrize("dt", ALL)
@given(data=st.data())
def test_nan_to_num(dt, data):
    shape = data.draw(shapes())
    xe, xt = build(values(data.draw, dt, numel(shape), nan=True), dt, shape, data.draw(st.booleans()))
    kw = data.draw(st.sampled_from([{}, {"nan": 1.5}, {"nan": 0.0, "posinf": 9.0, "neginf": -9.0}]))
    same(ember.nan_to_num(xe, **kw), torch.nan_to_num(xt, **kw))
    ye, yt = xe.clone(), xt.clone()
    ye.nan_to_num_(**kw)
    yt.nan_to_num_(**kw)
    same(ye, yt)


@pytest.mark.parametrize("dt", NUMERIC)
@given(data=st.data())
def test_trace_diag(dt, data):
    shape = data.draw(shapes(min_dims=2, max_dims=2))
    xe, xt = build(values(data.draw, dt, numel(shape)), dt, shape, data.draw(st.booleans()))
    tol = {"rtol": 1e-2} if dt in ("float16", "bfloat16") else {}
    same(ember.trace(xe), torch.trace(xt), **tol)
    k = data.draw(st.integers(-3, 3))
    same(ember.diag(xe, k), torch.diag(xt, k))
    ve, vt = build(values(data.draw, dt, shape[0]), dt, (shape[0],))
    same(ve.diag(k), vt.diag(k))
