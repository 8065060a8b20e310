"""Legacy tensor types (ember.FloatTensor & co.), x.new, x.type with legacy
names, set_default_tensor_type, typed storages and layouts, against torch."""

from __future__ import annotations

import warnings

import pytest
from conftest import assert_same, torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TYPES = [
    "ByteTensor",
    "CharTensor",
    "ShortTensor",
    "IntTensor",
    "LongTensor",
    "HalfTensor",
    "FloatTensor",
    "DoubleTensor",
    "BoolTensor",
    "BFloat16Tensor",
]
DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", "bfloat16"]


def outcome(fn):
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 - the type and text are compared
        return None, exc


def same_error(fe, ft):
    (_, ee), (_, et) = outcome(fe), outcome(ft)
    assert et is not None, "torch accepted the call"
    assert type(ee) is type(et), f"ember {ee!r} vs torch {et!r}"
    return ee, et


@pytest.mark.parametrize("name", TYPES)
def test_type_class_facts(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert repr(e) == repr(t)
    assert e.__name__ == t.__name__
    assert str(e.dtype) == str(t.dtype)
    assert e.is_cuda == t.is_cuda and e.is_sparse == t.is_sparse
    assert repr(e.layout) == repr(t.layout)
    assert issubclass(e, ember.Tensor) == issubclass(t, torch.Tensor)


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("other", DTYPES)
def test_isinstance(name, other):
    e = ember.zeros(2, dtype=getattr(ember, other))
    t = torch.zeros(2, dtype=getattr(torch, other))
    assert isinstance(e, getattr(ember, name)) == isinstance(t, getattr(torch, name))
    assert e.type() == t.type()


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize(
    "args",
    [(), (2, 3), (0,), ([1, 2],), ([[1, 0], [3, 4]],), ((2, 3),), ([1.7, 2.5],)],
    ids=["empty", "size", "zero", "list", "nested", "tuple-data", "floats"],
)
def test_constructors(name, args):
    e, t = getattr(ember, name)(*args), getattr(torch, name)(*args)
    assert type(e) is ember.Tensor
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    if args and not all(isinstance(a, int) for a in args):
        assert_same(e, t)


def test_constructor_from_size_and_tensor():
    assert tuple(ember.FloatTensor(ember.Size([2, 4])).shape) == tuple(torch.FloatTensor(torch.Size([2, 4])).shape)
    x = ember.ones(3, requires_grad=True)
    y = ember.FloatTensor(x)
    assert y.data_ptr() == x.data_ptr() and y.requires_grad
    ty = torch.FloatTensor(torch.ones(3, requires_grad=True))
    assert ty.requires_grad
    assert_same(ember.LongTensor(2, device="cpu").fill_(3), torch.LongTensor(2, device="cpu").fill_(3))


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.FloatTensor("a"),
        lambda lib: lib.FloatTensor(2.5),
        lambda lib: lib.FloatTensor(-1),
        lambda lib: lib.FloatTensor(2, "a"),
        lambda lib: lib.LongTensor(lib.zeros(2)),
        lambda lib: lib.FloatTensor([1, 2], [3]),
    ],
    ids=["str", "float", "negative", "size-str", "other-dtype", "two-lists"],
)
def test_constructor_errors(make):
    ee, et = same_error(lambda: make(ember), lambda: make(torch))
    if not isinstance(et, TypeError) or "invalid combination" not in str(et):
        assert str(ee) == str(et)


def test_tensor_legacy_constructor():
    assert tuple(ember.Tensor(2, 3).shape) == (2, 3)
    assert_same(ember.Tensor([1, 2]), torch.Tensor([1, 2]))
    assert_same(ember.Tensor(), torch.Tensor())

    class Sub(ember.Tensor):
        pass

    s = Sub([1.0, 2.0])
    assert type(s) is Sub and s.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dname", ["float32", "int32", "float64", "bool"])
def test_new(dname):
    e = ember.zeros(2, dtype=getattr(ember, dname))
    t = torch.zeros(2, dtype=getattr(torch, dname))
    assert_same(e.new([1, 0]), t.new([1, 0]))
    assert str(e.new(3, 2).dtype) == str(t.new(3, 2).dtype) and tuple(e.new(3, 2).shape) == (3, 2)
    assert tuple(e.new().shape) == tuple(t.new().shape)


@pytest.mark.parametrize("target", ["torch.DoubleTensor", "torch.LongTensor", "torch.BoolTensor"])
def test_type_conversion(target):
    e, t = ember.tensor([1.5, -2.0, 0.0]), torch.tensor([1.5, -2.0, 0.0])
    assert_same(e.type(target), t.type(target))
    name = target.split(".")[1]
    assert_same(e.type(getattr(ember, name)), t.type(getattr(torch, name)))


def test_set_default_tensor_type():
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ember.set_default_tensor_type(ember.DoubleTensor)
        assert any("set_default_tensor_type() is deprecated" in str(w.message) for w in caught)
        assert ember.tensor([1.0]).dtype == ember.float64
        assert ember.Storage is ember.DoubleStorage
        ember.set_default_tensor_type("torch.FloatTensor")
        assert ember.tensor([1.0]).dtype == ember.float32
        assert ember.Storage is ember.FloatStorage
        same_error(
            lambda: ember.set_default_tensor_type(ember.LongTensor),
            lambda: torch.set_default_tensor_type(torch.LongTensor),
        )
        same_error(
            lambda: ember.set_default_tensor_type("torch.Foo"), lambda: torch.set_default_tensor_type("torch.Foo")
        )
    finally:
        ember.set_default_dtype(ember.float32)
        ember.Storage = ember.FloatStorage
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("dname", DTYPES)
def test_typed_storage(dname):
    storage_name = TYPES[DTYPES.index(dname)].replace("Tensor", "Storage")
    es, ts = getattr(ember, storage_name), getattr(torch, storage_name)
    assert repr(es) == repr(ts)
    assert str(es.dtype) == str(ts.dtype)
    a, b = es([1, 0, 1]), ts([1, 0, 1])
    assert isinstance(a, ember.TypedStorage) and isinstance(a, es)
    assert a.tolist() == b.tolist() and len(a) == len(b) and a.nbytes() == b.nbytes()
    assert a.type() == b.type() and a.element_size() == b.element_size()
    assert repr(a) == repr(b)
    assert len(es(4)) == len(ts(4))
    e = ember.ones(3, dtype=getattr(ember, dname))
    t = torch.ones(3, dtype=getattr(torch, dname))
    assert repr(e.storage_type()) == repr(t.storage_type())
    se, st = e.storage(), t.storage()
    assert isinstance(se, es) == isinstance(st, ts)
    se[0] = 0
    st[0] = 0
    assert_same(e, t)
    assert se.fill_(1).tolist() == st.fill_(1).tolist()
    assert_same(e, t)


def test_storage_errors_and_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.zeros(2).storage()
    assert any("TypedStorage is deprecated" in str(w.message) for w in caught)
    same_error(lambda: ember.FloatStorage(2)[5], lambda: torch.FloatStorage(2)[5])
    assert isinstance(ember.zeros(2).untyped_storage(), ember.UntypedStorage)


def test_layout():
    assert repr(ember.strided) == repr(torch.strided)
    assert repr(ember.zeros(2).layout) == repr(torch.zeros(2).layout)
    assert isinstance(ember.strided, ember.layout)
