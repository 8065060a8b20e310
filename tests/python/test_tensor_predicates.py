"""Tensor predicates and comparisons written in C++ (is_signed, is_complex, get_device, equal) and the
native isreal/positive/count_nonzero: answers and errors as PyTorch's."""

import pytest
import torch

import ember

_DTYPES = [
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "complex64", "complex128", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
    "uint1", "uint4", "int2", "int7", "bits8", "bits16", "float4_e2m1fn_x2",
]  # fmt: skip


def _outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_is_signed_and_is_complex_of_every_dtype(dtype):
    got = [
        (
            _outcome(lambda: m.empty(2, dtype=getattr(m, dtype)).is_signed()),
            m.empty(1, dtype=getattr(m, dtype)).is_complex(),
        )
        for m in (ember, torch)
    ]
    assert got[0] == got[1]


def test_get_device():
    for m in (ember, torch):
        assert m.ones(2).get_device() == -1
        assert m.ones(2, device="meta").get_device() == -1


_EQUAL_CALLS = [
    lambda m: m.equal(m.ones(2), m.ones(2, dtype=m.int64)),
    lambda m: m.equal(m.ones(2), m.ones(3)),
    lambda m: m.equal(m.ones(2, 1), m.ones(2)),
    lambda m: m.equal(m.tensor([float("nan")]), m.tensor([float("nan")])),
    lambda m: m.equal(m.tensor([0.0]), m.tensor([-0.0])),
    lambda m: m.equal(m.ones(2, 3).t(), m.ones(3, 2)),
    lambda m: m.equal(m.ones(0), m.ones(0)),
    lambda m: m.equal(m.ones(2), 3),
    lambda m: m.equal(3, m.ones(2)),
    lambda m: m.equal(m.ones(2), other=m.ones(2)),
    lambda m: m.ones(2).equal(3),
    lambda m: m.ones(2).equal(),
    lambda m: m.ones(2).equal(m.ones(2), m.ones(2)),
    lambda m: m.ones(2).equal(other=m.ones(2)),
    lambda m: m.ones(2).equal(x=m.ones(2)),
    lambda m: m.ones(2).equal(m.ones(2), other=m.ones(2)),
    lambda m: m.ones(2).equal(m.ones(2), x=1),
]


@pytest.mark.parametrize("call", range(len(_EQUAL_CALLS)))
def test_equal(call):
    assert _outcome(lambda: _EQUAL_CALLS[call](ember)) == _outcome(lambda: _EQUAL_CALLS[call](torch))


_NATIVE_CALLS = [
    lambda m: m.positive(m.tensor([True])),
    lambda m: m.isreal(3),
    lambda m: m.count_nonzero(m.ones(2), dim=(0, 0)),
    lambda m: m.count_nonzero(m.ones(3, 2).to(m.uint16)),
    lambda m: m.count_nonzero(m.ones(3, 2).to(m.uint16), 0).tolist(),
    lambda m: m.count_nonzero(m.tensor([[0.0, float("nan")], [-0.0, 2.0]])).item(),
    lambda m: m.ones(2, 3).t().isreal().stride(),
    lambda m: m.tensor([1 + 0j, 2j, -0.0j]).isreal().tolist(),
    lambda m: m.ones(2).type_as(3),
]


@pytest.mark.parametrize("call", range(len(_NATIVE_CALLS)))
def test_native_predicates(call):
    assert _outcome(lambda: _NATIVE_CALLS[call](ember)) == _outcome(lambda: _NATIVE_CALLS[call](torch))


def test_backend_predicates_and_build_facts_as_pytorch_cpu():
    names = ["is_mps", "is_xpu", "is_xla", "is_ipu", "is_maia", "is_mtia", "is_mkldnn", "is_nested", "is_quantized",
             "is_vulkan"]  # fmt: skip
    for lib in (ember, torch):
        x = lib.ones(2)
        assert [getattr(x, n) for n in names] == [False] * len(names)
        assert lib.nn.Parameter(x).is_quantized is False
    assert ember.compiled_with_cxx11_abi() is torch.compiled_with_cxx11_abi()
    assert ember.is_vulkan_available() is torch.is_vulkan_available()
    assert ember.cudnn_is_acceptable(ember.ones(2)) is torch.cudnn_is_acceptable(torch.ones(2))
