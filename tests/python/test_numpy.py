"""NumPy interop: from_numpy / Tensor.numpy share memory; tensor() copies;
as_tensor shares when it can. PyTorch is the oracle for dtypes, strides and
error messages."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref

import numpy as np
import pytest
from conftest import torch

import ember

NP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _array(dtype_name, shape=(3, 4)):
    n = int(np.prod(shape))
    if dtype_name == "bool":
        return (np.arange(n) % 3 == 0).reshape(shape)
    return (np.arange(n) % 7).astype(dtype_name).reshape(shape)


def _views(a):
    """Contiguous and non-contiguous views of a 2-D array."""
    return {
        "contiguous": a,
        "transposed": a.T,
        "column_slice": a[:, 1:3],
        "step": a[::2, ::3],
        "row": a[1],
        "zero_dim": a[1, 2, ...],
        "empty": a[:0],
    }


@pytest.mark.parametrize("dtype_name", NP_DTYPES)
def test_from_numpy_dtypes_strides_and_values(dtype_name):
    for label, v in _views(_array(dtype_name)).items():
        e = ember.from_numpy(v)
        t = torch.from_numpy(v)
        assert str(e.dtype) == str(t.dtype), label
        assert tuple(e.shape) == tuple(t.shape), label
        if t.numel():
            assert e.stride() == t.stride(), label
        assert e.storage_offset() == t.storage_offset() == 0, label
        assert e.tolist() == t.tolist(), label
        assert e.untyped_storage().nbytes() == t.untyped_storage().nbytes(), label
        if v.size:
            assert e.data_ptr() == v.__array_interface__["data"][0], label


@pytest.mark.parametrize("dtype_name", NP_DTYPES)
def test_from_numpy_shares_memory_both_ways(dtype_name):
    a = _array(dtype_name, (4, 6))
    v = a[1:, ::2]  # non-contiguous view
    e = ember.from_numpy(v)
    one = True if dtype_name == "bool" else 5
    v[0, 1] = one
    assert e.tolist()[0][1] == one
    e.fill_(0 if dtype_name != "bool" else False)
    assert not v.any()
    assert (
        a[0].any() or dtype_name == "bool" or not a[0].any()
    )  # rows outside the view are untouched
    assert (a[1:, 1::2] == _array(dtype_name, (4, 6))[1:, 1::2]).all()


def test_from_numpy_keeps_the_array_alive_and_releases_it():
    a = np.arange(6, dtype=np.float32)
    before = sys.getrefcount(a)
    e = ember.from_numpy(a)
    assert sys.getrefcount(a) == before + 1
    del e
    gc.collect()
    assert sys.getrefcount(a) == before

    class Arr(np.ndarray):
        pass

    b = np.arange(4.0).view(Arr)
    ref = weakref.ref(b)
    e = ember.from_numpy(b)
    del b
    gc.collect()
    assert ref() is not None  # the tensor holds it
    assert e.tolist() == [0.0, 1.0, 2.0, 3.0]
    del e
    gc.collect()
    assert ref() is None


def test_numpy_keeps_the_tensor_memory_alive():
    e = ember.ones(1000) if hasattr(ember, "ones") else ember.tensor([1.0] * 1000)
    n = e.numpy()
    del e
    gc.collect()
    junk = [ember.zeros(1000) for _ in range(10)]  # would reuse freed memory
    assert n.sum() == 1000.0
    del junk


def _raises_like(fn_e, fn_t, exc=None, same_message=True):
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(Exception) as ee:
        fn_e()
    assert type(ee.value) is type(te.value)
    if exc is not None:
        assert type(ee.value) is exc
    if same_message:
        assert str(ee.value) == str(te.value)
    return ee.value, te.value


def test_from_numpy_errors_match_torch():
    _raises_like(lambda: ember.from_numpy([1, 2]), lambda: torch.from_numpy([1, 2]), TypeError)
    _raises_like(
        lambda: ember.from_numpy(np.float32(3)), lambda: torch.from_numpy(np.float32(3)), TypeError
    )
    neg = np.arange(6)[::-1]
    _raises_like(lambda: ember.from_numpy(neg), lambda: torch.from_numpy(neg), ValueError)
    swapped = np.zeros(3, dtype=">f4")
    _raises_like(lambda: ember.from_numpy(swapped), lambda: torch.from_numpy(swapped), ValueError)
    odd = np.lib.stride_tricks.as_strided(np.zeros(8, dtype=np.int16), (2,), (3,))
    _raises_like(lambda: ember.from_numpy(odd), lambda: torch.from_numpy(odd), ValueError)
    for bad in [np.zeros(2, dtype=object), np.array(["a"]), np.zeros(2, dtype=np.longdouble)]:
        ee, te = _raises_like(
            lambda: ember.from_numpy(bad), lambda: torch.from_numpy(bad), TypeError, False
        )
        # the same text, the list of supported types included
        assert str(ee) == str(te)


@pytest.mark.parametrize("dtype_name", ["uint16", "uint32", "uint64"])
def test_from_numpy_wide_unsigned_shares_memory(dtype_name):
    # uint16/32/64 arrays become tensors of the same dtype over the same memory, as in PyTorch
    a = np.arange(4, dtype=dtype_name)
    e, t = ember.from_numpy(a), torch.from_numpy(a.copy())
    assert str(e.dtype) == str(t.dtype) and e.tolist() == t.tolist()
    a[0] = 7
    assert e.tolist()[0] == 7
    assert e.numpy().dtype == t.numpy().dtype


def test_from_numpy_readonly_warns_once():
    code = (
        "import warnings, numpy as np, ember\n"
        "a = np.zeros(3); a.flags.writeable = False\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    ember.from_numpy(a); ember.from_numpy(a)\n"
        "print(len(w), w[0].category.__name__, 'not writable' in str(w[0].message))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["1", "UserWarning", "True"]


@pytest.mark.parametrize("dtype_name", NP_DTYPES)
def test_numpy_dtypes_strides_and_sharing(dtype_name):
    a = _array(dtype_name, (4, 6))
    te = torch.from_numpy(a.copy())
    ee = ember.from_numpy(a.copy())
    for e, t in [
        (ee, te),
        (ee.permute(1, 0), te.permute(1, 0)),
        (ee.narrow(1, 2, 3), te.narrow(1, 2, 3)),
    ]:
        ne, nt = e.numpy(), t.numpy()
        assert ne.dtype == nt.dtype and ne.dtype.char == nt.dtype.char
        assert ne.shape == nt.shape and ne.strides == nt.strides
        assert (ne == nt).all()
        assert ne.flags.writeable
        ne[0, 0] = nt[0, 0] = 1
        assert e.tolist()[0][0] == 1
        e.fill_(0)
        t.fill_(0)
        assert not ne.any()
        assert np.asarray(e).__array_interface__["data"][0] == e.data_ptr()


def test_numpy_zero_dim_and_empty():
    for e, t in [(ember.tensor(3.5), torch.tensor(3.5)), (ember.tensor(True), torch.tensor(True))]:
        assert e.numpy().shape == () and e.numpy().dtype == t.numpy().dtype
        assert e.numpy() == t.numpy()
    e = ember.zeros(2, 0, 3)
    assert e.numpy().shape == (2, 0, 3) and e.numpy().dtype == np.float32


def test_numpy_errors_match_torch():
    e = ember.ones(3).requires_grad_()
    t = torch.ones(3).requires_grad_()
    _raises_like(lambda: e.numpy(), lambda: t.numpy(), RuntimeError)
    _raises_like(lambda: np.asarray(e), lambda: np.asarray(t), RuntimeError)
    assert (e.numpy(force=True) == t.numpy(force=True)).all()
    eb = ember.ones(3, dtype=ember.bfloat16)
    tb = torch.ones(3, dtype=torch.bfloat16)
    _raises_like(lambda: eb.numpy(), lambda: tb.numpy(), TypeError)
    _raises_like(lambda: eb.numpy(force=True), lambda: tb.numpy(force=True), TypeError)
    _raises_like(lambda: np.asarray(eb), lambda: np.asarray(tb), TypeError)
    with pytest.raises(TypeError):
        ember.ones(2).numpy(True)


def test_force_numpy_shares_with_detached_tensor():
    e = ember.zeros(3).requires_grad_()
    n = e.numpy(force=True)
    n[1] = 7
    assert e.tolist() == [0.0, 7.0, 0.0]


def test_array_protocol():
    e = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(e)
    a[0, 0] = 9
    assert e.tolist()[0][0] == 9.0
    assert np.array(e, dtype=np.float64).dtype == np.float64
    c = np.array(e)  # copies
    c[0, 0] = -1
    assert e.tolist()[0][0] == 9.0
    r = np.sin(ember.tensor([0.0, 1.0]))
    rt = np.sin(torch.tensor([0.0, 1.0]))
    assert type(r) is ember.Tensor and type(rt) is torch.Tensor
    assert str(r.dtype) == str(rt.dtype) and r.tolist() == rt.tolist()
    g = np.greater(ember.tensor([0.0, 2.0]), 1)
    gt = np.greater(torch.tensor([0.0, 2.0]), 1)
    assert str(g.dtype) == str(gt.dtype) and g.tolist() == gt.tolist()


@pytest.mark.parametrize("dtype_name", NP_DTYPES)
def test_tensor_from_ndarray_copies(dtype_name):
    a = _array(dtype_name, (3, 4))
    for label, v in _views(a).items():
        e = ember.tensor(v)
        t = torch.tensor(v)
        assert str(e.dtype) == str(t.dtype), label
        assert e.tolist() == t.tolist(), label
        if t.numel():
            assert e.stride() == t.stride(), label
    e = ember.tensor(a)
    a.fill(0)
    assert e.tolist() == _array(dtype_name, (3, 4)).tolist()
    neg = _array(dtype_name, (3, 4))[::-1, ::-2]
    _raises_like(lambda: ember.tensor(neg), lambda: torch.tensor(neg), ValueError)
    assert ember.tensor([neg]).tolist() == torch.tensor([neg]).tolist()
    assert ember.tensor(a, dtype=ember.float64).dtype == ember.float64


def test_tensor_infers_numpy_scalar_dtypes_like_torch():
    cases = [
        np.float32(1.5),
        np.int16(3),
        np.bool_(True),
        np.float64(2.0),
        [np.float32(1.5), np.float32(2)],
        [np.float64(1.5), 2],
        [np.int32(1), np.int32(2)],
        [np.int32(1), 5],
        [np.float16(1), 5],
        [np.float16(1), 5.0],
        [np.uint8(1), np.int8(2)],
        [True, np.int8(3)],
        [np.bool_(True)],
        [np.array([1.0, 2.0]), np.array([2.0, 3.0])],
    ]
    import warnings

    for c in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = torch.tensor(c)
        e = ember.tensor(c)
        assert str(e.dtype) == str(t.dtype), c
        assert e.tolist() == t.tolist(), c


def test_as_tensor():
    a = np.ones(3, dtype=np.float32)
    e = ember.as_tensor(a)
    a[0] = 5
    assert e.tolist() == [5.0, 1.0, 1.0]
    e64 = ember.as_tensor(a, dtype=ember.float64)  # a conversion copies
    a[1] = 7
    assert e64.tolist() == [5.0, 1.0, 1.0] and e64.dtype == ember.float64
    t = ember.ones(3)
    assert ember.as_tensor(t) is t
    assert ember.as_tensor(t, dtype=ember.float32) is t
    assert ember.as_tensor(t, dtype=ember.float64).dtype == ember.float64
    assert ember.as_tensor([1, 2]).dtype == ember.int64
    assert ember.as_tensor(np.float32(2)).dtype == ember.float32
    neg = np.arange(4)[::-1]
    _raises_like(lambda: ember.as_tensor(neg), lambda: torch.as_tensor(neg), ValueError)


def test_untyped_storage_and_share_memory():
    a = np.arange(10.0)
    e = ember.from_numpy(a[2:5])
    t = torch.from_numpy(a[2:5])
    assert e.untyped_storage().nbytes() == t.untyped_storage().nbytes() == 24
    x = ember.tensor([1.0, 2.0, 3.0, 4.0])
    v = x.narrow(0, 1, 2)
    assert x.untyped_storage().data_ptr() == v.untyped_storage().data_ptr()
    assert not x.is_shared()
    x.share_memory_()
    assert x.is_shared() and v.is_shared()
    assert x.untyped_storage().data_ptr() == v.untyped_storage().data_ptr()
    v.fill_(0)
    assert x.tolist() == [1.0, 0.0, 0.0, 4.0]
