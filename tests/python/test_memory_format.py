"""Memory formats against PyTorch: the layout (strides) an operation gives its
result, the memory_format arguments of clone/contiguous/to/*_like/empty,
Tensor.to's three signatures, and their errors. Each case runs the same call
in both libraries on the CPU and on meta."""

from __future__ import annotations

import pickle

import pytest
from conftest import torch

import ember


def describe(x):
    """Shape, dtype and strides of a tensor; anything else as it is."""
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return ("tensor", tuple(x.shape), str(x.dtype).split(".")[1], tuple(x.stride()))
    if isinstance(x, (list, tuple)):
        return tuple(describe(v) for v in x)
    return x


def outcome(fn, lib, device):
    try:
        return describe(fn(lib, device))
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return (type(e).__name__, str(e).replace("torch.", "T.").replace("ember.", "T."))


def t34(m, d):
    return m.arange(12.0, device=d).reshape(3, 4)


def n4(m, d):
    return m.arange(120.0, device=d).reshape(2, 3, 4, 5)


def perm3(m, d):
    return m.arange(24.0, device=d).reshape(2, 3, 4).permute(2, 0, 1)


def cl(m, d):
    return n4(m, d).contiguous(memory_format=m.channels_last)


def size1(m, d):
    # (2, 3, 1, 1) with strides (15, 1, 3, 3): neither contiguous nor dense.
    return m.arange(30.0, device=d).reshape(2, 5, 1, 3)[:, :1].permute(0, 3, 1, 2)


def expanded(m, d):
    return m.arange(12.0, device=d).reshape(4, 1, 3).expand(4, 5, 3)


CASES = {
    # elementwise results: PyTorch's TensorIterator layout rules
    "add_scalar_transposed": lambda m, d: t34(m, d).t() + 1,
    "unary_transposed": lambda m, d: t34(m, d).t().exp(),
    "unary_sliced": lambda m, d: t34(m, d)[:, ::2].exp(),
    "unary_transposed_sliced": lambda m, d: t34(m, d).t()[::2].exp(),
    "size1_row": lambda m, d: m.arange(3.0, device=d).reshape(3, 1).t() + 1,
    "permuted_times_2": lambda m, d: perm3(m, d) * 2,
    "permuted_first": lambda m, d: perm3(m, d) + m.zeros(4, 2, 3, device=d),
    "contiguous_first": lambda m, d: m.zeros(4, 2, 3, device=d) + perm3(m, d),
    "expanded": lambda m, d: expanded(m, d) + 1,
    "expanded_transposed": lambda m, d: expanded(m, d).transpose(0, 2) + 1,
    "empty_transposed": lambda m, d: m.zeros(0, 3, device=d).t() + 1,
    "empty_permuted": lambda m, d: m.zeros(2, 0, 3, device=d).permute(2, 1, 0) + 1,
    "size1_dims_sum": lambda m, d: size1(m, d) + size1(m, d),
    "size1_dims_scalar": lambda m, d: size1(m, d) + 1,
    "size1_dims_unary": lambda m, d: size1(m, d).exp(),
    "int_promoted": lambda m, d: m.arange(12, device=d).reshape(3, 4).t() + 1.5,
    "int_promoted_sliced": lambda m, d: m.arange(12, device=d).reshape(3, 4).t()[::2] + 1.5,
    "comparison": lambda m, d: t34(m, d).t() > 2,
    "where": lambda m, d: m.where(t34(m, d).t() > 3, t34(m, d).t(), 0.0),
    "clamp": lambda m, d: m.clamp(t34(m, d).t(), 1, 3),
    "lerp": lambda m, d: m.lerp(t34(m, d).t(), t34(m, d).t(), 0.5),
    "addcmul": lambda m, d: m.addcmul(t34(m, d).t(), t34(m, d).t(), t34(m, d).t()),
    "relu": lambda m, d: m.nn.functional.relu(t34(m, d).t()),
    "channels_last_scalar": lambda m, d: cl(m, d) + 1,
    "channels_last_mixed": lambda m, d: cl(m, d) + n4(m, d),
    "out_resized": lambda m, d: m.add(t34(m, d).t(), 1, out=m.empty(0, device=d)),
    "out_kept": lambda m, d: m.add(t34(m, d).t(), 1, out=m.empty(4, 3, device=d)),
    # copies like a tensor
    "clone_transposed": lambda m, d: t34(m, d).t().clone(),
    "clone_sliced": lambda m, d: n4(m, d)[:, :, ::2].permute(0, 2, 1, 3).clone(),
    "clone_channels_last": lambda m, d: n4(m, d).clone(memory_format=m.channels_last),
    "clone_channels_last_2d": lambda m, d: t34(m, d).clone(memory_format=m.channels_last),
    "zeros_like": lambda m, d: m.zeros_like(cl(m, d)),
    "ones_like_transposed": lambda m, d: m.ones_like(t34(m, d).t()),
    "full_like_contiguous": lambda m, d: m.full_like(t34(m, d).t(), 2, memory_format=m.contiguous_format),
    "empty_like_channels_last_2d": lambda m, d: m.empty_like(t34(m, d).t(), memory_format=m.channels_last),
    "rand_like": lambda m, d: m.rand_like(cl(m, d)),
    "empty_channels_last": lambda m, d: m.empty(2, 3, 4, 5, memory_format=m.channels_last, device=d),
    "empty_channels_last_3d": lambda m, d: m.empty(2, 3, 4, 5, 6, memory_format=m.channels_last_3d, device=d),
    "empty_preserve": lambda m, d: m.empty(2, 3, memory_format=m.preserve_format, device=d),
    "empty_channels_last_rank": lambda m, d: m.empty(2, 3, memory_format=m.channels_last, device=d),
    "empty_out_format": lambda m, d: m.empty(2, 3, out=m.empty(0, device=d), memory_format=m.channels_last),
    # contiguous / is_contiguous
    "contiguous_transposed": lambda m, d: t34(m, d).t().contiguous(),
    "contiguous_channels_last": lambda m, d: n4(m, d).contiguous(memory_format=m.channels_last),
    "contiguous_preserve": lambda m, d: t34(m, d).t().contiguous(memory_format=m.preserve_format),
    "contiguous_positional": lambda m, d: t34(m, d).contiguous(m.channels_last),
    "is_contiguous_channels_last": lambda m, d: cl(m, d).is_contiguous(memory_format=m.channels_last),
    "is_contiguous_default": lambda m, d: cl(m, d).is_contiguous(),
    "is_contiguous_empty_channels_last": lambda m, d: m.empty(2, 0, 3, 3, device=d).is_contiguous(
        memory_format=m.channels_last
    ),
    # to and the conversions
    "to_dtype_transposed": lambda m, d: t34(m, d).t().to(m.float64),
    "double_transposed_sliced": lambda m, d: t34(m, d).t()[::2].double(),
    "to_dtype_contiguous": lambda m, d: t34(m, d).t().to(m.float64, memory_format=m.contiguous_format),
    "to_channels_last": lambda m, d: n4(m, d).to(memory_format=m.channels_last),
    "to_channels_last_2d": lambda m, d: t34(m, d).to(memory_format=m.channels_last),
    "to_contiguous_of_permuted": lambda m, d: n4(m, d).permute(0, 2, 3, 1).to(memory_format=m.contiguous_format),
    "to_device_dtype": lambda m, d: t34(m, d).t().to(d, m.float64),
    "to_keywords_copy": lambda m, d: t34(m, d).t().to(device=d, dtype=m.int32, copy=True),
    "to_other": lambda m, d: t34(m, d).to(m.zeros(1, dtype=m.int64, device=d)),
    "to_non_blocking_positional": lambda m, d: t34(m, d).to(m.float16, True),
    "to_bad_format": lambda m, d: t34(m, d).to(memory_format=1),
    "to_bad_keywords": lambda m, d: t34(m, d).to(non_blocking=2, zz=3, dtype=4),
    "to_bad_positional": lambda m, d: t34(m, d).to(1, 2, memory_format=2, copy=3),
    "to_bad_dtypes": lambda m, d: t34(m, d).to(m.float, m.int32),
    "float_channels_last": lambda m, d: t34(m, d).float(memory_format=m.channels_last),
    "half_transposed": lambda m, d: t34(m, d).t().half(),
    "module_channels_last": lambda m, d: m.nn.Conv2d(3, 4, 3, device=d).to(memory_format=m.channels_last).weight,
    # operators that keep or drop the layout as PyTorch's do
    "flip_transposed": lambda m, d: t34(m, d).t().flip(0),
    "sort_transposed": lambda m, d: t34(m, d).t().sort(1),
    "triu_transposed": lambda m, d: m.triu(t34(m, d).t()),
    "reshape_copy": lambda m, d: t34(m, d).t().reshape(12),
}


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_layout_as_pytorch(name, device):
    fn = CASES[name]
    assert outcome(fn, ember, device) == outcome(fn, torch, device)


def test_values_follow_the_layout():
    # The same numbers whatever the layout (and iteration order) of the operands.
    e, t = ember.arange(24.0).reshape(2, 3, 4), torch.arange(24.0).reshape(2, 3, 4)
    for f in [
        lambda x: x.permute(2, 0, 1) + x.permute(2, 0, 1).contiguous(),
        lambda x: x.permute(2, 0, 1).exp() * x.permute(2, 0, 1)[:, :, ::2].sum(),
        lambda x: x.transpose(0, 2).clone(memory_format=None) - 1,
    ]:
        got, want = f(e), f(t)
        assert got.tolist() == want.tolist()
        assert got.stride() == want.stride()


def test_conversions_return_self_as_pytorch():
    e, t = ember.arange(12.0).reshape(3, 4).t(), torch.arange(12.0).reshape(3, 4).t()
    for f in (
        lambda x, m: x.float(),
        lambda x, m: x.to(x),
        lambda x, m: x.to(m.float32),
        lambda x, m: x.to("cpu"),
        lambda x, m: x.to(memory_format=m.contiguous_format),
        lambda x, m: x.to(memory_format=m.preserve_format),
        lambda x, m: x.cpu(),
    ):
        assert (f(e, ember) is e) == (f(t, torch) is t)


def test_memory_format_objects():
    for name in ("preserve_format", "contiguous_format", "channels_last", "channels_last_3d"):
        f = getattr(ember, name)
        assert isinstance(f, ember.memory_format)
        assert repr(f) == repr(getattr(torch, name))
        assert pickle.loads(pickle.dumps(f)) is f
