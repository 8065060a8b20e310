"""Factories against PyTorch: values (bit for bit), dtype inference, shapes,
out=, requires_grad=, printed form, and errors (type and message)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import to_torch, torch

import ember

ALL = [
    None,
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
]


def exact(e, t):
    assert str(e.dtype) == str(t.dtype), f"dtype {e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    got = to_torch(e)
    assert torch.equal(got, t) or (
        t.is_floating_point()
        and torch.equal(got.isnan(), t.isnan())
        and torch.equal(got.nan_to_num(0), t.nan_to_num(0))
    ), f"{got} != {t}"
    assert e.requires_grad == t.requires_grad


def check(fn):
    """fn(module) gives the same tensor in both, or raises the same exception
    type with the same message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = fn(torch)
        except Exception as err:  # noqa: BLE001
            with pytest.raises(type(err)) as ee:
                fn(ember)
            assert str(ee.value) == str(err)
            return
        e = fn(ember)
    exact(e, t)
    return e, t


def kw(m, dtype):
    return {} if dtype is None else {"dtype": getattr(m, dtype)}


# ---- arange ----------------------------------------------------------------------------------

ARANGE_ARGS = [
    (5,),
    (0,),
    (1, 5),
    (-3, 7, 2),
    (0, 100, 0.1),
    (-3.3, 77.7, 0.37),
    (1.1, 2000.3, 0.7),
    (0.5, 1e4, 1.3),
    (10, -10, -3),
    (0, 1, 1 / 3),
    (0.5, 3),
    (True, 5),
    (0, 5, 0),
    (0, 5, 0.0),
    (0, 1, 0.1),
    (0, 5, 0.4),
    (0.5, -3, 0.4),
    (float("nan"),),
    (0, float("inf")),
    (5, 0),
    (1e20,),
    (0, 70000, 1000),
    (2**62, 2**62 + 3),
    (-5, 5, 2),
    (0, 40000.5, 0.5),
    (0, 100000, 1),
    (0.1, 70000.3, 1.1),
    (0, 5, float("inf")),
    (-300, 5, 100),
    (0, 1e300, 1e298),
]


@pytest.mark.parametrize("args", ARANGE_ARGS)
@pytest.mark.parametrize("dtype", ALL)
def test_arange(args, dtype):
    check(lambda m: m.arange(*args, **kw(m, dtype)))


def test_arange_forms():
    check(lambda m: m.arange(end=5))
    check(lambda m: m.arange(start=1, end=5, step=2))
    check(lambda m: m.arange(m.tensor(3)))
    check(lambda m: m.arange(m.tensor(3.0)))
    check(lambda m: m.arange(0, m.tensor(2.5), 0.5))
    check(lambda m: m.arange(5, out=m.zeros(2)))
    check(lambda m: m.arange(0, 3, out=m.ones(3, dtype=m.int32)))
    check(lambda m: m.arange(4, out=m.zeros(4), dtype=m.float64))
    check(lambda m: m.arange(5, requires_grad=True))
    check(lambda m: m.arange(5.0, requires_grad=True))
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        check(lambda m: m.arange(0, 1, 0.1))
        check(lambda m: m.arange(5))
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("threads", [1, 2])
def test_arange_thread_chunks(threads):
    # Large ranges are split per thread; each chunk restarts PyTorch's vector loop.
    old_e, old_t = ember.get_num_threads(), torch.get_num_threads()
    ember.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        check(lambda m: m.arange(0.1, 70000.3, 1.1))
        check(lambda m: m.arange(0, 100001 * 0.3, 0.3, dtype=m.float64))
        check(lambda m: m.linspace(-3.3, 77.7, 70001))
    finally:
        ember.set_num_threads(old_e)
        torch.set_num_threads(old_t)


# ---- linspace, logspace -------------------------------------------------------------------------

SPACE_ARGS = [
    (0, 1, 1000),
    (-1, 1, 37),
    (-3.3, 77.7, 219),
    (1.1, 2000.3, 2857),
    (0.5, 1e4, 7693),
    (0, 10, 0),
    (3, 7, 1),
    (5, 2, 4),
    (0, 1, -1),
    (-10, 10, 7),
    (0, 255, 100),
    (2.5, 2.5, 5),
    (300, 5, 1),
    (10, -10, 13),
]


@pytest.mark.parametrize("args", SPACE_ARGS)
@pytest.mark.parametrize("dtype", ALL)
def test_linspace(args, dtype):
    check(lambda m: m.linspace(*args, **kw(m, dtype)))


@pytest.mark.parametrize("args", [a for a in SPACE_ARGS if abs(a[0]) < 50 and abs(a[1]) < 50])
@pytest.mark.parametrize("base", [10.0, 2.0, 2.5, 0.1])
@pytest.mark.parametrize("dtype", ALL)
def test_logspace(args, base, dtype):
    check(lambda m: m.logspace(*args, base=base, **kw(m, dtype)))


def test_space_forms():
    check(lambda m: m.linspace(m.tensor(1.0), 3, 3))
    check(lambda m: m.linspace(start=0, end=1, steps=5))
    check(lambda m: m.linspace(0, 1, 5, out=m.zeros(5, dtype=m.float64)))
    check(lambda m: m.linspace(0, 1, 5, out=m.zeros(2)))
    check(lambda m: m.logspace(0, 2, 3, out=m.zeros(1)))
    check(lambda m: m.linspace(0, 1, 5, requires_grad=True))
    check(lambda m: m.logspace(-3, 5, 3, dtype=m.uint8))


# ---- eye, full, zeros, ones, empty ------------------------------------------------------------------


@pytest.mark.parametrize(
    "nm", [(0, None), (1, None), (3, None), (2, 5), (5, 2), (-1, None), (3, -2), (4, 0)]
)
@pytest.mark.parametrize("dtype", ALL)
def test_eye(nm, dtype):
    n, mm = nm
    check(lambda m: m.eye(n, **kw(m, dtype)) if mm is None else m.eye(n, mm, **kw(m, dtype)))


def test_eye_out():
    check(lambda m: m.eye(3, out=m.ones(1)))
    check(lambda m: m.eye(2, 3, out=m.ones(6, dtype=m.int64)))


@pytest.mark.parametrize("fill", [True, False, 3, -1, 2.5, 0.1, float("inf")])
@pytest.mark.parametrize("dtype", ALL)
def test_full_and_full_like(fill, dtype):
    check(lambda m: m.full((2, 3), fill, **kw(m, dtype)))
    check(lambda m: m.full_like(m.zeros(2, 3, dtype=m.int32), fill, **kw(m, dtype)))
    check(lambda m: m.scalar_tensor(fill, **kw(m, dtype)))


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4)])
@pytest.mark.parametrize("dtype", ALL)
def test_zeros_ones_empty(name, shape, dtype):
    def make(m, *args, **kwargs):
        r = getattr(m, name)(*args, **kw(m, dtype), **kwargs)
        return r.zero_() if name == "empty" else r

    if shape:
        check(lambda m: make(m, *shape))
    check(lambda m: make(m, shape))
    check(lambda m: make(m, list(shape)))
    check(lambda m: make(m, m.Size(shape)))
    check(lambda m: make(m, size=shape))


@pytest.mark.parametrize("name", ["zeros", "ones", "full", "empty"])
def test_plain_factory_out_and_errors(name):
    args = ((2, 3), 7) if name == "full" else ((2, 3),)

    def call(m, *a, **k):
        r = getattr(m, name)(*a, **k)
        return r.zero_() if name == "empty" else r

    check(lambda m: call(m, *args, out=m.empty(5)))
    check(lambda m: call(m, *args, out=m.empty(5, dtype=m.int32)))
    check(lambda m: call(m, *args, out=m.empty(5), dtype=m.float64))
    bad = ((2, -3), 1.0) if name == "full" else ((2, -3),)
    check(lambda m: call(m, *bad))
    check(lambda m: call(m, *args, dtype=m.float64, requires_grad=True))
    check(lambda m: call(m, *args, dtype=m.int64, requires_grad=True))


@pytest.mark.parametrize(
    "name", ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]
)
@pytest.mark.parametrize("dtype", [None, "float64", "float16", "int32"])
def test_like_dtype_and_requires_grad(name, dtype):
    def call(m, **k):
        r = getattr(m, name)(m.ones(2, 3), **kw(m, dtype), **k)
        with warnings.catch_warnings():
            return r.zero_() if name in ("empty_like", "rand_like", "randn_like") else r

    check(lambda m: call(m))
    check(lambda m: call(m, requires_grad=True))


def test_requires_grad_leaves():
    for make in [
        lambda m: m.zeros(2, requires_grad=True),
        lambda m: m.full((2,), 1.5, requires_grad=True),
        lambda m: m.arange(3.0, requires_grad=True),
        lambda m: m.eye(2, requires_grad=True),
        lambda m: m.rand(2, requires_grad=True),
        lambda m: m.tensor([1.0], requires_grad=True),
    ]:
        e = make(ember)
        assert e.requires_grad and e.is_leaf and e.grad_fn is None


# ---- tensor(), as_tensor() ----------------------------------------------------------------------------

TENSOR_CASES = {
    "mixed bool int": lambda m: m.tensor([True, 1]),
    "mixed int float": lambda m: m.tensor([1, 2.5]),
    "mixed bool float": lambda m: m.tensor([True, 2.5]),
    "bools": lambda m: m.tensor([True, False]),
    "empty": lambda m: m.tensor([]),
    "empty nested": lambda m: m.tensor([[], []]),
    "empty nested deep": lambda m: m.tensor([[[]]]),
    "scalar int": lambda m: m.tensor(3),
    "scalar float": lambda m: m.tensor(3.5),
    "scalar bool": lambda m: m.tensor(True),
    "0-dim tensors": lambda m: m.tensor([m.tensor(1.0), m.tensor(2.0)]),
    "0-dim int32 tensors": lambda m: m.tensor(
        [m.tensor(1, dtype=m.int32), m.tensor(2, dtype=m.int32)]
    ),
    "int32 tensor and int": lambda m: m.tensor([m.tensor(1, dtype=m.int32), 2]),
    "float64 tensor and float": lambda m: m.tensor([m.tensor(1, dtype=m.float64), 2.5]),
    "int32 tensor and float": lambda m: m.tensor([m.tensor(1, dtype=m.int32), 2.5]),
    "float16 tensor and int": lambda m: m.tensor([m.tensor(1, dtype=m.float16), 2]),
    "1-d int tensors": lambda m: m.tensor([m.tensor([1, 2]), m.tensor([3, 4])]),
    "1-d float tensors": lambda m: m.tensor([m.tensor([1.0, 2]), m.tensor([3.0, 4])]),
    "list then tensor": lambda m: m.tensor([[1, 2], m.tensor([3, 4])]),
    "list then float16 tensor": lambda m: m.tensor([[1, 2], m.tensor([3.1, 4], dtype=m.float16)]),
    "ragged": lambda m: m.tensor([[1, 2], [3]]),
    "ragged scalar": lambda m: m.tensor([[1, 2], 3]),
    "ragged list": lambda m: m.tensor([1, [2, 3]]),
    "str": lambda m: m.tensor("abc"),
    "list of str": lambda m: m.tensor(["a"]),
    "None": lambda m: m.tensor(None),
    "list of None": lambda m: m.tensor([None]),
    "object": lambda m: m.tensor(object()),
    "overflow": lambda m: m.tensor([1, 2**70]),
    "overflow 2**63": lambda m: m.tensor([2**63]),
    "floats to int32": lambda m: m.tensor([3.7, -3.7], dtype=m.int32),
    "300 to uint8": lambda m: m.tensor(300, dtype=m.uint8),
    "-1 to uint8": lambda m: m.tensor([-1], dtype=m.uint8),
    "-255 to uint8": lambda m: m.tensor([-255], dtype=m.uint8),
    "-256 to uint8": lambda m: m.tensor([-256], dtype=m.uint8),
    "128 to int8": lambda m: m.tensor([128], dtype=m.int8),
    "nan to int": lambda m: m.tensor([float("nan")], dtype=m.int64),
    "inf to int": lambda m: m.tensor([float("inf")], dtype=m.int32),
    "ints to bool": lambda m: m.tensor([2, 0], dtype=m.bool),
    "floats to bool": lambda m: m.tensor([0.5, 0.0], dtype=m.bool),
    "1e10 to float16": lambda m: m.tensor([1e10], dtype=m.float16),
    "2**1100 to float32": lambda m: m.tensor([2**1100], dtype=m.float32),
    "1e300 to float32": lambda m: m.tensor([1e300], dtype=m.float32),
    "2.5 to uint8": lambda m: m.tensor([2.5], dtype=m.uint8),
    "-2.5 to uint8": lambda m: m.tensor([-2.5], dtype=m.uint8),
    "255.9 to uint8": lambda m: m.tensor([255.9], dtype=m.uint8),
    "tuple": lambda m: m.tensor((1, 2)),
    "range": lambda m: m.tensor(range(3)),
    "tuples and lists": lambda m: m.tensor(([1, 2], (3, 4))),
    "float16 list": lambda m: m.tensor([1.1, 2.2], dtype=m.float16),
    "bfloat16 list": lambda m: m.tensor([1.1, 2.2], dtype=m.bfloat16),
    "bools to int8": lambda m: m.tensor([True, False], dtype=m.int8),
    "deep": lambda m: m.tensor([[[1]]] * 2),
    "dtype=float": lambda m: m.tensor([1, 2], dtype=float),
    "dtype=int": lambda m: m.tensor([1.5, 2], dtype=int),
    "dtype=bool": lambda m: m.tensor([1.5, 0], dtype=bool),
    "generator": lambda m: m.tensor(x for x in range(3)),
    "dict": lambda m: m.tensor({1: 2}),
    "set": lambda m: m.tensor({1, 2}),
    "negative zero": lambda m: m.tensor([-0.0]),
    "requires_grad": lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    "int requires_grad": lambda m: m.tensor([1, 2], requires_grad=True),
    "copy of a tensor": lambda m: m.tensor(m.ones(2, requires_grad=True)),
    "copy with dtype": lambda m: m.tensor(m.ones(2), dtype=m.int32),
    "numpy float64": lambda m: m.tensor(np.array([1.5, 2.5])),
    "numpy float32": lambda m: m.tensor(np.array([1.5, 2.5], dtype=np.float32)),
    "numpy int32": lambda m: m.tensor(np.array([1, 2], dtype=np.int32)),
    "numpy bool": lambda m: m.tensor(np.array([True, False])),
    "numpy float16 2-d": lambda m: m.tensor(np.arange(6, dtype=np.float16).reshape(2, 3)),
    "numpy uint8": lambda m: m.tensor(np.array([250, 3], dtype=np.uint8)),
    "numpy int8": lambda m: m.tensor(np.array([-5, 3], dtype=np.int8)),
    "numpy 0-dim": lambda m: m.tensor(np.array(2.5)),
    "numpy scalar float64": lambda m: m.tensor(np.float64(2.5)),
    "numpy scalar float32": lambda m: m.tensor(np.float32(2.5)),
    "numpy scalar int32": lambda m: m.tensor(np.int32(2)),
    "numpy scalars": lambda m: m.tensor([np.float32(1), np.float32(2)]),
    "numpy scalar and float": lambda m: m.tensor([np.float64(1), 2.0]),
    "numpy float32 into int": lambda m: m.tensor([np.float32(1.5)], dtype=m.int32),
    "numpy arrays in a list": lambda m: m.tensor([np.array([1.0, 2.0]), np.array([3.0, 4.0])]),
    "numpy transposed": lambda m: m.tensor(np.arange(6.0).reshape(2, 3).T),
    "numpy to float32": lambda m: m.tensor(np.array([1.1]), dtype=m.float32),
    "numpy big-endian": lambda m: m.tensor(np.array([1.5, 2], dtype=">f8")),
    "numpy empty": lambda m: m.tensor(np.zeros((0, 3))),
    "as_tensor dtype": lambda m: m.as_tensor(m.ones(2), dtype=m.float64),
    "as_tensor list": lambda m: m.as_tensor([1, 2]),
    "as_tensor numpy": lambda m: m.as_tensor(np.array([1, 2], dtype=np.int16)),
    "as_tensor scalar": lambda m: m.as_tensor(3.5),
    "big nested list": lambda m: m.tensor([[i * 0.5 for i in range(300)] for _ in range(30)]),
}


@pytest.mark.parametrize("name", list(TENSOR_CASES))
def test_tensor_from_data(name):
    check(TENSOR_CASES[name])


def test_tensor_default_dtype():
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        check(lambda m: m.tensor([1.5, 2]))
        check(lambda m: m.tensor([]))
        check(lambda m: m.scalar_tensor(2))
        check(lambda m: m.full((2,), 1.5))
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


def test_tensor_copy_warning_and_as_tensor_identity():
    x = ember.ones(2)
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        y = ember.tensor(x)
    assert y is not x
    assert ember.as_tensor(x) is x
    assert ember.as_tensor(x, dtype=ember.float32) is x
    assert ember.as_tensor(x, dtype=ember.float64) is not x
    a = np.array([1.0, 2.0])
    t = ember.tensor(a)
    a[0] = 5.0  # a copy: later changes to the array do not show
    assert t.tolist() == [1.0, 2.0]


def test_numpy_unsupported_dtype():
    # uint16/32/64 arrays convert, as in PyTorch (decision 0029); object arrays do not.
    assert str(ember.tensor(np.array([1], dtype=np.uint16)).dtype) == "torch.uint16"
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.object_"):
        ember.tensor(np.array([1, "a"], dtype=object))


# ---- printed form -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.arange(5),
        lambda m: m.arange(0, 1, 0.125),
        lambda m: m.arange(2000),
        lambda m: m.linspace(-1, 1, 7, dtype=m.float64),
        lambda m: m.logspace(-5, 5, 3),
        lambda m: m.eye(3, dtype=m.int32),
        lambda m: m.full((2, 2), True),
        lambda m: m.zeros(2, 0),
        lambda m: m.ones(3, dtype=m.float16),
        lambda m: m.tensor([[1, 2], [3, 4]], dtype=m.int8),
        lambda m: m.scalar_tensor(3),
        lambda m: m.tensor([1.0, 2.0], requires_grad=True),
        lambda m: (m.manual_seed(0), m.rand(2, 3))[1],
        lambda m: (m.manual_seed(0), m.randn(4, dtype=m.float64))[1],
        lambda m: (m.manual_seed(0), m.randint(0, 10, (6,)))[1],
        lambda m: (m.manual_seed(0), m.randperm(8, dtype=m.int16))[1],
    ],
)
def test_repr(make):
    assert repr(make(ember)) == repr(make(torch))


FACTORY_KEYWORD_CALLS = [
    "zeros(2, layout=L.strided)", "zeros(2, pin_memory=False)", "zeros(2, pin_memory=True)", "zeros(2, pin_memory=1)",
    "ones(2, 3, layout=L.strided, pin_memory=False)", "empty(2, pin_memory=False)", "full((2,), 1., layout=L.strided)",
    "arange(3, layout=L.strided)", "randn(2, layout=L.strided)", "randint(3, (2,), layout=L.strided)",
    "eye(2, layout=L.strided)", "linspace(0, 1, 3, layout=L.strided)", "zeros_like(L.ones(2), layout=L.strided)",
    "zeros_like(L.ones(2), pin_memory=False)", "empty_strided((2,), (1,), pin_memory=False)", "zeros(2, layout=3)",
    "ones(2).new_ones((2,), pin_memory=-3)", "ones(2).new_ones((2,), pin_memory=True)",
    "ones(2).new_zeros(2, layout=L.strided)", "ones(2).new_full((2,), 3., pin_memory=False)",
]  # fmt: skip


@pytest.mark.parametrize("call", FACTORY_KEYWORD_CALLS)
def test_layout_and_pin_memory_keywords_as_torch(call):
    """PyTorch's factory keywords: the strided layout is accepted, pin_memory=True
    is refused without an accelerator, and the types are checked."""
    outcomes = []
    for lib in (torch, ember):
        try:
            t = eval("L." + call, {"L": lib})  # noqa: S307 - the calls above
            outcomes.append(("ok", tuple(t.shape), str(t.dtype).split(".")[-1]))
        except Exception as e:  # noqa: BLE001 - the exception type is compared
            outcomes.append((type(e).__name__, str(e).split(":")[0] if type(e) is RuntimeError else ""))
    assert outcomes[1] == outcomes[0]
