"""DLPack: zero-copy exchange with NumPy and with PyTorch, both capsule forms, errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import torch

import ember
from ember.utils import dlpack

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]


@pytest.mark.parametrize("name", DTYPES)
def test_round_trip_with_torch_shares_memory(name):
    e = ember.arange(12).reshape(3, 4).to(getattr(ember, name))
    t = torch.from_dlpack(e)
    assert str(t.dtype) == str(e.dtype).replace("ember", "torch") and tuple(t.shape) == (3, 4)
    assert t.data_ptr() == e.data_ptr()
    back = ember.from_dlpack(torch.arange(12).reshape(3, 4).to(getattr(torch, name)))
    assert back.dtype == e.dtype and back.tolist() == e.tolist()


def test_strided_views_and_writes_are_shared():
    e = ember.arange(24.0).reshape(4, 6)[1:, ::2].t()
    t = torch.from_dlpack(e)
    assert t.stride() == e.stride() and t.storage_offset() == 0
    assert t.tolist() == e.tolist()
    t[0, 0] = -1.0
    assert e[0, 0].item() == -1.0
    src = torch.arange(10.0)[2:8:2]
    v = ember.from_dlpack(src)
    assert v.stride() == (2,) and v.tolist() == [2.0, 4.0, 6.0]
    src[0] = 42.0
    assert v[0].item() == 42.0


def test_numpy_both_ways():
    e = ember.arange(6.0).reshape(2, 3)
    a = np.from_dlpack(e)
    assert a.ctypes.data == e.data_ptr() and a.tolist() == e.tolist()
    arr = np.arange(6, dtype=np.int32).reshape(3, 2).T
    v = ember.from_dlpack(arr)
    assert v.stride() == (1, 2) and v.tolist() == arr.tolist()
    arr[0, 0] = 7
    assert v[0, 0].item() == 7


def test_capsules():
    e = ember.ones(3)
    assert "dltensor" in repr(ember.to_dlpack(e)) and "versioned" not in repr(ember.to_dlpack(e))
    assert '"dltensor_versioned"' in repr(e.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(e.__dlpack__(max_version=(0, 8)))
    cap = dlpack.to_dlpack(e)
    t = dlpack.from_dlpack(cap)
    assert t.data_ptr() == e.data_ptr()
    assert '"used_dltensor"' in repr(cap)
    with pytest.raises(RuntimeError, match="consumed only once"):
        ember.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="invalid capsule"):
        ember.from_dlpack(5)
    # an unconsumed capsule frees its tensor when it dies
    del cap
    ember.to_dlpack(ember.ones(1000))


def test_copy_and_device():
    e = ember.arange(4.0)
    assert e.__dlpack_device__() == torch.arange(4.0).__dlpack_device__()
    assert e.__dlpack_device__()[0] is dlpack.DLDeviceType.kDLCPU
    copy = ember.from_dlpack(e.__dlpack__(copy=True))
    assert copy.data_ptr() != e.data_ptr() and copy.tolist() == e.tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.ones(2, requires_grad=True).__dlpack__(),
        lambda m: m.ones(2).__dlpack__(stream=1),
        lambda m: m.ones(2).__dlpack__(stream="s"),
    ],
)
def test_export_errors(call):
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(type(te.value)) as ee:
        call(ember)
    assert str(ee.value) == str(te.value)


def test_lifetime_of_imported_memory():
    t = torch.arange(1000.0)
    e = ember.from_dlpack(t)
    del t
    assert e.sum().item() == sum(range(1000))
