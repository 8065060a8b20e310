"""Conversion methods (x.float(), x.type(...)), x.new_* factories, memory
formats, type facts (finfo/iinfo), broadcasting and stacking helpers, and
alias names, each against torch."""

from __future__ import annotations

import pytest
from conftest import DTYPE_NAMES, assert_same, dtypes, pair, torch

import ember

CONVERSIONS = ["float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool"]


def outcome(fn):
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return None, exc


def same_outcome(fe, ft):
    (re_, ee), (rt, et) = outcome(fe), outcome(ft)
    if et is not None:
        assert ee is not None and type(ee) is type(et), f"ember {ee!r} vs torch {et!r}"
        assert str(ee) == str(et)
        return None, None
    assert ee is None, ee
    return re_, rt


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@pytest.mark.parametrize("method", CONVERSIONS)
def test_conversion_methods(dname, method):
    e, t = pair([[0, 1, 2], [3, 100, 7]], dname)
    e, t = e.t(), t.t()  # non-contiguous source
    got, want = getattr(e, method)(), getattr(t, method)()
    assert_same(got, want)
    assert (got is e) == (want is t)
    ed, td = dtypes(dname)
    e, t = pair([[-2.5, 1.25, 0.0, 99.75]], "float64")
    assert_same(getattr(e.to(ed), method)(), getattr(t.to(td), method)())


def test_conversion_records_to_copy_and_keeps_self():
    e = ember.ones(2, 3, requires_grad=True)
    t = torch.ones(2, 3, requires_grad=True)
    assert type(e.double().grad_fn).__name__ == type(t.double().grad_fn).__name__ == "ToCopyBackward0"
    assert e.float() is e and t.float() is t
    e.double().sum().backward()
    assert e.grad.dtype == ember.float32


@pytest.mark.parametrize(
    "arg",
    ["torch.DoubleTensor", "torch.IntTensor", "torch.BoolTensor", "torch.BFloat16Tensor", "foo", None, "float64"],
)
def test_type(arg):
    e, t = pair([1.5, -2.0], "float32")
    if arg == "float64":
        got, want = e.type(ember.float64), t.type(torch.float64)
    else:
        got, want = same_outcome(lambda: e.type(arg), lambda: t.type(arg))
    if arg is None:
        assert got == want
    elif want is not None:
        assert_same(got, want)


def test_type_as_and_new_factories():
    e, t = pair([1, 2], "int32")
    f_e, f_t = pair([1.0], "float64")
    assert_same(e.type_as(f_e), t.type_as(f_t))
    cases = [
        lambda lib, x: x.new_zeros(2, 3),
        lambda lib, x: x.new_zeros((2, 3), dtype=lib.float16),
        lambda lib, x: x.new_ones([4]),
        lambda lib, x: x.new_full((2,), 7),
        lambda lib, x: x.new_full((2,), 2.5, dtype=lib.float32),
        lambda lib, x: x.new_tensor([1.7, 2.2]),
        lambda lib, x: x.new_tensor([[1, 2]], dtype=lib.int64),
        lambda lib, x: x.new_empty((0, 2)),
    ]
    for case in cases:
        assert_same(case(ember, e), case(torch, t))
    g = e.float().new_zeros(2, requires_grad=True)
    assert g.requires_grad and g.is_leaf


@pytest.mark.parametrize("dname", DTYPE_NAMES)
def test_facts(dname):
    e, t = pair([[1, 0, 1]], dname)
    for name in ("nbytes", "itemsize", "is_cpu"):
        assert getattr(e, name) == getattr(t, name)
    for name in ("get_device", "is_signed", "is_complex"):
        assert getattr(e, name)() == getattr(t, name)()
    assert e.is_same_size(e.t()) == t.is_same_size(t.t())
    for shape in ([], [1], [2], [0]):
        ee, tt = ember.ones(shape, dtype=e.dtype), torch.ones(shape, dtype=t.dtype)
        got, want = same_outcome(ee.is_nonzero, tt.is_nonzero)
        assert got == want


def test_memory_formats():
    e, t = ember.ones(2, 3), torch.ones(2, 3)
    for name in ("preserve_format", "contiguous_format", "channels_last", "channels_last_3d"):
        assert repr(getattr(ember, name)) == repr(getattr(torch, name))
    assert e.contiguous(memory_format=ember.contiguous_format) is e
    assert_same(e.to(ember.float64, memory_format=ember.preserve_format), t.to(torch.float64))
    assert_same(e.t().float(memory_format=ember.preserve_format), t.t().float())
    same_outcome(
        lambda: e.contiguous(memory_format=ember.channels_last),
        lambda: t.contiguous(memory_format=torch.channels_last),
    )


@pytest.mark.parametrize("dname", ["float16", "bfloat16", "float32", "float64"])
def test_finfo(dname):
    ed, td = dtypes(dname)
    fe, ft = ember.finfo(ed), torch.finfo(td)
    assert repr(fe) == repr(ft)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(fe, name) == getattr(ft, name), name
    same_outcome(lambda: ember.iinfo(ed), lambda: torch.iinfo(td))


@pytest.mark.parametrize("dname", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(dname):
    ed, td = dtypes(dname)
    fe, ft = same_outcome(lambda: ember.iinfo(ed), lambda: torch.iinfo(td))
    if ft is not None:
        assert repr(fe) == repr(ft)
        assert (fe.bits, fe.min, fe.max, fe.dtype) == (ft.bits, ft.min, ft.max, ft.dtype)
    same_outcome(lambda: ember.finfo(ed), lambda: torch.finfo(td))


@pytest.mark.parametrize(
    "shapes", [[(2, 1), (3,)], [(1,), ()], [(4, 1, 3), (5, 1)], [(2,), (3,)], [(0, 1), (1, 4)], [3, (2, 1)]]
)
def test_broadcast_helpers(shapes):
    got, want = same_outcome(lambda: ember.broadcast_shapes(*shapes), lambda: torch.broadcast_shapes(*shapes))
    assert got == want
    if want is None:
        return
    shapes = [(s,) if isinstance(s, int) else s for s in shapes]
    es = [ember.arange(float(max(1, _numel(s)))).reshape(s) if _numel(s) else ember.ones(s) for s in shapes]
    ts = [torch.arange(float(max(1, _numel(s)))).reshape(s) if _numel(s) else torch.ones(s) for s in shapes]
    for a, b in zip(ember.broadcast_tensors(*es), torch.broadcast_tensors(*ts)):
        assert_same(a, b)
    assert_same(ember.broadcast_to(es[0], want), torch.broadcast_to(ts[0], want))


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


@pytest.mark.parametrize("fn", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast(fn):
    for shape in ([], [2], [2, 3], [1, 2, 3]):
        e, t = ember.ones(shape), torch.ones(shape)
        assert_same(getattr(ember, fn)(e), getattr(torch, fn)(t))
    for a, b in zip(
        getattr(ember, fn)(ember.ones(()), ember.ones(2)), getattr(torch, fn)(torch.ones(()), torch.ones(2))
    ):
        assert_same(a, b)


@pytest.mark.parametrize("fn", ["hstack", "vstack", "dstack", "column_stack"])
def test_stacking(fn):
    for shapes in ([(3,), (3,)], [(2, 3), (2, 3)], [(), ()], [(2, 1, 3), (2, 1, 3)]):
        es = [ember.arange(float(_numel(s))).reshape(s) for s in shapes]
        ts = [torch.arange(float(_numel(s))).reshape(s) for s in shapes]
        assert_same(getattr(ember, fn)(es), getattr(torch, fn)(ts))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    for sizes in ([2, 3], [4], [2, 3, 4], [1, 0]):
        es = [ember.arange(n) for n in sizes]
        ts = [torch.arange(n) for n in sizes]
        for a, b in zip(ember.meshgrid(*es, indexing=indexing), torch.meshgrid(*ts, indexing=indexing)):
            assert_same(a, b)
    with pytest.warns(UserWarning, match="indexing argument"):
        ember.meshgrid(ember.arange(2), ember.arange(3))


@pytest.mark.parametrize(
    "alias,args",
    [
        ("greater", ([1.0, 2.0], [2.0, 1.0])),
        ("greater_equal", ([1.0, 2.0], [2.0, 2.0])),
        ("less", ([1, 2], [2, 1])),
        ("less_equal", ([1, 2], [1, 1])),
        ("not_equal", ([1, 2], [1, 1])),
        ("multiply", ([1.5, 2.0], [2.0, -1.0])),
        ("subtract", ([1.5, 2.0], [2.0, -1.0])),
        ("divide", ([1.5, 2.0], [2.0, -1.0])),
        ("negative", ([1.5, -2.0],)),
        ("absolute", ([1.5, -2.0],)),
        ("fix", ([1.5, -2.7],)),
        ("arcsin", ([0.5, -0.25],)),
        ("arctanh", ([0.5, -0.25],)),
        ("arccosh", ([1.5, 2.25],)),
    ],
)
def test_aliases(alias, args):
    es = [ember.tensor(a, requires_grad=isinstance(a[0], float) and alias != "fix") for a in args]
    ts = [torch.tensor(a, requires_grad=isinstance(a[0], float) and alias != "fix") for a in args]
    got, want = getattr(ember, alias)(*es), getattr(torch, alias)(*ts)
    assert_same(got.detach(), want.detach())
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    assert_same(getattr(es[0], alias)(*es[1:]).detach(), getattr(ts[0], alias)(*ts[1:]).detach())


def test_constants():
    for name in ("pi", "e", "inf", "newaxis"):
        assert getattr(ember, name) == getattr(torch, name)
    assert ember.is_tensor(ember.ones(1)) and not ember.is_tensor([1])
    assert ember.numel(ember.ones(2, 3)) == 6


def test_index_protocol():
    items = [10, 11, 12, 13]
    for make in (lambda m: m.tensor(2), lambda m: m.tensor(True), lambda m: m.tensor([3]), lambda m: m.tensor(2.0),
                 lambda m: m.tensor([1, 2]), lambda m: m.tensor(1, dtype=m.uint8)):
        got, want = same_outcome(lambda: items[make(ember)], lambda: items[make(torch)])
        assert got == want
    assert list(range(10))[ember.tensor(1) : ember.tensor(4)] == [1, 2, 3]


def test_to_a_device_with_an_index_copies_unless_it_is_the_tensors():
    for lib in (torch, ember):
        x = lib.ones(2)
        assert x.to("cpu") is x and x.to(lib.device("cpu")) is x
        assert x.to("cpu:0") is not x and x.to(lib.device("cpu", 0)) is not x
