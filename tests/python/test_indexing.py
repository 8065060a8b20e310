"""Python indexing (x[i], x[i] = v) and the indexing operators against
PyTorch: random index expressions (ints, slices with steps, None, Ellipsis,
bools, masks, integer tensors and lists, mixed) over random shapes up to 4-D
with empty dimensions, in all ten dtypes: values, shapes, strides and
storage sharing of views, errors (type and message), gradients and grad_fn
names (float64); __setitem__ with broadcasting; index_select, index_put(_),
masked_fill(_) and fill_ with a tensor."""

from __future__ import annotations

import pytest
from _view_helpers import (
    check_result,
    check_write_through,
    grad_fn_chain,
    loss_of,
    make_pair,
    numel_of,
    run_both,
    shapes,
    values_for,
    weights_like,
)
from conftest import DTYPE_NAMES, FLOAT_NAMES, assert_same, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


# ---- index expressions: drawn once as plain data, then built for each library -----------


def _ints(draw, size, n):
    lo, hi = (-size, size - 1) if size > 0 else (0, 0)
    if draw(st.integers(0, 15)) == 0:
        lo, hi = lo - 1, hi + 1  # now and then out of bounds
    return [draw(st.integers(lo, hi)) for _ in range(n)]


def _item_for_dims(draw, shape, d, remaining):
    """One index entry for dims d, d+1, ... of shape; returns (item, dims used)."""
    size = shape[d] if d < len(shape) else 1
    kind = draw(st.sampled_from(["int", "slice", "slice", "tensor", "list", "int0d", "mask", "boollist"]))
    if kind == "int":
        return ("int", _ints(draw, size, 1)[0]), 1
    if kind == "slice":
        bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
        step = draw(st.sampled_from([None, 1, 1, 2, 3] + ([-1, 0] if draw(st.integers(0, 20)) == 0 else [])))
        return ("slice", draw(bound), draw(bound), step), 1
    if kind in ("tensor", "list"):
        tshape = draw(st.sampled_from([(0,), (1,), (2,), (3,), (1, 2), (2, 1), (2, 3)]))
        vals = _ints(draw, size, numel_of(tshape))
        if kind == "list" and len(tshape) == 1:
            return ("list", vals), 1
        return ("tensor", vals, tshape, draw(st.sampled_from(["int64", "int64", "int32"]))), 1
    if kind == "int0d":
        return ("int0d", _ints(draw, size, 1)[0]), 1
    if kind == "mask":
        m = draw(st.integers(1, max(1, min(2, remaining))))
        mshape = tuple(shape[d + i] if d + i < len(shape) else 1 for i in range(m))
        if draw(st.integers(0, 15)) == 0:
            mshape = (mshape[0] + 1,) + mshape[1:]
        return ("mask", [draw(st.booleans()) for _ in range(numel_of(mshape))], mshape), m
    return ("boollist", [draw(st.booleans()) for _ in range(size)]), 1


@st.composite
def index_exprs(draw, shape):
    nd = len(shape)
    k = draw(st.integers(0, nd + 1 if draw(st.integers(0, 10)) == 0 else nd))
    items = []
    d = 0
    while d < k:
        item, used = _item_for_dims(draw, shape, d, k - d)
        items.append(item)
        d += used
    if draw(st.integers(0, 3)) == 0:
        # An Ellipsis, then entries for the last dims.
        j = draw(st.integers(0, max(0, nd - d)))
        tail = []
        e = nd - j
        while e < nd:
            item, used = _item_for_dims(draw, shape, e, nd - e)
            tail.append(item)
            e += used
        items = items + [("ellipsis",)] + tail
    for _ in range(draw(st.integers(0, 2))):
        extra = draw(st.sampled_from([("none",), ("none",), ("bool", True), ("bool", False), ("bool0d", True)]))
        items.insert(draw(st.integers(0, len(items))), extra)
    form = draw(st.sampled_from(["tuple", "tuple", "bare"]))
    if form == "bare" and len(items) == 1:
        return items[0]
    return ("tuple", items)


def build_index(lib, desc):
    kind = desc[0]
    if kind == "tuple":
        return tuple(build_index(lib, d) for d in desc[1])
    if kind == "int":
        return desc[1]
    if kind == "slice":
        return slice(desc[1], desc[2], desc[3])
    if kind == "none":
        return None
    if kind == "ellipsis":
        return Ellipsis
    if kind == "bool":
        return desc[1]
    if kind == "bool0d":
        return lib.tensor(desc[1])
    if kind == "int0d":
        return lib.tensor(desc[1])
    if kind == "list":
        return list(desc[1])
    if kind == "boollist":
        return list(desc[1])
    if kind == "tensor":
        return lib.tensor(desc[1], dtype=getattr(lib, desc[3])).reshape(desc[2])
    if kind == "mask":
        return lib.tensor(desc[1], dtype=lib.bool).reshape(desc[2])
    raise AssertionError(desc)


def check_same_error(err, fn_e):
    with pytest.raises(type(err)) as info:
        fn_e()
    if isinstance(err, (IndexError, ValueError, TypeError)):
        assert str(info.value) == str(err)


# ---- x[index] -----------------------------------------------------------------------------


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_getitem_matches(dname, data):
    shape = data.draw(shapes())
    xe, xt = make_pair(data.draw, dname, shape)
    desc = data.draw(index_exprs(shape))
    ie, it = build_index(ember, desc), build_index(torch, desc)
    try:
        rt = xt[it]
    except Exception as err:  # noqa: BLE001
        check_same_error(err, lambda: xe[ie])
        return
    re = xe[ie]
    check_result(re, rt, xe, xt)
    check_write_through(re, rt, xe, xt, dname)


@settings(max_examples=150)
@given(data=st.data())
def test_getitem_gradients(data):
    shape = data.draw(shapes(min_dims=1))
    xe, xt = make_pair(data.draw, "float64", shape, requires_grad=True)
    desc = data.draw(index_exprs(shape))
    ie, it = build_index(ember, desc), build_index(torch, desc)
    re, rt, err = run_both(lambda: xe[ie], lambda: xt[it])
    if err is not None:
        return
    assert grad_fn_chain(re) == grad_fn_chain(rt)
    loss_of(ember, re).backward()
    loss_of(torch, rt).backward()
    assert_same(xe.grad, xt.grad)


# ---- x[index] = value ---------------------------------------------------------------------


def _value_shape(draw, target):
    """A shape that broadcasts to target (leading dims dropped, 1s, leading 1s)."""
    shape = list(target[draw(st.integers(0, len(target))):])
    shape = [1 if draw(st.integers(0, 3)) == 0 else s for s in shape]
    shape = [1] * draw(st.integers(0, 1)) + shape
    if draw(st.integers(0, 12)) == 0:
        shape = shape + [2]  # does not fit
    return tuple(shape)


def _draw_value(draw, dname, target_shape):
    kind = draw(st.sampled_from(["py", "0d", "tensor", "tensor", "other_dtype"]))
    if kind == "py":
        v = values_for(dname, 1, draw)[0]
        if dname in FLOAT_NAMES and draw(st.booleans()):
            v = int(v)
        return ("py", v)
    vshape = () if kind == "0d" or target_shape is None else _value_shape(draw, target_shape)
    vname = draw(st.sampled_from(DTYPE_NAMES)) if kind == "other_dtype" else dname
    return ("tensor", values_for(vname, numel_of(vshape), draw), vshape, vname)


def build_value(lib, vdesc, requires_grad=False):
    if vdesc[0] == "py":
        return vdesc[1]
    t = lib.tensor(vdesc[1], dtype=getattr(lib, vdesc[3])).reshape(vdesc[2])
    if requires_grad:
        t.requires_grad_(True)
    return t


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_setitem_matches(dname, data):
    shape = data.draw(shapes())
    xe, xt = make_pair(data.draw, dname, shape)
    desc = data.draw(index_exprs(shape))
    ie, it = build_index(ember, desc), build_index(torch, desc)
    try:
        target = tuple(xt[it].shape)
    except Exception:  # noqa: BLE001
        target = None
    vdesc = _draw_value(data.draw, dname, target)
    ve, vt = build_value(ember, vdesc), build_value(torch, vdesc)
    try:
        xt[it] = vt
    except Exception as err:  # noqa: BLE001
        check_same_error(err, lambda: xe.__setitem__(ie, ve))
        return
    xe[ie] = ve
    assert_same(xe, xt)


@settings(max_examples=150)
@given(data=st.data())
def test_setitem_gradients(data):
    shape = data.draw(shapes(min_dims=1))
    xe, xt = make_pair(data.draw, "float64", shape, requires_grad=True)
    desc = data.draw(index_exprs(shape))
    ie, it = build_index(ember, desc), build_index(torch, desc)
    try:
        target = tuple(xt[it].shape)
    except Exception:  # noqa: BLE001
        return
    vdesc = _draw_value(data.draw, "float64", target)
    if vdesc[0] == "tensor":
        vdesc = vdesc[:3] + ("float64",)
    grad_value = vdesc[0] == "tensor"
    ve, vt = build_value(ember, vdesc, grad_value), build_value(torch, vdesc, grad_value)

    def run(lib, x, idx, v):
        y = x * 1
        y[idx] = v
        return y

    ye, yt, err = run_both(lambda: run(ember, xe, ie, ve), lambda: run(torch, xt, it, vt))
    if err is not None:
        return
    assert_same(ye.detach(), yt.detach())
    assert grad_fn_chain(ye) == grad_fn_chain(yt)
    names = [[type(f).__name__ if f is not None else None for f, _ in y.grad_fn.next_functions] for y in (ye, yt)]
    assert names[0] == names[1]
    (ye * weights_like(ember, ye)).sum().backward()
    (yt * weights_like(torch, yt)).sum().backward()
    assert_same(xe.grad, xt.grad)
    if grad_value:
        if vt.grad is None:
            assert ve.grad is None
        else:
            assert_same(ve.grad, vt.grad)


# ---- the indexing operators ---------------------------------------------------------------


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_index_select_matches(dname, data):
    shape = data.draw(shapes())
    xe, xt = make_pair(data.draw, dname, shape)
    nd = max(len(shape), 1)
    d = data.draw(st.integers(-nd, nd - 1))
    size = shape[d] if shape else 1
    ishape = data.draw(st.sampled_from([(0,), (1,), (3,), ()]))
    vals = _ints(data.draw, size, numel_of(ishape))
    vals = [v % size if size else v for v in vals] if data.draw(st.booleans()) else vals
    iname = data.draw(st.sampled_from(["int64", "int32"]))
    use_out = data.draw(st.booleans())

    def run(lib, x):
        idx = lib.tensor(vals, dtype=getattr(lib, iname)).reshape(ishape)
        if use_out:
            out = lib.zeros(2, dtype=x.dtype)
            lib.index_select(x, d, idx, out=out)
            return out
        return x.index_select(d, idx)

    re, rt, err = run_both(lambda: run(ember, xe), lambda: run(torch, xt))
    if err is None:
        assert_same(re, rt)


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_index_put_matches(dname, data):
    shape = data.draw(shapes(min_dims=1))
    xe, xt = make_pair(data.draw, dname, shape)
    k = data.draw(st.integers(1, len(shape)))
    ishape = data.draw(st.sampled_from([(0,), (1,), (4,), (2, 2)]))
    idx_vals = [
        [v % shape[d] if shape[d] else 0 for v in _ints(data.draw, shape[d], numel_of(ishape))] for d in range(k)
    ]
    target = ishape + tuple(shape[k:])
    vshape = _value_shape(data.draw, target)
    vals = values_for(dname, numel_of(vshape), data.draw)
    accumulate = data.draw(st.booleans())
    inplace = data.draw(st.booleans())

    def run(lib, x):
        idx = [lib.tensor(v, dtype=lib.int64).reshape(ishape) for v in idx_vals]
        v = lib.tensor(vals, dtype=x.dtype).reshape(vshape)
        if inplace:
            y = x.clone()
            y.index_put_(tuple(idx), v, accumulate)
            return y
        return lib.index_put(x, tuple(idx), v, accumulate=accumulate)

    re, rt, err = run_both(lambda: run(ember, xe), lambda: run(torch, xt))
    if err is None:
        # Repeated positions add up; low-precision sums may round differently.
        loose = accumulate and dname in ("float16", "bfloat16")
        assert_same(re, rt, rtol=5e-2 if loose else None, atol=0.5 if loose else None)


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_masked_fill_matches(dname, data):
    shape = data.draw(shapes())
    xe, xt = make_pair(data.draw, dname, shape)
    mshape = tuple(s if data.draw(st.booleans()) else 1 for s in shape[data.draw(st.integers(0, len(shape))):])
    if data.draw(st.integers(0, 6)) == 0:
        mshape = (2,) + mshape
    mvals = [data.draw(st.booleans()) for _ in range(numel_of(mshape))]
    value = data.draw(st.sampled_from([1, 2.5, True, "t0", "t_int"]))
    inplace = data.draw(st.booleans())

    def run(lib, x):
        m = lib.tensor(mvals, dtype=lib.bool).reshape(mshape)
        v = value
        if value == "t0":
            v = lib.tensor(3.0)
        elif value == "t_int":
            v = lib.tensor(-2)
        if inplace:
            y = x.clone()
            y.masked_fill_(m, v)
            return y
        return lib.masked_fill(x, m, v) if isinstance(v, int) else x.masked_fill(m, v)

    re, rt, err = run_both(lambda: run(ember, xe), lambda: run(torch, xt))
    if err is None:
        assert_same(re, rt)


@settings(max_examples=40)
@given(data=st.data())
def test_indexing_operator_gradients(data):
    shape = data.draw(shapes(min_dims=1, max_dims=3))
    xe, xt = make_pair(data.draw, "float64", shape, requires_grad=True)
    which = data.draw(st.sampled_from(["index_select", "index_put", "index_put_acc", "masked_fill", "masked_fill_t",
                                       "fill_t"]))
    d = 0 if which.startswith("index_put") else data.draw(st.integers(0, len(shape) - 1))
    size = shape[d]
    ivals = [v % size for v in _ints(data.draw, size, data.draw(st.integers(0, 4)))] if size else []
    mvals = [data.draw(st.booleans()) for _ in range(numel_of(shape))]

    def run(lib, x):
        v = lib.tensor(2.5, dtype=lib.float64, requires_grad=True)
        idx = lib.tensor(ivals, dtype=lib.int64)
        m = lib.tensor(mvals, dtype=lib.bool).reshape(shape)
        y = x * 1
        if which == "index_select":
            r = y.index_select(d, idx)
        elif which in ("index_put", "index_put_acc"):
            r = y.index_put((idx,), v * 2, which == "index_put_acc")
        elif which == "masked_fill":
            r = y.masked_fill_(m, 4.0)
        elif which == "masked_fill_t":
            r = y.masked_fill(m, v * 3)
        else:
            r = y.fill_(v * 3)
        (r * weights_like(lib, r)).sum().backward()
        return r, v

    got, want, err = run_both(lambda: run(ember, xe), lambda: run(torch, xt))
    if err is not None:
        return
    (re, ve), (rt, vt) = got, want
    assert grad_fn_chain(re) == grad_fn_chain(rt)
    assert_same(re.detach(), rt.detach())
    assert_same(xe.grad, xt.grad)
    if vt.grad is None:
        assert ve.grad is None
    else:
        assert_same(ve.grad, vt.grad)


# ---- errors ---------------------------------------------------------------------------


def test_indexing_errors_match():
    def cases(lib):
        y = lib.tensor([1.0, 2.0, 3.0])
        x = lib.tensor([[1.0, 2.0, 3.0, 4.0]] * 3)
        s = lib.tensor(5.0)
        return [
            lambda: y[5],
            lambda: y[-4],
            lambda: y[1, 2],
            lambda: s[0],
            lambda: s[1],
            lambda: s[:],
            lambda: s[(slice(None),)],
            lambda: y[::-1],
            lambda: y[::0],
            lambda: y["a"],
            lambda: y[1.5],
            lambda: y[lib.tensor([5])],
            lambda: y[lib.tensor([1.0])],
            lambda: y[lib.tensor(1.0)],
            lambda: y[lib.tensor([True, False])],
            lambda: y[[[0, 1], [0]]],
            lambda: x[[0, 1], [0, 1, 2]],
            lambda: y[lib.tensor(5)],
            lambda: y[lib.tensor([[True]])],
            lambda: y[{}],
            lambda: y[object()],
            lambda: y[lib.tensor([-4])],
            lambda: y[lib.tensor([1], dtype=lib.int8)],
            lambda: y[None, None, 5],
            lambda: x[5],
            lambda: x[:, 7],
            lambda: x[1, -5],
            lambda: y[(1,) * 3],
            lambda: s[[0]],
            lambda: y[(lib.tensor([0]),) * 2],
            lambda: y[2**63],
            lambda: y[-(2**63)],
            lambda: y.__setitem__(0, "a"),
            lambda: y.__setitem__(slice(None), lib.zeros(2)),
            lambda: y.__setitem__(slice(None), lib.zeros(2, 1, 3)),
            lambda: y.__setitem__([0, 1], lib.zeros(3)),
            lambda: y.__setitem__([0, 1], lib.zeros(3, dtype=lib.float64)),
            lambda: y.__setitem__(0, lib.zeros(2)),
            lambda: y.__delitem__(0),
            lambda: y.__setitem__(0, None),
            lambda: y.__setitem__(0, [1]),
            lambda: y.__setitem__(0, 1e39),
            lambda: y.__setitem__(7, "a"),
            lambda: lib.zeros(3, dtype=lib.int8).__setitem__(0, 300),
            lambda: lib.zeros(3, dtype=lib.uint8).__setitem__(0, -256),
            lambda: lib.zeros(3, dtype=lib.uint8).__setitem__(0, -1.5),
            lambda: lib.zeros(3, dtype=lib.int64).__setitem__(0, float("nan")),
            lambda: lib.zeros(3, dtype=lib.int8).__setitem__(0, 2**64),
            lambda: x.index_select(1, lib.tensor([5])),
            lambda: y.index_select(0, lib.tensor([5])),
            lambda: x.index_select(0, lib.tensor([-1])),
            lambda: x.index_select(1, lib.tensor([0.0])),
            lambda: x.index_select(1, lib.tensor([[0]])),
            lambda: s.index_select(0, lib.tensor([0, 0])),
            lambda: x.masked_fill(x, 1.0),
            lambda: x.masked_fill(lib.tensor([True]), lib.tensor([1.0])),
            lambda: y.masked_fill_(lib.ones(2, 3, dtype=lib.bool), 1.0),
            lambda: y.index_put_((lib.tensor([0]),), lib.zeros(2)),
            lambda: y.index_put_((lib.tensor([0]), lib.tensor([0])), lib.zeros(1)),
            lambda: y.fill_(lib.zeros(2)),
        ]

    for fe, ft in zip(cases(ember), cases(torch)):
        with pytest.raises(Exception) as want:
            ft()
        with pytest.raises(type(want.value)) as got:
            fe()
        assert str(got.value) == str(want.value)


def test_ok_cases_match():
    """Corner cases that work: empty lists, float lists, bool lists, several
    Ellipses, 0-dim indexing, index results that are not views."""

    def cases(lib):
        y = lib.tensor([1.0, 2.0, 3.0])
        x = lib.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]])
        s = lib.tensor(5.0)
        return [
            lambda: y[[]],
            lambda: x[[], []],
            lambda: y[[0.5, 1.7]],
            lambda: y[[True, False, True]],
            lambda: y[[True, 1]],
            lambda: y[[[True, False, True]]],
            lambda: y[..., ...],
            lambda: s[None],
            lambda: s[...],
            lambda: s[True],
            lambda: s[False],
            lambda: s[lib.tensor(True)],
            lambda: s[lib.tensor(False)],
            lambda: y[0:2**70],
            lambda: x[lib.tensor([[True, False, True, False]] * 3)],
            lambda: x[lib.tensor([True, False, True]), 1:],
            lambda: x[1:, [0, 2]],
            lambda: x[[0, 2], None, [1, 3]],
            lambda: x.t()[[1, 2]],
            lambda: x[lib.tensor([0, 1], dtype=lib.int32)],
        ]

    for fe, ft in zip(cases(ember), cases(torch)):
        e, t = fe(), ft()
        assert_same(e, t)
        assert e._is_view() == t._is_view()


def test_double_backward_and_recurrences():
    def run(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True)
        r = x[:, lib.tensor([1, 0, 1])]
        y = (r * r).sum() + (x.t()[1] * x[:, 0]).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (g * g).sum().backward()
        out = [g.tolist(), x.grad.tolist()]
        # Assignments from views of the same tensor, as in a recurrence (the
        # views are not saved for backward, so changing h later is fine).
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = lib.zeros(4, 3, dtype=lib.float64)
        h[0] = w
        for t in range(1, 4):
            h[t] = h[t - 1] * 2 + x[t % 2] * w
        h[lib.tensor([True, False, True, False])] = h[3] * 2
        (h * h).sum().backward()
        return out + [h.tolist(), w.grad.tolist(), x.grad.tolist(), type(h.grad_fn).__name__]

    got, want = run(ember), run(torch)
    assert got[-1] == want[-1]

    def saved_view_changed(lib):
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = lib.zeros(4, 3, dtype=lib.float64)
        h[0] = w
        for t in range(1, 4):
            h[t] = h[t - 1] * w  # mul saves the view h[t - 1] for w's gradient
        (h * h).sum().backward()

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved_view_changed(torch)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved_view_changed(ember)
    for a, b in zip(got[:-1], want[:-1]):
        torch.testing.assert_close(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))


def test_tensor_overloads_come_before_scalar_ones():
    """A 0-dim tensor value picks the Tensor overload, a number the Scalar one."""
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        m = lib.tensor([True, False, True])
        names = [
            type(r.grad_fn).__name__
            for r in ((x * 1).fill_(lib.tensor(2.0)), (x * 1).fill_(3), (x * 1).masked_fill(m, lib.tensor(2.0)),
                      (x * 1).masked_fill(m, 2.0), lib.masked_fill(x, m, lib.tensor(1.0)))
        ]
        assert names == ["FillBackward3", "FillBackward2", "MaskedFillBackward1", "MaskedFillBackward0",
                         "MaskedFillBackward1"]
