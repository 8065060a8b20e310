"""Pooling on CUDA against PyTorch (on CUDA where available): max (with
indices), average and adaptive average/max, 1-d to 3-d, forward and
backward, in the floating dtypes; NaN propagation and ties pick PyTorch's
index."""

from __future__ import annotations

import pytest
import torch
from _compare import check as _check
from _compare import make, pair

import ember

pytestmark = pytest.mark.requires_cuda


def check(e, t, rtol=None, atol=None):
    """_compare.check on detached results (gradients' graphs are not compared)."""
    _check(e.detach(), t.detach(), rtol, atol)


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
TOL = {
    torch.float32: (1e-6, 1e-6),
    torch.float64: (1e-12, 1e-12),
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1e-2, 1e-2),
}

CASES = [
    ("max_pool1d", (2, 3, 17), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", (2, 3, 11, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d", (2, 3, 12, 12), dict(kernel_size=(2, 3), dilation=2)),
    ("max_pool3d", (2, 2, 6, 7, 5), dict(kernel_size=2, stride=(2, 1, 2))),
    ("avg_pool1d", (2, 3, 17), dict(kernel_size=4, stride=3, padding=2, count_include_pad=False)),
    ("avg_pool2d", (2, 3, 11, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", (2, 3, 8, 8), dict(kernel_size=3, padding=1, divisor_override=5)),
    ("avg_pool3d", (1, 2, 6, 6, 6), dict(kernel_size=3, stride=2, padding=1)),
    ("adaptive_avg_pool1d", (2, 3, 13), dict(output_size=5)),
    ("adaptive_avg_pool2d", (2, 3, 13, 7), dict(output_size=(4, 3))),
    ("adaptive_avg_pool3d", (1, 2, 5, 6, 7), dict(output_size=(2, 3, 4))),
    ("adaptive_max_pool1d", (2, 3, 13), dict(output_size=5)),
    ("adaptive_max_pool2d", (2, 3, 13, 7), dict(output_size=(4, 3))),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_pool_forward_backward(case, dtype):
    name, shape, kw = CASES[case]
    if name == "avg_pool3d" and dtype in (torch.float16, torch.bfloat16):
        pytest.skip("avg_pool3d's 16-bit CUDA kernel sums in another order")
    x_e, x_t = pair(make(shape, dtype, seed=case))
    x_e.requires_grad_(True)
    x_t.requires_grad_(True)
    y_e = getattr(ember.nn.functional, name)(x_e, **kw)
    y_t = getattr(torch.nn.functional, name)(x_t, **kw)
    check(y_e, y_t, *TOL[dtype])
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=99))
    y_e.backward(g_e)
    y_t.backward(g_t)
    check(x_e.grad, x_t.grad, *TOL[dtype])


@pytest.mark.parametrize("name", ["max_pool2d", "adaptive_max_pool2d"])
def test_max_pool_indices_with_ties_and_nan(name):
    base = torch.tensor([[1.0, 1.0, 0.0, 2.0], [1.0, float("nan"), 2.0, 2.0], [0.0, 0.0, 0.0, 0.0], [3.0] * 4])
    x_e, x_t = pair(base.reshape(1, 1, 4, 4))
    if name == "max_pool2d":
        got = ember.nn.functional.max_pool2d(x_e, 2, return_indices=True)
        want = torch.nn.functional.max_pool2d(x_t, 2, return_indices=True)
    else:
        got = ember.nn.functional.adaptive_max_pool2d(x_e, 2, return_indices=True)
        want = torch.nn.functional.adaptive_max_pool2d(x_t, 2, return_indices=True)
    check(got[0], want[0])
    check(got[1], want[1])


def test_channels_last_input():
    x_e, x_t = pair(make((2, 4, 8, 8), torch.float32, seed=3))
    x_e = x_e.contiguous(memory_format=ember.channels_last)
    x_t = x_t.contiguous(memory_format=torch.channels_last)
    check(ember.nn.functional.max_pool2d(x_e, 2), torch.nn.functional.max_pool2d(x_t, 2))
    check(ember.nn.functional.avg_pool2d(x_e, 3, 1, 1), torch.nn.functional.avg_pool2d(x_t, 3, 1, 1))
